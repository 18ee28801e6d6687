/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * What the aggregator's unit tests (test_agg*.c) share: a box with small limits, messages
 * crafted and fed through shr_agg_input(), the members' nonces and the job tokens learnt.
 */

#ifndef SHR_AGG_TEST_H
#define SHR_AGG_TEST_H

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
#include <shr_proto.h>
#include <shr_proto_bytes.h>

#define T_WORLD 3
#define T_WINDOW 4
#define T_CHUNK 8
#define T_JOB 7
#define T_TIMEOUT 1000000ull	/* 1 ms */
#define T_MAXBUF (SHR_PROTO_HDR_LEN + 64 * 4)

#define ADDR(r) SHR_AGG_ADDR(0xc6120001u + (r), 40000u)	/* 198.18.0.1 + r */

#define T_NTOK 16
#define T_TOKEN 0x5eed5eed5eed5eedull	/* the configured token of fixed static jobs */

struct ctx {
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	uint8_t txbuf[T_MAXBUF];
	uint8_t msg[T_MAXBUF];
	uint64_t now;
	/* the latest incarnation token the box has sent for each job (learnt by feed()) */
	uint32_t tok_job[T_NTOK];
	uint64_t tok[T_NTOK];
};

/* The run of the members' processes: a test bumps it to start them again (new nonces). */
static uint64_t t_run;

/* The nonce a member (job, rank, address) puts in its JOINs unless a test sets another. */
static inline uint64_t
nonce_of(uint32_t job, uint16_t rank, uint64_t src)
{
	uint64_t x = ((uint64_t)job << 32 | rank) ^ (src * 0x9e3779b97f4a7c15ull) ^
		     (t_run << 48);

	x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
	return (x ^ (x >> 29)) | 1;
}

static inline uint64_t
tok_get(const struct ctx *c, uint32_t job)
{
	for (unsigned int i = 0; i < T_NTOK; i++)
		if (c->tok[i] != 0 && c->tok_job[i] == job)
			return c->tok[i];
	return T_TOKEN;	/* a static job of the tests, configured with T_TOKEN */
}

static inline void
tok_set(struct ctx *c, uint32_t job, uint64_t token)
{
	unsigned int i, free_i = T_NTOK;

	for (i = 0; i < T_NTOK; i++) {
		if (c->tok[i] != 0 && c->tok_job[i] == job)
			break;
		if (c->tok[i] == 0 && free_i == T_NTOK)
			free_i = i;
	}
	if (i == T_NTOK)
		i = free_i;
	assert_true(i < T_NTOK);
	c->tok_job[i] = job;
	c->tok[i] = token;
}

/* The tests' box: 16 slots, chunks up to 64 elements, world 8, 4 jobs, window 8, 2 lanes. */
static inline struct shr_agg_params
t_params(uint64_t timeout)
{
	struct shr_agg_params p = {
		.nslots = 16,
		.max_elems = 64,
		.max_world = 8,
		.max_jobs = 4,
		.max_window = 8,
		.lanes = 2,
		.job_timeout_ns = timeout,
	};

	return p;
}

static inline struct shr_agg *
mk_agg(uint64_t timeout)
{
	struct shr_agg_params p = t_params(timeout);
	struct shr_agg *agg = shr_agg_create(&p);

	assert_non_null(agg);
	assert_true(shr_agg_tx_cap(agg) <= T_MAXBUF);
	return agg;
}

static inline int
setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return -1;
	c->agg = mk_agg(T_TIMEOUT);
	c->tx.buf = c->txbuf;
	c->tx.cap = sizeof(c->txbuf);
	c->now = 1000;
	t_run = 0;
	*state = c;
	return 0;
}

static inline int
teardown(void **state)
{
	struct ctx *c = *state;

	shr_agg_free(c->agg);
	free(c);
	return 0;
}

/*
 * Build a message in c->msg and feed it from src. A JOIN without a token gets its member's
 * nonce (nonce_of); DATA and LEAVE without one get the job's token as last sent by the box.
 * The token of every JOIN_ACK the box sends (aux 0 or EINPROGRESS) is learnt.
 */
static inline enum shr_proto_reason
feed(struct ctx *c, uint64_t src, const struct shr_proto_msg *m0, const void *payload,
     size_t plen)
{
	struct shr_proto_msg m = *m0, a;
	enum shr_proto_reason r;

	if (m.token == 0 && m.type == SHR_MSG_JOIN)
		m.token = nonce_of(m.job, m.rank, src);
	else if (m.token == 0 && (m.type == SHR_MSG_DATA || m.type == SHR_MSG_LEAVE))
		m.token = tok_get(c, m.job);
	shr_proto_build(c->msg, &m, payload, plen);
	if (plen)
		memcpy(c->msg + SHR_PROTO_HDR_LEN, payload, plen);
	r = shr_agg_input(c->agg, src, c->msg, SHR_PROTO_HDR_LEN + plen, c->now, &c->tx,
			  &c->st);
	if (c->tx.len >= SHR_PROTO_HDR_LEN &&
	    shr_proto_validate(c->tx.buf, c->tx.len, &a) == SHR_PROTO_OK &&
	    a.type == SHR_MSG_JOIN_ACK && (a.aux == 0 || a.aux == EINPROGRESS))
		tok_set(c, a.job, a.token);
	return r;
}

static inline struct shr_proto_msg
join_msg(uint32_t job, uint16_t rank, uint16_t world, uint8_t dtype, uint32_t window,
	 uint32_t chunk)
{
	struct shr_proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_JOIN;
	m.job = job;
	m.rank = rank;
	m.world = world;
	m.dtype = dtype;
	m.slot = window;
	m.count = chunk;
	return m;
}

static inline enum shr_proto_reason
join(struct ctx *c, uint64_t src, uint32_t job, uint16_t rank, uint16_t world, uint8_t dtype,
     uint32_t window, uint32_t chunk)
{
	struct shr_proto_msg m = join_msg(job, rank, world, dtype, window, chunk);

	return feed(c, src, &m, NULL, 0);
}

/* Decode what the agg asked to send; asserts it is a valid message. */
static inline struct shr_proto_msg
tx_msg(const struct ctx *c)
{
	struct shr_proto_msg m;

	assert_true(c->tx.len >= SHR_PROTO_HDR_LEN);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &m), SHR_PROTO_OK);
	return m;
}

/* All ranks of the standard job join; checks the ack to all. */
static inline void
join_all(struct ctx *c, uint32_t job, uint16_t world, uint8_t dtype)
{
	struct shr_proto_msg a;
	uint16_t r;

	for (r = 0; r < world; r++) {
		assert_int_equal(join(c, ADDR(r), job, r, world, dtype, T_WINDOW, T_CHUNK),
				 SHR_PROTO_OK);
		if (r + 1 < world) {
			/* still filling: EINPROGRESS to the sender, echoing its nonce */
			a = tx_msg(c);
			assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
			assert_int_equal(a.aux, EINPROGRESS);
			assert_true(a.feedback > 0);
			assert_true(a.offset == nonce_of(job, r, ADDR(r)));
			assert_int_equal(c->tx.ndst, 1);
			assert_true(c->tx.dst[0] == ADDR(r));
		}
	}
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.job, job);
	assert_int_equal(a.rank, SHR_PROTO_RANK_ALL);
	assert_int_equal(a.world, world);
	assert_int_equal(a.dtype, dtype);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.slot, T_WINDOW);
	assert_int_equal(a.count, T_CHUNK);
	assert_int_equal(a.tensor, 2);	/* lanes */
	assert_int_equal(c->tx.ndst, world);
	for (r = 0; r < world; r++)
		assert_int_equal(c->tx.dst[r], ADDR(r));
}

/* Every rank of the standard job LEAVEs (offset 0: no nonce); each gets its LEAVE_ACK. */
static inline void
leave_all(struct ctx *c, uint32_t job)
{
	struct shr_proto_msg m;
	uint16_t k;

	for (k = 0; k < T_WORLD; k++) {
		memset(&m, 0, sizeof(m));
		m.type = SHR_MSG_LEAVE;
		m.job = job;
		m.rank = k;
		m.world = T_WORLD;
		assert_int_equal(feed(c, ADDR(k), &m, NULL, 0), SHR_PROTO_OK);
		assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
	}
}

static inline struct shr_proto_msg
data_msg(uint32_t job, uint16_t rank, uint16_t world, uint32_t slot, uint8_t ver,
	 uint32_t tensor, uint64_t offset, uint32_t count)
{
	struct shr_proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = SHR_DTYPE_INT32;
	m.op = SHR_OP_SUM;
	m.job = job;
	m.rank = rank;
	m.world = world;
	m.slot = slot;
	m.ver = ver;
	m.tensor = tensor;
	m.step = 5;
	m.offset = offset;
	m.count = count;
	return m;
}

static inline void
le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Rank r's int32 chunk: count values, little-endian. */
static inline size_t
payload_i32(uint8_t *buf, uint16_t r, uint32_t count, int32_t base)
{
	uint32_t i;

	for (i = 0; i < count; i++)
		le32(buf + 4 * i, (uint32_t)base + (uint32_t)(r * 100 + i));
	return 4 * (size_t)count;
}

static inline enum shr_proto_reason
data(struct ctx *c, uint64_t src, const struct shr_proto_msg *m, int32_t base)
{
	uint8_t pl[64 * 4] = { 0 };
	size_t n = payload_i32(pl, m->rank, m->count, base);

	return feed(c, src, m, pl, n);
}

/*
 * The exact bytes of a RESULT, built here field by field, CRC included; fb: its feedback word
 * (the rank that completed the round, bits 31..16, and the slot's wait in 4 us units).
 */
static inline size_t
expected_result_fb(const struct ctx *c, uint8_t *b, uint32_t job, uint16_t world, uint32_t slot,
		   uint8_t ver, uint32_t tensor, uint32_t step, uint64_t offset, uint32_t count,
		   uint16_t flags, int32_t base, uint32_t fb)
{
	uint32_t i, crc;
	uint16_t r;

	memset(b, 0, SHR_PROTO_HDR_LEN);
	shr_proto_put_be16(b, SHR_PROTO_MAGIC);
	b[2] = SHR_PROTO_VERSION;
	b[3] = SHR_MSG_RESULT;
	b[4] = SHR_DTYPE_INT32;
	b[5] = SHR_OP_SUM;
	shr_proto_put_be16(b + 6, SHR_PROTO_RANK_ALL);
	shr_proto_put_be32(b + 8, job);
	shr_proto_put_be32(b + 12, slot | (ver ? SHR_PROTO_SLOT_VER : 0));
	shr_proto_put_be32(b + 16, count);
	shr_proto_put_be16(b + 20, flags);
	shr_proto_put_be16(b + 22, world);
	shr_proto_put_be32(b + 24, tensor);
	shr_proto_put_be32(b + 28, step);
	shr_proto_put_be32(b + 32, (uint32_t)(offset >> 32));
	shr_proto_put_be32(b + 36, (uint32_t)offset);
	shr_proto_put_be32(b + 40, 0);
	/* 44: kind 0, reserved 0, root 0; 48: the token; 56: feedback */
	shr_proto_put_be32(b + 48, (uint32_t)(tok_get(c, job) >> 32));
	shr_proto_put_be32(b + 52, (uint32_t)tok_get(c, job));
	shr_proto_put_be32(b + 56, fb);
	for (i = 0; i < count; i++) {
		uint32_t sum = 0;

		for (r = 0; r < world; r++)
			sum += (uint32_t)base + (uint32_t)(r * 100 + i);
		le32(b + SHR_PROTO_HDR_LEN + 4 * i, sum);
	}
	crc = shr_crc32c(0, b, SHR_PROTO_CRC_SPAN);
	crc = shr_crc32c(crc, b + SHR_PROTO_HDR_LEN, 4 * (size_t)count);
	shr_proto_put_be32(b + 60, crc);
	return SHR_PROTO_HDR_LEN + 4 * (size_t)count;
}

/* The same, of a round that rank world - 1 completed with no time passing (wait 0). */
static inline size_t
expected_result(const struct ctx *c, uint8_t *b, uint32_t job, uint16_t world, uint32_t slot,
		uint8_t ver, uint32_t tensor, uint32_t step, uint64_t offset, uint32_t count,
		uint16_t flags, int32_t base)
{
	return expected_result_fb(c, b, job, world, slot, ver, tensor, step, offset, count, flags,
				  base, (uint32_t)(world - 1) << 16);
}

#endif /* SHR_AGG_TEST_H */
