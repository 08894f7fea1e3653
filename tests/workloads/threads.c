// SPDX-License-Identifier: BSD-2-Clause
/*
 * threads - a multi-threaded workload whose per-thread and per-function
 * profile is known in advance (rules: /work/shared/notes/ground-truth-workloads.md).
 *
 * This file owns the ground truth of the per-thread tests: N worker threads,
 * named "tw-0" .. "tw-<N-1>" with pthread_setname_np(), share a total
 * budget of LCG iterations by weight (default 40,30,20,10).  All workers run
 * the same loop body, so over the whole run each thread's CPU time, and so
 * its share of the samples, is its weight over the sum of the weights,
 * however the scheduler interleaves them on few CPUs.  The main thread only
 * calibrates (before the workers start), starts and joins them.  The loop
 * body, calibration and --wait plumbing are groundtruth.h's.
 *
 * Inside every worker each round draws a pseudo-random chunk length L and
 * spends 7 L iterations in tw_main and 3 L in tw_side, both called from
 * worker(): the per-process function shares (70/30) hold at any moment of
 * the run, also in a window of it (system-wide tests).
 *
 * Usage: threads [-w W0,W1,...] [-s SECONDS] [--wait] [--truth]
 *   -w WEIGHTS  one positive integer per worker thread (default 40,30,20,10)
 *   -s SECONDS  CPU seconds of work of all workers together (default 2)
 *   --wait      after calibration print "ready PID" and block until SIGUSR1
 *   --truth     print the ground truth and exit:
 *                 share FUNCTION FRACTION    flat share of the process' samples
 *                 path F1;...;LEAF FRACTION  call path, root first
 *                 thread NAME FRACTION        share of the workers' samples
 * At exit it prints on stderr one line per worker,
 *   threads: tw-I weight W iterations N cpu_seconds S
 * and a last line "threads: workers=N cpu_seconds=S wall_seconds=W".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

/* Iterations per round in tw_main and tw_side, in units of L. */
#define WEIGHT_MAIN 7
#define WEIGHT_SIDE 3
#define WEIGHTS (WEIGHT_MAIN + WEIGHT_SIDE)
#define MAX_WORKERS 64

static const int default_weights[] = { 40, 30, 20, 10 };

SINK_FUNCTION(sink)
LCG_LEAF(tw_main)
LCG_LEAF(tw_side)
LCG_LEAF(calibrate_loop)

/* Runs rounds until @budget iterations are done; returns the count done. */
NOIPA uint64_t worker(uint64_t seed, uint64_t budget, uint64_t *done)
{
	uint64_t rnd = RANDOM_SEED(seed), x = seed, n = 0;

	while (n < budget) {
		uint64_t len = CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX);

		x = tw_main(x, WEIGHT_MAIN * len);
		x = tw_side(x, WEIGHT_SIDE * len);
		n += WEIGHTS * len;
	}
	*done = n;
	return x + 1;
}

/* Iterations that take @seconds of CPU time on one thread. */
NOIPA uint64_t calibrate(double seconds)
{
	return (uint64_t)(seconds * 1e9 / ns_per_iteration(calibrate_loop, 10u << 20));
}

struct worker_arg {
	pthread_t handle;
	int index, weight;
	uint64_t budget, done;
	double cpu_seconds;
};

static struct start_gate gate = START_GATE_INIT;

NOIPA void run_worker(struct worker_arg *a)
{
	char name[16];

	snprintf(name, sizeof(name), "tw-%d", a->index);
	pthread_setname_np(pthread_self(), name);
	wait_for_start(&gate);
	double t0 = now(CLOCK_THREAD_CPUTIME_ID);
	result_sink = worker(a->index + 1, a->budget, &a->done);
	a->cpu_seconds = now(CLOCK_THREAD_CPUTIME_ID) - t0;
}

NOIPA void *thread_main(void *p)
{
	run_worker(p);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: threads [-w W0,W1,...] [-s SECONDS] [--wait] [--truth]\n");
	exit(2);
}

static int parse_weights(const char *s, int *w)
{
	int n = 0;
	char *end;

	while (*s && n < MAX_WORKERS) {
		long v = strtol(s, &end, 10);

		if (end == s || v <= 0 || v > 1000000 || (*end && *end != ','))
			usage();
		w[n++] = (int)v;
		s = *end ? end + 1 : end;
	}
	if (*s || n == 0)
		usage();
	return n;
}

static void print_truth(const int *w, int n)
{
	long sum = 0;

	for (int i = 0; i < n; i++)
		sum += w[i];
	truth_line("share", "tw_main", (double)WEIGHT_MAIN / WEIGHTS);
	truth_line("share", "tw_side", (double)WEIGHT_SIDE / WEIGHTS);
	truth_line("path", "worker;tw_main", (double)WEIGHT_MAIN / WEIGHTS);
	truth_line("path", "worker;tw_side", (double)WEIGHT_SIDE / WEIGHTS);
	for (int i = 0; i < n; i++)
		printf("thread tw-%d %.6f\n", i, (double)w[i] / sum);
}

__attribute__((section(".text"))) int main(int argc, char **argv)
{
	int weights[MAX_WORKERS], n = 4, wait = 0, truth = 0;
	double seconds = 2.0;
	long sum = 0;

	memcpy(weights, default_weights, sizeof(default_weights));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-w") && i + 1 < argc) {
			n = parse_weights(argv[++i], weights);
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			char *end;

			seconds = strtod(argv[++i], &end);
			if (*end || seconds <= 0)
				usage();
		} else if (!strcmp(argv[i], "--wait")) {
			wait = 1;
		} else if (!strcmp(argv[i], "--truth")) {
			truth = 1;
		} else {
			usage();
		}
	}
	if (truth) {
		print_truth(weights, n);
		return 0;
	}

	sigset_t set;
	block_release_signal(&set);

	uint64_t total = calibrate(seconds);
	struct worker_arg args[MAX_WORKERS] = { 0 };

	for (int i = 0; i < n; i++)
		sum += weights[i];
	for (int i = 0; i < n; i++) {
		args[i].index = i;
		args[i].weight = weights[i];
		args[i].budget = (uint64_t)((double)total * weights[i] / sum);
		if (pthread_create(&args[i].handle, NULL, thread_main, &args[i])) {
			perror("threads: pthread_create");
			return 1;
		}
	}
	if (wait)
		wait_for_release(&set);
	double w0 = now(CLOCK_MONOTONIC), cpu = 0;

	release_threads(&gate);
	for (int i = 0; i < n; i++) {
		pthread_join(args[i].handle, NULL);
		cpu += args[i].cpu_seconds;
		fprintf(stderr, "threads: tw-%d weight %d iterations %llu cpu_seconds %.3f\n", i,
			args[i].weight, (unsigned long long)args[i].done, args[i].cpu_seconds);
	}
	fprintf(stderr, "threads: workers=%d cpu_seconds=%.3f wall_seconds=%.3f\n", n, cpu,
		now(CLOCK_MONOTONIC) - w0);
	return 0;
}
