#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Short-lived children: forker starts 100 children one after the other,
# each spending ~20 ms of CPU in child_work() before it exits.
#  1. fork only, `bpfprof -- forker`: one gperftools file per child
#     (FILE.<pid>), and the children's files together (google-pprof and go
#     tool pprof) hold ~all their CPU time, and child_work's share of their
#     samples is the share of their CPU time the children measured inside
#     it (forker's child_work_seconds / child_cpu_seconds: ~96% forked,
#     ~87% exec'd, where ld.so starts them; less on a loaded machine).
#  2. fork + exec of the same binary (a new image at a new address), bpfprof
#     -p on the parent (children followed): the same with the files, plus a
#     second run at the same time with the test plugin
#     (tests/fixtures/plugins/dump.c) that checks each child process by pid,
#     parent, comm and exe, and that the exec'd children's stacks resolve
#     fully (child_work <- main <- __libc_start_call_main in libc, which
#     ld.so maps only after the exec event).
#  3. Many children over a run: 4500 children of 1 ms each, one after the
#     other (never more than two processes alive): the last ones are still
#     followed, with the samples their CPU time calls for.
. "$(dirname "$0")/../lib/common.sh"
need_root
LIB=$BPFPROF_SRC/tests/lib
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/dump.so" || fail "cannot build the dump plugin"

# check_children DIR STDERR_FILE: the files of the parent and of every child
# named in forker's "forker: child PID" lines exist; aggregate the children.
check_children() {
	local dir=$1 err=$2 parent=$3
	PYTHONPATH=$LIB python3 - "$WL/forker" "$dir" "$err" "$parent" <<'EOF'
import os, re, subprocess, sys
import forker_summary

binary, d, errfile, parent = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
fs = forker_summary.parse(open(errfile).read())
bad = 0
def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok

check(fs and fs.clean(100),
      "forker ran 100 children without failures (%s)" % (fs.line if fs else "no summary"))
if not fs:
    sys.exit(1)
kids = fs.kids
files = {int(f.rsplit(".", 1)[1]) for f in os.listdir(d) if re.match(r"out\.prof\.\d+$", f)}
missing = [k for k in kids if k not in files]
check(parent in files, "parent's file out.prof.%d" % parent)
check(not missing, "a file out.prof.<pid> for each of the %d children (missing: %s)" % (len(kids), missing[:10]))
kid_files = ["%s/out.prof.%d" % (d, k) for k in kids if k in files]
if not kid_files:
    sys.exit(1)

def top(cmd, total_re, line_re):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode:
        print(out.stderr)
        return 0, {}
    total, cum = 0, {}
    for line in out.stdout.splitlines():
        t = re.match(total_re, line)
        if t:
            total = int(t.group(1))
        f = re.match(line_re, line)
        if f:
            cum[f.group(3).strip()] = int(f.group(2))
    return total, cum

# go tool pprof merges profiles of different processes by mapping: all of
# them in one report.  child_work's cumulative samples: with the kernel
# frames above it (a forked child's copy-on-write faults, dear on a guest
# whose page tables are shadowed: ~15% of its samples there).
total, cum = top(["go", "tool", "pprof", "-top", "-sample_index=samples", "-nodecount=100000",
                   binary] + kid_files,
                  r"Showing nodes accounting for \d+, [\d.]+% of (\d+) total",
                  r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$")
# The truth: the share of the children's CPU time they measured inside
# child_work(); a profile's share within forker_summary's bound of it.
cpu, truth = fs.child_cpu, fs.truth()
print("truth: the children spent %.3f of %.3f CPU seconds in child_work (%.1f%%)"
      % (truth * cpu, cpu, 100 * truth))
def near_truth(cw, total, what):
    tol = fs.bound(total)
    check(total > 0 and abs(cw / total - truth) <= tol, "%s: child_work %d of %d samples "
          "(%.1f%%, truth %.1f%% +-%.1f)" % (what, cw, total, 100 * cw / max(total, 1),
                                            100 * truth, 100 * tol))
near_truth(cum.get("child_work", 0), total,
           "go tool pprof, %d children's files together" % len(kid_files))
check(abs(total - cpu * 999) <= 0.2 * cpu * 999,
      "children's samples %d vs their CPU time %.3f s x 999 Hz = %.0f (+-20%%)" % (total, cpu, cpu * 999))
# google-pprof uses one address map for all files: all at once only where the
# children share the parent's image (fork); else 10 of them, one by one.
sets = [kid_files] if fs.mode == "fork" else [[f] for f in kid_files[::10]]
total = cw = 0
for s in sets:
    t, f = top(["google-pprof", "--text", binary] + s, r"Total: (\d+) samples",
               r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$")
    total += t
    cw += f.get("child_work", 0)
near_truth(cw, total, "google-pprof, %d children's files" % sum(map(len, sets)))
sys.exit(1 if bad else 0)
EOF
}

# 1. fork only, command mode.
mkdir "$TMP/fork"
"$BPFPROF" -F 999 -o "$TMP/fork/out.prof" -- "$WL/forker" -n 100 -m fork 2> "$TMP/fork.err" ||
	{ cat "$TMP/fork.err"; fail "bpfprof -- forker -m fork failed"; }
grep -v '^bpfprof: wrote\|^forker: child\|without user stack' "$TMP/fork.err"
# The parent (the command) is the one process with a file that is no child.
parent=$(comm -23 <(ls "$TMP/fork" | sed 's/^out\.prof\.//' | sort) \
	<(sed -n 's/^forker: child //p' "$TMP/fork.err" | sort))
[ "$(echo "$parent" | wc -w)" -eq 1 ] || fail "expected one file besides the children's, got: $parent"
check_children "$TMP/fork" "$TMP/fork.err" "$parent" || fail "fork children"
ok "fork: 100 children, one file each, child_work dominates"

# 2. fork + exec, -p on the parent; a dump run at the same time.  From here
# on, failed checks are collected so that every part runs.
failed=
mkdir "$TMP/exec"
"$WL/forker" --wait -n 100 -m exec > "$TMP/forker.out" 2> "$TMP/exec.forker.err" & CHILD_PIDS+=($!)
parent=$(python3 "$LIB/procwait.py" ready "$TMP/forker.out" 20) || fail "forker never got ready"
# An exec'd child's mappings can only be read from /proc while it lives
# (~20 ms): on a machine loaded by others, run the collectors at nice -10,
# in a scheduler autogroup of their own also at -10, so they are not starved
# that long (starved, they find children gone and every frame unresolved).
favour() { echo -10 > "/proc/$1/autogroup" 2>/dev/null || renice -n -10 -p "$1" > /dev/null; }
setsid nice -n -10 "$BPFPROF" -F 999 -p "$parent" -o "$TMP/exec/out.prof" 2> "$TMP/exec.err" & gp=$!
setsid nice -n -10 "$BPFPROF" -F 999 -p "$parent" --plugin "$TMP/dump.so" -o "$TMP/dump.txt" 2> "$TMP/dump.err" & dp=$!
favour $gp; favour $dp
python3 "$LIB/procwait.py" attached $gp $dp || fail "bpfprof did not attach"
kill -USR1 "$parent"
wait $gp || { cat "$TMP/exec.err"; fail "bpfprof -p forker (exec) failed"; }
wait $dp || { cat "$TMP/dump.err"; fail "bpfprof -p forker (exec, dump plugin) failed"; }
grep -v '^bpfprof: wrote\|without user stack' "$TMP/exec.err"
cat "$TMP/exec.err" >> "$TMP/exec.forker.err"
check_children "$TMP/exec" "$TMP/exec.forker.err" "$parent" || fail "exec children"

PYTHONPATH=$LIB python3 - "$TMP/dump.txt" "$TMP/exec.forker.err" "$parent" "$WL/forker" <<'EOF' || { echo "FAIL: exec children in the dump"; failed+=" exec-dump"; }
import sys
import forker_summary, profdump

d = profdump.load(sys.argv[1])
fs = forker_summary.parse(open(sys.argv[2]).read())
if not fs:
    sys.exit("FAIL: no forker summary in %s" % sys.argv[2])
kids = fs.kids
parent, exe = int(sys.argv[3]), sys.argv[4]
truth = fs.truth()
bad = 0
def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok

procs = d.processes
check(parent in procs and procs[parent]["comm"] == "forker", "parent %d recorded as forker" % parent)
wrong = [k for k in kids if k not in procs or procs[k]["ppid"] != parent or procs[k]["comm"] != "forker"
         or procs[k]["exe"] != exe or not procs[k]["exited"]]
check(not wrong, "all %d children recorded with parent %d, comm forker, exe %s, exited (wrong: %s)"
      % (len(kids), parent, exe, [(k, procs.get(k)) for k in wrong[:3]]))
n = d.total(pids=set(kids))
# child_work on the stack (kernel frames above it included), against the
# children's own measure, as for the files above.
cw, _ = d.share_where(lambda c: c.user_leaf() == "child_work", pids=set(kids))
tol = fs.bound(n)
check(n > 0 and abs(cw / n - truth) <= tol, "children: child_work %d of %d samples "
      "(%.1f%%, truth %.1f%% +-%.1f)" % (cw, n, 100 * cw / max(n, 1), 100 * truth, 100 * tol))
full, _ = d.share_where(lambda c: c.user_leaf() == "child_work" and
                        not any(f.startswith("?") for f in c.user), pids=set(kids))
check(cw > 0 and full / cw >= 0.95,
      "child_work samples whose every user frame resolves: %d of %d (%.1f%%, >= 95%%)"
      % (full, cw, 100 * full / max(cw, 1)))
if full < cw:
    for c in d.counts_of(set(kids)):
        if c.user_leaf() == "child_work" and any(f.startswith("?") for f in c.user):
            print("    e.g. pid %d: %s" % (c.pid, ";".join(c.user)))
            break
sys.exit(1 if bad else 0)
EOF
[ -z "$failed" ] && ok "exec: 100 exec'd children, one file each, child_work dominates, stacks resolve"

# 3. More children over one run than processes alive at any time.
"$BPFPROF" -F 999 --plugin "$TMP/dump.so" -o "$TMP/many.txt" -- "$WL/forker" -n 4500 -c 1 \
	2> "$TMP/many.err" || { grep -v '^forker: child' "$TMP/many.err"; fail "bpfprof -- forker -n 4500 failed"; }
grep -v '^forker: child' "$TMP/many.err" | head -4
PYTHONPATH=$LIB python3 - "$TMP/many.txt" "$TMP/many.err" <<'EOF' || { echo "FAIL: late children are not followed"; failed+=" many-children"; }
import sys
import forker_summary, profdump

d = profdump.load(sys.argv[1])
fs = forker_summary.parse(open(sys.argv[2]).read())
if not fs or not fs.clean(4500):
    sys.exit("FAIL: forker did not run 4500 children cleanly: %s" % (fs.line if fs else "no summary"))
kids = fs.kids
bad = 0
for name, part in (("children 1-500", kids[:500]), ("children 4001-4500", kids[4000:])):
    n = d.total(pids=set(part))
    want = len(part) * 1e-3 * 999      # 1 ms of CPU each at 999 Hz
    ok = n >= 0.5 * want
    print("%s: %s: %d samples, %.0f expected from their CPU time (>= 50%%)" % (
        "ok" if ok else "FAIL", name, n, want))
    bad += not ok
sys.exit(1 if bad else 0)
EOF
[ -z "$failed" ] || fail "failed parts:$failed"
ok "4500 children: the last ones are followed too"
