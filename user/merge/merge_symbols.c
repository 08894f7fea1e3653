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
 *   file-backed addresses   the symbolizer with pid 0 (by path) over the
 *                           recorded mappings; merge_locate_setup() is
 *                           where binaries that moved are found
 */
#include <errno.h>
#include <string.h>

#include "merge/merge.h"
#include "symbols/symbolize.h"

/*
 * Where the recorded binaries are looked for: today at their recorded
 * paths only.  This is the one place a locator (by build-id under
 * @debug_dir, under @sysroot, or through debuginfod; user/symbols/) plugs
 * into @s.  0 or negative errno.
 */
static int merge_locate_setup(struct symbolizer *s, const char *debug_dir, const char *sysroot)
{
	(void)s;
	(void)debug_dir;
	(void)sysroot;
	return 0;
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

static int merge_resolve(void *ctx, uint32_t pid, uint64_t ip, int kernel,
			 struct bpfprof_symbol *sym)
{
	struct merge *m = ctx;
	const struct proc *proc;
	const struct bpfprof_mapping *map;

	if (kernel)
		return resolve_kernel(m, pid, ip, sym);
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
	return merge_locate_setup(m->symbolizer, m->opts->debug_dir, m->opts->sysroot);
}
