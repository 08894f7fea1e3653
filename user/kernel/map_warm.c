// SPDX-License-Identifier: BSD-2-Clause
/*
 * map_warm.c - fills the per-CPU element caches of the BPF program's
 * non-preallocated hash maps before sampling starts: see map_warm.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "cpus.h"
#include "map_warm.h"

/* One insert and delete in each map: the insert takes this CPU's cached
 * element and leaves the cache low, which makes the kernel refill it. */
static void warm_maps(const struct map_warm_target *maps, size_t nr, void *key, void *value)
{
	for (size_t i = 0; i < nr; i++) {
		memset(key, 0xff, maps[i].key_size);
		if (bpf_map_update_elem(maps[i].fd, key, value, BPF_NOEXIST) == 0)
			bpf_map_delete_elem(maps[i].fd, key);
	}
}

static int run_on(int cpu, size_t set_size, cpu_set_t *set)
{
	CPU_ZERO_S(set_size, set);
	CPU_SET_S((size_t)cpu, set_size, set);
	return sched_setaffinity(0, set_size, set);
}

int map_warm_percpu_caches(const struct map_warm_target *maps, size_t nr, const int *cpus,
			   size_t nr_cpus)
{
	size_t set_size = CPU_ALLOC_SIZE(CPU_ID_MAX + 1), key_size = 1, value_size = 1;
	cpu_set_t *saved = CPU_ALLOC(CPU_ID_MAX + 1), *one = CPU_ALLOC(CPU_ID_MAX + 1);
	void *key = NULL, *value = NULL;
	int warmed = -ENOMEM;
	bool restore;

	for (size_t i = 0; i < nr; i++) {
		if (maps[i].key_size > key_size)
			key_size = maps[i].key_size;
		if (maps[i].value_size > value_size)
			value_size = maps[i].value_size;
	}
	key = malloc(key_size);
	value = calloc(1, value_size);
	if (!saved || !one || !key || !value)
		goto out;
	restore = sched_getaffinity(0, set_size, saved) == 0;
	warmed = 0;
	for (size_t c = 0; c < nr_cpus; c++) {
		if (cpus[c] < 0 || cpus[c] > CPU_ID_MAX || run_on(cpus[c], set_size, one))
			continue;
		warm_maps(maps, nr, key, value);
		warmed++;
	}
	if (restore)
		sched_setaffinity(0, set_size, saved);
out:
	CPU_FREE(saved);
	CPU_FREE(one);
	free(key);
	free(value);
	return warmed;
}
