/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * settings.h - every kernel-side setting of a run in one place: struct
 * sampler_config (the event, the targets, the size of every BPF map and
 * ring buffer) and the one function that derives it from the command line.
 * The sampler applies a config as it is; nothing else computes a size.
 */
#ifndef BPFPROF_SETTINGS_H
#define BPFPROF_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct options;

/* Target modes; equal to the BPF program's enum target_mode. */
enum sampler_target { SAMPLER_ALL = 0, SAMPLER_TGIDS = 1, SAMPLER_TIDS = 2 };

/*
 * What the sampler sets up.  The pointers are borrowed: they must outlive
 * sampler_open() (it copies what it keeps).
 */
struct sampler_config {
	enum sampler_target target;
	const uint32_t *ids;		/* tgids or tids to sample (not for SAMPLER_ALL) */
	size_t nr_ids;
	bool ids_exec;			/* the ids are the command's: sampled from
					 * its exec on (BPFPROF_TARGET_AT_EXEC) */
	const int *cpus;		/* CPUs to open events on, ascending; NULL = every online CPU */
	size_t nr_cpus;
	uint64_t freq;			/* Hz of the cpu-clock event (frequency mode), or 0 */
	uint64_t period;		/* ns each sample stands for: the event's period, or
					 * 1e9 / freq in frequency mode (cpu-clock's fixed period) */
	bool include_idle;		/* SAMPLER_ALL: also the idle task (pid 0) */
	bool follow_forks;		/* children of SAMPLER_TGIDS targets become targets */
	bool stream;			/* samples through the ring buffer, with time (dwarf sets it) */
	bool dwarf;			/* dwarf_sample_event records (implies stream) */
	bool cfi;			/* --call-graph auto: the program walks user stacks
					 * with the unwind tables of bpf/cfi_walk.bpf.h */
	uint32_t cfi_process_map_size;	/* auto: slots (processes) of "cfi_procs"; 0: the
					 * program's own */
	bool cfi_copies;		/* auto: a young process's sample whose walk met
					 * code with no table yet goes out as a dwarf
					 * record, for the collector to unwind */
	uint32_t user_stack_size;	/* dwarf, and auto's copies: bytes of user stack
					 * copied per sample */
	uint32_t max_depth;		/* frames a stack stored by the program has room
					 * for, 1..BPFPROF_MAX_STACK_DEPTH (bpf_get_stack()
					 * walks at most BPFPROF_MAX_FP_DEPTH of them) */
	uint32_t stack_value_size;	/* bytes of a "stacks" (and "scratch") value:
					 * BPFPROF_STACK_TRACE_SIZE(max_depth) */
	uint32_t stack_map_size;	/* slots (distinct stacks) of the "stacks" map */
	uint32_t count_map_size;	/* slots (distinct count keys) of each count map */
	uint32_t ringbuf_size;		/* bytes of the "samples" ring buffer, power of two */
	uint32_t target_map_size;	/* slots of the "targets" map; 0: the program's own */
	uint32_t exec_map_size;		/* slots of the "exec_ids" map; 0: the program's own */
	/* Slots of LRU maps a mode leaves unused (SETTINGS_UNUSED_LRU_MAP
	 * there), 0 elsewhere: the program's own */
	uint32_t cfi_request_map_size;	/* "cfi_requests": auto only;
					 * SETTINGS_TARGETED_THREAD_MAP with -p, -t
					 * or a command */
	uint32_t py_map_size;		/* "py_codes_seen": not with
					 * --no-interpreters; SETTINGS_TARGETED_LRU_MAP
					 * with -p, -t or a command */
	uint32_t py_thread_map_size;	/* "py_threads": as py_map_size, but
					 * SETTINGS_TARGETED_THREAD_MAP */
	bool no_interpreters;		/* --no-interpreters: the program reads no
					 * Python frames (its Python code is
					 * left out at load) */
	uint32_t thread_map_size;	/* "threads_seen": SETTINGS_TARGETED_THREAD_MAP with
					 * -p, -t or a command, else 0 */
	/* --cgroup, as targets/cgroup.c resolved it (the collector sets these;
	 * sampler_config_from_options() leaves cgroup_filter false) */
	bool cgroup_filter;		/* sample only tasks in this cgroup and below */
	uint32_t cgroup_hierarchy;	/* enum bpfprof_cgroup_v1 */
	uint32_t cgroup_level;		/* its depth below the hierarchy's root */
	uint64_t cgroup_id;		/* its kernfs id */
};

/*
 * Without --stack-map-size / --count-map-size the stack map holds one
 * second of new stacks on every sampled CPU at the most a sample adds
 * (two, user and kernel; one in dwarf mode), the count maps two seconds
 * of samples (one entry each); the collector drains the counts once a
 * quarter is added and prunes the stacks it copied once they take a
 * quarter of the stack map's slots, woken by the program at those marks
 * (sampler_counts_filling()).  Each is a power of two
 * between these bounds (slots).  The maps are not
 * preallocated (user/kernel/map_warm.h): a slot takes kernel memory once
 * filled, up to these bounds (a stack slot its value, 1 KiB at 127
 * frames, plus SETTINGS_STACK_SLOT_OVERHEAD).  Stacks
 * deeper than 127 frames (--max-stack in auto mode) make a slot up to 32
 * times larger: the stack map then has as many slots as fit in
 * SETTINGS_STACK_MAP_MAX_BYTES (1,022 at 4,096 frames; docs/ARCHITECTURE.md
 * has the measured sizes).
 */
#define SETTINGS_STACK_MAP_MIN 4096
#define SETTINGS_STACK_MAP_MAX 16384
#define SETTINGS_STACK_MAP_MAX_BYTES (32u << 20)
/* Bytes of kernel memory a hash map slot takes beside its value: the
 * element header (struct htab_elem, 48 bytes on x86-64) and the 8-byte key. */
#define SETTINGS_STACK_SLOT_OVERHEAD 56u
/* 4,096: 999 Hz on two CPUs */
#define SETTINGS_COUNT_MAP_MIN 4096
#define SETTINGS_COUNT_MAP_MAX 65536
/* Slots of the "targets" map up to this many ids; twice the ids above.
 * --all reads no target map: it gets SETTINGS_UNUSED_TARGET_MAP slots
 * (a preallocated hash map: 4,096 slots cost ~0.6 ms to create). */
#define SETTINGS_TARGET_MAP_MIN 4096
#define SETTINGS_UNUSED_TARGET_MAP 1
/*
 * Slots of "exec_ids" (bpf/profile.bpf.c): an entry per live target process
 * that exec()ed in the run.  Not preallocated, but the kernel allocates and
 * initialises its buckets (as many as slots, 16 bytes each) when it creates
 * it: 65,536 cost ~1.5 ms, 4,096 ~0.1 ms.  With -p or a command every entry
 * is a live process of the "targets" map (both are deleted at its exit), so
 * it gets as many slots as that map; --all and -t keep this many.
 */
#define SETTINGS_EXEC_MAP_MAX 65536
/* Bytes of the ring buffer (the least there is), and slots of the count maps,
 * the mode leaves unused. */
#define SETTINGS_UNUSED_RINGBUF 4096
#define SETTINGS_UNUSED_COUNT_MAP 1
/*
 * Slots of an LRU map the mode leaves unused: auto's "cfi_requests" under
 * -g and dwarf, the Python caches "py_threads" and "py_codes_seen" under
 * --no-interpreters (no "py_procs" entry is written, so the program never
 * gets to them).  LRU maps are always preallocated: the kernel initialises
 * every slot when it creates one (16,384 slots: ~1.7 ms each, 4,096: ~0.5).
 */
#define SETTINGS_UNUSED_LRU_MAP 1
/*
 * Slots of the LRU maps when the targets are named (-p, -t, a command):
 * their threads and processes, not a whole machine's (the program's own
 * sizes under --all: 16,384; "cfi_requests" 4,096).  An evicted entry
 * costs a second announcement, look-up or table request, never a wrong
 * stack.  The kernel initialises every slot of an LRU map when it creates
 * it: 16,384 slots take ~2-3 ms, 4,096 ~0.5 ms, 1,024 ~0.1 ms
 * (docs/PERFORMANCE.md, sessions 36 and 40).  Code objects
 * ("py_codes_seen") get SETTINGS_TARGETED_LRU_MAP: one Python program
 * runs thousands, and an evicted one is announced, and its names copied,
 * again.  Threads ("threads_seen", "py_threads") and processes (auto's
 * "cfi_requests") get SETTINGS_TARGETED_THREAD_MAP.
 */
#define SETTINGS_TARGETED_LRU_MAP 4096
#define SETTINGS_TARGETED_THREAD_MAP 1024
/* Bytes a dwarf record with @stack bytes of stack takes at most in the ring
 * buffer: struct dwarf_sample_event and the record header are under 1,024
 * (settings.c checks). */
#define SETTINGS_DWARF_RECORD_BYTES(stack) ((uint64_t)(stack) + 1024u)
/* A dwarf ring buffer holds at least this many records (up to 1 GiB). */
#define SETTINGS_DWARF_MIN_RECORDS 256
/* auto without a stream: the ring buffer holds at least this many copies
 * of young processes' stacks (bpf/profile.bpf.c, cfi_copy_instead()): 2 MiB
 * with the default 32 KiB copies, where it holds 63. */
#define SETTINGS_CFI_COPY_RECORDS 48
/*
 * Without a stream the ring buffer holds at least this many batches of
 * moved counts per CPU (struct moved_counts_event, 2,632 bytes;
 * bpf/counts.bpf.h, count_sample()): -g on 2 CPUs gets 128 KiB, and the
 * collector is woken at a quarter of it.  A full ring sends the counts to
 * the count map instead, never to a drop while that has room.
 */
#define SETTINGS_MOVED_COUNT_RECORDS 16

/*
 * Derive the whole sampler configuration of a run from what the user typed
 * (@o, as options_parse() left it) and what only the collector knows:
 * @stream, whether the output wants timestamped samples; @command_pid, the
 * pid of the command it started (required for TARGETS_COMMAND, borrowed:
 * cfg->ids points at it); @nr_cpus_online, the CPUs the maps are sized for
 * when -C is not given.  Map sizes follow the rate (-F, or 1e9 / -c ns)
 * times the sampled CPUs (see SETTINGS_STACK_MAP_MIN); a dwarf ring buffer
 * grows to SETTINGS_DWARF_MIN_RECORDS records.  Stored stacks have room
 * for --max-stack frames, but in dwarf mode, where the program stores
 * kernel stacks only (the collector unwinds the user stacks), for at most
 * BPFPROF_MAX_FP_DEPTH.  cfg->ids and cfg->cpus
 * point into @o.  Returns 0, or -EINVAL when @o has no target, no
 * frequency or period, a max_stack outside 1..BPFPROF_MAX_STACK_DEPTH, or
 * TARGETS_COMMAND comes without @command_pid.
 */
int sampler_config_from_options(const struct options *o, bool stream,
				const uint32_t *command_pid, size_t nr_cpus_online,
				struct sampler_config *cfg);

#endif /* BPFPROF_SETTINGS_H */
