// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_e2e.c - end-to-end test of the hpctoolkit output plugin: the fake
 * host (tests/unit/lib/fake_host.h; symbolize() knows a handful of
 * functions with lines, a stripped region and kernel addresses; stack()
 * serves hand-built stacks) drives the plugin through open/event/write/
 * close with a two-process, four-thread profile and its SAMPLE stream;
 * the database written to a temporary directory must pass `hpcdb
 * --strict` (tests/tools/hpcdb.c, built next to the tests in
 * BUILD/tools/hpcdb) with the expected top functions, per-thread shares
 * and trace sample counts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpfprof/plugin.h"
#include "fake_host.h"

/* --- fake host ------------------------------------------------------------ */

struct fake_fn {
	const char *name;
	const char *module;
	uint64_t start, end;		/* runtime addresses */
	uint64_t load;			/* runtime address of module offset 0 */
	const char *file;		/* NULL: no DWARF */
};

#define KBASE 0xffffffff81000000ull

static const struct fake_fn fns[] = {
	{ "main", "/opt/app/shares", 0x401000, 0x401100, 0x400000, "shares.c" },
	{ "run_thread", "/opt/app/shares", 0x401100, 0x401200, 0x400000, "shares.c" },
	{ "busy_loop", "/opt/app/shares", 0x401200, 0x401300, 0x400000, "shares.c" },
	{ "phase_a", "/opt/app/shares", 0x401300, 0x401400, 0x400000, "shares.c" },
	{ "leaf_a", "/opt/app/shares", 0x401400, 0x401500, 0x400000, "shares.c" },
	{ "phase_b", "/opt/app/shares", 0x401500, 0x401600, 0x400000, "shares.c" },
	{ "leaf_b", "/opt/app/shares", 0x401600, 0x401700, 0x400000, "shares.c" },
	{ "leaf_c", "/opt/app/shares", 0x401700, 0x401800, 0x400000, "shares.c" },
	{ "thread_main", "/opt/app/shares", 0x401800, 0x401900, 0x400000, "shares.c" },
	{ "start_thread", "/lib/libc.so.6", 0x7f0000001000, 0x7f0000001100, 0x7f0000000000, NULL },
	{ NULL, "/lib/libstripped.so", 0x7f1000000000, 0x7f1000100000, 0x7f1000000000, NULL },
	{ "do_syscall_64", "[kernel.kallsyms]", KBASE + 0x100, KBASE + 0x200, 0, NULL },
	{ "entry_SYSCALL_64", "[kernel.kallsyms]", KBASE + 0x200, KBASE + 0x300, 0, NULL },
	{ NULL, "", 0x7f2000000000, 0x7f2000010000, 0x7f2000000000, NULL }, /* anonymous */
};

/* ip of function @f, @k bytes in */
#define IP(f, k) (fns[f].start + (k))
enum { F_MAIN, F_RUN, F_BUSY, F_PA, F_LA, F_PB, F_LB, F_LC, F_TMAIN, F_START, F_STRIP,
       F_SYS, F_ENTRY, F_ANON };

/* The function of fns[] that holds @ip, its line 100 * (index + 1) plus
 * one per 16 bytes in; -ENOENT outside them. */
static int fns_symbolize(struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
			 struct bpfprof_symbol *sym)
{
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		const struct fake_fn *f = &fns[i];

		if (ip < f->start || ip >= f->end || kernel != (f->start >= KBASE))
			continue;
		sym->module = f->module;
		sym->module_offset = ip - f->load;
		sym->function = f->name;
		sym->function_start = f->name ? f->start - f->load : 0;
		if (f->file) {
			sym->file = f->file;
			sym->line = 100 * (i + 1) + (ip - f->start) / 16;
		}
		return 0;
	}
	return -ENOENT;
}

/* --- the profile ----------------------------------------------------------- */

/* user stacks, leaf first (callers are return addresses) */
static const uint64_t st_a[] = { IP(F_LA, 0x10), IP(F_PA, 0x21), IP(F_BUSY, 0x31),
				 IP(F_RUN, 0x41), IP(F_MAIN, 0x51) };
static const uint64_t st_b[] = { IP(F_LB, 0x10), IP(F_PB, 0x21), IP(F_BUSY, 0x61),
				 IP(F_RUN, 0x41), IP(F_MAIN, 0x51) };
static const uint64_t st_c[] = { IP(F_LC, 0x30), IP(F_BUSY, 0x91), IP(F_RUN, 0x41),
				 IP(F_MAIN, 0x51) };
static const uint64_t st_ta[] = { IP(F_LA, 0x10), IP(F_PA, 0x21), IP(F_BUSY, 0x31),
				  IP(F_RUN, 0x41), IP(F_TMAIN, 0x11), IP(F_START, 0x81) };
static const uint64_t st_tb[] = { IP(F_LB, 0x10), IP(F_PB, 0x21), IP(F_BUSY, 0x61),
				  IP(F_RUN, 0x41), IP(F_TMAIN, 0x11), IP(F_START, 0x81) };
static const uint64_t st_tc[] = { IP(F_LC, 0x30), IP(F_BUSY, 0x91), IP(F_RUN, 0x41),
				  IP(F_TMAIN, 0x11), IP(F_START, 0x81) };
static const uint64_t st_k[] = { IP(F_SYS, 0x10), IP(F_ENTRY, 0x21) };
static const uint64_t st_strip[] = { IP(F_STRIP, 0x1234), IP(F_BUSY, 0x31), IP(F_RUN, 0x41),
				     IP(F_MAIN, 0x51) };

static const uint64_t st_anon[] = { IP(F_ANON, 0x4321), IP(F_BUSY, 0x31), IP(F_RUN, 0x41),
				    IP(F_MAIN, 0x51) };

#define ST(a, k) { a, sizeof(a) / sizeof(a[0]), k }
static const struct bpfprof_stack stacks[] = {
	{ NULL, 0, 0 }, ST(st_a, 0), ST(st_b, 0), ST(st_c, 0), ST(st_ta, 0), ST(st_tb, 0),
	ST(st_tc, 0), ST(st_k, 1), ST(st_strip, 0), ST(st_anon, 0),
};

static const struct bpfprof_thread threads[] = {
	{ 100, 100, 0, "shares", 100 },
	{ 101, 100, 0, "shares-w1", 100 },
	{ 102, 100, 0, "shares-w2", 10 },
	{ 200, 200, 1, "other", 7 },
};

static const struct bpfprof_process processes[] = {
	{ 100, 1, "shares", "/opt/app/shares", "/opt/app/shares -t 3", NULL, 0, 0, 3, 210, 0 },
	{ 200, 1, "other", "/opt/app/shares", "/opt/app/shares", NULL, 0, 3, 1, 7, 0 },
};

static const struct bpfprof_count counts[] = {
	{ 0, 1, 0, 50 }, { 0, 2, 0, 30 }, { 0, 3, 0, 20 },	/* 50/30/20 */
	{ 1, 4, 0, 10 }, { 1, 5, 0, 30 }, { 1, 6, 0, 60 },	/* 10/30/60 */
	{ 2, 4, 0, 5 }, { 2, 4, 7, 5 },			/* leaf_a / kernel */
	{ 3, 8, 0, 7 },					/* stripped */
};

/* A parallel job as `bpfprof merge` hands it over (thread_ids, ABI 0.2):
 * node-a runs ranks 0 (two threads) and 1 and a child of rank 1 that
 * inherited its rank; node-b runs ranks 2 and 3 and a helper without a
 * rank; rank 2's pid equals rank 0's on its node, so the merge renumbered
 * it in threads[] (65636) while thread_ids keep the node's pid. */
static const struct bpfprof_thread job_threads[] = {
	{ 100, 100, 0, "rank0", 40 }, { 104, 100, 0, "rank0-omp", 20 },
	{ 101, 101, 1, "rank1", 40 }, { 65636, 65636, 2, "rank2", 25 },
	{ 102, 102, 3, "rank3", 15 }, { 103, 103, 4, "helper", 5 },
	{ 105, 105, 5, "rank1-child", 3 },
};

static const struct bpfprof_process job_processes[] = {
	{ 100, 1, "rank0", "/opt/app/shares", "/opt/app/shares", NULL, 0, 0, 2, 60, 0 },
	{ 101, 1, "rank1", "/opt/app/shares", "/opt/app/shares", NULL, 0, 2, 1, 40, 0 },
	{ 65636, 1, "rank2", "/opt/app/shares", "/opt/app/shares", NULL, 0, 3, 1, 25, 0 },
	{ 102, 1, "rank3", "/opt/app/shares", "/opt/app/shares", NULL, 0, 4, 1, 15, 0 },
	{ 103, 1, "helper", "/opt/app/shares", "/opt/app/shares", NULL, 0, 5, 1, 5, 0 },
	{ 105, 101, "rank1-child", "/opt/app/shares", "/opt/app/shares", NULL, 0, 6, 1, 3, 0 },
};

static const struct bpfprof_thread_identity job_ids[] = {
	{ "node-a", 0, 0xa0a0, 0, 0, 100, 100 }, { "node-a", 0, 0xa0a0, 0, 1, 100, 104 },
	{ "node-a", 0, 0xa0a0, 1, 0, 101, 101 }, { "node-b", 1, 0xb0b0, 2, 0, 100, 100 },
	{ "node-b", 1, 0xb0b0, 3, 0, 102, 102 }, { "node-b", 1, 0xb0b0, -1, 0, 103, 103 },
	{ "node-a", 0, 0xa0a0, 1, 0, 105, 105 },
};

static const struct bpfprof_count job_counts[] = {
	{ 0, 1, 0, 40 }, { 1, 5, 0, 20 }, { 2, 3, 0, 30 }, { 2, 3, 7, 10 },
	{ 3, 2, 0, 25 }, { 4, 9, 0, 15 }, { 5, 8, 0, 5 }, { 6, 1, 0, 3 },
};

#define N(a) (sizeof(a) / sizeof(a[0]))
static const struct bpfprof_profile job = {
	.processes = job_processes, .nr_processes = N(job_processes),
	.threads = job_threads, .nr_threads = N(job_threads),
	.counts = job_counts, .nr_counts = N(job_counts),
	.thread_ids = job_ids, .nr_nodes = 2,
};

static const struct bpfprof_profile two_processes = {
	.processes = processes, .nr_processes = N(processes),
	.threads = threads, .nr_threads = N(threads),
	.counts = counts, .nr_counts = N(counts),
};

#define PERIOD 10000000ull	/* 10 ms: 100 samples = 1 s */
#define START 5000000000ull
#define ANCHOR 1700000000000000000ull

static struct bpfprof_run run = {
	.event = "cpu-clock",
	.sample_freq = 100,
	.sample_period = PERIOD,
	.hostname = "testhost",
	.os_release = "6.1.0",
	.arch = "x86_64",
	.nr_cpus_online = 4,
	.target = "pid 100, pid 200",
	.max_stack_depth = 127,
};

static char tmpdir[PATH_MAX];
static char hpcdb[2 * PATH_MAX];

static void find_hpcdb(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *b = getenv("BPFPROF_BUILD");

	if (b) {
		snprintf(hpcdb, sizeof(hpcdb), "%s/tools/hpcdb", b);
		if (access(hpcdb, X_OK) == 0)
			return;
	}
	assert_true(n > 0);
	exe[n] = 0;
	/* BUILD/tests/unit/hpctoolkit/test_e2e -> BUILD/tools/hpcdb */
	for (int i = 0; i < 4; i++)
		*strrchr(exe, '/') = 0;
	snprintf(hpcdb, sizeof(hpcdb), "%s/tools/hpcdb", exe);
	if (access(hpcdb, X_OK))
		fail_msg("%s not built (make B=BUILD BUILD/tools/hpcdb)", hpcdb);
}

static void rm_rf(const char *path)
{
	char cmd[2 * PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* Drive the plugin with the processes, threads, counts and identities of
 * @tmpl, as a host of version @version; the output goes to tmpdir/db. */
static void write_profile(const struct bpfprof_profile *tmpl, const char *version,
			  int with_stream)
{
	const struct bpfprof_plugin *p = bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION);
	static struct fake_host fh;
	struct bpfprof_profile prof = { 0 };
	struct bpfprof_output out = { 0 };
	char db[PATH_MAX + 8];
	void *state = NULL;
	int err;

	assert_non_null(p);
	assert_string_equal(p->name, "hpctoolkit");
	assert_true(p->flags & BPFPROF_PLUGIN_STREAM);
	assert_true(p->flags & BPFPROF_PLUGIN_DIRECTORY);
	fake_host_init(&fh);
	fh.resolve = fns_symbolize;
	fake_host_stacks(&fh, stacks, sizeof(stacks) / sizeof(stacks[0]));

	snprintf(db, sizeof(db), "%s/db", tmpdir);
	rm_rf(db);
	assert_int_equal(mkdir(db, 0755), 0);
	out.dir_fd = open(db, O_RDONLY | O_DIRECTORY);
	assert_true(out.dir_fd >= 0);
	out.path = db;

	run.version = version;
	run.start_ns = START;
	run.realtime_anchor_ns = ANCHOR;
	err = p->open(&fh.host, &run, &out, &state);
	assert_int_equal(err, 0);

	/* the stream: each thread's samples one period apart, thread 1 with
	 * a pause of 1 s after 50 samples (the trace marks it with ctxId 0) */
	if (with_stream) {
		uint64_t t_next[8];

		assert_true(tmpl->nr_threads <= 8);
		for (int th = 0; th < 8; th++)
			t_next[th] = START + 1000 * (th + 1);
		for (size_t c = 0; c < tmpl->nr_counts; c++) {
			const struct bpfprof_count *cnt = &tmpl->counts[c];

			for (uint64_t k = 0; k < cnt->samples; k++) {
				uint32_t th = cnt->thread;
				struct bpfprof_event ev = { 0 };

				ev.type = BPFPROF_EVENT_SAMPLE;
				ev.cpu = th;
				ev.pid = tmpl->threads[th].pid;
				ev.tid = tmpl->threads[th].tid;
				ev.time_ns = t_next[th];
				ev.sample.user_stack = cnt->user_stack;
				ev.sample.kernel_stack = cnt->kernel_stack;
				ev.sample.period = PERIOD;
				t_next[th] += PERIOD;
				if (th == 1 && t_next[th] == START + 2000 + 50 * PERIOD)
					t_next[th] += 1000000000ull;
				assert_int_equal(p->event(state, &ev), 0);
			}
		}
		if (with_stream == 2) {
			/* a streamed stack pair the counts lack (e.g. counted
			 * under a dropped count): it still gets a context */
			struct bpfprof_event ev = { 0 };

			ev.type = BPFPROF_EVENT_SAMPLE;
			ev.pid = ev.tid = 100;
			ev.time_ns = t_next[0];
			ev.sample.user_stack = 3;
			ev.sample.kernel_stack = 7;
			ev.sample.period = PERIOD;
			assert_int_equal(p->event(state, &ev), 0);
			/* and a sample of a thread the profile does not have */
			ev.pid = ev.tid = 999;
			assert_int_equal(p->event(state, &ev), 0);
		}
		/* a COMM record is ignored */
		struct bpfprof_event ev = { .type = BPFPROF_EVENT_COMM, .time_ns = START + 5,
					    .pid = 100, .tid = 100 };
		ev.comm = "shares";
		assert_int_equal(p->event(state, &ev), 0);
	}
	run.end_ns = START + 3000000000ull;
	run.samples_seen = run.samples_kept = 217;
	prof = *tmpl;
	prof.run = &run;
	prof.stacks = stacks;
	prof.nr_stacks = sizeof(stacks) / sizeof(stacks[0]);
	err = p->write(state, &prof);
	if (err)
		fail_msg("write: %s", fh.error);
	p->close(state);
	close(out.dir_fd);
	assert_int_equal(fh.nr_errors, 0);
}

/* The two-process, four-thread profile from a 0.1 host (no thread_ids). */
static void write_database(int with_stream)
{
	write_profile(&two_processes, "0.1.0-test", with_stream);
}

/* Run hpcdb with @args on tmpdir/db; returns its stdout (malloc'ed). */
static char *run_hpcdb(const char *args, int *status)
{
	char cmd[4 * PATH_MAX], *buf = NULL;
	size_t len = 0, n;
	char chunk[4096];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' %s '%s/db' 2>&1", hpcdb, args, tmpdir);
	f = popen(cmd, "r");
	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf = realloc(buf, len + n + 1);
		assert_non_null(buf);
		memcpy(buf + len, chunk, n);
		len += n;
	}
	if (!buf)
		buf = calloc(1, 1);
	buf[len] = 0;
	*status = pclose(f);
	return buf;
}

/* excl% of @fn in the block starting at @block ("top functions (summary)"). */
static double share(const char *out, const char *block, const char *fn)
{
	const char *b = strstr(out, block), *l;
	char pat[128];

	if (!b)
		fail_msg("no '%s' in:\n%s", block, out);
	snprintf(pat, sizeof(pat), "  %s\n", fn);
	l = strstr(b, pat);
	if (!l)
		return 0;
	while (l > b && l[-1] != '\n')
		l--;
	return strtod(l, NULL);
}

static int setup(void **st)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bpfprof-hpc-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	find_hpcdb();
	return 0;
}

static int teardown(void **st)
{
	if (!getenv("BPFPROF_KEEP_TMP"))
		rm_rf(tmpdir);	/* keep it to inspect a failure */
	return 0;
}

static void test_database_passes_strict_reader(void **st)
{
	int status;
	char *out;

	write_database(1);
	out = run_hpcdb("--strict --threads --top 20", &status);
	if (status != 0)
		fail_msg("hpcdb --strict failed:\n%s", out);
	/* totals: 100 + 100 + 10 + 7 samples of 10 ms */
	assert_non_null(strstr(out, "top functions (summary): total 2.170000"));
	assert_non_null(strstr(out, "top functions (sum over threads): total 2.170000"));
	/* leaf_a: 50 + 10 + 5 of 217 samples */
	assert_float_equal(share(out, "(summary)", "leaf_a"), 100.0 * 65 / 217, 0.006);
	assert_float_equal(share(out, "(summary)", "leaf_b"), 100.0 * 60 / 217, 0.006);
	assert_float_equal(share(out, "(summary)", "leaf_c"), 100.0 * 80 / 217, 0.006);
	assert_float_equal(share(out, "(summary)", "do_syscall_64"), 100.0 * 5 / 217, 0.006);
	assert_float_equal(share(out, "(summary)", "libstripped.so@0x1234"), 100.0 * 7 / 217,
			   0.006);
	assert_float_equal(share(out, "(sum over threads)", "leaf_a"), 100.0 * 65 / 217, 0.006);
	/* one profile per thread with its own shares and trace samples */
	assert_non_null(strstr(out, "RANK 0 (100) THREAD 0 (100)]: total 1.000000, trace samples 100\n"
				    "      50.00   50.00  leaf_a\n      30.00   30.00  leaf_b\n"
				    "      20.00   20.00  leaf_c\n"));
	assert_non_null(strstr(out, "RANK 0 (100) THREAD 1 (101)]: total 1.000000, trace samples 100\n"
				    "      60.00   60.00  leaf_c\n      30.00   30.00  leaf_b\n"
				    "      10.00   10.00  leaf_a\n"));
	assert_non_null(strstr(out, "RANK 0 (100) THREAD 2 (102)]: total 0.100000, trace samples 10\n"
				    "      50.00   50.00  do_syscall_64\n"
				    "      50.00  100.00  leaf_a\n"));
	assert_non_null(strstr(out, "RANK 1 (200) THREAD 0 (200)]: total 0.070000, trace samples 7\n"
				    "     100.00  100.00  libstripped.so@0x1234\n"));
	/* inclusive main: all of thread 0 and the stripped process */
	assert_non_null(strstr(out, "1.070000  main\n"));
	assert_non_null(strstr(out, "title: /opt/app/shares -t 3 (and 1 more processes)\n"));
	/* trace: 217 samples from ANCHOR + 1000 ns on, one gap marker */
	assert_non_null(strstr(out, "trace: 4 lines, 217 samples, 1700000000000001000 .. "));
	free(out);
}

static void test_files_and_yaml(void **st)
{
	const char *files[] = { "meta.db", "profile.db", "cct.db", "trace.db",
				"metrics/default.yaml" };
	char path[PATH_MAX + 64];
	struct stat sb;
	DIR *d;
	struct dirent *de;
	int n = 0;

	write_database(1);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/db/%s", tmpdir, files[i]);
		assert_int_equal(stat(path, &sb), 0);
		assert_true(sb.st_size > 0);
	}
	/* nothing else is left behind (the spools are unlinked) */
	snprintf(path, sizeof(path), "%s/db", tmpdir);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")))
			n++;
	closedir(d);
	assert_int_equal(n, 5);	/* four .db files and metrics/ */
}

static void test_without_stream_no_trace(void **st)
{
	char path[PATH_MAX + 64];
	int status;
	char *out;

	write_database(0);
	snprintf(path, sizeof(path), "%s/db/trace.db", tmpdir);
	assert_int_not_equal(access(path, F_OK), 0);
	out = run_hpcdb("--strict", &status);
	if (status != 0)
		fail_msg("hpcdb --strict failed:\n%s", out);
	assert_non_null(strstr(out, "top functions (summary): total 2.170000"));
	free(out);
}

static void test_stream_only_stack(void **st)
{
	int status;
	char *out;

	write_database(2);
	out = run_hpcdb("--strict --threads", &status);
	if (status != 0)
		fail_msg("hpcdb --strict failed:\n%s", out);
	/* the trace has one sample more than the profile, on a listed context */
	assert_non_null(strstr(out, "RANK 0 (100) THREAD 0 (100)]: total 1.000000, trace samples 101\n"));
	assert_non_null(strstr(out, "trace: 4 lines, 218 samples"));
	free(out);
}

/* Run hpcdb with @args; fail with its output unless it accepts the database. */
static char *accepted(const char *args)
{
	int status;
	char *out = run_hpcdb(args, &status);

	if (status != 0)
		fail_msg("hpcdb %s failed:\n%s", args, out);
	return out;
}

static void expect_line(const char *out, const char *line)
{
	if (!strstr(out, line))
		fail_msg("no '%s' in:\n%s", line, out);
}

/* hpcviewer's flat view: a load module's exclusive time never exceeds its
 * inclusive time; kernel frames (no lines) were function -> instruction
 * contexts, which counted the kernel's time twice there. */
static void test_flat_view_modules(void **st)
{
	char *out;

	write_database(1);
	out = accepted("--strict --modules");
	expect_line(out, "module     0.050000     0.050000 [kernel.kallsyms]\n");
	expect_line(out, "module     0.070000     0.070000 /lib/libstripped.so\n");
	expect_line(out, "module     0.000000     1.100000 /lib/libc.so.6\n");
	expect_line(out, "module     2.050000     2.170000 /opt/app/shares\n");
	free(out);
}

/* A job over two nodes: NODE / RANK / THREAD tuples with the logical ids
 * (node index, MPI rank, thread index) and physical ids (host id, pid,
 * tid); processes without a rank of their own get ranks above the real
 * ones; anonymous code is the module "[anon]"; one trace line per
 * (rank, thread) profile. */
static void test_job_identity(void **st)
{
	static const char *const want[] = {
		"profile 1 [NODE 0 (0xa0a0) RANK 0 (100) THREAD 0 (100)]: total 0.400000, trace samples 40\n",
		"profile 2 [NODE 0 (0xa0a0) RANK 0 (100) THREAD 1 (104)]: total 0.200000, trace samples 20\n",
		"profile 3 [NODE 0 (0xa0a0) RANK 1 (101) THREAD 0 (101)]: total 0.400000, trace samples 40\n",
		"profile 4 [NODE 1 (0xb0b0) RANK 2 (100) THREAD 0 (100)]: total 0.250000, trace samples 25\n",
		"profile 5 [NODE 1 (0xb0b0) RANK 3 (102) THREAD 0 (102)]: total 0.150000, trace samples 15\n",
		"profile 6 [NODE 1 (0xb0b0) RANK 4 (103) THREAD 0 (103)]: total 0.050000, trace samples 5\n",
		"profile 7 [NODE 0 (0xa0a0) RANK 5 (105) THREAD 0 (105)]: total 0.030000, trace samples 3\n",
	};
	char *out;

	write_profile(&job, "0.2.0-test", 1);
	out = accepted("--strict --threads --modules --description");
	for (size_t i = 0; i < N(want); i++)
		expect_line(out, want[i]);
	expect_line(out, "trace: 7 lines, 148 samples");
	expect_line(out, "module     0.150000     0.150000 [anon]\n");
	expect_line(out, "module     0.100000     0.100000 [kernel.kallsyms]\n");
	expect_line(out, "| 4 | NODE 1 (node-b, 0xb0b0) RANK 2 (100) THREAD 0 (100) | 100 | 100 | rank2 |\n");
	expect_line(out, "| 7 | NODE 0 (node-a, 0xa0a0) RANK 5 (105) THREAD 0 (105) | 105 | 105 | rank1-child |\n");
	free(out);
}

/* One process without a rank: NODE / THREAD, as hpcrun's non-MPI tuples. */
static void test_identity_without_rank(void **st)
{
	static const struct bpfprof_thread_identity ids[] = {
		{ "solo", 0, 0x1234, -1, 0, 100, 100 }, { "solo", 0, 0x1234, -1, 1, 100, 104 },
	};
	struct bpfprof_profile one = job;
	char *out;

	one.nr_processes = 1;
	one.nr_threads = 2;
	one.nr_counts = 2;
	one.thread_ids = ids;
	one.nr_nodes = 1;
	write_profile(&one, "0.2.0-test", 1);
	out = accepted("--strict --threads");
	expect_line(out, "profile 1 [NODE 0 (0x1234) THREAD 0 (100)]: total 0.400000");
	expect_line(out, "profile 2 [NODE 0 (0x1234) THREAD 1 (104)]: total 0.200000");
	free(out);
}

/* A host older than 0.2 does not hand over thread_ids (the field may be
 * past the end of its struct): one node, processes as ranks, the pids and
 * tids of threads[]. */
static void test_identity_old_host(void **st)
{
	char *out;

	write_profile(&job, "0.1.9", 0);
	out = accepted("--strict --threads");
	expect_line(out, " RANK 2 (65636) THREAD 0 (65636)]: total 0.250000\n");
	expect_line(out, " RANK 0 (100) THREAD 1 (104)]: total 0.200000\n");
	if (strstr(out, "NODE 1"))
		fail_msg("an old host's profile has two nodes:\n%s", out);
	free(out);
}

/* Overwrite the u32 at @off of tmpdir/db/@file. */
static void patch_u32(const char *file, uint64_t off, uint32_t v)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/db/%s", tmpdir, file);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &v, 4, off), 4);	/* little-endian host */
	close(fd);
}

/* Offset of id @k of profile @prof's identifier tuple in profile.db. */
static uint64_t tuple_id(uint32_t prof, int k)
{
	char path[PATH_MAX + 64];
	uint64_t pp, pt;
	int fd;

	snprintf(path, sizeof(path), "%s/db/profile.db", tmpdir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &pp, 8, 0x30), 8);		/* pProfiles */
	assert_int_equal(pread(fd, &pt, 8, pp + 0x30 * prof + 0x20), 8);
	close(fd);
	return pt + 8 + 16 * k;
}

/* The strict reader checks the tuples: a duplicate, a rank on two nodes. */
static void test_reader_rejects_bad_tuples(void **st)
{
	int status;
	char *out;

	write_profile(&job, "0.2.0-test", 0);
	patch_u32("profile.db", tuple_id(2, 2) + 4, 0);		/* THREAD 1 -> 0 */
	out = run_hpcdb("--strict", &status);
	assert_int_not_equal(status, 0);
	expect_line(out, "profiles 1 and 2 have the same tuple [NODE 0 (0xa0a0) RANK 0 (100) THREAD");
	free(out);
	out = run_hpcdb("", &status);	/* hpcprof's own tuples may repeat */
	assert_int_equal(status, 0);
	free(out);

	write_profile(&job, "0.2.0-test", 0);
	patch_u32("profile.db", tuple_id(4, 1) + 4, 1);		/* RANK 2 -> 1 */
	out = run_hpcdb("--strict", &status);
	assert_int_not_equal(status, 0);
	expect_line(out, "RANK 1 on NODE 0 (profile 3) and NODE 1 (profile 4)");
	free(out);
}

static void test_reader_rejects_corruption(void **st)
{
	char path[PATH_MAX + 64];
	int status, fd;
	char *out;
	uint8_t b;

	write_database(1);
	/* flip the trace.db footer */
	snprintf(path, sizeof(path), "%s/db/trace.db", tmpdir);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	b = 'X';
	assert_int_equal(pwrite(fd, &b, 1, lseek(fd, 0, SEEK_END) - 1), 1);
	close(fd);
	out = run_hpcdb("--strict", &status);
	assert_int_not_equal(status, 0);
	assert_non_null(strstr(out, "footer"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_database_passes_strict_reader),
		cmocka_unit_test(test_files_and_yaml),
		cmocka_unit_test(test_without_stream_no_trace),
		cmocka_unit_test(test_stream_only_stack),
		cmocka_unit_test(test_flat_view_modules),
		cmocka_unit_test(test_job_identity),
		cmocka_unit_test(test_identity_without_rank),
		cmocka_unit_test(test_identity_old_host),
		cmocka_unit_test(test_reader_rejects_bad_tuples),
		cmocka_unit_test(test_reader_rejects_corruption),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
