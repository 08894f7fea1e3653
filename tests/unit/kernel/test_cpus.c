// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_cpus.c - unit tests of user/kernel/cpus.c: a CPU list is a set
 * (duplicates and overlapping ranges name a CPU once), comes back sorted,
 * and anything but ids and ranges up to CPU_ID_MAX is -EINVAL; the online
 * CPUs parse.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "kernel/cpus.h"

static void expect_list(const char *s, const int *want, size_t nr_want)
{
	int *cpus = NULL;
	size_t nr = 0;

	assert_int_equal(parse_cpu_list(s, &cpus, &nr), 0);
	assert_int_equal(nr, nr_want);
	for (size_t i = 0; i < nr; i++)
		assert_int_equal(cpus[i], want[i]);
	free(cpus);
}

static void test_sets(void **unused)
{
	static const int one[] = { 3 }, range[] = { 0, 1, 2, 3, 6 }, last[] = { CPU_ID_MAX };

	expect_list("3", one, 1);
	expect_list("3,3", one, 1);
	expect_list("6,0-3", range, 5);
	expect_list("0-3,2,6,1-2", range, 5);
	expect_list("65535", last, 1);
}

static void test_invalid(void **unused)
{
	static const char *bad[] = { "", ",", "x", "1-", "-1", "3-1", "+1", "1,a", "65536",
				     "0-65536", "1.5" };
	int *cpus = NULL;
	size_t nr = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse_cpu_list(bad[i], &cpus, &nr), -EINVAL);
		assert_null(cpus);
	}
}

static void test_online(void **unused)
{
	int *cpus = NULL;
	size_t nr = 0;

	assert_int_equal(online_cpus(&cpus, &nr), 0);
	assert_true(nr >= 1);
	for (size_t i = 1; i < nr; i++)
		assert_true(cpus[i - 1] < cpus[i]);
	free(cpus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_online),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
