# SPDX-License-Identifier: BSD-2-Clause
"""pyshort.py - a short-lived Python process whose work runs in code
objects that live for a few milliseconds, as a program's imports do, for
tests/integration/python_short_lived.sh.

  pyshort.py PIECES MS

Compiles PIECES source texts one after the other, each a module body
(file name "<pyshort_K>") that defines pyshort_step_K and calls it until
MS milliseconds of CPU time have passed, and runs it.  Each body's code
object is freed when it has run, and the next one's is often made at its
address; the functions live on until the process exits, right after the
last piece.  (Were they freed too, the next piece's function, of the
same size, would get the same addresses for its code object and for each
of its names, which the profiler could not tell from the old one: see
bpf/new_stack.bpf.h, py_codes_seen.)  Prints nothing.  Every sample
taken in a piece has Python frames named pyshort_step_K (or "<module>",
the body's, for the loop itself), never an unnamed one.
"""
import sys
import time

PIECE = """
def pyshort_step_{k}(n):
    t = 0
    for i in range(n):
        t = (t * 31 + i) & 0xffffffff
    return t

end = time.thread_time() + {ms} / 1000.0
while time.thread_time() < end:
    pyshort_step_{k}(500)
"""


def main():
    pieces, ms = int(sys.argv[1]), float(sys.argv[2])
    kept = []
    for k in range(pieces):
        ns = {"time": time}
        exec(compile(PIECE.format(k=k, ms=ms), "<pyshort_%d>" % k, "exec"), ns)
        kept.append(ns)


main()
