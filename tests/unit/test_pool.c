/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Unit tests of the slot pool (lib/pool): verdicts, the two-copy algorithm across many rounds,
 * out-of-step refusals, argument checks, the range allocator, and every dtype/op against a
 * reference computed here (independently of the pool's own conversion code).
 */

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

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t
rnd32(void)
{
	return (uint32_t)(rnd() >> 32);
}

static void
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

static struct shr_pool *
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
static struct shr_pool_contrib
tmpl(uint32_t slot, uint8_t ver, uint16_t world, uint32_t count)
{
	struct shr_pool_contrib c = {
		.slot = slot, .ver = ver, .dtype = SHR_DTYPE_INT32, .op = SHR_OP_SUM,
		.rank = 0, .world = world, .count = count, .tensor = 7, .step = 3,
		.offset = 1000, .aux = 0, .payload = NULL,
	};
	return c;
}

static int
put(struct shr_pool *p, const struct shr_pool_contrib *t, uint16_t rank, const void *payload,
	struct shr_pool_round *r)
{
	struct shr_pool_contrib c = *t;

	c.rank = rank;
	c.payload = payload;
	return shr_pool_contribute(p, &c, r);
}

static void
le32(uint8_t *d, uint32_t x)
{
	d[0] = (uint8_t)x;
	d[1] = (uint8_t)(x >> 8);
	d[2] = (uint8_t)(x >> 16);
	d[3] = (uint8_t)(x >> 24);
}

static uint32_t
rd32(const uint8_t *s)
{
	return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
	       (uint32_t)s[3] << 24;
}

static void
le16(uint8_t *d, uint16_t x)
{
	d[0] = (uint8_t)x;
	d[1] = (uint8_t)(x >> 8);
}

static uint16_t
rd16(const uint8_t *s)
{
	return (uint16_t)(s[0] | s[1] << 8);
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

/* ---- reference conversions (double arithmetic; independent of the pool's bit tricks) ---- */

static double
ref_f16_decode(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v;

	if (e == 31)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -24);
	else
		v = ldexp(1024 + m, e - 25);
	return (h & 0x8000) ? -v : v;
}

static double
ref_bf16_decode(uint16_t h)
{
	int e = (h >> 7) & 255, m = h & 127;
	double v;

	if (e == 255)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -133);
	else
		v = ldexp(128 + m, e - 134);
	return (h & 0x8000) ? -v : v;
}

/*
 * Encode a finite or infinite non-NaN x into a format with `mbits` mantissa bits, exponent
 * bias `bias` and `ebits` exponent bits, rounding to nearest even (nearbyint in the default
 * rounding mode), by scaling to an integer number of quanta.
 */
static uint16_t
ref_encode(double x, int mbits, int bias, int ebits)
{
	uint16_t sign = signbit(x) ? 0x8000 : 0;
	uint32_t inf = ((1u << ebits) - 1) << mbits;
	double a = fabs(x), n;
	int e, q, qmin = 1 - bias - mbits;
	uint32_t bits;

	if (isinf(a))
		return (uint16_t)(sign | inf);
	if (a == 0)
		return sign;
	frexp(a, &e);		/* a = f * 2^e, 0.5 <= f < 1: leading bit is 2^(e-1) */
	q = e - 1 - mbits;
	if (q < qmin)
		q = qmin;
	n = nearbyint(ldexp(a, -q));	/* exact scaling, then RNE */
	if (q == qmin && n < ldexp(1, mbits)) {
		bits = (uint32_t)n;	/* subnormal (or zero) */
	} else {
		/* n in [2^mbits, 2^(mbits+1)]; 2^(mbits+1) carries into the exponent. */
		bits = ((uint32_t)(q + mbits + bias) << mbits) + (uint32_t)n -
		       (1u << mbits);
	}
	if (bits > inf)
		bits = inf;
	return (uint16_t)(sign | bits);
}

static uint16_t
ref_f16_encode(float f)
{
	return ref_encode(f, 10, 15, 5);
}

static uint16_t
ref_bf16_encode(float f)
{
	return ref_encode(f, 7, 127, 8);
}

/* ---- reference reductions ---- */

static uint32_t
ref_i32(uint32_t a, uint32_t b, unsigned int op)
{
	switch (op) {
	case SHR_OP_SUM:
		return a + b;
	case SHR_OP_MIN:
		return (int32_t)b < (int32_t)a ? b : a;
	case SHR_OP_MAX:
		return (int32_t)b > (int32_t)a ? b : a;
	default:
		return a * b;
	}
}

/* The documented float semantics: NaN propagates, -0 < +0. */
static float
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
static void
assert_same_float(float got, float want)
{
	if (isnan(want)) {
		assert_true(isnan(got));
		return;
	}
	assert_int_equal(fbits(got), fbits(want));
}

/* ---- creation and arguments ---- */

static void
test_create_einval(void **state)
{
	struct shr_pool_params pp = { .nslots = 4, .max_elems = 16, .max_world = 8 };
	struct shr_pool_params bad;

	(void)state;
	errno = 0;
	assert_null(shr_pool_create(NULL));
	assert_int_equal(errno, EINVAL);

	bad = pp;
	bad.nslots = 0;
	errno = 0;
	assert_null(shr_pool_create(&bad));
	assert_int_equal(errno, EINVAL);

	bad = pp;
	bad.nslots = (uint32_t)INT32_MAX + 1u;
	errno = 0;
	assert_null(shr_pool_create(&bad));
	assert_int_equal(errno, EINVAL);

	bad = pp;
	bad.max_elems = 0;
	errno = 0;
	assert_null(shr_pool_create(&bad));
	assert_int_equal(errno, EINVAL);

	bad = pp;
	bad.max_elems = UINT32_MAX;
	errno = 0;
	assert_null(shr_pool_create(&bad));
	assert_int_equal(errno, EINVAL);

	bad = pp;
	bad.max_world = 0;
	errno = 0;
	assert_null(shr_pool_create(&bad));
	assert_int_equal(errno, EINVAL);

	bad = pp;
	bad.max_world = SHR_PROTO_MAX_WORLD + 1;
	errno = 0;
	assert_null(shr_pool_create(&bad));
	assert_int_equal(errno, EINVAL);

	shr_pool_free(NULL);
}

static void
test_layout(void **state)
{
	static const uint16_t worlds[] = { 1, 63, 64, 65, 1024, 4096 };
	struct shr_pool_round r;
	uint32_t one = 1, s, k;
	unsigned int v;

	(void)state;
	for (k = 0; k < sizeof(worlds) / sizeof(worlds[0]); k++) {
		struct shr_pool *p = mkpool(5, 3, worlds[k]);
		struct shr_pool_contrib c = tmpl(0, 0, 1, 1);

		assert_int_equal(shr_pool_nslots(p), 5);
		assert_int_equal(shr_pool_used(p), 0);
		/* Slot records: whole cache lines, line-aligned, room for both bitmaps. */
		assert_int_equal((uintptr_t)p->slots % SHR_POOL_LINE, 0);
		assert_int_equal(p->slot_stride % SHR_POOL_LINE, 0);
		assert_int_equal(p->nwords, (worlds[k] + 63) / 64);
		assert_true(p->slot_stride >= sizeof(struct shr_pool_slot) +
					      2 * 8 * (size_t)p->nwords);
		/* Accumulators: 64-byte aligned, distinct lines for every (slot, version). */
		for (s = 0; s < 5; s++) {
			for (v = 0; v < 2; v++) {
				c.slot = s;
				c.ver = (uint8_t)v;
				c.payload = &one;
				assert_int_equal(shr_pool_contribute(p, &c, &r),
						 SHR_POOL_COMPLETE);
				assert_int_equal((uintptr_t)r.acc % 64, 0);
				assert_ptr_equal(r.acc, p->accs + (2 * s + v) * p->acc_stride);
			}
		}
		assert_true(p->acc_stride >= 64);
		assert_int_equal(p->acc_stride % 64, 0);
		shr_pool_free(p);
	}
}

static void
test_contribute_einval(void **state)
{
	struct shr_pool *p = mkpool(4, 8, 16);
	struct shr_pool_contrib good = tmpl(1, 0, 2, 8), c;
	struct shr_pool_round r;
	uint32_t a[8], b[8], out[8];
	unsigned int i;

	(void)state;
	for (i = 0; i < 8; i++) {
		a[i] = i + 1;
		b[i] = 100 * (i + 1);
	}
	good.payload = a;

#define BAD(field, value) do { \
		c = good; \
		c.field = value; \
		assert_int_equal(shr_pool_contribute(p, &c, &r), -EINVAL); \
	} while (0)
	BAD(slot, 4);
	BAD(slot, UINT32_MAX);
	BAD(ver, 2);
	BAD(world, 0);
	BAD(world, 17);
	BAD(rank, 2);
	BAD(rank, 2000);
	BAD(count, 0);
	BAD(count, 9);
	BAD(dtype, 0);
	BAD(dtype, SHR_DTYPE_MAX);
	BAD(dtype, 200);
	BAD(op, SHR_OP_MAX_);
	BAD(op, 99);
	BAD(payload, NULL);
	c = good;
	c.dtype = SHR_DTYPE_QINT32;
	c.op = SHR_OP_PROD;
	assert_int_equal(shr_pool_contribute(p, &c, &r), -EINVAL);
#undef BAD

	/* None of that changed anything: a clean round of 2 gives the exact sum. */
	assert_int_equal(put(p, &good, 0, a, &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &good, 1, b, &r), SHR_POOL_COMPLETE);
	assert_int_equal(shr_pool_result_write(&r, out), sizeof(out));
	for (i = 0; i < 8; i++)
		assert_int_equal(out[i], 101 * (i + 1));

	assert_int_equal(shr_pool_slot_reset(p, 4), -EINVAL);
	assert_int_equal(shr_pool_slot_reset(p, UINT32_MAX), -EINVAL);
	assert_int_equal(shr_pool_slot_reset(p, 3), 0);
	shr_pool_free(p);
}

/* ---- verdicts ---- */

static void
test_verdicts(void **state)
{
	struct shr_pool *p = mkpool(2, 4, 8);
	struct shr_pool_contrib t = tmpl(1, 0, 3, 4);
	struct shr_pool_round r, r2;
	int32_t x[3][4] = { { 1, 2, 3, 4 }, { 10, 20, 30, 40 }, { 100, 200, 300, 400 } };
	uint8_t res[16], res2[16];

	(void)state;
	memset(&r, 0xa5, sizeof(r));
	r2 = r;
	assert_int_equal(put(p, &t, 0, x[0], &r), SHR_POOL_PARTIAL);
	assert_memory_equal(&r, &r2, sizeof(r));	/* untouched unless a result */
	assert_int_equal(put(p, &t, 0, x[0], &r), SHR_POOL_DUPLICATE);
	/* A duplicate with other data is still a duplicate: nothing added. */
	assert_int_equal(put(p, &t, 0, x[2], &r), SHR_POOL_DUPLICATE);
	assert_int_equal(put(p, &t, 2, x[2], &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &t, 2, x[2], NULL), SHR_POOL_DUPLICATE);
	assert_int_equal(put(p, &t, 1, x[1], &r), SHR_POOL_COMPLETE);
	assert_int_equal(r.slot, 1);
	assert_int_equal(r.ver, 0);
	assert_int_equal(r.dtype, SHR_DTYPE_INT32);
	assert_int_equal(r.op, SHR_OP_SUM);
	assert_int_equal(r.world, 3);
	assert_int_equal(r.count, 4);
	assert_int_equal(r.tensor, 7);
	assert_int_equal(r.step, 3);
	assert_int_equal(r.offset, 1000);
	assert_int_equal(r.aux, 0);
	assert_int_equal(shr_pool_result_write(&r, res), 16);
	assert_int_equal(rd32(res), 111);
	assert_int_equal(rd32(res + 12), 444);

	/* Each rank may ask again: RESEND, the same bytes. */
	for (uint16_t k = 0; k < 3; k++) {
		memset(&r2, 0xa5, sizeof(r2));	/* same padding as r */
		assert_int_equal(put(p, &t, k, x[k], &r2), SHR_POOL_RESEND);
		assert_memory_equal(&r, &r2, sizeof(r));
		assert_int_equal(shr_pool_result_write(&r2, res2), 16);
		assert_memory_equal(res, res2, 16);
	}
	/* RESEND with a NULL round is allowed. */
	assert_int_equal(put(p, &t, 1, x[1], NULL), SHR_POOL_RESEND);
	/* The other slot is untouched: fresh. */
	t.slot = 0;
	assert_int_equal(put(p, &t, 0, x[0], &r2), SHR_POOL_PARTIAL);
	shr_pool_free(p);
}

static void
test_world_one(void **state)
{
	struct shr_pool *p = mkpool(1, 2, 1);
	struct shr_pool_contrib t = tmpl(0, 0, 1, 2);
	struct shr_pool_round r;
	uint32_t k, x[2], out[2];

	(void)state;
	for (k = 0; k < 100; k++) {
		x[0] = k;
		x[1] = ~k;
		t.ver = (uint8_t)(k & 1);
		t.step = k;
		assert_int_equal(put(p, &t, 0, x, &r), SHR_POOL_COMPLETE);
		assert_int_equal(r.ver, k & 1);
		assert_int_equal(r.step, k);
		shr_pool_result_write(&r, out);
		assert_int_equal(out[0], k);
		assert_int_equal(out[1], ~k);
		assert_int_equal(put(p, &t, 0, x, &r), SHR_POOL_RESEND);
		assert_int_equal(r.step, k);
	}
	shr_pool_free(p);
}

/* The first contributor overwrites: garbage from the previous round never leaks in. */
static void
test_first_overwrite(void **state)
{
	struct shr_pool *p = mkpool(1, 64, 4);
	struct shr_pool_contrib t = tmpl(0, 0, 2, 64);
	struct shr_pool_round r;
	int32_t a[64], b[64], big[64], out[64];
	float fa[64], fb[64], fbig[64], fout[64];
	unsigned int i, v;

	(void)state;
	for (i = 0; i < 64; i++) {
		a[i] = (int32_t)i - 7;
		b[i] = 3 * (int32_t)i;
		big[i] = 0x7fff0000 - (int32_t)i;
		fa[i] = (float)i * 0.25f;
		fb[i] = -(float)i;
		fbig[i] = 1e30f;
	}
	for (v = 0; v < 2; v++) {
		/* Round 1 leaves big sums in copy v; round 2 on copy 1-v moves everyone on. */
		t.ver = (uint8_t)v;
		t.step = 1;
		t.dtype = SHR_DTYPE_INT32;
		assert_int_equal(put(p, &t, 0, big, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t, 1, big, &r), SHR_POOL_COMPLETE);
		t.ver = (uint8_t)(v ^ 1);
		t.step = 2;
		assert_int_equal(put(p, &t, 0, big, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t, 1, big, &r), SHR_POOL_COMPLETE);
		/* Round 3 on copy v again: the accumulator holds garbage, result exact. */
		t.ver = (uint8_t)v;
		t.step = 3;
		assert_int_equal(put(p, &t, 1, a, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t, 0, b, &r), SHR_POOL_COMPLETE);
		shr_pool_result_write(&r, out);
		for (i = 0; i < 64; i++)
			assert_int_equal(out[i], a[i] + b[i]);
		/* A float round after an int round in the same copy, with a shorter count. */
		t.ver = (uint8_t)(v ^ 1);
		t.step = 4;
		assert_int_equal(put(p, &t, 0, big, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t, 1, big, &r), SHR_POOL_COMPLETE);
		t.ver = (uint8_t)v;
		t.step = 5;
		t.dtype = SHR_DTYPE_FLOAT32;
		t.count = 33;
		assert_int_equal(put(p, &t, 0, fa, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t, 1, fb, &r), SHR_POOL_COMPLETE);
		assert_int_equal(shr_pool_result_write(&r, fout), 33 * 4);
		for (i = 0; i < 33; i++)
			assert_same_float(fout[i], fa[i] + fb[i]);
		/* PROD and MIN too start from the first contribution, not from 0. */
		t.ver = (uint8_t)(v ^ 1);
		t.step = 6;
		assert_int_equal(put(p, &t, 0, fbig, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t, 1, fbig, &r), SHR_POOL_COMPLETE);
		t.ver = (uint8_t)v;
		t.step = 7;
		t.op = SHR_OP_PROD;
		assert_int_equal(put(p, &t, 0, fa, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t, 1, fb, &r), SHR_POOL_COMPLETE);
		shr_pool_result_write(&r, fout);
		for (i = 0; i < 33; i++)
			assert_same_float(fout[i], fa[i] * fb[i]);
		t.count = 64;
		t.op = SHR_OP_SUM;
		shr_pool_slot_reset(p, 0);
	}
	/* After a reset mid-round, the next contribution is a first one again. */
	t.dtype = SHR_DTYPE_INT32;
	t.ver = 0;
	assert_int_equal(put(p, &t, 0, big, &r), SHR_POOL_PARTIAL);
	assert_int_equal(shr_pool_slot_reset(p, 0), 0);
	assert_int_equal(put(p, &t, 0, a, &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &t, 1, b, &r), SHR_POOL_COMPLETE);
	shr_pool_result_write(&r, out);
	for (i = 0; i < 64; i++)
		assert_int_equal(out[i], a[i] + b[i]);
	shr_pool_free(p);
}

/*
 * Many rounds on one slot, alternating versions, every rank in a random order, with injected
 * duplicates (open round), lost-result retransmissions (previous round, rank not yet moved
 * on) and late copies (previous round, rank already moved on). Checks that the "clear my bit
 * in the other copy" rule lets copy v be reused two rounds later, and every sum.
 */
#define ROUNDS 1000
#define NEL 4

static void
run_rounds(uint16_t world)
{
	struct shr_pool *p = mkpool(3, NEL, world);
	struct shr_pool_contrib t = tmpl(2, 0, world, NEL);
	struct shr_pool_round r;
	uint32_t (*data)[NEL] = calloc(world, sizeof(*data));
	uint32_t (*prev)[NEL] = calloc(world, sizeof(*prev));
	uint16_t *order = calloc(world, sizeof(*order));
	uint8_t *done = calloc(world, 1);
	uint32_t sum[NEL], prevsum[NEL];
	uint8_t res[4 * NEL], prevres[4 * NEL], got[4 * NEL];
	uint32_t k, i, j, e;
	int ret;

	assert_non_null(data);
	assert_non_null(prev);
	assert_non_null(order);
	assert_non_null(done);
	for (i = 0; i < world; i++)
		order[i] = (uint16_t)i;
	for (k = 0; k < ROUNDS; k++) {
		t.ver = (uint8_t)(k & 1);
		t.step = k;
		t.offset = (uint64_t)k * NEL;
		memset(sum, 0, sizeof(sum));
		memset(done, 0, world);
		for (i = 0; i < world; i++)
			for (e = 0; e < NEL; e++) {
				data[i][e] = rnd32();
				sum[e] += data[i][e];
			}
		shuffle(order, world);
		for (i = 0; i < world; i++) {
			uint16_t rk = order[i];
			uint32_t pick = rnd32() % 16;

			if (pick == 0 && i > 0) {
				/* Duplicate of a rank already counted in this open round. */
				uint16_t dk = order[rnd32() % i];

				assert_int_equal(put(p, &t, dk, data[dk], &r),
						 SHR_POOL_DUPLICATE);
			} else if (pick == 1 && k > 0) {
				/*
				 * Previous round, from any rank: the ones not yet in this round
				 * lost the result (bit still set); the ones already in moved on
				 * (bit cleared, the round still owed to others). Both: RESEND.
				 */
				struct shr_pool_contrib pt = t;
				uint16_t pk = (uint16_t)(rnd32() % world);

				pt.ver ^= 1;
				pt.step = k - 1;
				pt.offset = (uint64_t)(k - 1) * NEL;
				ret = put(p, &pt, pk, prev[pk], &r);
				assert_int_equal(ret, SHR_POOL_RESEND);
				assert_int_equal(r.step, k - 1);
				shr_pool_result_write(&r, got);
				assert_memory_equal(got, prevres, sizeof(got));
			}
			ret = put(p, &t, rk, data[rk], &r);
			done[rk] = 1;
			if (i + 1 < world) {
				assert_int_equal(ret, SHR_POOL_PARTIAL);
				continue;
			}
			assert_int_equal(ret, SHR_POOL_COMPLETE);
			assert_int_equal(r.ver, k & 1);
			assert_int_equal(r.step, k);
			assert_int_equal(r.world, world);
			assert_int_equal(shr_pool_result_write(&r, res), sizeof(res));
			for (e = 0; e < NEL; e++)
				assert_int_equal(rd32(res + 4 * e), sum[e]);
		}
		/* After completion, a retransmission of this round gives the same bytes. */
		j = rnd32() % world;
		assert_int_equal(put(p, &t, (uint16_t)j, data[j], &r), SHR_POOL_RESEND);
		shr_pool_result_write(&r, got);
		assert_memory_equal(got, res, sizeof(got));
		memcpy(prev, data, world * sizeof(*data));
		memcpy(prevsum, sum, sizeof(sum));
		memcpy(prevres, res, sizeof(res));
		for (e = 0; e < NEL; e++)
			assert_int_equal(rd32(prevres + 4 * e), prevsum[e]);
	}
	free(done);
	free(order);
	free(prev);
	free(data);
	shr_pool_free(p);
}

static void
test_rounds_world1(void **state)
{
	(void)state;
	run_rounds(1);
}

static void
test_rounds_world2(void **state)
{
	(void)state;
	run_rounds(2);
}

static void
test_rounds_world3(void **state)
{
	(void)state;
	run_rounds(3);
}

static void
test_rounds_world64(void **state)
{
	(void)state;
	run_rounds(64);
}

static void
test_rounds_world1024(void **state)
{
	(void)state;
	run_rounds(1024);
}

static void
test_rounds_world4096(void **state)
{
	(void)state;
	run_rounds(4096);
}

/*
 * The pktgen property: a capture of two rounds (A on version 0, B on version 1) of all
 * members, replayed in a loop with identical identities, keeps aggregating correctly.
 */
static void
test_replay_loop(void **state)
{
	const uint16_t world = 5;
	struct shr_pool *p = mkpool(4, 8, 8);
	struct shr_pool_contrib ta = tmpl(3, 0, world, 8), tb = tmpl(3, 1, world, 8);
	struct shr_pool_round r;
	int32_t a[5][8], b[5][8], sa[8] = { 0 }, sb[8] = { 0 }, out[8];
	unsigned int loop, i, e;

	(void)state;
	tb.offset = ta.offset + 8;
	for (i = 0; i < world; i++)
		for (e = 0; e < 8; e++) {
			a[i][e] = (int32_t)(i * 10 + e);
			b[i][e] = -(int32_t)(i * 100 + e);
			sa[e] += a[i][e];
			sb[e] += b[i][e];
		}
	for (loop = 0; loop < 200; loop++) {
		for (i = 0; i < world; i++)
			assert_int_equal(put(p, &ta, (uint16_t)i, a[i], &r),
					 i + 1 < world ? SHR_POOL_PARTIAL : SHR_POOL_COMPLETE);
		shr_pool_result_write(&r, out);
		assert_memory_equal(out, sa, sizeof(out));
		for (i = 0; i < world; i++)
			assert_int_equal(put(p, &tb, (uint16_t)i, b[i], &r),
					 i + 1 < world ? SHR_POOL_PARTIAL : SHR_POOL_COMPLETE);
		shr_pool_result_write(&r, out);
		assert_memory_equal(out, sb, sizeof(out));
	}
	shr_pool_free(p);
}

/* A late copy of a completed round (its sender moved on) does not destroy the owed result. */
static void
test_late_copy(void **state)
{
	struct shr_pool *p = mkpool(1, 2, 4);
	struct shr_pool_contrib t0 = tmpl(0, 0, 2, 2), t1 = tmpl(0, 1, 2, 2);
	struct shr_pool_round r;
	int32_t a[2] = { 1, 2 }, b[2] = { 30, 40 }, out[2];
	int32_t x[2] = { 500, 600 };

	(void)state;
	t1.step = t0.step + 1;
	assert_int_equal(put(p, &t0, 0, a, &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &t0, 1, b, &r), SHR_POOL_COMPLETE);
	/* Rank 1's result is lost; rank 0 moves on to copy 1. */
	assert_int_equal(put(p, &t1, 0, x, &r), SHR_POOL_PARTIAL);
	/* A late duplicate of rank 0's round-0 DATA: answered, nothing changes. */
	assert_int_equal(put(p, &t0, 0, a, &r), SHR_POOL_RESEND);
	shr_pool_result_write(&r, out);
	assert_int_equal(out[0], 31);
	assert_int_equal(out[1], 42);
	/* Rank 0 a different round on copy 0 while the result is still owed: out of step. */
	t0.step = 99;
	assert_int_equal(put(p, &t0, 0, x, &r), SHR_POOL_OUT_OF_STEP);
	t0.step = t1.step - 1;
	/* Rank 1 retransmits: still gets the result. */
	assert_int_equal(put(p, &t0, 1, b, &r), SHR_POOL_RESEND);
	shr_pool_result_write(&r, out);
	assert_int_equal(out[0], 31);
	assert_int_equal(out[1], 42);
	/* Rank 0's bit in copy 1 is still set (the late copy did not clear it). */
	assert_int_equal(put(p, &t1, 0, x, &r), SHR_POOL_DUPLICATE);
	assert_int_equal(put(p, &t1, 1, x, &r), SHR_POOL_COMPLETE);
	shr_pool_result_write(&r, out);
	assert_int_equal(out[0], 1000);
	assert_int_equal(out[1], 1200);
	/* Copy 0 is now fresh: the next round starts there normally. */
	t0.step = t1.step + 1;
	assert_int_equal(put(p, &t0, 1, b, &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &t0, 0, b, &r), SHR_POOL_COMPLETE);
	shr_pool_result_write(&r, out);
	assert_int_equal(out[0], 60);
	assert_int_equal(out[1], 80);
	shr_pool_free(p);
}

/*
 * A stale copy of round j's DATA (copy 0) that arrives after round j + 1 (copy 1) completed
 * finds copy 0 fresh and opens a "replay" round (same identity as copy 0's last round). The
 * members' real round j + 2 must displace it, whichever member comes first, and the result
 * must hold round j + 2's data only.
 */
static void
test_stale_replay(void **state)
{
	struct shr_pool *p = mkpool(1, 2, 4);
	struct shr_pool_contrib tj = tmpl(0, 0, 2, 2), tj1 = tmpl(0, 1, 2, 2), tj2;
	struct shr_pool_round r;
	int32_t a[2] = { 1, 2 }, b[2] = { 30, 40 }, x[2] = { 500, 600 }, y[2] = { 7, 8 };
	int32_t out[2];
	unsigned int first;

	(void)state;
	tj.step = 6;
	tj1.step = 6;
	tj1.offset = tj.offset + 2;
	tj2 = tj;
	tj2.tensor++;
	tj2.step = 7;
	for (first = 0; first < 2; first++) {
		shr_pool_slot_reset(p, 0);
		assert_int_equal(put(p, &tj, 0, a, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &tj, 1, b, &r), SHR_POOL_COMPLETE);
		assert_int_equal(put(p, &tj1, 1, x, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &tj1, 0, x, &r), SHR_POOL_COMPLETE);
		/* Rank 0's stale round-j copy: copy 0 is fresh, so it opens a replay round. */
		assert_int_equal(put(p, &tj, 0, a, &r), SHR_POOL_PARTIAL);
		/* Round j + 2 displaces it, from rank `first` first. */
		assert_int_equal(put(p, &tj2, (uint16_t)first, y, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &tj2, (uint16_t)(first ^ 1), x, &r), SHR_POOL_COMPLETE);
		assert_int_equal(r.step, 7);
		shr_pool_result_write(&r, out);
		assert_int_equal(out[0], 507);
		assert_int_equal(out[1], 608);
		/* Round j into the complete copy 0 (bits set): out of step. */
		assert_int_equal(put(p, &tj, 1, b, &r), SHR_POOL_OUT_OF_STEP);
		/* A stale round j + 1 now finds copy 1 fresh: the same story one copy over. */
		assert_int_equal(put(p, &tj1, 0, x, &r), SHR_POOL_PARTIAL);
		tj1.step += 2;
		assert_int_equal(put(p, &tj1, 1, a, &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &tj1, 0, b, &r), SHR_POOL_COMPLETE);
		tj1.step -= 2;
		shr_pool_result_write(&r, out);
		assert_int_equal(out[0], 31);
		assert_int_equal(out[1], 42);
	}
	shr_pool_free(p);
}

/*
 * The stale copy above also cleared its sender's bit in copy 1, and round j + 2 then cleared
 * the other's, so copy 1 reads fresh although rank 0 never received round j + 1's result.
 * While copy 0 has an open round, no new round may start in copy 1: rank 0's retransmission
 * of round j + 1 gets the result (RESEND), anything else there is out of step.
 */
static void
test_stale_lost_result(void **state)
{
	struct shr_pool *p = mkpool(1, 2, 4);
	struct shr_pool_contrib tj = tmpl(0, 0, 3, 2), tj1 = tmpl(0, 1, 3, 2), tj2, bad;
	struct shr_pool_round r;
	int32_t a[2] = { 1, 2 }, x[2] = { 500, 600 }, y[2] = { 7, 8 }, out[2];

	(void)state;
	tj1.step = tj.step + 1;
	tj2 = tj;
	tj2.step = tj.step + 2;
	for (uint16_t k = 0; k < 3; k++)
		assert_int_equal(put(p, &tj, k, a, &r), k < 2 ? SHR_POOL_PARTIAL :
							    SHR_POOL_COMPLETE);
	for (uint16_t k = 0; k < 3; k++)
		assert_int_equal(put(p, &tj1, k, x, &r), k < 2 ? SHR_POOL_PARTIAL :
							    SHR_POOL_COMPLETE);
	/* Round j + 1's result is lost for rank 0. A stale copy of its round-j DATA: */
	assert_int_equal(put(p, &tj, 0, a, &r), SHR_POOL_PARTIAL);
	/* Ranks 1 and 2 go on to round j + 2 (displacing the replay round). */
	assert_int_equal(put(p, &tj2, 1, y, &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &tj2, 2, y, &r), SHR_POOL_PARTIAL);
	/* Copy 1 now has no bit set, but copy 0 is open: rank 0 still gets round j + 1. */
	assert_int_equal(put(p, &tj1, 0, x, &r), SHR_POOL_RESEND);
	assert_int_equal(r.step, tj1.step);
	shr_pool_result_write(&r, out);
	assert_int_equal(out[0], 1500);
	assert_int_equal(out[1], 1800);
	bad = tj1;
	bad.step += 2;
	assert_int_equal(put(p, &bad, 0, x, &r), SHR_POOL_OUT_OF_STEP);
	assert_int_equal(put(p, &tj1, 0, x, &r), SHR_POOL_RESEND);
	/* And rank 0 completes round j + 2 with exactly its data. */
	assert_int_equal(put(p, &tj2, 0, a, &r), SHR_POOL_COMPLETE);
	shr_pool_result_write(&r, out);
	assert_int_equal(out[0], 15);
	assert_int_equal(out[1], 18);
	/* After a reset, copy 1 holds no result: a first contribution there, copy 0 open. */
	shr_pool_slot_reset(p, 0);
	assert_int_equal(put(p, &tj, 0, a, &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &tj1, 1, x, &r), SHR_POOL_OUT_OF_STEP);
	shr_pool_free(p);
}

/* ---- out of step ---- */

enum field { F_TENSOR, F_STEP, F_OFFSET, F_COUNT, F_OP, F_AUX, F_DTYPE, F_WORLD, F_NFIELDS };

static void
alter(struct shr_pool_contrib *c, enum field f)
{
	switch (f) {
	case F_TENSOR:
		c->tensor++;
		break;
	case F_STEP:
		c->step++;
		break;
	case F_OFFSET:
		c->offset += 1ull << 40;
		break;
	case F_COUNT:
		c->count--;
		break;
	case F_OP:
		c->op = SHR_OP_MAX;
		break;
	case F_AUX:
		c->aux ^= 0x100;
		break;
	case F_DTYPE:
		c->dtype = SHR_DTYPE_QINT32;
		break;
	default:
		c->world++;
		break;
	}
}

static void
test_out_of_step(void **state)
{
	struct shr_pool *p = mkpool(2, 4, 8);
	struct shr_pool_contrib t0 = tmpl(1, 0, 3, 4), t1 = tmpl(1, 1, 3, 4), bad;
	struct shr_pool_round r;
	int32_t x[3][4] = { { 1, 2, 3, 4 }, { 10, 20, 30, 40 }, { 100, 200, 300, 400 } };
	int32_t junk[4] = { 7777, 7777, 7777, 7777 };
	int32_t out[4], prevres[4];
	unsigned int f, e;

	(void)state;
	t0.aux = 5;
	t1.aux = 5;
	/* Round 0 on copy 0, complete. */
	assert_int_equal(put(p, &t0, 0, x[0], &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &t0, 1, x[1], &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &t0, 2, x[2], &r), SHR_POOL_COMPLETE);
	shr_pool_result_write(&r, prevres);

	for (f = 0; f < F_NFIELDS; f++) {
		t1.step = 10 + f;
		/* Open round on copy 1: rank 0 names it. */
		assert_int_equal(put(p, &t1, 0, x[0], &r), SHR_POOL_PARTIAL);
		/* Rank 1 with one field different: refused. */
		bad = t1;
		alter(&bad, (enum field)f);
		memset(&r, 0, sizeof(r));
		assert_int_equal(put(p, &bad, 1, junk, &r), SHR_POOL_OUT_OF_STEP);
		/* Duplicate of rank 0 with a different identity: refused too. */
		assert_int_equal(put(p, &bad, 0, junk, &r), SHR_POOL_OUT_OF_STEP);
		/* Retransmission to the complete copy 0 with a different identity. */
		bad = t0;
		alter(&bad, (enum field)f);
		assert_int_equal(put(p, &bad, 2, junk, &r), SHR_POOL_OUT_OF_STEP);
		/* Nothing changed: rank 1's bit in copy 0 still set (so RESEND)... */
		assert_int_equal(put(p, &t0, 1, x[1], &r), SHR_POOL_RESEND);
		shr_pool_result_write(&r, out);
		assert_memory_equal(out, prevres, sizeof(out));
		/* ...its bit in copy 1 still clear (counted now), junk not added. */
		assert_int_equal(put(p, &t1, 1, x[1], &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t1, 2, x[2], &r), SHR_POOL_COMPLETE);
		assert_int_equal(r.step, 10 + f);
		assert_int_equal(r.aux, 5);
		shr_pool_result_write(&r, out);
		for (e = 0; e < 4; e++)
			assert_int_equal(out[e], x[0][e] + x[1][e] + x[2][e]);
		/* Round on copy 0 again (fresh now), to return to the same starting state. */
		t0.step = 100 + f;
		assert_int_equal(put(p, &t0, 2, x[2], &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t0, 0, x[0], &r), SHR_POOL_PARTIAL);
		assert_int_equal(put(p, &t0, 1, x[1], &r), SHR_POOL_COMPLETE);
		shr_pool_result_write(&r, prevres);
	}
	shr_pool_free(p);
}

/* ---- range allocator ---- */

static void
test_range(void **state)
{
	struct shr_pool *p = mkpool(10, 2, 4);
	struct shr_pool_contrib t;
	struct shr_pool_round r;
	int32_t a[2] = { 5, 6 }, out[2];
	int b0, b1, b2, b3;

	(void)state;
	assert_int_equal(shr_pool_range_alloc(p, 0), -EINVAL);
	assert_int_equal(shr_pool_range_alloc(p, 11), -EINVAL);
	b0 = shr_pool_range_alloc(p, 3);
	b1 = shr_pool_range_alloc(p, 4);
	b2 = shr_pool_range_alloc(p, 2);
	assert_int_equal(b0, 0);
	assert_int_equal(b1, 3);
	assert_int_equal(b2, 7);
	assert_int_equal(shr_pool_used(p), 9);
	assert_int_equal(shr_pool_range_alloc(p, 2), -ENOSPC);
	b3 = shr_pool_range_alloc(p, 1);
	assert_int_equal(b3, 9);
	assert_int_equal(shr_pool_range_alloc(p, 1), -ENOSPC);

	/* Bad frees: not exactly a reserved range. */
	assert_int_equal(shr_pool_range_free(p, 3, 3), -EINVAL);	/* shorter */
	assert_int_equal(shr_pool_range_free(p, 3, 5), -EINVAL);	/* longer */
	assert_int_equal(shr_pool_range_free(p, 4, 3), -EINVAL);	/* inside */
	assert_int_equal(shr_pool_range_free(p, 3, 0), -EINVAL);
	assert_int_equal(shr_pool_range_free(p, 10, 1), -EINVAL);
	assert_int_equal(shr_pool_range_free(p, 9, UINT32_MAX), -EINVAL);
	assert_int_equal(shr_pool_range_free(p, UINT32_MAX, 2), -EINVAL);
	assert_int_equal(shr_pool_used(p), 10);

	/* Leave a partial round in slot 4 (inside range b1), then free b1. */
	t = tmpl(4, 0, 2, 2);
	assert_int_equal(put(p, &t, 0, a, &r), SHR_POOL_PARTIAL);
	assert_int_equal(shr_pool_range_free(p, 3, 4), 0);
	assert_int_equal(shr_pool_used(p), 6);
	assert_int_equal(shr_pool_range_free(p, 3, 4), -EINVAL);	/* twice */

	/* Fragmentation: holes of 4 (3..6); 5 does not fit, 2 then 2 fill it first-fit. */
	assert_int_equal(shr_pool_range_alloc(p, 5), -ENOSPC);
	assert_int_equal(shr_pool_range_alloc(p, 2), 3);
	assert_int_equal(shr_pool_range_alloc(p, 2), 5);
	assert_int_equal(shr_pool_range_alloc(p, 1), -ENOSPC);
	assert_int_equal(shr_pool_used(p), 10);
	/* Slot 4 was reset on allocation: rank 0 counts again, as a first contributor. */
	assert_int_equal(put(p, &t, 0, a, &r), SHR_POOL_PARTIAL);
	assert_int_equal(put(p, &t, 1, a, &r), SHR_POOL_COMPLETE);
	shr_pool_result_write(&r, out);
	assert_int_equal(out[0], 10);
	assert_int_equal(out[1], 12);

	/* Free around a hole and merge: 0..2 and 5..6 and 7..8 free; 3..4 and 9 used. */
	assert_int_equal(shr_pool_range_free(p, 0, 3), 0);
	assert_int_equal(shr_pool_range_free(p, 5, 2), 0);
	assert_int_equal(shr_pool_range_free(p, b2, 2), 0);
	assert_int_equal(shr_pool_used(p), 3);
	assert_int_equal(shr_pool_range_alloc(p, 4), 5);	/* 0..2 too short */
	assert_int_equal(shr_pool_range_alloc(p, 3), 0);
	assert_int_equal(shr_pool_range_alloc(p, 1), -ENOSPC);
	assert_int_equal(shr_pool_range_free(p, 5, 4), 0);
	assert_int_equal(shr_pool_range_free(p, 0, 3), 0);
	assert_int_equal(shr_pool_range_free(p, 3, 2), 0);
	assert_int_equal(shr_pool_range_free(p, 9, 1), 0);
	assert_int_equal(shr_pool_used(p), 0);
	assert_int_equal(shr_pool_range_alloc(p, 10), 0);
	assert_int_equal(shr_pool_range_free(p, 0, 10), 0);
	shr_pool_free(p);
}

/* ---- kernels and dtypes ---- */

/* Wire element size (kept here: the test does not depend on lib/proto's code). */
static size_t
esize(uint8_t dtype)
{
	return dtype == SHR_DTYPE_FLOAT16 || dtype == SHR_DTYPE_BFLOAT16 ? 2 : 4;
}

/* One round of `world` contributions (rank order = array order) of any dtype/op. */
static void
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

static void
test_int32_ops(void **state)
{
	static const unsigned int ops[] = { SHR_OP_SUM, SHR_OP_MIN, SHR_OP_MAX, SHR_OP_PROD };
	struct shr_pool *p = mkpool(1, KN, KW);
	struct shr_pool_contrib t = tmpl(0, 1, KW, KN);
	uint8_t *buf = malloc(KW * (4 * KN + 1)), *out = malloc(4 * KN);
	const uint8_t *pl[KW];
	int32_t *dst = malloc(4 * KN);
	unsigned int k, o, w, e, dt;

	(void)state;
	assert_non_null(buf);
	assert_non_null(out);
	assert_non_null(dst);
	for (dt = 0; dt < 2; dt++) {
		t.dtype = dt ? SHR_DTYPE_QINT32 : SHR_DTYPE_INT32;
		for (o = 0; o < 4; o++) {
			if (t.dtype == SHR_DTYPE_QINT32 && ops[o] == SHR_OP_PROD)
				continue;
			t.op = (uint8_t)ops[o];
			for (k = 0; k < 5; k++) {
				/* Odd offsets: unaligned payloads. Values incl. extremes. */
				for (w = 0; w < KW; w++) {
					uint8_t *b = buf + w * (4 * KN + 1) + (w & 1);

					pl[w] = b;
					for (e = 0; e < KN; e++) {
						uint32_t v = rnd32();

						if (e % 97 == 0)
							v = 0x80000000u;
						else if (e % 89 == 0)
							v = 0x7fffffffu;
						else if (k == 1)
							v %= 7;
						le32(b + 4 * e, v);
					}
				}
				one_round(p, &t, KW, pl, out);
				for (e = 0; e < KN; e++) {
					uint32_t ref = rd32(pl[0] + 4 * e);

					for (w = 1; w < KW; w++)
						ref = ref_i32(ref, rd32(pl[w] + 4 * e), ops[o]);
					assert_int_equal(rd32(out + 4 * e), ref);
				}
				/* The bare kernel, from an unaligned source. */
				for (e = 0; e < KN; e++)
					dst[e] = (int32_t)rd32(pl[0] + 4 * e);
				shr_pool_reduce_i32(dst, pl[1], KN, ops[o]);
				for (e = 0; e < KN; e++)
					assert_int_equal((uint32_t)dst[e],
							 ref_i32(rd32(pl[0] + 4 * e),
								 rd32(pl[1] + 4 * e), ops[o]));
			}
		}
	}
	/* SUM wraps. */
	t.dtype = SHR_DTYPE_INT32;
	t.op = SHR_OP_SUM;
	t.count = 1;
	le32(buf, 0x7fffffffu);
	le32(buf + 8, 1);
	pl[0] = buf;
	pl[1] = buf + 8;
	one_round(p, &t, 2, pl, out);
	assert_int_equal(rd32(out), 0x80000000u);
	/* An unknown op leaves dst unchanged. */
	dst[0] = 42;
	shr_pool_reduce_i32(dst, buf, 1, SHR_OP_MAX_);
	assert_int_equal(dst[0], 42);
	free(dst);
	free(out);
	free(buf);
	shr_pool_free(p);
}

static float
rnd_float(unsigned int kind)
{
	static const float specials[] = {
		0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 1.17549435e-38f,
		3.4028235e38f, -3.4028235e38f, 1.0f, -1.0f, 0.5f, 65504.0f,
	};
	uint32_t u = rnd32();

	switch (kind) {
	case 0:	/* ordinary magnitudes */
		return ((float)(int32_t)u) * 0x1p-20f;
	case 1:	/* any bit pattern, NaNs included */
		return bitsf(u);
	default:	/* specials mixed with ordinary values */
		if (u % 3 == 0)
			return specials[(u >> 8) % (sizeof(specials) / sizeof(specials[0]))];
		return ((float)(int32_t)u) * 0x1p-30f;
	}
}

static void
test_float32_ops(void **state)
{
	static const unsigned int ops[] = { SHR_OP_SUM, SHR_OP_MIN, SHR_OP_MAX, SHR_OP_PROD };
	struct shr_pool *p = mkpool(1, KN, KW);
	struct shr_pool_contrib t = tmpl(0, 1, KW, KN);
	uint8_t *buf = malloc(KW * (4 * KN + 3)), *out = malloc(4 * KN);
	const uint8_t *pl[KW];
	float *dst = malloc(4 * KN);
	unsigned int k, o, w, e;

	(void)state;
	assert_non_null(buf);
	assert_non_null(out);
	assert_non_null(dst);
	t.dtype = SHR_DTYPE_FLOAT32;
	for (o = 0; o < 4; o++) {
		t.op = (uint8_t)ops[o];
		for (k = 0; k < 3; k++) {
			for (w = 0; w < KW; w++) {
				uint8_t *b = buf + w * (4 * KN + 3) + w;

				pl[w] = b;
				for (e = 0; e < KN; e++)
					le32(b + 4 * e, fbits(rnd_float(k)));
			}
			one_round(p, &t, KW, pl, out);
			for (e = 0; e < KN; e++) {
				float ref = bitsf(rd32(pl[0] + 4 * e));

				for (w = 1; w < KW; w++)
					ref = ref_f32(ref, bitsf(rd32(pl[w] + 4 * e)), ops[o]);
				assert_same_float(bitsf(rd32(out + 4 * e)), ref);
			}
			for (e = 0; e < KN; e++)
				dst[e] = bitsf(rd32(pl[2] + 4 * e));
			shr_pool_reduce_f32(dst, pl[3], KN, ops[o]);
			for (e = 0; e < KN; e++)
				assert_same_float(dst[e], ref_f32(bitsf(rd32(pl[2] + 4 * e)),
								  bitsf(rd32(pl[3] + 4 * e)),
								  ops[o]));
		}
	}
	free(dst);
	free(out);
	free(buf);
	shr_pool_free(p);
}

/* MIN/MAX corner cases, both orders: NaN propagates, -0 < +0. */
static void
test_float_minmax_special(void **state)
{
	static const float pairs[][2] = {
		{ 0.0f, -0.0f }, { -0.0f, 0.0f }, { NAN, 1.0f }, { 1.0f, NAN },
		{ -INFINITY, NAN }, { INFINITY, -INFINITY }, { -1.0f, -1.0f },
		{ 1e-45f, -1e-45f }, { NAN, NAN },
	};
	float d;
	unsigned int i, o;

	(void)state;
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		for (o = SHR_OP_MIN; o <= SHR_OP_MAX; o++) {
			float ab, ba;

			d = pairs[i][0];
			shr_pool_reduce_f32(&d, &pairs[i][1], 1, o);
			ab = d;
			d = pairs[i][1];
			shr_pool_reduce_f32(&d, &pairs[i][0], 1, o);
			ba = d;
			assert_same_float(ab, ref_f32(pairs[i][0], pairs[i][1], o));
			/* Order-independent (NaN payload aside). */
			assert_same_float(ab, isnan(ba) ? NAN : ba);
		}
	}
	d = 0.0f;
	shr_pool_reduce_f32(&d, &pairs[1][0], 1, SHR_OP_MIN);
	assert_true(signbit(d));
	d = -0.0f;
	shr_pool_reduce_f32(&d, &pairs[0][0], 1, SHR_OP_MAX);
	assert_false(signbit(d));
}

/* Round a float-accumulated result through shr_pool_result_write() from our own values. */
static void
write_half(uint8_t dtype, const float *acc, uint32_t n, uint8_t *out)
{
	struct shr_pool_round r = { .dtype = dtype, .count = n, .acc = acc };

	assert_int_equal(shr_pool_result_write(&r, out), 2 * (size_t)n);
}

static void
test_f16_decode_all(void **state)
{
	struct shr_pool *p = mkpool(1, 65536, 1);
	struct shr_pool_contrib t = tmpl(0, 0, 1, 65536);
	struct shr_pool_round r;
	uint8_t *in = malloc(2 * 65536 + 1), *out = malloc(2 * 65536);
	const float *acc;
	uint32_t h;

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	for (h = 0; h < 65536; h++)
		le16(in + 1 + 2 * h, (uint16_t)h);
	t.dtype = SHR_DTYPE_FLOAT16;
	t.payload = in + 1;
	assert_int_equal(shr_pool_contribute(p, &t, &r), SHR_POOL_COMPLETE);
	acc = r.acc;
	for (h = 0; h < 65536; h++) {
		double ref = ref_f16_decode((uint16_t)h);

		if (isnan(ref)) {
			/* NaN keeps its payload: top 10 mantissa bits. */
			assert_true(isnan(acc[h]));
			assert_int_equal((fbits(acc[h]) >> 13) & 0x3ff, h & 0x3ff);
			assert_int_equal(fbits(acc[h]) >> 31, h >> 15);
		} else {
			assert_int_equal(fbits(acc[h]), fbits((float)ref));
		}
	}
	/* And back: every non-NaN value is its own image; NaNs come back quiet. */
	assert_int_equal(shr_pool_result_write(&r, out), 2 * 65536);
	for (h = 0; h < 65536; h++) {
		uint16_t g = rd16(out + 2 * h);

		if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
			assert_int_equal(g, h | 0x200);
		else
			assert_int_equal(g, h);
	}
	free(out);
	free(in);
	shr_pool_free(p);
}

static void
test_bf16_decode_all(void **state)
{
	struct shr_pool *p = mkpool(1, 65536, 1);
	struct shr_pool_contrib t = tmpl(0, 0, 1, 65536);
	struct shr_pool_round r;
	uint8_t *in = malloc(2 * 65536), *out = malloc(2 * 65536 + 1);
	const float *acc;
	uint32_t h;

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	for (h = 0; h < 65536; h++)
		le16(in + 2 * h, (uint16_t)h);
	t.dtype = SHR_DTYPE_BFLOAT16;
	t.payload = in;
	assert_int_equal(shr_pool_contribute(p, &t, &r), SHR_POOL_COMPLETE);
	acc = r.acc;
	for (h = 0; h < 65536; h++) {
		double ref = ref_bf16_decode((uint16_t)h);

		if (isnan(ref))
			assert_int_equal(fbits(acc[h]), h << 16);
		else
			assert_int_equal(fbits(acc[h]), fbits((float)ref));
	}
	assert_int_equal(shr_pool_result_write(&r, out + 1), 2 * 65536);
	for (h = 0; h < 65536; h++) {
		uint16_t g = rd16(out + 1 + 2 * h);

		if ((h & 0x7f80) == 0x7f80 && (h & 0x7f))
			assert_int_equal(g, h | 0x40);
		else
			assert_int_equal(g, h);
	}
	free(out);
	free(in);
	shr_pool_free(p);
}

static void
test_half_encode(void **state)
{
	/* Known conversions (IEEE 754 facts), float32 -> binary16 and -> bfloat16. */
	static const struct { float f; uint16_t h; uint16_t b; } known[] = {
		{ 0.0f, 0x0000, 0x0000 },
		{ -0.0f, 0x8000, 0x8000 },
		{ 1.0f, 0x3c00, 0x3f80 },
		{ -2.0f, 0xc000, 0xc000 },
		{ 65504.0f, 0x7bff, 0x4780 },
		{ 65519.99f, 0x7bff, 0x4780 },	/* below the binary16 midpoint */
		{ 65520.0f, 0x7c00, 0x4780 },	/* midpoint: ties to even = infinity */
		{ 1e6f, 0x7c00, 0x4974 },	/* 1e6 = 0x49742400 */
		{ INFINITY, 0x7c00, 0x7f80 },
		{ -INFINITY, 0xfc00, 0xff80 },
		{ 0x1p-14f, 0x0400, 0x3880 },	/* smallest binary16 normal */
		{ 0x1p-24f, 0x0001, 0x3380 },	/* smallest binary16 subnormal */
		{ -0x1p-24f, 0x8001, 0xb380 },
		{ 0x1p-25f, 0x0000, 0x3300 },	/* tie between 0 and 2^-24: even = 0 */
		{ 0x1.8p-25f, 0x0001, 0x3340 },	/* above the tie */
		{ 0x1.8p-24f, 0x0002, 0x33c0 },	/* 1.5 ulp: tie, to even = 2 */
		{ 0x1.4p-24f, 0x0001, 0x33a0 },
		{ 0x1.ff8p-15f, 0x03ff, 0x3880 },	/* largest subnormal (bf16 rounds up) */
		{ 0x1.ffcp-15f, 0x0400, 0x3880 },	/* tie: to even, into the normal range */
		{ 0x1.ff4p-15f, 0x03fe, 0x3880 },	/* 1022.5 ulp: tie, to even 1022 */
		{ 0x1.ffep-15f, 0x0400, 0x3880 },
		{ 1.0f + 0x1p-11f, 0x3c00, 0x3f80 },	/* tie, even stays */
		{ 1.0f + 0x1p-10f + 0x1p-11f, 0x3c02, 0x3f80 },	/* tie, odd rounds up */
		{ 1.0f + 0x1p-11f + 0x1p-20f, 0x3c01, 0x3f80 },
		{ 1.0f + 0x1p-8f, 0x3c04, 0x3f80 },	/* bf16 tie at 2^-8: even stays */
		{ 1.0f + 0x1p-7f + 0x1p-8f, 0x3c0c, 0x3f82 },	/* bf16 tie, odd rounds up */
		{ 3.4028235e38f, 0x7c00, 0x7f80 },	/* FLT_MAX: bf16 rounds to inf */
		{ 1e-45f, 0x0000, 0x0000 },	/* float32 subnormals */
		{ -1e-40f, 0x8000, 0x8001 },	/* -1e-40 = 0x800116c2 */
		{ 0.1f, 0x2e66, 0x3dcd },	/* 0.1 = 0x3dcccccd */
		{ 3.14159265f, 0x4248, 0x4049 },
	};
	uint8_t out16[2 * 4096], outb[2 * 4096];
	float acc[4096];
	unsigned int i, k, n = sizeof(known) / sizeof(known[0]);

	(void)state;
	for (i = 0; i < n; i++)
		acc[i] = known[i].f;
	write_half(SHR_DTYPE_FLOAT16, acc, n, out16);
	write_half(SHR_DTYPE_BFLOAT16, acc, n, outb);
	for (i = 0; i < n; i++) {
		assert_int_equal(rd16(out16 + 2 * i), known[i].h);
		assert_int_equal(rd16(outb + 2 * i), known[i].b);
		/* The reference encoder agrees with the known answers. */
		assert_int_equal(ref_f16_encode(known[i].f), known[i].h);
		assert_int_equal(ref_bf16_encode(known[i].f), known[i].b);
	}
	/* NaNs: quiet, sign kept. */
	acc[0] = bitsf(0x7f800001u);	/* signalling, payload in the low bits only */
	acc[1] = bitsf(0xffc00000u);
	acc[2] = bitsf(0x7fbfe000u);
	write_half(SHR_DTYPE_FLOAT16, acc, 3, out16);
	write_half(SHR_DTYPE_BFLOAT16, acc, 3, outb);
	assert_int_equal(rd16(out16), 0x7e00);
	assert_int_equal(rd16(out16 + 2), 0xfe00);
	assert_int_equal(rd16(out16 + 4), 0x7fff);
	assert_int_equal(rd16(outb), 0x7fc0);
	assert_int_equal(rd16(outb + 2), 0xffc0);
	assert_int_equal(rd16(outb + 4), 0x7fff);

	/* Random float32 values against the reference encoder (non-NaN). */
	for (k = 0; k < 200; k++) {
		for (i = 0; i < 4096; i++) {
			uint32_t u = rnd32();

			if (k % 3 == 1)	/* binary16 subnormal range and below */
				u = (u & 0x807fffffu) | ((90u + u % 23u) << 23);
			else if (k % 3 == 2)	/* binary16 normal range and overflow */
				u = (u & 0x807fffffu) | ((112u + u % 33u) << 23);
			if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffff))
				u &= ~0x7fffffu;
			acc[i] = bitsf(u);
		}
		write_half(SHR_DTYPE_FLOAT16, acc, 4096, out16);
		write_half(SHR_DTYPE_BFLOAT16, acc, 4096, outb);
		for (i = 0; i < 4096; i++) {
			assert_int_equal(rd16(out16 + 2 * i), ref_f16_encode(acc[i]));
			assert_int_equal(rd16(outb + 2 * i), ref_bf16_encode(acc[i]));
		}
	}
}

/* fp16 and bf16 through the pool, every op: decode, float32 op in arrival order, encode. */
static void
test_half_ops(void **state)
{
	static const unsigned int ops[] = { SHR_OP_SUM, SHR_OP_MIN, SHR_OP_MAX, SHR_OP_PROD };
	static const uint8_t dts[] = { SHR_DTYPE_FLOAT16, SHR_DTYPE_BFLOAT16 };
	/* Exponent fields around 1.0: binary16 12..17, bfloat16 124..129. */
	static const uint16_t ex16[] = { 12 << 10, 13 << 10, 14 << 10, 15 << 10, 16 << 10,
					 17 << 10 };
	static const uint16_t exb16[] = { 124 << 7, 125 << 7, 126 << 7, 127 << 7, 128 << 7,
					  129 << 7 };
	struct shr_pool *p = mkpool(1, KN, KW);
	struct shr_pool_contrib t = tmpl(0, 1, KW, KN);
	uint8_t *buf = malloc(KW * (2 * KN + 1)), *out = malloc(2 * KN);
	const uint8_t *pl[KW];
	unsigned int d, o, k, w, e;

	(void)state;
	assert_non_null(buf);
	assert_non_null(out);
	for (d = 0; d < 2; d++) {
		double (*dec)(uint16_t) = d ? ref_bf16_decode : ref_f16_decode;
		uint16_t (*enc)(float) = d ? ref_bf16_encode : ref_f16_encode;

		t.dtype = dts[d];
		for (o = 0; o < 4; o++) {
			t.op = (uint8_t)ops[o];
			for (k = 0; k < 4; k++) {
				for (w = 0; w < KW; w++) {
					uint8_t *b = buf + w * (2 * KN + 1) + (w & 1);

					pl[w] = b;
					for (e = 0; e < KN; e++) {
						uint16_t h = (uint16_t)rnd32();

						/* k 0, 1: moderate exponents; 2: any; 3: tiny */
						if (k < 2 && d == 0)
							h = (h & 0x83ff) | ex16[e % 6];
						else if (k < 2)
							h = (h & 0x807f) | exb16[e % 6];
						else if (k == 3)
							h &= d ? 0x80ff : 0x87ff;
						le16(b + 2 * e, h);
					}
				}
				one_round(p, &t, KW, pl, out);
				for (e = 0; e < KN; e++) {
					float ref = (float)dec(rd16(pl[0] + 2 * e));
					uint16_t want, got = rd16(out + 2 * e);

					for (w = 1; w < KW; w++)
						ref = ref_f32(ref, (float)dec(rd16(pl[w] + 2 * e)),
							      ops[o]);
					if (isnan(ref)) {
						assert_true(isnan(dec(got)));
						continue;
					}
					want = enc(ref);
					assert_int_equal(got, want);
				}
			}
		}
	}
	free(out);
	free(buf);
	shr_pool_free(p);
}

/* QINT32: int32 accumulation; aux (the block exponent) is part of the identity. */
static void
test_qint32(void **state)
{
	struct shr_pool *p = mkpool(1, 3, 4);
	struct shr_pool_contrib t = tmpl(0, 0, 2, 3);
	struct shr_pool_round r;
	int32_t a[3] = { -5, 1 << 30, 7 }, b[3] = { 5, 1 << 30, -9 }, out[3];

	(void)state;
	t.dtype = SHR_DTYPE_QINT32;
	t.aux = 0x80 + 12;
	assert_int_equal(put(p, &t, 0, a, &r), SHR_POOL_PARTIAL);
	t.aux--;
	assert_int_equal(put(p, &t, 1, b, &r), SHR_POOL_OUT_OF_STEP);
	t.aux++;
	assert_int_equal(put(p, &t, 1, b, &r), SHR_POOL_COMPLETE);
	assert_int_equal(r.dtype, SHR_DTYPE_QINT32);
	assert_int_equal(r.aux, 0x80 + 12);
	assert_int_equal(shr_pool_result_write(&r, out), 12);
	assert_int_equal(out[0], 0);
	assert_int_equal((uint32_t)out[1], 0x80000000u);
	assert_int_equal(out[2], -2);
	shr_pool_free(p);
}

/*
 * Arrival order: every member receives the identical bytes of the one float result (the
 * COMPLETE result and every RESEND); int32 SUM and float MIN/MAX do not depend on the order.
 */
static void
test_order_shuffle(void **state)
{
	enum { W = 8, N = 256 };
	struct shr_pool *p = mkpool(1, N, W);
	struct shr_pool_contrib t = tmpl(0, 0, W, N);
	struct shr_pool_round r;
	float f[W][N];
	int32_t iv[W][N];
	uint8_t res[4 * N], got[4 * N], first_i[4 * N], first_min[4 * N], first_max[4 * N];
	uint16_t order[W];
	unsigned int trial, i, e, o;

	(void)state;
	for (i = 0; i < W; i++) {
		order[i] = (uint16_t)i;
		for (e = 0; e < N; e++) {
			f[i][e] = rnd_float(e % 5 == 0 ? 2 : 0) * (float)(1u << (rnd32() % 20));
			if (isnan(f[i][e]))
				f[i][e] = -0.0f;
			iv[i][e] = (int32_t)rnd32();
		}
	}
	for (trial = 0; trial < 50; trial++) {
		shuffle(order, W);
		/* float32 SUM: one result, identical for every rank. */
		t.dtype = SHR_DTYPE_FLOAT32;
		t.op = SHR_OP_SUM;
		t.ver ^= 1;
		t.step++;
		for (i = 0; i < W; i++)
			assert_int_equal(put(p, &t, order[i], f[order[i]], &r),
					 i + 1 < W ? SHR_POOL_PARTIAL : SHR_POOL_COMPLETE);
		shr_pool_result_write(&r, res);
		for (e = 0; e < N; e++) {
			float ref = f[order[0]][e];

			for (i = 1; i < W; i++)
				ref += f[order[i]][e];
			assert_same_float(bitsf(rd32(res + 4 * e)), ref);
		}
		for (i = 0; i < W; i++) {
			assert_int_equal(put(p, &t, (uint16_t)i, f[i], &r), SHR_POOL_RESEND);
			shr_pool_result_write(&r, got);
			assert_memory_equal(got, res, sizeof(res));
		}
		/* int32 SUM: the same bytes whatever the order. */
		t.dtype = SHR_DTYPE_INT32;
		t.ver ^= 1;
		t.step++;
		for (i = 0; i < W; i++)
			put(p, &t, order[i], iv[order[i]], &r);
		shr_pool_result_write(&r, res);
		if (trial == 0)
			memcpy(first_i, res, sizeof(res));
		assert_memory_equal(res, first_i, sizeof(res));
		/* float MIN and MAX: order-independent (no NaN in this data). */
		for (o = SHR_OP_MIN; o <= SHR_OP_MAX; o++) {
			uint8_t *first = o == SHR_OP_MIN ? first_min : first_max;

			t.dtype = SHR_DTYPE_FLOAT32;
			t.op = (uint8_t)o;
			t.ver ^= 1;
			t.step++;
			for (i = 0; i < W; i++)
				put(p, &t, order[i], f[order[i]], &r);
			assert_int_equal(r.op, o);
			shr_pool_result_write(&r, res);
			if (trial == 0)
				memcpy(first, res, sizeof(res));
			assert_memory_equal(res, first, sizeof(res));
		}
		t.op = SHR_OP_SUM;
	}
	shr_pool_free(p);
}

/* Slots are independent: interleaved rounds in many slots (a window, as the endpoint). */
static void
test_window(void **state)
{
	enum { S = 16, W = 3, N = 5 };
	struct shr_pool *p = mkpool(S, N, W);
	struct shr_pool_contrib t = tmpl(0, 0, W, N);
	struct shr_pool_round r;
	int32_t x[N], out[N];
	uint32_t chunk, s, e;
	uint16_t rk;
	int ret;

	(void)state;
	for (chunk = 0; chunk < 20 * S; chunk += S) {
		/* Every rank sends chunks chunk..chunk+S-1, rank-major then slot-major. */
		for (rk = 0; rk < W; rk++) {
			for (s = 0; s < S; s++) {
				uint32_t k = chunk + s;

				t.slot = k % S;
				t.ver = (uint8_t)((k / S) & 1);
				t.offset = (uint64_t)k * N;
				for (e = 0; e < N; e++)
					x[e] = (int32_t)(k * 1000 + rk * 10 + e);
				ret = put(p, &t, rk, x, &r);
				if (rk + 1 < W) {
					assert_int_equal(ret, SHR_POOL_PARTIAL);
					continue;
				}
				assert_int_equal(ret, SHR_POOL_COMPLETE);
				assert_int_equal(r.slot, t.slot);
				assert_int_equal(r.offset, t.offset);
				shr_pool_result_write(&r, out);
				for (e = 0; e < N; e++)
					assert_int_equal(out[e], (int32_t)(3 * (k * 1000 + e) +
									   10 * (0 + 1 + 2)));
			}
		}
	}
	shr_pool_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_einval),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_contribute_einval),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_world_one),
		cmocka_unit_test(test_first_overwrite),
		cmocka_unit_test(test_rounds_world1),
		cmocka_unit_test(test_rounds_world2),
		cmocka_unit_test(test_rounds_world3),
		cmocka_unit_test(test_rounds_world64),
		cmocka_unit_test(test_rounds_world1024),
		cmocka_unit_test(test_rounds_world4096),
		cmocka_unit_test(test_replay_loop),
		cmocka_unit_test(test_late_copy),
		cmocka_unit_test(test_stale_replay),
		cmocka_unit_test(test_stale_lost_result),
		cmocka_unit_test(test_out_of_step),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_int32_ops),
		cmocka_unit_test(test_float32_ops),
		cmocka_unit_test(test_float_minmax_special),
		cmocka_unit_test(test_f16_decode_all),
		cmocka_unit_test(test_bf16_decode_all),
		cmocka_unit_test(test_half_encode),
		cmocka_unit_test(test_half_ops),
		cmocka_unit_test(test_qint32),
		cmocka_unit_test(test_order_shuffle),
		cmocka_unit_test(test_window),
	};

	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
