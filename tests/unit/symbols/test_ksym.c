// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_ksym.c - unit tests of user/symbols/ksym_lookup.c: parsing the kernel's
 * "%pS" texts (core kernel, module, module with build-id, names with
 * dots, addresses in no symbol, malformed texts), and, as root, the real
 * BPF program against /proc/kallsyms: 600 text symbols of the core
 * kernel, looked up at their address + 1 in batches of several runs,
 * come back with the same start address and one of the names /proc/kallsyms
 * lists at that address; an address in no symbol is not found.
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

#include "symbols/ksym_lookup.h"

static void test_parse(void **unused)
{
	struct ksym_symbol k;

	ksym_parse("vfs_read+0x10/0x360", 0xffffffff81000010ull, &k);
	assert_true(k.found);
	assert_string_equal(k.name, "vfs_read");
	assert_int_equal(k.start, 0xffffffff81000000ull);
	assert_int_equal(k.size, 0x360);
	assert_string_equal(k.module, "");

	ksym_parse("ext4_file_read_iter+0x0/0x1a0 [ext4]", 0xffffffffc0100000ull, &k);
	assert_true(k.found);
	assert_string_equal(k.name, "ext4_file_read_iter");
	assert_int_equal(k.start, 0xffffffffc0100000ull);
	assert_string_equal(k.module, "ext4");

	/* CONFIG_STACKTRACE_BUILD_ID kernels add the module's build-id */
	ksym_parse("foo+0x8/0x10 [mod 0123456789abcdef]", 0x1008, &k);
	assert_true(k.found);
	assert_string_equal(k.module, "mod");

	ksym_parse("copy_page.constprop.0+0x4/0x20", 0x104, &k);
	assert_true(k.found);
	assert_string_equal(k.name, "copy_page.constprop.0");
	assert_int_equal(k.start, 0x100);

	/* not in any symbol: the kernel prints the address */
	ksym_parse("0xffffffff00000000", 0xffffffff00000000ull, &k);
	assert_false(k.found);
	static const char *bad[] = { "", "+0x10/0x20", "foo+0x10", "foo+0x10/", "foo+10/0x20",
				     "foo+0x10/0x20junk", "foo+0xzz/0x20" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ksym_parse(bad[i], 0x1000, &k);
		assert_false(k.found);
	}
	ksym_parse("foo+0x2000/0x3000", 0x1000, &k);	/* offset past the address */
	assert_false(k.found);

	char longname[KSYM_TEXT_LEN + 32];
	memset(longname, 'a', KSYM_TEXT_LEN + 8);
	strcpy(longname + KSYM_TEXT_LEN + 8, "+0x0/0x1");
	ksym_parse(longname, 0x1000, &k);
	assert_false(k.found);
}

struct ksym_entry {
	uint64_t addr;
	char name[128];
};

static int cmp_entry(const void *a, const void *b)
{
	const struct ksym_entry *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of the core kernel from /proc/kallsyms, sorted; count in *n. */
static struct ksym_entry *read_kallsyms(size_t *n)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t cap = 1 << 16;
	struct ksym_entry *e = malloc(cap * sizeof(*e));
	char line[512], type, name[256];
	uint64_t addr;

	assert_non_null(f);
	assert_non_null(e);
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3 || !addr ||
		    strchr(line, '[') || (type != 't' && type != 'T') || strlen(name) >= 128)
			continue;
		if (*n == cap) {
			cap *= 2;
			e = realloc(e, cap * sizeof(*e));
			assert_non_null(e);
		}
		e[*n].addr = addr;
		strcpy(e[*n].name, name);
		(*n)++;
	}
	fclose(f);
	qsort(e, *n, sizeof(*e), cmp_entry);
	return e;
}

static bool named_at(const struct ksym_entry *e, size_t n, uint64_t addr, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].addr == addr && strcmp(e[i].name, name) == 0)
			return true;
	return false;
}

static void test_against_kallsyms(void **unused)
{
	enum { N = 600 };
	struct ksym_symbol *out = calloc(N, sizeof(*out));
	uint64_t addrs[N];
	struct ksym_entry *e, *pick[N];
	struct ksym *k;
	size_t n, m = 0;

	if (geteuid() != 0)
		skip();		/* addresses hidden and BPF refused: not root */
	assert_int_equal(ksym_open(&k), 0);
	e = read_kallsyms(&n);
	assert_true(n > N);
	/* spread over the table; skip symbols sharing their address with the next */
	for (size_t i = 0; i + 1 < n && m < N; i += n / N)
		if (e[i + 1].addr > e[i].addr + 1) {
			pick[m] = &e[i];
			addrs[m++] = e[i].addr + 1;
		}
	assert_true(m > N / 2);
	assert_int_equal(ksym_lookup(k, addrs, m, out), 0);
	for (size_t i = 0; i < m; i++) {
		if (!out[i].found || out[i].start != pick[i]->addr ||
		    !named_at(e, n, out[i].start, out[i].name))
			print_message("%#" PRIx64 ": kallsyms %s, ksym %s at %#" PRIx64 "\n", addrs[i],
				      pick[i]->name, out[i].found ? out[i].name : "(none)",
				      out[i].start);
		assert_true(out[i].found);
		assert_int_equal(out[i].start, pick[i]->addr);
		assert_true(named_at(e, n, out[i].start, out[i].name));
		assert_string_equal(out[i].module, "");
	}
	addrs[0] = 1;
	assert_int_equal(ksym_lookup(k, addrs, 1, out), 0);
	assert_false(out[0].found);
	assert_int_equal(ksym_lookup(k, NULL, 1, out), -EINVAL);
	ksym_close(k);
	free(e);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_against_kallsyms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
