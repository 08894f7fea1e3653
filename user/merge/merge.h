/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * merge/merge.h - `bpfprof merge`: raw measurements (merge/raw_read.h) of
 * one or many nodes into one profile, written by any output plugin
 * through the output session (output/session.h), without the kernel
 * steps.
 *
 * The state below is shared by the files of user/merge/: merge.c (the
 * command: inputs, the merged run, the order of the steps), merge_load.c
 * (the tables of each file into the profile: ids renumbered where they
 * collide across files, stacks deduplicated by content),
 * merge_symbols.c (the host's symbolize() over recorded mappings and
 * recorded kernel names; where moved binaries will be located) and
 * merge_replay.c (the event streams, k-way merged in global time order).
 */
#ifndef BPFPROF_MERGE_H
#define BPFPROF_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "merge/merge_cli.h"
#include "merge/raw_read.h"
#include "output/session.h"
#include "profile/profile.h"
#include "profile/record_sink.h"

struct merge_id;

/* One measurement being merged. */
struct merge_file {
	struct raw_file rf;		/* its tables (stacks dropped once interned) */
	uint32_t index;			/* position among the merged files */
	uint32_t host;			/* index among the profile's hosts */
	uint32_t *stacks;		/* its stack index -> the profile's */
	struct merge_id *ids;		/* its pid/tid -> the merged profile's (uthash) */
	int64_t time_shift;		/* merged time = its CLOCK_MONOTONIC time + this */
};

struct merge {
	const struct merge_options *opts;
	struct merge_file *files;
	size_t nr_files;
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct session session;
	struct bpfprof_run run;		/* the merged run; strings from the files or below */
	char hostname[64], target[64];
	struct merge_id *used;		/* merged ids taken, and by which file (uthash) */
	uint32_t next_id;		/* next id for renumbering */
	uint64_t nr_events;		/* replayed */
};

/* Run `bpfprof merge` with @argv[0] == "merge".  The exit status: 0, 1 on
 * failure (after a one-line message), 2 on a bad command line. */
int merge_main(int argc, char **argv);

/* ---- merge_load.c ---- */

/* Put the tables of @f (opened and checked) into @m's profile.  0 or
 * negative errno. */
int merge_load_file(struct merge *m, struct merge_file *f);

/* The merged id of @f's pid or tid @id (0 stays 0), made when new: @id
 * itself unless another file took it.  0 or -ENOMEM. */
int merge_map_id(struct merge *m, struct merge_file *f, uint32_t id, uint32_t *out);

/* The file whose process got the merged pid @pid, or NULL. */
struct merge_file *merge_file_of(const struct merge *m, uint32_t pid);

/* Release the id tables of @m and its files. */
void merge_ids_free(struct merge *m);

/* ---- merge_symbols.c ---- */

/* Point the session's host at the recorded mappings and names, and set
 * up where binaries are looked for (merge_locate_setup()).  0 or
 * negative errno. */
int merge_symbols_attach(struct merge *m);

/* ---- merge_replay.c ---- */

/* Every file's events, in merged time order, into @sink.  0 or negative
 * errno after a message. */
int merge_replay(struct merge *m, const struct record_sink *sink);

#endif /* BPFPROF_MERGE_H */
