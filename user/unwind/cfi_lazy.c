// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi_lazy.c - a built unwind table in use: finding the row of an
 * address, and building the rows of the FDEs a lazy table left as
 * markers (CFI_UNBUILT_FDE, bpf/cfi_row.h) when a walk meets one, through
 * the same libdw calls as a whole build (cfi_fde_rows()).  See
 * cfi_table.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <elfutils/libdw.h>

#include "cfi_build.h"
#include "unwind/cfi_table.h"

/*
 * The file a lazy table's FDEs are built from: libdw's handles on it.  The
 * file is mapped whole (ELF_C_READ_MMAP) and its descriptor left to the
 * caller (ELF_C_FDDONE): a run with many lazy tables holds no descriptor
 * for them.
 */
struct cfi_lazy {
	Elf *elf;
	Dwarf_CFI *eh;		/* .eh_frame's, NULL: none */
	Dwarf *dw;		/* for .debug_frame's handle, NULL: none */
	bool dw_tried;
};

void cfi_lazy_close(struct cfi_lazy *lz)
{
	if (!lz)
		return;
	if (lz->eh)
		dwarf_cfi_end(lz->eh);
	dwarf_end(lz->dw);
	elf_end(lz->elf);
	free(lz);
}

/* Make @elf (ELF_C_READ_MMAP) @t's lazy file; on success @t owns it,
 * else the caller still does.  0, -ENOMEM or -ENOEXEC. */
static int lazy_adopt(struct cfi_table *t, Elf *elf)
{
	struct cfi_lazy *lz;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_cntl(elf, ELF_C_FDDONE))
		return -ENOEXEC;
	lz = calloc(1, sizeof(*lz));
	if (!lz)
		return -ENOMEM;
	lz->elf = elf;
	lz->eh = dwarf_getcfi_elf(elf);
	t->lazy = lz;
	return 0;
}

int cfi_table_lazy_open(struct cfi_table *t, int fd)
{
	Elf *elf;
	int err;

	if (!t || fd < 0)
		return -EINVAL;
	if (t->lazy)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = lazy_adopt(t, elf);
	if (err)
		elf_end(elf);
	return err;
}

/*
 * The Elf the table was built from becomes its lazy file: one mapping of
 * the file, whose pages the build touched, and no second elf_begin().
 */
int cfi_table_build_lazy(int fd, struct cfi_table **out)
{
	struct cfi_table *t = NULL;
	Elf *elf;
	int err;

	if (fd < 0 || !out)
		return -EINVAL;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	err = cfi_build_elf(elf, NULL, true, &t);
	if (!err && t->stats.fdes_unbuilt) {
		if (lazy_adopt(t, elf) == 0) {
			*out = t;
			return 0;
		}
		cfi_table_free(t);	/* no way to build them later: now */
		err = cfi_build_elf(elf, NULL, false, &t);
	}
	elf_end(elf);
	if (err)
		return err;
	*out = t;
	return 0;
}

/* The handle of the section a marker names (its rbp field), or NULL. */
static Dwarf_CFI *lazy_cfi(struct cfi_lazy *lz, const struct cfi_row *mark)
{
	if (mark->rbp == SRC_EH)
		return lz->eh;
	if (!lz->dw_tried) {
		lz->dw_tried = true;
		lz->dw = dwarf_begin_elf(lz->elf, DWARF_C_READ, NULL);
	}
	return lz->dw ? dwarf_getcfi(lz->dw) : NULL;
}

/* Rows of @t into malloc()ed memory if they are read in place from a
 * cache file.  0 or -ENOMEM. */
static int own_rows(struct cfi_table *t)
{
	struct cfi_row *rows;

	if (!t->mapping)
		return 0;
	rows = malloc((size_t)t->nr * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	memcpy(rows, t->rows, (size_t)t->nr * sizeof(*rows));
	munmap(t->mapping, t->mapping_size);
	t->mapping = NULL;
	t->mapping_size = 0;
	t->rows = rows;
	return 0;
}

/* Put the @n rows @new in place of @t's row @i.  0 or -ENOMEM. */
static int splice_rows(struct cfi_table *t, uint32_t i, const struct cfi_row *new, size_t n)
{
	size_t nr = (size_t)t->nr - 1 + n;
	struct cfi_row *rows;

	if (nr > UINT32_MAX)
		return -ENOMEM;
	if (n > 1) {
		rows = realloc(t->rows, nr * sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		t->rows = rows;
	}
	memmove(&t->rows[i + n], &t->rows[i + 1], ((size_t)t->nr - i - 1) * sizeof(*t->rows));
	memcpy(&t->rows[i], new, n * sizeof(*new));
	t->nr = (uint32_t)nr;
	return 0;
}

int cfi_table_build_fde(struct cfi_table *t, uint64_t vaddr)
{
	const struct cfi_row *mark = cfi_table_find(t, vaddr);
	struct cfi_row gap = { .kind = CFI_KIND_STOP_NO_ROW };
	struct builder b = { 0 };
	Dwarf_CFI *cfi;
	uint32_t i;
	uint64_t hi;
	int err;

	if (!mark || !CFI_ROW_UNBUILT(mark))
		return 0;
	if (!t->lazy)
		return -ENOENT;
	i = (uint32_t)(mark - t->rows);	/* own_rows() keeps the index */
	if ((err = own_rows(t)))
		return err;
	/* the last row is always a gap marker: a marker has a next row */
	hi = i + 1 < t->nr ? t->rows[i + 1].pc : t->rows[i].pc;
	b.st = &t->stats;
	cfi = lazy_cfi(t->lazy, &t->rows[i]);
	err = cfi ? cfi_fde_rows(&b, cfi, t->rows[i].pc, hi) : -EBADMSG;
	if (err == -ENOMEM) {
		free(b.rows);
		return err;
	}
	gap.pc = t->rows[i].pc;
	if (err)
		t->stats.fdes_skipped++;
	else
		t->stats.fdes++;
	if (t->stats.fdes_unbuilt)
		t->stats.fdes_unbuilt--;
	/* rows libdw gave before it failed stand, as in a whole build */
	err = b.nr ? splice_rows(t, i, b.rows, b.nr) : splice_rows(t, i, &gap, 1);
	free(b.rows);
	return err ? err : 1;
}

int cfi_table_build_all(struct cfi_table *t)
{
	struct cfi_table *whole = NULL;
	int err;

	if (!t || !cfi_table_count_unbuilt(t))
		return 0;
	if (!t->lazy)
		return -ENOENT;
	err = cfi_build_elf(t->lazy->elf, NULL, false, &whole);
	if (err)
		return err;
	if (t->mapping)
		munmap(t->mapping, t->mapping_size);
	else
		free(t->rows);
	t->mapping = NULL;
	t->mapping_size = 0;
	t->rows = whole->rows;
	t->nr = whole->nr;
	t->stats = whole->stats;
	whole->rows = NULL;
	cfi_table_free(whole);
	cfi_lazy_close(t->lazy);
	t->lazy = NULL;
	return 1;
}

uint32_t cfi_table_count_unbuilt(struct cfi_table *t)
{
	uint32_t n = 0;

	for (uint32_t i = 0; t && i < t->nr; i++)
		n += CFI_ROW_UNBUILT(&t->rows[i]);
	if (t)
		t->stats.fdes_unbuilt = n;
	return n;
}

const struct cfi_row *cfi_table_find(const struct cfi_table *t, uint64_t vaddr)
{
	uint32_t lo = 0, hi;

	if (!t || !t->nr || vaddr > UINT32_MAX || vaddr < t->rows[0].pc)
		return NULL;
	/* invariant: rows[lo].pc <= vaddr, and rows[hi].pc > vaddr if hi < nr */
	hi = t->nr;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

int cfi_table_load_bias(const struct cfi_table *t, uint64_t start, uint64_t pgoff,
			uint64_t *bias)
{
	if (!t || !bias)
		return -EINVAL;
	return elf_segments_bias(&t->segments, start, pgoff, bias);
}
