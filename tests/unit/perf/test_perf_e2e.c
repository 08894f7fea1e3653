// SPDX-License-Identifier: BSD-2-Clause
/*
 * tests/unit/perf/test_perf_e2e.c - end-to-end test of the perf plugin:
 * a fake host streams a synthetic but real profile of this very process
 * (addresses of its own functions, of libc's qsort and of a kernel
 * function from /proc/kallsyms; its real /proc/self/maps with build-ids
 * read from the ELF notes) and the real perf tools read the file:
 *
 *   perf script -F comm,pid,tid,cpu,time,ip,sym,dso   names, ids, times
 *   perf report --stdio --no-children --sort sym      shares 50/30/20
 *   perf report --header-only                          host facts, cmdline
 *   perf buildid-list                                  this binary's build-id
 *
 * with nothing at all on their stderr.  It runs twice: with COMM/MMAP in
 * the stream, and with samples only (the plugin must then add the COMM
 * and MMAP2 records from the profile passed to write()).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpfprof/plugin.h>

#include "fake_host.h"

#define NOIPA __attribute__((noipa, noinline, used))

#define NR_SAMPLES 100

/* ---- real code addresses --------------------------------------------- */

NOIPA uintptr_t noinline_fn(void)
{
	return (uintptr_t)__builtin_return_address(0);
}

/* Returns the return address into itself (from noinline_fn) and stores
 * the one into its caller. */
NOIPA uintptr_t noinline_caller(uintptr_t *outer)
{
	uintptr_t r = noinline_fn();

	*outer = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return r;
}

/* ---- this process's executable mappings -------------------------------- */

#define MAX_MAPS 128

static struct bpfprof_mapping maps[MAX_MAPS];
static char map_paths[MAX_MAPS][512];
static uint8_t map_bids[MAX_MAPS][20];
static size_t nr_maps;

/* GNU build-id of an ELF file from its SHT_NOTE sections. */
static int elf_build_id(const char *path, uint8_t *out)
{
	Elf_Scn *scn = NULL;
	int fd, n = 0;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !n && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz <= 20) {
				memcpy(out, (char *)d->d_buf + doff, nh.n_descsz);
				n = (int)nh.n_descsz;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return n;
}

static void read_self_maps(void)
{
	char line[1024], perms[8], path[512];
	unsigned long long start, end, pgoff, inode;
	unsigned maj, min;
	FILE *f = fopen("/proc/self/maps", "re");

	assert_non_null(f);
	nr_maps = 0;
	while (fgets(line, sizeof(line), f) && nr_maps < MAX_MAPS) {
		struct bpfprof_mapping *m = &maps[nr_maps];
		int bid;

		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %511s", &start, &end, perms, &pgoff,
			   &maj, &min, &inode, path) < 7)
			continue;
		if (perms[2] != 'x' || (path[0] != '/' && strcmp(path, "[vdso]")))
			continue;
		snprintf(map_paths[nr_maps], sizeof(map_paths[0]), "%s", path);
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = end;
		m->pgoff = pgoff;
		m->prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC;
		m->dev_major = maj;
		m->dev_minor = min;
		m->inode = inode;
		m->path = map_paths[nr_maps];
		bid = path[0] == '/' ? elf_build_id(path, map_bids[nr_maps]) : 0;
		if (bid) {
			m->build_id = map_bids[nr_maps];
			m->build_id_size = (uint32_t)bid;
		}
		nr_maps++;
	}
	fclose(f);
}

/* ---- a kernel function ------------------------------------------------- */

static char ksym_name[256];
static uint64_t ksym_addr;

/* A global text symbol no other symbol shares an address with. */
static void find_kernel_symbol(void)
{
	static const char *const wanted[] = { "vfs_read", "ksys_read", "do_sys_openat2",
					      "schedule", NULL };
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "re");

	ksym_addr = 0;
	if (!f)
		return;
	for (int w = 0; wanted[w] && !ksym_addr; w++) {
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
			    (type == 'T' || type == 't') && addr && !strcmp(name, wanted[w])) {
				ksym_addr = addr;
				snprintf(ksym_name, sizeof(ksym_name), "%s", name);
				break;
			}
		}
	}
	fclose(f);
}

/* ---- the fake host ------------------------------------------------------ */

enum { ST_EMPTY, ST_USER_FN, ST_USER_QSORT, ST_KERNEL, ST_NR };

static uint64_t stack_ips[ST_NR][4];
static struct bpfprof_stack stacks[ST_NR];
static struct fake_host fh;		/* stacks[]; errors and warnings on stderr */

static char tmpdir[64];
static char exe_path[512];
static char self_comm[32];
static char hostname[256], os_release[256], arch[128];

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int setup(void **unused)
{
	uintptr_t outer = 0, in_caller;
	uint64_t qsort_addr;
	struct utsname u;
	void *libc;
	ssize_t n;
	FILE *f;

	if (system("perf version >/dev/null 2>&1") != 0)
		return 0;	/* tests skip */
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bpfprof-perf-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	assert_true(n > 0);
	exe_path[n] = '\0';
	f = fopen("/proc/self/comm", "re");
	assert_non_null(f);
	assert_non_null(fgets(self_comm, sizeof(self_comm), f));
	self_comm[strcspn(self_comm, "\n")] = '\0';
	fclose(f);
	uname(&u);
	snprintf(hostname, sizeof(hostname), "%s", u.nodename);
	snprintf(os_release, sizeof(os_release), "%s", u.release);
	snprintf(arch, sizeof(arch), "%s", u.machine);

	read_self_maps();
	find_kernel_symbol();
	in_caller = noinline_caller(&outer);
	/* libc's own qsort, not a sanitizer's interceptor of it */
	libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	assert_non_null(libc);
	qsort_addr = (uint64_t)(uintptr_t)dlsym(libc, "qsort");
	assert_true(qsort_addr != 0);

	stacks[ST_EMPTY] = (struct bpfprof_stack){ NULL, 0, 0 };
	stack_ips[ST_USER_FN][0] = (uint64_t)(uintptr_t)&noinline_fn + 1;
	stack_ips[ST_USER_FN][1] = in_caller;
	stack_ips[ST_USER_FN][2] = outer;
	stacks[ST_USER_FN] = (struct bpfprof_stack){ stack_ips[ST_USER_FN], 3, 0 };
	stack_ips[ST_USER_QSORT][0] = qsort_addr + 1;
	stack_ips[ST_USER_QSORT][1] = in_caller;
	stack_ips[ST_USER_QSORT][2] = outer;
	stacks[ST_USER_QSORT] = (struct bpfprof_stack){ stack_ips[ST_USER_QSORT], 3, 0 };
	stack_ips[ST_KERNEL][0] = ksym_addr + 1;
	stacks[ST_KERNEL] = (struct bpfprof_stack){ stack_ips[ST_KERNEL], ksym_addr ? 1 : 0, 1 };
	return 0;
}

static int teardown(void **unused)
{
	char cmd[128];

	if (tmpdir[0] && !getenv("BPFPROF_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd)) {
		}
	}
	return 0;
}

/* What a case streams besides samples. */
enum {
	CASE_TASK_EVENTS = 1,	/* COMM and MMAP before the samples */
	CASE_LATE_AND_LOST = 2,	/* a sample 700 ms late, lost samples */
	CASE_THREADS = 4,	/* FORK, COMM and EXIT of a second thread */
};

/* The made-up tid of the second thread of CASE_THREADS. */
#define WORKER_TID 4000001u

/* Drive the plugin: 50% noinline_fn, 30% qsort, 20% kernel. */
static void write_profile(const char *path, int mode)
{
	const uint64_t spacing = mode & CASE_LATE_AND_LOST ? 12000000ull : 2004008ull;
	static const char *argv[] = { "bpfprof", "--format", "perf", "-F", "499", "-o",
				      "perf.data", "-p", "self" };
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)gettid();
	struct bpfprof_run run = {
		.version = "0.1.0",
		.event = "cpu-clock",
		.sample_freq = 499,
		.sample_period = 2004008,
		.hostname = hostname,
		.os_release = os_release,
		.arch = arch,
		.nr_cpus_online = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN),
		.nr_cpus_available = (uint32_t)sysconf(_SC_NPROCESSORS_CONF),
		.argc = 9,
		.argv = argv,
		.target = "pid",
		.max_stack_depth = 127,
	};
	struct bpfprof_thread threads[2] = {
		{ .tid = tid, .pid = pid, .comm = self_comm, .samples = NR_SAMPLES },
	};
	struct bpfprof_process proc = {
		.pid = pid, .comm = self_comm, .exe = exe_path, .cmdline = exe_path,
		.mappings = maps, .nr_mappings = nr_maps, .first_thread = 0, .nr_threads = 1,
		.samples = NR_SAMPLES,
	};
	struct bpfprof_profile prof = {
		.run = &run, .processes = &proc, .nr_processes = 1, .threads = threads,
		.nr_threads = 1, .stacks = stacks, .nr_stacks = ST_NR,
	};
	const struct bpfprof_plugin *pl = bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION);
	struct bpfprof_output out = { .dir_fd = -1, .path = path };
	struct bpfprof_event ev;
	void *state = NULL;
	uint64_t t;
	size_t i;

	argv[8] = "self";
	run.start_ns = now_ns(CLOCK_MONOTONIC);
	run.realtime_anchor_ns = now_ns(CLOCK_REALTIME);
	t = run.start_ns;
	out.file = fopen(path, "w+b");
	assert_non_null(out.file);
	assert_non_null(pl);
	fake_host_init(&fh);
	fake_host_stacks(&fh, stacks, ST_NR);
	fh.echo = 1;
	assert_int_equal(pl->open(&fh.host, &run, &out, &state), 0);

	if (mode & CASE_TASK_EVENTS) {
		ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_COMM, .cpu = 0, .time_ns = t,
					     .pid = pid, .tid = tid, .comm = self_comm };
		assert_int_equal(pl->event(state, &ev), 0);
		for (i = 0; i < nr_maps; i++) {
			ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_MMAP, .cpu = 0,
						     .time_ns = t + 1, .pid = pid, .tid = pid,
						     .mapping = &maps[i] };
			assert_int_equal(pl->event(state, &ev), 0);
		}
	}
	if (mode & CASE_THREADS) {
		ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_FORK, .cpu = 1, .time_ns = t + 2,
					     .pid = pid, .tid = WORKER_TID,
					     .fork = { .ppid = pid, .ptid = tid } };
		assert_int_equal(pl->event(state, &ev), 0);
		ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_COMM, .cpu = 1, .time_ns = t + 3,
					     .pid = pid, .tid = WORKER_TID, .comm = "worker" };
		assert_int_equal(pl->event(state, &ev), 0);
	}
	for (i = 0; i < NR_SAMPLES; i++) {
		int kind = (int)(i % 10);

		ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_SAMPLE, .cpu = (uint32_t)(i % 2),
					     .pid = pid, .tid = tid };
		if ((mode & CASE_THREADS) && i % 2)
			ev.tid = WORKER_TID;
		/* 2 ms apart, with every other pair swapped (two CPUs' records
		 * interleave slightly out of order) */
		ev.time_ns = t + 1000000 + spacing * i + ((i % 4 == 1) ? 1500000 : 0);
		if ((mode & CASE_LATE_AND_LOST) && i == 80)
			ev.time_ns -= 700000000ull;
		ev.sample.period = 2004008;
		if (kind < 5) {
			ev.sample.user_stack = ST_USER_FN;
		} else if (kind < 8) {
			ev.sample.user_stack = ST_USER_QSORT;
		} else {
			ev.sample.kernel_stack = ST_KERNEL;
			ev.sample.user_stack = ST_USER_FN;
		}
		assert_int_equal(pl->event(state, &ev), 0);
	}
	if (mode & CASE_THREADS) {
		ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_EXIT, .cpu = 1,
					     .time_ns = t + 1000000 + spacing * NR_SAMPLES,
					     .pid = pid, .tid = WORKER_TID };
		assert_int_equal(pl->event(state, &ev), 0);
		threads[1] = (struct bpfprof_thread){ .tid = WORKER_TID, .pid = pid,
						      .comm = "worker", .process = 0,
						      .samples = NR_SAMPLES / 2 };
		threads[0].samples = NR_SAMPLES / 2;
		proc.nr_threads = 2;
		prof.nr_threads = 2;
	}
	if (mode & CASE_LATE_AND_LOST) {
		ev = (struct bpfprof_event){ .type = BPFPROF_EVENT_LOST, .cpu = 1,
					     .time_ns = t + 1000000 + spacing * NR_SAMPLES,
					     .pid = pid, .tid = tid,
					     .lost = { .lost = 2, .reason = BPFPROF_DROP_RINGBUF_FULL } };
		assert_int_equal(pl->event(state, &ev), 0);
		run.drops[BPFPROF_DROP_RINGBUF_FULL] = 2;
		run.drops[BPFPROF_DROP_USER_STACK] = 1;
	}
	run.end_ns = t + 2000000 + spacing * NR_SAMPLES;
	run.samples_seen = run.samples_kept = NR_SAMPLES;
	assert_int_equal(pl->write(state, &prof), 0);
	pl->close(state);
	assert_int_equal(fh.nr_errors, 0);
	if (mode & CASE_LATE_AND_LOST)
		assert_int_equal(fh.nr_warnings, 1);	/* the late sample */
	else if (ksym_addr)
		assert_int_equal(fh.nr_warnings, 0);
	assert_int_equal(fclose(out.file), 0);
}

/* Run @cmd; its stdout goes to *out (malloc'd), its stderr must be empty. */
static char *run_tool(const char *cmd)
{
	char full[2048], outp[128], errp[128];
	char *out, *err;
	size_t n;
	FILE *f;

	snprintf(outp, sizeof(outp), "%s/stdout", tmpdir);
	snprintf(errp, sizeof(errp), "%s/stderr", tmpdir);
	snprintf(full, sizeof(full), "cd %s && %s >%s 2>%s", tmpdir, cmd, outp, errp);
	assert_int_equal(system(full), 0);

	err = calloc(1, 65536);
	f = fopen(errp, "re");
	assert_non_null(f);
	n = fread(err, 1, 65535, f);
	fclose(f);
	if (n)
		fprintf(stderr, "'%s' wrote on stderr:\n%s\n", cmd, err);
	assert_int_equal(n, 0);
	free(err);

	out = calloc(1, 1 << 20);
	f = fopen(outp, "re");
	assert_non_null(f);
	n = fread(out, 1, (1 << 20) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static void check_perf_script(const char *data, int mode)
{
	char cmd[512], ids[64], worker_ids[64], *out, *line, *save = NULL;
	int worker = 0;
	double last = -1.0;
	int headers = 0, fn = 0, qs = 0, kern = 0, caller = 0;

	snprintf(cmd, sizeof(cmd), "perf script -i %s -F comm,pid,tid,cpu,time,ip,sym,dso", data);
	out = run_tool(cmd);
	snprintf(ids, sizeof(ids), " %d/%d ", getpid(), (int)gettid());
	snprintf(worker_ids, sizeof(worker_ids), " %d/%u ", getpid(), WORKER_TID);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] != ' ' && line[0] != '\t') {
			/* "comm pid/tid [cpu] secs.usecs:" */
			char *colon = strrchr(line, ':'), *dot, *cpu;
			double ts;

			headers++;
			if ((mode & CASE_THREADS) && strstr(line, worker_ids)) {
				assert_true(!strncmp(line, "worker ", 7));
				worker++;
			} else {
				assert_true(!strncmp(line, self_comm, strlen(self_comm)));
				assert_non_null(strstr(line, ids));
			}
			cpu = strchr(line, '[');
			assert_non_null(cpu);
			assert_true(!strncmp(cpu, "[000]", 5) || !strncmp(cpu, "[001]", 5));
			assert_non_null(colon);
			*colon = '\0';
			dot = strrchr(line, ' ');
			assert_non_null(dot);
			ts = strtod(dot + 1, NULL);
			assert_true(ts >= last);
			last = ts;
			continue;
		}
		if (strstr(line, " noinline_fn ") && strstr(line, base_name(exe_path)))
			fn++;
		if (strstr(line, " noinline_caller ") && strstr(line, base_name(exe_path)))
			caller++;
		if (strstr(line, "qsort") && strstr(line, "libc"))
			qs++;
		if (ksym_addr && strstr(line, ksym_name) && strstr(line, "[kernel.kallsyms]"))
			kern++;
	}
	assert_int_equal(headers, NR_SAMPLES);
	assert_int_equal(worker, mode & CASE_THREADS ? NR_SAMPLES / 2 : 0);
	assert_int_equal(fn, 70);		/* leaf of user and kernel samples */
	assert_int_equal(qs, 30);
	assert_int_equal(caller, NR_SAMPLES);
	if (ksym_addr)
		assert_int_equal(kern, 20);
	free(out);
}

/* Self share of @sym in "perf report --sort sym" output, -1 if absent. */
static double report_share(const char *out, const char *sym)
{
	const char *p = out;

	while ((p = strstr(p, sym))) {
		const char *bol = p, *eol = strchr(p, '\n');
		size_t symlen = strlen(sym);

		while (bol > out && bol[-1] != '\n')
			bol--;
		if (*bol != '#' && (!eol || (size_t)(eol - p) == symlen ||
				    p[symlen] == ' ' || p[symlen] == '\n'))
			return strtod(bol, NULL);
		p += symlen;
	}
	return -1.0;
}

static void check_perf_report(const char *data, int mode)
{
	char cmd[512], *out;

	snprintf(cmd, sizeof(cmd), "perf report -i %s --stdio --no-children --sort sym", data);
	out = run_tool(cmd);
	if (mode & CASE_LATE_AND_LOST)
		assert_non_null(strstr(out, "# Total Lost Samples: 3\n"));
	else
		assert_non_null(strstr(out, "# Total Lost Samples: 0\n"));
	assert_true(report_share(out, "[.] noinline_fn") > 49.5);
	assert_true(report_share(out, "[.] noinline_fn") < 50.5);
	assert_true(report_share(out, "[.] qsort") > 29.5);
	assert_true(report_share(out, "[.] qsort") < 30.5);
	if (ksym_addr) {
		char k[sizeof(ksym_name) + 8];

		snprintf(k, sizeof(k), "[k] %s", ksym_name);
		assert_true(report_share(out, k) > 19.5);
		assert_true(report_share(out, k) < 20.5);
	}
	free(out);
}

static void check_header_and_buildids(const char *data)
{
	char cmd[1024], expect[600], bid_hex[64] = "", *out, *p;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "perf report -i %s --header-only", data);
	out = run_tool(cmd);
	snprintf(expect, sizeof(expect), "# hostname : %s\n", hostname);
	assert_non_null(strstr(out, expect));
	snprintf(expect, sizeof(expect), "# os release : %s\n", os_release);
	assert_non_null(strstr(out, expect));
	snprintf(expect, sizeof(expect), "# arch : %s\n", arch);
	assert_non_null(strstr(out, expect));
	snprintf(expect, sizeof(expect), "# nrcpus online : %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	assert_non_null(strstr(out, expect));
	assert_non_null(strstr(out, "# cmdline : bpfprof --format perf -F 499 -o perf.data -p self"));
	assert_non_null(strstr(out, "# event : name = cpu-clock"));
	assert_non_null(strstr(out, "# perf version : bpfprof 0.1.0"));
	free(out);

	/* this binary's build-id, as readelf sees it */
	snprintf(cmd, sizeof(cmd), "readelf -n %s", exe_path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(expect, sizeof(expect), f))
		if ((p = strstr(expect, "Build ID: ")))
			sscanf(p + 10, "%63s", bid_hex);
	pclose(f);
	assert_true(strlen(bid_hex) == 40);

	snprintf(cmd, sizeof(cmd), "perf buildid-list -i %s", data);
	out = run_tool(cmd);
	snprintf(expect, sizeof(expect), "%s %s\n", bid_hex, exe_path);
	assert_non_null(strstr(out, expect));
	assert_non_null(strstr(out, "libc.so"));
	free(out);
}

static void run_case(int mode, const char *name)
{
	char data[128];

	if (!tmpdir[0])
		skip();
	snprintf(data, sizeof(data), "%s/%s.data", tmpdir, name);
	write_profile(data, mode);
	check_perf_script(data, mode);
	check_perf_report(data, mode);
	check_header_and_buildids(data);
}

static void test_stream_with_task_events(void **unused)
{
	run_case(CASE_TASK_EVENTS, "stream");
}

static void test_samples_only_stream(void **unused)
{
	run_case(0, "samples-only");
}

/* A record later than perf's reordering window must not make perf
 * report "out of order events"; lost samples show up in perf report. */
static void test_late_sample_and_lost(void **unused)
{
	run_case(CASE_TASK_EVENTS | CASE_LATE_AND_LOST, "late-lost");
}

/* A second thread announced by FORK and COMM, ended by EXIT. */
static void test_thread_fork_comm_exit(void **unused)
{
	run_case(CASE_TASK_EVENTS | CASE_THREADS, "threads");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_with_task_events),
		cmocka_unit_test(test_samples_only_stream),
		cmocka_unit_test(test_late_sample_and_lost),
		cmocka_unit_test(test_thread_fork_comm_exit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
