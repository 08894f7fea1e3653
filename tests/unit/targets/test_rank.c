// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_rank.c - unit tests of the MPI rank read from a process's
 * environment (user/targets/procfs.c, procfs_env_rank() and
 * procfs_rank()): crafted environ blocks with no rank variable, empty and
 * garbage values, values out of range, the precedence of the four
 * variables, names that only start like them, a last entry without its
 * NUL; and a real child started with a given environment, read through
 * /proc/PID/environ.
 */
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "targets/procfs.h"

/* procfs_env_rank() of a string literal holding NUL-separated entries. */
#define RANK(lit) procfs_env_rank((lit), sizeof(lit) - 1)

static void test_missing(void **state)
{
	assert_int_equal(procfs_env_rank(NULL, 0), -1);
	assert_int_equal(procfs_env_rank("", 0), -1);
	assert_int_equal(RANK("PATH=/bin\0HOME=/root\0"), -1);
	/* Names that merely start or end like a rank variable. */
	assert_int_equal(RANK("PMI_RANKS=3\0XPMI_RANK=4\0PMI_RANK_X=5\0OMPI_COMM_WORLD_SIZE=4\0"),
			 -1);
	/* A name alone, no '=' */
	assert_int_equal(RANK("PMI_RANK\0"), -1);
}

static void test_values(void **state)
{
	assert_int_equal(RANK("PMI_RANK=0\0"), 0);
	assert_int_equal(RANK("A=1\0PMI_RANK=12\0B=2\0"), 12);
	assert_int_equal(RANK("PMI_RANK=007\0"), 7);
	assert_int_equal(RANK("PMI_RANK=2147483647\0"), 2147483647);
	/* The last entry without its NUL; a value cut by @len. */
	assert_int_equal(RANK("A=1\0SLURM_STEP_ID=0\0SLURM_PROCID=5"), 5);
	assert_int_equal(procfs_env_rank("PMI_RANK=123\0", 11), 12);
	/* Not a non-negative decimal integer. */
	assert_int_equal(RANK("PMI_RANK=\0"), -1);
	assert_int_equal(RANK("PMI_RANK=-1\0"), -1);
	assert_int_equal(RANK("PMI_RANK=+1\0"), -1);
	assert_int_equal(RANK("PMI_RANK= 1\0"), -1);
	assert_int_equal(RANK("PMI_RANK=1 \0"), -1);
	assert_int_equal(RANK("PMI_RANK=0x10\0"), -1);
	assert_int_equal(RANK("PMI_RANK=three\0"), -1);
	assert_int_equal(RANK("PMI_RANK=2147483648\0"), -1);
	assert_int_equal(RANK("PMI_RANK=99999999999999999999\0"), -1);
}

static void test_precedence(void **state)
{
	/* OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID: whatever
	 * order they are in. */
	assert_int_equal(RANK("SLURM_STEP_ID=0\0SLURM_PROCID=4\0PMI_RANK=3\0PMIX_RANK=2\0OMPI_COMM_WORLD_RANK=1\0"),
			 1);
	assert_int_equal(RANK("SLURM_STEP_ID=0\0SLURM_PROCID=4\0PMI_RANK=3\0PMIX_RANK=2\0"), 2);
	assert_int_equal(RANK("SLURM_STEP_ID=0\0SLURM_PROCID=4\0PMI_RANK=3\0"), 3);
	assert_int_equal(RANK("SLURM_STEP_ID=0\0SLURM_PROCID=4\0"), 4);
	/* The batch script: SLURM_PROCID=0, no step. */
	assert_int_equal(RANK("SLURM_PROCID=0\0SLURM_NODEID=0\0"), -1);
	assert_int_equal(RANK("SLURM_PROCID=0\0PMI_RANK=2\0"), 2);
	/* One set to garbage is passed over for the next. */
	assert_int_equal(RANK("OMPI_COMM_WORLD_RANK=\0PMIX_RANK=x\0SLURM_PROCID=9\0SLURM_STEP_ID=3\0"), 9);
	/* The first entry of a name counts. */
	assert_int_equal(RANK("PMI_RANK=6\0PMI_RANK=8\0"), 6);
	assert_int_equal(RANK("PMI_RANK=bad\0PMI_RANK=8\0SLURM_STEP_ID=1\0SLURM_PROCID=1\0"), 1);
}

/* The first bytes of /proc/@pid/@file into @buf ("" if unreadable). */
static void read_proc(pid_t pid, const char *file, char *buf, size_t size)
{
	char path[64];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = 0;
}

/* Whether process @pid runs /bin/sleep's image with its own environment
 * yet: exec renames the task before it lays out the new environment. */
static bool execed(pid_t pid)
{
	char comm[32], env[8];

	read_proc(pid, "comm", comm, sizeof(comm));
	read_proc(pid, "environ", env, sizeof(env));
	return !strncmp(comm, "sleep", 5) && env[0];
}

/* A child started with the environment @envp: its rank through /proc. */
static int32_t child_rank(char *const envp[])
{
	char *argv[] = { "sleep", "10", NULL };
	int32_t rank;
	pid_t pid;
	int status;

	assert_int_equal(posix_spawn(&pid, "/bin/sleep", NULL, NULL, argv, envp), 0);
	/* posix_spawn() may return before the child's exec: until then its
	 * environment is still a copy of ours */
	for (int i = 0; i < 5000 && !execed(pid); i++)
		usleep(1000);
	rank = procfs_rank((uint32_t)pid);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return rank;
}

static void test_process(void **state)
{
	char *ranked[] = { "PATH=/bin", "PMIX_RANK=3", "SLURM_PROCID=11", NULL };
	char *plain[] = { "PATH=/bin", NULL };

	assert_int_equal(child_rank(ranked), 3);
	assert_int_equal(child_rank(plain), -1);
	assert_int_equal(procfs_rank(0x3fffffff), -1);	/* no such process */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
