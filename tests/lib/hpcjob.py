# SPDX-License-Identifier: BSD-2-Clause
"""hpcjob.py - reads what the Slurm job tests (slurm_mpi.sh,
slurm_mpi_python.sh) check: the ranks a job's output reports, and the
text tests/tools/hpcdb prints of the merged database (--threads, and
--function's lines).  Standard library only.
"""
import re

# hpcdb --threads: "profile N [NODE n (hostid) RANK r (pid) THREAD t (tid)]: total T, trace samples S"
TUPLE = r"\[NODE (\d+) \(\S+\) RANK (\d+) \((\d+)\) THREAD (\d+) \((\d+)\)\]"


def ranks(job_out):
    """{rank: (pid, host)} from the job output's "rank R pid P host H" lines."""
    out = {}
    for line in open(job_out):
        m = re.match(r"rank (\d+) pid (\d+) host (\S+)$", line.strip())
        if m:
            out[int(m.group(1))] = (int(m.group(2)), m.group(3))
    return out


def profiles(threads_path):
    """({profile: dict(node, rank, pid, thread, tid, total, trace)}, trace
    lines or None) from hpcdb --threads."""
    out, trace_lines = {}, None
    for line in open(threads_path):
        m = re.match(r"profile (\d+) " + TUPLE + r": total ([\d.]+), trace samples (\d+)", line)
        if m:
            out[int(m.group(1))] = dict(node=int(m.group(2)), rank=int(m.group(3)),
                                        pid=int(m.group(4)), thread=int(m.group(5)),
                                        tid=int(m.group(6)), total=float(m.group(7)),
                                        trace=int(m.group(8)))
        m = re.match(r"trace: (\d+) lines", line)
        if m:
            trace_lines = int(m.group(1))
    return out, trace_lines


def function_seconds(functions_path, profs, inclusive=False):
    """{profile: {function: seconds}} from hpcdb --function's per-thread
    lines: each function's exclusive (or inclusive) share of the profile's
    total."""
    out = {}
    for line in open(functions_path):
        m = re.match(r"function (\S+) profile (\d+) .*: excl ([\d.]+)% incl ([\d.]+)%", line)
        if m and int(m.group(2)) in profs:      # not the summary's
            p = int(m.group(2))
            share = float(m.group(4 if inclusive else 3))
            out.setdefault(p, {})[m.group(1)] = profs[p]["total"] * share / 100
    return out


def rank_profiles(check, profs, rank, pid, host, node):
    """The profiles of @rank's process @pid, checked to be at least two
    (the main thread and another), all RANK @rank, all NODE @node (its
    @host's index)."""
    mine = [p for p, d in profs.items() if d["pid"] == pid]
    check(len(mine) >= 2 and all(profs[p]["rank"] == rank for p in mine),
          "rank %d (pid %d): %d thread profiles, all RANK %d" % (rank, pid, len(mine), rank))
    check(all(profs[p]["node"] == node for p in mine),
          "rank %d: NODE %d, its host %s" % (rank, node, host))
    return mine
