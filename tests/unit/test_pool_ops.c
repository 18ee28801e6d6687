/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The slot pool's int32, float32 and qint32 reductions, every op, against the references;
 * the float corner cases; arrival order; the result written in the last contribution's pass
 * (shr_pool_contribute_out()). */

#include "pool_test.h"

static void
le32(uint8_t *d, uint32_t x)
{
	d[0] = (uint8_t)x;
	d[1] = (uint8_t)(x >> 8);
	d[2] = (uint8_t)(x >> 16);
	d[3] = (uint8_t)(x >> 24);
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

/*
 * MIN/MAX corner cases, both orders: NaN propagates as the quiet NaN 0x7fc00000 whatever NaNs
 * came in (x86's 0/0 is 0xffc00000, CUDA's 0x7fffffff), -0 < +0: the same bits either way.
 */
static void
test_float_minmax_special(void **state)
{
	static const uint32_t nans[] = { 0x7fc00000u, 0xffc00000u, 0x7fffffffu, 0x7f800001u };
	static const float pairs[][2] = {
		{ 0.0f, -0.0f }, { -0.0f, 0.0f }, { NAN, 1.0f }, { 1.0f, NAN },
		{ -INFINITY, NAN }, { INFINITY, -INFINITY }, { -1.0f, -1.0f },
		{ 1e-45f, -1e-45f }, { NAN, NAN },
	};
	float d, n[2];
	unsigned int i, j, o;

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
			assert_int_equal(fbits(ab), fbits(ba));
			if (isnan(ab))
				assert_int_equal(fbits(ab), 0x7fc00000u);
		}
	}
	/* two NaNs of other signs and payloads, and a NaN with a number: one answer */
	for (i = 0; i < sizeof(nans) / sizeof(nans[0]); i++)
		for (j = 0; j <= sizeof(nans) / sizeof(nans[0]); j++)
			for (o = SHR_OP_MIN; o <= SHR_OP_MAX; o++) {
				memcpy(&n[0], &nans[i], 4);
				if (j < sizeof(nans) / sizeof(nans[0]))
					memcpy(&n[1], &nans[j], 4);
				else
					n[1] = -2.5f;
				d = n[0];
				shr_pool_reduce_f32(&d, &n[1], 1, o);
				assert_int_equal(fbits(d), 0x7fc00000u);
				d = n[1];
				shr_pool_reduce_f32(&d, &n[0], 1, o);
				assert_int_equal(fbits(d), 0x7fc00000u);
			}
	d = 0.0f;
	shr_pool_reduce_f32(&d, &pairs[1][0], 1, SHR_OP_MIN);
	assert_true(signbit(d));
	d = -0.0f;
	shr_pool_reduce_f32(&d, &pairs[0][0], 1, SHR_OP_MAX);
	assert_false(signbit(d));
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

/*
 * shr_pool_contribute_out(): the contribution that completes a round writes the result in
 * the pass that reduces it. For every dtype and op the pool supports, at a count that is not
 * a multiple of any vector width, a pool fed through it and one fed through
 * shr_pool_contribute() then shr_pool_result_write() give the same bytes, and the same
 * accumulator (what a later resend answers with); written is count * 4 where the kernel is
 * fused (int32, qint32, float32) and 0 otherwise (float16, bfloat16: out untouched). A
 * contribution that does not complete the round, a duplicate and a resend write nothing.
 */
static void
test_contribute_out(void **state)
{
	enum { N = 37, W = 3, SENT = 0xa5 };
	static const uint8_t dtypes[] = { SHR_DTYPE_INT32, SHR_DTYPE_QINT32, SHR_DTYPE_FLOAT32,
					  SHR_DTYPE_FLOAT16, SHR_DTYPE_BFLOAT16 };
	uint8_t in[W][4 * N], out[4 * N + 8], ref[4 * N];
	struct shr_pool_round ra, rb, rr;
	unsigned int d, op, r, i, fused;
	size_t written, esize;

	(void)state;
	for (d = 0; d < sizeof(dtypes); d++) {
		esize = dtypes[d] == SHR_DTYPE_FLOAT16 || dtypes[d] == SHR_DTYPE_BFLOAT16 ? 2 : 4;
		fused = esize == 4;
		for (op = 0; op < SHR_OP_MAX_; op++) {
			struct shr_pool *a = mkpool(2, N, W), *b = mkpool(2, N, W);
			struct shr_pool_contrib c = tmpl(1, 0, W, N);

			c.dtype = dtypes[d];
			c.op = (uint8_t)op;
			for (r = 0; r < W; r++)
				for (i = 0; i < esize * N; i++)	/* finite values: no NaN exponent */
					in[r][i] = (uint8_t)(i % esize == esize - 1 ?
							     rnd32() & 0x3f : rnd32());
			if (put(a, &c, 0, in[0], &ra) == -EINVAL) {
				/* an op the dtype does not support (qint32 PROD) */
				assert_true(dtypes[d] == SHR_DTYPE_QINT32 && op == SHR_OP_PROD);
				shr_pool_free(a);
				shr_pool_free(b);
				continue;
			}
			assert_int_equal(put(b, &c, 0, in[0], &rb), SHR_POOL_PARTIAL);
			/* not the last contribution: nothing written */
			memset(out, SENT, sizeof(out));
			c.rank = 1;
			c.payload = in[1];
			written = 99;
			assert_int_equal(shr_pool_contribute_out(a, &c, &ra, out, &written),
					 SHR_POOL_PARTIAL);
			assert_int_equal(written, 0);
			for (i = 0; i < sizeof(out); i++)
				assert_int_equal(out[i], SENT);
			/* a duplicate of it: nothing either */
			assert_int_equal(shr_pool_contribute_out(a, &c, &ra, out, &written),
					 SHR_POOL_DUPLICATE);
			assert_int_equal(written, 0);
			assert_int_equal(put(b, &c, 1, in[1], &rb), SHR_POOL_PARTIAL);
			/* the last: pool a writes in the pass, pool b afterwards */
			c.rank = 2;
			c.payload = in[2];
			assert_int_equal(shr_pool_contribute_out(a, &c, &ra, out, &written),
					 SHR_POOL_COMPLETE);
			assert_int_equal(put(b, &c, 2, in[2], &rb), SHR_POOL_COMPLETE);
			assert_int_equal(shr_pool_result_write(&rb, ref), esize * N);
			assert_int_equal(written, fused ? esize * N : 0);
			if (fused)
				assert_memory_equal(out, ref, esize * N);
			for (i = fused ? esize * N : 0; i < sizeof(out); i++)
				assert_int_equal(out[i], SENT);	/* nothing past the result */
			/* the accumulator holds the result too: a resend answers with it */
			assert_int_equal(shr_pool_result_write(&ra, out), esize * N);
			assert_memory_equal(out, ref, esize * N);
			memset(out, SENT, sizeof(out));
			assert_int_equal(shr_pool_contribute_out(a, &c, &rr, out, &written),
					 SHR_POOL_RESEND);
			assert_int_equal(written, 0);
			assert_int_equal(out[0], SENT);
			assert_int_equal(shr_pool_result_write(&rr, out), esize * N);
			assert_memory_equal(out, ref, esize * N);
			shr_pool_free(a);
			shr_pool_free(b);
		}
	}
}

/* Without out, it is shr_pool_contribute(): written may then be NULL. */
static void
test_contribute_out_null(void **state)
{
	struct shr_pool *p = mkpool(1, 4, 2);
	struct shr_pool_contrib c = tmpl(0, 0, 2, 4);
	struct shr_pool_round r;
	uint32_t x[4] = { 1, 2, 3, 4 }, y[4] = { 10, 20, 30, 40 }, o[4];
	size_t written = 7;

	(void)state;
	c.payload = x;
	assert_int_equal(shr_pool_contribute_out(p, &c, &r, NULL, NULL), SHR_POOL_PARTIAL);
	c.rank = 1;
	c.payload = y;
	assert_int_equal(shr_pool_contribute_out(p, &c, &r, NULL, &written), SHR_POOL_COMPLETE);
	assert_int_equal(written, 0);
	assert_int_equal(shr_pool_result_write(&r, o), sizeof(o));
	assert_int_equal(rd32((const uint8_t *)&o[3]), 44);
	c.count = 0;	/* refused as by shr_pool_contribute(), written cleared */
	written = 7;
	assert_int_equal(shr_pool_contribute_out(p, &c, &r, o, &written), -EINVAL);
	assert_int_equal(written, 0);
	shr_pool_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int32_ops),
		cmocka_unit_test(test_float32_ops),
		cmocka_unit_test(test_float_minmax_special),
		cmocka_unit_test(test_qint32),
		cmocka_unit_test(test_order_shuffle),
		cmocka_unit_test(test_contribute_out),
		cmocka_unit_test(test_contribute_out_null),
	};

	return cmocka_run_group_tests_name("pool_ops", tests, NULL, NULL);
}
