#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Command mode: `bpfprof -o out.prof -- COMMAND ARGS` profiles the whole run
# of COMMAND and of the children it forks (one gperftools file each; samples
# match the CPU time the command and its children used), and exits with the
# command's status: 0, 3, and 128+N when a signal N killed it (the profile
# is still written).  A command that cannot be executed (missing, not
# executable) makes bpfprof exit 127 with a one-line error and no file.
. "$(dirname "$0")/../lib/common.sh"
need_root

# 1. The whole run: a parent that forks 5 children (50 ms of CPU each), then
# spends 300 ms in parent_work.
# 4. The command is sampled from its exec on, as perf record's is
# (enable_on_exec): no sample of bpfprof's own code in its forked child
# before the exec (run_child(), execvp(): 1-2 a run of python3 -c pass
# before, BPFPROF_TARGET_AT_EXEC in bpf/bpfprof.h).
mkdir "$TMP/run"
"$BPFPROF" -F 999 -o "$TMP/run/out.prof" -- "$WL/forker" -n 5 -c 50 -p 300 2> "$TMP/run.err"
rc=$?
cat "$TMP/run.err"
expect_eq "exit status of a command that exits 0" "$rc" 0
nfiles=$(ls "$TMP/run" | grep -c '^out\.prof\.[0-9]*$')
expect_eq "files out.prof.<pid> (parent and 5 children)" "$nfiles" 6
for kid in $(sed -n 's/^forker: child //p' "$TMP/run.err"); do
	[ -s "$TMP/run/out.prof.$kid" ] || fail "no profile for child $kid"
done
parent=$(comm -23 <(ls "$TMP/run" | sed 's/^out\.prof\.//' | sort) \
	<(sed -n 's/^forker: child //p' "$TMP/run.err" | sort))
[ -s "$TMP/run/out.prof.$parent" ] || fail "no profile for the parent ($parent)"
PYTHONPATH=$BPFPROF_SRC/tests/lib python3 - "$WL/forker" "$TMP/run/out.prof" "$parent" "$TMP/run.err" <<'EOF' || fail "whole-run checks"
import re, sys
import pprof_shares

binary, prefix, parent, err = sys.argv[1], sys.argv[2], sys.argv[3], open(sys.argv[4]).read()
bad = 0
def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok

rep = pprof_shares.perl_report(binary, "%s.%s" % (prefix, parent))
share = rep.flat_share("parent_work")
check(share >= 0.80, "parent's file: parent_work %.1f%% of %d samples (>= 80%%)" % (100 * share, rep.total))
m = re.search(r"child_cpu_seconds=([\d.]+) self_cpu_seconds=([\d.]+)", err)
s = re.search(r"^bpfprof: (\d+) samples \((\d+) seen\) from (\d+) process", err, re.M)
check(m and s, "forker and bpfprof summaries present")
if m and s:
    cpu = float(m.group(1)) + float(m.group(2))
    n = int(s.group(1))
    check(abs(n - cpu * 999) <= 0.2 * cpu * 999, "%d samples for %.3f CPU s of the command and its "
          "children at 999 Hz = %.0f (+-20%%)" % (n, cpu, cpu * 999))
    check(int(s.group(3)) == 6, "summary: %s processes" % s.group(3))
sys.exit(1 if bad else 0)
EOF
ok "whole run of the command and its children profiled"

# 2. Exit statuses are passed on; the profile is written in every case.
status_of() {	# expected-status forker-args...
	local want=$1 rc; shift
	rm -rf "$TMP/st"; mkdir "$TMP/st"
	"$BPFPROF" -F 499 -o "$TMP/st/out.prof" -- "$WL/forker" -n 2 -c 20 "$@" 2> "$TMP/st.err"
	rc=$?
	[ "$rc" -eq "$want" ] || { cat "$TMP/st.err"; fail "forker $*: bpfprof exited $rc, expected $want"; }
	[ "$(ls "$TMP/st" | grep -c '^out\.prof\.[0-9]*$')" -eq 3 ] ||
		fail "forker $*: expected 3 profiles, got: $(ls "$TMP/st")"
	grep -q '^bpfprof: wrote ' "$TMP/st.err" || fail "forker $*: no 'wrote' in the summary"
	ok "forker $*: exit $rc, 3 profiles written"
}
status_of 3 --exit 3
status_of 143 --signal 15
status_of 137 --signal 9

# 3. Commands that cannot be executed.
printf '#!/bin/sh\nexit 0\n' > "$TMP/notexec"; chmod 644 "$TMP/notexec"
for cmd in "$TMP/does-not-exist" "$TMP/notexec" no-such-command-bpfprof-test; do
	rm -rf "$TMP/none"; mkdir "$TMP/none"
	out=$("$BPFPROF" -o "$TMP/none/out.prof" -- "$cmd" arg 2>&1); rc=$?
	expect_eq "exit status for '$cmd'" "$rc" 127
	[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "'$cmd': expected a one-line error, got: $out"
	echo "$out" | grep -q "$(basename "$cmd")" || fail "'$cmd': the error does not name the command: $out"
	[ -z "$(ls -A "$TMP/none")" ] || fail "'$cmd': files left behind: $(ls -A "$TMP/none")"
	ok "'$cmd': 127, one line, no file: $out"
done

# 4. Sampled from the exec on.
pre=0 all=0
for i in 1 2 3 4 5 6; do
	"$BPFPROF" -F 999 --format folded -o "$TMP/exec$i.folded" -- /usr/bin/python3 -c pass \
		2> "$TMP/exec$i.err" || { cat "$TMP/exec$i.err"; fail "bpfprof -- python3 -c pass failed"; }
	pre=$((pre + $(grep -c 'run_child\|command_start\|execvp' "$TMP/exec$i.folded")))
	all=$((all + $(awk '{ s += $NF } END { print s + 0 }' "$TMP/exec$i.folded")))
done
[ "$all" -ge 20 ] || fail "only $all samples of six runs of python3 -c pass"
expect_eq "stacks of bpfprof's child before the exec, in $all samples of six runs" "$pre" 0
