// SPDX-License-Identifier: BSD-2-Clause
/*
 * targets/tracker.c - the process tracker (see tracker.h): /proc snapshots
 * of processes and threads, the lifecycle events of the BPF program, the
 * kernel's own mapping records, and the re-reads of /proc/PID/maps, each
 * turned into records for the sink.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/clock.h"
#include "procfs.h"
#include "procmaps.h"
#include "tracker.h"

void tracker_init(struct tracker *t, struct profile *profile, const struct record_sink *sink,
		  uint64_t start_ns)
{
	memset(t, 0, sizeof(*t));
	t->profile = profile;
	t->sink = sink;
	t->start_ns = start_ns;
}

/* ---- records ------------------------------------------------------------ */

static void record_comm(struct tracker *t, uint32_t type, uint32_t pid, uint32_t tid,
			const char *comm, uint64_t time_ns, uint32_t cpu)
{
	struct bpfprof_event ev = { .type = type, .cpu = cpu, .time_ns = time_ns,
				    .pid = pid, .tid = tid, .comm = comm };

	record_sink_put(t->sink, &ev);
}

static bool same_mapping(const struct bpfprof_mapping *a, const struct bpfprof_mapping *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       !strcmp(a->path, b->path);
}

/* The MMAP record of mapping @m of @proc. */
static void record_mapping(struct tracker *t, const struct proc *proc,
			   const struct bpfprof_mapping *m, uint64_t time_ns)
{
	struct bpfprof_event ev = { .type = BPFPROF_EVENT_MMAP, .cpu = UINT32_MAX,
				    .time_ns = time_ns, .pid = proc->pid, .tid = proc->pid,
				    .mapping = m };

	record_sink_put(t->sink, &ev);
}

/* MMAP records for the executable mappings of @proc not in @old. */
static void record_new_mappings(struct tracker *t, const struct proc *proc,
				const struct bpfprof_mapping *old, size_t nr_old, uint64_t time_ns)
{
	for (size_t i = 0; i < proc->nr_maps; i++) {
		const struct bpfprof_mapping *m = &proc->maps[i];
		bool known = false;

		if (!(m->prot & BPFPROF_PROT_EXEC))
			continue;
		for (size_t j = 0; j < nr_old && !known; j++)
			known = same_mapping(m, &old[j]);
		if (!known)
			record_mapping(t, proc, m, time_ns);
	}
}

/* ---- mappings ----------------------------------------------------------- */

/* Note which exec() @proc is in, before its mappings are read. */
static void note_exec_id(struct tracker *t, struct proc *proc)
{
	proc->exec_id = t->exec_id ? t->exec_id(t->maps_changed_ctx, proc->pid) : 0;
}

/* Tell the owner of per-process state derived from the mappings. */
static void maps_changed(struct tracker *t, const struct proc *proc)
{
	if (t->maps_changed)
		t->maps_changed(t->maps_changed_ctx, proc->pid);
}

/*
 * Read (or re-read) /proc/PID/maps into the process, with build-ids, and
 * record the executable mappings that are new; with @announce_all, every
 * executable mapping the process has, also when it is gone.
 */
static int read_maps(struct tracker *t, struct proc *proc, uint64_t time_ns, bool announce_all)
{
	struct procmaps pm = { 0 };
	struct bpfprof_mapping *old;
	size_t nr_old;
	int err;

	err = procmaps_read(proc->pid, &pm);
	if (err) {
		if (announce_all)
			record_new_mappings(t, proc, NULL, 0, time_ns);
		return err;
	}
	procmaps_add_build_ids(&pm, proc->pid);
	/* Keep the old list alive to diff it for the records. */
	old = proc->maps;
	nr_old = proc->nr_maps;
	proc->maps = NULL;
	proc->nr_maps = 0;
	err = proc_merge_maps(proc, old, nr_old);
	err = err ?: proc_merge_maps(proc, pm.maps, pm.nr);
	if (!err)
		record_new_mappings(t, proc, announce_all ? NULL : old, announce_all ? 0 : nr_old,
				    time_ns);
	mappings_free(old, nr_old);
	procmaps_free(&pm);
	proc->maps_time_ns = monotonic_ns();
	t->maps_reads++;
	maps_changed(t, proc);
	return err;
}

bool tracker_refresh_maps(struct tracker *t, struct proc *proc, uint64_t time_ns, bool sure)
{
	uint64_t interval = sure ? TRACKER_REFRESH_NS : TRACKER_CALLER_REFRESH_NS;

	if (time_ns < proc->maps_time_ns)
		return false;
	if (proc->exec_rereads > 0)
		proc->exec_rereads--;
	else if (monotonic_ns() - proc->maps_time_ns < interval)
		return false;
	return read_maps(t, proc, time_ns, false) == 0;
}

/* ---- snapshots ---------------------------------------------------------- */

struct thread_walk {
	struct tracker *t;
	struct proc *proc;
};

static int note_thread(void *ctx, uint32_t tid)
{
	struct thread_walk *w = ctx;
	struct tracker *t = w->t;
	char comm[64];

	if (procfs_comm(w->proc->pid, tid, comm, sizeof(comm)) == 0) {
		profile_thread(t->profile, w->proc->pid, tid, comm);
		if (!profile_thread_comm(t->profile, tid) || tid != w->proc->pid)
			record_comm(t, BPFPROF_EVENT_COMM, w->proc->pid, tid, comm, t->start_ns,
				    UINT32_MAX);
	}
	return 0;
}

struct proc *tracker_snapshot(struct tracker *t, uint32_t pid, uint64_t time_ns)
{
	struct proc *proc = profile_proc(t->profile, pid);
	struct thread_walk walk = { t, proc };
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
	proc->rank = procfs_rank(pid);
	if (proc->comm)
		record_comm(t, BPFPROF_EVENT_COMM, pid, pid, proc->comm, time_ns, UINT32_MAX);
	if (!kthread) {
		note_exec_id(t, proc);
		read_maps(t, proc, time_ns, false);
	}
	procfs_for_each_thread(pid, note_thread, &walk);
	return proc;
}

/* ---- lifecycle events --------------------------------------------------- */

/* A new process starts as a copy of its parent: name, exe, mappings and
 * rank (its environment is the parent's; read it if the parent's was not). */
static struct proc *copy_parent(struct tracker *t, const struct task_event *e,
				struct proc **parent)
{
	struct proc *child = profile_proc(t->profile, e->tgid);

	*parent = profile_find_proc(t->profile, e->ptgid);
	if (!child)
		return NULL;
	child->ppid = e->ptgid;
	proc_set_str(&child->comm, e->comm);
	if (*parent && (*parent)->comm)
		proc_set_str(&child->exe, (*parent)->exe);
	if (*parent)
		proc_merge_maps(child, (*parent)->maps, (*parent)->nr_maps);
	child->rank = *parent && (*parent)->maps_read ? (*parent)->rank : procfs_rank(e->tgid);
	child->maps_read = true;
	child->maps_time_ns = 0;
	child->exec_id = 0;		/* the parent's image, no exec() of its own */
	return child;
}

static void on_fork(struct tracker *t, const struct task_event *e)
{
	struct bpfprof_event ev = { .type = BPFPROF_EVENT_FORK, .cpu = e->cpu, .time_ns = e->time_ns,
				    .pid = e->tgid, .tid = e->tid };
	struct proc *parent = NULL, *child = NULL;

	ev.fork.ppid = e->ptgid;
	ev.fork.ptid = e->ptid;
	if (e->tgid != e->ptgid)
		child = copy_parent(t, e, &parent);
	profile_thread(t->profile, e->tgid, e->tid, e->comm);
	record_sink_put(t->sink, &ev);
	record_comm(t, BPFPROF_EVENT_COMM, e->tgid, e->tid, e->comm, e->time_ns, e->cpu);
	if (child && parent)
		record_new_mappings(t, child, NULL, 0, e->time_ns);
	if (child)
		maps_changed(t, child);
}

static void on_exec(struct tracker *t, const struct task_event *e)
{
	struct proc *proc = profile_proc(t->profile, e->tgid);
	char buf[4096];

	if (!proc)
		return;
	proc_set_str(&proc->comm, e->comm);
	if (procfs_exe(e->tgid, buf, sizeof(buf)) == 0)
		proc_set_str(&proc->exe, buf);
	if (procfs_cmdline(e->tgid, buf, sizeof(buf)) == 0)
		proc_set_str(&proc->cmdline, buf);
	proc->rank = procfs_rank(e->tgid);	/* the new image's environment */
	profile_thread(t->profile, e->tgid, e->tid, e->comm);
	record_comm(t, BPFPROF_EVENT_EXEC, e->tgid, e->tid, e->comm, e->time_ns, e->cpu);
	/* The old image is gone: its mappings must not shadow the new ones
	 * (they are kept apart for the samples taken before the exec).  The
	 * kernel's records (tracker_exec_start()) may have retired them
	 * already and told the new image's first mappings: keep those. */
	if (!proc->exec_started)
		proc_retire_maps(proc);
	proc->maps_read = true;
	note_exec_id(t, proc);
	read_maps(t, proc, e->time_ns, proc->exec_started);
	proc->exec_started = false;
	proc->exec_rereads = TRACKER_EXEC_REREADS;
}

static void on_exit_event(struct tracker *t, const struct task_event *e)
{
	struct bpfprof_event ev = { .type = BPFPROF_EVENT_EXIT, .cpu = e->cpu, .time_ns = e->time_ns,
				    .pid = e->tgid, .tid = e->tid };
	struct proc *proc = profile_find_proc(t->profile, e->tgid);

	if (profile_thread_comm(t->profile, e->tid))
		profile_thread(t->profile, e->tgid, e->tid, e->comm);
	if (proc && e->group_dead) {
		proc->exited = true;
		proc_keep_code_maps(proc);	/* its walks are over */
	}
	record_sink_put(t->sink, &ev);
}

/*
 * Thread e->tid is called e->comm from e->time_ns on: if that is news, keep
 * it as the thread's name (and as its process's, for the main thread) and
 * record it, so samples after it carry the new name.
 */
static void name_thread(struct tracker *t, const struct task_event *e)
{
	const char *comm = profile_thread_comm(t->profile, e->tid);
	struct proc *proc;

	if (comm && !strcmp(comm, e->comm))
		return;
	profile_thread(t->profile, e->tgid, e->tid, e->comm);
	proc = profile_find_proc(t->profile, e->tgid);
	if (proc && e->tid == e->tgid)
		proc_set_str(&proc->comm, e->comm);
	record_comm(t, BPFPROF_EVENT_COMM, e->tgid, e->tid, e->comm, e->time_ns, e->cpu);
}

/* First sample of a thread: its process (once) and its name, if new. */
static void on_new_thread(struct tracker *t, const struct task_event *e)
{
	tracker_snapshot(t, e->tgid, e->time_ns);
	name_thread(t, e);
}

/* A rename, which also stands for the thread's TASK_EVENT_NEW_THREAD
 * (bpf/profile.bpf.c).  A process not known yet is left alone: the
 * snapshot at its first sample reads its threads' names. */
static void on_rename(struct tracker *t, const struct task_event *e)
{
	if (profile_find_proc(t->profile, e->tgid))
		name_thread(t, e);
}

/* The BPF stack walk met an address of the process outside the mappings
 * it was given: read them (first sight), or re-read them if that can help. */
static void on_maps_needed(struct tracker *t, const struct task_event *e)
{
	struct proc *proc = profile_find_proc(t->profile, e->tgid);

	if (!proc || !proc->maps_read)
		tracker_snapshot(t, e->tgid, e->time_ns);
	else
		tracker_refresh_maps(t, proc, e->time_ns, true);
}

void tracker_task_event(struct tracker *t, const struct task_event *e)
{
	switch (e->type) {
	case TASK_EVENT_NEW_THREAD:
		on_new_thread(t, e);
		break;
	case TASK_EVENT_FORK:
		on_fork(t, e);
		break;
	case TASK_EVENT_EXEC:
		on_exec(t, e);
		break;
	case TASK_EVENT_EXIT:
		on_exit_event(t, e);
		break;
	case TASK_EVENT_RENAME:
		on_rename(t, e);
		break;
	case TASK_EVENT_MAPS_NEEDED:
		on_maps_needed(t, e);
		break;
	}
}

/* ---- the kernel's mapping records ------------------------------------------ */

void tracker_exec_start(struct tracker *t, uint32_t pid, uint64_t time_ns)
{
	struct proc *proc = profile_find_proc(t->profile, pid);

	if (!proc || !proc->maps_read)
		return;
	proc_retire_maps(proc);
	proc->exec_started = true;
	maps_changed(t, proc);
}

void tracker_mmap(struct tracker *t, uint32_t pid, const struct bpfprof_mapping *m,
		  uint64_t time_ns)
{
	struct proc *proc = profile_find_proc(t->profile, pid);
	struct bpfprof_mapping copy = *m;
	struct procmaps pm = { .maps = &copy, .nr = 1 };
	const struct bpfprof_mapping *known;

	/* Not snapshotted yet: the snapshot reads /proc (comm, exe, ...) */
	if (!proc || !proc->maps_read)
		return;
	known = proc_find_map(proc, m->start);
	if (known && same_mapping(known, m))
		return;
	t->mmap_records++;
	procmaps_add_build_ids(&pm, pid);
	/* During an exec the EXEC record comes first, then all mappings. */
	if (proc_merge_maps(proc, &copy, 1) == 0 && !proc->exec_started &&
	    (known = proc_find_map(proc, m->start)))
		record_mapping(t, proc, known, time_ns);
	free(pm.build_ids);
	maps_changed(t, proc);
}
