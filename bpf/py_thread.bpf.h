/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * py_thread.bpf.h - the Python frame a sampled thread of a CPython process
 * runs, included once by bpf/python.bpf.h: its PyThreadState, from a
 * per-thread LRU cache ("py_threads", tid -> PyThreadState) behind this
 * CPU's note of the thread it sampled last ("py_last_thread"), or found
 * by walking the main interpreter's thread list for native_thread_id
 * (3.6-3.10: thread_id, pthread_self(), which is the thread's fs base),
 * and checked again on each use; then the thread state's current frame
 * (py_thread_frame()).
 *
 * Needs from bpf/python.bpf.h: py_count(), py_read(), py_buf_u64(); from
 * bpf/cfi_walk.bpf.h: cfi_mode, cfi_vars, cfi_window_get().
 */
#ifndef BPFPROF_PY_THREAD_BPF_H
#define BPFPROF_PY_THREAD_BPF_H

/* A thread without a thread state is looked for again after this (ns). */
#define PY_NEGATIVE_RETRY_NS 10000000ull
/* Threads younger than this (ns since they started) are never told "no
 * thread state" from the cache. */
#define PY_YOUNG_THREAD_NS 200000000ull

/* A thread's state: found (tstate), or not found at time_ns (tstate 0). */
struct py_thread {
	__u64 tstate;
	__u64 time_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);		/* 1,024 for named targets, 1 with
					 * --no-interpreters (set before load) */
	__type(key, __u32);			/* tid */
	__type(value, struct py_thread);
} py_threads SEC(".maps");

/*
 * The thread state this CPU used last, and whose: the next sample of the
 * same thread (most are) skips py_threads' LRU lookup.  Checked again on
 * use like a py_threads entry (native_thread_id).  With the bytes of the
 * thread state read at this sample (py_tstate_still()).
 */
struct py_last_thread {
	__u32 tgid, tid;
	__u64 tstate;
	__u64 read_ts;			/* whose bytes tbuf holds, 0: none */
	__u8 tbuf[PY_TSTATE_READ];	/* from the first of the two fields */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_last_thread);
} py_last_thread SEC(".maps");

/* The walk of an interpreter's thread list (bpf_loop() data). */
struct py_find {
	__u64 ts;		/* the thread state to look at next */
	__u64 found;
	__u64 id;		/* the thread's id there (py_thread_id()) */
	__u16 next, native_id;	/* offsets in PyThreadState */
};

static long py_find_step(__u32 i, void *data)
{
	struct py_find *f = data;
	__u64 id = 0, next = 0;

	if (!f->ts || py_read(f->ts + f->native_id, &id))
		return 1;
	if (id == f->id) {
		f->found = f->ts;
		return 1;
	}
	if (py_read(f->ts + f->next, &next))
		return 1;
	f->ts = next;
	return 0;
}

/* The id the thread states of @p know the current thread by: its tid, or
 * (3.6-3.10) its pthread_t, the fs base glibc gives each thread. */
static __always_inline __u64 py_thread_id(const struct py_process *p, __u32 tid)
{
	if (!p->off.tstate_id_pthread)
		return tid;
	return BPF_CORE_READ(bpf_get_current_task_btf(), thread.fsbase);
}

/* Offset in PyThreadState of the field holding the current frame, or the
 * _PyCFrame that does. */
static __always_inline __u16 py_tstate_frame_off(const struct py_offsets *o)
{
	return o->tstate_cframe != PY_NO_OFFSET ? o->tstate_cframe : o->current_frame;
}

/* Offset in PyThreadState of last->tbuf[0]: the first of the two fields. */
static __always_inline __u16 py_tstate_lo(const struct py_offsets *o)
{
	__u16 a = o->tstate_native_thread_id, b = py_tstate_frame_off(o);

	return a < b ? a : b;
}

/*
 * @ts, known to be the thread state of the thread whose id is @want
 * (py_thread_id()), is still (native_thread_id).  Read with the current
 * frame's field into @last->tbuf, for py_current_frame(), when @last is
 * there and both fit.  1 or 0.  A global function: the verifier checks
 * its reads once, not at each of its two callers in py_thread_state() in
 * each state that reaches them (auto: 8,696 -> 8,627 instructions
 * processed).
 */
__noinline int py_tstate_still(const struct py_process *p, __u64 ts, __u64 want,
			       struct py_last_thread *last)
{
	const struct py_offsets *o;
	__u64 lo, id = 0;

	if (!ts || !p)
		return false;
	o = &p->off;
	lo = py_tstate_lo(o);
	if (last && o->tstate_native_thread_id - lo <= PY_TSTATE_READ - 8 &&
	    py_tstate_frame_off(o) - lo <= PY_TSTATE_READ - 8 &&
	    !bpf_probe_read_user(last->tbuf, PY_TSTATE_READ, (const void *)(ts + lo))) {
		last->read_ts = ts;
		return py_buf_u64(last->tbuf, PY_TSTATE_READ, 0,
				  o->tstate_native_thread_id - lo) == want;
	}
	return !py_read(ts + o->tstate_native_thread_id, &id) && id == want;
}

/* Thread @tid of process @tgid uses thread state @ts: this CPU's note. */
static __always_inline void py_note_thread(struct py_last_thread *last, __u32 tgid, __u32 tid,
					   __u64 ts)
{
	if (!last)
		return;
	last->tgid = tgid;
	last->tid = tid;
	last->tstate = ts;
}

/* The PyThreadState of thread @tid of process @p (@tgid), 0 if none. */
static __always_inline __u64 py_thread_state(const struct py_process *p, __u32 tgid, __u32 tid)
{
	__u32 zero = 0;
	struct py_last_thread *last = bpf_map_lookup_elem(&py_last_thread, &zero);
	struct py_thread *c, n = {};
	struct py_find f = { .id = py_thread_id(p, tid), .next = p->off.tstate_next,
			     .native_id = p->off.tstate_native_thread_id };
	__u64 interp = 0, now;

	if (last)
		last->read_ts = 0;
	if (last && last->tid == tid && last->tgid == tgid &&
	    py_tstate_still(p, last->tstate, f.id, last)) {
		py_count(PY_STAT_TSTATE_HIT, 1);
		return last->tstate;
	}
	c = bpf_map_lookup_elem(&py_threads, &tid);
	if (c && py_tstate_still(p, c->tstate, f.id, last)) {
		py_count(PY_STAT_TSTATE_HIT, 1);
		py_note_thread(last, tgid, tid, c->tstate);
		return c->tstate;
	}
	now = bpf_ktime_get_ns();
	/* A thread sampled before CPython bound its thread state to it (its
	 * start, still in native code) would keep its evaluator frames for
	 * PY_NEGATIVE_RETRY_NS once it runs Python: young threads look again
	 * at every sample. */
	if (c && !c->tstate && now - c->time_ns < PY_NEGATIVE_RETRY_NS &&
	    now - BPF_CORE_READ(bpf_get_current_task_btf(), start_time) > PY_YOUNG_THREAD_NS) {
		py_count(PY_STAT_NO_TSTATE, 1);
		return 0;
	}
	if (py_read(p->runtime + p->off.runtime_interpreters_head, &interp) || !interp ||
	    py_read(interp + p->off.interp_threads_head, &f.ts))
		f.ts = 0;
	bpf_loop_cold(PY_MAX_THREADS, py_find_step, &f);
	n.tstate = f.found;
	n.time_ns = now;
	bpf_map_update_elem(&py_threads, &tid, &n, BPF_ANY);
	py_count(f.found ? PY_STAT_TSTATE_WALK : PY_STAT_NO_TSTATE, 1);
	if (f.found)
		py_note_thread(last, tgid, tid, f.found);
	return f.found;
}

/* The 8 bytes at @addr, from the native walk's copy of the C stack @cs
 * when it holds them, else read.  0, or a negative errno. */
static __always_inline int py_read_cstack(const struct cfi_walk_vars *cs, __u64 addr, __u64 *val)
{
	if (cs && cfi_window_get(cs, addr, val))
		return 0;
	return py_read(addr, val);
}

/*
 * The innermost Python frame of thread state @ts, 0 if none: the field
 * from what py_tstate_still() read into @last when it read @ts, and in
 * 3.11 and 3.12 the _PyCFrame's, which mostly lives on the C stack (in
 * _PyEval_EvalFrameDefault's frame), from the native walk's copy @cs.
 */
static __always_inline __u64 py_current_frame(const struct py_process *p, __u64 ts,
					      const struct py_last_thread *last,
					      const struct cfi_walk_vars *cs)
{
	const struct py_offsets *o = &p->off;
	__u64 off = py_tstate_frame_off(o), ptr = 0, frame = 0;

	if (last && last->read_ts == ts)
		ptr = py_buf_u64(last->tbuf, PY_TSTATE_READ, 0, off - py_tstate_lo(o));
	else if (py_read(ts + off, &ptr))
		return 0;
	if (o->tstate_cframe == PY_NO_OFFSET)
		return ptr;			/* 3.13: the frame */
	if (!ptr || py_read_cstack(cs, ptr + o->current_frame, &frame))
		return 0;
	return frame;
}

/*
 * The innermost Python frame of thread @tid of process @p (@tgid), 0 if
 * none (no thread state, or none running a frame): py_thread_state(),
 * then py_current_frame().  A global function: the verifier checks the
 * thread state's cache, its walk and the frame's reads once, on their
 * own, and the splice that follows from one state, the frame a scalar it
 * knows nothing of, instead of from each of the ways the lookup ends
 * (auto: 13,041 -> 12,316 instructions processed, dwarf 7,723 -> 7,074;
 * fp 4,757 -> 4,797, where fewer ways reached the splice).  A call per
 * sample of a CPython process.
 */
__noinline __u64 py_thread_frame(const struct py_process *p, __u32 tgid, __u32 tid)
{
	__u32 zero = 0;
	__u64 ts, frame;

	if (!p)
		return 0;
	ts = py_thread_state(p, tgid, tid);
	if (!ts)
		return 0;
	frame = py_current_frame(p, ts, bpf_map_lookup_elem(&py_last_thread, &zero),
				 cfi_mode ? cfi_vars_here() : NULL);
	if (!frame)
		py_count(PY_STAT_NO_FRAME, 1);
	return frame;
}

#endif /* BPFPROF_PY_THREAD_BPF_H */
