#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# unwind_cache.sh - the on-disk cache of unwind tables (issue 17's cost:
# python3.11's table alone takes ~20 ms to build through libdw):
#   a. a first run with --unwind-cache DIR builds the tables and stores one
#      file per build-id: nofp_qsort's and libc's are there;
#   b. a second run reads them from the cache (the summary counts them)
#      and walks the stacks as completely as the first (>= 95% reach
#      main through libc's qsort, no frame pointers anywhere);
#   c. a damaged file (one byte of its rows flipped) is refused: that
#      table is built again, the file replaced, the stacks still whole;
#   d. a file written by another builder (its builder id changed) is
#      refused the same way;
#   g. a program without a build-id (rustup's librustc_driver has none) is
#      kept by its identity (device, inode, size, mtime): a second run
#      reads its table from the cache, and after a touch it is built again
#      under a new name;
#   h. the function tables named in the profile and the summary are kept
#      in the same directory (symbols/sym_cache.h: "<build-id>.sym"): a
#      second run reads nofp_qsort's and libc's from there and builds
#      none, with the same names; a damaged one is built again and its
#      file replaced;
#   e. --no-unwind-cache reads and writes nothing;
#   f. a cache directory others may write to is refused: one line, exit
#      1, no profile written.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x "$WL/nofp_qsort" ] || fail "no $WL/nofp_qsort (make B=$BPFPROF_BUILD)"

CACHE=$TMP/cache
FULL='__libc_start_call_main;main;'

# run NAME [OPTIONS...]: profile nofp_qsort for 0.6 CPU s into NAME.folded
run() {
	local name=$1
	shift
	"$BPFPROF" -v -F 999 "$@" --format folded -o "$TMP/$name.folded" -- \
		"${PROG:-$WL/nofp_qsort}" -s 0.6 2> "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "bpfprof ($name) failed"; }
}

# cached NAME: the tables the run read from the cache
cached() {
	sed -n 's/.*; \([0-9]*\) tables from the on-disk cache, read in .*/\1/p' "$TMP/$1.err"
}

# complete NAME: fail unless >= 95% of nofp_qsort's samples reach main
complete() {
	local full sel
	read -r full sel < <(awk -v full="$FULL" '
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		  if (s !~ /^nofp_qsort;/) next
		  sel += n; if (index(s, full)) ok += n }
		END { print ok + 0, sel + 0 }' "$TMP/$1.folded")
	[ "$sel" -ge 300 ] || fail "$1: only $sel samples"
	[ $((full * 100)) -ge $((sel * 95)) ] || fail "$1: $full of $sel samples reach main"
	ok "$1: $full of $sel samples reach main"
}

libc=$(ldd "$WL/nofp_qsort" | awk '/libc.so/ { print $3 }')
prog_id=$(build_id "$WL/nofp_qsort")
libc_id=$(build_id "$(readlink -f "$libc")")
[ -n "$prog_id" ] && [ -n "$libc_id" ] || fail "no build-ids for nofp_qsort / libc"

# --- a. first run: built and stored -------------------------------------------
run first --unwind-cache "$CACHE"
grep 'unwind tables' "$TMP/first.err"
[ "$(cached first)" = 0 ] || fail "first run read $(cached first) tables from an empty cache"
for id in "$prog_id" "$libc_id"; do
	[ -s "$CACHE/$id.cfi" ] || fail "no $CACHE/$id.cfi after the first run"
done
[ "$(stat -c %a "$CACHE")" = 700 ] || fail "cache directory mode $(stat -c %a "$CACHE"), not 700"
ok "first run: $(ls "$CACHE" | grep -c "\.cfi$") tables stored, nofp_qsort's and libc's among them"
complete first

# --- b. second run: read from the cache -----------------------------------------
run second --unwind-cache "$CACHE"
grep 'unwind tables' "$TMP/second.err"
n=$(cached second)
[ "${n:-0}" -ge 2 ] || fail "second run read ${n:-0} tables from the cache"
ok "second run: $n tables from the cache"
complete second

# --- h. function tables ------------------------------------------------------------
# symtabs NAME: "READ BUILT" of the summary's function tables
symtabs() {
	sed -n 's/^bpfprof: symbol tables: \([0-9]*\) read from the cache, \([0-9]*\) built.*/\1 \2/p' \
		"$TMP/$1.err"
}
for id in "$prog_id" "$libc_id"; do
	[ -s "$CACHE/$id.sym" ] || fail "no $CACHE/$id.sym after the first run"
done
read -r sym_read sym_built <<< "$(symtabs second)"
[ "${sym_read:-0}" -ge 2 ] && [ "$sym_built" = 0 ] ||
	fail "second run: symbol tables '$(symtabs second)' (read, built), expected >= 2 and 0"
# names NAME PCT: the frames' names in >= PCT% of NAME's samples (sorted);
# lost NAME: those in 10% of the first run's samples that NAME has in
# fewer than 2% (sampling moves a name by a few percent, a wrong table
# by all)
names() {
	awk -v pct="$2" '{ n = $NF; total += n; split($1, a, ";"); delete seen
	       for (i in a) if (!seen[a[i]]++) c[a[i]] += n }
	     END { for (k in c) if (c[k] * 100 >= total * pct) print k }' "$TMP/$1.folded" | sort
}
lost() { comm -23 <(names first 10) <(names "$1" 2) | tr '\n' ' '; }
names first 10
[ -z "$(lost second)" ] || fail "names lost with the cached tables: $(lost second)"
ok "second run: $sym_read function tables from the cache, none built, the same names"
f=$CACHE/$prog_id.sym
size=$(stat -c %s "$f")
printf '\x01' | dd of="$f" bs=1 seek=$((size - 2)) conv=notrunc status=none
before=$(md5sum < "$f")
run symdamaged --unwind-cache "$CACHE"
[ "$(md5sum < "$f")" != "$before" ] || fail "the damaged function table was not replaced"
[ -z "$(lost symdamaged)" ] || fail "names lost after a damaged function table: $(lost symdamaged)"
ok "a damaged function table is built again and its file replaced"

# --- c. a damaged table is refused and rebuilt ----------------------------------
f=$CACHE/$prog_id.cfi
size=$(stat -c %s "$f")
printf '\xff' | dd of="$f" bs=1 seek=$((size - 20)) conv=notrunc status=none
before=$(md5sum < "$f")
run damaged --unwind-cache "$CACHE"
[ "$(cached damaged)" -eq $((n - 1)) ] ||
	fail "damaged file: $(cached damaged) tables from the cache, expected $((n - 1))"
[ "$(md5sum < "$f")" != "$before" ] || fail "the damaged file was not replaced"
ok "a damaged table is built again and its file replaced"
complete damaged

# --- d. another builder's table is refused ---------------------------------------
printf '\x01' | dd of="$f" bs=1 seek=8 conv=notrunc status=none
run other --unwind-cache "$CACHE"
[ "$(cached other)" -eq $((n - 1)) ] ||
	fail "other builder: $(cached other) tables from the cache, expected $((n - 1))"
ok "another builder's table is built again"

# --- g. a file without a build-id: kept by its identity ---------------------------
mkdir -p "$TMP/nobid"
objcopy --remove-section .note.gnu.build-id "$WL/nofp_qsort" "$TMP/nobid/nofp_qsort"
[ -z "$(build_id "$TMP/nobid/nofp_qsort")" ] || fail "objcopy left a build-id"
# "bpfpstat" in hex: cfi_cache_file_id()'s prefix
stat_ids() { ls "$CACHE" | grep -c '^6270667073746174[0-9a-f]*\.cfi$'; }
PROG=$TMP/nobid/nofp_qsort run nobid1 --unwind-cache "$CACHE"
[ "$(stat_ids)" = 1 ] || fail "no table stored by file identity: $(ls "$CACHE")"
complete nobid1
PROG=$TMP/nobid/nofp_qsort run nobid2 --unwind-cache "$CACHE"
[ "$(cached nobid2)" -eq $(($(cached nobid1) + 1)) ] ||
	fail "no build-id: $(cached nobid2) tables from the cache, the run before $(cached nobid1)"
complete nobid2
touch "$TMP/nobid/nofp_qsort"
PROG=$TMP/nobid/nofp_qsort run nobid3 --unwind-cache "$CACHE"
[ "$(cached nobid3)" -eq "$(cached nobid1)" ] ||
	fail "a touched file: $(cached nobid3) tables from the cache, expected $(cached nobid1)"
[ "$(stat_ids)" = 2 ] || fail "the touched file's table was not stored under a new name"
ok "a program without a build-id: its table read back by file identity, and built again after a touch"

# --- e. --no-unwind-cache ------------------------------------------------------------
rm -rf "$TMP/none"
HOME=$TMP/none XDG_CACHE_HOME= run nocache --no-unwind-cache
[ ! -e "$TMP/none" ] || fail "--no-unwind-cache created $TMP/none"
[ "$(cached nocache)" = 0 ] || fail "--no-unwind-cache read tables"
ok "--no-unwind-cache: nothing read or written"
# ... and without it, the default directory is under $HOME
HOME=$TMP/home XDG_CACHE_HOME= run home
[ -s "$TMP/home/.cache/bpfprof/cfi/$prog_id.cfi" ] || fail "no table under \$HOME/.cache/bpfprof/cfi"
ok "default cache: \$HOME/.cache/bpfprof/cfi"

# --- f. a directory others may write to ---------------------------------------------
chmod 777 "$CACHE"
rm -f "$TMP/open.folded"
if "$BPFPROF" -F 999 --unwind-cache "$CACHE" --format folded -o "$TMP/open.folded" -- \
	"$WL/nofp_qsort" -s 0.1 2> "$TMP/open.err"; then
	fail "a world-writable --unwind-cache was accepted"
fi
cat "$TMP/open.err"
grep -q 'writable by others' "$TMP/open.err" || fail "no reason given for the refused cache"
[ ! -e "$TMP/open.folded" ] || fail "a profile was written with a refused cache"
ok "a world-writable cache directory is refused, no profile written"
