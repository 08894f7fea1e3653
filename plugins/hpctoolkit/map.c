// SPDX-License-Identifier: BSD-2-Clause
/*
 * map.c - the HPCToolkit plugin's integer hash map: keys of two u64, u32
 * values, open addressing with linear probing in one flat array (no
 * allocation per entry, from pages.c), at most half full.  It backs the caches and
 * indices that turn call stacks into contexts (cct.c, paths.c, plugin.c).
 */
#include <errno.h>
#include <string.h>

#include "hpc.h"

#define MAP_MIN_SLOTS 64

void hpc_map_init(struct hpc_map *m)
{
	memset(m, 0, sizeof(*m));
}

static size_t map_bytes(const struct hpc_map *m)
{
	return (m->mask + 1) * sizeof(*m->ent);
}

void hpc_map_free(struct hpc_map *m)
{
	if (m->ent)
		hpc_pages_free(m->ent, map_bytes(m));
	hpc_map_init(m);
}

static size_t map_hash(uint64_t k0, uint64_t k1)
{
	uint64_t h = k0 * 0x9e3779b97f4a7c15ull ^ (k1 + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;

	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return (size_t)h;
}

static struct hpc_map_ent *map_slot(const struct hpc_map *m, uint64_t k0, uint64_t k1)
{
	size_t i = map_hash(k0, k1) & m->mask;

	while (m->ent[i].v != HPC_NONE && (m->ent[i].k0 != k0 || m->ent[i].k1 != k1))
		i = (i + 1) & m->mask;
	return &m->ent[i];
}

uint32_t hpc_map_get(const struct hpc_map *m, uint64_t k0, uint64_t k1)
{
	if (!m->ent)
		return HPC_NONE;
	return map_slot(m, k0, k1)->v;
}

static int map_grow(struct hpc_map *m)
{
	size_t slots = m->ent ? 2 * (m->mask + 1) : MAP_MIN_SLOTS;
	struct hpc_map old = *m;
	struct hpc_map_ent *e = hpc_pages_alloc(slots * sizeof(*e));

	if (!e)
		return -ENOMEM;
	memset(e, 0xff, slots * sizeof(*e));	/* every v = HPC_NONE */
	m->ent = e;
	m->mask = slots - 1;
	for (size_t i = 0; old.ent && i <= old.mask; i++)
		if (old.ent[i].v != HPC_NONE)
			*map_slot(m, old.ent[i].k0, old.ent[i].k1) = old.ent[i];
	if (old.ent)
		hpc_pages_free(old.ent, map_bytes(&old));
	return 0;
}

int hpc_map_put(struct hpc_map *m, uint64_t k0, uint64_t k1, uint32_t v)
{
	struct hpc_map_ent *e;

	if ((!m->ent || 2 * (m->n + 1) > m->mask + 1) && map_grow(m))
		return -ENOMEM;
	e = map_slot(m, k0, k1);
	if (e->v == HPC_NONE)
		m->n++;
	e->k0 = k0;
	e->k1 = k1;
	e->v = v;
	return 0;
}
