// SPDX-License-Identifier: BSD-2-Clause
/*
 * bw.c - the HPCToolkit plugin's binary writer: little-endian integers,
 * doubles, strings and padding, buffered to a file descriptor (with
 * pwrite() patches of headers written last) or collected in memory (for
 * the byte-level unit tests).  The small fixed-size writes (bw_u8() ..
 * bw_f64(), bw_bytes()) are inline in hpc.h and come here (bw_write()) only
 * when the buffer is full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpc.h"

#define BW_FILE_BUF (1u << 20)

int bw_init_at(struct bw *w, int fd, uint64_t off, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->off = w->buf_off = off;
	w->cap = cap;
	w->buf = malloc(w->cap);
	if (!w->buf)
		w->err = -ENOMEM;
	return w->err;
}

int bw_init_fd(struct bw *w, int fd)
{
	return bw_init_at(w, fd, 0, BW_FILE_BUF);
}

void bw_init_mem(struct bw *w)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}

static int bw_flush(struct bw *w)
{
	size_t done = 0;

	if (w->fd < 0)
		return w->err;
	while (done < w->len && !w->err) {
		ssize_t r = pwrite(w->fd, w->buf + done, w->len - done, w->buf_off + done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			w->err = r < 0 ? -errno : -EIO;
		else
			done += r;
	}
	w->buf_off += w->len;
	w->len = 0;
	return w->err;
}

void bw_write(struct bw *w, const void *p, size_t n)
{
	if (w->err || !n)
		return;
	if (w->fd >= 0) {
		if (w->len + n > w->cap && bw_flush(w))
			return;
		if (n > w->cap) {	/* large: write through */
			w->len = 0;
			for (size_t i = 0; i < n && !w->err; i += w->cap) {
				size_t k = n - i < w->cap ? n - i : w->cap;

				memcpy(w->buf, (const uint8_t *)p + i, k);
				w->len = k;
				bw_flush(w);
			}
			w->off += n;
			return;
		}
	} else if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 256;
		uint8_t *b;

		while (cap < w->len + n)
			cap *= 2;
		b = realloc(w->buf, cap);
		if (!b) {
			w->err = -ENOMEM;
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	w->off += n;
}

void bw_str(struct bw *w, const char *s)
{
	bw_bytes(w, s, strlen(s) + 1);
}

void bw_zero(struct bw *w, uint64_t n)
{
	static const uint8_t z[256];

	while (n && !w->err) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		bw_bytes(w, z, k);
		n -= k;
	}
}

void bw_align(struct bw *w, unsigned a)
{
	bw_zero(w, align_up(w->off, a) - w->off);
}

void bw_seek(struct bw *w, uint64_t off)
{
	if (off < w->off) {
		if (!w->err)
			w->err = -EINVAL;
		return;
	}
	if (w->fd < 0) {
		bw_zero(w, off - w->off);
		return;
	}
	if (bw_flush(w))
		return;
	w->off = w->buf_off = off;
}

void bw_patch(struct bw *w, uint64_t off, const void *p, size_t n)
{
	if (w->err)
		return;
	if (w->fd < 0) {
		if (off + n > w->len) {
			w->err = -EINVAL;
			return;
		}
		memcpy(w->buf + off, p, n);
		return;
	}
	if (off + n > w->buf_off && bw_flush(w))
		return;
	while (n) {
		ssize_t r = pwrite(w->fd, p, n, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			w->err = r < 0 ? -errno : -EIO;
			return;
		}
		p = (const uint8_t *)p + r;
		n -= r;
		off += r;
	}
}

int bw_finish(struct bw *w)
{
	return bw_flush(w);
}

void bw_free(struct bw *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}
