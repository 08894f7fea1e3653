// SPDX-License-Identifier: BSD-2-Clause
/*
 * threadstorm - many threads busy at once, for the load tests:
 * `threadstorm THREADS SECONDS` starts THREADS threads (64 KiB stacks, so
 * 1,000 of them fit anywhere) that wait on a barrier until all exist, then
 * all spin in storm_loop() for SECONDS of wall time; it prints
 * "ready PID THREADS" on stdout just before they start, joins them and
 * exits 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double deadline, seconds;
static pthread_barrier_t start_line;
static volatile uint64_t sink_value;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static uint64_t storm_loop(uint64_t x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void *storm_thread(void *arg)
{
	uint64_t x = (uintptr_t)arg;

	pthread_barrier_wait(&start_line);
	while (now() < deadline)
		x = storm_loop(x);
	sink_value = x;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, started = 0;
	pthread_t *t = calloc(n > 0 ? n : 1, sizeof(*t));
	pthread_attr_t attr;

	seconds = argc > 2 ? atof(argv[2]) : 5.0;
	if (n < 1 || pthread_barrier_init(&start_line, NULL, (unsigned)n + 1))
		return 2;
	deadline = now() + 3600;	/* set for real once all threads exist */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[started], &attr, storm_thread, (void *)(uintptr_t)(i + 1)) == 0)
			started++;
	if (started != n) {
		fprintf(stderr, "threadstorm: only %d of %d threads started\n", started, n);
		_exit(1);	/* the others wait on the barrier forever */
	}
	/* Say so while the threads still wait: once they spin, this thread
	 * gets a thousandth of the CPU. */
	printf("ready %d %d\n", (int)getpid(), started);
	fflush(stdout);
	deadline = now() + seconds;
	pthread_barrier_wait(&start_line);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
	return started == n ? 0 : 1;
}
