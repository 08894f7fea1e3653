# SPDX-License-Identifier: BSD-2-Clause
"""pyswap.py - a Python function whose code object is freed, and another
made at its address, before a profiler that was stopped meanwhile reads
it, for tests/integration/python_reuse.sh (part 4).

  pyswap.py SECONDS [FILL [late]]

Prints "pyswap: ready" and waits for a line on stdin.  Then, with FILL,
runs pyswap_fill for FILL seconds of CPU time: recursion to a depth that
changes every few microseconds over a long run of distinct statements,
so that nearly every sample is a new stack (a stopped profiler's ring of
records fills up).  Then runs pyswap_first (compiled from a source text) for SECONDS of CPU time,
drops it (its namespace cleared, so its code object is freed at once),
and compiles pyswap_other, a function of the same size, until its code
object lies at the address pyswap_first's had (the misses kept alive
meanwhile, at most 1000 tries); prints "pyswap: swapped" (or "pyswap:
not swapped") and waits for another line.  Then runs pyswap_other for
SECONDS of CPU time and prints "pyswap: done".  Until the second line,
pyswap_other has not run: no stack has shown it.

With "late", pyswap_fill runs after pyswap_first instead of before it,
and pyswap_other runs right after the swap, before "pyswap: swapped":
a profiler stopped meanwhile has pyswap_first's stacks and copies, then
a full ring, then pyswap_other's stacks at the same address, to read all
at once.
"""
import sys
import time

LOOP = ("    t = 0\n"
        "    while time.thread_time() < end:\n"
        "        for i in range(2000):\n"
        "            t = (t * 31 + i) & 0xffffffff\n"
        "    return t\n")


FILL = ("def pyswap_fill(depth, end):\n"
        "    if depth > 0:\n"
        "        return pyswap_fill(depth - 1, end)\n"
        "    t = 0\n" +
        "".join("    t = (t * 31 + %d) & 0xffffffff\n" % i for i in range(300)) +
        "    return t\n")


def fill(seconds):
    """Run pyswap_fill at depths 0..29 for @seconds of CPU time."""
    ns = {}
    exec(compile(FILL, "<pyswap_fill>", "exec"), ns)
    end = time.thread_time() + seconds
    depth = 0
    while time.thread_time() < end:
        ns["pyswap_fill"](depth, end)
        depth = (depth + 7) % 30


def make(name):
    """A new function @name running LOOP, and its namespace."""
    ns = {"time": time}
    exec(compile("def %s(end):\n%s" % (name, LOOP), "<%s>" % name, "exec"), ns)
    return ns[name], ns


def main():
    seconds = float(sys.argv[1])
    late = len(sys.argv) > 3 and sys.argv[3] == "late"
    print("pyswap: ready", flush=True)
    sys.stdin.readline()
    if len(sys.argv) > 2 and not late:
        fill(float(sys.argv[2]))
    first, ns = make("pyswap_first")
    addr = id(first.__code__)
    first(time.thread_time() + seconds)
    if late:
        fill(float(sys.argv[2]))
    ns.clear()      # the function and its globals refer to each other
    del ns, first
    kept = []
    other = None
    for _ in range(1000):
        fn, ns = make("pyswap_other")
        if id(fn.__code__) == addr:
            other = fn
            break
        kept.append((fn, ns))
    if other and late:
        other(time.thread_time() + seconds)
    print("pyswap: swapped" if other else "pyswap: not swapped", flush=True)
    sys.stdin.readline()
    if other and not late:
        other(time.thread_time() + seconds)
    print("pyswap: done", flush=True)


if __name__ == "__main__":
    main()
