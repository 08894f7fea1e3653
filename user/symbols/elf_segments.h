/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbols/elf_segments.h - an ELF file's loadable segments, and the load
 * bias of a mapping of it: where the file's virtual addresses land in a
 * process.  Used by the dwarf-mode unwinder (unwind/unwind.c, reporting
 * modules to libdwfl) and by the unwind tables (unwind/cfi_table.c, which
 * keep the segments after their Elf is gone).
 */
#ifndef BPFPROF_ELF_SEGMENTS_H
#define BPFPROF_ELF_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

/* One PT_LOAD segment. */
struct elf_segment {
	uint64_t vaddr;			/* p_vaddr */
	uint64_t offset;		/* p_offset, bytes into the file */
	uint64_t filesz;		/* p_filesz, bytes */
	uint32_t flags;			/* p_flags (PF_X, PF_R, PF_W) */
};

/* The loadable segments of an ELF file and its type. */
struct elf_segments {
	struct elf_segment *segs;	/* owned; elf_segments_free() */
	size_t nr;
	uint16_t e_type;		/* ET_EXEC, ET_DYN, ... */
};

/*
 * Read the PT_LOAD segments and the type of @elf into @out.  0, -EINVAL
 * when the ELF or program headers cannot be read, -ENOMEM.
 */
int elf_segments_read(Elf *elf, struct elf_segments *out);

/* A copy of @src into @dst (its own array).  0 or -ENOMEM (@dst zeroed). */
int elf_segments_copy(struct elf_segments *dst, const struct elf_segments *src);

/* Free what elf_segments_read() allocated; a zeroed struct is fine. */
void elf_segments_free(struct elf_segments *s);

/*
 * The load bias of the file mapped executable at @start from file offset
 * @pgoff (a line of /proc/PID/maps with "x"): start - vaddr(pgoff), with
 * vaddr through the PT_LOAD segment whose page-aligned file range holds
 * @pgoff; of two (lld's packed layout: a page shared by the end of one
 * segment and the start of the next), the executable one (PF_X).  Also for
 * ET_EXEC, where it is 0 at the file's own addresses but not in a second
 * mapping of its code elsewhere (V8's embedded builtins in node), and 0
 * when no segment holds @pgoff.  Returns 0 and sets *@bias, or -EINVAL
 * when no segment of an ET_DYN file holds @pgoff.
 */
int elf_segments_bias(const struct elf_segments *s, uint64_t start, uint64_t pgoff,
		      uint64_t *bias);

#endif /* BPFPROF_ELF_SEGMENTS_H */
