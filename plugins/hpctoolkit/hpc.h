/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hpc.h - internal interfaces of the HPCToolkit v4 database plugin: the
 * binary writer (bw.c), the calling context tree builder (cct.c) and the
 * writers of meta.db (meta.c), profile.db (profile_db.c), cct.db
 * (cct_db.c), trace.db (trace_db.c) and metrics/default.yaml (meta.c).
 *
 * Layout: hpctoolkit-formats-v4.0.md as corrected by
 * hpctoolkit-v4-as-written.md (what hpcprof writes, what hpcviewer reads).
 */
#ifndef BPFPROF_HPC_H
#define BPFPROF_HPC_H

#include <stddef.h>
#include <stdint.h>

#include <uthash.h>

#include "bpfprof/plugin.h"

/* ---- bw.c: little-endian writer to a file descriptor or to memory ------ */
struct bw {
	int fd;			/* -1: write to mem */
	uint64_t off;		/* absolute offset of the next byte */
	uint8_t *buf;		/* file: pending bytes; mem: the whole output */
	size_t len, cap;	/* bytes in buf, allocated */
	uint64_t buf_off;	/* file: offset of buf[0] */
	int err;		/* first error (negative errno) */
};

int bw_init_fd(struct bw *w, int fd);
void bw_init_mem(struct bw *w);
void bw_bytes(struct bw *w, const void *p, size_t n);
void bw_u8(struct bw *w, uint8_t v);
void bw_u16(struct bw *w, uint16_t v);
void bw_u32(struct bw *w, uint32_t v);
void bw_u64(struct bw *w, uint64_t v);
void bw_f64(struct bw *w, double v);
void bw_str(struct bw *w, const char *s);	/* with its NUL */
void bw_zero(struct bw *w, uint64_t n);
void bw_align(struct bw *w, unsigned a);	/* zero padding */
void bw_seek(struct bw *w, uint64_t off);	/* forward only; zero-fills (mem) */
void bw_patch(struct bw *w, uint64_t off, const void *p, size_t n);
int bw_finish(struct bw *w);			/* flush; returns w->err */
void bw_free(struct bw *w);
void put_u16(uint8_t *p, uint16_t v);
void put_u32(uint8_t *p, uint32_t v);
void put_u64(uint8_t *p, uint64_t v);

static inline uint64_t align_up(uint64_t v, unsigned a)
{
	return (v + a - 1) / a * a;
}

/* ---- cct.c: the calling context tree ----------------------------------- */
enum hpc_node_kind {
	HPC_ENTRY = 0,		/* entry point (main thread / application thread) */
	HPC_FUNC = 1,		/* function context (lexicalType 0, hasFunction) */
	HPC_LINE = 2,		/* source line (lexicalType 2, hasSrcLoc) */
	HPC_INSN = 3,		/* instruction (lexicalType 3, hasPoint) */
};

/* Entry point types (meta.db {Entry}.entryPoint). */
enum { HPC_EP_UNKNOWN = 0, HPC_EP_MAIN = 1, HPC_EP_THREAD = 2 };

/* Relations ({Ctx}.relation). */
enum { HPC_REL_LEXICAL = 0, HPC_REL_CALL = 1 };

struct hpc_str {			/* an interned string of the Common String Table */
	char *s;
	uint64_t off;			/* offset inside the string table */
	uint32_t idx;			/* index in its array (modules, files) */
	UT_hash_handle hh;
};

struct hpc_func {
	struct { uint32_t module; uint32_t name_off_plus1; uint64_t offset; } key;
	uint32_t idx;
	int32_t file;			/* file index, -1 unknown */
	uint32_t line;
	UT_hash_handle hh;
};

struct hpc_node {
	uint32_t parent;		/* node index; UINT32_MAX for entries */
	uint8_t kind;			/* enum hpc_node_kind */
	uint8_t relation;
	uint16_t entry;			/* HPC_ENTRY: entry point type */
	uint32_t a;			/* FUNC: function; LINE: file; INSN: module */
	uint32_t line;			/* LINE */
	uint64_t offset;		/* INSN: offset in module */
	uint32_t first_child, last_child, next_sibling; /* UINT32_MAX = none */
};

struct hpc_node_key {
	uint32_t parent, kind;
	uint64_t a, b;
};

struct hpc_node_ent {
	struct hpc_node_key key;
	uint32_t node;
	UT_hash_handle hh;
};

struct hpc_cct {
	struct hpc_node *nodes;
	uint32_t nr_nodes, cap_nodes;
	struct hpc_node_ent *node_index;
	uint32_t entry[3];		/* node of each entry point type, or UINT32_MAX */

	/* Common String Table: strings in insertion order */
	struct hpc_str *strings;	/* hash by text */
	char *strtab;
	uint64_t strtab_len, strtab_cap;

	struct hpc_str **modules;	/* by module index */
	uint32_t nr_modules, cap_modules;
	struct hpc_str **files;
	uint32_t nr_files, cap_files;
	struct hpc_func **funcs;
	uint32_t nr_funcs, cap_funcs;
	struct hpc_func *func_index;
	struct hpc_str *module_index, *file_index;	/* by path (separate hh) */
};

#define HPC_NONE UINT32_MAX

void hpc_cct_init(struct hpc_cct *t);
void hpc_cct_free(struct hpc_cct *t);
/* Intern a string in the Common String Table; returns its offset. */
uint64_t hpc_cct_string(struct hpc_cct *t, const char *s);
int32_t hpc_cct_module(struct hpc_cct *t, const char *path);
int32_t hpc_cct_file(struct hpc_cct *t, const char *path);
int32_t hpc_cct_func(struct hpc_cct *t, const char *name, uint32_t module, uint64_t offset,
		     int32_t file, uint32_t line);
/* The child of @parent with this identity, created if new; HPC_NONE on ENOMEM. */
uint32_t hpc_cct_child(struct hpc_cct *t, uint32_t parent, uint8_t kind, uint8_t relation,
		       uint32_t a, uint32_t line, uint64_t offset);
uint32_t hpc_cct_entry(struct hpc_cct *t, uint16_t type);
/* ctxId of a node: dense, 0 is the global context. */
static inline uint32_t hpc_ctx_id(uint32_t node)
{
	return node + 1;
}
/* Size of a node's {Ctx} record (0x20 + 8 * flex words). */
uint32_t hpc_ctx_size(const struct hpc_node *n);

/*
 * The calling context of one sample: resolve @user and @kernel stacks of
 * process @pid with the host's symbolizer and return its leaf node.
 */
uint32_t hpc_cct_path(struct hpc_cct *t, const struct bpfprof_host *host, uint32_t pid,
		      uint16_t entry_type, const struct bpfprof_stack *user,
		      const struct bpfprof_stack *kernel);

/* ---- values ------------------------------------------------------------ */
/* Metric ids: propMetricId == statMetricId == scope index. */
enum { HPC_M_POINT = 0, HPC_M_FUNCTION = 1, HPC_M_LEXAWARE = 2, HPC_M_EXECUTION = 3,
       HPC_NR_SCOPES = 4 };

/* Non-zero values of one (context, thread): sample counts per scope. */
struct hpc_value {
	uint32_t ctx;			/* ctxId */
	uint32_t thread;		/* thread index; profile index = thread + 1 */
	uint64_t point, function, execution; /* lex_aware == function */
};

static inline uint64_t hpc_value_of(const struct hpc_value *v, int metric)
{
	switch (metric) {
	case HPC_M_POINT: return v->point;
	case HPC_M_FUNCTION:
	case HPC_M_LEXAWARE: return v->function;
	default: return v->execution;
	}
}

/* A thread profile's identity, for id tuples and the description. */
struct hpc_thread_id {
	uint32_t process;		/* RANK logical id: process index */
	uint32_t thread;		/* THREAD logical id: index within the process */
	uint32_t pid, tid;
	const char *comm;
};

/* ---- meta.c ------------------------------------------------------------ */
struct hpc_meta_info {
	const char *title;
	const char *description;
};

void write_file_header(struct bw *w, const char format[4], uint8_t minor,
		       const uint64_t *sections, int nr_sections);
uint64_t write_general_properties_section(struct bw *w, const char *title,
					  const char *description);
uint64_t write_identifier_names_section(struct bw *w);
uint64_t write_performance_metrics_section(struct bw *w, const char *metric);
uint64_t write_common_string_table(struct bw *w, const struct hpc_cct *t);
uint64_t write_load_modules_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab);
uint64_t write_source_files_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab);
uint64_t write_functions_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab,
				 uint64_t pmodules, uint64_t pfiles);
void write_context(struct bw *w, const struct hpc_cct *t, uint32_t node, uint64_t pchildren,
		   uint64_t szchildren, uint64_t pfuncs, uint64_t pfiles, uint64_t pmodules);
uint64_t write_context_tree_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab,
				    uint64_t pfuncs, uint64_t pfiles, uint64_t pmodules);
int write_meta_db(int dir_fd, const struct hpc_cct *t, const struct hpc_meta_info *info);
int write_metrics_yaml(int dir_fd);

#define HPC_METRIC_NAME "CPUTIME (sec)"

/* ---- profile_db.c ------------------------------------------------------ */
void write_identifier_tuple(struct bw *w, uint64_t hostid, const struct hpc_thread_id *id);
/* Profile-major sparse value block of @n values (sorted by ctx), in seconds
 * (samples * @scale); returns the block header fields through @hdr. */
void write_profile_major_sparse_value_block(struct bw *w, const struct hpc_value *v, size_t n,
					    double scale, uint8_t hdr[32]);
int write_profile_db(int dir_fd, const struct hpc_value *vals, size_t nvals,
		     const struct hpc_thread_id *ids, uint32_t nthreads, uint32_t nctxs,
		     uint64_t hostid, double scale);

/* ---- cct_db.c ---------------------------------------------------------- */
void write_context_major_sparse_value_block(struct bw *w, const struct hpc_value *const *v,
					    size_t n, double scale, uint8_t hdr[32]);
int write_cct_db(int dir_fd, const struct hpc_value *vals, size_t nvals, uint32_t nctxs,
		 double scale);

/* ---- trace_db.c -------------------------------------------------------- */
struct hpc_trace_elem {
	uint64_t time;			/* ns since the epoch */
	uint32_t ctx;			/* ctxId, 0 = not running */
};

/* One trace line from samples sorted by time: gaps longer than @gap_ns
 * get a ctxId 0 element; returns the number of elements written. */
uint64_t write_trace_line(struct bw *w, const struct hpc_trace_elem *s, size_t n,
			  uint64_t gap_ns, uint64_t period_ns, uint64_t *tmin, uint64_t *tmax);
void write_context_trace_header(struct bw *w, uint32_t prof_index, uint64_t pstart,
				uint64_t pend);
/* @elems: the samples of thread t at [line_start[t], line_start[t + 1]),
 * sorted here in place. */
int write_trace_db(int dir_fd, struct hpc_trace_elem *elems, const uint64_t *line_start,
		   uint32_t nthreads, uint64_t gap_ns, uint64_t period_ns);

#endif /* BPFPROF_HPC_H */
