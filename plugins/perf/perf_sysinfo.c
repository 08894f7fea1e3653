// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugins/perf/perf_sysinfo.c - facts about the running system that a
 * perf.data file records and the profile does not carry: the kernel text
 * range and its relocation reference symbol (/proc/kallsyms, and the
 * "Kernel code" length in /proc/iomem so that kallsyms need not be read
 * to its end), the kernel
 * build-id (/sys/kernel/notes), the CPU description and id
 * (/proc/cpuinfo) and the memory size (/proc/meminfo).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_internal.h"

/* Length of the "Kernel code" resource of @iomem (_text up to _etext,
 * physically contiguous, so the same length as the virtual range); 0 when
 * absent or hidden (addresses read as zero without CAP_SYS_ADMIN). */
static uint64_t kernel_code_size(const char *iomem)
{
	char line[256];
	uint64_t start, end, size = 0;
	FILE *f = fopen(iomem, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, ": Kernel code") &&
		    sscanf(line, " %" SCNx64 "-%" SCNx64, &start, &end) == 2 && end > start) {
			size = end - start + 1;
			break;
		}
	fclose(f);
	return size;
}

/*
 * Scan @kallsyms for _text/_stext and, unless @code_size already gives the
 * length, _etext.  _text is among the first lines; _etext comes after every
 * text symbol (most of the file: ~40 ms of system time on a 6.x kernel), so
 * the scan stops as soon as it has what it needs.
 */
static void scan_kallsyms(FILE *f, uint64_t code_size, uint64_t *text, uint64_t *stext,
			  uint64_t *etext)
{
	char line[512], name[256], type;
	uint64_t addr;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			*text = addr;
		else if (!strcmp(name, "_stext"))
			*stext = addr;
		else if (!strcmp(name, "_etext"))
			*etext = addr;
		if (*text && *stext && (code_size || *etext))
			break;
		if ((*text || *stext) && *etext)
			break;
	}
}

int read_kernel_text(const char *kallsyms, const char *iomem, struct perf_kernel_info *k)
{
	uint64_t text = 0, stext = 0, etext = 0;
	uint64_t code_size = iomem ? kernel_code_size(iomem) : 0;
	FILE *f;

	f = fopen(kallsyms, "re");
	if (!f)
		return -errno;
	scan_kallsyms(f, code_size, &text, &stext, &etext);
	fclose(f);
	if (text) {
		k->ref_reloc_sym = "_text";
		k->ref_reloc_addr = text;
	} else {
		k->ref_reloc_sym = "_stext";
		k->ref_reloc_addr = stext;
	}
	k->text_start = k->ref_reloc_addr;
	k->text_end = etext ? etext : code_size ? k->text_start + code_size : 0;
	if (!k->text_start || k->text_end <= k->text_start)
		return -ENOENT;
	return 0;
}

/* Walk ELF notes (Elf_Nhdr: namesz, descsz, type; name and desc padded
 * to 4 bytes) for NT_GNU_BUILD_ID (3) with name "GNU". */
int read_build_id_notes(const char *path, uint8_t *id, uint8_t *size)
{
	uint8_t buf[4096];
	size_t len, off = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + 12 <= len) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		name_off = off + 12;
		desc_off = name_off + ((namesz + 3u) & ~3u);
		if (desc_off > len || descsz > len - desc_off)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + name_off, "GNU", 4) &&
		    descsz > 0 && descsz <= 20) {
			memcpy(id, buf + desc_off, descsz);
			*size = (uint8_t)descsz;
			return 0;
		}
		off = desc_off + ((descsz + 3u) & ~3u);
	}
	return -ENOENT;
}

/* "key<spaces>: value" -> value without the trailing newline, or NULL. */
static const char *cpuinfo_value(char *line, const char *key)
{
	size_t n = strlen(key);
	char *v, *end;

	if (strncmp(line, key, n))
		return NULL;
	v = line + n;
	while (*v == ' ' || *v == '\t')
		v++;
	if (*v != ':')
		return NULL;
	v++;
	while (*v == ' ' || *v == '\t')
		v++;
	end = v + strlen(v);
	while (end > v && (end[-1] == '\n' || end[-1] == ' '))
		*--end = '\0';
	return v;
}

void read_cpu_info(const char *cpuinfo, char *desc, size_t desc_size, char *cpuid,
		   size_t cpuid_size)
{
	char vendor[64] = "", family[16] = "", model[16] = "", stepping[16] = "";
	char line[1024];
	const char *v;
	FILE *f;

	desc[0] = '\0';
	cpuid[0] = '\0';
	f = fopen(cpuinfo, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '\n')
			break;		/* first CPU only */
		if ((v = cpuinfo_value(line, "model name")) && !desc[0])
			snprintf(desc, desc_size, "%s", v);
		else if ((v = cpuinfo_value(line, "vendor_id")))
			snprintf(vendor, sizeof(vendor), "%s", v);
		else if ((v = cpuinfo_value(line, "cpu family")))
			snprintf(family, sizeof(family), "%s", v);
		else if ((v = cpuinfo_value(line, "model")))
			snprintf(model, sizeof(model), "%s", v);
		else if ((v = cpuinfo_value(line, "stepping")))
			snprintf(stepping, sizeof(stepping), "%s", v);
	}
	fclose(f);
	if (vendor[0] && family[0] && model[0])
		snprintf(cpuid, cpuid_size, "%s,%s,%s,%s", vendor, family, model,
			 stepping[0] ? stepping : "0");
}

uint64_t read_total_mem_kb(const char *meminfo)
{
	char line[256];
	uint64_t kb = 0;
	FILE *f;

	f = fopen(meminfo, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %" SCNu64, &kb) == 1)
			break;
	fclose(f);
	return kb;
}
