// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_kallsyms.c - unit tests of user/symbols/kallsyms.c: parsing kallsyms text
 * with module symbols, aliases and data symbols, lookups at symbol
 * boundaries, hidden (zero) addresses, garbage input, and the live
 * /proc/kallsyms.
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

#include "rng.h"
#include "symbols/kallsyms.h"

static const char text[] =
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t _text_alias\n"
	"ffffffff81000100 t local_fn\n"
	"ffffffff81000100 W weak_alias_of_local\n"
	"ffffffff81000200 W weak_fn\n"
	"ffffffff81000300 w weak_local_fn\n"
	"ffffffff81000400 T last_core_fn\n"
	"ffffffff82000000 D some_data\n"
	"ffffffff82000100 R some_rodata\n"
	"ffffffffc0001000 t mod_fn_a\t[ext4]\n"
	"ffffffffc0001080 T mod_fn_b\t[ext4]\n"
	"ffffffffc0002000 d mod_data\t[ext4]\n"
	"ffffffffc0003000 t bpf_prog_6deef7357e7b4530_sd_fw\t[bpf]\n"
	"ffffffffc0000800 t unsorted_fn\t[zz_mod]\n";

static void test_lookup_boundaries(void **state)
{
	struct kallsyms *ks;
	uint64_t start;
	const char *mod;

	assert_int_equal(kallsyms_parse(text, strlen(text), &ks), 0);
	assert_int_equal(kallsyms_count(ks), 9);

	/* below the first text symbol */
	assert_null(kallsyms_lookup(ks, 0, NULL, NULL));
	assert_null(kallsyms_lookup(ks, 0xffffffff80ffffffull, NULL, NULL));
	/* first symbol: T beats the t alias at the same address */
	mod = "x";
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000000ull, &start, &mod), "_stext");
	assert_int_equal(start, 0xffffffff81000000ull);
	assert_null(mod);
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff810000ffull, &start, NULL), "_stext");
	/* t beats W at the same address */
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000100ull, &start, NULL), "local_fn");
	assert_int_equal(start, 0xffffffff81000100ull);
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000250ull, NULL, NULL), "weak_fn");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff810003ffull, NULL, NULL),
			    "weak_local_fn");
	/* the last core symbol ends where the data begins */
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000400ull, NULL, NULL),
			    "last_core_fn");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81ffffffull, NULL, NULL),
			    "last_core_fn");
	assert_null(kallsyms_lookup(ks, 0xffffffff82000000ull, NULL, NULL));
	assert_null(kallsyms_lookup(ks, 0xffffffff82000150ull, NULL, NULL));
	/* modules (also when listed out of address order) */
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0000800ull, &start, &mod),
			    "unsorted_fn");
	assert_string_equal(mod, "zz_mod");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0001000ull, &start, &mod), "mod_fn_a");
	assert_string_equal(mod, "ext4");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc000107full, &start, &mod), "mod_fn_a");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0001080ull, &start, &mod), "mod_fn_b");
	assert_int_equal(start, 0xffffffffc0001080ull);
	assert_string_equal(mod, "ext4");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0001fffull, NULL, NULL), "mod_fn_b");
	assert_null(kallsyms_lookup(ks, 0xffffffffc0002000ull, NULL, NULL));
	/* the highest symbol: KALLSYMS_LAST_SIZE bytes, then nothing */
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0003000ull, NULL, &mod),
			    "bpf_prog_6deef7357e7b4530_sd_fw");
	assert_string_equal(mod, "bpf");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0003000ull + KALLSYMS_LAST_SIZE - 1,
					    NULL, NULL),
			    "bpf_prog_6deef7357e7b4530_sd_fw");
	assert_null(kallsyms_lookup(ks, 0xffffffffc0003000ull + KALLSYMS_LAST_SIZE, NULL, NULL));
	assert_null(kallsyms_lookup(ks, UINT64_MAX, NULL, NULL));
	kallsyms_free(ks);
}

static void test_hidden_and_empty(void **state)
{
	static const char zeros[] =
		"0000000000000000 T _stext\n"
		"0000000000000000 t foo\n"
		"0000000000000000 t bar\t[mod]\n";
	struct kallsyms *ks;

	assert_int_equal(kallsyms_parse(zeros, strlen(zeros), &ks), 0);
	assert_int_equal(kallsyms_count(ks), 0);
	assert_null(kallsyms_lookup(ks, 0, NULL, NULL));
	assert_null(kallsyms_lookup(ks, 0x1000, NULL, NULL));
	assert_null(kallsyms_lookup(ks, 0xffffffff81000000ull, NULL, NULL));
	kallsyms_free(ks);

	assert_int_equal(kallsyms_parse(NULL, 0, &ks), 0);
	assert_int_equal(kallsyms_count(ks), 0);
	assert_null(kallsyms_lookup(ks, 1, NULL, NULL));
	kallsyms_free(ks);
	assert_null(kallsyms_lookup(NULL, 1, NULL, NULL));
	kallsyms_free(NULL);
	assert_int_equal(kallsyms_parse(NULL, 3, &ks), -EINVAL);
	assert_int_equal(kallsyms_parse("x", 1, NULL), -EINVAL);
	assert_int_equal(kallsyms_load("/nonexistent/kallsyms", &ks), -ENOENT);
}

static void test_garbage(void **state)
{
	static const char bad[] =
		"zzzz T bad_addr\n"
		"ffffffff81000000 TT two_char_type\n"
		"ffffffff81000000 T\n"
		"ffffffff81000000 T \n"
		"ffffffff81000000\n"
		"11ffffffff81000000 T overflow\n"
		"ffffffff81001000 T good_one\n"
		"ffffffff81002000 t  leading_space_name\n"
		"ffffffff81003000 t trailing_space   \n"
		"ffffffff81004000 t unterminated_mod\t[abc\n"
		"ffffffff81005000 t empty_mod\t[]\n"
		"ffffffff81006000 T no_newline_at_end";
	struct kallsyms *ks;
	const char *mod;

	assert_int_equal(kallsyms_parse(bad, strlen(bad), &ks), 0);
	assert_int_equal(kallsyms_count(ks), 5);
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81001000ull, NULL, NULL), "good_one");
	/* the malformed line did not become a symbol: good_one extends */
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81002000ull, NULL, NULL), "good_one");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81003000ull, NULL, &mod),
			    "trailing_space");
	assert_null(mod);
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81004000ull, NULL, &mod),
			    "unterminated_mod");
	assert_string_equal(mod, "abc");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81005000ull, NULL, &mod), "empty_mod");
	assert_string_equal(mod, "");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81006010ull, NULL, NULL),
			    "no_newline_at_end");
	kallsyms_free(ks);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;	/* test_fuzz's numbers */

static void test_fuzz(void **state)
{
	size_t base = strlen(text), i, j;
	char *buf = malloc(base * 2);
	struct kallsyms *ks;

	assert_non_null(buf);
	for (i = 0; i < 20000; i++) {
		size_t len = test_fuzz_text(&rng_state, i % 2, buf, text, base,
					    "0123456789abcdef Tt\t[]\n\0\xff", 26);

		assert_int_equal(kallsyms_parse(buf, len, &ks), 0);
		for (j = 0; j < 8; j++) {
			uint64_t r = test_rng_next(&rng_state), start = 0;
			uint64_t a = j < 4 ? r : 0xffffffff81000000ull + r % 0x10000;
			const char *name = kallsyms_lookup(ks, a, &start, NULL);

			if (name)
				assert_true(start <= a);
		}
		kallsyms_free(ks);
	}
	free(buf);
}

/* The running kernel's table: find a known function by its own address. */
static void test_proc_kallsyms(void **state)
{
	struct kallsyms *ks;
	FILE *f;
	char line[512], name[256], type;
	uint64_t addr, start, want = 0;
	const char *got;

	if (access("/proc/kallsyms", R_OK) != 0) {
		skip();
	}
	assert_int_equal(kallsyms_load("/proc/kallsyms", &ks), 0);
	if (kallsyms_count(ks) == 0) {
		kallsyms_free(ks);
		skip();	/* kptr_restrict hides addresses: not root */
	}
	assert_true(kallsyms_count(ks) > 1000);
	f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) == 3 &&
		    strcmp(name, "schedule") == 0 && (type == 'T' || type == 't')) {
			want = addr;
			break;
		}
	}
	fclose(f);
	assert_true(want != 0);
	got = kallsyms_lookup(ks, want, &start, NULL);
	assert_non_null(got);
	assert_int_equal(start, want);
	got = kallsyms_lookup(ks, want + 4, &start, NULL);
	assert_string_equal(got, "schedule");
	assert_int_equal(start, want);
	kallsyms_free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_boundaries),
		cmocka_unit_test(test_hidden_and_empty),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_proc_kallsyms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
