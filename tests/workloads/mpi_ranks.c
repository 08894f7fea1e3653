// SPDX-License-Identifier: BSD-2-Clause
/*
 * mpi_ranks.c - an MPI ground-truth workload: ranks doing known, different
 * work in functions of their own, each with one helper thread doing known
 * work too.  Built with mpicc when it is installed (the Makefile skips it
 * otherwise).
 *
 *   mpi_ranks [-u SECONDS]   run as an MPI program (srun --mpi=pmix, mpirun)
 *   mpi_ranks --truth N      print the design for N ranks and exit
 *
 * Rank r's main thread does r % 4 + 1 units in rankR_work() (R = r % 4:
 * rank0_work ... rank3_work, each with its leaf rankR_leaf); its helper
 * thread, named "helper", does one unit in helper_work() (leaf
 * helper_leaf).  A unit is the same number of loop iterations on every
 * rank: rank 0 calibrates it to SECONDS of CPU (default 0.25) and
 * broadcasts it, so the shares are exact in iterations, and in CPU time as
 * far as one loop costs the same everywhere (< 0.5% here).  Chunks vary
 * pseudo-randomly in length (no phase locking with the sampling timer).
 *
 * Each rank prints "rank R pid PID host HOST" once the unit is known.
 * Ranks that finish early wait in MPI_Ibarrier/MPI_Test with 1 ms sleeps,
 * not in a busy MPI_Barrier, so that waiting costs next to no CPU.
 *
 * --truth N prints "units R MAIN HELPER" per rank: its work in units.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "groundtruth.h"

#define RANK_KINDS 4

SINK_FUNCTION(sink)
LCG_LEAF(rank0_leaf)
LCG_LEAF(rank1_leaf)
LCG_LEAF(rank2_leaf)
LCG_LEAF(rank3_leaf)
LCG_LEAF(helper_leaf)

/* @units * @unit iterations of @leaf in chunks of varying length. */
static uint64_t run_units(uint64_t (*leaf)(uint64_t, uint64_t), uint64_t units, uint64_t unit,
			  uint64_t seed)
{
	uint64_t left = units * unit, x = seed | 1, rnd = RANDOM_SEED(seed);

	while (left) {
		uint64_t n = CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX);

		if (n > left)
			n = left;
		x = leaf(x, n);
		left -= n;
	}
	return x;
}

/* One frame per rank kind, so a profile tells the ranks apart by name. */
NOIPA uint64_t rank0_work(uint64_t units, uint64_t unit) { return run_units(rank0_leaf, units, unit, 1) + 1; }
NOIPA uint64_t rank1_work(uint64_t units, uint64_t unit) { return run_units(rank1_leaf, units, unit, 2) + 1; }
NOIPA uint64_t rank2_work(uint64_t units, uint64_t unit) { return run_units(rank2_leaf, units, unit, 3) + 1; }
NOIPA uint64_t rank3_work(uint64_t units, uint64_t unit) { return run_units(rank3_leaf, units, unit, 4) + 1; }
NOIPA uint64_t helper_work(uint64_t units, uint64_t unit) { return run_units(helper_leaf, units, unit, 5) + 1; }

static uint64_t (*const rank_work[RANK_KINDS])(uint64_t, uint64_t) = {
	rank0_work, rank1_work, rank2_work, rank3_work,
};

/* The design: main-thread and helper units of rank @r. */
static uint64_t main_units(int r) { return (uint64_t)(r % RANK_KINDS) + 1; }
#define HELPER_UNITS 1

struct helper {
	pthread_t thread;
	uint64_t unit, result;
};

static void *helper_main(void *arg)
{
	struct helper *h = arg;

	pthread_setname_np(pthread_self(), "helper");
	h->result = helper_work(HELPER_UNITS, h->unit);
	return NULL;
}

/* A barrier that sleeps: MPI_Barrier busy-polls, which would add CPU time
 * to the ranks that finish first. */
static void sleepy_barrier(void)
{
	struct timespec ms = { 0, 1000000 };
	MPI_Request req;
	int done = 0;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
		nanosleep(&ms, NULL);
}

static int print_truth(int n)
{
	for (int r = 0; r < n; r++)
		printf("units %d %llu %d\n", r, (unsigned long long)main_units(r), HELPER_UNITS);
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = 0.25;
	uint64_t unit = 0, x;
	struct helper h;
	char host[256];
	int rank, size;

	if (argc == 3 && !strcmp(argv[1], "--truth"))
		return print_truth(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "-u"))
		seconds = atof(argv[2]);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0)
		unit = (uint64_t)(seconds * 1e9 / ns_per_iteration(rank0_leaf, 2000000));
	MPI_Bcast(&unit, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	printf("rank %d pid %d host %s\n", rank, (int)getpid(), host);
	fflush(stdout);
	sleepy_barrier();

	h.unit = unit;
	if (pthread_create(&h.thread, NULL, helper_main, &h)) {
		fprintf(stderr, "mpi_ranks: rank %d: cannot create its helper thread\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	x = rank_work[rank % RANK_KINDS](main_units(rank), unit);
	pthread_join(h.thread, NULL);
	result_sink = x ^ h.result;
	sleepy_barrier();
	MPI_Finalize();
	return 0;
}
