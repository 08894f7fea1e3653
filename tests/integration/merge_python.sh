#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# merge_python.sh - Python functions through `bpfprof --format raw` and
# `bpfprof merge`: the pyburn workload (tests/workloads/pyburn.py) under
# Debian's python3.11, recorded raw at 999 Hz (4 CPU seconds), then
#   1. the measurement's INTERP_SYMBOLS section (docs/RAW.md) names the
#      workload's functions;
#   2. merged into folded, pprof, HPCToolkit, gperftools and perf.data,
#      each read back by its own reader (tests/lib/pyformats.py, as
#      python_formats.sh reads the direct outputs): every pyburn_*
#      function's total share within 3 points of the CPU time the
#      workload measured, pprof's Functions and HPCToolkit's procedures
#      with pyburn.py and the def line;
#   3. the merged pprof read by go tool pprof: the same shares from its
#      -traces, and in its -raw listing every pyburn_* location in
#      pyburn.py, at a line of its own function's body, with the def line
#      as the function's start line;
#   3b. the measurement merged with a copy of itself (the copy's pid is
#      renumbered): twice the samples under pyburn_run, all named;
#   4. the measurement without the section (as written before it
#      existed) still merges, its Python frames unnamed;
#   5. the section truncated or corrupt: exit 1, one line naming the
#      file and the section, and no output left behind.
. "$(dirname "$0")/../lib/common.sh"
need_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (apt-get install python3.11)"
command -v go >/dev/null || fail "go not installed (golang-go, for go tool pprof)"
command -v perf >/dev/null || fail "perf not installed (linux-perf)"
command -v google-pprof >/dev/null || fail "google-pprof not installed (google-perftools)"
[ -x "$BPFPROF_BUILD/tools/hpcdb" ] || fail "hpcdb not built"
PYBURN=$BPFPROF_SRC/tests/workloads/pyburn.py
LIB=$BPFPROF_SRC/tests/lib
export HPCDB=$BPFPROF_BUILD/tools/hpcdb
export PYTHONPATH=$LIB
CHECK="python3 $LIB/pyformats.py"

"$BPFPROF" --format raw -F 999 -o "$TMP/py.raw" -- "$PY" "$PYBURN" 4 "$TMP/truth" \
	2>"$TMP/rec.err" || { cat "$TMP/rec.err"; fail "bpfprof --format raw failed"; }
tail -n 3 "$TMP/rec.err"

# sections FILE: "TYPE OFFSET LENGTH" of each section (OFFSET: its header)
sections() {
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
off = 32
while off + 16 <= len(d):
    t, _, n = struct.unpack_from("<IIQ", d, off)
    print(t, off, n)
    off += 16 + n
    if t == 0x454e4421:
        break
EOF
}

# ---- 1. the section ----
read -r _ ioff ilen < <(sections "$TMP/py.raw" | awk '$1 == 9')
[ -n "$ioff" ] || fail "no INTERP_SYMBOLS section (type 9): $(sections "$TMP/py.raw" | tr '\n' ' ')"
nsyms=$(od -An -tu4 -j $((ioff + 16)) -N4 "$TMP/py.raw" | tr -d ' ')
for f in pyburn_run pyburn_outer_a pyburn_inner_a pyburn_hook; do
	dd if="$TMP/py.raw" bs=1 skip="$ioff" count=$((ilen + 16)) status=none | grep -aq "$f" ||
		fail "the INTERP_SYMBOLS section does not name $f"
done
ok "INTERP_SYMBOLS: $nsyms Python frames named in $ilen bytes"

# ---- 2. every merged format, read back by its own reader ----
for fmt in folded pprof hpctoolkit gperftools perf; do
	out=$TMP/m.$fmt
	"$BPFPROF" merge -q -o "$out" --format "$fmt" "$TMP/py.raw" 2>"$TMP/merge.err" ||
		fail "bpfprof merge --format $fmt failed: $(cat "$TMP/merge.err")"
	echo "== merged $fmt"
	$CHECK "$fmt" "$out" "$TMP/truth" 3 "$PYBURN" "$PY" || fail "merged $fmt: Python functions wrong"
	ok "merged $fmt: the Python functions, their shares (and files, lines)"
done

# ---- 3. go tool pprof reads the merged pprof ----
go tool pprof -symbolize=none -sample_index=samples -traces "$TMP/m.pprof" 2>"$TMP/go.err" |
	python3 "$LIB/folded_stacks.py" from-pprof-traces >"$TMP/go.folded" ||
	fail "go tool pprof -traces failed: $(tail -n 3 "$TMP/go.err")"
echo "== go tool pprof -traces"
$CHECK folded "$TMP/go.folded" "$TMP/truth" 3 "$PYBURN" ||
	fail "go tool pprof -traces: Python shares wrong"
ok "go tool pprof -traces: the Python functions' shares"
go tool pprof -symbolize=none -raw "$TMP/m.pprof" >"$TMP/go.raw" 2>"$TMP/go.err" ||
	fail "go tool pprof -raw failed: $(tail -n 3 "$TMP/go.err")"
python3 - "$TMP/go.raw" "$PYBURN" <<'EOF' || fail "go tool pprof -raw: Python locations wrong"
import re, sys
raw, pyfile = sys.argv[1:]
defs = [(i, m.group(1)) for i, t in enumerate(open(pyfile), 1)
        for m in [re.match(r"def (pyburn_\w+)\(", t)] if m]
body = {}
for k, (first, name) in enumerate(defs):
    last = defs[k + 1][0] - 1 if k + 1 < len(defs) else 10 ** 6
    body[name] = (first, last)
n = bad = 0
for line in open(raw):
    m = re.match(r"\s*\d+: 0x[0-9a-f]+ (pyburn_\w+) (\S+):(\d+) s=(\d+)$", line)
    if not m:
        continue
    name, f, ln, s = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
    n += 1
    first, last = body.get(name, (-1, -1))
    if f != pyfile or s != first or not first <= ln <= last:
        bad += 1
        print("FAIL: %s at %s:%d s=%d, want %s:%d..%d s=%d" % (name, f, ln, s, pyfile,
                                                              first, last, first))
print("%d pyburn_* locations, %d wrong" % (n, bad))
sys.exit(1 if bad or n < len(defs) else 0)
EOF
ok "go tool pprof -raw: every pyburn_* location in pyburn.py, in its function, def line its start"

# ---- 3b. two copies: the copy's pid is renumbered, its frames still named ----
mkdir "$TMP/copy"
cp "$TMP/py.raw" "$TMP/copy/again.raw"
"$BPFPROF" merge -q -o "$TMP/two.folded" --format folded "$TMP/py.raw" "$TMP/copy/again.raw" \
	2>"$TMP/merge.err" || fail "merge of two copies failed: $(cat "$TMP/merge.err")"
one=$(awk '/;pyburn_run;/ { s += $NF } END { print s + 0 }' "$TMP/m.folded")
two=$(awk '/;pyburn_run;/ { s += $NF } END { print s + 0 }' "$TMP/two.folded")
[ "$one" -gt 1000 ] || fail "only $one samples under pyburn_run in the merged folded"
expect_eq "samples under pyburn_run, two copies merged" "$two" $((2 * one))

# ---- 4. a measurement without the section ----
python3 - "$TMP/py.raw" "$ioff" "$ilen" "$TMP/old.raw" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
off, n = int(sys.argv[2]), int(sys.argv[3])
open(sys.argv[4], "wb").write(d[:off] + d[off + 16 + n:])
EOF
"$BPFPROF" merge -q -o "$TMP/old.folded" --format folded "$TMP/old.raw" 2>"$TMP/merge.err" ||
	fail "a measurement without INTERP_SYMBOLS: merge failed: $(cat "$TMP/merge.err")"
samples=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/old.folded")
named=$(awk '/pyburn_/ { s += $NF } END { print s + 0 }' "$TMP/old.folded")
[ "$samples" -gt 1000 ] && [ "$named" -eq 0 ] ||
	fail "without INTERP_SYMBOLS: $samples samples, $named with a pyburn_* frame (want many, 0)"
ok "without INTERP_SYMBOLS: merged, $samples samples, Python frames unnamed"

# ---- 5. a truncated or corrupt section: one line, nothing written ----
mkdir "$TMP/bad" "$TMP/out"
head -c $((ioff + 16 + ilen / 2)) "$TMP/py.raw" >"$TMP/bad/cut.raw"
patch_bytes() {	# patch_bytes FILE OFFSET BYTES(printf escapes)
	cp "$TMP/py.raw" "$1"
	printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
p=$((ioff + 16))	# the payload: count, reserved, then the first entry
patch_bytes "$TMP/bad/count.raw" "$p" '\xff\xff\xff\x0f'
patch_bytes "$TMP/bad/address.raw" $((p + 16)) '\x01\x10\x00\x00\x00\x00\x00\x00'
patch_bytes "$TMP/bad/start.raw" $((p + 24)) '\xff\xff\xff\xff\xff\xff\xff\xaf'
patch_bytes "$TMP/bad/string.raw" $((p + 40)) '\xff\xff\xff\x7f'
declare -A expect=(
	[cut.raw]="truncated: the Python symbols section needs"
	[count.raw]="malformed Python symbols section" [address.raw]="malformed Python symbols section"
	[start.raw]="malformed Python symbols section" [string.raw]="malformed Python symbols section")
for f in "${!expect[@]}"; do
	"$BPFPROF" merge -o "$TMP/out/p.folded" --format folded "$TMP/bad/$f" >"$TMP/err.out" 2>&1 &&
		fail "$f: merge succeeded"
	[ "$(wc -l <"$TMP/err.out")" -eq 1 ] || fail "$f: not one line: $(cat "$TMP/err.out")"
	grep -q "$TMP/bad/$f: .*${expect[$f]}" "$TMP/err.out" || fail "$f: $(cat "$TMP/err.out")"
	[ -z "$(ls -A "$TMP/out")" ] || fail "$f: output left behind: $(ls -A "$TMP/out")"
	ok "$f: $(cat "$TMP/err.out")"
done
