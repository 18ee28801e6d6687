/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The aggregator's rounds: the RESULT's bytes, slots reused round after round, stale copies,
 * unordered static replay, float32 sums, hints. */

#include "agg_test.h"

static void
test_result_bytes(void **state)
{
	struct ctx *c = *state;
	uint8_t want[T_MAXBUF], first[T_MAXBUF];
	struct shr_proto_msg m, r;
	size_t wlen;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 2, 1, 77, 4096, 5);
		m.flags = SHR_FLAG_LAST | (k == 1 ? SHR_FLAG_RETX : 0);
		if (k > 0)
			c->now += 9000;	/* the round waits 9 us per rank after the first */
		assert_int_equal(data(c, ADDR(k), &m, -7), SHR_PROTO_OK);
		if (k + 1 < T_WORLD) {
			assert_int_equal(c->tx.len, 0);
			/* A second copy of an open round is a duplicate: dropped. */
			assert_int_equal(data(c, ADDR(k), &m, -7), SHR_PROTO_OK);
			assert_int_equal(c->tx.len, 0);
		}
	}
	assert_int_equal(c->st.duplicates, T_WORLD - 1);
	assert_int_equal(c->st.completed, 1);
	assert_int_equal(c->st.data, T_WORLD);
	assert_int_equal(c->st.bytes_summed, T_WORLD * 5 * 4);

	/* The feedback: rank T_WORLD - 1 completed it, the slot waited 9 (T_WORLD - 1) us. */
	wlen = expected_result_fb(c, want, T_JOB, T_WORLD, 2, 1, 77, 5, 4096, 5, SHR_FLAG_LAST, -7,
				  (uint32_t)(T_WORLD - 1) << 16 | 9 * (T_WORLD - 1) / 4);
	assert_int_equal(c->tx.len, wlen);
	assert_memory_equal(c->tx.buf, want, wlen);
	r = tx_msg(c);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_int_equal(r.rank, SHR_PROTO_RANK_ALL);
	assert_int_equal(r.slot, 2);
	assert_int_equal(r.ver, 1);
	assert_int_equal(r.offset, 4096);
	assert_int_equal(c->tx.ndst, T_WORLD);
	for (k = 0; k < T_WORLD; k++)
		assert_int_equal(c->tx.dst[k], ADDR(k));

	assert_int_equal(shr_proto_fb_last(r.feedback), T_WORLD - 1);
	assert_int_equal(shr_proto_fb_wait_ns(r.feedback), 9000 * (T_WORLD - 1) / 4000 * 4000);

	/*
	 * Rank 2 lost its result and resends: the same RESULT, to rank 2 alone, but for its
	 * feedback (a result sent again: not known).
	 */
	expected_result_fb(c, first, T_JOB, T_WORLD, 2, 1, 77, 5, 4096, 5, SHR_FLAG_LAST, -7,
			   (uint32_t)SHR_PROTO_RANK_ALL << 16);
	memset(c->txbuf, 0, sizeof(c->txbuf));
	m = data_msg(T_JOB, 2, T_WORLD, 2, 1, 77, 4096, 5);
	m.flags = SHR_FLAG_LAST | SHR_FLAG_RETX;
	assert_int_equal(data(c, ADDR(2), &m, -7), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, wlen);
	assert_memory_equal(c->tx.buf, first, wlen);
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->tx.dst[0], ADDR(2));
	assert_int_equal(c->st.resent, 1);
	/* T_WORLD - 1 acks "still filling", the join ack, the result, the resend */
	assert_int_equal(c->st.tx_msgs, T_WORLD + 2);
	assert_int_equal(c->st.tx_dsts, T_WORLD - 1 + 2 * T_WORLD + 1);
}

/* Round after round on one slot, both versions, exact int32 sums (with wrap). */
static void
test_rounds_reuse_slot(void **state)
{
	struct ctx *c = *state;
	uint8_t want[T_MAXBUF];
	struct shr_proto_msg m;
	unsigned int round;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (round = 0; round < 6; round++) {
		int32_t base = round == 3 ? INT32_MAX - 50 : (int32_t)round * 1000;
		size_t wlen;

		for (k = 0; k < T_WORLD; k++) {
			m = data_msg(T_JOB, k, T_WORLD, 0, round & 1, 1, (uint64_t)round * 8, 8);
			assert_int_equal(data(c, ADDR(k), &m, base), SHR_PROTO_OK);
		}
		wlen = expected_result(c, want, T_JOB, T_WORLD, 0, round & 1, 1, 5,
				       (uint64_t)round * 8, 8, 0, base);
		assert_int_equal(c->tx.len, wlen);
		assert_memory_equal(c->tx.buf, want, wlen);
	}
	assert_int_equal(c->st.completed, 6);
}

/* One round of job on slot 0, version ver, identity (step, offset), from all world ranks. */
static void
round_all(struct ctx *c, uint32_t job, uint16_t world, uint8_t ver, uint32_t step,
	  uint64_t offset, int32_t base)
{
	struct shr_proto_msg m;
	uint8_t want[T_MAXBUF];
	uint16_t k;

	for (k = 0; k < world; k++) {
		m = data_msg(job, k, world, 0, ver, 1, offset, 4);
		m.step = step;
		assert_int_equal(data(c, ADDR(k), &m, base), SHR_PROTO_OK);
		if (k + 1 < world)
			assert_int_equal(c->tx.len, 0);
	}
	assert_int_equal(c->tx.len, expected_result(c, want, job, world, 0, ver, 1, step, offset,
						    4, 0, base));
	assert_memory_equal(c->tx.buf, want, c->tx.len);
}

/*
 * A stale copy of rank 0's round L (version 0) arrives after round L + 1 (version 1)
 * completed. On an ordered job (made by JOIN) it is dropped; otherwise it would open a
 * phantom round on copy 0 and shut round L + 2 out.
 */
static void
test_stale_copy_dropped(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m, stale;
	uint16_t k;

	join_all(c, T_JOB, 2, SHR_DTYPE_INT32);
	round_all(c, T_JOB, 2, 0, 5, 0, 1);		/* L */
	stale = data_msg(T_JOB, 0, 2, 0, 0, 1, 0, 4);
	stale.step = 5;
	/* Round L + 1 opened by rank 0: its copy of L is now stale, rank 1's is not. */
	m = data_msg(T_JOB, 0, 2, 0, 1, 1, 32, 4);
	m.step = 5;
	assert_int_equal(data(c, ADDR(0), &m, 2), SHR_PROTO_OK);
	assert_int_equal(data(c, ADDR(0), &stale, 1), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.stale, 1);
	stale.rank = 1;
	assert_int_equal(data(c, ADDR(1), &stale, 1), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_RESULT);	/* rank 1 lost L's result */
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->st.resent, 1);
	m.rank = 1;
	assert_int_equal(data(c, ADDR(1), &m, 2), SHR_PROTO_OK);	/* L + 1 complete */
	assert_int_equal(tx_msg(c).offset, 32);
	/* Both copies of L, late: stale, nothing sent, nothing opened. */
	for (k = 0; k < 2; k++) {
		stale.rank = k;
		assert_int_equal(data(c, ADDR(k), &stale, 1), SHR_PROTO_OK);
		assert_int_equal(c->tx.len, 0);
	}
	assert_int_equal(c->st.stale, 3);
	/* An older op (step 4) and a step from before a wrap (step - 2^31 + 1): stale too. */
	stale.step = 4;
	assert_int_equal(data(c, ADDR(1), &stale, 1), SHR_PROTO_OK);
	stale.step = 5u + 0x80000001u;
	assert_int_equal(data(c, ADDR(1), &stale, 1), SHR_PROTO_OK);
	assert_int_equal(c->st.stale, 5);
	/* Round L + 2 (next op, step 6, offset 0) on copy 0 is clean. */
	round_all(c, T_JOB, 2, 0, 6, 0, 3);
	assert_int_equal(c->st.rejects[SHR_PROTO_OUT_OF_STEP], 0);
	/* Step numbers wrap (compared modulo 2^32): around the circle in order. */
	round_all(c, T_JOB, 2, 1, 0x40000000u, 0, 4);
	round_all(c, T_JOB, 2, 0, 0x80000000u, 0, 5);
	round_all(c, T_JOB, 2, 1, 0xc0000000u, 0, 6);
	round_all(c, T_JOB, 2, 0, 0xffffffffu, 0, 7);
	round_all(c, T_JOB, 2, 1, 0, 0, 8);
	round_all(c, T_JOB, 2, 0, 1, 0, 9);
	assert_int_equal(c->st.stale, 5);
}

/* An unordered static job (pktgen replay): the same two rounds, looped, keep summing. */
static void
test_static_replay(void **state)
{
	struct ctx *c = *state;
	uint64_t addrs[2] = { ADDR(0), ADDR(1) };
	struct shr_agg_job_conf conf = {
		.token = T_TOKEN,
		.job = 3, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 1,
		.chunk_elems = 4, .addrs = addrs,
	};
	struct shr_proto_msg m;
	unsigned int loop;

	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	for (loop = 0; loop < 5; loop++) {
		round_all(c, 3, 2, 0, 0, 0, 10);
		round_all(c, 3, 2, 1, 1, 4, 20);
	}
	assert_int_equal(c->st.completed, 10);
	assert_int_equal(c->st.stale, 0);
	/* The same capture on an ordered static job: the second loop is stale. */
	conf.job = 4;
	conf.ordered = 1;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	round_all(c, 4, 2, 0, 0, 0, 10);
	round_all(c, 4, 2, 1, 1, 4, 20);
	m = data_msg(4, 0, 2, 0, 0, 1, 0, 4);
	m.step = 0;
	assert_int_equal(data(c, ADDR(0), &m, 10), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.stale, 1);
	assert_int_equal(c->st.completed, 12);
}

/* float32 is summed as float32. */
static void
test_float32(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m, r;
	float in[2][4] = { { 1.5f, -2.0f, 1e-3f, 3.0f }, { 0.25f, 2.0f, 1e-3f, -1.0f } };
	float out[4];
	uint16_t k;

	for (k = 0; k < 2; k++)
		assert_int_equal(join(c, ADDR(k), 5, k, 2, SHR_DTYPE_FLOAT32, 2, 4),
				 SHR_PROTO_OK);
	for (k = 0; k < 2; k++) {
		m = data_msg(5, k, 2, 0, 0, 1, 0, 4);
		m.dtype = SHR_DTYPE_FLOAT32;
		assert_int_equal(feed(c, ADDR(k), &m, in[k], sizeof(in[k])), SHR_PROTO_OK);
	}
	r = tx_msg(c);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_int_equal(r.dtype, SHR_DTYPE_FLOAT32);
	memcpy(out, (uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN, sizeof(out));
	for (k = 0; k < 4; k++) {
		float want = in[0][k] + in[1][k];

		assert_memory_equal(&out[k], &want, sizeof(float));
	}
}

/*
 * Round (job 9, world 3, window 4) of slot `slot`, version ver, stream offset off: the ranks
 * in mask send it, in rank order. Returns the RESULT's rank field (its hint), or -1 if no
 * RESULT went out.
 */
static int
hint_round(struct ctx *c, uint32_t slot, uint8_t ver, uint64_t off, unsigned int mask)
{
	struct shr_proto_msg m, r;
	int hint = -1;
	uint16_t k;

	for (k = 0; k < 3; k++) {
		if (!(mask >> k & 1u))
			continue;
		m = data_msg(9, k, 3, slot, ver, 1, off, 4);
		assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
		if (c->tx.len == 0)
			continue;
		r = tx_msg(c);
		assert_int_equal(r.type, SHR_MSG_RESULT);
		assert_int_equal(r.slot, slot);
		assert_int_equal(r.offset, off);
		hint = r.rank;
	}
	return hint;
}

/* A box with `lanes` lanes and job 9 (world 3, window 4) on it. */
static void
hint_box(struct ctx *c, uint16_t lanes)
{
	struct shr_agg_params p = t_params(T_TIMEOUT);
	uint16_t k;

	shr_agg_free(c->agg);
	p.lanes = lanes;
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	for (k = 0; k < 3; k++)
		assert_int_equal(join(c, ADDR(k), 9, k, 3, SHR_DTYPE_INT32, 4, 4), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_JOIN_ACK);
}

/*
 * Hints: the RESULT of slot s names the one rank that the round open in slot s - lanes
 * (modulo the window) still waits for; every member's rank field (SHR_PROTO_RANK_ALL) when
 * no round is open there or more than one rank is missing from it.
 */
static void
test_hint(void **state)
{
	struct ctx *c = *state;

	hint_box(c, 1);
	assert_int_equal(hint_round(c, 0, 0, 0, 0x3), -1);	/* rank 2's copy lost */
	assert_int_equal(hint_round(c, 1, 0, 4, 0x7), 2);
	assert_int_equal(c->st.hints, 1);
	assert_int_equal(hint_round(c, 2, 0, 8, 0x7), SHR_PROTO_RANK_ALL); /* slot 1: done */
	assert_int_equal(hint_round(c, 3, 0, 12, 0x3), -1);
	/* slot 0's round, completed by rank 2's resend: slot 3 (the window wraps) waits for 2 */
	assert_int_equal(hint_round(c, 0, 0, 0, 0x4), 2);
	assert_int_equal(hint_round(c, 3, 0, 12, 0x4), SHR_PROTO_RANK_ALL);
	/* two ranks missing in slot 1: no hint */
	assert_int_equal(hint_round(c, 1, 1, 16, 0x1), -1);
	assert_int_equal(hint_round(c, 2, 1, 20, 0x7), SHR_PROTO_RANK_ALL);
	assert_int_equal(c->st.hints, 2);
	assert_int_equal(c->st.completed, 5);

	/* two lanes: slot s - 2, the lane's slot before s */
	hint_box(c, 2);
	c->st.hints = 0;
	assert_int_equal(hint_round(c, 0, 0, 0, 0x6), -1);	/* rank 0's copy lost */
	assert_int_equal(hint_round(c, 1, 0, 4, 0x7), SHR_PROTO_RANK_ALL); /* slot 3: none */
	assert_int_equal(hint_round(c, 2, 0, 8, 0x7), 0);
	assert_int_equal(hint_round(c, 3, 0, 12, 0x7), SHR_PROTO_RANK_ALL);
	assert_int_equal(c->st.hints, 1);
}

/*
 * Hints in jobs whose world fills the last word of a round's bitmap (64 ranks, 128): the
 * RESULT of slot 2 names the last rank when the round open in slot 0 (the lane's slot before
 * it, 2 lanes) lacks it alone.
 */
static void
test_hint_world_of_words(void **state)
{
	static const uint16_t worlds[] = { 64, 128 };
	struct ctx *c = *state;
	struct shr_agg_params p = t_params(T_TIMEOUT);
	struct shr_proto_msg m, r;
	unsigned int w;
	uint16_t k;

	p.max_world = 128;
	for (w = 0; w < 2; w++) {
		uint16_t world = worlds[w];

		shr_agg_free(c->agg);
		c->agg = shr_agg_create(&p);
		assert_non_null(c->agg);
		c->st.hints = 0;
		join_all(c, 9, world, SHR_DTYPE_INT32);
		/* slot 0: every rank but the last (its copy lost) */
		for (k = 0; k + 1 < world; k++) {
			m = data_msg(9, k, world, 0, 0, 1, 0, 4);
			assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
			assert_int_equal(c->tx.len, 0);
		}
		/* slot 2 completes: its RESULT names the last rank */
		for (k = 0; k < world; k++) {
			m = data_msg(9, k, world, 2, 0, 1, 8, 4);
			assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
		}
		r = tx_msg(c);
		assert_int_equal(r.type, SHR_MSG_RESULT);
		assert_int_equal(r.slot, 2);
		assert_int_equal(r.rank, world - 1);
		assert_int_equal(c->st.hints, 1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_result_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rounds_reuse_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_copy_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_float32, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint_world_of_words, setup, teardown),
	};

	return cmocka_run_group_tests_name("agg_round", tests, NULL, NULL);
}
