// SPDX-License-Identifier: BSD-2-Clause
/*
 * py_cache.c - owns the on-disk cache of interpreter files' facts by
 * build-id (py_cache.h): the file format, its checks, reading and writing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_file.h"
#include "py_cache.h"
#include "symbols/sym_cache.h"

#ifndef PY_BUILDER_ID
#define PY_BUILDER_ID 0ull
#endif

#define PY_CACHE_MAGIC "BPFPPY01"
#define PY_CACHE_MAX_SEGMENTS 64u		/* anything more is corrupt */
#define PY_CACHE_IS_PYTHON 1u			/* header flags */
#define PY_CACHE_NO_COLD 2u			/* no .cold part found: stale once a
						 * debug file is installed */

/* The first bytes of a cache file (160 bytes). */
struct py_cache_header {
	char magic[8];			/* PY_CACHE_MAGIC */
	uint64_t builder;		/* PY_BUILDER_ID of the writer */
	uint8_t build_id_size;		/* 1..64 */
	uint8_t pad[3];
	uint32_t flags;			/* PY_CACHE_IS_PYTHON, PY_CACHE_NO_COLD */
	uint8_t build_id[64];
	uint32_t minor;			/* struct py_file's */
	uint32_t nr_segments;		/* struct elf_segment entries after the header */
	uint64_t e_type;		/* the segments' ELF type */
	uint64_t runtime;		/* struct py_file's, ELF vaddrs */
	uint64_t code_type;
	uint64_t eval[2][2];
	uint64_t checksum;		/* cache_file_checksum() of the header up
					 * to this field, then the segments */
};

_Static_assert(sizeof(struct py_cache_header) == 160, "no padding in the header");
_Static_assert(sizeof(struct py_cache_header) % _Alignof(struct elf_segment) == 0,
	       "segments aligned in the file");

static uint64_t checksum_of(const struct py_cache_header *h, const struct elf_segment *segs)
{
	const struct cache_part parts[2] = {
		{ h, offsetof(struct py_cache_header, checksum) },
		{ segs, (size_t)h->nr_segments * sizeof(*segs) },
	};

	return cache_file_checksum(parts, 2);
}

/* Whether @h, from a file of @file_size bytes, holds @id's facts. */
static bool header_ok(const struct py_cache_header *h, const uint8_t *id, size_t id_size,
		      uint64_t file_size)
{
	if (memcmp(h->magic, PY_CACHE_MAGIC, sizeof(h->magic)) || h->builder != PY_BUILDER_ID ||
	    h->build_id_size != id_size || memcmp(h->build_id, id, id_size) ||
	    h->nr_segments > PY_CACHE_MAX_SEGMENTS)
		return false;
	return sizeof(*h) + h->nr_segments * sizeof(struct elf_segment) == file_size;
}

/* cache_file_read()'s reader: the build-id and where the facts go. */
struct py_read {
	const uint8_t *id;
	size_t id_size;
	struct py_file *f;
};

/* Read and check the facts of @fd.  0, -ENOENT (a bad or stale file),
 * -ENOMEM. */
static int read_cb(int fd, void *ctx)
{
	struct py_read *r = ctx;
	struct py_cache_header h;
	struct elf_segment *segs = NULL;
	struct stat st;
	size_t seg_bytes;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !cache_file_trusted(&st) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    !header_ok(&h, r->id, r->id_size, (uint64_t)st.st_size))
		return -ENOENT;
	seg_bytes = (size_t)h.nr_segments * sizeof(*segs);
	if (seg_bytes && !(segs = malloc(seg_bytes)))
		return -ENOMEM;
	if ((seg_bytes && pread(fd, segs, seg_bytes, sizeof(h)) != (ssize_t)seg_bytes) ||
	    checksum_of(&h, segs) != h.checksum ||
	    ((h.flags & PY_CACHE_NO_COLD) && sym_cache_debug_installed(r->id, r->id_size))) {
		free(segs);
		return -ENOENT;
	}
	r->f->minor = h.minor;
	r->f->layout = py_layout_find(h.minor);
	r->f->is_python = (h.flags & PY_CACHE_IS_PYTHON) && r->f->layout;
	r->f->runtime = h.runtime;
	r->f->code_type = h.code_type;
	memcpy(r->f->eval, h.eval, sizeof(h.eval));
	r->f->segs = (struct elf_segments){ .segs = segs, .nr = h.nr_segments,
					    .e_type = (uint16_t)h.e_type };
	return 0;
}

int py_cache_get(const char *dir, const uint8_t *id, size_t id_size, struct py_file *f)
{
	struct py_read r = { id, id_size, f };
	bool rejected;

	if (!dir || !id || id_size == 0 || id_size > 64)
		return -ENOENT;
	return cache_file_read(dir, id, id_size, PY_CACHE_SUFFIX, read_cb, &r, &rejected);
}

int py_cache_put(const char *dir, const uint8_t *id, size_t id_size, const struct py_file *f)
{
	struct py_cache_header h = { .builder = PY_BUILDER_ID };

	if (!dir || !id || id_size == 0 || id_size > sizeof(h.build_id) ||
	    f->segs.nr > PY_CACHE_MAX_SEGMENTS)
		return -EINVAL;
	memcpy(h.magic, PY_CACHE_MAGIC, sizeof(h.magic));
	h.build_id_size = (uint8_t)id_size;
	memcpy(h.build_id, id, id_size);
	h.flags = (f->is_python ? PY_CACHE_IS_PYTHON : 0) | (f->eval[1][0] ? 0 : PY_CACHE_NO_COLD);
	h.minor = f->minor;
	h.nr_segments = (uint32_t)f->segs.nr;
	h.e_type = f->segs.e_type;
	h.runtime = f->runtime;
	h.code_type = f->code_type;
	memcpy(h.eval, f->eval, sizeof(h.eval));
	h.checksum = checksum_of(&h, f->segs.segs);
	return cache_file_write(dir, id, id_size, PY_CACHE_SUFFIX,
				(const struct cache_part[]){
					{ &h, sizeof(h) },
					{ f->segs.segs, f->segs.nr * sizeof(*f->segs.segs) } },
				2);
}
