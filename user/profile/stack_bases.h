/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile/stack_bases.h - the user stacks the BPF program stored without
 * their leaf (BPFPROF_LEAF_APART, bpf/bpfprof.h), by their kernel stack
 * id: the frames the samples' own leaves are put in front of
 * (profile/ingest.c).  Not in the profile: no sample has such a stack.
 */
#ifndef BPFPROF_STACK_BASES_H
#define BPFPROF_STACK_BASES_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof.h"

/* Whether the @nr frames at @ips are a stack stored without its leaf:
 * ips[0] is BPFPROF_LEAF_APART, and a frame follows. */
static inline bool stack_bases_is_base(const uint64_t *ips, uint32_t nr)
{
	return nr >= 2 && ips[0] == BPFPROF_LEAF_APART;
}

/* One stored stack: ips[0] is BPFPROF_LEAF_APART, the rest its frames
 * (leaf side first, Python frames named as interp_learn_stack() left
 * them). */
struct stack_base {
	uint64_t id;		/* the kernel's stack id */
	uint32_t nr;		/* entries of ips, ips[0] included (>= 2) */
	uint64_t *ips;
};

struct stack_bases;

/* An empty table, or NULL without memory.  Free with stack_bases_free(). */
struct stack_bases *stack_bases_new(void);

/* Free @b and its stacks; NULL is fine. */
void stack_bases_free(struct stack_bases *b);

/* The stack stored under @id, or NULL.  Owned by @b, valid until freed. */
const struct stack_base *stack_bases_find(const struct stack_bases *b, uint64_t id);

/* Store a copy of the @nr frames at @ips under @id (a second add of the
 * same id keeps the first).  The stored stack in @out (may be NULL).
 * 0, -EINVAL (not stack_bases_is_base()), or -ENOMEM. */
int stack_bases_add(struct stack_bases *b, uint64_t id, const uint64_t *ips, uint32_t nr,
		    const struct stack_base **out);

/* Stacks stored. */
uint64_t stack_bases_count(const struct stack_bases *b);

/*
 * The id of the whole stack: base @id with leaf @leaf in front.  Never 0,
 * and in practice no id the kernel gives a stack (another mix).
 */
uint64_t stack_bases_leaf_id(uint64_t id, uint64_t leaf);

#endif /* BPFPROF_STACK_BASES_H */
