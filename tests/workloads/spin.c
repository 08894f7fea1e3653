// SPDX-License-Identifier: BSD-2-Clause
/*
 * spin.c - the simplest busy workload: `spin SECONDS [THREADS]` burns CPU in
 * spin_loop() (called from main or from each thread) for SECONDS of wall
 * time and exits 0.  Used where only "some CPU time" matters.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static double seconds;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static uint64_t spin_loop(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void *spin_thread(void *arg)
{
	double end = now() + seconds;
	uint64_t x = 1;

	while (now() < end)
		x = spin_loop(x);
	return (void *)(uintptr_t)(x & 1);
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t[256];

	seconds = argc > 1 ? atof(argv[1]) : 1.0;
	for (int i = 1; i < threads && i < 256; i++)
		pthread_create(&t[i], NULL, spin_thread, NULL);
	spin_thread(NULL);
	for (int i = 1; i < threads && i < 256; i++)
		pthread_join(t[i], NULL);
	return 0;
}
