#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A new user stack of at most BPFPROF_NEW_STACK_FRAMES (64) frames comes
# to the collector with its frames in its TASK_EVENT_NEW_STACK record
# (struct new_stack_event, bpf/new_stack.bpf.h): no bpf() map lookup to
# copy it, where there was one per new stack.  Deeper stacks, and kernel
# stacks, are still looked up.  -v counts both ("stacks copied from the
# kernel: ..."), and strace (on the collector only) counts the lookups:
#   - pyburn (Python, 2,000 rounds, ~3 s, ~800-1,000 new stacks, each
#     Python frame carries its instruction offset; --call-graph fp, where
#     the leaf stays in the stored stack: with auto's leaves apart,
#     BPFPROF_LEAF_APART, only ~200 stacks are new, leaf_apart.sh): most
#     new user stacks come from their records, and the collector makes
#     fewer BPF_MAP_LOOKUP_ELEM calls in all than half the new user stacks
#     (one each before: more than all of them).  Some ~240 lookups come
#     whatever the run's length (248 at 1,000 rounds, 239 at 2,000):
#     1,000 rounds made 570-620 new stacks, and an ASan build's 291
#     lookups for 568 of them failed CI once;
#   - manystacks -g (native, frame pointers, 2 threads, 2 s): the same.
# The profiles' contents are checked by python_stacks.sh and the others.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11 (apt-get install python3.11)"

lookups() { grep -c 'BPF_MAP_LOOKUP_ELEM' "$1.strace"; }

# check NAME: the -v counts of $TMP/NAME.err against the strace of the run
check() {
	local name=$1 line records user kernel n
	line=$(grep 'stacks copied from the kernel:' "$TMP/$name.err") ||
		fail "$name: no 'stacks copied from the kernel' line with -v"
	read -r records user kernel < <(echo "$line" |
		sed -n 's/.*kernel: \([0-9]*\) new user stacks from their records; by map lookup \([0-9]*\) user stacks, \([0-9]*\) kernel stacks.*/\1 \2 \3/p')
	[ -n "${records:-}" ] || fail "$name: cannot read '$line'"
	[ "$records" -ge 100 ] || fail "$name: only $records new user stacks came with their frames"
	[ $((user * 4)) -lt "$records" ] ||
		fail "$name: $user user stacks looked up against $records from records"
	n=$(lookups "$TMP/$name")
	[ $((n * 2)) -lt $((records + user)) ] ||
		fail "$name: $n map lookups for $((records + user)) new user stacks"
	ok "$name: $records new user stacks from their records, $user user and $kernel kernel stacks looked up, $n BPF_MAP_LOOKUP_ELEM calls in all"
}

PYBURN_ROUNDS=2000 run_traced bpf "$TMP/py" -v -F 999 --call-graph fp -o "$TMP/py.prof" -- \
	/usr/bin/python3.11 "$BPFPROF_SRC/tests/workloads/pyburn.py" 0
check py

run_traced bpf "$TMP/ms" -v -g -F 999 -o "$TMP/ms.prof" -- "$WL/manystacks" -t 2 -s 2
check ms
