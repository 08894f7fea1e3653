// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_cfi_lazy.c - unit tests of lazy unwind tables (user/unwind/cfi_lazy.c):
 *   - a lazy table of a big file (libc, python3.11, libcrypto) has one
 *     marker per FDE of the whole table and no other rows but gaps and
 *     frame-pointer ranges;
 *   - building one FDE changes that FDE's addresses only, to exactly the
 *     rows the whole build gives them;
 *   - with every FDE built, each address of the file finds the same rule
 *     in both tables;
 *   - a file with fewer than CFI_LAZY_MIN_FDES FDEs gets all its rows and
 *     no lazy state;
 *   - a lazy table stored in and read back from the on-disk cache
 *     (read in place) builds its FDEs once opened on the file again, and
 *     not before (-ENOENT).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "unwind/cfi_build.h"
#include "unwind/cfi_cache.h"
#include "unwind/cfi_table.h"

static const char *const big_files[] = {
	"/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/bin/python3.11",
	"/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
};

/* The whole table and the lazy one of @path. */
static void build_both(const char *path, struct cfi_table **full, struct cfi_table **lazy)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(cfi_table_build(path, NULL, full), 0);
	assert_int_equal(cfi_table_build_lazy(fd, lazy), 0);
	close(fd);			/* the lazy table keeps its own */
}

static bool same_rule(const struct cfi_row *a, const struct cfi_row *b)
{
	return a && b && a->kind == b->kind && a->rbp == b->rbp && a->cfa == b->cfa;
}

/* Every row start of either table finds the same rule in both (rows
 * merged differently at FDE boundaries are the same rule). */
static void assert_same_lookups(const struct cfi_table *x, const struct cfi_table *y)
{
	for (int pass = 0; pass < 2; pass++) {
		const struct cfi_table *a = pass ? y : x, *b = pass ? x : y;

		for (uint32_t i = 0; i < a->nr; i++) {
			const struct cfi_row *r = cfi_table_find(b, a->rows[i].pc);

			if (!same_rule(&a->rows[i], r))
				fail_msg("pc %#x: kind %u cfa %d rbp %d against kind %u cfa %d rbp %d",
					 a->rows[i].pc, a->rows[i].kind, a->rows[i].cfa,
					 a->rows[i].rbp, r ? r->kind : 255, r ? r->cfa : 0,
					 r ? r->rbp : 0);
		}
	}
}

static void test_markers(void **state)
{
	for (size_t f = 0; f < sizeof(big_files) / sizeof(big_files[0]); f++) {
		struct cfi_table *full, *lazy;
		uint32_t markers = 0, other = 0;

		if (access(big_files[f], R_OK))
			continue;
		build_both(big_files[f], &full, &lazy);
		assert_non_null(lazy->lazy);
		for (uint32_t i = 0; i < lazy->nr; i++) {
			unsigned int kind = CFI_ROW_KIND(&lazy->rows[i]);

			if (CFI_ROW_UNBUILT(&lazy->rows[i]))
				markers++;
			else if (kind != CFI_KIND_STOP_NO_ROW && kind != CFI_KIND_RBP)
				other++;
		}
		printf("# %s: %u FDEs, %u rows whole; lazy: %u markers, %u rows\n", big_files[f],
		       full->stats.fdes, full->nr, markers, lazy->nr);
		assert_true(markers >= CFI_LAZY_MIN_FDES);
		assert_int_equal(markers, lazy->stats.fdes_unbuilt);
		assert_int_equal(markers, cfi_table_count_unbuilt(lazy));
		/* FDEs libdw cannot give rows for are skipped only when built */
		assert_int_equal(markers, full->stats.fdes + full->stats.fdes_skipped);
		assert_int_equal(other, 0);
		assert_true(lazy->nr < full->nr / 2);
		cfi_table_free(full);
		cfi_table_free(lazy);
	}
}

static void test_one_fde(void **state)
{
	struct cfi_table *full, *lazy;
	const struct cfi_row *mark, *next;
	uint32_t lo, hi, before;

	build_both(big_files[0], &full, &lazy);
	/* an FDE in the middle of the file, with several rows */
	mark = &lazy->rows[lazy->nr / 2];
	while (!CFI_ROW_UNBUILT(mark))
		mark++;
	lo = mark->pc;
	next = mark + 1;
	hi = next->pc;
	before = lazy->nr;
	assert_int_equal(cfi_table_build_fde(lazy, lo + (hi - lo) / 2), 1);
	assert_int_equal(lazy->stats.fdes_unbuilt, cfi_table_count_unbuilt(lazy));
	assert_true(lazy->nr >= before);
	/* its addresses: the whole build's rules; the FDEs beside it: markers */
	for (uint32_t a = lo; a < hi; a++)
		assert_true(same_rule(cfi_table_find(lazy, a), cfi_table_find(full, a)));
	assert_true(CFI_ROW_UNBUILT(cfi_table_find(lazy, lo - 1)) ||
		    CFI_ROW_KIND(cfi_table_find(lazy, lo - 1)) == CFI_KIND_STOP_NO_ROW);
	assert_true(CFI_ROW_UNBUILT(cfi_table_find(lazy, hi)) ||
		    CFI_ROW_KIND(cfi_table_find(lazy, hi)) == CFI_KIND_STOP_NO_ROW);
	/* built already: nothing to do */
	assert_int_equal(cfi_table_build_fde(lazy, lo), 0);
	cfi_table_free(full);
	cfi_table_free(lazy);
}

/* Build every FDE of @t by its marker's address; returns how many. */
static uint32_t build_all(struct cfi_table *t)
{
	uint32_t built = 0;

	for (uint32_t i = 0; i < t->nr; i++) {
		if (!CFI_ROW_UNBUILT(&t->rows[i]))
			continue;
		assert_int_equal(cfi_table_build_fde(t, t->rows[i].pc), 1);
		built++;
		i--;		/* row i is the FDE's first row now */
	}
	return built;
}

static void test_all_fdes(void **state)
{
	for (size_t f = 0; f < sizeof(big_files) / sizeof(big_files[0]); f++) {
		struct cfi_table *full, *lazy;
		uint32_t markers;

		if (access(big_files[f], R_OK))
			continue;
		build_both(big_files[f], &full, &lazy);
		markers = lazy->stats.fdes_unbuilt;
		assert_int_equal(build_all(lazy), markers);
		assert_int_equal(cfi_table_count_unbuilt(lazy), 0);
		assert_int_equal(lazy->stats.fdes, full->stats.fdes);
		assert_int_equal(lazy->stats.fdes_skipped, full->stats.fdes_skipped);
		for (uint32_t i = 1; i < lazy->nr; i++)
			assert_true(lazy->rows[i].pc > lazy->rows[i - 1].pc);
		assert_same_lookups(full, lazy);
		cfi_table_free(full);
		cfi_table_free(lazy);
	}
}

static void test_small_file(void **state)
{
	const char *path = "/lib64/ld-linux-x86-64.so.2";	/* ~300 FDEs */
	struct cfi_table *full, *lazy;

	build_both(path, &full, &lazy);
	assert_true(full->stats.fdes < CFI_LAZY_MIN_FDES);
	assert_null(lazy->lazy);
	assert_int_equal(cfi_table_count_unbuilt(lazy), 0);
	assert_int_equal(lazy->nr, full->nr);
	assert_memory_equal(lazy->rows, full->rows, full->nr * sizeof(*full->rows));
	cfi_table_free(full);
	cfi_table_free(lazy);
}

static void test_from_cache(void **state)
{
	char dir[] = "/tmp/test_cfi_lazy.XXXXXX", cmd[64];
	struct cfi_table *full, *lazy, *back;
	struct cfi_cache *c;
	int fd;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(cfi_cache_open(dir, &c), 0);
	build_both(big_files[0], &full, &lazy);
	assert_int_equal(cfi_table_build_fde(lazy, lazy->rows[lazy->nr / 2].pc) >= 0, 1);
	assert_int_equal(cfi_cache_put(c, lazy), 0);
	assert_int_equal(cfi_cache_get(c, lazy->build_id, lazy->build_id_size, &back), 0);
	assert_non_null(back->mapping);		/* read in place */
	assert_null(back->lazy);
	assert_int_equal(cfi_table_count_unbuilt(back), cfi_table_count_unbuilt(lazy));
	assert_int_equal(cfi_table_build_fde(back, back->rows[back->nr - 2].pc), -ENOENT);
	fd = open(big_files[0], O_RDONLY | O_CLOEXEC);
	assert_int_equal(cfi_table_lazy_open(back, fd), 0);
	close(fd);
	assert_true(build_all(back) > 0);
	assert_null(back->mapping);		/* copied out to grow */
	assert_same_lookups(full, back);
	cfi_table_free(full);
	cfi_table_free(lazy);
	cfi_table_free(back);
	cfi_cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_one_fde),
		cmocka_unit_test(test_all_fdes),
		cmocka_unit_test(test_small_file),
		cmocka_unit_test(test_from_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
