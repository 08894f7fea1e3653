// SPDX-License-Identifier: Dual BSD/GPL
/*
 * ksym.bpf.c - names kernel addresses without reading /proc/kallsyms.
 *
 * Owns one BPF_PROG_TYPE_SYSCALL program that the collector runs with
 * BPF_PROG_TEST_RUN: for each address the collector put in addrs[] (in the
 * skeleton's mmapped .bss) it writes the kernel's own "%pS" rendering,
 * "function+0xOFFSET/0xSIZE [module]", into names[] (the kernel's
 * kallsyms_lookup(), a binary search, where reading /proc/kallsyms formats
 * every symbol of the kernel: ~40-50 ms of system time).  An address that
 * is in no symbol comes back as "0x..." (its value).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "ksym.h"

__u64 addrs[KSYM_BATCH];		/* in: kernel addresses */
__u32 nr_addrs;				/* in: how many of addrs[] are set */
char names[KSYM_BATCH][KSYM_TEXT_LEN];	/* out: "%pS" of each, NUL-terminated */

SEC("syscall")
int ksym_lookup(void *ctx)
{
	for (__u32 i = 0; i < KSYM_BATCH; i++) {
		__u64 addr;

		if (i >= nr_addrs)
			break;
		addr = addrs[i];
		bpf_snprintf(names[i], sizeof(names[i]), "%pS", &addr, sizeof(addr));
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
