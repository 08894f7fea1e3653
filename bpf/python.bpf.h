/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * python.bpf.h - Python functions in the user stacks of CPython
 * processes, included once by profile.bpf.c: after the native walk (auto
 * or fp), the user stack's frames in _PyEval_EvalFrameDefault are
 * replaced by the Python frames each of those activations runs (the
 * splice of bpf/python.h), written as pseudo-addresses the collector
 * names (user/interp/pynames.c).
 *
 * Per process ("py_procs", tgid -> struct py_process, written by
 * user/interp/python.c when it finds an interpreter in the mappings):
 * where _PyRuntime and the evaluator are, and the version's offsets.  Per
 * thread: its current frame (bpf/py_thread.bpf.h).  Counters by outcome
 * (enum py_stat) per CPU, first in the "py_vars" value.
 *
 * Needs from profile.bpf.c: max_depth, struct stack_trace, FRAMES_PER_STEP; from
 * bpf/cfi_walk.bpf.h (included first): cfi_mode, cfi_vars.
 */
#ifndef BPFPROF_PYTHON_BPF_H
#define BPFPROF_PYTHON_BPF_H

#include "python.h"

/* Bytes of a thread's data stack read at once, ending with a frame's
 * first PY_FRAME_READ (py_window_at()). */
#ifndef PY_FRAME_WINDOW
#define PY_FRAME_WINDOW 2048
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* only the CPython processes */
	__type(key, __u32);			/* tgid */
	__type(value, struct py_process);
} py_procs SEC(".maps");

/* The "py_procs" entry of process @tgid or of its forked parent
 * (process_entry()).  A BPF function: see stat_add() (profile.bpf.c). */
static __noinline struct py_process *py_process_entry(__u32 tgid)
{
	return process_entry(&py_procs, tgid);
}

/* False with --no-interpreters (set before load): no Python frames, and
 * the verifier drops the code that reads them. */
const volatile bool interpreters = true;

/*
 * Bumped by the collector after each write of a "py_procs" entry
 * (sampler_py_procs_written()): the processes CPUs found to have no entry
 * (py_no_interp) may have one now, and the code objects found before
 * (py_code_checked()) may be another process's or image's at the same
 * tgid (a tgid reused, an exec()), since a process's Python frames are
 * read only once its entry is written.
 */
volatile __u64 py_procs_gen = 0;

/* The process this CPU found last to have no "py_procs" entry, nor a
 * forked parent with one, and py_procs_gen then. */
struct py_no_interp {
	__u32 tgid;
	__u32 pad;
	__u64 gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_no_interp);
} py_no_interp SEC(".maps");

/* Add @n to counter @slot (enum py_stat) of this CPU, where the splice's
 * value is not at hand: below, after "py_vars".  A BPF function: see
 * stat_add() (profile.bpf.c). */
static __noinline void py_count(__u32 slot, __u64 n);

static __always_inline int py_read(__u64 addr, __u64 *val)
{
	return bpf_probe_read_user(val, sizeof(*val), (const void *)addr);
}

static __always_inline int py_read_u8(__u64 addr, __u8 *val)
{
	return bpf_probe_read_user(val, sizeof(*val), (const void *)addr);
}

/* The 8 bytes at @off of the frame at offset @fo of @buf, @size bytes (0
 * beyond them). */
static __always_inline __u64 py_buf_u64(const __u8 *buf, __u64 size, __u64 fo, __u32 off)
{
	__u64 pos = fo + off;

	barrier_var(pos);
	if (pos > size - 8)
		return 0;
	return *(const __u64 *)(buf + pos);
}

static __always_inline __u8 py_buf_u8(const __u8 *buf, __u64 size, __u64 fo, __u32 off)
{
	__u64 pos = fo + off;

	barrier_var(pos);
	if (pos > size - 1)
		return 0;
	return buf[pos];
}

/* Whether @len bytes of user memory copied from @lo hold the @size at @addr. */
static __always_inline bool py_holds(__u64 lo, __u64 len, __u64 addr, __u64 size)
{
	return addr >= lo && addr + size <= lo + len;
}

/* the thread's current Python frame: py_thread_frame() */
#include "py_thread.bpf.h"

/* Moving the native frames to the end of the stack (bpf_loop() data);
 * first, for a copy, writing py_fill_activations()'s. */
struct py_shift {
	struct stack_trace *st;
	__u32 n, d;		/* frames ips[0..n) go to ips[d..d+n) */
	__u64 eval_ip;		/* py_fill_activations()'s evaluator frame */
};

static long py_fill_step(__u32 i, void *data)
{
	struct py_shift *f = data;
	__u64 k = i;

	barrier_var(k);
	if (k >= max_depth || k >= BPFPROF_MAX_STACK_DEPTH)
		return 1;
	f->st->ips[k] = k & 1 ? BPFPROF_PY_ACTIVATION_END : f->eval_ip;
	return 0;
}

static long py_shift_step(__u32 i, void *data)
{
	struct py_shift *s = data;

	for (__u32 k = 0; k < FRAMES_PER_STEP; k++) {
		__u64 src = (__u64)s->n - 1 - (i * FRAMES_PER_STEP + k), dst;

		barrier_var(src);
		if (src >= max_depth || src >= BPFPROF_MAX_STACK_DEPTH)
			return 1;
		dst = src + s->d;
		barrier_var(dst);
		if (dst >= max_depth || dst >= BPFPROF_MAX_STACK_DEPTH)
			return 1;
		s->st->ips[dst] = s->st->ips[src];
	}
	return 0;
}

/* A code object found to be one (py_code_checked()), 0: an empty slot. */
struct py_code_slot {
	__u64 code;		/* its address */
	__u32 tgid;		/* in this process */
	__u32 gen;		/* py_procs_gen when it was checked */
};

/*
 * The splice's counters and positions.  They live in a per-CPU map value,
 * not on the stack: the verifier does not track what a map value holds,
 * so the callback's states converge at once instead of once per value
 * of each counter.
 */
struct py_splice_vars {
	/* Not cleared: the counters by outcome (enum py_stat), first in the
	 * value, where the collector reads them; the splice counts through
	 * the value it has at hand, without a map look-up. */
	__u64 counts[PY_STAT_NR];
	/* Cleared at each splice, from here to win: */
	__u64 frame;		/* the next Python frame to read, 0: none left */
	__u64 eval_ip;		/* the evaluator frame being replaced */
	__u32 r, end;		/* native frames not read yet: ips[r..end) */
	__u32 leaf;		/* index of the leaf (looked up as is, not ip - 1) */
	__u32 k;		/* frames written: ips[0..k), k < r */
	__u32 in_python;	/* writing one activation's Python frames */
	__u32 written;		/* ... how many so far */
	__u32 frames;		/* Python frames written in all */
	__u32 truncated;
	__u32 unmatched;	/* evaluator frames left as they were */
	__u32 read_faults, not_code;
	__u32 code_checks;	/* frames' code objects checked */
	__u32 code_cached;	/* ... found in code_cache */
	__u32 cut;		/* the native stack may end before its root */
	__u32 at_root;		/* Python frames went to its root end */
	__u32 reads;		/* of user memory, for frames */
	__u32 synthetic;	/* the native stack is py_fill_activations()'s */
	__u32 put_python;	/* the frame py_splice_step() puts is a Python frame */
	__u64 win_lo;		/* user address of win[0] */
	__u32 win_len;		/* bytes of win read, 0: none */
	/* Not cleared per sample, from here on: */
	__u8 win[PY_FRAME_WINDOW];	/* user memory ending with a frame read */
	/* py_new_code()'s scan (bpf/new_stack.bpf.h), after the splice: */
	struct py_code_key scan_key;	/* the frame's, with the process's tgid */
	struct py_code_names scan_names;	/* the frame's, read now */
	__u32 scan_uncopied;		/* a code object not seen before, not copied */
	/* py_code_checked()'s, each set's last-filled slot first */
	struct py_code_slot code_cache[PY_CODE_CACHE_SETS][PY_CODE_CACHE_WAYS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_splice_vars);
} py_vars SEC(".maps");

static __noinline void py_count(__u32 slot, __u64 n)
{
	__u32 zero = 0;
	struct py_splice_vars *v = bpf_map_lookup_elem(&py_vars, &zero);

	if (v && slot < PY_STAT_NR)
		v->counts[slot] += n;
}

/* The splice's state (bpf_loop() data). */
struct py_splice {
	struct stack_trace *st;
	const struct py_process *p;
	__u32 tgid;
	struct py_splice_vars *v;
	/* the native walk's copy of this sample's C stack (--call-graph
	 * auto, bpf/cfi_walk.bpf.h), NULL without one */
	const struct cfi_walk_vars *cstack;
};

/* A step's result (py_splice_step()): @ip goes to the stack next. */
#define PY_PUT 2

static __always_inline int py_put(struct py_splice *s, __u64 ip)
{
	__u64 k = s->v->k;

	barrier_var(k);
	if (k >= s->v->r || k >= max_depth || k >= BPFPROF_MAX_STACK_DEPTH) {
		s->v->truncated = 1;
		return -1;
	}
	s->st->ips[k] = ip;
	s->v->k = k + 1;
	return 0;
}

static __always_inline bool py_in_eval(const struct py_process *p, __u64 pc)
{
	return (pc >= p->eval_start[0] && pc < p->eval_end[0]) ||
	       (pc >= p->eval_start[1] && pc < p->eval_end[1]);
}

/* The activation's run ended: an activation that got no Python frame
 * keeps its evaluator frame (PY_PUT, in @ip). */
static __always_inline long py_end_activation(struct py_splice *s, __u64 *ip)
{
	s->v->in_python = 0;
	if (s->v->written)
		return 0;
	s->v->unmatched++;
	*ip = s->v->eval_ip;
	return PY_PUT;
}

/*
 * The offset in v->win of frame @f's first PY_FRAME_READ bytes, which hold
 * every field the walk reads in every version supported
 * (user/interp/py_layout.c); -1 if they cannot be read at once.  A window
 * that does not hold them is read again: up to PY_FRAME_WINDOW bytes that
 * end with them, since a caller's frame lies below its callee's in the
 * thread's data stack (3.11+), so one read usually serves the frames of
 * several calls.  Never below @f's page: what lies there may be unmapped
 * (a data-stack chunk's start), and a read that faults costs more than
 * the reads the window saves (docs/PERFORMANCE.md).
 */
static __always_inline long py_window_at(struct py_splice_vars *v, __u64 f)
{
	__u64 end = f + PY_FRAME_READ, lo = f & ~4095ull, n;

	if (py_holds(v->win_lo, v->win_len, f, PY_FRAME_READ))
		return f - v->win_lo;
	if (end - lo > PY_FRAME_WINDOW)
		lo = end - PY_FRAME_WINDOW;
	n = end - lo;
	barrier_var(n);
	v->win_len = 0;
	v->reads++;
	if (n < PY_FRAME_READ || n > PY_FRAME_WINDOW ||
	    bpf_probe_read_user(v->win, n, (const void *)lo))
		return -1;
	v->win_lo = lo;
	v->win_len = n;
	return f - lo;
}

/* The fields of the frame at offset @fo of @buf (@size bytes, a constant). */
static __always_inline void py_frame_fields(const struct py_offsets *o, const __u8 *buf,
					    __u64 size, __u64 fo, __u64 *code, __u64 *prev,
					    __u64 *instr, __u8 *owner, __u8 *entry)
{
	*code = py_buf_u64(buf, size, fo, o->frame_code);
	*prev = py_buf_u64(buf, size, fo, o->frame_previous);
	*instr = py_buf_u64(buf, size, fo, o->frame_instr);
	*owner = py_buf_u8(buf, size, fo, o->frame_owner);
	*entry = o->frame_is_entry != PY_NO_OFFSET ? py_buf_u8(buf, size, fo, o->frame_is_entry) : 0;
}

/*
 * The fields of frame @f the walk needs: from the data-stack window
 * (py_window_at()), or the native walk's copy of the C stack when that
 * holds the frame (3.12+: each activation's entry frame lives on the C
 * stack, in _PyEval_EvalFrameDefault's own frame), or a read per field
 * where the frame cannot be read at once (its end beyond mapped memory).
 * 0, or -1.
 */
static __always_inline int py_frame_read(struct py_splice *s, __u64 f, __u64 *code, __u64 *prev,
					 __u64 *instr, __u8 *owner, __u8 *entry)
{
	const struct py_offsets *o = &s->p->off;
	struct py_splice_vars *v = s->v;
	const struct cfi_walk_vars *cs = s->cstack;
	long fo;

	if (o->frame_kind != PY_FRAME_INTERP) {
		/* 3.6-3.10: a heap object of its own, one read; each
		 * activation runs one frame */
		v->reads++;
		if (bpf_probe_read_user(v->win, PY_FRAME_OBJECT_READ, (const void *)f))
			return -1;
		py_frame_fields(o, v->win, PY_FRAME_OBJECT_READ, 0, code, prev, instr, owner,
				entry);
		*entry = 1;
		return 0;
	}
	if (!py_holds(v->win_lo, v->win_len, f, PY_FRAME_READ) && cs &&
	    py_holds(cs->win_lo, cs->win_len, f, PY_FRAME_READ)) {
		fo = f - cs->win_lo;
		if (fo >= 0 && fo <= CFI_STACK_WINDOW - PY_FRAME_READ) {
			py_frame_fields(o, cs->win, CFI_STACK_WINDOW, fo, code, prev, instr,
					owner, entry);
			return 0;
		}
	}
	fo = py_window_at(v, f);
	if (fo >= 0 && fo <= PY_FRAME_WINDOW - PY_FRAME_READ) {
		py_frame_fields(o, v->win, PY_FRAME_WINDOW, fo, code, prev, instr, owner, entry);
		return 0;
	}
	v->reads += o->frame_is_entry != PY_NO_OFFSET ? 5 : 4;
	if (py_read(f + o->frame_code, code) || py_read(f + o->frame_previous, prev) ||
	    py_read_u8(f + o->frame_owner, owner) ||
	    (o->frame_is_entry != PY_NO_OFFSET && py_read_u8(f + o->frame_is_entry, entry)))
		return -1;
	if (py_read(f + o->frame_instr, instr))
		*instr = 0;
	return 0;
}

/*
 * The pseudo-address (PY_FRAME_ADDR()) of a frame of a thread of @p
 * running code object @code at @instr (the frame's instruction pointer,
 * 3.11+, or f_lasti) into @ip.  A global function: the verifier checks
 * the ways of finding the instruction's index once, on their own, where
 * it checked the rest of the frame's step once for each of them and each
 * way of reading the frame (py_frame_read()), the address's known bits
 * differing (auto: 8,299 -> 8,084 instructions processed).  A call per
 * Python frame.  0, or -1 for a NULL argument.
 */
__noinline int py_frame_addr(const struct py_process *p, __u64 code, __u64 instr, __u64 *ip)
{
	const struct py_offsets *o;
	__u64 base, idx = 0;

	if (!p || !ip)
		return -1;
	o = &p->off;
	if (o->frame_kind == PY_FRAME_INTERP) {
		base = code + o->code_adaptive;
		if (instr > base)
			idx = (instr - base) / 2;
	} else if (!((__u32)instr & 0x80000000u)) {	/* f_lasti, -1 before the first */
		idx = (__u32)instr;
		if (o->frame_kind == PY_FRAME_OBJECT_BYTES)
			idx /= 2;
	}
	if (idx > PY_FRAME_INSTR_MAX)
		idx = PY_FRAME_INSTR_MAX;
	*ip = PY_FRAME_ADDR(code, idx);
	return 0;
}

/*
 * Whether @code, a frame's code pointer, points at a code object of the
 * process (the type p->code_type): from this CPU's cache of the objects
 * found to be code before (v->code_cache, two slots a set), else by a read of the
 * object's type, after which a code object goes into the cache.  A
 * frame keeps its code object alive, so a cached address is a code
 * object in every frame that points at it; the check guards against a
 * frame being written as it is read, and the cache cannot tell an
 * object freed and its memory reused for another type there: such a
 * frame would be named from whatever code object the collector reads at
 * that address.  A slot holds for its process (tgid) while no
 * "py_procs" entry is written (py_procs_gen).  The type read was a
 * bpf_probe_read_user() per Python frame (docs/PERFORMANCE.md,
 * "Session 31").
 */
static __always_inline bool py_code_slot_holds(const struct py_code_slot *slot, __u64 code,
					       __u32 tgid, __u32 gen)
{
	return slot->code == code && slot->tgid == tgid && slot->gen == gen;
}

_Static_assert(PY_CODE_CACHE_WAYS == 2, "py_code_checked() looks at two slots a set");

static __always_inline bool py_code_checked(struct py_splice *s, __u64 code)
{
	struct py_splice_vars *v = s->v;
	struct py_code_slot *set;
	__u32 gen = (__u32)py_procs_gen;
	__u64 type = 0, h;

	if (!code)
		return false;
	v->code_checks++;
	h = (code * 0x9e3779b97f4a7c15ull) >> (64 - PY_CODE_CACHE_BITS);
	set = v->code_cache[h & (PY_CODE_CACHE_SETS - 1)];
	if (py_code_slot_holds(&set[0], code, s->tgid, gen) ||
	    py_code_slot_holds(&set[1], code, s->tgid, gen)) {
		v->code_cached++;
		return true;
	}
	if (py_read(code + 8, &type) || type != s->p->code_type)
		return false;
	/* the set's older slot goes: two objects of one set both stay */
	set[1] = set[0];
	set[0].code = code;
	set[0].tgid = s->tgid;
	set[0].gen = gen;
	return true;
}

/* One Python frame of the current activation: 0, 1 (done), or PY_PUT
 * and the frame to write in @ip. */
static __always_inline long py_frame_step(struct py_splice *s, __u64 *ip)
{
	const struct py_offsets *o = &s->p->off;
	__u64 f = s->v->frame, code = 0, prev = 0, instr = 0;
	__u8 owner = 0, entry = 0;

	if (!f)
		return py_end_activation(s, ip);
	if (py_frame_read(s, f, &code, &prev, &instr, &owner, &entry)) {
		s->v->read_faults++;
		s->v->frame = 0;
		return py_end_activation(s, ip);
	}
	s->v->frame = prev;
	if (o->owner_cstack != 0xff && owner == o->owner_cstack)
		return py_end_activation(s, ip);	/* 3.12+: the activation's entry */
	if (s->p->code_type && !py_code_checked(s, code)) {
		s->v->not_code++;
		return entry ? py_end_activation(s, ip) : 0;
	}
	py_frame_addr(s->p, code, instr, ip);
	s->v->written++;
	s->v->put_python = 1;	/* counted in frames once written */
	if (entry)
		s->v->in_python = 0;	/* 3.11: the activation's first frame;
					 * 3.6-3.10: its one frame */
	return PY_PUT;
}

/* One native frame: 0, 1 (done), or PY_PUT and the frame to write in @ip. */
static __always_inline long py_native_step(struct py_splice *s, __u64 *ip)
{
	__u64 j = s->v->r;

	barrier_var(j);
	if (j >= s->v->end || j >= max_depth || j >= BPFPROF_MAX_STACK_DEPTH) {
		/*
		 * The native stack ended with Python frames left: their
		 * evaluator frames were not on it (-g through an interpreter
		 * built without frame pointers, a CFI walk that stopped
		 * early).  If it was cut, they go to its root end, so that
		 * the Python stack stays whole above the native frames
		 * found; activation ends write no evaluator frame there.
		 */
		if (!s->v->frame || !s->v->cut || s->v->truncated)
			return 1;
		s->v->at_root = 1;
		s->v->in_python = 1;
		s->v->written = 1;
		return 0;
	}
	*ip = s->st->ips[j];
	s->v->r = j + 1;
	if (py_in_eval(s->p, j == s->v->leaf ? *ip : *ip - 1)) {
		if (s->v->frame) {
			s->v->in_python = 1;
			s->v->eval_ip = *ip;
			s->v->written = 0;
			return 0;
		}
		if (s->v->synthetic)
			return 1;	/* no activation left: done */
		s->v->unmatched++;
	}
	return PY_PUT;
}

/*
 * One step: a native frame, or a Python frame of the current activation.
 * Every way of writing a frame ends in the one py_put() here, where the
 * verifier's states from the step's many paths meet and are pruned (the
 * put's bound checks were ~250 instructions processed, inlined in six
 * places; auto: 11,983 -> 11,692).  Whether the frame is a Python frame,
 * for the count, is in v (put_python), not in a register whose value
 * would keep those states apart.
 */
static long py_splice_step(__u32 i, void *data)
{
	struct py_splice *s = data;
	__u64 ip = 0;
	long r = s->v->in_python ? py_frame_step(s, &ip) : py_native_step(s, &ip);

	if (r != PY_PUT)
		return r;
	if (py_put(s, ip))
		return 1;
	s->v->frames += s->v->put_python;
	s->v->put_python = 0;
	return 0;
}

/*
 * Whether the native stack was cut before its root: with -g always
 * possible (rbp need not be a frame pointer), with --call-graph auto when
 * the walk (@cs, its state) did not reach the outermost frame.
 */
static __always_inline bool py_native_cut(const struct cfi_walk_vars *cs)
{
	return !cs || cs->stop != CFI_WALK_END;
}

/*
 * A native stack for a stack that goes out as a copy (--call-graph auto,
 * a young process): BPFPROF_COPY_PY_ACTIVATIONS evaluator frames
 * (@sh->eval_ip), each followed by BPFPROF_PY_ACTIVATION_END, in
 * @sh->st.  Spliced, each evaluator frame becomes an activation's Python
 * frames: the copy's py_ips (bpf/bpfprof.h).  Returns st->nr.
 * A bpf_loop() callback writes the frames: the verifier checks it once,
 * where it checked a loop's body once for each of its 32 iterations
 * (auto: 12,316 -> 11,983 instructions processed).
 * Its data is the shift's, set whether or not there is a copy: callback
 * data only a copy's path wrote would leave the stack slots of the two
 * paths apart, and the verifier would check the splice's callback once
 * for each.
 */
static __always_inline __u32 py_fill_activations(struct py_shift *sh)
{
	__u32 n = 2 * BPFPROF_COPY_PY_ACTIVATIONS < max_depth ?
		  2 * BPFPROF_COPY_PY_ACTIVATIONS : max_depth;

	bpf_loop_cold(n, py_fill_step, sh);
	sh->st->nr = n;
	return n;
}

/*
 * The "py_procs" entry of process @tgid, or its forked parent's
 * (process_entry()); NULL if neither has one.  A process found to have
 * none is noted per CPU, and its next samples there skip the look-ups
 * (a map miss, then forked_parent()'s reads of the task: ~0.18 us a
 * sample of a native program, docs/PERFORMANCE.md "Session 30") until
 * the collector writes an entry of any process (py_procs_gen).
 */
static __always_inline const struct py_process *py_process_of(__u32 tgid)
{
	__u32 zero = 0;
	struct py_no_interp *no = bpf_map_lookup_elem(&py_no_interp, &zero);
	__u64 gen = py_procs_gen;	/* before the look-up: a write after it
					 * leaves the note stale at once */
	const struct py_process *p;

	if (no && no->tgid == tgid && no->gen == gen) {
		py_count(PY_STAT_NOT_PYTHON, 1);
		return NULL;
	}
	p = py_process_entry(tgid);
	if (!p && no) {
		no->tgid = tgid;
		no->gen = gen;
	}
	return p;
}

/*
 * Replace the evaluator frames of the user stack @st (st->nr frames, leaf
 * first, of thread @tid of process @tgid) by the Python frames they run;
 * the Python frames of evaluator frames a cut native stack did not reach
 * go to its root end (py_splice_step()).  @synthetic: @st is not a walked
 * stack but py_fill_activations()'s (written here), and the splice ends
 * with the Python frames, or with nr 0 if none were written (as
 * py_splice_scratch() set it before the call).  Nothing changes for a
 * process without an interpreter the collector found, a thread without a
 * thread state or a current frame.  Returns whether Python frames were
 * written.
 * Once v holds it, @synthetic is read from there, where a test costs a
 * load only on the rare paths that make it: the verifier knows @synthetic
 * as 0 or 1, and while it was live past the splice's loop it checked that
 * loop once for each (auto: 18,519 -> 16,463 instructions processed,
 * docs/PERFORMANCE.md).
 */
static __always_inline bool py_splice_stack(struct stack_trace *st, __u32 tgid, __u32 tid,
					    __u32 synthetic)
{
	const struct py_process *p = interpreters ? py_process_of(tgid) : NULL;
	struct py_splice_vars *v;
	struct py_splice s;
	struct py_shift sh;
	__u32 n = st->nr, zero = 0;
	__u64 frame;

	if (!p || !(v = bpf_map_lookup_elem(&py_vars, &zero)))
		return false;
	v->counts[PY_STAT_SAMPLES]++;
	if (!synthetic && (n == 0 || n > max_depth))
		return false;
	frame = py_thread_frame(p, tgid, tid);
	if (!frame)
		return false;
	s.cstack = cfi_mode ? cfi_vars_here() : NULL;
	sh.st = st;
	sh.eval_ip = p->eval_start[0] + 1;
	if (synthetic)
		n = py_fill_activations(&sh);
	sh.n = n;
	sh.d = max_depth - n;
	if (sh.d)
		bpf_loop(FRAME_STEPS(n), py_shift_step, &sh, 0);
	__builtin_memset(&v->frame, 0, offsetof(struct py_splice_vars, win) -
					offsetof(struct py_splice_vars, frame));
	v->frame = frame;
	v->r = sh.d;
	v->leaf = sh.d;
	v->end = max_depth;
	v->synthetic = synthetic;
	v->cut = synthetic || py_native_cut(s.cstack);
	s.st = st;
	s.p = p;
	s.tgid = tgid;
	s.v = v;
	/* a step per native frame, per Python frame, per activation left */
	bpf_loop(3 * max_depth + 2, py_splice_step, &s, 0);
	if (v->at_root && !v->synthetic)
		v->counts[PY_STAT_AT_ROOT]++;
	st->nr = v->k;
	if (v->frames) {
		v->counts[PY_STAT_SPLICED]++;
		v->counts[PY_STAT_FRAMES] += v->frames;
	}
	v->counts[PY_STAT_READS] += v->reads;
	if (v->truncated)
		v->counts[PY_STAT_TRUNCATED]++;
	else if (v->frame)
		v->counts[PY_STAT_FRAMES_LEFT]++;
	v->counts[PY_STAT_EVAL_UNMATCHED] += v->unmatched;
	v->counts[PY_STAT_READ_FAULT] += v->read_faults;
	v->counts[PY_STAT_NOT_CODE] += v->not_code;
	v->counts[PY_STAT_CODE_CHECKS] += v->code_checks;	/* 3.13 (py_code_checked()) */
	v->counts[PY_STAT_CODE_CACHED] += v->code_cached;
	if (v->frames)
		return true;
	if (v->synthetic)	/* whatever the splice left */
		st->nr = 0;
	return false;
}

/* @tgid exec()ed: its interpreter, if it had one, is gone. */
static __always_inline void py_forget_process(__u32 tgid)
{
	bpf_map_delete_elem(&py_procs, &tgid);
}

#endif /* BPFPROF_PYTHON_BPF_H */
