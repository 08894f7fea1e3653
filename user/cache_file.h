/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cache_file.h - the files of bpfprof's on-disk cache directory, which the
 * unwind tables (unwind/cfi_cache.h, ".cfi") and the function tables
 * (symbols/sym_cache.h, ".sym") share: their names by build-id, the check
 * that a file is safe to read, the checksum that tells a damaged one, the
 * mark of its use, and writing one whole or not at all (a temporary name
 * beside it, then rename()).
 */
#ifndef BPFPROF_CACHE_FILE_H
#define BPFPROF_CACHE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* One piece of a file to write: @size bytes at @data. */
struct cache_part {
	const void *data;
	size_t size;
};

/*
 * "<dir>/<hex of the @n bytes at @id><suffix>", or with @tmp a temporary
 * name beside it ("...<suffix>.tmp.<pid>").  malloc()ed, NULL without
 * memory.
 */
char *cache_file_path(const char *dir, const uint8_t *id, size_t n, const char *suffix,
		      bool tmp);

/* Whether @st is a regular file or directory owned by the effective user
 * and not writable by its group or others (another user could have put
 * false tables there). */
bool cache_file_trusted(const struct stat *st);

/*
 * The checksum the cache's files carry over their tables: XXH3's 64-bit
 * hash (libxxhash's XXH3_64bits(), seed 0) of the @nr parts at @parts
 * taken as one run of bytes, in order (the same value as XXH3_64bits()
 * over them copied end to end).  Not a defence against a forger, only
 * against damage: trust comes from cache_file_trusted().
 */
uint64_t cache_file_checksum(const struct cache_part *parts, size_t nr);

/* Mark the file open as @fd used now (its access time), which the cache's
 * trimming reads (cfi_cache_trim(): least recently used first). */
void cache_file_touch(int fd);

/*
 * Open "<dir>/<hex id><suffix>" and give it to @read, which returns 0,
 * -ENOENT for a file that fails its checks, or another negative errno.
 * On 0 the file is marked used (cache_file_touch()); on -ENOENT it is
 * removed (another builder's, damaged, or stale) and *@rejected set.
 * Returns @read's result; -ENOENT also when there is no such file
 * (*@rejected false); -ENOMEM.
 */
int cache_file_read(const char *dir, const uint8_t *id, size_t n, const char *suffix,
		    int (*read)(int fd, void *ctx), void *ctx, bool *rejected);

/*
 * Write the @nr parts at @parts, in order, as the file "<dir>/<hex
 * id><suffix>" (mode 0600): to a temporary name beside it, renamed over
 * it once complete, so a reader never sees part of one.  0, -ENOMEM, or
 * the errno of the failed open, write, close or rename (the temporary
 * file removed).
 */
int cache_file_write(const char *dir, const uint8_t *id, size_t n, const char *suffix,
		     const struct cache_part *parts, size_t nr);

#endif /* BPFPROF_CACHE_FILE_H */
