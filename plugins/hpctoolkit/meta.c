// SPDX-License-Identifier: BSD-2-Clause
/*
 * meta.c - writes meta.db (HPCToolkit v4.0 as hpcprof writes it: header,
 * General Properties, Identifier Names, Performance Metrics, Common String
 * Table, Load Modules, Source Files, Functions, Context Tree, footer) and
 * metrics/default.yaml, without which hpcviewer refuses a database.
 * One function per on-disk structure, named after its spec section.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hpc.h"

#define META_HDR_SIZE 0x90

static const char *const kind_names[8] = { "SUMMARY", "NODE", "RANK", "THREAD",
					   "GPUDEVICE", "GPUCONTEXT", "GPUSTREAM", "CORE" };
static const char *const entry_names[3] = { "unknown entry", "main thread",
					    "application thread" };

/* Common file structure: magic, format, version, then (sz, p) pairs. */
void write_file_header(struct bw *w, const char format[4], uint8_t minor,
		       const uint64_t *sections, int nr_sections)
{
	bw_bytes(w, "HPCTOOLKIT", 10);
	bw_bytes(w, format, 4);
	bw_u8(w, 4);
	bw_u8(w, minor);
	for (int i = 0; i < 2 * nr_sections; i++)
		bw_u64(w, sections[i]);
}

/* General Properties: pTitle, pDescription, then both strings. */
uint64_t write_general_properties_section(struct bw *w, const char *title,
					  const char *description)
{
	uint64_t base = w->off;

	bw_u64(w, base + 0x10);
	bw_u64(w, base + 0x10 + strlen(title) + 1);
	bw_str(w, title);
	bw_str(w, description);
	return w->off - base;
}

/* Hierarchical Identifier Names: ppNames, nKinds, the pointers, the names. */
uint64_t write_identifier_names_section(struct bw *w)
{
	uint64_t base = w->off, s = base + 0x10 + 8 * 8;

	bw_u64(w, base + 0x10);
	bw_u8(w, 8);
	bw_align(w, 8);
	for (int k = 0; k < 8; k++) {
		bw_u64(w, s);
		s += strlen(kind_names[k]) + 1;
	}
	for (int k = 0; k < 8; k++)
		bw_str(w, kind_names[k]);
	return w->off - base;
}

/*
 * Performance Metrics: one metric with the four scopes hpcprof writes
 * (point, function, lex_aware, execution), a scope instance and a "$$"/sum
 * summary for each; propMetricId = statMetricId = scope index.
 *   +0x00 header (0x1b, padded to 0x20)   +0x20 {PS}[4]   +0x60 {MD}
 *   +0x80 {PSI}[4]   +0xc0 {SS}[4]   +0x120 strings
 */
uint64_t write_performance_metrics_section(struct bw *w, const char *metric)
{
	static const char *const scope[HPC_NR_SCOPES] = { "point", "function", "lex_aware",
							  "execution" };
	static const uint8_t type[HPC_NR_SCOPES] = { 1, 3, 0, 2 };
	static const uint8_t pidx[HPC_NR_SCOPES] = { 255, 0, 255, 255 };
	uint64_t base = w->off, pscopes = base + 0x20, pmd = base + 0x60;
	uint64_t ppsi = base + 0x80, pss = base + 0xc0, str = base + 0x120;
	uint64_t name_off[HPC_NR_SCOPES], metric_off, formula_off;

	for (int i = 0; i < HPC_NR_SCOPES; i++) {
		name_off[i] = str;
		str += strlen(scope[i]) + 1;
	}
	metric_off = str;
	formula_off = metric_off + strlen(metric) + 1;

	bw_u64(w, pmd);			/* pMetrics */
	bw_u32(w, 1);			/* nMetrics */
	bw_u8(w, 0x20);			/* szMetric */
	bw_u8(w, 0x10);			/* szScopeInst */
	bw_u8(w, 0x18);			/* szSummary */
	bw_u8(w, 0);
	bw_u64(w, pscopes);		/* pScopes */
	bw_u16(w, HPC_NR_SCOPES);	/* nScopes */
	bw_u8(w, 0x10);			/* szScope */
	bw_align(w, 8);
	for (int i = 0; i < HPC_NR_SCOPES; i++) {	/* {PS} */
		bw_u64(w, name_off[i]);
		bw_u8(w, type[i]);
		bw_u8(w, pidx[i]);
		bw_zero(w, 6);
	}
	bw_u64(w, metric_off);		/* {MD} */
	bw_u64(w, ppsi);
	bw_u64(w, pss);
	bw_u16(w, HPC_NR_SCOPES);
	bw_u16(w, HPC_NR_SCOPES);
	bw_zero(w, 4);
	for (int i = 0; i < HPC_NR_SCOPES; i++) {	/* {PSI} */
		bw_u64(w, pscopes + 0x10 * i);
		bw_u16(w, i);
		bw_zero(w, 6);
	}
	for (int i = 0; i < HPC_NR_SCOPES; i++) {	/* {SS} */
		bw_u64(w, pscopes + 0x10 * i);
		bw_u64(w, formula_off);
		bw_u8(w, 0);		/* combine: sum */
		bw_u8(w, 0);
		bw_u16(w, i);		/* statMetricId */
		bw_zero(w, 4);
	}
	for (int i = 0; i < HPC_NR_SCOPES; i++)
		bw_str(w, scope[i]);
	bw_str(w, metric);
	bw_str(w, "$$");
	return w->off - base;
}

uint64_t write_common_string_table(struct bw *w, const struct hpc_cct *t)
{
	bw_bytes(w, t->strtab, t->strtab_len);
	return t->strtab_len;
}

/* Load Modules / Source Files share the (pArray, n, u16 size) header and a
 * 16-byte {flags u32, pad, pPath} entry. */
static uint64_t write_path_array(struct bw *w, struct hpc_str *const *a, uint32_t n,
				 uint64_t strtab)
{
	uint64_t base = w->off;

	bw_u64(w, base + 0x10);
	bw_u32(w, n);
	bw_u16(w, 0x10);
	bw_align(w, 8);
	for (uint32_t i = 0; i < n; i++) {
		bw_u32(w, 0);
		bw_u32(w, 0);
		bw_u64(w, strtab + a[i]->off);
	}
	return w->off - base;
}

uint64_t write_load_modules_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab)
{
	return write_path_array(w, t->modules, t->nr_modules, strtab);
}

uint64_t write_source_files_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab)
{
	return write_path_array(w, t->files, t->nr_files, strtab);
}

uint64_t write_functions_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab,
				 uint64_t pmodules, uint64_t pfiles)
{
	uint64_t base = w->off;

	bw_u64(w, base + 0x10);
	bw_u32(w, t->nr_funcs);
	bw_u16(w, 0x28);
	bw_align(w, 8);
	for (uint32_t i = 0; i < t->nr_funcs; i++) {
		const struct hpc_func *f = t->funcs[i];

		bw_u64(w, f->key.name_off_plus1 ? strtab + f->key.name_off_plus1 - 1 : 0);
		bw_u64(w, pmodules + 0x10 * f->key.module);
		bw_u64(w, f->key.offset);
		bw_u64(w, f->file >= 0 ? pfiles + 0x10 * (uint64_t)f->file : 0);
		bw_u32(w, f->file >= 0 ? f->line : 0);
		bw_u32(w, 0);
	}
	return w->off - base;
}

/* One {Ctx}: header, propagation bit 0 for lexical nesting, packed flex. */
void write_context(struct bw *w, const struct hpc_cct *t, uint32_t node, uint64_t pchildren,
		   uint64_t szchildren, uint64_t pfuncs, uint64_t pfiles, uint64_t pmodules)
{
	const struct hpc_node *n = &t->nodes[node];
	uint8_t flags = 0, lt = 0, words = 0;

	switch (n->kind) {
	case HPC_FUNC: flags = 1; lt = 0; words = 1; break;
	case HPC_LINE: flags = 2; lt = 2; words = 2; break;
	case HPC_INSN: flags = 4; lt = 3; words = 2; break;
	}
	bw_u64(w, szchildren);
	bw_u64(w, szchildren ? pchildren : 0);
	bw_u32(w, hpc_ctx_id(node));
	bw_u8(w, flags);
	bw_u8(w, n->relation);
	bw_u8(w, lt);
	bw_u8(w, words);
	bw_u16(w, n->relation == HPC_REL_LEXICAL ? 1 : 0);
	bw_zero(w, 6);
	switch (n->kind) {
	case HPC_FUNC:
		bw_u64(w, pfuncs + 0x28 * (uint64_t)n->a);
		break;
	case HPC_LINE:
		bw_u64(w, pfiles + 0x10 * (uint64_t)n->a);
		bw_u32(w, n->line);
		bw_u32(w, 0);
		break;
	case HPC_INSN:
		bw_u64(w, pmodules + 0x10 * (uint64_t)n->a);
		bw_u64(w, n->offset);
		break;
	}
}

static uint64_t children_size(const struct hpc_cct *t, uint32_t node)
{
	uint64_t sz = 0;

	for (uint32_t c = t->nodes[node].first_child; c != HPC_NONE; c = t->nodes[c].next_sibling)
		sz += hpc_ctx_size(&t->nodes[c]);
	return sz;
}

/*
 * Context Tree: header, the {Entry} array, then every node's children
 * array in breadth-first order (so each array's position is known before
 * its parent record is written).
 */
uint64_t write_context_tree_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab,
				    uint64_t pfuncs, uint64_t pfiles, uint64_t pmodules)
{
	uint64_t base = w->off, pos, *arr;
	uint32_t *queue, qn = 0, ne = 0;

	arr = calloc(t->nr_nodes ? t->nr_nodes : 1, sizeof(*arr));
	queue = calloc(t->nr_nodes ? t->nr_nodes : 1, sizeof(*queue));
	if (!arr || !queue) {
		free(arr);
		free(queue);
		if (!w->err)
			w->err = -ENOMEM;
		return 0;
	}
	for (int e = 0; e < 3; e++)
		if (t->entry[e] != HPC_NONE)
			queue[qn++] = t->entry[e];
	ne = qn;
	pos = base + 0x10 + 0x20 * ne;
	for (uint32_t i = 0; i < qn; i++) {	/* lay out the children arrays */
		uint32_t node = queue[i];

		arr[node] = pos;
		pos += children_size(t, node);
		for (uint32_t c = t->nodes[node].first_child; c != HPC_NONE;
		     c = t->nodes[c].next_sibling)
			queue[qn++] = c;
	}
	bw_u64(w, base + 0x10);			/* pEntryPoints */
	bw_u16(w, ne);
	bw_u8(w, 0x20);
	bw_align(w, 8);
	for (uint32_t i = 0; i < ne; i++) {	/* {Entry} */
		const struct hpc_node *n = &t->nodes[queue[i]];
		uint64_t sz = children_size(t, queue[i]);
		struct hpc_str *s;

		HASH_FIND_STR(t->strings, entry_names[n->entry], s);
		bw_u64(w, sz);
		bw_u64(w, sz ? arr[queue[i]] : 0);
		bw_u32(w, hpc_ctx_id(queue[i]));
		bw_u16(w, n->entry);
		bw_u16(w, 0);
		bw_u64(w, s ? strtab + s->off : 0);
	}
	for (uint32_t i = 0; i < qn; i++)
		for (uint32_t c = t->nodes[queue[i]].first_child; c != HPC_NONE;
		     c = t->nodes[c].next_sibling)
			write_context(w, t, c, arr[c], children_size(t, c), pfuncs, pfiles,
				      pmodules);
	free(arr);
	free(queue);
	return w->off - base;
}

int write_meta_db(int dir_fd, const struct hpc_cct *t, const struct hpc_meta_info *info)
{
	uint64_t sec[16];	/* (sz, p) of General, IdNames, Metrics, Context,
				 * Strings, Modules, Files, Functions */
	struct bw w, h;
	int fd, err;

	fd = openat(dir_fd, "meta.db", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (bw_init_fd(&w, fd)) {
		close(fd);
		return -ENOMEM;
	}
	bw_zero(&w, META_HDR_SIZE);
	sec[1] = w.off;
	sec[0] = write_general_properties_section(&w, info->title, info->description);
	bw_align(&w, 8);
	sec[3] = w.off;
	sec[2] = write_identifier_names_section(&w);
	bw_align(&w, 8);
	sec[5] = w.off;
	sec[4] = write_performance_metrics_section(&w, HPC_METRIC_NAME);
	bw_align(&w, 8);
	sec[9] = w.off;
	sec[8] = write_common_string_table(&w, t);
	bw_align(&w, 8);
	sec[11] = w.off;
	sec[10] = write_load_modules_section(&w, t, sec[9]);
	bw_align(&w, 8);
	sec[13] = w.off;
	sec[12] = write_source_files_section(&w, t, sec[9]);
	bw_align(&w, 8);
	sec[15] = w.off;
	sec[14] = write_functions_section(&w, t, sec[9], sec[11] + 0x10, sec[13] + 0x10);
	bw_align(&w, 8);
	sec[7] = w.off;
	sec[6] = write_context_tree_section(&w, t, sec[9], sec[15] + 0x10, sec[13] + 0x10,
					    sec[11] + 0x10);
	bw_bytes(&w, "_meta.db", 8);
	bw_init_mem(&h);
	write_file_header(&h, "meta", 0, sec, 8);
	if (h.err || h.len != META_HDR_SIZE)
		w.err = w.err ? w.err : -ENOMEM;
	else
		bw_patch(&w, 0, h.buf, h.len);
	bw_free(&h);
	err = bw_finish(&w);
	bw_free(&w);
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

/* metrics/default.yaml: CPUTIME (sec) inclusive = execution, exclusive =
 * function (standard) and lex_aware (custom), as hpcprof writes it. */
int write_metrics_yaml(int dir_fd)
{
	static const char yaml[] =
		"version: 0\n"
		"inputs:\n"
		"  - &CPUTIMEx20_x28_secx29_-sum-x5b_0x0x5d_-execution\n"
		"    metric: " HPC_METRIC_NAME "\n"
		"    scope: execution\n"
		"    formula: $$\n"
		"    combine: sum\n"
		"  - &CPUTIMEx20_x28_secx29_-sum-x5b_0x0x5d_-lex_aware\n"
		"    metric: " HPC_METRIC_NAME "\n"
		"    scope: lex_aware\n"
		"    formula: $$\n"
		"    combine: sum\n"
		"  - &CPUTIMEx20_x28_secx29_-sum-x5b_0x0x5d_-function\n"
		"    metric: " HPC_METRIC_NAME "\n"
		"    scope: function\n"
		"    formula: $$\n"
		"    combine: sum\n"
		"roots:\n"
		"  - name: " HPC_METRIC_NAME "\n"
		"    description: CPU time, from samples x sampling period (bpfprof)\n"
		"    variants:\n"
		"      Sum:\n"
		"        render: [number, percent]\n"
		"        formula:\n"
		"          inclusive:\n"
		"            standard: *CPUTIMEx20_x28_secx29_-sum-x5b_0x0x5d_-execution\n"
		"          exclusive:\n"
		"            custom: *CPUTIMEx20_x28_secx29_-sum-x5b_0x0x5d_-lex_aware\n"
		"            standard: *CPUTIMEx20_x28_secx29_-sum-x5b_0x0x5d_-function\n";
	size_t done = 0, n = sizeof(yaml) - 1;
	int fd, err = 0;

	if (mkdirat(dir_fd, "metrics", 0755) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(dir_fd, "metrics/default.yaml", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return -errno;
	while (done < n) {
		ssize_t r = write(fd, yaml + done, n - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		done += r;
	}
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}
