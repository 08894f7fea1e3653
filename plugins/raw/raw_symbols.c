// SPDX-License-Identifier: BSD-2-Clause
/*
 * raw/raw_symbols.c - the addresses another machine cannot name, named at
 * record time: every distinct kernel address (kallsyms and KASLR differ
 * from machine to machine and boot to boot) and every user address in a
 * [vdso] or anonymous-memory mapping (no file to find later), through
 * host->symbolize().  File-backed user addresses stay addresses.
 *
 * The reader looks an address q up as the first entry at or above q whose
 * function_start is <= q: no function starts between an entry's
 * function_start and its address, so that answers for the return address
 * itself and for the call site (q - 1) alike.  An entry whose address is
 * its function's start also gets one for address - 1, which belongs to
 * the function before.
 *
 * Python frames are no address of the process at all (pseudo-addresses
 * the collector names from the code objects it read while the process
 * lived): each distinct one is named here too, with its file, its line and
 * its function's first line (raw_collect_interp_symbols()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/interp_image.h"
#include "raw/raw.h"

struct addr_list {
	struct raw_symbol *a;
	size_t nr, cap;
};

static int add_symbol(struct addr_list *l, const struct raw_symbol *e)
{
	if (grow_array(&l->a, &l->cap, l->nr + 1, sizeof(*l->a)))
		return -ENOMEM;
	l->a[l->nr++] = *e;
	return 0;
}

static int add_addr(struct addr_list *l, uint32_t pid, uint64_t address)
{
	struct raw_symbol e = { .pid = pid, .address = address };

	return add_symbol(l, &e);
}

static int cmp_symbol(const void *a, const void *b)
{
	const struct raw_symbol *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* Sort and drop duplicates. */
static void sort_unique(struct addr_list *l)
{
	size_t n = 0;

	if (!l->nr)
		return;
	qsort(l->a, l->nr, sizeof(*l->a), cmp_symbol);
	for (size_t i = 1; i < l->nr; i++)
		if (cmp_symbol(&l->a[i], &l->a[n]))
			l->a[++n] = l->a[i];
	l->nr = n + 1;
}

static int kernel_addresses(const struct bpfprof_profile *p, struct addr_list *l)
{
	for (size_t i = 1; i < p->nr_stacks; i++) {
		const struct bpfprof_stack *s = &p->stacks[i];

		for (uint32_t f = 0; s->kernel && f < s->nr; f++)
			if (add_addr(l, 0, s->ips[f]))
				return -ENOMEM;
	}
	return 0;
}

/* A mapping whose addresses must be named now: no file holds them. */
static int fileless(const struct bpfprof_mapping *m)
{
	return !m->path || m->path[0] != '/';
}

static const struct bpfprof_mapping *find_mapping(const struct bpfprof_process *pr, uint64_t ip)
{
	size_t lo = 0, hi = pr->nr_mappings;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct bpfprof_mapping *m = &pr->mappings[mid];

		if (ip < m->start)
			hi = mid;
		else if (ip >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

/* The user frames of every count's stack, with the pid of their process:
 * @interp, the interpreter frames (bit 0 set: ip and ip - 1 are one
 * frame); else those in a file-less mapping. */
static int user_frames(const struct bpfprof_profile *p, int interp, struct addr_list *l)
{
	for (size_t i = 0; i < p->nr_counts; i++) {
		const struct bpfprof_count *c = &p->counts[i];
		const struct bpfprof_thread *t = &p->threads[c->thread];
		const struct bpfprof_process *pr = &p->processes[t->process];
		const struct bpfprof_stack *s = &p->stacks[c->user_stack];

		for (uint32_t f = 0; f < s->nr; f++) {
			const struct bpfprof_mapping *m;
			uint64_t ip = s->ips[f];

			if (interp) {
				if (interp_image_frame(ip) && add_addr(l, pr->pid, ip | 1))
					return -ENOMEM;
				continue;
			}
			m = interp_image_frame(ip) ? NULL : find_mapping(pr, ip);
			if (m && fileless(m) && add_addr(l, pr->pid, ip))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Name @e; false if the host knows no function there. */
static int name_one(const struct bpfprof_host *host, int kernel, struct raw_symbol *e)
{
	struct bpfprof_symbol sym;

	if (host->symbolize(host, e->pid, e->address, kernel, &sym) || !sym.function ||
	    !sym.module)
		return 0;
	e->function = sym.function;
	e->module = sym.module;
	e->function_start = sym.function_start;
	e->module_offset = sym.module_offset;
	/* in the module's terms: the start as an address */
	if (!kernel)
		e->function_start = e->address - (sym.module_offset - sym.function_start);
	return 1;
}

int raw_collect_symbols(const struct bpfprof_host *host, const struct bpfprof_profile *p,
			int kernel, struct raw_symbol **out, size_t *nr)
{
	struct addr_list l = { 0 }, named = { 0 };
	int err = kernel ? kernel_addresses(p, &l) : user_frames(p, 0, &l);

	sort_unique(&l);
	for (size_t i = 0; i < l.nr && !err; i++) {
		struct raw_symbol e = l.a[i], before = e;

		if (!name_one(host, kernel, &e))
			continue;
		before.address = e.address - 1;
		if (e.function_start == e.address && e.address && name_one(host, kernel, &before))
			err = add_symbol(&named, &before);
		err = err ?: add_symbol(&named, &e);
	}
	free(l.a);
	if (err) {
		free(named.a);
		return err;
	}
	sort_unique(&named);
	*out = named.a;
	*nr = named.nr;
	return 0;
}

/* Name interpreter frame @e: false if the host has no function for it. */
static int name_interp(const struct bpfprof_host *host, struct raw_symbol *e)
{
	struct bpfprof_symbol sym, def;

	if (host->symbolize(host, e->pid, e->address, 0, &sym) || !sym.function ||
	    sym.function_start > e->address || !interp_image_frame(sym.function_start))
		return 0;
	e->function = sym.function;
	e->module = sym.module;
	e->file = sym.file;
	e->line = sym.line;
	e->module_offset = e->address;
	e->function_start = sym.function_start;
	if (!host->symbolize(host, e->pid, sym.function_start, 0, &def))
		e->start_line = def.line;
	return 1;
}

int raw_collect_interp_symbols(const struct bpfprof_host *host, const struct bpfprof_profile *p,
			       struct raw_symbol **out, size_t *nr)
{
	struct addr_list l = { 0 };
	size_t n = 0;
	int err = user_frames(p, 1, &l);

	if (err) {
		free(l.a);
		return err;
	}
	sort_unique(&l);
	for (size_t i = 0; i < l.nr; i++)
		if (name_interp(host, &l.a[i]))
			l.a[n++] = l.a[i];
	*out = l.a;
	*nr = n;
	return 0;
}
