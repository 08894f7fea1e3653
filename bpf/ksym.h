/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksym.h - owns the sizes shared by bpf/ksym.bpf.c and
 * user/symbols/ksym_lookup.c: the batch of addresses (count) the
 * kernel-symbol program names in one run, and the bytes of each name.
 */
#ifndef BPFPROF_KSYM_H
#define BPFPROF_KSYM_H

#define KSYM_BATCH 64		/* addresses per BPF_PROG_TEST_RUN */
#define KSYM_TEXT_LEN 256	/* bytes of "%pS" text per address, NUL included */

#endif /* BPFPROF_KSYM_H */
