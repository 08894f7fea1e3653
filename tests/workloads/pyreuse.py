# SPDX-License-Identifier: BSD-2-Clause
"""pyreuse.py - Python functions whose code objects are freed and made
again at the same addresses under other names, for
tests/integration/python_reuse.sh.

  pyreuse.py SECONDS

Each round compiles a fresh source text defining pyreuse_alpha (6 rounds
in 10, chosen by a seeded LCG) or pyreuse_beta, runs it on a chunk of
pseudo-random length, and drops it (the function's namespace is cleared,
so its code object is freed at once).  The two have code objects of the
same size, so the allocator hands the address one of them had to the
next, whichever it is: a profiler that names a code object by its
address alone names the other's samples wrongly.  Their hot loops lie at
different instruction offsets (the padding comes before the loop in
alpha, after it in beta), so a stack of one is never a stack of the
other.  Each function's CPU time is measured around its calls
(time.thread_time_ns()).  Prints, at the end:

  truth pyreuse_alpha PCT pyreuse_beta PCT
  reuse ADDRESSES addresses, SWITCHES switches

where SWITCHES counts the rounds whose code object lies at an address
that the other function's code object had in the round before it there.
"""
import sys
import time

PAD = "    x = 1\n" * 16
LOOP = ("    t = 0\n"
        "    for i in range(n):\n"
        "        t = (t * 31 + i) & 0xffffffff\n")


def source(name):
    body = PAD + LOOP if name == "pyreuse_alpha" else LOOP + PAD
    return "def %s(n):\n%s    return t\n" % (name, body)


def main():
    seconds = float(sys.argv[1])
    end = time.monotonic() + seconds
    seed = 12345
    cpu = {"pyreuse_alpha": 0, "pyreuse_beta": 0}
    last = {}
    switches = 0
    while time.monotonic() < end:
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        name = "pyreuse_alpha" if (seed >> 8) % 10 < 6 else "pyreuse_beta"
        ns = {}
        exec(compile(source(name), "<%s>" % name, "exec"), ns)
        fn = ns[name]
        addr = id(fn.__code__)
        if last.get(addr, name) != name:
            switches += 1
        last[addr] = name
        t0 = time.thread_time_ns()
        fn(20000 + (seed >> 4) % 20000)
        cpu[name] += time.thread_time_ns() - t0
        ns.clear()      # the function and its globals refer to each other
        del ns, fn
    total = sum(cpu.values()) or 1
    print("truth pyreuse_alpha %.2f pyreuse_beta %.2f"
          % (100.0 * cpu["pyreuse_alpha"] / total, 100.0 * cpu["pyreuse_beta"] / total))
    print("reuse %d addresses, %d switches" % (len(last), switches))


if __name__ == "__main__":
    main()
