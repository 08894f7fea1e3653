#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rss_churn.sh - what the collector keeps per short-lived process: bpfprof
# -q --format perf -- forker -n N -m exec -c 1 (N children one after the
# other, each exec()ing forker and spending ~1 ms of CPU, ~1 sample), for
# each N given (default 500 and 3000), REPS times; the collector's peak
# RssAnon is polled every 0.1 s from /proc/PID/status.  Prints per run the
# peak, and per BPFPROF the growth per child between the smallest and the
# largest N (median of the runs): what each exited process still costs
# the collector.  For docs/PERFORMANCE.md; not part of `make bench`.
# Root.
#
#   tests/bench/rss_churn.sh [-r REPS] [-n N1,N2,...] BPFPROF...
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
reps=3 ns=500,3000
while getopts r:n: o; do
	case $o in
	r) reps=$OPTARG ;;
	n) ns=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: rss_churn.sh [-r REPS] [-n N1,N2,...] BPFPROF..." >&2; exit 2; }
forker=$SRC/build/workloads/forker
[ -x "$forker" ] || { echo "rss_churn.sh: no $forker (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec {pause}<> <(:)

# peak BPFPROF N: prints the collector's peak RssAnon (KiB)
peak() {
	local pid k v _ rss=0
	"$1" -q -F 999 --format perf -o "$tmp/perf.data" -- "$forker" -n "$2" -m exec -c 1 \
		> /dev/null 2> "$tmp/err" &
	pid=$!
	while [ -e "/proc/$pid/status" ]; do
		while read -r k v _; do
			[ "$k" = RssAnon: ] && [ "$v" -gt "$rss" ] && rss=$v
		done < "/proc/$pid/status" 2> /dev/null
		read -r -t 0.1 -u "$pause" _ || true
	done
	wait "$pid" || { cat "$tmp/err" >&2; echo "rss_churn.sh: $1 failed" >&2; exit 1; }
	echo "$rss"
}

IFS=, read -r -a counts <<< "$ns"
lo=${counts[0]} hi=${counts[${#counts[@]} - 1]}
for b in "$@"; do
	growth=()
	for ((r = 1; r <= reps; r++)); do
		declare -A at=()
		for n in "${counts[@]}"; do
			at[$n]=$(peak "$b" "$n")
			echo "$b run $r: $n children: peak RssAnon ${at[$n]} KiB"
		done
		growth+=($(( (at[$hi] - at[$lo]) * 1024 / (hi - lo) )))
		unset at
	done
	med=$(printf '%s\n' "${growth[@]}" | sort -n | sed -n "$(( (reps + 1) / 2 ))p")
	echo "$b: ${growth[*]} bytes of RssAnon per child ($lo -> $hi children); median $med"
done
