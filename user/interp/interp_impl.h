/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interp/interp_impl.h - the private state of struct interp, shared by
 * python.c (processes, interpreter files) and pynames.c (code objects).
 */
#ifndef BPFPROF_INTERP_IMPL_H
#define BPFPROF_INTERP_IMPL_H

#include "interp.h"
#include "py_layout.h"
#include "symbols/elf_segments.h"

/* An interpreter file (by device and inode): what its symbols say. */
struct py_file {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	bool is_python;			/* false: looked at, not usable */
	unsigned minor;			/* 3.X by Py_Version or the name, 0 if none */
	const struct py_layout *layout;
	uint64_t runtime;		/* ELF vaddrs */
	uint64_t code_type;
	uint64_t eval[2][2];		/* [start, end) of the evaluator, its .cold */
	struct elf_segments segs;	/* the load segments, for a mapping's bias */
};

/* A CPython process: where its interpreter is. */
struct py_proc {
	uint32_t pid;
	const struct py_layout *layout;
	uint64_t code_type;		/* &PyCode_Type in the process */
	uint64_t eval[2][2];		/* [start, end) of _PyEval_EvalFrameDefault
					 * and its .cold part in the process */
};

/*
 * What tells a code object from another that a process allocated at the
 * same address later: the pointers to its strings and its first line.
 */
struct py_code_id {
	uint64_t qualname, filename, linetable;
	int32_t firstlineno;
};

/* A code object of a process, named; one entry per object, even when
 * several lived at one address in turn. */
struct py_code {
	uint32_t pid;
	uint64_t addr;
	struct py_code_id id;
	bool ok;			/* read; else names NULL */
	char *qualname, *filename;
	int firstlineno;
	uint8_t *linetable;
	size_t linetable_len;
	uint16_t line_format;		/* its table's: enum py_line_format */
};

/* A slot of the table (pid, address) -> the newest entry there. */
struct py_code_slot {
	uint32_t pid;			/* 0: free */
	uint32_t index;			/* into interp.codes */
	uint64_t addr;
	uint64_t checked;		/* interp.batch in which the object at addr was
					 * last read and found to be that entry's */
};

#define PY_LINE_CACHE 4096		/* slots of struct interp's line cache */
#define PY_RECENT_CODES 32		/* code objects read last, re-read together */

struct interp {
	int procs_fd;
	int codes_fd;			/* "py_codes_seen", < 0: none */
	char *cache_dir;		/* the facts' cache (py_cache.h), NULL: none */
	struct py_file *files;
	size_t nr_files, cap_files;
	struct py_proc *procs;
	size_t nr_procs, cap_procs;
	struct py_code *codes;		/* every code object named, in order */
	size_t nr_codes, cap_codes;
	uint64_t batch;			/* the batch of records read now (interp_new_batch()) */
	struct py_code_slot *slots;	/* open addressing by (pid, addr) */
	size_t nr_slots, cap_slots;	/* cap: a power of two */
	struct interp_stats stats;
	/* the code objects whose headers were read last (a ring): when a
	 * batch must read headers, theirs come along in the same system
	 * call, so the batch's other stacks, which mostly run the same
	 * code, need none */
	struct { uint32_t pid; uint64_t addr; } recent[PY_RECENT_CODES];
	size_t recent_next;
	/* the line of recently named frames (a frame address: code entry and
	 * instruction), direct-mapped: writers name the same frames once
	 * per stack, and py_line_of() walks the location table each time */
	struct { uint64_t ip; uint32_t line; } lines[PY_LINE_CACHE];
};

/* The process @pid, NULL if it has no interpreter known. */
struct py_proc *interp_proc(struct interp *it, uint32_t pid);

/* Free the code objects' cache (pynames.c). */
void interp_free_codes(struct interp *it);

#endif /* BPFPROF_INTERP_IMPL_H */
