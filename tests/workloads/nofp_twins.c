// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_twins - one callee under two callers whose frames are alike: the
 * case the BPF walk's memo of a thread's last walk (bpf/cfi_memo.bpf.h)
 * must get right.  Built without frame pointers (nofp_: -O2 -g
 * -fomit-frame-pointer), the main thread repeats rounds; each round draws
 * a pseudo-random chunk length L and spends
 *
 *   6 L iterations in leaf_a, as
 *     main -> twins_round -> twin_a -> middle -> leaf_a (60%)
 *   4 L iterations in leaf_b, as
 *     main -> twins_round -> twin_b -> middle -> leaf_b (40%)
 *
 * A round lasts tens of microseconds, so one sample's path says little of
 * the next one's.  twin_a and twin_b have the same frame and keep nothing
 * in a register across their call, and the round's state lives in memory
 * (twins_round()), so middle's frame has the same registers under both
 * (pc, sp, rbp, rbx) in every round: a walk meets the memo of a walk
 * through the other twin there, and only the return address above
 * middle's frame tells them apart.  middle calls the round's leaf through
 * a pointer in memory, from one call instruction, so the leaf a sample is
 * in tells which twin called it: a walk that gives leaf_b twin_a's
 * callers (or leaf_a twin_b's) took a memo it should not have.
 *
 * Usage: nofp_twins [-s SECONDS] [--wait] [--truth]
 *   -s SECONDS  CPU seconds of work after the release (default 2)
 *   --wait      print "ready PID" on stdout and block until SIGUSR1
 *   --truth     print the ground truth and exit:
 *                 path F1;F2;...;LEAF FRACTION   call path, root first
 * At exit it prints one line on stderr:
 *   nofp_twins: rounds=R cpu_seconds=S
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

#define WEIGHT_A 6
#define WEIGHT_B 4
#define WEIGHTS (WEIGHT_A + WEIGHT_B)

/* Two leaves, the same work: which one runs says which twin called. */
LCG_LEAF_RETURNING(leaf_a, x)
LCG_LEAF_RETURNING(leaf_b, x)

/* The leaf of the twin being called, set by twins_round(). */
static uint64_t (*volatile round_leaf)(uint64_t, uint64_t);

/* The callee both twins share: its frame is the one the memo meets. */
NOIPA uint64_t middle(uint64_t x, uint64_t n)
{
	uint64_t r = round_leaf(x, n);

	return r ^ (r >> 17);
}

/* The twins: the same frame, nothing kept across the call, a different
 * constant after it (so they are not folded into one function). */
NOIPA uint64_t twin_a(uint64_t x, uint64_t n)
{
	return middle(x, n) + 0x9e3779b97f4a7c15ull;
}

NOIPA uint64_t twin_b(uint64_t x, uint64_t n)
{
	return middle(x, n) + 0x7f4a7c159e3779b9ull;
}

/* A round's state, in memory: no register of a frame below the twins
 * holds a value that changes from round to round. */
static uint64_t round_rnd = RANDOM_SEED(0);
static volatile uint64_t round_len, round_x = 1, rounds;

/* One round: a chunk through twin_a, then one through twin_b. */
NOIPA void twins_round(void)
{
	round_len = CHUNK_LENGTH(&round_rnd, CHUNK_MIN, CHUNK_MAX);
	round_leaf = leaf_a;
	round_x = twin_a(round_x, WEIGHT_A * round_len);
	round_leaf = leaf_b;
	round_x = twin_b(round_x, WEIGHT_B * round_len);
	rounds = rounds + 1;
}

int main(int argc, char **argv)
{
	double seconds = 2.0;

	if (argc == 2 && !strcmp(argv[1], "--truth")) {
		truth_line("path", "main;twins_round;twin_a;middle;leaf_a", (double)WEIGHT_A / WEIGHTS);
		truth_line("path", "main;twins_round;twin_b;middle;leaf_b", (double)WEIGHT_B / WEIGHTS);
		return 0;
	}
	start_seconds_wait(argc, argv, "nofp_twins", &seconds);

	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = t0 + seconds;

	while (now(CLOCK_THREAD_CPUTIME_ID) < end)
		twins_round();
	result_sink = round_x;
	fprintf(stderr, "nofp_twins: rounds=%llu cpu_seconds=%.3f\n", (unsigned long long)rounds,
		now(CLOCK_THREAD_CPUTIME_ID) - t0);
	return 0;
}
