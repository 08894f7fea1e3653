/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * cgroup.bpf.h - the --cgroup filter (task_in_cgroup()), included once by
 * profile.bpf.c: every program tests it after its target test, so that
 * a Slurm job step's or a container's tasks are the only ones sampled
 * and followed.  Its settings are set by the collector before load
 * (user/kernel/sampler.c).
 */
#ifndef BPFPROF_CGROUP_BPF_H
#define BPFPROF_CGROUP_BPF_H

/* --cgroup: only tasks in this cgroup or below it (task_in_cgroup()). */
const volatile bool cgroup_filter = false;
const volatile __u32 cgroup_v1 = BPFPROF_CGROUP_V2;	/* hierarchy: enum bpfprof_cgroup_v1 */
const volatile __u32 cgroup_level = 0;		/* depth below the hierarchy's root */
const volatile __u64 cgroup_id = 0;		/* its kernfs id (the directory's inode) */

/*
 * The cgroup of @t in the --cgroup hierarchy: the default (v2) one, or
 * the v1 hierarchy of one controller (hybrid systems, where Slurm's
 * cgroup/v1 plugin puts job steps in freezer, cpuset, memory, ...).
 * The kernel's subsystem ids are its enum's values, read through CO-RE.
 */
/* The kernel's id of cgroup subsystem @name, -1 if it has none by that name. */
#define SUBSYS_ID(name)								\
	(bpf_core_enum_value_exists(enum cgroup_subsys_id, name)		\
	 ? (int)bpf_core_enum_value(enum cgroup_subsys_id, name) : -1)

static __always_inline struct cgroup *task_cgroup(struct task_struct *t)
{
	int ssid;

	switch (cgroup_v1) {
	case BPFPROF_CGROUP_V2:
		return BPF_CORE_READ(t, cgroups, dfl_cgrp);
	case BPFPROF_CGROUP_V1_FREEZER: ssid = SUBSYS_ID(freezer_cgrp_id); break;
	case BPFPROF_CGROUP_V1_CPUSET: ssid = SUBSYS_ID(cpuset_cgrp_id); break;
	case BPFPROF_CGROUP_V1_CPU: ssid = SUBSYS_ID(cpu_cgrp_id); break;
	case BPFPROF_CGROUP_V1_CPUACCT: ssid = SUBSYS_ID(cpuacct_cgrp_id); break;
	case BPFPROF_CGROUP_V1_MEMORY: ssid = SUBSYS_ID(memory_cgrp_id); break;
	case BPFPROF_CGROUP_V1_DEVICES: ssid = SUBSYS_ID(devices_cgrp_id); break;
	case BPFPROF_CGROUP_V1_PIDS: ssid = SUBSYS_ID(pids_cgrp_id); break;
	default: return NULL;
	}
	/* the running kernel's count, not this build's */
	if (ssid < 0 || ssid >= SUBSYS_ID(CGROUP_SUBSYS_COUNT))
		return NULL;
	return BPF_CORE_READ(t, cgroups, subsys[ssid], cgroup);
}

/*
 * --cgroup: true when @t is in the cgroup or one of its descendants, i.e.
 * when the cgroup's ancestor at cgroup_level is that cgroup (the kernel's
 * cgroup_is_descendant(), read through CO-RE: it works on any task, the
 * renamed one of on_rename too, and on v1 hierarchies, which
 * bpf_current_task_under_cgroup() does not take).  Always true without it.
 */
static __always_inline bool task_in_cgroup(struct task_struct *t)
{
	struct cgroup *cg, *anc = NULL;
	__u32 level = cgroup_level;

	if (!cgroup_filter)
		return true;
	cg = task_cgroup(t);
	if (!cg || level >= BPFPROF_CGROUP_MAX_LEVEL || BPF_CORE_READ(cg, level) < (int)level)
		return false;
	if (bpf_core_read(&anc, sizeof(anc), &cg->ancestors[level]) || !anc)
		return false;
	return BPF_CORE_READ(anc, kn, id) == cgroup_id;
}

#endif /* BPFPROF_CGROUP_BPF_H */
