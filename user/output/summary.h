/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * summary.h - the short report bpfprof prints on stderr after a run:
 * samples, processes and threads, drops by reason, unresolved frames,
 * where the output went, and the top functions.
 */
#ifndef BPFPROF_SUMMARY_H
#define BPFPROF_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "bpfprof/plugin.h"
#include "kernel/sampler.h"
#include "profile/ingest.h"
#include "unwind/cfi_loader.h"

struct profile;

/* The files written by a run. */
struct summary_outputs {
	char **paths;
	size_t nr;
};

/* Remember @path (copied). */
void summary_add_output(struct summary_outputs *o, const char *path);
void summary_outputs_free(struct summary_outputs *o);

/* Print the summary; top functions by self samples, symbolized by @host. */
void summary_print(FILE *out, const struct bpfprof_run *run, struct profile *profile,
		   const struct bpfprof_host *host, const struct sampler_stats *stats,
		   const struct summary_outputs *outs);

/* One line on what the collector's unwinding of stack copies did
 * (--call-graph dwarf, or with @copies auto's copies of young processes'
 * stacks): samples, stops by reason, the worst backlog (ms).  When some
 * stacks went deeper than the @copy_bytes copied and more could be, a
 * second line says so and names the option that copies more. */
void summary_print_unwind(FILE *out, const struct ingest_unwind_stats *st, bool copies,
			  uint32_t copy_bytes);

struct interp;

/*
 * CPython stacks (output/summary_python.c): one line with the samples of
 * CPython processes, those that got Python frames, and the frames lost by
 * reason (bpf/python.h's enum py_stat from @stats, unnamed code objects
 * from @interp); nothing when no CPython process was seen.  With
 * @verbose, one more with frames per sample and the caches' hit rates.
 */
void summary_print_python(FILE *out, const struct sampler_stats *stats,
			  const struct interp *interp, bool verbose);

/*
 * With -v: the processes the collector tracked (sampled, or seen to fork,
 * exec or exit), how many exited during the run, and the mappings it
 * keeps of them (current and past images'), also per exited process: an
 * exited process keeps only its code mappings (proc_keep_code_maps()).
 */
void summary_print_processes(FILE *out, struct profile *profile);

/*
 * With -v: what the perf maps of processes with JIT code gave
 * (symbols/perfmap.h): processes, entries, lines read (malformed ones),
 * reads, lookups of frames in anonymous code and those that missed
 * (then: a frame sampled before its line was written is named later).
 * Nothing when no process had a frame in anonymous executable memory.
 */
void summary_print_perfmaps(FILE *out, struct profile *profile);

/*
 * What --call-graph auto's stack walks did: one line with the walks by
 * how they ended (enum cfi_walk_stop) from @stats, and how many went on
 * past a leaf without CFI from [sp] (if any); with @verbose, one
 * more on @loader's unwind tables (count, rows, kernel memory, build and
 * load time, files without a table or over the budget).
 */
void summary_print_walk(FILE *out, const struct sampler_stats *stats,
			const struct cfi_loader *loader, bool verbose);

#endif /* BPFPROF_SUMMARY_H */
