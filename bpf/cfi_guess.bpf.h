/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * cfi_guess.bpf.h - frames without a row in the walk of `--call-graph
 * auto` (bpf/cfi_row.h: assembly without CFI, code built with frame
 * pointers and no CFI): their caller taken from the stack when the code
 * before that return address is a call, or the walk's end.  Included by
 * cfi_walk.bpf.h after cfi_step().
 *
 * Needs from cfi_walk.bpf.h: struct cfi_walk_vars, cfi_read(); from
 * profile.bpf.c: max_depth.
 */
#ifndef BPFPROF_CFI_GUESS_BPF_H
#define BPFPROF_CFI_GUESS_BPF_H

/* The 8 bytes before a return address, and whether they end with an
 * indirect call (cfi_call_indirect_len()). */
struct cfi_call_code {
	__u64 code;
	bool indirect;
};

/* One length of cfi_call_indirect_len() (bpf/cfi_row.h), @i + 2: a
 * bpf_loop() callback, whose branches the verifier checks once, not once
 * per length. */
static long cfi_call_indirect(__u32 i, void *data)
{
	struct cfi_call_code *c = data;

	if (i > 5)
		return 1;
	if (!cfi_call_indirect_len(c->code, i + 2))
		return 0;
	c->indirect = true;
	return 1;
}

/*
 * Whether @code, the 8 bytes before a return address, end with a call: a
 * call rel32 (E8), or one through a register or memory (FF /2,
 * cfi_call_indirect_len(); a length of 5 never matches), as DSP tables are
 * called.  Not where it went: a leaf a C function entered by a tail call
 * returns after the call to that function.  A global function: the
 * verifier checks its branches once, on their own, not in each state of
 * the walk's frame callback.
 */
__noinline int cfi_call_before(__u64 code)
{
	struct cfi_call_code c = { .code = code };

	if (CFI_CALL_REL32(code))
		return 1;
	bpf_loop_cold(6, cfi_call_indirect, &c);
	return c.indirect;
}

/* struct cfi_walk_vars.guessed: how the frame written last was found. */
#define CFI_GUESS_NONE 0
#define CFI_GUESS_LEAF 1	/* a leaf's caller from [sp] */
#define CFI_GUESS_FP 2		/* a caller from [bp + 8], bp from [bp] */

/*
 * The frame had no row (code without CFI): take its caller from the stack,
 * if the code before that return address is a call (bpf/cfi_row.h).  The
 * first frame, a leaf that saved nothing, has it at [sp]; any other frame
 * by its frame pointer, at [bp + 8] with the caller's rbp at [bp], as code
 * built with frame pointers and no CFI keeps it (crtstuff's
 * __do_global_dtors_aux, which runs each library's destructors at exit);
 * rbx is then lost.  The next frame's row decides: none, and the guess is
 * taken back.
 */
static __always_inline bool cfi_guess_caller(struct cfi_walk_vars *v, bool leaf)
{
	__u64 ra = 0, code, at = leaf ? v->sp : v->bp + 8, bp = v->bp;

	if (!leaf && (!v->bp_known || v->bp < v->sp || v->bp - v->sp > CFI_FP_STEP_RANGE))
		return false;
	if (cfi_read(v, at, &ra) || ra < 4096 || (!leaf && cfi_read(v, v->bp, &bp)) ||
	    bpf_probe_read_user(&code, sizeof(code), (const void *)(ra - 8)) ||
	    !cfi_call_before(code))
		return false;
	v->ip = ra;
	v->sp = at + 8;
	v->bp = bp;
	v->bx_known = leaf && v->bx_known;
	v->exact = 0;
	v->stop = CFI_WALK_END;
	v->guessed = leaf ? CFI_GUESS_LEAF : CFI_GUESS_FP;
	return true;
}

/*
 * The frame written last has no row (cfi_frame_row() set v->stop): 1 if
 * its caller was guessed (cfi_guess_caller(), in v->ip), else 0, the walk
 * over (and a frame taken back: a guessed one whose own frame has no row
 * either, a return address in no mapping).  A global function: the
 * verifier checks the guesses once, on their own, not in the walk's
 * frame callback after each way the row lookup ends (auto: 9,122 -> 8,696
 * instructions processed).  Called only for a frame without a row.
 */
__noinline int cfi_no_row(struct cfi_walk_vars *v)
{
	__u32 n;

	if (!v)
		return 0;
	n = v->n;
	if (v->guessed) {	/* [sp] held no return address into CFI */
		v->n = n - 1;
		v->stop = CFI_WALK_NO_ROW;
		return 0;
	}
	if (v->stop == CFI_WALK_NO_ROW && n < max_depth && n < BPFPROF_MAX_STACK_DEPTH &&
	    cfi_guess_caller(v, n == 1))
		return 1;
	/* a return address in no mapping is not a frame */
	if (v->stop == CFI_WALK_UNMAPPED && n > 1)
		v->n = n - 1;
	return 0;
}

#endif /* BPFPROF_CFI_GUESS_BPF_H */
