/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The aggregator's jobs (continued from test_agg_jobs.c): refusals and aborts that must leave
 * nothing behind (found by an audit, 2026-11-29), each on a box of its own. */

#include "agg_test.h"

/* m into b, fed to agg from src at now; *out: the message sent back (type 0: none). */
static enum shr_proto_reason
z_feed(struct shr_agg *agg, struct shr_agg_tx *tx, uint8_t *txbuf, size_t txcap, uint64_t src,
       const struct shr_proto_msg *m, uint64_t now, struct shr_agg_stats *st,
       struct shr_proto_msg *out)
{
	uint8_t b[SHR_PROTO_HDR_LEN + 64 * 4];
	size_t plen = m->type == SHR_MSG_DATA ? (size_t)m->count * 4 : 0;
	enum shr_proto_reason r;

	assert_true(plen <= 64 * 4);
	memset(b + SHR_PROTO_HDR_LEN, 0, plen);
	shr_proto_build(b, m, b + SHR_PROTO_HDR_LEN, plen);
	tx->buf = txbuf;
	tx->cap = txcap;
	r = shr_agg_input(agg, src, b, SHR_PROTO_HDR_LEN + plen, now, tx, st);
	memset(out, 0, sizeof(*out));
	if (tx->len != 0)
		assert_int_equal(shr_proto_validate(txbuf, tx->len, out), SHR_PROTO_OK);
	return r;
}

/*
 * A message of type from rank of job (world ranks, int32) with token (a JOIN's nonce): a JOIN
 * asks for window 4; a DATA is a SUM of 8 elements at step 1, slot 0.
 */
static struct shr_proto_msg
z_msg(uint8_t type, uint32_t job, uint16_t rank, uint16_t world, uint64_t token)
{
	struct shr_proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.job = job;
	m.rank = rank;
	m.world = world;
	m.dtype = SHR_DTYPE_INT32;
	m.token = token;
	if (type == SHR_MSG_JOIN)
		m.slot = 4;
	if (type == SHR_MSG_DATA) {
		m.op = SHR_OP_SUM;
		m.count = 8;
		m.step = 1;
	}
	return m;
}

static struct shr_proto_msg
z_join(uint32_t job, uint16_t rank, uint16_t world, uint64_t nonce, uint32_t count)
{
	struct shr_proto_msg m = z_msg(SHR_MSG_JOIN, job, rank, world, nonce);

	m.count = count;
	return m;
}

/* The boxes of these tests: small, a 1 ms job timeout unless the test says otherwise. */
static const struct shr_agg_params z_params = {
	.nslots = 64, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
	.job_timeout_ns = 1000000ull,
};

/*
 * A JOIN refused for its tree ranks (root + span past SHR_PROTO_MAX_WORLD) made the job
 * first and left it: no member, so no timeout freed it; four filled the table for good.
 */
static void
test_refused_join_no_zombie(void **state)
{
	struct shr_agg_params p = z_params;
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg = shr_agg_create(&p);
	uint32_t job;

	(void)state;
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	for (job = 1; job <= 5; job++) {
		m = z_join(job, 0, 2, 0x1234 + job, 8);
		m.tensor = 1;
		m.root = 5000;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1000, &st,
					&a), SHR_PROTO_BAD_RANK);
	}
	assert_int_equal(st.jobs_created, 0);
	/* a good JOIN of job 1 (another window) and of a new job get in */
	m = z_join(1, 0, 2, 0x777, 8);
	m.slot = 2;
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 2000, &st, &a),
			 SHR_PROTO_OK);
	assert_int_equal(a.aux, EINPROGRESS);
	m = z_join(99, 0, 2, 0x778, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 2000, &st, &a),
			 SHR_PROTO_OK);
	assert_int_equal(a.aux, EINPROGRESS);
	shr_agg_free(agg);
}

/*
 * A tree box's job, every rank joined (waiting for the upstream), a rank's new process whose
 * path fits less than the job's chunk: the ABORT goes to every member and to that JOIN,
 * world + 1 addresses (it wrote past the control path's list of max_world: ASan), and once
 * to a rank bound at the JOIN's own address.
 */
static void
test_abort_join_fits_list(void **state)
{
	struct shr_agg_params p = z_params;
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg;

	(void)state;
	p.max_world = 2;
	p.upstream = SHR_AGG_ADDR(0x0a000001u, 9000);
	p.up_world = 2;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	m = z_join(7, 0, 2, 0x1111, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1000, &st, &a), 0);
	m = z_join(7, 1, 2, 0x2222, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(1), &m, 1000, &st, &a), 0);
	assert_int_equal(a.type, SHR_MSG_JOIN);	/* up: the job waits for its upstream */
	/* rank 1 again from elsewhere (a new port: a restarted process), its path fits 4 */
	m = z_join(7, 1, 2, 0x3333, 0);
	m.feedback = 4;
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), SHR_AGG_ADDR(0xc6120002u, 40001),
				&m, 1010, &st, &a), SHR_PROTO_PATH_MTU);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.aux, EMSGSIZE);
	assert_int_equal(tx.ndst, 3);
	assert_true(tx.dst[2] == SHR_AGG_ADDR(0xc6120002u, 40001));
	shr_agg_free(agg);
}

/*
 * Two data lanes answering DATA of an aborted job at once (the ABORT again, to each sender):
 * each answer's destination is its own, not a list the other lane's call overwrites.
 */
static void
test_reabort_dst_per_call(void **state)
{
	struct shr_agg_params p = z_params;
	static uint8_t b0[1024], b1[1024], b2[1024];
	struct shr_agg_tx t0, t1, t2;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg;
	uint64_t tok, now = 1000;
	uint16_t r;

	(void)state;
	p.lanes = 2;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	for (r = 0; r < 2; r++) {
		m = z_join(9, r, 2, 0xa0 + r, 8);
		assert_int_equal(z_feed(agg, &t2, b2, sizeof(b2), ADDR(r), &m, now, &st, &a), 0);
	}
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	tok = a.token;
	m = z_msg(SHR_MSG_DATA, 9, 0, 2, tok);
	assert_int_equal(z_feed(agg, &t2, b2, sizeof(b2), ADDR(0), &m, now, &st, &a), 0);
	/* rank 1 never sends: the round times out, the job is aborted */
	t2.buf = b2;
	t2.cap = sizeof(b2);
	assert_true(shr_agg_tick(agg, now + 5000000, &t2, &st) > 0);
	now += 6000000;
	m.slot = 0;
	(void)z_feed(agg, &t0, b0, sizeof(b0), ADDR(0), &m, now, &st, &a);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(t0.ndst, 1);
	m.rank = 1;
	m.slot = 1;
	(void)z_feed(agg, &t1, b1, sizeof(b1), ADDR(1), &m, now, &st, &a);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(t1.ndst, 1);
	/* lane 0's answer still goes to rank 0 */
	assert_true(t0.dst[0] == ADDR(0));
	assert_true(t1.dst[0] == ADDR(1));
	shr_agg_free(agg);
}

/*
 * A static job's incarnation aborted (a rank silent) while rank 1 lost the ABORT: its LEAVE
 * with the ended incarnation's token is told the incarnation is gone (LEAVE_ACK ENOENT, as
 * for a freed job), not ignored (its destroy waited and said the box still held it).
 */
static void
test_leave_after_lost_abort(void **state)
{
	struct shr_agg_params p = z_params;
	struct shr_agg_job_conf jc = {
		.job = 5, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 4, .chunk_elems = 8,
		.ordered = 1,
	};
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg = shr_agg_create(&p);
	uint64_t tok, now = 1000;
	uint16_t r;

	(void)state;
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	assert_int_equal(shr_agg_job_add(agg, &jc), 0);
	for (r = 0; r < 2; r++) {
		m = z_join(5, r, 2, 0x1111 * (r + 1u), 8);
		m.slot = 0;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now, &st,
					&a), 0);
	}
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	tok = a.token;
	m = z_msg(SHR_MSG_DATA, 5, 0, 2, tok);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, now, &st, &a), 0);
	now += 5000000;
	tx.buf = txbuf;
	tx.cap = sizeof(txbuf);
	assert_true(shr_agg_tick(agg, now, &tx, &st) > 0);	/* the ABORT: rank 1 loses it */
	m = z_msg(SHR_MSG_LEAVE, 5, 1, 2, tok);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(1), &m, now + 1000, &st,
				&a), SHR_PROTO_OK);
	assert_int_equal(a.type, SHR_MSG_LEAVE_ACK);
	assert_int_equal(a.aux, ENOENT);
	assert_int_equal(a.rank, 1);
	/* not from the member's address: nothing */
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(3), &m, now + 2000, &st,
				&a), SHR_PROTO_BAD_TOKEN);
	assert_int_equal(tx.len, 0);
	shr_agg_free(agg);
}

/*
 * A static job whose first incarnation's members came with tree ranks (a box below) and whose
 * next one's are plain ranks: the next one checks roots against its world again (a DATA of a
 * reduce to root 5 in a world of 2 was taken).
 */
static void
test_incarnation_forgets_tree(void **state)
{
	struct shr_agg_params p = z_params;
	struct shr_agg_job_conf jc = {
		.job = 6, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 4, .chunk_elems = 8,
		.ordered = 1,
	};
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg;
	uint64_t tok, now = 1000;
	uint16_t r;

	(void)state;
	p.job_timeout_ns = 1000000000ull;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	assert_int_equal(shr_agg_job_add(agg, &jc), 0);
	/* incarnation 1: each member stands for one tree rank (its own) */
	for (r = 0; r < 2; r++) {
		m = z_join(6, r, 2, 0x100 + r, 8);
		m.slot = 0;
		m.root = r;
		m.tensor = 1;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now, &st,
					&a), 0);
	}
	tok = a.token;
	for (r = 0; r < 2; r++) {
		m = z_msg(SHR_MSG_LEAVE, 6, r, 2, tok);
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now, &st,
					&a), 0);
	}
	/* incarnation 2: plain members */
	for (r = 0; r < 2; r++) {
		m = z_join(6, r, 2, 0x200 + r, 8);
		m.slot = 0;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now + 10, &st,
					&a), 0);
	}
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_true(a.token != tok);
	m = z_msg(SHR_MSG_DATA, 6, 0, 2, a.token);
	m.kind = SHR_KIND_REDUCE;
	m.root = 5;
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, now + 20, &st, &a),
			 SHR_PROTO_BAD_KIND);
	shr_agg_free(agg);
}

/*
 * A rank that gave up while the job filled (its LEAVE) and whose JOIN comes in again late (a
 * copy delayed on the way): not bound again (the job would start with a process that is gone
 * and time out naming it); a new process of that rank (a new nonce) is.
 */
static void
test_left_rank_late_join(void **state)
{
	struct shr_agg_params p = z_params;
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg = shr_agg_create(&p);
	struct shr_agg_job_info ji;

	(void)state;
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	m = z_join(4, 1, 3, 0xb1, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(1), &m, 1000, &st, &a), 0);
	m = z_join(4, 0, 3, 0xa0, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1000, &st, &a), 0);
	assert_int_equal(a.aux, EINPROGRESS);
	m = z_msg(SHR_MSG_LEAVE, 4, 0, 3, a.token);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1100, &st, &a), 0);
	assert_int_equal(a.type, SHR_MSG_LEAVE_ACK);
	m = z_join(4, 0, 3, 0xa0, 8);	/* the delayed copy */
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1200, &st, &a),
			 SHR_PROTO_STALE_JOIN);
	assert_int_equal(shr_agg_job_info(agg, 0, &ji), 1);
	assert_int_equal(ji.joined, 1);
	m = z_join(4, 0, 3, 0xa1, 8);	/* a new process */
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1300, &st, &a), 0);
	assert_int_equal(shr_agg_job_info(agg, 0, &ji), 1);
	assert_int_equal(ji.joined, 2);
	shr_agg_free(agg);
}

/*
 * A tree's job whose members' tree ranks overlap (each stands for tree rank 0) runs allreduce
 * only: rank 1's broadcast is refused, and the next tick aborts the job naming rank 1, the
 * member that asked for it (EOPNOTSUPP), to every member.
 */
static void
test_tree_unsup_names_rank(void **state)
{
	struct shr_agg_params p = z_params;
	struct shr_agg_job_conf jc = {
		.job = 7, .world = 3, .dtype = SHR_DTYPE_INT32, .window = 4, .chunk_elems = 8,
		.ordered = 1,
	};
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg;
	uint64_t now = 1000;
	uint16_t r;

	(void)state;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	assert_int_equal(shr_agg_job_add(agg, &jc), 0);
	for (r = 0; r < 3; r++) {
		m = z_join(7, r, 3, 0x300 + r, 8);
		m.slot = 0;
		m.root = 0;
		m.tensor = 1;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now, &st,
					&a), 0);
	}
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	m = z_msg(SHR_MSG_DATA, 7, 1, 3, a.token);
	m.kind = SHR_KIND_BROADCAST;
	m.root = 0;
	m.aux = SHR_PROTO_RANK_ALL;
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(1), &m, now, &st, &a),
			 SHR_PROTO_BAD_KIND);
	tx.buf = txbuf;
	tx.cap = sizeof(txbuf);
	assert_int_equal(shr_agg_tick(agg, now + 1, &tx, &st), 1);
	assert_int_equal(shr_proto_validate(txbuf, tx.len, &a), SHR_PROTO_OK);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.job, 7);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.aux, EOPNOTSUPP);
	assert_int_equal(tx.ndst, 3);
	shr_agg_free(agg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_join_no_zombie),
		cmocka_unit_test(test_abort_join_fits_list),
		cmocka_unit_test(test_reabort_dst_per_call),
		cmocka_unit_test(test_leave_after_lost_abort),
		cmocka_unit_test(test_incarnation_forgets_tree),
		cmocka_unit_test(test_tree_unsup_names_rank),
		cmocka_unit_test(test_left_rank_late_join),
	};

	return cmocka_run_group_tests_name("agg_jobs_refusals", tests, NULL, NULL);
}
