/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf_image.h - small ELF files for the symbolizer, vDSO and unwinder
 * tests: a minimal 32-bit i386 executable (an ELF header and one PT_LOAD
 * at 0x8048000) in memory or in a file, and reading and writing whole
 * files.  Header only; include it after
 * <cmocka.h>.
 */
#ifndef BPFPROF_TEST_ELF_IMAGE_H
#define BPFPROF_TEST_ELF_IMAGE_H

#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Size of the image elf32_image() writes, bytes. */
#define ELF32_IMAGE_SIZE 4096

/* Where elf32_image()'s only segment is loaded (file offset 0). */
#define ELF32_IMAGE_VADDR 0x8048000u

/* Write @len bytes of @data to a new (or truncated) file @path. */
static inline void test_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* The whole file @path, *@len bytes of it, in a new buffer (free()). */
static inline unsigned char *test_read_file(const char *path, size_t *len)
{
	struct stat sb;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	*len = (size_t)sb.st_size;
	buf = malloc(*len ? *len : 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, *len), (ssize_t)*len);
	close(fd);
	return buf;
}

/* A minimal i386 executable into @img (ELF32_IMAGE_SIZE bytes). */
static inline void elf32_image(unsigned char *img)
{
	Elf32_Ehdr *eh = (Elf32_Ehdr *)img;
	Elf32_Phdr *ph = (Elf32_Phdr *)(img + sizeof(*eh));

	memset(img, 0, ELF32_IMAGE_SIZE);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS32;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_386;
	eh->e_version = EV_CURRENT;
	eh->e_entry = ELF32_IMAGE_VADDR + 0x100;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph->p_type = PT_LOAD;
	ph->p_offset = 0;
	ph->p_vaddr = ph->p_paddr = ELF32_IMAGE_VADDR;
	ph->p_filesz = ph->p_memsz = ELF32_IMAGE_SIZE;
	ph->p_flags = PF_R | PF_X;
	ph->p_align = 4096;
}

/* elf32_image() written to the file @path. */
static inline void elf32_file(const char *path)
{
	unsigned char img[ELF32_IMAGE_SIZE];

	elf32_image(img);
	test_write_file(path, img, sizeof(img));
}

#endif /* BPFPROF_TEST_ELF_IMAGE_H */
