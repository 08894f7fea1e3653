/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * new_stack.bpf.h - the announcement of a new user stack to the collector
 * (TASK_EVENT_NEW_STACK on the "events" ring buffer), included by
 * profile.bpf.c: when its record wakes the collector (batched, or at once
 * for a Python code object not seen before), and the set of code objects
 * seen.  The record carries the stack's frames when it has few enough
 * (new_stack_reserve()); the collector copies it from the "stacks" map
 * otherwise, and names its Python frames when it reads the record
 * (user/profile/ingest.c), reading only the code objects the record does
 * not say it saw before (BPFPROF_NEW_STACK_CODES_KNOWN).
 */
#ifndef BPFPROF_NEW_STACK_BPF_H
#define BPFPROF_NEW_STACK_BPF_H

#include "python.h"

/*
 * Reserve the announcement of new user stack @st: a struct new_stack_event
 * with @flags, and with its frames when it has at most
 * BPFPROF_NEW_STACK_FRAMES, the collector then copies nothing (nr 0: it
 * copies them from the map); when the ring is half full (lifecycle
 * records need the room more) or has no room for it, a plain struct
 * task_event with its id only, which says nothing of its code objects.
 * The copy is of a constant size, BPFPROF_NEW_STACK_FRAMES frames of the
 * scratch stack whatever its nr: the scratch value has room for max_depth
 * frames, so never with a smaller max_depth (known at load: the verifier
 * drops the path as dead).  One helper call, not the 64 loads and stores
 * of a __builtin_memcpy() that the verifier would check one by one (~130
 * instructions more to verify at every start); it cannot fail on a map
 * value, but if it did, nr 0 sends the collector to the map.
 */
static __always_inline struct task_event *new_stack_reserve(struct stack_trace *st, __u32 tgid,
							    __u32 tid, __u32 flags)
{
	struct new_stack_event *ne;
	__u32 nr = st->nr;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) <
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2) {
		ne = bpf_ringbuf_reserve(&events, sizeof(*ne), 0);
		if (ne) {
			task_event_init(&ne->head, TASK_EVENT_NEW_STACK, tgid, tid);
			ne->nr = 0;
			ne->flags = flags;
			if (max_depth >= BPFPROF_NEW_STACK_FRAMES && nr <= BPFPROF_NEW_STACK_FRAMES &&
			    !bpf_probe_read_kernel(ne->ips, sizeof(ne->ips), st->ips))
				ne->nr = nr;
			return &ne->head;
		}
	}
	return task_event_reserve(TASK_EVENT_NEW_STACK, tgid, tid);
}

/* When a new-stack record last woke the collector (CLOCK_MONOTONIC ns). */
volatile __u64 new_stack_woke_ns = 0;

/*
 * Announce a new user stack.  Its record wakes the collector at most once
 * per BPFPROF_NEW_STACK_WAKEUP_NS: a burst of new stacks (a program's
 * start) then costs one wake-up, not one per stack, and the collector,
 * which polls often while stacks keep coming (collector.c), reads the
 * rest within that time; or sooner, once the ring holds
 * 1/BPFPROF_NEW_STACK_WAKE_FILL of its size unread: the copies of code
 * objects need the ring below half full (py_code_snapshot()).  @now: the
 * stack names a Python code object not announced before and not copied,
 * which the collector must read at once (see py_codes_seen); without it,
 * the record says the collector knows them all, from an earlier stack or
 * a copy just sent (BPFPROF_NEW_STACK_CODES_KNOWN).  @st: the stack as
 * stored under @id, which the record carries when it can
 * (new_stack_reserve()).
 */
static __always_inline void emit_new_stack(struct stack_trace *st, __u32 tgid, __u32 tid,
					   __u64 id, bool now)
{
	struct task_event *e = new_stack_reserve(st, tgid, tid,
						 now ? 0 : BPFPROF_NEW_STACK_CODES_KNOWN);

	if (!e)
		return;
	e->stack_id = id;
	if (!now && e->time_ns - new_stack_woke_ns < BPFPROF_NEW_STACK_WAKEUP_NS &&
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) <
		    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / BPFPROF_NEW_STACK_WAKE_FILL) {
		events_unannounced = 1;
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		return;
	}
	new_stack_woke_ns = e->time_ns;
	task_event_submit(e);
}

/*
 * The code objects of the Python frames of the stacks announced so far,
 * by process and address, with the pointers to their names (struct
 * py_code_names).  One that lives briefly (a module's body, freed after
 * its import; a string given to exec()) may be freed and another code
 * object allocated at its address, with other names, and its process
 * may exit, before the collector reads it.  So when a new stack shows a
 * code object not seen before, or seen with other names, the program
 * copies it (py_code_snapshot()) ahead of the stack's record: the
 * collector names it from that copy, and the record says
 * BPFPROF_NEW_STACK_CODES_KNOWN.  If it cannot (the ring half full), the
 * record wakes the collector at once (not within
 * BPFPROF_NEW_STACK_WAKEUP_NS) and does not say so: the collector reads
 * the stack's code objects, and a changed one gets an entry of its own
 * (pynames.c).
 * A stack whose record says so is named from what the collector read
 * before, without a system call.  The collector compares what it reads
 * with the entry, which tells it when the object it reads is not the one
 * a stack showed (freed, and another allocated there before it read).
 * Objects are told apart by these pointers only: a code object freed with
 * its names, and one of the same size made in its place whose names land
 * at the same addresses (and, for a stack of its own, whose instructions
 * at other offsets), passes for the old one.
 * Entries: struct py_code_key -> struct py_code_names (bpf/python.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);		/* 4,096 for named targets, 1 with
					 * --no-interpreters (set before load) */
	__type(key, struct py_code_key);
	__type(value, struct py_code_names);
} py_codes_seen SEC(".maps");

/*
 * Copy the @size bytes at user address @src into @dst for region @r of a
 * struct py_code_event: all of them, else those up to the end of @src's
 * page (an object at the end of its mapping), else none.
 */
static __always_inline void py_snap_read(struct py_snap_region *r, void *dst, __u32 size,
					 __u64 src)
{
	__u32 n;

	r->addr = src;
	r->len = 0;
	r->pad = 0;
	if (!src)
		return;
	if (!bpf_probe_read_user(dst, size, (const void *)src)) {
		r->len = size;
		return;
	}
	n = 4096 - (__u32)(src & 4095);
	if (n >= size)			/* all in one page, and it failed */
		return;
	if (!bpf_probe_read_user(dst, n, (const void *)src))
		r->len = n;
}

/*
 * Send the collector a copy of code object @code of @tgid, whose names'
 * pointers are @names (struct py_code_event, bpf/bpfprof.h), ahead of the
 * new stack that shows it; nothing while the "events" ring is half full.
 * Submitted without a wake-up, like the stack's record when every code
 * object it shows is copied or seen before.  Whether the copy went out
 * with the object's whole header, without which the collector does not
 * name it from the copy (the stack's record then makes it read the
 * process).
 * A global function: the verifier checks its reads once, not once in each
 * pass it makes over py_code_scan_step() (a bpf_loop() callback, checked
 * until its state repeats) at each of the scan's two call sites (auto:
 * 29,664 -> 22,993 instructions processed, docs/PERFORMANCE.md).  Called only
 * for a code object not seen before, so the call costs a sample nothing.
 */
__noinline int py_code_snapshot(__u32 tgid, __u64 code, const struct py_code_names *names)
{
	struct py_code_event *e;
	int whole;

	if (!names)
		return 0;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >=
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2 ||
	    !(e = bpf_ringbuf_reserve(&events, sizeof(*e), 0))) {
		py_count(PY_STAT_COPIES_SKIPPED, 1);
		return 0;
	}
	py_count(PY_STAT_COPIES, 1);
	task_event_init(&e->head, TASK_EVENT_PY_CODE, tgid, 0);
	e->code = code;
	py_snap_read(&e->region[0], e->header, sizeof(e->header), code);
	py_snap_read(&e->region[1], e->str[0], sizeof(e->str[0]), names->ptr[0]);
	py_snap_read(&e->region[2], e->str[1], sizeof(e->str[1]), names->ptr[1]);
	py_snap_read(&e->region[3], e->str[2], sizeof(e->str[2]), names->ptr[2]);
	py_snap_read(&e->region[4], e->lines, sizeof(e->lines), names->ptr[3]);
	whole = e->region[0].len == sizeof(e->header);
	events_unannounced = 1;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return whole;
}

/*
 * The scan of a new stack's frames for unseen code objects (bpf_loop()
 * data).  What the scan writes per frame (the frame's key and names,
 * whether one was not copied) is in py_vars (struct py_splice_vars,
 * scan_*), not on the stack: the verifier does not track a map value's
 * contents, so the callback's state at entry repeats sooner: the values
 * it wrote on the stack made it check four passes (auto: 9,465 -> 9,122
 * instructions processed).  py_vars, whose splice is over by then, holds
 * them: no map of their own to create at start-up.
 */
struct py_code_scan {
	struct stack_trace *st;
	const struct py_process *p;
	struct py_splice_vars *v;
	__u32 nr;
};

static long py_code_scan_step(__u32 i, void *data)
{
	struct py_code_scan *s = data;
	struct py_splice_vars *v = s->v;
	struct py_code_names *seen;
	__u64 idx = i, ip, code;
	__u32 off = s->p->off.code_names;

	barrier_var(idx);
	if (idx >= s->nr || idx >= max_depth || idx >= BPFPROF_MAX_STACK_DEPTH)
		return 1;
	ip = s->st->ips[idx];
	if (!PY_FRAME_IS(ip))
		return 0;
	code = PY_FRAME_CODE(ip);
	v->scan_key.code = code;
	/* unreadable: zeros, which no code object has, so never "known" */
	if (off == PY_NO_OFFSET ||
	    bpf_probe_read_user(&v->scan_names, sizeof(v->scan_names), (const void *)(code + off)))
		__builtin_memset(&v->scan_names, 0, sizeof(v->scan_names));
	seen = bpf_map_lookup_elem(&py_codes_seen, &v->scan_key);
	/* ptr[3], the line table, is never NULL; ptr[0] is before 3.11
	 * (co_cell2arg, mostly NULL) */
	if (seen && v->scan_names.ptr[3] && seen->ptr[0] == v->scan_names.ptr[0] &&
	    seen->ptr[1] == v->scan_names.ptr[1] && seen->ptr[2] == v->scan_names.ptr[2] &&
	    seen->ptr[3] == v->scan_names.ptr[3])
		return 0;
	bpf_map_update_elem(&py_codes_seen, &v->scan_key, &v->scan_names, BPF_ANY);
	if (!v->scan_names.ptr[3] || !py_code_snapshot(v->scan_key.tgid, code, &v->scan_names))
		v->scan_uncopied = 1;
	return 0;
}

/* Whether user stack @st of @tgid names a Python code object not seen
 * before at its address, or seen there with other names, that could not
 * be copied for the collector (py_code_snapshot()): then it must read
 * that object at once, before it is freed. */
static __always_inline bool py_new_code(struct stack_trace *st, __u32 tgid)
{
	struct py_code_scan s = { .st = st, .nr = st->nr };
	__u32 zero = 0;

	s.p = py_process_entry(tgid);
	s.v = bpf_map_lookup_elem(&py_vars, &zero);
	if (!s.p || !s.v)
		return false;		/* no interpreter: no Python frames */
	s.v->scan_key.tgid = tgid;
	s.v->scan_key.pad = 0;
	s.v->scan_uncopied = 0;
	bpf_loop_cold(max_depth, py_code_scan_step, &s);
	return s.v->scan_uncopied;
}

#endif /* BPFPROF_NEW_STACK_BPF_H */
