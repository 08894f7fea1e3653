// SPDX-License-Identifier: BSD-2-Clause
/*
 * collector.c - owns one profiling run (see collector.h): checks targets,
 * starts a command if asked, loads the sampler, follows process lifecycle
 * events (keeping comm, mappings and build-ids of every process while it is
 * alive), streams timestamped samples to streaming plugins, reads the
 * in-kernel counts at the end, and writes the outputs safely.  Ctrl-C and
 * SIGTERM end the run and write the profile; a second Ctrl-C aborts
 * without leaving a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "output/host.h"
#include "output/output.h"
#include "output/plugin_loader.h"
#include "targets/procfs.h"
#include "targets/procmaps.h"
#include "profile/profile.h"
#include "kernel/sampler.h"
#include "output/summary.h"
#include "symbols/symbolize.h"
#include "unwind/unwind.h"

/* Refresh a process's mappings at most this often on an unknown sampled ip, */
#define MAPS_REFRESH_NS 20000000ull
/* and this often on an unknown caller: walking frame pointers through code
 * built without them (most distribution binaries) yields garbage callers,
 * which no re-read can resolve. */
#define MAPS_CALLER_REFRESH_NS 1000000000ull
/* Check this often whether the in-kernel maps are filling (and drain them):
 * the check reads two counters, no system call; a fast check keeps a burst
 * of new stacks from filling a map between two checks. */
#define DRAIN_INTERVAL_NS 250000000ull
/* Longest sleep with the sample stream on: the samples ring buffer wakes
 * us only past a backlog, so read it at least this often (ms). */
#define STREAM_POLL_MS 100

struct collector {
	const struct options *opts;
	struct plugin plugin;
	struct sampler *sampler;
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct host host;
	struct bpfprof_run run;
	char hostname[256], os_release[sizeof(((struct utsname *)0)->release)];
	char arch[sizeof(((struct utsname *)0)->machine)], target_desc[512];
	bool stream;			/* the plugin takes the timestamped stream */
	struct output out;		/* the output being written */
	struct bpfprof_output plugin_out; /* what the plugin sees of it, valid until close */
	void *state;
	bool plugin_open;
	int failed;			/* negative errno once a step failed */
	pid_t child;			/* -- COMMAND */
	int child_status;
	bool child_done;
	int release_fd;			/* write end of the command's start pipe */
	int exec_status_fd;		/* read end: errno if the command's exec failed */
	int exec_errno;
	uint64_t maps_refreshes;
	struct sampler_stats stats;
	struct unwinder *unwinder;	/* --call-graph dwarf */
	uint64_t unwind_stops[UNWIND_STOP_NR];
	uint64_t unwind_samples;
	uint64_t unwind_lag_max_ns;	/* worst delay from sample to unwinding */
	uint32_t last_sample_tgid;	/* process of the last sample: known, skip the lookup */
	uint64_t stacks_copied;		/* stacks read from the kernel map since the last prune */
};

static volatile sig_atomic_t stop_requests;
static struct output *volatile signal_output;
/* Finished temporaries waiting to be published together (per process). */
static struct output *volatile signal_pending;
static volatile size_t signal_nr_pending;
/* Set (with SIGINT blocked) once the outputs are in place. */
static volatile sig_atomic_t outputs_published;

static void on_stop_signal(int sig)
{
	stop_requests++;
	if (stop_requests >= 2 && sig == SIGINT) {
		static const char msg[] = "\nbpfprof: aborted; no profile written\n";
		static const char late[] = "\nbpfprof: interrupted; the profile was already "
					   "written\n";

		if (outputs_published) {
			(void)!write(STDERR_FILENO, late, sizeof(late) - 1);
			_exit(130);
		}
		if (signal_output)
			output_abort_signal_safe(signal_output);
		for (size_t i = 0; signal_pending && i < signal_nr_pending; i++)
			output_abort_signal_safe(&signal_pending[i]);
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
		_exit(130);
	}
}

static void block_sigint(bool block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* Only there to interrupt the poll when the command exits (EINTR). */
static void on_child_signal(int sig)
{
}

static void install_signal_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct sigaction child = { .sa_handler = on_child_signal, .sa_flags = SA_NOCLDSTOP };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&child.sa_mask);
	sigaction(SIGCHLD, &child, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the stream to streaming plugins ---------------------------------- */

static void emit(struct collector *c, const struct bpfprof_event *ev)
{
	int err;

	if (!c->stream || !c->plugin_open || c->failed)
		return;
	err = c->plugin.desc->event(c->state, ev);
	if (err) {
		host_report_failure(&c->host, "take a record", err);
		c->failed = err;
		stop_requests++;
	}
}

static void emit_comm(struct collector *c, uint32_t type, uint32_t pid, uint32_t tid,
		      const char *comm, uint64_t time_ns, uint32_t cpu)
{
	struct bpfprof_event ev = { .type = type, .cpu = cpu, .time_ns = time_ns,
				    .pid = pid, .tid = tid, .comm = comm };

	emit(c, &ev);
}

static bool same_mapping(const struct bpfprof_mapping *a, const struct bpfprof_mapping *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       !strcmp(a->path, b->path);
}

/* Emit MMAP for the executable mappings of @proc not in @old. */
static void emit_new_mappings(struct collector *c, const struct proc *proc,
			      const struct bpfprof_mapping *old, size_t nr_old, uint64_t time_ns)
{
	for (size_t i = 0; i < proc->nr_maps; i++) {
		const struct bpfprof_mapping *m = &proc->maps[i];
		bool known = false;
		struct bpfprof_event ev = { .type = BPFPROF_EVENT_MMAP, .cpu = UINT32_MAX,
					    .time_ns = time_ns, .pid = proc->pid, .tid = proc->pid,
					    .mapping = m };

		if (!(m->prot & BPFPROF_PROT_EXEC))
			continue;
		for (size_t j = 0; j < nr_old && !known; j++)
			known = same_mapping(m, &old[j]);
		if (!known)
			emit(c, &ev);
	}
}

/* ---- process metadata --------------------------------------------------- */

static int note_thread(void *ctx, uint32_t tid)
{
	void **args = ctx;
	struct collector *c = args[0];
	struct proc *proc = args[1];
	char comm[64];

	if (procfs_comm(proc->pid, tid, comm, sizeof(comm)) == 0) {
		profile_thread(c->profile, proc->pid, tid, comm);
		if (!profile_thread_comm(c->profile, tid) || tid != proc->pid)
			emit_comm(c, BPFPROF_EVENT_COMM, proc->pid, tid, comm, c->run.start_ns,
				  UINT32_MAX);
	}
	return 0;
}

/* Read (or re-read) /proc/PID/maps into the process, with build-ids. */
static int refresh_maps(struct collector *c, struct proc *proc, uint64_t time_ns)
{
	struct procmaps pm = { 0 };
	struct bpfprof_mapping *old;
	size_t nr_old;
	int err;

	err = procmaps_read(proc->pid, &pm);
	if (err)
		return err;
	procmaps_add_build_ids(&pm, proc->pid);
	/* Keep the old list alive to diff it for the stream. */
	old = proc->maps;
	nr_old = proc->nr_maps;
	proc->maps = NULL;
	proc->nr_maps = 0;
	err = proc_merge_maps(proc, old, nr_old);
	err = err ?: proc_merge_maps(proc, pm.maps, pm.nr);
	if (!err)
		emit_new_mappings(c, proc, old, nr_old, time_ns);
	for (size_t i = 0; i < nr_old; i++) {
		free((char *)old[i].path);
		free((uint8_t *)old[i].build_id);
	}
	free(old);
	procmaps_free(&pm);
	proc->maps_time_ns = now_ns(CLOCK_MONOTONIC);
	c->maps_refreshes++;
	if (c->unwinder)
		unwinder_forget(c->unwinder, proc->pid);
	return err;
}

/*
 * An address captured at @time_ns is outside the known mappings: re-read
 * them if that can help.  Maps read after the capture cannot.  Right after
 * an exec, ld.so is still mapping libraries (the new image's callers are
 * in them), so re-read at once a few times; then at most every
 * MAPS_REFRESH_NS for an address that is surely real (@sure: a sampled ip,
 * or a return address CFI found), and every MAPS_CALLER_REFRESH_NS for a
 * caller found by a frame-pointer walk.  True if they were re-read.
 */
static bool maybe_refresh_maps(struct collector *c, struct proc *proc, uint64_t time_ns,
			       bool sure)
{
	uint64_t interval = sure ? MAPS_REFRESH_NS : MAPS_CALLER_REFRESH_NS;

	if (time_ns < proc->maps_time_ns)
		return false;
	if (proc->exec_rereads > 0)
		proc->exec_rereads--;
	else if (now_ns(CLOCK_MONOTONIC) - proc->maps_time_ns < interval)
		return false;
	return refresh_maps(c, proc, time_ns) == 0;
}

/* First sight of a process: comm, exe, cmdline, parent, mappings, threads. */
static struct proc *snapshot_process(struct collector *c, uint32_t pid, uint64_t time_ns)
{
	struct proc *proc = profile_proc(c->profile, pid);
	char buf[4096];
	bool kthread = false;
	uint32_t ppid;

	if (!proc || proc->maps_read)
		return proc;
	proc->maps_read = true;		/* also when it is gone: do not retry */
	if (procfs_comm(pid, pid, buf, sizeof(buf)) == 0)
		proc_set_str(&proc->comm, buf);
	if (procfs_exe(pid, buf, sizeof(buf)) == 0)
		proc_set_str(&proc->exe, buf);
	if (procfs_cmdline(pid, buf, sizeof(buf)) == 0)
		proc_set_str(&proc->cmdline, buf);
	if (procfs_stat(pid, &ppid, &kthread) == 0)
		proc->ppid = ppid;
	if (proc->comm)
		emit_comm(c, BPFPROF_EVENT_COMM, pid, pid, proc->comm, time_ns, UINT32_MAX);
	if (!kthread)
		refresh_maps(c, proc, time_ns);
	void *args[2] = { c, proc };
	procfs_for_each_thread(pid, note_thread, args);
	return proc;
}

/* ---- lifecycle events --------------------------------------------------- */

static int intern_stack(struct collector *c, uint64_t id, uint32_t *index)
{
	struct stack_trace st;
	int err;

	if (profile_find_stack(c->profile, id, index) == 0)
		return 0;
	err = sampler_stack(c->sampler, id, &st);
	if (err)
		return err;
	c->stacks_copied++;
	return profile_intern_stack(c->profile, id, (const uint64_t *)st.ips, st.nr, st.kernel, index);
}

/* A new user stack of @tgid: make sure its addresses are in known mappings. */
static void check_stack_mappings(struct collector *c, const struct task_event *e)
{
	struct proc *proc = snapshot_process(c, e->tgid, e->time_ns);
	const struct bpfprof_stack *st;
	uint32_t index;

	if (!proc || intern_stack(c, e->stack_id, &index))
		return;
	st = profile_stack(c->profile, index);
	for (uint32_t i = 0; st && i < st->nr; i++) {
		if (proc_find_map(proc, st->ips[i]))
			continue;
		maybe_refresh_maps(c, proc, e->time_ns, i == 0);
		return;
	}
}

static void on_fork(struct collector *c, const struct task_event *e)
{
	struct bpfprof_event ev = { .type = BPFPROF_EVENT_FORK, .cpu = e->cpu, .time_ns = e->time_ns,
				    .pid = e->tgid, .tid = e->tid };
	struct proc *parent = NULL, *child = NULL;

	ev.fork.ppid = e->ptgid;
	ev.fork.ptid = e->ptid;
	if (e->tgid != e->ptgid) {
		/* A new process starts as a copy of its parent. */
		parent = profile_find_proc(c->profile, e->ptgid);
		child = profile_proc(c->profile, e->tgid);
		if (child) {
			child->ppid = e->ptgid;
			proc_set_str(&child->comm, e->comm);
			if (parent && parent->comm)
				proc_set_str(&child->exe, parent->exe);
			if (parent)
				proc_merge_maps(child, parent->maps, parent->nr_maps);
			child->maps_read = true;
			child->maps_time_ns = 0;
		}
	}
	profile_thread(c->profile, e->tgid, e->tid, e->comm);
	emit(c, &ev);
	emit_comm(c, BPFPROF_EVENT_COMM, e->tgid, e->tid, e->comm, e->time_ns, e->cpu);
	if (e->tgid != e->ptgid && child && parent)
		emit_new_mappings(c, child, NULL, 0, e->time_ns);
}

static void on_exec(struct collector *c, const struct task_event *e)
{
	struct proc *proc = profile_proc(c->profile, e->tgid);
	char buf[4096];

	if (!proc)
		return;
	proc_set_str(&proc->comm, e->comm);
	if (procfs_exe(e->tgid, buf, sizeof(buf)) == 0)
		proc_set_str(&proc->exe, buf);
	if (procfs_cmdline(e->tgid, buf, sizeof(buf)) == 0)
		proc_set_str(&proc->cmdline, buf);
	profile_thread(c->profile, e->tgid, e->tid, e->comm);
	emit_comm(c, BPFPROF_EVENT_EXEC, e->tgid, e->tid, e->comm, e->time_ns, e->cpu);
	/* The old image is gone: its mappings must not shadow the new ones. */
	proc_clear_maps(proc);
	proc->maps_read = true;
	refresh_maps(c, proc, e->time_ns);
	proc->exec_rereads = 4;
}

static void on_exit_event(struct collector *c, const struct task_event *e)
{
	struct bpfprof_event ev = { .type = BPFPROF_EVENT_EXIT, .cpu = e->cpu, .time_ns = e->time_ns,
				    .pid = e->tgid, .tid = e->tid };
	struct proc *proc = profile_find_proc(c->profile, e->tgid);

	if (profile_thread_comm(c->profile, e->tid))
		profile_thread(c->profile, e->tgid, e->tid, e->comm);
	if (proc && e->group_dead)
		proc->exited = true;
	emit(c, &ev);
}

static int on_task_event(void *ctx, const struct task_event *e)
{
	struct collector *c = ctx;

	switch (e->type) {
	case TASK_EVENT_NEW_THREAD:
		snapshot_process(c, e->tgid, e->time_ns);
		if (!profile_thread_comm(c->profile, e->tid) ||
		    strcmp(profile_thread_comm(c->profile, e->tid), e->comm)) {
			profile_thread(c->profile, e->tgid, e->tid, e->comm);
			emit_comm(c, BPFPROF_EVENT_COMM, e->tgid, e->tid, e->comm, e->time_ns, e->cpu);
		}
		break;
	case TASK_EVENT_NEW_STACK:
		check_stack_mappings(c, e);
		break;
	case TASK_EVENT_FORK:
		on_fork(c, e);
		break;
	case TASK_EVENT_EXEC:
		on_exec(c, e);
		break;
	case TASK_EVENT_EXIT:
		on_exit_event(c, e);
		break;
	}
	return 0;
}

/* ---- samples ------------------------------------------------------------ */

/* 64-bit id of an unwound stack (its own seed: never equal to a BPF id in practice). */
static uint64_t unwound_stack_id(const uint64_t *ips, int n)
{
	uint64_t h = 0x84222325cbf29ce4ull ^ (uint64_t)n;

	for (int i = 0; i < n; i++) {
		h ^= ips[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h ? h : 1;
}

/* --call-graph dwarf: unwind the copied user stack into an interned stack. */
static int unwind_sample(struct collector *c, const struct dwarf_sample_event *d, size_t size,
			 uint32_t *user)
{
	uint64_t ips[BPFPROF_MAX_STACK_DEPTH];
	struct unwind_regs regs = { .ip = d->ip, .sp = d->sp, .bp = d->bp };
	enum unwind_stop why = UNWIND_ERROR;
	size_t avail = size - sizeof(*d), len = d->stack_size < avail ? d->stack_size : avail;
	struct proc *proc = profile_find_proc(c->profile, d->sample.tgid);
	int n = -ENOENT;

	*user = 0;
	if (!d->has_regs || !proc)
		return 0;
	for (int attempt = 0; attempt < 2; attempt++) {
		n = unwinder_unwind(c->unwinder, proc->pid, proc->maps, proc->nr_maps, &regs, d->stack,
				    len, ips, c->opts->max_stack, &why);
		/* A pc outside the known mappings: a library appeared since we looked. */
		if (attempt || why != UNWIND_UNMAPPED ||
		    !maybe_refresh_maps(c, proc, d->sample.time_ns, true))
			break;
	}
	if (n <= 0) {
		ips[0] = d->ip;
		n = 1;
		why = UNWIND_ERROR;
	}
	c->unwind_samples++;
	c->unwind_stops[why < UNWIND_STOP_NR ? why : UNWIND_ERROR]++;
	uint64_t lag = now_ns(CLOCK_MONOTONIC) - d->sample.time_ns;
	if (lag > c->unwind_lag_max_ns && lag < (1ull << 62))
		c->unwind_lag_max_ns = lag;
	return profile_intern_stack(c->profile, unwound_stack_id(ips, n), ips, (uint32_t)n, 0, user);
}

static int on_sample(void *ctx, const struct sample_event *e, size_t size)
{
	struct collector *c = ctx;
	struct bpfprof_event ev = { .type = BPFPROF_EVENT_SAMPLE, .cpu = e->cpu,
				    .time_ns = e->time_ns, .pid = e->tgid, .tid = e->tid };
	uint32_t user, kernel;
	int err;

	if (e->tgid != c->last_sample_tgid) {
		/* first sample of a process: read /proc while it is alive */
		if (!profile_find_proc(c->profile, e->tgid))
			snapshot_process(c, e->tgid, e->time_ns);
		c->last_sample_tgid = e->tgid;
	}
	if (c->unwinder && size >= sizeof(struct dwarf_sample_event))
		err = unwind_sample(c, (const struct dwarf_sample_event *)e, size, &user);
	else
		err = intern_stack(c, e->user_stack, &user);
	if (err || intern_stack(c, e->kernel_stack, &kernel)) {
		/* The stack was stored before the sample was sent; cannot happen. */
		c->stats.drops[DROP_STACK_MAP_FULL]++;
		return 0;
	}
	if (profile_add_samples(c->profile, e->tgid, e->tid, user, kernel, 1))
		return -ENOMEM;
	ev.sample.user_stack = user;
	ev.sample.kernel_stack = kernel;
	ev.sample.period = e->period;
	emit(c, &ev);
	return 0;
}

static int on_count(void *ctx, const struct count_key *k, uint64_t samples)
{
	struct collector *c = ctx;
	uint32_t user, kernel;

	if (intern_stack(c, k->user_stack, &user) || intern_stack(c, k->kernel_stack, &kernel)) {
		c->stats.drops[DROP_STACK_MAP_FULL] += samples;
		return 0;
	}
	if (!profile_find_proc(c->profile, k->tgid))
		snapshot_process(c, k->tgid, c->run.end_ns);
	return profile_add_samples(c->profile, k->tgid, k->tid, user, kernel, samples);
}

/* ---- targets ------------------------------------------------------------ */

static int check_targets(struct collector *c)
{
	const struct options *o = c->opts;

	for (size_t i = 0; i < o->nr_ids; i++) {
		uint32_t id = o->ids[i], tgid = id, ppid;
		bool kthread = false;

		if (o->targets == TARGETS_TIDS && procfs_tgid(id, &tgid)) {
			fprintf(stderr, "bpfprof: no thread with TID %u; check it with ps -eLf\n", id);
			return -ESRCH;
		}
		if (procfs_stat(tgid, &ppid, &kthread) || !procfs_alive(tgid)) {
			fprintf(stderr, "bpfprof: no process with PID %u; check it with ps\n", tgid);
			return -ESRCH;
		}
		if (kthread) {
			fprintf(stderr, "bpfprof: PID %u is a kernel thread; profile kernel threads with "
				"--all\n", tgid);
			return -EINVAL;
		}
	}
	return 0;
}

static void read_exec_status(struct collector *c);

static bool targets_alive(struct collector *c)
{
	const struct options *o = c->opts;

	if (o->targets == TARGETS_COMMAND) {
		if (!c->child_done && waitpid(c->child, &c->child_status, WNOHANG) == c->child) {
			c->child_done = true;
			read_exec_status(c);
		}
		return !c->child_done;
	}
	if (o->targets != TARGETS_PIDS && o->targets != TARGETS_TIDS)
		return true;
	for (size_t i = 0; i < o->nr_ids; i++) {
		const struct proc *proc = o->targets == TARGETS_PIDS
					  ? profile_find_proc(c->profile, o->ids[i]) : NULL;

		/* The exit event comes before /proc shows the process dead. */
		if (!(proc && proc->exited) && procfs_alive(o->ids[i]))
			return true;
	}
	return false;
}

/*
 * Fork the command, stopped before exec until release_command().  A second
 * close-on-exec pipe tells us whether the exec itself failed.
 */
static int start_command(struct collector *c)
{
	int pipefd[2], statusfd[2];
	char go;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	if (pipe2(statusfd, O_CLOEXEC)) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	c->child = fork();
	if (c->child < 0)
		return -errno;
	if (c->child == 0) {
		close(pipefd[1]);
		close(statusfd[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(pipefd[0], &go, 1) != 1)
			_exit(127);	/* bpfprof gave up before starting us */
		execvp(c->opts->command[0], c->opts->command);
		int e = errno;
		(void)!write(statusfd[1], &e, sizeof(e));
		_exit(127);
	}
	close(pipefd[0]);
	close(statusfd[1]);
	c->release_fd = pipefd[1];
	c->exec_status_fd = statusfd[0];
	return 0;
}

/* After the command ended: did its exec fail? (the pipe has its errno) */
static void read_exec_status(struct collector *c)
{
	int e;

	if (c->exec_status_fd >= 0 && read(c->exec_status_fd, &e, sizeof(e)) == sizeof(e))
		c->exec_errno = e;
}

static void release_command(struct collector *c)
{
	if (c->release_fd >= 0) {
		(void)!write(c->release_fd, "g", 1);
		close(c->release_fd);
		c->release_fd = -1;
	}
}

/* ---- run metadata ------------------------------------------------------- */

static void describe_targets(struct collector *c)
{
	const struct options *o = c->opts;
	size_t len = 0;

	switch (o->targets) {
	case TARGETS_ALL:
		snprintf(c->target_desc, sizeof(c->target_desc), "system-wide on %s", c->hostname);
		return;
	case TARGETS_COMMAND:
		for (char **a = o->command; *a && len < sizeof(c->target_desc) - 1; a++)
			len += snprintf(c->target_desc + len, sizeof(c->target_desc) - len, "%s%s",
					a == o->command ? "" : " ", *a);
		return;
	default:
		len = snprintf(c->target_desc, sizeof(c->target_desc), "%s",
			       o->targets == TARGETS_TIDS ? "tid" : "pid");
		for (size_t i = 0; i < o->nr_ids && len < sizeof(c->target_desc) - 1; i++)
			len += snprintf(c->target_desc + len, sizeof(c->target_desc) - len, "%s%u",
					i ? "," : " ", o->ids[i]);
	}
}

static void fill_run(struct collector *c)
{
	struct utsname u;
	int *cpus;
	size_t nr;

	gethostname(c->hostname, sizeof(c->hostname) - 1);
	if (uname(&u) == 0) {
		snprintf(c->os_release, sizeof(c->os_release), "%s", u.release);
		snprintf(c->arch, sizeof(c->arch), "%s", u.machine);
	}
	describe_targets(c);
	c->run.version = BPFPROF_VERSION;
	c->run.event = "cpu-clock";
	c->run.sample_freq = c->opts->freq;
	c->run.sample_period = c->opts->freq ? 1000000000ull / c->opts->freq : c->opts->period;
	c->run.hostname = c->hostname;
	c->run.os_release = c->os_release;
	c->run.arch = c->arch;
	c->run.nr_cpus_available = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	c->run.nr_cpus_online = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (online_cpus(&cpus, &nr) == 0) {
		c->run.nr_cpus_online = (uint32_t)nr;
		free(cpus);
	}
	c->run.argc = c->opts->argc;
	c->run.argv = (const char *const *)c->opts->argv;
	c->run.target = c->target_desc;
	c->run.max_stack_depth = c->opts->max_stack;
}

/* ---- outputs ------------------------------------------------------------ */

static const char *output_path(const struct collector *c)
{
	return c->opts->output ? c->opts->output : c->plugin.desc->default_output;
}

static bool plugin_is_dir(const struct collector *c)
{
	return c->plugin.desc->flags & BPFPROF_PLUGIN_DIRECTORY;
}

static int open_plugin(struct collector *c, const char *path, uint32_t pid)
{
	int err;

	err = output_begin(&c->out, path, plugin_is_dir(c));
	if (err)
		return err;
	signal_output = &c->out;
	c->plugin_out = (struct bpfprof_output){ .file = c->out.file, .dir_fd = c->out.dir_fd,
						 .path = c->out.final_path, .pid = pid };
	c->state = NULL;
	err = c->plugin.desc->open(&c->host.api, &c->run, &c->plugin_out, &c->state);
	if (err) {
		host_report_failure(&c->host, "open its output", err);
		signal_output = NULL;
		output_abort(&c->out);
		return err;
	}
	c->plugin_open = true;
	return 0;
}

/* write() and close() the open plugin, then commit or discard its output;
 * with @pending, only finish it and move it there, to be published later. */
static int finish_plugin(struct collector *c, const struct bpfprof_profile *view,
			 struct output *pending)
{
	int err = c->failed ? c->failed : c->plugin.desc->write(c->state, view);

	if (err && !c->failed)
		host_report_failure(&c->host, "write the profile", err);
	c->plugin.desc->close(c->state);
	c->plugin_open = false;
	if (!err && c->host.error) {
		host_report_failure(&c->host, "finish", -EIO);
		err = -EIO;
	}
	if (err) {
		signal_output = NULL;
		output_abort(&c->out);
		return err;
	}
	if (pending) {
		err = output_finish(&c->out);
		if (!err) {
			*pending = c->out;
			signal_nr_pending++;
		}
		memset(&c->out, 0, sizeof(c->out));
		c->out.dir_fd = -1;
		signal_output = NULL;
		return err;
	}
	block_sigint(true);
	err = output_commit(&c->out);
	signal_output = NULL;
	outputs_published = !err;
	block_sigint(false);
	return err;
}

/* -o names an existing directory, for a per-process format: one file each inside. */
static bool output_is_dir_of_files(const struct collector *c)
{
	struct stat st;

	return (c->plugin.desc->flags & BPFPROF_PLUGIN_PER_PROCESS) && c->opts->output &&
	       stat(c->opts->output, &st) == 0 && S_ISDIR(st.st_mode);
}

/* PATH (one process), PATH.<pid> (several), or DIR/COMM.<pid>.prof (-o DIR). */
static int per_process_path(const struct collector *c, uint32_t pid, size_t nr, char **path)
{
	const struct proc *p = profile_find_proc(c->profile, pid);
	char comm[64];
	int n;

	/* A comm may hold '/' or start with '.': keep the file inside the directory. */
	snprintf(comm, sizeof(comm), "%s", p && p->comm && *p->comm ? p->comm : "process");
	for (char *s = comm; *s; s++)
		if (*s == '/' || (s == comm && *s == '.'))
			*s = '_';
	if (output_is_dir_of_files(c))
		n = asprintf(path, "%s/%s.%u.prof", c->opts->output, comm, pid);
	else if (nr > 1)
		n = asprintf(path, "%s.%u", output_path(c), pid);
	else
		n = (*path = strdup(output_path(c))) ? 0 : -1;
	if (n < 0) {
		*path = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int check_output_dir(const char *dir)
{
	if (access(dir, W_OK | X_OK)) {
		fprintf(stderr, "bpfprof: cannot write into '%s': %s; choose another -o\n", dir,
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* Per-process formats: one output per process, PATH.<pid> when several. */
static int write_per_process(struct collector *c, const struct bpfprof_profile *all,
			     struct summary_outputs *outs)
{
	size_t nr = all->nr_processes;
	uint32_t *pids = calloc(nr + 1, sizeof(*pids));
	struct output *pending = calloc(nr + 1, sizeof(*pending));
	char **paths = calloc(nr + 1, sizeof(*paths));
	int err = 0;

	if (!pids || !pending || !paths) {
		free(pids);
		free(pending);
		free(paths);
		return -ENOMEM;
	}
	signal_pending = pending;
	signal_nr_pending = 0;
	for (size_t i = 0; i < nr; i++)
		pids[i] = all->processes[i].pid;
	if (nr == 0)	/* no samples: still write a valid, empty profile */
		pids[nr++] = c->opts->nr_ids ? c->opts->ids[0] : (uint32_t)c->child;
	for (size_t i = 0; i < nr && !err; i++) {
		struct profile_slice slice;
		struct bpfprof_profile view;
		char *path = NULL;

		if (per_process_path(c, pids[i], nr, &path)) {
			err = -ENOMEM;
			break;
		}
		/* i == all->nr_processes only for the empty profile above */
		err = profile_view_process(all, i, &slice, &view);
		err = err ?: open_plugin(c, path, pids[i]);
		err = err ?: finish_plugin(c, &view, &pending[i]);
		profile_slice_free(&slice);
		paths[i] = path;
	}
	/* All or nothing: publish only when every output was written. */
	block_sigint(true);
	for (size_t i = 0; i < signal_nr_pending; i++) {
		if (!err && !(err = output_publish(&pending[i])))
			summary_add_output(outs, paths[i]);
		else if (pending[i].tmp_path)
			output_abort(&pending[i]);
	}
	signal_pending = NULL;
	signal_nr_pending = 0;
	outputs_published = !err;
	block_sigint(false);
	for (size_t i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
	free(pending);
	free(pids);
	return err;
}

static int write_outputs(struct collector *c, struct summary_outputs *outs)
{
	struct bpfprof_profile view;
	int err = profile_view(c->profile, &c->run, &view);

	if (err)
		return err;
	if (c->stream) {
		err = finish_plugin(c, &view, NULL);
	} else if (c->plugin.desc->flags & BPFPROF_PLUGIN_PER_PROCESS) {
		return write_per_process(c, &view, outs);
	} else {
		err = open_plugin(c, output_path(c), 0);
		err = err ?: finish_plugin(c, &view, NULL);
	}
	if (!err)
		summary_add_output(outs, output_path(c));
	return err;
}

/* ---- the run ------------------------------------------------------------ */

static void sampler_config_from(const struct collector *c, struct sampler_config *cfg,
				uint32_t *command_pid)
{
	const struct options *o = c->opts;

	memset(cfg, 0, sizeof(*cfg));
	cfg->target = o->targets == TARGETS_ALL ? SAMPLER_ALL
		    : o->targets == TARGETS_TIDS ? SAMPLER_TIDS : SAMPLER_TGIDS;
	cfg->ids = o->targets == TARGETS_COMMAND ? command_pid : o->ids;
	cfg->nr_ids = o->targets == TARGETS_COMMAND ? 1 : o->nr_ids;
	cfg->cpus = o->cpus;
	cfg->nr_cpus = o->nr_cpus;
	cfg->freq = o->freq;
	cfg->period = o->period;
	cfg->include_idle = o->idle;
	cfg->follow_forks = true;
	cfg->stream = c->stream;
	cfg->dwarf = o->dwarf;
	cfg->user_stack_size = o->dwarf_stack_size;
	cfg->max_depth = o->max_stack;
	options_map_sizes(o, o->nr_cpus ? o->nr_cpus : c->run.nr_cpus_online,
			  &cfg->stack_map_size, &cfg->count_map_size);
	cfg->ringbuf_size = o->ringbuf_size;
}

static bool stack_copied(void *ctx, uint64_t id)
{
	struct collector *c = ctx;
	uint32_t index;

	return profile_find_stack(c->profile, id, &index) == 0;
}

/* Milliseconds from @now to @when (ns), rounded up, at least 0. */
static int ms_until(uint64_t now, uint64_t when)
{
	uint64_t ms;

	if (when <= now)
		return 0;
	ms = (when - now + 999999ull) / 1000000ull;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

static int sample_until_done(struct collector *c)
{
	uint64_t deadline = c->opts->duration > 0
		? c->run.start_ns + (uint64_t)(c->opts->duration * 1e9) : UINT64_MAX;
	uint64_t next_drain = c->run.start_ns + DRAIN_INTERVAL_NS;

	while (!stop_requests && !c->failed) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		int timeout, n;

		if (now >= deadline || !targets_alive(c))
			break;
		/* Sleep until the next thing to do; lifecycle events (a target's
		 * exit among them) and signals wake us earlier. */
		timeout = ms_until(now, next_drain < deadline ? next_drain : deadline);
		if (c->stream && timeout > STREAM_POLL_MS)
			timeout = STREAM_POLL_MS;
		n = sampler_poll(c->sampler, timeout);
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "bpfprof: reading the ring buffers failed: %s\n", strerror(-n));
			return n;
		}
		/* Move in-kernel counts out once the maps are a quarter full, and
		 * empty the stack map of stacks we have copied: the maps never fill
		 * up, and a steady profile is read once, at the end. */
		if (now_ns(CLOCK_MONOTONIC) >= next_drain) {
			if (!c->stream && sampler_counts_filling(c->sampler) &&
			    (n = sampler_drain_counts(c->sampler, false, on_count, c)))
				return n;
			if (c->stacks_copied >= sampler_stack_map_size(c->sampler) / 4) {
				sampler_prune_stacks(c->sampler, stack_copied, c);
				c->stacks_copied = 0;
			}
			next_drain = now_ns(CLOCK_MONOTONIC) + DRAIN_INTERVAL_NS;
		}
	}
	return 0;
}

static int drain(struct collector *c)
{
	int n;

	sampler_stop(c->sampler);
	while ((n = sampler_poll(c->sampler, 0)) > 0)
		;
	c->run.end_ns = now_ns(CLOCK_MONOTONIC);
	if (!c->stream && (n = sampler_drain_counts(c->sampler, true, on_count, c)))
		return n;
	return 0;
}

static void finish_run_stats(struct collector *c)
{
	uint64_t extra[DROP_NR];

	/* Drops counted in userspace (stacks that vanished) come on top. */
	memcpy(extra, c->stats.drops, sizeof(extra));
	sampler_read_stats(c->sampler, &c->stats);
	for (int r = 0; r < DROP_NR; r++) {
		c->stats.drops[r] += extra[r];
		c->run.drops[r] = c->stats.drops[r];
	}
	c->run.samples_seen = c->stats.seen;
	c->run.samples_kept = c->stats.kept - extra[DROP_STACK_MAP_FULL];
}

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
	symbolizer_free(c->symbolizer);
	c->symbolizer = names;
	c->host.symbolizer = names;
	return 0;
}

static void print_unwind_stats(const struct collector *c)
{
	static const char *const names[UNWIND_STOP_NR] = {
		[UNWIND_END] = "complete", [UNWIND_TRUNCATED] = "stack-copy-too-small",
		[UNWIND_NO_CFI] = "no-cfi", [UNWIND_UNMAPPED] = "unmapped-address",
		[UNWIND_MAX_DEPTH] = "max-depth", [UNWIND_ERROR] = "error",
	};

	fprintf(stderr, "bpfprof: dwarf unwinding: %llu samples;",
		(unsigned long long)c->unwind_samples);
	for (int i = 0; i < UNWIND_STOP_NR; i++)
		if (c->unwind_stops[i])
			fprintf(stderr, " %s %llu", names[i] ? names[i] : "other",
				(unsigned long long)c->unwind_stops[i]);
	fprintf(stderr, "; backlog at most %.1f ms\n", c->unwind_lag_max_ns / 1e6);
}

static int exit_status(const struct collector *c, int err)
{
	if (err)
		return 1;
	if (c->opts->targets != TARGETS_COMMAND || !c->child_done)
		return 0;
	if (WIFEXITED(c->child_status))
		return WEXITSTATUS(c->child_status);
	if (WIFSIGNALED(c->child_status))
		return 128 + WTERMSIG(c->child_status);
	return 1;
}

static int setup(struct collector *c, uint32_t *command_pid)
{
	const struct options *o = c->opts;
	struct sampler_callbacks cb = { .ctx = c, .task_event = on_task_event, .sample = on_sample };
	struct sampler_config cfg;
	int err;

	err = o->plugin_path ? plugin_load_file(o->plugin_path, o->allow_untrusted_plugin, &c->plugin)
			     : plugin_load_format(o->format, o->allow_untrusted_plugin, &c->plugin);
	if (err)
		return err;
	c->stream = c->plugin.desc->flags & BPFPROF_PLUGIN_STREAM;
	if (output_is_dir_of_files(c))
		err = check_output_dir(c->opts->output);
	else
		err = output_preflight(output_path(c), plugin_is_dir(c));
	if (err || (err = check_targets(c)))
		return err;
	c->profile = profile_new();
	c->symbolizer = symbolizer_new();
	if (!c->profile || !c->symbolizer)
		return -ENOMEM;
	if (c->plugin.desc->flags & BPFPROF_PLUGIN_NAMES_ONLY)
		symbolizer_set_lines(c->symbolizer, false);
	if (o->dwarf && !(c->unwinder = unwinder_new()))
		return -ENOMEM;
	host_init(&c->host, c->profile, c->symbolizer, c->plugin.desc->name);
	fill_run(c);
	if (o->targets == TARGETS_COMMAND) {
		if ((err = start_command(c)))
			return err;
		*command_pid = (uint32_t)c->child;
	}
	sampler_config_from(c, &cfg, command_pid);
	return sampler_open(&cfg, &cb, &c->sampler);
}

static void cleanup(struct collector *c)
{
	if (c->plugin_open)
		c->plugin.desc->close(c->state);
	output_abort(&c->out);
	if (c->release_fd >= 0)
		close(c->release_fd);
	if (c->exec_status_fd >= 0)
		close(c->exec_status_fd);
	if (c->child > 0 && !c->child_done)
		waitpid(c->child, &c->child_status, 0);
	sampler_close(c->sampler);
	host_fini(&c->host);
	symbolizer_free(c->symbolizer);
	unwinder_free(c->unwinder);
	profile_free(c->profile);
	plugin_unload(&c->plugin);
}

int collector_run(const struct options *opts)
{
	struct collector c = { .opts = opts, .release_fd = -1, .exec_status_fd = -1,
			       .out = { .dir_fd = -1 }, .last_sample_tgid = UINT32_MAX };
	struct summary_outputs outs = { 0 };
	uint32_t command_pid = 0;
	int err;

	install_signal_handlers();
	err = setup(&c, &command_pid);
	if (err)
		goto out;
	c.run.start_ns = now_ns(CLOCK_MONOTONIC);
	c.run.realtime_anchor_ns = now_ns(CLOCK_REALTIME);
	/* Open a streaming plugin first: the snapshots emit COMM and MMAP. */
	if (c.stream && (err = open_plugin(&c, output_path(&c), 0)))
		goto out;
	for (size_t i = 0; i < opts->nr_ids && opts->targets == TARGETS_PIDS; i++)
		snapshot_process(&c, opts->ids[i], c.run.start_ns);
	if (opts->targets == TARGETS_COMMAND)
		snapshot_process(&c, command_pid, c.run.start_ns);
	release_command(&c);
	err = sample_until_done(&c);
	err = err ?: drain(&c);
	if (err)
		goto out;
	if (c.exec_errno) {
		fprintf(stderr, "bpfprof: cannot run '%s': %s; no profile written\n", opts->command[0],
			strerror(c.exec_errno));
		cleanup(&c);
		return 127;
	}
	finish_run_stats(&c);
	err = c.failed ?: write_outputs(&c, &outs);
	host_flush_warnings(&c.host);
	if (!err && !opts->quiet && (err = use_names_only_symbolizer(&c)) == 0) {
		summary_print(stderr, &c.run, c.profile, &c.host.api, &c.stats, &outs);
		if (c.unwinder)
			print_unwind_stats(&c);
	}
out:
	summary_outputs_free(&outs);
	cleanup(&c);
	return exit_status(&c, err);
}
