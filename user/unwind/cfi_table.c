// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi_table.c - the unwind table builder of `--call-graph auto`: lists the
 * FDEs of .eh_frame and .debug_frame (dwarf_next_cfi(), with the FDE's
 * encoded start decoded here), walks each FDE's rows through libdw
 * (dwarf_cfi_addrframe(), dwarf_frame_info()), turns each row's rules
 * (dwarf_frame_cfa(), dwarf_frame_register()) into a struct cfi_row, and
 * assembles the sorted, merged array with its gap markers and statistics.
 * No CFI instruction is interpreted here: libdw does that.
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>

#include "cfi_build.h"
#include "kernel/clock.h"
#include "unwind/cfi_anon.h"

/* DWARF register numbers of x86-64 (System V psABI). */
#define REG_RBX 3
#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16	/* the return address column */
#define REG_GENERAL_NR 16	/* rax .. r15 are DWARF registers 0 to 15 */

/*
 * libdw keeps every FDE a Dwarf_CFI has looked up in a search tree until
 * dwarf_cfi_end(), and looks that tree up (tfind()) for every row.  The
 * builder reads FDEs in address order and each one only once, so the
 * .eh_frame handle is made anew after this many FDEs: the tree stays
 * small, and building python3.11's table takes ~12 ms instead of ~24
 * with one handle, or ~14 with a new one every 32 FDEs
 * (tests/bench/cfi_tables.c; docs/PERFORMANCE.md).  Only where a new
 * handle finds an FDE through .eh_frame_hdr's binary search table
 * (eh_frame_hdr_first()); .debug_frame's handle belongs to its Dwarf and
 * is kept.
 */
#define FDES_PER_CFI_HANDLE 8

/* The glibc signal trampoline's struct ucontext offsets (bytes from sp). */
#define UC_RBP 120
#define UC_RSP 160
#define UC_RIP 168
/* The walks read a signal row's cfa field as a *_DEREF kind's (cfi_row.h). */
_Static_assert(CFI_DEREF_OFF(UC_RSP / 8) == UC_RSP / 8 && CFI_DEREF_ADD(UC_RSP / 8) == 0,
	       "a signal row's cfa reads the same through CFI_DEREF_OFF()");

/* A rule for one register, decoded from libdw's location ops. */
enum rule_kind {
	RULE_UNDEFINED,		/* cannot be recovered */
	RULE_SAME,		/* unchanged */
	RULE_AT_CFA,		/* saved at CFA + off */
	RULE_AT_REG,		/* saved at reg + off (expression rule) */
	RULE_OTHER,		/* anything else */
};

struct rule {
	enum rule_kind kind;
	int reg;
	int64_t off;
};

static const char *const kind_names[CFI_KIND_NR] = {
	[CFI_KIND_RSP] = "rsp",
	[CFI_KIND_RBP] = "rbp",
	[CFI_KIND_PLT] = "plt",
	[CFI_KIND_SIGNAL] = "signal",
	[CFI_KIND_RSP_DEREF] = "rsp-deref",
	[CFI_KIND_RBP_DEREF] = "rbp-deref",
	[CFI_KIND_DRAP] = "drap",
	[CFI_KIND_RSP_FAR] = "rsp-far",
	[CFI_KIND_RBX] = "rbx",
	[CFI_KIND_REG] = "other-register",
	[CFI_KIND_STOP_NO_ROW] = "no-row",
	[CFI_KIND_STOP_OUTERMOST] = "outermost",
	[CFI_KIND_STOP_EXPRESSION] = "expression",
	[CFI_KIND_STOP_REGISTER] = "register",
	[CFI_KIND_STOP_RANGE] = "range",
	[CFI_KIND_STOP_RA] = "ra",
};

const char *cfi_kind_name(unsigned int kind)
{
	return kind < CFI_KIND_NR ? kind_names[kind] : "?";
}


/* ---- the rows ----------------------------------------------------------- */

static bool same_rule(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->kind == b->kind && a->rbp == b->rbp && a->cfa == b->cfa;
}

/*
 * Append the row @r starting at @pc (>= the last row's pc).  A row at the
 * last row's pc replaces it (that is a gap marker the next FDE starts
 * at); a row with the same rule as the one before it is dropped, but for
 * a lazy table's marker of an FDE not built (each marks its own FDE).
 */
static int push_row(struct builder *b, uint32_t pc, struct cfi_row r)
{
	r.pc = pc;
	if (b->nr && b->rows[b->nr - 1].pc >= pc)
		b->nr--;
	if (b->nr && same_rule(&b->rows[b->nr - 1], &r) && !CFI_ROW_UNBUILT(&r)) {
		b->st->rows_merged++;
		return 0;
	}
	if (cfi_grow((void **)&b->rows, &b->cap, b->nr + 1, sizeof(*b->rows)))
		return -ENOMEM;
	b->rows[b->nr++] = r;
	return 0;
}

static struct cfi_row stop_row(enum cfi_kind kind)
{
	return (struct cfi_row){ .kind = (uint8_t)kind };
}

/* A lazy table's marker of an FDE of section @src (cfi_row.h). */
static struct cfi_row unbuilt_row(uint8_t src)
{
	return (struct cfi_row){ .kind = CFI_KIND_STOP_NO_ROW, .rbp = (int8_t)src,
				 .cfa = CFI_UNBUILT_FDE };
}

/* ---- rules: libdw's ops to rows ------------------------------------------- */

/* Register number and offset of a DW_OP_bregN / DW_OP_bregx op. */
static bool op_breg(const Dwarf_Op *op, int *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx) {
		*reg = (int)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

/*
 * Decode the rule of register @regno.  Offsets: libdw gives "saved at
 * CFA + N" as DW_OP_call_frame_cfa, DW_OP_plus_uconst N (N two's
 * complement), and expression rules with DW_OP_call_frame_cfa pushed
 * first.  Value rules (DW_OP_stack_value last) are RULE_OTHER.
 */
static struct rule reg_rule(Dwarf_Frame *fr, int regno)
{
	Dwarf_Op mem[3], *ops;
	struct rule r = { RULE_OTHER, 0, 0 };
	size_t n;

	if (dwarf_frame_register(fr, regno, mem, &ops, &n) != 0)
		return r;
	if (n == 0) {
		r.kind = ops ? RULE_UNDEFINED : RULE_SAME;
		return r;
	}
	if (ops[n - 1].atom == DW_OP_stack_value || ops[0].atom != DW_OP_call_frame_cfa)
		return r;
	if (n == 1) {
		r.kind = RULE_AT_CFA;
	} else if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		r.kind = RULE_AT_CFA;
		r.off = (int64_t)ops[1].number;
	} else if (n == 2 && op_breg(&ops[1], &r.reg, &r.off)) {
		r.kind = RULE_AT_REG;
	}
	return r;
}

/* Whether the rsp column is the default "caller's rsp = CFA". */
static bool rsp_is_cfa(Dwarf_Frame *fr)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(fr, REG_RSP, mem, &ops, &n) != 0)
		return false;
	return n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_stack_value;
}

/* Store @bytes / 8 in a field of @bits signed bits; false if it does not fit. */
static bool units8(int64_t bytes, int bits, int64_t *out)
{
	int64_t lim = (int64_t)1 << (bits - 1);

	if (bytes % 8)
		return false;
	*out = bytes / 8;
	return *out >= -lim && *out < lim;
}

/*
 * The linker's PLT CFA: DW_OP_breg7 N; DW_OP_breg16 0; DW_OP_lit15;
 * DW_OP_and; DW_OP_litT; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus,
 * i.e. rsp + N + ((rip & 15) >= T) * 8.  Sets N and T.
 */
static bool is_plt_cfa(const Dwarf_Op *ops, size_t n, int64_t *base, int *thr)
{
	int reg;
	int64_t off;

	if (n != 9 || !op_breg(&ops[0], &reg, base) || reg != REG_RSP)
		return false;
	if (!op_breg(&ops[1], &reg, &off) || reg != REG_RIP || off != 0)
		return false;
	if (ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
	    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15 || ops[5].atom != DW_OP_ge ||
	    ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return false;
	*thr = ops[4].atom - DW_OP_lit0;
	return true;
}

/*
 * A CFA saved in the frame: DW_OP_breg7/6 N; DW_OP_deref, then optionally
 * DW_OP_plus_uconst A (cfi_row.h, CFI_KIND_RSP_DEREF).  Sets the kind and
 * the packed cfa field; a stop kind when N or A is out of the field's
 * range.  False for any other expression.
 */
static bool deref_cfa(const Dwarf_Op *ops, size_t n, struct cfi_row *r)
{
	int64_t off, u, add = 0;
	int reg;

	if ((n != 2 && n != 3) || !op_breg(&ops[0], &reg, &off) || ops[1].atom != DW_OP_deref)
		return false;
	if (n == 3 && ops[2].atom != DW_OP_plus_uconst)
		return false;
	if (reg != REG_RSP && reg != REG_RBP) {
		r->kind = CFI_KIND_STOP_REGISTER;
		return true;
	}
	if (n == 3 && (ops[2].number % 8 || ops[2].number > 8 * CFI_DEREF_ADD_MAX)) {
		r->kind = CFI_KIND_STOP_RANGE;
		return true;
	}
	if (n == 3)
		add = (int64_t)ops[2].number / 8;
	if (!units8(off, CFI_DEREF_OFF_BITS, &u)) {
		r->kind = CFI_KIND_STOP_RANGE;
		return true;
	}
	r->kind = reg == REG_RSP ? CFI_KIND_RSP_DEREF : CFI_KIND_RBP_DEREF;
	r->cfa = CFI_DEREF_CFA(u, add);
	return true;
}

/*
 * The rbp field for a CFA-relative rule, or CFI_RBP_LOST (counted in
 * *@lost when CFI did know the value).
 */
static int8_t rbp_field(struct rule r, bool *lost)
{
	int64_t u;

	switch (r.kind) {
	case RULE_SAME:
		return CFI_RBP_SAME;
	case RULE_UNDEFINED:
		return CFI_RBP_LOST;
	case RULE_AT_CFA:
		if (units8(r.off, 8, &u) && u != CFI_RBP_SAME && u != CFI_RBP_LOST)
			return (int8_t)u;
		break;
	default:
		break;
	}
	*lost = true;
	return CFI_RBP_LOST;
}

/*
 * The rbx slot of a row (CFI_ROW_RBX(), cfi_row.h) for rbx's rule @r:
 * same, saved at CFA - 16 .. CFA - 120, or lost.  "Undefined" is same:
 * rbx is callee-saved, so CFI that does not mention it means "same", but
 * libdw's x86-64 ABI defaults name register 0 (rax) where they mean rbx
 * (elfutils backends/x86_64_cfi.c), and it reports an unmentioned rbx as
 * undefined, which an explicit DW_CFA_undefined is too (never met
 * outside outermost frames, whose rows are stops).
 */
static unsigned int rbx_slot(struct rule r)
{
	if (r.kind == RULE_SAME || r.kind == RULE_UNDEFINED)
		return CFI_RBX_SAME;
	if (r.kind == RULE_AT_CFA && r.off % 8 == 0 && r.off <= CFI_RBX_SLOT_OFF(1) &&
	    r.off >= CFI_RBX_SLOT_OFF(CFI_RBX_LOST - 1))
		return (unsigned int)(-r.off / 8 - 1);
	return CFI_RBX_LOST;
}

/*
 * A CFA from rbp's frame (@r: CFI_KIND_RBP_DEREF, its cfa field set):
 * gcc's DRAP functions save the caller's rbp at rbp + 0, an expression
 * rule, which makes the row CFI_KIND_DRAP (the rbp field bp-relative);
 * any other rule keeps CFI_KIND_RBP_DEREF.
 */
static struct cfi_row drap_row(Dwarf_Frame *fr, struct cfi_row r, bool *lost)
{
	struct rule bp = reg_rule(fr, REG_RBP);
	int64_t u;

	if (bp.kind == RULE_AT_REG && bp.reg == REG_RBP && units8(bp.off, 8, &u) &&
	    u != CFI_RBP_LOST) {
		r.kind = CFI_KIND_DRAP;
		r.rbp = (int8_t)u;
		return r;
	}
	r.rbp = rbp_field(bp, lost);
	return r;
}

/*
 * glibc's __restore_rt: CFA = *(rsp + 160), rip saved at rsp + 168, rbp
 * at rsp + 120, rsp at rsp + 160 (or the default, = CFA).
 */
static struct cfi_row signal_row(Dwarf_Frame *fr, int64_t cfa_off)
{
	struct rule ra = reg_rule(fr, REG_RIP), bp = reg_rule(fr, REG_RBP);
	struct rule sp = reg_rule(fr, REG_RSP);

	if (cfa_off != UC_RSP || ra.kind != RULE_AT_REG || ra.reg != REG_RSP ||
	    ra.off != UC_RIP || bp.kind != RULE_AT_REG || bp.reg != REG_RSP ||
	    bp.off != UC_RBP)
		return stop_row(CFI_KIND_STOP_EXPRESSION);
	if (!(sp.kind == RULE_AT_REG && sp.reg == REG_RSP && sp.off == UC_RSP) && !rsp_is_cfa(fr))
		return stop_row(CFI_KIND_STOP_EXPRESSION);
	return (struct cfi_row){ .kind = CFI_KIND_SIGNAL, .cfa = UC_RSP / 8, .rbp = UC_RBP / 8 };
}

/* The row for the frame state @fr (@signal: its CIE has 'S'), without
 * its rbx slot; a CFI_KIND_REG row's register in *@cfa_reg. */
static struct cfi_row row_rules(Dwarf_Frame *fr, bool signal, bool *lost, int *cfa_reg)
{
	struct rule ra = reg_rule(fr, REG_RIP);
	struct cfi_row r = { 0 };
	Dwarf_Op *ops;
	size_t n;
	int64_t off = 0, u;	/* off: from op_breg() or is_plt_cfa(); 0 for gcc's -Wmaybe-uninitialized */
	int reg, thr = 0;

	if (ra.kind == RULE_UNDEFINED)
		return stop_row(CFI_KIND_STOP_OUTERMOST);
	if (dwarf_frame_cfa(fr, &ops, &n) != 0 || n == 0)
		return stop_row(CFI_KIND_STOP_EXPRESSION);
	if (signal) {
		if (n == 2 && op_breg(&ops[0], &reg, &off) && reg == REG_RSP &&
		    ops[1].atom == DW_OP_deref)
			return signal_row(fr, off);
		return stop_row(CFI_KIND_STOP_EXPRESSION);
	}
	if (n == 1 && op_breg(&ops[0], &reg, &off)) {
		if (reg == REG_RSP)
			r.kind = CFI_KIND_RSP;
		else if (reg == REG_RBP)
			r.kind = CFI_KIND_RBP;
		else if (reg == REG_RBX)
			r.kind = CFI_KIND_RBX;
		else if (reg >= 0 && reg < REG_GENERAL_NR)	/* the sample's (cfi_row.h) */
			r.kind = CFI_KIND_REG;
		else
			return stop_row(CFI_KIND_STOP_REGISTER);
		*cfa_reg = reg;
	} else if (is_plt_cfa(ops, n, &off, &thr)) {
		r.kind = CFI_KIND_PLT;
	} else if (deref_cfa(ops, n, &r)) {
		if (r.kind >= CFI_KIND_FIRST_STOP)
			return stop_row(r.kind);
	} else {
		return stop_row(CFI_KIND_STOP_EXPRESSION);
	}
	if (ra.kind != RULE_AT_CFA || ra.off != -8)
		return stop_row(CFI_KIND_STOP_RA);
	if (!rsp_is_cfa(fr))
		return stop_row(CFI_KIND_STOP_EXPRESSION);
	if (r.kind == CFI_KIND_RBP_DEREF)
		return drap_row(fr, r, lost);
	if (r.kind == CFI_KIND_RSP && off % 8 == 0 && off / 8 >= CFI_RSP_FAR_BASE &&
	    off / 8 - CFI_RSP_FAR_BASE <= UINT16_MAX) {
		r.kind = CFI_KIND_RSP_FAR;	/* a frame over 256 KiB */
		r.cfa = (int16_t)(uint16_t)(off / 8 - CFI_RSP_FAR_BASE);
	} else if (r.kind != CFI_KIND_RSP_DEREF) {
		if (!units8(off, 16, &u))
			return stop_row(CFI_KIND_STOP_RANGE);
		r.cfa = (int16_t)u;
	}
	if (r.kind == CFI_KIND_PLT) {
		if (reg_rule(fr, REG_RBP).kind != RULE_SAME)
			return stop_row(CFI_KIND_STOP_EXPRESSION);
		r.rbp = (int8_t)thr;
		return r;
	}
	r.rbp = rbp_field(reg_rule(fr, REG_RBP), lost);
	return r;
}

/* The row for the frame state @fr (@signal: its CIE has 'S'): its rules,
 * and where the caller's rbx is (a signal frame's: lost). */
static struct cfi_row make_row(Dwarf_Frame *fr, bool signal, bool *lost)
{
	int cfa_reg = 0;
	struct cfi_row r = row_rules(fr, signal, lost, &cfa_reg);
	unsigned int rbx;

	if (r.kind >= CFI_KIND_FIRST_STOP)
		return r;
	if (r.kind == CFI_KIND_REG) {	/* its register where rbx's slot goes */
		r.kind = CFI_ROW_KIND_REG((unsigned int)cfa_reg);
		return r;
	}
	rbx = r.kind == CFI_KIND_SIGNAL ? CFI_RBX_LOST : rbx_slot(reg_rule(fr, REG_RBX));
	r.kind = CFI_ROW_KIND_RBX(r.kind, rbx);
	return r;
}

int cfi_fde_rows(struct builder *b, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi)
{
	uint64_t pc = lo;

	while (pc < hi) {
		Dwarf_Frame *fr;
		Dwarf_Addr start, end;
		struct cfi_row r;
		bool signal = false, lost = false;

		if (dwarf_cfi_addrframe(cfi, pc, &fr) != 0)
			return -EBADMSG;
		if (dwarf_frame_info(fr, &start, &end, &signal) < 0 || start > pc || end <= pc) {
			free(fr);
			return -EBADMSG;
		}
		r = make_row(fr, signal, &lost);
		free(fr);
		if (lost)
			b->st->rbp_lost++;
		if (push_row(b, (uint32_t)pc, r))
			return -ENOMEM;
		pc = end < hi ? end : hi;
	}
	return 0;
}

/* ---- assembling the table -------------------------------------------------- */

/*
 * @s's handle for one more FDE: .eh_frame's is made anew every
 * FDES_PER_CFI_HANDLE FDEs (counted in b->st).  NULL when libdw could not
 * make it.
 */
static Dwarf_CFI *cfi_for_fde(struct builder *b, struct section *s)
{
	if (s->elf && s->cfi && ++s->fdes_read > FDES_PER_CFI_HANDLE) {
		dwarf_cfi_end(s->cfi);
		s->cfi = dwarf_getcfi_elf(s->elf);
		s->fdes_read = 1;
		if (s->cfi)
			b->st->eh_frame_handles++;
	}
	return s->cfi;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (int)x->src - (int)y->src;	/* .eh_frame first */
}

/* Whether b->fdes is in fde_cmp() order already, so qsort() (a merge
 * sort: n log n comparisons; ~37 % of python3.11's lazy build) can be
 * skipped: always where they were listed in .eh_frame_hdr's order
 * (cfi_list_fdes_indexed()); in the section's order, rarely (hot and cold
 * parts of functions make runs: python3.11 3,631, libcrypto 5). */
static bool fdes_sorted(const struct builder *b)
{
	for (size_t i = 1; i < b->nr_fdes; i++)
		if (fde_cmp(&b->fdes[i - 1], &b->fdes[i]) > 0)
			return false;
	return true;
}

/*
 * Rows of every FDE (a lazy build: a marker), and of every frame-pointer
 * range, in address order.  Where FDEs overlap the earlier one wins (at
 * equal starts .eh_frame's, as libdwfl prefers it); each FDE ends with a
 * gap marker that the next FDE replaces when it starts right there.
 */
static int assemble(struct builder *b, struct section *secs)
{
	uint64_t cursor = 0;
	Dwarf_CFI *cfi;
	size_t i;
	int err;

	if (!fdes_sorted(b))
		qsort(b->fdes, b->nr_fdes, sizeof(*b->fdes), fde_cmp);
	for (i = 0; i < b->nr_fdes; i++) {
		const struct fde_range *f = &b->fdes[i];
		uint64_t lo = f->lo > cursor ? f->lo : cursor;

		if (f->src == SRC_FP && lo < f->hi) {
			if (push_row(b, (uint32_t)lo, cfi_anon_fp_row()) ||
			    push_row(b, (uint32_t)f->hi, stop_row(CFI_KIND_STOP_NO_ROW)))
				return -ENOMEM;
			cursor = f->hi;
			continue;
		}
		if (b->lazy && lo < f->hi && secs[f->src].cfi) {
			if (push_row(b, (uint32_t)lo, unbuilt_row(f->src)) ||
			    push_row(b, (uint32_t)f->hi, stop_row(CFI_KIND_STOP_NO_ROW)))
				return -ENOMEM;
			b->st->fdes_unbuilt++;
			cursor = f->hi;
			continue;
		}
		cfi = lo < f->hi && f->src != SRC_FP ? cfi_for_fde(b, &secs[f->src]) : NULL;
		if (!cfi) {
			b->st->fdes_skipped++;
			continue;
		}
		err = cfi_fde_rows(b, cfi, lo, f->hi);
		if (err == -ENOMEM)
			return err;
		if (err)
			b->st->fdes_skipped++;
		else
			b->st->fdes++;
		if (push_row(b, (uint32_t)f->hi, stop_row(CFI_KIND_STOP_NO_ROW)))
			return -ENOMEM;
		cursor = f->hi;
	}
	return 0;
}

/*
 * Whether .eh_frame_hdr, with contents, comes before .eh_frame among
 * @elf's sections.  Only then does dwarf_getcfi_elf() give a handle that
 * finds an FDE through the header's binary search table (elfutils'
 * getcfi_shdr() meets the header first or not at all); otherwise each new
 * handle reads the entries from the start of .eh_frame up to the FDE
 * looked for, so making one every FDES_PER_CFI_HANDLE FDEs would cost the
 * square of the section (a minute for Debian's libLLVM, linked by lld,
 * which puts the header after the frames).
 */
static bool eh_frame_hdr_first(Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *hdr = elf_section_by_name(elf, ".eh_frame_hdr", &sh);
	Elf_Scn *eh = elf_section_by_name(elf, ".eh_frame", &sh);

	return hdr && eh && elf_ndxscn(hdr) < elf_ndxscn(eh);
}

/* Fill @s from section @name of @elf; false if there is none. */
static bool load_section(Elf *elf, const char *name, bool eh, struct section *s)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(elf, name, &sh);

	if (!scn)
		return false;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return false;
	s->data = elf_getdata(scn, NULL);
	if (!s->data || !s->data->d_buf || !s->data->d_size)
		return false;
	s->vaddr = sh.sh_addr;
	s->eh = eh;
	return true;
}

/* Header checks: 0, -ENOEXEC or -ENOTSUP. */
static int check_elf(Elf *elf, GElf_Ehdr *eh)
{
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, eh))
		return -ENOEXEC;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64)
		return -ENOTSUP;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return -ENOTSUP;
	return 0;
}

/* Segments and build-id of @elf into @t. */
static int describe(Elf *elf, struct cfi_table *t)
{
	const void *id;
	ssize_t n;
	int err = elf_segments_read(elf, &t->segments);

	if (err)
		return err == -EINVAL ? -ENOEXEC : err;
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0) {
		t->build_id_size = (uint8_t)(n < (ssize_t)sizeof(t->build_id) ? n :
					     (ssize_t)sizeof(t->build_id));
		memcpy(t->build_id, id, t->build_id_size);
	}
	return 0;
}

/* Final rows and statistics into @t (takes b->rows). */
static void finish(struct builder *b, struct cfi_table *t)
{
	struct cfi_row *shrunk;
	size_t i;

	shrunk = b->nr ? realloc(b->rows, b->nr * sizeof(*b->rows)) : NULL;
	t->rows = shrunk ? shrunk : b->rows;
	b->rows = NULL;
	t->nr = (uint32_t)b->nr;
	for (i = 0; i < b->nr; i++)
		t->stats.kinds[CFI_ROW_KIND(&t->rows[i])]++;
	t->stats.rows = t->nr;
	t->stats.bytes = (uint64_t)t->nr * sizeof(struct cfi_row);
}

/* Whether @t has a row other than gap markers (markers of FDEs not built
 * count as rows). */
static bool has_rows(const struct cfi_table *t)
{
	return t->stats.kinds[CFI_KIND_STOP_NO_ROW] - t->stats.fdes_unbuilt < t->nr;
}

int cfi_table_build_elf(Elf *elf, Elf *debug, struct cfi_table **out)
{
	return cfi_build_elf(elf, debug, false, out);
}

int cfi_build_elf(Elf *elf, Elf *debug, bool lazy, struct cfi_table **out)
{
	struct section secs[2] = { { 0 }, { 0 } };
	struct builder b = { 0 };
	struct cfi_table *t;
	uint64_t t0 = monotonic_ns();
	Elf *dbg_elf = NULL;
	Dwarf *dw = NULL;
	GElf_Ehdr eh, deh;
	int err;

	if (!out)
		return -EINVAL;
	err = check_elf(elf, &eh);
	if (err)
		return err;
	if (debug && check_elf(debug, &deh))
		debug = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	b.st = &t->stats;
	err = describe(elf, t);
	if (err)
		goto out;
	if (load_section(elf, ".eh_frame", true, &secs[SRC_EH])) {
		secs[SRC_EH].cfi = dwarf_getcfi_elf(elf);
		secs[SRC_EH].elf = eh_frame_hdr_first(elf) ? elf : NULL;
		t->stats.eh_frame_handles = secs[SRC_EH].cfi ? 1 : 0;
		t->stats.eh_frame_bytes = secs[SRC_EH].data->d_size;
	}
	if (debug && load_section(debug, ".debug_frame", false, &secs[SRC_DEBUG]))
		dbg_elf = debug;
	else if (load_section(elf, ".debug_frame", false, &secs[SRC_DEBUG]))
		dbg_elf = elf;
	if (dbg_elf) {
		dw = dwarf_begin_elf(dbg_elf, DWARF_C_READ, NULL);
		secs[SRC_DEBUG].cfi = dw ? dwarf_getcfi(dw) : NULL;
		t->stats.debug_frame_bytes = secs[SRC_DEBUG].data->d_size;
	}
	for (int i = 0; i < 2; i++) {
		if (!secs[i].cfi)
			continue;
		err = cfi_list_fdes_indexed(&b, &secs[i], elf, eh.e_ident);
		if (err)
			goto out;
	}
	/* also without any CFI: a stripped Go program's code is all fp */
	if ((err = cfi_fp_ranges(&b, elf, debug)))
		goto out;
	b.lazy = lazy && b.nr_fdes >= CFI_LAZY_MIN_FDES;
	err = b.nr_fdes ? assemble(&b, secs) : (t->stats.bad_entries ? -EBADMSG : -ENODATA);
	if (err)
		goto out;
	finish(&b, t);
	if (!has_rows(t)) {
		err = -EBADMSG;
		goto out;
	}
	t->stats.build_ns = monotonic_ns() - t0;
	*out = t;
	t = NULL;
out:
	if (secs[SRC_EH].cfi)
		dwarf_cfi_end(secs[SRC_EH].cfi);
	dwarf_end(dw);
	free(b.rows);
	free(b.fdes);
	cfi_table_free(t);
	return err;
}

/* An Elf for the file @fd, or NULL (with *@err set). */
static Elf *open_elf(int fd, int *err)
{
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		*err = -ENOEXEC;
	return elf;
}

int cfi_table_build(const char *path, const char *debug_path, struct cfi_table **out)
{
	uint64_t t0 = monotonic_ns();
	Elf *elf = NULL, *debug = NULL;
	int fd, dfd = -1, err = 0;

	if (!path || !out)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = open_elf(fd, &err);
	if (elf && debug_path) {
		dfd = open(debug_path, O_RDONLY | O_CLOEXEC);
		if (dfd >= 0)
			debug = open_elf(dfd, &(int){ 0 });
	}
	if (elf)
		err = cfi_table_build_elf(elf, debug, out);
	if (!err)
		(*out)->stats.build_ns = monotonic_ns() - t0;
	elf_end(debug);
	elf_end(elf);
	if (dfd >= 0)
		close(dfd);
	close(fd);
	return err;
}

int cfi_table_build_mem(const void *image, size_t size, struct cfi_table **out)
{
	Elf *elf;
	int err;

	if (!image || !size || !out)
		return -EINVAL;
	elf_version(EV_CURRENT);
	/* libelf only reads the image (decompression allocates) */
	elf = elf_memory((char *)(uintptr_t)image, size);
	if (!elf)
		return -ENOEXEC;
	err = cfi_table_build_elf(elf, NULL, out);
	elf_end(elf);
	return err;
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	if (t->mapping)
		munmap(t->mapping, t->mapping_size);
	else
		free(t->rows);
	cfi_lazy_close(t->lazy);
	elf_segments_free(&t->segments);
	free(t);
}
