// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_coroutine - a CPU-bound workload whose hot leaf runs on a coroutine
 * stack (makecontext()/swapcontext()) that ends where its mapping ends,
 * built without frame pointers (-O2 -g -fomit-frame-pointer, like
 * distribution packages).
 *
 * This file owns the ground truth of tests/integration/cfi_window.sh: the
 * BPF stack walk starts by copying 2 KiB of the stack from sp
 * (CFI_STACK_WINDOW); on this stack the frames lie within the last few
 * hundred bytes below an unreadable guard page, so the 2 KiB copy fails,
 * and the walk reads the rest of sp's page instead (a stack's top, as in
 * coroutine libraries, green threads and signal stacks).  It follows
 * /work/shared/notes/ground-truth-workloads.md:
 *
 * The main thread repeats rounds; each round draws a pseudo-random chunk
 * length L (so the schedule cannot phase-lock to the sampling timer),
 * spends L iterations in main_leaf (main -> main_leaf), then switches to
 * the coroutine, which spends L iterations in co_leaf (co_entry -> co_run
 * -> co_leaf) and switches back:
 *
 *   main -> main_leaf                50%
 *   co_entry -> co_run -> co_leaf    50% (glibc's __start_context below)
 *
 * The coroutine's stack is COROUTINE_STACK bytes of an anonymous mapping,
 * followed by a PROT_NONE guard page.
 *
 * Usage: nofp_coroutine [-s SECONDS] [--truth]
 *   -s SECONDS  CPU seconds of work (default 2)
 *   --truth     print the ground truth and exit:
 *                 path main;main_leaf 0.5
 *                 path co_entry;co_run;co_leaf 0.5
 * At exit it prints one line on stderr:
 *   nofp_coroutine: rounds=R cpu_seconds=S
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "groundtruth.h"

#define COROUTINE_STACK (64 * 1024)

SINK_FUNCTION(sink)
LCG_LEAF(main_leaf)
LCG_LEAF(co_leaf)

static ucontext_t main_ctx, co_ctx;
static uint64_t co_chunk;	/* iterations for the coroutine's next turn */
static uint64_t co_result;

/* The coroutine's loop: one chunk per turn, then back to main. */
NOIPA void co_run(void)
{
	uint64_t x = 1;

	for (;;) {
		x = co_leaf(x, co_chunk) + 1;
		co_result = x;
		if (swapcontext(&co_ctx, &main_ctx))
			abort();
	}
}

/* The coroutine's first function (makecontext's). */
NOIPA void co_entry(void)
{
	co_run();
	abort();	/* never returns: no tail call to co_run */
}

int main(int argc, char **argv)
{
	double seconds = 2, t0;
	uint64_t rnd = RANDOM_SEED(7), rounds = 0, x = 1;
	char *stack;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--truth")) {
			truth_line("path", "main;main_leaf", 0.5);
			truth_line("path", "co_entry;co_run;co_leaf", 0.5);
			return 0;
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: nofp_coroutine [-s SECONDS] [--truth]\n");
			return 2;
		}
	}
	stack = mmap(NULL, COROUTINE_STACK + 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED || mprotect(stack + COROUTINE_STACK, 4096, PROT_NONE)) {
		perror("nofp_coroutine: the coroutine's stack");
		return 1;
	}
	if (getcontext(&co_ctx)) {
		perror("nofp_coroutine: getcontext");
		return 1;
	}
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = COROUTINE_STACK;
	co_ctx.uc_link = NULL;
	makecontext(&co_ctx, co_entry, 0);
	t0 = now(CLOCK_PROCESS_CPUTIME_ID);
	while (now(CLOCK_PROCESS_CPUTIME_ID) - t0 < seconds) {
		for (int i = 0; i < 64; i++, rounds++) {
			uint64_t len = CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX);

			x = main_leaf(x, len) + 1;
			co_chunk = len;
			if (swapcontext(&main_ctx, &co_ctx))
				abort();
		}
	}
	result_sink = x ^ co_result;
	fprintf(stderr, "nofp_coroutine: rounds=%llu cpu_seconds=%.3f\n",
		(unsigned long long)rounds, now(CLOCK_PROCESS_CPUTIME_ID) - t0);
	return 0;
}
