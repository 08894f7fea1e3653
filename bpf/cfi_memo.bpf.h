/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * cfi_memo.bpf.h - the memo of a thread's last user stack walk
 * (`--call-graph auto`), included once by bpf/cfi_walk.bpf.h.
 *
 * A thread's next sample mostly has the same root part as its last: in a
 * pyburn run, 11.7 of a sample's 15.6 frames (docs/PERFORMANCE.md,
 * "Session 32").  Each CPU keeps, for the last thread walked in each of
 * CFI_MEMO_SLOTS slots (by tid), the root part of its last walk that
 * ended at the outermost frame: each frame's registers (struct
 * cfi_memo_frame, root first) and where its step read its caller's rbp.
 * Only frames stepped by cfi_step_common() go in: a step that reads the
 * stack window alone, so its result is a function of the frame's pc, sp
 * and (for a CFA from rbp) rbp, its row (of its pc, in tables that do not
 * change while cfi_procs_gen does not) and the window's words it read.
 * rbx never makes such a step's CFA, and rbp only in the frames marked
 * CFI_MEMO_NEEDS_BP (their own CFA's, or a caller's they pass it on to):
 * where the registers are compared and the words checked, only those
 * count, so a saved register that changes from sample to sample (a
 * loop's variable kept in rbx by a caller) does not turn the memo down.
 *
 * When a walk reaches a frame whose pc and sp (and rbp if needed) are a
 * memo frame's, it checks the words each step from there read (the
 * caller's return address at its sp - 8, its saved rbp if needed)
 * against the memo in the window; if all are the same, the rest of the
 * walk is the memo's, and its frames are written at once.  If one is not
 * (or not in the window), the walk goes on as it would have, and the memo
 * is not tried again.
 *
 * The collector bumps cfi_procs_gen each time it writes or deletes a
 * "cfi_procs" entry, and the program does when an exec() deletes one: a
 * memo of another generation is not used.
 *
 * Needs from bpf/cfi_walk.bpf.h: struct cfi_walk_vars (memo_* fields and
 * the rec ring of struct cfi_memo_frame), cfi_window_get(); from
 * profile.bpf.c: max_depth, FRAMES_PER_STEP, FRAME_STEPS().
 */
#ifndef BPFPROF_CFI_MEMO_BPF_H
#define BPFPROF_CFI_MEMO_BPF_H

/* Threads whose memo a CPU keeps (a power of two): slot tid % this. */
#define CFI_MEMO_SLOTS 8

/* Bumped on each change of "cfi_procs" (the collector, cfi_forget_process()). */
volatile __u64 cfi_procs_gen = 0;

/* A thread's memo: frames f[0..nr), f[0] the outermost. */
struct cfi_memo {
	__u64 gen;		/* cfi_procs_gen of its walk */
	__u32 tgid, tid;	/* its thread */
	__u32 nr;		/* frames (0: none) */
	__u32 pad;
	struct cfi_memo_frame f[CFI_MEMO_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CFI_MEMO_SLOTS);
	__type(key, __u32);
	__type(value, struct cfi_memo);
} cfi_memos SEC(".maps");

/* The current frame's registers into @f, with @flags (CFI_MEMO_CFA_BP,
 * CFI_MEMO_BP_SAME) and where its step read its caller's rbp (@bp_at, 0:
 * not read); exact is 0 or 1. */
static __always_inline void cfi_memo_put(struct cfi_memo_frame *f, const struct cfi_walk_vars *v,
					 __u64 bp_at, __u32 flags)
{
	f->ip = v->ip;
	f->sp = v->sp;
	f->bp = v->bp;
	f->bp_at = bp_at;
	f->flags = flags | v->exact * CFI_MEMO_EXACT;
}

/* cfi_step_common() steps the current frame by a row with @flags,
 * reading its caller's rbp at @bp_at (0: not read): its record in the
 * walk's ring.  A global function: checked once, not on each of the
 * step's paths (auto: 11,667 -> 11,282 instructions processed).  Returns 0. */
__noinline int cfi_memo_note(struct cfi_walk_vars *v, __u64 bp_at, __u32 flags)
{
	if (v)
		cfi_memo_put(&v->rec[(v->n - 1) & (CFI_MEMO_FRAMES - 1)], v, bp_at, flags);
	return 0;
}

/* The memo slot of thread @tid on this CPU; never NULL in practice (a
 * per-CPU array's key below max_entries). */
static __always_inline struct cfi_memo *cfi_memo_slot(__u32 tid)
{
	__u32 slot = tid & (CFI_MEMO_SLOTS - 1);

	return bpf_map_lookup_elem(&cfi_memos, &slot);
}

/* A walk of @tid in @tgid starts, with cfi_procs_gen @gen: v->memo_r is
 * @m's frames if @m is that thread's of that generation, else 0. */
static __always_inline void cfi_memo_start(struct cfi_walk_vars *v, const struct cfi_memo *m,
					   __u32 tgid, __u32 tid, __u64 gen)
{
	v->memo_gen = gen;
	if (m->gen == gen && m->tgid == tgid && m->tid == tid && m->nr <= CFI_MEMO_FRAMES)
		v->memo_r = m->nr;
}

/* The bytes of stack the walk's window is to hold: up to where the
 * memo's walk ended (its outermost frame's sp: its words lie below), if
 * that is above sp and within CFI_STACK_WINDOW, else
 * CFI_STACK_WINDOW_FIRST.  A window that reached past the stack's end
 * would cost a fault and hold only the rest of sp's page. */
static __always_inline __u64 cfi_memo_window(const struct cfi_walk_vars *v,
					     const struct cfi_memo *m)
{
	__u64 top;

	if (!v->memo_r)
		return CFI_STACK_WINDOW_FIRST;
	top = m->f[0].sp;
	if (top <= v->sp || top - v->sp > CFI_STACK_WINDOW)
		return CFI_STACK_WINDOW_FIRST;
	return (top - v->sp + 7) & ~7ull;
}

/* The memo frame whose registers are the current frame's, found by sp
 * (both walks go up the stack): v->memo_r its index + 1, or 0 (none yet). */
static __always_inline bool cfi_memo_meets(struct cfi_walk_vars *v, const struct cfi_memo *m)
{
	const struct cfi_memo_frame *f;
	__u32 r = v->memo_r;

	/* four memo frames a walk frame: a longer lag gives up on the memo */
	for (__u32 k = 0; k < 4 && r; k++) {
		if (m->f[(r - 1) & (CFI_MEMO_FRAMES - 1)].sp >= v->sp)
			break;
		r--;
	}
	v->memo_r = r;
	if (!r)
		return false;
	f = &m->f[(r - 1) & (CFI_MEMO_FRAMES - 1)];
	/* rbp only where it makes a CFA (CFI_MEMO_NEEDS_BP), and then known;
	 * one test, not a branch per part: the verifier checks one path */
	return ((f->sp ^ v->sp) | (f->ip ^ v->ip) | (f->flags & CFI_MEMO_EXACT) |
		(((f->bp ^ v->bp) | (v->bp_known ^ 1)) &
		 -(__u64)(f->flags / CFI_MEMO_NEEDS_BP & 1))) == 0;
}

/* cfi_memo_take()'s check, and cfi_memo_write()'s frames (bpf_loop() data). */
struct cfi_memo_fill {
	struct cfi_walk_vars *v;
	const struct cfi_memo *m;
	struct stack_trace *st;
};

static __always_inline bool cfi_memo_same(const struct cfi_walk_vars *v, __u64 at, __u64 val)
{
	__u64 w;

	return cfi_window_get(v, at, &w) && w == val;
}

/* The step of memo frame v->memo_r - 1 to its caller read the same words
 * in the window as when the memo was made (its return address, and its
 * rbp if the caller needs it); then on to the caller. */
static long cfi_memo_check_step(__u32 i, void *data)
{
	struct cfi_memo_fill *s = data;
	struct cfi_walk_vars *v = s->v;

	for (__u32 k = 0; k < FRAMES_PER_STEP; k++) {
		__u32 r = v->memo_r - 1, fi, gi;
		const struct cfi_memo_frame *f, *g;

		if (!r || r >= CFI_MEMO_FRAMES)
			return 1;	/* the outermost: the memo's walk ended there */
		fi = r;
		gi = r - 1;
		barrier_var(fi);	/* masked below, not only checked above */
		barrier_var(gi);
		f = &s->m->f[fi & (CFI_MEMO_FRAMES - 1)];
		g = &s->m->f[gi & (CFI_MEMO_FRAMES - 1)];
		if (!cfi_memo_same(v, g->sp - 8, g->ip) ||
		    (f->bp_at && (g->flags & CFI_MEMO_NEEDS_BP) && !cfi_memo_same(v, f->bp_at, g->bp)))
			return 1;
		v->memo_r = r;
	}
	return 0;
}

/*
 * At the start of a frame: whether the current frame is a memo frame and
 * the stack words the memo's steps from there read are the same; then
 * the walk ends there (v->stop CFI_WALK_END, as the memo's did) and
 * cfi_memo_write() writes the memo's frames from there.  After a check
 * that failed, the memo is not tried again.  A global function: checked
 * once, called once per frame.
 */
__noinline int cfi_memo_take(struct cfi_walk_vars *v, const struct cfi_memo *m)
{
	struct cfi_memo_fill s = { .v = v, .m = m };
	__u32 h;

	if (!v || !m || !v->memo_r || v->exact || v->guessed || v->n < 2)
		return 0;
	if (!cfi_memo_meets(v, m))
		return 0;
	h = v->memo_r - 1;
	if (v->n + h > max_depth || v->n + h > BPFPROF_MAX_STACK_DEPTH)
		return 0;
	bpf_loop(FRAME_STEPS(CFI_MEMO_FRAMES), cfi_memo_check_step, &s, 0);
	if (v->memo_r != 1) {
		v->memo_r = 0;	/* not again: the frame loop stops calling */
		v->memo_fails++;
		return 0;
	}
	v->memo_at = v->n - 1;	/* the frame met */
	v->memo_h = h;
	v->memo_end = 1;
	v->stop = CFI_WALK_END;
	return 1;
}

/* FRAMES_PER_STEP of the memo's frames below memo frame v->memo_h,
 * from the (i * FRAMES_PER_STEP)th, after walk frame v->memo_at. */
static long cfi_memo_write_step(__u32 i, void *data)
{
	struct cfi_memo_fill *s = data;
	struct cfi_walk_vars *v = s->v;

	for (__u32 k = 1; k <= FRAMES_PER_STEP; k++) {
		__u32 d = i * FRAMES_PER_STEP + k;	/* frames below memo_h */
		__u64 at = (__u64)v->memo_at + d;

		if (d > v->memo_h)
			return 1;
		barrier_var(at);
		if (at >= max_depth || at >= BPFPROF_MAX_STACK_DEPTH)
			return 1;
		s->st->ips[at] = s->m->f[(v->memo_h - d) & (CFI_MEMO_FRAMES - 1)].ip;
	}
	return 0;
}

/* The frames of a memo cfi_memo_take() took, into @st after the frame
 * met. */
static __always_inline void cfi_memo_write(struct cfi_walk_vars *v, const struct cfi_memo *m,
					   struct stack_trace *st)
{
	struct cfi_memo_fill s = { .v = v, .m = m, .st = st };

	bpf_loop(FRAME_STEPS(v->memo_h), cfi_memo_write_step, &s, 0);
	v->n = v->memo_at + 1 + v->memo_h;
	v->memo_frames += v->memo_h;
}

/* Records a cfi_memo_copy_step() copies: fewer than FRAMES_PER_STEP, as
 * each is six words (a walk has a few to copy) */
#define CFI_MEMO_COPIES_PER_STEP 2

/* cfi_memo_keep()'s copy of the walk's records v->rec[i] to memo frame
 * v->memo_h + v->memo_at - i, i from v->memo_at - 1 down to v->memo_from. */
struct cfi_memo_copy {
	struct cfi_walk_vars *v;
	struct cfi_memo *m;
};

static long cfi_memo_copy_step(__u32 i, void *data)
{
	struct cfi_memo_copy *s = data;
	struct cfi_walk_vars *v = s->v;

	for (__u32 k = 0; k < CFI_MEMO_COPIES_PER_STEP; k++) {
		__u32 at = v->memo_at - 1 - (i * CFI_MEMO_COPIES_PER_STEP + k);
		__u32 to = v->memo_h + v->memo_at - at, caller;
		struct cfi_memo_frame *f;

		if (at < v->memo_from || at >= v->memo_at)
			return 1;
		f = &s->m->f[to & (CFI_MEMO_FRAMES - 1)];
		*f = v->rec[at & (CFI_MEMO_FRAMES - 1)];
		/* needs rbp: CFA_BP, or BP_SAME and its caller (to - 1, in the
		 * memo already) needs it; bit arithmetic, one path to verify */
		caller = s->m->f[(to - 1) & (CFI_MEMO_FRAMES - 1)].flags;
		f->flags |= ((f->flags / CFI_MEMO_CFA_BP |
			      (f->flags / CFI_MEMO_BP_SAME & caller / CFI_MEMO_NEEDS_BP)) & 1) *
			    CFI_MEMO_NEEDS_BP;
	}
	return 0;
}

/*
 * After a walk to the outermost frame: the thread's memo becomes its root
 * part.  From a walk that took the memo (v->memo_h, v->memo_at set), the
 * memo's frames stay and the frames the walk stepped before them go on
 * top; from one that did not, the walk's last frame is f[0] and its
 * stepped frames follow.  Frames from v->memo_from on: the first of a
 * run of common steps to the end (never the leaf: looked up as is).
 * A global function, checked once.
 */
__noinline int cfi_memo_keep(struct cfi_walk_vars *v, struct cfi_memo *m, __u32 tgid, __u32 tid)
{
	struct cfi_memo_copy s = { .v = v, .m = m };
	__u32 from, top;

	if (!v || !m || !v->memo_end || v->n < 1)
		return 0;
	if (!v->memo_at) {		/* not taken: from the last frame */
		v->memo_at = v->n - 1;
		v->memo_h = 0;
		cfi_memo_put(&m->f[0], v, 0, 0);	/* a stop: needs nothing */
	}
	if (v->memo_h >= CFI_MEMO_FRAMES)
		return 0;
	from = v->memo_from > 1 ? v->memo_from : 1;
	/* walk frame i goes to memo frame top - i, which must be below
	 * CFI_MEMO_FRAMES: the root-most frames are kept */
	top = v->memo_h + v->memo_at;
	if (top >= CFI_MEMO_FRAMES && from < top - (CFI_MEMO_FRAMES - 1))
		from = top - (CFI_MEMO_FRAMES - 1);
	if (from > v->memo_at)
		from = v->memo_at;
	v->memo_from = from;
	bpf_loop(CFI_MEMO_FRAMES / CFI_MEMO_COPIES_PER_STEP, cfi_memo_copy_step, &s, 0);
	m->nr = v->memo_h + v->memo_at - from + 1;
	m->gen = v->memo_gen;
	m->tgid = tgid;
	m->tid = tid;
	return 1;
}

#endif /* BPFPROF_CFI_MEMO_BPF_H */
