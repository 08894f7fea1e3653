/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi_cache.h - the on-disk cache of unwind tables (`--call-graph auto`):
 * a table built from a file's CFI (cfi_table.h) is kept by the file's
 * GNU build-id, so the next run that meets the same file reads its rows
 * instead of building them again through libdw (about 40 ms per MB of
 * CFI; python3.11's table alone takes ~20 ms).  A file without a
 * build-id (rustup's librustc_driver: 6 MB of CFI, ~0.9 s to build) is
 * kept by its identity instead, cfi_cache_file_id(): device, inode, size
 * and modification time, so a file replaced or rewritten is a miss.
 *
 * The cache is a directory (default $XDG_CACHE_HOME/bpfprof/cfi, else
 * $HOME/.cache/bpfprof/cfi; `--unwind-cache DIR`, `--no-unwind-cache`)
 * holding one file per table, named by the build-id in hex plus ".cfi":
 *
 *   struct cfi_cache_header          magic, builder id, build-id, counts,
 *                                    XXH3-64 checksum of what follows
 *                                    (cache_file.h), the stats
 *   struct elf_segment[nr_segments]  the file's PT_LOAD segments
 *   struct cfi_row[nr_rows]          the table's rows
 *
 * in this machine's byte order (x86-64 only, like the tables).  The
 * header's builder id is a hash of the builder's sources and of the
 * structs above (the Makefile's CFI_BUILDER_ID): a bpfprof whose builder
 * differs in any way ignores and replaces the file.  A file that fails a
 * check (size, checksum, builder, build-id, rows out of order) is a miss and
 * is removed.  Files are written to a temporary name and renamed, so a
 * reader never sees half a table.  The directory is created 0700; a
 * directory or file not owned by the effective user, or writable by
 * others, is not used (another user could feed the walker false rows).
 *
 * Single-threaded, like the loader that owns it.
 */
#ifndef BPFPROF_UNWIND_CFI_CACHE_H
#define BPFPROF_UNWIND_CFI_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_table.h"

/* Default bound on the cache directory's size (bytes); cfi_cache_trim(). */
#define CFI_CACHE_DEFAULT_MAX_BYTES (512ull << 20)

/* What the cache did in one run. */
struct cfi_cache_stats {
	uint64_t hits;			/* tables read from the cache */
	uint64_t misses;		/* lookups with no usable file */
	uint64_t stores;		/* tables written */
	uint64_t rejected;		/* files that failed a check (removed) */
	uint64_t read_ns;		/* time spent reading hits (ns, CLOCK_MONOTONIC) */
	uint64_t evicted;		/* files removed by cfi_cache_trim() */
};

struct cfi_cache;

/*
 * The default directory into @buf (@size bytes): $XDG_CACHE_HOME/bpfprof/cfi
 * when XDG_CACHE_HOME is an absolute path, else $HOME/.cache/bpfprof/cfi.
 * Returns @buf, or NULL when neither variable gives one or it does not fit.
 */
const char *cfi_cache_default_dir(char *buf, size_t size);

/*
 * Open the cache in @dir, creating it (and its parents, mode 0700) if
 * missing.  0 and *@out set (free with cfi_cache_close()), or a negative
 * errno: -EINVAL (NULL or relative @dir), -ENOTDIR, -EPERM (not owned by
 * the effective user or writable by group or others), -ENOMEM, or what
 * mkdir() gave.
 */
int cfi_cache_open(const char *dir, struct cfi_cache **out);

/*
 * The cached table of the file with build-id @id (@id_size bytes, 1..64).
 * 0 and *@out set to a new table (cfi_table_free()), whose stats are those
 * of the build that made it except build_ns; -ENOENT on a miss (no file,
 * or one that failed a check: then it is removed); -ENOMEM.
 */
int cfi_cache_get(struct cfi_cache *c, const uint8_t *id, size_t id_size,
		  struct cfi_table **out);

/* Bytes of a cfi_cache_file_id(): a prefix no GNU build-id has the
 * length of (8, 16 and 20 bytes are the common ones), then the identity. */
#define CFI_CACHE_FILE_ID_SIZE 40

/*
 * The cache id of the file open as @fd when it has no build-id, into @id
 * (CFI_CACHE_FILE_ID_SIZE bytes): "bpfpstat", then st_dev, st_ino,
 * st_size and st_mtim in ns (8 bytes each, this machine's byte order).
 * Store the table under it by setting the table's build-id to it.  0, or
 * -errno of fstat().
 */
int cfi_cache_file_id(int fd, uint8_t id[CFI_CACHE_FILE_ID_SIZE]);

/*
 * Store @t under its build-id.  0, -EINVAL when @t has no build-id, or
 * the errno of the write (nothing is left behind on failure).
 */
int cfi_cache_put(struct cfi_cache *c, const struct cfi_table *t);

/*
 * Bound the directory to @max_bytes: when this run stored a table and
 * the ".cfi" files and the symbol cache's ".sym" files
 * (symbols/sym_cache.h) exceed @max_bytes, remove the least recently used
 * (oldest access time) until they fit in three quarters of it.
 */
void cfi_cache_trim(struct cfi_cache *c, uint64_t max_bytes);

/* This run's counts so far. */
void cfi_cache_stats(const struct cfi_cache *c, struct cfi_cache_stats *st);

/* The cache's directory (owned by @c), which the symbol cache shares
 * (symbols/sym_cache.h); NULL for a NULL @c. */
const char *cfi_cache_dir(const struct cfi_cache *c);

/* Close the cache; NULL is fine. */
void cfi_cache_close(struct cfi_cache *c);

#endif /* BPFPROF_UNWIND_CFI_CACHE_H */
