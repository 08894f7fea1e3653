#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# walk_memo.sh - the BPF walk's memo of a thread's last walk
# (bpf/cfi_memo.bpf.h), with the default call graph: a walk that meets a
# frame of the memo with the same pc and sp (and rbp where a CFA comes
# from it) takes the memo's frames from there, but only if the stack
# words the memo's steps read are the same.  Two workloads whose paths
# share frames (no frame pointers), 60% / 40% of the CPU time in rounds
# of tens of microseconds, each 3 CPU seconds at SHARES_HZ.  The shared
# frames call the round's leaf, leaf_a or leaf_b, through a pointer from
# one call instruction, so the leaf a sample is in says which path it is
# on: a sample of leaf_b with path A's callers (or of leaf_a with B's) is
# a memo taken where it should not have been.
#
# nofp_twins (tests/workloads/nofp_twins.c): main -> twins_round ->
# twin_a or twin_b -> middle -> leaf_a or leaf_b; middle's frame has the
# same registers under both twins, only the return address above it
# differs.
#   - its checks fail where the path changed: >= 100 memo frames met whose
#     stack had changed (a memo taken without the check of the return
#     address: 6,806 of 14,579 samples with the other path's callers).
# nofp_alloca (tests/workloads/nofp_alloca.c): main -> alloca_round ->
# shallow or deep (one call instruction) -> level -> relay -> leaf_a or
# leaf_b; level's and relay's frames have the same pc and sp under both,
# level's rbp (its CFA) 1 KiB apart, and every word the other path's memo
# reads above them is the same (stale frames): only rbp tells the paths
# apart (a memo that compared pc and sp alone: 6,703 of 14,567 samples
# with the other path's callers).
# For both:
#   - no sample has the other path's callers;
#   - the memo is taken: >= 2 frames per walk come from it (-v; the frames
#     above the shared ones when the last sample took the same path);
#   - >= 99% of the samples in the leaves have the whole path from
#     _start, and path A's share of them is within 3.5 sigma plus 1 point
#     of its truth.  The point is the host's: one CI run under a loaded
#     host read 58.40% of ~14,400 samples for a truth of 60% (3.9 sigma)
#     while no sample had the other path's callers.
# perf record --call-graph dwarf on the same work is printed beside.
. "$(dirname "$0")/../lib/common.sh"
need_root

ROOT='^_start;__libc_start_main;__libc_start_call_main;'

# check WORKLOAD SHARED PATH_A PATH_B MIN_CHANGED: the checks above for
# paths (root first from main, as --truth prints them) ending in leaf_a
# and leaf_b through frames SHARED (";"-separated).
check() {
	local wl=$1 shared=$2 path_a=$3 path_b=$4 min_changed=$5
	local truth memo per_walk changed all whole_a whole_b crossed share perf_line pall pa
	local leaves="(^|;)$shared;leaf_[ab]\$"
	[ -x "$WL/$wl" ] || fail "no $WL/$wl (make B=$BPFPROF_BUILD)"
	truth=$("$WL/$wl" --truth | awk -v p="$path_a" '$2 == p { print $3 }')
	[ -n "$truth" ] || fail "$wl --truth has no path $path_a"
	"$BPFPROF" -v -F "$SHARES_HZ" --format folded -o "$TMP/$wl.folded" -- "$WL/$wl" -s 3 \
		2> "$TMP/$wl.err" || { cat "$TMP/$wl.err"; fail "bpfprof -- $wl failed"; }
	read -r all whole_a whole_b crossed < <(fs count --comm "$wl" --among "$leaves" \
		"$TMP/$wl.folded" "$ROOT$path_a\$" "$ROOT$path_b\$" \
		"(^|;)${path_a%;leaf_a};leaf_b\$|(^|;)${path_b%;leaf_b};leaf_a\$" |
		awk '{ m[NR] = $1; all = $2 } END { print all, m[1], m[2], m[3] }')
	[ "${all:-0}" -ge 5000 ] || fail "$wl: only ${all:-0} samples in the leaves (expected >= 5000)"
	[ "${crossed:-1}" -eq 0 ] ||
		fail "$wl: $crossed of $all samples in the leaves have the other path's callers"
	memo=$(grep 'walk memo:' "$TMP/$wl.err") || fail "$wl: no walk memo line: $(cat "$TMP/$wl.err")"
	echo "$wl: $memo"
	per_walk=$(echo "$memo" | sed -n 's/.*memo: \([0-9.]*\) frames per walk.*/\1/p')
	changed=$(echo "$memo" | sed -n 's/.* \([0-9]*\) memo frames met whose stack had changed.*/\1/p')
	awk -v f="${per_walk:-0}" 'BEGIN { exit !(f >= 2) }' ||
		fail "$wl: only ${per_walk:-?} frames per walk from the memo (expected >= 2)"
	[ "${changed:-0}" -ge "$min_changed" ] ||
		fail "$wl: only ${changed:-?} memo frames met with a changed stack (expected >= $min_changed)"
	[ $(((whole_a + whole_b) * 100)) -ge $((all * 99)) ] ||
		fail "$wl: $((whole_a + whole_b)) of $all samples in the leaves have the whole path, under 99%"
	share=$(pct "$whole_a" "$all")
	awk -v s="$share" -v t="$truth" -v n="$all" 'BEGIN {
		p = 100 * t; tol = 3.5 * sqrt(p * (100 - p) / n) + 1
		d = s - p; if (d < 0) d = -d; exit !(d <= tol) }' ||
		fail "$wl: $path_a has $share% of the samples in the leaves, truth $(awk -v t="$truth" 'BEGIN { print 100 * t }')%"
	perf_line="perf: not run"
	if perf record -q -F 999 --call-graph dwarf -o "$TMP/$wl.data" -- "$WL/$wl" -s 1 \
		> /dev/null 2>&1; then
		perf_folded "$TMP/$wl.data" > "$TMP/$wl.perf"
		read -r pall pa < <(fs count --among "$leaves" "$TMP/$wl.perf" \
			"(^|;)$path_a\$" | awk '{ print $2, $1 }')
		perf_line="perf --call-graph dwarf: $(pct "$pa" "$pall")% of $pall"
	fi
	ok "$wl: memo $per_walk frames per walk, $changed checks failed; $((whole_a + whole_b)) of $all whole, none crossed; ${path_a%;*;*} path $share% (truth $truth); $perf_line"
}

check nofp_twins middle "main;twins_round;twin_a;middle;leaf_a" "main;twins_round;twin_b;middle;leaf_b" 100
check nofp_alloca "level;relay" "main;alloca_round;shallow;level;relay;leaf_a" \
	"main;alloca_round;deep;level;relay;leaf_b" 0
