// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_procmaps.c - unit tests of user/targets/procmaps.c: parsing /proc/PID/maps
 * text (spaces, " (deleted)", anonymous and pseudo mappings, garbage),
 * address lookup, reading live and dead processes, and build-ids.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rng.h"
#include "symbols/buildid.h"
#include "targets/procmaps.h"

/* Out of order on purpose; odd spacing as the kernel prints it. */
static const char maps_text[] =
	"7f1000000000-7f1000001000 r-xp 00003000 103:02 42                         /tmp/lib with  two spaces.so (deleted)\n"
	"55d0c0a02000-55d0c0a06000 r-xp 00002000 08:01 1234567                    /usr/bin/my prog\n"
	"55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567                    /usr/bin/my prog\n"
	"7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
	"7f0000021000-7f0000030000 rw-s 00000000 00:05 9                          /dev/zero (deleted)\n"
	"7ffd5a1f0000-7ffd5a211000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd5a3e4000-7ffd5a3e6000 r-xp 00000000 00:00 0                          [vdso]\n"
	"55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f2000000000-7f2000001000 ---p 00000000 00:00 0\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

static void test_parse_fields(void **state)
{
	struct procmaps m;
	const struct bpfprof_mapping *p;
	size_t len, i;

	assert_int_equal(procmaps_parse(maps_text, strlen(maps_text), &m), 0);
	assert_int_equal(m.nr, 10);
	assert_int_equal(m.nr_malformed, 0);
	for (i = 1; i < m.nr; i++)
		assert_true(m.maps[i - 1].start < m.maps[i].start);

	p = &m.maps[0];
	assert_int_equal(p->start, 0x55d0c0a00000ull);
	assert_int_equal(p->end, 0x55d0c0a02000ull);
	assert_int_equal(p->pgoff, 0);
	assert_int_equal(p->prot, BPFPROF_PROT_READ);
	assert_int_equal(p->shared, 0);
	assert_int_equal(p->dev_major, 8);
	assert_int_equal(p->dev_minor, 1);
	assert_int_equal(p->inode, 1234567);
	assert_string_equal(p->path, "/usr/bin/my prog");
	assert_null(p->build_id);
	assert_int_equal(p->build_id_size, 0);

	p = &m.maps[1];
	assert_int_equal(p->pgoff, 0x2000);
	assert_int_equal(p->prot, BPFPROF_PROT_READ | BPFPROF_PROT_EXEC);
	assert_string_equal(p->path, "/usr/bin/my prog");

	p = &m.maps[2];
	assert_string_equal(p->path, "[heap]");
	assert_int_equal(p->prot, BPFPROF_PROT_READ | BPFPROF_PROT_WRITE);

	p = &m.maps[3];	/* anonymous with a trailing space */
	assert_int_equal(p->start, 0x7f0000000000ull);
	assert_string_equal(p->path, "");
	assert_int_equal(p->inode, 0);

	p = &m.maps[4];
	assert_int_equal(p->shared, 1);
	assert_string_equal(p->path, "/dev/zero (deleted)");
	assert_int_equal(p->dev_major, 0);
	assert_int_equal(p->dev_minor, 5);

	p = &m.maps[5];
	assert_int_equal(p->pgoff, 0x3000);
	assert_int_equal(p->dev_major, 0x103);
	assert_int_equal(p->dev_minor, 2);
	assert_int_equal(p->inode, 42);
	assert_string_equal(p->path, "/tmp/lib with  two spaces.so (deleted)");
	assert_int_equal(procmaps_path_deleted(p->path, &len), 1);
	assert_int_equal(len, strlen("/tmp/lib with  two spaces.so"));
	assert_int_equal(procmaps_path_deleted(m.maps[0].path, &len), 0);
	assert_int_equal(len, strlen("/usr/bin/my prog"));

	p = &m.maps[6];	/* ---p, no path, no trailing space */
	assert_int_equal(p->prot, 0);
	assert_string_equal(p->path, "");

	assert_string_equal(m.maps[7].path, "[stack]");
	assert_string_equal(m.maps[8].path, "[vdso]");
	p = &m.maps[9];
	assert_int_equal(p->start, 0xffffffffff600000ull);
	assert_int_equal(p->end, 0xffffffffff601000ull);
	assert_int_equal(p->prot, BPFPROF_PROT_EXEC);
	assert_string_equal(p->path, "[vsyscall]");
	procmaps_free(&m);
	assert_null(m.maps);
	assert_int_equal(m.nr, 0);
	procmaps_free(&m);	/* twice is fine */
	procmaps_free(NULL);
}

static void test_find(void **state)
{
	struct procmaps m;
	const struct bpfprof_mapping *p;

	assert_int_equal(procmaps_parse(maps_text, strlen(maps_text), &m), 0);
	assert_null(procmaps_find(m.maps, m.nr, 0));
	assert_null(procmaps_find(m.maps, m.nr, 0x55d0c09fffffull));
	p = procmaps_find(m.maps, m.nr, 0x55d0c0a00000ull);
	assert_ptr_equal(p, &m.maps[0]);
	p = procmaps_find(m.maps, m.nr, 0x55d0c0a01fffull);
	assert_ptr_equal(p, &m.maps[0]);
	p = procmaps_find(m.maps, m.nr, 0x55d0c0a02000ull);
	assert_ptr_equal(p, &m.maps[1]);
	p = procmaps_find(m.maps, m.nr, 0x55d0c0a05fffull);
	assert_ptr_equal(p, &m.maps[1]);
	/* gap between the executable and the heap */
	assert_null(procmaps_find(m.maps, m.nr, 0x55d0c0a06000ull));
	p = procmaps_find(m.maps, m.nr, 0x7f0000021000ull);
	assert_ptr_equal(p, &m.maps[4]);
	p = procmaps_find(m.maps, m.nr, 0xffffffffff600123ull);
	assert_ptr_equal(p, &m.maps[9]);
	assert_null(procmaps_find(m.maps, m.nr, 0xffffffffff601000ull));
	assert_null(procmaps_find(m.maps, m.nr, UINT64_MAX));
	assert_null(procmaps_find(NULL, 0, 0x1000));
	assert_null(procmaps_find(m.maps, 0, 0x55d0c0a00000ull));
	procmaps_free(&m);
}

static void test_parse_lenient(void **state)
{
	static const char text[] =
		"\n"
		"garbage\n"
		"1000-2000 r-xp 00000000 08:01 5 /ok/one\n"
		"2000-1000 r-xp 00000000 08:01 5 /start/after/end\n"
		"3000-3000 r-xp 00000000 08:01 5 /empty/range\n"
		"10000000000000000-10000000000000001 r-xp 00000000 08:01 5 /overflow\n"
		"4000-5000 rwxq 00000000 08:01 5 /bad/perms\n"
		"4000-5000 r-xp 0000zz00 08:01 5 /bad/offset\n"
		"4000-5000 r-xp 00000000 0801 5 /bad/dev\n"
		"4000-5000 r-xp 00000000 08:01 x5 /bad/inode\n"
		"4000-5000 r-xp 00000000 08:01 99999999999999999999999 /inode/overflow\n"
		"4000-5000 r-xp 00000000 100000000:01 5 /major/overflow\n"
		"4000-5000 r-x\n"
		"4000-\n"
		"-5000 r-xp 00000000 08:01 5 /no/start\n"
		"6000-7000 r-xp 00000000 08:01 5\n"
		"\n\n"
		"8000-9000 ---s 00000000 08:01 5 /ok/three";
	struct procmaps m;

	assert_int_equal(procmaps_parse(text, strlen(text), &m), 0);
	assert_int_equal(m.nr, 3);
	assert_int_equal(m.nr_malformed, 13);
	assert_string_equal(m.maps[0].path, "/ok/one");
	assert_int_equal(m.maps[1].start, 0x6000);
	assert_string_equal(m.maps[1].path, "");
	assert_string_equal(m.maps[2].path, "/ok/three");
	assert_int_equal(m.maps[2].shared, 1);
	procmaps_free(&m);

	/* empty and degenerate inputs */
	assert_int_equal(procmaps_parse(NULL, 0, &m), 0);
	assert_int_equal(m.nr, 0);
	assert_int_equal(procmaps_parse("", 0, &m), 0);
	assert_int_equal(m.nr, 0);
	assert_int_equal(procmaps_parse(NULL, 5, &m), -EINVAL);
	assert_int_equal(procmaps_parse("x", 1, NULL), -EINVAL);

	/* NUL bytes inside a path, the length bounds the input (no NUL at end) */
	{
		static const char nul[] = "1000-2000 r-xp 00000000 08:01 5 /a\0b\n1000-2000 r-xp 0";

		assert_int_equal(procmaps_parse(nul, sizeof(nul) - 1, &m), 0);
		assert_int_equal(m.nr, 1);
		assert_int_equal(m.nr_malformed, 1);
		assert_string_equal(m.maps[0].path, "/a");
		procmaps_free(&m);
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* Random bytes and mutations of valid text must never crash. */
static void test_parse_fuzz(void **state)
{
	size_t base = strlen(maps_text), i, j;
	char *buf = malloc(base * 2);
	struct procmaps m;

	assert_non_null(buf);
	for (i = 0; i < 20000; i++) {
		size_t len = test_fuzz_text(&rng_state, i % 2, buf, maps_text, base,
					    "0123456789abcdef-: \nrwxps/\0\xff", 28);

		assert_int_equal(procmaps_parse(buf, len, &m), 0);
		for (j = 0; j < m.nr; j++) {
			assert_true(m.maps[j].start < m.maps[j].end);
			assert_non_null(m.maps[j].path);
			if (j)
				assert_true(m.maps[j - 1].start <= m.maps[j].start);
		}
		if (m.nr)
			(void)procmaps_find(m.maps, m.nr, test_rng_next(&rng_state));
		procmaps_free(&m);
	}
	free(buf);
}

__attribute__((noinline)) static int marker_function(int x)
{
	return x * 3 + 1;
}

static void test_read_self(void **state)
{
	struct procmaps m;
	const struct bpfprof_mapping *p;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint8_t bid[64];
	int bn;
	size_t k;

	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(marker_function(1), 4);
	assert_int_equal(procmaps_read((uint32_t)getpid(), &m), 0);
	assert_true(m.nr > 5);
	assert_int_equal(m.nr_malformed, 0);
	p = procmaps_find(m.maps, m.nr, (uint64_t)(uintptr_t)&marker_function);
	assert_non_null(p);
	assert_true(p->prot & BPFPROF_PROT_EXEC);
	assert_string_equal(p->path, exe);
	assert_true(p->inode != 0);
	assert_null(p->build_id);

	/* build-ids: the executable's equals what elf_build_id() reads */
	bn = elf_build_id(exe, bid, sizeof(bid));
	assert_true(bn >= 16);
	assert_int_equal(procmaps_add_build_ids(&m, (uint32_t)getpid()), 0);
	assert_int_equal(p->build_id_size, (uint32_t)bn);
	assert_memory_equal(p->build_id, bid, (size_t)bn);
	for (k = 0; k < m.nr; k++) {
		const struct bpfprof_mapping *q = &m.maps[k];

		if (strcmp(q->path, exe) == 0) {	/* every mapping of the exe */
			assert_int_equal(q->build_id_size, (uint32_t)bn);
			assert_memory_equal(q->build_id, bid, (size_t)bn);
		}
		if (q->path[0] != '/') {
			assert_null(q->build_id);
		}
	}
	/* the shared library holding qsort (libc, or a sanitizer runtime) */
	p = procmaps_find(m.maps, m.nr, (uint64_t)(uintptr_t)dlsym(RTLD_NEXT, "qsort"));
	assert_non_null(p);
	assert_non_null(p->build_id);
	bn = elf_build_id(p->path, bid, sizeof(bid));
	assert_true(bn > 0);
	assert_memory_equal(p->build_id, bid, (size_t)bn);
	/* a second call replaces them consistently */
	assert_int_equal(procmaps_add_build_ids(&m, (uint32_t)getpid()), 0);
	assert_memory_equal(p->build_id, bid, (size_t)bn);
	procmaps_free(&m);
}

/* A child that exited: maps can no longer be read, build-ids by path. */
static void test_read_gone(void **state)
{
	struct procmaps m, copy;
	pid_t pid = fork();
	int st, err;
	size_t k, with = 0;
	char *text;
	FILE *f;
	char path[64];
	size_t len = 0, cap = 1 << 16;

	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	/* read the live child's maps text, then kill it */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	text = malloc(cap);
	assert_non_null(text);
	while (!feof(f)) {
		len += fread(text + len, 1, cap - len, f);
		if (len == cap) {
			cap *= 2;
			text = realloc(text, cap);
			assert_non_null(text);
		}
	}
	fclose(f);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);

	err = procmaps_read((uint32_t)pid, &m);
	assert_true(err == -ENOENT || err == -ESRCH);
	assert_int_equal(m.nr, 0);

	assert_int_equal(procmaps_parse(text, len, &copy), 0);
	assert_true(copy.nr > 5);
	assert_int_equal(procmaps_add_build_ids(&copy, (uint32_t)pid), 0);
	for (k = 0; k < copy.nr; k++)
		if ((copy.maps[k].prot & BPFPROF_PROT_EXEC) && copy.maps[k].path[0] == '/' &&
		    copy.maps[k].build_id_size)
			with++;
	assert_true(with >= 2);	/* the test itself and libc, by path */
	procmaps_free(&copy);
	free(text);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");	/* "wb" keeps the inode */
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
}

/* The one mapping of the maps text @text gets the build-id of @file (pid 0). */
static void expect_build_id(const char *text, const char *file)
{
	struct procmaps m;
	uint8_t want[64];
	int n;

	assert_int_equal(procmaps_parse(text, strlen(text), &m), 0);
	assert_int_equal(procmaps_add_build_ids(&m, 0), 0);
	n = elf_build_id(file, want, sizeof(want));
	assert_true(n > 0);
	assert_int_equal(m.maps[0].build_id_size, (uint32_t)n);
	assert_memory_equal(m.maps[0].build_id, want, (size_t)n);
	procmaps_free(&m);
}

/* Build-ids by path (pid 0); the cache notices a rewritten file. */
static void test_build_id_cache(void **state)
{
	char dir[] = "/tmp/bpfprof-maps-XXXXXX", path[128], exe[4096], text[512];
	const char *lib;
	struct procmaps self, m;
	const struct bpfprof_mapping *p;
	struct stat st;
	ssize_t r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(r > 0);
	exe[r] = '\0';
	/* some shared library of ours, with a build-id different from exe's */
	assert_int_equal(procmaps_read((uint32_t)getpid(), &self), 0);
	p = procmaps_find(self.maps, self.nr, (uint64_t)(uintptr_t)dlsym(RTLD_NEXT, "qsort"));
	assert_non_null(p);
	lib = p->path;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a b", dir);

	copy_file(exe, path);
	assert_int_equal(stat(path, &st), 0);
	/* the file's own device: a cached build-id is then taken after a
	 * stat() of the path, without opening the file */
	snprintf(text, sizeof(text), "400000-401000 r-xp 00000000 %02x:%02x %llu %s\n",
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino, path);
	expect_build_id(text, exe);
	expect_build_id(text, exe);	/* from the cache */

	/* same path and inode, other contents: the stat() shows the change */
	copy_file(lib, path);
	assert_int_equal(stat(path, &st), 0);
	expect_build_id(text, lib);
	expect_build_id(text, lib);

	/* another file at the path (other inode, the old one still exists) */
	snprintf(text + 256, 256, "%s/old", dir);
	assert_int_equal(rename(path, text + 256), 0);
	copy_file(exe, path);
	assert_int_equal(procmaps_parse(text, strlen(text), &m), 0);
	assert_int_equal(procmaps_add_build_ids(&m, 0), 0);
	assert_null(m.maps[0].build_id);
	assert_int_equal(m.maps[0].build_id_size, 0);
	procmaps_free(&m);

	unlink(path);
	snprintf(path, sizeof(path), "%s/old", dir);
	unlink(path);
	rmdir(dir);
	procmaps_free(&self);
	procmaps_build_id_cache_clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_parse_lenient),
		cmocka_unit_test(test_parse_fuzz),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_read_gone),
		cmocka_unit_test(test_build_id_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
