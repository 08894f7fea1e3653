/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * raw/raw.h - internal interface of the "raw" output plugin (the
 * measurement `bpfprof merge` reads; docs/RAW.md): one writer per on-disk
 * structure (raw_sections.c), the addresses named at record time
 * (raw_symbols.c), and the plugin's state (raw_plugin.c).
 *
 * Every writer appends little-endian bytes to a struct buf and leaves
 * failures in b->err (checked once per section).
 */
#ifndef BPFPROF_RAW_PLUGIN_H
#define BPFPROF_RAW_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "bpfprof/plugin.h"
#include "bpfprof/raw_format.h"
#include "common/buf.h"

/* An address named at record time (kernel, or [vdso]/anonymous memory of
 * process pid; pid 0 for the kernel), or a Python frame of process pid
 * (an interpreter pseudo-address: then file, line and start_line too). */
struct raw_symbol {
	uint32_t pid;
	uint64_t address;
	uint64_t module_offset;
	uint64_t function_start;
	const char *function;		/* the host's strings, valid until close() */
	const char *module;
	const char *file;		/* interpreter frames: source file, NULL unknown */
	uint32_t line;			/* ... the frame's line, 0 unknown */
	uint32_t start_line;		/* ... the line of function_start, 0 unknown */
};

/* ---- raw_sections.c: one function per on-disk structure ---- */

/* The 32-byte file header. */
void raw_write_header(struct buf *b);
/* A section header of @type with payload @length; returns the position of
 * its length field (for raw_patch_length()). */
uint64_t raw_write_section_header(struct buf *b, uint32_t type, uint64_t length);
/* A string: u32 length with the NUL, the bytes, the NUL (NULL is ""). */
void raw_write_string(struct buf *b, const char *s);
/* RAW_SEC_RUN's payload; @host_id is gethostid() of the recording host. */
void raw_write_run(struct buf *b, const struct bpfprof_run *run, uint32_t host_id);
/* One mapping (in RAW_SEC_PROCESSES and in MMAP events). */
void raw_write_mapping(struct buf *b, const struct bpfprof_mapping *m);
/* RAW_SEC_PROCESSES's payload. */
void raw_write_processes(struct buf *b, const struct bpfprof_profile *p);
/* RAW_SEC_THREADS's payload. */
void raw_write_threads(struct buf *b, const struct bpfprof_profile *p);
/* RAW_SEC_STACKS's payload: every stack, index = position. */
void raw_write_stacks(struct buf *b, const struct bpfprof_profile *p);
/* RAW_SEC_COUNTS's payload. */
void raw_write_counts(struct buf *b, const struct bpfprof_profile *p);
/* RAW_SEC_KERNEL_SYMBOLS's payload (@syms sorted by address). */
void raw_write_kernel_symbols(struct buf *b, const struct raw_symbol *syms, size_t nr);
/* RAW_SEC_USER_SYMBOLS's payload (@syms sorted by pid, address). */
void raw_write_user_symbols(struct buf *b, const struct raw_symbol *syms, size_t nr);
/* RAW_SEC_INTERP_SYMBOLS's payload (@syms sorted by pid, address). */
void raw_write_interp_symbols(struct buf *b, const struct raw_symbol *syms, size_t nr);
/* One record of RAW_SEC_EVENTS into the in-memory buffer @b (its size
 * field is patched after the body). */
void raw_write_event(struct buf *b, const struct bpfprof_event *ev);

/* ---- raw_symbols.c ---- */

/*
 * Name every distinct kernel address of @p's stacks (kernel 1) or every
 * [vdso] and anonymous-memory address of its user stacks (kernel 0)
 * through @host, into a sorted array *@out of *@nr entries (free()).
 * 0 or -ENOMEM.
 */
int raw_collect_symbols(const struct bpfprof_host *host, const struct bpfprof_profile *p,
			int kernel, struct raw_symbol **out, size_t *nr);

/*
 * Name every distinct interpreter frame (a Python function's
 * pseudo-address, plugin.h's BPFPROF_INTERP_FRAME_START .. END) of @p's
 * user stacks, per process, through @host: function, file, module, the
 * frame's line, and the line of the function's start (the host's answer
 * for function_start).  Into a sorted array *@out of *@nr entries
 * (free()); frames the host cannot name are left out.  0 or -ENOMEM.
 */
int raw_collect_interp_symbols(const struct bpfprof_host *host, const struct bpfprof_profile *p,
			       struct raw_symbol **out, size_t *nr);

#endif /* BPFPROF_RAW_PLUGIN_H */
