#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""python.py - the cost of Python frames (issue 17) for tests/bench/run:
the pyburn workload (tests/workloads/pyburn.py, a fixed number of rounds
with PYBURN_ROUNDS) under Debian's python3.11, run alone, under
`perf record -e cpu-clock -g` and under bpfprof with its default options
(Python frames on), both at the same frequency and in command mode
(`PROFILER -- python3.11 pyburn.py`).  The three runs of a repetition are
taken back to back in a rotating order; per repetition, the slowdown of
each profiler is the workload's wall time (and its own CPU time) over the
unprofiled run's, and the profilers' own CPU (user + system of the perf or
bpfprof process, whole run: start-up, sampling, writing, i.e. wait4()'s
usage minus the CPU python reported just before its exit, minus what
python's own exit costs in the unprofiled run (the same for both
profilers); and while the workload worked, from /proc/PID/task/*/schedstat)
is compared as a ratio.  bpfprof keeps the unwind tables it builds in an
on-disk cache by build-id, as perf record keeps the binaries it saw in
its build-id cache (~/.debug; `perf --buildid-dir`): seven first runs
of each (--cold-reps), each with new empty caches, in pairs whose order
alternates (the first of a pair may read files from disk that the second
finds in the page cache), give the cold cost of both (median, and the
median of the pairs' ratios), and the repetitions find the last caches
filled.
The cost of taking a sample in the kernel (perf's callchain walk, the BPF
program) is charged to the workload: its CPU time over the one alone; and
measured apart, per sample, in the kernel's sample handler
(tests/bench/kernel_time.py: the cpu-clock timer's callback, for the
tasks named like the interpreter).
Medians over the repetitions.  bpfprof's -v lines give the frames read
per sample with Python frames and the caches' hit rates.

  python.py --build BUILD [--reps N] [--cold-reps N] [--rounds N] [--freq HZ]
            [--quick] [--json FILE] [--python PATH]

--python: another interpreter than Debian's python3.11 (e.g. a pyenv 3.10,
whose frames the BPF program reads one by one).

Prints a Markdown section on stdout (progress on stderr).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_time  # noqa: E402
from overhead import (bench_parser, log, med, prog_id, prog_show, quartiles,  # noqa: E402
                      rotating_reps, task_cpu_ns)

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3.11"
PYBURN = os.path.join(SRC, "tests", "workloads", "pyburn.py")
VARIANTS = ("none", "perf", "bpfprof")


def command(variant, a, out):
    if variant == "perf":
        return ["perf", "--buildid-dir", a.buildid_dir, "record", "-e", "cpu-clock",
                "-F", str(a.freq), "-g", "-q",
                "-o", os.path.join(out, "perf.data"), "--"]
    if variant == "bpfprof":
        return [os.path.join(a.build, "bpfprof"), "-v", "-F", str(a.freq),
                "--unwind-cache", a.cache, "-o", os.path.join(out, "bpfprof.prof"), "--"]
    return []


def parse_python(err):
    """What bpfprof -v says of Python stacks."""
    r = {}
    m = re.search(r"Python: (\d+) samples of (\d+) CPython processes, (\d+) with Python frames",
                  err)
    if m:
        r["py_samples"], r["py_with"] = int(m.group(1)), int(m.group(3))
    m = re.search(r"Python: ([\d.]+) frames read per sample with Python frames, in ([\d.]+) "
                  r"reads of the process's memory; thread states: "
                  r"(\d+) cache hits, (\d+) list walks \(([\d.]+)% hits\).*?code objects: "
                  r"(\d+) named, (\d+) unreadable, (\d+) frames in new stacks \(([\d.]+)% "
                  r"known already\)", err)
    if m:
        r["frames_per_sample"] = float(m.group(1))
        r["reads_per_sample"] = float(m.group(2))
        r["tstate_hit_pct"] = float(m.group(5))
        r["codes_named"] = int(m.group(6))
        r["frames_in_new_stacks"] = int(m.group(8))
        r["code_hit_pct"] = float(m.group(9))
    m = re.search(r"bpfprof: (\d+) samples \((\d+) seen\)", err)
    if m:
        r["samples"] = int(m.group(1))
    m = re.search(r"own CPU ([\d.]+) s: ([\d.]+) s to start.*?, ([\d.]+) s sampling.*?, "
                  r"([\d.]+) s writing, ([\d.]+) s to tear down", err)
    if m:
        r["own_total"], r["own_start"], r["own_sampling"], r["own_writing"], r["own_teardown"] = \
            (float(g) for g in m.groups())
    m = re.search(r"s sampling and draining the maps \((\d+) wake-ups\)", err)
    if m:
        r["wakeups"] = int(m.group(1))
    m = re.search(r"walk memo: ([\d.]+) frames per walk", err)
    if m:
        r["memo_frames_per_walk"] = float(m.group(1))
    m = re.search(r"unwind rows: ([\d.]+) per walk", err)
    if m:
        r["rows_per_walk"] = float(m.group(1))
    m = re.search(r"(\d+) tables from the on-disk cache", err)
    if m:
        r["cached_tables"] = int(m.group(1))
    m = re.search(r"frames lost: (.*)", err)
    r["lost"] = m.group(1).strip() if m else ""
    return r


def run_one(variant, a, tmp):
    out = tempfile.mkdtemp(prefix="py.", dir=tmp)
    env = dict(os.environ, PYBURN_ROUNDS=str(a.rounds))
    cmd = command(variant, a, out) + [PY, PYBURN, "0"]
    errf = open(os.path.join(out, "stderr"), "w+")
    k = kernel_time.start(a.ktime, "comm=" + os.path.basename(PY)) if variant != "none" else None
    p = subprocess.Popen(cmd, cwd=out, env=env, stdout=subprocess.PIPE, stderr=errf, text=True)
    res = {"variant": variant}
    try:
        line = p.stdout.readline()
        if "pyburn: start" not in line:
            raise RuntimeError("%s: pyburn did not start: %r" % (variant, line))
        cpu0 = task_cpu_ns(p.pid) if variant != "none" else None
        line = p.stdout.readline()
        cpu1 = task_cpu_ns(p.pid) if variant != "none" else None
        m = re.search(r"cpu_s ([\d.]+) wall_s ([\d.]+) process_cpu_s ([\d.]+)", line)
        if not m:
            raise RuntimeError("%s: pyburn output %r" % (variant, line))
        res["cpu"], res["wall"] = float(m.group(1)), float(m.group(2))
        res["python_cpu"] = float(m.group(3))
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if k:
            res.update(kernel_time.stop(k))
            k = None
        errf.seek(0)
        err = errf.read()
        if p.returncode:
            raise RuntimeError("%s exited %d: %s" % (variant, p.returncode, err[-800:]))
        # wait4()'s usage includes the profiler's reaped child, python:
        # take away what python used (all but its exit; the exit is
        # measured alone in the "none" runs and taken away in markdown())
        res["prof_cpu_total"] = ru.ru_utime + ru.ru_stime - res["python_cpu"]
        if variant != "none":
            if cpu0 is not None and cpu1 is not None:
                # schedstat of the profiler's threads only (python is
                # another process)
                res["prof_cpu_run"] = (cpu1 - cpu0) / 1e9
        if variant == "bpfprof":
            res.update(parse_python(err))
    finally:
        for q in (p, k):
            if q and q.poll() is None:
                q.kill()
                q.wait()
        errf.close()
        shutil.rmtree(out, ignore_errors=True)
    return res


def bpf_program_time(a, tmp):
    """One bpfprof run with kernel.bpf_stats_enabled, sampling only CPU 1
    where pyburn runs (taskset): (samples, ns per run of on_sample), or
    None.  A run apart: the statistics cost two clock reads per run."""
    knob = "/proc/sys/kernel/bpf_stats_enabled"
    out = tempfile.mkdtemp(prefix="py.", dir=tmp)
    cmd = [os.path.join(a.build, "bpfprof"), "-q", "-F", str(a.freq), "-C", "1",
           "--unwind-cache", a.cache, "-o", os.path.join(out, "b.prof"), "--",
           "taskset", "-c", "1", PY, PYBURN, "0"]
    env = dict(os.environ, PYBURN_ROUNDS=str(a.rounds))
    last = old = pid = None
    try:
        with open(knob) as f:
            old = f.read().strip()
        with open(knob, "w") as f:
            f.write("1")
        p = subprocess.Popen(cmd, cwd=out, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        while p.poll() is None:
            pid = pid or prog_id(p.pid, "on_sample")
            info = prog_show(pid) if pid else {}
            if info.get("run_cnt"):
                last = (info["run_cnt"], info["run_time_ns"])
            time.sleep(0.25)
    except OSError as e:
        log("python: no BPF run-time statistics: %s" % e)
        return None
    finally:
        if old is not None:
            with open(knob, "w") as f:
                f.write(old)
        shutil.rmtree(out, ignore_errors=True)
    return (last[0], last[1] / last[0]) if last else None


def fmt(x, spec="%.3f"):
    return spec % x if x is not None else "–"


def markdown(a, reps):
    def col(v, key):
        return [r[v].get(key) for r in reps]

    slow = {v: med([r[v]["wall"] / r["none"]["wall"] for r in reps]) for v in ("perf", "bpfprof")}
    slow_cpu = {v: med([r[v]["cpu"] / r["none"]["cpu"] for r in reps]) for v in ("perf", "bpfprof")}
    # python's own exit, charged to whoever reaps it: measured alone
    exit_cpu = med(col("none", "prof_cpu_total")) or 0.0
    tot = {v: med([x - exit_cpu for x in col(v, "prof_cpu_total")]) for v in ("perf", "bpfprof")}
    run = {v: med(col(v, "prof_cpu_run")) for v in ("perf", "bpfprof")}
    tot_ratio = med([(r["bpfprof"]["prof_cpu_total"] - exit_cpu) /
                     (r["perf"]["prof_cpu_total"] - exit_cpu) for r in reps])
    cold = {v: med([r["prof_cpu_total"] - exit_cpu for r in a.cold[v]])
            for v in ("perf", "bpfprof")}
    cold_ratios = [(b["prof_cpu_total"] - exit_cpu) / (p["prof_cpu_total"] - exit_cpu)
                   for p, b in zip(a.cold["perf"], a.cold["bpfprof"])]
    cold_ratio = med(cold_ratios)
    spread = {v: quartiles([(r[v]["wall"] / r["none"]["wall"] - 1) * 100 for r in reps])
              for v in ("perf", "bpfprof")}
    kt = {v: col(v, "ktime_mean_us") for v in ("perf", "bpfprof")}
    kt_ratio = med([b / p for b, p in zip(kt["bpfprof"], kt["perf"]) if b and p])
    run_ratio = med([r["bpfprof"]["prof_cpu_run"] / r["perf"]["prof_cpu_run"]
                     for r in reps if r["perf"].get("prof_cpu_run")])
    base_wall = med(col("none", "wall"))
    b = {k: med(col("bpfprof", k)) for k in ("frames_per_sample", "reads_per_sample",
                                              "tstate_hit_pct",
                                              "code_hit_pct", "samples", "py_with",
                                              "codes_named", "own_start", "own_sampling",
                                              "own_writing", "own_teardown", "cached_tables",
                                              "memo_frames_per_walk", "rows_per_walk",
                                              "wakeups")}
    lines = [
        "### Python frames (issue 17): pyburn under %s at %d Hz, %d paired repetitions"
        % (PY, a.freq, len(reps)),
        "",
        "Workload: tests/workloads/pyburn.py, PYBURN_ROUNDS=%d (%s s wall, %s s CPU alone);"
        " each profiler in command mode (`PROFILER -- %s pyburn.py`); bpfprof with its"
        " default options (gperftools output, auto unwinding, Python frames)."
        % (a.rounds, fmt(base_wall, "%.2f"), fmt(med(col("none", "cpu")), "%.2f"), PY),
        "",
        "| | perf record -g | bpfprof | bpfprof / perf |",
        "|---|---:|---:|---:|",
        "| workload wall time / alone (median of pairs) | %s | %s | |"
        % (fmt(slow["perf"]), fmt(slow["bpfprof"])),
        "| workload CPU time / alone | %s | %s | |" % (fmt(slow_cpu["perf"]),
                                                        fmt(slow_cpu["bpfprof"])),
        "| slowdown (wall, %%; median [quartiles] of the pairs) | %s [%s] | %s [%s] | %s |"
        % (fmt((slow["perf"] - 1) * 100, "%.1f") if slow["perf"] else "–", spread["perf"],
           fmt((slow["bpfprof"] - 1) * 100, "%.1f") if slow["bpfprof"] else "–",
           spread["bpfprof"],
           fmt((slow["bpfprof"] - 1) / (slow["perf"] - 1), "%.2f")
           if slow["perf"] and slow["bpfprof"] and slow["perf"] > 1 else "–"),
        "| in the kernel's sample handler, us per sample (the timer's callback: perf's"
        " callchain walk and output, bpfprof's BPF program; mean per run) | %s | %s | %s |"
        % (fmt(med(kt["perf"]), "%.2f"), fmt(med(kt["bpfprof"]), "%.2f"),
           fmt(kt_ratio, "%.2f")),
        "| profiler CPU s while the workload ran | %s | %s | %s |"
        % (fmt(run["perf"]), fmt(run["bpfprof"]), fmt(run_ratio, "%.2f")),
        "| profiler CPU s, whole run, caches filled (start-up, writing; python's exit,"
        " %s s, taken away) | %s | %s | %s |"
        % (fmt(exit_cpu), fmt(tot["perf"]), fmt(tot["bpfprof"]), fmt(tot_ratio, "%.2f")),
        "| profiler CPU s, whole run, first run with an empty cache (perf's build-id"
        " cache, bpfprof's caches; median of %d pairs, each with new caches, the order"
        " alternated; the pairs' ratios %s) | %s | %s | %s |"
        % (len(a.cold["perf"]), " ".join("%.2f" % r for r in sorted(cold_ratios)),
           fmt(cold["perf"]), fmt(cold["bpfprof"]), fmt(cold_ratio, "%.2f")),
        "",
        "BPF program on_sample (one run apart, kernel.bpf_stats_enabled, sampling only the"
        " workload's CPU): %s per sample over %s samples (the table's kernel row times the"
        " whole timer callback around it, for both profilers)."
        % (fmt(a.bpf_time[1] / 1000, "%.1f us") if a.bpf_time else "–",
           fmt(a.bpf_time[0], "%d") if a.bpf_time else "–"),
        "",
        "bpfprof's own account (-v, medians): %s s to start (BPF load, first tables), %s s"
        " sampling and draining the maps (%s wake-ups), %s s writing and the summary, %s s"
        " to tear down; %s unwind tables read from the cache (cold run: %s)."
        % (fmt(b["own_start"]), fmt(b["own_sampling"]), fmt(b["wakeups"], "%d"),
           fmt(b["own_writing"]),
           fmt(b["own_teardown"]), fmt(b["cached_tables"], "%d"),
           fmt(a.cold["bpfprof"][0].get("cached_tables"), "%d")),
        "",
        "bpfprof -v (medians): %s samples, %s with Python frames; %s frames read per"
        " sample with Python frames, in %s reads of the process's memory; thread-state"
        " cache %s%% hits; code objects: %s named,"
        " %s%% of the Python frames in new stacks known already; native walk: %s rows"
        " looked up and %s frames from the thread's walk memo per walk."
        % (fmt(b["samples"], "%d"), fmt(b["py_with"], "%d"),
           fmt(b["frames_per_sample"], "%.1f"), fmt(b["reads_per_sample"], "%.1f"),
           fmt(b["tstate_hit_pct"], "%.1f"),
           fmt(b["codes_named"], "%d"), fmt(b["code_hit_pct"], "%.1f"),
           fmt(b["rows_per_walk"], "%.1f"), fmt(b["memo_frames_per_walk"], "%.1f")),
        "",
        "Per repetition (wall s: alone / perf / bpfprof; profiler CPU s while working:"
        " perf / bpfprof):",
        "",
    ]
    for i, r in enumerate(reps):
        lines.append("- %d: %.3f / %.3f / %.3f; %s / %s" % (
            i + 1, r["none"]["wall"], r["perf"]["wall"], r["bpfprof"]["wall"],
            fmt(r["perf"].get("prof_cpu_run")), fmt(r["bpfprof"].get("prof_cpu_run"))))
    return "\n".join(lines) + "\n"


def set_python(path):
    global PY
    PY = path


def main():
    ap = bench_parser()
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--cold-reps", type=int)
    ap.add_argument("--python", default=PY)
    a = ap.parse_args()
    set_python(a.python)
    a.build = os.path.realpath(a.build)
    a.reps = a.reps or (2 if a.quick else 7)
    a.rounds = a.rounds or (300 if a.quick else 2500)
    a.cold_reps = a.cold_reps or (1 if a.quick else 7)
    if not os.access(PY, os.X_OK) or not shutil.which("perf"):
        print("### Python frames: skipped (needs %s and perf)\n" % PY)
        return 0
    a.ktime = kernel_time.build_tool(a.build, "python")
    tmp = tempfile.mkdtemp(prefix="bpfprof-pybench.", dir=a.tmpdir)
    try:
        # first runs, each profiler with empty caches of its own; the
        # repetitions then use the last of them, filled
        a.cold = {"perf": [], "bpfprof": []}
        for i in range(a.cold_reps):
            a.cache = os.path.join(tmp, "cfi-cache.%d" % i)
            a.buildid_dir = os.path.join(tmp, "perf-buildid.%d" % i)
            os.mkdir(a.buildid_dir)
            for v in ("perf", "bpfprof") if i % 2 == 0 else ("bpfprof", "perf"):
                log("python: first %s run %d/%d, empty cache" % (v, i + 1, a.cold_reps))
                a.cold[v].append(run_one(v, a, tmp))
        reps = rotating_reps(VARIANTS, a.reps, lambda v: run_one(v, a, tmp), "python")
        log("python: BPF program time per sample")
        a.bpf_time = bpf_program_time(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"reps": reps, "cold": a.cold}, f, indent=1)
    sys.stdout.write(markdown(a, reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
