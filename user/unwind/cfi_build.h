/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind/cfi_build.h - private to the unwind table builder: the state of
 * one build, shared by cfi_table.c (rules to rows, assembling the table)
 * and cfi_fde.c (listing the FDEs of a CFI section).
 */
#ifndef BPFPROF_CFI_BUILD_H
#define BPFPROF_CFI_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#include "cfi_table.h"
#include "symbols/elf_section.h"

/* Where a CFI section comes from; SRC_FP: no section, a range of code
 * without CFI given the frame-pointer rule (cfi_fp.c). */
enum source { SRC_EH = 0, SRC_DEBUG = 1, SRC_FP = 2 };

/* One FDE's address range [lo, hi) (ELF virtual addresses). */
struct fde_range {
	uint64_t lo, hi;
	uint8_t src;		/* enum source */
};

/* One CIE: what its FDEs need to decode their start. */
struct cie_info {
	uint64_t offset;	/* section offset */
	uint8_t enc;		/* DW_EH_PE_* of FDE addresses */
	bool ok;		/* the augmentation was understood */
};

/* A CFI section: its bytes, address and libdw handle. */
struct section {
	Elf_Data *data;
	uint64_t vaddr;		/* sh_addr */
	Dwarf_CFI *cfi;		/* NULL: section unusable */
	Elf *elf;		/* .eh_frame's file, to renew @cfi; NULL: keep it */
	unsigned int fdes_read;	/* FDEs read through @cfi since it was made */
	bool eh;		/* .eh_frame (else .debug_frame) */
};

/* State of one build. */
struct builder {
	struct cfi_row *rows;
	size_t nr, cap;
	struct fde_range *fdes;
	size_t nr_fdes, cap_fdes;
	struct cfi_table_stats *st;
	bool lazy;		/* a marker for each FDE, no rows (cfi_lazy.c) */
};

/*
 * Make room for @need elements of @elem bytes in *@arr (capacity *@cap,
 * doubled from 64).  0 or -ENOMEM (the array is unchanged).
 */
int cfi_grow(void **arr, size_t *cap, size_t need, size_t elem);

/*
 * Add the address ranges of the FDEs of section @s (ELF identity @ident)
 * to b->fdes; malformed entries are counted in b->st.  0 or -ENOMEM.
 */
int cfi_list_fdes(struct builder *b, const struct section *s, const unsigned char *ident);

/*
 * cfi_list_fdes(), but for an .eh_frame @s of @elf whose .eh_frame_hdr has
 * a binary search table that accounts for every entry of the section: the
 * FDEs in the table's order, by start address, so that the builder need
 * not sort them (cfi_fde.c, hdr_table()).  Where the table is missing,
 * incomplete, out of order or ties two FDEs at one start, the section's
 * order as cfi_list_fdes() gives it.  0 or -ENOMEM.
 */
int cfi_list_fdes_indexed(struct builder *b, const struct section *s, Elf *elf,
			  const unsigned char *ident);

/*
 * Add to b->fdes, as SRC_FP ranges, the parts of V8's embedded builtins
 * (the extent of the Builtins_* function symbols of @elf's or @debug's
 * symbol table; either may be NULL) and of a Go program's .text (@elf has
 * a .go.buildinfo or .gopclntab section) that none of the FDEs listed so
 * far covers; reorders b->fdes.  0 (also when there are none) or -ENOMEM.
 */
int cfi_fp_ranges(struct builder *b, Elf *elf, Elf *debug);

/*
 * The rows of the FDE range [lo, hi) from @cfi, the first at @lo, pushed
 * onto b->rows.  Returns 0, -ENOMEM, or -EBADMSG when libdw could not give
 * a row (the rows pushed so far stay; the caller ends them with a marker).
 */
int cfi_fde_rows(struct builder *b, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi);

/*
 * FDEs a file needs for cfi_build_elf() to leave its FDEs' rows to be
 * built when a walk meets them (@lazy): below that, building them all
 * costs less than the stack copies the first meetings take (~20 us each
 * against ~1.3 us per FDE built; docs/PERFORMANCE.md, session 43).
 */
#define CFI_LAZY_MIN_FDES 1024

/*
 * cfi_table_build_elf(), or with @lazy and at least CFI_LAZY_MIN_FDES FDEs
 * a table of markers (CFI_UNBUILT_FDE, bpf/cfi_row.h) in place of the
 * FDEs' rows: stats.fdes_unbuilt of them, stats.fdes 0.  Errors as
 * cfi_table_build_elf().
 */
int cfi_build_elf(Elf *elf, Elf *debug, bool lazy, struct cfi_table **out);

#endif /* BPFPROF_CFI_BUILD_H */
