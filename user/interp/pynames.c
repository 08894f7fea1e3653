// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/pynames.c - the names of Python frames (see interp.h): a code
 * object's qualified name, file name, first line and location table,
 * read out of the live process with process_vm_readv() the first time a
 * stack shows it, cached per (pid, code object) for the rest of the run,
 * and the frames of the stacks named from that cache (the line from the
 * location table, pyline.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "interp_impl.h"
#include "pyline.h"

/* Longest name (characters) and location table (bytes) read. */
#define PY_MAX_STR 1024
#define PY_MAX_LINETABLE 65536
/* Bytes of a code object's header read: every field the layouts name. */
#define PY_CODE_HEADER 256

/* Copy @len bytes at @addr of @pid; 0 or -EFAULT (short or failed). */
static int read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static uint64_t get_u64(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* The text of the str object at @addr, malloc'd; NULL if unreadable or
 * not a compact str. */
static char *read_str(uint32_t pid, const struct py_layout *l, uint64_t addr)
{
	uint8_t hdr[128], data[PY_MAX_STR * 4];
	uint64_t length;
	uint32_t state;
	unsigned kind;
	size_t off, n;

	if (!addr || l->compact_size > sizeof(hdr) || read_mem(pid, addr, hdr, l->compact_size))
		return NULL;
	memcpy(&state, hdr + l->str_state, sizeof(state));
	length = get_u64(hdr, l->str_length);
	kind = state >> 2 & 7;
	if (!(state >> 5 & 1))		/* not compact: a legacy string */
		return NULL;
	off = (state >> 6 & 1) ? l->ascii_size : l->compact_size;
	if (length > PY_MAX_STR)
		length = PY_MAX_STR;
	n = (size_t)length * kind;
	if (kind != 1 && kind != 2 && kind != 4)
		return NULL;
	if (n && read_mem(pid, addr + off, data, n))
		return NULL;
	return py_str_utf8(data, n, kind, (size_t)length);
}

/* The bytes object at @addr (co_linetable), malloc'd in *out. */
static int read_bytes(uint32_t pid, const struct py_layout *l, uint64_t addr, uint8_t **out,
		      size_t *len)
{
	uint64_t size;

	*out = NULL;
	*len = 0;
	if (!addr || read_mem(pid, addr + l->bytes_size, &size, sizeof(size)))
		return -EFAULT;
	if (size > PY_MAX_LINETABLE)
		size = PY_MAX_LINETABLE;
	*out = malloc(size ? size : 1);
	if (!*out)
		return -ENOMEM;
	if (size && read_mem(pid, addr + l->bytes_data, *out, size)) {
		free(*out);
		*out = NULL;
		return -EFAULT;
	}
	*len = size;
	return 0;
}

/* Read the code object of @c (pid, addr set) from its process @p. */
static int read_code(const struct py_proc *p, struct py_code *c)
{
	const struct py_layout *l = p->layout;
	uint8_t hdr[PY_CODE_HEADER];
	int32_t first;

	if (read_mem(p->pid, c->addr, hdr, sizeof(hdr)))
		return -EFAULT;
	if (get_u64(hdr, l->object_type) != p->code_type)
		return -EINVAL;		/* not a code object (any more) */
	c->qualname = read_str(p->pid, l, get_u64(hdr, l->code_qualname));
	if (!c->qualname)
		c->qualname = read_str(p->pid, l, get_u64(hdr, l->code_name));
	c->filename = read_str(p->pid, l, get_u64(hdr, l->code_filename));
	memcpy(&first, hdr + l->code_firstlineno, sizeof(first));
	c->firstlineno = first;
	read_bytes(p->pid, l, get_u64(hdr, l->code_linetable), &c->linetable, &c->linetable_len);
	return c->qualname ? 0 : -EFAULT;
}

static size_t code_slot(uint32_t pid, uint64_t addr, size_t cap)
{
	uint64_t h = (addr >> 3) * 0x9e3779b97f4a7c15ull ^ (uint64_t)pid * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* The cache entry of (@pid, @addr): found, or the free slot for it. */
static struct py_code *code_find(struct py_code *codes, size_t cap, uint32_t pid, uint64_t addr)
{
	size_t i = code_slot(pid, addr, cap);

	while (codes[i].pid && (codes[i].pid != pid || codes[i].addr != addr))
		i = (i + 1) & (cap - 1);
	return &codes[i];
}

/* Room for one more entry (the table stays at most half full). */
static int code_reserve(struct interp *it)
{
	size_t cap = it->cap_codes ? 2 * it->cap_codes : 256;
	struct py_code *n;

	if (2 * (it->nr_codes + 1) <= it->cap_codes)
		return 0;
	n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < it->cap_codes; i++)
		if (it->codes[i].pid)
			*code_find(n, cap, it->codes[i].pid, it->codes[i].addr) = it->codes[i];
	free(it->codes);
	it->codes = n;
	it->cap_codes = cap;
	return 0;
}

/* Learn the code object @addr of @pid if it is new. */
static void learn_code(struct interp *it, const struct py_proc *p, uint64_t addr)
{
	struct py_code *c;

	it->stats.frames_seen++;
	if (it->cap_codes && code_find(it->codes, it->cap_codes, p->pid, addr)->pid) {
		it->stats.frames_cached++;
		return;
	}
	if (code_reserve(it))
		return;
	c = code_find(it->codes, it->cap_codes, p->pid, addr);
	c->pid = p->pid;
	c->addr = addr;
	it->nr_codes++;
	c->ok = read_code(p, c) == 0;
	if (c->ok)
		it->stats.codes++;
	else
		it->stats.code_failures++;
}

void interp_learn_stack(struct interp *it, uint32_t pid, const uint64_t *ips, size_t nr)
{
	const struct py_proc *p = NULL;

	for (size_t i = 0; it && i < nr; i++) {
		if (!interp_is_frame(ips[i]))
			continue;
		if (!p && !(p = interp_proc(it, pid)))
			return;
		learn_code(it, p, PY_FRAME_CODE(ips[i]));
	}
}

int interp_symbolize(struct interp *it, uint32_t pid, uint64_t ip, struct bpfprof_symbol *sym)
{
	uint64_t code = PY_FRAME_CODE(ip);
	const struct py_code *c = NULL;

	if (!it || !sym)
		return -EINVAL;
	memset(sym, 0, sizeof(*sym));
	if (it->cap_codes)
		c = code_find(it->codes, it->cap_codes, pid, code);
	if (!c || !c->pid || !c->ok) {
		it->stats.unnamed++;
		sym->module = "[python]";
		sym->module_offset = ip | 1;
		return 0;
	}
	sym->module = c->filename ? c->filename : "[python]";
	sym->module_offset = ip | 1;
	sym->function = c->qualname;
	sym->function_start = PY_FRAME_ADDR(code, 0);
	sym->file = c->filename;
	sym->line = (uint32_t)py_line_of(c->linetable, c->linetable_len, c->firstlineno,
					 (uint32_t)PY_FRAME_INSTR(ip));
	return 0;
}

void interp_free_codes(struct interp *it)
{
	for (size_t i = 0; i < it->cap_codes; i++) {
		free(it->codes[i].qualname);
		free(it->codes[i].filename);
		free(it->codes[i].linetable);
	}
	free(it->codes);
	it->codes = NULL;
	it->cap_codes = it->nr_codes = 0;
}
