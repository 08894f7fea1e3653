#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# One bpfprof per node on a Slurm cluster: a 2-node cluster on this machine
# (tests/lib/slurm_cluster.sh) runs docs/examples/bpfprof-job.sbatch with
# the 4-rank MPI workload tests/workloads/mpi_ranks (2 ranks per node, each
# with a helper thread, known work per rank).  Each node's bpfprof profiles
# the job's cgroup (--all --cgroup) and writes its own profile; a busy
# process outside the job runs all along.  Checked per node: the profile
# holds exactly that node's two ranks (the pids and host names the ranks
# print), each rank's main thread in its rankR_work and its helper thread
# in helper_work, nothing of the process outside the job, and each rank's
# share of the node's known work within 2 points of the design.
. "$(dirname "$0")/../lib/common.sh"
need_root
. "$BPFPROF_SRC/tests/lib/slurm_cluster.sh"
LIB=$BPFPROF_SRC/tests/lib
command -v mpicc > /dev/null && [ -x "$WL/mpi_ranks" ] ||
	skip "Open MPI is not installed (apt-get install openmpi-bin libopenmpi-dev), no mpi_ranks"

slurm_cluster_start 2
SHARED=$SLURM_DIR/shared
cp "$WL/spin" "$TMP/outside_job"
"$TMP/outside_job" 600 & CHILD_PIDS+=($!)

# LEAD: the one place to switch once --format raw, -o %h and `bpfprof merge`
# land: drop BPFPROF_NODE_FORMAT (the script's default is raw, then merged
# into HPCToolkit), and check $SHARED/prof/job-ID.hpctoolkit instead of the
# per-node pprof files below.
NODE_FORMAT=pprof

job=$(BPFPROF=$BPFPROF BPFPROF_DIR=$SHARED/prof BPFPROF_NODE_FORMAT=$NODE_FORMAT \
      BPFPROF_FREQ=999 OMPI_MCA_btl=self,vader,tcp \
      slurm_sbatch --nodes=2 --ntasks-per-node=2 --output="$SHARED/job.out" \
		   "$BPFPROF_SRC/docs/examples/bpfprof-job.sbatch" "$WL/mpi_ranks" -u 0.3) ||
	fail "sbatch failed"
[ -n "$job" ] || fail "sbatch gave no job id"
if ! slurm_wait_job "$job" 600; then
	cat "$SHARED/job.out"; cat "$SHARED"/prof/log/*.log 2> /dev/null; slurm_dump_logs
	fail "job $job did not complete"
fi
cat "$SHARED/job.out"
for n in "${SLURM_NODE_NAMES[@]}"; do
	echo "--- bpfprof on $n:"; cat "$SHARED/prof/log/$n.log"
	[ -s "$SHARED/prof/$n.$NODE_FORMAT" ] || fail "no profile from node $n"
done
ok "job $job completed; one profile per node: $(cd "$SHARED/prof" && ls *."$NODE_FORMAT" | tr '\n' ' ')"

"$WL/mpi_ranks" --truth 4 > "$TMP/truth"
PYTHONPATH=$LIB python3 - "$SHARED" "$TMP/truth" "$NODE_FORMAT" "${SLURM_NODE_NAMES[@]}" <<'PY'
import re, sys
import pprof_proto

shared, truth_path, fmt, nodes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
bad = 0
def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok

units = {}
for line in open(truth_path):
    _, r, main, helper = line.split()
    units[int(r)] = (int(main), int(helper))
ranks = {}                                  # rank -> (pid, host)
for line in open(shared + "/job.out"):
    m = re.match(r"rank (\d+) pid (\d+) host (\S+)$", line.strip())
    if m:
        ranks[int(m.group(1))] = (int(m.group(2)), m.group(3))
check(sorted(ranks) == [0, 1, 2, 3], "4 ranks reported: %s" % sorted(ranks))
check(sorted({h for _, h in ranks.values()}) == sorted(nodes),
      "the ranks ran on the cluster's nodes, with their own host names")

for node in nodes:
    samples = pprof_proto.load("%s/prof/%s.%s" % (shared, node, fmt))
    mine = {r: pid for r, (pid, h) in ranks.items() if h == node}
    pids = {s.labels.get("pid") for s in samples}
    comms = sorted({s.labels.get("comm") for s in samples})
    print("%s: ranks %s, %d samples, processes %s" % (node, sorted(mine), sum(s.values[0] for s in samples), comms))
    check(len(mine) == 2, "%s ran 2 ranks" % node)
    check(all(pid in pids for pid in mine.values()), "%s's profile has its ranks' processes" % node)
    others = {pid for r, (pid, h) in ranks.items() if h != node}
    check(not (pids & others), "%s's profile has no rank of the other node" % node)
    check("outside_job" not in comms, "%s's profile has nothing of the process outside the job" % node)
    # Known work by rank: samples taken in the workload's own code (leaf
    # frame), under the main thread's rankR_work or the helper's
    # helper_work.  Interrupts the kernel handles while a rank runs (softirqs
    # of a busy shared machine) are charged to whoever runs: they are not
    # the rank's work, so samples with kernel frames on top do not count.
    own = {"run_units", "sink", "helper_leaf", "helper_work"}
    own |= {"rank%d_%s" % (k, w) for k in range(4) for w in ("leaf", "work")}
    work, main_ok, helper_ok, interrupted = {}, {}, {}, 0
    for r, pid in mine.items():
        fn = "rank%d_work" % (r % 4)
        for s in samples:
            if s.labels.get("pid") != pid:
                continue
            if not s.frames or s.frames[0] not in own:
                interrupted += s.values[0] if (fn in s.frames or "helper_work" in s.frames) else 0
                continue
            if fn in s.frames:
                work[r] = work.get(r, 0) + s.values[0]
                main_ok[r] = main_ok.get(r, True) and s.labels.get("thread") != "helper"
            elif "helper_work" in s.frames:
                work[r] = work.get(r, 0) + s.values[0]
                helper_ok[r] = helper_ok.get(r, True) and s.labels.get("thread") == "helper"
        check(main_ok.get(r) is True, "rank %d: %s on its main thread" % (r, fn))
        check(helper_ok.get(r) is True, "rank %d: helper_work on its thread named helper" % r)
    print("%s: %d samples of the work had kernel frames on top (interrupts), not counted"
          % (node, interrupted))
    total = sum(work.values())
    design = sum(sum(units[r]) for r in mine)
    for r in sorted(mine):
        got = 100.0 * work.get(r, 0) / total if total else 0
        want = 100.0 * sum(units[r]) / design
        check(abs(got - want) <= 2.0, "%s rank %d: %.2f%% of the node's known work (%d samples), design %.2f%%"
              % (node, r, got, work.get(r, 0), want))
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || fail "the per-node profiles do not match the job"
ok "each node's profile holds its two ranks with their shares"
