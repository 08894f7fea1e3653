// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_profile.c - unit tests of user/profile/profile.c's views: the per-process
 * view cut from the full view (profile_view_process) holds exactly that
 * process's threads and counts, renumbered from 0 (computed here by
 * filtering the full view on the pid), for every process of a profile with
 * interleaved pids, several threads and shared stacks; the empty view for
 * a run without samples; stack ids that share a slot of the id cache; and
 * per-thread and per-process totals kept with the counts (repeated adds,
 * a thread id reused by another process, many more keys than the count
 * cache has slots); each thread's identity (host, rank, logical
 * thread index); and the code mappings of images a process executed away
 * from (proc_retire_maps, proc_restore_past_maps); and an exited
 * process's code mappings alone (proc_keep_code_maps).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"

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

/* What the view of process @i of @all must be: its entry with first_thread
 * 0, its threads (by pid) with process 0, its counts renumbered. */
struct expect {
	struct bpfprof_process proc;
	struct bpfprof_thread threads[16];
	struct bpfprof_count counts[128];
	size_t nr_threads, nr_counts;
};

static void expect_process(const struct bpfprof_profile *all, size_t i, struct expect *e)
{
	uint32_t pid = all->processes[i].pid;
	long renumber[64];

	memset(e, 0, sizeof(*e));
	e->proc = all->processes[i];
	e->proc.first_thread = 0;
	assert_true(all->nr_threads <= 64);
	for (size_t t = 0; t < all->nr_threads; t++) {
		renumber[t] = -1;
		if (all->threads[t].pid != pid)
			continue;
		assert_true(e->nr_threads < 16);
		renumber[t] = (long)e->nr_threads;
		e->threads[e->nr_threads] = all->threads[t];
		e->threads[e->nr_threads++].process = 0;
	}
	for (size_t k = 0; k < all->nr_counts; k++) {
		if (renumber[all->counts[k].thread] < 0)
			continue;
		assert_true(e->nr_counts < 128);
		e->counts[e->nr_counts] = all->counts[k];
		e->counts[e->nr_counts++].thread = (uint32_t)renumber[all->counts[k].thread];
	}
}

static void assert_same_view(const struct expect *want, const struct bpfprof_profile *all,
			     const struct bpfprof_profile *got)
{
	assert_int_equal(got->nr_processes, 1);
	assert_int_equal(got->nr_threads, want->nr_threads);
	assert_int_equal(got->nr_counts, want->nr_counts);
	assert_int_equal(got->nr_stacks, all->nr_stacks);
	assert_ptr_equal(got->stacks, all->stacks);
	assert_ptr_equal(got->run, all->run);
	assert_int_equal(got->processes[0].pid, want->proc.pid);
	assert_int_equal(got->processes[0].first_thread, 0);
	assert_int_equal(got->processes[0].nr_threads, want->proc.nr_threads);
	assert_int_equal(got->processes[0].samples, want->proc.samples);
	for (size_t i = 0; i < got->nr_threads; i++) {
		assert_int_equal(got->threads[i].tid, want->threads[i].tid);
		assert_int_equal(got->threads[i].pid, want->threads[i].pid);
		assert_int_equal(got->threads[i].process, 0);
		assert_int_equal(got->threads[i].samples, want->threads[i].samples);
	}
	assert_memory_equal(got->counts, want->counts, got->nr_counts * sizeof(*got->counts));
}

static void test_process_views_match(void **unused)
{
	struct profile *p = build();
	struct bpfprof_profile all, one;
	struct profile_slice slice;
	struct expect *want = malloc(sizeof(*want));
	uint64_t total = 0;

	assert_non_null(want);
	assert_int_equal(profile_view(p, &run, &all), 0);
	assert_int_equal(all.nr_processes, 5);
	for (size_t i = 0; i < all.nr_processes; i++) {
		expect_process(&all, i, want);
		assert_true(want->nr_threads >= 1 && want->nr_counts >= 1);
		assert_int_equal(want->nr_threads, all.processes[i].nr_threads);
		assert_int_equal(profile_view_process(&all, i, &slice, &one), 0);
		assert_same_view(want, &all, &one);
		for (size_t k = 0; k < one.nr_counts; k++)
			total += one.counts[k].samples;
		profile_slice_free(&slice);
	}
	/* every count of the full view lands in exactly one process view */
	for (size_t k = 0; k < all.nr_counts; k++)
		total -= all.counts[k].samples;
	assert_int_equal(total, 0);
	free(want);
	profile_free(p);
}

static void test_empty_view(void **unused)
{
	struct profile *p = profile_new();
	struct bpfprof_profile all, one;
	struct profile_slice slice;

	assert_int_equal(profile_view(p, &run, &all), 0);
	assert_int_equal(all.nr_processes, 0);
	assert_int_equal(profile_view_process(&all, 0, &slice, &one), 0);
	assert_int_equal(one.nr_processes, 0);
	assert_int_equal(one.nr_threads, 0);
	assert_int_equal(one.nr_counts, 0);
	assert_ptr_equal(one.run, &run);
	profile_slice_free(&slice);
	profile_free(p);
}

/* Ids 1024 apart share a slot of profile.c's direct-mapped id cache. */
static void test_stack_id_cache(void **unused)
{
	struct profile *p = profile_new();
	uint32_t idx[4], got;

	assert_non_null(p);
	for (uint32_t i = 0; i < 4; i++) {
		uint64_t ips[2] = { 0x1000 + i, 0x2000 };

		assert_int_equal(profile_intern_stack(p, 77 + 1024ull * i, ips, 2, 0, &idx[i]), 0);
	}
	for (int round = 0; round < 3; round++)
		for (uint32_t i = 0; i < 4; i++) {
			assert_int_equal(profile_find_stack(p, 77 + 1024ull * i, &got), 0);
			assert_int_equal(got, idx[i]);
			assert_int_equal(profile_stack(p, got)->ips[0], 0x1000 + i);
		}
	assert_int_equal(profile_find_stack(p, 77 + 1024ull * 9, &got), -ENOENT);
	assert_int_equal(profile_find_stack(p, 0, &got), 0);
	assert_int_equal(got, 0);
	profile_free(p);
}

static const struct bpfprof_thread *view_thread(const struct bpfprof_profile *v, uint32_t tid)
{
	for (size_t i = 0; i < v->nr_threads; i++)
		if (v->threads[i].tid == tid)
			return &v->threads[i];
	return NULL;
}

/* Totals follow every add, on the fast path (same key again) too. */
static void test_totals(void **unused)
{
	struct profile *p = profile_new();
	struct bpfprof_profile v;
	uint32_t u;
	uint64_t ips[1] = { 0x4000 };

	assert_non_null(p);
	assert_int_equal(profile_intern_stack(p, 5, ips, 1, 0, &u), 0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(profile_add_samples(p, 10, 11, u, 0, 2), 0);
		assert_int_equal(profile_add_samples(p, 10, 12, u, 0, 1), 0);
	}
	assert_int_equal(profile_view(p, &run, &v), 0);
	assert_int_equal(v.nr_processes, 1);
	assert_int_equal(v.processes[0].samples, 30);
	assert_int_equal(view_thread(&v, 11)->samples, 20);
	assert_int_equal(view_thread(&v, 12)->samples, 10);
	/* tid 12 exits, and another process gets the number */
	assert_int_equal(profile_add_samples(p, 20, 12, u, 0, 5), 0);
	assert_int_equal(profile_add_samples(p, 20, 12, u, 0, 5), 0);
	assert_int_equal(profile_view(p, &run, &v), 0);
	assert_int_equal(v.nr_processes, 2);
	assert_int_equal(v.processes[1].pid, 20);
	assert_int_equal(v.processes[1].samples, 10);
	assert_int_equal(view_thread(&v, 12)->pid, 20);
	profile_free(p);
}

/* 6,000 keys added in turn, 3 times each: far more keys than cache slots. */
static void test_many_counts(void **unused)
{
	struct profile *p = profile_new();
	struct bpfprof_profile v;
	uint32_t u[40];

	assert_non_null(p);
	for (uint32_t s = 0; s < 40; s++) {
		uint64_t ips[1] = { 0x5000 + s };

		assert_int_equal(profile_intern_stack(p, 1000 + s, ips, 1, 0, &u[s]), 0);
	}
	for (int round = 0; round < 3; round++)
		for (uint32_t s = 0; s < 40; s++)
			for (uint32_t t = 0; t < 150; t++)
				assert_int_equal(profile_add_samples(p, 100 + t % 3, 500 + t, u[s],
								     0, 1), 0);
	assert_int_equal(profile_view(p, &run, &v), 0);
	assert_int_equal(v.nr_processes, 3);
	assert_int_equal(v.nr_threads, 150);
	assert_int_equal(v.nr_counts, 6000);
	for (size_t i = 0; i < v.nr_counts; i++)
		assert_int_equal(v.counts[i].samples, 3);
	for (size_t i = 0; i < v.nr_threads; i++)
		assert_int_equal(v.threads[i].samples, 120);
	for (size_t i = 0; i < v.nr_processes; i++)
		assert_int_equal(v.processes[i].samples, 50 * 120);
	profile_free(p);
}

/* Each thread's identity: this host, node 0, its process's rank (-1
 * unless set), its ids, and hpcrun's logical thread index: 0 for the
 * main thread, then 1.. by tid; the per-process view keeps them. */
static void test_thread_identities(void **unused)
{
	static const struct bpfprof_run host_run = { .event = "cpu-clock", .hostname = "node7" };
	struct profile *p = build();
	struct bpfprof_profile all, one;
	struct profile_slice slice;

	(void)unused;
	profile_find_proc(p, 45)->rank = 3;
	assert_int_equal(profile_view(p, &host_run, &all), 0);
	assert_non_null(all.thread_ids);
	assert_int_equal(all.nr_nodes, 1);
	for (size_t i = 0; i < all.nr_threads; i++) {
		const struct bpfprof_thread *t = &all.threads[i];
		const struct bpfprof_thread_identity *id = &all.thread_ids[i];
		uint32_t want = (t->tid - t->pid) / 3;	/* build(): tid = pid + 3 * t */

		assert_string_equal(id->host, "node7");
		assert_int_equal(id->node, 0);
		assert_int_equal(id->rank, t->pid == 45 ? 3 : -1);
		assert_int_equal(id->thread, want);
		assert_int_equal(id->host_pid, t->pid);
		assert_int_equal(id->host_tid, t->tid);
	}
	for (size_t i = 0; i < all.nr_processes; i++) {
		const struct bpfprof_process *pr = &all.processes[i];

		assert_int_equal(profile_view_process(&all, i, &slice, &one), 0);
		for (uint32_t t = 0; t < pr->nr_threads; t++)
			assert_ptr_equal(&one.thread_ids[t], &all.thread_ids[pr->first_thread + t]);
		profile_slice_free(&slice);
	}
	profile_free(p);
}

/*
 * A merged profile: processes of three hosts, one of them without
 * samples, and ids renumbered on collision.  Nodes number the hosts with
 * samples in host name order; identities carry each host's name and id
 * and the ids on the host, not the renumbered ones.
 */
static void test_merged_hosts(void **unused)
{
	static const struct bpfprof_run run = { .event = "cpu-clock", .hostname = "2 nodes" };
	struct profile *p = profile_new();
	struct bpfprof_profile v;
	uint32_t zeta, alpha, idle, again;
	struct proc *pr;

	(void)unused;
	assert_int_equal(profile_add_host(p, "zeta", 0x11, &zeta), 0);
	assert_int_equal(profile_add_host(p, "idle", 0x22, &idle), 0);
	assert_int_equal(profile_add_host(p, "alpha", 0x33, &alpha), 0);
	assert_int_equal(profile_add_host(p, "zeta", 0x11, &again), 0);
	assert_int_equal(again, zeta);
	/* pid 100 on zeta; pid 100 on alpha, renumbered to 4194304 */
	assert_non_null(pr = profile_proc(p, 100));
	pr->host = zeta;
	assert_non_null(pr = profile_proc(p, 4194304));
	pr->host = alpha;
	pr->host_pid = 100;
	pr->rank = 1;
	assert_non_null(pr = profile_proc(p, 7));	/* on idle, no samples */
	pr->host = idle;
	assert_int_equal(profile_add_samples(p, 100, 100, 0, 0, 5), 0);
	assert_int_equal(profile_add_samples(p, 100, 101, 0, 0, 5), 0);
	assert_int_equal(profile_add_samples(p, 4194304, 4194304, 0, 0, 3), 0);
	assert_int_equal(profile_add_samples(p, 4194304, 4194305, 0, 0, 2), 0);
	assert_int_equal(profile_set_host_tid(p, 4194304, 100), 0);
	assert_int_equal(profile_set_host_tid(p, 4194305, 101), 0);
	assert_int_equal(profile_set_host_tid(p, 999, 1), -ENOENT);
	assert_int_equal(profile_view(p, &run, &v), 0);
	assert_int_equal(v.nr_nodes, 2);
	assert_int_equal(v.nr_threads, 4);
	for (size_t i = 0; i < v.nr_threads; i++) {
		const struct bpfprof_thread_identity *id = &v.thread_ids[i];
		int on_alpha = v.threads[i].pid == 4194304;

		assert_string_equal(id->host, on_alpha ? "alpha" : "zeta");
		assert_int_equal(id->node, on_alpha ? 0 : 1);
		assert_int_equal(id->host_id, on_alpha ? 0x33 : 0x11);
		assert_int_equal(id->rank, on_alpha ? 1 : -1);
		assert_int_equal(id->host_pid, 100);
		assert_int_equal(id->host_tid, v.threads[i].tid % 2 ? 101 : 100);
		assert_int_equal(id->thread, v.threads[i].tid == v.threads[i].pid ? 0 : 1);
	}
	profile_free(p);
}

/* Nodes keep distinct physical ids: a host id of 0 (unresolvable host
 * name) or one another host already has (cloned /etc/hostid) is replaced
 * by a hash of the name; a free non-zero id is kept. */
static void test_host_ids_unique(void **unused)
{
	static const char *const names[] = { "n1", "n2", "n3", "n4" };
	static const uint32_t ids[] = { 0, 0, 0x7f0100, 0x7f0100 };
	struct profile *p = profile_new();
	struct bpfprof_profile view;
	uint32_t host[4];

	(void)unused;
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(profile_add_host(p, names[i], ids[i], &host[i]), 0);
		assert_int_equal(profile_thread(p, 100 + i, 100 + i, "r"), 0);
		profile_find_proc(p, 100 + i)->host = host[i];
		assert_int_equal(profile_add_samples(p, 100 + i, 100 + i, 0, 0, 1), 0);
	}
	assert_int_equal(profile_view(p, &run, &view), 0);
	assert_int_equal(view.nr_nodes, 4);
	for (size_t i = 0; i < view.nr_threads; i++) {
		assert_int_not_equal(view.thread_ids[i].host_id, 0);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(view.thread_ids[i].host_id, view.thread_ids[j].host_id);
		if (!strcmp(view.thread_ids[i].host, "n3"))
			assert_int_equal(view.thread_ids[i].host_id, 0x7f0100);
	}
	profile_free(p);
}

static struct bpfprof_mapping mapping(uint64_t start, uint64_t end, uint32_t prot, const char *path)
{
	return (struct bpfprof_mapping){ .start = start, .end = end, .prot = prot, .path = path };
}

static void assert_mapping(const struct proc *pr, size_t i, uint64_t start, const char *path)
{
	assert_true(i < pr->nr_maps);
	assert_int_equal(pr->maps[i].start, start);
	assert_string_equal(pr->maps[i].path, path);
}

/*
 * Two execs: the first image's code survives where no later image mapped
 * anything, the second's goes over the first's it overlaps, the current
 * image's over both; data, anonymous code and [vdso] are not kept; while
 * sampling the mappings are the current image's alone.
 */
static void test_past_images(void **unused)
{
	const uint32_t x = BPFPROF_PROT_EXEC | BPFPROF_PROT_READ, r = BPFPROF_PROT_READ;
	const struct bpfprof_mapping first[] = {
		mapping(0x1000, 0x2000, x, "/bin/sh"),
		mapping(0x2000, 0x3000, r, "/bin/sh"),		/* data: dropped */
		mapping(0x5000, 0x6000, x, "/lib/libc.so"),	/* under the second's */
		mapping(0x7000, 0x8000, x, ""),			/* JIT code: dropped */
		mapping(0x9000, 0xa000, x, "[vdso]"),		/* dropped */
	}, second[] = {
		mapping(0x5800, 0x6800, x, "/bin/env"),
		mapping(0xc000, 0xd000, x, "/lib/libc.so"),	/* under the current one */
	}, current[] = {
		mapping(0xc800, 0xe000, x, "/bin/prog"),
		mapping(0xf000, 0x10000, x, "/lib/libc.so"),
	};
	struct profile *p = profile_new();
	struct proc *pr;

	assert_non_null(p);
	pr = profile_proc(p, 42);
	assert_non_null(pr);
	assert_int_equal(proc_merge_maps(pr, first, 5), 0);
	assert_int_equal(proc_retire_maps(pr), 0);
	assert_int_equal(pr->nr_maps, 0);
	assert_int_equal(proc_merge_maps(pr, second, 2), 0);
	assert_int_equal(proc_retire_maps(pr), 0);
	assert_int_equal(proc_merge_maps(pr, current, 2), 0);
	/* while sampling: the current image only */
	assert_int_equal(pr->nr_maps, 2);
	assert_null(proc_find_map(pr, 0x1800));

	assert_int_equal(profile_restore_past_maps(p), 0);
	assert_int_equal(pr->nr_maps, 4);
	assert_mapping(pr, 0, 0x1000, "/bin/sh");
	assert_mapping(pr, 1, 0x5800, "/bin/env");
	assert_mapping(pr, 2, 0xc800, "/bin/prog");
	assert_mapping(pr, 3, 0xf000, "/lib/libc.so");
	assert_null(pr->past_maps);
	assert_string_equal(proc_find_map(pr, 0x5900)->path, "/bin/env");
	assert_null(proc_find_map(pr, 0x5400));		/* the first libc, overlapped */
	assert_null(proc_find_map(pr, 0x9800));
	/* nothing left to restore */
	assert_int_equal(proc_restore_past_maps(pr), 0);
	assert_int_equal(pr->nr_maps, 4);
	profile_free(p);
}

/*
 * At its exit a process keeps the mappings its samples can be in: code
 * (file, anonymous JIT code, [vdso]), also of its past images; its data,
 * heap and stack go, and what it keeps still names the samples.
 */
static void test_exited_keeps_code(void **unused)
{
	const uint32_t x = BPFPROF_PROT_EXEC | BPFPROF_PROT_READ, r = BPFPROF_PROT_READ,
		       rw = BPFPROF_PROT_READ | BPFPROF_PROT_WRITE;
	const struct bpfprof_mapping before[] = {
		mapping(0x1000, 0x2000, x, "/bin/sh"),
		mapping(0x2000, 0x3000, rw, "/bin/sh"),
	}, after[] = {
		mapping(0x10000, 0x11000, r, "/bin/prog"),
		mapping(0x11000, 0x12000, x, "/bin/prog"),
		mapping(0x12000, 0x13000, rw, "/bin/prog"),
		mapping(0x20000, 0x30000, rw, "[heap]"),
		mapping(0x40000, 0x41000, x, ""),
		mapping(0x50000, 0x51000, x, "[vdso]"),
		mapping(0x60000, 0x70000, rw, "[stack]"),
	};
	struct profile *p = profile_new();
	struct proc *pr;

	assert_non_null(p);
	pr = profile_proc(p, 7);
	assert_non_null(pr);
	assert_int_equal(proc_merge_maps(pr, before, 2), 0);
	assert_int_equal(proc_retire_maps(pr), 0);
	assert_int_equal(proc_merge_maps(pr, after, 7), 0);
	proc_keep_code_maps(pr);
	assert_int_equal(pr->nr_maps, 3);
	assert_mapping(pr, 0, 0x11000, "/bin/prog");
	assert_mapping(pr, 1, 0x40000, "");
	assert_mapping(pr, 2, 0x50000, "[vdso]");
	assert_int_equal(pr->nr_past_maps, 1);
	assert_string_equal(proc_find_map(pr, 0x11800)->path, "/bin/prog");
	assert_null(proc_find_map(pr, 0x25000));
	assert_int_equal(profile_restore_past_maps(p), 0);
	assert_string_equal(proc_find_map(pr, 0x1800)->path, "/bin/sh");
	/* a process with only data left keeps nothing, and that is no error */
	pr = profile_proc(p, 8);
	assert_int_equal(proc_merge_maps(pr, &after[3], 1), 0);
	proc_keep_code_maps(pr);
	assert_int_equal(pr->nr_maps, 0);
	assert_null(pr->maps);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process_views_match),
		cmocka_unit_test(test_empty_view),
		cmocka_unit_test(test_stack_id_cache),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_many_counts),
		cmocka_unit_test(test_thread_identities),
		cmocka_unit_test(test_host_ids_unique),
		cmocka_unit_test(test_merged_hosts),
		cmocka_unit_test(test_past_images),
		cmocka_unit_test(test_exited_keeps_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
