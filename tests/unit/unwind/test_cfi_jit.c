// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_cfi_jit.c - unit tests of the unwind rows of code without CFI
 * (issue 17): user/unwind/cfi_anon.c (anonymous executable memory:
 * CPython's perf trampolines by their machine code, the frame-pointer row
 * otherwise) and user/unwind/cfi_fp.c (V8's embedded builtins, named by
 * Builtins_* symbols, get the frame-pointer rule where no FDE covers
 * them; other code without CFI stays a gap).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "unwind/cfi_anon.h"
#include "unwind/cfi_table.h"

static const uint8_t tramp[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				 0x48, 0x83, 0xc4, 0x08, 0xc3 };
static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };

static char tmp_dir[] = "/tmp/test_cfi_jit.XXXXXX";

static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* Assert the row of @t at @pc has @kind and @cfa (rsp rows: rbp and rbx
 * unchanged, the trampoline saves neither; rbp rows, code without CFI:
 * rbx lost). */
static void assert_row(const struct cfi_table *t, uint64_t pc, int kind, int cfa)
{
	const struct cfi_row *r = cfi_table_find(t, pc);

	assert_non_null(r);
	if (CFI_ROW_KIND(r) != (unsigned)kind || (kind < CFI_KIND_FIRST_STOP && r->cfa != cfa)) {
		fprintf(stderr, "# pc %#llx: kind %s cfa %d, expected %s cfa %d\n",
			(unsigned long long)pc, cfi_kind_name(CFI_ROW_KIND(r)), r->cfa,
			cfi_kind_name((unsigned)kind), cfa);
		fail();
	}
	if (kind == CFI_KIND_RSP) {
		assert_int_equal(r->rbp, CFI_RBP_SAME);
		assert_int_equal(CFI_ROW_RBX(r), CFI_RBX_SAME);
	}
	if (kind == CFI_KIND_RBP)
		assert_int_equal(CFI_ROW_RBX(r), CFI_RBX_LOST);
}

/* @n copies of the trampoline (with endbr64 if @cet) back to back, then
 * zero bytes up to @size, as CPython fills an arena; returns the copy size. */
static size_t fill_arena(uint8_t *mem, size_t size, size_t n, int cet)
{
	size_t len = (cet ? sizeof(endbr) : 0) + sizeof(tramp), off = 0;

	memset(mem, 0, size);
	for (size_t i = 0; i < n; i++, off += len) {
		if (cet)
			memcpy(mem + off, endbr, sizeof(endbr));
		memcpy(mem + off + len - sizeof(tramp), tramp, sizeof(tramp));
	}
	return len;
}

/* Each copy: sp + 8 at its start and its ret, sp + 16 in between. */
static void check_arena(const struct cfi_table *t, size_t n, size_t len, size_t size)
{
	size_t pre = len - sizeof(tramp);

	for (size_t i = 0; i < n; i++) {
		uint64_t c = i * len;

		assert_row(t, c, CFI_KIND_RSP, 1);
		if (pre)
			assert_row(t, c + pre - 1, CFI_KIND_RSP, 1);	/* in endbr64 */
		assert_row(t, c + pre + 3, CFI_KIND_RSP, 1);		/* in the sub */
		assert_row(t, c + pre + 4, CFI_KIND_RSP, 2);		/* the call */
		assert_row(t, c + pre + 5, CFI_KIND_RSP, 2);		/* return address - 1 */
		assert_row(t, c + pre + 9, CFI_KIND_RSP, 2);		/* in the add */
		assert_row(t, c + pre + 10, CFI_KIND_RSP, 1);		/* the ret */
	}
	assert_row(t, n * len, CFI_KIND_STOP_NO_ROW, 0);		/* the tail */
	assert_row(t, size - 1, CFI_KIND_STOP_NO_ROW, 0);
	/* the table ends with a gap marker where the copies end */
	assert_int_equal(t->rows[t->nr - 1].pc, n * len);
	assert_int_equal(t->rows[t->nr - 1].kind, CFI_KIND_STOP_NO_ROW);
	for (uint32_t i = 1; i < t->nr; i++)
		assert_true(t->rows[i - 1].pc < t->rows[i].pc);
}

static void test_trampolines_mem(void **state)
{
	size_t size = 4096, n = 250, len;	/* 250 * 15 bytes fit */
	uint8_t *mem = malloc(size);
	struct cfi_table *t;

	assert_non_null(mem);
	for (int cet = 0; cet < 2; cet++) {
		len = fill_arena(mem, size, n, cet);
		assert_int_equal(cfi_anon_table_mem(mem, size, &t), 0);
		assert_non_null(t);
		check_arena(t, n, len, size);
		/* the first row, two per copy (merged across copies), the tail marker */
		assert_int_equal(t->nr, 2 * n + 2);
		cfi_table_free(t);
	}
	/* other code: no table (the frame-pointer row applies) */
	memset(mem, 0x90, size);
	assert_int_equal(cfi_anon_table_mem(mem, size, &t), 0);
	assert_null(t);
	free(mem);
}

static void test_trampolines_process(void **state)
{
	size_t size = 64 * 1024, n = size / sizeof(tramp), len;
	uint8_t *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t pid = (uint32_t)getpid();
	uint64_t start = (uintptr_t)mem, h, h2;
	struct cfi_table *t;
	uint8_t *code, *code2;

	assert_true(mem != MAP_FAILED);
	len = fill_arena(mem, size, n, 0);
	assert_int_equal(mprotect(mem, size, PROT_READ | PROT_EXEC), 0);
	assert_int_equal(cfi_anon_read(pid, start, start + size, &code, &h), 0);
	assert_non_null(code);
	assert_memory_equal(code, mem, size);
	assert_int_equal(cfi_anon_table_mem(code, size, &t), 0);
	assert_non_null(t);
	check_arena(t, n, len, size);
	cfi_table_free(t);
	/* the same bytes: the same hash; other bytes: another */
	assert_int_equal(cfi_anon_read(pid, start, start + size, &code2, &h2), 0);
	assert_true(h == h2);
	free(code2);
	assert_int_equal(cfi_anon_read(pid, start, start + size - 4096, &code2, &h2), 0);
	assert_true(h != h2);
	free(code2);
	free(code);
	/* other code, and memory that cannot be read: the frame-pointer row */
	assert_int_equal(mprotect(mem, size, PROT_READ | PROT_WRITE), 0);
	memset(mem, 0xcc, size);
	assert_int_equal(cfi_anon_read(pid, start, start + size, &code, &h), 0);
	assert_null(code);
	assert_int_equal(munmap(mem, size), 0);
	assert_int_equal(cfi_anon_read(pid, start, start + size, &code, &h), 0);
	assert_null(code);
	/* the frame-pointer row: CFA = rbp + 16, caller's rbp at CFA - 16,
	 * rbx lost (code without CFI may use it) */
	struct cfi_row r = cfi_anon_fp_row();
	assert_int_equal(CFI_ROW_KIND(&r), CFI_KIND_RBP);
	assert_int_equal(CFI_ROW_RBX(&r), CFI_RBX_LOST);
	assert_int_equal(r.cfa, 2);
	assert_int_equal(r.rbp, -2);
}

/*
 * A shared library: f1 with CFI, Builtins_A and Builtins_B without, f2
 * with CFI between them, and plain_nocfi (no CFI, not a builtin) after
 * Builtins_B.  Writes its path to @so.
 */
static void build_builtins_so(char *so, size_t len, const char *name, const char *prefix)
{
	char s[PATH_MAX];
	FILE *f;

	snprintf(s, sizeof(s), "%s/%s.s", tmp_dir, name);
	snprintf(so, len, "%s/%s.so", tmp_dir, name);
	f = fopen(s, "w");
	assert_non_null(f);
	fprintf(f,
		".text\n"
		".globl f1, f2, %1$sA, %1$sB, plain_nocfi\n"
		".type f1, @function\n"
		"f1:\n .cfi_startproc\n push %%rbp\n .cfi_def_cfa_offset 16\n"
		" pop %%rbp\n .cfi_def_cfa_offset 8\n ret\n .cfi_endproc\n .size f1, .-f1\n"
		".p2align 6\n"
		".type %1$sA, @function\n"
		"%1$sA:\n push %%rbp\n mov %%rsp, %%rbp\n call f1\n pop %%rbp\n ret\n"
		" .size %1$sA, .-%1$sA\n"
		".p2align 6\n"
		".type f2, @function\n"
		"f2:\n .cfi_startproc\n sub $24, %%rsp\n .cfi_def_cfa_offset 32\n"
		" add $24, %%rsp\n .cfi_def_cfa_offset 8\n ret\n .cfi_endproc\n .size f2, .-f2\n"
		".p2align 6\n"
		".type %1$sB, @function\n"
		"%1$sB:\n push %%rbp\n mov %%rsp, %%rbp\n call f2\n pop %%rbp\n ret\n"
		" .size %1$sB, .-%1$sB\n"
		".p2align 6\n"
		".type plain_nocfi, @function\n"
		"plain_nocfi:\n push %%rbp\n call f1\n pop %%rbp\n ret\n .size plain_nocfi, .-plain_nocfi\n"
		".section .note.GNU-stack,\"\",@progbits\n", prefix);
	fclose(f);
	assert_int_equal(run("cc -shared -nostdlib -Wl,--build-id -o %s %s", so, s), 0);
}

/* ELF address of symbol @sym in @so (nm), 0 if none. */
static uint64_t sym_addr(const char *so, const char *sym)
{
	char cmd[PATH_MAX + 128];
	unsigned long long a = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"%s\" { print $1 }'", so, sym);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fscanf(p, "%llx", &a) != 1)
		a = 0;
	pclose(p);
	return a;
}

static void test_v8_builtins(void **state)
{
	char so[PATH_MAX], other[PATH_MAX], st[PATH_MAX];
	uint64_t f1, f2, a, b, plain;
	struct cfi_table *t;

	if (run("command -v cc nm strip >/dev/null") != 0)
		skip();
	build_builtins_so(so, sizeof(so), "v8", "Builtins_");
	f1 = sym_addr(so, "f1");
	f2 = sym_addr(so, "f2");
	a = sym_addr(so, "Builtins_A");
	b = sym_addr(so, "Builtins_B");
	plain = sym_addr(so, "plain_nocfi");
	assert_true(f1 && f2 && a && b && plain);
	assert_true(f1 < a && a < f2 && f2 < b && b < plain);
	assert_int_equal(cfi_table_build(so, NULL, &t), 0);
	assert_int_equal(t->stats.fp_ranges, 2);	/* [A, f2) and [f2 end, B end) */
	assert_row(t, f1 + 1, CFI_KIND_RSP, 2);		/* f1's CFI */
	assert_row(t, a, CFI_KIND_RBP, 2);		/* the builtins: frame pointer */
	assert_row(t, a + 5, CFI_KIND_RBP, 2);
	assert_row(t, f2, CFI_KIND_RSP, 1);		/* f2 keeps its CFI */
	assert_row(t, f2 + 4, CFI_KIND_RSP, 4);
	assert_row(t, b + 1, CFI_KIND_RBP, 2);
	assert_row(t, plain, CFI_KIND_STOP_NO_ROW, 0);	/* not a builtin: a gap */
	assert_row(t, plain + 3, CFI_KIND_STOP_NO_ROW, 0);
	assert_int_equal(cfi_table_find(t, a)->rbp, -2);
	cfi_table_free(t);
	/* the same code without the Builtins_ names: gaps, as CFI says */
	build_builtins_so(other, sizeof(other), "other", "Other_");
	assert_int_equal(cfi_table_build(other, NULL, &t), 0);
	assert_int_equal(t->stats.fp_ranges, 0);
	assert_row(t, sym_addr(other, "Other_A"), CFI_KIND_STOP_NO_ROW, 0);
	assert_row(t, sym_addr(other, "Other_B") + 1, CFI_KIND_STOP_NO_ROW, 0);
	cfi_table_free(t);
	/* stripped of its symbol table: no names, no rule */
	snprintf(st, sizeof(st), "%s/v8.stripped.so", tmp_dir);
	assert_int_equal(run("strip -o %s %s", st, so), 0);
	assert_int_equal(cfi_table_build(st, NULL, &t), 0);
	assert_int_equal(t->stats.fp_ranges, 0);
	assert_row(t, a, CFI_KIND_STOP_NO_ROW, 0);
	cfi_table_free(t);
}

static int setup(void **state)
{
	return mkdtemp(tmp_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	return run("rm -rf %s", tmp_dir) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trampolines_mem),
		cmocka_unit_test(test_trampolines_process),
		cmocka_unit_test(test_v8_builtins),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
