// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_qsort - a CPU-bound workload whose hot paths go through Debian's
 * libc (built without frame pointers) and back, built itself without frame
 * pointers (-O2 -g -fomit-frame-pointer).
 *
 * This file owns the workload of tests/integration/dwarf_libc.sh: stacks
 * that only an unwinder using the CFI of both the program and libc.so.6
 * walks up to main.  Each round, on the main thread:
 *
 *   main -> sort_round -> qsort [libc: qsort_r, msort_with_tmp, ...]
 *        -> cmp_items -> item_key        (the comparisons: most of the time)
 *   main -> copy_round -> memcpy [libc]  (a libc leaf, about 8%)
 *   main -> scan_round -> strlen [libc]  (short strings: a good part of
 *        the time is in the call itself, the PLT stub strlen@plt, whose
 *        CFI computes the CFA from rip; about 25%)
 *
 * item_key does a short serial LCG loop, so the comparison callbacks, not
 * libc's merge code, take most of the CPU time; the samples in libc's own
 * code (memcpy, the merge loop) have a libc function as their leaf.  The
 * array sizes vary pseudo-randomly per round.  Every function of ours is
 * noipa and uses the results of its calls, so none is inlined, cloned or
 * left by a tail call (libc itself may tail-call, e.g. qsort -> qsort_r).
 * The LCG step, xorshift, --wait plumbing and command line are
 * groundtruth.h's.
 *
 * Usage: nofp_qsort [-s SECONDS] [--wait]
 *   -s SECONDS  CPU seconds of work after the release (default 2)
 *   --wait      print "ready PID" on stdout and block until SIGUSR1
 *               arrives, so a profiler can attach first
 * At exit it prints one line on stderr:
 *   nofp_qsort: rounds=R copied_mib=M cpu_seconds=S
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

/* Items per sort: 24 bytes each, so qsort's merge sort copies structs. */
#define SORT_MIN 300
#define SORT_MAX 900
/* memcpy calls per copy round, and their largest size in bytes. */
#define COPIES 40
#define COPY_BYTES (256 * 1024)

struct item {
	uint64_t value;
	uint64_t salt;
	uint64_t index;
};

static struct item items[SORT_MAX];
static char copy_src[COPY_BYTES], copy_dst[COPY_BYTES];
/* strlen calls per scan round, over NAMES short strings. */
#define SCANS 250000
#define NAMES 64
static char names[NAMES][16];

/* An expensive sort key: a few dozen dependent multiply-adds. */
NOIPA uint64_t item_key(const struct item *it)
{
	uint64_t x = it->value ^ it->salt;

	LCG_STEPS(x, 24);
	return x >> 1;
}

NOIPA int cmp_items(const void *a, const void *b)
{
	uint64_t ka = item_key(a);
	uint64_t kb = item_key(b);

	return ka < kb ? -1 : ka > kb;
}

NOIPA uint64_t sort_round(uint64_t *rnd)
{
	size_t n = CHUNK_LENGTH(rnd, SORT_MIN, SORT_MAX);

	for (size_t i = 0; i < n; i++) {
		items[i].value = next_random(rnd);
		items[i].salt = i * 0x9e3779b97f4a7c15ULL;
		items[i].index = i;
	}
	qsort(items, n, sizeof(items[0]), cmp_items);
	return items[0].index + items[n - 1].value + n;
}

NOIPA uint64_t copy_round(uint64_t *rnd)
{
	uint64_t sum = 0;

	for (int i = 0; i < COPIES; i++) {
		size_t len = COPY_BYTES / 2 + next_random(rnd) % (COPY_BYTES / 2);

		/* copy_dst is read afterwards: the copy cannot be dropped. */
		memcpy(copy_dst, copy_src + (*rnd & 63), len - 64);
		sum += (uint64_t)copy_dst[len / 2] + len;
	}
	return sum;
}

NOIPA uint64_t scan_round(uint64_t *rnd)
{
	uint64_t sum = 0, r = next_random(rnd);

	for (int i = 0; i < SCANS; i++)
		sum += strlen(names[(r + (uint64_t)i * 7) % NAMES]);
	return sum;
}

int main(int argc, char **argv)
{
	int wait = 0;
	double seconds = 2.0;

	parse_seconds_wait(argc, argv, "nofp_qsort", &seconds, &wait);

	sigset_t set;
	block_release_signal(&set);
	memset(copy_src, 0x5a, sizeof(copy_src));
	for (int i = 0; i < NAMES; i++)
		memset(names[i], 'a' + i % 26, 1 + i % 15);

	if (wait && wait_for_release(&set)) {
		perror("nofp_qsort: sigwait");
		return 1;
	}

	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = t0 + seconds;
	uint64_t rnd = RANDOM_SEED(0), x = 0, rounds = 0, copied = 0;

	/* One round is a few ms: the clock is read rarely enough. */
	while (now(CLOCK_THREAD_CPUTIME_ID) < end) {
		for (int i = 0; i < 8; i++)
			x += sort_round(&rnd);
		x += copy_round(&rnd);
		x += scan_round(&rnd);
		copied += COPIES * COPY_BYTES * 3 / 4;
		rounds++;
	}
	result_sink = x;
	fprintf(stderr, "nofp_qsort: rounds=%llu copied_mib=%llu cpu_seconds=%.3f\n",
		(unsigned long long)rounds, (unsigned long long)(copied >> 20),
		now(CLOCK_THREAD_CPUTIME_ID) - t0);
	return 0;
}
