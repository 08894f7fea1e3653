#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# --call-graph auto stores a user stack without its native leaf when the
# walk found the leaf's table (BPFPROF_LEAF_APART, bpf/bpfprof.h): the
# leaf goes with the sample (count key, streamed record) and the
# collector puts it back (user/profile/stack_bases.c).  An interpreter's
# samples differ mostly in their leaf (any instruction of the evaluator or
# of a C function), so with whole stacks nearly every sample of pyburn
# stored a new stack, announced it and scanned it for new code objects
# (the dearest part of the BPF program's sample, docs/PERFORMANCE.md,
# session 30).  pyburn under python3.11, 1,500 rounds (~2.5 s):
#   - counts (folded) and the stream (perf.data): -v's stacks stored
#     without their leaf are fewer than a third of the distinct stacks
#     (~1/6 here; all new stacks were whole, one per distinct stack,
#     before), and the new stacks announced (records and map lookups)
#     fewer than half of them; >= 60% of the stack ids the program
#     stored or found came from its CPU's note of the ids it met, without
#     a look-up of the map (bpf/stack_store.bpf.h; ~85% here);
#   - the leaves are back: no frame is the marker, and the first user
#     frame of perf script's callchains is a named function, native (C:
#     k_mul, long_bitwise, PyObject_Free...) or Python, and at least 8
#     different ones.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11 (apt-get install python3.11)"
PY=(/usr/bin/python3.11 "$BPFPROF_SRC/tests/workloads/pyburn.py" 0)

# counts NAME: -v's counts of $TMP/NAME.err: distinct, new, bases, put back
counts() {
	local err=$TMP/$1.err distinct records user bases back noted
	distinct=$(sed -n 's/.*distinct stacks: \([0-9]*\).*/\1/p' "$err")
	read -r records user bases back < <(sed -n 's/.*kernel: \([0-9]*\) new user stacks from their records; by map lookup \([0-9]*\) user stacks.*; \([0-9]*\) stored without their leaf, \([0-9]*\) leaves put back$/\1 \2 \3 \4/p' "$err")
	[ -n "${distinct:-}" ] && [ -n "${back:-}" ] || { cat "$err"; fail "$1: no stack counts with -v"; }
	echo "$1: $distinct distinct stacks, $((records + user)) new user stacks announced, $bases stored without their leaf, $back leaves put back"
	[ "$bases" -gt 0 ] || fail "$1: no stack stored without its leaf"
	[ $((bases * 3)) -lt "$distinct" ] ||
		fail "$1: $bases stacks stored without their leaf for $distinct distinct stacks"
	[ $(((records + user) * 2)) -lt "$distinct" ] ||
		fail "$1: $((records + user)) new user stacks announced for $distinct distinct stacks"
	[ "$back" -ge $((distinct / 2)) ] || fail "$1: only $back leaves put back"
	noted=$(sed -n 's/.*stack ids: [0-9]* stored or found, \([0-9]*\)\.[0-9]*% of them in the CPU.s note.*/\1/p' "$err")
	[ -n "$noted" ] || { cat "$err"; fail "$1: no count of the stack ids noted with -v"; }
	[ "$noted" -ge 60 ] || fail "$1: only $noted% of the stack ids from the CPUs' notes"
	echo "$1: $noted% of the stack ids from the CPUs' notes"
}

PYBURN_ROUNDS=1500 "$BPFPROF" -v -F 999 --format folded -o "$TMP/py.folded" -- "${PY[@]}" \
	> /dev/null 2> "$TMP/py.err" || { cat "$TMP/py.err"; fail "bpfprof (folded) failed"; }
counts py
grep -qi '0xb000000000000000\|b000000000000000' "$TMP/py.folded" && fail "folded: the marker is a frame"
ok "counts: stacks stored without their leaf, leaves put back"

PYBURN_ROUNDS=1500 "$BPFPROF" -v -F 999 --format perf -o "$TMP/py.data" -- "${PY[@]}" \
	> /dev/null 2> "$TMP/pyperf.err" || { cat "$TMP/pyperf.err"; fail "bpfprof (perf) failed"; }
counts pyperf
perf script -i "$TMP/py.data" -F ip,sym > "$TMP/script" 2> "$TMP/script.err" ||
	fail "perf script failed: $(head -3 "$TMP/script.err")"
# the first user frame of each callchain (kernel frames start ffffffff)
python3 - "$TMP/script" > "$TMP/leaves" <<'PYEOF' || fail "perf.data: leaves wrong: $(tail -3 "$TMP/leaves")"
import collections, sys
leaves = collections.Counter()
for block in open(sys.argv[1]).read().split("\n\n"):
    frames = [l.split(None, 1) for l in block.strip().split("\n") if l.strip()]
    user = [f for f in frames if not f[0].startswith("ffffffff")]
    if user:
        leaves[user[0][1] if len(user[0]) > 1 else "[unknown] " + user[0][0]] += 1
n = sum(leaves.values())
bad = sum(c for name, c in leaves.items() if "unknown" in name or "b000000000000000" in name)
print("%d samples, %d distinct leaves, %d unnamed; top: %s" % (n, len(leaves), bad, leaves.most_common(8)))
sys.exit(0 if n >= 1000 and bad <= n // 100 and len(leaves) >= 8 else 1)
PYEOF
cat "$TMP/leaves"
ok "stream: the leaves are back in perf.data's callchains, named"
