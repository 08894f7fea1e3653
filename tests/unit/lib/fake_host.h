/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fake_host.h - the one fake plugin host of the plugin unit tests: a
 * struct bpfprof_host (first member, so the plugin gets &fh->host) whose
 * services a test sets up and then inspects.
 *
 *  - error() and warn() are counted; the first message of each is kept
 *    (fh->error, fh->warning: "" if none); with fh->echo set they are also
 *    printed on stderr (for tests that run real tools on the output).
 *  - symbolize() clears the symbol, counts the call (fh->nr_calls) and
 *    answers from a table of exact (pid, ip, kernel) entries the test
 *    fills with fake_sym() (pid 0: any process), fake_func() and
 *    fake_kfunc(); an address in no entry is -ENOENT.  A test whose
 *    symbols follow a rule of its own (address ranges, real mappings)
 *    sets fh->resolve instead, which then answers every call.
 *  - stack() serves the stacks given to fake_host_stacks() (usually the
 *    test profile's), NULL past their end or before any were given.
 *  - companion() (abi_revision BPFPROF_PLUGIN_ABI_REVISION) opens a
 *    tmpfile() per call, recorded in fh->companions with the suffix and
 *    output it was asked for (fh->nr_companion_calls counts every call);
 *    fh->companion_rc set makes it fail with that.  A test of an older
 *    host sets fh->host.abi_revision = 0.  fake_host_close_companions()
 *    closes the files.
 *
 * Everything else is in the struct (no allocation): a fake_host may live
 * on the stack, and fake_host_init() resets it completely.
 */
#ifndef BPFPROF_TEST_FAKE_HOST_H
#define BPFPROF_TEST_FAKE_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpfprof/plugin.h"

#define FAKE_HOST_MAX_SYMS 4096
#define FAKE_HOST_MSG_SIZE 512
#define FAKE_HOST_MAX_COMPANIONS 4

/* One companion file a plugin asked for. */
struct fake_companion {
	char suffix[64];
	const struct bpfprof_output *out;	/* the output it was asked for */
	char path[256];			/* its path then (the output may be gone) */
	FILE *file;			/* a tmpfile(), read it back with rewind() */
};

/* What symbolize(pid, ip, kernel) answers: rc, and function and module. */
struct fake_sym {
	uint32_t pid;			/* 0: any process */
	uint64_t ip;
	int kernel;
	int rc;				/* 0 unless the test sets another */
	const char *function, *module;
};

struct fake_host;

/* A test's own symbolize(): @sym is already cleared. */
typedef int (*fake_resolve_fn)(struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
			       struct bpfprof_symbol *sym);

struct fake_host {
	struct bpfprof_host host;	/* first: the plugin gets &host */
	char error[FAKE_HOST_MSG_SIZE];	/* first error() message */
	int nr_errors;
	char warning[FAKE_HOST_MSG_SIZE]; /* first warn() message */
	int nr_warnings;
	int echo;			/* also print errors and warnings on stderr */
	size_t nr_calls;		/* symbolize() calls */
	fake_resolve_fn resolve;	/* NULL: answer from syms[] */
	const struct bpfprof_stack *stacks;	/* what stack() serves */
	size_t nr_stacks;
	struct fake_sym syms[FAKE_HOST_MAX_SYMS];
	size_t nr_syms;
	struct fake_companion companions[FAKE_HOST_MAX_COMPANIONS];
	size_t nr_companions;
	size_t nr_companion_calls;	/* companion() calls, failed ones too */
	int companion_rc;		/* nonzero: companion() returns it */
};

/* A host of the current ABI with every service, no symbols and no stacks. */
void fake_host_init(struct fake_host *fh);

/* @ip of process @pid (0: any) resolves to @function in @module (rc 0);
 * returns the entry, e.g. to set another rc. */
struct fake_sym *fake_sym(struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
			  const char *function, const char *module);

/* A user function of /usr/bin/prog at @ip: named @name as a leaf (at @ip)
 * and as a caller (at the return address @ip looked up at @ip - 1). */
void fake_func(struct fake_host *fh, uint64_t ip, const char *name);

/* The same for a kernel function of [kernel.kallsyms]. */
void fake_kfunc(struct fake_host *fh, uint64_t ip, const char *name);

/* Close the companion files (fclose) and forget them. */
void fake_host_close_companions(struct fake_host *fh);

/* stack(i) returns &@stacks[i] for i < @nr. */
void fake_host_stacks(struct fake_host *fh, const struct bpfprof_stack *stacks, size_t nr);

#endif /* BPFPROF_TEST_FAKE_HOST_H */
