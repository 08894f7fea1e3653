// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile/proc_maps.c - a process's mappings in the profile (profile.h):
 * merged from /proc and the kernel's records, the code mappings of the
 * images it executed away from kept apart and added back when sampling is
 * over, the lookup of an address, and its JIT code's names (perf map).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile.h"
#include "symbols/perfmap.h"
#include "targets/procmaps.h"

/* Free what a mapping of a list owns: its path and build-id copies. */
static void mapping_free_strings(struct bpfprof_mapping *m)
{
	free((char *)m->path);
	free((uint8_t *)m->build_id);
}

void mappings_free(struct bpfprof_mapping *maps, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		mapping_free_strings(&maps[i]);
	free(maps);
}

/* Give back the room of *@list beyond its @n mappings (none: freed). */
static void maps_shrink(struct bpfprof_mapping **list, size_t n)
{
	struct bpfprof_mapping *shrunk;

	if (!n) {
		free(*list);
		*list = NULL;
		return;
	}
	shrunk = realloc(*list, n * sizeof(**list));
	if (shrunk)
		*list = shrunk;
}

static int copy_mapping(struct bpfprof_mapping *dst, const struct bpfprof_mapping *src)
{
	*dst = *src;
	dst->path = strdup(src->path ? src->path : "");
	dst->build_id = NULL;
	if (src->build_id && src->build_id_size) {
		uint8_t *id = malloc(src->build_id_size);

		if (id)
			memcpy(id, src->build_id, src->build_id_size);
		dst->build_id = id;
	}
	if (!dst->path || (src->build_id_size && !dst->build_id)) {
		free((char *)dst->path);
		free((uint8_t *)dst->build_id);
		return -ENOMEM;
	}
	return 0;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct bpfprof_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool overlaps_any(const struct bpfprof_mapping *m, const struct bpfprof_mapping *maps,
			 size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (m->start < maps[i].end && maps[i].start < m->end)
			return true;
	return false;
}

/*
 * Merge @nr mappings (copied) into the list *@list of *@n: they replace the
 * ones they overlap, the others are kept.  The list stays sorted by start.
 * 0, or -ENOMEM with the list unchanged.
 */
static int maps_merge(struct bpfprof_mapping **list, size_t *n,
		      const struct bpfprof_mapping *maps, size_t nr)
{
	struct bpfprof_mapping *merged = calloc(*n + nr + 1, sizeof(*merged));
	size_t k = 0;

	if (!merged)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		if (copy_mapping(&merged[k], &maps[i])) {
			mappings_free(merged, k);
			return -ENOMEM;
		}
		k++;
	}
	/* Old mappings survive unless a new one covers part of them. */
	for (size_t i = 0; i < *n; i++) {
		if (overlaps_any(&(*list)[i], maps, nr))
			mapping_free_strings(&(*list)[i]);
		else
			merged[k++] = (*list)[i];
	}
	free(*list);
	qsort(merged, k, sizeof(*merged), cmp_mapping);
	*list = merged;
	*n = k;
	maps_shrink(list, k);	/* room was made for both lists' overlaps */
	return 0;
}

int proc_merge_maps(struct proc *proc, const struct bpfprof_mapping *maps, size_t nr)
{
	int err = maps_merge(&proc->maps, &proc->nr_maps, maps, nr);

	if (!err)
		proc->maps_read = true;
	return err;
}

void proc_clear_maps(struct proc *proc)
{
	mappings_free(proc->maps, proc->nr_maps);
	proc->maps = NULL;
	proc->nr_maps = 0;
	perfmap_reset(proc->perfmap);
}

/* A mapping of an ELF file's code, which names the addresses in it after
 * the image that mapped it is gone (not anonymous code, [vdso], ...). */
static bool file_code(const struct bpfprof_mapping *m)
{
	return (m->prot & BPFPROF_PROT_EXEC) && m->path && m->path[0] == '/';
}

/* Keep the executable mappings of *@list of *@n, in order; free the
 * others and give the array's room back. */
static void maps_keep_code(struct bpfprof_mapping **list, size_t *n)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		if ((*list)[i].prot & BPFPROF_PROT_EXEC)
			(*list)[k++] = (*list)[i];
		else
			mapping_free_strings(&(*list)[i]);
	}
	*n = k;
	maps_shrink(list, k);
}

void proc_keep_code_maps(struct proc *proc)
{
	maps_keep_code(&proc->maps, &proc->nr_maps);
	maps_keep_code(&proc->past_maps, &proc->nr_past_maps);
}

int proc_retire_maps(struct proc *proc)
{
	struct bpfprof_mapping *code = calloc(proc->nr_maps + 1, sizeof(*code));
	size_t nr = 0;
	int err = -ENOMEM;

	if (code) {
		for (size_t i = 0; i < proc->nr_maps; i++)
			if (file_code(&proc->maps[i]))
				code[nr++] = proc->maps[i];	/* maps_merge() copies */
		err = maps_merge(&proc->past_maps, &proc->nr_past_maps, code, nr);
		free(code);
	}
	proc_clear_maps(proc);
	return err;
}

int proc_restore_past_maps(struct proc *proc)
{
	struct bpfprof_mapping *past = proc->past_maps;
	size_t nr_past = proc->nr_past_maps;
	int err;

	if (!nr_past)
		return 0;
	/* The current image's mappings go over the past ones they overlap. */
	err = maps_merge(&past, &nr_past, proc->maps, proc->nr_maps);
	if (err)
		return err;
	mappings_free(proc->maps, proc->nr_maps);
	proc->maps = past;
	proc->nr_maps = nr_past;
	proc->past_maps = NULL;
	proc->nr_past_maps = 0;
	return 0;
}

static void restore_past_maps(void *ctx, struct proc *proc)
{
	int *err = ctx;

	*err = *err ?: proc_restore_past_maps(proc);
}

int profile_restore_past_maps(struct profile *p)
{
	int err = 0;

	profile_for_each_proc(p, restore_past_maps, &err);
	return err;
}

const struct perfmap_entry *proc_jit_symbol(struct proc *proc, uint64_t ip)
{
	struct timespec ts;

	if (!proc->perfmap && !(proc->perfmap = perfmap_new(proc->pid)))
		return NULL;
	if (proc->exited)
		perfmap_process_exited(proc->perfmap);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return perfmap_lookup(proc->perfmap, ip,
			      (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

const struct bpfprof_mapping *proc_find_map(const struct proc *proc, uint64_t addr)
{
	return procmaps_find(proc->maps, proc->nr_maps, addr);
}
