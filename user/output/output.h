/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * output.h - safe output files: a plugin writes into a temporary file or
 * directory created beside the final path, which is renamed into place only
 * when everything was written and synced.  Nothing partial is ever left at
 * the final path.  A file output may have companions (plugin.h's
 * companion()): files at the final path plus a suffix, written through
 * temporaries of their own and published or removed with it.
 */
#ifndef BPFPROF_OUTPUT_H
#define BPFPROF_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

/*
 * stdio buffer of a file output, bytes.  Large writes let the page cache
 * take whole large folios instead of one 4 KiB page per write(): a 26 MB
 * perf.data written 4 KiB at a time cost ~20 ms more system time here.
 */
#define OUTPUT_BUFFER_BYTES (1u << 20)

/* Companions of one output, at most (plugin.h's BPFPROF_COMPANIONS_MAX). */
#define OUTPUT_COMPANIONS_MAX 4
/* Longest companion suffix, bytes. */
#define OUTPUT_SUFFIX_MAX 32

struct output {
	char *final_path;		/* what the user asked for */
	char *tmp_path;			/* the temporary file or directory; NULL once published */
	bool is_dir;
	FILE *file;			/* file outputs */
	char *file_buffer;		/* file's stdio buffer (OUTPUT_BUFFER_BYTES), freed after fclose */
	int dir_fd;			/* directory outputs, else -1 */
	/* Files published with this one (file outputs each, owned); a slot
	 * is filled before nr_companions counts it (read by a signal handler). */
	struct output *companions[OUTPUT_COMPANIONS_MAX];
	unsigned nr_companions;
	bool published;			/* renamed into place; final paths kept for output_unpublish() */
};

/*
 * Check, before sampling starts, that @path can be written: its directory
 * exists and is writable, it is not an existing directory (for a file) or
 * an existing non-empty directory (for a directory), and (as root) not a
 * symlink in a sticky world-writable directory.  Prints one line and
 * returns -errno when not.
 */
int output_preflight(const char *path, bool is_dir);

/* Create the temporary beside @path. 0 or -errno (message printed). */
int output_begin(struct output *o, const char *path, bool is_dir);

/* Flush, sync, close and rename into place; under sudo the result belongs
 * to the invoking user.  On failure removes the temporary. 0 or -errno
 * (message printed). */
int output_commit(struct output *o);

/*
 * A companion of @o: a temporary for @o's final path followed by @suffix
 * (1 to OUTPUT_SUFFIX_MAX characters, no '/'), open "w+b" in *@file, which
 * @o finishes, publishes (companions first) and removes with itself.
 * 0, -EINVAL (bad suffix), -EEXIST (suffix taken), -EMFILE (more than
 * OUTPUT_COMPANIONS_MAX), -ENOMEM or -errno of creating it; prints nothing.
 */
int output_add_companion(struct output *o, const char *suffix, FILE **file);

/* output_commit() in two steps, to publish several outputs all or none:
 * output_finish() flushes, syncs, closes and hands the temporaries (the
 * output's and its companions') to the sudo user; output_publish() renames
 * them into place, companions first, and undoes its own renames when one
 * fails.  Each removes the temporaries and prints a line on failure.
 * 0 or -errno. */
int output_finish(struct output *o);
int output_publish(struct output *o);

/* Remove a published output and its companions from their final paths
 * again (another output of the same run failed), and free. */
void output_unpublish(struct output *o);

/* Remove the temporaries (the output's and its companions') and free.
 * Safe on a zeroed output; a published one is only freed. */
void output_abort(struct output *o);

/* Async-signal-safe best effort removal of a temporary file or an empty
 * directory and of its companions' temporaries, for a second Ctrl-C. */
void output_abort_signal_safe(const struct output *o);

#endif /* BPFPROF_OUTPUT_H */
