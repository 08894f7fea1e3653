// SPDX-License-Identifier: BSD-2-Clause
/*
 * common/foldsort.c - the orders the folding code (common/fold.c) needs,
 * part of plugins/common/, linked into the folded and flamegraph
 * plugins.  Two are multikey quicksorts (three-way partition on the key
 * at one depth, the equal part goes on at the next depth), on elements of
 * up to 64 bytes that carry their key:
 *
 *  - fold_sort_lines(): lines by their sequences of piece ranks, equal
 *    ones marked.  A folded line is its pieces "name;" joined, the last
 *    one "name\0"; each piece holds one ';' or NUL, at its end, so the
 *    first piece that differs decides the byte order of two lines (at a
 *    byte inside both pieces): lines compare like their piece ranks.
 *  - fold_sort_stacks(): stacks by their addresses from the root, so that
 *    stacks sharing callers come out next to each other.
 *  - fold_rank(): the ranks of the pieces of a set of names (they are
 *    sorted with qsort()).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/foldsort.h"

/* --- multikey quicksort ------------------------------------------------------ */

static inline uint64_t fold_median3(uint64_t a, uint64_t b, uint64_t c)
{
	if (a > b) {
		uint64_t t = a;

		a = b;
		b = t;
	}
	return c <= a ? a : c >= b ? b : c;
}

/* A part of a partition: @n elements at @a equal in their first @d keys. */
struct fold_part {
	void *a;
	size_t n;
	uint32_t d;
	int keyed;			/* their keys at @d are computed */
};

/* Swap the @size bytes at @p and @q (through @t). */
static inline __attribute__((always_inline)) void fold_swap(char *p, char *q, size_t size,
							      char *t)
{
	if (p == q)
		return;
	memcpy(t, p, size);
	memcpy(p, q, size);
	memcpy(q, t, size);
}

/*
 * Split @n elements of @size <= 64 bytes at @a, whose keys (computed)
 * @key_of reads, around the median of three: into @part[0] (less),
 * @part[1] (equal; to be sorted on from @d + 1) and @part[2] (greater).
 * Returns the pivot.  Always inlined, so that @size and @key_of are
 * constants.
 */
static inline __attribute__((always_inline)) uint64_t
fold_partition(void *a, size_t n, size_t size, uint32_t d, uint64_t (*key_of)(const void *),
	       struct fold_part part[3])
{
	char *e = a, t[64];
	uint64_t pivot = fold_median3(key_of(e), key_of(e + n / 2 * size),
				      key_of(e + (n - 1) * size));
	size_t lt = 0, i = 0, gt = n;

	while (i < gt) {
		char *x = e + i * size;
		uint64_t k = key_of(x);

		if (k < pivot) {
			fold_swap(e + lt++ * size, x, size, t);
			i++;
		} else if (k > pivot) {
			fold_swap(x, e + --gt * size, size, t);
		} else {
			i++;
		}
	}
	part[0] = (struct fold_part){ e, lt, d, 1 };
	part[1] = (struct fold_part){ e + lt * size, gt - lt, d + 1, 0 };
	part[2] = (struct fold_part){ e + gt * size, n - gt, d, 1 };
	return pivot;
}

/* The part to go on with in the loop (the largest: the others are at most half). */
static size_t fold_largest(const struct fold_part part[3])
{
	size_t big = 0;

	for (size_t i = 1; i < 3; i++)
		big = part[i].n > part[big].n ? i : big;
	return big;
}

/* --- lines ------------------------------------------------------------------- */


static inline uint32_t fold_line_key(const uint32_t *pool, const struct fold_sortent *e,
				     uint32_t d)
{
	if (d + 1 >= e->n)
		return d + 1 == e->n ? e->last : 0;
	if (d == 0)
		return e->comm;
	return d <= e->nu ? pool[e->user + d - 1] : pool[e->kernel + d - 1 - e->nu];
}

/* Lines with the same comm and user pieces agree on pieces 0 .. nu - 1. */
static inline uint32_t fold_line_skip(const struct fold_sortent *x, const struct fold_sortent *y,
				      uint32_t d)
{
	return x->user == y->user && x->nu == y->nu && x->comm == y->comm && d < x->nu ? x->nu : d;
}

/* Compare from depth @d on (the pieces before are equal). */
static int fold_line_cmp(const uint32_t *pool, const struct fold_sortent *x,
			 const struct fold_sortent *y, uint32_t d)
{
	for (d = fold_line_skip(x, y, d);; d++) {
		uint32_t a = fold_line_key(pool, x, d), b = fold_line_key(pool, y, d);

		if (a != b)
			return a < b ? -1 : 1;
		if (!a)
			return 0;
	}
}


static void fold_line_insertion(const uint32_t *pool, struct fold_sortent *a, size_t n, uint32_t d)
{
	for (size_t i = 1; i < n; i++) {
		struct fold_sortent e = a[i];
		size_t j = i;

		for (; j > 0 && fold_line_cmp(pool, &a[j - 1], &e, d) > 0; j--)
			a[j] = a[j - 1];
		a[j] = e;
	}
	for (size_t i = 1; i < n; i++)
		fold_line_dup(&a[i], !fold_line_cmp(pool, &a[i - 1], &a[i], d));
}

/* The depth from which the @n lines at @a may differ, at least @d. */
static uint32_t fold_line_skip_all(const struct fold_sortent *a, size_t n, uint32_t d)
{
	uint32_t to = fold_line_skip(&a[0], &a[n - 1], d);

	for (size_t i = 1; to != d && i < n - 1; i++) {
		if (fold_line_skip(&a[0], &a[i], d) == d)
			return d;
	}
	return to;
}

static uint64_t fold_line_key_of(const void *e)
{
	return ((const struct fold_sortent *)e)->key;
}

/*
 * Sort @n lines equal in their first @d pieces (their keys at @d
 * computed if @keyed) and mark with FOLD_DUP each line with the same
 * pieces as the one before it (the first line of @a too, if so: clear
 * it).  Multikey quicksort: three-way partition on the piece at @d, the
 * equal part goes on at the next piece.
 */
void fold_sort_lines(const uint32_t *pool, struct fold_sortent *a, size_t n, uint32_t d,
		     int keyed)
{
	while (n > 1) {
		struct fold_part part[3];
		size_t big;

		if (n <= 12) {
			fold_line_insertion(pool, a, n, d);
			return;
		}
		if (!keyed) {
			d = fold_line_skip_all(a, n, d);
			for (size_t i = 0; i < n; i++)
				a[i].key = fold_line_key(pool, &a[i], d);
		}
		if (!fold_partition(a, n, sizeof(*a), d, fold_line_key_of, part)) {
			/* all pieces equal: the same text, nothing left to sort */
			for (size_t i = 1; i < part[1].n; i++)
				fold_line_dup(&((struct fold_sortent *)part[1].a)[i], 1);
			part[1].n = 0;
		}
		big = fold_largest(part);
		for (size_t i = 0; i < 3; i++) {
			if (i != big)
				fold_sort_lines(pool, part[i].a, part[i].n, part[i].d,
						part[i].keyed);
		}
		a = part[big].a;
		n = part[big].n;
		d = part[big].d;
		keyed = part[big].keyed;
	}
}

/* --- stacks ------------------------------------------------------------------ */


/* Key @d: address @d from the root (an address 0 ends the stack early). */
static inline uint64_t fold_stack_key(const struct fold_stackent *e, uint32_t d)
{
	return d < e->nr ? e->ips[e->nr - 1 - d] : 0;
}

static uint64_t fold_stack_key_of(const void *e)
{
	return ((const struct fold_stackent *)e)->key;
}

/* Compare from key @d on (the keys before are equal). */
static int fold_stack_cmp(const struct fold_stackent *x, const struct fold_stackent *y, uint32_t d)
{
	for (;; d++) {
		uint64_t a = fold_stack_key(x, d), b = fold_stack_key(y, d);

		if (a != b)
			return a < b ? -1 : 1;
		if (!a)
			return 0;
	}
}

static void fold_stack_insertion(struct fold_stackent *a, size_t n, uint32_t d)
{
	for (size_t i = 1; i < n; i++) {
		struct fold_stackent e = a[i];
		size_t j = i;

		for (; j > 0 && fold_stack_cmp(&a[j - 1], &e, d) > 0; j--)
			a[j] = a[j - 1];
		a[j] = e;
	}
}

/*
 * Sort @n stacks equal in their first @d addresses by their addresses
 * from the root (multikey quicksort, as fold_sort_lines()).  The order
 * only has to put stacks with common callers together.
 */
void fold_sort_stacks(struct fold_stackent *a, size_t n, uint32_t d, int keyed)
{
	while (n > 1) {
		struct fold_part part[3];
		size_t big;

		if (n <= 12) {
			fold_stack_insertion(a, n, d);
			return;
		}
		if (!keyed) {
			for (size_t i = 0; i < n; i++)
				a[i].key = fold_stack_key(&a[i], d);
		}
		if (!fold_partition(a, n, sizeof(*a), d, fold_stack_key_of, part))
			part[1].n = 0;		/* all ended */
		big = fold_largest(part);
		for (size_t i = 0; i < 3; i++) {
			if (i != big)
				fold_sort_stacks(part[i].a, part[i].n, part[i].d, part[i].keyed);
		}
		a = part[big].a;
		n = part[big].n;
		d = part[big].d;
		keyed = part[big].keyed;
	}
}

/* --- piece ranks -------------------------------------------------------------- */


/* Does "@w;" come after "@y\0", i.e. does y extend w with a byte below ';'? */
static int fold_rank_waits(const struct fold_rankent *w, const struct fold_rankent *y)
{
	return w->len < y->len && !memcmp(w->s, y->s, w->len) &&
	       (unsigned char)y->s[w->len] < (unsigned char)';';
}

static int fold_rankent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fold_rankent *)a)->s, ((const struct fold_rankent *)b)->s);
}

/*
 * Give the 2 * @n pieces of the @n distinct names at @e the ranks 1 ..
 * 2n in byte order (@e is sorted by name on return).  In strcmp order of
 * the names, "y\0" comes at y's place, and "w;" after the names that
 * extend w with a byte below ';', which follow w directly: so "w;" waits
 * on a stack of such prefixes until a name that does not extend it so.
 */
int fold_rank(struct fold_rankent *e, size_t n)
{
	struct fold_rankent **wait = malloc((n ? n : 1) * sizeof(*wait));
	uint32_t rank = 1;
	size_t top = 0;

	if (!wait)
		return -ENOMEM;
	qsort(e, n, sizeof(*e), fold_rankent_cmp);
	for (size_t i = 0; i <= n; i++) {
		while (top && (i == n || !fold_rank_waits(wait[top - 1], &e[i])))
			*wait[--top]->mid = rank++;
		if (i < n) {
			*e[i].end = rank++;
			wait[top++] = &e[i];
		}
	}
	free(wait);
	return 0;
}
