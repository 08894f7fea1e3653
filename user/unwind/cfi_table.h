/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi_table.h - building the unwind table of one ELF file for
 * `--call-graph auto` (issue 15): the sorted struct cfi_row array
 * (bpf/cfi_row.h) for all of the file's code, derived from its
 * .eh_frame, and from .debug_frame (of the file itself or of its separate
 * debug file) for code .eh_frame does not cover, the way libdwfl prefers
 * them when it unwinds.
 *
 * The CFI is read with elfutils' CFI API only: dwarf_next_cfi() lists the
 * FDEs, dwarf_cfi_addrframe() + dwarf_frame_info() give each FDE's rows
 * (one per [start, end) range), dwarf_frame_cfa() and
 * dwarf_frame_register() their rules.  Rules a row cannot hold become
 * stop rows counted by kind, except the patterns recognised: the linker's
 * PLT expression and glibc's signal trampoline (__restore_rt).  Code
 * without CFI stays a gap, except V8's embedded builtins, named by the
 * symbol table: the frame-pointer rule (cfi_fp.c).
 *
 * Only x86-64 ELF64 little-endian files.  Not thread-safe per table; the
 * builder itself keeps no global state (several threads may build
 * different tables at once).
 */
#ifndef BPFPROF_UNWIND_CFI_TABLE_H
#define BPFPROF_UNWIND_CFI_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

#include "cfi_row.h"		/* bpf/: the row, shared with the BPF walker */
#include "symbols/elf_segments.h"

/* What building one table found and cost. */
struct cfi_table_stats {
	uint64_t eh_frame_bytes;	/* size of .eh_frame, bytes (0: none) */
	uint64_t debug_frame_bytes;	/* size of .debug_frame used, bytes,
					 * uncompressed (0: none) */
	uint64_t build_ns;		/* wall time of the build, ns
					 * (CLOCK_MONOTONIC; cfi_table_build():
					 * opening the files included) */
	uint64_t bytes;			/* rows * sizeof(struct cfi_row) */
	uint32_t rows;			/* rows in the table */
	uint32_t rows_merged;		/* CFI rows dropped as equal to the
					 * row before them */
	uint32_t fdes;			/* FDEs whose rows are in the table */
	uint32_t fdes_unbuilt;		/* FDEs whose rows are not built yet: a
					 * marker each (lazy tables, cfi_lazy.c) */
	uint32_t fdes_skipped;		/* FDEs left out: empty, beyond 4 GiB,
					 * covered by another FDE, or whose
					 * rows libdw could not give */
	uint32_t bad_entries;		/* malformed CIE/FDE entries (the rest
					 * of that section is then ignored) */
	uint32_t rbp_lost;		/* rows with CFI_RBP_LOST although CFI
					 * did not say "undefined" */
	uint32_t fp_ranges;		/* ranges without CFI given the
					 * frame-pointer rule (V8's builtins, Go
					 * code; user/unwind/cfi_fp.c) */
	uint32_t eh_frame_handles;	/* libdw handles made for .eh_frame: one
					 * per FDES_PER_CFI_HANDLE FDEs where
					 * libdw searches .eh_frame_hdr's table,
					 * else one (cfi_table.c) */
	uint32_t fdes_indexed;		/* FDEs of .eh_frame listed in the order
					 * of .eh_frame_hdr's table, already by
					 * address (cfi_fde.c); 0: listed in the
					 * section's order, then sorted */
	uint32_t kinds[CFI_KIND_NR];	/* rows by enum cfi_kind */
};

/*
 * The table of one ELF file.  Everything is owned by the table and
 * released by cfi_table_free(); read-only for users.
 */
struct cfi_table {
	struct cfi_row *rows;		/* nr rows, pc strictly increasing: malloc()ed,
					 * or inside mapping */
	uint32_t nr;
	void *mapping;			/* a cache file read in place (cfi_cache.c,
					 * private and writable), or NULL */
	size_t mapping_size;		/* its bytes */
	uint8_t build_id_size;		/* bytes in build_id, 0: none */
	uint8_t build_id[64];		/* GNU build-id (first 64 bytes) */
	struct elf_segments segments;	/* PT_LOAD segments and type, for load biases */
	struct cfi_table_stats stats;
	struct cfi_lazy *lazy;		/* the file open for cfi_table_build_fde(),
					 * or NULL */
};

/*
 * Build the table of the ELF file at @path, with .debug_frame also taken
 * from @debug_path (its separate debug file, same virtual addresses) when
 * that is not NULL.  The debug file is optional: if it cannot be opened or
 * is not ELF, the table is built without it (no error).
 *
 * On success returns 0 and sets *@out to a new table (free it with
 * cfi_table_free()); it has at least one row besides its end marker.
 * Malformed entries after good ones are skipped and counted
 * (stats.bad_entries), the good ones kept.  Errors (negative errno,
 * *@out untouched):
 *   -EINVAL   NULL @path or @out
 *   -ENOENT, -EACCES, ...  from open()
 *   -ENOEXEC  not an ELF file, or a truncated / malformed one
 *   -ENOTSUP  an ELF file for another machine or class than x86-64 ELF64
 *   -ENODATA  neither .eh_frame nor .debug_frame with any FDE
 *   -EBADMSG  CFI present but malformed: not one FDE could be used
 *   -ENOMEM
 */
int cfi_table_build(const char *path, const char *debug_path, struct cfi_table **out);

/*
 * The same for an ELF image in memory (@size bytes at @image, e.g. the
 * vDSO, which the kernel maps without a file); the image must stay valid
 * during the call only.  Errors as cfi_table_build(), -EINVAL for a NULL
 * @image or @size 0.
 */
int cfi_table_build_mem(const void *image, size_t size, struct cfi_table **out);

/*
 * The same for open libelf handles: @elf the file, @debug its separate
 * debug file or NULL.  Neither is consumed; their sections may be
 * decompressed in place.
 */
int cfi_table_build_elf(Elf *elf, Elf *debug, struct cfi_table **out);

/*
 * Lazy tables (user/unwind/cfi_lazy.c).  A file with at least
 * CFI_LAZY_MIN_FDES FDEs (cfi_build.h) costs its walks less built FDE by
 * FDE, as walks meet them: a run's walks meet ~5 % of python3.11's rows
 * (docs/PERFORMANCE.md, session 42).
 *
 * The table of the ELF file open as @fd, with a marker (CFI_UNBUILT_FDE,
 * bpf/cfi_row.h) in place of each FDE's rows, and t->lazy, the file
 * mapped (released by cfi_table_free()), for cfi_table_build_fde(); a
 * file with fewer FDEs gets all its rows and no lazy state, as
 * cfi_table_build_elf() gives them (so does one whose mapping libelf
 * cannot keep).  The mapping the build read is the one kept.  @fd stays
 * the caller's, and may be closed on return.  Errors as
 * cfi_table_build_elf().
 */
int cfi_table_build_lazy(int fd, struct cfi_table **out);

/*
 * Open @t->lazy on the file @fd (mapped; @fd stays the caller's, and may
 * be closed on return): for a table with markers read from the on-disk
 * cache.  0 (also when it is open already), -EINVAL, -ENOMEM, -ENOEXEC
 * (not ELF, or libelf could not map it).
 */
int cfi_table_lazy_open(struct cfi_table *t, int fd);

/*
 * Build the rows of the FDE whose marker holds the ELF address @vaddr,
 * through @t->lazy, into @t in place of the marker (rows reallocated:
 * earlier pointers into t->rows are stale; a table read in place from a
 * cache file is copied out of it first).  An FDE libdw gives no row for
 * becomes a gap (CFI_KIND_STOP_NO_ROW).  Returns 1 when the table
 * changed, 0 when @vaddr is in no marker, -ENOENT when t->lazy is not
 * open, -ENOMEM.
 */
int cfi_table_build_fde(struct cfi_table *t, uint64_t vaddr);

/*
 * All the rows of @t's file, in place of its rows and markers, as
 * cfi_table_build_elf() gives them (through @t->lazy, closed after):
 * for a file whose walks keep meeting FDEs not built one at a time.
 * Returns 1 when the table changed (rows reallocated), 0 when it had no
 * marker, -ENOENT when t->lazy is not open, or cfi_table_build_elf()'s
 * errors (the table is then as it was).
 */
int cfi_table_build_all(struct cfi_table *t);

/* The markers of FDEs not built in @t, counted now (also into
 * t->stats.fdes_unbuilt). */
uint32_t cfi_table_count_unbuilt(struct cfi_table *t);

/* Release lazy state (cfi_table_free() does).  NULL is allowed. */
struct cfi_lazy;
void cfi_lazy_close(struct cfi_lazy *lz);

/* Release @t and everything it owns.  NULL is allowed. */
void cfi_table_free(struct cfi_table *t);

/*
 * The row of @t that holds for the ELF virtual address @vaddr: the last
 * row whose pc <= @vaddr, found by binary search; NULL if @vaddr is below
 * the first row or beyond 32 bits.  The row may be a stop row (e.g.
 * CFI_KIND_STOP_NO_ROW in a gap).
 */
const struct cfi_row *cfi_table_find(const struct cfi_table *t, uint64_t vaddr);

/*
 * The load bias of @t's file mapped at @start with file offset @pgoff
 * (a line of /proc/PID/maps): start - vaddr(pgoff), vaddr through the
 * PT_LOAD segment that holds @pgoff; 0 for ET_EXEC.  Returns 0 and sets
 * *@bias, or -EINVAL when no segment holds @pgoff.
 */
int cfi_table_load_bias(const struct cfi_table *t, uint64_t start, uint64_t pgoff,
			uint64_t *bias);

/* Short name of a row kind, an enum cfi_kind (CFI_ROW_KIND() of a row:
 * "rsp", "rbp", "plt", "signal", "rbx", "no-row", ...), "?" when out of
 * range. */
const char *cfi_kind_name(unsigned int kind);

#endif /* BPFPROF_UNWIND_CFI_TABLE_H */
