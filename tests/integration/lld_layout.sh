#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# lld_layout.sh - complete stacks of programs linked by lld: its packed
# layout puts the end of one PT_LOAD segment and the start of the next in
# the same file page, at vaddrs a page apart, so the page an executable
# mapping starts at (its pgoff) lies in two segments.  The load bias must
# come from the code segment; from the other one it is a page off, and
# every pc was looked up a page away from its rows (the walk stopped at
# the leaf with no-row on every sample of a Rust program: rustc links with
# rust-lld since Rust 1.90).
#
# tests/workloads/nofp_paths, linked by Debian's lld (make's
# nofp_paths_lld), 60% in main;stage_a;leaf_a and 40% in
# main;stage_b;leaf_b, no frame pointers:
#   0. the binary has that layout: its code segment's first file page holds
#      the segment before it (else this test proves nothing);
#   1. the default call graph (the BPF CFI walk) and 2. --call-graph dwarf
#      (libdw, given the same bias): >= 95% of the samples reach main, and
#      the two paths' shares of the samples after the calibration are
#      within max(5 points, 3.5 sigma) of the truth.
. "$(dirname "$0")/../lib/common.sh"
need_root
bin=$WL/nofp_paths_lld
[ -x "$bin" ] || fail "no $bin (make builds it where ld.lld is installed: Debian package lld)"
lib=$BPFPROF_SRC/tests/lib

# --- 0. the layout -------------------------------------------------------------
readelf -lW "$bin" | python3 -c '
import sys
loads = [l.split() for l in sys.stdin if l.split()[:1] == ["LOAD"]]
shared = any(int(b[1], 16) // 4096 == (int(a[1], 16) + int(a[4], 16) - 1) // 4096
             and "E" in b[6:-1] for a, b in zip(loads, loads[1:]))
sys.exit(0 if shared else 1)' ||
	fail "0: $bin's code segment does not share its first page with the segment before it: $(readelf -lW "$bin" | grep LOAD)"
ok "0: $bin's code segment starts in the last file page of the segment before it"

# run NAME ARGS...: bpfprof ARGS -- nofp_paths_lld -s 2, folded, checked.
run() {
	local name=$1 kept main right p
	shift
	"$BPFPROF" -F 999 "$@" --format folded -o "$TMP/$name.folded" -- "$bin" -s 2 \
		>/dev/null 2>"$TMP/$name.err" || fail "$name: bpfprof failed: $(cat "$TMP/$name.err")"
	python3 "$lib/folded_stacks.py" top "$TMP/$name.folded" 3 | sed "s/^/    $name: /"
	read -r main kept < <(python3 "$lib/folded_stacks.py" count "$TMP/$name.folded" '(^|;)main(;|$)')
	[ "$kept" -ge 1000 ] || fail "$name: only $kept samples"
	p=$(awk -v a="$main" -v b="$kept" 'BEGIN { printf "%.1f", 100 * a / b }')
	awk -v p="$p" 'BEGIN { exit !(p >= 95) }' || fail "$name: $p% of $kept samples reach main"
	# the truth is of the work, after the calibration
	read -r calib _ < <(python3 "$lib/folded_stacks.py" count "$TMP/$name.folded" '(^|;)calibrate(;|$)')
	while read -r _ path share; do
		read -r right _ < <(python3 "$lib/folded_stacks.py" count "$TMP/$name.folded" \
			"(^|;)$path\$")
		awk -v r="$right" -v n=$((kept - calib)) -v t="$share" 'BEGIN {
			got = 100 * r / n; tol = 3.5 * 100 * sqrt(t * (1 - t) / n); if (tol < 5) tol = 5
			d = got - 100 * t; if (d < 0) d = -d
			printf "%.1f%% (truth %.0f%%, allowed +-%.1f)\n", got, 100 * t, tol; exit !(d <= tol) }' \
			>"$TMP/$name.share" || fail "$name: $path: $(cat "$TMP/$name.share")"
		ok "$name: $path: $(cat "$TMP/$name.share")"
	done < <("$bin" --truth)
	ok "$name: $p% of $kept samples reach main"
}

run auto
run dwarf --call-graph dwarf
