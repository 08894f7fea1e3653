// SPDX-License-Identifier: BSD-2-Clause
/*
 * flamegraph.c - the "flamegraph" output plugin: one self-contained,
 * interactive HTML page (inline SVG drawn by an inline script, no network
 * access), default output bpfprof.html.  The stacks are the folded stacks
 * of the folded plugin (../folded/fold.h: comm, user frames, kernel
 * frames with _[k]); this file writes the page around them, the
 * stylesheet and script are in assets.c.  The page is written by
 * write_page_head(), write_page_data() and write_page_tail().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "bpfprof/plugin.h"
#include "../folded/fold.h"

extern const char flamegraph_css[];
extern const char flamegraph_js[];

struct fg_state {
	const struct bpfprof_host *host;
	const struct bpfprof_run *run;
	const struct bpfprof_output *out;
};

/* A frame name and its index in the page's name table. */
struct fg_name {
	const char *name;		/* points into the folded line */
	size_t len;
	uint64_t index;
	UT_hash_handle hh;
};

/* @s with &, <, > and " as HTML entities. */
static void put_html(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* @n bytes of @s as a JSON string; '<' escaped so "</script>" cannot occur. */
static void put_json(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_page_head(struct fg_state *st, uint64_t total)
{
	FILE *f = st->out->file;
	const struct bpfprof_run *run = st->run;
	char title[512];

	snprintf(title, sizeof(title), "bpfprof: %s, %" PRIu64 " samples", run && run->target ?
		 run->target : "profile", total);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
	put_html(f, title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<div id=\"bar\"><h1>", flamegraph_css);
	put_html(f, title);
	if (run && run->sample_period)
		fprintf(f, " (1 sample = %.3g ms of CPU)", run->sample_period / 1e6);
	fputs("</h1>\n<input id=\"search\" type=\"search\" placeholder=\"search (regular expression)\">\n"
	      "<span id=\"matched\"></span>\n<button id=\"reset\">Reset zoom</button></div>\n"
	      "<div id=\"details\">Click a frame to zoom in; hover for details.</div>\n"
	      "<svg id=\"fg\" xmlns=\"http://www.w3.org/2000/svg\"></svg>\n"
	      "<pre id=\"bpfprof-summary\"></pre>\n", f);
}

/* {"names": [...], "stacks": [[samples, name, ...], ...]}, root first. */
static int write_page_data(struct fg_state *st, struct fold_stack **stacks, size_t n)
{
	FILE *f = st->out->file;
	struct fg_name *names = NULL, *e, *tmp;
	uint64_t nr_names = 0;
	int err = 0;

	fputs("<script id=\"bpfprof-data\" type=\"application/json\">\n{\"names\": [", f);
	for (size_t i = 0; i < n && !err; i++) {
		for (const char *p = stacks[i]->line; *p;) {
			size_t len = strcspn(p, ";");

			HASH_FIND(hh, names, p, len, e);
			if (!e) {
				e = calloc(1, sizeof(*e));
				if (!e) {
					err = -ENOMEM;
					break;
				}
				e->name = p;
				e->len = len;
				e->index = nr_names++;
				HASH_ADD_KEYPTR(hh, names, e->name, e->len, e);
				if (e->index)
					fputs(",", f);
				put_json(f, p, len);
			}
			p += len + (p[len] == ';');
		}
	}
	fputs("],\n\"stacks\": [", f);
	for (size_t i = 0; i < n && !err; i++) {
		fprintf(f, "%s\n[%" PRIu64, i ? "," : "", stacks[i]->samples);
		for (const char *p = stacks[i]->line; *p;) {
			size_t len = strcspn(p, ";");

			HASH_FIND(hh, names, p, len, e);
			fprintf(f, ",%" PRIu64, e->index);
			p += len + (p[len] == ';');
		}
		fputc(']', f);
	}
	fputs("]}\n</script>\n", f);
	HASH_ITER(hh, names, e, tmp) {
		HASH_DEL(names, e);
		free(e);
	}
	if (err)
		st->host->error(st->host, "flamegraph: out of memory");
	return err;
}

static void write_page_tail(struct fg_state *st)
{
	fprintf(st->out->file, "<script>\n%s</script>\n</body>\n</html>\n", flamegraph_js);
}

static int fg_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		   const struct bpfprof_output *out, void **state)
{
	struct fg_state *st = calloc(1, sizeof(*st));

	if (!st) {
		host->error(host, "flamegraph: out of memory");
		return -ENOMEM;
	}
	st->host = host;
	st->run = run;
	st->out = out;
	*state = st;
	return 0;
}

static int fg_write(void *state, const struct bpfprof_profile *prof)
{
	struct fg_state *st = state;
	struct fold_stack **stacks;
	size_t n;
	uint64_t total;
	int err = fold_profile(st->host, prof, "flamegraph", &stacks, &n, &total);

	if (prof->run)
		st->run = prof->run;
	if (!err) {
		errno = 0;
		write_page_head(st, total);
		err = write_page_data(st, stacks, n);
		if (!err)
			write_page_tail(st);
		if (!err && (fflush(st->out->file) || ferror(st->out->file))) {
			err = errno ? -errno : -EIO;
			st->host->error(st->host, "flamegraph: cannot write %s: %s",
					st->out->path, strerror(-err));
		}
	}
	fold_free(stacks, n);
	return err;
}

static void fg_close(void *state)
{
	free(state);
}

static const struct bpfprof_plugin flamegraph_plugin = {
	.abi_version = BPFPROF_PLUGIN_ABI_VERSION,
	.flags = 0,
	.name = "flamegraph",
	.description = "interactive flame graph, one self-contained HTML file "
		       "(SVG + script, search, click to zoom)",
	.default_output = "bpfprof.html",
	.open = fg_open,
	.event = NULL,
	.write = fg_write,
	.close = fg_close,
};

BPFPROF_PLUGIN_EXPORT const struct bpfprof_plugin *bpfprof_plugin_entry(uint32_t host_abi_version)
{
	return host_abi_version == BPFPROF_PLUGIN_ABI_VERSION ? &flamegraph_plugin : NULL;
}
