/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * merge/raw_parse.h - bounds-checked little-endian reading of one block
 * of a raw measurement in memory, shared by raw_read.c (the tables) and
 * raw_events.c (the event records).  A failed read sets r->bad and
 * returns 0 / NULL; callers check r->bad once per structure.  Not for
 * use outside user/merge/.
 */
#ifndef BPFPROF_RAW_PARSE_H
#define BPFPROF_RAW_PARSE_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "bpfprof/plugin.h"
#include "bpfprof/raw_format.h"
#include "merge/raw_read.h"

struct rd {
	uint8_t *p;			/* the block (writable: converted in place) */
	size_t len, off;
	bool bad;
};

static inline bool rd_has(struct rd *r, size_t n)
{
	if (r->bad || n > r->len - r->off)
		r->bad = true;
	return !r->bad;
}

static inline uint32_t rd_u32(struct rd *r)
{
	uint32_t v = 0;

	if (rd_has(r, 4))
		memcpy(&v, r->p + r->off, 4);
	r->off += r->bad ? 0 : 4;
	return le32toh(v);
}

static inline uint64_t rd_u64(struct rd *r)
{
	uint64_t v = 0;

	if (rd_has(r, 8))
		memcpy(&v, r->p + r->off, 8);
	r->off += r->bad ? 0 : 8;
	return le64toh(v);
}

/* @n bytes in place, or NULL. */
static inline uint8_t *rd_bytes(struct rd *r, size_t n)
{
	uint8_t *at = r->p + r->off;

	if (!rd_has(r, n))
		return NULL;
	r->off += n;
	return at;
}

/* A string in place: u32 length (with the NUL), bytes, NUL. */
static inline const char *rd_str(struct rd *r)
{
	uint32_t n = rd_u32(r);
	uint8_t *s;

	if (r->bad || n == 0 || n > RAW_MAX_STRING || !(s = rd_bytes(r, n)) || s[n - 1] != 0) {
		r->bad = true;
		return NULL;
	}
	return (const char *)s;
}

/* An element count that @min_size bytes each must fit in what is left. */
static inline uint32_t rd_count(struct rd *r, size_t min_size)
{
	uint32_t n = rd_u32(r);

	rd_u32(r);	/* reserved */
	if (!r->bad && (uint64_t)n * min_size > r->len - r->off)
		r->bad = true;
	return r->bad ? 0 : n;
}

/* One mapping (docs/RAW.md: mapping).  0, or -1 with r->bad set. */
static inline int rd_mapping(struct rd *r, struct bpfprof_mapping *m)
{
	memset(m, 0, sizeof(*m));
	m->start = rd_u64(r);
	m->end = rd_u64(r);
	m->pgoff = rd_u64(r);
	m->inode = rd_u64(r);
	m->prot = rd_u32(r);
	m->shared = rd_u32(r);
	m->dev_major = rd_u32(r);
	m->dev_minor = rd_u32(r);
	m->build_id_size = rd_u32(r);
	rd_u32(r);
	if (r->bad || m->build_id_size > RAW_MAX_BUILD_ID || m->start >= m->end ||
	    m->shared > 1 || m->prot > 7) {
		r->bad = true;
		return -1;
	}
	m->build_id = m->build_id_size ? rd_bytes(r, m->build_id_size) : NULL;
	m->path = rd_str(r);
	return r->bad ? -1 : 0;
}

/* raw_events.c: check every event record of @rf (indices against its
 * stacks), count them and note the first time.  0 or negative errno with
 * the reason in @why. */
int raw_events_check(struct raw_file *rf, char *why);

#endif /* BPFPROF_RAW_PARSE_H */
