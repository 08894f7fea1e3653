#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# young_processes.sh - complete stacks from the first sample of a process
# with the default call graph (auto).  The BPF walk needs the unwind
# tables of the process's files, which the collector writes once it
# learns the process and its mappings: in an exec'd child's first
# milliseconds (or until ld.so's libraries reach the table) the walk
# stops early.  Then, in a process that started less than a second ago,
# the program sends a copy of the user stack instead (as --call-graph
# dwarf does), which the collector unwinds (bpf/profile.bpf.c,
# cfi_copy_instead()).
#
# A shell runs nofp_qsort (no frame pointers, stacks through libc's qsort)
# 80 times, ~10 ms of CPU each, so a good part of each child's ~10 samples
# come before its tables: at 999 Hz,
#   (a) >= 98% of the nofp_qsort samples with a named user frame reach the
#       process's root: _start (main's stacks, and exit's), or ld.so's
#       entry (_dl_start: the start-up before main) (without the copies,
#       87-91% here; samples in execve, before the new image runs, have no
#       named user frame);
#   (b) the summary counts the copies the collector unwound (their stops:
#       complete, or no-cfi at ld.so's entry, the root of the start-up's
#       stacks).
# A process older than a second never gets a copy (so that a stack whose
# walk always meets an address in no mapping cannot cost a copy per
# sample); not tested here.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x "$WL/nofp_qsort" ] || fail "no $WL/nofp_qsort (make B=$BPFPROF_BUILD)"

# (a), (b)
CHILDREN="for i in \$(seq 80); do $WL/nofp_qsort -s 0.01 2>/dev/null; done"
"$BPFPROF" -F 999 --format folded -o "$TMP/kids.folded" -- sh -c "$CHILDREN" \
	2> "$TMP/kids.err" || { cat "$TMP/kids.err"; fail "bpfprof -- sh failed"; }
cat "$TMP/kids.err"
# "FULL ALL": of the nofp_qsort samples with a user frame other than
# [unknown], those whose first user frame is _start or ld.so's
# [ld-linux-x86-64.so.2];_dl_start (tests/lib/folded_stacks.py).
named='(^|;)(?!\[unknown\](;|$))[^;]'
rooted='^(_start|\[ld-linux-x86-64\.so\.2\];_dl_start)(;|$)'
read -r full all < <(python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" count \
	--comm nofp_qsort --among "$named" "$TMP/kids.folded" "$rooted")
[ "$all" -ge 400 ] || fail "only $all samples of nofp_qsort (expected >= 400)"
[ $((full * 100)) -ge $((all * 98)) ] ||
	fail "$full of $all nofp_qsort samples reach the process's root, under 98%"
ok "$full of $all samples of the short-lived children reach the process's root"

line=$(grep 'stacks of new processes copied and unwound here:' "$TMP/kids.err") ||
	fail "the summary counts no copies of new processes' stacks"
copies=$(echo "$line" | sed -n 's/.*unwound here: \([0-9]*\);.*/\1/p')
[ "${copies:-0}" -gt 0 ] || fail "copies: $line"
ok "$line"
