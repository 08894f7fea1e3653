#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release sanitized
#   (tests/run --sanitized: it holds whole stacks to 99% (95% sanitized); the
#   only test of the 3.6-3.10 readers and line tables)
# Python functions in the stacks of CPython 3.6, 3.7, 3.8, 3.9 and 3.10
# (each pyenv build found), whose frames are heap PyFrameObjects, one per
# evaluator activation, whose thread states know their thread by
# pthread_self() rather than its tid, and whose line tables have older
# formats (bpf/python.h, user/interp/py_layout.c).  For each, with no
# option, in command mode at $SHARES_HZ Hz (tests/lib/common.sh; 999 Hz for (b)):
#   (a) tests/workloads/pyburn.py: each pyburn_* function's self and total
#       shares within 2 points of the CPU time the workload measured (3 CPU
#       seconds: ~15,000 samples, sigma <= 0.41 points), whole stacks from _start through Py_RunMain (3.7:
#       _Py_UnixMain, 3.6: Py_Main) to the leaf,
#       no _PyEval_EvalFrameDefault frame left (tests/lib/pystacks.py
#       shares --calls-through-c: each Python call goes through a few of
#       the interpreter's C frames in these versions); -v: >= 4 Python
#       frames per sample, one read of the process's memory per frame;
#   (b) the same workload, 1 CPU second, into pprof's format (all but 3.9, which has
#       3.8's f_lasti and line table): every pyburn_* frame that
#       calls another is on the line of the call, and the samples in
#       pyburn_inner_a on its loop's lines (pystacks.py lines): the frame's
#       f_lasti (code units in 3.10, bytes before) through the version's
#       line table;
#   (c) tests/workloads/pythreads.py (three threads, 3:2:1), run by the
#       oldest and the newest of them (3.6's thread states keep thread_id
#       elsewhere): each thread's samples in its own function and in no
#       other thread, shares within 3 points of their CPU time;
#   (d) the oldest with --call-graph dwarf: the program reads the frame
#       objects for each stack copy, by activation, and the collector puts
#       them in place of the evaluator frames it unwinds
#       (user/interp/pysplice.c): (a)'s shares and whole stacks, over
#       (a)'s samples too (at 999 Hz, 2 s, ~2,000 samples, left a share a
#       sampling error of ~0.8 points: one CI run of 2 s read 16.6% for a
#       truth of 14.4%);
#   (e) 3.6 with its libpython stripped of .symtab, as distributions ship
#       it (RHEL 8's python3.6): its list of interpreters, which has no
#       _PyRuntime around it, is the static interp_head, found in the code
#       of PyInterpreterState_Head() (user/interp/python.c); (a) again.
. "$(dirname "$0")/../lib/common.sh"
need_root
mkdir -m 755 "$TMP/plugins" || fail "cannot make $TMP/plugins"
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/plugins/dump.so" || fail "cannot build the dump plugin"
PYBURN=$BPFPROF_SRC/tests/workloads/pyburn.py
CHECK="python3 $BPFPROF_SRC/tests/lib/pystacks.py"
export PYTHONPATH=$BPFPROF_SRC/tests/lib

pythons=()
for v in 3.6 3.7 3.8 3.9 3.10; do
	p=$(ls -d "${PYENV_ROOT:-/root/.pyenv}"/versions/"$v".*/bin/python"$v" 2>/dev/null | head -n 1)
	[ -n "$p" ] && pythons+=("$p")
done
[ ${#pythons[@]} -gt 0 ] || skip "no pyenv build of CPython 3.6 to 3.10 (pyenv install 3.10)"
# Under the sanitizers, (a) and (b) with the oldest and the newest: the
# two line-table formats and both thread-state layouts; 3.7-3.9 differ
# from them only in the offsets, which the release run checks.
[ -n "${BPFPROF_SANITIZED:-}" ] && [ ${#pythons[@]} -gt 2 ] &&
	pythons=("${pythons[0]}" "${pythons[-1]}")

for py in "${pythons[@]}"; do
	tag=$(basename "$py")
	echo "== $py"
	"$BPFPROF" -v --plugin "$TMP/plugins/dump.so" -F "$SHARES_HZ" -o "$TMP/$tag.dump" -- \
		"$py" "$PYBURN" 3 "$TMP/$tag.truth" 2> "$TMP/$tag.err" ||
		{ cat "$TMP/$tag.err"; fail "bpfprof -- $py failed"; }
	cat "$TMP/$tag.err"
	$CHECK shares "$TMP/$tag.dump" "$TMP/$tag.truth" 2 --calls-through-c ||
		fail "$tag: Python stacks wrong"
	ok "$tag: Python functions' shares and stacks"
	$CHECK reads "$TMP/$tag.err" 1.02 || fail "$tag: Python frames or their reads per sample"
	ok "$tag: Python frames per sample and their reads"

	[ "$tag" = python3.9 ] && continue
	"$BPFPROF" -q --format pprof -F 999 -o "$TMP/$tag.pprof" -- \
		"$py" "$PYBURN" 1 "$TMP/$tag.truth2" || fail "bpfprof --format pprof -- $py failed"
	$CHECK lines "$TMP/$tag.pprof" "$PYBURN" || fail "$tag: Python lines wrong"
	ok "$tag: Python frames' lines"
done

for py in $(printf '%s\n' "${pythons[0]}" "${pythons[-1]}" | uniq); do
	tag=$(basename "$py")
	"$BPFPROF" --plugin "$TMP/plugins/dump.so" -F "$SHARES_HZ" -o "$TMP/$tag.threads.dump" -- \
		"$py" "$BPFPROF_SRC/tests/workloads/pythreads.py" 3 "$TMP/$tag.threads.truth" \
		2> "$TMP/$tag.threads.err" ||
		{ cat "$TMP/$tag.threads.err"; fail "bpfprof -- $py pythreads failed"; }
	cat "$TMP/$tag.threads.err" "$TMP/$tag.threads.truth"
	$CHECK threads "$TMP/$tag.threads.dump" "$TMP/$tag.threads.truth" 3 ||
		fail "$tag: per-thread Python stacks wrong"
	ok "$tag: per-thread Python stacks"
done

py=${pythons[0]}
tag=$(basename "$py")
"$BPFPROF" --call-graph dwarf "${SHARES_DWARF_RING[@]}" --plugin "$TMP/plugins/dump.so" -F "$SHARES_HZ" -o "$TMP/$tag.dwarf.dump" -- \
	"$py" "$PYBURN" 3 "$TMP/$tag.dwarf.truth" 2> "$TMP/$tag.dwarf.err" ||
	{ cat "$TMP/$tag.dwarf.err"; fail "bpfprof --call-graph dwarf -- $py failed"; }
$CHECK shares "$TMP/$tag.dwarf.dump" "$TMP/$tag.dwarf.truth" 2 --calls-through-c ||
	fail "$tag --call-graph dwarf: Python stacks wrong"
ok "$tag --call-graph dwarf: Python functions' shares and stacks"

py=$(ls -d "${PYENV_ROOT:-/root/.pyenv}"/versions/3.6.*/bin/python3.6 2>/dev/null | head -n 1)
[ -n "$py" ] || { echo "note: no pyenv build of 3.6: its stripped case not run"; exit 0; }
lib=$(dirname "$py")/../lib/libpython3.6m.so.1.0
mkdir "$TMP/stripped" && strip -o "$TMP/stripped/libpython3.6m.so.1.0" "$lib" ||
	fail "cannot strip a copy of $lib"
nm "$TMP/stripped/libpython3.6m.so.1.0" 2>&1 | grep -q "no symbols" ||
	fail "the stripped copy of $lib still has a .symtab"
LD_LIBRARY_PATH=$TMP/stripped "$py" -c "print(open('/proc/self/maps').read())" |
	grep -q "$TMP/stripped/libpython3.6m.so.1.0" || fail "python3.6 does not load the stripped copy"
LD_LIBRARY_PATH=$TMP/stripped "$BPFPROF" -v --plugin "$TMP/plugins/dump.so" -F "$SHARES_HZ" \
	-o "$TMP/stripped.dump" -- "$py" "$PYBURN" 3 "$TMP/stripped.truth" 2> "$TMP/stripped.err" ||
	{ cat "$TMP/stripped.err"; fail "bpfprof -- $py (stripped libpython) failed"; }
cat "$TMP/stripped.err"
$CHECK shares "$TMP/stripped.dump" "$TMP/stripped.truth" 2 --calls-through-c ||
	fail "python3.6 with a stripped libpython: Python stacks wrong"
ok "python3.6 with a stripped libpython: Python functions' shares and stacks"
