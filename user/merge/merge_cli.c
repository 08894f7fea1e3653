// SPDX-License-Identifier: BSD-2-Clause
/*
 * merge/merge_cli.c - owns the command line of `bpfprof merge` (see
 * merge_cli.h): its getopt_long parser, its checks and its --help.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "merge/merge_cli.h"

enum { OPT_FORMAT = 256, OPT_PLUGIN, OPT_DEBUG_DIR, OPT_SYSROOT, OPT_UNTRUSTED };

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "plugin", required_argument, NULL, OPT_PLUGIN },
	{ "allow-untrusted-plugin", no_argument, NULL, OPT_UNTRUSTED },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "sysroot", required_argument, NULL, OPT_SYSROOT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void merge_usage(void)
{
	printf("usage: bpfprof merge -o OUT [--format F] [--debug-dir DIR] [--sysroot DIR] FILE|DIR...\n"
	       "\n"
	       "Merge measurements written by `bpfprof --format raw` (one per node, or\n"
	       "several) into one profile, symbolized here, in any output format.  A DIR\n"
	       "operand means every raw measurement in it.\n"
	       "\n"
	       "  -o, --output OUT      output file or directory (required)\n"
	       "      --format F        output format (default gperftools; see bpfprof\n"
	       "                        --list-formats); not raw\n"
	       "      --plugin PATH.so  an output plugin by path\n"
	       "      --debug-dir DIR   look for binaries by build-id under DIR\n"
	       "      --sysroot DIR     the recording machine's files are under DIR\n"
	       "  -q, --quiet           no summary line\n"
	       "  -h, --help            this text\n");
}

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "bpfprof merge: %s%s%s; see bpfprof merge --help\n", msg,
		arg ? ": " : "", arg ? arg : "");
	return -EINVAL;
}

static int check(struct merge_options *o)
{
	if (o->help)
		return 0;
	if (!o->out.output)
		return bad("-o OUT is required", NULL);
	if (!o->nr_inputs)
		return bad("no measurement given (FILE or DIR)", NULL);
	if (o->out.format && o->out.plugin_path)
		return bad("--format and --plugin exclude each other", NULL);
	if (o->out.format && !strcmp(o->out.format, "raw"))
		return bad("merge writes profiles, not raw measurements", "--format raw");
	return 0;
}

int merge_options_parse(int argc, char **argv, struct merge_options *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->out.argc = argc;
	o->out.argv = argv;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qh", long_options, NULL)) != -1) {
		switch (c) {
		case 'o': o->out.output = optarg; break;
		case OPT_FORMAT: o->out.format = optarg; break;
		case OPT_PLUGIN: o->out.plugin_path = optarg; break;
		case OPT_UNTRUSTED: o->out.allow_untrusted_plugin = true; break;
		case OPT_DEBUG_DIR: o->debug_dir = optarg; break;
		case OPT_SYSROOT: o->sysroot = optarg; break;
		case 'q': o->out.quiet = true; break;
		case 'h': o->help = true; break;
		case ':': return bad("option needs an argument", argv[optind - 1]);
		default: return bad("unknown option", argv[optind - 1]);
		}
	}
	if (!o->out.format && !o->out.plugin_path)
		o->out.format = OPT_DEFAULT_FORMAT;
	o->inputs = argv + optind;
	o->nr_inputs = (size_t)(argc - optind);
	return check(o);
}
