#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# nocfi_frames.sh - stacks through a frame without CFI in the middle of
# the stack, with the default call graph.  gcc's crtstuff builds
# __do_global_dtors_aux (in every shared library) with a frame pointer and
# no FDE, and at exit it calls __cxa_finalize and the library's
# destructors: of PostgreSQL's backends' samples under `pgbench -C`, ~210
# of 14,300 stopped there ("no-row").  A frame without a row other
# than the first now takes its caller from [bp + 8] when rbp is known and
# not below sp, the code before that return address is a call, and the
# caller has a row (bpf/cfi_row.h); otherwise the walk stops as before.
#
# Workload: nofp_fp_bridge (tests/workloads/nofp_fp_bridge.c; no frame
# pointers): main -> bridge_round -> fp_bridge or bare_bridge (assembly
# without CFI; fp_bridge keeps a frame pointer, bare_bridge does not) ->
# bridged_work (C), half of the rounds each, 1.5 CPU seconds at 999 Hz.
#   - of the samples in bridged_work under fp_bridge (>= 400), >= 99% have
#     the whole path _start;__libc_start_main;__libc_start_call_main;main;
#     bridge_round;fp_bridge;bridged_work (here 100%; before, 0%: every
#     walk stopped at fp_bridge), and the summary counts the rbp steps
#     (at least 95% of those: a sample in fp_bridge itself needs none);
#   - no sample through bare_bridge has a frame below it other than the
#     true path: rbp is not its frame pointer, and a walk that took
#     [bp + 8] anyway would invent a caller.
# --call-graph dwarf (libdwfl's own frame-pointer fallback) and perf
# record --call-graph dwarf on the same work are printed beside.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x "$WL/nofp_fp_bridge" ] || fail "no $WL/nofp_fp_bridge (make B=$BPFPROF_BUILD)"

TRUE='^_start;__libc_start_main;__libc_start_call_main;main;bridge_round;'

# shares FOLDED: "FP_WHOLE FP_ALL BARE_BELOW BARE_TRUE" for nofp_fp_bridge.
shares() {
	local fp bare
	fp=$(fs count --comm nofp_fp_bridge --among '(^|;)fp_bridge;bridged_work$' "$1" \
		"${TRUE}fp_bridge;bridged_work\$")
	bare=$(fs count --comm nofp_fp_bridge --among '(^|;)bare_bridge(;|$)' "$1" \
		'.;bare_bridge(;|$)' "${TRUE}bare_bridge(;|$)" | awk '{ printf "%s ", $1 }')
	echo "$fp $bare"
}

"$BPFPROF" -F 999 --format folded -o "$TMP/auto.folded" -- "$WL/nofp_fp_bridge" -s 1.5 \
	2> "$TMP/auto.err" || { cat "$TMP/auto.err"; fail "bpfprof -- nofp_fp_bridge failed"; }
line=$(grep 'user stack walks:' "$TMP/auto.err") || fail "no walk summary: $(cat "$TMP/auto.err")"
echo "$line"
read -r whole all below true_below < <(shares "$TMP/auto.folded")
[ "$all" -ge 400 ] || fail "only $all samples in bridged_work under fp_bridge (expected >= 400)"
[ $((whole * 100)) -ge $((all * 99)) ] ||
	fail "$whole of $all samples under fp_bridge have the whole path, under 99%"
[ "$below" -eq "$true_below" ] ||
	fail "$((below - true_below)) samples through bare_bridge got a caller that is not true"
steps=$(echo "$line" | sed -n 's/.*frames without CFI continued by rbp \([0-9]*\).*/\1/p')
[ $((${steps:-0} * 100)) -ge $((whole * 95)) ] ||
	fail "the summary counts ${steps:-0} rbp steps for $whole whole stacks: $line"

read -r dwhole dall _ < <("$BPFPROF" -F 999 --call-graph dwarf --format folded \
	-o "$TMP/dwarf.folded" -- "$WL/nofp_fp_bridge" -s 1 2> /dev/null &&
	shares "$TMP/dwarf.folded")
perf_line="perf: not run"
if perf record -q -F 999 --call-graph dwarf -o "$TMP/perf.data" -- \
	"$WL/nofp_fp_bridge" -s 1 > /dev/null 2>&1; then
	perf_folded "$TMP/perf.data" > "$TMP/perf.folded"
	read -r pwhole pall < <(fs count --among '(^|;)fp_bridge;bridged_work$' "$TMP/perf.folded" \
		'(^|;)main;bridge_round;fp_bridge;bridged_work$')
	perf_line="perf --call-graph dwarf: $pwhole of $pall reach main"
fi
ok "$whole of $all samples under fp_bridge have the whole path, $below of bare_bridge's a caller (all true); --call-graph dwarf: ${dwhole:-?} of ${dall:-?}; $perf_line"
