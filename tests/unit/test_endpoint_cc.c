/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The endpoint's congestion control (shr_endpoint_cc.c), on a fake clock over a simulated
 * bottleneck (struct link): the congestion window follows the queueing delay (not the time a
 * result waits in the host, when the driver says when it arrived) and halves on a loss, goes
 * competitive (losses, not delay) when another flow keeps a queue standing there and back
 * when it leaves (not for another job's queue that drains), and the RTO learns a round trip
 * that jumps far above rto_init. (The RTO and its samples, answers fed one by one:
 * test_endpoint_rto.c.)
 */

#include "endpoint_test.h"
#include "shr_endpoint_private.h"	/* ep_cc_sample(): samples at chosen times */

/* A fake path: one bottleneck (ser_ns per chunk, FIFO) and a fixed round trip behind it. */
struct link {
	uint64_t ser_ns;	/* serialisation of one chunk at the bottleneck */
	uint64_t base_ns;	/* round trip without queueing */
	uint64_t foreign_ns;	/* queue another flow keeps standing there, whatever we send */
	size_t lo;		/* packets below this one are answered (or lost) */
	uint64_t free_at;	/* when the bottleneck is next free */
	size_t seen;		/* packets of the channel scheduled so far */
	size_t drop;		/* index of the first packet to lose (SIZE_MAX: none)... */
	size_t drop_n;		/* ...and how many in a row */
	uint64_t *arrive;	/* per packet: when its result comes back (UINT64_MAX: none) */
	size_t cap;
	uint64_t max_q;		/* largest queueing delay seen since the last reset */
	uint64_t host_ns;	/* a result is read this long after it arrived... */
	bool stamp;		/* ...and the endpoint is told when it arrived... */
	uint64_t ahead_ns;	/* ...by a stamp this much later (another clock's) */
};

/* When packet i's result is read (UINT64_MAX: never, or already). */
static uint64_t
link_due(const struct link *l, size_t i)
{
	return l->arrive[i] == UINT64_MAX ? UINT64_MAX : l->arrive[i] + l->host_ns;
}

static void
link_schedule(struct link *l, const struct chan *c)
{
	for (; l->seen < c->n; l->seen++) {
		uint64_t start = l->free_at > c->now ? l->free_at : c->now;

		if (l->seen == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 1024;
			l->arrive = realloc(l->arrive, l->cap * sizeof(*l->arrive));
			assert_non_null(l->arrive);
		}
		l->free_at = start + l->ser_ns;
		if (start - c->now > l->max_q)
			l->max_q = start - c->now;
		l->arrive[l->seen] = l->seen >= l->drop && l->seen - l->drop < l->drop_n ?
				     UINT64_MAX :
				     l->free_at + l->base_ns + l->foreign_ns;
	}
}

/* Run the endpoint over the link until t_end (or until it is idle). */
static void
link_run(struct shr_endpoint *ep, struct chan *c, struct link *l, uint64_t t_end)
{
	unsigned int spins = 0;

	while (c->now < t_end && !shr_endpoint_idle(ep)) {
		uint64_t next = t_end, dl;
		size_t i, sent = c->n;

		assert_int_equal(shr_endpoint_poll(ep), 0);
		/* Work due now must be done by the poll: no spinning at one instant. */
		spins = c->n == sent ? spins + 1 : 0;
		assert_true(spins < 1000);
		link_schedule(l, c);
		while (l->lo < l->seen && l->arrive[l->lo] == UINT64_MAX)
			l->lo++;
		for (i = l->lo; i < l->seen; i++)
			if (link_due(l, i) < next)
				next = link_due(l, i);
		dl = shr_endpoint_next_deadline(ep);
		if (dl < next)
			next = dl;
		if (next > c->now) {
			c->now = next;
			spins = 0;
		}
		for (i = l->lo; i < l->seen; i++) {
			if (link_due(l, i) <= c->now) {
				uint64_t at = l->arrive[i];

				l->arrive[i] = UINT64_MAX;
				(void)echo_at(ep, &c->pkts[i],
					      l->stamp ? at + l->ahead_ns : 0);
			}
		}
	}
}

/* Outstanding chunks now (sent, result not in). */
static uint32_t
outstanding(const struct link *l)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < l->seen; i++)
		n += l->arrive[i] != UINT64_MAX;
	return n;
}

/*
 * One allreduce of n elements (one per chunk, window 128, delay target 500 us) over a link of
 * 20 us per chunk and 200 us of round trip, submitted; ccrun_end() runs it to the end and
 * checks it exact.
 */
struct ccrun {
	struct chan c;
	struct link l;
	struct shr_endpoint *ep;
	int32_t *in;
	int32_t *out;
	size_t n;
};

static void
ccrun_start(struct ccrun *b, size_t n, uint64_t rto_max_ns, int seed)
{
	struct shr_endpoint_params p = params_default(128, 1);
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .count = n };

	memset(b, 0, sizeof(*b));
	b->l.ser_ns = 20 * US;
	b->l.base_ns = 200 * US;
	b->l.drop = SIZE_MAX;
	b->l.drop_n = 1;
	b->n = n;
	b->in = malloc(n * sizeof(int32_t));
	b->out = calloc(n, sizeof(int32_t));
	assert_non_null(b->in);
	assert_non_null(b->out);
	p.rto_init_ns = 5 * MS;
	p.rto_max_ns = rto_max_ns;
	p.cc_target_ns = 500 * US;
	b->ep = ep_new(&p, &b->c);
	fill_i32(b->in, n, seed);
	op.in = b->in;
	op.out = b->out;
	assert_int_equal(shr_endpoint_submit(b->ep, &op), 0);
}

static void
ccrun_end(struct ccrun *b)
{
	link_run(b->ep, &b->c, &b->l, UINT64_MAX);
	assert_true(shr_endpoint_idle(b->ep));
	assert_int_equal(outstanding(&b->l), 0);
	assert_memory_equal(b->in, b->out, b->n * sizeof(int32_t));
	free(b->l.arrive);
	free(b->in);
	free(b->out);
	shr_endpoint_free(b->ep);
	chan_fini(&b->c);
}

/*
 * (c) The window over a simulated bottleneck (200 us round trip, 500 us target): it starts
 * at cwnd_init (not the whole window), grows; when the bottleneck slows down five times the
 * queueing delay grows and the window shrinks until the delay is back near the target; when
 * it speeds up again the window grows back. A lost chunk halves it (once).
 */
static void
test_cwnd_follows_delay(void **state)
{
	struct ccrun b;
	struct link *l = &b.l;
	struct shr_endpoint *ep;
	struct shr_endpoint_stats st;
	uint32_t fast_cwnd, slow_cwnd, before;
	uint64_t decr;

	(void)state;
	ccrun_start(&b, 60000, 100 * MS, 6);
	ep = b.ep;

	/* No burst of the whole window at the start: cwnd_init (16) chunks. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(b.c.n, 16);
	assert_int_equal(stats(ep).cwnd, 16);
	assert_int_equal(stats(ep).cc_slow_start, 1);

	/* Fast bottleneck: at the target, ~(200 + 20 + 500) / 20 = 36 chunks outstanding. */
	link_run(ep, &b.c, l, 40 * MS);
	st = stats(ep);
	fast_cwnd = st.cwnd;
	assert_true(fast_cwnd >= 24 && fast_cwnd <= 64);
	assert_int_equal(st.cc_slow_start, 0);
	assert_int_equal(st.tx_retx, 0);
	l->max_q = 0;
	link_run(ep, &b.c, l, 60 * MS);
	assert_true(l->max_q <= 3 * 500 * US);	/* the queue stays near the target */

	/* Five times slower: the delay grows past the target and the window shrinks. */
	decr = stats(ep).cc_decr;
	l->ser_ns = 100 * US;
	link_run(ep, &b.c, l, 160 * MS);
	st = stats(ep);
	slow_cwnd = st.cwnd;
	assert_true(st.cc_decr > decr);
	assert_true(slow_cwnd < fast_cwnd / 2);
	l->max_q = 0;
	link_run(ep, &b.c, l, 200 * MS);
	assert_true(l->max_q <= 3 * 500 * US);
	assert_int_equal(stats(ep).tx_retx, 0);
	assert_int_equal(stats(ep).cc_comp, 0);	/* its own queue: it drains */

	/* Fast again: the window grows back. */
	l->ser_ns = 20 * US;
	link_run(ep, &b.c, l, 300 * MS);
	st = stats(ep);
	assert_true(st.cwnd >= 2 * slow_cwnd && st.cwnd >= 20);
	assert_int_equal(st.cc_decr_loss, 0);

	/* One lost chunk: fast resent; alone in its round trip, random loss: no cut. */
	before = st.cwnd;
	l->drop = b.c.n + 2;
	link_run(ep, &b.c, l, 310 * MS);
	st = stats(ep);
	assert_int_equal(st.tx_fast, 1);
	assert_int_equal(st.timeouts, 0);
	assert_int_equal(st.cc_decr_loss, 0);
	assert_int_equal(st.cc_loss_rare, 1);
	assert_true(st.cwnd > before * 3 / 4);	/* a halving would be before / 2 */

	/* A run of lost chunks, as from a queue that overflowed: the window halves once. */
	before = st.cwnd;
	decr = st.cc_decr;
	l->drop = b.c.n + 2;
	l->drop_n = 4;
	link_run(ep, &b.c, l, 320 * MS);
	st = stats(ep);
	assert_int_equal(st.tx_fast, 1 + 4);
	assert_int_equal(st.timeouts, 0);
	assert_int_equal(st.cc_decr_loss, 1);
	assert_int_equal(st.cc_loss_noq, 0);
	assert_true(st.cc_decr > decr);
	assert_true(st.cwnd < before);

	/* The rest goes through, exactly. */
	ccrun_end(&b);
}

/*
 * Spare slots: with 20 chunks in flight in 40 slots, a path that would take far more
 * (2 us per chunk, 200 us of round trip, a 500 us target: some 350) gets 20, never more
 * outstanding, and the window stops there.
 */
static void
test_cwnd_within_inflight(void **state)
{
	struct shr_endpoint_params p = params_default(40, 1);
	struct chan c = { 0 };
	struct link l = { .ser_ns = 2 * US, .base_ns = 200 * US, .drop = SIZE_MAX, .drop_n = 1 };
	struct shr_endpoint *ep;
	int32_t in[4000], out[4000];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4000 };
	uint64_t t;

	(void)state;
	p.inflight = 20;
	p.cc_target_ns = 500 * US;
	ep = ep_new(&p, &c);
	fill_i32(in, 4000, 8);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	for (t = 100 * US; !shr_endpoint_idle(ep); t += 100 * US) {
		assert_true(t < 1000 * MS);
		link_run(ep, &c, &l, t);
		assert_true(outstanding(&l) <= 20);
		assert_true(stats(ep).cwnd <= 20);
		if (t == 5 * MS)
			assert_int_equal(stats(ep).cwnd, 20);	/* grown to the cap */
	}
	assert_memory_equal(in, out, sizeof(in));
	free(l.arrive);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * (c2) The same bottleneck (20 us per chunk, 200 us, target 500 us); 100 ms in, the host
 * starts to read every result 1.5 ms after it arrived (a rank whose host is busy: its
 * queue, not the path's). Told when each result arrived (shr_endpoint_input_at(), the
 * driver's receive timestamp), the window sees no queue on the path and keeps growing (the
 * 1.5 ms more of round trip need more chunks outstanding); not told, it takes the host's
 * 1.5 ms for a queue over the target and shrinks to its floor. The RTO counts the host's
 * time either way.
 */
struct host_run {
	uint32_t cwnd0;		/* before the host's delay */
	uint32_t cwnd;		/* 20 ms into it */
	uint64_t max_q;		/* the path's largest queue in those 20 ms */
	struct shr_endpoint_stats st;
};

static void
run_host_delay(bool stamp, struct host_run *r)
{
	struct ccrun b;

	ccrun_start(&b, 40000, 100 * MS, 8);
	b.l.stamp = stamp;
	link_run(b.ep, &b.c, &b.l, 100 * MS);
	r->cwnd0 = stats(b.ep).cwnd;
	b.l.host_ns = 1500 * US;
	b.l.max_q = 0;
	link_run(b.ep, &b.c, &b.l, 120 * MS);
	r->st = stats(b.ep);
	r->cwnd = r->st.cwnd;
	r->max_q = b.l.max_q;
	ccrun_end(&b);
}

static void
test_cwnd_host_delay(void **state)
{
	struct host_run r;

	(void)state;
	run_host_delay(true, &r);
	assert_true(r.cwnd0 >= 24);
	assert_true(r.cwnd > r.cwnd0);
	assert_true(r.st.qdelay_ns < 500 * US);
	assert_true(r.max_q <= 3 * 500 * US);
	assert_true(r.st.rto_ns > 1700 * US);
	/* the host's delay, smoothed: 1.5 ms for 20 ms */
	assert_true(r.st.host_delay_ns > 1400 * US && r.st.host_delay_ns <= 1500 * US);

	run_host_delay(false, &r);
	assert_int_equal(r.st.host_delay_ns, 0);
	assert_true(r.cwnd0 >= 24);
	assert_true(r.cwnd <= 8);
	assert_true(r.st.qdelay_ns >= 1500 * US);
	assert_true(r.st.rto_ns > 1700 * US);
}

/*
 * (c3) Receive stamps later than the endpoint's clock (a stamp of another clock, or rounded
 * up): the time an answer waited in the host is not known, so the stamps are ignored. The
 * window grows over the path as it does unstamped, the host's delay stays 0 (not the
 * wrapped difference), and the allreduce completes exact.
 */
static void
test_cwnd_host_stamp_future(void **state)
{
	struct ccrun b;
	struct shr_endpoint_stats st;

	(void)state;
	ccrun_start(&b, 40000, 100 * MS, 8);
	b.l.stamp = true;
	b.l.ahead_ns = 1 * US;
	link_run(b.ep, &b.c, &b.l, 100 * MS);
	st = stats(b.ep);
	assert_int_equal(st.host_delay_ns, 0);
	assert_true(st.cwnd >= 24);
	assert_true(st.qdelay_ns < 500 * US);
	ccrun_end(&b);
}

/*
 * (d) Another flow keeps a queue of 5 ms standing at the bottleneck whatever this window does
 * (a loss-based flow such as TCP filling the buffer): the window shrinks first, the queue does
 * not drain, so it goes competitive and grows back to the whole window instead of staying at
 * its floor; a loss then cuts it by 30%, not half; its periodic try of the delay target finds
 * the queue still there and comes back to the window it had. When the other flow leaves, the
 * next try drains the queue this window built, and it stays on the delay target.
 */
static void
test_cwnd_competitive(void **state)
{
	struct ccrun b;
	struct link *l = &b.l;
	struct shr_endpoint *ep;
	struct shr_endpoint_stats st;
	uint64_t timeouts, t, off;
	uint32_t before;

	(void)state;
	ccrun_start(&b, 200000, 200 * MS, 8);
	ep = b.ep;
	link_run(ep, &b.c, l, 40 * MS);
	st = stats(ep);
	assert_int_equal(st.cc_comp, 0);
	assert_int_equal(st.cc_competitive, 0);

	/* The other flow arrives: after shrinking to no avail, competitive, whole window. */
	l->foreign_ns = 5 * MS;
	link_run(ep, &b.c, l, 300 * MS);
	st = stats(ep);
	assert_int_equal(st.cc_comp, 1);
	assert_int_equal(st.cc_competitive, 1);
	assert_true(st.cwnd >= 120);
	timeouts = st.timeouts;	/* the 5 ms step itself, before the RTO knew it */

	/* A loss: by 30% (CUBIC's), once. */
	before = st.cwnd;
	l->drop = b.c.n + 2;
	link_run(ep, &b.c, l, 320 * MS);
	st = stats(ep);
	assert_int_equal(st.cc_decr_loss, 1);
	assert_true(st.cwnd < before && st.cwnd >= before * 6 / 10);

	/*
	 * Tries of the delay target find the queue still there: back, to the window it had (not
	 * from the floor the try shrank it to), within EP_CC_COMP_RTTS round trips and a few. Until
	 * 1.6 s, and on to the end of a try still under way then.
	 */
	for (t = 320 * MS, off = 0; t < 1600 * MS || (!st.cc_competitive && t < 2000 * MS);
	     t += 1 * MS) {
		bool was = stats(ep).cc_competitive;

		link_run(ep, &b.c, l, t);
		st = stats(ep);
		if (!st.cc_competitive)
			off += 1 * MS;
		if (!was && st.cc_competitive)
			assert_true(st.cwnd >= 80);
	}
	assert_true(st.cc_comp >= 3);
	assert_true(off <= (st.cc_comp - 1) * 12 * st.srtt_ns);
	assert_int_equal(st.cc_competitive, 1);
	assert_true(st.cwnd >= 100);
	assert_int_equal(st.timeouts, timeouts);

	/* The other flow leaves: the next try drains this window's own queue and stays. */
	l->foreign_ns = 0;
	link_run(ep, &b.c, l, 2400 * MS);
	st = stats(ep);
	assert_int_equal(st.cc_competitive, 0);
	l->max_q = 0;
	link_run(ep, &b.c, l, 2440 * MS);
	assert_true(l->max_q <= 3 * 500 * US);
	assert_int_equal(stats(ep).cc_competitive, 0);

	ccrun_end(&b);
}

/*
 * (f2) The queueing delay never wraps: a 50 us sample is still the standing minimum (its
 * period has not ended) when the base period that held it is forgotten after an idle gap;
 * the standing round trip is then below the base (path - base wrapped to 2^64 - 50 us, a
 * spurious decrease and a garbage qdelay_ns). Samples fed to ep_cc_sample() at set times, the
 * round trip set to 100 us.
 */
static void
test_cc_qdelay_no_wrap(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(64, 1);
	struct shr_endpoint *ep;
	uint64_t b = 10 * S, decr;

	(void)state;
	p.cc_target_ns = 50 * US;
	ep = ep_new(&p, &c);
	ep->srtt_ns = 100 * US;
	ep_cc_sample(ep, 100 * US, b);			/* opens a base period at b */
	ep_cc_sample(ep, 100 * US, b + 5 * S - 150 * US);
	ep_cc_sample(ep, 50 * US, b + 5 * S - 100 * US);
	ep_cc_sample(ep, 100 * US, b + 5 * S + 10 * US);	/* the next base period */
	decr = stats(ep).cc_decr;
	ep_cc_sample(ep, 100 * US, b + 10 * S + 200 * MS);	/* the 50 us one forgotten */
	assert_true(stats(ep).qdelay_ns < S);
	assert_int_equal(stats(ep).cc_decr, decr);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * (f) A job starts while another flow keeps 20 ms of queue standing at the bottleneck (200
 * us of round trip without it), far above rto_init (5 ms): every chunk of the first window
 * times out before its answer, and the answers of the resent chunks come too soon after the
 * resends to show the round trip (Karn: no sample from a resent chunk), while every answer
 * ends the backoff. Before ep_dup_answered() no sample was ever taken: SRTT stayed 0, the
 * RTO at rto_init, and the timeouts went on for the whole run (58 in the first 400 ms, 118 by
 * 800 ms). The box answers each copy: once every copy of a resent chunk is answered, none was
 * lost, and the first answer's time since the first transmission is a sample. The RTO learns
 * the 20 ms within the first round trips, and nothing is resent after.
 */
static void
test_rto_learns_jump(void **state)
{
	struct ccrun b;
	struct link *l = &b.l;
	struct shr_endpoint *ep;
	struct shr_endpoint_stats st;
	uint64_t retx;

	(void)state;
	ccrun_start(&b, 400000, 200 * MS, 9);
	ep = b.ep;
	l->foreign_ns = 20 * MS;
	link_run(ep, &b.c, l, 100 * MS);
	st = stats(ep);
	assert_true(st.rtx_unneeded > 0);
	assert_true(st.srtt_ns >= 20 * MS);
	assert_true(st.rto_ns >= 20 * MS);
	assert_true(st.timeouts <= 5);
	retx = st.tx_retx;
	link_run(ep, &b.c, l, 800 * MS);
	st = stats(ep);
	assert_true(st.rto_ns >= 20 * MS);
	assert_int_equal(st.tx_retx, retx);
	ccrun_end(&b);
}

/*
 * (h) A queue that drains is not a competitor's: another job's slow start leaves 30 ms of
 * queue, which drains in 150 ms, the round trip falling with it: this window shrinks, and
 * does not go competitive (it did, when 8 of the current round trips were the clock, not 8
 * of the longest since the queue rose: the round trip fell as the queue drained).
 */
static void
test_cwnd_not_competitive(void **state)
{
	struct ccrun b;
	struct link *l = &b.l;
	struct shr_endpoint *ep;
	uint32_t before, least;
	uint64_t t;

	(void)state;
	ccrun_start(&b, 100000, 200 * MS, 9);
	ep = b.ep;
	link_run(ep, &b.c, l, 40 * MS);
	before = least = stats(ep).cwnd;
	for (t = 40 * MS; t < 190 * MS; t += 1 * MS) {
		l->foreign_ns = 30 * MS * (190 * MS - t) / (150 * MS);
		link_run(ep, &b.c, l, t + 1 * MS);
		if (stats(ep).cwnd < least)
			least = stats(ep).cwnd;
	}
	l->foreign_ns = 0;
	link_run(ep, &b.c, l, 300 * MS);
	assert_int_equal(stats(ep).cc_comp, 0);
	assert_true(least < before / 2);	/* it shrank for the queue */
	ccrun_end(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cwnd_follows_delay),
		cmocka_unit_test(test_cwnd_within_inflight),
		cmocka_unit_test(test_cwnd_host_delay),
		cmocka_unit_test(test_cwnd_host_stamp_future),
		cmocka_unit_test(test_cwnd_competitive),
		cmocka_unit_test(test_cwnd_not_competitive),
		cmocka_unit_test(test_cc_qdelay_no_wrap),
		cmocka_unit_test(test_rto_learns_jump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
