// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_deep - a CPU-bound workload whose hot leaf runs under a deep
 * recursion, built without frame pointers (-O2 -g -fomit-frame-pointer,
 * like distribution packages).
 *
 * This file owns the ground truth of tests/integration/deep_stacks.sh: the
 * stacks of --max-stack beyond the 127 frames of frame-pointer and kernel
 * stacks.  It follows /work/shared/notes/ground-truth-workloads.md:
 *
 * The main thread repeats rounds; each round draws a pseudo-random chunk
 * length L (so the schedule cannot phase-lock to the sampling timer),
 * recurses DEPTH frames of deep_down() and spends L iterations of the LCG
 * loop in deep_leaf() at the bottom.  The way down and back up costs about
 * as much as 2 DEPTH calls, under 1% of a round, so nearly every sample of
 * the recursion is
 *
 *   main -> deep_down (DEPTH frames) -> deep_leaf
 *
 * deep_down is noipa and uses the result of its call (no inlining, no tail
 * call); its frame keeps one value in a volatile local, so it is 32 bytes
 * (see DEEP_FRAME_BYTES):
 * 2,000 frames take 64,000 bytes of stack, which a 64 KiB stack copy holds
 * (--call-graph dwarf,65528) and a 32 KiB one does not.
 *
 * With -b, big_frame() (a 600,000-byte frame, as rustc's
 * create_and_enter_global_ctxt keeps 540,128 bytes under every stack of a
 * compilation) sits between main and the recursion: tests/integration/
 * big_frames.sh, a CFA offset past the 256 KiB CFI_KIND_RSP holds:
 *
 *   main -> big_frame -> deep_down (DEPTH frames) -> deep_leaf
 *
 * Usage: nofp_deep [-s SECONDS | -r ROUNDS] [-n DEPTH] [-b] [--wait] [--truth]
 *   -s SECONDS  CPU seconds of work (default 2), calibrated before the work
 *   -r ROUNDS   ROUNDS rounds (1..10^9) without calibration: the recursion
 *               starts at once (young_processes.sh profiles a process's
 *               first milliseconds); a round is ~0.5 ms here
 *   -n DEPTH    frames of deep_down per round, 1..100000 (default 2000)
 *   -b          each round through big_frame (see above)
 *   --wait      after calibration print "ready PID" on stdout and block
 *               until SIGUSR1 arrives, so a profiler can attach first
 *   --truth     print the ground truth and exit:
 *                 depth deep_down DEPTH       frames of deep_down
 *                 frame deep_down BYTES       bytes of stack per frame
 *                 path main;deep_down*DEPTH;deep_leaf FRACTION
 * At exit it prints one line on stderr:
 *   nofp_deep: rounds=R depth=D cpu_seconds=S wall_seconds=W
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

#define DEFAULT_DEPTH 2000
#define MAX_DEPTH 100000
/* Bytes of stack per deep_down frame at -O2 on x86-64 (GCC 12): the
 * return address, 24 of locals and alignment.  tests/integration/
 * deep_stacks.sh reads the real size from the binary's CFI and fails if
 * it is not this. */
#define DEEP_FRAME_BYTES 32
/* Longer chunks than the default: the recursion itself stays under 1%. */
#define DEEP_CHUNK_MIN 200000
#define DEEP_CHUNK_MAX 600000

LCG_LEAF_RETURNING(deep_leaf, x)

/* Same loop as the leaf; only used before the profiled work starts. */
LCG_LEAF_RETURNING(calibrate_loop, x)

/* @depth more frames of itself, then deep_leaf(@x, @n). */
NOIPA uint64_t deep_down(uint64_t x, uint64_t n, unsigned depth)
{
	volatile uint64_t keep = x;	/* a local: the frame is not just a return address */
	uint64_t r = depth ? deep_down(x + 1, n, depth - 1) : deep_leaf(x, n);

	return r ^ keep;
}

/* Bytes of big_frame's array: its frame is a few bytes more. */
#define BIG_FRAME_BYTES 600000

/* deep_down(@x, @n, @depth) under a frame of over 600,000 bytes: both ends
 * of the array are written and read back (it stays on the stack). */
NOIPA uint64_t big_frame(uint64_t x, uint64_t n, unsigned depth)
{
	volatile uint8_t pad[BIG_FRAME_BYTES];
	uint64_t r;

	pad[0] = (uint8_t)x;
	pad[BIG_FRAME_BYTES - 1] = (uint8_t)n;
	r = deep_down(x, n, depth);
	return r ^ pad[0] ^ pad[BIG_FRAME_BYTES - 1];
}

/* Rounds that take about @seconds of CPU time. */
NOIPA uint64_t calibrate(double seconds)
{
	/* ~10 ms per calibration run. */
	double ns_per_iter = ns_per_iteration(calibrate_loop, 10u << 20);
	double iters_per_round = (DEEP_CHUNK_MIN + DEEP_CHUNK_MAX) / 2.0;
	uint64_t rounds = seconds * 1e9 / (ns_per_iter * iters_per_round);

	return rounds ? rounds : 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: nofp_deep [-s SECONDS | -r ROUNDS] [-n DEPTH] [-b] [--wait] "
		"[--truth]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int wait = 0, truth = 0, big = 0;
	double seconds = 2.0;
	unsigned long depth = DEFAULT_DEPTH, fixed_rounds = 0;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			seconds = strtod(argv[++i], &end);
			if (*end || seconds <= 0)
				usage();
		} else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
			fixed_rounds = strtoul(argv[++i], &end, 10);
			if (*end || fixed_rounds < 1 || fixed_rounds > 1000000000ul)
				usage();
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			depth = strtoul(argv[++i], &end, 10);
			if (*end || depth < 1 || depth > MAX_DEPTH)
				usage();
		} else if (!strcmp(argv[i], "-b")) {
			big = 1;
		} else if (!strcmp(argv[i], "--wait")) {
			wait = 1;
		} else if (!strcmp(argv[i], "--truth")) {
			truth = 1;
		} else {
			usage();
		}
	}
	if (truth) {
		printf("depth deep_down %lu\n", depth);
		printf("frame deep_down %d\n", DEEP_FRAME_BYTES);
		printf("path main;%sdeep_down*%lu;deep_leaf 1.000000\n", big ? "big_frame;" : "",
		       depth);
		return 0;
	}

	sigset_t set;
	block_release_signal(&set);

	uint64_t rounds = fixed_rounds ? fixed_rounds : calibrate(seconds);

	if (wait && wait_for_release(&set)) {
		perror("nofp_deep: sigwait");
		return 1;
	}

	double w0 = now(CLOCK_MONOTONIC), t0 = now(CLOCK_THREAD_CPUTIME_ID);
	uint64_t rnd = RANDOM_SEED(0), x = 1;

	/* deep_down(depth - 1) puts depth frames of itself on the stack. */
	for (uint64_t r = 0; r < rounds; r++) {
		uint64_t n = CHUNK_LENGTH(&rnd, DEEP_CHUNK_MIN, DEEP_CHUNK_MAX);

		x = big ? big_frame(x, n, (unsigned)depth - 1) : deep_down(x, n, (unsigned)depth - 1);
	}
	result_sink = x;
	fprintf(stderr, "nofp_deep: rounds=%llu depth=%lu cpu_seconds=%.3f wall_seconds=%.3f\n",
		(unsigned long long)rounds, depth, now(CLOCK_THREAD_CPUTIME_ID) - t0,
		now(CLOCK_MONOTONIC) - w0);
	return 0;
}
