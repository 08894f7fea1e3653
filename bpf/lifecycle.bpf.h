/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * lifecycle.bpf.h - the process lifecycle tracepoints, included once by
 * profile.bpf.c: forks (followed children become targets), execs (the
 * per-process entries of the old image forgotten), renames and exits of
 * target tasks, each a record on the "events" ring buffer for the
 * collector's process metadata (user/targets/tracker.c).
 *
 * Needs from profile.bpf.c: is_target(), task_in_cgroup(), the "targets"
 * and "exec_ids" maps, task_event_try(), stat_add_here(),
 * task_event_submit() and task_event_submit_lazy(); from its other headers
 * cfi_forget_process(), py_forget_process() and "threads_seen".
 */
#ifndef BPFPROF_LIFECYCLE_BPF_H
#define BPFPROF_LIFECYCLE_BPF_H

/* task_event_reserve() for these programs: a lost record counted with
 * stat_add_here(), so that none of them has a BPF function to compile. */
static __always_inline struct task_event *lifecycle_event_reserve(__u32 type, __u32 tgid,
								 __u32 tid)
{
	struct task_event *e = task_event_try(type, tgid, tid);

	if (!e)
		stat_add_here(STAT_EVENTS_LOST, 1);
	return e;
}

/* A lifecycle record of @type about task @p, with its name. */
static __always_inline struct task_event *task_event_new(__u32 type, struct task_struct *p)
{
	struct task_event *e = lifecycle_event_reserve(type, BPF_CORE_READ(p, tgid),
						       BPF_CORE_READ(p, pid));

	if (e)
		BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	return e;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ptid = BPF_CORE_READ(parent, pid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	struct task_event *e;

	if (!is_target(ptgid, ptid) || !task_in_cgroup(parent))
		return 0;
	if (target_mode == TARGET_TGIDS && follow_forks && ctgid != ptgid) {
		__u8 followed = BPFPROF_TARGET_FOLLOWED;

		bpf_map_update_elem(&targets, &ctgid, &followed, BPF_ANY);
	}
	e = task_event_new(TASK_EVENT_FORK, child);
	if (!e)
		return 0;
	e->ptgid = ptgid;
	e->ptid = ptid;
	/* Not urgent: the child is walked with its parent's entries until
	 * the collector writes its own (forked_parent()), and its exec or
	 * exit, which wake the collector, come after this in the ring. */
	task_event_submit_lazy(e);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct task_event *e;
	__u64 exec_id;
	__u8 *target;

	if (!is_target(tgid, BPF_CORE_READ(p, pid)) || !task_in_cgroup(p))
		return 0;
	/* the command: sampled from here on (BPFPROF_TARGET_AT_EXEC) */
	target = target_mode == TARGET_TGIDS ? bpf_map_lookup_elem(&targets, &tgid) : NULL;
	if (target && *target == BPFPROF_TARGET_AT_EXEC)
		*target = BPFPROF_TARGET_NAMED;
	/* Before the deletions: a write the collector makes after them
	 * finds the new id (user/collector.c, entries_current()). */
	exec_id = BPF_CORE_READ(p, self_exec_id);
	bpf_map_update_elem(&exec_ids, &tgid, &exec_id, BPF_ANY);
	if (cfi_mode)
		cfi_forget_process(tgid);	/* the old image's mappings are gone */
	py_forget_process(tgid);
	e = task_event_new(TASK_EVENT_EXEC, p);
	if (e)
		task_event_submit(e);
	return 0;
}

/*
 * True while current is inside execve()/execveat() (the x86-64 system call
 * numbers; the program is x86-64 only): begin_new_exec() renames the task
 * after the new file, and on_exec announces that.  (A 32-bit process's
 * exec has other numbers: its new name is then announced twice.)
 */
static __always_inline bool in_execve(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	long nr = BPF_CORE_READ(regs, orig_ax);

	return nr == 59 || nr == 322;
}

/*
 * A target thread gets a new name: prctl(PR_SET_NAME) or a write to
 * /proc/PID/task/TID/comm (pthread_setname_np), both __set_task_comm(),
 * which fires this before it copies the name.  The thread counts as seen
 * from here on: a sample taken before the copy would otherwise announce
 * the old name (TASK_EVENT_NEW_THREAD) after this event.
 */
SEC("raw_tp/task_rename")
int BPF_PROG(on_rename, struct task_struct *p, const char *comm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);
	struct task_event *e;

	if (!is_target(tgid, tid) || in_execve() || !task_in_cgroup(p))
		return 0;
	__sync_fetch_and_add(&threads_gen, 1);	/* note_thread() looks again */
	bpf_map_update_elem(&threads_seen, &tid, &tgid, BPF_ANY);
	e = lifecycle_event_reserve(TASK_EVENT_RENAME, tgid, tid);
	if (!e) {
		/* lost: the thread's next sample announces its name instead */
		bpf_map_delete_elem(&threads_seen, &tid);
		return 0;
	}
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	task_event_submit(e);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);
	struct task_event *e;
	bool group_dead;
	__u8 *named;

	if (!is_target(tgid, tid) || !task_in_cgroup(p))
		return 0;
	__sync_fetch_and_add(&threads_gen, 1);	/* the tid may come back as another thread */
	group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
	e = task_event_new(TASK_EVENT_EXIT, p);
	if (e) {
		e->group_dead = group_dead;
		e->exit_code = BPF_CORE_READ(p, exit_code);
		/* At once only when the run may end with it: a -t thread's
		 * exit, a -p process's or the command's; other threads,
		 * followed children and everything under --all wait for the
		 * next wake-up (task_event_submit_lazy()). */
		named = target_mode == TARGET_TIDS ? bpf_map_lookup_elem(&targets, &tid)
			: target_mode == TARGET_TGIDS && group_dead
			? bpf_map_lookup_elem(&targets, &tgid) : NULL;
		if (named && (*named == BPFPROF_TARGET_NAMED || *named == BPFPROF_TARGET_AT_EXEC))
			task_event_submit(e);
		else
			task_event_submit_lazy(e);
	}
	/* The target and exec maps hold live processes only: a long run of
	 * short-lived children never fills them. */
	if (group_dead)
		bpf_map_delete_elem(&exec_ids, &tgid);
	if (target_mode == TARGET_TGIDS && group_dead)
		bpf_map_delete_elem(&targets, &tgid);
	else if (target_mode == TARGET_TIDS)
		bpf_map_delete_elem(&targets, &tid);
	return 0;
}

#endif /* BPFPROF_LIFECYCLE_BPF_H */
