#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# In counts mode the collector drains the kernel's count maps only when
# they fill, not on a timer.  The BPF program counts the entries it adds
# to the count maps and the stack map (mmapped .bss) and wakes the
# collector once a quarter of either map's capacity was added since the
# last drain (a TASK_EVENT_MAPS_FILLING record), and the collector drains
# then.  A drain is one or more BPF_MAP_LOOKUP_AND_DELETE_BATCH calls per
# count map, and a wake-up an epoll_wait() call, which strace (on the
# collector only) counts.  Checked:
#   - spin (one stack, 4 s): no drain before the final one, which reads
#     both maps: exactly 2 batch calls (the old drain every second: 6);
#     and fewer than 12 wake-ups: those of its start, a poll every 2 s
#     (IDLE_POLL_MS) and its end, 6-8 here (when the collector looked at
#     the counters every 250 ms: 20);
#   - manystacks (700-900 new distinct stacks and up to ~1,700 new count
#     keys a second here, 2 threads, 10 s) with 4,096-entry maps, the
#     default size of both at 999 Hz on two CPUs: more than 4,096 distinct
#     stacks in all, more than 2 batch calls (drains while running) and no
#     drops, where never draining early fills both maps within ~2.5-4.5 s
#     (stack-map-full, count-map-full drops).  A drain is due at 1,024 new
#     entries, woken at that mark (when checked every 250 ms instead:
#     about 1,450 entries at most).  (With
#     2,048-entry maps, whose drains are due at 512, the collector under
#     strace on a loaded guest dropped samples in two CI runs out of many:
#     count-map-full 27 once, stack-map-full 92 once.)
. "$(dirname "$0")/../lib/common.sh"
need_root

batch_calls() { grep -c 'BPF_MAP_LOOKUP_AND_DELETE_BATCH' "$1.strace"; }

run_traced bpf,epoll_wait "$TMP/spin" -F 999 -o "$TMP/spin.prof" -- "$WL/spin" 4
grep -q 'drops: none' "$TMP/spin.err" || fail "spin: drops"
n=$(batch_calls "$TMP/spin")
[ "$n" -eq 2 ] || fail "spin: $n batch drain calls in 4 s, expected 2 (the final drain of both maps)"
ok "spin, 4 s: counts read once, at the end ($n batch calls)"
w=$(grep -c '^epoll_wait' "$TMP/spin.strace")
[ "$w" -lt 12 ] || fail "spin: the collector woke $w times in 4 s: it polls on a timer"
ok "spin, 4 s: the collector woke $w times"

run_traced bpf "$TMP/ms" -F 999 --stack-map-size 4096 --count-map-size 4096 -o "$TMP/ms.prof" \
	-- "$WL/manystacks" -t 2 -s 10
grep -q 'drops: none' "$TMP/ms.err" || fail "manystacks with 4,096-entry maps dropped samples"
read -r stacks < <(sed -n 's/.*distinct stacks: \([0-9]*\).*/\1/p' "$TMP/ms.err")
[ "${stacks:-0}" -gt 4096 ] || fail "manystacks made only ${stacks:-0} distinct stacks: the maps never had to fill"
n=$(batch_calls "$TMP/ms")
[ "$n" -gt 2 ] || fail "manystacks: $n batch calls: the maps were not drained while filling"
ok "manystacks, 10 s, $stacks distinct stacks in 4,096-entry maps: drained while running ($n batch calls), no drops"
