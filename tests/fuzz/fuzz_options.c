// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_options.c - libFuzzer target of the command line parser: the input
 * is split at newlines (and NULs) into argv[1..] (at most 64 arguments),
 * argv[0] is "bpfprof", and options_parse() must either accept it with a
 * consistent struct options or reject it with -EINVAL.
 *
 * glibc's getopt keeps a pointer into the previous argv between calls
 * unless optind is set to 0; options_parse() sets optind = 0 itself, and
 * the harness resets getopt before every input as well, so each input
 * starts from a clean getopt (see docs/SECURITY.md, "fuzzing").
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof.h"
#include "cli/options.h"

#define MAX_ARGS 64

static void reset_getopt(void)
{
	static char *dummy[] = { "x", NULL };

	optind = 0;
	opterr = 0;
	getopt_long(1, dummy, "", NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 2];
	struct options o;
	int argc = 1, err;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "bpfprof";
	for (char *p = buf, *end = buf + size; p <= end && argc <= MAX_ARGS;) {
		size_t n = strcspn(p, "\n");

		argv[argc++] = p;
		if (p + n >= end)
			break;
		p[n] = '\0';
		p += n + 1;
	}
	argv[argc] = NULL;
	reset_getopt();
	err = options_parse(argc, argv, &o);
	if (err && err != -EINVAL)
		abort();
	if (!err && !o.help && !o.version && !o.list_formats) {
		if (o.targets == TARGETS_NONE)
			abort();
		if ((o.targets == TARGETS_PIDS || o.targets == TARGETS_TIDS) && (!o.nr_ids || !o.ids))
			abort();
		if (o.targets == TARGETS_COMMAND && (!o.command || !o.command[0]))
			abort();
		if (o.cgroup && (o.targets != TARGETS_ALL || !o.cgroup[0]))
			abort();	/* --cgroup: with --all only, never empty */
		if (!o.freq == !o.period)
			abort();	/* exactly one of -F and -c */
		if (o.call_graph != CALL_GRAPH_FP && o.call_graph != CALL_GRAPH_AUTO &&
		    o.call_graph != CALL_GRAPH_DWARF)
			abort();	/* one of the three modes */
		if (o.max_stack < 1 || o.max_stack > (o.call_graph != CALL_GRAPH_FP
						      ? BPFPROF_MAX_STACK_DEPTH : BPFPROF_MAX_FP_DEPTH))
			abort();	/* 127 frames with frame pointers */
		if (o.call_graph == CALL_GRAPH_DWARF && (o.dwarf_stack_size < 64 || o.dwarf_stack_size > BPFPROF_MAX_USER_STACK ||
				o.dwarf_stack_size % 8))
			abort();
		for (size_t i = 1; i < o.nr_cpus; i++)
			if (o.cpus[i - 1] > o.cpus[i])
				abort();	/* documented: sorted */
	}
	options_free(&o);
	free(buf);
	return 0;
}
