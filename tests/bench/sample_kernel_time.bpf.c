// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * sample_kernel_time.bpf.c - the time each cpu-clock sample of the given
 * processes spends in the kernel's sample handler, for
 * tests/bench/sample_kernel_time.c (loaded by tests/bench/sample_cost.py).
 *
 * A cpu-clock perf event fires from an hrtimer whose callback is
 * perf_swevent_hrtimer(): it reads the event, calls its overflow handler
 * (perf record's: the callchain walk and the ring-buffer output;
 * bpfprof's: its BPF program, on_sample) and re-arms the timer.  The
 * timer tracepoints hrtimer_expire_entry and hrtimer_expire_exit bracket
 * exactly that callback, so the time between them is what a profiler adds
 * to a sample beyond the interrupt itself, which costs every profiler the
 * same.  Only callbacks of perf_swevent_hrtimer (address from the loader)
 * that interrupted one of @tgids (or, with @by_comm, a task named
 * @comm) count: the interrupted task is `current` in the timer interrupt.  (fentry/fexit on the handler would be nearer,
 * but tracing programs are not allowed everywhere; raw tracepoints are.)
 *
 * Results: "hist", slot i counts callbacks that took [i, i+1) *
 * SKT_SLOT_NS ns, the last slot everything longer; "totals", the count and
 * the sum of ns.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sample_kernel_time.h"

const volatile __u64 timer_fn = 0;		/* perf_swevent_hrtimer's address */
const volatile __u32 tgids[SKT_MAX_TGIDS] = {};
const volatile __u32 nr_tgids = 0;
const volatile bool by_comm = false;
const volatile char comm[SKT_COMM_LEN] = {};

/* When the callback under way on this CPU started (ns), 0: none counted. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} started SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SKT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SKT_TOTALS);
	__type(key, __u32);
	__type(value, __u64);
} totals SEC(".maps");

static __always_inline bool is_target(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	char now[SKT_COMM_LEN];

	if (by_comm) {
		if (bpf_get_current_comm(now, sizeof(now)))
			return false;
		for (__u32 i = 0; i < SKT_COMM_LEN; i++) {
			if (now[i] != comm[i])
				return false;
			if (!now[i])
				break;
		}
		return true;
	}
	for (__u32 i = 0; i < SKT_MAX_TGIDS; i++)
		if (i < nr_tgids && tgids[i] == tgid)
			return true;
	return false;
}

static __always_inline void add(void *map, __u32 slot, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(map, &slot);

	if (p)
		__sync_fetch_and_add(p, v);
}

SEC("raw_tp/hrtimer_expire_entry")
int BPF_PROG(callback_entry, struct hrtimer *timer)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&started, &zero);

	if (!t)
		return 0;
	*t = 0;
	if ((__u64)BPF_CORE_READ(timer, function) != timer_fn || !is_target())
		return 0;
	*t = bpf_ktime_get_ns();
	return 0;
}

SEC("raw_tp/hrtimer_expire_exit")
int BPF_PROG(callback_exit, struct hrtimer *timer)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&started, &zero), ns, slot;

	if (!t || !*t)
		return 0;
	ns = bpf_ktime_get_ns() - *t;
	*t = 0;
	slot = ns / SKT_SLOT_NS;
	add(&hist, slot < SKT_SLOTS ? (__u32)slot : SKT_SLOTS - 1, 1);
	add(&totals, SKT_COUNT, 1);
	add(&totals, SKT_SUM_NS, ns);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
