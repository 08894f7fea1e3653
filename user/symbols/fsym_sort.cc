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

namespace {

/* Strict weak order: address, rank, name, end.  A function object, not a
 * function pointer: std::sort calls it directly (no indirect call for
 * clang's -fsanitize=function to check, which needs the C++ runtime). */
struct before {
	bool operator()(const fsym &x, const fsym &y) const
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
};

} // namespace

void fsym_sort(struct fsym *syms, size_t nr)
{
	std::sort(syms, syms + nr, before());
}
