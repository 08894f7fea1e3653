/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procmaps.h - reading /proc/PID/maps into struct bpfprof_mapping arrays,
 * looking addresses up in them, and attaching GNU build-ids of the mapped
 * ELF files.
 *
 * Paths: the path of a mapping is kept exactly as the kernel prints it,
 * including spaces inside it and the " (deleted)" suffix the kernel
 * appends when the mapped file was unlinked (the kernel prints the same
 * text for a file really named "x (deleted)", so the suffix cannot be
 * decided with certainty; procmaps_path_deleted() tells whether it is
 * present).  Pseudo paths ("[vdso]", "[heap]", "[stack]", "[vsyscall]",
 * "[anon:NAME]") are kept as is; anonymous mappings have the path "".
 * A newline in a file name appears as the kernel prints it, "\012".
 */
#ifndef BPFPROF_PROCMAPS_H
#define BPFPROF_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

#include <bpfprof/plugin.h>

/* The suffix the kernel appends to the path of an unlinked mapped file. */
#define PROCMAPS_DELETED_SUFFIX " (deleted)"

/*
 * The mappings of one process.  maps[] is sorted by start (ties by end)
 * and owned by the struct, as are the path strings and build-id bytes the
 * mappings point to; all of it is released by procmaps_free().  A zeroed
 * struct is a valid empty set.
 */
struct procmaps {
	struct bpfprof_mapping *maps;	/* nr entries, sorted by start */
	size_t nr;
	size_t nr_malformed;		/* lines procmaps_parse() skipped */
	/* private */
	char *strings;			/* arena holding every path */
	uint8_t *build_ids;		/* arena of build-ids (procmaps_add_build_ids) */
};

/*
 * Parse the text of a /proc/PID/maps file (@len bytes at @text, need not
 * be NUL terminated; NULL with @len 0 is an empty file) into @out, which
 * is overwritten (it must not hold mappings that are still to be freed).
 *
 * Lenient: a line that is not "START-END PERMS OFFSET MAJ:MIN INODE [PATH]"
 * with hex START < END, PERMS of the form [r-][w-][x-][ps], hex OFFSET,
 * MAJ and MIN, decimal INODE (all fitting their fields) is skipped and
 * counted in out->nr_malformed; empty lines are ignored silently.  Any
 * byte sequence is accepted (safe for fuzzing).  The result is sorted by
 * start; overlapping mappings, which the kernel never reports, are kept.
 *
 * Returns 0 (also when lines were skipped), -EINVAL if @text is NULL with
 * @len > 0 or @out is NULL, -ENOMEM.  On error @out is left empty.
 */
int procmaps_parse(const char *text, size_t len, struct procmaps *out);

/*
 * Read and parse /proc/@pid/maps into @out (see procmaps_parse()).
 * Returns 0; -ENOENT or -ESRCH if the process does not exist (any more);
 * another negative errno from open()/read() (e.g. -EACCES), or -ENOMEM.
 * A zombie process yields 0 with no mappings.
 */
int procmaps_read(uint32_t pid, struct procmaps *out);

/* Release everything @m owns and leave it empty.  NULL is allowed. */
void procmaps_free(struct procmaps *m);

/*
 * The mapping of @maps (@nr entries sorted by start, as produced above or
 * as in struct bpfprof_process) that contains @addr (start <= addr < end),
 * found by binary search; NULL if there is none.  With overlapping
 * mappings the one with the greatest start <= @addr is checked.
 */
const struct bpfprof_mapping *procmaps_find(const struct bpfprof_mapping *maps, size_t nr,
					    uint64_t addr);

/*
 * Fill build_id/build_id_size of every file mapping (path starting with
 * '/') that is executable, and of the other mappings of the same file
 * (same dev, inode and path).  The ELF file is opened through
 * /proc/@pid/map_files/START-END (exact file, also when deleted), else
 * /proc/@pid/root/PATH, else PATH itself (the two path fallbacks are used
 * only when the file's inode matches the mapping's, and not for
 * " (deleted)" paths).  Mappings whose
 * file cannot be opened or has no build-id are left unknown (NULL, 0);
 * that is not an error.  @pid 0 skips the /proc/PID routes.
 * Build-ids are cached process-wide by (dev, inode, path), checked
 * against the file's ctime and size, so re-reading the maps of a process
 * only opens the files again (thread-safe).
 * The notes are read by elf_build_id_fd() (symbols/buildid.h).
 * Returns 0, -EINVAL for @m NULL, or -ENOMEM (mappings filled so far
 * stay filled).
 */
int procmaps_add_build_ids(struct procmaps *m, uint32_t pid);

/* Empty the process-wide build-id cache (frees its memory). */
void procmaps_build_id_cache_clear(void);

/*
 * Whether @path ends in PROCMAPS_DELETED_SUFFIX.  Returns 1 and sets
 * *@len (if not NULL) to the length without the suffix, else returns 0
 * and sets *@len to strlen(@path).
 */
int procmaps_path_deleted(const char *path, size_t *len);

/*
 * Open the file of @map of process @pid read-only, the way
 * procmaps_add_build_ids() describes (map_files, then root/PATH, then
 * PATH; @pid 0 skips the /proc routes).  Returns a file descriptor the
 * caller closes, -ENOENT for mappings without a file path ("", "[vdso]",
 * ...), -ESTALE if only a file with another inode was found, or another
 * negative errno from open().
 */
int procmaps_open_file(uint32_t pid, const struct bpfprof_mapping *map);

#endif /* BPFPROF_PROCMAPS_H */
