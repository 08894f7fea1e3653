/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * collector.h - one profiling run from start to written output: targets,
 * sampling loop, process metadata, aggregation, hand-off to the plugin.
 */
#ifndef BPFPROF_COLLECTOR_H
#define BPFPROF_COLLECTOR_H

#include "cli/options.h"

/*
 * Run a whole profile as @opts says.  Returns the process exit status:
 * 0 on success (or the profiled command's own exit status with
 * -- COMMAND), non-zero after printing why on failure.
 */
int collector_run(const struct options *opts);

#endif /* BPFPROF_COLLECTOR_H */
