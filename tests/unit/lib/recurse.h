/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recurse.h - a workload inside a unit test that samples itself: a
 * recursion of known depth that then burns CPU, so that the sampled
 * stacks have a known number of frames (frame pointers: the unit tests'
 * CFLAGS).  Header-only; used by the kernel unit tests.
 */
#ifndef BPFPROF_TEST_RECURSE_H
#define BPFPROF_TEST_RECURSE_H

#include <stdint.h>
#include <time.h>

/* CPU time of this thread, in seconds. */
static inline double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* @depth frames of itself, then @seconds of CPU. */
__attribute__((noipa, unused)) static uint64_t recurse(unsigned depth, double seconds)
{
	volatile uint64_t keep = depth;
	uint64_t r = 1;

	if (depth)
		r = recurse(depth - 1, seconds);
	else
		for (double end = cpu_seconds() + seconds; cpu_seconds() < end;)
			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
	return r ^ keep;
}

#endif /* BPFPROF_TEST_RECURSE_H */
