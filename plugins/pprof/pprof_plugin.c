// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_plugin.c - the "pprof" output plugin: a gzip-compressed
 * profile.proto message (the format of `go tool pprof`, Pyroscope, Parca,
 * Google Cloud Profiler), default output bpfprof.pb.gz.  One file holds
 * every profiled process; samples carry pid/tid/comm/thread labels and
 * kernel frames (mapping "[kernel.kallsyms]").  This file owns the plugin
 * entry points, the header fields of the Profile and the order in which
 * its parts are written (pprof.h); the samples are written by
 * pprof_samples.c, the tables by pprof_tables.c, all through the gzip
 * stream of pprof_gzip.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/plugin.h"
#include "common/plugin_ctx.h"
#include "pprof.h"

/* "user stack walks (--call-graph auto): complete N, unmapped M, ...". */
static void unwind_stops_text(const struct bpfprof_run *run, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "user stack walks (--call-graph auto):");

	for (int r = 0; r < BPFPROF_UNWIND_STOP_NR && n < size; r++)
		if (run->unwind_stops[r])
			n += (size_t)snprintf(buf + n, size - n, " %s %" PRIu64,
					      bpfprof_unwind_stop_name(r), run->unwind_stops[r]);
}

/* The comments: bpfprof's version, the target, the event and counters. */
static int add_comments(struct pprof_header *h, struct pprof_tables *t,
			const struct bpfprof_run *run)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "bpfprof %s", run->version ? run->version : "");
	h->comments[h->nr_comments++] = pprof_string(t, buf);
	snprintf(buf, sizeof(buf), "target: %s", run->target ? run->target : "");
	h->comments[h->nr_comments++] = pprof_string(t, buf);
	snprintf(buf, sizeof(buf), "%s at %" PRIu64 " Hz, period %" PRIu64 " ns; %" PRIu64
		 " samples kept of %" PRIu64 " seen", run->event ? run->event : "",
		 run->sample_freq, run->sample_period, run->samples_kept, run->samples_seen);
	h->comments[h->nr_comments++] = pprof_string(t, buf);
	if (run->call_graph && !strcmp(run->call_graph, "auto")) {
		unwind_stops_text(run, buf, sizeof(buf));
		h->comments[h->nr_comments++] = pprof_string(t, buf);
	}
	for (size_t i = 0; i < h->nr_comments; i++)
		if (h->comments[i] < 0)
			return -ENOMEM;
	return 0;
}

/* Sample and period types ([samples/count, cpu/nanoseconds], cpu the
 * default), period, time and duration, comments. */
static int write_header(struct buf *b, struct pprof_tables *t, const struct bpfprof_run *run)
{
	int64_t samples = pprof_string(t, "samples"), count = pprof_string(t, "count");
	int64_t cpu = pprof_string(t, "cpu"), ns = pprof_string(t, "nanoseconds");
	struct pprof_header h = {
		.sample_type = { { samples, count }, { cpu, ns } },
		.period_type = { cpu, ns },
		.default_sample_type = cpu,
	};

	if (samples < 0 || count < 0 || cpu < 0 || ns < 0)
		return -ENOMEM;
	if (run) {
		h.period = run->sample_period;
		h.time_nanos = run->realtime_anchor_ns;
		h.duration_nanos = run->end_ns > run->start_ns ? run->end_ns - run->start_ns : 0;
		if (add_comments(&h, t, run))
			return -ENOMEM;
	}
	write_profile_header(b, &h);
	return b->err ? -ENOMEM : 0;
}

/* The whole Profile, in the order of pprof.h, into the gzip stream @gz. */
static int write_profile(struct plugin_ctx *st, const struct bpfprof_profile *prof,
			 struct pprof_gz *gz)
{
	struct pprof_tables *t = pprof_tables_new(st->host, prof, gz);
	int err = t ? write_header(pprof_gz_buf(gz), t, prof->run) : -ENOMEM;

	if (err == -ENOMEM)
		st->host->error(st->host, "pprof: out of memory");
	if (!err)
		err = pprof_write_samples(st->host, prof, t, gz);
	if (!err)
		err = pprof_write_locations(t, 1);
	if (!err)
		err = pprof_write_tables(t);
	if (!err)
		err = pprof_gz_finish(gz);
	pprof_tables_free(t);
	return err;
}

static int pprof_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		      const struct bpfprof_output *out, void **state)
{
	return plugin_ctx_open("pprof", host, run, out, state);
}

static int pprof_write(void *state, const struct bpfprof_profile *prof)
{
	struct plugin_ctx *st = state;
	struct pprof_gz *gz;
	int err = pprof_gz_open(&gz, st->host, st->out);

	if (!err)
		err = write_profile(st, prof, gz);
	pprof_gz_free(gz);
	return err;
}

BPFPROF_PLUGIN("pprof",
	.description = "pprof profile.proto, gzipped (go tool pprof, Pyroscope, Parca; "
		       "all processes, kernel frames, pid/tid labels)",
	.default_output = "bpfprof.pb.gz",
	.open = pprof_open, .write = pprof_write, .close = plugin_ctx_close);
