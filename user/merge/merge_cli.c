// SPDX-License-Identifier: BSD-2-Clause
/*
 * merge/merge_cli.c - owns the command line of `bpfprof merge` (see
 * merge_cli.h): its getopt_long parser, its checks and its --help.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "merge/merge_cli.h"

enum { OPT_FORMAT = 256, OPT_PLUGIN, OPT_DEBUG_DIR, OPT_SYSROOT, OPT_UNTRUSTED, OPT_NO_DEMANGLE };

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "plugin", required_argument, NULL, OPT_PLUGIN },
	{ "allow-untrusted-plugin", no_argument, NULL, OPT_UNTRUSTED },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "sysroot", required_argument, NULL, OPT_SYSROOT },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void merge_usage(void)
{
	printf("usage: bpfprof merge -o OUT [--format F] [--debug-dir DIR]... [--sysroot DIR] FILE|DIR...\n"
	       "\n"
	       "Merge measurements written by `bpfprof --format raw` (one per node, or\n"
	       "several) into one profile, symbolized here, in any output format.  A DIR\n"
	       "operand means every raw measurement in it.\n"
	       "\n"
	       "  -o, --output OUT      output file or directory (required)\n"
	       "      --format F        output format (default gperftools; see bpfprof\n"
	       "                        --list-formats); not raw\n"
	       "      --plugin PATH.so  an output plugin by path\n"
	       "      --debug-dir DIR   look for binaries that moved under DIR: by build-id\n"
	       "                        (DIR/.build-id/xx/rest), DIR/PATH, DIR/NAME; may be\n"
	       "                        repeated; debuginfod too when DEBUGINFOD_URLS is set\n"
	       "      --sysroot DIR     the recording machine's files are under DIR\n"
	       "      --no-demangle     C++ and Rust function names as the symbol table has them\n"
	       "                        (default: demangled, as c++filt and perf print them)\n"
	       "  -q, --quiet           no summary line\n"
	       "  -h, --help            this text\n");
}

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "bpfprof merge: %s%s%s; see bpfprof merge --help\n", msg,
		arg ? ": " : "", arg ? arg : "");
	return -EINVAL;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return *path && !stat(path, &st) && S_ISDIR(st.st_mode);
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
	for (size_t i = 0; i < o->nr_debug_dirs; i++)
		if (!is_dir(o->debug_dirs[i]))
			return bad("--debug-dir is not a directory", o->debug_dirs[i]);
	if (o->sysroot && !is_dir(o->sysroot))
		return bad("--sysroot is not a directory", o->sysroot);
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
		case OPT_DEBUG_DIR:
			if (o->nr_debug_dirs == MERGE_MAX_DEBUG_DIRS)
				return bad("too many --debug-dir (at most 16)", optarg);
			o->debug_dirs[o->nr_debug_dirs++] = optarg;
			break;
		case OPT_SYSROOT: o->sysroot = optarg; break;
		case OPT_NO_DEMANGLE: o->out.no_demangle = true; break;
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
