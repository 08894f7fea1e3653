// SPDX-License-Identifier: BSD-2-Clause
/*
 * shares - a CPU-bound workload whose profile is known in advance.
 *
 * This file owns the ground truth used by the profile-accuracy tests (see
 * /work/shared/notes/ground-truth-workloads.md for the rules it follows);
 * the loop body, sink(), calibration and --wait plumbing are groundtruth.h's.
 *
 * Every busy thread runs busy_loop(), which repeats rounds of work.  Each
 * round draws a pseudo-random chunk length L (so the schedule cannot
 * phase-lock to the sampling timer) and spends
 *
 *   5 L iterations in leaf_a, called as busy_loop -> phase_a -> leaf_a  (50%)
 *   3 L iterations in leaf_b, called as busy_loop -> phase_b -> leaf_b  (30%)
 *   2 L iterations in leaf_c, called as busy_loop -> leaf_c             (20%)
 *
 * All three leaves run the same loop body (one serial 64-bit LCG step per
 * iteration), so CPU time is proportional to iterations and the shares
 * above are exact up to the per-round overhead (a few ns per ~40 us round).
 * Thread 0 is the main thread: its stacks are
 * main -> run_thread -> busy_loop -> phase_a -> leaf_a etc.; threads 1..
 * start in thread_main (start_thread -> thread_main -> run_thread -> ...).
 * Nothing is inlined into main on those paths: go tool pprof 1.19 cannot
 * name a caller address that lies in an inlined region of main.
 *
 * Hot leaves end by calling sink() so that GCC keeps their frame pointer
 * set up (leaf functions lose it, and a frame-pointer unwinder would then
 * skip their caller).  Every function that must be its own frame is
 * noipa; results are used after each call so none becomes a tail call.
 *
 * Usage: shares [-t THREADS] [-s SECONDS] [--wait] [--truth]
 *   -t THREADS  busy threads, including the main thread (default 1)
 *   -s SECONDS  CPU seconds of work per thread (default 2); the iteration
 *               budget is calibrated before the work starts
 *   --wait      after calibration print "ready PID" on stdout and block until
 *               SIGUSR1 arrives, so a profiler can attach first
 *   --truth     print the ground truth as machine-readable lines and exit:
 *                 share FUNCTION FRACTION     flat (self) share of samples
 *                 path F1;F2;...;LEAF FRACTION  call path, root first
 *                 root F1;F2                     callers of busy_loop on thread 0
 * At exit it prints one line on stderr:
 *   shares: threads=N rounds=R cpu_seconds=S wall_seconds=W
 * where cpu_seconds is the CPU time all busy threads spent from release to
 * the end of their work (CLOCK_THREAD_CPUTIME_ID), i.e. what a profiler
 * running during that time should account for.
 */
#define _GNU_SOURCE
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

/* Iterations per round in each leaf, in units of L: the truth's weights. */
#define WEIGHT_A 5
#define WEIGHT_B 3
#define WEIGHT_C 2
#define WEIGHTS (WEIGHT_A + WEIGHT_B + WEIGHT_C)

static uint64_t rounds_per_thread;

/* Keeps the hot leaves non-leaf functions (see the file comment). */
SINK_FUNCTION(sink)

LCG_LEAF(leaf_a)
LCG_LEAF(leaf_b)
LCG_LEAF(leaf_c)

/* Same loop as the leaves; only used before the profiled work starts. */
LCG_LEAF(calibrate_loop)

NOIPA uint64_t phase_a(uint64_t x, uint64_t n)
{
	uint64_t r = leaf_a(x, n);

	return r + 1;
}

NOIPA uint64_t phase_b(uint64_t x, uint64_t n)
{
	uint64_t r = leaf_b(x, n);

	return r + 1;
}

NOIPA uint64_t busy_loop(uint64_t seed, uint64_t rounds)
{
	uint64_t rnd = RANDOM_SEED(seed);
	uint64_t x = seed;

	for (uint64_t r = 0; r < rounds; r++) {
		uint64_t len = CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX);

		x = phase_a(x, WEIGHT_A * len);
		x = phase_b(x, WEIGHT_B * len);
		x = leaf_c(x, WEIGHT_C * len);
	}
	return x + 1;
}

/* Rounds that take about @seconds of CPU time on one thread. */
NOIPA uint64_t calibrate(double seconds)
{
	/* ~10 ms per calibration run. */
	double ns_per_iter = ns_per_iteration(calibrate_loop, 10u << 20);
	double iters_per_round = WEIGHTS * (CHUNK_MIN + CHUNK_MAX) / 2.0;
	uint64_t rounds = seconds * 1e9 / (ns_per_iter * iters_per_round);

	return rounds ? rounds : 1;
}

struct thread_arg {
	pthread_t handle;
	int index;
	double cpu_seconds;
};

static struct start_gate gate = START_GATE_INIT;

NOIPA void run_thread(struct thread_arg *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "shares-%d", arg->index);
	pthread_setname_np(pthread_self(), name);
	wait_for_start(&gate);
	double t0 = now(CLOCK_THREAD_CPUTIME_ID);
	result_sink = busy_loop(arg->index + 1, rounds_per_thread);
	arg->cpu_seconds = now(CLOCK_THREAD_CPUTIME_ID) - t0;
}

NOIPA void *thread_main(void *p)
{
	run_thread(p);
	return NULL;
}

static void print_truth(void)
{
	truth_line("share", "leaf_a", (double)WEIGHT_A / WEIGHTS);
	truth_line("share", "leaf_b", (double)WEIGHT_B / WEIGHTS);
	truth_line("share", "leaf_c", (double)WEIGHT_C / WEIGHTS);
	truth_line("path", "busy_loop;phase_a;leaf_a", (double)WEIGHT_A / WEIGHTS);
	truth_line("path", "busy_loop;phase_b;leaf_b", (double)WEIGHT_B / WEIGHTS);
	truth_line("path", "busy_loop;leaf_c", (double)WEIGHT_C / WEIGHTS);
	printf("root main;run_thread\n");
}

static void usage(void)
{
	fprintf(stderr, "usage: shares [-t THREADS] [-s SECONDS] [--wait] [--truth]\n");
	exit(2);
}

/*
 * In .text, not .text.startup where GCC puts main at -O2: go tool pprof
 * 1.19 does not find functions in the compile unit's second address range
 * and would show main as [shares].
 */
__attribute__((section(".text"))) int main(int argc, char **argv)
{
	int threads = 1, wait = 0;
	double seconds = 2.0;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			threads = strtol(argv[++i], &end, 10);
			if (*end || threads < 1 || threads > 1024)
				usage();
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			seconds = strtod(argv[++i], &end);
			if (*end || seconds <= 0)
				usage();
		} else if (!strcmp(argv[i], "--wait")) {
			wait = 1;
		} else if (!strcmp(argv[i], "--truth")) {
			print_truth();
			return 0;
		} else {
			usage();
		}
	}

	/* Block SIGUSR1 before any thread exists, so all inherit the mask. */
	sigset_t set;
	block_release_signal(&set);

	rounds_per_thread = calibrate(seconds);

	struct thread_arg *args = calloc(threads, sizeof(*args));
	if (!args) {
		perror("shares: calloc");
		return 1;
	}
	for (int i = 1; i < threads; i++) {
		args[i].index = i;
		int err = pthread_create(&args[i].handle, NULL, thread_main, &args[i]);
		if (err) {
			fprintf(stderr, "shares: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}

	if (wait && wait_for_release(&set)) {
		perror("shares: sigwait");
		return 1;
	}

	double w0 = now(CLOCK_MONOTONIC);
	release_threads(&gate);
	run_thread(&args[0]);
	double cpu = args[0].cpu_seconds;
	for (int i = 1; i < threads; i++) {
		pthread_join(args[i].handle, NULL);
		cpu += args[i].cpu_seconds;
	}
	fprintf(stderr, "shares: threads=%d rounds=%llu cpu_seconds=%.3f wall_seconds=%.3f\n",
		threads, (unsigned long long)rounds_per_thread, cpu, now(CLOCK_MONOTONIC) - w0);
	free(args);
	return 0;
}
