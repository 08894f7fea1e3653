#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/demo.sh BUILD_DIR - the README's first command: profile the bundled
# demo workload (tests/workloads/shares.c: known shares per function) for 3
# seconds at 499 Hz, then show the top functions from the written file
# through pprof.
set -euo pipefail
B=$(realpath "${1:-build}")
OUT=$B/demo.prof
echo "== bpfprof -F 499 -o $OUT -- $B/workloads/shares -s 3"
"$B/bpfprof" -F 499 -o "$OUT" -- "$B/workloads/shares" -s 3
echo
echo "== the truth (what the demo workload does by construction)"
"$B/workloads/shares" --truth
echo
echo "== google-pprof --text (top functions from $OUT)"
google-pprof --text "$B/workloads/shares" "$OUT" 2>/dev/null | head -n 12
