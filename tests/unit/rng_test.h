/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The unit tests' pseudo-random numbers: xorshift64*, one sequence per program, the same in
 * every run. A program that wants its own sequence defines RNG_TEST_SEED (not 0) before
 * including this.
 */

#ifndef SHR_RNG_TEST_H
#define SHR_RNG_TEST_H

#include <stdint.h>

#ifndef RNG_TEST_SEED
#define RNG_TEST_SEED 0x243f6a8885a308d3ull
#endif

static uint64_t rng_state = RNG_TEST_SEED;

static inline uint64_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

#endif /* SHR_RNG_TEST_H */
