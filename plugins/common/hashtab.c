// SPDX-License-Identifier: BSD-2-Clause
/*
 * common/hashtab.c - the memory and the growth of the plugins' hash table
 * (common/hashtab.h); lookups are inline in the header.
 *
 * Slot arrays of HASHTAB_MAP_BYTES or more come straight from mmap (and
 * go back to the kernel when freed, rather than staying in malloc's heap
 * once its mmap threshold has grown), prefaulted with MAP_POPULATE: the
 * fill with empty slots that follows then takes no page fault per page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/hashtab.h"

#define HASHTAB_MIN_SLOTS 64u
#define HASHTAB_MAP_BYTES (256u * 1024)

/* @nr slots, all empty; NULL on ENOMEM. */
static struct hashtab_slot *alloc_slots(size_t nr)
{
	size_t bytes = nr * sizeof(struct hashtab_slot);
	void *p;

	if (nr > SIZE_MAX / sizeof(struct hashtab_slot))
		return NULL;
	if (bytes >= HASHTAB_MAP_BYTES) {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
	} else if (!(p = malloc(bytes))) {
		return NULL;
	}
	memset(p, 0xff, bytes);		/* every v = HASHTAB_NONE */
	return p;
}

static void free_slots(struct hashtab_slot *slots, size_t nr)
{
	size_t bytes = nr * sizeof(*slots);

	if (!slots)
		return;
	if (bytes >= HASHTAB_MAP_BYTES)
		munmap(slots, bytes);
	else
		free(slots);
}

/* Make @t an empty table of @nr slots (a power of two); 0 or -ENOMEM. */
static int make_slots(struct hashtab *t, size_t nr)
{
	t->slots = alloc_slots(nr);
	t->mask = nr - 1;
	t->n = 0;
	return t->slots ? 0 : -ENOMEM;
}

int hashtab_init(struct hashtab *t, size_t entries)
{
	size_t nr = HASHTAB_MIN_SLOTS;

	while (nr / 2 < entries && nr < SIZE_MAX / 4)
		nr *= 2;
	return make_slots(t, nr);
}

void hashtab_free(struct hashtab *t)
{
	if (t->slots)
		free_slots(t->slots, t->mask + 1);
	t->slots = NULL;
	t->mask = t->n = 0;
}

/* Would @t be too full with @n entries? */
static int too_full(const struct hashtab *t, size_t n)
{
	size_t slots = t->mask + 1;

	return t->dense ? n > slots / 4 * 3 : n > slots / 2;
}

/* Move every entry into a table of twice the slots; 0 or -ENOMEM (@t unchanged). */
static int grow(struct hashtab *t)
{
	struct hashtab bigger = { .dense = t->dense };

	if (make_slots(&bigger, t->slots ? 2 * (t->mask + 1) : HASHTAB_MIN_SLOTS))
		return -ENOMEM;
	for (size_t i = 0; t->slots && i <= t->mask; i++) {
		const struct hashtab_slot *s = &t->slots[i];

		if (s->v != HASHTAB_NONE)
			*hashtab_find(&bigger, hashtab_hash(s->a, s->b), s->a, s->b) = *s;
	}
	bigger.n = t->n;
	hashtab_free(t);
	*t = bigger;
	return 0;
}

int hashtab_added(struct hashtab *t)
{
	return too_full(t, ++t->n) ? grow(t) : 0;
}

int hashtab_put(struct hashtab *t, uint64_t a, uint32_t b, uint32_t v)
{
	struct hashtab_slot *s;

	if (v == HASHTAB_NONE)
		return -EINVAL;
	if ((!t->slots || too_full(t, t->n + 1)) && grow(t))
		return -ENOMEM;
	s = hashtab_find(t, hashtab_hash(a, b), a, b);
	if (s->v == HASHTAB_NONE)
		t->n++;
	*s = (struct hashtab_slot){ .a = a, .b = b, .v = v };
	return 0;
}
