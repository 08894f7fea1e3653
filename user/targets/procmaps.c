// SPDX-License-Identifier: BSD-2-Clause
/*
 * procmaps.c - the /proc/PID/maps parser, mapping lookup by address, and
 * the attachment of GNU build-ids to file mappings.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <uthash.h>

#include "procfs.h"
#include "procmaps.h"
#include "symbols/buildid.h"

/* Longest build-id we store; GNU build-ids are 20 bytes (SHA-1) usually. */
#define PROCMAPS_BUILD_ID_MAX 64

/*
 * Process-wide cache of build-ids by file identity: (dev, inode) from the
 * maps line plus the path, validated by the opened file's ctime and size,
 * so a file is parsed once however often maps are re-read.
 */
struct bid_key {
	uint32_t major, minor;
	uint64_t inode;
};

struct bid_entry {
	UT_hash_handle hh;
	struct bid_key key;
	struct bid_entry *next_same;	/* same key, other path */
	char *path;
	struct timespec ctime;
	off_t size;
	int len;			/* > 0 bytes, or negative errno (no build-id) */
	uint8_t id[PROCMAPS_BUILD_ID_MAX];
};

static struct bid_entry *bid_cache;
static pthread_mutex_t bid_lock = PTHREAD_MUTEX_INITIALIZER;

/* A hex number at [*p, end) ended by @stop, which is skipped; else -1. */
static int parse_hex(const char **p, const char *end, char stop, uint64_t *val)
{
	const char *s = *p;

	if (procfs_parse_hex(&s, end, val) < 0 || s >= end || *s != stop)
		return -1;
	*p = s + 1;	/* skip the stop character */
	return 0;
}

/* Decimal digits at [*p, end) until a space or the end of the line. */
static int parse_dec(const char **p, const char *end, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	for (; s < end && *s != ' '; s++, n++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (n == 0)
		return -1;
	*p = s;
	*val = v;
	return 0;
}

/*
 * Parse one line [s, end) (without its newline) into @m; the path is
 * returned as a range into the line.  Returns 0 or -1 if malformed.
 */
static int parse_line(const char *s, const char *end, struct bpfprof_mapping *m,
		      const char **path, size_t *path_len)
{
	uint64_t start, stop, off, maj, min, ino;

	if (parse_hex(&s, end, '-', &start) || parse_hex(&s, end, ' ', &stop))
		return -1;
	if (start >= stop || end - s < 5 || s[4] != ' ')
		return -1;
	if ((s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') ||
	    (s[2] != 'x' && s[2] != '-') || (s[3] != 'p' && s[3] != 's'))
		return -1;
	m->prot = (s[0] == 'r' ? BPFPROF_PROT_READ : 0) |
		  (s[1] == 'w' ? BPFPROF_PROT_WRITE : 0) |
		  (s[2] == 'x' ? BPFPROF_PROT_EXEC : 0);
	m->shared = s[3] == 's';
	s += 5;
	if (parse_hex(&s, end, ' ', &off) || parse_hex(&s, end, ':', &maj) ||
	    parse_hex(&s, end, ' ', &min) || parse_dec(&s, end, &ino))
		return -1;
	if (maj > UINT32_MAX || min > UINT32_MAX)
		return -1;
	/* The kernel pads with spaces before the path; none for anon lines. */
	while (s < end && *s == ' ')
		s++;
	m->start = start;
	m->end = stop;
	m->pgoff = off;
	m->dev_major = (uint32_t)maj;
	m->dev_minor = (uint32_t)min;
	m->inode = ino;
	m->build_id = NULL;
	m->build_id_size = 0;
	*path = s;
	*path_len = (size_t)(end - s);
	return 0;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct bpfprof_mapping *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

int procmaps_parse(const char *text, size_t len, struct procmaps *out)
{
	const char *p, *end;
	size_t lines = 0, n = 0, used = 0, i;
	struct bpfprof_mapping *maps = NULL;
	char *strings = NULL;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!text && len)
		return -EINVAL;
	if (!len)
		return 0;

	end = text + len;
	for (p = text; p < end; p++)
		if (*p == '\n')
			lines++;
	lines++;	/* a last line without newline */
	maps = calloc(lines, sizeof(*maps));
	/* every path fits into the text, plus one NUL per line */
	strings = malloc(len + lines);
	if (!maps || !strings) {
		free(maps);
		free(strings);
		return -ENOMEM;
	}

	for (p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *path;
		size_t plen;

		if (eol == p) {
			/* empty line */
		} else if (parse_line(p, eol, &maps[n], &path, &plen) == 0) {
			memcpy(strings + used, path, plen);
			strings[used + plen] = '\0';
			/* temporarily an offset; turned into a pointer below */
			maps[n].path = (const char *)(uintptr_t)used;
			used += plen + 1;
			n++;
		} else {
			out->nr_malformed++;
		}
		p = nl ? nl + 1 : end;
	}
	for (i = 0; i < n; i++)
		maps[i].path = strings + (uintptr_t)maps[i].path;
	/* qsort is not stable, but the order of identical ranges is immaterial */
	if (n > 1)
		qsort(maps, n, sizeof(*maps), cmp_mapping);
	out->maps = maps;
	out->nr = n;
	out->strings = strings;
	return 0;
}

int procmaps_read(uint32_t pid, struct procmaps *out)
{
	char path[64], *text = NULL;
	size_t len = 0;
	int err;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	err = procfs_read_file(path, &text, &len);
	if (err)
		return err;
	err = procmaps_parse(text, len, out);
	free(text);
	return err;
}

void procmaps_free(struct procmaps *m)
{
	if (!m)
		return;
	free(m->maps);
	free(m->strings);
	free(m->build_ids);
	memset(m, 0, sizeof(*m));
}

const struct bpfprof_mapping *procmaps_find(const struct bpfprof_mapping *maps, size_t nr,
					    uint64_t addr)
{
	size_t lo = 0, hi = nr;

	if (!maps)
		return NULL;
	/* first index whose start is > addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* among equal starts the last has the greatest end */
	if (addr < maps[lo - 1].end)
		return &maps[lo - 1];
	return NULL;
}

int procmaps_path_deleted(const char *path, size_t *len)
{
	size_t n = strlen(path), s = sizeof(PROCMAPS_DELETED_SUFFIX) - 1;
	int del = n >= s && memcmp(path + n - s, PROCMAPS_DELETED_SUFFIX, s) == 0;

	if (len)
		*len = del ? n - s : n;
	return del;
}

/* Open @path if it is the mapping's file (same inode when known). */
static int open_checked(const char *path, const struct bpfprof_mapping *map)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (map->inode && st.st_ino != map->inode)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int procmaps_open_file(uint32_t pid, const struct bpfprof_mapping *map)
{
	char buf[PATH_MAX + 64];
	size_t plen;
	int fd, del, err = -ENOENT;

	if (!map || !map->path || map->path[0] != '/')
		return -ENOENT;
	del = procmaps_path_deleted(map->path, &plen);
	if (pid) {
		snprintf(buf, sizeof(buf), "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64,
			 pid, map->start, map->end);
		fd = open(buf, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		err = -errno;
	}
	if (del)
		return err;
	if (pid && plen < PATH_MAX) {
		snprintf(buf, sizeof(buf), "/proc/%" PRIu32 "/root%s", pid, map->path);
		fd = open_checked(buf, map);
		if (fd >= 0)
			return fd;
		err = fd;
	}
	fd = open_checked(map->path, map);
	if (fd >= 0)
		return fd;
	/* keep the more telling error of the /proc routes, if any */
	return err == -ENOENT || !pid ? fd : err;
}

static struct bid_key bid_key_of(const struct bpfprof_mapping *map)
{
	struct bid_key key;

	memset(&key, 0, sizeof(key));
	key.major = map->dev_major;
	key.minor = map->dev_minor;
	key.inode = map->inode;
	return key;
}

/*
 * The cache's entry for @map's file (@entry, may be NULL: its device,
 * inode and path; NULL if none) and, when it was read at @st's size and
 * change time (*@hit), its build-id into @out: the length, or the cached
 * negative errno.  1 on a miss.
 */
static int cache_find(const struct bpfprof_mapping *map, const struct stat *st, uint8_t *out,
		      bool *hit, struct bid_entry **entry)
{
	struct bid_key key = bid_key_of(map);
	struct bid_entry *e;
	int n = 1;

	*hit = false;
	pthread_mutex_lock(&bid_lock);
	HASH_FIND(hh, bid_cache, &key, sizeof(key), e);
	for (; e; e = e->next_same)
		if (strcmp(e->path, map->path) == 0)
			break;
	if (e && e->size == st->st_size && e->ctime.tv_sec == st->st_ctim.tv_sec &&
	    e->ctime.tv_nsec == st->st_ctim.tv_nsec) {
		n = e->len;
		if (n > 0)
			memcpy(out, e->id, (size_t)n);
		*hit = true;
	}
	pthread_mutex_unlock(&bid_lock);
	if (entry)
		*entry = e;
	return n;
}

/*
 * Build-id of the file of @map from the cache without opening it, when
 * its path, looked up here, is still the mapping's file (device and inode)
 * with the size and change time the cache read it at: the length written
 * to @out (negative: the cached errno, no build-id), or 1 with *@hit
 * false.  Every process of a program maps the same few files: a stat() by
 * path costs a fraction of opening /proc/PID/map_files/... (the process's
 * look-up and access checks) and reading the notes again.  A file seen
 * through another root (a container) misses, and is opened as before.
 */
static int cached_build_id_by_path(const struct bpfprof_mapping *map, uint8_t *out, bool *hit)
{
	struct stat st;

	*hit = false;
	if (procmaps_path_deleted(map->path, NULL) || stat(map->path, &st) < 0 ||
	    st.st_ino != map->inode || major(st.st_dev) != map->dev_major ||
	    minor(st.st_dev) != map->dev_minor)
		return 1;
	return cache_find(map, &st, out, hit, NULL);
}

/*
 * Build-id of the file of @map opened as @fd, through the cache.  Returns
 * the length written to @out, or a negative errno.
 */
static int cached_build_id(const struct bpfprof_mapping *map, int fd, uint8_t *out)
{
	struct bid_key key;
	struct bid_entry *head, *e;
	struct stat st;
	bool hit;
	int n;

	if (fstat(fd, &st) < 0)
		return -errno;
	n = cache_find(map, &st, out, &hit, &e);
	if (hit)
		return n;
	key = bid_key_of(map);

	n = elf_build_id_fd(fd, out, PROCMAPS_BUILD_ID_MAX);

	pthread_mutex_lock(&bid_lock);
	if (!e) {
		HASH_FIND(hh, bid_cache, &key, sizeof(key), head);
		e = calloc(1, sizeof(*e));
		if (e)
			e->path = strdup(map->path);
		if (!e || !e->path) {
			free(e);	/* not cached; the result is still good */
			pthread_mutex_unlock(&bid_lock);
			return n;
		}
		e->key = key;
		if (head) {
			e->next_same = head->next_same;
			head->next_same = e;
		} else {
			HASH_ADD(hh, bid_cache, key, sizeof(key), e);
		}
	}
	e->size = st.st_size;
	e->ctime = st.st_ctim;
	e->len = n;
	if (n > 0)
		memcpy(e->id, out, (size_t)n);
	pthread_mutex_unlock(&bid_lock);
	return n;
}

void procmaps_build_id_cache_clear(void)
{
	struct bid_entry *e, *tmp;

	pthread_mutex_lock(&bid_lock);
	HASH_ITER(hh, bid_cache, e, tmp) {
		HASH_DEL(bid_cache, e);
		while (e) {
			struct bid_entry *next = e->next_same;

			free(e->path);
			free(e);
			e = next;
		}
	}
	pthread_mutex_unlock(&bid_lock);
}

/* A mapping whose build-id we look up. */
static int wants_build_id(const struct bpfprof_mapping *m)
{
	return m->path[0] == '/' && (m->prot & BPFPROF_PROT_EXEC);
}

static int same_file(const struct bpfprof_mapping *a, const struct bpfprof_mapping *b)
{
	return a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->inode == b->inode && strcmp(a->path, b->path) == 0;
}

int procmaps_add_build_ids(struct procmaps *m, uint32_t pid)
{
	size_t i, j, nfiles = 0, used = 0;
	uint8_t *arena;

	if (!m)
		return -EINVAL;
	for (i = 0; i < m->nr; i++)
		if (wants_build_id(&m->maps[i]))
			nfiles++;
	if (!nfiles)
		return 0;
	/* the old arena may be referenced by mappings; keep both until done */
	arena = malloc(nfiles * PROCMAPS_BUILD_ID_MAX);
	if (!arena)
		return -ENOMEM;

	for (i = 0; i < m->nr; i++) {
		struct bpfprof_mapping *map = &m->maps[i];
		const struct bpfprof_mapping *prev = NULL;
		uint8_t *bid;
		bool hit;
		int fd, n;

		if (!wants_build_id(map))
			continue;
		/* read each file once: reuse what an earlier mapping found */
		for (j = 0; j < i; j++) {
			if (wants_build_id(&m->maps[j]) && same_file(&m->maps[j], map)) {
				prev = &m->maps[j];
				break;
			}
		}
		if (prev) {
			map->build_id = prev->build_id;
			map->build_id_size = prev->build_id_size;
			continue;
		}
		map->build_id = NULL;
		map->build_id_size = 0;
		bid = arena + used;
		n = cached_build_id_by_path(map, bid, &hit);
		if (!hit) {
			fd = procmaps_open_file(pid, map);
			if (fd < 0)
				continue;
			n = cached_build_id(map, fd, bid);
			close(fd);
		}
		if (n > 0) {
			map->build_id = bid;
			map->build_id_size = (uint32_t)n;
			used += PROCMAPS_BUILD_ID_MAX;
		}
	}
	/* non-executable mappings of the same files get the same build-id */
	for (i = 0; i < m->nr; i++) {
		struct bpfprof_mapping *map = &m->maps[i];

		if (map->path[0] != '/' || (map->prot & BPFPROF_PROT_EXEC))
			continue;
		map->build_id = NULL;
		map->build_id_size = 0;
		for (j = 0; j < m->nr; j++) {
			if (wants_build_id(&m->maps[j]) && same_file(&m->maps[j], map)) {
				map->build_id = m->maps[j].build_id;
				map->build_id_size = m->maps[j].build_id_size;
				break;
			}
		}
	}
	free(m->build_ids);
	m->build_ids = arena;
	return 0;
}
