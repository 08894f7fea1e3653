// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_elf_segments.c - unit tests of user/symbols/elf_segments.c's load
 * bias: start - vaddr(pgoff) through the PT_LOAD segment holding @pgoff,
 * for a shared object anywhere and for an executable (ET_EXEC) at its own
 * addresses (0) and in a second mapping of its code elsewhere, as V8 maps
 * node's embedded builtins next to its JIT code (the segments below are
 * Debian's /usr/bin/node's).  A walk through such a mapping with bias 0
 * looked its pcs up as addresses past the table and stopped.  And lld's
 * packed layout, where one file page belongs to two segments.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "symbols/elf_segments.h"

/* /usr/bin/node (Debian 12, nodejs 18): its first four PT_LOAD segments. */
static struct elf_segment node_segs[] = {
	{ .vaddr = 0x400000, .offset = 0x0, .filesz = 0x76e5d8, .flags = PF_R },
	{ .vaddr = 0xb6f000, .offset = 0x76f000, .filesz = 0x1e90, .flags = PF_R | PF_X },
	{ .vaddr = 0xb72000, .offset = 0x772000, .filesz = 0x1a8bca0, .flags = PF_R | PF_X },
	{ .vaddr = 0x2600000, .offset = 0x2200000, .filesz = 0x1f1, .flags = PF_R | PF_X },
};

static struct elf_segments segments(uint16_t type)
{
	return (struct elf_segments){ .segs = node_segs,
				      .nr = sizeof(node_segs) / sizeof(node_segs[0]),
				      .e_type = type };
}

/* An executable's own mappings: bias 0. */
static void test_exec_own_mapping(void **state)
{
	struct elf_segments s = segments(ET_EXEC);
	uint64_t bias = 1;

	(void)state;
	assert_int_equal(elf_segments_bias(&s, 0xb72000, 0x772000, &bias), 0);
	assert_int_equal(bias, 0);
	assert_int_equal(elf_segments_bias(&s, 0x400000, 0, &bias), 0);
	assert_int_equal(bias, 0);
}

/* The builtins (vaddr 0x18c4000, file offset 0x14c4000) mapped again at
 * 0x7fa43be40000, as /proc/PID/maps of node shows them: the bias takes
 * that address to the file's vaddr. */
static void test_exec_second_mapping(void **state)
{
	struct elf_segments s = segments(ET_EXEC);
	uint64_t start = 0x7fa43be40000ull, bias = 0;

	(void)state;
	assert_int_equal(elf_segments_bias(&s, start, 0x14c4000, &bias), 0);
	assert_int_equal(bias, start - 0x18c4000);
	/* Builtins_CEntry_Return1_ArgvOnStack_NoBuiltinExit + 0x36 */
	assert_int_equal(start + (0x195e476 - 0x18c4000) - bias, 0x195e476);
}

/* An executable's offset in no segment keeps the old answer, 0. */
static void test_exec_no_segment(void **state)
{
	struct elf_segments s = segments(ET_EXEC);
	uint64_t bias = 1;

	(void)state;
	assert_int_equal(elf_segments_bias(&s, 0x9000000, 0x4000000, &bias), 0);
	assert_int_equal(bias, 0);
}

/* A shared object with the same segments: bias from any mapping; an
 * offset in no segment is an error. */
static void test_dyn(void **state)
{
	struct elf_segments s = segments(ET_DYN);
	uint64_t bias = 0;

	(void)state;
	assert_int_equal(elf_segments_bias(&s, 0x7f0000772000ull, 0x772000, &bias), 0);
	assert_int_equal(bias, 0x7f0000772000ull - 0xb72000);
	assert_int_equal(elf_segments_bias(&s, 0x7f0000000000ull, 0x4000000, &bias), -EINVAL);
}

/*
 * lld's packed layout: the file has no gaps, so the text segment starts in
 * the page where the read-only one ends, at a vaddr one page further on
 * (a Rust 1.95 binary, linked by rust-lld).  Its executable mapping, at
 * pgoff 0x12000, lies in both segments' page ranges: the bias is the text
 * segment's, not the read-only one's (which is 0x1000 off, and the walk
 * then found no row for any pc of the program).
 */
static struct elf_segment lld_segs[] = {
	{ .vaddr = 0x0, .offset = 0x0, .filesz = 0x12d9c, .flags = PF_R },
	{ .vaddr = 0x13da0, .offset = 0x12da0, .filesz = 0x3d570, .flags = PF_R | PF_X },
	{ .vaddr = 0x52310, .offset = 0x50310, .filesz = 0x2748, .flags = PF_R | PF_W },
	{ .vaddr = 0x55a58, .offset = 0x52a58, .filesz = 0x9c0, .flags = PF_R | PF_W },
};

static void test_lld_shared_pages(void **state)
{
	struct elf_segments s = { .segs = lld_segs, .nr = 4, .e_type = ET_DYN };
	uint64_t base = 0x560658144000ull, bias = 0;

	(void)state;
	/* /proc/PID/maps: r-xp 0x12000 */
	assert_int_equal(elf_segments_bias(&s, base + 0x13000, 0x12000, &bias), 0);
	assert_int_equal(bias, base);
	/* m::burn at vaddr 0x13e90 */
	assert_int_equal(base + 0x13000 + 0xe90 - bias, 0x13e90);
}

/* A small file (nofp_paths linked by lld 14): its first page holds the
 * read-only segment and the start of the code, both mapped from pgoff 0;
 * the executable mapping is the code's, a page above. */
static struct elf_segment lld_small_segs[] = {
	{ .vaddr = 0x0, .offset = 0x0, .filesz = 0xc3c, .flags = PF_R },
	{ .vaddr = 0x1c40, .offset = 0xc40, .filesz = 0x890, .flags = PF_R | PF_X },
	{ .vaddr = 0x34d0, .offset = 0x14d0, .filesz = 0x1d8, .flags = PF_R | PF_W },
};

static void test_lld_first_page(void **state)
{
	struct elf_segments s = { .segs = lld_small_segs, .nr = 3, .e_type = ET_DYN };
	uint64_t base = 0x55d0c0a00000ull, bias = 0;

	(void)state;
	assert_int_equal(elf_segments_bias(&s, base + 0x1000, 0, &bias), 0);
	assert_int_equal(bias, base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_own_mapping),
		cmocka_unit_test(test_exec_second_mapping),
		cmocka_unit_test(test_exec_no_segment),
		cmocka_unit_test(test_dyn),
		cmocka_unit_test(test_lld_shared_pages),
		cmocka_unit_test(test_lld_first_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
