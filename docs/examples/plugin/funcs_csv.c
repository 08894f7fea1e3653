// SPDX-License-Identifier: BSD-2-Clause
/*
 * funcs_csv.c - an example bpfprof output plugin (the SDK example, see
 * docs/PLUGINS.md): a CSV table with one row per function,
 *
 *   function,module,self_samples,self_percent,total_samples,total_percent
 *
 * "self" counts the samples whose leaf frame (where the CPU was) is in the
 * function, "total" the samples with the function anywhere on the stack
 * (once per sample, also under recursion).  Rows are sorted by self
 * samples, most first.  Frames are named with host->symbolize(); a frame
 * without a function name is listed as "[module]" or "[unknown]".
 *
 * Build it out of tree with the installed SDK:
 *   cc $(pkg-config --cflags bpfprof-plugin) -fPIC -shared funcs_csv.c -o funcs_csv.so
 * and use it with: bpfprof --plugin ./funcs_csv.so -o funcs.csv -p PID
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfprof/plugin.h>

/* One function: a row of the table. */
struct func {
	char *name;			/* our copy */
	char *module;
	uint64_t self, total;
	uint64_t last_count;		/* index + 1 of the count that last added to total */
};

struct state {
	const struct bpfprof_host *host;
	const struct bpfprof_output *out;
	struct func *funcs;		/* open-addressing hash table by name + module */
	size_t cap, nr;
};

static uint64_t hash(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	for (; *b; b++)
		h = (h ^ (unsigned char)*b) * 1099511628211ull;
	return h;
}

static int grow(struct state *st);

/* The row of (name, module), created if new; NULL when out of memory. */
static struct func *lookup(struct state *st, const char *name, const char *module)
{
	size_t i;

	if ((st->nr + 1) * 2 > st->cap && grow(st))
		return NULL;
	for (i = hash(name, module) & (st->cap - 1); st->funcs[i].name; i = (i + 1) & (st->cap - 1)) {
		if (!strcmp(st->funcs[i].name, name) && !strcmp(st->funcs[i].module, module))
			return &st->funcs[i];
	}
	st->funcs[i].name = strdup(name);
	st->funcs[i].module = strdup(module);
	if (!st->funcs[i].name || !st->funcs[i].module)
		return NULL;
	st->nr++;
	return &st->funcs[i];
}

static int grow(struct state *st)
{
	struct state bigger = *st;

	bigger.cap = st->cap ? st->cap * 2 : 1024;
	bigger.nr = 0;
	bigger.funcs = calloc(bigger.cap, sizeof(*bigger.funcs));
	if (!bigger.funcs)
		return -ENOMEM;
	for (size_t i = 0; i < st->cap; i++) {
		struct func *f = &st->funcs[i], *g;
		size_t j;

		if (!f->name)
			continue;
		for (j = hash(f->name, f->module) & (bigger.cap - 1); bigger.funcs[j].name;
		     j = (j + 1) & (bigger.cap - 1))
			;
		g = &bigger.funcs[j];
		*g = *f;
		bigger.nr++;
	}
	free(st->funcs);
	*st = bigger;
	return 0;
}

/* Add one frame of count @idx (@leaf: the sample's innermost frame). */
static int add_frame(struct state *st, uint32_t pid, uint64_t ip, int kernel, int leaf,
		     size_t idx, uint64_t samples)
{
	struct bpfprof_symbol sym;
	const char *name, *module;
	char buf[512];
	struct func *f;

	/* Callers' addresses are return addresses: ask for the call site. */
	memset(&sym, 0, sizeof(sym));
	st->host->symbolize(st->host, pid, leaf || !ip ? ip : ip - 1, kernel, &sym);
	module = sym.module ? sym.module : "";
	name = sym.function;
	if (!name) {
		snprintf(buf, sizeof(buf), "[%s]", *module ? module : "unknown");
		name = buf;
	}
	f = lookup(st, name, module);
	if (!f) {
		st->host->error(st->host, "funcs_csv: out of memory");
		return -ENOMEM;
	}
	if (leaf)
		f->self += samples;
	if (f->last_count != idx + 1) {	/* count each sample once per function */
		f->total += samples;
		f->last_count = idx + 1;
	}
	return 0;
}

static int t_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		  const struct bpfprof_output *out, void **state)
{
	struct state *st = calloc(1, sizeof(*st));

	if (!st) {
		host->error(host, "funcs_csv: out of memory");
		return -ENOMEM;
	}
	st->host = host;
	st->out = out;
	*state = st;
	return 0;
}

static int by_self(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* A CSV field: quoted, with quotes doubled, if it holds , " or a line break. */
static void put_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int t_write(void *state, const struct bpfprof_profile *p)
{
	struct state *st = state;
	uint64_t all = 0;
	FILE *f = st->out->file;
	int err = 0;

	for (size_t i = 0; i < p->nr_counts && !err; i++) {
		const struct bpfprof_count *c = &p->counts[i];
		const struct bpfprof_thread *t = &p->threads[c->thread];
		const struct bpfprof_stack *ks = &p->stacks[c->kernel_stack];
		const struct bpfprof_stack *us = &p->stacks[c->user_stack];

		all += c->samples;
		/* The callchain is the kernel stack, then the user stack, leaf first. */
		for (uint32_t j = 0; j < ks->nr && !err; j++)
			err = add_frame(st, t->pid, ks->ips[j], 1, j == 0, i, c->samples);
		for (uint32_t j = 0; j < us->nr && !err; j++)
			err = add_frame(st, t->pid, us->ips[j], 0, j == 0 && ks->nr == 0, i,
					c->samples);
	}
	if (err)
		return err;

	/* Compact the table into a sorted array (the hash is not needed any more). */
	size_t n = 0;
	for (size_t i = 0; i < st->cap; i++)
		if (st->funcs[i].name)
			st->funcs[n++] = st->funcs[i];
	st->cap = n;
	if (n)
		qsort(st->funcs, n, sizeof(*st->funcs), by_self);

	fputs("function,module,self_samples,self_percent,total_samples,total_percent\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct func *fn = &st->funcs[i];

		put_field(f, fn->name);
		fputc(',', f);
		put_field(f, fn->module);
		fprintf(f, ",%llu,%.2f,%llu,%.2f\n", (unsigned long long)fn->self,
			all ? 100.0 * fn->self / all : 0.0, (unsigned long long)fn->total,
			all ? 100.0 * fn->total / all : 0.0);
	}
	if (fflush(f) || ferror(f)) {
		st->host->error(st->host, "funcs_csv: cannot write %s", st->out->path);
		return -EIO;
	}
	return 0;
}

static void t_close(void *state)
{
	struct state *st = state;

	for (size_t i = 0; i < st->cap; i++) {
		free(st->funcs[i].name);
		free(st->funcs[i].module);
	}
	free(st->funcs);
	free(st);
}

BPFPROF_PLUGIN("funcs_csv",
	.description = "example: CSV of self/total samples per function",
	.default_output = "bpfprof-funcs.csv",
	.open = t_open, .write = t_write, .close = t_close);
