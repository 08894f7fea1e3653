/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tmpdir.h - removing a test's temporary directory of files (the cache
 * tests' mkdtemp() directories).  Header only.
 */
#ifndef BPFPROF_TEST_TMPDIR_H
#define BPFPROF_TEST_TMPDIR_H

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

/* Remove the files of @dir (not its subdirectories), then @dir. */
static inline void test_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

#endif /* BPFPROF_TEST_TMPDIR_H */
