// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_raw.c - libFuzzer target of the raw measurement reader
 * (user/merge/raw_read.h): any bytes, as a file, go to raw_file_open().
 * A file it accepts must keep the promises merge relies on without
 * further checks: every index in range, every string terminated, symbol
 * tables sorted (a Python frame found at its address, and its function
 * at the function's start), and an event stream a cursor reads to its end with the
 * same number of records and stack indices in range.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "merge/raw_read.h"

static void check_tables(const struct raw_file *rf)
{
	for (size_t i = 0; i < rf->nr_threads; i++)
		if (rf->threads[i].process >= rf->nr_processes || strlen(rf->threads[i].comm) >= (1u << 20))
			abort();
	for (size_t i = 0; i < rf->nr_processes; i++)
		for (size_t m = 0; m < rf->processes[i].nr_maps; m++)
			if (rf->processes[i].maps[m].start >= rf->processes[i].maps[m].end ||
			    !rf->processes[i].maps[m].path)
				abort();
	for (size_t i = 0; i < rf->nr_counts; i++)
		if (rf->counts[i].thread >= rf->nr_threads || rf->counts[i].user_stack >= rf->nr_stacks ||
		    rf->counts[i].kernel_stack >= rf->nr_stacks)
			abort();
	for (size_t i = 0; i < rf->nr_ksyms; i++)
		if (raw_symbol_find(rf->ksyms, rf->nr_ksyms, 0, rf->ksyms[i].address) != &rf->ksyms[i])
			abort();
	for (size_t i = 0; i < rf->nr_isyms; i++) {
		const struct raw_symbol *e = &rf->isyms[i];
		const struct raw_symbol *start =
			raw_symbol_find(rf->isyms, rf->nr_isyms, e->pid, e->function_start);

		if (raw_symbol_find(rf->isyms, rf->nr_isyms, e->pid, e->address) != e ||
		    !(e->address & 1) || !start || start->function_start != e->function_start ||
		    !e->function || !e->module || (e->file && !e->file[0]))
			abort();
	}
	for (int a = 0; a < rf->run.argc; a++)
		(void)strlen(rf->run.argv[a]);
	(void)strlen(rf->run.hostname);
}

static void check_events(const struct raw_file *rf)
{
	struct raw_cursor c;
	struct bpfprof_event ev;
	char why[RAW_WHY_SIZE];
	uint64_t n = 0;
	int r;

	if (raw_cursor_open(rf, &c))
		abort();
	while ((r = raw_cursor_next(&c, &ev, why)) > 0) {
		n++;
		if (ev.type == BPFPROF_EVENT_SAMPLE && (ev.sample.user_stack >= rf->nr_stacks ||
							ev.sample.kernel_stack >= rf->nr_stacks))
			abort();
		if ((ev.type == BPFPROF_EVENT_COMM || ev.type == BPFPROF_EVENT_EXEC) && !ev.comm)
			abort();
		if (ev.type == BPFPROF_EVENT_MMAP && (!ev.mapping || !ev.mapping->path))
			abort();
	}
	if (r < 0 || n != rf->nr_events)
		abort();	/* checked files read back the same */
	raw_cursor_close(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_raw", 0);
	char path[64], why[RAW_WHY_SIZE];
	struct raw_file rf;

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (raw_file_open(path, &rf, why) == 0) {
		check_tables(&rf);
		check_events(&rf);
		raw_file_drop_tables(&rf);
		check_events(&rf);
	} else if (!memchr(why, '\0', sizeof(why)) || !why[0]) {
		abort();	/* every failure explains itself */
	}
	raw_file_close(&rf);
	close(fd);
	return 0;
}
