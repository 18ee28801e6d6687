/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The endpoint's RTO and round trip samples (shr_endpoint_cc.c), on a fake clock, answers fed
 * one by one: the RTO never falls below the round trip (learnt even when the first one is
 * above rto_init), the box's wait for other ranks is not the path's, which answers to a resent
 * chunk make a sample, and a chunk passed by later answers is resent before the timer. (The
 * congestion window over a simulated bottleneck: test_endpoint_cc.c.)
 */

#include "endpoint_test.h"

/*
 * (a) A path whose round trip jumps from 1 ms to 20 ms (a queue builds), one chunk at a time:
 * the first chunks time out (RTO ~1.5 ms), their answers (no sample: Karn) still show a
 * round trip of at least the time since the resend, which the RTO learns; from then on the
 * RTO stays above 20 ms and nothing times out. (Capped at 8 minimum round trips, 8 ms, every
 * chunk timed out; without the lower bound from resent chunks, the RTO never learnt.)
 */
static void
test_rto_not_below_rtt(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(1, 1);
	struct shr_endpoint *ep;
	enum { N = 200 };
	int32_t in[N], out[N];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = N };
	struct shr_endpoint_stats st;
	uint64_t timeouts = 0;
	int i;

	(void)state;
	p.rto_init_ns = 1 * MS;
	p.rto_max_ns = 200 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, N, 4);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	for (i = 0; i < N; i++) {
		uint64_t rtt = i < 20 ? 1 * MS : 20 * MS, t0 = c.now, t;
		size_t first = c.n;

		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + 1);
		/* The timer, if it comes before the answer, fires (and is counted). */
		t = shr_endpoint_next_deadline(ep);
		if (t < t0 + rtt) {
			c.now = t;
			assert_int_equal(shr_endpoint_poll(ep), 0);
		}
		c.now = t0 + rtt;
		assert_int_equal(echo(ep, &c.pkts[first]), 0);
		st = stats(ep);
		if (i == 40)
			timeouts = st.timeouts;	/* learnt by now */
		if (i >= 40)
			assert_true(st.rto_ns >= 20 * MS);
	}
	st = stats(ep);
	assert_int_equal(st.timeouts, timeouts);
	assert_true(st.timeouts < 20);
	assert_true(st.srtt_ns > 19 * MS && st.srtt_ns <= 20 * MS);
	assert_true(st.rto_ns > 29 * MS);	/* SRTT + SRTT / 2 at least */
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* Feed the result of DATA d with the feedback word fb. */
static int
answer_fb(struct shr_endpoint *ep, const struct pkt *d, uint32_t fb)
{
	struct shr_proto_msg m = result_of(d);

	m.feedback = fb;
	return feed(ep, &m, d->buf + SHR_PROTO_HDR_LEN, d->len - SHR_PROTO_HDR_LEN);
}

/*
 * (b') Rank 1 of 2, no minimum round trip known yet: the first answer took 10 ms, and the
 * round waited 12 ms at the box for rank 0 (it started before this rank's copy came in):
 * none of the 10 ms need be the path's, so no sample (taken as the path, it would have set
 * the minimum at 10 ms, and every later sample is kept at or above the minimum). The next
 * one, 10 ms of which 9 ms waited, gives the path's 1 ms.
 */
static void
test_box_wait_blind(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 1);
	struct shr_endpoint *ep;
	int32_t in[2], out[2];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 2 };
	struct shr_endpoint_stats st;

	(void)state;
	p.world = 2;
	p.rank = 1;
	p.rto_init_ns = 20 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 2, 5);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	c.now = 10 * MS;
	assert_int_equal(answer_fb(ep, &c.pkts[0], shr_proto_fb_make(0, 12 * MS)), 0);
	st = stats(ep);
	assert_int_equal(st.min_rtt_ns, 0);
	assert_int_equal(st.srtt_ns, 0);
	assert_int_equal(st.rto_ns, 20 * MS);	/* still the initial one */
	assert_int_equal(answer_fb(ep, &c.pkts[1], shr_proto_fb_make(0, 9 * MS)), 0);
	st = stats(ep);
	assert_int_equal(st.min_rtt_ns, 1 * MS);
	assert_int_equal(st.srtt_ns, 1 * MS);
	assert_true(shr_endpoint_idle(ep));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * (b) Rank 1 of 2: every round waits 9 ms at the box for rank 0 (the RESULT's feedback), the
 * whole round trip is 10 ms: the path's round trip is 1 ms (SRTT, minimum), not 10, and the
 * queueing delay is 0. When rank 1 is the one that completed the round, nothing is taken
 * out. The RTO still covers the wait (its smoothed term), so the slow peer does not make
 * this rank time out either.
 */
static void
test_box_wait_subtracted(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(1, 1);
	struct shr_endpoint *ep;
	enum { N = 64 };
	int32_t in[N], out[N];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = N };
	struct shr_endpoint_stats st;
	int i;

	(void)state;
	p.world = 2;
	p.rank = 1;
	p.rto_init_ns = 20 * MS;
	p.rto_max_ns = 200 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, N, 5);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	for (i = 0; i < 40; i++) {
		size_t first = c.n;

		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + 1);
		/* Past the first rounds, the timer does not fire before the answer. */
		if (i >= 8)
			assert_true(shr_endpoint_next_deadline(ep) > c.now + 10 * MS);
		c.now += 10 * MS;
		assert_int_equal(answer_fb(ep, &c.pkts[first], shr_proto_fb_make(0, 9 * MS)), 0);
	}
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 1 * MS);
	assert_int_equal(st.min_rtt_ns, 1 * MS);
	assert_int_equal(st.qdelay_ns, 0);
	assert_true(st.box_wait_ns > 8 * MS && st.box_wait_ns <= 9 * MS);
	assert_true(st.rto_ns > 10 * MS);	/* path RTO + the wait */
	/* This rank completed the round (it is the slow one): all of it is its path's. */
	for (i = 0; i < 24; i++) {
		size_t first = c.n;

		assert_int_equal(shr_endpoint_poll(ep), 0);
		c.now += 10 * MS;
		assert_int_equal(answer_fb(ep, &c.pkts[first], shr_proto_fb_make(1, 9 * MS)), 0);
	}
	st = stats(ep);
	assert_true(st.srtt_ns > 9 * MS);
	assert_true(st.qdelay_ns == 9 * MS);
	assert_int_equal(st.min_rtt_ns, 1 * MS);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * (g) Which answers to a resent chunk make a sample (ep_dup_answered()), one chunk at a
 * time, 200 us of round trip learnt first. A first copy lost, its resend answered twice at
 * once (the network duplicated it): as many answers as copies, but not as far apart as the
 * copies went, so no sample (it would be the time since the lost copy). Then a first copy
 * answered 3 ms late, after its timeout's resend, which is answered as much later as it was
 * sent: a sample of 3 ms.
 */
static void
test_rto_dup_answers(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(1, 1);
	struct shr_endpoint *ep;
	int32_t in[3], out[3];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 3 };
	struct shr_endpoint_stats st;
	uint64_t srtt, t1, t2, tr;

	(void)state;
	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 3, 5);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 1);
	c.now = 200 * US;
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	srtt = stats(ep).srtt_ns;
	assert_int_equal(srtt, 200 * US);

	/* chunk 1: lost; its resend answered, and the network's copy of that answer */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	t1 = c.now;
	c.now = shr_endpoint_next_deadline(ep);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	assert_true(c.pkts[2].m.flags & SHR_FLAG_RETX);
	assert_true(c.now - t1 >= 400 * US);
	c.now += 150 * US;
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_int_equal(echo(ep, &c.pkts[2]), -EALREADY);
	st = stats(ep);
	assert_int_equal(st.rtx_unneeded, 0);
	assert_int_equal(st.srtt_ns, srtt);

	/*
	 * chunk 2: its first copy answered 3 ms late, after its resend (a sample of the time
	 * since the resend, Karn's exception, is taken then); then the resend's answer, 3 ms
	 * after it: every copy answered, a sample of 3 ms from the first transmission
	 */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 4);
	t2 = c.now;
	c.now = shr_endpoint_next_deadline(ep);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 5);
	tr = c.now;
	c.now = t2 + 3 * MS;
	assert_int_equal(echo(ep, &c.pkts[3]), 0);
	st = stats(ep);
	assert_int_equal(st.rtx_unneeded, 0);
	srtt = st.srtt_ns;
	c.now = tr + 3 * MS;
	assert_int_equal(echo(ep, &c.pkts[4]), -EALREADY);
	st = stats(ep);
	assert_int_equal(st.rtx_unneeded, 1);
	assert_int_equal(st.srtt_ns, (7 * srtt + 3 * MS) / 8);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * (e) The congestion control on: chunks 1-3 of 8 answered, chunk 0 not: chunk 0 is resent
 * at the fast time, before its timer. Its answer comes `after` later (a round trip, or
 * sooner), completed by rank `last` (the RESULT's feedback): this rank's own resend, or a
 * result the box sent again (SHR_PROTO_RANK_ALL), says this rank lost something: a loss
 * for the window, which being alone in its round trip is taken as random, not a queue that
 * overflowed: no cut (a run of losses with a standing queue halves it:
 * test_cwnd_follows_delay). Another rank completing it says the round waited for that rank
 * (its own loss, which it recovered): not this rank's loss, not even looked at by the window.
 */
static struct shr_endpoint_stats
run_fast(uint16_t last, uint64_t after)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(8, 1);
	struct shr_endpoint *ep;
	int32_t in[8], out[8];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 8 };
	struct shr_endpoint_stats st;
	uint64_t timer, fast;
	size_t n;

	p.world = 2;
	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 8, 7);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 8);
	c.now = 100 * US;
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	timer = shr_endpoint_next_deadline(ep);
	assert_int_equal(timer, 250 * US);
	assert_int_equal(echo(ep, &c.pkts[3]), 0);
	fast = shr_endpoint_next_deadline(ep);
	assert_true(fast < timer);
	n = c.n;
	c.now = fast;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_true(c.n > n);
	assert_true(c.pkts[n].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[n].m.slot, 0);
	st = stats(ep);
	assert_int_equal(st.tx_fast, 1);
	assert_int_equal(st.timeouts, 0);
	assert_int_equal(st.cc_loss_rare + st.cc_loss_noq + st.cc_decr_loss, 0); /* not yet */
	c.now += after;
	assert_int_equal(answer_fb(ep, &c.pkts[n], shr_proto_fb_make(last, 0)), 0);
	st = stats(ep);
	assert_int_equal(st.cc_decr_loss, 0);
	assert_int_equal(st.cwnd, 8);
	shr_endpoint_free(ep);
	chan_fini(&c);
	return st;
}

static void
test_fast_before_timer(void **state)
{
	struct shr_endpoint_stats st;

	(void)state;
	/* this rank's loss (one in its round trip: random, not congestion) */
	st = run_fast(0, 100 * US);
	assert_int_equal(st.cc_loss_rare, 1);
	assert_int_equal(st.fast_peer, 0);
	assert_int_equal(st.spurious, 0);	/* answered a round trip after the resend */
	/* this rank's loss: the box sent the result again */
	st = run_fast(SHR_PROTO_RANK_ALL, 100 * US);
	assert_int_equal(st.cc_loss_rare, 1);
	assert_int_equal(st.fast_peer, 0);
	assert_int_equal(st.spurious, 0);
	/* rank 1's: the round waited for it */
	st = run_fast(1, 100 * US);
	assert_int_equal(st.cc_loss_rare, 0);
	assert_int_equal(st.fast_peer, 1);
	assert_int_equal(st.spurious, 0);
	/*
	 * Answered 10 us after the resend (under half the minimum round trip): the first copy's
	 * answer. Completed by this rank's first copy: it was overtaken on the way, reordering
	 * (R grows); by rank 1: the round waited at the box for rank 1, not reordering (R
	 * stays, or every peer's late round would stretch this rank's loss detection).
	 */
	st = run_fast(0, 10 * US);
	assert_int_equal(st.spurious, 1);
	assert_int_equal(st.fast_peer, 0);
	assert_int_equal(st.reorder, 4);
	st = run_fast(1, 10 * US);
	assert_int_equal(st.spurious, 0);
	assert_int_equal(st.fast_peer, 1);
	assert_int_equal(st.reorder, 3);
	assert_int_equal(st.cc_loss_rare, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rto_not_below_rtt),
		cmocka_unit_test(test_box_wait_blind),
		cmocka_unit_test(test_box_wait_subtracted),
		cmocka_unit_test(test_fast_before_timer),
		cmocka_unit_test(test_rto_dup_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
