/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksym_lookup.h - kernel addresses named by the kernel itself, through the BPF
 * program of bpf/ksym.bpf.c (bpf_snprintf's "%pS", i.e. kallsyms_lookup()),
 * instead of reading and parsing all of /proc/kallsyms (~40-50 ms of
 * system time plus ~15 ms of parsing on a 6.x kernel, for the few hundred
 * addresses a profile has).  Needs BPF_PROG_TYPE_SYSCALL (Linux 5.14) and
 * CAP_BPF + CAP_PERFMON, as the sampler does; where it cannot load, the
 * symbolizer falls back to /proc/kallsyms.
 */
#ifndef BPFPROF_KSYM_LOOKUP_H
#define BPFPROF_KSYM_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksym.h"		/* bpf/ksym.h: KSYM_BATCH, KSYM_TEXT_LEN */

/* The loaded program (opaque). */
struct ksym;

/* What the kernel says of one address. */
struct ksym_symbol {
	bool found;			/* false: no symbol contains the address */
	char name[KSYM_TEXT_LEN];	/* function name, NUL-terminated */
	char module[64];		/* module name without brackets, "" for the core kernel */
	uint64_t start;			/* the function's first address */
	uint64_t size;			/* its size, bytes (0 if the kernel does not know) */
};

/*
 * Load the program.  Returns 0 and *@out (release with ksym_close()), or
 * a negative errno when BPF cannot run it (no privilege, old kernel,
 * bpf_snprintf without "%pS"): callers use /proc/kallsyms then.
 */
int ksym_open(struct ksym **out);

/*
 * Name the @n kernel addresses @addrs into @out[0..n-1], in runs of up
 * to KSYM_BATCH addresses (one bpf() system call each).  Returns 0, or a
 * negative errno of BPF_PROG_TEST_RUN (then @out is unspecified).
 */
int ksym_lookup(struct ksym *k, const uint64_t *addrs, size_t n, struct ksym_symbol *out);

/*
 * Parse one "%pS" text of the address @addr: "NAME+0xOFF/0xSIZE",
 * optionally followed by " [MODULE]" (and, on some kernels, a build-id
 * after the module name, ignored).  Anything else (e.g. "0xffff..." for
 * an address in no symbol) leaves out->found false.  Never fails.
 */
void ksym_parse(const char *text, uint64_t addr, struct ksym_symbol *out);

/* Release @k; NULL is allowed. */
void ksym_close(struct ksym *k);

#endif /* BPFPROF_KSYM_LOOKUP_H */
