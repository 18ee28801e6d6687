/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Unit tests of the host endpoint's state machine, driven with a fake clock and an
 * in-memory channel; the test plays the aggregator (world 1: a RESULT echoes the DATA;
 * world 2: two endpoints' DATA summed).
 */

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

static int
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

static uint64_t
chan_now(void *ctx)
{
	return ((struct chan *)ctx)->now;
}

static void
chan_script(struct chan *c, unsigned int n, const int *rcs)
{
	assert_true(n <= 64);
	memcpy(c->script, rcs, n * sizeof(*rcs));
	c->script_n = n;
	c->script_pos = 0;
}

static void
chan_fini(struct chan *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->pkts[i].buf);
	free(c->pkts);
	memset(c, 0, sizeof(*c));
}

static struct shr_endpoint_params
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

static struct shr_endpoint *
ep_new(const struct shr_endpoint_params *p, struct chan *c)
{
	struct shr_endpoint_io io = { .send = chan_send, .now_ns = chan_now, .ctx = c };
	struct shr_endpoint *ep = shr_endpoint_create(p, &io);

	assert_non_null(ep);
	return ep;
}

static struct shr_endpoint_stats
stats(const struct shr_endpoint *ep)
{
	struct shr_endpoint_stats st;

	shr_endpoint_stats_get(ep, &st);
	return st;
}

/* The RESULT that answers a DATA: same identity, rank "all", LAST kept. */
static struct shr_proto_msg
result_of(const struct pkt *d)
{
	struct shr_proto_msg m = d->m;

	m.type = SHR_MSG_RESULT;
	m.rank = SHR_PROTO_RANK_ALL;
	m.flags &= SHR_FLAG_LAST;
	return m;
}

/* Build a message and feed it to the endpoint. */
static int
feed(struct shr_endpoint *ep, const struct shr_proto_msg *m, const void *payload, size_t len)
{
	uint8_t *buf = malloc(SHR_PROTO_HDR_LEN + len + 1);
	int rc;

	assert_non_null(buf);
	shr_proto_build(buf, m, payload, len);
	if (len > 0)
		memcpy(buf + SHR_PROTO_HDR_LEN, payload, len);
	rc = shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + len);
	free(buf);
	return rc;
}

/* World 1: the result is the DATA's payload. */
static int
echo(struct shr_endpoint *ep, const struct pkt *d)
{
	struct shr_proto_msg m = result_of(d);

	return feed(ep, &m, d->buf + SHR_PROTO_HDR_LEN, d->len - SHR_PROTO_HDR_LEN);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void
fill_i32(int32_t *a, size_t n, int32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = seed * 100003 + (int32_t)i * 7 - 12345;
}

/* ---- create / submit argument checks ---- */

static void
test_create_einval(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_io io = { .send = chan_send, .now_ns = chan_now, .ctx = &c };
	struct shr_endpoint_io bad_io;
	struct shr_endpoint_params p = params_default(4, 16), q;
	struct shr_endpoint *ep;

	(void)state;
#define EXPECT_EINVAL(pp, iop) do { \
		errno = 0; \
		assert_null(shr_endpoint_create(pp, iop)); \
		assert_int_equal(errno, EINVAL); \
	} while (0)

	EXPECT_EINVAL(NULL, &io);
	EXPECT_EINVAL(&p, NULL);
	bad_io = io;
	bad_io.send = NULL;
	EXPECT_EINVAL(&p, &bad_io);
	bad_io = io;
	bad_io.now_ns = NULL;
	EXPECT_EINVAL(&p, &bad_io);

	q = p; q.window = 0;
	EXPECT_EINVAL(&q, &io);
	q = p; q.window = SHR_ENDPOINT_MAX_WINDOW + 1;
	EXPECT_EINVAL(&q, &io);
	q = p; q.chunk_elems = 0;
	EXPECT_EINVAL(&q, &io);
	q = p; q.chunk_elems = 8192 / 4 + 1;
	EXPECT_EINVAL(&q, &io);
	q = p; q.dtype = 0;
	EXPECT_EINVAL(&q, &io);
	q = p; q.dtype = SHR_DTYPE_MAX;
	EXPECT_EINVAL(&q, &io);
	q = p; q.world = 0;
	EXPECT_EINVAL(&q, &io);
	q = p; q.world = 4; q.rank = 4;
	EXPECT_EINVAL(&q, &io);
	q = p; q.world = SHR_PROTO_MAX_WORLD + 1;
	EXPECT_EINVAL(&q, &io);
	q = p; q.rto_min_ns = 2 * MS; q.rto_max_ns = 1 * MS;
	EXPECT_EINVAL(&q, &io);
#undef EXPECT_EINVAL

	/* The limits themselves are fine: 8 KiB chunks, a 2-byte dtype, the largest window. */
	q = p; q.chunk_elems = 8192 / 4;
	ep = shr_endpoint_create(&q, &io);
	assert_non_null(ep);
	shr_endpoint_free(ep);
	q = p; q.dtype = SHR_DTYPE_FLOAT16; q.chunk_elems = 4096;
	ep = shr_endpoint_create(&q, &io);
	assert_non_null(ep);
	shr_endpoint_free(ep);
	q.chunk_elems = 4097;
	assert_null(shr_endpoint_create(&q, &io));
	q = p; q.window = SHR_ENDPOINT_MAX_WINDOW; q.world = 3; q.rank = 2;
	ep = shr_endpoint_create(&q, &io);
	assert_non_null(ep);
	assert_true(shr_endpoint_idle(ep));
	assert_int_equal(shr_endpoint_next_deadline(ep), UINT64_MAX);
	assert_int_equal(shr_endpoint_error(ep, NULL, NULL), 0);
	shr_endpoint_free(ep);
	shr_endpoint_free(NULL);

	/* rto_init is clamped into [rto_min, rto_max]. */
	q = p; q.rto_min_ns = 5 * MS; q.rto_max_ns = 9 * MS;
	ep = shr_endpoint_create(&q, &io);
	assert_non_null(ep);
	assert_int_equal(stats(ep).rto_ns, 5 * MS);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_submit_einval(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(4, 16);
	struct shr_endpoint *ep = ep_new(&p, &c);
	int32_t buf[64];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = buf, .out = buf, .count = 32 };
	struct shr_endpoint_op o;

	(void)state;
	assert_int_equal(shr_endpoint_submit(ep, NULL), -EINVAL);
	o = op; o.op = SHR_OP_MAX_;
	assert_int_equal(shr_endpoint_submit(ep, &o), -EINVAL);
	o = op; o.in = NULL;
	assert_int_equal(shr_endpoint_submit(ep, &o), -EINVAL);
	o = op; o.out = NULL;
	assert_int_equal(shr_endpoint_submit(ep, &o), -EINVAL);
	o = op; o.out = buf + 1;	/* partial overlap */
	assert_int_equal(shr_endpoint_submit(ep, &o), -EINVAL);
	o = op; o.in = buf + 31;	/* last element of in is the first of out */
	assert_int_equal(shr_endpoint_submit(ep, &o), -EINVAL);
	o = op; o.count = UINT64_MAX / 2;
	assert_int_equal(shr_endpoint_submit(ep, &o), -EINVAL);
	assert_true(shr_endpoint_idle(ep));
	shr_endpoint_poll(ep);
	assert_int_equal(c.calls, 0);

	/* Adjacent, non-overlapping buffers; count 0 with no buffers; every op on int32. */
	o = op; o.in = buf; o.out = buf + 32;
	assert_int_equal(shr_endpoint_submit(ep, &o), 0);
	o = op; o.in = NULL; o.out = NULL; o.count = 0;
	assert_int_equal(shr_endpoint_submit(ep, &o), 1);
	o = op; o.op = SHR_OP_PROD;
	assert_int_equal(shr_endpoint_submit(ep, &o), 2);
	shr_endpoint_free(ep);
	chan_fini(&c);

	/* PROD of quantised values is refused; SUM is fine. */
	p.dtype = SHR_DTYPE_QINT32;
	ep = ep_new(&p, &c);
	o = op; o.op = SHR_OP_PROD;
	assert_int_equal(shr_endpoint_submit(ep, &o), -EINVAL);
	o.op = SHR_OP_SUM;
	assert_int_equal(shr_endpoint_submit(ep, &o), 0);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_queue_full_and_handles(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep = ep_new(&p, &c);
	static int32_t in[SHR_ENDPOINT_MAX_OPS][4], out[SHR_ENDPOINT_MAX_OPS][4];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .count = 4 };
	struct shr_endpoint_op zero = { .op = SHR_OP_SUM, .count = 0 };
	int i, h;

	(void)state;
	assert_int_equal(shr_endpoint_test(ep, 0), -ENOENT);	/* nothing submitted */
	for (i = 0; i < SHR_ENDPOINT_MAX_OPS; i++) {
		fill_i32(in[i], 4, i);
		op.in = in[i];
		op.out = out[i];
		op.tensor = 100 + i;
		assert_int_equal(shr_endpoint_submit(ep, &op), i);
	}
	assert_int_equal(shr_endpoint_submit(ep, &op), -EBUSY);
	assert_int_equal(shr_endpoint_submit(ep, &zero), -EBUSY);
	assert_int_equal(shr_endpoint_test(ep, -1), -ENOENT);
	assert_int_equal(shr_endpoint_test(ep, SHR_ENDPOINT_MAX_OPS), -ENOENT);
	assert_int_equal(shr_endpoint_test(ep, 0), 0);

	/* Complete the first op: one more fits. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	assert_int_equal(shr_endpoint_test(ep, 0), 1);
	assert_int_equal(shr_endpoint_test(ep, 1), 0);
	assert_int_equal(shr_endpoint_submit(ep, &zero), SHR_ENDPOINT_MAX_OPS);
	assert_int_equal(shr_endpoint_submit(ep, &zero), -EBUSY);
	/* The count-0 op is done, though ops before it are not. */
	assert_int_equal(shr_endpoint_test(ep, SHR_ENDPOINT_MAX_OPS), 1);
	assert_false(shr_endpoint_idle(ep));
	/* Completing op 2 before op 1 frees nothing: the queue is in order. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.pkts[2].m.tensor, 102);
	assert_int_equal(c.pkts[2].m.offset, 2 * 4);	/* the third op's */
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_int_equal(shr_endpoint_test(ep, 2), 1);
	assert_int_equal(shr_endpoint_test(ep, 1), 0);
	assert_int_equal(shr_endpoint_submit(ep, &zero), -EBUSY);
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	/* Ops 0, 1 and 2 done: two more fit. */
	assert_int_equal(shr_endpoint_submit(ep, &zero), SHR_ENDPOINT_MAX_OPS + 1);
	assert_int_equal(shr_endpoint_submit(ep, &zero), SHR_ENDPOINT_MAX_OPS + 2);
	assert_int_equal(shr_endpoint_submit(ep, &zero), -EBUSY);
	/* Handle 0 is now older than the last SHR_ENDPOINT_MAX_OPS. */
	assert_int_equal(shr_endpoint_test(ep, 0), -ENOENT);
	assert_int_equal(shr_endpoint_test(ep, 1), -ENOENT);
	assert_int_equal(shr_endpoint_test(ep, 2), -ENOENT);
	assert_int_equal(shr_endpoint_test(ep, 3), 0);

	/* Drain everything. */
	for (i = 0; i < 200 && !shr_endpoint_idle(ep); i++) {
		size_t first = c.n;

		assert_int_equal(shr_endpoint_poll(ep), 0);
		for (; first < c.n; first++)
			assert_int_equal(echo(ep, &c.pkts[first]), 0);
	}
	assert_true(shr_endpoint_idle(ep));
	for (i = 0; i < SHR_ENDPOINT_MAX_OPS; i++)
		assert_memory_equal(in[i], out[i], sizeof(in[i]));
	assert_int_equal(stats(ep).ops_done, SHR_ENDPOINT_MAX_OPS + 3);

	/* Many count-0 ops: handles keep counting, old ones expire. */
	for (i = 0; i < 100; i++) {
		h = shr_endpoint_submit(ep, &zero);
		assert_int_equal(h, SHR_ENDPOINT_MAX_OPS + 3 + i);
		assert_int_equal(shr_endpoint_test(ep, h), 1);
	}
	assert_int_equal(shr_endpoint_test(ep, h - SHR_ENDPOINT_MAX_OPS + 1), 1);
	assert_int_equal(shr_endpoint_test(ep, h - SHR_ENDPOINT_MAX_OPS), -ENOENT);
	assert_int_equal(shr_endpoint_test(ep, h + 1), -ENOENT);
	assert_true(shr_endpoint_idle(ep));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* ---- window / version bookkeeping ---- */

struct xchunk {
	uint32_t op;		/* index into the test's ops (its step: op / 2 * 3) */
	uint64_t offset;	/* in the op */
	uint64_t stream;	/* in the stream: the header's offset */
	uint32_t count;
	bool last;
};

static void
run_window(uint32_t w, uint32_t chunk, unsigned int nops)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(w, chunk);
	struct shr_endpoint *ep;
	uint64_t total_chunks = 3 * (uint64_t)w + 5;
	uint64_t *counts = calloc(nops, sizeof(*counts));
	int32_t **in = calloc(nops, sizeof(*in)), **out = calloc(nops, sizeof(*out));
	int *handles = calloc(nops, sizeof(*handles));
	struct xchunk *x;
	size_t *pkt_of;		/* first transmission of chunk k: index in c.pkts */
	uint8_t *delivered;
	uint64_t *outstanding, nout = 0;
	uint64_t nx = 0, sent = 0, ndel = 0, per_op, k, stream = 0;
	unsigned int i, rounds = 0;

	assert_non_null(counts);
	/* Results come back in random order, none lost: no reordering may count as a loss. */
	p.reorder = UINT32_MAX;
	ep = ep_new(&p, &c);
	/* Op sizes: about total_chunks chunks in all, with short last chunks and a count 0. */
	per_op = total_chunks / (nops - 1);
	for (i = 0; i < nops; i++) {
		if (i == 1)
			counts[i] = 0;
		else
			counts[i] = per_op * chunk - (i % 3) * (chunk > 1 ? 1 : 0) + (i % 2);
	}
	x = calloc(4 * total_chunks + 16, sizeof(*x));
	assert_non_null(x);
	for (i = 0; i < nops; i++) {
		uint64_t off;

		in[i] = malloc((counts[i] + 1) * sizeof(int32_t));
		out[i] = malloc((counts[i] + 1) * sizeof(int32_t));
		fill_i32(in[i], counts[i], (int32_t)i + 1);
		memset(out[i], 0xa5, (counts[i] + 1) * sizeof(int32_t));
		for (off = 0; off < counts[i]; off += chunk) {
			x[nx].op = i;
			x[nx].offset = off;
			x[nx].stream = stream + off;
			x[nx].count = counts[i] - off < chunk ? (uint32_t)(counts[i] - off) : chunk;
			x[nx].last = off + chunk >= counts[i];
			nx++;
		}
		stream += counts[i];
	}
	pkt_of = calloc(nx, sizeof(*pkt_of));
	delivered = calloc(nx, 1);
	outstanding = calloc(nx, sizeof(*outstanding));
	assert_true(pkt_of && delivered && outstanding);

	c.now = 12345;
	for (i = 0; i < nops; i++) {
		struct shr_endpoint_op op = {
			.op = SHR_OP_SUM, .in = in[i], .out = out[i], .count = counts[i],
			.tensor = 0x1000 + i, .step = i / 2 * 3,	/* equal, then greater */
		};
		handles[i] = shr_endpoint_submit(ep, &op);
		assert_int_equal(handles[i], i);
	}
	assert_int_equal(shr_endpoint_test(ep, 1), 1);	/* count 0: done at once */

	while (!shr_endpoint_idle(ep)) {
		size_t first = c.n, j;

		assert_true(++rounds < 10000);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		for (j = first; j < c.n; j++) {
			const struct pkt *d = &c.pkts[j];

			assert_false(d->m.flags & SHR_FLAG_RETX);
			k = sent++;
			assert_true(k < nx);
			/* chunk k on slot k mod W, version (k / W) mod 2 */
			assert_int_equal(d->m.slot, k % w);
			assert_int_equal(d->m.ver, (k / w) % 2);
			/* chunk k + W only after the result of chunk k */
			if (k >= w)
				assert_true(delivered[k - w]);
			assert_int_equal(d->m.job, 7);
			assert_int_equal(d->m.rank, 0);
			assert_int_equal(d->m.world, 1);
			assert_int_equal(d->m.dtype, SHR_DTYPE_INT32);
			assert_int_equal(d->m.op, SHR_OP_SUM);
			assert_int_equal(d->m.aux, 0);
			assert_int_equal(d->m.step, x[k].op / 2 * 3);
			assert_int_equal(d->m.tensor, 0x1000 + x[k].op);
			assert_int_equal(d->m.offset, x[k].stream);
			assert_int_equal(d->m.count, x[k].count);
			assert_int_equal(!!(d->m.flags & SHR_FLAG_LAST), x[k].last);
			/* sent straight from the user's buffer */
			assert_ptr_equal(d->payload, in[x[k].op] + x[k].offset);
			pkt_of[k] = j;
			outstanding[nout++] = k;
		}
		assert_true(nout <= w);
		/* The window is used in full: the next chunk is blocked by chunk next - W. */
		if (sent < nx) {
			assert_true(sent >= w);
			assert_false(delivered[sent - w]);
		}
		if (nx - sent == 0 && nout == 0)
			break;
		/* Deliver a random half of the outstanding chunks, in random order. */
		for (j = nout; j > 1; j--) {
			size_t r = rng() % j;
			uint64_t t = outstanding[j - 1];

			outstanding[j - 1] = outstanding[r];
			outstanding[r] = t;
		}
		for (j = 0; j < nout;) {
			if (rng() & 1) {
				k = outstanding[j];
				assert_int_equal(echo(ep, &c.pkts[pkt_of[k]]), 0);
				delivered[k] = 1;
				ndel++;
				outstanding[j] = outstanding[--nout];
			} else {
				j++;
			}
		}
		c.now += 1;	/* far below any timeout: nothing is resent */
	}
	assert_int_equal(sent, nx);
	assert_int_equal(ndel, nx);
	for (i = 0; i < nops; i++) {
		assert_int_equal(shr_endpoint_test(ep, handles[i]), 1);
		assert_memory_equal(in[i], out[i], counts[i] * sizeof(int32_t));
		/* nothing written past the end */
		assert_int_equal((uint32_t)out[i][counts[i]], 0xa5a5a5a5u);
	}
	{
		struct shr_endpoint_stats st = stats(ep);

		assert_int_equal(st.tx_data, nx);
		assert_int_equal(st.tx_retx, 0);
		assert_int_equal(st.rx_results, nx);
		assert_int_equal(st.rx_dup, 0);
		assert_int_equal(st.rx_bad, 0);
		assert_int_equal(st.ops_done, nops);
	}
	assert_int_equal(shr_endpoint_next_deadline(ep), UINT64_MAX);

	for (i = 0; i < nops; i++) {
		free(in[i]);
		free(out[i]);
	}
	free(in);
	free(out);
	free(handles);
	free(counts);
	free(x);
	free(pkt_of);
	free(delivered);
	free(outstanding);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_window(void **state)
{
	uint32_t w = *(const uint32_t *)*state;

	run_window(w, 3, 5);
	run_window(w, 1, 9);
}

static const uint32_t win_1 = 1, win_2 = 2, win_7 = 7, win_128 = 128, win_4096 = 4096;
#define WINDOW_TEST(v) { "test_window_" #v, test_window, NULL, NULL, (void *)&(v) }

/* Check that c->pkts[from..from+n) resend chunks (slots) first..first+n, as sent first. */
static void
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

/*
 * Thousands outstanding and no answer (a stalled rank, or the whole window lost): the
 * timer fires at the right times, each expiry resends only a small budget of the oldest
 * chunks, in send order, and backs off for all of them; then the answers to timed-out
 * chunks clock out the rest (2 more per answer), every chunk resent exactly once.
 */
static void
test_timers_many(void **state)
{
	const uint32_t w = 4096;
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(w, 2);
	struct shr_endpoint *ep;
	uint64_t n = 2 * (uint64_t)w * 2, t0 = 1000, t;
	int32_t *in = malloc(n * sizeof(int32_t)), *out = calloc(n, sizeof(int32_t));
	/* Two ops of one window each: the second starts once the first is done. */
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = n / 2 };
	struct shr_endpoint_op op2 = { .op = SHR_OP_SUM, .in = in + n / 2, .out = out + n / 2,
				       .count = n / 2, .step = 1 };
	struct shr_endpoint_stats st;
	size_t i, first, burst, resent;
	uint32_t next_slot;

	(void)state;
	p.rto_init_ns = 1 * MS;
	p.rto_min_ns = 50 * US;
	p.rto_max_ns = 100 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, n, 3);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), 0);	/* work to send now */
	c.now = t0;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 1 * MS);

	c.now = t0 + 1 * MS - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w);

	/* All expire at once: only the 2 oldest are resent, same identity; RTO doubles. */
	c.now = t0 + 1 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w + 2);
	check_resends(&c, w, 2, 0);
	st = stats(ep);
	assert_int_equal(st.tx_retx, 2);
	assert_int_equal(st.tx_rto, 2);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.backoff, 1);
	assert_int_equal(st.rto_ns, 1 * MS);	/* the base is kept */
	/* The timer restarts with the doubled RTO: 2 ms after the expiry, then 4 ms. */
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 3 * MS);
	c.now = t0 + 3 * MS - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w + 2);
	c.now = t0 + 3 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w + 4);
	check_resends(&c, w + 2, 2, 2);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 7 * MS);
	c.now = t0 + 7 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w + 6);
	check_resends(&c, w + 4, 2, 4);
	st = stats(ep);
	assert_int_equal(st.timeouts, 3);
	assert_int_equal(st.backoff, 3);
	assert_int_equal(st.tx_retx, 6);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 15 * MS);

	/*
	 * The answers to the last two resends come 100 us later: the path works, the chunks
	 * sent before the timeout were lost. Recovery resends the oldest of them first
	 * (chunks 0-3, resent at earlier expiries, then 6...), 2 per answer: 4, 8, 16...
	 */
	c.now = t0 + 7 * MS + 100 * US;
	assert_int_equal(echo(ep, &c.pkts[w + 4]), 0);
	assert_int_equal(echo(ep, &c.pkts[w + 5]), 0);
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 0);	/* Karn: resent chunks give no sample */
	assert_int_equal(st.rto_ns, 1 * MS);
	assert_int_equal(st.backoff, 0);	/* but the path works: the backoff ends */
	assert_int_equal(shr_endpoint_next_deadline(ep), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w + 10);
	for (i = 0; i < 4; i++) {
		assert_int_equal(c.pkts[w + 6 + i].m.slot, i);
		assert_true(c.pkts[w + 6 + i].m.flags & SHR_FLAG_RETX);
	}
	first = w + 6;
	burst = 4;
	resent = 4;
	next_slot = 6;
	while (resent < w - 2) {
		size_t j, got;

		/* Nothing more before the answers. */
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + burst);
		/* The timer restarted at the last expiry: it fires again at t0 + 8 ms. */
		assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 8 * MS);
		c.now += 50 * US;
		for (j = 0; j < burst; j++)
			assert_int_equal(echo(ep, &c.pkts[first + j]), 0);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		got = c.n - (first + burst);
		/* Twice as many, or what is left. */
		assert_int_equal(got, 2 * burst < w - 2 - resent ? 2 * burst : w - 2 - resent);
		check_resends(&c, first + burst, got, next_slot);
		first += burst;
		burst = got;
		resent += got;
		next_slot += (uint32_t)got;
	}
	assert_int_equal(next_slot, w);
	st = stats(ep);
	assert_int_equal(st.tx_retx, 4 + w);	/* every chunk once, chunks 0-3 twice */
	assert_int_equal(st.tx_rto, 4 + w);
	assert_int_equal(st.timeouts, 3);
	assert_true(c.now < t0 + 8 * MS);
	/* The last resends answered: the stream moves on, with the base RTO. */
	c.now += 50 * US;
	for (i = 0; i < burst; i++)
		assert_int_equal(echo(ep, &c.pkts[first + i]), 0);
	assert_int_equal(stats(ep).backoff, 0);
	assert_int_equal(shr_endpoint_test(ep, 0), 1);
	assert_int_equal(shr_endpoint_next_deadline(ep), UINT64_MAX);
	assert_int_equal(shr_endpoint_submit(ep, &op2), 1);
	assert_int_equal(shr_endpoint_next_deadline(ep), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	first += burst;
	assert_int_equal(c.n, first + w);
	for (i = 0; i < w; i++) {
		const struct pkt *b = &c.pkts[first + i];

		assert_false(b->m.flags & SHR_FLAG_RETX);
		assert_int_equal(b->m.slot, i);
		assert_int_equal(b->m.ver, 1);
		assert_int_equal(b->m.step, 1);
		assert_int_equal(b->m.offset, n / 2 + (uint64_t)i * 2);	/* after op's */
	}
	t = c.now;
	assert_int_equal(shr_endpoint_next_deadline(ep), t + 1 * MS);
	/* Answer them in reverse order after 200 us, before any poll: none is resent. */
	c.now = t + 200 * US;
	for (i = w; i-- > 0;)
		assert_int_equal(echo(ep, &c.pkts[first + i]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_true(shr_endpoint_idle(ep));
	assert_int_equal(shr_endpoint_test(ep, 1), 1);
	assert_memory_equal(in, out, n * sizeof(int32_t));
	st = stats(ep);
	assert_int_equal(st.tx_data, 2 * w);
	assert_int_equal(st.tx_retx, 4 + w);
	assert_int_equal(st.tx_fast, 0);
	assert_int_equal(st.rx_results, 2 * w);
	assert_int_equal(st.srtt_ns, 200 * US);
	assert_int_equal(st.backoff, 0);	/* fresh samples restore the timer */
	assert_int_equal(shr_endpoint_next_deadline(ep), UINT64_MAX);
	free(in);
	free(out);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* ---- offsets, short last chunk, count 0, in place ---- */

static void
test_offsets_short_last(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(8, 4);
	struct shr_endpoint *ep;
	uint16_t in[10], out[11];
	struct shr_endpoint_op op = {
		.op = SHR_OP_MAX, .in = in, .out = out, .count = 10, .tensor = 77,
	};
	size_t i;
	int h;

	(void)state;
	p.dtype = SHR_DTYPE_BFLOAT16;
	p.rank = 2;
	p.world = 5;
	ep = ep_new(&p, &c);
	for (i = 0; i < 10; i++)
		in[i] = (uint16_t)(0x3f80 + i);
	memset(out, 0x5a, sizeof(out));
	h = shr_endpoint_submit(ep, &op);
	assert_int_equal(h, 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	for (i = 0; i < 3; i++) {
		const struct pkt *d = &c.pkts[i];

		assert_int_equal(d->m.slot, i);
		assert_int_equal(d->m.offset, 4 * i);
		assert_int_equal(d->m.count, i < 2 ? 4 : 2);
		assert_int_equal(d->len, SHR_PROTO_HDR_LEN + 2 * d->m.count);
		assert_int_equal(!!(d->m.flags & SHR_FLAG_LAST), i == 2);
		assert_int_equal(d->m.dtype, SHR_DTYPE_BFLOAT16);
		assert_int_equal(d->m.op, SHR_OP_MAX);
		assert_int_equal(d->m.rank, 2);
		assert_int_equal(d->m.world, 5);
		assert_int_equal(d->m.tensor, 77);
		assert_int_equal(d->m.step, 0);
		assert_ptr_equal(d->payload, in + 4 * i);
		assert_memory_equal(d->buf + SHR_PROTO_HDR_LEN, in + 4 * i, 2 * d->m.count);
	}
	/* Results out of order; each lands at its offset. */
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_memory_equal(out + 8, in + 8, 4);
	assert_int_equal(out[0], 0x5a5a);
	assert_int_equal(out[10], 0x5a5a);
	assert_int_equal(shr_endpoint_test(ep, h), 0);
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	assert_int_equal(out[4], 0x5a5a);
	assert_int_equal(shr_endpoint_test(ep, h), 0);
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	assert_int_equal(shr_endpoint_test(ep, h), 1);
	assert_memory_equal(out, in, sizeof(in));
	assert_int_equal(out[10], 0x5a5a);
	assert_true(shr_endpoint_idle(ep));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_count_zero(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(4, 4);
	struct shr_endpoint *ep = ep_new(&p, &c);
	int32_t a[8], b[8], oa[8], ob[8];
	struct shr_endpoint_op z = { .op = SHR_OP_SUM, .count = 0, .tensor = 5 };
	struct shr_endpoint_op opa = { .op = SHR_OP_SUM, .in = a, .out = oa, .count = 8,
				       .tensor = 6, .step = 1 };
	struct shr_endpoint_op opb = { .op = SHR_OP_SUM, .in = b, .out = ob, .count = 8,
				       .tensor = 7, .step = 3 };
	size_t i;

	(void)state;
	fill_i32(a, 8, 1);
	fill_i32(b, 8, 2);
	/* Alone: done at once, nothing sent, still idle. */
	assert_int_equal(shr_endpoint_submit(ep, &z), 0);
	assert_int_equal(shr_endpoint_test(ep, 0), 1);
	assert_true(shr_endpoint_idle(ep));
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.calls, 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), UINT64_MAX);
	assert_int_equal(stats(ep).ops_done, 1);

	/* Between two ops: takes no place in the stream, sends nothing, does not disturb the
	 * slots. */
	assert_int_equal(shr_endpoint_submit(ep, &opa), 1);
	z.step = 1;	/* not below opa's */
	assert_int_equal(shr_endpoint_submit(ep, &z), 2);
	assert_int_equal(shr_endpoint_submit(ep, &opb), 3);
	assert_int_equal(shr_endpoint_test(ep, 2), 1);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(c.pkts[i].m.slot, i);
		assert_int_equal(c.pkts[i].m.step, i < 2 ? 1 : 3);
		assert_int_equal(c.pkts[i].m.tensor, i < 2 ? 6 : 7);
		assert_int_equal(c.pkts[i].m.offset, (i < 2 ? 0 : 8) + (i % 2) * 4);
		assert_int_equal(!!(c.pkts[i].m.flags & SHR_FLAG_LAST), i % 2);
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(echo(ep, &c.pkts[i]), 0);
	assert_true(shr_endpoint_idle(ep));
	assert_memory_equal(a, oa, sizeof(a));
	assert_memory_equal(b, ob, sizeof(b));
	assert_int_equal(stats(ep).ops_done, 4);
	assert_int_equal(stats(ep).tx_data, 4);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * World 2: two endpoints; the test's box sums their chunks (matching identities) and sends
 * the result to both. Buffers are used in place.
 */
static void
test_world2_in_place(void **state)
{
	struct chan c0 = { 0 }, c1 = { 0 };
	struct shr_endpoint_params p = params_default(3, 5);
	struct shr_endpoint *e0, *e1;
	enum { NOPS = 4 };
	uint64_t counts[NOPS] = { 37, 5, 0, 64 };
	int32_t *b0[NOPS], *b1[NOPS], *want[NOPS];
	size_t d0 = 0, d1 = 0, j;
	unsigned int i, rounds = 0;

	(void)state;
	p.world = 2;
	e0 = ep_new(&p, &c0);
	p.rank = 1;
	e1 = ep_new(&p, &c1);
	for (i = 0; i < NOPS; i++) {
		struct shr_endpoint_op op = { .op = SHR_OP_SUM, .count = counts[i],
					      .tensor = 40 + i };

		b0[i] = malloc((counts[i] + 1) * 4);
		b1[i] = malloc((counts[i] + 1) * 4);
		want[i] = malloc((counts[i] + 1) * 4);
		fill_i32(b0[i], counts[i], 10 + i);
		fill_i32(b1[i], counts[i], 20 + i);
		for (j = 0; j < counts[i]; j++)
			want[i][j] = (int32_t)((uint32_t)b0[i][j] + (uint32_t)b1[i][j]);
		op.in = op.out = b0[i];
		assert_int_equal(shr_endpoint_submit(e0, &op), i);
		op.in = op.out = b1[i];
		assert_int_equal(shr_endpoint_submit(e1, &op), i);
	}
	while (!shr_endpoint_idle(e0) || !shr_endpoint_idle(e1)) {
		assert_true(++rounds < 1000);
		assert_int_equal(shr_endpoint_poll(e0), 0);
		/* Rank 1 polls only every other round: the box waits for both. */
		if (rounds % 2)
			assert_int_equal(shr_endpoint_poll(e1), 0);
		while (d0 < c0.n && d1 < c1.n) {
			const struct pkt *x = &c0.pkts[d0++], *y = &c1.pkts[d1++];
			struct shr_proto_msg m = result_of(x);
			int32_t sum[5];

			assert_int_equal(x->m.slot, y->m.slot);
			assert_int_equal(x->m.ver, y->m.ver);
			assert_int_equal(x->m.step, y->m.step);
			assert_int_equal(x->m.tensor, y->m.tensor);
			assert_int_equal(x->m.offset, y->m.offset);
			assert_int_equal(x->m.count, y->m.count);
			assert_int_equal(x->m.rank, 0);
			assert_int_equal(y->m.rank, 1);
			for (j = 0; j < x->m.count; j++) {
				int32_t u, v;

				memcpy(&u, x->buf + SHR_PROTO_HDR_LEN + 4 * j, 4);
				memcpy(&v, y->buf + SHR_PROTO_HDR_LEN + 4 * j, 4);
				sum[j] = (int32_t)((uint32_t)u + (uint32_t)v);
			}
			assert_int_equal(feed(e0, &m, sum, 4 * x->m.count), 0);
			assert_int_equal(feed(e1, &m, sum, 4 * x->m.count), 0);
		}
	}
	for (i = 0; i < NOPS; i++) {
		assert_memory_equal(b0[i], want[i], counts[i] * 4);
		assert_memory_equal(b1[i], want[i], counts[i] * 4);
		free(b0[i]);
		free(b1[i]);
		free(want[i]);
	}
	assert_int_equal(stats(e0).tx_data, 8 + 1 + 13);
	assert_int_equal(stats(e1).rx_results, 8 + 1 + 13);
	shr_endpoint_free(e0);
	shr_endpoint_free(e1);
	chan_fini(&c0);
	chan_fini(&c1);
}

/* ---- duplicates, stale and wrong results ---- */

static void
test_dup_and_stale(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep = ep_new(&p, &c);
	int32_t in[16], out[16], snap[16], junk[4] = { 9, 9, 9, 9 };
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	struct shr_proto_msg m;

	(void)state;
	fill_i32(in, 16, 4);
	memset(out, 0, sizeof(out));
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	memcpy(snap, out, sizeof(out));

	/* The same result again, with other contents: ignored, output unchanged. */
	m = result_of(&c.pkts[0]);
	assert_int_equal(feed(ep, &m, junk, sizeof(junk)), -EALREADY);
	assert_int_equal(echo(ep, &c.pkts[0]), -EALREADY);
	assert_memory_equal(out, snap, sizeof(out));
	assert_int_equal(stats(ep).rx_dup, 2);

	/* Chunk 2 goes on slot 0, version 1. The old version-0 result is stale. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.pkts[2].m.slot, 0);
	assert_int_equal(c.pkts[2].m.ver, 1);
	assert_int_equal(feed(ep, &m, junk, sizeof(junk)), -EALREADY);
	/* chunk 0's identity with the current version: stale too (offset differs) */
	m.ver = 1;
	assert_int_equal(feed(ep, &m, junk, sizeof(junk)), -EALREADY);
	/* chunk 2's identity with the old version */
	m = result_of(&c.pkts[2]);
	m.ver = 0;
	assert_int_equal(feed(ep, &m, junk, sizeof(junk)), -EALREADY);
	assert_memory_equal(out, snap, sizeof(out));
	assert_int_equal(stats(ep).rx_dup, 5);

	/* Chunk 1's result, twice. */
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	assert_int_equal(echo(ep, &c.pkts[1]), -EALREADY);
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 4);
	/* Chunk 3 on slot 1 version 1; chunk 1's (version 0) result is stale now. */
	assert_int_equal(c.pkts[3].m.ver, 1);
	memcpy(snap, out, sizeof(out));
	assert_int_equal(echo(ep, &c.pkts[1]), -EALREADY);
	assert_int_equal(echo(ep, &c.pkts[2]), -EALREADY);
	assert_memory_equal(out, snap, sizeof(out));
	assert_int_equal(echo(ep, &c.pkts[3]), 0);
	assert_memory_equal(out, in, sizeof(in));
	/* After the op is done, its results are duplicates. */
	assert_int_equal(echo(ep, &c.pkts[3]), -EALREADY);
	assert_int_equal(stats(ep).rx_dup, 9);
	assert_int_equal(stats(ep).rx_results, 4);
	assert_int_equal(stats(ep).rx_bad, 0);
	assert_true(shr_endpoint_idle(ep));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_wrong_results(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep = ep_new(&p, &c);
	int32_t in[4], out[4], zero[4] = { 0 }, junk[4] = { 1, 2, 3, 4 };
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4,
				      .tensor = 3 };
	struct shr_proto_msg good, m;
	uint8_t buf[SHR_PROTO_HDR_LEN + 16];
	uint64_t bad = 0, dup = 0;
	size_t len;

	(void)state;
	fill_i32(in, 4, 5);
	memset(out, 0, sizeof(out));
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 1);
	good = result_of(&c.pkts[0]);

#define BAD(expr_m, rc) do { \
		m = good; \
		expr_m; \
		assert_int_equal(feed(ep, &m, junk, 4 * m.count), rc); \
		if ((rc) == -EINVAL) \
			bad++; \
		else \
			dup++; \
		assert_memory_equal(out, zero, sizeof(out)); \
	} while (0)

	BAD(m.job = 8, -EINVAL);
	BAD(m.slot = 2, -EINVAL);			/* outside the window */
	BAD(m.slot = SHR_PROTO_SLOT_MASK, -EINVAL);
	BAD(m.dtype = SHR_DTYPE_FLOAT32, -EINVAL);
	BAD(m.op = SHR_OP_MIN, -EINVAL);
	BAD(m.type = SHR_MSG_DATA, -EINVAL);		/* its own DATA looped back */
	BAD(m.type = SHR_MSG_JOIN_ACK, -EINVAL);
	BAD(m.slot = 1, -EALREADY);			/* nothing outstanding there */
	BAD(m.ver = 1, -EALREADY);
	BAD(m.tensor = 4, -EALREADY);
	BAD(m.step = 1, -EALREADY);
	BAD(m.offset = 4, -EALREADY);
	BAD(m.count = 3, -EALREADY);
#undef BAD

	/* Corrupted CRC: payload byte, header byte. */
	shr_proto_build(buf, &good, junk, sizeof(junk));
	memcpy(buf + SHR_PROTO_HDR_LEN, junk, sizeof(junk));
	len = sizeof(buf);
	buf[SHR_PROTO_HDR_LEN + 5] ^= 0x10;
	assert_int_equal(shr_endpoint_input(ep, buf, len), -EINVAL);
	buf[SHR_PROTO_HDR_LEN + 5] ^= 0x10;
	buf[27] ^= 0x01;	/* tensor id */
	assert_int_equal(shr_endpoint_input(ep, buf, len), -EINVAL);
	buf[27] ^= 0x01;
	/* Short, and a payload one byte short of the count. */
	assert_int_equal(shr_endpoint_input(ep, buf, 20), -EINVAL);
	assert_int_equal(shr_endpoint_input(ep, buf, len - 1), -EINVAL);
	bad += 4;
	assert_memory_equal(out, zero, sizeof(out));

	assert_int_equal(stats(ep).rx_bad, bad);
	assert_int_equal(stats(ep).rx_dup, dup);
	assert_int_equal(stats(ep).rx_results, 0);
	assert_int_equal(shr_endpoint_test(ep, 0), 0);

	/* The intact message is accepted (the box summed to junk). */
	assert_int_equal(shr_endpoint_input(ep, buf, len), 0);
	assert_memory_equal(out, junk, sizeof(out));
	assert_int_equal(shr_endpoint_test(ep, 0), 1);
	assert_int_equal(shr_endpoint_error(ep, NULL, NULL), 0);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* ---- loss, RTT, backoff ---- */

static void
test_loss_data(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(4, 4);
	struct shr_endpoint *ep;
	int32_t in[4], out[4];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4,
				      .tensor = 9 };
	const uint64_t t0 = 5000;
	struct shr_endpoint_stats st;
	size_t i;

	(void)state;
	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 4, 6);
	c.now = t0;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 1);		/* "lost": the test never answers it */
	assert_false(c.pkts[0].m.flags & SHR_FLAG_RETX);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 1 * MS);
	c.now = t0 + 1 * MS - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 1);

	/* Resent after RTO, then after 2 RTO, 4 RTO. */
	c.now = t0 + 1 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 3 * MS);
	c.now = t0 + 3 * MS - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	c.now = t0 + 3 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 7 * MS);
	for (i = 1; i < 3; i++) {
		const struct pkt *r = &c.pkts[i];

		assert_true(r->m.flags & SHR_FLAG_RETX);
		assert_true(r->m.flags & SHR_FLAG_LAST);
		assert_int_equal(r->m.slot, 0);
		assert_int_equal(r->m.ver, 0);
		assert_int_equal(r->m.step, 0);
		assert_int_equal(r->m.tensor, 9);
		assert_int_equal(r->m.offset, 0);
		assert_int_equal(r->m.count, 4);
		assert_ptr_equal(r->payload, in);
		assert_memory_equal(r->buf + SHR_PROTO_HDR_LEN, in, sizeof(in));
	}
	st = stats(ep);
	assert_int_equal(st.tx_data, 1);
	assert_int_equal(st.tx_retx, 2);

	/* The result of the resend: accepted, no RTT sample (Karn). */
	c.now = t0 + 3 * MS + 10 * US;
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_memory_equal(out, in, sizeof(in));
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 0);
	assert_int_equal(st.rto_ns, 1 * MS);
	assert_int_equal(shr_endpoint_test(ep, 0), 1);
	assert_int_equal(shr_endpoint_next_deadline(ep), UINT64_MAX);
	c.now = t0 + 100 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_loss_result(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(4, 4);
	struct shr_endpoint *ep;
	int32_t in[8], out[8];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 8 };

	(void)state;
	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 8, 7);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	/* Chunk 0's result arrives; chunk 1's is lost on the way back. */
	c.now = 50 * US;
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	assert_int_equal(stats(ep).srtt_ns, 50 * US);
	assert_int_equal(stats(ep).rto_ns, 150 * US);
	/* One timer for all chunks: chunk 1 now expires with the adapted RTO. */
	assert_int_equal(shr_endpoint_next_deadline(ep), 150 * US);
	c.now = 150 * US - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	c.now = 150 * US;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 3);
	assert_true(c.pkts[2].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[2].m.slot, 1);
	/* The box resends the result to this rank; the late original arrives too. */
	c.now = 150 * US + 20 * US;
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_int_equal(echo(ep, &c.pkts[1]), -EALREADY);
	assert_memory_equal(out, in, sizeof(in));
	/* Karn: the sample of the resent chunk is not taken. */
	assert_int_equal(stats(ep).srtt_ns, 50 * US);
	assert_int_equal(stats(ep).rx_dup, 1);
	assert_true(shr_endpoint_idle(ep));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* Send one chunk, answer it after delay ns; returns the RESULT's input rc. */
static int
one_round(struct shr_endpoint *ep, struct chan *c, uint64_t delay)
{
	size_t first = c->n;

	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c->n, first + 1);
	assert_false(c->pkts[first].m.flags & SHR_FLAG_RETX);
	c->now += delay;
	return echo(ep, &c->pkts[first]);
}

static void
test_rtt_backoff_karn(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(1, 1);
	struct shr_endpoint *ep;
	enum { N = 300 };
	int32_t in[N], out[N];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = N };
	struct shr_endpoint_stats st;
	uint64_t t, rto, want;
	size_t first;
	int i;

	(void)state;
	p.rto_init_ns = 1 * MS;
	p.rto_min_ns = 50 * US;
	p.rto_max_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, N, 8);
	c.now = 1 * MS;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);

	/* First sample: SRTT = R, RTTVAR = R / 2, RTO = 3 R. */
	assert_int_equal(one_round(ep, &c, 100 * US), 0);
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 100 * US);
	assert_int_equal(st.rto_ns, 300 * US);
	/* Second: SRTT stays, RTTVAR = 3/4 * 50 us. */
	assert_int_equal(one_round(ep, &c, 100 * US), 0);
	assert_int_equal(stats(ep).rto_ns, 100 * US + 4 * 37500);
	/* The next chunk is armed with the adapted RTO. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), c.now + 250 * US);
	c.now += 100 * US;
	assert_int_equal(echo(ep, &c.pkts[c.n - 1]), 0);
	/* Steady 100 us samples: RTTVAR -> 0, but the variation term stays at SRTT / 2. */
	for (i = 0; i < 60; i++)
		assert_int_equal(one_round(ep, &c, 100 * US), 0);
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 100 * US);
	assert_int_equal(st.rto_ns, 150 * US);
	/* One slow sample raises it. */
	assert_int_equal(one_round(ep, &c, 900 * US), 0);
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 200 * US);
	/* SRTT + 4 RTTVAR = 200 us + 4 * (800 us / 4), but at most 8 minimum round trips. */
	assert_int_equal(st.min_rtt_ns, 100 * US);
	assert_int_equal(st.rto_ns, 800 * US);
	/* Faster samples: RTO moves down to the floor, no further. */
	for (i = 0; i < 80; i++)
		assert_int_equal(one_round(ep, &c, 20 * US), 0);
	st = stats(ep);
	assert_true(st.srtt_ns >= 20 * US && st.srtt_ns < 21 * US);
	assert_int_equal(st.rto_ns, 50 * US);

	/* Backoff: a lost chunk is resent after 50, 100, 200, 400, 800, 1000, 1000 us. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	first = c.n - 1;
	t = c.now;
	rto = 50 * US;
	for (i = 0; i < 7; i++) {
		want = t + rto;
		assert_int_equal(shr_endpoint_next_deadline(ep), want);
		c.now = want - 1;
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + 1 + i);
		c.now = want;
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + 2 + i);
		assert_true(c.pkts[c.n - 1].m.flags & SHR_FLAG_RETX);
		assert_int_equal(c.pkts[c.n - 1].m.offset, c.pkts[first].m.offset);
		t = want;
		rto = rto * 2 > 1 * MS ? 1 * MS : rto * 2;
	}
	st = stats(ep);
	assert_int_equal(st.tx_retx, 7);
	assert_int_equal(st.timeouts, 7);
	assert_int_equal(st.backoff, 5);	/* 50 us << 5 > 1 ms: no further */
	/* Karn: its result comes 5 ms after the first send; no sample, base RTO unchanged. */
	c.now += 10 * US;
	assert_int_equal(echo(ep, &c.pkts[c.n - 1]), 0);
	st = stats(ep);
	assert_true(st.srtt_ns < 21 * US);
	assert_int_equal(st.rto_ns, 50 * US);
	assert_int_equal(st.backoff, 0);	/* an answer: the backoff ends */
	/* The next chunk starts from the base RTO again, and its sample counts. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), c.now + 50 * US);
	c.now += 40 * US;
	assert_int_equal(echo(ep, &c.pkts[c.n - 1]), 0);
	assert_true(stats(ep).srtt_ns > 21 * US);

	/* Finish the op. */
	while (!shr_endpoint_idle(ep))
		assert_int_equal(one_round(ep, &c, 20 * US), 0);
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * Early resend: results of later chunks come back while an older one has none (its DATA or
 * its RESULT was lost): it is resent once its age passes SRTT plus the reorder window,
 * without waiting for the timer. A resend answered too soon was spurious: R grows.
 */
static void
test_fast_resend(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(8, 1);
	struct shr_endpoint *ep;
	int32_t in[16], out[16];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	struct shr_endpoint_stats st;
	size_t i, n;

	(void)state;
	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 16, 12);
	c.now = 0;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 8);

	/* Chunks 1 and 2 answered after 100 us, not chunk 0: could be reordering (R = 3). */
	c.now = 100 * US;
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	st = stats(ep);
	assert_int_equal(st.srtt_ns, 100 * US);
	assert_int_equal(st.min_rtt_ns, 100 * US);
	assert_int_equal(st.rto_ns, 250 * US);
	assert_int_equal(st.reorder, 3);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	n = c.n;
	assert_int_equal(n, 8);		/* chunk 8 waits for chunk 0 (slot 0) */
	assert_int_equal(shr_endpoint_next_deadline(ep), 250 * US);	/* the timer */
	/* Chunk 3 too: chunk 0 is passed by 3; it goes at SRTT + min RTT / 4 = 125 us. */
	assert_int_equal(echo(ep, &c.pkts[3]), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), 125 * US);
	c.now = 125 * US - 1;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, n);
	c.now = 125 * US;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, n + 1);
	assert_true(c.pkts[n].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[n].m.slot, 0);
	assert_int_equal(c.pkts[n].m.offset, 0);
	st = stats(ep);
	assert_int_equal(st.tx_retx, 1);
	assert_int_equal(st.tx_fast, 1);
	assert_int_equal(st.timeouts, 0);
	/* Only once: more results of later chunks do not resend it again. */
	c.now = 150 * US;
	assert_int_equal(echo(ep, &c.pkts[4]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(stats(ep).tx_retx, 1);
	assert_int_equal(stats(ep).srtt_ns, 100 * US + 50 * US / 8);	/* chunk 4: 150 us */
	/* The resend is answered 100 us later: needed, not spurious; no RTT sample (Karn). */
	c.now = 225 * US;
	assert_int_equal(echo(ep, &c.pkts[n]), 0);
	st = stats(ep);
	assert_int_equal(st.spurious, 0);
	assert_int_equal(st.reorder, 3);
	assert_int_equal(st.srtt_ns, 100 * US + 50 * US / 8);
	/* The window moves on: chunks 8-12 on slots 0-4. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, n + 6);
	assert_int_equal(c.pkts[n + 1].m.offset, 8);

	/* Chunks 6, 7, 8 answered before chunk 5: chunk 5 is resent ... */
	c.now += 100 * US;
	assert_int_equal(echo(ep, &c.pkts[6]), 0);
	assert_int_equal(echo(ep, &c.pkts[7]), 0);
	assert_int_equal(echo(ep, &c.pkts[n + 1]), 0);
	n = c.n;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	for (i = n; i < c.n && !(c.pkts[i].m.flags & SHR_FLAG_RETX); i++)
		;
	assert_true(i < c.n);
	assert_int_equal(c.pkts[i].m.slot, 5);
	assert_int_equal(stats(ep).tx_fast, 2);
	/* ... and its first result arrives 10 us later: it was only overtaken. */
	c.now += 10 * US;
	assert_int_equal(echo(ep, &c.pkts[5]), 0);
	st = stats(ep);
	assert_int_equal(st.spurious, 1);
	assert_int_equal(st.reorder, 4);
	assert_int_equal(echo(ep, &c.pkts[i]), -EALREADY);

	/* Finish in order. */
	while (!shr_endpoint_idle(ep)) {
		size_t first = c.n, j;

		c.now += 100 * US;
		for (j = 0; j < first; j++)
			(void)echo(ep, &c.pkts[j]);
		assert_int_equal(shr_endpoint_poll(ep), 0);
	}
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * After a timeout, answers to the timed-out chunks let the others sent before it be resent
 * (2 per answer) when they were lost; when one of those is answered without a resend, they
 * were only late (a stalled rank) and nothing more is resent.
 */
static void
run_recovery(bool stalled)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(16, 1);
	struct shr_endpoint *ep;
	int32_t in[16], out[16];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	struct shr_endpoint_stats st;
	size_t i;

	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 16, 13);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 16);
	c.now = 1 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 18);		/* budget: chunks 0 and 1 only */
	check_resends(&c, 16, 2, 0);
	/* 900 us later (before the timer restarted at 1 ms fires) the answers come in. */
	c.now = 1 * MS + 900 * US;
	assert_int_equal(shr_endpoint_next_deadline(ep), 3 * MS);
	assert_int_equal(echo(ep, &c.pkts[16]), 0);
	assert_int_equal(echo(ep, &c.pkts[17]), 0);
	if (stalled) {
		/* A stalled rank woke up: chunk 2's first copy is answered too. */
		assert_int_equal(echo(ep, &c.pkts[2]), 0);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, 18);
		assert_int_equal(stats(ep).tx_retx, 2);
		/* The timer: not due (restarted at the expiry; chunk 2 gave a sample). */
		st = stats(ep);
		assert_int_equal(st.backoff, 0);
		assert_int_equal(shr_endpoint_next_deadline(ep), 1 * MS + st.rto_ns);
		for (i = 3; i < 16; i++)
			assert_int_equal(echo(ep, &c.pkts[i]), 0);
	} else {
		/* Lost: 4 more resent at once, oldest first; then 8 for their 4 answers. */
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, 22);
		check_resends(&c, 18, 4, 2);
		c.now += 20 * US;
		for (i = 18; i < 22; i++)
			assert_int_equal(echo(ep, &c.pkts[i]), 0);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, 30);
		check_resends(&c, 22, 8, 6);
		c.now += 20 * US;
		for (i = 22; i < 30; i++)
			assert_int_equal(echo(ep, &c.pkts[i]), 0);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, 32);		/* the last 2 */
		check_resends(&c, 30, 2, 14);
		c.now += 20 * US;
		for (i = 30; i < 32; i++)
			assert_int_equal(echo(ep, &c.pkts[i]), 0);
	}
	assert_true(shr_endpoint_idle(ep));
	assert_memory_equal(in, out, sizeof(in));
	st = stats(ep);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.tx_fast, 0);
	assert_int_equal(st.tx_retx, stalled ? 2 : 16);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_recovery(void **state)
{
	(void)state;
	run_recovery(false);
	run_recovery(true);
}

/* ---- back-pressure, send errors ---- */

static void
test_eagain(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep;
	int32_t in[16], out[16];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	const int again[] = { -EAGAIN };
	const int ok_again[] = { 0, -EAGAIN };
	const int eio[] = { -EIO };

	(void)state;
	p.rto_init_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 16, 9);
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);

	/* Pushed back on the first chunk: nothing else is tried in this poll. */
	chan_script(&c, 1, again);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.n, 0);
	assert_int_equal(stats(ep).tx_data, 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), 0);
	/* The next poll sends it, then the next. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.pkts[0].m.slot, 0);
	assert_int_equal(c.pkts[0].m.offset, 0);
	assert_int_equal(c.pkts[1].m.slot, 1);
	assert_int_equal(stats(ep).tx_data, 2);

	/* A pushed-back chunk on a reused slot keeps the flipped version once. */
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	chan_script(&c, 2, ok_again);
	c.calls = 0;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.calls, 2);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.pkts[2].m.slot, 0);
	assert_int_equal(c.pkts[2].m.ver, 1);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.pkts[3].m.slot, 1);
	assert_int_equal(c.pkts[3].m.ver, 1);
	assert_int_equal(c.pkts[3].m.offset, 12);

	/* Pushed back on a resend: no retx counted, nothing new sent, retried next poll. */
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	c.now = 1 * MS;
	chan_script(&c, 1, again);
	c.calls = 0;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.n, 4);
	assert_int_equal(stats(ep).tx_retx, 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 5);
	assert_true(c.pkts[4].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[4].m.offset, 12);
	assert_int_equal(stats(ep).tx_retx, 1);
	assert_int_equal(echo(ep, &c.pkts[4]), 0);
	assert_memory_equal(in, out, sizeof(in));
	assert_true(shr_endpoint_idle(ep));

	/* Another send error: counted, the chunk counts as sent and the timer recovers it. */
	memset(out, 0, sizeof(out));
	op.step = 1;
	assert_int_equal(shr_endpoint_submit(ep, &op), 1);
	chan_script(&c, 1, eio);
	c.now = 10 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 5 + 1);		/* chunk 0 failed, chunk 1 went out */
	assert_int_equal(c.pkts[5].m.offset, 16 + 4);	/* after the first op's 16 */
	assert_int_equal(stats(ep).tx_errors, 1);
	assert_int_equal(echo(ep, &c.pkts[5]), 0);
	c.now = 10 * MS + stats(ep).rto_ns;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 7);
	assert_true(c.pkts[6].m.flags & SHR_FLAG_RETX);
	assert_int_equal(c.pkts[6].m.offset, 16);
	assert_int_equal(c.pkts[6].m.step, 1);
	assert_int_equal(echo(ep, &c.pkts[6]), 0);
	while (!shr_endpoint_idle(ep)) {
		size_t first = c.n;

		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_true(c.n > first);
		for (; first < c.n; first++)
			assert_int_equal(echo(ep, &c.pkts[first]), 0);
	}
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/* ---- failures ---- */

static void
test_timeout(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(1, 4);
	struct shr_endpoint *ep;
	int32_t in[4 * 30], out[4 * 30];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4 * 30 };
	struct shr_endpoint_op small = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4 };
	uint32_t reason = 0;
	uint16_t rank = 0;
	const uint64_t t0 = 777;
	int h, i;

	(void)state;
	p.rto_init_ns = 1 * MS;
	p.rto_max_ns = 2 * MS;
	p.fail_ns = 5 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, 4 * 30, 10);

	/* An idle endpoint never times out. */
	c.now = t0;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	c.now += 3600ull * 1000 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);

	/* Results every 4 ms keep a 5 ms fail timer from firing (with resends in between). */
	h = shr_endpoint_submit(ep, &op);
	assert_int_equal(h, 0);
	for (i = 0; i < 30; i++) {
		size_t first = c.n;
		int j;

		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + 1);
		for (j = 0; j < 40; j++) {
			c.now += 100 * US;
			assert_int_equal(shr_endpoint_poll(ep), 0);
		}
		assert_true(c.n > first + 1);	/* resent meanwhile */
		assert_int_equal(echo(ep, &c.pkts[c.n - 1]), 0);
	}
	assert_int_equal(shr_endpoint_test(ep, h), 1);
	assert_int_equal(shr_endpoint_error(ep, NULL, NULL), 0);

	/* No result at all: fails at exactly fail_ns after the send. */
	memset(out, 0, sizeof(out));
	h = shr_endpoint_submit(ep, &small);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	{
		uint64_t ts = c.now;

		while (c.now + 100 * US < ts + 5 * MS) {
			c.now += 100 * US;
			assert_int_equal(shr_endpoint_poll(ep), 0);
		}
		c.now = ts + 5 * MS - 1;
		assert_int_equal(shr_endpoint_poll(ep), 0);
		c.now = ts + 5 * MS;
	}
	assert_int_equal(shr_endpoint_poll(ep), -ETIMEDOUT);
	/* Sticky. */
	assert_int_equal(shr_endpoint_poll(ep), -ETIMEDOUT);
	assert_int_equal(shr_endpoint_test(ep, h), -ETIMEDOUT);
	assert_int_equal(shr_endpoint_test(ep, 0), 1);	/* done before the failure */
	assert_int_equal(shr_endpoint_submit(ep, &small), -EPIPE);
	assert_int_equal(shr_endpoint_error(ep, &reason, &rank), -ETIMEDOUT);
	assert_int_equal(reason, ETIMEDOUT);
	assert_int_equal(rank, SHR_PROTO_RANK_ALL);
	assert_int_equal(shr_endpoint_next_deadline(ep), UINT64_MAX);
	/* A late result is ignored. */
	assert_int_equal(echo(ep, &c.pkts[c.n - 1]), -ETIMEDOUT);
	assert_int_equal(out[0], 0);
	{
		size_t n = c.n;

		c.now += 10 * MS;
		assert_int_equal(shr_endpoint_poll(ep), -ETIMEDOUT);
		assert_int_equal(c.n, n);	/* nothing resent after failing */
	}
	shr_endpoint_free(ep);
	chan_fini(&c);

	/* The fail deadline shows in next_deadline when it comes before the resend. */
	p.fail_ns = 500 * US;
	ep = ep_new(&p, &c);
	c.now = t0;
	assert_int_equal(shr_endpoint_submit(ep, &small), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 500 * US);
	c.now = t0 + 500 * US;
	assert_int_equal(shr_endpoint_poll(ep), -ETIMEDOUT);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static void
test_abort(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep = ep_new(&p, &c);
	int32_t in[8], out[8];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 4 };
	struct shr_proto_msg m = {
		.type = SHR_MSG_ABORT, .dtype = SHR_DTYPE_INT32, .job = 8, .rank = 3,
		.world = 4, .aux = EHOSTDOWN,
	};
	uint32_t reason = 0;
	uint16_t rank = 0;
	int h0, h1;

	(void)state;
	fill_i32(in, 8, 11);
	h0 = shr_endpoint_submit(ep, &op);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	op.in = in + 4;
	op.out = out + 4;
	h1 = shr_endpoint_submit(ep, &op);
	assert_int_equal(shr_endpoint_poll(ep), 0);

	/* Another job's ABORT is not ours. */
	assert_int_equal(feed(ep, &m, NULL, 0), -EINVAL);
	assert_int_equal(shr_endpoint_error(ep, &reason, &rank), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);

	m.job = 7;
	assert_int_equal(feed(ep, &m, NULL, 0), -ECONNABORTED);
	assert_int_equal(shr_endpoint_error(ep, &reason, &rank), -ECONNABORTED);
	assert_int_equal(reason, EHOSTDOWN);
	assert_int_equal(rank, 3);
	assert_int_equal(shr_endpoint_poll(ep), -ECONNABORTED);
	assert_int_equal(shr_endpoint_test(ep, h1), -ECONNABORTED);
	assert_int_equal(shr_endpoint_test(ep, h0), 1);
	assert_int_equal(shr_endpoint_submit(ep, &op), -EPIPE);
	/* The first failure is the one reported. */
	m.rank = 1;
	assert_int_equal(feed(ep, &m, NULL, 0), -ECONNABORTED);
	assert_int_equal(shr_endpoint_error(ep, &reason, &rank), -ECONNABORTED);
	assert_int_equal(rank, 3);
	assert_int_equal(echo(ep, &c.pkts[1]), -ECONNABORTED);
	assert_int_equal(shr_endpoint_error(ep, NULL, NULL), -ECONNABORTED);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * Identity (issue 8 item 3): every DATA carries its operation's tensor id and step, and in
 * offset its place in the whole stream (the operations laid end to end); a step below the
 * previous operation's, or 2^31 above the first's, is refused and changes nothing; a RESULT
 * is taken only with the chunk's exact step, tensor and stream offset.
 */
static void
test_identity(void **state)
{
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(2, 4);
	struct shr_endpoint *ep = ep_new(&p, &c);
	int32_t a[10], b[3], d[1], oa[10], ob[3], od[1];
	struct shr_endpoint_op opa = { .op = SHR_OP_SUM, .in = a, .out = oa, .count = 10,
				       .tensor = 42, .step = 7 };
	struct shr_endpoint_op opb = { .op = SHR_OP_SUM, .in = b, .out = ob, .count = 3,
				       .tensor = 9, .step = 7 };
	struct shr_endpoint_op opc = { .op = SHR_OP_SUM, .in = b, .out = ob, .count = 3,
				       .tensor = 9, .step = 6 };
	struct shr_endpoint_op opd = { .op = SHR_OP_SUM, .in = d, .out = od, .count = 1,
				       .tensor = 0, .step = 7 + (1u << 31) };
	/* per DATA in stream order: tensor, step, offset, count */
	static const struct { uint32_t tensor, step; uint64_t offset; uint32_t count; } want[] = {
		{ 42, 7, 0, 4 }, { 42, 7, 4, 4 }, { 42, 7, 8, 2 }, { 9, 7, 10, 3 },
		{ 0, 7u + INT32_MAX, 13, 1 },
	};
	struct shr_proto_msg m;
	size_t i, seen = 0;

	(void)state;
	fill_i32(a, 10, 1);
	fill_i32(b, 3, 2);
	fill_i32(d, 1, 3);
	assert_int_equal(shr_endpoint_stream_pos(ep), 0);
	assert_int_equal(shr_endpoint_submit(ep, &opa), 0);
	assert_int_equal(shr_endpoint_stream_pos(ep), 10);
	assert_int_equal(shr_endpoint_submit(ep, &opb), 1);	/* the same step */
	assert_int_equal(shr_endpoint_stream_pos(ep), 13);
	assert_int_equal(shr_endpoint_submit(ep, &opc), -EINVAL);	/* a step back */
	assert_int_equal(shr_endpoint_stream_pos(ep), 13);
	/* steps span less than 2^31 (the box compares them modulo 2^32) */
	assert_int_equal(shr_endpoint_submit(ep, &opd), -EINVAL);
	opd.step = 7u + INT32_MAX;
	assert_int_equal(shr_endpoint_submit(ep, &opd), 2);
	assert_int_equal(shr_endpoint_stream_pos(ep), 14);
	opc.step = 7;
	assert_int_equal(shr_endpoint_submit(ep, &opc), -EINVAL);	/* below opd's */

	/* The first window: chunks 0 and 1 of opa. A RESULT that differs in step, tensor or
	 * stream offset from chunk 0's is not chunk 0's. */
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2);
	m = result_of(&c.pkts[0]);
	m.step = 8;
	assert_int_equal(feed(ep, &m, c.pkts[0].buf + SHR_PROTO_HDR_LEN, 16), -EALREADY);
	m = result_of(&c.pkts[0]);
	m.tensor = 43;
	assert_int_equal(feed(ep, &m, c.pkts[0].buf + SHR_PROTO_HDR_LEN, 16), -EALREADY);
	m = result_of(&c.pkts[0]);
	m.offset = 10;	/* opb's first chunk: op-relative 0 again, but not in the stream */
	assert_int_equal(feed(ep, &m, c.pkts[0].buf + SHR_PROTO_HDR_LEN, 16), -EALREADY);
	assert_int_equal(stats(ep).rx_dup, 3);
	assert_int_equal(stats(ep).rx_results, 0);

	/* Each window answered in turn. */
	while (!shr_endpoint_idle(ep)) {
		assert_int_equal(shr_endpoint_poll(ep), 0);
		for (i = seen; i < c.n; i++) {
			assert_true(i < sizeof(want) / sizeof(want[0]));
			assert_int_equal(c.pkts[i].m.tensor, want[i].tensor);
			assert_int_equal(c.pkts[i].m.step, want[i].step);
			assert_int_equal(c.pkts[i].m.offset, want[i].offset);
			assert_int_equal(c.pkts[i].m.count, want[i].count);
			assert_int_equal(echo(ep, &c.pkts[i]), 0);
		}
		seen = c.n;
	}
	assert_int_equal(c.n, sizeof(want) / sizeof(want[0]));
	assert_memory_equal(a, oa, sizeof(a));
	assert_memory_equal(b, ob, sizeof(b));
	assert_memory_equal(d, od, sizeof(d));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_einval),
		cmocka_unit_test(test_submit_einval),
		cmocka_unit_test(test_queue_full_and_handles),
		WINDOW_TEST(win_1),
		WINDOW_TEST(win_2),
		WINDOW_TEST(win_7),
		WINDOW_TEST(win_128),
		WINDOW_TEST(win_4096),
		cmocka_unit_test(test_timers_many),
		cmocka_unit_test(test_offsets_short_last),
		cmocka_unit_test(test_count_zero),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_world2_in_place),
		cmocka_unit_test(test_dup_and_stale),
		cmocka_unit_test(test_wrong_results),
		cmocka_unit_test(test_loss_data),
		cmocka_unit_test(test_loss_result),
		cmocka_unit_test(test_rtt_backoff_karn),
		cmocka_unit_test(test_fast_resend),
		cmocka_unit_test(test_recovery),
		cmocka_unit_test(test_eagain),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_abort),
	};

	return cmocka_run_group_tests_name("endpoint", tests, NULL, NULL);
}
