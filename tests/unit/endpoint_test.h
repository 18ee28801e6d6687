/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * What the unit tests of the host endpoint's state machine (test_endpoint*.c) share: a fake
 * clock and an in-memory channel; the test plays the aggregator (world 1: a RESULT echoes the
 * DATA; world 2: two endpoints' DATA summed).
 */

#ifndef SHR_ENDPOINT_TEST_H
#define SHR_ENDPOINT_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <shr_endpoint.h>
#include <shr_proto.h>

#define US 1000ull
#define MS 1000000ull
#define S 1000000000ull

/* One captured DATA message. */
struct pkt {
	struct shr_proto_msg m;
	size_t len;		/* header + payload */
	uint8_t *buf;		/* a copy of header + payload */
	const void *payload;	/* the payload pointer send() was given */
};

/* The fake channel and clock. */
struct chan {
	uint64_t now;
	struct pkt *pkts;
	size_t n;
	size_t cap;
	unsigned int calls;	/* send() calls */
	int script[64];		/* return values of the next send() calls (0: send) */
	unsigned int script_n;
	unsigned int script_pos;
};

static inline int
chan_send(void *ctx, const void *hdr, const void *payload, size_t payload_len)
{
	struct chan *c = ctx;
	struct pkt *p;
	int rc = 0;

	c->calls++;
	if (c->script_pos < c->script_n)
		rc = c->script[c->script_pos++];
	if (rc != 0)
		return rc;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->pkts = realloc(c->pkts, c->cap * sizeof(*c->pkts));
		assert_non_null(c->pkts);
	}
	p = &c->pkts[c->n++];
	p->len = SHR_PROTO_HDR_LEN + payload_len;
	p->buf = malloc(p->len);
	assert_non_null(p->buf);
	memcpy(p->buf, hdr, SHR_PROTO_HDR_LEN);
	if (payload_len > 0)
		memcpy(p->buf + SHR_PROTO_HDR_LEN, payload, payload_len);
	p->payload = payload;
	/* Everything the endpoint sends must be a valid DATA message (CRC included). */
	assert_int_equal(shr_proto_validate(p->buf, p->len, &p->m), SHR_PROTO_OK);
	assert_int_equal(p->m.type, SHR_MSG_DATA);
	return 0;
}

static inline uint64_t
chan_now(void *ctx)
{
	return ((struct chan *)ctx)->now;
}

static inline void
chan_fini(struct chan *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->pkts[i].buf);
	free(c->pkts);
	memset(c, 0, sizeof(*c));
}

static inline struct shr_endpoint_params
params_default(uint32_t window, uint32_t chunk_elems)
{
	struct shr_endpoint_params p = {
		.job = 7,
		.rank = 0,
		.world = 1,
		.dtype = SHR_DTYPE_INT32,
		.window = window,
		.chunk_elems = chunk_elems,
	};
	return p;
}

static inline struct shr_endpoint *
ep_new(const struct shr_endpoint_params *p, struct chan *c)
{
	struct shr_endpoint_io io = { .send = chan_send, .now_ns = chan_now, .ctx = c };
	struct shr_endpoint *ep = shr_endpoint_create(p, &io);

	assert_non_null(ep);
	return ep;
}

static inline struct shr_endpoint_stats
stats(const struct shr_endpoint *ep)
{
	struct shr_endpoint_stats st;

	shr_endpoint_stats_get(ep, &st);
	return st;
}

/* The RESULT that answers a DATA: same identity, rank "all", LAST kept. */
static inline struct shr_proto_msg
result_of(const struct pkt *d)
{
	struct shr_proto_msg m = d->m;

	m.type = SHR_MSG_RESULT;
	m.rank = SHR_PROTO_RANK_ALL;
	m.flags &= SHR_FLAG_LAST;
	return m;
}

/*
 * Build a message and feed it to the endpoint, as received at rx_ns (0: not known,
 * shr_endpoint_input()).
 */
static inline int
feed_at(struct shr_endpoint *ep, const struct shr_proto_msg *m, const void *payload, size_t len,
	uint64_t rx_ns)
{
	uint8_t *buf = malloc(SHR_PROTO_HDR_LEN + len + 1);
	int rc;

	assert_non_null(buf);
	shr_proto_build(buf, m, payload, len);
	if (len > 0)
		memcpy(buf + SHR_PROTO_HDR_LEN, payload, len);
	rc = rx_ns == 0 ? shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + len) :
			  shr_endpoint_input_at(ep, buf, SHR_PROTO_HDR_LEN + len, rx_ns);
	free(buf);
	return rc;
}

/* Build a message and feed it to the endpoint. */
static inline int
feed(struct shr_endpoint *ep, const struct shr_proto_msg *m, const void *payload, size_t len)
{
	return feed_at(ep, m, payload, len, 0);
}

/* World 1: the result is the DATA's payload, received at rx_ns (0: not known). */
static inline int
echo_at(struct shr_endpoint *ep, const struct pkt *d, uint64_t rx_ns)
{
	struct shr_proto_msg m = result_of(d);

	return feed_at(ep, &m, d->buf + SHR_PROTO_HDR_LEN, d->len - SHR_PROTO_HDR_LEN, rx_ns);
}

/* World 1: the result is the DATA's payload. */
static inline int
echo(struct shr_endpoint *ep, const struct pkt *d)
{
	return echo_at(ep, d, 0);
}

static inline void
fill_i32(int32_t *a, size_t n, int32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = seed * 100003 + (int32_t)i * 7 - 12345;
}

/* Check that c->pkts[from..from+n) resend chunks (slots) first..first+n, as sent first. */
static inline void
check_resends(const struct chan *c, size_t from, size_t n, uint32_t first_slot)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct pkt *a = &c->pkts[first_slot + i], *b = &c->pkts[from + i];

		assert_true(b->m.flags & SHR_FLAG_RETX);
		assert_int_equal(b->m.slot, first_slot + i);
		assert_int_equal(b->m.ver, a->m.ver);
		assert_int_equal(b->m.offset, a->m.offset);
		assert_int_equal(b->m.count, a->m.count);
		assert_int_equal(b->m.step, a->m.step);
		assert_memory_equal(b->buf + SHR_PROTO_HDR_LEN, a->buf + SHR_PROTO_HDR_LEN,
				    4 * a->m.count);
	}
}

#endif /* SHR_ENDPOINT_TEST_H */
