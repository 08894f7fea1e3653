// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_new_stack_record.c - the announcement of new user stacks with
 * their frames (struct new_stack_event, bpf/new_stack.bpf.h), as root
 * (skipped otherwise): user/kernel/sampler.c loads bpf/profile.bpf.c in
 * fp mode, the test samples itself in recursions built with frame
 * pointers, and reads the TASK_EVENT_NEW_STACK records:
 *
 *   - a stack of at most BPFPROF_NEW_STACK_FRAMES frames comes with them,
 *     and they are the frames the "stacks" map holds under its id (what
 *     sampler_stack(), the collector's bpf() lookup, returns);
 *   - a deeper one comes with its id only (a record of
 *     sizeof(struct task_event) bytes), and the map has it;
 *   - with --max-stack below BPFPROF_NEW_STACK_FRAMES the program loads
 *     (the verifier drops the fixed-size copy of the frames as dead) and
 *     every record has the id only.
 */
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

#include "bpfprof.h"
#include "recurse.h"
#include "cli/options.h"
#include "kernel/sampler.h"
#include "kernel/settings.h"

#define MAX_RECORDS 512

/* One TASK_EVENT_NEW_STACK record as read (the ring's copy lives only
 * during the callback). */
struct record {
	uint64_t id;
	size_t size;			/* bytes of the record */
	uint32_t nr;			/* frames it carried; 0: the id only */
	uint64_t ips[BPFPROF_NEW_STACK_FRAMES];
};

struct records {
	struct record r[MAX_RECORDS];
	size_t nr;
};

static int on_task_event(void *ctx, const struct task_event *e, size_t size)
{
	const struct new_stack_event *ne = (const struct new_stack_event *)e;
	struct records *rs = ctx;
	struct record *r;

	if (e->type != TASK_EVENT_NEW_STACK || rs->nr == MAX_RECORDS)
		return 0;
	r = &rs->r[rs->nr++];
	memset(r, 0, sizeof(*r));
	r->id = e->stack_id;
	r->size = size;
	if (size >= sizeof(*ne)) {
		assert_true(ne->nr <= BPFPROF_NEW_STACK_FRAMES);
		r->nr = ne->nr;
		memcpy(r->ips, ne->ips, ne->nr * sizeof(r->ips[0]));
	}
	return 0;
}

static int on_sample(void *ctx, const struct sample_event *e, size_t size)
{
	return 0;
}

/* Load fp mode with --max-stack @max_stack, sample recursions @depth
 * deep each, and check every record against the map. */
static void sample_and_check(uint32_t max_stack, const unsigned *depths, size_t nr_depths,
			     size_t *with_frames, size_t *id_only)
{
	uint32_t pid = (uint32_t)getpid();
	struct records *rs = calloc(1, sizeof(*rs));
	struct sampler_callbacks cb = { .ctx = rs, .task_event = on_task_event,
					.sample = on_sample };
	struct options o = { .max_stack = max_stack, .call_graph = CALL_GRAPH_FP };
	struct stack_trace *st = malloc(sizeof(*st));
	struct sampler_config cfg;
	struct sampler *s;

	assert_non_null(rs);
	assert_non_null(st);
	o.targets = TARGETS_PIDS;
	o.ids = &pid;
	o.nr_ids = 1;
	o.freq = 999;
	o.ringbuf_size = OPT_DEFAULT_RINGBUF_SIZE;
	assert_int_equal(sampler_config_from_options(&o, false, &pid, 2, &cfg), 0);
	assert_int_equal(sampler_open(&cfg, &cb, &s), 0);	/* the verifier said yes */
	for (size_t i = 0; i < nr_depths; i++)
		recurse(depths[i], 0.2);
	while (sampler_poll(s, 0) > 0)
		;
	assert_true(rs->nr > 0);
	*with_frames = *id_only = 0;
	for (size_t i = 0; i < rs->nr; i++) {
		const struct record *r = &rs->r[i];

		/* the stack map is never pruned here: every stack is in it */
		assert_int_equal(sampler_stack(s, r->id, st), 0);
		assert_false(st->kernel);
		if (r->nr) {
			assert_int_equal(r->size, sizeof(struct new_stack_event));
			assert_int_equal(r->nr, st->nr);
			assert_memory_equal(r->ips, st->ips, r->nr * sizeof(r->ips[0]));
			(*with_frames)++;
		} else {
			/* deeper than a record holds, or copied from the map */
			assert_true(r->size == sizeof(struct task_event) ||
				    r->size == sizeof(struct new_stack_event));
			if (r->size == sizeof(struct task_event) &&
			    cfg.max_depth >= BPFPROF_NEW_STACK_FRAMES)
				assert_true(st->nr > BPFPROF_NEW_STACK_FRAMES);
			(*id_only)++;
		}
	}
	printf("# --max-stack %u: %zu new user stacks, %zu with their frames, %zu by id\n",
	       max_stack, rs->nr, *with_frames, *id_only);
	sampler_close(s);
	free(st);
	free(rs);
}

/* The record's layout, which the collector and the program share. */
static void test_layout(void **unused)
{
	assert_int_equal(sizeof(struct task_event), 64);
	assert_int_equal(offsetof(struct new_stack_event, nr), sizeof(struct task_event));
	assert_int_equal(offsetof(struct new_stack_event, ips), sizeof(struct task_event) + 8);
	assert_int_equal(sizeof(struct new_stack_event),
			 sizeof(struct task_event) + 8 + 8 * BPFPROF_NEW_STACK_FRAMES);
}

static void test_shallow_and_deep(void **unused)
{
	/* ~15 frames (this test and libc below), then ~115: past the record */
	static const unsigned depths[] = { 5, 100 };
	size_t with_frames, id_only;

	if (geteuid() != 0)
		skip();
	sample_and_check(OPT_DEFAULT_MAX_STACK, depths, 2, &with_frames, &id_only);
	assert_true(with_frames > 0);
	assert_true(id_only > 0);
}

static void test_max_stack_below_record(void **unused)
{
	static const unsigned depths[] = { 5 };
	size_t with_frames, id_only;

	if (geteuid() != 0)
		skip();
	sample_and_check(BPFPROF_NEW_STACK_FRAMES / 2, depths, 1, &with_frames, &id_only);
	assert_int_equal(with_frames, 0);
	assert_true(id_only > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_shallow_and_deep),
		cmocka_unit_test(test_max_stack_below_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
