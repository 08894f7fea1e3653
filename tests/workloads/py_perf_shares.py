# SPDX-License-Identifier: BSD-2-Clause
"""py_perf_shares.py - a Python workload with a known profile, for the perf
map test of CPython 3.12's `-X perf` trampolines
(tests/integration/jit_perfmap_python.sh): burn_a and burn_b run the same
loop body (a 31-bit LCG step) and get 70% and 30% of the work by their
iteration counts, in chunks of pseudo-random length.

usage: python3.12 -X perf py_perf_shares.py [-s SECONDS] [--wait]
  prints "ready PID"; with --wait, waits for SIGUSR2 (so that profilers
  attach first); burns for SECONDS (default 3) of wall time, then prints
  "truth burn_a PCT burn_b PCT burned PCT": each function's share of the
  CPU time spent in the two as measured around each call
  (thread_time_ns: time the machine gave to others does not count), and
  that time as a share of all the CPU time the process used, start-up
  included (process_time_ns).
"""
import os
import signal
import sys
import time


def burn_a(n, x):
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0x7fffffff
    return x


def burn_b(n, x):
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0x7fffffff
    return x


def run(secs):
    clock = time.thread_time_ns
    end = time.monotonic_ns() + int(secs * 1e9)
    t0 = clock()
    x, seed, ta, tb, now = 1, 7, 0, 0, t0
    while time.monotonic_ns() < end:
        seed = (seed * 69069 + 1) & 0xffffffff
        n = 300 + seed % 300
        a0 = clock()
        x = burn_a(7 * n, x)
        a1 = clock()
        x = burn_b(3 * n, x)
        now = clock()
        ta += a1 - a0
        tb += now - a1
    both = ta + tb
    print("truth burn_a %.2f burn_b %.2f burned %.2f x %d"
          % (100 * ta / both, 100 * tb / both, 100 * both / time.process_time_ns(), x))


if "--wait" in sys.argv:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
print("ready %d" % os.getpid(), flush=True)
if "--wait" in sys.argv:
    signal.sigwait({signal.SIGUSR2})
secs = float(sys.argv[sys.argv.index("-s") + 1]) if "-s" in sys.argv else 3.0
run(secs)
