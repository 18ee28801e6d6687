/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Unit tests of the pool's exact accumulator (reproducible float sums, shr_pool.h) against
 * references computed here by other means: the float32 addition of the hardware (a sum of
 * two floats is IEEE-rounded exactly once, so it must agree bit for bit), and for more terms
 * a big integer of 32-bit digits held in int64_t (carries deferred to the end, terms decoded
 * with frexpf) rounded through a round-to-odd 64-bit integer and the hardware's
 * uint64 -> float conversion. Then the pool's exact slots: range allocation, and the same
 * contributions in many shuffled orders giving the same bytes (while a streaming slot does
 * not), for float32, float16 and bfloat16, each rounded once from the exact sum (float16 and
 * bfloat16 against a bisection over their patterns here, not through float32).
 */

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

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t
rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t
fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float
bitsf(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static int
is_nan_bits(uint32_t u)
{
	return (u & 0x7fffffffu) > 0x7f800000u;
}

/* A random finite float32 with a uniformly random exponent field (0..254). */
static uint32_t
rnd_finite(void)
{
	uint64_t r = rnd();
	uint32_t e = (uint32_t)((r >> 40) % 255u);

	return (uint32_t)(r & 0x807fffffu) | e << 23;
}

/* A random finite float32 whose exponent is within spread binades of 2^0. */
static uint32_t
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

static void
ref_clear(struct ref *r)
{
	memset(r, 0, sizeof(*r));
	r->negz_only = 1;
}

static void
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
static int
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
static uint32_t
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
static long double
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
static uint16_t
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

/* Sum terms with shr_pool_xsum, in the given order. */
static uint32_t
xsum_of(const uint32_t *t, uint32_t n)
{
	struct shr_pool_xsum x;
	uint32_t i;

	shr_pool_xsum_clear(&x);
	for (i = 0; i < n; i++)
		shr_pool_xsum_add(&x, t[i]);
	return shr_pool_xsum_f32(&x);
}

static uint32_t
ref_of(const uint32_t *t, uint32_t n)
{
	struct ref r;
	uint32_t i;

	ref_clear(&r);
	for (i = 0; i < n; i++)
		ref_add(&r, t[i]);
	return ref_round(&r);
}

static void
shuffle32(uint32_t *v, uint32_t n)
{
	uint32_t i, j, t;

	for (i = n; i > 1; i--) {
		j = (uint32_t)(rnd() % i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* Two terms: exactly the hardware's IEEE float32 addition (default rounding, no FTZ). */
static void
test_pairs_vs_hardware(void **state)
{
	uint32_t i, t[2], got, want, nonzero = 0;

	(void)state;
	for (i = 0; i < 400000; i++) {
		switch (i % 4) {
		case 0:	/* any exponents: mostly one term dwarfs the other */
			t[0] = rnd_finite();
			t[1] = rnd_finite();
			break;
		case 1:	/* close exponents: carries, cancellation, ties */
			t[0] = rnd_near(30);
			t[1] = rnd_near(30);
			break;
		case 2:	/* subnormals and the smallest normals */
			t[0] = (uint32_t)(rnd() & 0x80ffffffu);
			t[1] = (uint32_t)(rnd() & 0x80ffffffu);
			break;
		default:	/* near the top: overflow to infinity */
			t[0] = (uint32_t)(rnd() & 0x807fffffu) |
			       (250u + (uint32_t)(rnd() % 5)) << 23;
			t[1] = (uint32_t)(rnd() & 0x807fffffu) |
			       (250u + (uint32_t)(rnd() % 5)) << 23;
			break;
		}
		want = fbits(bitsf(t[0]) + bitsf(t[1]));
		got = xsum_of(t, 2);
		if (got != want)
			fail_msg("%08x + %08x: got %08x want %08x", t[0], t[1], got, want);
		nonzero += (want & 0x7fffffffu) != 0;
		assert_int_equal(ref_of(t, 2), want);	/* the reference agrees too */
	}
	assert_true(nonzero > 390000);
}

/* Special values, zeros, ties and overflow, by hand. */
static void
test_specials(void **state)
{
	static const struct {
		uint32_t t[4];
		uint32_t n;
		uint32_t want;
	} c[] = {
		{ { 0 }, 0, 0x00000000u },				/* no term: +0 */
		{ { 0x80000000u }, 1, 0x80000000u },			/* -0 */
		{ { 0x80000000u, 0x80000000u, 0x80000000u }, 3, 0x80000000u },
		{ { 0x80000000u, 0x00000000u }, 2, 0x00000000u },	/* -0 + +0 */
		{ { 0x3f800000u, 0xbf800000u }, 2, 0x00000000u },	/* 1 + -1 = +0 */
		{ { 0xbf800000u, 0x3f800000u, 0x80000000u }, 3, 0x00000000u },
		{ { 0x7f800000u, 0x3f800000u }, 2, 0x7f800000u },	/* inf + 1 */
		{ { 0xff800000u, 0x7f7fffffu }, 2, 0xff800000u },	/* -inf + max */
		{ { 0x7f800000u, 0xff800000u }, 2, 0x7fc00000u },	/* inf - inf */
		{ { 0x7fc00001u, 0x3f800000u }, 2, 0x7fc00000u },	/* NaN (payload dropped) */
		{ { 0xff800001u, 0x7f800000u }, 2, 0x7fc00000u },	/* sNaN + inf */
		/* signalling NaNs (quiet bit clear) are NaNs too, not infinities */
		{ { 0x7f800001u, 0x3f800000u }, 2, 0x7fc00000u },
		{ { 0x3f800000u, 0xffbfffffu }, 2, 0x7fc00000u },
		{ { 0x7fa00000u }, 1, 0x7fc00000u },
		{ { 0xff800001u, 0xff800000u }, 2, 0x7fc00000u },	/* -sNaN + -inf */
		{ { 0x7f7fffffu, 0x7f7fffffu }, 2, 0x7f800000u },	/* max + max: inf */
		{ { 0xff7fffffu, 0xff7fffffu }, 2, 0xff800000u },
		/* max + half an ulp: a tie, max is odd: inf */
		{ { 0x7f7fffffu, 0x73000000u }, 2, 0x7f800000u },
		{ { 0x7f7fffffu, 0x72ffffffu }, 2, 0x7f7fffffu },	/* just below the tie */
		/* overflow, then back in range: the exact sum never overflows on the way */
		{ { 0x7f7fffffu, 0x7f7fffffu, 0xff7fffffu }, 3, 0x7f7fffffu },
		{ { 0x3f800000u, 0x33800000u }, 2, 0x3f800000u },	/* 1 + 2^-24: tie to even */
		{ { 0x3f800001u, 0x33800000u }, 2, 0x3f800002u },	/* odd: up */
		{ { 0x3f800000u, 0x33800000u, 0x1f800000u }, 3, 0x3f800001u }, /* + 2^-64: above */
		{ { 0x3f800000u, 0x33800000u, 0x9f800000u }, 3, 0x3f800000u }, /* - 2^-64: below */
		{ { 0x00000001u, 0x00000001u }, 2, 0x00000002u },	/* subnormals add exactly */
		{ { 0x007fffffu, 0x00000001u }, 2, 0x00800000u },	/* into the normals */
		{ { 0x00800000u, 0x80000001u }, 2, 0x007fffffu },	/* and back */
		{ { 0x3f800000u, 0x00000001u, 0xbf800000u }, 3, 0x00000001u }, /* 1 + tiny - 1 */
	};
	uint32_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint32_t got = xsum_of(c[i].t, c[i].n), ref = ref_of(c[i].t, c[i].n);

		if (got != c[i].want || ref != c[i].want)
			fail_msg("case %u: got %08x ref %08x want %08x", i, got, ref, c[i].want);
	}
}

/* Many terms of every kind against the big-integer reference, in shuffled orders. */
static void
test_many_vs_reference(void **state)
{
	uint32_t t[300], n, i, k, trial, want, got, order_differs = 0;

	(void)state;
	for (trial = 0; trial < 3000; trial++) {
		n = 1 + (uint32_t)(rnd() % 300);
		for (i = 0; i < n; i++) {
			switch ((trial + i) % 5) {
			case 0:
				t[i] = rnd_finite();
				break;
			case 1:
			case 2:
				t[i] = rnd_near(trial % 60);
				break;
			case 3:
				t[i] = (uint32_t)(rnd() & 0x80ffffffu);	/* tiny */
				break;
			default:	/* cancel an earlier term */
				t[i] = i != 0 ? t[rnd() % i] ^ 0x80000000u : rnd_finite();
				break;
			}
		}
		want = ref_of(t, n);
		for (k = 0; k < 5; k++) {
			float seq = 0;

			got = xsum_of(t, n);
			if (got != want)
				fail_msg("trial %u (n %u, order %u): got %08x want %08x", trial, n,
					 k, got, want);
			for (i = 0; i < n; i++)
				seq += bitsf(t[i]);
			order_differs += fbits(seq) != want;
			shuffle32(t, n);
		}
	}
	/* the inputs are such that summing in float32 does depend on the order */
	assert_true(order_differs > 1000);
}

/* A pool with 2 normal and 3 exact slots: the range allocator keeps the kinds apart. */
static void
test_exact_ranges(void **state)
{
	struct shr_pool_params pp = { .nslots = 5, .max_elems = 16, .max_world = 8,
				      .exact_slots = 3 };
	struct shr_pool *p;
	int a, b;

	(void)state;
	pp.exact_slots = 6;
	assert_null(shr_pool_create(&pp));
	assert_int_equal(errno, EINVAL);
	pp.exact_slots = 3;
	p = shr_pool_create(&pp);
	assert_non_null(p);
	assert_int_equal(shr_pool_free_slots(p, 0), 2);
	assert_int_equal(shr_pool_free_slots(p, 1), 3);
	assert_int_equal(shr_pool_range_alloc(p, 3), -ENOSPC);
	a = shr_pool_range_alloc_exact(p, 2);
	assert_int_equal(a, 2);
	assert_int_equal(shr_pool_range_alloc_exact(p, 2), -ENOSPC);
	b = shr_pool_range_alloc(p, 2);
	assert_int_equal(b, 0);
	assert_int_equal(shr_pool_free_slots(p, 0), 0);
	assert_int_equal(shr_pool_free_slots(p, 1), 1);
	assert_int_equal(shr_pool_range_alloc(p, 1), -ENOSPC);
	assert_int_equal(shr_pool_range_alloc_exact(p, 1), 4);
	assert_int_equal(shr_pool_used(p), 5);
	assert_int_equal(shr_pool_range_free(p, 2, 2), 0);
	assert_int_equal(shr_pool_free_slots(p, 1), 2);
	assert_int_equal(shr_pool_range_free(p, 0, 2), 0);
	assert_int_equal(shr_pool_free_slots(p, 0), 2);
	assert_int_equal(shr_pool_used(p), 1);
	shr_pool_free(p);
}

#define W 6		/* ranks */
#define N 512		/* elements */
#define ORDERS 20

static void
put16(uint8_t *d, uint16_t x)
{
	d[0] = (uint8_t)x;
	d[1] = (uint8_t)(x >> 8);
}

static void
put32(uint8_t *d, uint32_t x)
{
	put16(d, (uint16_t)x);
	put16(d + 2, (uint16_t)(x >> 16));
}

/*
 * The rank inputs, in the dtype's wire format: values of random exponents (float16/bfloat16:
 * random finite 16-bit patterns), a few specials at fixed places.
 */
static void
mk_inputs(uint8_t in[W][N * 4], unsigned int dtype)
{
	uint32_t r, i;

	for (r = 0; r < W; r++) {
		for (i = 0; i < N; i++) {
			if (dtype == SHR_DTYPE_FLOAT32) {
				put32(in[r] + 4 * i,
				      i % 2 ? rnd_near(40) : rnd_finite() & 0xbfffffffu);
			} else {
				uint16_t h = (uint16_t)rnd();

				if (dtype == SHR_DTYPE_FLOAT16)	/* exponent < 31 */
					h = (uint16_t)(h & 0xbbffu);
				else
					h = (uint16_t)((h & 0x807fu) |
						       (0x3000u + (rnd() % 0x1000)));
				put16(in[r] + 2 * i, h);
			}
		}
	}
	/* element 0: -0 everywhere; element 1: one +inf; element 2: +inf and -inf */
	for (r = 0; r < W; r++) {
		if (dtype == SHR_DTYPE_FLOAT32) {
			put32(in[r], 0x80000000u);
		} else {
			put16(in[r], 0x8000u);
		}
	}
	/*
	 * element 3: big, -big and 1 from ranks 0, 1, 2: a float32 running sum keeps the 1 only
	 * when it comes after both bigs (or before both), so the order shows
	 */
	if (dtype == SHR_DTYPE_FLOAT32) {
		put32(in[0] + 12, 0x71800000u);
		put32(in[1] + 12, 0xf1800000u);
		put32(in[2] + 12, 0x3f800000u);
	} else {
		put16(in[0] + 6, dtype == SHR_DTYPE_FLOAT16 ? 0x7800u : 0x7180u);
		put16(in[1] + 6, dtype == SHR_DTYPE_FLOAT16 ? 0xf800u : 0xf180u);
		put16(in[2] + 6, dtype == SHR_DTYPE_FLOAT16 ? 0x0001u : 0x3f80u);
	}
	for (r = 3; r < W; r++) {
		if (dtype == SHR_DTYPE_FLOAT32)
			put32(in[r] + 12, 0);
		else
			put16(in[r] + 6, 0);
	}
	if (dtype == SHR_DTYPE_FLOAT32) {
		put32(in[1] + 4, 0x7f800000u);
		put32(in[2] + 8, 0x7f800000u);
		put32(in[4] + 8, 0xff800000u);
	}
}

/*
 * Feed the W contributions of one round to slot in the given rank order; write the result.
 * Returns whether the round was exact.
 */
static int
run_round(struct shr_pool *p, uint32_t slot, uint8_t ver, unsigned int dtype,
	  uint8_t in[W][N * 4], const uint16_t *order, uint8_t *out)
{
	struct shr_pool_contrib c = {
		.slot = slot, .ver = ver, .dtype = (uint8_t)dtype, .op = SHR_OP_SUM,
		.world = W, .count = N, .tensor = 1, .step = 2, .offset = 0,
	};
	struct shr_pool_round rd;
	uint32_t k;

	for (k = 0; k < W; k++) {
		c.rank = order[k];
		c.payload = in[order[k]];
		assert_int_equal(shr_pool_contribute(p, &c, &rd),
				 k + 1 < W ? SHR_POOL_PARTIAL : SHR_POOL_COMPLETE);
	}
	assert_int_equal(shr_pool_result_write(&rd, out), N * shr_proto_dtype_size(dtype));
	return rd.exact;
}

static void
shuffle16(uint16_t *v, uint32_t n)
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

/*
 * W ranks' contributions in 20 shuffled orders: an exact slot gives the same bytes every
 * time, equal to the reference rounded once (then to the wire type); a streaming slot gives
 * at least two different results for the same inputs.
 */
static void
shuffled_orders(unsigned int dtype)
{
	static uint8_t in[W][N * 4], out[ORDERS][N * 4], sout[ORDERS][N * 4];
	struct shr_pool_params pp = { .nslots = 4, .max_elems = N, .max_world = W,
				      .exact_slots = 2 };
	uint32_t esize = (uint32_t)shr_proto_dtype_size(dtype), k, i, r, distinct = 0;
	uint16_t order[W];
	struct shr_pool *p;

	p = shr_pool_create(&pp);
	assert_non_null(p);
	mk_inputs(in, dtype);
	for (k = 0; k < W; k++)
		order[k] = (uint16_t)k;
	for (k = 0; k < ORDERS; k++) {
		shuffle16(order, W);
		/* exact slot 3, streaming slot 0; alternate versions as the endpoint does */
		assert_true(run_round(p, 3, (uint8_t)(k & 1), dtype, in, order, out[k]));
		assert_false(run_round(p, 0, (uint8_t)(k & 1), dtype, in, order, sout[k]));
		/* the next round on this copy must find it fresh: reset both slots */
		shr_pool_slot_reset(p, 3);
		shr_pool_slot_reset(p, 0);
		if (memcmp(out[k], out[0], N * esize) != 0)
			fail_msg("dtype %u: order %u gave other bytes than order 0", dtype, k);
		distinct += memcmp(sout[k], sout[0], N * esize) != 0;
	}
	assert_true(distinct > 0);
	/* the exact result is the reference, element by element */
	for (i = 0; i < N; i++) {
		struct ref ref;
		uint32_t want, got;

		ref_clear(&ref);
		for (r = 0; r < W; r++) {
			float f;

			if (dtype == SHR_DTYPE_FLOAT32) {
				f = bitsf((uint32_t)in[r][4 * i] | (uint32_t)in[r][4 * i + 1] << 8 |
					  (uint32_t)in[r][4 * i + 2] << 16 |
					  (uint32_t)in[r][4 * i + 3] << 24);
			} else {
				uint16_t h = (uint16_t)(in[r][2 * i] | in[r][2 * i + 1] << 8);

				if (dtype == SHR_DTYPE_BFLOAT16) {
					f = bitsf((uint32_t)h << 16);
				} else {
					/* binary16 -> float, independently of the pool's code */
					int e = (h >> 10) & 0x1f, m = h & 0x3ff;

					f = e == 0 ? ldexpf((float)m, -24) :
					    ldexpf((float)(m | 0x400), e - 25);
					if (h & 0x8000u)
						f = -f;
				}
			}
			ref_add(&ref, fbits(f));
		}
		want = ref_round(&ref);
		if (dtype == SHR_DTYPE_FLOAT32) {
			got = (uint32_t)out[0][4 * i] | (uint32_t)out[0][4 * i + 1] << 8 |
			      (uint32_t)out[0][4 * i + 2] << 16 | (uint32_t)out[0][4 * i + 3] << 24;
			if (got != want && !(is_nan_bits(got) && is_nan_bits(want)))
				fail_msg("element %u: got %08x want %08x", i, got, want);
		} else {
			/* float16, bfloat16: rounded once from the exact sum, not via float32 */
			got = (uint32_t)(out[0][2 * i] | out[0][2 * i + 1] << 8);
			if (got != ref_round16(&ref, dtype))
				fail_msg("dtype %u element %u: got %04x want %04x", dtype, i, got,
					 ref_round16(&ref, dtype));
		}
	}
	assert_int_equal(out[0][0] | out[0][1] << 8, dtype == SHR_DTYPE_FLOAT32 ? 0 : 0x8000);
	shr_pool_free(p);
}

static void
test_shuffled_f32(void **state)
{
	(void)state;
	shuffled_orders(SHR_DTYPE_FLOAT32);
}

static void
test_shuffled_f16(void **state)
{
	(void)state;
	shuffled_orders(SHR_DTYPE_FLOAT16);
}

static void
test_shuffled_bf16(void **state)
{
	(void)state;
	shuffled_orders(SHR_DTYPE_BFLOAT16);
}

/*
 * Sums that rounding through float32 gets wrong: 1 + 2^-11 + 2^-24 in float16 (1 + 2^-8 +
 * 2^-24 in bfloat16) lies just above the midpoint between 1 and the next value; the 2^-24 is
 * half a float32 ulp at 1, so float32 rounds the sum onto the midpoint (ties to even), and
 * the second rounding then goes to even, down to 1. Rounded once it is 1 + ulp. With the
 * boundaries around them: float16's overflow (65504 + 16 = 65520, the midpoint to 65536:
 * infinity; + 15.984375 stays 65504), an exact midpoint (ties to even both ways), negatives,
 * and a sum below the midpoint. Through the pool's exact slot, every rank order.
 */
static void
test_round_once_16(void **state)
{
	static const struct {
		uint8_t dtype;
		uint16_t t[3], want;
	} c[] = {
		{ SHR_DTYPE_FLOAT16, { 0x3c00, 0x1000, 0x0001 }, 0x3c01 },
		{ SHR_DTYPE_FLOAT16, { 0xbc00, 0x9000, 0x8001 }, 0xbc01 },
		{ SHR_DTYPE_FLOAT16, { 0x3c00, 0x1000, 0x0000 }, 0x3c00 },	/* tie: even */
		{ SHR_DTYPE_FLOAT16, { 0x3c01, 0x1000, 0x0000 }, 0x3c02 },	/* tie: even */
		{ SHR_DTYPE_FLOAT16, { 0x3c00, 0x1000, 0x8001 }, 0x3c00 },	/* below */
		{ SHR_DTYPE_FLOAT16, { 0x7bff, 0x4c00, 0x0000 }, 0x7c00 },	/* 65520: inf */
		{ SHR_DTYPE_FLOAT16, { 0x7bff, 0x4bff, 0x0000 }, 0x7bff },
		{ SHR_DTYPE_FLOAT16, { 0xfbff, 0xcc00, 0x0000 }, 0xfc00 },
		{ SHR_DTYPE_BFLOAT16, { 0x3f80, 0x3b80, 0x3380 }, 0x3f81 },
		{ SHR_DTYPE_BFLOAT16, { 0xbf80, 0xbb80, 0xb380 }, 0xbf81 },
		{ SHR_DTYPE_BFLOAT16, { 0x3f80, 0x3b80, 0x0000 }, 0x3f80 },	/* tie: even */
		{ SHR_DTYPE_BFLOAT16, { 0x7f7f, 0x7b00, 0x0000 }, 0x7f80 },	/* max + ulp/2 */
	};
	static uint8_t in[W][N * 4], out[N * 4];
	struct shr_pool_params pp = { .nslots = 2, .max_elems = N, .max_world = W,
				      .exact_slots = 1 };
	uint16_t order[W];
	struct shr_pool *p;
	uint32_t i, k, r;

	(void)state;
	p = shr_pool_create(&pp);
	assert_non_null(p);
	for (k = 0; k < W; k++)
		order[k] = (uint16_t)k;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(in, 0, sizeof(in));
		for (r = 0; r < 3; r++)
			put16(in[r], c[i].t[r]);	/* element 0; the other ranks add +0 */
		for (k = 0; k < 6; k++) {
			shuffle16(order, W);
			assert_true(run_round(p, 1, (uint8_t)(k & 1), c[i].dtype, in, order, out));
			shr_pool_slot_reset(p, 1);
			if ((uint16_t)(out[0] | out[1] << 8) != c[i].want)
				fail_msg("case %u: %04x + %04x + %04x gave %04x, want %04x", i,
					 c[i].t[0], c[i].t[1], c[i].t[2], out[0] | out[1] << 8,
					 c[i].want);
		}
	}
	shr_pool_free(p);
}

/* In an exact slot only float SUM is exact: MIN, MAX, PROD, int32 and relays are not. */
static void
test_exact_which_rounds(void **state)
{
	struct shr_pool_params pp = { .nslots = 2, .max_elems = 4, .max_world = 2,
				      .exact_slots = 1 };
	struct shr_pool_contrib c = {
		.slot = 1, .ver = 0, .world = 2, .count = 4, .tensor = 1, .step = 1,
	};
	static const struct {
		uint8_t dtype, op, kind, exact;
	} k[] = {
		{ SHR_DTYPE_FLOAT32, SHR_OP_SUM, SHR_KIND_ALLREDUCE, 1 },
		{ SHR_DTYPE_FLOAT16, SHR_OP_SUM, SHR_KIND_REDUCE, 1 },
		{ SHR_DTYPE_BFLOAT16, SHR_OP_SUM, SHR_KIND_REDUCE_SCATTER, 1 },
		{ SHR_DTYPE_FLOAT32, SHR_OP_MIN, SHR_KIND_ALLREDUCE, 0 },
		{ SHR_DTYPE_FLOAT32, SHR_OP_MAX, SHR_KIND_ALLREDUCE, 0 },
		{ SHR_DTYPE_FLOAT32, SHR_OP_PROD, SHR_KIND_ALLREDUCE, 0 },
		{ SHR_DTYPE_INT32, SHR_OP_SUM, SHR_KIND_ALLREDUCE, 0 },
		{ SHR_DTYPE_FLOAT32, SHR_OP_SUM, SHR_KIND_ALLGATHER, 0 },
	};
	uint8_t a[16], b[16], out[16];
	struct shr_pool_round rd;
	struct shr_pool *p;
	uint32_t i, v;

	(void)state;
	p = shr_pool_create(&pp);
	assert_non_null(p);
	for (i = 0; i < 4; i++) {
		put32(a + 4 * i, fbits(3.0f));
		put32(b + 4 * i, fbits(0.5f));
	}
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		c.dtype = k[i].dtype;
		c.op = k[i].op;
		c.kind = k[i].kind;
		c.step = i;
		c.rank = 0;
		c.payload = a;
		assert_int_equal(shr_pool_contribute(p, &c, &rd), SHR_POOL_PARTIAL);
		c.rank = 1;
		c.payload = shr_proto_kind_relay(c.kind) ? NULL : b;
		assert_int_equal(shr_pool_contribute(p, &c, &rd), SHR_POOL_COMPLETE);
		assert_int_equal(rd.exact, k[i].exact);
		shr_pool_result_write(&rd, out);
		if (c.dtype == SHR_DTYPE_FLOAT32 && c.op == SHR_OP_SUM) {
			v = (uint32_t)out[0] | (uint32_t)out[1] << 8 | (uint32_t)out[2] << 16 |
			    (uint32_t)out[3] << 24;
			assert_int_equal(v, shr_proto_kind_relay(c.kind) ? fbits(3.0f) :
					    fbits(3.5f));
		}
		shr_pool_slot_reset(p, 1);
	}
	shr_pool_free(p);
}

/*
 * A reproducible sum is the sum of its own round's inputs: after a round with a NaN, an
 * infinity of each sign and only -0 on a slot's copy, the next rounds on that copy (the
 * versions alternating as the endpoint sends them) are finite, and an all -0 element is -0
 * again only where every input of that round is -0.
 */
static void
test_exact_round_after_specials(void **state)
{
	struct shr_pool_params pp = { .nslots = 2, .max_elems = 4, .max_world = 2,
				      .exact_slots = 1 };
	struct shr_pool_contrib c = {
		.slot = 1, .dtype = SHR_DTYPE_FLOAT32, .op = SHR_OP_SUM, .world = 2, .count = 4,
		.tensor = 1, .kind = SHR_KIND_ALLREDUCE,
	};
	/*
	 * rank 0's and rank 1's inputs, round by round: NaN, +inf, -inf, -0 plus 1, 1, 1, -0;
	 * 3, 3, 3, 1 plus .5, .5, .5, -0; 3, 3, 3, -0 plus .5, .5, .5, -0
	 */
	static const uint32_t in[3][2][4] = {
		{ { 0x7fc00000u, 0x7f800000u, 0xff800000u, 0x80000000u },
		  { 0x3f800000u, 0x3f800000u, 0x3f800000u, 0x80000000u } },
		{ { 0x40400000u, 0x40400000u, 0x40400000u, 0x3f800000u },
		  { 0x3f000000u, 0x3f000000u, 0x3f000000u, 0x80000000u } },
		{ { 0x40400000u, 0x40400000u, 0x40400000u, 0x80000000u },
		  { 0x3f000000u, 0x3f000000u, 0x3f000000u, 0x80000000u } },
	};
	static const uint32_t want[3][4] = {
		{ 0x7fc00000u, 0x7f800000u, 0xff800000u, 0x80000000u },
		{ 0x40600000u, 0x40600000u, 0x40600000u, 0x3f800000u },	/* 3.5, 1 */
		{ 0x40600000u, 0x40600000u, 0x40600000u, 0x80000000u },	/* 3.5, -0 */
	};
	uint8_t a[16], b[16], out[16];
	struct shr_pool_round rd;
	struct shr_pool *p;
	uint32_t k, i, v;

	(void)state;
	p = shr_pool_create(&pp);
	assert_non_null(p);
	for (k = 0; k < 6; k++) {
		uint32_t n = k % 3;

		c.ver = (uint8_t)(k & 1);
		c.step = k;
		for (i = 0; i < 4; i++) {
			put32(a + 4 * i, in[n][0][i]);
			put32(b + 4 * i, in[n][1][i]);
		}
		c.rank = 0;
		c.payload = a;
		assert_int_equal(shr_pool_contribute(p, &c, &rd), SHR_POOL_PARTIAL);
		c.rank = 1;
		c.payload = b;
		assert_int_equal(shr_pool_contribute(p, &c, &rd), SHR_POOL_COMPLETE);
		assert_true(rd.exact);
		assert_int_equal(shr_pool_result_write(&rd, out), 16);
		for (i = 0; i < 4; i++) {
			v = (uint32_t)out[4 * i] | (uint32_t)out[4 * i + 1] << 8 |
			    (uint32_t)out[4 * i + 2] << 16 | (uint32_t)out[4 * i + 3] << 24;
			if (v != want[n][i] && !(is_nan_bits(v) && is_nan_bits(want[n][i])))
				fail_msg("round %u element %u: %08x, want %08x", k, i, v,
					 want[n][i]);
		}
	}
	shr_pool_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_vs_hardware),
		cmocka_unit_test(test_specials),
		cmocka_unit_test(test_many_vs_reference),
		cmocka_unit_test(test_exact_ranges),
		cmocka_unit_test(test_shuffled_f32),
		cmocka_unit_test(test_shuffled_f16),
		cmocka_unit_test(test_shuffled_bf16),
		cmocka_unit_test(test_round_once_16),
		cmocka_unit_test(test_exact_which_rounds),
		cmocka_unit_test(test_exact_round_after_specials),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
