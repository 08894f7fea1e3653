// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_cfi_cache.c - unit tests of user/unwind/cfi_cache.c, the on-disk
 * cache of unwind tables by build-id:
 *   - a real table (this test program's own, built by cfi_table_build())
 *     stored and read back is the same table: rows, segments, stats;
 *   - a miss, a truncated file, a flipped byte, another build-id's file
 *     under this name: -ENOENT, and the bad files are removed;
 *   - a table without a build-id is not stored;
 *   - a directory others may write to is refused (-EPERM), a relative
 *     one (-EINVAL), missing parents are created 0700;
 *   - cfi_cache_trim() removes the least recently used files first.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "unwind/cfi_cache.h"
#include "unwind/cfi_table.h"

static char dir[256];

static int make_dir(void **state)
{
	strcpy(dir, "/tmp/test_cfi_cache.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int remove_dir(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* This program's own table: a real one, with a build-id. */
static struct cfi_table *own_table(void)
{
	struct cfi_table *t = NULL;

	assert_int_equal(cfi_table_build("/proc/self/exe", NULL, &t), 0);
	assert_true(t->build_id_size > 0);
	return t;
}

static char *entry(const struct cfi_table *t, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/cache/", dir);

	for (int i = 0; i < t->build_id_size; i++)
		n += snprintf(buf + n, size - (size_t)n, "%02x", t->build_id[i]);
	snprintf(buf + n, size - (size_t)n, ".cfi");
	return buf;
}

static struct cfi_cache *open_cache(void)
{
	char path[300];
	struct cfi_cache *c = NULL;

	snprintf(path, sizeof(path), "%s/cache", dir);
	assert_int_equal(cfi_cache_open(path, &c), 0);
	return c;
}

static void test_round_trip(void **state)
{
	struct cfi_table *t = own_table(), *back = NULL;
	struct cfi_cache *c = open_cache();
	struct cfi_cache_stats st;
	char path[300];
	struct stat sb;

	assert_int_equal(cfi_cache_get(c, t->build_id, t->build_id_size, &back), -ENOENT);
	assert_int_equal(cfi_cache_put(c, t), 0);
	assert_int_equal(stat(entry(t, path, sizeof(path)), &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(cfi_cache_get(c, t->build_id, t->build_id_size, &back), 0);
	assert_int_equal(back->nr, t->nr);
	assert_memory_equal(back->rows, t->rows, t->nr * sizeof(*t->rows));
	assert_int_equal(back->segments.nr, t->segments.nr);
	assert_int_equal(back->segments.e_type, t->segments.e_type);
	assert_memory_equal(back->segments.segs, t->segments.segs,
			    t->segments.nr * sizeof(*t->segments.segs));
	assert_int_equal(back->build_id_size, t->build_id_size);
	assert_memory_equal(back->build_id, t->build_id, t->build_id_size);
	assert_int_equal(back->stats.rows, t->stats.rows);
	assert_int_equal(back->stats.fdes, t->stats.fdes);
	assert_int_equal(back->stats.eh_frame_bytes, t->stats.eh_frame_bytes);
	/* the lookups a walk makes give the same rows */
	for (uint32_t i = 0; i + 1 < t->nr; i += 97)
		assert_memory_equal(cfi_table_find(back, t->rows[i].pc), &t->rows[i],
				    sizeof(t->rows[i]));
	cfi_cache_stats(c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.stores, 1);
	cfi_table_free(back);
	cfi_table_free(t);
	cfi_cache_close(c);
}

/* Store @t, spoil its file with @spoil, and expect a refused, removed file. */
static void expect_refused(void (*spoil)(const char *path, const struct cfi_table *t))
{
	struct cfi_table *t = own_table(), *back = NULL;
	struct cfi_cache *c = open_cache();
	struct cfi_cache_stats st;
	char path[300];

	assert_int_equal(cfi_cache_put(c, t), 0);
	spoil(entry(t, path, sizeof(path)), t);
	assert_int_equal(cfi_cache_get(c, t->build_id, t->build_id_size, &back), -ENOENT);
	assert_null(back);
	assert_int_equal(access(path, F_OK), -1);
	cfi_cache_stats(c, &st);
	assert_int_equal(st.rejected, 1);
	cfi_table_free(t);
	cfi_cache_close(c);
}

static void truncate_file(const char *path, const struct cfi_table *t)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(truncate(path, sb.st_size - 8), 0);
}

static void flip_last_row(const char *path, const struct cfi_table *t)
{
	int fd = open(path, O_RDWR);
	struct stat sb;
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(pread(fd, &b, 1, sb.st_size - 3), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, sb.st_size - 3), 1);
	close(fd);
}

/* Another file's table under this build-id's name. */
static void other_build_id(const char *path, const struct cfi_table *t)
{
	struct cfi_table other = *t;
	struct cfi_cache *c = open_cache();
	char from[300];

	other.build_id[0] ^= 1;
	assert_int_equal(cfi_cache_put(c, &other), 0);
	assert_int_equal(rename(entry(&other, from, sizeof(from)), path), 0);
	cfi_cache_close(c);
}

static void test_truncated(void **state) { expect_refused(truncate_file); }
static void test_flipped_byte(void **state) { expect_refused(flip_last_row); }
static void test_other_build_id(void **state) { expect_refused(other_build_id); }

static void test_no_build_id(void **state)
{
	struct cfi_table *t = own_table();
	struct cfi_cache *c = open_cache();

	t->build_id_size = 0;
	assert_int_equal(cfi_cache_put(c, t), -EINVAL);
	cfi_table_free(t);
	cfi_cache_close(c);
}

/* A file without a build-id is kept by its identity: the same file gives
 * the same id, another file or a new modification time another, and a
 * table stored under it comes back. */
static void test_file_id(void **state)
{
	uint8_t a[CFI_CACHE_FILE_ID_SIZE], b[CFI_CACHE_FILE_ID_SIZE], c2[CFI_CACHE_FILE_ID_SIZE];
	struct timespec times[2] = { { 0, UTIME_OMIT }, { 12345, 678 } };
	struct cfi_table *t = own_table(), *back = NULL;
	struct cfi_cache *c = open_cache();
	char path[300];
	int fd, fd2, exe = open("/proc/self/exe", O_RDONLY);

	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(cfi_cache_file_id(fd, a), 0);
	assert_memory_equal(a, "bpfpstat", 8);
	fd2 = open(path, O_RDONLY);
	assert_int_equal(cfi_cache_file_id(fd2, b), 0);
	assert_memory_equal(a, b, sizeof(a));			/* same file */
	assert_int_equal(futimens(fd, times), 0);
	assert_int_equal(cfi_cache_file_id(fd2, b), 0);
	assert_memory_not_equal(a, b, sizeof(a));		/* touched */
	assert_int_equal(cfi_cache_file_id(exe, c2), 0);
	assert_memory_not_equal(b, c2, sizeof(b));		/* another file */

	t->build_id_size = sizeof(b);
	memcpy(t->build_id, b, sizeof(b));
	assert_int_equal(cfi_cache_put(c, t), 0);
	assert_int_equal(cfi_cache_get(c, a, sizeof(a), &back), -ENOENT);
	assert_int_equal(cfi_cache_get(c, b, sizeof(b), &back), 0);
	assert_int_equal(back->nr, t->nr);
	assert_int_equal(cfi_cache_file_id(-1, a), -EBADF);
	cfi_table_free(back);
	cfi_table_free(t);
	cfi_cache_close(c);
	close(fd);
	close(fd2);
	close(exe);
}

static void test_open(void **state)
{
	struct cfi_cache *c = NULL;
	char path[300];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	assert_int_equal(cfi_cache_open(path, &c), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	cfi_cache_close(c);
	assert_int_equal(chmod(path, 0777), 0);
	assert_int_equal(cfi_cache_open(path, &c), -EPERM);
	assert_int_equal(cfi_cache_open("relative/dir", &c), -EINVAL);
	snprintf(path, sizeof(path), "%s/file", dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	assert_int_equal(cfi_cache_open(path, &c), -ENOTDIR);
}

static void test_trim(void **state)
{
	struct cfi_table *t = own_table();
	struct cfi_cache *c = open_cache();
	struct cfi_cache_stats st;
	char path[8][300];
	struct stat sb;
	uint64_t each;

	/* 8 tables, used oldest first in the order stored */
	for (int i = 0; i < 8; i++) {
		struct timespec ts[2] = { { .tv_sec = 1000000 + i }, { .tv_nsec = UTIME_OMIT } };

		t->build_id[0] = (uint8_t)(0xa0 + i);
		assert_int_equal(cfi_cache_put(c, t), 0);
		assert_int_equal(utimensat(AT_FDCWD, entry(t, path[i], sizeof(path[i])), ts, 0), 0);
	}
	assert_int_equal(stat(path[0], &sb), 0);
	each = (uint64_t)sb.st_size;
	/* room for 6: down to 3/4 of that, i.e. 4 files, the newest */
	cfi_cache_trim(c, 6 * each);
	for (int i = 0; i < 8; i++)
		assert_int_equal(access(path[i], F_OK), i < 4 ? -1 : 0);
	cfi_cache_stats(c, &st);
	assert_int_equal(st.evicted, 4);
	cfi_table_free(t);
	cfi_cache_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_truncated, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_flipped_byte, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_other_build_id, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_no_build_id, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_file_id, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_open, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_trim, make_dir, remove_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
