#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Signals.  SIGINT and SIGTERM end the run and write a complete file that
# google-pprof / perf report read; a second SIGINT aborts with exit 130
# and no file (nor temporary) at all; after SIGKILL no BPF program of ours
# (on_sample, on_fork, on_exec, on_exit) is still loaded, no perf event
# of ours is held by anyone (the target, a COMMAND child), and nothing is
# at the output path (only the hidden temporary .NAME.tmp.XXXXXX can stay:
# nobody is left to remove it; see docs/SECURITY.md).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/reliability.sh"
need_root
"$WL/spin" 60 2 & busy=$!; CHILD_PIDS+=($busy)

# wait_for COND...: poll up to 10 s.
wait_for() {
	for _ in $(seq 200); do "$@" && return 0; sleep 0.05; done
	return 1
}
temp_exists() { ls -A "$TMP" | grep -q "^\.$1\.tmp\."; }
sampling() { [ "$(ls -l /proc/"$1"/fd 2>/dev/null | grep -c perf_event)" -ge 1 ]; }

# SIGINT -> complete gperftools profile.
"$BPFPROF" -p "$busy" -F 499 -o "$TMP/int.prof" 2> "$TMP/int.err" & bp=$!
wait_for sampling $bp || fail "bpfprof never started sampling: $(cat "$TMP/int.err")"
sleep 1; kill -INT $bp; wait $bp || fail "SIGINT: exit $? ($(cat "$TMP/int.err"))"
google-pprof --text "$WL/spin" "$TMP/int.prof" 2>/dev/null | grep -q spin_loop ||
	fail "the SIGINT profile has no spin_loop in google-pprof"
ok "SIGINT: exit 0, google-pprof reads it ($(head -n 1 "$TMP/int.err"))"

# SIGTERM -> complete perf.data.
"$BPFPROF" --format perf -p "$busy" -F 499 -o "$TMP/term.data" 2> "$TMP/term.err" & bp=$!
wait_for sampling $bp || fail "bpfprof never started sampling: $(cat "$TMP/term.err")"
sleep 1; kill -TERM $bp; wait $bp || fail "SIGTERM: exit $? ($(cat "$TMP/term.err"))"
perf report -i "$TMP/term.data" --stdio --no-children --sort sym > "$TMP/report" 2> "$TMP/report.err" ||
	fail "perf report failed: $(cat "$TMP/report.err")"
grep -q spin_loop "$TMP/report" || fail "perf report shows no spin_loop: $(head -n 20 "$TMP/report")"
ok "SIGTERM: exit 0, perf report reads it"

# Two SIGINTs: abort, exit 130, nothing left.  The slow_write test plugin
# streams into its temporary during the run (so there is a partial file to
# clean up) and takes 3 s in write(), announced on stderr, writing into a
# companion file (abort.txt.side) too: the second SIGINT lands while the
# output and its companion are being written, and removes both
# temporaries.  (Two signals sent at once would merge into one.)
mkdir -m 700 "$TMP/p" && build_plugin slow_write "$TMP/p"
"$BPFPROF" --plugin "$TMP/p/slow_write.so" -p "$busy" -F 999 -o "$TMP/abort.txt" 2> "$TMP/abort.err" & bp=$!
wait_for temp_exists abort.txt || fail "no temporary file during a streaming run"
wait_for sampling $bp || fail "bpfprof never started sampling"
sleep 0.5; kill -INT $bp
wait_for grep -q "slow_write: writing" "$TMP/abort.err" || fail "write() never started: $(cat "$TMP/abort.err")"
temp_exists abort.txt.side || fail "no temporary companion file during write()"
kill -INT $bp; wait $bp; rc=$?
[ $rc -eq 130 ] || fail "two SIGINTs: exit $rc, expected 130 ($(cat "$TMP/abort.err"))"
grep -q "aborted" "$TMP/abort.err" || fail "no 'aborted' message: $(cat "$TMP/abort.err")"
no_output "$TMP/abort.txt"
no_output "$TMP/abort.txt.side"
ok "second SIGINT during write(): exit 130, no file, no companion, no temporary"

# A second SIGINT after the file was renamed into place (bpfprof is
# printing its summary): the file is complete, and bpfprof must not claim
# that no profile was written.
"$BPFPROF" --format perf --all -F 999 -o "$TMP/late.data" 2> "$TMP/late.err" & bp=$!
wait_for sampling $bp || fail "bpfprof never started sampling"
sleep 0.5; kill -INT $bp
wait_for test -e "$TMP/late.data" || fail "no file after the first SIGINT: $(cat "$TMP/late.err")"
kill -INT $bp 2>/dev/null; wait $bp; rc=$?
perf report -i "$TMP/late.data" --stdio > /dev/null 2>&1 || fail "the file at the path is not complete"
if grep -q "no profile written" "$TMP/late.err"; then
	fail "exit $rc saying '$(grep "no profile written" "$TMP/late.err" | tr -d '\n')' but $TMP/late.data was written"
fi
ok "second SIGINT after the rename: exit $rc, complete file, no false 'no profile written'"

# SIGKILL: nothing of ours stays attached.
"$BPFPROF" --format perf -p "$busy" -F 999 -o "$TMP/kill.data" 2> "$TMP/kill.err" & bp=$!
wait_for sampling $bp || fail "bpfprof never started sampling"
ids=$(our_prog_ids $bp)
[ "$(echo $ids | wc -w)" -ge 4 ] || fail "expected 4 programs of ours, found: '$ids'"
kill -KILL $bp; wait $bp 2>/dev/null
for _ in $(seq 100); do
	left=
	for id in $ids; do bpftool prog show id "$id" >/dev/null 2>&1 && left="$left $id"; done
	[ -z "$left" ] && break
	sleep 0.1	# the kernel frees programs after an RCU grace period
done
[ -z "$left" ] || fail "BPF programs still loaded 10 s after SIGKILL: $left"
[ -z "$(ls -l /proc/$busy/fd | grep perf_event)" ] || fail "the target holds a perf event"
[ ! -e "$TMP/kill.data" ] || fail "a file is at the output path after SIGKILL"
ok "SIGKILL: programs$(printf ' %s' $ids) unloaded; no file at the path (left: $(ls -A "$TMP" | grep '^\.kill' || echo nothing))"
rm -f "$TMP"/.kill.data.tmp.*

# SIGKILL in command mode: the orphaned command holds no BPF or perf fds.
"$BPFPROF" -F 999 -o "$TMP/cmd.prof" -- "$WL/spin" 20 2> "$TMP/cmd.err" & bp=$!
wait_for sampling $bp || fail "bpfprof -- spin never started sampling"
# The command execs once bpfprof has set up (with --call-graph auto, after
# the unwind tables of libc and ld.so are loaded): a moment after sampling.
spin_child() { child=$(pgrep -P "$1" -x spin); }
wait_for spin_child $bp || fail "no spin child of bpfprof"
CHILD_PIDS+=($child)
kill -KILL $bp; wait $bp 2>/dev/null
held=$(ls -l /proc/$child/fd 2>/dev/null | grep -E 'perf_event|anon_inode:.?bpf' || true)
[ -z "$held" ] || fail "the command child holds: $held"
[ ! -e "$TMP/cmd.prof" ] || fail "a file is at the output path after SIGKILL"
ok "SIGKILL with -- COMMAND: the child ($child) holds no BPF or perf fds"
