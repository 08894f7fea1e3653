# SPDX-License-Identifier: BSD-2-Clause
"""pyline_truth.py - the truth for tests/unit/interp/test_pyline.c: the
location tables of real code objects and the line the interpreter running
this script gives each of their instructions.

Run by the C test with each CPython 3.11+ it finds (also with
-X no_debug_ranges, whose tables hold the no-column form).  Code objects:
this file's own (the corpus below: multi-line expressions, loops,
comprehensions, try/except/finally, with, match, lambdas, generators,
async, classes, columns past 127), and pyline_corpus.py's: a generated
function whose lines jump by more than 63 (and thousands) of lines
forwards and backwards, and a few modules of the standard library
compiled from their source.  Every code object nested in those
(co_consts) too.

Output, three lines per code object, then "end N":
    code NAME FIRSTLINENO NUNITS
    table HEX            co_linetable
    lines L0 L1 ...      per code unit (list(co_positions())), "-" = None
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # run with -I
import pyline_corpus  # noqa: E402


# ---- the corpus: its code objects are dumped like every other ----------

def multi_line(a, b,
               c=3):
    x = (a +
         b *
         c)
    y = [a,
         b, c,
         x]
    return sum(y) + (
        x if a > b
        else -x)


def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        j = 0
        while j < i:
            j += 2
            if j > 10:
                break
        else:
            total += j
        total += i
    return total


def comprehensions(xs):
    a = [x * 2 for x in xs if x % 2]
    b = {x: [y for y in range(x)] for x in xs}
    c = {x
         for x in xs}
    d = sum(x for x in xs)
    return a, b, c, d


def exceptions(f, x):
    try:
        r = f(x)
    except (ValueError,
            TypeError) as e:
        r = str(e)
    except Exception:
        raise
    else:
        r = r * 2
    finally:
        x = None
    try:
        with open("/nonexistent") as fh, open("/dev/null") as g:
            return fh.read() + g.read()
    except OSError:
        pass
    return r


def matcher(v):
    match v:
        case [a, b, *rest]:
            return a + b + len(rest)
        case {"k": k, **kw}:
            return k
        case str() | bytes():
            return 0
        case _:
            return -1


def gen(n):
    for i in range(n):
        yield i
        yield from range(i)


async def coro(aw):
    async with aw as x:
        async for y in x:
            await y
    return [z async for z in aw]


class Klass:
    attr = 1

    def method(self, k=lambda q: q + 1):
        return k(self.attr)

    @property
    def prop(self):
        return (lambda: self.attr)()


lam = lambda a, b=2: (a +
                      b)


def wide_columns(v):
    return v.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.cccccccccccccccccccccc(v, v, v, v, v, v, v, v, v, v, v, v, v, v, v)


def nested(x):
    def inner(y):
        def innermost(z):
            return x + y + z
        return innermost
    return inner(x)(x)


# ---- the dump ----------------------------------------------------------

def dump(code):
    lines = []
    for pos in code.co_positions():
        lines.append("-" if pos[0] is None else str(pos[0]))
    name = "%s:%s" % (code.co_filename.rsplit("/", 1)[-1], code.co_qualname)
    print("code %s %d %d" % (name.replace(" ", "_"), code.co_firstlineno,
                             len(code.co_code) // 2))
    print("table " + code.co_linetable.hex())
    print("lines " + " ".join(lines))
    if len(lines) != len(code.co_code) // 2:
        sys.exit("co_positions() has %d entries for %d code units"
                 % (len(lines), len(code.co_code) // 2))


def main():
    codes = pyline_corpus.corpus(__file__, ("argparse", "dataclasses", "inspect",
                                            "json.decoder"))
    for c in codes:
        dump(c)
    print("end %d" % len(codes))


if __name__ == "__main__":
    main()
