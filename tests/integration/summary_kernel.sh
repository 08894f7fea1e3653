#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The end-of-run summary names kernel functions only when they can matter,
# and never reads /proc/kallsyms for it: reading that file costs ~40-50 ms
# of system time on a 6.x kernel, more than the rest of a short run, so
# kernel addresses are named by the kernel itself (bpf/ksym.bpf.c, "%pS")
# and only when the kernel leaves together reach 1% of the samples and
# could enter the top functions.  Checked, with strace on the collector
# (not on its child, which ptrace would slow down at every system call):
#   - spin (pure user space), gperftools format: /proc/kallsyms is never
#     opened and the top functions are named (spin_loop);
#   - syscalls (about half of the time in read(2)), gperftools format: a
#     kernel function of the /dev/zero read path (read_zero, clear_user,
#     ...) is among the top functions by name, and /proc/kallsyms was not
#     opened either.
. "$(dirname "$0")/../lib/common.sh"
need_root


run_traced openat "$TMP/spin" -F 499 -o "$TMP/spin.prof" -- "$WL/spin" 2
grep -q '"/proc/kallsyms"' "$TMP/spin.strace" && fail "a user-space-only profile read /proc/kallsyms"
grep -Eq '^ +[0-9.]+% +[0-9]+  spin_loop$' "$TMP/spin.err" || fail "spin_loop is not among the top functions"
ok "spin: kallsyms not read, spin_loop named"

run_traced openat "$TMP/sc" -F 499 -o "$TMP/sc.prof" -- "$WL/syscalls" -k 50 -s 3
grep -A10 'top functions' "$TMP/sc.err" | grep -q '\[kernel\]' &&
	fail "kernel functions were lumped as [kernel] although the kernel share is ~50%"
# the read(2) path of /dev/zero: clearing the user buffer dominates
grep -A10 'top functions' "$TMP/sc.err" | grep -Eq ' (clear_user|rep_stos|iov_iter_zero|read_zero|__clear_user|rep_stos_alternative)' ||
	fail "no kernel function of the read path among the top functions"
grep -q '"/proc/kallsyms"' "$TMP/sc.strace" &&
	fail "kernel functions were named from /proc/kallsyms, not by the kernel (BPF)"
ok "syscalls: kernel functions named, without /proc/kallsyms"
