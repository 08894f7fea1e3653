/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * debuginfo.h - where the separate debug file of an ELF module comes
 * from: the find_debuginfo callback that the symbolizer's and the
 * unwinder's libdwfl sessions use instead of dwfl_standard_find_debuginfo.
 *
 * Debug files are looked for locally (build-id tree, then .gnu_debuglink
 * places); debuginfod is asked only when DEBUGINFOD_URLS is set and not
 * empty.  A symbolizer with a locator (locate.h) also searches the
 * user's debug directories and sysroot first (debuginfo_find_located()).
 * elfutils' standard callback falls back to debuginfod for every
 * module without a local debug file, which loads libdebuginfod (and
 * libcurl, OpenSSL, ...) even when DEBUGINFOD_URLS is unset.
 */
#ifndef BPFPROF_DEBUGINFO_H
#define BPFPROF_DEBUGINFO_H

#include <elfutils/libdwfl.h>

/*
 * A Dwfl_Callbacks.find_debuginfo: open the separate debug file of @mod,
 * whose main ELF file is @file (the name the module was reported with;
 * may be NULL), and whose .gnu_debuglink names @debuglink_file with the
 * CRC32 @debuglink_crc (NULL and 0 without a .gnu_debuglink; libdwfl
 * also calls it with the .gnu_debugaltlink name and CRC 0 when looking
 * for a dwz alternate file).  @userdata, @modname and @base are only
 * passed on to dwfl_standard_find_debuginfo().
 *
 * With DEBUGINFOD_URLS set and not empty, this is
 * dwfl_standard_find_debuginfo() (local places, then debuginfod).
 * Otherwise, never debuginfod:
 *   1. dwfl_build_id_find_debuginfo(): /usr/lib/debug/.build-id/xx/yyyy.debug
 *      (also for the dwz alternate file), the file's build-id checked;
 *      if that fails with an error (errno set) the search stops there,
 *      as in elfutils' standard callback;
 *   2. with a .gnu_debuglink (and a CRC that is not 0): DIR/@debuglink_file,
 *      DIR/.debug/@debuglink_file and /usr/lib/debug/DIR/@debuglink_file
 *      (the last only when DIR is absolute), DIR being the directory of
 *      @file ("." if it has none).  A candidate is taken only if it is a
 *      regular file that is not @file itself (same path, or same device
 *      and inode) and its CRC32 (zlib crc32()) equals @debuglink_crc.
 *
 * Returns a file descriptor open for reading (close-on-exec) and sets
 * *@debuginfo_file_name to its malloc'd path (libdwfl owns both then);
 * or -1 with errno 0 when nothing was found; or -1 with errno set on an
 * error (EINVAL for a NULL @mod, ENOMEM, or an error of the build-id
 * lookup).
 */
int debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		   const char *file, const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name);

/*
 * debuginfo_find() for modules whose file was found by a locator
 * (locate.h), the symbolizer's callback: when *@userdata (the module's
 * user data) is a struct locator, the module's build-id is looked up
 * first with locate_open_debug(): DIR/.build-id/XX/REST.debug under each
 * --debug-dir, then under SYSROOT/usr/lib/debug.  Without a locator, or
 * when none of those holds it, exactly debuginfo_find() (with a NULL
 * userdata).  Same returns.
 */
int debuginfo_find_located(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif /* BPFPROF_DEBUGINFO_H */
