// SPDX-License-Identifier: BSD-2-Clause
/*
 * sampler.c - owns the BPF object's lifetime: configures (as a struct
 * sampler_config says: settings.c derives every size and setting, this file
 * applies them) and loads profile.bpf.c through its bpftool-generated
 * skeleton, fills the target
 * map, opens one cpu-clock sampling event per CPU and attaches the program
 * to each, attaches the lifecycle tracepoints, and reads the maps and ring
 * buffers back.  Error messages here name the cause and the remedy.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "core_btf.h"
#include "cpus.h"
#include "map_warm.h"
#include "percpu_sum.h"
#include "profile.skel.h"
#include "sampler.h"
#include "verifier_stats.h"

struct sampler {
	struct profile_bpf *skel;
	struct ring_buffer *rb;
	struct sampler_callbacks cb;
	int *perf_fds;
	struct bpf_link **links;
	size_t nr_cpus;
	uint64_t freq_hz;		/* cfg->freq */
	uint64_t period_ns;		/* cfg->period */
	int nr_possible_cpus;
	uint64_t counts_added_at_drain;	/* the program's counters at the last drain */
	uint64_t stacks_added_at_drain;
	/* sampler_poll()'s pass: records read, when the "samples" ring's
	 * reading must stop (CLOCK_MONOTONIC ns), whether it stopped so */
	int pass_records;
	uint64_t pass_end_ns;
	bool pass_cut;
};

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !getenv("BPFPROF_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int read_sysctl_u64(const char *path, long long *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%lld", v) == 1;
	fclose(f);
	return ok ? 0 : -EIO;
}

/* Explain why perf_event_open() failed for @cpu. */
static void explain_perf_open_error(int err, int cpu, const struct sampler_config *cfg)
{
	long long max_rate = 0, paranoid = 0;

	read_sysctl_u64("/proc/sys/kernel/perf_event_max_sample_rate", &max_rate);
	read_sysctl_u64("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	if (err == EINVAL && cfg->freq && (long long)cfg->freq > max_rate)
		fprintf(stderr, "bpfprof: frequency %llu Hz is above kernel.perf_event_max_sample_rate "
			"(%lld Hz); use -F %lld or lower, or raise the sysctl\n",
			(unsigned long long)cfg->freq, max_rate, max_rate);
	else if (err == ENODEV || err == ENXIO)
		fprintf(stderr, "bpfprof: CPU %d is offline or does not exist; choose CPUs listed in "
			"/sys/devices/system/cpu/online with -C\n", cpu);
	else if (err == EACCES || err == EPERM)
		fprintf(stderr, "bpfprof: not allowed to open perf events (kernel.perf_event_paranoid "
			"is %lld); run as root or with CAP_PERFMON and CAP_BPF\n", paranoid);
	else
		fprintf(stderr, "bpfprof: cannot open the cpu-clock sampling event on CPU %d: %s\n",
			cpu, strerror(err));
}

/* The program's constants: what it does with each sample. */
static void set_rodata(struct profile_bpf *skel, const struct sampler_config *cfg)
{
	skel->rodata->target_mode = cfg->target;
	skel->rodata->include_idle = cfg->include_idle;
	skel->rodata->follow_forks = cfg->follow_forks;
	skel->rodata->stream_samples = cfg->stream || cfg->dwarf;
	skel->rodata->dwarf_mode = cfg->dwarf;
	skel->rodata->cfi_mode = cfg->cfi;
	skel->rodata->cfi_copies = cfg->cfi_copies;
	skel->rodata->interpreters = !cfg->no_interpreters;
	skel->rodata->user_stack_size = cfg->user_stack_size;
	skel->rodata->max_depth = cfg->max_depth;
	skel->rodata->cgroup_filter = cfg->cgroup_filter;
	skel->rodata->cgroup_v1 = cfg->cgroup_hierarchy;
	skel->rodata->cgroup_level = cfg->cgroup_level;
	skel->rodata->cgroup_id = cfg->cgroup_id;
	/* Wake the collector once a batch is worth a read: a quarter of the
	 * ring, or 64 of the large dwarf records. */
	skel->rodata->wakeup_bytes = cfg->ringbuf_size / 4;
	if (cfg->dwarf)
		skel->rodata->wakeup_bytes = 64 * SETTINGS_DWARF_RECORD_BYTES(cfg->user_stack_size);
}

/* The maps' sizes, as settings.c derived them. */
static int set_map_sizes(struct profile_bpf *skel, const struct sampler_config *cfg)
{
	int err;

	/* room for max_depth frames in a stored stack, and in the scratch
	 * stack it is built in (the program's max_depth, set_rodata()) */
	err = bpf_map__set_value_size(skel->maps.stacks, cfg->stack_value_size);
	err = err ?: bpf_map__set_value_size(skel->maps.scratch, cfg->stack_value_size);
	err = err ?: bpf_map__set_max_entries(skel->maps.stacks, cfg->stack_map_size);
	err = err ?: bpf_map__set_max_entries(skel->maps.counts0, cfg->count_map_size);
	err = err ?: bpf_map__set_max_entries(skel->maps.counts1, cfg->count_map_size);
	if (cfg->stream)	/* no counts: no pending ones */
		err = err ?: bpf_map__set_max_entries(skel->maps.pending_counts, 1);
	err = err ?: bpf_map__set_max_entries(skel->maps.samples, cfg->ringbuf_size);
	if (cfg->target_map_size)
		err = err ?: bpf_map__set_max_entries(skel->maps.targets, cfg->target_map_size);
	if (cfg->exec_map_size)
		err = err ?: bpf_map__set_max_entries(skel->maps.exec_ids, cfg->exec_map_size);
	if (cfg->cfi_request_map_size)
		err = err ?: bpf_map__set_max_entries(skel->maps.cfi_requests,
						      cfg->cfi_request_map_size);
	if (cfg->py_map_size)
		err = err ?: bpf_map__set_max_entries(skel->maps.py_codes_seen, cfg->py_map_size);
	if (cfg->py_thread_map_size)
		err = err ?: bpf_map__set_max_entries(skel->maps.py_threads, cfg->py_thread_map_size);
	if (cfg->thread_map_size)
		err = err ?: bpf_map__set_max_entries(skel->maps.threads_seen, cfg->thread_map_size);
	if (cfg->cfi_process_map_size)
		err = err ?: bpf_map__set_max_entries(skel->maps.cfi_procs, cfg->cfi_process_map_size);
	return err;
}

static int configure(struct profile_bpf *skel, const struct sampler_config *cfg,
		     int nr_possible_cpus)
{
	int err;

	set_rodata(skel, cfg);
	if (nr_possible_cpus < 1)	/* libbpf_num_possible_cpus() failed */
		return nr_possible_cpus < 0 ? nr_possible_cpus : -EINVAL;
	/* two scratch stacks (user, kernel) per CPU the program may run on */
	err = bpf_map__set_max_entries(skel->maps.scratch, 2 * (uint32_t)nr_possible_cpus);
	return err ?: set_map_sizes(skel, cfg);
}

/* Mark @id in the "targets" map as @value (BPFPROF_TARGET_*).  0 or -errno. */
static int put_target(struct sampler *s, uint32_t id, uint8_t value)
{
	if (bpf_map__update_elem(s->skel->maps.targets, &id, sizeof(id), &value, sizeof(value),
				 BPF_ANY))
		return -errno;
	return 0;
}

static int add_targets(struct sampler *s, const struct sampler_config *cfg)
{
	if (cfg->target == SAMPLER_ALL)	/* the program reads no target map */
		return 0;
	uint8_t value = cfg->ids_exec ? BPFPROF_TARGET_AT_EXEC : BPFPROF_TARGET_NAMED;

	for (size_t i = 0; i < cfg->nr_ids; i++) {
		int err = put_target(s, cfg->ids[i], value);

		if (err)
			return err;
	}
	return 0;
}

/* Ends a pass over the "samples" ring (sampler_poll()): any value no
 * callback returns. */
#define PASS_CUT (-EINPROGRESS)

static int on_sample_record(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	int err;

	s->pass_records++;
	if (size < sizeof(struct sample_event) || !s->cb.sample)
		return 0;
	if ((err = s->cb.sample(s->cb.ctx, data, size)))
		return err;
	if (monotonic_ns() < s->pass_end_ns)
		return 0;
	s->pass_cut = true;
	return PASS_CUT;
}

static int on_task_record(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	s->pass_records++;
	if (size < sizeof(struct task_event) || !s->cb.task_event)
		return 0;
	return s->cb.task_event(s->cb.ctx, data, size);
}

static int open_ring_buffers(struct sampler *s)
{
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_task_record, s, NULL);
	if (!s->rb)
		return -errno;
	return ring_buffer__add(s->rb, bpf_map__fd(s->skel->maps.samples), on_sample_record, s);
}

/* The maps the program inserts into without preallocation: each sampled
 * CPU's element cache filled before its first sample or a target's first
 * fork there ("targets"; map_warm.h).  A fork on a CPU not sampled takes
 * one of the few elements the cache starts with, and the irq_work refills
 * it after. */
static void warm_maps(struct sampler *s, const int *cpus, size_t nr)
{
	struct bpf_map *maps[] = { s->skel->maps.stacks, s->skel->maps.counts0,
				   s->skel->maps.counts1, s->skel->maps.targets };
	struct map_warm_target t[sizeof(maps) / sizeof(maps[0])];

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		t[i] = (struct map_warm_target){ .fd = bpf_map__fd(maps[i]),
						 .key_size = bpf_map__key_size(maps[i]),
						 .value_size = bpf_map__value_size(maps[i]) };
	map_warm_percpu_caches(t, sizeof(t) / sizeof(t[0]), cpus, nr);
}

static int open_events(struct sampler *s, const struct sampler_config *cfg)
{
	int *cpus = NULL;
	size_t nr = 0;
	int err = 0;

	if ((err = online_cpus(&cpus, &nr))) {
		fprintf(stderr, "bpfprof: cannot read /sys/devices/system/cpu/online: %s\n",
			strerror(-err));
		return err;
	}
	if (cfg->cpus) {
		/* -C: every CPU must be online; the kernel would say EINVAL or ENODEV */
		for (size_t i = 0; i < cfg->nr_cpus; i++) {
			bool online = false;

			for (size_t j = 0; j < nr && !online; j++)
				online = cpus[j] == cfg->cpus[i];
			if (!online) {
				fprintf(stderr, "bpfprof: CPU %d is offline or does not exist; choose "
					"CPUs listed in /sys/devices/system/cpu/online with -C\n",
					cfg->cpus[i]);
				free(cpus);
				return -ENODEV;
			}
		}
		free(cpus);
		cpus = malloc(cfg->nr_cpus * sizeof(*cpus));
		if (!cpus)
			return -ENOMEM;
		memcpy(cpus, cfg->cpus, cfg->nr_cpus * sizeof(*cpus));
		nr = cfg->nr_cpus;
	}
	s->perf_fds = calloc(nr, sizeof(*s->perf_fds));
	s->links = calloc(nr, sizeof(*s->links));
	if (!s->perf_fds || !s->links) {
		free(cpus);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		s->perf_fds[i] = -1;
	s->nr_cpus = nr;
	warm_maps(s, cpus, nr);
	for (size_t i = 0; i < nr && !err; i++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.freq = cfg->freq ? 1 : 0,
			.disabled = 1,
		};
		long fd;

		if (cfg->freq)
			attr.sample_freq = cfg->freq;
		else
			attr.sample_period = cfg->period;
		fd = perf_event_open(&attr, -1, cpus[i]);
		if (fd < 0) {
			err = -errno;
			explain_perf_open_error(errno, cpus[i], cfg);
			break;
		}
		s->perf_fds[i] = (int)fd;
		s->links[i] = bpf_program__attach_perf_event(s->skel->progs.on_sample, (int)fd);
		if (!s->links[i]) {
			err = -errno;
			fprintf(stderr, "bpfprof: cannot attach the BPF program to CPU %d's event: %s\n",
				cpus[i], strerror(-err));
		}
	}
	free(cpus);
	return err;
}

/* Load the configured object, with the verifier's statistics if asked
 * (verifier_stats.h). */
static int load(struct profile_bpf *skel)
{
	struct verifier_logs *logs = verifier_stats_request(skel->obj);
	int err = profile_bpf__load(skel);

	verifier_stats_finish(logs, err == 0);
	return err;
}

/* Open, size and load the BPF object; prints what failed. */
static int open_and_load(struct sampler *s, const struct sampler_config *cfg)
{
	struct core_btf btf;
	/* the kernel's types for CO-RE: the embedded minimal BTF if it fits */
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = core_btf_open(&btf));
	int err;

	s->skel = profile_bpf__open_opts(&opts);
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "bpfprof: cannot open the BPF object: %s\n", strerror(-err));
	} else if ((err = configure(s->skel, cfg, s->nr_possible_cpus))) {
		fprintf(stderr, "bpfprof: cannot size the BPF maps: %s\n", strerror(-err));
	} else if ((err = load(s->skel))) {
		if ((err == -EPERM || err == -EACCES) && geteuid() != 0)
			fprintf(stderr, "bpfprof: not allowed to load BPF programs (uid %d); run as root "
				"or with CAP_BPF and CAP_PERFMON\n", (int)geteuid());
		else
			fprintf(stderr, "bpfprof: the kernel refused the BPF program: %s (run with "
				"BPFPROF_DEBUG=1 for the verifier log)\n", strerror(-err));
	}
	core_btf_close(&btf);
	return err;
}

/*
 * Set the marks past which the maps are filling (sampler_counts_filling())
 * and the program wakes the collector for a drain (bpf/profile.bpf.c,
 * maps_filling_wake()): a quarter of each map's capacity past the
 * counters at the last drain.  Counts only: a stream (no count maps) is
 * read on a timer anyway.
 */
static void arm_fill_wakeup(struct sampler *s)
{
	if (sampler_streams(s))
		return;
	/* in .data (not 0 at load: no mark until set) */
	s->skel->data->counts_fill_at = s->counts_added_at_drain +
					bpf_map__max_entries(s->skel->maps.counts0) / 4;
	s->skel->data->stacks_fill_at = s->stacks_added_at_drain + sampler_stack_map_size(s) / 4;
	__sync_synchronize();	/* the marks before the program may use them */
	s->skel->bss->fill_armed++;
}

int sampler_open(const struct sampler_config *cfg, const struct sampler_callbacks *cb,
		 struct sampler **out)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	libbpf_set_print(libbpf_log);
	s->cb = *cb;
	s->freq_hz = cfg->freq;
	s->period_ns = cfg->period;
	s->nr_possible_cpus = libbpf_num_possible_cpus();
	err = open_and_load(s, cfg);
	if (err)
		goto fail;
	err = add_targets(s, cfg);
	err = err ?: open_ring_buffers(s);
	if (err) {
		fprintf(stderr, "bpfprof: cannot set up the BPF maps: %s\n", strerror(-err));
		goto fail;
	}
	arm_fill_wakeup(s);
	/* Tracepoints first, so forks of the targets are followed from the start. */
	err = profile_bpf__attach(s->skel);
	if (err) {
		fprintf(stderr, "bpfprof: cannot attach the process lifecycle tracepoints: %s\n",
			strerror(-err));
		goto fail;
	}
	if (s->cb.before_sampling && (err = s->cb.before_sampling(s->cb.ctx, s)))
		goto fail;
	err = open_events(s, cfg);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	sampler_close(s);
	return err;
}

int sampler_add_target(struct sampler *s, uint32_t id)
{
	return put_target(s, id, BPFPROF_TARGET_NAMED);
}

/*
 * Wait for records, then read both rings in the order they were added:
 * the "events" ring first, so that the code objects' copies
 * (TASK_EVENT_PY_CODE) that a stack copy's Python frames need, submitted
 * before it, are read before it.  The wait also ends on the timeout:
 * samples are submitted without wake-ups below a backlog.
 *
 * The "samples" ring is read for SAMPLER_PASS_NS at most: libbpf reads a
 * ring until it finds it empty, and one refilled as fast as it is read
 * kept the other from being read at all.  That happened to a young
 * process's stack copies, each unwound here until its exec record (on
 * the "events" ring) lets its tables and its interpreter's entry be
 * written: under AddressSanitizer at 4999 Hz a copy took longer to unwind
 * than the next took to come, one pass lasted 211 ms, and 1,000-2,000
 * samples went out as copies, without their Python frames, instead of ~20.
 */
int sampler_poll(struct sampler *s, int timeout_ms)
{
	struct epoll_event ev[2];
	int n;

	if (epoll_wait(ring_buffer__epoll_fd(s->rb), ev, 2, timeout_ms) < 0)
		return -errno;
	s->pass_records = 0;
	s->pass_cut = false;
	s->pass_end_ns = monotonic_ns() + SAMPLER_PASS_NS;
	n = ring_buffer__consume(s->rb);
	return n == PASS_CUT && s->pass_cut ? s->pass_records : n;
}

/* Into libbpf's epoll set: sampler_poll() waits on it itself and reads the
 * rings with ring_buffer__consume(), never ring_buffer__poll(), which
 * would take the event's data for a ring of its own. */
int sampler_watch_fd(struct sampler *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = UINT64_MAX };

	if (epoll_ctl(ring_buffer__epoll_fd(s->rb), EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	return 0;
}

bool sampler_pass_cut(const struct sampler *s)
{
	return s->pass_cut;
}

void sampler_stop(struct sampler *s)
{
	for (size_t i = 0; s->links && i < s->nr_cpus; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
	}
	for (size_t i = 0; s->perf_fds && i < s->nr_cpus; i++) {
		if (s->perf_fds[i] >= 0)
			close(s->perf_fds[i]);
		s->perf_fds[i] = -1;
	}
}

int sampler_stack(struct sampler *s, uint64_t id, struct stack_trace *out)
{
	struct bpf_map *map = s->skel->maps.stacks;
	size_t size = bpf_map__value_size(map);	/* a prefix of struct stack_trace */
	uint32_t room = (uint32_t)((size - offsetof(struct stack_trace, ips)) / sizeof(out->ips[0]));

	if (size > sizeof(*out))
		return -EOVERFLOW;
	if (bpf_map__lookup_elem(map, &id, sizeof(id), out, size, 0))
		return -errno;
	if (out->nr > room)
		out->nr = room;
	return 0;
}

int sampler_prune_stacks(struct sampler *s, bool (*copied)(void *ctx, uint64_t id), void *ctx)
{
	struct bpf_map *map = s->skel->maps.stacks;
	size_t cap = bpf_map__max_entries(map), n = 0;
	uint64_t *ids = malloc(cap * sizeof(*ids)), key, *prev = NULL;
	int fd = bpf_map__fd(map), pruned = 0;

	if (!ids)
		return -ENOMEM;
	/* Collect first: deleting while walking restarts the walk. */
	while (n < cap && bpf_map_get_next_key(fd, prev, &key) == 0) {
		ids[n++] = key;
		prev = &ids[n - 1];
	}
	for (size_t i = 0; i < n; i++)
		if (copied(ctx, ids[i]) && bpf_map_delete_elem(fd, &ids[i]) == 0)
			pruned++;
	free(ids);
	return pruned;
}

#define DRAIN_BATCH 4096

/* Read and empty one count map (nobody writes it any more). */
static int drain_count_map(struct bpf_map *map,
			   int (*fn)(void *ctx, const struct count_key *k, uint64_t samples),
			   void *ctx)
{
	static struct count_key keys[DRAIN_BATCH];
	static uint64_t values[DRAIN_BATCH];
	int fd = bpf_map__fd(map), err = 0;
	uint64_t token;
	void *in = NULL;

	for (;;) {
		__u32 n = DRAIN_BATCH;
		int rc = bpf_map_lookup_and_delete_batch(fd, in, &token, keys, values, &n, NULL);

		if (rc && errno != ENOENT)
			return -errno;
		for (__u32 i = 0; i < n && !err; i++)
			err = fn(ctx, &keys[i], values[i]);
		if (err || rc)
			return err;
		in = &token;
	}
}

uint32_t sampler_stack_map_size(const struct sampler *s)
{
	return bpf_map__max_entries(s->skel->maps.stacks);
}

bool sampler_streams(const struct sampler *s)
{
	return s->skel->rodata->stream_samples;
}

/* The program's own tests (bpf/counts.bpf.h, capture_stack()) against the
 * marks arm_fill_wakeup() set; never true in a stream (no marks). */
bool sampler_counts_filling(const struct sampler *s)
{
	return s->skel->bss->counts_added >= s->skel->data->counts_fill_at ||
	       s->skel->bss->stacks_added >= s->skel->data->stacks_fill_at;
}

/* Hand @fn the counts of each CPU's pending-count slots
 * (bpf/counts.bpf.h, count_sample()): each group of slots is one value of
 * the per-CPU array, read for all CPUs at once. */
static int drain_pending_counts(struct sampler *s,
				int (*fn)(void *ctx, const struct count_key *k, uint64_t samples),
				void *ctx)
{
	struct bpf_map *map = s->skel->maps.pending_counts;
	int fd = bpf_map__fd(map), ncpus = s->nr_possible_cpus, err = 0;
	__u32 groups = bpf_map__max_entries(map);
	struct pending_count_group *v = calloc((size_t)ncpus, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (__u32 g = 0; g < groups && !err; g++) {
		if (bpf_map_lookup_elem(fd, &g, v)) {
			err = -errno;
			break;
		}
		for (int c = 0; c < ncpus && !err; c++)
			for (__u32 i = 0; i < BPFPROF_PENDING_GROUP_SLOTS && !err; i++)
				if (v[c].slot[i].samples)
					err = fn(ctx, &v[c].slot[i].key, v[c].slot[i].samples);
	}
	free(v);
	return err;
}

/* Hand @fn the counts each CPU's pending slots gave up and it has not
 * sent yet (the "moved_counts" map; bpf/counts.bpf.h). */
static int drain_moved_counts(struct sampler *s,
			      int (*fn)(void *ctx, const struct count_key *k, uint64_t samples),
			      void *ctx)
{
	int ncpus = s->nr_possible_cpus, err = 0;
	struct moved_counts_event *v = calloc((size_t)ncpus, sizeof(*v));
	__u32 zero = 0;

	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.moved_counts), &zero, v))
		err = -errno;
	for (int c = 0; c < ncpus && !err; c++)
		for (__u32 i = 0; i < v[c].nr && i < BPFPROF_MOVED_BATCH && !err; i++)
			err = fn(ctx, &v[c].counts[i].key, v[c].counts[i].samples);
	free(v);
	return err;
}

int sampler_drain_counts(struct sampler *s, bool final,
			 int (*fn)(void *ctx, const struct count_key *k, uint64_t samples),
			 void *ctx)
{
	struct bpf_map *maps[2] = { s->skel->maps.counts0, s->skel->maps.counts1 };
	__u32 old = s->skel->bss->active_counts;
	int err;

	s->counts_added_at_drain = s->skel->bss->counts_added;
	s->stacks_added_at_drain = s->skel->bss->stacks_added;
	/* Flip, then give programs that already chose the old map time to finish
	 * (they run for microseconds). */
	s->skel->bss->active_counts = !old;
	__sync_synchronize();
	if (!final) {
		arm_fill_wakeup(s);
		usleep(2000);
	}
	err = drain_count_map(maps[old], fn, ctx);
	if (!err && final)
		err = drain_count_map(maps[!old], fn, ctx);
	if (!err && final)
		err = drain_pending_counts(s, fn, ctx);
	if (!err && final)
		err = drain_moved_counts(s, fn, ctx);
	return err;
}

int sampler_read_stats(struct sampler *s, struct sampler_stats *st)
{
	int fd = bpf_map__fd(s->skel->maps.stats), efd = bpf_map__fd(s->skel->maps.stack_errors);
	int n = s->nr_possible_cpus, err = 0;
	uint64_t walk[CFI_WALK_COUNTERS] = { 0 }, stat[STAT_NR] = { 0 };
	uint64_t errnos[2 * STACK_ERRNO_SLOTS] = { 0 };

	memset(st, 0, sizeof(*st));
	err = percpu_sum_array(fd, STAT_NR, n, stat);
	st->seen = stat[STAT_SEEN];
	st->kept = stat[STAT_KEPT];
	st->events_lost = stat[STAT_EVENTS_LOST];
	st->stack_ids = stat[STAT_STACK_IDS];
	st->stack_ids_noted = stat[STAT_STACK_IDS_NOTED];
	for (uint32_t r = 0; r < DROP_NR; r++)
		st->drops[r] = stat[STAT_DROP_BASE + r];
	err = err ?: percpu_sum_counts(s->skel->maps.cfi_vars, n, CFI_WALK_COUNTERS, walk);
	for (uint32_t r = 0; r < CFI_WALK_STOP_NR && !err; r++)
		st->walk_stops[r] = walk[r];
	st->row_cache_hits = walk[CFI_ROW_CACHE_HITS];
	st->row_cache_misses = walk[CFI_ROW_CACHE_MISSES];
	st->stack_reads = walk[CFI_STACK_READS];
	st->map_searches = walk[CFI_MAP_SEARCHES];
	st->leaf_guesses = walk[CFI_LEAF_CALLER_GUESSES];
	st->fp_steps = walk[CFI_FP_STEPS];
	st->common_steps = walk[CFI_COMMON_STEPS];
	st->memo_frames = walk[CFI_MEMO_FRAMES_TAKEN];
	st->memo_fails = walk[CFI_MEMO_FAILS];
	st->copies_withheld = walk[CFI_COPIES_WITHHELD];
	err = err ?: percpu_sum_counts(s->skel->maps.py_vars, n, PY_STAT_NR, st->python);
	err = err ?: percpu_sum_array(efd, 2 * STACK_ERRNO_SLOTS, n, errnos);
	memcpy(st->user_stack_errno, errnos, sizeof(st->user_stack_errno));
	memcpy(st->kernel_stack_errno, errnos + STACK_ERRNO_SLOTS, sizeof(st->kernel_stack_errno));
	return err;
}

int sampler_cfi_tables_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.cfi_tables);
}

int sampler_cfi_procs_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.cfi_procs);
}

uint64_t *sampler_cfi_procs_gen(struct sampler *s)
{
	return (uint64_t *)&s->skel->bss->cfi_procs_gen;
}

int sampler_cfi_requests_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.cfi_requests);
}

void sampler_py_procs_written(struct sampler *s)
{
	__atomic_add_fetch(&s->skel->bss->py_procs_gen, 1, __ATOMIC_SEQ_CST);
}

int sampler_py_procs_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.py_procs);
}

uint64_t sampler_exec_id(const struct sampler *s, uint32_t tgid)
{
	uint64_t id = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.exec_ids), &tgid, &id))
		return 0;
	return id;
}

int sampler_py_codes_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.py_codes_seen);
}

uint64_t sampler_period_ns(const struct sampler *s)
{
	return s->period_ns;
}

uint64_t sampler_freq_hz(const struct sampler *s)
{
	return s->freq_hz;
}

size_t sampler_nr_cpus(const struct sampler *s)
{
	return s->nr_cpus;
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	ring_buffer__free(s->rb);
	profile_bpf__destroy(s->skel);
	free(s->perf_fds);
	free(s->links);
	free(s);
}
