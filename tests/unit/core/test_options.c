// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_options.c - unit tests of user/options.c's kernel map sizing
 * (options_map_sizes): without --stack-map-size / --count-map-size the
 * maps hold two seconds of samples on every sampled CPU (4 stacks and 2
 * count entries per sample a second), as powers of two between
 * OPT_*_MIN and OPT_*_MAX; -c PERIOD gives the rate 1e9 / PERIOD; sizes
 * given on the command line are kept as they are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/options.h"

static void sizes(const char *const *args, int argc, size_t nr_cpus, uint32_t *stacks,
		  uint32_t *counts)
{
	struct options o;

	assert_int_equal(options_parse(argc, (char **)args, &o), 0);
	options_map_sizes(&o, nr_cpus, stacks, counts);
	options_free(&o);
}

static void test_by_rate(void **unused)
{
	static const char *f99[] = { "bpfprof", "-a", "-F", "99" };
	static const char *f999[] = { "bpfprof", "-a", "-F", "999" };
	static const char *f4999[] = { "bpfprof", "-a", "-F", "4999" };
	uint32_t s, c;

	sizes(f99, 4, 2, &s, &c);		/* 198/s: the floors */
	assert_int_equal(s, OPT_STACK_MAP_MIN);
	assert_int_equal(c, OPT_COUNT_MAP_MIN);
	sizes(f999, 4, 2, &s, &c);		/* 1,998/s: 7,992 stacks, 3,996 counts */
	assert_int_equal(s, 8192);
	assert_int_equal(c, OPT_COUNT_MAP_MIN);
	sizes(f4999, 4, 2, &s, &c);		/* 9,998/s: 39,992 stacks, 19,996 counts */
	assert_int_equal(s, OPT_STACK_MAP_MAX);
	assert_int_equal(c, 32768);
	sizes(f999, 4, 64, &s, &c);		/* 63,936/s: both capped */
	assert_int_equal(s, OPT_STACK_MAP_MAX);
	assert_int_equal(c, OPT_COUNT_MAP_MAX);
	sizes(f999, 4, 0, &s, &c);		/* no CPU count: as one CPU */
	assert_int_equal(s, 4096);
}

static void test_by_period(void **unused)
{
	static const char *c250us[] = { "bpfprof", "-a", "-c", "250000" };	/* 4,000/s */
	uint32_t s, c;

	sizes(c250us, 4, 2, &s, &c);		/* 8,000/s: 32,000 stacks, 16,000 counts */
	assert_int_equal(s, OPT_STACK_MAP_MAX);
	assert_int_equal(c, OPT_COUNT_MAP_MIN);
}

static void test_given_sizes_kept(void **unused)
{
	static const char *args[] = { "bpfprof", "-a", "-F", "999", "--stack-map-size", "100",
				      "--count-map-size", "1000000" };
	uint32_t s, c;

	sizes(args, 8, 2, &s, &c);
	assert_int_equal(s, 100);
	assert_int_equal(c, 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_rate),
		cmocka_unit_test(test_by_period),
		cmocka_unit_test(test_given_sizes_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
