// SPDX-License-Identifier: BSD-2-Clause
/*
 * main.c - bpfprof's entry point: parse the command line, answer --help,
 * --version and --list-formats, else run the collector; `bpfprof merge
 * ...` is the merge command (merge/merge.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "cli/options.h"
#include "merge/merge.h"
#include "output/plugin_loader.h"

int main(int argc, char **argv)
{
	struct options opts;
	int status;

	/* merge finds moved binaries through debuginfod when DEBUGINFOD_URLS asks */
	if (argc > 1 && !strcmp(argv[1], "merge"))
		return merge_main(argc - 1, argv + 1);
	/* elfutils would fetch missing debug info over the network: not by default. */
	if (!getenv("BPFPROF_DEBUGINFOD"))
		unsetenv("DEBUGINFOD_URLS");

	if (options_parse(argc, argv, &opts)) {
		options_free(&opts);
		return 2;
	}
	if (opts.help) {
		options_usage();
		status = 0;
	} else if (opts.version) {
		printf("bpfprof %s\n", BPFPROF_VERSION);
		status = 0;
	} else if (opts.list_formats) {
		plugin_list_formats(stdout, opts.allow_untrusted_plugin);
		status = 0;
	} else {
		status = collector_run(&opts);
	}
	options_free(&opts);
	return status;
}
