// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi_tables.c - cost of the unwind tables of `--call-graph auto`
 * (user/unwind/cfi_table.h) on real ELF files:
 *
 *   cfi_tables [-r REPS] [-d] [-l] FILE[:DEBUG_FILE]...
 *
 * For each FILE (with its separate debug file DEBUG_FILE, for
 * .debug_frame) the table is built REPS times (default 5); one line gives
 * the .eh_frame / .debug_frame sizes, rows, table bytes (what the BPF
 * maps hold), the fastest and median build time (wall clock, and CPU time
 * of the building thread, steadier on a busy machine), ms per MB of CFI (.eh_frame + .debug_frame), and the
 * rows by kind; at the end the peak RSS of the whole run.  -d dumps the rows of the last build.
 * -l builds lazy tables (cfi_table_build_lazy(): a marker per FDE, as a
 * profile's first sight of a big file does; no debug file).
 *
 * Build (from the top of the tree, after make B=build-cfi):
 *   cc -O2 -std=gnu11 -D_GNU_SOURCE -Iuser -Ibpf tests/bench/cfi_tables.c \
 *      build-cfi/libbpfprof-core.a $LIBS -o cfi_tables
 * with LIBS the Makefile's LIBS line (tests/bench/run reads it from there).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "unwind/cfi_table.h"

/* CPU time of this thread, ns: steadier than wall time on a busy machine. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void dump(const struct cfi_table *t)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		const struct cfi_row *r = &t->rows[i];

		printf("  %#010x %-10s cfa %6d rbp %4d rbx %2u\n", r->pc,
		       cfi_kind_name(CFI_ROW_KIND(r)), r->cfa * 8, r->rbp, CFI_ROW_RBX(r));
	}
}

/* The table of @path (@debug: its debug file, or NULL); lazy with @lazy. */
static int build(const char *path, const char *debug, bool lazy, struct cfi_table **t)
{
	int fd, err;

	if (!lazy)
		return cfi_table_build(path, debug, t);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = cfi_table_build_lazy(fd, t);
	close(fd);
	return err;
}

/* Build @path REPS times (lazy tables with @lazy) and print one line. */
static int bench(const char *arg, int reps, int do_dump, bool lazy)
{
	char *path = strdup(arg), *debug = strchr(path, ':');
	struct cfi_table *t = NULL;
	uint64_t *ns = calloc((size_t)reps, sizeof(*ns));
	uint64_t *cpu = calloc((size_t)reps, sizeof(*cpu));
	uint64_t c0;
	const struct cfi_table_stats *st;
	double eh_mb, min_ms, med_ms;
	int i, err = 0, k;

	if (debug)
		*debug++ = '\0';
	for (i = 0; i < reps && !err; i++) {
		cfi_table_free(t);
		t = NULL;
		c0 = cpu_ns();
		err = build(path, debug, lazy, &t);
		cpu[i] = cpu_ns() - c0;
		if (!err)
			ns[i] = t->stats.build_ns;
	}
	if (err) {
		printf("%s: error %d (%s)\n", path, err, strerror(-err));
		free(ns);
		free(cpu);
		free(path);
		return 1;
	}
	qsort(ns, (size_t)reps, sizeof(*ns), cmp_u64);
	qsort(cpu, (size_t)reps, sizeof(*cpu), cmp_u64);
	st = &t->stats;
	eh_mb = (double)(st->eh_frame_bytes + st->debug_frame_bytes) / (1 << 20);
	min_ms = (double)ns[0] / 1e6;
	med_ms = (double)ns[reps / 2] / 1e6;
	printf("%s%s: eh_frame %.1f KiB, debug_frame %.1f KiB, %" PRIu32 " FDEs (%" PRIu32
	       " skipped, %" PRIu32 " bad), %" PRIu32 " rows (%" PRIu32 " merged), %.1f KiB, "
	       "%.2f bytes/FDE; build min %.2f ms, median %.2f ms = %.1f ms/MB (min), %.1f (median); "
	       "rbp lost %" PRIu32 "\n", path, lazy ? " (lazy)" : "", st->eh_frame_bytes / 1024.0,
	       st->debug_frame_bytes / 1024.0, st->fdes + st->fdes_unbuilt,
	       st->fdes_skipped, st->bad_entries, st->rows, st->rows_merged, st->bytes / 1024.0,
	       st->fdes ? (double)st->bytes / st->fdes : 0.0, min_ms, med_ms,
	       eh_mb > 0 ? min_ms / eh_mb : 0.0, eh_mb > 0 ? med_ms / eh_mb : 0.0, st->rbp_lost);
	printf("  CPU time: min %.2f ms, median %.2f ms = %.1f ms/MB (min)\n", cpu[0] / 1e6,
	       cpu[reps / 2] / 1e6, eh_mb > 0 ? cpu[0] / 1e6 / eh_mb : 0.0);
	printf("  rows by kind:");
	for (k = 0; k < CFI_KIND_NR; k++)
		if (st->kinds[k])
			printf(" %s %" PRIu32, cfi_kind_name((unsigned)k), st->kinds[k]);
	printf("\n");
	if (do_dump)
		dump(t);
	cfi_table_free(t);
	free(ns);
	free(cpu);
	free(path);
	return 0;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int reps = 5, do_dump = 0, opt, rc = 0;
	bool lazy = false;

	while ((opt = getopt(argc, argv, "r:dl")) != -1) {
		if (opt == 'r')
			reps = atoi(optarg) > 0 ? atoi(optarg) : 1;
		else if (opt == 'd')
			do_dump = 1;
		else if (opt == 'l')
			lazy = true;
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: cfi_tables [-r REPS] [-d] [-l] FILE[:DEBUG_FILE]...\n");
		return 2;
	}
	for (; optind < argc; optind++)
		rc |= bench(argv[optind], reps, do_dump, lazy);
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS of this process: %.1f MiB\n", ru.ru_maxrss / 1024.0);
	return rc;
}
