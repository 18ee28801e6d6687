/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * A box with an upstream (lib/agg, shr_agg_params::upstream), message by message, without the
 * simulated tree of test_agg_tree.c: what such a box refuses (its parameters, a reproducible
 * job's JOIN), a member's LEAVE that aborts the job, the upstream's activation and ABORT taken
 * only with the token it told the leaf, a refusal from upstream that ends the job everywhere,
 * a round lost upstream resent by the leaf's own timer, and a leaf's upstream state released with
 * its job.
 */

#include "agg_tree_sim.h"	/* T_MSG_MAX, T_PORT (no simulation here) */

/* What a box with an upstream refuses (other kinds of collective: test_agg_tree_coll.c). */
static void
test_tree_params(void **state)
{
	struct shr_agg_params p = { .upstream = SHR_AGG_ADDR(0xc6120003u, T_PORT), .up_rank = 0,
				    .up_world = 2, .lanes = 2 };
	struct shr_agg_job_conf jc = { .job = 5, .world = 2, .dtype = SHR_DTYPE_INT32,
				       .window = 4, .chunk_elems = 64 };
	uint64_t addrs[2] = { 1, 2 };
	struct shr_agg *agg;

	(void)state;
	assert_null(shr_agg_create(&p));	/* a tree box runs one lane */
	assert_int_equal(errno, EINVAL);
	p.lanes = 1;
	p.up_rank = 2;
	assert_null(shr_agg_create(&p));	/* rank outside the upstream world */
	assert_int_equal(errno, EINVAL);
	p.up_rank = 1;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	jc.addrs = addrs;
	assert_int_equal(shr_agg_job_add(agg, &jc), -EINVAL);	/* fixed members */
	jc.addrs = NULL;
	jc.repro = 1;
	assert_int_equal(shr_agg_job_add(agg, &jc), -EINVAL);	/* reproducible */
	jc.repro = 0;
	assert_int_equal(shr_agg_job_add(agg, &jc), 0);
	shr_agg_free(agg);
}
/*
 * A member's LEAVE with aux ECONNABORTED (a tree box whose own job was aborted) aborts the job
 * at once, naming it, at every member; a plain LEAVE does not.
 */
static void
test_leave_aborts(void **state)
{
	uint8_t b[SHR_PROTO_HDR_LEN], buf[T_MSG_MAX];
	struct shr_agg_tx tx = { .buf = buf, .cap = sizeof(buf) };
	struct shr_agg_stats st;
	struct shr_proto_msg m, r;
	struct shr_agg *agg;
	uint64_t token = 0, a[3];
	uint16_t k;

	(void)state;
	for (k = 0; k < 3; k++)
		a[k] = SHR_AGG_ADDR(0xc6130001u + k, 40000);
	memset(&st, 0, sizeof(st));
	agg = shr_agg_create(NULL);
	assert_non_null(agg);
	for (k = 0; k < 3; k++) {
		memset(&m, 0, sizeof(m));
		m.type = SHR_MSG_JOIN;
		m.dtype = SHR_DTYPE_INT32;
		m.job = 9;
		m.rank = k;
		m.world = 3;
		m.count = 64;
		m.token = 100 + k;
		shr_proto_build(b, &m, NULL, 0);
		assert_int_equal(shr_agg_input(agg, a[k], b, sizeof(b), 1, &tx, &st), 0);
	}
	assert_int_equal(shr_proto_validate(buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN_ACK);
	token = r.token;
	/* rank 2 leaves plainly: the job goes on */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 9;
	m.rank = 2;
	m.world = 3;
	m.token = token;
	shr_proto_build(b, &m, NULL, 0);
	assert_int_equal(shr_agg_input(agg, a[2], b, sizeof(b), 2, &tx, &st), 0);
	assert_int_equal(shr_proto_validate(buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_LEAVE_ACK);
	assert_int_equal(st.aborts, 0);
	/* rank 1 leaves with ECONNABORTED: ABORT naming it to the members still bound */
	m.rank = 1;
	m.aux = ECONNABORTED;
	shr_proto_build(b, &m, NULL, 0);
	assert_int_equal(shr_agg_input(agg, a[1], b, sizeof(b), 3, &tx, &st), 0);
	assert_int_equal(shr_proto_validate(buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_ABORT);
	assert_int_equal(r.aux, ECONNABORTED);
	assert_int_equal(r.rank, 1);
	assert_int_equal(r.feedback, 0xc6130002u);	/* its address */
	assert_int_equal(tx.ndst, 2);
	assert_int_equal(st.aborts, 1);
	assert_int_equal(shr_agg_slots_used(agg), 0);
	shr_agg_free(agg);
}

/* Build m (with a 4-element int32 payload if DATA) into b; returns its length. */
static size_t
t_msg(uint8_t *b, const struct shr_proto_msg *m)
{
	static const int32_t pay[4] = { 1, 2, 3, 4 };
	size_t pl = m->type == SHR_MSG_DATA ? sizeof(pay) : 0;

	memcpy(b + SHR_PROTO_HDR_LEN, pay, pl);
	shr_proto_build(b, m, b + SHR_PROTO_HDR_LEN, pl);
	return SHR_PROTO_HDR_LEN + pl;
}

/* One member (job, world 1) joins leaf box l, whose JOIN goes up to u: the member's token. */
static uint64_t
t_up_join(struct shr_agg *l, struct shr_agg *u, uint32_t job, uint64_t now, uint8_t *b,
	  struct shr_agg_tx *tx, struct shr_agg_tx *tu, struct shr_agg_stats *st)
{
	const uint64_t mem = SHR_AGG_ADDR(0xc6120010u, 40000);
	const uint64_t box = SHR_AGG_ADDR(0xc6120002u, 47000);
	const uint64_t up = SHR_AGG_ADDR(0xc6120001u, 47000);
	struct shr_proto_msg m, r;

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_JOIN;
	m.dtype = SHR_DTYPE_INT32;
	m.job = job;
	m.world = 1;
	m.slot = 4;
	m.count = 4;
	m.token = 0x1234 + job;
	assert_int_equal(shr_agg_input(l, mem, b, t_msg(b, &m), now, tx, st), 0);
	assert_true(tx->len > 0);	/* its JOIN up */
	assert_int_equal(shr_agg_input(u, box, tx->buf, tx->len, now, tu, st), 0);
	assert_int_equal(shr_agg_input(l, up, tu->buf, tu->len, now, tx, st), 0);
	/*
	 * The leaf's JOIN filled the upstream's job: the activation to every member carries a
	 * token this leaf was never told, so it JOINs again at once; that answer echoes its nonce.
	 */
	assert_int_equal(shr_proto_validate(tx->buf, tx->len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN);
	assert_int_equal(shr_agg_input(u, box, tx->buf, tx->len, now, tu, st), 0);
	assert_int_equal(shr_agg_input(l, up, tu->buf, tu->len, now, tx, st), 0);
	assert_int_equal(shr_proto_validate(tx->buf, tx->len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(r.aux, 0);
	assert_int_equal(tx->unproven, 0);	/* the upstream's own answer */
	/* a LEAVE_ACK "from the upstream" for a job this leaf does not run: dropped, unproven */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE_ACK;
	m.dtype = SHR_DTYPE_INT32;
	m.job = job + 1000;
	m.world = 1;
	m.count = 4;
	assert_int_equal(shr_agg_input(l, SHR_AGG_ADDR(0xc6120001u, 1), b, t_msg(b, &m), now, tx,
				       st), 0);
	assert_int_equal(tx->unproven, 1);
	return r.token;
}

/* Job job's entry at a into inf: 1, or 0 if a has none. */
static int
t_info(const struct shr_agg *a, uint32_t job, struct shr_agg_job_info *inf)
{
	uint32_t i;
	int rc;

	for (i = 0; (rc = shr_agg_job_info(a, i, inf)) != -ENOENT; i++)
		if (rc == 1 && inf->job == job)
			return 1;
	return 0;
}

/*
 * A reproducible job's JOIN at a box with an upstream is refused (EINVAL, no job made, no
 * JOIN sent up): the upstream would sum the leaves' partial sums in arrival order, so the
 * promised bit-identical result would change from run to run. Without the flag, it is taken.
 */
static void
test_tree_repro_join_refused(void **state)
{
	const uint64_t up = SHR_AGG_ADDR(0xc6120001u, 47000);
	const uint64_t mem = SHR_AGG_ADDR(0xc6120010u, 40000);
	struct shr_agg_params p = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.repro_slots = 8, .job_timeout_ns = 1000000000ull, .upstream = up, .up_world = 2,
	};
	static uint8_t b[512], out[512];
	struct shr_agg_tx tx = { .buf = out, .cap = sizeof(out) };
	struct shr_agg_stats st;
	struct shr_agg_job_info inf;
	struct shr_proto_msg m, r;
	struct shr_agg *l;

	(void)state;
	memset(&st, 0, sizeof(st));
	l = shr_agg_create(&p);
	assert_non_null(l);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_JOIN;
	m.dtype = SHR_DTYPE_FLOAT32;
	m.flags = SHR_FLAG_REPRO;
	m.job = 12;
	m.world = 1;
	m.slot = 4;
	m.count = 4;
	m.token = 0x4321;
	assert_int_equal(shr_agg_input(l, mem, b, t_msg(b, &m), 1000, &tx, &st),
			 SHR_PROTO_JOB_DTYPE);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(r.aux, EINVAL);
	assert_true(tx.ndst == 1 && tx.dst[0] == mem);
	assert_int_equal(t_info(l, 12, &inf), 0);
	/* the same job, not reproducible: joins upstream */
	m.flags = 0;
	assert_int_equal(shr_agg_input(l, mem, b, t_msg(b, &m), 1000, &tx, &st), SHR_PROTO_OK);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN);
	assert_true(tx.ndst == 1 && tx.dst[0] == up);
	assert_int_equal(t_info(l, 12, &inf), 1);
	shr_agg_free(l);
}

/*
 * The upstream's activation (JOIN_ACK to every member: rank RANK_ALL, offset 0) is taken only
 * with the token the upstream told this leaf while its job filled. One forged from the
 * upstream's address (any port) neither activates the leaf's job under its made-up token (its
 * rounds would be refused upstream until the leaf gave up, blaming the upstream) nor aborts
 * it (a chunk other than the members'); nor would an earlier incarnation's, delayed.
 */
static void
test_up_join_ack_checked(void **state)
{
	const uint64_t up = SHR_AGG_ADDR(0xc6120001u, 47000);
	const uint64_t box = SHR_AGG_ADDR(0xc6120002u, 47000);
	const uint64_t box2 = SHR_AGG_ADDR(0xc6120003u, 47000);
	const uint64_t mem = SHR_AGG_ADDR(0xc6120010u, 40000);
	const uint64_t forger = SHR_AGG_ADDR(0xc6120001u, 9999);
	struct shr_agg_params pu = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.job_timeout_ns = 1000000000ull,
	};
	struct shr_agg_params pl = pu;
	static uint8_t b[512], out[512], uout[512];
	struct shr_agg_tx tx = { .buf = out, .cap = sizeof(out) };
	struct shr_agg_tx tu = { .buf = uout, .cap = sizeof(uout) };
	struct shr_agg_stats st;
	struct shr_agg_job_info inf;
	struct shr_proto_msg m, r, fake;
	struct shr_agg *u, *l;
	uint64_t now = 1000;
	unsigned int k;

	(void)state;
	memset(&st, 0, sizeof(st));
	pl.upstream = up;
	pl.up_world = 2;
	u = shr_agg_create(&pu);
	l = shr_agg_create(&pl);
	assert_non_null(u);
	assert_non_null(l);
	/* the leaf's only member joins: the leaf JOINs upstream (lost) */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_JOIN;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 9;
	m.world = 1;
	m.slot = 4;
	m.count = 4;
	m.token = 0x77;
	assert_int_equal(shr_agg_input(l, mem, b, t_msg(b, &m), now, &tx, &st), 0);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN);

	/* forged activations before any token was told: the members' chunk, then another */
	memset(&fake, 0, sizeof(fake));
	fake.type = SHR_MSG_JOIN_ACK;
	fake.dtype = SHR_DTYPE_INT32;
	fake.job = 9;
	fake.rank = SHR_PROTO_RANK_ALL;
	fake.world = 2;
	fake.slot = 4;
	fake.token = 0xbad;
	for (k = 0; k < 2; k++) {
		fake.count = k == 0 ? 4 : 8;
		(void)shr_agg_input(l, forger, b, t_msg(b, &fake), ++now, &tx, &st);
		if (tx.len != 0) {
			/* at most the leaf's JOIN again, to the upstream */
			assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
			assert_int_equal(r.type, SHR_MSG_JOIN);
			assert_true(tx.ndst == 1 && tx.dst[0] == up);
		}
		assert_int_equal(t_info(l, 9, &inf), 1);
		assert_int_equal(inf.active, 0);
		assert_int_equal(inf.up_state, 1);	/* still joining upstream */
	}
	assert_int_equal(st.aborts, 0);

	/* the leaf's JOIN reaches the upstream, whose job fills: EINPROGRESS with its token */
	now += 100000000ull;
	(void)shr_agg_tick(l, now, &tx, &st);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN);
	assert_int_equal(shr_agg_input(u, box, tx.buf, tx.len, now, &tu, &st), 0);
	assert_int_equal(shr_agg_input(l, up, tu.buf, tu.len, now, &tx, &st), 0);
	/* a forged activation with another token: refused */
	fake.count = 4;
	assert_int_equal(shr_agg_input(l, forger, b, t_msg(b, &fake), ++now, &tx, &st),
			 SHR_PROTO_BAD_TOKEN);
	assert_int_equal(t_info(l, 9, &inf), 1);
	assert_int_equal(inf.active, 0);

	/* the other box joins upstream: the real activation (the told token) is taken */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_JOIN;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 9;
	m.rank = 1;
	m.world = 2;
	m.slot = 4;
	m.count = 4;
	m.root = 1;
	m.tensor = 1;
	m.token = 0x88;
	assert_int_equal(shr_agg_input(u, box2, b, t_msg(b, &m), ++now, &tu, &st), 0);
	assert_int_equal(shr_agg_input(l, up, tu.buf, tu.len, now, &tx, &st), 0);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN_ACK);	/* to the leaf's member */
	assert_int_equal(r.aux, 0);
	assert_true(tx.ndst == 1 && tx.dst[0] == mem);
	assert_int_equal(t_info(l, 9, &inf), 1);
	assert_int_equal(inf.active, 1);
	assert_int_equal(inf.up_state, 2);
	shr_agg_free(l);
	shr_agg_free(u);
}

/*
 * A leaf's job aborted while a round waited for the upstream's result (its DATA up lost, the
 * upstream silent for 1.6 job timeouts) gives its slots back clean: the next job on them has
 * nothing pending upstream and is not aborted for the old round's silence (the record
 * outlived its job: every later job on those slots died at its first tick).
 */
static void
test_up_state_released(void **state)
{
	struct shr_agg_params pu = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.job_timeout_ns = 1000000000ull,
	};
	struct shr_agg_params pl = pu;
	static uint8_t b[512], out[512], uout[512];
	struct shr_agg_tx tx = { .buf = out, .cap = sizeof(out) };
	struct shr_agg_tx tu = { .buf = uout, .cap = sizeof(uout) };
	struct shr_agg_stats st;
	struct shr_agg_job_info inf;
	struct shr_proto_msg m, r;
	struct shr_agg *u, *l;
	uint64_t now = 1000, aborts;
	uint32_t i;
	int rc;

	(void)state;
	memset(&st, 0, sizeof(st));
	pl.upstream = SHR_AGG_ADDR(0xc6120001u, 47000);
	pl.up_world = 1;
	u = shr_agg_create(&pu);
	l = shr_agg_create(&pl);
	assert_non_null(u);
	assert_non_null(l);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 5;
	m.world = 1;
	m.slot = 2;
	m.count = 4;
	m.offset = 8;
	m.token = t_up_join(l, u, 5, now, b, &tx, &tu, &st);
	assert_int_equal(shr_agg_input(l, SHR_AGG_ADDR(0xc6120010u, 40000), b, t_msg(b, &m), now,
				       &tx, &st), 0);
	assert_true(tx.len > 0);	/* the round's DATA up: lost */
	now += 1600000000ull;
	assert_true(shr_agg_tick(l, now, &tx, &st) > 0);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_ABORT);
	while (shr_agg_tick(l, now, &tx, &st) > 0 || tx.len > 0)
		;
	aborts = st.aborts;

	now += 1000;
	(void)t_up_join(l, u, 6, now, b, &tx, &tu, &st);
	for (i = 0, rc = 0; rc != 1 && (rc = shr_agg_job_info(l, i, &inf)) != -ENOENT; i++)
		rc = rc == 1 && inf.job == 6;
	assert_int_equal(rc, 1);	/* job 6 found */
	assert_int_equal(inf.active, 1);
	assert_int_equal(inf.up_pending, 0);
	now += 1000;
	assert_int_equal(shr_agg_tick(l, now, &tx, &st), 0);
	assert_int_equal(st.aborts, aborts);
	shr_agg_free(l);
	shr_agg_free(u);
}

/*
 * A leaf whose JOIN the upstream admits (aux 0) with a chunk other than its members were
 * promised aborts its job and LEAVEs the upstream with ECONNABORTED and the granted token,
 * so that the upstream ends the job at every box at once (it sent no LEAVE: the upstream's
 * job waited for its own timeout). Then the same for a static job whose window the upstream
 * does not grant whole (it sent a plain LEAVE).
 */
static void
test_up_refusal_leaves_aborted(void **state)
{
	const uint64_t up = SHR_AGG_ADDR(0xc6120001u, 47000);
	const uint64_t mem = SHR_AGG_ADDR(0xc6120010u, 40000);
	struct shr_agg_params pl = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.job_timeout_ns = 1000000000ull, .upstream = up, .up_world = 1,
	};
	struct shr_agg_job_conf jc = {
		.job = 8, .world = 1, .dtype = SHR_DTYPE_INT32, .window = 8, .chunk_elems = 4,
	};
	static uint8_t b[512], out[512];
	struct shr_agg_tx tx = { .buf = out, .cap = sizeof(out) };
	struct shr_agg_stats st;
	struct shr_proto_msg m, r, ack;
	struct shr_agg *l;
	unsigned int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		uint32_t job = k == 0 ? 7 : 8;

		memset(&st, 0, sizeof(st));
		l = shr_agg_create(&pl);
		assert_non_null(l);
		if (k == 1)
			assert_int_equal(shr_agg_job_add(l, &jc), 0);
		memset(&m, 0, sizeof(m));
		m.type = SHR_MSG_JOIN;
		m.dtype = SHR_DTYPE_INT32;
		m.job = job;
		m.world = 1;
		m.slot = k == 0 ? 4 : 0;
		m.count = 4;
		m.token = 0x4321;
		assert_int_equal(shr_agg_input(l, mem, b, t_msg(b, &m), 1000, &tx, &st), 0);
		assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
		assert_int_equal(r.type, SHR_MSG_JOIN);	/* up */
		/* the upstream's answer: admitted, chunk 8 (k 0) or window 4 of 8 (k 1) */
		memset(&ack, 0, sizeof(ack));
		ack.type = SHR_MSG_JOIN_ACK;
		ack.dtype = SHR_DTYPE_INT32;
		ack.job = job;
		ack.rank = r.rank;
		ack.world = 1;
		ack.offset = r.token;	/* echoes this box's JOIN nonce */
		ack.token = 0x9999;
		ack.slot = 4;
		ack.count = k == 0 ? 8 : 4;
		assert_int_equal(shr_agg_input(l, up, b, t_msg(b, &ack), 2000, &tx, &st), 0);
		assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
		assert_int_equal(r.type, SHR_MSG_ABORT);
		assert_int_equal(r.aux, k == 0 ? EMSGSIZE : ENOSPC);
		/* at the next tick, the LEAVE up */
		(void)shr_agg_tick(l, 3000, &tx, &st);
		assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
		assert_int_equal(r.type, SHR_MSG_LEAVE);
		assert_int_equal(r.job, job);
		assert_true(r.token == 0x9999);
		assert_int_equal(r.aux, ECONNABORTED);
		assert_int_equal(tx.ndst, 1);
		assert_true(tx.dst[0] == up);
		shr_agg_free(l);
	}
}

/*
 * An ABORT from the upstream's address ends a leaf's job only with the token the upstream told
 * it, or as the answer to its JOIN (its nonce): while the leaf JOINs and has been told no token
 * yet (the upstream slow or not yet up), one forged with token 0 must not end the job, with
 * whatever blame it names.
 */
static void
test_up_abort_needs_token(void **state)
{
	const uint64_t up = SHR_AGG_ADDR(0xc6120001u, 47000);
	const uint64_t mem = SHR_AGG_ADDR(0xc6120010u, 40000);
	struct shr_agg_params pl = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.job_timeout_ns = 1000000000ull, .upstream = up, .up_world = 2,
	};
	static uint8_t b[512], out[512];
	struct shr_agg_tx tx = { .buf = out, .cap = sizeof(out) };
	struct shr_agg_stats st;
	struct shr_proto_msg m, r;
	struct shr_agg *l;
	uint64_t nonce;

	(void)state;
	memset(&st, 0, sizeof(st));
	l = shr_agg_create(&pl);
	assert_non_null(l);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_JOIN;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 11;
	m.world = 1;
	m.slot = 4;
	m.count = 4;
	m.token = 0x55;
	assert_int_equal(shr_agg_input(l, mem, b, t_msg(b, &m), 1000, &tx, &st), 0);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN);	/* up: unanswered */
	nonce = r.token;
	/* forged: token 0, no nonce, a made-up culprit */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_ABORT;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 11;
	m.world = 2;
	m.aux = ECONNRESET;
	m.flags = SHR_FLAG_UPSTREAM;
	m.offset = SHR_AGG_ADDR(0x0a000001u, 1);
	assert_int_equal(shr_agg_input(l, up, b, t_msg(b, &m), 2000, &tx, &st),
			 SHR_PROTO_BAD_TOKEN);
	assert_int_equal(st.aborts, 0);
	/* the upstream's real refusal of the JOIN (its nonce) still ends it */
	m.flags = 0;
	m.offset = nonce;
	m.token = 0x1234;
	assert_int_equal(shr_agg_input(l, up, b, t_msg(b, &m), 3000, &tx, &st), 0);
	assert_int_equal(st.aborts, 1);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_ABORT);
	assert_true(tx.ndst == 1 && tx.dst[0] == mem);
	shr_agg_free(l);
}

/*
 * A round that went upstream and was lost there is sent again by the leaf's own timer, once
 * its RTO has passed, with no member resending (the members back off on their own timers):
 * not before, and the upstream's RESULT of the resent round reaches the member, exact.
 */
static void
test_up_timer_resends(void **state)
{
	const uint64_t box = SHR_AGG_ADDR(0xc6120002u, 47000);
	const uint64_t up = SHR_AGG_ADDR(0xc6120001u, 47000);
	const uint64_t mem = SHR_AGG_ADDR(0xc6120010u, 40000);
	const int32_t want[4] = { 1, 2, 3, 4 };	/* t_msg()'s payload: world 1 at each box */
	struct shr_agg_params pu = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.job_timeout_ns = 1000000000ull,
	};
	struct shr_agg_params pl = pu;
	static uint8_t b[512], out[512], uout[512];
	struct shr_agg_tx tx = { .buf = out, .cap = sizeof(out) };
	struct shr_agg_tx tu = { .buf = uout, .cap = sizeof(uout) };
	struct shr_agg_stats st;
	struct shr_proto_msg m, r;
	struct shr_agg *u, *l;
	uint64_t now = 1000, sent;

	(void)state;
	memset(&st, 0, sizeof(st));
	pl.upstream = up;
	pl.up_world = 1;
	u = shr_agg_create(&pu);
	l = shr_agg_create(&pl);
	assert_non_null(u);
	assert_non_null(l);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 7;
	m.world = 1;
	m.slot = 2;
	m.count = 4;
	m.offset = 8;
	m.token = t_up_join(l, u, 7, now, b, &tx, &tu, &st);
	assert_int_equal(shr_agg_input(l, mem, b, t_msg(b, &m), now, &tx, &st), 0);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_DATA);	/* the round up: lost */
	assert_true(tx.ndst == 1 && tx.dst[0] == up);
	sent = st.up_resent;

	/* within the RTO (1 ms before a round trip was measured): nothing goes up again */
	now += 500000ull;
	tx.len = 0;
	assert_int_equal(shr_agg_tick(l, now, &tx, &st), 0);
	assert_int_equal(tx.len, 0);
	assert_int_equal(st.up_resent, sent);

	/* past it: the leaf's timer resends the round, no member having sent anything */
	now += 2000000ull;
	assert_true(shr_agg_tick(l, now, &tx, &st) > 0);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_DATA);
	assert_true(r.flags & SHR_FLAG_RETX);
	assert_int_equal(r.offset, 8);
	assert_true(tx.ndst == 1 && tx.dst[0] == up);
	assert_int_equal(st.up_resent, sent + 1);

	/* the upstream sums it and answers; the leaf hands the result down to its member */
	assert_int_equal(shr_agg_input(u, box, tx.buf, tx.len, now, &tu, &st), 0);
	assert_int_equal(shr_proto_validate(tu.buf, tu.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_int_equal(shr_agg_input(l, up, tu.buf, tu.len, now, &tx, &st), 0);
	assert_int_equal(shr_proto_validate(tx.buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_int_equal(r.offset, 8);
	assert_int_equal(r.count, 4);
	assert_true(tx.ndst == 1 && tx.dst[0] == mem);
	assert_memory_equal((const uint8_t *)tx.buf + SHR_PROTO_HDR_LEN, want, sizeof(want));
	assert_int_equal(st.aborts, 0);
	shr_agg_free(l);
	shr_agg_free(u);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_params),
		cmocka_unit_test(test_tree_repro_join_refused),
		cmocka_unit_test(test_leave_aborts),
		cmocka_unit_test(test_up_state_released),
		cmocka_unit_test(test_up_refusal_leaves_aborted),
		cmocka_unit_test(test_up_join_ack_checked),
		cmocka_unit_test(test_up_abort_needs_token),
		cmocka_unit_test(test_up_timer_resends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
