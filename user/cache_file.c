// SPDX-License-Identifier: BSD-2-Clause
/*
 * cache_file.c - owns the naming, checking, checksum and writing of the
 * on-disk cache's files (cache_file.h), for the unwind and function tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* XXH3_state_t's definition, for a state on the stack: the library is
 * linked statically (Makefile), from the package of this header, so the
 * struct is the library's. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "cache_file.h"

char *cache_file_path(const char *dir, const uint8_t *id, size_t n, const char *suffix,
		      bool tmp)
{
	size_t len = strlen(dir) + 2 * n + strlen(suffix) + 32;
	char *p = malloc(len), *q;

	if (!p)
		return NULL;
	q = p + sprintf(p, "%s/", dir);
	for (size_t i = 0; i < n; i++)
		q += sprintf(q, "%02x", id[i]);
	if (tmp)
		sprintf(q, "%s.tmp.%d", suffix, (int)getpid());
	else
		strcpy(q, suffix);
	return p;
}

bool cache_file_trusted(const struct stat *st)
{
	return (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)) && st->st_uid == geteuid() &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

uint64_t cache_file_checksum(const struct cache_part *parts, size_t nr)
{
	XXH3_state_t st;

	if (nr == 1)
		return XXH3_64bits(parts[0].data, parts[0].size);
	XXH3_64bits_reset(&st);
	for (size_t i = 0; i < nr; i++)
		XXH3_64bits_update(&st, parts[i].data, parts[i].size);
	return XXH3_64bits_digest(&st);
}

void cache_file_touch(int fd)
{
	futimens(fd, (const struct timespec[2]){ { .tv_nsec = UTIME_NOW },
						  { .tv_nsec = UTIME_OMIT } });
}

int cache_file_read(const char *dir, const uint8_t *id, size_t n, const char *suffix,
		    int (*read)(int fd, void *ctx), void *ctx, bool *rejected)
{
	char *path = cache_file_path(dir, id, n, suffix, false);
	int fd, err;

	*rejected = false;
	if (!path)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		free(path);
		return -ENOENT;
	}
	err = read(fd, ctx);
	if (!err)
		cache_file_touch(fd);
	close(fd);
	if (err == -ENOENT) {
		*rejected = true;
		unlink(path);
	}
	free(path);
	return err;
}

/* Write @size bytes of @buf to @fd.  0 or -errno. */
static int write_all(int fd, const void *buf, size_t size)
{
	while (size) {
		ssize_t n = write(fd, buf, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf = (const char *)buf + n;
		size -= (size_t)n;
	}
	return 0;
}

int cache_file_write(const char *dir, const uint8_t *id, size_t n, const char *suffix,
		     const struct cache_part *parts, size_t nr)
{
	char *tmp = cache_file_path(dir, id, n, suffix, true);
	char *path = cache_file_path(dir, id, n, suffix, false);
	int fd = -1, err = tmp && path ? 0 : -ENOMEM;

	if (!err && (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			       0600)) < 0)
		err = -errno;
	for (size_t i = 0; i < nr && !err; i++)
		err = write_all(fd, parts[i].data, parts[i].size);
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err && tmp)
		unlink(tmp);
	free(tmp);
	free(path);
	return err;
}
