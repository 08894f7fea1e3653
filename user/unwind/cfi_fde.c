// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwind/cfi_fde.c - lists the FDEs of one CFI section for the unwind
 * table builder (cfi_build.h): dwarf_next_cfi() walks the entries, in the
 * section's order or in that of .eh_frame_hdr's binary search table (by
 * address, so the builder need not sort them).  The only bytes read here
 * are an FDE's encoded start and length (DW_EH_PE_*, relative to its
 * CIE's augmentation) and that table, which libdw has no public call for.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_build.h"

int cfi_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* ---- the entries ---------------------------------------------------------- */

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t byte = *(*p)++;

		*v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80))
			return true;
	}
	return false;
}

static bool read_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	unsigned int shift = 0;
	uint64_t u = 0;
	uint8_t byte = 0;

	while (*p < end && shift < 64) {
		byte = *(*p)++;
		u |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80)) {
			if (shift < 64 && (byte & 0x40))
				u |= ~(uint64_t)0 << shift;
			*v = (int64_t)u;
			return true;
		}
	}
	return false;
}

/* Little-endian fixed-size read of @size bytes. */
static bool read_fixed(const uint8_t **p, const uint8_t *end, size_t size, bool sign,
		       uint64_t *v)
{
	uint64_t u = 0;
	size_t i;

	if ((size_t)(end - *p) < size)
		return false;
	for (i = 0; i < size; i++)
		u |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && size < 8 && (u >> (8 * size - 1)) & 1)
		u |= ~(uint64_t)0 << (8 * size);
	*p += size;
	*v = u;
	return true;
}

/*
 * Decode one pointer of encoding @enc (DW_EH_PE_*) at *@p, whose own
 * address is @here (for pcrel).  @apply: add the base (initial location);
 * else the format only (address range).  Only absptr and pcrel bases.
 */
static bool read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t here,
			 bool apply, uint64_t *v)
{
	int64_t s = 0;
	bool ok;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		ok = read_fixed(p, end, 8, false, v);
		break;
	case DW_EH_PE_uleb128:
		ok = read_uleb(p, end, v);
		break;
	case DW_EH_PE_udata2:
		ok = read_fixed(p, end, 2, false, v);
		break;
	case DW_EH_PE_udata4:
		ok = read_fixed(p, end, 4, false, v);
		break;
	case DW_EH_PE_udata8:
		ok = read_fixed(p, end, 8, false, v);
		break;
	case DW_EH_PE_sleb128:
		ok = read_sleb(p, end, &s);
		*v = (uint64_t)s;
		break;
	case DW_EH_PE_sdata2:
		ok = read_fixed(p, end, 2, true, v);
		break;
	case DW_EH_PE_sdata4:
		ok = read_fixed(p, end, 4, true, v);
		break;
	case DW_EH_PE_sdata8:
		ok = read_fixed(p, end, 8, true, v);
		break;
	default:
		return false;
	}
	if (!ok || !apply)
		return ok;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		return !(enc & DW_EH_PE_indirect);
	case DW_EH_PE_pcrel:
		*v += here;
		return !(enc & DW_EH_PE_indirect);
	default:
		return false;
	}
}

/* The FDE address encoding from a CIE's augmentation ('R'). */
static struct cie_info cie_decode(const Dwarf_CIE *cie, uint64_t offset)
{
	struct cie_info ci = { offset, DW_EH_PE_absptr, true };
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	const char *a = cie->augmentation;
	uint64_t skip;
	uint8_t penc;

	if (!a || !a[0])
		return ci;
	if (a[0] != 'z' || !p) {
		ci.ok = false;
		return ci;
	}
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				goto bad;
			ci.enc = *p++;
			break;
		case 'L':
			if (p >= end)
				goto bad;
			p++;
			break;
		case 'P':
			if (p >= end)
				goto bad;
			penc = *p++;	/* the personality pointer follows */
			if (!read_encoded(penc, &p, end, 0, false, &skip))
				goto bad;
			break;
		case 'S':
		case 'B':
			break;
		default:
			goto bad;
		}
	}
	return ci;
bad:
	ci.ok = false;
	return ci;
}

static int cie_cmp(const void *a, const void *b)
{
	const struct cie_info *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Add the address range of FDE @e of @s (its CIE's info @ci) to b->fdes. */
static int add_fde(struct builder *b, const struct section *s, const Dwarf_FDE *e,
		   const struct cie_info *ci)
{
	const uint8_t *p = e->start, *base = s->data->d_buf;
	uint64_t lo, len;

	if (!ci || !ci->ok ||
	    !read_encoded(ci->enc, &p, e->end, s->vaddr + (uint64_t)(p - base), true, &lo) ||
	    !read_encoded(ci->enc & 0x0f, &p, e->end, 0, false, &len)) {
		b->st->bad_entries++;
		return 0;
	}
	if (len == 0 || lo + len < lo || lo + len > UINT32_MAX) {
		b->st->fdes_skipped++;
		return 0;
	}
	if (cfi_grow((void **)&b->fdes, &b->cap_fdes, b->nr_fdes + 1, sizeof(*b->fdes)))
		return -ENOMEM;
	b->fdes[b->nr_fdes++] = (struct fde_range){ lo, lo + len, s->eh ? SRC_EH : SRC_DEBUG };
	return 0;
}

/* The CIE at section offset @off among the @nr of @cies (by offset), or
 * NULL. */
static const struct cie_info *find_cie(const struct cie_info *cies, size_t nr, uint64_t off)
{
	struct cie_info key = { .offset = off };

	return nr ? bsearch(&key, cies, nr, sizeof(key), cie_cmp) : NULL;
}

/* The CIE at section offset @off of @s, decoded and kept in *@cies (by
 * offset) on its first use; NULL if no CIE is there or memory ran out. */
static const struct cie_info *cie_at(const struct section *s, const unsigned char *ident,
				     struct cie_info **cies, size_t *nr, size_t *cap,
				     uint64_t off, uint64_t *bytes)
{
	const struct cie_info *found = find_cie(*cies, *nr, off);
	Dwarf_Off next;
	Dwarf_CFI_Entry e;
	size_t i;

	if (found)
		return found;
	if (dwarf_next_cfi(ident, s->data, s->eh, off, &next, &e) != 0 ||
	    !dwarf_cfi_cie_p(&e) || next <= off ||
	    cfi_grow((void **)cies, cap, *nr + 1, sizeof(**cies)))
		return NULL;
	for (i = *nr; i > 0 && (*cies)[i - 1].offset > off; i--)
		(*cies)[i] = (*cies)[i - 1];
	(*cies)[i] = cie_decode(&e.cie, off);
	(*nr)++;
	*bytes += next - off;
	return &(*cies)[i];
}

/*
 * .eh_frame_hdr's binary search table (LSB Core, generic part, "The
 * .eh_frame_hdr section"): version 1, then the encodings of eh_frame_ptr,
 * fde_count and the table, then those two values, then fde_count pairs
 * (initial location, FDE address) sorted by location.  Only the encoding
 * that a binary search needs is taken for the table: datarel sdata4, 8
 * bytes a pair, relative to the header's start.  Fills *@table, *@count;
 * false if @elf has no such header for .eh_frame at @eh_vaddr.
 */
static bool hdr_table(Elf *elf, uint64_t eh_vaddr, const uint8_t **table, uint64_t *count,
		      uint64_t *hdr_vaddr)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(elf, ".eh_frame_hdr", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	const uint8_t *base, *p, *end;
	uint64_t ptr;

	if (!d || !d->d_buf || d->d_size < 4)
		return false;
	base = p = d->d_buf;
	end = base + d->d_size;
	if (p[0] != 1 || p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || p[2] == DW_EH_PE_omit)
		return false;
	p += 4;
	if (!read_encoded(base[1], &p, end, sh.sh_addr + 4, true, &ptr) || ptr != eh_vaddr ||
	    !read_encoded(base[2], &p, end, sh.sh_addr + (uint64_t)(p - base), true, count) ||
	    *count == 0 || *count > (uint64_t)(end - p) / 8)
		return false;
	*table = p;
	*hdr_vaddr = sh.sh_addr;
	return true;
}

/* One signed little-endian 32-bit value at @p. */
static int64_t sdata4(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/*
 * The listing of cfi_list_fdes_indexed() from the header's @count pairs at
 * @table: 0, 1 (not usable as it stands) or -ENOMEM.  @bytes counts the
 * section's bytes met in entries.
 */
static int list_by_table(struct builder *b, const struct section *s, const unsigned char *ident,
			 const uint8_t *table, uint64_t count, uint64_t hdr_vaddr)
{
	struct cie_info *cies = NULL;
	size_t nr_cies = 0, cap_cies = 0, first = b->nr_fdes;
	uint64_t bytes = 0, size = s->data->d_size;
	int err = 0;

	for (uint64_t i = 0; i < count && !err; i++) {
		uint64_t off = hdr_vaddr + (uint64_t)sdata4(table + 8 * i + 4) - s->vaddr;
		const struct cie_info *ci;
		Dwarf_Off next;
		Dwarf_CFI_Entry e;

		if (off >= size || dwarf_next_cfi(ident, s->data, true, off, &next, &e) != 0 ||
		    dwarf_cfi_cie_p(&e) || next <= off || next > size) {
			err = 1;
			break;
		}
		bytes += next - off;
		ci = cie_at(s, ident, &cies, &nr_cies, &cap_cies, e.fde.CIE_pointer, &bytes);
		err = ci ? add_fde(b, s, &e.fde, ci) : 1;
		if (!err && b->nr_fdes > first + 1 &&
		    b->fdes[b->nr_fdes - 2].lo >= b->fdes[b->nr_fdes - 1].lo)
			err = 1;
	}
	free(cies);
	/* every byte in a listed entry, but for .eh_frame's zero terminator */
	if (!err && (bytes > size || size - bytes > 4))
		err = 1;
	if (!err)
		b->st->fdes_indexed += (uint32_t)(b->nr_fdes - first);
	return err;
}

int cfi_list_fdes_indexed(struct builder *b, const struct section *s, Elf *elf,
			  const unsigned char *ident)
{
	struct cfi_table_stats saved = *b->st;
	size_t nr = b->nr_fdes;
	const uint8_t *table;
	uint64_t count, hdr_vaddr;
	int err;

	if (!s->eh || !hdr_table(elf, s->vaddr, &table, &count, &hdr_vaddr))
		return cfi_list_fdes(b, s, ident);
	err = list_by_table(b, s, ident, table, count, hdr_vaddr);
	if (err != 1)
		return err;
	/* as if never tried: the section's order, sorted later */
	b->nr_fdes = nr;
	*b->st = saved;
	return cfi_list_fdes(b, s, ident);
}

/*
 * Add the FDEs of section @s to b->fdes, in one pass over its entries:
 * CIEs are met in offset order, and an FDE's CIE before it (as linkers
 * and assemblers write them); an FDE whose CIE comes later is read again
 * at the end.
 */
int cfi_list_fdes(struct builder *b, const struct section *s, const unsigned char *ident)
{
	struct cie_info *cies = NULL;
	Dwarf_Off off = 0, next, *later = NULL;
	size_t nr_cies = 0, cap_cies = 0, nr_later = 0, cap_later = 0;
	Dwarf_CFI_Entry e;
	int rc, err = 0;

	while ((rc = dwarf_next_cfi(ident, s->data, s->eh, off, &next, &e)) == 0) {
		const struct cie_info *ci;

		if (dwarf_cfi_cie_p(&e)) {
			err = cfi_grow((void **)&cies, &cap_cies, nr_cies + 1, sizeof(*cies));
			if (!err)
				cies[nr_cies++] = cie_decode(&e.cie, off);
		} else if ((ci = find_cie(cies, nr_cies, e.fde.CIE_pointer))) {
			err = add_fde(b, s, &e.fde, ci);
		} else {
			err = cfi_grow((void **)&later, &cap_later, nr_later + 1, sizeof(*later));
			if (!err)
				later[nr_later++] = off;
		}
		if (err || next == (Dwarf_Off)-1 || next <= off)
			break;
		off = next;
	}
	if (rc < 0)
		b->st->bad_entries++;
	for (size_t i = 0; i < nr_later && !err; i++)
		if (dwarf_next_cfi(ident, s->data, s->eh, later[i], &next, &e) == 0)
			err = add_fde(b, s, &e.fde, find_cie(cies, nr_cies, e.fde.CIE_pointer));
	free(cies);
	free(later);
	return err;
}
