#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# jit_perfmap_python.sh - issue 17: this file owns the checks that CPython
# 3.12's `-X perf` trampolines are named from /tmp/perf-PID.map
# ("py::FUNCTION:FILE"), like perf names them, and that the auto walk
# steps through them.
#
# Workload: tests/workloads/py_perf_shares.py (burn_a 70%, burn_b 30% of
# the work, the CPU time of each measured by the program).  Each Python
# call runs _PyEval_EvalFrameDefault through a trampoline of its own in
# anonymous memory; the innermost py:: frame of a sample is the Python
# function running.  CPython's trampoline (sub $8,%rsp; call *%rcx; add
# $8,%rsp; ret: 3.12 and 3.13) keeps no frame pointer, so the
# frame-pointer rule of JIT code would be wrong there: the collector
# recognises the trampolines by their machine code and gives them exact
# sp-based rows (user/unwind/cfi_anon.c).  On each profile:
#   - at least the workload's "burned" share minus 10 points of the
#     samples have a py::burn_a or py::burn_b frame (without the perf map
#     the trampolines are "[unknown]");
#   - burn_a's share of those is within max(5, 4 sigma) points of the
#     workload's truth (the bound of jit_perfmap.sh);
#   - at least 90% of those reach the process root
#     (__libc_start_call_main) through the outer trampolines
#     (py::<module>, py::run) and the interpreter's frames between them.
#
#  1. -p: bpfprof (folded) and `perf record -g` attach to one run; perf's
#     numbers are printed beside bpfprof's, not checked: its frame-pointer
#     walk stops in the leaf's caller in a CPython built without frame
#     pointers (pyenv's, Debian's), before any trampoline.
#  2. -- COMMAND: the same checks on a run of its own.
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
wl_py=$BPFPROF_SRC/tests/workloads/py_perf_shares.py
[ -x "$BPFPROF" ] || fail "no collector at $BPFPROF (set BPFPROF_BUILD)"
command -v perf >/dev/null || fail "perf not installed (Debian package linux-perf)"
PY=${PYTHON312:-}
if [ -z "$PY" ]; then
	for p in /root/.pyenv/versions/3.1[2-9]*/bin/python3.1[2-9] \
		 "$(command -v python3.13 || true)" "$(command -v python3.12 || true)"; do
		[ -x "$p" ] && PY=$p && break
	done
fi
[ -n "$PY" ] || skip "no CPython 3.12 or later (set PYTHON312)"
echo "python: $PY $("$PY" --version)"

MAPS=()
cleanup_maps() { rm -f "${MAPS[@]}"; cleanup_test; }
trap cleanup_maps EXIT

# check FOLDED WHAT RUN [ROOT_PCT]: the checks of the header on one
# profile; with ROOT_PCT, that share of the py::burn_* samples reach the root
check() {
	local file=$1 what=$2 run=$3 roots=${4:-0} a b n r t burned
	read -r a n < <(fs count "$file" '(^|;)py::burn_a:')
	read -r b _ < <(fs count "$file" '(^|;)py::burn_b:')
	read -r r _ < <(fs count "$file" '__libc_start_call_main;.*;py::run:.*;py::burn_[ab]:')
	t=$(awk '$1 == "truth" { print $3 }' "$TMP/$run.out")
	burned=$(awk '$1 == "truth" { print $7 }' "$TMP/$run.out")
	[ -n "$t" ] && [ -n "$burned" ] || fail "$run: no truth line: $(cat "$TMP/$run.out")"
	awk -v a="$a" -v b="$b" -v n="$n" -v r="$r" -v t="$t" -v burned="$burned" \
	    -v what="$what" -v roots="$roots" 'BEGIN {
		ab = a + b
		if (n < 200 || ab < 100) {
			printf "FAIL: %s: too few samples: %d, %d in burn_a/burn_b\n", what, n, ab; exit 1
		}
		named = 100 * ab / n; share = 100 * a / ab; p = t / 100
		bound = 400 * sqrt(p * (1 - p) / ab); if (bound < 5) bound = 5
		printf "%s: %d samples, %d in py::burn_a/py::burn_b (%.1f%%, workload burned " \
		       "%.1f%%); burn_a %.2f%% of them, truth %.2f%%, bound %.2f points; %d of them " \
		       "reach __libc_start_call_main (%.1f%%)\n", what, n, ab, named, burned, share,
		       t, bound, r, 100 * r / ab
		if (named < burned - 10) { printf "FAIL: %s: trampolines not named\n", what; exit 1 }
		d = share - t; if (d < 0) d = -d
		if (d > bound) { printf "FAIL: %s: burn_a share off by %.2f points\n", what, d; exit 1 }
		if (100 * r < roots * ab) {
			printf "FAIL: %s: %.1f%% of the stacks reach the root, not %d%%\n", what,
			       100 * r / ab, roots; exit 1
		}
	}' || fail "$what (top stacks: $(fs top "$file" 3 | cut -c1-400))"
}

# show FOLDED WHAT: the numbers of check, printed only (perf's profile)
show() {
	local n ab r
	read -r ab n < <(fs count "$1" '(^|;)py::burn_[ab]:')
	read -r r _ < <(fs count "$1" '__libc_start_call_main;.*;py::run:.*;py::burn_[ab]:')
	echo "$2: $n samples, $ab with a py::burn_a/py::burn_b frame, $r of them reach __libc_start_call_main"
}

perf_fds() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'anon_inode:\[perf_event\]'; }

# ---- 1. -p: bpfprof and perf record -g on one run ----------------------------
"$PY" -X perf "$wl_py" -s "$SECS" --wait >"$TMP/p.out" 2>"$TMP/p.wl.err" & wl=$!
CHILD_PIDS+=("$wl")
MAPS+=("/tmp/perf-$wl.map")
python3 "$lib/procwait.py" ready "$TMP/p.out" 30 >/dev/null || fail "workload not ready: $(cat "$TMP/p.wl.err")"
"$BPFPROF" -p "$wl" -F "$FREQ" -d 120 --format folded -o "$TMP/p.folded" 2>"$TMP/p.err" & b1=$!
perf record -e cpu-clock -F "$FREQ" -g -p "$wl" -o "$TMP/perf.data" >"$TMP/perf.out" 2>"$TMP/perf.err" & pr=$!
CHILD_PIDS+=("$b1" "$pr")
python3 "$lib/procwait.py" attached "$b1" --timeout 60 || fail "bpfprof did not attach: $(cat "$TMP/p.err")"
for _ in $(seq 300); do [ "$(perf_fds "$pr")" -ge 1 ] && break; sleep 0.1; done
[ "$(perf_fds "$pr")" -ge 1 ] || fail "perf record did not open its events: $(cat "$TMP/perf.err")"
sleep 0.5
kill -USR2 "$wl" || fail "cannot release the workload"
wait "$wl" || fail "workload failed: $(cat "$TMP/p.wl.err")"
wait "$b1" || fail "bpfprof failed: $(cat "$TMP/p.err")"
wait "$pr" || fail "perf record failed: $(cat "$TMP/perf.err")"
cat "$TMP/p.out" "$TMP/p.err"
perf script -i "$TMP/perf.data" -F comm,ip,sym,dso 2>"$TMP/perf.script.err" | fs from-perf-script \
	>"$TMP/perf.folded" || fail "perf script failed: $(tail -n 5 "$TMP/perf.script.err")"
echo "--- bpfprof:"; fs top "$TMP/p.folded" 3 | cut -c1-500
echo "--- perf record -g:"; fs top "$TMP/perf.folded" 3 | cut -c1-500
check "$TMP/p.folded" "-p, folded" p 90
show "$TMP/perf.folded" "-p, perf record -g (for comparison)"
ok "-p: trampolines named, shares as the workload's, stacks to the root"

# ---- 2. -- COMMAND ------------------------------------------------------------
"$BPFPROF" -F "$FREQ" --format folded -o "$TMP/c.folded" -- \
	"$PY" -X perf "$wl_py" -s "$SECS" >"$TMP/c.out" 2>"$TMP/c.err" ||
	fail "bpfprof -- python -X perf failed: $(cat "$TMP/c.err")"
MAPS+=("/tmp/perf-$(awk '$1 == "ready" { print $2 }' "$TMP/c.out").map")
cat "$TMP/c.out"
check "$TMP/c.folded" "-- COMMAND, folded" c 90
ok "-- COMMAND: trampolines named, stacks to the root"
