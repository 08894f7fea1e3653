// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_fp_bridge - frames in the middle of a stack that have no CFI, one
 * kept by a frame pointer and one not.  gcc's crtstuff (crtbeginS.o,
 * linked into every shared library) builds __do_global_dtors_aux with a
 * frame pointer and no FDE; at exit it calls __cxa_finalize, which runs
 * the library's destructors, so an exit's stacks pass through a frame
 * without CFI.  --call-graph auto takes such a frame's caller from
 * [bp + 8] (bpf/cfi_row.h), if rbp is known and the return address found
 * follows a call into code with CFI.
 *
 * Built without frame pointers (nofp_: -O2 -g -fomit-frame-pointer), on
 * the main thread, each round calls one of (about half of the rounds
 * each):
 *
 *   main -> bridge_round -> fp_bridge   -> bridged_work
 *   main -> bridge_round -> bare_bridge -> bridged_work
 *
 * fp_bridge and bare_bridge are assembly without any .cfi directive (no
 * FDE covers them) that call bridged_work (C, with CFI) through a
 * register.  fp_bridge sets up a frame pointer (push %rbp; mov %rsp,
 * %rbp), as crtstuff's functions do: every sample in bridged_work under it
 * must have the whole stack _start;__libc_start_main;
 * __libc_start_call_main;main;bridge_round;fp_bridge;bridged_work.
 * bare_bridge keeps no frame pointer (sub $8, %rsp): rbp holds whatever
 * bridge_round left there, and its samples must not get a caller that is
 * not true: either the same true path or a stack that ends at
 * bare_bridge.
 *
 * Usage: nofp_fp_bridge [-s SECONDS] [--wait]
 *   -s SECONDS  CPU seconds of work after the release (default 2)
 *   --wait      print "ready PID" on stdout and block until SIGUSR1
 * At exit it prints one line on stderr:
 *   nofp_fp_bridge: rounds=R fp=P bare=Q cpu_seconds=S
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

typedef uint64_t (*work_fn)(uint64_t x, uint64_t n);

/* fn(x, n) (rdx: fn), from a frame without CFI. */
uint64_t fp_bridge(uint64_t x, uint64_t n, work_fn fn);
uint64_t bare_bridge(uint64_t x, uint64_t n, work_fn fn);

__asm__(".text\n"
	".globl fp_bridge\n"
	".type fp_bridge, @function\n"
	"fp_bridge:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	call *%rdx\n"
	"	pop %rbp\n"
	"	ret\n"
	".size fp_bridge, .-fp_bridge\n"

	".globl bare_bridge\n"
	".type bare_bridge, @function\n"
	"bare_bridge:\n"
	"	sub $8, %rsp\n"
	"	call *%rdx\n"
	"	add $8, %rsp\n"
	"	ret\n"
	".size bare_bridge, .-bare_bridge\n");

/* The work: n LCG steps, C with CFI, no frame pointer. */
LCG_LEAF_RETURNING(bridged_work, x)

static uint64_t calls[2];

/*
 * One round through fp_bridge (even rounds) or bare_bridge (odd ones) for
 * a pseudo-random chunk of LCG steps; the result is used after the call
 * (no tail call).
 */
NOIPA uint64_t bridge_round(uint64_t round, uint64_t *rnd, uint64_t x)
{
	uint64_t n = CHUNK_LENGTH(rnd, CHUNK_MIN, CHUNK_MAX), y;

	if (round & 1)
		y = bare_bridge(x, n, bridged_work);
	else
		y = fp_bridge(x, n, bridged_work);
	calls[round & 1]++;
	return y ^ (y >> 29);
}

int main(int argc, char **argv)
{
	double seconds = 2.0;

	start_seconds_wait(argc, argv, "nofp_fp_bridge", &seconds);

	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = t0 + seconds;
	uint64_t rnd = RANDOM_SEED(0), x = 1, rounds = 0;

	while (now(CLOCK_THREAD_CPUTIME_ID) < end) {
		for (uint64_t i = 0; i < 16; i++)
			x = bridge_round(rounds * 16 + i, &rnd, x);
		rounds++;
	}
	result_sink = x;
	fprintf(stderr, "nofp_fp_bridge: rounds=%llu fp=%llu bare=%llu cpu_seconds=%.3f\n",
		(unsigned long long)rounds, (unsigned long long)calls[0],
		(unsigned long long)calls[1], now(CLOCK_THREAD_CPUTIME_ID) - t0);
	return 0;
}
