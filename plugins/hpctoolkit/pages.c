// SPDX-License-Identifier: BSD-2-Clause
/*
 * pages.c - the HPCToolkit plugin's large arrays (the context tree, sort
 * buffers): taken straight from mmap, grown with mremap (no
 * copy, no second buffer) and given back at once when freed.  malloc would
 * place tables of a few MB in its heap once its dynamic mmap threshold has
 * grown, where freed ones keep counting against the process's memory.
 */
#include <sys/mman.h>

#include "hpc.h"

void *hpc_pages_alloc(size_t size)
{
	void *p;

	if (!size)
		size = 1;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void *hpc_pages_realloc(void *p, size_t old, size_t size)
{
	void *n;

	if (!p)
		return hpc_pages_alloc(size);
	n = mremap(p, old ? old : 1, size ? size : 1, MREMAP_MAYMOVE);
	return n == MAP_FAILED ? NULL : n;
}

void hpc_pages_free(void *p, size_t size)
{
	if (p)
		munmap(p, size ? size : 1);
}
