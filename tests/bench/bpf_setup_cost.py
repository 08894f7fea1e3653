#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""bpf_setup_cost.py - what each BPF map and program costs a bpfprof start,
one build or two side by side: the time of each map's BPF_MAP_CREATE and
each program's BPF_PROG_LOAD system call, read with `strace -f -T -e
trace=bpf` from `bpfprof -o FILE -- true` runs.

  bpf_setup_cost.py A [B] [--reps N] [--top K]

Per repetition A runs, then B (alternating, so that the host's speed
moves both alike).  Prints, for each map and program by name, the median
time over the repetitions (us) of A and of B, largest first, and the
medians of the totals: all map creations, all program loads, libbpf's
feature probes (unnamed programs and "libbpf_*" maps).  strace slows
every call by about the same few microseconds, so compare builds with
it rather than reading the numbers as absolute; the session's own CPU
lives in tests/bench/python.py.  For docs/PERFORMANCE.md's tables of map
and program changes (session 48); not part of `make bench`.  Root.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

CALL = re.compile(r"bpf\((BPF_MAP_CREATE|BPF_PROG_LOAD), .*?"
                  r"(?:map_name|prog_name)=\"([^\"]*)\".*<([0-9.]+)>")


def one_start(binary, out):
    """{(kind, name): seconds} of one `BINARY -- true` start."""
    p = subprocess.run(["strace", "-f", "-T", "-e", "trace=bpf", binary, "-q", "-o", out,
                        "--", "true"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("bpf_setup_cost: %s failed: %s" % (binary, p.stderr.strip()[-300:]))
    calls = {}
    for line in p.stderr.splitlines():
        m = CALL.search(line)
        if not m:
            continue
        kind = "map" if m.group(1) == "BPF_MAP_CREATE" else "prog"
        name = m.group(2) or "(probe)"
        if name.startswith("libbpf_"):
            name = "(probe) " + name
        key = (kind, name)
        calls[key] = calls.get(key, 0.0) + float(m.group(3))
    return calls


def totals(calls):
    t = {"maps": 0.0, "programs": 0.0, "probes": 0.0}
    for (kind, name), s in calls.items():
        if name.startswith("(probe)"):
            t["probes"] += s
        else:
            t["maps" if kind == "map" else "programs"] += s
    return t


def median_us(runs, key):
    vals = [r.get(key, 0.0) for r in runs]
    return 1e6 * statistics.median(vals)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b", nargs="?")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bpf_setup_cost: needs root (BPF)")
    builds = [args.a] + ([args.b] if args.b else [])
    runs = {b: [] for b in builds}
    with tempfile.TemporaryDirectory(prefix="bpf_setup_cost.") as tmp:
        for i in range(args.reps):
            for b in builds:
                runs[b].append(one_start(b, os.path.join(tmp, "out.prof")))
    keys = set()
    for b in builds:
        for r in runs[b]:
            keys.update(r)
    head = "%-34s" % "median us" + "".join("%12s" % ("A", "B")[i] for i in range(len(builds)))
    print("A = %s%s; %d starts each" % (args.a, "; B = %s" % args.b if args.b else "", args.reps))
    print(head)
    for kind, name in sorted(keys, key=lambda k: -median_us(runs[args.a], k))[:args.top]:
        print("%-34s" % ("%s %s" % (kind, name))[:34] +
              "".join("%12.0f" % median_us(runs[b], (kind, name)) for b in builds))
    for t in ("maps", "programs", "probes"):
        print("%-34s" % ("total: " + t) +
              "".join("%12.0f" % (1e6 * statistics.median(totals(r)[t] for r in runs[b]))
                      for b in builds))


if __name__ == "__main__":
    main()
