/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * targets/tracker.h - the process tracker: keeps what the profile needs to
 * know of every process while it is alive (comm, exe, cmdline, parent,
 * threads and their names, executable mappings with build-ids), from
 * /proc snapshots, the BPF program's lifecycle events (fork, exec, exit,
 * first sample of a thread, rename) and the kernel's mapping records
 * (mmap, exec), and reports what it learns as records (COMM, FORK, EXEC,
 * EXIT, MMAP) to a record sink.  A thread's name is its last one, and its
 * process's is its main thread's.
 *
 * The processes and threads themselves are stored in the profile (struct
 * proc, profile_thread()): the tracker decides when to read /proc and what
 * to record; the profile holds the result for the output stage.
 */
#ifndef BPFPROF_TRACKER_H
#define BPFPROF_TRACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof.h"			/* struct task_event */
#include "profile/profile.h"
#include "profile/record_sink.h"

struct tracker {
	struct profile *profile;	/* where processes and threads go (borrowed) */
	const struct record_sink *sink;	/* where records go (borrowed; may be NULL) */
	/* Told after a process's mappings were re-read (e.g. to drop cached
	 * unwind data of that process); may be NULL. */
	void (*maps_changed)(void *ctx, uint32_t pid);
	/* Which exec() process @pid is in now (proc.exec_id), asked before
	 * its mappings are read from /proc; may be NULL (always 0). */
	uint64_t (*exec_id)(void *ctx, uint32_t pid);
	void *maps_changed_ctx;		/* the context of both */
	uint64_t start_ns;		/* CLOCK_MONOTONIC start of the run: time of the
					 * COMM records of threads found by a snapshot */
	uint64_t maps_reads;		/* /proc/PID/maps reads so far */
	uint64_t mmap_records;		/* mappings learned from tracker_mmap() */
};

/* Set up @t; the caller fills maps_changed and exec_id if it wants them. */
void tracker_init(struct tracker *t, struct profile *profile, const struct record_sink *sink,
		  uint64_t start_ns);

/*
 * First sight of process @pid (captured at @time_ns, CLOCK_MONOTONIC):
 * read comm, exe, cmdline, parent, mappings and threads from /proc, once.
 * Returns the process (also when it is already gone), or NULL on ENOMEM.
 */
struct proc *tracker_snapshot(struct tracker *t, uint32_t pid, uint64_t time_ns);

/* Apply one lifecycle event of the BPF program (fork, exec, exit, new
 * thread, rename, mappings needed by the stack walk: first read or
 * re-read as tracker_refresh_maps() allows).  TASK_EVENT_NEW_STACK is the
 * sample ingest's, not handled here.  maps_changed is called after every
 * read of a process's mappings and after a fork copied the parent's. */
void tracker_task_event(struct tracker *t, const struct task_event *e);

/*
 * An address of @proc captured at @time_ns lies outside its known
 * mappings: re-read them if that can help.  @sure: the address is surely
 * real (a sampled ip, or a return address CFI found), not a caller a
 * frame-pointer walk guessed.  True if the mappings were re-read.
 *
 * Maps read after the capture cannot help an older address.  Right after an
 * exec the maps are re-read at once a few times (ld.so is still mapping
 * libraries); then at most every TRACKER_REFRESH_NS for a sure address and
 * every TRACKER_CALLER_REFRESH_NS for a guessed caller, which no re-read
 * can resolve when it is garbage from code built without frame pointers.
 */
bool tracker_refresh_maps(struct tracker *t, struct proc *proc, uint64_t time_ns, bool sure);

/*
 * The kernel's records of what process @pid maps, in time order with the
 * lifecycle events (kernel/mmap_events.h: perf's COMM-exec and MMAP2):
 * they arrive also for processes that are gone by the time the collector
 * reads them, so a short-lived child's libraries are known even if its
 * /proc/PID/maps never could be read.  Records of processes not tracked
 * (or not snapshotted yet) are ignored.
 *
 * tracker_exec_start(): @pid began executing a new image at @time_ns: its
 * mappings are dropped now; the EXEC event that follows keeps the ones
 * recorded since, and announces them all after its EXEC record.
 * tracker_mmap(): @pid mapped @m (an executable mapping, without
 * build-id: it is read here) at @time_ns; merged like a /proc re-read,
 * with an MMAP record unless an exec is under way.
 */
void tracker_exec_start(struct tracker *t, uint32_t pid, uint64_t time_ns);
void tracker_mmap(struct tracker *t, uint32_t pid, const struct bpfprof_mapping *m,
		  uint64_t time_ns);

#define TRACKER_REFRESH_NS 20000000ull		/* 20 ms */
#define TRACKER_CALLER_REFRESH_NS 1000000000ull	/* 1 s */
#define TRACKER_EXEC_REREADS 4			/* immediate re-reads after an exec */

#endif /* BPFPROF_TRACKER_H */
