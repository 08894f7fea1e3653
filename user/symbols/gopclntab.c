// SPDX-License-Identifier: BSD-2-Clause
/*
 * gopclntab.c - owns gopclntab_funcs() (gopclntab.h): the reader of Go's
 * function table, for the symbolizer's Go binaries without symbols.
 *
 * The table (Go 1.18+): a pcHeader of 8 bytes (magic, two pad bytes, the
 * minimum instruction size, the pointer size) and eight 8-byte words
 * (nfunc, nfiles, textStart and the offsets of funcnametab, cutab,
 * filetab, pctab and pclntab from the header); at pclntab, nfunc + 1
 * functab entries {entryoff, funcoff} (u32 each; the last one's entryoff
 * is the end of the last function); at pclntab + funcoff, a _func whose
 * first two fields are entryoff (u32) and nameoff (s32, into funcnametab,
 * a NUL-terminated name).  Every offset is checked against the size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/gopclntab.h"

#define GO118_MAGIC 0xfffffff0u
#define GO120_MAGIC 0xfffffff1u
#define HEADER_SIZE (8 + 8 * 8)

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The name at @off of funcnametab (@names, @left bytes to the end), or NULL. */
static const char *name_at(const uint8_t *names, size_t left, int32_t off)
{
	if (off < 0 || (size_t)off >= left || !memchr(names + off, '\0', left - (size_t)off))
		return NULL;
	return (const char *)names + off;
}

long gopclntab_funcs(const void *data, size_t size, uint64_t text, struct go_func **funcs)
{
	const uint8_t *d = data, *tab;
	uint64_t nfunc, text_start, names_off, tab_off;
	struct go_func *out;
	uint32_t magic;

	*funcs = NULL;
	if (!d || size < HEADER_SIZE)
		return -ENOENT;
	magic = u32_at(d);
	if ((magic != GO118_MAGIC && magic != GO120_MAGIC) || d[4] || d[5] || d[7] != 8)
		return -ENOENT;
	nfunc = u64_at(d + 8);
	text_start = u64_at(d + 24);
	names_off = u64_at(d + 32);
	tab_off = u64_at(d + 64);
	if (!nfunc || names_off >= size || tab_off >= size ||
	    nfunc >= (size - tab_off) / 8)	/* nfunc + 1 entries of 8 bytes */
		return -EINVAL;
	if (text_start)
		text = text_start;
	tab = d + tab_off;
	out = calloc(nfunc, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (uint64_t i = 0; i < nfunc; i++) {
		uint32_t entry = u32_at(tab + 8 * i), func = u32_at(tab + 8 * i + 4);
		uint32_t next = u32_at(tab + 8 * (i + 1));

		if (func > size - tab_off - 8 || next < entry)
			goto bad;
		out[i].name = name_at(d + names_off, size - names_off,
				      (int32_t)u32_at(tab + func + 4));
		if (!out[i].name)
			goto bad;
		out[i].start = text + entry;
		out[i].end = text + next;
	}
	*funcs = out;
	return (long)nfunc;
bad:
	free(out);
	return -EINVAL;
}
