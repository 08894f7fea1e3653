/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * merge/merge_cli.h - the command line of `bpfprof merge`:
 *
 *   bpfprof merge -o OUT [--format F | --plugin PATH.so] [--debug-dir DIR]...
 *                 [--sysroot DIR] [-q] FILE|DIR...
 *
 * parsed with its own getopt_long into struct merge_options.
 */
#ifndef BPFPROF_MERGE_CLI_H
#define BPFPROF_MERGE_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/options.h"

/* --debug-dir may be given this many times. */
#define MERGE_MAX_DEBUG_DIRS 16

struct merge_options {
	struct options out;		/* -o, --format, --plugin, -q, --no-demangle for the output session
					 * (the rest zero); argv/argc are merge's */
	const char *debug_dirs[MERGE_MAX_DEBUG_DIRS]; /* --debug-dir, in the order given:
					 * where moved binaries are looked for */
	size_t nr_debug_dirs;
	const char *sysroot;		/* --sysroot: the recording machine's files under DIR */
	char **inputs;			/* FILE|DIR operands (point into argv) */
	size_t nr_inputs;
	bool help;
};

/*
 * Parse `bpfprof merge ARGS` (@argv[0] is "merge") into @o (zeroed
 * here; points into @argv).  --debug-dir and --sysroot must name
 * directories.  0, or -EINVAL after a one-line message on stderr.
 */
int merge_options_parse(int argc, char **argv, struct merge_options *o);

/* The usage text of `bpfprof merge`, on stdout. */
void merge_usage(void);

#endif /* BPFPROF_MERGE_CLI_H */
