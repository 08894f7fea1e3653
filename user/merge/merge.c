// SPDX-License-Identifier: BSD-2-Clause
/*
 * merge/merge.c - `bpfprof merge` (see merge.h): finds the measurements
 * among the operands, reads them one after the other into one profile
 * (each file is checked whole before any of it is used, and its tables
 * are dropped once copied), makes the merged run, and writes it through
 * the output session like a live run: streamed events first (k-way
 * merged) for formats that want them, then the profile.  Nothing is
 * written unless every file was read.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "bpfprof/raw_format.h"
#include "merge/merge.h"
#include "output/summary.h"
#include "symbols/symbolize.h"

struct paths {
	char **p;
	size_t nr, cap;
};

static int add_path(struct paths *ps, char *path)
{
	if (!path)
		return -ENOMEM;
	if (ps->nr == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 16;
		char **grown = realloc(ps->p, cap * sizeof(*grown));

		if (!grown) {
			free(path);
			return -ENOMEM;
		}
		ps->p = grown;
		ps->cap = cap;
	}
	ps->p[ps->nr++] = path;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether @path is a regular file that starts with the raw magic. */
static bool has_magic(const char *path)
{
	char magic[RAW_MAGIC_SIZE];
	struct stat st;
	FILE *f;
	bool yes;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || !(f = fopen(path, "rb")))
		return false;
	yes = fread(magic, 1, sizeof(magic), f) == sizeof(magic) &&
	      !memcmp(magic, RAW_MAGIC, RAW_MAGIC_SIZE);
	fclose(f);
	return yes;
}

/* Every raw measurement in directory @dir, in name order. */
static int add_dir(struct paths *ps, const char *dir)
{
	DIR *d = opendir(dir);
	size_t first = ps->nr;
	struct dirent *e;
	int err = 0;

	if (!d) {
		fprintf(stderr, "bpfprof merge: %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	while (!err && (e = readdir(d))) {
		char *path;

		if (e->d_name[0] == '.' || asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (has_magic(path))
			err = add_path(ps, path);
		else
			free(path);
	}
	closedir(d);
	if (!err && ps->nr == first) {
		fprintf(stderr, "bpfprof merge: %s: no raw measurements in it\n", dir);
		return -ENOENT;
	}
	qsort(ps->p + first, ps->nr - first, sizeof(*ps->p), cmp_str);
	return err;
}

static int collect_inputs(const struct merge_options *o, struct paths *ps)
{
	int err = 0;

	for (size_t i = 0; i < o->nr_inputs && !err; i++) {
		struct stat st;

		if (stat(o->inputs[i], &st) == 0 && S_ISDIR(st.st_mode))
			err = add_dir(ps, o->inputs[i]);
		else
			err = add_path(ps, strdup(o->inputs[i]));
	}
	return err;
}

/* One descriptor per file while the streams are merged: as many as allowed. */
static void raise_fd_limit(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

/* Open, check and load every file; the first failure is explained. */
static int load_files(struct merge *m, const struct paths *ps)
{
	m->files = calloc(ps->nr + 1, sizeof(*m->files));
	if (!m->files)
		return -ENOMEM;
	for (size_t i = 0; i < ps->nr; i++) {
		struct merge_file *f = &m->files[i];
		char why[RAW_WHY_SIZE];
		int err;

		f->index = (uint32_t)i;
		m->nr_files = i + 1;
		if ((err = raw_file_open(ps->p[i], &f->rf, why))) {
			fprintf(stderr, "bpfprof merge: %s: %s\n", ps->p[i], why);
			return err;
		}
		if ((err = merge_load_file(m, f))) {
			fprintf(stderr, "bpfprof merge: %s: %s\n", ps->p[i], strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The merged timeline: each file's CLOCK_MONOTONIC moved so that its start
 * lies as far after the earliest start as its realtime anchor says; the
 * file with the earliest anchor keeps its own times. */
static void set_timeline(struct merge *m)
{
	const struct bpfprof_run *ref = &m->files[0].rf.run;
	struct bpfprof_run *run = &m->run;

	for (size_t i = 1; i < m->nr_files; i++)
		if (m->files[i].rf.run.realtime_anchor_ns < ref->realtime_anchor_ns)
			ref = &m->files[i].rf.run;
	run->start_ns = ref->start_ns;
	run->realtime_anchor_ns = ref->realtime_anchor_ns;
	for (size_t i = 0; i < m->nr_files; i++) {
		struct merge_file *f = &m->files[i];
		const struct bpfprof_run *r = &f->rf.run;
		uint64_t end;

		f->time_shift = (int64_t)(r->realtime_anchor_ns - ref->realtime_anchor_ns) +
				(int64_t)ref->start_ns - (int64_t)r->start_ns;
		end = r->end_ns + (uint64_t)f->time_shift;
		if (end > run->end_ns)
			run->end_ns = end;
	}
}

/* The merged run: the first file's settings, every file's counters. */
static void make_run(struct merge *m)
{
	const struct bpfprof_run *first = &m->files[0].rf.run;
	struct bpfprof_run *run = &m->run;
	size_t nodes = 0;

	*run = *first;
	run->version = BPFPROF_VERSION;
	run->argc = m->opts->out.argc;
	run->argv = (const char *const *)m->opts->out.argv;
	run->samples_seen = run->samples_kept = run->nr_cpus_online = run->nr_cpus_available = 0;
	memset(run->drops, 0, sizeof(run->drops));
	memset(run->unwind_stops, 0, sizeof(run->unwind_stops));
	for (size_t i = 0; i < m->nr_files; i++) {
		const struct bpfprof_run *r = &m->files[i].rf.run;

		run->samples_seen += r->samples_seen;
		run->samples_kept += r->samples_kept;
		for (int d = 0; d < BPFPROF_DROP_NR; d++)
			run->drops[d] += r->drops[d];
		for (int u = 0; u < BPFPROF_UNWIND_STOP_NR; u++)
			run->unwind_stops[u] += r->unwind_stops[u];
		if (r->sample_period != first->sample_period || strcmp(r->event, first->event))
			fprintf(stderr, "bpfprof merge: warning: %s was sampled at another period or "
				"event than %s; CPU times use each sample's own period\n",
				m->files[i].rf.path, m->files[0].rf.path);
		/* one node's CPUs once, however many files it wrote */
		if (m->files[i].host + 1 > nodes) {
			nodes = m->files[i].host + 1;
			run->nr_cpus_online += r->nr_cpus_online;
			run->nr_cpus_available += r->nr_cpus_available;
		}
	}
	if (nodes > 1) {
		snprintf(m->hostname, sizeof(m->hostname), "%zu nodes", nodes);
		run->hostname = m->hostname;
	}
	if (m->nr_files > 1) {
		snprintf(m->target, sizeof(m->target), "%zu measurements merged", m->nr_files);
		run->target = m->target;
	}
	set_timeline(m);
}

static int write_profile(struct merge *m, struct summary_outputs *outs)
{
	int err;

	session_attach(&m->session, m->profile, m->symbolizer, &m->run);
	if ((err = merge_symbols_attach(m)) || (err = session_open_stream(&m->session)))
		return err;
	if (session_sink(&m->session) && (err = merge_replay(m, session_sink(&m->session))))
		return err;
	err = session_write(&m->session, m->profile, 0, outs);
	host_flush_warnings(&m->session.host);
	return err;
}

static void report(const struct merge *m, const struct summary_outputs *outs)
{
	uint64_t samples = 0;

	for (size_t i = 0; i < m->nr_files; i++)
		samples += m->files[i].rf.run.samples_kept;
	fprintf(stderr, "bpfprof merge: %zu measurement%s, %llu samples", m->nr_files,
		m->nr_files == 1 ? "" : "s", (unsigned long long)samples);
	if (m->nr_events)
		fprintf(stderr, ", %llu events replayed", (unsigned long long)m->nr_events);
	for (size_t i = 0; i < outs->nr; i++)
		fprintf(stderr, "%s %s", i ? "," : "; wrote", outs->paths[i]);
	fputc('\n', stderr);
}

static int run_merge(struct merge *m, struct paths *ps)
{
	struct summary_outputs outs = { 0 };
	int err;

	if ((err = collect_inputs(m->opts, ps)) || (err = session_load(&m->session, &m->opts->out)))
		return err;
	m->profile = profile_new();
	m->symbolizer = symbolizer_new();
	if (!m->profile || !m->symbolizer)
		return -ENOMEM;
	if (m->session.plugin.desc->flags & BPFPROF_PLUGIN_NAMES_ONLY)
		symbolizer_set_lines(m->symbolizer, false);
	symbolizer_set_demangle(m->symbolizer, !m->opts->out.no_demangle);
	raise_fd_limit();
	if ((err = load_files(m, ps)))
		return err;
	make_run(m);
	err = write_profile(m, &outs);
	if (!err && !m->opts->out.quiet)
		report(m, &outs);
	summary_outputs_free(&outs);
	return err;
}

int merge_main(int argc, char **argv)
{
	struct merge_options o;
	struct merge m = { .opts = &o };
	struct paths ps = { 0 };
	int err;

	if (merge_options_parse(argc, argv, &o))
		return 2;
	if (o.help) {
		merge_usage();
		return 0;
	}
	m.session.out.dir_fd = -1;
	err = run_merge(&m, &ps);
	session_fini(&m.session);
	for (size_t i = 0; i < m.nr_files; i++) {
		raw_file_close(&m.files[i].rf);
		free(m.files[i].stacks);
	}
	merge_ids_free(&m);
	free(m.files);
	symbolizer_free(m.symbolizer);
	profile_free(m.profile);
	for (size_t i = 0; i < ps.nr; i++)
		free(ps.p[i]);
	free(ps.p);
	return err ? 1 : 0;
}
