# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/slurm_cluster.sh - a Slurm cluster of N nodes on this machine,
# for integration tests (sourced, after common.sh; needs root).
#
#   slurm_cluster_start N       munged, slurmctld and N slurmd ($SLURM_NODE_NAMES);
#                               returns once every node is idle
#   slurm_sbatch SCRIPT ARGS... submit (sbatch --parsable), print the job id
#   slurm_wait_job ID [SECONDS] wait until the job left the queue; 0 if it
#                               COMPLETED, else 1 (with its state on stdout)
#   slurm_profiled_job PROGRAM ARGS...
#                               run PROGRAM as a 2-node, 4-task MPI job under
#                               docs/examples/bpfprof-job.sbatch (one bpfprof
#                               per node, raw, merged into HPCToolkit), fail
#                               unless it completes with a measurement per
#                               node and a database; sets $SHARED (the
#                               shared directory: job.out, prof/), $JOB, $DB
#   slurm_cluster_stop          stop every daemon, remove the cgroups; also
#                               run by the EXIT trap this file installs
#   $SLURM_DIR                  the cluster's directory (config, logs, spool;
#                               also a directory shared by all nodes, as on
#                               a cluster with a shared file system)
#   $SLURM_CONF                 exported: srun, sbatch, squeue use it
#
# One host, several nodes: each slurmd runs in its own UTS namespace (its
# host name is its NodeName, so `hostname` in a job step differs by node),
# in the shared network namespace on a port of its own (slurm.conf's Port=
# per node).  Debian's Slurm 22.05 is built with --enable-multiple-slurmd:
# each node's cgroups are under a root of its own, /slurm_NODENAME in each
# v1 hierarchy, so two nodes never share a job step's cgroup; node names
# are unique per run (bpPIDn1, bpPIDn2, ...: $SLURM_NODE_NAMES), so two
# clusters on one machine never share one either.  Their PMIx directories are per
# node too (TmpFS=DIR/%n/tmp: both would make /tmp/spmix_appdir_UID_JOB.STEP).
# Slurm's cgroup/v2 plugin refuses this machine ("Hybrid mode is not
# supported": the controllers are bound to v1 hierarchies and cgroup2 has
# none), so the cluster runs cgroup/v1 (proctrack/cgroup in freezer,
# task/cgroup in cpuset); docs/SLURM.md says what differs on a v2 cluster.
#
# Every daemon runs in the foreground (-D, -F) as a child of the test, so
# slurm_cluster_stop kills exactly those pids, and then whatever is left in
# the nodes' cgroups (job steps).  Quick: start ~1 s, stop ~1 s.

SLURM_DIR=
SLURM_PIDS=()
SLURM_NODES=0
SLURM_NODE_NAMES=()
# v1 hierarchies Slurm may make the nodes' cgroups in (freezer: proctrack;
# cpuset, memory, devices: task/cgroup; cpuacct: accounting): cleaned up.
SLURM_CONTROLLERS="freezer cpuset memory devices cpuacct"

# Free TCP ports on the loopback, $1 of them, on one line.
slurm_free_ports() {
	python3 - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

slurm_write_config() {	# nodes, ctld port, node ports...
	local n=$1 ctld_port=$2 i
	shift 2
	cat > "$SLURM_DIR/slurm.conf" <<EOF
ClusterName=bpfprof
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_DIR/munge.sock
StateSaveLocation=$SLURM_DIR/ctld
SlurmdSpoolDir=$SLURM_DIR/%n/spool
# per node: the PMIx plugin makes spmix_appdir_UID_JOB.STEP there, once per node
TmpFS=$SLURM_DIR/%n/tmp
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/%n/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/%n/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
EOF
	for ((i = 1; i <= n; i++)); do
		echo "NodeName=${SLURM_NODE_NAMES[i - 1]} NodeAddr=127.0.0.1 Port=$1 CPUs=$(nproc) State=UNKNOWN" \
			>> "$SLURM_DIR/slurm.conf"
		shift
	done
	echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=30 State=UP OverSubscribe=FORCE:4" \
		>> "$SLURM_DIR/slurm.conf"
	cat > "$SLURM_DIR/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=yes
ConstrainRAMSpace=no
ConstrainDevices=no
EOF
}

# slurmd of node $1 in its own UTS namespace, in the foreground.
slurm_start_node() {
	local node=$1
	mkdir -p "$SLURM_DIR/$node/spool" "$SLURM_DIR/$node/tmp"
	unshare --uts -- sh -c "hostname $node && exec slurmd -D -N $node -f '$SLURM_CONF'" \
		> "$SLURM_DIR/$node/stdout" 2>&1 &
	SLURM_PIDS+=($!)
}

slurm_cluster_start() {
	local n=${1:-2} ports i state
	command -v slurmctld > /dev/null && command -v munged > /dev/null ||
		skip "Slurm or munge not installed (apt-get install slurm-wlm munge)"
	SLURM_NODES=$n
	for ((i = 1; i <= n; i++)); do SLURM_NODE_NAMES+=("bp$$n$i"); done
	SLURM_DIR=$(mktemp -d /tmp/bpfprof-slurm.XXXXXX)
	chmod 755 "$SLURM_DIR"
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	mkdir -p "$SLURM_DIR/ctld" "$SLURM_DIR/shared"
	chmod 1777 "$SLURM_DIR/shared"
	dd if=/dev/urandom of="$SLURM_DIR/munge.key" bs=1024 count=1 status=none
	chmod 400 "$SLURM_DIR/munge.key"
	munged -F -f --socket="$SLURM_DIR/munge.sock" --key-file="$SLURM_DIR/munge.key" \
		--pid-file="$SLURM_DIR/munged.pid" --log-file="$SLURM_DIR/munged.log" \
		--seed-file="$SLURM_DIR/munged.seed" > "$SLURM_DIR/munged.out" 2>&1 &
	SLURM_PIDS+=($!)
	for _ in $(seq 50); do [ -S "$SLURM_DIR/munge.sock" ] && break; sleep 0.1; done
	[ -S "$SLURM_DIR/munge.sock" ] || { cat "$SLURM_DIR/munged.out"; fail "munged did not start"; }
	ports=$(slurm_free_ports $((n + 1)))
	slurm_write_config "$n" $ports
	slurmctld -D -i -f "$SLURM_CONF" > "$SLURM_DIR/slurmctld.out" 2>&1 &
	SLURM_PIDS+=($!)
	for ((i = 1; i <= n; i++)); do
		slurm_start_node "${SLURM_NODE_NAMES[i - 1]}"
	done
	# Up when every node is idle (sinfo -h -o %t: one state per line).
	for _ in $(seq 300); do
		state=$(sinfo -h -N -o %t 2> /dev/null | sort -u | tr '\n' ' ')
		[ "$state" = "idle " ] && [ "$(sinfo -h -N -o %N | wc -l)" -eq "$n" ] && return 0
		sleep 0.1
	done
	slurm_dump_logs
	fail "the Slurm cluster did not come up (node states: ${state:-none})"
}

slurm_dump_logs() {
	local f
	for f in "$SLURM_DIR"/slurmctld.log "$SLURM_DIR"/*/slurmd.log "$SLURM_DIR"/*.out \
		 "$SLURM_DIR"/*/stdout; do
		[ -s "$f" ] || continue
		echo "--- $f (last lines)"
		tail -n 15 "$f"
	done
}

slurm_sbatch() {
	sbatch --parsable "$@" | cut -d';' -f1
}

slurm_wait_job() {	# id [seconds]
	local id=$1 limit=${2:-300} state
	for _ in $(seq $((limit * 5))); do
		squeue -h -j "$id" 2> /dev/null | grep -q . || break
		sleep 0.2
	done
	state=$(scontrol -o show job "$id" 2> /dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
	[ "$state" = COMPLETED ] && return 0
	echo "job $id: ${state:-gone or still queued}"
	return 1
}

slurm_profiled_job() {
	SHARED=$SLURM_DIR/shared
	JOB=$(BPFPROF=$BPFPROF BPFPROF_DIR=$SHARED/prof BPFPROF_FREQ=${BPFPROF_FREQ:-999} OMPI_MCA_btl=self,vader,tcp \
	      slurm_sbatch --nodes=2 --ntasks-per-node=2 --output="$SHARED/job.out" \
			   "$BPFPROF_SRC/docs/examples/bpfprof-job.sbatch" "$@") || fail "sbatch failed"
	[ -n "$JOB" ] || fail "sbatch gave no job id"
	if ! slurm_wait_job "$JOB" 600; then
		cat "$SHARED/job.out"; cat "$SHARED"/prof/log/*.log 2> /dev/null; slurm_dump_logs
		fail "job $JOB did not complete"
	fi
	cat "$SHARED/job.out"
	for n in "${SLURM_NODE_NAMES[@]}"; do
		echo "--- bpfprof on $n:"; cat "$SHARED/prof/log/$n.log"
		[ -s "$SHARED/prof/$n.raw" ] || fail "no measurement from node $n"
	done
	DB=$SHARED/prof/job-$JOB.hpctoolkit
	[ -s "$DB/meta.db" ] || fail "the job script's bpfprof merge wrote no database"
	ok "job $JOB completed; one measurement per node ($(cd "$SHARED/prof" && ls *.raw | tr '\n' ' ')), merged into $(basename "$DB")"
}

slurm_cluster_stop() {
	local i c g
	[ -n "$SLURM_DIR" ] || return 0
	# The daemons (slurmd first: its job steps are killed below).
	for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
		kill -TERM "${SLURM_PIDS[i]}" 2> /dev/null
	done
	for _ in $(seq 30); do
		local alive=0
		for p in "${SLURM_PIDS[@]}"; do kill -0 "$p" 2> /dev/null && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.1
	done
	for p in "${SLURM_PIDS[@]}"; do kill -KILL "$p" 2> /dev/null; done
	# Whatever ran in the nodes' cgroups (slurmstepd, tasks), then the cgroups.
	for c in $SLURM_CONTROLLERS; do
		for ((i = 1; i <= SLURM_NODES; i++)); do
			g=/sys/fs/cgroup/$c/slurm_${SLURM_NODE_NAMES[i - 1]}
			[ -d "$g" ] || continue
			find "$g" -name cgroup.procs -exec cat {} + 2> /dev/null | xargs -r kill -KILL 2> /dev/null
			[ "$c" = freezer ] && find "$g" -name freezer.state -exec sh -c 'echo THAWED > "$1"' _ {} \; 2> /dev/null
		done
	done
	for c in $SLURM_CONTROLLERS; do
		for ((i = 1; i <= SLURM_NODES; i++)); do
			g=/sys/fs/cgroup/$c/slurm_${SLURM_NODE_NAMES[i - 1]}
			[ -d "$g" ] || continue
			for _ in $(seq 20); do
				find "$g" -depth -type d -exec rmdir {} \; 2> /dev/null
				[ -d "$g" ] || break
				sleep 0.1
			done
		done
	done
	[ -n "${SLURM_KEEP:-}" ] || rm -rf "$SLURM_DIR"
	SLURM_DIR=
	SLURM_PIDS=()
	SLURM_NODE_NAMES=()
}

slurm_on_exit() {
	slurm_cluster_stop
	cleanup_test
}
trap slurm_on_exit EXIT
