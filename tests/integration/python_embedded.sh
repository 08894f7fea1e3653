#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A native program that starts running Python late, as programs embedding
# CPython do: tests/workloads/py_embed works 1 CPU second in its own code
# (main -> run_warmup -> embed_warmup), then dlopen()s Debian's
# libpython3.11 and runs pyburn.py in it for 2 (main -> run_python ->
# PyRun_SimpleString -> ... -> pyburn_run).  Default options, -v, folded:
#   a. the BPF program notes per CPU a process found without an
#      interpreter, and its later samples there skip the look-up
#      (bpf/python.bpf.h, py_process_of()): -v counts at least half of the
#      warm-up's samples so;
#   b. the note ends when the collector writes the interpreter's entry
#      (sampler_py_procs_written()): at least 85% of run_python's samples
#      are under pyburn_run's Python frame, and at most 1% keep an
#      evaluator frame (_PyEval_EvalFrameDefault).  A note that outlived
#      the entry leaves every sample there with evaluator frames.
. "$(dirname "$0")/../lib/common.sh"
need_root
wl=$WL/py_embed
lib=/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0
[ -x "$wl" ] || fail "no $wl (make)"
[ -e "$lib" ] || fail "no $lib (Debian's libpython3.11: make deps)"

"$BPFPROF" -v -F 999 --format folded -o "$TMP/embed.folded" -- \
	"$wl" -d 1 "$lib" "$BPFPROF_SRC/tests/workloads/pyburn.py" 2 2> "$TMP/embed.err" ||
	{ cat "$TMP/embed.err"; fail "bpfprof -- py_embed failed"; }
grep '^bpfprof: Python' "$TMP/embed.err"
python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" top "$TMP/embed.folded" 3 | cut -c1-200

# samples FOLDED PATTERN: the samples whose stack matches PATTERN (grep -E)
samples() {
	grep -E "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'
}
warm=$(samples "$TMP/embed.folded" ';embed_warmup( |;)')
noted=$(sed -n 's/^bpfprof: Python: \([0-9]*\) samples of processes known to run no interpreter.*/\1/p' \
	"$TMP/embed.err")
[ "$warm" -ge 700 ] || fail "a: $warm samples in embed_warmup (1 CPU second at 999 Hz)"
[ -n "$noted" ] && [ $((noted * 2)) -ge "$warm" ] ||
	fail "a: ${noted:-no} samples found without a look-up, for $warm in embed_warmup"
ok "a: $noted samples of the process found to run no interpreter without a look-up ($warm in embed_warmup)"

py=$(samples "$TMP/embed.folded" ';run_python;')
under=$(samples "$TMP/embed.folded" ';run_python;.*;pyburn_run(;| )')
eval=$(samples "$TMP/embed.folded" ';run_python;.*_PyEval_EvalFrameDefault')
[ "$py" -ge 1500 ] || fail "b: $py samples under run_python (2 CPU seconds of pyburn at 999 Hz)"
[ $((under * 100)) -ge $((py * 85)) ] ||
	fail "b: $under of $py samples under run_python have pyburn_run's Python frame"
[ $((eval * 100)) -le "$py" ] ||
	fail "b: $eval of $py samples under run_python keep an evaluator frame"
ok "b: $under of $py samples under run_python in pyburn_run's Python frames, $eval with an evaluator frame"
