// SPDX-License-Identifier: BSD-2-Clause
/*
 * anon_exec - a workload that runs code from anonymous memory, as JIT
 * compilers do: the mapping has no file, so /proc/PID/maps gives it no
 * path (the hpctoolkit tests check that such code gets a module name).
 *
 * This file owns that workload.  It copies a small hand-assembled x86-64
 * function, n LCG steps on x (the loop body of groundtruth.h), into an
 * anonymous mapping made executable, then calls it in chunks of
 * pseudo-random length from anon_caller() (main -> anon_caller -> the
 * anonymous code) for SECONDS of wall time.
 *
 * Usage: anon_exec [-s SECONDS] [--wait]
 *   -s SECONDS  wall seconds to run after release (default 5)
 *   --wait      print "ready PID" and block until SIGUSR1
 * Prints "anon_exec: code at 0xADDR" on stderr when the code is in place;
 * exits 77 on other architectures (nothing to run).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "groundtruth.h"

typedef uint64_t (*lcg_fn)(uint64_t x, uint64_t n);

#if defined(__x86_64__)
/* uint64_t f(uint64_t x, uint64_t n): n steps of x = x * LCG_MUL + ADD32. */
static const uint8_t code[] = {
	0x48, 0x89, 0xf8,				/* mov rax, rdi */
	0x48, 0xb9, 0x2d, 0x7f, 0x95, 0x4c,		/* movabs rcx, LCG_MUL */
	0x2d, 0xf4, 0x51, 0x58,
	0x48, 0x85, 0xf6,				/* loop: test rsi, rsi */
	0x74, 0x0f,					/* je done */
	0x48, 0x0f, 0xaf, 0xc1,				/* imul rax, rcx */
	0x48, 0x05, 0x0f, 0x40, 0xa7, 0x14,		/* add rax, 0x14a7400f */
	0x48, 0xff, 0xce,				/* dec rsi */
	0xeb, 0xec,					/* jmp loop */
	0xc3,						/* done: ret */
};
#endif

SINK_FUNCTION(sink)

NOIPA uint64_t anon_caller(lcg_fn f, uint64_t x, uint64_t n)
{
	return sink(f(x, n));
}

static lcg_fn place_code(void)
{
#if defined(__x86_64__)
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return NULL;
	return (lcg_fn)p;
#else
	return NULL;
#endif
}

int main(int argc, char **argv)
{
	double seconds = 5;
	int wait = 0;
	sigset_t set;
	lcg_fn f;

	parse_seconds_wait(argc, argv, "anon_exec", &seconds, &wait);
	f = place_code();
	if (!f) {
		fprintf(stderr, "anon_exec: no anonymous code on this architecture\n");
		return 77;
	}
	/* the copy computes what the C loop does (with the low 32 bits of ADD) */
	if (f(1, 1) != LCG_MUL + 0x14a7400fULL || f(1, 2) != f(f(1, 1), 1)) {
		fprintf(stderr, "anon_exec: the copied code computes the wrong thing\n");
		return 1;
	}
	fprintf(stderr, "anon_exec: code at %p\n", (void *)f);
	block_release_signal(&set);
	if (wait)
		wait_for_release(&set);

	uint64_t rnd = RANDOM_SEED(7), x = 1;
	double end = now(CLOCK_MONOTONIC) + seconds;

	while (now(CLOCK_MONOTONIC) < end)
		x = anon_caller(f, x, CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX));
	result_sink = x;
	return 0;
}
