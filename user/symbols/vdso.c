// SPDX-License-Identifier: BSD-2-Clause
/*
 * vdso.c - owns the copy of bpfprof's own vDSO image and the rule that
 * says whether a target's [vdso] mapping holds the same image (see
 * vdso.h); also the ELF ABI (class, machine) that rule compares.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buildid.h"
#include "targets/procfs.h"
#include "targets/procmaps.h"
#include "vdso.h"

int elf_abi_read(Elf *elf, struct elf_abi *abi)
{
	GElf_Ehdr eh;

	if (!elf || !abi || !gelf_getehdr(elf, &eh))
		return -EINVAL;
	abi->elf_class = eh.e_ident[EI_CLASS];
	abi->machine = eh.e_machine;
	return 0;
}

/* The ABI of the ELF image @data (@size bytes); 0 or -EINVAL. */
static int image_abi(void *data, size_t size, struct elf_abi *abi)
{
	Elf *elf;
	int err;

	elf_version(EV_CURRENT);
	elf = elf_memory(data, size);
	if (!elf)
		return -EINVAL;
	err = elf_kind(elf) == ELF_K_ELF ? elf_abi_read(elf, abi) : -EINVAL;
	elf_end(elf);
	return err;
}

int vdso_image_new(const void *data, size_t size, struct vdso_image **out)
{
	struct vdso_image *img;
	int n, err;

	if (!data || !out)
		return -EINVAL;
	if (!size || size > VDSO_MAX_SIZE)
		return -E2BIG;
	img = calloc(1, sizeof(*img));
	if (!img)
		return -ENOMEM;
	img->data = malloc(size);
	if (!img->data) {
		free(img);
		return -ENOMEM;
	}
	memcpy(img->data, data, size);
	img->size = size;
	err = image_abi(img->data, size, &img->abi);
	if (err) {
		vdso_image_free(img);
		return err;
	}
	n = elf_build_id_mem(img->data, size, img->build_id, sizeof(img->build_id));
	img->build_id_size = n > 0 ? (size_t)n : 0;
	*out = img;
	return 0;
}

void vdso_image_free(struct vdso_image *img)
{
	if (!img)
		return;
	free(img->data);
	free(img);
}

/*
 * The size of our own [vdso] mapping, which starts at @base, from
 * /proc/self/maps.  Returns 0, -ENOENT if there is no such mapping, or an
 * error of reading or parsing the maps file.
 */
static int own_mapping_size(uintptr_t base, size_t *size)
{
	const struct bpfprof_mapping *map;
	struct procmaps self;
	char *text;
	size_t len;
	int err;

	err = procfs_read_file("/proc/self/maps", &text, &len);
	if (err)
		return err;
	err = procmaps_parse(text, len, &self);
	free(text);
	if (err)
		return err;
	map = procmaps_find(self.maps, self.nr, base);
	if (map && map->start == base && strcmp(map->path, VDSO_PATH) == 0)
		*size = map->end - map->start;
	else
		err = -ENOENT;
	procmaps_free(&self);
	return err;
}

int vdso_image_own(struct vdso_image **out)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	size_t size;
	int err;

	if (!out)
		return -EINVAL;
	if (!base)
		return -ENOENT;
	err = own_mapping_size(base, &size);
	if (err)
		return err;
	return vdso_image_new((const void *)base, size, out);
}

bool vdso_image_matches(const struct vdso_image *img, const struct bpfprof_mapping *map,
			const struct elf_abi *abi)
{
	if (!img || !map || !abi || map->end < map->start)
		return false;
	if (map->end - map->start != img->size)
		return false;
	if (!abi->elf_class || abi->elf_class != img->abi.elf_class ||
	    abi->machine != img->abi.machine)
		return false;
	if (map->build_id && map->build_id_size && img->build_id_size)
		return map->build_id_size == img->build_id_size &&
		       memcmp(map->build_id, img->build_id, img->build_id_size) == 0;
	return true;
}

int vdso_image_memfd(const struct vdso_image *img)
{
	size_t done = 0;
	int fd, err;

	if (!img)
		return -EINVAL;
	fd = memfd_create("bpfprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < img->size) {
		ssize_t n = write(fd, (const char *)img->data + done, img->size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			close(fd);
			return err;
		}
		done += (size_t)n;
	}
	return fd;
}
