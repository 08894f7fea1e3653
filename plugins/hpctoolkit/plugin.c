// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugin.c - the "hpctoolkit" output plugin: writes an HPCToolkit v4
 * database directory (meta.db, profile.db, cct.db, trace.db,
 * metrics/default.yaml) that hpcviewer opens.
 *
 * event() spools each sample's (pid, tid, time, stacks) to an unlinked file
 * in the output directory, so memory does not grow with the run's length.
 * write() builds the calling context tree from the aggregated profile,
 * computes per-thread values (point, function, lex_aware, execution), maps
 * the spooled samples to leaf contexts, buckets them by thread in a second
 * unlinked file and writes the four databases.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hpc.h"

struct spool_rec {
	uint32_t pid, tid;
	uint64_t time;			/* CLOCK_MONOTONIC */
	uint32_t user_stack, kernel_stack;
};

struct thread_key {
	uint32_t pid, tid;
};

struct thread_ent {
	struct thread_key key;
	uint32_t index;
	UT_hash_handle hh;
};

/* Stack indices of the stream (host->stack()) and of the profile
 * (profile->stacks) need not be the same space: keyed apart. */
struct leaf_key {
	uint32_t thread, user_stack, kernel_stack, from_host;
};

struct leaf_ent {
	struct leaf_key key;
	uint32_t node;
	UT_hash_handle hh;
};

struct hpc_state {
	const struct bpfprof_host *host;
	const struct bpfprof_run *run;
	int dir_fd;
	const char *path;		/* the final output path, for messages */
	int spool_fd;
	struct bw spool;
	uint64_t nr_spooled;
	struct hpc_cct cct;
	struct thread_ent *threads;
	struct leaf_ent *leaves;
};

/* An unlinked scratch file inside the output directory. */
static int scratch_file(int dir_fd, const char *name)
{
	int fd = openat(dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0)
		return fd;
	fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	unlinkat(dir_fd, name, 0);
	return fd;
}

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
	fd = scratch_file(out->dir_fd, ".samples.spool");
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
	struct spool_rec r;

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

static const struct bpfprof_stack *get_stack(struct hpc_state *s,
					     const struct bpfprof_profile *p, uint32_t idx,
					     int from_host)
{
	if (idx == 0)
		return NULL;
	if (!from_host)
		return idx < p->nr_stacks ? &p->stacks[idx] : NULL;
	return s->host->stack(s->host, idx);
}

/* Leaf node of (thread, user stack, kernel stack), built if new. */
static uint32_t leaf_node(struct hpc_state *s, const struct bpfprof_profile *p,
			  uint32_t thread, uint32_t us, uint32_t ks, int from_host)
{
	const struct bpfprof_thread *th = &p->threads[thread];
	struct leaf_key key = { thread, us, ks, from_host != 0 };
	struct leaf_ent *e;
	uint32_t node;

	HASH_FIND(hh, s->leaves, &key, sizeof(key), e);
	if (e)
		return e->node;
	node = hpc_cct_path(&s->cct, s->host, th->pid,
			    th->tid == th->pid ? HPC_EP_MAIN : HPC_EP_THREAD,
			    get_stack(s, p, us, from_host), get_stack(s, p, ks, from_host));
	if (node == HPC_NONE)
		return node;
	e = calloc(1, sizeof(*e));
	if (!e)
		return HPC_NONE;
	e->key = key;
	e->node = node;
	HASH_ADD(hh, s->leaves, key, sizeof(e->key), e);
	return node;
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

/* Markdown description: run facts and the profile -> pid/tid/comm table. */
static char *make_description(const struct bpfprof_profile *p, const struct hpc_thread_id *ids,
			      uint64_t hostid)
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
	fprintf(f, "| host | %s (hostid 0x%llx), %s %s, %u CPUs |\n",
		run->hostname ? run->hostname : "?", (unsigned long long)hostid,
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
	fprintf(f, "| metric | %s = samples x period |\n\n", HPC_METRIC_NAME);
	fprintf(f, "## Profiles\n\n");
	fprintf(f, "| profile | identifier tuple | pid | tid | comm |\n|---|---|---|---|---|\n");
	for (size_t t = 0; t < p->nr_threads; t++)
		fprintf(f, "| %zu | NODE 0x%llx RANK %u THREAD %u | %u | %u | %s |\n", t + 1,
			(unsigned long long)hostid, ids[t].process, ids[t].thread, ids[t].pid,
			ids[t].tid, ids[t].comm ? ids[t].comm : "");
	if (fclose(f))
		return NULL;
	return buf;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Per-thread values from the counts (sorted by thread): point at the leaf,
 * function up the lexical chain to the enclosing call, execution to the
 * root, the thread total at ctxId 0.  Output sorted by (thread, ctx).
 */
static int compute_values(struct hpc_state *s, const struct bpfprof_profile *p,
			  const uint32_t *leaf, struct hpc_value **out, size_t *nout)
{
	const struct hpc_node *nodes = s->cct.nodes;
	uint32_t nn = s->cct.nr_nodes;
	struct hpc_value *acc = calloc(nn ? nn : 1, sizeof(*acc)), *vals = NULL;
	uint32_t *touched = calloc(nn ? nn : 1, sizeof(*touched)), ntouched;
	uint8_t *mark = calloc(nn ? nn : 1, 1);
	size_t nvals = 0, cap = 0, c = 0;
	int err = -ENOMEM;

	if (!acc || !touched || !mark)
		goto out;
	for (uint32_t t = 0; t < p->nr_threads; t++) {
		uint64_t total = 0;

		ntouched = 0;
		for (; c < p->nr_counts && p->counts[c].thread == t; c++) {
			uint64_t n = p->counts[c].samples;
			uint32_t x = leaf[c];

			if (x == HPC_NONE)
				continue;
			total += n;
			acc[x].point += n;
			for (uint32_t y = x, fn = 1; y != HPC_NONE; y = nodes[y].parent) {
				if (!mark[y]) {
					mark[y] = 1;
					touched[ntouched++] = y;
				}
				acc[y].execution += n;
				if (fn)
					acc[y].function += n;
				if (nodes[y].relation != HPC_REL_LEXICAL || nodes[y].kind == HPC_ENTRY)
					fn = 0;
			}
		}
		if (!total)
			continue;
		if (nvals + ntouched + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct hpc_value *nv;

			while (ncap < nvals + ntouched + 1)
				ncap *= 2;
			nv = realloc(vals, ncap * sizeof(*nv));
			if (!nv)
				goto out;
			vals = nv;
			cap = ncap;
		}
		vals[nvals++] = (struct hpc_value){ .ctx = 0, .thread = t, .execution = total };
		/* node order is ctxId order: sort the touched nodes */
		qsort(touched, ntouched, sizeof(*touched), cmp_u32);
		for (uint32_t k = 0; k < ntouched; k++) {
			uint32_t i = touched[k];

			acc[i].ctx = hpc_ctx_id(i);
			acc[i].thread = t;
			vals[nvals++] = acc[i];
			memset(&acc[i], 0, sizeof(acc[i]));
			mark[i] = 0;
		}
	}
	*out = vals;
	*nout = nvals;
	vals = NULL;
	err = 0;
out:
	free(vals);
	free(acc);
	free(touched);
	free(mark);
	return err;
}

/*
 * The spooled samples as (wall time, leaf ctxId), bucketed by thread in an
 * unlinked mapped file; line_start[t] .. line_start[t + 1] is thread t's.
 */
static int bucket_samples(struct hpc_state *s, const struct bpfprof_profile *p,
			  struct hpc_trace_elem **elems, size_t *map_len, uint64_t **line_start)
{
	const struct bpfprof_run *run = p->run;
	uint64_t *start = calloc(p->nr_threads + 1, sizeof(*start)), *pos = NULL, total = 0;
	struct spool_rec *rec = MAP_FAILED;
	struct hpc_trace_elem *out = MAP_FAILED;
	size_t spool_len = s->nr_spooled * sizeof(*rec), out_len = 0;
	int fd = -1, err;

	if (!start)
		return -ENOMEM;
	err = bw_finish(&s->spool);
	if (err)
		goto out;
	if (spool_len) {
		rec = mmap(NULL, spool_len, PROT_READ, MAP_SHARED, s->spool_fd, 0);
		if (rec == MAP_FAILED) {
			err = -errno;
			goto out;
		}
	}
	/* pass 1: threads, leaves (new contexts for stacks the counts lack) */
	for (uint64_t i = 0; i < s->nr_spooled; i++) {
		struct thread_key k = { rec[i].pid, rec[i].tid };
		struct thread_ent *te;

		HASH_FIND(hh, s->threads, &k, sizeof(k), te);
		if (!te)
			continue;
		if (leaf_node(s, p, te->index, rec[i].user_stack, rec[i].kernel_stack, 1) ==
		    HPC_NONE)
			continue;
		start[te->index + 1]++;
		total++;
	}
	for (size_t t = 0; t < p->nr_threads; t++)
		start[t + 1] += start[t];
	if (total) {
		fd = scratch_file(s->dir_fd, ".trace.spool");
		if (fd < 0) {
			err = fd;
			goto out;
		}
		out_len = total * sizeof(*out);
		/* Allocate the blocks now: a store through the mapping into a
		 * hole of a full file system would be a SIGBUS, not ENOSPC. */
		if ((err = posix_fallocate(fd, 0, out_len))) {
			err = -err;
			goto out;
		}
		out = mmap(NULL, out_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (out == MAP_FAILED) {
			err = -errno;
			goto out;
		}
		pos = calloc(p->nr_threads + 1, sizeof(*pos));
		if (!pos) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(pos, start, (p->nr_threads + 1) * sizeof(*pos));
		/* pass 2: scatter */
		for (uint64_t i = 0; i < s->nr_spooled; i++) {
			struct thread_key k = { rec[i].pid, rec[i].tid };
			struct thread_ent *te;
			uint32_t node;

			HASH_FIND(hh, s->threads, &k, sizeof(k), te);
			if (!te)
				continue;
			node = leaf_node(s, p, te->index, rec[i].user_stack, rec[i].kernel_stack, 1);
			if (node == HPC_NONE)
				continue;
			out[pos[te->index]].time = rec[i].time - run->start_ns +
						   run->realtime_anchor_ns;
			out[pos[te->index]].ctx = hpc_ctx_id(node);
			pos[te->index]++;
		}
	}
	*elems = total ? out : NULL;
	*map_len = out_len;
	*line_start = start;
	out = MAP_FAILED;
	start = NULL;
	err = 0;
out:
	if (rec != MAP_FAILED)
		munmap(rec, spool_len);
	if (out != MAP_FAILED)
		munmap(out, out_len);
	if (fd >= 0)
		close(fd);
	free(pos);
	free(start);
	return err;
}

static int hpc_write(void *state, const struct bpfprof_profile *p)
{
	struct hpc_state *s = state;
	const struct bpfprof_host *host = s->host;
	struct hpc_thread_id *ids = calloc(p->nr_threads ? p->nr_threads : 1, sizeof(*ids));
	uint32_t *leaf = calloc(p->nr_counts ? p->nr_counts : 1, sizeof(*leaf));
	struct hpc_trace_elem *elems = NULL;
	struct hpc_value *vals = NULL;
	struct hpc_meta_info info = { 0 };
	uint64_t *line_start = NULL, hostid = (uint32_t)gethostid(), period = period_ns(p->run);
	size_t nvals = 0, map_len = 0;
	const char *what = "memory";
	int err = -ENOMEM;

	if (!ids || !leaf)
		goto out;
	for (size_t i = 0; i < p->nr_processes; i++) {
		const struct bpfprof_process *pr = &p->processes[i];

		for (uint32_t k = 0; k < pr->nr_threads; k++) {
			uint32_t t = pr->first_thread + k;

			if (t >= p->nr_threads)
				break;
			ids[t] = (struct hpc_thread_id){ i, k, p->threads[t].pid, p->threads[t].tid,
							 p->threads[t].comm };
		}
	}
	for (size_t t = 0; t < p->nr_threads; t++) {
		struct thread_ent *te = calloc(1, sizeof(*te)), *old;

		if (!te)
			goto out;
		te->key.pid = p->threads[t].pid;
		te->key.tid = p->threads[t].tid;
		te->index = t;
		HASH_FIND(hh, s->threads, &te->key, sizeof(te->key), old);
		if (old) {
			free(te);
			continue;
		}
		HASH_ADD(hh, s->threads, key, sizeof(te->key), te);
	}
	/* the calling context tree from the aggregated counts */
	for (size_t c = 0; c < p->nr_counts; c++) {
		const struct bpfprof_count *cnt = &p->counts[c];

		if (cnt->thread >= p->nr_threads) {
			leaf[c] = HPC_NONE;
			continue;
		}
		leaf[c] = leaf_node(s, p, cnt->thread, cnt->user_stack, cnt->kernel_stack, 0);
		if (leaf[c] == HPC_NONE)
			goto out;
	}
	what = "trace samples";
	err = bucket_samples(s, p, &elems, &map_len, &line_start);
	if (err)
		goto out;
	what = "values";
	err = compute_values(s, p, leaf, &vals, &nvals);
	if (err)
		goto out;
	err = -ENOMEM;
	what = "description";
	info.title = make_title(p);
	info.description = make_description(p, ids, hostid);
	if (!info.title || !info.description)
		goto out;
	what = "meta.db";
	err = write_meta_db(s->dir_fd, &s->cct, &info);
	if (!err) {
		what = "metrics/default.yaml";
		err = write_metrics_yaml(s->dir_fd);
	}
	if (!err) {
		what = "profile.db";
		err = write_profile_db(s->dir_fd, vals, nvals, ids, p->nr_threads,
				       s->cct.nr_nodes + 1, hostid, period / 1e9);
	}
	if (!err) {
		what = "cct.db";
		err = write_cct_db(s->dir_fd, vals, nvals, s->cct.nr_nodes + 1, period / 1e9);
	}
	if (!err && elems) {
		what = "trace.db";
		err = write_trace_db(s->dir_fd, elems, line_start, p->nr_threads, 4 * period,
				     period);
	}
out:
	if (err)
		host->error(host, "hpctoolkit: writing %s in %s: %s", what, s->path,
			    strerror(-err));
	if (elems)
		munmap(elems, map_len);
	free((char *)info.title);
	free((char *)info.description);
	free(line_start);
	free(vals);
	free(ids);
	free(leaf);
	return err;
}

static void hpc_close(void *state)
{
	struct hpc_state *s = state;
	struct thread_ent *te, *tt;
	struct leaf_ent *le, *lt;

	if (!s)
		return;
	HASH_ITER(hh, s->threads, te, tt) {
		HASH_DEL(s->threads, te);
		free(te);
	}
	HASH_ITER(hh, s->leaves, le, lt) {
		HASH_DEL(s->leaves, le);
		free(le);
	}
	hpc_cct_free(&s->cct);
	bw_free(&s->spool);
	if (s->spool_fd >= 0)
		close(s->spool_fd);
	free(s);
}

static const struct bpfprof_plugin hpc_plugin = {
	.abi_version = BPFPROF_PLUGIN_ABI_VERSION,
	.flags = BPFPROF_PLUGIN_STREAM | BPFPROF_PLUGIN_DIRECTORY,
	.name = "hpctoolkit",
	.description = "HPCToolkit v4 database directory for hpcviewer (meta.db, profile.db, cct.db, trace.db)",
	.default_output = "bpfprof.hpcdb",
	.open = hpc_open,
	.event = hpc_event,
	.write = hpc_write,
	.close = hpc_close,
};

BPFPROF_PLUGIN_EXPORT const struct bpfprof_plugin *bpfprof_plugin_entry(uint32_t host_abi_version)
{
	if (host_abi_version != BPFPROF_PLUGIN_ABI_VERSION)
		return NULL;
	return &hpc_plugin;
}
