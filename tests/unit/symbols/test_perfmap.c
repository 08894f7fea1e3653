// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_perfmap.c - unit tests of user/symbols/perfmap.c: the perf map line
 * format (malformed lines, "0x", blanks, CRLF), overlapping and superseded
 * entries checked against a brute-force model over random maps, a file
 * that grows (also in the middle of a line) and is replaced, over-long
 * lines, a huge file, the re-read rate limit, and the file of a live
 * process (this one): its path, the owner rule, symbolic links, FIFOs.
 */
#include <errno.h>
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

#include <bpfprof/plugin.h>

#include "rng.h"
#include "symbols/perfmap.h"

static char tmpdir[] = "/tmp/bpfprof-perfmap-XXXXXX";
static char path[256];

static int setup(void **state)
{
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(path, sizeof(path), "%s/perf-1.map", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	rmdir(tmpdir);
	return 0;
}

static void write_file(const char *p, const char *text, const char *mode)
{
	FILE *f = fopen(p, mode);

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

static const char *name_at(struct perfmap *pm, uint64_t addr)
{
	const struct perfmap_entry *e = perfmap_find(pm, addr);

	return e ? e->name : NULL;
}

static void test_format(void **state)
{
	static const char text[] =
		"1000 100 JS:*burnA /tmp/hot.js:4:15\n"
		"0x2000 0x10 with 0x prefix\n"
		"3000\t20\ttabs and  inner  blanks \r\n"
		"\n"
		"   \n"
		"4000 0 zero size\n"
		"5000 10\n"
		"5000 10 \n"
		"zz00 10 not hex\n"
		"6000 1g bad size\n"
		"7000  10   several blanks\n"
		"ffffffffffffff00 100 past the end\n"
		"10000000000000000 10 too big\n"
		"8000 10 last line without newline";
	struct perfmap *pm = perfmap_new_path(path, "/tmp/perf-1.map");
	const struct perfmap_entry *e;
	long used;

	assert_non_null(pm);
	used = perfmap_parse(pm, text, sizeof(text) - 1, false);
	/* the last line waits for its newline */
	assert_int_equal(used, (long)(strrchr(text, '\n') - text + 1));
	assert_int_equal(perfmap_stats(pm)->lines, 4);
	assert_int_equal(perfmap_stats(pm)->malformed, 7);
	e = perfmap_find(pm, 0x10ff);
	assert_non_null(e);
	assert_string_equal(e->name, "JS:*burnA /tmp/hot.js:4:15");
	assert_int_equal(e->sym_start, 0x1000);
	assert_int_equal(e->start, 0x1000);
	assert_int_equal(e->end, 0x1100);
	assert_null(perfmap_find(pm, 0x1100));
	assert_null(perfmap_find(pm, 0xfff));
	assert_string_equal(name_at(pm, 0x200f), "with 0x prefix");
	assert_string_equal(name_at(pm, 0x3000), "tabs and  inner  blanks");
	assert_string_equal(name_at(pm, 0x7000), "several blanks");
	assert_null(perfmap_find(pm, 0x4000));
	assert_null(perfmap_find(pm, 0x5000));
	assert_null(perfmap_find(pm, 0x8000));
	/* the rest, as the final text of a process that is gone */
	used = perfmap_parse(pm, text + used, sizeof(text) - 1 - (size_t)used, true);
	assert_int_equal(used, strlen("8000 10 last line without newline"));
	assert_string_equal(name_at(pm, 0x8000), "last line without newline");
	assert_string_equal(perfmap_name(pm), "/tmp/perf-1.map");
	assert_int_equal(perfmap_entries(pm), 5);
	/* a NUL inside a line */
	assert_int_equal(perfmap_parse(pm, "9000 10 a\0b\n", 12, false), 12);
	assert_null(perfmap_find(pm, 0x9000));
	assert_int_equal(perfmap_stats(pm)->malformed, 8);
	perfmap_free(pm);
}

/* Overlaps: later lines win, in one batch and across batches. */
static void test_overlaps(void **state)
{
	struct perfmap *pm = perfmap_new_path(path, NULL);

	assert_non_null(pm);
	assert_int_equal(perfmap_parse(pm, "1000 1000 big\n1400 100 inner\n", 29, false), 29);
	assert_string_equal(name_at(pm, 0x13ff), "big");
	assert_string_equal(name_at(pm, 0x1400), "inner");
	assert_string_equal(name_at(pm, 0x14ff), "inner");
	assert_string_equal(name_at(pm, 0x1500), "big");
	/* the big one's function start stays its own on both sides */
	assert_int_equal(perfmap_find(pm, 0x1500)->sym_start, 0x1000);
	assert_int_equal(perfmap_entries(pm), 3);
	/* an older inner range does not shadow a later big one */
	assert_int_equal(perfmap_parse(pm, "1000 1000 reused\n", 17, false), 17);
	assert_string_equal(name_at(pm, 0x1450), "reused");
	assert_int_equal(perfmap_entries(pm), 1);
	/* same start, later wins; a range over two others */
	assert_int_equal(perfmap_parse(pm, "1800 10 a\n1800 10 b\n17f0 30 c\n", 30, false), 30);
	assert_string_equal(name_at(pm, 0x1800), "c");
	assert_string_equal(name_at(pm, 0x17ef), "reused");
	assert_string_equal(name_at(pm, 0x1820), "reused");
	perfmap_free(pm);
}

/* The model: the last line covering @addr. */
struct line {
	uint64_t start, size;
	char name[16];
};

static const char *model(const struct line *l, size_t n, uint64_t addr)
{
	for (size_t i = n; i-- > 0;)
		if (addr >= l[i].start && addr - l[i].start < l[i].size)
			return l[i].name;
	return NULL;
}

/* Random overlapping maps, fed in random pieces, against the model. */
static void test_random_against_model(void **state)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;

	for (int round = 0; round < 200; round++) {
		size_t n = 1 + test_rng_next(&rng) % 60, len = 0, fed = 0;
		struct line l[60];
		char text[60 * 48];
		struct perfmap *pm = perfmap_new_path(path, NULL);

		assert_non_null(pm);
		for (size_t i = 0; i < n; i++) {
			l[i].start = 0x10000 + test_rng_next(&rng) % 0x400;
			l[i].size = 1 + test_rng_next(&rng) % 0x100;
			snprintf(l[i].name, sizeof(l[i].name), "f%zu", i);
			len += (size_t)sprintf(text + len, "%" PRIx64 " %" PRIx64 " %s\n", l[i].start,
					       l[i].size, l[i].name);
		}
		/* in random pieces, as a growing file is read */
		while (fed < len) {
			size_t piece = 1 + test_rng_next(&rng) % 200, avail = len - fed;
			long used;

			if (piece > avail)
				piece = avail;
			used = perfmap_parse(pm, text + fed, piece, false);
			assert_true(used >= 0 && (size_t)used <= piece);
			if (used == 0)	/* no newline in the piece: all of it */
				used = perfmap_parse(pm, text + fed, avail, false);
			fed += (size_t)used;
		}
		assert_int_equal(perfmap_stats(pm)->lines, n);
		for (uint64_t a = 0xff00; a < 0x10600; a++) {
			const char *want = model(l, n, a), *got = name_at(pm, a);

			if (!want || !got)
				assert_ptr_equal(want, got);
			else
				assert_string_equal(want, got);
		}
		perfmap_free(pm);
	}
}

/* A file that grows, also in the middle of a line, then is replaced. */
static void test_growth_and_replacement(void **state)
{
	struct perfmap *pm = perfmap_new_path(path, NULL);
	char other[300];

	assert_non_null(pm);
	unlink(path);
	assert_int_equal(perfmap_update(pm, 1), -ENOENT);
	write_file(path, "1000 10 first\n2000 10 sec", "w");
	assert_int_equal(perfmap_update(pm, 2), 0);
	assert_string_equal(name_at(pm, 0x1000), "first");
	assert_null(perfmap_find(pm, 0x2000));	/* half a line: not yet */
	write_file(path, "ond\n3000 10 third\n", "a");
	assert_int_equal(perfmap_update(pm, 3), 0);
	assert_string_equal(name_at(pm, 0x2000), "second");
	assert_string_equal(name_at(pm, 0x3000), "third");
	assert_int_equal(perfmap_stats(pm)->lines, 3);
	assert_int_equal(perfmap_stats(pm)->malformed, 0);
	/* nothing new: nothing changes */
	assert_int_equal(perfmap_update(pm, 4), 0);
	assert_int_equal(perfmap_stats(pm)->lines, 3);
	/* replaced by another file (rename over it): read from its start */
	snprintf(other, sizeof(other), "%s/new", tmpdir);
	write_file(other, "5000 10 fresh\n", "w");
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(perfmap_update(pm, 5), 0);
	assert_null(perfmap_find(pm, 0x1000));
	assert_string_equal(name_at(pm, 0x5000), "fresh");
	assert_int_equal(perfmap_stats(pm)->resets, 1);
	/* truncated and rewritten in place (shorter than what was read) */
	write_file(path, "6000 1 t\n", "w");
	assert_int_equal(perfmap_update(pm, 6), 0);
	assert_string_equal(name_at(pm, 0x6000), "t");
	assert_null(perfmap_find(pm, 0x5000));
	assert_int_equal(perfmap_stats(pm)->resets, 2);
	perfmap_free(pm);
}

/* The rate limit of re-reads on a miss. */
static void test_lookup_rereads(void **state)
{
	struct perfmap *pm = perfmap_new_path(path, NULL);
	const uint64_t t0 = 1000000000ull;

	assert_non_null(pm);
	write_file(path, "1000 10 a\n", "w");
	assert_non_null(perfmap_lookup(pm, 0x1000, t0));	/* first read */
	write_file(path, "2000 10 b\n", "a");
	/* a miss right after a read does not read */
	assert_null(perfmap_lookup(pm, 0x2000, t0 + 1));
	assert_int_equal(perfmap_stats(pm)->reads, 1);
	/* later it does */
	assert_non_null(perfmap_lookup(pm, 0x2000, t0 + PERFMAP_REREAD_NS));
	assert_int_equal(perfmap_stats(pm)->reads, 2);
	/* a hit never reads */
	assert_non_null(perfmap_lookup(pm, 0x1000, t0 + 10 * PERFMAP_REREAD_NS));
	assert_int_equal(perfmap_stats(pm)->reads, 2);
	assert_int_equal(perfmap_stats(pm)->lookups, 4);
	assert_int_equal(perfmap_stats(pm)->misses, 1);
	perfmap_free(pm);

	/* no file: tried again only after PERFMAP_ABSENT_REREAD_NS */
	unlink(path);
	pm = perfmap_new_path(path, NULL);
	assert_non_null(pm);
	assert_null(perfmap_lookup(pm, 0x1000, t0));
	write_file(path, "1000 10 a\n", "w");
	assert_null(perfmap_lookup(pm, 0x1000, t0 + PERFMAP_REREAD_NS));
	assert_non_null(perfmap_lookup(pm, 0x1000, t0 + PERFMAP_ABSENT_REREAD_NS));
	perfmap_free(pm);
}

/* Lines longer than PERFMAP_MAX_LINE and than the read buffer. */
static void test_long_lines(void **state)
{
	size_t big = 3 * PERFMAP_MAX_LINE;
	char *text = malloc(big + 64);
	struct perfmap *pm = perfmap_new_path(path, NULL);
	FILE *f = fopen(path, "w");

	assert_non_null(text);
	assert_non_null(pm);
	assert_non_null(f);
	fputs("1000 10 before\n", f);
	memset(text, 'x', big);
	text[big] = '\0';
	fprintf(f, "2000 10 %s\n", text);		/* longer than the buffer */
	text[PERFMAP_MAX_LINE] = '\0';
	fprintf(f, "3000 10 %s\n", text);		/* over the limit */
	text[PERFMAP_MAX_LINE - 100] = '\0';
	fprintf(f, "4000 10 %s\n", text);		/* long but fine */
	fputs("5000 10 after\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(perfmap_update(pm, 1), 0);
	assert_string_equal(name_at(pm, 0x1000), "before");
	assert_null(perfmap_find(pm, 0x2000));
	assert_null(perfmap_find(pm, 0x3000));
	assert_int_equal(strlen(name_at(pm, 0x4000)), PERFMAP_MAX_LINE - 100);
	assert_string_equal(name_at(pm, 0x5000), "after");
	assert_int_equal(perfmap_stats(pm)->malformed, 2);
	perfmap_free(pm);
	free(text);
}

/*
 * A huge file: 1,000,000 lines of code space reused over and over (each
 * range written 10 times over), read in two steps: every lookup names
 * the last writer.
 */
static void test_huge_file(void **state)
{
	const uint32_t n = 1000000, slots = 100000;
	struct perfmap *pm = perfmap_new_path(path, NULL);
	FILE *f = fopen(path, "w");

	assert_non_null(pm);
	assert_non_null(f);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = (i * 7919u) % slots;

		if (i == n / 2) {
			assert_int_equal(fflush(f), 0);
			assert_int_equal(perfmap_update(pm, 1), 0);
		}
		fprintf(f, "%x 40 fn_%u\n", 0x100000 + slot * 0x40, i);
	}
	assert_int_equal(fclose(f), 0);
	assert_int_equal(perfmap_update(pm, 2), 0);
	assert_int_equal(perfmap_stats(pm)->lines, n);
	assert_int_equal(perfmap_entries(pm), slots);
	for (uint32_t s = 0; s < slots; s += 997) {
		uint32_t last = 0;
		char want[32];

		for (uint32_t i = 0; i < n; i++)
			if ((i * 7919u) % slots == s)
				last = i;
		snprintf(want, sizeof(want), "fn_%u", last);
		assert_string_equal(name_at(pm, 0x100000 + s * 0x40 + 0x3f), want);
	}
	perfmap_free(pm);
}

/* This process's own map: the path perf uses, and the owner rule. */
static void test_own_process(void **state)
{
	char own[64], name[64], link[300];
	struct perfmap *pm;

	snprintf(own, sizeof(own), "/tmp/perf-%d.map", getpid());
	unlink(own);
	pm = perfmap_new((uint32_t)getpid());
	assert_non_null(pm);
	snprintf(name, sizeof(name), "/tmp/perf-%d.map", getpid());
	assert_string_equal(perfmap_name(pm), name);
	assert_int_equal(perfmap_update(pm, 1), -ENOENT);
	assert_string_equal(perfmap_path(pm), own);	/* same mount namespace */
	write_file(own, "1000 10 mine\n", "w");
	assert_int_equal(perfmap_update(pm, 2), 0);
	assert_string_equal(name_at(pm, 0x1000), "mine");
	/* owned by someone else than the process (and not root): refused */
	if (getuid() == 0) {
		assert_int_equal(chown(own, 65534, 65534), 0);
		write_file(own, "2000 10 theirs\n", "a");
		assert_int_equal(perfmap_update(pm, 3), -EPERM);
		assert_null(perfmap_find(pm, 0x2000));
		assert_string_equal(name_at(pm, 0x1000), "mine");	/* kept */
	}
	/* a symbolic link is not followed */
	unlink(own);
	snprintf(link, sizeof(link), "%s/target", tmpdir);
	write_file(link, "3000 10 linked\n", "w");
	assert_int_equal(symlink(link, own), 0);
	assert_int_equal(perfmap_update(pm, 4), -EPERM);
	assert_null(perfmap_find(pm, 0x3000));
	unlink(own);
	unlink(link);
	/* a FIFO neither blocks nor is read */
	assert_int_equal(mkfifo(own, 0600), 0);
	assert_int_equal(perfmap_update(pm, 5), -EPERM);
	unlink(own);
	/* after an exec: nothing known, read again */
	perfmap_reset(pm);
	assert_null(perfmap_find(pm, 0x1000));
	assert_string_equal(perfmap_name(pm), name);
	/* gone: only a file still present is read, the same as before */
	write_file(own, "4000 10 late\n", "w");
	perfmap_process_exited(pm);
	assert_int_equal(perfmap_update(pm, 5), 0);
	assert_string_equal(name_at(pm, 0x4000), "late");
	/* a new file (new inode) renamed over it */
	write_file(link, "5000 10 next owner\n", "w");
	assert_int_equal(rename(link, own), 0);
	assert_int_equal(perfmap_update(pm, 6), -ESTALE);
	assert_null(perfmap_find(pm, 0x5000));
	unlink(own);
	perfmap_free(pm);
}

static void test_covers_mapping(void **state)
{
	assert_true(perfmap_covers_mapping("", BPFPROF_PROT_READ | BPFPROF_PROT_EXEC));
	assert_true(perfmap_covers_mapping(NULL, BPFPROF_PROT_EXEC));
	assert_true(perfmap_covers_mapping("//anon", BPFPROF_PROT_EXEC));
	assert_true(perfmap_covers_mapping("[anon:v8]", BPFPROF_PROT_EXEC));
	assert_true(perfmap_covers_mapping("/memfd:doublemapper (deleted)", BPFPROF_PROT_EXEC));
	assert_false(perfmap_covers_mapping("", BPFPROF_PROT_READ | BPFPROF_PROT_WRITE));
	assert_false(perfmap_covers_mapping("/usr/bin/node", BPFPROF_PROT_EXEC));
	assert_false(perfmap_covers_mapping("[vdso]", BPFPROF_PROT_EXEC));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_overlaps),
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_growth_and_replacement),
		cmocka_unit_test(test_lookup_rereads),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_huge_file),
		cmocka_unit_test(test_own_process),
		cmocka_unit_test(test_covers_mapping),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
