/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.h - turning sampled addresses into struct bpfprof_symbol:
 * load module, offset in the module's ELF vaddr space, function (ELF
 * symbol tables) and source file:line (DWARF), for user addresses through
 * the process's mappings and for kernel addresses through the kernel's own
 * kallsyms_lookup() (a BPF program, ksym_lookup.h) or /proc/kallsyms.
 * GNU build-ids are read by buildid.h.
 *
 * ELF files are handled with elfutils (one Dwfl per file, reported at
 * base 0 so that module addresses are the file's own vaddrs; separate
 * debug files are found locally by debuginfo_find(): build-id under
 * /usr/lib/debug/.build-id, then .gnu_debuglink; see debuginfo.h).  Files are cached by
 * (dev, inode, path) of the mapping, and results by (file, vaddr).
 *
 * [vdso] mappings have no file: they are looked up in a copy of the
 * symbolizer's own process's vDSO (vdso.h), taken on first use.  The
 * kernel maps one image per ABI into every process, at randomized
 * addresses, so an address's offset into the target's [vdso] mapping is
 * its offset into that copy, provided vdso_image_matches() says the
 * images are the same (same mapping size, the process of the same ABI,
 * the same build-id where the mapping carries one; see symbolizer_user()).
 *
 * Not thread-safe: one struct symbolizer must be used by one thread at a
 * time.  Addresses are resolved exactly as given; callers that resolve
 * return addresses of a call stack usually pass ip - 1 for all but the
 * leaf frame so that the call instruction's line is found.
 */
#ifndef BPFPROF_SYMBOLIZE_H
#define BPFPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpfprof/plugin.h>

/*
 * Default number of ELF files kept open at once (each holds one or two
 * file descriptors: the file and its separate debug file).  Files beyond
 * it are closed least recently used first and reopened when needed.
 */
#define SYMBOLIZE_MAX_OPEN_FILES 64

/* The module name of core kernel addresses. */
#define SYMBOLIZE_KERNEL_MODULE "[kernel.kallsyms]"

/*
 * A symbolizer (opaque; symbols/symbolizer_impl.h): its open ELF files,
 * cached results, interned strings and kernel name source.  Strings it
 * hands out live until symbolizer_free().
 */
struct symbolizer;

/*
 * A new symbolizer with empty caches, or NULL if out of memory.  The
 * kernel symbol table is loaded from /proc/kallsyms on the first
 * symbolizer_kernel() call.
 */
struct symbolizer *symbolizer_new(void);

/*
 * Keep at most @max_open (> 0) ELF files open (default
 * SYMBOLIZE_MAX_OPEN_FILES).  Returns 0 or -EINVAL.
 */
int symbolizer_set_max_open(struct symbolizer *s, size_t max_open);

/*
 * Release @s, its caches and every string it handed out.  NULL allowed.
 */
void symbolizer_free(struct symbolizer *s);

/*
 * Whether lookups also find the DWARF source file and line (the default).
 * Without, no DWARF is loaded: far less memory and time when only function
 * names matter.  Set it before the first lookup; @s must not be NULL.
 */
void symbolizer_set_lines(struct symbolizer *s, bool lines);

/*
 * Whether mangled ELF symbol names (C++, "_Z...") are shown demangled,
 * with their parameters, as c++filt prints them (demangle.h; the
 * default), or as the symbol table has them.  Set it before the first
 * lookup; @s must not be NULL.
 */
void symbolizer_set_demangle(struct symbolizer *s, bool demangle);

struct locate_opts;
struct sym_cache_stats;

/*
 * Keep the function tables built from files with a build-id in @dir, and
 * read them from there in later runs (sym_cache.h: "<build-id>.sym"
 * files, in the unwind-table cache's directory, which the caller checked
 * with cfi_cache_open()); NULL: no cache (the default).  0, -EINVAL for
 * a NULL @s, -ENOMEM.
 */
int symbolizer_set_cache_dir(struct symbolizer *s, const char *dir);

/* What @s's symbol cache did so far (zeros without one). */
void symbolizer_cache_stats(const struct symbolizer *s, struct sym_cache_stats *st);


/*
 * Find the files of mappings resolved with pid 0 (no live process: a
 * measurement symbolized later, elsewhere) by build-id through the
 * places @o names, in the order of locate.h: the recorded path (under
 * the sysroot), the debug directories and their build-id trees,
 * debuginfod.  A file whose build-id is not the mapping's recorded one
 * is never used.  Without this (the default), pid 0 opens the recorded
 * path as procmaps_open_file() does; lookups with a live @pid are not
 * affected either way.  Set it before the first lookup.  Returns 0;
 * -EBUSY after a user address was resolved; -EINVAL for a NULL @s or
 * options locate_new() refuses; -ENOMEM.
 */
int symbolizer_set_locator(struct symbolizer *s, const struct locate_opts *o);

/*
 * Resolve the user address @ip of process @pid, whose mappings are @maps
 * (@nr entries sorted by start, e.g. from procmaps_read()).  @sym is
 * cleared and filled:
 *   module          the mapping's path ("[vdso]", "" for anonymous memory;
 *                   " (deleted)" kept as in the maps file);
 *   mapping         the element of @maps holding @ip (the caller's memory);
 *   module_offset   for ELF files and the vDSO, @ip in the file's (image's)
 *                   vaddr space: file offset = ip - start + pgoff, then
 *                   through the PT_LOAD segment holding that file offset;
 *                   when the file cannot be read or no segment holds the
 *                   offset, and for other non-file mappings, the file
 *                   offset itself;
 *   function, function_start  ELF symbol (.symtab, else .dynsym/.gnu_debugdata)
 *                   containing it, without its version ("@GLIBC_2.2.5"),
 *                   demangled (symbolizer_set_demangle()); start in the
 *                   same vaddr space; in
 *                   [vdso] the global name of the vDSO's .dynsym
 *                   (__vdso_clock_gettime rather than its weak alias
 *                   clock_gettime), only if the mapping is as large as
 *                   ours, the process's first executable ELF file that
 *                   opens has our ELF class and machine, and the
 *                   mapping's build-id, if it carries one, is ours (so a
 *                   32-bit or x32 process, or one whose files cannot be
 *                   read, gets no name rather than a wrong one);
 *   file, line      DWARF line info, if debug info is available.
 * The file is opened through /proc/@pid/map_files or /proc/@pid/root
 * when @pid is alive, else by its path (see procmaps_open_file()); @pid 0
 * means "use the path only", or the locator's places when one was set
 * (symbolizer_set_locator()).  Files are told apart by the mapping's
 * (device, inode, path, build-id).
 * Returns 0 when the mapping was found, even if the file was unreadable
 * or malformed or the function is unknown (function NULL then);
 * -ENOENT if @ip is in no mapping (sym->module NULL); -EINVAL for NULL
 * arguments; -ENOMEM.  Strings stay valid until symbolizer_free().
 */
int symbolizer_user(struct symbolizer *s, uint32_t pid, const struct bpfprof_mapping *maps,
		    size_t nr, uint64_t ip, struct bpfprof_symbol *sym);

/*
 * Resolve the kernel address @ip: module SYMBOLIZE_KERNEL_MODULE or
 * "[MODULE]" for a module symbol, module_offset = @ip, function and
 * function_start, no file/line.  The names come from the table of
 * symbolizer_load_kallsyms() if one was loaded; else from the kernel
 * itself through BPF (ksym_lookup.h: one bpf() call per new address,
 * cached); else, where that program cannot load, from /proc/kallsyms
 * (loaded once, lazily).  Returns 0 if a symbol was found; -ENOENT if not
 * (sym->module NULL), also when no source can be read (addresses hidden
 * by kptr_restrict count as not found); -EINVAL, -ENOMEM.
 */
int symbolizer_kernel(struct symbolizer *s, uint64_t ip, struct bpfprof_symbol *sym);

/*
 * Use the kallsyms text file at @path instead of /proc/kallsyms (for
 * tests, or a saved copy).  Must be called before the first
 * symbolizer_kernel(); returns 0, -EINVAL if that already chose where
 * kernel names come from, or an error of kallsyms_load().
 */
int symbolizer_load_kallsyms(struct symbolizer *s, const char *path);

#endif /* BPFPROF_SYMBOLIZE_H */
