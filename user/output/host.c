// SPDX-License-Identifier: BSD-2-Clause
/*
 * host.c - implements struct bpfprof_host (see host.h and plugin.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "interp/interp.h"
#include "output.h"
#include "profile/profile.h"
#include "symbols/perfmap.h"
#include "symbols/symbolize.h"

static struct host *host_of(const struct bpfprof_host *api)
{
	return (struct host *)api->priv;
}

/*
 * JIT code: an address in anonymous executable memory that the process's
 * perf map names gets that map as its module (perf's name for it,
 * "/tmp/perf-PID.map"), its own address as the offset, and the name.
 */
static void jit_symbol(struct proc *proc, uint64_t ip, struct bpfprof_symbol *sym)
{
	const struct perfmap_entry *e;

	if (sym->function || !sym->mapping ||
	    !perfmap_covers_mapping(sym->mapping->path, sym->mapping->prot))
		return;
	e = proc_jit_symbol(proc, ip);
	if (!e)
		return;
	sym->module = perfmap_name(proc->perfmap);
	sym->module_offset = ip;
	sym->function = e->name;
	sym->function_start = e->sym_start;
}

static int host_symbolize(const struct bpfprof_host *api, uint32_t pid, uint64_t ip, int kernel,
			  struct bpfprof_symbol *sym)
{
	struct host *h = host_of(api);
	struct proc *proc;
	int err;

	memset(sym, 0, sizeof(*sym));
	if (h->resolve)
		return h->resolve(h->resolve_ctx, pid, ip, kernel, sym);
	if (kernel)
		return symbolizer_kernel(h->symbolizer, ip, sym);
	if (h->interp && interp_is_frame(ip))
		return interp_symbolize(h->interp, pid, ip, sym);
	proc = profile_find_proc(h->profile, pid);
	if (!proc)
		return -ENOENT;
	err = symbolizer_user(h->symbolizer, pid, proc->maps, proc->nr_maps, ip, sym);
	if (!err)
		jit_symbol(proc, ip, sym);
	return err;
}

static const struct bpfprof_stack *host_stack(const struct bpfprof_host *api, uint32_t index)
{
	return profile_stack(host_of(api)->profile, index);
}

static void host_error(const struct bpfprof_host *api, const char *fmt, ...)
{
	struct host *h = host_of(api);
	va_list ap;

	if (h->error)
		return;
	va_start(ap, fmt);
	if (vasprintf(&h->error, fmt, ap) < 0)
		h->error = NULL;
	va_end(ap);
}

/* The host names the plugin; a message that names it too loses that prefix. */
static const char *without_name(const struct host *h, const char *msg)
{
	size_t n = strlen(h->plugin_name);

	if (!strncmp(msg, h->plugin_name, n) && msg[n] == ':' && msg[n + 1] == ' ')
		return msg + n + 2;
	return msg;
}

/* Counts one more warning of kind @fmt; false when it should not print. */
static bool warning_shown(struct host *h, const char *fmt)
{
	for (int i = 0; i < HOST_WARNING_KINDS; i++) {
		struct host_warning *w = &h->warnings[i];

		if (!w->fmt)
			w->fmt = fmt;
		if (w->fmt == fmt)
			return ++w->count <= HOST_WARNINGS_SHOWN;
	}
	return true;
}

static void host_warn(const struct bpfprof_host *api, const char *fmt, ...)
{
	struct host *h = host_of(api);
	char *msg = NULL;
	va_list ap;

	if (!warning_shown(h, fmt))
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	fprintf(stderr, "bpfprof: warning: %s: %s\n", h->plugin_name,
		msg ? without_name(h, msg) : fmt);
	free(msg);
}

/* abi_revision took padding of earlier hosts: no member moved. */
_Static_assert(offsetof(struct bpfprof_host, symbolize) == 8,
	       "struct bpfprof_host: abi_revision must fill the padding after abi_version");

/* A companion file of the output the plugin has open (plugin.h). */
static int host_companion(const struct bpfprof_host *api, const struct bpfprof_output *out,
			  const char *suffix, FILE **file)
{
	struct host *h = host_of(api);

	if (file)
		*file = NULL;
	if (!file || !h->output || !out || out != h->plugin_out)
		return -EINVAL;
	return output_add_companion(h->output, suffix, file);
}

void host_set_output(struct host *h, struct output *o, const struct bpfprof_output *plugin_out)
{
	h->output = o;
	h->plugin_out = o ? plugin_out : NULL;
}

void host_init(struct host *h, struct profile *profile, struct symbolizer *sym,
	       const char *plugin_name)
{
	memset(h, 0, sizeof(*h));
	h->api.abi_version = BPFPROF_PLUGIN_ABI_VERSION;
	h->api.abi_revision = BPFPROF_PLUGIN_ABI_REVISION;
	h->api.companion = host_companion;
	h->api.symbolize = host_symbolize;
	h->api.stack = host_stack;
	h->api.error = host_error;
	h->api.warn = host_warn;
	h->api.priv = h;
	h->profile = profile;
	h->symbolizer = sym;
	h->plugin_name = plugin_name;
}

void host_flush_warnings(struct host *h)
{
	for (int i = 0; i < HOST_WARNING_KINDS && h->warnings[i].fmt; i++)
		if (h->warnings[i].count > HOST_WARNINGS_SHOWN)
			fprintf(stderr, "bpfprof: warning: %s: %u more like the above\n",
				h->plugin_name, h->warnings[i].count - HOST_WARNINGS_SHOWN);
	memset(h->warnings, 0, sizeof(h->warnings));
}

void host_fini(struct host *h)
{
	if (h->plugin_name)
		host_flush_warnings(h);
	free(h->error);
	h->error = NULL;
}

void host_report_failure(struct host *h, const char *what, int err)
{
	fprintf(stderr, "bpfprof: %s plugin failed to %s: %s\n", h->plugin_name, what,
		h->error ? without_name(h, h->error) : strerror(err < 0 ? -err : EIO));
	free(h->error);
	h->error = NULL;
}
