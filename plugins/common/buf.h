/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/buf.h - the plugins' one byte buffer (part of plugins/common/,
 * the internal library linked into every plugin).  Two kinds:
 *
 *  - in memory (buf_init()): grows as bytes are appended (realloc,
 *    doubling), for encoders that assemble a record, a message or a whole
 *    file and may patch it (buf_patch(), or b->data directly);
 *  - write-through (buf_init_file(), buf_init_sink()): a fixed buffer of
 *    a given size, handed to a FILE (or to a sink function) each time it
 *    is full and at buf_finish(), so a gigabyte of output costs few large
 *    writes and little memory.
 *
 * The first failure (-ENOMEM, or the sink's negative errno) is kept in
 * b->err and ends writing: later appends are dropped (a write-through
 * buffer discards its bytes at the next flush), so a writer checks once,
 * at the end.  The small appends are inline and cost a compare and a copy
 * while the buffer has room.
 *
 * Positions: buf_pos() counts every byte appended since the start,
 * flushed or not; bytes from position p on are still in the buffer (at
 * data + p - flushed) while p >= b->flushed.  Byte order: the buf_u16()
 * .. buf_u64() stores are the host's (a format with another order
 * converts first).
 */
#ifndef BPFPROF_COMMON_BUF_H
#define BPFPROF_COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The size of a write-through buffer for file output: few, large writes. */
#define BUF_WRITE_SIZE (1u << 20)

/*
 * A sink takes @n bytes at @p (in order, each byte once); 0 or a
 * negative errno.
 */
typedef int (*buf_sink_fn)(void *arg, const void *p, size_t n);

struct buf {
	uint8_t *data;
	size_t len;			/* bytes in data */
	size_t cap;			/* bytes allocated at data */
	uint64_t flushed;		/* bytes handed to the sink before data[0] */
	int err;			/* the first failure (negative errno), 0 if none */
	buf_sink_fn sink;		/* NULL: in memory, grows */
	void *sink_arg;
};

/* An empty in-memory buffer (no allocation yet; a zeroed struct buf is one too). */
void buf_init(struct buf *b);

/*
 * A write-through buffer of @size bytes (allocated here) whose full
 * contents go to @sink(@arg, ...).  Returns 0 or -ENOMEM (also in b->err).
 */
int buf_init_sink(struct buf *b, size_t size, buf_sink_fn sink, void *arg);

/* A write-through buffer of @size bytes to @file (fwrite()); 0 or -ENOMEM. */
int buf_init_file(struct buf *b, FILE *file, size_t size);

/*
 * The slow path of the appends: make room for @n more bytes (flush, or
 * grow).  Returns 0 or the buffer's error; a write-through buffer
 * smaller than @n returns -EFBIG after the flush (use buf_put() then).
 */
int buf_make_room(struct buf *b, size_t n);

/* Append @n bytes at @p of any size (a large block goes to the sink directly). */
void buf_put_slow(struct buf *b, const void *p, size_t n);

/* Append @n zero bytes. */
void buf_zero(struct buf *b, uint64_t n);

/*
 * Hand the buffered bytes to the sink (write-through only; in memory it
 * does nothing).  Returns 0 or the buffer's error.
 */
int buf_flush(struct buf *b);

/*
 * Write-through: flush the buffer and, for a FILE, its stdio buffer; in
 * memory: nothing.  Returns 0 or the first error (negative errno).  The
 * buffer stays allocated (buf_free()).
 */
int buf_finish(struct buf *b);

/*
 * Overwrite @n bytes at offset @off of the buffer's data (in memory, or
 * not flushed yet) with @p.  Returns 0, -EINVAL if they are not all
 * there (and b->err is set), or the buffer's earlier error.
 */
int buf_patch(struct buf *b, size_t off, const void *p, size_t n);

/* Forget the bytes, keep the memory and the error. */
void buf_reset(struct buf *b);

/* Free the memory; @b is an empty in-memory buffer again (error cleared). */
void buf_free(struct buf *b);

/* Bytes appended since the start (flushed ones included). */
static inline uint64_t buf_pos(const struct buf *b)
{
	return b->flushed + b->len;
}

/*
 * Room for @n more bytes, at the returned address; the caller stores
 * them there.  NULL after a failure (see buf_make_room()).
 */
static inline uint8_t *buf_reserve(struct buf *b, size_t n)
{
	uint8_t *p;

	if (n > b->cap - b->len && buf_make_room(b, n))
		return NULL;
	p = b->data + b->len;
	b->len += n;
	return p;
}

/* Append @n bytes at @p. */
static inline void buf_put(struct buf *b, const void *p, size_t n)
{
	if (n > b->cap - b->len) {
		buf_put_slow(b, p, n);
		return;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

static inline void buf_char(struct buf *b, char c)
{
	if (b->len == b->cap && buf_make_room(b, 1))
		return;
	b->data[b->len++] = (uint8_t)c;
}

/* Append the string @s without its NUL. */
static inline void buf_str(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

/* Append @v in decimal. */
static inline void buf_dec(struct buf *b, uint64_t v)
{
	char digits[20], *p = digits + sizeof(digits);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf_put(b, p, (size_t)(digits + sizeof(digits) - p));
}

/* Host-order integers. */
static inline void buf_u16(struct buf *b, uint16_t v)
{
	buf_put(b, &v, sizeof(v));
}

static inline void buf_u32(struct buf *b, uint32_t v)
{
	buf_put(b, &v, sizeof(v));
}

static inline void buf_u64(struct buf *b, uint64_t v)
{
	buf_put(b, &v, sizeof(v));
}

/*
 * Append @n <= 16 bytes at @s, from which 16 bytes are readable: one
 * fixed-size copy (no call for the many short pieces of a text format).
 */
static inline void buf_put16(struct buf *b, const void *s, size_t n)
{
	if (b->cap - b->len < 16) {
		buf_put(b, s, n);
		return;
	}
	memcpy(b->data + b->len, s, 16);
	b->len += n;
}

/*
 * Append @n bytes at @s, after which 32 more bytes are readable: copied
 * in blocks of 32 (inline moves, no call per piece).
 */
static inline void buf_put32(struct buf *b, const void *s, size_t n)
{
	if (b->cap - b->len < 32 || n > b->cap - b->len - 32) {
		buf_put(b, s, n);
		return;
	}
	for (size_t i = 0; i < n; i += 32)
		memcpy(b->data + b->len + i, (const uint8_t *)s + i, 32);
	b->len += n;
}

/*
 * Append again the @n bytes appended from position @from (buf_pos()) on,
 * if they are all still in the buffer and fit after it without a flush:
 * 1, else 0 (nothing appended).
 */
static inline int buf_again(struct buf *b, uint64_t from, size_t n)
{
	if (from < b->flushed || n > b->cap - b->len)
		return 0;
	memcpy(b->data + b->len, b->data + (from - b->flushed), n);
	b->len += n;
	return 1;
}

#endif /* BPFPROF_COMMON_BUF_H */
