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
 * unwinder must know from the CFI.  The loop body, calibration and --wait
 * plumbing are groundtruth.h's, compiled here without frame pointers.
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

#include "groundtruth.h"

/* Iterations per round in leaf_a and leaf_b, in units of L. */
#define WEIGHT_A 6
#define WEIGHT_B 4
#define WEIGHTS (WEIGHT_A + WEIGHT_B)

LCG_LEAF_RETURNING(leaf_a, x)
LCG_LEAF_RETURNING(leaf_b, x)

/* Same loop as the leaves; only used before the profiled work starts. */
LCG_LEAF_RETURNING(calibrate_loop, x)

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

/* Rounds that take about @seconds of CPU time. */
NOIPA uint64_t calibrate(double seconds)
{
	/* ~10 ms per calibration run. */
	double ns_per_iter = ns_per_iteration(calibrate_loop, 10u << 20);
	double iters_per_round = WEIGHTS * (CHUNK_MIN + CHUNK_MAX) / 2.0;
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
			truth_line("path", "main;stage_a;leaf_a", (double)WEIGHT_A / WEIGHTS);
			truth_line("path", "main;stage_b;leaf_b", (double)WEIGHT_B / WEIGHTS);
			return 0;
		} else {
			usage();
		}
	}

	sigset_t set;
	block_release_signal(&set);

	uint64_t rounds = calibrate(seconds);

	if (wait && wait_for_release(&set)) {
		perror("nofp_paths: sigwait");
		return 1;
	}

	double w0 = now(CLOCK_MONOTONIC), t0 = now(CLOCK_THREAD_CPUTIME_ID);
	uint64_t rnd = RANDOM_SEED(0), x = 1;

	for (uint64_t r = 0; r < rounds; r++) {
		uint64_t len = CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX);

		x = stage_a(x, WEIGHT_A * len);
		x = stage_b(x, WEIGHT_B * len);
	}
	result_sink = x;
	fprintf(stderr, "nofp_paths: rounds=%llu cpu_seconds=%.3f wall_seconds=%.3f\n",
		(unsigned long long)rounds, now(CLOCK_THREAD_CPUTIME_ID) - t0,
		now(CLOCK_MONOTONIC) - w0);
	return 0;
}
