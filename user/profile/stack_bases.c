// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile/stack_bases.c - the table of user stacks stored without their
 * leaf (see stack_bases.h): a uthash table of copies by kernel stack id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "stack_bases.h"

struct base_entry {
	struct stack_base base;
	UT_hash_handle hh;
};

struct stack_bases {
	struct base_entry *by_id;
};

struct stack_bases *stack_bases_new(void)
{
	return calloc(1, sizeof(struct stack_bases));
}

void stack_bases_free(struct stack_bases *b)
{
	struct base_entry *e, *tmp;

	if (!b)
		return;
	HASH_ITER(hh, b->by_id, e, tmp) {
		HASH_DEL(b->by_id, e);
		free(e->base.ips);
		free(e);
	}
	free(b);
}

const struct stack_base *stack_bases_find(const struct stack_bases *b, uint64_t id)
{
	struct base_entry *e;

	HASH_FIND(hh, b->by_id, &id, sizeof(id), e);
	return e ? &e->base : NULL;
}

int stack_bases_add(struct stack_bases *b, uint64_t id, const uint64_t *ips, uint32_t nr,
		    const struct stack_base **out)
{
	const struct stack_base *old = stack_bases_find(b, id);
	struct base_entry *e;

	if (!stack_bases_is_base(ips, nr))
		return -EINVAL;
	if (!old) {
		e = malloc(sizeof(*e));
		if (!e || !(e->base.ips = malloc(nr * sizeof(*ips)))) {
			free(e);
			return -ENOMEM;
		}
		memcpy(e->base.ips, ips, nr * sizeof(*ips));
		e->base.id = id;
		e->base.nr = nr;
		HASH_ADD(hh, b->by_id, base.id, sizeof(id), e);
		old = &e->base;
	}
	if (out)
		*out = old;
	return 0;
}

uint64_t stack_bases_count(const struct stack_bases *b)
{
	return HASH_COUNT(b->by_id);
}

uint64_t stack_bases_leaf_id(uint64_t id, uint64_t leaf)
{
	uint64_t h = (id ^ 0x5bd1e9955bd1e995ull) + leaf * 0x9e3779b97f4a7c15ull;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return h ? h : 1;
}
