/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* A float32's bits and back, for the pool's unit tests (not the pool's own conversions). */

#ifndef SHR_BITS_TEST_H
#define SHR_BITS_TEST_H

#include <stdint.h>
#include <string.h>

static inline uint32_t
fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static inline float
bitsf(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

#endif /* SHR_BITS_TEST_H */
