// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile_db.c - writes profile.db: one profile per thread (index thread +
 * 1, identifier tuple NODE / RANK / THREAD (ids.c), propMetricIds) and the summary
 * profile (index 0, sums over threads, statMetricIds), each a profile-major
 * sparse value block; global ctxId 0 holds a thread's total.
 *
 * The values arrive context by context (values.c) but a block lists one
 * profile's contexts, and its two arrays must be adjacent: a first walk
 * counts each profile's values and contexts, which places every block; a
 * second walk streams each context's values into the blocks of its threads
 * through a small buffer per block.  Memory: those buffers (at most
 * PROFILE_BUFFERS bytes; very many threads take several walks), not the
 * values of all threads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpc.h"

#define PROF_HDR_SIZE 0x30
#define PROF_INFO_SIZE 0x30
#define PROFILE_BUFFERS (64u << 20)
#define BLOCK_BUF_MIN 4096u
#define BLOCK_BUF_MAX (64u << 10)

/* One {Id}: kind, flags (bit 0 isPhysical), logicalId, physicalId. */
static void put_id(struct bw *w, uint8_t kind, uint32_t logical, uint64_t physical)
{
	bw_u8(w, kind);
	bw_u8(w, 0);
	bw_u16(w, 1);		/* isPhysical: physicalId identifies it */
	bw_u32(w, logical);
	bw_u64(w, physical);
}

/* Hierarchical Identifier Tuple: NODE, RANK (unless rank -1), THREAD. */
void write_identifier_tuple(struct bw *w, const struct hpc_thread_id *id)
{
	bw_u16(w, id->rank < 0 ? 2 : 3);
	bw_zero(w, 6);
	put_id(w, 1, id->node, id->host_id);
	if (id->rank >= 0)
		put_id(w, 2, (uint32_t)id->rank, id->pid);
	put_id(w, 3, id->thread, id->tid);
}

/*
 * Profile-Major Sparse Value Block: {metricId u16, value f64} per non-zero
 * value (by context, then metric), padding to 4, {ctxId u32, startIndex
 * u64} per context, streamed through two buffers (struct hpc_pblock).
 */
int pblock_begin(struct hpc_pblock *b, int fd, uint64_t pvalues, uint64_t nvalues,
		 size_t bufsize)
{
	memset(b, 0, sizeof(*b));
	b->pvalues = pvalues;
	b->pidx = align_up(pvalues + 10 * nvalues, 4);
	b->expected = nvalues;
	if (bw_init_at(&b->vals, fd, b->pvalues, bufsize) |
	    bw_init_at(&b->idx, fd, b->pidx, bufsize)) {
		bw_free(&b->vals);
		bw_free(&b->idx);
		return -ENOMEM;
	}
	return 0;
}

/* The {Val}s of one context at @p; returns their end. */
static uint8_t *put_values(uint8_t *p, const struct hpc_value *v, double scale)
{
	for (int m = 0; m < HPC_NR_SCOPES; m++) {
		uint64_t c = hpc_value_of(v, m);

		if (!c)
			continue;
		put_u16(p, m);
		put_f64(p + 2, (double)c * scale);
		p += 10;
	}
	return p;
}

void write_profile_major_sparse_value_block(struct hpc_pblock *b, const struct hpc_value *v,
					    double scale)
{
	unsigned k = hpc_nr_values(v);
	uint8_t tmp[HPC_NR_SCOPES * 10], *p, *q;

	if (!k)
		return;
	p = bw_reserve(&b->vals, 10 * k);
	put_values(p ? p : tmp, v, scale);
	if (!p)
		bw_write(&b->vals, tmp, 10 * k);
	q = bw_reserve(&b->idx, 12);
	if (!q)
		q = tmp;
	put_u32(q, v->ctx);
	put_u64(q + 4, b->nvalues);
	if (q == tmp)
		bw_write(&b->idx, tmp, 12);
	b->nvalues += k;
	b->nctxs++;
}

int pblock_end(struct hpc_pblock *b, uint8_t hdr[32])
{
	int err = bw_finish(&b->vals), err2 = bw_finish(&b->idx);

	if (!err)
		err = err2;
	if (!err && b->nvalues != b->expected)
		err = -EIO;		/* the counting walk disagrees */
	memset(hdr, 0, 32);
	put_u64(hdr, b->nvalues);
	put_u64(hdr + 8, b->pvalues);
	put_u32(hdr + 0x10, b->nctxs);
	put_u64(hdr + 0x18, b->pidx);
	bw_free(&b->vals);
	bw_free(&b->idx);
	return err;
}

uint64_t pblock_end_offset(uint64_t p, uint64_t nvalues, uint32_t nctxs)
{
	return align_up(p + 10 * nvalues, 4) + 12ull * nctxs;
}

/* ---- the two walks ------------------------------------------------------ */

struct prof_size {
	uint64_t nvalues;
	uint32_t nctxs;
	uint64_t pvalues;		/* where its block starts */
};

struct prof_writer {
	const struct hpc_values *in;
	double scale;
	struct prof_size *size;		/* [profile]: 0 summary, t + 1 thread t */
	struct hpc_pblock *blocks;	/* of threads first .. first + nr - 1 */
	uint32_t first, nr;
	struct hpc_pblock *summary;	/* NULL: written in another walk */
};

static void sum_values(const struct hpc_value *v, size_t n, uint32_t ctx, struct hpc_value *s)
{
	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	for (size_t i = 0; i < n; i++) {
		s->point += v[i].point;
		s->function += v[i].function;
		s->execution += v[i].execution;
	}
}

static void count(struct prof_size *ps, const struct hpc_value *v)
{
	unsigned k = hpc_nr_values(v);

	ps->nvalues += k;
	ps->nctxs += k != 0;
}

static int count_context(void *arg, uint32_t ctx, const struct hpc_value *v, size_t n)
{
	struct prof_writer *pw = arg;
	struct hpc_value s;

	for (size_t i = 0; i < n; i++)
		count(&pw->size[v[i].thread + 1], &v[i]);
	sum_values(v, n, ctx, &s);
	count(&pw->size[0], &s);
	return 0;
}

static int write_context_values(void *arg, uint32_t ctx, const struct hpc_value *v, size_t n)
{
	struct prof_writer *pw = arg;
	struct hpc_value s;

	for (size_t i = 0; i < n; i++)
		if (v[i].thread - pw->first < pw->nr)
			write_profile_major_sparse_value_block(&pw->blocks[v[i].thread - pw->first],
							       &v[i], pw->scale);
	if (pw->summary) {
		sum_values(v, n, ctx, &s);
		write_profile_major_sparse_value_block(pw->summary, &s, pw->scale);
	}
	return 0;
}

/* Blocks of the threads in order, then the summary's; returns the end. */
static uint64_t place_blocks(struct prof_size *size, uint32_t nthreads, uint64_t p)
{
	for (uint32_t t = 1; t <= nthreads; t++) {
		if (!size[t].nvalues)
			continue;
		size[t].pvalues = p;
		p = pblock_end_offset(p, size[t].nvalues, size[t].nctxs);
	}
	size[0].pvalues = p;
	for (uint32_t t = 1; t <= nthreads; t++)	/* empty profiles point there */
		if (!size[t].nvalues)
			size[t].pvalues = p;
	return pblock_end_offset(p, size[0].nvalues, size[0].nctxs);
}

/* Begin the block of profile @prof if it has values, with buffers of at
 * most @bufsize bytes (no larger than the block). */
static int begin_block(struct hpc_pblock *b, int fd, const struct prof_size *size,
		       uint32_t prof, size_t bufsize)
{
	const struct prof_size *ps = &size[prof];
	uint64_t bytes = pblock_end_offset(0, ps->nvalues, ps->nctxs);

	if (!ps->nvalues)
		return 0;
	return pblock_begin(b, fd, ps->pvalues, ps->nvalues, bytes < bufsize ? bytes : bufsize);
}

/* End a block begun by begin_block() into profile @prof's {PI}. */
static int end_block(struct hpc_pblock *b, uint32_t prof, uint8_t *infos, int err)
{
	int e;

	if (!b->vals.buf)
		return err;
	e = pblock_end(b, infos + (size_t)prof * PROF_INFO_SIZE);
	return err ? err : e;
}

/* One walk writing the blocks of threads [first, first + nr), and the
 * summary's with the first threads. */
static int write_blocks(int fd, struct prof_writer *pw, uint32_t first, uint32_t nr,
			size_t bufsize, uint8_t *infos)
{
	struct hpc_pblock *b = calloc(nr ? nr : 1, sizeof(*b)), sum;
	int err = 0;

	if (!b)
		return -ENOMEM;
	memset(&sum, 0, sizeof(sum));
	if (first == 0)
		err = begin_block(&sum, fd, pw->size, 0, bufsize);
	for (uint32_t i = 0; i < nr && !err; i++)
		err = begin_block(&b[i], fd, pw->size, first + i + 1, bufsize);
	pw->blocks = b;
	pw->first = first;
	pw->nr = nr;
	pw->summary = sum.vals.buf ? &sum : NULL;
	if (!err)
		err = hpc_values_walk(pw->in, write_context_values, pw);
	err = end_block(&sum, 0, infos, err);
	for (uint32_t i = 0; i < nr; i++)
		err = end_block(&b[i], first + i + 1, infos, err);
	free(b);
	return err;
}

static size_t block_buffer_size(uint32_t threads_per_walk)
{
	size_t sz = PROFILE_BUFFERS / (2 * (size_t)(threads_per_walk + 1));

	return sz < BLOCK_BUF_MIN ? BLOCK_BUF_MIN : sz > BLOCK_BUF_MAX ? BLOCK_BUF_MAX : sz;
}

/* Count, place, then write every block; fills the {PI}s' block headers. */
static int write_all_blocks(int fd, const struct hpc_values *in, double scale, uint64_t p,
			    uint8_t *infos, uint64_t *end)
{
	uint32_t n = in->nthreads, per = PROFILE_BUFFERS / (2 * BLOCK_BUF_MIN);
	struct prof_writer pw = { .in = in, .scale = scale };
	int err;

	pw.size = calloc((size_t)n + 1, sizeof(*pw.size));
	if (!pw.size)
		return -ENOMEM;
	err = hpc_values_walk(in, count_context, &pw);
	if (!err)
		*end = place_blocks(pw.size, n, p);
	if (per > n)
		per = n;
	for (uint32_t first = 0; !err && (first < n || first == 0); first += per) {
		err = write_blocks(fd, &pw, first, first + per <= n ? per : n - first,
				   block_buffer_size(per), infos);
		if (!per)
			break;
	}
	for (uint32_t t = 1; !err && t <= n; t++) {
		uint8_t *pi = infos + (size_t)t * PROF_INFO_SIZE;

		if (!pw.size[t].nvalues) {	/* empty: both arrays where the summary is */
			put_u64(pi + 8, pw.size[t].pvalues);
			put_u64(pi + 0x18, pw.size[t].pvalues);
		}
	}
	free(pw.size);
	return err;
}

int write_profile_db(int dir_fd, const struct hpc_values *in, const struct hpc_thread_id *ids,
		     double scale)
{
	uint64_t nprof = (uint64_t)in->nthreads + 1, ptuples, sec[4], end = 0;
	uint8_t *infos = calloc(nprof, PROF_INFO_SIZE);
	struct hpc_db db;
	struct bw *w = &db.w;
	int err;

	if (!infos)
		return -ENOMEM;
	err = hpc_db_create(&db, dir_fd, "profile.db", PROF_HDR_SIZE);
	if (err) {
		free(infos);
		return err;
	}
	/* Profile Info section header; the {PI} array is patched in at the end */
	bw_u64(w, PROF_HDR_SIZE + 0x10);
	bw_u32(w, nprof);
	bw_u8(w, PROF_INFO_SIZE);
	bw_align(w, 8);
	bw_zero(w, nprof * PROF_INFO_SIZE);
	sec[0] = 0x10 + nprof * PROF_INFO_SIZE;
	sec[1] = PROF_HDR_SIZE;
	/* Hierarchical Identifier Tuple section */
	ptuples = w->off;
	for (uint32_t t = 0; t < in->nthreads; t++) {
		put_u64(infos + (t + 1) * PROF_INFO_SIZE + 0x20, w->off);
		write_identifier_tuple(w, &ids[t]);
	}
	sec[2] = w->off - ptuples;
	sec[3] = ptuples;
	bw_align(w, 4);
	err = w->err ? w->err : write_all_blocks(db.fd, in, scale, w->off, infos, &end);
	if (err)
		bw_fail(w, err);
	put_u32(infos + 0x28, 1);	/* isSummary; pIdTuple stays 0 */
	bw_seek(w, end);
	bw_patch(w, PROF_HDR_SIZE + 0x10, infos, nprof * PROF_INFO_SIZE);
	free(infos);
	return hpc_db_finish(&db, "prof", "_prof.db", sec, 2);
}
