// SPDX-License-Identifier: BSD-2-Clause
/*
 * heap.c - owns the collector's heap population ahead of use (heap.h):
 * malloc's growth and mmap thresholds, and madvise(MADV_POPULATE_WRITE)
 * over what the heap grew by.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heap.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23		/* Linux 5.14 */
#endif

/* The most the heap may have grown by between two calls: beyond, the
 * break is not the heap's (another allocator moved it) and is left alone. */
#define HEAP_POPULATE_MAX (256ull << 20)

#if defined(__SANITIZE_ADDRESS__)
#define HEAP_GLIBC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_GLIBC 0
#endif
#endif
#ifndef HEAP_GLIBC
#define HEAP_GLIBC 1
#endif

static uintptr_t populated_end;		/* 0: not set up */
static size_t populated;
static long page_size;

void heap_setup(size_t initial)
{
	void *p;

	if (!HEAP_GLIBC || populated_end)
		return;
	page_size = sysconf(_SC_PAGESIZE);
	if (page_size <= 0)
		return;
	mallopt(M_TOP_PAD, HEAP_GROWTH_BYTES);
	mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, 2 * HEAP_MMAP_THRESHOLD);
	p = malloc(initial);
	if (!p)
		return;
	/* from the first whole page of the block: below it, pages in use */
	populated_end = ((uintptr_t)p + (uintptr_t)page_size - 1) & ~((uintptr_t)page_size - 1);
	heap_populate();
	free(p);
}

void heap_populate(void)
{
	uintptr_t end = (uintptr_t)sbrk(0);

	if (!populated_end || end <= populated_end)
		return;
	if (end - populated_end <= HEAP_POPULATE_MAX &&
	    madvise((void *)populated_end, end - populated_end, MADV_POPULATE_WRITE) == 0)
		populated += end - populated_end;
	populated_end = end;
}

size_t heap_populated(void)
{
	return populated;
}
