/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kernel/mmap_events.h - the executable mappings and execs of every
 * process as the kernel reports them when they happen: perf's MMAP2 and
 * COMM (exec) records, from one dummy software event per online CPU (the
 * way `perf record` learns mappings), read from their ring buffers and
 * handed out in time order.
 *
 * Why: /proc/PID/maps can only be read while a process lives, and a
 * child that execs and exits within milliseconds is often gone before
 * the collector gets to its samples; the libraries ld.so maps after the
 * exec were then unknown, and its user stacks stopped at them.  These
 * records are written by the kernel at mmap() and exec time and wait in
 * the ring buffer until read.
 *
 * Times are CLOCK_MONOTONIC ns (the event's clock is set to it), the
 * clock of the BPF program's records, so a consumer can apply a mapping
 * before the first sample that comes after it (mmap_events_next()).
 * Only executable mappings are reported (perf_event_attr.mmap_data is 0).
 */
#ifndef BPFPROF_MMAP_EVENTS_H
#define BPFPROF_MMAP_EVENTS_H

#include <stdint.h>

#include <bpfprof/plugin.h>

/* Kinds of struct mmap_event. */
enum mmap_event_type {
	MMAP_EVENT_MAP = 1,		/* @map was mapped */
	MMAP_EVENT_EXEC = 2,		/* the process began executing a new image: the
					 * mappings before are gone, those after are its */
};

/* One record, as handed out by mmap_events_next(). */
struct mmap_event {
	uint32_t type;			/* enum mmap_event_type */
	uint32_t pid;			/* the process (tgid) */
	uint64_t time_ns;		/* CLOCK_MONOTONIC */
	/* MMAP_EVENT_MAP: start, end, pgoff, dev, inode, prot, shared and
	 * path ("" for anonymous memory, "[vdso]", ...); no build-id.  The
	 * path is valid until the next mmap_events_next() call. */
	struct bpfprof_mapping map;
};

/* The events and their ring buffers (opaque). */
struct mmap_events;

/* Ring buffer pages (data, a power of two) per CPU: 128 KiB, ~1,000 records;
 * its event polls readable at half (mmap_events_fd()).  perf also writes
 * a fork and an exit record of every task there (any event asking for
 * mappings gets them), which are skipped. */
#define MMAP_EVENTS_PAGES 32

/*
 * Open the events on every online CPU and map their ring buffers.  Needs
 * what system-wide perf events need (CAP_PERFMON, or root).  Returns 0 and
 * *@out (mmap_events_close()), or -errno of perf_event_open() or mmap().
 */
int mmap_events_open(struct mmap_events **out);

/* Close the events and free everything.  NULL allowed. */
void mmap_events_close(struct mmap_events *me);

/*
 * The earliest record not yet handed out whose time is at or before
 * @until_ns (UINT64_MAX: any).  The ring buffers are read again only
 * when @until_ns is later than their last reading, so calling this before
 * every sample costs a comparison.  Returns 1 and fills *@out, or 0.
 */
int mmap_events_next(struct mmap_events *me, uint64_t until_ns, struct mmap_event *out);

/*
 * The file descriptor of the @i-th CPU's event (0-based), -1 past the last
 * one: it polls readable (EPOLLIN) once its ring buffer is half full,
 * for a reader that sleeps long between reads (sampler_watch_fd()).
 * Owned by @me.
 */
int mmap_events_fd(const struct mmap_events *me, size_t i);

/* Records the kernel could not write because a ring buffer was full. */
uint64_t mmap_events_lost(const struct mmap_events *me);

#endif /* BPFPROF_MMAP_EVENTS_H */
