/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rng.h - the unit tests' pseudo random numbers: xorshift64, a fixed
 * sequence per seed, so that a failing random input comes again on the
 * next run.  Header only (tests of any component include it).
 */
#ifndef BPFPROF_TEST_RNG_H
#define BPFPROF_TEST_RNG_H

#include <stdint.h>

/* The next number of the sequence kept in *@state (never 0). */
static inline uint64_t test_rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

#endif /* BPFPROF_TEST_RNG_H */
