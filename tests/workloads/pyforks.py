# SPDX-License-Identifier: BSD-2-Clause
"""pyforks.py - two forked CPython children running the same Python code,
for tests/integration/python_reuse.sh part 3.

  pyforks.py SECONDS

The parent calls pyforks_spawn(), which forks twice (os.fork(), no exec);
each child returns through the same frames and runs pyforks_worker() for
SECONDS of CPU time, then exits.  The children's code objects are the
parent's, at the same addresses, and their stacks are the same frames: a
profiler that names a Python frame from one child's reads in the other's
samples, or not at all, shows it here.  Prints "pids A B" and, once both
have finished, "done".
"""
import os
import sys
import time


def pyforks_worker(seconds):
    t = 0
    end = time.process_time() + seconds
    while time.process_time() < end:
        for i in range(2000):
            t = (t * 31 + i) & 0xFFFFFFFF
    return t


def pyforks_spawn(seconds):
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            pyforks_worker(seconds)
            os._exit(0)
        pids.append(pid)
    return pids


def main():
    seconds = float(sys.argv[1])
    pids = pyforks_spawn(seconds)
    print("pids %d %d" % tuple(pids), flush=True)
    for pid in pids:
        os.waitpid(pid, 0)
    print("done")


if __name__ == "__main__":
    main()
