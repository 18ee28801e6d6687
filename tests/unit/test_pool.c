/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The slot pool: creation and argument checks, the layout, every verdict, out-of-step
 * refusals, the range allocator, independent slots. */

#include "pool_test.h"

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
	/*
	 * A result loaded for the round (a tree's upstream sum) replaces it only if it names
	 * this copy's round: another tensor, op, aux or root is another round's result.
	 */
	{
		struct shr_pool_round o;
		uint32_t up[2] = { 7, 9 };

		o = r;
		o.tensor ^= 1;
		assert_int_equal(shr_pool_result_load(p, &o, up), -EINVAL);
		o = r;
		o.op = SHR_OP_MAX;
		assert_int_equal(shr_pool_result_load(p, &o, up), -EINVAL);
		o = r;
		o.aux ^= 1;
		assert_int_equal(shr_pool_result_load(p, &o, up), -EINVAL);
		o = r;
		o.root ^= 1;
		assert_int_equal(shr_pool_result_load(p, &o, up), -EINVAL);
		shr_pool_result_write(&r, out);
		assert_int_equal(out[0], 99);	/* untouched */
		assert_int_equal(shr_pool_result_load(p, &r, up), 0);
		shr_pool_result_write(&r, out);
		assert_int_equal(out[0], 7);
		assert_int_equal(out[1], 9);
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
		cmocka_unit_test(test_out_of_step),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_window),
	};

	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
