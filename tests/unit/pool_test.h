/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * What the unit tests of the slot pool (lib/pool, test_pool*.c) share: contribution templates,
 * a random source, and the references every dtype/op is checked against, computed here
 * (independently of the pool's own conversion code).
 */

#ifndef SHR_POOL_TEST_H
#define SHR_POOL_TEST_H

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shr_proto.h"
#include "shr_pool.h"
#include "shr_pool_private.h"

/* ---- helpers ---- */

#define RNG_TEST_SEED 0x9e3779b97f4a7c15ull
#include "bits_test.h"
#include "rng_test.h"

static inline uint32_t
rnd32(void)
{
	return (uint32_t)(rnd() >> 32);
}

static inline void
shuffle(uint16_t *v, uint32_t n)
{
	uint32_t i, j;
	uint16_t t;

	for (i = n; i > 1; i--) {
		j = (uint32_t)(rnd() % i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

static inline struct shr_pool *
mkpool(uint32_t nslots, uint32_t max_elems, uint16_t max_world)
{
	struct shr_pool_params pp = {
		.nslots = nslots, .max_elems = max_elems, .max_world = max_world,
	};
	struct shr_pool *p = shr_pool_create(&pp);

	assert_non_null(p);
	return p;
}

/* A contribution template: int32 SUM, tensor 7, step 3, offset 1000. */
static inline struct shr_pool_contrib
tmpl(uint32_t slot, uint8_t ver, uint16_t world, uint32_t count)
{
	struct shr_pool_contrib c = {
		.slot = slot, .ver = ver, .dtype = SHR_DTYPE_INT32, .op = SHR_OP_SUM,
		.rank = 0, .world = world, .count = count, .tensor = 7, .step = 3,
		.offset = 1000, .aux = 0, .payload = NULL,
	};
	return c;
}

static inline int
put(struct shr_pool *p, const struct shr_pool_contrib *t, uint16_t rank, const void *payload,
	struct shr_pool_round *r)
{
	struct shr_pool_contrib c = *t;

	c.rank = rank;
	c.payload = payload;
	return shr_pool_contribute(p, &c, r);
}

static inline uint32_t
rd32(const uint8_t *s)
{
	return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
	       (uint32_t)s[3] << 24;
}

/* The documented float semantics: NaN propagates, -0 < +0. */
static inline float
ref_f32(float a, float b, unsigned int op)
{
	switch (op) {
	case SHR_OP_SUM:
		return a + b;
	case SHR_OP_PROD:
		return a * b;
	case SHR_OP_MIN:
		if (isnan(a) || isnan(b))
			return NAN;
		if (a == 0 && b == 0)
			return (signbit(a) || signbit(b)) ? -0.0f : 0.0f;
		return b < a ? b : a;
	default:
		if (isnan(a) || isnan(b))
			return NAN;
		if (a == 0 && b == 0)
			return (signbit(a) && signbit(b)) ? -0.0f : 0.0f;
		return b > a ? b : a;
	}
}

/* Float results equal: same bits, or both NaN. */
static inline void
assert_same_float(float got, float want)
{
	if (isnan(want)) {
		assert_true(isnan(got));
		return;
	}
	assert_int_equal(fbits(got), fbits(want));
}

/* Wire element size (kept here: the test does not depend on lib/proto's code). */
static inline size_t
esize(uint8_t dtype)
{
	return dtype == SHR_DTYPE_FLOAT16 || dtype == SHR_DTYPE_BFLOAT16 ? 2 : 4;
}

/* One round of `world` contributions (rank order = array order) of any dtype/op. */
static inline void
one_round(struct shr_pool *p, struct shr_pool_contrib *t, uint16_t world,
	  const uint8_t *const *payload, uint8_t *out)
{
	struct shr_pool_round r;
	uint16_t i;

	t->world = world;
	t->step++;
	t->ver ^= 1;
	for (i = 0; i < world; i++)
		assert_int_equal(put(p, t, i, payload[i], &r),
				 i + 1 < world ? SHR_POOL_PARTIAL : SHR_POOL_COMPLETE);
	assert_int_equal(shr_pool_result_write(&r, out),
			 (size_t)t->count * esize(t->dtype));
}

#define KN 1000		/* elements per chunk: not a multiple of any vector width */
#define KW 4

#endif /* SHR_POOL_TEST_H */
