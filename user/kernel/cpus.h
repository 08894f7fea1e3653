/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpus.h - CPU lists: parsing "0-3,6" (-C and /sys/devices/system/cpu/online
 * share the syntax) and reading the online CPUs.  Used by the option parser
 * (user/cli) and by the sampler, which opens one perf event per CPU.
 */
#ifndef BPFPROF_CPUS_H
#define BPFPROF_CPUS_H

#include <stddef.h>

/* Highest CPU id parse_cpu_list() accepts. */
#define CPU_ID_MAX 65535

/*
 * Parse a comma-separated list of CPU ids and ranges ("0-3,5") into a set:
 * *@cpus is a malloc'd array (the caller frees it) of @*nr distinct ids in
 * ascending order, each named once however often the list names it.
 * Returns 0, -EINVAL (empty, not a number, reversed range, id above
 * CPU_ID_MAX) or -ENOMEM; *@cpus and *@nr are set only on success.
 */
int parse_cpu_list(const char *s, int **cpus, size_t *nr);

/*
 * The online CPUs, from /sys/devices/system/cpu/online, as parse_cpu_list()
 * returns them (malloc'd, ascending).  0, -errno of the open, -EIO on an
 * empty file, or parse_cpu_list()'s error.
 */
int online_cpus(int **cpus, size_t *nr);

#endif /* BPFPROF_CPUS_H */
