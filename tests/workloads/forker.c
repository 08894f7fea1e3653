// SPDX-License-Identifier: BSD-2-Clause
/*
 * forker - a workload of many short-lived processes, for the tests of
 * following children (rules: /work/shared/notes/ground-truth-workloads.md).
 *
 * This file owns the truth of those tests: the parent calibrates, then
 * starts CHILDREN children one after the other (each waited for before the
 * next), and every child spends about MS milliseconds of CPU in
 * child_work() (an LCG loop in pseudo-random chunks, a fixed number of
 * iterations) and exits 0.  Most of a child's CPU time is in child_work();
 * the rest is fork/exec/exit bookkeeping in the kernel and, when exec'd,
 * ld.so's start-up.  Each child measures its own CPU time inside
 * child_work() and sends it to the parent through a pipe, so the share of
 * the children's CPU time spent there is measured, not assumed.  The loop
 * body, calibration and --wait plumbing are groundtruth.h's.
 *
 *   -m fork   the child calls child_work() right after fork()
 *   -m exec   the child execs this same binary as "forker --child ITERS"
 *             (a new image, mapped elsewhere by ASLR), which calls
 *             child_work(ITERS) from main, writes its time there to FD and
 *             exits; with -e, the child
 *             first spends its own MS milliseconds of CPU in
 *             pre_exec_work(), still running its parent's image
 *
 * Usage: forker [-n CHILDREN] [-m fork|exec] [-c MS] [-e MS] [-p MS] [--wait]
 *               [--exit CODE | --signal SIGNO]
 *   -n CHILDREN  how many children (default 100)
 *   -c MS        CPU milliseconds per child (default 20)
 *   -e MS        -m exec: CPU milliseconds per child before its exec, in
 *                pre_exec_work() (default 0)
 *   -p MS        CPU milliseconds the parent spends in parent_work() after
 *                the children (default 0)
 *   --wait       after calibration print "ready PID" and block until SIGUSR1
 *   --exit CODE  exit with CODE at the end (default 0)
 *   --signal N   at the end, kill itself with signal N (default action)
 * At the end the parent prints on stderr
 *   forker: children=N mode=M failed=F child_cpu_seconds=S self_cpu_seconds=T
 *           child_work_seconds=W
 * (on one line; S and T from getrusage, W the sum of the children's own
 * CLOCK_PROCESS_CPUTIME_ID time inside child_work()) and one line
 * "forker: child PID" per child.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

#define MAX_CHILDREN 10000

SINK_FUNCTION(sink)

/* The children's whole job: @n LCG iterations in pseudo-random chunks. */
NOIPA uint64_t child_work(uint64_t seed, uint64_t n)
{
	uint64_t rnd = RANDOM_SEED(seed), x = seed;

	while (n > 0) {
		uint64_t len = CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX);

		if (len > n)
			len = n;
		LCG_STEPS(x, len);
		n -= len;
		x = sink(x);
	}
	return sink(x);
}

/*
 * child_work(@seed, @n), timed: its CPU seconds (process CPU clock, kernel
 * time inside it included) go to @truth_fd as one double, if it is >= 0.
 */
static uint64_t timed_child_work(uint64_t seed, uint64_t n, int truth_fd)
{
	double t0 = now(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t r = child_work(seed, n);
	double seconds = now(CLOCK_PROCESS_CPUTIME_ID) - t0;

	if (truth_fd >= 0 && write(truth_fd, &seconds, sizeof(seconds)) != sizeof(seconds))
		perror("forker: child_work time");
	return r;
}

/* The seconds a finished child sent on @fd (non-blocking), or 0. */
static double child_work_seconds(int fd)
{
	double seconds;

	return read(fd, &seconds, sizeof(seconds)) == sizeof(seconds) ? seconds : 0;
}

LCG_LEAF(parent_work)
LCG_LEAF(pre_exec_work)
LCG_LEAF(calibrate_loop)

static double tv_seconds(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: forker [-n CHILDREN] [-m fork|exec] [-c MS] [-e MS] [-p MS] "
		"[--wait] [--exit CODE | --signal SIGNO]\n");
	exit(2);
}

/* Start child @i, which spends @pre iterations before an exec and sends
 * its time in child_work() to @truth_fd; returns its pid or -1. */
static pid_t spawn(int i, int exec_mode, const char *self, uint64_t iters, uint64_t pre,
		   int truth_fd)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (exec_mode) {
		char arg[32], fd[16];
		char *argv[] = { "forker", "--child", arg, fd, NULL };

		if (pre)
			result_sink = pre_exec_work(i + 1, pre);
		snprintf(arg, sizeof(arg), "%llu", (unsigned long long)iters);
		snprintf(fd, sizeof(fd), "%d", truth_fd);
		execv(self, argv);
		perror("forker: execv");
		_exit(126);
	}
	result_sink = timed_child_work(i + 1, iters, truth_fd);
	_exit(0);
}

__attribute__((section(".text"))) int main(int argc, char **argv)
{
	int children = 100, exec_mode = 0, wait = 0, exit_code = 0, signo = 0, failed = 0;
	double child_ms = 20, parent_ms = 0, pre_exec_ms = 0, work_seconds = 0;
	static pid_t pids[MAX_CHILDREN];
	char self[4096];
	int truth[2];

	if (argc == 4 && !strcmp(argv[1], "--child")) {
		result_sink = timed_child_work(getpid(), strtoull(argv[2], NULL, 10), atoi(argv[3]));
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--wait")) {
			wait = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "-n"))
			children = atoi(v);
		else if (!strcmp(a, "-m") && (!strcmp(v, "fork") || !strcmp(v, "exec")))
			exec_mode = !strcmp(v, "exec");
		else if (!strcmp(a, "-c"))
			child_ms = atof(v);
		else if (!strcmp(a, "-e"))
			pre_exec_ms = atof(v);
		else if (!strcmp(a, "-p"))
			parent_ms = atof(v);
		else if (!strcmp(a, "--exit"))
			exit_code = atoi(v);
		else if (!strcmp(a, "--signal"))
			signo = atoi(v);
		else
			usage();
	}
	if (children < 0 || children > MAX_CHILDREN || child_ms < 0 || parent_ms < 0 || pre_exec_ms < 0)
		usage();
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0) {
		perror("forker: /proc/self/exe");
		return 1;
	}
	self[len] = '\0';
	if (pipe(truth) || fcntl(truth[0], F_SETFL, O_NONBLOCK) ||
	    fcntl(truth[0], F_SETFD, FD_CLOEXEC)) {
		perror("forker: pipe");
		return 1;
	}

	sigset_t set;
	block_release_signal(&set);
	double ns = ns_per_iteration(calibrate_loop, 1u << 20);
	uint64_t child_iters = (uint64_t)(child_ms * 1e6 / ns);
	uint64_t parent_iters = (uint64_t)(parent_ms * 1e6 / ns);
	uint64_t pre_iters = (uint64_t)(pre_exec_ms * 1e6 / ns);

	if (wait)
		wait_for_release(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	for (int i = 0; i < children; i++) {
		int status;

		pids[i] = spawn(i, exec_mode, self, child_iters, pre_iters, truth[1]);
		if (pids[i] < 0) {
			perror("forker: fork");
			failed++;
			continue;
		}
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed++;
		work_seconds += child_work_seconds(truth[0]);
	}
	if (parent_iters)
		result_sink = parent_work(1, parent_iters);

	struct rusage self_ru, child_ru;
	getrusage(RUSAGE_SELF, &self_ru);
	getrusage(RUSAGE_CHILDREN, &child_ru);
	fprintf(stderr, "forker: children=%d mode=%s failed=%d child_cpu_seconds=%.3f "
		"self_cpu_seconds=%.3f child_work_seconds=%.3f\n", children,
		exec_mode ? "exec" : "fork", failed,
		tv_seconds(child_ru.ru_utime) + tv_seconds(child_ru.ru_stime),
		tv_seconds(self_ru.ru_utime) + tv_seconds(self_ru.ru_stime), work_seconds);
	for (int i = 0; i < children; i++)
		if (pids[i] > 0)
			fprintf(stderr, "forker: child %d\n", (int)pids[i]);
	if (signo) {
		signal(signo, SIG_DFL);
		kill(getpid(), signo);
		pause();
	}
	return failed ? 1 : exit_code;
}
