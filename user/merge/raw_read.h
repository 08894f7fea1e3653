/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * merge/raw_read.h - the reader of raw measurements (`bpfprof --format
 * raw`, docs/RAW.md), used by `bpfprof merge` and by its fuzz target
 * tests/fuzz/fuzz_raw.c.
 *
 * raw_file_open() checks a whole file before anything is used: the
 * header (magic, version, the recording machine), every section's bounds,
 * every count against the bytes that hold it, every index (thread ->
 * process, count -> thread and stacks, event -> stacks), every string's
 * terminating NUL, the sort orders the plugin ABI promises, and the end
 * marker that tells a complete file from a truncated one.  A file that
 * passes can be used without further checks; the event stream is read
 * again, sequentially, by a cursor (raw_cursor_next()), and only one
 * record is in memory at a time.
 *
 * Ownership: a struct raw_file owns everything its arrays and strings
 * point to (section payloads kept in memory; strings and stack addresses
 * point into them) until raw_file_close().  Units are those of
 * include/bpfprof/plugin.h: ns of CLOCK_MONOTONIC of the recording host,
 * addresses of the recording host's processes.
 *
 * Errors: negative errno, with a one-line reason in @why (no file name;
 * the caller adds it): -ENOENT etc. from opening, -EINVAL not a raw
 * measurement (magic), -EPROTONOSUPPORT another format version,
 * -ENOEXEC recorded on a machine this bpfprof cannot read (another ELF
 * class, byte order or machine), -EBADMSG malformed or truncated,
 * -ENOMEM.
 */
#ifndef BPFPROF_RAW_READ_H
#define BPFPROF_RAW_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpfprof/plugin.h"
#include "bpfprof/raw_format.h"

/* Room for the reason of a failure. */
#define RAW_WHY_SIZE 256

/* A process of the measurement, with its mappings (sorted by start). */
struct raw_process {
	uint32_t pid, ppid;		/* ids on the recording host */
	int32_t rank;			/* MPI rank, -1 if none */
	bool exited;
	uint64_t samples;
	const char *comm, *exe, *cmdline;
	struct bpfprof_mapping *maps;	/* path and build_id point into the file's memory */
	size_t nr_maps;
};

/* A thread; process indexes raw_file.processes. */
struct raw_thread {
	uint32_t tid, pid, process;
	uint32_t thread;		/* logical index within its process (hpcrun's) */
	uint64_t samples;
	const char *comm;
};

/* An address named at record time: a kernel address (pid 0), a [vdso]
 * or anonymous-memory address of process pid, or a Python frame of
 * process pid (a pseudo-address, plugin.h's BPFPROF_INTERP_FRAME_START ..
 * END, bit 0 set; then file, line and start_line too). */
struct raw_symbol {
	uint32_t pid;
	uint64_t address;
	uint64_t module_offset;		/* user: the address in module terms */
	uint64_t function_start;	/* an address <= address (kernel and user alike) */
	const char *function, *module;
	const char *file;		/* interpreter frames: source file, NULL unknown */
	uint32_t line;			/* ... the frame's line, 0 unknown */
	uint32_t start_line;		/* ... function_start's line, 0 unknown */
};

struct raw_file {
	char *path;			/* as given, for messages */
	FILE *f;			/* open during raw_file_open() only */
	uint64_t size;			/* bytes in the file */
	struct bpfprof_run run;		/* strings and argv point into this file's memory */
	const char **argv;
	uint32_t host_id;		/* gethostid() of the recording host */
	struct raw_process *processes;
	size_t nr_processes;
	struct raw_thread *threads;
	size_t nr_threads;
	struct bpfprof_stack *stacks;	/* stacks[0] is the empty stack */
	size_t nr_stacks;
	struct bpfprof_count *counts;
	size_t nr_counts;
	struct raw_symbol *ksyms;	/* sorted by address */
	size_t nr_ksyms;
	struct raw_symbol *usyms;	/* sorted by (pid, address) */
	size_t nr_usyms;
	struct raw_symbol *isyms;	/* Python frames, sorted by (pid, address);
					 * none in files from before the section */
	size_t nr_isyms;
	uint64_t events_offset;		/* file offset of the first event record */
	uint64_t events_length;		/* bytes of event records */
	uint64_t nr_events;		/* records counted by the check */
	uint64_t first_event_ns;	/* smallest time of any record, 0 if none */
	void *payloads[RAW_SEC_INTERP_SYMBOLS + 1]; /* section payloads kept (by type) */
};

/*
 * Open and check the measurement at @path into @rf (zeroed here).
 * 0, or a negative errno (see the top) with a one-line reason in @why;
 * raw_file_close() is safe afterwards either way.
 */
int raw_file_open(const char *path, struct raw_file *rf, char why[RAW_WHY_SIZE]);

/* The same over an open, seekable @f (taken over: closed before it
 * returns), named @name in messages and reopened by that name by cursors. */
int raw_file_open_stream(FILE *f, const char *name, struct raw_file *rf,
			 char why[RAW_WHY_SIZE]);

/* Forget the processes, threads, stacks and counts (their arrays become
 * NULL, the nr_ fields stay): a merge that copied them needs only the
 * run, the symbol tables and the event stream.  Cursors still work. */
void raw_file_drop_tables(struct raw_file *rf);

/* Release everything @rf holds (NULL allowed). */
void raw_file_close(struct raw_file *rf);

/* Named address of @rf for @q: the first entry of @syms (@nr, sorted by
 * (pid, address)) of process @pid at or above @q whose function_start is
 * <= @q; NULL if none. */
const struct raw_symbol *raw_symbol_find(const struct raw_symbol *syms, size_t nr, uint32_t pid,
					 uint64_t q);

/*
 * A sequential reader of a checked file's event records.  The event it
 * returns, and the comm and mapping it points to, are valid until the
 * next raw_cursor_next() or raw_cursor_close().
 */
struct raw_cursor {
	const struct raw_file *rf;
	FILE *f;			/* its own handle on the file */
	uint64_t pos, end;		/* file offsets */
	uint8_t *rec;			/* the current record */
	size_t cap;
	struct bpfprof_mapping map;	/* MMAP's mapping */
};

/* Start reading @rf's events (own file handle).  0 or negative errno. */
int raw_cursor_open(const struct raw_file *rf, struct raw_cursor *c);

/* The next event into *@ev: 1, 0 at the end, or negative errno (-EBADMSG:
 * the file changed since it was checked) with a reason in @why. */
int raw_cursor_next(struct raw_cursor *c, struct bpfprof_event *ev, char why[RAW_WHY_SIZE]);

void raw_cursor_close(struct raw_cursor *c);

#endif /* BPFPROF_RAW_READ_H */
