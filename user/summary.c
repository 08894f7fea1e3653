// SPDX-License-Identifier: BSD-2-Clause
/*
 * summary.c - owns the end-of-run report on stderr (see summary.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "profile.h"
#include "summary.h"

#define TOP_FUNCTIONS 10

static const char *const drop_names[DROP_NR] = {
	[DROP_USER_STACK] = "user-stack",
	[DROP_KERNEL_STACK] = "kernel-stack",
	[DROP_STACK_MAP_FULL] = "stack-map-full",
	[DROP_COUNT_MAP_FULL] = "count-map-full",
	[DROP_RINGBUF_FULL] = "ringbuf-full",
};

struct func_total {
	char *name;
	uint64_t samples;
	UT_hash_handle hh;
};

void summary_add_output(struct summary_outputs *o, const char *path)
{
	char **grown = realloc(o->paths, (o->nr + 1) * sizeof(*grown));

	if (!grown)
		return;
	o->paths = grown;
	o->paths[o->nr] = strdup(path);
	if (o->paths[o->nr])
		o->nr++;
}

void summary_outputs_free(struct summary_outputs *o)
{
	for (size_t i = 0; i < o->nr; i++)
		free(o->paths[i]);
	free(o->paths);
	memset(o, 0, sizeof(*o));
}

/* "function", or "[unknown] (module)" when only the module is known. */
static void frame_name(const struct bpfprof_host *host, uint32_t pid, uint64_t ip, int kernel,
		       char *buf, size_t size, bool *resolved)
{
	struct bpfprof_symbol sym;
	int err = host->symbolize(host, pid, ip, kernel, &sym);

	*resolved = !err && sym.function;
	if (*resolved)
		snprintf(buf, size, "%s", sym.function);
	else if (!err && sym.module)
		snprintf(buf, size, "[unknown] (%s)", sym.module);
	else
		snprintf(buf, size, "[unknown]");
}

static void add_total(struct func_total **totals, const char *name, uint64_t samples)
{
	struct func_total *t;

	HASH_FIND_STR(*totals, name, t);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || !(t->name = strdup(name))) {
			free(t);
			return;
		}
		HASH_ADD_KEYPTR(hh, *totals, t->name, strlen(t->name), t);
	}
	t->samples += samples;
}

static int by_samples_desc(struct func_total *a, struct func_total *b)
{
	return a->samples < b->samples ? 1 : a->samples > b->samples ? -1 : strcmp(a->name, b->name);
}

/* Self samples per leaf function, and frames that did not resolve. */
static void tally(const struct bpfprof_profile *v, const struct bpfprof_host *host,
		  struct func_total **totals, uint64_t *frames, uint64_t *unresolved)
{
	char name[512];
	bool ok;

	for (size_t i = 0; i < v->nr_counts; i++) {
		const struct bpfprof_count *cnt = &v->counts[i];
		uint32_t pid = v->threads[cnt->thread].pid;
		const struct bpfprof_stack *k = &v->stacks[cnt->kernel_stack];
		const struct bpfprof_stack *u = &v->stacks[cnt->user_stack];

		for (int s = 0; s < 2; s++) {
			const struct bpfprof_stack *st = s ? u : k;

			for (uint32_t f = 0; f < st->nr; f++) {
				/* return addresses: look up the call instruction */
				frame_name(host, pid, st->ips[f] - (f > 0), !s, name, sizeof(name), &ok);
				*frames += cnt->samples;
				*unresolved += ok ? 0 : cnt->samples;
				if (f == 0 && (s == 0 || k->nr == 0))
					add_total(totals, name, cnt->samples);
			}
		}
		if (k->nr == 0 && u->nr == 0)
			add_total(totals, "[no stack]", cnt->samples);
	}
}

static void print_drops(FILE *out, const struct sampler_stats *st)
{
	uint64_t total = 0;

	for (int r = 0; r < DROP_NR; r++)
		total += st->drops[r];
	fprintf(out, "bpfprof: drops:%s", total ? "" : " none");
	for (int r = 0; r < DROP_NR; r++) {
		const uint64_t *errs = r == DROP_USER_STACK ? st->user_stack_errno
				     : r == DROP_KERNEL_STACK ? st->kernel_stack_errno : NULL;

		if (!st->drops[r])
			continue;
		fprintf(out, " %s %llu", drop_names[r], (unsigned long long)st->drops[r]);
		for (int e = 1; errs && e < STACK_ERRNO_SLOTS; e++)
			if (errs[e])
				fprintf(out, " (%s: %llu)", strerrorname_np(e) ? strerrorname_np(e) : "?",
					(unsigned long long)errs[e]);
	}
	if (st->events_lost)
		fprintf(out, "; lifecycle events lost %llu", (unsigned long long)st->events_lost);
	fputc('\n', out);
}

void summary_print(FILE *out, const struct bpfprof_run *run, struct profile *profile,
		   const struct bpfprof_host *host, const struct sampler_stats *stats,
		   const struct summary_outputs *outs)
{
	struct func_total *totals = NULL, *t, *tmp;
	struct bpfprof_profile v;
	uint64_t frames = 0, unresolved = 0, kept = 0;
	int shown = 0;

	if (profile_view(profile, run, 0, &v))
		return;
	for (size_t i = 0; i < v.nr_counts; i++)
		kept += v.counts[i].samples;
	fprintf(out, "bpfprof: %llu samples (%llu seen) from %zu process%s, %zu thread%s in %.2f s, "
		"%s %llu %s\n", (unsigned long long)kept, (unsigned long long)run->samples_seen,
		v.nr_processes, v.nr_processes == 1 ? "" : "es", v.nr_threads,
		v.nr_threads == 1 ? "" : "s", (run->end_ns - run->start_ns) / 1e9,
		run->event, (unsigned long long)(run->sample_freq ? run->sample_freq : run->sample_period),
		run->sample_freq ? "Hz" : "ns period");
	print_drops(out, stats);
	tally(&v, host, &totals, &frames, &unresolved);
	fprintf(out, "bpfprof: unresolved frames: %llu of %llu; distinct stacks: %zu\n",
		(unsigned long long)unresolved, (unsigned long long)frames,
		profile_nr_stacks(profile) - 1);
	for (size_t i = 0; i < outs->nr; i++)
		fprintf(out, "bpfprof: wrote %s\n", outs->paths[i]);
	HASH_SORT(totals, by_samples_desc);
	if (totals)
		fprintf(out, "bpfprof: top functions (self):\n");
	HASH_ITER(hh, totals, t, tmp) {
		if (shown++ < TOP_FUNCTIONS && kept)
			fprintf(out, "  %6.2f%% %8llu  %s\n", 100.0 * t->samples / kept,
				(unsigned long long)t->samples, t->name);
		HASH_DEL(totals, t);
		free(t->name);
		free(t);
	}
}
