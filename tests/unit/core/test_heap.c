// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_heap.c - unit tests of user/heap.c: after heap_setup(), writing
 * blocks malloc'd from the populated heap takes (almost) no page fault,
 * where the same writes to as many fresh pages take one a page; and when
 * the heap grows past it, heap_populate() populates the growth.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "heap.h"

#define BLOCK 1024
#define BLOCKS 1024		/* 1 MiB: 256 pages */

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Faults taken writing @n blocks of BLOCK bytes malloc'd now (kept in @keep). */
static long faults_writing(void **keep, size_t n)
{
	long f0 = minor_faults();

	for (size_t i = 0; i < n; i++) {
		keep[i] = malloc(BLOCK);
		assert_non_null(keep[i]);
		memset(keep[i], 0x5a, BLOCK);
	}
	return minor_faults() - f0;
}

static void test_populated_heap_takes_no_faults(void **state)
{
	static void *keep[4 * BLOCKS];
	char *fresh;
	long f0, fresh_faults, heap_faults;

	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	skip();		/* ASan's allocator is not glibc's: heap.h does nothing */
#endif
	/* the reference: 256 fresh pages, one fault each */
	fresh = mmap(NULL, BLOCKS * BLOCK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	assert_true(fresh != MAP_FAILED);
	f0 = minor_faults();
	memset(fresh, 1, BLOCKS * BLOCK);
	fresh_faults = minor_faults() - f0;
	munmap(fresh, BLOCKS * BLOCK);
	assert_true(fresh_faults >= BLOCKS * BLOCK / 4096 / 2);

	heap_setup(2 * BLOCKS * BLOCK);
	assert_true(heap_populated() >= 2 * BLOCKS * BLOCK);
	heap_faults = faults_writing(keep, BLOCKS);
	assert_true(heap_faults < fresh_faults / 8);

	/* past what was populated: the heap grows, heap_populate() covers it */
	faults_writing(keep + BLOCKS, 2 * BLOCKS);
	heap_populate();
	heap_faults = faults_writing(keep + 3 * BLOCKS, BLOCKS / 2);
	assert_true(heap_faults < fresh_faults / 8);
	for (size_t i = 0; i < 3 * BLOCKS + BLOCKS / 2; i++)
		free(keep[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_populated_heap_takes_no_faults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
