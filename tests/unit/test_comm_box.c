/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * lib/comm through the fake driver of comm_test.h: what a rank takes from its box and what it
 * refuses. The JOIN's answers: a box still filling the job (EINPROGRESS) keeps the rank
 * JOINing past its own timeout, an ABORT is said in why (the box's reason, the rank it named),
 * only the ABORT that answers this rank's own JOIN (its nonce) is taken, lanes that do not fit
 * a port range fail the create; only the box's datagrams (from its address) are taken; a
 * tree's upstream ABORT names the box above and the member it blamed, each as such. The
 * per-job MAC once admitted: a forged EINPROGRESS does not change the key; a member's signed
 * DATA reflected, a box message replayed, one signed by a sender id past the box's, refused;
 * a chunk leaves room for the trailer; signed DATA moved up the send queue keep their tags.
 * (The communicator's sums, sends and timers: test_comm.c; the MAC's admission:
 * test_comm_mac.c.)
 */

#include <shr_mac.h>

#include "comm_test.h"

/* ---- tests ---- */

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

	return cmocka_run_group_tests_name("comm_box", tests, NULL, NULL);
}
