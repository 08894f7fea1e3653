// SPDX-License-Identifier: BSD-2-Clause
/*
 * kernel_names.c - owns the symbolizer's kernel addresses (symbolize.h:
 * symbolizer_kernel(), symbolizer_load_kallsyms()): choosing where names
 * come from (a given kallsyms file, the kernel through BPF with
 * ksym_lookup.h, or /proc/kallsyms with kallsyms.h), the cache of what
 * the kernel said per address, and "[MODULE]" names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "ksym_lookup.h"
#include "symbolizer_impl.h"

void kernel_names_free(struct kernel_names *k)
{
	struct kernel_result *kr, *krtmp;

	kallsyms_free(k->kallsyms);
	ksym_close(k->ksym);
	HASH_ITER(hh, k->results, kr, krtmp) {
		HASH_DEL(k->results, kr);
		free(kr);
	}
}

int symbolizer_load_kallsyms(struct symbolizer *s, const char *path)
{
	if (!s || !path)
		return -EINVAL;
	if (s->kernel.kallsyms_tried || s->kernel.ksym_tried)
		return -EINVAL;	/* symbolizer_kernel() already chose a source */
	s->kernel.kallsyms_tried = true;
	return kallsyms_load(path, &s->kernel.kallsyms);
}

/* "[MODULE]" interned, or SYMBOLIZE_KERNEL_MODULE for NULL/"" (core kernel);
 * NULL if out of memory. */
static const char *kernel_module_name(struct symbolizer *s, const char *module)
{
	/* module names are short (MODULE_NAME_LEN is 56); a kallsyms file may not be */
	size_t n = module ? strlen(module) : 0;
	char small[128], *b;
	const char *name;

	if (!n)
		return SYMBOLIZE_KERNEL_MODULE;
	b = n + 3 <= sizeof(small) ? small : malloc(n + 3);
	if (!b)
		return NULL;
	b[0] = '[';
	memcpy(b + 1, module, n);
	b[n + 1] = ']';
	b[n + 2] = '\0';
	name = symbolizer_intern(s, b, n + 2);
	if (b != small)
		free(b);
	return name;
}

/* @ip named by the kernel (ksym_lookup), once per address. */
static int kernel_by_bpf(struct symbolizer *s, uint64_t ip, struct kernel_result **out)
{
	struct kernel_result *kr;
	struct ksym_symbol ks;
	int err;

	HASH_FIND(hh, s->kernel.results, &ip, sizeof(ip), kr);
	if (kr) {
		*out = kr;
		return 0;
	}
	if ((err = ksym_lookup(s->kernel.ksym, &ip, 1, &ks)))
		return err;
	kr = calloc(1, sizeof(*kr));
	if (!kr)
		return -ENOMEM;
	kr->ip = ip;
	if (ks.found) {
		kr->name = symbolizer_intern(s, ks.name, strlen(ks.name));
		kr->module = kernel_module_name(s, ks.module);
		kr->start = ks.start;
		if (!kr->name || !kr->module) {
			free(kr);
			return -ENOMEM;
		}
	}
	HASH_ADD(hh, s->kernel.results, ip, sizeof(ip), kr);
	*out = kr;
	return 0;
}

/* Which source names kernel addresses: a table given by
 * symbolizer_load_kallsyms(), else the kernel through BPF, else
 * /proc/kallsyms (loaded once). */
static void choose_kernel_source(struct symbolizer *s)
{
	if (s->kernel.kallsyms_tried || s->kernel.ksym_tried)
		return;
	s->kernel.ksym_tried = true;
	if (ksym_open(&s->kernel.ksym) == 0)
		return;
	s->kernel.ksym = NULL;
	s->kernel.kallsyms_tried = true;
	/* failure (e.g. no /proc) leaves the table NULL: nothing found */
	kallsyms_load("/proc/kallsyms", &s->kernel.kallsyms);
}

int symbolizer_kernel(struct symbolizer *s, uint64_t ip, struct bpfprof_symbol *sym)
{
	const char *name, *module = NULL;
	uint64_t start = 0;

	if (!s || !sym)
		return -EINVAL;
	memset(sym, 0, sizeof(*sym));
	choose_kernel_source(s);
	if (s->kernel.ksym) {
		struct kernel_result *kr;
		int err = kernel_by_bpf(s, ip, &kr);

		if (err)
			return err == -ENOMEM ? err : -ENOENT;
		if (!kr->name)
			return -ENOENT;
		sym->module = kr->module;
		sym->module_offset = ip;
		sym->function = kr->name;
		sym->function_start = kr->start;
		return 0;
	}
	name = kallsyms_lookup(s->kernel.kallsyms, ip, &start, &module);
	if (!name)
		return -ENOENT;
	sym->module = kernel_module_name(s, module);
	if (!sym->module)
		return -ENOMEM;
	sym->module_offset = ip;
	sym->function = name;
	sym->function_start = start;
	return 0;
}
