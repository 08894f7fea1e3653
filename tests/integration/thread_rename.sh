#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# thread_rename.sh - names that change while a target runs.  The renamer
# workload (tests/workloads/renamer.c) starts short-lived children that
# rename themselves with prctl(PR_SET_NAME) right after fork(), then a child
# that renames itself at once and again later, a thread that renames itself
# with pthread_setname_np() at once, a thread that renames itself through
# /proc/thread-self/comm after a while, and an exec of the child followed by
# one more rename; each hot function runs under one known name
# (renamer --truth).
#
# perf.data (-- COMMAND, and -p on the parent following its children):
# `perf script` must name at least 99% of the samples of those functions
# with the name the thread had when the sample was taken, and at least 95%
# of each function's.  pprof, an aggregated format, labels each thread with
# its last name and each process with its main thread's last name
# (include/bpfprof/plugin.h): at least 99% of the samples there, in a run
# without the exec (aggregated formats keep only the last image's mappings
# of a process, so its functions before an exec do not resolve).
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v perf > /dev/null || fail "perf not installed (linux-perf)"
command -v go > /dev/null || fail "go not installed (golang-go, for go tool pprof)"
[ -x "$WL/renamer" ] || fail "no workload $WL/renamer"
"$WL/renamer" --truth > "$TMP/truth" || fail "renamer --truth failed"
"$WL/renamer" --no-exec --truth > "$TMP/truth-no-exec" || fail "renamer --truth failed"
ARGS=(-c 150 -n 40 -k 10)

# check_names KIND FILE TRUTH: KIND perf (perf script -F comm,tid,ip,sym
# output) or pprof (go tool pprof -raw output); TRUTH from renamer --truth.
check_names() {
python3 - "$1" "$2" "$3" <<'EOF'
import collections, re, sys

kind, path, truth_path = sys.argv[1:4]
truth = collections.defaultdict(dict)
for line in open(truth_path):
    k, fn, name = line.split()
    truth[k][fn] = name

def perf_samples():
    """(names, frames) per sample: frames leaf first."""
    head, frames = None, []
    for line in open(path):
        if line.startswith("\t"):
            p = line.split()
            frames.append(p[1] if len(p) > 1 else "")
        elif line.strip():
            if head:
                yield head, frames
            p = line.split()
            head, frames = {"comm": " ".join(p[:-1])}, []
    if head:
        yield head, frames

def pprof_samples():
    sec, locs, cur = None, {}, None
    samples = []
    for line in open(path):
        if re.match(r"^(Samples|Locations|Mappings)\b", line):
            sec = line.split(":")[0].strip()
            continue
        if sec == "Samples":
            m = re.match(r"^\s+(\d+)\s+\d+:((?:\s+\d+)*)\s*$", line)
            if m:
                cur = [int(m.group(1)), {}, m.group(2).split()]
                samples.append(cur)
            elif cur:
                cur[1].update(re.findall(r"(\w+):\[([^\]]*)\]", line))
        elif sec == "Locations":
            m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(\S+)", line)
            if m:
                locs[m.group(1)] = m.group(2)
    for n, labels, ids in samples:
        for _ in range(n):
            yield labels, [locs.get(i, "") for i in ids]

right, total = collections.Counter(), collections.Counter()
wrong = collections.Counter()
for labels, frames in (perf_samples() if kind == "perf" else pprof_samples()):
    fn = next((f for f in frames if f in truth["comm"]), None)
    if fn is None:
        continue
    if kind == "perf":
        want = {"comm": truth["comm"][fn]}
    else:
        want = {"thread": truth["last"][fn], "comm": truth["proc"][fn]}
    got = {k: labels.get(k) for k in want}
    total[fn] += 1
    if got == want:
        right[fn] += 1
    else:
        wrong[(fn, tuple(sorted(got.items())))] += 1
bad = 0
for fn in truth["comm"]:
    want = truth["comm"][fn] if kind == "perf" else \
        "thread %s, process %s" % (truth["last"][fn], truth["proc"][fn])
    share = right[fn] / total[fn] if total[fn] else 0
    good = total[fn] >= 30 and share >= 0.95
    print("%s: %-14s %4d/%4d samples (%.1f%%) named %s" %
          ("ok" if good else "FAIL", fn, right[fn], total[fn], 100 * share, want))
    bad += not good
n, r = sum(total.values()), sum(right.values())
good = n > 0 and r >= 0.99 * n
print("%s: %d/%d samples (%.2f%%) of the renamed workload named right (at least 99%%)"
      % ("ok" if good else "FAIL", r, n, 100.0 * r / n if n else 0))
for (fn, got), k in sorted(wrong.items()):
    print("  wrong: %d samples of %s named %s" % (k, fn, dict(got)))
sys.exit(1 if bad or not good else 0)
EOF
}

# perf script of a perf.data, then the check.
check_perf() {	# FILE WHAT
	perf script -i "$1" -F comm,tid,ip,sym > "$1.txt" 2> "$1.err" ||
		{ cat "$1.err"; fail "perf script failed ($2)"; }
	check_names perf "$1.txt" "$TMP/truth" || fail "perf.data ($2): samples carry stale names"
	ok "perf.data ($2): names follow renames and exec"
}

# 1. -- COMMAND, perf.data.
"$BPFPROF" -F 999 --format perf -o "$TMP/cmd.data" -- "$WL/renamer" "${ARGS[@]}" \
	2> "$TMP/cmd.err" || { cat "$TMP/cmd.err"; fail "bpfprof -- renamer failed"; }
cat "$TMP/cmd.err"
check_perf "$TMP/cmd.data" "-- COMMAND"

# 2. -p on the parent, following its children, perf.data.
"$WL/renamer" "${ARGS[@]}" --wait > "$TMP/ready" 2> "$TMP/wl.err" & CHILD_PIDS+=($!); wl=$!
pid=$(python3 "$BPFPROF_SRC/tests/lib/procwait.py" ready "$TMP/ready" 20) ||
	fail "renamer never got ready"
"$BPFPROF" -F 999 --format perf -p "$pid" -o "$TMP/p.data" 2> "$TMP/p.err" & bp=$!
CHILD_PIDS+=($bp)
python3 "$BPFPROF_SRC/tests/lib/procwait.py" attached $bp || fail "bpfprof did not attach"
kill -USR1 "$pid"
wait "$wl" || { cat "$TMP/wl.err"; fail "renamer failed"; }
wait $bp || { cat "$TMP/p.err"; fail "bpfprof -p renamer failed"; }
cat "$TMP/p.err"
check_perf "$TMP/p.data" "-p"

# 3. -- COMMAND, pprof (in-kernel counts: names from the lifecycle events).
"$BPFPROF" -F 999 --format pprof -o "$TMP/out.pb.gz" -- "$WL/renamer" "${ARGS[@]}" --no-exec \
	2> "$TMP/pprof.err" || { cat "$TMP/pprof.err"; fail "bpfprof --format pprof failed"; }
cat "$TMP/pprof.err"
go tool pprof -raw "$TMP/out.pb.gz" > "$TMP/raw" 2> "$TMP/raw.err" ||
	{ cat "$TMP/raw.err"; fail "go tool pprof -raw failed"; }
check_names pprof "$TMP/raw" "$TMP/truth-no-exec" || fail "pprof: labels carry stale names"
ok "pprof: thread and process labels are the last names"
