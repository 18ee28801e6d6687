/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The pool's exact slots (reproducible float sums, shr_pool.h): range allocation, and the same
 * contributions in many shuffled orders giving the same bytes (while a streaming slot does
 * not), for float32, float16 and bfloat16, each rounded once from the exact sum (the reference
 * of pool_exact_test.h: float16 and bfloat16 by a bisection over their patterns, not through
 * float32). (The accumulator against the hardware and the reference: test_pool_exact.c.)
 */

#include "pool_exact_test.h"

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
