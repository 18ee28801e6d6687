/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The aggregator's timeouts and aborts: job and JOIN timeouts, the abort record (told again,
 * JOIN again, expiry, bound), shutdown. */

#include "agg_test.h"

/* ---- timeouts ---- */

static void
test_timeout_abort(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_info info;
	struct shr_proto_msg m, a;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	/* Slot 0 completes; slot 3 misses rank 1 (opened later); slot 2 misses rank 0. */
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
	}
	c->now += 100;
	m = data_msg(T_JOB, 0, T_WORLD, 3, 0, 1, 24, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	m = data_msg(T_JOB, 2, T_WORLD, 3, 0, 1, 24, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_OK);
	c->now += 100;
	m = data_msg(T_JOB, 1, T_WORLD, 2, 0, 1, 16, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	m = data_msg(T_JOB, 2, T_WORLD, 2, 0, 1, 16, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_OK);

	/* Not yet. */
	assert_int_equal(shr_agg_tick(c->agg, 1000 + 100 + T_TIMEOUT, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	/* The oldest open round (slot 3) is past the timeout: abort naming rank 1. */
	assert_int_equal(shr_agg_tick(c->agg, 1000 + 101 + T_TIMEOUT, &c->tx, &c->st), 1);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.job, T_JOB);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.aux, ETIMEDOUT);
	assert_int_equal(c->tx.ndst, T_WORLD);
	for (k = 0; k < T_WORLD; k++)
		assert_int_equal(c->tx.dst[k], ADDR(k));
	assert_int_equal(c->st.aborts, 1);
	assert_int_equal(c->st.jobs_freed, 1);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 0);
	/* One abort per call; nothing left. */
	assert_int_equal(shr_agg_tick(c->agg, 1000 + 10 * T_TIMEOUT, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	m = data_msg(T_JOB, 1, T_WORLD, 3, 0, 1, 24, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_UNKNOWN_JOB);
}

/*
 * A job of more than 64 ranks: the round's ABORT names the rank that did not send (65), not
 * one whose bit sits in another word of the round's bitmap (rank 1 sent, as did 66..69).
 */
static void
test_timeout_abort_big_world(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_params p = t_params(T_TIMEOUT);
	const uint16_t world = 70, silent = 65;
	struct shr_proto_msg m, a;
	uint16_t r;

	shr_agg_free(c->agg);
	p.max_world = 72;
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	join_all(c, T_JOB, world, SHR_DTYPE_INT32);
	for (r = 0; r < world; r++) {
		if (r == silent)
			continue;
		m = data_msg(T_JOB, r, world, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(r), &m, 0), SHR_PROTO_OK);
		assert_int_equal(c->tx.len, 0);	/* the round waits for rank 65 */
	}
	assert_int_equal(shr_agg_tick(c->agg, c->now + T_TIMEOUT, &c->tx, &c->st), 0);
	assert_int_equal(shr_agg_tick(c->agg, c->now + T_TIMEOUT + 1, &c->tx, &c->st), 1);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.rank, silent);
	assert_int_equal(a.aux, ETIMEDOUT);
	assert_int_equal(c->tx.ndst, world);
}

/* A job that completes its rounds never times out, however long it idles. */
static void
test_no_abort_when_idle(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
	}
	assert_int_equal(shr_agg_tick(c->agg, c->now + 100 * T_TIMEOUT, &c->tx, &c->st), 0);
	assert_int_equal(shr_agg_slots_used(c->agg), T_WINDOW);
	/* A lone duplicate of a completed round does not open anything either. */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->st.resent, 1);
	assert_int_equal(shr_agg_tick(c->agg, c->now + 100 * T_TIMEOUT, &c->tx, &c->st), 0);
	assert_int_equal(c->st.aborts, 0);
}

static void
test_join_timeout(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;

	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(shr_agg_tick(c->agg, c->now + SHR_AGG_JOIN_WAIT * T_TIMEOUT, &c->tx,
					&c->st), 0);
	assert_int_equal(shr_agg_tick(c->agg, c->now + SHR_AGG_JOIN_WAIT * T_TIMEOUT + 1, &c->tx,
					&c->st), 1);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.aux, ETIMEDOUT);
	assert_int_equal(c->tx.ndst, 2);
	assert_int_equal(c->tx.dst[0], ADDR(0));
	assert_int_equal(c->tx.dst[1], ADDR(2));
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
}

/*
 * A static job that binds on JOIN waits SHR_AGG_JOIN_WAIT job timeouts for its members from
 * its first JOIN, not from shr_agg_job_add() (nor from its last run's end): members that
 * start long after the box are told the whole wait (EINPROGRESS, in ms), are not aborted
 * while it lasts, and form the job.
 */
static void
test_static_join_wait(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_conf conf = {
		.job = 60, .world = T_WORLD, .dtype = SHR_DTYPE_INT32, .window = T_WINDOW,
		.chunk_elems = T_CHUNK, .ordered = 1,
	};
	uint64_t wait = SHR_AGG_JOIN_WAIT * T_TIMEOUT;
	struct shr_proto_msg a;
	unsigned int run;
	uint16_t k;

	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	for (run = 0; run < 2; run++) {
		/* the members start long after the box (run 0) or after the last run (run 1) */
		t_run++;
		c->now += 10 * wait;
		assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 0);
		assert_int_equal(join(c, ADDR(0), 60, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
				      T_CHUNK), SHR_PROTO_OK);
		a = tx_msg(c);
		assert_int_equal(a.aux, EINPROGRESS);
		assert_int_equal(a.feedback, wait / 1000000u);
		/* the others come within the wait: nothing aborted meanwhile */
		c->now += wait;
		assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 0);
		for (k = 1; k < T_WORLD; k++)
			assert_int_equal(join(c, ADDR(k), 60, k, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
					      T_CHUNK), SHR_PROTO_OK);
		a = tx_msg(c);
		assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
		assert_int_equal(a.aux, 0);
		assert_int_equal(c->tx.ndst, T_WORLD);
		assert_int_equal(c->st.aborts, 0);
		/* they all leave: the job waits for its next run */
		leave_all(c, 60);
	}
}

/*
 * Nudges: rank 0 lost the RESULT of slot 0's round (it never moves on to the slot's other
 * copy) while ranks 1 and 2 wait for it there. After job_timeout / 8 the box resends that
 * result to rank 0 alone, unasked, once per job_timeout / 8; once rank 0 sends, the round
 * completes and nothing more is sent. A rank that owes nothing (its first round) is not
 * nudged, and one that never answers is still named at the timeout.
 */
static void
test_nudge(void **state)
{
	struct ctx *c = *state;
	uint64_t every = T_TIMEOUT / 8, t0;
	struct shr_proto_msg m, a;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
	}
	assert_int_equal(tx_msg(c).type, SHR_MSG_RESULT);
	/* slot 1: a first round, rank 0 missing but owing nothing */
	m = data_msg(T_JOB, 1, T_WORLD, 1, 0, 1, 8, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	/* slot 0's next round (copy 1): ranks 1 and 2 have had the result, rank 0 not */
	t0 = c->now;
	for (k = 1; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 0, 1, 1, 32, 4);
		assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
	}
	assert_int_equal(shr_agg_tick(c->agg, t0 + every, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(shr_agg_tick(c->agg, t0 + every + 1, &c->tx, &c->st), 0);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_RESULT);
	assert_int_equal(a.slot, 0);
	assert_int_equal(a.ver, 0);
	assert_int_equal(a.offset, 0);
	assert_int_equal(a.count, 4);
	assert_int_equal(c->tx.len, SHR_PROTO_HDR_LEN + 4 * 4);
	assert_int_equal(c->tx.ndst, 1);
	assert_true(c->tx.dst[0] == ADDR(0));
	{
		const uint8_t *p = (const uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN;

		/* element 1 of the sum of the ranks' chunks: 1 + 101 + 201, little-endian */
		assert_int_equal(p[4] | p[5] << 8 | p[6] << 16 | p[7] << 24, 303);
	}
	assert_int_equal(c->st.nudges, 1);
	/* one per period: nothing more now, nor before another period has passed */
	assert_int_equal(shr_agg_tick(c->agg, t0 + every + 1, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(shr_agg_tick(c->agg, t0 + 2 * every + 1, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(shr_agg_tick(c->agg, t0 + 2 * every + 2, &c->tx, &c->st), 0);
	assert_true(c->tx.len != 0 && c->tx.dst[0] == ADDR(0));
	assert_int_equal(c->st.nudges, 2);
	/* rank 0 moves on: the round completes, nobody owes anything */
	c->now = t0 + 2 * every + 3;
	m = data_msg(T_JOB, 0, T_WORLD, 0, 1, 1, 32, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_RESULT);
	assert_int_equal(c->tx.ndst, T_WORLD);
	assert_int_equal(shr_agg_tick(c->agg, t0 + 4 * every, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.nudges, 2);
	/* slot 1's round still misses rank 0 (and 2): the timeout names rank 0 */
	assert_int_equal(shr_agg_tick(c->agg, t0 + T_TIMEOUT + 1, &c->tx, &c->st), 1);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.rank, 0);
	assert_int_equal(c->st.nudges, 2);
}

/* A static job is reset, not freed, by a timeout. */
static void
test_static_timeout(void **state)
{
	struct ctx *c = *state;
	uint64_t addrs[2] = { ADDR(0), ADDR(1) };
	struct shr_agg_job_conf conf = {
		.token = T_TOKEN,
		.job = 9, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 2,
		.chunk_elems = 4, .addrs = addrs,
	};
	struct shr_proto_msg m;

	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	m = data_msg(9, 1, 2, 1, 1, 1, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(shr_agg_tick(c->agg, c->now + T_TIMEOUT + 1, &c->tx, &c->st), 1);
	assert_int_equal(tx_msg(c).rank, 0);
	assert_int_equal(c->st.jobs_freed, 0);
	assert_int_equal(shr_agg_slots_used(c->agg), 2);
	/* The half round is gone: rank 1's contribution counts again, not as a duplicate. */
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->st.duplicates, 0);
	m.rank = 0;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_RESULT);
}

/* ---- aborted jobs: members that lost the ABORT are told again ---- */

/* Asserts that tx is the ABORT of job (blaming rank, ETIMEDOUT) to dst alone. */
static void
assert_abort_to(const struct ctx *c, uint32_t job, uint16_t rank, uint64_t dst)
{
	struct shr_proto_msg a = tx_msg(c);

	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.job, job);
	assert_int_equal(a.rank, rank);
	assert_int_equal(a.aux, ETIMEDOUT);
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->tx.dst[0], dst);
}

/* Job job of world T_WORLD runs; ranks 0 and 2 open a round on slot 0; rank 1 is silent:
 * the box aborts the job (naming rank 1) at c->now + T_TIMEOUT + 1, which becomes c->now. */
static void
abort_silent_rank1(struct ctx *c, uint32_t job)
{
	struct shr_proto_msg m;
	uint64_t aborts = c->st.aborts;

	join_all(c, job, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(job, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	m = data_msg(job, 2, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_OK);
	c->now += T_TIMEOUT + 1;
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 1);
	assert_int_equal(tx_msg(c).type, SHR_MSG_ABORT);
	assert_int_equal(c->tx.ndst, T_WORLD);
	assert_int_equal(c->st.aborts, aborts + 1);
}

static void
test_abort_told_again(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint64_t gap = T_TIMEOUT;	/* job_timeout / 10, but 1 ms at least */
	int i, told;

	abort_silent_rank1(c, T_JOB);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	/* rank 0 lost the ABORT and resends its DATA: told again, alone */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_abort_to(c, T_JOB, 1, ADDR(0));
	assert_int_equal(c->st.reaborts, 1);
	/* a flood of its DATA gets nothing more until the gap has passed */
	for (i = 0; i < 100; i++) {
		m = data_msg(T_JOB, 0, T_WORLD, (uint32_t)i % T_WINDOW, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
		assert_int_equal(c->tx.len, 0);
	}
	assert_int_equal(c->st.rejects[SHR_PROTO_UNKNOWN_JOB], 101);
	/* the rate limit is per member: rank 2 (and the blamed rank 1) are told at once */
	m = data_msg(T_JOB, 2, T_WORLD, 1, 0, 1, 8, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_abort_to(c, T_JOB, 1, ADDR(2));
	m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_abort_to(c, T_JOB, 1, ADDR(1));
	assert_int_equal(c->st.reaborts, 3);
	/* not a member: a stranger, or a member's address claiming another rank */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(5), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->tx.len, 0);
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	c->now += gap;
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->tx.len, 0);
	/* after the gap, rank 0 is told again; a flood over a long time gets 8 answers */
	for (i = 0, told = 0; i < 1000; i++) {
		assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
		if (c->tx.len != 0) {
			assert_abort_to(c, T_JOB, 1, ADDR(0));
			told++;
		}
		c->now += gap / 4;
	}
	assert_int_equal(told, 7);	/* 8 in all with the first */
	assert_int_equal(c->st.reaborts, 3 + 7);
	/* a ticking box does not send it again by itself */
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.aborts, 1);
	assert_int_equal(c->st.jobs_freed, 1);
	assert_int_equal(c->st.data, 2);
}

/* A member's JOIN for the aborted job is answered with the ABORT; other JOINs create it anew. */
static void
test_abort_join_again(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint16_t r;

	/* the job times out waiting for rank 1; ranks 0 and 2 keep resending JOIN */
	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	c->now += SHR_AGG_JOIN_WAIT * T_TIMEOUT + 1;
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 1);
	assert_int_equal(c->tx.ndst, 2);
	assert_int_equal(c->st.jobs_created, 1);
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_STALE_JOIN);
	assert_abort_to(c, T_JOB, 1, ADDR(2));
	/* it echoes the JOIN's nonce: a rank that lost its EINPROGRESS (so never learnt the
	 * token) takes it as its own, and fails with the box's reason, not its own timeout */
	assert_true(tx_msg(c).offset == nonce_of(T_JOB, 2, ADDR(2)));
	assert_int_equal(c->st.reaborts, 1);
	/* no job was made again for it, and its next JOIN (too soon) is not answered */
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	assert_int_equal(c->st.jobs_created, 1);
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_STALE_JOIN);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);

	/* JOINs that are not from a member create the job: another process of rank 0 (its
	 * nonce differs), another chunk... */
	m = join_msg(T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK);
	m.token = 0x1234;
	assert_int_equal(feed(c, ADDR(0), &m, NULL, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(c->st.jobs_created, 2);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);	/* none while it fills */
	/* ...while it forms, the old members are still told (rank 2 is not bound in it) */
	c->now += T_TIMEOUT;
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_STALE_JOIN);
	assert_abort_to(c, T_JOB, 1, ADDR(2));
	/* rank 1 never joined the aborted job: it joins the new one; so does rank 2 from a
	 * new address; the job runs, and the record is forgotten */
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(6), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_JOIN_ACK);
	assert_int_equal(c->tx.ndst, T_WORLD);
	m = data_msg(T_JOB, 2, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(c->tx.len, 0);
	for (r = 0; r < T_WORLD; r++) {
		m = data_msg(T_JOB, r, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, r == 2 ? ADDR(6) : ADDR(r), &m, 0), SHR_PROTO_OK);
	}
	assert_int_equal(tx_msg(c).type, SHR_MSG_RESULT);
	assert_int_equal(c->st.reaborts, 2);
}

/* The record expires after 10 job timeouts: then a member's JOIN makes the job again. */
static void
test_abort_record_expires(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint64_t t_abort;

	abort_silent_rank1(c, T_JOB);
	t_abort = c->now;
	c->now = t_abort + 10 * T_TIMEOUT - 1;
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_abort_to(c, T_JOB, 1, ADDR(0));
	c->now = t_abort + 10 * T_TIMEOUT;
	m = data_msg(T_JOB, 2, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->tx.len, 0);
	/* a tick forgets it for good; the same members make the same job again */
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 0);
	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	assert_int_equal(c->st.jobs_created, 2);
	assert_int_equal(c->st.reaborts, 1);
}

/* The record is bounded (min(max_jobs, 16) jobs): the oldest is forgotten first. */
static void
test_abort_record_bounded(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint32_t job;
	uint16_t r;

	/* max_jobs is 4: five jobs aborted one after the other */
	for (job = 100; job < 105; job++)
		abort_silent_rank1(c, job);
	for (job = 100; job < 105; job++) {
		m = data_msg(job, 0, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
		if (job == 100) {
			assert_int_equal(c->tx.len, 0);
		} else {
			assert_abort_to(c, job, 1, ADDR(0));
		}
	}
	assert_int_equal(c->st.reaborts, 4);
	/* job 104 made again by new processes (other nonces) of the same members, and
	 * aborted again (rank 0 sent, ranks 1 and 2 did not) */
	for (r = 0; r < T_WORLD; r++) {
		m = join_msg(104, r, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK);
		m.token = 77;
		assert_int_equal(feed(c, ADDR(r), &m, NULL, 0), SHR_PROTO_OK);
	}
	assert_int_equal(tx_msg(c).type, SHR_MSG_JOIN_ACK);
	m = data_msg(104, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	c->now += T_TIMEOUT + 1;
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 1);
	assert_int_equal(tx_msg(c).type, SHR_MSG_ABORT);
	/*
	 * Records are kept when a job of the same id runs again (they stop late JOINs of
	 * the old run): the second abort of 104 is a record of its own and evicts the
	 * oldest (101). Its members' DATA carries the new incarnation's token.
	 */
	for (job = 101; job < 105; job++) {
		c->now += T_TIMEOUT;
		m = data_msg(job, 2, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_UNKNOWN_JOB);
		if (job == 101) {
			assert_int_equal(c->tx.len, 0);
			continue;
		}
		assert_abort_to(c, job, 1, ADDR(2));
	}
}

/* Shutting down: every job with members gets one ABORT (rank ALL, ESHUTDOWN), to them all. */
static void
test_shutdown(void **state)
{
	struct ctx *c = *state;
	uint64_t fixed[2] = { ADDR(6), ADDR(7) };
	struct shr_agg_job_conf sconf = {
		.job = 9, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 2, .chunk_elems = 4,
		.addrs = fixed,
	};
	struct shr_agg_job_conf empty = {
		.job = 10, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 2, .chunk_elems = 4,
	};
	uint32_t seen_job[4] = { 0 };
	uint32_t n = 0, k;
	struct shr_proto_msg m, a;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);			/* running */
	assert_int_equal(join(c, ADDR(4), 8, 1, 2, SHR_DTYPE_INT32, 2, T_CHUNK),
			 SHR_PROTO_OK);					/* joining */
	assert_int_equal(shr_agg_job_add(c->agg, &sconf), 0);		/* fixed members */
	assert_int_equal(shr_agg_job_add(c->agg, &empty), 0);		/* nobody yet */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);	/* an open round */

	while (shr_agg_shutdown(c->agg, &c->tx, &c->st) == 1) {
		assert_true(n < 4);
		a = tx_msg(c);
		assert_int_equal(a.type, SHR_MSG_ABORT);
		assert_int_equal(a.rank, SHR_PROTO_RANK_ALL);
		assert_int_equal(a.aux, ESHUTDOWN);
		seen_job[n++] = a.job;
		switch (a.job) {
		case T_JOB:
			assert_int_equal(c->tx.ndst, T_WORLD);
			for (k = 0; k < T_WORLD; k++)
				assert_int_equal(c->tx.dst[k], ADDR(k));
			break;
		case 8:
			assert_int_equal(c->tx.ndst, 1);
			assert_int_equal(c->tx.dst[0], ADDR(4));
			break;
		case 9:
			assert_int_equal(c->tx.ndst, 2);
			assert_int_equal(c->tx.dst[0], ADDR(6));
			assert_int_equal(c->tx.dst[1], ADDR(7));
			break;
		default:
			fail_msg("ABORT for job %u", a.job);
		}
	}
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(n, 3);
	assert_int_not_equal(seen_job[0], seen_job[1]);
	assert_int_not_equal(seen_job[1], seen_job[2]);
	assert_int_not_equal(seen_job[0], seen_job[2]);
	assert_int_equal(c->st.aborts, 3);
	assert_int_equal(c->st.jobs_freed, 2);
	assert_int_equal(shr_agg_slots_used(c->agg), 4);	/* the two static jobs */
	/* not remembered: a member's DATA is just an unknown job now */
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.reaborts, 0);
	/* a new pass tells the fixed members again */
	assert_int_equal(shr_agg_shutdown(c->agg, &c->tx, &c->st), 1);
	assert_int_equal(tx_msg(c).job, 9);
	assert_int_equal(shr_agg_shutdown(c->agg, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_timeout_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_abort_big_world, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nudge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_abort_when_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_join_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_join_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_told_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_join_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_record_expires, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_record_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown, setup, teardown),
	};

	return cmocka_run_group_tests_name("agg_life", tests, NULL, NULL);
}
