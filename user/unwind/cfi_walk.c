// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi_walk.c - the reference walk of `--call-graph auto`: the loop the BPF
 * program will run over struct cfi_row tables, written with the same
 * bounded searches and the same order of reads and checks, so the BPF
 * code can follow it line by line (see cfi_walk.h for the rules).
 */
#include <errno.h>
#include <string.h>

#include <bpfprof/plugin.h>

#include "unwind/cfi_walk.h"

/* The walk's stops are the plugin ABI's, under the same numbers. */
#define SAME_STOP(a, b) ((int)BPFPROF_UNWIND_##a == (int)CFI_WALK_##b)
_Static_assert(SAME_STOP(COMPLETE, END) && SAME_STOP(MAX_DEPTH, MAX_DEPTH) &&
	       SAME_STOP(UNMAPPED, UNMAPPED) && SAME_STOP(NO_TABLE, NO_TABLE) &&
	       SAME_STOP(NO_ROW, NO_ROW) && SAME_STOP(UNSUPPORTED, UNSUPPORTED) &&
	       SAME_STOP(READ_FAULT, READ_FAULT) && SAME_STOP(RBP_UNKNOWN, RBP_UNKNOWN) &&
	       SAME_STOP(BAD_STEP, BAD_STEP) && SAME_STOP(NO_PROCESS, NO_PROCESS) &&
	       SAME_STOP(STOP_NR, STOP_NR), "enum bpfprof_unwind_stop follows enum cfi_walk_stop");

const char *cfi_walk_stop_name(unsigned int stop)
{
	return bpfprof_unwind_stop_name(stop);
}

int cfi_walk_read_stack(void *arg, uint64_t addr, uint64_t *val)
{
	const struct cfi_walk_stack *s = arg;

	if (addr < s->sp || addr - s->sp > s->size || s->size - (addr - s->sp) < sizeof(*val))
		return -EFAULT;
	memcpy(val, s->data + (addr - s->sp), sizeof(*val));
	return 0;
}

const struct cfi_mapping *cfi_walk_find_mapping(const struct cfi_walk_process *p,
						uint64_t addr)
{
	uint32_t lo = 0, hi, step;

	if (!p->nr_maps || addr < p->maps[0].start)
		return NULL;
	/* last mapping with start <= addr; as bounded as the BPF loop */
	hi = p->nr_maps;
	for (step = 0; step < CFI_SEARCH_STEPS && hi - lo > 1; step++) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return addr < p->maps[lo].end ? &p->maps[lo] : NULL;
}

/* The row for ELF address @vaddr in @rows (@nr), NULL below the first. */
static const struct cfi_row *find_row(const struct cfi_row *rows, uint32_t nr, uint64_t vaddr)
{
	uint32_t lo = 0, hi = nr, step;

	if (!nr || vaddr > UINT32_MAX || vaddr < rows[0].pc)
		return NULL;
	for (step = 0; step < CFI_SEARCH_STEPS && hi - lo > 1; step++) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return &rows[lo];
}

/* The state of the frame being stepped from. */
struct frame {
	uint64_t ip, sp, bp, bx;
	int bp_known, bx_known;
	int exact;		/* look ip up as is (first frame, after a signal frame) */
	const uint64_t *gprs;	/* the sample's registers; NULL past a signal frame */
	int first;		/* the first frame */
};

/* The row for frame @f, or NULL with *@why set. */
static const struct cfi_row *frame_row(const struct cfi_walk_process *p, const struct frame *f,
				       struct cfi_walk_result *res)
{
	uint64_t pc = f->exact ? f->ip : f->ip - 1;
	const struct cfi_mapping *m = cfi_walk_find_mapping(p, pc);
	const struct cfi_table *t;
	const struct cfi_row *row;
	unsigned int kind;

	if (!m) {
		res->stop = CFI_WALK_UNMAPPED;
		return NULL;
	}
	t = m->table < p->nr_tables ? p->tables[m->table] : NULL;
	if (!t) {
		res->stop = CFI_WALK_NO_TABLE;
		return NULL;
	}
	row = find_row(t->rows, t->nr, pc - m->bias);
	kind = row ? CFI_ROW_KIND(row) : CFI_KIND_STOP_NO_ROW;
	if (row && CFI_ROW_UNBUILT(row)) {	/* as the BPF walk: no guess */
		res->stop = CFI_WALK_NO_TABLE;
		res->unbuilt_pc = pc;
		return NULL;
	}
	if (kind == CFI_KIND_STOP_NO_ROW) {
		res->stop = CFI_WALK_NO_ROW;
		return NULL;
	}
	if (kind == CFI_KIND_STOP_OUTERMOST) {
		res->stop = CFI_WALK_END;
		return NULL;
	}
	if (kind >= CFI_KIND_FIRST_STOP) {
		res->stop = CFI_WALK_UNSUPPORTED;
		res->kind = (uint8_t)kind;
		return NULL;
	}
	return row;
}

/*
 * One step from @f to its caller by @row.  Returns 0 with @f updated, or
 * -1 with res->stop set.
 */
static int step(const struct cfi_row *row, struct frame *f, cfi_walk_read_fn read, void *arg,
		struct cfi_walk_result *res)
{
	uint64_t cfa, ra_addr, bp_addr = 0, ra, bp = f->bp, bx = f->bx, base = f->sp;
	unsigned int kind = CFI_ROW_KIND(row), rbx = CFI_ROW_RBX(row);
	int bp_known = f->bp_known, bx_known = f->bx_known;

	if ((kind == CFI_KIND_RBP || kind == CFI_KIND_RBP_DEREF || kind == CFI_KIND_DRAP) &&
	    !f->bp_known) {
		res->stop = CFI_WALK_RBP_UNKNOWN;
		return -1;
	}
	/* the plugin ABI has no stop of its own for rbx (cfi_walk.h) */
	if ((kind == CFI_KIND_RBX && !f->bx_known) ||
	    (kind == CFI_KIND_REG && (!f->gprs ||
	     (!f->first && !(CFI_CALLER_SAVED >> CFI_ROW_REG(row) & 1))))) {
		res->stop = CFI_WALK_UNSUPPORTED;
		res->kind = (uint8_t)kind;
		return -1;
	}
	if (kind == CFI_KIND_REG)
		rbx = CFI_RBX_LOST;	/* the field holds the register */
	switch (kind) {
	case CFI_KIND_RSP:
		cfa = f->sp + (int64_t)row->cfa * 8;
		break;
	case CFI_KIND_RSP_FAR:
		cfa = f->sp + CFI_RSP_FAR_UNITS(row->cfa) * 8;
		break;
	case CFI_KIND_RBX:
		cfa = f->bx + (int64_t)row->cfa * 8;
		break;
	case CFI_KIND_REG:
		cfa = f->gprs[CFI_ROW_REG(row)] + (int64_t)row->cfa * 8;
		if (!f->first && cfa - f->sp > CFI_FP_STEP_RANGE) {
			res->stop = CFI_WALK_BAD_STEP;	/* not this frame's */
			return -1;
		}
		break;
	case CFI_KIND_RBP:
		if (f->bp == 0) {	/* the outermost frame's mark */
			res->stop = CFI_WALK_END;
			return -1;
		}
		cfa = f->bp + (int64_t)row->cfa * 8;
		break;
	case CFI_KIND_PLT:
		cfa = f->sp + (int64_t)row->cfa * 8 + ((f->ip & 15) >= (uint64_t)row->rbp ? 8 : 0);
		break;
	default:
		/* a CFA read from the frame: the *_DEREF kinds, DRAP, and
		 * CFI_KIND_SIGNAL, whose field reads the same through
		 * CFI_DEREF_OFF() (add 0), as the BPF walk reads it */
		if (kind == CFI_KIND_RBP_DEREF || kind == CFI_KIND_DRAP)
			base = f->bp;
		if (read(arg, base + (int64_t)CFI_DEREF_OFF(row->cfa) * 8, &cfa)) {
			res->stop = CFI_WALK_READ_FAULT;
			return -1;
		}
		cfa += (uint64_t)CFI_DEREF_ADD(row->cfa) * 8;
		break;
	}
	ra_addr = kind == CFI_KIND_SIGNAL ? f->sp + (int64_t)row->cfa * 8 + 8 : cfa - 8;
	if (read(arg, ra_addr, &ra)) {
		res->stop = CFI_WALK_READ_FAULT;
		return -1;
	}
	if (kind == CFI_KIND_SIGNAL)
		bp_addr = f->sp + (int64_t)row->rbp * 8;
	else if (kind == CFI_KIND_DRAP)
		bp_addr = f->bp + (int64_t)row->rbp * 8;
	else if (kind != CFI_KIND_PLT && row->rbp != CFI_RBP_SAME && row->rbp != CFI_RBP_LOST)
		bp_addr = cfa + (int64_t)row->rbp * 8;
	if (bp_addr)
		bp_known = read(arg, bp_addr, &bp) == 0;
	else if (kind != CFI_KIND_PLT && row->rbp == CFI_RBP_LOST)
		bp_known = 0;
	/* rbx as rbp: a failed read makes it unknown */
	if (rbx == CFI_RBX_LOST)
		bx_known = 0;
	else if (rbx != CFI_RBX_SAME)
		bx_known = read(arg, cfa + CFI_RBX_SLOT_OFF(rbx), &bx) == 0;
	if (ra == 0) {
		res->stop = CFI_WALK_END;
		return -1;
	}
	if (kind != CFI_KIND_SIGNAL && cfa <= f->sp) {
		res->stop = CFI_WALK_BAD_STEP;
		return -1;
	}
	f->ip = ra;
	f->sp = cfa;
	f->bp = bp;
	f->bp_known = bp_known;
	f->bx = bx;
	f->bx_known = bx_known;
	f->exact = kind == CFI_KIND_SIGNAL;
	f->first = 0;
	if (kind == CFI_KIND_SIGNAL)	/* the interrupted frame's registers now */
		f->gprs = NULL;
	return 0;
}

int cfi_walk_call_before(uint64_t code)
{
	if (CFI_CALL_REL32(code))
		return 1;
	for (uint64_t k = 2; k <= 7; k++)
		if (cfi_call_indirect_len(code, k))
			return 1;
	return 0;
}

/*
 * Frame @f had no row (code without CFI): take its caller from the stack
 * (bpf/cfi_row.h), if the code before that return address is a call (read
 * through @read too).  The first frame (@leaf), a leaf that saved
 * nothing, has it at [sp]; any other frame by its frame pointer, at
 * [bp + 8] with the caller's rbp at [bp], rbx then lost, if bp is at
 * most CFI_FP_STEP_RANGE above sp.  The caller's row decides: none, and
 * the guess is taken back.
 * 0, or -1 if there is no such caller.
 */
static int guess_caller(struct frame *f, int leaf, cfi_walk_read_fn read, void *arg)
{
	uint64_t ra, code, at = leaf ? f->sp : f->bp + 8, bp = f->bp;

	if (!leaf && (!f->bp_known || f->bp < f->sp || f->bp - f->sp > CFI_FP_STEP_RANGE))
		return -1;
	if (read(arg, at, &ra) || ra < 4096 || (!leaf && read(arg, f->bp, &bp)) ||
	    read(arg, ra - 8, &code) || !cfi_walk_call_before(code))
		return -1;
	f->ip = ra;
	f->sp = at + 8;
	f->bp = bp;
	f->bx_known = leaf && f->bx_known;
	f->exact = 0;
	f->first = 0;
	return 0;
}

int cfi_walk(const struct cfi_walk_process *p, const struct cfi_walk_regs *regs,
	     cfi_walk_read_fn read, void *arg, uint64_t *ips, uint32_t max,
	     struct cfi_walk_result *res)
{
	struct cfi_walk_result r = { .frames = 1, .stop = CFI_WALK_MAX_DEPTH };
	int guessed = 0;	/* the frame written last is a guessed caller:
				 * 1 the leaf's from [sp], 2 one from [bp + 8] */
	struct frame f = { regs ? regs->ip : 0, regs ? regs->sp : 0, regs ? regs->bp : 0,
			   regs ? regs->bx : 0, 1, 1, 1, regs ? regs->gprs : NULL, 1 };

	if (!p || !regs || !read || !ips || !max)
		return -EINVAL;
	ips[0] = regs->ip;
	/* As the BPF walk: a return address is written at once and taken
	 * back when the search for its row finds no mapping holding it. */
	for (;;) {
		const struct cfi_row *row = frame_row(p, &f, &r);

		if (!row) {
			if (guessed) {		/* no return address into CFI */
				r.frames--;
				r.stop = CFI_WALK_NO_ROW;
				break;
			}
			if (r.stop == CFI_WALK_NO_ROW && r.frames < max &&
			    !guess_caller(&f, r.frames == 1, read, arg)) {
				guessed = r.frames == 1 ? 1 : 2;
				ips[r.frames++] = f.ip;
				continue;
			}
			if (r.stop == CFI_WALK_UNMAPPED && r.frames > 1)
				r.frames--;
			break;
		}
		if (guessed == 1)
			r.leaf_guessed = 1;
		else if (guessed == 2)
			r.fp_steps++;
		guessed = 0;
		if (r.frames >= max) {
			r.stop = CFI_WALK_MAX_DEPTH;
			break;
		}
		if (step(row, &f, read, arg, &r))
			break;
		ips[r.frames++] = f.ip;
	}
	if (res)
		*res = r;
	return (int)r.frames;
}
