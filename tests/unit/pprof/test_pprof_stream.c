// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_pprof_stream.c - unit tests of the pprof plugin's machinery for big
 * profiles (plugins/pprof/): its open-addressing tables (common/hashtab.h);
 * a profile of 600,000 locations and over 32 MB of protobuf, so that
 * locations are written in more than one batch and the compressor's ring
 * of buffers wraps around, decoded back and checked (every location once,
 * symbolized right, each batch in address order, every sample with its
 * frames and values); and write errors met by the compressor thread.
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
#include "pprof/pprof.h"

/* --- the table ------------------------------------------------------------- */

/* The plugin's tables (common/hashtab.h, dense as pprof_tables.c makes
 * them; pprof_find() reads them). */
static void test_idmap(void **unused)
{
	struct hashtab m = { .dense = 1 };
	const uint32_t n = 200000;

	assert_int_equal(pprof_find(&m, 1, 0), 0);
	assert_int_equal(hashtab_put(&m, 1, 0, HASHTAB_NONE), -EINVAL);
	/* keys that differ only in a or only in b, and a = 0 */
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(hashtab_put(&m, i / 2, i % 2, i + 1), 0);
	assert_int_equal(m.n, n);
	assert_true(m.n * 4 <= (m.mask + 1) * 3);	/* at most 3/4 full */
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(pprof_find(&m, i / 2, i % 2), i + 1);
	assert_int_equal(pprof_find(&m, n, 0), 0);
	assert_int_equal(pprof_find(&m, 0, 2), 0);
	hashtab_free(&m);
	assert_null(m.slots);
	assert_int_equal(pprof_find(&m, 0, 0), 0);
}

/* --- a big profile ----------------------------------------------------------- */

#define BASE 0x10000000ull
#define NR_STACKS 6000u
#define DEPTH 100u
#define NR_THREADS 20u
#define PERIOD 1000000u
#define NR_FUNCS 2400u		/* one per 4 KiB of text, more than used */

static const struct bpfprof_mapping big_map = {
	.start = BASE, .end = BASE + 0x10000000, .prot = 5, .inode = 5, .path = "/big/bin",
};
static char *func_names[NR_FUNCS];
static uint64_t *ips;			/* NR_STACKS * DEPTH */
static struct bpfprof_stack stacks[1 + NR_STACKS];
static struct bpfprof_thread threads[NR_THREADS];
static struct bpfprof_count *counts;
static uint32_t stack_at[NR_STACKS];	/* stack s from the place of its frames */
static const struct bpfprof_process big_proc = {
	.pid = 7, .comm = "big", .exe = "/big/bin", .mappings = &big_map, .nr_mappings = 1,
	.first_thread = 0, .nr_threads = NR_THREADS,
};
static const struct bpfprof_run big_run = { .version = "test", .sample_period = PERIOD };
static struct bpfprof_profile big = {
	.run = &big_run, .processes = &big_proc, .nr_processes = 1, .threads = threads,
	.nr_threads = NR_THREADS, .stacks = stacks, .nr_stacks = 1 + NR_STACKS,
};

/* Frame j of stack s: every frame a different address, stacks in an
 * order unrelated to their addresses, frames descending within. */
static uint64_t frame_ip(uint32_t s, uint32_t j)
{
	uint32_t k = (s * 7919u) % NR_STACKS;

	return BASE + ((uint64_t)k * DEPTH + (DEPTH - 1 - j)) * 16 + 4;
}

static int big_symbolize(struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
			 struct bpfprof_symbol *sym)
{
	if (kernel || pid != 7 || ip < big_map.start || ip >= big_map.end)
		return -ENOENT;
	sym->mapping = &big_map;
	sym->module = big_map.path;
	sym->module_offset = ip - BASE;
	sym->function = func_names[((ip - BASE) >> 12) % NR_FUNCS];
	sym->file = "big.c";
	sym->line = (uint32_t)((ip >> 4) & 0xffff);
	return 0;
}

static struct fake_host fh;		/* symbols by big_symbolize() */

static int setup_big(void **unused)
{
	size_t n = 0;

	for (uint32_t f = 0; f < NR_FUNCS; f++)
		assert_true(asprintf(&func_names[f], "function_%u", f) > 0);
	ips = calloc((size_t)NR_STACKS * DEPTH, sizeof(*ips));
	counts = calloc((size_t)NR_STACKS * NR_THREADS, sizeof(*counts));
	assert_non_null(ips);
	assert_non_null(counts);
	for (uint32_t s = 0; s < NR_STACKS; s++) {
		stack_at[(s * 7919u) % NR_STACKS] = s;
		for (uint32_t j = 0; j < DEPTH; j++)
			ips[(size_t)s * DEPTH + j] = frame_ip(s, j);
		stacks[1 + s] = (struct bpfprof_stack){ .ips = &ips[(size_t)s * DEPTH],
							.nr = DEPTH };
	}
	for (uint32_t t = 0; t < NR_THREADS; t++) {
		threads[t] = (struct bpfprof_thread){ .tid = 7 + t, .pid = 7, .process = 0,
						      .comm = "big" };
		for (uint32_t s = 0; s < NR_STACKS; s++)
			counts[n++] = (struct bpfprof_count){ .thread = t, .user_stack = 1 + s,
							      .samples = 1 + (s + t) % 5 };
	}
	big.counts = counts;
	big.nr_counts = n;
	return 0;
}

static int teardown_big(void **unused)
{
	for (uint32_t f = 0; f < NR_FUNCS; f++)
		free(func_names[f]);
	free(ips);
	free(counts);
	return 0;
}

const struct bpfprof_plugin *bpfprof_plugin_entry(uint32_t);

/* Run the plugin on @prof into @file; returns write()'s result. */
static int run_plugin(const struct bpfprof_profile *prof, FILE *file, const char *path)
{
	const struct bpfprof_plugin *pl = bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION);
	struct bpfprof_output out = { .file = file, .dir_fd = -1, .path = path };
	void *state = NULL;
	int err;

	assert_non_null(pl);
	fake_host_init(&fh);
	fh.resolve = big_symbolize;
	assert_int_equal(pl->open(&fh.host, prof->run, &out, &state), 0);
	err = pl->write(state, prof);
	pl->close(state);
	return err;
}

/* --- reading it back ----------------------------------------------------------- */

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

struct field {
	uint32_t num;
	uint64_t v;			/* varint value, or length */
	const uint8_t *data;		/* length-delimited bytes */
};

/* Next field of [*p, end); 1 if one was read, 0 at the end. */
static int next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
	uint64_t key;

	if (*p >= end)
		return 0;
	assert_int_equal(read_varint(p, end, &key), 0);
	f->num = (uint32_t)(key >> 3);
	assert_int_equal(read_varint(p, end, &f->v), 0);
	f->data = NULL;
	if ((key & 7) == 2) {
		assert_true(f->v <= (uint64_t)(end - *p));
		f->data = *p;
		*p += f->v;
	} else {
		assert_int_equal(key & 7, 0);
	}
	return 1;
}

struct big_loc {
	uint64_t address, function, line;
};

struct big_decoded {
	struct big_loc *locs;		/* by id - 1 */
	size_t nr_locs;
	size_t descents;		/* locations in file order: address going down */
	uint64_t *func_name;		/* function id - 1 -> string index */
	size_t nr_funcs;
	char **strings;
	size_t nr_strings;
	const uint8_t **samples;	/* the Sample messages */
	size_t *sample_len;
	size_t nr_samples;
};

static void read_location(struct big_decoded *d, const struct field *f, uint64_t *last)
{
	const uint8_t *p = f->data, *end = p + f->v;
	struct big_loc l = { 0 };
	uint64_t id = 0;
	struct field g, h;

	while (next_field(&p, end, &g)) {
		if (g.num == 1)
			id = g.v;
		else if (g.num == 3)
			l.address = g.v;
		else if (g.num == 4)
			for (const uint8_t *q = g.data; next_field(&q, g.data + g.v, &h);)
				*(h.num == 1 ? &l.function : &l.line) = h.v;
	}
	assert_true(id >= 1 && id <= (uint64_t)NR_STACKS * DEPTH);
	assert_int_equal(d->locs[id - 1].address, 0);	/* once */
	d->locs[id - 1] = l;
	d->nr_locs++;
	d->descents += l.address < *last;
	*last = l.address;
}

static void read_function(struct big_decoded *d, const struct field *f)
{
	const uint8_t *p = f->data, *end = p + f->v;
	uint64_t id = 0, name = 0;
	struct field g;

	while (next_field(&p, end, &g)) {
		if (g.num == 1)
			id = g.v;
		else if (g.num == 2)
			name = g.v;
	}
	assert_true(id >= 1 && id <= NR_FUNCS);
	d->func_name[id - 1] = name;
	d->nr_funcs++;
}

static void read_profile(const uint8_t *data, size_t len, struct big_decoded *d)
{
	const uint8_t *p = data, *end = data + len;
	uint64_t last = 0;
	struct field f;

	memset(d, 0, sizeof(*d));
	d->locs = calloc((size_t)NR_STACKS * DEPTH, sizeof(*d->locs));
	d->func_name = calloc(NR_FUNCS, sizeof(*d->func_name));
	d->strings = calloc(2 * NR_FUNCS, sizeof(*d->strings));
	d->samples = calloc(big.nr_counts, sizeof(*d->samples));
	d->sample_len = calloc(big.nr_counts, sizeof(*d->sample_len));
	while (next_field(&p, end, &f)) {
		if (f.num == 2) {
			assert_true(d->nr_samples < big.nr_counts);
			d->samples[d->nr_samples] = f.data;
			d->sample_len[d->nr_samples++] = f.v;
		} else if (f.num == 4) {
			read_location(d, &f, &last);
		} else if (f.num == 5) {
			read_function(d, &f);
		} else if (f.num == 6) {
			assert_true(d->nr_strings < 2 * NR_FUNCS);
			d->strings[d->nr_strings++] = strndup((const char *)f.data, f.v);
		}
	}
}

static void free_decoded(struct big_decoded *d)
{
	for (size_t i = 0; i < d->nr_strings; i++)
		free(d->strings[i]);
	free(d->strings);
	free(d->locs);
	free(d->func_name);
	free(d->samples);
	free(d->sample_len);
}

/* Sample @i: thread @tid's count of one stack, its frames those of the stack. */
static void check_sample(const struct big_decoded *d, size_t i, uint64_t *total)
{
	const uint8_t *p = d->samples[i], *end = p + d->sample_len[i];
	uint64_t ids[DEPTH], tid = 0, v, values[2] = { 0 };
	size_t nr = 0, nv = 0;
	struct field f, g;

	while (next_field(&p, end, &f)) {
		for (const uint8_t *q = f.data; (f.num == 1 || f.num == 2) && q < f.data + f.v;) {
			assert_int_equal(read_varint(&q, f.data + f.v, &v), 0);
			if (f.num == 1) {
				assert_true(nr < DEPTH);
				ids[nr++] = v;
			} else {
				assert_true(nv < 2);
				values[nv++] = v;
			}
		}
		if (f.num == 3) {
			uint64_t key = 0, num = 0;

			for (const uint8_t *q = f.data; next_field(&q, f.data + f.v, &g);) {
				if (g.num == 1)
					key = g.v;
				else if (g.num == 3)
					num = g.v;
			}
			if (!strcmp(d->strings[key], "tid"))
				tid = num;
		}
	}
	assert_int_equal(nr, DEPTH);
	assert_int_equal(nv, 2);
	assert_true(tid >= 7 && tid < 7 + NR_THREADS);
	/* the stack from its leaf, the count from the stack and thread */
	uint64_t leaf = d->locs[ids[0] - 1].address - BASE - 4;
	uint32_t s = stack_at[leaf / 16 / DEPTH];

	for (uint32_t j = 0; j < DEPTH; j++)
		assert_int_equal(d->locs[ids[j] - 1].address, frame_ip(s, j));
	assert_int_equal(values[0], 1 + (s + (tid - 7)) % 5);
	assert_int_equal(values[1], values[0] * PERIOD);
	*total += values[0];
}

static uint8_t *gunzip_file(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	int n;

	assert_non_null(gz);
	*len = 0;
	while ((n = gzread(gz, buf + *len, (unsigned)(cap - *len))) > 0) {
		*len += (size_t)n;
		if (*len == cap)
			buf = realloc(buf, cap *= 2);
	}
	assert_int_equal(n, 0);
	gzclose(gz);
	return buf;
}

static void test_big_profile(void **unused)
{
	char path[] = "/tmp/test_pprof_stream.XXXXXX";
	struct big_decoded d;
	uint64_t total = 0, want = 0;
	uint8_t *data;
	size_t len;
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w+b");
	assert_non_null(f);
	assert_int_equal(run_plugin(&big, f, path), 0);
	assert_string_equal(fh.error, "");
	fclose(f);
	data = gunzip_file(path, &len);
	assert_true(len > 33u << 20);		/* more than the ring of buffers */
	read_profile(data, len, &d);

	/* every location once, symbolized right; written in address
	 * order, batch by batch (fewer than 4 batches here) */
	assert_int_equal(d.nr_locs, (size_t)NR_STACKS * DEPTH);
	assert_true(d.descents >= 1 && d.descents < 4);
	assert_int_equal(d.nr_funcs, ((size_t)NR_STACKS * DEPTH * 16 + 4095) / 4096);
	assert_string_equal(d.strings[0], "");
	for (size_t i = 0; i < d.nr_locs; i++) {
		const struct big_loc *l = &d.locs[i];
		struct bpfprof_symbol sym;

		/* (callers are symbolized at address - 1: the same here) */
		assert_int_equal(fh.host.symbolize(&fh.host, 7, l->address, 0, &sym), 0);
		assert_true(l->function >= 1 && l->function <= NR_FUNCS);
		assert_string_equal(d.strings[d.func_name[l->function - 1]], sym.function);
		assert_int_equal(l->line, sym.line);
	}
	/* every count once, with its frames and values */
	assert_int_equal(d.nr_samples, big.nr_counts);
	for (size_t i = 0; i < d.nr_samples; i++)
		check_sample(&d, i, &total);
	for (size_t i = 0; i < big.nr_counts; i++)
		want += counts[i].samples;
	assert_int_equal(total, want);

	free_decoded(&d);
	free(data);
	unlink(path);
}

/* --- errors -------------------------------------------------------------------- */

/* Writing fails (ENOSPC): found in the compressor thread with a big
 * profile, at the final flush with a small one; reported, no leak. */
static void test_write_error(void **unused)
{
	struct bpfprof_profile small = big;
	FILE *f;

	small.nr_counts = 3;
	for (int i = 0; i < 2; i++) {
		f = fopen("/dev/full", "wb");
		if (!f)
			skip();
		assert_int_equal(run_plugin(i ? &small : &big, f, "/dev/full"), -ENOSPC);
		assert_non_null(strstr(fh.error, "pprof: cannot write /dev/full"));
		fclose(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idmap),
		cmocka_unit_test(test_big_profile),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, setup_big, teardown_big);
}
