// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_values.c - unit tests of the hpctoolkit plugin's context tree and
 * per-thread values (plugins/hpctoolkit/{map,cct,values,profile_db,
 * cct_db}.c): the integer hash map, line contexts kept short or as
 * (file, line), post-order ctxIds and shapes, the context-by-context values
 * walk against a brute-force computation (every count walked up to the
 * root, as the plugin did before), and profile.db and cct.db streamed from
 * that walk against reference writers that hold all values at once: byte
 * for byte, on a random multi-thread profile with empty threads and on one
 * with so many threads that profile.db takes two walks.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "hpctoolkit/hpc.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)		/* 0 .. n - 1, splitmix64 */
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) % n);
}

static void test_map(void **st)
{
	struct hashtab m = { 0 };	/* an empty table (common/hashtab.h) */

	assert_int_equal(hashtab_get(&m, 1, 2), HPC_NONE);
	for (uint32_t i = 0; i < 10000; i++)
		assert_int_equal(hashtab_put(&m, i * 7919ull, i & 3, i), 0);
	assert_int_equal(m.n, 10000);
	assert_true(2 * m.n <= m.mask + 1);	/* at most half full */
	for (uint32_t i = 0; i < 10000; i++)
		assert_int_equal(hashtab_get(&m, i * 7919ull, i & 3), i);
	assert_int_equal(hashtab_get(&m, 7919, 0), HPC_NONE);	/* b is part of the key */
	assert_int_equal(hashtab_put(&m, 7919, 1, 42), 0);	/* replace */
	assert_int_equal(hashtab_get(&m, 7919, 1), 42);
	assert_int_equal(m.n, 10000);
	hashtab_free(&m);
	assert_int_equal(hashtab_get(&m, 0, 0), HPC_NONE);
}

/* ---- a tree, numbered, with each context's parent ----------------------- */

struct numbered {
	struct hpc_cct t;
	uint32_t nctxs;			/* ctxIds 0 .. nctxs - 1 */
	uint32_t *shape;		/* [ctx] */
	uint32_t *parent_node;		/* [node], HPC_NONE for entry points */
	uint32_t *up;			/* [ctx]: parent ctxId, 0 for entry points */
	uint32_t *order;		/* [k]: node finished k-th */
	uint32_t nr_finished;
};

static int record_parent(void *arg, const struct hpc_node *n, const struct hpc_node *parent,
			 uint32_t depth)
{
	struct numbered *nb = arg;
	uint32_t node = (uint32_t)(n - nb->t.nodes);

	assert_int_equal(parent == NULL, depth == 0);
	nb->parent_node[node] = parent ? (uint32_t)(parent - nb->t.nodes) : HPC_NONE;
	assert_int_equal(n->ctx, nb->nr_finished + 1);	/* post order, dense */
	nb->order[nb->nr_finished++] = node;
	return 0;
}

static void number(struct numbered *nb)
{
	uint32_t n = nb->t.nr_nodes;

	nb->nctxs = n + 1;
	nb->shape = calloc(n + 1, sizeof(*nb->shape));
	nb->parent_node = calloc(n + 1, sizeof(*nb->parent_node));
	nb->up = calloc(n + 1, sizeof(*nb->up));
	nb->order = calloc(n + 1, sizeof(*nb->order));
	assert_true(nb->shape && nb->parent_node && nb->up && nb->order);
	assert_int_equal(hpc_cct_number(&nb->t, nb->shape, record_parent, nb), 0);
	assert_int_equal(nb->nr_finished, n);
	for (uint32_t x = 0; x < n; x++) {
		uint32_t p = nb->parent_node[x];

		nb->up[nb->t.nodes[x].ctx] = p == HPC_NONE ? 0 : nb->t.nodes[p].ctx;
		/* a context comes right after its subtree: after its children */
		if (p != HPC_NONE)
			assert_true(nb->t.nodes[p].ctx > nb->t.nodes[x].ctx);
	}
}

static void free_numbered(struct numbered *nb)
{
	hpc_cct_free(&nb->t);
	free(nb->shape);
	free(nb->parent_node);
	free(nb->up);
	free(nb->order);
}

/* One random frame below @node: a function with a line or an instruction,
 * or an unsymbolized instruction; small alphabets, so paths are shared. */
static uint32_t random_frame(struct hpc_cct *t, uint32_t node)
{
	static const char *const names[] = { "main", "f", "g", "h", "k" };
	int32_t mod = hpc_cct_module(t, rnd(4) ? "/bin/x" : "/lib/y.so"), fn, file;
	uint32_t r = rnd(10);

	if (r == 0)
		return hpc_cct_child(t, node, HPC_INSN, HPC_REL_CALL, mod, 0, 0x100 + rnd(3));
	file = hpc_cct_file(t, rnd(3) ? "x.c" : "y.h");
	fn = hpc_cct_func(t, names[rnd(5)], mod, 0x40, rnd(2) ? file : -1, 10);
	node = hpc_cct_child(t, node, HPC_FUNC, HPC_REL_CALL, fn, 0, 0);
	if (r == 1)
		return hpc_cct_child(t, node, HPC_INSN, HPC_REL_LEXICAL, mod, 0, 0x200 + rnd(3));
	return hpc_cct_child(t, node, HPC_LINE, HPC_REL_LEXICAL, file, 10 + rnd(4), 0);
}

/* @nleaves random paths below both entry points; their ends in @leaf. */
static void random_tree(struct numbered *nb, uint32_t nleaves, uint32_t *leaf)
{
	memset(nb, 0, sizeof(*nb));
	hpc_cct_init(&nb->t);
	for (uint32_t i = 0; i < nleaves; i++) {
		uint32_t node = hpc_cct_entry(&nb->t, rnd(3) ? HPC_EP_THREAD : HPC_EP_MAIN);

		for (uint32_t d = rnd(7); d > 0; d--)
			node = random_frame(&nb->t, node);
		assert_int_not_equal(node, HPC_NONE);
		leaf[i] = node;
	}
}

static void test_line_contexts(void **st)
{
	struct hpc_cct t;
	uint32_t e, f, same, other, same2, many[100];
	int32_t m, fn, x, y, file;
	uint32_t line;

	hpc_cct_init(&t);
	e = hpc_cct_entry(&t, HPC_EP_MAIN);
	m = hpc_cct_module(&t, "/bin/x");
	x = hpc_cct_file(&t, "x.c");
	y = hpc_cct_file(&t, "y.h");
	fn = hpc_cct_func(&t, "main", m, 0x40, x, 3);
	f = hpc_cct_child(&t, e, HPC_FUNC, HPC_REL_CALL, fn, 0, 0);
	/* in main's own file: just the line; else an interned (file, line) */
	same = hpc_cct_child(&t, f, HPC_LINE, HPC_REL_LEXICAL, x, 7, 0);
	other = hpc_cct_child(&t, f, HPC_LINE, HPC_REL_LEXICAL, y, 7, 0);
	same2 = hpc_cct_child(&t, f, HPC_LINE, HPC_REL_LEXICAL, x, 8, 0);
	assert_int_not_equal(same, other);
	assert_int_not_equal(same, same2);
	assert_int_equal(hpc_cct_child(&t, f, HPC_LINE, HPC_REL_LEXICAL, x, 7, 0), same);
	assert_int_equal(hpc_cct_child(&t, f, HPC_LINE, HPC_REL_LEXICAL, y, 7, 0), other);
	assert_int_equal(t.nodes[same].srcloc, 0);
	assert_int_equal(t.nodes[other].srcloc, 1);
	assert_int_equal(t.nr_srclocs, 1);
	hpc_node_line(&t, &t.nodes[f], &t.nodes[same], &file, &line);
	assert_int_equal(file, x);
	assert_int_equal(line, 7);
	hpc_node_line(&t, &t.nodes[f], &t.nodes[other], &file, &line);
	assert_int_equal(file, y);
	assert_int_equal(line, 7);
	/* a parent with many children is searched through the index */
	for (uint32_t i = 0; i < 100; i++) {
		many[i] = hpc_cct_child(&t, f, HPC_LINE, HPC_REL_LEXICAL, x, 100 + i, 0);
		assert_int_equal(many[i], t.nr_nodes - 1);	/* new */
	}
	assert_true(t.nodes[f].indexed);
	assert_false(t.nodes[e].indexed);
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(hpc_cct_child(&t, f, HPC_LINE, HPC_REL_LEXICAL, x, 100 + i, 0),
				 many[i]);
	assert_int_equal(hpc_cct_child(&t, f, HPC_LINE, HPC_REL_LEXICAL, x, 7, 0), same);
	assert_int_equal(hpc_cct_child(&t, f, HPC_LINE, HPC_REL_LEXICAL, y, 7, 0), other);
	assert_int_equal(t.nr_nodes, 105);
	hpc_cct_free(&t);
}

static void test_numbering_shape(void **st)
{
	struct numbered nb;
	uint32_t leaf[200];

	random_tree(&nb, 200, leaf);
	number(&nb);
	for (uint32_t c = 1; c < nb.nctxs; c++) {
		const struct hpc_node *n = &nb.t.nodes[nb.order[c - 1]];
		uint32_t kids = 0;

		for (uint32_t k = 1; k < nb.nctxs; k++)
			kids += nb.up[k] == c && nb.t.nodes[nb.order[k - 1]].kind != HPC_ENTRY;
		assert_int_equal(nb.shape[c] >> 1, kids);
		assert_int_equal(nb.shape[c] & HPC_SHAPE_LEXICAL,
				 n->relation == HPC_REL_LEXICAL && n->kind != HPC_ENTRY);
	}
	free_numbered(&nb);
}

/* ---- brute force: every count walked up to its entry point -------------- */

struct profile {
	struct numbered nb;
	uint32_t nthreads;
	struct hpc_leaf *leaves;	/* as counts: sorted by thread */
	size_t nr_leaves;
	uint64_t *totals;
	struct hpc_values in;
	struct hpc_value **ref;		/* [thread][ctx] */
};

static void brute_force(struct profile *pr)
{
	uint32_t n = pr->nb.nctxs;

	pr->ref = calloc(pr->nthreads, sizeof(*pr->ref));
	assert_non_null(pr->ref);
	for (uint32_t t = 0; t < pr->nthreads; t++) {
		pr->ref[t] = calloc(n, sizeof(**pr->ref));
		assert_non_null(pr->ref[t]);
	}
	for (size_t i = 0; i < pr->nr_leaves; i++) {
		struct hpc_value *v = pr->ref[pr->leaves[i].thread];
		uint64_t s = pr->leaves[i].samples;
		int fn = 1;

		v[pr->leaves[i].ctx].point += s;
		v[0].execution += s;
		for (uint32_t y = pr->leaves[i].ctx; y; y = pr->nb.up[y]) {
			v[y].execution += s;
			if (fn)
				v[y].function += s;
			fn = fn && (pr->nb.shape[y] & HPC_SHAPE_LEXICAL);
		}
	}
}

/* @nthreads threads, the first @nactive with about @per counts each. */
static void random_profile(struct profile *pr, uint32_t nthreads, uint32_t nactive,
			   uint32_t per, uint32_t nleaves)
{
	uint32_t *leaf = calloc(nleaves, sizeof(*leaf));

	assert_non_null(leaf);
	memset(pr, 0, sizeof(*pr));
	random_tree(&pr->nb, nleaves, leaf);
	number(&pr->nb);
	pr->nthreads = nthreads;
	pr->leaves = calloc((size_t)nactive * per + 1, sizeof(*pr->leaves));
	pr->totals = calloc(nthreads, sizeof(*pr->totals));
	assert_true(pr->leaves && pr->totals);
	for (uint32_t t = 0; t < nactive; t++) {
		for (uint32_t k = rnd(per + 1); k > 0; k--) {
			struct hpc_leaf *l = &pr->leaves[pr->nr_leaves++];

			l->thread = t;
			l->ctx = pr->nb.t.nodes[leaf[rnd(nleaves)]].ctx;
			l->samples = 1 + rnd(rnd(4) ? 3 : 1000);
			pr->totals[t] += l->samples;
		}
	}
	free(leaf);
	brute_force(pr);
	assert_int_equal(hpc_sort_leaves(pr->leaves, pr->nr_leaves), 0);
	pr->in = (struct hpc_values){ .shape = pr->nb.shape, .nctxs = pr->nb.nctxs,
				      .leaves = pr->leaves, .nr_leaves = pr->nr_leaves,
				      .totals = pr->totals, .nthreads = nthreads };
}

static void free_profile(struct profile *pr)
{
	for (uint32_t t = 0; t < pr->nthreads; t++)
		free(pr->ref[t]);
	free(pr->ref);
	free(pr->leaves);
	free(pr->totals);
	free_numbered(&pr->nb);
}

struct check {
	struct profile *pr;
	uint32_t next_ctx;
	uint64_t nvalues;
};

static int check_context(void *arg, uint32_t ctx, const struct hpc_value *v, size_t n)
{
	struct check *ck = arg;
	uint32_t k = 0;

	assert_int_equal(ctx, ck->next_ctx++);
	for (uint32_t t = 0; t < ck->pr->nthreads; t++) {
		const struct hpc_value *r = &ck->pr->ref[t][ctx];

		if (!r->execution)
			continue;
		assert_true(k < n);
		assert_int_equal(v[k].ctx, ctx);
		assert_int_equal(v[k].thread, t);
		assert_int_equal(v[k].point, r->point);
		assert_int_equal(v[k].function, r->function);
		assert_int_equal(v[k].execution, r->execution);
		k++;
	}
	assert_int_equal(k, n);
	ck->nvalues += n;
	return 0;
}

static void test_values_walk(void **st)
{
	struct profile pr;
	struct check ck = { &pr, 0, 0 };

	random_profile(&pr, 9, 7, 40, 300);
	ck.pr = &pr;
	assert_int_equal(hpc_values_walk(&pr.in, check_context, &ck), 0);
	assert_int_equal(ck.next_ctx, pr.nb.nctxs);
	assert_true(ck.nvalues > 100);
	free_profile(&pr);
}

static void test_sort_leaves(void **st)
{
	struct hpc_leaf l[3000];

	for (uint32_t i = 0; i < 3000; i++)
		l[i] = (struct hpc_leaf){ rnd(i < 1500 ? 5000000 : 7), i, 1 };
	assert_int_equal(hpc_sort_leaves(l, 3000), 0);
	for (uint32_t i = 1; i < 3000; i++) {
		assert_true(l[i - 1].ctx <= l[i].ctx);
		if (l[i - 1].ctx == l[i].ctx)	/* stable */
			assert_true(l[i - 1].thread < l[i].thread);
	}
}

/* ---- reference writers: all values at once, as before streaming --------- */

/* Thread values sorted by (thread, ctx), from the brute force. */
static struct hpc_value *all_values(const struct profile *pr, size_t *nvals)
{
	size_t n = 0, cap = 1024;
	struct hpc_value *v = malloc(cap * sizeof(*v));

	for (uint32_t t = 0; t < pr->nthreads; t++)
		for (uint32_t c = 0; c < pr->nb.nctxs; c++) {
			struct hpc_value r = pr->ref[t][c];

			if (!r.execution)
				continue;
			if (n == cap)
				v = realloc(v, (cap *= 2) * sizeof(*v));
			assert_non_null(v);
			r.ctx = c;
			r.thread = t;
			v[n++] = r;
		}
	*nvals = n;
	return v;
}

static void ref_block(struct bw *w, const struct hpc_value *v, size_t n, double scale,
		      uint8_t hdr[32])
{
	uint64_t pvalues = w->off, nvalues = 0, pidx;
	uint32_t nctxs = 0;

	for (size_t i = 0; i < n; i++) {
		int any = 0;

		for (int m = 0; m < HPC_NR_SCOPES; m++) {
			uint64_t c = hpc_value_of(&v[i], m);

			if (!c)
				continue;
			bw_u16(w, m);
			bw_f64(w, (double)c * scale);
			nvalues++;
			any = 1;
		}
		nctxs += any;
	}
	bw_align(w, 4);
	pidx = w->off;
	nvalues = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = 0;

		for (int m = 0; m < HPC_NR_SCOPES; m++)
			k += hpc_value_of(&v[i], m) != 0;
		if (!k)
			continue;
		bw_u32(w, v[i].ctx);
		bw_u64(w, nvalues);
		nvalues += k;
	}
	memset(hdr, 0, 32);
	put_u64(hdr, nvalues);
	put_u64(hdr + 8, pvalues);
	put_u32(hdr + 0x10, nctxs);
	put_u64(hdr + 0x18, pidx);
}

static int pointer_set(const uint8_t *pi)
{
	for (int i = 8; i < 16; i++)
		if (pi[i])
			return 1;
	return 0;
}

/* profile.db as bpfprof wrote it before it streamed the thread blocks. */
static void ref_profile_db(const struct profile *pr, const struct hpc_thread_id *ids,
			   double scale, struct bw *w)
{
	uint64_t nprof = (uint64_t)pr->nthreads + 1, ptuples, sec[4];
	uint8_t *infos = calloc(nprof, 0x30);
	struct hpc_value *sum = calloc(pr->nb.nctxs, sizeof(*sum));
	size_t nvals, i, j, nsum = 0;
	struct hpc_value *vals = all_values(pr, &nvals);
	struct bw h;

	bw_init_mem(w);
	bw_zero(w, 0x30);
	bw_u64(w, 0x40);
	bw_u32(w, nprof);
	bw_u8(w, 0x30);
	bw_align(w, 8);
	bw_zero(w, nprof * 0x30);
	sec[0] = 0x10 + nprof * 0x30;
	sec[1] = 0x30;
	ptuples = w->off;
	for (uint32_t t = 0; t < pr->nthreads; t++) {
		put_u64(infos + (t + 1) * 0x30 + 0x20, w->off);
		write_identifier_tuple(w, &ids[t]);
	}
	sec[2] = w->off - ptuples;
	sec[3] = ptuples;
	bw_align(w, 4);
	for (i = 0; i < pr->nb.nctxs; i++)
		sum[i].ctx = i;
	for (i = 0; i < nvals; i = j) {
		uint32_t t = vals[i].thread;

		for (j = i; j < nvals && vals[j].thread == t; j++) {
			sum[vals[j].ctx].point += vals[j].point;
			sum[vals[j].ctx].function += vals[j].function;
			sum[vals[j].ctx].execution += vals[j].execution;
		}
		ref_block(w, vals + i, j - i, scale, infos + (t + 1) * 0x30);
	}
	for (uint32_t t = 0; t < pr->nthreads; t++) {
		uint8_t *pi = infos + (t + 1) * 0x30;

		if (!pointer_set(pi)) {
			put_u64(pi + 8, w->off);
			put_u64(pi + 0x18, w->off);
		}
	}
	for (i = 0; i < pr->nb.nctxs; i++)
		if (sum[i].point || sum[i].function || sum[i].execution)
			sum[nsum++] = sum[i];
	ref_block(w, sum, nsum, scale, infos);
	put_u32(infos + 0x28, 1);
	bw_bytes(w, "_prof.db", 8);
	bw_patch(w, 0x40, infos, nprof * 0x30);
	bw_init_mem(&h);
	write_file_header(&h, "prof", 0, sec, 2);
	bw_patch(w, 0, h.buf, h.len);
	bw_free(&h);
	free(infos);
	free(sum);
	free(vals);
}

/* cct.db as bpfprof wrote it before: all values sorted by context. */
static void ref_cct_db(const struct profile *pr, double scale, struct bw *w)
{
	uint32_t nctxs = pr->nb.nctxs;
	uint8_t *infos = calloc(nctxs, 0x20);
	uint64_t sec[2] = { 0x10 + (uint64_t)nctxs * 0x20, 0x30 };
	struct hpc_value *v = malloc(pr->nthreads * sizeof(*v));
	struct bw h;

	bw_init_mem(w);
	bw_zero(w, 0x30);
	bw_u64(w, 0x40);
	bw_u32(w, nctxs);
	bw_u8(w, 0x20);
	bw_align(w, 8);
	bw_zero(w, (uint64_t)nctxs * 0x20);
	for (uint32_t c = 0; c < nctxs; c++) {
		size_t n = 0;

		for (uint32_t t = 0; t < pr->nthreads; t++)
			if (pr->ref[t][c].execution) {
				v[n] = pr->ref[t][c];
				v[n].ctx = c;
				v[n++].thread = t;
			}
		write_context_major_sparse_value_block(w, v, n, scale, infos + (size_t)c * 0x20);
	}
	bw_align(w, 4);
	bw_bytes(w, "__ctx.db", 8);
	bw_patch(w, 0x40, infos, (size_t)nctxs * 0x20);
	bw_init_mem(&h);
	write_file_header(&h, "ctxt", 0, sec, 1);
	bw_patch(w, 0, h.buf, h.len);
	bw_free(&h);
	free(infos);
	free(v);
}

static char tmpdir[] = "/tmp/bpfprof-hpcv-XXXXXX";

static int make_tmpdir(void **st)
{
	memcpy(tmpdir + sizeof(tmpdir) - 7, "XXXXXX", 6);
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* Also after a failed assertion (cmocka then skips the test's own end). */
static int remove_tmpdir(void **st)
{
	char path[sizeof(tmpdir) + 32];

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, i ? "cct.db" : "profile.db");
		unlink(path);
	}
	return rmdir(tmpdir);
}

/* The file @name of tmpdir equals the bytes of @w. */
static void expect_file(const char *name, const struct bw *w)
{
	char path[sizeof(tmpdir) + 32];
	uint8_t *got = malloc(w->len + 1);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0 && got);
	assert_int_equal(pread(fd, got, w->len + 1, 0), w->len);
	for (size_t i = 0; i < w->len; i++)
		if (got[i] != w->buf[i])
			fail_msg("%s: byte 0x%zx is 0x%02x, expected 0x%02x", name, i, got[i],
				 w->buf[i]);
	close(fd);
	free(got);
}

static void compare_databases(uint32_t nthreads, uint32_t nactive, uint32_t per,
			      uint32_t nleaves)
{
	struct hpc_thread_id *ids = calloc(nthreads, sizeof(*ids));
	const double scale = 0.0101;	/* not a power of two: rounding shows */
	struct profile pr;
	struct bw ref;
	int dir;

	dir = open(tmpdir, O_RDONLY | O_DIRECTORY);
	assert_true(dir >= 0 && ids);
	random_profile(&pr, nthreads, nactive, per, nleaves);
	for (uint32_t t = 0; t < nthreads; t++)
		ids[t] = (struct hpc_thread_id){ .node = t / 6, .host_id = 0xabcd + t / 6,
						 .rank = t / 3, .thread = t % 3, .pid = 100 + t / 3,
						 .tid = 100 + t, .comm = "x" };
	assert_int_equal(write_profile_db(dir, &pr.in, ids, scale), 0);
	ref_profile_db(&pr, ids, scale, &ref);
	expect_file("profile.db", &ref);
	bw_free(&ref);
	assert_int_equal(write_cct_db(dir, &pr.in, scale), 0);
	ref_cct_db(&pr, scale, &ref);
	expect_file("cct.db", &ref);
	bw_free(&ref);
	close(dir);
	free_profile(&pr);
	free(ids);
}

static void test_databases_as_before(void **st)
{
	/* 12 threads, 3 of them without samples, a few hundred contexts */
	compare_databases(12, 9, 60, 400);
}

static void test_databases_many_threads(void **st)
{
	/* more threads than one walk keeps buffers for (64 MiB / 8 KiB) */
	compare_databases(8300, 8250, 2, 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_line_contexts),
		cmocka_unit_test(test_numbering_shape),
		cmocka_unit_test(test_values_walk),
		cmocka_unit_test(test_sort_leaves),
		cmocka_unit_test_setup_teardown(test_databases_as_before, make_tmpdir,
						remove_tmpdir),
		cmocka_unit_test_setup_teardown(test_databases_many_threads, make_tmpdir,
						remove_tmpdir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
