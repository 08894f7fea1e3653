/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind/cfi_loader_impl.h - private to the unwind table loader: its
 * state, shared by cfi_loader.c (tables into the kernel, processes'
 * entries, walks of copies) and cfi_relayout.c (lazy tables: the FDEs
 * built for copies, laid out again, and the entries that name them).
 */
#ifndef BPFPROF_UNWIND_CFI_LOADER_IMPL_H
#define BPFPROF_UNWIND_CFI_LOADER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uthash.h>

#include "cfi_row.h"
#include "symbols/elf_segments.h"
#include "unwind/cfi_loader.h"
#include "unwind/cfi_table.h"

/* How a file is told apart: its build-id, else device, inode and path. */
struct file_key {
	uint8_t build_id_size;		/* 0: identified by dev, inode, path hash */
	uint8_t build_id[47];
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint64_t path_hash;
};

/* Room in a chunk for a lazy table's rows. */
struct region {
	uint32_t chunk, first;
	uint32_t cap;			/* rows; 0: none yet */
	uint32_t stale_from;		/* the first row that may differ from the
					 * table's (UINT32_MAX: none) */
};

/* One file's table as loaded (or why it has none). */
struct file_entry {
	struct file_key key;
	uint32_t table;			/* its chunk, CFI_NO_TABLE if none */
	uint32_t first;			/* its first row in the chunk */
	uint32_t rows;
	struct elf_segments segments;	/* for load biases */
	/*
	 * A lazy table (cfi_table.h): kept with its FDEs built so far, in one
	 * of two regions, the other written when it gains rows
	 * (cfi_loader_flush()); NULL for a table complete when loaded.
	 */
	struct cfi_table *lazy;
	char *path;			/* a lazy table's file, as first mapped, for
					 * the budget's warning (NULL: none) */
	struct region regions[2];
	uint8_t live;			/* the region the processes' entries name */
	bool dirty;			/* rows built since the last layout */
	bool grown;			/* rows the on-disk cache has not got */
	uint32_t short_copies;		/* cfi_loader_short_copy() */
	UT_hash_handle hh;
};

/*
 * The "cfi_procs" value last written for a process that maps a lazy
 * table, and each mapping's entry: cfi_loader_flush() points them at
 * the tables' new layouts and writes them again.
 */
struct proc_record {
	uint32_t pid;
	uint32_t nr;
	struct cfi_mapping *maps;
	struct file_entry **entries;	/* by mapping; NULL: none */
	UT_hash_handle hh;
};

/* A chunk of rows, mapped into our memory for writing. */
struct chunk {
	struct cfi_row *rows;		/* mmap of the BPF array */
	uint32_t size;			/* rows it holds */
	uint32_t used;			/* rows taken by tables */
};

struct cfi_loader {
	int tables_fd, procs_fd, requests_fd;
	uint64_t *generation;		/* bumped at each cfi_procs change, or NULL */
	uint64_t budget;
	struct chunk chunks[CFI_MAX_CHUNKS];
	uint32_t nr_chunks;
	bool budget_warned;
	struct file_entry *files;	/* uthash by key */
	struct vdso_image *vdso;	/* ours, for [vdso] mappings; NULL if none */
	bool vdso_tried;
	struct file_entry *vdso_entry;
	struct file_entry *jit_entry;	/* the frame-pointer table of anonymous code */
	struct cfi_process *scratch;	/* the value being written */
	struct file_entry *entries[CFI_MAX_MAPPINGS];	/* the scratch's mappings' */
	const struct bpfprof_mapping *sources[CFI_MAX_MAPPINGS];	/* ... and their
							 * mappings as given */
	struct proc_record *records;	/* uthash by pid */
	uint32_t nr_dirty;		/* entries with rows not laid out yet */
	uint64_t dirty_since_ns;	/* when the first of them was built */
	struct cfi_cache *cache;	/* on-disk tables by build-id; borrowed, NULL: none */
	struct cfi_table *views;	/* cfi_loader_walk(): a table per mapping, its
					 * rows in a chunk (CFI_MAX_MAPPINGS; lazily) */
	const struct cfi_table **view_ptrs;
	struct cfi_loader_stats st;
};

/* FDEs cfi_loader_walk() builds for one copy at most (a walk stops at
 * each in turn). */
#define CFI_LOADER_BUILDS_PER_WALK 32

/* Rows a lazy table of @nr rows is given room for: the FDEs a run
 * builds add a few rows each. */
static inline uint32_t cfi_loader_lazy_room(uint32_t nr)
{
	return nr + nr / 2 + 1024;
}

/* Room for @n rows in a chunk (a new one if the last has none) into
 * *@r.  0, -ENOSPC (over the budget) or another negative errno. */
int cfi_loader_reserve_rows(struct cfi_loader *l, uint32_t n, const char *path, struct region *r);

/* A "cfi_procs" value was written or deleted: after it, the generation
 * (cfi_loader_set_generation()). */
void cfi_loader_procs_changed(struct cfi_loader *l);

/* Keep the scratch value just written for @pid if it names a lazy table
 * (cfi_loader_flush() writes it again); forget an older one. */
void cfi_loader_keep_record(struct cfi_loader *l, uint32_t pid);

/* Forget @pid's kept value, if any. */
void cfi_loader_drop_record(struct cfi_loader *l, uint32_t pid);

/*
 * Build the rows of the FDE of the walk's mapping @i (the scratch's
 * entries[] and sources[]) at ELF address @vaddr into its lazy table,
 * opening the file through @pid the first time (a table read from the
 * cache), and point the walk's views of the file's mappings at the rows
 * (they moved).  1 when built, 0 or a negative errno if not.
 */
int cfi_loader_build_fde(struct cfi_loader *l, uint32_t pid, uint32_t i, uint64_t vaddr);

/*
 * Copies whose walk ended where the copy did (stack-copy-too-small) after
 * meeting an FDE not built of a lazy table, before the table is built
 * whole: a walk over such a copy finds only the FDE the BPF walk names,
 * so a program with deep stacks of big frames (aomenc: ~130 of ~220
 * copies at the start) would discover its FDEs one copy at a time.
 */
#define CFI_LAZY_SHORT_COPIES 8

/* The copy just walked met a marker of the walk's mapping @i's lazy table
 * and ended where the copy did: at the CFI_LAZY_SHORT_COPIES-th, build
 * the whole table (cfi_table_build_all()) for cfi_loader_flush(). */
void cfi_loader_short_copy(struct cfi_loader *l, uint32_t i);

#endif /* BPFPROF_UNWIND_CFI_LOADER_IMPL_H */
