// SPDX-License-Identifier: BSD-2-Clause
/*
 * sample_kernel_time.c - how long each cpu-clock sample of some processes
 * takes in the kernel's sample handler, whoever's event it is (perf
 * record's or bpfprof's): the loader of sample_kernel_time.bpf.c, for
 * tests/bench/sample_cost.py.
 *
 *   sample_kernel_time PID[,PID...]
 *   sample_kernel_time comm=NAME        (the tasks named NAME, e.g. python3.11)
 *
 * Attaches, prints "sample_kernel_time: ready" on stdout, counts until
 * SIGINT or SIGTERM, then prints one line (times in ns):
 *
 *   sample_kernel_time: samples N mean M p25 A p50 B p75 C p90 D p99 E
 *
 * The quantiles come from a histogram of SKT_SLOT_NS ns slots (each is the
 * middle of its slot).  Root.  Build: see sample_cost.py's build_tool().
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample_kernel_time.h"
#include "sample_kernel_time.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

/* perf_swevent_hrtimer()'s address from /proc/kallsyms, 0 if not found. */
static unsigned long long timer_callback(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr, found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    !strcmp(name, "perf_swevent_hrtimer"))
			found = addr;
	fclose(f);
	return found;
}

/* Parse "PID[,PID...]" or "comm=NAME" into the program's constants; 0 or
 * -EINVAL. */
static int set_targets(struct sample_kernel_time_bpf *skel, const char *list)
{
	char *end;
	unsigned n = 0;

	if (!strncmp(list, "comm=", 5)) {
		size_t len = strlen(list + 5);

		if (!len || len >= SKT_COMM_LEN)
			return -EINVAL;
		memcpy((char *)skel->rodata->comm, list + 5, len);
		skel->rodata->by_comm = true;
		return 0;
	}
	for (const char *p = list; *p; p = *end ? end + 1 : end) {
		long v = strtol(p, &end, 10);

		if (end == p || (*end && *end != ',') || v <= 0 || n == SKT_MAX_TGIDS)
			return -EINVAL;
		skel->rodata->tgids[n++] = (__u32)v;
	}
	skel->rodata->nr_tgids = n;
	return n ? 0 : -EINVAL;
}

static __u64 read_slot(int fd, __u32 slot)
{
	__u64 v = 0;

	bpf_map_lookup_elem(fd, &slot, &v);
	return v;
}

/* The middle of the slot where the @q-th of @n callbacks fell, ns. */
static double quantile(const __u64 *hist, __u64 n, double q)
{
	__u64 want = (__u64)(q * (double)(n - 1)), seen = 0;

	for (__u32 i = 0; i < SKT_SLOTS; i++) {
		seen += hist[i];
		if (seen > want)
			return (i + 0.5) * SKT_SLOT_NS;
	}
	return SKT_SLOTS * (double)SKT_SLOT_NS;
}

static int report(struct sample_kernel_time_bpf *skel)
{
	static __u64 hist[SKT_SLOTS];
	int hfd = bpf_map__fd(skel->maps.hist), tfd = bpf_map__fd(skel->maps.totals);
	__u64 n = read_slot(tfd, SKT_COUNT), sum = read_slot(tfd, SKT_SUM_NS);

	for (__u32 i = 0; i < SKT_SLOTS; i++)
		hist[i] = read_slot(hfd, i);
	if (!n) {
		printf("sample_kernel_time: samples 0\n");
		return 0;
	}
	printf("sample_kernel_time: samples %llu mean %.0f p25 %.0f p50 %.0f p75 %.0f p90 %.0f "
	       "p99 %.0f\n", (unsigned long long)n, (double)sum / (double)n,
	       quantile(hist, n, 0.25), quantile(hist, n, 0.5), quantile(hist, n, 0.75),
	       quantile(hist, n, 0.9), quantile(hist, n, 0.99));
	return 0;
}

int main(int argc, char **argv)
{
	struct sample_kernel_time_bpf *skel;
	unsigned long long fn;
	sigset_t block, old;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: sample_kernel_time PID[,PID...] (at most %d) | comm=NAME\n",
			SKT_MAX_TGIDS);
		return 2;
	}
	fn = timer_callback();
	if (!fn) {
		fprintf(stderr, "sample_kernel_time: perf_swevent_hrtimer not in /proc/kallsyms "
			"(run as root)\n");
		return 1;
	}
	skel = sample_kernel_time_bpf__open();
	if (!skel) {
		fprintf(stderr, "sample_kernel_time: cannot open the BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	skel->rodata->timer_fn = fn;
	if (set_targets(skel, argv[1])) {
		fprintf(stderr, "sample_kernel_time: '%s' is neither a list of at most %d pids "
			"nor comm=NAME (at most %d characters)\n", argv[1], SKT_MAX_TGIDS,
			SKT_COMM_LEN - 1);
		sample_kernel_time_bpf__destroy(skel);
		return 2;
	}
	err = sample_kernel_time_bpf__load(skel);
	if (!err)
		err = sample_kernel_time_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "sample_kernel_time: cannot load or attach: %s\n", strerror(-err));
		sample_kernel_time_bpf__destroy(skel);
		return 1;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);	/* no signal lost before sigsuspend() */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("sample_kernel_time: ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	err = report(skel);
	sample_kernel_time_bpf__destroy(skel);
	return err ? 1 : 0;
}
