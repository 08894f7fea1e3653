/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * host.h - the services bpfprof offers plugins (struct bpfprof_host of
 * plugin.h): symbolization over the profile's processes, stack lookup,
 * error and warning reporting.
 */
#ifndef BPFPROF_HOST_H
#define BPFPROF_HOST_H

#include "bpfprof/plugin.h"

struct profile;
struct symbolizer;

struct host {
	struct bpfprof_host api;	/* first: plugins get &host->api */
	struct profile *profile;
	struct symbolizer *symbolizer;
	const char *plugin_name;
	char *error;			/* first error reported, malloc'd */
};

/* Set up @h for a plugin; the profile and symbolizer are borrowed. */
void host_init(struct host *h, struct profile *profile, struct symbolizer *sym,
	       const char *plugin_name);

/* Free the recorded error. */
void host_fini(struct host *h);

/* Print the plugin's failure (its message, or @err) and clear it. */
void host_report_failure(struct host *h, const char *what, int err);

#endif /* BPFPROF_HOST_H */
