#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""sample_cost.py - the time each sample takes from the Python thread it
interrupts, under perf record -g and under bpfprof (issue 17's slowdown),
for tests/bench/run.

The workload's own wall or CPU time cannot rank the two profilers on a
shared virtual machine: the same work varies by ~10% from run to run,
and each profiler's slowdown at 999 Hz is ~1-2%.  So the work measures
what it loses instead: tests/workloads/pygaps.py reads the clock in a
loop six Python frames deep and adds up the gaps between consecutive
reads (each sample is one: the timer interrupt, and perf's callchain
walk and output or bpfprof's BPF program in it).  Gaps longer than
500 us (the host preempting the virtual CPU) are kept apart, so what the
host does in the meantime does not count.

Per repetition, in a rotating order: the loop alone, under
`perf record -e cpu-clock -F HZ -g -p PID` and under `bpfprof -F HZ -p
PID` (default options: auto unwinding, Python frames, gperftools output;
its unwind tables from an on-disk cache the first repetition fills); and,
to show what the callchains cost, under perf record without -g (what a
sample costs before any stack is taken) and under `bpfprof -g
--no-interpreters` (frame pointers, no Python frames).
The loop runs on the last CPU, the profilers' own processes on CPU 0
(taskset), so the profilers' user-space work does not land on the loop:
what the loop loses is what happens on its CPU at each sample.  Each
profiler attaches, settles for a second and a half, and the loop then
runs SECONDS.  Reported, medians over the repetitions:

  - the share of the loop's time in gaps (alone: the kernel's own ticks
    and interrupts);
  - time taken per sample = (gap time under the profiler - gap time of
    the run alone in the same repetition) / (HZ x SECONDS);
  - the slowdown this makes at HZ, the same difference over SECONDS;
  - the time each sample of the loop spent in the kernel's sample handler
    (the cpu-clock timer's callback, perf_swevent_hrtimer(): perf's
    callchain walk and ring-buffer output, or bpfprof's BPF program),
    measured by tests/bench/sample_kernel_time.bpf.c from the timer
    tracepoints around that callback during the loop's run: the mean per
    run, medians over the repetitions, and bpfprof's minus perf record
    -g's paired by repetition.  The gaps include the interrupt itself and
    the host's share, which cost both profilers the same and make them
    noisy (+-3 us a sample); this counts only what differs (quartiles
    over the repetitions ~0.5 us apart).
    Its two tracepoint programs run at every timer callback of the loop's
    CPU, for every variant alike.

With --busy, every CPU runs such a loop (one process each, pinned), as
on a fully subscribed node, and the profilers run where the scheduler
puts them: then a loop also loses the time the profiler's own process
takes from its CPU, so every gap counts, the long ones too (the host's
are in the loops alone of the same repetition as well, and cancel out in
the difference), and the profilers attach to all the loops (-p PID,...).

  sample_cost.py --build BUILD [--reps N] [--seconds S] [--freq HZ]
                 [--busy] [--quick] [--json FILE]

Prints a Markdown section on stdout (progress on stderr).  Needs 2 CPUs.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import bench_parser, med, quartiles, rotating_reps  # noqa: E402
import kernel_time  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3.11"
PYGAPS = os.path.join(SRC, "tests", "workloads", "pygaps.py")
VARIANTS = ("none", "perf", "bpfprof", "perf-nocg", "bpfprof-fp")
PROFILERS = VARIANTS[1:]
# What each variant runs (PID: the loop's), besides -F HZ and its output.
NAMES = {
    "perf": "perf record -g",
    "bpfprof": "bpfprof",
    "perf-nocg": "perf record, no callchain",
    "bpfprof-fp": "bpfprof -g --no-interpreters",
}
SETTLE_S = 1.5


def profiler(variant, a, pid, out):
    """The profiler of @variant attached to @pid (PID[,PID...]), on CPU 0
    (anywhere with --busy), or None."""
    if variant == "none":
        return None
    if variant.startswith("perf"):
        cmd = ["perf", "--buildid-dir", a.buildid_dir, "record", "-e", "cpu-clock",
               "-F", str(a.freq), "-q", "-p", str(pid), "-o", os.path.join(out, "perf.data")]
        if variant == "perf":
            cmd.append("-g")
    else:
        cmd = [os.path.join(a.build, "bpfprof"), "-v", "-F", str(a.freq), "-p", str(pid),
               "--unwind-cache", a.cache, "-o", os.path.join(out, "bpfprof.prof")]
        if variant == "bpfprof-fp":
            cmd += ["-g", "--no-interpreters"]
    errf = open(os.path.join(out, variant + ".err"), "w+")
    p = subprocess.Popen(([] if a.busy else ["taskset", "-c", "0"]) + cmd, cwd=out,
                         stdout=subprocess.DEVNULL, stderr=errf)
    p.errf = errf
    return p


def stop(p, variant):
    """SIGINT, wait; the profiler's stderr.  Raises if it failed (perf
    record ends by raising the SIGINT it got again, after writing)."""
    p.send_signal(signal.SIGINT)
    rc = p.wait(timeout=120)
    p.errf.seek(0)
    err = p.errf.read()
    p.errf.close()
    if rc and not (variant.startswith("perf") and rc == -signal.SIGINT):
        raise RuntimeError("%s exited %d: %s" % (variant, rc, err[-800:]))
    return err


def run_one(variant, a, tmp):
    """One run of @variant: the loops' elapsed, gap and long-gap times, summed
    over the loops (one, or one per CPU with --busy), and bpfprof's samples."""
    out = tempfile.mkdtemp(prefix="gaps.", dir=tmp)
    ws = [subprocess.Popen(["taskset", "-c", str(cpu), PY, PYGAPS, str(a.seconds)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
          for cpu in a.loop_cpus]
    p = k = None
    res = {"variant": variant}
    try:
        for w in ws:
            if "pygaps: ready" not in w.stdout.readline():
                raise RuntimeError("pygaps did not start")
        pids = ",".join(str(w.pid) for w in ws)
        p = profiler(variant, a, pids, out)
        time.sleep(SETTLE_S)
        if p and p.poll() is not None:
            raise RuntimeError("%s exited early" % variant)
        k = kernel_time.start(a.ktime, pids)
        for w in ws:
            w.stdin.write("go\n")
            w.stdin.flush()
        for w in ws:
            line = w.stdout.readline()
            m = re.search(r"elapsed_ns (\d+) gaps (\d+) gap_ns (\d+) long (\d+) long_ns (\d+)",
                          line)
            if not m:
                raise RuntimeError("pygaps output %r" % line)
            for f, v in zip(("elapsed_ns", "gaps", "gap_ns", "long", "long_ns"), m.groups()):
                res[f] = res.get(f, 0) + int(v)
        if k:
            res.update(kernel_time.stop(k))
            k = None
        if p:
            err = stop(p, variant)
            p = None
            m = re.search(r"bpfprof: (\d+) samples", err)
            if m:
                res["samples"] = int(m.group(1))
        for w in ws:
            w.wait(timeout=30)
    finally:
        for q in (p, k):
            if q and q.poll() is None:
                q.kill()
                q.wait()
        for w in ws:
            if w.poll() is None:
                w.kill()
                w.wait()
        shutil.rmtree(out, ignore_errors=True)
    return res


def markdown(a, reps):
    def share(r):
        lost = r["gap_ns"] + (r["long_ns"] if a.busy else 0)
        return 100.0 * lost / r["elapsed_ns"]

    def per_sample_us(rep, v):
        """What @v took per sample above the loop alone of the same repetition."""
        return (share(rep[v]) - share(rep["none"])) / 100.0 / a.freq * 1e6

    per = {v: [per_sample_us(r, v) for r in reps] for v in PROFILERS}
    diff = [b - p for b, p in zip(per["bpfprof"], per["perf"])]
    samples = med([r["bpfprof"].get("samples") for r in reps])
    if a.busy:
        where = ("One loop (tests/workloads/pygaps.py, six Python frames deep) on each of"
                 " CPUs %s adds up every gap of more than 0.6 us between its clock reads;"
                 " the profilers attach to all of them with -p and run wherever the"
                 " scheduler puts them, so their own CPU time is taken from the loops too"
                 % ",".join(map(str, a.loop_cpus)))
    else:
        where = ("The loop (tests/workloads/pygaps.py, six Python frames deep) on CPU %d"
                 " adds up the gaps of more than 0.6 us and less than 500 us between its"
                 " clock reads; the profilers attach with -p and run on CPU 0" % a.cpu)
    lines = [
        "### Time each sample takes from a Python thread (issue 17): pygaps under %s"
        " at %d Hz, %d repetition%s of %.0f s%s" % (PY, a.freq, len(reps),
                                                    "" if len(reps) == 1 else "s", a.seconds,
                                                    ", all CPUs busy" if a.busy else ""),
        "",
        "%s. Medians [quartiles] over the repetitions; per sample: the gap time above the"
        " loop alone of the same repetition over %d samples a second per loop."
        % (where, a.freq),
        "",
        "| run | loop time in gaps (%%) | taken per sample (us) | slowdown at %d Hz (%%) |"
        " in the kernel's sample handler per sample (us) |" % a.freq,
        "|---|---:|---:|---:|---:|",
    ]
    for v in VARIANTS:
        sh = [share(r[v]) for r in reps]
        if v == "none":
            lines.append("| alone | %.2f [%s] | | | |" % (med(sh), quartiles(sh, "%.2f")))
            continue
        kt = [r[v].get("ktime_mean_us") for r in reps]
        lines.append("| %s | %.2f [%s] | %.1f [%s] | %.2f | %s |"
                     % (NAMES[v], med(sh), quartiles(sh, "%.2f"), med(per[v]),
                        quartiles(per[v], "%.1f"), med(per[v]) * a.freq / 1e4,
                        "%.2f [%s]" % (med(kt), quartiles(kt, "%.2f")) if med(kt) else "–"))
    lines += [
        "",
        "bpfprof minus perf record -g, per sample, paired by repetition: %.1f us [%s]"
        " (a ratio of %.2f of the medians). Gaps over 500 us (%s), median per run:"
        " %s. bpfprof took %s samples per run (-v; %d expected)."
        % (med(diff), quartiles(diff, "%.1f"), med(per["bpfprof"]) / med(per["perf"]),
           "counted" if a.busy else "kept apart",
           ", ".join("%s %.0f" % (v, med([r[v]["long"] for r in reps])) for v in VARIANTS),
           "%.0f" % samples if samples is not None else "–",
           a.freq * a.seconds * len(a.loop_cpus)),
        "",
    ]
    kt = {v: [r[v].get("ktime_mean_us") for r in reps] for v in ("perf", "bpfprof")}
    if all(x is not None for x in kt["perf"] + kt["bpfprof"]):
        kd = [b - p for b, p in zip(kt["bpfprof"], kt["perf"])]
        n = med([r["bpfprof"].get("ktime_n") for r in reps])
        lines += [
            "In the kernel's sample handler (the cpu-clock timer's callback; means per run"
            " of %.0f samples for bpfprof), bpfprof minus perf record -g, paired by"
            " repetition: %.2f us [%s] a sample (a ratio of %.2f of the medians)."
            % (n, med(kd), quartiles(kd, "%.2f"), med(kt["bpfprof"]) / med(kt["perf"])),
            "",
        ]
    return "\n".join(lines)


def main():
    ap = bench_parser()
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--busy", action="store_true",
                    help="a loop on every CPU, the profilers not pinned")
    a = ap.parse_args()
    a.build = os.path.realpath(a.build)
    a.reps = a.reps or (1 if a.quick else 9)
    a.seconds = a.seconds or (1.0 if a.quick else 3.0)
    a.cpu = (os.cpu_count() or 1) - 1
    a.loop_cpus = list(range(a.cpu + 1)) if a.busy else [a.cpu]
    if not os.access(PY, os.X_OK) or not shutil.which("perf") or a.cpu < 1:
        print("### Time each sample takes from a Python thread: skipped (needs %s, perf"
              " and 2 CPUs)\n" % PY)
        return 0
    a.ktime = kernel_time.build_tool(a.build, "sample cost")
    tmp = tempfile.mkdtemp(prefix="bpfprof-gaps.", dir=a.tmpdir)
    try:
        a.cache = os.path.join(tmp, "cfi-cache")
        a.buildid_dir = os.path.join(tmp, "perf-buildid")
        os.mkdir(a.buildid_dir)
        reps = rotating_reps(VARIANTS, a.reps, lambda v: run_one(v, a, tmp), "sample cost")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(reps, f, indent=1)
    sys.stdout.write(markdown(a, reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
