/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_idmap.h - an open-addressing hash table from a key pair (64 and
 * 32 bits) to a nonzero 32-bit value, owned by the pprof plugin.  It holds
 * the plugin's large lookups (millions of locations): 16 bytes a slot, no
 * allocation per entry, linear probing, at most 3/4 full.  Entries are
 * never removed one by one; pprof_idmap_free() drops them all.
 */
#ifndef BPFPROF_PPROF_IDMAP_H
#define BPFPROF_PPROF_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct pprof_idmap_slot {
	uint64_t a;			/* the key */
	uint32_t b;
	uint32_t value;			/* 0: empty slot */
};

struct pprof_idmap {
	struct pprof_idmap_slot *slots;
	size_t mask;			/* slots - 1 (a power of two minus one) */
	size_t nr;			/* entries */
	unsigned shift;			/* 64 - log2(slots) */
};

/* The home slot of (a, b): Fibonacci hashing of a mix of both keys. */
static inline size_t pprof_idmap_home(const struct pprof_idmap *m, uint64_t a, uint32_t b)
{
	return (size_t)(((a ^ (b * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull) >> m->shift);
}

/* The value of (a, b), 0 if absent. */
static inline uint32_t pprof_idmap_find(const struct pprof_idmap *m, uint64_t a, uint32_t b)
{
	if (!m->slots)
		return 0;
	for (size_t i = pprof_idmap_home(m, a, b);; i = (i + 1) & m->mask) {
		const struct pprof_idmap_slot *s = &m->slots[i];

		if (!s->value || (s->a == a && s->b == b))
			return s->value;
	}
}

/* Add (a, b) -> @value (nonzero; the key must be absent); 0 or -ENOMEM. */
int pprof_idmap_add(struct pprof_idmap *m, uint64_t a, uint32_t b, uint32_t value);

void pprof_idmap_free(struct pprof_idmap *m);

#endif /* BPFPROF_PPROF_IDMAP_H */
