// SPDX-License-Identifier: BSD-2-Clause
/*
 * flamegraph.c - the "flamegraph" output plugin: one self-contained,
 * interactive HTML page (inline SVG drawn by an inline script, no network
 * access), default output bpfprof.html.  The stacks are the folded stacks
 * of the folded plugin (common/fold.h: the MPI rank if known, comm, user
 * frames, kernel frames with _[k]); this file writes the page around them, the stylesheet and
 * script are in assets.c.  The page is written by write_page_head(),
 * write_page_data() and write_page_tail(), through a write-through
 * buffer (common/buf.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/plugin.h"
#include "common/buf.h"
#include "common/fold.h"
#include "common/plugin_ctx.h"

extern const char flamegraph_css[];
extern const char flamegraph_js[];

/* @s with &, <, > and " as HTML entities. */
static void put_html(struct buf *o, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': buf_str(o, "&amp;"); break;
		case '<': buf_str(o, "&lt;"); break;
		case '>': buf_str(o, "&gt;"); break;
		case '"': buf_str(o, "&quot;"); break;
		default: buf_char(o, *s);
		}
	}
}

/* The bytes put_json() escapes. */
static const unsigned char json_escaped[256] = {
	[0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, ['<'] = 1, [0x7f] = 1,
};

/* @n bytes of @s as a JSON string; '<' escaped so "</script>" cannot occur. */
static void put_json(struct buf *o, const char *s, size_t n)
{
	size_t done = 0;

	buf_char(o, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		char esc[8];

		if (!json_escaped[c])
			continue;
		buf_put(o, s + done, i - done);
		done = i + 1;
		if (c == '"' || c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		buf_str(o, esc);
	}
	buf_put(o, s + done, n - done);
	buf_char(o, '"');
}

static void write_page_head(struct plugin_ctx *st, struct buf *o, uint64_t total)
{
	const struct bpfprof_run *run = st->run;
	char title[512], period[64];

	snprintf(title, sizeof(title), "bpfprof: %s, %" PRIu64 " samples", run && run->target ?
		 run->target : "profile", total);
	buf_str(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		     "<title>");
	put_html(o, title);
	buf_str(o, "</title>\n<style>\n");
	buf_str(o, flamegraph_css);
	buf_str(o, "</style>\n</head>\n<body>\n<div id=\"bar\"><h1>");
	put_html(o, title);
	if (run && run->sample_period) {
		snprintf(period, sizeof(period), " (1 sample = %.3g ms of CPU)",
			 run->sample_period / 1e6);
		buf_str(o, period);
	}
	buf_str(o, "</h1>\n<input id=\"search\" type=\"search\" "
		     "placeholder=\"search (regular expression)\">\n"
		     "<span id=\"matched\"></span>\n"
		     "<button id=\"reset\">Reset zoom</button></div>\n"
		     "<div id=\"details\">Click a frame to zoom in; hover for details.</div>\n"
		     "<svg id=\"fg\" xmlns=\"http://www.w3.org/2000/svg\"></svg>\n"
		     "<pre id=\"bpfprof-summary\"></pre>\n");
}

/* A name's index in the page's name table, as text ",INDEX". */
struct fg_index {
	char s[15];
	uint8_t len;			/* 0: not in the table yet */
};

/* "names": every name once, in the order of first use, lines in text order. */
static void write_page_names(struct buf *o, const struct fold *f, struct fg_index *index)
{
	struct fold_cursor c = { 0 };
	uint32_t nr_names = 0;

	buf_str(o, "\"names\": [");
	while (fold_next(f, &c) && !o->err) {
		for (uint32_t i = c.same; i < c.nr; i++) {	/* the others are known */
			struct fg_index *x = &index[c.names[i]];
			size_t len;
			const char *s;

			if (x->len)
				continue;
			s = fold_name(f, c.names[i], &len);
			x->len = (uint8_t)snprintf(x->s, sizeof(x->s), ",%" PRIu32, nr_names);
			if (nr_names++)
				buf_char(o, ',');
			put_json(o, s, len);
		}
	}
	buf_str(o, "]");
}

/*
 * "stacks": [samples, name index, ...] per line, root first.  The names a
 * line has in common with the line before are copied from that one, where
 * it still is in the buffer (as in folded.c); @end holds f->max_pieces.
 */
static void write_page_stacks(struct buf *o, const struct fold *f,
			      const struct fg_index *index, size_t *end)
{
	struct fold_cursor c = { 0 };
	uint64_t line = 0;	/* where the names of the line before start */

	buf_str(o, "\"stacks\": [");
	for (size_t n = 0; fold_next(f, &c) && !o->err; n++) {
		uint64_t names;
		uint32_t i = 0;

		buf_str(o, n ? ",\n[" : "\n[");
		buf_dec(o, c.samples);
		names = buf_pos(o);
		if (c.same && buf_again(o, line, end[c.same - 1]))
			i = c.same;
		for (; i < c.nr; i++) {
			buf_put16(o, index[c.names[i]].s, index[c.names[i]].len);
			end[i] = (size_t)(buf_pos(o) - names);
		}
		line = names;
		buf_char(o, ']');
	}
	buf_str(o, "]");
}

/* {"names": [...], "stacks": [[samples, name, ...], ...]} in a script element. */
static int write_page_data(struct plugin_ctx *st, struct buf *o, const struct fold *f)
{
	struct fg_index *index = calloc(f->nr_names ? f->nr_names : 1, sizeof(*index));
	size_t *end = malloc((f->max_pieces ? f->max_pieces : 1) * sizeof(*end));

	if (!index || !end) {
		free(index);
		free(end);
		st->host->error(st->host, "flamegraph: out of memory");
		return -ENOMEM;
	}
	buf_str(o, "<script id=\"bpfprof-data\" type=\"application/json\">\n{");
	write_page_names(o, f, index);
	buf_str(o, ",\n");
	write_page_stacks(o, f, index, end);
	buf_str(o, "}\n</script>\n");
	free(index);
	free(end);
	return 0;
}

static void write_page_tail(struct buf *o)
{
	buf_str(o, "<script>\n");
	buf_str(o, flamegraph_js);
	buf_str(o, "</script>\n</body>\n</html>\n");
}

static int fg_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		   const struct bpfprof_output *out, void **state)
{
	return plugin_ctx_open("flamegraph", host, run, out, state);
}

static int fg_write(void *state, const struct bpfprof_profile *prof)
{
	struct plugin_ctx *st = state;
	struct fold *f;
	struct buf o;
	int err = fold_profile(st->host, prof, "flamegraph", &f), werr;

	buf_init(&o);
	if (prof->run)
		st->run = prof->run;
	if (!err && buf_init_file(&o, st->out->file, BUF_WRITE_SIZE)) {
		st->host->error(st->host, "flamegraph: out of memory");
		err = -ENOMEM;
	} else if (!err) {
		write_page_head(st, &o, fold_total(f));
		err = write_page_data(st, &o, f);
		if (!err)
			write_page_tail(&o);
		werr = buf_finish(&o);
		if (!err && werr) {
			st->host->error(st->host, "flamegraph: cannot write %s: %s",
					st->out->path, strerror(-werr));
			err = werr;
		}
	}
	buf_free(&o);
	fold_free(f);
	return err;
}

BPFPROF_PLUGIN("flamegraph",
	.flags = BPFPROF_PLUGIN_NAMES_ONLY,	/* names only: no DWARF lines */
	.description = "interactive flame graph, one self-contained HTML file "
		       "(SVG + script, search, click to zoom)",
	.default_output = "bpfprof.html",
	.open = fg_open, .write = fg_write, .close = plugin_ctx_close);
