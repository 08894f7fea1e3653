/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/foldsort.h - the elements the folding code sorts and the three
 * sorts of common/foldsort.c (lines by text, stacks by address, name
 * pieces by rank); part of plugins/common/.
 */
#ifndef BPFPROF_COMMON_FOLDSORT_H
#define BPFPROF_COMMON_FOLDSORT_H

#include <stddef.h>
#include <stdint.h>

/* A line: where its pieces are (as ranks, root first, in a pool of them). */
struct fold_sortent {
	uint32_t user, kernel;		/* offsets in the pool: equal for equal pieces */
	uint32_t nu, n;			/* user pieces; all pieces (1 + user + kernel) */
	uint32_t comm, last;		/* mid rank of the comm; end rank of the last piece */
	uint32_t key;			/* rank at the depth being sorted; 0: past the end */
	uint32_t line;			/* the caller's id, | FOLD_DUP when sorted (below) */
};

/* In fold_sortent.line: the same pieces as the line before it. */
#define FOLD_DUP (1u << 31)

_Static_assert(sizeof(struct fold_sortent) <= 64, "fold_partition() swaps up to 64 bytes");

static inline void fold_line_dup(struct fold_sortent *e, int dup)
{
	e->line = (e->line & ~FOLD_DUP) | (dup ? FOLD_DUP : 0);
}

/* A stack to sort: its addresses, leaf first. */
struct fold_stackent {
	const uint64_t *ips;
	uint32_t nr;
	uint32_t id;			/* the caller's */
	uint64_t key;			/* the key at the depth being sorted, 0 past the end */
};

_Static_assert(sizeof(struct fold_stackent) <= 64, "fold_partition() swaps up to 64 bytes");

/* A name to rank (no ';' or NUL in it), and where its two ranks go. */
struct fold_rankent {
	const char *s;			/* NUL-terminated */
	uint32_t len;
	uint32_t *mid, *end;		/* ranks of "s;" and "s\0" */
};

/*
 * Sort @n lines equal in their first @d pieces (their keys at @d
 * computed if @keyed) by the ranks in @pool and mark with FOLD_DUP each
 * line with the same pieces as the one before it.
 */
void fold_sort_lines(const uint32_t *pool, struct fold_sortent *a, size_t n, uint32_t d,
		     int keyed);

/* Sort @n stacks equal in their first @d addresses by their addresses from the root. */
void fold_sort_stacks(struct fold_stackent *a, size_t n, uint32_t d, int keyed);

/*
 * Give the 2 * @n pieces of the @n distinct names at @e the ranks 1 ..
 * 2n in byte order (@e is sorted by name on return); 0 or -ENOMEM.
 */
int fold_rank(struct fold_rankent *e, size_t n);

#endif /* BPFPROF_COMMON_FOLDSORT_H */
