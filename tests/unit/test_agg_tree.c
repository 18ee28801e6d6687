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
 * error a user sees (the upstream's ABORT, or its own box silent) within a bound. (A box with
 * an upstream message by message, without the simulation: test_agg_tree_up.c.)
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
		cmocka_unit_test(test_tree_out_of_step),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
