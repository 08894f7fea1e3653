#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# hpctoolkit_run.sh - a real run written as an HPCToolkit database:
#   bpfprof --format hpctoolkit -F 999 -d 3 -o DIR -p PID
# on the shares workload (main -> run_thread -> busy_loop -> phase_a -> leaf_a
# 50%, phase_b -> leaf_b 30%, leaf_c 20%) with two busy threads (one CPU each on
# the 2-CPU test machine, so ~2000 samples per thread).  The database
# must pass `hpcdb --strict` (tests/tools/hpcdb.c); the summary's leaf
# functions must be within 5 points of `shares --truth`; there must be one
# profile per thread, each with the right shares (5 points, or 3.5 sigma of
# sampling noise when a loaded machine gives the thread few samples); main must hold >= 95% of
# the main thread's time inclusively; every trace line must be sorted (hpcdb),
# hold as many samples as the thread's profile, and lie inside the run's
# wall-clock interval; metrics/default.yaml must be there; each thread's
# tuple is NODE / THREAD (one process, no MPI rank) with its tid as THREAD's
# physical id.
. "$(dirname "$0")/../lib/common.sh"
need_root

HPCDB=$BPFPROF_BUILD/tools/hpcdb
THREADS=2	# ~2000 samples each: sigma of a 50% share ~1.1 points
[ -x "$BPFPROF" ] || fail "$BPFPROF not built"
[ -x "$HPCDB" ] || fail "$HPCDB not built"
[ -x "$WL/shares" ] || fail "$WL/shares not built"

"$WL/shares" -t $THREADS -s 6 --wait >"$TMP/wl.out" 2>"$TMP/wl.err" &
WPID=$!
CHILD_PIDS+=("$WPID")
for _ in $(seq 100); do
	grep -q '^ready' "$TMP/wl.out" && break
	sleep 0.1
done
grep -q '^ready' "$TMP/wl.out" || fail "shares did not get ready"

t0=$(date +%s%N)
"$BPFPROF" --format hpctoolkit -F 999 -d 3 -o "$TMP/db" -p "$WPID" >"$TMP/bpfprof.out" 2>&1 &
BPID=$!
sleep 1				# let it attach before the work starts
kill -USR1 "$WPID"
wait "$BPID" || fail "bpfprof failed: $(cat "$TMP/bpfprof.out")"
t1=$(date +%s%N)

for f in meta.db profile.db cct.db trace.db metrics/default.yaml; do
	[ -s "$TMP/db/$f" ] || fail "$f missing from the database"
done
"$HPCDB" --strict --threads --top 20 --function main --description "$TMP/db" >"$TMP/hpcdb.out" 2>&1 ||
	fail "hpcdb --strict: $(cat "$TMP/hpcdb.out")"
ok "hpcdb --strict accepts the database"
cat "$TMP/hpcdb.out"

# Leaves call nothing but kernel code (interrupts, preemption) and a tiny
# sink(), so a leaf's inclusive share is its share of user-level samples:
# that is what the truth describes.
period=$(awk '/^\| period \|/ { print $4 }' "$TMP/hpcdb.out")
[ -n "$period" ] || fail "no period in the description"

# summary shares against the truth, within 5 points
"$WL/shares" --truth >"$TMP/truth"
while read -r kind fn frac; do
	[ "$kind" = share ] || continue
	got=$(awk -v f="$fn" '/^top functions \(summary\)/ { s = 1; next } /^top / { s = 0 }
		s && $5 == f { print $3 }' "$TMP/hpcdb.out")
	[ -n "$got" ] || fail "$fn not among the top functions"
	awk -v g="$got" -v w="$frac" 'BEGIN { d = g - 100 * w; exit !(d <= 5 && d >= -5) }' ||
		fail "$fn: $got% of samples, truth $(awk -v w="$frac" 'BEGIN { print 100 * w }')%"
	ok "$fn $got% (truth $frac)"
done <"$TMP/truth"

# one profile per thread of the workload, each with the right shares: within
# 5 points, or 3.5 sigma of the sampling noise if the thread got few samples
pid_threads=$(awk -v p="$WPID" -F'|' '$4 + 0 == p { n++ } END { print n + 0 }' "$TMP/hpcdb.out")
expect_eq "thread profiles of pid $WPID" "$pid_threads" "$THREADS"
# one process, no MPI rank: NODE / THREAD tuples as hpcrun's, the tid as
# THREAD's physical id (profile.db, and the description's table)
awk -F'|' -v p="$WPID" '$4 + 0 == p { t = $5 + 0; pr = $2 + 0
		if ($3 !~ "^ NODE 0 \\([^)]*\\) THREAD [0-9]+ \\(" t "\\) $") { print "row " $0; bad = 1 }
		rows[pr] = t }
	/^profile [0-9]+ \[/ { pr = $0; sub(/^profile /, "", pr); pr += 0; tup[pr] = $0 }
	END { for (pr in rows) if (tup[pr] !~ "THREAD [0-9]+ \\(" rows[pr] "\\)\\]") {
		print "profile " pr ": " tup[pr]; bad = 1 }
	      exit bad }' "$TMP/hpcdb.out" || fail "tids not the THREAD physical ids"
ok "each thread's tid is its THREAD physical id, no RANK (one process)"
awk -v per="$period" '/^profile [0-9]+ \[/ { p = $2; t = $0; sub(/.*total /, "", t)
		sub(/,.*/, "", t); n = t * 1e9 / per }
	p && NF == 3 && $3 ~ /^leaf_/ { print p, $3, $2, n }' "$TMP/hpcdb.out" >"$TMP/thread_shares"
for fn in leaf_a leaf_b leaf_c; do
	want=$(awk -v f="$fn" '$1 == "share" && $2 == f { print 100 * $3 }' "$TMP/truth")
	n=$(awk -v f="$fn" '$2 == f' "$TMP/thread_shares" | wc -l)
	[ "$n" -ge "$THREADS" ] || fail "$fn appears in $n thread profiles, expected $THREADS"
	awk -v f="$fn" -v w="$want" '$2 == f { d = $3 - w; if (d < 0) d = -d
		tol = 350 * sqrt(w / 100 * (1 - w / 100) / $4); if (tol < 5) tol = 5
		if (d > tol) { print "profile " $1 ": " f " " $3 "% of " $4 " samples, truth " w "%"; bad = 1 } }
		END { exit bad }' "$TMP/thread_shares" || fail "per-thread share of $fn off"
	ok "$fn within max(5 points, 3.5 sigma) of $want% in each of $n thread profiles"
done

# main inclusive >= 95% of the main thread (tid == pid)
main_prof=$(awk -v p="$WPID" -F'|' '$4 + 0 == p && $5 + 0 == p { print $2 + 0 }' "$TMP/hpcdb.out")
[ -n "$main_prof" ] || fail "no profile for the main thread"
incl=$(awk -v p="$main_prof" '$1 == "function" && $2 == "main" && $4 == p {
	sub(/%$/, "", $NF); print $NF }' "$TMP/hpcdb.out")
[ -n "$incl" ] || fail "main not found in profile $main_prof"
awk -v i="$incl" 'BEGIN { exit !(i >= 95) }' || fail "main inclusive $incl% of the main thread"
ok "main inclusive $incl% of the main thread"

# trace: per-thread samples equal the profile's, times inside the run
awk -v per="$period" '/^profile [0-9]+ \[/ {
		t = $0; sub(/.*total /, "", t); sub(/,.*/, "", t)
		n = $0; if (!sub(/.*trace samples /, "", n)) n = 0
		if (sprintf("%.0f", t * 1e9 / per) + 0 != n + 0) {
			print "profile " $2 ": " t " s = " t * 1e9 / per " samples, trace has " n; bad = 1 }
	} END { exit bad }' "$TMP/hpcdb.out" || fail "trace sample counts differ from profile.db"
ok "trace samples per thread equal profile.db's"
read -r tmin tmax < <(awk '/^trace: / { print $6, $8 }' "$TMP/hpcdb.out")
[ -n "${tmin:-}" ] || fail "no trace summary"
[ "$tmin" -ge "$t0" ] && [ "$tmax" -le "$t1" ] ||
	fail "trace times [$tmin, $tmax] outside the run [$t0, $t1]"
ok "trace times inside the run's wall-clock interval"
