// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugin.c - the "hpctoolkit" output plugin: writes an HPCToolkit v4
 * database directory (meta.db, profile.db, cct.db, trace.db,
 * metrics/default.yaml) that hpcviewer opens.
 *
 * event() spools each sample's (pid, tid, time, stacks) to an unlinked file
 * in the output directory, so memory does not grow with the run's length.
 * write() builds the calling context tree from the counts and the spooled
 * samples (samples.c, paths.c) and buckets the samples by thread, writes
 * meta.db (which numbers the contexts), trace.db, then cct.db and
 * profile.db from the per-thread values computed context by context
 * (values.c).  Peak memory: the tree, not threads x contexts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpc.h"

struct hpc_state {
	const struct bpfprof_host *host;
	const struct bpfprof_run *run;
	int dir_fd;
	const char *path;		/* the final output path, for messages */
	int spool_fd;
	struct bw spool;
	uint64_t nr_spooled;
	struct hpc_cct cct;
	struct hpc_paths paths;
	struct hpc_samples samples;
	struct hpc_trace_lines trace;
};

static int hpc_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		    const struct bpfprof_output *out, void **state)
{
	struct hpc_state *s = calloc(1, sizeof(*s));
	int fd;

	if (!s)
		return -ENOMEM;
	s->host = host;
	s->run = run;
	s->dir_fd = out->dir_fd;
	s->path = out->path ? out->path : "the output directory";
	hpc_cct_init(&s->cct);
	hpc_paths_init(&s->paths, &s->cct, host);
	fd = hpc_scratch_file(out->dir_fd, ".samples.spool");
	if (fd < 0) {
		host->error(host, "hpctoolkit: cannot create the sample spool in %s: %s",
			    out->path, strerror(-fd));
		free(s);
		return fd;
	}
	s->spool_fd = fd;
	if (bw_init_fd(&s->spool, fd)) {
		close(fd);
		free(s);
		return -ENOMEM;
	}
	*state = s;
	return 0;
}

static int hpc_event(void *state, const struct bpfprof_event *ev)
{
	struct hpc_state *s = state;
	struct hpc_spool_rec r;

	if (ev->type != BPFPROF_EVENT_SAMPLE)
		return 0;
	memset(&r, 0, sizeof(r));
	r.pid = ev->pid;
	r.tid = ev->tid;
	r.time = ev->time_ns;
	r.user_stack = ev->sample.user_stack;
	r.kernel_stack = ev->sample.kernel_stack;
	bw_bytes(&s->spool, &r, sizeof(r));
	s->nr_spooled++;
	if (s->spool.err) {
		s->host->error(s->host, "hpctoolkit: writing the sample spool: %s",
			       strerror(-s->spool.err));
		return s->spool.err;
	}
	return 0;
}

static uint64_t period_ns(const struct bpfprof_run *run)
{
	if (run->sample_period)
		return run->sample_period;
	if (run->sample_freq)
		return 1000000000ull / run->sample_freq;
	return 1;
}

/* Title: the command, or "system-wide on HOST". */
static char *make_title(const struct bpfprof_profile *p)
{
	const struct bpfprof_run *run = p->run;
	const struct bpfprof_process *pr = p->nr_processes ? &p->processes[0] : NULL;
	char *t = NULL;

	if ((run->target && strstr(run->target, "system-wide")) || !pr) {
		if (asprintf(&t, "system-wide on %s", run->hostname ? run->hostname : "?") < 0)
			t = NULL;
	} else if (p->nr_processes == 1) {
		t = strdup(pr->cmdline && *pr->cmdline ? pr->cmdline : pr->comm ? pr->comm : "?");
	} else if (asprintf(&t, "%s (and %zu more processes)",
			    pr->cmdline && *pr->cmdline ? pr->cmdline : pr->comm ? pr->comm : "?",
			    p->nr_processes - 1) < 0) {
		t = NULL;
	}
	return t;
}

/* "NODE n (host, 0xhostid) [RANK r (pid)] THREAD t (tid)", as in profile.db. */
static void print_tuple(FILE *f, const struct hpc_thread_id *id)
{
	fprintf(f, "NODE %u (%s, 0x%llx) ", id->node, id->host ? id->host : "?",
		(unsigned long long)id->host_id);
	if (id->rank >= 0)
		fprintf(f, "RANK %d (%u) ", id->rank, id->pid);
	fprintf(f, "THREAD %u (%u)", id->thread, id->tid);
}

/* Markdown description: run facts and the profile -> pid/tid/comm table. */
static char *make_description(const struct bpfprof_profile *p, const struct hpc_thread_id *ids)
{
	static const char *const drop[BPFPROF_DROP_NR] = {
		"user stack", "kernel stack", "stack map full", "count map full", "ring buffer full"
	};
	const struct bpfprof_run *run = p->run;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	uint64_t drops = 0;

	if (!f)
		return NULL;
	fprintf(f, "# bpfprof CPU profile\n\n");
	fprintf(f, "| | |\n|---|---|\n");
	fprintf(f, "| bpfprof version | %s |\n", run->version ? run->version : "?");
	fprintf(f, "| event | %s |\n", run->event ? run->event : "?");
	if (run->sample_freq)
		fprintf(f, "| frequency | %llu Hz |\n", (unsigned long long)run->sample_freq);
	fprintf(f, "| period | %llu ns of CPU time per sample |\n",
		(unsigned long long)period_ns(run));
	fprintf(f, "| duration | %.3f s |\n",
		run->end_ns > run->start_ns ? (run->end_ns - run->start_ns) / 1e9 : 0.0);
	fprintf(f, "| target | %s |\n", run->target ? run->target : "?");
	fprintf(f, "| host | %s, %s %s, %u CPUs |\n", run->hostname ? run->hostname : "?",
		run->arch ? run->arch : "?", run->os_release ? run->os_release : "?",
		run->nr_cpus_online);
	fprintf(f, "| samples | %llu seen, %llu kept |\n", (unsigned long long)run->samples_seen,
		(unsigned long long)run->samples_kept);
	for (int i = 0; i < BPFPROF_DROP_NR; i++)
		drops += run->drops[i];
	fprintf(f, "| drops | %llu", (unsigned long long)drops);
	for (int i = 0; i < BPFPROF_DROP_NR; i++)
		if (run->drops[i])
			fprintf(f, ", %s %llu", drop[i], (unsigned long long)run->drops[i]);
	fprintf(f, " |\n");
	if (run->call_graph && !strcmp(run->call_graph, "auto")) {
		fprintf(f, "| user stack walks |");
		for (unsigned int i = 0; i < BPFPROF_UNWIND_STOP_NR; i++)
			if (run->unwind_stops[i])
				fprintf(f, " %s %llu", bpfprof_unwind_stop_name(i),
					(unsigned long long)run->unwind_stops[i]);
		fprintf(f, " |\n");
	}
	fprintf(f, "| metric | %s = samples x period |\n\n", HPC_METRIC_NAME);
	fprintf(f, "## Profiles\n\n");
	fprintf(f, "| profile | identifier tuple | pid | tid | comm |\n|---|---|---|---|---|\n");
	for (size_t t = 0; t < p->nr_threads; t++) {
		fprintf(f, "| %zu | ", t + 1);
		print_tuple(f, &ids[t]);
		fprintf(f, " | %u | %u | %s |\n", ids[t].pid, ids[t].tid,
			ids[t].comm ? ids[t].comm : "");
	}
	if (fclose(f))
		return NULL;
	return buf;
}

/* The tree from the counts and the stream, the samples by thread. */
static int build_tree(struct hpc_state *s, const struct bpfprof_profile *p)
{
	int err = hpc_samples_init(&s->samples, p, s->host, &s->paths);

	if (!err)
		err = bw_finish(&s->spool);
	if (!err)
		err = hpc_samples_bucket(&s->samples, s->spool_fd, s->nr_spooled, s->dir_fd,
					 &s->trace);
	hpc_paths_free(&s->paths);
	hpc_cct_seal(&s->cct);
	return err;
}

static int write_meta(struct hpc_state *s, const struct bpfprof_profile *p,
		      const struct hpc_thread_id *ids, uint32_t *shape)
{
	struct hpc_meta_info info = { 0 };
	int err = -ENOMEM;

	info.title = make_title(p);
	info.description = make_description(p, ids);
	if (info.title && info.description)
		err = write_meta_db(s->dir_fd, &s->cct, shape, &info);
	free((char *)info.title);
	free((char *)info.description);
	return err;
}

/* cct.db and profile.db from the counts at their leaf ctxIds. */
static int write_values(struct hpc_state *s, const struct bpfprof_profile *p,
			const uint32_t *shape, uint32_t nctxs, const struct hpc_thread_id *ids,
			const char **what)
{
	struct hpc_leaf *leaves = malloc((p->nr_counts ? p->nr_counts : 1) * sizeof(*leaves));
	uint64_t *totals = calloc(p->nr_threads ? p->nr_threads : 1, sizeof(*totals));
	double scale = period_ns(p->run) / 1e9;
	struct hpc_values in = { .shape = shape, .nctxs = nctxs, .leaves = leaves,
				 .totals = totals, .nthreads = p->nr_threads };
	size_t n = 0;
	int err = -ENOMEM;

	if (!leaves || !totals)
		goto out;
	for (size_t c = 0; c < p->nr_counts; c++) {
		const struct bpfprof_count *cnt = &p->counts[c];

		if (s->samples.leaf[c] == HPC_NONE)
			continue;
		leaves[n++] = (struct hpc_leaf){ s->samples.leaf[c], cnt->thread, cnt->samples };
		totals[cnt->thread] += cnt->samples;
	}
	in.nr_leaves = n;
	hpc_samples_free(&s->samples);
	if ((err = hpc_sort_leaves(leaves, n)))
		goto out;
	*what = "cct.db";
	if ((err = write_cct_db(s->dir_fd, &in, scale)))
		goto out;
	*what = "profile.db";
	err = write_profile_db(s->dir_fd, &in, ids, scale);
out:
	free(leaves);
	free(totals);
	return err;
}

static int hpc_write(void *state, const struct bpfprof_profile *p)
{
	struct hpc_state *s = state;
	struct hpc_thread_id *ids = calloc(p->nr_threads ? p->nr_threads : 1, sizeof(*ids));
	uint64_t period = period_ns(p->run);
	const char *what = "the context tree";
	uint32_t *shape = NULL, nctxs = 0;
	int err = -ENOMEM;

	if (!ids || (err = hpc_thread_ids(p, ids)))
		goto out;
	if ((err = build_tree(s, p)))
		goto out;
	what = "meta.db";
	nctxs = s->cct.nr_nodes + 1;
	err = -ENOMEM;
	if (!(shape = hpc_pages_alloc((size_t)nctxs * sizeof(*shape))) ||
	    (err = write_meta(s, p, ids, shape)))
		goto out;
	hpc_samples_number(&s->samples, &s->cct, &s->trace);
	hpc_cct_free(&s->cct);
	if (s->trace.elems) {
		what = "trace.db";
		if ((err = write_trace_db(s->dir_fd, s->trace.elems, s->trace.line_start,
					  p->nr_threads, 4 * period, period)))
			goto out;
	}
	hpc_trace_lines_free(&s->trace);
	what = "metrics/default.yaml";
	if ((err = write_metrics_yaml(s->dir_fd)))
		goto out;
	err = write_values(s, p, shape, nctxs, ids, &what);
out:
	if (err)
		s->host->error(s->host, "hpctoolkit: writing %s in %s: %s", what, s->path,
			       strerror(-err));
	hpc_pages_free(shape, (size_t)nctxs * sizeof(*shape));
	free(ids);
	return err;
}

static void hpc_close(void *state)
{
	struct hpc_state *s = state;

	if (!s)
		return;
	hpc_samples_free(&s->samples);
	hpc_trace_lines_free(&s->trace);
	hpc_paths_free(&s->paths);
	hpc_cct_free(&s->cct);
	bw_free(&s->spool);
	if (s->spool_fd >= 0)
		close(s->spool_fd);
	free(s);
}

BPFPROF_PLUGIN("hpctoolkit",
	.flags = BPFPROF_PLUGIN_STREAM | BPFPROF_PLUGIN_DIRECTORY,
	.description = "HPCToolkit v4 database directory for hpcviewer (meta.db, profile.db, cct.db, trace.db)",
	.default_output = "bpfprof.hpcdb",
	.open = hpc_open, .event = hpc_event, .write = hpc_write, .close = hpc_close);
