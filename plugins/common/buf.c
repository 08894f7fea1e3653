// SPDX-License-Identifier: BSD-2-Clause
/*
 * common/buf.c - the out-of-line parts of the plugins' byte buffer
 * (common/buf.h): set-up, growth, flushes to the sink or FILE, patches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

/* The capacity an in-memory buffer starts with. */
#define BUF_MIN 256u

void buf_init(struct buf *b)
{
	memset(b, 0, sizeof(*b));
}

int buf_init_sink(struct buf *b, size_t size, buf_sink_fn sink, void *arg)
{
	buf_init(b);
	b->sink = sink;
	b->sink_arg = arg;
	b->data = malloc(size ? size : 1);
	if (!b->data)
		b->err = -ENOMEM;
	else
		b->cap = size ? size : 1;
	return b->err;
}

/* The sink of buf_init_file(): fwrite() to the FILE @arg. */
static int file_sink(void *arg, const void *p, size_t n)
{
	errno = 0;
	if (fwrite(p, 1, n, arg) != n)
		return errno ? -errno : -EIO;
	return 0;
}

int buf_init_file(struct buf *b, FILE *file, size_t size)
{
	return buf_init_sink(b, size, file_sink, file);
}

int buf_flush(struct buf *b)
{
	if (!b->sink)
		return b->err;
	if (b->len && !b->err)
		b->err = b->sink(b->sink_arg, b->data, b->len);
	b->flushed += b->len;
	b->len = 0;
	return b->err;
}

/* An in-memory buffer with room for @n more bytes; 0 or -ENOMEM (kept). */
static int grow(struct buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : BUF_MIN;
	uint8_t *p;

	if (n > SIZE_MAX / 2 - b->len) {
		b->err = -ENOMEM;
		return b->err;
	}
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->err = -ENOMEM;
		return b->err;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_make_room(struct buf *b, size_t n)
{
	if (b->err) {
		if (b->sink)
			b->len = 0;	/* dropped: writing ended */
		return b->err;
	}
	if (n <= b->cap - b->len)
		return 0;
	if (!b->sink)
		return grow(b, n);
	if (buf_flush(b))
		return b->err;
	return n <= b->cap ? 0 : -EFBIG;
}

void buf_put_slow(struct buf *b, const void *p, size_t n)
{
	int err = buf_make_room(b, n);

	if (err == -EFBIG) {		/* larger than the buffer: to the sink */
		b->err = b->sink(b->sink_arg, p, n);
		b->flushed += n;
		return;
	}
	if (err)
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void buf_zero(struct buf *b, uint64_t n)
{
	static const uint8_t zeros[256];

	while (n && !b->err) {
		size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);

		buf_put(b, zeros, k);
		n -= k;
	}
}

int buf_finish(struct buf *b)
{
	FILE *file = b->sink == file_sink ? b->sink_arg : NULL;

	if (buf_flush(b) || !file)
		return b->err;
	errno = 0;
	if (fflush(file) || ferror(file))
		b->err = errno ? -errno : -EIO;
	return b->err;
}

int buf_patch(struct buf *b, size_t off, const void *p, size_t n)
{
	if (b->err)
		return b->err;
	if (off > b->len || n > b->len - off) {
		b->err = -EINVAL;
		return b->err;
	}
	memcpy(b->data + off, p, n);
	return 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}
