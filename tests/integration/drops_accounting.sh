#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release sanitized
#   (tests/run --sanitized: its --all run is 10 s sanitized, 30 s on the release
#   build)
# Drop accounting: every sample bpfprof sees is kept or dropped for exactly
# one reason, and the summary and the plugin say so.
#  1. A 30 s `--all` run (10 s under the sanitizers) at 999 Hz with both
#     CPUs busy (spin and manystacks, two threads each): summary "N
#     samples (M seen)" and "drops:" add up
#     (N + drops = M), the test plugin (tests/fixtures/plugins/dump.c) gets
#     the same seen/kept/drops[] in its bpfprof_run and N samples in its
#     counts, and nearly every CPU tick was seen (busy CPUs: no idle task).
#  2. Drops on purpose, on manystacks (thousands of distinct stacks): a
#     64-entry stack map with the collector stopped gives stack-map-full
#     (running, the program wakes it every 16 new stacks and it keeps
#     up: no drop since session 41), a 64-entry count map with the
#     collector stopped (the ring of moved counts full) gives
#     count-map-full, both tiny maps together, and the timestamped stream
#     with a 4 KiB ring buffer; each run adds up the same way, the reason is
#     named in the summary, and the stream's sample and lost records match.
#  3. Lifecycle records lost: threadchurn (a fork and an exit record per
#     thread, ~10,000 threads a second) with the collector stopped for 3 s
#     fills the 1 MiB "events" ring (~14,500 records); the programs count
#     each record they could not reserve, and the summary's drops line
#     says "lifecycle events lost N" (~100,000 here); the profile is still
#     written.
. "$(dirname "$0")/../lib/common.sh"
need_root
LIB=$BPFPROF_SRC/tests/lib
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/dump.so" || fail "cannot build the dump plugin"

# account NAME ERRFILE DUMPFILE MIN_SEEN [REASON...]: the run adds up; each
# REASON (summary name) has drops.
account() {
	PYTHONPATH=$LIB python3 - "$@" <<'EOF'
import sys
import profdump

name, errfile, dumpfile, min_seen, reasons = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
bad = 0
def check(ok, what):
    global bad
    print("%s: %s: %s" % ("ok" if ok else "FAIL", name, what))
    bad += not ok

s = profdump.parse_summary(open(errfile).read())
check(s is not None, "summary has the samples and drops lines")
if s is None:
    print(open(errfile).read())
    sys.exit(1)
d = profdump.load(dumpfile)
r = d.run
dropped = sum(s["drops"].values())
print("    summary: %d samples (%d seen), drops: %s" % (s["kept"], s["seen"], s["drops_line"]))
check(s["kept"] + dropped == s["seen"], "summary: kept %d + dropped %d = seen %d"
      % (s["kept"], dropped, s["seen"]))
check(set(s["drops"]) <= set(profdump.DROP_NAMES), "summary names only known reasons: %s" % sorted(s["drops"]))
check(s["seen"] >= min_seen, "seen %d >= %d" % (s["seen"], min_seen))
check(r["seen"] == s["seen"] and r["kept"] == s["kept"],
      "plugin's run: seen %d kept %d, as in the summary" % (r["seen"], r["kept"]))
plugin_drops = {profdump.DROP_NAMES[i]: n for i, n in enumerate(r["drops"]) if n}
check(plugin_drops == s["drops"], "plugin's drops[] %s = summary's %s" % (plugin_drops, s["drops"]))
check(r["kept"] + sum(r["drops"]) == r["seen"], "plugin's run: kept + drops = seen")
counted = d.total()
check(counted == r["kept"], "samples in the plugin's counts %d = kept %d" % (counted, r["kept"]))
check(sum(p["samples"] for p in d.processes.values()) == counted, "process totals add up to the counts")
check(sum(t["samples"] for t in d.threads.values()) == counted, "thread totals add up to the counts")
for reason in reasons:
    check(s["drops"].get(reason, 0) > 0, "%s drops reported: %d" % (reason, s["drops"].get(reason, 0)))
if d.stream is not None:
    st = d.stream
    check(st["samples"] == r["kept"], "stream: %d SAMPLE records = kept %d" % (st["samples"], r["kept"]))
    check(st["lost"] == r["drops"][profdump.DROP_NAMES.index("ringbuf-full")],
          "stream: LOST records count %d = ringbuf-full drops %d" % (st["lost"], r["drops"][4]))
sys.exit(1 if bad else 0)
EOF
}

# 1. 30 s system-wide on a busy machine (10 s under the sanitizers,
#    BPFPROF_SANITIZED: that pass looks for memory errors; the unsanitized
#    one keeps the full length).
"$WL/spin" 40 2 & CHILD_PIDS+=($!)
"$WL/manystacks" -t 2 -s 40 & CHILD_PIDS+=($!)
sleep 0.5
ncpu=$(nproc)
ALL_S=30
[ -z "${BPFPROF_SANITIZED:-}" ] || ALL_S=10
"$BPFPROF" --all -F 999 -d "$ALL_S" --plugin "$TMP/dump.so" -o "$TMP/all.txt" 2> "$TMP/all.err" ||
	{ cat "$TMP/all.err"; fail "bpfprof --all failed"; }
cat "$TMP/all.err"
# Busy CPUs: at least 85% of the ALL_S x 999 Hz ticks of every CPU are seen.
account "--all $ALL_S s" "$TMP/all.err" "$TMP/all.txt" $((ncpu * 999 * ALL_S * 85 / 100)) ||
	fail "the --all run does not add up"
for p in "${CHILD_PIDS[@]}"; do kill "$p" 2>/dev/null; done
ok "$ALL_S s --all at 999 Hz: kept + dropped = seen, in the summary and the plugin"

# 2. Tiny maps and a tiny ring buffer on a workload with many stacks.
"$WL/manystacks" -t 2 -s 20 & CHILD_PIDS+=($!); ms=$!
sleep 0.3
run_tiny() {	# name reasons-csv bpfprof-options...
	local name=$1 reasons=$2; shift 2
	"$BPFPROF" -p "$ms" -F 999 -d 2 --plugin "$TMP/dump.so" -o "$TMP/tiny.txt" "$@" 2> "$TMP/tiny.err" ||
		{ cat "$TMP/tiny.err"; fail "$name: bpfprof failed"; }
	# Enough samples to fill 64 entries many times over (two busy threads
	# give ~4000 in 2 s; a loaded machine gives fewer).
	account "$name" "$TMP/tiny.err" "$TMP/tiny.txt" 200 ${reasons//,/ } || fail "$name does not add up"
}
# The collector is stopped for 3 s: what the program stores meanwhile has
# nowhere to go but its maps.
run_stalled() {	# name reasons-csv bpfprof-options...
	local name=$1 reasons=$2 pid; shift 2
	"$BPFPROF" -p "$ms" -F 999 -d 5 --plugin "$TMP/dump.so" -o "$TMP/tiny.txt" "$@" 2> "$TMP/tiny.err" &
	pid=$!
	stall "$pid" 1 3
	wait "$pid" || { cat "$TMP/tiny.err"; fail "$name: bpfprof failed"; }
	account "$name" "$TMP/tiny.err" "$TMP/tiny.txt" 200 ${reasons//,/ } || fail "$name does not add up"
}
# Its new stacks fill a stack map of 64 (hundreds a second on manystacks).
run_stalled "stack map of 64, collector stopped" stack-map-full --stack-map-size 64
# The counts each CPU's pending slots give up go to the collector through
# the ring buffer (bpf/counts.bpf.h, count_sample()), and to the count map
# only when the ring is full (-g's ring of 128 KiB fills in ~1.5 s on
# manystacks): those samples, counted kept when they came, are dropped
# from a count map of 64.
# The stack map is made large enough for the whole run: with the default
# (1 s of samples) it filled first on CI, its drops left no counts to move,
# and the ring never filled (stack-map-full 1082, count-map-full 0).
run_stalled "count map of 64, collector stopped" count-map-full -g --count-map-size 64 \
	--stack-map-size 32768
run_tiny "both maps of 64" "" --stack-map-size 64 --count-map-size 64
BPFPROF_TEST_DUMP_STREAM=1 run_tiny "stream, 4 KiB ring buffer" "" --ringbuf-size 4096
ok "provoked drops are counted by reason and add up"

"$BPFPROF" -F 99 -o "$TMP/churn.prof" -- "$BPFPROF_BUILD/workloads/threadchurn" 5 \
	> "$TMP/churn.out" 2> "$TMP/churn.err" &
pid=$!
stall "$pid" 1 3
wait "$pid" || { cat "$TMP/churn.err"; fail "threadchurn: bpfprof failed"; }
lost=$(sed -n 's/^bpfprof: drops: .*lifecycle events lost \([0-9]*\).*/\1/p' "$TMP/churn.err")
threads=$(sed -n 's/^threadchurn: threads //p' "$TMP/churn.out")
[ -s "$TMP/churn.prof" ] || fail "threadchurn: no profile written"
[ "${lost:-0}" -ge 1000 ] ||
	fail "threadchurn: ${lost:-no} lifecycle events lost counted for $threads threads made with the collector stopped: $(grep drops "$TMP/churn.err")"
ok "threadchurn: $lost lifecycle events lost counted ($threads threads, collector stopped 3 s)"
