/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * foldout.h - the buffered output of the folded and flamegraph plugins
 * (compiled into each, like fold.h): bytes are collected in a buffer of
 * FOLD_OUT_SIZE and handed to the output FILE one buffer at a time, which
 * stdio passes to write() as it is (a folded profile can be a gigabyte of
 * text: few, large writes).  The first failure is kept and ends writing.
 * Consecutive lines share long prefixes: fold_out_again() repeats bytes
 * still in the buffer (from a fold_out_mark()) with one copy.
 */
#ifndef BPFPROF_FOLDOUT_H
#define BPFPROF_FOLDOUT_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_OUT_SIZE (1u << 20)

struct fold_out {
	FILE *file;
	char *buf;
	size_t len;
	size_t flushes;			/* times the buffer was emptied */
	int err;			/* errno of the first failure, 0 if none */
};

static int fold_out_init(struct fold_out *o, FILE *file)
{
	o->file = file;
	o->len = 0;
	o->flushes = 0;
	o->err = 0;
	o->buf = malloc(FOLD_OUT_SIZE);
	return o->buf ? 0 : -ENOMEM;
}

/* Write @n bytes at @s to the file, unless writing failed before. */
static void fold_out_write(struct fold_out *o, const void *s, size_t n)
{
	if (o->err || !n)
		return;
	errno = 0;
	if (fwrite(s, 1, n, o->file) != n)
		o->err = errno ? errno : EIO;
}

static void fold_out_flush(struct fold_out *o)
{
	fold_out_write(o, o->buf, o->len);
	o->len = 0;
	o->flushes++;
}

static inline void fold_out_put(struct fold_out *o, const void *s, size_t n)
{
	if (n > FOLD_OUT_SIZE - o->len) {
		fold_out_flush(o);
		if (n > FOLD_OUT_SIZE) {
			fold_out_write(o, s, n);
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static inline void fold_out_str(struct fold_out *o, const char *s)
{
	fold_out_put(o, s, strlen(s));
}

static inline void fold_out_char(struct fold_out *o, char c)
{
	if (o->len == FOLD_OUT_SIZE)
		fold_out_flush(o);
	o->buf[o->len++] = c;
}

/* @v in decimal. */
static inline void fold_out_u64(struct fold_out *o, uint64_t v)
{
	char digits[20], *p = digits + sizeof(digits);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fold_out_put(o, p, (size_t)(digits + sizeof(digits) - p));
}

/* @n <= 16 bytes at @s, which has 16 readable bytes: one fixed-size copy. */
static inline void fold_out_small(struct fold_out *o, const char *s, size_t n)
{
	if (FOLD_OUT_SIZE - o->len < 16) {
		fold_out_put(o, s, n);
		return;
	}
	memcpy(o->buf + o->len, s, 16);
	o->len += n;
}

/*
 * @n bytes at @s, which has 32 readable bytes after them: copied in blocks
 * of 32 (inline moves, no call per piece).
 */
static inline void fold_out_piece(struct fold_out *o, const char *s, size_t n)
{
	if (FOLD_OUT_SIZE - o->len < n + 32) {
		fold_out_put(o, s, n);
		return;
	}
	for (size_t i = 0; i < n; i += 32)
		memcpy(o->buf + o->len + i, s + i, 32);
	o->len += n;
}

/* Where the next byte goes: a mark for fold_out_again(). */
struct fold_out_mark {
	size_t flushes, off;
};

static inline struct fold_out_mark fold_out_mark(const struct fold_out *o)
{
	return (struct fold_out_mark){ .flushes = o->flushes, .off = o->len };
}

/*
 * Repeat the @n bytes written from @m on, if they are still in the buffer
 * and fit after them: 1, else 0 (nothing written).
 */
static inline int fold_out_again(struct fold_out *o, struct fold_out_mark m, size_t n)
{
	if (m.flushes != o->flushes || n > FOLD_OUT_SIZE - o->len)
		return 0;
	memcpy(o->buf + o->len, o->buf + m.off, n);
	o->len += n;
	return 1;
}

/* Flush everything to the file and its stdio buffer to the kernel: 0 or -errno. */
static int fold_out_finish(struct fold_out *o)
{
	fold_out_flush(o);
	free(o->buf);
	o->buf = NULL;
	errno = 0;
	if (!o->err && (fflush(o->file) || ferror(o->file)))
		o->err = errno ? errno : EIO;
	return -o->err;
}

#endif /* BPFPROF_FOLDOUT_H */
