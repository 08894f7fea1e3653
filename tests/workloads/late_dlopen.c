// SPDX-License-Identifier: BSD-2-Clause
/*
 * late_dlopen - a workload that maps a shared library late: after DELAY
 * CPU seconds in its own code it dlopen()s late_lib.so and spends the rest
 * of its run in that library.
 *
 * This file owns the workload of tests/integration/maps_refresh.sh: a
 * profiler that read /proc/PID/maps when the program started must read
 * them again when samples land in the new library, or it cannot name
 * them.  On the main thread:
 *
 *   main -> run_phase -> late_warmup -> sink          DELAY CPU seconds
 *   dlopen("DIR/late_lib.so"), DIR the directory of /proc/self/exe
 *   main -> run_phase -> late_lib_hot -> sink [late_lib.so]   SECONDS
 *
 * late_warmup and late_lib_hot (tests/workloads/late_lib.c) run the same
 * groundtruth.h LCG loop in chunks of pseudo-random length, so each
 * phase's share of the samples is its share of the CPU time (up to the
 * start of the process and the dlopen itself, well under 1%); run_phase
 * reads the thread's CPU clock every PHASE_CHECK chunks (about 0.3 ms).
 * The delay is CPU time, not sleep, so that a profiler has samples (and
 * has read the mappings) before the library exists.
 *
 * Usage: late_dlopen [-d DELAY] [-s SECONDS] [-l LIB] [--truth]
 *   -d DELAY    CPU seconds in late_warmup before the dlopen (default 0.3)
 *   -l LIB      the library's file name in this program's directory
 *               (default late_lib.so; nofp_late_lib.so is the same code
 *               built without frame pointers)
 *   -s SECONDS  CPU seconds in late_lib_hot after it (default 1.5)
 *   --truth     print the shares for these options and exit:
 *                 share late_warmup FRACTION
 *                 share late_lib_hot FRACTION
 * At exit it prints one line on stderr:
 *   late_dlopen: lib=PATH warmup_seconds=W lib_seconds=L cpu_seconds=S
 * where W and L are the CPU seconds of the two phases and S the CPU time
 * of the whole process.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

/* Chunks between two reads of the CPU clock (a system call). */
#define PHASE_CHECK 64

typedef uint64_t (*leaf_fn)(uint64_t x, uint64_t n);

/* Keeps late_warmup a non-leaf function (see groundtruth.h). */
SINK_FUNCTION(sink)

LCG_LEAF(late_warmup)

/* @leaf in chunks for @seconds of this thread's CPU time; returns the state. */
NOIPA uint64_t run_phase(leaf_fn leaf, double seconds, uint64_t seed)
{
	uint64_t rnd = RANDOM_SEED(seed), x = seed;
	double end = now(CLOCK_THREAD_CPUTIME_ID) + seconds;

	do {
		for (int i = 0; i < PHASE_CHECK; i++)
			x = leaf(x, CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX));
	} while (now(CLOCK_THREAD_CPUTIME_ID) < end);
	return x + 1;
}

/* @lib in the directory of this program: 0, or -1 with a message. */
static int library_path(const char *lib, char *path, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0) {
		perror("late_dlopen: readlink /proc/self/exe");
		return -1;
	}
	exe[n] = '\0';
	if (strchr(lib, '/') || (size_t)snprintf(path, size, "%s/%s", dirname(exe), lib) >= size) {
		fprintf(stderr, "late_dlopen: bad library name or path too long\n");
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: late_dlopen [-d DELAY] [-s SECONDS] [-l LIB] [--truth]\n");
	exit(2);
}

/* In .text, not .text.startup: see shares.c. */
__attribute__((section(".text"))) int main(int argc, char **argv)
{
	double delay = 0.3, seconds = 1.5;
	const char *lib_name = "late_lib.so";
	int truth = 0;

	for (int i = 1; i < argc; i++) {
		char *end;

		if ((!strcmp(argv[i], "-d") || !strcmp(argv[i], "-s")) && i + 1 < argc) {
			double v = strtod(argv[i + 1], &end);

			if (*end || v <= 0)
				usage();
			*(argv[i][1] == 'd' ? &delay : &seconds) = v;
			i++;
		} else if (!strcmp(argv[i], "-l") && i + 1 < argc) {
			lib_name = argv[++i];
		} else if (!strcmp(argv[i], "--truth")) {
			truth = 1;
		} else {
			usage();
		}
	}
	if (truth) {
		truth_line("share", "late_warmup", delay / (delay + seconds));
		truth_line("share", "late_lib_hot", seconds / (delay + seconds));
		return 0;
	}

	char path[PATH_MAX];
	if (library_path(lib_name, path, sizeof(path)))
		return 1;

	double t0 = now(CLOCK_THREAD_CPUTIME_ID);
	uint64_t x = run_phase(late_warmup, delay, 1);
	double t1 = now(CLOCK_THREAD_CPUTIME_ID);

	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "late_dlopen: dlopen: %s\n", dlerror());
		return 1;
	}
	leaf_fn hot = (leaf_fn)dlsym(lib, "late_lib_hot");
	if (!hot) {
		fprintf(stderr, "late_dlopen: dlsym late_lib_hot: %s\n", dlerror());
		return 1;
	}
	double t2 = now(CLOCK_THREAD_CPUTIME_ID);
	x = run_phase(hot, seconds, x);
	double t3 = now(CLOCK_THREAD_CPUTIME_ID);

	result_sink = x;
	fprintf(stderr, "late_dlopen: lib=%s warmup_seconds=%.3f lib_seconds=%.3f cpu_seconds=%.3f\n",
		path, t1 - t0, t3 - t2, now(CLOCK_PROCESS_CPUTIME_ID));
	/* The library stays mapped until exit: its samples need the mapping. */
	return 0;
}
