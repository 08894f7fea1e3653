/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interp/interp.h - interpreted code in the stacks: CPython's Python
 * functions (bpf/python.h says how the BPF program splices them into the
 * user stacks).  This step finds the interpreter a process maps and tells
 * the BPF program where it is (python.c), reads the names of the code
 * objects the stacks show while the process lives (pynames.c), and names
 * the Python frames for the symbolizing host (output/host.c).
 *
 * Ownership: struct interp owns every string it hands out (function and
 * file names) until interp_free().  Not thread-safe.
 */
#ifndef BPFPROF_INTERP_H
#define BPFPROF_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpfprof/plugin.h>

#include "python.h"

struct py_code_event;		/* bpf/bpfprof.h */

struct interp;

/* The plugin ABI names the range Python frames lie in. */
_Static_assert(PY_FRAME_ADDR(0, 0) >> 60 << 60 == BPFPROF_INTERP_FRAME_START &&
		       ((PY_FRAME_TAG + 1) << 60) == BPFPROF_INTERP_FRAME_END,
	       "Python frames outside BPFPROF_INTERP_FRAME_START .. END");

/* What was read, for -v (the BPF side's counters are the sampler's). */
struct interp_stats {
	uint64_t processes;		/* CPython processes found */
	uint64_t unsupported;		/* interpreters of a version without a layout */
	uint64_t evaluator_files;	/* interpreter files (executables, libpythons) found */
	uint64_t cold_parts;		/* ... whose evaluator's .cold part was found, in
					 * their symbols or their -dbg file's */
	uint64_t files_cached;		/* files (interpreters or not) whose facts came
					 * from the on-disk cache (py_cache.h) */
	uint64_t codes;			/* code objects named */
	uint64_t code_failures;		/* code objects that could not be read */
	uint64_t frames_seen;		/* Python frames in new stacks */
	uint64_t frames_cached;		/* ... whose code object was known already */
	uint64_t frames_unread;		/* ... named without reading it again (the
					 * program saw it before, unchanged) */
	uint64_t header_reads;		/* process_vm_readv() calls reading code
					 * objects' headers */
	uint64_t replaced;		/* code objects read after another took
					 * their address (py_codes_seen): their
					 * frames keep an older read or no name */
	uint64_t unnamed;		/* frames symbolized without a name */
	uint64_t copies;		/* code objects the BPF program copied
					 * (TASK_EVENT_PY_CODE) */
	uint64_t copies_named;		/* ... named from that copy (the others
					 * were known, or not whole) */
	uint64_t copy_frames;		/* Python frames put into stacks unwound
					 * from copies (interp_splice_copy()) */
};

/*
 * A new interpreter finder writing the BPF map "py_procs" at @procs_fd
 * (bpf/python.h; < 0: none, then nothing is written), and reading the
 * map "py_codes_seen" at @codes_fd (bpf/new_stack.bpf.h; < 0: none) to
 * tell whether a code object it reads is the one a new stack showed.
 * NULL on ENOMEM.
 */
struct interp *interp_new(int procs_fd, int codes_fd);

/*
 * Keep what is learnt of interpreter files in the on-disk cache directory
 * @dir (py_cache.h; NULL: no cache, as after interp_new()), copied.
 * 0 or -ENOMEM.
 */
int interp_set_cache_dir(struct interp *it, const char *dir);

/* Free @it and every string it handed out.  NULL allowed. */
void interp_free(struct interp *it);

/*
 * The mappings of @pid are @maps (@nr, sorted): when one of them is a
 * CPython interpreter of a known version (libpython3.X.so or a python3.X
 * executable exporting _PyRuntime), tell the BPF program where it is;
 * else forget what it was told of @pid (if anything: a process never
 * found to run CPython costs no system call).  With @tell false it only
 * remembers the interpreter, for naming the code objects the program
 * copies (the mappings may be of an image @pid has left, and the BPF
 * entry must wait for the current one's).  Returns true when it wrote
 * @pid's "py_procs" entry.  Errors are counted, not returned: a process
 * whose interpreter is not found keeps native stacks.
 */
bool interp_update(struct interp *it, uint32_t pid, const struct bpfprof_mapping *maps,
		   size_t nr, bool tell);

/* @pid exited: the BPF program forgets it (names already read are kept). */
void interp_forget(struct interp *it, uint32_t pid);

/* True for a Python frame of a user stack (a pseudo-address). */
static inline bool interp_is_frame(uint64_t ip)
{
	return PY_FRAME_IS(ip);
}

/*
 * A new user stack of @pid (@nr frames at @ips, the collector's copy):
 * read the names of the code objects of its Python frames that were not
 * read yet (process_vm_readv(), while the process lives), once per code
 * object, and rewrite each Python frame to name that read (the code
 * object's address becomes the read's number): a code object freed and
 * another allocated at its address later get a read each, and each stack
 * keeps the names it had when it was first seen.  @known: the BPF program
 * saw each code object of the stack before at its address with the same
 * names (BPFPROF_NEW_STACK_CODES_KNOWN): those read before are named from
 * that read, without reading them again; else (a new or changed one) the
 * stack's code objects are read, once per batch.
 */
void interp_learn_stack(struct interp *it, uint32_t pid, uint64_t *ips, size_t nr, bool known);

/*
 * A TASK_EVENT_PY_CODE record (@e, of @size bytes, bpf/bpfprof.h): the BPF
 * program's copy of a code object of e->head.tgid, sent just before the
 * first new stack that shows it at that address with those names.  Name
 * it from the copy alone (by now the process's memory there may hold
 * another object: a name or line table longer than the copy holds is
 * left out, the line is then the def line), so that interp_learn_stack()
 * names that stack's frame from this entry without a read, however soon
 * the object or its process is gone.  A copy without the whole header, of a process
 * without a known interpreter, or of an object named already, changes
 * nothing.  A copy is not a read of the process: a later stack of the
 * same batch that the program could not copy for still has that address
 * read (the object there may have changed since the copy).  NULL @it:
 * nothing.
 */
void interp_code_copy(struct interp *it, const struct py_code_event *e, size_t size);

/*
 * Put the Python frames of a copy of a stack of @pid (--call-graph dwarf,
 * or auto's of a young process; @py, @py_nr entries: struct
 * dwarf_sample_event.py_ips, activations separated by
 * BPFPROF_PY_ACTIVATION_END, bpf/bpfprof.h) into the native
 * stack unwound from that copy (@ips, @nr frames, leaf first, room for
 * @max): each _PyEval_EvalFrameDefault frame, innermost first, is
 * replaced by the next activation's Python frames (an activation without
 * any keeps its evaluator frame).  Activations left when the native
 * frames end go to the root end when @cut (the unwinding did not reach
 * the outermost frame), else are dropped.  Frames beyond @max are left
 * out.  The Python frames are then named (interp_learn_stack(), @known
 * as there).  Returns the new number of frames; @nr when @pid has no
 * interpreter known to @it, or @it is NULL.
 */
size_t interp_splice_copy(struct interp *it, uint32_t pid, uint64_t *ips, size_t nr, size_t max,
			  const uint64_t *py, size_t py_nr, bool cut, bool known);

/*
 * The collector is about to read a new batch of records from the kernel.
 * A code object whose header interp_learn_stack() read in this batch is
 * not read again for the other stacks of the batch: they were all
 * sampled before the batch was read, so one read is as fresh for them
 * all as a read per stack.  NULL @it: nothing.
 */
void interp_new_batch(struct interp *it);

/*
 * Name the Python frame @ip of @pid as interp_learn_stack() rewrote it
 * (interp_is_frame(ip); ip - 1 is fine): function = the qualified name, file = co_filename, line = the
 * instruction's line, module = co_filename, module_offset = the frame's
 * pseudo-address, function_start = that of the code's first instruction,
 * mapping NULL.  A frame whose code object could not be read gets module
 * "[python]" and no function.  Returns 0; -EINVAL for NULL arguments.
 */
int interp_symbolize(struct interp *it, uint32_t pid, uint64_t ip, struct bpfprof_symbol *sym);

/* The counters of @it. */
void interp_get_stats(const struct interp *it, struct interp_stats *st);

#endif /* BPFPROF_INTERP_H */
