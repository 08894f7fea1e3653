/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * buildid.h - reading the GNU build-id note (NT_GNU_BUILD_ID) of an ELF
 * file or an ELF image in memory, with elfutils (libelf, libdwelf).
 *
 * Used by procmaps.c (the build-ids of mapped files) and vdso.c (the
 * build-id of our own vDSO image); it depends on neither.  Also names a
 * build-id's debug file in the system's build-id tree, for the symbol
 * cache and the CPython reader.
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

/* The system's build-id tree of separate debug files (GDB's and elfutils'
 * default debug-file-directory, with ".build-id/"). */
#define BUILDID_DEBUG_TREE "/usr/lib/debug/.build-id/"

/* Longest build-id buildid_debug_path() takes, bytes. */
#define BUILDID_DEBUG_MAX 64

/* Room for any path buildid_debug_path() writes, NUL included. */
#define BUILDID_DEBUG_PATH_MAX (sizeof(BUILDID_DEBUG_TREE) + 2 * BUILDID_DEBUG_MAX + 8)

/*
 * The path of the separate debug file of build-id @id (@n bytes) in the
 * system's build-id tree, "/usr/lib/debug/.build-id/XX/REST.debug" (XX
 * the first byte in hex, REST the others), into @buf (@size bytes; a
 * NUL-terminated string).  Nothing is opened.  Returns 0; -EINVAL when
 * @n is under 2 or over BUILDID_DEBUG_MAX; -ENOSPC when @size is under
 * what the path needs (BUILDID_DEBUG_PATH_MAX is always enough).
 */
int buildid_debug_path(const uint8_t *id, size_t n, char *buf, size_t size);

#endif /* BPFPROF_BUILDID_H */
