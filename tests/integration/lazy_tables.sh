#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Lazy unwind tables (--call-graph auto; user/unwind/cfi_lazy.c,
# cfi_relayout.c): a file with at least 1,024 FDEs is loaded as a table of
# markers, one per FDE, and an FDE's rows are built when a walk first
# meets it: the BPF walk stops there and sends the stack as a copy, the
# collector builds the FDE's rows while it unwinds the copy, lays the
# table out again and points the process's entry at it; at the end of the
# run the table, with the FDEs built, goes into the on-disk cache, and the
# next run that meets the file builds its table whole (once: it is stored
# whole).
#
# pyburn (tests/workloads/pyburn.py) under Debian's python3.11 at 999 Hz,
# perf.data output read by `perf script`, with an unwind cache of the
# test's own, empty at first:
#  1. -v: python3.11 and libc are lazy tables ("2 lazy tables" at least),
#     the walks' copies built more than 20 FDEs and at most 10% of the two
#     files' FDEs (readelf counts them): a run meets few of them;
#  2. stacks are complete: at least 97% of the samples reach python3.11's
#     _start (the process root) through their Python and native frames;
#  3. the copies are few: at most 20% of the samples (~4% here, ~9% under
#     the sanitizers, whose collector lays the tables out later).  Without the
#     relayout every sample through an FDE met would stay a copy;
#  4. a second run: python3.11's and libc's tables come from the cache,
#     lazy, and are built whole at once ("2 built whole" at least, no lazy
#     table left, no FDE built for a walk); its stacks are as complete,
#     and a third run reads them whole (none built);
#  5. copies too short to reach the FDE the BPF walk stopped at
#     (--call-graph auto,256, a new cache, -p): the collector builds that FDE
#     all the same (the copy names it), and after 8 such copies builds
#     the table whole ("built whole" >= 1): at least 97% of the samples
#     reach _start (80% under the sanitizers, where building python3.11's
#     table whole takes 0.2-0.46 s, all of whose samples are short copies:
#     their run lasts 4 s instead of 2).
#     A walk of the copy alone would build nothing there, and every later
#     walk would stop at the same marker.
# Builds: release sanitized
. "$(dirname "$0")/../lib/common.sh"
need_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (apt-get install python3.11)"
LIBC=/lib/x86_64-linux-gnu/libc.so.6
fdes=$(( $(readelf --debug-dump=frames "$PY" 2>/dev/null | grep -c ' FDE ') +
	 $(readelf --debug-dump=frames "$LIBC" 2>/dev/null | grep -c ' FDE ') ))
[ "$fdes" -gt 2048 ] || fail "readelf counts only $fdes FDEs in $PY and $LIBC"

# roots DATA: "SAMPLES ROOTED", python3's samples in perf.data DATA and
# those whose callchain reaches _start
roots() {
	perf script -i "$1" -F comm,ip,sym 2> /dev/null |
		awk 'BEGIN { RS = "" } /^python3/ { n++; if ($NF == "_start") r++ }
		     END { print n + 0, r + 0 }'
}

# run N: bpfprof -v on pyburn with the test's cache; sets SAMPLES, ROOTED,
# COPIES, LAZY, BUILT, CACHED, WHOLE from its summary and perf script
run() {
	PYBURN_ROUNDS=1200 "$BPFPROF" -v -F 999 --unwind-cache "$TMP/cache" --format perf \
		-o "$TMP/run$1.data" -- "$PY" "$BPFPROF_SRC/tests/workloads/pyburn.py" 0 \
		> /dev/null 2> "$TMP/run$1.err" || { cat "$TMP/run$1.err"; fail "bpfprof run $1 failed"; }
	grep -E 'user stack walks|unwind tables|copied and unwound' "$TMP/run$1.err"
	read -r SAMPLES ROOTED < <(roots "$TMP/run$1.data")
	COPIES=$(sed -nE 's/.*copied and unwound here .*: ([0-9]+);.*/\1/p' "$TMP/run$1.err")
	LAZY=$(sed -nE 's/.* ([0-9]+) lazy tables, ([0-9]+) FDEs built.*/\1/p' "$TMP/run$1.err")
	BUILT=$(sed -nE 's/.* ([0-9]+) lazy tables, ([0-9]+) FDEs built.*/\2/p' "$TMP/run$1.err")
	CACHED=$(sed -nE 's/.* ([0-9]+) tables from the on-disk cache.*/\1/p' "$TMP/run$1.err")
	WHOLE=$(sed -nE 's/.* ([0-9]+) built whole.*/\1/p' "$TMP/run$1.err")
	[ -n "$LAZY" ] && [ -n "$BUILT" ] && [ -n "$CACHED" ] && [ -n "$WHOLE" ] ||
		fail "run $1: no lazy-table counts in the summary"
	[ "$SAMPLES" -ge 500 ] || fail "run $1: only $SAMPLES samples of python3"
	echo "run $1: $SAMPLES samples, $ROOTED at _start, ${COPIES:-0} copies;" \
	     "$LAZY lazy tables, $BUILT FDEs built, $CACHED tables from the cache, $WHOLE built whole"
}

run 1
[ "$LAZY" -ge 2 ] || fail "run 1: $LAZY lazy tables, expected python3.11's and libc's"
[ "$BUILT" -gt 20 ] || fail "run 1: only $BUILT FDEs built for the walks"
[ $((BUILT * 10)) -le "$fdes" ] || fail "run 1: $BUILT FDEs built, over 10% of $fdes"
ok "run 1: $LAZY lazy tables, $BUILT of $fdes FDEs built"
[ $((ROOTED * 100)) -ge $((SAMPLES * 97)) ] ||
	fail "run 1: $ROOTED of $SAMPLES samples reach _start ($(pct "$ROOTED" "$SAMPLES")%), under 97%"
ok "run 1: $ROOTED of $SAMPLES samples reach _start ($(pct "$ROOTED" "$SAMPLES")%)"
[ $((${COPIES:-0} * 5)) -le "$SAMPLES" ] || fail "run 1: $COPIES copies of $SAMPLES samples, over 20%"
ok "run 1: ${COPIES:-0} copies of $SAMPLES samples"
built1=$BUILT

run 2
[ "$CACHED" -ge 2 ] || fail "run 2: $CACHED tables from the cache, expected python3.11's and libc's"
[ "$WHOLE" -ge 2 ] && [ "$LAZY" = 0 ] && [ "$BUILT" = 0 ] ||
	fail "run 2: $WHOLE tables built whole, $LAZY lazy, $BUILT FDEs built (expected >= 2, 0, 0)"
ok "run 2: $CACHED tables from the cache, $WHOLE of them built whole (run 1 built $built1 FDEs)"
[ $((ROOTED * 100)) -ge $((SAMPLES * 97)) ] ||
	fail "run 2: $ROOTED of $SAMPLES samples reach _start ($(pct "$ROOTED" "$SAMPLES")%), under 97%"
ok "run 2: $ROOTED of $SAMPLES samples reach _start ($(pct "$ROOTED" "$SAMPLES")%)"
run 3
[ "$CACHED" -ge 2 ] && [ "$WHOLE" = 0 ] && [ "$LAZY" = 0 ] ||
	fail "run 3: $CACHED tables from the cache, $WHOLE built whole, $LAZY lazy (expected >= 2, 0, 0)"
ok "run 3: $CACHED whole tables from the cache, none built"

# 5: a running pyburn (-p, past a young process's first second, whose
# copies are not the lazy tables'), profiled for 2 s; 4 s under the
# sanitizers, whose whole build of python3.11's table (0.2-0.46 s, all of
# its samples short copies) took once 20% of a 2-s run (79.75% rooted)
dur=2
[ -n "${BPFPROF_SANITIZED:-}" ] && dur=4
"$PY" "$BPFPROF_SRC/tests/workloads/pyburn.py" $((dur + 4)) > /dev/null &
pid=$!
sleep 1.5
"$BPFPROF" -v -F 999 --unwind-cache "$TMP/cache3" --call-graph auto,256 -d "$dur" -p "$pid" \
	--format perf -o "$TMP/run4.data" 2> "$TMP/run4.err" ||
	{ cat "$TMP/run4.err"; fail "bpfprof -p (run 4) failed"; }
kill "$pid" 2> /dev/null
wait "$pid" 2> /dev/null
grep -E 'user stack walks|unwind tables|copied and unwound' "$TMP/run4.err"
read -r SAMPLES ROOTED < <(roots "$TMP/run4.data")
WHOLE=$(sed -nE 's/.* ([0-9]+) built whole.*/\1/p' "$TMP/run4.err")
[ "$SAMPLES" -ge 500 ] || fail "run 4: only $SAMPLES samples of python3"
[ "${WHOLE:-0}" -ge 1 ] || fail "run 4: no lazy table built whole after copies too short to walk"
min=97
[ -n "${BPFPROF_SANITIZED:-}" ] && min=80
[ $((ROOTED * 100)) -ge $((SAMPLES * min)) ] ||
	fail "run 4: $ROOTED of $SAMPLES samples reach _start ($(pct "$ROOTED" "$SAMPLES")%), under $min%"
ok "run 4 (-p, 256-byte copies): $WHOLE tables built whole; $ROOTED of $SAMPLES samples reach" \
   "_start ($(pct "$ROOTED" "$SAMPLES")%)"
