// SPDX-License-Identifier: BSD-2-Clause
/*
 * debuginfo.c - the find_debuginfo callback of our libdwfl sessions
 * (see debuginfo.h): separate debug files by build-id and .gnu_debuglink
 * on the local file system, debuginfod only when DEBUGINFOD_URLS asks
 * for it; first the places of a locator (locate.h) for the files it found.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "debuginfo.h"
#include "locate.h"

/* Bytes read at a time to compute a file's CRC. */
#define CRC_CHUNK (16 * 1024)

/*
 * Where a .gnu_debuglink file is looked for, in GDB's and elfutils'
 * order: PREFIX DIR SUBDIR/LINK, DIR being the main file's directory.
 */
static const struct {
	const char *prefix;
	const char *subdir;
	bool absolute_only;		/* only when DIR is absolute */
} link_places[] = {
	{ "", "", false },
	{ "", "/.debug", false },
	{ "/usr/lib/debug", "", true },
};

/* Whether the user asked for debuginfod (as its client reads it). */
static bool debuginfod_wanted(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[0];
}

/* The CRC32 of the whole file @fd into *@crc; 0 or a negative errno. */
static int file_crc32(int fd, uint32_t *crc)
{
	unsigned char buf[CRC_CHUNK];
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	if (n < 0)
		return -errno;
	*crc = (uint32_t)c;
	return 0;
}

/*
 * Open @path if it is a regular file, not the main file (@main_st, NULL
 * when unknown), with the CRC32 @crc.  Returns its fd, or -1.  O_NONBLOCK
 * so that a FIFO by that name cannot hang us (regular files ignore it).
 */
static int open_candidate(const char *path, const struct stat *main_st, uint32_t crc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	uint32_t got;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (main_st && st.st_dev == main_st->st_dev && st.st_ino == main_st->st_ino) ||
	    file_crc32(fd, &got) || got != crc) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The malloc'd path of @link in link_places[@i] for the main file @file.
 * NULL with errno 0 when that place does not apply, with ENOMEM if out
 * of memory.
 */
static char *link_path(size_t i, const char *file, const char *link)
{
	const char *slash = strrchr(file, '/');
	const char *dir = slash ? file : ".";
	int dirlen = slash ? (int)(slash - file) : 1;
	char *path;

	errno = 0;
	if (link_places[i].absolute_only && dir[0] != '/')
		return NULL;
	if (asprintf(&path, "%s%.*s%s/%s", link_places[i].prefix, dirlen, dir,
		     link_places[i].subdir, link) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return path;
}

/* Step 2 of debuginfo_find(): the .gnu_debuglink @link of @file. */
static int find_by_debuglink(const char *file, const char *link, uint32_t crc, char **found)
{
	struct stat main_st;
	bool have_main = stat(file, &main_st) == 0;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(link_places) / sizeof(link_places[0]); i++) {
		char *path = link_path(i, file, link);

		if (!path) {
			if (errno)
				return -1;
			continue;
		}
		fd = strcmp(path, file) == 0 ? -1 :
		     open_candidate(path, have_main ? &main_st : NULL, crc);
		if (fd >= 0) {
			*found = path;
			return fd;
		}
		free(path);
	}
	errno = 0;
	return -1;
}

/*
 * Step 1: the build-id tree, as dwfl_standard_find_debuginfo() does it:
 * dwfl_module_build_id() first, which reads the module's build-id if
 * libdwfl has not yet (dwfl_build_id_find_debuginfo() only uses one
 * already read); a module without one has nothing to find here.
 */
static int find_by_build_id(Dwfl_Module *mod, char **found)
{
	const unsigned char *bits;
	GElf_Addr vaddr;

	errno = 0;
	if (dwfl_module_build_id(mod, &bits, &vaddr) <= 0) {
		errno = 0;
		return -1;
	}
	return dwfl_build_id_find_debuginfo(mod, NULL, NULL, 0, NULL, NULL, 0, found);
}

int debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		   const char *file, const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	int fd;

	if (debuginfod_wanted())
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	if (!mod) {
		errno = EINVAL;
		return -1;
	}
	fd = find_by_build_id(mod, debuginfo_file_name);
	if (fd >= 0 || errno)
		return fd;
	/* errno is 0 from here: a debuglink without a CRC cannot be checked */
	if (!file || !debuglink_file || !debuglink_file[0] || !debuglink_crc)
		return -1;
	return find_by_debuglink(file, debuglink_file, debuglink_crc, debuginfo_file_name);
}

int debuginfo_find_located(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct locator *l = userdata ? *userdata : NULL;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n, fd;

	if (l && mod && (n = dwfl_module_build_id(mod, &bits, &vaddr)) > 0) {
		fd = locate_open_debug(l, bits, (size_t)n, debuginfo_file_name);
		if (fd >= 0)
			return fd;
		if (fd == -ENOMEM) {
			errno = ENOMEM;
			return -1;
		}
	}
	return debuginfo_find(mod, NULL, modname, base, file, debuglink_file, debuglink_crc,
			      debuginfo_file_name);
}
