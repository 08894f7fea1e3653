#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# hpctoolkit_system.sh - a system-wide run written as an HPCToolkit database,
#   bpfprof --all -F 499 -d 3 --format hpctoolkit -o DIR
# while syscalls (half its time in the kernel) and anon_exec (a loop in
# anonymous executable memory, as JIT code) run.  What hpcviewer shows of it
# (issue 16, "What hpcviewer shows today"), checked on the database bytes by
# tests/tools/hpcdb.c:
#  - `hpcdb --strict` accepts it: no load module with an empty path, no
#    module whose exclusive time exceeds its inclusive time in hpcviewer's
#    flat view, identifier tuples unique and consistent;
#  - [kernel.kallsyms] has exclusive == inclusive (> 0) in the flat view
#    (kernel frames used to count twice there);
#  - anon_exec's anonymous code is the module "[anon]", with samples;
#  - the tuples carry the pid and the tids as physical ids: each thread of
#    the two workloads has a profile "NODE 0 (0xHOSTID) RANK r (PID) THREAD t
#    (TID)" (several processes: RANK present), as the description says.
. "$(dirname "$0")/../lib/common.sh"
need_root

HPCDB=$BPFPROF_BUILD/tools/hpcdb
[ -x "$HPCDB" ] || fail "$HPCDB not built"
for w in syscalls anon_exec; do [ -x "$WL/$w" ] || fail "$WL/$w not built"; done

setsid nice -n -10 "$WL/syscalls" -k 50 -s 8 --wait >"$TMP/sy.out" 2>"$TMP/sy.err" &
SY=$!
CHILD_PIDS+=("$SY")
setsid nice -n -10 "$WL/anon_exec" -s 8 --wait >"$TMP/an.out" 2>"$TMP/an.err" &
AN=$!
CHILD_PIDS+=("$AN")
for _ in $(seq 200); do
	grep -q '^ready' "$TMP/sy.out" && { grep -q '^ready' "$TMP/an.out" || ! kill -0 "$AN" 2>/dev/null; } && break
	sleep 0.1
done
grep -q '^ready' "$TMP/sy.out" || fail "syscalls did not get ready"
anon=1
if ! grep -q '^ready' "$TMP/an.out"; then
	wait "$AN"; rc=$?
	[ $rc -eq 77 ] || fail "anon_exec did not get ready (exit $rc): $(cat "$TMP/an.err")"
	anon=0
	echo "anon_exec: $(cat "$TMP/an.err") (no [anon] check)"
fi
kill -USR1 "$SY" 2>/dev/null
[ $anon = 1 ] && kill -USR1 "$AN"

"$BPFPROF" --all -F 499 -d 3 --format hpctoolkit -o "$TMP/db" >"$TMP/bpfprof.out" 2>&1 ||
	fail "bpfprof --all failed: $(tail -5 "$TMP/bpfprof.out")"
kill -0 "$SY" || fail "syscalls ended before the profile"

"$HPCDB" --strict --threads --modules --description --top 5 "$TMP/db" >"$TMP/hpcdb.out" 2>&1 ||
	fail "hpcdb --strict: $(tail -3 "$TMP/hpcdb.out")"
ok "hpcdb --strict accepts the system-wide database (no empty module path, flat view consistent, tuples unique)"
grep '^module' "$TMP/hpcdb.out" | head -20

# the kernel in the flat view: exclusive == inclusive
read -r kex kin < <(awk '$1 == "module" && $4 == "[kernel.kallsyms]" { print $2, $3 }' "$TMP/hpcdb.out")
[ -n "${kin:-}" ] || fail "no [kernel.kallsyms] module with time"
awk -v e="$kex" -v i="$kin" 'BEGIN { d = e - i; if (d < 0) d = -d; exit !(i > 0 && d <= 1e-6 * i) }' ||
	fail "[kernel.kallsyms]: exclusive $kex, inclusive $kin in the flat view"
ok "[kernel.kallsyms]: exclusive $kex s = inclusive $kin s in hpcviewer's flat view"

if [ $anon = 1 ]; then
	aex=$(awk '$1 == "module" && $4 == "[anon]" { print $2 }' "$TMP/hpcdb.out")
	[ -n "$aex" ] || fail "no [anon] module (anon_exec ran $(cat "$TMP/an.err"))"
	awk -v e="$aex" 'BEGIN { exit !(e > 0) }' || fail "[anon]: exclusive $aex"
	ok "anonymous code in the module [anon]: $aex s exclusive"
fi

# pids and tids in the tuples, as the description lists them
hostid=$(printf '0x%x' "$(( $(printf '%d' "0x$(hostid)") ))")
for pid in "$SY" $([ $anon = 1 ] && echo "$AN"); do
	n=0
	for task in /proc/"$pid"/task/*; do
		tid=${task##*/}
		line=$(grep -E "^profile [0-9]+ \[NODE 0 \($hostid\) RANK [0-9]+ \($pid\) THREAD [0-9]+ \($tid\)\]" \
			"$TMP/hpcdb.out") || fail "no profile with pid $pid, tid $tid in its tuple"
		awk -F'|' -v p="$pid" -v t="$tid" '$4 + 0 == p && $5 + 0 == t { f = 1 } END { exit !f }' \
			"$TMP/hpcdb.out" || fail "the description does not list pid $pid tid $tid"
		echo "${line%%:*}"
		n=$((n + 1))
	done
	ok "pid $pid: $n thread(s), pid and tid in the tuples' physical ids"
done
