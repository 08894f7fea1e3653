#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# --cgroup: two cgroup v2 groups A and B under one test group, with known
# workloads (copies of spin, named after where they run) in A, in A's
# child A/sub, in B and in the test group itself.  `bpfprof --all --cgroup
# A` (A relative to the cgroup2 mount) must show A's processes only: the
# one running when it started, one started later inside A, and the one
# in A/sub (descendants count); none of B's or the parent's.  Its samples
# times the period must be within 10% of the CPU time A's cpu.stat counted
# over the run.  The same with the form /proc/PID/cgroup shows ("/X/A"),
# and, where the cgroup v1 freezer hierarchy is mounted (hybrid systems,
# where Slurm's cgroup/v1 plugin puts jobs), with a freezer path.  A path
# that is no cgroup is refused with one line.
. "$(dirname "$0")/../lib/common.sh"
need_root
LIB=$BPFPROF_SRC/tests/lib
. "$LIB/cgroups.sh"
[ -n "$CG2" ] || skip "no cgroup2 mount"
NAME=bpfprof-test-$$
for n in spin_in_a spin_late spin_sub spin_in_b spin_parent spin_v1_a spin_v1_b; do
	cp "$WL/spin" "$TMP/$n"
done

# Names (first frame) of a folded profile, sorted, and its total samples.
names() { cut -d';' -f1 "$1" | sort -u | tr '\n' ' '; }
total() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

make_group "$CG2/$NAME"
make_group "$CG2/$NAME/A"
make_group "$CG2/$NAME/A/sub"
make_group "$CG2/$NAME/B"
A=$CG2/$NAME/A

# 1. Bad paths: one line, non-zero exit, no output.
"$BPFPROF" --all --cgroup "$NAME/nosuch" -d 1 -o "$TMP/bad.prof" 2> "$TMP/bad.err" &&
	fail "--cgroup of a missing cgroup succeeded"
[ "$(wc -l < "$TMP/bad.err")" -eq 1 ] && grep -q "^bpfprof: no cgroup '$NAME/nosuch'" "$TMP/bad.err" ||
	fail "missing cgroup: expected one line, got: $(cat "$TMP/bad.err")"
[ -e "$TMP/bad.prof" ] && fail "a missing cgroup left an output"
"$BPFPROF" --cgroup "$TMP" -d 1 -o "$TMP/bad.prof" 2> "$TMP/bad.err" && fail "--cgroup $TMP succeeded"
[ "$(wc -l < "$TMP/bad.err")" -eq 1 ] || fail "a directory that is no cgroup: $(cat "$TMP/bad.err")"
"$BPFPROF" -p $$ --cgroup "$NAME/A" -d 1 -o "$TMP/bad.prof" 2> "$TMP/bad.err" &&
	fail "--cgroup with -p succeeded"
grep -q "^bpfprof: --cgroup goes with --all" "$TMP/bad.err" || fail "--cgroup -p: $(cat "$TMP/bad.err")"
ok "a missing cgroup, a directory that is none, and --cgroup with -p are refused in one line"

# 2. The run: A's workloads, one before and one after the start, one in
# A/sub; B and the parent group busy all along.  Up to 3 CPU-seconds in A.
usage() { awk '$1 == "usage_usec" { print $2 }' "$1/cpu.stat"; }
# B and the parent niced: the CPUs go to A first (the run is measured by
# the CPU time A got, whatever the load).
in_group "$CG2/$NAME/B" nice -n 19 "$TMP/spin_in_b" 30 & CHILD_PIDS+=($!)
in_group "$CG2/$NAME" nice -n 19 "$TMP/spin_parent" 30 & CHILD_PIDS+=($!)
"$BPFPROF" --all --cgroup "$NAME/A" -F 499 --format folded -o "$TMP/a.folded" 2> "$TMP/a.err" &
bp=$!; CHILD_PIDS+=($bp)
python3 "$LIB/procwait.py" attached $bp --timeout 60 || { cat "$TMP/a.err"; fail "bpfprof never attached"; }
"$BPFPROF" --cgroup "/$NAME/A" -F 499 --format folded -o "$TMP/proc_form.folded" 2> "$TMP/p.err" &
bp2=$!; CHILD_PIDS+=($bp2)
python3 "$LIB/procwait.py" attached $bp2 --timeout 60 || { cat "$TMP/p.err"; fail "bpfprof (/proc form) never attached"; }
u0=$(usage "$A")
in_group "$A" bash -c "$TMP/spin_in_a 1 & sleep 0.5; $TMP/spin_late 1; wait" & a_pid=$!
in_group "$A/sub" "$TMP/spin_sub" 1 & sub_pid=$!
wait $a_pid $sub_pid
u1=$(usage "$A")
kill -INT $bp $bp2
wait $bp || { cat "$TMP/a.err"; fail "bpfprof --all --cgroup failed"; }
wait $bp2 || { cat "$TMP/p.err"; fail "bpfprof --cgroup /X/A failed"; }
grep -v "^bpfprof: wrote" "$TMP/a.err" | head -4

got=$(names "$TMP/a.folded")
echo "processes in the profile of A: $got"
for n in spin_in_a spin_late spin_sub; do
	[[ " $got " == *" $n "* ]] || fail "$n (in A or below) is missing from the profile of A"
done
for n in $got; do
	case $n in spin_in_a|spin_late|spin_sub|bash|sleep) ;;	# all of them ran in A
	*) fail "$n is in the profile of A but did not run in A" ;;
	esac
done
ok "A's processes, the one started later and A/sub's in it; B's and the parent's not"
for n in spin_in_a spin_late spin_sub; do
	grep -q "^$n;" "$TMP/proc_form.folded" || fail "the /proc/PID/cgroup form missed $n"
done
[[ " $(names "$TMP/proc_form.folded") " == *spin_in_b* ]] && fail "the /proc/PID/cgroup form took B"
ok "--cgroup /$NAME/A (the /proc/PID/cgroup form) names the same cgroup"

# Samples against the CPU time the kernel charged to A (499 Hz: 2.004 ms).
n=$(total "$TMP/a.folded")
python3 - "$n" "$u0" "$u1" <<'EOF' || fail "A's samples do not match its CPU time"
import sys
n, u0, u1 = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
expected = (u1 - u0) / 1e6 * 499
print("A: %d samples; cpu.stat: %.3f s of CPU, %.0f samples expected at 499 Hz (%.1f%% off)"
      % (n, (u1 - u0) / 1e6, expected, 100.0 * (n - expected) / expected))
sys.exit(0 if expected > 200 and abs(n - expected) <= 0.10 * expected else 1)
EOF
ok "A's sample count matches the CPU time A used"

# 3. A cgroup v1 hierarchy (freezer), where mounted: the same filter.
FRZ=$(awk '$3 == "cgroup" && $4 ~ /(^|,)freezer(,|$)/ { print $2; exit }' /proc/self/mounts)
if [ -z "$FRZ" ]; then
	ok "no cgroup v1 freezer hierarchy here: the v1 case is not run"
	exit 0
fi
make_group "$FRZ/$NAME"
make_group "$FRZ/$NAME/A"
make_group "$FRZ/$NAME/B"
"$BPFPROF" --cgroup "$FRZ/$NAME/A" -F 499 --format folded -o "$TMP/v1.folded" 2> "$TMP/v1.err" &
bp=$!; CHILD_PIDS+=($bp)
python3 "$LIB/procwait.py" attached $bp --timeout 60 || { cat "$TMP/v1.err"; fail "bpfprof (v1) never attached"; }
in_group "$FRZ/$NAME/A" "$TMP/spin_v1_a" 1 & a_pid=$!
in_group "$FRZ/$NAME/B" "$TMP/spin_v1_b" 1 & b_pid=$!
wait $a_pid $b_pid
kill -INT $bp
wait $bp || { cat "$TMP/v1.err"; fail "bpfprof --cgroup (freezer) failed"; }
got=$(names "$TMP/v1.folded")
echo "processes in the profile of freezer A: $got"
[[ " $got " == *" spin_v1_a "* ]] || fail "spin_v1_a is missing from the profile of freezer A"
[[ " $got " == *spin_v1_b* || " $got " == *spin_in_b* ]] && fail "freezer B's or v2 B's work in A's profile"
ok "a cgroup v1 (freezer) path filters the same way"
