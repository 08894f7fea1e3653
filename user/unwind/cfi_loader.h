/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi_loader.h - the collector's half of `--call-graph auto`: puts into
 * the BPF program's maps (bpf/cfi_walk.bpf.h) what its stack walk reads.
 *
 *  - One unwind table per ELF file (user/unwind/cfi_table.h), built the
 *    first time a process maps the file executable, copied into a chunk
 *    (a BPF array map of rows, BPF_F_INNER_MAP | BPF_F_MMAPABLE, in a slot
 *    of "cfi_tables"; CFI_CHUNK_ROWS rows, so creating one, which waits
 *    for an RCU grace period, is rare; the first, made before sampling,
 *    a quarter of that), and shared by every later process
 *    that maps the same file: files are told apart by GNU build-id, else
 *    by device, inode and path.  Tables stay loaded for the whole run (a
 *    short-lived process that maps libc again costs one hash lookup).
 *  - One struct cfi_process per process in "cfi_procs": its executable
 *    mappings with load bias and table id, rewritten whole each time the
 *    tracker re-reads the process's mappings.  Executable mappings
 *    without a usable table (files without CFI, files over the memory
 *    budget) are listed with CFI_NO_TABLE, so the walk stops there
 *    without asking for them again.
 *  - Anonymous executable mappings (JIT code) have no CFI; their tables
 *    come from user/unwind/cfi_anon.h, with the mapping's start as bias:
 *    CPython's perf trampolines get rows of their own (shared by
 *    mappings with the same bytes), any other code one table of one row,
 *    the frame-pointer rule (CFA = rbp + 16, return address at CFA - 8,
 *    the caller's rbp at CFA - 16), shared by all.
 *
 * The vDSO's table comes from bpfprof's own copy of the image
 * (symbols/vdso.h), used for a process's [vdso] mapping of the same size.
 * Not thread-safe: one loader per collector thread.
 */
#ifndef BPFPROF_UNWIND_CFI_LOADER_H
#define BPFPROF_UNWIND_CFI_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include <bpfprof/plugin.h>		/* struct bpfprof_mapping */

/* Default of --unwind-memory: bytes of chunks the kernel may hold. */
#define CFI_LOADER_DEFAULT_BUDGET (256ull << 20)

/* What the loader did so far. */
struct cfi_loader_stats {
	uint64_t tables;		/* tables loaded into the kernel */
	uint64_t rows;			/* their rows */
	uint64_t table_bytes;		/* their rows' bytes */
	uint64_t chunk_bytes;		/* BPF map memory holding them (chunks), bytes */
	uint64_t cached_tables;		/* of those, read from the on-disk cache (cfi_cache.h) */
	uint64_t cache_read_ns;		/* time spent reading those (ns, CLOCK_MONOTONIC) */
	uint64_t cfi_bytes;		/* bytes of .eh_frame + .debug_frame the tables
					 * built (not cached) came from */
	uint64_t build_ns;		/* time spent building those (ns, CLOCK_MONOTONIC) */
	uint64_t load_ns;		/* time spent creating and filling their maps (ns) */
	uint64_t files_without_table;	/* files whose table could not be built (no CFI,
					 * not x86-64 ELF, unreadable, ...) */
	uint64_t files_over_budget;	/* files left without a table by the budget or
					 * by the CFI_MAX_CHUNKS slots */
	uint64_t process_updates;	/* struct cfi_process values written */
	uint64_t process_update_errors;	/* ... that the kernel refused (map full) */
	uint64_t mappings_dropped;	/* executable mappings beyond CFI_MAX_MAPPINGS */
	uint64_t cache_hits;		/* mappings whose file's table was known already */
	uint64_t anonymous_mappings;	/* anonymous executable mappings (JIT code)
					 * given the frame-pointer table, counted
					 * at each process update */
	uint64_t trampoline_mappings;	/* ... found to hold CPython's perf
					 * trampolines (their own rows), counted
					 * likewise */
	uint64_t lazy_tables;		/* tables loaded with FDEs not built
					 * (cfi_table.h, lazy tables) */
	uint64_t fdes_built;		/* FDEs of those built since, as walks of
					 * copies met them (cfi_loader_walk()) */
	uint64_t relayouts;		/* lazy tables laid out again for them
					 * (cfi_loader_flush()) */
	uint64_t tables_completed;	/* lazy tables built whole: read from the
					 * cache (a file met in an earlier run), or
					 * their walks' copies too short to find
					 * their FDEs */
};

struct cfi_loader;

/*
 * A loader writing to the maps @tables_fd ("cfi_tables") and @procs_fd
 * ("cfi_procs"), and re-arming requests in @requests_fd ("cfi_requests":
 * after a process's mappings are written, its next walk that meets
 * something unknown asks again at once), all borrowed (they outlive the
 * loader), with at most
 * @budget bytes of chunks (0: CFI_LOADER_DEFAULT_BUDGET).  Creates the
 * first chunk at once.  NULL on ENOMEM.
 */
struct cfi_loader *cfi_loader_new(int tables_fd, int procs_fd, int requests_fd,
				  uint64_t budget);

/*
 * Build and load now the tables nearly every process needs: the vDSO's,
 * and those of the C library and dynamic loader bpfprof itself maps (the
 * same files as its targets' on this system), so that a process started
 * during the run waits for none of them.  Errors are only counted.
 */
void cfi_loader_preload(struct cfi_loader *l);

/*
 * Process @pid's mappings are now @maps (@nr, sorted by start, as in
 * struct proc): build and load the tables its executable mappings need,
 * then write its struct cfi_process.  Files are opened through
 * /proc/@pid/map_files first (procmaps_open_file()).  Returns 0, or a
 * negative errno from writing the process's value (-E2BIG: the map is
 * full) or -ENOMEM; a file without a table is not an error (counted).
 */
int cfi_loader_update(struct cfi_loader *l, uint32_t pid, const struct bpfprof_mapping *maps,
		      size_t nr);

/*
 * Walk a copy of @pid's user stack (@stack, from regs->sp) with the
 * tables its mappings @maps (@nr, sorted by start) have in the kernel,
 * built and loaded now if they are not yet: the walk the BPF program
 * would have made had the process's struct cfi_process been written (the
 * reference walk, cfi_walk.h, over the loaded rows).  For auto's copies of
 * young processes' stacks (bpf/stack_copy.bpf.h), which come while those
 * tables are being loaded, and of stacks whose walk met an FDE of a lazy
 * table not built yet: the walk builds such FDEs as it meets them (at
 * most CFI_LOADER_BUILDS_PER_WALK), and the one at @unbuilt_pc (the pc
 * where the BPF walk met a marker, 0: none) first, for
 * cfi_loader_flush() to load.  Writes at most @max pcs into @ips; returns
 * their number (>= 1) with *@res filled, or -EINVAL (see cfi_walk()) or
 * -ENOMEM.  Does not write @pid's value.
 */
struct cfi_walk_regs;
struct cfi_walk_stack;
struct cfi_walk_result;
int cfi_loader_walk(struct cfi_loader *l, uint32_t pid, const struct bpfprof_mapping *maps,
		    size_t nr, const struct cfi_walk_regs *regs, const struct cfi_walk_stack *stack,
		    uint64_t unbuilt_pc, uint64_t *ips, uint32_t max, struct cfi_walk_result *res);

/*
 * Put the FDE rows cfi_loader_walk() built since the last call into the
 * kernel: each lazy table that gained rows is laid out again in the room
 * it keeps for that (two regions, written in turn), and the "cfi_procs"
 * values of the processes that map it are written again, pointed there
 * (only values that exist still: an exec or an exit dropped its value).
 * Call after each batch of copies; cheap when nothing was built.
 */
void cfi_loader_flush(struct cfi_loader *l);

/* When (monotonic ns) the oldest FDE not yet flushed was built; 0: none. */
uint64_t cfi_loader_dirty_since(const struct cfi_loader *l);

/*
 * Store into the on-disk cache (cfi_loader_set_cache()) each lazy table
 * built or grown this run, with the FDEs built so far: the next run that
 * meets the file builds its table whole from it (and stores that).  At
 * the end of a run.
 */
void cfi_loader_save(struct cfi_loader *l);

/* cfi_loader_update() with @pid's mappings read from /proc/@pid/maps now
 * (build-ids included).  0 or a negative errno (-ENOENT: no such process). */
int cfi_loader_load_pid(struct cfi_loader *l, uint32_t pid);

/* Process @pid is gone: drop its value (its tables stay). */
void cfi_loader_forget(struct cfi_loader *l, uint32_t pid);

/*
 * Bump *@gen (atomically; borrowed, must outlive the loader; NULL: none)
 * after each write or deletion of a "cfi_procs" value from now on: the
 * BPF program's cfi_procs_gen (bpf/cfi_memo.bpf.h), so that no walk takes
 * a thread's memo of a walk over a process's older mappings.
 */
void cfi_loader_set_generation(struct cfi_loader *l, uint64_t *gen);

/*
 * Read tables from and write them to @cache (cfi_cache.h; borrowed, must
 * outlive the loader's use; NULL: build every table) from now on: a file
 * with a build-id is looked up there before its table is built, and a
 * table built is stored there.
 */
struct cfi_cache;
void cfi_loader_set_cache(struct cfi_loader *l, struct cfi_cache *cache);

/* Copy the counters into *@st. */
void cfi_loader_stats(const struct cfi_loader *l, struct cfi_loader_stats *st);

/* Free the loader and its file cache; the kernel maps are the sampler's.
 * NULL is fine. */
void cfi_loader_free(struct cfi_loader *l);

#endif /* BPFPROF_UNWIND_CFI_LOADER_H */
