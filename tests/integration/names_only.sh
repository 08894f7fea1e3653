#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# BPFPROF_PLUGIN_NAMES_ONLY: a plugin that declares it reads only names
# gets no source files from host->symbolize() (the host skips DWARF line
# tables, the costliest part of symbolizing libc's compressed debug info),
# and still the function names.  The dump fixture plugin profiles
# the shares workload (built with -g) twice at once: without the flag most
# user frames (of distinct stacks) come with a file, with it none do.
# folded and flamegraph declare the flag.
. "$(dirname "$0")/../lib/common.sh"
need_root
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/dump.so" || fail "cannot build the dump plugin"

"$WL/shares" --wait -s 3 > "$TMP/wl.out" 2> "$TMP/wl.err" & CHILD_PIDS+=($!)
pid=$(python3 "$BPFPROF_SRC/tests/lib/procwait.py" ready "$TMP/wl.out" 20) || fail "shares never got ready"
kill -USR1 "$pid"
BPFPROF_TEST_DUMP_LINES=1 "$BPFPROF" -p "$pid" -F 499 -d 2 --plugin "$TMP/dump.so" \
	-o "$TMP/lines.txt" 2> "$TMP/lines.err" & a=$!
BPFPROF_TEST_DUMP_NAMES_ONLY=1 "$BPFPROF" -p "$pid" -F 499 -d 2 --plugin "$TMP/dump.so" \
	-o "$TMP/names.txt" 2> "$TMP/names.err" & b=$!
wait $a || { cat "$TMP/lines.err"; fail "bpfprof (lines) failed"; }
wait $b || { cat "$TMP/names.err"; fail "bpfprof (names only) failed"; }

read -r _ with _ frames < <(grep '^lines' "$TMP/lines.txt")
[ "${frames:-0}" -ge 10 ] || fail "too few user frames: ${frames:-none}"
[ $((with * 2)) -gt "$frames" ] || fail "without the flag only $with of $frames user frames have a file"
ok "without the flag: $with of $frames user frames have a source file"
read -r _ with _ frames < <(grep '^lines' "$TMP/names.txt")
[ "${frames:-0}" -ge 10 ] || fail "too few user frames: ${frames:-none}"
expect_eq "user frames with a source file under NAMES_ONLY" "$with" 0

# names still resolve: the workload's hot leaves, by name
leaves() { awk -F'\t' '$1 == "count" { split($6, u, ";"); print u[1] }' "$1" | sort -u; }
for f in leaf_a leaf_b leaf_c; do
	leaves "$TMP/names.txt" | grep -qx "$f" ||
		fail "$f not named under NAMES_ONLY: $(leaves "$TMP/names.txt" | tr '\n' ' ')"
done
ok "leaf_a, leaf_b, leaf_c named under NAMES_ONLY"
