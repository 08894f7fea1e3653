#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Kernel stacks: the syscalls workload spends about half of its time in
# read(2) of 64 KiB blocks from /dev/zero.  bpfprof -p (with the test plugin
# tests/fixtures/plugins/dump.c, which symbolizes with host->symbolize(...,
# kernel=1, ...)) and `perf record -e cpu-clock -F 499 -g -p PID` profile it
# at the same time.  Checked: kernel frames resolve to names that are in
# /proc/kallsyms, the syscall samples have the read path in the kernel
# (leaf first, entry code outermost; or, where a paravirtualized guest
# enables interrupts with a call, the syscall entry) joined to do_read <-
# sys_part <- main in user space, and the kernel share and the hottest kernel function's share
# are within 10 points of what perf measures.
. "$(dirname "$0")/../lib/common.sh"
need_root
LIB=$BPFPROF_SRC/tests/lib
command -v perf > /dev/null || fail "perf is not installed (linux-perf)"
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/dump.so" || fail "cannot build the dump plugin"

"$WL/syscalls" --wait -k 50 -s 8 > "$TMP/sc.out" 2> "$TMP/sc.err" & CHILD_PIDS+=($!)
pid=$(python3 "$LIB/procwait.py" ready "$TMP/sc.out" 20) || fail "syscalls never got ready"
kill -USR1 "$pid"
perf record -e cpu-clock -F 499 -g -p "$pid" -o "$TMP/perf.data" -- sleep 4 2> "$TMP/perf.err" & pp=$!
"$BPFPROF" -p "$pid" -F 499 -d 4 --plugin "$TMP/dump.so" -o "$TMP/dump.txt" 2> "$TMP/bp.err" & bp=$!
wait $bp || { cat "$TMP/bp.err"; fail "bpfprof -p syscalls failed"; }
wait $pp || { cat "$TMP/perf.err"; fail "perf record failed"; }
cat "$TMP/bp.err"
perf report -i "$TMP/perf.data" --no-children --stdio -q -g none -F sample,dso,sym \
	> "$TMP/perf.txt" 2> "$TMP/perf-report.err" || { cat "$TMP/perf-report.err"; fail "perf report failed"; }
head -8 "$TMP/perf.txt"

PYTHONPATH=$LIB python3 - "$TMP/dump.txt" "$TMP/perf.txt" "$pid" <<'EOF' || fail "kernel stack checks failed"
import re, sys
import profdump

d = profdump.load(sys.argv[1])
pid = int(sys.argv[3])
bad = 0
def check(ok, what):
    global bad
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    bad += not ok

# perf: samples by (dso, symbol); kernel samples are [kernel.kallsyms].
perf_total = perf_kernel = 0
perf_ksyms = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*(\d+)\s+(\S+)\s+\[(.)\]\s+(\S+)", line)
    if not m:
        continue
    n = int(m.group(1))
    perf_total += n
    if m.group(2) == "[kernel.kallsyms]":
        perf_kernel += n
        perf_ksyms[m.group(4)] = perf_ksyms.get(m.group(4), 0) + n

sel = d.counts_of({pid})
n = sum(c.samples for c in sel)
kern = [c for c in sel if c.kernel]
nk = sum(c.samples for c in kern)
# 10 points must be >= 3.5 sigma of the difference of two ~50% shares:
# >= 613 samples each; ask for 700 (an unloaded machine gives ~2000).
check(n >= 700 and perf_total >= 700, "samples: bpfprof %d, perf %d (>= 700 each)" % (n, perf_total))
if not n or not perf_total:
    sys.exit(1)
ps, bs = perf_kernel / perf_total, nk / n
check(0.2 <= ps <= 0.8, "perf: kernel share %.1f%% (the workload works: 20..80%%)" % (100 * ps))
check(abs(bs - ps) <= 0.10, "kernel share: bpfprof %.1f%%, perf %.1f%% (+-10 points; sigma %.1f)"
      % (100 * bs, 100 * ps, 100 * profdump.sigma(ps, n)))

# Kernel frames resolve, to names the kernel knows.
kallsyms = set()
for line in open("/proc/kallsyms"):
    p = line.split()
    if len(p) >= 3:
        kallsyms.add(p[2])
frames = sum(c.samples * len(c.kernel) for c in kern)
unres = sum(c.samples * sum(f.startswith("?") for f in c.kernel) for c in kern)
check(frames and unres <= 0.01 * frames, "kernel frames resolved: %d of %d (>= 99%%)" % (frames - unres, frames))
names = {f for c in kern for f in c.kernel if not f.startswith("?")}
unknown = sorted(f for f in names if f not in kallsyms)
check(not unknown, "all %d distinct kernel frame names are in /proc/kallsyms (not: %s)" % (len(names), unknown[:5]))

# The hottest kernel function, by both.
bk = {}
for c in kern:
    bk[c.kernel[0]] = bk.get(c.kernel[0], 0) + c.samples
btop = max(bk, key=bk.get)
ptop = max(perf_ksyms, key=perf_ksyms.get) if perf_ksyms else None
check(btop == ptop, "hottest kernel function: bpfprof %s, perf %s" % (btop, ptop))
bsh, psh = bk[btop] / n, perf_ksyms.get(btop, 0) / perf_total
check(abs(bsh - psh) <= 0.10, "%s: bpfprof %.1f%%, perf %.1f%% of all samples (+-10 points)"
      % (btop, 100 * bsh, 100 * psh))

# Syscall samples: the read path in the kernel, entry code outermost, and
# the user stack that made the call.
# In read(2)'s entry and exit: do_syscall_64 enables interrupts, and a
# timer interrupt held back until then is taken there.  On a
# paravirtualized guest that is a call of its own (pvm_irq_enable), which
# both profilers show with do_syscall_64 the only frame above it: about a
# quarter of the kernel samples there, none elsewhere.
in_entry = lambda c: (len(c.kernel) >= 2 and c.kernel[-2] == "do_syscall_64" and
                      all("irq_enable" in f for f in c.kernel[:-2]) and
                      c.user[:1] == ["do_read"])
read_path = lambda c: (any(f in ("vfs_read", "ksys_read", "__x64_sys_read") for f in c.kernel) or
                       in_entry(c))
reads = [c for c in kern if read_path(c)]
nr = sum(c.samples for c in reads)
ne = sum(c.samples for c in reads if in_entry(c))
check(nr >= 0.9 * nk, "kernel samples under read(2): %d of %d (>= 90%%; %d of them in its entry"
      " or exit, where interrupts are enabled again)" % (nr, nk, ne))
check(nr - ne >= 0.5 * nk, "kernel samples with read(2)'s own path (vfs_read...): %d of %d (>= 50%%)"
      % (nr - ne, nk))
outer = sum(c.samples for c in reads if c.kernel[-1].startswith("entry_SYSCALL_64"))
check(nr and outer >= 0.99 * nr, "read samples whose outermost kernel frame is entry_SYSCALL_64*: %d of %d"
      % (outer, nr))
joined = sum(c.samples for c in reads if c.user[:3] == ["do_read", "sys_part", "main"])
check(nr and joined >= 0.95 * nr, "read samples with user stack do_read <- sys_part <- main: %d of %d (>= 95%%)"
      % (joined, nr))
ex = max(reads, key=lambda c: c.samples) if reads else None
if ex:
    print("    e.g. %d x %s | %s" % (ex.samples, ";".join(ex.kernel), ";".join(ex.user)))
sys.exit(1 if bad else 0)
EOF
ok "kernel stacks symbolized and the kernel share agrees with perf"
