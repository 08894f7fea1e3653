/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * bpfprof.h - owns the records shared by the BPF program (profile.bpf.c)
 * and the collector (user/kernel/sampler.c): map keys and values, ring
 * buffer events, drop reasons.  Plain fixed-width types only, so both sides
 * agree on the layout; the BPF side includes vmlinux.h first, userspace
 * <linux/types.h>.  Both sides run on the same machine, so byte order is
 * native.  x86-64 only for now: struct dwarf_sample_event carries x86-64
 * registers (see the Makefile).
 */
#ifndef BPFPROF_PROFILE_H
#define BPFPROF_PROFILE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Frames of a stack the kernel walks with bpf_get_stack(): every kernel
 * stack, and user stacks in fp mode (--call-graph fp, -g).  The walk also
 * stops at kernel.perf_event_max_stack (127 by default), perf's limit too.
 */
#define BPFPROF_MAX_FP_DEPTH 127
/*
 * Frames of the deepest stack of all (--max-stack's limit): a user stack
 * unwound from CFI, by the collector (--call-graph dwarf) or by the BPF
 * walker (auto, bpf/cfi_walk.bpf.h).  struct stack_trace has room for this many; the "stacks"
 * and "scratch" maps hold only BPFPROF_STACK_TRACE_SIZE(max_depth) bytes of
 * one (user/kernel/settings.c), so BPF code touches ips[] below max_depth
 * only.
 */
#define BPFPROF_MAX_STACK_DEPTH 4096
#define BPFPROF_TASK_COMM_LEN 16

/* Values of the BPF program's "targets" map: a process or thread the
 * collector named (-p, -t, the command: its exit may end the run), or one
 * the program follows (a forked child).  The command is
 * BPFPROF_TARGET_AT_EXEC until its exec (on_exec makes it
 * BPFPROF_TARGET_NAMED): it is sampled from its exec on, as perf record's
 * command is (enable_on_exec), not while it is still bpfprof's forked
 * child waiting to run it. */
#define BPFPROF_TARGET_FOLLOWED 1
#define BPFPROF_TARGET_NAMED 2
#define BPFPROF_TARGET_AT_EXEC 3

/*
 * --cgroup's hierarchy: the cgroup v2 one, or the v1 hierarchy of one of
 * these controllers (the BPF program maps each to the kernel's subsystem
 * id, which depends on the kernel's configuration, through CO-RE).
 */
enum bpfprof_cgroup_v1 {
	BPFPROF_CGROUP_V2 = 0,
	BPFPROF_CGROUP_V1_FREEZER,
	BPFPROF_CGROUP_V1_CPUSET,
	BPFPROF_CGROUP_V1_CPU,
	BPFPROF_CGROUP_V1_CPUACCT,
	BPFPROF_CGROUP_V1_MEMORY,
	BPFPROF_CGROUP_V1_DEVICES,
	BPFPROF_CGROUP_V1_PIDS,
};
/* Deepest --cgroup below its hierarchy's root (the kernel has no limit;
 * real ones are a handful of levels deep). */
#define BPFPROF_CGROUP_MAX_LEVEL 64

/* Why a sample was lost; values equal enum bpfprof_drop_reason (plugin.h). */
enum drop_reason {
	DROP_USER_STACK = 0,
	DROP_KERNEL_STACK = 1,
	DROP_STACK_MAP_FULL = 2,
	DROP_COUNT_MAP_FULL = 3,
	DROP_RINGBUF_FULL = 4,
	DROP_NR = 5,
};

/* Slots of the per-CPU "stats" array. */
enum stat_slot {
	STAT_SEEN = 0,			/* samples of targets the program saw */
	STAT_KEPT = 1,			/* counted in "counts" or emitted to "samples" */
	STAT_DROP_BASE = 2,		/* + enum drop_reason */
	STAT_EVENTS_LOST = STAT_DROP_BASE + DROP_NR, /* lifecycle events lost */
	STAT_STACK_IDS,			/* stacks given an id to store (stack_store()) */
	STAT_STACK_IDS_NOTED,		/* ... found in the CPU's note of the ids it met */
	STAT_NR,
};

/* Errno histogram of failed bpf_get_stack() calls: slot = -err (capped). */
#define STACK_ERRNO_SLOTS 64

/*
 * A stack as stored in the "stacks" map under its 64-bit id, which is a
 * hash of its frames (never 0; 0 means "no stack").  Only the first nr
 * entries of ips are meaningful.  A map value is the first
 * BPFPROF_STACK_TRACE_SIZE(depth) bytes of it: room for depth frames.
 */
struct stack_trace {
	__u32 nr;
	__u32 kernel;			/* 1 for kernel addresses */
	__u64 ips[BPFPROF_MAX_STACK_DEPTH];
};

/* Bytes of a struct stack_trace with room for @depth frames. */
#define BPFPROF_STACK_TRACE_SIZE(depth) (8u + 8u * (depth))

/*
 * A user stack stored without its leaf: ips[0] of the stored stack is this
 * marker (no user or kernel address has these top bits, nor a Python
 * frame, PY_FRAME_TAG), and the sample's leaf address goes with the
 * sample (count_key.user_leaf, sample_event.user_leaf).  The leaf is where
 * a thread's samples differ most (a C function's or the interpreter's
 * every instruction), so a stack map of whole stacks takes a new entry,
 * and the collector a new-stack record, for most samples of a busy
 * interpreter (pyburn: 580 stacks for 1,351 samples, 83 without their
 * leaves; docs/PERFORMANCE.md, session 30).  The program takes the leaf
 * apart only where the collector knows its mapping (--call-graph auto:
 * the walk found its CFI table), so the stack's record needs no leaf to
 * make the collector read the process's mappings, and never a Python
 * frame's (its code object is named from the stack's record).
 */
#define BPFPROF_LEAF_APART 0xb000000000000000ull

/* Key of the in-kernel "counts" map: samples per thread and stack pair. */
struct count_key {
	__u32 tgid;
	__u32 tid;
	__u64 user_stack;		/* stack id, 0 = none */
	__u64 kernel_stack;		/* stack id, 0 = none */
	__u64 user_leaf;		/* the user stack's leaf when it is stored
					 * without it (BPFPROF_LEAF_APART), else 0 */
};

/*
 * Slots of each CPU's pending counts (bpf/counts.bpf.h, count_sample()):
 * direct-mapped by a hash of the count key, a power of two.
 */
#define BPFPROF_PENDING_COUNT_BITS 10
#define BPFPROF_PENDING_COUNT_SLOTS (1u << BPFPROF_PENDING_COUNT_BITS)

/* A slot of a CPU's pending counts: @samples samples of @key (0: empty). */
struct pending_count {
	struct count_key key;
	__u64 samples;
};

/*
 * A CPU's slots BPFPROF_PENDING_GROUP_SLOTS at a time: the value of the
 * per-CPU "pending_counts" array, whose key is a slot's number shifted
 * right by BPFPROF_PENDING_GROUP_BITS.  A per-CPU value is at most 32 KiB
 * (the per-CPU allocator's unit); the kernel allocates each one apart, so
 * two values of 20 KiB cost a start-up far less than 1,024 of 40 bytes
 * (0.02 against 0.5-0.7 ms; docs/PERFORMANCE.md, "Session 48").
 */
#define BPFPROF_PENDING_GROUP_BITS 9
#define BPFPROF_PENDING_GROUP_SLOTS (1u << BPFPROF_PENDING_GROUP_BITS)
#define BPFPROF_PENDING_GROUPS (BPFPROF_PENDING_COUNT_SLOTS / BPFPROF_PENDING_GROUP_SLOTS)

struct pending_count_group {
	struct pending_count slot[BPFPROF_PENDING_GROUP_SLOTS];
};

/* What a "samples" record is (struct sample_event, kind). */
enum sample_kind {
	SAMPLE_KIND_SAMPLE = 0,		/* a sample: the stream's, or a stack copy */
	SAMPLE_KIND_MOVED_COUNTS = 1,	/* struct moved_counts_event */
};

/*
 * One sample of the timestamped stream ("samples" ring buffer), and the
 * head of every record of that ring.
 */
struct sample_event {
	__u64 time_ns;			/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 cpu;
	__u32 tgid;
	__u32 tid;
	__u32 kind;			/* enum sample_kind */
	__u64 user_stack;
	__u64 kernel_stack;
	__u64 period;			/* ns of CPU time this sample stands for */
	__u64 user_leaf;		/* as count_key.user_leaf */
};

/* Counts in a struct moved_counts_event. */
#define BPFPROF_MOVED_BATCH 64

/*
 * Count mode: the counts a CPU's pending slots gave up to other keys,
 * BPFPROF_MOVED_BATCH at a time ("samples" ring buffer; the CPU's last
 * ones, fewer, are read from the "moved_counts" map at the end).  Only
 * head's time_ns, cpu and kind (SAMPLE_KIND_MOVED_COUNTS) are set.
 */
struct moved_counts_event {
	struct sample_event head;
	__u32 nr;			/* counts[0..nr) */
	__u32 pad;
	struct pending_count counts[BPFPROF_MOVED_BATCH];
};

/* Largest user stack copy of --call-graph dwarf (bytes, multiple of 8):
 * perf's limit, the most a perf sample's u16 size can carry, 8-aligned. */
#define BPFPROF_MAX_USER_STACK 65528

/*
 * Bytes below sp a dwarf record copies apart: the x86-64 ABI's red zone,
 * where a function may keep data without moving sp.  OpenSSL's SHA-2
 * assembly keeps its saved rsp there (CFA = *(rsp - 8) + 8), which an
 * unwinder reading only from sp up cannot follow.
 */
#define BPFPROF_RED_ZONE 128

/*
 * A sample of --call-graph dwarf, or auto's copy of a young process's
 * stack: the common record, the user registers the unwinder starts from,
 * its Python frames (above), the red zone below sp, and stack_size
 * bytes of the user stack copied from sp upward.  The
 * ring buffer record is sized for the configured copy size; stack_size
 * says how much of it is valid.
 */
/* 8-byte words of x86-64's struct pt_regs (struct dwarf_sample_event),
 * and where rbp, rbx, rip and rsp are among them. */
#define BPFPROF_PT_REGS_WORDS 21
#define BPFPROF_PT_REGS_BP 4
#define BPFPROF_PT_REGS_BX 5
#define BPFPROF_PT_REGS_IP 16
#define BPFPROF_PT_REGS_SP 19

/*
 * The Python frames of a copy of a CPython process's stack (--call-graph
 * dwarf's, or auto's of a young process, cfi_copy_instead()): the program
 * reads the thread's Python frames as for a walked stack, one activation
 * of the interpreter after another, each activation's frames innermost first
 * and followed by BPFPROF_PY_ACTIVATION_END; the collector puts them in
 * place of the _PyEval_EvalFrameDefault frames it unwinds from the copy,
 * the innermost activation in place of the innermost evaluator frame
 * (user/interp/pysplice.c).  At most BPFPROF_COPY_PY_ACTIVATIONS
 * activations are told apart; the frames of those beyond follow the last
 * END without ENDs of their own.
 */
#define BPFPROF_COPY_PY_FRAMES 64
#define BPFPROF_COPY_PY_ACTIVATIONS 16
#define BPFPROF_PY_ACTIVATION_END 0ull

struct dwarf_sample_event {
	struct sample_event sample;	/* user_stack is 0: the collector unwinds */
	__u64 pt_regs[BPFPROF_PT_REGS_WORDS]; /* the user registers at the
					 * sample, as x86-64's struct pt_regs lays
					 * them out (r15, r14, r13, r12, rbp, rbx,
					 * r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi,
					 * orig_rax, rip, cs, eflags, rsp, ss: the
					 * first members of <sys/user.h>'s
					 * user_regs_struct); all zero without */
	__u32 stack_size;		/* valid bytes in stack[] */
	__u32 has_regs;			/* 0: no user context (kernel thread) */
	__u32 red_zone_ok;		/* red_zone[] holds [sp - 128, sp) */
	__u32 pad;
	__u32 py_nr;			/* entries of py_ips, 0: none (see above;
					 * none with --no-interpreters) */
	__u32 py_flags;			/* BPFPROF_NEW_STACK_CODES_KNOWN: the program
					 * saw each code object of py_ips before,
					 * or sent a copy of it (TASK_EVENT_PY_CODE) */
	__u64 unbuilt_pc;		/* auto: the pc whose FDE the walk met not
					 * built yet (bpf/cfi_row.h, CFI_UNBUILT_FDE),
					 * for the collector to build even where the
					 * copy ends below it; 0: none */
	__u64 py_ips[BPFPROF_COPY_PY_FRAMES];	/* Python pseudo-frames and ENDs */
	__u8 red_zone[BPFPROF_RED_ZONE];
	__u8 stack[];
};

/*
 * TASK_EVENT_NEW_STACK records wake the collector at most this often (ns);
 * the collector polls at BPFPROF_NEW_STACK_POLL_MS while new stacks keep
 * coming, so none waits much longer than that for its copy and names
 * (their code objects are copied or wake it at once, new_stack.bpf.h).
 * The poll is the longer of the two: while stacks keep coming the records'
 * wake-ups come first, and the poll only picks up the last ones, which
 * came within the wake-up interval of a wake-up.  1 s/1.2 s, not 200/300
 * ms (sessions 37-40) or 50/100: pyburn's collector wakes 12-16 times in
 * 7 s, not 37-42 (~17-23 in 3.4 s; 55 at 50/100 ms), each wake-up ~60 us
 * of its CPU in a PVM guest (docs/PERFORMANCE.md, sessions 27, 36, 37 and
 * 41).  Nothing in a new stack's record needs a faster read: what must be
 * read while the process lives wakes the collector at once (a thread's
 * first sample, an exec, a walk's request for mappings, a code object not
 * copied), the ring's fill below wakes it before copies are left out, and
 * the stacks wait in the stack map until the collector copied them.
 */
#define BPFPROF_NEW_STACK_WAKEUP_NS 1000000000ull
#define BPFPROF_NEW_STACK_POLL_MS 1200
/*
 * ... but a record wakes it at once when the "events" ring holds a
 * quarter of its size unread: a burst of new Python code objects (imports,
 * code compiled at run time) fills the ring with copies (5 KiB each,
 * struct py_code_event), which are left out once it is half full
 * (tests/integration/python_short_lived.sh: 15-23 copies left out in
 * pyshort's 20 runs with the 200 ms wake-ups alone, 4 with 50 ms).
 */
#define BPFPROF_NEW_STACK_WAKE_FILL 4

/* Kinds of struct task_event ("events" ring buffer). */
enum task_event_type {
	TASK_EVENT_FORK = 1,		/* new task: tgid/tid child, ptgid/ptid parent */
	TASK_EVENT_EXEC = 2,		/* tgid executed a new image; comm is the new name */
	TASK_EVENT_EXIT = 3,		/* tid exited; group_dead set when the process ended */
	TASK_EVENT_NEW_STACK = 4,	/* first sample of a new user stack (stack id) of tgid;
					 * a struct new_stack_event when it has its frames */
	TASK_EVENT_NEW_THREAD = 5,	/* first sample of a thread: comm (none after
					 * a RENAME of it, which stands for it) */
	TASK_EVENT_RENAME = 6,		/* tid renamed itself or was renamed (prctl
					 * PR_SET_NAME, /proc/.../comm): comm is the
					 * new name; exec's own renaming is EXEC's */
	TASK_EVENT_MAPS_NEEDED = 7,	/* --call-graph auto met a pc (stack_id) of tgid
					 * outside what the collector loaded */
	TASK_EVENT_PY_CODE = 8,		/* a struct py_code_event: a Python code object
					 * of tgid the program saw first, copied */
	TASK_EVENT_MAPS_FILLING = 9,	/* the count or stack map passed the mark the
					 * collector set (counts_fill_at, stacks_fill_at
					 * in profile.bpf.c): drain them; no ids */
};

/* A process lifecycle event. */
struct task_event {
	__u32 type;
	__u32 cpu;
	__u64 time_ns;
	__u32 tgid, tid;
	__u32 ptgid, ptid;
	__u32 group_dead;
	__s32 exit_code;
	__u64 stack_id;
	char comm[BPFPROF_TASK_COMM_LEN];
};

/*
 * A new user stack of at most this many frames is announced with them
 * (struct new_stack_event), so the collector has it without copying it
 * from the "stacks" map, a bpf() system call per stack; a deeper one with
 * its id and flags only (nr 0), and the collector copies it.
 * Python stacks, new all the time (their frames carry instruction
 * offsets), are mostly well below this (pyburn's: ~98% of its new user
 * stacks), and the record stays small (below).  Never with frames when
 * max_depth is below this (the copy is of all of it), nor while the
 * "events" ring is half full: lifecycle records need the room.
 */
#define BPFPROF_NEW_STACK_FRAMES 64

/*
 * struct new_stack_event.flags: the program saw each Python code object of
 * the stack before, at the same address and with the same names (the
 * pointers at py_offsets.code_names; "py_codes_seen", new_stack.bpf.h), or
 * sent a copy of it just before (TASK_EVENT_PY_CODE): the collector may
 * name those it has read or been sent already without reading them
 * again.  Without it (and for a plain record) it reads them.
 */
#define BPFPROF_NEW_STACK_CODES_KNOWN 1u

/*
 * TASK_EVENT_NEW_STACK with its flags, and with the stack's frames when it
 * has at most BPFPROF_NEW_STACK_FRAMES: sizeof() = 584 bytes (a plain
 * struct task_event is 64), 592 in the ring with its header; the
 * collector tells the two forms apart by the record's size.
 */
struct new_stack_event {
	struct task_event head;		/* type TASK_EVENT_NEW_STACK, stack_id */
	__u32 nr;			/* frames in ips: 1..BPFPROF_NEW_STACK_FRAMES;
					 * 0: none, copy the stack from the map */
	__u32 flags;			/* BPFPROF_NEW_STACK_* */
	/* the stack as stored under head.stack_id (struct stack_trace, user
	 * addresses and Python pseudo-frames), innermost first; the entries
	 * past nr are undefined */
	__u64 ips[BPFPROF_NEW_STACK_FRAMES];
};

/*
 * TASK_EVENT_PY_CODE: the program's copy of a Python code object that a
 * new stack showed and that it had not seen at that address with those
 * names ("py_codes_seen", bpf/new_stack.bpf.h), taken in the sample and
 * submitted just before that stack's record.  The collector names the
 * code object from it (user/interp/pynames.c), so a short-lived process
 * that has exited, or a module body freed after its import, is named all
 * the same.  It reads nothing more from the process for that object: by
 * then its memory may hold another; a name or line table longer than its
 * region is left out (the frame's line is then its def line).  Regions,
 * in this order:
 *   0  the code object's header, BPFPROF_PY_SNAP_HEADER bytes at @code;
 *   1-3  BPFPROF_PY_SNAP_STR bytes at each of the first three pointers at
 *      py_offsets.code_names (struct py_code_names: the str objects of
 *      the names and the file name, with their text);
 *   4  BPFPROF_PY_SNAP_LINES bytes at the fourth (the line table, a bytes
 *      object).
 * A region's len: all of its bytes, else those up to the end of the page
 * at addr (an object near the end of its mapping), else 0 (unreadable, or
 * addr 0).  sizeof() = 5,272 bytes; never written while the "events"
 * ring is half full (lifecycle records need the room): the collector
 * then reads the process as before.
 */
#define BPFPROF_PY_SNAP_REGIONS 5
#define BPFPROF_PY_SNAP_HEADER 256
#define BPFPROF_PY_SNAP_STR 256
#define BPFPROF_PY_SNAP_LINES 4096	/* 99% of the standard library's tables */

struct py_snap_region {
	__u64 addr;			/* user address the bytes were read at */
	__u32 len;			/* bytes read: the region's size, less, or 0 */
	__u32 pad;
};

struct py_code_event {
	struct task_event head;		/* type TASK_EVENT_PY_CODE, tgid, tid */
	__u64 code;			/* the code object's address */
	struct py_snap_region region[BPFPROF_PY_SNAP_REGIONS];
	__u8 header[BPFPROF_PY_SNAP_HEADER];		/* region 0 */
	__u8 str[3][BPFPROF_PY_SNAP_STR];		/* regions 1-3 */
	__u8 lines[BPFPROF_PY_SNAP_LINES];		/* region 4 */
};

#endif /* BPFPROF_PROFILE_H */
