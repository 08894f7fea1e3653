// SPDX-License-Identifier: BSD-2-Clause
/*
 * fake_host.c - the fake plugin host of the plugin unit tests (see
 * fake_host.h): recorded errors and warnings, a symbol table or a test's
 * own resolver, the stacks of a test profile, and companion files.
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

static int fake_companion(const struct bpfprof_host *host, const struct bpfprof_output *out,
			  const char *suffix, FILE **file)
{
	struct fake_host *fh = fake_of(host);
	struct fake_companion *c;

	fh->nr_companion_calls++;
	*file = NULL;
	if (fh->companion_rc)
		return fh->companion_rc;
	if (!out || !suffix || !*suffix || strlen(suffix) >= sizeof(c->suffix) ||
	    strchr(suffix, '/'))
		return -EINVAL;
	for (size_t i = 0; i < fh->nr_companions; i++)
		if (fh->companions[i].out == out && !strcmp(fh->companions[i].suffix, suffix))
			return -EEXIST;
	if (fh->nr_companions == FAKE_HOST_MAX_COMPANIONS)
		return -EMFILE;
	c = &fh->companions[fh->nr_companions];
	c->file = tmpfile();
	if (!c->file)
		return -errno;
	strcpy(c->suffix, suffix);
	snprintf(c->path, sizeof(c->path), "%s", out->path ? out->path : "");
	c->out = out;
	fh->nr_companions++;
	*file = c->file;
	return 0;
}

void fake_host_close_companions(struct fake_host *fh)
{
	for (size_t i = 0; i < fh->nr_companions; i++)
		fclose(fh->companions[i].file);
	memset(fh->companions, 0, sizeof(fh->companions));
	fh->nr_companions = 0;
}

void fake_host_init(struct fake_host *fh)
{
	memset(fh, 0, sizeof(*fh));
	fh->host.abi_version = BPFPROF_PLUGIN_ABI_VERSION;
	fh->host.abi_revision = BPFPROF_PLUGIN_ABI_REVISION;
	fh->host.companion = fake_companion;
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
