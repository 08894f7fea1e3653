#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# walk_memo.sh - the BPF walk's memo of a thread's last walk
# (bpf/cfi_memo.bpf.h), with the default call graph: a walk that meets a
# frame of the memo with the same pc and sp (and rbp where a CFA comes
# from it) takes the memo's frames from there, but only if the stack
# words the memo's steps read are the same.  Two workloads whose paths
# share a frame (no frame pointers), 60% / 40% of the CPU time in rounds
# of tens of microseconds, each 3 CPU seconds at SHARES_HZ:
#
# nofp_twins (tests/workloads/nofp_twins.c): main -> twins_round ->
# twin_a or twin_b -> middle -> leaf; middle's frame has the same
# registers under both twins, only the return address above it differs.
#   - its checks fail where the path changed: >= 100 memo frames met whose
#     stack had changed (a memo taken without the check gave twin_a 69% of
#     the samples for a truth of 60%).
# nofp_alloca (tests/workloads/nofp_alloca.c): main -> alloca_round ->
# shallow or deep (one call instruction) -> level -> leaf; level's frame
# has the same pc and sp under both, its rbp (its CFA) 1 KiB apart, and
# every word the other path's memo reads above it is the same (stale
# frames): only rbp tells the paths apart (a memo that compared pc and sp
# alone gave shallow 65.4% for a truth of 60%).
# For both:
#   - the memo is taken: >= 2 frames per walk come from it (-v; the frames
#     above the shared ones when the last sample took the same path);
#   - >= 99% of the samples in leaf have the whole path from _start, and
#     the first path's share of them is within 3.5 sigma (and at least 1
#     point) of its truth.
# perf record --call-graph dwarf on the same work is printed beside.
. "$(dirname "$0")/../lib/common.sh"
need_root

ROOT='^_start;__libc_start_main;__libc_start_call_main;'

# check WORKLOAD SHARED PATH_A PATH_B MIN_CHANGED: the checks above for
# paths (root first from main, as --truth prints them) through frame SHARED.
check() {
	local wl=$1 shared=$2 path_a=$3 path_b=$4 min_changed=$5
	local truth memo per_walk changed all whole_a whole_b share perf_line pall pa
	[ -x "$WL/$wl" ] || fail "no $WL/$wl (make B=$BPFPROF_BUILD)"
	truth=$("$WL/$wl" --truth | awk -v p="$path_a" '$2 == p { print $3 }')
	[ -n "$truth" ] || fail "$wl --truth has no path $path_a"
	"$BPFPROF" -v -F "$SHARES_HZ" --format folded -o "$TMP/$wl.folded" -- "$WL/$wl" -s 3 \
		2> "$TMP/$wl.err" || { cat "$TMP/$wl.err"; fail "bpfprof -- $wl failed"; }
	memo=$(grep 'walk memo:' "$TMP/$wl.err") || fail "$wl: no walk memo line: $(cat "$TMP/$wl.err")"
	echo "$wl: $memo"
	per_walk=$(echo "$memo" | sed -n 's/.*memo: \([0-9.]*\) frames per walk.*/\1/p')
	changed=$(echo "$memo" | sed -n 's/.* \([0-9]*\) memo frames met whose stack had changed.*/\1/p')
	awk -v f="${per_walk:-0}" 'BEGIN { exit !(f >= 2) }' ||
		fail "$wl: only ${per_walk:-?} frames per walk from the memo (expected >= 2)"
	[ "${changed:-0}" -ge "$min_changed" ] ||
		fail "$wl: only ${changed:-?} memo frames met with a changed stack (expected >= $min_changed)"
	read -r all whole_a whole_b < <(fs count --comm "$wl" --among "(^|;)$shared;leaf\$" \
		"$TMP/$wl.folded" "$ROOT$path_a\$" "$ROOT$path_b\$" |
		awk '{ m[NR] = $1; all = $2 } END { print all, m[1], m[2] }')
	[ "${all:-0}" -ge 5000 ] || fail "$wl: only ${all:-0} samples in leaf (expected >= 5000)"
	[ $(((whole_a + whole_b) * 100)) -ge $((all * 99)) ] ||
		fail "$wl: $((whole_a + whole_b)) of $all samples in leaf have the whole path, under 99%"
	share=$(pct "$whole_a" "$all")
	awk -v s="$share" -v t="$truth" -v n="$all" 'BEGIN {
		p = 100 * t; tol = 3.5 * sqrt(p * (100 - p) / n); if (tol < 1) tol = 1
		d = s - p; if (d < 0) d = -d; exit !(d <= tol) }' ||
		fail "$wl: $path_a has $share% of the samples in leaf, truth $(awk -v t="$truth" 'BEGIN { print 100 * t }')%"
	perf_line="perf: not run"
	if perf record -q -F 999 --call-graph dwarf -o "$TMP/$wl.data" -- "$WL/$wl" -s 1 \
		> /dev/null 2>&1; then
		perf_folded "$TMP/$wl.data" > "$TMP/$wl.perf"
		read -r pall pa < <(fs count --among "(^|;)$shared;leaf\$" "$TMP/$wl.perf" \
			"(^|;)$path_a\$" | awk '{ print $2, $1 }')
		perf_line="perf --call-graph dwarf: $(pct "$pa" "$pall")% of $pall"
	fi
	ok "$wl: memo $per_walk frames per walk, $changed checks failed; $((whole_a + whole_b)) of $all whole; ${path_a%;*;*} path $share% (truth $truth); $perf_line"
}

check nofp_twins middle "main;twins_round;twin_a;middle;leaf" "main;twins_round;twin_b;middle;leaf" 100
check nofp_alloca level "main;alloca_round;shallow;level;leaf" "main;alloca_round;deep;level;leaf" 0
