# SPDX-License-Identifier: BSD-2-Clause
"""pyforkpool.py - short-lived forked CPython children (os.fork(), no
exec), as a fork-based process pool makes them, for
tests/integration/young_processes.sh part (e).

  pyforkpool.py CHILDREN MS

The parent prints "ready PID" and waits for a line on its standard
input (the test's go, once the profiler samples), runs pyforkpool_parent
for 1.5 s of CPU time (so that it is older than a second and its tables
and interpreter are known), then forks CHILDREN children, two at a time;
each runs pyforkpool_task for MS milliseconds of its CPU time and leaves
with os._exit(0).  Prints "done CHILDREN" at the end.
"""
import os
import sys
import time


def pyforkpool_spin(seconds):
    t = 0
    end = time.process_time() + seconds
    while time.process_time() < end:
        for i in range(500):
            t = (t * 31 + i) & 0xFFFFFFFF
    return t


def pyforkpool_parent():
    return pyforkpool_spin(1.5)


def pyforkpool_task(ms):
    return pyforkpool_spin(ms / 1000.0)


def main():
    children, ms = int(sys.argv[1]), float(sys.argv[2])
    print("ready %d" % os.getpid(), flush=True)
    sys.stdin.readline()
    pyforkpool_parent()
    running = []
    for _ in range(children):
        if len(running) == 2:
            os.waitpid(running.pop(0), 0)
        pid = os.fork()
        if pid == 0:
            pyforkpool_task(ms)
            os._exit(0)
        running.append(pid)
    for pid in running:
        os.waitpid(pid, 0)
    print("done %d" % children, flush=True)


if __name__ == "__main__":
    main()
