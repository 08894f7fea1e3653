// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_gperftools.c - unit tests of the gperftools output plugin
 * (plugins/gperftools/gperftools.c), driven through the plugin ABI with
 * hand-built profiles and the fake host (tests/unit/lib/fake_host.h).
 *
 * The first group checks the bytes: header, records (merging, order, the
 * leaf written twice, the guard against pprof's second-frame stripping),
 * trailer, mapped objects, skipped samples and write errors, and the
 * image of Python functions written as the output's companion file.  The second
 * group writes profiles whose addresses are real return addresses of this
 * test program (captured with backtrace()) plus its own /proc/self/maps,
 * feeds them to google-pprof and go tool pprof, and checks that whole call
 * chains reach the reports, for profiles with one hot path and with
 * several.  Those tests are skipped when a reader is not installed.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpfprof/plugin.h"
#include "fake_host.h"

#define NOIPA __attribute__((noipa))

/* --- the host's symbols --------------------------------------------------- */

static uint64_t entry_ip;		/* entry_symbolize() calls this a function entry */

/* Every address is in function "f" of /fake, which starts at entry_ip if
 * the address is entry_ip, else one byte before the address. */
static int entry_symbolize(struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
			   struct bpfprof_symbol *sym)
{
	sym->module = "/fake";
	sym->module_offset = ip;
	sym->function = "f";
	sym->function_start = ip == entry_ip ? ip : ip - 1;
	return 0;
}

/* --- building profiles ------------------------------------------------------ */

#define MAX_STACKS 16
#define MAX_COUNTS 32

/* A profile of one process with up to MAX_STACKS stacks and MAX_COUNTS
 * counts, and the host the plugin gets with it. */
struct test_profile {
	struct fake_host fh;
	struct bpfprof_run run;
	struct bpfprof_process proc;
	struct bpfprof_thread threads[4];
	struct bpfprof_stack stacks[MAX_STACKS];
	struct bpfprof_count counts[MAX_COUNTS];
	struct bpfprof_profile prof;
};

static void tp_init(struct test_profile *tp, uint64_t period_ns)
{
	memset(tp, 0, sizeof(*tp));
	fake_host_init(&tp->fh);
	tp->run.version = "test";
	tp->run.event = "cpu-clock";
	tp->run.sample_period = period_ns;
	tp->proc.pid = 4242;
	tp->proc.comm = "test";
	tp->proc.exe = "/test";
	tp->proc.cmdline = "test";
	tp->proc.nr_threads = 4;
	for (uint32_t i = 0; i < 4; i++)
		tp->threads[i] = (struct bpfprof_thread){ .tid = 4242 + i, .pid = 4242, .comm = "t" };
	tp->prof.run = &tp->run;
	tp->prof.processes = &tp->proc;
	tp->prof.nr_processes = 1;
	tp->prof.threads = tp->threads;
	tp->prof.nr_threads = 4;
	tp->prof.stacks = tp->stacks;
	tp->prof.nr_stacks = 1;		/* stacks[0]: the empty stack */
	tp->prof.counts = tp->counts;
}

static uint32_t tp_stack(struct test_profile *tp, const uint64_t *ips, uint32_t nr, int kernel)
{
	assert_true(tp->prof.nr_stacks < MAX_STACKS);
	tp->stacks[tp->prof.nr_stacks] = (struct bpfprof_stack){ .ips = ips, .nr = nr, .kernel = kernel };
	return tp->prof.nr_stacks++;
}

static void tp_count(struct test_profile *tp, uint32_t thread, uint32_t ustack, uint32_t kstack,
		     uint64_t samples)
{
	assert_true(tp->prof.nr_counts < MAX_COUNTS);
	tp->counts[tp->prof.nr_counts++] = (struct bpfprof_count){
		.thread = thread, .user_stack = ustack, .kernel_stack = kstack, .samples = samples };
}

static const struct bpfprof_plugin *plugin(void)
{
	const struct bpfprof_plugin *p = bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION);

	assert_non_null(p);
	return p;
}

/* Run open/write/close on @f; returns write()'s result. */
static int run_plugin(struct test_profile *tp, FILE *f, const char *path)
{
	const struct bpfprof_plugin *p = plugin();
	struct bpfprof_output out = { .file = f, .dir_fd = -1, .path = path, .pid = tp->proc.pid };
	void *state = NULL;
	int err = p->open(&tp->fh.host, &tp->run, &out, &state);

	assert_int_equal(err, 0);
	err = p->write(state, &tp->prof);
	p->close(state);
	return err;
}

/* Write @tp into memory; returns the bytes (malloc'd) and their size. */
static uint8_t *write_to_memory(struct test_profile *tp, size_t *size)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(run_plugin(tp, f, "test.prof"), 0);
	assert_int_equal(tp->fh.nr_errors, 0);
	assert_int_equal(fflush(f), 0);
	long len = ftell(f);
	assert_true(len >= 0);
	uint8_t *buf = malloc(len + 1);
	assert_non_null(buf);
	rewind(f);
	assert_int_equal(fread(buf, 1, len, f), (size_t)len);
	buf[len] = 0;
	fclose(f);
	*size = len;
	return buf;
}

/* The binary part of a written profile must equal @slots; returns the rest. */
static const char *assert_slots(const uint8_t *buf, size_t size, const uint64_t *slots, size_t n)
{
	assert_true(size >= n * 8);
	for (size_t i = 0; i < n; i++) {
		uint64_t v;

		memcpy(&v, buf + i * 8, 8);
		if (v != slots[i])
			fail_msg("slot %zu is 0x%" PRIx64 ", expected 0x%" PRIx64, i, v, slots[i]);
	}
	return (const char *)buf + n * 8;
}

/* --- byte-exact tests ----------------------------------------------------- */

static void test_entry_checks_abi(void **unused)
{
	const struct bpfprof_plugin *p = plugin();

	assert_null(bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION + 1));
	assert_int_equal(p->abi_version, BPFPROF_PLUGIN_ABI_VERSION);
	assert_string_equal(p->name, "gperftools");
	assert_string_equal(p->default_output, "bpfprof.prof");
	assert_int_equal(p->flags, BPFPROF_PLUGIN_PER_PROCESS);
	assert_null(p->event);
}

/* Header and trailer of an empty profile; period rounded to microseconds. */
static void test_header_and_trailer(void **unused)
{
	static const struct { uint64_t ns, us; } periods[] = {
		{ 2004008, 2004 },	/* 499 Hz */
		{ 10000000, 10000 },	/* 100 Hz */
		{ 1001500, 1002 },	/* rounds half up */
		{ 1001499, 1001 },
		{ 100, 1 },		/* never 0 */
	};

	for (size_t i = 0; i < sizeof(periods) / sizeof(periods[0]); i++) {
		struct test_profile tp;
		size_t size;

		tp_init(&tp, periods[i].ns);
		tp.fh.host.symbolize = NULL;	/* a host may lack it */
		uint8_t *buf = write_to_memory(&tp, &size);
		const uint64_t want[] = { 0, 3, 0, periods[i].us, 0, 0, 1, 0 };

		assert_int_equal(size, sizeof(want));
		assert_slots(buf, size, want, 8);
		assert_int_equal(tp.fh.nr_warnings, 0);
		free(buf);
	}
}

/*
 * Identical user chains are merged across threads and across kernel
 * stacks (also when they are different stack objects with the same
 * addresses); kernel frames never reach the file; records are ordered by
 * count, then by chain, and written as they are.
 */
static void test_records_merged_and_ordered(void **unused)
{
	static const uint64_t chain_a[] = { 0x401010, 0x402020, 0x403030 };
	static const uint64_t chain_a_copy[] = { 0x401010, 0x402020, 0x403030 };
	static const uint64_t chain_b[] = { 0x401110, 0x402020, 0x403030 };
	static const uint64_t chain_c[] = { 0x401210, 0x402120, 0x403030 };
	static const uint64_t kstack[] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL };
	struct test_profile tp;
	size_t size;

	tp_init(&tp, 10000000);
	uint32_t a = tp_stack(&tp, chain_a, 3, 0);
	uint32_t a2 = tp_stack(&tp, chain_a_copy, 3, 0);
	uint32_t b = tp_stack(&tp, chain_b, 3, 0);
	uint32_t c = tp_stack(&tp, chain_c, 3, 0);
	uint32_t k = tp_stack(&tp, kstack, 2, 1);
	tp_count(&tp, 0, a, 0, 3);
	tp_count(&tp, 0, b, 0, 4);
	tp_count(&tp, 0, c, k, 4);
	tp_count(&tp, 1, a, 0, 2);
	tp_count(&tp, 1, a, k, 1);
	tp_count(&tp, 2, a2, 0, 5);
	uint8_t *buf = write_to_memory(&tp, &size);
	const uint64_t want[] = {
		0, 3, 0, 10000, 0,
		11, 3, 0x401010, 0x402020, 0x403030,	/* a: 3 + 2 + 1 + 5 */
		4, 3, 0x401110, 0x402020, 0x403030,	/* b before c: same */
		4, 3, 0x401210, 0x402120, 0x403030,	/* count, lower chain */
		0, 1, 0,
	};
	size_t n = sizeof(want) / sizeof(want[0]);

	assert_int_equal(size, n * 8);
	assert_slots(buf, size, want, n);
	assert_int_equal(tp.fh.nr_warnings, 0);
	free(buf);

	/* The same profile gives the same bytes whatever the count order. */
	struct bpfprof_count tmp = tp.counts[0];
	tp.counts[0] = tp.counts[5];
	tp.counts[5] = tmp;
	size_t size2;
	uint8_t *buf2 = write_to_memory(&tp, &size2);
	assert_int_equal(size2, size);
	assert_slots(buf2, size2, want, n);
	free(buf2);
}

/* Samples without user frames are left out and reported in one warning,
 * and so are those with a leaf pc of 0 (google-pprof's end marker). */
static void test_empty_user_stack_skipped(void **unused)
{
	static const uint64_t chain[] = { 0x401010, 0x402020 };
	static const uint64_t chain2[] = { 0x401020, 0x402020 };
	static const uint64_t zero_leaf[] = { 0, 0x402020 };
	static const uint64_t kstack[] = { 0xffffffff81000010ULL };
	struct test_profile tp;
	size_t size;

	tp_init(&tp, 10000000);
	uint32_t u = tp_stack(&tp, chain, 2, 0);
	uint32_t u2 = tp_stack(&tp, chain2, 2, 0);
	uint32_t k = tp_stack(&tp, kstack, 1, 1);
	tp_count(&tp, 0, 0, k, 7);	/* kernel only */
	tp_count(&tp, 0, u, 0, 2);
	tp_count(&tp, 1, 0, k, 5);
	tp_count(&tp, 1, u2, k, 1);
	tp_count(&tp, 2, 0, 0, 1);	/* no frames at all */
	tp_count(&tp, 2, tp_stack(&tp, zero_leaf, 2, 0), 0, 4);
	uint8_t *buf = write_to_memory(&tp, &size);
	const uint64_t want[] = {
		0, 3, 0, 10000, 0,
		2, 2, 0x401010, 0x402020,
		1, 3, 0x401020, 0x401020, 0x402020,	/* see test_one_caller_guard */
		0, 1, 0,
	};
	size_t n = sizeof(want) / sizeof(want[0]);

	assert_int_equal(size, n * 8);
	assert_slots(buf, size, want, n);
	assert_int_equal(tp.fh.nr_warnings, 1);
	assert_non_null(strstr(tp.fh.warning, "17 samples"));
	assert_non_null(strstr(tp.fh.warning, "test.prof"));
	free(buf);
}

/*
 * One chain only: its caller would be at position 1 of every record and
 * both readers would strip frames, so the record is split into a plain
 * record and a leaf-twice record of count 1.
 */
static void test_single_chain_is_split(void **unused)
{
	static const uint64_t chain[] = { 0x401010, 0x402020, 0x403030, 0x404040 };
	struct test_profile tp;
	size_t size;

	tp_init(&tp, 10000000);
	tp_count(&tp, 0, tp_stack(&tp, chain, 4, 0), 0, 10);
	uint8_t *buf = write_to_memory(&tp, &size);
	const uint64_t want[] = {
		0, 3, 0, 10000, 0,
		9, 4, 0x401010, 0x402020, 0x403030, 0x404040,
		1, 5, 0x401010, 0x401010, 0x402020, 0x403030, 0x404040,
		0, 1, 0,
	};
	size_t n = sizeof(want) / sizeof(want[0]);

	assert_int_equal(size, n * 8);
	assert_slots(buf, size, want, n);
	free(buf);

	/* A single sample cannot be split: written as it is. */
	tp.counts[0].samples = 1;
	buf = write_to_memory(&tp, &size);
	const uint64_t want1[] = {
		0, 3, 0, 10000, 0,
		1, 4, 0x401010, 0x402020, 0x403030, 0x404040,
		0, 1, 0,
	};
	n = sizeof(want1) / sizeof(want1[0]);
	assert_int_equal(size, n * 8);
	assert_slots(buf, size, want1, n);
	free(buf);
}

/*
 * Several chains whose leaves have one caller (one hot function): just
 * enough of the smallest records get their leaf twice that no address is
 * at position 1 of n - n/32 records or more.  Different callers of one
 * leaf address (a thread in a system call) need nothing.
 */
static void test_one_caller_guard(void **unused)
{
	static const uint64_t c1[] = { 0x401010, 0x402020, 0x403030 };
	static const uint64_t c2[] = { 0x401014, 0x402020, 0x403030 };
	static const uint64_t c3[] = { 0x401018, 0x402020, 0x403030 };
	static const uint64_t leaf_only[] = { 0x401010 };
	static const uint64_t s1[] = { 0x401010, 0x402020, 0x403030 };
	static const uint64_t s2[] = { 0x401010, 0x402120, 0x403030 };
	struct test_profile tp;
	size_t size;

	tp_init(&tp, 10000000);
	tp_count(&tp, 0, tp_stack(&tp, c1, 3, 0), 0, 5);
	tp_count(&tp, 0, tp_stack(&tp, c2, 3, 0), 0, 3);
	tp_count(&tp, 0, tp_stack(&tp, c3, 3, 0), 0, 2);
	uint8_t *buf = write_to_memory(&tp, &size);
	const uint64_t want[] = {
		0, 3, 0, 10000, 0,
		5, 3, 0x401010, 0x402020, 0x403030,
		3, 3, 0x401014, 0x402020, 0x403030,
		2, 4, 0x401018, 0x401018, 0x402020, 0x403030,	/* leaf twice */
		0, 1, 0,
	};
	size_t n = sizeof(want) / sizeof(want[0]);

	assert_int_equal(size, n * 8);
	assert_slots(buf, size, want, n);
	free(buf);

	/* A leaf-only record has no position 1; it is written as it is, and
	 * with it 3 of 4 records are below the limit. */
	tp_count(&tp, 1, tp_stack(&tp, leaf_only, 1, 0), 0, 1);
	buf = write_to_memory(&tp, &size);
	const uint64_t want2[] = {
		0, 3, 0, 10000, 0,
		5, 3, 0x401010, 0x402020, 0x403030,
		3, 3, 0x401014, 0x402020, 0x403030,
		2, 3, 0x401018, 0x402020, 0x403030,
		1, 1, 0x401010,
		0, 1, 0,
	};
	n = sizeof(want2) / sizeof(want2[0]);
	assert_int_equal(size, n * 8);
	assert_slots(buf, size, want2, n);
	free(buf);

	/* One leaf address, two callers. */
	tp_init(&tp, 10000000);
	tp_count(&tp, 0, tp_stack(&tp, s1, 3, 0), 0, 5);
	tp_count(&tp, 0, tp_stack(&tp, s2, 3, 0), 0, 3);
	buf = write_to_memory(&tp, &size);
	const uint64_t want3[] = {
		0, 3, 0, 10000, 0,
		5, 3, 0x401010, 0x402020, 0x403030,
		3, 3, 0x401010, 0x402120, 0x403030,
		0, 1, 0,
	};
	n = sizeof(want3) / sizeof(want3[0]);
	assert_int_equal(size, n * 8);
	assert_slots(buf, size, want3, n);
	free(buf);
}

/*
 * Go's margin: with 64 records, 62 sharing one caller are too many (the
 * smallest of them gets its leaf twice), 61 not; if all 64 share it, the
 * 3 smallest change.
 */
static void test_one_caller_margin(void **unused)
{
	static uint64_t chains[64][2];
	struct test_profile *tp = calloc(1, sizeof(*tp));
	struct bpfprof_stack stacks[65];
	struct bpfprof_count counts[64];

	assert_non_null(tp);
	static const int cases[][2] = { { 61, 0 }, { 62, 1 }, { 64, 3 } };

	for (size_t k = 0; k < 3; k++) {
		int shared = cases[k][0], nr_twice = cases[k][1];
		size_t size;

		tp_init(tp, 10000000);
		stacks[0] = (struct bpfprof_stack){ 0 };
		for (int i = 0; i < 64; i++) {
			chains[i][0] = 0x401000 + 4 * i;
			chains[i][1] = i < shared ? 0x500000 : 0x500100 + 0x10 * i;
			stacks[i + 1] = (struct bpfprof_stack){ .ips = chains[i], .nr = 2 };
			counts[i] = (struct bpfprof_count){ .thread = 0, .user_stack = i + 1,
							    .samples = 100 - i };
		}
		tp->prof.stacks = stacks;
		tp->prof.nr_stacks = 65;
		tp->prof.counts = counts;
		tp->prof.nr_counts = 64;
		uint8_t *buf = write_to_memory(tp, &size);

		/* Records are in count order, so record i is chain i. */
		const uint8_t *p = buf + 5 * 8;
		int twice = 0;
		for (int i = 0; i < 64; i++) {
			uint64_t rec[4];

			memcpy(rec, p, sizeof(rec));
			assert_int_equal(rec[0], 100 - i);
			assert_int_equal(rec[2], chains[i][0]);
			if (rec[1] == 2) {
				assert_int_equal(rec[3], chains[i][1]);
				p += 4 * 8;
			} else {
				assert_int_equal(rec[1], 3);
				assert_int_equal(rec[3], chains[i][0]);
				/* the smallest records sharing the caller */
				assert_true(i >= shared - nr_twice && i < shared);
				twice++;
				p += 5 * 8;
			}
		}
		assert_int_equal(twice, nr_twice);
		free(buf);
	}
	free(tp);
}

/*
 * A leaf at a function's first byte is written twice only if there is no
 * other choice: google-pprof would resolve the copy (leaf - 1) to the
 * function before.
 */
static void test_function_entry_leaf_last(void **unused)
{
	static const uint64_t c1[] = { 0x401018, 0x402020, 0x403030 };
	static const uint64_t c2[] = { 0x401000, 0x402020, 0x403030 };
	struct test_profile tp;
	size_t size;

	tp_init(&tp, 10000000);
	tp.fh.resolve = entry_symbolize;
	entry_ip = 0x401000;
	tp_count(&tp, 0, tp_stack(&tp, c1, 3, 0), 0, 5);
	tp_count(&tp, 0, tp_stack(&tp, c2, 3, 0), 0, 3);
	uint8_t *buf = write_to_memory(&tp, &size);
	const uint64_t want[] = {
		0, 3, 0, 10000, 0,
		5, 4, 0x401018, 0x401018, 0x402020, 0x403030,
		3, 3, 0x401000, 0x402020, 0x403030,
		0, 1, 0,
	};
	size_t n = sizeof(want) / sizeof(want[0]);

	assert_int_equal(size, n * 8);
	assert_slots(buf, size, want, n);
	free(buf);

	/* A lone record is split all the same. */
	tp_init(&tp, 10000000);
	tp_count(&tp, 0, tp_stack(&tp, c2, 3, 0), 0, 5);
	tp_count(&tp, 1, tp_stack(&tp, c2, 3, 0), 0, 3);
	buf = write_to_memory(&tp, &size);
	const uint64_t want2[] = {
		0, 3, 0, 10000, 0,
		7, 3, 0x401000, 0x402020, 0x403030,
		1, 4, 0x401000, 0x401000, 0x402020, 0x403030,
		0, 1, 0,
	};
	n = sizeof(want2) / sizeof(want2[0]);
	assert_int_equal(size, n * 8);
	assert_slots(buf, size, want2, n);
	free(buf);
}

/* Parse /proc/maps text into mappings (strings point into @text). */
static size_t parse_maps(char *text, struct bpfprof_mapping *maps, size_t max)
{
	size_t n = 0;

	for (char *line = strtok(text, "\n"); line && n < max; line = strtok(NULL, "\n")) {
		struct bpfprof_mapping *m = &maps[n];
		char perm[5];
		unsigned long long start, end, off, inode;
		unsigned maj, min;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perm, &off,
			   &maj, &min, &inode, &pos) < 7)
			continue;
		*m = (struct bpfprof_mapping){ .start = start, .end = end, .pgoff = off,
			.dev_major = maj, .dev_minor = min, .inode = inode, .path = line + pos };
		m->prot = (perm[0] == 'r' ? BPFPROF_PROT_READ : 0) |
			  (perm[1] == 'w' ? BPFPROF_PROT_WRITE : 0) |
			  (perm[2] == 'x' ? BPFPROF_PROT_EXEC : 0);
		m->shared = perm[3] == 's';
		n++;
	}
	return n;
}

/* Everything left in @f as a string (malloc'd). */
static char *read_all(FILE *f)
{
	size_t cap = 1 << 16, len = 0, got;
	char *buf = malloc(cap);

	assert_non_null(f);
	assert_non_null(buf);
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = 0;
	return buf;
}

static char *read_text_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = read_all(f);

	fclose(f);
	return text;
}

/* The mapped-objects text is this process's own /proc/self/maps, byte for
 * byte: same fields, same layout, anonymous and special mappings too. */
static void test_mapped_objects_exact(void **unused)
{
	struct bpfprof_mapping maps[512];
	struct test_profile tp;
	size_t size;
	char *text = read_text_file("/proc/self/maps");
	char *copy = strdup(text);

	assert_non_null(copy);
	tp_init(&tp, 10000000);
	tp.proc.mappings = maps;
	tp.proc.nr_mappings = parse_maps(copy, maps, 512);
	assert_true(tp.proc.nr_mappings > 5);
	uint8_t *buf = write_to_memory(&tp, &size);
	const uint64_t want[] = { 0, 3, 0, 10000, 0, 0, 1, 0 };
	const char *rest = assert_slots(buf, size, want, 8);

	assert_string_equal(rest, text);

	/* Field formatting, the path in column 74, a newline in a path, a
	 * mapping past 32 bits. */
	struct bpfprof_mapping m[] = {
		{ .start = 0x400000, .end = 0x401000, .pgoff = 0x1000, .prot = 5,
		  .dev_major = 0xfe, .dev_minor = 1, .inode = 1234, .path = "/bin/a\nb" },
		{ .start = 0x7f0000000000ULL, .end = 0x7f0000001000ULL, .prot = 3, .shared = 1,
		  .path = "" },
	};
	tp.proc.mappings = m;
	tp.proc.nr_mappings = 2;
	free(buf);
	buf = write_to_memory(&tp, &size);
	rest = assert_slots(buf, size, want, 8);
	assert_string_equal(rest,
		"00400000-00401000 r-xp 00001000 fe:01 1234                               /bin/a\\012b\n"
		"7f0000000000-7f0000001000 rw-s 00000000 00:00 0 \n");
	free(buf);
	free(copy);
	free(text);
}

/* write() fails with a message when the output cannot be written. */
static void test_write_errors(void **unused)
{
	static const uint64_t chain[] = { 0x401010, 0x402020 };
	struct test_profile tp;

	tp_init(&tp, 10000000);
	tp_count(&tp, 0, tp_stack(&tp, chain, 2, 0), 0, 3);

	/* A stream opened for reading. */
	FILE *f = fopen("/dev/null", "r");
	assert_non_null(f);
	int err = run_plugin(&tp, f, "ro.prof");
	assert_true(err < 0);
	assert_int_equal(tp.fh.nr_errors, 1);
	assert_non_null(strstr(tp.fh.error, "ro.prof"));
	fclose(f);

	/* A buffer too small for the profile. */
	char small[40];
	f = fmemopen(small, sizeof(small), "w");
	assert_non_null(f);
	fake_host_init(&tp.fh);
	err = run_plugin(&tp, f, "small.prof");
	assert_true(err < 0);
	assert_int_equal(tp.fh.nr_errors, 1);
	assert_non_null(strstr(tp.fh.error, "cannot write small.prof"));
	fclose(f);

	/* A device that is full. */
	f = fopen("/dev/full", "w");
	if (f) {
		fake_host_init(&tp.fh);
		err = run_plugin(&tp, f, "full.prof");
		assert_int_equal(err, -ENOSPC);
		assert_non_null(strstr(tp.fh.error, "No space left"));
		fclose(f);
	}
}

/* A count naming a stack that does not exist is an error, not a crash. */
static void test_bad_stack_index(void **unused)
{
	struct test_profile tp;
	FILE *f = tmpfile();

	assert_non_null(f);
	tp_init(&tp, 10000000);
	tp_count(&tp, 0, 7, 0, 1);
	assert_int_equal(run_plugin(&tp, f, "x.prof"), -EINVAL);
	assert_int_equal(tp.fh.nr_errors, 1);
	fclose(f);
}

/* --- the image of Python functions ------------------------------------------ */

#define PY_A (BPFPROF_INTERP_FRAME_START + 0x1000)	/* function py_a */
#define PY_B (BPFPROF_INTERP_FRAME_START + 0x2000)	/* function py_b */

/* Interpreted frames are in py_a or py_b (by the 4 KiB block), the rest
 * in "native" of /fake. */
static int python_symbolize(struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
			    struct bpfprof_symbol *sym)
{
	if (ip >= BPFPROF_INTERP_FRAME_START && ip < BPFPROF_INTERP_FRAME_END) {
		sym->function_start = ip & ~0xfffull;
		sym->function = sym->function_start == PY_A ? "py_a" : "py_b";
		sym->module = "/x.py";
		return 0;
	}
	sym->module = "/fake";
	sym->function = "native";
	sym->function_start = ip - 1;
	return 0;
}

/* A profile whose one user stack is py_a <- py_b <- native. */
static void python_profile(struct test_profile *tp)
{
	static const uint64_t chain[] = { PY_A + 0x10, PY_B + 0x20, 0x401010 };

	tp_init(tp, 10000000);
	tp->fh.resolve = python_symbolize;
	tp_count(tp, 0, tp_stack(tp, chain, 3, 0), 0, 5);
	tp_count(tp, 1, tp_stack(tp, chain + 1, 2, 0), 0, 2);
}

/* The text part (mapped objects) of the profile in @buf. */
static const char *mapped_text(const uint8_t *buf, size_t size)
{
	const uint8_t *end = memmem(buf, size, (const uint64_t[]){ 0, 1, 0 }, 24);

	assert_non_null(end);
	return (const char *)end + 24;
}

/* The image is asked of the host as the output's companion ".python.so":
 * a symbol-only ELF naming py_a and py_b, listed in the mapped objects at
 * its absolute final path, the range moved below 2^63. */
static void test_python_image_companion(void **unused)
{
	struct test_profile tp;
	char cwd[4096], line[4300], image[8192];
	size_t size, n;

	python_profile(&tp);
	uint8_t *buf = write_to_memory(&tp, &size);

	assert_int_equal(tp.fh.nr_companion_calls, 1);
	assert_int_equal(tp.fh.nr_companions, 1);
	assert_string_equal(tp.fh.companions[0].suffix, ".python.so");
	assert_non_null(tp.fh.companions[0].out);
	assert_string_equal(tp.fh.companions[0].path, "test.prof");
	rewind(tp.fh.companions[0].file);
	n = fread(image, 1, sizeof(image), tp.fh.companions[0].file);
	assert_true(n > 64);
	assert_memory_equal(image, "\177ELF", 4);
	assert_non_null(memmem(image, n, "py_a", 5));
	assert_non_null(memmem(image, n, "py_b", 5));

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(line, sizeof(line), "7000000000000000-8000000000000000 r-xp 00000000 00:00 0%31s"
		 "%s/test.prof.python.so\n", "", cwd);
	assert_string_equal(mapped_text(buf, size), line);
	/* the leaf pc of the hottest record, moved into the listed range */
	const uint64_t want[] = { 0, 3, 0, 10000, 0, 5, 3, PY_A + 0x10 - BPFPROF_INTERP_FRAME_START +
				  0x7000000000000000ull };
	assert_slots(buf, size, want, 8);
	assert_int_equal(tp.fh.nr_warnings, 0);
	fake_host_close_companions(&tp.fh);
	free(buf);
}

/* A host without companion() (abi_revision 0, hosts before it): no
 * image, no line for it, one warning; the profile is still written. */
static void test_python_image_old_host(void **unused)
{
	struct test_profile tp;
	size_t size;

	python_profile(&tp);
	tp.fh.host.abi_revision = 0;
	uint8_t *buf = write_to_memory(&tp, &size);

	assert_int_equal(tp.fh.nr_companion_calls, 0);
	assert_string_equal(mapped_text(buf, size), "");
	assert_int_equal(tp.fh.nr_warnings, 1);
	assert_non_null(strstr(tp.fh.warning, "Python frames stay unnamed"));
	free(buf);
}

/* companion() failing fails the output: a profile naming an image that
 * is not there is never written. */
static void test_python_image_companion_fails(void **unused)
{
	struct test_profile tp;
	FILE *f = tmpfile();

	assert_non_null(f);
	python_profile(&tp);
	tp.fh.companion_rc = -EACCES;
	assert_int_equal(run_plugin(&tp, f, "denied.prof"), -EACCES);
	assert_int_equal(tp.fh.nr_errors, 1);
	assert_non_null(strstr(tp.fh.error, "denied.prof.python.so"));
	assert_non_null(strstr(tp.fh.error, strerror(EACCES)));
	fclose(f);
}

/* --- the real readers ------------------------------------------------------ */

/*
 * Real call chains of this program: hot_leaf_N is called by hot_mid_N,
 * called by capture_chains, called by readers_setup, ... by main.  Each
 * leaf stores its stack: entry 0 is an address inside the leaf, the others
 * are return addresses.
 */
#define CHAIN_MAX 64
static void *captured[2][CHAIN_MAX];
static int captured_nr[2];

/* The stack of its caller, from the caller's frame on: backtrace()'s own
 * frames (and a sanitizer's interceptor) are dropped. */
NOIPA void capture_stack(int which)
{
	void *here = __builtin_return_address(0);
	void *buf[CHAIN_MAX];
	int n = backtrace(buf, CHAIN_MAX), i = 0;

	while (i < n && buf[i] != here)
		i++;
	captured_nr[which] = n - i;
	memcpy(captured[which], buf + i, (n - i) * sizeof(buf[0]));
}

NOIPA int hot_leaf_one(void)
{
	capture_stack(0);
	return captured_nr[0] + 1;
}

NOIPA int hot_leaf_two(void)
{
	capture_stack(1);
	return captured_nr[1] + 1;
}

NOIPA int hot_mid_one(void)
{
	return hot_leaf_one() + 1;
}

NOIPA int hot_mid_two(void)
{
	return hot_leaf_two() + 1;
}

NOIPA int capture_chains(void)
{
	int r = hot_mid_one();

	r += hot_mid_two();
	return r + 1;
}

static int have_tool(const char *cmd)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "command -v %s >/dev/null 2>&1", cmd);
	return system(buf) == 0;
}

/* Run a shell command; returns its stdout (malloc'd). */
static char *run_capture(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char *buf = read_all(p);
	int status = pclose(p);
	if (status != 0)
		fail_msg("`%s` failed (status %d):\n%s", cmd, status, buf);
	return buf;
}

/*
 * `go tool pprof -traces` output as one line per trace, "N;root;...;leaf",
 * N being the first column (e.g. "30ms").
 */
static char *go_traces_folded(const char *exe, const char *prof)
{
	char cmd[16384];

	snprintf(cmd, sizeof(cmd), "go tool pprof -traces %s %s 2>&1", exe, prof);
	char *raw = run_capture(cmd);
	size_t cap = strlen(raw) * 2 + 16;
	char *out = calloc(1, cap);
	char *frames[CHAIN_MAX * 2];
	int nr = 0;
	char value[64] = "";

	assert_non_null(out);
	for (char *line = strtok(raw, "\n"); ; line = strtok(NULL, "\n")) {
		if (!line || strncmp(line, "-----------+", 12) == 0) {
			if (nr) {
				strcat(out, value);
				for (int i = nr - 1; i >= 0; i--) {
					strcat(out, ";");
					strcat(out, frames[i]);
				}
				strcat(out, "\n");
			}
			nr = 0;
			if (!line)
				break;
			continue;
		}
		char v[64], name[512];
		if (line[0] != ' ')
			continue;	/* File:, Type: ... */
		if (strspn(line, " ") < 11 && sscanf(line, "%63s %511s", v, name) == 2) {
			snprintf(value, sizeof(value), "%s", v);
			nr = 0;
		} else if (sscanf(line, "%511s", name) != 1) {
			continue;
		}
		if (nr < CHAIN_MAX * 2)
			frames[nr++] = strstr(line, name);
	}
	free(raw);
	return out;
}

/* Removes the "<0000000000001200>" google-pprof appends to names; in place. */
static char *strip_addresses(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (*r == '<' && strchr(r, '>')) {
			r = strchr(r, '>');
			continue;
		}
		*w++ = *r;
	}
	*w = 0;
	return s;
}

static const char *self_exe(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	assert_true(n > 0);
	path[n] = 0;
	return path;
}

/* Counts "NEEDLE" occurrences in @hay. */
static int count_substr(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

struct reader_case {
	const char *name;
	int leaves[8];		/* which chain (0 or 1) each record uses */
	int leaf_pcs[8];	/* byte offset added to the chain's leaf address */
	uint64_t samples[8];
	int nr;
};

/*
 * Write @rc with the captured chains and /proc/self/maps, run both readers
 * and check that every trace has the full chain down to main.
 */
static void check_readers(const struct reader_case *rc)
{
	static uint64_t ips[8][CHAIN_MAX];
	struct bpfprof_mapping maps[512];
	struct test_profile tp;
	uint64_t total = 0, per_chain[2] = { 0, 0 };
	char path[] = "/tmp/test_gperftools.XXXXXX";
	char cmd[16384];

	if (!have_tool("google-pprof") && !have_tool("go"))
		skip();		/* neither reader installed */
	tp_init(&tp, 10000000);
	char *text = read_text_file("/proc/self/maps");
	tp.proc.mappings = maps;
	tp.proc.nr_mappings = parse_maps(text, maps, 512);
	for (int i = 0; i < rc->nr; i++) {
		int c = rc->leaves[i];

		for (int j = 0; j < captured_nr[c]; j++)
			ips[i][j] = (uintptr_t)captured[c][j];
		/* Leaf addresses: still inside the leaf, before its return. */
		ips[i][0] -= rc->leaf_pcs[i];
		tp_count(&tp, i % 4, tp_stack(&tp, ips[i], captured_nr[c], 0), 0, rc->samples[i]);
		total += rc->samples[i];
		per_chain[c] += rc->samples[i];
	}

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w+");
	assert_non_null(f);
	assert_int_equal(run_plugin(&tp, f, path), 0);
	fclose(f);

	/* google-pprof: no frame removed, leaf and main at 100% cum, flat and
	 * chains as written. */
	if (have_tool("google-pprof")) {
		snprintf(cmd, sizeof(cmd), "google-pprof --text %s %s 2>&1", self_exe(), path);
		/* "Removing X from all stack traces" is the heuristic firing. */
		char *out = run_capture(cmd);
		print_message("[%s] google-pprof --text:\n%s", rc->name, out);
		assert_null(strstr(out, "Removing"));
		char want[128];
		snprintf(want, sizeof(want), "Total: %" PRIu64 " samples", total);
		assert_non_null(strstr(out, want));
		snprintf(want, sizeof(want), "%8" PRIu64 " 100.0%% main\n", total);
		assert_non_null(strstr(out, want));
		snprintf(want, sizeof(want), "%8" PRIu64 " 100.0%% capture_chains\n", total);
		assert_non_null(strstr(out, want));
		free(out);

		/* Folded stacks; a leaf written twice shows as leaf;leaf. */
		snprintf(cmd, sizeof(cmd), "google-pprof --collapsed %s %s 2>/dev/null",
			 self_exe(), path);
		out = strip_addresses(run_capture(cmd));
		print_message("[%s] google-pprof --collapsed:\n%s", rc->name, out);
		uint64_t got[2] = { 0, 0 }, sum = 0;
		for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
			char *count = strrchr(line, ' ');

			assert_non_null(count);
			*count++ = 0;
			assert_non_null(strstr(line, ";main;"));
			sum += strtoull(count, NULL, 10);
			for (int c = 0; c < 2; c++) {
				const char *tail = c ? ";capture_chains;hot_mid_two;hot_leaf_two"
						     : ";capture_chains;hot_mid_one;hot_leaf_one";
				char *at = strstr(line, tail);

				if (at && (!strcmp(at + strlen(tail), "") ||
					   !strcmp(at + strlen(tail), c ? ";hot_leaf_two" : ";hot_leaf_one")))
					got[c] += strtoull(count, NULL, 10);
			}
		}
		assert_int_equal(sum, total);
		assert_int_equal(got[0], per_chain[0]);
		assert_int_equal(got[1], per_chain[1]);
		free(out);
	}

	/* go tool pprof: every trace goes leaf <- mid <- capture_chains <- ...
	 * <- main, the leaf appears once. */
	if (have_tool("go")) {
		char *out = go_traces_folded(self_exe(), path);
		print_message("[%s] go tool pprof -traces, folded:\n%s", rc->name, out);
		int lines = count_substr(out, "\n");
		assert_true(lines >= 1);
		assert_int_equal(count_substr(out, ";main;"), lines);
		assert_int_equal(count_substr(out, ";capture_chains;hot_mid_one;hot_leaf_one\n") +
				 count_substr(out, ";capture_chains;hot_mid_two;hot_leaf_two\n"), lines);
		free(out);

		snprintf(cmd, sizeof(cmd), "go tool pprof -top %s %s 2>&1", self_exe(), path);
		out = run_capture(cmd);
		print_message("[%s] go tool pprof -top:\n%s", rc->name, out);
		/* cum% is the last number before the name */
		assert_non_null(strstr(out, " 100%  main\n"));
		assert_non_null(strstr(out, " 100%  capture_chains\n"));
		free(out);
	}
	unlink(path);
	free(text);
}

static int readers_setup(void **unused)
{
	if (!have_tool("google-pprof") && !have_tool("go"))
		return 0;	/* check_readers() skips */
	capture_chains();
	return captured_nr[0] >= 4 && captured_nr[1] >= 4 ? 0 : -1;
}

/* One hot path, every sample at one address: the worst case. */
static void test_readers_single_path_one_pc(void **unused)
{
	struct reader_case rc = { "single path, one pc", { 0 }, { 0 }, { 40 }, 1 };

	check_readers(&rc);
}

/* One hot path, samples spread over a few addresses of the leaf. */
static void test_readers_single_path(void **unused)
{
	struct reader_case rc = { "single path", { 0, 0, 0 }, { 0, 1, 2 }, { 50, 30, 20 }, 3 };

	check_readers(&rc);
}

/* Two hot paths. */
static void test_readers_two_paths(void **unused)
{
	struct reader_case rc = { "two paths", { 0, 0, 1, 1 }, { 0, 1, 0, 1 },
				  { 40, 20, 25, 15 }, 4 };

	check_readers(&rc);
}

/* Two paths whose samples all sit at one address each. */
static void test_readers_two_paths_one_pc_each(void **unused)
{
	struct reader_case rc = { "two paths, one pc each", { 0, 1 }, { 0, 0 }, { 70, 30 }, 2 };

	check_readers(&rc);
}

/*
 * In .text, not .text.startup: go tool pprof 1.19 finds no function in a
 * compile unit's second address range and would not name main.
 */
__attribute__((section(".text"))) int main(void)
{
	const struct CMUnitTest bytes[] = {
		cmocka_unit_test(test_entry_checks_abi),
		cmocka_unit_test(test_header_and_trailer),
		cmocka_unit_test(test_records_merged_and_ordered),
		cmocka_unit_test(test_empty_user_stack_skipped),
		cmocka_unit_test(test_single_chain_is_split),
		cmocka_unit_test(test_one_caller_guard),
		cmocka_unit_test(test_one_caller_margin),
		cmocka_unit_test(test_function_entry_leaf_last),
		cmocka_unit_test(test_mapped_objects_exact),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_bad_stack_index),
		cmocka_unit_test(test_python_image_companion),
		cmocka_unit_test(test_python_image_old_host),
		cmocka_unit_test(test_python_image_companion_fails),
	};
	const struct CMUnitTest readers[] = {
		cmocka_unit_test(test_readers_single_path_one_pc),
		cmocka_unit_test(test_readers_single_path),
		cmocka_unit_test(test_readers_two_paths),
		cmocka_unit_test(test_readers_two_paths_one_pc_each),
	};
	int failed = cmocka_run_group_tests_name("gperftools format", bytes, NULL, NULL);

	failed += cmocka_run_group_tests_name("gperftools with pprof readers", readers,
					      readers_setup, NULL);
	return failed ? 1 : 0;
}
