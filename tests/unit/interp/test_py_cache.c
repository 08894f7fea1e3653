// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_py_cache.c - unit tests of user/interp/py_cache.c: an interpreter
 * file's facts stored under a build-id come back the same (version and
 * layout, _PyRuntime, PyCode_Type, the evaluator and its .cold part, the
 * load segments), a file that is not an interpreter comes back as one;
 * a file with a byte changed, cut short, written by another builder or
 * stored under another build-id's name is a miss and is removed; facts
 * without a .cold part are a miss once a debug file of the build-id is
 * installed (one of this machine's /usr/lib/debug/.build-id files), facts
 * with one are not.
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
#include "interp/py_cache.h"

static const uint8_t id_a[20] = { 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca,
				  0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4 };
static const uint8_t id_b[20] = { 0xd1, 0xd2 };

static struct elf_segment segs[] = {
	{ .vaddr = 0x400000, .offset = 0, .filesz = 0x1000, .flags = 4 },
	{ .vaddr = 0x401000, .offset = 0x1000, .filesz = 0x2f0000, .flags = 5 },
	{ .vaddr = 0x8f2000, .offset = 0x6f2000, .filesz = 0x4a000, .flags = 6 },
};

/* python3.11's facts, as inspect_file() finds them (made up addresses) */
static struct py_file python311(void)
{
	return (struct py_file){
		.is_python = true, .minor = 11, .layout = py_layout_find(11),
		.runtime = 0x8f8e40, .code_type = 0x8e1c20,
		.eval = { { 0x5a1f30, 0x5b2d10 }, { 0x41e2c4, 0x421a90 } },
		.segs = { .segs = segs, .nr = 3, .e_type = 2 /* ET_EXEC */ },
	};
}

static char dir[64];

static int setup(void **state)
{
	strcpy(dir, "/tmp/test_py_cache.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	test_remove_dir(dir);
	return 0;
}

static void path_of(const uint8_t *id, size_t n, char *out)
{
	out += sprintf(out, "%s/", dir);
	for (size_t i = 0; i < n; i++)
		out += sprintf(out, "%02x", id[i]);
	strcpy(out, PY_CACHE_SUFFIX);
}

static void expect_same(const struct py_file *a, const struct py_file *b)
{
	assert_int_equal(a->is_python, b->is_python);
	assert_int_equal(a->minor, b->minor);
	assert_ptr_equal(a->layout, b->layout);
	assert_int_equal(a->runtime, b->runtime);
	assert_int_equal(a->code_type, b->code_type);
	assert_memory_equal(a->eval, b->eval, sizeof(a->eval));
	assert_int_equal(a->segs.nr, b->segs.nr);
	assert_int_equal(a->segs.e_type, b->segs.e_type);
	assert_memory_equal(a->segs.segs, b->segs.segs, a->segs.nr * sizeof(*a->segs.segs));
}

static void test_round_trip(void **state)
{
	struct py_file want = python311(), got = { .inode = 77 };
	struct py_file plain = { .minor = 11, .runtime = 0x1234 }, got_plain = { 0 };

	assert_non_null(want.layout);
	assert_int_equal(py_cache_get(dir, id_a, sizeof(id_a), &got), -ENOENT);
	assert_int_equal(py_cache_put(dir, id_a, sizeof(id_a), &want), 0);
	assert_int_equal(py_cache_get(dir, id_a, sizeof(id_a), &got), 0);
	expect_same(&want, &got);
	assert_int_equal(got.inode, 77);	/* the file's identity is the caller's */
	elf_segments_free(&got.segs);
	/* not an interpreter (no layout for it, no segments): said so again */
	assert_int_equal(py_cache_put(dir, id_b, sizeof(id_b), &plain), 0);
	assert_int_equal(py_cache_get(dir, id_b, sizeof(id_b), &got_plain), 0);
	assert_false(got_plain.is_python);
	assert_int_equal(got_plain.runtime, 0x1234);
	assert_int_equal(got_plain.segs.nr, 0);
	/* no directory, no build-id: no cache */
	assert_int_equal(py_cache_get(NULL, id_a, sizeof(id_a), &got), -ENOENT);
	assert_int_equal(py_cache_put(NULL, id_a, sizeof(id_a), &want), -EINVAL);
	assert_int_equal(py_cache_put(dir, id_a, 0, &want), -EINVAL);
}

/* Change the byte at @off from the start of @path (or cut the file to
 * @off bytes: @cut). */
static void damage(const char *path, off_t off, bool cut)
{
	int fd = open(path, O_RDWR);
	char c;

	assert_true(fd >= 0);
	if (cut) {
		assert_int_equal(ftruncate(fd, off), 0);
	} else {
		assert_int_equal(pread(fd, &c, 1, off), 1);
		c ^= 0x20;
		assert_int_equal(pwrite(fd, &c, 1, off), 1);
	}
	close(fd);
}

static void expect_rejected(const uint8_t *id, size_t n, const char *path)
{
	struct py_file got = { 0 };

	assert_int_equal(py_cache_get(dir, id, n, &got), -ENOENT);
	assert_null(got.segs.segs);
	assert_int_equal(access(path, F_OK), -1);	/* removed */
}

static void test_damaged_files(void **state)
{
	struct py_file want = python311();
	struct stat st;
	char path[256], other[256];

	path_of(id_a, sizeof(id_a), path);
	assert_int_equal(py_cache_put(dir, id_a, sizeof(id_a), &want), 0);
	assert_int_equal(stat(path, &st), 0);
	damage(path, st.st_size - 3, false);		/* a byte of a segment */
	expect_rejected(id_a, sizeof(id_a), path);

	assert_int_equal(py_cache_put(dir, id_a, sizeof(id_a), &want), 0);
	damage(path, 100, false);			/* a byte of the facts */
	expect_rejected(id_a, sizeof(id_a), path);

	assert_int_equal(py_cache_put(dir, id_a, sizeof(id_a), &want), 0);
	damage(path, 8, false);				/* another builder's */
	expect_rejected(id_a, sizeof(id_a), path);

	assert_int_equal(py_cache_put(dir, id_a, sizeof(id_a), &want), 0);
	damage(path, st.st_size - 5, true);		/* cut short */
	expect_rejected(id_a, sizeof(id_a), path);

	/* another file's facts under id_b's name */
	assert_int_equal(py_cache_put(dir, id_a, sizeof(id_a), &want), 0);
	path_of(id_b, sizeof(id_b), other);
	assert_int_equal(rename(path, other), 0);
	expect_rejected(id_b, sizeof(id_b), other);
}

static void test_cold_part_and_debug_file(void **state)
{
	uint8_t id[64];
	size_t n = test_installed_debug_id(id);
	struct py_file want = python311(), got = { 0 };
	char path[256];

	if (!n)
		skip();		/* no debug file installed here: nothing to tell */
	/* with the .cold part (in the file's own symbols): still good */
	assert_int_equal(py_cache_put(dir, id, n, &want), 0);
	assert_int_equal(py_cache_get(dir, id, n, &got), 0);
	expect_same(&want, &got);
	elf_segments_free(&got.segs);
	/* without it: the debug file installed since may have it */
	want.eval[1][0] = want.eval[1][1] = 0;
	assert_int_equal(py_cache_put(dir, id, n, &want), 0);
	path_of(id, n, path);
	expect_rejected(id, n, path);
	/* ... while a build-id without a debug file keeps its facts */
	assert_int_equal(py_cache_put(dir, id_a, sizeof(id_a), &want), 0);
	assert_int_equal(py_cache_get(dir, id_a, sizeof(id_a), &got), 0);
	expect_same(&want, &got);
	elf_segments_free(&got.segs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cold_part_and_debug_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
