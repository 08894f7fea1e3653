// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_gzip.c - the pprof plugin's gzip stream: the encoder writes the
 * Profile into a buffer (pprof_gz_buf()); each full buffer goes through
 * zlib's deflate into the output file, one gzip member (RFC 1952).
 *
 * Compression runs in a thread of its own, so that encoding and deflate
 * overlap: the encoder fills a ring of buffers (allocated as needed) and
 * may run up to GZ_QUEUE of them ahead of the thread, which absorbs the
 * bursts of either side (many counts of a popular stack encode fast, a
 * rare one costs lookups).  The thread only compresses and writes the
 * file; it never calls the host, and it is joined before
 * pprof_gz_finish() or pprof_gz_free() returns, on every path.  If it
 * cannot be started, the encoder compresses each buffer itself.
 *
 * Compression level: Z_BEST_SPEED (1).  Go's runtime/pprof writes its
 * profiles with gzip.BestSpeed, so that is what pprof users get from Go
 * anyway.  Measured on the profile of tests/bench/writers.c as this plugin
 * writes it (138 MB of protobuf; zlib 1.2.13, 2-vCPU KVM guest): level 1
 * gives 31.1 MB in 0.88 s of CPU, level 2 30.9 MB in 0.94 s, level 3
 * 30.7 MB in 1.20 s, zlib's default level 6 29.3 MB in 2.92 s.  So level
 * 1 costs 6% more bytes than the default and saves 70% of the time;
 * Z_FIXED or a larger memLevel do not help.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "bpfprof/plugin.h"
#include "pprof.h"

#define GZ_OUT_SIZE (256u * 1024)
#define GZ_QUEUE 32u			/* buffers of about PPROF_CHUNK bytes */

/* What the compressor (thread) reports; the encoder turns it into a message. */
struct gz_result {
	int err;			/* 0 or a negative errno */
	int zerr;			/* zlib's code if deflate() failed, else Z_OK */
};

struct pprof_gz {
	const struct bpfprof_host *host;
	const struct bpfprof_output *out;
	z_stream z;
	int z_ready;			/* deflateInit2() succeeded */
	unsigned char *zout;		/* GZ_OUT_SIZE bytes of compressed output */

	struct buf bufs[GZ_QUEUE];	/* the ring */
	unsigned fill;			/* the buffer the encoder fills */

	/* Shared with the thread, under lock. */
	pthread_t thread;
	int threaded;			/* the thread runs */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned next;			/* the next buffer to compress */
	unsigned queued;		/* buffers handed over, not compressed yet */
	int finish;			/* the last one queued ends the member */
	int quit;			/* the thread must return */
	struct gz_result result;	/* sticky: the first failure */
};

/* Write @n compressed bytes to the file; 0 or -errno. */
static int write_out(struct pprof_gz *gz, size_t n, struct gz_result *r)
{
	errno = 0;
	if (n && fwrite(gz->zout, 1, n, gz->out->file) != n) {
		r->err = -(errno ? errno : EIO);
		return r->err;
	}
	return 0;
}

/* Deflate @len bytes at @data with @flush (Z_NO_FLUSH or Z_FINISH) and
 * write what comes out (the zpipe.c loop of zlib's documentation). */
static void deflate_bytes(struct pprof_gz *gz, const uint8_t *data, size_t len, int flush,
			  struct gz_result *r)
{
	z_stream *z = &gz->z;
	int zr = Z_OK;

	z->next_in = (Bytef *)data;
	do {
		/* deflate() takes at most UINT_MAX bytes per call. */
		uInt in = len > (1u << 30) ? (1u << 30) : (uInt)len;

		len -= in;
		z->avail_in = in;
		do {
			z->next_out = gz->zout;
			z->avail_out = GZ_OUT_SIZE;
			zr = deflate(z, len ? Z_NO_FLUSH : flush);
			if (zr == Z_STREAM_ERROR)
				break;
			if (write_out(gz, GZ_OUT_SIZE - z->avail_out, r))
				return;
		} while (z->avail_out == 0);
	} while (len && zr != Z_STREAM_ERROR);
	if (zr == Z_STREAM_ERROR || z->avail_in || (flush == Z_FINISH && zr != Z_STREAM_END)) {
		r->err = -EIO;
		r->zerr = zr;
	}
}

/* Compress buffer @i (the last one if @finish), then empty it. */
static void compress_buf(struct pprof_gz *gz, int i, int finish, struct gz_result *r)
{
	if (!r->err)
		deflate_bytes(gz, gz->bufs[i].data, gz->bufs[i].len,
			      finish ? Z_FINISH : Z_NO_FLUSH, r);
	buf_reset(&gz->bufs[i]);
}

static void *compressor(void *arg)
{
	struct pprof_gz *gz = arg;
	struct gz_result r = { 0 };

	pthread_mutex_lock(&gz->lock);
	for (;;) {
		unsigned i;
		int finish;

		while (!gz->queued && !gz->quit)
			pthread_cond_wait(&gz->cond, &gz->lock);
		if (gz->quit)
			break;
		i = gz->next;
		finish = gz->finish && gz->queued == 1;	/* the last one */
		pthread_mutex_unlock(&gz->lock);
		compress_buf(gz, (int)i, finish, &r);
		pthread_mutex_lock(&gz->lock);
		if (r.err && !gz->result.err)
			gz->result = r;
		gz->next = (i + 1) % GZ_QUEUE;
		gz->queued--;
		pthread_cond_broadcast(&gz->cond);
	}
	pthread_mutex_unlock(&gz->lock);
	return NULL;
}

/* Turn a failure of the compressor into a message; returns its error. */
static int report(struct pprof_gz *gz, const struct gz_result *r)
{
	if (r->zerr != Z_OK)
		gz->host->error(gz->host, "pprof: gzip compression failed (%d)", r->zerr);
	else if (r->err)
		gz->host->error(gz->host, "pprof: cannot write %s: %s", gz->out->path,
				strerror(-r->err));
	return r->err;
}

/* Wait until no more than @max buffers are queued; the result so far. */
static struct gz_result wait_queued(struct pprof_gz *gz, unsigned max)
{
	struct gz_result r;

	pthread_mutex_lock(&gz->lock);
	while (gz->queued > max)
		pthread_cond_wait(&gz->cond, &gz->lock);
	r = gz->result;
	pthread_mutex_unlock(&gz->lock);
	return r;
}

/* Hand the buffer being filled to the compressor, go on with the next
 * one of the ring once it is free. */
static int hand_over(struct pprof_gz *gz, int finish)
{
	struct gz_result r;

	if (!gz->threaded) {
		compress_buf(gz, (int)gz->fill, finish, &gz->result);
		return report(gz, &gz->result);
	}
	pthread_mutex_lock(&gz->lock);
	gz->finish = finish;
	gz->queued++;
	pthread_cond_broadcast(&gz->cond);
	pthread_mutex_unlock(&gz->lock);
	gz->fill = (gz->fill + 1) % GZ_QUEUE;
	r = wait_queued(gz, GZ_QUEUE - 1);
	return r.err ? report(gz, &r) : 0;
}

static void stop_thread(struct pprof_gz *gz)
{
	if (!gz->threaded)
		return;
	pthread_mutex_lock(&gz->lock);
	gz->quit = 1;
	pthread_cond_broadcast(&gz->cond);
	pthread_mutex_unlock(&gz->lock);
	pthread_join(gz->thread, NULL);
	pthread_cond_destroy(&gz->cond);
	pthread_mutex_destroy(&gz->lock);
	gz->threaded = 0;
}

static void start_thread(struct pprof_gz *gz)
{
	if (pthread_mutex_init(&gz->lock, NULL))
		return;
	if (pthread_cond_init(&gz->cond, NULL)) {
		pthread_mutex_destroy(&gz->lock);
		return;
	}
	gz->threaded = pthread_create(&gz->thread, NULL, compressor, gz) == 0;
	if (!gz->threaded) {
		pthread_cond_destroy(&gz->cond);
		pthread_mutex_destroy(&gz->lock);
	}
}

int pprof_gz_open(struct pprof_gz **gzp, const struct bpfprof_host *host,
		  const struct bpfprof_output *out)
{
	struct pprof_gz *gz = calloc(1, sizeof(*gz));

	*gzp = gz;
	if (!gz || !(gz->zout = malloc(GZ_OUT_SIZE))) {
		host->error(host, "pprof: out of memory");
		return -ENOMEM;
	}
	gz->host = host;
	gz->out = out;
	/* 15 window bits + 16: a gzip header and trailer instead of zlib's. */
	if (deflateInit2(&gz->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		host->error(host, "pprof: cannot start gzip compression");
		return -ENOMEM;
	}
	gz->z_ready = 1;
	start_thread(gz);
	return 0;
}

struct buf *pprof_gz_buf(struct pprof_gz *gz)
{
	return &gz->bufs[gz->fill];
}

int pprof_gz_flush(struct pprof_gz *gz)
{
	struct buf *b = &gz->bufs[gz->fill];

	if (b->err) {
		gz->host->error(gz->host, "pprof: out of memory");
		return -ENOMEM;
	}
	return b->len >= PPROF_CHUNK ? hand_over(gz, 0) : 0;
}

int pprof_gz_finish(struct pprof_gz *gz)
{
	struct gz_result r;
	int err;

	if (gz->bufs[gz->fill].err) {
		gz->host->error(gz->host, "pprof: out of memory");
		return -ENOMEM;
	}
	err = hand_over(gz, 1);
	if (err)
		return err;
	if (gz->threaded) {
		r = wait_queued(gz, 0);
		stop_thread(gz);
		if (r.err)
			return report(gz, &r);
	}
	errno = 0;
	if (fflush(gz->out->file) || ferror(gz->out->file)) {
		err = errno ? errno : EIO;
		gz->host->error(gz->host, "pprof: cannot write %s: %s", gz->out->path,
				strerror(err));
		return -err;
	}
	return 0;
}

void pprof_gz_free(struct pprof_gz *gz)
{
	if (!gz)
		return;
	stop_thread(gz);
	if (gz->z_ready)
		deflateEnd(&gz->z);
	for (unsigned i = 0; i < GZ_QUEUE; i++)
		buf_free(&gz->bufs[i]);
	free(gz->zout);
	free(gz);
}
