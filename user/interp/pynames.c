// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/pynames.c - the names of Python frames (see interp.h): a code
 * object's qualified name, file name, first line and location table,
 * read out of the live process with process_vm_readv() the first time a
 * stack shows it, cached per (pid, code object) for the rest of the run,
 * and the frames of the stacks named from that cache (the line from the
 * location table, pyline.c).  A header read is checked against what the
 * BPF program saw at that address ("py_codes_seen"), so a code object
 * freed and replaced before the collector read it does not lend its
 * successor's names to the stacks that showed it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <bpf/bpf.h>

#include "bpfprof.h"
#include "interp_impl.h"
#include "pyline.h"

/* Longest name (characters) and location table (bytes) read. */
#define PY_MAX_STR 1024
#define PY_MAX_LINETABLE 65536
/* Bytes of a code object's header read: every field the layouts name. */
#define PY_CODE_HEADER 256
/* Code object headers read with one system call (a stack's Python frames). */
#define PY_HEADER_BATCH 64

/*
 * Where a code object's names are read from: the BPF program's copy @copy
 * of that object (struct py_code_event) when there is one, else the
 * process @pid.
 */
struct py_mem {
	uint32_t pid;
	const struct py_code_event *copy;	/* NULL: the process only */
};

/* The bytes [@addr, @addr + @len) in a region of @copy, else NULL. */
static const uint8_t *copy_find(const struct py_code_event *copy, uint64_t addr, size_t len)
{
	const uint8_t *data[BPFPROF_PY_SNAP_REGIONS] = {
		copy->header, copy->str[0], copy->str[1], copy->str[2], copy->lines,
	};
	const size_t size[BPFPROF_PY_SNAP_REGIONS] = {
		sizeof(copy->header), sizeof(copy->str[0]), sizeof(copy->str[1]),
		sizeof(copy->str[2]), sizeof(copy->lines),
	};

	for (size_t i = 0; i < BPFPROF_PY_SNAP_REGIONS; i++) {
		const struct py_snap_region *r = &copy->region[i];
		size_t have = r->len < size[i] ? r->len : size[i];

		if (r->addr && addr >= r->addr && addr - r->addr <= have &&
		    len <= have - (addr - r->addr))
			return data[i] + (addr - r->addr);
	}
	return NULL;
}

/* Copy @len bytes at @addr of @m's process, from its copy if it has one
 * (never the process then: its memory there may hold another object by
 * now); 0 or -EFAULT (short or failed). */
static int read_mem(const struct py_mem *m, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	const uint8_t *copied;

	if (m->copy) {
		if (!(copied = copy_find(m->copy, addr, len)))
			return -EFAULT;
		memcpy(buf, copied, len);
		return 0;
	}
	return process_vm_readv((pid_t)m->pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0
											  : -EFAULT;
}

static uint64_t get_u64(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* Bytes read past an object's header in the same call, on the chance
 * that its inline data (a short name, a small line table) is all there. */
#define PY_READ_AHEAD 128
#define PY_STR_HEADER_MAX 128	/* largest str header (compact_size) read */
#define PY_BYTES_HEADER_MAX 64	/* largest bytes header (to ob_sval) read */

/*
 * Read the @head bytes at @addr of @pid into @buf (of @size bytes) and,
 * where the memory is there, the rest of @buf too: the number of bytes
 * read (>= @head), or 0 if not even @head could be.
 */
static size_t read_ahead(const struct py_mem *m, uint64_t addr, uint8_t *buf, size_t head,
			 size_t size)
{
	if (size > head && read_mem(m, addr, buf, size) == 0)
		return size;
	return read_mem(m, addr, buf, head) == 0 ? head : 0;
}

/* The text of the str object at @addr, malloc'd; NULL if unreadable or
 * not a compact str. */
static char *read_str(const struct py_mem *m, const struct py_layout *l, uint64_t addr)
{
	uint8_t hdr[PY_STR_HEADER_MAX + PY_READ_AHEAD], data[PY_MAX_STR * 4];
	uint64_t length;
	uint32_t state;
	unsigned kind;
	size_t off, n, got;

	if (!addr || l->compact_size > PY_STR_HEADER_MAX ||
	    !(got = read_ahead(m, addr, hdr, l->compact_size, l->compact_size + PY_READ_AHEAD)))
		return NULL;
	memcpy(&state, hdr + l->str_state, sizeof(state));
	length = get_u64(hdr, l->str_length);
	kind = state >> PY_STR_KIND_SHIFT & 7;
	if (!(state >> PY_STR_COMPACT_BIT & 1))		/* not compact: a legacy string */
		return NULL;
	off = (state >> PY_STR_ASCII_BIT & 1) ? l->ascii_size : l->compact_size;
	if (length > PY_MAX_STR)
		length = PY_MAX_STR;
	n = (size_t)length * kind;
	if (kind != 1 && kind != 2 && kind != 4)
		return NULL;
	if (off + n <= got)
		memcpy(data, hdr + off, n);
	else if (n && read_mem(m, addr + off, data, n))
		return NULL;
	return py_str_utf8(data, n, kind, (size_t)length);
}

/* The bytes object at @addr (co_linetable), malloc'd in *out. */
static int read_bytes(const struct py_mem *m, const struct py_layout *l, uint64_t addr,
		      uint8_t **out, size_t *len)
{
	uint8_t head[PY_BYTES_HEADER_MAX + PY_READ_AHEAD];
	uint64_t size;
	size_t got;

	*out = NULL;
	*len = 0;
	if (!addr || l->bytes_data > PY_BYTES_HEADER_MAX ||
	    l->bytes_size + sizeof(size) > l->bytes_data ||
	    !(got = read_ahead(m, addr, head, l->bytes_data, l->bytes_data + PY_READ_AHEAD)))
		return -EFAULT;
	size = get_u64(head, l->bytes_size);
	if (size > PY_MAX_LINETABLE)
		size = PY_MAX_LINETABLE;
	*out = malloc(size ? size : 1);
	if (!*out)
		return -ENOMEM;
	if (l->bytes_data + size <= got) {
		memcpy(*out, head + l->bytes_data, size);
	} else if (size && read_mem(m, addr + l->bytes_data, *out, size)) {
		free(*out);
		*out = NULL;
		return -EFAULT;
	}
	*len = size;
	return 0;
}

static int32_t get_i32(const uint8_t *b, size_t off)
{
	int32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/*
 * The identity in *@id of the code object whose header @hdr of @p holds.
 * 0, or -EINVAL if it is not a code object.
 */
static int parse_header(const struct py_proc *p, const uint8_t *hdr, struct py_code_id *id)
{
	const struct py_layout *l = p->layout;

	if (get_u64(hdr, l->object_type) != p->code_type)
		return -EINVAL;
	id->qualname = get_u64(hdr, l->code_qualname);
	id->filename = get_u64(hdr, l->code_filename);
	id->linetable = get_u64(hdr, l->code_linetable);
	id->firstlineno = get_i32(hdr, l->code_firstlineno);
	return 0;
}

/*
 * The headers of the code objects at @addrs[0..@n) of @pid into @hdrs,
 * with one process_vm_readv() for all (the kernel stops at the first
 * that fails: those after it are read one by one).  ok[i] says whether
 * header i could be read.
 */
static void read_headers(struct interp *it, uint32_t pid, const uint64_t *addrs, size_t n,
			 uint8_t (*hdrs)[PY_CODE_HEADER], bool *ok)
{
	struct iovec local[PY_HEADER_BATCH], remote[PY_HEADER_BATCH];
	ssize_t got;
	size_t i, whole;

	if (n == 0 || n > PY_HEADER_BATCH)
		return;
	it->stats.header_reads++;
	for (i = 0; i < n; i++) {
		local[i] = (struct iovec){ .iov_base = hdrs[i], .iov_len = PY_CODE_HEADER };
		remote[i] = (struct iovec){ .iov_base = (void *)(uintptr_t)addrs[i],
					    .iov_len = PY_CODE_HEADER };
	}
	got = process_vm_readv((pid_t)pid, local, n, remote, n, 0);
	whole = got > 0 ? (size_t)got / PY_CODE_HEADER : 0;
	for (i = 0; i < n; i++)
		ok[i] = i < whole || (i > whole && read_mem(&(struct py_mem){ .pid = pid }, addrs[i],
							    hdrs[i], PY_CODE_HEADER) == 0);
}

/* Read the names of the code object of @c (pid, addr set) from @m, its
 * header being @hdr. */
static int read_code(const struct py_proc *p, const struct py_mem *m, const uint8_t *hdr,
		     struct py_code *c)
{
	const struct py_layout *l = p->layout;
	int err = parse_header(p, hdr, &c->id);

	if (err)
		return err;
	c->qualname = read_str(m, l, c->id.qualname);
	if (!c->qualname)
		c->qualname = read_str(m, l, get_u64(hdr, l->code_name));
	c->filename = read_str(m, l, c->id.filename);
	c->firstlineno = c->id.firstlineno;
	c->line_format = l->line_format;
	read_bytes(m, l, c->id.linetable, &c->linetable, &c->linetable_len);
	return c->qualname ? 0 : -EFAULT;
}

static size_t slot_hash(uint32_t pid, uint64_t addr, size_t cap)
{
	uint64_t h = (addr >> 3) * 0x9e3779b97f4a7c15ull ^ (uint64_t)pid * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* The slot of (@pid, @addr): found, or the free one for it. */
static struct py_code_slot *slot_find(struct py_code_slot *slots, size_t cap, uint32_t pid,
				      uint64_t addr)
{
	size_t i = slot_hash(pid, addr, cap);

	while (slots[i].pid && (slots[i].pid != pid || slots[i].addr != addr))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

/* Room for one more slot (the table stays at most half full) and one
 * more code entry. */
static int code_reserve(struct interp *it)
{
	if (it->nr_codes == it->cap_codes) {
		size_t cap = it->cap_codes ? 2 * it->cap_codes : 256;
		struct py_code *n = realloc(it->codes, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		it->codes = n;
		it->cap_codes = cap;
	}
	if (2 * (it->nr_slots + 1) > it->cap_slots) {
		size_t cap = it->cap_slots ? 2 * it->cap_slots : 512;
		struct py_code_slot *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < it->cap_slots; i++)
			if (it->slots[i].pid)
				*slot_find(n, cap, it->slots[i].pid, it->slots[i].addr) = it->slots[i];
		free(it->slots);
		it->slots = n;
		it->cap_slots = cap;
	}
	return 0;
}

static bool same_code(const struct py_code_id *a, const struct py_code_id *b)
{
	return a->qualname == b->qualname && a->filename == b->filename &&
	       a->linetable == b->linetable && a->firstlineno == b->firstlineno;
}

/* The slot of the code object @addr of @p if one was read there, else NULL. */
static struct py_code_slot *known_slot(struct interp *it, uint32_t pid, uint64_t addr)
{
	struct py_code_slot *s = it->cap_slots ? slot_find(it->slots, it->cap_slots, pid, addr)
					       : NULL;

	return s && s->pid ? s : NULL;
}

/* Whether the object at @addr of @pid was read in this batch already. */
static bool checked_now(struct interp *it, uint32_t pid, uint64_t addr)
{
	struct py_code_slot *s = known_slot(it, pid, addr);

	return s && s->checked == it->batch;
}

/* @s's object is among those read along with the next stacks' headers
 * (add_recent()). */
static void mark_recent(struct interp *it, const struct py_code_slot *s)
{
	for (size_t i = 0; i < PY_RECENT_CODES; i++)
		if (it->recent[i].pid == s->pid && it->recent[i].addr == s->addr)
			return;
	it->recent[it->recent_next].pid = s->pid;
	it->recent[it->recent_next].addr = s->addr;
	it->recent_next = (it->recent_next + 1) % PY_RECENT_CODES;
}

/* The object at @s's address was read out of the process in this batch:
 * it counts as read for the batch's other stacks, and is among those read
 * along next time.  Not for a copy the BPF program sent
 * (interp_code_copy()): that is the object as a sample found it, which may
 * be gone by the time a later record of the same batch shows the address
 * with another object, whose copy could not be made. */
static void mark_read(struct interp *it, struct py_code_slot *s)
{
	s->checked = it->batch;
	mark_recent(it, s);
}

/* Whether header @hdr, read at @s's address of @p, is still the object of
 * @s's entry. */
static bool still_entry(const struct interp *it, const struct py_proc *p,
			const struct py_code_slot *s, const uint8_t *hdr)
{
	const struct py_code *c = &it->codes[s->index];
	struct py_code_id now;

	return c->ok && parse_header(p, hdr, &now) == 0 && same_code(&now, &c->id);
}

/* Add to @addrs[@k..) (at most PY_HEADER_BATCH in all) the recent code
 * objects of @pid not read in this batch and not in @addrs yet; returns
 * the new count. */
static size_t add_recent(struct interp *it, uint32_t pid, uint64_t *addrs, size_t k)
{
	for (size_t i = 0; i < PY_RECENT_CODES && k < PY_HEADER_BATCH; i++) {
		uint64_t addr = it->recent[i].addr;
		struct py_code_slot *s;
		size_t j;

		if (it->recent[i].pid != pid || !(s = known_slot(it, pid, addr)) ||
		    s->checked == it->batch)
			continue;
		for (j = 0; j < k && addrs[j] != addr; j++)
			;
		if (j == k)
			addrs[k++] = addr;
	}
	return k;
}

/* A header read along (add_recent()): if the object at @addr is still
 * its entry's, it counts as read in this batch. */
static void confirm_recent(struct interp *it, const struct py_proc *p, uint64_t addr,
			   const uint8_t *hdr)
{
	struct py_code_slot *s = known_slot(it, p->pid, addr);

	if (s && still_entry(it, p, s, hdr))
		mark_read(it, s);
}

/* A new, empty entry for the code object at @addr of @pid (the last of
 * it->codes), with room for its slot; NULL on ENOMEM. */
static struct py_code *code_append(struct interp *it, uint32_t pid, uint64_t addr)
{
	struct py_code *c;

	if (code_reserve(it))
		return NULL;
	c = &it->codes[it->nr_codes++];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->addr = addr;
	return c;
}

/*
 * A new entry for the code object at @addr of @p, whose header is @hdr
 * (NULL: unreadable), named from @m; the address's slot names it from now
 * on.  Its index, or -1 on ENOMEM.
 */
static int64_t add_entry(struct interp *it, const struct py_proc *p, uint64_t addr,
			 const uint8_t *hdr, const struct py_mem *m)
{
	struct py_code *c = code_append(it, p->pid, addr);
	struct py_code_slot *s;

	if (!c)
		return -1;
	s = slot_find(it->slots, it->cap_slots, p->pid, addr);
	if (!s->pid)
		it->nr_slots++;
	s->pid = p->pid;
	s->addr = addr;
	s->checked = 0;
	if (hdr && !m->copy)
		mark_read(it, s);
	else if (hdr)
		mark_recent(it, s);
	s->index = (uint32_t)(it->nr_codes - 1);
	c->ok = hdr && read_code(p, m, hdr, c) == 0;
	if (c->ok)
		it->stats.codes++;
	else
		it->stats.code_failures++;
	return s->index;
}

/*
 * The entry of the code object @addr of @p as it is now, its header read
 * into @hdr (NULL: it could not be read, or it was read in this batch
 * already): the newest one read at that address if the object there is
 * still that one (or was not read now), else a new entry.  Its index, or
 * -1 on ENOMEM.
 */
static int64_t learn_code(struct interp *it, const struct py_proc *p, uint64_t addr,
			  const uint8_t *hdr)
{
	struct py_code_slot *s = known_slot(it, p->pid, addr);

	it->stats.frames_seen++;
	if (s && (!hdr || still_entry(it, p, s, hdr))) {
		if (hdr)
			mark_read(it, s);
		it->stats.frames_cached++;
		return s->index;
	}
	return add_entry(it, p, addr, hdr, &(struct py_mem){ .pid = p->pid });
}

/* Whether header @hdr, read at @addr of @p, is an object not read there
 * before: only then is it compared with what the BPF program saw (a
 * bpf() call), the rest being the objects named already. */
static bool new_at_address(struct interp *it, const struct py_proc *p, uint64_t addr,
			   const uint8_t *hdr)
{
	struct py_code_slot *s = known_slot(it, p->pid, addr);

	return !s || !still_entry(it, p, s, hdr);
}

/*
 * What the BPF program saw at code object address @addr of @p when a new
 * stack showed it (its "py_codes_seen" entry: the pointers to the names)
 * into *@seen.  0, or -ENOENT when there is nothing to compare with.
 */
static int seen_names(const struct interp *it, const struct py_proc *p, uint64_t addr,
		      struct py_code_names *seen)
{
	struct py_code_key key = { .code = addr, .tgid = p->pid };
	uint16_t off = p->layout->bpf.code_names;

	if (it->codes_fd < 0 || off == PY_NO_OFFSET || off + sizeof(*seen) > PY_CODE_HEADER ||
	    bpf_map_lookup_elem(it->codes_fd, &key, seen))
		return -ENOENT;
	return 0;
}

/* The pointer at code-object offset @field among the names @seen holds
 * (read at offset @off), 0 if it is not among them. */
static uint64_t seen_field(const struct py_code_names *seen, uint16_t off, uint16_t field)
{
	if (field < off || field - off + sizeof(uint64_t) > sizeof(*seen))
		return 0;
	return get_u64((const uint8_t *)seen, field - off);
}

/* Whether entry @c is the object whose names @seen holds. */
static bool entry_seen(const struct py_proc *p, const struct py_code *c,
		       const struct py_code_names *seen)
{
	const struct py_layout *l = p->layout;
	uint16_t off = l->bpf.code_names;

	return c->ok && c->id.qualname == seen_field(seen, off, l->code_qualname) &&
	       c->id.filename == seen_field(seen, off, l->code_filename) &&
	       c->id.linetable == seen_field(seen, off, l->code_linetable);
}

/*
 * The entry of the code object a stack showed at @addr of @p, read after
 * another object took the address (what the BPF program saw there, @seen,
 * is not what the read found): the newest entry read there if it is the
 * object seen, else a new entry without a name.  So a code
 * object freed and replaced before the collector read it does not lend its
 * successor's names to the stacks that showed it.  Its index, or -1 on
 * ENOMEM.
 */
static int64_t learn_replaced(struct interp *it, const struct py_proc *p, uint64_t addr,
			      const struct py_code_names *seen)
{
	struct py_code_slot *s = known_slot(it, p->pid, addr);

	it->stats.frames_seen++;
	if (s && entry_seen(p, &it->codes[s->index], seen)) {
		it->stats.frames_cached++;
		return s->index;
	}
	if (!code_append(it, p->pid, addr))
		return -1;
	it->stats.code_failures++;
	return (int64_t)it->nr_codes - 1;
}

/* Name the Python frames among @ips[0..@n) of @p (at most PY_HEADER_BATCH:
 * the headers not read in this batch yet are read together, with those
 * of the code objects read last; with @known, only those never read). */
static void learn_frames(struct interp *it, const struct py_proc *p, uint64_t *ips, size_t n,
			 bool known)
{
	uint8_t hdrs[PY_HEADER_BATCH][PY_CODE_HEADER];
	uint64_t addrs[PY_HEADER_BATCH];
	int16_t slot[PY_HEADER_BATCH];	/* frame's header in hdrs[], -1: none read */
	bool ok[PY_HEADER_BATCH], replaced[PY_HEADER_BATCH];
	struct py_code_names seen[PY_HEADER_BATCH];	/* what the BPF program saw */
	size_t i, k = 0, f = 0, wanted;
	int64_t index;

	for (i = 0; i < n; i++) {
		uint64_t addr;

		if (!interp_is_frame(ips[i]))
			continue;
		addr = PY_FRAME_CODE(ips[i]);
		if (known && known_slot(it, p->pid, addr)) {
			it->stats.frames_unread++;
			slot[f++] = -1;
		} else if (checked_now(it, p->pid, addr)) {
			slot[f++] = -1;
		} else {
			slot[f++] = (int16_t)k;
			addrs[k++] = addr;
		}
	}
	wanted = k;
	if (k)
		k = add_recent(it, p->pid, addrs, k);
	read_headers(it, p->pid, addrs, k, hdrs, ok);
	for (i = 0; i < wanted; i++) {
		replaced[i] = ok[i] && new_at_address(it, p, addrs[i], hdrs[i]) &&
			      seen_names(it, p, addrs[i], &seen[i]) == 0 &&
			      memcmp(hdrs[i] + p->layout->bpf.code_names, &seen[i],
				     sizeof(seen[i])) != 0;
		it->stats.replaced += replaced[i];
	}
	for (i = wanted; i < k; i++)
		if (ok[i])
			confirm_recent(it, p, addrs[i], hdrs[i]);
	for (i = 0, f = 0; i < n; i++) {
		int16_t h;

		if (!interp_is_frame(ips[i]))
			continue;
		h = slot[f++];
		if (h >= 0 && replaced[h])
			index = learn_replaced(it, p, PY_FRAME_CODE(ips[i]), &seen[h]);
		else
			index = learn_code(it, p, PY_FRAME_CODE(ips[i]),
					   h >= 0 && ok[h] ? hdrs[h] : NULL);
		/* the frame names the entry, whatever lives at the address later */
		ips[i] = index < 0 ? PY_FRAME_ADDR(0, 0)
				   : PY_FRAME_ADDR(((uint64_t)index + 1) << 3, PY_FRAME_INSTR(ips[i]));
	}
}

void interp_code_copy(struct interp *it, const struct py_code_event *e, size_t size)
{
	const struct py_proc *p;
	struct py_code_slot *s;
	int64_t index;

	if (!it || size < sizeof(*e) || !(p = interp_proc(it, e->head.tgid)))
		return;
	it->stats.copies++;
	if (e->region[0].addr != e->code || e->region[0].len != PY_CODE_HEADER)
		return;			/* no header: the stack's record reads it */
	s = known_slot(it, p->pid, e->code);
	if (s && still_entry(it, p, s, e->header)) {
		mark_recent(it, s);	/* named before: that entry stands */
		return;
	}
	index = add_entry(it, p, e->code, e->header, &(struct py_mem){ .pid = p->pid, .copy = e });
	if (index >= 0 && it->codes[index].ok)
		it->stats.copies_named++;
}

void interp_new_batch(struct interp *it)
{
	if (it)
		it->batch++;
}

void interp_learn_stack(struct interp *it, uint32_t pid, uint64_t *ips, size_t nr, bool known)
{
	const struct py_proc *p = NULL;
	size_t start = 0, end, frames;

	/* in slices of at most PY_HEADER_BATCH Python frames */
	while (it && start < nr) {
		for (end = start, frames = 0; end < nr; end++) {
			if (!interp_is_frame(ips[end]))
				continue;
			if (frames == PY_HEADER_BATCH)
				break;
			frames++;
		}
		if (frames && !p && !(p = interp_proc(it, pid)))
			return;
		if (frames)
			learn_frames(it, p, ips + start, end - start, known);
		start = end;
	}
}

/* The line of instruction @instr of code entry @c, by its table's format. */
static int line_of(const struct py_code *c, uint32_t instr)
{
	switch (c->line_format) {
	case PY_LINES_310:
		return py_line_of_310(c->linetable, c->linetable_len, c->firstlineno, instr);
	case PY_LINES_LNOTAB:
		return py_line_of_lnotab(c->linetable, c->linetable_len, c->firstlineno, instr);
	default:
		return py_line_of(c->linetable, c->linetable_len, c->firstlineno, instr);
	}
}

/* The line of frame @ip of code entry @c, through the line cache. */
static uint32_t frame_line(struct interp *it, const struct py_code *c, uint64_t ip)
{
	size_t slot = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 52) & (PY_LINE_CACHE - 1);

	if (it->lines[slot].ip != ip) {
		it->lines[slot].ip = ip;
		it->lines[slot].line = (uint32_t)line_of(c, (uint32_t)PY_FRAME_INSTR(ip));
	}
	return it->lines[slot].line;
}

int interp_symbolize(struct interp *it, uint32_t pid, uint64_t ip, struct bpfprof_symbol *sym)
{
	uint64_t id = PY_FRAME_CODE(ip) >> 3;
	const struct py_code *c = NULL;

	if (!it || !sym)
		return -EINVAL;
	memset(sym, 0, sizeof(*sym));
	if (id && id <= it->nr_codes && it->codes[id - 1].pid == pid)
		c = &it->codes[id - 1];
	if (!c || !c->ok) {
		it->stats.unnamed++;
		sym->module = "[python]";
		sym->module_offset = ip | 1;
		return 0;
	}
	sym->module = c->filename ? c->filename : "[python]";
	sym->module_offset = ip | 1;
	sym->function = c->qualname;
	sym->function_start = PY_FRAME_ADDR(PY_FRAME_CODE(ip), 0);
	sym->file = c->filename;
	sym->line = frame_line(it, c, ip);
	return 0;
}

void interp_free_codes(struct interp *it)
{
	for (size_t i = 0; i < it->nr_codes; i++) {
		free(it->codes[i].qualname);
		free(it->codes[i].filename);
		free(it->codes[i].linetable);
	}
	free(it->codes);
	free(it->slots);
	it->codes = NULL;
	it->slots = NULL;
	it->cap_codes = it->nr_codes = it->cap_slots = it->nr_slots = 0;
}
