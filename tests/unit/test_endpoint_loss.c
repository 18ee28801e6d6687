/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The endpoint under loss: lost DATA and RESULTs resent, RTT estimation, backoff and Karn's
 * rule, fast resend, recovery. */

#include "endpoint_test.h"

/* ---- loss, RTT, backoff ---- */

static void
test_loss_data(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(4, 4);
	struct shr_endpoint *ep;
	int32_t in[4], out[4];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4,
				      .tensor = 9 };
	const uint64_t t0 = 5000;
	struct shr_endpoint_stats st;
	size_t i;

	(void)state;
	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 4, 6);
	c.now = t0;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 1);		/* "lost": the test never answers it */
	assert_false(c.pkts[0].m.flags & SHR_FLAG_RETX);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 1 * MS);
	c.now = t0 + 1 * MS - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 1);

	/* Resent after RTO, then after 2 RTO, 4 RTO. */
	c.now = t0 + 1 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 3 * MS);
	c.now = t0 + 3 * MS - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	c.now = t0 + 3 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 7 * MS);
	for (i = 1; i < 3; i++) {
		const struct pkt *r = &c.pkts[i];

		assert_true(r->m.flags & SHR_FLAG_RETX);
		assert_true(r->m.flags & SHR_FLAG_LAST);
		assert_int_equal(r->m.slot, 0);
		assert_int_equal(r->m.ver, 0);
		assert_int_equal(r->m.step, 0);
		assert_int_equal(r->m.tensor, 9);
		assert_int_equal(r->m.offset, 0);
		assert_int_equal(r->m.count, 4);
		assert_ptr_equal(r->payload, in);
		assert_memory_equal(r->buf + SHR_PROTO_HDR_LEN, in, sizeof(in));
	}
	st = stats(ep);
	assert_int_equal(st.tx_data, 1);
	assert_int_equal(st.tx_retx, 2);

	/* The result of the resend: accepted, no RTT sample (Karn). */
	c.now = t0 + 3 * MS + 10 * US;
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_memory_equal(out, in, sizeof(in));
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 0);
	assert_int_equal(st.rto_ns, 1 * MS);
	assert_int_equal(shr_endpoint_test(ep, 0), 1);
	assert_int_equal(shr_endpoint_next_deadline(ep), UINT64_MAX);
	c.now = t0 + 100 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_loss_result(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(4, 4);
	struct shr_endpoint *ep;
	int32_t in[8], out[8];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 8 };

	(void)state;
	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 8, 7);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	/* Chunk 0's result arrives; chunk 1's is lost on the way back. */
	c.now = 50 * US;
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	assert_int_equal(stats(ep).srtt_ns, 50 * US);
	assert_int_equal(stats(ep).rto_ns, 150 * US);
	/* One timer for all chunks: chunk 1 now expires with the adapted RTO. */
	assert_int_equal(shr_endpoint_next_deadline(ep), 150 * US);
	c.now = 150 * US - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	c.now = 150 * US;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	assert_true(c.pkts[2].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[2].m.slot, 1);
	/* The box resends the result to this rank; the late original arrives too. */
	c.now = 150 * US + 20 * US;
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_int_equal(echo(ep, &c.pkts[1]), -EALREADY);
	assert_memory_equal(out, in, sizeof(in));
	/* Karn: the sample of the resent chunk is not taken. */
	assert_int_equal(stats(ep).srtt_ns, 50 * US);
	assert_int_equal(stats(ep).rx_dup, 1);
	assert_true(shr_endpoint_idle(ep));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* Send one chunk, answer it after delay ns; returns the RESULT's input rc. */
static int
one_round(struct shr_endpoint *ep, struct chan *c, uint64_t delay)
{
	size_t first = c->n;

	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c->n, first + 1);
	assert_false(c->pkts[first].m.flags & SHR_FLAG_RETX);
	c->now += delay;
	return echo(ep, &c->pkts[first]);
}

static void
test_rtt_backoff_karn(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(1, 1);
	struct shr_endpoint *ep;
	enum { N = 300 };
	int32_t in[N], out[N];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = N };
	struct shr_endpoint_stats st;
	uint64_t t, rto, want;
	size_t first;
	int i;

	(void)state;
	p.rto_init_ns = 1 * MS;
	p.rto_min_ns = 50 * US;
	p.rto_max_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, N, 8);
	c.now = 1 * MS;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);

	/* First sample: SRTT = R, RTTVAR = R / 2, RTO = 3 R. */
	assert_int_equal(one_round(ep, &c, 100 * US), 0);
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 100 * US);
	assert_int_equal(st.rto_ns, 300 * US);
	/* Second: SRTT stays, RTTVAR = 3/4 * 50 us. */
	assert_int_equal(one_round(ep, &c, 100 * US), 0);
	assert_int_equal(stats(ep).rto_ns, 100 * US + 4 * 37500);
	/* The next chunk is armed with the adapted RTO. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), c.now + 250 * US);
	c.now += 100 * US;
	assert_int_equal(echo(ep, &c.pkts[c.n - 1]), 0);
	/* Steady 100 us samples: RTTVAR -> 0, but the variation term stays at SRTT / 2. */
	for (i = 0; i < 60; i++)
		assert_int_equal(one_round(ep, &c, 100 * US), 0);
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 100 * US);
	assert_int_equal(st.rto_ns, 150 * US);
	/* One slow sample raises it. */
	assert_int_equal(one_round(ep, &c, 900 * US), 0);
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 200 * US);
	/* SRTT + 4 RTTVAR = 200 us + 4 * (800 us / 4): never below the round trip (no cap at
	 * a few minimum round trips), at most rto_max. */
	assert_int_equal(st.min_rtt_ns, 100 * US);
	assert_int_equal(st.rto_ns, 1 * MS);
	/* Faster samples: RTO moves down to the floor, no further. */
	for (i = 0; i < 80; i++)
		assert_int_equal(one_round(ep, &c, 20 * US), 0);
	st = stats(ep);
	assert_true(st.srtt_ns >= 20 * US && st.srtt_ns < 21 * US);
	assert_int_equal(st.rto_ns, 50 * US);

	/* Backoff: a lost chunk is resent after 50, 100, 200, 400, 800, 1000, 1000 us. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	first = c.n - 1;
	t = c.now;
	rto = 50 * US;
	for (i = 0; i < 7; i++) {
		want = t + rto;
		assert_int_equal(shr_endpoint_next_deadline(ep), want);
		c.now = want - 1;
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + 1 + i);
		c.now = want;
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + 2 + i);
		assert_true(c.pkts[c.n - 1].m.flags & SHR_FLAG_RETX);
		assert_int_equal(c.pkts[c.n - 1].m.offset, c.pkts[first].m.offset);
		t = want;
		rto = rto * 2 > 1 * MS ? 1 * MS : rto * 2;
	}
	st = stats(ep);
	assert_int_equal(st.tx_retx, 7);
	assert_int_equal(st.timeouts, 7);
	assert_int_equal(st.backoff, 5);	/* 50 us << 5 > 1 ms: no further */
	/* Karn: its result comes 5 ms after the first send; no sample, base RTO unchanged. */
	c.now += 10 * US;
	assert_int_equal(echo(ep, &c.pkts[c.n - 1]), 0);
	st = stats(ep);
	assert_true(st.srtt_ns < 21 * US);
	assert_int_equal(st.rto_ns, 50 * US);
	assert_int_equal(st.backoff, 0);	/* an answer: the backoff ends */
	/* The next chunk starts from the base RTO again, and its sample counts. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), c.now + 50 * US);
	c.now += 40 * US;
	assert_int_equal(echo(ep, &c.pkts[c.n - 1]), 0);
	assert_true(stats(ep).srtt_ns > 21 * US);

	/* Finish the op. */
	while (!shr_endpoint_idle(ep))
		assert_int_equal(one_round(ep, &c, 20 * US), 0);
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * Early resend: results of later chunks come back while an older one has none (its DATA or
 * its RESULT was lost): it is resent once its age passes SRTT plus the reorder window,
 * without waiting for the timer. A resend answered too soon was spurious: R grows.
 */
static void
test_fast_resend(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(8, 1);
	struct shr_endpoint *ep;
	int32_t in[16], out[16];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	struct shr_endpoint_stats st;
	size_t i, n;

	(void)state;
	p.rto_init_ns = 1 * MS;
	p.cc_target_ns = SHR_ENDPOINT_CC_OFF;	/* the window is not cut by the resend */
	ep = ep_new(&p, &c);
	fill_i32(in, 16, 12);
	c.now = 0;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 8);

	/* Chunks 1 and 2 answered after 100 us, not chunk 0: could be reordering (R = 3). */
	c.now = 100 * US;
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 100 * US);
	assert_int_equal(st.min_rtt_ns, 100 * US);
	assert_int_equal(st.rto_ns, 250 * US);
	assert_int_equal(st.reorder, 3);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	/* Chunk 8 waits for chunk 0 (slot 0); chunks 9 and 10 go on slots 1 and 2. */
	assert_int_equal(c.n, 10);
	assert_int_equal(c.pkts[8].m.offset, 9);
	assert_int_equal(c.pkts[9].m.offset, 10);
	assert_int_equal(shr_endpoint_next_deadline(ep), 250 * US);	/* the timer */
	/* Chunk 3 too (chunk 11 goes on slot 3): chunk 0 is passed by 3; it goes at SRTT +
	 * min RTT / 4 = 125 us. */
	assert_int_equal(echo(ep, &c.pkts[3]), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 11);
	assert_int_equal(c.pkts[10].m.offset, 11);
	assert_int_equal(shr_endpoint_next_deadline(ep), 125 * US);
	n = c.n;
	c.now = 125 * US - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, n);
	c.now = 125 * US;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, n + 1);
	assert_true(c.pkts[n].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[n].m.slot, 0);
	assert_int_equal(c.pkts[n].m.offset, 0);
	st = stats(ep);
	assert_int_equal(st.tx_retx, 1);
	assert_int_equal(st.tx_fast, 1);
	assert_int_equal(st.timeouts, 0);
	/* Only once: more results of later chunks do not resend it again. */
	c.now = 150 * US;
	assert_int_equal(echo(ep, &c.pkts[4]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);	/* chunk 12 on slot 4 */
	assert_int_equal(c.n, n + 2);
	assert_int_equal(c.pkts[n + 1].m.offset, 12);
	assert_int_equal(stats(ep).tx_retx, 1);
	assert_int_equal(stats(ep).srtt_ns, 100 * US + 50 * US / 8);	/* chunk 4: 150 us */
	/* The resend is answered 100 us later: needed, not spurious; no RTT sample (Karn). */
	c.now = 225 * US;
	assert_int_equal(echo(ep, &c.pkts[n]), 0);
	st = stats(ep);
	assert_int_equal(st.spurious, 0);
	assert_int_equal(st.reorder, 3);
	assert_int_equal(st.srtt_ns, 100 * US + 50 * US / 8);
	/* Slot 0 moves on: chunk 8, the one deferred. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, n + 3);
	assert_int_equal(c.pkts[n + 2].m.offset, 8);
	assert_int_equal(c.pkts[n + 2].m.slot, 0);

	/*
	 * Chunks 6, 7 and 8 answered before chunk 5, chunk 8 sent (at 225 us) after chunks 9,
	 * 10, 11 (at 100 us). By transmission order, chunk 8's answer passes chunk 5, whose
	 * fast time (sent at 0, + 100 us, the round trip of chunk 8's answer, + 25 us of
	 * reorder window) is 125 us, before now (325 us). Not chunks 9, 10 and 11: newer in
	 * the stream, sent before the deferred chunk 8, they come after it at a rank that sends
	 * in stream order (the rounds wait for it, nothing lost). Chunk 5 is resent ...
	 */
	c.now += 100 * US;
	assert_int_equal(echo(ep, &c.pkts[6]), 0);
	assert_int_equal(echo(ep, &c.pkts[7]), 0);
	assert_int_equal(echo(ep, &c.pkts[n + 2]), 0);
	n = c.n;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	for (i = n; i < c.n && !(c.pkts[i].m.flags & SHR_FLAG_RETX); i++)
		;
	assert_true(i < c.n);
	assert_int_equal(c.pkts[i].m.slot, 5);
	assert_int_equal(c.pkts[i].m.offset, 5);
	for (size_t k = i + 1; k < c.n; k++)
		assert_false(c.pkts[k].m.flags & SHR_FLAG_RETX);
	assert_int_equal(stats(ep).tx_fast, 2);
	/* ... and its first result arrives 10 us later: it was only overtaken. */
	c.now += 10 * US;
	assert_int_equal(echo(ep, &c.pkts[5]), 0);
	st = stats(ep);
	assert_int_equal(st.spurious, 1);
	assert_int_equal(st.reorder, 4);
	assert_int_equal(echo(ep, &c.pkts[i]), -EALREADY);

	/* Finish in order. */
	while (!shr_endpoint_idle(ep)) {
		size_t first = c.n, j;

		c.now += 100 * US;
		for (j = 0; j < first; j++)
			(void)echo(ep, &c.pkts[j]);
		assert_int_equal(shr_endpoint_poll(ep), 0);
	}
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * After a timeout, answers to the timed-out chunks let the others sent before it be resent
 * (2 per answer) when they were lost; when one of those is answered without a resend, they
 * were only late (a stalled rank) and nothing more is resent.
 */
static void
run_recovery(bool stalled)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(16, 1);
	struct shr_endpoint *ep;
	int32_t in[16], out[16];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	struct shr_endpoint_stats st;
	size_t i;

	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 16, 13);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 16);
	c.now = 1 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 18);		/* budget: chunks 0 and 1 only */
	check_resends(&c, 16, 2, 0);
	/* 900 us later (before the timer restarted at 1 ms fires) the answers come in. */
	c.now = 1 * MS + 900 * US;
	assert_int_equal(shr_endpoint_next_deadline(ep), 3 * MS);
	assert_int_equal(echo(ep, &c.pkts[16]), 0);
	assert_int_equal(echo(ep, &c.pkts[17]), 0);
	if (stalled) {
		/* A stalled rank woke up: chunk 2's first copy is answered too. */
		assert_int_equal(echo(ep, &c.pkts[2]), 0);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, 18);
		assert_int_equal(stats(ep).tx_retx, 2);
		/* The timer: not due (restarted at the expiry; chunk 2 gave a sample). */
		st = stats(ep);
		assert_int_equal(st.backoff, 0);
		assert_int_equal(shr_endpoint_next_deadline(ep), 1 * MS + st.rto_ns);
		for (i = 3; i < 16; i++)
			assert_int_equal(echo(ep, &c.pkts[i]), 0);
	} else {
		/* Lost: 4 more resent at once, oldest first; then 8 for their 4 answers. */
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, 22);
		check_resends(&c, 18, 4, 2);
		c.now += 20 * US;
		for (i = 18; i < 22; i++)
			assert_int_equal(echo(ep, &c.pkts[i]), 0);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, 30);
		check_resends(&c, 22, 8, 6);
		c.now += 20 * US;
		for (i = 22; i < 30; i++)
			assert_int_equal(echo(ep, &c.pkts[i]), 0);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, 32);		/* the last 2 */
		check_resends(&c, 30, 2, 14);
		c.now += 20 * US;
		for (i = 30; i < 32; i++)
			assert_int_equal(echo(ep, &c.pkts[i]), 0);
	}
	assert_true(shr_endpoint_idle(ep));
	assert_memory_equal(in, out, sizeof(in));
	st = stats(ep);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.tx_fast, 0);
	assert_int_equal(st.tx_retx, stalled ? 2 : 16);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_recovery(void **state)
{
	(void)state;
	run_recovery(false);
	run_recovery(true);
}

/* Answer the DATA d with a RESULT whose rank field (the box's hint) is rank. */
static int
echo_hint(struct shr_endpoint *ep, const struct pkt *d, uint16_t rank)
{
	struct shr_proto_msg m = result_of(d);

	m.rank = rank;
	return feed(ep, &m, d->buf + SHR_PROTO_HDR_LEN, d->len - SHR_PROTO_HDR_LEN);
}

/* A new endpoint (window 8, one element per chunk) sends op's first 8 chunks at 0; now 100 us. */
static struct shr_endpoint *
hint_start(const struct shr_endpoint_params *p, struct chan *c,
	   const struct shr_endpoint_op *op)
{
	struct shr_endpoint *ep = ep_new(p, c);

	assert_int_equal(shr_endpoint_submit(ep, op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c->n, 8);
	c->now = 100 * US;
	return ep;
}

/*
 * Hints (shr_agg.h): the RESULT for slot s names the one rank the box still waits for in
 * slot s - 1. Named, this rank resends that slot's chunk at once, where the fast rule would
 * wait for R later answers and a reorder window; another rank named, the chunk is held: no
 * fast resend, its timer started again; a chunk sent after the answered one is left alone.
 */
static void
test_hint(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(8, 1);
	struct shr_endpoint *ep;
	int32_t in[16], out[16];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	struct shr_endpoint_stats st;
	uint64_t rto;
	size_t i, n;

	(void)state;
	p.world = 3;
	p.rto_init_ns = 1 * MS;
	p.cc_target_ns = SHR_ENDPOINT_CC_OFF;
	fill_i32(in, 16, 5);

	/* Named: slot 1's RESULT says the box waits for this rank in slot 0. */
	ep = hint_start(&p, &c, &op);
	assert_int_equal(echo_hint(ep, &c.pkts[1], 0), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 10);
	assert_true(c.pkts[8].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[8].m.slot, 0);
	assert_int_equal(c.pkts[8].m.offset, 0);
	assert_int_equal(c.pkts[9].m.offset, 9);	/* chunk 9, slot 1 */
	st = stats(ep);
	assert_int_equal(st.hint_resent, 1);
	assert_int_equal(st.tx_fast, 1);
	assert_int_equal(st.hint_held, 0);
	/* Slot 1's chunk 9 went out after chunk 2: a hint in slot 2's RESULT is not for it. */
	assert_int_equal(echo_hint(ep, &c.pkts[2], 0), 0);
	assert_int_equal(echo_hint(ep, &c.pkts[3], 1), 0);	/* nor for chunk 2 (answered) */
	n = c.n;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	for (i = n; i < c.n; i++)
		assert_false(c.pkts[i].m.flags & SHR_FLAG_RETX);
	st = stats(ep);
	assert_int_equal(st.hint_resent, 1);
	assert_int_equal(st.hint_held, 0);
	assert_int_equal(st.tx_retx, 1);
	shr_endpoint_free(ep);
	chan_fini(&c);

	/* Held: slot 1's RESULT names rank 2; slots 2..7 answered, which would resend chunk 0
	 * at 125 us (test_fast_resend). */
	ep = hint_start(&p, &c, &op);
	assert_int_equal(echo_hint(ep, &c.pkts[1], 2), 0);
	assert_int_equal(stats(ep).hint_held, 1);
	for (i = 2; i < 8; i++)
		assert_int_equal(echo(ep, &c.pkts[i]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);	/* chunks 9..15; chunk 8 waits */
	assert_int_equal(c.n, 15);
	rto = stats(ep).rto_ns;
	/* The timer, started again at the hint, is all that is left for chunk 0. */
	assert_int_equal(shr_endpoint_next_deadline(ep), 100 * US + rto);
	c.now = 100 * US + rto - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 15);
	assert_int_equal(stats(ep).tx_fast, 0);
	/* Then chunk 0 first, and chunk 9, sent with the hint (rto_burst 2). */
	c.now = 100 * US + rto;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 17);
	assert_true(c.pkts[15].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[15].m.offset, 0);
	assert_int_equal(c.pkts[16].m.offset, 9);
	st = stats(ep);
	assert_int_equal(st.tx_rto, 2);
	assert_int_equal(st.tx_fast, 0);
	assert_int_equal(st.hint_resent, 0);
	shr_endpoint_free(ep);
	chan_fini(&c);

	/* Two lanes: slot s - 2, the lane's slot before s (slot 1's is 7, sent after it). */
	p.lanes = 2;
	ep = hint_start(&p, &c, &op);
	assert_int_equal(echo_hint(ep, &c.pkts[1], 0), 0);
	assert_int_equal(echo_hint(ep, &c.pkts[2], 0), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 11);	/* chunk 0 again, chunks 9 and 10 */
	assert_int_equal(c.pkts[8].m.offset, 0);
	assert_true(c.pkts[8].m.flags & SHR_FLAG_RETX);
	assert_int_equal(stats(ep).hint_resent, 1);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* Chunks outstanding that were neither answered nor are resends (each chunk counted once). */
static size_t
outstanding_new(const struct chan *c, const uint8_t *answered)
{
	size_t i, n = 0;

	for (i = 0; i < c->n; i++)
		if (!(c->pkts[i].m.flags & SHR_FLAG_RETX))
			n += !answered[c->pkts[i].m.offset];
	return n;
}

/*
 * Then everything answered as it goes, each chunk on its slot (k mod slots), resends left
 * unanswered (their first copies are).
 */
static void
answer_rest(struct shr_endpoint *ep, struct chan *c, uint8_t *answered, uint32_t slots)
{
	size_t i, n, lap;

	for (lap = 0; !shr_endpoint_idle(ep); lap++) {
		assert_true(lap < 64);
		n = c->n;
		for (i = 0; i < n; i++) {
			assert_int_equal(c->pkts[i].m.slot, c->pkts[i].m.offset % slots);
			if (answered[c->pkts[i].m.offset] || (c->pkts[i].m.flags & SHR_FLAG_RETX))
				continue;
			assert_int_equal(echo(ep, &c->pkts[i]), 0);
			answered[c->pkts[i].m.offset] = 1;
		}
		assert_int_equal(shr_endpoint_poll(ep), 0);
	}
}

/*
 * The chunks outstanding beyond the window: 9 slots, 8 chunks in flight (one spare slot).
 * Chunk 1's RESULT holds chunk 0 (the box waits for rank 2) or has it resent (it names this
 * rank); the others are answered. Congestion control off, the stream goes on past the late
 * chunk on the spare slot: 9 outstanding, where a window that counted it would stop at 8;
 * once it is answered, 8 again. With congestion control on and its window below the 8 in
 * flight, the spare slot lent shrinks with it (1 x cwnd / 8: none): the outstanding chunks
 * stay within cwnd. Every chunk stays on slot k mod 9, and the sums are exact.
 */
static void
run_excused(bool resend, bool cc)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(9, 1);
	struct shr_endpoint *ep;
	int32_t in[32], out[32];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 32 };
	uint8_t answered[32] = { 0 };
	size_t i, n, outstanding;
	uint32_t cwnd;

	p.world = 3;
	p.inflight = 8;
	p.rto_init_ns = 1000 * MS;	/* no timer resend: time moves by microseconds */
	p.reorder = UINT32_MAX;		/* nor the fast rule */
	p.cc_target_ns = cc ? 100 * MS : SHR_ENDPOINT_CC_OFF;
	p.cwnd_init = 4;
	fill_i32(in, 32, 5);
	ep = ep_new(&p, &c);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	n = c.n;
	assert_int_equal(n, cc ? 4 : 8);
	c.now = 100 * US;
	/* chunk 1's RESULT names this rank (resend) or rank 2 (held) for chunk 0 */
	assert_int_equal(echo_hint(ep, &c.pkts[1], resend ? 0 : 2), 0);
	answered[1] = 1;
	for (i = 2; i < n; i++) {
		assert_int_equal(echo(ep, &c.pkts[i]), 0);
		answered[i] = 1;
	}
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(stats(ep).tx_retx, resend ? 1 : 0);
	assert_int_equal(stats(ep).hint_held, resend ? 0 : 1);
	cwnd = stats(ep).cwnd;
	for (i = 0; i < c.n; i++)
		assert_int_equal(c.pkts[i].m.slot, c.pkts[i].m.offset % 9);
	outstanding = outstanding_new(&c, answered);
	if (cc) {
		assert_true(cwnd < 8);
		assert_int_equal(outstanding, cwnd);
	} else {
		assert_int_equal(cwnd, 8);
		assert_int_equal(outstanding, 9);
		/* chunk 0 answered: chunk 9, deferred on its slot, takes its place; chunk 8
		 * answered: 8 outstanding, the window again, nothing new */
		assert_int_equal(echo(ep, &c.pkts[0]), 0);
		answered[0] = 1;
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.pkts[c.n - 1].m.offset, 9);
		assert_int_equal(c.pkts[c.n - 1].m.slot, 0);
		for (i = 0; c.pkts[i].m.offset != 8; i++)
			;
		assert_int_equal(echo(ep, &c.pkts[i]), 0);
		answered[8] = 1;
		n = c.n;
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, n);
	}
	answer_rest(ep, &c, answered, 9);	/* exact, each chunk on its slot */
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_excused(void **state)
{
	(void)state;
	run_excused(false, false);
	run_excused(true, false);
	run_excused(false, true);
	run_excused(true, true);
}

/*
 * The late chunks' room is capped apart from the spare slots: 16 chunks in flight in 48
 * slots (32 spare) lend at most SHR_ENDPOINT_LATE_DIV's share, 16 / 8 rounded up to 8, to
 * held chunks. Congestion control off. RESULTs of chunks 1, 3, .. 15 hold chunks 0, 2, ..
 * 14 (the box waits for rank 2): 8 held, 24 outstanding. Four more held (16, 18, 20, 22 by
 * the RESULTs of 17 .. 23): 12 held, still 24 outstanding, not 28 (as many more as held, as
 * the spare slots would allow). No chunk is deferred (every chunk on slot k mod 48), and the
 * sums are exact.
 */
static void
test_excused_capped(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(48, 1);
	struct shr_endpoint *ep;
	int32_t in[64], out[64];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 64 };
	uint8_t answered[64] = { 0 };
	size_t i;

	(void)state;
	p.world = 3;
	p.inflight = 16;
	p.rto_init_ns = 1000 * MS;	/* no timer resend: time moves by microseconds */
	p.reorder = UINT32_MAX;		/* nor the fast rule */
	p.cc_target_ns = SHR_ENDPOINT_CC_OFF;
	fill_i32(in, 64, 7);
	ep = ep_new(&p, &c);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 16);
	c.now = 100 * US;
	for (i = 1; i < 16; i += 2) {
		assert_int_equal(echo_hint(ep, &c.pkts[i], 2), 0);
		answered[i] = 1;
	}
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(stats(ep).hint_held, 8);
	assert_int_equal(outstanding_new(&c, answered), 24);
	assert_int_equal(c.n, 32);	/* chunks 16 .. 31 */
	for (i = 17; i < 24; i += 2) {
		assert_int_equal(c.pkts[i].m.offset, i);
		assert_int_equal(echo_hint(ep, &c.pkts[i], 2), 0);
		answered[i] = 1;
	}
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(stats(ep).hint_held, 12);
	assert_int_equal(outstanding_new(&c, answered), 24);
	assert_int_equal(stats(ep).tx_retx, 0);
	answer_rest(ep, &c, answered, 48);	/* exact, each chunk on its slot */
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loss_data),
		cmocka_unit_test(test_loss_result),
		cmocka_unit_test(test_rtt_backoff_karn),
		cmocka_unit_test(test_fast_resend),
		cmocka_unit_test(test_recovery),
		cmocka_unit_test(test_hint),
		cmocka_unit_test(test_excused),
		cmocka_unit_test(test_excused_capped),
	};

	return cmocka_run_group_tests_name("endpoint_loss", tests, NULL, NULL);
}
