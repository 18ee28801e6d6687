/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Trees of boxes (lib/agg, shr_agg_params::upstream), simulated: real aggregators (a root, and
 * mid-level and leaf boxes with an upstream) and real endpoints (lib/endpoint) as members,
 * wired by an in-memory network that drops, duplicates and reorders every message on every
 * link (members' and boxes') with a seeded PRNG, on a fake clock. Members JOIN their leaf in
 * band, run allreduces of several lengths (int32, then float32), then LEAVE. Checked: int32
 * exact at every rank, float32 bit-identical at every rank and exact for integer inputs,
 * every box's rounds, nothing refused but stale copies, every box's slots free at the end.
 * Failures: a leaf box that dies, a member that dies: every live member fails with the
 * error a user sees (the upstream's ABORT, or its own box silent) within a bound.
 */

#include "agg_tree_sim.h"

/* The whole tree's members (world members at each leaf, same world: one job per leaf). */
static void
t_tree_case(const int *parent, unsigned int nbox, unsigned int per_leaf, unsigned int loss,
	    unsigned int dup, uint64_t seed)
{
	static const uint64_t lens[] = { 1, 63, 64, 65, 1000, 3000 };
	struct t_net *n = calloc(1, sizeof(*n));
	unsigned int r, b;

	assert_non_null(n);
	t_build(n, parent, nbox, per_leaf, seed, loss, dup);
	t_join(n);
	for (r = 0; r < sizeof(lens) / sizeof(lens[0]); r++)
		t_allreduce_i32(n, r, lens[r]);
	assert_int_equal(n->rejects, 0);
	for (b = 0; b < nbox; b++) {
		/* every box completed each round once: 1 + 1 + 1 + 2 + 16 + 47 chunks */
		assert_int_equal(n->box[b].st.completed, 68);
		if (parent[b] >= 0) {
			assert_int_equal(n->box[b].st.up_data, n->box[b].st.completed);
			assert_int_equal(n->box[b].st.up_results, n->box[b].st.completed);
		}
	}
	/* everyone leaves; every box ends up with no slot held (LEAVEs lost: idle reclaim) */
	for (r = 0; r < n->nmem; r++) {
		shr_endpoint_free(n->mem[r].ep);
		n->mem[r].ep = NULL;
	}
	assert_int_equal(t_run_until(n, t_is_left, 40ull * T_TMO_NS), 0);
	for (r = 0; r < 10 * (T_TMO_NS / 10000); r++) {
		for (b = 0; b < nbox; b++)
			if (shr_agg_slots_used(n->box[b].agg) != 0)
				break;
		if (b == nbox)
			break;
		t_step(n);
	}
	for (b = 0; b < nbox; b++)
		assert_int_equal(shr_agg_slots_used(n->box[b].agg), 0);
	t_free(n);
	free(n);
}

/* Two leaves of 2 members under one root. */
static const int two_level[] = { -1, 0, 0 };
/* A root, two mid boxes, two leaves under each: 4 leaves of 2 members. */
static const int three_level[] = { -1, 0, 0, 1, 1, 2, 2 };

/*
 * Out of step across levels: the members of leaf 1 call an allreduce of another size than
 * those of leaf 2. Each leaf completes its own rounds; the root sees the two disagree and
 * aborts (EPROTO), and every member hears it through its leaf (flag SHR_FLAG_UPSTREAM).
 */
static void
test_tree_out_of_step(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	static int32_t buf[T_MEMS_MAX][300];
	unsigned int k;

	(void)state;
	assert_non_null(n);
	t_build(n, two_level, 3, 2, 41, 0, 0);
	t_join(n);
	for (k = 0; k < n->nmem; k++) {
		struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = buf[k], .out = buf[k],
					      .count = n->mem[k].box == 1 ? 100 : 300 };

		assert_true(shr_endpoint_submit(n->mem[k].ep, &op) >= 0);
	}
	assert_int_equal(t_run_until(n, t_is_failed, 2 * T_TMO_NS), 0);
	assert_int_equal(n->box[0].st.mismatches, 1);
	for (k = 0; k < n->nmem; k++) {
		assert_int_equal(n->mem[k].err, -ECONNABORTED);
		assert_int_equal(n->mem[k].abort.aux, EPROTO);
		assert_true(n->mem[k].abort.flags & SHR_FLAG_UPSTREAM);
		assert_int_equal(n->mem[k].abort.offset, n->box[0].addr);
	}
	t_free(n);
	free(n);
}


/*
 * A failure during an allreduce (the box or member dies once the op is under way): every
 * live member fails; returns the fake time it took the last one.
 */
static uint64_t
t_fail_case(struct t_net *n, int dead_box, int dead_mem)
{
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .count = 20000, .step = 9 };
	static int32_t in[T_MEMS_MAX][20000], out[T_MEMS_MAX][20000];
	uint64_t start;
	unsigned int k;

	t_join(n);
	t_allreduce_i32(n, 0, 100);
	for (k = 0; k < n->nmem; k++) {
		op.in = in[k];
		op.out = out[k];
		assert_true(shr_endpoint_submit(n->mem[k].ep, &op) >= 0);
	}
	for (k = 0; k < 50; k++)
		t_step(n);	/* under way (0.5 ms; it takes tens of ms) */
	for (k = 0; k < n->nmem; k++)
		assert_false(shr_endpoint_idle(n->mem[k].ep));
	start = n->now;
	if (dead_box >= 0) {
		n->box[dead_box].dead = 1;
		for (k = 0; k < n->nmem; k++)
			if (n->mem[k].box == dead_box)
				n->mem[k].dead = 0;	/* its members live on, unanswered */
	}
	if (dead_mem >= 0)
		n->mem[dead_mem].dead = 1;
	assert_int_equal(t_run_until(n, t_is_failed, 10ull * T_TMO_NS), 0);
	return n->now - start;
}

/*
 * Member m failed with the root's ABORT, passed down by its leaf, blaming leaf box b (rank
 * up_rank of the root's job): the upstream flag, the root's address, the blamed rank and box.
 */
static void
t_check_root_blames(const struct t_net *n, const struct t_mem *m, uint16_t up_rank,
		    unsigned int b)
{
	assert_true(m->abort.flags & SHR_FLAG_UPSTREAM);
	assert_int_equal(m->abort.offset, n->box[0].addr);
	assert_int_equal(m->abort.slot, up_rank);
	assert_int_equal(m->abort.feedback, SHR_AGG_ADDR_IP(n->box[b].addr));
}

/*
 * A leaf box dies: the other leaf's members get the root's ABORT naming that leaf; one of them
 * loses its copy, and the one its leaf sends again in answer to its next DATA names the same.
 */
static void
test_leaf_dies(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	uint64_t took;
	unsigned int k;

	(void)state;
	assert_non_null(n);
	t_build(n, (const int[]){ -1, 0, 0 }, 3, 2, 21, 5, 5);
	n->drop_to = n->mem[2].addr;	/* rank 0 of leaf 2 */
	n->drop_type = SHR_MSG_ABORT;
	took = t_fail_case(n, 1, -1);
	assert_int_equal(n->drop_type, 0);	/* it did lose one */
	for (k = 0; k < n->nmem; k++) {
		const struct t_mem *m = &n->mem[k];

		if (m->box == 1) {
			/* its own box is silent: the endpoint's own timeout */
			assert_int_equal(m->err, -ETIMEDOUT);
			continue;
		}
		assert_int_equal(m->err, -ECONNABORTED);
		assert_int_equal(m->abort.aux, ETIMEDOUT);
		t_check_root_blames(n, m, 0, 1);	/* leaf 1 is rank 0 upstream */
		/* within the root's job timeout and a few round trips */
		assert_true(m->fail_at - (n->now - took) < T_TMO_NS + T_TMO_NS / 4);
	}
	/* the bound of the members of the dead box: their own fail_ns */
	assert_true(took <= 3 * T_TMO_NS + T_TMO_NS / 4);
	t_free(n);
	free(n);
}

/* Member k's DATA for its job's chunk idx in slot (version 0), zeros, sent by hand. */
static void
t_data(struct t_net *n, unsigned int k, uint32_t slot, uint64_t idx)
{
	const struct t_mem *m = &n->mem[k];
	uint8_t hdr[SHR_PROTO_HDR_LEN], pl[4 * 256] = { 0 };
	struct shr_proto_msg d;

	memset(&d, 0, sizeof(d));
	d.type = SHR_MSG_DATA;
	d.job = T_JOB;
	d.rank = m->rank;
	d.world = n->world;
	d.token = m->token;
	d.dtype = SHR_DTYPE_INT32;
	d.op = SHR_OP_SUM;
	d.slot = slot;
	d.offset = idx * m->chunk;
	d.count = m->chunk;
	shr_proto_build(hdr, &d, pl, 4 * (size_t)m->chunk);
	t_put(n, m->addr, n->box[m->box].addr, hdr, pl, 4 * (size_t)m->chunk);
}

/*
 * A member held back by the upstream: leaf 2 (and its members) die. At leaf 1, rank 1 sends
 * chunk 1 (slot 1) and rank 0 does not (its window is full of rounds the root holds), then
 * both send chunk 0, which completes at leaf 1 and goes up, where the root waits for leaf 2.
 * Leaf 1's round of slot 1 opened first, so its job timeout comes first; but it does not
 * blame rank 0 while a round waits upstream: its members fail with the root's ABORT naming
 * leaf 2, not with one naming rank 0.
 */
static void
test_member_held_by_upstream(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	unsigned int k;

	(void)state;
	assert_non_null(n);
	t_build(n, (const int[]){ -1, 0, 0 }, 3, 2, 23, 0, 0);
	t_join(n);
	n->box[2].dead = 1;
	n->mem[2].dead = 1;
	n->mem[3].dead = 1;
	t_data(n, 1, 1, 1);
	for (k = 0; k < 100; k++)
		t_step(n);		/* 1 ms */
	t_data(n, 0, 0, 0);
	t_data(n, 1, 0, 0);
	assert_int_equal(t_run_until(n, t_is_failed, 2 * T_TMO_NS), 0);
	for (k = 0; k < 2; k++) {
		const struct t_mem *m = &n->mem[k];

		assert_int_equal(m->err, -ECONNABORTED);
		assert_int_equal(m->abort.aux, ETIMEDOUT);
		t_check_root_blames(n, m, 1, 2);	/* leaf 2 is rank 1 upstream */
	}
	assert_int_equal(n->box[1].st.nudges, 0);
	t_free(n);
	free(n);
}

/*
 * A member dies: its leaf aborts (naming it) and leaves upstream with ECONNABORTED, so the
 * root aborts at once and the other leaf's members are told, naming the leaf.
 */
static void
test_member_dies(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	uint64_t took;
	unsigned int k;

	(void)state;
	assert_non_null(n);
	t_build(n, (const int[]){ -1, 0, 0 }, 3, 2, 22, 5, 5);
	took = t_fail_case(n, -1, 0);	/* member 0: rank 0 of leaf 1 */
	for (k = 1; k < n->nmem; k++) {
		const struct t_mem *m = &n->mem[k];

		/*
		 * Leaf 1 times out its round (missing rank 0) and the root its own (missing
		 * leaf 1), each after a job timeout: either may come first, and both name the
		 * same culprit: rank 0 at leaf 1, or leaf 1 (rank 0 upstream) at the root.
		 */
		if (m->abort.flags & SHR_FLAG_UPSTREAM) {
			t_check_root_blames(n, m, 0, 1);
			assert_true(m->abort.aux == ECONNABORTED || m->abort.aux == ETIMEDOUT);
		} else {
			assert_int_equal(m->box, 1);
			assert_int_equal(m->abort.aux, ETIMEDOUT);
			assert_int_equal(m->abort.rank, 0);
			assert_int_equal(m->abort.feedback, SHR_AGG_ADDR_IP(n->mem[0].addr));
		}
	}
	/* a job timeout, then a few round trips */
	assert_true(took < T_TMO_NS + T_TMO_NS / 8);
	t_free(n);
	free(n);
}

/*
 * A leaf's LEAVE upstream is lost (the job ended at the leaf): the leaf sends it again until
 * the root answers, so the root frees the job at once, not after its idle time.
 */
static void
test_up_leave_lost(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	unsigned int k, b;

	(void)state;
	assert_non_null(n);
	t_build(n, (const int[]){ -1, 0, 0 }, 3, 2, 61, 0, 0);
	t_join(n);
	t_allreduce_i32(n, 0, 100);
	n->drop_to = n->box[0].addr;	/* the first LEAVE to the root */
	n->drop_type = SHR_MSG_LEAVE;
	for (k = 0; k < n->nmem; k++) {
		shr_endpoint_free(n->mem[k].ep);
		n->mem[k].ep = NULL;
	}
	assert_int_equal(t_run_until(n, t_is_left, T_TMO_NS), 0);
	assert_int_equal(n->drop_type, 0);	/* one was lost */
	/* a few LEAVE gaps (50 ms), far below the root's idle time (2 job timeouts) */
	for (k = 0; k < 50000 && shr_agg_slots_used(n->box[0].agg) != 0; k++)
		t_step(n);
	for (b = 0; b < n->nbox; b++)
		assert_int_equal(shr_agg_slots_used(n->box[b].agg), 0);
	assert_true(n->box[0].st.idle_reclaims == 0);
	t_free(n);
	free(n);
}

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

static void
test_two_level_clean(void **state)
{
	(void)state;
	t_tree_case(two_level, 3, 2, 0, 0, 1);
}

static void
test_two_level_loss(void **state)
{
	uint64_t seed;

	(void)state;
	for (seed = 1; seed <= 4; seed++) {
		t_tree_case(two_level, 3, 2, 10, 10, seed);
		t_tree_case(two_level, 3, 2, 30, 30, seed + 100);
	}
}

static void
test_three_level_loss(void **state)
{
	(void)state;
	t_tree_case(three_level, 7, 2, 0, 0, 7);
	t_tree_case(three_level, 7, 2, 20, 20, 8);
	t_tree_case(three_level, 7, 2, 30, 30, 9);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_level_clean),
		cmocka_unit_test(test_two_level_loss),
		cmocka_unit_test(test_three_level_loss),
		cmocka_unit_test(test_leaf_dies),
		cmocka_unit_test(test_member_dies),
		cmocka_unit_test(test_member_held_by_upstream),
		cmocka_unit_test(test_up_leave_lost),
		cmocka_unit_test(test_tree_params),
		cmocka_unit_test(test_tree_repro_join_refused),
		cmocka_unit_test(test_tree_out_of_step),
		cmocka_unit_test(test_leave_aborts),
		cmocka_unit_test(test_up_state_released),
		cmocka_unit_test(test_up_refusal_leaves_aborted),
		cmocka_unit_test(test_up_join_ack_checked),
		cmocka_unit_test(test_up_abort_needs_token),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
