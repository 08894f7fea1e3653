// SPDX-License-Identifier: BSD-2-Clause
/*
 * perfmap.c - owns one process's perf map (see perfmap.h): which file, the
 * incremental reader, the line parser, and the entries, kept as a sorted
 * array of ranges that do not overlap.  A batch of new lines is resolved
 * among itself by a sweep (the last line covering an address wins), then
 * laid over the older ranges (new ones win) in one linear merge, so a
 * growing file costs O(n + k log k) per read of k new lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpfprof/plugin.h>

#include "perfmap.h"
#include "targets/procfs.h"

#define NAME_BLOCK 65536		/* bytes per block of names */
#define READ_BUF (2 * PERFMAP_MAX_LINE)

/* A block of names; names never move, so pointers to them stay valid. */
struct name_block {
	struct name_block *next;
	size_t used, size;
	char data[];
};

/* A line taken, waiting to be laid over the entries. */
struct pending {
	uint64_t start, end;
	const char *name;
	uint64_t seq;			/* line order: higher wins */
};

struct perfmap {
	uint32_t pid;			/* 0: a fixed path (perfmap_new_path) */
	char *path;			/* NULL: not decided yet */
	const char *name;		/* among the names: handed out as a module */
	bool fixed;			/* path given, no owner check */
	bool exited;
	bool uids_known;
	uint32_t ruid, euid;		/* the process's, for the owner check */
	bool have_file;			/* dev/ino of the file read */
	dev_t dev;
	ino_t ino;
	uint64_t off;			/* bytes of the file parsed */
	bool skipping;			/* inside an over-long line */
	bool tried;
	bool absent;			/* the last attempt found nothing to read */
	uint64_t last_try_ns;
	struct perfmap_entry *ents;	/* sorted, not overlapping */
	size_t nr, cap;
	struct pending *pend;
	size_t nr_pend, cap_pend;
	uint64_t seq;
	struct name_block *names;
	char *buf;			/* READ_BUF bytes, allocated on first read */
	struct perfmap_stats stats;
};

/* ---- names and arrays ----------------------------------------------------- */

static const char *keep_name(struct perfmap *pm, const char *s, size_t len)
{
	struct name_block *b = pm->names;
	char *p;

	if (!b || b->size - b->used < len + 1) {
		size_t size = len + 1 > NAME_BLOCK ? len + 1 : NAME_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = pm->names;
		pm->names = b;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

/* Make room for @n more elements of @size bytes in *@arr (*@cap). */
static int grow(void **arr, size_t *cap, size_t nr, size_t n, size_t size)
{
	size_t want = *cap ? *cap : 64;
	void *p;

	if (nr + n <= *cap)
		return 0;
	while (want < nr + n)
		want *= 2;
	p = realloc(*arr, want * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = want;
	return 0;
}

/* "/tmp/perf-PID.map", kept among the names; NULL if out of memory. */
static const char *map_name(struct perfmap *pm, uint32_t pid)
{
	char s[64];
	int n = snprintf(s, sizeof(s), "/tmp/perf-%" PRIu32 ".map", pid);

	return keep_name(pm, s, (size_t)n);
}

struct perfmap *perfmap_new(uint32_t pid)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->pid = pid;
	pm->name = map_name(pm, pid);
	if (!pm->name) {
		perfmap_free(pm);
		return NULL;
	}
	return pm;
}

struct perfmap *perfmap_new_path(const char *path, const char *name)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->fixed = true;
	pm->path = strdup(path);
	pm->name = keep_name(pm, name ? name : path, strlen(name ? name : path));
	if (!pm->path || !pm->name) {
		perfmap_free(pm);
		return NULL;
	}
	return pm;
}

static void drop_entries(struct perfmap *pm)
{
	pm->nr = 0;
	pm->nr_pend = 0;
	pm->off = 0;
	pm->skipping = false;
}

void perfmap_free(struct perfmap *pm)
{
	struct name_block *b, *next;

	if (!pm)
		return;
	for (b = pm->names; b; b = next) {
		next = b->next;
		free(b);
	}
	free(pm->ents);
	free(pm->pend);
	free(pm->buf);
	free(pm->path);
	free(pm);
}

void perfmap_reset(struct perfmap *pm)
{
	if (!pm)
		return;
	drop_entries(pm);
	pm->have_file = false;
	pm->tried = false;
	pm->exited = false;
	if (!pm->fixed) {
		const char *name = map_name(pm, pm->pid);

		if (name)	/* else keep the old one */
			pm->name = name;
		free(pm->path);
		pm->path = NULL;
		pm->uids_known = false;
	}
}

void perfmap_process_exited(struct perfmap *pm)
{
	if (pm)
		pm->exited = true;
}

/* ---- parsing --------------------------------------------------------------- */

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A hex field at *@p (optional "0x"), then at least one blank. */
static int hex_field(const char **p, const char *end, uint64_t *val)
{
	const char *s = *p;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (procfs_parse_hex(&s, end, val) <= 0 || s == end || !blank(*s))
		return -EINVAL;
	while (s < end && blank(*s))
		s++;
	*p = s;
	return 0;
}

/* One line [s, end) without its newline: a pending entry, or -EINVAL. */
static int parse_line(struct perfmap *pm, const char *s, const char *end)
{
	uint64_t start, size;
	const char *name;
	struct pending *e;

	if (memchr(s, '\0', (size_t)(end - s)))
		return -EINVAL;
	if (hex_field(&s, end, &start) || hex_field(&s, end, &size))
		return -EINVAL;
	while (end > s && (blank(end[-1]) || end[-1] == '\r'))
		end--;
	if (end == s || size == 0 || start + size < start)
		return -EINVAL;
	if (grow((void **)&pm->pend, &pm->cap_pend, pm->nr_pend, 1, sizeof(*pm->pend)))
		return -ENOMEM;
	name = keep_name(pm, s, (size_t)(end - s));
	if (!name)
		return -ENOMEM;
	e = &pm->pend[pm->nr_pend++];
	e->start = start;
	e->end = start + size;
	e->name = name;
	e->seq = pm->seq++;
	return 0;
}

static bool empty_line(const char *s, const char *end)
{
	while (s < end && (blank(*s) || *s == '\r'))
		s++;
	return s == end;
}

/* Take the complete lines of [text, text + len) into pm->pend. */
static long parse_lines(struct perfmap *pm, const char *text, size_t len, bool final)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		int err;

		if (!nl && !final)
			break;
		if (pm->skipping) {
			pm->skipping = false;	/* the rest of an over-long line */
		} else if ((size_t)(eol - p) + 1 > PERFMAP_MAX_LINE) {
			pm->stats.malformed++;
		} else if (!empty_line(p, eol)) {
			err = parse_line(pm, p, eol);
			if (err == -ENOMEM)
				return err;
			if (err)
				pm->stats.malformed++;
			else
				pm->stats.lines++;
		}
		p = nl ? nl + 1 : end;
	}
	pm->stats.bytes += (uint64_t)(p - text);
	return p - text;
}

/* ---- laying new lines over the entries -------------------------------------- */

static int cmp_start(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A max-heap of pending entries by seq. */
static void heap_push(struct pending **h, size_t *n, struct pending *e)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2]->seq < e->seq) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = e;
}

static void heap_pop(struct pending **h, size_t *n)
{
	struct pending *last = h[--(*n)];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1]->seq > h[c]->seq)
			c++;
		if (h[c]->seq <= last->seq)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
}

/* Append [start, end) of @e to @out (*@nr), merging with the previous piece. */
static void emit(struct perfmap_entry *out, size_t *nr, uint64_t start, uint64_t end,
		 uint64_t sym_start, const char *name)
{
	struct perfmap_entry *prev = *nr ? &out[*nr - 1] : NULL;

	if (start >= end)
		return;
	if (prev && prev->end == start && prev->name == name && prev->sym_start == sym_start) {
		prev->end = end;
		return;
	}
	out[(*nr)++] = (struct perfmap_entry){ start, end, sym_start, name };
}

/*
 * The pending lines as ranges that do not overlap, the last line winning
 * (a sweep over the starts with a heap of the lines covering the
 * position).  k lines give at most 2k - 1 ranges.
 */
static int sweep(struct perfmap *pm, struct perfmap_entry **res, size_t *nres)
{
	size_t k = pm->nr_pend, i = 0, nh = 0, n = 0;
	struct pending **heap = malloc(k * sizeof(*heap));
	struct perfmap_entry *out = malloc(2 * k * sizeof(*out));
	uint64_t pos = 0;

	if (!heap || !out) {
		free(heap);
		free(out);
		return -ENOMEM;
	}
	qsort(pm->pend, k, sizeof(*pm->pend), cmp_start);
	while (i < k || nh) {
		uint64_t next;

		if (!nh && pos < pm->pend[i].start)
			pos = pm->pend[i].start;
		while (i < k && pm->pend[i].start <= pos)
			heap_push(heap, &nh, &pm->pend[i++]);
		while (nh && heap[0]->end <= pos)
			heap_pop(heap, &nh);
		if (!nh)
			continue;
		next = heap[0]->end;
		if (i < k && pm->pend[i].start < next)
			next = pm->pend[i].start;
		emit(out, &n, pos, next, heap[0]->start, heap[0]->name);
		pos = next;
	}
	free(heap);
	*res = out;
	*nres = n;
	return 0;
}

/* @a (old, @na) with @b (new, @nb) laid over it into @out: b wins. */
static size_t overlay(const struct perfmap_entry *a, size_t na, const struct perfmap_entry *b,
		      size_t nb, struct perfmap_entry *out)
{
	size_t i = 0, j = 0, n = 0;
	struct perfmap_entry cur = { 0 };

	if (na)
		cur = a[0];
	while (i < na || j < nb) {
		if (i == na) {
			emit(out, &n, b[j].start, b[j].end, b[j].sym_start, b[j].name);
			j++;
		} else if (j == nb || cur.end <= b[j].start) {
			emit(out, &n, cur.start, cur.end, cur.sym_start, cur.name);
			if (++i < na)
				cur = a[i];
		} else if (b[j].end <= cur.start) {
			emit(out, &n, b[j].start, b[j].end, b[j].sym_start, b[j].name);
			j++;
		} else {
			/* overlap: the part of cur before b, then b or the rest */
			emit(out, &n, cur.start, b[j].start, cur.sym_start, cur.name);
			if (cur.end > b[j].end) {
				emit(out, &n, b[j].start, b[j].end, b[j].sym_start, b[j].name);
				cur.start = b[j].end;
				j++;
			} else if (++i < na) {
				cur = a[i];
			}
		}
	}
	return n;
}

/* The pending lines were laid: empty them, not keeping a big read's room. */
static void pend_done(struct perfmap *pm)
{
	pm->nr_pend = 0;
	if (pm->cap_pend > 4096) {
		free(pm->pend);
		pm->pend = NULL;
		pm->cap_pend = 0;
	}
}

static int apply_pending(struct perfmap *pm)
{
	struct perfmap_entry *b, *out;
	size_t nb, n;

	if (!pm->nr_pend)
		return 0;
	if (sweep(pm, &b, &nb))
		return -ENOMEM;
	if (!pm->nr || (nb && b[0].start >= pm->ents[pm->nr - 1].end)) {
		/* all above the old ones (a JIT filling its code space): append */
		int err = grow((void **)&pm->ents, &pm->cap, pm->nr, nb, sizeof(*pm->ents));

		if (!err) {
			memcpy(pm->ents + pm->nr, b, nb * sizeof(*b));
			pm->nr += nb;
			pend_done(pm);
		}
		free(b);
		return err;
	}
	/* each piece of b can split one of a in two */
	out = malloc((2 * pm->nr + 2 * nb + 1) * sizeof(*out));
	if (!out) {
		free(b);
		return -ENOMEM;
	}
	n = overlay(pm->ents, pm->nr, b, nb, out);
	free(b);
	free(pm->ents);
	pm->ents = out;
	pm->nr = n;
	pm->cap = n;
	pend_done(pm);
	return 0;
}

long perfmap_parse(struct perfmap *pm, const char *text, size_t len, bool final)
{
	long used;

	if (!pm || (!text && len))
		return -EINVAL;
	used = parse_lines(pm, text, len, final);
	if (used < 0)
		return used;
	return apply_pending(pm) ? -ENOMEM : used;
}

/* ---- which file --------------------------------------------------------------- */

/* The last number of the status line starting with @key ("NSpid:"). */
static int status_field(const char *text, const char *key, uint32_t *vals, int max)
{
	const char *p = strstr(text, key);
	int n = 0;

	if (!p)
		return 0;
	p += strlen(key);
	while (n < max) {
		char *e;
		unsigned long v = strtoul(p, &e, 10);

		if (e == p || (*e && *e != '\t' && *e != ' ' && *e != '\n'))
			break;
		vals[n++] = (uint32_t)v;
		if (*e != '\t' && *e != ' ')
			break;
		p = e;
	}
	return n;
}

/* 1 if @pid is in our mount namespace, 0 if not, -1 if that cannot be
 * told (a zombie has no namespaces any more). */
static int same_mount_ns(uint32_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/ns/mnt", pid);
	if (stat(path, &a) || stat("/proc/self/ns/mnt", &b))
		return -1;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Decide the path (and name) from /proc/PID while the process lives. */
static int decide_path(struct perfmap *pm)
{
	uint32_t nspid[8], uids[4], ns;
	char status[64], *text = NULL, *path = NULL;
	size_t len;
	int n, same;

	snprintf(status, sizeof(status), "/proc/%" PRIu32 "/status", pm->pid);
	if (pm->exited || procfs_read_file(status, &text, &len)) {
		pm->path = strdup(pm->name);	/* gone: our /tmp, if anything */
		return pm->path ? 0 : -ENOMEM;
	}
	n = status_field(text, "\nNSpid:", nspid, 8);
	ns = n > 0 ? nspid[n - 1] : pm->pid;
	if (status_field(text, "\nUid:", uids, 4) >= 2) {
		pm->uids_known = true;
		pm->ruid = uids[0];
		pm->euid = uids[1];
	}
	free(text);
	if (ns != pm->pid) {
		const char *name = map_name(pm, ns);

		if (!name)
			return -ENOMEM;
		pm->name = name;
	}
	/* not known to share our /tmp: only its root leads to its own */
	same = same_mount_ns(pm->pid);
	if ((same == 0 || (same < 0 && ns != pm->pid)) &&
	    asprintf(&path, "/proc/%" PRIu32 "/root%s", pm->pid, pm->name) < 0)
		return -ENOMEM;
	pm->path = path ? path : strdup(pm->name);
	return pm->path ? 0 : -ENOMEM;
}

/* Whether the opened file may be used (perf's ownership rule). */
static bool owner_ok(const struct perfmap *pm, const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return false;
	if (pm->fixed || st->st_uid == 0)
		return true;
	if (pm->uids_known)
		return st->st_uid == pm->ruid || st->st_uid == pm->euid;
	return st->st_uid == geteuid();
}

/* Open the map file, checked; the fd or a negative errno. */
static int open_map(struct perfmap *pm, struct stat *st)
{
	int fd, err;

	if (!pm->path && (err = decide_path(pm)))
		return err;
	if (pm->exited && !strncmp(pm->path, "/proc/", 6))
		return -ESRCH;	/* its root is gone with it */
	fd = open(pm->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, st) || !owner_ok(pm, st)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Read from pm->off to the end of @fd into the pending lines. */
static int read_rest(struct perfmap *pm, int fd)
{
	size_t have = 0;

	if (!pm->buf && !(pm->buf = malloc(READ_BUF)))
		return -ENOMEM;
	for (;;) {
		ssize_t got = pread(fd, pm->buf + have, READ_BUF - have, (off_t)(pm->off + have));
		long used;

		if (got < 0)
			return errno == EINTR ? 0 : -errno;
		have += (size_t)got;
		used = parse_lines(pm, pm->buf, have, got == 0 && pm->exited);
		if (used < 0)
			return (int)used;
		if (used == 0 && have == READ_BUF) {
			/* a line longer than the buffer: skip it */
			if (!pm->skipping)
				pm->stats.malformed++;
			pm->skipping = true;
			used = (long)have;
		}
		pm->off += (uint64_t)used;
		have -= (size_t)used;
		memmove(pm->buf, pm->buf + used, have);
		if (got == 0)
			return 0;
	}
}

int perfmap_update(struct perfmap *pm, uint64_t now_ns)
{
	struct stat st;
	int fd, err;

	if (!pm)
		return -EINVAL;
	pm->tried = true;
	pm->last_try_ns = now_ns;
	fd = open_map(pm, &st);
	if (fd < 0)
		return fd;
	if (pm->have_file && (pm->dev != st.st_dev || pm->ino != st.st_ino)) {
		if (pm->exited) {	/* the pid's next owner wrote it */
			close(fd);
			return -ESTALE;
		}
		drop_entries(pm);
		pm->stats.resets++;
	} else if ((uint64_t)st.st_size < pm->off) {
		drop_entries(pm);
		pm->stats.resets++;
	}
	pm->have_file = true;
	pm->dev = st.st_dev;
	pm->ino = st.st_ino;
	pm->stats.reads++;
	err = read_rest(pm, fd);
	close(fd);
	if (apply_pending(pm))
		return -ENOMEM;
	return err;
}

/* ---- lookups ------------------------------------------------------------------- */

const struct perfmap_entry *perfmap_find(const struct perfmap *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm ? pm->nr : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < pm->ents[mid].start)
			hi = mid;
		else if (addr >= pm->ents[mid].end)
			lo = mid + 1;
		else
			return &pm->ents[mid];
	}
	return NULL;
}

const struct perfmap_entry *perfmap_lookup(struct perfmap *pm, uint64_t addr, uint64_t now_ns)
{
	const struct perfmap_entry *e = perfmap_find(pm, addr);

	if (!pm)
		return NULL;
	pm->stats.lookups++;
	if (!e && (!pm->tried || now_ns - pm->last_try_ns >=
				  (pm->absent ? PERFMAP_ABSENT_REREAD_NS : PERFMAP_REREAD_NS))) {
		pm->absent = perfmap_update(pm, now_ns) < 0;
		e = perfmap_find(pm, addr);
	}
	pm->stats.misses += !e;
	return e;
}

const char *perfmap_name(const struct perfmap *pm)
{
	return pm->name;
}

const char *perfmap_path(const struct perfmap *pm)
{
	return pm->path;
}

size_t perfmap_entries(const struct perfmap *pm)
{
	return pm->nr;
}

const struct perfmap_stats *perfmap_stats(const struct perfmap *pm)
{
	return &pm->stats;
}

bool perfmap_covers_mapping(const char *path, uint32_t prot)
{
	if (!(prot & BPFPROF_PROT_EXEC))
		return false;
	if (!path || !path[0] || !strcmp(path, "//anon"))
		return true;
	return !strncmp(path, "[anon:", 6) || !strncmp(path, "/memfd:", 7);
}
