// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_output_pattern.c - unit tests of the patterns of `-o PATH`
 * (user/cli/output_pattern.c) and of their use by the option parser
 * (user/cli/options.c): %h, %p and %% expanded anywhere and more than
 * once, a '/' in the host name kept out of the path, an unknown or a
 * trailing '%' refused with the place it is at; and `-o` through
 * options_parse(): this host's name and this process's pid, an unknown
 * pattern an error.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/options.h"
#include "cli/output_pattern.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* @pattern expanded with host "node7" and pid 4242 equals @want. */
static void expect(const char *pattern, const char *want)
{
	const char *bad = pattern;
	char *out = NULL;

	assert_int_equal(output_pattern_expand(pattern, "node7", 4242, &out, &bad), 0);
	assert_null(bad);
	assert_string_equal(out, want);
	free(out);
}

static void test_expand(void **unused)
{
	expect("prof.pb.gz", "prof.pb.gz");
	expect("", "");
	expect("dir/prof.%h.%p.pb.gz", "dir/prof.node7.4242.pb.gz");
	expect("%h", "node7");
	expect("%p", "4242");
	expect("%h/%h-%p-%p", "node7/node7-4242-4242");
	expect("100%%.prof", "100%.prof");
	expect("%%h%%p%%%%", "%h%p%%");
	expect("%%%h", "%node7");
}

static void test_host_component(void **unused)
{
	const char *bad;
	char *out;

	assert_int_equal(output_pattern_expand("d/%h.prof", "a/b", 1, &out, &bad), 0);
	assert_string_equal(out, "d/a_b.prof");
	free(out);
	assert_int_equal(output_pattern_expand("d/%h.prof", "", 1, &out, &bad), 0);
	assert_string_equal(out, "d/.prof");
	free(out);
}

static void test_unknown(void **unused)
{
	static const struct { const char *pattern; size_t at; } cases[] = {
		{ "prof.%x", 5 }, { "%", 0 }, { "prof%", 4 }, { "%H", 0 },
		{ "%%%", 2 }, { "%h.%P", 3 }, { "a%%b%d", 4 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *bad = NULL;
		char *out = (char *)"not touched";

		assert_int_equal(output_pattern_expand(cases[i].pattern, "n", 1, &out, &bad),
				 -EINVAL);
		assert_null(out);
		assert_ptr_equal(bad, cases[i].pattern + cases[i].at);
	}
}

static void test_option(void **unused)
{
	static const char *args[] = { "bpfprof", "-a", "-o", "/tmp/prof.%h.%p.pb.gz" };
	static const char *twice[] = { "bpfprof", "-a", "-o", "a%p", "-o", "b%%" };
	static const char *wrong[] = { "bpfprof", "-a", "-o", "prof.%x" };
	char host[256] = "", want[512];
	struct options o;

	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	snprintf(want, sizeof(want), "/tmp/prof.%s.%d.pb.gz", host, (int)getpid());
	assert_int_equal(options_parse(ARGC(args), (char **)args, &o), 0);
	assert_string_equal(o.output, want);
	options_free(&o);
	assert_null(o.output);
	assert_int_equal(options_parse(ARGC(twice), (char **)twice, &o), 0);
	assert_string_equal(o.output, "b%");
	options_free(&o);
	assert_int_equal(options_parse(ARGC(wrong), (char **)wrong, &o), -EINVAL);
	options_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_host_component),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
