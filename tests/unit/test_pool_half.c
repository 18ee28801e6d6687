/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The slot pool's fp16 and bf16: every encoding decoded, encoding rounded to nearest even,
 * every op through the pool, against the references. */

#include "pool_test.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_decode_all),
		cmocka_unit_test(test_bf16_decode_all),
		cmocka_unit_test(test_half_encode),
		cmocka_unit_test(test_half_ops),
	};

	return cmocka_run_group_tests_name("pool_half", tests, NULL, NULL);
}
