// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_paths - a CPU-bound workload with known call paths, built without
 * frame pointers (-O2 -g -fomit-frame-pointer, like distribution packages).
 *
 * This file owns the ground truth of the `--call-graph dwarf` tests
 * (tests/integration/dwarf_*.sh): their stacks can only be walked to main
 * with the CFI of the binary, never with a frame-pointer chain.  It follows
 * /work/shared/notes/ground-truth-workloads.md:
 *
 * The main thread repeats rounds; each round draws a pseudo-random chunk
 * length L (so the schedule cannot phase-lock to the sampling timer) and
 * spends
 *
 *   6 L iterations in leaf_a, called as main -> stage_a -> leaf_a  (60%)
 *   4 L iterations in leaf_b, called as main -> stage_b -> leaf_b  (40%)
 *
 * Both leaves run the same loop body (one serial 64-bit LCG step per
 * iteration), so CPU time is proportional to iterations.  Every function
 * on the paths is noipa and each call's result is used afterwards, so none
 * is inlined, cloned or turned into a tail call.  stage_a and stage_b keep
 * a small array on the stack, so their frames have a real size that an
 * unwinder must know from the CFI.
 *
 * Usage: nofp_paths [-s SECONDS] [--wait] [--truth]
 *   -s SECONDS  CPU seconds of work (default 2), calibrated before the work
 *   --wait      after calibration print "ready PID" on stdout and block
 *               until SIGUSR1 arrives, so a profiler can attach first
 *   --truth     print the ground truth and exit:
 *                 path F1;F2;...;LEAF FRACTION   call path, root first
 * At exit it prints one line on stderr:
 *   nofp_paths: rounds=R cpu_seconds=S wall_seconds=W
 * where cpu_seconds is the CPU time of the work (CLOCK_THREAD_CPUTIME_ID
 * from release to the end), what a profiler running meanwhile should see.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOIPA __attribute__((noipa))

#define LCG_MUL 6364136223846793005ULL
#define LCG_ADD 1442695040888963407ULL

/* Chunk length range in iterations; one round is 10 L iterations. */
#define CHUNK_MIN 2000
#define CHUNK_MAX 6000

static volatile uint64_t result_sink;

NOIPA uint64_t leaf_a(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * LCG_MUL + LCG_ADD;
	return x;
}

NOIPA uint64_t leaf_b(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * LCG_MUL + LCG_ADD;
	return x;
}

/* Same loop as the leaves; only used before the profiled work starts. */
NOIPA uint64_t calibrate_loop(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * LCG_MUL + LCG_ADD;
	return x;
}

/* A frame with locals: the caller's return address is not at sp + 8. */
NOIPA uint64_t stage_a(uint64_t x, uint64_t n)
{
	volatile uint64_t pad[8];

	for (int i = 0; i < 8; i++)
		pad[i] = x + i;
	uint64_t r = leaf_a(pad[3], n);

	return r + pad[5];
}

NOIPA uint64_t stage_b(uint64_t x, uint64_t n)
{
	volatile uint64_t pad[12];

	for (int i = 0; i < 12; i++)
		pad[i] = x ^ i;
	uint64_t r = leaf_b(pad[7], n);

	return r + pad[2];
}

/* xorshift64: the chunk-length generator, independent of the work. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t s = *state;

	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	*state = s;
	return s;
}

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Rounds that take about @seconds of CPU time. */
NOIPA uint64_t calibrate(double seconds)
{
	uint64_t n = 1u << 20, x = 1;
	double best = 1e9;

	/* Best of a few runs of ~10 ms each: the least disturbed one. */
	for (int i = 0; i < 5; i++) {
		double t0 = now(CLOCK_THREAD_CPUTIME_ID);

		x = calibrate_loop(x, 10 * n);
		double dt = now(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (dt < best)
			best = dt;
	}
	result_sink = x;
	double ns_per_iter = best * 1e9 / (10.0 * n);
	double iters_per_round = 10.0 * (CHUNK_MIN + CHUNK_MAX) / 2.0;
	uint64_t rounds = seconds * 1e9 / (ns_per_iter * iters_per_round);

	return rounds ? rounds : 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: nofp_paths [-s SECONDS] [--wait] [--truth]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int wait = 0;
	double seconds = 2.0;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			seconds = strtod(argv[++i], &end);
			if (*end || seconds <= 0)
				usage();
		} else if (!strcmp(argv[i], "--wait")) {
			wait = 1;
		} else if (!strcmp(argv[i], "--truth")) {
			printf("path main;stage_a;leaf_a 0.600000\n"
			       "path main;stage_b;leaf_b 0.400000\n");
			return 0;
		} else {
			usage();
		}
	}

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);

	uint64_t rounds = calibrate(seconds);

	if (wait) {
		int sig;

		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (sigwait(&set, &sig)) {
			perror("nofp_paths: sigwait");
			return 1;
		}
	}

	double w0 = now(CLOCK_MONOTONIC), t0 = now(CLOCK_THREAD_CPUTIME_ID);
	uint64_t rnd = 88172645463325252ULL, x = 1;

	for (uint64_t r = 0; r < rounds; r++) {
		uint64_t len = CHUNK_MIN + next_random(&rnd) % (CHUNK_MAX - CHUNK_MIN + 1);

		x = stage_a(x, 6 * len);
		x = stage_b(x, 4 * len);
	}
	result_sink = x;
	fprintf(stderr, "nofp_paths: rounds=%llu cpu_seconds=%.3f wall_seconds=%.3f\n",
		(unsigned long long)rounds, now(CLOCK_THREAD_CPUTIME_ID) - t0,
		now(CLOCK_MONOTONIC) - w0);
	return 0;
}
