/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/grow.h - the plugins' one helper for growable arrays (part of
 * plugins/common/, the internal library linked into every plugin): an
 * array, its capacity in elements and grow_array(), which doubles it.
 */
#ifndef BPFPROF_COMMON_GROW_H
#define BPFPROF_COMMON_GROW_H

#include <stddef.h>

/* The capacity, in elements, an empty array starts with. */
#define GROW_MIN 64

int grow_array_to(void *arrp, size_t *cap, size_t need, size_t size);

/*
 * Make the array *@arrp (a pointer to the array pointer, which may be
 * NULL when *@cap is 0) of *@cap elements of @size bytes hold at least
 * @need elements: reallocated to twice its capacity (at least GROW_MIN
 * elements) until it does; *@arrp and *@cap are updated.  Returns 0, or
 * -ENOMEM (also when the bytes would overflow a size_t) with *@arrp and
 * *@cap unchanged and the array still valid.
 */
static inline int grow_array(void *arrp, size_t *cap, size_t need, size_t size)
{
	return need <= *cap ? 0 : grow_array_to(arrp, cap, need, size);
}

#endif /* BPFPROF_COMMON_GROW_H */
