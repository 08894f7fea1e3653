# SPDX-License-Identifier: BSD-2-Clause
"""kernel_time.py - the time each cpu-clock sample spends in the kernel's
sample handler, whichever profiler's event it is, for sample_cost.py and
python.py: builds tests/bench/sample_kernel_time (sample_kernel_time.bpf.c
and its loader, sample_kernel_time.c; see there for what is measured) and
runs it around a profiled run.

  tool = build_tool(BUILD, WHAT)      # BUILD/bench/sample_kernel_time, or None
  k = start(tool, "PID[,PID]")        # or "comm=NAME"; None if tool is None
  ... the profiled work ...
  stop(k) -> {"ktime_n": N, "ktime_mean_us": M, "ktime_p50_us": P}
"""
import os
import re
import shlex
import shutil
import signal
import subprocess

from overhead import log

NAME = "sample_kernel_time"
HERE = os.path.dirname(os.path.abspath(__file__))


def build_tool(build, what):
    """BUILD/bench/sample_kernel_time (BPF object, skeleton, loader), built
    unless up to date: its path, or None when clang or bpftool is missing
    (then nothing is measured; @what says who asked, in the log)."""
    out = os.path.join(build, "bench")
    tool = os.path.join(out, NAME)
    srcs = [os.path.join(HERE, NAME + x) for x in (".bpf.c", ".c", ".h")]
    if os.path.exists(tool) and all(os.path.getmtime(tool) >= os.path.getmtime(f) for f in srcs):
        return tool
    if not shutil.which("clang") or not shutil.which("bpftool"):
        log("%s: no clang or bpftool; the kernel time per sample is not measured" % what)
        return None
    os.makedirs(out, exist_ok=True)
    obj = os.path.join(out, NAME + ".bpf.o")
    skel = os.path.join(out, NAME + ".skel.h")
    subprocess.run(["clang", "-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86",
                    "-I" + build, "-I" + HERE, "-c", srcs[0], "-o", obj], check=True)
    with open(skel + ".tmp", "w") as f:
        subprocess.run(["bpftool", "gen", "skeleton", obj, "name", NAME + "_bpf"],
                       stdout=f, check=True)
    os.rename(skel + ".tmp", skel)
    subprocess.run(["cc", "-O2", "-g", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
                    "-Wno-unused-parameter", "-D_GNU_SOURCE", "-I" + HERE, "-I" + out,
                    srcs[1], "-lbpf", "-o", tool], check=True)
    return tool


def start(tool, targets):
    """The counter on @targets ("PID[,PID]" or "comm=NAME"), attached and
    counting, on CPU 0; None without @tool."""
    if not tool:
        return None
    k = subprocess.Popen(["taskset", "-c", "0", tool, targets], stdout=subprocess.PIPE,
                         text=True)
    if "ready" not in k.stdout.readline():
        k.wait()
        raise RuntimeError("%s did not start" % shlex.join(k.args))
    return k


def stop(k):
    """{"ktime_n", "ktime_mean_us", "ktime_p50_us"} of counter @k, stopped
    ({"ktime_n": 0} alone when nothing was sampled)."""
    k.send_signal(signal.SIGINT)
    out, _ = k.communicate(timeout=30)
    if not k.returncode and "samples 0\n" in out:
        return {"ktime_n": 0}
    m = re.search(r"samples (\d+) mean (\d+) p25 (\d+) p50 (\d+)", out)
    if k.returncode or not m:
        raise RuntimeError("%s: %r" % (NAME, out))
    return {"ktime_n": int(m.group(1)), "ktime_mean_us": int(m.group(2)) / 1000.0,
            "ktime_p50_us": int(m.group(4)) / 1000.0}
