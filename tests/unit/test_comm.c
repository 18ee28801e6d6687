/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * lib/comm through the fake driver of comm_test.h. Checked: sums of several outstanding
 * collectives under short bursts, loss and reordering; a LEAVE_ACK that never comes is
 * reported by shr_comm_destroy(); no queued send of a collective reaches the device after the
 * collective was reported done (issue 18 item 5): the buffer is overwritten (the device would
 * see the new bytes) or freed (AddressSanitizer reports the read, in the sanitizer build)
 * right after shr_comm_wait(); a failed create closes the device; only the box's datagrams
 * (from its address) and only the ABORT that answers this rank's own JOIN (its nonce) are
 * taken; a tree's upstream ABORT names the box above and the member it blamed, each as such.
 */

#include <shr_mac.h>

#include "comm_test.h"

/* An allreduce of n elements whose first is at stream offset base. */
static void
check_sum(const struct fake *f, const int32_t *in, const int32_t *out, uint64_t n,
	  unsigned int op, uint64_t base)
{
	uint64_t i;
	uint16_t r;

	for (i = 0; i < n; i++) {
		uint32_t want = (uint32_t)in[i];

		for (r = 1; r < f->world; r++)
			want += (uint32_t)peer_val(r, in[i], base + i);
		if ((uint32_t)out[i] != want)
			fail_msg("op %u element %llu: %d, want %d", op, (unsigned long long)i,
				 out[i], (int32_t)want);
	}
}

/* ---- tests ---- */

static void
test_allreduce(void **state)
{
	struct fake *f = fake_new(3, 1);
	struct shr_comm *c = comm_new(f);
	int32_t in[1000], out[1000];

	(void)state;
	fill(in, 1000, 0);
	assert_int_equal(shr_comm_allreduce(c, in, out, 1000, SHR_OP_SUM), 0);
	check_sum(f, in, out, 1000, 0, 0);
	assert_int_equal(shr_comm_barrier(c), 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	assert_int_equal(f->leaves, 1);
	fake_free(f);
}

/*
 * Several collectives outstanding at once (more chunks than the window), the device taking
 * a random few datagrams per burst, results lost and delivered out of order: every one
 * completes with its own sum, waited for in any order.
 */
static void
run_outstanding(unsigned int loss, uint64_t seed)
{
	static const uint64_t lens[] = {
		0, 1, F_CHUNK - 1, F_CHUNK, F_CHUNK + 1, 3 * F_WINDOW * F_CHUNK + 5, 700, 2,
		F_WINDOW * F_CHUNK, 129,
	};
	enum { NOPS = sizeof(lens) / sizeof(lens[0]) };
	struct fake *f = fake_new(4, seed);
	struct shr_comm *c = comm_new(f);
	struct shr_comm_stats st;
	int32_t *in[NOPS], *out[NOPS];
	int req[NOPS];
	bool done[NOPS] = { false };
	unsigned int o, left = NOPS;
	uint64_t t0, base;

	f->loss = loss;
	f->shuffle = true;
	for (o = 0; o < NOPS; o++) {
		in[o] = malloc(lens[o] * 4 + 4);
		out[o] = malloc(lens[o] * 4 + 4);
		assert_non_null(in[o]);
		assert_non_null(out[o]);
		fill(in[o], lens[o], o);
		memset(out[o], 0xa5, lens[o] * 4 + 4);
		f->budget = (int)(f_rand(f) % 3);
		req[o] = shr_comm_iallreduce(c, in[o], out[o], lens[o], SHR_OP_SUM);
		assert_true(req[o] >= 0);
	}
	/* Odd requests by test() in a loop, from the last; then the rest by wait(). */
	t0 = f_now();
	while (left > NOPS / 2) {
		for (o = NOPS; o-- > 0;) {
			int rc;

			if (done[o] || o % 2 == 0)
				continue;
			f->budget = (int)(f_rand(f) % 4);
			rc = shr_comm_test(c, req[o]);
			assert_true(rc == 0 || rc == 1);
			if (rc == 1) {
				done[o] = true;
				left--;
			}
		}
		assert_true(f_now() - t0 < F_SPIN_NS);
	}
	f->budget = 2;
	for (o = NOPS; o-- > 0;) {
		if (done[o])
			continue;
		assert_int_equal(shr_comm_wait(c, req[o]), 0);
		done[o] = true;
	}
	for (o = 0, base = 0; o < NOPS; base += lens[o], o++) {
		check_sum(f, in[o], out[o], lens[o], o, base);
		assert_int_equal(((uint8_t *)out[o])[lens[o] * 4], 0xa5);
	}
	shr_comm_stats_get(c, &st);
	assert_true(st.tx_deferred > 0);	/* the bursts were short */
	if (loss != 0)
		assert_true(st.ep.tx_retx > 0);
	f->budget = -1;
	f->loss = 0;
	assert_int_equal(shr_comm_destroy(c), 0);
	for (o = 0; o < NOPS; o++) {
		free(in[o]);
		free(out[o]);
	}
	fake_free(f);
}

static void
test_outstanding(void **state)
{
	(void)state;
	run_outstanding(0, 2);
}

static void
test_outstanding_loss(void **state)
{
	(void)state;
	run_outstanding(20, 3);
}

/* The box never acknowledges the LEAVE: destroy says so. */
static void
test_leave_ack_lost(void **state)
{
	struct fake *f = fake_new(2, 4);
	struct shr_comm *c = comm_new(f);
	uint64_t t0, t1;

	(void)state;
	assert_int_equal(shr_comm_barrier(c), 0);
	f->lose_leave_ack = true;
	t0 = f_now();
	assert_int_equal(shr_comm_destroy(c), -ETIMEDOUT);
	t1 = f_now();
	assert_true(f->leaves >= 2);	/* resent meanwhile */
	/* every 50 ms from the first (its last resend went out before t1), not every loop */
	if (f->leaves > (t1 - t0) / 50000000ull + 1)
		fail_msg("%llu LEAVEs in %llu ms", (unsigned long long)f->leaves,
			 (unsigned long long)((t1 - t0) / 1000000));
	fake_free(f);
}

/*
 * A device that takes one datagram a burst: what it did not take is offered again, first, in
 * the next burst (never what it took), every chunk reaches it, and the sum is exact. (Not "each
 * chunk once": a stall of this process past the RTO may resend one; that it was not sent twice
 * by the queue is the order of the bursts, which no timing changes.)
 */
static void
test_short_bursts_in_order(void **state)
{
	struct fake *f = fake_new(3, 48);
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .rank = 0, .world = 3,
		.dtype = SHR_DTYPE_INT32, .window = F_WINDOW, .chunk_elems = F_CHUNK,
		.timeout_ms = 10000, .dev = &f->drv, .rto_min_us = 100000,
		.cc_target_us = SHR_COMM_CC_OFF,
	};
	enum { N = 3 * F_WINDOW * F_CHUNK + 5 };
	static int32_t in[N], out[N];
	struct shr_comm_stats st;
	struct shr_comm *c;

	(void)state;
	c = shr_comm_create(&p);
	assert_non_null(c);
	fill(in, N, 0);
	f->budget = 1;
	f->fifo_check = true;
	assert_int_equal(shr_comm_allreduce(c, in, out, N, SHR_OP_SUM), 0);
	check_sum(f, in, out, N, 0, 0);
	shr_comm_stats_get(c, &st);
	assert_true(st.tx_deferred > 0);	/* the bursts were short */
	assert_int_equal(f->data_tx - f->resends, (N + F_CHUNK - 1) / F_CHUNK);
	assert_int_equal(f->fifo_broken, 0);
	f->fifo_check = false;
	f->budget = -1;
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * shr_comm_idle_us() tells a caller's event loop how long nothing is due: a chunk sent, its
 * result lost, is resent after the first RTO, which is rto_min_us when that is above the
 * default 1 ms. The time told is in microseconds, no later than that resend (the RTO after the
 * send, at or after t0), and no earlier (the send went out before the call returned: before t1).
 * A non-blocking call has sent its first window when it returns.
 */
static void
test_idle_until_resend(void **state)
{
	struct fake *f = fake_new(2, 47);
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .rank = 0, .world = 2,
		.dtype = SHR_DTYPE_INT32, .window = F_WINDOW, .chunk_elems = F_CHUNK,
		.timeout_ms = 10000, .dev = &f->drv, .rto_min_us = 50000,
		.cc_target_us = SHR_COMM_CC_OFF,
	};
	const uint64_t rto_ns = 50000000ull;
	int32_t in[F_CHUNK], out[F_CHUNK];
	struct shr_comm *c;
	uint64_t t0, t1, us;
	int req;

	(void)state;
	fill(in, F_CHUNK, 1);
	c = shr_comm_create(&p);
	assert_non_null(c);
	f->loss = 100;	/* every result lost: the chunk waits for its RTO */
	t0 = f_now();
	req = shr_comm_iallreduce(c, in, out, F_CHUNK, SHR_OP_SUM);
	assert_true(req >= 0);
	assert_int_equal(f->data_tx, 1);	/* out before test or wait */
	us = shr_comm_idle_us(c, 10000000);
	t1 = f_now();
	if (us > rto_ns / 1000 || t1 + us * 1000 + 1000000 < t0 + rto_ns)
		fail_msg("idle %llu us, %llu us after the call began (RTO %llu us)",
			 (unsigned long long)us, (unsigned long long)((t1 - t0) / 1000),
			 (unsigned long long)(rto_ns / 1000));
	f->loss = 0;
	assert_int_equal(shr_comm_wait(c, req), 0);	/* resent, then answered */
	assert_true(f->resends >= 1);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * Issue 18 item 5. Results are held until a chunk is resent; the device then takes nothing
 * more, so the resend is still queued when the results come in and shr_comm_wait() returns.
 * The application then reuses the buffer (overwrite: the bytes a later send would carry are
 * the new ones) or frees it (AddressSanitizer reports a read of it), and the device is free
 * again: nothing of the ended collective may go out.
 */
static void
run_queue_after_wait(bool do_free)
{
	struct fake *f = fake_new(2, 5);
	struct shr_comm *c = comm_new(f);
	struct shr_comm_stats st;
	int32_t *in = malloc(2 * F_CHUNK * 4), *out = malloc(2 * F_CHUNK * 4);
	int32_t in2[F_CHUNK], out2[F_CHUNK];
	int req;

	assert_non_null(in);
	assert_non_null(out);
	fill(in, 2 * F_CHUNK, 1);
	f->script = F_STALL_RESEND;
	req = shr_comm_iallreduce(c, in, out, 2 * F_CHUNK, SHR_OP_SUM);
	assert_true(req >= 0);
	assert_int_equal(shr_comm_wait(c, req), 0);
	assert_true(f->stalled);	/* the script ran: a resend was refused */
	check_sum(f, in, out, 2 * F_CHUNK, 1, 0);
	f->ended_below = 1;		/* the first collective (tensor 0) is done */
	if (do_free) {
		free(in);
		free(out);
	} else {
		f->poison = 0xee;
		memset(in, 0xee, 2 * F_CHUNK * 4);
	}
	/* The device takes again; progress and a new collective flush the queue. */
	f->stalled = false;
	f->script = F_PLAIN;
	assert_true(shr_comm_progress(c) >= 0);
	fill(in2, F_CHUNK, 2);
	assert_int_equal(shr_comm_allreduce(c, in2, out2, F_CHUNK, SHR_OP_SUM), 0);
	check_sum(f, in2, out2, F_CHUNK, 2, 2 * F_CHUNK);	/* after the first's */
	shr_comm_stats_get(c, &st);
	assert_true(st.tx_ended >= 1);
	assert_int_equal(shr_comm_destroy(c), 0);
	if (!do_free) {
		free(in);
		free(out);
	}
	fake_free(f);
}

static void
test_queue_after_wait_reuse(void **state)
{
	(void)state;
	run_queue_after_wait(false);
}

static void
test_queue_after_wait_free(void **state)
{
	(void)state;
	run_queue_after_wait(true);
}

/* The same through the blocking barrier, whose buffers are on its stack. */
static void
test_queue_after_barrier(void **state)
{
	struct fake *f = fake_new(3, 6);
	struct shr_comm *c = comm_new(f);

	(void)state;
	f->script = F_STALL_RESEND;
	assert_int_equal(shr_comm_barrier(c), 0);
	assert_true(f->stalled);
	f->ended_below = 1;
	f->stalled = false;
	f->script = F_PLAIN;
	assert_true(shr_comm_progress(c) >= 0);
	assert_int_equal(shr_comm_barrier(c), 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/* A params->dev is closed by a create that fails. */
static void
test_dev_closed_on_failure(void **state)
{
	struct fake *f = fake_new(1, 7);
	struct shr_comm_params p = { .agg_ip = 0, .world = 1, .dtype = SHR_DTYPE_INT32,
				     .dev = &f->drv };

	(void)state;
	errno = 0;
	assert_null(shr_comm_create(&p));
	assert_int_equal(errno, EINVAL);
	assert_true(f->closed);
	fake_free(f);
}

/*
 * What the endpoint would refuse only after the JOIN (once the other ranks had joined), or
 * what the JOIN would carry cut (slots above 2^31 went out as slot & mask): refused by
 * create before anything is sent, said in why.
 */
static void
test_bad_params_said(void **state)
{
	static const struct {
		struct shr_comm_params p;
		const char *why;
	} bad[] = {
		{ { .world = 4097 }, "rank 0, world 4097: need rank < world <= 4096" },
		{ { .world = 2, .window = 70000 }, "window 70000, slots 0: at most 65536 each" },
		{ { .world = 2, .slots = 0x80000001u }, "window 0, slots 2147483649: at most" },
		{ { .world = 2, .rto_min_us = 200000 }, "rto_min_us 200000: above the RTO's" },
		{ { .world = 2, .tree_rank = 1 }, "tree_rank 1, tree_world 0: need tree_rank" },
		{ { .world = 2, .vlan = 5000 }, "vlan 5000: 1..4094, or 0 (untagged)" },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fake *f = fake_new(2, 7);
		struct shr_comm_params p = bad[i].p;
		char why[160] = "";

		p.agg_ip = F_AGG_IP;
		p.dtype = SHR_DTYPE_INT32;
		p.dev = &f->drv;
		p.why = why;
		p.why_len = sizeof(why);
		errno = 0;
		assert_null(shr_comm_create(&p));
		assert_int_equal(errno, EINVAL);
		if (strncmp(why, bad[i].why, strlen(bad[i].why)) != 0)
			fail_msg("case %u: why '%s', want '%s...'", i, why, bad[i].why);
		assert_true(f->closed);	/* refused at once: its device closed, no JOIN */
		assert_int_equal(f->data_tx, 0);
		fake_free(f);
	}
	/* the per-job MAC without a secret: ENOKEY, said as this rank's (no box was asked) */
	{
		struct fake *f = fake_new(2, 7);
		struct shr_comm_params p = { .agg_ip = F_AGG_IP, .world = 2,
					     .dtype = SHR_DTYPE_INT32, .mac = 1, .dev = &f->drv };
		char why[160] = "";

		p.why = why;
		p.why_len = sizeof(why);
		errno = 0;
		assert_null(shr_comm_create(&p));
		assert_int_equal(errno, ENOKEY);
		assert_string_equal(why, "mac = 1 needs the job's secret (shr_comm_params.secret): "
				    "nothing was sent");
		assert_int_equal(f->data_tx, 0);
		fake_free(f);
	}
}

/* Queue a message for the communicator as if the box had sent it (someone on the path). */
static void
f_inject(struct fake *f, const struct shr_proto_msg *m)
{
	struct f_msg *q = malloc(sizeof(*q));

	assert_non_null(q);
	assert_true(f->rx_n < F_RXQ);
	shr_proto_build(q->data, m, NULL, 0);
	q->len = SHR_PROTO_HDR_LEN;
	f->rxq[f->rx_n++] = q;
}

/*
 * Queue a datagram for the communicator as if the box had sent it: a copy of a signed one
 * seen on the path.
 */
static void
f_replay(struct fake *f, const struct f_msg *m)
{
	struct f_msg *q = malloc(sizeof(*q));
	struct shr_proto_msg v;

	assert_non_null(q);
	assert_true(f->rx_n < F_RXQ);
	assert_int_equal(shr_proto_validate(m->data, m->len, &v), SHR_PROTO_OK);
	assert_true(v.flags & SHR_FLAG_MAC);
	memcpy(q, m, sizeof(*q));
	f->rxq[f->rx_n++] = q;
}

/*
 * The member's side of the per-job MAC (a box with mac = 1 and the secret): its counter does
 * not start at 1 (a rank's next process in the same incarnation would repeat the nonces);
 * once joined, an unsigned JOIN_ACK EINPROGRESS echoing its nonce (anyone who saw the JOIN
 * can forge it) does not change its key: a header-only RESULT of its own token without a MAC
 * is refused (mac_missing), and its next allreduce is still signed under the real key and
 * exact (the forged key made the box refuse every DATA).
 */
static void
test_mac_member_keys(void **state)
{
	struct fake *f = fake_new(1, 41);
	struct shr_auth_secret s;
	struct shr_comm_stats st;
	struct shr_proto_msg m;
	struct shr_comm *c;
	int32_t x[3 * F_CHUNK], y[3 * F_CHUNK];
	unsigned int i;

	(void)state;
	c = mac_comm_new(f, &s, F_CHUNK, NULL, 0);
	assert_non_null(c);
	for (i = 0; i < 3 * F_CHUNK; i++)
		x[i] = (int32_t)i - 77;
	assert_int_equal(shr_comm_allreduce(c, x, y, 3 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));	/* world 1: the sum is the input */
	assert_true(f->first_mac_ctr > 1);	/* not the 1 of a counter from 0 (it is random) */
	/* someone on the path: EINPROGRESS with another token, then a RESULT unsigned */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_JOIN_ACK;
	m.dtype = SHR_DTYPE_INT32;
	m.job = F_JOB;
	m.world = 1;
	m.aux = EINPROGRESS;
	m.offset = f->join_nonce;
	m.token = 0x4242;
	f_inject(f, &m);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_RESULT;
	m.dtype = SHR_DTYPE_INT32;
	m.job = F_JOB;
	m.world = 1;
	m.kind = SHR_KIND_BROADCAST;
	m.aux = SHR_PROTO_RANK_ALL;
	m.count = 1;
	m.flags = SHR_FLAG_NOPAYLOAD;
	m.token = f->token;	/* the incarnation's, from its DATA */
	f_inject(f, &m);
	(void)shr_comm_progress(c);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_missing, 1);
	for (i = 0; i < 3 * F_CHUNK; i++)
		x[i] = 3 * (int32_t)i;
	assert_int_equal(shr_comm_allreduce(c, x, y, 3 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * A box that gives up the job while it fills (a rank did not join in time) answers the JOIN
 * with an ABORT: the create fails with ECONNABORTED, and why names the box's reason and the
 * rank it named (the communicator, and its abort fields, are gone by then).
 */
static void
test_join_aborted_why(void **state)
{
	struct fake *f = fake_new(3, 11);
	char why[256] = "";
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .rank = 0, .world = 3,
		.dtype = SHR_DTYPE_INT32, .timeout_ms = 10000, .dev = &f->drv,
		.why = why, .why_len = sizeof(why),
	};

	(void)state;
	f->join_abort = ETIMEDOUT;
	f->join_abort_rank = 2;
	errno = 0;
	assert_null(shr_comm_create(&p));
	assert_int_equal(errno, ECONNABORTED);
	assert_non_null(strstr(why, "job 7 aborted by the aggregator"));
	assert_non_null(strstr(why, "rank 2 did not join or send in time"));
	assert_non_null(strstr(why, strerror(ETIMEDOUT)));
	fake_free(f);
}

/*
 * Before its JOIN is answered a rank takes only the ABORT that answers that JOIN (it echoes
 * the JOIN's nonce): an ABORT of the same job id answering another process's JOIN (another
 * worker's, or a late one of a previous run), already waiting when this rank JOINs, is not
 * its own (counted in rx_foreign): the create succeeds and the job runs.
 */
static void
test_join_abort_other_nonce(void **state)
{
	struct fake *f = fake_new(3, 47);
	const struct shr_proto_msg stray = {
		.type = SHR_MSG_ABORT, .dtype = SHR_DTYPE_INT32, .rank = 2, .world = 3,
		.job = F_JOB, .token = 0x5eed0001u, .offset = 0x0123456789abcdefull,
		.aux = ETIMEDOUT, .feedback = F_PEER_IP + 2,
	};
	char why[256] = "";
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .rank = 0, .world = 3,
		.dtype = SHR_DTYPE_INT32, .window = F_WINDOW, .chunk_elems = F_CHUNK,
		.timeout_ms = 10000, .dev = &f->drv, .why = why, .why_len = sizeof(why),
	};
	struct shr_comm_stats st;
	struct shr_comm *c;
	int32_t in[200], out[200];

	(void)state;
	f_inject(f, &stray);
	c = shr_comm_create(&p);
	if (c == NULL)
		fail_msg("create: %s (%s)", strerror(errno), why);
	assert_true(f->join_nonce != stray.offset);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.rx_foreign, 1);
	fill(in, 200, 3);
	assert_int_equal(shr_comm_allreduce(c, in, out, 200, SHR_OP_SUM), 0);
	check_sum(f, in, out, 200, 3, 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	assert_int_equal(f->leaves, 1);
	fake_free(f);
}

/*
 * Only the box's datagrams are the box's: an ABORT of the job with its token (a host that
 * saw the job's traffic) sent from another address is not believed (counted in rx_foreign):
 * the communicator goes on and its next allreduce is exact. The same ABORT from the box's
 * address ends the job.
 */
static void
test_foreign_source_refused(void **state)
{
	struct fake *f = fake_new(3, 48);
	struct shr_comm *c = comm_new(f);
	struct shr_proto_msg forged = {
		.type = SHR_MSG_ABORT, .dtype = SHR_DTYPE_INT32, .rank = SHR_PROTO_RANK_ALL,
		.world = 3, .job = F_JOB, .aux = ESHUTDOWN,
	};
	struct shr_comm_abort ab;
	struct shr_comm_stats st;
	int32_t in[200], out[200];

	(void)state;
	fill(in, 200, 4);
	assert_int_equal(shr_comm_allreduce(c, in, out, 200, SHR_OP_SUM), 0);
	check_sum(f, in, out, 200, 4, 0);
	assert_int_equal(f->rx_n, 0);
	forged.token = f->token;
	f->rx_src = F_PEER_IP + 1;	/* a member's host */
	f_inject(f, &forged);
	assert_true(shr_comm_progress(c) >= 0);	/* no error: the job goes on */
	f->rx_src = 0;
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.rx_foreign, 1);
	assert_int_equal(shr_comm_abort_get(c, &ab), -ENOENT);
	fill(in, 200, 5);
	assert_int_equal(shr_comm_allreduce(c, in, out, 200, SHR_OP_SUM), 0);
	check_sum(f, in, out, 200, 5, 200);
	/* from the box: taken */
	f_inject(f, &forged);
	assert_int_equal(shr_comm_progress(c), -ECONNABORTED);
	assert_int_equal(shr_comm_abort_get(c, &ab), 0);
	assert_int_equal(ab.reason, ESHUTDOWN);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * In a tree of boxes, the ABORT a box passes down from its upstream (flag UPSTREAM) names the
 * box above that blamed (offset: its address and port) and the member of that box's job it
 * blamed (slot: its rank, feedback: its address): shr_comm_abort_get() and
 * shr_comm_strerror() say each where it belongs, so the operator looks at the right hosts.
 */
static void
test_upstream_abort_named(void **state)
{
	const char *want = "job 7 aborted by the aggregator 198.18.0.1 on behalf of the box "
		"198.18.0.99:47001 above it in the tree: that box's member 4 (198.18.9.7: a box, "
		"or a rank, below it) did not join or send in time";
	const uint32_t up_ip = 0xc6120063u, member_ip = 0xc6120907u;	/* .0.99, .9.7 */
	struct fake *f = fake_new(3, 49);
	struct shr_comm *c = comm_new(f);
	struct shr_proto_msg a = {
		.type = SHR_MSG_ABORT, .dtype = SHR_DTYPE_INT32, .rank = SHR_PROTO_RANK_ALL,
		.world = 3, .job = F_JOB, .aux = ETIMEDOUT, .flags = SHR_FLAG_UPSTREAM,
		.offset = (uint64_t)up_ip << 16 | 47001u, .slot = 4, .feedback = member_ip,
	};
	struct shr_comm_abort ab;
	char buf[512];

	(void)state;
	assert_int_equal(shr_comm_barrier(c), 0);
	a.token = f->token;
	f_inject(f, &a);
	assert_int_equal(shr_comm_progress(c), -ECONNABORTED);
	assert_int_equal(shr_comm_abort_get(c, &ab), 0);
	assert_int_equal(ab.reason, ETIMEDOUT);
	assert_int_equal(ab.upstream, 1);
	assert_int_equal(ab.up_ip, up_ip);
	assert_int_equal(ab.up_port, 47001);
	assert_int_equal(ab.up_rank, 4);
	assert_int_equal(ab.rank_ip, member_ip);
	shr_comm_strerror(c, -ECONNABORTED, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * A JOIN_ACK whose lanes do not fit a port range fails the create with EPROTO (65536 was
 * read as 16 bits, 0: a division by zero at the first DATA; 65537 as 1); 65535 is taken.
 */
static void
test_join_ack_lanes(void **state)
{
	struct fake *f = fake_new(1, 12);
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .rank = 0, .world = 1,
		.dtype = SHR_DTYPE_INT32, .timeout_ms = 10000, .dev = &f->drv,
	};
	struct shr_comm *c;

	(void)state;
	f->ack_lanes = 65536;
	errno = 0;
	assert_null(shr_comm_create(&p));
	assert_int_equal(errno, EPROTO);
	fake_free(f);

	f = fake_new(1, 14);	/* 65537: not read as 1 */
	f->ack_lanes = 65537;
	p.dev = &f->drv;
	errno = 0;
	assert_null(shr_comm_create(&p));
	assert_int_equal(errno, EPROTO);
	fake_free(f);

	f = fake_new(1, 13);
	f->ack_lanes = 65535;
	p.dev = &f->drv;
	c = shr_comm_create(&p);
	assert_non_null(c);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * The result group (issue 16). A device that can join one offers it (the fake's other ranks
 * copy the communicator's JOIN, so all do): the box with a group grants it, the device is
 * asked to join that group and port before any DATA, and info says it; the allreduce is
 * right. Declined with no_group: no group. A group the device cannot join fails the create
 * with its errno, why names the group, and the rank leaves the job.
 */
static struct fake *
fake_group(uint32_t group_ip)
{
	struct fake *f = fake_new(3, 21);
	struct shr_agg_params ap = {
		.nslots = 64, .max_elems = F_CHUNK, .max_world = 16, .max_jobs = 4,
		.max_window = 16, .lanes = 1, .group_ip = group_ip,
	};

	shr_agg_free(f->agg);
	f->agg = shr_agg_create(&ap);
	assert_non_null(f->agg);
	f->drv.ops = &f_group_ops;
	return f;
}

static void
test_group(void **state)
{
	struct fake *f = fake_group(0xc61200ffu);
	struct shr_comm *c = comm_new(f);
	struct shr_comm_info info;
	int32_t in[300], out[300];

	(void)state;
	assert_int_equal(f->group_ip, 0xc61200ffu);
	assert_int_equal(f->group_port, SHR_AGG_GROUP_PORT);	/* the box's job entry 0 */
	assert_int_equal(f->data_tx, 0);	/* joined before any DATA */
	shr_comm_info_get(c, &info);
	assert_int_equal(info.group_ip, 0xc61200ffu);
	assert_int_equal(info.group_port, SHR_AGG_GROUP_PORT);
	fill(in, 300, 0);
	assert_int_equal(shr_comm_allreduce(c, in, out, 300, SHR_OP_SUM), 0);
	check_sum(f, in, out, 300, 0, 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

static void
test_group_declined(void **state)
{
	struct fake *f = fake_group(0xc61200ffu);
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .rank = 0, .world = 3,
		.dtype = SHR_DTYPE_INT32, .window = F_WINDOW, .chunk_elems = F_CHUNK,
		.timeout_ms = 10000, .dev = &f->drv, .no_group = 1,
	};
	struct shr_comm *c = shr_comm_create(&p);
	struct shr_comm_info info;

	(void)state;
	assert_non_null(c);
	assert_int_equal(f->group_ip, 0);
	shr_comm_info_get(c, &info);
	assert_int_equal(info.group_ip, 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

static void
test_group_join_fails(void **state)
{
	struct fake *f = fake_group(0xc61200ffu);
	char why[256] = "";
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .rank = 0, .world = 3,
		.dtype = SHR_DTYPE_INT32, .window = F_WINDOW, .chunk_elems = F_CHUNK,
		.timeout_ms = 10000, .dev = &f->drv, .why = why, .why_len = sizeof(why),
	};

	(void)state;
	f->group_rc = -EADDRNOTAVAIL;
	errno = 0;
	assert_null(shr_comm_create(&p));
	assert_int_equal(errno, EADDRNOTAVAIL);
	assert_non_null(strstr(why, "result group 198.18.0.255:48000"));
	assert_non_null(strstr(why, strerror(EADDRNOTAVAIL)));
	assert_int_equal(f->leaves, 1);	/* the job is not left waiting for it */
	assert_int_equal(f->data_tx, 0);
	fake_free(f);
}

/*
 * A world-1 communicator of window, slots and cc_target_us on f, a box of max_window (f's own
 * replaced): NULL (f freed, its device closed, errno set) if create failed.
 */
static struct shr_comm *
comm_on_box(struct fake *f, uint32_t max_window, uint32_t window, uint32_t slots,
	    uint32_t target_us)
{
	struct shr_agg_params ap = {
		.nslots = 256, .max_elems = F_CHUNK, .max_world = 16, .max_jobs = 4,
		.max_window = max_window, .lanes = 1,
	};
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .rank = 0, .world = 1,
		.dtype = SHR_DTYPE_INT32, .window = window, .slots = slots,
		.chunk_elems = F_CHUNK, .timeout_ms = 10000, .dev = &f->drv,
		.cc_target_us = target_us,
	};
	struct shr_comm *c;

	shr_agg_free(f->agg);
	f->agg = shr_agg_create(&ap);
	assert_non_null(f->agg);
	errno = 0;
	c = shr_comm_create(&p);
	if (c == NULL) {
		assert_true(f->closed);
		fake_free(f);
	}
	return c;
}

/*
 * cc_target_us reaches the endpoint: SHR_COMM_CC_OFF lets the whole window out from the start
 * (the default starts at 16 chunks and grows); targets past SHR_COMM_CC_TARGET_MAX_US fail the
 * create with EINVAL, the largest one does not.
 */
static bool
cc_comm(uint32_t target_us, uint32_t *cwnd)
{
	struct fake *f = fake_new(1, 11);
	struct shr_comm *c = comm_on_box(f, 64, 64, 0, target_us);
	struct shr_comm_stats st;

	if (c == NULL)
		return false;
	shr_comm_stats_get(c, &st);
	*cwnd = st.ep.cwnd;
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
	return true;
}

static void
test_cc_target(void **state)
{
	uint32_t cwnd = 0;

	(void)state;
	assert_true(cc_comm(0, &cwnd));
	assert_int_equal(cwnd, 16);
	assert_true(cc_comm(SHR_COMM_CC_OFF, &cwnd));
	assert_int_equal(cwnd, 64);
	assert_true(cc_comm(SHR_COMM_CC_TARGET_MAX_US, &cwnd));
	assert_int_equal(cwnd, 16);
	assert_false(cc_comm(SHR_COMM_CC_TARGET_MAX_US + 1, &cwnd));
	assert_int_equal(errno, EINVAL);
}

/*
 * Spare slots: a communicator keeps window chunks in flight and asks the box for
 * shr_endpoint_slots(window) slots (or params.slots), and the box's job has that many; a box
 * that grants fewer slots keeps the window within them. Returns false if create failed.
 */
static bool
slots_comm(uint32_t max_window, uint32_t window, uint32_t slots, struct shr_comm_info *info,
	   uint32_t *box_window, uint32_t *cwnd)
{
	struct fake *f = fake_new(1, 11);
	struct shr_comm *c = comm_on_box(f, max_window, window, slots, SHR_COMM_CC_OFF);
	struct shr_agg_job_info ji;
	struct shr_comm_stats st;
	int32_t in[1000], out[1000];

	if (c == NULL)
		return false;
	shr_comm_info_get(c, info);
	assert_int_equal(shr_agg_job_info(f->agg, 0, &ji), 1);
	*box_window = ji.window;
	shr_comm_stats_get(c, &st);
	*cwnd = st.ep.cwnd;
	fill(in, 1000, 0);	/* (many windows of chunks: every slot reused) */
	assert_int_equal(shr_comm_allreduce(c, in, out, 1000, SHR_OP_SUM), 0);
	check_sum(f, in, out, 1000, 0, 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
	return true;
}

static void
test_spare_slots(void **state)
{
	static const struct {
		uint32_t max_window, window, slots;	/* the box's; asked (slots 0: default) */
		uint32_t in_flight, granted;		/* info.window, info.slots */
	} cases[] = {
		{ 64, 16, 0, 16, 32 },	/* window 16: 32 slots asked and granted, 16 in flight */
		{ 64, 60, 0, 60, 64 },	/* a box that grants fewer than asked (128): the window, */
		{ 20, 32, 0, 20, 20 },	/* within them */
		{ 64, 16, 16, 16, 16 },	/* slots given: no spare ones, */
		{ 64, 16, 40, 16, 40 },	/* or more */
	};
	struct shr_comm_info info;
	uint32_t box = 0, cwnd = 0;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(slots_comm(cases[i].max_window, cases[i].window, cases[i].slots, &info,
				       &box, &cwnd));
		assert_int_equal(info.window, cases[i].in_flight);
		assert_int_equal(info.slots, cases[i].granted);
		assert_int_equal(box, cases[i].granted);
		assert_int_equal(cwnd, cases[i].in_flight);
	}
	/* fewer slots than the window: refused */
	assert_false(slots_comm(64, 16, 15, &info, &box, &cwnd));
	assert_int_equal(errno, EINVAL);
}

/*
 * Only the box's messages are taken under the job's key: a member's signed DATA (one key per
 * job: every member signs with it) reflected to a rank by someone on the path verifies, but
 * its sender is a rank, not the box. It is refused (mac_bad), and does not move the replay
 * window of the box's sender of the same number to the member's counter (random, near 2^61):
 * the box's next results are still taken and the next allreduce is exact.
 */
static void
test_mac_member_frame_refused(void **state)
{
	struct fake *f = fake_new(1, 42);
	struct shr_auth_secret s;
	struct shr_comm_stats st;
	struct shr_comm *c;
	int32_t x[3 * F_CHUNK], y[3 * F_CHUNK];
	unsigned int i;

	(void)state;
	c = mac_comm_new(f, &s, F_CHUNK, NULL, 0);
	assert_non_null(c);
	for (i = 0; i < 3 * F_CHUNK; i++)
		x[i] = (int32_t)i * 5 - 300;
	assert_int_equal(shr_comm_allreduce(c, x, y, 3 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	/* rank 0's own signed DATA, back to it as if from the box */
	f_replay(f, &f->last_data);
	(void)shr_comm_progress(c);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_bad, 1);
	assert_int_equal(st.mac_replay, 0);
	for (i = 0; i < 3 * F_CHUNK; i++)
		x[i] = 11 - 7 * (int32_t)i;
	assert_int_equal(shr_comm_allreduce(c, x, y, 3 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_replay, 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * A box message of the incarnation replayed (someone on the path kept a signed RESULT) is
 * refused as a replay (mac_replay), every time it comes again, and the communicator goes
 * on: its next allreduce is exact.
 */
static void
test_mac_box_replay_refused(void **state)
{
	struct fake *f = fake_new(1, 43);
	struct shr_auth_secret s;
	struct shr_comm_stats st;
	struct shr_comm *c;
	struct f_msg old;
	int32_t x[3 * F_CHUNK], y[3 * F_CHUNK];
	unsigned int i;

	(void)state;
	c = mac_comm_new(f, &s, F_CHUNK, NULL, 0);
	assert_non_null(c);
	for (i = 0; i < 3 * F_CHUNK; i++)
		x[i] = (int32_t)i + 1000;
	assert_int_equal(shr_comm_allreduce(c, x, y, 3 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	old = f->last_result;		/* taken by the communicator */
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_replay, 0);
	f_replay(f, &old);
	(void)shr_comm_progress(c);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_replay, 1);
	f_replay(f, &old);
	f_replay(f, &old);
	(void)shr_comm_progress(c);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_replay, 3);
	assert_int_equal(st.mac_bad, 0);
	for (i = 0; i < 3 * F_CHUNK; i++)
		x[i] = -3 * (int32_t)i;
	assert_int_equal(shr_comm_allreduce(c, x, y, 3 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * The box's sender ids are SHR_MAC_SENDER_BOX | its context, 0 to 64 (64 lanes and the control
 * path): a message of the incarnation signed under its key by a sender id past them (a member's
 * RESULT forged with the job's key, or a box of another build) is refused (mac_bad), no window
 * of the box's senders is read or moved for it, and the communicator goes on: its next
 * allreduce is exact.
 */
static void
test_mac_box_sender_past_last(void **state)
{
	struct fake *f = fake_new(1, 46);
	struct shr_auth_secret s;
	struct shr_comm_stats st;
	struct shr_proto_msg m;
	struct shr_comm *c;
	struct shr_mac *mac;
	struct f_msg q;
	uint8_t key[SHR_MAC_KEY_LEN];
	int32_t x[3 * F_CHUNK], y[3 * F_CHUNK];
	unsigned int i;

	(void)state;
	c = mac_comm_new(f, &s, F_CHUNK, NULL, 0);
	assert_non_null(c);
	for (i = 0; i < 3 * F_CHUNK; i++)
		x[i] = (int32_t)i * 3 + 1;
	assert_int_equal(shr_comm_allreduce(c, x, y, 3 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	assert_int_equal(shr_mac_derive(s.key, s.len, F_JOB, f->token, key), 0);
	mac = shr_mac_create(key);
	assert_non_null(mac);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_RESULT;
	m.dtype = SHR_DTYPE_INT32;
	m.job = F_JOB;
	m.world = 1;
	m.kind = SHR_KIND_BROADCAST;
	m.aux = SHR_PROTO_RANK_ALL;
	m.count = 1;
	m.flags = SHR_FLAG_NOPAYLOAD | SHR_FLAG_MAC;
	m.token = f->token;
	shr_proto_build(q.data, &m, NULL, 0);
	assert_int_equal(shr_mac_sign(mac, q.data, SHR_PROTO_HDR_LEN, SHR_MAC_SENDER_BOX | 65, 7),
			 0);
	q.len = SHR_PROTO_HDR_LEN + SHR_MAC_TRAILER_LEN;
	shr_mac_free(mac);
	f_replay(f, &q);
	(void)shr_comm_progress(c);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_bad, 1);
	assert_int_equal(st.mac_replay, 0);
	for (i = 0; i < 3 * F_CHUNK; i++)
		x[i] = 9 - (int32_t)i;
	assert_int_equal(shr_comm_allreduce(c, x, y, 3 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * A device that takes one datagram a burst: the signed DATA left are moved up the send queue
 * after every burst, each with its own payload and tag (the box refuses a DATA whose tag is not
 * its own: the fake fails the test), the sums exact.
 */
static void
test_mac_short_bursts(void **state)
{
	struct fake *f = fake_new(1, 47);
	struct shr_auth_secret s;
	struct shr_comm_stats st;
	struct shr_comm *c;
	int32_t x[8 * F_CHUNK], y[8 * F_CHUNK];
	unsigned int i;

	(void)state;
	c = mac_comm_new(f, &s, F_CHUNK, NULL, 0);
	assert_non_null(c);
	f->budget = 1;
	for (i = 0; i < 8 * F_CHUNK; i++)
		x[i] = (int32_t)i * 7 - 1000;
	assert_int_equal(shr_comm_allreduce(c, x, y, 8 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	assert_int_equal(f->st.rejects[SHR_PROTO_MAC_BAD], 0);
	assert_true(f->data_tx >= 8);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_bad, 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * With the MAC, every DATA carries a 28-byte trailer: the chunk a communicator offers (chunk
 * auto) leaves room for it in the path to the box, so that a full signed DATA fits the path
 * (the fake fails any datagram longer than the device's max_payload); a fixed chunk that fits
 * only without the trailer is refused at create (EMSGSIZE), why saying what fits.
 */
static void
test_mac_path_room(void **state)
{
	const uint32_t fit = 60;	/* elements a signed DATA carries on this path */
	struct fake *f = fake_new(1, 44);
	struct shr_auth_secret s;
	struct shr_comm_info info;
	struct shr_comm *c;
	char why[256] = "";
	int32_t x[1000], y[1000];

	(void)state;
	assert_true(fit < F_CHUNK);	/* the box would take more */
	f->drv.max_payload = SHR_PROTO_HDR_LEN + fit * 4 + SHR_PROTO_MAC_LEN;
	c = mac_comm_new(f, &s, 0, why, sizeof(why));
	assert_non_null(c);
	shr_comm_info_get(c, &info);
	assert_int_equal(info.chunk_elems, fit);
	fill(x, 1000, 3);
	assert_int_equal(shr_comm_allreduce(c, x, y, 1000, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));	/* world 1: the sum is the input */
	assert_true(f->data_tx >= 1000 / fit);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);

	/* 64 elements: the header and their 256 bytes fit this path, not the trailer too */
	f = fake_new(1, 45);
	f->drv.max_payload = SHR_PROTO_HDR_LEN + fit * 4 + SHR_PROTO_MAC_LEN;
	assert_true(SHR_PROTO_HDR_LEN + F_CHUNK * 4 <= f->drv.max_payload);
	assert_null(mac_comm_new(f, &s, F_CHUNK, why, sizeof(why)));
	assert_int_equal(errno, EMSGSIZE);
	assert_non_null(strstr(why, "at most 60 elements"));
	assert_true(f->closed);
	assert_int_equal(f->data_tx, 0);
	fake_free(f);
}

/*
 * Ranks started apart: while the job fills the box answers each JOIN with EINPROGRESS and
 * how long it still waits for the others. A rank whose own timeout_ms is shorter keeps
 * JOINing that long: here the other ranks JOIN only once the rank's own timeout has passed
 * (with a later JOIN of its, taken timeout_ms after its first: its own deadline is at most
 * that; and a timeout_ms below the first resend's 20 ms means a rank that gave up at its
 * deadline sent one JOIN only), and the job still forms: the create succeeds.
 */
static void
test_join_waits_for_box(void **state)
{
	struct fake *f = fake_new(3, 46);
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .rank = 0, .world = 3,
		.dtype = SHR_DTYPE_INT32, .window = F_WINDOW, .chunk_elems = F_CHUNK,
		.timeout_ms = 10, .dev = &f->drv,
	};
	struct shr_comm_info info;
	struct shr_comm *c;

	(void)state;
	f->peers_late_ns = (uint64_t)p.timeout_ms * 1000000ull;
	errno = 0;
	c = shr_comm_create(&p);
	if (c == NULL)
		fail_msg("create: %s", strerror(errno));
	assert_true(f->peers_joined);
	assert_true(f->joins >= 2);
	shr_comm_info_get(c, &info);
	assert_int_equal(info.chunk_elems, F_CHUNK);
	assert_int_equal(shr_comm_destroy(c), 0);
	assert_int_equal(f->leaves, 1);
	fake_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allreduce),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_group_declined),
		cmocka_unit_test(test_group_join_fails),
		cmocka_unit_test(test_cc_target),
		cmocka_unit_test(test_spare_slots),
		cmocka_unit_test(test_outstanding),
		cmocka_unit_test(test_outstanding_loss),
		cmocka_unit_test(test_leave_ack_lost),
		cmocka_unit_test(test_idle_until_resend),
		cmocka_unit_test(test_short_bursts_in_order),
		cmocka_unit_test(test_queue_after_wait_reuse),
		cmocka_unit_test(test_queue_after_wait_free),
		cmocka_unit_test(test_queue_after_barrier),
		cmocka_unit_test(test_dev_closed_on_failure),
		cmocka_unit_test(test_bad_params_said),
		cmocka_unit_test(test_join_aborted_why),
		cmocka_unit_test(test_join_abort_other_nonce),
		cmocka_unit_test(test_foreign_source_refused),
		cmocka_unit_test(test_upstream_abort_named),
		cmocka_unit_test(test_join_ack_lanes),
		cmocka_unit_test(test_mac_member_keys),
		cmocka_unit_test(test_mac_member_frame_refused),
		cmocka_unit_test(test_mac_box_replay_refused),
		cmocka_unit_test(test_mac_path_room),
		cmocka_unit_test(test_mac_box_sender_past_last),
		cmocka_unit_test(test_mac_short_bursts),
		cmocka_unit_test(test_join_waits_for_box),
	};

	return cmocka_run_group_tests_name("comm", tests, NULL, NULL);
}
