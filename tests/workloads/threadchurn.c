// SPDX-License-Identifier: BSD-2-Clause
/*
 * threadchurn - threads made and ended as fast as one thread can, for
 * tests/integration/idle_wakeups.sh: `threadchurn SECONDS` creates a
 * thread that returns at once, joins it, and again, for SECONDS of wall
 * time (default 3); then prints "threadchurn: threads N" on stdout and
 * exits 0.  Each thread is a fork and an exit record for a profiler that
 * follows the process; the threads do no work, so they are seldom
 * sampled.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0, end = now() + seconds;
	long n = 0;

	while (now() < end) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL))
			return 1;
		pthread_join(t, NULL);
		n++;
	}
	printf("threadchurn: threads %ld\n", n);
	return 0;
}
