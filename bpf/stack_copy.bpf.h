/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * stack_copy.bpf.h - samples whose user stack goes to the collector as a
 * copy (registers, the red zone below sp and the stack from sp up, struct
 * dwarf_sample_event),
 * for it to unwind in userspace (user/unwind/unwind.c): every sample with
 * --call-graph dwarf, and with auto a young process's sample whose walk
 * met code the collector has not loaded the tables of yet
 * (cfi_copy_instead()).  Included once by profile.bpf.c.
 *
 * Needs from profile.bpf.c: the "samples" ring, sample_header(),
 * submit_sample(), drop(), user_stack_size, cfi_copies, scratch_stack(),
 * py_new_code_scratch(); from bpf/cfi_walk.bpf.h: cfi_vars.
 */
#ifndef BPFPROF_STACK_COPY_BPF_H
#define BPFPROF_STACK_COPY_BPF_H

/* Probes of copy_user_stack_below_fault(): a binary search over at most
 * 2^6 - 1 page boundaries. */
#define FAULT_PROBES 6
_Static_assert((1 << FAULT_PROBES) > BPFPROF_MAX_USER_STACK / 4096 + 2,
	       "too few probes to find the readable end of the largest stack copy");

/*
 * The copy of [sp, sp + n) faulted: a thread's stack often ends less than n
 * bytes above sp.  Copy the longest prefix that ends on a page boundary and
 * can be read.  A prefix is readable when all its pages are, so the
 * readable ones are those up to the first bad page, found by a binary
 * search: a few reads instead of one per page (a failed read zeroes its
 * destination, so the longest good prefix is read last).
 * The search's bounds, in pages, live in the record (stack_size and pad,
 * both set again at the end) rather than in registers: the verifier does not
 * track what a ring buffer record holds, so each probe's two outcomes
 * reach the next probe in states it can prune as one.  In registers the
 * size read depends on them, it tracks their bounds exactly, and the six
 * probes' outcomes made up to 2^6 states (~4,400 of auto's and dwarf's
 * instructions processed, docs/PERFORMANCE.md).  It costs a few loads
 * and stores, on a path that only runs after a read faulted and then
 * makes up to seven more.  Whether the last probe succeeded is found
 * after the search (its page is the one found), not kept in a flag: the
 * flag's two values kept each probe's two outcomes apart to the end of
 * the search (auto: 7,891 -> 7,621 instructions processed, dwarf 5,254 ->
 * 4,922).
 */
static __always_inline void copy_user_stack_below_fault(struct dwarf_sample_event *e,
							__u64 sp, __u32 n)
{
	/* volatile: read back from the record, not forwarded in a register */
	volatile __u32 *lo = &e->stack_size, *hi = &e->pad;
	__u64 base = sp & ~4095ull, m = 0;
	__u32 good, mid = 0;

	/* Page ends base + 4096 j, for j in (lo, hi), may be the answer:
	 * j = lo is readable (0: nothing), j = hi is not. */
	*lo = 0;
	*hi = (((sp + n) & ~4095ull) - base) / 4096 + 1;
	for (int i = 0; i < FAULT_PROBES && *hi - *lo > 1; i++) {
		mid = (*lo + *hi) / 2;
		/* 64-bit: no sub-register copy that loses the bound */
		m = base + 4096 * (__u64)mid - sp;
		if (m > user_stack_size)
			m = user_stack_size;
		if (bpf_probe_read_user(e->stack, m, (void *)sp) == 0)
			*lo = mid;
		else
			*hi = mid;
	}
	good = *lo;
	*lo = 0;
	*hi = 0;
	if (good == 0)
		return;
	m = base + 4096 * (__u64)good - sp;
	if (m > user_stack_size)
		m = user_stack_size;
	/* the last probe read this prefix if it succeeded (mid == good) */
	if (mid == good || bpf_probe_read_user(e->stack, m, (void *)sp) == 0)
		e->stack_size = m;
}

/*
 * A copy of a CPython process's stack: the Python frames the program
 * read for it (py_splice_scratch(), called by capture_stack() for auto's
 * copies and by on_sample() for dwarf's), from this CPU's scratch user
 * stack, cut to BPFPROF_COPY_PY_FRAMES, and whether the collector knows
 * their code objects (py_new_code_scratch(), which sends copies of those
 * it does not, before this record).
 */
static __always_inline void copy_python_frames(struct dwarf_sample_event *e, __u32 tgid)
{
	struct stack_trace *st = cfi_copies || dwarf_mode ? scratch_stack(0) : NULL;

	e->py_nr = 0;
	e->py_flags = 0;
	if (!st || !st->nr || bpf_probe_read_kernel(e->py_ips, sizeof(e->py_ips), st->ips))
		return;
	if (st->nr > BPFPROF_COPY_PY_FRAMES)	/* so the scan sees only those sent */
		st->nr = BPFPROF_COPY_PY_FRAMES;
	e->py_nr = st->nr;
	e->py_flags = py_new_code_scratch(tgid) ? 0 : BPFPROF_NEW_STACK_CODES_KNOWN;
}

/*
 * A copy whose walk met an FDE not built yet wakes the collector at once,
 * at most every CFI_UNBUILT_WAKE_NS (ns, all CPUs): until it has built
 * the FDE's rows and laid the table out again, every sample through it
 * is such a copy, and a stack deeper than its copy shows the next one
 * only then; at the batched wake-ups (a quarter MiB of records: 8 copies)
 * a start-up of openssl dgst sent ~45 copies, ~6 % of its samples, and
 * their stacks past the copy's end were lost.
 */
#define CFI_UNBUILT_WAKE_NS 2000000ull
__u64 cfi_unbuilt_woken_ns;	/* the last such wake-up (racy: a hint) */

static __always_inline void submit_unbuilt_copy(void *e)
{
	__u64 now = bpf_ktime_get_ns();

	if (now - cfi_unbuilt_woken_ns < CFI_UNBUILT_WAKE_NS) {
		submit_sample(e);
		return;
	}
	cfi_unbuilt_woken_ns = now;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * --call-graph dwarf: the sample with the user registers, the red zone
 * below sp, and a copy of the user stack from sp upward (capped at the
 * end of the environment strings for the main thread, where the stack
 * mapping ends).  A copy that faults is cut at its readable end.
 * @unbuilt_pc: auto's copy's (send_stack_copy()), else 0.
 */
static __always_inline int stream_dwarf_sample(struct bpf_perf_event_data *ctx,
					       struct count_key *key, __u64 unbuilt_pc)
{
	struct dwarf_sample_event *e;
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 sp, env_end = 0;
	__u32 n = user_stack_size;

	if (n > BPFPROF_MAX_USER_STACK)
		n = BPFPROF_MAX_USER_STACK;
	e = bpf_ringbuf_reserve(&samples, sizeof(*e) + user_stack_size, 0);
	if (!e) {
		drop(DROP_RINGBUF_FULL);
		return -1;
	}
	sample_header(&e->sample, ctx, key);	/* user_stack 0: the collector unwinds */
	__builtin_memset(e->pt_regs, 0, sizeof(e->pt_regs));
	e->stack_size = 0;
	e->has_regs = 0;
	e->red_zone_ok = 0;
	e->pad = 0;
	e->unbuilt_pc = unbuilt_pc;
	copy_python_frames(e, key->tgid);
	_Static_assert(sizeof(e->pt_regs) == sizeof(struct pt_regs), "pt_regs' words");
	/* no dereference of mm: see cfi_walk_user_stack(); a failed read
	 * zeroes the registers */
	if (BPF_CORE_READ(task, mm) &&
	    !bpf_probe_read_kernel(e->pt_regs, sizeof(e->pt_regs), (void *)bpf_task_pt_regs(task))) {
		sp = e->pt_regs[BPFPROF_PT_REGS_SP];
		e->has_regs = 1;
		/* apart from the copy above sp: it may fault where that does not */
		if (sp >= BPFPROF_RED_ZONE &&
		    !bpf_probe_read_user(e->red_zone, sizeof(e->red_zone),
					 (void *)(sp - BPFPROF_RED_ZONE)))
			e->red_zone_ok = 1;
		env_end = BPF_CORE_READ(task, mm, env_end);
		if (sp < env_end && env_end - sp < n)
			n = env_end - sp;
		if (n > BPFPROF_MAX_USER_STACK)
			n = BPFPROF_MAX_USER_STACK;
		if (n > user_stack_size)
			n = user_stack_size;
		if (n && bpf_probe_read_user(e->stack, n, (void *)sp) == 0)
			e->stack_size = n;
		else if (n)
			copy_user_stack_below_fault(e, sp, n);
	}
	if (unbuilt_pc)
		submit_unbuilt_copy(e);
	else
		submit_sample(e);
	return 0;
}

/*
 * auto's copy of a young process's stack, or of one whose walk met an
 * FDE not built yet, with its pc (cfi_copy_instead()), a global
 * function checked once.  With stream_dwarf_sample()'s search for the
 * readable end of a copy that faults: a young process's copy up to
 * env_end often does (1 in 7 copies of nofp_deep in young_processes.sh;
 * why, not known), and the rest of sp's page alone, which this copy took
 * before, ends the stack a few frames up.  The search doubled the
 * verifier's work on the program (6,242 -> 11,439 instructions in auto
 * mode, docs/PERFORMANCE.md), until its bounds moved to the record
 * (copy_user_stack_below_fault()).  Returns 0, or -1 (dropped, counted).
 */
__noinline int send_stack_copy(struct bpf_perf_event_data *ctx, struct count_key *key)
{
	struct cfi_walk_vars *v = cfi_vars_here();

	/* cfi_copies, a load-time constant, lets the verifier drop the body
	 * where no copy is ever sent (-g, dwarf) */
	if (!cfi_copies || !ctx || !key)
		return -1;
	return stream_dwarf_sample(ctx, key, v && v->unbuilt ? v->miss_pc : 0);
}

/* A process whose thread-group leader started less than this ago (ns) is
 * young: cfi_copy_instead(). */
#define CFI_COPY_YOUNG_NS 1000000000ull

/*
 * Whether the user stack the CFI walk just took (this CPU's cfi_vars) is
 * better sent to the collector as a copy, like a --call-graph dwarf
 * sample, than stored: the walk met an FDE of a lazy table whose rows
 * are not built yet (bpf/cfi_row.h, CFI_UNBUILT_FDE), in any process; or
 * code the collector has not loaded the tables of yet (no entry for the
 * process, or a pc in no mapping it wrote), in a young process (an
 * exec'd child in its first milliseconds, before the collector read its
 * mappings, or before ld.so's libraries reached the table).  Such a walk
 * stops early; the collector unwinds the copy once it knows the mappings
 * and has built the FDE's rows (user/profile/ingest.c), which later walks
 * then find.  Only while the ring has room for two records: else the
 * walk's frames stand (counted: CFI_COPIES_WITHHELD).
 */
static __always_inline bool cfi_copy_instead(void)
{
	__u64 record = sizeof(struct dwarf_sample_event) + user_stack_size;
	struct cfi_walk_vars *v = cfi_vars_here();
	__u64 start;

	if (!cfi_copies || !v)
		return false;
	if (!v->unbuilt) {
		if (v->stop != CFI_WALK_NO_PROCESS && v->stop != CFI_WALK_UNMAPPED)
			return false;
		start = BPF_CORE_READ(bpf_get_current_task_btf(), group_leader, start_time);
		if (bpf_ktime_get_ns() - start > CFI_COPY_YOUNG_NS)
			return false;
	}
	if (bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) + 2 * record <=
	    bpf_ringbuf_query(&samples, BPF_RB_RING_SIZE))
		return true;
	v->counts[CFI_COPIES_WITHHELD]++;	/* the walk's frames stand */
	return false;
}

#endif /* BPFPROF_STACK_COPY_BPF_H */
