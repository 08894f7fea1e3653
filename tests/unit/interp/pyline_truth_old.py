# SPDX-License-Identifier: BSD-2-Clause
"""pyline_truth_old.py - the truth for tests/unit/interp/test_pyline.c on
CPython 3.6 to 3.10: the line tables of real code objects and the
line the interpreter running this script gives each of their
instructions (pyline_truth.py does the same for 3.11+, whose syntax and
tables differ).

Code objects (pyline_corpus.py, as for pyline_truth.py): this file's own
(a corpus in the syntax of 3.6), a generated module whose lines jump by
hundreds and thousands of lines both ways, and a few modules of the
standard library compiled from their source; every code object nested
in those too.

Output, three lines per code object, then "end N":
    code NAME FIRSTLINENO NUNITS
    table HEX            co_linetable (3.10) or co_lnotab (3.6-3.9)
    lines L0 L1 ...      per code unit (2 bytes), "-" = no line; from
                         co_lines() (3.10, the interpreter's own decoder)
                         or dis.findlinestarts() (3.6-3.9)
"""
import dis
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # run with -I
import pyline_corpus  # noqa: E402


# ---- the corpus: its code objects are dumped like every other ----------

def loops(n):
    total = 0
    for i in range(n):
        if i % 3:
            continue
        while total > 100:
            total -= 7
        total += i
    else:
        total += 1
    return total


def exceptions(f, x):
    try:
        return f(x)
    except (KeyError,
            ValueError) as e:
        return str(e)
    finally:
        x = None


def comprehension(xs):
    return [x * 2 for x in xs
            if x > 1], {k: v for k, v in zip(xs, xs)}


def gen(n):
    for i in range(n):
        yield i
    yield from range(n)


class Klass:
    def method(self, k=lambda q: q + 1):
        return k(1)


# ---- the dump ----------------------------------------------------------

def unit_lines(code):
    n = len(code.co_code) // 2
    lines = ["-"] * n
    if hasattr(code, "co_lines"):           # 3.10
        for start, end, line in code.co_lines():
            for u in range(start // 2, min(end // 2, n)):
                lines[u] = "-" if line is None else str(line)
        return lines
    starts = dict(dis.findlinestarts(code))
    line = code.co_firstlineno
    for u in range(n):
        line = starts.get(2 * u, line)
        lines[u] = str(line)
    return lines


def dump(code):
    table = code.co_linetable if hasattr(code, "co_linetable") else code.co_lnotab
    print("code %s %d %d" % (code.co_name.replace(" ", "_"), code.co_firstlineno,
                             len(code.co_code) // 2))
    print("table " + table.hex())
    print("lines " + " ".join(unit_lines(code)))


def main():
    codes = pyline_corpus.corpus(__file__, ("argparse", "json.decoder", "ast", "difflib",
                                            "tarfile"))
    for c in codes:
        dump(c)
    print("end %d" % len(codes))


if __name__ == "__main__":
    if sys.version_info[:2] not in ((3, 6), (3, 7), (3, 8), (3, 9), (3, 10)):
        sys.exit("pyline_truth_old.py is for CPython 3.6-3.10, not %d.%d"
                 % sys.version_info[:2])
    main()
