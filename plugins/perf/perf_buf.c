// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugins/perf/perf_buf.c - the growable byte buffer the perf.data plugin
 * assembles records and header structures in before they reach the file.
 * Values are stored in host byte order (perf.data is native-endian).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf_internal.h"

static int pbuf_reserve(struct pbuf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->err)
		return b->err;
	if (b->len + n <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return b->err;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void pbuf_reset(struct pbuf *b)
{
	b->len = 0;
	b->err = 0;
}

void pbuf_free(struct pbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}

void pbuf_put(struct pbuf *b, const void *src, size_t n)
{
	if (!n || pbuf_reserve(b, n))
		return;
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

void pbuf_put_zero(struct pbuf *b, size_t n)
{
	if (!n || pbuf_reserve(b, n))
		return;
	memset(b->p + b->len, 0, n);
	b->len += n;
}

void pbuf_put_u16(struct pbuf *b, uint16_t v)
{
	pbuf_put(b, &v, sizeof(v));
}

void pbuf_put_u32(struct pbuf *b, uint32_t v)
{
	pbuf_put(b, &v, sizeof(v));
}

void pbuf_put_u64(struct pbuf *b, uint64_t v)
{
	pbuf_put(b, &v, sizeof(v));
}

void pbuf_set_u16(struct pbuf *b, size_t off, uint16_t v)
{
	if (!b->err && off + sizeof(v) <= b->len)
		memcpy(b->p + off, &v, sizeof(v));
}

void pbuf_set_u64(struct pbuf *b, size_t off, uint64_t v)
{
	if (!b->err && off + sizeof(v) <= b->len)
		memcpy(b->p + off, &v, sizeof(v));
}
