/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * threads.bpf.h - the announcement of each sampled thread to the collector
 * (TASK_EVENT_NEW_THREAD on the "events" ring buffer, with its comm),
 * included once by profile.bpf.c: the threads announced ("threads_seen",
 * also written by on_rename()), and this CPU's note of the thread it
 * sampled last, which spares the next sample of that thread the lookup.
 *
 * Needs from profile.bpf.c: task_event_reserve(), task_event_submit().
 */
#ifndef BPFPROF_THREADS_BPF_H
#define BPFPROF_THREADS_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);		/* 1,024 for named targets (set before load);
					 * an evicted thread is announced again */
	__type(key, __u32);			/* tid */
	__type(value, __u32);			/* tgid */
} threads_seen SEC(".maps");

/*
 * The thread whose sample this CPU took last, and threads_gen then: the
 * next sample of the same thread (most are) skips threads_seen's lookup
 * (~5% of on_sample, docs/PERFORMANCE.md).  threads_gen changes when a
 * target thread exits or is renamed, so a tid that a new thread reuses, or
 * a rename whose record was lost, is looked up again.
 */
struct last_thread {
	__u32 tgid, tid;
	__u64 gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct last_thread);
} last_thread SEC(".maps");

volatile __u64 threads_gen = 0;

static __always_inline void note_thread(__u32 tgid, __u32 tid)
{
	__u32 zero = 0;
	struct last_thread *last = bpf_map_lookup_elem(&last_thread, &zero);
	__u64 gen = threads_gen;
	struct task_event *e;

	if (last && last->tid == tid && last->tgid == tgid && last->gen == gen)
		return;
	if (last) {
		last->tgid = tgid;
		last->tid = tid;
		last->gen = gen;
	}
	if (bpf_map_lookup_elem(&threads_seen, &tid))
		return;
	bpf_map_update_elem(&threads_seen, &tid, &tgid, BPF_ANY);
	e = task_event_reserve(TASK_EVENT_NEW_THREAD, tgid, tid);
	if (!e)
		return;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	task_event_submit(e);
}

#endif /* BPFPROF_THREADS_BPF_H */
