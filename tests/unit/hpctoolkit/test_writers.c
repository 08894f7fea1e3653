// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_writers.c - byte-level unit tests of the hpctoolkit plugin's
 * structure writers (plugins/hpctoolkit/{bw,meta,profile_db,cct_db,
 * trace_db}.c): each writes into a memory buffer and is compared with bytes
 * computed by hand from hpctoolkit-formats-v4.0.md and
 * hpctoolkit-v4-as-written.md (file header, General Properties, Identifier
 * Names, Performance Metrics, Functions, {Ctx} flex packing, Context Tree
 * in post order with its ctxIds and shape, identifier tuples, profile-major
 * sparse value blocks streamed to a file, context-major blocks, trace lines
 * and trace headers), plus the file mode of the writer (seek, patch).
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
#include <unistd.h>

#include <cmocka.h>

#include "hpctoolkit/hpc.h"

/* little-endian byte lists for the expected arrays */
#define U16(x) (uint8_t)(x), (uint8_t)((x) >> 8)
#define U32(x) U16((x) & 0xffff), U16(((x) >> 16) & 0xffff)
#define U64(x) U32((uint64_t)(x) & 0xffffffffu), U32((uint64_t)(x) >> 32)
#define F64_0_5 0, 0, 0, 0, 0, 0, 0xe0, 0x3f
#define F64_1_0 0, 0, 0, 0, 0, 0, 0xf0, 0x3f
#define F64_1_5 0, 0, 0, 0, 0, 0, 0xf8, 0x3f
#define F64_2_0 0, 0, 0, 0, 0, 0, 0x00, 0x40
#define Z2 0, 0
#define Z4 0, 0, 0, 0
#define Z6 0, 0, 0, 0, 0, 0

static void expect_bytes(const struct bw *w, uint64_t off, const uint8_t *exp, size_t n)
{
	assert_int_equal(w->err, 0);
	assert_true(off + n <= w->len);
	for (size_t i = 0; i < n; i++)
		if (w->buf[off + i] != exp[i])
			fail_msg("byte 0x%zx: got 0x%02x, expected 0x%02x", (size_t)off + i,
				 w->buf[off + i], exp[i]);
}

static void test_file_header(void **st)
{
	const uint64_t sec[4] = { 0x70, 0x30, 0x38, 0xa0 };
	const uint8_t exp[] = { 'H', 'P', 'C', 'T', 'O', 'O', 'L', 'K', 'I', 'T', 'p', 'r',
				'o', 'f', 4, 0, U64(0x70), U64(0x30), U64(0x38), U64(0xa0) };
	struct bw w;

	bw_init_mem(&w);
	write_file_header(&w, "prof", 0, sec, 2);
	assert_int_equal(w.len, sizeof(exp));
	expect_bytes(&w, 0, exp, sizeof(exp));
	bw_free(&w);
}

static void test_general_properties(void **st)
{
	/* at 0x90, as in meta.db: pTitle = 0xa0, pDescription = 0xa2 */
	const uint8_t exp[] = { U64(0xa0), U64(0xa2), 't', 0, 'd', 'd', 0 };
	struct bw w;

	bw_init_mem(&w);
	bw_zero(&w, 0x90);
	assert_int_equal(write_general_properties_section(&w, "t", "dd"), sizeof(exp));
	expect_bytes(&w, 0x90, exp, sizeof(exp));
	bw_free(&w);
}

static void test_identifier_names(void **st)
{
	const uint8_t exp[] = {
		U64(0x10), 8, 0, 0, 0, 0, 0, 0, 0,
		U64(0x50), U64(0x58), U64(0x5d), U64(0x62), U64(0x69), U64(0x73), U64(0x7e),
		U64(0x88),
		'S', 'U', 'M', 'M', 'A', 'R', 'Y', 0, 'N', 'O', 'D', 'E', 0, 'R', 'A', 'N', 'K', 0,
		'T', 'H', 'R', 'E', 'A', 'D', 0, 'G', 'P', 'U', 'D', 'E', 'V', 'I', 'C', 'E', 0,
		'G', 'P', 'U', 'C', 'O', 'N', 'T', 'E', 'X', 'T', 0,
		'G', 'P', 'U', 'S', 'T', 'R', 'E', 'A', 'M', 0, 'C', 'O', 'R', 'E', 0,
	};
	struct bw w;

	bw_init_mem(&w);
	assert_int_equal(write_identifier_names_section(&w), sizeof(exp));
	expect_bytes(&w, 0, exp, sizeof(exp));
	bw_free(&w);
}

static void test_performance_metrics(void **st)
{
	/* header 0x1b -> 0x20, {PS}[4] @0x20, {MD} @0x60, {PSI}[4] @0x80,
	 * {SS}[4] @0xc0, strings @0x120: point 0x120, function 0x126,
	 * lex_aware 0x12f, execution 0x139, "CPUTIME (sec)" 0x143, "$$" 0x151 */
	const uint8_t exp[] = {
		U64(0x60), U32(1), 0x20, 0x10, 0x18, 0, U64(0x20), U16(4), 0x10, 0, Z4,
		U64(0x120), 1, 255, Z6,			/* point: type 1 */
		U64(0x126), 3, 0, Z6,			/* function: transitive, bit 0 */
		U64(0x12f), 0, 255, Z6,			/* lex_aware: custom */
		U64(0x139), 2, 255, Z6,			/* execution */
		U64(0x143), U64(0x80), U64(0xc0), U16(4), U16(4), Z4,
		U64(0x20), U16(0), Z6, U64(0x30), U16(1), Z6,
		U64(0x40), U16(2), Z6, U64(0x50), U16(3), Z6,
		U64(0x20), U64(0x151), 0, 0, U16(0), Z4,
		U64(0x30), U64(0x151), 0, 0, U16(1), Z4,
		U64(0x40), U64(0x151), 0, 0, U16(2), Z4,
		U64(0x50), U64(0x151), 0, 0, U16(3), Z4,
		'p', 'o', 'i', 'n', 't', 0, 'f', 'u', 'n', 'c', 't', 'i', 'o', 'n', 0,
		'l', 'e', 'x', '_', 'a', 'w', 'a', 'r', 'e', 0,
		'e', 'x', 'e', 'c', 'u', 't', 'i', 'o', 'n', 0,
		'C', 'P', 'U', 'T', 'I', 'M', 'E', ' ', '(', 's', 'e', 'c', ')', 0, '$', '$', 0,
	};
	struct bw w;

	bw_init_mem(&w);
	assert_int_equal(write_performance_metrics_section(&w, "CPUTIME (sec)"), sizeof(exp));
	assert_int_equal(sizeof(exp), 0x154);
	expect_bytes(&w, 0, exp, sizeof(exp));
	bw_free(&w);
}

/* entry "main thread" (ctx 1) -> [call] main (ctx 2) -> [lexical] x.c:7 (ctx 3),
 * plus an unsymbolized instruction /bin/x@0x99 called from the line (ctx 4) */
static void tiny_tree(struct hpc_cct *t)
{
	uint32_t e, f, l;
	int32_t m, fn, file;

	hpc_cct_init(t);
	e = hpc_cct_entry(t, HPC_EP_MAIN);		/* "main thread" @0 */
	m = hpc_cct_module(t, "/bin/x");		/* @12 */
	fn = hpc_cct_func(t, "main", m, 0x40, -1, 0);	/* "main" @19 */
	file = hpc_cct_file(t, "x.c");			/* @24 */
	assert_int_equal(e, 0);
	assert_int_equal(m, 0);
	assert_int_equal(fn, 0);
	assert_int_equal(file, 0);
	f = hpc_cct_child(t, e, HPC_FUNC, HPC_REL_CALL, fn, 0, 0);
	l = hpc_cct_child(t, f, HPC_LINE, HPC_REL_LEXICAL, file, 7, 0);
	assert_int_equal(hpc_cct_child(t, l, HPC_INSN, HPC_REL_CALL, m, 0, 0x99), 3);
	/* the same identity again is the same node */
	assert_int_equal(hpc_cct_child(t, e, HPC_FUNC, HPC_REL_CALL, fn, 0, 0), f);
	assert_int_equal(t->strtab_len, 28);
}

static void test_functions_section(void **st)
{
	const uint8_t exp[] = {
		U64(0x10), U32(1), U16(0x28), 0, 0,
		U64(0x1000 + 19), U64(0x4000), U64(0x40), U64(0), U32(0), U32(0),
	};
	struct hpc_cct t;
	struct bw w;

	tiny_tree(&t);
	bw_init_mem(&w);
	assert_int_equal(write_functions_section(&w, &t, 0x1000, 0x4000, 0x3000), sizeof(exp));
	expect_bytes(&w, 0, exp, sizeof(exp));
	bw_free(&w);
	hpc_cct_free(&t);
}

static void test_context_flex_packing(void **st)
{
	/* one {Ctx} of each kind: flags, relation, lexicalType, nFlexWords,
	 * propagation (bit 0 = lexical), then the flex words */
	const uint8_t func[] = { U64(0x30), U64(0x58), U32(2), 1, 1, 0, 1, U16(0), Z6,
				 U64(0x2000) };
	const uint8_t line[] = { U64(0x30), U64(0x88), U32(3), 2, 0, 2, 2, U16(1), Z6,
				 U64(0x3000), U32(7), U32(0) };
	const uint8_t insn[] = { U64(0), U64(0), U32(4), 4, 1, 3, 2, U16(0), Z6,
				 U64(0x4000), U64(0x99) };
	struct hpc_cct t;
	struct bw w;

	tiny_tree(&t);
	bw_init_mem(&w);
	write_context(&w, &t, 1, 0, 2, 0x58, 0x30, 0x2000, 0x3000, 0x4000);
	write_context(&w, &t, 2, 1, 3, 0x88, 0x30, 0x2000, 0x3000, 0x4000);
	write_context(&w, &t, 3, 2, 4, 0x1234, 0, 0x2000, 0x3000, 0x4000);
	assert_int_equal(w.len, sizeof(func) + sizeof(line) + sizeof(insn));
	expect_bytes(&w, 0, func, sizeof(func));
	expect_bytes(&w, sizeof(func), line, sizeof(line));
	expect_bytes(&w, sizeof(func) + sizeof(line), insn, sizeof(insn));
	assert_int_equal(sizeof(t.nodes[0]), 12);
	assert_int_equal(hpc_ctx_size(&t.nodes[1]), 0x28);
	assert_int_equal(hpc_ctx_size(&t.nodes[2]), 0x30);
	assert_int_equal(hpc_ctx_size(&t.nodes[3]), 0x30);
	bw_free(&w);
	hpc_cct_free(&t);
}

static void test_context_tree_section(void **st)
{
	/* ctxIds in post order: the instruction 1, the line 2, main 3, the
	 * entry 4; header @0, {Entry} @0x10, then each children array when
	 * its parent is finished: the line's @0x30 (0x30), main's @0x60
	 * (0x30), the entry's @0x90 (0x28) */
	const uint8_t exp[] = {
		U64(0x10), U16(1), 0x20, 0, Z4,
		U64(0x28), U64(0x90), U32(4), U16(1), U16(0), U64(0x1000),
		U64(0), U64(0), U32(1), 4, 1, 3, 2, U16(0), Z6, U64(0x4000), U64(0x99),
		U64(0x30), U64(0x30), U32(2), 2, 0, 2, 2, U16(1), Z6, U64(0x3000), U32(7), U32(0),
		U64(0x30), U64(0x60), U32(3), 1, 1, 0, 1, U16(0), Z6, U64(0x2000),
	};
	/* children << 1 | lexical, by ctxId */
	const uint32_t shape_exp[5] = { 0, 0, 1 << 1 | 1, 1 << 1, 1 << 1 };
	uint32_t shape[5];
	struct hpc_cct t;
	struct bw w;

	tiny_tree(&t);
	bw_init_mem(&w);
	assert_int_equal(write_context_tree_section(&w, &t, shape, 0x1000, 0x2000, 0x3000,
						    0x4000),
			 sizeof(exp));
	expect_bytes(&w, 0, exp, sizeof(exp));
	assert_memory_equal(shape, shape_exp, sizeof(shape));
	assert_int_equal(t.nodes[0].ctx, 4);
	assert_int_equal(t.nodes[3].ctx, 1);
	bw_free(&w);
	hpc_cct_free(&t);
}

static void test_identifier_tuple(void **st)
{
	const struct hpc_thread_id id = { .node = 1, .host_id = 0x1234abcd, .rank = 2,
					  .thread = 1, .pid = 300, .tid = 301, .comm = "x" };
	const uint8_t exp[] = {
		U16(3), Z6,
		1, 0, U16(1), U32(1), U64(0x1234abcd),	/* NODE 1, host id */
		2, 0, U16(1), U32(2), U64(300),		/* RANK 2, pid */
		3, 0, U16(1), U32(1), U64(301),		/* THREAD 1, tid */
	};
	const uint8_t exp_norank[] = {
		U16(2), Z6,
		1, 0, U16(1), U32(1), U64(0x1234abcd),
		3, 0, U16(1), U32(1), U64(301),
	};
	struct hpc_thread_id norank = id;
	struct bw w;

	bw_init_mem(&w);
	write_identifier_tuple(&w, &id);
	assert_int_equal(w.len, sizeof(exp));
	expect_bytes(&w, 0, exp, sizeof(exp));
	bw_free(&w);
	/* rank -1: no RANK element, as hpcrun's tuples of non-MPI runs */
	norank.rank = -1;
	bw_init_mem(&w);
	write_identifier_tuple(&w, &norank);
	assert_int_equal(w.len, sizeof(exp_norank));
	expect_bytes(&w, 0, exp_norank, sizeof(exp_norank));
	bw_free(&w);
}

/* The bytes of @fd from 0 to @n (cmocka fails if fewer). */
static uint8_t *file_bytes(int fd, size_t n)
{
	uint8_t *b = calloc(1, n + 1);

	assert_non_null(b);
	assert_int_equal(pread(fd, b, n + 1, 0), n);
	return b;
}

static int temp_file(void)
{
	char path[] = "/tmp/bpfprof-hpc-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

static void test_profile_major_block(void **st)
{
	/* ctx 0: execution 3 samples; ctx 5: one sample at the leaf; 0.5 s
	 * each; streamed context by context through 8-byte buffers */
	const struct hpc_value v[] = {
		{ .ctx = 0, .thread = 0, .execution = 3 },
		{ .ctx = 5, .thread = 0, .point = 1, .function = 1, .execution = 1 },
	};
	const uint8_t exp[] = {
		U16(3), F64_1_5,
		U16(0), F64_0_5, U16(1), F64_0_5, U16(2), F64_0_5, U16(3), F64_0_5,
		0, 0,					/* pad to 4: 50 -> 52 */
		U32(0), U64(0), U32(5), U64(1),
	};
	const uint8_t hdr_exp[32] = { U64(5), U64(0), U32(2), Z4, U64(52) };
	struct hpc_pblock b;
	uint8_t hdr[32], *got;
	int fd = temp_file();

	assert_int_equal(hpc_nr_values(&v[0]) + hpc_nr_values(&v[1]), 5);
	assert_int_equal(pblock_begin(&b, fd, 0, 5, 8), 0);
	write_profile_major_sparse_value_block(&b, &v[0], 0.5);
	write_profile_major_sparse_value_block(&b, &v[1], 0.5);
	assert_int_equal(pblock_end(&b, hdr), 0);
	assert_int_equal(pblock_end_offset(0, 5, 2), sizeof(exp));
	got = file_bytes(fd, sizeof(exp));
	assert_memory_equal(got, exp, sizeof(exp));
	assert_memory_equal(hdr, hdr_exp, 32);
	free(got);
	close(fd);
}

static void test_empty_profile_block(void **st)
{
	const uint8_t hdr_exp[32] = { U64(0), U64(6), U32(0), Z4, U64(8) };
	struct hpc_pblock b;
	uint8_t hdr[32];
	int fd = temp_file();

	assert_int_equal(pblock_begin(&b, fd, 6, 0, 4096), 0);
	assert_int_equal(pblock_end(&b, hdr), 0);
	assert_memory_equal(hdr, hdr_exp, 32);
	assert_int_equal(pblock_end_offset(6, 0, 0), 8);	/* only the padding to 4 */
	/* a block given fewer values than announced is an error */
	assert_int_equal(pblock_begin(&b, fd, 0, 2, 4096), 0);
	assert_int_equal(pblock_end(&b, hdr), -EIO);
	close(fd);
}

static void test_context_major_block(void **st)
{
	/* one context: thread 0 (profile 1) leaf sample + 2 inclusive,
	 * thread 2 (profile 3) 4 inclusive; 0.5 s per sample */
	const struct hpc_value v[] = {
		{ .ctx = 7, .thread = 0, .point = 1, .function = 1, .execution = 2 },
		{ .ctx = 7, .thread = 2, .execution = 4 },
	};
	const uint8_t exp[] = {
		Z4,					/* 2 written, align to 4 */
		U32(1), F64_0_5,			/* point */
		U32(1), F64_0_5,			/* function */
		U32(1), F64_0_5,			/* lex_aware */
		U32(1), F64_1_0, U32(3), F64_2_0,	/* execution */
		U16(0), U64(0), U16(1), U64(1), U16(2), U64(2), U16(3), U64(3),
	};
	const uint8_t hdr_exp[32] = { U64(5), U64(4), U16(4), Z6, U64(64) };
	uint8_t hdr[32];
	struct bw w;

	bw_init_mem(&w);
	bw_zero(&w, 2);
	write_context_major_sparse_value_block(&w, v, 2, 0.5, hdr);
	assert_int_equal(w.len, sizeof(exp));
	expect_bytes(&w, 0, exp, sizeof(exp));
	assert_memory_equal(hdr, hdr_exp, 32);
	bw_free(&w);
}

static void test_trace_line(void **st)
{
	/* a gap of 8000 ns > 4 periods of 1000 ns: a ctxId 0 element one
	 * period after the last sample before it */
	const struct hpc_trace_elem s[] = { { 1000, 5, 0 }, { 2000, 6, 0 }, { 10000, 5, 0 } };
	const uint8_t exp[] = {
		U64(1000), U32(5), U64(2000), U32(6), U64(3000), U32(0), U64(10000), U32(5),
	};
	uint64_t tmin = UINT64_MAX, tmax = 0;
	struct bw w;

	bw_init_mem(&w);
	assert_int_equal(write_trace_line(&w, s, 3, 4000, 1000, &tmin, &tmax), 4);
	assert_int_equal(w.len, sizeof(exp));
	expect_bytes(&w, 0, exp, sizeof(exp));
	assert_int_equal(tmin, 1000);
	assert_int_equal(tmax, 10000);
	bw_free(&w);
}

static void test_trace_header(void **st)
{
	const uint8_t exp[] = { U32(1), U32(0), U64(0x58), U64(0x100) };
	struct bw w;

	bw_init_mem(&w);
	write_context_trace_header(&w, 1, 0x58, 0x100);
	assert_int_equal(w.len, sizeof(exp));
	expect_bytes(&w, 0, exp, sizeof(exp));
	bw_free(&w);
}

static void test_writer_file_mode(void **st)
{
	char path[] = "/tmp/bpfprof-bw-XXXXXX";
	const uint8_t exp[] = { 0xaa, 0xbb, Z6, U32(0x01020304), Z4, 0x11 };
	uint8_t got[sizeof(exp) + 1], b[4];
	int fd = mkstemp(path);
	struct bw w;

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(bw_init_fd(&w, fd), 0);
	bw_u8(&w, 0xaa);
	bw_u8(&w, 0);
	bw_align(&w, 8);		/* 6 zero bytes */
	bw_u32(&w, 0);
	bw_seek(&w, 16);		/* a hole reads as zeros */
	bw_u8(&w, 0x11);
	bw_patch(&w, 1, "\xbb", 1);	/* patches reach pending bytes too */
	put_u32(b, 0x01020304);
	bw_patch(&w, 8, b, 4);
	assert_int_equal(w.off, 17);
	assert_int_equal(bw_finish(&w), 0);
	assert_int_equal(pread(fd, got, sizeof(got), 0), sizeof(exp));
	assert_memory_equal(got, exp, sizeof(exp));
	bw_seek(&w, 4);			/* backwards is an error */
	assert_int_equal(w.err, -EINVAL);
	bw_free(&w);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_header),
		cmocka_unit_test(test_general_properties),
		cmocka_unit_test(test_identifier_names),
		cmocka_unit_test(test_performance_metrics),
		cmocka_unit_test(test_functions_section),
		cmocka_unit_test(test_context_flex_packing),
		cmocka_unit_test(test_context_tree_section),
		cmocka_unit_test(test_identifier_tuple),
		cmocka_unit_test(test_profile_major_block),
		cmocka_unit_test(test_empty_profile_block),
		cmocka_unit_test(test_context_major_block),
		cmocka_unit_test(test_trace_line),
		cmocka_unit_test(test_trace_header),
		cmocka_unit_test(test_writer_file_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
