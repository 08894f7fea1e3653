#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# dwarf_paths.sh - issue 6, complete user stacks without frame pointers:
# this file owns the check that `--call-graph dwarf` walks a program built
# without frame pointers (tests/workloads/nofp_paths.c, -O2
# -fomit-frame-pointer) up to main along the right call paths, and that
# frame pointers (-g, the default) cannot - so the first check means
# something.
#
# Each run: start `nofp_paths -s 2 --wait` (calibrates, prints "ready PID",
# blocks), attach `bpfprof -p PID -F 499 --format folded`, wait until it
# has attached (tests/lib/procwait.py), release the work with SIGUSR1; the
# profile ends when the workload exits.  tests/lib/folded_stacks.py
# matches the user part of every folded stack.
#
#   dwarf: >= 95% of the samples reach main (the unwinder's own "complete"
#          count, i.e. up to _start, too); the shares of the paths
#          main;stage_a;leaf_a and main;stage_b;leaf_b (as innermost user
#          frames) within TOL points of `nofp_paths --truth` (60/40).  With
#          ~2,000 samples the binomial sigma of a 60% share is 1.1 points,
#          so 5 points is > 4.5 sigma (at 499 Hz, 1,000 samples, 3.2).
#   fp:    the same workload with frame pointers: fewer than 50% of the
#          samples reach main through the right path.  (Measured on Debian
#          12: 0% - the rbp chain of this binary is garbage, the stacks are
#          just the leaf.)  A frame-pointer walk that suddenly succeeds
#          means the workload is not built the way this test assumes.
#
# Environment: BPFPROF_BUILD, FREQ (999), WORK_SECONDS (2), TOL (5).
# Exit: 0 pass, 77 skip (no root/BPF), 1 fail.
. "$(dirname "$0")/../lib/common.sh"
need_root
FREQ=${FREQ:-999}
WORK_SECONDS=${WORK_SECONDS:-2}
TOL=${TOL:-5}
workload=$WL/nofp_paths
lib=$BPFPROF_SRC/tests/lib
[ -x "$BPFPROF" ] || fail "no collector at $BPFPROF (set BPFPROF_BUILD)"
[ -x "$workload" ] || fail "no workload at $workload (make builds it)"

# profile NAME BPFPROF-ARGS...: one released run into $TMP/NAME.folded,
# summary in $TMP/NAME.err.
profile() {
	local name=$1 wl prof
	shift
	"$workload" -s "$WORK_SECONDS" --wait >"$TMP/$name.wl" 2>"$TMP/$name.wlerr" & wl=$!
	CHILD_PIDS+=("$wl")
	python3 "$lib/procwait.py" ready "$TMP/$name.wl" 30 >/dev/null ||
		fail "$name: workload not ready: $(cat "$TMP/$name.wlerr")"
	"$BPFPROF" -p "$wl" -F "$FREQ" -d 60 --format folded -o "$TMP/$name.folded" "$@" \
		2>"$TMP/$name.err" & prof=$!
	CHILD_PIDS+=("$prof")
	python3 "$lib/procwait.py" attached "$prof" --timeout 30 ||
		fail "$name: bpfprof did not attach: $(cat "$TMP/$name.err")"
	kill -USR1 "$wl" || fail "$name: cannot release the workload"
	wait "$wl" || fail "$name: workload failed: $(cat "$TMP/$name.wlerr")"
	wait "$prof" || fail "$name: bpfprof $* failed: $(cat "$TMP/$name.err")"
	echo "--- $name: bpfprof $*"
	cat "$TMP/$name.err" "$TMP/$name.wlerr"
	python3 "$lib/folded_stacks.py" top "$TMP/$name.folded" 4
	[ -s "$TMP/$name.folded" ] || fail "$name: no folded output"
}
kept_of() { sed -n 's/^bpfprof: \([0-9]*\) samples (.*/\1/p' "$1"; }
# at_least GOT MIN / below GOT MAX / within GOT TRUTH_PERCENT
at_least() { awk -v g="$1" -v m="$2" 'BEGIN { exit !(g >= m) }'; }
within() { awk -v g="$1" -v t="$2" -v tol="$TOL" 'BEGIN { d = g - t; exit !(d <= tol && d >= -tol) }'; }

MAIN='(^|;)main(;|$)'
# Both truth paths as innermost user frames, below main.
RIGHT='(^|;)main;stage_a;leaf_a$|(^|;)main;stage_b;leaf_b$'

# --- dwarf ------------------------------------------------------------------
profile dwarf --call-graph dwarf
kept=$(kept_of "$TMP/dwarf.err")
[ -n "$kept" ] && [ "$kept" -ge 300 ] || fail "dwarf: too few samples: '$kept'"
read -r unwound complete < <(sed -n \
	's/^bpfprof: dwarf unwinding: \([0-9]*\) samples;.* complete \([0-9]*\).*/\1 \2/p' "$TMP/dwarf.err")
[ -n "${unwound:-}" ] || fail "dwarf: no 'dwarf unwinding: N samples; complete X' line in the summary"
p=$(pct "$complete" "$kept")
at_least "$p" 95 || fail "dwarf: only $complete of $kept samples unwound completely ($p%)"
ok "dwarf: $complete of $kept samples unwound to the outermost frame ($p%)"
read -r main total < <(python3 "$lib/folded_stacks.py" count "$TMP/dwarf.folded" "$MAIN")
[ "$total" -eq "$kept" ] || fail "dwarf: folded counts add up to $total, the summary says $kept"
p=$(pct "$main" "$total")
at_least "$p" 95 || fail "dwarf: only $main of $total samples reach main ($p%)"
ok "dwarf: $main of $total samples reach main ($p%)"
while read -r kind path share; do
	[ "$kind" = path ] || continue
	read -r hit total < <(python3 "$lib/folded_stacks.py" count "$TMP/dwarf.folded" \
		"(^|;)${path}\$")
	got=$(pct "$hit" "$total")
	truth=$(awk -v s="$share" 'BEGIN { printf "%.2f", 100 * s }')
	within "$got" "$truth" || fail "dwarf: path $path: $got% of samples, truth $truth% (+-$TOL)"
	ok "dwarf: path $path $got% (truth $truth%)"
done < <("$workload" --truth)

# --- frame pointers: the contrast -------------------------------------------
profile fp -g
kept=$(kept_of "$TMP/fp.err")
[ -n "$kept" ] && [ "$kept" -ge 300 ] || fail "fp: too few samples: '$kept'"
read -r main total < <(python3 "$lib/folded_stacks.py" count "$TMP/fp.folded" "$MAIN")
read -r right _ < <(python3 "$lib/folded_stacks.py" count "$TMP/fp.folded" "$RIGHT")
pm=$(pct "$main" "$total") pr=$(pct "$right" "$total")
echo "fp: $main of $total samples reach main ($pm%), $right through the right path ($pr%)"
at_least "$pr" 50 && fail "fp: $pr% of the samples reach main through the right path;" \
	"nofp_paths is expected to defeat frame-pointer unwinding (built with frame pointers?)"
ok "fp: only $pr% of the samples reach main through the right path (dwarf: see above)"
