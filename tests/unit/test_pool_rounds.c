/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The slot pool's two-copy algorithm across many rounds (up to 4096 ranks), replayed
 * captures, late and stale copies. */

#include "pool_test.h"

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

/*
 * shr_pool_owed(): a member owes a completed copy until it contributes to the slot's other
 * copy; an open or fresh copy is owed by nobody.
 */
static void
test_owed(void **state)
{
	struct shr_pool *p = mkpool(2, NEL, 3);
	struct shr_pool_contrib t = tmpl(1, 0, 2, NEL);
	uint32_t d[NEL] = { 1, 2, 3, 4 };
	struct shr_pool_round r;

	(void)state;
	assert_int_equal(shr_pool_owed(p, 1, 0, 0), 0);		/* fresh */
	assert_int_equal(put(p, &t, 0, d, &r), SHR_POOL_PARTIAL);
	assert_int_equal(shr_pool_owed(p, 1, 0, 0), 0);		/* open */
	assert_int_equal(put(p, &t, 1, d, &r), SHR_POOL_COMPLETE);
	assert_int_equal(shr_pool_owed(p, 1, 0, 0), 1);
	assert_int_equal(shr_pool_owed(p, 1, 0, 1), 1);
	assert_int_equal(shr_pool_owed(p, 1, 0, 2), 0);		/* not in the round */
	assert_int_equal(shr_pool_owed(p, 0, 0, 0), 0);		/* another slot */
	t.ver = 1;
	t.offset += NEL;
	assert_int_equal(put(p, &t, 1, d, &r), SHR_POOL_PARTIAL);
	assert_int_equal(shr_pool_owed(p, 1, 0, 1), 0);		/* rank 1 moved on */
	assert_int_equal(shr_pool_owed(p, 1, 0, 0), 1);		/* rank 0 did not */
	assert_int_equal(shr_pool_owed(p, 1, 1, 1), 0);		/* open */
	assert_int_equal(put(p, &t, 0, d, &r), SHR_POOL_COMPLETE);
	assert_int_equal(shr_pool_owed(p, 1, 0, 0), 0);		/* both moved on */
	assert_int_equal(shr_pool_owed(p, 1, 1, 0), 1);
	/* copy 0 opens its next round: it held a result, but an open copy is owed nothing */
	t.ver = 0;
	t.offset += NEL;
	assert_int_equal(put(p, &t, 0, d, &r), SHR_POOL_PARTIAL);
	assert_int_equal(shr_pool_owed(p, 1, 0, 0), 0);
	assert_int_equal(shr_pool_owed(p, 1, 1, 0), 0);		/* rank 0 moved on */
	assert_int_equal(shr_pool_owed(p, 1, 1, 1), 1);
	assert_int_equal(shr_pool_owed(p, 2, 0, 0), -EINVAL);
	assert_int_equal(shr_pool_owed(p, 1, 2, 0), -EINVAL);
	assert_int_equal(shr_pool_owed(p, 1, 0, 64), -EINVAL);
	shr_pool_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounds_world1),
		cmocka_unit_test(test_owed),
		cmocka_unit_test(test_rounds_world2),
		cmocka_unit_test(test_rounds_world3),
		cmocka_unit_test(test_rounds_world64),
		cmocka_unit_test(test_rounds_world1024),
		cmocka_unit_test(test_rounds_world4096),
		cmocka_unit_test(test_replay_loop),
		cmocka_unit_test(test_late_copy),
		cmocka_unit_test(test_stale_replay),
		cmocka_unit_test(test_stale_lost_result),
	};

	return cmocka_run_group_tests_name("pool_rounds", tests, NULL, NULL);
}
