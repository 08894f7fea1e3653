/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile/record_sink.h - where the timestamped records of a run go.
 *
 * The steps that see what happens while sampling (the process tracker:
 * COMM, FORK, EXEC, EXIT, MMAP; the sample ingest: SAMPLE) hand each
 * record to a sink without knowing who reads it.  The collector points the
 * sink at the output stage's stream to a BPFPROF_PLUGIN_STREAM plugin, or
 * leaves it empty for formats that only want the aggregated profile.
 */
#ifndef BPFPROF_RECORD_SINK_H
#define BPFPROF_RECORD_SINK_H

#include "bpfprof/plugin.h"

struct record_sink {
	void *ctx;
	/* Take one record; @ev and what it points to are valid for the call only. */
	void (*record)(void *ctx, const struct bpfprof_event *ev);
};

/* Hand @ev to @sink; nothing when the sink is NULL or empty. */
static inline void record_sink_put(const struct record_sink *sink, const struct bpfprof_event *ev)
{
	if (sink && sink->record)
		sink->record(sink->ctx, ev);
}

#endif /* BPFPROF_RECORD_SINK_H */
