#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# walk_memo.sh - the BPF walk's memo of a thread's last walk
# (bpf/cfi_memo.bpf.h), with the default call graph: a walk that meets a
# frame of the memo with the same registers takes the memo's frames from
# there, but only if the stack words the memo's steps read are the same.
#
# Workload: nofp_twins (tests/workloads/nofp_twins.c; no frame pointers):
# main -> twins_round -> twin_a -> middle -> leaf (60% of the CPU time)
# and the same through twin_b (40%), in rounds of tens of microseconds, 3
# CPU seconds at SHARES_HZ.  middle's frame has the same registers under both
# twins; only the return address above it differs.
#   - the memo is taken: >= 2 frames per walk come from it (`-v`; the
#     six frames above middle when the last sample went through the same
#     twin, about half of them);
#   - its checks fail where the path changed: >= 100 memo frames met whose
#     stack had changed (a memo taken without the check would put every
#     sample under the twin of the first);
#   - >= 99% of the samples in leaf have the whole path
#     _start;__libc_start_main;__libc_start_call_main;main;twins_round;
#     twin_?;middle;leaf,
#     and twin_a's share of them is within 3.5 sigma (and at least 1
#     point) of 60%.
# perf record --call-graph dwarf on the same work is printed beside.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x "$WL/nofp_twins" ] || fail "no $WL/nofp_twins (make B=$BPFPROF_BUILD)"

ROOT='^_start;__libc_start_main;__libc_start_call_main;main;twins_round;'
TRUTH_A=$("$WL/nofp_twins" --truth | awk '$2 == "main;twins_round;twin_a;middle;leaf" { print $3 }')

# counts FOLDED: "ALL WHOLE_A WHOLE_B" of the samples in leaf.
counts() {
	fs count --comm nofp_twins --among '(^|;)middle;leaf$' "$1" \
		"${ROOT}twin_a;middle;leaf\$" "${ROOT}twin_b;middle;leaf\$" |
		awk '{ m[NR] = $1; all = $2 } END { print all, m[1], m[2] }'
}

"$BPFPROF" -v -F "$SHARES_HZ" --format folded -o "$TMP/auto.folded" -- "$WL/nofp_twins" -s 3 \
	2> "$TMP/auto.err" || { cat "$TMP/auto.err"; fail "bpfprof -- nofp_twins failed"; }
memo=$(grep 'walk memo:' "$TMP/auto.err") || fail "no walk memo line: $(cat "$TMP/auto.err")"
echo "$memo"
per_walk=$(echo "$memo" | sed -n 's/.*memo: \([0-9.]*\) frames per walk.*/\1/p')
changed=$(echo "$memo" | sed -n 's/.* \([0-9]*\) memo frames met whose stack had changed.*/\1/p')
awk -v f="${per_walk:-0}" 'BEGIN { exit !(f >= 2) }' ||
	fail "only ${per_walk:-?} frames per walk from the memo (expected >= 2)"
[ "${changed:-0}" -ge 100 ] ||
	fail "only ${changed:-?} memo frames met with a changed stack (expected >= 100)"

read -r all whole_a whole_b < <(counts "$TMP/auto.folded")
[ "${all:-0}" -ge 5000 ] || fail "only ${all:-0} samples in leaf (expected >= 5000)"
[ $(((whole_a + whole_b) * 100)) -ge $((all * 99)) ] ||
	fail "$((whole_a + whole_b)) of $all samples in leaf have the whole path, under 99%"
share=$(pct "$whole_a" "$all")
awk -v s="$share" -v t="$TRUTH_A" -v n="$all" 'BEGIN {
	p = 100 * t; tol = 3.5 * sqrt(p * (100 - p) / n); if (tol < 1) tol = 1
	d = s - p; if (d < 0) d = -d; exit !(d <= tol) }' ||
	fail "twin_a has $share% of the samples in leaf, truth $(awk -v t="$TRUTH_A" 'BEGIN { print 100 * t }')%"

perf_line="perf: not run"
if perf record -q -F 999 --call-graph dwarf -o "$TMP/perf.data" -- \
	"$WL/nofp_twins" -s 1 > /dev/null 2>&1; then
	perf_folded "$TMP/perf.data" > "$TMP/perf.folded"
	read -r pall pa pb < <(fs count --among '(^|;)middle;leaf$' "$TMP/perf.folded" \
		'(^|;)main;twins_round;twin_a;middle;leaf$' '(^|;)main;twins_round;twin_b;middle;leaf$' |
		awk '{ m[NR] = $1; all = $2 } END { print all, m[1], m[2] }')
	perf_line="perf --call-graph dwarf: twin_a $(pct "$pa" "$pall")%, twin_b $(pct "$pb" "$pall")% of $pall"
fi
ok "memo $per_walk frames per walk, $changed checks failed; $((whole_a + whole_b)) of $all whole; twin_a $share% (truth $TRUTH_A); $perf_line"
