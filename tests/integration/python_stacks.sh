#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release
#   (tests/run --sanitized: it holds whole stacks to 99% (95% sanitized); the
#   readers and the splicing run sanitized in python_* and young_processes)
# Python functions in CPython's stacks, with no option: the pyburn workload
# (tests/workloads/pyburn.py: nested Python calls, json's C encoder calling
# back into Python, math.sqrt) run by Debian's python3.11 and by each
# pyenv 3.12 and 3.13 build found, in command mode at $SHARES_HZ Hz.  Each
# pyburn_* function's self and total shares of the samples under
# pyburn_run are within 2 points of the CPU time the workload measured
# itself (3 CPU seconds: ~15,000 samples, sigma <= 0.41 points; see
# SHARES_HZ in tests/lib/common.sh), the stacks
# are whole from _start through Py_RunMain and the Python frames to the
# native leaf, and no _PyEval_EvalFrameDefault frame is left
# (tests/lib/pystacks.py); the frames come from a third as many reads of
# the process's memory or fewer (-v), and 3.13's code objects' types
# mostly from the BPF program's cache (-v); a stripped interpreter's evaluator
# .cold part is found in its -dbg file when installed (-v).  Then -g
# with python3.11: the same shares, the Python frames whole with the outer
# ones at the root of the cut native stacks.  Then --call-graph dwarf with python3.11: the same
# shares and whole stacks, the Python frames read by the BPF program with
# each copy and put in place of the evaluator frames libdwfl unwinds
# (user/interp/pysplice.c; before, no Python frame at all).  Then
# --no-interpreters: no Python name at all.
. "$(dirname "$0")/../lib/common.sh"
need_root
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/dump.so" || fail "cannot build the dump plugin"
PYBURN=$BPFPROF_SRC/tests/workloads/pyburn.py
CHECK="python3 $BPFPROF_SRC/tests/lib/pystacks.py"
export PYTHONPATH=$BPFPROF_SRC/tests/lib

find_pythons 3.12 3.13
[ ${#pythons[@]} -ge 2 ] || echo "note: no pyenv 3.12 or 3.13 build found; 3.11 only"

for py in "${pythons[@]}"; do
	tag=$(basename "$py")
	"$BPFPROF" -v --plugin "$TMP/dump.so" -F "$SHARES_HZ" -o "$TMP/$tag.dump" -- \
		"$py" "$PYBURN" 3 "$TMP/$tag.truth" 2> "$TMP/$tag.err" ||
		{ cat "$TMP/$tag.err"; fail "bpfprof -- $py failed"; }
	cat "$TMP/$tag.err"
	echo "== $py"
	$CHECK shares "$TMP/$tag.dump" "$TMP/$tag.truth" 2 || fail "$tag: Python stacks wrong"
	ok "$tag: Python functions' shares and stacks"
	# The frames of several calls come from one read of the thread's data
	# stack (bpf/python.bpf.h, py_window_at()), not one read each, and
	# 3.12+'s entry frames from the native walk's copy of the C stack.
	$CHECK reads "$TMP/$tag.err" 0.334 || fail "$tag: Python frames or their reads per sample"
	ok "$tag: Python frames per sample and their reads"
	# 3.13's frames name their code object in f_executable, which may hold
	# another type: the BPF program checks each frame's object's type, from
	# its per-CPU cache of the objects found to be code before
	# (bpf/python.bpf.h, py_code_checked()), not with a read per frame.
	if [[ $tag == python3.13* ]]; then
		read -r n pct < <(sed -n "s/.*frames' code objects checked: \([0-9]*\), \([0-9.]*\)% from the BPF program's cache.*/\1 \2/p" "$TMP/$tag.err")
		[ "${n:-0}" -gt 0 ] && awk -v p="$pct" 'BEGIN { exit !(p >= 97) }' ||
			fail "$tag: code objects checked: '${n:-none}', ${pct:-?}% from the BPF cache (at least 97%)"
		ok "$tag: $n code objects checked, $pct% from the BPF program's cache"
	fi
	# Debian's python3.11 is stripped: its evaluator's .cold part (GCC's
	# split of the unlikely paths, a local symbol) is in the debug file
	# of its build-id (python3.11-dbg), found by user/interp/python.c.
	id=$(readelf -n "$py" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	if [ -n "$id" ] && [ -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
		grep -q "interpreter files: 1, 1 with the evaluator's .cold part" "$TMP/$tag.err" ||
			fail "$tag: the evaluator's .cold part not found in its debug file"
		ok "$tag: the evaluator's .cold part from its debug file"
	fi
done

# -g: Debian's python3.11 has no frame pointers, so the native stack ends
# a frame or two above the leaf and the outer evaluator frames are not on
# it; their Python frames go to the stack's root (bpf/python.bpf.h,
# py_splice_step()), and the shares stay right.  Before, 2,539 of 3,016
# samples lost their Python frames ("frames-left").
"$BPFPROF" -g --plugin "$TMP/dump.so" -F "$SHARES_HZ" -o "$TMP/fp.dump" -- \
	/usr/bin/python3.11 "$PYBURN" 3 "$TMP/fp.truth" 2> "$TMP/fp.err" ||
	{ cat "$TMP/fp.err"; fail "bpfprof -g -- python3.11 failed"; }
cat "$TMP/fp.err"
grep -q "put at the root" "$TMP/fp.err" || fail "-g: the summary does not count the frames put at the root"
$CHECK shares "$TMP/fp.dump" "$TMP/fp.truth" 2 --cut-native || fail "-g: Python stacks wrong"
ok "-g: Python functions' shares, the outer ones at the root of cut native stacks"

# --call-graph dwarf: the copies carry the Python frames.
"$BPFPROF" -v --call-graph dwarf "${SHARES_DWARF_RING[@]}" --plugin "$TMP/dump.so" -F "$SHARES_HZ" -o "$TMP/dwarf.dump" -- \
	/usr/bin/python3.11 "$PYBURN" 3 "$TMP/dwarf.truth" 2> "$TMP/dwarf.err" ||
	{ cat "$TMP/dwarf.err"; fail "bpfprof --call-graph dwarf -- python3.11 failed"; }
grep -E 'dwarf unwinding|Python frames put' "$TMP/dwarf.err"
$CHECK shares "$TMP/dwarf.dump" "$TMP/dwarf.truth" 2 || fail "--call-graph dwarf: Python stacks wrong"
ok "--call-graph dwarf: Python functions' shares and stacks"

# --no-interpreters: the evaluator frames stay, no Python name appears.
"$BPFPROF" --no-interpreters --plugin "$TMP/dump.so" -F 999 -o "$TMP/off.dump" -- \
	/usr/bin/python3.11 "$PYBURN" 1 2> "$TMP/off.err" || { cat "$TMP/off.err"; fail "off"; }
grep -q "pyburn_" "$TMP/off.dump" && fail "--no-interpreters: Python names in the stacks"
grep -q "_PyEval_EvalFrameDefault" "$TMP/off.dump" ||
	fail "--no-interpreters: no evaluator frames either"
ok "--no-interpreters keeps the native stacks"
