// SPDX-License-Identifier: BSD-2-Clause
/*
 * locate.c - owns the offline file locator of locate.h: the places a
 * recorded mapping's ELF file may be (sysroot, debug directories, their
 * build-id trees, debuginfod), the build-id check of every candidate and
 * the cache of answers per build-id or path.  libdebuginfod is dlopen()ed
 * on first use so that it (with libcurl, ...) is only loaded when asked.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>
#include <uthash.h>

#include "buildid.h"
#include "locate.h"
#include "targets/procmaps.h"

/* Longest build-id read back from a candidate (bytes). */
#define BUILD_ID_MAX 64

/* The debug tree of a root file system, under the sysroot ("" for /). */
#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

/* A cached answer: key is 'b' + build-id bytes or 'p' + path. */
struct answer {
	UT_hash_handle hh;
	char *found;			/* NULL: found nowhere */
	size_t key_len;
	unsigned char key[];
};

/* libdebuginfod's entry points (loaded once). */
struct dfd {
	bool tried;
	void *lib;			/* dlopen() handle, NULL if unavailable */
	debuginfod_client *client;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_executable)(debuginfod_client *c, const unsigned char *id, int len,
			       char **path);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int len,
			      char **path);
};

struct locator {
	char **dirs;			/* the debug directories, then SYSROOT/usr/lib/debug */
	size_t nr_dirs;			/* including the last one */
	char *sysroot;			/* "" for none */
	bool debuginfod;
	struct answer *answers;		/* uthash by key */
	struct dfd dfd;
};

/* A recorded mapping's identity while it is looked for. */
struct wanted {
	const char *path;		/* recorded, without " (deleted)" */
	size_t path_len;
	bool deleted;
	const uint8_t *bid;
	size_t bid_size;
	char hex[2 * BUILD_ID_MAX + 2];	/* "xx/rest" */
};

/* ---- the locator --------------------------------------------------------- */

static int check_dir(const char *d)
{
	return d && d[0] == '/' ? 0 : -EINVAL;
}

struct locator *locate_new(const struct locate_opts *o)
{
	struct locator *l = calloc(1, sizeof(*l));
	size_t i, nd = o ? o->nr_debug_dirs : 0;
	const char *root = o && o->sysroot ? o->sysroot : "";

	if (!l)
		goto nomem;
	l->debuginfod = o && o->debuginfod;
	l->dirs = calloc(nd + 1, sizeof(*l->dirs));
	l->sysroot = strdup(root);
	if (!l->dirs || !l->sysroot)
		goto nomem;
	if ((root[0] && check_dir(root)) || (nd && !o->debug_dirs))
		goto inval;
	for (i = 0; i < nd; i++) {
		if (check_dir(o->debug_dirs[i]))
			goto inval;
		l->dirs[i] = strdup(o->debug_dirs[i]);
		if (!l->dirs[i])
			goto nomem;
		l->nr_dirs++;
	}
	if (asprintf(&l->dirs[l->nr_dirs], "%s%s", root, SYSTEM_DEBUG_DIR) < 0) {
		l->dirs[l->nr_dirs] = NULL;
		goto nomem;
	}
	l->nr_dirs++;
	return l;
inval:
	locate_free(l);
	errno = EINVAL;
	return NULL;
nomem:
	locate_free(l);
	errno = ENOMEM;
	return NULL;
}

void locate_free(struct locator *l)
{
	struct answer *a, *tmp;
	size_t i;

	if (!l)
		return;
	HASH_ITER(hh, l->answers, a, tmp) {
		HASH_DEL(l->answers, a);
		free(a->found);
		free(a);
	}
	if (l->dfd.client)
		l->dfd.end(l->dfd.client);
	if (l->dfd.lib)
		dlclose(l->dfd.lib);
	for (i = 0; l->dirs && i < l->nr_dirs; i++)
		free(l->dirs[i]);
	free(l->dirs);
	free(l->sysroot);
	free(l);
}

/* ---- candidates ---------------------------------------------------------- */

/*
 * Whether the open file @fd is a regular ELF file with the build-id @w
 * wants (any ELF file when @w has none).
 */
static bool matches(int fd, const struct wanted *w)
{
	uint8_t got[BUILD_ID_MAX];
	struct stat st;
	int n;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	n = elf_build_id_fd(fd, got, sizeof(got));
	if (!w->bid_size)
		return n > 0 || n == -ENODATA;
	return n > 0 && (size_t)n == w->bid_size && memcmp(got, w->bid, w->bid_size) == 0;
}

/*
 * Open @path if it is what @w wants: its fd, or -1.  O_NONBLOCK so that
 * a FIFO by that name cannot hang us (regular files ignore it).
 */
static int open_candidate(const char *path, const struct wanted *w)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (!matches(fd, w)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Try the path made from @fmt: its fd with *@found set to the malloc'd
 * path, -1 if it is not there or not a match, -ENOMEM.
 */
__attribute__((format(printf, 3, 4)))
static int try_path(const struct wanted *w, char **found, const char *fmt, ...)
{
	va_list ap;
	char *path;
	int n, fd;

	va_start(ap, fmt);
	n = vasprintf(&path, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	fd = open_candidate(path, w);
	if (fd < 0) {
		free(path);
		return -1;
	}
	*found = path;
	return fd;
}

/* Step 1: SYSROOT/PATH. */
static int try_recorded(struct locator *l, const struct wanted *w, char **found)
{
	if (w->deleted)
		return -1;
	return try_path(w, found, "%s%.*s", l->sysroot, (int)w->path_len, w->path);
}

/* Step 2 in debug directory @dir: the build-id tree, DIR/PATH, DIR/BASENAME. */
static int try_debug_dir(const char *dir, const struct wanted *w, char **found)
{
	const char *base = w->path;
	const char *slash = memrchr(w->path, '/', w->path_len);
	int fd;

	if (slash)
		base = slash + 1;
	fd = try_path(w, found, "%s/.build-id/%s", dir, w->hex);
	if (fd == -1)
		fd = try_path(w, found, "%s%.*s", dir, (int)w->path_len, w->path);
	if (fd == -1 && base < w->path + w->path_len)
		fd = try_path(w, found, "%s/%.*s", dir,
			      (int)(w->path + w->path_len - base), base);
	return fd;
}

/* Step 5 (and locate_open_debug()): DIR/.build-id/XX/REST.debug of every dir. */
static int try_debug_files(struct locator *l, const struct wanted *w, char **found)
{
	size_t i;
	int fd;

	for (i = 0; i < l->nr_dirs; i++) {
		fd = try_path(w, found, "%s/.build-id/%s.debug", l->dirs[i], w->hex);
		if (fd != -1)
			return fd;
	}
	return -1;
}

/* ---- debuginfod ---------------------------------------------------------- */

/* Whether the user asked for debuginfod (as its client reads it). */
static bool debuginfod_wanted(const struct locator *l)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return l->debuginfod && urls && urls[0];
}

/* Load libdebuginfod and start a client (once); 0 or -ENOENT. */
static int dfd_load(struct dfd *d)
{
	if (d->tried)
		return d->client ? 0 : -ENOENT;
	d->tried = true;
	d->lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!d->lib)
		return -ENOENT;
	*(void **)&d->begin = dlsym(d->lib, "debuginfod_begin");
	*(void **)&d->end = dlsym(d->lib, "debuginfod_end");
	*(void **)&d->find_executable = dlsym(d->lib, "debuginfod_find_executable");
	*(void **)&d->find_debuginfo = dlsym(d->lib, "debuginfod_find_debuginfo");
	if (d->begin && d->end && d->find_executable && d->find_debuginfo)
		d->client = d->begin();
	if (!d->client) {
		dlclose(d->lib);
		d->lib = NULL;
		return -ENOENT;
	}
	return 0;
}

/* Steps 4 and 5: debuginfod's executable (or its debuginfo if @debug). */
static int try_debuginfod(struct locator *l, const struct wanted *w, bool debug, char **found)
{
	struct dfd *d = &l->dfd;
	char *path = NULL;
	int fd;

	if (!w->bid_size || !debuginfod_wanted(l) || dfd_load(d))
		return -1;
	fd = (debug ? d->find_debuginfo : d->find_executable)(d->client, w->bid,
							      (int)w->bid_size, &path);
	if (fd < 0) {
		free(path);
		return -1;
	}
	/* its server said so; checked all the same, like every candidate */
	if (!matches(fd, w)) {
		close(fd);
		free(path);
		return -1;
	}
	*found = path;
	return fd;
}

/* ---- lookups ------------------------------------------------------------- */

/* Every place in order (locate.h); fd or -1, -ENOMEM. */
static int search(struct locator *l, const struct wanted *w, char **found)
{
	size_t i;
	int fd = try_recorded(l, w, found);

	if (!w->bid_size)
		return fd;
	for (i = 0; fd == -1 && i + 1 < l->nr_dirs; i++)
		fd = try_debug_dir(l->dirs[i], w, found);
	if (fd == -1)
		fd = try_path(w, found, "%s/.build-id/%s", l->dirs[l->nr_dirs - 1], w->hex);
	if (fd == -1)
		fd = try_debuginfod(l, w, false, found);
	if (fd == -1)
		fd = try_debug_files(l, w, found);
	if (fd == -1)
		fd = try_debuginfod(l, w, true, found);
	return fd;
}

/* Fill @w for @path (may be NULL) and @bid; -EINVAL if unusable. */
static int wanted_init(struct wanted *w, const char *path, const uint8_t *bid, size_t n)
{
	size_t i, len;
	char *p = w->hex;

	memset(w, 0, sizeof(*w));
	if (n > BUILD_ID_MAX || (n && !bid))
		return -EINVAL;
	w->path = path ? path : "";
	w->deleted = procmaps_path_deleted(w->path, &len) != 0;
	w->path_len = len;
	w->bid = bid;
	w->bid_size = n;
	for (i = 0; i < n; i++) {
		p += sprintf(p, "%02x", bid[i]);
		if (i == 0 && n > 1)
			*p++ = '/';
	}
	*p = '\0';
	return 0;
}

/* The cached answer for @w, NULL if none yet; *@key_len its key's length. */
static struct answer *answer_find(struct locator *l, const struct wanted *w,
				  unsigned char *key, size_t *key_len)
{
	struct answer *a;

	key[0] = w->bid_size ? 'b' : 'p';
	if (w->bid_size) {
		memcpy(key + 1, w->bid, w->bid_size);
		*key_len = 1 + w->bid_size;
	} else {
		memcpy(key + 1, w->path, w->path_len);
		*key_len = 1 + w->path_len;
	}
	HASH_FIND(hh, l->answers, key, *key_len, a);
	return a;
}

/* Remember @found (NULL: nowhere; taken over) for @key. */
static struct answer *answer_add(struct locator *l, const unsigned char *key, size_t key_len,
				 char *found)
{
	struct answer *a = malloc(sizeof(*a) + key_len);

	if (!a)
		return NULL;
	a->found = found;
	a->key_len = key_len;
	memcpy(a->key, key, key_len);
	HASH_ADD_KEYPTR(hh, l->answers, a->key, a->key_len, a);
	return a;
}

int locate_open(struct locator *l, const char *path, const uint8_t *build_id,
		size_t build_id_size, const char **found)
{
	struct wanted w;
	struct answer *a;
	unsigned char *key;
	size_t key_len;
	char *where = NULL;
	int fd;

	if (!l || !found || !path || path[0] != '/' ||
	    wanted_init(&w, path, build_id, build_id_size))
		return -EINVAL;
	key = malloc(1 + (w.path_len > BUILD_ID_MAX ? w.path_len : BUILD_ID_MAX));
	if (!key)
		return -ENOMEM;
	a = answer_find(l, &w, key, &key_len);
	if (a) {
		free(key);
		/* found before: reopened and checked again */
		fd = a->found ? open_candidate(a->found, &w) : -1;
		if (fd < 0)
			return -ENOENT;
		*found = a->found;
		return fd;
	}
	fd = search(l, &w, &where);
	if (fd == -ENOMEM || !(a = answer_add(l, key, key_len, fd >= 0 ? where : NULL))) {
		free(key);
		free(where);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	free(key);
	if (fd < 0)
		return -ENOENT;
	*found = a->found;
	return fd;
}

int locate_open_debug(struct locator *l, const uint8_t *build_id, size_t build_id_size,
		      char **found)
{
	struct wanted w;
	int fd;

	if (!l || !found || !build_id_size || wanted_init(&w, NULL, build_id, build_id_size))
		return -EINVAL;
	fd = try_debug_files(l, &w, found);
	if (fd == -ENOMEM)
		return fd;
	return fd < 0 ? -ENOENT : fd;
}
