// SPDX-License-Identifier: BSD-2-Clause
/*
 * cct.c - the HPCToolkit plugin's calling context tree: entry points,
 * function, source line and instruction contexts, the load modules, source
 * files, functions and Common String Table that meta.db lists for them, and
 * the numbering of the contexts (ctxIds).
 *
 * Shape (hpctoolkit-v4-as-written.md section 3, "recommended shape"):
 *   entry point -> [call] function -> [lexical] line of the call site ->
 *   [call] function -> ... -> [lexical] line of the sample address.  A
 *   frame without a line (kernel, libraries without DWARF) is its function
 *   context alone (function -> [call] function, as HPCToolkit shows kernel
 *   frames); a frame without a symbol becomes a single instruction context
 *   reached by a call.  paths.c builds it.
 *
 * Memory: a context is 12 bytes (struct hpc_node); its children are a
 * linked list, searched linearly while short and through child_index once
 * a parent has more than CHILD_SCAN_MAX of them.  A line context holds just
 * its line when it is in its function's file (the usual case), else an
 * interned (file, line).  Strings, modules, files, functions and
 * instructions are interned to integers once, so nothing hashes a string
 * per frame.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "hpc.h"

#define CHILD_SCAN_MAX 8
#define STR_MIN_SLOTS 256

void hpc_cct_init(struct hpc_cct *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < 3; i++)
		t->entry[i] = HPC_NONE;
}

void hpc_cct_seal(struct hpc_cct *t)
{
	hashtab_free(&t->paths);
	hashtab_free(&t->func_index);
	hashtab_free(&t->insn_index);
	hashtab_free(&t->srcloc_index);
	hashtab_free(&t->child_index);
}

void hpc_cct_free(struct hpc_cct *t)
{
	hpc_cct_seal(t);
	hpc_pages_free(t->nodes, (size_t)t->cap_nodes * sizeof(*t->nodes));
	free(t->strtab);
	free(t->str_slots);
	free(t->modules);
	free(t->files);
	free(t->funcs);
	free(t->insns);
	free(t->srclocs);
	hpc_cct_init(t);
}

/* ---- the Common String Table ------------------------------------------- */

static size_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return (size_t)(h ^ (h >> 29));
}

/* The slot holding @s, or the empty slot where it belongs. */
static size_t str_slot(const struct hpc_cct *t, const char *s)
{
	size_t i = str_hash(s) & t->str_mask;

	while (t->str_slots[i] && strcmp(t->strtab + t->str_slots[i] - 1, s))
		i = (i + 1) & t->str_mask;
	return i;
}

static int str_grow(struct hpc_cct *t)
{
	size_t slots = t->str_slots ? 2 * (t->str_mask + 1) : STR_MIN_SLOTS, omask = t->str_mask;
	uint32_t *old = t->str_slots, *n = calloc(slots, sizeof(*n));

	if (!n)
		return -ENOMEM;
	t->str_slots = n;
	t->str_mask = slots - 1;
	for (size_t i = 0; old && i <= omask; i++)
		if (old[i])
			n[str_slot(t, t->strtab + old[i] - 1)] = old[i];
	free(old);
	return 0;
}

uint64_t hpc_cct_find_string(const struct hpc_cct *t, const char *s)
{
	uint32_t v;

	if (!t->str_slots)
		return UINT64_MAX;
	v = t->str_slots[str_slot(t, s)];
	return v ? v - 1 : UINT64_MAX;
}

uint64_t hpc_cct_string(struct hpc_cct *t, const char *s)
{
	size_t n = strlen(s) + 1, i;

	if ((!t->str_slots || 2 * (t->nr_strs + 1) > t->str_mask + 1) && str_grow(t))
		return UINT64_MAX;
	i = str_slot(t, s);
	if (t->str_slots[i])
		return t->str_slots[i] - 1;
	if (t->strtab_len + n >= UINT32_MAX)	/* offsets are kept as u32 */
		return UINT64_MAX;
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
	memcpy(t->strtab + t->strtab_len, s, n);
	t->str_slots[i] = (uint32_t)t->strtab_len + 1;
	t->nr_strs++;
	t->strtab_len += n;
	return t->strtab_len - n;
}

/* ---- load modules, source files, functions, instructions ---------------- */

static int32_t intern_path(struct hpc_cct *t, uint32_t **arr, uint32_t *nr, size_t *cap,
			   uint64_t kind, const char *path)
{
	uint64_t off = hpc_cct_string(t, path);
	uint32_t idx;

	if (off == UINT64_MAX)
		return -ENOMEM;
	idx = hashtab_get(&t->paths, off, kind);
	if (idx != HPC_NONE)
		return idx;
	if (*nr > HPC_MAX_INDEX)
		return -E2BIG;
	if (grow_array(arr, cap, *nr + 1, sizeof(**arr)) ||
	    hashtab_put(&t->paths, off, kind, *nr))
		return -ENOMEM;
	(*arr)[*nr] = (uint32_t)off;
	return (*nr)++;
}

int32_t hpc_cct_module(struct hpc_cct *t, const char *path)
{
	return intern_path(t, &t->modules, &t->nr_modules, &t->cap_modules, 0, path);
}

int32_t hpc_cct_file(struct hpc_cct *t, const char *path)
{
	return intern_path(t, &t->files, &t->nr_files, &t->cap_files, 1, path);
}

/* Functions are keyed (hash of their identity, n), n = 0, 1, ... past
 * other functions of the same hash (a table key holds 96 bits). */
static uint64_t func_hash(uint32_t name, uint32_t module, uint64_t offset)
{
	return hashtab_mix64(offset ^ hashtab_mix64((uint64_t)module << 32 | name));
}

/* The n of a new function's key. */
static uint32_t func_key_n(const struct hpc_cct *t, uint64_t h)
{
	uint32_t n = 0;

	while (hashtab_get(&t->func_index, h, n) != HPC_NONE)
		n++;
	return n;
}

int32_t hpc_cct_find_func(const struct hpc_cct *t, uint32_t name, uint32_t module,
			  uint64_t offset)
{
	uint64_t h = func_hash(name, module, offset);
	uint32_t v;

	for (uint32_t n = 0; (v = hashtab_get(&t->func_index, h, n)) != HPC_NONE; n++) {
		const struct hpc_func *f = &t->funcs[v];

		if (f->name == name && f->module == module && f->offset == offset)
			return (int32_t)v;
	}
	return -1;
}

int32_t hpc_cct_add_func(struct hpc_cct *t, uint32_t name, uint32_t module, uint64_t offset,
			 int32_t file, uint32_t line)
{
	if (t->nr_funcs > HPC_MAX_INDEX)
		return -E2BIG;
	if (grow_array(&t->funcs, &t->cap_funcs, t->nr_funcs + 1, sizeof(*t->funcs)) ||
	    hashtab_put(&t->func_index, func_hash(name, module, offset),
			func_key_n(t, func_hash(name, module, offset)), t->nr_funcs))
		return -ENOMEM;
	t->funcs[t->nr_funcs] = (struct hpc_func){ name, module, offset, file, line };
	return t->nr_funcs++;
}

int32_t hpc_cct_func(struct hpc_cct *t, const char *name, uint32_t module, uint64_t offset,
		     int32_t file, uint32_t line)
{
	uint32_t nm = 0;
	int32_t f;

	if (name) {
		uint64_t off = hpc_cct_string(t, name);

		if (off == UINT64_MAX)
			return -ENOMEM;
		nm = (uint32_t)off + 1;
	}
	f = hpc_cct_find_func(t, nm, module, offset);
	return f >= 0 ? f : hpc_cct_add_func(t, nm, module, offset, file, line);
}

static int32_t intern_insn(struct hpc_cct *t, uint32_t module, uint64_t offset)
{
	uint32_t v = hashtab_get(&t->insn_index, offset, module);

	if (v != HPC_NONE)
		return v;
	if (t->nr_insns > HPC_MAX_INDEX)
		return -E2BIG;
	if (grow_array(&t->insns, &t->cap_insns, t->nr_insns + 1, sizeof(*t->insns)) ||
	    hashtab_put(&t->insn_index, offset, module, t->nr_insns))
		return -ENOMEM;
	t->insns[t->nr_insns] = (struct hpc_insn){ module, offset };
	return t->nr_insns++;
}

static int32_t intern_srcloc(struct hpc_cct *t, uint32_t file, uint32_t line)
{
	uint32_t v = hashtab_get(&t->srcloc_index, file, line);

	if (v != HPC_NONE)
		return v;
	if (t->nr_srclocs > HPC_MAX_INDEX)
		return -E2BIG;
	if (grow_array(&t->srclocs, &t->cap_srclocs, t->nr_srclocs + 1, sizeof(*t->srclocs)) ||
	    hashtab_put(&t->srcloc_index, file, line, t->nr_srclocs))
		return -ENOMEM;
	t->srclocs[t->nr_srclocs] = (struct hpc_srcloc){ file, line };
	return t->nr_srclocs++;
}

/* ---- contexts ----------------------------------------------------------- */

/* A context's identity among its siblings: everything but the links. */
static uint32_t identity(uint32_t kind, uint32_t relation, uint32_t srcloc, uint32_t a)
{
	return kind | relation << 2 | srcloc << 3 | a << 5;
}

static uint32_t node_identity(const struct hpc_node *n)
{
	return identity(n->kind, n->relation, n->srcloc, n->a);
}

/* Put all children of @parent into child_index; from now on it is used. */
static void index_children(struct hpc_cct *t, uint32_t parent)
{
	for (uint32_t c = t->nodes[parent].first_child; c != HPC_NONE; c = t->nodes[c].next_sibling)
		if (hashtab_put(&t->child_index, parent, node_identity(&t->nodes[c]), c))
			return;		/* stays a list: slower, still right */
	t->nodes[parent].indexed = 1;
}

static uint32_t find_child(struct hpc_cct *t, uint32_t parent, uint32_t id)
{
	const struct hpc_node *nodes = t->nodes;
	uint32_t seen = 0;

	if (nodes[parent].indexed)
		return hashtab_get(&t->child_index, parent, id);
	for (uint32_t c = nodes[parent].first_child; c != HPC_NONE; c = nodes[c].next_sibling) {
		if (node_identity(&nodes[c]) == id)
			return c;
		seen++;
	}
	if (seen >= CHILD_SCAN_MAX)
		index_children(t, parent);
	return HPC_NONE;
}

/* Room for node @node in the node array (pages: grown without a copy). */
static int grow_nodes(struct hpc_cct *t, uint32_t node)
{
	uint64_t cap = t->cap_nodes ? 2ull * t->cap_nodes : 4096;
	void *p;

	if (node < t->cap_nodes)
		return 0;
	if (cap > UINT32_MAX - 1)
		cap = UINT32_MAX - 1;
	p = hpc_pages_realloc(t->nodes, (size_t)t->cap_nodes * sizeof(*t->nodes),
			      (size_t)cap * sizeof(*t->nodes));
	if (!p)
		return -ENOMEM;
	t->nodes = p;
	t->cap_nodes = (uint32_t)cap;
	return 0;
}

static uint32_t new_node(struct hpc_cct *t, uint32_t parent, uint32_t id)
{
	uint32_t node = t->nr_nodes;
	struct hpc_node *n;

	if (node >= UINT32_MAX - 2 || grow_nodes(t, node))
		return HPC_NONE;
	if (parent != HPC_NONE && t->nodes[parent].indexed &&
	    hashtab_put(&t->child_index, parent, id, node))
		return HPC_NONE;
	t->nr_nodes++;
	n = &t->nodes[node];
	memset(n, 0, sizeof(*n));
	n->kind = id & 3;
	n->relation = id >> 2 & 1;
	n->srcloc = id >> 3 & 1;
	n->a = id >> 5;
	n->first_child = HPC_NONE;
	n->next_sibling = HPC_NONE;
	if (parent != HPC_NONE) {
		n->next_sibling = t->nodes[parent].first_child;
		t->nodes[parent].first_child = node;
	}
	return node;
}

/* A line context's identity: the line alone if it is in the file of the
 * function it is nested in (@func, -1: none), else an interned (file, line). */
static int64_t line_identity(struct hpc_cct *t, int32_t func, uint8_t relation, uint32_t file,
			     uint32_t line)
{
	int32_t loc;

	if (func >= 0 && t->funcs[func].file == (int32_t)file && line <= HPC_MAX_INDEX)
		return identity(HPC_LINE, relation, 0, line);
	loc = intern_srcloc(t, file, line);
	if (loc < 0)
		return loc;
	return identity(HPC_LINE, relation, 1, loc);
}

int64_t hpc_cct_identity(struct hpc_cct *t, int32_t func, uint8_t kind, uint8_t relation,
			 uint32_t a, uint32_t line, uint64_t offset)
{
	int32_t i;

	relation &= 1;
	switch (kind) {
	case HPC_LINE:
		return line_identity(t, func, relation, a, line);
	case HPC_INSN:
		i = intern_insn(t, a, offset);
		return i < 0 ? i : (int64_t)identity(kind, relation, 0, i);
	default:
		return a > HPC_MAX_INDEX ? -E2BIG : (int64_t)identity(kind & 3, relation, 0, a);
	}
}

uint32_t hpc_cct_child_of(struct hpc_cct *t, uint32_t parent, uint32_t id)
{
	uint32_t c = find_child(t, parent, id);

	return c != HPC_NONE ? c : new_node(t, parent, id);
}

uint32_t hpc_cct_child(struct hpc_cct *t, uint32_t parent, uint8_t kind, uint8_t relation,
		       uint32_t a, uint32_t line, uint64_t offset)
{
	const struct hpc_node *p = parent != HPC_NONE ? &t->nodes[parent] : NULL;
	int64_t id;

	if (!p)
		return HPC_NONE;	/* roots: hpc_cct_entry() */
	id = hpc_cct_identity(t, p->kind == HPC_FUNC ? (int32_t)p->a : -1, kind, relation, a,
			      line, offset);
	return id < 0 ? HPC_NONE : hpc_cct_child_of(t, parent, (uint32_t)id);
}

uint32_t hpc_cct_entry(struct hpc_cct *t, uint16_t type)
{
	static const char *const names[] = { "unknown entry", "main thread", "application thread" };

	if (type > HPC_EP_THREAD)
		type = HPC_EP_UNKNOWN;
	if (t->entry[type] == HPC_NONE) {
		if (hpc_cct_string(t, names[type]) == UINT64_MAX)
			return HPC_NONE;
		t->entry[type] = new_node(t, HPC_NONE, identity(HPC_ENTRY, HPC_REL_CALL, 0, type));
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

void hpc_node_line(const struct hpc_cct *t, const struct hpc_node *parent,
		   const struct hpc_node *n, int32_t *file, uint32_t *line)
{
	if (n->srcloc) {
		*file = t->srclocs[n->a].file;
		*line = t->srclocs[n->a].line;
	} else {
		*file = parent && parent->kind == HPC_FUNC ? t->funcs[parent->a].file : -1;
		*line = n->a;
	}
}

/* ---- ctxIds: post order ----------------------------------------------- */

struct dfs_frame {
	uint32_t node;
	uint32_t next;			/* next child to descend into */
	uint32_t nchildren;		/* children finished so far */
};

struct dfs {
	struct hpc_cct *t;
	uint32_t *shape;
	hpc_cct_visit_fn visit;
	void *arg;
	uint32_t ctx;			/* last ctxId given */
	struct dfs_frame *st;
	size_t cap;
};

static int dfs_push(struct dfs *d, uint32_t depth, uint32_t node)
{
	if (grow_array(&d->st, &d->cap, depth + 1, sizeof(*d->st)))
		return -ENOMEM;
	d->st[depth] = (struct dfs_frame){ node, d->t->nodes[node].first_child, 0 };
	return 0;
}

static int dfs_finish(struct dfs *d, const struct dfs_frame *f, uint32_t depth)
{
	struct hpc_node *n = &d->t->nodes[f->node];
	const struct hpc_node *parent = depth ? &d->t->nodes[f[-1].node] : NULL;
	uint32_t lexical = n->relation == HPC_REL_LEXICAL && n->kind != HPC_ENTRY;

	n->ctx = ++d->ctx;
	if (d->shape)
		d->shape[n->ctx] = f->nchildren << 1 | (lexical ? HPC_SHAPE_LEXICAL : 0);
	return d->visit ? d->visit(d->arg, n, parent, depth) : 0;
}

static int number_subtree(struct dfs *d, uint32_t root)
{
	int64_t depth = 0;
	int err;

	if ((err = dfs_push(d, 0, root)))
		return err;
	while (depth >= 0) {
		struct dfs_frame *f = &d->st[depth];
		uint32_t c = f->next;

		if (c != HPC_NONE) {
			f->next = d->t->nodes[c].next_sibling;
			f->nchildren++;
			if ((err = dfs_push(d, ++depth, c)))
				return err;
			continue;
		}
		if ((err = dfs_finish(d, f, (uint32_t)depth)))
			return err;
		depth--;
	}
	return 0;
}

int hpc_cct_number(struct hpc_cct *t, uint32_t *shape, hpc_cct_visit_fn visit, void *arg)
{
	struct dfs d = { .t = t, .shape = shape, .visit = visit, .arg = arg };
	int err = 0;

	if (shape)
		shape[0] = 0;
	for (int e = 0; e < 3 && !err; e++)
		if (t->entry[e] != HPC_NONE)
			err = number_subtree(&d, t->entry[e]);
	free(d.st);
	return err;
}
