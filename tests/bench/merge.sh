#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/bench/merge.sh BUILD_DIR [--quick] - the `bpfprof merge` benchmark
# of docs/PERFORMANCE.md, as Markdown on stdout: synthetic measurements
# (tests/bench/raw_gen.c: per node one rank of THREADS threads, its own
# STACKS distinct stacks, SAMPLES samples per thread) of 32, 64, 128 and
# 256 nodes x 64 threads merged into an HPCToolkit database (every sample
# replayed into trace.db) and into folded stacks (the profile alone):
# wall time, CPU time and peak RSS of the merge, and the 4,096-node
# prediction (CPU time, RSS) from the growth between the two largest runs (both grow linearly: a node
# adds its threads, its stacks and its samples).  --quick: 4 and 8 nodes
# x 8 threads (a smoke run, not results).  No root needed.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=$(realpath "${1:?usage: tests/bench/merge.sh BUILD_DIR [--quick]}")
QUICK=${2:-}
NODES=(32 64 128 256) THREADS=64 SAMPLES=200 STACKS=64
[ "$QUICK" = --quick ] && NODES=(4 8) THREADS=8 SAMPLES=20 STACKS=8
BIN=$B/workloads/shares
WORK=$(mktemp -d /tmp/bpfprof-merge-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -Wall -Wextra "$SRC/tests/bench/raw_gen.c" -o "$WORK/raw_gen"
nm --defined-only "$BIN" | awk '$2 ~ /^[tT]$/ { print $1 }' > "$WORK/addrs"

echo "### bpfprof merge: synthetic measurements, $THREADS threads per node"
echo
echo "$SAMPLES samples per thread, $STACKS distinct user stacks per node (8-24 frames, the"
echo "binary at another address on every node), 4 kernel stacks; the same pid on every node."
echo
echo "| nodes | input MB | format | wall s | CPU s (user + sys) | peak RSS MB |"
echo "|---:|---:|---|---:|---:|---:|"
declare -A T R
for n in "${NODES[@]}"; do
	rm -rf "$WORK/in" "$WORK/db" "$WORK/out.folded"
	mkdir "$WORK/in"
	"$WORK/raw_gen" "$WORK/in" "$n" "$THREADS" "$SAMPLES" "$STACKS" "$BIN" "$WORK/addrs"
	mb=$(du -sm "$WORK/in" | cut -f1)
	for fmt in hpctoolkit folded; do
		out=$WORK/db
		[ "$fmt" = folded ] && out=$WORK/out.folded
		/usr/bin/time -f '%e %U %S %M' -o "$WORK/time" "$B/bpfprof" merge -q -o "$out" --format "$fmt" \
			"$WORK/in" 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
		read -r wall user sys rss_kb < "$WORK/time"
		T[$n.$fmt]=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
		R[$n.$fmt]=$((rss_kb / 1024))
		echo "| $n | $mb | $fmt | $wall | ${T[$n.$fmt]} | ${R[$n.$fmt]} |"
		rm -rf "$out"
	done
done
a=${NODES[-2]} b=${NODES[-1]}
echo
echo "Prediction for 4,096 nodes (linear from the $a- and $b-node runs):"
echo
for fmt in hpctoolkit folded; do
	awk -v a="$a" -v b="$b" -v ta="${T[$a.$fmt]}" -v tb="${T[$b.$fmt]}" -v ra="${R[$a.$fmt]}" \
	    -v rb="${R[$b.$fmt]}" -v f="$fmt" 'BEGIN {
		st = (tb - ta) / (b - a); sr = (rb - ra) / (b - a)
		printf "- %s: %.4f CPU s and %.2f MB per node: %.0f CPU s, %.0f MB at 4,096 nodes\n",
			f, st, sr, tb + st * (4096 - b), rb + sr * (4096 - b) }'
done
