#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release
#   (tests/run --sanitized: every part of it runs sanitized in cgroup_filter,
#   merge_python and python_*, and here took twice as long (48 s, 23 s release))
# A Python MPI job on a Slurm cluster, profiled as slurm_mpi.sh profiles a
# C one: a 2-node cluster on this machine (tests/lib/slurm_cluster.sh)
# runs docs/examples/bpfprof-job.sbatch with 4 ranks (2 per node) of
# tests/workloads/mpi_pyranks.py under Debian's python3.11 (mpi4py and
# NumPy from Debian), each rank's main thread in a pure Python loop and in
# NumPy matrix products (numpy's C code, then BLAS), a helper thread in
# another Python loop, each function timing its own CPU.  One bpfprof per
# node (--all --cgroup, raw), merged by the job script into one HPCToolkit
# database and by this test into pprof.  Checked:
#   1. the database passes the strict reader (tests/tools/hpcdb --strict);
#      each Python function is a procedure of mpi_pyranks.py at its def
#      line;
#   2. per rank: its thread profiles carry RANK r and the NODE of its host;
#      THREAD 0, its main thread, runs py_rank_work and py_numpy_work, one
#      other thread py_helper_work; each function's share of the rank's
#      three within 3 points of the CPU time the rank measured, and the
#      rank's share of the job's measured work within 2 points;
#   3. pprof: every sample of a rank carries its rank and node labels; the
#      samples under the Python functions are whole stacks (from _start
#      through Py_RunMain, or clone for the helper); those under
#      py_numpy_work reach BLAS (dgemm_ under cblas_dgemm) through
#      NumPy's C frames.
. "$(dirname "$0")/../lib/common.sh"
need_root
. "$BPFPROF_SRC/tests/lib/slurm_cluster.sh"
LIB=$BPFPROF_SRC/tests/lib
HPCDB=$BPFPROF_BUILD/tools/hpcdb
PY=/usr/bin/python3.11
WORKLOAD=$BPFPROF_SRC/tests/workloads/mpi_pyranks.py
command -v mpirun > /dev/null || skip "Open MPI is not installed (apt-get install openmpi-bin)"
"$PY" -c "import mpi4py, numpy" 2> /dev/null ||
	skip "no mpi4py or NumPy for $PY (apt-get install python3-mpi4py python3-numpy)"

slurm_cluster_start 2
# At $SHARES_HZ (tests/lib/common.sh): at 999 Hz a rank had ~2,000 samples,
# and 3 points was 2.7 sigma of a function's share of them.
BPFPROF_FREQ=$SHARES_HZ slurm_profiled_job "$PY" "$WORKLOAD" 1.5

"$HPCDB" --strict --threads --top 0 "$DB" > "$TMP/threads" 2> "$TMP/hpcdb.err" ||
	fail "the strict reader refuses the merged database: $(cat "$TMP/hpcdb.err")"
for f in py_rank_work py_numpy_work py_helper_work; do
	"$HPCDB" --threads --top 0 --function "$f" "$DB" | grep -E "^(procedure|function) " \
		>> "$TMP/functions" || fail "hpcdb --function $f failed"
done
"$BPFPROF" merge -q -o "$TMP/job.pb.gz" --format pprof "$SHARED/prof/" 2> "$TMP/merge.err" ||
	fail "bpfprof merge into pprof failed: $(cat "$TMP/merge.err")"
PYTHONPATH=$LIB python3 - "$SHARED/job.out" "$TMP/threads" "$TMP/functions" "$TMP/job.pb.gz" \
	"$WORKLOAD" "${SLURM_NODE_NAMES[@]}" <<'PY'
import re, sys
import hpcjob
import pprof_proto

job_out, threads_path, functions_path, pprof_path, workload = sys.argv[1:6]
nodes = sys.argv[6:]
FUNCS = ("py_rank_work", "py_numpy_work", "py_helper_work")
bad = 0
def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok

ranks, truth = hpcjob.ranks(job_out), {}    # rank -> (pid, host); rank -> {function: ns}
for line in open(job_out):
    m = re.match(r"truth (\d+) (\S+) (\d+)$", line.strip())
    if m:
        truth.setdefault(int(m.group(1)), {})[m.group(2)] = int(m.group(3))
check(sorted(ranks) == [0, 1, 2, 3] and sorted(truth) == [0, 1, 2, 3],
      "4 ranks reported, each with its measured CPU time: %s" % sorted(ranks))
check(sorted({h for _, h in ranks.values()}) == sorted(nodes),
      "the ranks ran on the cluster's nodes, with their own host names")
node_of_host = {h: i for i, h in enumerate(sorted(nodes))}

# 1. procedures at their def lines
defs = {}
for i, text in enumerate(open(workload), 1):
    m = re.match(r"def (\w+)\(", text)
    if m:
        defs[m.group(1)] = i
procs = {}
for line in open(functions_path):
    m = re.match(r"procedure (\S+): module (.*) file (\S+) line (\d+)", line)
    if m:
        procs.setdefault(m.group(1), []).append((m.group(3), int(m.group(4))))
for f in FUNCS:
    check(procs.get(f) == [(workload, defs[f])],
          "procedure %s: %s (want %s line %d)" % (f, procs.get(f), workload, defs[f]))

# 2. per rank: tuples, threads, shares
profiles, _ = hpcjob.profiles(threads_path)
incl = hpcjob.function_seconds(functions_path, profiles, inclusive=True)
work, known = {}, {}
for r, (pid, host) in sorted(ranks.items()):
    mine = hpcjob.rank_profiles(check, profiles, r, pid, host, node_of_host[host])
    main = [p for p in mine if profiles[p]["tid"] == pid]
    check(len(main) == 1 and profiles[main[0]]["thread"] == 0 and
          all(incl.get(main[0], {}).get(f, 0) > 0 for f in FUNCS[:2]),
          "rank %d: THREAD 0 is its main thread (tid %d), in py_rank_work and py_numpy_work"
          % (r, pid))
    helper = [p for p in mine if incl.get(p, {}).get("py_helper_work", 0) > 0]
    check(len(helper) == 1 and profiles[helper[0]]["thread"] > 0,
          "rank %d: py_helper_work on one other thread" % r)
    got = {f: sum(incl.get(p, {}).get(f, 0) for p in mine) for f in FUNCS}
    work[r], known[r] = sum(got.values()), sum(truth[r].get(f, 0) for f in FUNCS)
    for f in FUNCS:
        g = 100.0 * got[f] / work[r] if work[r] else 0
        w = 100.0 * truth[r].get(f, 0) / known[r]
        check(abs(g - w) <= 3.0, "rank %d: %s %.2f%% of the rank's work, measured %.2f%%"
              % (r, f, g, w))
job_work, job_known = sum(work.values()), sum(known.values())
for r in sorted(ranks):
    g = 100.0 * work[r] / job_work if job_work else 0
    w = 100.0 * known[r] / job_known
    check(abs(g - w) <= 2.0, "rank %d: %.2f%% of the job's work, measured %.2f%%" % (r, g, w))

# 3. pprof: labels, whole stacks, NumPy's C frames down to BLAS
samples = pprof_proto.load(pprof_path)
for r, (pid, host) in sorted(ranks.items()):
    mine = [s for s in samples if s.labels.get("pid") == pid]
    check(mine and all(s.labels.get("rank") == r and s.labels.get("node") == host for s in mine),
          "pprof: the %d samples of rank %d carry rank=%d node=%s"
          % (sum(s.values[0] for s in mine), r, r, host))
under = [s for s in samples if any(f in s.frames for f in FUNCS)]
n = sum(s.values[0] for s in under)
whole = sum(s.values[0] for s in under if s.frames[-1] == "_start" and "Py_RunMain" in s.frames
            or s.frames[-1].endswith(("clone3", "clone")) and "start_thread" in s.frames)
check(n > 0 and whole >= 0.97 * n, "%d of %d samples in the Python functions have whole stacks"
      % (whole, n))
def in_blas(fr):
    """dgemm_, then cblas_dgemm, below py_numpy_work (frames leaf first)."""
    if "dgemm_" not in fr:
        return False
    i, j = fr.index("dgemm_"), fr.index("py_numpy_work")
    return i < j and "cblas_dgemm" in fr[i:j]
np_ = [s for s in samples if "py_numpy_work" in s.frames]
n = sum(s.values[0] for s in np_)
blas = sum(s.values[0] for s in np_ if in_blas(s.frames))
check(n > 0 and blas >= 0.8 * n, "%d of %d samples under py_numpy_work are in BLAS (dgemm_ under "
      "cblas_dgemm, under NumPy's C frames)" % (blas, n))
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || fail "the merged Python job profile does not match the job"
ok "one database for the Python job: its functions per rank and thread, with NODE / RANK / THREAD, shares as measured; pprof's stacks reach BLAS"
