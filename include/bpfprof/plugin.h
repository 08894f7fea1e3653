/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpfprof/plugin.h - the output plugin ABI (version 1).
 *
 * An output plugin is a shared object that exports one function,
 * bpfprof_plugin_entry(), returning a static struct bpfprof_plugin.  The
 * host (the bpfprof collector) loads it with dlopen(), checks abi_version,
 * and drives it through this sequence, all on one thread:
 *
 *   entry() -> open() -> event()* -> write() -> close()
 *
 * event() is only called for plugins with BPFPROF_PLUGIN_STREAM, once per
 * timestamped record (samples, comm, fork, exec, exit, mmap, lost), in
 * the order the collector receives them (per-CPU time order; across CPUs
 * the order is approximately by time).  write() is called once, with the
 * whole aggregated profile, after sampling ended.  close() is always
 * called after a successful open(), also when event() or write() failed.
 *
 * Plugins with BPFPROF_PLUGIN_PER_PROCESS (single-process formats such as
 * the gperftools CPU profile) get one open/write/close cycle per profiled
 * process, each with a profile view holding that process only.
 *
 * Ownership: everything the host passes is owned by the host and read-only
 * for the plugin.  The run, output, process, thread, mapping and stack objects and
 * the strings of a struct bpfprof_symbol stay valid from the moment the
 * plugin receives them until close() returns; a struct bpfprof_event and
 * the profile arrays passed to write() stay valid until close() returns.
 *
 * Errors: functions returning int return 0 on success or a negative errno
 * value.  A plugin explains a failure with host->error(), which keeps the
 * first message; bpfprof prints it, exits non-zero and removes the
 * temporary output, so no partial file is left at the output path.
 *
 * Versioning: within one BPFPROF_PLUGIN_ABI_VERSION, fields may only be
 * appended at the end of the structs the host allocates and passes one at a
 * time (bpfprof_run, bpfprof_profile, bpfprof_event, bpfprof_output,
 * bpfprof_host), and enum values only appended; plugins must not depend on
 * sizeof() of those.  Any change to the structs passed as arrays
 * (bpfprof_process, bpfprof_thread, bpfprof_mapping, bpfprof_stack,
 * bpfprof_count) or filled in by the plugin (bpfprof_plugin,
 * bpfprof_symbol), and any other change, bumps the version; the host
 * refuses plugins built for another version.  Members appended to
 * bpfprof_host are counted by its abi_revision, which a plugin checks
 * before using one (hosts before the first such member read as 0).
 * docs/PLUGINS.md has more.
 *
 * Units: times are nanoseconds of CLOCK_MONOTONIC unless a name says
 * otherwise; frequencies are Hz; sizes are bytes.
 */
#ifndef BPFPROF_PLUGIN_H
#define BPFPROF_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes. */
#define BPFPROF_PLUGIN_ABI_VERSION 1u

/* Name of the function every plugin exports (see bpfprof_plugin_entry_fn). */
#define BPFPROF_PLUGIN_ENTRY "bpfprof_plugin_entry"

/*
 * Why a sample was lost.  Every sample the BPF program saw is either kept
 * (counted in the profile) or counted under exactly one of these reasons.
 */
enum bpfprof_drop_reason {
	BPFPROF_DROP_USER_STACK = 0,	/* bpf_get_stack() failed on the user stack */
	BPFPROF_DROP_KERNEL_STACK = 1,	/* bpf_get_stack() failed on the kernel stack */
	BPFPROF_DROP_STACK_MAP_FULL = 2, /* no room for a new stack in the stack map */
	BPFPROF_DROP_COUNT_MAP_FULL = 3, /* no room for a new (tgid, tid, stacks) count */
	BPFPROF_DROP_RINGBUF_FULL = 4,	/* sample ring buffer full (timestamped stream) */
	BPFPROF_DROP_NR = 5,
};

/*
 * How the user stack walks of `--call-graph auto` ended (the BPF walker's
 * enum cfi_walk_stop, bpf/cfi_row.h); struct bpfprof_run.unwind_stops
 * counts them.  Every sample with a user context has one walk.
 */
enum bpfprof_unwind_stop {
	BPFPROF_UNWIND_COMPLETE = 0,	/* reached the outermost frame */
	BPFPROF_UNWIND_MAX_DEPTH = 1,	/* --max-stack frames taken */
	BPFPROF_UNWIND_UNMAPPED = 2,	/* an address outside the mappings loaded so far */
	BPFPROF_UNWIND_NO_TABLE = 3,	/* code without an unwind table (no CFI, JIT, budget) */
	BPFPROF_UNWIND_NO_ROW = 4,	/* an address no CFI entry covers */
	BPFPROF_UNWIND_UNSUPPORTED = 5,	/* a CFI rule the tables cannot hold */
	BPFPROF_UNWIND_READ_FAULT = 6,	/* the stack could not be read */
	BPFPROF_UNWIND_RBP_UNKNOWN = 7,	/* a frame based on an rbp that was lost */
	BPFPROF_UNWIND_BAD_STEP = 8,	/* the stack did not grow toward the caller */
	BPFPROF_UNWIND_NO_PROCESS = 9,	/* the process's tables were not loaded yet */
	BPFPROF_UNWIND_STOP_NR = 10,
};

/* A short name of @r ("complete", "max-depth", "unmapped", "no-table",
 * "no-row", "unsupported", "read-fault", "rbp-unknown", "bad-step",
 * "no-process"), "?" when out of range. */
static inline const char *bpfprof_unwind_stop_name(unsigned int r)
{
	static const char *const names[BPFPROF_UNWIND_STOP_NR] = {
		"complete", "max-depth", "unmapped", "no-table", "no-row",
		"unsupported", "read-fault", "rbp-unknown", "bad-step", "no-process",
	};

	return r < BPFPROF_UNWIND_STOP_NR ? names[r] : "?";
}

/* Bit flags of struct bpfprof_plugin.flags. */
enum bpfprof_plugin_flags {
	/* Wants every sample with its timestamp through event(). */
	BPFPROF_PLUGIN_STREAM = 1u << 0,
	/* Output is a directory (given as bpfprof_output.dir_fd), not a file. */
	BPFPROF_PLUGIN_DIRECTORY = 1u << 1,
	/* Format holds one process: one open/write/close per process, and with
	 * several processes the outputs are named PATH.<pid>. */
	BPFPROF_PLUGIN_PER_PROCESS = 1u << 2,
	/* Reads only function and module names from symbolize(): the host may
	 * leave file and line unset and skip reading DWARF line tables (which
	 * can cost more than the rest of a short run).  Since ABI 1; older hosts
	 * ignore it. */
	BPFPROF_PLUGIN_NAMES_ONLY = 1u << 3,
};

/*
 * Facts about the whole run.  At open() the counters (samples_*, drops,
 * end_ns) are still zero; the host fills them in before write().
 */
struct bpfprof_run {
	const char *version;		/* bpfprof version, e.g. "0.1.0" */
	const char *event;		/* sampling event name, e.g. "cpu-clock" */
	uint64_t sample_freq;		/* Hz in frequency mode (-F); 0 in period mode */
	uint64_t sample_period;		/* ns of CPU time one sample stands for */
	uint64_t start_ns;		/* CLOCK_MONOTONIC when sampling began */
	uint64_t end_ns;		/* CLOCK_MONOTONIC when sampling ended */
	uint64_t realtime_anchor_ns;	/* CLOCK_REALTIME at start_ns (ns since the epoch):
					 * wall time of t = t - start_ns + anchor */
	const char *hostname;
	const char *os_release;		/* uname -r */
	const char *arch;		/* uname -m, e.g. "x86_64" */
	uint32_t nr_cpus_online;
	uint32_t nr_cpus_available;
	int argc;			/* bpfprof's own command line */
	const char *const *argv;
	const char *target;		/* human description: "pid 42", "system-wide", ... */
	uint32_t max_stack_depth;	/* --max-stack: frames kept per user stack, up to
					 * 4096 (kernel stacks stop at 127) */
	uint64_t samples_seen;		/* samples the BPF program saw for the targets */
	uint64_t samples_kept;		/* samples in the profile */
	uint64_t drops[BPFPROF_DROP_NR]; /* samples lost, by enum bpfprof_drop_reason */
	/* Appended (ABI 1): */
	const char *call_graph;		/* how user stacks were taken: "auto", "fp" or "dwarf" */
	uint64_t unwind_stops[BPFPROF_UNWIND_STOP_NR]; /* "auto": walks by enum
					 * bpfprof_unwind_stop; zero otherwise */
};

/* Protection bits of struct bpfprof_mapping.prot (as in mmap(2)). */
#define BPFPROF_PROT_READ 0x1u
#define BPFPROF_PROT_WRITE 0x2u
#define BPFPROF_PROT_EXEC 0x4u

/* One line of /proc/PID/maps, with the mapped file's build-id if known. */
struct bpfprof_mapping {
	uint64_t start;			/* first address of the mapping */
	uint64_t end;			/* one past the last address */
	uint64_t pgoff;			/* file offset of start, bytes */
	uint32_t prot;			/* BPFPROF_PROT_* */
	uint32_t shared;		/* 1 for MAP_SHARED ('s'), 0 for private ('p') */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	const char *path;		/* file path, "[vdso]", "[heap]", or "" (anonymous) */
	const uint8_t *build_id;	/* GNU build-id bytes, NULL if unknown */
	uint32_t build_id_size;		/* bytes at build_id, 0 if unknown */
};

/*
 * A thread (task) that was sampled.  A thread may change its name while it
 * runs (prctl(PR_SET_NAME), pthread_setname_np(), exec): the aggregated
 * profile keeps its last name; the stream has each change, at its time, as
 * a BPFPROF_EVENT_COMM or BPFPROF_EVENT_EXEC event.
 */
struct bpfprof_thread {
	uint32_t tid;
	uint32_t pid;			/* thread group id (tgid) of its process */
	uint32_t process;		/* index into bpfprof_profile.processes */
	const char *comm;		/* thread name (task comm), the last one */
	uint64_t samples;		/* samples kept for this thread */
};

/* A process (thread group) that was sampled. */
struct bpfprof_process {
	uint32_t pid;			/* tgid */
	uint32_t ppid;			/* parent tgid, 0 if unknown */
	const char *comm;		/* process name: the main thread's last name */
	const char *exe;		/* executable path, "" if unknown (kernel thread) */
	const char *cmdline;		/* arguments joined by spaces, "" if unknown */
	const struct bpfprof_mapping *mappings; /* sorted by start, non-overlapping */
	size_t nr_mappings;
	uint32_t first_thread;		/* its threads: threads[first_thread ..] */
	uint32_t nr_threads;		/*   .. [first_thread + nr_threads - 1] */
	uint64_t samples;		/* samples kept for this process */
	int exited;			/* 1 if it exited before sampling ended */
};

/* A call stack: return addresses, leaf (most recent call) first. */
struct bpfprof_stack {
	const uint64_t *ips;
	uint32_t nr;			/* number of frames; 0 for the empty stack */
	uint32_t kernel;		/* 1: kernel addresses, 0: user addresses */
};

/*
 * Samples of one thread with one (user stack, kernel stack) pair.  The
 * full callchain of such a sample is the kernel stack (leaf first)
 * followed by the user stack (leaf first).
 */
struct bpfprof_count {
	uint32_t thread;		/* index into bpfprof_profile.threads */
	uint32_t user_stack;		/* index into stacks; 0 = no user frames */
	uint32_t kernel_stack;		/* index into stacks; 0 = no kernel frames */
	uint64_t samples;		/* >= 1; CPU time = samples * run->sample_period ns */
};

/*
 * Where a thread ran and which part of a parallel job it belongs to
 * (appended in ABI 1, bpfprof 0.2): one per thread, parallel to
 * bpfprof_profile.threads.  A live profile has one node, the run's host;
 * a profile made by `bpfprof merge` may have many.  HPCToolkit's identity
 * tuples (NODE, RANK, THREAD) are built from these.
 */
struct bpfprof_thread_identity {
	const char *host;		/* host name of the node it ran on */
	uint32_t node;			/* logical node: index of host among the profile's
					 * hosts in host name order, 0 .. nr_nodes - 1 */
	uint32_t host_id;		/* physical node id: gethostid() on that node; in a
					 * merge, a hash of the host name where that is 0
					 * or another node's (distinct nodes, distinct ids) */
	int32_t rank;			/* MPI rank of its process, read from the process's
					 * environment when first seen (OMPI_COMM_WORLD_RANK,
					 * PMIX_RANK, PMI_RANK or SLURM_PROCID); -1 if none */
	uint32_t thread;		/* logical thread index within its process, as
					 * hpcrun numbers them: 0 for the main thread, then
					 * the other sampled threads by tid */
	uint32_t host_pid;		/* its tgid on that node */
	uint32_t host_tid;		/* its tid on that node (bpfprof_thread.pid and .tid
					 * equal these unless a merge renumbered threads whose
					 * ids collided across nodes) */
};

/*
 * The aggregated profile handed to write().  Threads are grouped by
 * process (see bpfprof_process.first_thread); counts are sorted by thread
 * and each (thread, user_stack, kernel_stack) appears once.  stacks[0] is
 * always the empty stack.
 */
struct bpfprof_profile {
	const struct bpfprof_run *run;
	const struct bpfprof_process *processes;
	size_t nr_processes;
	const struct bpfprof_thread *threads;
	size_t nr_threads;
	const struct bpfprof_stack *stacks;
	size_t nr_stacks;
	const struct bpfprof_count *counts;
	size_t nr_counts;
	/* Appended (ABI 1, bpfprof 0.2); hosts before 0.2 leave them out, so
	 * a plugin that may meet such a host must not read them. */
	const struct bpfprof_thread_identity *thread_ids; /* nr_threads entries,
					 * parallel to threads */
	size_t nr_nodes;		/* distinct hosts among thread_ids, >= 1 */
};

/* Kinds of struct bpfprof_event. */
enum bpfprof_event_type {
	BPFPROF_EVENT_SAMPLE = 0,	/* one sample (see sample) */
	BPFPROF_EVENT_COMM = 1,		/* a thread is first seen or renamed (comm) */
	BPFPROF_EVENT_EXEC = 2,		/* the process executed a new image (comm) */
	BPFPROF_EVENT_FORK = 3,		/* new thread or process (ppid, ptid) */
	BPFPROF_EVENT_EXIT = 4,		/* thread exited; process too when tid == pid */
	BPFPROF_EVENT_MMAP = 5,		/* an executable mapping became known (mapping) */
	BPFPROF_EVENT_LOST = 6,		/* lost samples (lost, reason) */
};

/* One timestamped record of the stream (BPFPROF_PLUGIN_STREAM plugins). */
struct bpfprof_event {
	uint32_t type;			/* enum bpfprof_event_type */
	uint32_t cpu;			/* CPU it happened on, or UINT32_MAX if unknown */
	uint64_t time_ns;		/* CLOCK_MONOTONIC */
	uint32_t pid, tid;		/* the task concerned (tgid, tid) */
	union {
		struct {		/* SAMPLE */
			uint32_t user_stack;	/* index, resolve with host->stack() */
			uint32_t kernel_stack;	/* index, resolve with host->stack() */
			uint64_t period;	/* ns of CPU time this sample stands for */
		} sample;
		const char *comm;	/* COMM, EXEC: new name */
		struct {		/* FORK: pid/tid are the child */
			uint32_t ppid, ptid;
		} fork;
		const struct bpfprof_mapping *mapping; /* MMAP */
		struct {		/* LOST */
			uint64_t lost;		/* samples lost */
			uint32_t reason;	/* enum bpfprof_drop_reason */
		} lost;
	};
};

/*
 * Frames of interpreted code (CPython's Python functions).  A user stack
 * may hold frames that are no machine address: each stands for a function
 * of an interpreter, and lies in [BPFPROF_INTERP_FRAME_START,
 * BPFPROF_INTERP_FRAME_END), outside every process's address space.  The
 * host's symbolize() names them (mapping NULL; function, file and line the
 * interpreter's; module the source file, e.g. a .py file; function_start
 * the same for every frame of one function, the frames of a function at
 * or above it, the functions' frames disjoint).  Within a run, one such
 * address means one function in one process.
 */
#define BPFPROF_INTERP_FRAME_START 0xa000000000000000ull
#define BPFPROF_INTERP_FRAME_END 0xb000000000000000ull

/*
 * What an address resolves to.  Strings are owned by the host and stay
 * valid until close(); fields that are not known are NULL or 0.
 */
struct bpfprof_symbol {
	const char *module;		/* load module path, or "[kernel.kallsyms]", "[vdso]" */
	uint64_t module_offset;		/* address as in the module's ELF file (vaddr);
					 * for the kernel, the address itself */
	const struct bpfprof_mapping *mapping; /* mapping holding the ip (user only) */
	const char *function;		/* symbol name, NULL if unresolved; C++ names
					 * demangled, with parameters, and Rust
					 * names (legacy and v0) without hash or
					 * disambiguators, unless the user said
					 * --no-demangle */
	uint64_t function_start;	/* symbol's address in module terms (like module_offset) */
	const char *file;		/* source file (DWARF), NULL if unknown */
	uint32_t line;			/* source line (DWARF), 0 if unknown */
};

struct bpfprof_output;

/*
 * Services the host offers plugins.
 *
 * Members appended within ABI 1 (after priv) are announced by
 * abi_revision, which a plugin checks before using one: a host of an
 * older revision lacks them, and reading them would read past its struct.
 * abi_revision sits where earlier hosts had padding after abi_version
 * (bpfprof supports 64-bit targets only), which they zeroed: those hosts
 * read as revision 0.  bpfprof_host_has_companion() shows the check.
 */
struct bpfprof_host {
	uint32_t abi_version;		/* BPFPROF_PLUGIN_ABI_VERSION of the host */
	uint32_t abi_revision;		/* members of this struct appended within the ABI
					 * version that the host has: 0 none, 1 companion
					 * (BPFPROF_PLUGIN_ABI_REVISION is this header's) */
	/*
	 * Resolve @ip of process @pid (kernel != 0: a kernel address).  Fills
	 * @sym and returns 0; -ENOENT if the address is in no known mapping
	 * or module (sym->module is then NULL), other negative errno on error.
	 * Results are cached by the host; calling it repeatedly is cheap.
	 * Stacks hold return addresses for every frame but the leaf: pass
	 * ip - 1 for those to get the call site's function and line.
	 */
	int (*symbolize)(const struct bpfprof_host *host, uint32_t pid, uint64_t ip,
			 int kernel, struct bpfprof_symbol *sym);
	/* The stack with index @index (valid from the event that named it
	 * until close()), or NULL if there is no such stack. */
	const struct bpfprof_stack *(*stack)(const struct bpfprof_host *host, uint32_t index);
	/* Record why the plugin failed (printf format); the first message wins. */
	void (*error)(const struct bpfprof_host *host, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));
	/* Print a warning to the user (printf format); the run goes on.  The
	 * host prints the first 3 warnings of each @fmt (by address) and
	 * counts the rest in one line at the end. */
	void (*warn)(const struct bpfprof_host *host, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));
	void *priv;			/* the host's, do not touch */
	/* Appended (ABI 1, revision 1): check abi_revision >= 1 first. */
	/*
	 * Open a companion file of output @out: a file the host publishes at
	 * out->path followed by @suffix (e.g. ".python.so" gives
	 * "perf.data.python.so") together with the output, under the same
	 * rule: *@file is a temporary beside that path, open for "w+b" and
	 * seekable, that the host flushes, syncs, closes and renames into
	 * place with the output (companions first, so a reader that finds
	 * the output finds its companions), or removes with it when the
	 * output is discarded (a plugin error, a failed write or rename of
	 * any of them, a second Ctrl-C).  Never fclose() it.  With one
	 * output per process each output has its own companions.
	 *
	 * Call it from open(), event() or write() of the output @out (the
	 * one open() was given); *@file stays valid until close() returns.
	 * @suffix: 1 to 32 characters, no '/'; one file per suffix and
	 * output; up to BPFPROF_COMPANIONS_MAX per output.  Returns 0, or
	 * -EINVAL (bad suffix or @out), -EEXIST (suffix already asked for),
	 * -EMFILE (too many), -ENOMEM, or the -errno of creating the
	 * temporary.  The host reports nothing itself: the plugin decides
	 * whether its output can do without the file (and calls error() if
	 * not).
	 */
	int (*companion)(const struct bpfprof_host *host, const struct bpfprof_output *out,
			 const char *suffix, FILE **file);
};

/* Members of struct bpfprof_host appended within ABI 1 this header
 * describes (see bpfprof_host.abi_revision). */
#define BPFPROF_PLUGIN_ABI_REVISION 1u

/* Companion files per output, at most (see bpfprof_host.companion). */
#define BPFPROF_COMPANIONS_MAX 4

/* Whether @host offers companion(): false on hosts of revision 0. */
static inline int bpfprof_host_has_companion(const struct bpfprof_host *host)
{
	return host->abi_revision >= 1 && host->companion;
}

/*
 * Where the plugin writes.  The host creates a temporary file or directory
 * next to the final path and renames it there only if write() and close()
 * succeeded and the data reached the disk.  Files that belong beside the
 * output (e.g. an image the output names) come from host->companion(), so
 * that they are published or discarded with it.
 */
struct bpfprof_output {
	FILE *file;			/* file plugins: open for "w+b", seekable; the host
					 * flushes and closes it. NULL for directory plugins */
	int dir_fd;			/* BPFPROF_PLUGIN_DIRECTORY: an open empty directory;
					 * -1 for file plugins. The host closes it. */
	const char *path;		/* the final path the user asked for (for messages) */
	uint32_t pid;			/* BPFPROF_PLUGIN_PER_PROCESS: the process; else 0 */
};

/* What a plugin exports (through bpfprof_plugin_entry). */
struct bpfprof_plugin {
	uint32_t abi_version;		/* must be BPFPROF_PLUGIN_ABI_VERSION */
	uint32_t flags;			/* enum bpfprof_plugin_flags */
	const char *name;		/* --format NAME, e.g. "gperftools" */
	const char *description;	/* one line, for --list-formats */
	const char *default_output;	/* output path when -o is not given */
	/* Start an output.  Sets *state to the plugin's own state. */
	int (*open)(const struct bpfprof_host *host, const struct bpfprof_run *run,
		    const struct bpfprof_output *out, void **state);
	/* One stream record (only with BPFPROF_PLUGIN_STREAM; else NULL). */
	int (*event)(void *state, const struct bpfprof_event *ev);
	/* The aggregated profile, once, after sampling ended. */
	int (*write)(void *state, const struct bpfprof_profile *profile);
	/* Free the state; the host then finishes or discards the output. */
	void (*close)(void *state);
};

/*
 * The exported entry point: return the plugin's description for a host
 * speaking @host_abi_version, or NULL if the plugin cannot serve it.
 */
typedef const struct bpfprof_plugin *(*bpfprof_plugin_entry_fn)(uint32_t host_abi_version);

/* Declaration for plugins; define it with BPFPROF_PLUGIN_EXPORT. */
#define BPFPROF_PLUGIN_EXPORT __attribute__((visibility("default")))
BPFPROF_PLUGIN_EXPORT const struct bpfprof_plugin *bpfprof_plugin_entry(uint32_t host_abi_version);

/*
 * BPFPROF_PLUGIN_DEFINE(descriptor): define the exported entry point of a
 * plugin whose description is the object @descriptor (a struct
 * bpfprof_plugin, usually static const): it returns &@descriptor to a
 * host of this header's BPFPROF_PLUGIN_ABI_VERSION and NULL to any other.
 * Use it once, at file scope, after the descriptor:
 *
 *	static const struct bpfprof_plugin my_plugin = { ... };
 *	BPFPROF_PLUGIN_DEFINE(my_plugin);
 *
 * A plugin that must decide more at load time (e.g. its flags) writes
 * bpfprof_plugin_entry() itself instead.  This only spells out the
 * declaration above: the ABI is the same with or without it.
 */
#define BPFPROF_PLUGIN_DEFINE(descriptor)                                                   \
	BPFPROF_PLUGIN_EXPORT const struct bpfprof_plugin *bpfprof_plugin_entry(              \
		uint32_t host_abi_version)                                                    \
	{                                                                                     \
		return host_abi_version == BPFPROF_PLUGIN_ABI_VERSION ? &(descriptor) : NULL; \
	}                                                                                     \
	struct bpfprof_plugin	/* takes the semicolon after the macro */

/*
 * BPFPROF_PLUGIN(name, fields...): describe a plugin and export it, in one
 * declaration.  @name is its --format name (a string); the rest are the
 * designated initializers of its other struct bpfprof_plugin fields
 * (.flags, .description, .default_output, .open, .event, .write, .close;
 * leave out what is NULL or 0).  abi_version is this header's.  It
 * defines a static descriptor and, with BPFPROF_PLUGIN_DEFINE(), the
 * entry point, so use it once per plugin, at file scope:
 *
 *	BPFPROF_PLUGIN("csv",
 *		.description = "one line per sample",
 *		.default_output = "out.csv",
 *		.open = csv_open, .write = csv_write, .close = csv_close);
 *
 * C only (C++ before C++20 has no designated initializers): C++ plugins
 * define the descriptor and use BPFPROF_PLUGIN_DEFINE().
 */
#define BPFPROF_PLUGIN(name_, ...)                                                 \
	static const struct bpfprof_plugin bpfprof_plugin_descriptor = {           \
		.abi_version = BPFPROF_PLUGIN_ABI_VERSION, .name = (name_), __VA_ARGS__ \
	};                                                                          \
	BPFPROF_PLUGIN_DEFINE(bpfprof_plugin_descriptor)

#ifdef __cplusplus
}
#endif
#endif /* BPFPROF_PLUGIN_H */
