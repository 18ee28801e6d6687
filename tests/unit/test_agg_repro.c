/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Reproducible jobs through the aggregator (issue 8 item 4): the same float32 inputs of 5
 * ranks, their DATA fed to shr_agg_input() in 20 shuffled orders, give byte-identical
 * RESULTs in a reproducible job (equal to the exact sum rounded once) and at least two
 * different RESULTs in the same job without it. Then the JOIN flag: a reproducible job made
 * by JOIN lives in the repro slots and its JOIN_ACKs carry the flag; a JOIN with another flag
 * than the job's is refused like a dtype mismatch; no room in the repro slots is ENOSPC
 * (POOL_FULL), while the other slots stay for the other jobs; static jobs likewise.
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
#include <shr_pool.h>
#include <shr_proto.h>

#define T_WORLD 5
#define T_CHUNK 64
#define T_ORDERS 20
#define T_NSLOTS 16
#define T_REPRO 4
#define T_TOKEN 0x7265707230303031ull
#define T_MAXBUF (SHR_PROTO_HDR_LEN + T_CHUNK * 4)
#define ADDR(r) SHR_AGG_ADDR(0xc6120001u + (r), 40000u)	/* 198.18.0.1 + r */

struct ctx {
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	uint8_t txbuf[T_MAXBUF];
	uint8_t msg[T_MAXBUF];
	uint64_t addrs[T_WORLD];
};

#define RNG_TEST_SEED 0x6a09e667f3bcc909ull
#include "rng_test.h"

static struct ctx *
mk(uint32_t repro_slots)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct shr_agg_params p = {
		.nslots = T_NSLOTS, .max_elems = T_CHUNK, .max_world = 8, .max_jobs = 8,
		.max_window = 16, .lanes = 1, .job_timeout_ns = 1000000000ull,
		.repro_slots = repro_slots,
	};

	assert_non_null(c);
	for (unsigned int r = 0; r < T_WORLD; r++)
		c->addrs[r] = ADDR(r);
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	c->tx.buf = c->txbuf;
	c->tx.cap = sizeof(c->txbuf);
	return c;
}

static void
rm(struct ctx *c)
{
	shr_agg_free(c->agg);
	free(c);
}

static int
add_static(struct ctx *c, uint32_t job, uint8_t repro, uint32_t window)
{
	struct shr_agg_job_conf jc = {
		.job = job, .world = T_WORLD, .dtype = SHR_DTYPE_FLOAT32, .window = window,
		.chunk_elems = T_CHUNK, .ordered = 1, .token = T_TOKEN, .addrs = c->addrs,
		.repro = repro,
	};

	return shr_agg_job_add(c->agg, &jc);
}

/* One float32 DATA of job's slot 0, round step (version step & 1). */
static enum shr_proto_reason
send(struct ctx *c, uint32_t job, uint16_t rank, uint32_t step, const uint32_t *in)
{
	struct shr_proto_msg m;
	uint8_t pay[T_CHUNK * 4];

	for (unsigned int i = 0; i < T_CHUNK; i++) {
		pay[4 * i] = (uint8_t)in[i];
		pay[4 * i + 1] = (uint8_t)(in[i] >> 8);
		pay[4 * i + 2] = (uint8_t)(in[i] >> 16);
		pay[4 * i + 3] = (uint8_t)(in[i] >> 24);
	}
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = SHR_DTYPE_FLOAT32;
	m.op = SHR_OP_SUM;
	m.rank = rank;
	m.world = T_WORLD;
	m.job = job;
	m.slot = 0;
	m.ver = step & 1;
	m.count = T_CHUNK;
	m.tensor = 3;
	m.step = step;
	m.token = T_TOKEN;
	shr_proto_build(c->msg, &m, pay, sizeof(pay));
	memcpy(c->msg + SHR_PROTO_HDR_LEN, pay, sizeof(pay));
	return shr_agg_input(c->agg, ADDR(rank), c->msg, SHR_PROTO_HDR_LEN + sizeof(pay), 1000,
			     &c->tx, &c->st);
}

/* Random float32 values of random sign and exponent (2^-40..2^40): sums are not exact. */
static uint32_t
rnd_val(void)
{
	uint64_t r = rnd();

	return (uint32_t)(r & 0x807fffffu) | (uint32_t)(87u + (r >> 40) % 81u) << 23;
}

static void
shuffle(uint16_t *v, uint32_t n)
{
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)(rnd() % i);
		uint16_t t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* Feed one round of job in the given order; copy its RESULT payload to out. */
static void
round_of(struct ctx *c, uint32_t job, uint32_t step, uint32_t in[T_WORLD][T_CHUNK],
	 const uint16_t *order, uint8_t *out)
{
	struct shr_proto_msg r;

	for (unsigned int k = 0; k < T_WORLD; k++) {
		assert_int_equal(send(c, job, order[k], step, in[order[k]]), SHR_PROTO_OK);
		if (k + 1 < T_WORLD)
			assert_int_equal(c->tx.len, 0);
	}
	assert_int_equal(c->tx.len, SHR_PROTO_HDR_LEN + T_CHUNK * 4);
	assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_RESULT);
	assert_int_equal(r.step, step);
	memcpy(out, (uint8_t *)c->tx.buf + SHR_PROTO_HDR_LEN, T_CHUNK * 4);
}

static void
test_shuffled_orders(void **state)
{
	static uint32_t in[T_WORLD][T_CHUNK];
	static uint8_t rep[T_ORDERS][T_CHUNK * 4], str[T_ORDERS][T_CHUNK * 4];
	struct shr_agg_job_info info;
	struct ctx *c = mk(T_REPRO);
	uint16_t order[T_WORLD];
	uint32_t k, i, distinct = 0;

	(void)state;
	assert_int_equal(add_static(c, 1, 1, 2), 0);
	assert_int_equal(add_static(c, 2, 0, 2), 0);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.repro, 1);
	assert_true(info.slot_base >= T_NSLOTS);	/* in the repro slots */
	assert_int_equal(shr_agg_job_info(c->agg, 1, &info), 1);
	assert_int_equal(info.repro, 0);
	assert_true(info.slot_base < T_NSLOTS);
	for (k = 0; k < T_WORLD; k++)
		for (i = 0; i < T_CHUNK; i++)
			in[k][i] = rnd_val();
	for (k = 0; k < T_WORLD; k++)
		order[k] = (uint16_t)k;
	for (k = 0; k < T_ORDERS; k++) {
		shuffle(order, T_WORLD);
		round_of(c, 1, k + 1, in, order, rep[k]);
		round_of(c, 2, k + 1, in, order, str[k]);
		if (memcmp(rep[k], rep[0], sizeof(rep[0])) != 0)
			fail_msg("reproducible job: order %u gave other bytes than order 0", k);
		distinct += memcmp(str[k], str[0], sizeof(str[0])) != 0;
	}
	assert_true(distinct >= 1);	/* at least two different streaming results */
	for (i = 0; i < T_CHUNK; i++) {
		struct shr_pool_xsum x;
		uint32_t got = (uint32_t)rep[0][4 * i] | (uint32_t)rep[0][4 * i + 1] << 8 |
			       (uint32_t)rep[0][4 * i + 2] << 16 |
			       (uint32_t)rep[0][4 * i + 3] << 24;

		shr_pool_xsum_clear(&x);
		for (k = 0; k < T_WORLD; k++)
			shr_pool_xsum_add(&x, in[k][i]);
		assert_int_equal(got, shr_pool_xsum_f32(&x));
	}
	rm(c);
}

/* Feed a JOIN; the JOIN_ACK (if any) in *ack. */
static enum shr_proto_reason
join(struct ctx *c, uint32_t job, uint16_t rank, uint16_t world, uint32_t window,
     uint16_t flags, struct shr_proto_msg *ack)
{
	struct shr_proto_msg m;
	enum shr_proto_reason rc;

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_JOIN;
	m.job = job;
	m.rank = rank;
	m.world = world;
	m.dtype = SHR_DTYPE_FLOAT32;
	m.slot = window;
	m.count = T_CHUNK;
	m.flags = flags;
	m.token = 0x1000u + job * 16u + rank;
	shr_proto_build(c->msg, &m, NULL, 0);
	rc = shr_agg_input(c->agg, ADDR(rank), c->msg, SHR_PROTO_HDR_LEN, 1000, &c->tx, &c->st);
	memset(ack, 0, sizeof(*ack));
	if (c->tx.len >= SHR_PROTO_HDR_LEN)
		assert_int_equal(shr_proto_validate(c->tx.buf, c->tx.len, ack), SHR_PROTO_OK);
	return rc;
}

static void
test_join_flag(void **state)
{
	struct shr_agg_job_info info;
	struct shr_proto_msg a;
	struct ctx *c = mk(T_REPRO);

	(void)state;
	/* a reproducible job of 2, window 3 of the 4 repro slots */
	assert_int_equal(join(c, 7, 0, 2, 3, SHR_FLAG_REPRO, &a), SHR_PROTO_OK);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, EINPROGRESS);
	assert_int_equal(a.flags & SHR_FLAG_REPRO, SHR_FLAG_REPRO);
	/* rank 1 without the flag: refused like another dtype */
	assert_int_equal(join(c, 7, 1, 2, 3, 0, &a), SHR_PROTO_JOB_DTYPE);
	assert_int_equal(a.aux, EINVAL);
	assert_int_equal(c->st.rejects[SHR_PROTO_JOB_DTYPE], 1);
	/* with it: the job starts, in the repro slots, and says so */
	assert_int_equal(join(c, 7, 1, 2, 3, SHR_FLAG_REPRO, &a), SHR_PROTO_OK);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.flags & SHR_FLAG_REPRO, SHR_FLAG_REPRO);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.repro, 1);
	assert_int_equal(info.active, 1);
	assert_true(info.slot_base >= T_NSLOTS && info.slot_base + 3 <= T_NSLOTS + T_REPRO);
	/* a second one wants 2 of the 1 left: no room (POOL_FULL, ENOSPC) */
	assert_int_equal(join(c, 8, 0, 2, 2, SHR_FLAG_REPRO, &a), SHR_PROTO_POOL_FULL);
	assert_int_equal(a.aux, ENOSPC);
	/* a plain job still has all 16 others; a plain JOIN of a repro job is refused */
	assert_int_equal(join(c, 9, 0, 1, 16, 0, &a), SHR_PROTO_OK);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.flags & SHR_FLAG_REPRO, 0);
	assert_int_equal(shr_agg_job_info(c->agg, 1, &info), 1);
	assert_int_equal(info.repro, 0);
	assert_int_equal(info.slot_base, 0);
	assert_int_equal(join(c, 7, 0, 2, 3, 0, &a), SHR_PROTO_JOB_DTYPE);
	/* a repro JOIN of the plain job: the same */
	assert_int_equal(join(c, 9, 0, 1, 16, SHR_FLAG_REPRO, &a), SHR_PROTO_JOB_DTYPE);
	/* static: 1 repro slot left, a window of 2 does not fit, of 1 does */
	assert_int_equal(add_static(c, 10, 1, 2), -ENOSPC);
	assert_int_equal(add_static(c, 10, 1, 1), 0);
	rm(c);

	/* a box without repro slots refuses every reproducible job */
	c = mk(0);
	assert_int_equal(join(c, 7, 0, 2, 1, SHR_FLAG_REPRO, &a), SHR_PROTO_POOL_FULL);
	assert_int_equal(a.aux, ENOSPC);
	assert_int_equal(add_static(c, 10, 1, 1), -ENOSPC);
	assert_int_equal(join(c, 7, 0, 1, 16, 0, &a), SHR_PROTO_OK);
	rm(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shuffled_orders),
		cmocka_unit_test(test_join_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
