#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The target dies mid-run (exits by itself, or is SIGKILLed): bpfprof
# notices within a second, exits 0 and writes what it captured as a valid
# profile: gperftools read by google-pprof, perf.data by perf report, with
# the dead process's samples symbolized (spin_loop).
. "$(dirname "$0")/../lib/common.sh"
need_root

# check HOW FORMAT OUT: profile (-d 30) a process that, once bpfprof
# samples, becomes spin (exec, same PID) and exits after 1.5 s (HOW=exit)
# or is SIGKILLed 1 s later (HOW=kill).
check() {
	local how=$1 fmt=$2 out=$TMP/$3 start rc
	rm -f "$TMP/go"; mkfifo "$TMP/go"
	# no fork before the exec: a child would be profiled too
	sh -c 'read x < "$1"; exec "$2" "$3"' sh "$TMP/go" "$WL/spin" \
		"$([ "$how" = exit ] && echo 1.5 || echo 60)" &
	local victim=$!; CHILD_PIDS+=($victim)
	"$BPFPROF" --format "$fmt" -p "$victim" -F 499 -d 30 -o "$out" 2> "$TMP/err" & local bp=$!
	for _ in $(seq 400); do
		ls -l /proc/$bp/fd 2>/dev/null | grep -q perf_event && break
		sleep 0.05
	done
	start=$SECONDS
	echo go > "$TMP/go"
	if [ "$how" = kill ]; then sleep 1; kill -KILL $victim; fi
	wait $bp; rc=$?
	wait $victim 2>/dev/null
	[ $rc -eq 0 ] || fail "$fmt, target $how: exit $rc: $(cat "$TMP/err")"
	[ $((SECONDS - start)) -le 6 ] || fail "$fmt, target $how: bpfprof ran $((SECONDS - start)) s (-d 30)"
	case $fmt in
	gperftools) google-pprof --text "$WL/spin" "$out" 2>/dev/null | grep -q spin_loop ;;
	perf) perf report -i "$out" --stdio --sort sym 2>/dev/null | grep -q spin_loop ;;
	esac || fail "$fmt, target $how: the profile has no spin_loop: $(cat "$TMP/err")"
	ok "$fmt, target $how: $(head -n 1 "$TMP/err")"
}
check exit gperftools exit.prof
check kill gperftools kill.prof
check exit perf exit.data
check kill perf kill.data
