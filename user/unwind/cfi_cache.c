// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi_cache.c - owns the on-disk cache of unwind tables by build-id (see
 * cfi_cache.h): the directory, reading and checking a cached table,
 * writing one atomically, and bounding the directory's size.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/clock.h"
#include "cache_file.h"
#include "unwind/cfi_cache.h"

/* A hash of the builder's sources and structs (Makefile); 0 in a build
 * that did not define it, which then never matches a file written by
 * one that did. */
#ifndef CFI_BUILDER_ID
#define CFI_BUILDER_ID 0ull
#endif

/* 2: the checksum is XXH3-64, was CRC-32 (a "BPFPCFI1" file is a miss) */
#define CFI_CACHE_MAGIC "BPFPCFI2"
#define CFI_CACHE_SUFFIX ".cfi"
#define SYM_CACHE_SUFFIX ".sym"		/* symbols/sym_cache.c's files */
#define CFI_CACHE_MAX_ROWS (64u << 20)	/* 1 GiB of rows: anything more is corrupt */
#define CFI_CACHE_MAX_SEGMENTS 4096u

/* The first bytes of a cache file (112 bytes, then the stats); every
 * byte a field, no padding the compiler could leave unset. */
struct cfi_cache_header {
	char magic[8];			/* CFI_CACHE_MAGIC */
	uint64_t builder;		/* CFI_BUILDER_ID of the writer */
	uint8_t build_id_size;		/* 1..64 */
	uint8_t pad[7];
	uint8_t build_id[64];
	uint32_t nr_rows;		/* struct cfi_row entries after the segments */
	uint32_t nr_segments;		/* struct elf_segment entries after the header */
	uint16_t e_type;		/* the file's ELF type */
	uint16_t pad2[3];
	uint64_t checksum;		/* cache_file_checksum() (XXH3-64) of the
					 * bytes after the header: the segments,
					 * then the rows; not of the header */
	struct cfi_table_stats stats;	/* of the build (build_ns 0) */
};

_Static_assert(offsetof(struct cfi_cache_header, stats) == 112,
	       "no padding in the header before the stats");

struct cfi_cache {
	char *dir;
	bool stored;			/* something was written this run */
	struct cfi_cache_stats st;
};

const char *cfi_cache_default_dir(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/bpfprof/cfi", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/bpfprof/cfi", home);
	else
		return NULL;
	return n > 0 && (size_t)n < size ? buf : NULL;
}

/* mkdir -p @dir with mode 0700 for what is created.  0 or -errno. */
static int make_dirs(const char *dir)
{
	char *p = strdup(dir), *s;
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (s = strchr(p + 1, '/'); !err; s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			err = -errno;
		if (!s)
			break;
		*s = '/';
	}
	free(p);
	return err;
}

int cfi_cache_open(const char *dir, struct cfi_cache **out)
{
	struct cfi_cache *c;
	struct stat st;
	int err;

	if (!dir || dir[0] != '/' || !out)
		return -EINVAL;
	if ((err = make_dirs(dir)))
		return err;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (!cache_file_trusted(&st))
		return -EPERM;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

/* Whether @h describes a file of @file_size bytes holding @id's table. */
static bool header_ok(const struct cfi_cache_header *h, const uint8_t *id, size_t id_size,
		      uint64_t file_size)
{
	uint64_t want;

	if (memcmp(h->magic, CFI_CACHE_MAGIC, sizeof(h->magic)) || h->builder != CFI_BUILDER_ID ||
	    h->build_id_size != id_size || memcmp(h->build_id, id, id_size) ||
	    h->nr_rows < 2 || h->nr_rows > CFI_CACHE_MAX_ROWS ||
	    h->nr_segments > CFI_CACHE_MAX_SEGMENTS)
		return false;
	want = sizeof(*h) + (uint64_t)h->nr_segments * sizeof(struct elf_segment) +
	       (uint64_t)h->nr_rows * sizeof(struct cfi_row);
	return want == file_size;
}

/* Rows strictly increasing by pc, as the walker's binary search needs. */
static bool rows_ok(const struct cfi_row *rows, uint32_t nr)
{
	for (uint32_t i = 1; i < nr; i++)
		if (rows[i].pc <= rows[i - 1].pc)
			return false;
	return true;
}

/*
 * The table of an open cache file @fd, checked; NULL if it fails a check
 * (*@err -ENOENT) or memory ran out (*@err -ENOMEM).  The file is mapped,
 * its page tables filled in one call (MAP_POPULATE), and the rows stay in
 * the mapping: no copy of them and no page fault per page, each dear on a
 * paravirtualized guest (python3.11's seven tables: ~4.5 -> ~1.5 ms).
 */
static struct cfi_table *read_table(int fd, const uint8_t *id, size_t id_size, int *err)
{
	const struct cfi_cache_header *h;
	struct cfi_table *t = NULL;
	size_t seg_bytes, row_bytes;
	struct cache_part checked[2];
	struct stat st;
	uint8_t *base;

	*err = -ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !cache_file_trusted(&st) ||
	    (uint64_t)st.st_size < sizeof(*h) || (uint64_t)st.st_size > SIZE_MAX)
		return NULL;
	/* read-only: the page cache's pages mapped as they are, no copy
	 * (written, each page was copied as the mapping was populated) */
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (base == MAP_FAILED)
		return NULL;
	h = (const struct cfi_cache_header *)base;
	if (!header_ok(h, id, id_size, (uint64_t)st.st_size)) {
		munmap(base, (size_t)st.st_size);
		return NULL;
	}
	seg_bytes = (size_t)h->nr_segments * sizeof(struct elf_segment);
	row_bytes = (size_t)h->nr_rows * sizeof(struct cfi_row);
	_Static_assert(sizeof(*h) % _Alignof(struct elf_segment) == 0 &&
		       sizeof(struct elf_segment) % _Alignof(struct cfi_row) == 0,
		       "segments and rows aligned in the file");
	if (!(t = calloc(1, sizeof(*t))) ||
	    (seg_bytes && !(t->segments.segs = malloc(seg_bytes)))) {
		munmap(base, (size_t)st.st_size);
		*err = -ENOMEM;
		goto fail;
	}
	t->mapping = base;
	t->mapping_size = (size_t)st.st_size;
	t->rows = (struct cfi_row *)(base + sizeof(*h) + seg_bytes);
	t->segments.nr = h->nr_segments;
	if (seg_bytes)
		memcpy(t->segments.segs, base + sizeof(*h), seg_bytes);
	checked[0] = (struct cache_part){ t->segments.segs, seg_bytes };
	checked[1] = (struct cache_part){ t->rows, row_bytes };
	if (cache_file_checksum(checked, 2) != h->checksum || !rows_ok(t->rows, h->nr_rows))
		goto fail;
	t->nr = h->nr_rows;
	t->segments.e_type = h->e_type;
	t->build_id_size = h->build_id_size;
	memcpy(t->build_id, h->build_id, sizeof(t->build_id));
	t->stats = h->stats;
	*err = 0;
	return t;
fail:
	cfi_table_free(t);
	return NULL;
}

/* cache_file_read()'s reader: read_table() with the id and the table. */
struct cfi_read {
	const uint8_t *id;
	size_t id_size;
	struct cfi_table *out;
};

static int read_cb(int fd, void *ctx)
{
	struct cfi_read *r = ctx;
	int err;

	r->out = read_table(fd, r->id, r->id_size, &err);
	return err;
}

int cfi_cache_get(struct cfi_cache *c, const uint8_t *id, size_t id_size,
		  struct cfi_table **out)
{
	uint64_t t0 = monotonic_ns();
	struct cfi_read r = { id, id_size, NULL };
	bool rejected;
	int err;

	if (!c || !id || id_size == 0 || id_size > 64)
		return -ENOENT;
	err = cache_file_read(c->dir, id, id_size, CFI_CACHE_SUFFIX, read_cb, &r, &rejected);
	if (err == -ENOENT) {
		c->st.misses++;
		c->st.rejected += rejected;
	} else if (!err) {
		*out = r.out;
		c->st.hits++;
		c->st.read_ns += monotonic_ns() - t0;
	}
	return err;
}

int cfi_cache_file_id(int fd, uint8_t id[CFI_CACHE_FILE_ID_SIZE])
{
	struct stat st;
	uint64_t f[4];

	if (fstat(fd, &st) < 0)
		return -errno;
	f[0] = (uint64_t)st.st_dev;
	f[1] = (uint64_t)st.st_ino;
	f[2] = (uint64_t)st.st_size;
	f[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	memcpy(id, "bpfpstat", 8);
	memcpy(id + 8, f, sizeof(f));
	return 0;
}

int cfi_cache_put(struct cfi_cache *c, const struct cfi_table *t)
{
	struct cfi_cache_header h = { .builder = CFI_BUILDER_ID };
	size_t seg_bytes, row_bytes;
	int err;

	if (!c || !t || !t->build_id_size || t->build_id_size > sizeof(h.build_id) || t->nr < 2)
		return -EINVAL;
	seg_bytes = t->segments.nr * sizeof(struct elf_segment);
	row_bytes = (size_t)t->nr * sizeof(struct cfi_row);
	memcpy(h.magic, CFI_CACHE_MAGIC, sizeof(h.magic));
	h.build_id_size = t->build_id_size;
	memcpy(h.build_id, t->build_id, t->build_id_size);
	h.nr_rows = t->nr;
	h.nr_segments = (uint32_t)t->segments.nr;
	h.e_type = t->segments.e_type;
	h.stats = t->stats;
	h.stats.build_ns = 0;
	h.checksum = cache_file_checksum((const struct cache_part[]){
						 { t->segments.segs, seg_bytes },
						 { t->rows, row_bytes } }, 2);

	err = cache_file_write(c->dir, t->build_id, t->build_id_size, CFI_CACHE_SUFFIX,
			       (const struct cache_part[]){ { &h, sizeof(h) },
							    { t->segments.segs, seg_bytes },
							    { t->rows, row_bytes } }, 3);
	if (!err) {
		c->st.stores++;
		c->stored = true;
	}
	return err;
}

/* ---- bounding the directory ---------------------------------------------- */

struct cache_file {
	char *name;
	uint64_t bytes;
	time_t atime;
};

static int by_atime(const void *a, const void *b)
{
	const struct cache_file *x = a, *y = b;

	return (x->atime > y->atime) - (x->atime < y->atime);
}

/* The ".cfi" files of @dfd, with sizes and access times; their total in
 * *@total.  NULL (and nothing to trim) when memory runs out. */
/* Whether @name (@len bytes) is longer than @suffix and ends with it. */
static bool ends_with(const char *name, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && strcmp(name + len - n, suffix) == 0;
}

/* The tables in the directory: ".cfi" files, and the symbol cache's
 * ".sym" files (symbols/sym_cache.h), which share it. */
static struct cache_file *list_files(DIR *d, size_t *nr, uint64_t *total)
{
	struct cache_file *v = NULL, *nv;
	size_t cap = 0;
	struct dirent *de;

	*nr = 0;
	*total = 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if ((!ends_with(de->d_name, len, CFI_CACHE_SUFFIX) &&
		     !ends_with(de->d_name, len, SYM_CACHE_SUFFIX)) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (*nr == cap) {
			cap = cap ? 2 * cap : 64;
			if (!(nv = realloc(v, cap * sizeof(*v))))
				break;
			v = nv;
		}
		if (!(v[*nr].name = strdup(de->d_name)))
			break;
		v[*nr].bytes = (uint64_t)st.st_size;
		v[*nr].atime = st.st_atime;
		*total += v[(*nr)++].bytes;
	}
	return v;
}

void cfi_cache_trim(struct cfi_cache *c, uint64_t max_bytes)
{
	struct cache_file *v;
	uint64_t total;
	size_t nr, i;
	DIR *d;

	if (!c || !c->stored || !(d = opendir(c->dir)))
		return;
	v = list_files(d, &nr, &total);
	if (v && total > max_bytes) {
		qsort(v, nr, sizeof(*v), by_atime);
		for (i = 0; i < nr && total > max_bytes / 4 * 3; i++)
			if (unlinkat(dirfd(d), v[i].name, 0) == 0) {
				total -= v[i].bytes;
				c->st.evicted++;
			}
	}
	for (i = 0; v && i < nr; i++)
		free(v[i].name);
	free(v);
	closedir(d);
}

void cfi_cache_stats(const struct cfi_cache *c, struct cfi_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (c)
		*st = c->st;
}

const char *cfi_cache_dir(const struct cfi_cache *c)
{
	return c ? c->dir : NULL;
}

void cfi_cache_close(struct cfi_cache *c)
{
	if (!c)
		return;
	free(c->dir);
	free(c);
}
