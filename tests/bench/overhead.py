# SPDX-License-Identifier: BSD-2-Clause
# tests/bench/overhead.py - the side-by-side overhead benchmark of bpfprof
# and `perf record -g` (run through tests/bench/run).
#
# Each measurement runs the workload build/workloads/bench_work (a fixed
# number of LCG iterations per thread; it blocks until SIGUSR1 and times its
# own work phase), attaches the profiler (or none), waits until the
# profiler's perf events are open and it sleeps, releases the work, and
# records: the workload's wall and CPU time, the profiler's CPU time during
# the work (sum of /proc/PID/task/*/schedstat) and in total (wait4 rusage),
# its peak RSS (ru_maxrss), the output size, and samples expected (workload
# CPU time x F), captured and dropped.  A group (threads, F) runs every
# variant once per repetition, in a freshly shuffled order each time, with
# the no-profiler baseline twice; the slowdown of a run is its wall time
# over the mean baseline of the same repetition, and tables show the median
# over repetitions with min..max.  Long runs (--all, both CPUs busy) check
# drops and collector RSS.  Short-lived children (build/workloads/forker:
# children exec'd one after the other, followed from -p on their parent)
# give the collector's CPU per new process.  Writes Markdown on stdout and
# JSON next to it.
import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from procwait import perf_event_fds  # noqa: E402  (tests/lib, the integration tests' helper)

NCPU = os.cpu_count() or 1
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(*a):
    print("[bench %s]" % time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def task_cpu_ns(pid):
    """CPU time in ns of every live thread of pid (schedstat), or None."""
    total = 0
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return total


def system_busy_s():
    """CPU seconds the whole machine spent busy (all CPUs, /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / CLK_TCK


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


def wait_attached(proc, timeout=30.0):
    """Until the profiler has perf events open and sleeps (its poll loop)."""
    end = time.monotonic() + timeout
    sleeping = 0
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        if (perf_event_fds(proc.pid) or 0) > 0 and proc_state(proc.pid) == "S":
            sleeping += 1
            if sleeping >= 3:
                time.sleep(0.1)
                return True
        else:
            sleeping = 0
        time.sleep(0.05)
    return False


def bench_parser():
    """The options of the Python benchmarks (python.py, sample_cost.py):
    --build, --reps, --freq (default 999), --quick, --json, --tmpdir."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--reps", type=int)
    ap.add_argument("--freq", type=int, default=999)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--tmpdir", default="/var/tmp")
    return ap


def rotating_reps(variants, reps, run, what):
    """@reps repetitions of run(variant) for each of @variants, the order
    rotated by one each repetition (so that none always runs first): a
    list of {variant: result}, one per repetition; progress as @what."""
    out = []
    for i in range(reps):
        k = i % len(variants)
        rep = {}
        for v in variants[k:] + variants[:k]:
            log("%s: rep %d/%d %s" % (what, i + 1, reps, v))
            rep[v] = run(v)
        out.append(rep)
    return out


def prog_id(pid, name):
    """The id of BPF program @name held by process @pid, or None."""
    try:
        fds = os.listdir("/proc/%d/fdinfo" % pid)
    except OSError:
        return None
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                m = re.search(r"^prog_id:\s*(\d+)", f.read(), re.M)
        except OSError:
            continue
        if m and prog_show(m.group(1)).get("name") == name:
            return m.group(1)
    return None


def prog_show(prog):
    """bpftool's description of BPF program id @prog ({} if none)."""
    out = subprocess.run(["bpftool", "prog", "show", "id", str(prog), "-j"],
                         capture_output=True, text=True)
    try:
        return json.loads(out.stdout)
    except ValueError:
        return {}


def dir_size(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def parse_bpfprof(stderr):
    r = {}
    m = re.search(r"bpfprof: (\d+) samples \((\d+) seen\)", stderr)
    if m:
        r["captured"] = int(m.group(1))
        r["seen"] = int(m.group(2))
    m = re.search(r"samples \(\d+ seen\) from (\d+) process", stderr)
    if m:
        r["processes"] = int(m.group(1))
    m = re.search(r"bpfprof: drops: (.*)", stderr)
    if m:
        text = m.group(1).split(";")[0]
        text = re.sub(r"\([^)]*\)", "", text)
        r["dropped"] = sum(int(n) for n in re.findall(r"[a-z-]+ (\d+)", text))
        r["drops_text"] = m.group(1).strip()
    m = re.search(r"unwind tables: (\d+) loaded, (\d+) rows \(([\d.]+) KiB\) in ([\d.]+) KiB "
                  r"of BPF maps, from ([\d.]+) KiB of CFI in ([\d.]+) ms", stderr)
    if m:
        r["tables"] = int(m.group(1))
        r["table_kib"] = float(m.group(3))
        r["chunk_kib"] = float(m.group(4))
        r["table_build_ms"] = float(m.group(6))
    m = re.search(r"user stack walks: (\d+); (.*)", stderr)
    if m:
        r["walks"] = int(m.group(1))
        r["walks_text"] = m.group(2).strip()
    return r


def parse_perf(stderr, data_path, perf):
    r = {}
    m = re.search(r"\((\d+) samples\)", stderr)
    if m:
        r["captured"] = int(m.group(1))
    try:
        out = subprocess.run([perf, "report", "-i", data_path, "--stdio", "--sort", "comm",
                              "-g", "none"], capture_output=True, text=True,
                             timeout=300).stdout
        mm = re.search(r"Total Lost Samples: (\d+)", out)
        r["dropped"] = int(mm.group(1)) if mm else None
    except (subprocess.SubprocessError, OSError):
        r["dropped"] = None
    return r


class Bench:
    def __init__(self, args):
        self.a = args
        self.build = os.path.realpath(args.build)
        self.bpfprof = os.path.join(self.build, "bpfprof")
        self.work = os.path.join(self.build, "workloads", "bench_work")
        self.perf = shutil.which("perf") or "perf"
        self.tmp = tempfile.mkdtemp(prefix="bpfprof-bench.", dir=args.tmpdir)
        self.ns_per_iter = None

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    # --- one measurement ----------------------------------------------------
    def profiler_cmd(self, v, freq, wl_pid, out):
        tool, fmt, target = v
        tgt = ["-a"] if target == "all" else ["-p", str(wl_pid)]
        if tool == "perf":
            g = [] if fmt == "nog" else ["-g"]
            return [self.perf, "record", "-e", "cpu-clock", "-F", str(freq)] + g + tgt + \
                   ["-o", os.path.join(out, "perf.data")]
        # FORMAT+fp: frame pointers (-g) instead of the default auto walk
        fmt, fp = (fmt[:-3], ["-g"]) if fmt.endswith("+fp") else (fmt, [])
        if fmt == "hpctoolkit":
            path = os.path.join(out, "db")
        else:
            path = os.path.join(out, "out")
        return [self.bpfprof, "-v", "-F", str(freq)] + fp + tgt + ["--format", fmt, "-o", path]

    def run_one(self, v, threads, freq, iters):
        tool = v[0]
        out = tempfile.mkdtemp(prefix="run.", dir=self.tmp)
        res = {"variant": label(v), "threads": threads, "freq": freq}
        wl = subprocess.Popen([self.work, "-t", str(threads), "-n", str(iters)],
                              stdout=subprocess.PIPE, text=True)
        try:
            line = wl.stdout.readline()
            if "ready" not in line:
                raise RuntimeError("bench_work did not start: %r" % line)
            prof = None
            errf = open(os.path.join(out, "stderr"), "w+")
            if tool != "none":
                prof = subprocess.Popen(self.profiler_cmd(v, freq, wl.pid, out), cwd=out,
                                        stdout=subprocess.DEVNULL, stderr=errf)
                if not wait_attached(prof):
                    prof.kill()
                    raise RuntimeError("profiler did not attach: %s" % label(v))
                cpu0 = task_cpu_ns(prof.pid)
            busy0 = system_busy_s()
            wl.send_signal(signal.SIGUSR1)
            line = wl.stdout.readline()
            t_end = time.monotonic()
            busy1 = system_busy_s()
            if prof:
                cpu1 = task_cpu_ns(prof.pid)
            m = re.search(r"wall_s ([\d.]+) cpu_s ([\d.]+)", line)
            if not m:
                raise RuntimeError("bench_work output: %r" % line)
            res["wall"] = float(m.group(1))
            res["cpu"] = float(m.group(2))
            # CPU that neither the workload nor the profiler used: other
            # processes on the machine (noise), in CPUs' worth.
            own = res["cpu"] + ((cpu1 - cpu0) / 1e9 if prof and cpu0 is not None and
                                cpu1 is not None else 0)
            res["foreign"] = max(0.0, (busy1 - busy0) - own) / res["wall"]
            wl.wait()
            if prof:
                # Reaped only by the wait4() below, which also gives the
                # rusage (Popen.wait() would reap it first and lose it).
                if v[2] == "all":
                    prof.send_signal(signal.SIGINT)
                # -p: both exit when the target does; stop them otherwise.
                deadline = time.monotonic() + (60 if v[2] == "all" else 10)
                status = None
                while status is None:
                    pid, st, ru = os.wait4(prof.pid, os.WNOHANG)
                    if pid == prof.pid:
                        status = st
                        break
                    if time.monotonic() > deadline:
                        prof.send_signal(signal.SIGINT)
                        deadline = time.monotonic() + 60
                    time.sleep(0.01)
                prof.returncode = os.waitstatus_to_exitcode(status)
                res["finish_s"] = time.monotonic() - t_end
                res["prof_cpu_run"] = (cpu1 - cpu0) / 1e9 if cpu0 is not None and cpu1 is not None else None
                res["prof_cpu_total"] = ru.ru_utime + ru.ru_stime
                res["prof_rss_kb"] = ru.ru_maxrss
                errf.seek(0)
                err = errf.read()
                if prof.returncode not in (0, -signal.SIGINT, 128 + signal.SIGINT):
                    raise RuntimeError("%s exited %d: %s" % (label(v), prof.returncode, err[-800:]))
                os.remove(os.path.join(out, "stderr"))
                res["out_bytes"] = dir_size(out)
                res["expected"] = res["cpu"] * freq
                if tool == "perf":
                    res.update(parse_perf(err, os.path.join(out, "perf.data"), self.perf))
                else:
                    res.update(parse_bpfprof(err))
            errf.close()
        finally:
            if wl.poll() is None:
                wl.kill()
                wl.wait()
            shutil.rmtree(out, ignore_errors=True)
        return res

    # --- calibration ----------------------------------------------------------
    def calibrate(self):
        p = subprocess.run([self.work, "-x", "-n", "200000000"], capture_output=True, text=True)
        m = re.search(r"ns_per_iter ([\d.]+)", p.stdout)
        self.ns_per_iter = float(m.group(1)) if m else 1.25
        log("calibration: %.3f ns per iteration" % self.ns_per_iter)

    def iters_for(self, seconds):
        return max(1000000, int(seconds * 1e9 / self.ns_per_iter))

    # --- the matrix -----------------------------------------------------------
    def overhead(self):
        a = self.a
        variants = []
        for target in a.targets:
            variants.append(("perf", "", target))
            if a.perf_nog and target == "p":
                # the floor: sampling with no call chain at all
                variants.append(("perf", "nog", target))
            for fmt in (a.all_formats if target == "all" else a.formats):
                variants.append(("bpfprof", fmt, target))
        results = []
        iters = self.iters_for(a.work_sec)
        for threads in a.threads:
            for freq in a.freqs:
                log("group: %d thread(s), %d Hz, %d runs x %d reps" %
                    (threads, freq, len(variants) + 2, a.reps))
                for rep in range(a.reps):
                    order = [("none", "", "")] * 2 + variants
                    rng = random.Random(1000 * threads + freq * 10 + rep)
                    rng.shuffle(order)
                    for v in order:
                        for attempt in range(a.retries + 1):
                            try:
                                r = self.run_one(v, threads, freq, iters)
                            except RuntimeError as e:
                                log("error:", e)
                                r = {"variant": label(v), "threads": threads, "freq": freq,
                                     "error": str(e)}
                            if r.get("foreign", 0) <= a.noise:
                                break
                            log("noise: %.0f%% of a CPU used by other processes during %s;%s" %
                                (100 * r["foreign"], label(v),
                                 " again" if attempt < a.retries else " kept, marked noisy"))
                            if attempt < a.retries:
                                time.sleep(2)
                        r["rep"] = rep
                        r["attempts"] = attempt + 1
                        r["noisy"] = r.get("foreign", 0) > a.noise
                        results.append(r)
        return results

    # --- long runs: --all, every CPU busy ------------------------------------
    def long_runs(self):
        a = self.a
        iters = self.iters_for(3 * a.long_sec + 30)
        out = []
        for v in [("bpfprof", f, "all") for f in a.long_formats] + [("perf", "", "all")]:
            d = tempfile.mkdtemp(prefix="long.", dir=self.tmp)
            wl = subprocess.Popen([self.work, "-x", "-t", str(NCPU), "-n", str(iters)],
                                  stdout=subprocess.PIPE, text=True)
            wl.stdout.readline()
            time.sleep(0.2)
            cmd = self.profiler_cmd(v, a.long_freq, 0, d)
            if v[0] == "bpfprof":
                cmd += ["-d", str(a.long_sec)]
            errf = open(os.path.join(d, "stderr"), "w+")
            log("long run: %s, %d s" % (" ".join(cmd[1:]), a.long_sec))
            load0 = open("/proc/loadavg").read().split()[0]
            t0 = time.monotonic()
            prof = subprocess.Popen(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=errf)
            if v[0] == "perf":
                # perf record -a first synthesizes every process: time from attach.
                wait_attached(prof, timeout=120)
                time.sleep(a.long_sec)
                prof.send_signal(signal.SIGINT)
            _, st, ru = os.wait4(prof.pid, 0)
            prof.returncode = os.waitstatus_to_exitcode(st)
            wall = time.monotonic() - t0
            wl.kill()
            wl.wait()
            errf.seek(0)
            err = errf.read()
            errf.close()
            os.remove(os.path.join(d, "stderr"))
            r = {"variant": label(v), "freq": a.long_freq, "seconds": a.long_sec,
                 "prof_wall": wall, "prof_cpu_total": ru.ru_utime + ru.ru_stime,
                 "prof_rss_kb": ru.ru_maxrss, "out_bytes": dir_size(d),
                 "expected": a.long_sec * NCPU * a.long_freq, "rc": prof.returncode,
                 "load": "%s -> %s" % (load0, open("/proc/loadavg").read().split()[0])}
            if v[0] == "perf":
                r.update(parse_perf(err, os.path.join(d, "perf.data"), self.perf))
            else:
                r.update(parse_bpfprof(err))
            if prof.returncode not in (0, -signal.SIGINT, 128 + signal.SIGINT):
                r["error"] = err[-800:]
            out.append(r)
            shutil.rmtree(d, ignore_errors=True)
        return out


    # --- short-lived exec'd children -------------------------------------------
    def children_one(self, tool, cg, n):
        """One forker run of n exec'd children under tool (bpfprof or perf), cg fp or dwarf."""
        forker = os.path.join(self.build, "workloads", "forker")
        d = tempfile.mkdtemp(prefix="children.", dir=self.tmp)
        wl = subprocess.Popen([forker, "--wait", "-n", str(n), "-m", "exec"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        r = {"variant": children_label(tool, cg), "children": n}
        try:
            m = re.match(r"ready (\d+)", wl.stdout.readline())
            if not m:
                raise RuntimeError("forker did not start")
            g = ["-g"] if cg == "fp" else ["--call-graph", "dwarf"]
            if tool == "perf":
                cmd = [self.perf, "record", "-e", "cpu-clock", "-F", "999"] + g + \
                      ["-p", m.group(1), "-o", os.path.join(d, "perf.data")]
            else:
                cmd = [self.bpfprof, "-F", "999"] + g + ["-p", m.group(1), "--format", "folded",
                                                       "-o", os.path.join(d, "out")]
            errf = open(os.path.join(d, "stderr"), "w+")
            prof = subprocess.Popen(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=errf)
            if not wait_attached(prof):
                prof.kill()
                raise RuntimeError("profiler did not attach: %s" % r["variant"])
            cpu0 = task_cpu_ns(prof.pid)
            t0 = time.monotonic()
            wl.send_signal(signal.SIGUSR1)
            _, ferr = wl.communicate()
            r["seconds"] = time.monotonic() - t0
            cpu1 = task_cpu_ns(prof.pid)
            _, st, ru = os.wait4(prof.pid, 0)
            errf.seek(0)
            err = errf.read()
            errf.close()
            if os.waitstatus_to_exitcode(st) != 0:
                raise RuntimeError("%s exited %d: %s" % (r["variant"], os.waitstatus_to_exitcode(st),
                                                         err[-800:]))
            fm = re.search(r"children=(\d+) mode=exec failed=(\d+) child_cpu_seconds=([\d.]+)", ferr)
            if not fm or int(fm.group(2)):
                raise RuntimeError("forker failed: %r" % ferr[-300:])
            r["expected"] = float(fm.group(3)) * 999
            r["prof_cpu_run"] = (cpu1 - cpu0) / 1e9 if cpu0 is not None and cpu1 is not None else None
            r["prof_cpu_total"] = ru.ru_utime + ru.ru_stime
            # everything after the release: the children, the backlog, the output
            r["prof_cpu_after"] = r["prof_cpu_total"] - cpu0 / 1e9 if cpu0 is not None else None
            r.update(parse_perf(err, os.path.join(d, "perf.data"), self.perf) if tool == "perf"
                     else parse_bpfprof(err))
        except (RuntimeError, OSError) as e:
            log("error:", e)
            r["error"] = str(e)
        finally:
            if wl.poll() is None:
                wl.kill()
                wl.wait()
            shutil.rmtree(d, ignore_errors=True)
        return r

    def children_runs(self):
        a = self.a
        out = []
        for rep in range(a.children_reps):
            for tool, cg in (("bpfprof", "fp"), ("bpfprof", "dwarf"), ("perf", "fp")):
                log("children: %s %s, %d exec'd children, rep %d" % (tool, cg, a.children, rep))
                r = self.children_one(tool, cg, a.children)
                r["rep"] = rep
                out.append(r)
        return out


def children_label(tool, cg):
    g = "-g" if cg == "fp" else "--call-graph dwarf"
    return ("perf record %s -p" if tool == "perf" else "bpfprof %s -p") % g


def label(v):
    tool, fmt, target = v
    if tool == "none":
        return "none"
    t = "-a" if target == "all" else "-p"
    if tool == "perf":
        return "perf record %s%s" % ("(no -g) " if fmt == "nog" else "-g ", t)
    if fmt.endswith("+fp"):
        return "bpfprof %s -g %s" % (fmt[:-3], t)
    return "bpfprof %s %s" % (fmt, t)


# --- reporting ------------------------------------------------------------------
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def quartiles(xs, spec="%.1f"):
    """'q1..q3' of @xs (Python's exclusive method) in @spec, '–' for fewer than 2."""
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return "–"
    q = statistics.quantiles(xs, n=4)
    return (spec + ".." + spec) % (q[0], q[2])


def fmt_num(x, spec="%.1f", none="–"):
    return none if x is None else spec % x


def fmt_bytes(n):
    if n is None:
        return "–"
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= div:
            return "%.1f %s" % (n / div, unit)
    return "%d B" % n


NOISE = {"runs": 0, "retried": 0, "noisy": 0, "median": 0.0}


def summarize(results):
    """Per (threads, freq, variant): slowdowns paired with their rep's baseline."""
    NOISE["runs"] = len(results)
    NOISE["retried"] = sum(1 for r in results if r.get("attempts", 1) > 1)
    NOISE["noisy"] = sum(1 for r in results if r.get("noisy"))
    NOISE["median"] = med([r.get("foreign") for r in results]) or 0.0
    base = {}
    for r in results:
        if r["variant"] == "none" and "wall" in r:
            base.setdefault((r["threads"], r["freq"], r["rep"]), []).append(r["wall"])
    cells = {}
    for r in results:
        if r["variant"] == "none":
            continue
        key = (r["threads"], r["freq"], r["variant"])
        c = cells.setdefault(key, {"runs": [], "errors": 0})
        if "error" in r:
            c["errors"] += 1
            continue
        b = base.get((r["threads"], r["freq"], r["rep"]))
        if b:
            r["slowdown"] = r["wall"] / statistics.mean(b) - 1
        c["runs"].append(r)
    out = []
    for (threads, freq, variant), c in cells.items():
        runs = c["runs"]
        sl = [r["slowdown"] for r in runs if "slowdown" in r]
        s = {"threads": threads, "freq": freq, "variant": variant, "n": len(runs),
             "errors": c["errors"],
             "slowdown": med(sl), "slowdown_min": min(sl) if sl else None,
             "slowdown_max": max(sl) if sl else None}
        for k in ("prof_cpu_run", "prof_cpu_total", "prof_rss_kb", "out_bytes", "expected",
                  "captured", "dropped", "seen", "finish_s", "wall", "cpu"):
            s[k] = med([r.get(k) for r in runs])
        out.append(s)
    return out, base


def peer(summ, s):
    tgt = s["variant"].split()[-1]
    for p in summ:
        if p["threads"] == s["threads"] and p["freq"] == s["freq"] and \
                p["variant"] == "perf record -g %s" % tgt:
            return p
    return None


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def markdown_overhead(summ, base):
    lines = []
    lines.append("| threads | F (Hz) | profiler | slowdown % median (min..max) | x perf | "
                 "CPU ms during work | CPU ms total | total x perf | peak RSS MB | output | "
                 "samples expected / captured / dropped |")
    lines.append("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|")
    order = lambda s: (s["threads"], s["freq"], s["variant"].split()[-1],
                       0 if s["variant"].startswith("perf") else 1, s["variant"])
    for s in sorted(summ, key=order):
        p = peer(summ, s)
        isperf = s["variant"].startswith("perf")
        sd = s["slowdown"]
        r_sd = None if isperf or not p or sd is None or not p["slowdown"] or \
            p["slowdown"] <= 0 else sd / p["slowdown"]
        r_cpu = None if isperf or not p else ratio(s["prof_cpu_total"], p["prof_cpu_total"])
        slow = "–" if sd is None else "%+.2f (%+.2f..%+.2f)" % (
            100 * sd, 100 * s["slowdown_min"], 100 * s["slowdown_max"])
        if s["errors"]:
            slow += " [%d failed]" % s["errors"]
        lines.append("| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |" % (
            s["threads"], s["freq"], s["variant"], slow,
            fmt_num(r_sd, "%.2f"),
            fmt_num(None if s["prof_cpu_run"] is None else 1e3 * s["prof_cpu_run"], "%.1f"),
            fmt_num(None if s["prof_cpu_total"] is None else 1e3 * s["prof_cpu_total"], "%.0f"),
            fmt_num(r_cpu, "%.2f"),
            fmt_num(None if s["prof_rss_kb"] is None else s["prof_rss_kb"] / 1024, "%.1f"),
            fmt_bytes(s["out_bytes"]),
            fmt_num(s["expected"], "%.0f"), fmt_num(s["captured"], "%.0f"),
            fmt_num(s["dropped"], "%.0f")))
    bl = {}
    for (threads, freq, rep), ws in base.items():
        bl.setdefault(threads, []).extend(ws)
    lines.append("")
    lines.append("Baseline (no profiler) work-phase wall time: " + "; ".join(
        "%d thread(s) median %.3f s (min %.3f, max %.3f, %d runs)" %
        (t, statistics.median(w), min(w), max(w), len(w)) for t, w in sorted(bl.items())))
    lines.append("")
    lines.append("Noise guard: %d of %d runs were repeated because other processes used more "
                 "than the noise limit of CPU during the work; %d kept although still noisy; "
                 "median foreign CPU during a run: %.1f%% of one CPU." % (
                     NOISE["retried"], NOISE["runs"], NOISE["noisy"], 100 * NOISE["median"]))
    lines.append("")
    lines.append("slowdown: work-phase wall time over the mean of the two baseline runs of the "
                 "same repetition, minus 1; x perf: ratio to perf record -g with the same "
                 "target (– when perf's slowdown is not positive). CPU ms during work: "
                 "profiler threads' schedstat time from release to the end of the work; total: "
                 "user+sys of the whole profiler process (start-up, BPF load, output). "
                 "Expected samples: workload CPU time x F; with -a, captured counts every "
                 "process on the machine.")
    return "\n".join(lines)


def markdown_long(long):
    lines = ["| profiler (--all, every CPU busy) | F | seconds | CPU s (x perf) | peak RSS MB | "
             "output | processes | samples expected / captured / dropped | load avg |",
             "|---|---:|---:|---|---:|---:|---:|---|---|"]
    p = next((r for r in long if r["variant"].startswith("perf")), None)
    for r in long:
        rc = ratio(r["prof_cpu_total"], p["prof_cpu_total"]) if p and r is not p else None
        lines.append("| %s%s | %d | %d | %.2f%s | %.1f | %s | %s | %d / %s / %s | %s |" % (
            r["variant"], " (FAILED)" if r.get("error") else "", r["freq"], r["seconds"],
            r["prof_cpu_total"], "" if rc is None else " (%.2f)" % rc,
            r["prof_rss_kb"] / 1024, fmt_bytes(r["out_bytes"]), fmt_num(r.get("processes"), "%d"),
            r["expected"],
            fmt_num(r.get("captured"), "%d"), fmt_num(r.get("dropped"), "%d"), r.get("load", "")))
    lines.append("")
    for r in long:
        if r.get("drops_text"):
            lines.append("- %s: drops: %s" % (r["variant"], r["drops_text"]))
        if r.get("tables") is not None:
            lines.append("- %s: %d unwind tables, %.0f KiB of rows in %.0f KiB of BPF maps, "
                         "built in %.0f ms; user stack walks: %d (%s)" % (
                             r["variant"], r["tables"], r["table_kib"], r["chunk_kib"],
                             r["table_build_ms"], r.get("walks", 0), r.get("walks_text", "")))
    return "\n".join(lines)


def summarize_children(runs):
    cells = {}
    for r in runs:
        cells.setdefault(r["variant"], []).append(r)
    out = []
    for variant, rs in cells.items():
        ok = [r for r in rs if "error" not in r]
        per = [1e3 * r["prof_cpu_after"] / r["children"] for r in ok
               if r.get("prof_cpu_after") is not None]
        s = {"variant": variant, "n": len(ok), "errors": len(rs) - len(ok),
             "children": rs[0]["children"], "per_child_ms": med(per),
             "per_child_min": min(per) if per else None, "per_child_max": max(per) if per else None}
        for k in ("seconds", "prof_cpu_run", "prof_cpu_after", "prof_cpu_total", "expected",
                  "captured", "dropped"):
            s[k] = med([r.get(k) for r in ok])
        out.append(s)
    return out


def markdown_children(summ):
    lines = ["| profiler | children | seconds | CPU ms during the children | CPU ms after "
             "release | CPU ms per child, median (min..max) | CPU ms total | samples "
             "expected / captured / dropped |",
             "|---|---:|---:|---:|---:|---|---:|---|"]
    for s in summ:
        lines.append("| %s%s | %d | %s | %s | %s | %s | %s | %s / %s / %s |" % (
            s["variant"], " [%d failed]" % s["errors"] if s["errors"] else "", s["children"],
            fmt_num(s["seconds"], "%.1f"),
            fmt_num(None if s["prof_cpu_run"] is None else 1e3 * s["prof_cpu_run"], "%.0f"),
            fmt_num(None if s["prof_cpu_after"] is None else 1e3 * s["prof_cpu_after"], "%.0f"),
            "–" if s["per_child_ms"] is None else "%.2f (%.2f..%.2f)" % (
                s["per_child_ms"], s["per_child_min"], s["per_child_max"]),
            fmt_num(None if s["prof_cpu_total"] is None else 1e3 * s["prof_cpu_total"], "%.0f"),
            fmt_num(s["expected"], "%.0f"), fmt_num(s["captured"], "%.0f"),
            fmt_num(s["dropped"], "%.0f")))
    lines.append("")
    lines.append("CPU ms after release: the profiler's user+sys time from releasing forker to "
                 "its own exit (the children, the backlog, writing the output); per child: that "
                 "over the children. Expected samples: the children's CPU time (getrusage) x "
                 "999 Hz; captured counts the parent's few samples too.")
    return "\n".join(lines)


def markdown_targets(summ, long, children=()):
    """The issue's targets that these measurements decide."""
    out = ["| target | measured | verdict |", "|---|---|---|"]

    def cell(threads, freq, variant):
        return next((x for x in summ if x["threads"] == threads and x["freq"] == freq and
                     x["variant"] == variant), None)

    def pct(x):
        return "–" if x is None else "%+.2f%%" % (100 * x)

    for threads in sorted({x["threads"] for x in summ}):
        p = cell(threads, 999, "perf record -g -p")
        for fmt in ("gperftools", "pprof", "folded"):
            b = cell(threads, 999, "bpfprof %s -p" % fmt)
            if not p or not b or b["slowdown"] is None or p["slowdown"] is None:
                continue
            ok = b["slowdown"] < 0.01 and b["slowdown"] <= p["slowdown"] / 2
            out.append("| (1) 999 Hz -p, in-kernel counts (%s), %d thread(s): slowdown <= "
                       "half of perf's and < 1%% | bpfprof %s (%s..%s) vs perf %s | %s |" % (
                           fmt, threads, pct(b["slowdown"]), pct(b["slowdown_min"]),
                           pct(b["slowdown_max"]), pct(p["slowdown"]), "met" if ok else "NOT met"))
        for fmt, limit in (("gperftools", 0.25), ("perf", 0.5)):
            b = cell(threads, 999, "bpfprof %s -p" % fmt)
            if not p or not b or not p["prof_cpu_total"]:
                continue
            r = b["prof_cpu_total"] / p["prof_cpu_total"]
            out.append("| (2) own CPU, 999 Hz -p, %d thread(s), %s: <= %s of perf record's | "
                       "%.0f ms vs %.0f ms total = %.2f (during the work: %.1f vs %.1f ms) | %s |" % (
                           threads, fmt, "1/4" if limit == 0.25 else "1/2",
                           1e3 * b["prof_cpu_total"], 1e3 * p["prof_cpu_total"], r,
                           1e3 * (b["prof_cpu_run"] or 0), 1e3 * (p["prof_cpu_run"] or 0),
                           "met" if r <= limit else "NOT met"))
    for threads in sorted({x["threads"] for x in summ}):
        p = cell(threads, 999, "perf record -g -p")
        b = cell(threads, 999, "bpfprof gperftools -p")
        if not p or not b or b["slowdown"] is None or p["slowdown"] is None:
            continue
        ok = b["slowdown"] <= p["slowdown"] and p["prof_cpu_total"] and \
            b["prof_cpu_total"] <= p["prof_cpu_total"] / 4
        out.append("| (6) --call-graph auto (the default), 999 Hz -p, %d thread(s): slowdown <= "
                   "perf record -g's, own CPU (tables built included) <= 1/4 of its | slowdown "
                   "%s vs %s; own CPU %.0f ms vs %.0f ms | %s |" % (
                       threads, pct(b["slowdown"]), pct(p["slowdown"]),
                       1e3 * b["prof_cpu_total"], 1e3 * (p["prof_cpu_total"] or 0),
                       "met" if ok else "NOT met"))
    lp = next((r for r in long if r["variant"].startswith("perf")), None)
    for r in long:
        if r["variant"].startswith("perf"):
            continue
        fmt = r["variant"].split()[1]
        if lp and fmt in ("gperftools", "perf"):
            limit = 0.25 if fmt == "gperftools" else 0.5
            q = r["prof_cpu_total"] / lp["prof_cpu_total"]
            out.append("| (2) own CPU, --all %d s, %s: <= %s of perf record's | %.2f s vs %.2f s "
                       "= %.2f | %s |" % (r["seconds"], fmt, "1/4" if limit == 0.25 else "1/2",
                                          r["prof_cpu_total"], lp["prof_cpu_total"], q,
                                          "met" if q <= limit else "NOT met"))
        d = r.get("dropped")
        out.append("| (3) no drops, --all %d s at %d Hz, every CPU busy, %s | %s dropped of %s "
                   "seen | %s |" % (r["seconds"], r["freq"], fmt, fmt_num(d, "%d"),
                                    fmt_num(r.get("seen"), "%d"),
                                    "met" if d == 0 else "NOT met"))
        rss = r["prof_rss_kb"] / 1024
        out.append("| (5) collector RSS < 64 MB, --all %d s at %d Hz, %s | %.1f MB peak "
                   "(%s processes) | %s |" % (r["seconds"], r["freq"], fmt, rss,
                                              fmt_num(r.get("processes"), "%d"),
                                              "met" if rss < 64 else "NOT met"))
    for s in children:
        if not s["variant"].startswith("bpfprof") or s["per_child_ms"] is None:
            continue
        out.append("| (issue 15) collector CPU per exec'd child < 1 ms, %s | %.2f ms (%d children "
                   "of ~20 ms) | %s |" % (s["variant"], s["per_child_ms"], s["children"],
                                          "met" if s["per_child_ms"] < 1 else "NOT met"))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--work-sec", type=float)
    ap.add_argument("--freqs")
    ap.add_argument("--threads")
    ap.add_argument("--targets")
    ap.add_argument("--formats", help="bpfprof formats with -p")
    ap.add_argument("--all-formats", help="bpfprof formats with --all")
    ap.add_argument("--noise", type=float, default=0.08,
                    help="retry a run when other processes used more than this many CPUs "
                         "during its work (default 0.08)")
    ap.add_argument("--retries", type=int, help="default 3; 0 with --quick")
    ap.add_argument("--no-perf-nog", dest="perf_nog", action="store_false",
                    help="leave out perf record without -g (the sampling floor) with -p")
    ap.add_argument("--long-sec", type=int)
    ap.add_argument("--long-freq", type=int, default=999)
    ap.add_argument("--long-formats")
    ap.add_argument("--no-overhead", action="store_true")
    ap.add_argument("--no-long", action="store_true")
    ap.add_argument("--children", type=int,
                    help="exec'd children per short-lived-children run (default 300; 50 with --quick)")
    ap.add_argument("--children-reps", type=int, help="default 3; 1 with --quick")
    ap.add_argument("--no-children", action="store_true")
    ap.add_argument("--json", help="write raw results here")
    ap.add_argument("--tmpdir", default="/var/tmp")
    a = ap.parse_args()
    q = a.quick
    a.reps = a.reps or (2 if q else 5)
    if a.retries is None:
        a.retries = 0 if q else 3
    a.work_sec = a.work_sec or (0.2 if q else 1.0)
    a.freqs = [int(x) for x in (a.freqs or ("999" if q else "99,999,4999")).split(",")]
    a.threads = [NCPU if x == "ncpu" else int(x)
                 for x in (a.threads or ("1" if q else "1,ncpu")).split(",")]
    a.targets = (a.targets or "p,all").split(",")
    a.formats = (a.formats or "gperftools,gperftools+fp,perf,hpctoolkit,pprof,folded").split(",")
    a.all_formats = (a.all_formats or ("gperftools,perf,hpctoolkit,pprof,folded" if q else
                                       "gperftools,perf,hpctoolkit")).split(",")
    a.long_sec = a.long_sec or (2 if q else 60)
    a.long_formats = (a.long_formats or "gperftools,perf").split(",")
    a.children = a.children or (50 if q else 300)
    a.children_reps = a.children_reps or (1 if q else 3)

    b = Bench(a)
    data = {"args": {k: v for k, v in vars(a).items()}, "ncpu": NCPU}
    try:
        b.calibrate()
        data["ns_per_iter"] = b.ns_per_iter
        md = []
        if not a.no_overhead:
            t0 = time.monotonic()
            res = b.overhead()
            data["overhead_runs"] = res
            summ, base = summarize(res)
            data["overhead"] = summ
            md.append("### Overhead on a fixed amount of work (%.1f s of CPU per thread, "
                      "median of %d paired runs)\n" % (a.work_sec, a.reps))
            md.append(markdown_overhead(summ, base))
            log("overhead matrix took %.0f s" % (time.monotonic() - t0))
        if not a.no_long:
            long = b.long_runs()
            data["long"] = long
            md.append("\n### --all for %d s at %d Hz, %d busy threads (one per CPU)\n" %
                      (a.long_sec, a.long_freq, NCPU))
            md.append(markdown_long(long))
        if not a.no_children:
            data["children_runs"] = b.children_runs()
            kids = summarize_children(data["children_runs"])
            data["children"] = kids
            md.append("\n### Short-lived exec'd children: %d of ~20 ms CPU each, one after the "
                      "other, -p on their parent, 999 Hz (median of %d)\n" %
                      (a.children, a.children_reps))
            md.append(markdown_children(kids))
        md.append("\n### Targets decided by these runs\n")
        md.append(markdown_targets(data.get("overhead", []), data.get("long", []),
                                   data.get("children", [])))
        print("\n".join(md))
    finally:
        b.cleanup()
        if a.json:
            with open(a.json, "w") as f:
                json.dump(data, f, indent=1)


if __name__ == "__main__":
    main()
