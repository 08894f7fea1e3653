/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksym.h - shared between bpf/ksym.bpf.c and user/ksym_lookup.c: the sizes of the
 * address batch the kernel-symbol program names in one run.
 */
#ifndef BPFPROF_KSYM_H
#define BPFPROF_KSYM_H

#define KSYM_BATCH 64		/* addresses per BPF_PROG_TEST_RUN */
#define KSYM_TEXT_LEN 256	/* bytes of "%pS" text per address, NUL included */

#endif /* BPFPROF_KSYM_H */
