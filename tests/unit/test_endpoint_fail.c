/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* What goes wrong around the endpoint: duplicate, stale and wrong results, back-pressure and
 * send errors, timeouts, aborts. */

#include "endpoint_test.h"

static void
chan_script(struct chan *c, unsigned int n, const int *rcs)
{
	assert_true(n <= 64);
	memcpy(c->script, rcs, n * sizeof(*rcs));
	c->script_n = n;
	c->script_pos = 0;
}

/* ---- duplicates, stale and wrong results ---- */

static void
test_dup_and_stale(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep = ep_new(&p, &c);
	int32_t in[16], out[16], snap[16], junk[4] = { 9, 9, 9, 9 };
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	struct shr_proto_msg m;

	(void)state;
	fill_i32(in, 16, 4);
	memset(out, 0, sizeof(out));
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	memcpy(snap, out, sizeof(out));

	/* The same result again, with other contents: ignored, output unchanged. */
	m = result_of(&c.pkts[0]);
	assert_int_equal(feed(ep, &m, junk, sizeof(junk)), -EALREADY);
	assert_int_equal(echo(ep, &c.pkts[0]), -EALREADY);
	assert_memory_equal(out, snap, sizeof(out));
	assert_int_equal(stats(ep).rx_dup, 2);

	/* Chunk 2 goes on slot 0, version 1. The old version-0 result is stale. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.pkts[2].m.slot, 0);
	assert_int_equal(c.pkts[2].m.ver, 1);
	assert_int_equal(feed(ep, &m, junk, sizeof(junk)), -EALREADY);
	/* chunk 0's identity with the current version: stale too (offset differs) */
	m.ver = 1;
	assert_int_equal(feed(ep, &m, junk, sizeof(junk)), -EALREADY);
	/* chunk 2's identity with the old version */
	m = result_of(&c.pkts[2]);
	m.ver = 0;
	assert_int_equal(feed(ep, &m, junk, sizeof(junk)), -EALREADY);
	assert_memory_equal(out, snap, sizeof(out));
	assert_int_equal(stats(ep).rx_dup, 5);

	/* Chunk 1's result, twice. */
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	assert_int_equal(echo(ep, &c.pkts[1]), -EALREADY);
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 4);
	/* Chunk 3 on slot 1 version 1; chunk 1's (version 0) result is stale now. */
	assert_int_equal(c.pkts[3].m.ver, 1);
	memcpy(snap, out, sizeof(out));
	assert_int_equal(echo(ep, &c.pkts[1]), -EALREADY);
	assert_int_equal(echo(ep, &c.pkts[2]), -EALREADY);
	assert_memory_equal(out, snap, sizeof(out));
	assert_int_equal(echo(ep, &c.pkts[3]), 0);
	assert_memory_equal(out, in, sizeof(in));
	/* After the op is done, its results are duplicates. */
	assert_int_equal(echo(ep, &c.pkts[3]), -EALREADY);
	assert_int_equal(stats(ep).rx_dup, 9);
	assert_int_equal(stats(ep).rx_results, 4);
	assert_int_equal(stats(ep).rx_bad, 0);
	assert_true(shr_endpoint_idle(ep));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_wrong_results(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep = ep_new(&p, &c);
	int32_t in[4], out[4], zero[4] = { 0 }, junk[4] = { 1, 2, 3, 4 };
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4,
				      .tensor = 3 };
	struct shr_proto_msg good, m;
	uint8_t buf[SHR_PROTO_HDR_LEN + 16];
	uint64_t bad = 0, dup = 0;
	size_t len;

	(void)state;
	fill_i32(in, 4, 5);
	memset(out, 0, sizeof(out));
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 1);
	good = result_of(&c.pkts[0]);

#define BAD(expr_m, rc) do { \
		m = good; \
		expr_m; \
		assert_int_equal(feed(ep, &m, junk, 4 * m.count), rc); \
		if ((rc) == -EINVAL) \
			bad++; \
		else \
			dup++; \
		assert_memory_equal(out, zero, sizeof(out)); \
	} while (0)

	BAD(m.job = 8, -EINVAL);
	BAD(m.slot = 2, -EINVAL);			/* outside the window */
	BAD(m.slot = SHR_PROTO_SLOT_MASK, -EINVAL);
	BAD(m.dtype = SHR_DTYPE_FLOAT32, -EINVAL);
	BAD(m.op = SHR_OP_MIN, -EINVAL);
	BAD(m.type = SHR_MSG_DATA, -EINVAL);		/* its own DATA looped back */
	BAD(m.type = SHR_MSG_JOIN_ACK, -EINVAL);
	BAD(m.slot = 1, -EALREADY);			/* nothing outstanding there */
	BAD(m.ver = 1, -EALREADY);
	BAD(m.tensor = 4, -EALREADY);
	BAD(m.step = 1, -EALREADY);
	BAD(m.offset = 4, -EALREADY);
	BAD(m.count = 3, -EALREADY);
#undef BAD

	/* Corrupted CRC: payload byte, header byte. */
	shr_proto_build(buf, &good, junk, sizeof(junk));
	memcpy(buf + SHR_PROTO_HDR_LEN, junk, sizeof(junk));
	len = sizeof(buf);
	buf[SHR_PROTO_HDR_LEN + 5] ^= 0x10;
	assert_int_equal(shr_endpoint_input(ep, buf, len), -EINVAL);
	buf[SHR_PROTO_HDR_LEN + 5] ^= 0x10;
	buf[27] ^= 0x01;	/* tensor id */
	assert_int_equal(shr_endpoint_input(ep, buf, len), -EINVAL);
	buf[27] ^= 0x01;
	/* Short, and a payload one byte short of the count. */
	assert_int_equal(shr_endpoint_input(ep, buf, 20), -EINVAL);
	assert_int_equal(shr_endpoint_input(ep, buf, len - 1), -EINVAL);
	bad += 4;
	assert_memory_equal(out, zero, sizeof(out));

	assert_int_equal(stats(ep).rx_bad, bad);
	assert_int_equal(stats(ep).rx_dup, dup);
	assert_int_equal(stats(ep).rx_results, 0);
	assert_int_equal(shr_endpoint_test(ep, 0), 0);

	/* The intact message is accepted (the box summed to junk). */
	assert_int_equal(shr_endpoint_input(ep, buf, len), 0);
	assert_memory_equal(out, junk, sizeof(out));
	assert_int_equal(shr_endpoint_test(ep, 0), 1);
	assert_int_equal(shr_endpoint_error(ep, NULL, NULL), 0);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* ---- back-pressure, send errors ---- */

static void
test_eagain(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep;
	int32_t in[16], out[16];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	const int again[] = { -EAGAIN };
	const int ok_again[] = { 0, -EAGAIN };
	const int eio[] = { -EIO };

	(void)state;
	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 16, 9);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);

	/* Pushed back on the first chunk: nothing else is tried in this poll. */
	chan_script(&c, 1, again);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.n, 0);
	assert_int_equal(stats(ep).tx_data, 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), 0);
	/* The next poll sends it, then the next. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.pkts[0].m.slot, 0);
	assert_int_equal(c.pkts[0].m.offset, 0);
	assert_int_equal(c.pkts[1].m.slot, 1);
	assert_int_equal(stats(ep).tx_data, 2);

	/* A pushed-back chunk on a reused slot keeps the flipped version once. */
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	chan_script(&c, 2, ok_again);
	c.calls = 0;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.calls, 2);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.pkts[2].m.slot, 0);
	assert_int_equal(c.pkts[2].m.ver, 1);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.pkts[3].m.slot, 1);
	assert_int_equal(c.pkts[3].m.ver, 1);
	assert_int_equal(c.pkts[3].m.offset, 12);

	/* Pushed back on a resend: no retx counted, nothing new sent, retried next poll. */
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	c.now = 1 * MS;
	chan_script(&c, 1, again);
	c.calls = 0;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.n, 4);
	assert_int_equal(stats(ep).tx_retx, 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 5);
	assert_true(c.pkts[4].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[4].m.offset, 12);
	assert_int_equal(stats(ep).tx_retx, 1);
	assert_int_equal(echo(ep, &c.pkts[4]), 0);
	assert_memory_equal(in, out, sizeof(in));
	assert_true(shr_endpoint_idle(ep));

	/* Another send error: counted, the chunk counts as sent and the timer recovers it. */
	memset(out, 0, sizeof(out));
	op.step = 1;
	assert_int_equal(shr_endpoint_submit(ep, &op), 1);
	chan_script(&c, 1, eio);
	c.now = 10 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 5 + 1);		/* chunk 0 failed, chunk 1 went out */
	assert_int_equal(c.pkts[5].m.offset, 16 + 4);	/* after the first op's 16 */
	assert_int_equal(stats(ep).tx_errors, 1);
	assert_int_equal(echo(ep, &c.pkts[5]), 0);
	c.now = 10 * MS + stats(ep).rto_ns;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 8);
	assert_true(c.pkts[6].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[6].m.offset, 16);
	assert_int_equal(c.pkts[6].m.step, 1);
	/* chunk 2 waits for slot 0 (chunk 0); chunk 3 goes on slot 1, freed by chunk 1 */
	assert_false(c.pkts[7].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[7].m.offset, 16 + 12);
	assert_int_equal(c.pkts[7].m.slot, 1);
	assert_int_equal(echo(ep, &c.pkts[6]), 0);
	assert_int_equal(echo(ep, &c.pkts[7]), 0);
	while (!shr_endpoint_idle(ep)) {
		size_t first = c.n;

		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_true(c.n > first);
		for (; first < c.n; first++)
			assert_int_equal(echo(ep, &c.pkts[first]), 0);
	}
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* ---- failures ---- */

static void
test_timeout(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(1, 4);
	struct shr_endpoint *ep;
	int32_t in[4 * 30], out[4 * 30];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4 * 30 };
	struct shr_endpoint_op small = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4 };
	uint32_t reason = 0;
	uint16_t rank = 0;
	const uint64_t t0 = 777;
	int h, i;

	(void)state;
	p.rto_init_ns = 1 * MS;
	p.rto_max_ns = 2 * MS;
	p.fail_ns = 5 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 4 * 30, 10);

	/* An idle endpoint never times out. */
	c.now = t0;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	c.now += 3600ull * 1000 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);

	/* Results every 4 ms keep a 5 ms fail timer from firing (with resends in between). */
	h = shr_endpoint_submit(ep, &op);
	assert_int_equal(h, 0);
	for (i = 0; i < 30; i++) {
		size_t first = c.n;
		int j;

		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + 1);
		for (j = 0; j < 40; j++) {
			c.now += 100 * US;
			assert_int_equal(shr_endpoint_poll(ep), 0);
		}
		assert_true(c.n > first + 1);	/* resent meanwhile */
		assert_int_equal(echo(ep, &c.pkts[c.n - 1]), 0);
	}
	assert_int_equal(shr_endpoint_test(ep, h), 1);
	assert_int_equal(shr_endpoint_error(ep, NULL, NULL), 0);

	/* No result at all: fails at exactly fail_ns after the send. */
	memset(out, 0, sizeof(out));
	h = shr_endpoint_submit(ep, &small);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	{
		uint64_t ts = c.now;

		while (c.now + 100 * US < ts + 5 * MS) {
			c.now += 100 * US;
			assert_int_equal(shr_endpoint_poll(ep), 0);
		}
		c.now = ts + 5 * MS - 1;
		assert_int_equal(shr_endpoint_poll(ep), 0);
		c.now = ts + 5 * MS;
	}
	assert_int_equal(shr_endpoint_poll(ep), -ETIMEDOUT);
	/* Sticky. */
	assert_int_equal(shr_endpoint_poll(ep), -ETIMEDOUT);
	assert_int_equal(shr_endpoint_test(ep, h), -ETIMEDOUT);
	assert_int_equal(shr_endpoint_test(ep, 0), 1);	/* done before the failure */
	assert_int_equal(shr_endpoint_submit(ep, &small), -EPIPE);
	assert_int_equal(shr_endpoint_error(ep, &reason, &rank), -ETIMEDOUT);
	assert_int_equal(reason, ETIMEDOUT);
	assert_int_equal(rank, SHR_PROTO_RANK_ALL);
	assert_int_equal(shr_endpoint_next_deadline(ep), UINT64_MAX);
	/* A late result is ignored. */
	assert_int_equal(echo(ep, &c.pkts[c.n - 1]), -ETIMEDOUT);
	assert_int_equal(out[0], 0);
	{
		size_t n = c.n;

		c.now += 10 * MS;
		assert_int_equal(shr_endpoint_poll(ep), -ETIMEDOUT);
		assert_int_equal(c.n, n);	/* nothing resent after failing */
	}
	shr_endpoint_free(ep);
	chan_fini(&c);

	/* The fail deadline shows in next_deadline when it comes before the resend. */
	p.fail_ns = 500 * US;
	ep = ep_new(&p, &c);
	c.now = t0;
	assert_int_equal(shr_endpoint_submit(ep, &small), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 500 * US);
	c.now = t0 + 500 * US;
	assert_int_equal(shr_endpoint_poll(ep), -ETIMEDOUT);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_abort(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep = ep_new(&p, &c);
	int32_t in[8], out[8];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4 };
	struct shr_proto_msg m = {
		.type = SHR_MSG_ABORT, .dtype = SHR_DTYPE_INT32, .job = 8, .rank = 3,
		.world = 4, .aux = EHOSTDOWN,
	};
	uint32_t reason = 0;
	uint16_t rank = 0;
	int h0, h1;

	(void)state;
	fill_i32(in, 8, 11);
	h0 = shr_endpoint_submit(ep, &op);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	op.in = in + 4;
	op.out = out + 4;
	h1 = shr_endpoint_submit(ep, &op);
	assert_int_equal(shr_endpoint_poll(ep), 0);

	/* Another job's ABORT is not ours. */
	assert_int_equal(feed(ep, &m, NULL, 0), -EINVAL);
	assert_int_equal(shr_endpoint_error(ep, &reason, &rank), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);

	m.job = 7;
	assert_int_equal(feed(ep, &m, NULL, 0), -ECONNABORTED);
	assert_int_equal(shr_endpoint_error(ep, &reason, &rank), -ECONNABORTED);
	assert_int_equal(reason, EHOSTDOWN);
	assert_int_equal(rank, 3);
	assert_int_equal(shr_endpoint_poll(ep), -ECONNABORTED);
	assert_int_equal(shr_endpoint_test(ep, h1), -ECONNABORTED);
	assert_int_equal(shr_endpoint_test(ep, h0), 1);
	assert_int_equal(shr_endpoint_submit(ep, &op), -EPIPE);
	/* The first failure is the one reported. */
	m.rank = 1;
	assert_int_equal(feed(ep, &m, NULL, 0), -ECONNABORTED);
	assert_int_equal(shr_endpoint_error(ep, &reason, &rank), -ECONNABORTED);
	assert_int_equal(rank, 3);
	assert_int_equal(echo(ep, &c.pkts[1]), -ECONNABORTED);
	assert_int_equal(shr_endpoint_error(ep, NULL, NULL), -ECONNABORTED);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dup_and_stale),
		cmocka_unit_test(test_wrong_results),
		cmocka_unit_test(test_eagain),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_abort),
	};

	return cmocka_run_group_tests_name("endpoint_fail", tests, NULL, NULL);
}
