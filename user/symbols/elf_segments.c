// SPDX-License-Identifier: BSD-2-Clause
/*
 * symbols/elf_segments.c - PT_LOAD segments and load biases (see
 * elf_segments.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_segments.h"

int elf_segments_read(Elf *elf, struct elf_segments *out)
{
	GElf_Ehdr ehm, *eh = gelf_getehdr(elf, &ehm);
	size_t phnum, i;

	out->segs = NULL;
	out->nr = 0;
	if (!eh || elf_getphdrnum(elf, &phnum) != 0)
		return -EINVAL;
	out->e_type = eh->e_type;
	out->segs = calloc(phnum ? phnum : 1, sizeof(*out->segs));
	if (!out->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		out->segs[out->nr++] = (struct elf_segment){ ph.p_vaddr, ph.p_offset,
							     ph.p_filesz, ph.p_flags };
	}
	return 0;
}

int elf_segments_copy(struct elf_segments *dst, const struct elf_segments *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->nr && !(dst->segs = malloc(src->nr * sizeof(*src->segs))))
		return -ENOMEM;
	if (src->nr)
		memcpy(dst->segs, src->segs, src->nr * sizeof(*src->segs));
	dst->nr = src->nr;
	dst->e_type = src->e_type;
	return 0;
}

void elf_segments_free(struct elf_segments *s)
{
	free(s->segs);
	s->segs = NULL;
	s->nr = 0;
}

int elf_segments_bias(const struct elf_segments *s, uint64_t start, uint64_t pgoff,
		      uint64_t *bias)
{
	uint64_t page_mask = ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
	const struct elf_segment *found = NULL;

	/* An ET_EXEC file is loaded where its vaddrs say (bias 0), but a
	 * program may map part of it again elsewhere: V8 maps its embedded
	 * builtins (in node's .text) a second time next to its JIT code.
	 * Two segments may hold the page at @pgoff: lld packs the file, so a
	 * segment's last page is the next one's first (at another vaddr, the
	 * next page up), and a small file's first page may hold the read-only
	 * segment and the start of the code.  The mapping is executable: the
	 * code segment is the one mapped there. */
	for (size_t i = 0; i < s->nr; i++) {
		const struct elf_segment *seg = &s->segs[i];

		if (pgoff < (seg->offset & page_mask) || pgoff >= seg->offset + seg->filesz)
			continue;
		if (!found || ((seg->flags & PF_X) && !(found->flags & PF_X)))
			found = seg;
	}
	if (found) {
		/* vaddr(pgoff) = p_vaddr - (p_offset - pgoff) */
		*bias = start - (found->vaddr - (found->offset - pgoff));
		return 0;
	}
	if (s->e_type == ET_EXEC) {
		*bias = 0;
		return 0;
	}
	return -EINVAL;
}
