/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * targets/targets.h - what the user asked to profile (-p, -t, --all,
 * -- COMMAND): checked before sampling starts, described for the output's
 * metadata, and watched to end the run when every target is gone.
 */
#ifndef BPFPROF_TARGETS_H
#define BPFPROF_TARGETS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/options.h"
#include "command.h"
#include "profile/profile.h"

/*
 * Check that every -p PID / -t TID names a live user process or thread.
 * 0, or -ESRCH / -EINVAL after printing a one-line error that says what
 * to do.
 */
int targets_check(const struct options *o);

/*
 * True while something is left to profile: the command runs (reaping it
 * when it ended), one -p process or -t thread is alive (a process whose
 * exit event the profile has seen counts as gone, /proc may lag), or
 * always for --all.  @ask_procfs: read /proc for the -p/-t targets whose
 * exit the profile has not seen; false: those count as alive (the exit
 * event tells first; /proc is the fallback for one that was lost, and
 * costs three system calls a target at each of the collector's wake-ups).
 */
bool targets_alive(const struct options *o, const struct profile *profile, bool ask_procfs,
		   struct command *cmd);

/*
 * A one-line description of the targets for the run's metadata ("pid
 * 12,13", "tid 5", "system-wide on HOST" (", cgroup PATH" with --cgroup),
 * the command line), written to
 * @buf of @size bytes (truncated, always terminated).
 */
void targets_describe(const struct options *o, const char *hostname, char *buf, size_t size);

#endif /* BPFPROF_TARGETS_H */
