/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * python.h - what the BPF program needs to know of a CPython process to
 * put its Python functions into the user stack (bpf/python.bpf.h), shared
 * with the collector that finds it (user/interp/python.c), and how a
 * Python frame is written into a stack (a pseudo-address, decoded by
 * user/interp/pynames.c).  Plain fixed-width types only; the BPF side
 * includes vmlinux.h first, userspace <linux/types.h> through this file.
 *
 * The splice: the native walk (auto or fp) gives the user stack, leaf
 * first.  Each native frame in _PyEval_EvalFrameDefault is one activation
 * of the interpreter; it is replaced by that activation's Python frames,
 * read from the thread's frame chain (tstate -> current frame ->
 * previous ...).  The innermost native activation runs the innermost
 * frames; an activation's run ends at its entry frame (3.11: is_entry
 * set on the first frame it ran; 3.12+: the next frame is the one the
 * interpreter keeps on the C stack, owner FRAME_OWNED_BY_CSTACK).  In 3.6
 * to 3.10 a frame is a heap PyFrameObject and each activation runs one.
 */
#ifndef BPFPROF_PYTHON_H
#define BPFPROF_PYTHON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* An offset a version does not have. */
#define PY_NO_OFFSET 0xffffu

/*
 * Byte offsets of the fields the walk reads, for one CPython minor
 * version (user/interp/py_layout.c's table, checked against DWARF by
 * tests/unit/interp/test_py_layout.c).
 */
struct py_offsets {
	__u16 runtime_interpreters_head;	/* _PyRuntimeState.interpreters.head
					 * (3.6: 0, struct py_process.runtime
					 * being &interp_head) */
	__u16 interp_threads_head;	/* PyInterpreterState.threads.head
					 * (.tstate_head 3.6-3.10) */
	__u16 tstate_next;		/* PyThreadState.next */
	__u16 tstate_native_thread_id;	/* PyThreadState.native_thread_id, or
					 * .thread_id (3.6-3.10: tstate_id_pthread) */
	__u16 tstate_cframe;		/* PyThreadState.cframe (3.11, 3.12), else PY_NO_OFFSET */
	__u16 current_frame;		/* _PyCFrame.current_frame, or
					 * PyThreadState.current_frame (3.13),
					 * PyThreadState.frame (3.6-3.10) */
	__u16 frame_code;		/* _PyInterpreterFrame.f_code / f_executable,
					 * PyFrameObject.f_code (3.6-3.10) */
	__u16 frame_previous;		/* .previous, PyFrameObject.f_back */
	__u16 frame_instr;		/* .prev_instr (3.11, 3.12) / .instr_ptr (3.13),
					 * PyFrameObject.f_lasti (3.6-3.10, an int) */
	__u16 frame_is_entry;		/* .is_entry (3.11), else PY_NO_OFFSET */
	__u16 frame_owner;		/* .owner */
	__u16 code_adaptive;		/* PyCodeObject.co_code_adaptive: the bytecode
					 * (3.11+, else PY_NO_OFFSET) */
	__u16 code_names;		/* PyCodeObject.co_filename (3.11+), .co_cell2arg
					 * (3.6-3.10): the PY_CODE_NAMES_READ bytes
					 * there hold the pointers to the names the
					 * collector reads (new_stack.bpf.h) */
	__u8 owner_cstack;		/* FRAME_OWNED_BY_CSTACK (3.12+), else 0xff */
	__u8 frame_kind;		/* enum py_frame_kind */
	__u8 tstate_id_pthread;		/* 1: the thread id field holds pthread_self()
					 * (glibc x86-64: the thread's fs base), not
					 * the kernel's tid (3.6-3.10) */
	__u8 pad[3];
};

/* What a frame of the chain is, and what its instruction field holds. */
enum py_frame_kind {
	PY_FRAME_INTERP = 0,		/* 3.11+: a _PyInterpreterFrame, a pointer to
					 * the instruction */
	PY_FRAME_OBJECT_INDEX = 1,	/* 3.10: a PyFrameObject, f_lasti the index
					 * of the instruction (code units, -1 before
					 * the first) */
	PY_FRAME_OBJECT_BYTES = 2,	/* 3.6-3.9: a PyFrameObject, f_lasti its
					 * offset in bytes */
};

/*
 * Bytes of a PyFrameObject (3.6-3.10) read at once from its start: every
 * frame_* field of its version lies in them (f_lasti, the last, ends at
 * 124 in 3.6; tests/unit/interp/test_py_layout.c checks).
 */
#define PY_FRAME_OBJECT_READ 128

/*
 * Bytes of a code object read at py_offsets.code_names to tell whether the
 * object at an address is still the one the collector named: co_filename,
 * co_name, co_qualname and co_linetable, four pointers in a row in 3.11-3.13;
 * co_cell2arg, co_filename, co_name and co_linetable (co_lnotab) in 3.6-3.10
 * (tests/unit/interp/test_py_layout.c checks the table against this).
 */
#define PY_CODE_NAMES_READ 32

/*
 * The "py_codes_seen" map (bpf/new_stack.bpf.h): per code object address
 * of a process, the PY_CODE_NAMES_READ bytes at its py_offsets.code_names
 * as the BPF program last read them in a new stack.
 */
struct py_code_key {
	__u64 code;				/* code object address */
	__u32 tgid;
	__u32 pad;
};

struct py_code_names {
	__u64 ptr[PY_CODE_NAMES_READ / 8];	/* co_filename, co_name, ... */
};

/*
 * The value of the "py_procs" map, keyed by tgid: one CPython interpreter
 * mapped by the process, at its runtime addresses.
 */
struct py_process {
	__u64 runtime;			/* &_PyRuntime (3.6: &interp_head) */
	__u64 eval_start[2];		/* _PyEval_EvalFrameDefault and its .cold part */
	__u64 eval_end[2];		/* one past; start == end: none */
	__u64 code_type;		/* &PyCode_Type when a frame may run other
					 * objects (3.13 f_executable), else 0 */
	__u32 version;			/* 0x030b for 3.11, ... */
	__u32 pad;
	struct py_offsets off;
};

/* The per-CPU Python counters: the "py_vars" value begins with
 * __u64 counts[PY_STAT_NR] (bpf/python.bpf.h, struct py_splice_vars). */
enum py_stat {
	PY_STAT_SAMPLES = 0,	/* samples of a thread of a CPython process */
	PY_STAT_SPLICED,	/* samples whose stack got Python frames */
	PY_STAT_FRAMES,		/* Python frames written */
	PY_STAT_TSTATE_HIT,	/* thread state found in the per-thread cache */
	PY_STAT_TSTATE_WALK,	/* ... found by walking the interpreter's threads */
	PY_STAT_NO_TSTATE,	/* the thread has no thread state (not found) */
	PY_STAT_NO_FRAME,	/* the thread state has no current frame */
	PY_STAT_READ_FAULT,	/* a frame could not be read: rest of the chain lost */
	PY_STAT_NOT_CODE,	/* a frame not running a code object, skipped */
	PY_STAT_EVAL_UNMATCHED,	/* an evaluator frame with no Python frames left */
	PY_STAT_FRAMES_LEFT,	/* the native stack ended before the Python frames,
				 * though whole: those left out */
	PY_STAT_TRUNCATED,	/* no room left in the stack (--max-stack) */
	PY_STAT_READS,		/* reads of user memory for Python frames */
	PY_STAT_AT_ROOT,	/* ... ended so, cut: those frames put at its root */
	PY_STAT_COPIES,		/* code objects copied for the collector
				 * (TASK_EVENT_PY_CODE, bpf/new_stack.bpf.h) */
	PY_STAT_COPIES_SKIPPED,	/* ... not copied: the "events" ring half full */
	PY_STAT_CODE_CHECKS,	/* frames' code objects checked (their type) */
	PY_STAT_CODE_CACHED,	/* ... answered by the per-CPU cache, no read */
	PY_STAT_NOT_PYTHON,	/* samples of a process a CPU had noted to have
				 * no interpreter: no look-up (py_process_of()) */
	PY_STAT_NR,
};

/*
 * Bytes of a _PyInterpreterFrame the BPF walk reads at once: every field
 * of struct py_offsets' frame_* lies in them (sizeof the 3.11-3.13 frame
 * header; tests/unit/interp/test_py_layout.c checks the table of
 * user/interp/py_layout.c against this).
 */
#define PY_FRAME_READ 72

/*
 * Bytes of a PyThreadState the BPF program reads at once, from the first
 * of its native_thread_id (thread_id) and its cframe (3.11, 3.12) or
 * current_frame (3.13) or frame (3.6-3.10), the two fields each sample
 * reads: both lie within them, and within the struct, in every version
 * supported (tests/unit/interp/test_py_layout.c checks the table of
 * user/interp/py_layout.c against this).
 */
#define PY_TSTATE_READ 160

/*
 * The BPF program's per-CPU cache of the code objects whose type it
 * checked (bpf/python.bpf.h, py_code_checked()): sets of
 * PY_CODE_CACHE_WAYS slots, chosen by a hash of the address, a power of
 * two of them.  Direct-mapped (one way), two hot code objects of one set
 * put each other out on every sample, as in ~1 run of 5 of pyburn under
 * python3.13 (88-94% of the checks from the cache, against 99.5%).
 */
#define PY_CODE_CACHE_BITS 8
#define PY_CODE_CACHE_SETS (1u << PY_CODE_CACHE_BITS)
#define PY_CODE_CACHE_WAYS 2

/* Threads of an interpreter looked at, at most, to find a thread state. */
#define PY_MAX_THREADS 256

/*
 * A Python frame in a user stack: a pseudo-address above the 47-bit user
 * address space that no native frame can have.
 *   bits 63..60  PY_FRAME_TAG
 *   bits 59..16  the code object's address / 8 (objects are 8-aligned)
 *   bits 15..1   the instruction's index in the code (code units),
 *                PY_FRAME_INSTR_MAX when larger
 *   bit  0       1, so that a consumer's "ip - 1" for a caller frame
 *                changes nothing that is decoded
 */
#define PY_FRAME_TAG 0xaull
#define PY_FRAME_INSTR_MAX 0x7fffull
#define PY_FRAME_ADDR(code, instr)                                                        \
	((PY_FRAME_TAG << 60) | ((((__u64)(code)) >> 3) << 16) |                           \
	 (((__u64)(instr) & PY_FRAME_INSTR_MAX) << 1) | 1)
#define PY_FRAME_IS(addr) (((__u64)(addr) >> 60) == PY_FRAME_TAG)
#define PY_FRAME_CODE(addr) ((((__u64)(addr) >> 16) & ((1ull << 44) - 1)) << 3)
#define PY_FRAME_INSTR(addr) (((__u64)(addr) >> 1) & PY_FRAME_INSTR_MAX)

#endif /* BPFPROF_PYTHON_H */
