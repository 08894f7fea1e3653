// SPDX-License-Identifier: BSD-2-Clause
/*
 * cxxburn - a C++ workload whose profile is known in advance, for the
 * names profiles give C++ functions: a namespace, a class template's
 * member in two instantiations, and two overloads of one function, which
 * differ only by their parameters.  groundtruth.h's rules and loop body
 * (/work/shared/notes/ground-truth-workloads.md).
 *
 * Each round draws a chunk length L and spends
 *
 *   4 L iterations in burn::Work<int>::run(unsigned long, unsigned long)   40%
 *   3 L iterations in burn::Work<long>::run(unsigned long, unsigned long)  30%
 *   2 L iterations in burn::spin(unsigned long, int)                       20%
 *   1 L iterations in burn::spin(unsigned long, double)                    10%
 *
 * each called from burn::Driver::round(unsigned long), called from main.
 * The names above are what c++filt (and bpfprof, by default) prints for
 * the symbols; `perf report` of perf 6.1 prints them without parameters,
 * so the two spin() overloads are one name there.
 *
 * Usage: cxxburn [-s SECONDS] [--wait] [--truth]
 *   -s SECONDS  CPU seconds of work (default 2), calibrated first
 *   --wait      print "ready PID", then wait for SIGUSR1 before the work
 *   --truth     print "share NAME FRACTION" lines (NAME has spaces: the
 *               fraction is the last field) and exit
 * At exit it prints on stderr: cxxburn: rounds=R cpu_seconds=S
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groundtruth.h"

namespace burn {

SINK_FUNCTION(sink)

/* The same loop, timed before the work starts. */
LCG_LEAF(calibrate_loop)

/* One member function, a frame per instantiation. */
template <typename T> struct Work {
	NOIPA static uint64_t run(uint64_t x, uint64_t n)
	{
		LCG_STEPS(x, n);
		return sink(x);
	}
};
template struct Work<int>;
template struct Work<long>;

/* Overloads: the same name, told apart by the second parameter. */
NOIPA uint64_t spin(uint64_t x, int n)
{
	LCG_STEPS(x, (uint64_t)n);
	return sink(x);
}

NOIPA uint64_t spin(uint64_t x, double n)
{
	LCG_STEPS(x, (uint64_t)n);
	return sink(x);
}

struct Driver {
	uint64_t rnd;
	NOIPA uint64_t round(uint64_t x);
};

NOIPA uint64_t Driver::round(uint64_t x)
{
	uint64_t len = CHUNK_LENGTH(&rnd, CHUNK_MIN, CHUNK_MAX);

	x = Work<int>::run(x, 4 * len) + 1;
	x = Work<long>::run(x, 3 * len) + 1;
	x = spin(x, (int)(2 * len)) + 1;
	x = spin(x, (double)len) + 1;
	return x + 1;
}

} // namespace burn

static const struct {
	const char *name;
	double share;
} truth[] = {
	{ "burn::Work<int>::run(unsigned long, unsigned long)", 0.4 },
	{ "burn::Work<long>::run(unsigned long, unsigned long)", 0.3 },
	{ "burn::spin(unsigned long, int)", 0.2 },
	{ "burn::spin(unsigned long, double)", 0.1 },
};

int main(int argc, char **argv)
{
	double seconds = 2, ns, t0;
	bool wait = false;
	sigset_t set;
	uint64_t rounds, x = 1;
	burn::Driver d = { RANDOM_SEED(1) };

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--truth")) {
			for (const auto &t : truth)
				printf("share %s %.6f\n", t.name, t.share);
			return 0;
		} else if (!strcmp(argv[i], "--wait")) {
			wait = true;
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: cxxburn [-s SECONDS] [--wait] [--truth]\n");
			return 2;
		}
	}
	ns = ns_per_iteration(burn::calibrate_loop, 10u << 20);
	rounds = (uint64_t)(seconds * 1e9 / (ns * 10 * (CHUNK_MIN + CHUNK_MAX) / 2.0)) + 1;
	if (wait) {
		block_release_signal(&set);
		if (wait_for_release(&set))
			return 1;
	}
	t0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (uint64_t r = 0; r < rounds; r++)
		x = d.round(x);
	result_sink = x;
	fprintf(stderr, "cxxburn: rounds=%llu cpu_seconds=%.3f\n", (unsigned long long)rounds,
		now(CLOCK_PROCESS_CPUTIME_ID) - t0);
	return 0;
}
