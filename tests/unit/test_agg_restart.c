/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The aggregator's incarnations: tokens checked, members restarted on the same addresses,
 * a left rank joining from elsewhere, static jobs run again. */

#include "agg_test.h"

/* ---- incarnations (issue 14) and membership edges (issue 18) ---- */

/* One round of T_WORLD ranks on slot 0 with inputs from base; returns the RESULT's first sum. */
static int32_t
round0(struct ctx *c, uint32_t job, uint32_t step, uint8_t ver, int32_t base)
{
	struct shr_proto_msg m, r;
	int32_t v;
	uint16_t k;

	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(job, k, T_WORLD, 0, ver, 1, (uint64_t)step * T_WINDOW * 4, 4);
		m.step = step;
		assert_int_equal(data(c, ADDR(k), &m, base), SHR_PROTO_OK);
	}
	r = tx_msg(c);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_true(r.token == tok_get(c, job));
	memcpy(&v, (const uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN, sizeof(v));
	return v;
}

static void
test_token_checked(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint64_t tok;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	tok = tok_get(c, T_JOB);
	assert_true(tok != 0);
	/* DATA and LEAVE with another token: refused, counted, nothing summed or left */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	m.token = tok ^ 1;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_BAD_TOKEN);
	assert_int_equal(c->st.data, 0);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.job = T_JOB;
	m.world = T_WORLD;
	m.token = tok + 1;
	assert_int_equal(feed(c, ADDR(0), &m, NULL, 0), SHR_PROTO_BAD_TOKEN);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.leaves, 0);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_TOKEN], 2);
	/* a JOIN without a nonce */
	m = join_msg(T_JOB + 1, 0, 1, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK);
	m.token = 0;
	shr_proto_build(c->msg, &m, NULL, 0);
	assert_int_equal(shr_agg_input(c->agg, ADDR(0), c->msg, SHR_PROTO_HDR_LEN, c->now,
				       &c->tx, &c->st), SHR_PROTO_BAD_TOKEN);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	/* the job still sums exactly */
	assert_int_equal(round0(c, T_JOB, 0, 0, 5), 3 * 5 + 100 + 200);
}

/* Ranks crash (no LEAVE) after 0, 1 or 3 rounds; a new run on the same addresses with other
 * data gets its own sums, never the old run's. */
static void
test_restart_same_addresses(void **state)
{
	struct ctx *c = *state;
	unsigned int rounds[] = { 0, 1, 3 }, i, k;
	uint64_t old;

	uint32_t step = 0;

	t_run++;
	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (i = 0; i < 3; i++) {
		old = tok_get(c, T_JOB);
		for (k = 0; k < rounds[i]; k++, step++)
			assert_int_equal(round0(c, T_JOB, step, (uint8_t)(step & 1), 1000),
					 3 * 1000 + 300);
		/* they die; the new run's rank 0 JOINs: the old incarnation is aborted */
		t_run++;
		assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
				      T_CHUNK), SHR_PROTO_OK);
		assert_int_equal(tx_msg(c).type, SHR_MSG_ABORT);
		assert_int_equal(tx_msg(c).aux, ESTALE);
		assert_true(tx_msg(c).token == old);
		/* its resent JOIN and the others join a new incarnation */
		join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
		assert_true(tok_get(c, T_JOB) != old);
		/* a late DATA of the old run: refused */
		{
			struct shr_proto_msg m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);

			m.token = old;
			assert_int_equal(data(c, ADDR(1), &m, 1000), SHR_PROTO_BAD_TOKEN);
		}
		/* the new run's first round (fresh slots: version 0, step 0): its own sum */
		step = 0;
		assert_int_equal(round0(c, T_JOB, step, 0, 7 + (int32_t)i), 3 * (7 + (int)i) + 300);
		step++;
	}
	assert_int_equal(c->st.incarnations, 3);
}

/*
 * A member has left while the others finish: a JOIN for its rank with another nonce from
 * another host is not that member restarting (a forged JOIN must not end the job): refused
 * EADDRINUSE while the job is alive; once it has been silent for a job timeout, it starts a
 * new incarnation.
 */
static void
test_left_rank_join_elsewhere(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_info info;
	struct shr_proto_msg m, a;

	t_run++;
	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.job = T_JOB;
	m.world = T_WORLD;
	m.rank = 0;
	assert_int_equal(feed(c, ADDR(0), &m, NULL, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
	t_run++;	/* another process, elsewhere */
	assert_int_equal(join(c, ADDR(7), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK),
			 SHR_PROTO_SPOOFED);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, EADDRINUSE);
	assert_int_equal(c->tx.dst[0], ADDR(7));
	assert_int_equal(c->st.incarnations, 0);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.active, 1);
	assert_int_equal(info.joined, T_WORLD - 1);
	/* silent for a job timeout: a new run may take over */
	c->now += T_TIMEOUT + 1;
	assert_int_equal(join(c, ADDR(7), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK),
			 SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.aux, ESTALE);
	assert_int_equal(c->st.incarnations, 1);
}

/*
 * A member restarted on its own host gets a new (ephemeral) UDP port: its JOIN is that member
 * restarting, not a JOIN from elsewhere. The running job is restarted at once (ABORT ESTALE
 * to the old incarnation), and the new run, rank 1 on its new port, sums exactly.
 */
static void
test_restart_new_port(void **state)
{
	struct ctx *c = *state;
	uint64_t moved = SHR_AGG_ADDR(SHR_AGG_ADDR_IP(ADDR(1)), 40001u), old;
	struct shr_proto_msg m, a;
	int32_t v;
	uint16_t k;

	t_run++;
	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	assert_int_equal(round0(c, T_JOB, 0, 0, 1000), 3 * 1000 + 300);
	old = tok_get(c, T_JOB);
	/* rank 1 dies and its new process JOINs from another port of the same host */
	t_run++;
	assert_int_equal(join(c, moved, T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK),
			 SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.aux, ESTALE);
	assert_true(a.token == old);
	assert_int_equal(c->st.incarnations, 1);
	assert_int_equal(c->st.rejects[SHR_PROTO_SPOOFED], 0);
	/* the new run joins, rank 1 from its new port */
	for (k = 0; k < T_WORLD; k++)
		assert_int_equal(join(c, k == 1 ? moved : ADDR(k), T_JOB, k, T_WORLD,
				      SHR_DTYPE_INT32, T_WINDOW, T_CHUNK), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, 0);
	assert_int_equal(c->tx.ndst, T_WORLD);
	assert_true(c->tx.dst[1] == moved);
	assert_true(tok_get(c, T_JOB) != old);
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 0, 0, 1, 0, 4);
		m.step = 0;
		assert_int_equal(data(c, k == 1 ? moved : ADDR(k), &m, 7), SHR_PROTO_OK);
	}
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_RESULT);
	assert_true(a.token == tok_get(c, T_JOB));
	memcpy(&v, (const uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN, sizeof(v));
	assert_int_equal(v, 3 * 7 + 300);
}

/* A static job with fixed addresses, run twice in a row (every LEAVE acked): the second run
 * starts from fresh slots and gets its own sum, whichever copy the first run ended on. */
static void
test_static_rerun(void **state)
{
	struct ctx *c = *state;
	uint64_t addrs[T_WORLD] = { ADDR(0), ADDR(1), ADDR(2) };
	struct shr_agg_job_conf conf = {
		.job = 50, .world = T_WORLD, .dtype = SHR_DTYPE_INT32, .window = 2,
		.chunk_elems = T_CHUNK, .addrs = addrs, .ordered = 1,
	};
	struct shr_proto_msg m;
	uint64_t prev = 0;
	unsigned int run;
	uint16_t k;

	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	for (run = 0; run < 2; run++) {
		uint64_t tok;

		t_run++;
		for (k = 0; k < T_WORLD; k++) {
			assert_int_equal(join(c, ADDR(k), 50, k, T_WORLD, SHR_DTYPE_INT32, 2,
					      T_CHUNK), SHR_PROTO_OK);
			assert_int_equal(tx_msg(c).aux, 0);
		}
		tok = tok_get(c, 50);
		/* the second run is another incarnation: another token */
		assert_true(tok != 0 && tok != T_TOKEN && tok != prev);
		prev = tok;
		/* run 0 ends slot 0 on copy 0 after one round; run 1 after one round too */
		assert_int_equal(round0(c, 50, 0, 0, run == 0 ? 2000 : 3), 3 * (run == 0 ?
				 2000 : 3) + 300);
		leave_all(c, 50);
		/* every member left: the job stays, with its slots */
		assert_true(shr_agg_slots_used(c->agg) == 2);
		/*
		 * A member whose LEAVE_ACK was lost LEAVEs again with the ended incarnation's
		 * token: told it is gone (ENOENT, that token), not refused unanswered.
		 */
		memset(&m, 0, sizeof(m));
		m.type = SHR_MSG_LEAVE;
		m.job = 50;
		m.rank = 1;
		m.world = T_WORLD;
		m.token = tok;
		assert_int_equal(feed(c, ADDR(1), &m, NULL, 0), SHR_PROTO_OK);
		assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
		assert_int_equal(tx_msg(c).aux, ENOENT);
		assert_true(tx_msg(c).token == tok);
		/* From another address, or with a made-up token: refused. */
		assert_int_equal(feed(c, ADDR(3), &m, NULL, 0), SHR_PROTO_SPOOFED);
		m.token = tok ^ 1;
		assert_int_equal(feed(c, ADDR(1), &m, NULL, 0), SHR_PROTO_BAD_TOKEN);
		assert_int_equal(c->tx.len, 0);
	}
	assert_int_equal(c->st.incarnations, 0);
	assert_int_equal(c->st.rejects[SHR_PROTO_OUT_OF_STEP], 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_token_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_same_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_left_rank_join_elsewhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_new_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_rerun, setup, teardown),
	};

	return cmocka_run_group_tests_name("agg_restart", tests, NULL, NULL);
}
