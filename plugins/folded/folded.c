// SPDX-License-Identifier: BSD-2-Clause
/*
 * folded.c - the "folded" output plugin: folded stacks, one line
 * "comm;root;...;leaf COUNT" per distinct stack (see common/fold.h for
 * how a line is made; a thread with an MPI rank gets "rank N;comm;..."),
 * sorted, default output bpfprof.folded.  The format
 * FlameGraph's flamegraph.pl, speedscope, inferno and others import.
 * COUNT is a number of samples (each stands for run->sample_period ns of
 * CPU time); the counts add up to the samples in the profile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/plugin.h"
#include "common/buf.h"
#include "common/fold.h"
#include "common/plugin_ctx.h"

static int folded_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		       const struct bpfprof_output *out, void **state)
{
	return plugin_ctx_open("folded", host, run, out, state);
}

/*
 * The line @c as "names COUNT".  Lines in text order share long
 * prefixes: the names it has in common with the line before, which
 * starts at *@line, are copied from that one, where it still is in the
 * buffer; @end[i] is where name i ends, from the start of the line.
 */
static void write_folded_line(struct buf *o, const struct fold *f, const struct fold_cursor *c,
			      uint64_t *line, size_t *end)
{
	uint64_t start = buf_pos(o);
	uint32_t i = 0;

	if (c->same && buf_again(o, *line, end[c->same - 1]))
		i = c->same;	/* their end[] is the same */
	for (; i < c->nr; i++) {
		size_t len;
		const char *s = fold_name(f, c->names[i], &len);

		if (i)
			buf_put32(o, s - 1, len + 1);	/* with its ';' */
		else
			buf_put32(o, s, len);
		end[i] = (size_t)(buf_pos(o) - start);
	}
	*line = start;
	buf_char(o, ' ');
	buf_dec(o, c->samples);
	buf_char(o, '\n');
}

/* One "line COUNT" per folded stack, in text order. */
static int write_folded_lines(struct plugin_ctx *st, const struct fold *f)
{
	size_t *end = malloc((f->max_pieces ? f->max_pieces : 1) * sizeof(*end));
	struct fold_cursor c = { 0 };
	uint64_t line = 0;
	struct buf o;
	int err = buf_init_file(&o, st->out->file, BUF_WRITE_SIZE);

	if (err || !end) {
		buf_free(&o);
		free(end);
		st->host->error(st->host, "folded: out of memory");
		return -ENOMEM;
	}
	while (fold_next(f, &c) && !o.err)
		write_folded_line(&o, f, &c, &line, end);
	free(end);
	err = buf_finish(&o);
	buf_free(&o);
	if (err)
		st->host->error(st->host, "folded: cannot write %s: %s", st->out->path,
				strerror(-err));
	return err;
}

static int folded_write(void *state, const struct bpfprof_profile *prof)
{
	struct plugin_ctx *st = state;
	struct fold *f;
	int err = fold_profile(st->host, prof, "folded", &f);

	if (!err)
		err = write_folded_lines(st, f);
	fold_free(f);
	return err;
}

BPFPROF_PLUGIN("folded",
	.flags = BPFPROF_PLUGIN_NAMES_ONLY,	/* names only: no DWARF lines */
	.description = "folded stacks 'comm;root;...;leaf COUNT' (FlameGraph, speedscope; "
		       "kernel frames _[k])",
	.default_output = "bpfprof.folded",
	.open = folded_open, .write = folded_write, .close = plugin_ctx_close);
