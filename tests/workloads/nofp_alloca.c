// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_alloca - one frame at the same pc and sp under two callers, its
 * CFA from rbp: the case where the BPF walk's memo of a thread's last
 * walk (bpf/cfi_memo.bpf.h) must compare rbp too.  Built without frame
 * pointers (nofp_), the main thread repeats rounds; each round draws a
 * pseudo-random chunk length L and spends
 *
 *   6 L iterations in leaf_a, as
 *     main -> alloca_round -> shallow -> level -> relay -> leaf_a (60%)
 *   4 L iterations in leaf_b, as
 *     main -> alloca_round -> deep -> level -> relay -> leaf_b    (40%)
 *
 * alloca_round calls both from one call instruction.  deep's frame is
 * 1 KiB larger than shallow's, so level is entered 1 KiB lower; level
 * (which keeps rbp as its frame pointer: alloca) then takes as much stack
 * as brings its sp to the same address under both, and calls relay.  So
 * level's frame, and relay's (no frame pointer: it passes rbp on), have
 * the same pc and sp under both, level's rbp (its CFA: rbp + 16) 1 KiB
 * apart, and deep's frame, written at its bottom only, keeps above it
 * what the shallow path left there: level's return address into
 * shallow, and shallow's into alloca_round, as alloca_round's own.  A
 * memo that took relay's or level's frame by pc and sp would find every
 * word it reads the same and give deep's samples shallow's callers.
 * relay calls the round's leaf through a pointer in memory, from one
 * call instruction, so the leaf a sample is in tells which path it is
 * on, and relay's frame is the same in every sample: a walk of leaf_b
 * meets the memo of a walk of leaf_a there.
 *
 * Usage: nofp_alloca [-s SECONDS] [--wait] [--truth]
 *   -s SECONDS  CPU seconds of work after the release (default 2)
 *   --wait      print "ready PID" on stdout and block until SIGUSR1
 *   --truth     print the ground truth and exit:
 *                 path F1;F2;...;LEAF FRACTION   call path, root first
 * At exit it prints one line on stderr:
 *   nofp_alloca: rounds=R cpu_seconds=S
 */
#define _GNU_SOURCE
#include <alloca.h>
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

/* Two leaves, the same work: which one runs says which path called. */
LCG_LEAF_RETURNING(leaf_a, x)
LCG_LEAF_RETURNING(leaf_b, x)

/* The leaf of the path being called, set by alloca_round(). */
static uint64_t (*volatile round_leaf)(uint64_t, uint64_t);

/* Where level's sp is to be when it calls relay: set once, below both. */
static uintptr_t level_sp;

/* Calls the round's leaf, from one call instruction, leaving rbp alone. */
NOIPA uint64_t relay(uint64_t x, uint64_t n)
{
	uint64_t r = round_leaf(x, n);

	return r ^ (r >> 17);
}

/* Takes the stack down to level_sp, then calls relay: the same pc and sp
 * whoever called it, rbp where its caller's frame put it. */
NOIPA uint64_t level(uint64_t x, uint64_t n)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	volatile char *room = alloca(here - level_sp - 64);
	uint64_t r;

	room[0] = (char)x;	/* the rest of it keeps what was there */
	r = relay(x, n);
	return r + (uint64_t)room[0];
}

NOIPA uint64_t shallow(uint64_t x, uint64_t n)
{
	volatile uint64_t pad[4];

	pad[0] = x;
	return level(pad[0], n) + pad[0];
}

NOIPA uint64_t deep(uint64_t x, uint64_t n)
{
	volatile uint64_t pad[132];	/* 1 KiB more than shallow's */

	pad[0] = x;
	return level(pad[0], n) + pad[0];
}

static uint64_t round_rnd = RANDOM_SEED(0);
static volatile uint64_t round_x = 1, rounds;
static uint64_t (*volatile const paths[2])(uint64_t, uint64_t) = { shallow, deep };
static uint64_t (*volatile const leaves[2])(uint64_t, uint64_t) = { leaf_a, leaf_b };

/* One round: a chunk through shallow, then one through deep, both called
 * from the same call (their return addresses the same). */
NOIPA void alloca_round(void)
{
	uint64_t len = CHUNK_LENGTH(&round_rnd, CHUNK_MIN, CHUNK_MAX);

	for (volatile int k = 0; k < 2; k++) {	/* volatile: not unrolled into two calls */
		round_leaf = leaves[k];
		round_x = paths[k](round_x, (k ? WEIGHT_B : WEIGHT_A) * len);
	}
	rounds = rounds + 1;
}

int main(int argc, char **argv)
{
	double seconds = 2.0;

	if (argc == 2 && !strcmp(argv[1], "--truth")) {
		truth_line("path", "main;alloca_round;shallow;level;relay;leaf_a", (double)WEIGHT_A / WEIGHTS);
		truth_line("path", "main;alloca_round;deep;level;relay;leaf_b", (double)WEIGHT_B / WEIGHTS);
		return 0;
	}
	start_seconds_wait(argc, argv, "nofp_alloca", &seconds);
	/* 2 KiB below main's frame: under deep's, and the whole stack within
	 * the walk's largest window (CFI_STACK_WINDOW, 4 KiB) */
	level_sp = ((uintptr_t)__builtin_frame_address(0) - 2048) & ~(uintptr_t)63;

	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = t0 + seconds;

	while (now(CLOCK_THREAD_CPUTIME_ID) < end)
		alloca_round();
	result_sink = round_x;
	fprintf(stderr, "nofp_alloca: rounds=%llu cpu_seconds=%.3f\n", (unsigned long long)rounds,
		now(CLOCK_THREAD_CPUTIME_ID) - t0);
	return 0;
}
