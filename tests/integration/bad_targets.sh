#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Bad targets: a PID that does not exist, a kernel thread, a TID that does
# not exist, a CPU that does not exist each get one line naming the
# problem, a non-zero exit and no file.  A target that exits while bpfprof
# starts ends the run at once with a valid (empty) profile or a one-line
# error, never a hang or a partial file.  -t accepts the TID of any thread
# of any process (here a non-main thread of another process) and keeps
# only that thread's samples.  A CPU named twice in -C is sampled once.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/reliability.sh"
need_root
build_plugin dump
OUT=$TMP/out.prof

# A PID that just became free.
sh -c 'exit 0' & gone=$!; wait $gone
refused "$OUT" "PID $gone" "$BPFPROF" -p "$gone" -d 0.2 -o "$OUT"
refused "$OUT" "TID $gone" "$BPFPROF" -t "$gone" -d 0.2 -o "$OUT"
# kthreadd (pid 2) and a kernel thread given by TID.
refused "$OUT" "PID 2 is a kernel thread" "$BPFPROF" -p 2 -d 0.2 -o "$OUT"
refused "$OUT" "kernel thread" "$BPFPROF" -t 2 -d 0.2 -o "$OUT"
# A CPU that does not exist: the message names the CPU and the reason.
refused "$OUT" "CPU 999.*(offline|does not exist|not exist)" "$BPFPROF" --all -C 999 -d 0.2 -o "$OUT"
refused "$OUT" "CPU 999.*(offline|does not exist|not exist)" "$BPFPROF" --all -C 0,999 -d 0.2 -o "$OUT"

# A target that exits during start-up: kill it as soon as bpfprof holds a
# loaded BPF program (after the target check, before or while sampling).
sleep 60 & victim=$!; CHILD_PIDS+=($victim)
start=$SECONDS
"$BPFPROF" -p "$victim" -o "$OUT" 2> "$TMP/startup.err" & bp=$!
for _ in $(seq 2000); do
	ls -l /proc/$bp/fd 2>/dev/null | grep -q 'bpf-prog' && break
done
kill -9 $victim; wait $victim 2>/dev/null
wait $bp; rc=$?
[ $((SECONDS - start)) -le 10 ] || fail "bpfprof took $((SECONDS - start)) s to notice the target was gone"
if [ $rc -eq 0 ]; then
	[ -s "$OUT" ] || fail "exit 0 but no profile at $OUT: $(cat "$TMP/startup.err")"
	google-pprof --raw /bin/sleep "$OUT" > /dev/null 2>&1 || fail "the profile does not load in google-pprof"
	ok "target exited during start-up: exit 0, valid profile ($(head -n 1 "$TMP/startup.err"))"
else
	[ "$(wc -l < "$TMP/startup.err")" -eq 1 ] || fail "exit $rc with: $(cat "$TMP/startup.err")"
	grep -q "$victim" "$TMP/startup.err" || fail "the error does not name PID $victim: $(cat "$TMP/startup.err")"
	no_output "$OUT"
	ok "target exited during start-up: exit $rc, $(cat "$TMP/startup.err")"
fi
rm -f "$OUT"

# -t TID: a thread id of any process is legal; only that thread is sampled.
"$WL/spin" 30 2 & spin=$!; CHILD_PIDS+=($spin)
for _ in $(seq 50); do [ "$(ls /proc/$spin/task | wc -l)" -ge 2 ] && break; sleep 0.05; done
tid=$(ls /proc/$spin/task | grep -vx "$spin" | head -n 1)
[ -n "$tid" ] || fail "spin has no second thread"
"$BPFPROF" --plugin "$TMP/dump.so" -t "$tid" -F 499 -d 1 -o "$TMP/tid.txt" 2> "$TMP/tid.err" ||
	fail "-t $tid (a non-main thread of pid $spin) failed: $(cat "$TMP/tid.err")"
n=$(awk -F'\t' '$1 == "count" { n += $4 } END { print n + 0 }' "$TMP/tid.txt")
others=$(awk -F'\t' -v t="$tid" '$1 == "count" && $3 != t' "$TMP/tid.txt" | wc -l)
[ "$n" -ge 50 ] || fail "-t $tid: only $n samples"
[ "$others" -eq 0 ] || fail "-t $tid: samples of other threads: $(awk -F'\t' -v t="$tid" '$1 == "count" && $3 != t' "$TMP/tid.txt" | head -3)"
ok "-t $tid (thread of another process): $n samples, all of that thread"

# -C 0,0: CPU 0 once, i.e. one sampling event, not two (double counts).
# Besides it, one event per online CPU carries the kernel's mapping records
# (user/kernel/mmap_events.c, opened right after the sampling events).
"$BPFPROF" -C 0,0 -p $$ -F 99 -d 3 -o "$OUT" 2> "$TMP/dup.err" & bp=$!
for _ in $(seq 200); do ls -l /proc/$bp/fd 2>/dev/null | grep -q perf_event && break; sleep 0.05; done
sleep 0.3	# all events are open once the first is (one loop in the sampler)
nev=$(ls -l /proc/$bp/fd 2>/dev/null | grep -c perf_event)
online=$(getconf _NPROCESSORS_ONLN)
wait $bp || fail "-C 0,0 failed: $(cat "$TMP/dup.err")"
[ "$nev" -eq $((1 + online)) ] ||
	fail "-C 0,0 opened $nev perf events: CPU 0 is sampled $((nev - online)) times"
ok "-C 0,0: one sampling event (and $online for mapping records)"
