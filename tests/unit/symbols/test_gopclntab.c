// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_gopclntab.c - unit tests of user/symbols/gopclntab.c: a table laid
 * out here as Go 1.18+'s runtime/symtab.go describes it gives its
 * functions (names, [start, end), textStart or the .text address when it
 * is 0); tables of other versions are not read (-ENOENT) and damaged ones
 * (offsets or sizes past the end, names without a NUL, entries out of
 * order) are refused (-EINVAL); and the table of a real Go program
 * (Debian's stripped /usr/lib/go/bin/go: no symbol table) gives runtime.main,
 * main.main and runtime.goexit, in order, inside .text.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/elf_section.h"
#include "symbols/gopclntab.h"

#define NAMES_OFF 72		/* funcnametab right after the header */
#define TAB_OFF 128		/* pclntab: the functab, then the _funcs */

static uint8_t table[256];

static void put32(size_t off, uint32_t v) { memcpy(table + off, &v, 4); }
static void put64(size_t off, uint64_t v) { memcpy(table + off, &v, 8); }

/*
 * Two functions: "main.a" at text + 0x10 (0x20 bytes), "main.b" at
 * text + 0x30 up to text + 0x90.  textStart @text_start.
 */
static void make_table(uint32_t magic, uint64_t text_start)
{
	memset(table, 0, sizeof(table));
	put32(0, magic);
	table[6] = 1;			/* minLC */
	table[7] = 8;			/* ptrSize */
	put64(8, 2);			/* nfunc */
	put64(24, text_start);
	put64(32, NAMES_OFF);		/* funcnameOffset */
	put64(64, TAB_OFF);		/* pclnOffset */
	memcpy(table + NAMES_OFF, "main.a\0main.b", 14);
	/* functab: {entryoff, funcoff} x 3 (the last: the end) */
	put32(TAB_OFF + 0, 0x10); put32(TAB_OFF + 4, 32);
	put32(TAB_OFF + 8, 0x30); put32(TAB_OFF + 12, 48);
	put32(TAB_OFF + 16, 0x90);
	/* _func: entryoff, nameoff */
	put32(TAB_OFF + 32, 0x10); put32(TAB_OFF + 36, 0);
	put32(TAB_OFF + 48, 0x30); put32(TAB_OFF + 52, 7);
}

static void test_functions(void **state)
{
	struct go_func *f;

	(void)state;
	make_table(0xfffffff0u, 0x401000);
	assert_int_equal(gopclntab_funcs(table, sizeof(table), 0x999000, &f), 2);
	assert_string_equal(f[0].name, "main.a");
	assert_int_equal(f[0].start, 0x401010);
	assert_int_equal(f[0].end, 0x401030);
	assert_string_equal(f[1].name, "main.b");
	assert_int_equal(f[1].start, 0x401030);
	assert_int_equal(f[1].end, 0x401090);
	free(f);
	/* Go 1.20's magic, and a textStart the loader sets (0 in the file) */
	make_table(0xfffffff1u, 0);
	assert_int_equal(gopclntab_funcs(table, sizeof(table), 0x999000, &f), 2);
	assert_int_equal(f[1].start, 0x999030);
	free(f);
}

static void test_other_versions(void **state)
{
	static const uint32_t magics[] = { 0xfffffffbu, 0xfffffffau, 0xf0ffffffu, 0 };
	struct go_func *f = (void *)1;

	(void)state;
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++) {
		make_table(magics[i], 0x401000);
		assert_int_equal(gopclntab_funcs(table, sizeof(table), 0, &f), -ENOENT);
		assert_null(f);
	}
	make_table(0xfffffff0u, 0x401000);
	table[7] = 4;				/* 32-bit */
	assert_int_equal(gopclntab_funcs(table, sizeof(table), 0, &f), -ENOENT);
	assert_int_equal(gopclntab_funcs(table, 40, 0, &f), -ENOENT);	/* no header */
}

static void test_damaged(void **state)
{
	struct go_func *f;

	(void)state;
	make_table(0xfffffff0u, 0x401000);
	assert_int_equal(gopclntab_funcs(table, TAB_OFF + 20, 0, &f), -EINVAL); /* functab cut */
	make_table(0xfffffff0u, 0x401000);
	put64(8, 1u << 30);				/* nfunc past the end */
	assert_int_equal(gopclntab_funcs(table, sizeof(table), 0, &f), -EINVAL);
	make_table(0xfffffff0u, 0x401000);
	put32(TAB_OFF + 12, 250);			/* a _func past the end */
	assert_int_equal(gopclntab_funcs(table, sizeof(table), 0, &f), -EINVAL);
	make_table(0xfffffff0u, 0x401000);
	put32(TAB_OFF + 52, 1000);			/* a name past the end */
	assert_int_equal(gopclntab_funcs(table, sizeof(table), 0, &f), -EINVAL);
	make_table(0xfffffff0u, 0x401000);
	memset(table + NAMES_OFF, 'x', sizeof(table) - NAMES_OFF);	/* no NUL */
	assert_int_equal(gopclntab_funcs(table, sizeof(table), 0, &f), -EINVAL);
	make_table(0xfffffff0u, 0x401000);
	put32(TAB_OFF + 8, 0x5);			/* out of order */
	assert_int_equal(gopclntab_funcs(table, sizeof(table), 0, &f), -EINVAL);
	make_table(0xfffffff0u, 0x401000);
	put64(64, 4096);				/* pclnOffset past the end */
	assert_int_equal(gopclntab_funcs(table, sizeof(table), 0, &f), -EINVAL);
}

/* The index of function @name in @f (@n), or -1. */
static long find(const struct go_func *f, long n, const char *name)
{
	for (long i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return i;
	return -1;
}

static void test_real_program(void **state)
{
	const char *path = "/usr/lib/go/bin/go";
	int fd = open(path, O_RDONLY);
	GElf_Shdr sh, text;
	struct go_func *f;
	Elf_Scn *scn;
	Elf_Data *d;
	Elf *elf;
	long n;

	(void)state;
	if (fd < 0)
		fail_msg("%s: not there (Debian's golang-go, a CI dependency)", path);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_null(elf_section_by_name(elf, ".symtab", &sh));	/* stripped */
	assert_non_null(elf_section_by_name(elf, ".text", &text));
	scn = elf_section_by_name(elf, ".gopclntab", &sh);
	assert_non_null(scn);
	d = elf_getdata(scn, NULL);
	assert_non_null(d);
	n = gopclntab_funcs(d->d_buf, d->d_size, text.sh_addr, &f);
	print_message("%s: %ld functions\n", path, n);
	assert_true(n > 1000);
	for (long i = 0; i < n; i++) {
		assert_true(f[i].name[0] != '\0');
		assert_true(f[i].start >= text.sh_addr && f[i].end <= text.sh_addr + text.sh_size);
		assert_true(f[i].start <= f[i].end);
		if (i)
			assert_true(f[i - 1].end <= f[i].start);
	}
	assert_true(find(f, n, "runtime.main") >= 0);
	assert_true(find(f, n, "main.main") >= 0);
	assert_true(find(f, n, "runtime.goexit") >= 0);
	free(f);
	elf_end(elf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_other_versions),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_real_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
