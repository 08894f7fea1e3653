#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A Go program as Go programs ship (`go build -ldflags="-s -w"`: no
# .symtab, no .debug_frame, and Go writes no .eh_frame) has no CFI at all;
# Go keeps frame pointers on x86-64, so the unwind table builder gives the
# frame-pointer rule to a Go binary's .text where no FDE covers it
# (user/unwind/cfi_fp.c).  tests/workloads/goburn.go (main.main -> goTop ->
# goMid -> goLeaf) under bpfprof in command mode (gperftools output), and
# under `perf record -g` attached to a second run, both at 499 Hz: go tool
# pprof, given the binary, names the frames from Go's own tables
# (.gopclntab).  At least 90% of bpfprof's goLeaf samples reach
# runtime.main through main.main and goTop (without the rule: none; the
# walk stopped at the leaf), and at least 90% of its walks are complete
# (-v): they end at runtime.goexit, whose rbp is 0, the ABI's mark of a
# thread's first frame (before that rule: read faults).  goMid is not required: goLeaf keeps no frame
# of its own, so a frame-pointer walk (perf's too) goes from it to goTop.
# perf record -g's share is printed beside it (perf cannot name a
# stripped Go binary's functions; its frames are counted by depth).
# bpfprof's own names (folded output) come from .gopclntab too
# (user/symbols/gopclntab.c): in a second run the goLeaf stacks reach
# runtime.main by the same names, and every user frame name on stacks of
# >= 1% of the samples is one go tool pprof gave (Go's own reader of the
# table; kernel frames, named from kallsyms, are not the binary's).
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v go >/dev/null || fail "go not installed (golang-go)"
command -v perf >/dev/null || fail "perf not installed (Debian package linux-perf)"
export GOCACHE=$TMP/gocache GOPATH=$TMP/gopath GOPROXY=off GOFLAGS=-mod=mod HOME=${HOME:-/root}
bin=$TMP/goburn
go build -ldflags="-s -w" -o "$bin" "$BPFPROF_SRC/tests/workloads/goburn.go" ||
	fail "go build failed"
readelf -S -W "$bin" | grep -qE '\.(eh_frame|debug_frame|symtab) ' &&
	fail "the stripped Go binary still has CFI or a symbol table"

"$BPFPROF" -v -F 499 -o "$TMP/go.prof" -- "$bin" -s 3 >"$TMP/go.out" 2>"$TMP/go.err" ||
	{ cat "$TMP/go.err"; fail "bpfprof -- goburn failed"; }
grep -E 'walks|tables:' "$TMP/go.err"
# the walks end at runtime.goexit, whose rbp is 0: complete, not a fault
read -r walks complete < <(sed -nE 's/.*user stack walks: ([0-9]+); complete ([0-9]+).*/\1 \2/p' "$TMP/go.err")
[ -n "$walks" ] && [ $((complete * 100)) -ge $((walks * 90)) ] ||
	fail "only ${complete:-0} of ${walks:-0} walks complete"
go tool pprof -sample_index=samples -traces "$bin" "$TMP/go.prof" >"$TMP/go.traces" \
	2>"$TMP/go.pprof.err" || fail "go tool pprof failed: $(cat "$TMP/go.pprof.err")"
fs from-pprof-traces <"$TMP/go.traces" >"$TMP/go.folded"
read -r leaf _ < <(fs count "$TMP/go.folded" '(^|;)main\.goLeaf$')
read -r root _ < <(fs count "$TMP/go.folded" \
	'(^|;)runtime\.main;main\.main;main\.goTop;(main\.goMid;)?main\.goLeaf$')
echo "bpfprof: $leaf samples with goLeaf as leaf, $root of them to runtime.main"
head -n 12 "$TMP/go.traces"
[ "$leaf" -ge 499 ] || fail "too few goLeaf samples ($leaf)"

# bpfprof's folded output names the frames itself, from .gopclntab
"$BPFPROF" -q -F 499 --format folded -o "$TMP/own.folded" -- "$bin" -s 2 >/dev/null \
	2>"$TMP/own.err" || fail "bpfprof --format folded -- goburn failed: $(cat "$TMP/own.err")"
read -r oleaf _ < <(fs count "$TMP/own.folded" '(^|;)main\.goLeaf$')
read -r oroot _ < <(fs count "$TMP/own.folded" \
	'(^|;)runtime\.main;main\.main;main\.goTop;(main\.goMid;)?main\.goLeaf$')
echo "bpfprof folded: $oleaf samples with goLeaf as leaf, $oroot of them to runtime.main"
[ "$oleaf" -ge 333 ] && [ $((oroot * 100)) -ge $((oleaf * 90)) ] ||
	fail "folded: $oroot of $oleaf goLeaf samples reach runtime.main by name"
python3 - "$TMP/go.folded" "$TMP/own.folded" <<'EOF' || fail "folded names are not go tool pprof's"
import collections, sys
def names(path, share):
    c, total = collections.Counter(), 0
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        total += int(n)
        # kernel frames ("_[k]", from kallsyms) are not the binary's:
        # go tool pprof shows none; getrusage() took 0.9-1.5% here
        for f in set(stack.split(";")[1:]) - {f for f in stack.split(";") if f.endswith("_[k]")}:
            c[f] += int(n)
    return {f for f, n in c.items() if n >= share * total}
pprof, ours = names(sys.argv[1], 0), names(sys.argv[2], 0.01)
print("frame names on >= 1%% of bpfprof's samples: %s" % sorted(ours))
missing = sorted(ours - pprof)
if missing:
    sys.exit("not among go tool pprof's names: %s" % missing)
EOF
ok "stripped Go program: bpfprof names the frames from .gopclntab as go tool pprof does"

# perf record -g on a second run, for comparison: frames per goLeaf sample
"$bin" -s 3 >"$TMP/p.out" & wl=$!
CHILD_PIDS+=("$wl")
python3 "$BPFPROF_SRC/tests/lib/procwait.py" ready "$TMP/p.out" 30 >/dev/null || fail "goburn not ready"
perf record -e cpu-clock -F 499 -g -p "$wl" -o "$TMP/perf.data" -- sleep 2 >"$TMP/perf.out" 2>&1 ||
	fail "perf record failed: $(cat "$TMP/perf.out")"
wait "$wl"
perf script -i "$TMP/perf.data" -F ip 2>/dev/null | awk 'NF == 0 { if (n) print n; n = 0; next } { n++ }
	END { if (n) print n }' | sort -n | uniq -c | sort -rn | head -n 3 |
	sed 's/^/perf record -g: samples, frames: /'
awk -v l="$leaf" -v r="$root" 'BEGIN { exit !(100 * r >= 90 * l) }' ||
	fail "only $root of $leaf goLeaf samples reach runtime.main"
ok "stripped Go program: stacks to runtime.main by frame pointers"
