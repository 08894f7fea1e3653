/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * percpu_sum.h - sums over the CPUs of the counters the BPF program keeps
 * in per-CPU arrays (BPF_MAP_TYPE_PERCPU_ARRAY), read from userspace with
 * libbpf: the sampler's statistics at the end of a run
 * (sampler_read_stats()).
 *
 * @ncpus is the number of possible CPUs (libbpf_num_possible_cpus()):
 * the kernel hands out one value per possible CPU, each rounded up to 8
 * bytes.
 */
#ifndef BPFPROF_PERCPU_SUM_H
#define BPFPROF_PERCPU_SUM_H

#include <stdint.h>

#include <bpf/libbpf.h>

/*
 * The sums over the CPUs of elements 0 .. @nr-1 of the per-CPU array @fd,
 * whose values are one __u64 each ("stats", "stack_errors"), into @sums
 * (@nr entries, the caller's).  One BPF_MAP_LOOKUP_BATCH reads the whole
 * array; a kernel without batches for arrays (before 5.6) gets one
 * look-up per element.  Returns 0; -ENOMEM; or the negative errno of a
 * look-up (then @sums holds zeros).
 */
int percpu_sum_array(int fd, uint32_t nr, int ncpus, uint64_t *sums);

/*
 * The sums over the CPUs of the @nr counters (__u64) that begin the value
 * of the per-CPU array @map's element 0 ("cfi_vars", "py_vars": their
 * programs count through the value they hold, bpf/cfi_walk.bpf.h and
 * bpf/python.bpf.h), into @sums (@nr entries, the caller's).  Returns 0;
 * -EINVAL when the value has no room for @nr counters; -ENOMEM; or the
 * negative errno of the look-up.  @sums holds zeros unless 0 is returned.
 */
int percpu_sum_counts(const struct bpf_map *map, int ncpus, uint32_t nr, uint64_t *sums);

#endif /* BPFPROF_PERCPU_SUM_H */
