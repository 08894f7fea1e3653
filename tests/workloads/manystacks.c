// SPDX-License-Identifier: BSD-2-Clause
/*
 * manystacks - a CPU-bound workload with thousands of distinct call stacks,
 * for the tests that fill the kernel's stack and count maps on purpose.
 *
 * This file owns that workload.  Each round draws a pseudo-random depth D
 * (4..13) and a pseudo-random path: at each level it calls either walk_a()
 * or walk_b(), so there are about 2^14 distinct stacks; the innermost
 * call spends a pseudo-random chunk of LCG iterations in burn().
 * (Same loop body, from groundtruth.h, and frame rules as the other
 * workloads: /work/shared/notes/ground-truth-workloads.md.)
 *
 * Usage: manystacks [-s SECONDS] [-t THREADS]
 *   -s SECONDS  wall seconds to run (default 5)
 *   -t THREADS  threads running rounds (default 1)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "groundtruth.h"

static double seconds = 5;

SINK_FUNCTION(sink)
LCG_LEAF(burn)

NOIPA uint64_t walk_b(uint64_t x, uint64_t path, int depth, uint64_t n);

NOIPA uint64_t walk_a(uint64_t x, uint64_t path, int depth, uint64_t n)
{
	uint64_t r;

	if (depth == 0)
		r = burn(x, n);
	else if (path & 1)
		r = walk_b(x, path >> 1, depth - 1, n);
	else
		r = walk_a(x, path >> 1, depth - 1, n);
	return r + 1;
}

NOIPA uint64_t walk_b(uint64_t x, uint64_t path, int depth, uint64_t n)
{
	uint64_t r;

	if (depth == 0)
		r = burn(x, n);
	else if (path & 1)
		r = walk_b(x, path >> 1, depth - 1, n);
	else
		r = walk_a(x, path >> 1, depth - 1, n);
	return r + 3;
}

NOIPA void *run(void *arg)
{
	uint64_t rnd = RANDOM_SEED((uintptr_t)arg), x = 1;
	double end = now(CLOCK_MONOTONIC) + seconds;

	while (now(CLOCK_MONOTONIC) < end) {
		for (int i = 0; i < 16; i++) {
			uint64_t r = next_random(&rnd);
			uint64_t len = CHUNK_MIN + (r >> 20) % (CHUNK_MAX - CHUNK_MIN + 1);

			x = walk_a(x, r, 4 + (int)((r >> 50) % 10), len);
		}
	}
	result_sink = x;
	return NULL;
}

__attribute__((section(".text"))) int main(int argc, char **argv)
{
	int threads = 1;
	pthread_t t[64];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			threads = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: manystacks [-s SECONDS] [-t THREADS]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || seconds <= 0)
		return 2;
	for (int i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, run, (void *)(uintptr_t)i);
	run(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
