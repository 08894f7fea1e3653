// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_scopes.c - whose code an address is, for the pprof plugin (the
 * scopes of pprof.h), so that processes share Locations and Mappings
 * where their code is the same:
 *
 *  - Mappings of files (path, device, inode, build-id) with the same
 *    bounds and offset in several processes are one class: the same code
 *    at the same addresses (forked workers, non-PIE executables).  Any
 *    other mapping (anonymous or JIT code, [vdso], [heap]) is its
 *    process's alone.
 *  - A user address is in the scope of the class of its mapping if that
 *    is shared, else in the scope of its process (also an address in no
 *    mapping).
 *  - Processes with the same sequence of shared classes are one space:
 *    an address in a shared scope in one of them is in the same scope in
 *    all of them, so a stack resolved for one serves all (pprof_samples.c).
 *
 * This file owns the classes and what it learns of each process (its
 * mappings' classes, its space), learned when the process is first used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/plugin.h"
#include "pprof.h"

/* class_by_ptr's value for a mapping that is not shared. */
#define NOT_SHARED (UINT32_MAX - 1)	/* not HASHTAB_NONE */

/* Most classes and processes (so that scopes fit in 32 bits). */
#define MAX_ENTRIES (UINT32_MAX / 4)

/* What is known of a process, once it is used. */
struct proc_info {
	size_t classes;			/* its mappings' classes: offset into class_ids */
	uint32_t space;
	uint32_t known;
};

struct pprof_scopes {
	const struct bpfprof_profile *prof;

	/* classes of file mappings: reps[i] is the first mapping of class i */
	struct hashtab class_by_hash;	/* (contents hash, 0) -> i + 1 */
	struct hashtab class_by_ptr;	/* (mapping pointer, 0) -> i + 1 or NOT_SHARED */
	const struct bpfprof_mapping **reps;
	size_t nr_classes, cap_reps;

	struct proc_info *procs;	/* by process index (nr_processes: none) */
	int32_t *class_ids;		/* arena: a mapping's class, -1 if not shared */
	size_t nr_class_ids, cap_class_ids;
	struct hashtab spaces;	/* (hash of classes, 0) -> process index + 1 */
	uint32_t nr_spaces;

	/* the current process */
	const struct bpfprof_process *proc;	/* NULL: none */
	size_t proc_index;
	const int32_t *proc_classes;
};

struct pprof_scopes *pprof_scopes_new(const struct bpfprof_profile *prof)
{
	struct pprof_scopes *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->prof = prof;
	sc->procs = calloc(prof->nr_processes + 1, sizeof(*sc->procs));
	if (!sc->procs) {
		free(sc);
		return NULL;
	}
	return sc;
}

void pprof_scopes_free(struct pprof_scopes *sc)
{
	if (!sc)
		return;
	hashtab_free(&sc->class_by_hash);
	hashtab_free(&sc->class_by_ptr);
	free(sc->reps);
	free(sc->procs);
	free(sc->class_ids);
	hashtab_free(&sc->spaces);
	free(sc);
}

/* --- classes of file mappings --------------------------------------------- */

/* Only a mapping of a file can be the same in several processes. */
static int shareable(const struct bpfprof_mapping *m)
{
	return m->path && m->path[0] == '/' && m->inode;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_bytes(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return mix(h, n);
}

static uint64_t hash_mapping(const struct bpfprof_mapping *m)
{
	uint64_t h = mix(mix(mix(m->start, m->end), m->pgoff), m->inode);

	h = mix(h, (uint64_t)m->dev_major << 32 | m->dev_minor);
	h = hash_bytes(h, (const uint8_t *)m->path, strlen(m->path));
	return hash_bytes(h, m->build_id, m->build_id ? m->build_id_size : 0);
}

static int same_mapping(const struct bpfprof_mapping *x, const struct bpfprof_mapping *y)
{
	uint32_t nx = x->build_id ? x->build_id_size : 0, ny = y->build_id ? y->build_id_size : 0;

	return x->start == y->start && x->end == y->end && x->pgoff == y->pgoff &&
	       x->inode == y->inode && x->dev_major == y->dev_major &&
	       x->dev_minor == y->dev_minor && !strcmp(x->path, y->path) &&
	       nx == ny && (!nx || !memcmp(x->build_id, y->build_id, nx));
}

ptrdiff_t pprof_scopes_class(struct pprof_scopes *sc, const struct bpfprof_mapping *m)
{
	uint32_t v = pprof_find(&sc->class_by_ptr, (uintptr_t)m, 0);
	uint64_t h;

	if (v)
		return v == NOT_SHARED ? -1 : (ptrdiff_t)v - 1;
	v = NOT_SHARED;
	if (shareable(m)) {
		h = hash_mapping(m);
		v = pprof_find(&sc->class_by_hash, h, 0);
		if (v && !same_mapping(sc->reps[v - 1], m))
			v = NOT_SHARED;		/* a hash collision: keep it apart */
		if (!v) {
			if (sc->nr_classes >= MAX_ENTRIES ||
			    grow_array(&sc->reps, &sc->cap_reps, sc->nr_classes + 1, sizeof(*sc->reps)) ||
			    hashtab_put(&sc->class_by_hash, h, 0, (uint32_t)sc->nr_classes + 1))
				return -2;
			sc->reps[sc->nr_classes] = m;
			v = (uint32_t)++sc->nr_classes;
		}
	}
	if (hashtab_put(&sc->class_by_ptr, (uintptr_t)m, 0, v))
		return -2;
	return v == NOT_SHARED ? -1 : (ptrdiff_t)v - 1;
}

/* --- processes and their spaces ------------------------------------------- */

/* The shared classes among the @nx and @ny classes at class_ids[@x] and
 * [@y]: the same sequence? */
static int same_classes(const struct pprof_scopes *sc, size_t x, size_t nx, size_t y, size_t ny)
{
	const int32_t *a = &sc->class_ids[x], *b = &sc->class_ids[y];
	size_t i = 0, j = 0;

	for (;;) {
		while (i < nx && a[i] < 0)
			i++;
		while (j < ny && b[j] < 0)
			j++;
		if (i == nx || j == ny)
			return i == nx && j == ny;
		if (a[i++] != b[j++])
			return 0;
	}
}

/* The space of process @p, whose classes are known: that of the first
 * process with the same sequence of shared classes, or its own. */
static int space_of(struct pprof_scopes *sc, size_t p, size_t nr_maps)
{
	struct proc_info *pi = &sc->procs[p];
	uint64_t h = 0x9e3779b97f4a7c15ull;
	uint32_t other;

	for (size_t i = 0; i < nr_maps; i++)
		if (sc->class_ids[pi->classes + i] >= 0)
			h = mix(h, (uint64_t)sc->class_ids[pi->classes + i]);
	other = nr_maps ? pprof_find(&sc->spaces, h, 0) : 0;
	if (other) {
		const struct proc_info *o = &sc->procs[other - 1];

		if (same_classes(sc, o->classes, sc->prof->processes[other - 1].nr_mappings,
				 pi->classes, nr_maps)) {
			pi->space = o->space;
			return 0;
		}
	}
	pi->space = sc->nr_spaces++;
	if (nr_maps && !other)
		return hashtab_put(&sc->spaces, h, 0, (uint32_t)p + 1);
	return 0;
}

/* Learn the classes of the mappings of process @p and its space. */
static int learn_process(struct pprof_scopes *sc, size_t p)
{
	const struct bpfprof_process *proc = p < sc->prof->nr_processes ?
					     &sc->prof->processes[p] : NULL;
	size_t n = proc ? proc->nr_mappings : 0;
	struct proc_info *pi = &sc->procs[p];

	if (p >= MAX_ENTRIES ||
	    grow_array(&sc->class_ids, &sc->cap_class_ids, sc->nr_class_ids + n + 1,
		 sizeof(*sc->class_ids)))
		return -ENOMEM;
	pi->classes = sc->nr_class_ids;
	for (size_t i = 0; i < n; i++) {
		ptrdiff_t c = pprof_scopes_class(sc, &proc->mappings[i]);

		if (c == -2)
			return -ENOMEM;
		sc->class_ids[pi->classes + i] = (int32_t)c;
	}
	sc->nr_class_ids += n;
	if (space_of(sc, p, n))
		return -ENOMEM;
	pi->known = 1;
	return 0;
}

int64_t pprof_scopes_set_process(struct pprof_scopes *sc, size_t p)
{
	struct proc_info *pi = &sc->procs[p];

	if (!pi->known && learn_process(sc, p))
		return -ENOMEM;
	sc->proc = p < sc->prof->nr_processes ? &sc->prof->processes[p] : NULL;
	sc->proc_index = p;
	sc->proc_classes = &sc->class_ids[pi->classes];
	return pi->space;
}

/* --- scopes ------------------------------------------------------------------ */

/* Index of the mapping of the current process that holds @ip, or -1. */
static ptrdiff_t find_mapping(const struct bpfprof_process *proc, uint64_t ip)
{
	size_t lo = 0, hi = proc ? proc->nr_mappings : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct bpfprof_mapping *m = &proc->mappings[mid];

		if (ip < m->start)
			hi = mid;
		else if (ip >= m->end)
			lo = mid + 1;
		else
			return (ptrdiff_t)mid;
	}
	return -1;
}

uint32_t pprof_scopes_process(const struct pprof_scopes *sc)
{
	return 2 + 2 * (uint32_t)sc->proc_index;
}

uint32_t pprof_scopes_user(const struct pprof_scopes *sc, uint64_t ip)
{
	ptrdiff_t j = find_mapping(sc->proc, ip);
	int32_t c = j >= 0 ? sc->proc_classes[j] : -1;

	return c >= 0 ? 1 + 2 * (uint32_t)c : pprof_scopes_process(sc);
}
