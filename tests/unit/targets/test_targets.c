// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_targets.c - unit tests of user/targets/targets.c and command.c:
 * the description of each kind of target (and its truncation into a small
 * buffer), the check of -p/-t ids (a live process, a missing one, a kernel
 * thread), liveness of -p targets (a process whose exit event the profile
 * saw is gone even while /proc still shows it), and the -- COMMAND child:
 * held until released, its exit status and death by signal passed on, an
 * exec failure reported with its errno.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "targets/command.h"
#include "targets/targets.h"

static void test_describe(void **state)
{
	uint32_t ids[] = { 12, 345 };
	char *argv[] = { "sleep", "1", NULL };
	struct options o = { .targets = TARGETS_PIDS, .ids = ids, .nr_ids = 2 };
	char buf[64], tiny[8];

	targets_describe(&o, "node1", buf, sizeof(buf));
	assert_string_equal(buf, "pid 12,345");
	o.targets = TARGETS_TIDS;
	targets_describe(&o, "node1", buf, sizeof(buf));
	assert_string_equal(buf, "tid 12,345");
	o.targets = TARGETS_ALL;
	targets_describe(&o, "node1", buf, sizeof(buf));
	assert_string_equal(buf, "system-wide on node1");
	o.targets = TARGETS_COMMAND;
	o.command = argv;
	targets_describe(&o, "node1", buf, sizeof(buf));
	assert_string_equal(buf, "sleep 1");
	/* Truncated, terminated. */
	o.targets = TARGETS_PIDS;
	targets_describe(&o, "node1", tiny, sizeof(tiny));
	assert_string_equal(tiny, "pid 12,");
}

static void test_check(void **state)
{
	uint32_t self = (uint32_t)getpid(), missing = 0x3fffffff, kthread = 2;
	struct options o = { .targets = TARGETS_PIDS, .ids = &self, .nr_ids = 1 };

	assert_int_equal(targets_check(&o), 0);
	o.ids = &missing;
	assert_int_equal(targets_check(&o), -ESRCH);
	o.targets = TARGETS_TIDS;
	assert_int_equal(targets_check(&o), -ESRCH);
	/* pid 2 is kthreadd on Linux */
	o.targets = TARGETS_PIDS;
	o.ids = &kthread;
	assert_int_equal(targets_check(&o), -EINVAL);
}

static void test_alive_after_exit_event(void **state)
{
	uint32_t self = (uint32_t)getpid();
	struct options o = { .targets = TARGETS_PIDS, .ids = &self, .nr_ids = 1 };
	struct profile *p = profile_new();
	struct command cmd;

	command_init(&cmd);
	assert_non_null(p);
	assert_true(targets_alive(&o, p, true, &cmd));
	profile_proc(p, self)->exited = true;
	assert_false(targets_alive(&o, p, true, &cmd));
	assert_false(targets_alive(&o, p, false, &cmd));
	o.targets = TARGETS_ALL;
	assert_true(targets_alive(&o, p, true, &cmd));
	profile_free(p);
}

/* A -p target gone without an exit event (one lost) is dead only when
 * /proc is asked; otherwise it counts as alive until then. */
static void test_alive_procfs_asked(void **state)
{
	pid_t child = fork();
	uint32_t dead;
	struct options o = { .targets = TARGETS_PIDS, .ids = &dead, .nr_ids = 1 };
	struct profile *p = profile_new();
	struct command cmd;

	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	dead = (uint32_t)child;
	command_init(&cmd);
	assert_non_null(p);
	assert_false(targets_alive(&o, p, true, &cmd));
	assert_true(targets_alive(&o, p, false, &cmd));
	profile_free(p);
}

/* Run @argv to its end; its status as bpfprof passes it on. */
static int run_command(char **argv, int *exec_errno)
{
	struct command cmd;

	command_init(&cmd);
	assert_int_equal(command_start(&cmd, argv), 0);
	assert_true(cmd.pid > 0);
	/* Held before its exec until released. */
	usleep(20000);
	assert_true(command_running(&cmd));
	command_release(&cmd);
	while (command_running(&cmd))
		usleep(1000);
	*exec_errno = cmd.exec_errno;
	command_fini(&cmd);
	return command_exit_status(&cmd);
}

static void test_command(void **state)
{
	char *ok[] = { "sh", "-c", "exit 7", NULL };
	char *killed[] = { "sh", "-c", "kill -TERM $$", NULL };
	char *missing[] = { "/nonexistent/bpfprof-test-command", NULL };
	int e;

	assert_int_equal(run_command(ok, &e), 7);
	assert_int_equal(e, 0);
	assert_int_equal(run_command(killed, &e), 128 + SIGTERM);
	assert_int_equal(run_command(missing, &e), 127);
	assert_int_equal(e, ENOENT);
}

/* A command never released ends on its own when bpfprof gives up. */
static void test_command_abandoned(void **state)
{
	char *argv[] = { "true", NULL };
	struct command cmd;

	command_init(&cmd);
	assert_int_equal(command_start(&cmd, argv), 0);
	command_fini(&cmd);
	assert_true(WIFEXITED(cmd.status));
	assert_int_equal(WEXITSTATUS(cmd.status), 127);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_alive_after_exit_event),
		cmocka_unit_test(test_alive_procfs_asked),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_command_abandoned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
