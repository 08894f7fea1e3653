#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pystacks.py - the checks of the CPython tests (tests/integration/python_*.sh)
on what the test plugin tests/fixtures/plugins/dump.c wrote (profdump.py
reads it).  Standard library only.

  pystacks.py shares DUMP TRUTH POINTS [--calls-through-c | --cut-native]
      tests/workloads/pyburn.py: every pyburn_* function's self and total
      share of the samples under pyburn_run, against the truth file the
      workload wrote (its own CPU time per function), within POINTS; the
      stacks are whole (from _start through Py_RunMain, or 3.7's
      _Py_UnixMain, 3.6's Py_Main, the Python frames, to the leaf), no
      evaluator frame is left, the json callback runs
      under the C encoder's frames, math.sqrt's C frames are below
      pyburn_math.  --calls-through-c: CPython 3.6-3.10, where each Python
      call is a C call into the evaluator, so a few of the interpreter's C
      frames (_PyEval_Vector, function_code_fastcall, ...) lie between a
      Python function and the one it calls.  --cut-native: a -g profile
      of an interpreter built without frame pointers, whose native stacks
      end early: the outer Python frames are at the root of the stack
      (bpf/python.bpf.h, py_splice_step()), so the stacks are not whole
      and json's C encoder frames are missing; instead every sample under
      the <module> frame, and the callback's Python frames in their order
      (outer_b, then hook, then inner_b the next Python frame).
  pystacks.py lines PPROF PYBURN
      tests/workloads/pyburn.py profiled into pprof's format: the line of
      each Python frame, from the frame's instruction through the code
      object's line table.  A pyburn_* frame that calls another sits on
      the line of that call in the source (PYBURN: the workload's file),
      in >= 99% of those samples; >= 90% of the samples in pyburn_inner_a
      (its Python frame the innermost) are on its loop's two lines.
  pystacks.py reads ERR RATIO
      bpfprof -v's summary on stderr (ERR): >= 4 Python frames per sample
      with Python frames, read in at most RATIO reads of the process's
      memory per frame.
  pystacks.py threads DUMP POINTS
      tests/workloads/pythreads.py: each worker thread's samples are in its
      own function (and that function in no other thread), and each
      thread's share of the workers' samples is within POINTS of its
      measured CPU time's share (the truth lines on stderr, file given
      as the third argument).

Self share of a function: the samples whose innermost pyburn_* frame it
is (the interpreter's C code below it, math.sqrt's included, is its own
time, as its measured CPU time is); total share: the samples that have it
anywhere in the stack.
"""
import ast
import os
import re
import sys

import pprof_proto
import profdump

EVAL = "_PyEval_EvalFrameDefault"
bad = 0


def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok


def under(d, root):
    """The counts whose user stack has @root."""
    return [c for c in d.counts if root in c.user]


def read_truth(path):
    truth = {}
    for line in open(path):
        name, s, t = line.split()
        truth[name] = (int(s), int(t))
    return truth


# The interpreter's main function, on the way from _start to the Python
# frames: Py_RunMain from 3.8, _Py_UnixMain in 3.7, Py_Main in 3.6.
PY_MAINS = ("Py_RunMain", "_Py_UnixMain", "Py_Main")


def check_whole(sel, n, roots=("_start",), through=PY_MAINS):
    """Root to leaf: a root named ...@roots, one of @through (a name or
    names), no evaluator frame."""
    through = (through,) if isinstance(through, str) else through
    whole = sum(c.samples for c in sel if c.user and c.user[-1].endswith(roots)
                and any(t in c.user for t in through))
    left = sum(c.samples for c in sel if any(f.startswith(EVAL) for f in c.user))
    # A sanitized collector (the CI's ASan run) is several times slower to
    # load the mappings of new threads and libraries, so more of the
    # first samples stop at an address it has not loaded yet ("unmapped").
    need = 0.95 if os.environ.get("BPFPROF_SANITIZED") else 0.99
    check(whole >= need * n, "%d of %d samples have whole stacks (%s ... %s ...)"
          % (whole, n, "|".join(roots), "|".join(through)))
    check(evaluator_left_ok(left, n),
          "%d of %d samples kept an evaluator frame (%s)" % (left, n, EVAL))


def evaluator_left_ok(left, n):
    """At most 0.5% of @n samples, or 2: about 1 sample in 1,000-4,000
    keeps an evaluator frame the splice did not match (-v's
    "evaluator-unmatched"), and a thread of ~400 samples (python_older.sh's
    smallest) would get 2 of them ~6% of the time."""
    return left <= max(0.005 * n, 2)


def check_callback(sel, through_c=False):
    """Every sample in pyburn_inner_b, the callback's callee: json's C
    encoder between pyburn_outer_b and pyburn_hook, then pyburn_inner_b
    the next frame (@through_c: the next pyburn_* frame, at most 3 C
    frames further).  The hook's samples without pyburn_inner_b are its
    own time (its time.thread_time_ns() calls and note(), ~1% of its
    samples on a guest where that clock is a system call): right, and
    counted in its self share."""
    n = good = 0
    for c in sel:
        if "pyburn_inner_b" not in c.user:
            continue
        n += c.samples
        if "pyburn_hook" not in c.user or "pyburn_outer_b" not in c.user:
            continue
        u = c.user[::-1]        # root first
        i, j = u.index("pyburn_outer_b"), u.index("pyburn_hook")
        mid = u[i + 1:j]
        below = [f for f in u[j + 1:j + 5] if f.startswith("pyburn_")] if through_c \
            else u[j + 1:j + 2]
        if "dumps" in mid and any(f.startswith("encoder_") for f in mid) and \
                below[:1] == ["pyburn_inner_b"]:
            good += c.samples
    check(n > 0 and good >= 0.99 * n,
          "%d of %d samples in pyburn_inner_b read outer_b -> dumps -> ... encoder_* (C) -> "
          "hook -> inner_b" % (good, n))


def check_cut_callback(sel, all_samples):
    """-g: the Python frames whole without the native ones between."""
    n = sum(c.samples for c in sel)
    check(n >= 0.97 * all_samples, "%d of %d samples of the workload under pyburn_run"
          % (n, all_samples))
    n = good = 0
    for c in sel:                       # pyburn_inner_b's, as check_callback()
        if "pyburn_inner_b" not in c.user:
            continue
        n += c.samples
        if "pyburn_hook" not in c.user:
            continue
        py = [f for f in c.user[::-1] if f.startswith("pyburn_")]    # root first
        if "pyburn_outer_b" in py and py[py.index("pyburn_hook") + 1:][:1] == ["pyburn_inner_b"] \
                and py.index("pyburn_outer_b") < py.index("pyburn_hook"):
            good += c.samples
    check(n > 0 and good >= 0.99 * n,
          "%d of %d samples in pyburn_inner_b read outer_b ... hook -> inner_b" % (good, n))


def check_math(sel):
    """Some samples of pyburn_math end in C code (math.sqrt, the interpreter)."""
    n = sum(c.samples for c in sel if c.user and "pyburn_math" in c.user)
    native = sum(c.samples for c in sel if c.user and "pyburn_math" in c.user
                 and c.user[0] != "pyburn_math")
    check(n > 0 and native > 0, "pyburn_math: %d samples, %d with C frames below it"
          % (n, native))


def self_of(c):
    for f in c.user:
        if f.startswith("pyburn_"):
            return f
    return None


def shares(dump, truth_path, points, through_c=False, cut_native=False):
    d = profdump.load(dump)
    truth = read_truth(truth_path)
    sel = under(d, "pyburn_run")
    n = sum(c.samples for c in sel)
    # 2 points are 4.9 sigma of a share of 15,000 samples (3 s at
    # SHARES_HZ), 3.9 sigma of 10,000, 1.3 of 1,000
    check(n >= 10000, "%d samples under pyburn_run (>= 10,000)" % n)
    if n == 0:
        return
    run_ns = truth["pyburn_run"][1]
    for name in sorted(truth):
        if name == "pyburn_run":
            continue
        s = sum(c.samples for c in sel if self_of(c) == name)
        t = sum(c.samples for c in sel if name in c.user)
        ts, tt = 100.0 * truth[name][0] / run_ns, 100.0 * truth[name][1] / run_ns
        check(abs(100.0 * s / n - ts) <= points,
              "%s self %.2f%% (truth %.2f%%)" % (name, 100.0 * s / n, ts))
        check(abs(100.0 * t / n - tt) <= points,
              "%s total %.2f%% (truth %.2f%%)" % (name, 100.0 * t / n, tt))
    if cut_native:
        left = sum(c.samples for c in sel if any(f.startswith(EVAL) for f in c.user))
        check(evaluator_left_ok(left, n), "%d of %d samples kept an evaluator frame" % (left, n))
        check_cut_callback(sel, sum(c.samples for c in d.counts if c.user and
                                    any(f.startswith("pyburn_") or f == "<module>" or
                                        f.startswith(EVAL) for f in c.user)))
    else:
        check_whole(sel, n)
        check_callback(sel, through_c)
    check_math(sel)


def function_lines(pyfile):
    """{function name: (first line, last line, [source lines])}."""
    text = open(pyfile).read()
    src = text.splitlines()
    out = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef):
            out[node.name] = (node.lineno, node.end_lineno, src)
    return out


def call_line(funcs, caller, callee):
    """The one line of @caller's body that calls @callee, None if it calls
    it through other code (pyburn_outer_b: json.dumps calls pyburn_hook)."""
    first, last, src = funcs[caller]
    found = [i for i in range(first + 1, last + 1) if callee + "(" in src[i - 1]]
    assert len(found) <= 1, (caller, callee, found)
    return found[0] if found else None


def lines(pprof, pyfile):
    funcs = function_lines(pyfile)
    calls = {}          # (caller, callee) -> [samples, on the call's line]
    loop = [0, 0]       # samples in pyburn_inner_a: all, on its loop
    first, last, src = funcs["pyburn_inner_a"]
    loop_lines = [i for i in range(first, last + 1)
                  if src[i - 1].strip().startswith(("for _ in range(n)", "x = (x * A + C)"))]
    assert len(loop_lines) == 2, loop_lines
    for s in pprof_proto.load(pprof):
        py = [(f, n) for f, n in zip(s.frames, s.lines) if f in funcs]    # leaf first
        n = s.values[0]
        if py and py[0][0] == "pyburn_inner_a":
            loop[0] += n
            loop[1] += n * (py[0][1] in loop_lines)
        for (callee, _), (caller, line) in zip(py, py[1:]):
            if not caller.startswith("pyburn_") or not callee.startswith("pyburn_"):
                continue
            want = call_line(funcs, caller, callee)
            if want is None:
                continue
            c = calls.setdefault((caller, callee), [0, 0, want])
            c[0] += n
            c[1] += n * (line == c[2])
    check(len(calls) >= 5, "%d caller -> callee pairs of pyburn_* frames" % len(calls))
    for (caller, callee), (n, good, want) in sorted(calls.items()):
        check(good >= 0.99 * n, "%s -> %s: %d of %d samples on the call's line %d"
              % (caller, callee, good, n, want))
    check(loop[0] > 0 and loop[1] >= 0.9 * loop[0],
          "pyburn_inner_a: %d of the %d samples in it on its loop's lines %s"
          % (loop[1], loop[0], loop_lines))


def reads(err, ratio):
    m = None
    for line in open(err, errors="replace"):
        m = re.search(r"Python: ([0-9.]+) frames read per sample with Python frames, "
                      r"in ([0-9.]+) reads", line) or m
    check(m is not None, "-v gives the frames and reads per sample")
    if m:
        frames, n = float(m.group(1)), float(m.group(2))
        check(frames >= 4 and n <= ratio * frames,
              "%.1f Python frames per sample in %.1f reads (at most %.2f a frame)"
              % (frames, n, ratio))


def threads(dump, truth_path, points):
    d = profdump.load(dump)
    truth = {}
    for line in open(truth_path):
        p = line.split()
        if len(p) == 3 and p[0] == "pythreads:":
            truth[p[1]] = float(p[2])
    names = {t["comm"]: tid for tid, t in d.threads.items()}
    total = 0
    got = {}
    for name in sorted(truth):
        tid = names.get(name)
        check(tid is not None, "thread %s sampled" % name)
        if tid is None:
            continue
        sel = [c for c in d.counts if c.tid == tid]
        n = sum(c.samples for c in sel)
        fn = "pyworker_" + name.split("-")[1]     # pw-a runs pyworker_a
        mine = sum(c.samples for c in sel if fn in c.user)
        others = sum(c.samples for c in d.counts if c.tid != tid and fn in c.user)
        check(n > 0 and mine >= 0.97 * n,
              "%s: %d of %d samples in %s" % (name, mine, n, fn))
        check(others == 0, "%s appears in no other thread (%d samples)" % (fn, others))
        for c in d.counts:
            if c.tid != tid and fn in c.user:
                print("  in thread %s (%d): %s" % (d.threads.get(c.tid, {}).get("comm"), c.tid,
                                                 c.user))
        check_whole(sel, n, ("clone3", "clone"), "start_thread")
        got[name] = mine
        total += mine
    cpu = sum(truth.values())
    for name in sorted(got):
        share, want = 100.0 * got[name] / max(total, 1), 100.0 * truth[name] / cpu
        check(abs(share - want) <= points,
              "%s: %.2f%% of the workers' samples (CPU time %.2f%%)" % (name, share, want))


def main():
    if len(sys.argv) in (5, 6) and sys.argv[1] == "shares":
        opt = sys.argv[5] if len(sys.argv) == 6 else None
        if opt not in (None, "--calls-through-c", "--cut-native"):
            sys.exit(__doc__)
        shares(sys.argv[2], sys.argv[3], float(sys.argv[4]), opt == "--calls-through-c",
               opt == "--cut-native")
    elif len(sys.argv) == 4 and sys.argv[1] == "reads":
        reads(sys.argv[2], float(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "lines":
        lines(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "threads":
        threads(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        sys.exit(__doc__)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
