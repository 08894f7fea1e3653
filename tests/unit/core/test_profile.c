// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_profile.c - unit tests of user/profile.c's views: the per-process
 * view cut from the full view (profile_view_process) equals the view built
 * for that pid alone (profile_view with a pid), for every process of a
 * profile with interleaved pids, several threads and shared stacks; and
 * the empty view for a run without samples.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile.h"

static const struct bpfprof_run run = { .event = "cpu-clock", .sample_freq = 99 };

/* 5 processes, 1..4 threads each, counts over 6 user and 2 kernel stacks. */
static struct profile *build(void)
{
	static const uint32_t pids[] = { 300, 7, 1200, 45, 9000 };
	struct profile *p = profile_new();
	uint32_t ustk[6], kstk[2];

	assert_non_null(p);
	for (uint32_t s = 0; s < 6; s++) {
		uint64_t ips[3] = { 0x1000 + s, 0x2000, 0x3000 + s % 2 };

		assert_int_equal(profile_intern_stack(p, 100 + s, ips, 3, 0, &ustk[s]), 0);
	}
	for (uint32_t s = 0; s < 2; s++) {
		uint64_t ips[2] = { 0xffffffff81000000ull + s, 0xffffffff81000100ull };

		assert_int_equal(profile_intern_stack(p, 200 + s, ips, 2, 1, &kstk[s]), 0);
	}
	for (uint32_t i = 0; i < 5; i++) {
		assert_non_null(profile_proc(p, pids[i]));
		for (uint32_t t = 0; t <= i % 4; t++) {
			uint32_t tid = pids[i] + t * 3;

			assert_int_equal(profile_thread(p, pids[i], tid, "w"), 0);
			for (uint32_t s = 0; s < 6; s += 1 + t)
				assert_int_equal(profile_add_samples(p, pids[i], tid, ustk[s],
								     s % 3 ? 0 : kstk[s % 2],
								     1 + s + i), 0);
		}
	}
	return p;
}

/* A deep copy of a view's arrays, to compare after the next view replaces them. */
struct copy {
	struct bpfprof_profile v;
	struct bpfprof_process *procs;
	struct bpfprof_thread *threads;
	struct bpfprof_count *counts;
};

static void copy_view(const struct bpfprof_profile *v, struct copy *c)
{
	c->v = *v;
	c->procs = malloc((v->nr_processes + 1) * sizeof(*c->procs));
	c->threads = malloc((v->nr_threads + 1) * sizeof(*c->threads));
	c->counts = malloc((v->nr_counts + 1) * sizeof(*c->counts));
	assert_true(c->procs && c->threads && c->counts);
	memcpy(c->procs, v->processes, v->nr_processes * sizeof(*c->procs));
	memcpy(c->threads, v->threads, v->nr_threads * sizeof(*c->threads));
	memcpy(c->counts, v->counts, v->nr_counts * sizeof(*c->counts));
}

static void free_copy(struct copy *c)
{
	free(c->procs);
	free(c->threads);
	free(c->counts);
}

static void assert_same_view(const struct copy *want, const struct bpfprof_profile *got)
{
	assert_int_equal(got->nr_processes, want->v.nr_processes);
	assert_int_equal(got->nr_threads, want->v.nr_threads);
	assert_int_equal(got->nr_counts, want->v.nr_counts);
	assert_int_equal(got->nr_stacks, want->v.nr_stacks);
	assert_ptr_equal(got->stacks, want->v.stacks);
	assert_ptr_equal(got->run, want->v.run);
	for (size_t i = 0; i < got->nr_processes; i++) {
		assert_int_equal(got->processes[i].pid, want->procs[i].pid);
		assert_int_equal(got->processes[i].first_thread, want->procs[i].first_thread);
		assert_int_equal(got->processes[i].nr_threads, want->procs[i].nr_threads);
		assert_int_equal(got->processes[i].samples, want->procs[i].samples);
	}
	for (size_t i = 0; i < got->nr_threads; i++) {
		assert_int_equal(got->threads[i].tid, want->threads[i].tid);
		assert_int_equal(got->threads[i].pid, want->threads[i].pid);
		assert_int_equal(got->threads[i].process, want->threads[i].process);
		assert_int_equal(got->threads[i].samples, want->threads[i].samples);
	}
	assert_memory_equal(got->counts, want->counts, got->nr_counts * sizeof(*got->counts));
}

static void test_process_views_match(void **unused)
{
	struct profile *p = build();
	struct bpfprof_profile all, one;
	struct copy full, want;
	struct profile_slice slice;
	uint64_t total = 0;

	assert_int_equal(profile_view(p, &run, 0, &all), 0);
	assert_int_equal(all.nr_processes, 5);
	copy_view(&all, &full);
	for (size_t i = 0; i < full.v.nr_processes; i++) {
		assert_int_equal(profile_view(p, &run, full.procs[i].pid, &one), 0);
		copy_view(&one, &want);
		/* the cut works on the full view: rebuild it after the per-pid one */
		assert_int_equal(profile_view(p, &run, 0, &all), 0);
		assert_int_equal(profile_view_process(&all, i, &slice, &one), 0);
		assert_same_view(&want, &one);
		for (size_t k = 0; k < one.nr_counts; k++)
			total += one.counts[k].samples;
		profile_slice_free(&slice);
		free_copy(&want);
	}
	/* every count of the full view lands in exactly one process view */
	for (size_t k = 0; k < full.v.nr_counts; k++)
		total -= full.counts[k].samples;
	assert_int_equal(total, 0);
	free_copy(&full);
	profile_free(p);
}

static void test_empty_view(void **unused)
{
	struct profile *p = profile_new();
	struct bpfprof_profile all, one;
	struct profile_slice slice;

	assert_int_equal(profile_view(p, &run, 0, &all), 0);
	assert_int_equal(all.nr_processes, 0);
	assert_int_equal(profile_view_process(&all, 0, &slice, &one), 0);
	assert_int_equal(one.nr_processes, 0);
	assert_int_equal(one.nr_threads, 0);
	assert_int_equal(one.nr_counts, 0);
	assert_ptr_equal(one.run, &run);
	profile_slice_free(&slice);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process_views_match),
		cmocka_unit_test(test_empty_view),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
