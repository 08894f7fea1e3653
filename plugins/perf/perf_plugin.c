// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugins/perf/perf_plugin.c - the "perf" output plugin: writes a
 * perf.data file (PERFILE2) that perf report / perf script read as if
 * `perf record -g` had written it.
 *
 * This file owns the plugin entry point, the order records reach the
 * file in and the little state that needs (per process, per thread, per
 * file with a build-id; nothing per sample):
 *
 *   open()   header placeholder, ids and attrs sections, the kernel MMAP
 *   event()  one record per stream event, appended at once (samples are
 *            never kept in memory), FINISHED_ROUND as time advances
 *   write()  COMM/MMAP2 for what the stream did not announce (inserted at
 *            the start of the data section), LOST_SAMPLES for drops the
 *            stream did not report, the image of interpreted functions
 *            (perf_interp.c), the feature sections, then the header
 *
 * perf sorts records by time between FINISHED_ROUND markers; a record
 * older than what perf has already flushed would be reported "out of
 * order", so such late records get the oldest time still allowed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "perf_internal.h"

/* Time between FINISHED_ROUND records: how late (ns) a record may arrive
 * behind the newest one and still be sorted into place by perf. */
#define PERF_ROUND_NS 250000000ull

/* Layout of the start of the file. */
#define PERF_IDS_OFFSET PERF_FILE_HEADER_SIZE
#define PERF_ATTRS_OFFSET (PERF_IDS_OFFSET + 8u)
#define PERF_ATTR_ENTRY_SIZE (sizeof(struct perf_event_attr) + 16u)
#define PERF_DATA_OFFSET (PERF_ATTRS_OFFSET + PERF_ATTR_ENTRY_SIZE)

#define KERNEL_DSO_NAME "[kernel.kallsyms]"

/* What the stream told us about a process. */
struct perf_proc {
	uint32_t pid;
	uint32_t ppid;
	uint8_t mmap_seen;		/* an MMAP2 of it is in the file */
	uint8_t sampled_early;		/* sampled (user stack) before any MMAP2 */
	UT_hash_handle hh;
};

/* What the stream told us about a thread. */
struct perf_task {
	uint32_t tid;
	uint8_t comm_seen;		/* a COMM of it is in the file */
	uint8_t sampled_early;		/* sampled before its COMM */
	UT_hash_handle hh;
};

struct perf_state {
	const struct bpfprof_host *host;
	const struct bpfprof_run *run;
	FILE *file;
	struct perf_event_attr attr;
	struct perf_kernel_info kernel;
	int have_kernel;
	struct buf rec;		/* the record being written */
	uint64_t prelude_offset;	/* where write() inserts missing COMM/MMAP2 */
	uint64_t data_end;		/* file offset after the last record */
	struct perf_proc *procs;
	struct perf_task *tasks;
	struct perf_dso *dsos;
	struct perf_interp interp;	/* Python frames: their MMAP2s and image */
	/* ordering (see PERF_ROUND_NS) */
	uint64_t max_ts, round_mark_ts, round_prev_max, flush_limit;
	uint64_t nr_late_samples;
	/* samples written */
	uint64_t nr_samples, first_sample_ns, last_sample_ns;
	uint64_t lost_streamed[BPFPROF_DROP_NR];
};

static struct perf_proc *get_proc(struct perf_state *st, uint32_t pid)
{
	struct perf_proc *p;

	HASH_FIND(hh, st->procs, &pid, sizeof(pid), p);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	HASH_ADD(hh, st->procs, pid, sizeof(p->pid), p);
	return p;
}

static struct perf_task *get_task(struct perf_state *st, uint32_t tid)
{
	struct perf_task *t;

	HASH_FIND(hh, st->tasks, &tid, sizeof(tid), t);
	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	HASH_ADD(hh, st->tasks, tid, sizeof(t->tid), t);
	return t;
}

/* Remember a file with a build-id for HEADER_BUILD_ID (first one wins). */
static int add_dso(struct perf_state *st, const char *path, const uint8_t *bid,
		   uint32_t bid_size, int kernel)
{
	struct perf_dso *d;

	if (!path || !*path || !bid || !bid_size || bid_size > 20)
		return 0;
	HASH_FIND_STR(st->dsos, path, d);
	if (d)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->path = strdup(path);
	if (!d->path) {
		free(d);
		return -ENOMEM;
	}
	memcpy(d->build_id, bid, bid_size);
	d->build_id_size = (uint8_t)bid_size;
	d->kernel = (uint8_t)kernel;
	HASH_ADD_KEYPTR(hh, st->dsos, d->path, strlen(d->path), d);
	return 0;
}

static int write_out(struct perf_state *st, const void *p, size_t n, uint64_t offset)
{
	if (fseeko(st->file, (off_t)offset, SEEK_SET))
		return -errno;
	if (n && fwrite(p, 1, n, st->file) != n)
		return errno ? -errno : -EIO;
	return 0;
}

/*
 * The time a record may carry without perf calling it out of order.  For
 * COMM/MMAP2 records that only moves them closer to the samples they
 * describe; a late sample is counted and reported by write().
 */
static uint64_t order_time(struct perf_state *st, uint64_t t, int sample)
{
	if (t < st->flush_limit) {
		st->nr_late_samples += sample;
		return st->flush_limit;
	}
	return t;
}

/* Append st->rec (one record of time @t) to the data section. */
static int emit(struct perf_state *st, uint64_t t)
{
	if (st->rec.err)
		return st->rec.err;
	if (st->rec.len && fwrite(st->rec.data, 1, st->rec.len, st->file) != st->rec.len)
		return errno ? -errno : -EIO;
	st->data_end += st->rec.len;
	buf_reset(&st->rec);
	if (t > st->max_ts)
		st->max_ts = t;
	if (st->max_ts - st->round_mark_ts >= PERF_ROUND_NS) {
		/* perf flushes up to the newest time of the previous round */
		int err = write_record_finished_round(&st->rec);

		if (err)
			return err;
		if (fwrite(st->rec.data, 1, st->rec.len, st->file) != st->rec.len)
			return errno ? -errno : -EIO;
		st->data_end += st->rec.len;
		buf_reset(&st->rec);
		st->flush_limit = st->round_prev_max;
		st->round_prev_max = st->max_ts;
		st->round_mark_ts = st->max_ts;
	}
	return 0;
}

static int open_fail(struct perf_state *st, int err, const char *what)
{
	st->host->error(st->host, "perf: %s: %s", what, strerror(-err));
	return err;
}

static int perf_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		     const struct bpfprof_output *out, void **state)
{
	static const uint64_t ids[1] = { PERF_PLUGIN_EVENT_ID };
	const struct perf_sample_id id0 = { 0 };
	struct perf_state *st;
	int err;

	if (!out->file) {
		host->error(host, "perf: needs a seekable output file");
		return -EINVAL;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		host->error(host, "perf: out of memory");
		return -ENOMEM;
	}
	*state = st;
	st->host = host;
	st->run = run;
	st->file = out->file;
	fill_perf_event_attr(&st->attr, run);
	if (perf_interp_init(&st->interp, host, out))
		return open_fail(st, -ENOMEM, "out of memory");

	/* header (rewritten by write()), ids, attrs */
	buf_zero(&st->rec, PERF_FILE_HEADER_SIZE);
	write_ids_section(&st->rec, ids, 1);
	write_attrs_section(&st->rec, &st->attr, PERF_IDS_OFFSET, 1);
	if (st->rec.err)
		return open_fail(st, st->rec.err, "out of memory");
	err = write_out(st, st->rec.data, st->rec.len, 0);
	if (err)
		return open_fail(st, err, out->path ? out->path : "write");
	st->data_end = st->rec.len;
	buf_reset(&st->rec);

	/* the kernel map, as perf record synthesizes it */
	if (read_kernel_text("/proc/kallsyms", "/proc/iomem", &st->kernel) == 0) {
		char name[64];

		st->have_kernel = 1;
		snprintf(name, sizeof(name), KERNEL_DSO_NAME "%s", st->kernel.ref_reloc_sym);
		err = write_record_mmap(&st->rec, PERF_HOST_KERNEL_PID, 0, st->kernel.text_start,
					st->kernel.text_end - st->kernel.text_start,
					st->kernel.ref_reloc_addr, name, PERF_RECORD_MISC_KERNEL,
					&id0);
		if (!err)
			err = emit(st, 0);
		if (err)
			return open_fail(st, err, "writing the kernel map");
		if (read_build_id_notes("/sys/kernel/notes", st->kernel.build_id,
					&st->kernel.build_id_size) == 0 &&
		    add_dso(st, KERNEL_DSO_NAME, st->kernel.build_id, st->kernel.build_id_size, 1))
			return open_fail(st, -ENOMEM, "out of memory");
	} else {
		host->warn(host, "perf: kernel symbols unavailable (/proc/kallsyms); "
				 "kernel frames will not resolve");
	}
	st->prelude_offset = st->data_end;
	return 0;
}

static uint32_t event_cpu(const struct bpfprof_event *ev)
{
	return ev->cpu == UINT32_MAX ? 0 : ev->cpu;
}

/*
 * Before a sample of @pid whose user stack @index (@u) holds interpreted
 * frames: the MMAP2 record of their range, once per process (and image),
 * just before the sample.
 */
static int interp_map(struct perf_state *st, uint32_t pid, uint32_t index,
		      const struct bpfprof_stack *u, const struct perf_sample_id *id)
{
	struct perf_sample_id mid = *id;
	struct bpfprof_mapping m;
	int r = perf_interp_stack(&st->interp, index, u);

	if (r > 0)
		r = perf_interp_need_map(&st->interp, pid);
	if (r <= 0)
		return r;
	perf_interp_mapping(&st->interp, &m);
	if (mid.time > st->flush_limit)
		mid.time--;
	buf_reset(&st->rec);
	r = write_record_mmap2(&st->rec, pid, id->tid, &m, &mid);
	return r ? r : emit(st, mid.time);
}

static int on_sample(struct perf_state *st, const struct bpfprof_event *ev,
		     const struct perf_sample_id *id)
{
	const struct bpfprof_stack *k = NULL, *u = NULL;
	uint64_t period = ev->sample.period ? ev->sample.period : st->run->sample_period;
	struct perf_task *t;
	struct perf_proc *p;

	if (ev->sample.kernel_stack)
		k = st->host->stack(st->host, ev->sample.kernel_stack);
	if (ev->sample.user_stack)
		u = st->host->stack(st->host, ev->sample.user_stack);
	p = get_proc(st, ev->pid);
	t = get_task(st, ev->tid);
	if (!p || !t)
		return -ENOMEM;
	if (u) {
		int err = interp_map(st, ev->pid, ev->sample.user_stack, u, id);

		if (err)
			return err;
	}
	if (!p->mmap_seen && u && u->nr)
		p->sampled_early = 1;
	if (!t->comm_seen)
		t->sampled_early = 1;
	if (!st->nr_samples++)
		st->first_sample_ns = id->time;
	if (id->time > st->last_sample_ns)
		st->last_sample_ns = id->time;
	return write_record_sample(&st->rec, k, u, period, id);
}

static int on_fork(struct perf_state *st, const struct bpfprof_event *ev,
		   const struct perf_sample_id *id)
{
	struct perf_task *parent_task, *child_task;
	struct perf_proc *parent, *child;

	/* perf gives the child its parent's name, and a new process a copy
	 * of its parent's maps */
	parent = get_proc(st, ev->fork.ppid);
	child = get_proc(st, ev->pid);
	parent_task = get_task(st, ev->fork.ptid);
	child_task = get_task(st, ev->tid);
	if (!parent || !child || !parent_task || !child_task)
		return -ENOMEM;
	if (child != parent) {
		child->ppid = ev->fork.ppid;
		child->mmap_seen = parent->mmap_seen;
	}
	child_task->comm_seen = parent_task->comm_seen;
	return write_record_fork(&st->rec, ev->pid, ev->fork.ppid, ev->tid, ev->fork.ptid, id);
}

static int on_exit_event(struct perf_state *st, const struct bpfprof_event *ev,
			 const struct perf_sample_id *id)
{
	struct perf_proc *p = get_proc(st, ev->pid);
	uint32_t ppid = p ? p->ppid : 0;

	return write_record_exit(&st->rec, ev->pid, ppid, ev->tid, ppid, id);
}

static int on_mmap(struct perf_state *st, const struct bpfprof_event *ev,
		   const struct perf_sample_id *id)
{
	const struct bpfprof_mapping *m = ev->mapping;
	struct perf_proc *p;
	int err;

	if (!m || !m->path || (!m->path[0] && !perf_anon_mapping(m)) || m->end <= m->start)
		return 0;
	p = get_proc(st, ev->pid);
	if (!p)
		return -ENOMEM;
	p->mmap_seen = 1;
	err = add_dso(st, m->path, m->build_id, m->build_id_size, 0);
	if (err)
		return err;
	return write_record_mmap2(&st->rec, ev->pid, ev->tid ? ev->tid : ev->pid, m, id);
}

static int perf_event_cb(void *state, const struct bpfprof_event *ev)
{
	struct perf_state *st = state;
	struct perf_sample_id id = {
		.pid = ev->pid,
		.tid = ev->tid,
		.time = order_time(st, ev->time_ns, ev->type == BPFPROF_EVENT_SAMPLE),
		.cpu = event_cpu(ev),
	};
	struct perf_task *t;
	int err;

	buf_reset(&st->rec);
	switch (ev->type) {
	case BPFPROF_EVENT_SAMPLE:
		err = on_sample(st, ev, &id);
		break;
	case BPFPROF_EVENT_COMM:
	case BPFPROF_EVENT_EXEC:
		t = get_task(st, ev->tid);
		if (!t) {
			err = -ENOMEM;
			break;
		}
		t->comm_seen = 1;
		if (ev->type == BPFPROF_EVENT_EXEC)
			perf_interp_forget(&st->interp, ev->pid);
		err = write_record_comm(&st->rec, ev->pid, ev->tid, ev->comm,
					ev->type == BPFPROF_EVENT_EXEC, &id);
		break;
	case BPFPROF_EVENT_FORK:
		err = on_fork(st, ev, &id);
		break;
	case BPFPROF_EVENT_EXIT:
		err = on_exit_event(st, ev, &id);
		break;
	case BPFPROF_EVENT_MMAP:
		err = on_mmap(st, ev, &id);
		break;
	case BPFPROF_EVENT_LOST:
		if (ev->lost.reason < BPFPROF_DROP_NR)
			st->lost_streamed[ev->lost.reason] += ev->lost.lost;
		err = write_record_lost_samples(&st->rec, ev->lost.lost, &id);
		break;
	default:
		return 0;	/* a newer host's event: nothing perf needs */
	}
	if (!err && st->rec.len)
		err = emit(st, id.time);
	if (err)
		st->host->error(st->host, "perf: writing a record: %s", strerror(-err));
	return err;
}

/*
 * The stream carried no samples (a host that only aggregates): write
 * each counted sample, with times spread evenly over the run, so the
 * file still holds the whole profile.
 */
static int write_counted_samples(struct perf_state *st, const struct bpfprof_profile *prof)
{
	const struct bpfprof_run *run = st->run;
	uint64_t total = 0, k = 0, dur;
	size_t i;
	int err;

	for (i = 0; i < prof->nr_counts; i++)
		total += prof->counts[i].samples;
	if (!total)
		return 0;
	dur = run->end_ns > run->start_ns ? run->end_ns - run->start_ns : 0;
	for (i = 0; i < prof->nr_counts; i++) {
		const struct bpfprof_count *c = &prof->counts[i];
		const struct bpfprof_thread *t;
		const struct bpfprof_stack *ks, *us;
		uint64_t n;

		if (c->thread >= prof->nr_threads)
			continue;
		t = &prof->threads[c->thread];
		ks = c->kernel_stack < prof->nr_stacks ? &prof->stacks[c->kernel_stack] : NULL;
		us = c->user_stack < prof->nr_stacks ? &prof->stacks[c->user_stack] : NULL;
		for (n = 0; n < c->samples; n++, k++) {
			struct perf_sample_id id = {
				.pid = t->pid,
				.tid = t->tid,
				.time = order_time(st, run->start_ns +
						   (uint64_t)((double)dur * (double)k / (double)total), 0),
			};

			err = us ? interp_map(st, t->pid, c->user_stack, us, &id) : 0;
			if (err)
				return err;
			buf_reset(&st->rec);
			if (!st->nr_samples++)
				st->first_sample_ns = id.time;
			st->last_sample_ns = id.time;
			err = write_record_sample(&st->rec, ks, us, run->sample_period, &id);
			if (!err)
				err = emit(st, id.time);
			if (err)
				return err;
		}
	}
	st->host->warn(st->host, "perf: no timestamped samples were streamed; "
				 "sample times are spread evenly over the run");
	return 0;
}

/*
 * COMM and MMAP2 records (time 0, like perf record's synthesized ones)
 * for every process and thread of the profile the stream did not
 * announce before sampling it.
 */
static int build_prelude(struct perf_state *st, const struct bpfprof_profile *prof,
			 struct buf *pre)
{
	size_t i, j;
	int err = 0;

	for (i = 0; i < prof->nr_processes && !err; i++) {
		const struct bpfprof_process *pr = &prof->processes[i];
		struct perf_proc *p;
		int need_maps, main_listed = 0;
		struct perf_sample_id id = { .pid = pr->pid, .tid = pr->pid };

		HASH_FIND(hh, st->procs, &pr->pid, sizeof(pr->pid), p);
		need_maps = !p || !p->mmap_seen || p->sampled_early;

		for (j = 0; j < pr->nr_threads && !err; j++) {
			size_t ti = pr->first_thread + j;
			const struct bpfprof_thread *th;
			struct perf_task *t;

			if (ti >= prof->nr_threads)
				break;
			th = &prof->threads[ti];
			if (th->tid == pr->pid)
				main_listed = 1;
			HASH_FIND(hh, st->tasks, &th->tid, sizeof(th->tid), t);
			if (t && t->comm_seen && !t->sampled_early)
				continue;
			id.tid = th->tid;
			err = write_record_comm(pre, pr->pid, th->tid,
						th->comm ? th->comm : pr->comm, 0, &id);
		}
		if (!err && need_maps && !main_listed && pr->comm) {
			id.tid = pr->pid;
			err = write_record_comm(pre, pr->pid, pr->pid, pr->comm, 0, &id);
		}
		for (j = 0; j < pr->nr_mappings && !err; j++) {
			const struct bpfprof_mapping *m = &pr->mappings[j];

			if (!m->path || (!m->path[0] && !perf_anon_mapping(m)) ||
			    !(m->prot & BPFPROF_PROT_EXEC))
				continue;
			err = add_dso(st, m->path, m->build_id, m->build_id_size, 0);
			if (!err && need_maps) {
				id.tid = pr->pid;
				err = write_record_mmap2(pre, pr->pid, pr->pid, m, &id);
			}
		}
	}
	return err ? err : pre->err;
}

/* Move [from, end) of the file @by bytes towards its end, last block
 * first, in fixed-size blocks. */
static int shift_file_tail(FILE *f, uint64_t from, uint64_t end, uint64_t by)
{
	const size_t block = 1u << 20;
	uint64_t pos = end;
	char *buf;
	int err = 0;

	buf = malloc(block);
	if (!buf)
		return -ENOMEM;
	while (pos > from && !err) {
		size_t n = pos - from < block ? (size_t)(pos - from) : block;

		pos -= n;
		if (fseeko(f, (off_t)pos, SEEK_SET) || fread(buf, 1, n, f) != n ||
		    fseeko(f, (off_t)(pos + by), SEEK_SET) || fwrite(buf, 1, n, f) != n)
			err = errno ? -errno : -EIO;
	}
	free(buf);
	return err;
}

static int insert_prelude(struct perf_state *st, const struct buf *pre)
{
	int err;

	if (!pre->len)
		return 0;
	err = shift_file_tail(st->file, st->prelude_offset, st->data_end, pre->len);
	if (!err)
		err = write_out(st, pre->data, pre->len, st->prelude_offset);
	if (!err) {
		st->data_end += pre->len;
		if (fseeko(st->file, (off_t)st->data_end, SEEK_SET))
			err = -errno;
	}
	return err;
}

/* LOST_SAMPLES for the drops the stream did not report. */
static int write_remaining_drops(struct perf_state *st)
{
	const struct bpfprof_run *run = st->run;
	uint64_t t = run->end_ns > st->max_ts ? run->end_ns : st->max_ts;
	int r, err = 0;

	for (r = 0; r < BPFPROF_DROP_NR && !err; r++) {
		struct perf_sample_id id = { .time = t };

		if (run->drops[r] <= st->lost_streamed[r])
			continue;
		buf_reset(&st->rec);
		err = write_record_lost_samples(&st->rec, run->drops[r] - st->lost_streamed[r], &id);
		if (!err)
			err = emit(st, t);
	}
	if (!err) {
		buf_reset(&st->rec);
		err = write_record_finished_round(&st->rec);
		if (!err)
			err = emit(st, t);
	}
	return err;
}

static int write_features_and_header(struct perf_state *st)
{
	const struct bpfprof_run *run = st->run;
	struct perf_file_layout l = {
		.attrs_offset = PERF_ATTRS_OFFSET,
		.attrs_size = PERF_ATTR_ENTRY_SIZE,
		.data_offset = PERF_DATA_OFFSET,
		.data_size = st->data_end - PERF_DATA_OFFSET,
	};
	static const char *const default_argv[] = { "bpfprof" };
	char cpudesc[256], cpuid[128], version[64];
	struct timespec res = { 0, 1 };
	struct utsname uts;
	struct perf_features f = { 0 };
	int err;

	uname(&uts);
	read_cpu_info("/proc/cpuinfo", cpudesc, sizeof(cpudesc), cpuid, sizeof(cpuid));
	clock_getres(CLOCK_MONOTONIC, &res);
	snprintf(version, sizeof(version), "bpfprof %s", run->version ? run->version : "");

	f.hostname = run->hostname ? run->hostname : uts.nodename;
	f.os_release = run->os_release ? run->os_release : uts.release;
	f.arch = run->arch ? run->arch : uts.machine;
	f.version = version;
	f.nr_cpus_online = run->nr_cpus_online ? run->nr_cpus_online
					       : (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	f.nr_cpus_available = run->nr_cpus_available ? run->nr_cpus_available
						     : (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	f.cpudesc = cpudesc;
	f.cpuid = cpuid;
	f.total_mem_kb = read_total_mem_kb("/proc/meminfo");
	f.argc = run->argc > 0 && run->argv ? run->argc : 1;
	f.argv = run->argc > 0 && run->argv ? run->argv : default_argv;
	f.attr = &st->attr;
	f.event_name = run->event ? run->event : "cpu-clock";
	f.event_id = PERF_PLUGIN_EVENT_ID;
	f.dsos = st->dsos;
	f.first_sample_ns = st->nr_samples ? st->first_sample_ns : run->start_ns;
	f.last_sample_ns = st->nr_samples ? st->last_sample_ns : run->end_ns;
	f.clockid = CLOCK_MONOTONIC;
	f.clockid_res_ns = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
	f.wall_clock_ns = run->realtime_anchor_ns;
	f.clockid_time_ns = run->start_ns;

	err = write_feature_sections(st->file, st->data_end, &f, &l);
	if (err)
		return err;
	buf_reset(&st->rec);
	err = write_perf_header(&st->rec, &l);
	if (!err)
		err = write_out(st, st->rec.data, st->rec.len, 0);
	if (!err && fflush(st->file))
		err = -errno;
	return err;
}

/* The image of interpreted functions (a companion of the output, which
 * the MMAP2 records name), listed with its build-id.  Failing to write
 * it fails the output: perf.data would name a file that is not there. */
static int write_interp_image(struct perf_state *st, const struct bpfprof_profile *profile)
{
	uint8_t bid[20];
	int r = perf_interp_write_image(&st->interp, st->host, profile, bid);

	return r > 0 ? add_dso(st, st->interp.image_path, bid, sizeof(bid), 0) : r;
}

static int perf_write(void *state, const struct bpfprof_profile *profile)
{
	struct perf_state *st = state;
	struct buf pre = { 0 };
	const char *what = "writing samples";
	int err = 0;

	if (!st->nr_samples && profile->nr_counts)
		err = write_counted_samples(st, profile);
	if (!err) {
		what = "writing process maps";
		err = build_prelude(st, profile, &pre);
	}
	if (!err)
		err = insert_prelude(st, &pre);
	buf_free(&pre);
	if (!err) {
		what = "writing lost samples";
		err = write_remaining_drops(st);
	}
	if (!err) {
		what = "writing the image of interpreted functions";
		err = write_interp_image(st, profile);
	}
	if (!err) {
		what = "writing the header";
		err = write_features_and_header(st);
	}
	if (err) {
		st->host->error(st->host, "perf: %s: %s", what, strerror(-err));
		return err;
	}
	if (st->nr_late_samples)
		st->host->warn(st->host, "perf: %llu samples arrived more than %llu ms late "
					 "and carry a later time",
			       (unsigned long long)st->nr_late_samples,
			       (unsigned long long)(PERF_ROUND_NS / 1000000));
	return 0;
}

static void perf_close(void *state)
{
	struct perf_state *st = state;
	struct perf_proc *p, *ptmp;
	struct perf_task *t, *ttmp;
	struct perf_dso *d, *dtmp;

	if (!st)
		return;
	HASH_ITER(hh, st->procs, p, ptmp) {
		HASH_DEL(st->procs, p);
		free(p);
	}
	HASH_ITER(hh, st->tasks, t, ttmp) {
		HASH_DEL(st->tasks, t);
		free(t);
	}
	HASH_ITER(hh, st->dsos, d, dtmp) {
		HASH_DEL(st->dsos, d);
		free(d->path);
		free(d);
	}
	buf_free(&st->rec);
	perf_interp_free(&st->interp);
	free(st);
}

BPFPROF_PLUGIN("perf",
	.flags = BPFPROF_PLUGIN_STREAM,
	.description = "perf.data for perf report / perf script (like perf record -g)",
	.default_output = "perf.data",
	.open = perf_open, .event = perf_event_cb, .write = perf_write, .close = perf_close);
