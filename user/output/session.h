/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * output/session.h - the output stage: one output plugin, driven through
 * the plugin ABI (include/bpfprof/plugin.h) over safe output files.
 *
 * A session loads the plugin for --format or --plugin, checks before
 * sampling that its output can be written, takes the timestamped records
 * of a run when the plugin streams (it is then the run's record sink),
 * and at the end hands the finished profile to the plugin: once, or once
 * per process for per-process formats (PATH, PATH.<pid>, or
 * DIR/COMM.<pid>.prof), publishing all outputs or none.
 */
#ifndef BPFPROF_SESSION_H
#define BPFPROF_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/plugin.h"
#include "cli/options.h"
#include "host.h"
#include "output.h"
#include "plugin_loader.h"
#include "profile/profile.h"
#include "profile/record_sink.h"
#include "summary.h"

struct symbolizer;

struct session {
	const struct options *opts;	/* -o, --format, --plugin (borrowed) */
	struct plugin plugin;		/* the loaded plugin (owned) */
	struct host host;		/* what the plugin sees of bpfprof */
	bool host_ready;
	bool stream;			/* the plugin takes the timestamped records */
	struct record_sink sink;	/* into the plugin's event(), when it streams */
	const struct bpfprof_run *run;	/* the run's metadata (borrowed) */
	struct output out;		/* the output being written */
	struct bpfprof_output plugin_out; /* what the plugin sees of it, valid until close */
	void *state;			/* the plugin's, between open and close */
	bool open;
	int failed;			/* negative errno once the plugin failed */
};

/*
 * Load the plugin @o asks for and check that its output can be written.
 * 0, or negative errno after a one-line message.  session_fini() is safe
 * afterwards either way.
 */
int session_load(struct session *s, const struct options *o);

/* Give the plugin its host API over @profile and @symbolizer (borrowed),
 * and the run's metadata @run (borrowed; filled later is fine). */
void session_attach(struct session *s, struct profile *profile, struct symbolizer *symbolizer,
		    const struct bpfprof_run *run);

/* The symbolizer the plugin (and the summary) now use; the old one stays
 * the caller's. */
void session_set_symbolizer(struct session *s, struct symbolizer *symbolizer);

/* The record sink of a streaming plugin, or NULL when it does not stream. */
const struct record_sink *session_sink(struct session *s);

/* Streaming plugins: open the output before the first record.  0 or
 * negative errno (the plugin's message printed). */
int session_open_stream(struct session *s);

/*
 * Hand the finished @profile to the plugin and publish the outputs, adding
 * each path to @outs.  @empty_pid names the process of the empty profile
 * a per-process format still writes when nothing was sampled.  0, or
 * negative errno after a message; no output is left behind on failure.
 */
int session_write(struct session *s, struct profile *profile, uint32_t empty_pid,
		  struct summary_outputs *outs);

/* Close the plugin, remove an unpublished output, unload. */
void session_fini(struct session *s);

/* ---- used by session.c and writer.c only ---- */

/* The path -o gave, or the plugin's default output. */
const char *session_output_path(const struct session *s);

/* Open the plugin on a new temporary output for @path, for process @pid
 * (0: all).  0 or negative errno. */
int session_open(struct session *s, const char *path, uint32_t pid);

/* write() and close() the open plugin, then commit its output; with
 * @pending, only finish it and move it there, to be published later. */
int session_finish(struct session *s, const struct bpfprof_profile *view,
		   struct output *pending);

/* -o names an existing directory for a per-process format. */
bool session_output_is_dir_of_files(const struct session *s);

#endif /* BPFPROF_SESSION_H */
