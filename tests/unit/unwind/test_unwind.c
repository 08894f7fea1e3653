// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_unwind.c - unit tests of user/unwind/unwind.c on real stacks of this
 * process: functions built without frame pointers capture their own
 * registers and 8 KiB of stack the way the BPF program does, and the
 * unwound pcs must symbolize to the real call path (own functions, and
 * through libc's qsort back into the caller); a CFA read from the red
 * zone below sp; a leaf without CFI; short copies, garbage registers, files shared between
 * processes, and a throughput measurement.  Also the walk of auto's copies
 * with the unwind tables loaded for the BPF program (cfi_loader_walk()),
 * which must give the frames libdwfl gives.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <gelf.h>
#include <sys/auxv.h>

#include "elf_image.h"
#include "symbols/symbolize.h"
#include "targets/procmaps.h"
#include "unwind/unwind.h"
#include "unwind/cfi_loader.h"
#include "unwind/cfi_walk.h"
#include <bpf/bpf.h>
#include "bpfprof.h"			/* BPFPROF_RED_ZONE */

#define STACK_COPY 8192
#define MAX_FRAMES 128

/* Built the way distributions build: no frame pointers, no tail calls. */
#define NOFP __attribute__((noipa, optimize("omit-frame-pointer", "no-optimize-sibling-calls")))

/* One captured sample, as the BPF program would deliver it. */
struct capture {
	struct unwind_regs regs;
	uint8_t stack[STACK_COPY];
	size_t size;
};

static uint64_t stack_end;		/* end of this thread's [stack] mapping */
static struct capture cap_abc, cap_qsort;
static volatile int sink;

/*
 * Copy up to STACK_COPY bytes from @sp, bounded by the stack mapping.
 * Byte by byte and not instrumented: under AddressSanitizer the other
 * frames' redzones are read too, like the BPF program reads them.
 */
NOFP __attribute__((no_sanitize_address)) static void copy_stack(struct capture *c, uint64_t sp)
{
	const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)sp;
	size_t n = STACK_COPY, i;

	if (stack_end > sp && stack_end - sp < n)
		n = (size_t)(stack_end - sp);
	for (i = 0; i < n; i++)
		c->stack[i] = src[i];
	c->size = n;
}

/*
 * Capture rip (a label right here), rsp and rbp at the same instruction,
 * then the stack above rsp.  Must be expanded inside the function whose
 * frame is the leaf.
 */
#define CAPTURE(c)                                                              \
	do {                                                                    \
		uint64_t ip_, sp_, bp_;                                         \
		__asm__ volatile("lea 0f(%%rip), %0\n\t"                        \
				 "0:\n\t"                                       \
				 "mov %%rsp, %1\n\t"                            \
				 "mov %%rbp, %2"                                \
				 : "=&r"(ip_), "=&r"(sp_), "=&r"(bp_) :: "memory"); \
		(c)->regs.ip = ip_;                                             \
		(c)->regs.sp = sp_;                                             \
		(c)->regs.bp = bp_;                                             \
		copy_stack((c), sp_);                                           \
	} while (0)

NOFP int unwtest_c(int x)
{
	volatile int local[8];

	local[x & 7] = x;
	CAPTURE(&cap_abc);
	return local[x & 7] + 1;
}

NOFP int unwtest_b(int x)
{
	volatile int local[16];

	local[x & 15] = unwtest_c(x + 1);
	return local[x & 15] + 1;
}

NOFP int unwtest_a(int x)
{
	int r = unwtest_b(x + 1);

	sink = r;
	return r + 1;
}

static int qsort_captured;

NOFP int unwtest_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!qsort_captured) {
		qsort_captured = 1;
		CAPTURE(&cap_qsort);
	}
	return (x > y) - (x < y);
}

NOFP int unwtest_sorter(int n)
{
	int v[64];
	int i;

	for (i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, (size_t)(n < 64 ? n : 64), sizeof(v[0]), unwtest_cmp);
	sink = v[0];
	return v[1] + 1;
}

/*
 * A function without any CFI (no .cfi directives, so no FDE) that keeps
 * a frame pointer and calls unwtest_nocfi_cb: the unwinder must step over
 * it with the frame-pointer fallback, and count that step.
 */
static struct capture cap_nocfi;
int unwtest_nocfi(int (*fn)(int), int x);
__asm__(".text\n"
	".globl unwtest_nocfi\n"
	".type unwtest_nocfi, @function\n"
	"unwtest_nocfi:\n"
	"\tpush %rbp\n"
	"\tmov %rsp, %rbp\n"
	"\tmov %rdi, %rax\n"
	"\tmov %esi, %edi\n"
	"\tcall *%rax\n"
	"\tadd $1, %eax\n"
	"\tpop %rbp\n"
	"\tret\n"
	".size unwtest_nocfi, .-unwtest_nocfi\n");

NOFP int unwtest_nocfi_cb(int x)
{
	volatile int local[4];

	local[x & 3] = x;
	CAPTURE(&cap_nocfi);
	return local[x & 3];
}

/*
 * A leaf whose CFA lies below its sp, in the x86-64 red zone, as in
 * OpenSSL's sha512_block_data_order_avx2: it realigns its stack and keeps
 * the entry rsp at -8(%rsp), with CFI "CFA = *(rsp - 8) + 8".  It
 * captures (label 0) its rip, rsp and rbp into regs[3] and the 128 bytes
 * below rsp into red[128] (no call in between: a call would write there),
 * then has unwtest_redzone_copy() copy the stack above rsp.  rbp is
 * zeroed (and saved, with CFI), so that a frame-pointer fallback cannot
 * step over the frame when the CFA cannot be read.
 */
static struct capture cap_redzone;
static uint8_t red_zone[BPFPROF_RED_ZONE];
void unwtest_redzone(uint8_t *red, uint64_t *regs);
void unwtest_redzone_copy(uint64_t sp);
__asm__(".text\n"
	".globl unwtest_redzone\n"
	".type unwtest_redzone, @function\n"
	"unwtest_redzone:\n"
	"\t.cfi_startproc\n"
	"\tpush %rbx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_offset %rbx, -16\n"
	"\tpush %rbp\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_offset %rbp, -24\n"
	"\tmov %rsp, %rbx\n"
	"\txor %ebp, %ebp\n"
	"\tlea 16(%rsp), %rax\n"		/* the entry rsp: CFA - 8 */
	"\tsub $256, %rsp\n"
	"\tand $-32, %rsp\n"
	"\tmov %rax, -8(%rsp)\n"
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 -8; DW_OP_deref; DW_OP_plus_uconst 8 */
	"\t.cfi_escape 0x0f, 0x05, 0x77, 0x78, 0x06, 0x23, 0x08\n"
	"0:\tlea 0b(%rip), %rax\n"
	"\tmov %rax, (%rsi)\n"
	"\tmov %rsp, 8(%rsi)\n"
	"\tmov %rbp, 16(%rsi)\n"
	"\tlea -128(%rsp), %rax\n"
	"\tmov $16, %ecx\n"
	"1:\tmov (%rax), %rdx\n"
	"\tmov %rdx, (%rdi)\n"
	"\tadd $8, %rax\n"
	"\tadd $8, %rdi\n"
	"\tdec %ecx\n"
	"\tjnz 1b\n"
	"\t.cfi_def_cfa %rbx, 24\n"
	"\tmov 8(%rsi), %rdi\n"
	"\tcall unwtest_redzone_copy\n"
	"\tmov %rbx, %rsp\n"
	"\t.cfi_def_cfa %rsp, 24\n"
	"\tpop %rbp\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore %rbp\n"
	"\tpop %rbx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore %rbx\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size unwtest_redzone, .-unwtest_redzone\n");

NOFP void unwtest_redzone_copy(uint64_t sp)
{
	copy_stack(&cap_redzone, sp);
}

NOFP int unwtest_redzone_caller(int x)
{
	uint64_t regs[3];

	unwtest_redzone(red_zone, regs);
	cap_redzone.regs.ip = regs[0];
	cap_redzone.regs.sp = regs[1];
	cap_redzone.regs.bp = regs[2];
	return x + 1;
}

/*
 * A leaf without any CFI, as NASM builds x86inc kernels: no FDE covers
 * unwtest_nocfi_leaf, which saves nothing, so its return address is at
 * [sp] where it captures (label 0) its rip, rsp and rbp into regs[3].
 * Only then it moves rsp, to call unwtest_nocfi_leaf_copy() on an aligned
 * stack, which copies the stack from the captured rsp up.  Its caller
 * calls it through a pointer, as DSP tables are called.
 */
static struct capture cap_nocfi_leaf;
void unwtest_nocfi_leaf(uint64_t *regs);
void unwtest_nocfi_leaf_copy(uint64_t sp);
__asm__(".text\n"
	".globl unwtest_nocfi_leaf\n"
	".type unwtest_nocfi_leaf, @function\n"
	"unwtest_nocfi_leaf:\n"
	"0:\tlea 0b(%rip), %rax\n"
	"\tmov %rax, (%rdi)\n"
	"\tmov %rsp, 8(%rdi)\n"
	"\tmov %rbp, 16(%rdi)\n"
	"\tsub $8, %rsp\n"
	"\tmov 8(%rdi), %rdi\n"
	"\tcall unwtest_nocfi_leaf_copy\n"
	"\tadd $8, %rsp\n"
	"\tret\n"
	".size unwtest_nocfi_leaf, .-unwtest_nocfi_leaf\n");

NOFP void unwtest_nocfi_leaf_copy(uint64_t sp)
{
	copy_stack(&cap_nocfi_leaf, sp);
}

NOFP int unwtest_nocfi_leaf_caller(void (*leaf)(uint64_t *), int x)
{
	uint64_t regs[3];

	leaf(regs);
	cap_nocfi_leaf.regs.ip = regs[0];
	cap_nocfi_leaf.regs.sp = regs[1];
	cap_nocfi_leaf.regs.bp = regs[2];
	return x + 1;
}

/* ---- helpers ----------------------------------------------------------- */

struct ctx {
	struct procmaps maps;
	struct symbolizer *sym;
	struct unwinder *u;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	size_t i;

	assert_non_null(c);
	assert_int_equal(procmaps_read((uint32_t)getpid(), &c->maps), 0);
	for (i = 0; i < c->maps.nr; i++)
		if (strcmp(c->maps.maps[i].path, "[stack]") == 0)
			stack_end = c->maps.maps[i].end;
	assert_true(stack_end != 0);
	c->sym = symbolizer_new();
	c->u = unwinder_new();
	assert_non_null(c->sym);
	assert_non_null(c->u);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	unwinder_free(c->u);
	symbolizer_free(c->sym);
	procmaps_free(&c->maps);
	free(c);
	return 0;
}

/* Function name of frame @i (ip - 1 for callers), "?" if unknown. */
static const char *frame_name(struct ctx *c, const uint64_t *ips, int i)
{
	struct bpfprof_symbol s;
	uint64_t ip = i ? ips[i] - 1 : ips[i];

	if (symbolizer_user(c->sym, (uint32_t)getpid(), c->maps.maps, c->maps.nr, ip, &s) != 0 ||
	    !s.function)
		return "?";
	return s.function;
}

static void print_stack(struct ctx *c, const char *what, const uint64_t *ips, int n,
			enum unwind_stop why)
{
	int i;

	printf("# %s: %d frames, stop %s\n", what, n, unwind_stop_name(why));
	for (i = 0; i < n; i++)
		printf("#   %2d %#" PRIx64 " %s\n", i, ips[i], frame_name(c, ips, i));
}

/* Index of the first frame >= @from named @name (substring), or -1. */
static int find_frame(struct ctx *c, const uint64_t *ips, int n, int from, const char *name)
{
	int i;

	for (i = from; i < n; i++)
		if (strstr(frame_name(c, ips, i), name))
			return i;
	return -1;
}

static int unwind(struct ctx *c, const struct capture *cap, size_t size, uint64_t *ips,
		  enum unwind_stop *why)
{
	return unwinder_unwind(c->u, (uint32_t)getpid(), c->maps.maps, c->maps.nr, &cap->regs,
			       cap->stack, size, ips, MAX_FRAMES, why);
}

/* ---- tests ----------------------------------------------------------------- */

/* main -> ... -> test -> a -> b -> c, all of a, b, c without frame pointers. */
static void test_own_functions(void **state)
{
	struct ctx *c = *state;
	uint64_t ips[MAX_FRAMES];
	enum unwind_stop why;
	struct unwind_stats st;
	int n, ia, ib, ic, im;

	assert_true(unwtest_a(1) > 0);
	n = unwind(c, &cap_abc, cap_abc.size, ips, &why);
	print_stack(c, "a->b->c", ips, n, why);
	assert_true(n >= 4);
	assert_int_equal(ips[0], cap_abc.regs.ip);
	ic = find_frame(c, ips, n, 0, "unwtest_c");
	ib = find_frame(c, ips, n, 0, "unwtest_b");
	ia = find_frame(c, ips, n, 0, "unwtest_a");
	assert_int_equal(ic, 0);
	assert_int_equal(ib, 1);
	assert_int_equal(ia, 2);
	assert_string_equal(frame_name(c, ips, 3), "test_own_functions");
	im = find_frame(c, ips, n, 4, "main");
	assert_true(im > 3);
	/* after main only libc's start code, then the end (or the copy's end) */
	assert_true(why == UNWIND_END || why == UNWIND_TRUNCATED);
	unwinder_stats(c->u, &st);
	assert_int_equal(st.fp_steps, 0);	/* every step through CFI */
}

/* The comparison callback of qsort: through libc's msort back to us. */
static void test_qsort_callback(void **state)
{
	struct ctx *c = *state;
	uint64_t ips[MAX_FRAMES];
	enum unwind_stop why;
	int n, icmp, iq, isort, im;

	qsort_captured = 0;
	assert_true(unwtest_sorter(64) > 0);
	assert_true(qsort_captured);
	n = unwind(c, &cap_qsort, cap_qsort.size, ips, &why);
	print_stack(c, "qsort", ips, n, why);
	icmp = find_frame(c, ips, n, 0, "unwtest_cmp");
	assert_int_equal(icmp, 0);
	iq = find_frame(c, ips, n, 1, "sort");	/* msort_with_tmp, __qsort_r */
	isort = find_frame(c, ips, n, 1, "unwtest_sorter");
	assert_true(iq >= 1);
	assert_true(isort > iq);
	assert_string_equal(frame_name(c, ips, isort + 1), "test_qsort_callback");
	im = find_frame(c, ips, n, isort + 1, "main");
	assert_true(im > isort);
	assert_true(why == UNWIND_END || why == UNWIND_TRUNCATED);
}

/* A copy too small for the frames above: truncated, not an error. */
static void test_truncated(void **state)
{
	struct ctx *c = *state;
	uint64_t ips[MAX_FRAMES];
	enum unwind_stop why;
	int n;

	assert_true(unwtest_a(2) > 0);
	n = unwind(c, &cap_abc, 256, ips, &why);
	print_stack(c, "256 bytes", ips, n, why);
	assert_true(n >= 1);
	assert_int_equal(why, UNWIND_TRUNCATED);
	assert_int_equal(ips[0], cap_abc.regs.ip);

	/* no stack at all (sp unreadable): a stop of its own, not a copy
	 * that a larger size would have helped */
	n = unwind(c, &cap_abc, 0, ips, &why);
	assert_int_equal(n, 1);
	assert_int_equal(why, UNWIND_NO_STACK);
	assert_int_equal(ips[0], cap_abc.regs.ip);
}

/* @max frames: UNWIND_MAX_DEPTH. */
static void test_max_depth(void **state)
{
	struct ctx *c = *state;
	uint64_t ips[MAX_FRAMES];
	enum unwind_stop why;
	int n;

	assert_true(unwtest_a(3) > 0);
	n = unwinder_unwind(c->u, (uint32_t)getpid(), c->maps.maps, c->maps.nr, &cap_abc.regs,
			    cap_abc.stack, cap_abc.size, ips, 2, &why);
	assert_int_equal(n, 2);
	assert_int_equal(why, UNWIND_MAX_DEPTH);
	n = unwinder_unwind(c->u, (uint32_t)getpid(), c->maps.maps, c->maps.nr, &cap_abc.regs,
			    cap_abc.stack, cap_abc.size, ips, 1, &why);
	assert_int_equal(n, 1);
	assert_int_equal(why, UNWIND_MAX_DEPTH);
}

/* Garbage: unmapped ip, random stack contents; never a crash. */
static void test_garbage(void **state)
{
	struct ctx *c = *state;
	uint64_t ips[MAX_FRAMES];
	static uint8_t junk[STACK_COPY];
	struct unwind_regs r = { .ip = 0x1234, .sp = 0x7ffd00000000ull };
	enum unwind_stop why;
	unsigned seed = 12345;
	int n, i;
	size_t k;

	n = unwinder_unwind(c->u, (uint32_t)getpid(), c->maps.maps, c->maps.nr, &r, junk,
			    sizeof(junk), ips, MAX_FRAMES, &why);
	assert_int_equal(n, 1);
	assert_int_equal(why, UNWIND_UNMAPPED);

	assert_int_equal(unwinder_unwind(c->u, 1, c->maps.maps, c->maps.nr, &r, NULL, 16, ips,
					 MAX_FRAMES, &why), -EINVAL);
	assert_int_equal(unwinder_unwind(c->u, 1, c->maps.maps, c->maps.nr, &r, junk, 16, ips, 0,
					 &why), -EINVAL);

	/* a real ip with random stack bytes and registers */
	assert_true(unwtest_a(4) > 0);
	for (i = 0; i < 2000; i++) {
		for (k = 0; k < sizeof(junk); k++) {
			seed = seed * 1103515245u + 12345u;
			junk[k] = (uint8_t)(seed >> 16);
		}
		/* sometimes plant plausible pointers into the copy and into code */
		for (k = 0; k + 8 <= sizeof(junk) && (i & 1); k += 64) {
			uint64_t v = (k & 64) ? cap_abc.regs.ip + (k % 300) :
				     cap_abc.regs.sp + k + 128;
			memcpy(junk + k, &v, 8);
		}
		r.ip = cap_abc.regs.ip;
		if (i % 3 == 0)
			r.ip = cap_qsort.regs.ip;
		r.sp = cap_abc.regs.sp;
		r.bp = (i % 4 == 0) ? 0 : cap_abc.regs.sp + (uint64_t)(seed % 4096);
		n = unwinder_unwind(c->u, (uint32_t)getpid(), c->maps.maps, c->maps.nr, &r,
				    junk, (size_t)(seed % (sizeof(junk) + 1)), ips, MAX_FRAMES, &why);
		assert_true(n >= 1);
		assert_true(n <= MAX_FRAMES);
		assert_true((unsigned)why < UNWIND_STOP_NR);
		assert_int_equal(ips[0], r.ip);
		for (k = 1; k < (size_t)n; k++)
			assert_non_null(procmaps_find(c->maps.maps, c->maps.nr, ips[k]));
	}
	/* ip in data (no CFI): leaf only or a counted frame-pointer step */
	r.ip = (uint64_t)(uintptr_t)&sink;
	r.sp = cap_abc.regs.sp;
	r.bp = 0;
	n = unwinder_unwind(c->u, (uint32_t)getpid(), c->maps.maps, c->maps.nr, &r,
			    cap_abc.stack, cap_abc.size, ips, MAX_FRAMES, &why);
	assert_true(n >= 1);
	printf("# ip in data: %d frames, stop %s\n", n, unwind_stop_name(why));
}

/* A frame without CFI: one counted frame-pointer step, then CFI again. */
static void test_fp_fallback(void **state)
{
	struct ctx *c = *state;
	uint64_t ips[MAX_FRAMES];
	enum unwind_stop why;
	struct unwind_stats st0, st1;
	int n, inocfi;

	assert_int_equal(unwtest_nocfi(unwtest_nocfi_cb, 7), 8);
	unwinder_stats(c->u, &st0);
	n = unwind(c, &cap_nocfi, cap_nocfi.size, ips, &why);
	unwinder_stats(c->u, &st1);
	print_stack(c, "no-CFI frame", ips, n, why);
	assert_string_equal(frame_name(c, ips, 0), "unwtest_nocfi_cb");
	inocfi = find_frame(c, ips, n, 1, "unwtest_nocfi");
	assert_int_equal(inocfi, 1);
	assert_string_equal(frame_name(c, ips, 2), "test_fp_fallback");
	assert_true(find_frame(c, ips, n, 3, "main") > 2);
	assert_int_equal(st1.fp_steps - st0.fp_steps, 1);
	assert_true(why == UNWIND_END || why == UNWIND_TRUNCATED);
}

/*
 * The CFA read from the red zone below sp (unwtest_redzone): with the 128
 * bytes below sp, the whole stack back to main; without them the walk
 * cannot step over the leaf.
 */
static void test_red_zone(void **state)
{
	struct ctx *c = *state;
	uint64_t ips[MAX_FRAMES];
	enum unwind_stop why;
	int n;

	assert_int_equal(unwtest_redzone_caller(4), 5);
	cap_redzone.regs.red_zone = red_zone;
	n = unwind(c, &cap_redzone, cap_redzone.size, ips, &why);
	print_stack(c, "CFA in the red zone", ips, n, why);
	assert_string_equal(frame_name(c, ips, 0), "unwtest_redzone");
	assert_true(n >= 4);
	assert_string_equal(frame_name(c, ips, 1), "unwtest_redzone_caller");
	assert_string_equal(frame_name(c, ips, 2), "test_red_zone");
	assert_true(find_frame(c, ips, n, 3, "main") > 2);
	assert_true(why == UNWIND_END || why == UNWIND_TRUNCATED);

	cap_redzone.regs.red_zone = NULL;
	n = unwind(c, &cap_redzone, cap_redzone.size, ips, &why);
	print_stack(c, "the same without the red zone", ips, n, why);
	assert_int_equal(n, 1);
	assert_int_not_equal(why, UNWIND_END);
}

/*
 * A leaf without CFI (unwtest_nocfi_leaf): its caller from [sp], after
 * the indirect call there, then CFI again back to main; counted.
 */
static void test_nocfi_leaf(void **state)
{
	struct ctx *c = *state;
	uint64_t ips[MAX_FRAMES];
	enum unwind_stop why;
	struct unwind_stats st0, st1;
	int n;

	assert_int_equal(unwtest_nocfi_leaf_caller(unwtest_nocfi_leaf, 2), 3);
	unwinder_stats(c->u, &st0);
	n = unwind(c, &cap_nocfi_leaf, cap_nocfi_leaf.size, ips, &why);
	unwinder_stats(c->u, &st1);
	print_stack(c, "leaf without CFI", ips, n, why);
	assert_true(n >= 4);
	assert_string_equal(frame_name(c, ips, 0), "unwtest_nocfi_leaf");
	assert_string_equal(frame_name(c, ips, 1), "unwtest_nocfi_leaf_caller");
	assert_string_equal(frame_name(c, ips, 2), "test_nocfi_leaf");
	assert_true(find_frame(c, ips, n, 3, "main") > 2);
	assert_true(why == UNWIND_END || why == UNWIND_TRUNCATED);
	assert_int_equal(st1.leaf_guesses - st0.leaf_guesses, 1);
	assert_int_equal(st1.fp_steps - st0.fp_steps, 0);
}

/* Address of the function @name in this process's vdso, 0 if not found. */
static uint64_t vdso_function(const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	uint64_t size, addr = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (!eh)
		return 0;
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)eh, size);
	while (elf && !addr && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0 && sym.st_value) {
				/* the vdso's vaddrs start at 0 (its first PT_LOAD) */
				addr = (uint64_t)(uintptr_t)eh + sym.st_value;
				break;
			}
		}
	}
	elf_end(elf);
	return addr;
}

/*
 * A sample at the first instruction of the vdso's clock_gettime, called
 * from unwtest_c: the [vdso] module's CFI leads back into our code.
 */
static struct capture cap_vdso;

/* cap_vdso: a sample at the vdso's clock_gettime as called from unwtest_c. */
static void capture_vdso(void)
{
	struct capture *v = &cap_vdso;

	v->regs.ip = vdso_function("__vdso_clock_gettime");
	if (!v->regs.ip)
		skip();
	assert_true(unwtest_a(8) > 0);
	/* as if unwtest_c had just called it: return address on top */
	v->regs.sp = cap_abc.regs.sp - 8;
	v->regs.bp = cap_abc.regs.bp;
	memcpy(v->stack, &cap_abc.regs.ip, 8);
	memcpy(v->stack + 8, cap_abc.stack, cap_abc.size - 8);
	v->size = cap_abc.size;
}

static void test_vdso(void **state)
{
	struct ctx *c = *state;
	uint64_t ips[MAX_FRAMES], ref[MAX_FRAMES];
	struct capture *v = &cap_vdso;
	enum unwind_stop why, rwhy;
	int n, nref;

	capture_vdso();
	nref = unwind(c, &cap_abc, cap_abc.size, ref, &rwhy);
	n = unwind(c, v, v->size, ips, &why);
	print_stack(c, "vdso", ips, n, why);
	assert_true(n >= 3);
	assert_int_equal(ips[0], v->regs.ip);
	assert_int_equal(ips[1], cap_abc.regs.ip);
	assert_int_equal(ips[2], ref[1]);
	assert_int_equal(ips[3], ref[2]);
	(void)nref;
}

/*
 * Unwind cap_vdso in a process with mappings @maps (@nr), by path only
 * (pid 0), with a fresh unwinder; whether the caller frame found is
 * unwtest_c's, i.e. whether the [vdso] got our image's CFI.
 */
static bool vdso_unwinds(const struct bpfprof_mapping *maps, size_t nr)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES];
	enum unwind_stop why;
	int n;

	assert_non_null(u);
	n = unwinder_unwind(u, 0, maps, nr, &cap_vdso.regs, cap_vdso.stack, cap_vdso.size, ips,
			    MAX_FRAMES, &why);
	unwinder_free(u);
	assert_true(n >= 1);
	return n >= 2 && ips[1] == cap_abc.regs.ip;
}

/*
 * The [vdso] of a process that is not of our ABI (its first executable
 * file is ELF32, listed before ours) or whose mapping has another size
 * gets no module from our image; the same maps with our executable first
 * do (the control).
 */
static void test_vdso_not_ours(void **state)
{
	struct ctx *c = *state;
	char elf32[] = "/tmp/bpfprof-unw32-XXXXXX";
	size_t nr = c->maps.nr + 1, i;
	struct bpfprof_mapping *maps = calloc(nr, sizeof(*maps)), *vdso = NULL;
	int fd;

	assert_non_null(maps);
	capture_vdso();
	fd = mkstemp(elf32);
	assert_true(fd >= 0);
	close(fd);
	elf32_file(elf32);
	maps[0] = (struct bpfprof_mapping){ .start = 0x10000, .end = 0x11000,
		.prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC, .path = elf32 };
	memcpy(maps + 1, c->maps.maps, c->maps.nr * sizeof(*maps));
	for (i = 1; i < nr; i++)
		if (strcmp(maps[i].path, "[vdso]") == 0)
			vdso = &maps[i];
	assert_non_null(vdso);

	assert_true(vdso_unwinds(maps + 1, nr - 1));	/* the control */
	assert_false(vdso_unwinds(maps, nr));		/* 32-bit */
	vdso->end += 4096;				/* another size */
	assert_false(vdso_unwinds(maps + 1, nr - 1));
	vdso->end -= 4096;
	unlink(elf32);
	free(maps);
}

/* Forgetting a process and unwinding again gives the same stack. */
static void test_forget(void **state)
{
	struct ctx *c = *state;
	uint64_t ips1[MAX_FRAMES], ips2[MAX_FRAMES];
	enum unwind_stop why1, why2;
	int n1, n2, i;

	assert_true(unwtest_a(5) > 0);
	n1 = unwind(c, &cap_abc, cap_abc.size, ips1, &why1);
	unwinder_forget(c->u, (uint32_t)getpid());
	unwinder_forget(c->u, 999999999);
	n2 = unwind(c, &cap_abc, cap_abc.size, ips2, &why2);
	assert_int_equal(n1, n2);
	assert_int_equal(why1, why2);
	assert_memory_equal(ips1, ips2, (size_t)n1 * sizeof(ips1[0]));

	/*
	 * More processes than the cache holds, none alive (files opened by
	 * path): least recently used ones are evicted, results stay equal.
	 */
	for (i = 0; i < UNWIND_MAX_PROCS + 8; i++) {
		n2 = unwinder_unwind(c->u, 0x3ffffff0u - (uint32_t)i, c->maps.maps, c->maps.nr,
				     &cap_abc.regs, cap_abc.stack, cap_abc.size, ips2, MAX_FRAMES,
				     &why2);
		assert_int_equal(n1, n2);
		assert_memory_equal(ips1, ips2, (size_t)n1 * sizeof(ips1[0]));
	}
}

/*
 * Many processes mapping the same files (as exec'd children of one parent
 * do): each gets its own Dwfl, but every ELF file is opened once and
 * shared, and the stacks are the same as with a file of its own.
 */
static void test_files_shared(void **state)
{
	struct ctx *c = *state;
	struct unwinder *u = unwinder_new();
	uint64_t ips1[MAX_FRAMES], ips2[MAX_FRAMES];
	enum unwind_stop why1, why2;
	struct unwind_stats st;
	uint64_t files = 0;
	int n1, n2, i;

	assert_non_null(u);
	assert_true(unwtest_a(7) > 0);
	/* the executable file mappings (one per file here) */
	for (size_t k = 0; k < c->maps.nr; k++)
		files += (c->maps.maps[k].prot & BPFPROF_PROT_EXEC) && c->maps.maps[k].path[0] == '/';
	n1 = unwind(c, &cap_abc, cap_abc.size, ips1, &why1);
	for (i = 0; i < 20; i++) {
		n2 = unwinder_unwind(u, 0x3fffff00u - (uint32_t)i, c->maps.maps, c->maps.nr,
				     &cap_abc.regs, cap_abc.stack, cap_abc.size, ips2, MAX_FRAMES,
				     &why2);
		assert_int_equal(n1, n2);
		assert_int_equal(why1, why2);
		assert_memory_equal(ips1, ips2, (size_t)n1 * sizeof(ips1[0]));
	}
	unwinder_stats(u, &st);
	printf("# 20 processes: %" PRIu64 " Dwfl builds, %" PRIu64 " files opened (%" PRIu64
	       " executable file mappings), %" PRIu64 " module errors\n", st.dwfl_builds,
	       st.files_opened, files, st.module_errors);
	assert_int_equal(st.dwfl_builds, 20);
	assert_true(st.files_opened >= 1);
	assert_true(st.files_opened <= files);
	unwinder_free(u);
}

/* CPU time of this thread: the machine may be loaded by other work. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How many samples/s a warm unwinder handles (printed, not asserted). */
static void test_throughput(void **state)
{
	struct ctx *c = *state;
	struct unwinder *cold;
	uint64_t ips[MAX_FRAMES];
	enum unwind_stop why;
	int i, n = 0, iters = 20000;
	double t0, t1, t2;
	uint64_t frames = 0;
	struct unwind_stats st;

	assert_true(unwtest_a(6) > 0);
	qsort_captured = 0;
	assert_true(unwtest_sorter(64) > 0);
	cold = unwinder_new();
	assert_non_null(cold);
	t0 = now_s();
	n = unwinder_unwind(cold, (uint32_t)getpid(), c->maps.maps, c->maps.nr, &cap_abc.regs,
			    cap_abc.stack, cap_abc.size, ips, MAX_FRAMES, &why);
	t1 = now_s();
	assert_true(n > 3);
	unwinder_free(cold);
	for (i = 0; i < iters; i++) {
		const struct capture *cap = (i & 1) ? &cap_qsort : &cap_abc;

		n = unwind(c, cap, cap->size, ips, &why);
		assert_true(n > 3);
		frames += (uint64_t)n;
	}
	t2 = now_s();
	printf("# first sample of a process (Dwfl build, CFI load): %.2f ms CPU\n", (t1 - t0) * 1e3);
	unwinder_stats(c->u, &st);
	printf("# stats: %" PRIu64 " samples, %" PRIu64 " frames, %" PRIu64 " fp steps, "
	       "%" PRIu64 " Dwfl builds, %" PRIu64 " module errors\n", st.samples, st.frames,
	       st.fp_steps, st.dwfl_builds, st.module_errors);
	for (i = 0; i < UNWIND_STOP_NR; i++)
		printf("#   stop %-10s %" PRIu64 "\n", unwind_stop_name(i), st.stops[i]);
	printf("# warm: %d samples in %.3f s CPU = %.0f samples/s, %.1f frames/sample, %.2f us/frame\n",
	       iters, t2 - t1, iters / (t2 - t1), (double)frames / iters,
	       (t2 - t1) * 1e6 / (double)frames);
}

/*
 * The maps the loader writes, made as the BPF object makes them
 * ("cfi_tables", "cfi_procs", "cfi_requests"); -errno if BPF is not
 * allowed here.
 */
static int loader_maps(int fds[3])
{
	LIBBPF_OPTS(bpf_map_create_opts, inner_opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, outer_opts);
	int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "rows", 4, sizeof(struct cfi_row), 1,
				   &inner_opts);

	if (inner < 0)
		return -errno;
	outer_opts.inner_map_fd = inner;
	fds[0] = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "cfi_tables", 4, 4, CFI_MAX_CHUNKS,
				&outer_opts);
	close(inner);
	fds[1] = bpf_map_create(BPF_MAP_TYPE_HASH, "cfi_procs", 4, sizeof(struct cfi_process), 16,
				NULL);
	fds[2] = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "cfi_requests", 4, 8, 16, NULL);
	return fds[0] < 0 || fds[1] < 0 || fds[2] < 0 ? -EINVAL : 0;
}

/* cfi_loader_walk() of @cap: the frames and the stop unwinder_unwind() gives. */
static void assert_loader_walk_same(struct ctx *c, struct cfi_loader *l, const struct capture *cap,
				    size_t size)
{
	uint64_t want[MAX_FRAMES], got[MAX_FRAMES];
	enum unwind_stop why;
	struct cfi_walk_regs regs = { .ip = cap->regs.ip, .sp = cap->regs.sp, .bp = cap->regs.bp,
				      .bx = cap->regs.bx };
	struct cfi_walk_stack stack = { .sp = cap->regs.sp, .data = cap->stack, .size = size };
	struct cfi_walk_result res;
	int n = unwind(c, cap, size, want, &why);
	int m = cfi_loader_walk(l, (uint32_t)getpid(), c->maps.maps, c->maps.nr, &regs, &stack, 0,
				got, MAX_FRAMES, &res);

	print_stack(c, "libdwfl", want, n, why);
	print_stack(c, "tables", got, m, why);
	assert_int_equal(m, n);
	assert_memory_equal(got, want, (size_t)n * sizeof(want[0]));
	assert_int_equal(res.stop, why == UNWIND_END ? CFI_WALK_END : CFI_WALK_READ_FAULT);
}

/* auto's copies, walked with the tables the loader loaded (into BPF maps,
 * read through their mapping), give libdwfl's frames: whole, and cut by a
 * short copy. */
static void test_loader_walk(void **state)
{
	struct ctx *c = *state;
	struct cfi_loader *l;
	int fds[3] = { -1, -1, -1 }, err = loader_maps(fds);

	if (err == -EPERM) {
		printf("# not allowed to create BPF maps here\n");
		skip();
	}
	assert_int_equal(err, 0);
	l = cfi_loader_new(fds[0], fds[1], fds[2], 0);
	assert_non_null(l);
	assert_true(unwtest_a(7) > 0);
	qsort_captured = 0;
	assert_true(unwtest_sorter(64) > 0);
	assert_loader_walk_same(c, l, &cap_abc, cap_abc.size);
	assert_loader_walk_same(c, l, &cap_qsort, cap_qsort.size);
	assert_loader_walk_same(c, l, &cap_abc, 256);
	cfi_loader_free(l);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_functions),
		cmocka_unit_test(test_qsort_callback),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_max_depth),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_fp_fallback),
		cmocka_unit_test(test_red_zone),
		cmocka_unit_test(test_nocfi_leaf),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_vdso_not_ours),
		cmocka_unit_test(test_forget),
		cmocka_unit_test(test_loader_walk),
		cmocka_unit_test(test_files_shared),
		cmocka_unit_test(test_throughput),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
