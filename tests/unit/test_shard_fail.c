/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * lib/shard's failures, on the rig of shard_test.h (real aggregators behind comm_test.h's fake
 * driver): a box that refuses the join or goes silent mid-call fails the sharded communicator
 * with an error naming that box, and every box is left; the destroy names a box that never
 * acknowledged the LEAVE; a box's abort while another is silent names both; bad parameters are
 * refused before any device is used. (The map, the collectives, the udp driver: test_shard.c.)
 */

#include "shard_test.h"

/* The second box aborts the job while it fills: no communicator, the first box is left. */
static void
test_join_refused(void **state)
{
	struct shr_drv *dev[2];
	uint32_t ip[2] = { F_AGG_IP, F_AGG_IP };
	char why[256] = "";
	struct shr_shard_params p = {
		.comm = {
			.job = F_JOB, .world = 2, .dtype = SHR_DTYPE_INT32, .window = F_WINDOW,
			.chunk_elems = F_CHUNK, .timeout_ms = 2000, .agg_port = F_PORT,
			.why = why, .why_len = sizeof(why),
		},
		.nboxes = 2, .agg_ip = ip, .dev = dev,
	};
	struct fake *f0 = fake_new(2, 1), *f1 = fake_new(2, 2);

	(void)state;
	f1->join_abort = ETIMEDOUT;
	f1->join_abort_rank = 1;
	dev[0] = &f0->drv;
	dev[1] = &f1->drv;
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, ECONNABORTED);
	if (strncmp(why, "box 2 of 2 (198.18.0.1:40000): ", 31) != 0 ||
	    strstr(why, "rank 1") == NULL)
		fail_msg("why: '%s'", why);
	assert_int_equal(f0->leaves, 1);	/* the first box was left */
	fake_free(f0);	/* both devices closed (fake_free checks) */
	fake_free(f1);
}

/* Bad parameters: refused before any device is used, and the devices are closed. */
static void
test_bad_params(void **state)
{
	struct shr_drv *dev[1];
	uint32_t ip[2] = { F_AGG_IP, F_AGG_IP };
	uint16_t port[2] = { 9, 9 };
	struct shr_shard_params p = {
		.comm = { .job = F_JOB, .world = 2, .dtype = SHR_DTYPE_INT32, .agg_port = 1 },
		.nboxes = 2, .agg_ip = ip,
	};
	struct fake *f = fake_new(2, 1);

	(void)state;
	assert_null(shr_shard_create(&p));	/* the same box twice */
	assert_int_equal(errno, EINVAL);
	/*
	 * ... also with a port per box, whatever comm.agg_port says (a loopback box and a
	 * short timeout: taken, the call would fail at the box, not EINVAL)
	 */
	ip[0] = ip[1] = 0x7f000001u;
	p.agg_port = port;
	p.comm.timeout_ms = 50;
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, EINVAL);
	p.agg_port = NULL;
	ip[0] = F_AGG_IP;
	ip[1] = F_AGG_IP + 1;
	p.comm.driver = "dpdk";			/* one port for two boxes */
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, EINVAL);
	/*
	 * local ports P .. P + 1 past 65535 (box 2's would be port 0: any): refused at once,
	 * not tried (loopback boxes, a short timeout: taken, box 1's join would fail there)
	 */
	p.comm.driver = NULL;
	ip[0] = ip[1] = 0x7f000001u;
	p.agg_port = port;
	port[1] = 10;
	p.comm.local_port = 65535;
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, EINVAL);
	p.comm.local_port = 0;
	p.agg_port = NULL;
	ip[0] = F_AGG_IP;
	ip[1] = F_AGG_IP + 1;
	p.nboxes = SHR_SHARD_MAX_BOXES + 1;
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, EINVAL);
	p.nboxes = 0;
	dev[0] = &f->drv;
	p.dev = dev;
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, EINVAL);
	assert_null(shr_shard_create(NULL));
	assert_int_equal(errno, EINVAL);
	f->closed = true;	/* nboxes 0: no device was given */
	fake_free(f);
}

/*
 * The second box goes silent mid-call (its device takes nothing): the call fails with
 * ETIMEDOUT naming box 2, the next call fails at once (EPIPE), and both boxes are left.
 */
static void
test_box_silent(void **state)
{
	int32_t in[1000], out[1000];
	char buf[512];
	struct rig g;

	(void)state;
	assert_int_equal(rig_open(&g, 2, 2, 0, 300), 0);
	fill(in, 1000, 2);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), 0);
	g.f[1]->stalled = true;
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), -ETIMEDOUT);
	shr_shard_strerror(g.s, -ETIMEDOUT, buf, sizeof(buf));
	if (strncmp(buf, "box 2 of 2 (198.18.0.1:40000): ", 31) != 0 ||
	    strstr(buf, "no result from the aggregator") == NULL)
		fail_msg("strerror: '%s'", buf);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), -EPIPE);
	shr_shard_strerror(g.s, -EPIPE, buf, sizeof(buf));
	/* the failure it follows, not a broken pipe */
	if (strncmp(buf, "box 2 of 2 (198.18.0.1:40000): ", 31) != 0 ||
	    strstr(buf, "no result from the aggregator") == NULL)
		fail_msg("strerror(EPIPE): '%s'", buf);
	g.f[1]->stalled = false;
	assert_int_equal(shr_shard_destroy(g.s), 0);
	assert_int_equal(g.f[0]->leaves, 1);
	assert_true(g.f[1]->leaves >= 1);
	fake_free(g.f[0]);
	fake_free(g.f[1]);
}

/*
 * The destroy says a box that never acknowledged the LEAVE (it still holds the rank), whichever
 * box it is: box 2's lost LEAVE_ACK is not hidden by box 1's, which came (both are left).
 */
static void
test_destroy_leave_unacked(void **state)
{
	int32_t in[1000], out[1000];
	struct rig g;

	(void)state;
	assert_int_equal(rig_open(&g, 2, 2, 0, 10000), 0);
	fill(in, 1000, 4);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), 0);
	g.f[1]->lose_leave_ack = true;
	assert_int_equal(shr_shard_destroy(g.s), -ETIMEDOUT);
	assert_int_equal(g.f[0]->leaves, 1);
	assert_true(g.f[1]->leaves >= 1);
	fake_free(g.f[0]);
	fake_free(g.f[1]);
}

/*
 * Box 1 aborts the job (ranks disagreeing) while box 2, silent, owes the call its share: the
 * error names box 1's abort and box 2's silence.
 */
static void
test_abort_names_silent_box(void **state)
{
	int32_t in[1000], out[1000];
	char buf[512];
	struct rig g;

	(void)state;
	assert_int_equal(rig_open(&g, 2, 2, 0, 10000), 0);
	fill(in, 1000, 3);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), 0);
	g.f[0]->odd_rank = 1;	/* box 1's fake rank 1 calls with another step */
	g.f[0]->odd_step = 1;
	g.f[1]->stalled = true;
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), -ECONNABORTED);
	shr_shard_strerror(g.s, -ECONNABORTED, buf, sizeof(buf));
	if (strncmp(buf, "box 1 of 2 (198.18.0.1:40000): ", 31) != 0 ||
	    strstr(buf, "; and box 2 of 2 (198.18.0.1:40000): no result for ") == NULL)
		fail_msg("strerror: '%s'", buf);
	g.f[1]->stalled = false;
	(void)shr_shard_destroy(g.s);
	fake_free(g.f[0]);
	fake_free(g.f[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_refused),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_box_silent),
		cmocka_unit_test(test_destroy_leave_unacked),
		cmocka_unit_test(test_abort_names_silent_box),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
