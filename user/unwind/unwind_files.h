/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind_files.h - the ELF files of the dwarf-mode unwinder (unwind.c),
 * opened once per file and shared by every process that maps them.
 *
 * A process's Dwfl needs, for each executable file it maps, the file's
 * ELF handle (its .eh_frame), the load bias of the mapping and, where the
 * file has no .eh_frame entry for a pc, the .debug_frame of a separate
 * debug file.  Building those per process cost 3.4 ms of CPU for every
 * short-lived exec'd child: each one opened and mapped its files again,
 * and libdw decompressed the whole separate debug file of ld.so (libc6-dbg
 * ships compressed .debug_* sections) to look for a .debug_frame that it
 * does not have.  Here a file is opened once: one libelf handle, reference
 * counted into each process's Dwfl (libelf hands out the same Elf again
 * for elf_begin() with it as the reference), its segments, and whether a
 * separate debug file with a .debug_frame exists, decided once from the
 * section headers (no decompression).
 *
 * Identity of a file: the device and inode of the mapping, as
 * /proc/PID/maps and perf's MMAP2 records give them; the cache holds the
 * file open, so the inode cannot be reused while it is cached, and checks
 * the open file's size and mtime again on each use (a file rewritten in
 * place is opened anew).
 *
 * Not thread-safe (one unwinder, one thread).
 */
#ifndef BPFPROF_UNWIND_FILES_H
#define BPFPROF_UNWIND_FILES_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

#include <bpfprof/plugin.h>

#include "symbols/vdso.h"		/* struct elf_abi */

/* One cached ELF file (opaque). */
struct unwind_file;

/* The cache (opaque). */
struct unwind_files;

/* Files kept open at once; beyond, the least recently used is closed. */
#define UNWIND_FILES_MAX 256

/* A new empty cache of at most @max_open files (0: UNWIND_FILES_MAX), or
 * NULL if out of memory. */
struct unwind_files *unwind_files_new(size_t max_open);

/* Close every file of @c and free it; Dwfls still using a file keep their
 * reference to its Elf.  NULL allowed. */
void unwind_files_free(struct unwind_files *c);

/*
 * The file of the file mapping @m of process @pid: the cached one if its
 * device and inode match (and its size and mtime did not change), else
 * opened through procmaps_open_file() (map_files while @pid lives, else
 * the path, checked by inode) and cached.  Returns 0 and sets *@out
 * (owned by the cache), or -errno: those of
 * procmaps_open_file(), -EINVAL if it is no ELF file, -ENOMEM.  A file
 * closed to stay within the cache's bound keeps its entry (and is opened
 * again when a mapping needs it): the entries live until
 * unwind_files_free(), so modules may point at them.
 */
int unwind_files_get(struct unwind_files *c, uint32_t pid, const struct bpfprof_mapping *m,
		     struct unwind_file **out);

/*
 * A file that is not in the cache, made from @fd (consumed, also on
 * failure) named @name: bpfprof's own vDSO image.  It gets no debug file.
 * 0 and *@out (freed with unwind_file_free()), or -EINVAL, -ENOMEM.
 */
int unwind_file_from_fd(int fd, const char *name, struct unwind_file **out);

/* Free a file made by unwind_file_from_fd().  NULL allowed. */
void unwind_file_free(struct unwind_file *f);

/* The ELF class and machine of @f. */
const struct elf_abi *unwind_file_abi(const struct unwind_file *f);

/*
 * Report @f, mapped at @start from file offset @pgoff, as a module named
 * @name of @dwfl (between dwfl_report_begin() and dwfl_report_end()).
 * The Dwfl must use unwind_files_callbacks; its module takes its own
 * reference to the file's Elf at once.  0, or -EINVAL (no segment holds
 * @pgoff, or libdwfl refused the module).
 */
int unwind_file_report(struct unwind_file *f, Dwfl *dwfl, const char *name, uint64_t start,
		       uint64_t pgoff);

/* Dwfl callbacks for modules reported by unwind_file_report(): the ELF
 * from the cache, a separate debug file only where it has a .debug_frame. */
extern const Dwfl_Callbacks unwind_files_callbacks;

/* Counters of a cache. */
struct unwind_files_stats {
	uint64_t opened;		/* files opened (cache misses) */
	uint64_t shared;		/* lookups served from the cache */
	uint64_t debug_checked;		/* separate debug files looked at for .debug_frame */
};

/* Copy the counters of @c into @st. */
void unwind_files_stats(const struct unwind_files *c, struct unwind_files_stats *st);

#endif /* BPFPROF_UNWIND_FILES_H */
