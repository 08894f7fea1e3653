// SPDX-License-Identifier: BSD-2-Clause
/*
 * merge/merge_load.c - one measurement's tables into the merged profile
 * (see merge.h): its host, its processes with their mappings, threads,
 * stacks and counts.
 *
 * Ids.  Each file is its own id space (a node, or one run on it).  A pid
 * or tid keeps its number unless another file took that number first;
 * then it gets a new one above PID_MAX_LIMIT, and the profile keeps the
 * real one as the process's host_pid / the thread's host_tid.  A
 * process's main thread keeps tid == pid (one map for both).  When any id
 * of a process collides, the process and all its threads get new ids, in
 * their order: threads keep their order within the process, and with it
 * the logical thread index hpcrun would give them.
 *
 * Stacks are interned by content: the 64-bit hash of (kind, frames) is
 * the profile's stack id, and a hash that names another content is
 * stepped until it names this one or none, so identical calling contexts
 * of any number of files are stored once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "merge/merge.h"

/* Ids handed out on collision: above any pid Linux gives (PID_MAX_LIMIT). */
#define MERGE_FIRST_NEW_ID (1u << 22)

struct merge_id {
	uint32_t key;			/* a file's id (per file), or a merged id (m->used) */
	uint32_t value;			/* the merged id, or the file's index */
	UT_hash_handle hh;
};

static int add_id(struct merge_id **table, uint32_t key, uint32_t value)
{
	struct merge_id *e = malloc(sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->key = key;
	e->value = value;
	HASH_ADD(hh, *table, key, sizeof(key), e);
	return 0;
}

static struct merge_id *find_id(struct merge_id *table, uint32_t key)
{
	struct merge_id *e;

	HASH_FIND(hh, table, &key, sizeof(key), e);
	return e;
}

/* The merged id of @f's @id, made when new: a new number when @renumber
 * or when another file has @id. */
static int map_id(struct merge *m, struct merge_file *f, uint32_t id, bool renumber,
		  uint32_t *out)
{
	struct merge_id *e = find_id(f->ids, id);
	uint32_t merged = id;
	int err;

	if (id == 0 || e) {
		*out = e ? e->value : 0;
		return 0;
	}
	if (renumber || find_id(m->used, merged)) {
		if (m->next_id < MERGE_FIRST_NEW_ID)
			m->next_id = MERGE_FIRST_NEW_ID;
		while (find_id(m->used, m->next_id))
			m->next_id++;
		merged = m->next_id++;
	}
	if ((err = add_id(&m->used, merged, f->index)) || (err = add_id(&f->ids, id, merged)))
		return err;
	*out = merged;
	return 0;
}

int merge_map_id(struct merge *m, struct merge_file *f, uint32_t id, uint32_t *out)
{
	return map_id(m, f, id, false, out);
}

/* Whether @f's @id would collide: another file has it. */
static bool collides(const struct merge *m, const struct merge_file *f, uint32_t id)
{
	return !find_id(f->ids, id) && find_id(m->used, id);
}

struct merge_file *merge_file_of(const struct merge *m, uint32_t pid)
{
	struct merge_id *e = find_id(m->used, pid);

	return e && e->value < m->nr_files ? &m->files[e->value] : NULL;
}

static void free_ids(struct merge_id **table)
{
	struct merge_id *e, *tmp;

	HASH_ITER(hh, *table, e, tmp) {
		HASH_DEL(*table, e);
		free(e);
	}
}

void merge_ids_free(struct merge *m)
{
	free_ids(&m->used);
	for (size_t i = 0; i < m->nr_files; i++)
		free_ids(&m->files[i].ids);
}

static int load_process(struct merge *m, struct merge_file *f, const struct raw_process *rp,
			bool renumber)
{
	struct proc *proc;
	uint32_t pid, ppid;
	int err;

	if ((err = map_id(m, f, rp->pid, renumber, &pid)) ||
	    (err = merge_map_id(m, f, rp->ppid, &ppid)))
		return err;
	if (!(proc = profile_proc(m->profile, pid)))
		return -ENOMEM;
	proc->ppid = ppid;
	proc->host = f->host;
	proc->host_pid = rp->pid;
	proc->rank = rp->rank;
	proc->exited = rp->exited;
	if ((err = proc_set_str(&proc->comm, rp->comm)) || (err = proc_set_str(&proc->exe, rp->exe)) ||
	    (err = proc_set_str(&proc->cmdline, rp->cmdline)))
		return err;
	return proc_merge_maps(proc, rp->maps, rp->nr_maps);
}

static uint64_t stack_hash(const struct bpfprof_stack *s)
{
	uint64_t h = 0xcbf29ce484222325ull ^ s->kernel;

	for (uint32_t i = 0; i < s->nr; i++) {
		h ^= s->ips[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/* The profile's index of a stack with @s's content, interned if new. */
static int intern_stack(struct profile *p, const struct bpfprof_stack *s, uint32_t *index)
{
	uint64_t id = stack_hash(s);

	for (;;) {
		const struct bpfprof_stack *have;

		if (profile_find_stack(p, id, index))
			return profile_intern_stack(p, id, s->ips, s->nr, s->kernel, index);
		have = profile_stack(p, *index);
		if (have->nr == s->nr && have->kernel == s->kernel &&
		    !memcmp(have->ips, s->ips, s->nr * sizeof(*s->ips)))
			return 0;
		id = id * 0x9e3779b97f4a7c15ull + 1;	/* another content: step */
		id = id ? id : 1;
	}
}

static int load_stacks(struct merge *m, struct merge_file *f)
{
	const struct raw_file *rf = &f->rf;
	int err;

	f->stacks = calloc(rf->nr_stacks, sizeof(*f->stacks));
	if (!f->stacks)
		return -ENOMEM;
	for (size_t i = 1; i < rf->nr_stacks; i++)
		if ((err = intern_stack(m->profile, &rf->stacks[i], &f->stacks[i])))
			return err;
	return 0;
}

static int load_threads_and_counts(struct merge *m, struct merge_file *f)
{
	const struct raw_file *rf = &f->rf;
	uint32_t *tids = calloc(rf->nr_threads + 1, sizeof(*tids));
	uint32_t *pids = calloc(rf->nr_threads + 1, sizeof(*pids));
	int err = tids && pids ? 0 : -ENOMEM;

	for (size_t i = 0; i < rf->nr_threads && !err; i++) {
		const struct raw_thread *t = &rf->threads[i];

		/* its process was mapped first: a renumbered one renumbers all */
		err = map_id(m, f, t->tid, find_id(f->ids, t->pid)->value != t->pid, &tids[i]);
		err = err ?: merge_map_id(m, f, t->pid, &pids[i]);
		err = err ?: profile_thread(m->profile, pids[i], tids[i], t->comm);
		err = err ?: profile_set_host_tid(m->profile, tids[i], t->tid);
	}
	for (size_t i = 0; i < rf->nr_counts && !err; i++) {
		const struct bpfprof_count *c = &rf->counts[i];

		err = profile_add_samples(m->profile, pids[c->thread], tids[c->thread],
					  f->stacks[c->user_stack], f->stacks[c->kernel_stack],
					  c->samples);
	}
	free(tids);
	free(pids);
	return err;
}

int merge_load_file(struct merge *m, struct merge_file *f)
{
	const struct raw_file *rf = &f->rf;
	int err;

	bool *renumber = calloc(rf->nr_processes + 1, sizeof(*renumber));

	if (!renumber)
		return -ENOMEM;
	/* a process renumbers all its ids when any of them collides */
	for (size_t i = 0; i < rf->nr_threads; i++)
		renumber[rf->threads[i].process] |= collides(m, f, rf->threads[i].tid);
	err = profile_add_host(m->profile, rf->run.hostname, rf->host_id, &f->host);
	for (size_t i = 0; i < rf->nr_processes && !err; i++)
		err = load_process(m, f, &rf->processes[i],
				   renumber[i] || collides(m, f, rf->processes[i].pid));
	free(renumber);
	err = err ?: load_stacks(m, f);
	err = err ?: load_threads_and_counts(m, f);
	if (!err)
		raw_file_drop_tables(&f->rf);	/* the profile has them */
	return err;
}
