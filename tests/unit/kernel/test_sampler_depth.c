// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_sampler_depth.c - the BPF program with deep stacks, as root (skipped
 * otherwise): user/kernel/sampler.c loads bpf/profile.bpf.c configured by
 * user/kernel/settings.c for
 *
 *   - fp mode at the default 127 frames,
 *   - stored stacks of 4,096 frames, the shape of auto mode, whose BPF
 *     walker stores user stacks up to --max-stack deep (options that only
 *     that mode will produce, so the struct options is filled by hand),
 *   - dwarf mode with the largest stack copy (65,528 bytes) and
 *     --max-stack 4096,
 *
 * and for each checks that the verifier accepts the program, that the
 * "stacks" and "scratch" maps have values of BPFPROF_STACK_TRACE_SIZE(
 * max_depth) bytes and the slots settings.c chose, and prints their kernel
 * memory (the maps' fdinfo "memlock", docs/ARCHITECTURE.md quotes it).
 * Then it samples itself in a 200-deep recursion built with frame pointers
 * and reads the stored user stacks back with sampler_stack(): they stop at
 * the kernel's frame-pointer limit (127, or kernel.perf_event_max_stack)
 * whatever room the map has, and come back whole.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <bpf/bpf.h>

#include "bpfprof.h"
#include "recurse.h"
#include "cli/options.h"
#include "kernel/sampler.h"
#include "kernel/settings.h"

#define RECURSION 200
#define MAX_IDS 256

/* What the events ring buffer announced: new user stacks. */
struct seen {
	uint64_t ids[MAX_IDS];
	size_t nr;
};

static int on_task_event(void *ctx, const struct task_event *e, size_t size)
{
	struct seen *s = ctx;

	if (e->type == TASK_EVENT_NEW_STACK && s->nr < MAX_IDS)
		s->ids[s->nr++] = e->stack_id;
	return 0;
}

static int on_sample(void *ctx, const struct sample_event *e, size_t size)
{
	return 0;
}

/* One of our BPF maps, found by name among this process's descriptors. */
struct map_facts {
	struct bpf_map_info info;
	uint64_t memlock;		/* bytes, the map's fdinfo */
};

static uint64_t fdinfo_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void find_map(const char *name, struct map_facts *m)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	bool found = false;

	assert_non_null(d);
	while (!found && (de = readdir(d))) {
		int fd = atoi(de->d_name);
		__u32 len = sizeof(m->info);
		char path[300], link[64] = "";

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		if (readlink(path, link, sizeof(link) - 1) < 0 || strcmp(link, "anon_inode:bpf-map"))
			continue;
		memset(&m->info, 0, sizeof(m->info));
		if (bpf_obj_get_info_by_fd(fd, &m->info, &len))
			continue;
		if (strcmp(m->info.name, name))
			continue;
		m->memlock = fdinfo_memlock(fd);
		found = true;
	}
	closedir(d);
	assert_true(found);
}

static unsigned kernel_max_stack(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
	unsigned v = BPFPROF_MAX_FP_DEPTH;

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = BPFPROF_MAX_FP_DEPTH;
		fclose(f);
	}
	return v < BPFPROF_MAX_FP_DEPTH ? v : BPFPROF_MAX_FP_DEPTH;
}

/* Load with @o, check the maps, sample (unless dwarf) and read stacks back. */
static void load_and_check(struct options *o, const char *what)
{
	uint32_t pid = (uint32_t)getpid();
	struct seen seen = { .nr = 0 };
	struct sampler_callbacks cb = { .ctx = &seen, .task_event = on_task_event,
					.sample = on_sample };
	struct sampler_config cfg;
	struct map_facts stacks, scratch;
	struct stack_trace *st = malloc(sizeof(*st));
	struct sampler *s;
	uint32_t deepest = 0;

	assert_non_null(st);
	o->targets = TARGETS_PIDS;
	o->ids = &pid;
	o->nr_ids = 1;
	o->freq = 999;
	o->ringbuf_size = OPT_DEFAULT_RINGBUF_SIZE;
	assert_int_equal(sampler_config_from_options(o, false, &pid, 2, &cfg), 0);
	assert_int_equal(sampler_open(&cfg, &cb, &s), 0);	/* the verifier said yes */

	find_map("stacks", &stacks);
	find_map("scratch", &scratch);
	assert_int_equal(stacks.info.value_size, BPFPROF_STACK_TRACE_SIZE(cfg.max_depth));
	assert_int_equal(scratch.info.value_size, stacks.info.value_size);
	assert_int_equal(stacks.info.max_entries, cfg.stack_map_size);
	printf("# %s: stored stacks of %u frames: \"stacks\" %u slots of %u bytes, "
	       "%.1f MiB; \"scratch\" %.0f KiB\n", what, cfg.max_depth, stacks.info.max_entries,
	       stacks.info.value_size, stacks.memlock / 1048576.0, scratch.memlock / 1024.0);

	if (!cfg.dwarf) {
		recurse(RECURSION, 0.3);
		while (sampler_poll(s, 0) > 0)
			;
		assert_true(seen.nr > 0);
		for (size_t i = 0; i < seen.nr; i++) {
			if (sampler_stack(s, seen.ids[i], st))
				continue;	/* pruned or replaced: not here */
			assert_true(st->nr >= 1 && st->nr <= cfg.max_depth);
			assert_false(st->kernel);
			if (st->nr > deepest)
				deepest = st->nr;
		}
		printf("#   %zu new user stacks, the deepest %u frames\n", seen.nr, deepest);
		/* 200 frames deep: the kernel's walk stops at its limit */
		assert_int_equal(deepest, kernel_max_stack());
	}
	sampler_close(s);
	free(st);
}

static void test_fp_default(void **unused)
{
	struct options o = { .max_stack = OPT_DEFAULT_MAX_STACK };

	if (geteuid() != 0)
		skip();
	load_and_check(&o, "fp, --max-stack 127");
}

static void test_deep_stored_stacks(void **unused)
{
	struct options o = { .max_stack = BPFPROF_MAX_STACK_DEPTH };

	if (geteuid() != 0)
		skip();
	load_and_check(&o, "auto's shape, --max-stack 4096");
}

static void test_dwarf_largest(void **unused)
{
	struct options o = { .max_stack = BPFPROF_MAX_STACK_DEPTH,
			     .call_graph = CALL_GRAPH_DWARF,
			     .dwarf_stack_size = BPFPROF_MAX_USER_STACK };

	if (geteuid() != 0)
		skip();
	load_and_check(&o, "dwarf,65528 --max-stack 4096");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fp_default),
		cmocka_unit_test(test_deep_stored_stacks),
		cmocka_unit_test(test_dwarf_largest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
