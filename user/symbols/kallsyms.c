// SPDX-License-Identifier: BSD-2-Clause
/*
 * kallsyms.c - the parser of /proc/kallsyms and the address -> kernel
 * function lookup (see kallsyms.h for the rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kallsyms.h"
#include "targets/procfs.h"

/* Ranks: lower wins among symbols at one address; >= RANK_DATA is not text. */
enum { RANK_T, RANK_t, RANK_W, RANK_w, RANK_DATA };

struct ksym {
	uint64_t addr;
	uint64_t end;			/* one past the last byte */
	const char *name;
	const char *module;		/* NULL for the core kernel */
};

struct kallsyms {
	struct ksym *syms;		/* text symbols, sorted, distinct addresses */
	size_t nr;
	char *strings;			/* arena of names and module names */
};

/* A parsed line before sorting; names are offsets into the arena. */
struct raw_sym {
	uint64_t addr;
	size_t name;
	size_t module;			/* SIZE_MAX: none */
	uint32_t seq;
	uint32_t rank;
};

static int type_rank(char c)
{
	switch (c) {
	case 'T': return RANK_T;
	case 't': return RANK_t;
	case 'W': return RANK_W;
	case 'w': return RANK_w;
	default: return RANK_DATA;
	}
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Parse one line [s, end).  Copies name and module into @arena at *@used.
 * Returns 0 or -1 if the line is malformed.
 */
static int parse_line(const char *s, const char *end, char *arena, size_t *used,
		      size_t *last_module, struct raw_sym *r)
{
	uint64_t addr = 0;
	const char *name, *mod = NULL;
	size_t nlen, mlen = 0;

	if (procfs_parse_hex(&s, end, &addr) < 0)
		return -1;
	if (end - s < 4 || *s != ' ' || is_space(s[1]) || s[2] != ' ')
		return -1;
	r->rank = type_rank(s[1]);
	s += 3;
	name = s;
	while (s < end && !is_space(*s))
		s++;
	nlen = (size_t)(s - name);
	if (!nlen)
		return -1;
	while (s < end && is_space(*s))
		s++;
	if (s < end && *s == '[') {
		mod = ++s;
		while (s < end && *s != ']')
			s++;
		mlen = (size_t)(s - mod);
	}

	r->addr = addr;
	r->name = *used;
	memcpy(arena + *used, name, nlen);
	arena[*used + nlen] = '\0';
	*used += nlen + 1;
	r->module = SIZE_MAX;
	if (mod) {
		/* symbols of a module are contiguous: share its name */
		if (*last_module != SIZE_MAX && strlen(arena + *last_module) == mlen &&
		    memcmp(arena + *last_module, mod, mlen) == 0) {
			r->module = *last_module;
		} else {
			r->module = *used;
			memcpy(arena + *used, mod, mlen);
			arena[*used + mlen] = '\0';
			*used += mlen + 1;
			*last_module = r->module;
		}
	}
	return 0;
}

int kallsyms_parse(const char *text, size_t len, struct kallsyms **out)
{
	struct kallsyms *ks;
	struct raw_sym *raw = NULL;
	const char *p, *end;
	size_t lines = 1, n = 0, used = 0, last_module = SIZE_MAX, i, k;

	if (!out || (!text && len))
		return -EINVAL;
	*out = NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	if (!len) {
		*out = ks;
		return 0;
	}
	end = text + len;
	for (p = text; p < end; p++)
		if (*p == '\n')
			lines++;
	raw = malloc(lines * sizeof(*raw));
	/* names and module names fit in the text plus two NULs per line */
	ks->strings = malloc(len + 2 * lines);
	if (!raw || !ks->strings)
		goto nomem;

	for (p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		if (parse_line(p, eol, ks->strings, &used, &last_module, &raw[n]) == 0 &&
		    raw[n].addr != 0) {
			raw[n].seq = (uint32_t)n;
			n++;
		}
		p = nl ? nl + 1 : end;
	}
	if (n > 1)
		qsort(raw, n, sizeof(*raw), cmp_raw);

	/* count text symbols with distinct addresses */
	for (i = 0, k = 0; i < n; i++)
		if ((i == 0 || raw[i].addr != raw[i - 1].addr) && raw[i].rank < RANK_DATA)
			k++;
	if (k) {
		ks->syms = malloc(k * sizeof(*ks->syms));
		if (!ks->syms)
			goto nomem;
	}
	for (i = 0; i < n; i++) {
		struct ksym *s;
		size_t j;

		if ((i > 0 && raw[i].addr == raw[i - 1].addr) || raw[i].rank >= RANK_DATA)
			continue;
		s = &ks->syms[ks->nr++];
		s->addr = raw[i].addr;
		s->name = ks->strings + raw[i].name;
		s->module = raw[i].module == SIZE_MAX ? NULL : ks->strings + raw[i].module;
		for (j = i + 1; j < n && raw[j].addr == raw[i].addr; j++)
			;
		if (j < n)
			s->end = raw[j].addr;
		else if (s->addr > UINT64_MAX - KALLSYMS_LAST_SIZE)
			s->end = UINT64_MAX;
		else
			s->end = s->addr + KALLSYMS_LAST_SIZE;
	}
	free(raw);
	*out = ks;
	return 0;
nomem:
	free(raw);
	kallsyms_free(ks);
	return -ENOMEM;
}

int kallsyms_load(const char *path, struct kallsyms **out)
{
	size_t n = 0;
	char *buf = NULL;
	int err;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	err = procfs_read_file(path, &buf, &n);
	if (!err)
		err = kallsyms_parse(buf, n, out);
	free(buf);
	return err;
}

const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *start,
			    const char **module)
{
	size_t lo = 0, hi;
	const struct ksym *s;

	if (!ks || !ks->nr)
		return NULL;
	hi = ks->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &ks->syms[lo - 1];
	if (addr >= s->end)
		return NULL;
	if (start)
		*start = s->addr;
	if (module)
		*module = s->module;
	return s->name;
}

size_t kallsyms_count(const struct kallsyms *ks)
{
	return ks ? ks->nr : 0;
}

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->strings);
	free(ks);
}
