// SPDX-License-Identifier: BSD-2-Clause
/*
 * targets/targets.c - checks, liveness and description of the targets
 * (see targets.h).
 */
#include <errno.h>
#include <stdio.h>

#include "procfs.h"
#include "targets.h"

int targets_check(const struct options *o)
{
	for (size_t i = 0; i < o->nr_ids; i++) {
		uint32_t id = o->ids[i], tgid = id, ppid;
		bool kthread = false;

		if (o->targets == TARGETS_TIDS && procfs_tgid(id, &tgid)) {
			fprintf(stderr, "bpfprof: no thread with TID %u; check it with ps -eLf\n", id);
			return -ESRCH;
		}
		if (procfs_stat(tgid, &ppid, &kthread) || !procfs_alive(tgid)) {
			fprintf(stderr, "bpfprof: no process with PID %u; check it with ps\n", tgid);
			return -ESRCH;
		}
		if (kthread) {
			fprintf(stderr, "bpfprof: PID %u is a kernel thread; profile kernel threads with "
				"--all\n", tgid);
			return -EINVAL;
		}
	}
	return 0;
}

bool targets_alive(const struct options *o, const struct profile *profile, bool ask_procfs,
		   struct command *cmd)
{
	if (o->targets == TARGETS_COMMAND)
		return command_running(cmd);
	if (o->targets != TARGETS_PIDS && o->targets != TARGETS_TIDS)
		return true;
	for (size_t i = 0; i < o->nr_ids; i++) {
		const struct proc *proc = o->targets == TARGETS_PIDS
					  ? profile_find_proc(profile, o->ids[i]) : NULL;

		/* The exit event comes before /proc shows the process dead. */
		if (!(proc && proc->exited) && (!ask_procfs || procfs_alive(o->ids[i])))
			return true;
	}
	return false;
}

/* Append to @buf (holding @len of @size bytes); the new length, < size. */
static size_t append(char *buf, size_t size, size_t len, const char *sep, const char *s)
{
	int n = snprintf(buf + len, size - len, "%s%s", sep, s);

	return n < 0 || (size_t)n >= size - len ? size - 1 : len + (size_t)n;
}

void targets_describe(const struct options *o, const char *hostname, char *buf, size_t size)
{
	size_t len = 0;
	char id[16];

	buf[0] = '\0';
	switch (o->targets) {
	case TARGETS_ALL:
		snprintf(buf, size, "system-wide on %s%s%s", hostname,
			 o->cgroup ? ", cgroup " : "", o->cgroup ? o->cgroup : "");
		return;
	case TARGETS_COMMAND:
		for (char **a = o->command; *a && len < size - 1; a++)
			len = append(buf, size, len, a == o->command ? "" : " ", *a);
		return;
	default:
		len = append(buf, size, 0, "", o->targets == TARGETS_TIDS ? "tid" : "pid");
		for (size_t i = 0; i < o->nr_ids && len < size - 1; i++) {
			snprintf(id, sizeof(id), "%u", o->ids[i]);
			len = append(buf, size, len, i ? "," : " ", id);
		}
	}
}
