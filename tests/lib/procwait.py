#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""procwait.py - owns the waiting the integration tests do on other
processes: for a workload to say it is ready, and for a bpfprof run to have
attached its sampling events, so a test releases its workload only once the
profiler sees it.  Standard library only.

  procwait.py ready FILE [TIMEOUT]
      wait until FILE has a line "ready PID"; print PID
  procwait.py attached PID [PID...] [--timeout S]
      wait until every PID (a running bpfprof) holds one perf event per
      online CPU (they are opened last, after the BPF program and the
      process tracepoints are attached); exit 1 if one exits first
Exit 0 when done, 1 on timeout (with a line on stderr saying what).
"""
import os
import sys
import time


def online_cpus():
    try:
        text = open("/sys/devices/system/cpu/online").read().strip()
    except OSError:
        return os.cpu_count() or 1
    n = 0
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def perf_event_fds(pid):
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:[perf_event]":
                    n += 1
            except OSError:
                pass
    except OSError:
        return None             # gone
    return n


def wait_ready(path, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(path) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == "ready":
                        print(parts[1])
                        return 0
        except OSError:
            pass
        time.sleep(0.02)
    print("procwait: no 'ready PID' line in %s after %g s" % (path, timeout), file=sys.stderr)
    return 1


def wait_attached(pids, timeout):
    want = online_cpus()
    end = time.monotonic() + timeout
    pending = set(pids)
    while pending and time.monotonic() < end:
        for pid in list(pending):
            n = perf_event_fds(pid)
            if n is None:
                print("procwait: process %d exited before it attached" % pid, file=sys.stderr)
                return 1
            if n >= want:
                pending.discard(pid)
        if pending:
            time.sleep(0.02)
    if pending:
        print("procwait: %s not attached after %g s" % (sorted(pending), timeout), file=sys.stderr)
        return 1
    return 0


def main(argv):
    timeout = 30.0
    if "--timeout" in argv:
        i = argv.index("--timeout")
        timeout = float(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) in (2, 3) and argv[0] == "ready":
        return wait_ready(argv[1], float(argv[2]) if len(argv) == 3 else timeout)
    if len(argv) >= 2 and argv[0] == "attached":
        return wait_attached([int(p) for p in argv[1:]], timeout)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
