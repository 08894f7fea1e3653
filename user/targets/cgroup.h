/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * targets/cgroup.h - --cgroup PATH: the cgroup whose tasks (and those of
 * its descendants) are sampled, resolved to what the BPF program compares:
 * its hierarchy (cgroup v2, or the v1 hierarchy of one controller), its
 * depth below that hierarchy's root, and its kernfs id.
 */
#ifndef BPFPROF_CGROUP_H
#define BPFPROF_CGROUP_H

#include <limits.h>
#include <stdint.h>

/* A resolved --cgroup. */
struct cgroup_target {
	uint32_t hierarchy;		/* enum bpfprof_cgroup_v1 (bpf/bpfprof.h) */
	uint32_t level;			/* 0 = the hierarchy's root, 1 = its child, ... */
	uint64_t id;			/* kernfs id: the directory's inode number */
	char path[PATH_MAX];		/* the directory, absolute, symlinks resolved */
};

/*
 * Resolve @arg, as --cgroup took it, using the mount table @mountinfo
 * (a /proc/PID/mountinfo file; NULL: /proc/self/mountinfo):
 *
 *   - a relative path is relative to the cgroup2 mount;
 *   - an absolute path under a cgroup2 or cgroup v1 mount is taken as is;
 *   - any other absolute path is tried below the cgroup2 mount, so the
 *     form /proc/PID/cgroup shows ("/slurm/job_5") works too.
 *
 * The level counts the mount's own root (a bind mount of a sub-cgroup, as
 * mountinfo's fourth field shows it) plus the path's components below the
 * mount point.  Inside a cgroup namespace that root is the namespace's, so
 * give --cgroup from the host's namespace.  A v1 path must be in the
 * hierarchy of freezer, cpuset, cpu, cpuacct, memory, devices or pids.
 * Returns 0, or a negative errno after printing one line saying what is
 * wrong (-ENOENT no such cgroup, -ENOTDIR not a cgroup directory,
 * -EINVAL a v1 hierarchy without one of those controllers or too deep).
 */
int cgroup_target_resolve(const char *arg, const char *mountinfo, struct cgroup_target *out);

#endif /* BPFPROF_CGROUP_H */
