// SPDX-License-Identifier: BSD-2-Clause
/*
 * percpu_sum.c - owns the reading of the BPF program's per-CPU counters
 * (see percpu_sum.h): whole arrays in one batched look-up, or the
 * counters at the start of one element's value, summed over the CPUs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "percpu_sum.h"

int percpu_sum_array(int fd, uint32_t nr, int ncpus, uint64_t *sums)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint64_t *vals = calloc((size_t)nr * (size_t)ncpus, sizeof(*vals));
	uint32_t *keys = calloc(nr, sizeof(*keys));
	uint32_t out = 0, count = nr;
	int err = vals && keys ? 0 : -ENOMEM;

	if (!err && bpf_map_lookup_batch(fd, NULL, &out, keys, vals, &count, &opts) &&
	    errno != ENOENT) {
		for (count = 0; count < nr && !err; count++) {	/* no batches here */
			keys[count] = count;
			if (bpf_map_lookup_elem(fd, &keys[count], vals + (size_t)count * ncpus))
				err = -errno;
		}
	}
	memset(sums, 0, nr * sizeof(*sums));
	for (uint32_t i = 0; i < count && !err; i++)
		for (int c = 0; c < ncpus; c++)
			if (keys[i] < nr)
				sums[keys[i]] += vals[(size_t)i * ncpus + c];
	free(vals);
	free(keys);
	return err;
}

int percpu_sum_counts(const struct bpf_map *map, int ncpus, uint32_t nr, uint64_t *sums)
{
	size_t stride = (bpf_map__value_size(map) + 7) / 8 * 8;
	uint8_t *vals;
	uint32_t zero = 0;
	int err = 0;

	memset(sums, 0, nr * sizeof(*sums));
	if (stride < nr * sizeof(*sums))
		return -EINVAL;		/* the value has no room for the counters */
	if (!(vals = malloc(stride * (size_t)ncpus)))
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(map), &zero, vals))
		err = -errno;
	for (int c = 0; c < ncpus && !err; c++)
		for (uint32_t i = 0; i < nr; i++) {
			uint64_t v;

			memcpy(&v, vals + (size_t)c * stride + i * sizeof(v), sizeof(v));
			sums[i] += v;
		}
	free(vals);
	return err;
}
