/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hpc.h - internal interfaces of the HPCToolkit v4 database plugin: the
 * binary writer (bw.c), large arrays (pages.c), the calling context tree
 * (cct.c), its construction from call stacks (paths.c) and from counts
 * and streamed samples (samples.c), the per-thread values (values.c), the
 * life of one database file (dbfile.c) and the writers of meta.db
 * (meta.c), profile.db (profile_db.c), cct.db (cct_db.c), trace.db
 * (trace_db.c) and metrics/default.yaml (meta.c), and the profiles'
 * identities (ids.c).
 *
 * Layout: hpctoolkit-formats-v4.0.md as corrected by
 * hpctoolkit-v4-as-written.md (what hpcprof writes, what hpcviewer reads).
 */
#ifndef BPFPROF_HPC_H
#define BPFPROF_HPC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>


#include "bpfprof/plugin.h"
#include "common/hashtab.h"

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
/* Write to @fd from offset @off through a buffer of @cap bytes. */
int bw_init_at(struct bw *w, int fd, uint64_t off, size_t cap);
void bw_init_mem(struct bw *w);
void bw_write(struct bw *w, const void *p, size_t n);	/* any size: flush, grow */
void bw_str(struct bw *w, const char *s);	/* with its NUL */
void bw_zero(struct bw *w, uint64_t n);
void bw_align(struct bw *w, unsigned a);	/* zero padding */
void bw_seek(struct bw *w, uint64_t off);	/* forward only; zero-fills (mem) */
void bw_patch(struct bw *w, uint64_t off, const void *p, size_t n);
int bw_finish(struct bw *w);			/* flush; returns w->err */
void bw_free(struct bw *w);

/* Record @err (a negative errno) as the writer's error unless it has one. */
static inline void bw_fail(struct bw *w, int err)
{
	if (!w->err)
		w->err = err;
}

/* Little-endian stores (one store each on little-endian hosts). */
static inline void put_u16(uint8_t *p, uint16_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 2);
#else
	p[0] = v;
	p[1] = v >> 8;
#endif
}

static inline void put_u32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 4);
#else
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
#endif
}

static inline void put_u64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);
#else
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
#endif
}

static inline void put_f64(uint8_t *p, double v)
{
	uint64_t u;

	memcpy(&u, &v, 8);
	put_u64(p, u);
}

/* Small writes: straight into the buffer while it has room. */
static inline void bw_bytes(struct bw *w, const void *p, size_t n)
{
	if (!n)
		return;
	if (w->len + n > w->cap || w->err) {
		bw_write(w, p, n);
		return;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	w->off += n;
}

static inline void bw_u8(struct bw *w, uint8_t v)
{
	bw_bytes(w, &v, 1);
}

static inline void bw_u16(struct bw *w, uint16_t v)
{
	uint8_t b[2];

	put_u16(b, v);
	bw_bytes(w, b, 2);
}

static inline void bw_u32(struct bw *w, uint32_t v)
{
	uint8_t b[4];

	put_u32(b, v);
	bw_bytes(w, b, 4);
}

static inline void bw_u64(struct bw *w, uint64_t v)
{
	uint8_t b[8];

	put_u64(b, v);
	bw_bytes(w, b, 8);
}

static inline void bw_f64(struct bw *w, double v)
{
	uint8_t b[8];

	put_f64(b, v);
	bw_bytes(w, b, 8);
}

/* Room for @n more bytes in the buffer, for a run of put_*() stores;
 * NULL if the writer must flush (use bw_bytes() then). */
static inline uint8_t *bw_reserve(struct bw *w, size_t n)
{
	uint8_t *p;

	if (w->len + n > w->cap || w->err)
		return NULL;
	p = w->buf + w->len;
	w->len += n;
	w->off += n;
	return p;
}

static inline uint64_t align_up(uint64_t v, unsigned a)
{
	return (v + a - 1) / a * a;
}

/* ---- pages.c: large arrays from mmap (zeroed; sizes kept by the caller) -- */
void *hpc_pages_alloc(size_t size);
void *hpc_pages_realloc(void *p, size_t old, size_t size);
void hpc_pages_free(void *p, size_t size);

/* The tables are common/hashtab.h; HPC_NONE is also "no entry" there. */
#define HPC_NONE HASHTAB_NONE

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

/* Largest function, instruction, source location index or line a node
 * can hold. */
#define HPC_MAX_INDEX ((1u << 27) - 1)

/* A context: 12 bytes, as a profile may have millions of them. */
struct hpc_node {
	uint32_t kind : 2;		/* enum hpc_node_kind */
	uint32_t relation : 1;
	uint32_t srcloc : 1;		/* LINE: a is a source location index */
	uint32_t indexed : 1;		/* its children are in child_index too */
	uint32_t a : 27;		/* ENTRY: type; FUNC: function; INSN: instruction
					 * (module + offset); LINE: srcloc ? source location
					 * (file + line) : line in its function's file */
	union {
		uint32_t first_child;	/* newest child, HPC_NONE if none */
		uint32_t ctx;		/* ctxId, once hpc_cct_number() passed it */
	};
	uint32_t next_sibling;		/* HPC_NONE: last */
};

struct hpc_func {
	uint32_t name;			/* string offset + 1; 0: no name */
	uint32_t module;
	uint64_t offset;		/* entry point, offset in the module */
	int32_t file;			/* definition: file index, -1 unknown */
	uint32_t line;
};

struct hpc_insn {			/* an instruction context's point */
	uint32_t module;
	uint64_t offset;
};

struct hpc_srcloc {			/* a line context's, when not implied */
	uint32_t file;
	uint32_t line;
};

struct hpc_cct {
	struct hpc_node *nodes;
	uint32_t nr_nodes, cap_nodes;
	uint32_t entry[3];		/* node of each entry point type, or HPC_NONE */

	/* Common String Table: strings in insertion order, each once */
	char *strtab;
	uint64_t strtab_len, strtab_cap;
	uint32_t *str_slots;		/* open addressing: offset + 1, 0 = empty */
	size_t str_mask, nr_strs;

	uint32_t *modules;		/* string offset of each load module's path */
	uint32_t nr_modules;
	size_t cap_modules;
	uint32_t *files;		/* string offset of each source file's path */
	uint32_t nr_files;
	size_t cap_files;
	struct hpc_func *funcs;
	uint32_t nr_funcs;
	size_t cap_funcs;
	struct hpc_insn *insns;
	uint32_t nr_insns;
	size_t cap_insns;
	struct hpc_srcloc *srclocs;
	uint32_t nr_srclocs;
	size_t cap_srclocs;

	struct hashtab paths;		/* (string offset, 0 module / 1 file) -> index */
	struct hashtab func_index;	/* (hash of module, name, offset; n) -> function */
	struct hashtab insn_index;	/* (offset, module) -> instruction */
	struct hashtab srcloc_index;	/* (file, line) -> source location */
	struct hashtab child_index;	/* (parent, identity) -> child, for parents
					 * with many children */
};

void hpc_cct_init(struct hpc_cct *t);
void hpc_cct_free(struct hpc_cct *t);
/* Free the lookup indices once the tree is complete (strings, modules,
 * files, functions, instructions and nodes stay). */
void hpc_cct_seal(struct hpc_cct *t);
/* Intern a string in the Common String Table; returns its offset, or
 * UINT64_MAX on ENOMEM (or a table past 4 GiB). */
uint64_t hpc_cct_string(struct hpc_cct *t, const char *s);
/* Offset of an interned string, UINT64_MAX if it is not in the table. */
uint64_t hpc_cct_find_string(const struct hpc_cct *t, const char *s);
int32_t hpc_cct_module(struct hpc_cct *t, const char *path);
int32_t hpc_cct_file(struct hpc_cct *t, const char *path);
int32_t hpc_cct_func(struct hpc_cct *t, const char *name, uint32_t module, uint64_t offset,
		     int32_t file, uint32_t line);
/* The function (name = string offset + 1, 0 for none), -1 if not known. */
int32_t hpc_cct_find_func(const struct hpc_cct *t, uint32_t name, uint32_t module,
			  uint64_t offset);
int32_t hpc_cct_add_func(struct hpc_cct *t, uint32_t name, uint32_t module, uint64_t offset,
			 int32_t file, uint32_t line);
/* The child of @parent with this identity, created if new; HPC_NONE on ENOMEM. */
uint32_t hpc_cct_child(struct hpc_cct *t, uint32_t parent, uint8_t kind, uint8_t relation,
		       uint32_t a, uint32_t line, uint64_t offset);
/* The same in two steps: the identity of such a child of a context in
 * function @func (-1: not in a function context; it decides how a line is
 * kept), negative errno on failure; then the child of @parent with it. */
int64_t hpc_cct_identity(struct hpc_cct *t, int32_t func, uint8_t kind, uint8_t relation,
			 uint32_t a, uint32_t line, uint64_t offset);
uint32_t hpc_cct_child_of(struct hpc_cct *t, uint32_t parent, uint32_t id);
uint32_t hpc_cct_entry(struct hpc_cct *t, uint16_t type);
/* Size of a node's {Ctx} record (0x20 + 8 * flex words). */
uint32_t hpc_ctx_size(const struct hpc_node *n);
/* File index (-1: none) and line of a LINE context below @parent. */
void hpc_node_line(const struct hpc_cct *t, const struct hpc_node *parent,
		   const struct hpc_node *n, int32_t *file, uint32_t *line);

/*
 * ctxIds: hpc_cct_number() numbers the contexts 1, 2, ... in post order
 * (every context after its children; 0 is the global context), stores
 * each in node->ctx (replacing first_child: the tree can grow no more)
 * and calls @visit for each node in that order with its parent (NULL and
 * @depth 0 for entry points).  @shape (nr_nodes + 1 entries, or NULL)
 * receives for each ctxId its number of children << 1, | HPC_SHAPE_LEXICAL
 * if its values propagate to its parent's exclusive (function) value.
 */
#define HPC_SHAPE_LEXICAL 1u
typedef int (*hpc_cct_visit_fn)(void *arg, const struct hpc_node *n,
				const struct hpc_node *parent, uint32_t depth);
int hpc_cct_number(struct hpc_cct *t, uint32_t *shape, hpc_cct_visit_fn visit, void *arg);

/* ---- paths.c: call stacks -> contexts ---------------------------------- */
/* A resolved frame: the identities of its contexts (cct.c). */
struct hpc_frame {
	uint32_t func;			/* function context, HPC_NONE: no symbol */
	uint32_t point;			/* line context below it, or the instruction
					 * context of a frame without a function;
					 * HPC_NONE: the function context alone */
};

struct hpc_paths {
	struct hpc_cct *t;
	const struct bpfprof_host *host;
	struct hashtab modules;		/* host module name (by address) -> module */
	struct hashtab files;		/* host file name (by address) -> file */
	struct hashtab funcs;		/* (host function name, entry's low 32 bits) ->
					 * function, checked against it */
	struct hashtab interp_funcs;	/* (interpreted function's entry, pid) -> function */
	struct hashtab kernel;		/* (kernel address, pid) -> kframes[] index */
	struct hpc_frame *kframes;
	uint32_t nr_kframes, cap_kframes;
};

void hpc_paths_init(struct hpc_paths *ps, struct hpc_cct *t, const struct bpfprof_host *host);
void hpc_paths_free(struct hpc_paths *ps);
/*
 * The frames of @st (kernel != 0: kernel addresses) of process @pid below
 * @node, from the outermost one, skipping the first @skip (already
 * resolved: @node is the context after them), resolved with the host's
 * symbolizer.  path[j], if @path, receives the context after frame j.
 * Returns the last context, HPC_NONE on ENOMEM.
 */
uint32_t hpc_paths_walk(struct hpc_paths *ps, uint32_t pid, uint32_t node,
			const struct bpfprof_stack *st, uint32_t skip, int kernel, uint32_t *path);
/* Leaf context of a sample: the entry point, @user, then @kernel (may be NULL). */
uint32_t hpc_paths_leaf(struct hpc_paths *ps, uint32_t pid, uint16_t entry_type,
			const struct bpfprof_stack *user, const struct bpfprof_stack *kernel);
/* How many frames, from the outermost one, @a and @b have in common (the
 * same addresses to look up); NULL is the empty stack. */
uint32_t hpc_paths_common(const struct bpfprof_stack *a, const struct bpfprof_stack *b);
/* Order of stacks by their frames from the outermost one (so that stacks
 * with a common prefix are neighbors). */
int hpc_paths_cmp(const struct bpfprof_stack *a, const struct bpfprof_stack *b);

/* ---- samples.c: counts and spooled samples -> leaf contexts, trace lines */
struct hpc_spool_rec {			/* one streamed sample, as spooled by event() */
	uint32_t pid, tid;
	uint64_t time;			/* CLOCK_MONOTONIC */
	uint32_t user_stack, kernel_stack; /* host->stack() indices */
};

struct hpc_trace_elem {
	uint64_t time;			/* ns since the epoch */
	uint32_t ctx;			/* ctxId, 0 = not running */
	uint32_t kernel_stack;		/* while bucketing (ctx: the user stack) */
};

/* The samples of thread t at elems[line_start[t] .. line_start[t + 1]). */
struct hpc_trace_lines {
	struct hpc_trace_elem *elems;	/* an unlinked mapped file, or NULL */
	size_t map_len;
	uint64_t *line_start;		/* nthreads + 1 */
};

/*
 * Leaf contexts by slot: slot c < nr_counts is count c's; the slots after
 * them are (thread, stacks) of streamed samples that no count has.
 */
struct hpc_samples {
	const struct bpfprof_profile *p;
	const struct bpfprof_host *host;
	struct hpc_paths *paths;
	struct hashtab threads;		/* (pid, tid) -> thread index */
	uint32_t *first;		/* [thread]: its first count in order[] */
	uint32_t *order;		/* count indices by (thread, user, kernel stack) */
	uint32_t *leaf;			/* [slot]: node; its ctxId after numbering */
	size_t nr_slots, cap_slots;
	struct hashtab extra;		/* (thread, user id, kernel id), see
					 * sample_slot() -> slot */
};

/* An unlinked scratch file inside the output directory. */
int hpc_scratch_file(int dir_fd, const char *name);
/* Index threads and counts, and build every count's leaf context. */
int hpc_samples_init(struct hpc_samples *sm, const struct bpfprof_profile *p,
		     const struct bpfprof_host *host, struct hpc_paths *paths);
void hpc_samples_free(struct hpc_samples *sm);
/* Thread index of (pid, tid), HPC_NONE if the profile lacks it. */
uint32_t hpc_samples_thread(const struct hpc_samples *sm, uint32_t pid, uint32_t tid);
/* The @nr spooled samples as (wall time, leaf slot), by thread, in a
 * scratch file of @dir_fd; contexts are built for stacks no count has. */
int hpc_samples_bucket(struct hpc_samples *sm, int spool_fd, uint64_t nr, int dir_fd,
		       struct hpc_trace_lines *tl);
/* Once the tree is numbered: slots and trace elements -> ctxIds. */
void hpc_samples_number(struct hpc_samples *sm, const struct hpc_cct *t,
			struct hpc_trace_lines *tl);
void hpc_trace_lines_free(struct hpc_trace_lines *tl);

/* ---- values.c: per-thread values, context by context ------------------ */
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

/* The samples of one count at its leaf context. */
struct hpc_leaf {
	uint32_t ctx;
	uint32_t thread;
	uint64_t samples;
};

/* What the values are computed from. */
struct hpc_values {
	const uint32_t *shape;		/* [ctxId] from hpc_cct_number() */
	uint32_t nctxs;			/* ctxIds 0 .. nctxs - 1 */
	const struct hpc_leaf *leaves;	/* sorted by ctx, then thread */
	size_t nr_leaves;
	const uint64_t *totals;		/* [thread]: its samples (ctxId 0) */
	uint32_t nthreads;
};

/* Sort leaves by ctx, keeping the order within a ctx (stable). */
int hpc_sort_leaves(struct hpc_leaf *l, size_t n);

/*
 * Call @fn for every ctxId in increasing order with the context's non-zero
 * values, one per thread in increasing thread order: point at the leaf,
 * function summed up through lexically nested contexts, execution
 * (inclusive) summed up to the entry point, and the thread totals at
 * ctxId 0 (execution only).  Memory: O(threads + depth x fan-out), not
 * O(threads x contexts).  Stops at the first non-zero return of @fn.
 */
typedef int (*hpc_values_fn)(void *arg, uint32_t ctx, const struct hpc_value *v, size_t n);
int hpc_values_walk(const struct hpc_values *in, hpc_values_fn fn, void *arg);

/* ---- ids.c: a thread profile's identity, for id tuples and the description */
struct hpc_thread_id {
	uint32_t node;			/* NODE logical id: the node's index */
	uint64_t host_id;		/* NODE physical id: the node's gethostid() */
	int32_t rank;			/* RANK logical id; -1: no RANK in the tuple */
	uint32_t thread;		/* THREAD logical id: index within its process */
	uint32_t pid, tid;		/* RANK and THREAD physical ids: on its node */
	const char *host;		/* host name (the profile's strings), may be NULL */
	const char *comm;
};

/* Fill @ids (p->nr_threads entries) from p->thread_ids, or, from hosts
 * older than 0.2, from the processes and threads (one node, no ranks);
 * 0 or -ENOMEM. */
int hpc_thread_ids(const struct bpfprof_profile *p, struct hpc_thread_id *ids);

/* ---- dbfile.c: one database file from creation to close ---------------- */
struct hpc_db {
	struct bw w;		/* the file from offset 0; its sections go here */
	int fd;
	size_t hdr_size;	/* bytes left for the file header */
};

/* The common file header: "HPCTOOLKIT", @format, version 4.@minor, then
 * the (size, offset) pairs of @nr_sections sections. */
void write_file_header(struct bw *w, const char format[4], uint8_t minor,
		       const uint64_t *sections, int nr_sections);
/* Create @name in @dir_fd and write @hdr_size zero bytes for its header;
 * 0 or a negative errno (nothing to finish then). */
int hpc_db_create(struct hpc_db *db, int dir_fd, const char *name, size_t hdr_size);
/* Append @footer, patch in the header (version 4.0) with @sections, flush
 * and close; returns the first error of the whole file. */
int hpc_db_finish(struct hpc_db *db, const char format[4], const char footer[8],
		  const uint64_t *sections, int nr_sections);

/* ---- meta.c ------------------------------------------------------------ */
struct hpc_meta_info {
	const char *title;
	const char *description;
};

uint64_t write_general_properties_section(struct bw *w, const char *title,
					  const char *description);
uint64_t write_identifier_names_section(struct bw *w);
uint64_t write_performance_metrics_section(struct bw *w, const char *metric);
uint64_t write_common_string_table(struct bw *w, const struct hpc_cct *t);
uint64_t write_load_modules_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab);
uint64_t write_source_files_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab);
uint64_t write_functions_section(struct bw *w, const struct hpc_cct *t, uint64_t strtab,
				 uint64_t pmodules, uint64_t pfiles);
/* @parent: the node's parent (HPC_NONE for entry points). */
void write_context(struct bw *w, const struct hpc_cct *t, uint32_t node, uint32_t parent,
		   uint32_t ctx, uint64_t pchildren, uint64_t szchildren, uint64_t pfuncs,
		   uint64_t pfiles, uint64_t pmodules);
/* Numbers the tree (hpc_cct_number(), @shape may be NULL) as it writes it. */
uint64_t write_context_tree_section(struct bw *w, struct hpc_cct *t, uint32_t *shape,
				    uint64_t strtab, uint64_t pfuncs, uint64_t pfiles,
				    uint64_t pmodules);
int write_meta_db(int dir_fd, struct hpc_cct *t, uint32_t *shape,
		  const struct hpc_meta_info *info);
int write_metrics_yaml(int dir_fd);

#define HPC_METRIC_NAME "CPUTIME (sec)"

/* ---- profile_db.c ------------------------------------------------------ */
/* NODE (physical: host id) / RANK (physical: pid; left out when id->rank
 * is -1) / THREAD (physical: tid). */
void write_identifier_tuple(struct bw *w, const struct hpc_thread_id *id);

/*
 * A Profile-Major Sparse Value Block written context by context: the
 * {Val}s from pvalues, the {Idx}s from pidx = align4(pvalues + 10 *
 * nvalues), each through its own buffer (@bufsize bytes) to @fd; nvalues
 * must be known beforehand (the two arrays are adjacent).
 */
struct hpc_pblock {
	struct bw vals, idx;
	uint64_t pvalues, pidx;
	uint64_t expected;		/* nvalues given to pblock_begin() */
	uint64_t nvalues;		/* written so far */
	uint32_t nctxs;
};

int pblock_begin(struct hpc_pblock *b, int fd, uint64_t pvalues, uint64_t nvalues,
		 size_t bufsize);
/* Append one context's values (in seconds: samples * @scale). */
void write_profile_major_sparse_value_block(struct hpc_pblock *b, const struct hpc_value *v,
					    double scale);
/* Flush, free the buffers and fill in the 32-byte block header; returns the
 * first error. */
int pblock_end(struct hpc_pblock *b, uint8_t hdr[32]);
/* Bytes of a block of @nvalues values in @nctxs contexts starting at @p. */
uint64_t pblock_end_offset(uint64_t p, uint64_t nvalues, uint32_t nctxs);
/* Number of {Val}s of one context's values. */
static inline unsigned hpc_nr_values(const struct hpc_value *v)
{
	return (v->point != 0) + 2 * (v->function != 0) + (v->execution != 0);
}

int write_profile_db(int dir_fd, const struct hpc_values *in, const struct hpc_thread_id *ids,
		     double scale);

/* ---- cct_db.c ---------------------------------------------------------- */
/* @v: one context's values, sorted by thread. */
void write_context_major_sparse_value_block(struct bw *w, const struct hpc_value *v, size_t n,
					    double scale, uint8_t hdr[32]);
int write_cct_db(int dir_fd, const struct hpc_values *in, double scale);

/* ---- trace_db.c -------------------------------------------------------- */
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
