/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fsym.h - one function symbol of a file's table (struct fsym) and the
 * order of a table: the symbolizer's (elf_symtab.c) and the symbol
 * cache's (sym_cache.c) shape, sorted by fsym_sort.cc.  Plain C, also
 * read by that one C++ file.
 */
#ifndef BPFPROF_FSYM_H
#define BPFPROF_FSYM_H

#include <stddef.h>
#include <stdint.h>

/* A function symbol in the file's vaddr space. */
struct fsym {
	uint64_t addr;
	uint64_t end;			/* one past the end */
	const char *name;		/* owned by the Dwfl; in a table read from
					 * the symbol cache, an offset into its
					 * names (struct elf_file's strings) */
	uint32_t rank;			/* lower is preferred at equal addr */
};

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Sort the @nr symbols at @syms (names are pointers, not offsets) by
 * address, then rank, then name, then end: the order in which the first
 * symbol at an address is the one a table keeps.  In place; allocates
 * nothing, cannot fail.  The C++ standard library's std::sort, with the
 * comparison inlined: in a profile's first run, python3.11's 10,005
 * function symbols sort in 0.65 ms instead of qsort()'s 1.48, libc's
 * 6,818 in 0.55 instead of 1.0 (docs/PERFORMANCE.md, session 45).
 */
void fsym_sort(struct fsym *syms, size_t nr);

#ifdef __cplusplus
}
#endif

#endif /* BPFPROF_FSYM_H */
