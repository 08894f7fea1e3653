// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_tables.c - the deduplicated tables of profile.proto, built while
 * the samples are written (see pprof.h):
 *
 *  - One Location per distinct (scope, address, leaf or not).  The scope
 *    says whose code the address is (pprof_scopes.c): the kernel's,
 *    shared by all processes; a file mapping's, shared by the processes
 *    that map the same file with the same bounds and offset, as `go tool
 *    pprof -merge` would merge them, e.g. forked workers; or one
 *    process's (anonymous and JIT code, [vdso], addresses in no
 *    mapping).  A file location that the host could not symbolize for one
 *    process (it opens files through /proc/PID) stays that process's, so
 *    the others still try their own, and that process keeps it (as the
 *    host, which caches what it could read, would have told it).  The
 *    address is the one in the stack (for callers, the return address),
 *    but a caller is symbolized at address - 1, so its Line is the call
 *    site, not the next statement.
 *    Locations get their ids in the order they are met and are written in
 *    batches of LOC_BATCH, between the samples, each batch in address
 *    order: neighbours share mapping, function and the high bytes of
 *    their addresses, which deflate turns into matches (on the synthetic
 *    profile of tests/bench/writers.c, 12.9 MB in 0.37 s instead of
 *    20.9 MB in 0.64 s in the order met; one sort of all locations at the
 *    end would save another 10% but hold them all in memory and leave
 *    their compression to the end).
 *  - One Function per distinct (name, source file), written with the
 *    next batch of locations; its start line is the line of its first
 *    address, as the host tells it (the line of a Python function's
 *    first instruction, its def line; of a C function's entry, its
 *    opening line), as HPCToolkit's writer does for its procedures.  The host hands out the same string pointers
 *    for the same symbols, so a table by (name pointer, file pointer)
 *    answers most lookups before the one by string contents.
 *  - One Mapping per mapping that holds a location (identical file
 *    mappings of several processes are one), with its file, build-id
 *    (lower-case hex) and start/limit/offset, and one "[kernel.kallsyms]"
 *    mapping spanning the kernel addresses seen.  They are written at the
 *    end (has_functions & co. need every location), the process
 *    executables first (pprof takes the first mapping as the main
 *    binary), the kernel last.
 *  - The string table: every string once, "" first, written at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/plugin.h"
#include "pprof.h"

/* Per mapping: how many of its locations have a function/file/line. */
struct map_stats {
	size_t locations, functions, files, lines;
};

/* A Location to be written. */
struct loc_rec {
	uint64_t addr;
	uint32_t id;
	uint32_t mapping_id;
	uint32_t function_id;
	uint32_t line;
};

/* A Location's address and index, to be sorted. */
struct loc_addr {
	uint64_t addr;
	uint64_t index;
};

struct pprof_tables {
	const struct bpfprof_host *host;
	const struct bpfprof_profile *prof;
	struct pprof_gz *gz;

	struct pprof_scopes *scopes;
	const struct bpfprof_process *proc;	/* symbolizes new user locations */
	size_t proc_index;
	uint8_t *has_own;		/* by process index: see pprof_tables_has_own() */

	struct hashtab str_index;	/* (contents hash, length) -> index + 1 */
	char **strings;
	size_t nr_strings, cap_strings;

	struct hashtab funcs;	/* (name index, file index) -> id */
	struct hashtab func_ptrs;	/* (name pointer, file index) -> id */
	struct hashtab file_ptrs;	/* (file pointer, 0) -> file index + 1 */
	struct pprof_function *functions;	/* not written yet */
	size_t nr_pending_functions, cap_functions;
	size_t nr_functions;

	struct hashtab maps;	/* (class, 1) or (pointer, 0) -> index + 1 */
	struct pprof_mapping *mappings;	/* in order of creation: id = index + 1 */
	struct map_stats *stats;	/* parallel to mappings */
	size_t nr_mappings, cap_mappings;
	ptrdiff_t kernel_map;		/* index of the kernel mapping, -1 if none */

	struct hashtab locs;	/* (address, scope << 1 | leaf) -> id */
	struct loc_rec *recs;		/* not written yet */
	size_t nr_recs, cap_recs;
	size_t nr_locations;
};

/* Most strings, functions, mappings, locations (so that they fit in
 * 32 bits with room to spare). */
#define MAX_ENTRIES (UINT32_MAX / 4)

/* Frames of a stack looked up together. */
#define BATCH 64u

/* Locations written at a time. */
#define LOC_BATCH (512u * 1024)

static uint64_t hash_string(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s + i, n - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ h >> 29;
}

/*
 * The table is keyed by a 64-bit hash of the contents; should two strings
 * share it, the later one goes under the next key of a fixed sequence, so
 * a lookup walks that sequence until a match or a free key.
 */
int64_t pprof_string(struct pprof_tables *t, const char *s)
{
	size_t n;
	uint64_t h;
	uint32_t v;
	char *copy;

	if (!s)
		s = "";
	n = strlen(s);
	for (h = hash_string(s, n);; h += 0x9e3779b97f4a7c15ull) {
		v = pprof_find(&t->str_index, h, (uint32_t)n);
		if (!v)
			break;
		if (!strcmp(t->strings[v - 1], s))
			return v - 1;
	}
	if (t->nr_strings >= MAX_ENTRIES ||
	    grow_array(&t->strings, &t->cap_strings, t->nr_strings + 1, sizeof(*t->strings)))
		return -1;
	copy = malloc(n + 1);
	if (!copy || hashtab_put(&t->str_index, h, (uint32_t)n, (uint32_t)t->nr_strings + 1)) {
		free(copy);
		return -1;
	}
	t->strings[t->nr_strings] = memcpy(copy, s, n + 1);
	return (int64_t)t->nr_strings++;
}

static int64_t hex_string_index(struct pprof_tables *t, const uint8_t *bytes, uint32_t n)
{
	char hex[2 * 64 + 1];

	if (!bytes || !n)
		return 0;
	if (n > 64)
		n = 64;
	for (uint32_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
	return pprof_string(t, hex);
}

struct pprof_tables *pprof_tables_new(const struct bpfprof_host *host,
				      const struct bpfprof_profile *prof, struct pprof_gz *gz)
{
	struct pprof_tables *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->host = host;
	t->prof = prof;
	t->gz = gz;
	t->kernel_map = -1;
	/* millions of entries: memory counts more than probe length here */
	t->str_index.dense = t->funcs.dense = t->func_ptrs.dense = 1;
	t->file_ptrs.dense = t->maps.dense = t->locs.dense = 1;
	t->scopes = pprof_scopes_new(prof);
	t->has_own = calloc(prof->nr_processes + 1, sizeof(*t->has_own));
	if (!t->scopes || !t->has_own || pprof_string(t, "") != 0) {
		pprof_tables_free(t);
		return NULL;
	}
	return t;
}

void pprof_tables_free(struct pprof_tables *t)
{
	if (!t)
		return;
	hashtab_free(&t->str_index);
	for (size_t i = 0; i < t->nr_strings; i++)
		free(t->strings[i]);
	free(t->strings);
	hashtab_free(&t->funcs);
	hashtab_free(&t->func_ptrs);
	hashtab_free(&t->file_ptrs);
	free(t->functions);
	pprof_scopes_free(t->scopes);
	free(t->has_own);
	hashtab_free(&t->maps);
	free(t->mappings);
	free(t->stats);
	hashtab_free(&t->locs);
	free(t->recs);
	free(t);
}

int64_t pprof_tables_set_process(struct pprof_tables *t, size_t p)
{
	t->proc = p < t->prof->nr_processes ? &t->prof->processes[p] : NULL;
	t->proc_index = p;
	return pprof_scopes_set_process(t->scopes, p);
}

int pprof_tables_has_own(const struct pprof_tables *t, size_t p)
{
	return t->has_own[p];
}

uint32_t pprof_user_scope(const struct pprof_tables *t, uint64_t ip)
{
	return pprof_scopes_user(t->scopes, ip);
}

/* --- mappings -------------------------------------------------------------- */

/* Append an empty mapping; its index or -1. */
static ptrdiff_t new_mapping(struct pprof_tables *t)
{
	size_t cap = t->cap_mappings;

	if (grow_array(&t->mappings, &t->cap_mappings, t->nr_mappings + 1, sizeof(*t->mappings)))
		return -1;
	t->cap_mappings = cap;
	if (grow_array(&t->stats, &t->cap_mappings, t->nr_mappings + 1, sizeof(*t->stats)))
		return -1;
	memset(&t->mappings[t->nr_mappings], 0, sizeof(*t->mappings));
	memset(&t->stats[t->nr_mappings], 0, sizeof(*t->stats));
	t->mappings[t->nr_mappings].id = t->nr_mappings + 1;
	return t->nr_mappings++;
}

static ptrdiff_t user_mapping(struct pprof_tables *t, const struct bpfprof_mapping *m)
{
	ptrdiff_t c = pprof_scopes_class(t->scopes, m);
	uint64_t key = c >= 0 ? (uint64_t)c : (uintptr_t)m;
	uint32_t known;
	const struct bpfprof_process *proc = t->proc;
	struct pprof_mapping *pm;
	ptrdiff_t i;

	if (c == -2)
		return -1;
	known = pprof_find(&t->maps, key, c >= 0);
	if (known)
		return (ptrdiff_t)known - 1;
	i = t->nr_mappings < MAX_ENTRIES ? new_mapping(t) : -1;
	if (i < 0)
		return -1;
	pm = &t->mappings[i];
	pm->memory_start = m->start;
	pm->memory_limit = m->end;
	pm->file_offset = m->pgoff;
	pm->filename = pprof_string(t, m->path);
	pm->build_id = hex_string_index(t, m->build_id, m->build_id_size);
	pm->main_binary = proc && proc->exe && m->path && !strcmp(proc->exe, m->path);
	if (pm->filename < 0 || pm->build_id < 0 ||
	    hashtab_put(&t->maps, key, c >= 0, (uint32_t)i + 1))
		return -1;
	return i;
}

static ptrdiff_t kernel_mapping(struct pprof_tables *t, uint64_t addr)
{
	struct pprof_mapping *pm;

	if (t->kernel_map < 0) {
		ptrdiff_t i = new_mapping(t);
		int64_t name;

		if (i < 0 || (name = pprof_string(t, "[kernel.kallsyms]")) < 0)
			return -1;
		pm = &t->mappings[i];
		pm->filename = name;
		pm->kernel = 1;
		pm->memory_start = addr;
		pm->memory_limit = addr + 1;
		t->kernel_map = i;
	}
	pm = &t->mappings[t->kernel_map];
	if (addr < pm->memory_start)
		pm->memory_start = addr;
	if (addr >= pm->memory_limit)
		pm->memory_limit = addr + 1;
	return t->kernel_map;
}

/* Id of the Function (name, file index) by contents, adding it if new;
 * 0 on ENOMEM. */
static uint32_t function_by_name(struct pprof_tables *t, const char *name, int64_t f)
{
	int64_t n = pprof_string(t, name);
	uint32_t id;

	if (n < 0)
		return 0;
	id = pprof_find(&t->funcs, (uint64_t)n, (uint32_t)f);
	if (id)
		return id;
	if (t->nr_functions >= MAX_ENTRIES ||
	    grow_array(&t->functions, &t->cap_functions, t->nr_pending_functions + 1,
		 sizeof(*t->functions)))
		return 0;
	id = (uint32_t)t->nr_functions + 1;
	if (hashtab_put(&t->funcs, (uint64_t)n, (uint32_t)f, id))
		return 0;
	t->nr_functions++;
	t->functions[t->nr_pending_functions++] = (struct pprof_function){
		.id = id, .name = n, .system_name = n, .filename = f,
	};
	return id;
}

/* String index of the file name at @file (NULL: ""); -1 on ENOMEM. */
static int64_t file_index(struct pprof_tables *t, const char *file)
{
	uint32_t v = pprof_find(&t->file_ptrs, (uintptr_t)file, 0);
	int64_t f;

	if (v)
		return v - 1;
	f = pprof_string(t, file);
	if (f < 0 || hashtab_put(&t->file_ptrs, (uintptr_t)file, 0, (uint32_t)f + 1))
		return -1;
	return f;
}

/* Id of the Function (name, file), adding it if new; 0 on ENOMEM. */
static uint32_t function_id(struct pprof_tables *t, const char *name, const char *file)
{
	int64_t f = file_index(t, file);
	uint32_t id;

	if (f < 0)
		return 0;
	id = pprof_find(&t->func_ptrs, (uintptr_t)name, (uint32_t)f);
	if (id)
		return id;
	id = function_by_name(t, name, f);
	if (id && hashtab_put(&t->func_ptrs, (uintptr_t)name, (uint32_t)f, id))
		return 0;
	return id;
}

/* Count a location of mapping @mi in its has_* statistics. */
static void count_location(struct pprof_tables *t, ptrdiff_t mi, const struct bpfprof_symbol *sym,
			   int has_function)
{
	struct map_stats *s = &t->stats[mi];

	s->locations++;
	s->functions += has_function;
	s->files += has_function && sym->file;
	s->lines += has_function && sym->line;
}

/* Ask the host about the frame @ip (the leaf of its stack or a return
 * address); its answer in @sym, its return value. */
static int symbolize(struct pprof_tables *t, uint64_t ip, int kernel, int leaf,
		     struct bpfprof_symbol *sym)
{
	uint32_t pid = t->proc ? t->proc->pid : 0;

	memset(sym, 0, sizeof(*sym));
	return t->host->symbolize(t->host, pid, leaf || !ip ? ip : ip - 1, kernel, sym);
}

/*
 * The start line of the function of @sym (the host's answer for frame @ip,
 * as symbolize() asked): the line of the function's first address if it
 * is in the same file, else 0.
 */
static int64_t start_line(struct pprof_tables *t, uint64_t ip, int kernel, int leaf,
			  const struct bpfprof_symbol *sym)
{
	uint64_t at = leaf || !ip ? ip : ip - 1;
	uint32_t pid = t->proc ? t->proc->pid : 0;
	struct bpfprof_symbol def;

	if (!sym->file || sym->module_offset < sym->function_start ||
	    sym->module_offset - sym->function_start > at)
		return 0;
	memset(&def, 0, sizeof(def));
	if (t->host->symbolize(t->host, pid, at - (sym->module_offset - sym->function_start),
			       kernel, &def) ||
	    !def.file || !def.line || strcmp(def.file, sym->file))
		return 0;
	return def.line;
}

/* Create the Location of @ip (see the file comment) from the host's
 * answer @rc, @sym; its id or 0 on ENOMEM.  A function created for it
 * gets its start line. */
static uint32_t new_location(struct pprof_tables *t, uint64_t ip, int kernel, int leaf, int rc,
			     const struct bpfprof_symbol *sym)
{
	struct pprof_function *fn;
	struct loc_rec rec = { .addr = ip, .id = (uint32_t)t->nr_locations + 1 };
	ptrdiff_t mi = -1;

	if (kernel)
		mi = kernel_mapping(t, ip);
	else if (sym->mapping)
		mi = user_mapping(t, sym->mapping);
	else
		mi = -2;		/* in no known mapping: no mapping id */
	if (mi == -1)
		return 0;
	if (rc == 0 && sym->function) {
		rec.function_id = function_id(t, sym->function, sym->file);
		if (!rec.function_id)
			return 0;
		rec.line = sym->line;
		fn = t->nr_pending_functions ? &t->functions[t->nr_pending_functions - 1] : NULL;
		if (fn && fn->id == rec.function_id && !fn->start_line && !fn->start_line_asked) {
			fn->start_line = start_line(t, ip, kernel, leaf, sym);
			fn->start_line_asked = 1;
		}
	}
	if (mi >= 0) {
		rec.mapping_id = (uint32_t)t->mappings[mi].id;
		count_location(t, mi, sym, rec.function_id != 0);
	}
	if (t->nr_locations >= MAX_ENTRIES ||
	    grow_array(&t->recs, &t->cap_recs, t->nr_recs + 1, sizeof(*t->recs)))
		return 0;
	t->recs[t->nr_recs++] = rec;
	t->nr_locations++;
	return rec.id;
}

static uint32_t location_key(uint32_t scope, int leaf)
{
	return scope << 1 | (leaf != 0);
}

/* The id of a known location of @ip, 0 if none; *own as for
 * pprof_stack_locations(). */
static uint32_t find_location(const struct pprof_tables *t, uint64_t ip, uint32_t scope, int leaf,
			      int *own)
{
	uint32_t id = 0;

	if ((scope & 1) && t->has_own[t->proc_index]) {
		/* one this process could not symbolize: it keeps it */
		id = pprof_find(&t->locs, ip,
				      location_key(pprof_scopes_process(t->scopes), leaf));
		*own |= id != 0;
	}
	return id ? id : pprof_find(&t->locs, ip, location_key(scope, leaf));
}

/* Add the location of @ip found new to the table, under its scope or, if
 * it is in a shared one but has no function, the process's. */
static uint32_t add_location(struct pprof_tables *t, uint64_t ip, uint32_t scope, int leaf,
			     int rc, const struct bpfprof_symbol *sym, int *own)
{
	uint32_t id = new_location(t, ip, scope == PPROF_KERNEL_SCOPE, leaf, rc, sym);

	if (id && (scope & 1) && t->recs[t->nr_recs - 1].function_id == 0) {
		scope = pprof_scopes_process(t->scopes);
		*own = 1;
		t->has_own[t->proc_index] = 1;
	}
	if (id && hashtab_put(&t->locs, ip, location_key(scope, leaf), id))
		return 0;
	return id;
}

/* The scope of frame @i: scopes[@i], or the kernel's without @scopes. */
static uint32_t scope_of(const uint32_t *scopes, uint32_t i)
{
	return scopes ? scopes[i] : PPROF_KERNEL_SCOPE;
}

/*
 * pprof_stack_locations() for frames @from .. @to - 1 (at most BATCH):
 * the lookups first, all their cache lines asked for at once, then the
 * host's answers for the new ones, whose function lookups are asked for
 * at once too, then the new locations.  (A frame repeated in the stack,
 * by recursion, is new twice here: the host is asked twice, harmless.)
 */
static int batch_locations(struct pprof_tables *t, const uint64_t *ips, const uint32_t *scopes,
			   uint32_t from, uint32_t to, uint32_t *ids, int *own)
{
	struct bpfprof_symbol sym[BATCH];
	int rc[BATCH];

	for (uint32_t i = from; i < to; i++)
		hashtab_prefetch(&t->locs, hashtab_hash(ips[i],
							 location_key(scope_of(scopes, i), i == 0)));
	for (uint32_t i = from; i < to; i++)
		ids[i] = find_location(t, ips[i], scope_of(scopes, i), i == 0, own);
	for (uint32_t i = from; i < to; i++) {
		struct bpfprof_symbol *y = &sym[i - from];
		int64_t f;

		if (ids[i])
			continue;
		rc[i - from] = symbolize(t, ips[i], !scopes, i == 0, y);
		if (rc[i - from] || !y->function || (f = file_index(t, y->file)) < 0)
			continue;
		hashtab_prefetch(&t->func_ptrs, hashtab_hash((uintptr_t)y->function, (uint32_t)f));
	}
	for (uint32_t i = from; i < to; i++) {
		/* a frame may repeat in a stack (recursion): look again */
		if (ids[i] || (ids[i] = find_location(t, ips[i], scope_of(scopes, i), i == 0, own)))
			continue;
		ids[i] = add_location(t, ips[i], scope_of(scopes, i), i == 0, rc[i - from],
				      &sym[i - from], own);
		if (!ids[i])
			return -ENOMEM;
	}
	return 0;
}

int pprof_stack_locations(struct pprof_tables *t, const uint64_t *ips, const uint32_t *scopes,
			  uint32_t n, uint32_t *ids, int *own)
{
	int err = 0;

	*own = 0;
	for (uint32_t i = 0; !err && i < n; i += BATCH)
		err = batch_locations(t, ips, scopes, i, n - i < BATCH ? n : i + BATCH, ids, own);
	return err;
}

/* --- writing ----------------------------------------------------------------- */

/* Stable LSD radix sort of @n entries of @a by address, 16 bits a pass,
 * through @tmp; passes where all share the digit are skipped. */
static int sort_by_address(struct loc_addr *a, struct loc_addr *tmp, size_t n)
{
	size_t *start = malloc((65536 + 1) * sizeof(*start));
	struct loc_addr *src = a, *dst = tmp, *swap;

	if (!start)
		return -ENOMEM;
	for (unsigned shift = 0; n && shift < 64; shift += 16) {
		memset(start, 0, (65536 + 1) * sizeof(*start));
		for (size_t i = 0; i < n; i++)
			start[(src[i].addr >> shift & 0xffff) + 1]++;
		if (start[(src[0].addr >> shift & 0xffff) + 1] == n)
			continue;
		for (size_t d = 1; d <= 65536; d++)
			start[d] += start[d - 1];
		for (size_t i = 0; i < n; i++)
			dst[start[src[i].addr >> shift & 0xffff]++] = src[i];
		swap = src;
		src = dst;
		dst = swap;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(start);
	return 0;
}

static int write_functions(struct pprof_tables *t)
{
	int err = 0;

	for (size_t i = 0; !err && i < t->nr_pending_functions; i++) {
		write_profile_function(pprof_gz_buf(t->gz), &t->functions[i]);
		err = pprof_gz_flush(t->gz);
	}
	t->nr_pending_functions = 0;
	return err;
}

/* Write the pending Locations in the order of @a. */
static int write_locations(struct pprof_tables *t, const struct loc_addr *a)
{
	int err = 0;

	for (size_t k = 0; !err && k < t->nr_recs; k++) {
		const struct loc_rec *r = &t->recs[a[k].index];

		/* in address order, the records are scattered: fetch ahead */
		if (k + 16 < t->nr_recs)
			__builtin_prefetch(&t->recs[a[k + 16].index]);
		write_profile_location(pprof_gz_buf(t->gz), &(struct pprof_location){
			.id = r->id, .mapping_id = r->mapping_id, .address = r->addr,
			.line = { .function_id = r->function_id, .line = r->line },
		});
		err = pprof_gz_flush(t->gz);
	}
	t->nr_recs = 0;
	return err;
}

int pprof_write_locations(struct pprof_tables *t, int all)
{
	size_t n = t->nr_recs;
	struct loc_addr *a, *tmp;
	int err;

	if (!all && n < LOC_BATCH)
		return 0;
	if (all)
		hashtab_free(&t->locs);	/* no more lookups: make room */
	a = malloc(n * sizeof(*a) + 1);
	tmp = malloc(n * sizeof(*tmp) + 1);
	if (!a || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (struct loc_addr){ .addr = t->recs[i].addr, .index = i };
	err = sort_by_address(a, tmp, n);
	free(tmp);
	tmp = NULL;
	if (!err)
		err = write_functions(t);
	if (!err)
		err = write_locations(t, a);
out:
	if (err == -ENOMEM)
		t->host->error(t->host, "pprof: out of memory");
	free(tmp);
	free(a);
	return err;
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

static void write_mappings(struct pprof_tables *t)
{
	for (size_t i = 0; i < t->nr_mappings; i++) {
		struct pprof_mapping *m = &t->mappings[i];
		struct map_stats *s = &t->stats[i];

		m->has_functions = s->locations && s->functions == s->locations;
		m->has_filenames = s->locations && s->files == s->locations;
		m->has_line_numbers = s->locations && s->lines == s->locations;
	}
	if (t->nr_mappings)
		qsort(t->mappings, t->nr_mappings, sizeof(*t->mappings), compare_mappings);
	for (size_t i = 0; i < t->nr_mappings; i++)
		write_profile_mapping(pprof_gz_buf(t->gz), &t->mappings[i]);
}

int pprof_write_tables(struct pprof_tables *t)
{
	int err;

	write_mappings(t);
	err = pprof_gz_flush(t->gz);
	for (size_t i = 0; !err && i < t->nr_strings; i++) {
		write_profile_string(pprof_gz_buf(t->gz), t->strings[i]);
		err = pprof_gz_flush(t->gz);
	}
	return err;
}
