// SPDX-License-Identifier: BSD-2-Clause
/*
 * vdso_loop.c - a workload that spends nearly all of its CPU time in the
 * vDSO: `vdso_loop [SECONDS]` (default 3) calls clock_gettime(CLOCK_MONOTONIC)
 * in a tight loop for SECONDS of wall time and prints the number of calls
 * on stderr.  With a vDSO-capable clocksource (tsc, kvm-clock) no call
 * enters the kernel, so the samples' leaf frames are in the [vdso] mapping
 * (__vdso_clock_gettime); used by tests/integration/vdso.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	struct timespec start, now;
	unsigned long calls = 0;
	double elapsed;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		clock_gettime(CLOCK_MONOTONIC, &now);
		calls++;
		elapsed = (double)(now.tv_sec - start.tv_sec) +
			  (double)(now.tv_nsec - start.tv_nsec) / 1e9;
	} while (elapsed < seconds);
	fprintf(stderr, "vdso_loop: %lu calls in %.2f s\n", calls, elapsed);
	return 0;
}
