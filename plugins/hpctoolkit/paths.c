// SPDX-License-Identifier: BSD-2-Clause
/*
 * paths.c - turns the call stacks of samples into contexts of the
 * HPCToolkit plugin's calling context tree (cct.c): each frame is
 * resolved with the host's symbolizer into a function context and the line
 * context of its address below it, or, without a line, the function
 * context alone; a frame without a function is one instruction context
 * reached by a call (see cct.c for the shape).  No instruction context is
 * ever nested in a function: hpcviewer's flat view adds the exclusive time
 * of an instruction context to its load module on top of its function's
 * (which holds it already), so kernel and other line-less frames would
 * count twice there; HPCToolkit's own databases show such frames as
 * function -> function as well (hpcprof elides the instructions).
 *
 * Modules: the host's "" (anonymous memory: JIT code, trampolines) becomes
 * "[anon]", with the address itself as the offset (offsets in different
 * anonymous mappings would collide); a frame the host cannot place is in
 * "[unknown]" (user) or "[kernel.kallsyms]".
 *
 * Functions are told apart by (name, module, entry offset).  A Python
 * function (an interpreted frame, plugin.h's BPFPROF_INTERP_FRAME_*) has
 * no entry offset that two processes share (its function_start stands for
 * one code object of one process), so its def line takes that place, and
 * is its offset in meta.db: one procedure per function of a .py file, as a
 * native function is one per load module, however many processes (MPI
 * ranks) ran it.
 *
 * A walk can resume after the frames a previous walk of the same process
 * resolved (hpc_paths_walk() records the context after each frame, and
 * hpc_paths_common() says how many leading frames two stacks share).  The
 * host's strings (module, function, file names) are interned by address,
 * so their text is hashed only the first time an address is seen, and a
 * frame costs one lookup of (function name address, entry offset).  Kernel
 * frames, few addresses below many user stacks, are resolved once per
 * (pid, address).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/interp_image.h"
#include "hpc.h"

static const char kernel_module[] = "[kernel.kallsyms]";
static const char unknown_module[] = "[unknown]";
static const char anon_module[] = "[anon]";

void hpc_paths_init(struct hpc_paths *ps, struct hpc_cct *t, const struct bpfprof_host *host)
{
	memset(ps, 0, sizeof(*ps));
	ps->t = t;
	ps->host = host;
}

void hpc_paths_free(struct hpc_paths *ps)
{
	hashtab_free(&ps->modules);
	hashtab_free(&ps->files);
	hashtab_free(&ps->funcs);
	hashtab_free(&ps->interp_funcs);
	hashtab_free(&ps->kernel);
	free(ps->kframes);
	ps->kframes = NULL;
	ps->nr_kframes = ps->cap_kframes = 0;
}

/* Module or file index of the host's string @s, through @cache. */
static int64_t host_path(struct hpc_paths *ps, struct hashtab *cache, const char *s)
{
	uint32_t v = hashtab_get(cache, (uintptr_t)s, 0);
	int32_t r;

	if (v != HPC_NONE)
		return v;
	r = cache == &ps->modules ? hpc_cct_module(ps->t, s) : hpc_cct_file(ps->t, s);
	if (r >= 0 && hashtab_put(cache, (uintptr_t)s, 0, r))
		r = -ENOMEM;
	return r;
}

/* The function of a frame by its name's text, module and entry offset (a
 * Python function's def line): when new, with the file and line of its
 * first byte. */
static int64_t new_function(struct hpc_paths *ps, uint32_t pid, uint64_t addr, int kernel,
			    const struct bpfprof_symbol *sym, uint32_t module)
{
	uint64_t name = hpc_cct_string(ps->t, sym->function), offset = sym->function_start;
	int interp = !kernel && interp_image_frame(addr);
	struct bpfprof_symbol def;
	int64_t file = -1;
	uint32_t line = 0;
	int32_t f;

	if (name == UINT64_MAX)
		return -ENOMEM;
	if (!interp) {		/* a Python function needs its def line first */
		f = hpc_cct_find_func(ps->t, name + 1, module, offset);
		if (f >= 0)
			return f;
	}
	memset(&def, 0, sizeof(def));
	if (sym->module_offset >= sym->function_start &&
	    ps->host->symbolize(ps->host, pid, addr - (sym->module_offset - sym->function_start),
				kernel, &def) == 0 && def.file && def.line) {
		file = host_path(ps, &ps->files, def.file);
		if (file < 0)
			return file;
		line = def.line;
	}
	if (interp) {
		offset = line;
		f = hpc_cct_find_func(ps->t, name + 1, module, offset);
		if (f >= 0)
			return f;
	}
	return hpc_cct_add_func(ps->t, name + 1, module, offset, file, line);
}

/* A Python function's frame, by (its entry, @pid): one code object of one
 * process, which names one function. */
static int64_t interp_function(struct hpc_paths *ps, uint32_t pid, uint64_t addr,
			       const struct bpfprof_symbol *sym, uint32_t module)
{
	uint32_t f = hashtab_get(&ps->interp_funcs, sym->function_start, pid);
	int64_t r;

	if (f != HPC_NONE)
		return f;
	r = new_function(ps, pid, addr, 0, sym, module);
	if (r >= 0 && hashtab_put(&ps->interp_funcs, sym->function_start, pid, (uint32_t)r))
		r = -ENOMEM;
	return r;
}

/* The function of a frame, by the address of its name. */
static int64_t frame_function(struct hpc_paths *ps, uint32_t pid, uint64_t addr, int kernel,
			      const struct bpfprof_symbol *sym, uint32_t module)
{
	uint32_t f;
	int64_t r;

	if (!kernel && interp_image_frame(addr))
		return interp_function(ps, pid, addr, sym, module);
	f = hashtab_get(&ps->funcs, (uintptr_t)sym->function, (uint32_t)sym->function_start);
	if (f != HPC_NONE && ps->t->funcs[f].module == module &&
	    ps->t->funcs[f].offset == sym->function_start)
		return f;
	r = new_function(ps, pid, addr, kernel, sym, module);
	/* a name shared by functions of several modules: the last one */
	if (r >= 0 && hashtab_put(&ps->funcs, (uintptr_t)sym->function, (uint32_t)sym->function_start,
				  r))
		r = -ENOMEM;
	return r;
}

/* The contexts of a frame at @addr: its function (if symbolized) and the
 * line of @addr in it (HPC_NONE if none), or the instruction context of
 * @addr when there is no function. */
static int resolve_frame(struct hpc_paths *ps, uint32_t pid, uint64_t addr, int kernel,
			 struct hpc_frame *f)
{
	struct bpfprof_symbol sym;
	int64_t mod, fn = -1, id;

	memset(&sym, 0, sizeof(sym));
	if (ps->host->symbolize(ps->host, pid, addr, kernel, &sym) < 0 || !sym.module) {
		memset(&sym, 0, sizeof(sym));
		sym.module = kernel ? kernel_module : unknown_module;
		sym.module_offset = addr;
	} else if (!sym.module[0]) {
		sym.module = kernel ? kernel_module : anon_module;
		sym.module_offset = addr;
	}
	mod = host_path(ps, &ps->modules, sym.module);
	if (mod < 0)
		return (int)mod;
	f->func = f->point = HPC_NONE;
	if (sym.function) {
		fn = frame_function(ps, pid, addr, kernel, &sym, mod);
		id = fn < 0 ? fn : hpc_cct_identity(ps->t, -1, HPC_FUNC, HPC_REL_CALL, fn, 0, 0);
		if (id < 0)
			return (int)id;
		f->func = (uint32_t)id;
	}
	if (sym.function && sym.file && sym.line) {
		int64_t file = host_path(ps, &ps->files, sym.file);

		id = file < 0 ? file : hpc_cct_identity(ps->t, fn, HPC_LINE, HPC_REL_LEXICAL, file,
							sym.line, 0);
	} else if (sym.function) {
		return 0;		/* the function context alone */
	} else {
		id = hpc_cct_identity(ps->t, -1, HPC_INSN, HPC_REL_CALL, mod, 0, sym.module_offset);
	}
	if (id < 0)
		return (int)id;
	f->point = (uint32_t)id;
	return 0;
}

/* A kernel frame, resolved once per (pid, address): kernel stacks repeat
 * below many user stacks. */
static int kernel_frame(struct hpc_paths *ps, uint32_t pid, uint64_t addr, struct hpc_frame *f)
{
	uint32_t i = hashtab_get(&ps->kernel, addr, pid);
	int err;

	if (i != HPC_NONE) {
		*f = ps->kframes[i];
		return 0;
	}
	if ((err = resolve_frame(ps, pid, addr, 1, f)))
		return err;
	if (ps->nr_kframes == ps->cap_kframes) {
		uint32_t cap = ps->cap_kframes ? 2 * ps->cap_kframes : 256;
		struct hpc_frame *k = realloc(ps->kframes, cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		ps->kframes = k;
		ps->cap_kframes = cap;
	}
	if (hashtab_put(&ps->kernel, addr, pid, ps->nr_kframes))
		return -ENOMEM;
	ps->kframes[ps->nr_kframes++] = *f;
	return 0;
}

/* One frame below @parent; returns its innermost context. */
static uint32_t add_frame(struct hpc_paths *ps, uint32_t pid, uint32_t parent, uint64_t addr,
			  int kernel)
{
	struct hpc_frame f;
	int err = kernel ? kernel_frame(ps, pid, addr, &f) : resolve_frame(ps, pid, addr, 0, &f);

	if (err)
		return HPC_NONE;
	if (f.func != HPC_NONE)
		parent = hpc_cct_child_of(ps->t, parent, f.func);
	if (f.point == HPC_NONE || parent == HPC_NONE)
		return parent;
	return hpc_cct_child_of(ps->t, parent, f.point);
}

/* Address of frame @j of @st counted from the outermost one: callers'
 * addresses are return addresses, so look up the call (address - 1). */
static uint64_t frame_addr(const struct bpfprof_stack *st, uint32_t j)
{
	uint32_t i = st->nr - 1 - j;

	return i ? st->ips[i] - 1 : st->ips[i];
}

uint32_t hpc_paths_common(const struct bpfprof_stack *a, const struct bpfprof_stack *b)
{
	uint32_t n = a && b ? (a->nr < b->nr ? a->nr : b->nr) : 0, j = 0;

	while (j < n && frame_addr(a, j) == frame_addr(b, j))
		j++;
	return j;
}

int hpc_paths_cmp(const struct bpfprof_stack *a, const struct bpfprof_stack *b)
{
	uint32_t na = a ? a->nr : 0, nb = b ? b->nr : 0, j = hpc_paths_common(a, b);

	if (j < na && j < nb)
		return frame_addr(a, j) < frame_addr(b, j) ? -1 : 1;
	return na < nb ? -1 : na > nb;
}

uint32_t hpc_paths_walk(struct hpc_paths *ps, uint32_t pid, uint32_t node,
			const struct bpfprof_stack *st, uint32_t skip, int kernel, uint32_t *path)
{
	for (uint32_t j = skip; st && j < st->nr && node != HPC_NONE; j++) {
		node = add_frame(ps, pid, node, frame_addr(st, j), kernel);
		if (path)
			path[j] = node;
	}
	return node;
}

uint32_t hpc_paths_leaf(struct hpc_paths *ps, uint32_t pid, uint16_t entry_type,
			const struct bpfprof_stack *user, const struct bpfprof_stack *kernel)
{
	uint32_t node = hpc_cct_entry(ps->t, entry_type);

	node = hpc_paths_walk(ps, pid, node, user, 0, 0, NULL);
	return hpc_paths_walk(ps, pid, node, kernel, 0, 1, NULL);
}
