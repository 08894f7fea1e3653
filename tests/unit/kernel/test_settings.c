// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_settings.c - unit tests of user/kernel/settings.c, the derivation of
 * struct sampler_config from the command line.  Map sizing (moved here
 * from test_options.c): without --stack-map-size
 * / --count-map-size the maps hold two seconds of samples on every sampled
 * CPU (4 stacks and 2 count entries per sample a second), as powers of two
 * between SETTINGS_*_MIN and SETTINGS_*_MAX; -c PERIOD gives the rate
 * 1e9 / PERIOD; sizes given on the command line are kept as they are; -C
 * sizes for its CPUs, not the online ones.  Also: the event's period, the
 * targets, and the ring buffer and count maps by mode; stored stacks sized
 * by --max-stack, and the stack map's slots bounded by memory for deep ones.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bpfprof.h"
#include "cli/options.h"
#include "kernel/settings.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The config of @args (@stream: a streaming output) on @nr_cpus online CPUs. */
static void derive(const char *const *args, int argc, bool stream, size_t nr_cpus,
		   struct sampler_config *cfg)
{
	static const uint32_t pid = 1234;
	struct options o;

	assert_int_equal(options_parse(argc, (char **)args, &o), 0);
	assert_int_equal(sampler_config_from_options(&o, stream, &pid, nr_cpus, cfg), 0);
	cfg->cpus = NULL;	/* freed with o */
	cfg->ids = NULL;
	options_free(&o);
}

static void sizes(const char *const *args, int argc, size_t nr_cpus, uint32_t *stacks,
		  uint32_t *counts)
{
	struct sampler_config cfg;

	derive(args, argc, false, nr_cpus, &cfg);
	*stacks = cfg.stack_map_size;
	*counts = cfg.count_map_size;
}

static void test_by_rate(void **unused)
{
	static const char *f99[] = { "bpfprof", "-a", "-F", "99" };
	static const char *f999[] = { "bpfprof", "-a", "-F", "999" };
	static const char *f4999[] = { "bpfprof", "-a", "-F", "4999" };
	uint32_t s, c;

	sizes(f99, 4, 2, &s, &c);		/* 198/s: the floors */
	assert_int_equal(s, SETTINGS_STACK_MAP_MIN);
	assert_int_equal(c, SETTINGS_COUNT_MAP_MIN);
	sizes(f999, 4, 2, &s, &c);		/* 1,998/s: 3,996 stacks, 3,996 counts */
	assert_int_equal(s, 4096);
	assert_int_equal(c, 4096);
	sizes(f4999, 4, 2, &s, &c);		/* 9,998/s: 19,996 stacks, 19,996 counts */
	assert_int_equal(s, SETTINGS_STACK_MAP_MAX);
	assert_int_equal(c, 32768);
	sizes(f999, 4, 64, &s, &c);		/* 63,936/s: both capped */
	assert_int_equal(s, SETTINGS_STACK_MAP_MAX);
	assert_int_equal(c, SETTINGS_COUNT_MAP_MAX);
	sizes(f999, 4, 0, &s, &c);		/* no CPU count: as one CPU */
	assert_int_equal(s, 4096);
}

static void test_by_period(void **unused)
{
	static const char *c250us[] = { "bpfprof", "-a", "-c", "250000" };	/* 4,000/s */
	uint32_t s, c;

	sizes(c250us, 4, 2, &s, &c);		/* 8,000/s: 16,000 stacks, 16,000 counts */
	assert_int_equal(s, SETTINGS_STACK_MAP_MAX);
	assert_int_equal(c, 16384);
}

static void test_given_sizes_kept(void **unused)
{
	static const char *args[] = { "bpfprof", "-a", "-F", "999", "--stack-map-size", "100",
				      "--count-map-size", "1000000" };
	uint32_t s, c;

	sizes(args, 8, 2, &s, &c);
	assert_int_equal(s, 100);
	assert_int_equal(c, 1000000);
}

/* -C 0: one CPU sampled, however many are online. */
static void test_cpu_list_sizes(void **unused)
{
	static const char *args[] = { "bpfprof", "-a", "-F", "999", "-C", "0" };
	uint32_t s, c;

	sizes(args, ARGC(args), 64, &s, &c);	/* 999/s, not 63,936/s */
	assert_int_equal(s, 4096);
	assert_int_equal(c, SETTINGS_COUNT_MAP_MIN);
}

/* 4,999 Hz on two CPUs: the stack map at its largest, the counts between. */
static void test_high_rate_sizes(void **unused)
{
	static const char *args[] = { "bpfprof", "-a", "-F", "4999" };
	uint32_t s, c;

	sizes(args, ARGC(args), 2, &s, &c);
	assert_int_equal(s, SETTINGS_STACK_MAP_MAX);
	assert_int_equal(c, 32768);
}

static void test_event(void **unused)
{
	static const char *f999[] = { "bpfprof", "-a", "-F", "999" };
	static const char *c250us[] = { "bpfprof", "-a", "-c", "250000" };
	struct sampler_config cfg;

	derive(f999, ARGC(f999), false, 2, &cfg);
	assert_int_equal(cfg.freq, 999);
	assert_int_equal(cfg.period, 1001001);	/* cpu-clock's period at 999 Hz */
	derive(c250us, ARGC(c250us), false, 2, &cfg);
	assert_int_equal(cfg.freq, 0);
	assert_int_equal(cfg.period, 250000);
}

static void test_targets(void **unused)
{
	static const char *all[] = { "bpfprof", "-a", "--idle" };
	static const char *tids[] = { "bpfprof", "-t", "7,8" };
	static const char *cmd[] = { "bpfprof", "--", "true" };
	static const uint32_t pid = 42;
	struct sampler_config cfg;
	struct options o;

	derive(all, ARGC(all), false, 2, &cfg);
	assert_int_equal(cfg.target, SAMPLER_ALL);
	assert_true(cfg.include_idle);
	assert_int_equal(cfg.target_map_size, SETTINGS_UNUSED_TARGET_MAP);
	assert_int_equal(cfg.exec_map_size, SETTINGS_EXEC_MAP_MAX);
	/* a whole machine's threads: the program's own LRU sizes */
	assert_int_equal(cfg.thread_map_size, 0);
	assert_int_equal(cfg.py_map_size, 0);
	assert_int_equal(cfg.py_thread_map_size, 0);
	assert_int_equal(cfg.cfi_request_map_size, 0);
	derive(tids, ARGC(tids), false, 2, &cfg);
	assert_int_equal(cfg.target, SAMPLER_TIDS);
	assert_int_equal(cfg.nr_ids, 2);
	assert_int_equal(cfg.target_map_size, SETTINGS_TARGET_MAP_MIN);
	assert_int_equal(cfg.exec_map_size, SETTINGS_EXEC_MAP_MAX);
	/* named threads and processes: smaller LRU maps, the code objects' not */
	assert_int_equal(cfg.thread_map_size, SETTINGS_TARGETED_THREAD_MAP);
	assert_int_equal(cfg.py_thread_map_size, SETTINGS_TARGETED_THREAD_MAP);
	assert_int_equal(cfg.cfi_request_map_size, SETTINGS_TARGETED_THREAD_MAP);
	assert_int_equal(cfg.py_map_size, SETTINGS_TARGETED_LRU_MAP);
	assert_true(SETTINGS_TARGETED_THREAD_MAP < SETTINGS_TARGETED_LRU_MAP);
	assert_int_equal(options_parse(ARGC(cmd), (char **)cmd, &o), 0);
	assert_int_equal(sampler_config_from_options(&o, false, NULL, 2, &cfg), -EINVAL);
	assert_int_equal(sampler_config_from_options(&o, false, &pid, 2, &cfg), 0);
	assert_int_equal(cfg.target, SAMPLER_TGIDS);
	assert_ptr_equal(cfg.ids, &pid);
	assert_int_equal(cfg.nr_ids, 1);
	assert_true(cfg.follow_forks);
	assert_int_equal(cfg.exec_map_size, cfg.target_map_size);
	assert_int_equal(cfg.thread_map_size, SETTINGS_TARGETED_THREAD_MAP);
	options_free(&o);
}

/* Counts mode uses the ring buffer for auto's copies of young processes'
 * stacks and for each CPU's batches of moved counts, the stream not the
 * count maps; fp leaves cfi_requests unused, --no-interpreters the Python
 * caches. */
static void test_by_mode(void **unused)
{
	static const char *args[] = { "bpfprof", "-a", "--ringbuf-size", "65536" };
	static const char *fp[] = { "bpfprof", "-a", "-g", "--ringbuf-size", "65536" };
	static const char *nopy[] = { "bpfprof", "-a", "--no-interpreters" };
	static const char *nopy_p[] = { "bpfprof", "-p", "7", "--no-interpreters" };
	static const char *fp_p[] = { "bpfprof", "-p", "7", "-g" };
	struct sampler_config cfg;

	derive(fp, ARGC(fp), false, 2, &cfg);
	assert_false(cfg.stream || cfg.cfi_copies);
	/* room for 16 batches of moved counts per CPU: 2 * 16 * (2,632 + 8) */
	assert_int_equal(cfg.ringbuf_size, 128 << 10);
	derive(fp, ARGC(fp), false, 64, &cfg);
	assert_int_equal(cfg.ringbuf_size, 4 << 20);	/* >= 64 * 16 * 2,640 */
	assert_int_equal(cfg.cfi_request_map_size, SETTINGS_UNUSED_LRU_MAP);
	assert_int_equal(cfg.py_map_size, 0);
	derive(fp_p, ARGC(fp_p), false, 2, &cfg);	/* unused wins over targeted */
	assert_int_equal(cfg.cfi_request_map_size, SETTINGS_UNUSED_LRU_MAP);
	derive(nopy, ARGC(nopy), false, 2, &cfg);
	assert_int_equal(cfg.cfi_request_map_size, 0);
	assert_int_equal(cfg.py_map_size, SETTINGS_UNUSED_LRU_MAP);
	derive(nopy_p, ARGC(nopy_p), false, 2, &cfg);	/* unused wins over targeted */
	assert_int_equal(cfg.py_map_size, SETTINGS_UNUSED_LRU_MAP);
	assert_int_equal(cfg.py_thread_map_size, SETTINGS_UNUSED_LRU_MAP);
	assert_int_equal(cfg.thread_map_size, SETTINGS_TARGETED_THREAD_MAP);
	derive(args, ARGC(args), false, 2, &cfg);
	assert_false(cfg.stream);
	assert_true(cfg.cfi && cfg.cfi_copies);
	assert_int_equal(cfg.cfi_request_map_size, 0);
	assert_int_equal(cfg.py_map_size, 0);
	assert_int_equal(cfg.user_stack_size, OPT_DEFAULT_AUTO_STACK);
	assert_int_equal(cfg.ringbuf_size, 2 << 20);	/* >= 48 * (32768 + 256) */
	assert_int_equal(cfg.count_map_size, SETTINGS_COUNT_MAP_MIN);
	derive(args, ARGC(args), true, 2, &cfg);
	assert_true(cfg.stream);
	assert_int_equal(cfg.ringbuf_size, 65536);
	assert_int_equal(cfg.count_map_size, SETTINGS_UNUSED_COUNT_MAP);
}

/* dwarf streams, and its ring buffer holds 256 records of the copy size. */
static void test_dwarf(void **unused)
{
	static const char *small[] = { "bpfprof", "-a", "--call-graph", "dwarf,1024",
				       "--ringbuf-size", "4096" };
	static const char *big[] = { "bpfprof", "-a", "--call-graph", "dwarf,32768" };
	struct sampler_config cfg;

	derive(small, ARGC(small), false, 2, &cfg);
	assert_true(cfg.stream && cfg.dwarf && !cfg.cfi_copies);
	assert_int_equal(cfg.user_stack_size, 1024);
	assert_int_equal(cfg.ringbuf_size, 512 << 10);	/* >= 256 * (1024 + 256) */
	derive(big, ARGC(big), false, 2, &cfg);
	assert_int_equal(cfg.ringbuf_size, 16 << 20);	/* >= 256 * (32768 + 256) */
	assert_int_equal(cfg.max_depth, 127);
}

/* The largest copy, perf's: 256 records of 65,528 bytes need 32 MiB. */
static void test_dwarf_largest_copy(void **unused)
{
	static const char *args[] = { "bpfprof", "-a", "--call-graph", "dwarf,65528" };
	struct sampler_config cfg;

	derive(args, ARGC(args), false, 2, &cfg);
	assert_int_equal(cfg.user_stack_size, BPFPROF_MAX_USER_STACK);
	assert_int_equal(cfg.ringbuf_size, 32 << 20);	/* >= 256 * (65528 + 256) */
}

/*
 * dwarf --max-stack 4096: the collector unwinds the user stacks, the
 * program stores kernel stacks only, so stored stacks keep 127 frames (no
 * 32 KiB slots for nothing), and the stack map holds one second of one
 * stack a sample: 1,998 at 999 Hz on 2 CPUs, the floor of 4,096.
 */
static void test_dwarf_deep_stores_kernel_depth(void **unused)
{
	static const char *args[] = { "bpfprof", "-a", "-F", "999", "--call-graph", "dwarf,65528",
				      "--max-stack", "4096" };
	struct sampler_config cfg;

	derive(args, ARGC(args), false, 2, &cfg);
	assert_int_equal(cfg.max_depth, BPFPROF_MAX_FP_DEPTH);
	assert_int_equal(cfg.stack_value_size, 8 + 8 * BPFPROF_MAX_FP_DEPTH);
	assert_int_equal(cfg.stack_map_size, 4096);
}

/* fp --max-stack N: stored stacks have room for N frames, the map its rate size. */
static void test_value_size_by_depth(void **unused)
{
	static const char *d9[] = { "bpfprof", "-a", "-F", "999", "--max-stack", "9" };
	static const char *dflt[] = { "bpfprof", "-a", "-F", "999" };
	struct sampler_config cfg;

	derive(d9, ARGC(d9), false, 2, &cfg);
	assert_int_equal(cfg.max_depth, 9);
	assert_int_equal(cfg.stack_value_size, 80);
	assert_int_equal(cfg.stack_map_size, 4096);
	derive(dflt, ARGC(dflt), false, 2, &cfg);
	assert_int_equal(cfg.max_depth, 127);
	assert_int_equal(cfg.stack_value_size, 1024);
	assert_int_equal(cfg.stack_map_size, 4096);
}

/*
 * Stored stacks deeper than 127 frames (auto mode's BPF walker stores user
 * stacks of up to --max-stack frames; options that reach settings.c as
 * the walker's mode will): the stack map keeps to
 * SETTINGS_STACK_MAP_MAX_BYTES, a given --stack-map-size is kept.
 */
static void test_deep_stored_stacks_bounded(void **unused)
{
	static const uint32_t pid = 1;
	struct options o = { .targets = TARGETS_ALL, .freq = 999, .max_stack = 4096,
			     .ringbuf_size = OPT_DEFAULT_RINGBUF_SIZE };
	struct sampler_config cfg;
	uint64_t bytes;

	assert_int_equal(sampler_config_from_options(&o, false, &pid, 2, &cfg), 0);
	assert_int_equal(cfg.max_depth, 4096);
	assert_int_equal(cfg.stack_value_size, 8 + 8 * 4096);
	bytes = (uint64_t)cfg.stack_map_size * (cfg.stack_value_size + SETTINGS_STACK_SLOT_OVERHEAD);
	assert_true(bytes <= SETTINGS_STACK_MAP_MAX_BYTES);
	assert_int_equal(cfg.stack_map_size,
			 SETTINGS_STACK_MAP_MAX_BYTES / (8 + 8 * 4096 + SETTINGS_STACK_SLOT_OVERHEAD));
	o.max_stack = 256;	/* 2 KiB values: the 4,096 slots of 999 Hz fit (8.6 MB) */
	assert_int_equal(sampler_config_from_options(&o, false, &pid, 2, &cfg), 0);
	assert_int_equal(cfg.stack_map_size, 4096);
	o.max_stack = 4096;
	o.stack_map_size = 100000;
	assert_int_equal(sampler_config_from_options(&o, false, &pid, 2, &cfg), 0);
	assert_int_equal(cfg.stack_map_size, 100000);
	o.max_stack = 4097;
	assert_int_equal(sampler_config_from_options(&o, false, &pid, 2, &cfg), -EINVAL);
	o.max_stack = 0;
	assert_int_equal(sampler_config_from_options(&o, false, &pid, 2, &cfg), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_rate),
		cmocka_unit_test(test_by_period),
		cmocka_unit_test(test_given_sizes_kept),
		cmocka_unit_test(test_cpu_list_sizes),
		cmocka_unit_test(test_high_rate_sizes),
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_by_mode),
		cmocka_unit_test(test_dwarf),
		cmocka_unit_test(test_dwarf_largest_copy),
		cmocka_unit_test(test_dwarf_deep_stores_kernel_depth),
		cmocka_unit_test(test_value_size_by_depth),
		cmocka_unit_test(test_deep_stored_stacks_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
