/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * debug_ids.h - a build-id whose separate debug file this machine has
 * installed, for the tests of the caches that tell a file built without
 * one from one built after it was installed (symbols/sym_cache.h,
 * interp/py_cache.h).  Header only.
 */
#ifndef BPFPROF_TEST_DEBUG_IDS_H
#define BPFPROF_TEST_DEBUG_IDS_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A build-id whose debug file this machine has (libc6-dbg and others
 * install them), from the name of one under /usr/lib/debug/.build-id. */
static inline size_t test_installed_debug_id(uint8_t *id)
{
	DIR *top = opendir("/usr/lib/debug/.build-id"), *sub;
	struct dirent *a, *b;
	size_t n = 0;

	while (top && !n && (a = readdir(top))) {
		char dir[300];

		if (strlen(a->d_name) != 2)
			continue;
		snprintf(dir, sizeof(dir), "/usr/lib/debug/.build-id/%s", a->d_name);
		if (!(sub = opendir(dir)))
			continue;
		while (!n && (b = readdir(sub))) {
			size_t len = strlen(b->d_name);
			unsigned x;

			if (len != 38 + 6 || strcmp(b->d_name + 38, ".debug"))
				continue;
			sscanf(a->d_name, "%2x", &x);
			id[n++] = (uint8_t)x;
			for (size_t i = 0; i < 38; i += 2) {
				sscanf(b->d_name + i, "%2x", &x);
				id[n++] = (uint8_t)x;
			}
		}
		closedir(sub);
	}
	if (top)
		closedir(top);
	return n;
}

#endif /* BPFPROF_TEST_DEBUG_IDS_H */
