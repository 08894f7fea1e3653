#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# output_pattern.sh - the patterns of `-o PATH` (user/cli/output_pattern.c)
# on real runs: -o DIR/prof.%h.%p.pb.gz writes DIR/prof.HOST.PID.pb.gz
# with this host's name and the pid of the bpfprof process (not of its
# target); two runs at once into one shared directory write two files
# there; %% is a '%'; an unknown %x is refused (exit 2, one line naming
# it, nothing written).
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x "$WL/spin" ] || fail "no workload $WL/spin"
D=$TMP/shared
mkdir "$D"
host=$(uname -n)

# Two collectors at once, each running its own `spin`: one file each.
"$BPFPROF" -q -F 199 --format pprof -o "$D/prof.%h.%p.pb.gz" -- "$WL/spin" 0.5 2>"$TMP/a.err" &
a=$!; CHILD_PIDS+=($a)
"$BPFPROF" -q -F 199 --format pprof -o "$D/prof.%h.%p.pb.gz" -- "$WL/spin" 0.5 2>"$TMP/b.err" &
b=$!; CHILD_PIDS+=($b)
wait "$a" || fail "first bpfprof failed: $(cat "$TMP/a.err")"
wait "$b" || fail "second bpfprof failed: $(cat "$TMP/b.err")"
for p in "$a" "$b"; do
	f=$D/prof.$host.$p.pb.gz
	[ -s "$f" ] || fail "no $f; the directory has: $(ls "$D")"
	[ "$(head -c 2 "$f" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "$f is not gzip"
	ok "-o $D/prof.%h.%p.pb.gz wrote prof.$host.$p.pb.gz"
done
expect_eq "files in the shared directory" "$(ls "$D" | wc -l)" 2

# %% and a pattern in a directory part of the path.
mkdir "$D/node-$host"
"$BPFPROF" -q -F 199 --format folded -o "$D/node-%h/100%%.folded" -- "$WL/spin" 0.2 \
	2>"$TMP/c.err" || fail "bpfprof -o ...%%... failed: $(cat "$TMP/c.err")"
[ -s "$D/node-$host/100%.folded" ] || fail "no $D/node-$host/100%.folded: $(ls -R "$D")"
ok "-o $D/node-%h/100%%.folded wrote node-$host/100%.folded"

# Unknown patterns: exit 2, the first line names it, no file.
for bad in 'prof.%x.pb.gz' 'prof.%' 'prof.%H'; do
	out=$("$BPFPROF" -F 199 --format pprof -o "$D/$bad" -- "$WL/spin" 0.1 2>&1); rc=$?
	[ $rc -eq 2 ] || fail "-o $bad: exit $rc, expected 2 ($out)"
	c=${bad#*%}; c=${c:0:1}
	want="unknown '%$c'"
	[ -n "$c" ] || want="a '%' at its end"
	echo "$out" | head -n 1 | grep -q "invalid -o '$D/$bad': $want" ||
		fail "-o $bad: first line '$(echo "$out" | head -n 1)'"
	expect_eq "files after -o $bad" "$(ls "$D" | wc -l)" 3
done
