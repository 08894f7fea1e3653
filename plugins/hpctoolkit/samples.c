// SPDX-License-Identifier: BSD-2-Clause
/*
 * samples.c - the leaf contexts of the HPCToolkit plugin's samples: one per
 * count of the aggregated profile, and for the spooled sample stream one
 * per sample, bucketed by thread into trace lines of (wall time, leaf).
 *
 * The counts are resolved in the order (pid, entry point, user stack by its
 * frames from the outermost one, kernel stack): the tree does not depend
 * on the thread, and each user stack's walk resumes after the frames it
 * shares with the previous one of the same process, so most frames are
 * looked up once per process, not once per count.
 *
 * The stream is bucketed by thread first; then each thread's samples find
 * their leaves through its counts (binary search by stack indices: the
 * stream's and the profile's name the same stacks when the host serves
 * both from one table, which is checked); only a (thread, stacks) no count
 * has gets a slot and a context of its own.
 * Leaves are kept by slot and become ctxIds once meta.db numbered the
 * tree.  The spool is read in chunks: memory does not grow with the
 * number of samples.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hpc.h"

#define SPOOL_CHUNK 4096		/* records read at once */

int hpc_scratch_file(int dir_fd, const char *name)
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

/* A stack by index and its id for hpc_paths_leaf(): the stream's indices
 * (host->stack()) and the profile's need not be the same space; an index
 * naming the same stack in both gets the same id, the index itself. */
static const struct bpfprof_stack *get_stack(const struct hpc_samples *sm, uint32_t idx,
					     int from_host, uint64_t *id)
{
	const struct bpfprof_profile *p = sm->p;
	const struct bpfprof_stack *st, *ps = idx < p->nr_stacks ? &p->stacks[idx] : NULL;

	*id = 0;
	if (idx == 0)
		return NULL;
	st = from_host ? sm->host->stack(sm->host, idx) : ps;
	if (!st)
		return NULL;
	*id = idx;
	if (st != ps && (!ps || st->ips != ps->ips || st->nr != ps->nr))
		*id |= 1ull << 32;
	return st;
}

static uint16_t entry_type(const struct bpfprof_thread *th)
{
	return th->tid == th->pid ? HPC_EP_MAIN : HPC_EP_THREAD;
}

uint32_t hpc_samples_thread(const struct hpc_samples *sm, uint32_t pid, uint32_t tid)
{
	return hashtab_get(&sm->threads, pid, tid);
}

static int index_threads(struct hpc_samples *sm)
{
	const struct bpfprof_profile *p = sm->p;

	for (uint32_t t = 0; t < p->nr_threads; t++)
		if (hpc_samples_thread(sm, p->threads[t].pid, p->threads[t].tid) == HPC_NONE &&
		    hashtab_put(&sm->threads, p->threads[t].pid, p->threads[t].tid, t))
			return -ENOMEM;
	return 0;
}

static int cmp_stacks(const struct bpfprof_count *x, const struct bpfprof_count *y)
{
	if (x->user_stack != y->user_stack)
		return x->user_stack < y->user_stack ? -1 : 1;
	return x->kernel_stack < y->kernel_stack ? -1 : x->kernel_stack > y->kernel_stack;
}

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct bpfprof_count *counts = arg;

	return cmp_stacks(&counts[*(const uint32_t *)a], &counts[*(const uint32_t *)b]);
}

/* order[]: the counts of each thread by (user stack, kernel stack). */
static int index_counts(struct hpc_samples *sm)
{
	const struct bpfprof_profile *p = sm->p;
	uint32_t *pos = calloc(p->nr_threads + 1, sizeof(*pos));

	sm->first = calloc(p->nr_threads + 1, sizeof(*sm->first));
	sm->order = malloc((p->nr_counts ? p->nr_counts : 1) * sizeof(*sm->order));
	if (!pos || !sm->first || !sm->order) {
		free(pos);
		return -ENOMEM;
	}
	for (size_t c = 0; c < p->nr_counts; c++)
		if (p->counts[c].thread < p->nr_threads)
			sm->first[p->counts[c].thread + 1]++;
	for (uint32_t t = 0; t < p->nr_threads; t++)
		sm->first[t + 1] += sm->first[t];
	memcpy(pos, sm->first, p->nr_threads * sizeof(*pos));
	for (size_t c = 0; c < p->nr_counts; c++)
		if (p->counts[c].thread < p->nr_threads)
			sm->order[pos[p->counts[c].thread]++] = c;
	for (uint32_t t = 0; t < p->nr_threads; t++) {
		uint32_t *o = sm->order + sm->first[t], n = sm->first[t + 1] - sm->first[t];

		for (uint32_t i = 1; i < n; i++)
			if (cmp_stacks(&p->counts[o[i - 1]], &p->counts[o[i]]) > 0) {
				qsort_r(o, n, sizeof(*o), cmp_order, (void *)p->counts);
				break;
			}
	}
	free(pos);
	return 0;
}

/* Room for slot @need - 1. */
static int grow_slots(struct hpc_samples *sm, size_t need)
{
	size_t cap = sm->cap_slots ? sm->cap_slots : 1024;
	uint32_t *l;

	if (need <= sm->cap_slots)
		return 0;
	while (cap < need)
		cap *= 2;
	l = realloc(sm->leaf, cap * sizeof(*l));
	if (!l)
		return -ENOMEM;
	sm->leaf = l;
	sm->cap_slots = cap;
	return 0;
}

static const struct bpfprof_stack *profile_stack(const struct bpfprof_profile *p, uint32_t idx)
{
	return idx && idx < p->nr_stacks ? &p->stacks[idx] : NULL;
}

static int cmp_stack_index(const void *a, const void *b, void *arg)
{
	const struct bpfprof_profile *p = arg;

	return hpc_paths_cmp(profile_stack(p, *(const uint32_t *)a),
			     profile_stack(p, *(const uint32_t *)b));
}

/* rank[us]: position of user stack us among those of the counts, ordered
 * by frames (hpc_paths_cmp()). */
static uint32_t *rank_user_stacks(const struct bpfprof_profile *p)
{
	uint32_t *rank = malloc((p->nr_stacks + 1) * sizeof(*rank)), *list, n = 0;

	list = malloc((p->nr_stacks + 1) * sizeof(*list));
	if (!rank || !list) {
		free(rank);
		free(list);
		return NULL;
	}
	memset(rank, 0xff, (p->nr_stacks + 1) * sizeof(*rank));
	for (size_t c = 0; c < p->nr_counts; c++) {
		uint32_t us = p->counts[c].user_stack < p->nr_stacks ? p->counts[c].user_stack : 0;

		if (rank[us] == HPC_NONE) {
			rank[us] = 0;
			list[n++] = us;
		}
	}
	qsort_r(list, n, sizeof(*list), cmp_stack_index, (void *)p);
	for (uint32_t i = 0; i < n; i++)
		rank[list[i]] = i;
	free(list);
	return rank;
}

/* A count in the order its leaf is built: (pid, main thread?, rank of the
 * user stack) in key, then the kernel stack. */
struct count_item {
	uint64_t key;
	uint32_t kernel_stack;
	uint32_t count;
};

static int cmp_item(const void *a, const void *b)
{
	const struct count_item *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->kernel_stack != y->kernel_stack)
		return x->kernel_stack < y->kernel_stack ? -1 : 1;
	return x->count < y->count ? -1 : x->count > y->count;
}

/* The counts of threads in that order (pages of nr_counts items). */
static struct count_item *sort_counts(const struct bpfprof_profile *p, size_t *nr)
{
	struct count_item *it = hpc_pages_alloc(p->nr_counts * sizeof(*it));
	uint32_t *rank = rank_user_stacks(p);
	size_t n = 0;

	if (!it || !rank) {
		hpc_pages_free(it, p->nr_counts * sizeof(*it));
		free(rank);
		return NULL;
	}
	for (size_t c = 0; c < p->nr_counts; c++) {
		const struct bpfprof_count *cnt = &p->counts[c];
		const struct bpfprof_thread *th;
		uint32_t us = cnt->user_stack < p->nr_stacks ? cnt->user_stack : 0;

		if (cnt->thread >= p->nr_threads)
			continue;
		th = &p->threads[cnt->thread];
		it[n++] = (struct count_item){ (uint64_t)th->pid << 32 |
					       (uint64_t)(entry_type(th) == HPC_EP_MAIN) << 31 |
					       rank[us],
					       cnt->kernel_stack, c };
	}
	free(rank);
	qsort(it, n, sizeof(*it), cmp_item);
	*nr = n;
	return it;
}

/* Leaves of the counts it[0 .. n - 1] of one (pid, entry point, user stack)
 * below @user_leaf: a kernel stack resolved once per distinct one. */
static int kernel_leaves(struct hpc_samples *sm, const struct count_item *it, size_t n,
			 uint32_t pid, uint32_t user_leaf)
{
	for (size_t k = 0; k < n; k++) {
		uint32_t c = it[k].count, leaf;

		if (k && it[k].kernel_stack == it[k - 1].kernel_stack) {
			sm->leaf[c] = sm->leaf[it[k - 1].count];
			continue;
		}
		leaf = hpc_paths_walk(sm->paths, pid, user_leaf,
				      profile_stack(sm->p, it[k].kernel_stack), 0, 1, NULL);
		if (leaf == HPC_NONE)
			return -ENOMEM;
		sm->leaf[c] = leaf;
	}
	return 0;
}

/* path[j]: context after frame j of the last user stack walked. */
struct user_walk {
	uint32_t *path;
	uint32_t cap;
	const struct bpfprof_stack *last;
	uint64_t group;			/* (pid, main thread?) of last */
};

/* The context of a user stack, resumed after the frames it shares with
 * the previous one of the same process and entry point. */
static uint32_t user_leaf(struct hpc_samples *sm, struct user_walk *uw, uint64_t group,
			  const struct bpfprof_thread *th, const struct bpfprof_stack *user)
{
	uint32_t keep = group == uw->group ? hpc_paths_common(uw->last, user) : 0, node;

	if (user && user->nr > uw->cap) {
		uint32_t *p = realloc(uw->path, user->nr * sizeof(*p));

		if (!p)
			return HPC_NONE;
		uw->path = p;
		uw->cap = user->nr;
	}
	node = keep ? uw->path[keep - 1] : hpc_cct_entry(sm->paths->t, entry_type(th));
	node = hpc_paths_walk(sm->paths, th->pid, node, user, keep, 0, uw->path);
	uw->last = user;
	uw->group = group;
	return node;
}

/* Slot c: count c's leaf (HPC_NONE for a count of no thread). */
static int count_leaves(struct hpc_samples *sm)
{
	const struct bpfprof_profile *p = sm->p;
	struct user_walk uw = { .group = UINT64_MAX };
	struct count_item *it;
	size_t n = 0, i, j;
	int err = 0;

	if (grow_slots(sm, p->nr_counts) || !(it = sort_counts(p, &n)))
		return -ENOMEM;
	memset(sm->leaf, 0xff, p->nr_counts * sizeof(*sm->leaf));
	for (i = 0; i < n && !err; i = j) {
		const struct bpfprof_count *cnt = &p->counts[it[i].count];
		const struct bpfprof_thread *th = &p->threads[cnt->thread];
		uint32_t node;

		for (j = i + 1; j < n && it[j].key == it[i].key; j++)
			;
		node = user_leaf(sm, &uw, it[i].key >> 31, th,
				 profile_stack(p, cnt->user_stack));
		err = node == HPC_NONE ? -ENOMEM : kernel_leaves(sm, it + i, j - i, th->pid, node);
	}
	sm->nr_slots = p->nr_counts;
	free(uw.path);
	hpc_pages_free(it, p->nr_counts * sizeof(*it));
	return err;
}

int hpc_samples_init(struct hpc_samples *sm, const struct bpfprof_profile *p,
		     const struct bpfprof_host *host, struct hpc_paths *paths)
{
	int err;

	memset(sm, 0, sizeof(*sm));
	sm->p = p;
	sm->host = host;
	sm->paths = paths;
	if ((err = index_threads(sm)) || (err = index_counts(sm)))
		return err;
	return count_leaves(sm);
}

void hpc_samples_free(struct hpc_samples *sm)
{
	hashtab_free(&sm->threads);
	hashtab_free(&sm->extra);
	free(sm->first);
	free(sm->order);
	free(sm->leaf);
	memset(sm, 0, sizeof(*sm));
}

/* The count of @thread with these (profile) stack indices, or -1. */
static int64_t find_count(const struct hpc_samples *sm, uint32_t thread, uint32_t us,
			  uint32_t ks)
{
	const struct bpfprof_count key = { .user_stack = us, .kernel_stack = ks };
	uint32_t lo = sm->first[thread], hi = sm->first[thread + 1];

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = cmp_stacks(&sm->p->counts[sm->order[mid]], &key);

		if (!c)
			return sm->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The leaf slot of a streamed sample of @thread. */
static int64_t sample_slot(struct hpc_samples *sm, uint32_t thread,
			   const struct hpc_spool_rec *r)
{
	const struct bpfprof_stack *user, *kernel;
	uint64_t uid, kid, key;
	uint32_t slot, node;
	int64_t c;

	user = get_stack(sm, r->user_stack, 1, &uid);
	kernel = get_stack(sm, r->kernel_stack, 1, &kid);
	if (!(uid >> 32) && !(kid >> 32) && (c = find_count(sm, thread, uid, kid)) >= 0)
		return c;
	/* ids: a stack index < 2^32 and a flag at bit 32; threads < 2^30 */
	key = (uint64_t)thread << 34 | (uid >> 32) << 33 | (kid >> 32) << 32 | (uint32_t)uid;
	slot = hashtab_get(&sm->extra, key, (uint32_t)kid);
	if (slot != HPC_NONE)
		return slot;
	node = hpc_paths_leaf(sm->paths, sm->p->threads[thread].pid,
			      entry_type(&sm->p->threads[thread]), user, kernel);
	if (node == HPC_NONE || grow_slots(sm, sm->nr_slots + 1) ||
	    hashtab_put(&sm->extra, key, (uint32_t)kid, sm->nr_slots))
		return -ENOMEM;
	sm->leaf[sm->nr_slots] = node;
	return sm->nr_slots++;
}

/* ---- the spool, chunk by chunk ------------------------------------------ */

struct spool_reader {
	int fd;
	uint64_t nr, done;		/* records in the spool, read so far */
	struct hpc_spool_rec *buf;
	size_t n, i;			/* records in buf, next one */
	int err;
};

static const struct hpc_spool_rec *spool_next(struct spool_reader *r)
{
	if (r->i == r->n) {
		size_t want = r->nr - r->done < SPOOL_CHUNK ? r->nr - r->done : SPOOL_CHUNK;
		size_t bytes = want * sizeof(*r->buf), got = 0;

		while (got < bytes) {
			ssize_t k = pread(r->fd, (char *)r->buf + got, bytes - got,
					  r->done * sizeof(*r->buf) + got);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				r->err = k < 0 ? -errno : -EIO;
				return NULL;
			}
			got += k;
		}
		r->done += want;
		r->n = want;
		r->i = 0;
		if (!want)
			return NULL;
	}
	return &r->buf[r->i++];
}

static int spool_open(struct spool_reader *r, int fd, uint64_t nr)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->nr = nr;
	r->buf = malloc(SPOOL_CHUNK * sizeof(*r->buf));
	return r->buf ? 0 : -ENOMEM;
}

/* ---- trace lines ---------------------------------------------------------- */

/* An unlinked mapped file of @n trace elements. */
static int map_trace(int dir_fd, uint64_t n, struct hpc_trace_lines *tl)
{
	int fd = hpc_scratch_file(dir_fd, ".trace.spool"), err;
	void *m;

	if (fd < 0)
		return fd;
	tl->map_len = n * sizeof(*tl->elems);
	/* Allocate the blocks now: a store through the mapping into a hole of
	 * a full file system would be a SIGBUS, not ENOSPC. */
	err = posix_fallocate(fd, 0, tl->map_len);
	m = err ? MAP_FAILED : mmap(NULL, tl->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!err && m == MAP_FAILED)
		err = errno;
	close(fd);
	if (err)
		return -err;
	tl->elems = m;
	return 0;
}

/* line_start[]: how many samples each thread has, summed up. */
static int count_lines(struct hpc_samples *sm, int spool_fd, uint64_t nr, uint64_t *start)
{
	const struct hpc_spool_rec *r;
	struct spool_reader rd;
	uint32_t nthreads = sm->p->nr_threads;

	if (spool_open(&rd, spool_fd, nr))
		return -ENOMEM;
	while ((r = spool_next(&rd))) {
		uint32_t t = hpc_samples_thread(sm, r->pid, r->tid);

		if (t != HPC_NONE)
			start[t + 1]++;
	}
	for (uint32_t t = 0; t < nthreads; t++)
		start[t + 1] += start[t];
	free(rd.buf);
	return rd.err;
}

/* Each sample as (wall time, its stack indices) into its thread's line. */
static int fill_lines(struct hpc_samples *sm, int spool_fd, uint64_t nr,
		      struct hpc_trace_lines *tl)
{
	const struct bpfprof_run *run = sm->p->run;
	uint32_t nthreads = sm->p->nr_threads;
	uint64_t *pos = malloc((nthreads + 1) * sizeof(*pos));
	const struct hpc_spool_rec *r;
	struct spool_reader rd;

	if (!pos || spool_open(&rd, spool_fd, nr)) {
		free(pos);
		return -ENOMEM;
	}
	memcpy(pos, tl->line_start, (nthreads + 1) * sizeof(*pos));
	while ((r = spool_next(&rd))) {
		uint32_t t = hpc_samples_thread(sm, r->pid, r->tid);
		struct hpc_trace_elem *e;

		if (t == HPC_NONE)
			continue;
		e = &tl->elems[pos[t]++];
		e->time = r->time - run->start_ns + run->realtime_anchor_ns;
		e->ctx = r->user_stack;
		e->kernel_stack = r->kernel_stack;
	}
	free(pos);
	free(rd.buf);
	return rd.err;
}

/* The leaf slots of one thread's line, with its counts in cache. */
static int resolve_line(struct hpc_samples *sm, uint32_t thread, struct hpc_trace_elem *e,
			uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		struct hpc_spool_rec r = { .user_stack = e[i].ctx,
					   .kernel_stack = e[i].kernel_stack };
		int64_t slot = sample_slot(sm, thread, &r);

		if (slot < 0)
			return (int)slot;
		e[i].ctx = (uint32_t)slot;
		e[i].kernel_stack = 0;
	}
	return 0;
}

int hpc_samples_bucket(struct hpc_samples *sm, int spool_fd, uint64_t nr, int dir_fd,
		       struct hpc_trace_lines *tl)
{
	uint32_t nthreads = sm->p->nr_threads;
	int err;

	memset(tl, 0, sizeof(*tl));
	tl->line_start = calloc(nthreads + 1, sizeof(*tl->line_start));
	if (!tl->line_start)
		return -ENOMEM;
	if ((err = count_lines(sm, spool_fd, nr, tl->line_start)) || !tl->line_start[nthreads])
		return err;
	if ((err = map_trace(dir_fd, tl->line_start[nthreads], tl)))
		return err;
	err = fill_lines(sm, spool_fd, nr, tl);
	for (uint32_t t = 0; t < nthreads && !err; t++)
		err = resolve_line(sm, t, tl->elems + tl->line_start[t],
				   tl->line_start[t + 1] - tl->line_start[t]);
	/* the counts' index served only the stream */
	free(sm->first);
	free(sm->order);
	sm->first = sm->order = NULL;
	return err;
}

void hpc_samples_number(struct hpc_samples *sm, const struct hpc_cct *t,
			struct hpc_trace_lines *tl)
{
	uint64_t n = tl->line_start ? tl->line_start[sm->p->nr_threads] : 0;

	for (size_t i = 0; i < sm->nr_slots; i++)
		if (sm->leaf[i] != HPC_NONE)
			sm->leaf[i] = t->nodes[sm->leaf[i]].ctx;
	for (uint64_t i = 0; tl->elems && i < n; i++)
		tl->elems[i].ctx = sm->leaf[tl->elems[i].ctx];
}

void hpc_trace_lines_free(struct hpc_trace_lines *tl)
{
	if (tl->elems)
		munmap(tl->elems, tl->map_len);
	free(tl->line_start);
	memset(tl, 0, sizeof(*tl));
}
