/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * map_warm.h - filling the kernel's per-CPU element caches of the hash maps
 * that the BPF program inserts into and that are not preallocated
 * (BPF_F_NO_PREALLOC: "stacks", "counts0", "counts1", "targets"), before
 * sampling.
 *
 * Such a map takes an element for an insert from the current CPU's cache
 * (the kernel's bpf_mem_alloc), which holds one element per CPU when the
 * map is created (for elements over 256 bytes; 4 for smaller ones) and is
 * refilled by an irq_work after an insert leaves it low.  A sample's
 * program can insert two stacks (kernel and user) before that runs: the
 * second would fail with -ENOMEM, counted as a stack-map-full drop.  An
 * insert made here from each sampled CPU, and its deletion, leave each
 * CPU's cache filled to its high mark.  Preallocating the maps instead
 * cost ~8 ms of a 4,096-stack run's start-up on the test VM
 * (docs/PERFORMANCE.md, session 35).
 */
#ifndef BPFPROF_MAP_WARM_H
#define BPFPROF_MAP_WARM_H

#include <stddef.h>
#include <stdint.h>

/* One map to warm: its fd, key and value sizes in bytes. */
struct map_warm_target {
	int fd;
	uint32_t key_size;
	uint32_t value_size;
};

/*
 * On each of the @nr_cpus CPUs at @cpus, insert into each of the @nr maps
 * at @maps an element under a key of all 0xff bytes (no stack id, tgid or
 * tid has it) and delete it, running there by sched_setaffinity(); the
 * thread's affinity is restored at the end.  A CPU this thread may not
 * run on (a cpuset) is skipped: its caches fill at its first samples.
 * Returns the number of CPUs warmed, or -ENOMEM; the maps are left as
 * they were (an insert that failed is not an error: the program's own
 * inserts count their failures as drops).
 */
int map_warm_percpu_caches(const struct map_warm_target *maps, size_t nr, const int *cpus,
			   size_t nr_cpus);

#endif /* BPFPROF_MAP_WARM_H */
