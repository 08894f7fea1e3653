#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The image of Python functions (OUTPUT.python.so, plugins/common/
# interp_image.c) is a companion file of the gperftools and perf outputs:
# the host publishes it with its output or neither (plugin.h's
# host->companion()).  pyburn (tests/workloads/pyburn.py, 200 rounds)
# under Debian's python3.11, run by sh, which afterwards puts a directory
# where one of the files has to go, so the rename into place fails after
# write() succeeded:
#   - perf.data: a directory at OUTPUT (the image could be renamed) or at
#     OUTPUT.python.so (the output could): exit non-zero, and nothing but
#     that directory is left (no output, no image, no temporary);
#   - gperftools, one file per process (sh, python, mkdir): a directory at
#     the Python process's OUTPUT.<pid> or OUTPUT.<pid>.python.so: none of
#     the processes' outputs nor the image is left either;
#   - without the directory both formats leave OUTPUT and its image, and
#     google-pprof and perf report name pyburn's functions from it.
. "$(dirname "$0")/../lib/common.sh"
need_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (apt-get install python3.11)"
command -v perf >/dev/null || fail "perf not installed (linux-perf)"
command -v google-pprof >/dev/null || fail "google-pprof not installed (google-perftools)"
PYBURN=$BPFPROF_SRC/tests/workloads/pyburn.py
export PYBURN_ROUNDS=200

# only_left DIR NAME: DIR holds exactly NAME (hidden files included).
only_left() {
	local left
	left=$(ls -A "$1" | tr '\n' ' ')
	[ "$left" = "$2 " ] || fail "left in $1: $left(expected only $2)"
}

# blocked FORMAT DIR BLOCK: profile pyburn into DIR/out, then the command
# makes the directory DIR/$BLOCK ($p is the Python process); must fail.
blocked() {
	local fmt=$1 dir=$2 block=$3 rc
	mkdir "$dir"
	"$BPFPROF" --format "$fmt" -F 999 -o "$dir/out" -- sh -c \
		"$PY $PYBURN 0 > /dev/null & p=\$!; echo \$p > $dir.pid; wait \$p; mkdir \"$dir/$block\"" \
		> "$dir.err" 2>&1; rc=$?
	[ $rc -ne 0 ] || fail "$fmt with a directory at $block: exit 0 ($(cat "$dir.err"))"
	grep -q "Is a directory" "$dir.err" || fail "$fmt: no message: $(cat "$dir.err")"
	only_left "$dir" "${block//\$p/$(cat "$dir.pid")}"
	ok "$fmt, directory at $block: exit $rc, nothing written ($(grep -m1 'cannot write' "$dir.err"))"
}

blocked perf "$TMP/p1" 'out'
blocked perf "$TMP/p2" 'out.python.so'
blocked gperftools "$TMP/g1" 'out.$p'
blocked gperftools "$TMP/g2" 'out.$p.python.so'

# Published: both files, and the readers name the Python functions.
"$BPFPROF" --format perf -F 999 -o "$TMP/ok.data" -- "$PY" "$PYBURN" 0 > /dev/null 2> "$TMP/ok.err" ||
	fail "perf run failed: $(cat "$TMP/ok.err")"
[ -s "$TMP/ok.data.python.so" ] || fail "no image beside perf.data: $(ls -A "$TMP")"
n=$(perf report -i "$TMP/ok.data" --stdio --no-children --sort sym 2>/dev/null | grep -c 'pyburn_inner_[ab]')
[ "$n" -ge 1 ] || fail "perf report names no pyburn_inner_a/b"
"$BPFPROF" -F 999 -o "$TMP/ok.prof" -- "$PY" "$PYBURN" 0 > /dev/null 2> "$TMP/okg.err" ||
	fail "gperftools run failed: $(cat "$TMP/okg.err")"
[ -s "$TMP/ok.prof.python.so" ] || fail "no image beside the gperftools profile: $(ls -A "$TMP")"
google-pprof --text "$PY" "$TMP/ok.prof" 2>/dev/null | grep -q pyburn_inner_a ||
	fail "google-pprof names no pyburn_inner_a"
[ -z "$(ls -A "$TMP" | grep '\.tmp\.')" ] || fail "temporaries left: $(ls -A "$TMP" | grep '\.tmp\.')"
ok "published: perf.data and gperftools with their images; perf report and google-pprof name pyburn_inner_a/b"
