// SPDX-License-Identifier: BSD-2-Clause
/*
 * collector.c - one profiling run (see collector.h): wires the steps of
 * the data flow together and drives them in order.
 *
 *   targets/    what to profile; the command; the process tracker
 *   kernel/     the BPF sampler: perf events, ring buffers, count maps
 *   profile/    the sample ingest and the profile it fills
 *   output/     the plugin session: streamed records, the written profile,
 *               the summary
 *
 * Each step owns its state; this file owns only the order: set up, sample
 * until done (draining the kernel's maps when they fill), drain, write,
 * summarise, tear down.  Ctrl-C and SIGTERM end the run and write the
 * profile (signals.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "heap.h"
#include "interp/interp.h"
#include "kernel/clock.h"
#include "kernel/mmap_events.h"
#include "kernel/sampler.h"
#include "kernel/settings.h"
#include "output/run_info.h"
#include "output/session.h"
#include "output/summary.h"
#include "profile/ingest.h"
#include "profile/profile.h"
#include "signals.h"
#include "symbols/sym_cache.h"
#include "symbols/symbolize.h"
#include "targets/cgroup.h"
#include "targets/command.h"
#include "targets/targets.h"
#include "targets/tracker.h"
#include "unwind/cfi_cache.h"
#include "unwind/cfi_loader.h"
#include "unwind/unwind.h"

/* Longest sleep without a stream.  Nothing needs a timer then: the
 * program wakes us once its maps fill (sampler_counts_filling()), for
 * the lifecycle records we must read soon, and past a backlog of the
 * others; this only bounds how long a record submitted without a wake-up
 * waits when no other comes (ms).  Each wake-up is ~60 us of our CPU in a
 * PVM guest; a 250 ms timer was most of a steady program's (spin, 4 s:
 * 20 wake-ups, 7 without; docs/PERFORMANCE.md, "Session 41"). */
#define IDLE_POLL_MS 2000

/* The heap populated at the start (heap.h), besides HEAP_GROWTH_BYTES:
 * a short run's collector takes ~1-2 MiB. */
#define HEAP_SETUP_BYTES (1u << 20)
/* -p/-t: /proc is asked whether the targets live at most this often (ns);
 * their exit events tell at once (targets_alive()). */
#define TARGETS_PROCFS_CHECK_NS 100000000ull
/* Longest sleep with the sample stream on: the samples ring buffer wakes
 * us only past a backlog, so read it at least this often (ms). */
#define STREAM_POLL_MS 100
/* The longest a changed process's "cfi_procs" entry waits for the end of a
 * read of the rings (write_changed_entries_if_due()). */
#define CHANGED_MAX_WAIT_NS 1000000ull

struct collector {
	const struct options *opts;
	struct session session;		/* output stage: the plugin and its outputs */
	struct run_info info;		/* the run's metadata for plugins */
	struct command command;		/* -- COMMAND */
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct unwinder *unwinder;	/* --call-graph dwarf, else NULL */
	struct cfi_loader *cfi;		/* --call-graph auto (the BPF walk's tables, and the
					 * copies of young processes' stacks), else NULL */
	struct cfi_cache *cfi_cache;	/* its on-disk tables; NULL: none */
	struct interp *interp;		/* Python frames; NULL with --no-interpreters, dwarf */
	struct tracker tracker;		/* process metadata */
	uint32_t *changed;		/* pids whose BPF entries are to be written */
	size_t nr_changed, cap_changed;	/* (maps_changed(), write_changed_entries()) */
	uint64_t changed_since_ns;	/* when the first of them came; 0: none */
	bool new_stacks_recently;	/* the last poll copied new stacks */
	double cpu_s[4];		/* own CPU at the end of each phase (own_cpu_s()) */
	unsigned long polls;		/* sampler_poll() calls while sampling (-v) */
	struct ingest ingest;		/* samples and counts into the profile */
	struct sampler *sampler;
	struct mmap_events *mmaps;	/* the kernel's mapping records, NULL if unavailable */
	struct sampler_stats stats;
	struct cgroup_target cgroup;	/* --cgroup, resolved */
};

/* ---- the sampler's callbacks -------------------------------------------- */

/* Delete @pid's BPF entries (its exit, or an exec()). */
static void forget_entries(struct collector *c, uint32_t pid)
{
	if (c->interp)
		interp_forget(c->interp, pid);
	if (c->cfi)
		cfi_loader_forget(c->cfi, pid);
}

/* Hand the tracker the kernel's mapping records up to @until_ns, so that
 * a record is applied before the samples and events that follow it. */
static void apply_mmaps(struct collector *c, uint64_t until_ns)
{
	struct mmap_event ev;

	while (mmap_events_next(c->mmaps, until_ns, &ev) > 0) {
		if (ev.type == MMAP_EVENT_EXEC)
			tracker_exec_start(&c->tracker, ev.pid, ev.time_ns);
		else
			tracker_mmap(&c->tracker, ev.pid, &ev.map, ev.time_ns);
	}
}

static void write_changed_entries_if_due(struct collector *c);

static int on_task_event(void *ctx, const struct task_event *e, size_t size)
{
	struct collector *c = ctx;

	apply_mmaps(c, e->time_ns);
	if (e->type == TASK_EVENT_NEW_STACK)
		ingest_new_stack(&c->ingest, e, size);
	else if (e->type == TASK_EVENT_PY_CODE)
		interp_code_copy(c->interp, (const struct py_code_event *)e, size);
	else
		tracker_task_event(&c->tracker, e);
	if (e->type == TASK_EVENT_EXIT && e->group_dead)
		forget_entries(c, e->tgid);
	write_changed_entries_if_due(c);
	return 0;
}

static int on_sample(void *ctx, const struct sample_event *e, size_t size)
{
	struct collector *c = ctx;

	apply_mmaps(c, e->time_ns);
	write_changed_entries_if_due(c);
	return ingest_sample(&c->ingest, e, size);
}

static int on_count(void *ctx, const struct count_key *k, uint64_t samples)
{
	struct collector *c = ctx;

	return ingest_count(&c->ingest, k, samples);
}

static bool stack_copied(void *ctx, uint64_t id)
{
	struct collector *c = ctx;

	return ingest_stack_copied(&c->ingest, id);
}

static uint64_t exec_id(void *ctx, uint32_t pid)
{
	struct collector *c = ctx;

	return c->sampler ? sampler_exec_id(c->sampler, pid) : 0;
}

/*
 * True while @proc is still in the exec() its mappings are of.  A record
 * read late (a fork, an mmap, a re-read of /proc/PID/maps before the
 * exec's own record) leaves the tracker with mappings of an image the
 * process has left; the exec deleted its BPF entries, and writing them
 * again would have the new image walked with the old one's mappings until
 * the exec's record is read.  The exec's record writes the new ones.
 */
static bool entries_current(struct collector *c, const struct proc *proc)
{
	return exec_id(c, proc->pid) == proc->exec_id;
}

/* Write @proc's "cfi_procs" entry from its mappings, if they are still
 * its image's (the tables of an image it has left would only cost time,
 * and keep the interpreter's entry waiting: maps_changed()). */
static void write_cfi_entry(struct collector *c, const struct proc *proc)
{
	/* An exec() between the two tests deleted the entry (on_exec()
	 * notes it first): the write must not stand.  One after the second
	 * test deletes it itself. */
	if (entries_current(c, proc) &&
	    cfi_loader_update(c->cfi, proc->pid, proc->maps, proc->nr_maps) == 0 &&
	    !entries_current(c, proc))
		cfi_loader_forget(c->cfi, proc->pid);
}

/*
 * Write the "cfi_procs" entries of the processes whose mappings changed
 * since the last call, once each: what one read of the ring buffers
 * brought (a fork, the exec and the mmaps of its libraries, often the
 * exit too) costs one write of a process's 16 KiB value, not one per
 * record, and none for a process that is gone.
 */
static void write_changed_entries(struct collector *c)
{
	c->changed_since_ns = 0;
	for (size_t i = 0; i < c->nr_changed; i++) {
		const struct proc *proc = profile_find_proc(c->profile, c->changed[i]);

		if (proc && !proc->exited)
			write_cfi_entry(c, proc);
	}
	c->nr_changed = 0;
	cfi_loader_flush(c->cfi);	/* FDEs of lazy tables built for copies */
}

/* The tracker read (or copied) @pid's mappings: the unwinders follow,
 * the interpreter's at once (the records after this one may be its
 * Python code), the CFI walk's at write_changed_entries(). */
static void maps_changed(void *ctx, uint32_t pid)
{
	struct collector *c = ctx;
	const struct proc *proc;
	bool current;

	if (c->unwinder)
		unwinder_forget(c->unwinder, pid);
	/* The command before its exec is a copy of bpfprof: its files' tables
	 * would only cost time; the exec reads the real ones. */
	if ((pid == (uint32_t)c->command.pid && c->command.release_fd >= 0) ||
	    !(proc = profile_find_proc(c->profile, pid)) || (!c->interp && !c->cfi))
		return;
	/* Not current: the exec's own record writes the entries.  The
	 * interpreter is remembered all the same: its code objects' copies
	 * may come before that record is read, or instead of it (a process
	 * gone before its /proc/PID/maps could be read).  The test (a system
	 * call) is made first only where tables are built: it keeps their
	 * building from delaying the interpreter's entry (write_cfi_entry());
	 * without them the test after the interpreter's write suffices, and
	 * a process that does not run CPython costs none. */
	current = c->cfi ? entries_current(c, proc) : true;
	/* The interpreter first: its Python frames go with the stack copies
	 * sent while the tables are built (bpf/stack_copy.bpf.h).  As for
	 * the CFI entry, a write after an exec() must not stand. */
	if (c->interp && interp_update(c->interp, pid, proc->maps, proc->nr_maps, current)) {
		sampler_py_procs_written(c->sampler);
		if (!entries_current(c, proc))
			interp_forget(c->interp, pid);
	}
	if (!c->cfi || !current)
		return;
	for (size_t i = 0; i < c->nr_changed; i++)
		if (c->changed[i] == pid)
			return;
	if (c->nr_changed == c->cap_changed) {
		size_t cap = c->cap_changed ? 2 * c->cap_changed : 64;
		uint32_t *n = realloc(c->changed, cap * sizeof(*n));

		if (!n) {		/* no room to wait: now */
			write_cfi_entry(c, proc);
			return;
		}
		c->changed = n;
		c->cap_changed = cap;
	}
	c->changed[c->nr_changed++] = pid;
	if (!c->changed_since_ns)
		c->changed_since_ns = monotonic_ns();
}

/*
 * Within a read of the rings: write the waiting entries once the oldest
 * has waited CHANGED_MAX_WAIT_NS.  A read lasts as long as records keep
 * coming, and a slow one (young processes' stack copies unwound here, a
 * sanitizer build) must not keep entries from the program until it ends:
 * their processes' samples would go out as copies meanwhile, and make
 * the read longer still.
 */
static void write_changed_entries_if_due(struct collector *c)
{
	uint64_t built = cfi_loader_dirty_since(c->cfi), now;

	if (!c->changed_since_ns && !built)
		return;
	now = monotonic_ns();
	if ((c->changed_since_ns && now - c->changed_since_ns >= CHANGED_MAX_WAIT_NS) ||
	    (built && now - built >= CHANGED_MAX_WAIT_NS))
		write_changed_entries(c);
}

/*
 * The on-disk cache of unwind tables for the loader: --unwind-cache DIR
 * (an error if unusable), else the default directory (without a cache if
 * unusable, said with -v), none with --no-unwind-cache.
 */
static int open_unwind_cache(struct collector *c)
{
	const struct options *o = c->opts;
	char buf[4096];
	const char *dir = o->unwind_cache ? o->unwind_cache : cfi_cache_default_dir(buf, sizeof(buf));
	int err;

	if (o->no_unwind_cache || !dir)
		return 0;
	if ((err = cfi_cache_open(dir, &c->cfi_cache))) {
		if (o->unwind_cache || o->verbose)
			fprintf(stderr, "bpfprof: cannot use %s for the unwind-table cache: %s%s\n", dir,
				err == -EPERM ? "not owned by this user or writable by others"
					      : strerror(-err),
				o->unwind_cache ? "; give another --unwind-cache or --no-unwind-cache"
						: "; tables are built every run");
		return o->unwind_cache ? err : 0;
	}
	cfi_loader_set_cache(c->cfi, c->cfi_cache);
	/* the facts of interpreter files (interp/py_cache.h) */
	if (c->interp && (err = interp_set_cache_dir(c->interp, cfi_cache_dir(c->cfi_cache))))
		return err;
	/* the function tables of the files named too (symbols/sym_cache.h) */
	return symbolizer_set_cache_dir(c->symbolizer, cfi_cache_dir(c->cfi_cache));
}

/*
 * --call-graph auto, before the first sample: the tables of libc, ld.so
 * and the vDSO, and those of the -p targets, so that their first samples
 * are walked whole (the tracker's snapshot writes the same again later).
 */
static int before_sampling(void *ctx, struct sampler *s)
{
	struct collector *c = ctx;
	const struct options *o = c->opts;
	int err;

	/* The BPF program puts Python frames into the stacks it walks (auto)
	 * or the kernel walks (fp), and sends them with the stack copies
	 * (dwarf, auto's young processes) for the ingest to put in. */
	if (!o->no_interpreters) {
		if (!(c->interp = interp_new(sampler_py_procs_fd(s), sampler_py_codes_fd(s))))
			return -ENOMEM;
		c->ingest.interp = c->interp;
		c->session.host.interp = c->interp;
	}
	if (o->call_graph != CALL_GRAPH_AUTO)
		return 0;
	c->cfi = cfi_loader_new(sampler_cfi_tables_fd(s), sampler_cfi_procs_fd(s),
				sampler_cfi_requests_fd(s), o->unwind_memory);
	if (!c->cfi)
		return -ENOMEM;
	cfi_loader_set_generation(c->cfi, sampler_cfi_procs_gen(s));
	c->ingest.cfi = c->cfi;		/* the young processes' stack copies */
	if ((err = open_unwind_cache(c)))
		return err;
	cfi_loader_preload(c->cfi);
	for (size_t i = 0; i < o->nr_ids && o->targets == TARGETS_PIDS; i++)
		cfi_loader_load_pid(c->cfi, o->ids[i]);
	return 0;
}

/* ---- set-up ------------------------------------------------------------- */

/* The profile, its symbolizer, the unwinder, and the steps over them. */
static int make_steps(struct collector *c)
{
	const struct options *o = c->opts;

	c->profile = profile_new();
	c->symbolizer = symbolizer_new();
	if (!c->profile || !c->symbolizer)
		return -ENOMEM;
	if (c->session.plugin.desc->flags & BPFPROF_PLUGIN_NAMES_ONLY)
		symbolizer_set_lines(c->symbolizer, false);
	symbolizer_set_demangle(c->symbolizer, !o->no_demangle);
	if (o->call_graph == CALL_GRAPH_DWARF && !(c->unwinder = unwinder_new()))
		return -ENOMEM;
	session_attach(&c->session, c->profile, c->symbolizer, &c->info.run);
	tracker_init(&c->tracker, c->profile, session_sink(&c->session), 0);
	c->tracker.maps_changed = maps_changed;
	c->tracker.exec_id = exec_id;
	c->tracker.maps_changed_ctx = c;
	return ingest_init(&c->ingest, c->profile, NULL, &c->tracker, session_sink(&c->session),
			   c->unwinder, o->max_stack);
}

static int setup(struct collector *c)
{
	const struct options *o = c->opts;
	struct sampler_callbacks cb = { .ctx = c, .task_event = on_task_event, .sample = on_sample,
					.before_sampling = before_sampling };
	struct sampler_config cfg;
	uint32_t command_pid;
	int err;

	if ((err = session_load(&c->session, o)) || (err = targets_check(o)) ||
	    (o->cgroup && (err = cgroup_target_resolve(o->cgroup, NULL, &c->cgroup))) ||
	    (err = make_steps(c)))
		return err;
	run_info_fill(&c->info, o);
	if (o->targets == TARGETS_COMMAND && (err = command_start(&c->command, o->command)))
		return err;
	command_pid = (uint32_t)c->command.pid;
	/* after the fork: heap.h */
	heap_setup(HEAP_SETUP_BYTES);
	err = sampler_config_from_options(o, c->session.stream, &command_pid,
					  c->info.run.nr_cpus_online, &cfg);
	if (o->cgroup) {
		cfg.cgroup_filter = true;
		cfg.cgroup_hierarchy = c->cgroup.hierarchy;
		cfg.cgroup_level = c->cgroup.level;
		cfg.cgroup_id = c->cgroup.id;
	}
	if (err || (err = sampler_open(&cfg, &cb, &c->sampler)))
		return err;
	/* The settings' one home is the sampler: the metadata reads them there. */
	c->info.run.sample_freq = sampler_freq_hz(c->sampler);
	c->info.run.sample_period = sampler_period_ns(c->sampler);
	c->ingest.sampler = c->sampler;
	/* Without them, mappings come from /proc alone (as they did before). */
	if (mmap_events_open(&c->mmaps))
		c->mmaps = NULL;
	/* Their rings fill with every process's mappings while we sleep
	 * (IDLE_POLL_MS): wake at half full, as for the BPF rings. */
	for (size_t i = 0; mmap_events_fd(c->mmaps, i) >= 0; i++)
		if ((err = sampler_watch_fd(c->sampler, mmap_events_fd(c->mmaps, i))))
			return err;
	return 0;
}

/* ---- sampling ----------------------------------------------------------- */

/* Milliseconds from @now to @when (ns), rounded up, at least 0. */
static int ms_until(uint64_t now, uint64_t when)
{
	uint64_t ms;

	if (when <= now)
		return 0;
	ms = (when - now + 999999ull) / 1000000ull;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* Move in-kernel counts out once the maps are a quarter full, and empty the
 * stack map of stacks already copied once they take a quarter of its
 * slots: the maps never fill up, and a steady profile (fewer distinct
 * stacks than that) is read once, at the end.  Asked after each poll:
 * without a system call unless one is due. */
static int drain_if_filling(struct collector *c)
{
	int err;

	if (!c->session.stream && sampler_counts_filling(c->sampler) &&
	    (err = sampler_drain_counts(c->sampler, false, on_count, c)))
		return err;
	if (c->ingest.stacks_copied >= sampler_stack_map_size(c->sampler) / 4) {
		sampler_prune_stacks(c->sampler, stack_copied, c);
		c->ingest.stacks_copied = 0;
	}
	return 0;
}

static int sample_until_done(struct collector *c)
{
	const struct options *o = c->opts;
	uint64_t start = c->info.run.start_ns;
	uint64_t deadline = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : UINT64_MAX;
	uint64_t next_procfs_check = 0;
	int timeout, n;

	while (!signals_stop_requested() && !c->session.failed) {
		uint64_t now = monotonic_ns(), stacks = c->ingest.stacks_copied;

		bool ask_procfs = now >= next_procfs_check;

		if (ask_procfs)
			next_procfs_check = now + TARGETS_PROCFS_CHECK_NS;
		if (now >= deadline || !targets_alive(o, c->profile, ask_procfs, &c->command))
			break;
		/* Sleep until the deadline; lifecycle events (a target's exit
		 * among them), filling maps and signals wake us earlier, new
		 * stacks at most every BPFPROF_NEW_STACK_WAKEUP_NS: while they
		 * come, look for those that did not wake us. */
		timeout = ms_until(now, deadline);
		if (timeout > IDLE_POLL_MS)
			timeout = IDLE_POLL_MS;
		if (c->new_stacks_recently && timeout > BPFPROF_NEW_STACK_POLL_MS)
			timeout = BPFPROF_NEW_STACK_POLL_MS;
		if (sampler_streams(c->sampler) && timeout > STREAM_POLL_MS)
			timeout = STREAM_POLL_MS;
		interp_new_batch(c->interp);
		heap_populate();	/* before the records' allocations: heap.h */
		n = sampler_poll(c->sampler, timeout);
		c->polls++;
		c->new_stacks_recently = c->ingest.stacks_copied != stacks;
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "bpfprof: reading the ring buffers failed: %s\n", strerror(-n));
			return n;
		}
		/* Every record stamped before @now was read, unless the read
		 * was cut short (records wait): later ones may come. */
		if (!sampler_pass_cut(c->sampler))
			apply_mmaps(c, now);
		write_changed_entries(c);
		if ((n = drain_if_filling(c)))
			return n;
	}
	return 0;
}

/* Stop sampling and read what is left: the ring buffers, then the counts. */
static int drain(struct collector *c)
{
	int n;

	sampler_stop(c->sampler);
	while (interp_new_batch(c->interp), (n = sampler_poll(c->sampler, 0)) > 0)
		;
	apply_mmaps(c, UINT64_MAX);
	c->info.run.end_ns = monotonic_ns();
	c->ingest.counts_time_ns = c->info.run.end_ns;
	if (!c->session.stream && (n = sampler_drain_counts(c->sampler, true, on_count, c)))
		return n;
	/* No walk needs the current images alone any more: samples taken
	 * before an exec get the image they ran in. */
	return profile_restore_past_maps(c->profile);
}

static void finish_run_stats(struct collector *c)
{
	const uint64_t *extra = c->ingest.drops;	/* stacks that vanished, on top */
	struct bpfprof_run *run = &c->info.run;

	sampler_read_stats(c->sampler, &c->stats);
	for (int r = 0; r < DROP_NR; r++) {
		c->stats.drops[r] += extra[r];
		run->drops[r] = c->stats.drops[r];
	}
	if (c->cfi)
		for (int r = 0; r < CFI_WALK_STOP_NR; r++)
			run->unwind_stops[r] = c->stats.walk_stops[r];
	run->samples_seen = c->stats.seen;
	run->samples_kept = c->stats.kept - extra[DROP_STACK_MAP_FULL];
}

/* ---- the end ------------------------------------------------------------ */

/*
 * The summary needs function names only: swap the plugin's symbolizer (and
 * whatever DWARF it loaded) for one that loads none.
 */
static int use_names_only_symbolizer(struct collector *c)
{
	struct symbolizer *names = symbolizer_new();

	if (!names)
		return -ENOMEM;
	symbolizer_set_lines(names, false);
	symbolizer_set_demangle(names, !c->opts->no_demangle);
	if (symbolizer_set_cache_dir(names, cfi_cache_dir(c->cfi_cache))) {
		symbolizer_free(names);
		return -ENOMEM;
	}
	symbolizer_free(c->symbolizer);
	c->symbolizer = names;
	session_set_symbolizer(&c->session, names);
	return 0;
}

/* The process of the empty profile a per-process format writes when
 * nothing was sampled. */
static uint32_t empty_profile_pid(const struct collector *c)
{
	return c->opts->nr_ids ? c->opts->ids[0] : (uint32_t)c->command.pid;
}

/* -v: how the stacks came from the kernel (a map lookup is a bpf() call). */
static void print_stack_copies(const struct collector *c)
{
	const uint64_t *lookups = c->ingest.stacks_looked_up;

	fprintf(stderr, "bpfprof: stacks copied from the kernel: %llu new user stacks from their "
		"records; by map lookup %llu user stacks, %llu kernel stacks; %llu stored without "
		"their leaf, %llu leaves put back\n",
		(unsigned long long)c->ingest.stacks_in_records, (unsigned long long)lookups[0],
		(unsigned long long)lookups[1],
		(unsigned long long)stack_bases_count(c->ingest.bases),
		(unsigned long long)c->ingest.leaves_put_back);
	if (c->stats.stack_ids)
		fprintf(stderr, "bpfprof: stack ids: %llu stored or found, %.1f%% of them in the "
			"CPU's note of the ids it met (no look-up of the map)\n",
			(unsigned long long)c->stats.stack_ids,
			100.0 * c->stats.stack_ids_noted / c->stats.stack_ids);
	if (!c->session.stream)
		fprintf(stderr, "bpfprof: counts moved out of the CPUs' pending slots while "
			"sampling: %llu, of %llu samples\n",
			(unsigned long long)c->ingest.counts_moved,
			(unsigned long long)c->ingest.samples_moved);
}

/* -v: the summary's function tables, read from the symbol cache or
 * built (symbols/sym_cache.h). */
static void print_symbol_cache(const struct collector *c)
{
	struct sym_cache_stats st;

	if (!c->cfi_cache)
		return;
	symbolizer_cache_stats(c->symbolizer, &st);
	fprintf(stderr, "bpfprof: symbol tables: %llu read from the cache, %llu built and stored "
		"there, %llu cache files rejected\n", (unsigned long long)st.hits,
		(unsigned long long)st.stores, (unsigned long long)st.rejected);
}

static int write_and_summarise(struct collector *c)
{
	struct summary_outputs outs = { 0 };
	int err;

	finish_run_stats(c);
	heap_populate();
	err = c->session.failed ?: session_write(&c->session, c->profile, empty_profile_pid(c),
						 &outs);
	host_flush_warnings(&c->session.host);
	if (!err && !c->opts->quiet && (err = use_names_only_symbolizer(c)) == 0) {
		heap_populate();
		summary_print(stderr, &c->info.run, c->profile, &c->session.host.api, &c->stats,
			      &outs);
		if (c->opts->call_graph == CALL_GRAPH_DWARF || c->ingest.unwind.samples) {
			struct unwind_stats us;

			if (c->unwinder) {
				unwinder_stats(c->unwinder, &us);
				c->ingest.unwind.leaf_guesses += us.leaf_guesses;
			}
			c->ingest.unwind.copies_withheld = c->stats.copies_withheld;
			summary_print_unwind(stderr, &c->ingest.unwind,
					     c->opts->call_graph == CALL_GRAPH_AUTO,
					     c->opts->dwarf_stack_size);
		}
		if (c->cfi)
			summary_print_walk(stderr, &c->stats, c->cfi, c->opts->verbose);
		if (c->interp)
			summary_print_python(stderr, &c->stats, c->interp, c->opts->verbose);
		if (c->opts->verbose) {
			summary_print_processes(stderr, c->profile);
			summary_print_perfmaps(stderr, c->profile);
			print_stack_copies(c);
			print_symbol_cache(c);
		}
		if (mmap_events_lost(c->mmaps))
			fprintf(stderr, "bpfprof: %llu mapping records lost (ring buffer full); those "
				"mappings come from /proc alone\n",
				(unsigned long long)mmap_events_lost(c->mmaps));
	}
	summary_outputs_free(&outs);
	return err;
}

static void cleanup(struct collector *c)
{
	session_fini(&c->session);
	command_fini(&c->command);
	sampler_close(c->sampler);
	mmap_events_close(c->mmaps);
	symbolizer_free(c->symbolizer);
	unwinder_free(c->unwinder);
	cfi_loader_save(c->cfi);
	cfi_loader_free(c->cfi);
	cfi_cache_trim(c->cfi_cache, CFI_CACHE_DEFAULT_MAX_BYTES);
	cfi_cache_close(c->cfi_cache);
	interp_free(c->interp);
	ingest_fini(&c->ingest);
	profile_free(c->profile);
	free(c->changed);
}

static int run(struct collector *c)
{
	const struct options *o = c->opts;
	int err;

	if ((err = setup(c)))
		return err;
	c->cpu_s[0] = own_cpu_s();
	c->info.run.start_ns = monotonic_ns();
	c->info.run.realtime_anchor_ns = clock_now_ns(CLOCK_REALTIME);
	c->tracker.start_ns = c->info.run.start_ns;
	/* Open a streaming plugin first: the snapshots record COMM and MMAP. */
	if ((err = session_open_stream(&c->session)))
		return err;
	for (size_t i = 0; i < o->nr_ids && o->targets == TARGETS_PIDS; i++)
		tracker_snapshot(&c->tracker, o->ids[i], c->info.run.start_ns);
	if (o->targets == TARGETS_COMMAND)
		tracker_snapshot(&c->tracker, (uint32_t)c->command.pid, c->info.run.start_ns);
	write_changed_entries(c);
	command_release(&c->command);
	if ((err = sample_until_done(c)) || (err = drain(c)))
		return err;
	c->cpu_s[1] = own_cpu_s();
	if (c->command.exec_errno) {
		fprintf(stderr, "bpfprof: cannot run '%s': %s; no profile written\n", o->command[0],
			strerror(c->command.exec_errno));
		return -ENOEXEC;
	}
	err = write_and_summarise(c);
	c->cpu_s[2] = own_cpu_s();
	return err;
}

/* -v: where the profiler's own CPU went, by phase (the cost users compare
 * with perf record's). */
static void print_own_cpu(const struct collector *c)
{
	const double *t = c->cpu_s;

	if (!c->opts->verbose || c->opts->quiet || t[2] == 0)
		return;
	fprintf(stderr, "bpfprof: own CPU %.3f s: %.3f s to start (BPF load, first tables), "
		"%.3f s sampling and draining the maps (%lu wake-ups), %.3f s writing, "
		"%.3f s to tear down\n",
		t[3], t[0], t[1] - t[0], c->polls, t[2] - t[1], t[3] - t[2]);
}

int collector_run(const struct options *opts)
{
	struct collector c = { .opts = opts };
	int err;

	command_init(&c.command);
	signals_install();
	err = run(&c);
	cleanup(&c);
	c.cpu_s[3] = own_cpu_s();
	print_own_cpu(&c);
	if (err == -ENOEXEC && c.command.exec_errno)
		return 127;
	if (err)
		return 1;
	return opts->targets == TARGETS_COMMAND ? command_exit_status(&c.command) : 0;
}
