// SPDX-License-Identifier: BSD-2-Clause
/*
 * fake_host.c - the fake plugin host of the plugin unit tests (see
 * fake_host.h): recorded errors and warnings, a symbol table or a test's
 * own resolver, and the stacks of a test profile.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_host.h"

static struct fake_host *fake_of(const struct bpfprof_host *host)
{
	return (struct fake_host *)host;
}

/* Count a message, keep the first in @buf, print it with @echo. */
static void record(int *count, char *buf, int echo, const char *prefix, const char *fmt,
		   va_list ap)
{
	va_list copy;

	if (echo) {
		va_copy(copy, ap);
		fputs(prefix, stderr);
		vfprintf(stderr, fmt, copy);
		fputc('\n', stderr);
		va_end(copy);
	}
	if ((*count)++ == 0)
		vsnprintf(buf, FAKE_HOST_MSG_SIZE, fmt, ap);
}

static void fake_error(const struct bpfprof_host *host, const char *fmt, ...)
{
	struct fake_host *fh = fake_of(host);
	va_list ap;

	va_start(ap, fmt);
	record(&fh->nr_errors, fh->error, fh->echo, "error: ", fmt, ap);
	va_end(ap);
}

static void fake_warn(const struct bpfprof_host *host, const char *fmt, ...)
{
	struct fake_host *fh = fake_of(host);
	va_list ap;

	va_start(ap, fmt);
	record(&fh->nr_warnings, fh->warning, fh->echo, "warning: ", fmt, ap);
	va_end(ap);
}

static int fake_symbolize(const struct bpfprof_host *host, uint32_t pid, uint64_t ip,
			  int kernel, struct bpfprof_symbol *sym)
{
	struct fake_host *fh = fake_of(host);

	fh->nr_calls++;
	memset(sym, 0, sizeof(*sym));
	if (fh->resolve)
		return fh->resolve(fh, pid, ip, kernel, sym);
	for (size_t i = 0; i < fh->nr_syms; i++) {
		const struct fake_sym *s = &fh->syms[i];

		if (s->ip == ip && !!s->kernel == !!kernel && (!s->pid || s->pid == pid)) {
			sym->function = s->function;
			sym->module = s->module;
			return s->rc;
		}
	}
	return -ENOENT;
}

static const struct bpfprof_stack *fake_stack(const struct bpfprof_host *host, uint32_t index)
{
	struct fake_host *fh = fake_of(host);

	return index < fh->nr_stacks ? &fh->stacks[index] : NULL;
}

void fake_host_init(struct fake_host *fh)
{
	memset(fh, 0, sizeof(*fh));
	fh->host.abi_version = BPFPROF_PLUGIN_ABI_VERSION;
	fh->host.symbolize = fake_symbolize;
	fh->host.stack = fake_stack;
	fh->host.error = fake_error;
	fh->host.warn = fake_warn;
}

struct fake_sym *fake_sym(struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
			  const char *function, const char *module)
{
	struct fake_sym *s;

	assert_true(fh->nr_syms < FAKE_HOST_MAX_SYMS);
	s = &fh->syms[fh->nr_syms++];
	*s = (struct fake_sym){ .pid = pid, .ip = ip, .kernel = kernel, .function = function,
				.module = module };
	return s;
}

void fake_func(struct fake_host *fh, uint64_t ip, const char *name)
{
	fake_sym(fh, 0, ip, 0, name, "/usr/bin/prog");
	fake_sym(fh, 0, ip - 1, 0, name, "/usr/bin/prog");
}

void fake_kfunc(struct fake_host *fh, uint64_t ip, const char *name)
{
	fake_sym(fh, 0, ip, 1, name, "[kernel.kallsyms]");
	fake_sym(fh, 0, ip - 1, 1, name, "[kernel.kallsyms]");
}

void fake_host_stacks(struct fake_host *fh, const struct bpfprof_stack *stacks, size_t nr)
{
	fh->stacks = stacks;
	fh->nr_stacks = nr;
}
