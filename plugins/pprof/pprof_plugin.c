// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_plugin.c - the "pprof" output plugin: a gzip-compressed
 * profile.proto message (the format of `go tool pprof`, Pyroscope, Parca,
 * Google Cloud Profiler), default output bpfprof.pb.gz.  One file holds
 * every profiled process; samples carry pid/tid/comm/thread labels and
 * kernel frames (mapping "[kernel.kallsyms]").  This file owns the plugin
 * entry points and the gzip stream; the tables are built by pprof_build.c
 * and encoded by pprof_messages.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "bpfprof/plugin.h"
#include "pprof.h"

struct pprof_state {
	const struct bpfprof_host *host;
	const struct bpfprof_output *out;
};

/* gzip @len bytes of @data into @f (RFC 1952 member, zlib's deflate). */
static int write_gzip(struct pprof_state *st, const uint8_t *data, size_t len)
{
	unsigned char chunk[64 * 1024];
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	/* 15 window bits + 16: a gzip header and trailer instead of zlib's. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		st->host->error(st->host, "pprof: cannot start gzip compression");
		return -ENOMEM;
	}
	z.next_in = (Bytef *)data;
	do {
		/* deflate() takes at most UINT_MAX bytes per call. */
		size_t room = len - (size_t)((const uint8_t *)z.next_in - data);

		z.avail_in = room > (1u << 30) ? (1u << 30) : (uInt)room;
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, z.avail_in == room ? Z_FINISH : Z_NO_FLUSH);
		size_t n = sizeof(chunk) - z.avail_out;
		errno = 0;
		if (n && fwrite(chunk, 1, n, st->out->file) != n) {
			int err = errno ? errno : EIO;

			deflateEnd(&z);
			st->host->error(st->host, "pprof: cannot write %s: %s", st->out->path,
					strerror(err));
			return -err;
		}
	} while (zr == Z_OK || zr == Z_BUF_ERROR);
	deflateEnd(&z);
	if (zr != Z_STREAM_END) {
		st->host->error(st->host, "pprof: gzip compression failed (%d)", zr);
		return -EIO;
	}
	return 0;
}

static int pprof_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		      const struct bpfprof_output *out, void **state)
{
	struct pprof_state *st = calloc(1, sizeof(*st));

	if (!st) {
		host->error(host, "pprof: out of memory");
		return -ENOMEM;
	}
	st->host = host;
	st->out = out;
	*state = st;
	return 0;
}

static int pprof_write(void *state, const struct bpfprof_profile *prof)
{
	struct pprof_state *st = state;
	struct pprof_profile p;
	struct pb_buf buf = { 0 };
	int err;

	err = pprof_build(&p, st->host, prof);
	if (!err) {
		err = write_profile(&buf, &p);
		if (err)
			st->host->error(st->host, "pprof: out of memory");
	}
	if (!err)
		err = write_gzip(st, buf.data, buf.len);
	if (!err) {
		errno = 0;
		if (fflush(st->out->file) || ferror(st->out->file)) {
			err = errno ? -errno : -EIO;
			st->host->error(st->host, "pprof: cannot write %s: %s", st->out->path,
					strerror(-err));
		}
	}
	pb_free(&buf);
	pprof_free(&p);
	return err;
}

static void pprof_close(void *state)
{
	free(state);
}

static const struct bpfprof_plugin pprof_plugin = {
	.abi_version = BPFPROF_PLUGIN_ABI_VERSION,
	.flags = 0,
	.name = "pprof",
	.description = "pprof profile.proto, gzipped (go tool pprof, Pyroscope, Parca; "
		       "all processes, kernel frames, pid/tid labels)",
	.default_output = "bpfprof.pb.gz",
	.open = pprof_open,
	.event = NULL,
	.write = pprof_write,
	.close = pprof_close,
};

BPFPROF_PLUGIN_EXPORT const struct bpfprof_plugin *bpfprof_plugin_entry(uint32_t host_abi_version)
{
	return host_abi_version == BPFPROF_PLUGIN_ABI_VERSION ? &pprof_plugin : NULL;
}
