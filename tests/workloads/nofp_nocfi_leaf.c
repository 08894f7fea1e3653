// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_nocfi_leaf - hot leaves in assembly without any CFI, the way NASM
 * builds the x86inc functions of dav1d, x265 and FFmpeg (no .eh_frame FDE
 * covers them), called through a function pointer from C, as their DSP
 * tables are.  --call-graph auto finds no row at such a leaf's ip; when it
 * is the first frame, the walk takes *(u64 *)sp as the return address,
 * and keeps it only if the row for that address - 1 is one of code with
 * CFI (bpf/cfi_row.h, "A leaf without CFI").
 *
 * This file owns the workload of tests/integration/nocfi_leaf.sh.  Built
 * without frame pointers (nofp_: -O2 -g -fomit-frame-pointer), on the main
 * thread, each round calls one of (about half of the rounds each):
 *
 *   main -> leaf_round -> leaf_plain     (through a function pointer)
 *   main -> leaf_round -> leaf_pushes    (through a function pointer)
 *
 * leaf_plain (assembly below) runs n LCG steps in caller-saved registers
 * only and never moves rsp, as most x86inc kernels: at every instruction
 * its return address is at [sp], so every sample in it must have the
 * whole stack, _start;__libc_start_main;__libc_start_call_main;main;
 * leaf_round;leaf_plain.
 *
 * leaf_pushes (assembly below) does the same work but pushes rbx first
 * (the LCG increment lives in it during the loop) and pops it after: at
 * all but its first and last instruction [sp] holds leaf_round's rbx (the
 * function pointer, i.e. leaf_pushes' own address: code without CFI), not
 * a return address.  Its samples must not get a caller that is not true:
 * they either have the whole stack above (at `push` or `ret`, rare) or
 * stop at the leaf, the stack "leaf_pushes" alone (the walk's "no-row").
 *
 * Neither has a .cfi directive: check with
 *   readelf --debug-dump=frames nofp_nocfi_leaf
 * that no FDE's pc range covers `nm nofp_nocfi_leaf | grep leaf_`.
 *
 * Usage: nofp_nocfi_leaf [-s SECONDS] [--wait]
 *   -s SECONDS  CPU seconds of work after the release (default 2)
 *   --wait      print "ready PID" on stdout and block until SIGUSR1
 * At exit it prints one line on stderr:
 *   nofp_nocfi_leaf: rounds=R plain=P pushes=Q cpu_seconds=S
 * (P and Q: calls of each leaf).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

/* n (rsi) LCG steps on x (rdi); returns the final state. */
uint64_t leaf_plain(uint64_t x, uint64_t n);
uint64_t leaf_pushes(uint64_t x, uint64_t n);

/*
 * No .cfi_startproc/.cfi_endproc: the assembler emits no FDE for these,
 * as NASM emits none for x86inc's cglobal functions.
 */
__asm__(".text\n"
	".globl leaf_plain\n"
	".type leaf_plain, @function\n"
	"leaf_plain:\n"
	"	mov %rdi, %rax\n"
	"	movabs $6364136223846793005, %rdx\n"
	"	movabs $1442695040888963407, %rcx\n"
	"	test %rsi, %rsi\n"
	"	jz 2f\n"
	"1:	imul %rdx, %rax\n"
	"	add %rcx, %rax\n"
	"	dec %rsi\n"
	"	jnz 1b\n"
	"2:	ret\n"
	".size leaf_plain, .-leaf_plain\n"

	".globl leaf_pushes\n"
	".type leaf_pushes, @function\n"
	"leaf_pushes:\n"
	"	push %rbx\n"
	"	mov %rdi, %rax\n"
	"	movabs $6364136223846793005, %rdx\n"
	"	movabs $1442695040888963407, %rbx\n"
	"	test %rsi, %rsi\n"
	"	jz 2f\n"
	"1:	imul %rdx, %rax\n"
	"	add %rbx, %rax\n"
	"	dec %rsi\n"
	"	jnz 1b\n"
	"2:	pop %rbx\n"
	"	ret\n"
	".size leaf_pushes, .-leaf_pushes\n");

/*
 * The "DSP table": filled at run time by dsp_init (noipa), so that gcc
 * cannot turn leaf_round's indirect calls into direct ones.
 */
struct leaf_dsp {
	uint64_t (*fn[2])(uint64_t x, uint64_t n);
};
static struct leaf_dsp dsp;
static uint64_t calls[2];

NOIPA void dsp_init(struct leaf_dsp *d)
{
	d->fn[0] = leaf_plain;
	d->fn[1] = leaf_pushes;
}

/*
 * One round: leaf_plain on even rounds, leaf_pushes on odd ones, for a
 * pseudo-random chunk of LCG steps.  C, noipa, no frame pointer: its CFA
 * is rsp-based, found from the return address the walk reads at the
 * leaf's [sp].  The function pointer stays live across the call (the calls
 * are counted by it), so leaf_round keeps it in a callee-saved register,
 * rbx (gcc 12 -O2): what leaf_pushes saves at its [sp] is then its own
 * address, a code address in this executable's text whose row at - 1
 * (leaf_plain's ret) is none, which the walk must refuse as a caller.
 * The result is used after the call (no tail call).
 */
NOIPA uint64_t leaf_round(const struct leaf_dsp *d, uint64_t round, uint64_t *rnd, uint64_t x)
{
	uint64_t (*fn)(uint64_t x, uint64_t n) = d->fn[round & 1];
	uint64_t y = fn(x, CHUNK_LENGTH(rnd, CHUNK_MIN, CHUNK_MAX));

	calls[fn == leaf_pushes]++;
	return y ^ (y >> 29);
}

int main(int argc, char **argv)
{
	int wait = 0;
	double seconds = 2.0;

	parse_seconds_wait(argc, argv, "nofp_nocfi_leaf", &seconds, &wait);
	dsp_init(&dsp);

	sigset_t set;
	block_release_signal(&set);
	if (wait && wait_for_release(&set)) {
		perror("nofp_nocfi_leaf: sigwait");
		return 1;
	}

	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = t0 + seconds;
	uint64_t rnd = RANDOM_SEED(0), x = 1, rounds = 0;

	while (now(CLOCK_THREAD_CPUTIME_ID) < end) {
		for (uint64_t i = 0; i < 16; i++)
			x = leaf_round(&dsp, rounds * 16 + i, &rnd, x);
		rounds++;
	}
	result_sink = x;
	fprintf(stderr, "nofp_nocfi_leaf: rounds=%llu plain=%llu pushes=%llu cpu_seconds=%.3f\n",
		(unsigned long long)rounds, (unsigned long long)calls[0],
		(unsigned long long)calls[1], now(CLOCK_THREAD_CPUTIME_ID) - t0);
	return 0;
}
