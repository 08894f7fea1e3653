// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench_work.c - a fixed amount of CPU work for the overhead benchmarks
 * (tests/bench/run): `bench_work [-t THREADS] [-n ITERATIONS] [-x]`.
 *
 * Each of THREADS worker threads (default 1) runs ITERATIONS (default 10^9)
 * serial 64-bit LCG steps, in chunks of pseudo-random length (no phase
 * locking with the sampling timer) at the bottom of call chains 8..23
 * frames deep ending in one of four leaf functions, so profilers walk
 * realistic stacks.  The workers are created first and wait; the program
 * prints "bench_work: ready pid PID" and blocks until it receives SIGUSR1
 * (so profilers attach before the work starts; -x skips the wait).  Then it
 * times the work phase only and prints
 *   bench_work: threads T iterations N wall_s W cpu_s C ns_per_iter X
 * with the wall time from release to the last worker's end and the CPU time
 * the process used in between (CLOCK_PROCESS_CPUTIME_ID), and exits 0.
 * The LCG step and leaf are groundtruth.h's.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

#define MAX_THREADS 256

static uint64_t iterations = 1000000000ull;
static pthread_barrier_t start_barrier;

/* Leaves call this at the end so they keep their frame pointer. */
static SINK_FUNCTION(touch)

/* Four leaves with the same loop, each returning touch(x + its salt). */
static LCG_LEAF_RETURNING(leaf_a, touch(x + 1))
static LCG_LEAF_RETURNING(leaf_b, touch(x + 2))
static LCG_LEAF_RETURNING(leaf_c, touch(x + 3))
static LCG_LEAF_RETURNING(leaf_d, touch(x + 4))

NOIPA static uint64_t descend(int depth, int leaf, uint64_t x, uint64_t n)
{
	uint64_t r;

	if (depth > 0)
		r = descend(depth - 1, leaf, x, n);
	else if (leaf == 0)
		r = leaf_a(x, n);
	else if (leaf == 1)
		r = leaf_b(x, n);
	else if (leaf == 2)
		r = leaf_c(x, n);
	else
		r = leaf_d(x, n);
	return r + 1;	/* not a tail call */
}

static void *worker(void *arg)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1), x = rng, left = iterations;

	pthread_barrier_wait(&start_barrier);
	while (left) {
		uint64_t chunk;

		rng = rng * LCG_MUL + LCG_ADD;
		chunk = 20000 + (rng >> 33) % 60000;	/* 20k..80k steps, ~25..100 us */
		if (chunk > left)
			chunk = left;
		x = descend(8 + (int)((rng >> 20) & 15), (int)((rng >> 40) & 3), x, chunk);
		left -= chunk;
	}
	result_sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tids[MAX_THREADS];
	int threads = 1, no_wait = 0, opt, sig;
	double w0, c0, w1, c1;
	sigset_t set;

	while ((opt = getopt(argc, argv, "t:n:x")) != -1) {
		switch (opt) {
		case 't': threads = atoi(optarg); break;
		case 'n': iterations = strtoull(optarg, NULL, 0); break;
		case 'x': no_wait = 1; break;
		default:
			fprintf(stderr, "usage: bench_work [-t THREADS] [-n ITERATIONS] [-x]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > MAX_THREADS || !iterations) {
		fprintf(stderr, "bench_work: bad -t or -n\n");
		return 2;
	}
	/* Workers inherit the blocked SIGUSR1: only sigwait() below takes it. */
	block_release_signal(&set);
	pthread_barrier_init(&start_barrier, NULL, threads + 1);
	for (int i = 0; i < threads; i++) {
		int err = pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)i);

		if (err) {
			fprintf(stderr, "bench_work: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	printf("bench_work: ready pid %d\n", (int)getpid());
	fflush(stdout);
	if (!no_wait && sigwait(&set, &sig)) {
		fprintf(stderr, "bench_work: sigwait failed\n");
		return 1;
	}
	w0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	pthread_barrier_wait(&start_barrier);
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	w1 = now(CLOCK_MONOTONIC);
	c1 = now(CLOCK_PROCESS_CPUTIME_ID);
	printf("bench_work: threads %d iterations %llu wall_s %.6f cpu_s %.6f ns_per_iter %.4f\n",
	       threads, (unsigned long long)iterations, w1 - w0, c1 - c0,
	       (c1 - c0) * 1e9 / ((double)iterations * threads));
	fflush(stdout);
	return 0;
}
