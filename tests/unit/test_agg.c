/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The aggregator's message logic, driven through shr_agg_input() with crafted messages. */

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
static uint64_t
nonce_of(uint32_t job, uint16_t rank, uint64_t src)
{
	uint64_t x = ((uint64_t)job << 32 | rank) ^ (src * 0x9e3779b97f4a7c15ull) ^
		     (t_run << 48);

	x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
	return (x ^ (x >> 29)) | 1;
}

static uint64_t
tok_get(const struct ctx *c, uint32_t job)
{
	for (unsigned int i = 0; i < T_NTOK; i++)
		if (c->tok[i] != 0 && c->tok_job[i] == job)
			return c->tok[i];
	return T_TOKEN;	/* a static job of the tests, configured with T_TOKEN */
}

static void
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

static struct shr_agg *
mk_agg(uint64_t timeout)
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
	struct shr_agg *agg = shr_agg_create(&p);

	assert_non_null(agg);
	assert_true(shr_agg_tx_cap(agg) <= T_MAXBUF);
	return agg;
}

static int
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

static int
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
static enum shr_proto_reason
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

static struct shr_proto_msg
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

static enum shr_proto_reason
join(struct ctx *c, uint64_t src, uint32_t job, uint16_t rank, uint16_t world, uint8_t dtype,
     uint32_t window, uint32_t chunk)
{
	struct shr_proto_msg m = join_msg(job, rank, world, dtype, window, chunk);

	return feed(c, src, &m, NULL, 0);
}

/* Decode what the agg asked to send; asserts it is a valid message. */
static struct shr_proto_msg
tx_msg(const struct ctx *c)
{
	struct shr_proto_msg m;

	assert_true(c->tx.len >= SHR_PROTO_HDR_LEN);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &m), SHR_PROTO_OK);
	return m;
}

/* All ranks of the standard job join; checks the ack to all. */
static void
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

static struct shr_proto_msg
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

static void
le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void
be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
be32(uint8_t *p, uint32_t v)
{
	be16(p, (uint16_t)(v >> 16));
	be16(p + 2, (uint16_t)v);
}

/* Rank r's int32 chunk: count values, little-endian. */
static size_t
payload_i32(uint8_t *buf, uint16_t r, uint32_t count, int32_t base)
{
	uint32_t i;

	for (i = 0; i < count; i++)
		le32(buf + 4 * i, (uint32_t)base + (uint32_t)(r * 100 + i));
	return 4 * (size_t)count;
}

static enum shr_proto_reason
data(struct ctx *c, uint64_t src, const struct shr_proto_msg *m, int32_t base)
{
	uint8_t pl[64 * 4] = { 0 };
	size_t n = payload_i32(pl, m->rank, m->count, base);

	return feed(c, src, m, pl, n);
}

/* ---- reject reasons ---- */

static void
test_unknown_job(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m = data_msg(99, 0, T_WORLD, 0, 0, 1, 0, 4);

	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	/* A job that exists but is still waiting for members is not active yet. */
	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	m.job = T_JOB;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->st.rejects[SHR_PROTO_UNKNOWN_JOB], 2);
	assert_int_equal(c->st.data, 0);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.rx, 3);
}

static void
test_bad_rank_and_world(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, T_WORLD, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(T_WORLD), &m, 0), SHR_PROTO_BAD_RANK);
	m = data_msg(T_JOB, 1, T_WORLD + 1, 0, 0, 1, 0, 4);	/* world field mismatch */
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_BAD_RANK);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_RANK], 2);
	assert_int_equal(c->st.data, 0);
}

static void
test_spoofed(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_SPOOFED);
	/* Same IP, other port. */
	assert_int_equal(data(c, SHR_AGG_ADDR(SHR_AGG_ADDR_IP(ADDR(1)), 40001), &m, 0),
			 SHR_PROTO_SPOOFED);
	assert_int_equal(c->st.rejects[SHR_PROTO_SPOOFED], 2);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->st.data, 1);
}

/*
 * Late DATA of a rank that has left (a delayed or duplicated copy, seen under reordering) is
 * stale, not spoofed; the same rank's DATA from another address is still spoofed.
 */
static void
test_departed_rank_data(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m, l;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
	}
	assert_int_equal(c->st.completed, 1);
	memset(&l, 0, sizeof(l));
	l.type = SHR_MSG_LEAVE;
	l.job = T_JOB;
	l.world = T_WORLD;
	l.rank = 1;
	assert_int_equal(feed(c, ADDR(1), &l, NULL, 0), SHR_PROTO_OK);
	/* its DATA of slot 0 (a copy of the completed round) and of slot 1 (never sent) */
	m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	m = data_msg(T_JOB, 1, T_WORLD, 1, 0, 1, 8, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.stale, 2);
	assert_int_equal(c->st.rejects[SHR_PROTO_SPOOFED], 0);
	assert_int_equal(c->st.resent, 0);
	assert_int_equal(c->st.data, T_WORLD);
	/* from any other address: spoofed */
	assert_int_equal(data(c, ADDR(5), &m, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(c->st.rejects[SHR_PROTO_SPOOFED], 2);
	assert_int_equal(c->st.stale, 2);
	/* nothing reached the pool: slot 1 has no open round */
	assert_int_equal(shr_agg_tick(c->agg, c->now + 10 * T_TIMEOUT, &c->tx, &c->st), 0);
}

static void
test_job_dtype(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	m.dtype = SHR_DTYPE_FLOAT32;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_JOB_DTYPE);
	assert_int_equal(c->st.rejects[SHR_PROTO_JOB_DTYPE], 1);
}

static void
test_job_count(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, T_CHUNK + 1);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_JOB_COUNT);
	assert_int_equal(c->st.rejects[SHR_PROTO_JOB_COUNT], 1);
	m.count = T_CHUNK;	/* exactly a chunk is fine */
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
}

static void
test_bad_slot(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 0, T_WORLD, T_WINDOW, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_BAD_SLOT);
	m.slot = SHR_PROTO_SLOT_MASK;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_BAD_SLOT);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_SLOT], 2);
	m.slot = T_WINDOW - 1;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
}

static void
test_out_of_step(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m, r;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 0, T_WORLD, 1, 0, 10, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	m = data_msg(T_JOB, 1, T_WORLD, 1, 0, 11, 0, 4);	/* other tensor, same round */
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OUT_OF_STEP);
	m = data_msg(T_JOB, 1, T_WORLD, 1, 0, 10, 8, 4);	/* other offset */
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OUT_OF_STEP);
	assert_int_equal(c->st.rejects[SHR_PROTO_OUT_OF_STEP], 2);
	assert_int_equal(c->tx.len, 0);
	/* The round is untouched: the right contributions complete it. */
	m = data_msg(T_JOB, 1, T_WORLD, 1, 0, 10, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	m = data_msg(T_JOB, 2, T_WORLD, 1, 0, 10, 0, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_OK);
	r = tx_msg(c);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_int_equal(r.tensor, 10);
	assert_int_equal(c->st.completed, 1);
}

/* A message wrong in several ways gets the first reason of the documented order. */
static void
test_check_order(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(T_JOB, 1, T_WORLD, T_WINDOW, 0, 1, 0, T_CHUNK + 1);
	m.dtype = SHR_DTYPE_FLOAT32;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_JOB_DTYPE);
	m.dtype = SHR_DTYPE_INT32;
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_JOB_COUNT);
	m.count = 2;
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_BAD_SLOT);
	m.world = 2;
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_BAD_RANK);
	m.job = 1234;
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_UNKNOWN_JOB);
}

static void
test_bad_type_and_invalid(void **state)
{
	struct ctx *c = *state;
	static const uint8_t types[] = {
		SHR_MSG_RESULT, SHR_MSG_JOIN_ACK, SHR_MSG_LEAVE_ACK, SHR_MSG_ABORT
	};
	struct shr_proto_msg m;
	unsigned int i;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (i = 0; i < sizeof(types); i++) {
		m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
		m.type = types[i];
		if (m.type != SHR_MSG_RESULT)
			m.count = 0;
		assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_BAD_TYPE);
	}
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_TYPE], sizeof(types));

	/* What shr_proto_validate() refuses is counted under its reason. */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	data(c, ADDR(0), &m, 0);	/* fills c->msg; accepted */
	c->msg[SHR_PROTO_HDR_LEN] ^= 1;
	assert_int_equal(shr_agg_input(c->agg, ADDR(0), c->msg, SHR_PROTO_HDR_LEN + 16,
				       c->now, &c->tx, &c->st), SHR_PROTO_BAD_CRC);
	assert_int_equal(shr_agg_input(c->agg, ADDR(0), c->msg, 10, c->now, &c->tx, &c->st),
			 SHR_PROTO_SHORT);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_CRC], 1);
	assert_int_equal(c->st.rejects[SHR_PROTO_SHORT], 1);
	assert_int_equal(c->st.data, 1);
	assert_int_equal(c->tx.len, 0);
}

/* ---- results ---- */

/* The exact bytes of a RESULT, built here field by field, CRC included. */
static size_t
expected_result(const struct ctx *c, uint8_t *b, uint32_t job, uint16_t world, uint32_t slot, uint8_t ver,
		uint32_t tensor, uint32_t step, uint64_t offset, uint32_t count, uint16_t flags,
		int32_t base)
{
	uint32_t i, crc;
	uint16_t r;

	memset(b, 0, SHR_PROTO_HDR_LEN);
	be16(b, SHR_PROTO_MAGIC);
	b[2] = SHR_PROTO_VERSION;
	b[3] = SHR_MSG_RESULT;
	b[4] = SHR_DTYPE_INT32;
	b[5] = SHR_OP_SUM;
	be16(b + 6, SHR_PROTO_RANK_ALL);
	be32(b + 8, job);
	be32(b + 12, slot | (ver ? SHR_PROTO_SLOT_VER : 0));
	be32(b + 16, count);
	be16(b + 20, flags);
	be16(b + 22, world);
	be32(b + 24, tensor);
	be32(b + 28, step);
	be32(b + 32, (uint32_t)(offset >> 32));
	be32(b + 36, (uint32_t)offset);
	be32(b + 40, 0);
	/* 44: kind 0, reserved 0, root 0; 48: the token; 56: feedback 0 */
	be32(b + 48, (uint32_t)(tok_get(c, job) >> 32));
	be32(b + 52, (uint32_t)tok_get(c, job));
	for (i = 0; i < count; i++) {
		uint32_t sum = 0;

		for (r = 0; r < world; r++)
			sum += (uint32_t)base + (uint32_t)(r * 100 + i);
		le32(b + SHR_PROTO_HDR_LEN + 4 * i, sum);
	}
	crc = shr_crc32c(0, b, SHR_PROTO_CRC_SPAN);
	crc = shr_crc32c(crc, b + SHR_PROTO_HDR_LEN, 4 * (size_t)count);
	be32(b + 60, crc);
	return SHR_PROTO_HDR_LEN + 4 * (size_t)count;
}

static void
test_result_bytes(void **state)
{
	struct ctx *c = *state;
	uint8_t want[T_MAXBUF], first[T_MAXBUF];
	struct shr_proto_msg m, r;
	size_t wlen;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 2, 1, 77, 4096, 5);
		m.flags = SHR_FLAG_LAST | (k == 1 ? SHR_FLAG_RETX : 0);
		assert_int_equal(data(c, ADDR(k), &m, -7), SHR_PROTO_OK);
		if (k + 1 < T_WORLD) {
			assert_int_equal(c->tx.len, 0);
			/* A second copy of an open round is a duplicate: dropped. */
			assert_int_equal(data(c, ADDR(k), &m, -7), SHR_PROTO_OK);
			assert_int_equal(c->tx.len, 0);
		}
	}
	assert_int_equal(c->st.duplicates, T_WORLD - 1);
	assert_int_equal(c->st.completed, 1);
	assert_int_equal(c->st.data, T_WORLD);
	assert_int_equal(c->st.bytes_summed, T_WORLD * 5 * 4);

	wlen = expected_result(c, want, T_JOB, T_WORLD, 2, 1, 77, 5, 4096, 5, SHR_FLAG_LAST, -7);
	assert_int_equal(c->tx.len, wlen);
	assert_memory_equal(c->tx.buf, want, wlen);
	r = tx_msg(c);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_int_equal(r.rank, SHR_PROTO_RANK_ALL);
	assert_int_equal(r.slot, 2);
	assert_int_equal(r.ver, 1);
	assert_int_equal(r.offset, 4096);
	assert_int_equal(c->tx.ndst, T_WORLD);
	for (k = 0; k < T_WORLD; k++)
		assert_int_equal(c->tx.dst[k], ADDR(k));
	memcpy(first, c->tx.buf, wlen);

	/* Rank 2 lost its result and resends: the same RESULT, to rank 2 alone. */
	memset(c->txbuf, 0, sizeof(c->txbuf));
	m = data_msg(T_JOB, 2, T_WORLD, 2, 1, 77, 4096, 5);
	m.flags = SHR_FLAG_LAST | SHR_FLAG_RETX;
	assert_int_equal(data(c, ADDR(2), &m, -7), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, wlen);
	assert_memory_equal(c->tx.buf, first, wlen);
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->tx.dst[0], ADDR(2));
	assert_int_equal(c->st.resent, 1);
	/* T_WORLD - 1 acks "still filling", the join ack, the result, the resend */
	assert_int_equal(c->st.tx_msgs, T_WORLD + 2);
	assert_int_equal(c->st.tx_dsts, T_WORLD - 1 + 2 * T_WORLD + 1);
}

/* Round after round on one slot, both versions, exact int32 sums (with wrap). */
static void
test_rounds_reuse_slot(void **state)
{
	struct ctx *c = *state;
	uint8_t want[T_MAXBUF];
	struct shr_proto_msg m;
	unsigned int round;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (round = 0; round < 6; round++) {
		int32_t base = round == 3 ? INT32_MAX - 50 : (int32_t)round * 1000;
		size_t wlen;

		for (k = 0; k < T_WORLD; k++) {
			m = data_msg(T_JOB, k, T_WORLD, 0, round & 1, 1, (uint64_t)round * 8, 8);
			assert_int_equal(data(c, ADDR(k), &m, base), SHR_PROTO_OK);
		}
		wlen = expected_result(c, want, T_JOB, T_WORLD, 0, round & 1, 1, 5,
				       (uint64_t)round * 8, 8, 0, base);
		assert_int_equal(c->tx.len, wlen);
		assert_memory_equal(c->tx.buf, want, wlen);
	}
	assert_int_equal(c->st.completed, 6);
}

/* One round of job on slot 0, version ver, identity (step, offset), from all world ranks. */
static void
round_all(struct ctx *c, uint32_t job, uint16_t world, uint8_t ver, uint32_t step,
	  uint64_t offset, int32_t base)
{
	struct shr_proto_msg m;
	uint8_t want[T_MAXBUF];
	uint16_t k;

	for (k = 0; k < world; k++) {
		m = data_msg(job, k, world, 0, ver, 1, offset, 4);
		m.step = step;
		assert_int_equal(data(c, ADDR(k), &m, base), SHR_PROTO_OK);
		if (k + 1 < world)
			assert_int_equal(c->tx.len, 0);
	}
	assert_int_equal(c->tx.len, expected_result(c, want, job, world, 0, ver, 1, step, offset,
						    4, 0, base));
	assert_memory_equal(c->tx.buf, want, c->tx.len);
}

/*
 * A stale copy of rank 0's round L (version 0) arrives after round L + 1 (version 1)
 * completed. On an ordered job (made by JOIN) it is dropped; otherwise it would open a
 * phantom round on copy 0 and shut round L + 2 out.
 */
static void
test_stale_copy_dropped(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m, stale;
	uint16_t k;

	join_all(c, T_JOB, 2, SHR_DTYPE_INT32);
	round_all(c, T_JOB, 2, 0, 5, 0, 1);		/* L */
	stale = data_msg(T_JOB, 0, 2, 0, 0, 1, 0, 4);
	stale.step = 5;
	/* Round L + 1 opened by rank 0: its copy of L is now stale, rank 1's is not. */
	m = data_msg(T_JOB, 0, 2, 0, 1, 1, 32, 4);
	m.step = 5;
	assert_int_equal(data(c, ADDR(0), &m, 2), SHR_PROTO_OK);
	assert_int_equal(data(c, ADDR(0), &stale, 1), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.stale, 1);
	stale.rank = 1;
	assert_int_equal(data(c, ADDR(1), &stale, 1), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_RESULT);	/* rank 1 lost L's result */
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->st.resent, 1);
	m.rank = 1;
	assert_int_equal(data(c, ADDR(1), &m, 2), SHR_PROTO_OK);	/* L + 1 complete */
	assert_int_equal(tx_msg(c).offset, 32);
	/* Both copies of L, late: stale, nothing sent, nothing opened. */
	for (k = 0; k < 2; k++) {
		stale.rank = k;
		assert_int_equal(data(c, ADDR(k), &stale, 1), SHR_PROTO_OK);
		assert_int_equal(c->tx.len, 0);
	}
	assert_int_equal(c->st.stale, 3);
	/* An older op (step 4) and a step from before a wrap (step - 2^31 + 1): stale too. */
	stale.step = 4;
	assert_int_equal(data(c, ADDR(1), &stale, 1), SHR_PROTO_OK);
	stale.step = 5u + 0x80000001u;
	assert_int_equal(data(c, ADDR(1), &stale, 1), SHR_PROTO_OK);
	assert_int_equal(c->st.stale, 5);
	/* Round L + 2 (next op, step 6, offset 0) on copy 0 is clean. */
	round_all(c, T_JOB, 2, 0, 6, 0, 3);
	assert_int_equal(c->st.rejects[SHR_PROTO_OUT_OF_STEP], 0);
	/* Step numbers wrap (compared modulo 2^32): around the circle in order. */
	round_all(c, T_JOB, 2, 1, 0x40000000u, 0, 4);
	round_all(c, T_JOB, 2, 0, 0x80000000u, 0, 5);
	round_all(c, T_JOB, 2, 1, 0xc0000000u, 0, 6);
	round_all(c, T_JOB, 2, 0, 0xffffffffu, 0, 7);
	round_all(c, T_JOB, 2, 1, 0, 0, 8);
	round_all(c, T_JOB, 2, 0, 1, 0, 9);
	assert_int_equal(c->st.stale, 5);
}

/* An unordered static job (pktgen replay): the same two rounds, looped, keep summing. */
static void
test_static_replay(void **state)
{
	struct ctx *c = *state;
	uint64_t addrs[2] = { ADDR(0), ADDR(1) };
	struct shr_agg_job_conf conf = {
		.token = T_TOKEN,
		.job = 3, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 1,
		.chunk_elems = 4, .addrs = addrs,
	};
	struct shr_proto_msg m;
	unsigned int loop;

	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	for (loop = 0; loop < 5; loop++) {
		round_all(c, 3, 2, 0, 0, 0, 10);
		round_all(c, 3, 2, 1, 1, 4, 20);
	}
	assert_int_equal(c->st.completed, 10);
	assert_int_equal(c->st.stale, 0);
	/* The same capture on an ordered static job: the second loop is stale. */
	conf.job = 4;
	conf.ordered = 1;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	round_all(c, 4, 2, 0, 0, 0, 10);
	round_all(c, 4, 2, 1, 1, 4, 20);
	m = data_msg(4, 0, 2, 0, 0, 1, 0, 4);
	m.step = 0;
	assert_int_equal(data(c, ADDR(0), &m, 10), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.stale, 1);
	assert_int_equal(c->st.completed, 12);
}

/* ---- membership ---- */

static void
test_membership(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_info info;
	struct shr_proto_msg a, m;
	uint16_t r;

	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	/* Before the last rank joins: "still filling" (EINPROGRESS), again for a repeat. */
	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	/* a pending job holds no slots */
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.job, T_JOB);
	assert_int_equal(info.joined, 1);
	assert_int_equal(info.active, 0);
	assert_int_equal(info.is_static, 0);

	/* Conflicting JOINs: refused to the sender alone, with the reason. */
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD + 1, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_BAD_RANK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, EINVAL);
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->tx.dst[0], ADDR(1));
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_FLOAT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_JOB_DTYPE);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK * 2), SHR_PROTO_JOB_COUNT);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW + 1,
			      T_CHUNK), SHR_PROTO_BAD_SLOT);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	assert_int_equal(join(c, ADDR(1), T_JOB, T_WORLD, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_BAD_RANK);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	/* Rank 0 is bound to ADDR(0): another address cannot take it. */
	assert_int_equal(join(c, ADDR(5), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_SPOOFED);
	a = tx_msg(c);
	assert_int_equal(a.aux, EADDRINUSE);
	assert_int_equal(c->tx.dst[0], ADDR(5));
	assert_int_equal(c->st.joins, 1);

	/* The rest join: ack to all. */
	for (r = 1; r < T_WORLD; r++)
		assert_int_equal(join(c, ADDR(r), T_JOB, r, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
				      T_CHUNK), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, 0);
	assert_int_equal(c->tx.ndst, T_WORLD);
	assert_int_equal(c->st.joins, T_WORLD);
	assert_int_equal(c->st.jobs_created, 1);

	/* A repeated JOIN (its ack was lost): ack to that rank alone. */
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.slot, T_WINDOW);
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->tx.dst[0], ADDR(1));
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.active, 1);
	assert_int_equal(info.joined, T_WORLD);

	/* Leaving: acked; a spoofed LEAVE is refused; the last one frees the job. */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.job = T_JOB;
	m.world = T_WORLD;
	m.rank = 0;
	assert_int_equal(feed(c, ADDR(1), &m, NULL, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(c->tx.len, 0);
	for (r = 0; r < T_WORLD; r++) {
		m.rank = r;
		assert_int_equal(feed(c, ADDR(r), &m, NULL, 0), SHR_PROTO_OK);
		a = tx_msg(c);
		assert_int_equal(a.type, SHR_MSG_LEAVE_ACK);
		assert_int_equal(a.aux, 0);
		assert_int_equal(a.rank, r);
		assert_int_equal(c->tx.ndst, 1);
		assert_int_equal(c->tx.dst[0], ADDR(r));
		if (r == 0) {
			/* Resent LEAVE: acked again, nothing changes. */
			assert_int_equal(feed(c, ADDR(0), &m, NULL, 0), SHR_PROTO_OK);
			assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
			/*
			 * A departed rank's DATA is dropped as stale; its own late JOIN (the
			 * nonce it joined with) is a stale copy: no answer, nothing changes.
			 */
			m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
			assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
			assert_int_equal(c->st.stale, 1);
			assert_int_equal(c->st.data, 0);
			assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32,
					      T_WINDOW, T_CHUNK), SHR_PROTO_STALE_JOIN);
			assert_int_equal(c->tx.len, 0);
			assert_int_equal(c->st.joins, T_WORLD);
			assert_int_equal(c->st.incarnations, 0);
			memset(&m, 0, sizeof(m));
			m.type = SHR_MSG_LEAVE;
			m.job = T_JOB;
			m.world = T_WORLD;
		}
		if (r + 1 < T_WORLD)
			assert_int_equal(shr_agg_slots_used(c->agg), T_WINDOW);
	}
	assert_int_equal(c->st.leaves, T_WORLD);
	assert_int_equal(c->st.jobs_freed, 1);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 0);
	/* LEAVE again, for a job that is gone: told so. */
	m.rank = 2;
	assert_int_equal(feed(c, ADDR(2), &m, NULL, 0), SHR_PROTO_UNKNOWN_JOB);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_LEAVE_ACK);
	assert_int_equal(a.aux, ENOENT);
	m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_UNKNOWN_JOB);

	/* A late JOIN of the run that left does not recreate the job. */
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_STALE_JOIN);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 0);
	/* The same id can be created again, fresh, by a new run (new processes). */
	t_run++;
	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	assert_int_equal(shr_agg_slots_used(c->agg), T_WINDOW);
}

static void
test_window_and_limits(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;
	uint32_t j;

	/* Window 0 or above max_window: max_window (8) granted. */
	assert_int_equal(join(c, ADDR(0), 1, 0, 1, SHR_DTYPE_INT32, 100, T_CHUNK),
			 SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.slot, 8);
	assert_int_equal(join(c, ADDR(0), 2, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).slot, 8);
	assert_int_equal(shr_agg_slots_used(c->agg), 16);
	/* The pool (16 slots) is full. */
	assert_int_equal(join(c, ADDR(0), 3, 0, 1, SHR_DTYPE_INT32, 1, T_CHUNK),
			 SHR_PROTO_POOL_FULL);
	assert_int_equal(tx_msg(c).aux, ENOSPC);
	/* Chunk larger than max_elems (the box's port): EMSGSIZE, naming what fits; world
	 * larger than max_world. */
	assert_int_equal(join(c, ADDR(0), 3, 0, 1, SHR_DTYPE_INT32, 1, 65), SHR_PROTO_PATH_MTU);
	assert_int_equal(tx_msg(c).aux, EMSGSIZE);
	assert_int_equal(tx_msg(c).count, 65);
	assert_int_equal(tx_msg(c).feedback, 64);
	assert_int_equal(join(c, ADDR(0), 3, 0, 9, SHR_DTYPE_INT32, 1, 8), SHR_PROTO_BAD_RANK);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	/* Job table (4 entries) full. */
	shr_agg_free(c->agg);
	c->agg = mk_agg(T_TIMEOUT);
	for (j = 0; j < 4; j++)
		assert_int_equal(join(c, ADDR(0), j, 0, 1, SHR_DTYPE_INT32, 1, 8),
				 SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(0), 4, 0, 1, SHR_DTYPE_INT32, 1, 8),
			 SHR_PROTO_JOBS_FULL);
	assert_int_equal(tx_msg(c).aux, ENOSPC);
	assert_int_equal(shr_agg_slots_used(c->agg), 4);
}

/* Two jobs, same slot indices: isolated sums; the job table keeps working as jobs go. */
static void
test_jobs_isolated(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_info info;
	uint8_t want[T_MAXBUF];
	struct shr_proto_msg m;
	uint32_t idx, seen = 0;
	uint16_t k;

	join_all(c, 100, T_WORLD, SHR_DTYPE_INT32);
	join_all(c, 200, 2, SHR_DTYPE_INT32);
	for (k = 0; k < 2; k++) {
		m = data_msg(100, k, T_WORLD, 0, 0, 1, 0, 3);
		assert_int_equal(data(c, ADDR(k), &m, 10), SHR_PROTO_OK);
		m = data_msg(200, k, 2, 0, 0, 1, 0, 3);
		assert_int_equal(data(c, ADDR(k), &m, 20), SHR_PROTO_OK);
	}
	assert_int_equal(c->tx.len, expected_result(c, want, 200, 2, 0, 0, 1, 5, 0, 3, 0, 20));
	assert_memory_equal(c->tx.buf, want, c->tx.len);
	m = data_msg(100, 2, T_WORLD, 0, 0, 1, 0, 3);
	assert_int_equal(data(c, ADDR(2), &m, 10), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, expected_result(c, want, 100, T_WORLD, 0, 0, 1, 5, 0, 3, 0,
						    10));
	assert_memory_equal(c->tx.buf, want, c->tx.len);

	for (idx = 0; shr_agg_job_info(c->agg, idx, &info) >= 0; idx++)
		if (shr_agg_job_info(c->agg, idx, &info) == 1)
			seen |= info.job == 100 ? 1 : info.job == 200 ? 2 : 4;
	assert_int_equal(seen, 3);
	assert_int_equal(idx, 4);

	/* Deleting one job leaves the other reachable (hash deletion). */
	assert_int_equal(shr_agg_job_del(c->agg, 100), 0);
	assert_int_equal(shr_agg_job_del(c->agg, 100), -ENOENT);
	m = data_msg(200, 0, 2, 1, 0, 1, 0, 3);
	assert_int_equal(data(c, ADDR(0), &m, 20), SHR_PROTO_OK);
	m = data_msg(100, 0, T_WORLD, 1, 0, 1, 0, 3);
	assert_int_equal(data(c, ADDR(0), &m, 20), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(shr_agg_slots_used(c->agg), T_WINDOW);
}

/* Many ids that collide in a small hash, added and removed in mixed order. */
static void
test_job_hash_churn(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_conf conf = {
		.token = T_TOKEN,
		.world = 1, .dtype = SHR_DTYPE_INT32, .window = 1, .chunk_elems = 4,
	};
	uint64_t a0 = ADDR(0);
	uint32_t i, round;

	conf.addrs = &a0;
	for (round = 0; round < 50; round++) {
		uint32_t ids[4];

		for (i = 0; i < 4; i++) {
			ids[i] = round * 7919u + i * 16u;
			conf.job = ids[i];
			assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
		}
		for (i = 0; i < 4; i++) {
			struct shr_proto_msg m = data_msg(ids[i], 0, 1, 0, 0, 1, 0, 4);

			assert_int_equal(data(c, ADDR(0), &m, (int32_t)i), SHR_PROTO_OK);
			assert_int_equal(tx_msg(c).job, ids[i]);
		}
		assert_int_equal(shr_agg_job_del(c->agg, ids[(round + 1) % 4]), 0);
		for (i = 0; i < 4; i++) {
			struct shr_proto_msg m = data_msg(ids[i], 0, 1, 0, 1, 1, 0, 4);

			assert_int_equal(data(c, ADDR(0), &m, 0),
					 i == (round + 1) % 4 ? SHR_PROTO_UNKNOWN_JOB :
					 SHR_PROTO_OK);
		}
		for (i = 0; i < 4; i++)
			if (i != (round + 1) % 4)
				assert_int_equal(shr_agg_job_del(c->agg, ids[i]), 0);
		assert_int_equal(shr_agg_slots_used(c->agg), 0);
	}
}

/* ---- static jobs ---- */

static void
test_static_jobs(void **state)
{
	struct ctx *c = *state;
	uint64_t addrs[T_WORLD] = { ADDR(0), ADDR(1), ADDR(2) };
	struct shr_agg_job_conf conf = {
		.token = T_TOKEN,
		.job = 42, .world = T_WORLD, .dtype = SHR_DTYPE_INT32, .window = 2,
		.chunk_elems = T_CHUNK, .addrs = addrs,
	};
	struct shr_agg_job_info info;
	uint8_t want[T_MAXBUF];
	struct shr_proto_msg m, a;
	uint16_t k;

	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EEXIST);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.is_static, 1);
	assert_int_equal(info.active, 1);
	assert_int_equal(info.joined, T_WORLD);
	assert_int_equal(shr_agg_slots_used(c->agg), 2);

	/* Active at once: no JOIN needed. */
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(42, k, T_WORLD, 1, 0, 3, 0, T_CHUNK);
		assert_int_equal(data(c, ADDR(k), &m, 1), SHR_PROTO_OK);
	}
	assert_int_equal(c->tx.len, expected_result(c, want, 42, T_WORLD, 1, 0, 3, 5, 0, T_CHUNK,
						    0, 1));
	assert_memory_equal(c->tx.buf, want, c->tx.len);
	m = data_msg(42, 0, T_WORLD, 0, 0, 3, 0, T_CHUNK);
	assert_int_equal(data(c, ADDR(1), &m, 1), SHR_PROTO_SPOOFED);
	/* A JOIN from a configured member is acked; from elsewhere, refused. */
	assert_int_equal(join(c, ADDR(1), 42, 1, T_WORLD, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.slot, 2);
	assert_int_equal(join(c, ADDR(7), 42, 1, T_WORLD, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_SPOOFED);
	assert_int_equal(tx_msg(c).aux, EADDRINUSE);
	/* Configured members stay bound when they leave. */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.job = 42;
	m.rank = 2;
	m.world = T_WORLD;
	assert_int_equal(feed(c, ADDR(2), &m, NULL, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
	m = data_msg(42, 2, T_WORLD, 0, 0, 3, 0, T_CHUNK);
	assert_int_equal(data(c, ADDR(2), &m, 1), SHR_PROTO_OK);

	/* Bad configurations. */
	conf.job = 43;
	conf.world = 0;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.world = 9;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.world = T_WORLD;
	conf.dtype = 0;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.dtype = SHR_DTYPE_MAX;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.dtype = SHR_DTYPE_INT32;
	conf.window = 9;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.window = 0;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.window = 8;
	conf.chunk_elems = 65;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.chunk_elems = T_CHUNK;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	conf.job = 44;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -ENOSPC);	/* 2 + 8 + 8 > 16 */

	/* A static job without addresses binds on JOIN, any window requested. */
	assert_int_equal(shr_agg_job_del(c->agg, 43), 0);
	conf.addrs = NULL;
	conf.world = 2;
	conf.window = 4;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	m = data_msg(44, 0, 2, 0, 0, 3, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 1), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(join(c, ADDR(0), 44, 0, 2, SHR_DTYPE_INT32, 99, T_CHUNK),
			 SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(join(c, ADDR(1), 44, 1, 2, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.slot, 4);
	assert_int_equal(c->tx.ndst, 2);
	assert_int_equal(data(c, ADDR(0), &m, 1), SHR_PROTO_OK);
	/* All leave: the job stays, inactive, with fresh slots. */
	memset(&a, 0, sizeof(a));
	a.type = SHR_MSG_LEAVE;
	a.job = 44;
	a.world = 2;
	for (k = 0; k < 2; k++) {
		a.rank = k;
		assert_int_equal(feed(c, ADDR(k), &a, NULL, 0), SHR_PROTO_OK);
	}
	assert_int_equal(shr_agg_slots_used(c->agg), 2 + 4);
	assert_int_equal(shr_agg_job_info(c->agg, 1, &info), 1);
	assert_int_equal(info.job, 44);
	assert_int_equal(info.active, 0);
	assert_int_equal(info.joined, 0);
	/* New members (other addresses) start over on version 0 of slot 0. */
	assert_int_equal(join(c, ADDR(4), 44, 0, 2, SHR_DTYPE_INT32, 4, T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(5), 44, 1, 2, SHR_DTYPE_INT32, 4, T_CHUNK), SHR_PROTO_OK);
	for (k = 0; k < 2; k++) {
		m = data_msg(44, k, 2, 0, 0, 3, 0, 4);
		assert_int_equal(data(c, ADDR(4 + k), &m, 1), SHR_PROTO_OK);
	}
	assert_int_equal(c->tx.len, expected_result(c, want, 44, 2, 0, 0, 3, 5, 0, 4, 0, 1));
	assert_memory_equal(c->tx.buf, want, c->tx.len);
	assert_int_equal(c->tx.ndst, 2);
	assert_int_equal(c->tx.dst[0], ADDR(4));

	assert_int_equal(shr_agg_job_del(c->agg, 42), 0);
	assert_int_equal(shr_agg_job_del(c->agg, 44), 0);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
}

/* ---- timeouts ---- */

static void
test_timeout_abort(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_info info;
	struct shr_proto_msg m, a;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	/* Slot 0 completes; slot 3 misses rank 1 (opened later); slot 2 misses rank 0. */
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
	}
	c->now += 100;
	m = data_msg(T_JOB, 0, T_WORLD, 3, 0, 1, 24, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	m = data_msg(T_JOB, 2, T_WORLD, 3, 0, 1, 24, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_OK);
	c->now += 100;
	m = data_msg(T_JOB, 1, T_WORLD, 2, 0, 1, 16, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	m = data_msg(T_JOB, 2, T_WORLD, 2, 0, 1, 16, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_OK);

	/* Not yet. */
	assert_int_equal(shr_agg_tick(c->agg, 1000 + 100 + T_TIMEOUT, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	/* The oldest open round (slot 3) is past the timeout: abort naming rank 1. */
	assert_int_equal(shr_agg_tick(c->agg, 1000 + 101 + T_TIMEOUT, &c->tx, &c->st), 1);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.job, T_JOB);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.aux, ETIMEDOUT);
	assert_int_equal(c->tx.ndst, T_WORLD);
	for (k = 0; k < T_WORLD; k++)
		assert_int_equal(c->tx.dst[k], ADDR(k));
	assert_int_equal(c->st.aborts, 1);
	assert_int_equal(c->st.jobs_freed, 1);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 0);
	/* One abort per call; nothing left. */
	assert_int_equal(shr_agg_tick(c->agg, 1000 + 10 * T_TIMEOUT, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	m = data_msg(T_JOB, 1, T_WORLD, 3, 0, 1, 24, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_UNKNOWN_JOB);
}

/* A job that completes its rounds never times out, however long it idles. */
static void
test_no_abort_when_idle(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint16_t k;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(T_JOB, k, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(k), &m, 0), SHR_PROTO_OK);
	}
	assert_int_equal(shr_agg_tick(c->agg, c->now + 100 * T_TIMEOUT, &c->tx, &c->st), 0);
	assert_int_equal(shr_agg_slots_used(c->agg), T_WINDOW);
	/* A lone duplicate of a completed round does not open anything either. */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->st.resent, 1);
	assert_int_equal(shr_agg_tick(c->agg, c->now + 100 * T_TIMEOUT, &c->tx, &c->st), 0);
	assert_int_equal(c->st.aborts, 0);
}

static void
test_join_timeout(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;

	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(shr_agg_tick(c->agg, c->now + SHR_AGG_JOIN_WAIT * T_TIMEOUT, &c->tx,
					&c->st), 0);
	assert_int_equal(shr_agg_tick(c->agg, c->now + SHR_AGG_JOIN_WAIT * T_TIMEOUT + 1, &c->tx,
					&c->st), 1);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.aux, ETIMEDOUT);
	assert_int_equal(c->tx.ndst, 2);
	assert_int_equal(c->tx.dst[0], ADDR(0));
	assert_int_equal(c->tx.dst[1], ADDR(2));
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
}

/* A static job is reset, not freed, by a timeout. */
static void
test_static_timeout(void **state)
{
	struct ctx *c = *state;
	uint64_t addrs[2] = { ADDR(0), ADDR(1) };
	struct shr_agg_job_conf conf = {
		.token = T_TOKEN,
		.job = 9, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 2,
		.chunk_elems = 4, .addrs = addrs,
	};
	struct shr_proto_msg m;

	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	m = data_msg(9, 1, 2, 1, 1, 1, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(shr_agg_tick(c->agg, c->now + T_TIMEOUT + 1, &c->tx, &c->st), 1);
	assert_int_equal(tx_msg(c).rank, 0);
	assert_int_equal(c->st.jobs_freed, 0);
	assert_int_equal(shr_agg_slots_used(c->agg), 2);
	/* The half round is gone: rank 1's contribution counts again, not as a duplicate. */
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_OK);
	assert_int_equal(c->st.duplicates, 0);
	m.rank = 0;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_RESULT);
}

/* ---- aborted jobs: members that lost the ABORT are told again ---- */

/* Asserts that tx is the ABORT of job (blaming rank, ETIMEDOUT) to dst alone. */
static void
assert_abort_to(const struct ctx *c, uint32_t job, uint16_t rank, uint64_t dst)
{
	struct shr_proto_msg a = tx_msg(c);

	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.job, job);
	assert_int_equal(a.rank, rank);
	assert_int_equal(a.aux, ETIMEDOUT);
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->tx.dst[0], dst);
}

/* Job job of world T_WORLD runs; ranks 0 and 2 open a round on slot 0; rank 1 is silent:
 * the box aborts the job (naming rank 1) at c->now + T_TIMEOUT + 1, which becomes c->now. */
static void
abort_silent_rank1(struct ctx *c, uint32_t job)
{
	struct shr_proto_msg m;
	uint64_t aborts = c->st.aborts;

	join_all(c, job, T_WORLD, SHR_DTYPE_INT32);
	m = data_msg(job, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	m = data_msg(job, 2, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_OK);
	c->now += T_TIMEOUT + 1;
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 1);
	assert_int_equal(tx_msg(c).type, SHR_MSG_ABORT);
	assert_int_equal(c->tx.ndst, T_WORLD);
	assert_int_equal(c->st.aborts, aborts + 1);
}

static void
test_abort_told_again(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint64_t gap = T_TIMEOUT;	/* job_timeout / 10, but 1 ms at least */
	int i, told;

	abort_silent_rank1(c, T_JOB);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	/* rank 0 lost the ABORT and resends its DATA: told again, alone */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_abort_to(c, T_JOB, 1, ADDR(0));
	assert_int_equal(c->st.reaborts, 1);
	/* a flood of its DATA gets nothing more until the gap has passed */
	for (i = 0; i < 100; i++) {
		m = data_msg(T_JOB, 0, T_WORLD, (uint32_t)i % T_WINDOW, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
		assert_int_equal(c->tx.len, 0);
	}
	assert_int_equal(c->st.rejects[SHR_PROTO_UNKNOWN_JOB], 101);
	/* the rate limit is per member: rank 2 (and the blamed rank 1) are told at once */
	m = data_msg(T_JOB, 2, T_WORLD, 1, 0, 1, 8, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_abort_to(c, T_JOB, 1, ADDR(2));
	m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_abort_to(c, T_JOB, 1, ADDR(1));
	assert_int_equal(c->st.reaborts, 3);
	/* not a member: a stranger, or a member's address claiming another rank */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(5), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->tx.len, 0);
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	c->now += gap;
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->tx.len, 0);
	/* after the gap, rank 0 is told again; a flood over a long time gets 8 answers */
	for (i = 0, told = 0; i < 1000; i++) {
		assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
		if (c->tx.len != 0) {
			assert_abort_to(c, T_JOB, 1, ADDR(0));
			told++;
		}
		c->now += gap / 4;
	}
	assert_int_equal(told, 7);	/* 8 in all with the first */
	assert_int_equal(c->st.reaborts, 3 + 7);
	/* a ticking box does not send it again by itself */
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.aborts, 1);
	assert_int_equal(c->st.jobs_freed, 1);
	assert_int_equal(c->st.data, 2);
}

/* A member's JOIN for the aborted job is answered with the ABORT; other JOINs create it anew. */
static void
test_abort_join_again(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint16_t r;

	/* the job times out waiting for rank 1; ranks 0 and 2 keep resending JOIN */
	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	c->now += SHR_AGG_JOIN_WAIT * T_TIMEOUT + 1;
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 1);
	assert_int_equal(c->tx.ndst, 2);
	assert_int_equal(c->st.jobs_created, 1);
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_STALE_JOIN);
	assert_abort_to(c, T_JOB, 1, ADDR(2));
	assert_int_equal(c->st.reaborts, 1);
	/* no job was made again for it, and its next JOIN (too soon) is not answered */
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	assert_int_equal(c->st.jobs_created, 1);
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_STALE_JOIN);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);

	/* JOINs that are not from a member create the job: another process of rank 0 (its
	 * nonce differs), another chunk... */
	m = join_msg(T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK);
	m.token = 0x1234;
	assert_int_equal(feed(c, ADDR(0), &m, NULL, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(c->st.jobs_created, 2);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);	/* none while it fills */
	/* ...while it forms, the old members are still told (rank 2 is not bound in it) */
	c->now += T_TIMEOUT;
	assert_int_equal(join(c, ADDR(2), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_STALE_JOIN);
	assert_abort_to(c, T_JOB, 1, ADDR(2));
	/* rank 1 never joined the aborted job: it joins the new one; so does rank 2 from a
	 * new address; the job runs, and the record is forgotten */
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(6), T_JOB, 2, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_JOIN_ACK);
	assert_int_equal(c->tx.ndst, T_WORLD);
	m = data_msg(T_JOB, 2, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(c->tx.len, 0);
	for (r = 0; r < T_WORLD; r++) {
		m = data_msg(T_JOB, r, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, r == 2 ? ADDR(6) : ADDR(r), &m, 0), SHR_PROTO_OK);
	}
	assert_int_equal(tx_msg(c).type, SHR_MSG_RESULT);
	assert_int_equal(c->st.reaborts, 2);
}

/* The record expires after 10 job timeouts: then a member's JOIN makes the job again. */
static void
test_abort_record_expires(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint64_t t_abort;

	abort_silent_rank1(c, T_JOB);
	t_abort = c->now;
	c->now = t_abort + 10 * T_TIMEOUT - 1;
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_abort_to(c, T_JOB, 1, ADDR(0));
	c->now = t_abort + 10 * T_TIMEOUT;
	m = data_msg(T_JOB, 2, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->tx.len, 0);
	/* a tick forgets it for good; the same members make the same job again */
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 0);
	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	assert_int_equal(c->st.jobs_created, 2);
	assert_int_equal(c->st.reaborts, 1);
}

/* The record is bounded (min(max_jobs, 16) jobs): the oldest is forgotten first. */
static void
test_abort_record_bounded(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint32_t job;
	uint16_t r;

	/* max_jobs is 4: five jobs aborted one after the other */
	for (job = 100; job < 105; job++)
		abort_silent_rank1(c, job);
	for (job = 100; job < 105; job++) {
		m = data_msg(job, 0, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
		if (job == 100) {
			assert_int_equal(c->tx.len, 0);
		} else {
			assert_abort_to(c, job, 1, ADDR(0));
		}
	}
	assert_int_equal(c->st.reaborts, 4);
	/* job 104 made again by new processes (other nonces) of the same members, and
	 * aborted again (rank 0 sent, ranks 1 and 2 did not) */
	for (r = 0; r < T_WORLD; r++) {
		m = join_msg(104, r, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK);
		m.token = 77;
		assert_int_equal(feed(c, ADDR(r), &m, NULL, 0), SHR_PROTO_OK);
	}
	assert_int_equal(tx_msg(c).type, SHR_MSG_JOIN_ACK);
	m = data_msg(104, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
	c->now += T_TIMEOUT + 1;
	assert_int_equal(shr_agg_tick(c->agg, c->now, &c->tx, &c->st), 1);
	assert_int_equal(tx_msg(c).type, SHR_MSG_ABORT);
	/*
	 * Records are kept when a job of the same id runs again (they stop late JOINs of
	 * the old run): the second abort of 104 is a record of its own and evicts the
	 * oldest (101). Its members' DATA carries the new incarnation's token.
	 */
	for (job = 101; job < 105; job++) {
		c->now += T_TIMEOUT;
		m = data_msg(job, 2, T_WORLD, 0, 0, 1, 0, 4);
		assert_int_equal(data(c, ADDR(2), &m, 0), SHR_PROTO_UNKNOWN_JOB);
		if (job == 101) {
			assert_int_equal(c->tx.len, 0);
			continue;
		}
		assert_abort_to(c, job, 1, ADDR(2));
	}
}

/* Shutting down: every job with members gets one ABORT (rank ALL, ESHUTDOWN), to them all. */
static void
test_shutdown(void **state)
{
	struct ctx *c = *state;
	uint64_t fixed[2] = { ADDR(6), ADDR(7) };
	struct shr_agg_job_conf sconf = {
		.job = 9, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 2, .chunk_elems = 4,
		.addrs = fixed,
	};
	struct shr_agg_job_conf empty = {
		.job = 10, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 2, .chunk_elems = 4,
	};
	uint32_t seen_job[4] = { 0 };
	uint32_t n = 0, k;
	struct shr_proto_msg m, a;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);			/* running */
	assert_int_equal(join(c, ADDR(4), 8, 1, 2, SHR_DTYPE_INT32, 2, T_CHUNK),
			 SHR_PROTO_OK);					/* joining */
	assert_int_equal(shr_agg_job_add(c->agg, &sconf), 0);		/* fixed members */
	assert_int_equal(shr_agg_job_add(c->agg, &empty), 0);		/* nobody yet */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);	/* an open round */

	while (shr_agg_shutdown(c->agg, &c->tx, &c->st) == 1) {
		assert_true(n < 4);
		a = tx_msg(c);
		assert_int_equal(a.type, SHR_MSG_ABORT);
		assert_int_equal(a.rank, SHR_PROTO_RANK_ALL);
		assert_int_equal(a.aux, ESHUTDOWN);
		seen_job[n++] = a.job;
		switch (a.job) {
		case T_JOB:
			assert_int_equal(c->tx.ndst, T_WORLD);
			for (k = 0; k < T_WORLD; k++)
				assert_int_equal(c->tx.dst[k], ADDR(k));
			break;
		case 8:
			assert_int_equal(c->tx.ndst, 1);
			assert_int_equal(c->tx.dst[0], ADDR(4));
			break;
		case 9:
			assert_int_equal(c->tx.ndst, 2);
			assert_int_equal(c->tx.dst[0], ADDR(6));
			assert_int_equal(c->tx.dst[1], ADDR(7));
			break;
		default:
			fail_msg("ABORT for job %u", a.job);
		}
	}
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(n, 3);
	assert_int_not_equal(seen_job[0], seen_job[1]);
	assert_int_not_equal(seen_job[1], seen_job[2]);
	assert_int_not_equal(seen_job[0], seen_job[2]);
	assert_int_equal(c->st.aborts, 3);
	assert_int_equal(c->st.jobs_freed, 2);
	assert_int_equal(shr_agg_slots_used(c->agg), 4);	/* the two static jobs */
	/* not remembered: a member's DATA is just an unknown job now */
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.reaborts, 0);
	/* a new pass tells the fixed members again */
	assert_int_equal(shr_agg_shutdown(c->agg, &c->tx, &c->st), 1);
	assert_int_equal(tx_msg(c).job, 9);
	assert_int_equal(shr_agg_shutdown(c->agg, &c->tx, &c->st), 0);
	assert_int_equal(c->tx.len, 0);
}

/* ---- misc ---- */

static void
test_stats_add_and_create(void **state)
{
	struct shr_agg_stats a, b;
	struct shr_agg_params p;
	struct shr_agg *agg;
	unsigned int i;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	b.rx = 1;
	b.data = 2;
	b.completed = 3;
	b.resent = 4;
	b.duplicates = 5;
	b.bytes_summed = 6;
	b.tx_msgs = 7;
	b.tx_dsts = 8;
	b.joins = 9;
	b.leaves = 10;
	b.jobs_created = 11;
	b.jobs_freed = 12;
	b.aborts = 13;
	b.stale = 14;
	b.reaborts = 15;
	for (i = 0; i < SHR_PROTO_REASON_MAX; i++)
		b.rejects[i] = 100 + i;
	shr_agg_stats_add(&a, &b);
	shr_agg_stats_add(&a, &b);
	assert_int_equal(a.rx, 2);
	assert_int_equal(a.data, 4);
	assert_int_equal(a.completed, 6);
	assert_int_equal(a.resent, 8);
	assert_int_equal(a.duplicates, 10);
	assert_int_equal(a.bytes_summed, 12);
	assert_int_equal(a.tx_msgs, 14);
	assert_int_equal(a.tx_dsts, 16);
	assert_int_equal(a.joins, 18);
	assert_int_equal(a.leaves, 20);
	assert_int_equal(a.jobs_created, 22);
	assert_int_equal(a.jobs_freed, 24);
	assert_int_equal(a.aborts, 26);
	assert_int_equal(a.stale, 28);
	assert_int_equal(a.reaborts, 30);
	for (i = 0; i < SHR_PROTO_REASON_MAX; i++)
		assert_int_equal(a.rejects[i], 2 * (100 + i));

	agg = shr_agg_create(NULL);
	assert_non_null(agg);
	assert_int_equal(shr_agg_tx_cap(agg), SHR_PROTO_HDR_LEN + 2048 * 4);
	assert_int_equal(shr_agg_slots_used(agg), 0);
	assert_int_equal(shr_agg_job_info(agg, 63, &(struct shr_agg_job_info){ 0 }), 0);
	assert_int_equal(shr_agg_job_info(agg, 64, &(struct shr_agg_job_info){ 0 }), -ENOENT);
	shr_agg_free(agg);
	shr_agg_free(NULL);

	memset(&p, 0, sizeof(p));
	p.max_world = SHR_PROTO_MAX_WORLD + 1;
	errno = 0;
	assert_null(shr_agg_create(&p));
	assert_int_equal(errno, EINVAL);
	memset(&p, 0, sizeof(p));
	p.nslots = 8;
	p.max_window = 9;
	assert_null(shr_agg_create(&p));
	assert_int_equal(errno, EINVAL);
}

/* float32 is summed as float32. */
static void
test_float32(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m, r;
	float in[2][4] = { { 1.5f, -2.0f, 1e-3f, 3.0f }, { 0.25f, 2.0f, 1e-3f, -1.0f } };
	float out[4];
	uint16_t k;

	for (k = 0; k < 2; k++)
		assert_int_equal(join(c, ADDR(k), 5, k, 2, SHR_DTYPE_FLOAT32, 2, 4),
				 SHR_PROTO_OK);
	for (k = 0; k < 2; k++) {
		m = data_msg(5, k, 2, 0, 0, 1, 0, 4);
		m.dtype = SHR_DTYPE_FLOAT32;
		assert_int_equal(feed(c, ADDR(k), &m, in[k], sizeof(in[k])), SHR_PROTO_OK);
	}
	r = tx_msg(c);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_int_equal(r.dtype, SHR_DTYPE_FLOAT32);
	memcpy(out, (uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN, sizeof(out));
	for (k = 0; k < 4; k++) {
		float want = in[0][k] + in[1][k];

		assert_memory_equal(&out[k], &want, sizeof(float));
	}
}

/* ---- incarnations (issue 14) and membership edges (issue 18) ---- */

/* One round of T_WORLD ranks on slot 0 with inputs from base; returns the RESULT's first sum. */
static int32_t
round0(struct ctx *c, uint32_t job, uint32_t step, uint8_t ver, int32_t base)
{
	struct shr_proto_msg m, r;
	int32_t v;
	uint16_t k;

	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(job, k, T_WORLD, 0, ver, 1, (uint64_t)step * T_WINDOW * 4, 4);
		m.step = step;
		assert_int_equal(data(c, ADDR(k), &m, base), SHR_PROTO_OK);
	}
	r = tx_msg(c);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_true(r.token == tok_get(c, job));
	memcpy(&v, (const uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN, sizeof(v));
	return v;
}

static void
test_token_checked(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg m;
	uint64_t tok;

	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	tok = tok_get(c, T_JOB);
	assert_true(tok != 0);
	/* DATA and LEAVE with another token: refused, counted, nothing summed or left */
	m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
	m.token = tok ^ 1;
	assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_BAD_TOKEN);
	assert_int_equal(c->st.data, 0);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.job = T_JOB;
	m.world = T_WORLD;
	m.token = tok + 1;
	assert_int_equal(feed(c, ADDR(0), &m, NULL, 0), SHR_PROTO_BAD_TOKEN);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.leaves, 0);
	assert_int_equal(c->st.rejects[SHR_PROTO_BAD_TOKEN], 2);
	/* a JOIN without a nonce */
	m = join_msg(T_JOB + 1, 0, 1, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK);
	m.token = 0;
	shr_proto_build(c->msg, &m, NULL, 0);
	assert_int_equal(shr_agg_input(c->agg, ADDR(0), c->msg, SHR_PROTO_HDR_LEN, c->now,
				       &c->tx, &c->st), SHR_PROTO_BAD_TOKEN);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	/* the job still sums exactly */
	assert_int_equal(round0(c, T_JOB, 0, 0, 5), 3 * 5 + 100 + 200);
}

/* Ranks crash (no LEAVE) after 0, 1 or 3 rounds; a new run on the same addresses with other
 * data gets its own sums, never the old run's. */
static void
test_restart_same_addresses(void **state)
{
	struct ctx *c = *state;
	unsigned int rounds[] = { 0, 1, 3 }, i, k;
	uint64_t old;

	uint32_t step = 0;

	t_run++;
	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	for (i = 0; i < 3; i++) {
		old = tok_get(c, T_JOB);
		for (k = 0; k < rounds[i]; k++, step++)
			assert_int_equal(round0(c, T_JOB, step, (uint8_t)(step & 1), 1000),
					 3 * 1000 + 300);
		/* they die; the new run's rank 0 JOINs: the old incarnation is aborted */
		t_run++;
		assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
				      T_CHUNK), SHR_PROTO_OK);
		assert_int_equal(tx_msg(c).type, SHR_MSG_ABORT);
		assert_int_equal(tx_msg(c).aux, ESTALE);
		assert_true(tx_msg(c).token == old);
		/* its resent JOIN and the others join a new incarnation */
		join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
		assert_true(tok_get(c, T_JOB) != old);
		/* a late DATA of the old run: refused */
		{
			struct shr_proto_msg m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);

			m.token = old;
			assert_int_equal(data(c, ADDR(1), &m, 1000), SHR_PROTO_BAD_TOKEN);
		}
		/* the new run's first round (fresh slots: version 0, step 0): its own sum */
		step = 0;
		assert_int_equal(round0(c, T_JOB, step, 0, 7 + (int32_t)i), 3 * (7 + (int)i) + 300);
		step++;
	}
	assert_int_equal(c->st.incarnations, 3);
}

/*
 * A member has left while the others finish: a JOIN for its rank with another nonce from
 * another host is not that member restarting (a forged JOIN must not end the job): refused
 * EADDRINUSE while the job is alive; once it has been silent for a job timeout, it starts a
 * new incarnation.
 */
static void
test_left_rank_join_elsewhere(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_info info;
	struct shr_proto_msg m, a;

	t_run++;
	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.job = T_JOB;
	m.world = T_WORLD;
	m.rank = 0;
	assert_int_equal(feed(c, ADDR(0), &m, NULL, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
	t_run++;	/* another process, elsewhere */
	assert_int_equal(join(c, ADDR(7), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK),
			 SHR_PROTO_SPOOFED);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, EADDRINUSE);
	assert_int_equal(c->tx.dst[0], ADDR(7));
	assert_int_equal(c->st.incarnations, 0);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.active, 1);
	assert_int_equal(info.joined, T_WORLD - 1);
	/* silent for a job timeout: a new run may take over */
	c->now += T_TIMEOUT + 1;
	assert_int_equal(join(c, ADDR(7), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW, T_CHUNK),
			 SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.aux, ESTALE);
	assert_int_equal(c->st.incarnations, 1);
}

/* A static job with fixed addresses, run twice in a row (every LEAVE acked): the second run
 * starts from fresh slots and gets its own sum, whichever copy the first run ended on. */
static void
test_static_rerun(void **state)
{
	struct ctx *c = *state;
	uint64_t addrs[T_WORLD] = { ADDR(0), ADDR(1), ADDR(2) };
	struct shr_agg_job_conf conf = {
		.job = 50, .world = T_WORLD, .dtype = SHR_DTYPE_INT32, .window = 2,
		.chunk_elems = T_CHUNK, .addrs = addrs, .ordered = 1,
	};
	struct shr_proto_msg m;
	uint64_t prev = 0;
	unsigned int run;
	uint16_t k;

	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	for (run = 0; run < 2; run++) {
		uint64_t tok;

		t_run++;
		for (k = 0; k < T_WORLD; k++) {
			assert_int_equal(join(c, ADDR(k), 50, k, T_WORLD, SHR_DTYPE_INT32, 2,
					      T_CHUNK), SHR_PROTO_OK);
			assert_int_equal(tx_msg(c).aux, 0);
		}
		tok = tok_get(c, 50);
		/* the second run is another incarnation: another token */
		assert_true(tok != 0 && tok != T_TOKEN && tok != prev);
		prev = tok;
		/* run 0 ends slot 0 on copy 0 after one round; run 1 after one round too */
		assert_int_equal(round0(c, 50, 0, 0, run == 0 ? 2000 : 3), 3 * (run == 0 ?
				 2000 : 3) + 300);
		for (k = 0; k < T_WORLD; k++) {
			memset(&m, 0, sizeof(m));
			m.type = SHR_MSG_LEAVE;
			m.job = 50;
			m.rank = k;
			m.world = T_WORLD;
			assert_int_equal(feed(c, ADDR(k), &m, NULL, 0), SHR_PROTO_OK);
			assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
		}
		/* every member left: the job stays, with its slots */
		assert_true(shr_agg_slots_used(c->agg) == 2);
		/*
		 * A member whose LEAVE_ACK was lost LEAVEs again with the ended incarnation's
		 * token: told it is gone (ENOENT, that token), not refused unanswered.
		 */
		memset(&m, 0, sizeof(m));
		m.type = SHR_MSG_LEAVE;
		m.job = 50;
		m.rank = 1;
		m.world = T_WORLD;
		m.token = tok;
		assert_int_equal(feed(c, ADDR(1), &m, NULL, 0), SHR_PROTO_OK);
		assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
		assert_int_equal(tx_msg(c).aux, ENOENT);
		assert_true(tx_msg(c).token == tok);
		/* From another address, or with a made-up token: refused. */
		assert_int_equal(feed(c, ADDR(3), &m, NULL, 0), SHR_PROTO_SPOOFED);
		m.token = tok ^ 1;
		assert_int_equal(feed(c, ADDR(1), &m, NULL, 0), SHR_PROTO_BAD_TOKEN);
		assert_int_equal(c->tx.len, 0);
	}
	assert_int_equal(c->st.incarnations, 0);
	assert_int_equal(c->st.rejects[SHR_PROTO_OUT_OF_STEP], 0);
}

/* JOIN with feedback = the largest chunk its path carries (issue 17). */
static enum shr_proto_reason
join_path(struct ctx *c, uint64_t src, uint32_t job, uint16_t rank, uint16_t world,
	  uint32_t chunk, uint32_t path)
{
	struct shr_proto_msg m = join_msg(job, rank, world, SHR_DTYPE_INT32, 2, chunk);

	m.feedback = path;
	return feed(c, src, &m, NULL, 0);
}

/*
 * Chunk negotiation: a job made with chunk 0 gets the largest chunk every member's path (and
 * the box's port) carries; a job with a fixed chunk, or a static job, refuses a member whose
 * path cannot carry it (EMSGSIZE, naming the chunk and what fits); a member that asks for
 * another fixed chunk is refused as before.
 */
static void
test_chunk_negotiation(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_conf sc = {
		.job = 60, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 2, .chunk_elems = 32,
		.ordered = 1,
	};
	struct shr_proto_msg a;

	/* auto, world 3: paths unknown (64: the box's max_elems), 40, 50 -> 40 */
	assert_int_equal(join_path(c, ADDR(0), 1, 0, 3, 0, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(join_path(c, ADDR(1), 1, 1, 3, 0, 40), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(2), 1, 2, 3, 0, 50), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(c->tx.ndst, 3);
	assert_int_equal(a.count, 40);
	/*
	 * fixed chunk 48: an auto member whose path carries 30 cannot be in the job: the job, still
	 * filling, is aborted at once (EMSGSIZE) for its member and the rank refused (the ABORT
	 * echoes its JOIN's nonce), with the chunk and what fits
	 */
	assert_int_equal(join_path(c, ADDR(0), 2, 0, 2, 48, 0), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(1), 2, 1, 2, 0, 30), SHR_PROTO_PATH_MTU);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.aux, EMSGSIZE);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.count, 48);
	assert_int_equal(a.feedback, 30);
	assert_true(a.offset == nonce_of(2, 1, ADDR(1)));
	assert_int_equal(c->tx.ndst, 2);
	assert_true(c->tx.dst[0] == ADDR(0) && c->tx.dst[1] == ADDR(1));
	/* an auto member whose path carries a fixed chunk (48) joins that job */
	assert_int_equal(join_path(c, ADDR(0), 4, 0, 2, 48, 0), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(3), 4, 1, 2, 0, 60), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.count, 48);
	/* ... and one asking for another fixed chunk is refused as before */
	assert_int_equal(join_path(c, ADDR(0), 3, 0, 2, 0, 0), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(1), 3, 1, 2, 16, 0), SHR_PROTO_JOB_COUNT);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	/* a static job's chunk (32) is fixed: a path of 31 is refused, an auto member joins */
	assert_int_equal(shr_agg_job_add(c->agg, &sc), 0);
	assert_int_equal(join_path(c, ADDR(4), 60, 0, 2, 32, 31), SHR_PROTO_PATH_MTU);
	assert_int_equal(tx_msg(c).feedback, 31);
	assert_int_equal(join_path(c, ADDR(4), 60, 0, 2, 0, 1000), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(5), 60, 1, 2, 32, 0), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.count, 32);
	assert_int_equal(c->st.rejects[SHR_PROTO_PATH_MTU], 2);
	assert_int_equal(c->st.aborts, 1);
}

/* Window 0 is the default window, not the pool; one address holds at most max_src_jobs
 * jobs; a pending job holds no slots; a stale JOIN of a job that was left never recreates
 * it; an idle active job is reclaimed. */
static void
test_lifecycle_bounds(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_params p = {
		.nslots = 64, .max_elems = 64, .max_world = 8, .max_jobs = 16, .max_window = 32,
		.def_window = 4, .max_src_jobs = 2, .job_timeout_ns = T_TIMEOUT,
		.idle_ns = 10 * T_TIMEOUT,
	};
	struct shr_proto_msg a;

	shr_agg_free(c->agg);
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	/* window 0: the default (4) */
	assert_int_equal(join(c, ADDR(0), 1, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.slot, 4);
	/* a pending job (world 2) from the same address: no slots */
	assert_int_equal(join(c, ADDR(0), 2, 0, 2, SHR_DTYPE_INT32, 0, T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(shr_agg_slots_used(c->agg), 4);
	/* a third job from that IPv4 address (another port): refused, counted */
	assert_int_equal(join(c, ADDR(0) + 1, 3, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_SRC_LIMIT);
	assert_int_equal(tx_msg(c).aux, EDQUOT);
	/* another address gets in */
	assert_int_equal(join(c, ADDR(1), 3, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, 0);
	/* job 1 (world 1) is left; its late JOIN does not recreate it */
	memset(&a, 0, sizeof(a));
	a.type = SHR_MSG_LEAVE;
	a.job = 1;
	a.world = 1;
	assert_int_equal(feed(c, ADDR(0), &a, NULL, 0), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(0), 1, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_STALE_JOIN);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.rejects[SHR_PROTO_STALE_JOIN], 1);
	/*
	 * Past idle_ns: job 3 (active, idle) is aborted (rank ALL) and freed; the pending job
	 * 2 has waited more than 4 job timeouts for rank 1: aborted naming it. Nothing left.
	 */
	c->now += 10 * T_TIMEOUT + 2;
	while (shr_agg_tick(c->agg, c->now, &c->tx, &c->st) == 1) {
		a = tx_msg(c);
		assert_int_equal(a.type, SHR_MSG_ABORT);
		assert_int_equal(a.aux, ETIMEDOUT);
		assert_int_equal(a.rank, a.job == 3 ? SHR_PROTO_RANK_ALL : 1);
	}
	assert_int_equal(c->st.idle_reclaims, 1);
	assert_int_equal(c->st.aborts, 2);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	{
		struct shr_agg_job_info info;
		uint32_t idx, n = 0;

		int rc;

		for (idx = 0; (rc = shr_agg_job_info(c->agg, idx, &info)) >= 0; idx++)
			n += rc == 1;
		assert_int_equal(n, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unknown_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_rank_and_world, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spoofed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_departed_rank_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_dtype, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_type_and_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_result_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rounds_reuse_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_copy_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_membership, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window_and_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobs_isolated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_hash_churn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_jobs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_abort_when_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_join_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_told_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_join_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_record_expires, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_record_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown, setup, teardown),
		cmocka_unit_test(test_stats_add_and_create),
		cmocka_unit_test_setup_teardown(test_float32, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_same_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_left_rank_join_elsewhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_rerun, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk_negotiation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifecycle_bounds, setup, teardown),
	};

	return cmocka_run_group_tests_name("agg", tests, NULL, NULL);
}
