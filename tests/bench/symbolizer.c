// SPDX-License-Identifier: BSD-2-Clause
/*
 * symbolizer.c - throughput of the collector's symbolizer (user/symbols/symbolize.h)
 * on real binaries: `symbolizer [-n ADDRESSES] FILE...`.
 *
 * Each FILE is mapped into this process (dlopen; "self" means this
 * program, built with -g so DWARF lines are looked up too), and ADDRESSES
 * (default 100,000) distinct random addresses in its executable mappings
 * are resolved with symbolizer_user() against /proc/self/maps, in random
 * order, by a fresh symbolizer (cold: includes opening the ELF file and
 * building its tables; the first lookup is also timed alone), then once
 * more (warm: every result cached).  One line per file: distinct addresses
 * per second cold and warm, functions and lines found, first-lookup time.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../unit/lib/rng.h"
#include "symbols/symbolize.h"
#include "targets/procmaps.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t xorshift(void)
{
	return test_rng_next(&rng);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int bench_file(const char *file, size_t n)
{
	char self[4096];
	const char *path = file;
	struct procmaps pm = { 0 };
	struct stat st;
	uint64_t total = 0, *addrs;
	size_t k = 0, funcs = 0, lines = 0;
	double t0, t1 = 0, t2, t3;
	struct symbolizer *s;
	int err;

	if (!strcmp(file, "self")) {
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (len < 0)
			return -errno;
		self[len] = 0;
		path = self;
	} else if (!dlopen(file, RTLD_LAZY | RTLD_LOCAL)) {
		fprintf(stderr, "symbolizer: dlopen %s: %s\n", file, dlerror());
		return -ENOENT;
	}
	if (stat(path, &st))
		return -errno;
	if ((err = procmaps_read((uint32_t)getpid(), &pm)))
		return err;
	/* The executable mappings of that file (same inode). */
	for (size_t i = 0; i < pm.nr; i++)
		if ((pm.maps[i].prot & BPFPROF_PROT_EXEC) && pm.maps[i].inode == st.st_ino)
			total += pm.maps[i].end - pm.maps[i].start;
	if (!total) {
		fprintf(stderr, "symbolizer: %s is not mapped executable\n", path);
		return -ENOENT;
	}
	if (n > total / 2)
		n = total / 2;
	addrs = calloc(n, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	/* n distinct addresses: random offsets into the text, deduplicated. */
	while (k < n) {
		size_t m;

		for (size_t i = k; i < n; i++) {
			uint64_t off = xorshift() % total;

			for (size_t j = 0; j < pm.nr; j++) {
				const struct bpfprof_mapping *mp = &pm.maps[j];

				if (!(mp->prot & BPFPROF_PROT_EXEC) || mp->inode != st.st_ino)
					continue;
				if (off < mp->end - mp->start) {
					addrs[i] = mp->start + off;
					break;
				}
				off -= mp->end - mp->start;
			}
		}
		qsort(addrs, n, sizeof(*addrs), cmp_u64);
		for (size_t i = m = 0; i < n; i++)
			if (!m || addrs[i] != addrs[m - 1])
				addrs[m++] = addrs[i];
		k = m;
	}
	for (size_t i = n - 1; i > 0; i--) {	/* shuffle: no help from locality */
		size_t j = xorshift() % (i + 1);
		uint64_t t = addrs[i];

		addrs[i] = addrs[j];
		addrs[j] = t;
	}
	s = symbolizer_new();
	if (!s)
		return -ENOMEM;
	t0 = now_s();
	for (size_t i = 0; i < n; i++) {
		struct bpfprof_symbol sym;

		if (symbolizer_user(s, (uint32_t)getpid(), pm.maps, pm.nr, addrs[i], &sym) == 0) {
			funcs += sym.function != NULL;
			lines += sym.line != 0;
		}
		if (i == 0)
			t1 = now_s();
	}
	t2 = now_s();
	for (size_t i = 0; i < n; i++) {
		struct bpfprof_symbol sym;

		symbolizer_user(s, (uint32_t)getpid(), pm.maps, pm.nr, addrs[i], &sym);
	}
	t3 = now_s();
	printf("symbolizer: file %s text_mb %.1f addresses %zu cold_s %.3f cold_per_s %.0f "
	       "first_ms %.1f warm_per_s %.0f functions %zu lines %zu\n", path, total / 1048576.0,
	       n, t2 - t0, n / (t2 - t0), 1e3 * (t1 - t0), n / (t3 - t2), funcs, lines);
	symbolizer_free(s);
	procmaps_free(&pm);
	free(addrs);
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = 100000;
	int opt, bad = 0;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n') {
			fprintf(stderr, "usage: symbolizer [-n ADDRESSES] FILE|self...\n");
			return 2;
		}
		n = strtoul(optarg, NULL, 0);
	}
	for (int i = optind; i < argc; i++) {
		int err = bench_file(argv[i], n ? n : 1);

		if (err) {
			fprintf(stderr, "symbolizer: %s: %s\n", argv[i], strerror(-err));
			bad = 1;
		}
	}
	return bad;
}
