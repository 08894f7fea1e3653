// SPDX-License-Identifier: BSD-2-Clause
/*
 * groundtruth.h - the machinery shared by the ground-truth workloads
 * (shares, threads, forker, nofp_paths, nofp_qsort, nofp_deep, syscalls, manystacks,
 * bench_work, late_dlopen and its late_lib.so), following /work/shared/notes/ground-truth-workloads.md.
 *
 * This header owns the common loop body and the tools around it: the LCG
 * constants and its leaf loop, sink(), the xorshift chunk-length generator,
 * the clocks, the calibration of ns per iteration, the start gate that
 * releases worker threads together, the --wait/--truth plumbing (block
 * SIGUSR1, print "ready PID", wait for SIGUSR1; print truth lines) and the
 * command line of the workloads whose only options are -s and --wait.  Each
 * workload stays one .c file that includes it; nothing here is compiled on
 * its own, so every line is built with the including workload's flags (with
 * frame pointers, or without them for nofp_*).
 *
 * What ends up on a profile's stacks is decided in the workloads, not here:
 *
 *   - Functions that must be frames of their own (leaves, sink) are
 *     *defined by macros* with the name the workload gives them, noipa and
 *     global (prefix the macro with `static` for a local symbol).  Tests look
 *     the names up in profiles, so the names stay in the workloads.
 *   - The static inline functions below are inlined into their callers.
 *     DWARF-aware symbolizers (go tool pprof, perf) show an inlined function
 *     as a frame of its own, so the hot loops use macros (LCG_STEPS,
 *     CHUNK_LENGTH), never an inline function, and the inline helpers that
 *     workloads used before (next_random, now, ns_per_iteration,
 *     wait_for_start, release_threads) keep their names.
 */
#ifndef BPFPROF_WORKLOADS_GROUNDTRUTH_H
#define BPFPROF_WORKLOADS_GROUNDTRUTH_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* No inlining, cloning, identical-code folding or .constprop names. */
#define NOIPA __attribute__((noipa))

/* The loop body of every hot function: one serial 64-bit LCG step. */
#define LCG_MUL 6364136223846793005ULL
#define LCG_ADD 1442695040888963407ULL

/* Chunk length range in iterations, unless a workload sets its own. */
#define CHUNK_MIN 2000
#define CHUNK_MAX 6000

/* Where results go so that no work is optimized away. */
static volatile uint64_t result_sink __attribute__((unused));

/* @n LCG steps on the uint64_t lvalue @x (a statement). */
#define LCG_STEPS(x, n)							\
	for (uint64_t lcg_i_ = 0; lcg_i_ < (n); lcg_i_++)		\
		(x) = (x) * LCG_MUL + LCG_ADD

/*
 * Defines `NOIPA uint64_t name(uint64_t x)`, the tiny function hot leaves
 * call at their end: calling something keeps GCC from dropping the leaf's
 * frame pointer setup (a frame-pointer unwinder would then skip the leaf's
 * caller).  The workloads call it sink().
 */
#define SINK_FUNCTION(name)						\
	NOIPA uint64_t name(uint64_t x)					\
	{								\
		return x ^ (x >> 29);					\
	}

/*
 * Defines `NOIPA uint64_t name(uint64_t x, uint64_t n)`: @n LCG steps on
 * @x, then returns the expression @ret, which may use x (the final state).
 */
#define LCG_LEAF_RETURNING(name, ret)					\
	NOIPA uint64_t name(uint64_t x, uint64_t n)			\
	{								\
		LCG_STEPS(x, n);					\
		return ret;						\
	}

/* The usual hot leaf: @n LCG steps, then sink() (defined by SINK_FUNCTION). */
#define LCG_LEAF(name) LCG_LEAF_RETURNING(name, sink(x))

/* Initial state of the chunk-length generator for a thread or child @seed. */
#define RANDOM_SEED(seed) ((seed) * 2654435761u + 88172645463325252ULL)

/* xorshift64: the chunk-length generator, independent of the work. */
static inline uint64_t next_random(uint64_t *state)
{
	uint64_t s = *state;

	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	*state = s;
	return s;
}

/*
 * A pseudo-random chunk length in [@min, @max] from the generator state
 * *@rnd: varying chunks keep the schedule from phase-locking to the
 * sampling timer.  A macro, so that no inlined frame appears in hot loops.
 */
#define CHUNK_LENGTH(rnd, min, max) ((min) + next_random(rnd) % ((max) - (min) + 1))

/* Seconds on clock @clk. */
static inline double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * CPU nanoseconds per iteration of @loop (an LCG_LEAF): the best of five
 * runs of @n iterations, i.e. the least disturbed one.  Thread CPU time, so
 * other load on the machine does not count.
 */
static inline double ns_per_iteration(uint64_t (*loop)(uint64_t, uint64_t), uint64_t n)
{
	uint64_t x = 1;
	double best = 1e9;

	for (int i = 0; i < 5; i++) {
		double t0 = now(CLOCK_THREAD_CPUTIME_ID);

		x = loop(x, n);
		double dt = now(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (dt < best)
			best = dt;
	}
	result_sink = x;
	return best * 1e9 / n;
}

/*
 * --wait: the profiler attaches while the workload is blocked, then sends
 * SIGUSR1.  block_release_signal() blocks SIGUSR1 in @set (call it before
 * creating threads, so all inherit the mask and only sigwait() takes it);
 * wait_for_release() prints "ready PID" on stdout and waits for SIGUSR1.
 * It returns sigwait()'s result: 0 or an error number.
 */
static inline void block_release_signal(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static inline int wait_for_release(const sigset_t *set)
{
	int sig;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	return sigwait(set, &sig);
}

/*
 * The command line of a workload whose only options are -s SECONDS and
 * --wait (anon_exec, nofp_qsort, nofp_realign): -s sets *@seconds to a
 * positive number (the caller's default stays otherwise), --wait sets
 * *@wait to 1.  Anything else, or a bad SECONDS, prints "usage: @name
 * [-s SECONDS] [--wait]" on stderr and exits 2.
 */
static inline void parse_seconds_wait(int argc, char **argv, const char *name,
				      double *seconds, int *wait)
{
	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--wait")) {
			*wait = 1;
			continue;
		}
		if (strcmp(argv[i], "-s") || i + 1 == argc)
			goto usage;
		*seconds = strtod(argv[++i], &end);
		if (*end || *seconds <= 0)
			goto usage;
	}
	return;
usage:
	fprintf(stderr, "usage: %s [-s SECONDS] [--wait]\n", name);
	exit(2);
}

/*
 * The start of a single-threaded workload whose only options are -s and
 * --wait (nofp_fp_bridge, nofp_lazy, nofp_twins, nofp_alloca):
 * parse_seconds_wait(), then with --wait "ready PID" and SIGUSR1
 * (wait_for_release()); a failed sigwait() exits 1 with a message naming
 * @name.
 */
static inline void start_seconds_wait(int argc, char **argv, const char *name, double *seconds)
{
	sigset_t set;
	int wait = 0;

	parse_seconds_wait(argc, argv, name, seconds, &wait);
	block_release_signal(&set);
	if (wait && wait_for_release(&set)) {
		fprintf(stderr, "%s: sigwait failed\n", name);
		exit(1);
	}
}

/* Lets worker threads start their timed work together, after the release. */
struct start_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int started;
};

#define START_GATE_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 }

static inline void wait_for_start(struct start_gate *g)
{
	pthread_mutex_lock(&g->lock);
	while (!g->started)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static inline void release_threads(struct start_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->started = 1;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

/*
 * --truth: one line "KIND NAME FRACTION" on stdout, e.g. "share leaf_a
 * 0.500000" (flat share), "path busy_loop;phase_a;leaf_a 0.500000" (call
 * path, root first) or "thread tw-0 0.400000"; tests/lib parses them.
 */
static inline void truth_line(const char *kind, const char *name, double fraction)
{
	printf("%s %s %.6f\n", kind, name, fraction);
}

#endif /* BPFPROF_WORKLOADS_GROUNDTRUTH_H */
