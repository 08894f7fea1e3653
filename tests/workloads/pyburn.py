# SPDX-License-Identifier: BSD-2-Clause
"""pyburn.py - a CPython workload whose Python functions burn known shares
of CPU, for tests/integration/python_stacks.sh and the Python benchmark.

  pyburn.py SECONDS [TRUTH_FILE]

With PYBURN_ROUNDS=N in the environment the work is fixed instead (N
rounds of the loop below, SECONDS ignored), for the benchmark
(tests/bench/python.py): it prints "pyburn: start" when the work starts
and "pyburn: rounds N cpu_s C wall_s W process_cpu_s P" when it ends, on
stdout (P: the whole process's CPU time so far).

Calls (weights are shares of the loop iterations):

  pyburn_run                      the root of the measured work
    pyburn_outer_a   self 15      its own loop, then
      pyburn_inner_a self 30      a plain Python call
    pyburn_outer_b                json.dumps(..., default=pyburn_hook): the
      json.dumps, JSONEncoder.*   C encoder (_json) calls back into Python
        pyburn_hook               -> a second activation of the evaluator
          pyburn_inner_b self 35
    pyburn_math      self 20      its loop calls math.sqrt (C) each time

Every hot loop has the same body (a 64-bit LCG step); chunk lengths vary
pseudo-randomly so that the schedule cannot lock to the sampling timer
(/work/shared/notes/ground-truth-workloads.md).  The truth is measured,
not assumed: each function times its own loop and its whole call with
time.thread_time_ns() (this thread's CPU time, what cpu-clock samples);
a caller's self time is its whole call's less its callee's (pyburn_outer_b:
json.dumps's own work; pyburn_hook: its clock reads), and the file
TRUTH_FILE gets one line per function:

  FUNCTION SELF_NS TOTAL_NS

with pyburn_run's TOTAL_NS the whole measured work.  Standard library
only; runs on CPython 3.6 to 3.13.
"""
import json
import math
import os
import random
import sys
import time

MASK = 0xFFFFFFFFFFFFFFFF
A = 6364136223846793005
C = 1442695040888963407
self_ns = {}
total_ns = {}

if not hasattr(time, "thread_time_ns"):         # CPython 3.6
    def _thread_time_ns():
        return int(time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID) * 1e9)
    time.thread_time_ns = _thread_time_ns


def note(name, s, t):
    self_ns[name] = self_ns.get(name, 0) + s
    total_ns[name] = total_ns.get(name, 0) + t


def pyburn_inner_a(n, x):
    t0 = time.thread_time_ns()
    for _ in range(n):
        x = (x * A + C) & MASK
    t1 = time.thread_time_ns()
    note("pyburn_inner_a", t1 - t0, t1 - t0)
    return x


def pyburn_outer_a(n_self, n_inner, x):
    t0 = time.thread_time_ns()
    for _ in range(n_self):
        x = (x * A + C) & MASK
    t1 = time.thread_time_ns()
    x = pyburn_inner_a(n_inner, x) ^ 1
    note("pyburn_outer_a", t1 - t0, time.thread_time_ns() - t0)
    return x


def pyburn_inner_b(n, x):
    t0 = time.thread_time_ns()
    for _ in range(n):
        x = (x * A + C) & MASK
    t1 = time.thread_time_ns()
    note("pyburn_inner_b", t1 - t0, t1 - t0)
    return x


class Work:
    """What json cannot encode: its default hook does the work."""
    def __init__(self, n, x):
        self.n, self.x = n, x


def pyburn_hook(o):
    t0 = time.thread_time_ns()
    c0 = total_ns.get("pyburn_inner_b", 0)
    r = pyburn_inner_b(o.n, o.x) & 0xffff
    t = time.thread_time_ns() - t0
    note("pyburn_hook", t - (total_ns["pyburn_inner_b"] - c0), t)
    return r


def pyburn_outer_b(n, x):
    t0 = time.thread_time_ns()
    c0 = total_ns.get("pyburn_hook", 0)
    s = json.dumps([Work(n, x)], default=pyburn_hook)
    t = time.thread_time_ns() - t0
    # json's own work (its Python functions, the C encoder) is this
    # function's self time: what is not in the hook
    note("pyburn_outer_b", t - (total_ns["pyburn_hook"] - c0), t)
    return x ^ len(s)


def pyburn_math(n, x):
    t0 = time.thread_time_ns()
    y = 0.0
    for _ in range(n):
        x = (x * A + C) & MASK
        y += math.sqrt(x)
    t1 = time.thread_time_ns()
    note("pyburn_math", t1 - t0, t1 - t0)
    return x ^ int(y) & 1


def pyburn_run(seconds, rounds=None):
    rng = random.Random(17)
    x = 12345
    t0 = time.thread_time_ns()
    end = t0 + int(seconds * 1e9)
    # ~1 ms chunks: base iterations per weight point, varied by 0.5x..1.5x
    base = 200
    done = 0
    while (time.thread_time_ns() < end) if rounds is None else (done < rounds):
        done += 1
        jobs = [0, 1, 2]
        rng.shuffle(jobs)
        for j in jobs:
            f = 0.5 + rng.random()
            if j == 0:
                x = pyburn_outer_a(int(15 * base * f), int(30 * base * f), x)
            elif j == 1:
                x = pyburn_outer_b(int(35 * base * f), x)
            else:
                # math.sqrt's iterations cost more: fewer of them
                x = pyburn_math(int(20 * base * f * 0.6), x)
    note("pyburn_run", 0, time.thread_time_ns() - t0)
    return x


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    rounds = os.environ.get("PYBURN_ROUNDS")
    if rounds:
        print("pyburn: start", flush=True)
        c0, w0 = time.thread_time(), time.perf_counter()
        pyburn_run(0, int(rounds))
        c1, w1 = time.thread_time(), time.perf_counter()
        t = os.times()
        print("pyburn: rounds %s cpu_s %.6f wall_s %.6f process_cpu_s %.6f"
              % (rounds, c1 - c0, w1 - w0, t.user + t.system), flush=True)
    else:
        pyburn_run(seconds)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            for name in sorted(total_ns):
                f.write("%s %d %d\n" % (name, self_ns.get(name, 0), total_ns[name]))


if __name__ == "__main__":
    main()
