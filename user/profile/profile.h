/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile.h - the collector's in-memory profile: processes with their
 * metadata and mappings, threads, deduplicated stacks and sample counts per
 * (thread, user stack, kernel stack).  It is filled while sampling and at
 * the end, then exposed to plugins as the read-only struct bpfprof_profile
 * of plugin.h (profile_view).
 */
#ifndef BPFPROF_PROFILE_MODEL_H
#define BPFPROF_PROFILE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof/plugin.h"

struct profile;
struct perfmap;

/* A process as the collector tracks it (owned by the profile). */
struct proc {
	uint32_t pid;
	uint32_t ppid;
	char *comm;
	char *exe;
	char *cmdline;
	struct bpfprof_mapping *maps;	/* sorted by start, non-overlapping */
	size_t nr_maps;
	bool exited;
	int32_t rank;			/* MPI rank from its environment, -1 if none
					 * (bpfprof_thread_identity.rank) */
	uint32_t host;			/* index into the profile's hosts (profile_add_host());
					 * 0 and unused in a live profile, which has none */
	uint32_t host_pid;		/* its tgid on that host; 0: the same as pid */
	bool maps_read;			/* maps were read at least once */
	uint64_t maps_time_ns;		/* CLOCK_MONOTONIC of the last maps read */
	uint32_t exec_rereads;		/* immediate re-reads allowed after an exec */
	bool exec_started;		/* the kernel's records told an exec whose EXEC
					 * event has not come yet (targets/tracker.c) */
	uint64_t exec_id;		/* which exec() @maps are of: the BPF program's
					 * note of it (sampler_exec_id()) read before
					 * they were; 0: none in the run yet */
	uint64_t samples;
	struct perfmap *perfmap;	/* names of its JIT code (symbols/perfmap.h),
					 * NULL until a frame in anonymous code
					 * needed it; reset at exec */
	struct bpfprof_mapping *past_maps; /* file-backed code mappings of the images
					 * it executed away from (exec), sorted by start,
					 * non-overlapping: they name the user stacks of
					 * samples taken before the exec, once sampling
					 * is over (proc_restore_past_maps()) */
	size_t nr_past_maps;
};

struct profile *profile_new(void);
void profile_free(struct profile *p);

/* The process @pid, created (empty) when missing; NULL on ENOMEM. */
struct proc *profile_proc(struct profile *p, uint32_t pid);
/* The process @pid or NULL. */
struct proc *profile_find_proc(const struct profile *p, uint32_t pid);
/* Replace a string field of a process (comm, exe, cmdline). 0 or -ENOMEM. */
int proc_set_str(char **field, const char *value);

/*
 * Merge a fresh mapping list (e.g. a /proc/PID/maps snapshot) into the
 * process: new mappings replace the ones they overlap, others are kept
 * (the process may have unmapped them since it was sampled).  Copies
 * everything.  0 or -ENOMEM.
 */
int proc_merge_maps(struct proc *proc, const struct bpfprof_mapping *maps, size_t nr);
/* Free @nr mappings (their paths and build-ids) and the array. */
void mappings_free(struct bpfprof_mapping *maps, size_t nr);

/* Forget all mappings (after an exec), and what its perf map said. */
void proc_clear_maps(struct proc *proc);

/*
 * The process exited: keep only the mappings its samples' addresses can
 * be in, the executable ones (file code, [vdso], anonymous JIT code), and
 * free the rest (data, heap, stacks, files' other segments: ~3/4 of a
 * typical process's), so that a long --all run over many short-lived
 * processes does not keep them all.  Never fails.
 */
void proc_keep_code_maps(struct proc *proc);

/*
 * The process executed a new image: its file-backed code mappings move to
 * past_maps (over the older images' they overlap), then proc_clear_maps().
 * Samples taken before the exec (a forked child still running its
 * parent's code, the execve() itself) hold addresses of that image, and
 * address space randomization puts the new image elsewhere.  The mappings
 * are cleared also on error: 0, or -ENOMEM if the old ones were lost.
 */
int proc_retire_maps(struct proc *proc);

/*
 * Once sampling is over: add to the mappings the past ones that no current
 * mapping overlaps, so that samples taken before an exec are named after
 * the image that ran them (the current image wins where both have an
 * address).  Not while sampling: the mappings feed the stack walks of the
 * current image.  0 or -ENOMEM (nothing changed).
 */
int proc_restore_past_maps(struct proc *proc);
/* proc_restore_past_maps() for every process; 0 or the first error. */
int profile_restore_past_maps(struct profile *p);

/*
 * The perf map entry naming @ip of @proc (symbols/perfmap.h), the map
 * created on first use; a miss re-reads the map file, at most every
 * PERFMAP_REREAD_NS.  NULL if none (or out of memory).  The entry's name
 * and perfmap_name(proc->perfmap) live until profile_free().
 */
const struct perfmap_entry *proc_jit_symbol(struct proc *proc, uint64_t ip);
/* The mapping holding @addr, or NULL. */
const struct bpfprof_mapping *proc_find_map(const struct proc *proc, uint64_t addr);

/* Record a thread (creating its process) and its name (may be NULL). */
int profile_thread(struct profile *p, uint32_t pid, uint32_t tid, const char *comm);
/* Set the id thread @tid has on its host (`bpfprof merge` renumbers ids
 * that collide across hosts; 0: the same as tid).  0 or -ENOENT. */
int profile_set_host_tid(struct profile *p, uint32_t tid, uint32_t host_tid);
/*
 * The host named @name (gethostid() @host_id) of a profile merged from
 * several measurements, added when new (found by name); its index, for
 * struct proc.host, in *@index.  A profile without hosts is one live
 * host's: its view takes the run's host name and gethostid().  With
 * hosts, the view numbers the nodes in host name order.  A host whose
 * @host_id is 0 (gethostid() when the host name does not resolve) or
 * already another host's (cloned /etc/hostid) gets a 32-bit FNV-1a hash
 * of its name instead, made unique: physical node ids tell nodes apart.
 * 0 or -ENOMEM.
 */
int profile_add_host(struct profile *p, const char *name, uint32_t host_id, uint32_t *index);
/* Name of thread @tid, or NULL if unknown. */
const char *profile_thread_comm(const struct profile *p, uint32_t tid);

/*
 * Intern a stack under the BPF program's 64-bit stack @id and return its
 * index (0 for an empty stack) in *index.  0 or -ENOMEM.
 */
int profile_intern_stack(struct profile *p, uint64_t id, const uint64_t *ips, uint32_t nr,
			 int kernel, uint32_t *index);
/* Index of the stack interned under @id. 0 or -ENOENT. */
int profile_find_stack(struct profile *p, uint64_t id, uint32_t *index);
/* The stack at @index, or NULL. */
const struct bpfprof_stack *profile_stack(const struct profile *p, uint32_t index);
size_t profile_nr_stacks(const struct profile *p);

/* Add @samples samples of thread (pid, tid) with these stack indices. */
int profile_add_samples(struct profile *p, uint32_t pid, uint32_t tid, uint32_t user_stack,
			uint32_t kernel_stack, uint64_t samples);

/* Iterate over processes (in no particular order). */
void profile_for_each_proc(struct profile *p, void (*fn)(void *ctx, struct proc *proc), void *ctx);

/*
 * Build the read-only view for plugins: every process that has samples.
 * The arrays are owned by the profile and stay valid until the next
 * profile_view() or profile_free().  0 or -ENOMEM.
 */
int profile_view(struct profile *p, const struct bpfprof_run *run, struct bpfprof_profile *view);

/*
 * The view of one process, cut from the full view (profile_view())
 * without walking the other processes: copies of its process entry, its
 * threads and its counts, renumbered from 0.  O(its threads + its counts +
 * log of all counts), so writing one output per process stays linear in
 * the profile.  The arrays belong to @slice; @all must outlive @view.
 */
struct profile_slice {
	struct bpfprof_process process;
	struct bpfprof_thread *threads;
	struct bpfprof_count *counts;
};

/* Fill @view with process @index (< all->nr_processes) of @all, or with no
 * process at all when @index == all->nr_processes.  0 or -ENOMEM. */
int profile_view_process(const struct bpfprof_profile *all, size_t index,
			 struct profile_slice *slice, struct bpfprof_profile *view);

/* Free what profile_view_process() allocated in @slice. */
void profile_slice_free(struct profile_slice *slice);

#endif /* BPFPROF_PROFILE_MODEL_H */
