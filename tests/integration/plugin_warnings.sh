#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Plugin warnings are throttled per kind: a per-process plugin that warns
# for each of 6 processes (tests/fixtures/plugins/warns.c, same format
# string every time) prints 3 warnings and then one line "3 more like the
# above", while each process still gets its output file.  (--all on a busy
# machine otherwise prints one gperftools warning per kernel thread.)
. "$(dirname "$0")/../lib/common.sh"
need_root
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/warns.c" \
	-o "$TMP/warns.so" || fail "cannot build the warns plugin"

pids=()
for i in 1 2 3 4 5 6; do
	"$WL/spin" 8 & CHILD_PIDS+=($!); pids+=($!)
done
list=$(IFS=,; echo "${pids[*]}")
"$BPFPROF" --plugin "$TMP/warns.so" -p "$list" -F 199 -d 2 -o "$TMP/w.txt" 2> "$TMP/err" ||
	{ cat "$TMP/err"; fail "bpfprof with the warns plugin failed"; }
cat "$TMP/err"
for p in "${pids[@]}"; do
	grep -q "^pid $p samples [1-9]" "$TMP/w.txt.$p" || fail "no output for process $p"
done
ok "6 per-process outputs written"
expect_eq "warnings printed" "$(grep -c '^bpfprof: warning: testwarn: process [0-9]* looked at$' "$TMP/err")" 3
expect_eq "summary of the rest" "$(grep -c '^bpfprof: warning: testwarn: 3 more like the above$' "$TMP/err")" 1
