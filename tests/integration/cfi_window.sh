#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# cfi_window.sh - what the BPF walk reads beyond its caches.  The copy of
# the stack at a stack's top: a
# walk starts by copying CFI_STACK_WINDOW (2 KiB) from sp and reads the
# frames' return addresses from that copy; where the stack ends less than
# 2 KiB above sp (the top of a coroutine's or a thread's stack, followed
# by an unmapped or unreadable page), the copy fails, and the walk copies
# the rest of sp's page instead (cfi_read_window()), so it still reads no
# frame one bpf_probe_read_user() at a time.
#
# tests/workloads/nofp_coroutine (no frame pointers): half of the work in
# main -> main_leaf, half in co_entry -> co_run -> co_leaf on a 64 KiB
# makecontext() stack right below a PROT_NONE guard page.  Default call
# graph, -v:
#   a. >= 95% of co_leaf's samples read co_entry;co_run;co_leaf, and >= 95%
#      of main_leaf's reach main;
#   b. the walks read at most 0.3 values per walk outside their window
#      ("stack reads per walk outside its window"): without the page's
#      copy, each coroutine walk reads its frames one by one: 2.04 per
#      walk over all samples, measured with the page's copy taken out.
#   c. the walks search the process's mappings at most 0.3 times per walk
#      ("mapping searches per walk"): a frame in the mapping found last or
#      the one before it, kept from walk to walk on the CPU, is found
#      without a search (cfi_find_mapping()), and main's stacks (exe, libc,
#      exe) and the coroutine's (exe, libc) cross only those two: 0.01
#      measured; 2.54 with the last mapping of the same walk only (each
#      walk searches its first frame's and each change of file), 4.55
#      with no shortcut.
#   d. at least 70% of the steps take the common rules alone
#      (cfi_step_common(): a CFA from sp or rbp, everything read in the
#      window): every step but each walk's last, whose return address 0
#      ends it and which cfi_step() takes: 77.8% measured (3.5 of 4.5
#      rows per walk), 0% with only cfi_step().
. "$(dirname "$0")/../lib/common.sh"
need_root
wl=$WL/nofp_coroutine
[ -x "$wl" ] || fail "no $wl (make)"
lib=$BPFPROF_SRC/tests/lib

"$BPFPROF" -v -F 999 --format folded -o "$TMP/co.folded" -- "$wl" -s 2 2>"$TMP/co.err" ||
	fail "bpfprof -- nofp_coroutine failed: $(cat "$TMP/co.err")"
python3 "$lib/folded_stacks.py" top "$TMP/co.folded" 4 | sed 's/^/    /'

# share_under FOLDED LEAF PATH: "HIT ALL": samples whose innermost user
# frame is LEAF, and those of them whose user stack ends with PATH.
share_under() {
	python3 "$lib/folded_stacks.py" count "$1" "(^|;)$2\$" "(^|;)$3\$" |
		paste -sd' ' | awk '{ print $3, $1 }'
}
read -r hit all < <(share_under "$TMP/co.folded" co_leaf 'co_entry;co_run;co_leaf')
[ "$all" -ge 500 ] && [ $((hit * 100)) -ge $((all * 95)) ] ||
	fail "a: $hit of $all co_leaf samples read co_entry;co_run;co_leaf"
ok "a: $hit of $all co_leaf samples read co_entry;co_run;co_leaf"
read -r hit all < <(share_under "$TMP/co.folded" main_leaf 'main;main_leaf')
[ "$all" -ge 500 ] && [ $((hit * 100)) -ge $((all * 95)) ] ||
	fail "a: $hit of $all main_leaf samples reach main;main_leaf"
ok "a: $hit of $all main_leaf samples reach main;main_leaf"

rows=$(grep '^bpfprof: unwind rows:' "$TMP/co.err") || fail "b: -v has no 'unwind rows' line"
reads=$(echo "$rows" | sed -n 's/.*; \([0-9.]*\) stack reads per walk outside its window.*/\1/p')
[ -n "$reads" ] || fail "b: no stack reads in '$rows'"
awk -v r="$reads" 'BEGIN { exit !(r <= 0.3) }' ||
	fail "b: $reads stack reads per walk outside the window (at most 0.3): $rows"
ok "b: $reads stack reads per walk outside the window"

searches=$(echo "$rows" | sed -n 's/.*, \([0-9.]*\) mapping searches per walk.*/\1/p')
[ -n "$searches" ] || fail "c: no mapping searches in '$rows'"
awk -v r="$searches" 'BEGIN { exit !(r <= 0.3) }' ||
	fail "c: $searches mapping searches per walk (at most 0.3): $rows"
ok "c: $searches mapping searches per walk"

common=$(echo "$rows" | sed -n 's/.*; \([0-9.]*\)% of the steps by the common rules.*/\1/p')
[ -n "$common" ] || fail "d: no share of common steps in '$rows'"
awk -v r="$common" 'BEGIN { exit !(r >= 70) }' ||
	fail "d: $common% of the steps by the common rules (at least 70%): $rows"
ok "d: $common% of the steps by the common rules"
