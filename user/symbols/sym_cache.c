// SPDX-License-Identifier: BSD-2-Clause
/*
 * sym_cache.c - owns the on-disk cache of ELF function tables by build-id
 * (sym_cache.h): the file format, its checks, mapping a file read-only and
 * writing by rename.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_file.h"
#include "symbolizer_impl.h"
#include "symbols/buildid.h"
#include "symbols/sym_cache.h"

#ifndef SYM_BUILDER_ID
#define SYM_BUILDER_ID 0ull
#endif

/* 2: the checksum is XXH3-64, was CRC-32 (a "BPFPSYM1" file is a miss) */
#define SYM_CACHE_MAGIC "BPFPSYM2"
#define SYM_CACHE_SUFFIX ".sym"
#define SYM_CACHE_MAX_SYMS (16u << 20)		/* anything more is corrupt */
#define SYM_CACHE_MAX_STRINGS (1ull << 32)
#define SYM_CACHE_DYNSYM_ONLY 1u		/* header flag: see sym_cache.h */

/* The first bytes of a cache file (112 bytes). */
struct sym_cache_header {
	char magic[8];			/* SYM_CACHE_MAGIC */
	uint64_t builder;		/* SYM_BUILDER_ID of the writer */
	uint8_t build_id_size;		/* 1..64 */
	uint8_t pad[3];
	uint32_t flags;			/* SYM_CACHE_DYNSYM_ONLY */
	uint8_t build_id[64];
	uint64_t nr_syms;		/* struct fsym entries after the header */
	uint64_t strings_bytes;		/* bytes of names after the entries */
	uint64_t checksum;		/* cache_file_checksum() (XXH3-64) of the
					 * bytes after the header: the entries,
					 * then the names; not of the header */
};

_Static_assert(sizeof(struct sym_cache_header) == 112, "no padding in the header");
_Static_assert(sizeof(struct sym_cache_header) % _Alignof(struct fsym) == 0,
	       "entries aligned in the file");

struct sym_cache {
	char *dir;
	struct sym_cache_stats st;
};

int sym_cache_open(const char *dir, struct sym_cache **out)
{
	struct sym_cache *c;

	if (!dir || !out)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

bool sym_cache_debug_installed(const uint8_t *id, size_t n)
{
	char path[BUILDID_DEBUG_PATH_MAX];

	return buildid_debug_path(id, n, path, sizeof(path)) == 0 && access(path, R_OK) == 0;
}

/* Whether @h describes a file of @file_size bytes holding @id's table. */
static bool header_ok(const struct sym_cache_header *h, const uint8_t *id, size_t id_size,
		      uint64_t file_size)
{
	if (memcmp(h->magic, SYM_CACHE_MAGIC, sizeof(h->magic)) || h->builder != SYM_BUILDER_ID ||
	    h->build_id_size != id_size || memcmp(h->build_id, id, id_size) ||
	    h->nr_syms > SYM_CACHE_MAX_SYMS || h->strings_bytes > SYM_CACHE_MAX_STRINGS)
		return false;
	return sizeof(*h) + h->nr_syms * sizeof(struct fsym) + h->strings_bytes == file_size;
}

/* Whether the entries' name offsets lie within the @bytes of names at
 * @strings, which end with a NUL, and the entries are sorted by address
 * (the lookup's binary search needs it). */
static bool entries_ok(const struct fsym *syms, uint64_t nr, const char *strings, uint64_t bytes)
{
	if (nr && (!bytes || strings[bytes - 1] != '\0'))
		return false;
	for (uint64_t i = 0; i < nr; i++)
		if ((uint64_t)(uintptr_t)syms[i].name >= bytes ||
		    (i && syms[i].addr < syms[i - 1].addr))
			return false;
	return true;
}

/* Read and check the table of @fd.  0, -ENOENT (a bad file), -ENOMEM. */
static int read_table(int fd, const uint8_t *id, size_t id_size, struct sym_cache_table *out)
{
	const struct sym_cache_header *h;
	struct stat st;
	uint8_t *base;
	size_t size, entry_bytes;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !cache_file_trusted(&st) ||
	    (uint64_t)st.st_size < sizeof(*h) ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return -ENOENT;
	size = (size_t)st.st_size;
	/* read-only: the page cache's pages mapped as they are (sym_cache.h) */
	base = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (base == MAP_FAILED)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	h = (const struct sym_cache_header *)base;
	if (!header_ok(h, id, id_size, size))
		goto bad;
	if ((h->flags & SYM_CACHE_DYNSYM_ONLY) && sym_cache_debug_installed(id, id_size))
		goto bad;
	entry_bytes = (size_t)h->nr_syms * sizeof(struct fsym);
	if (cache_file_checksum(&(const struct cache_part){ base + sizeof(*h),
							    entry_bytes + h->strings_bytes }, 1) !=
	    h->checksum)
		goto bad;
	out->syms = (const struct fsym *)(base + sizeof(*h));
	out->nr = (size_t)h->nr_syms;
	out->strings = (const char *)out->syms + entry_bytes;
	out->strings_bytes = (size_t)h->strings_bytes;
	if (!entries_ok(out->syms, h->nr_syms, out->strings, h->strings_bytes))
		goto bad;
	out->data = base;
	out->size = size;
	return 0;
bad:
	munmap(base, size);
	memset(out, 0, sizeof(*out));
	return -ENOENT;
}

/* cache_file_read()'s reader: read_table() with the id and the table. */
struct sym_read {
	const uint8_t *id;
	size_t id_size;
	struct sym_cache_table *out;
};

static int read_cb(int fd, void *ctx)
{
	struct sym_read *r = ctx;

	return read_table(fd, r->id, r->id_size, r->out);
}

int sym_cache_get(struct sym_cache *c, const uint8_t *id, size_t id_size,
		  struct sym_cache_table *out)
{
	struct sym_read r = { id, id_size, out };
	bool rejected;
	int err;

	memset(out, 0, sizeof(*out));
	if (!c || !id || id_size == 0 || id_size > 64)
		return -ENOENT;
	err = cache_file_read(c->dir, id, id_size, SYM_CACHE_SUFFIX, read_cb, &r, &rejected);
	if (err == -ENOENT) {
		c->st.misses++;
		c->st.rejected += rejected;
	} else if (!err) {
		c->st.hits++;
	}
	return err;
}

/* The file's body: the entries with name offsets, then the names.  NULL
 * without memory or past the format's bounds. */
static uint8_t *body(const struct fsym *syms, size_t nr, uint64_t *strings_bytes)
{
	size_t entry_bytes = nr * sizeof(struct fsym), pos = 0, total = 0;
	struct fsym *e;
	uint8_t *b;

	for (size_t i = 0; i < nr; i++)
		total += strlen(syms[i].name) + 1;
	if (total >= SYM_CACHE_MAX_STRINGS || nr > SYM_CACHE_MAX_SYMS ||
	    !(b = malloc(entry_bytes + total)))
		return NULL;
	e = (struct fsym *)b;
	for (size_t i = 0; i < nr; i++) {
		size_t len = strlen(syms[i].name) + 1;

		e[i] = (struct fsym){ .addr = syms[i].addr, .end = syms[i].end,
				      .name = (const char *)(uintptr_t)pos, .rank = syms[i].rank };
		memcpy(b + entry_bytes + pos, syms[i].name, len);
		pos += len;
	}
	*strings_bytes = total;
	return b;
}

int sym_cache_put(struct sym_cache *c, const uint8_t *id, size_t id_size, bool dynsym_only,
		  const struct fsym *syms, size_t nr)
{
	struct sym_cache_header h = { .builder = SYM_BUILDER_ID };
	size_t body_bytes;
	uint8_t *b;
	int err;

	if (!c || !id || !id_size || id_size > sizeof(h.build_id) || (nr && !syms))
		return -EINVAL;
	if (!(b = body(syms, nr, &h.strings_bytes)))
		return -EINVAL;
	memcpy(h.magic, SYM_CACHE_MAGIC, sizeof(h.magic));
	h.build_id_size = (uint8_t)id_size;
	memcpy(h.build_id, id, id_size);
	h.flags = dynsym_only ? SYM_CACHE_DYNSYM_ONLY : 0;
	h.nr_syms = nr;
	body_bytes = nr * sizeof(struct fsym) + h.strings_bytes;
	h.checksum = cache_file_checksum(&(const struct cache_part){ b, body_bytes }, 1);
	err = cache_file_write(c->dir, id, id_size, SYM_CACHE_SUFFIX,
			       (const struct cache_part[]){ { &h, sizeof(h) },
							    { b, body_bytes } }, 2);
	if (!err)
		c->st.stores++;
	free(b);
	return err;
}

void sym_cache_table_free(struct sym_cache_table *t)
{
	if (!t)
		return;
	if (t->data)
		munmap(t->data, t->size);
	memset(t, 0, sizeof(*t));
}

void sym_cache_stats(const struct sym_cache *c, struct sym_cache_stats *st)
{
	if (c)
		*st = c->st;
	else
		memset(st, 0, sizeof(*st));
}

void sym_cache_close(struct sym_cache *c)
{
	if (!c)
		return;
	free(c->dir);
	free(c);
}
