// SPDX-License-Identifier: BSD-2-Clause
/*
 * buildid.c - owns the GNU build-id reader (see buildid.h): an ELF file,
 * an open descriptor or an image in memory, through libelf and
 * dwelf_elf_gnu_build_id(); and the path of a build-id's debug file in
 * the system's build-id tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "buildid.h"

/* The build-id of @elf (may be NULL: not ELF) into @buf; consumes @elf. */
static int build_id_of(Elf *elf, uint8_t *buf, size_t size)
{
	const void *id = NULL;
	ssize_t n;
	int ret;

	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -EINVAL;
	}
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n < 0)
		ret = -EINVAL;
	else if (n == 0 || !id)
		ret = -ENODATA;
	else if ((size_t)n > size)
		ret = -ENOSPC;
	else {
		memcpy(buf, id, (size_t)n);
		ret = (int)n;
	}
	elf_end(elf);
	return ret;
}

int elf_build_id_fd(int fd, uint8_t *buf, size_t size)
{
	if (fd < 0 || (!buf && size))
		return -EINVAL;
	elf_version(EV_CURRENT);
	return build_id_of(elf_begin(fd, ELF_C_READ, NULL), buf, size);
}

int elf_build_id_mem(void *image, size_t len, uint8_t *buf, size_t size)
{
	if (!image || !len || (!buf && size))
		return -EINVAL;
	elf_version(EV_CURRENT);
	return build_id_of(elf_memory(image, len), buf, size);
}

int elf_build_id(const char *path, uint8_t *buf, size_t size)
{
	int fd, ret;

	if (!path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = elf_build_id_fd(fd, buf, size);
	close(fd);
	return ret;
}

int buildid_debug_path(const uint8_t *id, size_t n, char *buf, size_t size)
{
	char *q = buf;

	if (!id || n < 2 || n > BUILDID_DEBUG_MAX)
		return -EINVAL;
	/* the tree, "XX/", REST, ".debug" and its NUL */
	if (!buf || size < sizeof(BUILDID_DEBUG_TREE) - 1 + 3 + 2 * (n - 1) + sizeof(".debug"))
		return -ENOSPC;
	q += sprintf(q, "%s%02x/", BUILDID_DEBUG_TREE, id[0]);
	for (size_t i = 1; i < n; i++)
		q += sprintf(q, "%02x", id[i]);
	strcpy(q, ".debug");
	return 0;
}
