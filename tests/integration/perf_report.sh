#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# perf.data output (--format perf) read by the real perf tools, side by side
# with `perf record -F 499 -g` on the same workload (tests/workloads/shares
# with 2 threads: leaf_a 50%, leaf_b 30%, leaf_c 20%; ~2500 samples each, so
# sampling noise on a 5-point threshold is below 3.5 sigma):
#   - perf report / perf script print nothing on stderr for bpfprof's file;
#   - perf report --no-children --sort sym: leaf shares within 5 points of
#     the workload's --truth, and top-5 shares within 7 points of perf's own
#     (two independent runs: the noise of a difference is sqrt(2) times
#     each one's, so 7 points keep it at ~3.5 sigma; at 5 points the two
#     runs, each within 5 of the truth, differed by 5.47 in one CI run);
#   - perf script: comm, pid/tid, cpu, increasing times, callchains that
#     resolve (leaf_a <- phase_a <- busy_loop in the executable, start_thread
#     in libc, kernel frames such as irqentry_exit_to_user_mode);
#   - perf report --header-only: hostname, os release, arch, cpus, cmdline;
#   - perf buildid-list: the workload's build-id.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v perf >/dev/null || fail "perf (linux-perf) is not installed"
[ -x "$BPFPROF" ] || fail "no $BPFPROF"
[ -x "$WL/shares" ] || fail "no $WL/shares"

FREQ=499
DUR=3

# start_shares: run shares --wait in the background, set $SHARES_PID once
# it is calibrated and blocked (it prints "ready PID").
start_shares() {
	local fifo=$TMP/ready.$RANDOM line
	mkfifo "$fifo"
	"$WL/shares" -t 2 -s $((DUR + 3)) --wait >"$fifo" 2>"$TMP/shares.err" &
	CHILD_PIDS+=($!)
	SHARES_PID=$!
	read -r -t 30 line <"$fifo" || fail "shares did not get ready"
	rm -f "$fifo"
	[ "${line%% *}" = ready ] || fail "shares printed '$line'"
}

# top_shares FILE: "SYMBOL PERCENT" lines of perf report --sort sym (self).
top_shares() {
	perf report -i "$1" --stdio --no-children --sort sym -g none 2>/dev/null |
		awk '/^ *[0-9.]+%/ { p = $1; sub(/%/, "", p); $1 = ""; $2 = "";
			sub(/^ +/, ""); print $0, p }'
}

# share FILE SYMBOL: its percentage, 0 if absent.
share() { top_shares "$1" | awk -v s="$2" '$1 == s { print $2; f = 1 } END { if (!f) print 0 }'; }

within() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }

# --- bpfprof --format perf -------------------------------------------------
start_shares
pid=$SHARES_PID
"$BPFPROF" --format perf -F $FREQ -d $DUR -o "$TMP/bpfprof.data" -p "$pid" \
	>"$TMP/bpfprof.out" 2>"$TMP/bpfprof.err" &
bp=$!
sleep 0.5
kill -USR1 "$pid"
wait $bp || fail "bpfprof failed: $(cat "$TMP/bpfprof.err")"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
[ -s "$TMP/bpfprof.data" ] || fail "bpfprof wrote no perf.data"
ok "bpfprof --format perf wrote $(stat -c %s "$TMP/bpfprof.data") bytes"

# --- perf record -g on a second instance -----------------------------------
start_shares
ppid=$SHARES_PID
perf record -F $FREQ -g -p "$ppid" -o "$TMP/perf.data" -- sleep $DUR \
	>"$TMP/record.out" 2>"$TMP/record.err" &
pr=$!
sleep 0.5
kill -USR1 "$ppid"
wait $pr || fail "perf record failed: $(cat "$TMP/record.err")"
kill "$ppid" 2>/dev/null; wait "$ppid" 2>/dev/null
ok "perf record -F $FREQ -g done"

# --- perf report / perf script read bpfprof's file without complaint -------
D=$TMP/bpfprof.data
for cmd in "report --stdio --no-children --sort sym" "report --stdio" \
	   "script -F comm,pid,tid,cpu,time,ip,sym,dso" "script" "report --header-only" \
	   "buildid-list"; do
	# shellcheck disable=SC2086
	perf $cmd -i "$D" >"$TMP/out.txt" 2>"$TMP/err.txt" || fail "perf $cmd failed: $(cat "$TMP/err.txt")"
	[ ! -s "$TMP/err.txt" ] || fail "perf $cmd wrote on stderr: $(head -5 "$TMP/err.txt")"
done
ok "perf report/script/buildid-list: empty stderr"

perf script -i "$D" -F comm,pid,tid,cpu,time,ip,sym,dso >"$TMP/script.txt" 2>/dev/null
nsamples=$(grep -c '^[^[:space:]]' "$TMP/script.txt")
[ "$nsamples" -ge $((FREQ * DUR / 4)) ] || fail "only $nsamples samples in $D"
ok "$nsamples samples"

# --- the file holds exactly the samples bpfprof counted ----------------------
# (bpfprof's summary on stderr lists "PERCENT SAMPLES FUNCTION" lines; this
# check is independent of sampling noise and of the machine's load)
perf report -i "$D" --stdio --no-children --sort sym -g none -n 2>/dev/null |
	awk '/^ *[0-9.]+%/ { print $4, $2 }' >"$TMP/counts.perf"
for fn in leaf_a leaf_b leaf_c; do
	want=$(awk -v f="$fn" '$1 ~ /%$/ && $3 == f && NF == 3 { print $2; exit }' "$TMP/bpfprof.err")
	[ -n "$want" ] || continue	# no summary line: nothing to compare with
	got=$(awk -v f="$fn" '$1 == f { print $2 }' "$TMP/counts.perf")
	[ "$got" = "$want" ] || fail "$fn: $got samples in perf.data, bpfprof counted $want"
	ok "$fn: $got samples, as bpfprof counted"
done

# --- shares against the truth ---------------------------------------------
"$WL/shares" --truth >"$TMP/truth" || fail "shares --truth failed"
while read -r kind fn frac; do
	[ "$kind" = share ] || continue
	want=$(awk -v f="$frac" 'BEGIN { printf "%.2f", f * 100 }')
	got=$(share "$D" "$fn")
	within "$got" "$want" 5 || fail "$fn: $got% in bpfprof's perf.data, truth $want%"
	ok "$fn: $got% (truth $want%)"
done <"$TMP/truth"

# --- top-5 against perf record ----------------------------------------------
top_shares "$D" | head -5 >"$TMP/top.bpfprof"
top_shares "$TMP/perf.data" | head -5 >"$TMP/top.perf"
[ -s "$TMP/top.perf" ] || fail "perf record's profile is empty"
awk '{ print $1 }' "$TMP/top.bpfprof" "$TMP/top.perf" | sort -u >"$TMP/top.syms"
while read -r sym; do
	a=$(share "$D" "$sym")
	b=$(share "$TMP/perf.data" "$sym")
	within "$a" "$b" 7 || fail "$sym: bpfprof $a% vs perf record $b%"
	ok "$sym: bpfprof $a% vs perf record $b%"
done <"$TMP/top.syms"

# --- perf script: ids, cpu, time order, callchains --------------------------
awk -v pid="$pid" -v ncpu="$(nproc)" '
	/^[^ \t]/ {
		n++
		if ($1 != "shares" && $1 !~ /^shares/) { print "comm " $1; bad++ }
		split($2, id, "/")
		if (id[1] != pid) { print "pid " $2; bad++ }
		cpu = $3; gsub(/[\[\]]/, "", cpu)
		if (cpu + 0 < 0 || cpu + 0 >= ncpu) { print "cpu " $3; bad++ }
		t = $4; sub(/:$/, "", t)
		if (t + 0 < last) { print "time " t " after " last; bad++ }
		last = t + 0; depth = 0; leaf = ""
		next
	}
	/^[ \t]+[0-9a-f]+ / {
		depth++
		if (depth == 1) leaf = $2
		if (depth == 2 && leaf == "leaf_a") { la++; if ($2 == "phase_a") lap++ }
		if ($2 == "busy_loop") bl++
		if ($NF ~ /\/shares\)$/ && $2 !~ /^\[unknown\]/) exe++
		if ($NF ~ /\/libc\.so[^\/]*\)$/ && $2 !~ /^\[unknown\]/) lib++
		if ($NF == "([kernel.kallsyms])") { kf++; if ($2 !~ /^\[unknown\]/) kr++ }
	}
	END {
		if (n == 0 || bad) { print "bad samples: " bad "/" n; exit 1 }
		if (la == 0 || lap < la * 0.95) { print "leaf_a <- phase_a: " lap "/" la; exit 1 }
		if (bl < n * 0.9) { print "busy_loop in " bl "/" n " callchains"; exit 1 }
		if (exe == 0) { print "no frames resolved in the executable"; exit 1 }
		if (lib == 0) { print "no frames resolved in libc"; exit 1 }
		if (kr < kf * 0.9) { print "kernel frames resolved: " kr "/" kf; exit 1 }
		printf "%d samples, leaf_a<-phase_a %d/%d, busy_loop %d, libc frames %d, kernel frames %d/%d resolved\n",
			n, lap, la, bl, lib, kr, kf
	}' "$TMP/script.txt" >"$TMP/script.check" || fail "perf script: $(cat "$TMP/script.check")"
ok "perf script: $(cat "$TMP/script.check")"

# --- header and build-ids ----------------------------------------------------
perf report -i "$D" --header-only >"$TMP/header.txt" 2>/dev/null
grep -qxF "# hostname : $(uname -n)" "$TMP/header.txt" || fail "header: hostname"
grep -qxF "# os release : $(uname -r)" "$TMP/header.txt" || fail "header: os release"
grep -qxF "# arch : $(uname -m)" "$TMP/header.txt" || fail "header: arch"
grep -qxF "# nrcpus online : $(nproc)" "$TMP/header.txt" || fail "header: nrcpus online"
grep -q "^# cmdline : .*--format perf .*-p $pid" "$TMP/header.txt" || fail "header: cmdline"
ok "header: $(grep '^# cmdline' "$TMP/header.txt")"

bid=$(readelf -n "$WL/shares" | awk '/Build ID:/ { print $3; exit }')
[ -n "$bid" ] || fail "shares has no build-id"
perf buildid-list -i "$D" 2>/dev/null | grep -q "^$bid .*shares$" ||
	fail "perf buildid-list does not list shares ($bid): $(perf buildid-list -i "$D" 2>&1)"
ok "perf buildid-list: $bid shares"
exit 0
