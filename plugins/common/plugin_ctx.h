/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/plugin_ctx.h - open() and close() of a plugin that does all its
 * work in write() (part of plugins/common/, the internal library linked
 * into every plugin): its state is what open() was given, the host, the
 * run and the output, in one allocation.
 */
#ifndef BPFPROF_COMMON_PLUGIN_CTX_H
#define BPFPROF_COMMON_PLUGIN_CTX_H

#include "bpfprof/plugin.h"

struct plugin_ctx {
	const struct bpfprof_host *host;
	const struct bpfprof_run *run;
	const struct bpfprof_output *out;
};

/*
 * The body of such a plugin's open(): *@state becomes a new plugin_ctx
 * holding @host, @run and @out.  Returns 0, or -ENOMEM after reporting
 * "@name: out of memory" through @host.
 */
int plugin_ctx_open(const char *name, const struct bpfprof_host *host,
		    const struct bpfprof_run *run, const struct bpfprof_output *out, void **state);

/* Its close(): frees the plugin_ctx. */
void plugin_ctx_close(void *state);

#endif /* BPFPROF_COMMON_PLUGIN_CTX_H */
