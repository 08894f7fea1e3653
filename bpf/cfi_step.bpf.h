/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * cfi_step.bpf.h - one step of the user stack walk of `--call-graph auto`
 * from a frame to its caller by the frame's row (the rules of
 * bpf/cfi_row.h): the CFA by the row's kind, then the return address and
 * the caller's rbp and rbx; cfi_step_common() for the rules most frames
 * have, cfi_step() for all.  Included once by bpf/cfi_walk.bpf.h.
 *
 * Needs from bpf/cfi_walk.bpf.h: struct cfi_walk_vars, cfi_window_get(),
 * cfi_read().
 */
#ifndef BPFPROF_CFI_STEP_BPF_H
#define BPFPROF_CFI_STEP_BPF_H

/* struct pt_regs offsets of x86-64's general registers, by DWARF number. */
const volatile __u16 cfi_dwarf_regs[16] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, dx),
	offsetof(struct pt_regs, cx), offsetof(struct pt_regs, bx),
	offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, bp), offsetof(struct pt_regs, sp),
	offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
};

/* The sample's general register @reg (DWARF number) as a CFI_KIND_REG
 * row's base: in the first frame any, in a later one a caller-saved one
 * (cfi_row.h).  0 or -1. */
static __always_inline int cfi_sample_reg(struct cfi_walk_vars *v, __u32 reg, __u64 *val)
{
	reg &= 15;
	if (!v->regs || (v->n != 1 && !(CFI_CALLER_SAVED >> reg & 1)))
		return -1;
	return bpf_probe_read_kernel(val, sizeof(*val),
				     (const void *)(v->regs + cfi_dwarf_regs[reg])) ? -1 : 0;
}

/* The CFA of the current frame by @row, whose kind is @kind; -1 with
 * v->stop set. */
static __always_inline int cfi_cfa(struct cfi_walk_vars *v, const struct cfi_row *row,
				   __u32 kind, __u64 *cfa)
{
	__s64 off = (__s64)row->cfa * 8;
	__u64 base = v->sp;

	/* one test for the kinds from rbp: one more path to verify, not three */
	if ((kind == CFI_KIND_RBP || kind == CFI_KIND_RBP_DEREF || kind == CFI_KIND_DRAP) &&
	    !v->bp_known) {
		v->stop = CFI_WALK_RBP_UNKNOWN;
		return -1;
	}
	switch (kind) {
	case CFI_KIND_RSP:
		*cfa = v->sp + off;
		return 0;
	case CFI_KIND_RSP_FAR:
		*cfa = v->sp + CFI_RSP_FAR_UNITS(row->cfa) * 8;
		return 0;
	case CFI_KIND_RBX:
		if (!v->bx_known) {	/* no stop of its own (cfi_walk.h) */
			v->stop = CFI_WALK_UNSUPPORTED;
			return -1;
		}
		*cfa = v->bx + off;
		return 0;
	case CFI_KIND_REG:
		if (cfi_sample_reg(v, CFI_ROW_REG(row), &base)) {
			v->stop = CFI_WALK_UNSUPPORTED;
			return -1;
		}
		*cfa = base + off;
		if (v->n != 1 && *cfa - v->sp > CFI_FP_STEP_RANGE) {
			v->stop = CFI_WALK_BAD_STEP;	/* not this frame's */
			return -1;
		}
		return 0;
	case CFI_KIND_RBP:
		if (v->bp == 0) {	/* the outermost frame's mark (cfi_walk.h) */
			v->stop = CFI_WALK_END;
			return -1;
		}
		*cfa = v->bp + off;
		return 0;
	case CFI_KIND_PLT:
		*cfa = v->sp + off + ((v->ip & 15) >= (__u64)(__s64)row->rbp ? 8 : 0);
		return 0;
	case CFI_KIND_RBP_DEREF:
	case CFI_KIND_DRAP:
		base = v->bp;
		break;
	default:
		break;
	}
	/*
	 * A CFA the function saved (the *_DEREF kinds and DRAP, cfi_row.h), or
	 * CFI_KIND_SIGNAL's interrupted sp in the ucontext: its field, a
	 * small positive offset, reads the same through CFI_DEREF_OFF(), and
	 * CFI_DEREF_ADD() gives 0.  One read for the three kinds, which the
	 * verifier checks once.
	 */
	if (cfi_read(v, base + (__s64)CFI_DEREF_OFF(row->cfa) * 8, cfa)) {
		v->stop = CFI_WALK_READ_FAULT;
		return -1;
	}
	*cfa += (__u64)CFI_DEREF_ADD(row->cfa) * 8;
	return 0;
}

/* Move the walk to the caller: its pc @ra, sp @cfa and registers;
 * @exact past a signal frame, whose registers are the interrupted
 * frame's (the sample's no longer are). */
static __always_inline void cfi_step_to(struct cfi_walk_vars *v, __u64 ra, __u64 cfa, __u64 bp,
					__u32 bp_known, __u64 bx, __u32 bx_known, bool exact)
{
	v->ip = ra;
	v->sp = cfa;
	v->bp = bp;
	v->bp_known = bp_known;
	v->bx = bx;
	v->bx_known = bx_known;
	v->exact = exact;
	if (exact)
		v->regs = 0;
}

/*
 * One step from the current frame to its caller by @row; -1 with v->stop
 * (-1 alone for a NULL argument).  A global function: the verifier checks
 * it once, on its own, where it checked it in each pass over
 * cfi_walk_frame() (a bpf_loop() callback, checked until its state at
 * entry repeats), each time with a path per kind of row (the kind is a
 * constant in each case of cfi_cfa()'s switch, and the tests after it keep
 * those apart) and per read's outcome (auto: 11,692 -> 10,532
 * instructions processed).  A call per frame.
 */
__noinline int cfi_step(struct cfi_walk_vars *v, const struct cfi_row *row)
{
	__u64 cfa = 0, ra = 0, bp, bp_addr = 0, bx;
	__u32 bp_known, bx_known, kind, rbx;
	bool signal;

	if (!v || !row)
		return -1;
	bp = v->bp;
	bx = v->bx;
	bp_known = v->bp_known;
	bx_known = v->bx_known;
	kind = CFI_ROW_KIND(row);
	rbx = CFI_ROW_RBX(row);
	if (cfi_cfa(v, row, kind, &cfa))
		return -1;
	/* Read again (a load per frame): after cfi_cfa()'s switch the kind is
	 * a constant to the verifier in each case, and the tests below kept
	 * those paths apart to the end (auto: 10,532 -> 10,113 instructions
	 * processed).  Inlined in the frame callback, this once cost more than
	 * it saved (docs/PERFORMANCE.md); in this function it saves. */
	kind = CFI_ROW_KIND((const volatile struct cfi_row *)row);
	signal = kind == CFI_KIND_SIGNAL;
	if (cfi_read(v, signal ? v->sp + (__s64)row->cfa * 8 + 8 : cfa - 8, &ra)) {
		v->stop = CFI_WALK_READ_FAULT;
		return -1;
	}
	if (signal)
		bp_addr = v->sp + (__s64)row->rbp * 8;
	else if (kind == CFI_KIND_DRAP)	/* bp-relative (cfi_row.h) */
		bp_addr = v->bp + (__s64)row->rbp * 8;
	else if (kind != CFI_KIND_PLT && row->rbp != CFI_RBP_SAME && row->rbp != CFI_RBP_LOST)
		bp_addr = cfa + (__s64)row->rbp * 8;
	if (bp_addr)
		bp_known = cfi_read(v, bp_addr, &bp) == 0;
	else if (kind != CFI_KIND_PLT && row->rbp == CFI_RBP_LOST)
		bp_known = 0;
	if (kind == CFI_KIND_REG)	/* the field holds the register */
		rbx = CFI_RBX_LOST;
	if (rbx != CFI_RBX_SAME)	/* one branch for "lost" and a slot */
		bx_known = rbx != CFI_RBX_LOST && cfi_read(v, cfa + CFI_RBX_SLOT_OFF(rbx), &bx) == 0;
	if (ra == 0) {
		v->stop = CFI_WALK_END;
		return -1;
	}
	if (!signal && cfa <= v->sp) {
		v->stop = CFI_WALK_BAD_STEP;
		return -1;
	}
	cfi_step_to(v, ra, cfa, bp, bp_known, bx, bx_known, signal);
	return 0;
}

/*
 * cfi_step() by the current frame's row (v->row) for the rows most
 * frames have, with all it reads in the window: a CFA from sp, or from a
 * known rbp (CFI_KIND_RSP, CFI_KIND_RBP), a return address that is not
 * 0 above sp, rbp and rbx the same or saved in the frame or lost.  1 when
 * it took the step, 0 when it left the frame as it was to cfi_step(),
 * which takes every other step and ends the walks: the same step in
 * about half the instructions (docs/PERFORMANCE.md, "Session 31").  A
 * global function, checked once.
 */
__noinline int cfi_step_common(struct cfi_walk_vars *v)
{
	__u64 base, cfa, ra = 0, bp, bx;
	__u32 kind, rbx;
	__s32 rbp;

	if (!v)
		return 0;
	kind = CFI_ROW_KIND(&v->row);
	if (kind == CFI_KIND_RSP)
		base = v->sp;
	else if (kind == CFI_KIND_RBP && v->bp_known && v->bp)
		base = v->bp;
	else
		return 0;
	cfa = base + (__s64)v->row.cfa * 8;
	if (cfa <= v->sp || !cfi_window_get(v, cfa - 8, &ra) || !ra)
		return 0;
	bp = v->bp;
	bx = v->bx;
	rbp = v->row.rbp;
	if (rbp != CFI_RBP_SAME && rbp != CFI_RBP_LOST &&
	    !cfi_window_get(v, cfa + (__s64)rbp * 8, &bp))
		return 0;
	rbx = CFI_ROW_RBX(&v->row);
	if (rbx != CFI_RBX_SAME && rbx != CFI_RBX_LOST &&
	    !cfi_window_get(v, cfa + CFI_RBX_SLOT_OFF(rbx), &bx))
		return 0;
	cfi_memo_note(v, rbp != CFI_RBP_SAME && rbp != CFI_RBP_LOST ? cfa + (__s64)rbp * 8 : 0,
		      (kind == CFI_KIND_RBP ? CFI_MEMO_CFA_BP : 0) |
		      (rbp == CFI_RBP_SAME ? CFI_MEMO_BP_SAME : 0));
	cfi_step_to(v, ra, cfa, bp, rbp == CFI_RBP_SAME ? v->bp_known : rbp != CFI_RBP_LOST,
		    bx, rbx == CFI_RBX_SAME ? v->bx_known : rbx != CFI_RBX_LOST, false);
	v->common_steps++;
	return 1;
}

#endif /* BPFPROF_CFI_STEP_BPF_H */
