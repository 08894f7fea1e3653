// SPDX-License-Identifier: BSD-2-Clause
/*
 * fsym_sort.cc - owns the order of a file's function symbols (fsym.h):
 * std::sort, an introsort that inlines the comparison, where qsort()'s
 * merge sort calls a function for each one.  The collector's one C++
 * file: built without exceptions or RTTI, it needs nothing from the C++
 * runtime (only memmove and strcmp from the C library).
 */
#include <algorithm>
#include <cstring>

#include "symbols/fsym.h"

/* Strict weak order: address, rank, name, end. */
static bool before(const fsym &x, const fsym &y)
{
	if (x.addr != y.addr)
		return x.addr < y.addr;
	if (x.rank != y.rank)
		return x.rank < y.rank;
	int c = std::strcmp(x.name, y.name);

	if (c)
		return c < 0;
	return x.end < y.end;
}

void fsym_sort(struct fsym *syms, size_t nr)
{
	std::sort(syms, syms + nr, before);
}
