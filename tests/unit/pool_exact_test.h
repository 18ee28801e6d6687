/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * What the exact accumulator's unit tests (test_pool_exact*.c) share: a seeded PRNG of float32
 * patterns, and the reference the pool's exact sums are checked against: a big integer of
 * 32-bit digits held in int64_t (carries deferred to the end, terms decoded with frexpf)
 * rounded through a round-to-odd 64-bit integer and the hardware's uint64 -> float conversion,
 * or for float16 and bfloat16 by a bisection over their patterns (not through float32).
 */

#ifndef SHR_POOL_EXACT_TEST_H
#define SHR_POOL_EXACT_TEST_H

#include <errno.h>
#include <float.h>
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

#include "bits_test.h"
#include "rng_test.h"

static inline int
is_nan_bits(uint32_t u)
{
	return (u & 0x7fffffffu) > 0x7f800000u;
}

/* A random finite float32 with a uniformly random exponent field (0..254). */
static inline uint32_t
rnd_finite(void)
{
	uint64_t r = rnd();
	uint32_t e = (uint32_t)((r >> 40) % 255u);

	return (uint32_t)(r & 0x807fffffu) | e << 23;
}

/* A random finite float32 whose exponent is within spread binades of 2^0. */
static inline uint32_t
rnd_near(uint32_t spread)
{
	uint64_t r = rnd();
	uint32_t e = 127u - spread / 2 + (uint32_t)((r >> 40) % (spread + 1));

	return (uint32_t)(r & 0x807fffffu) | e << 23;
}

/* ---- the reference: 10 digits of 32 bits in int64_t, in units of 2^-149 ---- */

#define RD 10

struct ref {
	int64_t d[RD];
	int nan, pinf, ninf, terms, negz_only;
};

static inline void
ref_clear(struct ref *r)
{
	memset(r, 0, sizeof(*r));
	r->negz_only = 1;
}

static inline void
ref_add(struct ref *r, uint32_t u)
{
	float x = bitsf(u);
	int ex, sh;
	int64_t mant;

	r->terms++;
	if (u != 0x80000000u)
		r->negz_only = 0;
	if (isnan(x)) {
		r->nan = 1;
		return;
	}
	if (isinf(x)) {
		if (x > 0)
			r->pinf = 1;
		else
			r->ninf = 1;
		return;
	}
	if (x == 0)
		return;
	/* x = fr * 2^ex, |fr| in [0.5, 1): mant = fr * 2^24 is an integer; x = mant 2^(ex-24) */
	mant = (int64_t)ldexpf(frexpf(x, &ex), 24);
	sh = ex - 24 + 149;
	if (sh < 0) {
		mant /= (int64_t)1 << -sh;	/* exact: a subnormal's trailing zeros */
		sh = 0;
	}
	{
		/* |mant| < 2^24 shifted by < 32: < 2^56, split over two digits */
		int64_t v = mant * ((int64_t)1 << (sh % 32));
		int k = sh / 32;
		int64_t lo = v % ((int64_t)1 << 32);	/* same sign as v */

		r->d[k] += lo;
		r->d[k + 1] += (v - lo) / ((int64_t)1 << 32);
	}
}

/*
 * The reference's finite sum rounded to odd at 64 bits: *v (its lowest bit ORed with every
 * bit below it), times 2^(*e); returns -1 when it is 0, else its sign (1: negative).
 */
static inline int
ref_odd(const struct ref *r, uint64_t *v_out, int *e_out)
{
	int64_t d[RD];
	uint32_t mag[RD];
	int i, neg, top, p, sh2;
	uint64_t v = 0;

	/* normalise: every digit in [0, 2^32) but the top one, which keeps the sign */
	memcpy(d, r->d, sizeof(d));
	for (i = 0; i < RD - 1; i++) {
		int64_t c = d[i] >> 32;	/* floor division (arithmetic shift) */

		d[i] -= c * ((int64_t)1 << 32);
		d[i + 1] += c;
	}
	neg = d[RD - 1] < 0;
	if (neg) {
		/* negate: -(sum of d[i] 2^(32 i)), borrow through the digits */
		int64_t b = 0;

		for (i = 0; i < RD; i++) {
			int64_t t = -d[i] - b;

			b = 0;
			if (t < 0 && i < RD - 1) {
				t += (int64_t)1 << 32;
				b = 1;
			}
			mag[i] = (uint32_t)t;
		}
	} else {
		for (i = 0; i < RD; i++)
			mag[i] = (uint32_t)d[i];
	}
	for (top = RD - 1; top >= 0 && mag[top] == 0; top--)
		;
	if (top < 0)
		return -1;
	p = 32 * top + 31 - __builtin_clz(mag[top]);
	sh2 = p > 63 ? p - 63 : 0;
	/* v = the magnitude >> sh2, its lowest bit ORed with every bit shifted out (odd) */
	for (i = 0; i < 64; i++) {
		int b = sh2 + i;

		if (b / 32 < RD && ((mag[b / 32] >> (b % 32)) & 1u))
			v |= (uint64_t)1 << i;
	}
	for (i = 0; i < sh2; i++)
		if ((mag[i / 32] >> (i % 32)) & 1u)
			v |= 1u;
	*v_out = v;
	*e_out = sh2 - 149;
	return neg;
}

/* The reference rounded once to float32: round to odd at 64 bits, then the hardware's RNE. */
static inline uint32_t
ref_round(const struct ref *r)
{
	uint64_t v;
	int e, neg;
	float f;

	if (r->nan || (r->pinf && r->ninf))
		return 0x7fc00000u;
	if (r->pinf)
		return 0x7f800000u;
	if (r->ninf)
		return 0xff800000u;
	neg = ref_odd(r, &v, &e);
	if (neg < 0)
		return r->terms != 0 && r->negz_only ? 0x80000000u : 0u;
	f = ldexpf((float)v, e);
	return fbits(neg ? -f : f);
}

/* A float16 or bfloat16 pattern's magnitude (the infinity: 2^16, 2^128), decoded here. */
static inline long double
h_value(uint16_t h, unsigned int dtype)
{
	int e, m;

	if (dtype == SHR_DTYPE_BFLOAT16)
		return h == 0x7f80u ? ldexpl(1.0L, 128) : (long double)bitsf((uint32_t)h << 16);
	e = (h >> 10) & 0x1f;
	m = h & 0x3ff;
	return e == 0 ? ldexpl((long double)m, -24) : ldexpl((long double)(m | 0x400), e - 25);
}

/*
 * The reference rounded once to float16 or bfloat16: the nearest pattern, found by bisection
 * over the positive finite patterns and infinity (ordered as their values), ties to the even
 * pattern (the even significand); past the largest finite value, the infinity. The 64-bit
 * round-to-odd value is exact in a long double (64-bit significand) and rounds to 16 bits as
 * the exact sum does.
 */
static inline uint16_t
ref_round16(const struct ref *r, unsigned int dtype)
{
	uint16_t inf = dtype == SHR_DTYPE_BFLOAT16 ? 0x7f80u : 0x7c00u, lo = 0, hi = inf, mid;
	long double x, dl, dh;
	uint64_t v;
	int e, neg;

	if (r->nan || (r->pinf && r->ninf))
		return dtype == SHR_DTYPE_BFLOAT16 ? 0x7fc0u : 0x7e00u;
	if (r->pinf)
		return inf;
	if (r->ninf)
		return 0x8000u | inf;
	neg = ref_odd(r, &v, &e);
	if (neg < 0)
		return r->terms != 0 && r->negz_only ? 0x8000u : 0u;
	x = ldexpl((long double)v, e);
	if (x >= h_value(inf, dtype))
		return (uint16_t)(neg << 15 | inf);
	while (hi - lo > 1) {	/* h_value(lo) <= x < h_value(hi) */
		mid = (uint16_t)((lo + hi) / 2);
		if (h_value(mid, dtype) <= x)
			lo = mid;
		else
			hi = mid;
	}
	dl = x - h_value(lo, dtype);
	dh = h_value(hi, dtype) - x;
	return (uint16_t)(neg << 15 | (dl < dh || (dl == dh && (lo & 1u) == 0) ? lo : hi));
}

#endif /* SHR_POOL_EXACT_TEST_H */
