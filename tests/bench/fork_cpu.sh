#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# fork_cpu.sh - the collector's own CPU time per forked child at a high
# fork rate: build/workloads/forker -m fork -c 0 (N children, one after the
# other, each exiting at once: ~2,000 fork+exit+wait a second here),
# followed with -p at 999 Hz by each bpfprof given, alternating, REPS times.
# Prints, per run, bpfprof's user+sys seconds (from /usr/bin/time: it has no
# children of its own with -p) and microseconds per child.  For
# docs/PERFORMANCE.md; not part of `make bench`.  Root.
#
#   tests/bench/fork_cpu.sh [-n CHILDREN] [-r REPS] BPFPROF...
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
n=10000 reps=2
while getopts n:r: o; do
	case $o in n) n=$OPTARG ;; r) reps=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: fork_cpu.sh [-n CHILDREN] [-r REPS] BPFPROF..." >&2; exit 2; }
forker=$SRC/build/workloads/forker
[ -x "$forker" ] || { echo "fork_cpu.sh: no $forker (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for r in $(seq "$reps"); do
	for b in "$@"; do
		"$forker" --wait -n "$n" -m fork -c 0 > "$tmp/out" 2> "$tmp/forker.err" &
		wl=$!
		pid=$(python3 "$SRC/tests/lib/procwait.py" ready "$tmp/out" 20)
		/usr/bin/time -f "%U %S" -o "$tmp/time" "$b" -q -F 999 -o "$tmp/out.prof" -p "$pid" \
			2> /dev/null &
		bp=$!
		python3 "$SRC/tests/lib/procwait.py" attached "$(pgrep -n -P "$bp")"
		kill -USR1 "$wl"
		wait "$wl"
		wait "$bp" || true
		read -r user sys < "$tmp/time"
		awk -v b="$b" -v u="$user" -v s="$sys" -v n="$n" -v r="$r" 'BEGIN {
			printf "rep %d %s: %.2f s of CPU, %.0f us per child\n", r, b, u + s, (u + s) / n * 1e6 }'
	done
done
