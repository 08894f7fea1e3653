#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# pprof_format.sh - end-to-end test of `--format pprof` (plugins/pprof/):
# this file owns the check that a real profile of the ground-truth workload
# (tests/workloads/shares.c, two threads) written as gzipped profile.proto
# reads in `go tool pprof`: the shares of leaf_a/leaf_b/leaf_c (as the
# innermost user frame) within 5 percentage points of `shares --truth`,
# leaf_a on top of -top, kernel frames under "[kernel.kallsyms]", the
# sample count equal to the one in bpfprof's summary, whole call paths in -traces, and the pid, tid,
# comm and thread labels in -traces and -tags.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v go >/dev/null || fail "go not installed (golang-go, for go tool pprof)"
[ -x "$WL/shares" ] || fail "no workload $WL/shares"
FREQ=${FREQ:-499}
TOL=${TOL:-5}

# 1. The workload, blocked until SIGUSR1; 2. the collector; 3. release.
"$WL/shares" -t 2 -s 2 --wait >"$TMP/wl.out" 2>"$TMP/wl.err" & CHILD_PIDS+=($!); wl=$!
for _ in $(seq 100); do grep -q '^ready' "$TMP/wl.out" && break; sleep 0.1; done
grep -q '^ready' "$TMP/wl.out" || fail "workload not ready: $(cat "$TMP/wl.err")"
"$BPFPROF" -p "$wl" -F "$FREQ" -d 30 --format pprof -o "$TMP/out.pb.gz" 2>"$TMP/bpfprof.err" &
prof=$!; CHILD_PIDS+=($prof)
sleep 1
kill -USR1 "$wl" || fail "cannot release the workload"
wait "$wl" || fail "workload failed: $(cat "$TMP/wl.err")"
wait "$prof" || fail "bpfprof failed: $(cat "$TMP/bpfprof.err")"
cat "$TMP/bpfprof.err"
[ -s "$TMP/out.pb.gz" ] || fail "no output"
[ "$(head -c 2 "$TMP/out.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "output is not gzip"
kept=$(sed -n 's/^bpfprof: \([0-9]*\) samples (.*/\1/p' "$TMP/bpfprof.err")
[ -n "$kept" ] && [ "$kept" -gt 200 ] || fail "too few samples: '$kept'"

# 4. go tool pprof: shares against the truth.  The truth is about user
# code, so a sample is charged to its innermost user frame: kernel frames
# below it (interrupts, page faults, preemption on a busy machine) are
# time the kernel spent while that function ran.  go tool pprof -raw gives
# each sample's locations and each location's mapping; the kernel's is
# "[kernel.kallsyms]".
go tool pprof -top "$TMP/out.pb.gz" >"$TMP/top" 2>&1 || fail "go tool pprof -top failed: $(cat "$TMP/top")"
cat "$TMP/top"
grep -q '^Type: cpu' "$TMP/top" || fail "default sample type is not cpu"
grep -q '^Duration: ' "$TMP/top" || fail "no duration"
go tool pprof -raw "$TMP/out.pb.gz" >"$TMP/raw" 2>&1 || fail "go tool pprof -raw failed: $(cat "$TMP/raw")"
awk '/^Mappings/ { sec = "m"; next } /^Locations/ { sec = "l"; next } /^Samples/ { sec = "s"; next }
     sec == "m" && / \[kernel\.kallsyms\]/ { sub(":", "", $1); print "kmap", $1 }' "$TMP/raw" > "$TMP/kmap"
kmap=$(awk '{ print $2; exit }' "$TMP/kmap")
user_leaf_share() {
	awk -v f="$1" -v kmap="${kmap:-none}" '
		FNR == 1 { pass++ }
		/^Locations/ { sec = "l"; next } /^Mappings/ { sec = "m"; next } /^Samples/ { sec = "s"; next }
		pass == 1 && sec == "l" && $2 ~ /^0x/ { id = $1; sub(":", "", id); m = $3; sub("M=", "", m)
			mapof[id] = m; fn[id] = $4 }
		pass == 2 && sec == "s" && $2 ~ /^[0-9]+:$/ {
			total += $1
			for (i = 3; i <= NF; i++) if (mapof[$i] != kmap) { if (fn[$i] == f) hit += $1; break }
		}
		END { printf "%.2f", total ? 100 * hit / total : 0 }' "$TMP/raw" "$TMP/raw"
}
hottest=
while read -r kind fn share; do
	[ "$kind" = share ] || continue
	[ -n "$hottest" ] || hottest=$fn
	grep -Eq " $fn\$" "$TMP/top" || fail "$fn not in go tool pprof -top"
	got=$(user_leaf_share "$fn")
	awk -v g="$got" -v t="$share" -v tol="$TOL" 'BEGIN { d = g - 100 * t; exit !(d <= tol && d >= -tol) }' ||
		fail "$fn: $got% of samples, truth $(awk -v t="$share" 'BEGIN { print 100 * t }')% (tolerance $TOL points)"
	ok "$fn $got% of samples as innermost user frame (truth $share)"
done < <("$WL/shares" --truth)
top1=$(awk '$2 ~ /%$/ && $NF !~ /%$/ { print $NF; exit }' "$TMP/top")
expect_eq "hottest function in -top" "$top1" "$hottest"
if grep -q '_\[k\]\|^ *[0-9]*: 0xffff' "$TMP/raw"; then
	[ -n "$kmap" ] || fail "kernel addresses but no [kernel.kallsyms] mapping"
	ok "kernel frames in mapping $kmap [kernel.kallsyms]"
fi

# 5. The sample count: the samples/count type totals bpfprof's summary.
go tool pprof -sample_index=samples -top "$TMP/out.pb.gz" 2>/dev/null >"$TMP/count"
total=$(sed -n 's/.* of \([0-9]*\) total.*/\1/p' "$TMP/count" | head -1)
expect_eq "samples in the profile" "$total" "$kept"

# 6. Call paths and labels (-traces), labels (-tags).
go tool pprof -traces "$TMP/out.pb.gz" >"$TMP/traces" 2>&1 || fail "go tool pprof -traces failed"
awk '/^-----/ { if (s) print s; s = "" ; next } NF == 2 && $1 ~ /:$/ { next }
     { fn = $NF; s = s ? fn ";" s : fn } END { if (s) print s }' "$TMP/traces" > "$TMP/paths"
grep -q 'run_thread;busy_loop;phase_a;leaf_a$' "$TMP/paths" || fail "no path ...busy_loop;phase_a;leaf_a in -traces"
grep -q 'main;run_thread;busy_loop;phase_b;leaf_b$' "$TMP/paths" || fail "no path main;...;phase_b;leaf_b"
grep -q 'thread_main;run_thread;busy_loop;leaf_c$' "$TMP/paths" || fail "no path thread_main;...;leaf_c"
ok "call paths in -traces"
grep -Eq "^ +pid: +$wl$" "$TMP/traces" || fail "no pid:$wl label in -traces"
grep -Eq "^ +tid: +$wl$" "$TMP/traces" || fail "no tid:$wl label in -traces"
# The process is named after its main thread, which renamed itself shares-0.
grep -Eq '^ +comm: +shares-0$' "$TMP/traces" || fail "no comm:shares-0 label in -traces"
grep -Eq '^ +thread: +shares-1$' "$TMP/traces" || fail "no thread:shares-1 label in -traces"
ok "pid, tid, comm and thread labels in -traces"
go tool pprof -tags "$TMP/out.pb.gz" >"$TMP/tags" 2>&1 || fail "go tool pprof -tags failed"
for k in pid tid comm thread; do
	grep -Eq "^ *$k:" "$TMP/tags" || fail "no $k in -tags: $(cat "$TMP/tags")"
done
grep -q "shares-0" "$TMP/tags" && grep -q "shares-1" "$TMP/tags" || fail "-tags lacks the thread names"
ok "-tags shows pid, tid, comm and thread"
