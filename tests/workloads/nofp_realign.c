// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_realign - functions that realign their stack and keep their CFA in
 * the frame, the way OpenSSL's and GnuTLS's assembly (perlasm) and gcc's
 * DRAP functions do: their CFI gives the CFA as a DWARF expression,
 * "*(rsp + 40) + 8", "*(rbp - 16) + 8" or "*(rbp - 8)" (with the caller's
 * rbp at rbp + 0), which --call-graph auto's rows hold as
 * CFI_KIND_RSP_DEREF, CFI_KIND_RBP_DEREF and CFI_KIND_DRAP
 * (bpf/cfi_row.h).
 *
 * This file owns the workload of tests/integration/realigned_stacks.sh.
 * Built without frame pointers (nofp_: -O2 -g -fomit-frame-pointer), on
 * the main thread, each round:
 *
 *   main -> realign_round -> rsp_saved -> realign_callee    (about 1/3)
 *   main -> realign_round -> rbp_saved -> realign_callee    (about 1/3)
 *   main -> realign_round -> drap_saved -> realign_callee   (about 1/3)
 *
 * realign_round keeps rbp as its frame pointer (a variable-length array),
 * so its CFA is rbp + 16 and the walk needs the rbp each of the three
 * restores.  rsp_saved, rbp_saved and drap_saved (assembly below, the
 * same work in each: the macro realign_work) spin a short LCG loop of
 * their own (samples with them as the leaf, whose row is looked up at
 * the exact ip), then call realign_callee (C, noipa), whose samples
 * reach them through a return address (looked up at ip - 1), from a
 * stack aligned to 64 or 32 bytes: no fixed offset from sp finds their
 * CFA.  Between calls each scribbles over the padding it made.  Every
 * sample of the work has one of the three stacks above.
 *
 * Usage: nofp_realign [-s SECONDS] [--wait]
 *   -s SECONDS  CPU seconds of work after the release (default 2)
 *   --wait      print "ready PID" on stdout and block until SIGUSR1
 * At exit it prints one line on stderr:
 *   nofp_realign: rounds=R cpu_seconds=S
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

uint64_t rsp_saved(uint64_t n);
uint64_t rbp_saved(uint64_t n);
uint64_t drap_saved(uint64_t n);

/* The C function both call: a few hundred dependent LCG steps. */
NOIPA uint64_t realign_callee(uint64_t x)
{
	LCG_STEPS(x, 400);
	return x;
}

/*
 * realign_work, a GAS macro: the work the three functions below share,
 * n (rdi) rounds of (a 300-step LCG loop, then realign_callee), the
 * result in rax.  It owns rbx, the round counter (callee-saved: each
 * function saves it), and the 8 bytes at (%rsp), the accumulator (each
 * function's realigned padding, so it is scribbled over between calls);
 * rcx, rdx and rdi are scratch, and the call clobbers the caller-saved
 * registers.
 */
__asm__(".macro realign_work\n"
	"	mov %rdi, %rbx\n"
	"	movq $0, (%rsp)\n"
	"1:	mov $300, %ecx\n"
	"	mov (%rsp), %rax\n"
	"	movabs $6364136223846793005, %rdx\n"
	"2:	imul %rdx, %rax\n"
	"	add %rbx, %rax\n"
	"	dec %ecx\n"
	"	jnz 2b\n"
	"	mov %rax, (%rsp)\n"
	"	mov %rax, %rdi\n"
	"	call realign_callee\n"
	"	xor %rax, (%rsp)\n"
	"	dec %rbx\n"
	"	jnz 1b\n"
	"	mov (%rsp), %rax\n"
	".endm\n"

/*
 * rsp_saved(n): perlasm's pattern.  The CFA (entry rsp + 8) is rax + 8
 * until the stack is realigned to 64 bytes, then the entry rsp is kept at
 * 40(%rsp): CFA = *(rsp + 40) + 8.  rbp is a scratch register here, as in
 * perlasm (zeroed), so the walk must restore realign_round's from CFA - 16.
 */
	".text\n"
	".globl rsp_saved\n"
	".type rsp_saved, @function\n"
	"rsp_saved:\n"
	"	.cfi_startproc\n"
	"	mov %rsp, %rax\n"
	"	.cfi_def_cfa_register %rax\n"
	"	push %rbp\n"
	"	.cfi_offset %rbp, -16\n"
	"	push %rbx\n"
	"	.cfi_offset %rbx, -24\n"
	"	sub $136, %rsp\n"
	"	and $-64, %rsp\n"
	"	mov %rax, 40(%rsp)\n"
	"	.cfi_escape 0x0f, 0x05, 0x77, 0x28, 0x06, 0x23, 0x08\n"	/* *(rsp + 40) + 8 */
	"	xor %ebp, %ebp\n"
	"	realign_work\n"
	"	mov 40(%rsp), %rsi\n"
	"	.cfi_def_cfa %rsi, 8\n"
	"	mov -16(%rsi), %rbx\n"
	"	mov -8(%rsi), %rbp\n"
	"	mov %rsi, %rsp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	.cfi_restore %rbp\n"
	"	.cfi_restore %rbx\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size rsp_saved, .-rsp_saved\n"

/*
 * rbp_saved(n): rbp as the frame pointer, the CFA - 8 kept at -16(%rbp)
 * (below the saved rbx), then the stack realigned to 32 bytes:
 * CFA = *(rbp - 16) + 8 (gcc's DRAP functions have CFA = *(rbp - N)).
 */
	".globl rbp_saved\n"
	".type rbp_saved, @function\n"
	"rbp_saved:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	push %rbx\n"
	"	.cfi_offset %rbx, -24\n"
	"	lea 8(%rbp), %rax\n"
	"	push %rax\n"
	"	.cfi_escape 0x0f, 0x05, 0x76, 0x70, 0x06, 0x23, 0x08\n"	/* *(rbp - 16) + 8 */
	"	sub $64, %rsp\n"
	"	and $-32, %rsp\n"
	"	realign_work\n"
	"	mov -8(%rbp), %rbx\n"
	"	.cfi_def_cfa %rbp, 16\n"
	"	.cfi_restore %rbx\n"
	"	leave\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	.cfi_restore %rbp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size rbp_saved, .-rbp_saved\n"

/*
 * drap_saved(n): gcc's DRAP code for a function with over-aligned locals:
 * r10 = CFA, the stack aligned to 32 bytes, the return address and rbp
 * pushed again there, rbp the frame pointer and r10 saved below it:
 * CFA = *(rbp - 8), and the caller's rbp at rbp + 0 (an expression rule,
 * not CFA-relative).
 */
	".globl drap_saved\n"
	".type drap_saved, @function\n"
	"drap_saved:\n"
	"	.cfi_startproc\n"
	"	lea 8(%rsp), %r10\n"
	"	.cfi_def_cfa %r10, 0\n"
	"	and $-32, %rsp\n"
	"	push -8(%r10)\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00\n"		/* rbp at rbp + 0 */
	"	push %r10\n"
	"	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06\n"		/* CFA *(rbp - 8) */
	"	push %rbx\n"
	"	.cfi_escape 0x10, 0x03, 0x02, 0x76, 0x70\n"		/* rbx at rbp - 16 */
	"	sub $48, %rsp\n"
	"	realign_work\n"
	"	mov -16(%rbp), %rbx\n"
	"	.cfi_restore %rbx\n"
	"	mov -8(%rbp), %r10\n"
	"	.cfi_def_cfa %r10, 0\n"
	"	leave\n"
	"	.cfi_restore %rbp\n"
	"	lea -8(%r10), %rsp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size drap_saved, .-drap_saved\n");

/*
 * Its variable-length array makes gcc keep rbp as its frame pointer, so
 * its CFA is rbp + 16: the walk needs the rbp each of the three restores,
 * drap_saved's from rbp + 0.
 */
NOIPA uint64_t realign_round(uint64_t *rnd)
{
	uint64_t r = next_random(rnd), n = 50 + r % 50;
	volatile char pad[1 + (r & 15)];

	pad[0] = (char)r;
	switch (r % 3) {
	case 0:
		return rsp_saved(n) + pad[0];
	case 1:
		return rbp_saved(n) + pad[0];
	default:
		return drap_saved(n) + pad[0];
	}
}

int main(int argc, char **argv)
{
	int wait = 0;
	double seconds = 2.0;

	parse_seconds_wait(argc, argv, "nofp_realign", &seconds, &wait);

	sigset_t set;
	block_release_signal(&set);
	if (wait && wait_for_release(&set)) {
		perror("nofp_realign: sigwait");
		return 1;
	}

	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = t0 + seconds;
	uint64_t rnd = RANDOM_SEED(0), x = 0, rounds = 0;

	while (now(CLOCK_THREAD_CPUTIME_ID) < end) {
		for (int i = 0; i < 16; i++)
			x += realign_round(&rnd);
		rounds++;
	}
	result_sink = x;
	fprintf(stderr, "nofp_realign: rounds=%llu cpu_seconds=%.3f\n",
		(unsigned long long)rounds, now(CLOCK_THREAD_CPUTIME_ID) - t0);
	return 0;
}
