// SPDX-License-Identifier: BSD-2-Clause
/*
 * hpcdb - reader and checker for HPCToolkit v4 databases (meta.db,
 * profile.db, cct.db, trace.db), used by bpfprof's tests.
 *
 * This file owns the independent reading of a database directory: it maps
 * each file, checks every invariant the format states (magics, versions,
 * footers, pointers and sizes in bounds and aligned, sorted indices, ctxIds
 * and metric ids that exist, summary equal to the sum over threads,
 * inclusive values never above the parent's, cct.db the transpose of
 * profile.db, trace lines sorted) and prints the top functions from the
 * summary profile and from the sum over the thread profiles.
 *
 * Layout as in hpctoolkit-formats-v4.0.md, corrected by
 * hpctoolkit-v4-as-written.md (szProfile 48, entry points, ctxId 0, ...).
 *
 *   hpcdb [--strict] [--threads] [--top N] [--function NAME] [--description]
 *         [--modules] DIR
 *
 * --threads prints each thread profile's total, trace sample count and top
 * functions; --function NAME prints each procedure of that name meta.db
 * lists ("procedure NAME: module M file F line L"), and NAME's exclusive
 * and inclusive share of the summary and (with --threads) of each thread;
 * --description prints meta.db's description.
 *
 * --modules prints each load module's exclusive and inclusive time as
 * hpcviewer's flat view sums them; a module whose exclusive time exceeds
 * its inclusive time is an error (time counted twice).
 *
 * --strict also rejects what hpcprof itself does but our writer must not:
 * values for ctxIds meta.db does not list, loose min/max timestamps, sizes
 * other than the ones HPCToolkit writes, a missing metrics/default.yaml,
 * trace header i not describing profile i + 1, an empty load module path,
 * and identifier tuples that are not unique and consistent (check_tuples).
 * Exit 0 when the database is valid, 1 (with one line on stderr) if not.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uthash.h>

static const char *g_dir;
static int g_strict;
static uint64_t cct_nctxs;	/* contexts in cct.db: bounds every ctxId */
static const char *g_function;	/* --function NAME */

__attribute__((noreturn, format(printf, 1, 2)))
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hpcdb: %s: ", g_dir);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		die("out of memory");
	return p;
}

/* ------------------------------------------------------------------------
 * Mapped files and bounds-checked little-endian access
 */
struct dbfile {
	const char *name;
	const uint8_t *p;
	uint64_t sz;
};

static int map_file(struct dbfile *f, const char *name, int required)
{
	char path[4096];
	struct stat st;
	int fd;

	f->name = name;
	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		if (!required && errno == ENOENT)
			return 0;
		die("%s: %s", name, strerror(errno));
	}
	if (fstat(fd, &st) < 0)
		die("%s: %s", name, strerror(errno));
	f->sz = st.st_size;
	if (f->sz < 24)
		die("%s: file too small (%llu bytes)", name, (unsigned long long)f->sz);
	f->p = mmap(NULL, f->sz, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f->p == MAP_FAILED)
		die("%s: mmap: %s", name, strerror(errno));
	close(fd);
	return 1;
}

static void need(const struct dbfile *f, uint64_t off, uint64_t len, const char *what)
{
	if (off > f->sz || len > f->sz - off)
		die("%s: %s at 0x%llx+0x%llx out of bounds (file 0x%llx)", f->name, what,
		    (unsigned long long)off, (unsigned long long)len, (unsigned long long)f->sz);
}

static void aligned(const struct dbfile *f, uint64_t off, unsigned a, const char *what)
{
	if (off % a)
		die("%s: %s at 0x%llx not %u-aligned", f->name, what, (unsigned long long)off, a);
}

static uint8_t r8(const struct dbfile *f, uint64_t o)
{
	need(f, o, 1, "u8");
	return f->p[o];
}

static uint16_t r16(const struct dbfile *f, uint64_t o)
{
	need(f, o, 2, "u16");
	return f->p[o] | (uint16_t)f->p[o + 1] << 8;
}

static uint32_t r32(const struct dbfile *f, uint64_t o)
{
	need(f, o, 4, "u32");
	return f->p[o] | (uint32_t)f->p[o + 1] << 8 | (uint32_t)f->p[o + 2] << 16 |
	       (uint32_t)f->p[o + 3] << 24;
}

static uint64_t r64(const struct dbfile *f, uint64_t o)
{
	return r32(f, o) | (uint64_t)r32(f, o + 4) << 32;
}

static double rf64(const struct dbfile *f, uint64_t o)
{
	uint64_t u = r64(f, o);
	double d;

	memcpy(&d, &u, 8);
	return d;
}

/* A region [off, off + sz) of a file, for "inside section" checks. */
struct region {
	uint64_t off, sz;
};

static void inside(const struct dbfile *f, struct region r, uint64_t off, uint64_t len,
		   const char *what, const char *sect)
{
	if (off < r.off || off > r.off + r.sz || len > r.off + r.sz - off)
		die("%s: %s at 0x%llx+0x%llx outside the %s section [0x%llx, 0x%llx)", f->name,
		    what, (unsigned long long)off, (unsigned long long)len, sect,
		    (unsigned long long)r.off, (unsigned long long)(r.off + r.sz));
}

/* A NUL-terminated string fully inside region @r. */
static const char *str_in(const struct dbfile *f, struct region r, uint64_t off,
			  const char *what, const char *sect)
{
	uint64_t end = r.off + r.sz;

	inside(f, r, off, 1, what, sect);
	if (!memchr(f->p + off, 0, end - off))
		die("%s: %s at 0x%llx not NUL-terminated inside the %s section", f->name, what,
		    (unsigned long long)off, sect);
	return (const char *)f->p + off;
}

/* Common header: magic, format, version; @nsect (sz, p) pairs after it. */
static void check_header(const struct dbfile *f, const char *fmt, const char *footer,
			 int nsect, struct region *sect, const char *const *names,
			 const unsigned *align)
{
	if (memcmp(f->p, "HPCTOOLKIT", 10))
		die("%s: bad magic", f->name);
	if (memcmp(f->p + 10, fmt, 4))
		die("%s: format is '%.4s', expected '%s'", f->name, f->p + 10, fmt);
	if (f->p[14] != 4)
		die("%s: major version %u, expected 4", f->name, f->p[14]);
	if (memcmp(f->p + f->sz - 8, footer, 8))
		die("%s: footer is not '%s'", f->name, footer);
	for (int i = 0; i < nsect; i++) {
		sect[i].sz = r64(f, 0x10 + 16 * i);
		sect[i].off = r64(f, 0x18 + 16 * i);
		need(f, sect[i].off, sect[i].sz, names[i]);
		if (sect[i].off + sect[i].sz > f->sz - 8)
			die("%s: section %s overlaps the footer", f->name, names[i]);
		if (sect[i].off < 0x10 + 16u * nsect && sect[i].sz)
			die("%s: section %s overlaps the file header", f->name, names[i]);
		if (align[i] > 1)
			aligned(f, sect[i].off, align[i], names[i]);
	}
}

/* ------------------------------------------------------------------------
 * cct.db header, read first: its nCtxs (bounded by the file size) bounds
 * every ctxId of the database
 */
static struct dbfile C;
static uint64_t cct_pctxs, cct_szctx;

static void read_cct_header(void)
{
	static const char *const names[] = { "CtxInfos" };
	static const unsigned al[] = { 8 };
	struct region s[1];
	uint64_t h;

	map_file(&C, "cct.db", 1);
	check_header(&C, "ctxt", "__ctx.db", 1, s, names, al);
	h = s[0].off;
	inside(&C, s[0], h, 0xd, "CtxInfos header", "CtxInfos");
	cct_pctxs = r64(&C, h);
	cct_nctxs = r32(&C, h + 8);
	cct_szctx = r8(&C, h + 0xc);
	if (cct_szctx < 0x20 || (g_strict && cct_szctx != 0x20))
		die("cct.db: szCtx %llu", (unsigned long long)cct_szctx);
	if (cct_nctxs == 0)
		die("cct.db: no contexts (ctxId 0 is always there)");
	aligned(&C, cct_pctxs, 8, "pCtxs");
	inside(&C, s[0], cct_pctxs, cct_nctxs * cct_szctx, "ctx infos", "CtxInfos");
}

/* ------------------------------------------------------------------------
 * meta.db
 */
enum { SC_POINT, SC_FUNCTION, SC_LEXAWARE, SC_EXECUTION, SC_OTHER };

struct scope {
	uint64_t off;
	const char *name;
	uint8_t type, prop_index;
	int kind;		/* SC_* from the name */
};

struct psi {
	int metric, scope;
	uint16_t prop_id;
	int dense;		/* index into value arrays */
};

struct summ {
	int metric, scope;
	const char *formula;
	uint8_t combine;
	uint16_t stat_id;
	int dense;		/* index into value arrays */
};

struct metric {
	const char *name;
	/* dense value-array indices (see struct psi/summ) per standard scope */
	int prop[SC_OTHER];	/* of the propMetricId, -1 if none */
	int stat[SC_OTHER];	/* of the statMetricId ($$, sum), -1 if none */
};

struct ctx {
	int listed;
	uint32_t parent;	/* ctxId of the parent, 0 for entry points */
	uint32_t first_child, next_sibling; /* ctxIds, 0: none (ctx 0: the entry points) */
	int is_entry;
	uint8_t relation, lexical_type, flags;
	int label;		/* index into labels, -1 if not function-like */
	int32_t module;		/* load module index of its function (lexicalType 0)
				 * or point (3), -1 if none */
};

struct meta {
	const char *title, *description;
	uint32_t nkinds;
	const char **kind_names;
	struct scope *scopes;
	uint32_t nscopes;
	struct metric *metrics;
	uint32_t nmetrics;
	struct psi *psis;	/* indexed by propMetricId (metric -1 = unused) */
	struct summ *summs;	/* indexed by statMetricId */
	uint32_t nprop_ids, nstat_ids;	/* largest id + 1 */
	uint32_t nprop_dense, nstat_dense; /* ids defined */
	uint32_t nsummaries, nscopeinsts;
	uint64_t pmodules, nmodules, szmodule;
	const char **module_paths;
	uint64_t pfiles, nfiles, szfile;
	uint64_t pfuncs, nfuncs, szfunc;
	struct region strings, context;
	struct ctx *ctxs;	/* indexed by ctxId */
	uint32_t nctx_alloc;	/* entries in ctxs */
	uint32_t max_ctx;	/* largest listed ctxId */
	uint32_t nlisted;
	char **labels;
	uint32_t nlabels, labels_alloc;
};

static struct meta M;

static int scope_kind(const char *name)
{
	static const char *const n[] = { "point", "function", "lex_aware", "execution" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(name, n[i]))
			return i;
	return SC_OTHER;
}

static void ctx_grow(uint32_t id)
{
	if (id < M.nctx_alloc)
		return;
	uint32_t n = M.nctx_alloc ? M.nctx_alloc : 64;

	while (n <= id)
		n *= 2;
	M.ctxs = realloc(M.ctxs, n * sizeof(*M.ctxs));
	if (!M.ctxs)
		die("out of memory");
	memset(M.ctxs + M.nctx_alloc, 0, (n - M.nctx_alloc) * sizeof(*M.ctxs));
	M.nctx_alloc = n;
}

struct label_ent {
	const char *s;
	int id;
	UT_hash_handle hh;
};

static struct label_ent *label_index;

static int label_id(const char *s)
{
	struct label_ent *e;

	HASH_FIND_STR(label_index, s, e);
	if (e)
		return e->id;
	if (M.nlabels == M.labels_alloc) {
		M.labels_alloc = M.labels_alloc ? 2 * M.labels_alloc : 64;
		M.labels = realloc(M.labels, M.labels_alloc * sizeof(*M.labels));
		if (!M.labels)
			die("out of memory");
	}
	M.labels[M.nlabels] = strdup(s);
	e = xcalloc(1, sizeof(*e));
	if (!M.labels[M.nlabels])
		die("out of memory");
	e->s = M.labels[M.nlabels];
	e->id = M.nlabels;
	HASH_ADD_KEYPTR(hh, label_index, e->s, strlen(e->s), e);
	return M.nlabels++;
}

static void check_array_elem(const struct dbfile *f, uint64_t p, uint64_t base, uint64_t n,
			     uint64_t stride, const char *what)
{
	if (p < base || (p - base) % stride || (p - base) / stride >= n)
		die("%s: %s pointer 0x%llx does not point at an element", f->name, what,
		    (unsigned long long)p);
}

static const char *module_path(const struct dbfile *f, uint64_t pmod)
{
	return str_in(f, M.strings, r64(f, pmod + 8), "module path", "Strings");
}

static const char *base_name(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static void read_context(const struct dbfile *f, uint64_t off, uint32_t parent, int depth);

static void read_children(const struct dbfile *f, uint64_t p, uint64_t sz, uint32_t parent,
			  int depth)
{
	uint64_t end;

	if (!sz)
		return;
	aligned(f, p, 8, "children array");
	inside(f, M.context, p, sz, "children array", "Context");
	end = p + sz;
	while (p < end) {
		uint64_t csz;

		if (end - p < 0x20)
			die("meta.db: context at 0x%llx overruns its children array",
			    (unsigned long long)p);
		csz = 0x20 + 8u * r8(f, p + 0x17);
		if (csz > end - p)
			die("meta.db: context at 0x%llx overruns its children array",
			    (unsigned long long)p);
		read_context(f, p, parent, depth + 1);
		p += csz;
	}
}

static void new_ctx(const struct dbfile *f, uint64_t off, uint32_t id, uint32_t parent)
{
	if (id == 0)
		die("meta.db: context at 0x%llx has ctxId 0", (unsigned long long)off);
	if (id >= cct_nctxs)
		die("meta.db: ctxId %u beyond cct.db's %llu contexts", id,
		    (unsigned long long)cct_nctxs);
	ctx_grow(id);
	if (M.ctxs[id].listed)
		die("meta.db: ctxId %u listed twice", id);
	M.ctxs[id].listed = 1;
	M.ctxs[id].parent = parent;
	M.ctxs[id].label = -1;
	M.ctxs[id].module = -1;
	M.ctxs[id].next_sibling = M.ctxs[parent].first_child;
	M.ctxs[parent].first_child = id;
	M.nlisted++;
	if (id > M.max_ctx)
		M.max_ctx = id;
	if (parent && !M.ctxs[parent].listed)
		die("meta.db: parent of ctxId %u not listed", id);
}

static void read_context(const struct dbfile *f, uint64_t off, uint32_t parent, int depth)
{
	uint64_t szc = r64(f, off), pc = r64(f, off + 8);
	uint32_t id = r32(f, off + 0x10);
	uint8_t flags = r8(f, off + 0x14), rel = r8(f, off + 0x15), lt = r8(f, off + 0x16);
	uint8_t nflex = r8(f, off + 0x17);
	unsigned words = 0, w;
	uint64_t pfunc = 0, pfile = 0, pmod = 0, moff = 0;
	char buf[512];

	if (depth > 100000)
		die("meta.db: context tree too deep");
	new_ctx(f, off, id, parent);
	if (flags & 1)
		words += 1;
	if (flags & 2)
		words += 2;
	if (flags & 4)
		words += 2;
	if (nflex < words || (g_strict && nflex != words))
		die("meta.db: ctxId %u has %u flex words for flags 0x%x", id, nflex, flags);
	if (g_strict && (flags & ~7u))
		die("meta.db: ctxId %u has reserved flags 0x%x", id, flags);
	if (rel > 2 && g_strict)
		die("meta.db: ctxId %u has unknown relation %u", id, rel);
	if (lt > 3 && g_strict)
		die("meta.db: ctxId %u has unknown lexicalType %u", id, lt);
	w = 0;
	if (flags & 1) {
		pfunc = r64(f, off + 0x20 + 8 * w++);
		check_array_elem(f, pfunc, M.pfuncs, M.nfuncs, M.szfunc, "context pFunction");
	}
	if (flags & 2) {
		pfile = r64(f, off + 0x20 + 8 * w++);
		check_array_elem(f, pfile, M.pfiles, M.nfiles, M.szfile, "context pFile");
		w++;
	}
	if (flags & 4) {
		pmod = r64(f, off + 0x20 + 8 * w++);
		check_array_elem(f, pmod, M.pmodules, M.nmodules, M.szmodule, "context pModule");
		moff = r64(f, off + 0x20 + 8 * w++);
	}
	if (g_strict) {
		/* bit 0 iff the relation is lexical nesting, as hpcprof writes */
		uint16_t prop = r16(f, off + 0x18);

		if ((prop & 1) != (rel == 0))
			die("meta.db: ctxId %u propagation 0x%x for relation %u", id, prop, rel);
	}
	M.ctxs[id].relation = rel;
	M.ctxs[id].lexical_type = lt;
	M.ctxs[id].flags = flags;
	if (lt == 0 && pfunc && r64(f, pfunc + 8))
		M.ctxs[id].module = (r64(f, pfunc + 8) - M.pmodules) / M.szmodule;
	else if (lt == 3 && pmod)
		M.ctxs[id].module = (pmod - M.pmodules) / M.szmodule;
	if (lt == 0) {
		const char *name = NULL;

		if (pfunc) {
			uint64_t pn = r64(f, pfunc);

			if (pn)
				name = str_in(f, M.strings, pn, "function name", "Strings");
			else if (r64(f, pfunc + 8))
				snprintf(buf, sizeof(buf), "%s@0x%llx",
					 base_name(module_path(f, r64(f, pfunc + 8))),
					 (unsigned long long)r64(f, pfunc + 0x10));
			else
				snprintf(buf, sizeof(buf), "<unknown function>");
		} else {
			snprintf(buf, sizeof(buf), "<unknown function>");
		}
		if (name)
			snprintf(buf, sizeof(buf), "%s", name);
		M.ctxs[id].label = label_id(buf);
	} else if (lt == 3 && rel != 0 && pmod) {
		snprintf(buf, sizeof(buf), "%s@0x%llx", base_name(module_path(f, pmod)),
			 (unsigned long long)moff);
		M.ctxs[id].label = label_id(buf);
	}
	if (szc == 0)
		return;
	read_children(f, pc, szc, id, depth);
}

static void read_meta(void)
{
	static const char *const names[] = { "General", "IdNames", "Metrics", "Context",
					     "Strings", "Modules", "Files", "Functions" };
	static const unsigned al[] = { 8, 8, 8, 8, 1, 8, 8, 8 };
	struct dbfile fm, *f = &fm;
	struct region s[8];
	uint64_t o, p;

	map_file(f, "meta.db", 1);
	check_header(f, "meta", "_meta.db", 8, s, names, al);
	M.strings = s[4];
	M.context = s[3];

	/* General Properties */
	inside(f, s[0], s[0].off, 0x10, "General header", "General");
	M.title = str_in(f, s[0], r64(f, s[0].off), "title", "General");
	M.description = str_in(f, s[0], r64(f, s[0].off + 8), "description", "General");

	/* Hierarchical Identifier Names */
	inside(f, s[1], s[1].off, 9, "IdNames header", "IdNames");
	p = r64(f, s[1].off);
	M.nkinds = r8(f, s[1].off + 8);
	aligned(f, p, 8, "ppNames");
	inside(f, s[1], p, 8ull * M.nkinds, "ppNames", "IdNames");
	M.kind_names = xcalloc(M.nkinds, sizeof(*M.kind_names));
	for (uint32_t k = 0; k < M.nkinds; k++)
		M.kind_names[k] = str_in(f, s[1], r64(f, p + 8 * k), "identifier name", "IdNames");
	if (g_strict) {
		static const char *const kinds[] = { "SUMMARY", "NODE", "RANK", "THREAD",
						     "GPUDEVICE", "GPUCONTEXT", "GPUSTREAM",
						     "CORE" };
		if (M.nkinds != 8)
			die("meta.db: %u identifier kinds, expected 8", M.nkinds);
		for (int k = 0; k < 8; k++)
			if (strcmp((const char *)f->p + r64(f, p + 8 * k), kinds[k]))
				die("meta.db: identifier kind %d is not %s", k, kinds[k]);
	}

	/* Performance Metrics */
	{
		uint64_t h = s[2].off, pmet, pscopes;
		uint8_t szm, szpsi, szss, szsc;

		inside(f, s[2], h, 0x1b, "Metrics header", "Metrics");
		pmet = r64(f, h);
		M.nmetrics = r32(f, h + 8);
		szm = r8(f, h + 0xc);
		szpsi = r8(f, h + 0xd);
		szss = r8(f, h + 0xe);
		pscopes = r64(f, h + 0x10);
		M.nscopes = r16(f, h + 0x18);
		szsc = r8(f, h + 0x1a);
		if (szm < 0x20 || szpsi < 0x10 || szss < 0x18 || szsc < 0x10)
			die("meta.db: metric structure sizes %u/%u/%u/%u too small", szm, szpsi,
			    szss, szsc);
		if (g_strict && (szm != 0x20 || szpsi != 0x10 || szss != 0x18 || szsc != 0x10))
			die("meta.db: metric structure sizes %u/%u/%u/%u are not 32/16/24/16",
			    szm, szpsi, szss, szsc);
		if (M.nmetrics) {
			aligned(f, pmet, 8, "pMetrics");
			inside(f, s[2], pmet, (uint64_t)szm * M.nmetrics, "metrics", "Metrics");
		}
		if (M.nscopes) {
			aligned(f, pscopes, 8, "pScopes");
			inside(f, s[2], pscopes, (uint64_t)szsc * M.nscopes, "scopes", "Metrics");
		}
		M.scopes = xcalloc(M.nscopes, sizeof(*M.scopes));
		for (uint32_t i = 0; i < M.nscopes; i++) {
			struct scope *sc = &M.scopes[i];

			sc->off = pscopes + (uint64_t)i * szsc;
			sc->name = str_in(f, s[2], r64(f, sc->off), "scope name", "Metrics");
			sc->type = r8(f, sc->off + 8);
			sc->prop_index = r8(f, sc->off + 9);
			sc->kind = scope_kind(sc->name);
			if (sc->type > 3 && g_strict)
				die("meta.db: scope %s has unknown type %u", sc->name, sc->type);
			if (sc->type == 3 && sc->prop_index >= 16)
				die("meta.db: transitive scope %s has propagationIndex %u",
				    sc->name, sc->prop_index);
		}
		M.metrics = xcalloc(M.nmetrics, sizeof(*M.metrics));
		M.psis = xcalloc(65536, sizeof(*M.psis));
		M.summs = xcalloc(65536, sizeof(*M.summs));
		for (uint32_t i = 0; i < 65536; i++)
			M.psis[i].metric = M.summs[i].metric = -1;
		for (uint32_t i = 0; i < M.nmetrics; i++) {
			uint64_t md = pmet + (uint64_t)i * szm, ppsi, pss;
			struct metric *m = &M.metrics[i];
			uint16_t npsi, nss;

			m->name = str_in(f, s[2], r64(f, md), "metric name", "Metrics");
			ppsi = r64(f, md + 8);
			pss = r64(f, md + 0x10);
			npsi = r16(f, md + 0x18);
			nss = r16(f, md + 0x1a);
			for (int k = 0; k < SC_OTHER; k++)
				m->prop[k] = m->stat[k] = -1;
			if (npsi) {
				aligned(f, ppsi, 8, "pScopeInsts");
				inside(f, s[2], ppsi, (uint64_t)szpsi * npsi, "scope instances",
				       "Metrics");
			}
			if (nss) {
				aligned(f, pss, 8, "pSummaries");
				inside(f, s[2], pss, (uint64_t)szss * nss, "summaries", "Metrics");
			}
			for (uint16_t j = 0; j < npsi; j++) {
				uint64_t e = ppsi + (uint64_t)j * szpsi, ps = r64(f, e);
				uint16_t id = r16(f, e + 8);
				int sc;

				check_array_elem(f, ps, pscopes, M.nscopes, szsc, "pScope");
				sc = (ps - pscopes) / szsc;
				if (M.psis[id].metric >= 0)
					die("meta.db: propMetricId %u used twice", id);
				M.psis[id] = (struct psi){ i, sc, id, M.nprop_dense++ };
				if (id + 1u > M.nprop_ids)
					M.nprop_ids = id + 1u;
				if (M.scopes[sc].kind < SC_OTHER)
					m->prop[M.scopes[sc].kind] = M.psis[id].dense;
				M.nscopeinsts++;
			}
			for (uint16_t j = 0; j < nss; j++) {
				uint64_t e = pss + (uint64_t)j * szss, ps = r64(f, e);
				struct summ su;
				int sc;

				check_array_elem(f, ps, pscopes, M.nscopes, szsc, "summary pScope");
				sc = (ps - pscopes) / szsc;
				su.metric = i;
				su.scope = sc;
				su.formula = str_in(f, s[2], r64(f, e + 8), "formula", "Metrics");
				su.combine = r8(f, e + 0x10);
				su.stat_id = r16(f, e + 0x12);
				if (su.combine > 2 && g_strict)
					die("meta.db: summary with unknown combine %u", su.combine);
				if (M.summs[su.stat_id].metric >= 0)
					die("meta.db: statMetricId %u used twice", su.stat_id);
				su.dense = M.nstat_dense++;
				M.summs[su.stat_id] = su;
				if (su.stat_id + 1u > M.nstat_ids)
					M.nstat_ids = su.stat_id + 1u;
				if (M.scopes[sc].kind < SC_OTHER && !strcmp(su.formula, "$$") &&
				    su.combine == 0)
					m->stat[M.scopes[sc].kind] = su.dense;
				M.nsummaries++;
			}
		}
	}

	/* Load Modules, Source Files, Functions: (pArray, n, u16 size) headers */
	{
		struct {
			int sect;
			uint64_t *pp, *pn, *psz;
			unsigned minsz;
			const char *what;
		} t[3] = {
			{ 5, &M.pmodules, &M.nmodules, &M.szmodule, 16, "modules" },
			{ 6, &M.pfiles, &M.nfiles, &M.szfile, 16, "files" },
			{ 7, &M.pfuncs, &M.nfuncs, &M.szfunc, 40, "functions" },
		};
		for (int i = 0; i < 3; i++) {
			struct region r = s[t[i].sect];

			inside(f, r, r.off, 0xe, t[i].what, names[t[i].sect]);
			*t[i].pp = r64(f, r.off);
			*t[i].pn = r32(f, r.off + 8);
			*t[i].psz = r16(f, r.off + 0xc);
			if (*t[i].psz < t[i].minsz || (g_strict && *t[i].psz != t[i].minsz))
				die("meta.db: %s entry size %llu", t[i].what,
				    (unsigned long long)*t[i].psz);
			if (*t[i].pn) {
				aligned(f, *t[i].pp, 8, t[i].what);
				inside(f, r, *t[i].pp, *t[i].pn * *t[i].psz, t[i].what,
				       names[t[i].sect]);
			}
		}
		for (uint64_t i = 0; i < M.nmodules; i++)
			if (!*module_path(f, M.pmodules + i * M.szmodule) && g_strict)
				die("meta.db: load module %llu has an empty path",
				    (unsigned long long)i);
		M.module_paths = xcalloc(M.nmodules, sizeof(*M.module_paths));
		for (uint64_t i = 0; i < M.nmodules; i++)
			M.module_paths[i] = module_path(f, M.pmodules + i * M.szmodule);
		for (uint64_t i = 0; i < M.nfiles; i++)
			str_in(f, M.strings, r64(f, M.pfiles + i * M.szfile + 8), "file path",
			       "Strings");
		for (uint64_t i = 0; i < M.nfuncs; i++) {
			uint64_t e = M.pfuncs + i * M.szfunc;
			uint64_t pn = r64(f, e), pm = r64(f, e + 8), pf = r64(f, e + 0x18);

			if (pn)
				str_in(f, M.strings, pn, "function name", "Strings");
			if (pm)
				check_array_elem(f, pm, M.pmodules, M.nmodules, M.szmodule,
						 "function pModule");
			if (pf)
				check_array_elem(f, pf, M.pfiles, M.nfiles, M.szfile,
						 "function pFile");
			if (!pn && !pm && !pf)
				die("meta.db: function %llu has no name, module or file",
				    (unsigned long long)i);
			if (pn && g_function &&
			    !strcmp(str_in(f, M.strings, pn, "function name", "Strings"), g_function))
				printf("procedure %s: module %s file %s line %u\n", g_function,
				       pm ? module_path(f, pm) : "-",
				       pf ? str_in(f, M.strings, r64(f, pf + 8), "file path", "Strings")
					  : "-",
				       r32(f, e + 0x20));
		}
	}

	/* Context Tree */
	{
		uint64_t h = s[3].off, pe;
		uint16_t ne;
		uint8_t sze;

		inside(f, s[3], h, 0xb, "Context header", "Context");
		pe = r64(f, h);
		ne = r16(f, h + 8);
		sze = r8(f, h + 0xa);
		if (sze < 0x20 || (g_strict && sze != 0x20))
			die("meta.db: szEntryPoint %u", sze);
		if (ne) {
			aligned(f, pe, 8, "pEntryPoints");
			inside(f, s[3], pe, (uint64_t)ne * sze, "entry points", "Context");
		}
		ctx_grow(1);
		for (uint16_t i = 0; i < ne; i++) {
			uint64_t e = pe + (uint64_t)i * sze;
			uint32_t id = r32(f, e + 0x10);
			uint16_t ep = r16(f, e + 0x14);

			if (ep > 2 && g_strict)
				die("meta.db: entry point %u has unknown type %u", id, ep);
			str_in(f, M.strings, r64(f, e + 0x18), "entry point name", "Strings");
			new_ctx(f, e, id, 0);
			M.ctxs[id].is_entry = 1;
			read_children(f, r64(f, e + 8), r64(f, e), id, 0);
		}
	}
	(void)o;
}

/* ------------------------------------------------------------------------
 * profile.db
 */
#define MAX_IDS 16

struct id {			/* one {Id} of an identifier tuple */
	uint8_t kind;
	uint16_t flags;
	uint32_t logical;
	uint64_t physical;
};

struct profile {
	uint64_t nvalues, pvalues, pidx;
	uint32_t nctxs;
	uint64_t ptuple;
	uint32_t flags;
	uint16_t nids;
	struct id ids[MAX_IDS];
	char tuple[256];
	uint64_t trace_samples;
	int has_trace;
};

static struct dbfile P;
static struct profile *profs;
static uint32_t nprofs;
static uint64_t unlisted_values;	/* values on ctxIds meta.db does not list */
static uint32_t max_data_ctx;		/* largest ctxId with values */

static int listed(uint32_t id)
{
	return id < M.nctx_alloc && M.ctxs[id].listed;
}

/* Place of an identifier kind in the hierarchy (NODE above CORE above
 * RANK above THREAD above the GPU kinds), -1 for a name we do not know. */
static int kind_level(uint8_t kind)
{
	static const char *const order[] = { "NODE", "CORE", "RANK", "THREAD", "GPUDEVICE",
					     "GPUCONTEXT", "GPUSTREAM" };

	for (int i = 0; i < 7; i++)
		if (!strcmp(M.kind_names[kind], order[i]))
			return i;
	return -1;
}

static void read_tuple(struct profile *pr, struct region r, int idx)
{
	uint64_t t = pr->ptuple;
	uint16_t n;
	size_t len = 0;
	int prev_level = -1;

	aligned(&P, t, 8, "id tuple");
	inside(&P, r, t, 8, "id tuple", "IdTuples");
	n = r16(&P, t);
	inside(&P, r, t, 8 + 16ull * n, "id tuple", "IdTuples");
	if (n == 0 || n > MAX_IDS)
		die("profile.db: profile %d has %u identifications", idx, n);
	pr->nids = n;
	pr->tuple[0] = 0;
	for (uint16_t i = 0; i < n; i++) {
		uint64_t e = t + 8 + 16ull * i;
		struct id *id = &pr->ids[i];
		const char *kn;
		int level;

		*id = (struct id){ r8(&P, e), r16(&P, e + 2), r32(&P, e + 4), r64(&P, e + 8) };
		if (id->kind >= M.nkinds)
			die("profile.db: profile %d id kind %u not in meta.db", idx, id->kind);
		kn = M.kind_names[id->kind];
		level = kind_level(id->kind);
		if (level >= 0 && level <= prev_level)
			die("profile.db: profile %d: %s out of order in its identifier tuple", idx,
			    kn);
		if (level >= 0)
			prev_level = level;
		if (!(id->flags & 1) && id->physical != id->logical && g_strict)
			die("profile.db: profile %d logical id with physicalId != logicalId", idx);
		if (g_strict && (id->flags & ~1u))
			die("profile.db: profile %d id flags 0x%x", idx, id->flags);
		if ((id->flags & 1) && !strcmp(kn, "NODE"))
			len += snprintf(pr->tuple + len, sizeof(pr->tuple) - len, "%s%s %u (0x%llx)",
					i ? " " : "", kn, id->logical,
					(unsigned long long)id->physical);
		else if (id->flags & 1)
			len += snprintf(pr->tuple + len, sizeof(pr->tuple) - len, "%s%s %u (%llu)",
					i ? " " : "", kn, id->logical,
					(unsigned long long)id->physical);
		else
			len += snprintf(pr->tuple + len, sizeof(pr->tuple) - len, "%s%s %u",
					i ? " " : "", kn, id->logical);
		if (len >= sizeof(pr->tuple))
			len = sizeof(pr->tuple) - 1;
	}
}

/* Order of thread profiles by the logical ids of their first @lv + 1
 * identifications (kinds, then logical ids), then by the physical id at
 * @lv if @by_phys; -1, 0, 1. */
static int g_lv, g_by_phys;

static int cmp_prefix(const struct profile *a, const struct profile *b, int lv)
{
	for (int i = 0; i <= lv; i++) {
		const struct id *x = &a->ids[i], *y = &b->ids[i];

		if (i >= a->nids || i >= b->nids)
			return (i < a->nids) - (i < b->nids);
		if (x->kind != y->kind)
			return x->kind < y->kind ? -1 : 1;
		if (x->logical != y->logical)
			return x->logical < y->logical ? -1 : 1;
	}
	return 0;
}

static int cmp_profiles(const void *pa, const void *pb)
{
	const struct profile *a = &profs[*(const uint32_t *)pa], *b = &profs[*(const uint32_t *)pb];
	int c = cmp_prefix(a, b, g_by_phys ? g_lv - 1 : g_lv);

	if (c || !g_by_phys)
		return c;
	if (a->ids[g_lv].physical != b->ids[g_lv].physical)
		return a->ids[g_lv].physical < b->ids[g_lv].physical ? -1 : 1;
	return cmp_prefix(a, b, g_lv);
}

static void sort_profiles(uint32_t *ix, uint32_t n, int lv, int by_phys)
{
	g_lv = lv;
	g_by_phys = by_phys;
	qsort(ix, n, sizeof(*ix), cmp_profiles);
}

struct rank_node {
	uint32_t rank, node, prof;
};

static int cmp_rank_node(const void *pa, const void *pb)
{
	const struct rank_node *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

/* A RANK (logical id) lies on one NODE. */
static void check_ranks(const uint32_t *ix, uint32_t n)
{
	const struct profile *p0 = &profs[1];
	int lr = -1, ln = -1;
	struct rank_node *rn;

	for (int l = 0; l < p0->nids; l++) {
		if (!strcmp(M.kind_names[p0->ids[l].kind], "RANK"))
			lr = l;
		else if (!strcmp(M.kind_names[p0->ids[l].kind], "NODE"))
			ln = l;
	}
	if (lr < 0 || ln < 0)
		return;
	rn = xcalloc(n, sizeof(*rn));
	for (uint32_t i = 0; i < n; i++)
		rn[i] = (struct rank_node){ profs[ix[i]].ids[lr].logical,
					    profs[ix[i]].ids[ln].logical, ix[i] };
	qsort(rn, n, sizeof(*rn), cmp_rank_node);
	for (uint32_t i = 1; i < n; i++)
		if (rn[i].rank == rn[i - 1].rank && rn[i].node != rn[i - 1].node)
			die("profile.db: RANK %u on NODE %u (profile %u) and NODE %u (profile %u)",
			    rn[i].rank, rn[i - 1].node, rn[i - 1].prof, rn[i].node, rn[i].prof);
	free(rn);
}

/*
 * --strict: the identifier tuples of the thread profiles (profiles 1..n-1)
 * have the same kinds; no two are equal (by kinds and logical ids); at each
 * level, profiles with the same logical ids up to it have the same physical
 * id there (one host id per NODE, one pid per RANK), and siblings (same
 * ids above) with different logical ids have different physical ids; a
 * RANK lies on one NODE only.
 */
static void check_tuples(void)
{
	uint32_t n = nprofs - 1, *ix = xcalloc(n, sizeof(*ix));
	const struct profile *p0 = &profs[1];

	for (uint32_t i = 0; i < n; i++) {
		const struct profile *p = &profs[i + 1];

		ix[i] = i + 1;
		if (p->nids != p0->nids)
			die("profile.db: profiles 1 and %u have tuples of %u and %u ids", i + 1,
			    p0->nids, p->nids);
		for (int l = 0; l < p->nids; l++)
			if (p->ids[l].kind != p0->ids[l].kind || p->ids[l].flags != p0->ids[l].flags)
				die("profile.db: profiles 1 and %u differ in kind or flags at id %d",
				    i + 1, l);
	}
	for (int lv = 0; n && lv < p0->nids; lv++) {
		sort_profiles(ix, n, lv, 0);
		for (uint32_t i = 1; i < n; i++) {
			const struct profile *a = &profs[ix[i - 1]], *b = &profs[ix[i]];

			if (cmp_prefix(a, b, lv))
				continue;
			if (lv == p0->nids - 1)
				die("profile.db: profiles %u and %u have the same tuple [%s]", ix[i - 1],
				    ix[i], b->tuple);
			if (a->ids[lv].physical != b->ids[lv].physical)
				die("profile.db: profiles %u and %u: one %s, two physical ids",
				    ix[i - 1], ix[i], M.kind_names[a->ids[lv].kind]);
		}
		sort_profiles(ix, n, lv, 1);
		for (uint32_t i = 1; i < n; i++) {
			const struct profile *a = &profs[ix[i - 1]], *b = &profs[ix[i]];

			if ((lv && cmp_prefix(a, b, lv - 1)) ||
			    a->ids[lv].physical != b->ids[lv].physical || !(a->ids[lv].flags & 1))
				continue;
			if (a->ids[lv].logical != b->ids[lv].logical)
				die("profile.db: profiles %u and %u: two %s ids, one physical id %llu",
				    ix[i - 1], ix[i], M.kind_names[a->ids[lv].kind],
				    (unsigned long long)a->ids[lv].physical);
		}
	}
	check_ranks(ix, n);
	free(ix);
}

/* Check the value block of profile @i. */
static void check_profile_block(uint32_t i)
{
	struct profile *pr = &profs[i];
	int summary = pr->flags & 1;
	uint32_t prev_ctx = 0;
	uint64_t prev_start = 0;

	if (!pr->nvalues && !pr->nctxs)
		return;
	aligned(&P, pr->pvalues, 2, "pValues");
	aligned(&P, pr->pidx, 4, "pCtxIndices");
	need(&P, pr->pvalues, pr->nvalues * 10, "values");
	need(&P, pr->pidx, pr->nctxs * 12ull, "ctx indices");
	if (pr->pidx < pr->pvalues + pr->nvalues * 10)
		die("profile.db: profile %u ctx indices overlap its values", i);
	if (g_strict && pr->pidx - (pr->pvalues + pr->nvalues * 10) >= 4)
		die("profile.db: profile %u has a gap between values and indices", i);
	if (pr->pidx + pr->nctxs * 12ull > P.sz - 8)
		die("profile.db: profile %u indices overlap the footer", i);
	if (pr->nctxs == 0 || pr->nvalues == 0)
		die("profile.db: profile %u has %llu values but %u contexts", i,
		    (unsigned long long)pr->nvalues, pr->nctxs);
	for (uint32_t c = 0; c < pr->nctxs; c++) {
		uint64_t e = pr->pidx + 12ull * c;
		uint32_t id = r32(&P, e);
		uint64_t start = r64(&P, e + 4);
		uint64_t end = c + 1 < pr->nctxs ? r64(&P, e + 16) : pr->nvalues;

		if (c && id <= prev_ctx)
			die("profile.db: profile %u ctx indices not sorted (%u after %u)", i, id,
			    prev_ctx);
		if (c == 0 && start != 0)
			die("profile.db: profile %u first startIndex %llu", i,
			    (unsigned long long)start);
		if (start < prev_start || end <= start || end > pr->nvalues)
			die("profile.db: profile %u ctx %u bad value range [%llu, %llu)", i, id,
			    (unsigned long long)start, (unsigned long long)end);
		if (id >= cct_nctxs)
			die("profile.db: profile %u ctxId %u beyond cct.db's %llu contexts", i, id,
			    (unsigned long long)cct_nctxs);
		if (id && !listed(id)) {
			if (g_strict)
				die("profile.db: profile %u has values for ctxId %u not in meta.db",
				    i, id);
			unlisted_values += end - start;
		}
		if (id > max_data_ctx)
			max_data_ctx = id;
		for (uint64_t v = start; v < end; v++) {
			uint64_t ve = pr->pvalues + 10 * v;
			uint16_t mid = r16(&P, ve);
			double val = rf64(&P, ve + 2);

			if (v > start && mid <= r16(&P, ve - 10))
				die("profile.db: profile %u ctx %u values not sorted by metric", i,
				    id);
			if (summary ? M.summs[mid].metric < 0 : M.psis[mid].metric < 0)
				die("profile.db: profile %u ctx %u unknown %s %u", i, id,
				    summary ? "statMetricId" : "propMetricId", mid);
			if (!isfinite(val) || (g_strict && val == 0))
				die("profile.db: profile %u ctx %u metric %u bad value %g", i, id, mid,
				    val);
		}
		prev_ctx = id;
		prev_start = start;
	}
}

/* Dense value lookup of one profile: vals[ctx * nids + id]. */
static double *load_profile(uint32_t i, uint32_t nctx, uint32_t nids)
{
	struct profile *pr = &profs[i];
	double *v = xcalloc((size_t)nctx * nids, sizeof(double));

	for (uint32_t c = 0; c < pr->nctxs; c++) {
		uint64_t e = pr->pidx + 12ull * c;
		uint32_t id = r32(&P, e);
		uint64_t start = r64(&P, e + 4);
		uint64_t end = c + 1 < pr->nctxs ? r64(&P, e + 16) : pr->nvalues;

		for (uint64_t k = start; k < end; k++) {
			uint16_t mid = r16(&P, pr->pvalues + 10 * k);

			int d = i == 0 ? M.summs[mid].dense : M.psis[mid].dense;

			if ((i == 0 ? M.summs[mid].metric : M.psis[mid].metric) >= 0 &&
			    (uint32_t)d < nids && id < nctx)
				v[(size_t)id * nids + d] = rf64(&P, pr->pvalues + 10 * k + 2);
		}
	}
	return v;
}

static int close_enough(double a, double b)
{
	return fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b)) + 1e-12;
}

static void read_profiles(void)
{
	static const char *const names[] = { "ProfileInfos", "IdTuples" };
	static const unsigned al[] = { 8, 8 };
	struct region s[2];
	uint64_t h;
	uint8_t szp;

	map_file(&P, "profile.db", 1);
	check_header(&P, "prof", "_prof.db", 2, s, names, al);
	h = s[0].off;
	inside(&P, s[0], h, 0xd, "ProfileInfos header", "ProfileInfos");
	uint64_t pp = r64(&P, h);

	nprofs = r32(&P, h + 8);
	szp = r8(&P, h + 0xc);
	if (szp < 0x2c || (g_strict && szp != 0x30))
		die("profile.db: szProfile %u", szp);
	if (nprofs < 1)
		die("profile.db: no profiles (the summary profile is required)");
	aligned(&P, pp, 8, "pProfiles");
	inside(&P, s[0], pp, (uint64_t)nprofs * szp, "profile infos", "ProfileInfos");
	profs = xcalloc(nprofs, sizeof(*profs));
	for (uint32_t i = 0; i < nprofs; i++) {
		uint64_t e = pp + (uint64_t)i * szp;
		struct profile *pr = &profs[i];

		pr->nvalues = r64(&P, e);
		pr->pvalues = r64(&P, e + 8);
		pr->nctxs = r32(&P, e + 0x10);
		pr->pidx = r64(&P, e + 0x18);
		pr->ptuple = r64(&P, e + 0x20);
		pr->flags = r32(&P, e + 0x28);
		if (i == 0) {
			if (!(pr->flags & 1))
				die("profile.db: profile 0 is not a summary profile");
			if (pr->ptuple)
				die("profile.db: summary profile has an id tuple");
			snprintf(pr->tuple, sizeof(pr->tuple), "SUMMARY");
		} else {
			if (g_strict && (pr->flags & 1))
				die("profile.db: profile %u is a summary profile", i);
			if (!pr->ptuple)
				die("profile.db: profile %u has no id tuple", i);
			read_tuple(pr, s[1], i);
		}
		check_profile_block(i);
	}
	if (unlisted_values && g_strict)
		die("profile.db: values for ctxIds not in meta.db");
	if (nprofs > 1 && g_strict)
		check_tuples();
}

/* Summary == sum over threads, and inclusive values never above the parent. */
static void check_values(void)
{
	uint32_t nctx = cct_nctxs;
	uint32_t nids = M.nprop_dense > M.nstat_dense ? M.nprop_dense : M.nstat_dense;
	double *sum = xcalloc((size_t)nctx * (nids ? nids : 1), sizeof(double));
	double *summ = NULL;

	if (!nids)
		return;
	ctx_grow(nctx);
	for (uint32_t i = 0; i < nprofs; i++) {
		double *v = load_profile(i, nctx, nids);
		int summary = i == 0;

		for (uint32_t m = 0; m < M.nmetrics; m++) {
			int ex = summary ? M.metrics[m].stat[SC_EXECUTION]
					 : M.metrics[m].prop[SC_EXECUTION];
			if (ex < 0)
				continue;
			for (uint32_t c = 1; c < nctx; c++) {
				double cv, pv;

				if (!M.ctxs[c].listed)
					continue;
				cv = v[(size_t)c * nids + ex];
				pv = v[(size_t)M.ctxs[c].parent * nids + ex];
				if (M.ctxs[c].parent == 0 && pv == 0 && !g_strict)
					continue;	/* no global value stored */
				if (cv > pv && !close_enough(cv, pv))
					die("profile.db: profile %u metric %s: inclusive value %g of ctxId %u above its parent %u (%g)",
					    i, M.metrics[m].name, cv, c, M.ctxs[c].parent, pv);
			}
		}
		if (!summary)
			for (size_t k = 0; k < (size_t)nctx * nids; k++)
				sum[k] += v[k];
		else
			summ = v;
		if (!summary)
			free(v);
	}
	if (nprofs < 2)
		goto out;
	for (uint32_t id = 0; id < M.nstat_ids; id++) {
		struct summ *su = &M.summs[id];
		int kind, pid;

		if (su->metric < 0 || strcmp(su->formula, "$$") || su->combine != 0)
			continue;
		kind = M.scopes[su->scope].kind;
		/* hpcprof's lex_aware summaries are not plain sums */
		if (kind == SC_OTHER || (kind == SC_LEXAWARE && !g_strict))
			continue;
		pid = M.metrics[su->metric].prop[kind];
		if (pid < 0)
			continue;
		for (uint32_t c = 0; c < nctx; c++) {
			double a = summ[(size_t)c * nids + su->dense];
			double b = sum[(size_t)c * nids + pid];

			if (!close_enough(a, b))
				die("profile.db: summary %s/%s of ctxId %u is %.17g, sum over threads %.17g",
				    M.metrics[su->metric].name, M.scopes[su->scope].name, c, a, b);
		}
	}
out:
	free(summ);
	free(sum);
}

/* ------------------------------------------------------------------------
 * cct.db: per-context blocks, the transpose of the thread profiles
 */
static void read_cct(void)
{
	uint64_t total = 0, ptotal = 0;

	if (cct_nctxs < (uint64_t)M.max_ctx + 1 || cct_nctxs < (uint64_t)max_data_ctx + 1)
		die("cct.db: %llu contexts, but ctxIds go up to %u", (unsigned long long)cct_nctxs,
		    M.max_ctx > max_data_ctx ? M.max_ctx : max_data_ctx);
	for (uint64_t c = 0; c < cct_nctxs; c++) {
		uint64_t e = cct_pctxs + c * cct_szctx;
		uint64_t nv = r64(&C, e), pv = r64(&C, e + 8), pi = r64(&C, e + 0x18);
		uint16_t nm = r16(&C, e + 0x10);

		if (!nv && !nm)
			continue;
		if (!nv || !nm)
			die("cct.db: ctx %llu has %llu values but %u metrics", (unsigned long long)c,
			    (unsigned long long)nv, nm);
		aligned(&C, pv, 4, "cct pValues");
		aligned(&C, pi, 2, "cct pMetricIndices");
		need(&C, pv, nv * 12, "cct values");
		need(&C, pi, nm * 10ull, "cct metric indices");
		if (pi < pv + nv * 12)
			die("cct.db: ctx %llu metric indices overlap its values",
			    (unsigned long long)c);
		if (pi + nm * 10ull > C.sz - 8)
			die("cct.db: ctx %llu indices overlap the footer", (unsigned long long)c);
		if (c && !listed(c) && g_strict)
			die("cct.db: values for ctxId %llu not in meta.db", (unsigned long long)c);
		for (uint16_t m = 0; m < nm; m++) {
			uint64_t ie = pi + 10ull * m;
			uint16_t mid = r16(&C, ie);
			uint64_t start = r64(&C, ie + 2);
			uint64_t end = m + 1 < nm ? r64(&C, ie + 12) : nv;

			if (m && mid <= r16(&C, ie - 10))
				die("cct.db: ctx %llu metric indices not sorted",
				    (unsigned long long)c);
			if (m == 0 && start)
				die("cct.db: ctx %llu first startIndex %llu", (unsigned long long)c,
				    (unsigned long long)start);
			if (end <= start || end > nv)
				die("cct.db: ctx %llu metric %u bad value range",
				    (unsigned long long)c, mid);
			if (M.psis[mid].metric < 0)
				die("cct.db: ctx %llu unknown propMetricId %u",
				    (unsigned long long)c, mid);
			for (uint64_t v = start; v < end; v++) {
				uint32_t pidx = r32(&C, pv + 12 * v);

				if (v > start && pidx <= r32(&C, pv + 12 * (v - 1)))
					die("cct.db: ctx %llu metric %u values not sorted by profile",
					    (unsigned long long)c, mid);
				if (pidx == 0 || pidx >= nprofs)
					die("cct.db: ctx %llu metric %u bad profIndex %u",
					    (unsigned long long)c, mid, pidx);
			}
		}
		total += nv;
	}
	/* every thread value of profile.db appears in cct.db, bit for bit */
	for (uint32_t i = 1; i < nprofs; i++) {
		struct profile *pr = &profs[i];

		for (uint32_t c = 0; c < pr->nctxs; c++) {
			uint64_t e = pr->pidx + 12ull * c;
			uint32_t id = r32(&P, e);
			uint64_t start = r64(&P, e + 4);
			uint64_t end = c + 1 < pr->nctxs ? r64(&P, e + 16) : pr->nvalues;
			uint64_t ce = cct_pctxs + (uint64_t)id * cct_szctx;
			uint64_t nv = r64(&C, ce), pv = r64(&C, ce + 8), pi = r64(&C, ce + 0x18);
			uint16_t nm = r16(&C, ce + 0x10);

			for (uint64_t k = start; k < end; k++) {
				uint16_t mid = r16(&P, pr->pvalues + 10 * k);
				int lo = 0, hi = nm - 1, found = -1;
				uint64_t a, b;

				ptotal++;
				while (lo <= hi) {
					int mi = (lo + hi) / 2;
					uint16_t x = r16(&C, pi + 10ull * mi);

					if (x == mid) {
						found = mi;
						break;
					}
					if (x < mid)
						lo = mi + 1;
					else
						hi = mi - 1;
				}
				if (found < 0)
					die("cct.db: ctx %u lacks metric %u of profile %u", id, mid, i);
				a = r64(&C, pi + 10ull * found + 2);
				b = found + 1 < nm ? r64(&C, pi + 10ull * (found + 1) + 2) : nv;
				while (a < b) {	/* binary search the profile */
					uint64_t mi = a + (b - a) / 2;
					uint32_t x = r32(&C, pv + 12 * mi);

					if (x == i)
						break;
					if (x < i)
						a = mi + 1;
					else
						b = mi;
				}
				if (a >= b)
					die("cct.db: ctx %u metric %u lacks profile %u", id, mid, i);
				a = a + (b - a) / 2;
				if (memcmp(C.p + pv + 12 * a + 4, P.p + pr->pvalues + 10 * k + 2, 8))
					die("cct.db: ctx %u metric %u profile %u value differs from profile.db",
					    id, mid, i);
			}
		}
	}
	if (total != ptotal)
		die("cct.db: %llu values, profile.db threads have %llu", (unsigned long long)total,
		    (unsigned long long)ptotal);
}

/* ------------------------------------------------------------------------
 * trace.db
 */
static uint64_t nlines, nsamples;

static void read_trace(void)
{
	static const char *const names[] = { "CtxTraces" };
	static const unsigned al[] = { 8 };
	struct dbfile T;
	struct region s[1];
	uint64_t h, pt, mint, maxt, seen_min = UINT64_MAX, seen_max = 0;
	uint32_t nt;
	uint8_t szt;

	if (!map_file(&T, "trace.db", 0)) {
		return;
	}
	check_header(&T, "trce", "trace.db", 1, s, names, al);
	h = s[0].off;
	inside(&T, s[0], h, 0x20, "CtxTraces header", "CtxTraces");
	pt = r64(&T, h);
	nt = r32(&T, h + 8);
	szt = r8(&T, h + 0xc);
	mint = r64(&T, h + 0x10);
	maxt = r64(&T, h + 0x18);
	if (szt < 0x18 || (g_strict && szt != 0x18))
		die("trace.db: szTrace %u", szt);
	if (nt) {
		aligned(&T, pt, 8, "pTraces");
		inside(&T, s[0], pt, (uint64_t)nt * szt, "trace headers", "CtxTraces");
	}
	if (nt > nprofs - 1 || (g_strict && nt != nprofs - 1))
		die("trace.db: %u trace lines for %u thread profiles", nt, nprofs - 1);
	for (uint32_t i = 0; i < nt; i++) {
		uint64_t e = pt + (uint64_t)i * szt;
		uint32_t pidx = r32(&T, e);
		uint64_t ps = r64(&T, e + 8), pe = r64(&T, e + 0x10), prev = 0;
		uint32_t prev_ctx = 1;

		if (pidx == 0 || pidx >= nprofs)
			die("trace.db: trace %u has bad profIndex %u", i, pidx);
		if (g_strict && pidx != i + 1)
			die("trace.db: trace header %u describes profile %u, not %u", i, pidx, i + 1);
		if (pe < ps || (pe - ps) % 12)
			die("trace.db: trace %u bad line [0x%llx, 0x%llx)", i,
			    (unsigned long long)ps, (unsigned long long)pe);
		if (ps == pe)
			continue;
		aligned(&T, ps, 4, "trace line");
		need(&T, ps, pe - ps, "trace line");
		if (pe > T.sz - 8)
			die("trace.db: trace %u overlaps the footer", i);
		if (ps < s[0].off + s[0].sz && pe > s[0].off)
			die("trace.db: trace %u overlaps the header section", i);
		nlines++;
		profs[pidx].has_trace = 1;
		for (uint64_t o = ps; o < pe; o += 12) {
			uint64_t t = r64(&T, o);
			uint32_t id = r32(&T, o + 8);

			if (o > ps && t < prev)
				die("trace.db: trace %u not sorted at element %llu", i,
				    (unsigned long long)(o - ps) / 12);
			if (t < mint || t > maxt)
				die("trace.db: trace %u timestamp %llu outside [%llu, %llu]", i,
				    (unsigned long long)t, (unsigned long long)mint,
				    (unsigned long long)maxt);
			if (id && !listed(id))
				die("trace.db: trace %u names ctxId %u not in meta.db", i, id);
			if (id == 0 && prev_ctx == 0)
				die("trace.db: trace %u has consecutive ctxId 0 elements", i);
			if (id) {
				profs[pidx].trace_samples++;
				nsamples++;
			}
			if (t < seen_min)
				seen_min = t;
			if (t > seen_max)
				seen_max = t;
			prev = t;
			prev_ctx = id;
		}
	}
	if (g_strict && nlines && (seen_min != mint || seen_max != maxt))
		die("trace.db: min/maxTimestamp [%llu, %llu] not tight [%llu, %llu]",
		    (unsigned long long)mint, (unsigned long long)maxt,
		    (unsigned long long)seen_min, (unsigned long long)seen_max);
	if (nlines)
		printf("trace: %llu lines, %llu samples, %llu .. %llu ns\n",
		       (unsigned long long)nlines, (unsigned long long)nsamples,
		       (unsigned long long)mint, (unsigned long long)maxt);
}

/* ------------------------------------------------------------------------
 * metrics/default.yaml: each `inputs:` entry names one summary statistic
 */
static void check_yaml(void)
{
	char path[4096], line[1024];
	char metric[256] = "", scope[64] = "", formula[64] = "", combine[16] = "";
	int in_inputs = 0, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/metrics/default.yaml", g_dir);
	f = fopen(path, "r");
	if (!f) {
		if (g_strict)
			die("metrics/default.yaml: %s", strerror(errno));
		return;
	}
	for (;;) {
		char *l = fgets(line, sizeof(line), f), *k, *v;
		int flush = !l || (l && (strstr(l, "- &") || (l[0] != ' ' && l[0] != '\n')));

		if (flush && metric[0]) {
			int hits = 0;

			for (uint32_t id = 0; id < M.nstat_ids; id++) {
				struct summ *su = &M.summs[id];
				static const char *const comb[] = { "sum", "min", "max" };

				if (su->metric < 0 || su->combine > 2)
					continue;
				if (!strcasecmp(M.metrics[su->metric].name, metric) &&
				    !strcasecmp(M.scopes[su->scope].name, scope) &&
				    !strcasecmp(su->formula, formula) &&
				    !strcasecmp(comb[su->combine], combine))
					hits++;
			}
			if (hits != 1)
				die("metrics/default.yaml: input %s/%s/%s/%s matches %d summaries",
				    metric, scope, formula, combine, hits);
			metric[0] = scope[0] = formula[0] = combine[0] = 0;
			n++;
		}
		if (!l)
			break;
		l[strcspn(l, "\n")] = 0;
		if (l[0] != ' ' && l[0])
			in_inputs = !strncmp(l, "inputs:", 7);
		if (!in_inputs)
			continue;
		k = l + strspn(l, " -");
		v = strchr(k, ':');
		if (!v || *k == '&')
			continue;
		*v++ = 0;
		v += strspn(v, " ");
		if (!strcmp(k, "metric"))
			snprintf(metric, sizeof(metric), "%s", v);
		else if (!strcmp(k, "scope"))
			snprintf(scope, sizeof(scope), "%s", v);
		else if (!strcmp(k, "formula"))
			snprintf(formula, sizeof(formula), "%s", v);
		else if (!strcmp(k, "combine"))
			snprintf(combine, sizeof(combine), "%s", v);
	}
	fclose(f);
	if (!n)
		die("metrics/default.yaml: no inputs");
}

/* ------------------------------------------------------------------------
 * Top functions
 */
struct fstat {
	double excl, incl;
	int label;
};

static int cmp_fstat(const void *a, const void *b)
{
	const struct fstat *x = a, *y = b;

	if (x->excl != y->excl)
		return x->excl < y->excl ? 1 : -1;
	return strcmp(M.labels[x->label], M.labels[y->label]);
}

/* Does an ancestor of @c carry the same label? (then @c is recursion) */
static int recursive(uint32_t c)
{
	int l = M.ctxs[c].label;

	for (uint32_t p = M.ctxs[c].parent; p; p = M.ctxs[p].parent)
		if (M.ctxs[p].label == l)
			return 1;
	return 0;
}

/* Per-label exclusive (function scope) and inclusive (execution) values of
 * dense value array @v with ids @fid/@xid; returns the total. */
static double function_stats(const double *v, uint32_t nids, int fid, int xid,
			     struct fstat *fs)
{
	double total = 0;

	for (uint32_t l = 0; l < M.nlabels; l++)
		fs[l] = (struct fstat){ 0, 0, l };
	for (uint32_t c = 1; c <= M.max_ctx; c++) {
		int l;

		if (!M.ctxs[c].listed)
			continue;
		if (M.ctxs[c].is_entry)
			total += v[(size_t)c * nids + xid];
		l = M.ctxs[c].label;
		if (l < 0)
			continue;
		fs[l].excl += v[(size_t)c * nids + fid];
		if (!recursive(c))
			fs[l].incl += v[(size_t)c * nids + xid];
	}
	if (v[xid] > 0)
		total = v[xid];		/* the global context holds the total */
	return total;
}

/* ------------------------------------------------------------------------
 * Load modules as hpcviewer's flat view sums them (FlatViewScopeVisitor4
 * on the scopes ScopeContextFactory makes of meta.db): a function context
 * reached by a call is a call site of its function, an instruction context
 * a call site of "module@offset"; each call site adds its exclusive
 * (function scope) value to its own function's module.  Every context also
 * belongs to the module of its enclosing function (the nearest call site
 * or instruction above it; its own for a call site right below an entry
 * point), and a module's inclusive value sums the execution values of the
 * contexts that belong to it (either way) and have no ancestor that does:
 * recursion through a module counts once.  Exclusive can then never exceed
 * inclusive, unless a context's exclusive time is counted twice (e.g. an
 * instruction context lexically nested in a function context: both add it).
 */
struct mod_walk {
	const double *v;
	uint32_t nids;
	int fid, xid;
	double *excl, *incl;
	uint32_t *depth;	/* [module]: contexts on the current path it holds */
};

static void mod_enter(struct mod_walk *w, int32_t m, uint32_t c, int excl)
{
	if (m < 0)
		return;
	if (!w->depth[m]++)
		w->incl[m] += w->v[(size_t)c * w->nids + w->xid];
	if (excl)
		w->excl[m] += w->v[(size_t)c * w->nids + w->fid];
}

static void mod_leave(struct mod_walk *w, int32_t m)
{
	if (m >= 0)
		w->depth[m]--;
}

/* Context @c below a context whose enclosing function is in module @enc. */
static void mod_visit(struct mod_walk *w, uint32_t c, int32_t enc)
{
	const struct ctx *x = &M.ctxs[c];
	int call = x->lexical_type == 0 && x->relation != 0;
	int insn = x->lexical_type == 3;
	int32_t own = x->module, in = enc, below = enc;

	if (x->lexical_type == 0) {
		below = own;
		if (!call || M.ctxs[x->parent].is_entry)
			in = own;
	} else if (insn) {
		below = own;
	}
	mod_enter(w, in, c, 0);
	if (call || insn)
		mod_enter(w, own, c, 1);
	for (uint32_t k = x->first_child; k; k = M.ctxs[k].next_sibling)
		mod_visit(w, k, below);
	if (call || insn)
		mod_leave(w, own);
	mod_leave(w, in);
}

/* Per-module exclusive and inclusive values of dense value array @v. */
static void module_stats(const double *v, uint32_t nids, int fid, int xid, double *excl,
			 double *incl)
{
	struct mod_walk w = { v, nids, fid, xid, excl, incl, NULL };

	w.depth = xcalloc(M.nmodules, sizeof(*w.depth));
	memset(excl, 0, M.nmodules * sizeof(*excl));
	memset(incl, 0, M.nmodules * sizeof(*incl));
	for (uint32_t e = M.ctxs[0].first_child; e; e = M.ctxs[e].next_sibling)
		for (uint32_t c = M.ctxs[e].first_child; c; c = M.ctxs[c].next_sibling)
			mod_visit(&w, c, -1);
	free(w.depth);
}

/* "module EXCL INCL PATH" per module with time (--modules); every module's
 * exclusive must be at most its inclusive. */
static void report_modules(const double *v, uint32_t nids, int fid, int xid, int print)
{
	double *excl = xcalloc(M.nmodules, sizeof(double));
	double *incl = xcalloc(M.nmodules, sizeof(double));

	module_stats(v, nids, fid, xid, excl, incl);
	for (uint64_t m = 0; m < M.nmodules; m++) {
		if (excl[m] > incl[m] && !close_enough(excl[m], incl[m]))
			die("load module %s: exclusive %g above inclusive %g in hpcviewer's flat view",
			    M.module_paths[m], excl[m], incl[m]);
		if (print && (excl[m] > 0 || incl[m] > 0))
			printf("module %12.6f %12.6f %s\n", excl[m], incl[m], M.module_paths[m]);
	}
	free(excl);
	free(incl);
}

static int cmp_fstat_incl(const void *a, const void *b)
{
	const struct fstat *x = a, *y = b;

	if (x->incl != y->incl)
		return x->incl < y->incl ? 1 : -1;
	return strcmp(M.labels[x->label], M.labels[y->label]);
}

static void print_top(const char *what, const struct fstat *fs, double total, int top,
		      int incl)
{
	printf("%s (%s): total %.6f\n", incl ? "top inclusive" : "top functions", what, total);
	printf("  %7s %12s %7s %12s  %s\n", "excl%", "excl", "incl%", "incl", "function");
	for (int i = 0; i < top && i < (int)M.nlabels; i++) {
		if ((incl ? fs[i].incl : fs[i].excl) <= 0)
			break;
		printf("  %7.2f %12.6f %7.2f %12.6f  %s\n",
		       total > 0 ? 100 * fs[i].excl / total : 0, fs[i].excl,
		       total > 0 ? 100 * fs[i].incl / total : 0, fs[i].incl,
		       M.labels[fs[i].label]);
	}
}

/* "function NAME profile P [tuple]: excl X% incl Y%" (unsorted @fs) */
static void print_function(uint32_t prof, const struct fstat *fs, double total)
{
	double ex = 0, in = 0;

	for (uint32_t l = 0; l < M.nlabels; l++)
		if (!strcmp(M.labels[fs[l].label], g_function)) {
			ex += fs[l].excl;
			in += fs[l].incl;
		}
	printf("function %s profile %u [%s]: excl %.2f%% incl %.2f%%\n", g_function, prof,
	       profs[prof].tuple, total > 0 ? 100 * ex / total : 0,
	       total > 0 ? 100 * in / total : 0);
}

static void report(int top, int threads, int modules)
{
	uint32_t nctx = cct_nctxs;
	uint32_t nids = M.nprop_dense > M.nstat_dense ? M.nprop_dense : M.nstat_dense;
	struct metric *m = NULL;
	struct fstat *fs, *ft;
	double *sv, *tv, ts, tt;

	if (nprofs < 2) {
		printf("no thread profiles: no top functions\n");
		return;
	}
	sv = load_profile(0, nctx, nids);
	fs = xcalloc(M.nlabels, sizeof(*fs));
	/* CPUTIME if there is one, else the first metric with a non-zero total */
	for (int pass = 0; pass < 2 && !m; pass++)
		for (uint32_t i = 0; i < M.nmetrics && !m; i++) {
			struct metric *c = &M.metrics[i];

			if (c->prop[SC_FUNCTION] < 0 || c->prop[SC_EXECUTION] < 0 ||
			    c->stat[SC_FUNCTION] < 0 || c->stat[SC_EXECUTION] < 0)
				continue;
			if (pass == 0 && strncmp(c->name, "CPUTIME", 7))
				continue;
			if (function_stats(sv, nids, c->stat[SC_FUNCTION], c->stat[SC_EXECUTION],
					   fs) > 0)
				m = c;
		}
	if (!m) {
		printf("no metric with function and execution scopes: no top functions\n");
		return;
	}
	printf("metric: %s\n", m->name);
	ft = xcalloc(M.nlabels, sizeof(*ft));
	tv = xcalloc((size_t)nctx * nids, sizeof(double));
	for (uint32_t i = 1; i < nprofs; i++) {
		double *v = load_profile(i, nctx, nids);

		for (size_t k = 0; k < (size_t)nctx * nids; k++)
			tv[k] += v[k];
		if (threads) {
			double t = function_stats(v, nids, m->prop[SC_FUNCTION],
						  m->prop[SC_EXECUTION], ft);

			printf("profile %u [%s]: total %.6f", i, profs[i].tuple, t);
			if (profs[i].has_trace)
				printf(", trace samples %llu",
				       (unsigned long long)profs[i].trace_samples);
			printf("\n");
			if (g_function)
				print_function(i, ft, t);
			qsort(ft, M.nlabels, sizeof(*ft), cmp_fstat);
			for (int k = 0; k < top && k < (int)M.nlabels && ft[k].excl > 0; k++)
				printf("    %7.2f %7.2f  %s\n", t > 0 ? 100 * ft[k].excl / t : 0,
				       t > 0 ? 100 * ft[k].incl / t : 0, M.labels[ft[k].label]);
		}
		free(v);
	}
	ts = function_stats(sv, nids, m->stat[SC_FUNCTION], m->stat[SC_EXECUTION], fs);
	tt = function_stats(tv, nids, m->prop[SC_FUNCTION], m->prop[SC_EXECUTION], ft);
	for (uint32_t l = 0; l < M.nlabels; l++)
		if (!close_enough(fs[l].excl, ft[l].excl) || !close_enough(fs[l].incl, ft[l].incl))
			die("function %s: summary %g/%g, sum over threads %g/%g", M.labels[l],
			    fs[l].excl, fs[l].incl, ft[l].excl, ft[l].incl);
	if (g_function)
		print_function(0, fs, ts);
	report_modules(sv, nids, m->stat[SC_FUNCTION], m->stat[SC_EXECUTION], modules);
	qsort(fs, M.nlabels, sizeof(*fs), cmp_fstat);
	qsort(ft, M.nlabels, sizeof(*ft), cmp_fstat);
	print_top("summary", fs, ts, top, 0);
	print_top("sum over threads", ft, tt, top, 0);
	qsort(fs, M.nlabels, sizeof(*fs), cmp_fstat_incl);
	print_top("summary", fs, ts, top, 1);
	free(fs);
	free(ft);
	free(sv);
	free(tv);
}

int main(int argc, char **argv)
{
	int top = 10, threads = 0, describe = 0, modules = 0, i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--strict"))
			g_strict = 1;
		else if (!strcmp(argv[i], "--threads"))
			threads = 1;
		else if (!strcmp(argv[i], "--top") && i + 1 < argc)
			top = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--function") && i + 1 < argc)
			g_function = argv[++i];
		else if (!strcmp(argv[i], "--description"))
			describe = 1;
		else if (!strcmp(argv[i], "--modules"))
			modules = 1;
		else
			break;
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: hpcdb [--strict] [--threads] [--top N] [--function NAME] [--description] [--modules] DIR\n");
		return 2;
	}
	g_dir = argv[i];
	read_cct_header();
	ctx_grow(cct_nctxs);
	read_meta();
	read_profiles();
	check_values();
	read_cct();
	printf("%s: ok: %u profiles, %u contexts listed (%llu values on unlisted ctxIds), %u metrics, %u summaries\n",
	       g_dir, nprofs, M.nlisted, (unsigned long long)unlisted_values, M.nmetrics,
	       M.nsummaries);
	printf("title: %s\n", M.title);
	if (describe)
		printf("description:\n%s\n", M.description);
	read_trace();
	check_yaml();
	report(top, threads, modules);
	return 0;
}
