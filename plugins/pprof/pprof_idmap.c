// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_idmap.c - growth and insertion of the pprof plugin's
 * open-addressing hash table (see pprof_idmap.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "pprof_idmap.h"

#define IDMAP_MIN_SLOTS 1024u

/* Put an entry known to be absent into a table with room. */
static void place(struct pprof_idmap *m, const struct pprof_idmap_slot *e)
{
	size_t i = pprof_idmap_home(m, e->a, e->b);

	while (m->slots[i].value)
		i = (i + 1) & m->mask;
	m->slots[i] = *e;
	m->nr++;
}

/*
 * The slots of a table: mapped with MAP_POPULATE, zeroed and writable at
 * once.  From calloc(), fresh pages that lookups read first are mapped to
 * the shared zero page, and the write that follows must flush the TLB of
 * every CPU the process runs on (the compressor thread's too), an
 * interrupt each, costly in a VM.
 */
static struct pprof_idmap_slot *map_slots(size_t nr_slots)
{
	void *p = mmap(NULL, nr_slots * sizeof(struct pprof_idmap_slot), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap_slots(struct pprof_idmap_slot *slots, size_t nr_slots)
{
	if (slots)
		munmap(slots, nr_slots * sizeof(*slots));
}

/* Rehash into a table of @nr_slots (a power of two); 0 or -ENOMEM. */
static int resize(struct pprof_idmap *m, size_t nr_slots)
{
	struct pprof_idmap old = *m;
	unsigned bits = 0;

	while (((size_t)1 << bits) < nr_slots)
		bits++;
	m->slots = map_slots(nr_slots);
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	m->mask = nr_slots - 1;
	m->shift = 64 - bits;
	m->nr = 0;
	for (size_t i = 0; old.slots && i <= old.mask; i++)
		if (old.slots[i].value)
			place(m, &old.slots[i]);
	unmap_slots(old.slots, old.mask + 1);
	return 0;
}

int pprof_idmap_add(struct pprof_idmap *m, uint64_t a, uint32_t b, uint32_t value)
{
	struct pprof_idmap_slot e = { .a = a, .b = b, .value = value };

	if (!value)
		return -EINVAL;
	if (!m->slots || (m->nr + 1) * 4 > (m->mask + 1) * 3) {
		int err = resize(m, m->slots ? 2 * (m->mask + 1) : IDMAP_MIN_SLOTS);

		if (err)
			return err;
	}
	place(m, &e);
	return 0;
}

void pprof_idmap_free(struct pprof_idmap *m)
{
	unmap_slots(m->slots, m->mask + 1);
	m->slots = NULL;
	m->mask = m->nr = 0;
	m->shift = 0;
}
