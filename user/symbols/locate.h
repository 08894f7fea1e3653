/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * locate.h - finding the ELF files of recorded mappings without the
 * process that mapped them (offline symbolization, `bpfprof merge`):
 * by build-id, on this machine or under directories the user names,
 * and through debuginfod when the user asks for it.
 *
 * The file of a mapping recorded with PATH and BUILD-ID is the first of:
 *
 *   1. SYSROOT/PATH (PATH itself without a sysroot);
 *   2. for each debug directory DIR, in the order given:
 *        DIR/.build-id/XX/REST         (XX the first byte of the build-id
 *                                       in hex, REST the others)
 *        DIR/PATH                      (PATH's tree copied into DIR)
 *        DIR/BASENAME                  (PATH's last component)
 *   3. SYSROOT/usr/lib/debug/.build-id/XX/REST (/usr/lib/debug/... without
 *      a sysroot: this machine's debug tree);
 *   4. debuginfod's executable for BUILD-ID (debuginfod_find_executable()
 *      of elfutils' libdebuginfod.so.1, loaded on first use), only when
 *      the options allow it and DEBUGINFOD_URLS is set and not empty
 *      (DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT, ... as its client reads
 *      them);
 *   5. a separate debug file instead of the file itself: DIR/.build-id/XX/
 *      REST.debug for each debug directory, then SYSROOT/usr/lib/debug/
 *      .build-id/XX/REST.debug, then debuginfod's debuginfo for BUILD-ID
 *      (same conditions as 4).  Such a file has the symbols but no
 *      loadable bytes: its PT_LOAD headers keep the addresses, not the
 *      file offsets that turn a recorded file offset into an address, so
 *      the symbolizer places only what it can without them (elf_cache.c).
 * A candidate is taken only if it is a regular ELF file whose GNU
 * build-id is BUILD-ID: a file with another build-id (or none) is never
 * used, whatever its name, since a wrong name is worse than none.
 *
 * A mapping recorded without a build-id can only be found by its path:
 * SYSROOT/PATH, used if it is a regular ELF file (nothing more can be
 * checked); none of the other places apply.  A PATH ending in
 * " (deleted)" is looked up without that suffix, and only by build-id
 * (step 1 is skipped: the file now at PATH is not the one mapped).
 *
 * A separate debug file for a main file found by any route (DWARF lines,
 * the .symtab of a stripped file) is looked for by locate_open_debug():
 * the REST.debug places of step 5 but debuginfod, its build-id checked;
 * the symbolizer then goes on with debuginfo.h's places (this machine's
 * /usr/lib/debug, .gnu_debuglink beside the file found, debuginfod).
 *
 * Results are cached per build-id (per path for mappings without one),
 * found or not, for the locator's life.  Not thread-safe.
 */
#ifndef BPFPROF_LOCATE_H
#define BPFPROF_LOCATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a locator searches (strings are copied by locate_new()). */
struct locate_opts {
	const char *const *debug_dirs;	/* --debug-dir DIRs, searched in this order */
	size_t nr_debug_dirs;		/* entries at debug_dirs */
	const char *sysroot;		/* --sysroot: prefix of recorded paths; NULL or "" for none */
	/*
	 * Whether steps 4 and 5 may ask debuginfod (still only with
	 * DEBUGINFOD_URLS set).  The separate debug file of a file found is
	 * asked of debuginfod by debuginfo.h whenever DEBUGINFOD_URLS is set,
	 * whatever this says.
	 */
	bool debuginfod;
};

/* A locator (opaque): its options and cached results. */
struct locator;

/*
 * A new locator searching what @o names (NULL: recorded paths only, no
 * debuginfod).  Returns NULL with errno ENOMEM if out of memory, EINVAL
 * if a debug directory or the sysroot is "" or not absolute.
 */
struct locator *locate_new(const struct locate_opts *o);

/* Release @l and every path it handed out.  NULL allowed. */
void locate_free(struct locator *l);

/*
 * Open the file of the mapping recorded with @path and @build_id
 * (@build_id_size bytes; NULL/0 when none was recorded), in the order
 * at the top of this file.  Returns a descriptor open for reading
 * (close-on-exec; the caller closes it) and sets *@found to the path
 * opened (owned by @l, valid until locate_free(); a file in debuginfod's
 * cache for steps 4 and 5).  Returns -ENOENT when no place holds a
 * matching file, -EINVAL for a NULL or relative @path, -ENOMEM.
 */
int locate_open(struct locator *l, const char *path, const uint8_t *build_id,
		size_t build_id_size, const char **found);

/*
 * Open the separate debug file of the ELF file with @build_id
 * (@build_id_size > 0 bytes) from the debug directories and
 * SYSROOT/usr/lib/debug (see the top of this file; not debuginfod).  Returns a descriptor (the caller closes it) and sets
 * *@found to a malloc'd copy of its path (the caller frees it); -ENOENT
 * when none holds it; -EINVAL, -ENOMEM.
 */
int locate_open_debug(struct locator *l, const uint8_t *build_id, size_t build_id_size,
		      char **found);

#endif /* BPFPROF_LOCATE_H */
