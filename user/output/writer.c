// SPDX-License-Identifier: BSD-2-Clause
/*
 * output/writer.c - hands the finished profile to the plugin (see
 * session_write() in session.h): one output, or one per process for
 * per-process formats, published all or none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "session.h"

/* PATH (one process), PATH.<pid> (several), or DIR/COMM.<pid>.prof (-o DIR). */
static int per_process_path(const struct session *s, const struct profile *profile,
			    uint32_t pid, size_t nr, char **path)
{
	const struct proc *p = profile_find_proc(profile, pid);
	char comm[64];
	int n;

	/* A comm may hold '/' or start with '.': keep the file inside the directory. */
	snprintf(comm, sizeof(comm), "%s", p && p->comm && *p->comm ? p->comm : "process");
	for (char *c = comm; *c; c++)
		if (*c == '/' || (c == comm && *c == '.'))
			*c = '_';
	if (session_output_is_dir_of_files(s))
		n = asprintf(path, "%s/%s.%u.prof", s->opts->output, comm, pid);
	else if (nr > 1)
		n = asprintf(path, "%s.%u", session_output_path(s), pid);
	else
		n = (*path = strdup(session_output_path(s))) ? 0 : -1;
	if (n < 0) {
		*path = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * Publish the @nr finished outputs in @pending (with their companions) if
 * @err is 0, else remove them.  When one cannot be renamed into place,
 * those already renamed are removed again: all or none.
 */
static int publish_all(struct output *pending, size_t nr, char **paths, int err,
		       struct summary_outputs *outs)
{
	size_t done = 0;

	output_guard_block_sigint(true);
	while (!err && done < nr && !(err = output_publish(&pending[done])))
		done++;
	if (err && done)
		fprintf(stderr, "bpfprof: removed the %zu output%s already in place: the outputs "
			"are written all or none\n", done, done == 1 ? "" : "s");
	for (size_t i = 0; i < nr; i++) {
		if (i < done && !err)
			summary_add_output(outs, paths[i]);
		if (i < done && err)
			output_unpublish(&pending[i]);
		else
			output_abort(&pending[i]);	/* frees a published one */
	}
	output_guard_pending(NULL);
	output_guard_published(!err);
	output_guard_block_sigint(false);
	return err;
}

/* Per-process formats: one output per process, PATH.<pid> when several. */
static int write_per_process(struct session *s, struct profile *profile,
			     const struct bpfprof_profile *all, uint32_t empty_pid,
			     struct summary_outputs *outs)
{
	size_t nr = all->nr_processes, nr_done = 0;
	uint32_t *pids = calloc(nr + 1, sizeof(*pids));
	struct output *pending = calloc(nr + 1, sizeof(*pending));
	char **paths = calloc(nr + 1, sizeof(*paths));
	int err = 0;

	if (!pids || !pending || !paths) {
		free(pids);
		free(pending);
		free(paths);
		return -ENOMEM;
	}
	output_guard_pending(pending);
	for (size_t i = 0; i < nr; i++)
		pids[i] = all->processes[i].pid;
	if (nr == 0)	/* no samples: still write a valid, empty profile */
		pids[nr++] = empty_pid;
	for (size_t i = 0; i < nr && !err; i++) {
		struct profile_slice slice;
		struct bpfprof_profile view;

		if (per_process_path(s, profile, pids[i], nr, &paths[i])) {
			err = -ENOMEM;
			break;
		}
		/* i == all->nr_processes only for the empty profile above */
		err = profile_view_process(all, i, &slice, &view);
		err = err ?: session_open(s, paths[i], pids[i]);
		err = err ?: session_finish(s, &view, &pending[nr_done]);
		nr_done += !err;
		profile_slice_free(&slice);
	}
	err = publish_all(pending, nr_done, paths, err, outs);
	for (size_t i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
	free(pending);
	free(pids);
	return err;
}

int session_write(struct session *s, struct profile *profile, uint32_t empty_pid,
		  struct summary_outputs *outs)
{
	struct bpfprof_profile view;
	int err = profile_view(profile, s->run, &view);

	if (err)
		return err;
	if (s->stream) {
		err = session_finish(s, &view, NULL);
	} else if (s->plugin.desc->flags & BPFPROF_PLUGIN_PER_PROCESS) {
		return write_per_process(s, profile, &view, empty_pid, outs);
	} else {
		err = session_open(s, session_output_path(s), 0);
		err = err ?: session_finish(s, &view, NULL);
	}
	if (!err)
		summary_add_output(outs, session_output_path(s));
	return err;
}
