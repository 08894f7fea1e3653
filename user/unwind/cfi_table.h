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
