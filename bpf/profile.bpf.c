// SPDX-License-Identifier: Dual BSD/GPL
/*
 * profile.bpf.c - the in-kernel half of bpfprof.
 *
 * Owns: what happens on each sample of the perf event (one cpu-clock event
 * per CPU): target filtering, capturing the kernel and user stacks into the
 * "stacks" map under ids of our own (a 64-bit hash of the frames, see
 * docs/ARCHITECTURE.md for why not BPF_MAP_TYPE_STACK_TRACE), and either
 * counting the sample per (tgid, tid, user stack, kernel stack) in the
 * kernel (counts.bpf.h) or emitting it with its timestamp to the "samples"
 * ring buffer.  Also follows process lifecycle (fork, exec, exit) and renames
 * of target threads for the collector through the "events" ring buffer
 * (the tracepoints: lifecycle.bpf.h), and wakes it when its maps fill
 * (maps_filling_wake()).
 * Every sample of a target is counted as seen, and then as kept or as
 * dropped for exactly one reason.  --cgroup narrows every target to the
 * tasks of one cgroup and its descendants (task_in_cgroup()).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpfprof.h"

/* dwarf mode copies x86-64 registers (struct pt_regs), in_user_mode()
 * the x86 cs; the Makefile refuses other machines with the same reason. */
#ifndef __TARGET_ARCH_x86
#error "profile.bpf.c supports x86_64 only for now: it reads x86-64 registers"
#endif

#define EEXIST 17

/* Target selection, set by the collector before load. */
enum target_mode { TARGET_ALL = 0, TARGET_TGIDS = 1, TARGET_TIDS = 2 };

const volatile __u32 target_mode = TARGET_ALL;
const volatile bool include_idle = false;	/* --all: also sample pid 0 */
const volatile bool follow_forks = true;	/* children of targets become targets */
const volatile bool stream_samples = false;	/* ring buffer instead of counts */
const volatile bool want_user_stack = true;
const volatile bool want_kernel_stack = true;
/* Frames a stored stack has room for, 1..BPFPROF_MAX_STACK_DEPTH: the
 * "stacks" and "scratch" values are BPFPROF_STACK_TRACE_SIZE(max_depth)
 * bytes (set before load), so ips[] is touched below max_depth only. */
const volatile __u32 max_depth = BPFPROF_MAX_FP_DEPTH;
const volatile __u64 wakeup_bytes = 256 * 1024;	/* wake the collector past this backlog */
const volatile bool dwarf_mode = false;		/* --call-graph dwarf: copy regs + user stack */
const volatile __u32 user_stack_size = 8192;	/* bytes copied, <= BPFPROF_MAX_USER_STACK */
/* --call-graph auto: copies of young processes' stacks (cfi_copy_instead()) */
const volatile bool cfi_copies = false;

/* Not preallocated: 4,096 elements made at load cost every start 0.6 ms
 * (docs/PERFORMANCE.md, "Session 48"); a lookup costs the same.  A fork's
 * insert takes an element from the CPU's cache, which the collector fills
 * before sampling (user/kernel/map_warm.h) and an irq_work refills right
 * after (a fork runs with interrupts on). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);		/* set before load; 1 with TARGET_ALL */
	__type(key, __u32);			/* tgid (TARGET_TGIDS) or tid (TARGET_TIDS) */
	__type(value, __u8);			/* BPFPROF_TARGET_NAMED, _FOLLOWED */
} targets SEC(".maps");

/*
 * The exec()s of live target processes: tgid -> the task's self_exec_id
 * after its last exec() in the run (no entry: none since the run began or
 * since its pid was reused).  The collector writes a process's
 * "cfi_procs" and "py_procs" entries only while this still says what it
 * said when it read the mappings it writes them from: a fork or mmap
 * record read after the process exec()ed would otherwise write the old
 * image's mappings over the deletion at the exec (on_exec()), and the new
 * image would be walked with them until the exec's own record is read
 * (user/collector.c, entries_current()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);		/* set before load (SETTINGS_EXEC_MAP_MAX) */
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* written at exec()s only */
	__type(key, __u32);
	__type(value, __u64);
} exec_ids SEC(".maps");

/*
 * Entries added since load, to the count maps and to the stack map: the
 * collector reads them (mmapped .bss, no system call) and drains the
 * counts only when the maps are filling, not on a timer.
 */
volatile __u64 counts_added = 0;
volatile __u64 stacks_added = 0;
/* 1 after a record submitted without a wake-up (emit_new_stack()). */
volatile __u32 events_unannounced = 0;
/*
 * The marks the collector sets after each drain (arm_fill_wakeup() in
 * user/kernel/sampler.c): once counts_added reaches counts_fill_at, or
 * stacks_added stacks_fill_at, a TASK_EVENT_MAPS_FILLING record wakes it
 * (maps_filling_wake()), once per fill_armed, which the collector changes
 * with each new pair of marks.  It then sleeps until something needs it
 * rather than looking on a timer.  The marks are in .data: none at load.
 */
volatile __u64 counts_fill_at = ~0ull;
volatile __u64 stacks_fill_at = ~0ull;
volatile __u32 fill_armed = 0;
volatile __u32 fill_woken = 0;

/*
 * bpf_loop()'s flags for the loops that run on few samples: always 0, but
 * read from .bss, a value the verifier does not know, so it leaves these
 * calls to the helper instead of inlining them.  Each inlined bpf_loop()
 * is a patch of ~20 instructions into the whole program, which the kernel
 * pays with a new copy of every instruction's verifier data: ~0.4 ms of
 * the load each here (docs/PERFORMANCE.md, session 36).  The loops run on
 * most samples stay inlined (bpf_loop(..., 0)): the helper's indirect call
 * per iteration cost on_sample 1.22 times as much when all went through it.
 */
volatile __u64 cold_loop_flags = 0;
#define bpf_loop_cold(nr, callback, data) bpf_loop(nr, callback, data, cold_loop_flags)

/*
 * The stacks being built, two per CPU (scratch_stack()).  A plain array
 * indexed by CPU rather than a per-CPU one: per-CPU values stop at 32 KiB,
 * and a stack of BPFPROF_MAX_STACK_DEPTH frames is 8 bytes more.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);			/* 2 * possible CPUs (set before load) */
	__uint(key_size, sizeof(__u32));
	/* as a "stacks" value: it is stored there as it is */
	__uint(value_size, BPFPROF_STACK_TRACE_SIZE(BPFPROF_MAX_FP_DEPTH));
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * STACK_ERRNO_SLOTS); /* user errnos, then kernel */
	__type(key, __u32);
	__type(value, __u64);
} stack_errors SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024);	/* --ringbuf-size */
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} events SEC(".maps");

/*
 * Add @n to statistic @slot with the look-up in place: for the lifecycle
 * programs (lifecycle.bpf.h), to which stat_add() would be their only BPF
 * function.  A program with BPF functions is verified and compiled a
 * function at a time: the four loads took 0.24 ms more
 * (docs/PERFORMANCE.md, "Session 48").
 */
static __always_inline void stat_add_here(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += n;		/* per-CPU: no other writer */
}

/*
 * The verifier inlines each look-up of an array, per-CPU array or hash map
 * (bpf_map_lookup_elem()), one rewrite of the program per look-up
 * instruction, and C inlining multiplies those instructions.  So the small
 * helpers that look up one map from many places are BPF functions of their
 * own (__noinline, a direct call of a few ns): stat_add(), py_count(),
 * scratch_stack(), cfi_vars_here(), py_process_entry(),
 * count_sample_in_maps().  on_sample went from 6,181 to 5,683
 * instructions, its verification ~0.5-1 ms shorter (docs/PERFORMANCE.md,
 * session 47).
 *
 * stat_add(): add @n to statistic @slot (wrapping: the collector sums
 * the CPUs').
 */
static __noinline void stat_add(__u32 slot, __u64 n)
{
	stat_add_here(slot, n);
}

static __always_inline void stat_inc(__u32 slot)
{
	stat_add(slot, 1);
}

static __always_inline void drop_n(enum drop_reason reason, __u64 n)
{
	stat_add(STAT_DROP_BASE + reason, n);
}

static __always_inline void drop(enum drop_reason reason)
{
	stat_inc(STAT_DROP_BASE + reason);
}

static __always_inline bool is_target(__u32 tgid, __u32 tid)
{
	if (target_mode == TARGET_ALL)
		return tgid != 0 || include_idle;
	if (target_mode == TARGET_TIDS)
		return bpf_map_lookup_elem(&targets, &tid) != NULL;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* A target whose samples are taken now: not the command before its exec
 * (BPFPROF_TARGET_AT_EXEC, bpf/bpfprof.h). */
static __always_inline bool is_sampled_target(__u32 tgid, __u32 tid)
{
	__u8 *v;

	if (target_mode != TARGET_TGIDS)
		return is_target(tgid, tid);
	v = bpf_map_lookup_elem(&targets, &tgid);
	return v && *v != BPFPROF_TARGET_AT_EXEC;
}

#include "cgroup.bpf.h"
#include "stack_store.bpf.h"

struct hash_state {
	const struct stack_trace *st;
	__u64 h;
};

/* One frame into the hash (a bpf_loop() callback: the verifier checks the
 * body once, not once per possible frame). */
static long hash_frame(__u32 i, void *data)
{
	struct hash_state *hs = data;
	__u64 j = i, k;

	/* the bound the verifier sees: max_depth is known at load, and so is
	 * the value size; j in one register, so the check is on what indexes */
	barrier_var(j);
	if (j >= max_depth || j >= BPFPROF_MAX_STACK_DEPTH)
		return 1;
	k = hs->st->ips[j] * 0x87c37b91114253d5ULL;
	k = (k << 31) | (k >> 33);
	hs->h ^= k * 0x4cf5ad432745937fULL;
	hs->h = ((hs->h << 27) | (hs->h >> 37)) * 5 + 0x52dce729;
	return 0;
}

/*
 * Frames one bpf_loop() callback takes in turn where a frame's work is a
 * few instructions (the hash here, the shift of bpf/python.bpf.h): a
 * callback's call costs ~15 ns, a step of its unrolled loop a few
 * instructions, and the verifier still checks the callback once
 * (docs/PERFORMANCE.md, "Session 31"); FRAME_STEPS(n) of them take n.
 */
#define FRAMES_PER_STEP 4
#define FRAME_STEPS(n) (((n) + FRAMES_PER_STEP - 1) / FRAMES_PER_STEP)

/* FRAMES_PER_STEP frames into the hash from frame @i * FRAMES_PER_STEP. */
static long hash_frames(__u32 i, void *data)
{
	struct hash_state *hs = data;

	for (__u32 k = 0; k < FRAMES_PER_STEP; k++) {
		__u32 j = i * FRAMES_PER_STEP + k;

		if (j >= hs->st->nr || hash_frame(j, hs))
			return 1;
	}
	return 0;
}

/* 64-bit hash of a stack's frames (murmur3-style mixing) and @salt, never 0. */
static __always_inline __u64 hash_stack(const struct stack_trace *st, __u64 salt)
{
	struct hash_state hs = { .st = st };
	__u32 n = st->nr;
	__u64 h;

	hs.h = (0x9e3779b97f4a7c15ULL ^ ((__u64)st->kernel << 32) ^ n) +
	       salt * 0xc2b2ae3d27d4eb4fULL;
	bpf_loop(FRAME_STEPS(n), hash_frames, &hs, 0);
	h = hs.h;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h ? h : 1;
}

static __always_inline void count_stack_error(int kernel, long err)
{
	__u32 slot = (__u32)(-err);

	if (slot >= STACK_ERRNO_SLOTS)
		slot = STACK_ERRNO_SLOTS - 1;
	slot += kernel ? STACK_ERRNO_SLOTS : 0;
	__u64 *v = bpf_map_lookup_elem(&stack_errors, &slot);
	if (v)
		*v += 1;
}

/* Zero lifecycle record @e but for its header (type, cpu, time, ids). */
static __always_inline void task_event_init(struct task_event *e, __u32 type, __u32 tgid,
					    __u32 tid)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->cpu = bpf_get_smp_processor_id();
	e->time_ns = bpf_ktime_get_ns();
	e->tgid = tgid;
	e->tid = tid;
}

/*
 * Reserve a lifecycle record of @type about @tgid/@tid in the "events" ring
 * buffer, zeroed but for its header (task_event_init()).  NULL when the
 * ring is full, not counted: the caller adds it to STAT_EVENTS_LOST.
 */
static __always_inline struct task_event *task_event_try(__u32 type, __u32 tgid, __u32 tid)
{
	struct task_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (e)
		task_event_init(e, type, tgid, tid);
	return e;
}

/* task_event_try(), a full ring's record counted as lost (stat_add()).
 * Else the caller fills the rest and submits it. */
static __always_inline struct task_event *task_event_reserve(__u32 type, __u32 tgid, __u32 tid)
{
	struct task_event *e = task_event_try(type, tgid, tid);

	if (!e)
		stat_inc(STAT_EVENTS_LOST);
	return e;
}

/*
 * Submit a lifecycle record, waking the collector the ring's way (only if
 * it has read everything before this record), or for sure when records
 * were submitted without a wake-up since the last one: the ring's rule
 * would then never wake it, the reader not having caught up with those.
 * Races between CPUs only add a wake-up or leave one to the next record
 * or the collector's poll timeout.
 */
static __always_inline void task_event_submit(struct task_event *e)
{
	__u64 flags = 0;

	if (events_unannounced) {
		events_unannounced = 0;
		flags = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(e, flags);
}

/*
 * Submit a lifecycle record that need not be read at once, without waking
 * the collector (the next record that wakes it, or its poll timeout,
 * brings this one along): a wake-up costs the submitting task a few
 * microseconds (an inter-processor interrupt, dear in a VM).  But wake it
 * once the ring holds 1/BPFPROF_NEW_STACK_WAKE_FILL of its size unread: a
 * storm of forks and exits under --all would otherwise fill it while the
 * collector sleeps (its timeout is long: user/collector.c).
 */
static __always_inline void task_event_submit_lazy(struct task_event *e)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >=
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / BPFPROF_NEW_STACK_WAKE_FILL) {
		events_unannounced = 0;
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
		return;
	}
	events_unannounced = 1;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/*
 * Wake the collector: a map passed its mark (counts_fill_at,
 * stacks_fill_at).  Once per fill_armed; a record the full ring refuses
 * leaves it to the next entry added.  Global, so the verifier checks it
 * once rather than at each of its callers.
 */
__noinline int maps_filling_wake(void)
{
	__u32 armed = fill_armed;
	struct task_event *e;

	if (fill_woken == armed)
		return 0;
	e = task_event_reserve(TASK_EVENT_MAPS_FILLING, 0, 0);
	if (!e)
		return 0;
	fill_woken = armed;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 1;
}

/*
 * The process whose per-process entries ("cfi_procs", "py_procs") the
 * current one may use while it has none of its own: its parent, when it
 * was forked and neither has exec()ed since (the kernel's own test for an
 * exit signal: copy_process() sets parent_exec_id to the parent's
 * self_exec_id, which the child inherits; an exec() increments the
 * exec'ing task's).  Its memory is then a copy of its parent's, mappings
 * and interpreter at the same addresses.  A forked child's samples before
 * the collector has read the fork and written its entries (pool workers,
 * PostgreSQL backends, pre-forked servers) are walked, with their Python
 * frames, instead of stopping at once or going out as copies.  Nothing is
 * done at the fork itself, so fork()+exec() costs nothing more.  0 if
 * none: another thread's clone, an exec since the fork, an orphan.
 * A global function: the verifier checks its reads once, not in each of
 * process_entry()'s inlined callers (auto: 8,084 -> 7,891 instructions
 * processed, with three of them).  Called only for a process without an entry.
 */
__noinline __u32 forked_parent(__u32 tgid)
{
	struct task_struct *t = bpf_get_current_task_btf(), *parent;
	__u64 at_fork = BPF_CORE_READ(t, parent_exec_id);
	__u32 ptgid;

	if (BPF_CORE_READ(t, self_exec_id) != at_fork)
		return 0;
	parent = BPF_CORE_READ(t, real_parent);
	ptgid = BPF_CORE_READ(parent, tgid);
	if (ptgid == tgid || BPF_CORE_READ(parent, self_exec_id) != at_fork)
		return 0;
	return ptgid;
}

/* The entry of map @map (keyed by tgid) for the current process @tgid,
 * else its forked parent's (forked_parent()), else NULL.  Inlined: each
 * look-up instruction must see one map, or the verifier leaves it to the
 * helper's indirect call (py_process_entry()). */
static __always_inline void *process_entry(void *map, __u32 tgid)
{
	void *v = bpf_map_lookup_elem(map, &tgid);
	__u32 ptgid;

	if (v || !(ptgid = forked_parent(tgid)))
		return v;
	return bpf_map_lookup_elem(map, &ptgid);
}

#include "cfi_walk.bpf.h"
#include "python.bpf.h"
#include "new_stack.bpf.h"
#include "threads.bpf.h"

/*
 * This CPU's scratch stack for the user (@kernel 0) or the kernel stack:
 * room for max_depth frames.  Programs do not nest on a CPU, so it is
 * ours until the sample is done.  NULL never happens (a CPU id is below
 * the possible CPUs the map was sized for).  A BPF function: see
 * stat_add().
 */
static __noinline struct stack_trace *scratch_stack(int kernel)
{
	__u32 slot = bpf_get_smp_processor_id() * 2 + (kernel ? 1 : 0);

	return bpf_map_lookup_elem(&scratch, &slot);
}

/*
 * The Python frames of this CPU's scratch user stack (bpf/python.bpf.h),
 * as a global function: the verifier checks it once, on its own, instead
 * of once for each state of the program that reaches it (each way the
 * native walk ended).  @copy: the stack goes out as a copy instead: the
 * scratch stack gets the thread's Python frames by activation
 * (py_fill_activations()), or nr 0.  Returns 1 if Python frames were
 * written, else 0.
 */
__noinline int py_splice_scratch(__u32 tgid, __u32 tid, __u32 copy)
{
	struct stack_trace *st = scratch_stack(0);

	if (!st)
		return 0;
	/* load-time constants: no copies, no branch */
	copy = copy && (cfi_copies || dwarf_mode);
	/* A copy's stack is left with nr 0 unless Python frames are written:
	 * set here, not tested after the splice (see py_splice_stack()). */
	if (copy)
		st->nr = 0;
	return py_splice_stack(st, tgid, tid, copy) ? 1 : 0;
}

/*
 * The --call-graph auto walk of the current task's user stack into this
 * CPU's scratch user stack (bpf/cfi_walk.bpf.h), as a global function
 * too: bytes written, like bpf_get_stack().
 */
__noinline long cfi_walk_scratch(__u32 tgid, __u32 tid)
{
	struct stack_trace *st = scratch_stack(0);

	return st ? cfi_walk_user_stack(st, tgid, tid) : 0;
}

/*
 * py_new_code() (bpf/new_stack.bpf.h) of this CPU's scratch user stack, as
 * a global function: the verifier checks the scan's bpf_loop() callback
 * once, on its own, not at each of its two callers (capture_stack(), and
 * the copies' copy_python_frames()), four passes over the callback at
 * each (auto: 10,113 -> 9,465 instructions processed).  Only for a new
 * stack with Python frames, or a copy.  Returns 1 or 0.
 */
__noinline int py_new_code_scratch(__u32 tgid)
{
	struct stack_trace *st = scratch_stack(0);

	return st && py_new_code(st, tgid) ? 1 : 0;
}

/*
 * Announce new user stack @id, this CPU's scratch user stack, to the
 * collector (emit_new_stack(), bpf/new_stack.bpf.h), as a global function
 * too: the verifier checks the record's copy of the frames, of a constant
 * size, once, not once for each state of capture_stack() that reaches it.
 * Returns 0.
 */
__noinline int announce_new_stack(__u32 tgid, __u32 tid, __u64 id, int now)
{
	struct stack_trace *st = scratch_stack(0);

	if (st)
		emit_new_stack(st, tgid, tid, id, now);
	return 0;
}

/* Whether this user stack goes out as a copy: bpf/stack_copy.bpf.h. */
static __always_inline bool cfi_copy_instead(void);

/*
 * Take the leaf of this CPU's scratch user stack apart from it
 * (BPFPROF_LEAF_APART, bpf/bpfprof.h) into key->user_leaf, when the
 * collector knows its mapping: --call-graph auto, the walk found the
 * leaf's table, and the leaf is native code, not a Python frame put in its
 * place.  A global function: the verifier checks the rest of
 * capture_stack() once, not once with the leaf apart and once without
 * (auto: 8,542 -> 8,182 instructions processed).  Returns 0.
 */
__noinline int leaf_apart_scratch(struct count_key *key)
{
	struct stack_trace *st = scratch_stack(0);
	struct cfi_walk_vars *v;

	if (!cfi_mode || !key || !st || st->nr < 2 || PY_FRAME_IS(st->ips[0]))
		return 0;
	v = cfi_vars_here();
	if (v && v->leaf_known) {
		key->user_leaf = st->ips[0];
		st->ips[0] = BPFPROF_LEAF_APART;
	}
	return 0;
}

/*
 * Capture one stack of the sample of @key's thread into the map, and set
 * its id in @key (0 for an empty stack; for the user stack, its leaf in
 * key->user_leaf when it goes apart, leaf_apart_scratch()).  Returns 0, or
 * -1 after counting the drop; 1, with no id, for a user stack to send as
 * a copy instead (cfi_copy_instead()).  A global function, like the two
 * above: checked once for both stacks and whatever state the program is
 * in when it calls (docs/PERFORMANCE.md, "Verifier cost of the BPF
 * program").
 */
__noinline int capture_stack(struct bpf_perf_event_data *ctx, int kernel, struct count_key *key)
{
	struct stack_trace *st = scratch_stack(kernel);
	__u32 depth = max_depth, tgid, tid;
	__u64 *id;
	long n;
	bool python = false;	/* the user stack got Python frames */

	if (!key)
		return -1;
	tgid = key->tgid;
	tid = key->tid;
	id = kernel ? &key->kernel_stack : &key->user_stack;
	*id = 0;
	if (!st)
		return 0;
	if (depth > BPFPROF_MAX_FP_DEPTH)	/* the kernel walks no more */
		depth = BPFPROF_MAX_FP_DEPTH;
	if (!kernel && cfi_mode)		/* max_depth frames, bpf/cfi_walk.bpf.h */
		n = cfi_walk_scratch(tgid, tid);
	else
		n = bpf_get_stack(ctx, st->ips, depth * sizeof(__u64),
				  kernel ? 0 : BPF_F_USER_STACK);
	if (n < 0) {
		count_stack_error(kernel, n);
		drop(kernel ? DROP_KERNEL_STACK : DROP_USER_STACK);
		return -1;
	}
	if (!kernel && cfi_mode && n > 0 && cfi_copy_instead()) {
		py_splice_scratch(tgid, tid, 1);	/* its Python frames: send_stack_copy() */
		return 1;
	}
	st->nr = n / sizeof(__u64);
	st->kernel = kernel;
	/* Never a user stack in dwarf mode: saying so spares the verifier
	 * the splice there (it checks this function for any @kernel).  A
	 * stack with Python frames is this process's alone: the collector
	 * names its frames from this process's code objects (pynames.c),
	 * and a forked child shows the same addresses with its own. */
	if (!kernel && !dwarf_mode && py_splice_scratch(tgid, tid, 0))	/* bpf/python.bpf.h */
		python = true;
	if (st->nr == 0)
		return 0;
	if (!kernel)
		leaf_apart_scratch(key);
	*id = hash_stack(st, python ? tgid : 0);
	n = stack_store(*id, st);
	if (n <= 0)
		return n;
	if (stacks_added >= stacks_fill_at)
		maps_filling_wake();
	if (!kernel)
		announce_new_stack(tgid, tid, *id, python && py_new_code_scratch(tgid));
	return 0;
}

/* The header of every "samples" record: when, where, who, which stacks. */
static __always_inline void sample_header(struct sample_event *e, struct bpf_perf_event_data *ctx,
					  const struct count_key *key)
{
	e->time_ns = bpf_ktime_get_ns();
	e->cpu = bpf_get_smp_processor_id();
	e->tgid = key->tgid;
	e->tid = key->tid;
	e->kind = SAMPLE_KIND_SAMPLE;
	e->user_stack = key->user_stack;
	e->kernel_stack = key->kernel_stack;
	e->user_leaf = key->user_leaf;
	e->period = ctx->sample_period;
}

/* The flags of a "samples" record: wake the collector only when the
 * backlog is worth a read (batched wake-ups). */
static __always_inline __u64 sample_wakeup_flags(void)
{
	if (bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* Submit a "samples" record (sample_wakeup_flags()). */
static __always_inline void submit_sample(void *e)
{
	bpf_ringbuf_submit(e, sample_wakeup_flags());
}

#include "counts.bpf.h"

static __always_inline int stream_sample(struct bpf_perf_event_data *ctx, struct count_key *key)
{
	struct sample_event *e = bpf_ringbuf_reserve(&samples, sizeof(*e), 0);

	if (!e) {
		drop(DROP_RINGBUF_FULL);
		return -1;
	}
	sample_header(e, ctx, key);
	submit_sample(e);
	return 0;
}

#include "stack_copy.bpf.h"

/*
 * True when the sample interrupted user mode, where the kernel stack is
 * empty: skipping bpf_get_stack() then saves ~0.2 us per sample (of ~3.5;
 * bpf_stats, docs/PERFORMANCE.md).  x86: the privilege level in cs.
 */
static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
	/* The context allows only 8-byte loads of regs: cs is the low 16 bits
	 * of its slot (little endian), its low 2 bits the privilege level. */
	__u64 cs = *(volatile __u64 *)&ctx->regs.cs;

	return (cs & 3) == 3;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct count_key key = {
		.tgid = pid_tgid >> 32,
		.tid = (__u32)pid_tgid,
	};
	int copy = 0;		/* the user stack goes out as a copy */

	if (!is_sampled_target(key.tgid, key.tid) || !task_in_cgroup(bpf_get_current_task_btf()))
		return 0;
	stat_inc(STAT_SEEN);
	if (want_kernel_stack && !in_user_mode(ctx) && capture_stack(ctx, 1, &key))
		return 0;
	if (!dwarf_mode && want_user_stack && (copy = capture_stack(ctx, 0, &key)) < 0)
		return 0;
	note_thread(key.tgid, key.tid);
	if (copy > 0) {		/* auto: a young process's stack, cfi_copy_instead() */
		if (!send_stack_copy(ctx, &key))
			stat_inc(STAT_KEPT);
		return 0;
	}
	if (dwarf_mode && want_user_stack)	/* the copy's Python frames */
		py_splice_scratch(key.tgid, key.tid, 1);
	if (dwarf_mode ? stream_dwarf_sample(ctx, &key, 0)
		       : stream_samples ? stream_sample(ctx, &key) : count_sample(&key))
		return 0;
	stat_inc(STAT_KEPT);
	return 0;
}

#include "lifecycle.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
