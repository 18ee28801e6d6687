/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* Every collective kind through N endpoints and the real box (endpoint_coll_test.h): N = 1 to 4,
 * lossy, float32 relays; a rank with another kind or root; submit's checks; no round at N = 1;
 * the endpoint's checks of RESULTs. */

#include "endpoint_coll_test.h"

/* ---- tests ---- */

static void
test_kinds_n2(void **state)
{
	(void)state;
	run_kinds(2, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 0, 0, 0, 1);
	run_kinds(2, SHR_DTYPE_INT32, all_kinds, NKINDS, 1, 0, 0, 0, 2);
}

static void
test_kinds_n3(void **state)
{
	(void)state;
	run_kinds(3, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 0, 0, 0, 3);
	run_kinds(3, SHR_DTYPE_INT32, all_kinds, NKINDS, 16, 0, 0, 0, 4);
}

static void
test_kinds_n1(void **state)
{
	(void)state;
	run_kinds(1, SHR_DTYPE_INT32, all_kinds, NKINDS, 20, 0, 0, 0, 5);
}

static void
test_kinds_lossy(void **state)
{
	(void)state;
	/* 1 in 7 messages lost, 1 in 11 duplicated, 1 in 13 reordered */
	run_kinds(2, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 7, 11, 13, 6);
	run_kinds(3, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 7, 11, 13, 7);
	run_kinds(4, SHR_DTYPE_INT32, all_kinds, NKINDS, 50, 7, 11, 13, 8);
}

static void
test_relays_float(void **state)
{
	(void)state;
	run_kinds(2, SHR_DTYPE_FLOAT32, all_kinds, NKINDS, 37, 0, 0, 0, 9);
	run_kinds(3, SHR_DTYPE_FLOAT32, all_kinds, NKINDS, 37, 7, 11, 13, 10);
}

/*
 * A rank that calls another collective, or another root, than the others: never a result.
 * The box refuses its DATA (out_of_step: kind and root are part of a round's identity) and
 * aborts the job at its next tick, well before its job timeout (EPROTO, naming the odd rank);
 * every endpoint fails with -ECONNABORTED, and no output was written.
 */
static void
mismatch(uint8_t kind, uint16_t root, uint8_t odd_kind, uint16_t odd_root)
{
	struct net *n = net_new(3, SHR_DTYPE_INT32, 21);
	struct coll cl = { .kind = kind, .root = root, .count = 40, .k = 1 };
	uint32_t reason;
	uint16_t blamed;
	int r;

	uint64_t t0 = n->now;

	coll_submit(n, &cl, 2, odd_kind, odd_root);
	assert_int_equal(net_run(n, cl.h), -ECONNABORTED);
	assert_true(n->now - t0 < 2000000000ull);	/* the box's job timeout (net_new) */
	assert_true(n->refused[SHR_PROTO_OUT_OF_STEP] > 0);
	assert_true(n->aborts > 0);
	assert_int_equal(n->st.completed, 0);
	/* every rank fails, told by the box */
	for (r = 0; r < 3; r++) {
		int rc = net_run(n, (int[]){ cl.h[r], cl.h[r], cl.h[r] });

		assert_int_equal(rc, -ECONNABORTED);
		assert_int_equal(shr_endpoint_error(n->ep[r], &reason, &blamed), -ECONNABORTED);
		assert_int_equal(reason, EPROTO);
		/* the odd rank's DATA opened no round (rank 0's came first): it disagreed */
		assert_int_equal(blamed, 2);
	}
	/* no result: every output still holds its canary, but the block copied at submit */
	for (r = 0; r < 3; r++) {
		struct shr_endpoint_stats st;
		uint8_t k = r == 2 ? odd_kind : kind;
		uint16_t rt = r == 2 ? odd_root : root;
		uint64_t lo = 0, hi = 0;

		shr_endpoint_stats_get(n->ep[r], &st);
		assert_int_equal(st.rx_results, 0);
		if (k == SHR_KIND_ALLGATHER || k == SHR_KIND_ALLTOALL ||
		    (k == SHR_KIND_GATHER && r == rt)) {
			lo = (uint64_t)r * cl.count;
			hi = lo + cl.count;
		} else if (k == SHR_KIND_SCATTER && r == rt) {
			hi = cl.count;
		}
		for (uint64_t e = 0; e < cl.nout[r]; e++)
			if (e < lo || e >= hi)
				assert_int_equal(cl.out[r][e], 0xa5a5a5a5u);
	}
	coll_free(n, &cl);
	net_free(n);
}

static void
test_mismatch(void **state)
{
	(void)state;
	mismatch(SHR_KIND_BROADCAST, 0, SHR_KIND_BROADCAST, 1);	/* another root */
	mismatch(SHR_KIND_BROADCAST, 0, SHR_KIND_ALLGATHER, 0);	/* another kind */
	mismatch(SHR_KIND_REDUCE, 1, SHR_KIND_ALLREDUCE, 0);
	mismatch(SHR_KIND_ALLTOALL, 0, SHR_KIND_SCATTER, 0);
	mismatch(SHR_KIND_GATHER, 0, SHR_KIND_GATHER, 2);
}

/* What submit refuses, and what it accepts without a round. */
static void
test_submit_args(void **state)
{
	struct net *n = net_new(3, SHR_DTYPE_QINT32, 31);
	struct shr_endpoint *ep = n->ep[1];	/* rank 1 of 3 */
	uint32_t a[64], b[64];
	struct shr_endpoint_op op = { .in = a, .out = b, .count = 8 };

	(void)state;
	op.kind = SHR_KIND_MAX;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_BROADCAST;
	op.root = 3;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	/* op is checked for summed kinds only */
	op.root = 0;
	op.op = SHR_OP_PROD;	/* not for qint32 */
	op.kind = SHR_KIND_REDUCE;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_REDUCE_SCATTER;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.op = SHR_OP_MAX_;
	op.kind = SHR_KIND_ALLTOALL;
	assert_true(shr_endpoint_submit(ep, &op) >= 0);
	op.op = SHR_OP_SUM;
	/* buffers this rank needs */
	op.kind = SHR_KIND_SCATTER;
	op.in = NULL;		/* not the root: in not used */
	assert_true(shr_endpoint_submit(ep, &op) >= 0);
	op.root = 1;		/* the root: in needed */
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_REDUCE;
	op.in = a;
	op.out = NULL;		/* the root of a reduce needs out */
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.root = 0;
	assert_true(shr_endpoint_submit(ep, &op) >= 0);
	/* overlap: allgather's out (3 x 8) over its in */
	op.kind = SHR_KIND_ALLGATHER;
	op.in = a + 4;
	op.out = a;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.in = a;		/* the same buffer is no better */
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_ALLREDUCE;	/* ...but fine in place for allreduce */
	assert_true(shr_endpoint_submit(ep, &op) >= 0);
	/*
	 * ...and not for reduce_scatter (shr_endpoint.h, shr_comm.h: out must not overlap in):
	 * rank 1's block would land on block 0 of its input, which a resend reads again.
	 */
	op.kind = SHR_KIND_REDUCE_SCATTER;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	/* N x count overflows */
	op.kind = SHR_KIND_ALLGATHER;
	op.out = b;
	op.count = UINT64_MAX / 2;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_ALLTOALL;
	op.count = UINT64_MAX / 8;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	net_free(n);
}

/* A world of 1: gather, scatter, alltoall have no round (done at submit, copied locally). */
static void
test_no_round(void **state)
{
	struct net *n = net_new(1, SHR_DTYPE_INT32, 41);
	uint32_t in[5] = { 1, 2, 3, 4, 5 }, out[5] = { 0 };
	struct shr_endpoint_op op = { .in = in, .out = out, .count = 5 };
	static const uint8_t kinds[] = { SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL };

	(void)state;
	for (unsigned int i = 0; i < 3; i++) {
		int h;

		op.kind = kinds[i];
		memset(out, 0, sizeof(out));
		h = shr_endpoint_submit(n->ep[0], &op);
		assert_true(h >= 0);
		assert_int_equal(shr_endpoint_test(n->ep[0], h), 1);
		assert_memory_equal(in, out, sizeof(in));
	}
	assert_int_equal(shr_endpoint_poll(n->ep[0]), 0);
	assert_int_equal(n->sent, 0);
	assert_true(shr_endpoint_idle(n->ep[0]));
	net_free(n);
}

/*
 * The endpoint's view of RESULTs: a header-only RESULT where this rank needs the payload is
 * refused (the round stays open; the box's resend brings it), one with another kind, root
 * or aux is refused, a payload for a rank that is no destination is not written.
 */
static void
test_result_checks(void **state)
{
	struct net *n = net_new(2, SHR_DTYPE_INT32, 51);
	struct shr_endpoint *ep = n->ep[1];
	uint32_t in[4] = { 9, 9, 9, 9 }, out[4];
	struct shr_endpoint_op op = {
		.in = in, .out = out, .count = 4, .kind = SHR_KIND_BROADCAST, .root = 0,
		.tensor = 77,
	};
	struct shr_endpoint_stats st;
	struct shr_proto_msg m;
	uint8_t buf[T_MAXMSG];
	struct msg *d;
	int h;

	(void)state;
	memset(out, CANARY, sizeof(out));
	h = shr_endpoint_submit(ep, &op);
	assert_true(h >= 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	d = q_pop(n);	/* rank 1's header-only DATA */
	assert_non_null(d);
	assert_int_equal(shr_proto_validate(d->data, d->len, &m), SHR_PROTO_OK);
	assert_int_equal(d->len, SHR_PROTO_HDR_LEN);
	assert_true(m.flags & SHR_FLAG_NOPAYLOAD);
	assert_int_equal(m.kind, SHR_KIND_BROADCAST);
	assert_int_equal(m.root, 0);
	assert_int_equal(m.aux, SHR_PROTO_RANK_ALL);
	assert_int_equal(m.count, 4);
	free(d);
	/* the RESULT, as the box would make it */
	m.type = SHR_MSG_RESULT;
	m.rank = SHR_PROTO_RANK_ALL;
	m.flags = SHR_FLAG_NOPAYLOAD;
	shr_proto_build(buf, &m, NULL, 0);
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN), -EINVAL);
	memcpy(buf + SHR_PROTO_HDR_LEN, in, sizeof(in));	/* the payload of those below */
	m.flags = 0;
	m.root = 1;
	shr_proto_build(buf, &m, in, sizeof(in));
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + 16), -EINVAL);
	m.root = 0;
	m.aux = 1;
	shr_proto_build(buf, &m, in, sizeof(in));
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + 16), -EINVAL);
	m.aux = SHR_PROTO_RANK_ALL;
	m.kind = SHR_KIND_ALLGATHER;
	shr_proto_build(buf, &m, in, sizeof(in));
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + 16), -EINVAL);
	shr_endpoint_stats_get(ep, &st);
	assert_int_equal(st.rx_bad, 4);
	assert_int_equal(shr_endpoint_test(ep, h), 0);
	for (unsigned int i = 0; i < 4; i++)
		assert_int_equal(out[i], 0xa5a5a5a5u);
	m.kind = SHR_KIND_BROADCAST;
	shr_proto_build(buf, &m, in, sizeof(in));
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + 16), 0);
	assert_int_equal(shr_endpoint_test(ep, h), 1);
	assert_memory_equal(out, in, sizeof(in));
	net_free(n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_n1),
		cmocka_unit_test(test_kinds_n2),
		cmocka_unit_test(test_kinds_n3),
		cmocka_unit_test(test_kinds_lossy),
		cmocka_unit_test(test_relays_float),
		cmocka_unit_test(test_mismatch),
		cmocka_unit_test(test_submit_args),
		cmocka_unit_test(test_no_round),
		cmocka_unit_test(test_result_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
