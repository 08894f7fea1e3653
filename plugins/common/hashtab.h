/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/hashtab.h - the plugins' one hash table (part of plugins/common/,
 * the internal library linked into every plugin): integer keys (a, b) of
 * 64 and 32 bits to a 32-bit value, open addressing with linear probing
 * in one flat array of 16-byte slots (four to a cache line), at most half
 * full (3/4 for a table marked dense), no allocation per entry.  Entries
 * are never removed one by one.
 *
 * Why not uthash (docs/CONVENTIONS.md): the writers' hot paths make tens
 * of millions of lookups into tables of up to millions of entries
 * (folding, pprof locations, HPCToolkit contexts).  uthash allocates
 * every entry and adds a 56-byte handle to it, more than the entry
 * itself, and a lookup follows a bucket pointer to the entry: two cache
 * misses where a flat slot costs one, and one that the caller can
 * prefetch (hashtab_prefetch()) a batch of lookups ahead.
 *
 * Wider keys (strings, sequences, triples) go in as (hash, n): the
 * caller keeps the keys in its own array, stores their index as the
 * value and compares them itself, trying n = 0, 1, ... past entries
 * whose hash is the same but whose key is not (see common/fold.c).
 *
 * Two ways to use it:
 *  - hashtab_get() / hashtab_put(): a zeroed struct hashtab is an empty
 *    table;
 *  - hashtab_find() with a hash from hashtab_hash(), then, if it returned
 *    an empty slot, fill it and call hashtab_added(): one probe for a
 *    lookup that inserts; the table must have been given its slots with
 *    hashtab_init().
 */
#ifndef BPFPROF_COMMON_HASHTAB_H
#define BPFPROF_COMMON_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

/* The value of an empty slot; not a value the table can hold. */
#define HASHTAB_NONE UINT32_MAX

struct hashtab_slot {
	uint64_t a;			/* the key: a, b */
	uint32_t b;
	uint32_t v;			/* HASHTAB_NONE: an empty slot */
};

struct hashtab {
	struct hashtab_slot *slots;
	size_t mask;			/* number of slots - 1 (a power of two - 1) */
	size_t n;			/* entries */
	int dense;			/* grow at 3/4 full, not 1/2: less memory,
					 * longer probes; set before the first entry */
};

/* A 64-bit finalizer (murmur3's fmix64): every bit of @h moves every bit. */
static inline uint64_t hashtab_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* The hash of key (@a, @b). */
static inline uint64_t hashtab_hash(uint64_t a, uint32_t b)
{
	return hashtab_mix64(a + (b + 1) * 0x9e3779b97f4a7c15ull);
}

/*
 * Give @t its slots, room for @entries before it grows (at least 32).
 * Returns 0 or -ENOMEM.
 */
int hashtab_init(struct hashtab *t, size_t entries);

/* Free the slots; @t is an empty table again. */
void hashtab_free(struct hashtab *t);

/* Start loading the slot where a lookup of hash @h begins (if @t has slots). */
static inline void hashtab_prefetch(const struct hashtab *t, uint64_t h)
{
	if (t->slots)
		__builtin_prefetch(&t->slots[h & t->mask]);
}

/*
 * The slot of key (@a, @b) of hash @h (hashtab_hash()): the one holding
 * it, or the empty one (v == HASHTAB_NONE) where it goes.  @t must have
 * slots.  To add the key there, set the slot's a, b and v, then call
 * hashtab_added() before any other change of the table.
 */
static inline struct hashtab_slot *hashtab_find(const struct hashtab *t, uint64_t h, uint64_t a,
						uint32_t b)
{
	for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
		struct hashtab_slot *s = &t->slots[i];

		if (s->v == HASHTAB_NONE || (s->a == a && s->b == b))
			return s;
	}
}

/*
 * After an empty slot from hashtab_find() was filled: count the entry and
 * grow the table once it is full (slot pointers are then stale).
 * Returns 0 or -ENOMEM (the entry is in; the table did not grow).
 */
int hashtab_added(struct hashtab *t);

/* The value of key (@a, @b), HASHTAB_NONE if it is not in @t. */
static inline uint32_t hashtab_get(const struct hashtab *t, uint64_t a, uint32_t b)
{
	if (!t->slots)
		return HASHTAB_NONE;
	return hashtab_find(t, hashtab_hash(a, b), a, b)->v;
}

/*
 * Store @v (not HASHTAB_NONE) as the value of key (@a, @b), replacing the
 * one it had.  Returns 0, -EINVAL for @v == HASHTAB_NONE, or -ENOMEM (@t
 * unchanged).
 */
int hashtab_put(struct hashtab *t, uint64_t a, uint32_t b, uint32_t v);

#endif /* BPFPROF_COMMON_HASHTAB_H */
