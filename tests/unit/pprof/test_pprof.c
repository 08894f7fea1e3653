// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_pprof.c - unit tests of the pprof output plugin (plugins/pprof/):
 * the protobuf wire encoder (varints, embedded message lengths, fields of
 * known length), and the whole plugin driven through the ABI with
 * hand-built profiles and fake hosts.  The output is gunzipped and decoded
 * back here with a small protobuf reader, then checked field by field
 * against profile.proto: sample/period types, period, time and duration,
 * samples (in any order) with values and pid/tid/comm/thread labels,
 * locations (kernel frames first, callers symbolized at the return
 * address - 1 but kept at the return address), mappings (file, hex
 * build-id, bounds, the executable first, the kernel last) and functions.
 * With several processes sharing stacks, every sample must be its count
 * frame by frame whatever the plugin shared: locations of identical file
 * mappings (forked workers) shared, JIT code, addresses in no mapping and
 * a library one process cannot read kept per process, kernel frames
 * shared, recursion.  When `go` is installed, `go tool pprof -raw` must
 * read the file too.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "bpfprof/plugin.h"
#include "fake_host.h"
#include "pprof/pb.h"

/* --- wire encoder --------------------------------------------------------- */

static void test_varint(void **unused)
{
	uint8_t out[PB_VARINT_MAX];

	assert_int_equal(pb_encode_varint(out, 0), 1);
	assert_int_equal(out[0], 0);
	assert_int_equal(pb_encode_varint(out, 127), 1);
	assert_int_equal(out[0], 127);
	assert_int_equal(pb_encode_varint(out, 300), 2);	/* the spec's example */
	assert_int_equal(out[0], 0xac);
	assert_int_equal(out[1], 0x02);
	assert_int_equal(pb_encode_varint(out, UINT64_MAX), 10);
	assert_int_equal(out[9], 0x01);
}

static void test_nested_lengths(void **unused)
{
	struct buf b = { 0 };
	char big[200];
	size_t outer, inner;

	memset(big, 'x', sizeof(big));
	outer = pb_begin(&b, 3);
	pb_uint64(&b, 1, 150);		/* 08 96 01 */
	inner = pb_begin(&b, 2);
	pb_bytes(&b, 1, big, sizeof(big));	/* 0a c8 01 + 200: 203 bytes */
	pb_end(&b, inner);
	pb_end(&b, outer);
	assert_false(b.err);
	/* outer: key 1a, length 3 + 1 + 2 + 203 = 209 (d1 01) */
	assert_int_equal(b.len, 1 + 2 + 209);
	assert_memory_equal(b.data, "\x1a\xd1\x01\x08\x96\x01\x12\xcb\x01\x0a\xc8\x01xx", 14);
	buf_free(&b);

	pb_uint64(&b, 5, 0);		/* zero scalars are left out */
	pb_string(&b, 6, "");		/* empty strings are not */
	assert_int_equal(b.len, 2);
	assert_memory_equal(b.data, "\x32\x00", 2);
	buf_free(&b);
}

/* Fields whose length is known before they are written. */
static void test_len_prefix(void **unused)
{
	struct buf b = { 0 };
	char body[300];

	assert_int_equal(pb_varint_size(0), 1);
	assert_int_equal(pb_varint_size(127), 1);
	assert_int_equal(pb_varint_size(128), 2);
	assert_int_equal(pb_varint_size(UINT64_MAX), PB_VARINT_MAX);
	memset(body, 'y', sizeof(body));
	assert_int_equal(pb_len_field_size(2, sizeof(body)), 1 + 2 + 300);
	assert_int_equal(pb_len_field_size(16, 0), 2 + 1);	/* a two-byte key */
	pb_len_prefix(&b, 2, sizeof(body));
	buf_put(&b, body, sizeof(body));
	assert_false(b.err);
	assert_int_equal(b.len, pb_len_field_size(2, sizeof(body)));
	assert_memory_equal(b.data, "\x12\xac\x02yy", 5);
	buf_reset(&b);
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

/* --- a protobuf reader, enough for profile.proto ---------------------------- */

struct field {
	uint32_t num;
	int wire;
	uint64_t v;			/* varint value */
	const uint8_t *data;		/* length-delimited bytes */
	size_t len;
};

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

/* Next field of the message [*p, end); 1 if one was read, 0 at the end. */
static int next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
	uint64_t key;

	if (*p >= end)
		return 0;
	assert_int_equal(read_varint(p, end, &key), 0);
	f->num = key >> 3;
	f->wire = key & 7;
	if (f->wire == 0) {
		assert_int_equal(read_varint(p, end, &f->v), 0);
	} else {
		assert_int_equal(f->wire, 2);
		assert_int_equal(read_varint(p, end, &f->v), 0);
		assert_true(f->v <= (uint64_t)(end - *p));
		f->data = *p;
		f->len = f->v;
		*p += f->len;
	}
	return 1;
}

#define MAX 256

struct d_label { int64_t key, str, num, unit; };
struct d_sample {
	uint64_t locs[MAX]; size_t nr_locs;
	int64_t values[4]; size_t nr_values;
	struct d_label labels[8]; size_t nr_labels;
};
struct d_mapping { uint64_t id, start, limit, offset; int64_t file, build_id; int has_functions; };
struct d_location { uint64_t id, mapping, address, function; int64_t line; int nr_lines; };
struct d_function { uint64_t id; int64_t name, system_name, file, start_line; };

struct decoded {
	int64_t sample_types[4][2]; size_t nr_sample_types;
	struct d_sample samples[MAX]; size_t nr_samples;
	struct d_mapping mappings[MAX]; size_t nr_mappings;
	struct d_location locations[MAX]; size_t nr_locations;
	struct d_function functions[MAX]; size_t nr_functions;
	char *strings[256]; size_t nr_strings;
	int64_t time_nanos, duration_nanos, period, period_type[2], default_sample_type;
	size_t nr_comments;
};

static void decode_value_type(const struct field *f, int64_t vt[2])
{
	const uint8_t *p = f->data, *end = p + f->len;
	struct field g;

	vt[0] = vt[1] = 0;
	while (next_field(&p, end, &g))
		if (g.num == 1 || g.num == 2)
			vt[g.num - 1] = g.v;
}

static void decode_packed(const struct field *f, uint64_t *out, size_t *n, size_t max)
{
	const uint8_t *p = f->data, *end = p + f->len;
	uint64_t v;

	while (p < end) {
		assert_int_equal(read_varint(&p, end, &v), 0);
		assert_true(*n < max);
		out[(*n)++] = v;
	}
}

static void decode_sample(const struct field *f, struct d_sample *s)
{
	const uint8_t *p = f->data, *end = p + f->len;
	struct field g;

	memset(s, 0, sizeof(*s));
	while (next_field(&p, end, &g)) {
		if (g.num == 1)
			decode_packed(&g, s->locs, &s->nr_locs, MAX);
		else if (g.num == 2)
			decode_packed(&g, (uint64_t *)s->values, &s->nr_values, 4);
		else if (g.num == 3) {
			const uint8_t *q = g.data, *qend = q + g.len;
			struct d_label *l = &s->labels[s->nr_labels++];
			struct field h;

			while (next_field(&q, qend, &h)) {
				if (h.num == 1) l->key = h.v;
				if (h.num == 2) l->str = h.v;
				if (h.num == 3) l->num = h.v;
				if (h.num == 4) l->unit = h.v;
			}
		}
	}
}

static void decode(const uint8_t *data, size_t len, struct decoded *d)
{
	const uint8_t *p = data, *end = data + len;
	struct field f, g;

	memset(d, 0, sizeof(*d));
	while (next_field(&p, end, &f)) {
		const uint8_t *q = f.data, *qend = f.data + f.len;

		switch (f.num) {
		case 1:
			decode_value_type(&f, d->sample_types[d->nr_sample_types++]);
			break;
		case 2:
			decode_sample(&f, &d->samples[d->nr_samples++]);
			break;
		case 3: {
			struct d_mapping *m = &d->mappings[d->nr_mappings++];

			while (next_field(&q, qend, &g)) {
				if (g.num == 1) m->id = g.v;
				if (g.num == 2) m->start = g.v;
				if (g.num == 3) m->limit = g.v;
				if (g.num == 4) m->offset = g.v;
				if (g.num == 5) m->file = g.v;
				if (g.num == 6) m->build_id = g.v;
				if (g.num == 7) m->has_functions = g.v;
			}
			break;
		}
		case 4: {
			struct d_location *l = &d->locations[d->nr_locations++];

			while (next_field(&q, qend, &g)) {
				if (g.num == 1) l->id = g.v;
				if (g.num == 2) l->mapping = g.v;
				if (g.num == 3) l->address = g.v;
				if (g.num == 4) {
					const uint8_t *r = g.data, *rend = r + g.len;
					struct field h;

					l->nr_lines++;
					while (next_field(&r, rend, &h)) {
						if (h.num == 1) l->function = h.v;
						if (h.num == 2) l->line = h.v;
					}
				}
			}
			break;
		}
		case 5: {
			struct d_function *fn = &d->functions[d->nr_functions++];

			while (next_field(&q, qend, &g)) {
				if (g.num == 1) fn->id = g.v;
				if (g.num == 2) fn->name = g.v;
				if (g.num == 3) fn->system_name = g.v;
				if (g.num == 4) fn->file = g.v;
				if (g.num == 5) fn->start_line = (int64_t)g.v;
			}
			break;
		}
		case 6:
			d->strings[d->nr_strings++] = strndup((const char *)f.data, f.len);
			break;
		case 9: d->time_nanos = f.v; break;
		case 10: d->duration_nanos = f.v; break;
		case 11: decode_value_type(&f, d->period_type); break;
		case 12: d->period = f.v; break;
		case 13: {
			uint64_t c[16];

			decode_packed(&f, c, &d->nr_comments, 16);
			break;
		}
		case 14: d->default_sample_type = f.v; break;
		default:
			fail_msg("unexpected Profile field %u", f.num);
		}
		assert_true(d->nr_samples < MAX && d->nr_mappings < MAX &&
			    d->nr_locations < MAX && d->nr_functions < MAX && d->nr_strings < 256);
	}
}

static void free_decoded(struct decoded *d)
{
	for (size_t i = 0; i < d->nr_strings; i++)
		free(d->strings[i]);
}

static const char *str(const struct decoded *d, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < d->nr_strings);
	return d->strings[i];
}

static const struct d_location *loc(const struct decoded *d, uint64_t id)
{
	for (size_t i = 0; i < d->nr_locations; i++)
		if (d->locations[i].id == id)
			return &d->locations[i];
	fail_msg("no location %" PRIu64, id);
	return NULL;
}

static const struct d_mapping *mapping(const struct decoded *d, uint64_t id)
{
	for (size_t i = 0; i < d->nr_mappings; i++)
		if (d->mappings[i].id == id)
			return &d->mappings[i];
	fail_msg("no mapping %" PRIu64, id);
	return NULL;
}

static const char *function_name(const struct decoded *d, uint64_t id)
{
	for (size_t i = 0; i < d->nr_functions; i++)
		if (d->functions[i].id == id)
			return str(d, d->functions[i].name);
	fail_msg("no function %" PRIu64, id);
	return NULL;
}

/* --- fake host and a hand-built profile ------------------------------------ */

#define KBASE 0xffffffff81000000ull
#define EXE_START 0x400000ull
#define LIB_START 0x7f0000000000ull

static const uint8_t exe_build_id[4] = { 0xde, 0xad, 0x01, 0x0f };
static const struct bpfprof_mapping maps[] = {
	{ .start = EXE_START, .end = EXE_START + 0x1000, .pgoff = 0x1000, .prot = 5,
	  .path = "/usr/bin/app", .build_id = exe_build_id, .build_id_size = 4 },
	{ .start = LIB_START, .end = LIB_START + 0x10000, .pgoff = 0x2000, .prot = 5,
	  .path = "/lib/libc.so.6" },
};

/* Function names by address range; the line is the low 12 bits of the ip. */
static int app_symbolize(struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
			 struct bpfprof_symbol *sym)
{
	if (kernel) {
		sym->module = "[kernel.kallsyms]";
		sym->module_offset = ip;
		sym->function = ip < KBASE + 0x100 ? "do_syscall_64" : "entry_SYSCALL_64";
		return 0;
	}
	for (size_t i = 0; i < 2; i++) {
		if (ip >= maps[i].start && ip < maps[i].end) {
			sym->module = maps[i].path;
			sym->mapping = &maps[i];
			sym->module_offset = ip - maps[i].start + maps[i].pgoff;
			sym->function = i == 0 ? (ip < EXE_START + 0x100 ? "leaf" : "main") : "__libc_start_main";
			sym->function_start = i == 0 ? maps[0].pgoff + (ip < EXE_START + 0x100 ? 0 : 0x100) : 0;
			sym->file = i == 0 ? "app.c" : NULL;
			sym->line = i == 0 ? (uint32_t)(ip & 0xfff) : 0;
			return 0;
		}
	}
	return -ENOENT;
}

static struct fake_host fh;

/* The fake host, symbols by app_symbolize() or @resolve. */
static void host_init(fake_resolve_fn resolve)
{
	fake_host_init(&fh);
	fh.resolve = resolve;
}

static const uint64_t ustack1[] = { EXE_START + 0x10, EXE_START + 0x205, LIB_START + 0x99 };
static const uint64_t ustack2[] = { EXE_START + 0x20, EXE_START + 0x205, 0x12345 /* unmapped */ };
static const uint64_t kstack1[] = { KBASE + 0x40, KBASE + 0x300 };

static const struct bpfprof_stack stacks[] = {
	{ .ips = NULL, .nr = 0 },
	{ .ips = ustack1, .nr = 3 },
	{ .ips = ustack2, .nr = 3 },
	{ .ips = kstack1, .nr = 2, .kernel = 1 },
};

static const struct bpfprof_run run = {
	.version = "0.1.0", .event = "cpu-clock", .sample_freq = 100,
	.sample_period = 10000000, .start_ns = 1000, .end_ns = 2000000999,
	.realtime_anchor_ns = 1700000000123456789ull, .target = "pid 42",
	.samples_seen = 10, .samples_kept = 10,
};

static const struct bpfprof_process procs[] = {
	{ .pid = 42, .comm = "app", .exe = "/usr/bin/app", .mappings = maps, .nr_mappings = 2,
	  .first_thread = 0, .nr_threads = 2, .samples = 10 },
};
static const struct bpfprof_thread threads[] = {
	{ .tid = 42, .pid = 42, .process = 0, .comm = "app", .samples = 7 },
	{ .tid = 43, .pid = 42, .process = 0, .comm = "worker", .samples = 3 },
};
static const struct bpfprof_count counts[] = {
	{ .thread = 0, .user_stack = 1, .kernel_stack = 3, .samples = 2 },
	{ .thread = 0, .user_stack = 1, .kernel_stack = 0, .samples = 5 },
	{ .thread = 1, .user_stack = 2, .kernel_stack = 0, .samples = 3 },
};
static const struct bpfprof_profile profile = {
	.run = &run, .processes = procs, .nr_processes = 1, .threads = threads, .nr_threads = 2,
	.stacks = stacks, .nr_stacks = 4, .counts = counts, .nr_counts = 3,
};

const struct bpfprof_plugin *bpfprof_plugin_entry(uint32_t);

/* Run the plugin on @prof into @path; returns write()'s result. */
static int run_plugin(const struct bpfprof_profile *prof, const char *path)
{
	const struct bpfprof_plugin *pl = bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION);
	struct bpfprof_output out = { .dir_fd = -1, .path = path };
	void *state = NULL;
	int err;

	assert_non_null(pl);
	assert_string_equal(pl->name, "pprof");
	assert_null(pl->event);
	out.file = fopen(path, "w+b");
	assert_non_null(out.file);
	assert_int_equal(pl->open(&fh.host, prof->run, &out, &state), 0);
	err = pl->write(state, prof);
	pl->close(state);
	fclose(out.file);
	return err;
}

/* gunzip @path into a malloc'd buffer. */
static uint8_t *gunzip_file(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 16;
	uint8_t *buf = malloc(cap);
	int n;

	assert_non_null(gz);
	*len = 0;
	while ((n = gzread(gz, buf + *len, cap - *len)) > 0) {
		*len += n;
		if (*len == cap)
			buf = realloc(buf, cap *= 2);
	}
	assert_int_equal(n, 0);
	gzclose(gz);
	return buf;
}

static int64_t label_num(const struct decoded *d, const struct d_sample *s, const char *key);

/* The one sample of thread @tid with @nr_locs locations. */
static const struct d_sample *find_sample(const struct decoded *d, int64_t tid, size_t nr_locs)
{
	const struct d_sample *found = NULL;

	for (size_t i = 0; i < d->nr_samples; i++) {
		if (label_num(d, &d->samples[i], "tid") != tid || d->samples[i].nr_locs != nr_locs)
			continue;
		assert_null(found);
		found = &d->samples[i];
	}
	assert_non_null(found);
	return found;
}

static int64_t label_num(const struct decoded *d, const struct d_sample *s, const char *key)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(str(d, s->labels[i].key), key))
			return s->labels[i].num;
	fail_msg("no label %s", key);
	return -1;
}

static const char *label_str(const struct decoded *d, const struct d_sample *s, const char *key)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(str(d, s->labels[i].key), key))
			return str(d, s->labels[i].str);
	fail_msg("no label %s", key);
	return NULL;
}

static void test_profile(void **unused)
{
	char path[] = "/tmp/test_pprof.XXXXXX";
	static struct decoded d;
	uint8_t *data;
	size_t len;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	host_init(app_symbolize);
	assert_int_equal(run_plugin(&profile, path), 0);
	assert_int_equal(fh.nr_errors, 0);
	/* gzip magic */
	FILE *f = fopen(path, "rb");
	assert_int_equal(fgetc(f), 0x1f);
	assert_int_equal(fgetc(f), 0x8b);
	fclose(f);
	data = gunzip_file(path, &len);
	decode(data, len, &d);

	/* header */
	assert_string_equal(str(&d, 0), "");
	assert_int_equal(d.nr_sample_types, 2);
	assert_string_equal(str(&d, d.sample_types[0][0]), "samples");
	assert_string_equal(str(&d, d.sample_types[0][1]), "count");
	assert_string_equal(str(&d, d.sample_types[1][0]), "cpu");
	assert_string_equal(str(&d, d.sample_types[1][1]), "nanoseconds");
	assert_string_equal(str(&d, d.period_type[0]), "cpu");
	assert_string_equal(str(&d, d.period_type[1]), "nanoseconds");
	assert_string_equal(str(&d, d.default_sample_type), "cpu");
	assert_int_equal(d.period, 10000000);
	assert_true(d.time_nanos == (int64_t)1700000000123456789ull);
	assert_int_equal(d.duration_nanos, 1999999999);
	assert_int_equal(d.nr_comments, 3);

	/* samples: one per count (in any order), kernel frames then user frames */
	assert_int_equal(d.nr_samples, 3);
	const struct d_sample *s0 = find_sample(&d, 42, 5), *s1 = find_sample(&d, 42, 3);
	const struct d_sample *s2 = find_sample(&d, 43, 3);
	assert_int_equal(s0->nr_values, 2);
	assert_int_equal(s0->values[0], 2);
	assert_int_equal(s0->values[1], 2 * 10000000);
	assert_int_equal(s1->values[0], 5);
	assert_int_equal(s2->values[1], 3 * 10000000);
	assert_int_equal(label_num(&d, s0, "pid"), 42);
	assert_int_equal(label_num(&d, s0, "tid"), 42);
	assert_int_equal(label_num(&d, s2, "tid"), 43);
	assert_string_equal(label_str(&d, s2, "comm"), "app");
	assert_string_equal(label_str(&d, s2, "thread"), "worker");

	assert_int_equal(s0->nr_locs, 5);
	assert_int_equal(s1->nr_locs, 3);
	const struct d_location *k0 = loc(&d, s0->locs[0]), *k1 = loc(&d, s0->locs[1]);
	assert_true(k0->address == KBASE + 0x40);
	assert_true(k1->address == KBASE + 0x300);
	assert_string_equal(function_name(&d, k0->function), "do_syscall_64");
	assert_string_equal(function_name(&d, k1->function), "entry_SYSCALL_64");
	const struct d_mapping *km = mapping(&d, k0->mapping);
	assert_string_equal(str(&d, km->file), "[kernel.kallsyms]");
	assert_true(km->start <= KBASE + 0x40 && km->limit > KBASE + 0x300);
	assert_int_equal(km->has_functions, 1);

	/* the same user frames share locations across samples */
	assert_int_equal(s0->locs[2], s1->locs[0]);
	assert_int_equal(s0->locs[3], s1->locs[1]);
	const struct d_location *leaf = loc(&d, s1->locs[0]), *caller = loc(&d, s1->locs[1]);
	assert_true(leaf->address == EXE_START + 0x10);
	assert_string_equal(function_name(&d, leaf->function), "leaf");
	assert_int_equal(leaf->line, 0x10);		/* leaf: the ip itself */
	assert_true(caller->address == EXE_START + 0x205);	/* the return address */
	assert_string_equal(function_name(&d, caller->function), "main");
	assert_int_equal(caller->line, 0x204);		/* symbolized at ip - 1 */
	const struct d_mapping *em = mapping(&d, leaf->mapping);
	assert_string_equal(str(&d, em->file), "/usr/bin/app");
	assert_string_equal(str(&d, em->build_id), "dead010f");
	assert_true(em->start == EXE_START && em->limit == EXE_START + 0x1000);
	assert_int_equal(em->offset, 0x1000);
	const struct d_location *libc = loc(&d, s1->locs[2]);
	assert_string_equal(str(&d, mapping(&d, libc->mapping)->file), "/lib/libc.so.6");
	assert_int_equal(mapping(&d, libc->mapping)->offset, 0x2000);
	assert_int_equal(mapping(&d, libc->mapping)->build_id, 0);
	/* an address in no mapping: a location with neither mapping nor line */
	const struct d_location *lost = loc(&d, s2->locs[2]);
	assert_int_equal(lost->address, 0x12345);
	assert_int_equal(lost->mapping, 0);
	assert_int_equal(lost->nr_lines, 0);

	/* mapping order: the executable first, the kernel last */
	assert_int_equal(d.nr_mappings, 3);
	assert_string_equal(str(&d, d.mappings[0].file), "/usr/bin/app");
	assert_string_equal(str(&d, d.mappings[2].file), "[kernel.kallsyms]");

	/* a function's start line is its first address's line (main: 0x100;
	 * leaf's, at EXE_START, is line 0: unknown) */
	for (size_t i = 0; i < d.nr_functions; i++)
		if (!strcmp(str(&d, d.functions[i].name), "main"))
			assert_int_equal(d.functions[i].start_line, 0x100);
		else
			assert_int_equal(d.functions[i].start_line, 0);

	/* every location is symbolized once (cached by location), and the
	 * first address of each function with a file once (leaf, main) */
	assert_int_equal(fh.nr_calls, 9);
	assert_int_equal(d.nr_locations, 7);
	/* every string once */
	for (size_t i = 0; i < d.nr_strings; i++)
		for (size_t j = i + 1; j < d.nr_strings; j++)
			assert_string_not_equal(d.strings[i], d.strings[j]);

	/* go tool pprof reads it, if installed; "leaf" has 5 + 3 of the 10
	 * samples as its own (the other 2 have a kernel leaf) */
	if (system("command -v go >/dev/null 2>&1") == 0) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "go tool pprof -raw %s 2>&1 | grep -q 'dead010f'", path);
		assert_int_equal(system(cmd), 0);
		snprintf(cmd, sizeof(cmd), "go tool pprof -top %s 2>/dev/null | grep -Eq '80\\.00%%.*leaf$'", path);
		assert_int_equal(system(cmd), 0);
	}

	free_decoded(&d);
	free(data);
	unlink(path);
}

/* --- several processes sharing stacks ---------------------------------------- */

/*
 * Four processes: "flaky" (pid 300), whose libc the host cannot read, and
 * two forked workers (pids 100, 101) map the same files at the same
 * places, plus JIT code each; "other" (pid 200) has the executable
 * elsewhere and the same libc.  Their threads share user and kernel
 * stacks; one stack's addresses mean different code in "other".
 */
#define W_EXE 0x400000ull
#define W_EXE2 0x500000ull
#define W_JIT 0x7e0000000000ull
#define W_LIBC 0x7f0000000000ull

static char app_a[] = "/srv/app", app_b[] = "/srv/app";
static char libc_a[] = "/lib/libc.so.6", libc_b[] = "/lib/libc.so.6";
static const uint8_t libc_build_id[4] = { 1, 2, 3, 4 };

#define W_EXE_MAP(base, file) { .start = (base), .end = (base) + 0x10000, .prot = 5, \
	.dev_major = 8, .dev_minor = 1, .inode = 11, .path = (file) }
#define W_JIT_MAP { .start = W_JIT, .end = W_JIT + 0x1000, .prot = 7, .path = "" }
#define W_LIBC_MAP(file) { .start = W_LIBC, .end = W_LIBC + 0x10000, .pgoff = 0x1000, \
	.prot = 5, .dev_major = 8, .dev_minor = 1, .inode = 12, .path = (file), \
	.build_id = libc_build_id, .build_id_size = 4 }

static const struct bpfprof_mapping w_maps_flaky[] = { W_EXE_MAP(W_EXE, app_a), W_JIT_MAP,
						       W_LIBC_MAP(libc_a) };
static const struct bpfprof_mapping w_maps_p0[] = { W_EXE_MAP(W_EXE, app_b), W_JIT_MAP,
						    W_LIBC_MAP(libc_b) };
static const struct bpfprof_mapping w_maps_p1[] = { W_EXE_MAP(W_EXE, app_a), W_JIT_MAP,
						    W_LIBC_MAP(libc_a) };
static const struct bpfprof_mapping w_maps_p2[] = { W_EXE_MAP(W_EXE2, app_a), W_LIBC_MAP(libc_b) };

static const struct bpfprof_process w_procs[] = {
	{ .pid = 300, .comm = "flaky", .exe = "/srv/app", .mappings = w_maps_flaky,
	  .nr_mappings = 3, .first_thread = 0, .nr_threads = 1 },
	{ .pid = 100, .comm = "w0", .exe = "/srv/app", .mappings = w_maps_p0, .nr_mappings = 3,
	  .first_thread = 1, .nr_threads = 2 },
	{ .pid = 101, .comm = "w1", .exe = "/srv/app", .mappings = w_maps_p1, .nr_mappings = 3,
	  .first_thread = 3, .nr_threads = 2 },
	{ .pid = 200, .comm = "other", .exe = "/srv/app", .mappings = w_maps_p2, .nr_mappings = 2,
	  .first_thread = 5, .nr_threads = 1 },
};
static const struct bpfprof_thread w_threads[] = {
	{ .tid = 300, .pid = 300, .process = 0, .comm = "flaky" },
	{ .tid = 100, .pid = 100, .process = 1, .comm = "w0" },
	{ .tid = 102, .pid = 100, .process = 1, .comm = "w0-b" },
	{ .tid = 101, .pid = 101, .process = 2, .comm = "w1" },
	{ .tid = 103, .pid = 101, .process = 2, .comm = "w1-b" },
	{ .tid = 200, .pid = 200, .process = 3, .comm = "other" },
};

static const uint64_t w_s1[] = { W_EXE + 0x100, W_LIBC + 0x200, W_EXE + 0x300 };
static const uint64_t w_s2[] = { W_JIT + 0x10, W_EXE + 0x400, W_LIBC + 0x200 };
static const uint64_t w_s3[] = { 0x1234, W_EXE + 0x100 };
static const uint64_t w_s4[] = { W_EXE + 0x500, W_EXE + 0x600, W_EXE + 0x600, W_EXE + 0x600 };
static const uint64_t w_s5[] = { W_EXE2 + 0x100, W_LIBC + 0x200, W_EXE2 + 0x300 };
static const uint64_t w_k1[] = { KBASE + 0x40, KBASE + 0x300 };

enum { W_EMPTY, W_S1, W_S2, W_S3, W_S4, W_S5, W_K1, W_NR_STACKS };
static const struct bpfprof_stack w_stacks[W_NR_STACKS] = {
	[W_S1] = { .ips = w_s1, .nr = 3 }, [W_S2] = { .ips = w_s2, .nr = 3 },
	[W_S3] = { .ips = w_s3, .nr = 2 }, [W_S4] = { .ips = w_s4, .nr = 4 },
	[W_S5] = { .ips = w_s5, .nr = 3 }, [W_K1] = { .ips = w_k1, .nr = 2, .kernel = 1 },
};

static const char *const app_fn[] = { "app_f0", "app_f1", "app_f2", "app_f3", "app_f4",
				      "app_f5", "app_f6", "app_f7" };
static const char *const libc_fn[] = { "libc_f0", "libc_f1", "libc_f2", "libc_f3" };

static int world_symbolize(struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
			   struct bpfprof_symbol *sym)
{
	const struct bpfprof_process *p = NULL;

	if (kernel)
		return app_symbolize(fh, pid, ip, kernel, sym);
	for (size_t i = 0; i < 4; i++)
		if (w_procs[i].pid == pid)
			p = &w_procs[i];
	assert_non_null(p);
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct bpfprof_mapping *m = &p->mappings[i];
		uint64_t off = ip - m->start;

		if (ip < m->start || ip >= m->end)
			continue;
		sym->mapping = m;
		sym->module = m->path;
		sym->module_offset = off + m->pgoff;
		if (m->path[0] != '/' || (pid == 300 && m->start == W_LIBC))
			return 0;	/* JIT code; a file it cannot read */
		sym->function = m->start == W_LIBC ? libc_fn[(off >> 8) & 3]
						    : app_fn[(off >> 8) & 7];
		sym->file = m->start == W_LIBC ? NULL : "app.c";
		sym->line = (uint32_t)(off & 0xff);
		return 0;
	}
	return -ENOENT;
}

/* A frame as one line: address, function, file, line, mapping file and start. */
static void frame_text(char *buf, size_t size, uint64_t addr, const char *fn, const char *file,
		       int64_t line, const char *map, uint64_t map_start)
{
	snprintf(buf, size, "%#" PRIx64 " %s %s %" PRId64 " %s %#" PRIx64 "\n", addr,
		 fn ? fn : "-", file ? file : "-", line, map ? map : "-", map_start);
}

/* What the sample of count @c must say, asking the host as the plugin does. */
static char *expected_sample(const struct bpfprof_count *c, int64_t period)
{
	const struct bpfprof_thread *t = &w_threads[c->thread];
	const struct bpfprof_stack *parts[2] = { &w_stacks[c->kernel_stack],
						 &w_stacks[c->user_stack] };
	char *out = NULL, line[256];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	fprintf(f, "pid %u tid %u comm %s thread %s values %" PRIu64 " %" PRId64 "\n", t->pid,
		t->tid, w_procs[t->process].comm, t->comm, c->samples,
		(int64_t)c->samples * period);
	for (int k = 0; k < 2; k++) {
		for (uint32_t i = 0; i < parts[k]->nr; i++) {
			uint64_t ip = parts[k]->ips[i];
			struct bpfprof_symbol sym;
			int rc = fh.host.symbolize(&fh.host, t->pid, i ? ip - 1 : ip, k == 0, &sym);

			frame_text(line, sizeof(line), ip, rc ? NULL : sym.function,
				   rc ? NULL : sym.file, rc || !sym.function ? 0 : sym.line,
				   k == 0 ? "[kernel.kallsyms]"
					  : sym.mapping ? sym.mapping->path : NULL,
				   k == 0 || !sym.mapping ? 0 : sym.mapping->start);
			fputs(line, f);
		}
	}
	fclose(f);
	return out;
}

/* The same text of a decoded sample. */
static char *decoded_sample(const struct decoded *d, const struct d_sample *s)
{
	char *out = NULL, line[256];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	fprintf(f, "pid %" PRId64 " tid %" PRId64 " comm %s thread %s values %" PRId64 " %" PRId64
		"\n", label_num(d, s, "pid"), label_num(d, s, "tid"), label_str(d, s, "comm"),
		label_str(d, s, "thread"), s->values[0], s->values[1]);
	for (size_t i = 0; i < s->nr_locs; i++) {
		const struct d_location *l = loc(d, s->locs[i]);
		const struct d_mapping *m = l->mapping ? mapping(d, l->mapping) : NULL;
		const char *fn = NULL, *file = NULL;

		for (size_t j = 0; l->function && j < d->nr_functions; j++) {
			if (d->functions[j].id == l->function) {
				fn = str(d, d->functions[j].name);
				file = d->functions[j].file ? str(d, d->functions[j].file) : NULL;
			}
		}
		frame_text(line, sizeof(line), l->address, fn, file, l->line,
			   m ? str(d, m->file) : NULL,
			   m && strcmp(str(d, m->file), "[kernel.kallsyms]") ? m->start : 0);
		fputs(line, f);
	}
	fclose(f);
	return out;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The decoded sample of thread @tid with user stack @user, kernel stack @kernel. */
static const struct d_sample *world_sample(const struct decoded *d, uint32_t tid, int user,
					   int kernel)
{
	size_t nr = w_stacks[user].nr + w_stacks[kernel].nr;

	for (size_t i = 0; i < d->nr_samples; i++) {
		const struct d_sample *s = &d->samples[i];

		if (label_num(d, s, "tid") == tid && s->nr_locs == nr &&
		    loc(d, s->locs[nr - 1])->address == w_stacks[user].ips[w_stacks[user].nr - 1] &&
		    (!w_stacks[kernel].nr || loc(d, s->locs[0])->address == KBASE + 0x40))
			return s;
	}
	fail_msg("no sample of tid %u, stacks %d/%d", tid, user, kernel);
	return NULL;
}

/* Every thread with every stack, with and without kernel frames: each
 * Sample must be its count, frame by frame, whatever was shared. */
static void test_shared_stacks(void **unused)
{
	char path[] = "/tmp/test_pprof.XXXXXX";
	static struct bpfprof_count counts[128];
	static struct decoded d;
	struct bpfprof_profile prof = {
		.run = &run, .processes = w_procs, .nr_processes = 4, .threads = w_threads,
		.nr_threads = 6, .stacks = w_stacks, .nr_stacks = W_NR_STACKS, .counts = counts,
	};
	char *want[128], *got[128];
	size_t n = 0, len;
	uint8_t *data;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	for (uint32_t t = 0; t < 6; t++) {
		if (t == 1 || t == 3)
			counts[n++] = (struct bpfprof_count){ .thread = t, .kernel_stack = W_K1,
							      .samples = 4 };
		for (int u = W_S1; u <= (t == 5 ? W_S5 : W_S4); u++)
			for (int k = 0; k < 2; k++)
				counts[n++] = (struct bpfprof_count){
					.thread = t, .user_stack = (uint32_t)u,
					.kernel_stack = k ? W_K1 : 0,
					.samples = 1 + (t + u + k) % 3 };
	}
	prof.nr_counts = n;
	host_init(world_symbolize);
	assert_int_equal(run_plugin(&prof, path), 0);
	assert_int_equal(fh.nr_errors, 0);
	data = gunzip_file(path, &len);
	decode(data, len, &d);

	/* the samples, as a set, are the counts */
	assert_int_equal(d.nr_samples, n);
	for (size_t i = 0; i < n; i++) {
		want[i] = expected_sample(&counts[i], (int64_t)run.sample_period);
		got[i] = decoded_sample(&d, &d.samples[i]);
	}
	qsort(want, n, sizeof(*want), compare_strings);
	qsort(got, n, sizeof(*got), compare_strings);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(got[i], want[i]);
		free(want[i]);
		free(got[i]);
	}

	/* what is shared and what is not */
	const struct d_sample *w0 = world_sample(&d, 100, W_S1, 0);
	const struct d_sample *w1 = world_sample(&d, 103, W_S1, 0);
	const struct d_sample *flaky = world_sample(&d, 300, W_S1, 0);
	const struct d_sample *other = world_sample(&d, 200, W_S5, 0);
	assert_memory_equal(w0->locs, w1->locs, 3 * sizeof(w0->locs[0]));	/* forked */
	assert_int_equal(flaky->locs[0], w0->locs[0]);
	assert_int_not_equal(flaky->locs[1], w0->locs[1]);	/* its libc unreadable */
	assert_int_equal(loc(&d, flaky->locs[1])->nr_lines, 0);
	assert_int_equal(other->locs[1], w0->locs[1]);		/* the same libc */
	assert_int_not_equal(other->locs[0], w0->locs[0]);
	const struct d_sample *jit0 = world_sample(&d, 102, W_S2, W_K1);
	const struct d_sample *jit1 = world_sample(&d, 101, W_S2, W_K1);
	assert_int_not_equal(jit0->locs[2], jit1->locs[2]);	/* JIT code: each its own */
	assert_memory_equal(&jit0->locs[3], &jit1->locs[3], 2 * sizeof(jit0->locs[0]));
	assert_memory_equal(jit0->locs, world_sample(&d, 200, W_S3, W_K1)->locs,
			    2 * sizeof(jit0->locs[0]));			/* kernel frames */
	const struct d_sample *rec = world_sample(&d, 100, W_S4, 0);
	assert_int_equal(rec->locs[1], rec->locs[2]);
	assert_int_equal(rec->locs[2], rec->locs[3]);
	assert_int_not_equal(rec->locs[0], rec->locs[1]);

	/* mappings: the executable twice (two places), libc once, each JIT
	 * mapping, the kernel; the executable first, the kernel last */
	assert_int_equal(d.nr_mappings, 7);
	assert_string_equal(str(&d, d.mappings[0].file), "/srv/app");
	assert_string_equal(str(&d, d.mappings[6].file), "[kernel.kallsyms]");
	size_t app = 0, libc = 0, jit = 0;
	for (size_t i = 0; i < d.nr_mappings; i++) {
		app += !strcmp(str(&d, d.mappings[i].file), "/srv/app");
		libc += !strcmp(str(&d, d.mappings[i].file), "/lib/libc.so.6");
		jit += !strcmp(str(&d, d.mappings[i].file), "");
	}
	assert_int_equal(app, 2);
	assert_int_equal(libc, 1);
	assert_int_equal(jit, 3);
	/* no location twice */
	for (size_t i = 0; i < d.nr_locations; i++)
		for (size_t j = i + 1; j < d.nr_locations; j++)
			assert_int_not_equal(d.locations[i].id, d.locations[j].id);

	free_decoded(&d);
	free(data);
	unlink(path);
}

/* An empty profile still gives a valid file with its header. */
static void test_empty_profile(void **unused)
{
	char path[] = "/tmp/test_pprof.XXXXXX";
	struct bpfprof_profile empty = profile;
	static struct decoded d;
	uint8_t *data;
	size_t len;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	empty.nr_counts = 0;
	host_init(app_symbolize);
	assert_int_equal(run_plugin(&empty, path), 0);
	data = gunzip_file(path, &len);
	decode(data, len, &d);
	assert_int_equal(d.nr_samples, 0);
	assert_int_equal(d.nr_sample_types, 2);
	assert_int_equal(d.period, 10000000);
	free_decoded(&d);
	free(data);
	unlink(path);
}

/* The label @key of @s, or NULL. */
static const struct d_label *find_label(const struct decoded *d, const struct d_sample *s,
					const char *key)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(str(d, s->labels[i].key), key))
			return &s->labels[i];
	return NULL;
}

/*
 * The threads' identities become labels: node (the host name, a string)
 * on every sample, rank (numeric, unit "rank") only where it is known,
 * rank 0 included (go tool pprof keeps a 0 only with its unit).  Without
 * thread_ids (a host before 0.2) neither label is written.
 */
static void test_identity_labels(void **unused)
{
	char path[] = "/tmp/test_pprof.XXXXXX";
	static const struct bpfprof_thread_identity ids[] = {
		{ .host = "node-a", .rank = 0, .host_pid = 42, .host_tid = 42 },
		{ .host = "node-a", .rank = -1, .thread = 1, .host_pid = 42, .host_tid = 43 },
	};
	struct bpfprof_profile p = profile;
	static struct decoded d;
	const struct d_label *l;
	uint8_t *data;
	size_t len;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	p.thread_ids = ids;
	host_init(app_symbolize);
	assert_int_equal(run_plugin(&p, path), 0);
	data = gunzip_file(path, &len);
	decode(data, len, &d);
	const struct d_sample *s0 = find_sample(&d, 42, 5), *s2 = find_sample(&d, 43, 3);
	assert_string_equal(label_str(&d, s0, "node"), "node-a");
	assert_string_equal(label_str(&d, s2, "node"), "node-a");
	assert_non_null(l = find_label(&d, s0, "rank"));
	assert_int_equal(l->num, 0);
	assert_int_equal(l->str, 0);
	assert_string_equal(str(&d, l->unit), "rank");
	assert_null(find_label(&d, s2, "rank"));
	assert_int_equal(label_num(&d, s2, "tid"), 43);	/* the others are still there */
	if (system("command -v go >/dev/null 2>&1") == 0) {
		char cmd[512];

		snprintf(cmd, sizeof(cmd), "go tool pprof -sample_index=samples -tags %s 2>/dev/null | "
			 "grep -A1 -E '^ *rank: Total 7(\\.0)?$' | grep -Eq ' 7(\\.0)? \\(.*\\): 0$'", path);
		assert_int_equal(system(cmd), 0);
		snprintf(cmd, sizeof(cmd), "go tool pprof -sample_index=samples -tags %s 2>/dev/null | "
			 "grep -A1 -E '^ *node: Total 10(\\.0)?$' | grep -Eq ' 10(\\.0)? \\(.*\\): node-a$'", path);
		assert_int_equal(system(cmd), 0);
	}
	free_decoded(&d);
	free(data);

	/* rank 7 on both threads; no thread_ids: no node, no rank */
	struct bpfprof_thread_identity seven[2] = { ids[0], ids[1] };
	seven[0].rank = seven[1].rank = 7;
	p.thread_ids = seven;
	assert_int_equal(run_plugin(&p, path), 0);
	data = gunzip_file(path, &len);
	decode(data, len, &d);
	for (size_t i = 0; i < d.nr_samples; i++)
		assert_int_equal(label_num(&d, &d.samples[i], "rank"), 7);
	free_decoded(&d);
	free(data);
	p.thread_ids = NULL;
	assert_int_equal(run_plugin(&p, path), 0);
	data = gunzip_file(path, &len);
	decode(data, len, &d);
	for (size_t i = 0; i < d.nr_samples; i++) {
		assert_null(find_label(&d, &d.samples[i], "rank"));
		assert_null(find_label(&d, &d.samples[i], "node"));
	}
	free_decoded(&d);
	free(data);

	/* a merge renumbered the process (4194346, 4194347): pid and tid are
	 * the ids it had on its node */
	struct bpfprof_thread_identity moved[2] = { ids[0], ids[1] };
	moved[0].host_pid = moved[0].host_tid = moved[1].host_pid = 900;
	moved[1].host_tid = 901;
	p.thread_ids = moved;
	assert_int_equal(run_plugin(&p, path), 0);
	data = gunzip_file(path, &len);
	decode(data, len, &d);
	assert_int_equal(d.nr_samples > 0, 1);
	for (size_t i = 0; i < d.nr_samples; i++) {
		int64_t tid = label_num(&d, &d.samples[i], "tid");

		assert_int_equal(label_num(&d, &d.samples[i], "pid"), 900);
		assert_true(tid == 900 || tid == 901);
	}
	free_decoded(&d);
	free(data);
	unlink(path);
}

/* A count naming a missing stack is an error with a message. */
static void test_bad_stack(void **unused)
{
	char path[] = "/tmp/test_pprof.XXXXXX";
	struct bpfprof_count bad[] = { { .thread = 0, .user_stack = 9, .samples = 1 } };
	struct bpfprof_profile p = profile;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	p.counts = bad;
	p.nr_counts = 1;
	host_init(app_symbolize);
	assert_int_equal(run_plugin(&p, path), -EINVAL);
	assert_int_equal(fh.nr_errors, 1);
	assert_non_null(strstr(fh.error, "pprof:"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint),
		cmocka_unit_test(test_nested_lengths),
		cmocka_unit_test(test_len_prefix),
		cmocka_unit_test(test_profile),
		cmocka_unit_test(test_shared_stacks),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_bad_stack),
		cmocka_unit_test(test_identity_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
