#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""vdso_unnamed.py - the ranges of this kernel's vDSO text before its last
function symbol that no symbol covers and that are too long to be the
padding between two functions (64 bytes or more), as "START-END" offsets
in hex, one per line (nothing on most kernels).  Some kernels build a helper of
clock_gettime() out of line as a static function (a paravirtualized
guest's clock read): its samples are frames no profiler can name, perf
report's "[unknown] ([vdso])" too.  Reads its own vDSO (the same image in
every process) and asks readelf (binutils)."""
import re
import subprocess
import sys
import tempfile

with open("/proc/self/maps") as f:
    lo, hi = next([int(x, 16) for x in l.split()[0].split("-")] for l in f if "[vdso]" in l)
with open("/proc/self/mem", "rb") as mem, tempfile.NamedTemporaryFile(suffix=".so") as img:
    mem.seek(lo)
    img.write(mem.read(hi - lo))
    img.flush()
    sections = subprocess.run(["readelf", "-SW", img.name], capture_output=True, text=True,
                              check=True).stdout
    syms = subprocess.run(["readelf", "-sW", "--dyn-syms", img.name], capture_output=True,
                          text=True, check=True).stdout
m = re.search(r"\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", sections)
if not m:
    sys.exit("vdso_unnamed.py: no .text in the vDSO")
start, size = int(m.group(1), 16), int(m.group(2), 16)
funcs = sorted({(int(p[1], 16), int(p[2])) for p in (l.split() for l in syms.splitlines())
                if len(p) >= 8 and p[3] == "FUNC" and int(p[2]) > 0})
at = start
for addr, n in funcs:
    if addr - at >= 64 and addr <= start + size:
        print("%x-%x" % (at, addr))
    at = max(at, addr + n)
