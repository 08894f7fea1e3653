#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The collector sleeps while nothing needs it: up to 2 s (IDLE_POLL_MS in
# user/collector.c; drain.sh counts its wake-ups), not on a 250 ms timer.
# What comes meanwhile without waking it must then wake it before its
# ring fills:
#   - the kernel's mapping records (user/kernel/mmap_events.c), of every
#     process on the machine, and its fork and exit records of every task
#     (perf sends those to any event that asks for mappings): their perf
#     rings wake the collector once half full (perf_event_attr.watermark).
#     spin profiled for 4 s while a shell runs /bin/true 3,000 times
#     beside it (~4 exec mappings each; ~1,000 records fill a CPU's
#     128 KiB ring): no "mapping records lost" (1,374-1,512 lost here
#     without the watermark);
#   - threadchurn makes and joins ~18,000 threads a second for 3 s, each
#     a fork and an exit record in those rings, and in the BPF program's
#     events ring, submitted there without a wake-up
#     (task_event_submit_lazy()); at -F 1 the threads are not sampled, so
#     no first sample wakes the collector: no "mapping records lost"
#     (1,902-2,234 here without the watermark) and no "lifecycle events
#     lost" (once 106,230, in a run under -p without the watermark).
#     The program's own wake-up at a quarter of its events ring is not
#     what this shows: here the perf rings' watermark wakes the collector
#     first.  It is for hosts whose many CPUs share those records out,
#     ~1,300 per CPU before one ring is half full, and for runs without
#     the mapping events.
. "$(dirname "$0")/../lib/common.sh"
need_root

# no_losses NAME: $TMP/NAME.err says nothing was lost
no_losses() {
	if grep -E 'lifecycle events lost|mapping records lost' "$TMP/$1.err"; then
		fail "$1: records lost while the collector slept"
	fi
}

(for _ in $(seq 3000); do /bin/true; done) & execs=$!
CHILD_PIDS+=($execs)
"$BPFPROF" -F 99 -o "$TMP/spin.prof" -- "$WL/spin" 4 2> "$TMP/spin.err" ||
	{ cat "$TMP/spin.err"; fail "bpfprof -- spin failed"; }
kill $execs 2> /dev/null
wait $execs 2> /dev/null
cat "$TMP/spin.err"
no_losses spin
ok "spin, 4 s, beside 3,000 execs: no mapping record lost"

"$BPFPROF" -F 1 -o "$TMP/churn.prof" -- "$WL/threadchurn" 3 > "$TMP/churn.out" \
	2> "$TMP/churn.err" || { cat "$TMP/churn.err"; fail "bpfprof -- threadchurn failed"; }
cat "$TMP/churn.err" "$TMP/churn.out"
read -r threads < <(sed -n 's/^threadchurn: threads \([0-9]*\)$/\1/p' "$TMP/churn.out")
[ "${threads:-0}" -ge 8000 ] ||
	fail "threadchurn made only ${threads:-0} threads in 3 s: too few to fill the rings"
no_losses churn
ok "threadchurn, $threads threads in 3 s at 1 Hz: no lifecycle or mapping record lost"
