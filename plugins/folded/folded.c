// SPDX-License-Identifier: BSD-2-Clause
/*
 * folded.c - the "folded" output plugin: folded stacks, one line
 * "comm;root;...;leaf COUNT" per distinct stack (see fold.h for how a
 * line is made), sorted, default output bpfprof.folded.  The format
 * FlameGraph's flamegraph.pl, speedscope, inferno and others import.
 * COUNT is a number of samples (each stands for run->sample_period ns of
 * CPU time); the counts add up to the samples in the profile.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/plugin.h"
#include "fold.h"

struct folded_state {
	const struct bpfprof_host *host;
	const struct bpfprof_output *out;
};

static int folded_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		       const struct bpfprof_output *out, void **state)
{
	struct folded_state *st = calloc(1, sizeof(*st));

	if (!st) {
		host->error(host, "folded: out of memory");
		return -ENOMEM;
	}
	st->host = host;
	st->out = out;
	*state = st;
	return 0;
}

/* One "line COUNT" per folded stack. */
static int write_folded_lines(struct folded_state *st, struct fold_stack **stacks, size_t n)
{
	errno = 0;
	for (size_t i = 0; i < n; i++) {
		if (fprintf(st->out->file, "%s %" PRIu64 "\n", stacks[i]->line,
			    stacks[i]->samples) < 0)
			break;
	}
	if (fflush(st->out->file) || ferror(st->out->file)) {
		int err = errno ? errno : EIO;

		st->host->error(st->host, "folded: cannot write %s: %s", st->out->path,
				strerror(err));
		return -err;
	}
	return 0;
}

static int folded_write(void *state, const struct bpfprof_profile *prof)
{
	struct folded_state *st = state;
	struct fold_stack **stacks;
	size_t n;
	uint64_t total;
	int err = fold_profile(st->host, prof, "folded", &stacks, &n, &total);

	if (!err)
		err = write_folded_lines(st, stacks, n);
	fold_free(stacks, n);
	return err;
}

static void folded_close(void *state)
{
	free(state);
}

static const struct bpfprof_plugin folded_plugin = {
	.abi_version = BPFPROF_PLUGIN_ABI_VERSION,
	.flags = 0,
	.name = "folded",
	.description = "folded stacks 'comm;root;...;leaf COUNT' (FlameGraph, speedscope; "
		       "kernel frames _[k])",
	.default_output = "bpfprof.folded",
	.open = folded_open,
	.event = NULL,
	.write = folded_write,
	.close = folded_close,
};

BPFPROF_PLUGIN_EXPORT const struct bpfprof_plugin *bpfprof_plugin_entry(uint32_t host_abi_version)
{
	return host_abi_version == BPFPROF_PLUGIN_ABI_VERSION ? &folded_plugin : NULL;
}
