// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi_anon.c - the unwind rows of anonymous executable memory: the
 * frame-pointer row of JIT code, and the exact rows of CPython's perf
 * trampolines, found by their machine code in the mapping's bytes (see
 * cfi_anon.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "unwind/cfi_anon.h"

/*
 * CPython's trampoline (Python/asm_trampoline.S, x86-64, 3.12 and 3.13):
 *   0: sub $8,%rsp    4: call *%rcx    6: add $8,%rsp    10: ret
 * preceded by endbr64 in builds with -fcf-protection.
 */
static const uint8_t tramp_code[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				      0x48, 0x83, 0xc4, 0x08, 0xc3 };
static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
#define TRAMP_AFTER_SUB 4	/* offsets in tramp_code */
#define TRAMP_RET 10

struct cfi_row cfi_anon_fp_row(void)
{
	/* code without CFI may use rbx as it likes: lost */
	return (struct cfi_row){ .pc = 0, .kind = CFI_ROW_KIND_RBX(CFI_KIND_RBP, CFI_RBX_LOST),
				 .cfa = 2, .rbp = -2 };
}

/* Bytes of the trampoline copy at @p (endbr64 included), 0 if none. */
static size_t tramp_at(const uint8_t *p, const uint8_t *end)
{
	size_t pre = 0;

	if ((size_t)(end - p) >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		pre = sizeof(endbr64);
	if ((size_t)(end - p) < pre + sizeof(tramp_code) ||
	    memcmp(p + pre, tramp_code, sizeof(tramp_code)))
		return 0;
	return pre + sizeof(tramp_code);
}

struct rows {
	struct cfi_row *v;
	uint32_t nr, cap;
};

/* Append a row of @kind and @cfa at @pc, merged with an equal one before. */
static int push(struct rows *r, uint64_t pc, uint8_t kind, int16_t cfa)
{
	struct cfi_row *last = r->nr ? &r->v[r->nr - 1] : NULL;

	if (last && last->kind == kind && last->cfa == cfa)
		return 0;
	if (r->nr == r->cap) {
		uint32_t cap = r->cap ? 2 * r->cap : 256;
		struct cfi_row *n = realloc(r->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->v = n;
		r->cap = cap;
	}
	r->v[r->nr++] = (struct cfi_row){ .pc = (uint32_t)pc, .kind = kind, .cfa = cfa };
	return 0;
}

/* The rows of @size bytes at @code: each trampoline copy, gaps between. */
static int scan(const uint8_t *code, uint64_t size, struct rows *r)
{
	const uint8_t *end = code + size;
	uint64_t pc = 0;
	int err = 0;

	while (pc < size && !err) {
		size_t n = tramp_at(code + pc, end);
		uint64_t body = pc + n - sizeof(tramp_code);

		if (!n) {
			err = push(r, pc++, CFI_KIND_STOP_NO_ROW, 0);
			continue;
		}
		err = push(r, pc, CFI_KIND_RSP, 1);
		if (!err)
			err = push(r, body + TRAMP_AFTER_SUB, CFI_KIND_RSP, 2);
		if (!err)
			err = push(r, body + TRAMP_RET, CFI_KIND_RSP, 1);
		pc += n;
	}
	return err ? err : push(r, size, CFI_KIND_STOP_NO_ROW, 0);
}

int cfi_anon_table_mem(const uint8_t *code, uint64_t size, struct cfi_table **out)
{
	struct rows r = { 0 };
	struct cfi_table *t;
	int err;

	*out = NULL;
	if (!tramp_at(code, code + size) || size > UINT32_MAX)
		return 0;
	err = scan(code, size, &r);
	t = err ? NULL : calloc(1, sizeof(*t));
	if (!t) {
		free(r.v);
		return -ENOMEM;
	}
	t->rows = r.v;
	t->nr = r.nr;
	for (uint32_t i = 0; i < r.nr; i++)
		t->stats.kinds[CFI_ROW_KIND(&r.v[i])]++;
	t->stats.rows = r.nr;
	t->stats.bytes = (uint64_t)r.nr * sizeof(struct cfi_row);
	*out = t;
	return 0;
}

static int read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static uint64_t hash_bytes(const uint8_t *p, uint64_t n)
{
	uint64_t h = 1469598103934665603ull ^ n;	/* FNV-1a, seeded with the size */

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

int cfi_anon_read(uint32_t pid, uint64_t start, uint64_t end, uint8_t **code, uint64_t *hash)
{
	uint8_t head[sizeof(endbr64) + sizeof(tramp_code)];
	uint64_t size = end - start;
	int err;

	*code = NULL;
	*hash = 0;
	if (end <= start || size < sizeof(head) || read_mem(pid, start, head, sizeof(head)) ||
	    !tramp_at(head, head + sizeof(head)))
		return 0;
	if (size > CFI_ANON_MAX_BYTES)
		return -EFBIG;
	*code = malloc(size);
	if (!*code)
		return -ENOMEM;
	err = read_mem(pid, start, *code, size);
	if (err) {
		free(*code);
		*code = NULL;
		return err;
	}
	*hash = hash_bytes(*code, size);
	return 0;
}
