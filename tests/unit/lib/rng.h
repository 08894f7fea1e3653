/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rng.h - the unit tests' pseudo random numbers (xorshift64: a fixed
 * sequence per seed, so that a failing random input comes again on the
 * next run) and the random inputs the parser tests feed their parsers.
 * Header only (tests of any component include it).
 */
#ifndef BPFPROF_TEST_RNG_H
#define BPFPROF_TEST_RNG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/*
 * A fuzz input for a text parser in @buf (room for 2 * @len bytes), with
 * the numbers of *@state: @noise, up to 2 * @len random bytes; else a
 * random prefix of the valid text @text (@len bytes) with up to 8 bytes
 * replaced by some of the @nalpha characters at @alphabet (NULs allowed).
 * Returns the input's length.
 */
static inline size_t test_fuzz_text(uint64_t *state, int noise, char *buf, const char *text,
				    size_t len, const char *alphabet, size_t nalpha)
{
	size_t n = test_rng_next(state) % (len * 2), j;

	if (noise) {
		for (j = 0; j < n; j++)
			buf[j] = (char)test_rng_next(state);
		return n;
	}
	n = test_rng_next(state) % (len + 1);
	memcpy(buf, text, n);
	for (j = 0; j < 1 + test_rng_next(state) % 8 && n; j++)
		buf[test_rng_next(state) % n] = alphabet[test_rng_next(state) % nalpha];
	return n;
}

#endif /* BPFPROF_TEST_RNG_H */
