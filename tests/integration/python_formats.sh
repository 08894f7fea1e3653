#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Python functions in every output format: the pyburn workload
# (tests/workloads/pyburn.py) under Debian's python3.11, profiled at $SHARES_HZ Hz
# with no option into folded, pprof, HPCToolkit, gperftools and perf.data,
# each read back by its own reader (tests/lib/pyformats.py: the folded
# text, tests/lib/pprof_proto.py, hpcdb --strict, google-pprof --text,
# perf script).  In each, every pyburn_* function's total share of the
# work is within 3 points of the CPU time the workload measured (3 CPU
# seconds: ~15,000 samples, sigma <= 0.41 points; tests/lib/common.sh); pprof's Functions and
# HPCToolkit's procedures carry pyburn.py and the def line; perf and
# google-pprof name the frames from the image beside the output
# (OUTPUT.python.so).  Then perf.data moved elsewhere: without the image
# at its recorded path perf names no Python frame, and after `perf
# buildid-cache --add` of the image (a cache in the test's own $HOME) it
# names them again by build-id.
. "$(dirname "$0")/../lib/common.sh"
need_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (apt-get install python3.11)"
command -v perf >/dev/null || fail "perf not installed (linux-perf)"
command -v google-pprof >/dev/null || fail "google-pprof not installed (google-perftools)"
PYBURN=$BPFPROF_SRC/tests/workloads/pyburn.py
export HPCDB=$BPFPROF_BUILD/tools/hpcdb
export PYTHONPATH=$BPFPROF_SRC/tests/lib
CHECK="python3 $BPFPROF_SRC/tests/lib/pyformats.py"

for fmt in folded pprof hpctoolkit gperftools perf; do
	out=$TMP/out.$fmt
	"$BPFPROF" --format "$fmt" -F "$SHARES_HZ" -o "$out" -- "$PY" "$PYBURN" 3 "$TMP/$fmt.truth" \
		2> "$TMP/$fmt.err" || { cat "$TMP/$fmt.err"; fail "bpfprof --format $fmt failed"; }
	echo "== $fmt"
	$CHECK "$fmt" "$out" "$TMP/$fmt.truth" 3 "$PYBURN" "$PY" ||
		{ cat "$TMP/$fmt.err"; fail "$fmt: Python functions wrong"; }
	ok "$fmt: the Python functions, their shares (and files, lines)"
done

# The image is what names the frames in perf.data: found by build-id once
# perf.data and the image are elsewhere and the image is in perf's cache.
[ -s "$TMP/out.perf.python.so" ] || fail "no image beside perf.data"
bid=$(perf buildid-list -i "$TMP/out.perf" 2>/dev/null | awk -v p="$TMP/out.perf.python.so" '$2 == p { print $1 }')
[ -n "$bid" ] || fail "perf.data's build-id table does not list the image"
mkdir -p "$TMP/moved" "$TMP/home"
mv "$TMP/out.perf" "$TMP/out.perf.python.so" "$TMP/moved/"
n=$(HOME=$TMP/home perf script -i "$TMP/moved/out.perf" 2>/dev/null | grep -c 'pyburn_')
[ "$n" -eq 0 ] || fail "perf named $n Python frames without the image at its path"
HOME=$TMP/home perf buildid-cache --add "$TMP/moved/out.perf.python.so" ||
	fail "perf buildid-cache --add the image failed"
n=$(HOME=$TMP/home perf script -i "$TMP/moved/out.perf" 2>/dev/null | grep -c 'pyburn_')
[ "$n" -gt 1000 ] || fail "perf named only $n Python frames from its build-id cache"
ok "moved perf.data: Python frames named through the build-id cache ($n frames, id $bid)"
