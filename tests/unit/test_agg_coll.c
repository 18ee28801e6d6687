/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The aggregator's rounds of every collective kind (lib/proto/shr_proto.h, "Kinds"), driven
 * through shr_agg_input() with crafted DATA of a static job: who gets the payload and who
 * the header-only RESULT, relays that keep the source's bytes, resends per rank, the checks
 * of kind, root, destination and payload (reject bad_kind), and ranks that disagree on the
 * collective (out of step, never a result).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <shr_agg.h>
#include <shr_proto.h>

#define T_JOB 21
#define T_WORLD 4
#define T_WINDOW 4
#define T_CHUNK 16
#define T_TOKEN 0x70c0ffee70c0ffeeull
#define T_MAXBUF (SHR_PROTO_HDR_LEN + 64 * 4)
#define ADDR(r) SHR_AGG_ADDR(0xc6120001u + (r), 40000u)	/* 198.18.0.1 + r */
#define ALL SHR_PROTO_RANK_ALL

struct ctx {
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	uint8_t txbuf[T_MAXBUF];
	uint8_t msg[T_MAXBUF];
	uint64_t addrs[T_WORLD];
	uint8_t dtype;
	uint32_t step;		/* of the next round (one per round, increasing) */
};

static int
setup_dtype(void **state, uint8_t dtype)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct shr_agg_params p = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.lanes = 1, .job_timeout_ns = 1000000000ull,
	};
	struct shr_agg_job_conf jc = {
		.job = T_JOB, .world = T_WORLD, .dtype = dtype, .window = T_WINDOW,
		.chunk_elems = T_CHUNK, .ordered = 1, .token = T_TOKEN,
	};

	if (c == NULL)
		return -1;
	for (unsigned int r = 0; r < T_WORLD; r++)
		c->addrs[r] = ADDR(r);
	jc.addrs = c->addrs;
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	assert_int_equal(shr_agg_job_add(c->agg, &jc), 0);
	c->tx.buf = c->txbuf;
	c->tx.cap = sizeof(c->txbuf);
	c->dtype = dtype;
	c->step = 1;
	*state = c;
	return 0;
}

static int
setup(void **state)
{
	return setup_dtype(state, SHR_DTYPE_INT32);
}

static int
setup_f16(void **state)
{
	return setup_dtype(state, SHR_DTYPE_FLOAT16);
}

static int
teardown(void **state)
{
	struct ctx *c = *state;

	shr_agg_free(c->agg);
	free(c);
	return 0;
}

/* One DATA of a round (slot 0, version by step parity), header-only when payload is NULL. */
static enum shr_proto_reason
send(struct ctx *c, uint16_t rank, uint8_t kind, uint16_t root, uint32_t aux, uint32_t count,
     const void *payload)
{
	struct shr_proto_msg m;
	size_t plen = payload ? (size_t)count * shr_proto_dtype_size(c->dtype) : 0;

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = c->dtype;
	m.op = SHR_OP_SUM;
	m.rank = rank;
	m.world = T_WORLD;
	m.flags = payload ? 0 : SHR_FLAG_NOPAYLOAD;
	m.job = T_JOB;
	m.slot = 0;
	m.ver = c->step & 1;
	m.count = count;
	m.tensor = 5;
	m.step = c->step;
	m.offset = 100;
	m.aux = aux;
	m.kind = kind;
	m.root = root;
	m.token = T_TOKEN;
	shr_proto_build(c->msg, &m, payload, plen);
	if (plen)
		memcpy(c->msg + SHR_PROTO_HDR_LEN, payload, plen);
	return shr_agg_input(c->agg, ADDR(rank), c->msg, SHR_PROTO_HDR_LEN + plen, 1000,
			     &c->tx, &c->st);
}

static struct shr_proto_msg
decode(const void *buf, size_t len)
{
	struct shr_proto_msg m;

	assert_int_equal(shr_proto_validate(buf, len, &m), SHR_PROTO_OK);
	assert_int_equal(m.type, SHR_MSG_RESULT);
	return m;
}

/* Who gets what: bit r of pay (payload) or of ack (header-only RESULT), from c->tx. */
static void
expect_delivery(const struct ctx *c, unsigned int pay, unsigned int ack)
{
	unsigned int got_pay = 0, got_ack = 0;

	for (uint32_t i = 0; i < c->tx.ndst; i++) {
		if (i == c->tx.skip)
			continue;
		for (unsigned int r = 0; r < T_WORLD; r++)
			if (c->tx.dst[i] == ADDR(r))
				got_pay |= 1u << r;
	}
	for (uint32_t i = 0; c->tx.ack_len != 0 && i < c->tx.ack_ndst; i++) {
		if (i == c->tx.ack_skip)
			continue;
		for (unsigned int r = 0; r < T_WORLD; r++)
			if (c->tx.ack_dst[i] == ADDR(r))
				got_ack |= 1u << r;
	}
	assert_int_equal(got_pay, pay);
	assert_int_equal(got_ack, ack);
}

/* The completed round's RESULT (payload) and acknowledgement (header-only) are consistent. */
static void
expect_result(const struct ctx *c, uint8_t kind, uint16_t root, uint32_t aux, uint32_t count,
	      const void *want, int with_ack)
{
	struct shr_proto_msg r = decode(c->tx.buf, c->tx.len);
	size_t plen = (size_t)count * shr_proto_dtype_size(c->dtype);

	assert_int_equal(r.kind, kind);
	assert_int_equal(r.root, root);
	assert_int_equal(r.aux, aux);
	assert_int_equal(r.count, count);
	assert_int_equal(r.flags & SHR_FLAG_NOPAYLOAD, 0);
	assert_int_equal(c->tx.len, SHR_PROTO_HDR_LEN + plen);
	assert_memory_equal((const uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN, want, plen);
	if (!with_ack) {
		assert_int_equal(c->tx.ack_len, 0);
		return;
	}
	assert_int_equal(c->tx.ack_len, SHR_PROTO_HDR_LEN);
	r = decode(c->tx.ack, c->tx.ack_len);
	assert_int_equal(r.flags & SHR_FLAG_NOPAYLOAD, SHR_FLAG_NOPAYLOAD);
	assert_int_equal(r.kind, kind);
	assert_int_equal(r.root, root);
	assert_int_equal(r.aux, aux);
	assert_int_equal(r.count, count);
	assert_int_equal(r.step, c->step);
}

/* reduce(root 1) and reduce_scatter(owner 3): the sum to the root alone, the others acked. */
static void
test_reduce(void **state)
{
	struct ctx *c = *state;
	int32_t in[T_WORLD][3], sum[3] = { 0 };
	uint8_t kinds[2] = { SHR_KIND_REDUCE, SHR_KIND_REDUCE_SCATTER };
	uint16_t roots[2] = { 1, 3 };

	for (unsigned int r = 0; r < T_WORLD; r++)
		for (unsigned int i = 0; i < 3; i++) {
			in[r][i] = (int32_t)(1000 * r + 7 * i - 5);
			sum[i] += in[r][i];
		}
	for (unsigned int k = 0; k < 2; k++, c->step++) {
		for (uint16_t r = 0; r < T_WORLD; r++) {
			assert_int_equal(send(c, r, kinds[k], roots[k], 0, 3, in[r]),
					 SHR_PROTO_OK);
			if (r + 1 < T_WORLD)
				assert_int_equal(c->tx.len, 0);
		}
		expect_result(c, kinds[k], roots[k], 0, 3, sum, 1);
		expect_delivery(c, 1u << roots[k], 0xfu & ~(1u << roots[k]));
		/* A rank whose RESULT was lost asks again: the root gets the sum, another
		 * rank the header-only RESULT alone. */
		assert_int_equal(send(c, roots[k], kinds[k], roots[k], 0, 3, in[roots[k]]),
				 SHR_PROTO_OK);
		expect_result(c, kinds[k], roots[k], 0, 3, sum, 0);
		expect_delivery(c, 1u << roots[k], 0);
		assert_int_equal(send(c, 0, kinds[k], roots[k], 0, 3, in[0]), SHR_PROTO_OK);
		assert_int_equal(c->tx.len, SHR_PROTO_HDR_LEN);
		assert_int_equal(decode(c->tx.buf, c->tx.len).flags & SHR_FLAG_NOPAYLOAD,
				 SHR_FLAG_NOPAYLOAD);
		expect_delivery(c, 1u << 0, 0);
	}
	assert_int_equal(c->st.kind_rounds[SHR_KIND_REDUCE], 1);
	assert_int_equal(c->st.kind_rounds[SHR_KIND_REDUCE_SCATTER], 1);
	assert_int_equal(c->st.resent, 4);
}

/*
 * broadcast and allgather: the source's bytes, as they came, to every rank but the source,
 * which is acked; header-only DATA of the others only counts. float16 bit patterns (NaN with
 * a payload, -0, subnormal) must come back untouched: a relay converts nothing.
 */
static void
test_relay_all(void **state)
{
	struct ctx *c = *state;
	uint16_t src[5] = { 0x7e01, 0x8000, 0x0001, 0x3c00, 0xfc00 };
	uint8_t kinds[2] = { SHR_KIND_BROADCAST, SHR_KIND_ALLGATHER };

	for (unsigned int k = 0; k < 2; k++, c->step++) {
		uint16_t root = (uint16_t)(2 + k);	/* 2, then 3 */

		for (uint16_t r = 0; r < T_WORLD; r++) {
			assert_int_equal(send(c, r, kinds[k], root, ALL, 5,
					      r == root ? src : NULL),
					 SHR_PROTO_OK);
			/* The same header-only DATA again: a duplicate, nothing sent. */
			if (r == 0) {
				assert_int_equal(send(c, r, kinds[k], root, ALL, 5, NULL),
						 SHR_PROTO_OK);
				assert_int_equal(c->tx.len, 0);
			}
		}
		expect_result(c, kinds[k], root, ALL, 5, src, 1);
		expect_delivery(c, 0xfu & ~(1u << root), 1u << root);
		/* The source resends: acked only; another rank: the payload. */
		assert_int_equal(send(c, root, kinds[k], root, ALL, 5, src), SHR_PROTO_OK);
		assert_int_equal(c->tx.len, SHR_PROTO_HDR_LEN);
		expect_delivery(c, 1u << root, 0);
		assert_int_equal(send(c, 1, kinds[k], root, ALL, 5, NULL), SHR_PROTO_OK);
		expect_result(c, kinds[k], root, ALL, 5, src, 0);
		expect_delivery(c, 1u << 1, 0);
	}
	assert_int_equal(c->st.duplicates, 2);
	assert_int_equal(c->st.kind_rounds[SHR_KIND_BROADCAST], 1);
	assert_int_equal(c->st.kind_rounds[SHR_KIND_ALLGATHER], 1);
}

/* gather, scatter, alltoall: source root, destination aux: the payload to aux alone. */
static void
test_relay_one(void **state)
{
	struct ctx *c = *state;
	int32_t src[4] = { -1, 2147483647, (int32_t)0x80000000u, 42 };
	uint8_t kinds[3] = { SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL };
	uint16_t roots[3] = { 3, 0, 1 };
	uint32_t dsts[3] = { 0, 2, 3 };

	for (unsigned int k = 0; k < 3; k++, c->step++) {
		for (uint16_t r = 0; r < T_WORLD; r++)
			assert_int_equal(send(c, r, kinds[k], roots[k], dsts[k], 4,
					      r == roots[k] ? src : NULL),
					 SHR_PROTO_OK);
		expect_result(c, kinds[k], roots[k], dsts[k], 4, src, 1);
		expect_delivery(c, 1u << dsts[k], 0xfu & ~(1u << dsts[k]));
		assert_int_equal(c->st.kind_rounds[kinds[k]], 1);
	}
}

/* What does not fit together is refused as bad_kind, and changes nothing. */
static void
test_bad_kind(void **state)
{
	struct ctx *c = *state;
	int32_t x[2] = { 1, 2 };
	const struct {
		uint16_t rank;
		uint8_t kind;
		uint16_t root;
		uint32_t aux;
		int pay;
	} bad[] = {
		{ 0, SHR_KIND_ALLREDUCE, 1, 0, 1 },		/* allreduce with a root */
		{ 0, SHR_KIND_REDUCE, T_WORLD, 0, 1 },		/* root outside the job */
		{ 0, SHR_KIND_REDUCE, 1, 0, 0 },		/* header-only in a sum */
		{ 0, SHR_KIND_BROADCAST, 1, ALL, 1 },		/* payload, not the source */
		{ 1, SHR_KIND_BROADCAST, 1, ALL, 0 },		/* the source, header-only */
		{ 0, SHR_KIND_BROADCAST, 1, 2, 0 },		/* broadcast to one rank */
		{ 0, SHR_KIND_ALLGATHER, T_WORLD, ALL, 0 },	/* source outside */
		{ 0, SHR_KIND_ALLGATHER, 1, 2, 0 },		/* allgather to one rank */
		{ 0, SHR_KIND_GATHER, 1, ALL, 0 },		/* gather to every rank */
		{ 0, SHR_KIND_GATHER, 1, 1, 0 },		/* source = destination */
		{ 0, SHR_KIND_SCATTER, 1, T_WORLD, 0 },		/* destination outside */
		{ 2, SHR_KIND_ALLTOALL, 2, 0, 0 },		/* the source, header-only */
	};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(send(c, bad[i].rank, bad[i].kind, bad[i].root, bad[i].aux, 2,
				      bad[i].pay ? x : NULL),
				 SHR_PROTO_BAD_KIND);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_KIND], sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(c->st.data, 0);
	/* A header-only allreduce is not even a valid message. */
	assert_int_equal(send(c, 0, SHR_KIND_ALLREDUCE, 0, 0, 2, NULL), SHR_PROTO_BAD_LEN);
	/* The round still works afterwards. */
	for (uint16_t r = 0; r < T_WORLD; r++)
		assert_int_equal(send(c, r, SHR_KIND_ALLREDUCE, 0, 0, 2, x), SHR_PROTO_OK);
	assert_int_equal(c->st.completed, 1);
}

/*
 * Ranks that disagree on the collective, its root or its destination are out of step: the
 * round opened by the first never completes with the others' contributions.
 */
static void
test_disagree(void **state)
{
	struct ctx *c = *state;
	int32_t x[2] = { 3, 4 };

	/* rank 1 opens broadcast(root 1); the others call allgather of block 1, broadcast
	 * from root 2 (rank 2 sends the payload), and gather of block 1 to rank 0. */
	assert_int_equal(send(c, 1, SHR_KIND_BROADCAST, 1, ALL, 2, x), SHR_PROTO_OK);
	assert_int_equal(send(c, 0, SHR_KIND_ALLGATHER, 1, ALL, 2, NULL), SHR_PROTO_OUT_OF_STEP);
	assert_int_equal(send(c, 2, SHR_KIND_BROADCAST, 2, ALL, 2, x), SHR_PROTO_OUT_OF_STEP);
	assert_int_equal(send(c, 3, SHR_KIND_GATHER, 1, 0, 2, NULL), SHR_PROTO_OUT_OF_STEP);
	/* a summed round against the open relay: out of step too */
	assert_int_equal(send(c, 3, SHR_KIND_ALLREDUCE, 0, 0, 2, x), SHR_PROTO_OUT_OF_STEP);
	assert_int_equal(c->st.rejects[SHR_PROTO_OUT_OF_STEP], 4);
	assert_int_equal(c->st.completed, 0);
	/* The ranks that agree complete it. */
	for (uint16_t r = 0; r < T_WORLD; r++)
		if (r != 1)
			assert_int_equal(send(c, r, SHR_KIND_BROADCAST, 1, ALL, 2, NULL),
					 SHR_PROTO_OK);
	expect_result(c, SHR_KIND_BROADCAST, 1, ALL, 2, x, 1);
}

/*
 * Members that call different collectives: the first DATA out of step with an open round
 * marks the job; the next tick aborts it with EPROTO naming both members and both rounds.
 */
static void
test_mismatch_abort(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;
	int32_t x[3] = { 1, 2, 3 };

	/* ranks 0, 1 call reduce(root 1) of tensor 5, step s, 3 elements; rank 3 calls
	 * allgather of block 3, 2 elements */
	assert_int_equal(send(c, 1, SHR_KIND_REDUCE, 1, 0, 3, x), SHR_PROTO_OK);
	assert_int_equal(send(c, 0, SHR_KIND_REDUCE, 1, 0, 3, x), SHR_PROTO_OK);
	assert_int_equal(shr_agg_tick(c->agg, 2000, &c->tx, &c->st), 0);
	assert_int_equal(send(c, 3, SHR_KIND_ALLGATHER, 3, ALL, 2, x), SHR_PROTO_OUT_OF_STEP);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(shr_agg_tick(c->agg, 3000, &c->tx, &c->st), 1);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.aux, EPROTO);
	/* the member that disagreed, and its round */
	assert_int_equal(a.rank, 3);
	assert_int_equal(a.kind, SHR_KIND_ALLGATHER);
	assert_int_equal(a.root, 3);
	assert_int_equal(a.tensor, 5);
	assert_int_equal(a.step, c->step);
	assert_int_equal(a.count, 2);
	/* a member of the open round (its lowest rank), and that round */
	assert_int_equal(a.slot, 0);
	assert_true(a.offset == ((uint64_t)5 << 32 | c->step));
	assert_int_equal(a.feedback, 3);
	assert_int_equal(a.op, SHR_KIND_REDUCE);
	assert_int_equal(a.flags, 1);
	assert_int_equal(c->tx.ndst, T_WORLD);
	assert_int_equal(c->st.mismatches, 1);
	/* told once: the next tick has nothing to do */
	assert_int_equal(shr_agg_tick(c->agg, 4000, &c->tx, &c->st), 0);
	/* the static job's next incarnation (fresh slots, no mark left) runs to a result */
	c->step++;
	for (uint16_t r = 0; r < T_WORLD; r++)
		assert_int_equal(send(c, r, SHR_KIND_ALLREDUCE, 0, 0, 3, x), SHR_PROTO_OK);
	assert_int_equal(c->st.completed, 1);
	assert_int_equal(shr_agg_tick(c->agg, 5000, &c->tx, &c->st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reduce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relay_all, setup_f16, teardown),
		cmocka_unit_test_setup_teardown(test_relay_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disagree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mismatch_abort, setup, teardown),
	};

	return cmocka_run_group_tests_name("agg_coll", tests, NULL, NULL);
}
