/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * output/run_info.h - the run's metadata as plugins see it (struct
 * bpfprof_run of include/bpfprof/plugin.h): host, kernel, architecture,
 * CPUs, command line, targets, and the storage its strings point into.
 */
#ifndef BPFPROF_RUN_INFO_H
#define BPFPROF_RUN_INFO_H

#include <sys/utsname.h>

#include "bpfprof/plugin.h"
#include "cli/options.h"

struct run_info {
	struct bpfprof_run run;		/* what plugins get; strings point below */
	char hostname[256];
	char os_release[sizeof(((struct utsname *)0)->release)];
	char arch[sizeof(((struct utsname *)0)->machine)];
	char target_desc[512];
};

/*
 * Fill @ri from the system and @o (borrowed: argv stays @o's).  The
 * sampling settings, times and counters are the collector's to fill once
 * they are known (run.sample_freq/sample_period from the open sampler,
 * start_ns/end_ns, samples and drops).
 */
void run_info_fill(struct run_info *ri, const struct options *o);

#endif /* BPFPROF_RUN_INFO_H */
