// SPDX-License-Identifier: BSD-2-Clause
/*
 * targets/cgroup.c - owns the resolution of --cgroup PATH (see cgroup.h):
 * the mount table's cgroup mounts, the path's hierarchy and depth, and its
 * kernfs id.  Every error is one line naming the path and what to do.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bpfprof.h"
#include "cgroup.h"

/* One cgroup or cgroup2 line of mountinfo. */
struct cg_mount {
	char root[PATH_MAX];		/* field 4: the mount's root within its hierarchy */
	char point[PATH_MAX];		/* field 5: where it is mounted */
	char options[256];		/* super options (v1: the controllers) */
	bool v2;
};

/* v1 controllers the BPF program can follow, as mount options name them. */
static const struct {
	const char *name;
	uint32_t hierarchy;
} v1_controllers[] = {
	{ "freezer", BPFPROF_CGROUP_V1_FREEZER },
	{ "cpuset", BPFPROF_CGROUP_V1_CPUSET },
	{ "cpu", BPFPROF_CGROUP_V1_CPU },
	{ "cpuacct", BPFPROF_CGROUP_V1_CPUACCT },
	{ "memory", BPFPROF_CGROUP_V1_MEMORY },
	{ "devices", BPFPROF_CGROUP_V1_DEVICES },
	{ "pids", BPFPROF_CGROUP_V1_PIDS },
};

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* Parse one mountinfo line into @m: true for a cgroup or cgroup2 mount. */
static bool parse_mount(const char *line, struct cg_mount *m)
{
	char root[PATH_MAX], point[PATH_MAX], fstype[32], options[256];
	const char *sep = strstr(line, " - ");

	if (!sep || sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
	    sscanf(sep + 3, "%31s %*s %255s", fstype, options) != 2)
		return false;
	if (strcmp(fstype, "cgroup2") && strcmp(fstype, "cgroup"))
		return false;
	unescape(root);
	unescape(point);
	snprintf(m->root, sizeof(m->root), "%s", root);
	snprintf(m->point, sizeof(m->point), "%s", point);
	snprintf(m->options, sizeof(m->options), "%s", options);
	m->v2 = !strcmp(fstype, "cgroup2");
	return true;
}

/* True if @path is @dir or below it. */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/*
 * The cgroup mounts of @mountinfo: with @path, the one holding it (the
 * longest mount point it is under); else the first cgroup2 mount.  0, or
 * -ENOENT when there is none, -errno when the table cannot be read.
 */
static int find_mount(const char *mountinfo, const char *path, struct cg_mount *out)
{
	FILE *f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	char line[3 * PATH_MAX];
	size_t best = 0;
	struct cg_mount m;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!parse_mount(line, &m))
			continue;
		if (!path && m.v2) {
			*out = m;
			best = 1;
			break;
		}
		if (path && under(path, m.point) && strlen(m.point) + 1 > best) {
			*out = m;
			best = strlen(m.point) + 1;
		}
	}
	fclose(f);
	return best ? 0 : -ENOENT;
}

/* Path components of @p ("/" has none, "/a/b" two). */
static uint32_t components(const char *p)
{
	uint32_t n = 0;

	for (; *p; p++)
		if (*p != '/' && (p[1] == '/' || p[1] == '\0'))
			n++;
	return n;
}

/* A v1 mount's hierarchy from its controllers; 0 (v2's value) if none fits. */
static uint32_t v1_hierarchy(const char *options)
{
	char copy[256], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", options);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof(v1_controllers) / sizeof(v1_controllers[0]); i++)
			if (!strcmp(tok, v1_controllers[i].name))
				return v1_controllers[i].hierarchy;
	return BPFPROF_CGROUP_V2;
}

/* The directory @arg names, symlinks resolved, into @out; 0 or -ENOENT. */
static int locate(const char *arg, const char *mountinfo, char *out)
{
	struct cg_mount v2, m;
	char joined[2 * PATH_MAX];
	bool have_v2 = find_mount(mountinfo, NULL, &v2) == 0;

	if (arg[0] == '/' && realpath(arg, out) && find_mount(mountinfo, out, &m) == 0)
		return 0;
	if (!have_v2)
		return -ENOENT;
	snprintf(joined, sizeof(joined), "%s/%s", v2.point, arg + (arg[0] == '/'));
	if (strlen(joined) >= PATH_MAX || !realpath(joined, out))
		return -ENOENT;
	return 0;
}

int cgroup_target_resolve(const char *arg, const char *mountinfo, struct cgroup_target *out)
{
	struct cg_mount m;
	struct stat st;

	if (!*arg || locate(arg, mountinfo, out->path)) {
		fprintf(stderr, "bpfprof: no cgroup '%s': give a directory under the cgroup2 mount "
			"(absolute, or relative to it), e.g. the path in /proc/PID/cgroup\n", arg);
		return -ENOENT;
	}
	if (find_mount(mountinfo, out->path, &m) || stat(out->path, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "bpfprof: '%s' is not a cgroup directory (%s is not under a cgroup "
			"mount); see /proc/self/mountinfo\n", arg, out->path);
		return -ENOTDIR;
	}
	out->hierarchy = m.v2 ? BPFPROF_CGROUP_V2 : v1_hierarchy(m.options);
	if (!m.v2 && out->hierarchy == BPFPROF_CGROUP_V2) {
		fprintf(stderr, "bpfprof: cgroup '%s' is in a v1 hierarchy (%s) bpfprof cannot follow; "
			"use its cgroup v2 path, or one under freezer, cpuset, cpu, cpuacct, memory, "
			"devices or pids\n", arg, m.options);
		return -EINVAL;
	}
	out->level = components(m.root) + components(out->path + strlen(m.point));
	if (out->level >= BPFPROF_CGROUP_MAX_LEVEL) {
		fprintf(stderr, "bpfprof: cgroup '%s' is %u levels deep; bpfprof follows at most %d\n",
			arg, out->level, BPFPROF_CGROUP_MAX_LEVEL - 1);
		return -EINVAL;
	}
	/* A kernfs directory's inode number is its id on 64-bit machines (and
	 * bpfprof builds for x86-64 only): what the kernel's kernfs_node has. */
	out->id = (uint64_t)st.st_ino;
	return 0;
}
