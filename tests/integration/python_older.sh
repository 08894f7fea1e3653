#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Python functions in the stacks of CPython 3.8, 3.9 and 3.10 (each pyenv
# build found), whose frames are heap PyFrameObjects, one per evaluator
# activation, whose thread states know their thread by pthread_self()
# rather than its tid, and whose line tables have older formats
# (bpf/python.h, user/interp/py_layout.c).  For each, with no option, in
# command mode at 999 Hz:
#   (a) tests/workloads/pyburn.py: each pyburn_* function's self and total
#       shares within 2 points of the CPU time the workload measured (4 CPU
#       seconds), whole stacks from _start through Py_RunMain to the leaf,
#       no _PyEval_EvalFrameDefault frame left (tests/lib/pystacks.py
#       shares --calls-through-c: each Python call goes through a few of
#       the interpreter's C frames in these versions); -v: >= 4 Python
#       frames per sample, one read of the process's memory per frame;
#   (b) the same workload into pprof's format (3.8 and 3.10: 3.9 has 3.8's
#       f_lasti and line table): every pyburn_* frame that
#       calls another is on the line of the call, and the samples in
#       pyburn_inner_a on its loop's lines (pystacks.py lines): the frame's
#       f_lasti (code units in 3.10, bytes before) through the version's
#       line table;
#   (c) tests/workloads/pythreads.py (three threads, 3:2:1), run by the
#       newest of them: each thread's samples in its own function and in
#       no other thread, shares within 3 points of their CPU time.
. "$(dirname "$0")/../lib/common.sh"
need_root
mkdir -m 755 "$TMP/plugins" || fail "cannot make $TMP/plugins"
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/plugins/dump.so" || fail "cannot build the dump plugin"
PYBURN=$BPFPROF_SRC/tests/workloads/pyburn.py
CHECK="python3 $BPFPROF_SRC/tests/lib/pystacks.py"
export PYTHONPATH=$BPFPROF_SRC/tests/lib

pythons=()
for v in 3.8 3.9 3.10; do
	p=$(ls -d "${PYENV_ROOT:-/root/.pyenv}"/versions/"$v".*/bin/python"$v" 2>/dev/null | head -n 1)
	[ -n "$p" ] && pythons+=("$p")
done
[ ${#pythons[@]} -gt 0 ] || skip "no pyenv build of CPython 3.8, 3.9 or 3.10 (pyenv install 3.10)"

for py in "${pythons[@]}"; do
	tag=$(basename "$py")
	echo "== $py"
	"$BPFPROF" -v --plugin "$TMP/plugins/dump.so" -F 999 -o "$TMP/$tag.dump" -- \
		"$py" "$PYBURN" 4 "$TMP/$tag.truth" 2> "$TMP/$tag.err" ||
		{ cat "$TMP/$tag.err"; fail "bpfprof -- $py failed"; }
	cat "$TMP/$tag.err"
	$CHECK shares "$TMP/$tag.dump" "$TMP/$tag.truth" 2 --calls-through-c ||
		fail "$tag: Python stacks wrong"
	ok "$tag: Python functions' shares and stacks"
	$CHECK reads "$TMP/$tag.err" 1.02 || fail "$tag: Python frames or their reads per sample"
	ok "$tag: Python frames per sample and their reads"

	[ "$tag" = python3.9 ] && continue
	"$BPFPROF" -q --format pprof -F 999 -o "$TMP/$tag.pprof" -- \
		"$py" "$PYBURN" 2 "$TMP/$tag.truth2" || fail "bpfprof --format pprof -- $py failed"
	$CHECK lines "$TMP/$tag.pprof" "$PYBURN" || fail "$tag: Python lines wrong"
	ok "$tag: Python frames' lines"
done

py=${pythons[-1]}
tag=$(basename "$py")
"$BPFPROF" --plugin "$TMP/plugins/dump.so" -F 999 -o "$TMP/threads.dump" -- \
	"$py" "$BPFPROF_SRC/tests/workloads/pythreads.py" 3 "$TMP/threads.truth" \
	2> "$TMP/threads.err" || { cat "$TMP/threads.err"; fail "bpfprof -- $py pythreads failed"; }
cat "$TMP/threads.err" "$TMP/threads.truth"
$CHECK threads "$TMP/threads.dump" "$TMP/threads.truth" 3 ||
	fail "$tag: per-thread Python stacks wrong"
ok "$tag: per-thread Python stacks"
