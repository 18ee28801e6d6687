/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The aggregator's admission of JOINs (allowlist, secrets by challenge-response), driven
 * through shr_agg_input() with crafted messages. Each new reject reason: NOT_ALLOWED,
 * BAD_AUTH, STALE_AUTH; and that neither a refused JOIN nor an unproven one disturbs a job.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <shr_agg.h>
#include <shr_auth.h>
#include <shr_proto.h>

#define T_JOB 9
#define T_STATIC_JOB 10
#define T_WORLD 2
#define T_WINDOW 4
#define T_CHUNK 8
#define T_TIMEOUT 1000000000ull	/* 1 s */
#define T_TTL 2000000000ull	/* challenges: 2 s */
#define T_MAXBUF (SHR_PROTO_HDR_LEN + 64 * 4)

#define ADDR(r) SHR_AGG_ADDR(0xc6120001u + (r), 40000u)	/* 198.18.0.1 + r */
#define OUTSIDER SHR_AGG_ADDR(0xc0a80001u, 40000u)	/* 192.168.0.1 */

static const char good_key[] = "the-default-secret-of-this-box!!";
static const char job_key[] = "static-job-10-has-its-own-secret";
static const char bad_key[] = "not-the-secret-of-this-box-at-al";

struct ctx {
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	uint8_t txbuf[T_MAXBUF];
	uint8_t msg[T_MAXBUF];
	uint64_t now;
	struct shr_auth_secret good, job, bad;
};

static int
setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct shr_auth_acl acl = { 0 };
	struct shr_agg_params p = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.lanes = 1, .job_timeout_ns = T_TIMEOUT, .auth_ttl_ns = T_TTL,
		.allow = &acl,
	};
	struct shr_agg_job_conf jc = {
		.job = T_STATIC_JOB, .world = T_WORLD, .dtype = SHR_DTYPE_INT32,
		.window = T_WINDOW, .chunk_elems = T_CHUNK, .ordered = 1,
	};

	if (c == NULL)
		return -1;
	assert_int_equal(shr_auth_secret_set(&c->good, good_key, 32), 0);
	assert_int_equal(shr_auth_secret_set(&c->job, job_key, 32), 0);
	assert_int_equal(shr_auth_secret_set(&c->bad, bad_key, 32), 0);
	assert_int_equal(shr_auth_acl_add(&acl, "198.18.0.0/15"), 0);
	p.secret = &c->good;
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	/* The caller's copies need not outlive shr_agg_create(). */
	memset(&acl, 0xff, sizeof(acl));
	jc.secret = &c->job;
	assert_int_equal(shr_agg_job_add(c->agg, &jc), 0);
	c->tx.buf = c->txbuf;
	c->tx.cap = sizeof(c->txbuf);
	c->now = 100 * T_TTL;
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx *c = *state;

	shr_agg_free(c->agg);
	free(c);
	return 0;
}

static struct shr_proto_msg
join_msg(uint32_t job, uint16_t rank, uint64_t nonce)
{
	struct shr_proto_msg m = {
		.type = SHR_MSG_JOIN, .dtype = SHR_DTYPE_INT32, .job = job, .rank = rank,
		.world = T_WORLD, .slot = T_WINDOW, .count = T_CHUNK, .token = nonce,
	};

	return m;
}

/* Feed a JOIN from src, with the admission block adm (NULL: none). */
static enum shr_proto_reason
feed_join(struct ctx *c, uint64_t src, const struct shr_proto_msg *m, const uint8_t *adm)
{
	size_t plen = adm != NULL ? SHR_PROTO_ADM_LEN : 0;

	shr_proto_build(c->msg, m, adm, plen);
	if (plen != 0)
		memcpy(c->msg + SHR_PROTO_HDR_LEN, adm, plen);
	return shr_agg_input(c->agg, src, c->msg, SHR_PROTO_HDR_LEN + plen, c->now, &c->tx,
			     &c->st);
}

/* The reply in c->tx: a JOIN_ACK to src alone, for m's nonce; its status and block. */
static uint32_t
reply_of(struct ctx *c, uint64_t src, const struct shr_proto_msg *m, uint8_t *block)
{
	struct shr_proto_msg a;

	assert_true(c->tx.len > 0);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_true(a.offset == m->token);
	if (a.aux != 0 || c->tx.ndst == 1)
		assert_true(c->tx.ndst == 1 && c->tx.dst[0] == src);
	if (a.aux == ENOKEY) {
		assert_int_equal(c->tx.len, SHR_PROTO_HDR_LEN + SHR_PROTO_ADM_LEN);
		if (block != NULL)
			memcpy(block, (const uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN,
			       SHR_PROTO_ADM_LEN);
	} else {
		assert_int_equal(c->tx.len, SHR_PROTO_HDR_LEN);
	}
	return a.aux;
}

/* What a member does: JOIN, take the challenge, answer it with the proof of secret s. */
static enum shr_proto_reason
join_with(struct ctx *c, uint64_t src, const struct shr_proto_msg *m,
	  const struct shr_auth_secret *s, uint8_t *block)
{
	struct shr_auth_join aj = {
		.job = m->job, .rank = m->rank, .world = m->world, .nonce = m->token,
		.dtype = m->dtype, .chunk = m->count, .window = m->slot, .flags = m->flags,
		.feedback = m->feedback, .root = m->root, .tensor = m->tensor,
	};

	assert_int_equal(feed_join(c, src, m, NULL), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, src, m, block), ENOKEY);
	memset(block + SHR_AUTH_CHALLENGE_LEN, 0, SHR_AUTH_PROOF_LEN);
	shr_auth_proof(s, block, &aj, block + SHR_AUTH_CHALLENGE_LEN);
	return feed_join(c, src, m, block);
}

static uint32_t
njobs(const struct ctx *c)
{
	struct shr_agg_job_info info;
	uint32_t i, n = 0;
	int rc;

	for (i = 0; (rc = shr_agg_job_info(c->agg, i, &info)) != -ENOENT; i++)
		n += rc == 1;
	return n;
}

static const struct shr_agg_job_info *
job_info(const struct ctx *c, uint32_t job)
{
	static struct shr_agg_job_info info;
	uint32_t i;

	int rc;

	for (i = 0; (rc = shr_agg_job_info(c->agg, i, &info)) != -ENOENT; i++)
		if (rc == 1 && info.job == job)
			return &info;
	return NULL;
}

/*
 * Someone on the path resends a member's proven JOIN with a field changed that the box acts
 * on (a result group claimed, a smaller path chunk, other tree ranks): refused, not admitted
 * (the proof covered job, rank, world, nonce, dtype, chunk and window only).
 */
static void
test_proof_covers_join(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m = join_msg(T_JOB, 0, 0x2001), t;
	uint8_t block[SHR_PROTO_ADM_LEN];
	unsigned int k;

	assert_int_equal(join_with(c, ADDR(0), &m, &c->good, block), SHR_PROTO_OK);
	for (k = 0; k < 4; k++) {
		t = m;
		if (k == 0)
			t.flags |= SHR_FLAG_GROUP;
		else if (k == 1)
			t.feedback = 4;
		else if (k == 2)
			t.root = 7;
		else
			t.tensor = 2;
		assert_int_not_equal(feed_join(c, ADDR(0), &t, block), SHR_PROTO_OK);
	}
	assert_int_equal(c->st.rejects[SHR_PROTO_STALE_AUTH] + c->st.rejects[SHR_PROTO_BAD_AUTH],
			 4);
}

/* A member outside the allowlist: refused with EPERM, counted, no job made. */
static void
test_not_allowed(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m = join_msg(T_JOB, 0, 0x1001);
	uint8_t block[SHR_PROTO_ADM_LEN];

	assert_int_equal(feed_join(c, OUTSIDER, &m, NULL), SHR_PROTO_NOT_ALLOWED);
	assert_int_equal(reply_of(c, OUTSIDER, &m, NULL), EPERM);
	assert_int_equal(c->st.rejects[SHR_PROTO_NOT_ALLOWED], 1);
	assert_int_equal(c->st.challenges, 0);	/* not even a challenge */
	assert_int_equal(njobs(c), 1);		/* the static job only */
	/* Even with a proof of the right secret. */
	assert_int_equal(join_with(c, ADDR(0), &m, &c->good, block), SHR_PROTO_OK);
	assert_int_equal(feed_join(c, OUTSIDER, &m, block), SHR_PROTO_NOT_ALLOWED);
	assert_int_equal(c->st.rejects[SHR_PROTO_NOT_ALLOWED], 2);
}

/* Without the block: a challenge, nothing held; with the right proof: joined. */
static void
test_challenge_then_join(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m0 = join_msg(T_JOB, 0, 0x2001), m1 = join_msg(T_JOB, 1, 0x2002);
	uint8_t block[SHR_PROTO_ADM_LEN];

	assert_int_equal(feed_join(c, ADDR(0), &m0, NULL), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, ADDR(0), &m0, block), ENOKEY);
	assert_int_equal(c->tx.unproven, 1);	/* taken, but its source proves nothing */
	assert_int_equal(c->st.challenges, 1);
	assert_int_equal(c->st.joins, 0);
	assert_int_equal(njobs(c), 1);		/* a challenge holds nothing */
	for (unsigned int i = SHR_AUTH_CHALLENGE_LEN; i < SHR_PROTO_ADM_LEN; i++)
		assert_int_equal(block[i], 0);

	assert_int_equal(join_with(c, ADDR(0), &m0, &c->good, block), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, ADDR(0), &m0, NULL), EINPROGRESS);
	assert_int_equal(c->tx.unproven, 0);	/* proven: the member's address */
	assert_int_equal(c->st.joins, 1);
	assert_int_equal(join_with(c, ADDR(1), &m1, &c->good, block), SHR_PROTO_OK);
	assert_int_equal(c->tx.ndst, T_WORLD);	/* the JOIN_ACK to every member */
	assert_int_equal(c->st.joins, 2);
	assert_true(job_info(c, T_JOB) != NULL && job_info(c, T_JOB)->active);
	/* The member's own JOIN again (its answer lost): the same, no new incarnation. */
	assert_int_equal(feed_join(c, ADDR(1), &m1, block), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, ADDR(1), &m1, NULL), 0);
	assert_int_equal(c->st.incarnations, 0);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_AUTH] + c->st.rejects[SHR_PROTO_STALE_AUTH],
			 0);
}

/* A wrong secret: EACCES, counted, no job made; the static job wants its own secret. */
static void
test_bad_auth(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m = join_msg(T_JOB, 0, 0x3001), s = join_msg(T_STATIC_JOB, 0, 0x3002);
	uint8_t block[SHR_PROTO_ADM_LEN];

	assert_int_equal(join_with(c, ADDR(0), &m, &c->bad, block), SHR_PROTO_BAD_AUTH);
	assert_int_equal(reply_of(c, ADDR(0), &m, NULL), EACCES);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_AUTH], 1);
	assert_int_equal(njobs(c), 1);
	assert_int_equal(c->st.jobs_created, 0);
	/* A zero proof (a member that echoes the challenge without answering it). */
	memset(block + SHR_AUTH_CHALLENGE_LEN, 0, SHR_AUTH_PROOF_LEN);
	assert_int_equal(feed_join(c, ADDR(0), &m, block), SHR_PROTO_BAD_AUTH);

	assert_int_equal(join_with(c, ADDR(0), &s, &c->good, block), SHR_PROTO_BAD_AUTH);
	assert_int_equal(join_with(c, ADDR(0), &s, &c->job, block), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, ADDR(0), &s, NULL), EINPROGRESS);
	assert_int_equal(job_info(c, T_STATIC_JOB)->joined, 1);
}

/* A JOIN replayed from another address, or after the challenge's lifetime: STALE_AUTH. */
static void
test_stale_auth(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m = join_msg(T_JOB, 0, 0x4001);
	uint8_t block[SHR_PROTO_ADM_LEN], fresh[SHR_PROTO_ADM_LEN];

	assert_int_equal(join_with(c, ADDR(0), &m, &c->good, block), SHR_PROTO_OK);
	assert_int_equal(c->st.joins, 1);
	/* The same bytes from another member's address: the challenge was not for it. */
	assert_int_equal(feed_join(c, ADDR(1), &m, block), SHR_PROTO_STALE_AUTH);
	assert_int_equal(reply_of(c, ADDR(1), &m, fresh), ENOKEY);	/* a new challenge */
	assert_int_equal(c->st.rejects[SHR_PROTO_STALE_AUTH], 1);
	assert_int_equal(job_info(c, T_JOB)->joined, 1);

	/* The member leaves; its JOIN replayed two lifetimes later is refused. */
	c->now += 2 * T_TTL;
	assert_int_equal(feed_join(c, ADDR(0), &m, block), SHR_PROTO_STALE_AUTH);
	assert_int_equal(reply_of(c, ADDR(0), &m, NULL), ENOKEY);
	assert_int_equal(c->st.rejects[SHR_PROTO_STALE_AUTH], 2);
	/* A challenge is good in the next lifetime (a member that answers late). */
	assert_int_equal(feed_join(c, ADDR(0), &m, NULL), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, ADDR(0), &m, block), ENOKEY);
	c->now += T_TTL;
	{
		struct shr_auth_join aj = {
			.job = m.job, .rank = m.rank, .world = m.world, .nonce = m.token,
			.dtype = m.dtype, .chunk = m.count, .window = m.slot,
		};

		shr_auth_proof(&c->good, block, &aj, block + SHR_AUTH_CHALLENGE_LEN);
	}
	assert_int_equal(feed_join(c, ADDR(0), &m, block), SHR_PROTO_OK);
	assert_int_equal(c->st.rejects[SHR_PROTO_STALE_AUTH], 2);
}

/*
 * A running job is not disturbed by JOINs that fail admission: a JOIN "from" a member's
 * address with a new nonce would restart the job (a new incarnation) if it were admitted;
 * unproven, it only gets a challenge (sent to the member's address), and with a wrong proof
 * a refusal. The job keeps its token and its members.
 */
static void
test_running_job_undisturbed(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m0 = join_msg(T_JOB, 0, 0x5001), m1 = join_msg(T_JOB, 1, 0x5002);
	struct shr_proto_msg forged = join_msg(T_JOB, 1, 0xbad0bad0);
	struct shr_proto_msg a;
	uint8_t block[SHR_PROTO_ADM_LEN];
	uint64_t token;

	assert_int_equal(join_with(c, ADDR(0), &m0, &c->good, block), SHR_PROTO_OK);
	assert_int_equal(join_with(c, ADDR(1), &m1, &c->good, block), SHR_PROTO_OK);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	token = a.token;
	assert_true(job_info(c, T_JOB)->active);

	assert_int_equal(feed_join(c, ADDR(1), &forged, NULL), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, ADDR(1), &forged, NULL), ENOKEY);
	assert_int_equal(join_with(c, ADDR(1), &forged, &c->bad, block), SHR_PROTO_BAD_AUTH);
	memset(block, 0x5a, sizeof(block));	/* a made-up challenge */
	assert_int_equal(feed_join(c, ADDR(1), &forged, block), SHR_PROTO_STALE_AUTH);
	assert_int_equal(c->st.incarnations, 0);
	assert_int_equal(c->st.aborts, 0);
	assert_true(job_info(c, T_JOB)->active);
	/* The members' own JOIN again: the same incarnation's token. */
	assert_int_equal(join_with(c, ADDR(0), &m0, &c->good, block), SHR_PROTO_OK);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &a), SHR_PROTO_OK);
	assert_int_equal(a.aux, 0);
	assert_true(a.token == token);
}

/*
 * Challenges are rate limited (112 bytes in answer to a 64-byte JOIN, at the address the JOIN
 * names): a flood of unproven JOINs gets a burst of max(max_world, 64) of them, then one per
 * 1/SHR_AGG_CHALLENGE_RATE s; the others nothing, counted. Nothing is held for any of them.
 */
static void
test_challenge_rate(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	unsigned int i;

	for (i = 0; i < 64 + 10; i++) {
		m = join_msg(T_JOB, 0, 0x6000 + i);
		assert_int_equal(feed_join(c, ADDR(0), &m, NULL), SHR_PROTO_OK);
	}
	assert_int_equal(c->st.challenges, 64);
	assert_int_equal(c->st.challenges_limited, 10);
	assert_int_equal(c->tx.len, 0);		/* the last: no answer */
	c->now += 1000000000ull / SHR_AGG_CHALLENGE_RATE;
	m = join_msg(T_JOB, 0, 0x7000);
	assert_int_equal(feed_join(c, ADDR(0), &m, NULL), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, ADDR(0), &m, NULL), ENOKEY);
	assert_int_equal(c->st.challenges, 65);
	/* that one used the gap: another at the same time is not answered */
	m = join_msg(T_JOB, 0, 0x7001);
	assert_int_equal(feed_join(c, ADDR(0), &m, NULL), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.challenges, 65);
	assert_int_equal(c->st.challenges_limited, 11);
	assert_int_equal(njobs(c), 1);		/* the static job only */
}

/*
 * A steady flood (a JOIN a microsecond for 10 ms, to a fresh box) gets the burst and
 * then SHR_AGG_CHALLENGE_RATE challenges a second: 64 + 81 or so of its 10000 JOINs, not all.
 */
static void
test_challenge_rate_flood(void **state)
{
	struct ctx *c = *state;
	const uint64_t gap = 1000000000ull / SHR_AGG_CHALLENGE_RATE;
	const uint64_t span = 9999 * 1000ull;	/* the first JOIN to the last */
	struct shr_proto_msg m;
	uint64_t sent;
	unsigned int i;

	for (i = 0; i < 10000; i++) {
		m = join_msg(T_JOB, 0, 0x10000 + i);
		assert_int_equal(feed_join(c, ADDR(0), &m, NULL), SHR_PROTO_OK);
		c->now += 1000;
	}
	sent = c->st.challenges;
	assert_int_equal(sent + c->st.challenges_limited, 10000);
	assert_in_range(sent, 64 + span / gap - 1, 64 + span / gap + 1);
	assert_int_equal(njobs(c), 1);
}

/*
 * The burst is max_world when that is above 64: every rank of a 256-rank job starting at
 * once (each from its address, at the same instant) gets its challenge; one more does not.
 */
static void
test_challenge_burst_world(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_params p = {
		.nslots = 16, .max_elems = 64, .max_world = 256, .max_jobs = 4, .max_window = 8,
		.lanes = 1, .job_timeout_ns = T_TIMEOUT, .auth_ttl_ns = T_TTL,
		.secret = &c->good,
	};
	struct shr_proto_msg m;
	unsigned int r;

	shr_agg_free(c->agg);
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	for (r = 0; r < 256; r++) {
		m = join_msg(T_JOB, (uint16_t)r, 0x9000 + r);
		m.world = 256;
		assert_int_equal(feed_join(c, ADDR(r), &m, NULL), SHR_PROTO_OK);
		assert_int_equal(reply_of(c, ADDR(r), &m, NULL), ENOKEY);
	}
	assert_int_equal(c->st.challenges, 256);
	m = join_msg(T_JOB, 0, 0x9fff);
	m.world = 256;
	assert_int_equal(feed_join(c, ADDR(0), &m, NULL), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.challenges_limited, 1);
}

/*
 * The allowlist holds on a box without a default secret too (no secret at all, or static
 * jobs' own only): a JOIN from outside it is refused (EPERM), to a job made by JOIN and to
 * a static job; one from inside is admitted without a challenge.
 */
static void
test_allowlist_without_secret(void **state)
{
	struct ctx *c = *state;
	struct shr_auth_acl acl = { 0 };
	struct shr_agg_params p = {
		.nslots = 16, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
		.lanes = 1, .job_timeout_ns = T_TIMEOUT, .auth_ttl_ns = T_TTL, .allow = &acl,
	};
	struct shr_agg_job_conf jc = {
		.job = T_STATIC_JOB, .world = T_WORLD, .dtype = SHR_DTYPE_INT32,
		.window = T_WINDOW, .chunk_elems = T_CHUNK, .ordered = 1, .secret = &c->job,
	};
	struct shr_proto_msg m = join_msg(T_JOB, 0, 0xa001), s = join_msg(T_STATIC_JOB, 0, 0xa002);
	uint8_t block[SHR_PROTO_ADM_LEN];

	assert_int_equal(shr_auth_acl_add(&acl, "198.18.0.0/15"), 0);
	shr_agg_free(c->agg);
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	assert_int_equal(feed_join(c, OUTSIDER, &m, NULL), SHR_PROTO_NOT_ALLOWED);
	assert_int_equal(reply_of(c, OUTSIDER, &m, NULL), EPERM);
	assert_int_equal(njobs(c), 0);
	assert_int_equal(feed_join(c, ADDR(0), &m, NULL), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, ADDR(0), &m, NULL), EINPROGRESS);
	assert_int_equal(c->st.challenges, 0);
	assert_int_equal(c->st.joins, 1);

	/* a static job with its own secret: outsiders are not even challenged */
	assert_int_equal(shr_agg_job_add(c->agg, &jc), 0);
	assert_int_equal(feed_join(c, OUTSIDER, &s, NULL), SHR_PROTO_NOT_ALLOWED);
	assert_int_equal(reply_of(c, OUTSIDER, &s, NULL), EPERM);
	assert_int_equal(c->st.challenges, 0);
	assert_int_equal(join_with(c, ADDR(0), &s, &c->job, block), SHR_PROTO_OK);
	assert_int_equal(reply_of(c, ADDR(0), &s, NULL), EINPROGRESS);
	assert_int_equal(c->st.rejects[SHR_PROTO_NOT_ALLOWED], 2);
}

/* Configuration errors: secrets of the wrong length. */
static void
test_bad_config(void **state)
{
	struct ctx *c = *state;
	struct shr_auth_secret s = { .len = 8 };
	struct shr_agg_params p = { .secret = &s };
	struct shr_agg_job_conf jc = {
		.job = 77, .world = 1, .dtype = SHR_DTYPE_INT32, .window = 1, .chunk_elems = 8,
		.secret = &s,
	};

	errno = 0;
	assert_null(shr_agg_create(&p));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(shr_agg_job_add(c->agg, &jc), -EINVAL);
	s.len = SHR_AUTH_SECRET_MAX + 1;
	assert_null(shr_agg_create(&p));
	assert_int_equal(shr_agg_job_add(c->agg, &jc), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_not_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proof_covers_join, setup, teardown),
		cmocka_unit_test_setup_teardown(test_challenge_then_join, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_running_job_undisturbed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_challenge_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_challenge_rate_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_challenge_burst_world, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allowlist_without_secret, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_config, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
