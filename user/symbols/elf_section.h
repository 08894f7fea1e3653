/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf_section.h - an ELF file's section by name, for the readers of
 * sections libdw does not read for us (.gopclntab, .eh_frame_hdr's order,
 * Go's .text): the symbolizer's and the unwind table builder's.
 */
#ifndef BPFPROF_ELF_SECTION_H
#define BPFPROF_ELF_SECTION_H

#include <gelf.h>

/* The section @name of @elf (NULL: none) that has contents (not
 * SHT_NOBITS, not empty), its header in *@sh; NULL if there is none. */
Elf_Scn *elf_section_by_name(Elf *elf, const char *name, GElf_Shdr *sh);

#endif /* BPFPROF_ELF_SECTION_H */
