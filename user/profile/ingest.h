/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile/ingest.h - the sample sink: turns what the kernel side delivers
 * (streamed samples, drained counts, new-stack events) into the profile.
 *
 * For each record it copies the stacks it has not seen from the kernel's
 * stack map, or from the new-stack record that carries them (interning
 * them in the profile), unwinds copied user stacks
 * in `--call-graph dwarf` mode, asks the process tracker to look at a
 * process on its first sample or when a stack leaves its known mappings,
 * adds the samples to the profile, and hands SAMPLE records to the sink.
 */
#ifndef BPFPROF_INGEST_H
#define BPFPROF_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof.h"
#include "profile.h"
#include "record_sink.h"
#include "stack_bases.h"
#include "targets/tracker.h"
#include "unwind/unwind.h"

struct sampler;
struct cfi_loader;

/* What the dwarf-mode unwinding did, for the summary. */
struct ingest_unwind_stats {
	uint64_t samples;			/* samples unwound */
	uint64_t stops[UNWIND_STOP_NR];		/* by why the unwind stopped */
	uint64_t lag_max_ns;			/* worst delay from sample to unwind */
	uint64_t leaf_guesses;			/* leaves without CFI continued from [sp]
						 * (struct unwind_stats), set before the
						 * summary */
	uint64_t copies_withheld;		/* auto: copies the BPF program did not
						 * send for want of room in the ring
						 * (struct sampler_stats), set before
						 * the summary */
};

struct ingest {
	struct profile *profile;	/* where samples go (borrowed) */
	struct sampler *sampler;	/* stacks are copied from its map (borrowed) */
	struct tracker *tracker;	/* process metadata (borrowed) */
	const struct record_sink *sink;	/* SAMPLE records (borrowed; may be NULL) */
	struct unwinder *unwinder;	/* --call-graph dwarf, else NULL (borrowed) */
	struct cfi_loader *cfi;		/* --call-graph auto: its tables unwind the
					 * copies of young processes' stacks; NULL
					 * otherwise (borrowed) */
	struct interp *interp;		/* names Python frames; NULL: none (borrowed) */
	uint32_t max_stack;		/* frames per unwound stack (--max-stack,
					 * at most BPFPROF_MAX_STACK_DEPTH) */
	uint64_t counts_time_ns;	/* time of a process snapshot made for a
					 * drained count: 0 while sampling, the
					 * run's end for the final drain */
	uint32_t last_sample_tgid;	/* process of the last sample: known */
	uint64_t counts_moved;		/* counts a CPU's pending-count slots gave
					 * up, read while sampling ... */
	uint64_t samples_moved;		/* ... and their samples */
	uint64_t stacks_copied;		/* copied from the kernel since the last prune
					 * (from the map or from new-stack records) */
	uint64_t stacks_in_records;	/* new user stacks taken from their records */
	uint64_t stacks_looked_up[2];	/* copied from the map, a bpf() call each:
					 * [0] user stacks, [1] kernel stacks */
	struct stack_bases *bases;	/* user stacks stored without their leaf
					 * (owned) */
	uint64_t leaves_put_back;	/* whole stacks made from a base and a leaf */
	uint64_t drops[DROP_NR];	/* counted here: stacks gone from the map */
	struct ingest_unwind_stats unwind;
};

/* Set up @in for a run; all pointers are borrowed and outlive it.  0, or
 * -ENOMEM.  Free what it holds with ingest_fini(). */
int ingest_init(struct ingest *in, struct profile *profile, struct sampler *sampler,
		struct tracker *tracker, const struct record_sink *sink,
		struct unwinder *unwinder, uint32_t max_stack);

/* Free what @in holds (not the borrowed parts). */
void ingest_fini(struct ingest *in);

/* One streamed sample of @size bytes (a struct dwarf_sample_event in dwarf
 * mode), or in count mode a struct moved_counts_event (each count as
 * ingest_count()).  0, or -ENOMEM. */
int ingest_sample(struct ingest *in, const struct sample_event *e, size_t size);

/* @samples samples drained from the kernel's count map.  0, or -ENOMEM. */
int ingest_count(struct ingest *in, const struct count_key *k, uint64_t samples);

/* TASK_EVENT_NEW_STACK, a record of @size bytes: intern the stack (from
 * the record when it is a struct new_stack_event, from the map otherwise)
 * and make sure its addresses lie in the process's known mappings
 * (re-reading them if not). */
void ingest_new_stack(struct ingest *in, const struct task_event *e, size_t size);

/* True if the stack with kernel id @id was copied, whole or without its
 * leaf (the kernel may forget it). */
bool ingest_stack_copied(const struct ingest *in, uint64_t id);

#endif /* BPFPROF_INGEST_H */
