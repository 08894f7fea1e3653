/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * options.h - bpfprof's command line, parsed into struct options: what the
 * user typed (or the documented default), range-checked.  What the kernel
 * side makes of it (event period, map and ring buffer sizes) is derived in
 * user/kernel/settings.c.
 */
#ifndef BPFPROF_OPTIONS_H
#define BPFPROF_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Which tasks are profiled. */
enum target_kind {
	TARGETS_NONE = 0,	/* nothing chosen: an error unless --list-formats etc. */
	TARGETS_PIDS,		/* -p: processes (and the children they fork) */
	TARGETS_TIDS,		/* -t: threads */
	TARGETS_ALL,		/* -a/--all: every process on every CPU */
	TARGETS_COMMAND,	/* -- COMMAND ARGS: a command we start */
};

/* How user stacks are taken (--call-graph).  0 is fp, so that a zeroed
 * struct options keeps frame pointers; options_parse() defaults to auto. */
enum call_graph {
	CALL_GRAPH_FP = 0,	/* fp, -g: frame pointers (bpf_get_stack) */
	CALL_GRAPH_AUTO,	/* auto: the BPF program walks user stacks with unwind tables */
	CALL_GRAPH_DWARF,	/* dwarf[,SIZE]: userspace unwinds a copy of the stack */
};

/* What the user asked for.  Arrays are owned by the struct (options_free). */
struct options {
	enum target_kind targets;
	uint32_t *ids;			/* -p PIDs or -t TIDs */
	size_t nr_ids;
	char **command;			/* TARGETS_COMMAND: argv, NULL-terminated (points into argv) */
	int *cpus;			/* -C: CPUs to sample on; NULL = all online */
	size_t nr_cpus;
	uint64_t freq;			/* -F: Hz; 0 when -c is given */
	uint64_t period;		/* -c: ns of cpu-clock per sample; 0 with -F */
	double duration;		/* -d: seconds, 0 = until stopped */
	const char *output;		/* -o with its %h, %p, %% expanded (output_buf);
					 * NULL = the format's default */
	char *output_buf;		/* owned: the expanded -o */
	const char *format;		/* --format NAME */
	const char *plugin_path;	/* --plugin PATH.so */
	const char *cgroup;		/* --cgroup PATH: only this cgroup and below (with --all,
					 * which it implies); NULL = none */
	bool list_formats;
	bool help;
	bool version;
	bool idle;			/* --idle: keep the idle task in --all */
	bool quiet;			/* -q: no summary */
	bool verbose;			/* -v: more in the summary */
	uint64_t unwind_memory;		/* --unwind-memory: bytes of unwind tables; 0: default */
	bool allow_untrusted_plugin;
	bool no_interpreters;		/* --no-interpreters: no Python frames in stacks */
	bool no_demangle;		/* --no-demangle: mangled C++ names as they are */
	const char *unwind_cache;	/* --unwind-cache DIR (absolute); NULL: the default */
	bool no_unwind_cache;		/* --no-unwind-cache: no on-disk unwind tables */
	uint32_t max_stack;		/* --max-stack: frames per stack, 1..BPFPROF_MAX_FP_DEPTH
					 * in fp mode, ..BPFPROF_MAX_STACK_DEPTH in dwarf */
	uint32_t stack_map_size;	/* --stack-map-size: distinct stacks (slots); 0: sized by rate */
	uint32_t count_map_size;	/* --count-map-size: distinct (thread, stacks) pairs; 0: by rate */
	uint32_t ringbuf_size;		/* --ringbuf-size: bytes of the sample ring buffer, power of 2 */
	enum call_graph call_graph;	/* --call-graph, -g (options_parse(): CALL_GRAPH_AUTO) */
	uint32_t dwarf_stack_size;	/* --call-graph dwarf,SIZE or auto,SIZE: bytes of user
					 * stack copied per dwarf sample, or per copy of a young
					 * process's stack, 64..BPFPROF_MAX_USER_STACK */
	int argc;			/* the whole command line, for the output's metadata */
	char **argv;
};

/* Defaults of struct options. */
#define OPT_DEFAULT_FREQ 99
#define OPT_DEFAULT_FORMAT "gperftools"
#define OPT_DEFAULT_RINGBUF_SIZE (8u << 20)
#define OPT_DEFAULT_DWARF_STACK 8192	/* perf's default */
/* auto's copies of young processes' stacks: compilers (cc1, clang, rustc)
 * sit deeper than 8 KiB, most of their samples less than 32 KiB */
#define OPT_DEFAULT_AUTO_STACK 32768
#define OPT_DEFAULT_MAX_STACK 127	/* perf's default too */
/* Limits of -F (the kernel's perf_event_max_sample_rate may be lower) and
 * -d (seconds; 1e9 s in ns still fits the 64-bit deadline). */
#define OPT_MAX_FREQ 1000000
#define OPT_MAX_DURATION 1000000000

/*
 * Parse argv into *opts.  Returns 0, or -EINVAL after printing one line
 * "bpfprof: WHAT IS WRONG; WHAT TO DO" and a usage hint to stderr.
 */
int options_parse(int argc, char **argv, struct options *opts);

/* Free what options_parse() allocated (not argv). */
void options_free(struct options *opts);

/* Print the full --help text to stdout. */
void options_usage(void);

#endif /* BPFPROF_OPTIONS_H */
