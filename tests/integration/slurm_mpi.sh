#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release
#   (tests/run --sanitized: every part of it runs sanitized in cgroup_filter,
#   mpi_ranks, merge_raw and merge_offline, and here took twice as long (47 s,
#   21 s release))
# One bpfprof per node on a Slurm cluster: a 2-node cluster on this machine
# (tests/lib/slurm_cluster.sh) runs docs/examples/bpfprof-job.sbatch with
# the 4-rank MPI workload tests/workloads/mpi_ranks (2 ranks per node, each
# with a helper thread, known work per rank).  Each node's bpfprof profiles
# the job's cgroup (--all --cgroup) into a raw measurement, DIR/%h.raw; a
# busy process outside the job runs all along; the job script then merges
# the measurements into one HPCToolkit database (bpfprof merge), and this
# test merges them into pprof too.  Checked in the database, through the
# strict reader (tests/tools/hpcdb --strict): one profile and one trace
# line per rank x thread, tuples NODE / RANK / THREAD with the node of the
# rank's host (nodes in host name order), the rank, the pid and tid the
# rank printed as physical ids; each rank's main thread in its rankR_work
# and its helper thread in helper_work; each rank's share of the job's
# known work within 2 points of the design; nothing of the process
# outside the job.  In pprof: every sample of a rank's process carries its
# rank and node labels.
. "$(dirname "$0")/../lib/common.sh"
need_root
. "$BPFPROF_SRC/tests/lib/slurm_cluster.sh"
LIB=$BPFPROF_SRC/tests/lib
HPCDB=$BPFPROF_BUILD/tools/hpcdb
command -v mpicc > /dev/null && [ -x "$WL/mpi_ranks" ] ||
	skip "Open MPI is not installed (apt-get install openmpi-bin libopenmpi-dev), no mpi_ranks"

slurm_cluster_start 2
cp "$WL/spin" "$TMP/outside_job"
"$TMP/outside_job" 600 & CHILD_PIDS+=($!)

# At $SHARES_HZ (tests/lib/common.sh): at 999 Hz a rank had ~4,200 samples,
# and 2 points was 2.7 sigma of its share.
BPFPROF_FREQ=$SHARES_HZ slurm_profiled_job "$WL/mpi_ranks" -u 0.3

"$HPCDB" --strict --threads --top 0 "$DB" > "$TMP/threads" 2> "$TMP/hpcdb.err" ||
	fail "the strict reader refuses the merged database: $(cat "$TMP/hpcdb.err")"
own="run_units sink helper_leaf helper_work rank0_leaf rank1_leaf rank2_leaf rank3_leaf rank0_work rank1_work rank2_work rank3_work"
for f in $own; do
	"$HPCDB" --threads --top 0 --function "$f" "$DB" | grep "^function " >> "$TMP/functions" ||
		fail "hpcdb --function $f failed"
done
"$BPFPROF" merge -q -o "$TMP/job.pb.gz" --format pprof "$SHARED/prof/" 2> "$TMP/merge.err" ||
	fail "bpfprof merge into pprof failed: $(cat "$TMP/merge.err")"
"$WL/mpi_ranks" --truth 4 > "$TMP/truth"
PYTHONPATH=$LIB python3 - "$SHARED/job.out" "$TMP/truth" "$TMP/threads" "$TMP/functions" \
	"$TMP/job.pb.gz" "${SLURM_NODE_NAMES[@]}" <<'PY'
import sys
import hpcjob
import pprof_proto

job_out, truth_path, threads_path, functions_path, pprof_path = sys.argv[1:6]
nodes = sys.argv[6:]
bad = 0
def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok

units = {}
for line in open(truth_path):
    _, r, main, helper = line.split()
    units[int(r)] = (int(main), int(helper))
ranks = hpcjob.ranks(job_out)               # rank -> (pid, host)
check(sorted(ranks) == [0, 1, 2, 3], "4 ranks reported: %s" % sorted(ranks))
check(sorted({h for _, h in ranks.values()}) == sorted(nodes),
      "the ranks ran on the cluster's nodes, with their own host names")
node_of_host = {h: i for i, h in enumerate(sorted(nodes))}

profiles, trace_lines = hpcjob.profiles(threads_path)
check(len(profiles) > 0, "%d thread profiles with NODE / RANK / THREAD tuples" % len(profiles))
check(trace_lines == len(profiles), "one trace line per profile: %s lines, %d profiles"
      % (trace_lines, len(profiles)))
# Exclusive seconds of the workload's own functions, per profile.
own = hpcjob.function_seconds(functions_path, profiles)

work = {}
for r, (pid, host) in sorted(ranks.items()):
    mine = hpcjob.rank_profiles(check, profiles, r, pid, host, node_of_host[host])
    check(all(profiles[p]["trace"] > 0 for p in mine if sum(own.get(p, {}).values()) > 0),
          "rank %d: a trace line for each thread that worked" % r)
    main = [p for p in mine if profiles[p]["tid"] == pid]
    fn = "rank%d_leaf" % (r % 4)
    check(len(main) == 1 and profiles[main[0]]["thread"] == 0 and own[main[0]].get(fn, 0) > 0,
          "rank %d: THREAD 0 is its main thread (tid %d), in %s" % (r, pid, fn))
    helper = [p for p in mine if own.get(p, {}).get("helper_leaf", 0) > 0]
    check(len(helper) == 1 and profiles[helper[0]]["thread"] > 0,
          "rank %d: helper_leaf on one other thread" % r)
    work[r] = sum(sum(own.get(p, {}).values()) for p in mine)
others = [d for d in profiles.values() if d["pid"] not in {pid for pid, _ in ranks.values()}]
rest = sorted({d["rank"] for d in others})
print("other profiles (job script, launchers, profilers): %d, ranks %s"
      % (len(others), "%d..%d" % (rest[0], rest[-1]) if rest else "none"))
check(not any(d["rank"] in ranks for d in others), "no process outside the MPI step holds an MPI rank")
total, design = sum(work.values()), sum(sum(u) for u in units.values())
for r in sorted(ranks):
    got = 100.0 * work[r] / total if total else 0
    want = 100.0 * sum(units[r]) / design
    check(abs(got - want) <= 2.0, "rank %d: %.2f%% of the job's known work (%.3f s), design %.2f%%"
          % (r, got, work[r], want))

samples = pprof_proto.load(pprof_path)
for r, (pid, host) in sorted(ranks.items()):
    mine = [s for s in samples if s.labels.get("pid") == pid]
    check(mine and all(s.labels.get("rank") == r and s.labels.get("node") == host for s in mine),
          "pprof: the %d samples of rank %d carry rank=%d node=%s" % (sum(s.values[0] for s in mine), r, r, host))
comms = {s.labels.get("comm") for s in samples}
check("outside_job" not in comms, "nothing of the process outside the job")
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || fail "the merged job profile does not match the job"
ok "one database for the job: every rank and thread with its NODE / RANK / THREAD, shares as designed; pprof has the rank labels"
