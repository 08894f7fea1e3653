/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * targets/command.h - the profiled command of `bpfprof -- COMMAND ARGS`.
 *
 * The command is forked at once but held before its exec until the
 * sampler is attached (command_release), so its first instruction is
 * profiled; a close-on-exec pipe reports whether the exec itself failed.
 */
#ifndef BPFPROF_COMMAND_H
#define BPFPROF_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

struct command {
	pid_t pid;			/* the child, 0 before command_start() */
	int status;			/* waitpid() status once done */
	bool done;			/* the child was reaped */
	int release_fd;			/* write end of the start pipe, -1 once released */
	int exec_status_fd;		/* read end: errno if the exec failed */
	int exec_errno;			/* the exec's errno, 0 if it did not fail */
};

/* An empty command (no child, no descriptors): safe to pass to command_fini(). */
void command_init(struct command *cmd);

/* Fork @argv (NULL-terminated, argv[0] looked up in PATH), held before its
 * exec.  0, or negative errno (pipe or fork failed). */
int command_start(struct command *cmd, char **argv);

/* Let the command exec. */
void command_release(struct command *cmd);

/* Reap the command if it has ended (no wait).  True while it runs. */
bool command_running(struct command *cmd);

/* The exit status bpfprof passes on: the command's own, 128+N when it was
 * killed by signal N, 1 otherwise. */
int command_exit_status(const struct command *cmd);

/* Close the descriptors; wait for the child if it still runs. */
void command_fini(struct command *cmd);

#endif /* BPFPROF_COMMAND_H */
