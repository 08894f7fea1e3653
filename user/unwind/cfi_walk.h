/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi_walk.h - the reference stack walk of `--call-graph auto` (issue 15)
 * in plain C: from a sample's user registers, the process's executable
 * mappings (struct cfi_mapping, bpf/cfi_row.h) and the unwind tables of
 * their files (user/unwind/cfi_table.h), it produces the callchain exactly
 * as the BPF program is to do it, one binary search per frame.  It is the
 * specification of that BPF code and what the unit tests check against
 * libdw's own unwinder (tests/unit/unwind/test_cfi_table.c).
 *
 * The walk, frame by frame (see bpf/cfi_row.h for one step's rules):
 *  1. pc = ip for the first frame and for a frame reached through a
 *     signal frame, else ip - 1 (ip is a return address);
 *  2. the mapping holding pc (binary search by start); none: stop
 *     CFI_WALK_UNMAPPED; no table: CFI_WALK_NO_TABLE;
 *  3. the row for pc - bias (binary search, CFI_SEARCH_STEPS at most);
 *     a marker of an FDE not built: CFI_WALK_NO_TABLE (res->unbuilt_pc);
 *     none or a gap marker: CFI_WALK_NO_ROW; CFI_KIND_STOP_OUTERMOST:
 *     CFI_WALK_END; another stop row: CFI_WALK_UNSUPPORTED;
 *  3a. the first frame without a row (assembly without CFI): if *sp
 *     follows a call instruction (the 8 bytes before it, read through
 *     @read too: a call rel32, or one through a register or memory of
 *     the exact length), it is written as its caller (sp + 8, rbp
 *     unchanged) and the walk goes on if the caller's row is found in
 *     step 3; else that frame is taken back and the walk stops,
 *     CFI_WALK_NO_ROW;
 *  3b. any other frame without a row (code built with frame pointers and
 *     no CFI: crtstuff's __do_global_dtors_aux): with rbp known and not
 *     below sp and at most CFI_FP_STEP_RANGE above it, its caller is
 *     *(bp + 8) (sp = bp + 16, rbp = *bp, rbx lost) under the same two
 *     conditions as 3a;
 *  4. CFA by the row's kind (CFI_KIND_RBP, CFI_KIND_RBP_DEREF or
 *     CFI_KIND_DRAP with rbp unknown: CFI_WALK_RBP_UNKNOWN; CFI_KIND_RBX
 *     with rbx unknown: CFI_WALK_UNSUPPORTED, kind CFI_KIND_RBX, as the
 *     plugin ABI's stops have no rbx of their own; the *_DEREF
 *     kinds and CFI_KIND_DRAP read it from the frame; CFI_KIND_RBP with
 *     rbp 0, the ABI's mark of a thread's first frame, where the
 *     frame-pointer rule of JIT code, V8's builtins and Go code ends:
 *     CFI_WALK_END; CFI_KIND_REG without regs->gprs, past a signal frame,
 *     or from a callee-saved register in any frame but the first:
 *     CFI_WALK_UNSUPPORTED, kind CFI_KIND_REG; from a caller-saved one
 *     there more than CFI_FP_STEP_RANGE above sp: CFI_WALK_BAD_STEP),
 *     then the return address; a failed read of either:
 *     CFI_WALK_READ_FAULT; the caller's rbp and rbx (a failed read makes
 *     one unknown, it does not stop the walk, as in libdwfl);
 *  5. @max frames written: CFI_WALK_MAX_DEPTH (the last one has passed
 *     steps 1-3, so it is in a mapping);
 *  6. return address 0: CFI_WALK_END; caller sp <= sp (not after a
 *     signal frame): CFI_WALK_BAD_STEP; else it is written as the next
 *     frame, and taken back when its step 2 finds no mapping (so a
 *     return address in no mapping stops the walk, CFI_WALK_UNMAPPED,
 *     unwritten; one mapping search per frame).
 * Frames are written leaf first: ips[0] = regs->ip, then each return
 * address as is (the symbolizer subtracts 1).  Step 6's checks are those
 * of user/unwind/unwind.c around libdwfl, so both give the same frames.
 */
#ifndef BPFPROF_UNWIND_CFI_WALK_H
#define BPFPROF_UNWIND_CFI_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_table.h"

/* Why a walk ended: enum cfi_walk_stop, bpf/cfi_row.h (shared with BPF). */

/* x86-64 user registers at the sample. */
struct cfi_walk_regs {
	uint64_t ip;		/* rip */
	uint64_t sp;		/* rsp */
	uint64_t bp;		/* rbp */
	uint64_t bx;		/* rbx (CFI_KIND_RBX rows' base) */
	const uint64_t *gprs;	/* the 16 general registers by DWARF number
				 * (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp,
				 * r8 .. r15), for CFI_KIND_REG rows; NULL:
				 * not known, such a row stops the walk.
				 * Borrowed for the call. */
};

/*
 * Read the 8 bytes at user address @addr into *@val; 0, or a negative
 * errno (the walk only tells failure from success).
 */
typedef int (*cfi_walk_read_fn)(void *arg, uint64_t addr, uint64_t *val);

/* What a process looks like to the walk. */
struct cfi_walk_process {
	const struct cfi_mapping *maps;	/* nr_maps executable mappings,
					 * sorted by start, not overlapping */
	uint32_t nr_maps;
	const struct cfi_table *const *tables;	/* by cfi_mapping.table;
						 * NULL entries: no table */
	uint32_t nr_tables;
};

/* How a walk ended. */
struct cfi_walk_result {
	uint32_t frames;	/* frames written (>= 1) */
	uint8_t stop;		/* enum cfi_walk_stop */
	uint8_t kind;		/* CFI_WALK_UNSUPPORTED: the stop row's kind */
	uint8_t leaf_guessed;	/* 1: the first frame had no row, and its
				 * caller came from [sp] (step 3a) */
	uint32_t fp_steps;	/* other frames without a row whose caller
				 * came from [bp + 8] (step 3b) */
	uint64_t unbuilt_pc;	/* stop CFI_WALK_NO_TABLE at a lazy table's
				 * FDE not built yet (CFI_UNBUILT_FDE): the
				 * pc looked up there; else 0 */
};

/*
 * Walk the stack of @regs in process @p, reading user memory through
 * @read(@arg, ...), writing at most @max pcs into @ips (see above).
 * Returns the number of frames (>= 1) and fills *@res (may be NULL).
 * Errors: -EINVAL (NULL @p, @regs, @read or @ips, @max 0).
 */
int cfi_walk(const struct cfi_walk_process *p, const struct cfi_walk_regs *regs,
	     cfi_walk_read_fn read, void *arg, uint64_t *ips, uint32_t max,
	     struct cfi_walk_result *res);

/*
 * A copy of user stack: @size bytes that were at addresses [@sp, @sp +
 * @size).  cfi_walk_read_stack() is a cfi_walk_read_fn over it (@arg a
 * struct cfi_walk_stack *): -EFAULT outside the copy.
 */
struct cfi_walk_stack {
	uint64_t sp;
	const uint8_t *data;
	size_t size;
};

int cfi_walk_read_stack(void *arg, uint64_t addr, uint64_t *val);

/*
 * Whether @code, the 8 bytes before a return address (little endian, as
 * read from memory), end with a call instruction: a call rel32 (E8), or
 * one through a register or memory (FF /2) exactly as long as its ModRM,
 * SIB and displacement make it (2, 3, 4, 6 or 7 bytes).  Not where it
 * went: a leaf a C function entered by a tail call returns after the call
 * to that function.  1 or 0.  Step 3a; the BPF walk's cfi_call_before()
 * is the same test.
 */
int cfi_walk_call_before(uint64_t code);

/* The mapping of @p holding @addr (binary search), NULL if none. */
const struct cfi_mapping *cfi_walk_find_mapping(const struct cfi_walk_process *p,
						uint64_t addr);

/* A short name of @stop ("complete", "max-depth", ...; those of
 * bpfprof_unwind_stop_name(), plugin.h), "?" if out of range. */
const char *cfi_walk_stop_name(unsigned int stop);

#endif /* BPFPROF_UNWIND_CFI_WALK_H */
