// SPDX-License-Identifier: BSD-2-Clause
/*
 * values.c - the per-thread values of every context of the HPCToolkit
 * plugin's tree, produced context by context in ctxId order for the
 * writers of cct.db and profile.db, without ever holding all (thread,
 * context) values at once.
 *
 * ctxIds are in post order (cct.c), so a context comes right after its
 * children: a walk in ctxId order keeps the finished contexts' values
 * ("vectors", one entry per thread, by thread) on a stack, and a context
 * with k children finds theirs as the top k vectors.  It merges them with
 * the samples whose leaf it is:
 *   point     = its own samples
 *   function  = point + function of the children nested lexically in it
 *   execution = point + execution of all children
 * and its vector replaces theirs.  Memory: the stack (vectors of the
 * contexts on the current path's siblings) and one accumulator per
 * thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "hpc.h"

#define RADIX_BITS 11

struct segment {			/* a finished context's vector on the stack */
	size_t start;			/* first entry in vals */
	uint32_t lexical;		/* passes its function value up */
};

struct walk {
	const struct hpc_values *in;
	struct hpc_value *acc;		/* [thread] */
	uint64_t *bits, *words;		/* threads in acc; words of bits in use */
	struct hpc_value *vals;		/* the stack's entries */
	size_t nr_vals, cap_vals;
	struct segment *segs;
	size_t nr_segs, cap_segs;
	size_t next_leaf;
};

static void mark(struct walk *w, uint32_t t)
{
	w->bits[t >> 6] |= 1ull << (t & 63);
	w->words[t >> 12] |= 1ull << ((t >> 6) & 63);
}

/* Move the marked accumulators to the stack, by thread, as @ctx's vector. */
static void flush_marked(struct walk *w, uint32_t ctx)
{
	size_t nwords = ((size_t)w->in->nthreads + 4095) / 4096;

	for (size_t i = 0; i < nwords; i++) {
		for (uint64_t m = w->words[i]; m; m &= m - 1) {
			size_t word = i * 64 + __builtin_ctzll(m);

			for (uint64_t b = w->bits[word]; b; b &= b - 1) {
				uint32_t t = (uint32_t)(word * 64 + __builtin_ctzll(b));
				struct hpc_value *v = &w->vals[w->nr_vals++];

				*v = w->acc[t];
				v->ctx = ctx;
				v->thread = t;
				memset(&w->acc[t], 0, sizeof(w->acc[t]));
			}
			w->bits[word] = 0;
		}
		w->words[i] = 0;
	}
}

/* A context with one child and no samples of its own: the child's
 * vector becomes its vector in place. */
static void inherit(struct walk *w, uint32_t ctx)
{
	struct segment *s = &w->segs[w->nr_segs - 1];

	for (size_t i = s->start; i < w->nr_vals; i++) {
		struct hpc_value *v = &w->vals[i];

		v->ctx = ctx;
		v->point = 0;
		if (!s->lexical)
			v->function = 0;
	}
}

/* Any other context: the top @k vectors and leaves [l, end) merged. */
static int merge(struct walk *w, uint32_t ctx, uint32_t k, size_t l, size_t end)
{
	const struct hpc_leaf *leaves = w->in->leaves;
	size_t base = k ? w->segs[w->nr_segs - k].start : w->nr_vals, own = end - l;

	for (size_t s = w->nr_segs - k; s < w->nr_segs; s++) {
		size_t stop = s + 1 < w->nr_segs ? w->segs[s + 1].start : w->nr_vals;

		for (size_t i = w->segs[s].start; i < stop; i++) {
			const struct hpc_value *v = &w->vals[i];

			w->acc[v->thread].execution += v->execution;
			if (w->segs[s].lexical)
				w->acc[v->thread].function += v->function;
			mark(w, v->thread);
		}
	}
	for (; l < end; l++) {
		struct hpc_value *a = &w->acc[leaves[l].thread];

		a->point += leaves[l].samples;
		a->function += leaves[l].samples;
		a->execution += leaves[l].samples;
		mark(w, leaves[l].thread);
	}
	/* at most one entry per merged entry or leaf */
	if (grow_array(&w->vals, &w->cap_vals, w->nr_vals + own, sizeof(*w->vals)))
		return -ENOMEM;
	w->nr_segs -= k;
	w->nr_vals = base;
	flush_marked(w, ctx);
	w->segs[w->nr_segs++].start = base;
	return 0;
}

static int visit_context(struct walk *w, uint32_t ctx, hpc_values_fn fn, void *arg)
{
	const struct hpc_values *in = w->in;
	uint32_t shape = in->shape[ctx], k = shape >> 1;
	size_t l = w->next_leaf, end;
	int err;

	while (l < in->nr_leaves && in->leaves[l].ctx < ctx)
		l++;		/* no such context: dropped */
	for (end = l; end < in->nr_leaves && in->leaves[end].ctx == ctx; end++)
		if (in->leaves[end].thread >= in->nthreads)
			return -EINVAL;
	w->next_leaf = end;
	if (k > w->nr_segs)
		return -EINVAL;
	if (grow_array(&w->segs, &w->cap_segs, w->nr_segs + 1, sizeof(*w->segs)))
		return -ENOMEM;
	if (k == 1 && l == end)
		inherit(w, ctx);
	else if ((err = merge(w, ctx, k, l, end)))
		return err;
	w->segs[w->nr_segs - 1].lexical = shape & HPC_SHAPE_LEXICAL;
	return fn(arg, ctx, w->vals + w->segs[w->nr_segs - 1].start,
		  w->nr_vals - w->segs[w->nr_segs - 1].start);
}

/* ctxId 0, the global context: each thread's total. */
static int visit_global(struct walk *w, hpc_values_fn fn, void *arg)
{
	const struct hpc_values *in = w->in;
	size_t n = 0;

	if (grow_array(&w->vals, &w->cap_vals, in->nthreads, sizeof(*w->vals)))
		return -ENOMEM;
	for (uint32_t t = 0; t < in->nthreads; t++)
		if (in->totals[t])
			w->vals[n++] = (struct hpc_value){ .ctx = 0, .thread = t,
							   .execution = in->totals[t] };
	return fn(arg, 0, w->vals, n);
}

int hpc_values_walk(const struct hpc_values *in, hpc_values_fn fn, void *arg)
{
	size_t nwords = ((size_t)in->nthreads + 63) / 64;
	struct walk w = { .in = in };
	int err = -ENOMEM;

	w.acc = calloc(in->nthreads ? in->nthreads : 1, sizeof(*w.acc));
	w.bits = calloc(nwords + 1, sizeof(*w.bits));
	w.words = calloc(nwords / 64 + 1, sizeof(*w.words));
	if (!w.acc || !w.bits || !w.words)
		goto out;
	err = visit_global(&w, fn, arg);
	for (uint32_t ctx = 1; ctx < in->nctxs && !err; ctx++)
		err = visit_context(&w, ctx, fn, arg);
out:
	free(w.acc);
	free(w.bits);
	free(w.words);
	free(w.vals);
	free(w.segs);
	return err;
}

int hpc_sort_leaves(struct hpc_leaf *l, size_t n)
{
	struct hpc_leaf *tmp = malloc((n ? n : 1) * sizeof(*tmp)), *src = l, *dst = tmp;
	uint32_t max = 0;

	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		max = l[i].ctx > max ? l[i].ctx : max;
	/* least significant digit first: stable, so each ctx stays by thread */
	for (unsigned shift = 0; shift < 32 && (max >> shift); shift += RADIX_BITS) {
		size_t pos[1u << RADIX_BITS] = { 0 }, sum = 0;
		struct hpc_leaf *swap;

		for (size_t i = 0; i < n; i++)
			pos[(src[i].ctx >> shift) & ((1u << RADIX_BITS) - 1)]++;
		for (size_t d = 0; d < (1u << RADIX_BITS); d++) {
			size_t c = pos[d];

			pos[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[pos[(src[i].ctx >> shift) & ((1u << RADIX_BITS) - 1)]++] = src[i];
		swap = src;
		src = dst;
		dst = swap;
	}
	if (src != l)
		memcpy(l, src, n * sizeof(*l));
	free(tmp);
	return 0;
}
