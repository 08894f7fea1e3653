// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwind/cfi_fp.c - code without CFI that the unwind table builder
 * (cfi_build.h) gives the frame-pointer rule: V8's embedded builtins, and
 * the code of Go programs.
 *
 * V8 (Node.js, and any program embedding it) generates its builtins at
 * build time and links them into the binary's .text as one blob with no
 * FDEs; the symbol table names each one (Builtins_InterpreterEntryTrampoline,
 * Builtins_JSEntry, ...).  Like V8's JIT code they keep rbp-linked frames,
 * so the frame-pointer rule (CFA = rbp + 16, return address at CFA - 8,
 * the caller's rbp at CFA - 16) steps over them: without it a stack stops
 * at the first builtin between the JavaScript frames and main.  The range
 * is the extent of the file's Builtins_* function symbols; only its
 * parts no FDE covers get the rule, so code with CFI keeps its rows, and
 * a file without such symbols (every other binary, or V8 stripped of its
 * symbol table) is left as its CFI says.
 *
 * Go's compiler writes no .eh_frame, only .debug_frame, which `go build
 * -ldflags=-s` (how Go programs ship) and strip remove; a cgo program's
 * .eh_frame covers its C code only.  Go keeps rbp-linked frames on x86-64
 * (since 1.7), so a Go binary (one with a .go.buildinfo or .gopclntab
 * section, which stripping keeps) gets the frame-pointer rule in the parts
 * of its .text no FDE covers: without it the walk of a stripped Go
 * program stops at the leaf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_build.h"

#define V8_BUILTIN_PREFIX "Builtins_"

/*
 * Widen [*lo, *hi) to the function symbols named Builtins_* of @elf's
 * symbol tables (.symtab; .dynsym does not hold them).
 */
static void builtin_extent(Elf *elf, uint64_t *lo, uint64_t *hi)
{
	size_t plen = strlen(V8_BUILTIN_PREFIX);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = d ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 1; i < n; i++) {
			const char *name;
			GElf_Sym s;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_size || s.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || strncmp(name, V8_BUILTIN_PREFIX, plen))
				continue;
			if (s.st_value < *lo)
				*lo = s.st_value;
			if (s.st_value + s.st_size > *hi)
				*hi = s.st_value + s.st_size;
		}
	}
}

/*
 * Widen [*lo, *hi) to @elf's .text when @elf is a Go program (see the
 * top of the file); @elf may be NULL.
 */
static void go_text_extent(Elf *elf, uint64_t *lo, uint64_t *hi)
{
	GElf_Shdr sh;

	if (!elf_section_by_name(elf, ".go.buildinfo", &sh) &&
	    !elf_section_by_name(elf, ".gopclntab", &sh))
		return;
	if (!elf_section_by_name(elf, ".text", &sh) || sh.sh_type != SHT_PROGBITS ||
	    !(sh.sh_flags & SHF_EXECINSTR))
		return;
	if (sh.sh_addr < *lo)
		*lo = sh.sh_addr;
	if (sh.sh_addr + sh.sh_size > *hi)
		*hi = sh.sh_addr + sh.sh_size;
}

static int range_lo_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Append [lo, hi) to b->fdes as a frame-pointer range.  0 or -ENOMEM. */
static int add_fp_range(struct builder *b, uint64_t lo, uint64_t hi)
{
	if (cfi_grow((void **)&b->fdes, &b->cap_fdes, b->nr_fdes + 1, sizeof(*b->fdes)))
		return -ENOMEM;
	b->fdes[b->nr_fdes++] = (struct fde_range){ .lo = lo, .hi = hi, .src = SRC_FP };
	b->st->fp_ranges++;
	return 0;
}

int cfi_fp_ranges(struct builder *b, Elf *elf, Elf *debug)
{
	uint64_t lo = UINT64_MAX, hi = 0, cursor;
	size_t nr = b->nr_fdes;
	int err;

	builtin_extent(elf, &lo, &hi);
	builtin_extent(debug, &lo, &hi);
	go_text_extent(elf, &lo, &hi);
	if (lo >= hi || hi > UINT32_MAX)
		return 0;
	/* The FDEs listed so far, by start: the gaps between them in [lo, hi)
	 * (none at all in a stripped Go program: b->fdes may be NULL). */
	if (nr)
		qsort(b->fdes, nr, sizeof(*b->fdes), range_lo_cmp);
	cursor = lo;
	for (size_t i = 0; i < nr && cursor < hi; i++) {
		const struct fde_range *f = &b->fdes[i];

		if (f->hi <= cursor)
			continue;
		if (f->lo > cursor) {
			err = add_fp_range(b, cursor, f->lo < hi ? f->lo : hi);
			if (err)
				return err;
			f = &b->fdes[i];	/* the array may have moved */
		}
		if (f->hi > cursor)
			cursor = f->hi;
	}
	return cursor < hi ? add_fp_range(b, cursor, hi) : 0;
}
