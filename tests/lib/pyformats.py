#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pyformats.py - the checks of tests/integration/python_formats.sh: one
profile of tests/workloads/pyburn.py, written in one output format, read
back by that format's own reader, names the workload's Python functions
with their shares of the work.

  pyformats.py FORMAT OUTPUT TRUTH POINTS PYFILE [BINARY]

FORMAT is folded, pprof, hpctoolkit, gperftools or perf; OUTPUT what
bpfprof wrote; TRUTH the workload's truth file (FUNCTION SELF_NS
TOTAL_NS); PYFILE the workload's source (its def lines); BINARY the
interpreter (google-pprof needs it).  Readers: the folded text itself,
tests/lib/pprof_proto.py, build/tools/hpcdb --strict (its path in
$HPCDB), google-pprof --text --cum, and perf script.

Checks, for every pyburn_* function F: F's total share (samples whose
stack holds F, over those holding pyburn_run) is within POINTS of the
truth's (F's CPU time over pyburn_run's); for the formats that carry
source positions, F's file is PYFILE and its line F's def line (pprof:
the Function's filename and start_line; HPCToolkit: the procedure's file
and line in meta.db); for the formats whose stacks are read here, no
_PyEval_EvalFrameDefault frame is left under pyburn_run; perf: the
Python frames are named from the image OUTPUT.python.so.
"""
import os
import re
import subprocess
import sys

import pprof_proto

EVAL = "_PyEval_EvalFrameDefault"
bad = 0


def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok


def def_lines(pyfile):
    lines = {}
    for i, text in enumerate(open(pyfile), 1):
        m = re.match(r"def (pyburn_\w+)\(", text)
        if m:
            lines[m.group(1)] = i
    return lines


def read_truth(path):
    truth = {}
    for line in open(path):
        name, _, total = line.split()
        truth[name] = int(total)
    return truth


def folded_stacks(path):
    """(count, frames root first) of each line."""
    out = []
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        out.append((int(n), stack.split(";")))
    return out


def pprof_stacks(path):
    return [(s.values[0], s.frames[::-1]) for s in pprof_proto.load(path)]


def perf_stacks(path):
    """perf script's stacks; the dso of every pyburn_* frame in a set."""
    text = subprocess.run(["perf", "script", "-i", path, "-F", "comm,ip,sym,dso"],
                          capture_output=True, text=True, check=True).stdout
    out, dsos = [], set()
    for block in text.split("\n\n"):
        frames = []
        for line in block.splitlines()[1:]:
            m = re.match(r"\s*[0-9a-f]+ (.*?)(\+0x[0-9a-f]+)? \((.*)\)$", line)
            if not m:
                continue
            frames.append(m.group(1))
            if m.group(1).startswith("pyburn_"):
                dsos.add(m.group(3))
        if frames:
            out.append((1, frames[::-1]))
    return out, dsos


def stack_shares(stacks, names):
    """Total shares of @names among the samples under pyburn_run."""
    under = [(n, f) for n, f in stacks if "pyburn_run" in f]
    total = sum(n for n, _ in under)
    left = sum(n for n, f in under if any(x.startswith(EVAL) for x in f))
    check(total > 0 and left <= 0.005 * total,
          "%d of %d samples under pyburn_run kept an evaluator frame" % (left, total))
    return {f: 100.0 * sum(n for n, s in under if f in s) / max(total, 1) for f in names}


def pct(s):
    return float(s.rstrip("%"))


def gperftools_shares(path, binary, names):
    """cum% of each function over pyburn_run's, from google-pprof --text."""
    text = subprocess.run(["google-pprof", "--text", "--cum", binary, path],
                          capture_output=True, text=True, check=True).stdout
    cum = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 6 and f[5] in names + ["pyburn_run"]:
            cum[f[5]] = pct(f[4])
    run = cum.get("pyburn_run", 0)
    return {f: 100.0 * cum[f] / run if run and f in cum else -100.0 for f in names}


def hpctoolkit_shares(path, names, lines, pyfile):
    """incl% of each function over pyburn_run's (hpcdb --strict), and
    each procedure's file and line."""
    incl = {}
    for f in names + ["pyburn_run"]:
        r = subprocess.run([os.environ["HPCDB"], "--strict", "--function", f, path],
                           capture_output=True, text=True)
        check(r.returncode == 0, "hpcdb --strict --function %s: %s" % (f, r.stderr.strip()))
        m = re.search(r"^function \S+ profile 0 \[SUMMARY\]: excl \S+ incl (\S+)%$",
                      r.stdout, re.M)
        incl[f] = float(m.group(1)) if m else 0.0
        if f in lines:
            procs = re.findall(r"^procedure \S+: module (.*) file (.*) line (\d+)$",
                               r.stdout, re.M)
            check(procs and all(p[1] == pyfile and int(p[2]) == lines[f] for p in procs),
                  "HPCToolkit procedure %s: %s (def line %d)" % (f, procs, lines[f]))
    run = incl["pyburn_run"]
    return {f: 100.0 * incl[f] / run if run else -100.0 for f in names}


def main(argv):
    if len(argv) not in (6, 7):
        print(__doc__, file=sys.stderr)
        return 2
    fmt, out, truth_path, points, pyfile = argv[1:6]
    binary = argv[6] if len(argv) > 6 else "/usr/bin/python3.11"
    points = float(points)
    truth = read_truth(truth_path)
    lines = def_lines(pyfile)
    names = sorted(n for n in truth if n != "pyburn_run")
    if fmt == "folded":
        shares = stack_shares(folded_stacks(out), names)
    elif fmt == "pprof":
        shares = stack_shares(pprof_stacks(out), names)
        funcs = pprof_proto.functions(out)
        for f in names:
            mine = [x for x in funcs if x[0] == f]
            check(mine and all(x[1] == pyfile and x[2] == lines[f] for x in mine),
                  "pprof Function %s: %s (def line %d)" % (f, mine, lines[f]))
    elif fmt == "hpctoolkit":
        shares = hpctoolkit_shares(out, names, lines, pyfile)
    elif fmt == "gperftools":
        shares = gperftools_shares(out, binary, names)
    elif fmt == "perf":
        stacks, dsos = perf_stacks(out)
        shares = stack_shares(stacks, names)
        image = os.path.abspath(out) + ".python.so"
        check(dsos == {image}, "perf names the Python frames from %s: %s" % (image, dsos))
    else:
        print("unknown format %s" % fmt, file=sys.stderr)
        return 2
    for f in names:
        want = 100.0 * truth[f] / truth["pyburn_run"]
        check(abs(shares[f] - want) <= points,
              "%s: %s total %.1f%%, truth %.1f%%" % (fmt, f, shares[f], want))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
