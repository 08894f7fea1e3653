// SPDX-License-Identifier: BSD-2-Clause
/*
 * procfs.c - reads per-process facts from /proc (among them the MPI rank
 * in a process's environment), whole /proc files, and the hex numbers
 * /proc text files print (see procfs.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

#define PF_KTHREAD_FLAG 0x00200000u

/* Read a small /proc file into buf (NUL-terminated). Bytes read or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

int procfs_comm(uint32_t pid, uint32_t tid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	n = read_small(path, buf, size);
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int procfs_exe(uint32_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int procfs_cmdline(uint32_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	n = read_small(path, buf, size);
	if (n < 0)
		return (int)n;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return 0;
}

int procfs_stat(uint32_t pid, uint32_t *ppid, bool *kthread)
{
	char path[64], buf[1024], *p;
	unsigned int parent = 0, flags = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* comm may hold spaces and ')': fields resume after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %u %*d %*d %*d %*d %u", &parent, &flags) != 2)
		return -EINVAL;
	*ppid = parent;
	*kthread = flags & PF_KTHREAD_FLAG;
	return 0;
}

int procfs_tgid(uint32_t tid, uint32_t *tgid)
{
	char path[64], buf[4096], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = strstr(buf, "\nTgid:");
	if (!p || sscanf(p + 6, "%u", tgid) != 1)
		return -EINVAL;
	return 0;
}

int procfs_for_each_thread(uint32_t pid, int (*fn)(void *ctx, uint32_t tid), void *ctx)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!err && (de = readdir(dir))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || end == de->d_name)
			continue;
		err = fn(ctx, (uint32_t)tid);
	}
	closedir(dir);
	return err;
}

/* The variables that hold a process's MPI rank, in the order they count. */
static const char *const rank_vars[] = {
	"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID",
};

/* The value of the first entry @name=... of @env (@len bytes) and its
 * length in *@n, or NULL if @name is not set. */
static const char *env_value(const char *env, size_t len, const char *name, size_t *n)
{
	size_t nl = strlen(name);

	for (const char *p = env, *end = env + len; p < end;) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		const char *e = nul ? nul : end;

		if ((size_t)(e - p) > nl && p[nl] == '=' && !memcmp(p, name, nl)) {
			*n = (size_t)(e - p) - nl - 1;
			return p + nl + 1;
		}
		p = e + 1;
	}
	return NULL;
}

/* @s (@n bytes) as a decimal integer 0 .. INT32_MAX, or -1. */
static int32_t parse_rank(const char *s, size_t n)
{
	int64_t v = 0;

	if (!n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
		if (v > INT32_MAX)
			return -1;
	}
	return (int32_t)v;
}

int32_t procfs_env_rank(const char *env, size_t len)
{
	for (size_t i = 0; env && i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		size_t n;
		const char *v = env_value(env, len, rank_vars[i], &n);
		int32_t rank = v ? parse_rank(v, n) : -1;

		/* A batch script has SLURM_PROCID=0 too: only srun's tasks of a
		 * job step, which have SLURM_STEP_ID, are ranks. */
		if (!strcmp(rank_vars[i], "SLURM_PROCID") &&
		    !env_value(env, len, "SLURM_STEP_ID", &n))
			rank = -1;

		if (rank >= 0)
			return rank;
	}
	return -1;
}

int32_t procfs_rank(uint32_t pid)
{
	char path[64], *env;
	size_t len;
	int32_t rank;

	snprintf(path, sizeof(path), "/proc/%u/environ", pid);
	if (procfs_read_file(path, &env, &len))
		return -1;
	rank = procfs_env_rank(env, len);
	free(env);
	return rank;
}

bool procfs_alive(uint32_t pid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return false;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

int procfs_read_file(const char *path, char **buf, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *b = malloc(cap);
	int fd, err = 0;

	if (!b)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(b);
		return err;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb = realloc(b, cap * 2);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	*buf = b;
	*len = n;
	return 0;
}

int procfs_parse_hex(const char **p, const char *end, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;
	size_t n;

	for (; s < end; s++) {
		unsigned d;
		char c = *s;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (v >> 60)
			return -ERANGE;
		v = v << 4 | d;
	}
	n = (size_t)(s - *p);
	if (!n)
		return -EINVAL;
	*val = v;
	*p = s;
	return n > INT_MAX ? INT_MAX : (int)n;
}
