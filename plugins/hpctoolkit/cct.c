// SPDX-License-Identifier: BSD-2-Clause
/*
 * cct.c - the HPCToolkit plugin's calling context tree: entry points,
 * function, source line and instruction contexts built from symbolized
 * call stacks, and the load modules, source files, functions and Common
 * String Table that meta.db lists for them.
 *
 * Shape (hpctoolkit-v4-as-written.md section 3, "recommended shape"):
 *   entry point -> [call] function -> [lexical] line or instruction of the
 *   call site -> [call] function -> ... -> [lexical] line/instruction of the
 *   sample address.  A frame without a symbol becomes a single instruction
 *   context reached by a call.  ctxId = node index + 1 (0 is global).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hpc.h"

void hpc_cct_init(struct hpc_cct *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < 3; i++)
		t->entry[i] = HPC_NONE;
}

static void free_strs(struct hpc_str **h)
{
	struct hpc_str *s, *tmp;

	HASH_ITER(hh, *h, s, tmp) {
		HASH_DEL(*h, s);
		free(s->s);
		free(s);
	}
}

void hpc_cct_free(struct hpc_cct *t)
{
	struct hpc_node_ent *e, *etmp;
	struct hpc_func *f, *ftmp;

	HASH_ITER(hh, t->node_index, e, etmp) {
		HASH_DEL(t->node_index, e);
		free(e);
	}
	HASH_ITER(hh, t->func_index, f, ftmp) {
		HASH_DEL(t->func_index, f);
		free(f);
	}
	free_strs(&t->strings);
	free_strs(&t->module_index);
	free_strs(&t->file_index);
	free(t->nodes);
	free(t->strtab);
	free(t->modules);
	free(t->files);
	free(t->funcs);
	memset(t, 0, sizeof(*t));
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t n;
	void *p;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	p = realloc(*arr, (size_t)n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

uint64_t hpc_cct_string(struct hpc_cct *t, const char *s)
{
	struct hpc_str *e;
	size_t n = strlen(s) + 1;

	HASH_FIND_STR(t->strings, s, e);
	if (e)
		return e->off;
	if (t->strtab_len + n > t->strtab_cap) {
		uint64_t cap = t->strtab_cap ? t->strtab_cap : 4096;
		char *p;

		while (cap < t->strtab_len + n)
			cap *= 2;
		p = realloc(t->strtab, cap);
		if (!p)
			return UINT64_MAX;
		t->strtab = p;
		t->strtab_cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->s = strdup(s))) {
		free(e);
		return UINT64_MAX;
	}
	e->off = t->strtab_len;
	memcpy(t->strtab + t->strtab_len, s, n);
	t->strtab_len += n;
	HASH_ADD_KEYPTR(hh, t->strings, e->s, n - 1, e);
	return e->off;
}

static int32_t intern_path(struct hpc_cct *t, struct hpc_str **index, struct hpc_str ***arr,
			   uint32_t *nr, uint32_t *cap, const char *path)
{
	struct hpc_str *e;

	HASH_FIND_STR(*index, path, e);
	if (e)
		return e->idx;
	if (grow((void **)arr, cap, *nr + 1, sizeof(**arr)))
		return -ENOMEM;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->s = strdup(path))) {
		free(e);
		return -ENOMEM;
	}
	e->off = hpc_cct_string(t, path);
	if (e->off == UINT64_MAX) {
		free(e->s);
		free(e);
		return -ENOMEM;
	}
	e->idx = *nr;
	(*arr)[(*nr)++] = e;
	HASH_ADD_KEYPTR(hh, *index, e->s, strlen(e->s), e);
	return e->idx;
}

int32_t hpc_cct_module(struct hpc_cct *t, const char *path)
{
	return intern_path(t, &t->module_index, &t->modules, &t->nr_modules, &t->cap_modules,
			   path);
}

int32_t hpc_cct_file(struct hpc_cct *t, const char *path)
{
	return intern_path(t, &t->file_index, &t->files, &t->nr_files, &t->cap_files, path);
}

static struct hpc_func *find_func(struct hpc_cct *t, const char *name, uint32_t module,
				  uint64_t offset)
{
	struct hpc_func probe, *f;
	struct hpc_str *s = NULL;

	memset(&probe, 0, sizeof(probe));
	if (name) {
		HASH_FIND_STR(t->strings, name, s);
		if (!s)
			return NULL;
		probe.key.name_off_plus1 = s->off + 1;
	}
	probe.key.module = module;
	probe.key.offset = offset;
	HASH_FIND(hh, t->func_index, &probe.key, sizeof(probe.key), f);
	return f;
}

int32_t hpc_cct_func(struct hpc_cct *t, const char *name, uint32_t module, uint64_t offset,
		     int32_t file, uint32_t line)
{
	struct hpc_func *f = find_func(t, name, module, offset);
	uint64_t off;

	if (f)
		return f->idx;
	if (grow((void **)&t->funcs, &t->cap_funcs, t->nr_funcs + 1, sizeof(*t->funcs)))
		return -ENOMEM;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	if (name) {
		off = hpc_cct_string(t, name);
		if (off == UINT64_MAX) {
			free(f);
			return -ENOMEM;
		}
		f->key.name_off_plus1 = off + 1;
	}
	f->key.module = module;
	f->key.offset = offset;
	f->file = file;
	f->line = line;
	f->idx = t->nr_funcs;
	t->funcs[t->nr_funcs++] = f;
	HASH_ADD(hh, t->func_index, key, sizeof(f->key), f);
	return f->idx;
}

uint32_t hpc_cct_child(struct hpc_cct *t, uint32_t parent, uint8_t kind, uint8_t relation,
		       uint32_t a, uint32_t line, uint64_t offset)
{
	struct hpc_node_key key;
	struct hpc_node_ent *e;
	struct hpc_node *n;
	uint32_t id;

	memset(&key, 0, sizeof(key));
	key.parent = parent;
	key.kind = kind;
	key.a = a;
	key.b = kind == HPC_LINE ? line : offset;
	HASH_FIND(hh, t->node_index, &key, sizeof(key), e);
	if (e)
		return e->node;
	if (grow((void **)&t->nodes, &t->cap_nodes, t->nr_nodes + 1, sizeof(*t->nodes)))
		return HPC_NONE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return HPC_NONE;
	id = t->nr_nodes++;
	n = &t->nodes[id];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->kind = kind;
	n->relation = relation;
	n->a = a;
	n->line = line;
	n->offset = offset;
	n->first_child = n->last_child = n->next_sibling = HPC_NONE;
	if (kind == HPC_ENTRY)
		n->entry = a;
	if (parent != HPC_NONE) {
		struct hpc_node *p = &t->nodes[parent];

		if (p->last_child == HPC_NONE)
			p->first_child = id;
		else
			t->nodes[p->last_child].next_sibling = id;
		p->last_child = id;
	}
	e->key = key;
	e->node = id;
	HASH_ADD(hh, t->node_index, key, sizeof(e->key), e);
	return id;
}

uint32_t hpc_cct_entry(struct hpc_cct *t, uint16_t type)
{
	if (type > HPC_EP_THREAD)
		type = HPC_EP_UNKNOWN;
	static const char *const names[] = { "unknown entry", "main thread", "application thread" };

	if (t->entry[type] == HPC_NONE) {
		if (hpc_cct_string(t, names[type]) == UINT64_MAX)
			return HPC_NONE;
		t->entry[type] = hpc_cct_child(t, HPC_NONE, HPC_ENTRY, HPC_REL_CALL, type, 0, 0);
	}
	return t->entry[type];
}

uint32_t hpc_ctx_size(const struct hpc_node *n)
{
	switch (n->kind) {
	case HPC_FUNC: return 0x20 + 8;		/* pFunction */
	case HPC_LINE: return 0x20 + 16;	/* pFile, line */
	case HPC_INSN: return 0x20 + 16;	/* pModule, offset */
	default: return 0x20;
	}
}

/* One frame: its function context (if symbolized) and call-site context. */
static uint32_t add_frame(struct hpc_cct *t, const struct bpfprof_host *host, uint32_t pid,
			  uint32_t parent, uint64_t addr, int kernel)
{
	struct bpfprof_symbol sym;
	int32_t mod, fn = -1, file;
	uint64_t moff;

	memset(&sym, 0, sizeof(sym));
	if (host->symbolize(host, pid, addr, kernel, &sym) < 0 || !sym.module) {
		memset(&sym, 0, sizeof(sym));
		sym.module = kernel ? "[kernel.kallsyms]" : "[unknown]";
		sym.module_offset = addr;
	}
	mod = hpc_cct_module(t, sym.module);
	if (mod < 0)
		return HPC_NONE;
	moff = sym.module_offset;
	if (sym.function) {
		struct hpc_func *f = find_func(t, sym.function, mod, sym.function_start);

		if (f) {
			fn = f->idx;
		} else {
			/* file and line of the definition: those of its first byte */
			struct bpfprof_symbol def;
			int32_t dfile = -1;
			uint32_t dline = 0;

			memset(&def, 0, sizeof(def));
			if (sym.module_offset >= sym.function_start &&
			    host->symbolize(host, pid, addr - (sym.module_offset - sym.function_start),
					    kernel, &def) == 0 && def.file && def.line) {
				dfile = hpc_cct_file(t, def.file);
				dline = def.line;
				if (dfile < 0)
					return HPC_NONE;
			}
			fn = hpc_cct_func(t, sym.function, mod, sym.function_start, dfile, dline);
			if (fn < 0)
				return HPC_NONE;
		}
		parent = hpc_cct_child(t, parent, HPC_FUNC, HPC_REL_CALL, fn, 0, 0);
		if (parent == HPC_NONE)
			return HPC_NONE;
		if (sym.file && sym.line) {
			file = hpc_cct_file(t, sym.file);
			if (file < 0)
				return HPC_NONE;
			return hpc_cct_child(t, parent, HPC_LINE, HPC_REL_LEXICAL, file, sym.line, 0);
		}
		return hpc_cct_child(t, parent, HPC_INSN, HPC_REL_LEXICAL, mod, 0, moff);
	}
	return hpc_cct_child(t, parent, HPC_INSN, HPC_REL_CALL, mod, 0, moff);
}

uint32_t hpc_cct_path(struct hpc_cct *t, const struct bpfprof_host *host, uint32_t pid,
		      uint16_t entry_type, const struct bpfprof_stack *user,
		      const struct bpfprof_stack *kernel)
{
	uint32_t node = hpc_cct_entry(t, entry_type);
	const struct bpfprof_stack *st[2] = { user, kernel };

	/* root first: the user stack from its outermost frame, then the kernel's */
	for (int s = 0; s < 2 && node != HPC_NONE; s++) {
		if (!st[s])
			continue;
		for (uint32_t i = st[s]->nr; i-- > 0 && node != HPC_NONE;) {
			uint64_t ip = st[s]->ips[i];

			/* callers' addresses are return addresses: look up the call */
			node = add_frame(t, host, pid, node, i ? ip - 1 : ip, s == 1);
		}
	}
	return node;
}
