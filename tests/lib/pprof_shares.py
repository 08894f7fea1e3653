#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pprof_shares.py - read a gperftools CPU profile with both pprof tools.

This file owns the test-side view of what google-pprof (perl) and
`go tool pprof` report for a profile: flat/cumulative sample counts per
function, the call stacks (traces), and the comparison of both with a
workload's ground truth (`WORKLOAD --truth`, see tests/workloads/shares.c).
Standard library only.

As a program:
  pprof_shares.py show BINARY PROFILE
      print what both tools report (functions, then stacks)
  pprof_shares.py check BINARY PROFILE [--truth-from WORKLOAD]
          [--tolerance POINTS] [--expect-samples N] [--samples-tolerance FRAC]
      compare with the ground truth; exit 0 if all checks pass, 1 if not,
      2 on usage or tool errors.  Every check prints one PASS/FAIL line.

Stacks are lists of function names, root first.  Consecutive repeats of a
name are merged (google-pprof shows a leaf that the profile repeats, see
plugins/gperftools/gperftools.c, as leaf;leaf, and real self-recursion
reads the same either way for these checks).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

_ADDR_SUFFIX = re.compile(r"<[0-9a-fA-F]+>")


class ToolError(Exception):
    pass


def _run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except FileNotFoundError as e:
        raise ToolError("%s: not installed (%s)" % (cmd[0], e))
    except subprocess.TimeoutExpired:
        raise ToolError("%s timed out" % " ".join(cmd))
    if r.returncode != 0:
        raise ToolError("%s failed (exit %d):\n%s%s"
                        % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout, r.stderr


def _merge_repeats(frames):
    out = []
    for f in frames:
        if not out or out[-1] != f:
            out.append(f)
    return out


class Report:
    """What one tool says about one profile."""

    def __init__(self, tool):
        self.tool = tool
        self.total = 0          # samples
        self.functions = []     # (name, flat, cum), in the tool's order
        self.stacks = []        # (count, [root, ..., leaf])
        self.messages = []      # notable stderr lines (e.g. frames removed)

    def flat_share(self, name):
        for n, flat, _ in self.functions:
            if n == name:
                return flat / self.total if self.total else 0.0
        return 0.0

    def path_share(self, path):
        """Share of samples whose stack contains @path (root first)
        as consecutive frames."""
        k = len(path)
        hit = 0
        for count, frames in self.stacks:
            if any(frames[i:i + k] == path for i in range(len(frames) - k + 1)):
                hit += count
        return hit / self.total if self.total else 0.0


def perl_report(binary, profile):
    """google-pprof --text (functions) and --collapsed (stacks)."""
    rep = Report("google-pprof")
    out, err = _run(["google-pprof", "--text", binary, profile])
    rep.messages = [l for l in err.splitlines() if l.startswith("Removing ")]
    for line in out.splitlines():
        m = re.match(r"Total: (\d+) samples", line)
        if m:
            rep.total = int(m.group(1))
            continue
        # flat flat% sum% cum cum% name
        m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$", line)
        if m:
            rep.functions.append((m.group(3).strip(), int(m.group(1)), int(m.group(2))))
    out, _ = _run(["google-pprof", "--collapsed", binary, profile])
    for line in out.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_ADDR_SUFFIX.sub("", f) for f in stack.split(";")]
        rep.stacks.append((int(count), _merge_repeats(frames)))
    return rep


def _go_name(text):
    return text.strip().removesuffix("(inline)").strip()


def go_report(binary, profile):
    """go tool pprof -top and -traces, counting samples."""
    rep = Report("go tool pprof")
    base = ["go", "tool", "pprof", "-sample_index=samples"]
    out, _ = _run(base + ["-top", "-nodefraction=0", "-nodecount=100000", binary, profile])
    for line in out.splitlines():
        m = re.match(r"Showing nodes accounting for (\d+), [\d.]+% of (\d+) total", line)
        if m:
            rep.total = int(m.group(2))
            continue
        m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$", line)
        if m:
            rep.functions.append((_go_name(m.group(3)), int(m.group(1)), int(m.group(2))))
    out, _ = _run(base + ["-traces", binary, profile])
    count, frames = None, []
    for line in out.splitlines() + ["-----------+"]:
        if line.startswith("-----------+"):
            if count is not None:
                rep.stacks.append((count, _merge_repeats(frames[::-1])))
            count, frames = None, []
            continue
        m = re.match(r"\s*(\d+)\s{3}(\S.*)$", line)
        if m and len(line) - len(line.lstrip()) < 11:
            count, frames = int(m.group(1)), [_go_name(m.group(2))]
        elif count is not None and line.strip():
            frames.append(_go_name(line))
    return rep


def load_truth(workload):
    """Parse `WORKLOAD --truth`: {'share': {f: x}, 'path': {(f, ...): x},
    'root': (f, ...) or None}; paths and root are root first."""
    out, _ = _run([workload, "--truth"])
    truth = {"share": {}, "path": {}, "root": None}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "share":
            truth["share"][parts[1]] = float(parts[2])
        elif len(parts) == 3 and parts[0] == "path":
            truth["path"][tuple(parts[1].split(";"))] = float(parts[2])
        elif len(parts) == 2 and parts[0] == "root":
            truth["root"] = tuple(parts[1].split(";"))
    if not truth["share"]:
        raise ToolError("%s --truth printed no 'share' lines" % workload)
    return truth


def show(reports):
    for rep in reports:
        print("== %s: %d samples" % (rep.tool, rep.total))
        for m in rep.messages:
            print("   note: %s" % m)
        for name, flat, cum in rep.functions:
            print("  %8d %6.2f%%  %8d %6.2f%%  %s" % (
                flat, 100.0 * flat / max(rep.total, 1), cum,
                100.0 * cum / max(rep.total, 1), name))
        print("-- stacks (root first):")
        for count, frames in sorted(rep.stacks, key=lambda s: -s[0]):
            print("  %8d  %s" % (count, ";".join(frames)))


def check(reports, truth, tolerance, expect_samples, samples_tolerance):
    """Compare every report with the truth; returns the number of failures."""
    failures = 0

    def verdict(ok, what):
        nonlocal failures
        print("%s: %s" % ("PASS" if ok else "FAIL", what))
        if not ok:
            failures += 1

    hottest = max(truth["share"], key=truth["share"].get)
    tol = tolerance / 100.0
    for rep in reports:
        t = rep.tool
        verdict(rep.total > 0, "%s: profile has samples (%d)" % (t, rep.total))
        if rep.total == 0:
            continue
        verdict(not rep.messages, "%s: removed no frames%s" % (
            t, "" if not rep.messages else " (" + "; ".join(rep.messages) + ")"))
        by_flat = sorted(rep.functions, key=lambda f: -f[1])
        first = by_flat[0][0] if by_flat else None
        verdict(first == hottest, "%s: hottest function is %s (truth %s)" % (t, first, hottest))
        for name, want in sorted(truth["share"].items(), key=lambda kv: -kv[1]):
            got = rep.flat_share(name)
            verdict(abs(got - want) <= tol, "%s: flat share of %s %.1f%% (truth %.1f%%, +-%g)"
                    % (t, name, 100 * got, 100 * want, tolerance))
        for path, want in sorted(truth["path"].items(), key=lambda kv: -kv[1]):
            got = rep.path_share(list(path))
            verdict(abs(got - want) <= tol, "%s: stacks through %s %.1f%% (truth %.1f%%, +-%g)"
                    % (t, " -> ".join(path), 100 * got, 100 * want, tolerance))
        root = truth.get("root")
        for path in sorted(truth["path"], key=lambda p: -truth["path"][p]) if root else []:
            # Only the thread that runs the root has it in its stacks; a
            # whole chain from it shows that no caller was cut out.
            full = list(root) + list(path)
            verdict(rep.path_share(full) > 0, "%s: a stack goes %s" % (t, " -> ".join(full)))
        if expect_samples:
            lo, hi = expect_samples * (1 - samples_tolerance), expect_samples * (1 + samples_tolerance)
            verdict(lo <= rep.total <= hi, "%s: %d samples, expected %.0f +-%.0f%%"
                    % (t, rep.total, expect_samples, 100 * samples_tolerance))
    return failures


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("show", "check"):
        p = sub.add_parser(name)
        p.add_argument("binary")
        p.add_argument("profile")
        p.add_argument("--tools", default="perl,go",
                       help="comma-separated: perl (google-pprof), go (go tool pprof)")
        if name == "check":
            p.add_argument("--truth-from", help="workload printing --truth (default: BINARY)")
            p.add_argument("--tolerance", type=float, default=5.0,
                           help="percentage points allowed per share (default 5)")
            p.add_argument("--expect-samples", type=float, default=0,
                           help="expected total samples (0: do not check)")
            p.add_argument("--samples-tolerance", type=float, default=0.15,
                           help="allowed relative error of the total (default 0.15)")
    args = ap.parse_args(argv)
    try:
        readers = {"perl": perl_report, "go": go_report}
        tools = [t for t in args.tools.split(",") if t]
        for t in tools:
            if t not in readers:
                raise ToolError("unknown tool %r" % t)
            if not shutil.which("google-pprof" if t == "perl" else "go"):
                raise ToolError("%s is not installed" % ("google-pprof" if t == "perl" else "go"))
        if not os.path.exists(args.profile):
            raise ToolError("%s: no such profile" % args.profile)
        reports = [readers[t](args.binary, args.profile) for t in tools]
        if args.cmd == "show":
            show(reports)
            return 0
        truth = load_truth(args.truth_from or args.binary)
    except ToolError as e:
        print("pprof_shares: %s" % e, file=sys.stderr)
        return 2
    failures = check(reports, truth, args.tolerance, args.expect_samples, args.samples_tolerance)
    print("%s: %d check(s) failed" % ("FAIL" if failures else "PASS", failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
