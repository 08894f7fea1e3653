// SPDX-License-Identifier: BSD-2-Clause
/*
 * merge/raw_read.c - opens and checks a raw measurement (see raw_read.h):
 * the header, the section index, and each table section, parsed in place
 * from its payload (kept in memory; strings and addresses point into it).
 * The event records are checked by raw_events.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "merge/raw_parse.h"
#include "merge/raw_read.h"

/* Where each known section is: EVENTS .. USER_SYMBOLS are in every
 * version-1 file, INTERP_SYMBOLS in those written since it was added. */
struct section_index {
	uint64_t off[RAW_SEC_INTERP_SYMBOLS + 1];	/* payload offset, 0 if absent */
	uint64_t len[RAW_SEC_INTERP_SYMBOLS + 1];
};

static const char *const section_names[] = {
	[RAW_SEC_EVENTS] = "events", [RAW_SEC_RUN] = "run", [RAW_SEC_PROCESSES] = "processes",
	[RAW_SEC_THREADS] = "threads", [RAW_SEC_STACKS] = "stacks", [RAW_SEC_COUNTS] = "counts",
	[RAW_SEC_KERNEL_SYMBOLS] = "kernel symbols", [RAW_SEC_USER_SYMBOLS] = "user symbols",
	[RAW_SEC_INTERP_SYMBOLS] = "Python symbols",
};

static const char *section_name(uint32_t type)
{
	return type <= RAW_SEC_INTERP_SYMBOLS && section_names[type] ? section_names[type]
								     : "unknown";
}

static int why_fmt(char *why, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int why_fmt(char *why, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, RAW_WHY_SIZE, fmt, ap);
	va_end(ap);
	return err;
}

static int read_at(FILE *f, uint64_t off, void *p, size_t n)
{
	if (fseeko(f, (off_t)off, SEEK_SET) || fread(p, 1, n, f) != n)
		return -EIO;
	return 0;
}

static const char *machine_name(uint16_t m)
{
	switch (m) {
	case 3: return "i386";
	case 40: return "arm";
	case 62: return "x86_64";
	case 183: return "aarch64";
	case 243: return "riscv";
	case 21: return "ppc64";
	case 22: return "s390";
	default: return "an unknown machine";
	}
}

static int check_header(const uint8_t h[RAW_HEADER_SIZE], uint64_t size, char *why)
{
	uint32_t version, hsize;
	uint16_t machine;

	memcpy(&version, h + 8, 4);
	memcpy(&machine, h + 14, 2);
	memcpy(&hsize, h + 16, 4);
	version = le32toh(version);
	machine = le16toh(machine);
	hsize = le32toh(hsize);
	if (version != RAW_VERSION)
		return why_fmt(why, -EPROTONOSUPPORT, "raw format version %u, this bpfprof reads "
			       "version %u only", version, RAW_VERSION);
	if (h[12] != RAW_ELFCLASS64 || h[13] != RAW_ELFDATA2LSB || machine != RAW_EM_X86_64)
		return why_fmt(why, -ENOEXEC, "recorded on %s (%s-bit, %s-endian, ELF machine %u); "
			       "this bpfprof reads x86_64 measurements only",
			       machine_name(machine), h[12] == 1 ? "32" : h[12] == 2 ? "64" : "?",
			       h[13] == RAW_ELFDATA2MSB ? "big" : h[13] == 1 ? "little" : "?",
			       machine);
	if (hsize != RAW_HEADER_SIZE || size < RAW_HEADER_SIZE)
		return why_fmt(why, -EBADMSG, "bad header size %u", hsize);
	return 0;
}

/* Walk the sections up to the end marker, noting each table's place. */
static int index_sections(struct raw_file *rf, struct section_index *ix, char *why)
{
	uint64_t off = RAW_HEADER_SIZE;

	for (;;) {
		uint8_t sh[RAW_SECTION_HEADER_SIZE];
		uint32_t type;
		uint64_t len;

		if (off == rf->size)
			return why_fmt(why, -EBADMSG, "truncated: no end marker after %llu bytes",
				       (unsigned long long)off);
		if (rf->size - off < RAW_SECTION_HEADER_SIZE ||
		    read_at(rf->f, off, sh, sizeof(sh)))
			return why_fmt(why, -EBADMSG, "truncated inside a section header at byte %llu",
				       (unsigned long long)off);
		memcpy(&type, sh, 4);
		memcpy(&len, sh + 8, 8);
		type = le32toh(type);
		len = le64toh(len);
		off += RAW_SECTION_HEADER_SIZE;
		if (type == RAW_SEC_END) {
			if (len || off != rf->size)
				return why_fmt(why, -EBADMSG, "bytes after the end marker");
			break;
		}
		if (len > rf->size - off)
			return why_fmt(why, -EBADMSG, "truncated: the %s section needs %llu bytes, "
				       "%llu left", section_name(type), (unsigned long long)len,
				       (unsigned long long)(rf->size - off));
		if (type >= RAW_SEC_EVENTS && type <= RAW_SEC_INTERP_SYMBOLS) {
			if (ix->off[type])
				return why_fmt(why, -EBADMSG, "two %s sections", section_names[type]);
			ix->off[type] = off;
			ix->len[type] = len;
		}
		off += len;
	}
	for (int t = RAW_SEC_EVENTS; t <= RAW_SEC_USER_SYMBOLS; t++)	/* INTERP_: optional */
		if (!ix->off[t])
			return why_fmt(why, -EBADMSG, "no %s section", section_names[t]);
	return 0;
}

/* Section @type's payload, read into memory kept by @rf. */
static int load_payload(struct raw_file *rf, const struct section_index *ix, int type,
			struct rd *r)
{
	uint8_t *p = malloc(ix->len[type] + 1);

	if (!p)
		return -ENOMEM;
	if (read_at(rf->f, ix->off[type], p, ix->len[type])) {
		free(p);
		return -EIO;
	}
	rf->payloads[type] = p;
	*r = (struct rd){ .p = p, .len = ix->len[type] };
	return 0;
}

static int parse_run(struct raw_file *rf, struct rd *r)
{
	struct bpfprof_run *run = &rf->run;
	uint32_t argc;

	run->sample_freq = rd_u64(r);
	run->sample_period = rd_u64(r);
	run->start_ns = rd_u64(r);
	run->end_ns = rd_u64(r);
	run->realtime_anchor_ns = rd_u64(r);
	run->samples_seen = rd_u64(r);
	run->samples_kept = rd_u64(r);
	for (int i = 0; i < BPFPROF_DROP_NR; i++)
		run->drops[i] = rd_u64(r);
	for (int i = 0; i < BPFPROF_UNWIND_STOP_NR; i++)
		run->unwind_stops[i] = rd_u64(r);
	run->nr_cpus_online = rd_u32(r);
	run->nr_cpus_available = rd_u32(r);
	run->max_stack_depth = rd_u32(r);
	rf->host_id = rd_u32(r);
	argc = rd_u32(r);
	rd_u32(r);
	if (r->bad || argc > RAW_MAX_ARGC || (uint64_t)argc * 5 > r->len - r->off ||
	    run->end_ns < run->start_ns)
		return -1;
	run->version = rd_str(r);
	run->event = rd_str(r);
	run->hostname = rd_str(r);
	run->os_release = rd_str(r);
	run->arch = rd_str(r);
	run->target = rd_str(r);
	run->call_graph = rd_str(r);
	rf->argv = calloc(argc + 1, sizeof(*rf->argv));
	if (!rf->argv)
		return -ENOMEM;
	for (uint32_t i = 0; i < argc; i++)
		rf->argv[i] = rd_str(r);
	run->argc = (int)argc;
	run->argv = rf->argv;
	return r->bad || r->off != r->len ? -1 : 0;
}

static int parse_process(struct rd *r, struct raw_process *pr)
{
	uint32_t nr_maps;

	pr->pid = rd_u32(r);
	pr->ppid = rd_u32(r);
	pr->rank = (int32_t)rd_u32(r);
	pr->exited = rd_u32(r) != 0;
	nr_maps = rd_u32(r);
	rd_u32(r);
	pr->samples = rd_u64(r);
	pr->comm = rd_str(r);
	pr->exe = rd_str(r);
	pr->cmdline = rd_str(r);
	if (r->bad || (uint64_t)nr_maps * (RAW_MAPPING_FIXED_SIZE + 5) > r->len - r->off)
		return -1;
	pr->maps = calloc(nr_maps + 1, sizeof(*pr->maps));
	if (!pr->maps)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr_maps; i++) {
		if (rd_mapping(r, &pr->maps[i]))
			return -1;
		pr->nr_maps++;
		if (i && pr->maps[i].start < pr->maps[i - 1].end)
			return -1;	/* sorted, non-overlapping */
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether the @nr ids at @ids (sorted here) are all distinct. */
static int distinct(uint32_t *ids, size_t nr)
{
	qsort(ids, nr, sizeof(*ids), cmp_u32);
	for (size_t i = 1; i < nr; i++)
		if (ids[i] == ids[i - 1])
			return 0;
	return 1;
}

static int parse_processes(struct raw_file *rf, struct rd *r)
{
	uint32_t n = rd_count(r, 32 + 15);
	uint32_t *pids;
	int err = 0;

	if (r->bad)
		return -1;
	rf->processes = calloc(n + 1, sizeof(*rf->processes));
	pids = calloc(n + 1, sizeof(*pids));
	if (!rf->processes || !pids) {
		free(pids);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n && !err; i++) {
		err = parse_process(r, &rf->processes[i]);
		rf->nr_processes++;
		pids[i] = rf->processes[i].pid;
	}
	if (!err && !distinct(pids, n))
		err = -1;
	free(pids);
	return err ?: (r->off != r->len ? -1 : 0);
}

static int parse_threads(struct raw_file *rf, struct rd *r)
{
	uint32_t n = rd_count(r, 24 + 5);
	uint32_t *tids;
	int err = 0;

	if (r->bad)
		return -1;
	rf->threads = calloc(n + 1, sizeof(*rf->threads));
	tids = calloc(n + 1, sizeof(*tids));
	if (!rf->threads || !tids) {
		free(tids);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n && !err; i++) {
		struct raw_thread *t = &rf->threads[i];

		t->tid = rd_u32(r);
		t->pid = rd_u32(r);
		t->process = rd_u32(r);
		t->thread = rd_u32(r);
		t->samples = rd_u64(r);
		t->comm = rd_str(r);
		tids[i] = t->tid;
		if (r->bad || t->process >= rf->nr_processes ||
		    rf->processes[t->process].pid != t->pid)
			err = -1;
	}
	rf->nr_threads = n;
	if (!err && !distinct(tids, n))
		err = -1;
	free(tids);
	return err ?: (r->off != r->len ? -1 : 0);
}

static int parse_stacks(struct raw_file *rf, struct rd *r)
{
	uint32_t n = rd_count(r, 8);

	if (r->bad || n == 0)
		return -1;
	rf->stacks = calloc(n, sizeof(*rf->stacks));
	if (!rf->stacks)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct bpfprof_stack *s = &rf->stacks[i];
		uint64_t *ips;

		s->nr = rd_u32(r);
		s->kernel = rd_u32(r);
		if (r->bad || s->nr > RAW_MAX_STACK_DEPTH || s->kernel > 1 || (i == 0 && s->nr) ||
		    (i && !s->nr) || !(ips = (uint64_t *)(void *)rd_bytes(r, (size_t)s->nr * 8)))
			return -1;
		for (uint32_t f = 0; f < s->nr; f++)	/* 8-aligned: see docs/RAW.md */
			ips[f] = le64toh(ips[f]);
		s->ips = ips;
	}
	rf->nr_stacks = n;
	return r->off != r->len ? -1 : 0;
}

/* Stack @i exists and is of kind @kernel (or is the empty stack 0). */
static bool stack_ok(const struct raw_file *rf, uint32_t i, int kernel)
{
	return i < rf->nr_stacks && (i == 0 || rf->stacks[i].kernel == (uint32_t)kernel);
}

static int parse_counts(struct raw_file *rf, struct rd *r)
{
	uint32_t n = rd_count(r, RAW_COUNT_SIZE);

	if (r->bad)
		return -1;
	rf->counts = calloc(n + 1, sizeof(*rf->counts));
	if (!rf->counts)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct bpfprof_count *c = &rf->counts[i];

		c->thread = rd_u32(r);
		c->user_stack = rd_u32(r);
		c->kernel_stack = rd_u32(r);
		rd_u32(r);
		c->samples = rd_u64(r);
		if (r->bad || c->thread >= rf->nr_threads || !c->samples ||
		    !stack_ok(rf, c->user_stack, 0) || !stack_ok(rf, c->kernel_stack, 1))
			return -1;
	}
	rf->nr_counts = n;
	return r->off != r->len ? -1 : 0;
}

static int cmp_symbol_key(const struct raw_symbol *a, uint32_t pid, uint64_t address)
{
	if (a->pid != pid)
		return a->pid < pid ? -1 : 1;
	return a->address < address ? -1 : a->address > address;
}

/* A symbol section: kernel entries have no pid and no module offset. */
static int parse_symbols(struct rd *r, int user, struct raw_symbol **out, size_t *nr)
{
	uint32_t n = rd_count(r, user ? 42 : 26);
	struct raw_symbol *syms;

	if (r->bad)
		return -1;
	syms = *out = calloc(n + 1, sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct raw_symbol *s = &syms[i];

		if (user) {
			s->pid = rd_u32(r);
			rd_u32(r);
		}
		s->address = rd_u64(r);
		s->module_offset = user ? rd_u64(r) : s->address;
		s->function_start = rd_u64(r);
		s->function = rd_str(r);
		s->module = rd_str(r);
		if (r->bad || s->function_start > s->address ||
		    s->module_offset < s->address - s->function_start ||
		    (i && cmp_symbol_key(&syms[i - 1], s->pid, s->address) >= 0))
			return -1;
	}
	*nr = n;
	return r->off != r->len ? -1 : 0;
}

static bool is_interp(uint64_t a)
{
	return a >= BPFPROF_INTERP_FRAME_START && a < BPFPROF_INTERP_FRAME_END;
}

/*
 * The Python symbols: pseudo-addresses with bit 0 set, each at or above
 * its function's start, sorted by (pid, address), and the entries of one
 * function next to each other (a function starts above the address of
 * the entry before, or is that entry's): what raw_symbol_find() needs.
 */
static int parse_interp_symbols(struct rd *r, struct raw_symbol **out, size_t *nr)
{
	uint32_t n = rd_count(r, RAW_INTERP_SYMBOL_FIXED_SIZE + 15);
	struct raw_symbol *syms;

	if (r->bad)
		return -1;
	syms = *out = calloc(n + 1, sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct raw_symbol *s = &syms[i], *prev = i ? &syms[i - 1] : NULL;

		s->pid = rd_u32(r);
		s->line = rd_u32(r);
		s->module_offset = s->address = rd_u64(r);
		s->function_start = rd_u64(r);
		s->start_line = rd_u32(r);
		rd_u32(r);
		s->function = rd_str(r);
		s->file = rd_str(r);
		s->module = rd_str(r);
		if (r->bad || !is_interp(s->address) || !(s->address & 1) ||
		    !is_interp(s->function_start) || s->function_start > s->address ||
		    (prev && cmp_symbol_key(prev, s->pid, s->address) >= 0) ||
		    (prev && prev->pid == s->pid && s->function_start != prev->function_start &&
		     s->function_start <= prev->address))
			return -1;
		if (!s->file[0])
			s->file = NULL;
	}
	*nr = n;
	return r->off != r->len ? -1 : 0;
}

const struct raw_symbol *raw_symbol_find(const struct raw_symbol *syms, size_t nr, uint32_t pid,
					 uint64_t q)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_symbol_key(&syms[mid], pid, q) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nr && syms[lo].pid == pid && syms[lo].function_start <= q)
		return &syms[lo];
	return NULL;
}

/* One table section: loaded, parsed, and its failure explained. */
static int table(struct raw_file *rf, const struct section_index *ix, int type, char *why)
{
	struct rd r;
	int err = load_payload(rf, ix, type, &r);

	if (err)
		return why_fmt(why, err, "reading the %s section: %s", section_names[type],
			       strerror(-err));
	switch (type) {
	case RAW_SEC_RUN: err = parse_run(rf, &r); break;
	case RAW_SEC_PROCESSES: err = parse_processes(rf, &r); break;
	case RAW_SEC_THREADS: err = parse_threads(rf, &r); break;
	case RAW_SEC_STACKS: err = parse_stacks(rf, &r); break;
	case RAW_SEC_COUNTS: err = parse_counts(rf, &r); break;
	case RAW_SEC_KERNEL_SYMBOLS: err = parse_symbols(&r, 0, &rf->ksyms, &rf->nr_ksyms); break;
	case RAW_SEC_USER_SYMBOLS: err = parse_symbols(&r, 1, &rf->usyms, &rf->nr_usyms); break;
	default: err = parse_interp_symbols(&r, &rf->isyms, &rf->nr_isyms); break;
	}
	if (err == -ENOMEM)
		return why_fmt(why, err, "out of memory");
	if (err)
		return why_fmt(why, -EBADMSG, "malformed %s section (byte %zu of %zu)",
			       section_names[type], r.off, r.len);
	return 0;
}

int raw_file_open_stream(FILE *f, const char *name, struct raw_file *rf, char why[RAW_WHY_SIZE])
{
	uint8_t h[RAW_HEADER_SIZE];
	struct section_index ix = { 0 };
	off_t size;
	int err;

	memset(rf, 0, sizeof(*rf));
	rf->f = f;
	rf->path = strdup(name ? name : "");
	if (!rf->path)
		return why_fmt(why, -ENOMEM, "out of memory");
	if (fseeko(f, 0, SEEK_END) || (size = ftello(f)) < 0)
		return why_fmt(why, -EIO, "cannot seek: %s", strerror(errno));
	rf->size = (uint64_t)size;
	if (rf->size < RAW_MAGIC_SIZE || read_at(f, 0, h, RAW_MAGIC_SIZE) ||
	    memcmp(h, RAW_MAGIC, RAW_MAGIC_SIZE))
		return why_fmt(why, -EINVAL, "not a bpfprof raw measurement");
	if (rf->size < RAW_HEADER_SIZE || read_at(f, 0, h, RAW_HEADER_SIZE))
		return why_fmt(why, -EBADMSG, "truncated inside the header");
	if ((err = check_header(h, rf->size, why)) || (err = index_sections(rf, &ix, why)))
		return err;
	for (int t = RAW_SEC_RUN; t <= RAW_SEC_INTERP_SYMBOLS; t++)
		if (ix.off[t] && (err = table(rf, &ix, t, why)))
			return err;
	rf->events_offset = ix.off[RAW_SEC_EVENTS];
	rf->events_length = ix.len[RAW_SEC_EVENTS];
	err = raw_events_check(rf, why);
	fclose(rf->f);	/* cursors open their own: no descriptor held per file */
	rf->f = NULL;
	return err;
}

int raw_file_open(const char *path, struct raw_file *rf, char why[RAW_WHY_SIZE])
{
	FILE *f = fopen(path, "rb");

	if (!f) {
		int err = -errno;

		memset(rf, 0, sizeof(*rf));
		return why_fmt(why, err, "%s", strerror(-err));
	}
	return raw_file_open_stream(f, path, rf, why);
}

void raw_file_drop_tables(struct raw_file *rf)
{
	for (size_t i = 0; i < rf->nr_processes && rf->processes; i++)
		free(rf->processes[i].maps);
	free(rf->processes);
	free(rf->threads);
	free(rf->stacks);
	free(rf->counts);
	rf->processes = NULL;
	rf->threads = NULL;
	rf->stacks = NULL;
	rf->counts = NULL;
	for (int t = RAW_SEC_PROCESSES; t <= RAW_SEC_COUNTS; t++) {
		free(rf->payloads[t]);
		rf->payloads[t] = NULL;
	}
}

void raw_file_close(struct raw_file *rf)
{
	if (!rf)
		return;
	raw_file_drop_tables(rf);
	free(rf->ksyms);
	free(rf->usyms);
	free(rf->isyms);
	free(rf->argv);
	for (size_t i = 0; i < sizeof(rf->payloads) / sizeof(rf->payloads[0]); i++)
		free(rf->payloads[i]);
	if (rf->f)
		fclose(rf->f);
	free(rf->path);
	memset(rf, 0, sizeof(*rf));
}
