// SPDX-License-Identifier: BSD-2-Clause
/*
 * syscalls - a workload that spends a known part of its time in the
 * kernel, for the kernel-stack tests (rules:
 * /work/shared/notes/ground-truth-workloads.md).
 *
 * This file owns that workload.  Each round draws a pseudo-random chunk
 * length L and runs
 *
 *   user_part(L)   L LCG iterations in user space                 main -> user_part
 *   sys_part(R)    R reads of BLOCK bytes from /dev/zero          main -> sys_part -> do_read
 *
 * do_read() issues the read(2) system call itself (no libc wrapper, which
 * has no frame pointer), so every kernel sample's user stack is
 * do_read <- sys_part <- main.  With 64 KiB blocks the kernel time is nearly
 * all clearing the user buffer (clear_user / iov_iter_zero under read_zero).
 * R is chosen per round from a calibration so that the kernel part is about
 * KERNEL_PCT percent of the CPU time; the measured truth is what perf sees,
 * this is only the target.  The LCG leaf, sink() and --wait plumbing are
 * groundtruth.h's.
 *
 * Usage: syscalls [-k KERNEL_PCT] [-s SECONDS] [--wait]
 *   -k PCT      target share of kernel time, 0..100 (default 50)
 *   -s SECONDS  wall seconds to run after release (default 5)
 *   --wait      after calibration print "ready PID" and block until SIGUSR1
 * At exit it prints on stderr
 *   syscalls: rounds=N reads=R user_seconds=U sys_seconds=S
 * with the process' user and system CPU time from getrusage.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

/* Chunk length range of user_part() in iterations. */
#define USER_CHUNK_MIN 10000
#define USER_CHUNK_MAX 50000
#define BLOCK (64 * 1024)

static char buffer[BLOCK] __attribute__((aligned(4096)));

SINK_FUNCTION(sink)

/* read(2) straight into the kernel, from a frame with a frame pointer. */
NOIPA long do_read(int fd, void *buf, unsigned long len)
{
	long ret;
#if defined(__x86_64__)
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(len)
			 : "rcx", "r11", "memory");
#else
	ret = syscall(SYS_read, fd, buf, len);
#endif
	return (long)sink((uint64_t)ret);
}

LCG_LEAF(user_part)

NOIPA uint64_t sys_part(int fd, uint64_t reads)
{
	uint64_t got = 0;

	for (uint64_t i = 0; i < reads; i++) {
		long n = do_read(fd, buffer, BLOCK);

		if (n > 0)
			got += (uint64_t)n;
	}
	return sink(got);
}

/* Best-of-five CPU time of @fn-like work: iterations and reads. */
static void calibrate(int fd, double *ns_iter, double *ns_read)
{
	double best_i = 1e9, best_r = 1e9;
	uint64_t x = 1;

	for (int i = 0; i < 5; i++) {
		double t0 = now(CLOCK_THREAD_CPUTIME_ID);

		x = user_part(x, 1u << 20);
		double t1 = now(CLOCK_THREAD_CPUTIME_ID);
		x += sys_part(fd, 200);
		double t2 = now(CLOCK_THREAD_CPUTIME_ID);
		if (t1 - t0 < best_i)
			best_i = t1 - t0;
		if (t2 - t1 < best_r)
			best_r = t2 - t1;
	}
	result_sink = x;
	*ns_iter = best_i * 1e9 / (1u << 20);
	*ns_read = best_r * 1e9 / 200;
}

static void usage(void)
{
	fprintf(stderr, "usage: syscalls [-k KERNEL_PCT] [-s SECONDS] [--wait]\n");
	exit(2);
}

__attribute__((section(".text"))) int main(int argc, char **argv)
{
	double pct = 50, seconds = 5;
	int wait = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-k") && i + 1 < argc)
			pct = atof(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else
			usage();
	}
	if (pct < 0 || pct >= 100 || seconds <= 0)
		usage();
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("syscalls: /dev/zero");
		return 1;
	}
	sigset_t set;
	block_release_signal(&set);
	double ns_iter, ns_read;
	calibrate(fd, &ns_iter, &ns_read);
	if (wait)
		wait_for_release(&set);

	/* Kernel ns per user ns, so that kernel / (kernel + user) = pct. */
	double ratio = pct / (100 - pct);
	uint64_t rnd = RANDOM_SEED(0), x = 1, rounds = 0, reads = 0;
	double carry = 0, end = now(CLOCK_MONOTONIC) + seconds;

	while (now(CLOCK_MONOTONIC) < end) {
		uint64_t len = CHUNK_LENGTH(&rnd, USER_CHUNK_MIN, USER_CHUNK_MAX);

		x = user_part(x, len);
		carry += len * ns_iter * ratio / ns_read;
		uint64_t r = (uint64_t)carry;
		carry -= r;
		x += sys_part(fd, r);
		reads += r;
		rounds++;
	}
	result_sink = x;

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "syscalls: rounds=%llu reads=%llu user_seconds=%.3f sys_seconds=%.3f "
		"ns_per_iteration=%.3f ns_per_read=%.0f\n", (unsigned long long)rounds,
		(unsigned long long)reads, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ns_iter, ns_read);
	return 0;
}
