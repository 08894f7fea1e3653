// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_sym_cache.c - unit tests of user/symbols/sym_cache.c: a function
 * table stored under a build-id comes back the same (addresses, ends,
 * ranks, names); a file with a byte changed, cut short, or stored under
 * another build-id's name is a miss and is removed; a table built from
 * .dynsym alone is a miss once a debug file of its build-id is installed
 * (one of this machine's /usr/lib/debug/.build-id files), one built from
 * a .symtab is not; and the symbolizer reads a file's names from the
 * cache it stored them in, with the file's own names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "debug_ids.h"
#include "tmpdir.h"

#include "symbols/symbolizer_impl.h"
#include "symbols/sym_cache.h"
#include "targets/procmaps.h"

static const uint8_t id_a[20] = { 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa,
				  0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4 };
static const uint8_t id_b[20] = { 0xb1, 0xb2 };

static const struct fsym table[] = {
	{ .addr = 0x1000, .end = 0x1040, .name = "main", .rank = 0 },
	{ .addr = 0x1040, .end = 0x10a0, .name = "_ZN2ns3fooEv", .rank = 2 },
	{ .addr = 0x10a0, .end = 0x10a1, .name = "_start", .rank = 7 },
};
#define NR (sizeof(table) / sizeof(table[0]))

struct fixture {
	char dir[64];
	struct sym_cache *c;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	strcpy(f->dir, "/tmp/test_sym_cache.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(sym_cache_open(f->dir, &f->c), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	test_remove_dir(f->dir);
	sym_cache_close(f->c);
	free(f);
	return 0;
}

static void path_of(const struct fixture *f, const uint8_t *id, size_t n, char *out)
{
	out += sprintf(out, "%s/", f->dir);
	for (size_t i = 0; i < n; i++)
		out += sprintf(out, "%02x", id[i]);
	strcpy(out, ".sym");
}

static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	struct sym_cache_table t;
	struct sym_cache_stats st;

	assert_int_equal(sym_cache_get(f->c, id_a, sizeof(id_a), &t), -ENOENT);
	assert_int_equal(sym_cache_put(f->c, id_a, sizeof(id_a), false, table, NR), 0);
	assert_int_equal(sym_cache_get(f->c, id_a, sizeof(id_a), &t), 0);
	assert_int_equal(t.nr, NR);
	for (size_t i = 0; i < NR; i++) {
		assert_int_equal(t.syms[i].addr, table[i].addr);
		assert_int_equal(t.syms[i].end, table[i].end);
		assert_int_equal(t.syms[i].rank, table[i].rank);
		/* names: offsets into the mapped file's names */
		assert_true((uintptr_t)t.syms[i].name < t.strings_bytes);
		assert_string_equal(t.strings + (uintptr_t)t.syms[i].name, table[i].name);
	}
	sym_cache_table_free(&t);
	sym_cache_stats(f->c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.stores, 1);
	assert_int_equal(st.rejected, 0);
}

/* Change the byte at @off from the end of @path (or cut it there: @cut). */
static void damage(const char *path, off_t off, bool cut)
{
	struct stat st;
	int fd = open(path, O_RDWR);
	char c;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	if (cut) {
		assert_int_equal(ftruncate(fd, st.st_size - off), 0);
	} else {
		assert_int_equal(pread(fd, &c, 1, st.st_size - off), 1);
		c ^= 0x20;
		assert_int_equal(pwrite(fd, &c, 1, st.st_size - off), 1);
	}
	close(fd);
}

static void expect_rejected(struct fixture *f, const uint8_t *id, size_t n, const char *path)
{
	struct sym_cache_table t;
	struct sym_cache_stats before, after;

	sym_cache_stats(f->c, &before);
	assert_int_equal(sym_cache_get(f->c, id, n, &t), -ENOENT);
	assert_null(t.syms);
	sym_cache_stats(f->c, &after);
	assert_int_equal(after.rejected, before.rejected + 1);
	assert_int_equal(access(path, F_OK), -1);	/* removed */
}

static void test_damaged_files(void **state)
{
	struct fixture *f = *state;
	char path[256], other[256];

	path_of(f, id_a, sizeof(id_a), path);
	assert_int_equal(sym_cache_put(f->c, id_a, sizeof(id_a), false, table, NR), 0);
	damage(path, 3, false);			/* a byte of a name */
	expect_rejected(f, id_a, sizeof(id_a), path);

	assert_int_equal(sym_cache_put(f->c, id_a, sizeof(id_a), false, table, NR), 0);
	damage(path, 5, true);			/* cut short */
	expect_rejected(f, id_a, sizeof(id_a), path);

	/* another file's table under id_b's name */
	assert_int_equal(sym_cache_put(f->c, id_a, sizeof(id_a), false, table, NR), 0);
	path_of(f, id_b, sizeof(id_b), other);
	assert_int_equal(rename(path, other), 0);
	expect_rejected(f, id_b, sizeof(id_b), other);
}

static void test_dynsym_only_and_debug_file(void **state)
{
	struct fixture *f = *state;
	struct sym_cache_table t;
	uint8_t id[20];
	char path[256];
	size_t n = test_installed_debug_id(id);

	assert_int_equal(n, 20);	/* libc6-dbg is a test dependency */
	path_of(f, id, n, path);
	assert_int_equal(sym_cache_put(f->c, id, n, true, table, NR), 0);
	expect_rejected(f, id, n, path);
	assert_int_equal(sym_cache_put(f->c, id, n, false, table, NR), 0);
	assert_int_equal(sym_cache_get(f->c, id, n, &t), 0);
	assert_int_equal(t.nr, NR);
	sym_cache_table_free(&t);
}

/* A function of this program named through the cache (not libc's: under
 * AddressSanitizer its qsort is the sanitizer's): the second symbolizer
 * reads the table the first stored, and names what the first named. */
static void test_symbolizer_uses_cache(void **state)
{
	struct fixture *f = *state;
	struct symbolizer *s1 = symbolizer_new(), *s2 = symbolizer_new();
	struct bpfprof_symbol a, b;
	struct sym_cache_stats st;
	struct procmaps m = { 0 };
	uintptr_t ip = (uintptr_t)&sym_cache_stats + 3;

	assert_int_equal(procmaps_read((uint32_t)getpid(), &m), 0);
	procmaps_add_build_ids(&m, (uint32_t)getpid());
	symbolizer_set_lines(s1, false);
	symbolizer_set_lines(s2, false);
	assert_int_equal(symbolizer_set_cache_dir(s1, f->dir), 0);
	assert_int_equal(symbolizer_set_cache_dir(s2, f->dir), 0);
	assert_int_equal(symbolizer_user(s1, (uint32_t)getpid(), m.maps, m.nr, ip, &a), 0);
	assert_string_equal(a.function, "sym_cache_stats");
	symbolizer_cache_stats(s1, &st);
	assert_int_equal(st.stores, 1);
	assert_int_equal(symbolizer_user(s2, (uint32_t)getpid(), m.maps, m.nr, ip, &b), 0);
	symbolizer_cache_stats(s2, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.stores, 0);
	assert_string_equal(b.function, a.function);
	assert_int_equal(b.function_start, a.function_start);
	procmaps_free(&m);
	symbolizer_free(s1);
	symbolizer_free(s2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dynsym_only_and_debug_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symbolizer_uses_cache, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
