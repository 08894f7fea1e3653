// SPDX-License-Identifier: BSD-2-Clause
/*
 * merge/merge_symbols.c - what a plugin's host->symbolize() answers in
 * `bpfprof merge` (see merge.h): never /proc, and never this machine's
 * kernel.
 *
 *   kernel addresses        the names the recording machine stored
 *                           (RAW_SEC_KERNEL_SYMBOLS of the process's file)
 *   [vdso], anonymous and   the names stored for that process
 *   other file-less memory  (RAW_SEC_USER_SYMBOLS), else the mapping only
 *   Python frames           the names, files and lines stored for that
 *                           process (RAW_SEC_INTERP_SYMBOLS), answered as
 *                           the live collector does (interp/interp.h),
 *                           else "[python]" without a function
 *   file-backed addresses   the symbolizer with pid 0 (by path) over the
 *                           recorded mappings, found where they were
 *                           or, moved, by build-id (merge_locate_setup())
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge/merge.h"
#include "symbols/locate.h"
#include "symbols/symbolize.h"

/*
 * Where the recorded binaries are looked for (symbols/locate.h): at their
 * recorded paths under @o's --sysroot, by build-id under each --debug-dir
 * and this machine's debug tree, and through debuginfod when
 * DEBUGINFOD_URLS is set; a file whose build-id is not the recorded one
 * is never used.  The directories are made absolute here.  0 or negative
 * errno (after a one-line message).
 */
static int merge_locate_setup(struct symbolizer *s, const struct merge_options *o)
{
	char *dirs[MERGE_MAX_DEBUG_DIRS] = { 0 }, *sysroot = NULL;
	struct locate_opts lo = { .debug_dirs = (const char *const *)dirs,
				  .nr_debug_dirs = o->nr_debug_dirs, .debuginfod = true };
	int err = 0;

	for (size_t i = 0; i < o->nr_debug_dirs && !err; i++)
		if (!(dirs[i] = realpath(o->debug_dirs[i], NULL)))
			err = -errno;
	if (!err && o->sysroot && !(sysroot = realpath(o->sysroot, NULL)))
		err = -errno;
	lo.sysroot = sysroot;
	err = err ?: symbolizer_set_locator(s, &lo);
	if (err)
		fprintf(stderr, "bpfprof merge: cannot search --debug-dir/--sysroot: %s\n",
			strerror(-err));
	for (size_t i = 0; i < o->nr_debug_dirs; i++)
		free(dirs[i]);
	free(sysroot);
	return err;
}

static void fill_from(const struct raw_symbol *e, uint64_t ip, int kernel,
		      struct bpfprof_symbol *sym)
{
	sym->module = e->module;
	sym->function = e->function;
	/* the entry's module offset, moved back to @ip; the start likewise */
	sym->module_offset = kernel ? ip : e->module_offset - (e->address - ip);
	sym->function_start = kernel ? e->function_start
				     : e->module_offset - (e->address - e->function_start);
}

/* A kernel address: the table of @pid's file, or of any file for pid 0
 * or a pid no file has (the first that names it). */
static int resolve_kernel(struct merge *m, uint32_t pid, uint64_t ip, struct bpfprof_symbol *sym)
{
	const struct merge_file *f = merge_file_of(m, pid);
	const struct raw_symbol *e = NULL;

	if (f)
		e = raw_symbol_find(f->rf.ksyms, f->rf.nr_ksyms, 0, ip);
	for (size_t i = 0; !f && !e && i < m->nr_files; i++)
		e = raw_symbol_find(m->files[i].rf.ksyms, m->files[i].rf.nr_ksyms, 0, ip);
	if (!e)
		return -ENOENT;
	fill_from(e, ip, 1, sym);
	return 0;
}

/* A file-less user mapping: the stored name, else the mapping alone. */
static int resolve_fileless(struct merge *m, const struct proc *proc,
			    const struct bpfprof_mapping *map, uint64_t ip,
			    struct bpfprof_symbol *sym)
{
	const struct merge_file *f = merge_file_of(m, proc->pid);
	const struct raw_symbol *e = NULL;

	if (f)
		e = raw_symbol_find(f->rf.usyms, f->rf.nr_usyms,
				    proc->host_pid ? proc->host_pid : proc->pid, ip);
	sym->mapping = map;
	if (e && ip >= map->start) {
		fill_from(e, ip, 0, sym);
		return 0;
	}
	sym->module = map->path ? map->path : "";
	sym->module_offset = ip - map->start + map->pgoff;
	return 0;
}

/*
 * A Python frame (pseudo-address; ip and ip - 1 are one frame), as
 * interp_symbolize() answers live: module and file the source file,
 * function the qualified name, line the frame's (or, for its function's
 * start, the function's first line), no mapping.  An address between
 * two recorded frames of one function gets the function without a line.
 */
static int resolve_interp(struct merge *m, uint32_t pid, uint64_t ip, struct bpfprof_symbol *sym)
{
	const struct merge_file *f = merge_file_of(m, pid);
	const struct proc *proc = profile_find_proc(m->profile, pid);
	uint64_t q = ip | 1;
	const struct raw_symbol *e = NULL;

	if (f)
		e = raw_symbol_find(f->rf.isyms, f->rf.nr_isyms,
				    proc && proc->host_pid ? proc->host_pid : pid, q);
	sym->module_offset = q;
	if (!e) {
		sym->module = "[python]";
		return 0;
	}
	sym->module = e->module;
	sym->function = e->function;
	sym->function_start = e->function_start;
	sym->file = e->file;
	sym->line = e->address == q ? e->line : q == e->function_start ? e->start_line : 0;
	return 0;
}

static int merge_resolve(void *ctx, uint32_t pid, uint64_t ip, int kernel,
			 struct bpfprof_symbol *sym)
{
	struct merge *m = ctx;
	const struct proc *proc;
	const struct bpfprof_mapping *map;

	if (kernel)
		return resolve_kernel(m, pid, ip, sym);
	if (ip >= BPFPROF_INTERP_FRAME_START && ip < BPFPROF_INTERP_FRAME_END)
		return resolve_interp(m, pid, ip, sym);
	proc = profile_find_proc(m->profile, pid);
	if (!proc || !(map = proc_find_map(proc, ip)))
		return -ENOENT;
	if (!map->path || map->path[0] != '/')
		return resolve_fileless(m, proc, map, ip, sym);
	return symbolizer_user(m->symbolizer, 0, proc->maps, proc->nr_maps, ip, sym);
}

int merge_symbols_attach(struct merge *m)
{
	m->session.host.resolve = merge_resolve;
	m->session.host.resolve_ctx = m;
	return merge_locate_setup(m->symbolizer, m->opts);
}
