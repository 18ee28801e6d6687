/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The box's side of the per-job MAC (issue 15 item 2), driven in memory: members join a MAC
 * job through the challenge; forged (good CRC, wrong or no tag) and replayed DATA and LEAVE
 * are refused and counted before they touch any state, the sum stays exact, and everything
 * the box sends for the job verifies under the incarnation's key (an ended incarnation's, for what
 * it says of one: a static job's next one is keyed at once). Static jobs hold their own policy,
 * also on a box without --mac, and are keyed with their own secret when they have one. Each
 * (rank, context) has its own replay window.
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
#include <shr_auth.h>
#include <shr_mac.h>
#include <shr_proto.h>

#define JOB 9
#define WORLD 2
#define CHUNK 8
#define TIMEOUT 1000000000ull	/* the box's job timeout */
#define BUF (SHR_PROTO_HDR_LEN + 64 * 4 + SHR_PROTO_MAC_LEN)
#define ADDR(r) SHR_AGG_ADDR(0xc6120001u + (r), 40000u)

static const char key_str[] = "the-default-secret-of-this-box!!";

struct ctx {
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	struct shr_auth_secret secret;
	uint8_t txbuf[BUF];
	uint8_t msg[BUF];
	uint64_t now;
	uint64_t token;
	struct shr_mac *mac;		/* the members' schedule (the incarnation's key) */
	uint64_t ctr[WORLD];		/* the members' counters */
	uint16_t world;			/* the job's (0: WORLD) */
	uint32_t chunk;			/* the job's (0: CHUNK) */
	uint64_t nonce_off;		/* added to the JOINs' nonces (another process) */
};

/* The box: a secret, and mac (its policy for jobs made by JOIN). */
static int
setup_box(void **state, uint8_t mac)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct shr_agg_params p = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.lanes = 1, .job_timeout_ns = TIMEOUT, .auth_ttl_ns = 2000000000ull,
		.mac = mac,
	};

	assert_non_null(c);
	assert_int_equal(shr_auth_secret_set(&c->secret, key_str, 32), 0);
	p.secret = &c->secret;
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	assert_true(shr_agg_tx_cap(c->agg) <= BUF);
	c->tx.buf = c->txbuf;
	c->tx.cap = sizeof(c->txbuf);
	c->now = 1000;
	*state = c;
	return 0;
}

static int
setup(void **state)
{
	return setup_box(state, 1);
}

/* A box without --mac (its static jobs may still require the MAC). */
static int
setup_plain(void **state)
{
	return setup_box(state, 0);
}

static int
teardown(void **state)
{
	struct ctx *c = *state;

	shr_mac_free(c->mac);
	shr_agg_free(c->agg);
	free(c);
	return 0;
}

static enum shr_proto_reason
feed(struct ctx *c, uint64_t src, size_t len)
{
	c->now += 1000;
	return shr_agg_input(c->agg, src, c->msg, len, c->now, &c->tx, &c->st);
}

static struct shr_proto_msg
join_msg(uint16_t rank, uint16_t flags)
{
	struct shr_proto_msg m = {
		.type = SHR_MSG_JOIN, .dtype = SHR_DTYPE_INT32, .rank = rank, .world = WORLD,
		.job = JOB, .slot = 4, .count = CHUNK, .token = 0x1000 + rank, .flags = flags,
	};

	return m;
}

/* JOIN, challenge, JOIN with the proof: the JOIN_ACK's status. */
static uint32_t
join(struct ctx *c, uint16_t rank, uint16_t flags)
{
	struct shr_proto_msg m = join_msg(rank, flags), a;
	struct shr_auth_join aj = {
		.job = JOB, .rank = rank, .world = WORLD,
		.dtype = SHR_DTYPE_INT32, .chunk = CHUNK, .window = 4, .flags = flags,
	};
	uint8_t *blk = c->msg + SHR_PROTO_HDR_LEN;

	if (c->world != 0)
		m.world = aj.world = c->world;
	if (c->chunk != 0)
		m.count = aj.chunk = c->chunk;
	m.token += c->nonce_off;
	aj.nonce = m.token;

	shr_proto_build(c->msg, &m, NULL, 0);
	feed(c, ADDR(rank), SHR_PROTO_HDR_LEN);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	if (a.aux != ENOKEY)
		return a.aux;
	memcpy(blk, (uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN, SHR_PROTO_ADM_LEN);
	memset(blk + SHR_AUTH_CHALLENGE_LEN, 0, SHR_AUTH_PROOF_LEN);
	shr_auth_proof(&c->secret, blk, &aj, blk + SHR_AUTH_CHALLENGE_LEN);
	shr_proto_build(c->msg, &m, blk, SHR_PROTO_ADM_LEN);
	assert_int_equal(feed(c, ADDR(rank), SHR_PROTO_HDR_LEN + SHR_PROTO_ADM_LEN),
			 SHR_PROTO_OK);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	if (a.aux == 0) {
		/* the JOIN_ACK that admits is signed under the new incarnation's key */
		uint8_t key[SHR_MAC_KEY_LEN];

		assert_true(a.flags & SHR_FLAG_MAC);
		c->token = a.token;
		assert_int_equal(shr_mac_derive(c->secret.key, c->secret.len, JOB, a.token, key),
				 0);
		shr_mac_free(c->mac);
		c->mac = shr_mac_create(key);
		assert_non_null(c->mac);
		assert_int_equal(shr_mac_verify(c->mac, c->tx.buf, c->tx.len, NULL, NULL), 0);
	}
	return a.aux;
}

/* A member's DATA (values v + i) in c->msg, signed when sign; returns its length. */
static size_t
data_msg(struct ctx *c, uint16_t rank, int32_t v, int sign)
{
	uint32_t n = c->chunk != 0 ? c->chunk : CHUNK, i;
	struct shr_proto_msg m = {
		.type = SHR_MSG_DATA, .dtype = SHR_DTYPE_INT32, .op = SHR_OP_SUM, .rank = rank,
		.world = WORLD, .job = JOB, .slot = 0, .count = n, .step = 1,
		.token = c->token, .flags = sign ? SHR_FLAG_MAC : 0,
	};

	/* sign 2: the flag and a good CRC, the trailer left to the caller */

	for (i = 0; i < n; i++) {
		int32_t x = v + (int32_t)i;

		memcpy(c->msg + SHR_PROTO_HDR_LEN + 4 * i, &x, 4);
	}
	shr_proto_build(c->msg, &m, c->msg + SHR_PROTO_HDR_LEN, n * 4);
	if (sign != 1)
		return SHR_PROTO_HDR_LEN + n * 4;
	assert_int_equal(shr_mac_sign(c->mac, c->msg, SHR_PROTO_HDR_LEN + n * 4, rank,
				      ++c->ctr[rank]), 0);
	return SHR_PROTO_HDR_LEN + n * 4 + SHR_MAC_TRAILER_LEN;
}

static size_t
leave_msg(struct ctx *c, uint16_t rank, int sign)
{
	struct shr_proto_msg m = {
		.type = SHR_MSG_LEAVE, .rank = rank, .world = c->world != 0 ? c->world : WORLD,
		.job = JOB, .token = c->token, .flags = sign ? SHR_FLAG_MAC : 0,
	};

	shr_proto_build(c->msg, &m, NULL, 0);
	if (!sign)
		return SHR_PROTO_HDR_LEN;
	assert_int_equal(shr_mac_sign(c->mac, c->msg, SHR_PROTO_HDR_LEN, rank, ++c->ctr[rank]),
			 0);
	return SHR_PROTO_HDR_LEN + SHR_MAC_TRAILER_LEN;
}

static uint16_t
joined(const struct ctx *c)
{
	struct shr_agg_job_info info;
	uint32_t i;
	int rc;

	for (i = 0; (rc = shr_agg_job_info(c->agg, i, &info)) != -ENOENT; i++)
		if (rc == 1 && info.job == JOB)
			return info.joined;
	return 0;
}

/*
 * A rank replaced while the job fills (its process gave up, LEAVEs, another JOINs: the same
 * incarnation, so the same key): the new process's counter starts elsewhere (at random, not
 * at 1 again: the key would leak), and the box takes it (the rank's window starts again when
 * it binds the new process; it refused it as a replay).
 */
static void
test_rank_rebind_new_counter(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;
	uint8_t key[SHR_MAC_KEY_LEN];

	c->world = 3;
	assert_int_equal(join(c, 2, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	c->token = a.token;	/* the filling job's: its key already */
	assert_int_equal(shr_mac_derive(key_str, 32, JOB, a.token, key), 0);
	c->mac = shr_mac_create(key);
	assert_non_null(c->mac);
	/* the first process gives up: its LEAVE, signed high in its counter */
	c->ctr[0] = 1000000;
	assert_int_equal(feed(c, ADDR(0), leave_msg(c, 0, 1)), SHR_PROTO_OK);
	assert_int_equal(joined(c), 1);
	/* another process of rank 0: a new nonce, the same token; a low counter of its own */
	c->nonce_off = 0x100;
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	assert_true(a.token == c->token);
	c->ctr[0] = 4;
	assert_int_equal(feed(c, ADDR(0), leave_msg(c, 0, 1)), SHR_PROTO_OK);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	assert_int_equal(a.type, SHR_MSG_LEAVE_ACK);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_REPLAY], 0);
}

/*
 * A LEAVE names its process (offset: its JOIN's nonce). The signed LEAVE of a process of rank 0
 * that gave up while the job filled, replayed after another process of the rank joined (the
 * same incarnation, so its MAC verifies, and the rank's replay window started again), must not
 * unbind the new process; the new one's own LEAVE does.
 */
static void
test_old_leave_replayed(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a, l = {
		.type = SHR_MSG_LEAVE, .rank = 0, .world = 3, .job = JOB, .flags = SHR_FLAG_MAC,
	};
	uint8_t key[SHR_MAC_KEY_LEN], saved[BUF];
	size_t len = SHR_PROTO_HDR_LEN + SHR_MAC_TRAILER_LEN;

	c->world = 3;
	assert_int_equal(join(c, 2, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	c->token = a.token;
	assert_int_equal(shr_mac_derive(key_str, 32, JOB, a.token, key), 0);
	c->mac = shr_mac_create(key);
	assert_non_null(c->mac);
	/* the first process (nonce 0x1000) gives up */
	l.token = c->token;
	l.offset = 0x1000;
	shr_proto_build(c->msg, &l, NULL, 0);
	assert_int_equal(shr_mac_sign(c->mac, c->msg, SHR_PROTO_HDR_LEN, 0, 1000000), 0);
	memcpy(saved, c->msg, len);
	assert_int_equal(feed(c, ADDR(0), len), SHR_PROTO_OK);
	assert_int_equal(joined(c), 1);
	/* another process of rank 0 (nonce 0x1100) joins; the old LEAVE comes again */
	c->nonce_off = 0x100;
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(joined(c), 2);
	memcpy(c->msg, saved, len);
	assert_int_equal(feed(c, ADDR(0), len), SHR_PROTO_BAD_TOKEN);
	assert_int_equal(joined(c), 2);		/* the new process is still a member */
	/* the new process's own LEAVE */
	l.offset = 0x1100;
	shr_proto_build(c->msg, &l, NULL, 0);
	assert_int_equal(shr_mac_sign(c->mac, c->msg, SHR_PROTO_HDR_LEN, 0, 5), 0);
	assert_int_equal(feed(c, ADDR(0), len), SHR_PROTO_OK);
	assert_int_equal(joined(c), 1);
}

/*
 * A LEAVE naming a job this box does not run, under any token (another box's live one, an
 * earlier run's): never answered under that token's key (this box's counters would repeat
 * its nonces: GMAC's key leaks). The answer is not sent at all (a member would refuse it
 * unsigned).
 */
static void
test_no_signing_for_foreign_tokens(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m = {
		.type = SHR_MSG_LEAVE, .rank = 0, .world = WORLD, .job = 77, .token = 0x4242,
	};

	shr_proto_build(c->msg, &m, NULL, 0);
	(void)feed(c, ADDR(0), SHR_PROTO_HDR_LEN);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->tx.ack_len, 0);
}

static void
test_join_policy(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a, m = join_msg(0, 0);

	/* a member without --mac: refused with a clear status, counted, nothing made */
	shr_proto_build(c->msg, &m, NULL, 0);
	assert_int_equal(feed(c, ADDR(0), SHR_PROTO_HDR_LEN), SHR_PROTO_MAC_MISSING);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, EKEYREJECTED);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_MISSING], 1);
	assert_int_equal(joined(c), 0);
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);
	assert_int_equal(joined(c), 2);
}

static void
test_forged_replayed(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg r;
	uint8_t saved[BUF];
	size_t len, i;
	uint64_t rx_data;

	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);

	/* rank 0's real DATA, then its exact replay */
	len = data_msg(c, 0, 100, 1);
	memcpy(saved, c->msg, len);
	assert_int_equal(feed(c, ADDR(0), len), SHR_PROTO_OK);
	rx_data = c->st.data;
	assert_int_equal(rx_data, 1);
	memcpy(c->msg, saved, len);
	assert_int_equal(feed(c, ADDR(0), len), SHR_PROTO_MAC_REPLAY);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_REPLAY], 1);

	/* forged DATA for rank 1 with a good CRC: no MAC; a MAC with another payload; a tag of
	 * another key (the previous incarnation's): none touches the round */
	len = data_msg(c, 1, 5000, 0);
	assert_int_equal(feed(c, ADDR(1), len), SHR_PROTO_MAC_MISSING);
	len = data_msg(c, 1, 5000, 1);
	memcpy(saved, c->msg, len);
	for (i = 0; i < CHUNK * 4; i += 4)
		c->msg[SHR_PROTO_HDR_LEN + i] ^= 0x40;
	{
		struct shr_proto_msg m;

		/* the attacker fixes the CRC: it is not a MAC */
		assert_int_equal(shr_proto_validate(c->msg, len, NULL), SHR_PROTO_BAD_CRC);
		assert_int_equal(shr_proto_validate(saved, len, &m), SHR_PROTO_OK);
		shr_proto_build(c->msg, &m, c->msg + SHR_PROTO_HDR_LEN, CHUNK * 4);
		assert_int_equal(shr_proto_validate(c->msg, len, NULL), SHR_PROTO_OK);
	}
	assert_int_equal(feed(c, ADDR(1), len), SHR_PROTO_MAC_BAD);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_BAD], 1);
	{
		uint8_t other[SHR_MAC_KEY_LEN];
		struct shr_mac *o;

		assert_int_equal(shr_mac_derive(key_str, 32, JOB, c->token ^ 1, other), 0);
		o = shr_mac_create(other);
		len = data_msg(c, 1, 5000, 2);
		assert_int_equal(shr_mac_sign(o, c->msg, len, 1, 77), 0);
		shr_mac_free(o);
		assert_int_equal(feed(c, ADDR(1), len + SHR_MAC_TRAILER_LEN), SHR_PROTO_MAC_BAD);
	}
	/* rank 1's DATA signed with rank 0's sender id (not the rank): refused */
	len = data_msg(c, 1, 5000, 2);
	assert_int_equal(shr_mac_sign(c->mac, c->msg, len, 0, 999), 0);
	assert_int_equal(feed(c, ADDR(1), len + SHR_MAC_TRAILER_LEN), SHR_PROTO_MAC_BAD);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_BAD], 3);
	assert_int_equal(c->st.data, rx_data);	/* nothing reached the round */
	assert_int_equal(c->st.completed, 0);

	/* a forged LEAVE of rank 1 (good CRC, no MAC) and one with a bad tag: still a member */
	len = leave_msg(c, 1, 0);
	assert_int_equal(feed(c, ADDR(1), len), SHR_PROTO_MAC_MISSING);
	len = leave_msg(c, 1, 1);
	c->msg[len - 1] ^= 1;
	assert_int_equal(feed(c, ADDR(1), len), SHR_PROTO_MAC_BAD);
	assert_int_equal(joined(c), 2);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_MISSING], 2);

	/* rank 1's real DATA completes the round: the exact sum, signed for every member */
	len = data_msg(c, 1, 7, 1);
	assert_int_equal(feed(c, ADDR(1), len), SHR_PROTO_OK);
	assert_int_equal(c->st.completed, 1);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_true(r.flags & SHR_FLAG_MAC);
	assert_int_equal(c->tx.len, SHR_PROTO_HDR_LEN + CHUNK * 4 + SHR_MAC_TRAILER_LEN);
	{
		uint32_t snd;
		uint64_t ctr;

		assert_int_equal(shr_mac_verify(c->mac, c->tx.buf, c->tx.len, &snd, &ctr), 0);
		assert_int_equal(snd, SHR_MAC_SENDER_BOX | 0);
	}
	for (i = 0; i < CHUNK; i++) {
		int32_t x;

		memcpy(&x, (uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN + 4 * i, 4);
		assert_int_equal(x, 100 + 7 + 2 * (int32_t)i);
	}

	/* a real LEAVE, acked with the MAC; its replay is refused and changes nothing */
	len = leave_msg(c, 0, 1);
	memcpy(saved, c->msg, len);
	assert_int_equal(feed(c, ADDR(0), len), SHR_PROTO_OK);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_LEAVE_ACK);
	assert_int_equal(shr_mac_verify(c->mac, c->tx.buf, c->tx.len, NULL, NULL), 0);
	assert_int_equal(joined(c), 1);
	memcpy(c->msg, saved, len);
	assert_int_equal(feed(c, ADDR(0), len), SHR_PROTO_MAC_REPLAY);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_REPLAY], 2);
	assert_int_equal(c->st.leaves, 1);
}

/*
 * The checks that read only the header come before the GMAC: a DATA from another address than
 * its rank's (a copy of the member's real one, or a forgery) is refused as spoofed, takes no
 * counter from the rank's replay window (the member's own copy is still taken) and is not
 * counted as a bad tag.
 */
static void
test_source_before_tag(void **state)
{
	struct ctx *c = *state;
	uint8_t saved[BUF];
	size_t len;

	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);
	/* rank 0's real DATA, first from another address: spoofed */
	len = data_msg(c, 0, 100, 1);
	memcpy(saved, c->msg, len);
	assert_int_equal(feed(c, ADDR(5), len), SHR_PROTO_SPOOFED);
	/* then from rank 0's own: taken (verified first, its counter was spent: a replay) */
	memcpy(c->msg, saved, len);
	assert_int_equal(feed(c, ADDR(0), len), SHR_PROTO_OK);
	assert_int_equal(c->st.data, 1);
	/* a bad tag from another address: spoofed, not a bad tag */
	len = data_msg(c, 1, 5, 1);
	c->msg[len - 1] ^= 1;
	assert_int_equal(feed(c, ADDR(5), len), SHR_PROTO_SPOOFED);
	assert_int_equal(c->st.rejects[SHR_PROTO_SPOOFED], 2);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_BAD], 0);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_REPLAY], 0);
}

/* What the box sends (tx): a valid message of type, that verifies under the members' key. */
static struct shr_proto_msg
signed_msg(const struct ctx *c, uint8_t type)
{
	struct shr_proto_msg a;

	assert_true(c->tx.len > SHR_PROTO_HDR_LEN);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	assert_int_equal(a.type, type);
	assert_true(a.flags & SHR_FLAG_MAC);
	assert_int_equal(shr_mac_verify(c->mac, c->tx.buf, c->tx.len, NULL, NULL), 0);
	return a;
}

/* tx is the RESULT of the members' DATA (data_msg(), values v0 + i and v1 + i), signed. */
static void
assert_signed_sum(const struct ctx *c, int32_t v0, int32_t v1)
{
	uint32_t n = c->chunk != 0 ? c->chunk : CHUNK, i;
	struct shr_proto_msg r = signed_msg(c, SHR_MSG_RESULT);

	assert_int_equal(r.count, n);
	assert_int_equal(c->tx.len, SHR_PROTO_HDR_LEN + n * 4 + SHR_MAC_TRAILER_LEN);
	for (i = 0; i < n; i++) {
		int32_t x;

		memcpy(&x, (uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN + 4 * i, 4);
		assert_int_equal(x, v0 + v1 + 2 * (int32_t)i);
	}
}

/*
 * A static MAC job's incarnation is aborted (rank 1 silent) and the next one is keyed at once.
 * Its members hold the ended incarnation's key only: the ABORT, the ABORT told again to rank 1
 * (it lost it) when its DATA of the ended incarnation comes, and the LEAVE_ACK ENOENT of its
 * LEAVE are signed under that key; that DATA and LEAVE are answered, not refused as forged
 * under the new key (rank 1 would never learn of the abort, and wait its timeout).
 */
static void
test_static_abort_old_key(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_conf jc = {
		.job = JOB, .world = WORLD, .dtype = SHR_DTYPE_INT32, .window = 4,
		.chunk_elems = CHUNK, .ordered = 1, .mac = 1,
	};
	struct shr_proto_msg a;
	uint64_t old;

	assert_int_equal(shr_agg_job_add(c->agg, &jc), 0);
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);
	old = c->token;
	/* rank 0 opens a round, rank 1 never sends: the box aborts the incarnation */
	assert_int_equal(feed(c, ADDR(0), data_msg(c, 0, 100, 1)), SHR_PROTO_OK);
	c->now += TIMEOUT + 1;
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 1);
	a = signed_msg(c, SHR_MSG_ABORT);
	assert_true(a.token == old);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.aux, ETIMEDOUT);
	assert_int_equal(c->tx.ndst, WORLD);
	/* rank 1 lost it: its DATA of the ended incarnation is told the ABORT again */
	assert_int_equal(feed(c, ADDR(1), data_msg(c, 1, 7, 1)), SHR_PROTO_UNKNOWN_JOB);
	a = signed_msg(c, SHR_MSG_ABORT);
	assert_true(a.token == old);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.aux, ETIMEDOUT);
	assert_int_equal(c->tx.ndst, 1);
	assert_true(c->tx.dst[0] == ADDR(1));
	assert_int_equal(c->st.reaborts, 1);
	/* its LEAVE of the ended incarnation: gone (ENOENT), said under its key */
	assert_int_equal(feed(c, ADDR(1), leave_msg(c, 1, 1)), SHR_PROTO_OK);
	a = signed_msg(c, SHR_MSG_LEAVE_ACK);
	assert_true(a.token == old);
	assert_int_equal(a.aux, ENOENT);
	assert_int_equal(a.rank, 1);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_BAD], 0);
}

/*
 * A static job with mac = 1 on a box without --mac: the job's policy, not the box's, holds for
 * it. A member without --mac is refused at once (EKEYREJECTED), members with it are admitted;
 * a forged DATA (no tag) is refused; the RESULT is signed (shr_agg_tx_cap() makes room for the
 * trailer once the job is added).
 */
static void
test_static_mac_job_plain_box(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_conf jc = {
		.job = JOB, .world = WORLD, .dtype = SHR_DTYPE_INT32, .window = 4,
		.chunk_elems = CHUNK, .ordered = 1, .mac = 1,
	};
	size_t cap = shr_agg_tx_cap(c->agg);

	assert_int_equal(shr_agg_job_add(c->agg, &jc), 0);
	assert_int_equal(join(c, 0, 0), EKEYREJECTED);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_MISSING], 1);
	assert_int_equal(joined(c), 0);
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);
	assert_int_equal(joined(c), WORLD);
	assert_int_equal(feed(c, ADDR(1), data_msg(c, 1, 5000, 0)), SHR_PROTO_MAC_MISSING);
	assert_int_equal(c->st.data, 0);
	assert_int_equal(feed(c, ADDR(0), data_msg(c, 0, 100, 1)), SHR_PROTO_OK);
	assert_int_equal(feed(c, ADDR(1), data_msg(c, 1, 7, 1)), SHR_PROTO_OK);
	assert_int_equal(c->st.completed, 1);
	assert_signed_sum(c, 100, 7);
	assert_int_equal(shr_agg_tx_cap(c->agg), cap + SHR_PROTO_MAC_LEN);
}

/*
 * shouter-agg sizes its tx buffers by shr_agg_tx_cap(): a MAC job at the largest chunk (the
 * box's max_elems) gets its RESULT, signed, in a buffer of just that size (were there no room
 * for the trailer, it would not be sent and the members would wait forever).
 */
static void
test_full_chunk_fits_tx_cap(void **state)
{
	struct ctx *c = *state;

	c->tx.cap = shr_agg_tx_cap(c->agg);	/* setup: at most the fixture's buffer */
	c->chunk = 64;				/* max_elems */
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);
	assert_int_equal(feed(c, ADDR(0), data_msg(c, 0, 100, 1)), SHR_PROTO_OK);
	assert_int_equal(feed(c, ADDR(1), data_msg(c, 1, -3, 1)), SHR_PROTO_OK);
	assert_int_equal(c->st.completed, 1);
	assert_signed_sum(c, 100, -3);
}

/*
 * A static MAC job with configured members runs again with new processes (the members stay
 * bound from one incarnation to the next). The new processes' counters start anywhere (at
 * random), also below the last run's: the box takes their DATA under the new key (refused as
 * replays, the job could never run again). The first run's last LEAVE_ACK, sent once the next
 * incarnation is keyed, is signed under the first run's key.
 */
static void
test_fixed_job_next_run(void **state)
{
	struct ctx *c = *state;
	uint64_t addrs[WORLD] = { ADDR(0), ADDR(1) };
	struct shr_agg_job_conf jc = {
		.job = JOB, .world = WORLD, .dtype = SHR_DTYPE_INT32, .window = 4,
		.chunk_elems = CHUNK, .addrs = addrs, .ordered = 1, .mac = 1,
	};
	struct shr_proto_msg a;
	uint64_t old;

	assert_int_equal(shr_agg_job_add(c->agg, &jc), 0);
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), 0);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);
	old = c->token;
	/* the first run: rank 0's counter is high; a round, then both leave */
	c->ctr[0] = 1000000;
	assert_int_equal(feed(c, ADDR(0), data_msg(c, 0, 1, 1)), SHR_PROTO_OK);
	assert_int_equal(feed(c, ADDR(1), data_msg(c, 1, 2, 1)), SHR_PROTO_OK);
	assert_signed_sum(c, 1, 2);
	assert_int_equal(feed(c, ADDR(0), leave_msg(c, 0, 1)), SHR_PROTO_OK);
	a = signed_msg(c, SHR_MSG_LEAVE_ACK);
	assert_int_equal(a.aux, 0);
	assert_int_equal(feed(c, ADDR(1), leave_msg(c, 1, 1)), SHR_PROTO_OK);
	a = signed_msg(c, SHR_MSG_LEAVE_ACK);
	assert_true(a.token == old);
	assert_int_equal(a.aux, 0);
	assert_int_equal(c->st.leaves, 2);
	/* new processes of both ranks join the next incarnation; rank 0's counter is low */
	c->nonce_off = 0x100;
	memset(c->ctr, 0, sizeof(c->ctr));
	c->ctr[0] = 4;
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), 0);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);
	assert_true(c->token != old);
	assert_int_equal(feed(c, ADDR(0), data_msg(c, 0, 30, 1)), SHR_PROTO_OK);
	assert_int_equal(feed(c, ADDR(1), data_msg(c, 1, 40, 1)), SHR_PROTO_OK);
	assert_int_equal(c->st.completed, 2);
	assert_signed_sum(c, 30, 40);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_REPLAY], 0);
}

/*
 * A static MAC job with its own secret (another than the box's default): its members prove
 * and sign with the job's secret, the box keys the job with it: their DATA are taken, the sum
 * is exact, and the RESULT verifies under the job secret's key (under the box default's, it
 * does not: the members hold only the job's).
 */
static void
test_static_job_own_secret(void **state)
{
	static const char job_key[] = "a-secret-of-this-static-job-only";
	struct ctx *c = *state;
	struct shr_auth_secret js;
	struct shr_agg_job_conf jc = {
		.job = JOB, .world = WORLD, .dtype = SHR_DTYPE_INT32, .window = 4,
		.chunk_elems = CHUNK, .ordered = 1, .mac = 1, .secret = &js,
	};
	uint8_t key[SHR_MAC_KEY_LEN];
	struct shr_mac *box_default;

	assert_int_equal(shr_auth_secret_set(&js, job_key, 32), 0);
	assert_int_equal(shr_agg_job_add(c->agg, &jc), 0);
	c->secret = js;		/* what the members hold */
	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);	/* its JOIN_ACK verified: job key */
	assert_int_equal(feed(c, ADDR(0), data_msg(c, 0, 12, 1)), SHR_PROTO_OK);
	assert_int_equal(feed(c, ADDR(1), data_msg(c, 1, -40, 1)), SHR_PROTO_OK);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_BAD], 0);
	assert_int_equal(c->st.completed, 1);
	assert_signed_sum(c, 12, -40);
	assert_int_equal(shr_mac_derive(key_str, 32, JOB, c->token, key), 0);
	box_default = shr_mac_create(key);
	assert_non_null(box_default);
	assert_int_not_equal(shr_mac_verify(box_default, c->tx.buf, c->tx.len, NULL, NULL), 0);
	shr_mac_free(box_default);
}

/*
 * The box keeps a replay window per (rank, context): rank 1's DATA with a counter far above
 * rank 0's (counters start at random) does not move rank 0's window of the control context: rank
 * 0's LEAVE, its counter just past its DATA's, is taken and acknowledged, signed.
 */
static void
test_windows_per_rank_and_context(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;

	assert_int_equal(join(c, 0, SHR_FLAG_MAC), EINPROGRESS);
	assert_int_equal(join(c, 1, SHR_FLAG_MAC), 0);
	c->ctr[0] = 10;
	c->ctr[1] = 1000000;
	assert_int_equal(feed(c, ADDR(0), data_msg(c, 0, 1, 1)), SHR_PROTO_OK);
	assert_int_equal(feed(c, ADDR(1), data_msg(c, 1, 2, 1)), SHR_PROTO_OK);
	assert_signed_sum(c, 1, 2);
	assert_int_equal(feed(c, ADDR(0), leave_msg(c, 0, 1)), SHR_PROTO_OK);
	a = signed_msg(c, SHR_MSG_LEAVE_ACK);
	assert_int_equal(a.aux, 0);
	assert_int_equal(c->st.leaves, 1);
	assert_int_equal(c->st.rejects[SHR_PROTO_MAC_REPLAY], 0);
	assert_int_equal(joined(c), 1);
}

/* A MAC job needs a secret and no fixed token. */
static void
test_policy_checks(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_params p = { .mac = 1 };
	struct shr_agg_job_conf jc = {
		.job = 3, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 2, .chunk_elems = 8,
		.mac = 1, .token = 5,
	};
	struct shr_agg *a;

	errno = 0;
	assert_null(shr_agg_create(&p));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(shr_agg_job_add(c->agg, &jc), -EINVAL);
	jc.token = 0;
	assert_int_equal(shr_agg_job_add(c->agg, &jc), 0);
	p.mac = 0;
	a = shr_agg_create(&p);
	assert_non_null(a);
	assert_int_equal(shr_agg_job_add(a, &jc), -EINVAL);	/* no secret anywhere */
	shr_agg_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_join_policy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rank_rebind_new_counter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_leave_replayed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_signing_for_foreign_tokens, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_forged_replayed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source_before_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_policy_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_abort_old_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_mac_job_plain_box, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_full_chunk_fits_tx_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fixed_job_next_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_job_own_secret, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_windows_per_rank_and_context, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("agg_mac", tests, NULL, NULL);
}
