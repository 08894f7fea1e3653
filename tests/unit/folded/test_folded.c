// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_folded.c - unit tests of the folded output plugin (plugins/folded/)
 * and of the page data of the flamegraph plugin (plugins/flamegraph/,
 * which folds with the same plugins/common/fold.c), driven through the
 * plugin ABI with hand-built profiles and the fake host
 * (tests/unit/lib/fake_host.h) whose symbolize() answers from a table of
 * exact (pid, address) pairs, so a caller frame
 * only gets its name when it is looked up at its return address - 1.
 *
 * Exact lines and counts: threads and processes sharing a stack merge;
 * kernel frames below the user frames with _[k]; ';' and line breaks in
 * names; module and unknown frames; comm fallbacks; lines of the same
 * text from different stacks; byte order where names are prefixes of one
 * another; errors; "rank N" roots of threads with an MPI rank, none
 * without.  Randomized tests compare the plugin with a plain
 * text-folding reference (the previous implementation's method) on
 * profiles with many prefix-related names, with and without ranks.  The flamegraph tests dlopen()
 * BUILD/plugins/flamegraph.so (found beside this test in the build tree;
 * skipped when missing) and check the JSON names and stacks exactly.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpfprof/plugin.h"
#include "fake_host.h"

/* --- building profiles ------------------------------------------------------ */

#define MAX_PROCS 4
#define MAX_THREADS 8
#define MAX_STACKS 512
#define MAX_COUNTS 1024
#define MAX_FRAMES 16

/* A profile and the host the plugin gets with it. */
struct test_profile {
	struct fake_host fh;
	struct bpfprof_run run;
	struct bpfprof_process procs[MAX_PROCS];
	struct bpfprof_thread threads[MAX_THREADS];
	struct bpfprof_stack stacks[MAX_STACKS];
	uint64_t ips[MAX_STACKS][MAX_FRAMES];
	struct bpfprof_count counts[MAX_COUNTS];
	struct bpfprof_thread_identity ids[MAX_THREADS];
	struct bpfprof_profile prof;
};

/* @nr_procs processes "procN" (pid 100, 200, ...), each with two threads
 * "tN"; the host knows no symbols yet. */
static struct test_profile *tp_new(uint32_t nr_procs)
{
	struct test_profile *tp = calloc(1, sizeof(*tp));
	static const char *const comms[] = { "proc0", "proc1", "proc2", "proc3" };
	static const char *const tcomms[] = { "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7" };

	assert_non_null(tp);
	assert_true(nr_procs <= MAX_PROCS);
	fake_host_init(&tp->fh);
	tp->run.version = "test";
	tp->run.event = "cpu-clock";
	tp->run.sample_period = 10000000;
	tp->run.target = "test <target>";
	for (uint32_t p = 0; p < nr_procs; p++) {
		tp->procs[p] = (struct bpfprof_process){ .pid = 100 * (p + 1), .comm = comms[p],
			.exe = "/usr/bin/prog", .cmdline = "prog", .first_thread = 2 * p,
			.nr_threads = 2 };
		for (uint32_t t = 2 * p; t < 2 * p + 2; t++)
			tp->threads[t] = (struct bpfprof_thread){ .tid = 100 * (p + 1) + t,
				.pid = 100 * (p + 1), .process = p, .comm = tcomms[t] };
	}
	tp->prof.run = &tp->run;
	tp->prof.processes = tp->procs;
	tp->prof.nr_processes = nr_procs;
	tp->prof.threads = tp->threads;
	tp->prof.nr_threads = 2 * nr_procs;
	tp->prof.stacks = tp->stacks;
	tp->prof.nr_stacks = 1;		/* stacks[0]: the empty stack */
	tp->prof.counts = tp->counts;
	return tp;
}

/* tp_new() as the test's state, freed by tp_teardown() after the test. */
static struct test_profile *tp_test(void **state, uint32_t nr_procs)
{
	*state = tp_new(nr_procs);
	return *state;
}

static int tp_teardown(void **state)
{
	free(*state);
	return 0;
}

/* A stack of @nr addresses given root first (stored leaf first, as the ABI has them). */
static uint32_t tp_stack(struct test_profile *tp, int kernel, uint32_t nr,
			 const uint64_t *root_first)
{
	uint32_t i = (uint32_t)tp->prof.nr_stacks++;

	assert_true(i < MAX_STACKS && nr <= MAX_FRAMES);
	for (uint32_t j = 0; j < nr; j++)
		tp->ips[i][j] = root_first[nr - 1 - j];
	tp->stacks[i] = (struct bpfprof_stack){ .ips = tp->ips[i], .nr = nr, .kernel = kernel };
	return i;
}

#define STACK(tp, kernel, ...)                                                              \
	tp_stack(tp, kernel, sizeof((uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t),         \
		 (uint64_t[]){ __VA_ARGS__ })

static void tp_count(struct test_profile *tp, uint32_t thread, uint32_t ustack, uint32_t kstack,
		     uint64_t samples)
{
	assert_true(tp->prof.nr_counts < MAX_COUNTS);
	tp->counts[tp->prof.nr_counts++] = (struct bpfprof_count){
		.thread = thread, .user_stack = ustack, .kernel_stack = kstack,
		.samples = samples };
}

/* Give the threads of process @p (all of them: -1) MPI rank @rank
 * (-1: none), through thread_ids. */
static void tp_rank(struct test_profile *tp, int p, int32_t rank)
{
	for (size_t t = 0; t < tp->prof.nr_threads; t++) {
		if (!tp->prof.thread_ids)
			tp->ids[t] = (struct bpfprof_thread_identity){ .host = "node", .rank = -1,
				.host_pid = tp->threads[t].pid, .host_tid = tp->threads[t].tid };
		if (p < 0 || tp->threads[t].process == (uint32_t)p)
			tp->ids[t].rank = rank;
	}
	tp->prof.thread_ids = tp->ids;
	tp->prof.nr_nodes = 1;
}

/* --- running plugins -------------------------------------------------------- */

/* Run open/write/close of @p on @tp into memory: write()'s result, *@out the bytes. */
static int run_into(const struct bpfprof_plugin *p, struct test_profile *tp, char **out)
{
	FILE *f = tmpfile();
	struct bpfprof_output o = { .file = f, .dir_fd = -1, .path = "out.test" };
	void *state = NULL;
	long len;
	int err;

	assert_non_null(f);
	assert_int_equal(p->open(&tp->fh.host, &tp->run, &o, &state), 0);
	err = p->write(state, &tp->prof);
	p->close(state);
	assert_int_equal(fflush(f), 0);
	len = ftell(f);
	assert_true(len >= 0);
	*out = malloc(len + 1);
	assert_non_null(*out);
	rewind(f);
	assert_int_equal(fread(*out, 1, len, f), (size_t)len);
	(*out)[len] = '\0';
	fclose(f);
	return err;
}

static const struct bpfprof_plugin *folded(void)
{
	const struct bpfprof_plugin *p = bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION);

	assert_non_null(p);
	assert_string_equal(p->name, "folded");
	return p;
}

/* The folded output of @tp; no error expected. */
static char *fold_text(struct test_profile *tp)
{
	char *out;

	assert_int_equal(run_into(folded(), tp, &out), 0);
	assert_int_equal(tp->fh.nr_errors, 0);
	return out;
}

static void assert_folded(struct test_profile *tp, const char *expect)
{
	char *out = fold_text(tp);

	if (strcmp(out, expect))
		fail_msg("folded output:\n%s\nexpected:\n%s", out, expect);
	free(out);
}

/* write() of @p on a count of @tp to /dev/full fails: -ENOSPC, error @msg. */
static void assert_write_error(const struct bpfprof_plugin *p, struct test_profile *tp,
			       const char *msg)
{
	FILE *f = fopen("/dev/full", "w");
	struct bpfprof_output o = { .file = f, .dir_fd = -1, .path = "/dev/full" };
	void *state = NULL;

	if (!f)
		skip();
	tp_count(tp, 0, 0, 0, 1);
	assert_int_equal(p->open(&tp->fh.host, &tp->run, &o, &state), 0);
	assert_int_equal(p->write(state, &tp->prof), -ENOSPC);
	p->close(state);
	assert_string_equal(tp->fh.error, msg);
	fclose(f);
}

/*
 * main;read_file with entry_SYSCALL_64;vfs_read below it (3 samples, two
 * threads), without it (4), vfs_read alone (6) and no frames at all (7).
 */
static void kernel_profile(struct test_profile *tp)
{
	uint32_t u, k;

	fake_func(&tp->fh, 0x1000, "main");
	fake_func(&tp->fh, 0x2000, "read_file");
	fake_kfunc(&tp->fh, 0xffff1000, "entry_SYSCALL_64");
	fake_kfunc(&tp->fh, 0xffff2000, "vfs_read");
	u = STACK(tp, 0, 0x1000, 0x2000);
	k = STACK(tp, 1, 0xffff1000, 0xffff2000);
	tp_count(tp, 0, u, k, 2);
	tp_count(tp, 1, u, k, 1);
	tp_count(tp, 0, u, 0, 4);
	tp_count(tp, 0, 0, STACK(tp, 1, 0xffff2000), 6);	/* no user frames */
	tp_count(tp, 0, 0, 0, 7);				/* no frames at all */
}

/* --- folded: exact lines ---------------------------------------------------- */

static void test_entry_checks_abi(void **unused)
{
	assert_null(bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION + 1));
	assert_non_null(folded()->write);
}

static void test_threads_and_processes_merge(void **state)
{
	struct test_profile *tp = tp_test(state, 3);
	uint32_t s, t;

	fake_func(&tp->fh, 0x1000, "main");
	fake_func(&tp->fh, 0x2000, "work");
	fake_func(&tp->fh, 0x3000, "leaf");
	s = STACK(tp, 0, 0x1000, 0x2000, 0x3000);
	t = STACK(tp, 0, 0x1000, 0x2000);
	tp_count(tp, 0, s, 0, 3);		/* proc0 thread t0 */
	tp_count(tp, 1, s, 0, 4);		/* proc0 thread t1: same line */
	tp_count(tp, 1, t, 0, 1);
	tp_count(tp, 2, s, 0, 5);		/* proc1 */
	tp->procs[2].comm = "proc0";		/* proc2 (pid 300) has proc0's name */
	tp_count(tp, 4, s, 0, 10);
	assert_folded(tp,
		      "proc0;main;work 1\n"
		      "proc0;main;work;leaf 17\n"
		      "proc1;main;work;leaf 5\n");
}

/*
 * Threads with an MPI rank: their lines start with "rank N", those
 * without one keep their comm first; processes of the same rank and
 * comm merge; kernel-only and frameless counts get the root too.
 */
static void test_mpi_rank_roots(void **state)
{
	struct test_profile *tp = tp_test(state, 4);
	uint32_t s;

	fake_func(&tp->fh, 0x1000, "main");
	fake_func(&tp->fh, 0x2000, "work");
	fake_func(&tp->fh, 0x3000, "leaf");
	fake_kfunc(&tp->fh, 0xffff2000, "vfs_read");
	s = STACK(tp, 0, 0x1000, 0x2000, 0x3000);
	tp_rank(tp, 0, 1);
	tp_rank(tp, 1, 0);
	tp_rank(tp, 3, 1);
	tp->procs[3].comm = "proc0";		/* rank 1 twice, one name */
	tp_count(tp, 0, s, 0, 3);		/* proc0, rank 1 */
	tp_count(tp, 1, s, 0, 4);
	tp_count(tp, 6, s, 0, 10);		/* proc3 "proc0", rank 1: same line */
	tp_count(tp, 1, 0, STACK(tp, 1, 0xffff2000), 6);
	tp_count(tp, 0, 0, 0, 2);
	tp_count(tp, 2, s, 0, 4);		/* proc1, rank 0 */
	tp_count(tp, 4, s, 0, 5);		/* proc2, no rank */
	assert_folded(tp,
		      "proc2;main;work;leaf 5\n"
		      "rank 0;proc1;main;work;leaf 4\n"
		      "rank 1;proc0 2\n"
		      "rank 1;proc0;main;work;leaf 17\n"
		      "rank 1;proc0;vfs_read_[k] 6\n");
}

/* Identities without any rank (or none at all): the lines of before. */
static void test_no_mpi_rank_unchanged(void **state)
{
	struct test_profile *tp = tp_test(state, 1);
	char *plain, *ided;

	kernel_profile(tp);
	plain = fold_text(tp);
	tp_rank(tp, -1, -1);
	ided = fold_text(tp);
	assert_string_equal(ided, plain);
	assert_non_null(strstr(plain, "proc0;main;read_file 4\n"));
	free(plain);
	free(ided);
}

static void test_kernel_frames_below_user(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	kernel_profile(tp);
	assert_folded(tp,
		      "proc0 7\n"
		      "proc0;main;read_file 4\n"
		      "proc0;main;read_file;entry_SYSCALL_64_[k];vfs_read_[k] 3\n"
		      "proc0;vfs_read_[k] 6\n");
}

static void test_callers_at_return_address_minus_one(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	/* 0x5000 is a return address into caller() and the address of leaf(). */
	fake_sym(&tp->fh, 0, 0x5000, 0, "leaf", "/usr/bin/prog");
	fake_sym(&tp->fh, 0, 0x4fff, 0, "caller", "/usr/bin/prog");
	fake_func(&tp->fh, 0x6000, "callee");
	tp_count(tp, 0, STACK(tp, 0, 0x5000), 0, 1);
	tp_count(tp, 0, STACK(tp, 0, 0x5000, 0x6000), 0, 2);
	tp_count(tp, 0, STACK(tp, 0, 0x6000, 0x5000), 0, 3);
	assert_folded(tp,
		      "proc0;callee;leaf 3\n"
		      "proc0;caller;callee 2\n"
		      "proc0;leaf 1\n");
}

static void test_names_cleaned(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	fake_func(&tp->fh, 0x1000, "ns::f(int, char const*)");
	fake_func(&tp->fh, 0x2000, "a;b\nc\rd");
	fake_func(&tp->fh, 0x3000, "operator<<");
	tp->procs[0].comm = "my;proc 1";
	tp_count(tp, 0, STACK(tp, 0, 0x1000, 0x2000, 0x3000), 0, 9);
	assert_folded(tp, "my_proc 1;ns::f(int, char const*);a_b c d;operator<< 9\n");
}

static void test_modules_and_unknown_frames(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	fake_sym(&tp->fh, 0, 0x1000, 0, NULL, "/usr/lib/libfoo.so.1");	/* no function */
	fake_sym(&tp->fh, 0, 0x1fff, 0, "", "/opt/lib/lib;bar.so");	/* empty function */
	fake_sym(&tp->fh, 0, 0x2fff, 0, NULL, "[vdso]");
	fake_sym(&tp->fh, 0, 0x3fff, 0, NULL, "")->rc = -ENOENT;	/* empty module */
	fake_sym(&tp->fh, 0, 0x4fff, 0, "lost", "/usr/bin/prog")->rc = -EIO; /* module only */
	fake_sym(&tp->fh, 0, 0xffff0000, 1, NULL, "[kernel.kallsyms]");
	/* 0x6000 is in no table: -ENOENT, no module */
	tp_count(tp, 0, STACK(tp, 0, 0x6000, 0x5000, 0x4000, 0x3000, 0x2000, 0x1000),
		 STACK(tp, 1, 0xfffff000, 0xffff0000), 2);
	assert_folded(tp,
		      "proc0;[unknown];[prog];[unknown];[vdso];[lib_bar.so];[libfoo.so.1];"
		      "[unknown]_[k];[kernel.kallsyms]_[k] 2\n");
}

static void test_comm_fallbacks(void **state)
{
	struct test_profile *tp = tp_test(state, 2);
	uint32_t s;

	fake_func(&tp->fh, 0x1000, "main");
	s = STACK(tp, 0, 0x1000);
	tp->procs[0].comm = "";			/* the threads' names count */
	tp->procs[1].comm = NULL;
	tp->threads[3].comm = "";		/* and then "[unknown]" */
	tp_count(tp, 0, s, 0, 1);
	tp_count(tp, 1, s, 0, 2);
	tp_count(tp, 2, s, 0, 3);
	tp_count(tp, 3, s, 0, 4);
	tp->threads[1].process = 7;		/* no such process: its own name */
	assert_folded(tp, "[unknown];main 4\nt0;main 1\nt1;main 2\nt2;main 3\n");
}

static void test_symbolized_per_process(void **state)
{
	struct test_profile *tp = tp_test(state, 2);
	uint32_t s;

	fake_sym(&tp->fh, 100, 0x1000, 0, "in_proc0", "/a");
	fake_sym(&tp->fh, 200, 0x1000, 0, "in_proc1", "/b");
	fake_sym(&tp->fh, 100, 0x1fff, 0, "main0", "/a");
	fake_sym(&tp->fh, 200, 0x1fff, 0, "main1", "/b");
	fake_sym(&tp->fh, 100, 0x2fff, 0, "run0", "/a");
	fake_sym(&tp->fh, 200, 0x2fff, 0, "run1", "/b");
	fake_sym(&tp->fh, 0, 0x1fff, 1, "kmain", "/b");
	fake_sym(&tp->fh, 0, 0x2fff, 1, "krun", "/b");
	fake_sym(&tp->fh, 0, 0x1000, 1, "kleaf", "/b");
	s = STACK(tp, 0, 0x1000);
	tp->procs[1].comm = "proc0";		/* same comm, other names */
	tp_count(tp, 0, s, 0, 1);
	tp_count(tp, 2, s, 0, 2);
	/* the same addresses in both processes, also as a kernel stack */
	s = STACK(tp, 0, 0x2000, 0x3000, 0x1000);
	tp_count(tp, 0, s, 0, 4);
	tp_count(tp, 2, s, 0, 8);
	tp_count(tp, 3, s, s, 16);
	assert_folded(tp,
		      "proc0;in_proc0 1\n"
		      "proc0;in_proc1 2\n"
		      "proc0;main0;run0;in_proc0 4\n"
		      "proc0;main1;run1;in_proc1 8\n"
		      "proc0;main1;run1;in_proc1;kmain_[k];krun_[k];kleaf_[k] 16\n");
}

/* Lines whose texts are equal although their stacks differ are merged. */
static void test_equal_text_merged(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	fake_func(&tp->fh, 0x1000, "main");
	fake_func(&tp->fh, 0x2000, "f");
	fake_func(&tp->fh, 0x2100, "f");		/* another address in f */
	fake_func(&tp->fh, 0x3000, "x_[k]");	/* a user function named like a kernel frame */
	fake_kfunc(&tp->fh, 0xffff3000, "x");
	tp_count(tp, 0, STACK(tp, 0, 0x1000, 0x2000), 0, 1);
	tp_count(tp, 0, STACK(tp, 0, 0x1000, 0x2100), 0, 2);
	tp_count(tp, 0, STACK(tp, 0, 0x1000, 0x3000), 0, 4);
	tp_count(tp, 1, STACK(tp, 0, 0x1000), STACK(tp, 1, 0xffff3000), 8);
	assert_folded(tp, "proc0;main;f 3\nproc0;main;x_[k] 12\n");
}

/* Byte order with names that are prefixes of others ('!' < ';' < 'a'). */
static void test_byte_order_of_prefixes(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	fake_func(&tp->fh, 0x1000, "a");
	fake_func(&tp->fh, 0x2000, "a!");
	fake_func(&tp->fh, 0x3000, "ab");
	fake_func(&tp->fh, 0x4000, "z");
	fake_func(&tp->fh, 0x5000, "a.cold");
	tp_count(tp, 0, STACK(tp, 0, 0x1000), 0, 1);
	tp_count(tp, 0, STACK(tp, 0, 0x1000, 0x4000), 0, 2);
	tp_count(tp, 0, STACK(tp, 0, 0x2000), 0, 3);
	tp_count(tp, 0, STACK(tp, 0, 0x2000, 0x4000), 0, 4);
	tp_count(tp, 0, STACK(tp, 0, 0x3000), 0, 5);
	tp_count(tp, 0, STACK(tp, 0, 0x5000, 0x1000), 0, 6);
	tp_count(tp, 0, STACK(tp, 0, 0x1000, 0x5000, 0x4000), 0, 7);
	assert_folded(tp,
		      "proc0;a 1\n"
		      "proc0;a! 3\n"
		      "proc0;a!;z 4\n"
		      "proc0;a.cold;a 6\n"
		      "proc0;a;a.cold;z 7\n"
		      "proc0;a;z 2\n"
		      "proc0;ab 5\n");
}

static void test_empty_profile(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	assert_folded(tp, "");
}

static void test_bad_count(void **state)
{
	struct test_profile *tp = tp_test(state, 1);
	char *out;

	tp_count(tp, 0, 0, 0, 1);
	tp_count(tp, 0, 5, 0, 1);		/* no stack 5 */
	assert_int_equal(run_into(folded(), tp, &out), -EINVAL);
	assert_string_equal(tp->fh.error, "folded: count 1 refers to a missing thread or stack");
	assert_string_equal(out, "");
	free(out);
}

static void test_write_error(void **state)
{
	assert_write_error(folded(), tp_test(state, 1),
			   "folded: cannot write /dev/full: No space left on device");
}

/* --- folded: against a plain text-folding reference ----------------------- */

/* A growable string. */
struct str {
	char *s;
	size_t len, cap;
};

static void str_put(struct str *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		assert_non_null(b->s);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* @s with ';' as '_' and line breaks as ' '. */
static void str_put_clean(struct str *b, const char *s)
{
	for (; *s; s++) {
		char c = *s == ';' ? '_' : *s == '\n' || *s == '\r' ? ' ' : *s;

		str_put(b, &c, 1);
	}
}

/* The frame name the way common/fold.h documents it. */
static void ref_frame(struct str *b, struct fake_host *fh, uint32_t pid, uint64_t ip, int kernel,
		      int leaf)
{
	struct bpfprof_symbol sym;
	int rc = fh->host.symbolize(&fh->host, pid, leaf || !ip ? ip : ip - 1, kernel, &sym);

	str_put(b, ";", 1);
	if (rc == 0 && sym.function && *sym.function) {
		str_put_clean(b, sym.function);
	} else if (sym.module && *sym.module) {
		const char *base = strrchr(sym.module, '/');

		base = base ? base + 1 : sym.module;

		if (*base != '[')
			str_put(b, "[", 1);
		str_put_clean(b, base);
		if (*base != '[')
			str_put(b, "]", 1);
	} else {
		str_put(b, "[unknown]", 9);
	}
	if (kernel)
		str_put(b, "_[k]", 4);
}

struct ref_line {
	char *text;
	uint64_t samples;
};

static int ref_line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ref_line *)a)->text, ((const struct ref_line *)b)->text);
}

/* Fold @tp as text: one line per count, sorted with strcmp(), equal lines merged. */
static char *ref_fold(struct test_profile *tp)
{
	const struct bpfprof_profile *prof = &tp->prof;
	struct ref_line *lines = calloc(prof->nr_counts + 1, sizeof(*lines));
	struct str out = { 0 };

	assert_non_null(lines);
	for (size_t i = 0; i < prof->nr_counts; i++) {
		const struct bpfprof_count *c = &prof->counts[i];
		const struct bpfprof_thread *t = &prof->threads[c->thread];
		const struct bpfprof_process *p = t->process < prof->nr_processes ?
						  &prof->processes[t->process] : NULL;
		const struct bpfprof_stack *us = &prof->stacks[c->user_stack];
		const struct bpfprof_stack *ks = &prof->stacks[c->kernel_stack];
		struct str b = { 0 };

		str_put(&b, "", 0);
		if (prof->thread_ids && prof->thread_ids[c->thread].rank >= 0) {
			char root[32];

			snprintf(root, sizeof(root), "rank %d;", (int)prof->thread_ids[c->thread].rank);
			str_put(&b, root, strlen(root));
		}
		str_put_clean(&b, p && p->comm && *p->comm ? p->comm :
				  t->comm && *t->comm ? t->comm : "[unknown]");
		for (uint32_t j = us->nr; j-- > 0;)
			ref_frame(&b, &tp->fh, t->pid, us->ips[j], 0, j == 0);
		for (uint32_t j = ks->nr; j-- > 0;)
			ref_frame(&b, &tp->fh, t->pid, ks->ips[j], 1, j == 0);
		lines[i] = (struct ref_line){ .text = b.s, .samples = c->samples };
	}
	qsort(lines, prof->nr_counts, sizeof(*lines), ref_line_cmp);
	str_put(&out, "", 0);
	for (size_t i = 0, j; i < prof->nr_counts; i = j) {
		uint64_t n = 0;
		char num[32];

		for (j = i; j < prof->nr_counts && !strcmp(lines[j].text, lines[i].text); j++)
			n += lines[j].samples;
		snprintf(num, sizeof(num), " %" PRIu64 "\n", n);
		str_put(&out, lines[i].text, strlen(lines[i].text));
		str_put(&out, num, strlen(num));
	}
	for (size_t i = 0; i < prof->nr_counts; i++)
		free(lines[i].text);
	free(lines);
	return out.s;
}

static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rnd_state >> 33) % n;
}

/* Names that are prefixes of one another around ';' (and of "_[k]"), sanitized alike, empty. */
static const char *const rnd_names[] = {
	"a", "a!", "a.cold", "a;", "a_", "ab", "a b", "a\n", "a ", "a;b", "a_b", "b", "b0",
	"x_[k]", "x", "x_", "[x]", "", "\x7f", "\xc3\xa9t\xc3\xa9", "a!b", "a!;", "zz",
};
static const char *const rnd_modules[] = { "/lib/liba.so", "/lib/[a]", "[vdso]", "", NULL };

/* A random profile over the names above: 3 processes (two named alike), many collisions. */
static struct test_profile *rnd_profile(void)
{
	struct test_profile *tp = tp_new(3);
	const size_t nr_names = sizeof(rnd_names) / sizeof(rnd_names[0]);

	tp->procs[2].comm = "proc0";
	for (uint32_t pid = 100; pid <= 300; pid += 100) {
		for (uint64_t a = 0; a < 40; a++) {	/* addresses 0x100 * a and - 1 */
			for (int kernel = 0; kernel < 2; kernel++) {
				for (int off = 0; off < 2; off++) {
					struct fake_sym *s;

					s = fake_sym(&tp->fh, pid, 0x100 * a - off, kernel,
						     rnd(5) ? rnd_names[rnd(nr_names)] : NULL,
						     rnd_modules[rnd(5)]);
					s->rc = rnd(8) ? 0 : -EIO;
				}
			}
		}
	}
	for (uint32_t i = 0; i < 60; i++) {
		uint64_t ips[MAX_FRAMES];
		uint32_t nr = rnd(7);

		for (uint32_t j = 0; j < nr; j++)
			ips[j] = 0x100 * rnd(j < 2 ? 3 : 40);	/* roots shared */
		tp_stack(tp, i % 3 == 0, nr, ips);
	}
	for (uint32_t i = 0; i < 300; i++)
		tp_count(tp, rnd(6), rnd(61), rnd(3) ? 0 : rnd(61), 1 + rnd(4));
	return tp;
}

static void test_random_against_reference(void **unused)
{
	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct test_profile *tp;
		char *got, *want;

		rnd_state = seed;
		tp = rnd_profile();
		want = ref_fold(tp);
		got = fold_text(tp);
		if (strcmp(got, want))
			fail_msg("seed %" PRIu64 ": folded output:\n%s\nreference:\n%s", seed, got,
				 want);
		free(got);
		free(want);
		free(tp);
	}
}

/*
 * The same with MPI ranks: random ranks for the processes (none, and
 * ranks whose names are prefixes of one another), and a process whose
 * own name looks like a rank root.
 */
static void test_random_ranks_against_reference(void **unused)
{
	static const int32_t ranks[] = { -1, 0, 1, 10, 11 };

	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct test_profile *tp;
		char *got, *want;

		rnd_state = seed;
		tp = rnd_profile();
		for (int p = 0; p < 3; p++)
			tp_rank(tp, p, ranks[rnd(5)]);
		if (seed % 3 == 0)
			tp->procs[1].comm = "rank 1";
		want = ref_fold(tp);
		got = fold_text(tp);
		if (strcmp(got, want))
			fail_msg("seed %" PRIu64 ": folded output:\n%s\nreference:\n%s", seed, got,
				 want);
		free(got);
		free(want);
		free(tp);
	}
}

/* Lines longer than the output buffer and megabytes of them: the same as the reference. */
static void test_long_lines_against_reference(void **state)
{
	struct test_profile *tp = tp_test(state, 2);
	char *names[64], *got, *want;

	rnd_state = 42;
	for (uint32_t i = 0; i < 64; i++) {
		size_t len = i == 7 ? (1u << 20) + 333 : 1 + rnd(3000);

		names[i] = malloc(len + 1);
		assert_non_null(names[i]);
		for (size_t j = 0; j < len; j++)
			names[i][j] = "abc;d e!_"[rnd(9)];
		names[i][len] = '\0';
		fake_func(&tp->fh, 0x1000 * (i + 1), names[i]);
		fake_kfunc(&tp->fh, 0xffff0000 + 0x1000 * i, names[i]);
	}
	for (uint32_t i = 0; i < 200; i++) {
		uint64_t ips[MAX_FRAMES];
		uint32_t nr = 1 + rnd(MAX_FRAMES);

		for (uint32_t j = 0; j < nr; j++)
			ips[j] = i % 4 ? 0x1000 * (1 + rnd(j < 4 ? 2 : 64)) :
				 0xffff0000 + 0x1000 * rnd(64);
		tp_stack(tp, i % 4 == 0, nr, ips);
	}
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t s = 1 + rnd(200);

		tp_count(tp, rnd(4), s % 4 == 1 ? 0 : s, rnd(2) ? 0 : 1 + 4 * rnd(50), 1 + rnd(9));
	}
	want = ref_fold(tp);
	got = fold_text(tp);
	assert_true(strlen(want) > 8 * (1u << 20));
	assert_int_equal(strlen(got), strlen(want));
	assert_true(!strcmp(got, want));
	free(got);
	free(want);
	for (uint32_t i = 0; i < 64; i++)
		free(names[i]);
}

/* --- flamegraph: the page data ---------------------------------------------- */

static void *flamegraph_dl;

/* Load BUILD/plugins/flamegraph.so (this test is BUILD/tests/unit/folded/test_folded). */
static int flamegraph_setup(void **unused)
{
	char exe[PATH_MAX], so[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *dir;

	if (n <= 0)
		return 0;
	exe[n] = '\0';
	dir = dirname(dirname(dirname(dirname(exe))));
	snprintf(so, sizeof(so), "%s/plugins/flamegraph.so", dir);
	flamegraph_dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	return 0;
}

static int flamegraph_teardown(void **unused)
{
	if (flamegraph_dl)
		dlclose(flamegraph_dl);
	return 0;
}

static const struct bpfprof_plugin *flamegraph(void)
{
	bpfprof_plugin_entry_fn entry;

	if (!flamegraph_dl)
		fail_msg("BUILD/plugins/flamegraph.so not found beside the test: build it with make");
	entry = (bpfprof_plugin_entry_fn)dlsym(flamegraph_dl, BPFPROF_PLUGIN_ENTRY);
	assert_non_null(entry);
	return entry(BPFPROF_PLUGIN_ABI_VERSION);
}

/* The flamegraph page of @tp must contain @data (and the rest of the page). */
static void assert_page_data(struct test_profile *tp, const char *title, const char *data)
{
	char *out;

	assert_int_equal(run_into(flamegraph(), tp, &out), 0);
	assert_int_equal(tp->fh.nr_errors, 0);
	if (!strstr(out, data))
		fail_msg("page:\n%.4000s\nhas no\n%s", out, data);
	if (!strstr(out, title))
		fail_msg("page has no title %s", title);
	assert_non_null(strstr(out, "<!DOCTYPE html>\n"));
	assert_non_null(strstr(out, "</script>\n</body>\n</html>\n"));
	free(out);
}

static void test_flamegraph_data(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	kernel_profile(tp);
	assert_page_data(tp,
			 "<title>bpfprof: test &lt;target&gt;, 20 samples</title>",
			 "<script id=\"bpfprof-data\" type=\"application/json\">\n"
			 "{\"names\": [\"proc0\",\"main\",\"read_file\",\"entry_SYSCALL_64_[k]\","
			 "\"vfs_read_[k]\"],\n\"stacks\": [\n"
			 "[7,0],\n[4,0,1,2],\n[3,0,1,2,3,4],\n[6,0,4]]}\n</script>\n");
}

/* The flame graph of ranked threads has the rank as its root frame. */
static void test_flamegraph_mpi_rank(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	kernel_profile(tp);
	tp_rank(tp, 0, 3);
	assert_page_data(tp,
			 "<title>bpfprof: test &lt;target&gt;, 20 samples</title>",
			 "{\"names\": [\"rank 3\",\"proc0\",\"main\",\"read_file\","
			 "\"entry_SYSCALL_64_[k]\",\"vfs_read_[k]\"],\n\"stacks\": [\n"
			 "[7,0,1],\n[4,0,1,2,3],\n[3,0,1,2,3,4,5],\n[6,0,1,5]]}\n</script>\n");
}

static void test_flamegraph_json_escapes(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	fake_func(&tp->fh, 0x1000, "say \"hi\" <b>\\\t\x7f;");
	tp->procs[0].comm = "</script>";
	tp_count(tp, 0, STACK(tp, 0, 0x1000), 0, 1);
	assert_page_data(tp, "<title>bpfprof: test &lt;target&gt;, 1 samples</title>",
			 "{\"names\": [\"\\u003c/script>\",\"say \\\"hi\\\" \\u003cb>"
			 "\\\\\\u0009\\u007f_\"],\n\"stacks\": [\n[1,0,1]]}\n");
}

static void test_flamegraph_empty(void **state)
{
	struct test_profile *tp = tp_test(state, 1);

	assert_page_data(tp, "<title>bpfprof: test &lt;target&gt;, 0 samples</title>",
			 "{\"names\": [],\n\"stacks\": []}\n</script>\n");
}

static void test_flamegraph_write_error(void **state)
{
	assert_write_error(flamegraph(), tp_test(state, 1),
			   "flamegraph: cannot write /dev/full: No space left on device");
}

/* A test whose profile (tp_test()) is freed after it, passed or failed. */
#define TEST(f) cmocka_unit_test_teardown(f, tp_teardown)

int main(void)
{
	const struct CMUnitTest lines[] = {
		cmocka_unit_test(test_entry_checks_abi),
		TEST(test_threads_and_processes_merge),
		TEST(test_mpi_rank_roots),
		TEST(test_no_mpi_rank_unchanged),
		TEST(test_kernel_frames_below_user),
		TEST(test_callers_at_return_address_minus_one),
		TEST(test_names_cleaned),
		TEST(test_modules_and_unknown_frames),
		TEST(test_comm_fallbacks),
		TEST(test_symbolized_per_process),
		TEST(test_equal_text_merged),
		TEST(test_byte_order_of_prefixes),
		TEST(test_empty_profile),
		TEST(test_bad_count),
		TEST(test_write_error),
	};

	const struct CMUnitTest reference[] = {
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_random_ranks_against_reference),
		TEST(test_long_lines_against_reference),
	};
	const struct CMUnitTest page[] = {
		TEST(test_flamegraph_data),
		TEST(test_flamegraph_mpi_rank),
		TEST(test_flamegraph_json_escapes),
		TEST(test_flamegraph_empty),
		TEST(test_flamegraph_write_error),
	};
	int failed = cmocka_run_group_tests_name("folded lines", lines, NULL, NULL);

	failed += cmocka_run_group_tests_name("folded against a reference", reference, NULL, NULL);
	failed += cmocka_run_group_tests_name("flamegraph page data", page, flamegraph_setup,
					      flamegraph_teardown);
	return failed ? 1 : 0;
}
