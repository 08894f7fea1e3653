// SPDX-License-Identifier: BSD-2-Clause
/*
 * meta.c - writes meta.db (HPCToolkit v4.0 as hpcprof writes it: header
 * and footer (dbfile.c), General Properties, Identifier Names, Performance
 * Metrics, Common String Table, Load Modules, Source Files, Functions,
 * Context Tree) and metrics/default.yaml, without which hpcviewer refuses a database.
 * One function per on-disk structure, named after its spec section.  The
 * Context Tree is written while the tree is numbered (ctxIds in post
 * order, cct.c), in one pass over it.
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
 * 16-byte {flags u32, pad, pPath} entry; @a holds the paths' string offsets. */
static uint64_t write_path_array(struct bw *w, const uint32_t *a, uint32_t n, uint64_t strtab)
{
	uint64_t base = w->off;

	bw_u64(w, base + 0x10);
	bw_u32(w, n);
	bw_u16(w, 0x10);
	bw_align(w, 8);
	for (uint32_t i = 0; i < n; i++) {
		bw_u32(w, 0);
		bw_u32(w, 0);
		bw_u64(w, strtab + a[i]);
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
		const struct hpc_func *f = &t->funcs[i];

		bw_u64(w, f->name ? strtab + f->name - 1 : 0);
		bw_u64(w, pmodules + 0x10 * (uint64_t)f->module);
		bw_u64(w, f->offset);
		bw_u64(w, f->file >= 0 ? pfiles + 0x10 * (uint64_t)f->file : 0);
		bw_u32(w, f->file >= 0 ? f->line : 0);
		bw_u32(w, 0);
	}
	return w->off - base;
}

/* One {Ctx}: header, propagation bit 0 for lexical nesting, packed flex. */
void write_context(struct bw *w, const struct hpc_cct *t, uint32_t node, uint32_t parent,
		   uint32_t ctx, uint64_t pchildren, uint64_t szchildren, uint64_t pfuncs,
		   uint64_t pfiles, uint64_t pmodules)
{
	const struct hpc_node *n = &t->nodes[node];
	uint8_t rec[0x30] = { 0 }, flags = 0, lt = 0, words = 0;
	int32_t file;
	uint32_t line;

	switch (n->kind) {
	case HPC_FUNC: flags = 1; lt = 0; words = 1; break;
	case HPC_LINE: flags = 2; lt = 2; words = 2; break;
	case HPC_INSN: flags = 4; lt = 3; words = 2; break;
	}
	put_u64(rec, szchildren);
	put_u64(rec + 8, szchildren ? pchildren : 0);
	put_u32(rec + 0x10, ctx);
	rec[0x14] = flags;
	rec[0x15] = n->relation;
	rec[0x16] = lt;
	rec[0x17] = words;
	put_u16(rec + 0x18, n->relation == HPC_REL_LEXICAL ? 1 : 0);
	switch (n->kind) {
	case HPC_FUNC:
		put_u64(rec + 0x20, pfuncs + 0x28 * (uint64_t)n->a);
		break;
	case HPC_LINE:
		hpc_node_line(t, parent != HPC_NONE ? &t->nodes[parent] : NULL, n, &file, &line);
		put_u64(rec + 0x20, file >= 0 ? pfiles + 0x10 * (uint64_t)file : 0);
		put_u32(rec + 0x28, line);
		break;
	case HPC_INSN:
		put_u64(rec + 0x20, pmodules + 0x10 * (uint64_t)t->insns[n->a].module);
		put_u64(rec + 0x28, t->insns[n->a].offset);
		break;
	}
	bw_bytes(w, rec, 0x20 + 8 * words);
}

/* The context tree as it is numbered: each context's children array is
 * written when the context is finished (post order), from the records its
 * children left in pending[depth + 1]. */
struct tree_writer {
	struct bw *w;
	const struct hpc_cct *t;
	uint64_t strtab, pfuncs, pfiles, pmodules;
	struct bw *pending;		/* [depth]: records of finished children */
	uint32_t nr_pending;
	uint8_t entries[3][0x20];	/* the {Entry} records */
	uint32_t nr_entries;
};

static int pending_at(struct tree_writer *tw, uint32_t depth)
{
	while (tw->nr_pending <= depth) {
		struct bw *p = realloc(tw->pending, (tw->nr_pending + 16) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		tw->pending = p;
		for (int i = 0; i < 16; i++)
			bw_init_mem(&p[tw->nr_pending++]);
	}
	return 0;
}

static void entry_record(struct tree_writer *tw, const struct hpc_node *n, uint64_t pos,
			 uint64_t sz)
{
	uint64_t name = hpc_cct_find_string(tw->t, entry_names[n->a]);
	uint8_t *e = tw->entries[tw->nr_entries++];

	put_u64(e, sz);
	put_u64(e + 8, sz ? pos : 0);
	put_u32(e + 0x10, n->ctx);
	put_u16(e + 0x14, n->a);
	put_u16(e + 0x16, 0);
	put_u64(e + 0x18, name != UINT64_MAX ? tw->strtab + name : 0);
}

static int tree_visit(void *arg, const struct hpc_node *n, const struct hpc_node *parent,
		      uint32_t depth)
{
	struct tree_writer *tw = arg;
	struct bw *kids;
	uint64_t pos = tw->w->off, sz;

	if (pending_at(tw, depth + 1))
		return -ENOMEM;
	kids = &tw->pending[depth + 1];
	if (kids->err)
		return kids->err;
	sz = kids->len;
	bw_bytes(tw->w, kids->buf, kids->len);
	kids->len = kids->off = 0;
	if (depth == 0) {
		entry_record(tw, n, pos, sz);
		return 0;
	}
	write_context(&tw->pending[depth], tw->t, (uint32_t)(n - tw->t->nodes),
		      (uint32_t)(parent - tw->t->nodes), n->ctx, pos, sz, tw->pfuncs, tw->pfiles,
		      tw->pmodules);
	return tw->pending[depth].err ? tw->pending[depth].err : tw->w->err;
}

/*
 * Context Tree: header, the {Entry} array, then every context's children
 * array, in post order of the parents.
 */
uint64_t write_context_tree_section(struct bw *w, struct hpc_cct *t, uint32_t *shape,
				    uint64_t strtab, uint64_t pfuncs, uint64_t pfiles,
				    uint64_t pmodules)
{
	struct tree_writer tw = { .w = w, .t = t, .strtab = strtab, .pfuncs = pfuncs,
				  .pfiles = pfiles, .pmodules = pmodules };
	uint64_t base = w->off;
	uint32_t ne = 0;
	int err;

	for (int e = 0; e < 3; e++)
		ne += t->entry[e] != HPC_NONE;
	bw_u64(w, base + 0x10);			/* pEntryPoints */
	bw_u16(w, ne);
	bw_u8(w, 0x20);
	bw_align(w, 8);
	bw_zero(w, 0x20 * ne);			/* {Entry}, patched */
	err = hpc_cct_number(t, shape, tree_visit, &tw);
	if (!err && tw.nr_entries == ne)
		bw_patch(w, base + 0x10, tw.entries, 0x20 * ne);
	else if (!w->err)
		w->err = err ? err : -EINVAL;
	for (uint32_t i = 0; i < tw.nr_pending; i++)
		bw_free(&tw.pending[i]);
	free(tw.pending);
	return w->off - base;
}

int write_meta_db(int dir_fd, struct hpc_cct *t, uint32_t *shape,
		  const struct hpc_meta_info *info)
{
	uint64_t sec[16];	/* (sz, p) of General, IdNames, Metrics, Context,
				 * Strings, Modules, Files, Functions */
	struct hpc_db db;
	struct bw *w = &db.w;
	int err;

	err = hpc_db_create(&db, dir_fd, "meta.db", META_HDR_SIZE);
	if (err)
		return err;
	sec[1] = w->off;
	sec[0] = write_general_properties_section(w, info->title, info->description);
	bw_align(w, 8);
	sec[3] = w->off;
	sec[2] = write_identifier_names_section(w);
	bw_align(w, 8);
	sec[5] = w->off;
	sec[4] = write_performance_metrics_section(w, HPC_METRIC_NAME);
	bw_align(w, 8);
	sec[9] = w->off;
	sec[8] = write_common_string_table(w, t);
	bw_align(w, 8);
	sec[11] = w->off;
	sec[10] = write_load_modules_section(w, t, sec[9]);
	bw_align(w, 8);
	sec[13] = w->off;
	sec[12] = write_source_files_section(w, t, sec[9]);
	bw_align(w, 8);
	sec[15] = w->off;
	sec[14] = write_functions_section(w, t, sec[9], sec[11] + 0x10, sec[13] + 0x10);
	bw_align(w, 8);
	sec[7] = w->off;
	sec[6] = write_context_tree_section(w, t, shape, sec[9], sec[15] + 0x10,
					    sec[13] + 0x10, sec[11] + 0x10);
	return hpc_db_finish(&db, "meta", "_meta.db", sec, 8);
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
