// SPDX-License-Identifier: BSD-2-Clause
/*
 * writers.c - throughput of one output plugin on a synthetic profile,
 * driven through the real plugin ABI (include/bpfprof/plugin.h) by a host
 * implemented here: symbolize() answers from precomputed synthetic names
 * in O(1), stack() indexes an array.
 *
 *   writers [-s SAMPLES] [-k STACKS] [-t THREADS] [-P PROCESSES]
 *           [-m MAPPINGS] PLUGIN.so OUTDIR
 *
 * The profile (deterministic): SAMPLES samples (default 10^6) over STACKS
 * distinct user stacks (default 100,000; 20..60 frames, built as a tree so
 * that stacks share prefixes like real ones), 1,000 kernel stacks of 5..20
 * frames on a fifth of the samples, THREADS threads (default 1,000) in
 * PROCESSES processes (default 4), MAPPINGS executable mappings per process
 * (default 50) of 2,000 functions each.  Stack popularity is Zipf-like
 * (P(stack i) ~ 1/i), threads uniform.  Stream plugins get one COMM per
 * thread, one MMAP per mapping and every sample as an event in time order,
 * then write() with the aggregated profile; per-process plugins get one
 * open/write/close per process, like the collector does.
 *
 * Timed: from the first open() to the last close() (output FILE flushed,
 * not synced).  Printed on one line: the plugin, samples, distinct counts,
 * seconds, samples per second, CPU seconds, RSS before open() and peak RSS
 * during the plugin's work (VmHWM after resetting it with clear_refs),
 * output bytes.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpfprof/plugin.h>

#define MAP_BASE 0x400000ull
#define MAP_STRIDE 0x1000000ull		/* 16 MiB apart */
#define FUNCS_PER_MAP 2000u
#define FUNC_SIZE 512u			/* bytes of text per function */
#define KBASE 0xffffffff81000000ull
#define KFUNCS 5000u
#define KSTACKS 1000u
#define NR_FILES 400u

static unsigned nr_samples = 1000000, nr_stacks = 100000, nr_threads = 1000, nr_procs = 4,
		nr_maps = 50;

/* --- the synthetic profile --------------------------------------------------- */
static struct bpfprof_run run;
static struct bpfprof_process *procs;
static struct bpfprof_thread *threads;
static struct bpfprof_mapping *maps;	/* nr_procs * nr_maps */
static struct bpfprof_stack *stacks;	/* [0] empty, 1..nr_stacks user, then kernel */
static size_t total_stacks;
static struct bpfprof_count *counts;
static size_t nr_counts;
static char **fnames, **knames, **files, **map_paths;
static uint8_t build_ids[64][20];

struct sample {
	uint32_t thread, ustack, kstack;
};
static struct sample *samples;

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)		/* splitmix64 */
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned rnd_between(unsigned lo, unsigned hi)	/* inclusive */
{
	return lo + (unsigned)(rnd() % (hi - lo + 1));
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, "writers: out of memory\n");
		exit(1);
	}
	return p;
}

static char *xstrdupf(const char *fmt, ...)
{
	char *s;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		fprintf(stderr, "writers: out of memory\n");
		exit(1);
	}
	va_end(ap);
	return s;
}

static uint64_t random_user_ip(void)
{
	unsigned m = (unsigned)(rnd() % nr_maps), f = (unsigned)(rnd() % FUNCS_PER_MAP);

	return MAP_BASE + m * MAP_STRIDE + (uint64_t)f * FUNC_SIZE + 4 + rnd() % (FUNC_SIZE - 8);
}

static void make_stacks(void)
{
	uint64_t *root_first = xcalloc(64, sizeof(uint64_t));

	total_stacks = 1 + (size_t)nr_stacks + KSTACKS;
	stacks = xcalloc(total_stacks, sizeof(*stacks));
	for (unsigned s = 1; s <= nr_stacks; s++) {
		unsigned depth = rnd_between(20, 60), keep = 0;
		uint64_t *ips = xcalloc(depth, sizeof(uint64_t));

		/* Share a prefix (root side) with an earlier stack, as real
		 * call trees do; the first stacks start from main. */
		if (s > 16) {
			const struct bpfprof_stack *p = &stacks[1 + rnd() % (s - 1)];
			unsigned max = (p->nr < depth ? p->nr : depth) - 1;

			keep = rnd_between(max / 2, max);
			for (unsigned i = 0; i < keep; i++)
				root_first[i] = p->ips[p->nr - 1 - i];
		} else {
			root_first[0] = MAP_BASE + 64;	/* _start-like */
			root_first[1] = MAP_BASE + FUNC_SIZE + 64;	/* main-like */
			keep = 2;
		}
		for (unsigned i = keep; i < depth; i++)
			root_first[i] = random_user_ip();
		for (unsigned i = 0; i < depth; i++)
			ips[i] = root_first[depth - 1 - i];	/* leaf first */
		stacks[s].ips = ips;
		stacks[s].nr = depth;
	}
	for (unsigned k = 0; k < KSTACKS; k++) {
		struct bpfprof_stack *st = &stacks[1 + nr_stacks + k];
		unsigned depth = rnd_between(5, 20);
		uint64_t *ips = xcalloc(depth, sizeof(uint64_t));

		for (unsigned i = 0; i < depth; i++)
			ips[i] = KBASE + (rnd() % KFUNCS) * 64 + 8 + rnd() % 48;
		st->ips = ips;
		st->nr = depth;
		st->kernel = 1;
	}
	free(root_first);
}

static int cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ustack != y->ustack)
		return x->ustack < y->ustack ? -1 : 1;
	return x->kstack < y->kstack ? -1 : x->kstack > y->kstack;
}

static void make_profile(void)
{
	unsigned per_proc = nr_threads / nr_procs;
	struct sample *sorted;

	fnames = xcalloc((size_t)nr_maps * FUNCS_PER_MAP, sizeof(char *));
	for (size_t i = 0; i < (size_t)nr_maps * FUNCS_PER_MAP; i++)
		fnames[i] = xstrdupf("synth_namespace::Class%zu::method_%zu(int, char const*)",
				     i % 977, i);
	knames = xcalloc(KFUNCS, sizeof(char *));
	for (unsigned i = 0; i < KFUNCS; i++)
		knames[i] = xstrdupf("kernel_function_%u", i);
	files = xcalloc(NR_FILES, sizeof(char *));
	for (unsigned i = 0; i < NR_FILES; i++)
		files[i] = xstrdupf("/build/src/module%u/file%u.cc", i % 17, i);
	map_paths = xcalloc(nr_maps, sizeof(char *));
	for (unsigned m = 0; m < nr_maps; m++)
		map_paths[m] = xstrdupf("/usr/lib/x86_64-linux-gnu/libsynthetic%u.so.1", m);
	for (unsigned m = 0; m < 64; m++)
		for (unsigned b = 0; b < 20; b++)
			build_ids[m][b] = (uint8_t)(m * 31 + b * 7 + 1);

	procs = xcalloc(nr_procs, sizeof(*procs));
	threads = xcalloc(nr_threads, sizeof(*threads));
	maps = xcalloc((size_t)nr_procs * nr_maps, sizeof(*maps));
	for (unsigned p = 0; p < nr_procs; p++) {
		struct bpfprof_process *pr = &procs[p];

		for (unsigned m = 0; m < nr_maps; m++) {
			struct bpfprof_mapping *mp = &maps[p * nr_maps + m];

			mp->start = MAP_BASE + m * MAP_STRIDE;
			mp->end = mp->start + (uint64_t)FUNCS_PER_MAP * FUNC_SIZE;
			mp->prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC;
			mp->dev_major = 254;
			mp->inode = 1000 + m;
			mp->path = map_paths[m];
			mp->build_id = build_ids[m % 64];
			mp->build_id_size = 20;
		}
		pr->pid = 10000 + p * 1000;
		pr->ppid = 1;
		pr->comm = xstrdupf("synth%u", p);
		pr->exe = map_paths[0];
		pr->cmdline = xstrdupf("synth%u --serve", p);
		pr->mappings = &maps[p * nr_maps];
		pr->nr_mappings = nr_maps;
		pr->first_thread = p * per_proc;
		pr->nr_threads = p == nr_procs - 1 ? nr_threads - p * per_proc : per_proc;
	}
	for (unsigned t = 0; t < nr_threads; t++) {
		unsigned p = t / per_proc < nr_procs ? t / per_proc : nr_procs - 1;

		threads[t].pid = procs[p].pid;
		threads[t].tid = t == procs[p].first_thread ? procs[p].pid : procs[p].pid + 1 + t;
		threads[t].process = p;
		threads[t].comm = xstrdupf("worker-%u", t);
	}
	make_stacks();

	samples = xcalloc(nr_samples, sizeof(*samples));
	for (unsigned i = 0; i < nr_samples; i++) {
		double u = (double)(rnd() >> 11) / 9007199254740992.0;

		samples[i].thread = (uint32_t)(rnd() % nr_threads);
		/* Zipf-like: P(stack i) ~ 1/i, every stack reachable. */
		samples[i].ustack = (uint32_t)exp(u * log(nr_stacks + 1.0));
		if (samples[i].ustack < 1 || samples[i].ustack > nr_stacks)
			samples[i].ustack = 1 + (uint32_t)(rnd() % nr_stacks);
		samples[i].kstack = rnd() % 5 == 0 ? 1 + nr_stacks + (uint32_t)(rnd() % KSTACKS) : 0;
	}
	/* Aggregate into counts sorted by thread. */
	sorted = xcalloc(nr_samples, sizeof(*sorted));
	memcpy(sorted, samples, nr_samples * sizeof(*sorted));
	qsort(sorted, nr_samples, sizeof(*sorted), cmp_sample);
	counts = xcalloc(nr_samples, sizeof(*counts));
	for (unsigned i = 0; i < nr_samples; i++) {
		if (i && !cmp_sample(&sorted[i], &sorted[i - 1])) {
			counts[nr_counts - 1].samples++;
			continue;
		}
		counts[nr_counts++] = (struct bpfprof_count){ .thread = sorted[i].thread,
			.user_stack = sorted[i].ustack, .kernel_stack = sorted[i].kstack, .samples = 1 };
	}
	free(sorted);
	for (size_t c = 0; c < nr_counts; c++) {
		threads[counts[c].thread].samples += counts[c].samples;
		procs[threads[counts[c].thread].process].samples += counts[c].samples;
	}
}

/* --- the host ---------------------------------------------------------------- */
static int host_symbolize(const struct bpfprof_host *h, uint32_t pid, uint64_t ip, int kernel,
			  struct bpfprof_symbol *sym)
{
	memset(sym, 0, sizeof(*sym));
	if (kernel) {
		uint64_t f = (ip - KBASE) / 64;

		if (ip < KBASE || f >= KFUNCS)
			return -ENOENT;
		sym->module = "[kernel.kallsyms]";
		sym->module_offset = ip;
		sym->function = knames[f];
		sym->function_start = KBASE + f * 64;
		return 0;
	}
	uint64_t m = (ip - MAP_BASE) / MAP_STRIDE, off, f;
	unsigned p = (pid - 10000) / 1000;

	if (ip < MAP_BASE || m >= nr_maps || p >= nr_procs)
		return -ENOENT;
	const struct bpfprof_mapping *mp = &procs[p].mappings[m];
	if (ip >= mp->end)
		return -ENOENT;
	off = ip - mp->start;
	f = off / FUNC_SIZE;
	sym->mapping = mp;
	sym->module = mp->path;
	sym->module_offset = 0x10000 + off;
	sym->function = fnames[m * FUNCS_PER_MAP + f];
	sym->function_start = 0x10000 + f * FUNC_SIZE;
	sym->file = files[(m * FUNCS_PER_MAP + f) % NR_FILES];
	sym->line = 1 + (uint32_t)(off / 8);
	return 0;
}

static const struct bpfprof_stack *host_stack(const struct bpfprof_host *h, uint32_t index)
{
	return index < total_stacks ? &stacks[index] : NULL;
}

static char *error_msg;

static void host_error(const struct bpfprof_host *h, const char *fmt, ...)
{
	va_list ap;

	if (error_msg)
		return;
	va_start(ap, fmt);
	if (vasprintf(&error_msg, fmt, ap) < 0)
		error_msg = NULL;
	va_end(ap);
}

static void host_warn(const struct bpfprof_host *h, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "writers: plugin warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const struct bpfprof_host host = {
	.abi_version = BPFPROF_PLUGIN_ABI_VERSION,
	.symbolize = host_symbolize,
	.stack = host_stack,
	.error = host_error,
	.warn = host_warn,
};

/* --- driving a plugin --------------------------------------------------------- */
static const struct bpfprof_plugin *plugin;
static const char *outdir;
static const char *const run_argv[] = { "bpfprof", "-F", "999", "-a", NULL };

static void fill_run(void)
{
	run.version = "bench";
	run.event = "cpu-clock";
	run.sample_freq = 999;
	run.sample_period = 1001001;
	run.start_ns = 1000000000ull;
	run.end_ns = run.start_ns + (uint64_t)nr_samples * 1000;
	run.realtime_anchor_ns = 1700000000ull * 1000000000ull;
	run.hostname = "bench";
	run.os_release = "6.1.0";
	run.arch = "x86_64";
	run.nr_cpus_online = run.nr_cpus_available = 2;
	run.argc = 4;
	run.argv = run_argv;
	run.target = "system-wide";
	run.max_stack_depth = 127;
	run.samples_seen = run.samples_kept = nr_samples;
}

static int open_output(struct bpfprof_output *out, uint32_t pid)
{
	char path[4096];

	memset(out, 0, sizeof(*out));
	out->dir_fd = -1;
	out->pid = pid;
	snprintf(path, sizeof(path), "%s/out%s%u", outdir, pid ? "." : "", pid);
	out->path = strdup(path);
	if (plugin->flags & BPFPROF_PLUGIN_DIRECTORY) {
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		out->dir_fd = open(path, O_RDONLY | O_DIRECTORY);
		return out->dir_fd < 0 ? -errno : 0;
	}
	out->file = fopen(path, "w+b");
	return out->file ? 0 : -errno;
}

static void close_output(struct bpfprof_output *out)
{
	if (out->file)
		fclose(out->file);
	if (out->dir_fd >= 0)
		close(out->dir_fd);
	free((char *)out->path);
}

static int feed_stream(void *state)
{
	struct bpfprof_event ev;
	int err;

	for (unsigned t = 0; t < nr_threads; t++) {
		ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_COMM, .cpu = UINT32_MAX,
			.time_ns = run.start_ns, .pid = threads[t].pid, .tid = threads[t].tid };
		ev.comm = threads[t].comm;
		if ((err = plugin->event(state, &ev)))
			return err;
	}
	for (unsigned p = 0; p < nr_procs; p++)
		for (unsigned m = 0; m < nr_maps; m++) {
			ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_MMAP, .cpu = UINT32_MAX,
				.time_ns = run.start_ns, .pid = procs[p].pid, .tid = procs[p].pid };
			ev.mapping = &procs[p].mappings[m];
			if ((err = plugin->event(state, &ev)))
				return err;
		}
	for (unsigned i = 0; i < nr_samples; i++) {
		const struct bpfprof_thread *th = &threads[samples[i].thread];

		ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_SAMPLE, .cpu = i & 1,
			.time_ns = run.start_ns + (uint64_t)i * 1000, .pid = th->pid, .tid = th->tid };
		ev.sample.user_stack = samples[i].ustack;
		ev.sample.kernel_stack = samples[i].kstack;
		ev.sample.period = run.sample_period;
		if ((err = plugin->event(state, &ev)))
			return err;
	}
	return 0;
}

static int one_cycle(const struct bpfprof_profile *view, uint32_t pid)
{
	struct bpfprof_output out;
	void *state = NULL;
	int err = open_output(&out, pid);

	if (err)
		return err;
	err = plugin->open(&host, &run, &out, &state);
	if (!err) {
		if (plugin->flags & BPFPROF_PLUGIN_STREAM)
			err = feed_stream(state);
		err = err ?: plugin->write(state, view);
		plugin->close(state);
	}
	if (!err && out.file && fflush(out.file))
		err = -errno;
	close_output(&out);
	return err;
}

static int run_plugin(void)
{
	struct bpfprof_profile all = { .run = &run, .processes = procs, .nr_processes = nr_procs,
		.threads = threads, .nr_threads = nr_threads, .stacks = stacks,
		.nr_stacks = total_stacks, .counts = counts, .nr_counts = nr_counts };
	int err = 0;

	if (!(plugin->flags & BPFPROF_PLUGIN_PER_PROCESS))
		return one_cycle(&all, 0);
	/* One view per process: its threads, its counts (thread indices rebased). */
	for (unsigned p = 0; p < nr_procs && !err; p++) {
		struct bpfprof_process one = procs[p];
		struct bpfprof_count *pc = xcalloc(nr_counts, sizeof(*pc));
		size_t n = 0;

		for (size_t c = 0; c < nr_counts; c++)
			if (threads[counts[c].thread].process == p) {
				pc[n] = counts[c];
				pc[n++].thread -= one.first_thread;
			}
		one.first_thread = 0;
		struct bpfprof_thread *th = xcalloc(one.nr_threads, sizeof(*th));
		for (uint32_t t = 0; t < one.nr_threads; t++) {
			th[t] = threads[procs[p].first_thread + t];
			th[t].process = 0;
		}
		struct bpfprof_profile view = { .run = &run, .processes = &one, .nr_processes = 1,
			.threads = th, .nr_threads = one.nr_threads, .stacks = stacks,
			.nr_stacks = total_stacks, .counts = pc, .nr_counts = n };
		err = one_cycle(&view, one.pid);
		free(pc);
		free(th);
	}
	return err;
}

/* --- measuring ----------------------------------------------------------------- */
static long status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	size_t n = strlen(field);
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

static void reset_peak_rss(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "5", 1) < 0)
			perror("writers: clear_refs");
		close(fd);
	}
}

static uint64_t dir_bytes(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	uint64_t total = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p[4096];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		if (lstat(p, &st))
			continue;
		total += S_ISDIR(st.st_mode) ? dir_bytes(p) : (uint64_t)st.st_size;
	}
	closedir(d);
	return total;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	bpfprof_plugin_entry_fn entry;
	double t0, t1, c0, c1;
	long rss_before, peak;
	void *dl;
	int opt, err;

	while ((opt = getopt(argc, argv, "s:k:t:P:m:")) != -1) {
		switch (opt) {
		case 's': nr_samples = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'k': nr_stacks = (unsigned)strtoul(optarg, NULL, 0); break;
		case 't': nr_threads = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'P': nr_procs = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'm': nr_maps = (unsigned)strtoul(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (argc - optind != 2 || !nr_samples || !nr_stacks || !nr_procs || nr_threads < nr_procs ||
	    !nr_maps || nr_maps > 64)
		goto usage;
	outdir = argv[optind + 1];
	dl = dlopen(argv[optind], RTLD_NOW | RTLD_LOCAL);
	entry = dl ? (bpfprof_plugin_entry_fn)dlsym(dl, BPFPROF_PLUGIN_ENTRY) : NULL;
	plugin = entry ? entry(BPFPROF_PLUGIN_ABI_VERSION) : NULL;
	if (!plugin) {
		fprintf(stderr, "writers: cannot load %s: %s\n", argv[optind], dlerror());
		return 1;
	}
	fill_run();
	make_profile();

	reset_peak_rss();
	rss_before = status_kb("VmRSS");
	t0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	err = run_plugin();
	t1 = now_s(CLOCK_MONOTONIC);
	c1 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	peak = status_kb("VmHWM");
	if (err) {
		fprintf(stderr, "writers: %s failed: %s (%s)\n", plugin->name, strerror(-err),
			error_msg ? error_msg : "no message");
		return 1;
	}
	printf("writers: plugin %s samples %u counts %zu stacks %zu seconds %.3f samples_per_s %.0f "
	       "cpu_s %.3f rss_before_mb %.1f peak_rss_mb %.1f output_bytes %llu\n",
	       plugin->name, nr_samples, nr_counts, total_stacks, t1 - t0, nr_samples / (t1 - t0),
	       c1 - c0, rss_before / 1024.0, peak / 1024.0,
	       (unsigned long long)dir_bytes(outdir));
	return 0;
usage:
	fprintf(stderr, "usage: writers [-s SAMPLES] [-k STACKS] [-t THREADS] [-P PROCESSES] "
			"[-m MAPPINGS<=64] PLUGIN.so OUTDIR\n");
	return 2;
}
