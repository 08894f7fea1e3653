// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_fsym_sort.c - unit tests of user/symbols/fsym_sort.cc: random
 * tables with many ties (few addresses, ranks and names) come out in the
 * order that qsort() with the documented comparison (address, rank, name,
 * end) gives, element for element; empty and one-symbol tables are left
 * alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../lib/rng.h"
#include "symbols/fsym.h"

static const char *const names[] = { "main", "main.cold", "_start", "f", "g", "" };

/* fsym.h's order, written out for qsort(). */
static int reference_order(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->end < y->end ? -1 : x->end > y->end;
}

static void test_random_tables(void **state)
{
	uint64_t rng = 0x5eed;

	(void)state;
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + test_rng_next(&rng) % 5000;
		uint64_t addrs = 1 + n / (1 + test_rng_next(&rng) % 8);
		struct fsym *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));

		assert_non_null(a);
		assert_non_null(b);
		for (size_t i = 0; i < n; i++) {
			a[i].addr = 0x1000 + 16 * (test_rng_next(&rng) % addrs);
			a[i].end = test_rng_next(&rng) % 3 ? a[i].addr + test_rng_next(&rng) % 64 : 0;
			a[i].rank = (uint32_t)(test_rng_next(&rng) % 8);
			a[i].name = names[test_rng_next(&rng) % (sizeof(names) / sizeof(names[0]))];
		}
		memcpy(b, a, n * sizeof(*a));
		fsym_sort(a, n);
		qsort(b, n, sizeof(*b), reference_order);
		for (size_t i = 0; i < n; i++)
			if (a[i].addr != b[i].addr || a[i].end != b[i].end || a[i].rank != b[i].rank ||
			    strcmp(a[i].name, b[i].name))
				fail_msg("round %d, %zu symbols: entry %zu is %#lx %s rank %u, "
					 "not %#lx %s rank %u", round, n, i, (unsigned long)a[i].addr,
					 a[i].name, a[i].rank, (unsigned long)b[i].addr, b[i].name,
					 b[i].rank);
		free(a);
		free(b);
	}
}

static void test_tiny_tables(void **state)
{
	struct fsym one = { .addr = 7, .end = 9, .name = "f", .rank = 2 };

	(void)state;
	fsym_sort(NULL, 0);
	fsym_sort(&one, 1);
	assert_int_equal(one.addr, 7);
	assert_int_equal(one.end, 9);
	assert_string_equal(one.name, "f");
	assert_int_equal(one.rank, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_tables),
		cmocka_unit_test(test_tiny_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
