/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sampler.h - the BPF side seen from userspace: loads profile.bpf.c through
 * its skeleton with the sizes of a struct sampler_config (settings.h), opens
 * one cpu-clock perf event per CPU, attaches, and reads back ring buffers,
 * stacks, counts and statistics.  Functions return 0 (or a count) or a
 * negative errno.
 */
#ifndef BPFPROF_SAMPLER_H
#define BPFPROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof.h"
#include "cfi_row.h"
#include "python.h"
#include "settings.h"

struct sampler;

/* Called for every record read from the ring buffers; return 0 or -errno
 * (which stops the poll and is returned by sampler_poll()).  The records are
 * valid only during the call. */
struct sampler_callbacks {
	void *ctx;
	/* @size: bytes of the record; a TASK_EVENT_NEW_STACK of
	 * sizeof(struct new_stack_event) bytes or more has its frames */
	int (*task_event)(void *ctx, const struct task_event *e, size_t size);
	/* @size: bytes of the record; a struct dwarf_sample_event in dwarf mode */
	int (*sample)(void *ctx, const struct sample_event *e, size_t size);
	/* May be NULL.  Called by sampler_open() once the program is loaded
	 * and the lifecycle tracepoints attached, before the sampling events
	 * are opened: the time to fill maps the first samples need.  0 or
	 * -errno (which fails sampler_open()). */
	int (*before_sampling)(void *ctx, struct sampler *s);
};

/* Totals of the per-CPU statistics (samples, or records for events_lost). */
struct sampler_stats {
	uint64_t seen;			/* samples of targets the program saw */
	uint64_t kept;			/* counted, or emitted to the ring buffer */
	uint64_t drops[DROP_NR];	/* by enum drop_reason */
	uint64_t events_lost;		/* lifecycle records the "events" ring buffer had no room for */
	uint64_t stack_ids;		/* stacks given an id to store (bpf/stack_store.bpf.h) */
	uint64_t stack_ids_noted;	/* ... found in the CPU's note of the ids it met,
					 * without a look-up of the "stacks" map */
	uint64_t walk_stops[CFI_WALK_STOP_NR];	/* --call-graph auto: user stack walks by
						 * how they ended (enum cfi_walk_stop) */
	uint64_t row_cache_hits, row_cache_misses;	/* their frames' rows: from the
							 * BPF walk's cache, searched */
	uint64_t stack_reads;		/* the walks' 8-byte reads of user memory
					 * outside their stack window */
	uint64_t map_searches;		/* the walks' binary searches of mappings */
	uint64_t common_steps;		/* the walks' steps by the common rules
					 * alone (cfi_step_common()) */
	uint64_t leaf_guesses;		/* leaves without CFI whose caller came from
					 * [sp] (bpf/cfi_row.h) */
	uint64_t fp_steps;		/* other frames without CFI whose caller
					 * came from [bp + 8] (bpf/cfi_row.h) */
	uint64_t memo_frames;		/* frames written from a thread's walk memo
					 * (bpf/cfi_memo.bpf.h) */
	uint64_t memo_fails;		/* memo frames met whose stack words had
					 * changed */
	uint64_t copies_withheld;	/* walks that would have gone out as stack
					 * copies but for the ring's room: their
					 * frames stand (bpf/stack_copy.bpf.h) */
	uint64_t user_stack_errno[STACK_ERRNO_SLOTS];	/* by -errno */
	uint64_t kernel_stack_errno[STACK_ERRNO_SLOTS];
	uint64_t python[PY_STAT_NR];	/* CPython stacks, by enum py_stat (bpf/python.h) */
};

/*
 * Load, size (as @cfg says) and attach; @cb is copied.  On failure prints
 * one line to stderr explaining the cause (privileges, frequency limit,
 * offline CPU, ...) and returns a negative errno.  The caller owns *@out
 * (sampler_close()).
 */
int sampler_open(const struct sampler_config *cfg, const struct sampler_callbacks *cb,
		 struct sampler **out);

/* Add a tgid (or tid) to the target map while running. 0 or -errno. */
int sampler_add_target(struct sampler *s, uint32_t id);

/* How long one sampler_poll() reads the "samples" ring at most, in ns:
 * then it returns, and the next call reads the "events" ring first. */
#define SAMPLER_PASS_NS (10 * 1000 * 1000ull)

/* Wait up to timeout_ms for data, then consume what is pending in both
 * ring buffers: all of the "events" ring, the "samples" ring for up to
 * SAMPLER_PASS_NS (sampler_pass_cut() then says records were left).
 * Returns records consumed, or -errno (-EINTR on a signal). */
int sampler_poll(struct sampler *s, int timeout_ms);

/*
 * Let file descriptor @fd (not owned; it must stay open as long as @s or
 * be closed first) end sampler_poll()'s wait too when it polls readable:
 * another ring the caller reads after each poll (mmap_events_fd()).
 * 0 or -errno of epoll_ctl().
 */
int sampler_watch_fd(struct sampler *s, int fd);

/* Whether the last sampler_poll() stopped reading the "samples" ring
 * before it was empty (SAMPLER_PASS_NS). */
bool sampler_pass_cut(const struct sampler *s);

/* Stop sampling: detach and close the perf events (tracepoints stay). */
void sampler_stop(struct sampler *s);

/*
 * Copy the stack with id @id from the kernel map into @out: nr and as many
 * frames as the map has room for (cfg->max_depth of sampler_open()).
 * 0, -ENOENT, or -EOVERFLOW if the map's values are larger than @out.
 */
int sampler_stack(struct sampler *s, uint64_t id, struct stack_trace *out);

/*
 * Make room in the kernel's stack map: delete every stack for which
 * @copied says userspace already has its frames (a later sample simply
 * stores it again).  Returns how many were deleted, or -errno.
 */
int sampler_prune_stacks(struct sampler *s, bool (*copied)(void *ctx, uint64_t id), void *ctx);

/* Slots of the kernel's stack map (--stack-map-size, or sized by rate). */
uint32_t sampler_stack_map_size(const struct sampler *s);

/* True when every sample comes out through the "samples" ring (a stream,
 * or dwarf's stack copies), which wakes the collector only past a backlog
 * of records: read it on a timer too.  False: counts in the kernel. */
bool sampler_streams(const struct sampler *s);

/*
 * True when the kernel's maps are filling up: since the last
 * sampler_drain_counts() the program added a quarter of the count map's
 * capacity (--count-map-size), or a quarter of the stack map's
 * (--stack-map-size; its stacks are copied out, and can then be pruned,
 * when their counts are drained).  Reads two counters in the program's
 * mmapped .bss and the marks set for them in its .data: no system call.
 * Without a stream, the program wakes the collector (a
 * TASK_EVENT_MAPS_FILLING record) once this turns true, so the collector
 * need not look on a timer; in a stream (no marks) it stays false.
 */
bool sampler_counts_filling(const struct sampler *s);

/*
 * Move the in-kernel counts to @fn: flip the program to the other count
 * map, wait for in-flight samples, and hand over and delete every (key,
 * samples) of the old one.  @final (after sampler_stop()) drains both maps
 * and then each CPU's pending counts and the moved counts it has not sent
 * yet (bpf/counts.bpf.h); a key may have counts in several.
 * 0 or the first error (fn's or -errno).
 */
int sampler_drain_counts(struct sampler *s, bool final,
			 int (*fn)(void *ctx, const struct count_key *k, uint64_t samples),
			 void *ctx);

/* Sum the per-CPU statistics. */
int sampler_read_stats(struct sampler *s, struct sampler_stats *st);

/*
 * File descriptors of the maps of --call-graph auto, owned by the sampler
 * (valid until sampler_close()): "cfi_tables" (BPF_MAP_TYPE_ARRAY_OF_MAPS:
 * table id -> an array map of struct cfi_row, created with
 * BPF_F_INNER_MAP) and "cfi_procs" (tgid -> struct cfi_process); see
 * bpf/cfi_walk.bpf.h; "cfi_requests" (tgid -> time of its last
 * TASK_EVENT_MAPS_NEEDED: deleting the entry lets the walk ask again at
 * once).  Present (created empty) in every mode.
 */
int sampler_cfi_tables_fd(const struct sampler *s);
int sampler_cfi_procs_fd(const struct sampler *s);
int sampler_cfi_requests_fd(const struct sampler *s);

/* The program's cfi_procs_gen (bpf/cfi_memo.bpf.h), in its mmapped .bss:
 * to be bumped after each change of "cfi_procs" (cfi_loader_set_generation()).
 * Owned by @s. */
uint64_t *sampler_cfi_procs_gen(struct sampler *s);

/* File descriptor of "py_procs" (tgid -> struct py_process, bpf/python.h),
 * owned by the sampler, valid until sampler_close(). */
int sampler_py_procs_fd(const struct sampler *s);

/*
 * Tell the program that an entry of "py_procs" was just written: each
 * CPU's note of a process it found without one (bpf/python.bpf.h,
 * py_process_of()) no longer holds.  Call after every write.
 */
void sampler_py_procs_written(struct sampler *s);

/*
 * Process @tgid's self_exec_id after its last exec() in the run, as the
 * BPF program noted it at the exec ("exec_ids", bpf/profile.bpf.c); 0 when
 * it has not exec()ed since the run began (or the note was lost, or the
 * process is gone).  A system call; changes from one value to another
 * only when the process exec()s.
 */
uint64_t sampler_exec_id(const struct sampler *s, uint32_t tgid);

/* File descriptor of "py_codes_seen" (struct py_code_key -> struct
 * py_code_names, bpf/python.h), owned by the sampler, valid until
 * sampler_close(). */
int sampler_py_codes_fd(const struct sampler *s);

/* The period (ns) each sample stands for: cfg->period of sampler_open(). */
uint64_t sampler_period_ns(const struct sampler *s);

/* The event's frequency (Hz), or 0 in period mode (-c): cfg->freq. */
uint64_t sampler_freq_hz(const struct sampler *s);

/* CPUs with an event. */
size_t sampler_nr_cpus(const struct sampler *s);

/* Detach everything and free. NULL is fine. */
void sampler_close(struct sampler *s);

#endif /* BPFPROF_SAMPLER_H */
