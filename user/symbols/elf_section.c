// SPDX-License-Identifier: BSD-2-Clause
/*
 * elf_section.c - owns elf_section_by_name() (elf_section.h).
 */
#include <string.h>

#include "symbols/elf_section.h"

Elf_Scn *elf_section_by_name(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0 && sh->sh_type != SHT_NOBITS && sh->sh_size)
			return scn;
	}
	return NULL;
}
