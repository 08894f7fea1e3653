// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile_slice.c - owns the view of one process cut from the full view
 * of a profile (profile_view_process(), profile.h): for per-process
 * formats, one output per process.  It reads only the public struct
 * bpfprof_profile, never the collector's tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* First count of @all whose thread index is >= @thread (counts are sorted
 * by thread). */
static size_t first_count_of(const struct bpfprof_profile *all, uint32_t thread)
{
	size_t lo = 0, hi = all->nr_counts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (all->counts[mid].thread < thread)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int profile_view_process(const struct bpfprof_profile *all, size_t index,
			 struct profile_slice *slice, struct bpfprof_profile *view)
{
	const struct bpfprof_process *pr = index < all->nr_processes ? &all->processes[index] : NULL;
	uint32_t first = pr ? pr->first_thread : 0, nr_threads = pr ? pr->nr_threads : 0;
	size_t c0 = first_count_of(all, first), c1 = first_count_of(all, first + nr_threads);

	memset(slice, 0, sizeof(*slice));
	*view = *all;
	view->nr_processes = view->nr_threads = view->nr_counts = 0;
	view->processes = NULL;
	view->threads = NULL;
	view->counts = NULL;
	view->thread_ids = NULL;
	if (!pr)
		return 0;
	slice->threads = calloc(nr_threads + 1, sizeof(*slice->threads));
	slice->counts = calloc(c1 - c0 + 1, sizeof(*slice->counts));
	if (!slice->threads || !slice->counts) {
		profile_slice_free(slice);
		return -ENOMEM;
	}
	slice->process = *pr;
	slice->process.first_thread = 0;
	for (uint32_t t = 0; t < nr_threads; t++) {
		slice->threads[t] = all->threads[first + t];
		slice->threads[t].process = 0;
	}
	for (size_t i = c0; i < c1; i++) {
		slice->counts[i - c0] = all->counts[i];
		slice->counts[i - c0].thread -= first;
	}
	view->processes = &slice->process;
	view->nr_processes = 1;
	view->threads = slice->threads;
	view->nr_threads = nr_threads;
	view->counts = slice->counts;
	view->nr_counts = c1 - c0;
	view->thread_ids = all->thread_ids ? all->thread_ids + first : NULL;
	return 0;
}

void profile_slice_free(struct profile_slice *slice)
{
	free(slice->threads);
	free(slice->counts);
	memset(slice, 0, sizeof(*slice));
}
