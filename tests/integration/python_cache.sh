#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The facts bpfprof learns from an interpreter file (user/interp/py_cache.h:
# version, _PyRuntime, PyCode_Type, the evaluator and its .cold part from
# the -dbg file, the load segments) are kept in the unwind cache's
# directory by build-id, as the unwind and function tables are: pyburn
# (tests/workloads/pyburn.py, 1,000 rounds) under Debian's python3.11 with
# --unwind-cache DIR:
#   a. the first run inspects python3.11 and stores DIR/<build-id>.py;
#   b. the second reads it (-v: "1 files' facts from the cache") and gets
#      the same Python stacks: pyburn's functions in >= 85% of the
#      samples, the .cold part found;
#   c. a damaged file (a byte of its segments changed) is refused: the
#      file is inspected again and the facts' file replaced, the stacks
#      as whole;
#   d. one written by another builder (its builder id changed) likewise.
. "$(dirname "$0")/../lib/common.sh"
need_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (apt-get install python3.11)"
PYBURN=$BPFPROF_SRC/tests/workloads/pyburn.py
export PYBURN_ROUNDS=1000
CACHE=$TMP/cache
id=$(build_id "$PY")
[ -n "$id" ] || fail "$PY has no build-id"
FACTS=$CACHE/$id.py

# run NAME: profile pyburn into NAME.folded, -v summary in NAME.err
run() {
	"$BPFPROF" -v -F 999 --unwind-cache "$CACHE" --format folded -o "$TMP/$1.folded" -- \
		"$PY" "$PYBURN" 2> "$TMP/$1.err" > /dev/null ||
		{ cat "$TMP/$1.err"; fail "bpfprof ($1) failed"; }
}
# cached NAME: the files whose facts NAME read from the cache
cached() { sed -n "s/.*, \([0-9]*\) files' facts from the cache;.*/\1/p" "$TMP/$1.err"; }
# python_share NAME: percent of NAME's samples with a pyburn_ frame
python_share() {
	awk '{ n = $NF; total += n; if ($0 ~ /pyburn_/) py += n }
	     END { printf "%d\n", total ? 100 * py / total : 0 }' "$TMP/$1.folded"
}
# whole NAME: pyburn's functions in >= 85% of the samples, the .cold part found
whole() {
	local pct
	pct=$(python_share "$1")
	[ "$pct" -ge 85 ] || fail "$1: pyburn's functions in $pct% of the samples (at least 85%)"
	if [ -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
		grep -q "interpreter files: 1, 1 with the evaluator's .cold part" "$TMP/$1.err" ||
			fail "$1: the evaluator's .cold part not found"
	fi
	ok "$1: pyburn's functions in $pct% of the samples"
}

# --- a. the first run stores the facts -------------------------------------------
run first
[ "$(cached first)" = 0 ] || fail "first run: '$(cached first)' files' facts from an empty cache"
[ -s "$FACTS" ] || fail "no $FACTS after the first run: $(ls "$CACHE")"
whole first
ok "first run: python3.11's facts stored in $FACTS"

# --- b. the second reads them --------------------------------------------------------
run second
[ "$(cached second)" = 1 ] || fail "second run: '$(cached second)' files' facts from the cache, expected 1"
whole second
ok "second run: python3.11's facts from the cache"

# --- c. a damaged file is refused and replaced ------------------------------------
size=$(stat -c %s "$FACTS")
printf '\x5a' | dd of="$FACTS" bs=1 seek=$((size - 3)) conv=notrunc status=none
before=$(md5sum < "$FACTS")
run damaged
[ "$(cached damaged)" = 0 ] || fail "damaged file: '$(cached damaged)' files' facts from the cache, expected 0"
[ "$(md5sum < "$FACTS")" != "$before" ] || fail "the damaged facts' file was not replaced"
whole damaged
ok "a damaged facts' file is refused, python3.11 inspected again"

# --- d. another builder's file is refused ------------------------------------------
printf '\x01' | dd of="$FACTS" bs=1 seek=8 conv=notrunc status=none
run other
[ "$(cached other)" = 0 ] || fail "other builder: '$(cached other)' files' facts from the cache, expected 0"
whole other
run again
[ "$(cached again)" = 1 ] || fail "after the other builder's file: '$(cached again)' from the cache, expected 1"
ok "another builder's facts are refused and replaced"
