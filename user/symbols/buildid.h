/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * buildid.h - reading the GNU build-id note (NT_GNU_BUILD_ID) of an ELF
 * file or an ELF image in memory, with elfutils (libelf, libdwelf).
 *
 * Used by procmaps.c (the build-ids of mapped files) and vdso.c (the
 * build-id of our own vDSO image); it depends on neither.
 */
#ifndef BPFPROF_BUILDID_H
#define BPFPROF_BUILDID_H

#include <stddef.h>
#include <stdint.h>

/*
 * Copy the GNU build-id of the ELF file at @path into @buf (@size bytes).
 * Returns the number of bytes written (> 0); -ENODATA if the file has no
 * build-id; -ENOSPC if it is longer than @size; -EINVAL if the file is
 * not a readable ELF file (truncated, garbage) or @path is NULL; a
 * negative errno of open().
 */
int elf_build_id(const char *path, uint8_t *buf, size_t size);

/*
 * elf_build_id() of the open file @fd: the descriptor is neither closed
 * nor moved (the file is read at absolute offsets).  Same returns; also
 * -EINVAL for @fd < 0 or @buf NULL with @size > 0.
 */
int elf_build_id_fd(int fd, uint8_t *buf, size_t size);

/*
 * elf_build_id() of the ELF image of @len bytes at @image (e.g. a copy of
 * a vDSO).  An image in the host's byte order is only read; libelf may
 * convert one in the other order in place, hence not const.  Same
 * returns; -EINVAL also for @image NULL or @len 0.
 */
int elf_build_id_mem(void *image, size_t len, uint8_t *buf, size_t size);

#endif /* BPFPROF_BUILDID_H */
