#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# fork_cpu.sh - what a high fork rate costs with each profiler: forker -m
# fork -c 0 (CHILDREN children one after the other, each exiting at once:
# ~2,000 fork+exit+wait a second here), released once the profiler
# samples, followed with -p at 999 Hz.  Variants, in turn, REPS times: no
# profiler, `perf record -g`, then each bpfprof given.  Prints per run the
# workload's wall time per child (what the fork, exit and wait cost the
# program: the BPF program's fork and exit handlers run in it) and the
# profiler's own user+sys CPU per child (from /usr/bin/time: with -p it
# has no children of its own).  For docs/PERFORMANCE.md; not part of
# `make bench`.  Root.
#
# With -x, each child execs forker instead (-m exec -e 0: fork+exec+exit,
# as a shell script or a build runs its commands), ~1,000 a second.
# With -P, the workload runs on CPU 1 and the profiler on CPU 0 (taskset):
# what the profiler's work costs the workload's CPU apart from the CPU
# time the scheduler gives the profiler beside it.
#
#   tests/bench/fork_cpu.sh [-n CHILDREN] [-r REPS] [-x] [-P] BPFPROF...
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
n=10000 reps=2 mode=(-m fork -c 0) on_wl=() on_prof=()
while getopts n:r:xP o; do
	case $o in
	n) n=$OPTARG ;;
	r) reps=$OPTARG ;;
	x) mode=(-m exec -e 0 -c 0) ;;
	P) on_wl=(taskset -c 1) on_prof=(taskset -c 0) ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: fork_cpu.sh [-n CHILDREN] [-r REPS] [-x] [-P] BPFPROF..." >&2; exit 2; }
forker=$SRC/build/workloads/forker
[ -x "$forker" ] || { echo "fork_cpu.sh: no $forker (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one VARIANT: a forker run under it; prints one line
one() {
	local v=$1 r=$2 wl pid bp t0 t1 user sys
	local timed=(/usr/bin/time -f "%U %S" -o "$tmp/time" ${on_prof[@]+"${on_prof[@]}"})
	${on_wl[@]+"${on_wl[@]}"} "$forker" --wait -n "$n" "${mode[@]}" > "$tmp/out" 2> "$tmp/forker.err" &
	wl=$!
	pid=$(python3 "$SRC/tests/lib/procwait.py" ready "$tmp/out" 20)
	bp=
	case $v in
	none) ;;
	perf) "${timed[@]}" perf record -q -g -e cpu-clock -F 999 \
		-p "$pid" -o "$tmp/perf.data" 2> /dev/null & bp=$! ;;
	*) "${timed[@]}" "$v" -q -F 999 -o "$tmp/out.prof" -p "$pid" \
		2> /dev/null & bp=$! ;;
	esac
	if [ -n "$bp" ]; then	# the profiler under /usr/bin/time, once it is there
		until pgrep -n -P "$bp" > /dev/null; do
			kill -0 "$bp" 2> /dev/null ||
				{ echo "fork_cpu.sh: $v exited at once" >&2; kill "$wl"; exit 1; }
			sleep 0.05
		done
		python3 "$SRC/tests/lib/procwait.py" attached "$(pgrep -n -P "$bp")" ||
			{ echo "fork_cpu.sh: $v did not attach" >&2; kill "$wl" "$bp"; exit 1; }
	fi
	t0=$(date +%s%N)
	kill -USR1 "$wl"
	wait "$wl"
	t1=$(date +%s%N)
	user=0 sys=0
	if [ -n "$bp" ]; then
		kill -INT "$bp" 2> /dev/null || true	# perf -p outlives its target's children
		wait "$bp" || true
		read -r user sys < "$tmp/time"
	fi
	awk -v v="$v" -v u="$user" -v s="$sys" -v n="$n" -v r="$r" -v ns=$((t1 - t0)) 'BEGIN {
		printf "rep %d %s: %.1f us per child in the workload, profiler %.0f us of CPU per child\n",
		       r, v, ns / n / 1e3, (u + s) / n * 1e6 }'
}

for r in $(seq "$reps"); do
	for v in none perf "$@"; do
		one "$v" "$r"
	done
done
