#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# jit_perfmap_python.sh - issue 17: this file owns the check that CPython
# 3.12's `-X perf` trampolines are named from /tmp/perf-PID.map
# ("py::FUNCTION:FILE"), like perf names them.
#
# Workload: tests/workloads/py_perf_shares.py (burn_a 70%, burn_b 30% of
# the work, the CPU time of each measured by the program).  Each Python
# call runs _PyEval_EvalFrameDefault through a trampoline of its own in
# anonymous memory; the innermost py:: frame of a sample is the Python
# function running.  CPython 3.12's trampoline (sub $8,%rsp; call *%rcx)
# keeps no frame pointer, so the auto walk ends right after that
# innermost trampoline (bad-step: the garbage rbp is caught) and outer
# Python functions are not seen; the innermost one is what is checked:
#   - at least the workload's "burned" share minus 10 points of the
#     samples have a py::burn_a or py::burn_b frame (without the perf map
#     the trampolines are "[unknown]");
#   - burn_a's share of those is within max(5, 4 sigma) points of the
#     workload's truth (the bound of jit_perfmap.sh).
#
# Needs a CPython 3.12 or later (Debian 12 has 3.11): $PYTHON312, else
# pyenv's under /root/.pyenv, else python3.12/3.13 on PATH; skips (77)
# when there is none.
# Environment: BPFPROF_BUILD, PYTHON312, FREQ (499), WORK_SECONDS (3).
. "$(dirname "$0")/../lib/common.sh"
need_root
FREQ=${FREQ:-499}
SECS=${WORK_SECONDS:-3}
lib=$BPFPROF_SRC/tests/lib
[ -x "$BPFPROF" ] || fail "no collector at $BPFPROF (set BPFPROF_BUILD)"
PY=${PYTHON312:-}
if [ -z "$PY" ]; then
	for p in /root/.pyenv/versions/3.1[2-9]*/bin/python3.1[2-9] \
		 "$(command -v python3.13 || true)" "$(command -v python3.12 || true)"; do
		[ -x "$p" ] && PY=$p && break
	done
fi
[ -n "$PY" ] || skip "no CPython 3.12 or later (set PYTHON312)"
echo "python: $PY $("$PY" --version)"

"$BPFPROF" -F "$FREQ" --format folded -o "$TMP/py.folded" -- \
	"$PY" -X perf "$BPFPROF_SRC/tests/workloads/py_perf_shares.py" -s "$SECS" \
	>"$TMP/py.out" 2>"$TMP/py.err" || fail "bpfprof -- python -X perf failed: $(cat "$TMP/py.err")"
cat "$TMP/py.out" "$TMP/py.err"
pid=$(awk '$1 == "ready" { print $2 }' "$TMP/py.out")
[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
python3 "$lib/folded_stacks.py" top "$TMP/py.folded" 4 | cut -c1-300
read -r a n < <(python3 "$lib/folded_stacks.py" count "$TMP/py.folded" '(^|;)py::burn_a:')
read -r b _ < <(python3 "$lib/folded_stacks.py" count "$TMP/py.folded" '(^|;)py::burn_b:')
t=$(awk '$1 == "truth" { print $3 }' "$TMP/py.out")
burned=$(awk '$1 == "truth" { print $7 }' "$TMP/py.out")
[ -n "$t" ] && [ -n "$burned" ] || fail "no truth line: $(cat "$TMP/py.out")"
awk -v a="$a" -v b="$b" -v n="$n" -v t="$t" -v burned="$burned" 'BEGIN {
	ab = a + b
	if (n < 200 || ab < 100) { printf "FAIL: too few samples: %d, %d in burn_a/burn_b\n", n, ab; exit 1 }
	named = 100 * ab / n; share = 100 * a / ab; p = t / 100
	bound = 400 * sqrt(p * (1 - p) / ab); if (bound < 5) bound = 5
	printf "%d samples, %d in py::burn_a/py::burn_b (%.1f%%, workload burned %.1f%%); " \
	       "burn_a %.2f%% of them, truth %.2f%%, bound %.2f points\n", n, ab, named, burned,
	       share, t, bound
	if (named < burned - 10) { print "FAIL: trampolines not named"; exit 1 }
	d = share - t; if (d < 0) d = -d
	if (d > bound) { printf "FAIL: burn_a share off by %.2f points\n", d; exit 1 }
}' || fail "py:: trampolines"
ok "CPython -X perf trampolines named py::burn_a and py::burn_b, shares as the workload's"
