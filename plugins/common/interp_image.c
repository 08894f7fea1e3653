// SPDX-License-Identifier: BSD-2-Clause
/*
 * common/interp_image.c - the image of interpreted functions (see
 * interp_image.h): the functions collected from the stacks, and the
 * symbol-only ELF file written of them.  Readers (perf, google-pprof
 * through nm) take a mapped file's function symbols from its .symtab
 * whatever the file holds otherwise, so the image is an ELF header, one
 * PT_LOAD program header, a build-id note, a .text section that occupies
 * no bytes (SHT_NOBITS, address 0), the symbols (STT_FUNC in .text) and
 * their names.  .text's address equals its file offset and so do the
 * segment's, so a reader's conversion of symbol values to file offsets
 * (perf's for ET_DYN and ET_EXEC, google-pprof's from objdump -h)
 * changes nothing: a symbol's value is its offset in the mapping.
 *
 * The build-id is a 160-bit hash of the symbols and names, so that equal
 * images have equal ids and perf, which checks a file's id against the
 * one perf.data records, never names frames from a different image.
 *
 * The file is a companion of the plugin's output (plugin.h's
 * host->companion()): the host publishes it with the output or not at all.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/interp_image.h"

#if defined(__x86_64__)
#define IMAGE_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define IMAGE_MACHINE EM_AARCH64
#else
#define IMAGE_MACHINE EM_NONE
#endif

/* Section indices. */
enum { SEC_NULL, SEC_TEXT, SEC_NOTE, SEC_SYMTAB, SEC_STRTAB, SEC_SHSTRTAB, SEC_NR };

static const char shstrtab[] = "\0.text\0.note.gnu.build-id\0.symtab\0.strtab\0.shstrtab";
/* Offsets of the names in shstrtab. */
static const uint32_t sec_name[SEC_NR] = { 0, 1, 7, 26, 34, 42 };

#define ALIGN8(x) (((x) + 7u) & ~(size_t)7u)

/* 160 bits of hash of @n bytes at @p, in three 64-bit lanes. */
static void content_id(const uint8_t *p, size_t n, uint8_t id[20])
{
	uint64_t h[3] = { 0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull };

	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 3; k++) {
			h[k] = (h[k] ^ p[i]) * (0x100000001b3ull + 2 * (uint64_t)k);
			h[k] ^= h[k] >> (29 + k);
		}
	for (int k = 0; k < 3; k++)
		h[k] = hashtab_mix64(h[k] ^ n);
	memcpy(id, h, 20);
}

/* The symbol table and its names for @syms; 0 or -ENOMEM. */
static int build_tables(const struct interp_image_sym *syms, size_t n, struct buf *symtab,
			struct buf *strtab, uint64_t *text_size)
{
	buf_zero(strtab, 1);
	buf_zero(symtab, sizeof(Elf64_Sym));	/* entry 0: undefined */
	*text_size = 0;
	for (size_t i = 0; i < n; i++) {
		Elf64_Sym s = {
			.st_name = (uint32_t)strtab->len,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = SEC_TEXT,
			.st_value = syms[i].value,
			.st_size = syms[i].size,
		};

		if (strtab->len > UINT32_MAX / 2)
			return -EOVERFLOW;
		buf_put(strtab, syms[i].name, strlen(syms[i].name) + 1);
		buf_put(symtab, &s, sizeof(s));
		if (syms[i].value + syms[i].size > *text_size)
			*text_size = syms[i].value + syms[i].size;
	}
	return symtab->err ? symtab->err : strtab->err;
}

/* The whole image in @img. */
static int build_image(const struct interp_image_sym *syms, size_t n, struct buf *img,
		       uint8_t build_id[20])
{
	struct buf symtab = { 0 }, strtab = { 0 }, idsrc = { 0 };
	size_t note_off = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	size_t note_size = sizeof(Elf64_Nhdr) + 4 + 20;
	size_t sym_off = ALIGN8(note_off + note_size), str_off, shstr_off, sh_off;
	uint64_t text_size;
	int err = build_tables(syms, n, &symtab, &strtab, &text_size);

	if (!err) {
		buf_put(&idsrc, symtab.data, symtab.len);
		buf_put(&idsrc, strtab.data, strtab.len);
		err = idsrc.err;
	}
	if (!err) {
		content_id(idsrc.data, idsrc.len, build_id);
		str_off = sym_off + symtab.len;
		shstr_off = str_off + strtab.len;
		sh_off = ALIGN8(shstr_off + sizeof(shstrtab));

		Elf64_Ehdr eh = {
			.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
				     __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
									       : ELFDATA2MSB,
				     EV_CURRENT, ELFOSABI_NONE },
			.e_type = ET_DYN,
			.e_machine = IMAGE_MACHINE,
			.e_version = EV_CURRENT,
			.e_phoff = sizeof(Elf64_Ehdr),
			.e_shoff = sh_off,
			.e_ehsize = sizeof(Elf64_Ehdr),
			.e_phentsize = sizeof(Elf64_Phdr),
			.e_phnum = 1,
			.e_shentsize = sizeof(Elf64_Shdr),
			.e_shnum = SEC_NR,
			.e_shstrndx = SEC_SHSTRTAB,
		};
		Elf64_Phdr ph = {
			.p_type = PT_LOAD, .p_flags = PF_R | PF_X,
			.p_memsz = text_size, .p_align = 0x1000,
		};
		Elf64_Nhdr nh = { .n_namesz = 4, .n_descsz = 20, .n_type = NT_GNU_BUILD_ID };
		Elf64_Shdr sh[SEC_NR] = {
			[SEC_TEXT] = { .sh_type = SHT_NOBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				       .sh_size = text_size, .sh_addralign = 16 },
			[SEC_NOTE] = { .sh_type = SHT_NOTE, .sh_flags = SHF_ALLOC,
				       .sh_offset = note_off, .sh_size = note_size,
				       .sh_addralign = 4 },
			[SEC_SYMTAB] = { .sh_type = SHT_SYMTAB, .sh_offset = sym_off,
					 .sh_size = symtab.len, .sh_link = SEC_STRTAB, .sh_info = 1,
					 .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) },
			[SEC_STRTAB] = { .sh_type = SHT_STRTAB, .sh_offset = str_off,
					 .sh_size = strtab.len, .sh_addralign = 1 },
			[SEC_SHSTRTAB] = { .sh_type = SHT_STRTAB, .sh_offset = shstr_off,
					   .sh_size = sizeof(shstrtab), .sh_addralign = 1 },
		};

		for (int i = 0; i < SEC_NR; i++)
			sh[i].sh_name = sec_name[i];
		buf_put(img, &eh, sizeof(eh));
		buf_put(img, &ph, sizeof(ph));
		buf_put(img, &nh, sizeof(nh));
		buf_put(img, "GNU", 4);
		buf_put(img, build_id, 20);
		buf_zero(img, sym_off - img->len);
		buf_put(img, symtab.data, symtab.len);
		buf_put(img, strtab.data, strtab.len);
		buf_put(img, shstrtab, sizeof(shstrtab));
		buf_zero(img, sh_off - img->len);
		buf_put(img, sh, sizeof(sh));
		err = img->err;
	}
	buf_free(&symtab);
	buf_free(&strtab);
	buf_free(&idsrc);
	return err;
}

int interp_image_write(const struct interp_image *im, const struct bpfprof_host *host,
		       const struct bpfprof_output *out, uint8_t build_id[20])
{
	struct buf img = { 0 };
	FILE *f = NULL;
	int err;

	if (!bpfprof_host_has_companion(host))
		return -ENOTSUP;
	err = build_image(im->syms, im->nr, &img, build_id);
	if (!err)
		err = host->companion(host, out, INTERP_IMAGE_SUFFIX, &f);
	if (!err) {
		errno = 0;
		if (fwrite(img.data, 1, img.len, f) != img.len || fflush(f))
			err = errno ? -errno : -EIO;
	}
	buf_free(&img);
	return err;
}

int interp_image_path(const char *output_path, char **path)
{
	char cwd[PATH_MAX];
	int n;

	*path = NULL;
	if (!output_path || !*output_path)
		return -EINVAL;
	if (output_path[0] == '/')
		n = asprintf(path, "%s%s", output_path, INTERP_IMAGE_SUFFIX);
	else if (getcwd(cwd, sizeof(cwd)))
		n = asprintf(path, "%s/%s%s", cwd, output_path, INTERP_IMAGE_SUFFIX);
	else
		return -errno;
	if (n < 0) {
		*path = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Note frame @ip of @pid in @im. */
static int add_frame(struct interp_image *im, const struct bpfprof_host *host, uint32_t pid,
		     uint64_t ip)
{
	struct bpfprof_symbol sym;
	struct interp_image_sym *s;
	uint64_t end;
	uint32_t i;

	memset(&sym, 0, sizeof(sym));
	if (host->symbolize(host, pid, ip, 0, &sym) || !sym.function ||
	    !interp_image_frame(sym.function_start) || sym.function_start > ip)
		return 0;
	end = (ip | 1) + 1 - BPFPROF_INTERP_FRAME_START;
	i = hashtab_get(&im->index, sym.function_start, 0);
	if (i != HASHTAB_NONE) {
		s = &im->syms[i];
		im->conflicts += strcmp(s->name, sym.function) != 0;
		if (end > s->value + s->size)
			s->size = end - s->value;
		return 0;
	}
	if (im->nr == im->cap) {
		size_t cap = im->cap ? 2 * im->cap : 256;
		struct interp_image_sym *n = realloc(im->syms, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		im->syms = n;
		im->cap = cap;
	}
	s = &im->syms[im->nr];
	s->name = sym.function;
	s->value = sym.function_start - BPFPROF_INTERP_FRAME_START;
	s->size = end - s->value;
	return hashtab_put(&im->index, sym.function_start, 0, (uint32_t)im->nr++) ? -ENOMEM : 0;
}

int interp_image_add_stack(struct interp_image *im, const struct bpfprof_host *host,
			   uint32_t pid, const struct bpfprof_stack *u)
{
	int err = 0;

	for (uint32_t f = 0; u && f < u->nr && !err; f++)
		if (interp_image_frame(u->ips[f]))
			err = add_frame(im, host, pid, u->ips[f]);
	return err;
}

void interp_image_free(struct interp_image *im)
{
	free(im->syms);
	hashtab_free(&im->index);
	memset(im, 0, sizeof(*im));
}
