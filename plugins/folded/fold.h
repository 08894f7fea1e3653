/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fold.h - folding a bpfprof profile into "folded stacks", shared by the
 * folded and flamegraph plugins (each compiles it in: the functions are
 * static, a plugin is one self-contained .so).
 *
 * A folded stack is one line "comm;frame;...;leaf", root first: the
 * process name, the user frames from the outermost caller down, then the
 * kernel frames (each suffixed "_[k]", as FlameGraph's stackcollapse
 * scripts do) down to the kernel leaf.  A frame is its function name (a
 * caller is looked up at its return address - 1, the call site), else
 * "[module]" (the file name of the mapping that holds it), else
 * "[unknown]".  ';' and line breaks in names become '_' and ' ', so the
 * line stays parseable.  The samples of all threads with the same line
 * are summed; the lines are sorted by byte value.
 */
#ifndef BPFPROF_FOLD_H
#define BPFPROF_FOLD_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "bpfprof/plugin.h"

struct fold_stack {
	char *line;			/* "comm;root;...;leaf" */
	uint64_t samples;
	UT_hash_handle hh;
};

/* A growable string. */
struct fold_str {
	char *s;
	size_t len, cap;
	int oom;
};

static void fold_append(struct fold_str *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->s, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* Append @name with ';' and line breaks replaced. */
static void fold_append_name(struct fold_str *b, const char *name)
{
	size_t start = b->len;

	fold_append(b, name, strlen(name));
	for (size_t i = start; !b->oom && i < b->len; i++) {
		if (b->s[i] == ';')
			b->s[i] = '_';
		else if (b->s[i] == '\n' || b->s[i] == '\r')
			b->s[i] = ' ';
	}
}

static void fold_append_frame(struct fold_str *b, const struct bpfprof_host *host, uint32_t pid,
			      uint64_t ip, int kernel, int leaf)
{
	struct bpfprof_symbol sym;
	int rc;

	memset(&sym, 0, sizeof(sym));
	rc = host->symbolize(host, pid, leaf || !ip ? ip : ip - 1, kernel, &sym);
	fold_append(b, ";", 1);
	if (rc == 0 && sym.function && *sym.function) {
		fold_append_name(b, sym.function);
	} else if (sym.module && *sym.module) {
		const char *base = strrchr(sym.module, '/');

		base = base ? base + 1 : sym.module;
		if (*base == '[') {
			fold_append_name(b, base);
		} else {
			fold_append(b, "[", 1);
			fold_append_name(b, base);
			fold_append(b, "]", 1);
		}
	} else {
		fold_append(b, "[unknown]", 9);
	}
	if (kernel)
		fold_append(b, "_[k]", 4);
}

static int fold_compare(const void *a, const void *b)
{
	const struct fold_stack *x = *(struct fold_stack *const *)a;
	const struct fold_stack *y = *(struct fold_stack *const *)b;

	return strcmp(x->line, y->line);
}

static void fold_free(struct fold_stack **sorted, size_t n)
{
	for (size_t i = 0; sorted && i < n; i++) {
		free(sorted[i]->line);
		free(sorted[i]);
	}
	free(sorted);
}

/*
 * Fold @prof: *sorted gets a malloc'd array of *n stacks sorted by line
 * (free with fold_free), *total the sum of their samples.  0, -EINVAL or
 * -ENOMEM (after host->error(), messages prefixed with @who).
 */
static int fold_profile(const struct bpfprof_host *host, const struct bpfprof_profile *prof,
			const char *who, struct fold_stack ***sorted, size_t *n, uint64_t *total)
{
	struct fold_stack *table = NULL, *e, *tmp;
	struct fold_str b = { 0 };
	int err = 0;

	*sorted = NULL;
	*n = 0;
	*total = 0;
	for (size_t i = 0; i < prof->nr_counts && !err; i++) {
		const struct bpfprof_count *c = &prof->counts[i];
		const struct bpfprof_thread *t;
		const struct bpfprof_process *proc;
		const struct bpfprof_stack *us, *ks;

		if (c->thread >= prof->nr_threads || c->user_stack >= prof->nr_stacks ||
		    c->kernel_stack >= prof->nr_stacks) {
			host->error(host, "%s: count %zu refers to a missing thread or stack", who, i);
			err = -EINVAL;
			break;
		}
		t = &prof->threads[c->thread];
		proc = t->process < prof->nr_processes ? &prof->processes[t->process] : NULL;
		us = &prof->stacks[c->user_stack];
		ks = &prof->stacks[c->kernel_stack];

		b.len = 0;
		fold_append_name(&b, proc && proc->comm && *proc->comm ? proc->comm :
				     t->comm && *t->comm ? t->comm : "[unknown]");
		for (uint32_t j = us->nr; j-- > 0;)
			fold_append_frame(&b, host, t->pid, us->ips[j], 0, j == 0);
		for (uint32_t j = ks->nr; j-- > 0;)
			fold_append_frame(&b, host, t->pid, ks->ips[j], 1, j == 0);
		if (b.oom) {
			err = -ENOMEM;
			break;
		}
		HASH_FIND_STR(table, b.s, e);
		if (!e) {
			e = calloc(1, sizeof(*e));
			if (!e || !(e->line = strdup(b.s))) {
				free(e);
				err = -ENOMEM;
				break;
			}
			HASH_ADD_KEYPTR(hh, table, e->line, strlen(e->line), e);
		}
		e->samples += c->samples;
		*total += c->samples;
	}
	free(b.s);
	if (!err) {
		*sorted = calloc(HASH_COUNT(table) + 1, sizeof(**sorted));
		if (!*sorted)
			err = -ENOMEM;
	}
	HASH_ITER(hh, table, e, tmp) {
		HASH_DEL(table, e);
		if (err) {
			free(e->line);
			free(e);
		} else {
			(*sorted)[(*n)++] = e;
		}
	}
	if (err == -ENOMEM)
		host->error(host, "%s: out of memory", who);
	if (!err)
		qsort(*sorted, *n, sizeof(**sorted), fold_compare);
	return err;
}

#endif /* BPFPROF_FOLD_H */
