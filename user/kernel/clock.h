/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kernel/clock.h - the clock of the BPF program's timestamps.
 *
 * bpf_ktime_get_ns() reads CLOCK_MONOTONIC, so every time_ns of a record
 * and every deadline of the collector is in that clock, in nanoseconds.
 */
#ifndef BPFPROF_CLOCK_H
#define BPFPROF_CLOCK_H

#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

/* Now, in ns of @clk (CLOCK_MONOTONIC for everything compared with samples). */
static inline uint64_t clock_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Now in CLOCK_MONOTONIC ns: the BPF program's clock. */
static inline uint64_t monotonic_ns(void)
{
	return clock_now_ns(CLOCK_MONOTONIC);
}

/* CPU time (user + system, s) this process's threads used so far; reaped
 * children (the profiled command) are not in it. */
static inline double own_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

#endif /* BPFPROF_CLOCK_H */
