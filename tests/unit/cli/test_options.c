// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_options.c - unit tests of user/cli/options.c: the parser stores what
 * the user typed (or the documented default) and rejects values out of
 * range with -EINVAL; deriving kernel settings from them is
 * tests/unit/kernel/test_settings.c's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/options.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void test_defaults(void **unused)
{
	static const char *args[] = { "bpfprof", "-a" };
	struct options o;

	assert_int_equal(options_parse(ARGC(args), (char **)args, &o), 0);
	assert_int_equal(o.targets, TARGETS_ALL);
	assert_int_equal(o.freq, OPT_DEFAULT_FREQ);
	assert_int_equal(o.period, 0);
	assert_int_equal(o.max_stack, 127);
	assert_int_equal(o.stack_map_size, 0);	/* sized by rate later */
	assert_int_equal(o.count_map_size, 0);
	assert_int_equal(o.ringbuf_size, OPT_DEFAULT_RINGBUF_SIZE);
	assert_int_equal(o.dwarf_stack_size, OPT_DEFAULT_AUTO_STACK);
	assert_int_equal(o.call_graph, CALL_GRAPH_AUTO);
	assert_int_equal(o.unwind_memory, 0);	/* the loader's default */
	assert_false(o.verbose);
	assert_null(o.cpus);
	options_free(&o);
}

/* auto is the default; -g, fp and dwarf replace it, the last one wins. */
static void test_call_graph_modes(void **unused)
{
	static const struct { const char *a, *b; enum call_graph mode; } cases[] = {
		{ "-g", NULL, CALL_GRAPH_FP },
		{ "--call-graph", "fp", CALL_GRAPH_FP },
		{ "--call-graph", "dwarf", CALL_GRAPH_DWARF },
		{ "--call-graph", "auto", CALL_GRAPH_AUTO },
		{ "-g", "--call-graph=auto", CALL_GRAPH_AUTO },
		{ "--call-graph=dwarf", "-g", CALL_GRAPH_FP },
	};
	struct options o;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[] = { "bpfprof", "-a", cases[i].a, cases[i].b };
		int argc = cases[i].b ? 4 : 3;

		assert_int_equal(options_parse(argc, (char **)args, &o), 0);
		assert_int_equal(o.call_graph, cases[i].mode);
		options_free(&o);
	}
}

/* The stack copied: auto's copies of young processes default to 32 KiB,
 * dwarf's samples to perf's 8 KiB; ",SIZE" sets either. */
static void test_copy_size_by_mode(void **unused)
{
	static const struct { const char *arg; enum call_graph mode; uint32_t size; } cases[] = {
		{ NULL, CALL_GRAPH_AUTO, OPT_DEFAULT_AUTO_STACK },
		{ "--call-graph=auto", CALL_GRAPH_AUTO, OPT_DEFAULT_AUTO_STACK },
		{ "--call-graph=auto,65528", CALL_GRAPH_AUTO, 65528 },
		{ "--call-graph=dwarf", CALL_GRAPH_DWARF, OPT_DEFAULT_DWARF_STACK },
		{ "--call-graph=dwarf,4096", CALL_GRAPH_DWARF, 4096 },
	};
	struct options o;

	assert_int_equal(OPT_DEFAULT_AUTO_STACK, 32768);
	assert_int_equal(OPT_DEFAULT_DWARF_STACK, 8192);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[] = { "bpfprof", "-a", cases[i].arg };
		int argc = cases[i].arg ? 3 : 2;

		assert_int_equal(options_parse(argc, (char **)args, &o), 0);
		assert_int_equal(o.call_graph, cases[i].mode);
		assert_int_equal(o.dwarf_stack_size, cases[i].size);
		options_free(&o);
	}
}

static void test_unwind_memory_and_verbose(void **unused)
{
	static const char *args[] = { "bpfprof", "-a", "-v", "--unwind-memory", "64" };
	struct options o;

	assert_int_equal(options_parse(ARGC(args), (char **)args, &o), 0);
	assert_true(o.verbose);
	assert_int_equal(o.unwind_memory, 64ull << 20);
	options_free(&o);
}

static void test_typed_values_stored(void **unused)
{
	static const char *args[] = { "bpfprof", "-p", "5,6", "-c", "250000", "-C", "2-3,0",
				      "--max-stack", "9", "--stack-map-size", "100",
				      "--ringbuf-size", "65536", "--call-graph", "dwarf,1024" };
	struct options o;

	assert_int_equal(options_parse(ARGC(args), (char **)args, &o), 0);
	assert_int_equal(o.targets, TARGETS_PIDS);
	assert_int_equal(o.nr_ids, 2);
	assert_int_equal(o.ids[1], 6);
	assert_int_equal(o.freq, 0);
	assert_int_equal(o.period, 250000);
	assert_int_equal(o.nr_cpus, 3);
	assert_int_equal(o.cpus[0], 0);		/* sorted */
	assert_int_equal(o.cpus[2], 3);
	assert_int_equal(o.max_stack, 9);
	assert_int_equal(o.stack_map_size, 100);
	assert_int_equal(o.ringbuf_size, 65536);
	assert_int_equal(o.call_graph, CALL_GRAPH_DWARF);
	assert_int_equal(o.dwarf_stack_size, 1024);
	options_free(&o);
}

static void test_out_of_range(void **unused)
{
	static const char *bad[][3] = {
		{ "-F", "0" }, { "-F", "1000001" }, { "-c", "9999" }, { "-C", "3-1" },
		{ "--stack-map-size", "63" },
		{ "--ringbuf-size", "5000" }, { "--call-graph", "dwarf,100" },
		{ "--call-graph", "lbr" }, { "--unwind-memory", "0" },
		{ "--unwind-memory", "2000000" },
		{ "--call-graph", "dwarf,65529" }, { "--call-graph", "dwarf,65536" },
		{ "--call-graph", "dwarf,70000" }, { "--max-stack", "0" }, { "--max-stack", "4097" },
		{ "--call-graph", "auto,100" }, { "--call-graph", "auto,65536" },
		{ "--call-graph", "autox" }, { "--call-graph", "fp,8192" },
	};
	struct options o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = { "bpfprof", "-a", bad[i][0], bad[i][1] };

		assert_int_equal(options_parse(ARGC(args), (char **)args, &o), -EINVAL);
		options_free(&o);
	}
}

/*
 * --max-stack up to 4096 with dwarf, whichever option comes first; fp
 * (the default, -g, --call-graph fp, also after dwarf) keeps 127.  dwarf's
 * SIZE goes up to 65528, perf's limit.
 */
static void test_max_stack_by_mode(void **unused)
{
	static const char *ok[][4] = {
		{ "--call-graph", "dwarf", "--max-stack", "4096" },
		{ "--max-stack", "4096", "--call-graph", "dwarf,65528" },
		{ "--max-stack", "127", "-g", "-q" },
		{ "--call-graph", "fp", "--max-stack", "127" },
		{ "--max-stack", "4096", "-q", "-q" },		/* auto, the default */
	};
	static const char *bad[][4] = {
		{ "--call-graph", "dwarf", "--max-stack", "4097" },
		{ "--call-graph", "fp", "--max-stack", "128" },
		{ "--call-graph", "dwarf", "--max-stack", "4096" },	/* then -g below */
		{ "--max-stack", "4096", "--call-graph", "fp" },
	};
	struct options o;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const char *args[] = { "bpfprof", "-a", ok[i][0], ok[i][1], ok[i][2], ok[i][3] };

		assert_int_equal(options_parse(ARGC(args), (char **)args, &o), 0);
		assert_int_equal(o.max_stack, i < 2 || i == 4 ? 4096 : 127);
		if (i == 1)
			assert_int_equal(o.dwarf_stack_size, 65528);
		options_free(&o);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = { "bpfprof", "-a", bad[i][0], bad[i][1], bad[i][2], bad[i][3],
				       "-g" };
		/* -g last turns the third case back to fp; the others fail anyway */
		int argc = i == 2 ? ARGC(args) : ARGC(args) - 1;

		assert_int_equal(options_parse(argc, (char **)args, &o), -EINVAL);
		options_free(&o);
	}
}

/* --cgroup implies --all, goes with -a, and with nothing else. */
static void test_cgroup(void **unused)
{
	static const char *alone[] = { "bpfprof", "--cgroup", "job_5" };
	static const char *with_all[] = { "bpfprof", "-a", "--cgroup", "/sys/fs/cgroup/x" };
	static const char *with_pid[] = { "bpfprof", "--cgroup", "x", "-p", "1" };
	static const char *with_cmd[] = { "bpfprof", "--cgroup", "x", "--", "true" };
	static const char *empty[] = { "bpfprof", "--cgroup", "" };
	struct options o;

	assert_int_equal(options_parse(ARGC(alone), (char **)alone, &o), 0);
	assert_int_equal(o.targets, TARGETS_ALL);
	assert_string_equal(o.cgroup, "job_5");
	options_free(&o);
	assert_int_equal(options_parse(ARGC(with_all), (char **)with_all, &o), 0);
	assert_int_equal(o.targets, TARGETS_ALL);
	assert_string_equal(o.cgroup, "/sys/fs/cgroup/x");
	options_free(&o);
	assert_int_equal(options_parse(ARGC(with_pid), (char **)with_pid, &o), -EINVAL);
	options_free(&o);
	assert_int_equal(options_parse(ARGC(with_cmd), (char **)with_cmd, &o), -EINVAL);
	options_free(&o);
	assert_int_equal(options_parse(ARGC(empty), (char **)empty, &o), -EINVAL);
	options_free(&o);
	static const char *none[] = { "bpfprof", "-a" };
	assert_int_equal(options_parse(ARGC(none), (char **)none, &o), 0);
	assert_null(o.cgroup);
	options_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_typed_values_stored),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_call_graph_modes),
		cmocka_unit_test(test_copy_size_by_mode),
		cmocka_unit_test(test_unwind_memory_and_verbose),
		cmocka_unit_test(test_max_stack_by_mode),
		cmocka_unit_test(test_cgroup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
