# SPDX-License-Identifier: BSD-2-Clause
"""pyline_corpus.py - the code objects whose line tables pyline_truth.py
(CPython 3.11+) and pyline_truth_old.py (3.6-3.10) dump for
tests/unit/interp/test_pyline.c: the script's own, a generated module
whose lines jump by more than 63 (and thousands) of lines forwards and
backwards, and modules of the standard library compiled from their
source; every code object nested in those (co_consts) too.  Imported by
both, so written in the syntax of 3.6.
"""
import importlib.util


# ---- a function with line jumps of more than 63 lines ------------------

def generated_source():
    """Functions whose statements are 1, 40, 70, 200 and 5000 lines apart
    (blank lines between), with loops back over thousands of lines (3.12+
    give a for loop's jump back the line of the for; 3.11 a while loop's
    test at the bottom the line of the while) and a call whose arguments
    are 2100 lines below its name (the call has the line of the name)."""
    out = ["def far_apart(n):", "    t = 0", "    for i in range(n):"]
    for gap in (1, 40, 70, 200, 5000, 3, 64, 65, 130):
        out.extend([""] * gap)
        out.append("        t += i * %d" % gap)
    out.append("    return t")
    out.extend(["def far_while(n):", "    while n > 0:"] + [""] * 3000)
    out.extend(["        n -= 1", "    return n"])
    out.extend(["def far_call(f, a):", "    return f(a,"] + [""] * 2100)
    out.append("             a)")
    out.extend([""] * 300)
    out.append("def after_gap(): return 1")
    return "\n".join(out) + "\n"


def walk(code, out):
    """@code and every code object nested in it, appended to @out."""
    out.append(code)
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            walk(c, out)


def corpus(own_file, modules):
    """The code objects of the file @own_file, of generated_source() and of
    the standard library's @modules (names, as for import)."""
    codes = []
    with open(own_file) as f:
        walk(compile(f.read(), own_file, "exec"), codes)
    walk(compile(generated_source(), "<generated>", "exec"), codes)
    for mod in modules:
        path = importlib.util.find_spec(mod).origin
        with open(path) as f:
            walk(compile(f.read(), path, "exec"), codes)
    return codes
