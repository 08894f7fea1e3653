// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_build.c - turns a bpfprof profile into the tables of profile.proto
 * (struct pprof_profile, see pprof.h).
 *
 *  - One Sample per bpfprof count (thread, user stack, kernel stack): its
 *    locations are the kernel frames (leaf first) then the user frames,
 *    values [samples, samples * period ns], labels pid and tid (numeric),
 *    comm (process name) and thread (thread name).
 *  - One Location per distinct (process, address, leaf or not); kernel
 *    addresses are shared by all processes.  The address is the one in the
 *    stack (for callers, the return address), but a caller is symbolized
 *    at address - 1, so its Line is the call site, not the next statement.
 *  - One Mapping per /proc/PID/maps line that holds a location, with its
 *    file, build-id (lower-case hex) and start/limit/offset, and one
 *    "[kernel.kallsyms]" mapping spanning the kernel addresses seen.
 *    The process executables come first (pprof takes the first mapping
 *    as the main binary), the kernel last.
 *  - One Function per distinct (name, source file).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "bpfprof/plugin.h"
#include "pprof.h"

struct str_entry {
	const char *s;			/* == strings[idx] */
	int64_t idx;
	UT_hash_handle hh;
};

struct loc_key {
	uint32_t pid;			/* 0 for kernel addresses */
	uint32_t kind;			/* bit 0: leaf, bit 1: kernel */
	uint64_t addr;
};

struct loc_entry {
	struct loc_key key;
	uint64_t id;
	UT_hash_handle hh;
};

struct func_key {
	int64_t name, file;
};

struct func_entry {
	struct func_key key;
	uint64_t id;
	UT_hash_handle hh;
};

struct map_entry {
	const struct bpfprof_mapping *key;
	size_t index;			/* into p->mappings */
	UT_hash_handle hh;
};

/* Per mapping: how many of its locations have a function/file/line. */
struct map_stats {
	size_t locations, functions, files, lines;
};

struct builder {
	const struct bpfprof_host *host;
	struct pprof_profile *p;
	struct str_entry *strs;
	struct loc_entry *locs;
	struct func_entry *funcs;
	struct map_entry *maps;
	struct map_stats *stats;	/* parallel to p->mappings */
	size_t cap_strings, cap_mappings, cap_locations, cap_functions;
	ptrdiff_t kernel_map;		/* index of the kernel mapping, -1 if none */
};

/* Grow *arr (of *cap elements of @size) to hold @need; 0 or -ENOMEM. */
static int grow(void *arr, size_t *cap, size_t need, size_t size)
{
	void **a = arr;
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*a, n * size);
	if (!q)
		return -ENOMEM;
	*a = q;
	*cap = n;
	return 0;
}

/* Index of @s in the string table, adding it if new; -1 on ENOMEM. */
static int64_t string_index(struct builder *bd, const char *s)
{
	struct pprof_profile *p = bd->p;
	struct str_entry *e;
	char *copy;

	if (!s)
		s = "";
	HASH_FIND_STR(bd->strs, s, e);
	if (e)
		return e->idx;
	if (grow(&p->strings, &bd->cap_strings, p->nr_strings + 1, sizeof(*p->strings)))
		return -1;
	e = calloc(1, sizeof(*e));
	copy = strdup(s);
	if (!e || !copy) {
		free(e);
		free(copy);
		return -1;
	}
	e->s = copy;
	e->idx = p->nr_strings;
	p->strings[p->nr_strings++] = copy;
	HASH_ADD_KEYPTR(hh, bd->strs, e->s, strlen(e->s), e);
	return e->idx;
}

static int64_t hex_string_index(struct builder *bd, const uint8_t *bytes, uint32_t n)
{
	char hex[2 * 64 + 1];

	if (!bytes || !n)
		return 0;
	if (n > 64)
		n = 64;
	for (uint32_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
	return string_index(bd, hex);
}

/* Append an empty mapping; its index or -1. */
static ptrdiff_t new_mapping(struct builder *bd)
{
	struct pprof_profile *p = bd->p;
	size_t cap = bd->cap_mappings;

	if (grow(&p->mappings, &bd->cap_mappings, p->nr_mappings + 1, sizeof(*p->mappings)))
		return -1;
	bd->cap_mappings = cap;
	if (grow(&bd->stats, &bd->cap_mappings, p->nr_mappings + 1, sizeof(*bd->stats)))
		return -1;
	memset(&p->mappings[p->nr_mappings], 0, sizeof(*p->mappings));
	memset(&bd->stats[p->nr_mappings], 0, sizeof(*bd->stats));
	p->mappings[p->nr_mappings].id = p->nr_mappings + 1;
	return p->nr_mappings++;
}

static ptrdiff_t user_mapping(struct builder *bd, const struct bpfprof_mapping *m,
			      const struct bpfprof_process *proc)
{
	struct map_entry *e;
	struct pprof_mapping *pm;
	ptrdiff_t i;

	HASH_FIND_PTR(bd->maps, &m, e);
	if (e)
		return e->index;
	i = new_mapping(bd);
	e = calloc(1, sizeof(*e));
	if (i < 0 || !e) {
		free(e);
		return -1;
	}
	pm = &bd->p->mappings[i];
	pm->memory_start = m->start;
	pm->memory_limit = m->end;
	pm->file_offset = m->pgoff;
	pm->filename = string_index(bd, m->path);
	pm->build_id = hex_string_index(bd, m->build_id, m->build_id_size);
	pm->main_binary = proc && proc->exe && m->path && !strcmp(proc->exe, m->path);
	if (pm->filename < 0 || pm->build_id < 0) {
		free(e);
		return -1;
	}
	e->key = m;
	e->index = i;
	HASH_ADD_PTR(bd->maps, key, e);
	return i;
}

static ptrdiff_t kernel_mapping(struct builder *bd, uint64_t addr)
{
	struct pprof_mapping *pm;

	if (bd->kernel_map < 0) {
		ptrdiff_t i = new_mapping(bd);
		int64_t name;

		if (i < 0 || (name = string_index(bd, "[kernel.kallsyms]")) < 0)
			return -1;
		pm = &bd->p->mappings[i];
		pm->filename = name;
		pm->kernel = 1;
		pm->memory_start = addr;
		pm->memory_limit = addr + 1;
		bd->kernel_map = i;
	}
	pm = &bd->p->mappings[bd->kernel_map];
	if (addr < pm->memory_start)
		pm->memory_start = addr;
	if (addr >= pm->memory_limit)
		pm->memory_limit = addr + 1;
	return bd->kernel_map;
}

/* Id of the Function (name, file), adding it if new; 0 on ENOMEM. */
static uint64_t function_id(struct builder *bd, const char *name, const char *file)
{
	struct pprof_profile *p = bd->p;
	struct func_entry *e;
	struct func_key key;

	memset(&key, 0, sizeof(key));
	key.name = string_index(bd, name);
	key.file = string_index(bd, file);
	if (key.name < 0 || key.file < 0)
		return 0;
	HASH_FIND(hh, bd->funcs, &key, sizeof(key), e);
	if (e)
		return e->id;
	if (grow(&p->functions, &bd->cap_functions, p->nr_functions + 1, sizeof(*p->functions)))
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return 0;
	e->key = key;
	e->id = p->nr_functions + 1;
	p->functions[p->nr_functions++] = (struct pprof_function){
		.id = e->id, .name = key.name, .system_name = key.name, .filename = key.file,
	};
	HASH_ADD(hh, bd->funcs, key, sizeof(key), e);
	return e->id;
}

/* Id of the Location of @ip (see the file comment); 0 on ENOMEM. */
static uint64_t location_id(struct builder *bd, const struct bpfprof_process *proc,
			    uint64_t ip, int kernel, int leaf)
{
	struct pprof_profile *p = bd->p;
	struct bpfprof_symbol sym;
	struct pprof_location loc;
	struct loc_entry *e;
	struct loc_key key;
	ptrdiff_t mi = -1;
	uint32_t pid = proc ? proc->pid : 0;
	int rc;

	memset(&key, 0, sizeof(key));
	key.pid = kernel ? 0 : pid;
	key.kind = (leaf ? 1u : 0u) | (kernel ? 2u : 0u);
	key.addr = ip;
	HASH_FIND(hh, bd->locs, &key, sizeof(key), e);
	if (e)
		return e->id;

	memset(&sym, 0, sizeof(sym));
	memset(&loc, 0, sizeof(loc));
	rc = bd->host->symbolize(bd->host, pid, leaf || !ip ? ip : ip - 1, kernel, &sym);
	loc.address = ip;
	if (kernel)
		mi = kernel_mapping(bd, ip);
	else if (sym.mapping)
		mi = user_mapping(bd, sym.mapping, proc);
	if (!kernel && !sym.mapping)
		mi = -2;		/* in no known mapping: no mapping id */
	if (mi == -1)
		return 0;
	if (rc == 0 && sym.function) {
		loc.line.function_id = function_id(bd, sym.function, sym.file);
		if (!loc.line.function_id)
			return 0;
		loc.line.line = sym.line;
	}
	if (mi >= 0) {
		struct map_stats *s = &bd->stats[mi];

		loc.mapping_id = p->mappings[mi].id;
		s->locations++;
		s->functions += loc.line.function_id != 0;
		s->files += loc.line.function_id && sym.file;
		s->lines += loc.line.function_id && sym.line;
	}
	if (grow(&p->locations, &bd->cap_locations, p->nr_locations + 1, sizeof(*p->locations)))
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return 0;
	e->key = key;
	e->id = loc.id = p->nr_locations + 1;
	p->locations[p->nr_locations++] = loc;
	HASH_ADD(hh, bd->locs, key, sizeof(key), e);
	return e->id;
}

static int add_labels(struct builder *bd, struct pprof_sample *s, const struct bpfprof_thread *t,
		      const struct bpfprof_process *proc)
{
	int64_t k_pid = string_index(bd, "pid"), k_tid = string_index(bd, "tid");
	int64_t k_comm = string_index(bd, "comm"), k_thread = string_index(bd, "thread");
	int64_t comm = string_index(bd, proc ? proc->comm : "");
	int64_t tcomm = string_index(bd, t->comm);

	if (k_pid < 0 || k_tid < 0 || k_comm < 0 || k_thread < 0 || comm < 0 || tcomm < 0)
		return -ENOMEM;
	s->labels[0] = (struct pprof_label){ .key = k_pid, .num = t->pid };
	s->labels[1] = (struct pprof_label){ .key = k_tid, .num = t->tid };
	s->labels[2] = (struct pprof_label){ .key = k_comm, .str = comm };
	s->labels[3] = (struct pprof_label){ .key = k_thread, .str = tcomm };
	s->nr_labels = 4;
	return 0;
}

static int add_sample(struct builder *bd, const struct bpfprof_profile *prof,
		      const struct bpfprof_count *c)
{
	struct pprof_profile *p = bd->p;
	struct pprof_sample *s = &p->samples[p->nr_samples];
	const struct bpfprof_thread *t;
	const struct bpfprof_process *proc;
	const struct bpfprof_stack *ks, *us;
	int64_t period = prof->run ? (int64_t)prof->run->sample_period : 0;

	if (c->thread >= prof->nr_threads || c->user_stack >= prof->nr_stacks ||
	    c->kernel_stack >= prof->nr_stacks) {
		bd->host->error(bd->host, "pprof: count %zu refers to a missing thread or stack",
				p->nr_samples);
		return -EINVAL;
	}
	t = &prof->threads[c->thread];
	proc = t->process < prof->nr_processes ? &prof->processes[t->process] : NULL;
	ks = &prof->stacks[c->kernel_stack];
	us = &prof->stacks[c->user_stack];

	memset(s, 0, sizeof(*s));
	p->nr_samples++;
	s->values[0] = c->samples;
	s->values[1] = c->samples * period;
	s->location_ids = calloc(ks->nr + us->nr + 1, sizeof(*s->location_ids));
	if (!s->location_ids)
		return -ENOMEM;
	for (uint32_t i = 0; i < ks->nr; i++) {
		uint64_t id = location_id(bd, proc, ks->ips[i], 1, i == 0);

		if (!id)
			return -ENOMEM;
		s->location_ids[s->nr_locations++] = id;
	}
	for (uint32_t i = 0; i < us->nr; i++) {
		uint64_t id = location_id(bd, proc, us->ips[i], 0, i == 0);

		if (!id)
			return -ENOMEM;
		s->location_ids[s->nr_locations++] = id;
	}
	return add_labels(bd, s, t, proc);
}

/* Executables first, the kernel last, else in order of first use. */
static int compare_mappings(const void *a, const void *b)
{
	const struct pprof_mapping *x = a, *y = b;

	if (x->kernel != y->kernel)
		return x->kernel - y->kernel;
	if (x->main_binary != y->main_binary)
		return y->main_binary - x->main_binary;
	return (x->id > y->id) - (x->id < y->id);
}

static void finish_mappings(struct builder *bd)
{
	struct pprof_profile *p = bd->p;

	for (size_t i = 0; i < p->nr_mappings; i++) {
		struct pprof_mapping *m = &p->mappings[i];
		struct map_stats *s = &bd->stats[i];

		m->has_functions = s->locations && s->functions == s->locations;
		m->has_filenames = s->locations && s->files == s->locations;
		m->has_line_numbers = s->locations && s->lines == s->locations;
	}
	if (p->nr_mappings)
		qsort(p->mappings, p->nr_mappings, sizeof(*p->mappings), compare_mappings);
}

static int add_header(struct builder *bd, const struct bpfprof_run *run)
{
	struct pprof_profile *p = bd->p;
	int64_t samples = string_index(bd, "samples"), count = string_index(bd, "count");
	int64_t cpu = string_index(bd, "cpu"), ns = string_index(bd, "nanoseconds");
	char buf[512];

	if (samples < 0 || count < 0 || cpu < 0 || ns < 0)
		return -ENOMEM;
	p->sample_type[0] = (struct pprof_value_type){ samples, count };
	p->sample_type[1] = (struct pprof_value_type){ cpu, ns };
	p->period_type = (struct pprof_value_type){ cpu, ns };
	p->default_sample_type = cpu;
	if (!run)
		return 0;
	p->period = run->sample_period;
	p->time_nanos = run->realtime_anchor_ns;
	p->duration_nanos = run->end_ns > run->start_ns ? run->end_ns - run->start_ns : 0;

	p->comments = calloc(3, sizeof(*p->comments));
	if (!p->comments)
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "bpfprof %s", run->version ? run->version : "");
	p->comments[p->nr_comments++] = string_index(bd, buf);
	snprintf(buf, sizeof(buf), "target: %s", run->target ? run->target : "");
	p->comments[p->nr_comments++] = string_index(bd, buf);
	snprintf(buf, sizeof(buf), "%s at %" PRIu64 " Hz, period %" PRIu64 " ns; %" PRIu64
		 " samples kept of %" PRIu64 " seen", run->event ? run->event : "",
		 run->sample_freq, run->sample_period, run->samples_kept, run->samples_seen);
	p->comments[p->nr_comments++] = string_index(bd, buf);
	for (size_t i = 0; i < p->nr_comments; i++)
		if (p->comments[i] < 0)
			return -ENOMEM;
	return 0;
}

static void free_builder(struct builder *bd)
{
	struct str_entry *s, *st;
	struct loc_entry *l, *lt;
	struct func_entry *f, *ft;
	struct map_entry *m, *mt;

	HASH_ITER(hh, bd->strs, s, st) {
		HASH_DEL(bd->strs, s);
		free(s);		/* the string itself belongs to p->strings */
	}
	HASH_ITER(hh, bd->locs, l, lt) {
		HASH_DEL(bd->locs, l);
		free(l);
	}
	HASH_ITER(hh, bd->funcs, f, ft) {
		HASH_DEL(bd->funcs, f);
		free(f);
	}
	HASH_ITER(hh, bd->maps, m, mt) {
		HASH_DEL(bd->maps, m);
		free(m);
	}
	free(bd->stats);
}

int pprof_build(struct pprof_profile *p, const struct bpfprof_host *host,
		const struct bpfprof_profile *prof)
{
	struct builder bd = { .host = host, .p = p, .kernel_map = -1 };
	int err;

	memset(p, 0, sizeof(*p));
	err = string_index(&bd, "") == 0 ? add_header(&bd, prof->run) : -ENOMEM;
	if (!err && prof->nr_counts) {
		p->samples = calloc(prof->nr_counts, sizeof(*p->samples));
		if (!p->samples)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < prof->nr_counts; i++)
		err = add_sample(&bd, prof, &prof->counts[i]);
	if (!err)
		finish_mappings(&bd);
	free_builder(&bd);
	if (err == -ENOMEM)
		host->error(host, "pprof: out of memory");
	return err;
}

void pprof_free(struct pprof_profile *p)
{
	for (size_t i = 0; i < p->nr_samples; i++)
		free(p->samples[i].location_ids);
	free(p->samples);
	free(p->mappings);
	free(p->locations);
	free(p->functions);
	for (size_t i = 0; i < p->nr_strings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->comments);
	memset(p, 0, sizeof(*p));
}
