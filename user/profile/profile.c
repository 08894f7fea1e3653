// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile.c - owns the collector's profile model (see profile.h): hash
 * tables of processes, threads, stacks and counts (uthash), and the
 * sorted arrays of the plugin view.  A process's mappings are
 * proc_maps.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>

#include "profile.h"
#include "symbols/perfmap.h"

struct proc_entry {
	struct proc proc;		/* first: a struct proc * is a struct proc_entry * */
	UT_hash_handle hh;
};

struct thread_entry {
	uint32_t tid;
	uint32_t pid;
	uint32_t host_tid;		/* 0: the same as tid */
	char *comm;
	uint64_t samples;
	UT_hash_handle hh;
};

struct stack_entry {
	uint64_t id;
	uint32_t index;
	UT_hash_handle hh;
};

struct count_id {
	uint32_t tid;
	uint32_t user_stack;
	uint32_t kernel_stack;
};

struct count_entry {
	struct count_id key;
	uint32_t pid;
	uint64_t samples;
	struct thread_entry *thread;	/* totals updated with the count; */
	struct proc *proc;		/* entries live until profile_free() */
	UT_hash_handle hh;
};

/*
 * Direct-mapped cache in front of the stack-id table: a stream of samples
 * looks up the same few ids over and over.  Ids are hashes of the frames,
 * so their low bits spread evenly.  index 0 with id 0 is an empty slot.
 */
#define STACK_CACHE_SLOTS 1024u

struct stack_cache_slot {
	uint64_t id;
	uint32_t index;
};

/*
 * The same in front of the count table, by (pid, tid, stacks): a uthash
 * lookup walks a bucket chain, one cache miss per entry, and was the
 * largest part of a streamed sample's cost.  ce NULL: an empty slot.
 */
#define COUNT_CACHE_SLOTS 1024u

struct count_cache_slot {
	uint32_t pid;
	struct count_id key;
	struct count_entry *ce;
};

/* A host of a merged profile. */
struct host_entry {
	char *name;
	uint32_t host_id;		/* gethostid() there */
};

struct profile {
	struct host_entry *hosts;	/* none in a live profile */
	size_t nr_hosts;
	struct proc_entry *procs;
	struct thread_entry *threads;
	struct stack_entry *stack_ids;
	struct count_entry *counts;
	struct bpfprof_stack *stacks;	/* stacks[0]: the empty stack */
	size_t nr_stacks, cap_stacks;
	struct stack_cache_slot stack_cache[STACK_CACHE_SLOTS];
	struct count_cache_slot count_cache[COUNT_CACHE_SLOTS];
	/* the last view's arrays */
	struct bpfprof_process *v_procs;
	struct bpfprof_thread *v_threads;
	struct bpfprof_count *v_counts;
	struct bpfprof_thread_identity *v_ids;
};

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->cap_stacks = 1024;
	p->stacks = calloc(p->cap_stacks, sizeof(*p->stacks));
	if (!p->stacks) {
		free(p);
		return NULL;
	}
	p->nr_stacks = 1;
	return p;
}

static void free_view(struct profile *p)
{
	free(p->v_procs);
	free(p->v_threads);
	free(p->v_counts);
	free(p->v_ids);
	p->v_ids = NULL;
	p->v_procs = NULL;
	p->v_threads = NULL;
	p->v_counts = NULL;
}

void profile_free(struct profile *p)
{
	struct proc_entry *pe, *ptmp;
	struct thread_entry *te, *ttmp;
	struct stack_entry *se, *stmp;
	struct count_entry *ce, *ctmp;

	if (!p)
		return;
	HASH_ITER(hh, p->procs, pe, ptmp) {
		HASH_DEL(p->procs, pe);
		free(pe->proc.comm);
		free(pe->proc.exe);
		free(pe->proc.cmdline);
		mappings_free(pe->proc.maps, pe->proc.nr_maps);
		mappings_free(pe->proc.past_maps, pe->proc.nr_past_maps);
		perfmap_free(pe->proc.perfmap);
		free(pe);
	}
	HASH_ITER(hh, p->threads, te, ttmp) {
		HASH_DEL(p->threads, te);
		free(te->comm);
		free(te);
	}
	HASH_ITER(hh, p->stack_ids, se, stmp) {
		HASH_DEL(p->stack_ids, se);
		free(se);
	}
	HASH_ITER(hh, p->counts, ce, ctmp) {
		HASH_DEL(p->counts, ce);
		free(ce);
	}
	for (size_t i = 1; i < p->nr_stacks; i++)
		free((uint64_t *)p->stacks[i].ips);
	for (size_t i = 0; i < p->nr_hosts; i++)
		free(p->hosts[i].name);
	free(p->hosts);
	free(p->stacks);
	free_view(p);
	free(p);
}

struct proc *profile_find_proc(const struct profile *p, uint32_t pid)
{
	struct proc_entry *pe;

	HASH_FIND(hh, p->procs, &pid, sizeof(pid), pe);
	return pe ? &pe->proc : NULL;
}

struct proc *profile_proc(struct profile *p, uint32_t pid)
{
	struct proc_entry *pe;
	struct proc *found = profile_find_proc(p, pid);

	if (found)
		return found;
	pe = calloc(1, sizeof(*pe));
	if (!pe)
		return NULL;
	pe->proc.pid = pid;
	pe->proc.rank = -1;
	HASH_ADD(hh, p->procs, proc.pid, sizeof(pid), pe);
	return &pe->proc;
}

int proc_set_str(char **field, const char *value)
{
	char *copy = strdup(value ? value : "");

	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

int profile_thread(struct profile *p, uint32_t pid, uint32_t tid, const char *comm)
{
	struct thread_entry *te;

	if (!profile_proc(p, pid))
		return -ENOMEM;
	HASH_FIND(hh, p->threads, &tid, sizeof(tid), te);
	if (!te) {
		te = calloc(1, sizeof(*te));
		if (!te)
			return -ENOMEM;
		te->tid = tid;
		HASH_ADD(hh, p->threads, tid, sizeof(tid), te);
	}
	te->pid = pid;
	if (comm && *comm)
		return proc_set_str(&te->comm, comm);
	return 0;
}

int profile_set_host_tid(struct profile *p, uint32_t tid, uint32_t host_tid)
{
	struct thread_entry *te;

	HASH_FIND(hh, p->threads, &tid, sizeof(tid), te);
	if (!te)
		return -ENOENT;
	te->host_tid = host_tid;
	return 0;
}

/* Whether another host than @self already has physical id @id. */
static bool host_id_taken(const struct profile *p, uint32_t id, size_t self)
{
	for (size_t i = 0; i < p->nr_hosts; i++)
		if (i != self && p->hosts[i].host_id == id)
			return true;
	return false;
}

/* A physical node id for @name that no other host has: its own gethostid()
 * value @id if that is non-zero and free, else FNV-1a of the name (nodes
 * whose host names do not resolve all get 0 from gethostid(), and cloned
 * images share /etc/hostid), stepped past ids that are taken. */
static uint32_t unique_host_id(const struct profile *p, const char *name, uint32_t id)
{
	if (id && !host_id_taken(p, id, p->nr_hosts))
		return id;
	id = 2166136261u;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		id = (id ^ *c) * 16777619u;
	while (!id || host_id_taken(p, id, p->nr_hosts))
		id++;
	return id;
}

int profile_add_host(struct profile *p, const char *name, uint32_t host_id, uint32_t *index)
{
	struct host_entry *grown;

	for (size_t i = 0; i < p->nr_hosts; i++)
		if (!strcmp(p->hosts[i].name, name)) {
			*index = (uint32_t)i;
			return 0;
		}
	grown = realloc(p->hosts, (p->nr_hosts + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	p->hosts = grown;
	if (!(grown[p->nr_hosts].name = strdup(name)))
		return -ENOMEM;
	grown[p->nr_hosts].host_id = unique_host_id(p, name, host_id);
	*index = (uint32_t)p->nr_hosts++;
	return 0;
}

const char *profile_thread_comm(const struct profile *p, uint32_t tid)
{
	struct thread_entry *te;

	HASH_FIND(hh, p->threads, &tid, sizeof(tid), te);
	return te ? te->comm : NULL;
}

int profile_find_stack(struct profile *p, uint64_t id, uint32_t *index)
{
	struct stack_cache_slot *slot = &p->stack_cache[id % STACK_CACHE_SLOTS];
	struct stack_entry *se;

	if (id == 0) {
		*index = 0;
		return 0;
	}
	if (slot->id == id) {
		*index = slot->index;
		return 0;
	}
	HASH_FIND(hh, p->stack_ids, &id, sizeof(id), se);
	if (!se)
		return -ENOENT;
	*slot = (struct stack_cache_slot){ .id = id, .index = se->index };
	*index = se->index;
	return 0;
}

int profile_intern_stack(struct profile *p, uint64_t id, const uint64_t *ips, uint32_t nr,
			 int kernel, uint32_t *index)
{
	struct stack_entry *se;
	uint64_t *copy;

	if (nr == 0 || id == 0) {
		*index = 0;
		return 0;
	}
	if (profile_find_stack(p, id, index) == 0)
		return 0;
	if (p->nr_stacks == p->cap_stacks) {
		struct bpfprof_stack *grown = realloc(p->stacks, 2 * p->cap_stacks * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		p->stacks = grown;
		p->cap_stacks *= 2;
	}
	se = malloc(sizeof(*se));
	copy = malloc(nr * sizeof(*copy));
	if (!se || !copy) {
		free(se);
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, ips, nr * sizeof(*copy));
	se->id = id;
	se->index = (uint32_t)p->nr_stacks;
	p->stacks[p->nr_stacks++] = (struct bpfprof_stack){ .ips = copy, .nr = nr, .kernel = !!kernel };
	HASH_ADD(hh, p->stack_ids, id, sizeof(id), se);
	*index = se->index;
	return 0;
}

const struct bpfprof_stack *profile_stack(const struct profile *p, uint32_t index)
{
	return index < p->nr_stacks ? &p->stacks[index] : NULL;
}

size_t profile_nr_stacks(const struct profile *p)
{
	return p->nr_stacks;
}

/* The count entry of (pid, tid, stacks), made (or moved to @pid) if needed. */
static int count_entry(struct profile *p, uint32_t pid, const struct count_id *key,
		       struct count_entry **out)
{
	struct count_entry *ce;
	int err;

	HASH_FIND(hh, p->counts, key, sizeof(*key), ce);
	if (ce && ce->pid == pid) {
		*out = ce;
		return 0;
	}
	if ((err = profile_thread(p, pid, key->tid, NULL)))
		return err;
	if (!ce) {
		ce = calloc(1, sizeof(*ce));
		if (!ce)
			return -ENOMEM;
		ce->key = *key;
		HASH_ADD(hh, p->counts, key, sizeof(*key), ce);
	}
	ce->pid = pid;
	HASH_FIND(hh, p->threads, &key->tid, sizeof(key->tid), ce->thread);
	ce->proc = profile_find_proc(p, pid);
	*out = ce;
	return 0;
}

static struct count_cache_slot *count_slot(struct profile *p, uint32_t pid,
					   const struct count_id *key)
{
	uint64_t h = ((uint64_t)pid << 32 | key->tid) * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)key->user_stack << 32 | key->kernel_stack) * 0xc2b2ae3d27d4eb4full;
	return &p->count_cache[(h >> 32) % COUNT_CACHE_SLOTS];
}

int profile_add_samples(struct profile *p, uint32_t pid, uint32_t tid, uint32_t user_stack,
			uint32_t kernel_stack, uint64_t samples)
{
	struct count_id key = { .tid = tid, .user_stack = user_stack, .kernel_stack = kernel_stack };
	struct count_cache_slot *slot = count_slot(p, pid, &key);
	struct count_entry *ce = slot->ce;
	int err;

	if (!ce || slot->pid != pid || memcmp(&slot->key, &key, sizeof(key)) || ce->pid != pid) {
		if ((err = count_entry(p, pid, &key, &ce)))
			return err;
		*slot = (struct count_cache_slot){ .pid = pid, .key = key, .ce = ce };
	}
	ce->samples += samples;
	ce->thread->samples += samples;
	ce->proc->samples += samples;
	return 0;
}

void profile_for_each_proc(struct profile *p, void (*fn)(void *ctx, struct proc *proc), void *ctx)
{
	struct proc_entry *pe, *tmp;

	HASH_ITER(hh, p->procs, pe, tmp)
		fn(ctx, &pe->proc);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct bpfprof_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_process(const void *a, const void *b)
{
	const struct bpfprof_process *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_count(const void *a, const void *b)
{
	const struct bpfprof_count *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->user_stack != y->user_stack)
		return x->user_stack < y->user_stack ? -1 : 1;
	return x->kernel_stack < y->kernel_stack ? -1 : x->kernel_stack > y->kernel_stack;
}

/* Index of thread @tid in the sorted view threads, or -1. */
static long find_view_thread(const struct bpfprof_thread *threads, size_t nr, uint32_t pid,
			     uint32_t tid)
{
	struct bpfprof_thread key = { .pid = pid, .tid = tid };
	const struct bpfprof_thread *t = bsearch(&key, threads, nr, sizeof(*threads), cmp_thread);

	return t ? t - threads : -1;
}

static int build_view_procs(struct profile *p, size_t *nr)
{
	struct proc_entry *pe, *tmp;
	size_t n = 0;

	p->v_procs = calloc(HASH_COUNT(p->procs) + 1, sizeof(*p->v_procs));
	if (!p->v_procs)
		return -ENOMEM;
	HASH_ITER(hh, p->procs, pe, tmp) {
		struct proc *pr = &pe->proc;

		if (!pr->samples)
			continue;
		p->v_procs[n++] = (struct bpfprof_process){
			.pid = pr->pid, .ppid = pr->ppid,
			.comm = pr->comm ? pr->comm : "",
			.exe = pr->exe ? pr->exe : "",
			.cmdline = pr->cmdline ? pr->cmdline : "",
			.mappings = pr->maps, .nr_mappings = pr->nr_maps,
			.samples = pr->samples, .exited = pr->exited,
		};
	}
	qsort(p->v_procs, n, sizeof(*p->v_procs), cmp_process);
	*nr = n;
	return 0;
}

static int build_view_threads(struct profile *p, size_t nr_procs, size_t *nr)
{
	struct thread_entry *te, *tmp;
	size_t n = 0;

	p->v_threads = calloc(HASH_COUNT(p->threads) + 1, sizeof(*p->v_threads));
	if (!p->v_threads)
		return -ENOMEM;
	HASH_ITER(hh, p->threads, te, tmp) {
		struct bpfprof_process key = { .pid = te->pid };
		struct bpfprof_process *pr;

		if (!te->samples)
			continue;
		pr = bsearch(&key, p->v_procs, nr_procs, sizeof(*pr), cmp_process);
		if (!pr)
			continue;
		p->v_threads[n++] = (struct bpfprof_thread){
			.tid = te->tid, .pid = te->pid, .process = (uint32_t)(pr - p->v_procs),
			.comm = te->comm ? te->comm : (pr->comm ? pr->comm : ""),
			.samples = te->samples,
		};
	}
	qsort(p->v_threads, n, sizeof(*p->v_threads), cmp_thread);
	for (size_t i = n; i-- > 0;) {
		struct bpfprof_process *pr = &p->v_procs[p->v_threads[i].process];

		pr->first_thread = (uint32_t)i;
		pr->nr_threads++;
	}
	*nr = n;
	return 0;
}

static int build_view_counts(struct profile *p, size_t nr_threads, size_t *nr)
{
	struct count_entry *ce, *tmp;
	size_t n = 0;

	p->v_counts = calloc(HASH_COUNT(p->counts) + 1, sizeof(*p->v_counts));
	if (!p->v_counts)
		return -ENOMEM;
	HASH_ITER(hh, p->counts, ce, tmp) {
		long t = find_view_thread(p->v_threads, nr_threads, ce->pid, ce->key.tid);

		if (t < 0 || !ce->samples)
			continue;
		p->v_counts[n++] = (struct bpfprof_count){
			.thread = (uint32_t)t, .user_stack = ce->key.user_stack,
			.kernel_stack = ce->key.kernel_stack, .samples = ce->samples,
		};
	}
	qsort(p->v_counts, n, sizeof(*p->v_counts), cmp_count);
	*nr = n;
	return 0;
}

struct host_order {
	const char *name;
	uint32_t host;
};

static int cmp_host_order(const void *a, const void *b)
{
	return strcmp(((const struct host_order *)a)->name, ((const struct host_order *)b)->name);
}

/* Node numbers of a merged profile's hosts: the hosts the view's processes
 * ran on, in host name order (at least 1 in *@nr_nodes).  NULL: no memory. */
static uint32_t *host_nodes(const struct profile *p, size_t nr_procs, size_t *nr_nodes)
{
	uint32_t *node = calloc(p->nr_hosts + 1, sizeof(*node));
	struct host_order *order = calloc(p->nr_hosts + 1, sizeof(*order));
	size_t n = 0;

	if (!node || !order) {
		free(node);
		free(order);
		return NULL;
	}
	for (size_t i = 0; i < nr_procs; i++) {
		const struct proc *pr = profile_find_proc(p, p->v_procs[i].pid);

		if (pr && pr->host < p->nr_hosts && !node[pr->host]) {
			node[pr->host] = 1;	/* used */
			order[n++] = (struct host_order){ p->hosts[pr->host].name, pr->host };
		}
	}
	qsort(order, n, sizeof(*order), cmp_host_order);
	for (size_t i = 0; i < n; i++)
		node[order[i].host] = (uint32_t)i;
	*nr_nodes = n ? n : 1;
	free(order);
	return node;
}

/* One identity per view thread: its host and node (the run's host, node
 * 0, in a live profile), the process's rank, the thread's index within its
 * process (main thread first, then by tid) and its ids on its host. */
static int build_view_ids(struct profile *p, const struct bpfprof_run *run, size_t nr_procs,
			  size_t nr_threads, size_t *nr_nodes)
{
	const char *host = run && run->hostname ? run->hostname : "";
	uint32_t host_id = (uint32_t)gethostid();
	uint32_t *node = p->nr_hosts ? host_nodes(p, nr_procs, nr_nodes) : NULL;

	p->v_ids = calloc(nr_threads + 1, sizeof(*p->v_ids));
	if (!p->v_ids || (p->nr_hosts && !node)) {
		free(node);
		return -ENOMEM;
	}
	if (!p->nr_hosts)
		*nr_nodes = 1;
	for (size_t i = 0, next = 1; i < nr_threads; i++) {
		const struct bpfprof_thread *t = &p->v_threads[i];
		const struct proc *proc = profile_find_proc(p, t->pid);
		const struct thread_entry *te;
		uint32_t h = proc && proc->host < p->nr_hosts ? proc->host : 0;

		HASH_FIND(hh, p->threads, &t->tid, sizeof(t->tid), te);
		if (i == p->v_procs[t->process].first_thread)
			next = 1;
		p->v_ids[i] = (struct bpfprof_thread_identity){
			.host = node ? p->hosts[h].name : host,
			.node = node ? node[h] : 0,
			.host_id = node ? p->hosts[h].host_id : host_id,
			.rank = proc ? proc->rank : -1,
			.thread = t->tid == t->pid ? 0 : (uint32_t)next++,
			.host_pid = proc && proc->host_pid ? proc->host_pid : t->pid,
			.host_tid = te && te->host_tid ? te->host_tid : t->tid,
		};
	}
	free(node);
	return 0;
}

int profile_view(struct profile *p, const struct bpfprof_run *run, struct bpfprof_profile *view)
{
	int err;

	free_view(p);
	memset(view, 0, sizeof(*view));
	view->run = run;
	err = build_view_procs(p, &view->nr_processes);
	err = err ?: build_view_threads(p, view->nr_processes, &view->nr_threads);
	err = err ?: build_view_counts(p, view->nr_threads, &view->nr_counts);
	err = err ?: build_view_ids(p, run, view->nr_processes, view->nr_threads,
				    &view->nr_nodes);
	if (err) {
		free_view(p);
		return err;
	}
	view->processes = p->v_procs;
	view->threads = p->v_threads;
	view->counts = p->v_counts;
	view->stacks = p->stacks;
	view->nr_stacks = p->nr_stacks;
	view->thread_ids = p->v_ids;
	return 0;
}
