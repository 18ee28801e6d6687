/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * lib/comm's per-job MAC (shr_comm_mac.c) while a rank joins, through the fake driver of
 * comm_test.h and a real box requiring the MAC: the keys a rank takes from the tokens the box
 * announces. A rank told one token while its job filled (JOIN_ACK EINPROGRESS: a box that
 * restarted since, or an incarnation that changed) and admitted under another signs its
 * DATA and LEAVE and checks the RESULTs under the key of the token that admitted it; an
 * admission signed under the old key, or by a member, or unsigned, is refused; a box that
 * restarted before it admitted (its counters from 1 again) is taken under its new key with
 * replay windows anew; a rank that gives up while the job fills LEAVEs under the key of the
 * token its own JOIN was told, whatever another process's EINPROGRESS says.
 */

#include <shr_mac.h>

#include "comm_test.h"

#define TOKEN_A 0x5eedc0de00000a0aull	/* the token of the JOIN_ACK EINPROGRESS */

/* What the JOIN_ACK hooks below were told to do, and what they saw. */
static struct {
	const struct shr_auth_secret *s;
	bool lose_all;		/* the activation every member gets (offset 0) is lost */
	unsigned int forge;	/* admissions answering the comm's JOIN to forge */
	unsigned int forged;
	uint64_t joins_at_forged[3];	/* f->joins when each forged one was queued */
	unsigned int admits;	/* answers to the comm's JOIN that admit, passed as sent */
	uint64_t joins_at_admit;	/* f->joins when the first of them was queued */
	unsigned int decoys;	/* EINPROGRESS answering the comm seen (ack_decoy) */
	const struct shr_agg_params *restart;	/* ack_restart's new box */
	uint64_t token_1;	/* the token of the box that restarted */
} hk;

/* A schedule for the key of token (the job's secret s, job F_JOB). */
static struct shr_mac *
key_of(const struct shr_auth_secret *s, uint64_t token)
{
	uint8_t key[SHR_MAC_KEY_LEN];
	struct shr_mac *mac;

	assert_int_equal(shr_mac_derive(s->key, s->len, F_JOB, token, key), 0);
	mac = shr_mac_create(key);
	assert_non_null(mac);
	return mac;
}

/* Whether m (whole, trailer included) verifies under the key of token; its sender in *snd. */
static bool
signed_under(const struct shr_auth_secret *s, uint64_t token, const struct f_msg *m,
	     uint32_t *snd)
{
	struct shr_mac *mac = key_of(s, token);
	int rc = shr_mac_verify(mac, m->data, m->len, snd, NULL);

	shr_mac_free(mac);
	return rc == 0;
}

/*
 * m (signed) signed again under the key of token, with its own counter, as sender snd (0: its
 * own).
 */
static void
resign(const struct shr_auth_secret *s, uint64_t token, struct f_msg *m, uint32_t snd)
{
	const uint8_t *t = m->data + m->len - SHR_MAC_TRAILER_LEN;
	struct shr_mac *mac = key_of(s, token);
	uint64_t ctr = 0;
	uint32_t own = 0;
	unsigned int i;

	for (i = 0; i < 4; i++)
		own = own << 8 | t[i];
	for (i = 4; i < 12; i++)
		ctr = ctr << 8 | t[i];
	if (snd == 0)
		snd = own;
	assert_int_equal(shr_mac_sign(mac, m->data, m->len - SHR_MAC_TRAILER_LEN, snd, ctr), 0);
	shr_mac_free(mac);
}

/*
 * The JOIN_ACKs that admit the comm (aux 0): the activation every member gets lost if
 * lose_all; of those answering its own JOIN (they echo its nonce), the first forged under
 * the key of TOKEN_A (the box's sender and counter), the second signed under the key of
 * their own token but by rank 3 (a member: every member has the job's key), the third sent
 * without the MAC, while forge says.
 */
static bool
ack_admit(struct fake *f, struct f_msg *m)
{
	struct shr_proto_msg a;

	assert_int_equal(shr_proto_validate(m->data, m->len, &a), SHR_PROTO_OK);
	if (a.aux != 0)
		return true;
	assert_true(a.flags & SHR_FLAG_MAC);
	if (a.offset == 0)
		return !hk.lose_all;
	assert_int_equal(a.offset, f->join_nonce);
	if (hk.forged < hk.forge) {
		if (hk.forged == 0) {
			resign(hk.s, TOKEN_A, m, 0);
		} else if (hk.forged == 1) {
			resign(hk.s, a.token, m, 3);	/* rank 3 */
		} else {
			assert_int_equal(m->len, SHR_PROTO_HDR_LEN + SHR_MAC_TRAILER_LEN);
			a.flags &= (uint16_t)~SHR_FLAG_MAC;
			shr_proto_build(m->data, &a, NULL, 0);
			m->len = SHR_PROTO_HDR_LEN;
		}
		hk.joins_at_forged[hk.forged++] = f->joins;
		return true;
	}
	if (hk.admits++ == 0)
		hk.joins_at_admit = f->joins;
	return true;
}

/* A DATA of the comm and a RESULT of the box: signed under the key of token b, not a's. */
static void
check_keys(const struct fake *f, const struct shr_auth_secret *s, uint64_t a, uint64_t b)
{
	uint32_t snd;

	assert_true(f->last_data.len > 0 && f->last_result.len > 0);
	assert_true(signed_under(s, b, &f->last_data, &snd));
	assert_int_equal(snd, 0);	/* rank 0 */
	assert_false(signed_under(s, a, &f->last_data, &snd));
	assert_true(signed_under(s, b, &f->last_result, &snd));
	assert_true(snd & SHR_MAC_SENDER_BOX);
	assert_false(signed_under(s, a, &f->last_result, &snd));
}

/*
 * A rank told token A while its job filled (JOIN_ACK EINPROGRESS answering its JOIN: a box
 * that restarted since, or an incarnation that changed) and admitted under the box's token B
 * takes B's key: with the activation every member gets (offset 0; it verifies under B's
 * key, the rank keys B, and takes the next JOIN_ACK answering its JOIN) and without it (lost:
 * the JOIN_ACK answering its JOIN is checked under B's key and admits). Its DATA are signed
 * under B's key (the box refuses any other: the fake fails the test), the RESULTs the box
 * signs under B's are taken (nothing refused), the allreduce is exact, and its LEAVE is taken
 * (its LEAVE_ACK comes).
 */
static void
test_mac_admit_new_token(void **state)
{
	unsigned int lose;

	(void)state;
	for (lose = 0; lose < 2; lose++) {
		struct fake *f = fake_new(1, 50 + lose);
		struct shr_auth_secret s;
		struct shr_comm_stats st;
		struct shr_comm *c;
		int32_t x[3 * F_CHUNK], y[3 * F_CHUNK];
		unsigned int i;

		memset(&hk, 0, sizeof(hk));
		hk.s = &s;
		hk.lose_all = lose != 0;
		f->inprog_token = TOKEN_A;
		f->ack_edit = ack_admit;
		c = mac_comm_new(f, &s, F_CHUNK, NULL, 0);
		if (c == NULL)
			fail_msg("create (activation %s): %s", lose ? "lost" : "taken",
				 strerror(errno));
		assert_int_equal(f->inprog_token, 0);	/* EINPROGRESS A came first */
		assert_true(hk.admits >= 1);
		for (i = 0; i < 3 * F_CHUNK; i++)
			x[i] = (int32_t)i * 13 - 999;
		assert_int_equal(shr_comm_allreduce(c, x, y, 3 * F_CHUNK, SHR_OP_SUM), 0);
		assert_memory_equal(x, y, sizeof(x));	/* world 1: the sum is the input */
		assert_true(f->token != 0 && f->token != TOKEN_A);	/* B, the box's */
		check_keys(f, &s, TOKEN_A, f->token);
		shr_comm_stats_get(c, &st);
		assert_int_equal(st.mac_bad, 0);
		assert_int_equal(st.mac_missing, 0);
		assert_int_equal(st.mac_replay, 0);
		assert_int_equal(shr_comm_destroy(c), 0);
		fake_free(f);
	}
}

/*
 * After EINPROGRESS A (the rank keyed A), an admission carrying the box's token B but signed
 * under A's key (someone who keeps an old incarnation's key, or a box of an old run), then
 * one signed under B's key by a member (every member holds it), then one without the MAC,
 * each answering the rank's JOIN: all refused (mac_bad, mac_bad, mac_missing), none admits
 * (the rank JOINs again after each); the box's own next answer admits, and the rank's DATA
 * are signed under B's key, its allreduce exact. The activation every member gets is lost,
 * so that the answers to the JOIN are the rank's only admissions.
 */
static void
test_mac_admit_old_key_refused(void **state)
{
	struct fake *f = fake_new(1, 52);
	struct shr_auth_secret s;
	struct shr_comm_stats st;
	struct shr_comm *c;
	int32_t x[2 * F_CHUNK], y[2 * F_CHUNK];
	unsigned int i;

	(void)state;
	memset(&hk, 0, sizeof(hk));
	hk.s = &s;
	hk.lose_all = true;
	hk.forge = 3;
	f->inprog_token = TOKEN_A;
	f->ack_edit = ack_admit;
	c = mac_comm_new(f, &s, F_CHUNK, NULL, 0);
	if (c == NULL)
		fail_msg("create: %s", strerror(errno));
	assert_int_equal(hk.forged, 3);
	assert_int_equal(hk.admits, 1);
	/* a JOIN after each forged admission: it did not admit */
	assert_true(hk.joins_at_forged[0] < hk.joins_at_forged[1]);
	assert_true(hk.joins_at_forged[1] < hk.joins_at_forged[2]);
	assert_true(hk.joins_at_forged[2] < hk.joins_at_admit);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_bad, 2);
	assert_int_equal(st.mac_missing, 1);
	for (i = 0; i < 2 * F_CHUNK; i++)
		x[i] = 5 - 3 * (int32_t)i;
	assert_int_equal(shr_comm_allreduce(c, x, y, 2 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	check_keys(f, &s, TOKEN_A, f->token);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_bad, 2);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/* The box restarts (a new token, its counters from 1) once its first activation is queued. */
static bool
ack_restart(struct fake *f, struct f_msg *m)
{
	struct shr_proto_msg a;

	assert_int_equal(shr_proto_validate(m->data, m->len, &a), SHR_PROTO_OK);
	if (a.aux == 0 && a.offset == 0 && hk.token_1 == 0) {
		hk.token_1 = a.token;
		f_box_replace(f, hk.restart);
	}
	return true;
}

/*
 * A box that restarts after its activation reached the rank (world 1: the rank is told the
 * token only by the answer to its JOIN, which the activation is not, so it JOINs again; the
 * activation verified: its key is the rank's): the new box answers the rank's next JOIN with
 * a challenge (the old one is stale), admits it under a new token with its counters from 1
 * again, the same as the old box's: the rank takes that admission (its replay windows start
 * anew with the key, nothing refused), signs under the new token's key, and its allreduce is
 * exact.
 */
static void
test_mac_box_restart_windows(void **state)
{
	struct fake *f = fake_new(1, 54);
	struct shr_auth_secret s;
	struct shr_comm_stats st;
	struct shr_agg_params ap;
	struct shr_comm_params p;
	struct shr_comm *c;
	int32_t x[2 * F_CHUNK], y[2 * F_CHUNK];
	unsigned int i;

	(void)state;
	memset(&hk, 0, sizeof(hk));
	mac_params(f, &s, F_CHUNK, &ap, &p);
	f_box_replace(f, &ap);
	hk.restart = &ap;
	f->ack_edit = ack_restart;
	f->stale_auth_ok = 1;
	c = shr_comm_create(&p);
	if (c == NULL)
		fail_msg("create: %s", strerror(errno));
	assert_int_equal(f->stale_auth_ok, 0);	/* the new box refused the old challenge */
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_replay, 0);
	assert_int_equal(st.mac_bad, 0);
	for (i = 0; i < 2 * F_CHUNK; i++)
		x[i] = 77 * (int32_t)i - 4000;
	assert_int_equal(shr_comm_allreduce(c, x, y, 2 * F_CHUNK, SHR_OP_SUM), 0);
	assert_memory_equal(x, y, sizeof(x));
	assert_true(hk.token_1 != 0 && f->token != hk.token_1);
	check_keys(f, &s, hk.token_1, f->token);
	shr_comm_stats_get(c, &st);
	assert_int_equal(st.mac_replay, 0);
	assert_int_equal(st.mac_bad, 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * The first EINPROGRESS answering the comm's JOIN is followed by one answering another process
 * of its rank (another nonce, another token: anyone who saw a JOIN of the job can send one);
 * the later ones are lost (the fake box never ticks, so never gives up the job: a box that
 * says it still waits would keep the rank waiting).
 */
static bool
ack_decoy(struct fake *f, struct f_msg *m)
{
	struct shr_proto_msg a;
	struct f_msg *q;

	assert_int_equal(shr_proto_validate(m->data, m->len, &a), SHR_PROTO_OK);
	if (a.aux != EINPROGRESS)
		return true;
	if (hk.decoys != 0)
		return false;
	assert_true(f->rx_n + 2 <= F_RXQ);
	q = malloc(sizeof(*q));
	assert_non_null(q);
	memcpy(q, m, sizeof(*q));
	f->rxq[f->rx_n++] = q;
	a.offset = ~a.offset;
	a.token = TOKEN_A;
	q = malloc(sizeof(*q));
	assert_non_null(q);
	shr_proto_build(q->data, &a, NULL, 0);
	q->len = SHR_PROTO_HDR_LEN;
	f->rxq[f->rx_n++] = q;
	hk.decoys++;
	return false;	/* queued above */
}

/*
 * A rank whose job never fills (the other rank never JOINs) gives up (past its timeout and
 * the box's stated wait) and LEAVEs: its LEAVE carries the token the box told it (EINPROGRESS)
 * and is signed under that token's key, not under another's that an EINPROGRESS answering
 * another process named after it: the box takes it (it refuses a LEAVE of the job unsigned
 * or signed under another key: the fake fails the test) and frees the job, which no rank
 * holds any more.
 */
static void
test_mac_give_up_leave_signed(void **state)
{
	struct fake *f = fake_new(2, 53);
	struct shr_auth_secret s;
	struct shr_agg_job_info ji;
	struct shr_agg_params ap;
	struct shr_comm_params p;
	uint32_t i;
	int rc;

	(void)state;
	memset(&hk, 0, sizeof(hk));
	f->peers_late_ns = UINT64_MAX;	/* the other rank never JOINs */
	f->ack_edit = ack_decoy;
	mac_params(f, &s, F_CHUNK, &ap, &p);
	ap.job_timeout_ns = 1000000;	/* the box waits 4 ms for the job to fill... */
	p.timeout_ms = 20;		/* ...the rank 20 (and the margin past the box's) */
	f_box_replace(f, &ap);
	errno = 0;
	assert_null(shr_comm_create(&p));
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(hk.decoys, 1);
	assert_int_equal(f->leaves, 1);
	assert_int_equal(f->st.leaves, 1);
	assert_int_equal(f->st.jobs_freed, 1);
	for (i = 0; (rc = shr_agg_job_info(f->agg, i, &ji)) != -ENOENT; i++)
		assert_int_equal(rc, 0);	/* no job left */
	fake_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mac_admit_new_token),
		cmocka_unit_test(test_mac_admit_old_key_refused),
		cmocka_unit_test(test_mac_box_restart_windows),
		cmocka_unit_test(test_mac_give_up_leave_signed),
	};

	return cmocka_run_group_tests_name("comm_mac", tests, NULL, NULL);
}
