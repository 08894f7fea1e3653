#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""profdump.py - reads the text the test plugin tests/fixtures/plugins/dump.c
writes (one bpfprof run: run totals, processes, threads, symbolized stacks)
and answers the questions the multi-process integration tests ask of it.
Standard library only.  Used as a module (load(), Dump) and as a program:

  profdump.py summary DUMP        print processes, threads and top leaves
  profdump.py sigma P N           print one standard deviation of a share
                                  p measured from n samples, in points

It also parses bpfprof's end-of-run summary on stderr (parse_summary()).
"""
import math
import re
import sys


class Count:
    __slots__ = ("pid", "tid", "samples", "kernel", "user")

    def __init__(self, pid, tid, samples, kernel, user):
        self.pid, self.tid, self.samples = pid, tid, samples
        self.kernel, self.user = kernel, user      # frame names, leaf first

    def leaf(self):
        """The function the sample was in: kernel leaf if any, else user leaf."""
        if self.kernel:
            return self.kernel[0]
        return self.user[0] if self.user else "[no stack]"

    def user_leaf(self):
        return self.user[0] if self.user else None


class Dump:
    def __init__(self):
        self.run = {}
        self.processes = {}     # pid -> dict(ppid, comm, samples, exited, exe)
        self.threads = {}       # tid -> dict(pid, comm, samples)
        self.counts = []        # Count
        self.stream = None      # {samples, lost, events} with BPFPROF_TEST_DUMP_STREAM
        self.stream_comms = []  # (pid, tid, name) of COMM/EXEC records, in order
        self.stream_mmaps = []  # (pid, path) of MMAP records, in order

    # -- selections ---------------------------------------------------------
    def counts_of(self, pids=None, tids=None):
        return [c for c in self.counts
                if (pids is None or c.pid in pids) and (tids is None or c.tid in tids)]

    def total(self, pids=None, tids=None):
        return sum(c.samples for c in self.counts_of(pids, tids))

    def pids_with_comm(self, comm):
        return sorted(p for p, d in self.processes.items() if d["comm"] == comm)

    def leaf_shares(self, pids=None, tids=None):
        """{function: share of samples in which it is the leaf}."""
        sel = self.counts_of(pids, tids)
        n = sum(c.samples for c in sel)
        out = {}
        for c in sel:
            out[c.leaf()] = out.get(c.leaf(), 0) + c.samples
        return {k: v / n for k, v in out.items()} if n else {}

    def share_where(self, pred, pids=None, tids=None):
        """(samples where pred(count) holds, all samples) of the selection."""
        sel = self.counts_of(pids, tids)
        return sum(c.samples for c in sel if pred(c)), sum(c.samples for c in sel)

    def thread_samples(self, pids=None):
        """{tid: samples} summed from the counts."""
        out = {}
        for c in self.counts_of(pids):
            out[c.tid] = out.get(c.tid, 0) + c.samples
        return out


def _frames(field):
    return [] if field == "-" else field.split(";")


def load(path):
    d = Dump()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            kind = parts[0]
            if kind == "scomm":
                d.stream_comms.append((int(parts[1]), int(parts[2]), parts[3]))
            elif kind == "smmap":
                d.stream_mmaps.append((int(parts[1]), parts[2]))
            elif kind == "stream":
                kv = dict(zip(parts[1::2], parts[2::2]))
                d.stream = {k: int(v) for k, v in kv.items()}
            elif kind == "run":
                kv = dict(zip(parts[1::2], parts[2::2]))
                d.run = {"seen": int(kv["seen"]), "kept": int(kv["kept"]),
                         "drops": [int(x) for x in kv["drops"].split(",")],
                         "period": int(kv["period"]), "freq": int(kv["freq"]),
                         "target": kv.get("target", "")}
            elif kind == "process":
                d.processes[int(parts[1])] = {
                    "ppid": int(parts[2]), "comm": parts[3], "samples": int(parts[4]),
                    "exited": int(parts[5]), "exe": parts[6] if len(parts) > 6 else ""}
            elif kind == "thread":
                d.threads[int(parts[1])] = {"pid": int(parts[2]), "comm": parts[3],
                                            "samples": int(parts[4])}
            elif kind == "count":
                d.counts.append(Count(int(parts[1]), int(parts[2]), int(parts[3]),
                                      _frames(parts[4]), _frames(parts[5])))
    if not d.run:
        raise ValueError("%s: no 'run' line (not a dump.c output?)" % path)
    return d


DROP_NAMES = ("user-stack", "kernel-stack", "stack-map-full", "count-map-full", "ringbuf-full")


def parse_summary(text):
    """bpfprof's end-of-run summary (stderr): {'kept', 'seen', 'processes',
    'drops': {name: n}, 'events_lost', 'drops_line'}, or None without one."""
    m = re.search(r"^bpfprof: (\d+) samples \((\d+) seen\) from (\d+) process", text, re.M)
    dl = re.search(r"^bpfprof: drops: (.*)$", text, re.M)
    if not m or not dl:
        return None
    line = dl.group(1)
    main, _, lost = line.partition(";")
    main = re.sub(r"\([^)]*\)", "", main)
    drops = {name: int(n) for name, n in re.findall(r"([a-z-]+) (\d+)", main)}
    ev = re.search(r"lifecycle events lost (\d+)", lost)
    return {"kept": int(m.group(1)), "seen": int(m.group(2)), "processes": int(m.group(3)),
            "drops": drops, "events_lost": int(ev.group(1)) if ev else 0, "drops_line": line.strip()}


def sigma(p, n):
    """One standard deviation of a share p measured from n samples."""
    return math.sqrt(p * (1 - p) / n) if n > 0 else float("inf")


def summary(d, out=sys.stdout):
    r = d.run
    print("run: seen %d kept %d drops %s period %d ns, %s" % (
        r["seen"], r["kept"], r["drops"], r["period"], r["target"]), file=out)
    for pid, p in sorted(d.processes.items(), key=lambda kv: -kv[1]["samples"])[:20]:
        print("process %d ppid %d %-16s %7d samples exited=%d %s" % (
            pid, p["ppid"], p["comm"], p["samples"], p["exited"], p["exe"]), file=out)
        for tid, t in sorted(d.threads.items()):
            if t["pid"] == pid:
                print("    thread %d %-16s %7d" % (tid, t["comm"], t["samples"]), file=out)
        shares = d.leaf_shares(pids={pid})
        for fn, s in sorted(shares.items(), key=lambda kv: -kv[1])[:5]:
            print("        %6.2f%% %s" % (100 * s, fn), file=out)


def main(argv):
    if len(argv) == 2 and argv[0] == "summary":
        summary(load(argv[1]))
        return 0
    if len(argv) == 3 and argv[0] == "sigma":
        print("%.3f" % (100 * sigma(float(argv[1]), int(argv[2]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
