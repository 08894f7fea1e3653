/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof.h - the in-memory form of one profile.proto message tree, owned by
 * the pprof plugin.  pprof_build.c fills it from a bpfprof profile,
 * pprof_messages.c encodes it (one function per message of profile.proto,
 * github.com/google/pprof/blob/main/proto/profile.proto), pprof_plugin.c
 * gzips the bytes into the output.
 *
 * All "string" fields are indexes into strings[] (strings[0] is ""), all
 * ids are 1-based and 0 means "none", as in profile.proto.
 */
#ifndef BPFPROF_PPROF_H
#define BPFPROF_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "pb.h"

/* message ValueType */
struct pprof_value_type {
	int64_t type;			/* e.g. "cpu" */
	int64_t unit;			/* e.g. "nanoseconds" */
};

/* message Label: a string label has str, a numeric one num (+ num_unit). */
struct pprof_label {
	int64_t key;
	int64_t str;
	int64_t num;
	int64_t num_unit;
};

#define PPROF_NR_VALUES 2		/* samples/count, cpu/nanoseconds */
#define PPROF_MAX_LABELS 4		/* pid, tid, comm, thread */

/* message Sample */
struct pprof_sample {
	uint64_t *location_ids;		/* leaf first */
	size_t nr_locations;
	int64_t values[PPROF_NR_VALUES];
	struct pprof_label labels[PPROF_MAX_LABELS];
	size_t nr_labels;
};

/* message Mapping */
struct pprof_mapping {
	uint64_t id;
	uint64_t memory_start, memory_limit, file_offset;
	int64_t filename;
	int64_t build_id;		/* hex string */
	int has_functions, has_filenames, has_line_numbers, has_inline_frames;
	int kernel;			/* (not encoded) the kernel's mapping */
	int main_binary;		/* (not encoded) a process's executable */
};

/* message Line */
struct pprof_line {
	uint64_t function_id;
	int64_t line;
};

/* message Location: at most one Line (the host reports no inlining). */
struct pprof_location {
	uint64_t id;
	uint64_t mapping_id;
	uint64_t address;
	struct pprof_line line;		/* function_id 0: no Line */
};

/* message Function */
struct pprof_function {
	uint64_t id;
	int64_t name, system_name, filename;
	int64_t start_line;
};

/* message Profile */
struct pprof_profile {
	struct pprof_value_type sample_type[PPROF_NR_VALUES];
	struct pprof_sample *samples;
	size_t nr_samples;
	struct pprof_mapping *mappings;	/* in the order they are written */
	size_t nr_mappings;
	struct pprof_location *locations;
	size_t nr_locations;
	struct pprof_function *functions;
	size_t nr_functions;
	char **strings;
	size_t nr_strings;
	int64_t time_nanos;
	int64_t duration_nanos;
	struct pprof_value_type period_type;
	int64_t period;
	int64_t *comments;
	size_t nr_comments;
	int64_t default_sample_type;
};

/* Encode @p as a Profile message into @b; 0 or -ENOMEM. */
int write_profile(struct pb_buf *b, const struct pprof_profile *p);

struct bpfprof_host;
struct bpfprof_profile;

/* Fill @p from @prof (see pprof_build.c); 0 or a negative errno after
 * host->error(). */
int pprof_build(struct pprof_profile *p, const struct bpfprof_host *host,
		const struct bpfprof_profile *prof);
void pprof_free(struct pprof_profile *p);

#endif /* BPFPROF_PPROF_H */
