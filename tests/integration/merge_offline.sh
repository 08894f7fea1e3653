#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# merge_offline.sh - a measurement symbolized where its binaries are no
# longer at their recorded paths (issue 16, "offline symbolization"):
# a copy of the shares workload (leaf_a/leaf_b/leaf_c, with DWARF) runs
# from DIR/rec and is recorded with --format raw; merged while the binary
# is in place, into folded (with lines: --format pprof too) = the
# reference.  Then the binary moves, and merges must give exactly the
# reference output (every line, every count) through:
#   - --debug-dir D with the file at D/.build-id/XX/REST;
#   - --debug-dir D with the file at D/BASENAME;
#   - --sysroot S with the file at S/RECORDED-PATH (and its libraries
#     at theirs: a sysroot stands for the whole recording machine).
# Without either, the workload's functions are not named; and a different
# binary at the recorded path (another build-id) is never used: no names,
# rather than the other file's.  A --debug-dir that is not a directory is
# a one-line error, and nothing is written.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v readelf >/dev/null || fail "readelf not installed (binutils)"

mkdir -p "$TMP/rec"
BIN=$TMP/rec/shares_moved
cp "$WL/shares" "$BIN"
bid=$(readelf -n "$BIN" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || fail "the shares workload has no build-id"
"$BPFPROF" -q --format raw -F 499 -o "$TMP/m.raw" -- "$BIN" -t 2 -s 1.5 \
	> /dev/null 2> "$TMP/raw.err" || fail "bpfprof --format raw failed: $(cat "$TMP/raw.err")"

# merge_to NAME ARGS...: folded and pprof (its locations: names, files, lines, as
# written: -symbolize=none, or go tool pprof would name them from the file
# at the mapping's path itself) of m.raw.
merge_to() {
	local name=$1
	shift
	"$BPFPROF" merge -q "$@" -o "$TMP/$name.folded" --format folded "$TMP/m.raw" \
		2> "$TMP/$name.err" || fail "merge ($name) failed: $(cat "$TMP/$name.err")"
	"$BPFPROF" merge -q "$@" -o "$TMP/$name.pb.gz" --format pprof "$TMP/m.raw" \
		2> "$TMP/$name.err" || fail "merge ($name, pprof) failed: $(cat "$TMP/$name.err")"
	go tool pprof -raw -symbolize=none "$TMP/$name.pb.gz" 2> /dev/null |
		sed -n '/^Locations/,$p' | sort > "$TMP/$name.locations"
	sort "$TMP/$name.folded" > "$TMP/$name.sorted"
}
# leaves FOLDED: samples per workload leaf, "leaf_a=N leaf_b=N leaf_c=N".
leaves() {
	awk '{ n = split($1, f, ";"); c[f[n]] += $2 }
	     END { printf "leaf_a=%d leaf_b=%d leaf_c=%d", c["leaf_a"], c["leaf_b"], c["leaf_c"] }' "$1"
}
# same_as_reference NAME
same_as_reference() {
	cmp -s "$TMP/ref.sorted" "$TMP/$1.sorted" ||
		fail "$1: folded differs from the reference: $(diff "$TMP/ref.sorted" "$TMP/$1.sorted" | head -4)"
	cmp -s "$TMP/ref.locations" "$TMP/$1.locations" ||
		fail "$1: pprof locations differ: $(diff "$TMP/ref.locations" "$TMP/$1.locations" | head -4)"
	ok "$1: the same $(wc -l < "$TMP/$1.sorted") folded lines and $(grep -c 'shares.c:' "$TMP/$1.locations") shares.c lines as the reference"
}

merge_to ref
ref_leaves=$(leaves "$TMP/ref.folded")
grep -q "leaf_a" "$TMP/ref.folded" && grep -q "shares.c:" "$TMP/ref.locations" ||
	fail "reference (binary in place): no leaf_a or no shares.c lines"
ok "reference, binary in place: $ref_leaves"

# Moved away: not at the recorded path any more.
mkdir -p "$TMP/dbg/.build-id/${bid:0:2}" "$TMP/flat" "$TMP/sysroot$TMP/rec"
mv "$BIN" "$TMP/dbg/.build-id/${bid:0:2}/${bid:2}"
merge_to gone
[ "$(leaves "$TMP/gone.folded")" = "leaf_a=0 leaf_b=0 leaf_c=0" ] ||
	fail "binary gone, no --debug-dir: still named? $(leaves "$TMP/gone.folded")"
ok "binary gone, no --debug-dir: its functions are not named"

merge_to buildid --debug-dir "$TMP/dbg"
same_as_reference buildid
cp "$TMP/dbg/.build-id/${bid:0:2}/${bid:2}" "$TMP/flat/shares_moved"
merge_to basename --debug-dir "$TMP/flat"
same_as_reference basename
cp "$TMP/flat/shares_moved" "$TMP/sysroot$BIN"
# A sysroot holds every file of the recording machine: its libraries too,
# and bpfprof's own, which the command's child runs until its exec (a
# sample taken then is named after that image, pre_exec.sh).
for lib in "$BPFPROF" $(ldd "$WL/shares" "$BPFPROF" |
	awk 'NF > 1 && $(NF-1) ~ /^\// { print $(NF-1) } $1 ~ /^\/.*[^:]$/ { print $1 }'); do
	real=$(readlink -f "$lib")
	mkdir -p "$TMP/sysroot$(dirname "$real")"
	cp "$real" "$TMP/sysroot$real"
done
merge_to sysroot --sysroot "$TMP/sysroot"
same_as_reference sysroot

# Another binary at the recorded path: its build-id is not the recorded one.
cp "$WL/threads" "$BIN"
merge_to other
[ "$(leaves "$TMP/other.folded")" = "leaf_a=0 leaf_b=0 leaf_c=0" ] ||
	fail "another file at the recorded path was used: $(leaves "$TMP/other.folded")"
grep -q "threads.c:" "$TMP/other.locations" &&
	fail "another file at the recorded path gave its names (threads.c lines)"
ok "another binary at the recorded path: not used (no names rather than its names)"
merge_to other_dbg --debug-dir "$TMP/dbg"
same_as_reference other_dbg

# A --debug-dir that is not a directory.
rm -f "$TMP/bad.folded"
"$BPFPROF" merge -o "$TMP/bad.folded" --format folded --debug-dir "$TMP/nowhere" "$TMP/m.raw" \
	2> "$TMP/bad.err" && fail "merge accepted a --debug-dir that does not exist"
[ "$(wc -l < "$TMP/bad.err")" -eq 1 ] && grep -q "debug-dir.*nowhere" "$TMP/bad.err" ||
	fail "not a one-line error naming the directory: $(cat "$TMP/bad.err")"
[ ! -e "$TMP/bad.folded" ] || fail "output written despite the error"
ok "bad --debug-dir: $(cat "$TMP/bad.err")"
