// SPDX-License-Identifier: BSD-2-Clause
/*
 * options.c - owns bpfprof's command line (getopt_long), in the style of
 * `perf record`: -F, -c, -p, -t, -a, -C, -o, -d, --format, -- COMMAND, and
 * its --help.  It stores what the user typed after checking its range;
 * every mistake gets one line that says what was wrong and what to do.
 * What the kernel side makes of the values is user/kernel/settings.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof.h"
#include "kernel/cpus.h"
#include "kernel/settings.h"
#include "options.h"
#include "output_pattern.h"

enum long_only {
	OPT_FORMAT = 256,
	OPT_PLUGIN,
	OPT_LIST_FORMATS,
	OPT_VERSION,
	OPT_IDLE,
	OPT_MAX_STACK,
	OPT_STACK_MAP_SIZE,
	OPT_COUNT_MAP_SIZE,
	OPT_RINGBUF_SIZE,
	OPT_ALLOW_UNTRUSTED,
	OPT_CALL_GRAPH,
	OPT_UNWIND_MEMORY,
	OPT_CGROUP,
	OPT_NO_INTERPRETERS,
	OPT_NO_DEMANGLE,
	OPT_UNWIND_CACHE,
	OPT_NO_UNWIND_CACHE,
};

static const struct option long_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "all", no_argument, NULL, 'a' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "freq", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "plugin", required_argument, NULL, OPT_PLUGIN },
	{ "list-formats", no_argument, NULL, OPT_LIST_FORMATS },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "idle", no_argument, NULL, OPT_IDLE },
	{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
	{ "stack-map-size", required_argument, NULL, OPT_STACK_MAP_SIZE },
	{ "count-map-size", required_argument, NULL, OPT_COUNT_MAP_SIZE },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF_SIZE },
	{ "allow-untrusted-plugin", no_argument, NULL, OPT_ALLOW_UNTRUSTED },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "no-interpreters", no_argument, NULL, OPT_NO_INTERPRETERS },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "unwind-cache", required_argument, NULL, OPT_UNWIND_CACHE },
	{ "no-unwind-cache", no_argument, NULL, OPT_NO_UNWIND_CACHE },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};

void options_usage(void)
{
	printf("Usage: bpfprof [OPTIONS] {-p PID[,PID] | -t TID[,TID] | -a | -- COMMAND [ARGS]}\n"
	       "       bpfprof merge -o OUT [--format F] FILE|DIR...   (see bpfprof merge --help)\n"
	       "\n"
	       "Sample where CPU time goes with eBPF and write a profile.\n"
	       "\n"
	       "Targets:\n"
	       "  -p, --pid PID[,PID]     profile these processes (their threads and children)\n"
	       "  -t, --tid TID[,TID]     profile these threads only\n"
	       "  -a, --all               profile every process on every CPU\n"
	       "  -C, --cpu LIST          sample only on these CPUs (e.g. 0-3,6)\n"
	       "      --idle              with --all, keep samples of the idle task\n"
	       "      --cgroup PATH       only tasks in this cgroup and its descendants (implies\n"
	       "                          --all): a cgroup v2 directory, absolute or relative to\n"
	       "                          the cgroup2 mount (or a v1 one of freezer, cpuset, ...)\n"
	       "  -- COMMAND [ARGS]       run COMMAND, profile it and its children until it exits\n"
	       "\n"
	       "Sampling:\n"
	       "  -F, --freq HZ           samples per second per CPU (default %d)\n"
	       "  -c, --count PERIOD      sample every PERIOD ns of cpu-clock instead of -F\n"
	       "  -d, --duration SECONDS  stop after SECONDS (default: Ctrl-C or target exit)\n"
	       "  -g                      user stacks from frame pointers (--call-graph fp)\n"
	       "      --call-graph MODE   auto[,SIZE] (the default): the kernel side walks user\n"
	       "                          stacks with unwind tables built from each file's CFI,\n"
	       "                          and copies SIZE bytes of stack (default %d) of a\n"
	       "                          process in its first second, before its tables,\n"
	       "                          or through a function whose rows are not built yet;\n"
	       "                          fp: frame pointers; dwarf[,SIZE]: unwind with CFI\n"
	       "                          from SIZE bytes of stack copied per sample (default\n"
	       "                          %d, at most %d)\n"
	       "      --max-stack N       frames kept per stack (default %d): up to %d with fp,\n"
	       "                          up to %d user frames with auto and dwarf; kernel\n"
	       "                          stacks: %d (or kernel.perf_event_max_stack if lower)\n"
	       "      --stack-map-size N  distinct stacks the kernel map holds (default: 1 s of\n"
	       "                          samples on every CPU, 2 new stacks each, %d to %d)\n"
	       "      --count-map-size N  distinct (thread, stack) counts kept in the kernel\n"
	       "                          while the ring buffer is full (default: 2 s of\n"
	       "                          samples on every CPU, %d to %d)\n"
	       "      --ringbuf-size B    bytes of the sample ring buffer of timestamped formats\n"
	       "                          (default %u)\n"
	       "      --unwind-memory MIB kernel memory for auto's unwind tables (default 256)\n"
	       "      --unwind-cache DIR  keep auto's unwind tables and the function tables\n"
	       "                          named by build-id in DIR (default $XDG_CACHE_HOME\n"
	       "                          or ~/.cache, bpfprof/cfi)\n"
	       "      --no-unwind-cache   build every unwind and function table, keep none\n"
	       "      --no-interpreters   no Python functions in place of CPython's evaluator\n"
	       "                          frames (done by default with auto and fp)\n"
	       "\n"
	       "Output:\n"
	       "  -o, --output PATH       where to write (default: the format's own name); %%h in\n"
	       "                          PATH is the host name, %%p bpfprof's pid, %%%% a %%\n"
	       "      --format NAME       output format (default %s); see --list-formats\n"
	       "      --plugin PATH.so    load an output plugin from a file\n"
	       "      --list-formats      list the output formats and exit\n"
	       "      --allow-untrusted-plugin  load plugins not owned by root or writable by others\n"
	       "      --no-demangle       C++ and Rust function names as the symbol table has them\n"
	       "                          (default: demangled, as c++filt and perf print them)\n"
	       "  -q, --quiet             no summary on stderr\n"
	       "  -v, --verbose           more in the summary (unwind tables: memory, build time)\n"
	       "  -h, --help              this help\n"
	       "      --version           print the version\n",
	       OPT_DEFAULT_FREQ, OPT_DEFAULT_AUTO_STACK, OPT_DEFAULT_DWARF_STACK, BPFPROF_MAX_USER_STACK,
	       OPT_DEFAULT_MAX_STACK, BPFPROF_MAX_FP_DEPTH, BPFPROF_MAX_STACK_DEPTH,
	       BPFPROF_MAX_FP_DEPTH, SETTINGS_STACK_MAP_MIN, SETTINGS_STACK_MAP_MAX,
	       SETTINGS_COUNT_MAP_MIN, SETTINGS_COUNT_MAP_MAX,
	       OPT_DEFAULT_RINGBUF_SIZE, OPT_DEFAULT_FORMAT);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("bpfprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nUsage: bpfprof [OPTIONS] {-p PID[,PID] | -t TID[,TID] | -a | -- COMMAND [ARGS]}"
	      " (see bpfprof --help)\n", stderr);
	return -EINVAL;
}

/* A whole decimal number in [min, max]; 0 or -EINVAL. */
static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_id_list(const char *s, uint32_t **ids, size_t *nr)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		uint32_t *grown;

		if (parse_u64(tok, 1, INT_MAX, &v)) {
			err = -EINVAL;
			break;
		}
		grown = realloc(*ids, (*nr + 1) * sizeof(**ids));
		if (!grown) {
			err = -ENOMEM;
			break;
		}
		*ids = grown;
		(*ids)[(*nr)++] = (uint32_t)v;
	}
	if (!err && *nr == 0)
		err = -EINVAL;
	free(copy);
	return err;
}

/* --call-graph auto[,SIZE] | fp | dwarf[,SIZE] (SIZE: bytes, multiple of 8,
 * 64..65528; the default per mode: OPT_DEFAULT_AUTO_STACK, _DWARF_STACK) */
static int parse_call_graph(struct options *o, const char *arg)
{
	bool is_auto = !strncmp(arg, "auto", 4), is_dwarf = !strncmp(arg, "dwarf", 5);
	const char *size_arg = arg + (is_auto ? 4 : is_dwarf ? 5 : 0);
	uint64_t size = is_auto ? OPT_DEFAULT_AUTO_STACK : OPT_DEFAULT_DWARF_STACK;

	if (!strcmp(arg, "fp")) {
		o->call_graph = CALL_GRAPH_FP;
		return 0;
	}
	if ((!is_auto && !is_dwarf) || (*size_arg && *size_arg != ',') ||
	    (*size_arg == ',' && (parse_u64(size_arg + 1, 64, BPFPROF_MAX_USER_STACK, &size) ||
				  size % 8)))
		return usage_error("invalid --call-graph '%s': expected auto[,SIZE], fp or dwarf[,SIZE] "
				   "with SIZE a multiple of 8 from 64 to %d bytes", arg,
				   BPFPROF_MAX_USER_STACK);
	o->call_graph = is_auto ? CALL_GRAPH_AUTO : CALL_GRAPH_DWARF;
	o->dwarf_stack_size = (uint32_t)size;
	return 0;
}

static int set_targets(struct options *o, enum target_kind kind, const char *flag)
{
	if (o->targets != TARGETS_NONE && o->targets != kind)
		return usage_error("%s conflicts with another target option; choose one of "
				   "-p, -t, --all or -- COMMAND", flag);
	o->targets = kind;
	return 0;
}

/* The field of an option that takes no value and sets a flag, or NULL. */
static bool *flag_of(struct options *o, int c)
{
	switch (c) {
	case 'q': return &o->quiet;
	case 'v': return &o->verbose;
	case 'h': return &o->help;
	case OPT_LIST_FORMATS: return &o->list_formats;
	case OPT_VERSION: return &o->version;
	case OPT_IDLE: return &o->idle;
	case OPT_ALLOW_UNTRUSTED: return &o->allow_untrusted_plugin;
	case OPT_NO_INTERPRETERS: return &o->no_interpreters;
	case OPT_NO_DEMANGLE: return &o->no_demangle;
	case OPT_NO_UNWIND_CACHE: return &o->no_unwind_cache;
	default: return NULL;
	}
}

/* -p, -t, -a, -C: what is profiled, and where. */
static int parse_target(struct options *o, int c, const char *arg)
{
	if (c == 'a')
		return set_targets(o, TARGETS_ALL, "--all");
	if (c == 'C') {
		/* the last -C wins */
		free(o->cpus);
		o->cpus = NULL;
		o->nr_cpus = 0;
		if (parse_cpu_list(arg, &o->cpus, &o->nr_cpus))
			return usage_error("invalid CPU list '%s': expected numbers and ranges like 0-3,6",
					   arg);
		return 0;
	}
	if (set_targets(o, c == 'p' ? TARGETS_PIDS : TARGETS_TIDS, c == 'p' ? "-p" : "-t"))
		return -EINVAL;
	if (parse_id_list(arg, &o->ids, &o->nr_ids))
		return usage_error("invalid %s '%s': expected positive numeric %s, comma-separated",
				   c == 'p' ? "PID list" : "TID list", arg,
				   c == 'p' ? "process ids" : "thread ids");
	return 0;
}

/* -F, -c, -d: how often, and how long. */
static int parse_sampling(struct options *o, int c, const char *arg)
{
	uint64_t v;
	char *end;

	if (c == 'F') {
		if (parse_u64(arg, 1, OPT_MAX_FREQ, &v))
			return usage_error("invalid frequency '%s': expected a whole number of Hz from 1 "
					   "to %d (e.g. -F 99)", arg, OPT_MAX_FREQ);
		o->freq = v;
		o->period = 0;
		return 0;
	}
	if (c == 'c') {
		if (parse_u64(arg, 10000, UINT64_MAX / 2, &v))
			return usage_error("invalid period '%s': expected nanoseconds of cpu-clock, at "
					   "least 10000 (e.g. -c 1000000)", arg);
		o->period = v;
		o->freq = 0;
		return 0;
	}
	errno = 0;
	o->duration = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(o->duration) || o->duration <= 0 ||
	    o->duration > OPT_MAX_DURATION)
		return usage_error("invalid duration '%s': expected seconds greater than 0 and "
				   "at most %d (e.g. -d 10 or -d 0.5)", arg, OPT_MAX_DURATION);
	return 0;
}

/* --max-stack, --stack-map-size, --count-map-size, --ringbuf-size. */
static int parse_size(struct options *o, int c, const char *arg)
{
	uint64_t v;

	if (c == OPT_MAX_STACK) {
		if (parse_u64(arg, 1, BPFPROF_MAX_STACK_DEPTH, &v))
			return usage_error("invalid --max-stack '%s': expected 1 to %d frames (%d "
					   "with frame pointers)", arg, BPFPROF_MAX_STACK_DEPTH,
					   BPFPROF_MAX_FP_DEPTH);
		o->max_stack = (uint32_t)v;
		return 0;
	}
	if (c == OPT_UNWIND_MEMORY) {
		if (parse_u64(arg, 1, 1u << 20, &v))
			return usage_error("invalid --unwind-memory '%s': expected MiB of unwind tables "
					   "from 1 to 1048576", arg);
		o->unwind_memory = v << 20;
		return 0;
	}
	if (c == OPT_RINGBUF_SIZE) {
		if (parse_u64(arg, 4096, 1u << 30, &v) || (v & (v - 1)))
			return usage_error("invalid --ringbuf-size '%s': expected a power of two from "
					   "4096 to 1073741824 bytes", arg);
		o->ringbuf_size = (uint32_t)v;
		return 0;
	}
	if (parse_u64(arg, 64, 1u << 24, &v))
		return usage_error("invalid %s '%s': expected 64 to 16777216 entries",
				   c == OPT_STACK_MAP_SIZE ? "--stack-map-size" : "--count-map-size",
				   arg);
	*(c == OPT_STACK_MAP_SIZE ? &o->stack_map_size : &o->count_map_size) = (uint32_t)v;
	return 0;
}

/* -o PATH: its %h (host name), %p (our pid) and %% expanded. */
static int parse_output(struct options *o, const char *arg)
{
	char host[256] = "";
	const char *bad;
	int err;

	if (!*arg)
		return usage_error("empty output path: give -o a file name");
	if (gethostname(host, sizeof(host) - 1))
		host[0] = '\0';
	free(o->output_buf);
	o->output = NULL;
	err = output_pattern_expand(arg, host, (uint32_t)getpid(), &o->output_buf, &bad);
	if (err == -EINVAL && !bad[1])
		return usage_error("invalid -o '%s': a '%%' at its end (use %%h for the host name, "
				   "%%p for bpfprof's pid, %%%% for a %%)", arg);
	if (err == -EINVAL)
		return usage_error("invalid -o '%s': unknown '%%%c' (use %%h for the host name, "
				   "%%p for bpfprof's pid, %%%% for a %%)", arg, bad[1]);
	if (err)
		return usage_error("out of memory");
	o->output = o->output_buf;
	return 0;
}

static int parse_one(struct options *o, int c, const char *arg)
{
	bool *flag = flag_of(o, c);

	if (flag) {
		*flag = true;
		return 0;
	}
	switch (c) {
	case 'p': case 't': case 'a': case 'C':
		return parse_target(o, c, arg);
	case 'F': case 'c': case 'd':
		return parse_sampling(o, c, arg);
	case OPT_MAX_STACK: case OPT_STACK_MAP_SIZE: case OPT_COUNT_MAP_SIZE: case OPT_RINGBUF_SIZE:
	case OPT_UNWIND_MEMORY:
		return parse_size(o, c, arg);
	case 'o':
		return parse_output(o, arg);
	case OPT_FORMAT:
		o->format = arg;
		return 0;
	case OPT_PLUGIN:
		o->plugin_path = arg;
		return 0;
	case OPT_UNWIND_CACHE:
		if (arg[0] != '/')
			return usage_error("invalid --unwind-cache '%s': expected an absolute directory "
					   "path", arg);
		o->unwind_cache = arg;
		return 0;
	case OPT_CGROUP:
		if (!*arg)
			return usage_error("empty --cgroup: give a cgroup directory, e.g. "
					   "--cgroup system.slice/slurmstepd.scope/job_5");
		o->cgroup = arg;
		return 0;
	case 'g':
		o->call_graph = CALL_GRAPH_FP;
		return 0;
	case OPT_CALL_GRAPH:
		return parse_call_graph(o, arg);
	default:
		return -EINVAL;
	}
}

/*
 * --max-stack against the call-graph mode, whichever came first: the
 * kernel's frame-pointer walk (fp, -g) gives at most BPFPROF_MAX_FP_DEPTH
 * frames; stacks unwound from CFI (auto, dwarf) go deeper.
 */
static int check_max_stack(const struct options *o)
{
	if (o->call_graph != CALL_GRAPH_FP || o->max_stack <= BPFPROF_MAX_FP_DEPTH)
		return 0;
	return usage_error("--max-stack %u is above %d, the most frames of frame-pointer stacks "
			   "(-g, --call-graph fp); use --call-graph auto or dwarf for up to %d",
			   (unsigned)o->max_stack, BPFPROF_MAX_FP_DEPTH, BPFPROF_MAX_STACK_DEPTH);
}

int options_parse(int argc, char **argv, struct options *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->freq = OPT_DEFAULT_FREQ;
	o->format = OPT_DEFAULT_FORMAT;
	o->max_stack = OPT_DEFAULT_MAX_STACK;
	o->call_graph = CALL_GRAPH_AUTO;
	o->ringbuf_size = OPT_DEFAULT_RINGBUF_SIZE;
	o->dwarf_stack_size = OPT_DEFAULT_AUTO_STACK;
	o->argc = argc;
	o->argv = argv;

	optind = 0;	/* glibc: also forget state left by an earlier parse */
	opterr = 0;
	/* '+': stop at the first non-option, which starts the COMMAND. */
	while ((c = getopt_long(argc, argv, "+:p:t:aC:F:c:d:o:qvhg", long_options, NULL)) != -1) {
		if (c == '?') {
			if (optopt && optopt < 256)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (c == ':')
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		if (parse_one(o, c, optarg))
			return -EINVAL;
	}
	if (optind < argc) {
		if (set_targets(o, TARGETS_COMMAND, "-- COMMAND"))
			return -EINVAL;
		o->command = &argv[optind];
	}
	if (o->help || o->version || o->list_formats)
		return 0;
	if (o->cgroup && o->targets == TARGETS_NONE)
		o->targets = TARGETS_ALL;
	if (o->cgroup && o->targets != TARGETS_ALL)
		return usage_error("--cgroup goes with --all (every task of the cgroup), not with "
				   "-p, -t or -- COMMAND");
	if (o->targets == TARGETS_NONE)
		return usage_error("no target: give -p PID, -t TID, --all, or -- COMMAND");
	if (o->idle && o->targets != TARGETS_ALL)
		return usage_error("--idle only makes sense with --all");
	return check_max_stack(o);
}

void options_free(struct options *o)
{
	free(o->ids);
	free(o->cpus);
	free(o->output_buf);
	o->ids = NULL;
	o->cpus = NULL;
	o->output_buf = NULL;
	o->output = NULL;
}
