/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * lib/comm through the fake driver of comm_test.h: a communicator's sums, sends and timers.
 * Checked: sums of several outstanding collectives under short bursts, loss and reordering;
 * a LEAVE_ACK that never comes is reported by shr_comm_destroy(); no queued send of a
 * collective reaches the device after the collective was reported done (issue 18 item 5): the
 * buffer is overwritten (the device would see the new bytes) or freed (AddressSanitizer reports
 * the read, in the sanitizer build) right after shr_comm_wait(); shr_comm_idle_us() until the
 * next resend; a failed create closes the device, bad parameters are refused before the JOIN
 * and said in why; the result group, cc_target_us and the spare slots as asked and granted.
 * (What a rank takes from its box and what it refuses, the JOIN's answers, the ABORTs, the
 * per-job MAC once admitted: test_comm_box.c; the MAC's admission: test_comm_mac.c.)
 */

#include "comm_test.h"

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
	};

	return cmocka_run_group_tests_name("comm", tests, NULL, NULL);
}
