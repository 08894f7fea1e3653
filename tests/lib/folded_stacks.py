#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""folded_stacks.py - owns the whole-stack checks of the integration tests
(tests/integration/dwarf_*.sh, deep_stacks.sh, realigned_stacks.sh,
auto_lifecycle.sh, young_processes.sh, ...): it reads folded stacks
(bpfprof --format folded: "comm;root;...;leaf COUNT", kernel frames
suffixed _[k]) and turns `perf script` output, and what the pprof tools
print of a profile, into the same form, so that bpfprof, perf record and
every output format are judged by one set of rules.  Standard library
only.

Only user frames are matched: the comm (first field) and the kernel frames
(_[k], which folded puts below the user frames) are removed, and what is
left is matched as the string "root;...;leaf" (empty for a sample without
user frames).  Only count's --comm looks at the comm.

  folded_stacks.py count [--comm COMM] [--among SELECT] [--not-kernel KREGEX]
                         FILE REGEX [REGEX...]
      one line "MATCHED SELECTED" per REGEX.  SELECTED is the samples in
      FILE of processes named exactly COMM (any comm without --comm) whose
      user stack string re.search()-matches the regex SELECT (any stack
      without --among; "." is any with a user frame) and none of whose
      kernel frames matches KREGEX; MATCHED is those of
      them whose user stack also matches REGEX.  Without an option
      SELECTED is all samples in FILE.  E.g. the samples of openssl
      processes with a libcrypto frame, and how many reach main's caller:
      count --comm openssl --among libcrypto FILE ';__libc_start_call_main;'
  folded_stacks.py between FILE OUTER INNER NAMES
      "MATCHED TOTAL": samples whose user stack has OUTER, then one or
      more frames that are all names listed in the file NAMES (one name a
      line; a frame "[BASENAME]" of an unresolved address counts when
      "[BASENAME]" is listed), then INNER - e.g. our sort function, libc's
      qsort frames, our comparison callback; INNER "-" means the end of
      the stack (the listed frames are the innermost ones, e.g. memcpy)
  folded_stacks.py top FILE [N]
      the N (10) most frequent user stacks, for the log
  folded_stacks.py self REFERENCE OTHER N POINTS SIGMAS
      compare the self shares (percent of each file's samples) of the leaf
      user frames, i.e. the innermost user function (a sample in the
      kernel counts for the user function that entered it; one with no
      user frame for "[no user stack]"), for the union of both files' N
      largest.  Each difference is allowed max(POINTS, SIGMAS * sigma),
      sigma being the standard deviation, in points, of the difference of
      two independent estimates of the same share p from N1 and N2
      samples, sqrt(p (1 - p) (1/N1 + 1/N2)), with p the two estimates'
      mean weighted by sample count.  Prints one line "REF% OTHER% DIFF
      ALLOWED NAME" per function, largest first, then "worst |DIFF|
      ALLOWED NAME" for the one furthest outside (or least inside) its
      allowance
  folded_stacks.py from-perf-script < PERF_SCRIPT_OUTPUT > FOLDED
      `perf script -F comm,ip,sym,dso` (one header line per sample, then
      one indented line per frame, leaf first; blank line between samples)
      to folded lines, frames in [kernel.kallsyms] suffixed _[k], frames
      without a symbol named "[BASENAME]" after their file, as bpfprof's
      folded output names them ("[unknown]" when perf knows no file either)
  folded_stacks.py from-pprof-traces < TRACES > FOLDED
      `go tool pprof -sample_index=samples -traces BINARY PROFILE` (one
      block per stack: labels, then "COUNT   LEAF" and one line per caller)
      to folded lines; the comm is the block's "comm:" label ("-" if
      none); kernel frames cannot be told apart there and stay unmarked
  folded_stacks.py perf-names < FOLDED > FOLDED
      each frame's demangled C++ name in the form perf 6.1 prints it
      (libiberty without DMGL_PARAMS): no parameters or qualifiers, no
      " [clone .isra.0]", no return type of a function template;
      "ns::Work<int>::run(unsigned long) const" is "ns::Work<int>::run".
      Other names stay as they are.  Stacks that become equal are merged
  folded_stacks.py from-collapsed COMM < COLLAPSED > FOLDED
      `google-pprof --collapsed BINARY PROFILE` ("root;...;leaf COUNT",
      names may end in "<ADDRESS>") to folded lines with the comm COMM

Exit 0, or 2 on usage or unreadable input.
"""
import collections
import math
import re
import sys


def read_folded_kernel(path):
    """[(comm, user_frames_root_first, kernel_frames, count)], count > 0
    (kernel frames without their _[k])."""
    out = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                raise ValueError("%s:%d: not 'stack COUNT': %r" % (path, lineno, line))
            comm, *frames = stack.split(";")
            user = [fr for fr in frames if not fr.endswith("_[k]")]
            kernel = [fr[:-4] for fr in frames if fr.endswith("_[k]")]
            out.append((comm, user, kernel, int(count)))
    return out


def read_folded_comm(path):
    """[(comm, user_frames_root_first, count)], count > 0."""
    return [(c, user, n) for c, user, _, n in read_folded_kernel(path)]


def read_folded(path):
    """[(user_frames_root_first, count)], count > 0."""
    return [(user, n) for _, user, n in read_folded_comm(path)]


def cmd_count(path, regexes, comm=None, among=None, not_kernel=None):
    sel = re.compile(among) if among is not None else None
    skip = re.compile(not_kernel) if not_kernel is not None else None
    rxs = [re.compile(rx) for rx in regexes]
    stacks = []                                 # (user stack string, count)
    for c, user, kernel, n in read_folded_kernel(path):
        s = ";".join(user)
        if skip and any(skip.search(k) for k in kernel):
            continue
        if (comm is None or c == comm) and (sel is None or sel.search(s)):
            stacks.append((s, n))
    selected = sum(n for _, n in stacks)
    for r in rxs:
        print(sum(n for s, n in stacks if r.search(s)), selected)
    return 0


def parse_count(args):
    """count's arguments (after "count") as cmd_count()'s (path, regexes,
    comm, among, not_kernel), or None if they are not [--comm COMM]
    [--among SELECT] [--not-kernel KREGEX] FILE REGEX [REGEX...]."""
    opts = {}
    while len(args) >= 2 and args[0] in ("--comm", "--among", "--not-kernel"):
        name = args[0][2:].replace("-", "_")
        if name in opts:
            return None
        opts[name] = args[1]
        args = args[2:]
    if len(args) < 2:
        return None
    return args[0], args[1:], opts.get("comm"), opts.get("among"), opts.get("not_kernel")


def has_between(user, outer, inner, names):
    """OUTER, >= 1 frames all in @names, INNER (or the end of the stack
    if INNER is "-"), consecutively."""
    for i, fr in enumerate(user):
        if fr != outer:
            continue
        j = i + 1
        while j < len(user) and user[j] in names:
            j += 1
        if j == i + 1:
            continue
        if inner == "-" and j == len(user):
            return True
        if j < len(user) and user[j] == inner:
            return True
    return False


def cmd_between(path, outer, inner, names_path):
    with open(names_path) as f:
        names = {ln.strip() for ln in f if ln.strip()}
    stacks = read_folded(path)
    total = sum(n for _, n in stacks)
    hit = sum(n for user, n in stacks if has_between(user, outer, inner, names))
    print(hit, total)
    return 0


def leaf_counts(path):
    """(Counter {innermost user function: samples}, total) of @path."""
    agg = collections.Counter()
    for user, c in read_folded(path):
        agg[user[-1] if user else "[no user stack]"] += c
    total = sum(agg.values())
    if not total:
        raise ValueError("%s: no samples" % path)
    return agg, total


def compare_shares(ref, nr, other, no, names, points, sigmas):
    """[(REF%, OTHER%, ALLOWED, NAME)] for each of @names, from leaf_counts()
    of two files (@ref of @nr samples, @other of @no): the difference
    allowed is max(@points, @sigmas * sigma), as `self` describes."""
    rows = []
    for name in names:
        r, o = 100.0 * ref[name] / nr, 100.0 * other[name] / no
        p = (ref[name] + other[name]) / float(nr + no)
        sigma = 100.0 * math.sqrt(p * (1 - p) * (1.0 / nr + 1.0 / no))
        rows.append((r, o, max(points, sigmas * sigma), name))
    return rows


def cmd_self(ref_path, other_path, n, points, sigmas):
    ref, nr = leaf_counts(ref_path)
    other, no = leaf_counts(other_path)
    names = set()
    for agg in (ref, other):
        names.update(sorted(agg, key=lambda k: (-agg[k], k))[:n])
    rows = compare_shares(ref, nr, other, no, names, points, sigmas)
    rows.sort(key=lambda row: (-max(row[0], row[1]), row[3]))
    for r, o, allowed, name in rows:
        print("%6.2f %6.2f %+6.2f %5.2f %s" % (r, o, o - r, allowed, name))
    r, o, allowed, name = max(rows, key=lambda row: abs(row[1] - row[0]) / row[2])
    print("worst %.2f %.2f %s" % (abs(o - r), allowed, name))
    return 0


def cmd_top(path, n):
    agg = collections.Counter()
    for user, c in read_folded(path):
        agg[";".join(user)] += c
    total = sum(agg.values()) or 1
    for stack, c in agg.most_common(n):
        print("%6d %5.1f%%  %s" % (c, 100.0 * c / total, stack))
    return 0


_FRAME = re.compile(r"^\s+([0-9a-fA-F]+)\s+(.*?)\s+\((.*)\)\s*$")


def cmd_from_perf_script(inp, out):
    agg = collections.Counter()
    comm, frames = None, []

    def flush():
        if comm is not None:
            agg[";".join([comm] + frames[::-1])] += 1

    for line in inp:
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if not line[0].isspace():           # a sample's header
            flush()
            comm, frames = line.split()[0], []
            continue
        m = _FRAME.match(line)
        if not m or comm is None:
            continue
        sym, dso = m.group(2), m.group(3)
        # "name+0x1f" with --symoffs; plain names otherwise
        sym = re.sub(r"\+0x[0-9a-fA-F]+$", "", sym)
        if not sym or sym == "[unknown]":
            known = dso and not dso.startswith("[unknown")
            sym = "[%s]" % dso.rsplit("/", 1)[-1] if known else "[unknown]"
        sym = sym.replace(";", "_")
        if dso == "[kernel.kallsyms]" or dso.startswith("[kernel"):
            sym += "_[k]"
        frames.append(sym)
    flush()
    for stack, c in sorted(agg.items()):
        out.write("%s %d\n" % (stack, c))
    return 0


_TRACE_SAMPLE = re.compile(r"^(\s*)(\d+)\s{3}(\S.*)$")
_TRACE_LABEL = re.compile(r"^\s*(\w+):\s+(.*)$")


def cmd_from_pprof_traces(inp, out):
    agg = collections.Counter()
    comm, count, frames = "-", None, []

    def flush():
        if count is not None:
            agg[";".join([comm] + [f.replace(";", "_") for f in frames[::-1]])] += count

    for line in inp:
        line = line.rstrip("\n")
        if line.startswith("-----------+"):
            flush()
            comm, count, frames = "-", None, []
            continue
        m = _TRACE_SAMPLE.match(line)
        if m and count is None and len(m.group(1)) < 11:
            count, frames = int(m.group(2)), [m.group(3).strip()]
            continue
        if count is not None and line.strip():
            frames.append(line.strip())
            continue
        m = _TRACE_LABEL.match(line)
        if m and m.group(1) == "comm":
            comm = m.group(2).strip()
    flush()
    for stack, c in sorted(agg.items()):
        out.write("%s %d\n" % (stack, c))
    return 0


_ADDR_SUFFIX = re.compile(r"<[0-9a-fA-F]+>$")


def cmd_from_collapsed(inp, out, comm):
    agg = collections.Counter()
    for line in inp:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_ADDR_SUFFIX.sub("", f) for f in stack.split(";")]
        agg[";".join([comm] + frames)] += int(count)
    for stack, c in sorted(agg.items()):
        out.write("%s %d\n" % (stack, c))
    return 0


_CLONES = re.compile(r"( \[clone [^\]]*\])+$")
_QUALIFIERS = (" const", " volatile", " &&", " &", " noexcept")


def perf_name(name):
    """@name (c++filt's form) as perf 6.1's report and script print it."""
    n = _CLONES.sub("", name)
    while n.endswith(_QUALIFIERS):
        n = n[:n.rindex(" ")]
    if not n.endswith(")"):
        return name
    depth = 0
    for i in range(len(n) - 1, -1, -1):     # the parameter list's "("
        depth += {")": 1, "(": -1}.get(n[i], 0)
        if depth == 0:
            break
    else:
        return name
    n, depth, cut = n[:i], 0, 0
    for j, ch in enumerate(n):                # a return type ends at a space
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(ch, 0)
        if ch == " " and depth == 0 and not n[:j].endswith("operator"):
            cut = j + 1
    return n[cut:] or name


def cmd_perf_names(inp, out):
    agg = collections.Counter()
    for line in inp:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        agg[";".join(perf_name(f) for f in stack.split(";"))] += int(count)
    for stack, c in sorted(agg.items()):
        out.write("%s %d\n" % (stack, c))
    return 0


def main(argv):
    try:
        count = parse_count(argv[1:]) if argv and argv[0] == "count" else None
        if count:
            return cmd_count(*count)
        if len(argv) == 5 and argv[0] == "between":
            return cmd_between(*argv[1:])
        if len(argv) == 6 and argv[0] == "self":
            return cmd_self(argv[1], argv[2], int(argv[3]), float(argv[4]), float(argv[5]))
        if len(argv) in (2, 3) and argv[0] == "top":
            return cmd_top(argv[1], int(argv[2]) if len(argv) == 3 else 10)
        if len(argv) == 1 and argv[0] == "from-perf-script":
            return cmd_from_perf_script(sys.stdin, sys.stdout)
        if len(argv) == 1 and argv[0] == "from-pprof-traces":
            return cmd_from_pprof_traces(sys.stdin, sys.stdout)
        if len(argv) == 1 and argv[0] == "perf-names":
            return cmd_perf_names(sys.stdin, sys.stdout)
        if len(argv) == 2 and argv[0] == "from-collapsed":
            return cmd_from_collapsed(sys.stdin, sys.stdout, argv[1])
    except (OSError, ValueError, re.error) as e:
        print("folded_stacks: %s" % e, file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
