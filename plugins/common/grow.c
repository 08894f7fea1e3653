// SPDX-License-Identifier: BSD-2-Clause
/*
 * common/grow.c - the slow path of grow_array() (common/grow.h): the
 * reallocation of a growable array of the plugins.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/grow.h"

/* grow_array() when the array is full; see common/grow.h. */
int grow_array_to(void *arrp, size_t *cap, size_t need, size_t size)
{
	void **a = arrp;
	size_t n = *cap ? *cap : GROW_MIN;
	void *q;

	if (need <= *cap)
		return 0;
	if (!size || need > SIZE_MAX / size)
		return -ENOMEM;
	while (n < need)
		n = n > SIZE_MAX / size / 2 ? need : n * 2;
	q = realloc(*a, n * size);
	if (!q)
		return -ENOMEM;
	*a = q;
	*cap = n;
	return 0;
}
