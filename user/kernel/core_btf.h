/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * core_btf.h - where libbpf takes the kernel's types for profile.bpf.c's
 * CO-RE relocations from.
 *
 * Reading and parsing the kernel's BTF (/sys/kernel/btf/vmlinux, 5.5 MB
 * on a 6.x kernel) was ~13 ms of every run, a third of a short run's own
 * CPU.  The build cuts from it the few types profile.bpf.o uses (`bpftool
 * gen min_core_btf`, a few KB) and embeds them with the identity of the
 * kernel they came from (release, version string, size of its BTF).  When
 * the running kernel is that one, libbpf gets the small BTF instead; on
 * any other kernel, or with BPFPROF_VMLINUX_BTF set in the environment,
 * it reads the kernel's own as before.
 */
#ifndef BPFPROF_CORE_BTF_H
#define BPFPROF_CORE_BTF_H

#include <stddef.h>

/* An open copy of the embedded BTF (a memfd). */
struct core_btf {
	int fd;				/* -1 when none is open */
	char path[64];			/* "/proc/self/fd/N" */
};

/*
 * If the embedded BTF fits the running kernel, copy it into a memfd and
 * return its path for bpf_object_open_opts.btf_custom_path (valid until
 * core_btf_close()); else return NULL (libbpf then reads the kernel's
 * BTF).  Failures (no memfd, a short write) also return NULL: the slower
 * path is always correct.  @cb is filled in either way.
 */
const char *core_btf_open(struct core_btf *cb);

/* Close the memfd of core_btf_open(), if any. */
void core_btf_close(struct core_btf *cb);

#endif /* BPFPROF_CORE_BTF_H */
