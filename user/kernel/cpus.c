// SPDX-License-Identifier: BSD-2-Clause
/*
 * cpus.c - owns the CPU list syntax ("0-3,6") and the list of online CPUs:
 * -C is parsed here for the option parser, and the sampler asks here which
 * CPUs it can open events on.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpus.h"

/* One CPU id: whole decimal digits, 0..CPU_ID_MAX.  0 or -EINVAL. */
static int cpu_id(const char *s, uint64_t *cpu)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*cpu = strtoull(s, &end, 10);
	return errno || *end || *cpu > CPU_ID_MAX ? -EINVAL : 0;
}

/* Add the CPUs of one "N" or "LO-HI" item to @set.  0 or -EINVAL. */
static int add_item(uint8_t *set, char *item)
{
	char *dash = strchr(item, '-');
	uint64_t lo, hi;

	if (dash)
		*dash = '\0';
	if (cpu_id(item, &lo) || cpu_id(dash ? dash + 1 : item, &hi) || hi < lo)
		return -EINVAL;
	for (uint64_t c = lo; c <= hi; c++)
		set[c / 8] |= 1u << (c % 8);
	return 0;
}

static int in_set(const uint8_t *set, int c)
{
	return set[c / 8] >> (c % 8) & 1;
}

/* The ascending list of the CPUs in @set.  0, -EINVAL (empty) or -ENOMEM.
 * The set's bytes are mostly zero (a machine has few CPUs of the 65,536
 * ids): those are skipped whole. */
static int set_to_list(const uint8_t *set, int **cpus, size_t *nr)
{
	size_t n = 0;
	int *list;

	for (int b = 0; b <= CPU_ID_MAX / 8; b++)
		n += (size_t)__builtin_popcount(set[b]);
	if (n == 0)
		return -EINVAL;
	list = malloc(n * sizeof(*list));
	if (!list)
		return -ENOMEM;
	n = 0;
	for (int b = 0; b <= CPU_ID_MAX / 8; b++) {
		if (!set[b])
			continue;
		for (int c = 8 * b; c < 8 * b + 8; c++)
			if (in_set(set, c))
				list[n++] = c;
	}
	*cpus = list;
	*nr = n;
	return 0;
}

int parse_cpu_list(const char *s, int **cpus, size_t *nr)
{
	/* A set of CPU ids, not a list: "0,0" or "0-3,2" name a CPU once (one
	 * event per CPU), and memory stays bounded however long the list. */
	uint8_t *set = calloc(CPU_ID_MAX / 8 + 1, 1);
	char *copy = strdup(s), *save = NULL, *tok;
	int err = 0;

	if (!copy || !set) {
		free(copy);
		free(set);
		return -ENOMEM;
	}
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save))
		err = add_item(set, tok);
	free(copy);
	if (!err)
		err = set_to_list(set, cpus, nr);
	free(set);
	return err;
}

int online_cpus(int **cpus, size_t *nr)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return parse_cpu_list(buf, cpus, nr);
}
