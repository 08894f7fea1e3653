// SPDX-License-Identifier: BSD-2-Clause
/*
 * targets/command.c - starts, releases, reaps and reports the profiled
 * command (see command.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"

void command_init(struct command *cmd)
{
	*cmd = (struct command){ .release_fd = -1, .exec_status_fd = -1 };
}

/* In the child: wait for the go, exec, report the exec's errno. */
static void __attribute__((noreturn)) run_child(int go_fd, int status_fd, char **argv)
{
	char go;
	int e;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (read(go_fd, &go, 1) != 1)
		_exit(127);	/* bpfprof gave up before starting us */
	execvp(argv[0], argv);
	e = errno;
	(void)!write(status_fd, &e, sizeof(e));
	_exit(127);
}

int command_start(struct command *cmd, char **argv)
{
	int pipefd[2], statusfd[2];

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	if (pipe2(statusfd, O_CLOEXEC)) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	cmd->pid = fork();
	if (cmd->pid < 0) {
		int err = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		close(statusfd[0]);
		close(statusfd[1]);
		cmd->pid = 0;
		return err;
	}
	if (cmd->pid == 0) {
		close(pipefd[1]);
		close(statusfd[0]);
		run_child(pipefd[0], statusfd[1], argv);
	}
	close(pipefd[0]);
	close(statusfd[1]);
	cmd->release_fd = pipefd[1];
	cmd->exec_status_fd = statusfd[0];
	return 0;
}

void command_release(struct command *cmd)
{
	if (cmd->release_fd >= 0) {
		(void)!write(cmd->release_fd, "g", 1);
		close(cmd->release_fd);
		cmd->release_fd = -1;
	}
}

/* After the command ended: did its exec fail? (the pipe has its errno) */
static void read_exec_status(struct command *cmd)
{
	int e;

	if (cmd->exec_status_fd >= 0 && read(cmd->exec_status_fd, &e, sizeof(e)) == sizeof(e))
		cmd->exec_errno = e;
}

bool command_running(struct command *cmd)
{
	if (cmd->pid <= 0)
		return false;
	if (!cmd->done && waitpid(cmd->pid, &cmd->status, WNOHANG) == cmd->pid) {
		cmd->done = true;
		read_exec_status(cmd);
	}
	return !cmd->done;
}

int command_exit_status(const struct command *cmd)
{
	if (!cmd->done)
		return 0;
	if (WIFEXITED(cmd->status))
		return WEXITSTATUS(cmd->status);
	if (WIFSIGNALED(cmd->status))
		return 128 + WTERMSIG(cmd->status);
	return 1;
}

void command_fini(struct command *cmd)
{
	if (cmd->release_fd >= 0)
		close(cmd->release_fd);
	if (cmd->exec_status_fd >= 0)
		close(cmd->exec_status_fd);
	if (cmd->pid > 0 && !cmd->done)
		waitpid(cmd->pid, &cmd->status, 0);
	cmd->release_fd = cmd->exec_status_fd = -1;
}
