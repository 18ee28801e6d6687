/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * What the wire protocol's unit tests (test_proto*.c) share: a seeded PRNG for random
 * buffers, and the reference CRC32C they check the library's against.
 */

#ifndef SHR_PROTO_TEST_H
#define SHR_PROTO_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "rng_test.h"

static inline void
fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(rnd() >> 56);
}

/* Reference CRC32C, one bit at a time, straight from the definition. */
static inline uint32_t
ref_crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
	uint32_t s = ~crc;

	for (size_t i = 0; i < n; i++) {
		s ^= p[i];
		for (int b = 0; b < 8; b++)
			s = (s & 1) ? (s >> 1) ^ 0x82f63b78u : s >> 1;
	}
	return ~s;
}

#endif /* SHR_PROTO_TEST_H */
