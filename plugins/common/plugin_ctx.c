// SPDX-License-Identifier: BSD-2-Clause
/*
 * common/plugin_ctx.c - open() and close() of the plugins whose state is
 * only what open() was given (see plugin_ctx.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "common/plugin_ctx.h"

int plugin_ctx_open(const char *name, const struct bpfprof_host *host,
		    const struct bpfprof_run *run, const struct bpfprof_output *out, void **state)
{
	struct plugin_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx) {
		host->error(host, "%s: out of memory", name);
		return -ENOMEM;
	}
	ctx->host = host;
	ctx->run = run;
	ctx->out = out;
	*state = ctx;
	return 0;
}

void plugin_ctx_close(void *state)
{
	free(state);
}
