#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release sanitized
#   (tests/run --sanitized: it holds whole stacks to 99% (95% sanitized))
# Per-thread Python stacks: tests/workloads/pythreads.py runs three named
# threads (pw-a, pw-b, pw-c), each in a Python function of its own
# (pyworker_a/b/c), 3:2:1 of the work; run by Debian's python3.11 and by
# a pyenv 3.13 (else 3.12) build.  Each thread's samples are in its own
# function and that function in no other thread, its stacks are whole
# (clone3 ... start_thread ... Python frames) with no evaluator frame
# left, and each thread's share of the workers' samples is within 3
# points of its share of their CPU time (4 CPU seconds at $SHARES_HZ Hz,
# tests/lib/common.sh: ~20,000 samples, sigma <= 0.36 points)
# (tests/lib/pystacks.py).
. "$(dirname "$0")/../lib/common.sh"
need_root
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/dump.so" || fail "cannot build the dump plugin"
export PYTHONPATH=$BPFPROF_SRC/tests/lib
FIRST_ONLY=1 find_pythons 3.13 3.12

for py in "${pythons[@]}"; do
	tag=$(basename "$py")
	"$BPFPROF" --plugin "$TMP/dump.so" -F "$SHARES_HZ" -o "$TMP/$tag.dump" -- \
		"$py" "$BPFPROF_SRC/tests/workloads/pythreads.py" 4 "$TMP/$tag.truth" \
		2> "$TMP/$tag.err" || { cat "$TMP/$tag.err"; fail "bpfprof -- $py failed"; }
	cat "$TMP/$tag.err" "$TMP/$tag.truth"
	python3 "$BPFPROF_SRC/tests/lib/pystacks.py" threads "$TMP/$tag.dump" "$TMP/$tag.truth" 3 ||
		fail "$tag: per-thread Python stacks wrong"
	ok "$tag: per-thread Python stacks"
done
