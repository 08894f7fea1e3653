#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""forker_summary.py - what tests/workloads/forker.c says on stderr, read
once for the tests that profile it (short_lived, exec_children, pre_exec),
and the bound a profile's child_work share must keep from what forker's
children measured themselves.  Standard library only; used as a module:

  s = forker_summary.parse(text)   a Summary, or None without the summary line
  s.kids                           the children's PIDs ("forker: child PID")
  s.clean(n)                       n children ran and none failed
  s.truth()                        the share of the children's CPU time they
                                   spent in child_work() (their own clocks)
  s.bound(n)                       how far a share of n samples may be from it
"""
import re

import profdump

SUMMARY = re.compile(r"^forker: children=(\d+) mode=(\w+) failed=(\d+) child_cpu_seconds=([\d.]+) "
                     r"self_cpu_seconds=([\d.]+) child_work_seconds=([\d.]+)", re.M)


class Summary:
    """forker's summary line: children, mode ("fork" or "exec"), failed,
    child_cpu and self_cpu (CPU seconds of the children and of forker,
    from getrusage()), child_work (the children's CPU seconds inside
    child_work(), from their own clocks), line (the line itself), kids
    (PIDs)."""

    def __init__(self, m, kids):
        self.children, self.mode, self.failed = int(m.group(1)), m.group(2), int(m.group(3))
        self.child_cpu, self.self_cpu = float(m.group(4)), float(m.group(5))
        self.child_work = float(m.group(6))
        self.line, self.kids = m.group(0), kids

    def clean(self, n):
        """Whether forker ran @n children, named them all and none failed."""
        return self.children == n and self.failed == 0 and len(self.kids) == n

    def truth(self):
        """child_work / child_cpu: the share of the children's samples
        child_work() should have (1 without any CPU time)."""
        if self.child_cpu <= 0:
            return 1.0
        return self.child_work / self.child_cpu

    def bound(self, n):
        """The largest distance, as a fraction, between truth() and a share
        measured from @n samples: 3 sigma of sampling error and 2 points
        more (a child's exit, and its samples' attribution at the edges of
        child_work())."""
        return 3 * profdump.sigma(self.truth(), n) + 0.02


def parse(text):
    """The Summary in forker's stderr @text, or None if it has no summary
    line (forker did not finish)."""
    m = SUMMARY.search(text)
    if not m:
        return None
    return Summary(m, [int(p) for p in re.findall(r"^forker: child (\d+)$", text, re.M)])
