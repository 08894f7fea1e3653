#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Per-thread attribution: the threads workload runs 4 named worker threads
# (tw-0..tw-3, pthread_setname_np) that share a budget of identical work
# 40/30/20/10.  Over the whole run (command mode) each thread's share of the
# workers' samples must be within 5 points of its share of the work (and of
# the CPU time it measured itself), every thread is recorded under its
# name, the per-thread totals agree with the per-stack counts, and the
# in-thread function mix (tw_main 70%, tw_side 30%) holds.  Read through the
# test plugin tests/fixtures/plugins/dump.c.  Then the same with -p on the
# running process and the timestamped stream (the plugin in stream mode):
# the per-thread shares hold and the stream names every thread (COMM
# records) and maps the executable (MMAP record) before its samples.
. "$(dirname "$0")/../lib/common.sh"
need_root
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/dump.so" || fail "cannot build the dump plugin"

# 4 CPU seconds at 999 Hz: ~4000 worker samples, sigma <= 0.8 points.
"$BPFPROF" --plugin "$TMP/dump.so" -F 999 -o "$TMP/dump.txt" -- "$WL/threads" -s 4 \
	2> "$TMP/stderr" || { cat "$TMP/stderr"; fail "bpfprof -- threads failed"; }
cat "$TMP/stderr"
"$WL/threads" --truth > "$TMP/truth" || fail "threads --truth failed"

check_threads() {	# dump stderr-of-threads
PYTHONPATH=$BPFPROF_SRC/tests/lib python3 - "$1" "$TMP/truth" "$2" <<'EOF'

import re, sys
import profdump

d = profdump.load(sys.argv[1])
truth = {}
shares = {}
for line in open(sys.argv[2]):
    p = line.split()
    if p[0] == "thread":
        truth[p[1]] = float(p[2])
    elif p[0] == "share":
        shares[p[1]] = float(p[2])
cpu = {}
for line in open(sys.argv[3]):
    m = re.match(r"threads: (tw-\d+) weight \d+ iterations \d+ cpu_seconds ([\d.]+)", line)
    if m:
        cpu[m.group(1)] = float(m.group(2))
bad = 0
def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok

procs = [p for p, v in d.processes.items() if v["exe"].endswith("/threads")]
check(len(procs) == 1, "one threads process in the profile (%s)" % procs)
if len(procs) != 1:
    sys.exit(1)
pid = procs[0]
check(d.processes[pid]["comm"] == "threads", "process comm %r" % d.processes[pid]["comm"])
names = {t["comm"]: tid for tid, t in d.threads.items() if t["pid"] == pid}
# The main thread only calibrates (before -p attaches): recorded if sampled.
main = [t for t, v in d.threads.items() if t == pid]
check(not main or d.threads[pid]["comm"] == "threads",
      "main thread, if sampled, recorded as 'threads' (%s)" % (d.threads[pid]["comm"] if main else "not sampled"))
for name in truth:
    check(name in names, "thread %s recorded (tid %s)" % (name, names.get(name)))
check(len(names) == len(truth) + len(main), "threads of the process: %s" % sorted(names))
if bad:
    sys.exit(1)

# The per-thread totals the host reports agree with the per-stack counts.
by_tid = d.thread_samples({pid})
for name, tid in names.items():
    check(d.threads[tid]["samples"] == by_tid.get(tid, 0),
          "%s: thread total %d = sum of its counts %d" % (name, d.threads[tid]["samples"], by_tid.get(tid, 0)))
check(d.processes[pid]["samples"] == sum(by_tid.values()),
      "process total %d = sum of its counts" % d.processes[pid]["samples"])

workers = {names[n] for n in truth}
n = d.total(tids=workers)
total_cpu = sum(cpu.values())
check(n >= 2000, "worker samples: %d" % n)
for name, want in sorted(truth.items()):
    got = by_tid.get(names[name], 0) / n
    sigma = profdump.sigma(want, n)
    check(abs(got - want) <= 0.05, "%s: %.2f%% of the workers' samples, work share %.2f%% "
          "(+-5 points; sigma %.2f)" % (name, 100 * got, 100 * want, 100 * sigma))
    if name in cpu:
        c = cpu[name] / total_cpu
        check(abs(got - c) <= 0.05, "%s: measured CPU share %.2f%% (+-5 points)" % (name, 100 * c))
expected = total_cpu * d.run["freq"]
check(abs(n - expected) <= 0.15 * expected,
      "worker samples %d vs %.3f CPU s x %d Hz = %.0f (+-15%%)" % (n, total_cpu, d.run["freq"], expected))
leaves = d.leaf_shares(tids=workers)
for fn, want in shares.items():
    got = leaves.get(fn, 0)
    check(abs(got - want) <= 0.05, "%s: %.2f%% of the workers' samples (truth %.0f%%, +-5)"
          % (fn, 100 * got, 100 * want))
if d.stream is not None:
    # Stream mode: COMM records name every thread, MMAP maps the binary.
    comms = {tid: name for p, tid, name in d.stream_comms if p == pid}
    for name, tid in sorted(names.items()):
        check(comms.get(tid) == name, "stream: COMM record for tid %d says %r (expected %r)"
              % (tid, comms.get(tid), name))
    exe = d.processes[pid]["exe"]
    check(any(p == pid and path == exe for p, path in d.stream_mmaps),
          "stream: an MMAP record for %s (got %d MMAP records for the process)"
          % (exe, sum(p == pid for p, _ in d.stream_mmaps)))
sys.exit(1 if bad else 0)
EOF
}
check_threads "$TMP/dump.txt" "$TMP/stderr" || fail "per-thread checks failed (command mode)"
ok "command mode: per-thread shares, names and totals"

# -p on the running process, stream mode, until it exits.
"$WL/threads" --wait -s 4 > "$TMP/ready" 2> "$TMP/stderr2" & CHILD_PIDS+=($!)
pid=$(python3 "$BPFPROF_SRC/tests/lib/procwait.py" ready "$TMP/ready" 20) || fail "threads never got ready"
BPFPROF_TEST_DUMP_STREAM=1 "$BPFPROF" --plugin "$TMP/dump.so" -F 999 -p "$pid" -o "$TMP/dump2.txt" \
	2> "$TMP/bp2.err" & bp=$!
python3 "$BPFPROF_SRC/tests/lib/procwait.py" attached $bp || fail "bpfprof did not attach"
kill -USR1 "$pid"
wait $bp || { cat "$TMP/bp2.err"; fail "bpfprof -p threads (stream) failed"; }
wait "$pid"
cat "$TMP/bp2.err" "$TMP/stderr2"
check_threads "$TMP/dump2.txt" "$TMP/stderr2" || fail "per-thread checks failed (-p, stream)"
ok "-p, stream: per-thread shares, names and totals, COMM and MMAP records"
