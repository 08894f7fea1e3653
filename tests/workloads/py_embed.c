// SPDX-License-Identifier: BSD-2-Clause
/*
 * py_embed - a native program that starts running Python late, as programs
 * that embed CPython do (editors, debuggers, 3D tools, game engines): after
 * DELAY CPU seconds in its own code it dlopen()s a libpython, starts the
 * interpreter and runs a script in it, then exits.
 *
 * This file owns the workload of tests/integration/python_embedded.sh: the
 * BPF program notes, per CPU, a process it found without an interpreter,
 * and its samples skip the look-up until the collector writes an
 * interpreter's entry (bpf/python.bpf.h, py_process_of()).  This process
 * is such a process for DELAY seconds, then runs Python on the same CPUs:
 * a note that outlived the interpreter's entry would leave every later
 * sample with evaluator frames instead of Python functions.  On the main
 * thread:
 *
 *   main -> run_warmup -> embed_warmup -> sink        DELAY CPU seconds
 *   dlopen(LIBPYTHON); Py_InitializeEx(0)
 *   main -> run_python -> PyRun_SimpleString -> ... the script's frames
 *
 * The libpython is opened by path and its functions found with dlsym(), so
 * no Python headers are needed to build this.
 *
 * Usage: py_embed [-d DELAY] LIBPYTHON SCRIPT [ARG...]
 *   -d DELAY   CPU seconds in embed_warmup first (default 1)
 * The script runs as __main__ with sys.argv = [SCRIPT, ARG...].
 * Exit status: the script's (1 if it raised), 2 for bad usage or a
 * libpython that cannot be loaded.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "groundtruth.h"

/* Chunks between two reads of the CPU clock (a system call). */
#define PHASE_CHECK 64

SINK_FUNCTION(sink)

LCG_LEAF(embed_warmup)

/* embed_warmup() in chunks for @seconds of this thread's CPU time. */
NOIPA uint64_t run_warmup(double seconds)
{
	uint64_t rnd = RANDOM_SEED(7), x = 7;
	double end = now(CLOCK_THREAD_CPUTIME_ID) + seconds;

	do {
		for (int i = 0; i < PHASE_CHECK; i++)
			x = embed_warmup(x, CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX));
	} while (now(CLOCK_THREAD_CPUTIME_ID) < end);
	return x + 1;
}

/* Appends @s to the Python string literal being built in @buf (@len used,
 * @size in all) with its quotes and backslashes escaped: 0, or -1 when it
 * does not fit. */
static int append_literal(char *buf, size_t size, size_t *len, const char *s)
{
	if (*len + 1 >= size)
		return -1;
	buf[(*len)++] = '\'';
	for (; *s; s++) {
		if (*len + 3 >= size)
			return -1;
		if (*s == '\'' || *s == '\\')
			buf[(*len)++] = '\\';
		buf[(*len)++] = *s;
	}
	buf[(*len)++] = '\'';
	buf[*len] = '\0';
	return 0;
}

/* The statement that runs @argv[0] as __main__ with sys.argv = @argv (@argc
 * entries) into @buf: 0, or -1 when it does not fit. */
static int python_statement(char *buf, size_t size, int argc, char **argv)
{
	size_t len = (size_t)snprintf(buf, size, "import sys, runpy\nsys.argv = [");

	for (int i = 0; i < argc; i++) {
		if (append_literal(buf, size, &len, argv[i]) || len + 2 >= size)
			return -1;
		buf[len++] = ',';
		buf[len] = '\0';
	}
	len += (size_t)snprintf(buf + len, size - len,
				"]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n");
	return len < size ? 0 : -1;
}

/* Loads @lib and runs @stmt in a new interpreter: the statement's status,
 * or 2 when the library or its functions are missing. */
NOIPA int run_python(const char *lib, const char *stmt)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	void (*init)(int);
	int (*run)(const char *);
	int (*fini)(void);
	int status;

	if (!h) {
		fprintf(stderr, "py_embed: cannot load %s: %s\n", lib, dlerror());
		return 2;
	}
	*(void **)&init = dlsym(h, "Py_InitializeEx");
	*(void **)&run = dlsym(h, "PyRun_SimpleString");
	*(void **)&fini = dlsym(h, "Py_FinalizeEx");
	if (!init || !run || !fini) {
		fprintf(stderr, "py_embed: %s is not a libpython (no Py_InitializeEx, "
			"PyRun_SimpleString or Py_FinalizeEx)\n", lib);
		return 2;
	}
	init(0);
	status = run(stmt) ? 1 : 0;
	fini();
	return status;
}

static void usage(void)
{
	fprintf(stderr, "usage: py_embed [-d DELAY] LIBPYTHON SCRIPT [ARG...]\n");
	exit(2);
}

/* In .text, not .text.startup: see shares.c. */
__attribute__((section(".text"))) int main(int argc, char **argv)
{
	static char stmt[8192];
	double delay = 1.0;
	int i = 1;

	if (i + 1 < argc && !strcmp(argv[i], "-d")) {
		char *end;

		delay = strtod(argv[i + 1], &end);
		if (*end || delay < 0)
			usage();
		i += 2;
	}
	if (argc - i < 2)
		usage();
	if (python_statement(stmt, sizeof(stmt), argc - i - 1, argv + i + 1)) {
		fprintf(stderr, "py_embed: arguments too long\n");
		return 2;
	}
	result_sink = run_warmup(delay);
	return run_python(argv[i], stmt);
}
