// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_procmaps.c - libFuzzer target of the /proc/PID/maps parser: any
 * bytes go to procmaps_parse(); the result must be sorted and every
 * mapping must be found again by procmaps_find().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "targets/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps m = { 0 };

	if (procmaps_parse((const char *)data, size, &m))
		return 0;
	for (size_t i = 0; i < m.nr; i++) {
		const struct bpfprof_mapping *p = &m.maps[i];

		if (i && m.maps[i - 1].start > p->start)
			abort();	/* documented: sorted by start */
		if (p->start >= p->end || !p->path)
			abort();	/* documented: START < END, path "" at least */
		(void)strlen(p->path);
		if (!procmaps_find(m.maps, m.nr, p->start))
			abort();
		procmaps_find(m.maps, m.nr, p->end);
		procmaps_path_deleted(p->path, NULL);
	}
	procmaps_find(m.maps, m.nr, 0);
	procmaps_find(m.maps, m.nr, UINT64_MAX);
	procmaps_free(&m);
	return 0;
}
