/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sym_cache.h - the on-disk cache of ELF function tables: the sorted table
 * elf_symtab.c builds from a file's symbols (.symtab of the file or of its
 * separate debug file, else .dynsym; a Go program's .gopclntab) is kept by
 * the file's GNU build-id, so the next run that names functions of the
 * same file reads it instead of reading the symbols again through libdwfl
 * and sorting them (python3.11 with its -dbg file: ~4 ms, libc ~2.5 ms on
 * the test VM; docs/PERFORMANCE.md, session 35).
 *
 * The files live in the unwind-table cache's directory (cfi_cache.h, which
 * checks its owner and mode and bounds its size with these files counted),
 * named by the build-id in hex plus ".sym":
 *
 *   struct sym_cache_header     magic, builder id, build-id, counts,
 *                               flags, XXH3-64 checksum of what follows
 *                               (cache_file.h)
 *   struct fsym[nr_syms]        the table, each name as an offset into
 *                               the strings (symbolizer_impl.h's layout)
 *   char strings[strings_bytes] NUL-terminated names
 *
 * in this machine's byte order.  The builder id is a hash of the sources
 * that build the table and of this layout (the Makefile's SYM_BUILDER_ID):
 * another builder's file is a miss and is replaced.  A table built from a
 * file with no symbol table of its own and no debug file (.dynsym only) is
 * a miss once a debug file for the build-id is installed
 * (/usr/lib/debug/.build-id/), so installing a -dbg package takes effect.
 * A file that fails a check (size, checksum, builder, build-id, names out of
 * bounds, order) is a miss and is removed.  Files are written to a
 * temporary name and renamed.  Single-threaded, like the symbolizer.
 */
#ifndef BPFPROF_SYMBOLS_SYM_CACHE_H
#define BPFPROF_SYMBOLS_SYM_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fsym;

/* What the cache did in one run. */
struct sym_cache_stats {
	uint64_t hits;			/* tables read from the cache */
	uint64_t misses;		/* lookups with no usable file */
	uint64_t stores;		/* tables written */
	uint64_t rejected;		/* files that failed a check (removed) */
};

/*
 * A table read from the cache: @syms[@nr] and the names at @strings
 * (@strings_bytes, each NUL-terminated; an entry's name field holds the
 * offset of its name there, checked) lie in @data, a read-only mapping of
 * the file (@size bytes): its pages are the page cache's, populated in
 * one call and never copied (a copy into the heap cost ~2 us a page more
 * on the test VM, where every first touch of a page is dear: ~1 ms of
 * python3.11's 660 KB; docs/PERFORMANCE.md, session 40).  Free with
 * sym_cache_table_free().
 */
struct sym_cache_table {
	const struct fsym *syms;
	size_t nr;
	const char *strings;
	size_t strings_bytes;
	void *data;
	size_t size;
};

struct sym_cache;

/*
 * The cache in the existing directory @dir (already checked by
 * cfi_cache_open()).  0 and *@out set (free with sym_cache_close()),
 * -EINVAL (NULL @dir) or -ENOMEM.
 */
int sym_cache_open(const char *dir, struct sym_cache **out);

/*
 * The cached table of the file with build-id @id (@id_size bytes, 1..64)
 * into @out.  0; -ENOENT on a miss (no file, a file that failed a check,
 * which is removed, or a .dynsym-only table whose file now has a debug
 * file); -ENOMEM.
 */
int sym_cache_get(struct sym_cache *c, const uint8_t *id, size_t id_size,
		  struct sym_cache_table *out);

/*
 * Store the @nr entries of @syms (sorted by address, as load_symbols()
 * leaves them) under build-id @id; @dynsym_only: built without .symtab
 * (see above).  0, -EINVAL (no id, or a name offset past 4 GiB), or the
 * errno of the write (nothing is left behind on failure).
 */
int sym_cache_put(struct sym_cache *c, const uint8_t *id, size_t id_size, bool dynsym_only,
		  const struct fsym *syms, size_t nr);

/*
 * Whether the separate debug file of the @n-byte build-id @id (2..64
 * bytes) is installed now (/usr/lib/debug/.build-id/xx/yyyy....debug).  A
 * cache file built without one (a .dynsym-only table here, CPython facts
 * without the evaluator's .cold part in interp/py_cache.h) is stale once
 * it is: the next run builds it again.
 */
bool sym_cache_debug_installed(const uint8_t *id, size_t n);

/* Unmap @t's file; NULL or an empty table is fine. */
void sym_cache_table_free(struct sym_cache_table *t);

/* This run's counts so far. */
void sym_cache_stats(const struct sym_cache *c, struct sym_cache_stats *st);

/* Close the cache; NULL is fine. */
void sym_cache_close(struct sym_cache *c);

#endif /* BPFPROF_SYMBOLS_SYM_CACHE_H */
