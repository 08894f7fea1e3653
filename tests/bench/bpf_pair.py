#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""bpf_pair.py - compares the BPF program of two bpfprof builds on the
same work at the same time: what each build's on_sample costs per sample
(kernel.bpf_stats_enabled: run_time_ns / run_cnt, read with bpftool).

  bpf_pair.py A B [--reps N] [--rounds N | --pygaps SECONDS] [-- BPFPROF_ARGS...]

A and B are bpfprof binaries at different paths (the plugins come from
BPFPROF_PLUGIN_PATH, default the plugins/ beside A, else build/plugins of
this tree).  Per
repetition, tests/workloads/pyburn.py (PYBURN_ROUNDS=N: new stacks all
along, as its Python frames carry their instruction), or with --pygaps
tests/workloads/pygaps.py (one loop, its stacks known after the first
samples), runs under /usr/bin/python3.11 on the last CPU; A and B attach to it with
`-p PID -C LAST -F 999` (and BPFPROF_ARGS), both from CPU 0, the one
started first alternating; after a second's settling, each program's
counters are read until the work ends.  Both programs sample the same
thread in the same seconds, so what the shared machine does meanwhile
hits both alike: on a noisy VM, where one build's runs alone vary by
+-15%, the B/A ratio of a pair varies by ~5%.  Prints each pair and the
median ratio.  For docs/PERFORMANCE.md's tables of BPF changes; not part
of `make bench` (it needs two builds).  Root.
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import prog_id, prog_show  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3.11"
PYBURN = os.path.join(SRC, "tests", "workloads", "pyburn.py")
PYGAPS = os.path.join(SRC, "tests", "workloads", "pygaps.py")
KNOB = "/proc/sys/kernel/bpf_stats_enabled"


def on_sample_stats(prog):
    """(run_cnt, run_time_ns) of BPF program id @prog, or None."""
    info = prog_show(prog) if prog else {}
    if "id" not in info:
        return None
    return (info.get("run_cnt", 0), info.get("run_time_ns", 0))  # 0 runs: not shown


def start_work(a, env, cpu):
    """The workload on CPU @cpu, started: pyburn (running), or pygaps
    (waiting for its go)."""
    if a.pygaps:
        w = subprocess.Popen(["taskset", "-c", str(cpu), PY, PYGAPS, str(a.pygaps)], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if "pygaps: ready" not in w.stdout.readline():
            raise RuntimeError("pygaps did not start")
        return w
    w = subprocess.Popen(["taskset", "-c", str(cpu), PY, PYBURN, "0"], env=env,
                         stdout=subprocess.PIPE, text=True)
    if "pyburn: start" not in w.stdout.readline():
        raise RuntimeError("pyburn did not start")
    return w


def one_pair(a, i, env, cpu, out):
    w = start_work(a, env, cpu)
    procs = {}
    try:
        for name in (("A", "B") if i % 2 == 0 else ("B", "A")):
            exe = a.a if name == "A" else a.b
            procs[name] = subprocess.Popen(
                ["taskset", "-c", "0", exe, "-q", "-C", str(cpu), "-F", "999",
                 "-p", str(w.pid), "-o", os.path.join(out, name + ".prof")] + a.args,
                env=env, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        progs = {n: prog_id(p.pid, "on_sample") for n, p in procs.items()}
        first = {n: on_sample_stats(progs[n]) for n in procs}
        if a.pygaps:
            w.stdin.write("go\n")
            w.stdin.flush()
        last = dict(first)
        while w.poll() is None:
            now = {n: on_sample_stats(progs[n]) for n in procs}
            if all(now.values()):
                last = now
            time.sleep(0.2)
        if not all(first.values()) or not all(last.values()):
            raise RuntimeError("no on_sample statistics (is each bpfprof running?)")
        ns = {n: (last[n][1] - first[n][1]) / max(1, last[n][0] - first[n][0]) for n in procs}
        runs = last["A"][0] - first["A"][0]
        return ns["A"], ns["B"], runs
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
                p.wait()
        if w.poll() is None:
            w.kill()
            w.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=1500)
    ap.add_argument("--pygaps", type=float, metavar="SECONDS",
                    help="profile tests/workloads/pygaps.py's loop (sample_cost.py's workload,"
                    " whose stacks are all known after its first samples) for SECONDS"
                    " instead of pyburn")
    ap.add_argument("args", nargs="*")
    a = ap.parse_args()
    a.a, a.b = os.path.realpath(a.a), os.path.realpath(a.b)
    if a.a == a.b:
        sys.exit("bpf_pair.py: A and B must be different files (copy one)")
    cpu = (os.cpu_count() or 1) - 1
    if cpu < 1:
        sys.exit("bpf_pair.py: needs 2 CPUs")
    env = dict(os.environ, PYBURN_ROUNDS=str(a.rounds))
    plugins = os.path.join(os.path.dirname(a.a), "plugins")
    if not os.path.isdir(plugins):
        plugins = os.path.join(SRC, "build", "plugins")
    env.setdefault("BPFPROF_PLUGIN_PATH", plugins)
    out = tempfile.mkdtemp(prefix="bpf-pair.")
    with open(KNOB) as f:
        old = f.read().strip()
    ratios = []
    try:
        with open(KNOB, "w") as f:
            f.write("1")
        for i in range(a.reps):
            ta, tb, runs = one_pair(a, i, env, cpu, out)
            ratios.append(tb / ta)
            print("pair %d: A %.0f ns, B %.0f ns per sample (%d samples), B/A %.3f"
                  % (i + 1, ta, tb, runs, tb / ta), flush=True)
    finally:
        with open(KNOB, "w") as f:
            f.write(old)
        subprocess.run(["rm", "-rf", out])
    print("median B/A %.3f over %d pairs" % (statistics.median(ratios), len(ratios)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
