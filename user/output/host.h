/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * host.h - the services bpfprof offers plugins (struct bpfprof_host of
 * plugin.h): symbolization over the profile's processes, stack lookup,
 * error and warning reporting, companion files of the output.
 */
#ifndef BPFPROF_HOST_H
#define BPFPROF_HOST_H

#include "bpfprof/plugin.h"

struct profile;
struct symbolizer;
struct interp;
struct output;

/* Distinct warnings counted; more print unthrottled. */
#define HOST_WARNING_KINDS 16
/* Warnings of one kind printed before the rest are only counted. */
#define HOST_WARNINGS_SHOWN 3

struct host {
	struct bpfprof_host api;	/* first: plugins get &host->api */
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct interp *interp;		/* names Python frames; NULL: none (borrowed) */
	const char *plugin_name;
	/* Set by `bpfprof merge` after host_init(): resolves addresses in
	 * place of the live symbolizer and the profile's /proc-read
	 * processes (merge/merge_symbols.c).  NULL in a live run. */
	int (*resolve)(void *ctx, uint32_t pid, uint64_t ip, int kernel,
		       struct bpfprof_symbol *sym);
	void *resolve_ctx;
	/* The output the plugin has open (borrowed), where companion() adds
	 * files; NULL between outputs.  plugin_out is what the plugin got. */
	struct output *output;
	const struct bpfprof_output *plugin_out;
	char *error;			/* first error reported, malloc'd */
	/* Warnings by format string: a per-process plugin run over hundreds
	 * of processes says the same thing hundreds of times. */
	struct host_warning {
		const char *fmt;	/* the plugin's, compared by address */
		unsigned count;
	} warnings[HOST_WARNING_KINDS];
};

/* Set up @h for a plugin; the profile and symbolizer are borrowed. */
void host_init(struct host *h, struct profile *profile, struct symbolizer *sym,
	       const char *plugin_name);

/* The output the plugin writes from now on, and what open() gets of it
 * (@plugin_out); NULL @o: none (between outputs). */
void host_set_output(struct host *h, struct output *o, const struct bpfprof_output *plugin_out);

/* Print one line per kind of warning that was repeated more than
 * HOST_WARNINGS_SHOWN times ("N more like the above"), then reset. */
void host_flush_warnings(struct host *h);

/* Flush the warnings, free the recorded error. */
void host_fini(struct host *h);

/* Print the plugin's failure (its message, or @err) and clear it. */
void host_report_failure(struct host *h, const char *what, int err);

#endif /* BPFPROF_HOST_H */
