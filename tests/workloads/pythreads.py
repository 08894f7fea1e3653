# SPDX-License-Identifier: BSD-2-Clause
"""pythreads.py - three CPython threads doing different work, for
tests/integration/python_threads.sh.

  pythreads.py SECONDS TRUTH_FILE

Threads pw-a, pw-b and pw-c (named with prctl(PR_SET_NAME), so that the
profile tells them apart) run pyworker_a, pyworker_b and pyworker_c, all
the same loop (spin), 3, 2 and 1 sixths of about SECONDS of work (the
iterations a calibration run says); they share the GIL, so each gets CPU
time as its work asks.  Each thread measures its own CPU time
(time.thread_time_ns()); TRUTH_FILE gets one line per thread:

  pythreads: NAME CPU_NS
"""
import ctypes
import sys
import threading
import time

MASK = 0xFFFFFFFFFFFFFFFF
cpu = {}

if not hasattr(time, "thread_time_ns"):         # CPython 3.6
    def _thread_time_ns():
        return int(time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID) * 1e9)
    time.thread_time_ns = _thread_time_ns


def spin(n, x):
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) & MASK
    return x


def pyworker_a(n):
    return spin(n, 1)


def pyworker_b(n):
    return spin(n, 2)


def pyworker_c(n):
    return spin(n, 3)


def worker(name, fn, rounds):
    libc = ctypes.CDLL(None)
    libc.prctl(15, name.encode(), 0, 0, 0)
    t0 = time.thread_time_ns()
    for _ in range(rounds):
        fn(2000)
    cpu[name] = time.thread_time_ns() - t0


def main():
    seconds = float(sys.argv[1])
    t0 = time.thread_time_ns()
    spin(200000, 1)
    per_round = (time.thread_time_ns() - t0) / 100.0    # ns of spin(2000)
    rounds = int(seconds * 1e9 / per_round / 6)
    threads = [threading.Thread(target=worker, args=(n, f, w * rounds))
               for n, f, w in (("pw-a", pyworker_a, 3), ("pw-b", pyworker_b, 2),
                               ("pw-c", pyworker_c, 1))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(sys.argv[2], "w") as f:
        for name in sorted(cpu):
            f.write("pythreads: %s %d\n" % (name, cpu[name]))


if __name__ == "__main__":
    main()
