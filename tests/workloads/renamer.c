// SPDX-License-Identifier: BSD-2-Clause
/*
 * renamer - a workload whose threads change their names while they run,
 * for the test of names that follow renames (tests/integration/
 * thread_rename.sh; rules: /work/shared/notes/ground-truth-workloads.md).
 *
 * This file owns the truth of that test: which name (task comm) every
 * sample of each hot function must carry.  Each hot function below runs
 * only while its thread has one known name, so the leaf tells the name:
 *
 *   kid_work        each of -n short-lived children the parent starts
 *                   first, one after the other, renamed "rn-kid" with
 *                   prctl(PR_SET_NAME) as the first thing after fork()
 *   parent_work     the parent, "renamer", while its last child runs
 *   child_work      the forked child, renamed "rn-child" with
 *                   prctl(PR_SET_NAME) as the first thing after fork()
 *   thread_work     a thread of the child that renames itself "rn-thread"
 *                   (pthread_setname_np) as the first thing it does
 *   procfs_before   a second thread of the child, still under the name it
 *                   was created with ("rn-child") ...
 *   procfs_after    ... then after it wrote "rn-procfs" to
 *                   /proc/thread-self/comm (the path pthread_setname_np
 *                   takes for another thread)
 *   late_work       the child's main thread after its second rename,
 *                   prctl(PR_SET_NAME, "rn-late"), once child_work is done
 *   exec_work       the child after it exec'd this binary again: the
 *                   kernel names it after the file, "renamer" ...
 *   exec_late_work  ... and after it renamed itself "rn-exec"
 *
 * So one process (the child) carries four names in turn on its main
 * thread, and the names change both right after fork() or thread start,
 * mostly before a thread's first sample (rn-kid, rn-child, rn-thread), and
 * after many samples (rn-procfs, rn-late, renamer after the exec,
 * rn-exec).  Every function but kid_work runs -c MS CPU milliseconds of
 * LCG steps (procfs_before half of it), kid_work -k MS; the loop body,
 * calibration and --wait plumbing are groundtruth.h's.  The binary must be
 * called "renamer" (the exec'd image's name is its file's).
 *
 * Usage: renamer [-c MS] [-n KIDS] [-k MS] [--no-exec] [--wait] [--truth]
 *   -c MS    CPU milliseconds of each hot function (default 250)
 *   -n KIDS  short-lived children (default 40)
 *   -k MS    CPU milliseconds of each of them (default 10)
 *   --no-exec  the child exits after late_work instead of exec'ing: its
 *            last name is then "rn-late" (aggregated formats keep one set
 *            of mappings per process, the last image's, so they cannot
 *            name the functions a process ran before its exec)
 *   --wait   after calibration print "ready PID" and block until SIGUSR1
 *   --truth  print for each hot function "comm FUNCTION NAME" (the name its
 *            samples carry), "last FUNCTION NAME" (the last name of the
 *            thread that runs it) and "proc FUNCTION NAME" (the last name
 *            of that thread's process, i.e. of its main thread), then exit;
 *            with --no-exec, the truth of that run
 * At the end the parent prints on stderr
 *   renamer: kids N failed F child PID status S
 * (F is the number of short-lived children that failed, S is 0 when every
 * step of the last child worked).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "groundtruth.h"

SINK_FUNCTION(sink)
LCG_LEAF(kid_work)
LCG_LEAF(parent_work)
LCG_LEAF(child_work)
LCG_LEAF(thread_work)
LCG_LEAF(procfs_before)
LCG_LEAF(procfs_after)
LCG_LEAF(late_work)
LCG_LEAF(exec_work)
LCG_LEAF(exec_late_work)
LCG_LEAF(calibrate_loop)

/* The truth: function, name of its samples, last name of its thread, last
 * name of its process. */
static const char *const truth[][4] = {
	{ "kid_work", "rn-kid", "rn-kid", "rn-kid" },
	{ "parent_work", "renamer", "renamer", "renamer" },
	{ "child_work", "rn-child", "rn-exec", "rn-exec" },
	{ "thread_work", "rn-thread", "rn-thread", "rn-exec" },
	{ "procfs_before", "rn-child", "rn-procfs", "rn-exec" },
	{ "procfs_after", "rn-procfs", "rn-procfs", "rn-exec" },
	{ "late_work", "rn-late", "rn-exec", "rn-exec" },
	{ "exec_work", "renamer", "rn-exec", "rn-exec" },
	{ "exec_late_work", "rn-exec", "rn-exec", "rn-exec" },
};

static uint64_t iters;			/* LCG steps of one hot function */
static int no_exec;			/* --no-exec */

static void die(const char *what)
{
	perror(what);
	_exit(1);
}

static void set_name(const char *name)
{
	if (prctl(PR_SET_NAME, name, 0, 0, 0))
		die("renamer: prctl(PR_SET_NAME)");
}

NOIPA void *renamed_thread(void *arg)
{
	if (pthread_setname_np(pthread_self(), "rn-thread"))
		die("renamer: pthread_setname_np");
	result_sink = thread_work(3, iters);
	return NULL;
}

NOIPA void *procfs_thread(void *arg)
{
	int fd;

	result_sink = procfs_before(4, iters / 2);
	fd = open("/proc/thread-self/comm", O_WRONLY);
	if (fd < 0 || write(fd, "rn-procfs", 9) != 9)
		die("renamer: /proc/thread-self/comm");
	close(fd);
	result_sink = procfs_after(5, iters);
	return NULL;
}

/* The exec'd image: "renamer --exec-child ITERS". */
static int exec_child(uint64_t n)
{
	result_sink = exec_work(6, n);
	set_name("rn-exec");
	result_sink = exec_late_work(7, n);
	return 0;
}

/* The forked child: rename, two threads, rename again, exec. */
static void child(const char *self)
{
	pthread_t t1, t2;
	char arg[32];
	char *argv[] = { "renamer", "--exec-child", arg, NULL };

	set_name("rn-child");
	if (pthread_create(&t1, NULL, renamed_thread, NULL) ||
	    pthread_create(&t2, NULL, procfs_thread, NULL))
		die("renamer: pthread_create");
	result_sink = child_work(1, iters);
	set_name("rn-late");
	result_sink = late_work(2, iters);
	if (pthread_join(t1, NULL) || pthread_join(t2, NULL))
		die("renamer: pthread_join");
	if (no_exec)
		_exit(0);
	snprintf(arg, sizeof(arg), "%llu", (unsigned long long)iters);
	execv(self, argv);
	die("renamer: execv");
}

/* The short-lived children, one after the other; returns how many failed. */
static int run_kids(int kids, uint64_t kid_iters)
{
	int failed = 0;

	for (int i = 0; i < kids; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			set_name("rn-kid");
			result_sink = kid_work(10 + i, kid_iters);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
			failed++;
	}
	return failed;
}

/* --truth: the table, or with --no-exec the run without the exec. */
static void print_truth(void)
{
	for (size_t t = 0; t < sizeof(truth) / sizeof(truth[0]); t++) {
		const char *const *r = truth[t];
		const char *last = r[2], *proc = r[3];

		if (no_exec && !strncmp(r[0], "exec_", 5))
			continue;
		if (no_exec && !strcmp(last, "rn-exec"))
			last = "rn-late";
		if (no_exec && !strcmp(proc, "rn-exec"))
			proc = "rn-late";
		printf("comm %s %s\nlast %s %s\nproc %s %s\n", r[0], r[1], r[0], last, r[0],
		       proc);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: renamer [-c MS] [-n KIDS] [-k MS] [--no-exec] [--wait] "
		"[--truth]\n");
	exit(2);
}

__attribute__((section(".text"))) int main(int argc, char **argv)
{
	double ms = 250, kid_ms = 10;
	int wait = 0, status = 0, kids = 40, truth_only = 0, failed;
	char self[4096];
	sigset_t set;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--exec-child"))
		return exec_child(strtoull(argv[2], NULL, 10));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			ms = atof(argv[++i]);
			if (ms <= 0)
				usage();
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			kids = atoi(argv[++i]);
			if (kids < 0)
				usage();
		} else if (!strcmp(argv[i], "-k") && i + 1 < argc) {
			kid_ms = atof(argv[++i]);
			if (kid_ms <= 0)
				usage();
		} else if (!strcmp(argv[i], "--wait")) {
			wait = 1;
		} else if (!strcmp(argv[i], "--no-exec")) {
			no_exec = 1;
		} else if (!strcmp(argv[i], "--truth")) {
			truth_only = 1;
		} else {
			usage();
		}
	}
	if (truth_only) {
		print_truth();
		return 0;
	}
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0) {
		perror("renamer: /proc/self/exe");
		return 1;
	}
	self[len] = '\0';

	block_release_signal(&set);
	double ns = ns_per_iteration(calibrate_loop, 1u << 20);
	iters = (uint64_t)(ms * 1e6 / ns);
	if (wait)
		wait_for_release(&set);
	failed = run_kids(kids, (uint64_t)(kid_ms * 1e6 / ns));
	pid = fork();
	if (pid < 0) {
		perror("renamer: fork");
		return 1;
	}
	if (pid == 0)
		child(self);
	result_sink = parent_work(8, iters);
	if (waitpid(pid, &status, 0) != pid)
		status = -1;
	fprintf(stderr, "renamer: kids %d failed %d child %d status %d\n", kids, failed, (int)pid,
		status);
	return status || failed ? 1 : 0;
}
