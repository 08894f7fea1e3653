// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_stack_bases.c - unit tests of the table of user stacks stored
 * without their leaf (user/profile/stack_bases.c): what it refuses (no
 * marker, too short), copies kept apart from the caller's array, a second
 * add keeping the first, many ids, and the whole stack's id of a base and
 * a leaf.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bpfprof.h"
#include "profile/stack_bases.h"

static void test_refuses(void **state)
{
	struct stack_bases *b = stack_bases_new();
	uint64_t whole[3] = { 0x401000, 0x402000, 0x403000 };
	uint64_t alone[1] = { BPFPROF_LEAF_APART };

	assert_non_null(b);
	assert_int_equal(stack_bases_add(b, 7, whole, 3, NULL), -EINVAL);
	assert_int_equal(stack_bases_add(b, 7, alone, 1, NULL), -EINVAL);
	assert_null(stack_bases_find(b, 7));
	assert_int_equal(stack_bases_count(b), 0);
	stack_bases_free(b);
}

static void test_copy_and_first_kept(void **state)
{
	struct stack_bases *b = stack_bases_new();
	uint64_t ips[3] = { BPFPROF_LEAF_APART, 0x402000, 0x403000 };
	uint64_t other[2] = { BPFPROF_LEAF_APART, 0x999000 };
	const struct stack_base *got, *again;

	assert_int_equal(stack_bases_add(b, 42, ips, 3, &got), 0);
	ips[1] = 0;				/* the table has its own copy */
	assert_ptr_equal(stack_bases_find(b, 42), got);
	assert_int_equal(got->id, 42);
	assert_int_equal(got->nr, 3);
	assert_true(got->ips[0] == BPFPROF_LEAF_APART);
	assert_true(got->ips[1] == 0x402000 && got->ips[2] == 0x403000);
	assert_int_equal(stack_bases_add(b, 42, other, 2, &again), 0);
	assert_ptr_equal(again, got);
	assert_int_equal(got->nr, 3);
	assert_int_equal(stack_bases_count(b), 1);
	stack_bases_free(b);
}

static void test_many(void **state)
{
	struct stack_bases *b = stack_bases_new();
	uint64_t ips[2] = { BPFPROF_LEAF_APART, 0 };

	for (uint64_t id = 1; id <= 5000; id++) {
		ips[1] = id * 16;
		assert_int_equal(stack_bases_add(b, id * 0x9e3779b97f4a7c15ull, ips, 2, NULL), 0);
	}
	assert_int_equal(stack_bases_count(b), 5000);
	for (uint64_t id = 1; id <= 5000; id++) {
		const struct stack_base *s = stack_bases_find(b, id * 0x9e3779b97f4a7c15ull);

		assert_non_null(s);
		assert_true(s->ips[1] == id * 16);
	}
	assert_null(stack_bases_find(b, 3));
	stack_bases_free(b);
	stack_bases_free(NULL);
}

static void test_leaf_id(void **state)
{
	uint64_t a = stack_bases_leaf_id(1, 0x401000), b = stack_bases_leaf_id(1, 0x401001);
	uint64_t c = stack_bases_leaf_id(2, 0x401000);

	assert_true(a != 0 && a != 1 && a != b && a != c && b != c);
	assert_true(a == stack_bases_leaf_id(1, 0x401000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refuses),
		cmocka_unit_test(test_copy_and_first_kept),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_leaf_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
