/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vdso.h - bpfprof's own vDSO image, which stands in for the [vdso]
 * mapping of a target process: that mapping has no file to read, but the
 * kernel maps the same image (one per ABI) into every process, at
 * randomized addresses.  So an address's offset into a target's [vdso]
 * is its offset into our copy, provided the target's image is ours:
 * vdso_image_matches() decides that from the mapping's size, the
 * process's ELF class and machine, and the build-id where the mapping
 * carries one.  The symbolizer names vDSO functions from the copy
 * (symbolize.c), the unwinder reads its CFI (unwind.c).
 *
 * The copy is taken once, at AT_SYSINFO_EHDR, as large as our own [vdso]
 * mapping in /proc/self/maps.
 */
#ifndef BPFPROF_VDSO_H
#define BPFPROF_VDSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

#include <bpfprof/plugin.h>

/* The path procfs gives the vDSO mapping. */
#define VDSO_PATH "[vdso]"

/* Longest build-id kept of an image, bytes. */
#define VDSO_BUILD_ID_MAX 64

/* Largest vDSO image accepted, bytes (real ones are a few pages). */
#define VDSO_MAX_SIZE (1u << 20)

/*
 * The ABI of an ELF file or process: what tells the kernel's vDSO images
 * apart (a 64-bit kernel has a 64-bit, a 32-bit and an x32 image).
 */
struct elf_abi {
	unsigned char elf_class;	/* EI_CLASS: ELFCLASS32 or ELFCLASS64; 0: unknown */
	uint16_t machine;		/* e_machine: EM_X86_64, EM_386, EM_AARCH64, ... */
};

/* A copy of a vDSO image and what it is matched by. */
struct vdso_image {
	void *data;			/* the copy, @size bytes (owned) */
	size_t size;			/* bytes: the size of the mapping it was copied from */
	struct elf_abi abi;		/* of the image's ELF header */
	uint8_t build_id[VDSO_BUILD_ID_MAX];
	size_t build_id_size;		/* bytes of build_id, 0 if the image has none */
};

/*
 * Copy our own vDSO image (AT_SYSINFO_EHDR, as long as our [vdso] mapping
 * in /proc/self/maps) into a new *@out, released with vdso_image_free().
 * Returns 0; -ENOENT if this process has no vDSO (or no [vdso] mapping
 * starts at AT_SYSINFO_EHDR); an error of reading /proc/self/maps; or an
 * error of vdso_image_new().
 */
int vdso_image_own(struct vdso_image **out);

/*
 * A new *@out holding a copy of the @size bytes at @data (a whole vDSO
 * mapping, or any ELF image: tests, saved images), with its ABI and
 * build-id read.  Returns 0; -EINVAL if @data or @out is NULL or the
 * bytes are not an ELF image; -E2BIG if @size is 0 or over
 * VDSO_MAX_SIZE; -ENOMEM.
 */
int vdso_image_new(const void *data, size_t size, struct vdso_image **out);

/* Release @img and its copy; NULL is allowed. */
void vdso_image_free(struct vdso_image *img);

/*
 * Whether @img is the image of the [vdso] mapping @map of a process with
 * the ABI @abi (that of its executable, see elf_abi_read()): the mapping
 * is exactly @img->size bytes long, @abi equals @img->abi (an unknown
 * @abi, class 0, never matches), and, when both @map and @img carry a
 * build-id, the build-ids are equal.  False for NULL arguments.
 */
bool vdso_image_matches(const struct vdso_image *img, const struct bpfprof_mapping *map,
			const struct elf_abi *abi);

/*
 * A new memfd (close-on-exec) holding the @img->size bytes of @img, for
 * libdwfl calls that need a file descriptor.  Returns the descriptor,
 * which the caller closes, or a negative errno of memfd_create()/write().
 */
int vdso_image_memfd(const struct vdso_image *img);

/*
 * Read the ABI (EI_CLASS, e_machine) of the ELF file @elf into @abi.
 * Returns 0, or -EINVAL if @elf is NULL or has no readable ELF header.
 */
int elf_abi_read(Elf *elf, struct elf_abi *abi);

#endif /* BPFPROF_VDSO_H */
