// SPDX-License-Identifier: BSD-2-Clause
/*
 * summary.c - owns the end-of-run report on stderr (see summary.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "profile/profile.h"
#include "summary.h"
#include "symbols/perfmap.h"
#include "unwind/cfi_walk.h"

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

/* Kernel leaf frames, by address, until we know whether they need names. */
struct kernel_leaf {
	uint64_t key;			/* ip */
	uint64_t samples;
	UT_hash_handle hh;
};

/* One user frame's name, symbolized once per (process, address). */
struct frame_memo {
	struct { uint64_t pid, ip; } key;	/* no padding: hashed as bytes */
	bool resolved;
	char *name;
	UT_hash_handle hh;
};

struct tally {
	struct func_total *totals;	/* self samples by function name */
	struct frame_memo *frames;	/* names asked for so far */
	struct kernel_leaf *kleaves;
	uint64_t kernel_self;		/* samples whose leaf is a kernel frame */
	uint64_t user_frames, unresolved, kernel_frames;
};

static void add_kernel_leaf(struct tally *t, uint64_t ip, uint64_t samples)
{
	struct kernel_leaf *k;

	t->kernel_self += samples;
	HASH_FIND(hh, t->kleaves, &ip, sizeof(ip), k);
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			return;
		k->key = ip;
		HASH_ADD(hh, t->kleaves, key, sizeof(k->key), k);
	}
	k->samples += samples;
}

/* The name of user frame @ip of @pid (memoized in @t: stacks share most of
 * their frames); NULL when memory ran out. */
static const struct frame_memo *user_frame(struct tally *t, const struct bpfprof_host *host,
					   uint32_t pid, uint64_t ip)
{
	struct frame_memo *m, key = { 0 };
	char name[512];

	key.key.pid = pid;
	key.key.ip = ip;
	HASH_FIND(hh, t->frames, &key.key, sizeof(key.key), m);
	if (m)
		return m;
	frame_name(host, pid, ip, 0, name, sizeof(name), &key.resolved);
	m = calloc(1, sizeof(*m));
	if (!m || !(m->name = strdup(name))) {
		free(m);
		return NULL;
	}
	m->key = key.key;
	m->resolved = key.resolved;
	HASH_ADD(hh, t->frames, key, sizeof(m->key), m);
	return m;
}

static void free_frames(struct tally *t)
{
	struct frame_memo *m, *tmp;

	HASH_ITER(hh, t->frames, m, tmp) {
		HASH_DEL(t->frames, m);
		free(m->name);
		free(m);
	}
}

/*
 * Self samples per user leaf function (named), kernel leaves by address
 * (named later only if they can matter, see name_kernel_leaves()), and user
 * frames that did not resolve.
 */
static void tally(const struct bpfprof_profile *v, const struct bpfprof_host *host, struct tally *t)
{
	const struct frame_memo *m;

	for (size_t i = 0; i < v->nr_counts; i++) {
		const struct bpfprof_count *cnt = &v->counts[i];
		uint32_t pid = v->threads[cnt->thread].pid;
		const struct bpfprof_stack *k = &v->stacks[cnt->kernel_stack];
		const struct bpfprof_stack *u = &v->stacks[cnt->user_stack];

		t->kernel_frames += (uint64_t)k->nr * cnt->samples;
		if (k->nr)
			add_kernel_leaf(t, k->ips[0], cnt->samples);
		for (uint32_t f = 0; f < u->nr; f++) {
			/* return addresses: look up the call instruction */
			m = user_frame(t, host, pid, u->ips[f] - (f > 0));
			t->user_frames += cnt->samples;
			t->unresolved += m && m->resolved ? 0 : cnt->samples;
			if (f == 0 && k->nr == 0)
				add_total(&t->totals, m ? m->name : "[unknown]", cnt->samples);
		}
		if (k->nr == 0 && u->nr == 0)
			add_total(&t->totals, "[no stack]", cnt->samples);
	}
}

/* The samples of the TOP_FUNCTIONS-th biggest function so far (0 if fewer). */
static uint64_t top_threshold(struct func_total **totals)
{
	struct func_total *f;
	int n = 0;

	HASH_SORT(*totals, by_samples_desc);
	for (f = *totals; f; f = f->hh.next)
		if (++n == TOP_FUNCTIONS)
			return f->samples;
	return 0;
}

/*
 * Naming kernel frames means reading /proc/kallsyms, ~50 ms of system time
 * here: more than the rest of a short run costs.  No kernel function can
 * have more self samples than all kernel leaves together, so when that sum
 * is below the smallest of the top user functions, or below 1% of the
 * samples (too little for a top-functions list), the kernel leaves stay one
 * "[kernel]" line and kallsyms is never read.
 */
static void name_kernel_leaves(const struct bpfprof_host *host, struct tally *t, uint64_t kept)
{
	struct kernel_leaf *k, *tmp;
	char name[512];
	bool ok;
	uint64_t threshold = top_threshold(&t->totals);
	bool named = t->kernel_self >= (threshold > kept / 100 ? threshold : kept / 100);

	HASH_ITER(hh, t->kleaves, k, tmp) {
		if (named) {
			frame_name(host, 0, k->key, 1, name, sizeof(name), &ok);	/* kernel: no pid */
			add_total(&t->totals, name, k->samples);
		}
		HASH_DEL(t->kleaves, k);
		free(k);
	}
	if (!named && t->kernel_self)
		add_total(&t->totals, "[kernel]", t->kernel_self);
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
	struct tally ty = { 0 };
	struct func_total *t, *tmp;
	struct bpfprof_profile v;
	uint64_t kept = 0;
	int shown = 0;

	if (profile_view(profile, run, &v))
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
	tally(&v, host, &ty);
	free_frames(&ty);
	name_kernel_leaves(host, &ty, kept);
	fprintf(out, "bpfprof: unresolved user frames: %llu of %llu; kernel frames: %llu; "
		"distinct stacks: %zu\n", (unsigned long long)ty.unresolved,
		(unsigned long long)ty.user_frames, (unsigned long long)ty.kernel_frames,
		profile_nr_stacks(profile) - 1);
	for (size_t i = 0; i < outs->nr; i++)
		fprintf(out, "bpfprof: wrote %s\n", outs->paths[i]);
	HASH_SORT(ty.totals, by_samples_desc);
	if (ty.totals)
		fprintf(out, "bpfprof: top functions (self):\n");
	HASH_ITER(hh, ty.totals, t, tmp) {
		if (shown++ < TOP_FUNCTIONS && kept)
			fprintf(out, "  %6.2f%% %8llu  %s\n", 100.0 * t->samples / kept,
				(unsigned long long)t->samples, t->name);
		HASH_DEL(ty.totals, t);
		free(t->name);
		free(t);
	}
}

void summary_print_unwind(FILE *out, const struct ingest_unwind_stats *st, bool copies,
			  uint32_t copy_bytes)
{
	static const char *const names[UNWIND_STOP_NR] = {
		[UNWIND_END] = "complete", [UNWIND_TRUNCATED] = "stack-copy-too-small",
		[UNWIND_NO_CFI] = "no-cfi", [UNWIND_UNMAPPED] = "unmapped-address",
		[UNWIND_MAX_DEPTH] = "max-depth", [UNWIND_ERROR] = "error",
		[UNWIND_NO_STACK] = "stack-unreadable",
	};

	if (copies)	/* auto: young processes' samples before their tables, and
			 * samples through FDEs not built yet (lazy tables) */
		fprintf(out, "bpfprof: stacks copied and unwound here (new processes, FDEs not "
			"built yet): %llu;",
			(unsigned long long)st->samples);
	else
		fprintf(out, "bpfprof: dwarf unwinding: %llu samples;",
			(unsigned long long)st->samples);
	for (int i = 0; i < UNWIND_STOP_NR; i++)
		if (st->stops[i])
			fprintf(out, " %s %llu", names[i] ? names[i] : "other",
				(unsigned long long)st->stops[i]);
	if (st->leaf_guesses)	/* assembly without CFI, unwind.h */
		fprintf(out, "; leaves without CFI continued from [sp] %llu",
			(unsigned long long)st->leaf_guesses);
	fprintf(out, "; backlog at most %.1f ms", st->lag_max_ns / 1e6);
	if (st->copies_withheld)	/* their walks' frames stand */
		fprintf(out, "; %llu more not copied, the ring lacking room",
			(unsigned long long)st->copies_withheld);
	fputc('\n', out);
	if (st->stops[UNWIND_TRUNCATED] && copy_bytes < BPFPROF_MAX_USER_STACK)
		fprintf(out, "bpfprof: %llu of those stacks went deeper than the %u bytes copied; "
			"--call-graph %s,%d copies more\n",
			(unsigned long long)st->stops[UNWIND_TRUNCATED], copy_bytes,
			copies ? "auto" : "dwarf", BPFPROF_MAX_USER_STACK);
}

void summary_print_walk(FILE *out, const struct sampler_stats *stats,
			const struct cfi_loader *loader, bool verbose)
{
	struct cfi_loader_stats ls;
	uint64_t walks = 0;

	for (int i = 0; i < CFI_WALK_STOP_NR; i++)
		walks += stats->walk_stops[i];
	fprintf(out, "bpfprof: user stack walks: %llu;", (unsigned long long)walks);
	for (int i = 0; i < CFI_WALK_STOP_NR; i++)
		if (stats->walk_stops[i])
			fprintf(out, " %s %llu", cfi_walk_stop_name(i),
				(unsigned long long)stats->walk_stops[i]);
	if (stats->leaf_guesses)	/* assembly without CFI, bpf/cfi_row.h */
		fprintf(out, "; leaves without CFI continued from [sp] %llu",
			(unsigned long long)stats->leaf_guesses);
	if (stats->fp_steps)		/* code with frame pointers, without CFI */
		fprintf(out, "; frames without CFI continued by rbp %llu",
			(unsigned long long)stats->fp_steps);
	fputc('\n', out);
	if (!verbose)
		return;
	if (stats->row_cache_hits + stats->row_cache_misses)
		fprintf(out, "bpfprof: unwind rows: %.1f per walk; %.1f%% from the BPF row cache, "
			"%llu searched; %.2f stack reads per walk outside its window, "
			"%.2f mapping searches per walk; %.1f%% of the steps by the common "
			"rules\n",
			walks ? (double)(stats->row_cache_hits + stats->row_cache_misses) / walks : 0.0,
			100.0 * stats->row_cache_hits /
				(stats->row_cache_hits + stats->row_cache_misses),
			(unsigned long long)stats->row_cache_misses,
			walks ? (double)stats->stack_reads / walks : 0.0,
			walks ? (double)stats->map_searches / walks : 0.0,
			100.0 * stats->common_steps /
				(stats->row_cache_hits + stats->row_cache_misses));
	if (walks)
		fprintf(out, "bpfprof: walk memo: %.1f frames per walk from the thread's last "
			"walk; %llu memo frames met whose stack had changed\n",
			(double)stats->memo_frames / walks, (unsigned long long)stats->memo_fails);
	cfi_loader_stats(loader, &ls);
	fprintf(out, "bpfprof: unwind tables: %llu loaded, %llu rows (%.1f KiB) in %.1f KiB of BPF maps, from "
		"%.1f KiB of CFI in %.1f ms (%.1f ms/MB) + %.1f ms to load; %llu files without a "
		"table, %llu over --unwind-memory; %llu process updates (%llu refused), %llu "
		"mappings past %d per process, %llu cache hits; anonymous code: %llu "
		"mappings by frame pointer, %llu of CPython trampolines; %llu tables from the "
		"on-disk cache, read in %.1f ms; %llu lazy tables, %llu FDEs built for walks, "
		"%llu tables laid out again, %llu built whole\n",
		(unsigned long long)ls.tables, (unsigned long long)ls.rows, ls.table_bytes / 1024.0,
		ls.chunk_bytes / 1024.0,
		ls.cfi_bytes / 1024.0, ls.build_ns / 1e6,
		ls.cfi_bytes ? (ls.build_ns / 1e6) / (ls.cfi_bytes / 1e6) : 0.0, ls.load_ns / 1e6,
		(unsigned long long)ls.files_without_table, (unsigned long long)ls.files_over_budget,
		(unsigned long long)ls.process_updates, (unsigned long long)ls.process_update_errors,
		(unsigned long long)ls.mappings_dropped, CFI_MAX_MAPPINGS,
		(unsigned long long)ls.cache_hits, (unsigned long long)ls.anonymous_mappings,
		(unsigned long long)ls.trampoline_mappings, (unsigned long long)ls.cached_tables,
		ls.cache_read_ns / 1e6, (unsigned long long)ls.lazy_tables,
		(unsigned long long)ls.fdes_built, (unsigned long long)ls.relayouts,
		(unsigned long long)ls.tables_completed);
}

struct perfmap_totals {
	struct perfmap_stats st;
	uint64_t procs, entries;
};

static void add_perfmap(void *ctx, struct proc *proc)
{
	struct perfmap_totals *t = ctx;
	const struct perfmap_stats *st;

	if (!proc->perfmap)
		return;
	st = perfmap_stats(proc->perfmap);
	t->procs++;
	t->entries += perfmap_entries(proc->perfmap);
	t->st.lines += st->lines;
	t->st.malformed += st->malformed;
	t->st.reads += st->reads;
	t->st.bytes += st->bytes;
	t->st.resets += st->resets;
	t->st.lookups += st->lookups;
	t->st.misses += st->misses;
}

struct proc_totals {
	unsigned long long procs, exited, maps, exited_maps;
};

static void add_proc(void *ctx, struct proc *proc)
{
	struct proc_totals *t = ctx;
	size_t maps = proc->nr_maps + proc->nr_past_maps;

	t->procs++;
	t->maps += maps;
	if (proc->exited) {
		t->exited++;
		t->exited_maps += maps;
	}
}

void summary_print_processes(FILE *out, struct profile *profile)
{
	struct proc_totals t = { 0 };

	profile_for_each_proc(profile, add_proc, &t);
	fprintf(out, "bpfprof: processes tracked: %llu, %llu of them exited; mappings kept: %llu, "
		"%.1f per exited process\n", t.procs, t.exited, t.maps,
		t.exited ? (double)t.exited_maps / (double)t.exited : 0.0);
}

void summary_print_perfmaps(FILE *out, struct profile *profile)
{
	struct perfmap_totals t = { 0 };

	profile_for_each_proc(profile, add_perfmap, &t);
	if (!t.procs)
		return;
	fprintf(out, "bpfprof: perf maps (JIT names): %llu processes with JIT code, %llu entries from "
		"%llu lines (%.1f KiB; %llu malformed, %llu files replaced) in %llu reads; %llu "
		"lookups of frames, %llu missed at the time\n",
		(unsigned long long)t.procs, (unsigned long long)t.entries,
		(unsigned long long)t.st.lines, t.st.bytes / 1024.0,
		(unsigned long long)t.st.malformed, (unsigned long long)t.st.resets,
		(unsigned long long)t.st.reads, (unsigned long long)t.st.lookups,
		(unsigned long long)t.st.misses);
}
