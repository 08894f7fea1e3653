/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * foldtab.h - the hash index and the growable arrays of the folding code
 * (fold.h), shared by the folded and flamegraph plugins like fold.h.
 *
 * struct fold_tab maps a 32-bit hash to entry ids (uint32_t) of a dense
 * array the caller owns; the caller compares keys itself.  It is open
 * addressing with linear probing over one uint64_t per slot, (hash << 32)
 * | (id + 1), 0 when empty, kept at most half full.  Folding a large
 * profile makes tens of millions of lookups into tables of up to millions
 * of entries, where uthash's 56-byte handle and allocation per entry would
 * cost more memory and time than the entries themselves.  struct fold_map
 * (below) is the same for keys of 12 bytes, kept in the slots.
 */
#ifndef BPFPROF_FOLDTAB_H
#define BPFPROF_FOLDTAB_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct fold_tab {
	uint64_t *slots;		/* (hash << 32) | (id + 1); 0 = empty */
	size_t mask;			/* number of slots - 1 (a power of two) */
	size_t n;			/* entries */
};

/* A 64-bit finalizer (murmur3's fmix64). */
static inline uint64_t fold_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static inline uint32_t fold_hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;

		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9fb21c651e98df25ull;
		h ^= h >> 29;
	}
	for (; n; s++, n--)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (uint32_t)(fold_mix64(h) >> 32);
}

static inline uint32_t fold_hash_words(const uint32_t *w, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (size_t i = 0; i < n; i++) {
		h = (h ^ w[i]) * 0x9fb21c651e98df25ull;
		h ^= h >> 29;
	}
	return (uint32_t)(fold_mix64(h) >> 32);
}

static int fold_tab_init(struct fold_tab *t, size_t slots)
{
	size_t n = 64;

	while (n < slots)
		n *= 2;
	t->slots = calloc(n, sizeof(*t->slots));
	t->mask = n - 1;
	t->n = 0;
	return t->slots ? 0 : -ENOMEM;
}

static void fold_tab_free(struct fold_tab *t)
{
	free(t->slots);
	t->slots = NULL;
}

/* The slot where an entry with hash @h is, or goes: probe from here. */
static inline size_t fold_tab_first(const struct fold_tab *t, uint32_t h)
{
	return h & t->mask;
}

static inline size_t fold_tab_next(const struct fold_tab *t, size_t i)
{
	return (i + 1) & t->mask;
}

/* The id in a slot whose hash is @h, or UINT32_MAX (other hash). */
static inline uint32_t fold_tab_id(uint64_t slot, uint32_t h)
{
	return (uint32_t)(slot >> 32) == h ? (uint32_t)slot - 1 : UINT32_MAX;
}

static int fold_tab_grow(struct fold_tab *t)
{
	struct fold_tab bigger;

	if (fold_tab_init(&bigger, (t->mask + 1) * 2))
		return -ENOMEM;
	for (size_t i = 0; i <= t->mask; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		for (j = fold_tab_first(&bigger, t->slots[i] >> 32); bigger.slots[j];)
			j = fold_tab_next(&bigger, j);
		bigger.slots[j] = t->slots[i];
	}
	bigger.n = t->n;
	free(t->slots);
	*t = bigger;
	return 0;
}

/* Put @id with hash @h into the empty slot @i the probe ended at. */
static int fold_tab_put(struct fold_tab *t, size_t i, uint32_t h, uint32_t id)
{
	t->slots[i] = (uint64_t)h << 32 | ((uint64_t)id + 1);
	if (++t->n * 2 > t->mask + 1)
		return fold_tab_grow(t);
	return 0;
}

/*
 * struct fold_map holds small keys with their values in the slots
 * themselves, so that a lookup costs one cache miss: key (a, b), value v,
 * 16 bytes a slot, v == UINT32_MAX for an empty slot.
 */
struct fold_slot {
	uint64_t a;
	uint32_t b;
	uint32_t v;
};

struct fold_map {
	struct fold_slot *slots;
	size_t mask;			/* number of slots - 1 (a power of two) */
	size_t n;			/* entries */
};

static inline uint64_t fold_map_hash(uint64_t a, uint32_t b)
{
	return fold_mix64(a + (b + 1) * 0x9e3779b97f4a7c15ull);
}

static int fold_map_init(struct fold_map *m, size_t slots)
{
	size_t n = 64;

	while (n < slots)
		n *= 2;
	m->slots = malloc(n * sizeof(*m->slots));
	if (!m->slots)
		return -ENOMEM;
	memset(m->slots, 0xff, n * sizeof(*m->slots));
	m->mask = n - 1;
	m->n = 0;
	return 0;
}

static void fold_map_free(struct fold_map *m)
{
	free(m->slots);
	m->slots = NULL;
}

static inline void fold_map_prefetch(const struct fold_map *m, uint64_t h)
{
	__builtin_prefetch(&m->slots[h & m->mask]);
}

/* The slot of key (@a, @b) of hash @h: holding it, or empty (v == UINT32_MAX). */
static inline struct fold_slot *fold_map_find(const struct fold_map *m, uint64_t h, uint64_t a,
					      uint32_t b)
{
	for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
		struct fold_slot *s = &m->slots[i];

		if (s->v == UINT32_MAX || (s->a == a && s->b == b))
			return s;
	}
}

/* After filling the empty slot fold_map_find() returned: count it, grow if half full. */
static int fold_map_added(struct fold_map *m)
{
	struct fold_map bigger;

	if (++m->n * 2 <= m->mask + 1)
		return 0;
	if (fold_map_init(&bigger, (m->mask + 1) * 2))
		return -ENOMEM;
	for (size_t i = 0; i <= m->mask; i++) {
		const struct fold_slot *s = &m->slots[i];

		if (s->v != UINT32_MAX)
			*fold_map_find(&bigger, fold_map_hash(s->a, s->b), s->a, s->b) = *s;
	}
	bigger.n = m->n;
	free(m->slots);
	*m = bigger;
	return 0;
}

/*
 * @array (of *@cap elements of @size bytes, the first @n used) with room for
 * @more after them: the same or a reallocated array, or NULL (@array is
 * then unchanged and still valid).
 */
static void *fold_grow(void *array, size_t *cap, size_t n, size_t more, size_t size)
{
	size_t want = *cap ? *cap : 64;
	void *q;

	if (array && more <= *cap - n)
		return array;
	if (more > SIZE_MAX / size - n)
		return NULL;
	while (want < n + more)
		want = want > SIZE_MAX / size / 2 ? n + more : want * 2;
	q = realloc(array, want * size);
	if (q)
		*cap = want;
	return q;
}

#endif /* BPFPROF_FOLDTAB_H */
