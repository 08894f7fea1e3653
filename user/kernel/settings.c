// SPDX-License-Identifier: BSD-2-Clause
/*
 * settings.c - owns the derivation of every kernel-side setting from the
 * command line: the perf event's frequency and period, the targets, and the
 * size of each BPF map and ring buffer (by sampling rate times CPUs, by
 * mode, by dwarf record size, by stack depth).  user/kernel/sampler.c
 * applies the result.
 */
#include <errno.h>
#include <string.h>

#include "bpfprof.h"
#include "cli/options.h"
#include "settings.h"

_Static_assert(sizeof(struct dwarf_sample_event) + 8 <= SETTINGS_DWARF_RECORD_BYTES(0),
	       "a dwarf record's header and ring buffer header fit SETTINGS_DWARF_RECORD_BYTES");

/* @min doubled until it holds @want, at most @max. */
static uint32_t pow2_between(uint64_t want, uint32_t min, uint32_t max)
{
	uint32_t n = min;

	while (n < want && n < max)
		n *= 2;
	return n;
}

/* Samples per second on @nr_cpus CPUs (0: as one CPU). */
static uint64_t sample_rate(const struct options *o, size_t nr_cpus)
{
	uint64_t per_cpu = o->freq ? o->freq : (o->period ? 1000000000ull / o->period : 0);

	return per_cpu * (nr_cpus ? nr_cpus : 1);
}

/* Default slots of the stack map for @rate samples a second that store
 * @per_sample stacks each: one second of them, and no more than
 * SETTINGS_STACK_MAP_MAX_BYTES of values @value_size long. */
static uint32_t stack_slots(uint64_t rate, uint32_t per_sample, uint32_t value_size)
{
	uint32_t n = pow2_between(per_sample * rate, SETTINGS_STACK_MAP_MIN,
				  SETTINGS_STACK_MAP_MAX);
	uint64_t fit = SETTINGS_STACK_MAP_MAX_BYTES / (value_size + SETTINGS_STACK_SLOT_OVERHEAD);

	return n < fit ? n : (uint32_t)fit;	/* 4,096 frames: 1,022 */
}

/* The stack and count maps (slots): --stack-map-size / --count-map-size, or
 * one second of samples that each store 2 new stacks (the worst case: the
 * collector prunes the stacks it copied once they take a quarter of the
 * slots),
 * and two seconds of samples that each add 1 count entry, on @nr_cpus.
 * dwarf stores 1 stack a sample, the kernel's (the collector unwinds the
 * user stack from the copy): half the slots, as many seconds.  Neither map
 * is preallocated (user/kernel/map_warm.h): a slot takes kernel memory
 * once filled.  Preallocated, the stack map's 1 KiB slots at 127 frames
 * cost ~6.4 ms of bpfprof's CPU to create at 4,096 slots on the test VM,
 * a count map ~0.7 ms at 4,096. */
static void map_sizes(const struct options *o, size_t nr_cpus, struct sampler_config *cfg)
{
	uint64_t rate = sample_rate(o, nr_cpus);
	uint32_t per_sample = cfg->dwarf ? 1 : 2;

	cfg->stack_map_size = o->stack_map_size ?:
			      stack_slots(rate, per_sample, cfg->stack_value_size);
	cfg->count_map_size = o->count_map_size ?: pow2_between(2 * rate, SETTINGS_COUNT_MAP_MIN,
								 SETTINGS_COUNT_MAP_MAX);
}

/* Bytes of the "samples" ring buffer: --ringbuf-size for a stream (more for
 * dwarf's copies); without one, room for auto's copies of young processes'
 * stacks and for @nr_cpus CPUs' batches of moved counts. */
static uint32_t ringbuf_bytes(const struct options *o, bool stream, size_t nr_cpus)
{
	uint64_t want = SETTINGS_DWARF_MIN_RECORDS * SETTINGS_DWARF_RECORD_BYTES(o->dwarf_stack_size);
	uint64_t copies = SETTINGS_CFI_COPY_RECORDS *
			  SETTINGS_DWARF_RECORD_BYTES(o->dwarf_stack_size);
	uint64_t moved = (uint64_t)SETTINGS_MOVED_COUNT_RECORDS * (nr_cpus ? nr_cpus : 1) *
			 (sizeof(struct moved_counts_event) + 8);
	uint32_t rb = o->ringbuf_size;

	if (!stream) {
		if (o->call_graph != CALL_GRAPH_AUTO)
			copies = 0;
		if (moved > copies)
			copies = moved;
		for (rb = SETTINGS_UNUSED_RINGBUF; rb < copies && rb < (1u << 30); rb *= 2)
			;
	}
	while (o->call_graph == CALL_GRAPH_DWARF && rb < want && rb < (1u << 30))
		rb *= 2;
	return rb;
}

static void config_targets(const struct options *o, const uint32_t *command_pid,
			struct sampler_config *cfg)
{
	cfg->target = o->targets == TARGETS_ALL ? SAMPLER_ALL
		    : o->targets == TARGETS_TIDS ? SAMPLER_TIDS : SAMPLER_TGIDS;
	cfg->ids = o->targets == TARGETS_COMMAND ? command_pid : o->ids;
	cfg->nr_ids = o->targets == TARGETS_COMMAND ? 1 : o->nr_ids;
	cfg->ids_exec = o->targets == TARGETS_COMMAND;
	cfg->include_idle = o->idle;
	cfg->follow_forks = true;
	/* Room for the children of -p targets too. */
	cfg->target_map_size = SETTINGS_TARGET_MAP_MIN;
	if (cfg->target != SAMPLER_ALL && cfg->nr_ids > SETTINGS_TARGET_MAP_MIN)
		cfg->target_map_size = (uint32_t)(cfg->nr_ids * 2);
	if (cfg->target == SAMPLER_ALL)
		cfg->target_map_size = SETTINGS_UNUSED_TARGET_MAP;
	if (cfg->target != SAMPLER_ALL) {
		cfg->thread_map_size = SETTINGS_TARGETED_THREAD_MAP;
		cfg->py_thread_map_size = SETTINGS_TARGETED_THREAD_MAP;
		cfg->cfi_request_map_size = SETTINGS_TARGETED_THREAD_MAP;
		cfg->py_map_size = SETTINGS_TARGETED_LRU_MAP;
	}
	/* exec_ids holds target processes only (SETTINGS_EXEC_MAP_MAX) */
	cfg->exec_map_size = cfg->target == SAMPLER_TGIDS ? cfg->target_map_size
							 : SETTINGS_EXEC_MAP_MAX;
}

static void config_event(const struct options *o, struct sampler_config *cfg)
{
	cfg->cpus = o->cpus;
	cfg->nr_cpus = o->nr_cpus;
	cfg->freq = o->freq;
	/* cpu-clock in frequency mode runs at a fixed period of 1e9/F ns. */
	cfg->period = o->freq ? 1000000000ull / o->freq : o->period;
}

static void config_stacks(const struct options *o, struct sampler_config *cfg)
{
	cfg->dwarf = o->call_graph == CALL_GRAPH_DWARF;
	cfg->cfi = o->call_graph == CALL_GRAPH_AUTO;
	cfg->cfi_copies = cfg->cfi;
	cfg->user_stack_size = o->dwarf_stack_size;
	/* dwarf: the program stores kernel stacks only */
	cfg->max_depth = o->max_stack;
	if (cfg->dwarf && cfg->max_depth > BPFPROF_MAX_FP_DEPTH)
		cfg->max_depth = BPFPROF_MAX_FP_DEPTH;
	cfg->stack_value_size = BPFPROF_STACK_TRACE_SIZE(cfg->max_depth);
	if (!cfg->cfi)
		cfg->cfi_request_map_size = SETTINGS_UNUSED_LRU_MAP;
	cfg->no_interpreters = o->no_interpreters;
	if (o->no_interpreters)
		cfg->py_map_size = cfg->py_thread_map_size = SETTINGS_UNUSED_LRU_MAP;
}

int sampler_config_from_options(const struct options *o, bool stream,
				const uint32_t *command_pid, size_t nr_cpus_online,
				struct sampler_config *cfg)
{
	size_t nr_cpus = o->nr_cpus ? o->nr_cpus : nr_cpus_online;

	if (o->targets == TARGETS_NONE || (!o->freq && !o->period) ||
	    (o->targets == TARGETS_COMMAND && !command_pid) ||
	    o->max_stack < 1 || o->max_stack > BPFPROF_MAX_STACK_DEPTH)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	config_targets(o, command_pid, cfg);
	config_event(o, cfg);
	config_stacks(o, cfg);
	cfg->stream = stream || cfg->dwarf;
	map_sizes(o, nr_cpus, cfg);
	if (cfg->stream)	/* only one of the count maps and the ring buffer is used */
		cfg->count_map_size = SETTINGS_UNUSED_COUNT_MAP;
	cfg->ringbuf_size = ringbuf_bytes(o, cfg->stream, nr_cpus);
	return 0;
}
