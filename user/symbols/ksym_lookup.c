// SPDX-License-Identifier: BSD-2-Clause
/*
 * ksym_lookup.c - owns the kernel-symbol program of bpf/ksym.bpf.c: loading it
 * through its skeleton, running it on batches of addresses with
 * BPF_PROG_TEST_RUN (addresses in and "%pS" texts out through the
 * skeleton's mmapped .bss), and parsing those texts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ksym.skel.h"
#include "ksym_lookup.h"

struct ksym {
	struct ksym_bpf *skel;
};

int ksym_open(struct ksym **out)
{
	struct ksym *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return -ENOMEM;
	k->skel = ksym_bpf__open_and_load();
	if (!k->skel) {
		err = errno ? -errno : -EINVAL;
		free(k);
		return err;
	}
	*out = k;
	return 0;
}

/* One program run on @n <= KSYM_BATCH addresses. */
static int lookup_batch(struct ksym *k, const uint64_t *addrs, size_t n, struct ksym_symbol *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct ksym_bpf__bss *bss = k->skel->bss;

	memcpy(bss->addrs, addrs, n * sizeof(*addrs));
	bss->nr_addrs = (uint32_t)n;
	if (bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.ksym_lookup), &opts))
		return -errno;
	for (size_t i = 0; i < n; i++) {
		bss->names[i][KSYM_TEXT_LEN - 1] = '\0';
		ksym_parse(bss->names[i], addrs[i], &out[i]);
	}
	return 0;
}

int ksym_lookup(struct ksym *k, const uint64_t *addrs, size_t n, struct ksym_symbol *out)
{
	int err;

	if (!k || (n && (!addrs || !out)))
		return -EINVAL;
	for (size_t i = 0; i < n; i += KSYM_BATCH) {
		size_t m = n - i < KSYM_BATCH ? n - i : KSYM_BATCH;

		if ((err = lookup_batch(k, addrs + i, m, out + i)))
			return err;
	}
	return 0;
}

/* "[MODULE]" or "[MODULE BUILD-ID]" at @p: copy MODULE. */
static void parse_module(const char *p, struct ksym_symbol *out)
{
	size_t n = strcspn(p + 1, " ]");

	if (n >= sizeof(out->module))
		n = sizeof(out->module) - 1;
	memcpy(out->module, p + 1, n);
	out->module[n] = '\0';
}

void ksym_parse(const char *text, uint64_t addr, struct ksym_symbol *out)
{
	const char *mod = strstr(text, " [");
	size_t len = mod ? (size_t)(mod - text) : strlen(text);
	const char *plus = memrchr(text, '+', len);
	unsigned long long off, size;
	char *end;

	memset(out, 0, sizeof(*out));
	if (!plus || plus == text || strncmp(plus + 1, "0x", 2))
		return;
	off = strtoull(plus + 3, &end, 16);
	if (end == plus + 3 || strncmp(end, "/0x", 3))
		return;
	size = strtoull(end + 3, &end, 16);
	if (end != text + len || off > addr || (size_t)(plus - text) >= sizeof(out->name))
		return;
	memcpy(out->name, text, (size_t)(plus - text));
	out->name[plus - text] = '\0';
	out->start = addr - off;
	out->size = size;
	if (mod)
		parse_module(mod + 1, out);
	out->found = true;
}

void ksym_close(struct ksym *k)
{
	if (!k)
		return;
	ksym_bpf__destroy(k->skel);
	free(k);
}
