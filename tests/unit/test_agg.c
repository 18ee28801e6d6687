/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The aggregator's message logic, driven through shr_agg_input() with crafted messages: every
 * reject reason and its order; the statistics. */

#include "agg_test.h"

/* ---- reject reasons ---- */

static void
test_unknown_job(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m = data_msg(99, 0, T_WORLD, 0, 0, 1, 0, 4);

	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	/* A job that exists but is still waiting for members is not active yet. */
	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	m.job = T_JOB;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->st.rejects[SHR_PROTO_UNKNOWN_JOB], 2);
	assert_int_equal(c->st.data, 0);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.rx, 3);
}

static void
test_bad_rank_and_world(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, T_WORLD, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(T_WORLD), &m, 0), SHR_PROTO_BAD_RANK);
	m = data_msg(T_JOB, 1, T_WORLD + 1, 0, 0, 1, 0, 4);	/* world field mismatch */
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_BAD_RANK);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_RANK], 2);
	assert_int_equal(c->st.data, 0);
}

static void
test_spoofed(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_SPOOFED);
	/* Same IP, other port. */
	assert_int_equal(data(c, SHR_AGG_ADDR(SHR_AGG_ADDR_IP(ADDR(1)), 40001), &m, 0),
			 SHR_PROTO_SPOOFED);
	assert_int_equal(c->st.rejects[SHR_PROTO_SPOOFED], 2);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->st.data, 1);
}

/*
 * Late DATA of a rank that has left (a delayed or duplicated copy, seen under reordering) is
 * stale, not spoofed; the same rank's DATA from another address is still spoofed.
 */
static void
test_departed_rank_data(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m, l;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
	}
	assert_int_equal(c->st.completed, 1);
	memset(&l, 0, sizeof(l));
	l.type = SHR_MSG_LEAVE;
	l.job = T_JOB;
	l.world = T_WORLD;
	l.rank = 1;
	assert_int_equal(feed(c, ADDR(1), &l, NULL, 0), SHR_PROTO_OK);
	/* its DATA of slot 0 (a copy of the completed round) and of slot 1 (never sent) */
	m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	m = data_msg(T_JOB, 1, T_WORLD, 1, 0, 1, 8, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.stale, 2);
	assert_int_equal(c->st.rejects[SHR_PROTO_SPOOFED], 0);
	assert_int_equal(c->st.resent, 0);
	assert_int_equal(c->st.data, T_WORLD);
	/* from any other address: spoofed */
	assert_int_equal(data(c, ADDR(5), &m, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(c->st.rejects[SHR_PROTO_SPOOFED], 2);
	assert_int_equal(c->st.stale, 2);
	/* nothing reached the pool: slot 1 has no open round */
	assert_int_equal(shr_agg_tick(c->agg, c->now + 10 * T_TIMEOUT, &c->tx, &c->st), 0);
}

static void
test_job_dtype(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	m.dtype = SHR_DTYPE_FLOAT32;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_JOB_DTYPE);
	assert_int_equal(c->st.rejects[SHR_PROTO_JOB_DTYPE], 1);
}

static void
test_job_count(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, T_CHUNK + 1);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_JOB_COUNT);
	assert_int_equal(c->st.rejects[SHR_PROTO_JOB_COUNT], 1);
	m.count = T_CHUNK;	/* exactly a chunk is fine */
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
}

static void
test_bad_slot(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 0, T_WORLD, T_WINDOW, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_BAD_SLOT);
	m.slot = SHR_PROTO_SLOT_MASK;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_BAD_SLOT);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_SLOT], 2);
	m.slot = T_WINDOW - 1;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
}

static void
test_out_of_step(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m, r;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 0, T_WORLD, 1, 0, 10, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	m = data_msg(T_JOB, 1, T_WORLD, 1, 0, 11, 0, 4);	/* other tensor, same round */
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OUT_OF_STEP);
	m = data_msg(T_JOB, 1, T_WORLD, 1, 0, 10, 8, 4);	/* other offset */
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OUT_OF_STEP);
	assert_int_equal(c->st.rejects[SHR_PROTO_OUT_OF_STEP], 2);
	assert_int_equal(c->tx.len, 0);
	/* The round is untouched: the right contributions complete it. */
	m = data_msg(T_JOB, 1, T_WORLD, 1, 0, 10, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	m = data_msg(T_JOB, 2, T_WORLD, 1, 0, 10, 0, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_OK);
	r = tx_msg(c);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_int_equal(r.tensor, 10);
	assert_int_equal(c->st.completed, 1);
}

/* A message wrong in several ways gets the first reason of the documented order. */
static void
test_check_order(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 1, T_WORLD, T_WINDOW, 0, 1, 0, T_CHUNK + 1);
	m.dtype = SHR_DTYPE_FLOAT32;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_JOB_DTYPE);
	m.dtype = SHR_DTYPE_INT32;
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_JOB_COUNT);
	m.count = 2;
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_BAD_SLOT);
	m.world = 2;
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_BAD_RANK);
	m.job = 1234;
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_UNKNOWN_JOB);
}

static void
test_bad_type_and_invalid(void **state)
{
	struct ctx *c = *state;
	static const uint8_t types[] = {
		SHR_MSG_RESULT, SHR_MSG_JOIN_ACK, SHR_MSG_LEAVE_ACK, SHR_MSG_ABORT
	};
	struct shr_proto_msg m;
	unsigned int i;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (i = 0; i < sizeof(types); i++) {
		m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
		m.type = types[i];
		if (m.type != SHR_MSG_RESULT)
			m.count = 0;
		assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_BAD_TYPE);
	}
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_TYPE], sizeof(types));

	/* What shr_proto_validate() refuses is counted under its reason. */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	data(c, ADDR(0), &m, 0);	/* fills c->msg; accepted */
	c->msg[SHR_PROTO_HDR_LEN] ^= 1;
	assert_int_equal(shr_agg_input(c->agg, ADDR(0), c->msg, SHR_PROTO_HDR_LEN + 16,
				       c->now, &c->tx, &c->st), SHR_PROTO_BAD_CRC);
	assert_int_equal(shr_agg_input(c->agg, ADDR(0), c->msg, 10, c->now, &c->tx, &c->st),
			 SHR_PROTO_SHORT);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_CRC], 1);
	assert_int_equal(c->st.rejects[SHR_PROTO_SHORT], 1);
	assert_int_equal(c->st.data, 1);
	assert_int_equal(c->tx.len, 0);
}

/* ---- misc ---- */

static void
test_stats_add_and_create(void **state)
{
	struct shr_agg_stats a, b;
	struct shr_agg_params p;
	struct shr_agg *agg;
	unsigned int i;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	b.rx = 1;
	b.data = 2;
	b.completed = 3;
	b.resent = 4;
	b.duplicates = 5;
	b.bytes_summed = 6;
	b.tx_msgs = 7;
	b.tx_dsts = 8;
	b.joins = 9;
	b.leaves = 10;
	b.jobs_created = 11;
	b.jobs_freed = 12;
	b.aborts = 13;
	b.stale = 14;
	b.reaborts = 15;
	for (i = 0; i < SHR_PROTO_REASON_MAX; i++)
		b.rejects[i] = 100 + i;
	shr_agg_stats_add(&a, &b);
	shr_agg_stats_add(&a, &b);
	assert_int_equal(a.rx, 2);
	assert_int_equal(a.data, 4);
	assert_int_equal(a.completed, 6);
	assert_int_equal(a.resent, 8);
	assert_int_equal(a.duplicates, 10);
	assert_int_equal(a.bytes_summed, 12);
	assert_int_equal(a.tx_msgs, 14);
	assert_int_equal(a.tx_dsts, 16);
	assert_int_equal(a.joins, 18);
	assert_int_equal(a.leaves, 20);
	assert_int_equal(a.jobs_created, 22);
	assert_int_equal(a.jobs_freed, 24);
	assert_int_equal(a.aborts, 26);
	assert_int_equal(a.stale, 28);
	assert_int_equal(a.reaborts, 30);
	for (i = 0; i < SHR_PROTO_REASON_MAX; i++)
		assert_int_equal(a.rejects[i], 2 * (100 + i));

	agg = shr_agg_create(NULL);
	assert_non_null(agg);
	assert_int_equal(shr_agg_tx_cap(agg), SHR_PROTO_HDR_LEN + 2048 * 4);
	assert_int_equal(shr_agg_slots_used(agg), 0);
	assert_int_equal(shr_agg_job_info(agg, 63, &(struct shr_agg_job_info){ 0 }), 0);
	assert_int_equal(shr_agg_job_info(agg, 64, &(struct shr_agg_job_info){ 0 }), -ENOENT);
	shr_agg_free(agg);
	shr_agg_free(NULL);

	memset(&p, 0, sizeof(p));
	p.max_world = SHR_PROTO_MAX_WORLD + 1;
	errno = 0;
	assert_null(shr_agg_create(&p));
	assert_int_equal(errno, EINVAL);
	memset(&p, 0, sizeof(p));
	p.nslots = 8;
	p.max_window = 9;
	assert_null(shr_agg_create(&p));
	assert_int_equal(errno, EINVAL);
}

/*
 * A default window larger than max_window is refused at creation: otherwise a JOIN asking
 * window 0 would be granted more slots than any JOIN may ask for.
 */
static void
test_def_window_bounded(void **state)
{
	struct shr_agg_params p;
	struct shr_agg *agg;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.nslots = 16;
	p.max_window = 8;
	p.def_window = 9;
	errno = 0;
	assert_null(shr_agg_create(&p));
	assert_int_equal(errno, EINVAL);
	p.def_window = 8;	/* the bound itself is fine */
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	shr_agg_free(agg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unknown_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_rank_and_world, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spoofed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_departed_rank_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_dtype, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_type_and_invalid, setup, teardown),
		cmocka_unit_test(test_stats_add_and_create),
		cmocka_unit_test(test_def_window_bounded),
	};

	return cmocka_run_group_tests_name("agg", tests, NULL, NULL);
}
