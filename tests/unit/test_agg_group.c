/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The result group (shr_agg_params::group_ip, SHR_FLAG_GROUP): which jobs get one, what
 * their JOIN_ACK says, which RESULTs may go there once (shr_agg_tx::group), and which still
 * go to each member.
 */

#include "agg_test.h"

#define G_IP 0xc61200ffu	/* 198.18.0.255 */
#define G_PORT 48000u

static struct shr_agg *
mk_group_agg(uint32_t group_ip, uint16_t group_port)
{
	struct shr_agg_params p = t_params(T_TIMEOUT);

	p.group_ip = group_ip;
	p.group_port = group_port;
	return shr_agg_create(&p);
}

static int
setup_group(void **state)
{
	int rc = setup(state);
	struct ctx *c = *state;

	if (rc != 0)
		return rc;
	shr_agg_free(c->agg);
	c->agg = mk_group_agg(G_IP, 0);
	return c->agg == NULL ? -1 : 0;
}

/* Rank r of job joins, offering the group if offer; the answer's message. */
static struct shr_proto_msg
join_offer(struct ctx *c, uint32_t job, uint16_t r, uint16_t world, int offer)
{
	struct shr_proto_msg m = join_msg(job, r, world, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK);

	m.flags = offer ? SHR_FLAG_GROUP : 0;
	assert_int_equal(feed(c, ADDR(r), &m, NULL, 0), SHR_PROTO_OK);
	return tx_msg(c);
}

/* One allreduce round of job on slot 0 (ranks in order); returns the last input's tx. */
static void
round_all(struct ctx *c, uint32_t job, uint16_t world, uint64_t offset)
{
	uint16_t r;

	for (r = 0; r < world; r++) {
		struct shr_proto_msg d = data_msg(job, r, world, 0, 0, 1, offset, T_CHUNK);

		assert_int_equal(data(c, ADDR(r), &d, 10), SHR_PROTO_OK);
		if (r + 1 < world)
			assert_int_equal(c->tx.len, 0);
	}
}

/* Every member offers: the activation, a repeated JOIN and full fan-outs name the group. */
static void
test_group_granted(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a, d;
	uint8_t want[T_MAXBUF];
	size_t n;
	uint16_t r;

	for (r = 0; r < T_WORLD; r++)
		a = join_offer(c, T_JOB, r, T_WORLD, 1);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, 0);
	assert_true(a.flags & SHR_FLAG_GROUP);
	assert_int_equal(a.feedback, G_IP);
	assert_int_equal(a.root, G_PORT);	/* entry 0 of the job table */
	assert_int_equal(c->tx.ndst, T_WORLD);
	assert_true(c->tx.group == 0);		/* the JOIN_ACK goes to each member */

	/* a member's repeated JOIN: its answer says the same */
	a = join_offer(c, T_JOB, 1, T_WORLD, 1);
	assert_int_equal(a.aux, 0);
	assert_true(a.flags & SHR_FLAG_GROUP);
	assert_int_equal(a.feedback, G_IP);
	assert_int_equal(a.root, G_PORT);
	assert_int_equal(c->tx.ndst, 1);

	/* the RESULT: every member's, so it may go once to the group; the same bytes */
	round_all(c, T_JOB, T_WORLD, 0);
	assert_true(c->tx.group == SHR_AGG_ADDR(G_IP, G_PORT));
	assert_int_equal(c->tx.ndst, T_WORLD);
	assert_int_equal(c->tx.skip, SHR_AGG_NO_SKIP);
	n = expected_result(c, want, T_JOB, T_WORLD, 0, 0, 1, 5, 0, T_CHUNK, 0, 10);
	assert_int_equal(c->tx.len, n);
	assert_memory_equal(c->tx.buf, want, n);

	/* a member's copy again: the result again to that member alone, not the group */
	d = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, T_CHUNK);
	(void)data(c, ADDR(1), &d, 10);
	assert_true(c->tx.len > 0);
	assert_true(c->tx.group == 0);
	assert_int_equal(c->tx.ndst, 1);
	assert_true(c->tx.dst[0] == ADDR(1));
}

/*
 * A relay round (broadcast from rank 2): its payload is for every rank but the source, so it
 * goes to each of them, not to the group (the source would get its own payload back); then
 * an allreduce round of the same job goes to the group.
 */
static void
test_group_not_relays(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a, d;
	uint8_t pl[T_CHUNK * 4];
	uint16_t r;

	for (r = 0; r < T_WORLD; r++)
		a = join_offer(c, T_JOB, r, T_WORLD, 1);
	assert_true(a.flags & SHR_FLAG_GROUP);
	memset(pl, 7, sizeof(pl));
	for (r = 0; r < T_WORLD; r++) {
		d = data_msg(T_JOB, r, T_WORLD, 0, 0, 1, 0, T_CHUNK);
		d.kind = SHR_KIND_BROADCAST;
		d.root = 2;
		d.aux = SHR_PROTO_RANK_ALL;
		d.flags = r == 2 ? 0 : SHR_FLAG_NOPAYLOAD;
		assert_int_equal(feed(c, ADDR(r), &d, r == 2 ? pl : NULL, r == 2 ? sizeof(pl) : 0),
				 SHR_PROTO_OK);
	}
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_RESULT);
	assert_int_equal(a.kind, SHR_KIND_BROADCAST);
	assert_true(c->tx.group == 0);
	assert_int_equal(c->tx.skip, 2);	/* the payload to all but the source */
	assert_int_equal(c->tx.ack_len, SHR_PROTO_HDR_LEN);
	/* the next round of the slot, an allreduce: to the group */
	for (r = 0; r < T_WORLD; r++) {
		d = data_msg(T_JOB, r, T_WORLD, 0, 1, 1, T_WINDOW * T_CHUNK, T_CHUNK);
		assert_int_equal(data(c, ADDR(r), &d, 3), SHR_PROTO_OK);
	}
	assert_true(c->tx.group == SHR_AGG_ADDR(G_IP, G_PORT));
}

/* One member does not offer: no group, and every result goes to each member. */
static void
test_group_not_all(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;
	uint16_t r;

	for (r = 0; r < T_WORLD; r++)
		a = join_offer(c, T_JOB, r, T_WORLD, r != 1);
	assert_int_equal(a.aux, 0);
	assert_false(a.flags & SHR_FLAG_GROUP);
	assert_int_equal(a.feedback, 0);
	assert_int_equal(a.root, 0);
	round_all(c, T_JOB, T_WORLD, 0);
	assert_true(c->tx.len > 0);
	assert_true(c->tx.group == 0);
	assert_int_equal(c->tx.ndst, T_WORLD);
}

/* A member that restarts without the offer while the job fills takes the group away. */
static void
test_group_rebound(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a, m;

	(void)join_offer(c, T_JOB, 0, T_WORLD, 1);
	(void)join_offer(c, T_JOB, 1, T_WORLD, 1);
	/* rank 1 again, a new process (new nonce) from the same host, without the flag */
	m = join_msg(T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK);
	m.token = 0x1234567;
	assert_int_equal(feed(c, ADDR(1), &m, NULL, 0), SHR_PROTO_OK);
	a = join_offer(c, T_JOB, 2, T_WORLD, 1);
	assert_int_equal(a.aux, 0);
	assert_false(a.flags & SHR_FLAG_GROUP);
}

/* A box without a group grants none, offers or not. */
static void
test_group_box_has_none(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;
	uint16_t r;

	shr_agg_free(c->agg);
	c->agg = mk_group_agg(0, 0);
	assert_non_null(c->agg);
	for (r = 0; r < T_WORLD; r++)
		a = join_offer(c, T_JOB, r, T_WORLD, 1);
	assert_int_equal(a.aux, 0);
	assert_false(a.flags & SHR_FLAG_GROUP);
	round_all(c, T_JOB, T_WORLD, 0);
	assert_true(c->tx.group == 0);
}

/* Two live jobs: one port each (their entries'); a configured first port. */
static void
test_group_ports(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;
	uint16_t r;

	shr_agg_free(c->agg);
	c->agg = mk_group_agg(0xef010203u, 50000);	/* 239.1.2.3 */
	assert_non_null(c->agg);
	for (r = 0; r < 2; r++)
		a = join_offer(c, 21, r, 2, 1);
	assert_int_equal(a.root, 50000);
	assert_int_equal(a.feedback, 0xef010203u);
	for (r = 0; r < 2; r++)
		a = join_offer(c, 22, r, 2, 1);
	assert_int_equal(a.root, 50001);
	round_all(c, 22, 2, 0);
	assert_true(c->tx.group == SHR_AGG_ADDR(0xef010203u, 50001));
	round_all(c, 21, 2, 0);
	assert_true(c->tx.group == SHR_AGG_ADDR(0xef010203u, 50000));
}

/* Ports past 65535 for the job table: refused at creation. */
static void
test_group_params(void **state)
{
	(void)state;
	/* 4 jobs from 65533: 65533..65536 */
	errno = 0;
	assert_null(mk_group_agg(G_IP, 65533));
	assert_int_equal(errno, EINVAL);
	{
		struct shr_agg *agg = mk_group_agg(G_IP, 65532);	/* 65532..65535 */

		assert_non_null(agg);
		shr_agg_free(agg);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_group_granted, setup_group, teardown),
		cmocka_unit_test_setup_teardown(test_group_not_relays, setup_group, teardown),
		cmocka_unit_test_setup_teardown(test_group_not_all, setup_group, teardown),
		cmocka_unit_test_setup_teardown(test_group_rebound, setup_group, teardown),
		cmocka_unit_test_setup_teardown(test_group_box_has_none, setup_group, teardown),
		cmocka_unit_test_setup_teardown(test_group_ports, setup_group, teardown),
		cmocka_unit_test(test_group_params),
	};

	return cmocka_run_group_tests_name("agg_group", tests, NULL, NULL);
}
