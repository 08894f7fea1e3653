#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# In counts mode the collector drains the kernel's count maps only when
# they fill, not on a timer.  The BPF program counts the entries it adds
# to the count maps and the stack map; the collector checks those
# counters every 250 ms (mmapped .bss, no system call) and drains once a
# quarter of either map's capacity was added since the last drain.  A
# drain is one or more BPF_MAP_LOOKUP_AND_DELETE_BATCH calls per count
# map, which strace (on the collector only) counts.  Checked:
#   - spin (one stack, 4 s): no drain before the final one, which reads
#     both maps: exactly 2 batch calls (the old drain every second: 6);
#   - manystacks (700-900 new distinct stacks and up to ~1,700 new count
#     keys a second here, 2 threads, 10 s) with 2,048-entry maps: more than
#     2,048 distinct stacks in all, more than 2 batch calls (drains while
#     running) and no drops, where never draining early fills both maps
#     within ~2 s (stack-map-full, count-map-full drops).  A drain is due
#     at 512 new entries, checked every 250 ms: about 950 entries at most.
#     (Checked only once a second, ~2,200 count keys came in: drops.)
. "$(dirname "$0")/../lib/common.sh"
need_root

batch_calls() { grep -c 'BPF_MAP_LOOKUP_AND_DELETE_BATCH' "$1.strace"; }

run_traced bpf "$TMP/spin" -F 999 -o "$TMP/spin.prof" -- "$WL/spin" 4
grep -q 'drops: none' "$TMP/spin.err" || fail "spin: drops"
n=$(batch_calls "$TMP/spin")
[ "$n" -eq 2 ] || fail "spin: $n batch drain calls in 4 s, expected 2 (the final drain of both maps)"
ok "spin, 4 s: counts read once, at the end ($n batch calls)"

run_traced bpf "$TMP/ms" -F 999 --stack-map-size 2048 --count-map-size 2048 -o "$TMP/ms.prof" \
	-- "$WL/manystacks" -t 2 -s 10
grep -q 'drops: none' "$TMP/ms.err" || fail "manystacks with 2,048-entry maps dropped samples"
read -r stacks < <(sed -n 's/.*distinct stacks: \([0-9]*\).*/\1/p' "$TMP/ms.err")
[ "${stacks:-0}" -gt 2048 ] || fail "manystacks made only ${stacks:-0} distinct stacks: the maps never had to fill"
n=$(batch_calls "$TMP/ms")
[ "$n" -gt 2 ] || fail "manystacks: $n batch calls: the maps were not drained while filling"
ok "manystacks, 10 s, $stacks distinct stacks in 2,048-entry maps: drained while running ($n batch calls), no drops"
