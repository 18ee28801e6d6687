/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The endpoint state machine, driven by hand: argument checks, the queue and its handles,
 * offsets and the short last chunk, count 0, the identity, in place. */

#include "endpoint_test.h"

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
	q = p; q.inflight = p.window + 1;
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
	/* A tree rank outside the tree's world (its collectives' rank: a root no call could
	 * name, blocks nobody sends) is refused; so is a tree world above the limit. */
	q = p; q.tree_world = 8; q.tree_rank = 8;
	EXPECT_EINVAL(&q, &io);
	q = p; q.tree_world = 8; q.tree_rank = 9;
	EXPECT_EINVAL(&q, &io);
	q = p; q.tree_world = SHR_PROTO_MAX_WORLD + 1; q.tree_rank = 0;
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
	q = p; q.tree_world = 8; q.tree_rank = 7;	/* the tree's last rank */
	ep = shr_endpoint_create(&q, &io);
	assert_non_null(ep);
	shr_endpoint_free(ep);
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

	/* Times that would wrap a deadline: rto_max over a minute is refused; fail_ns =
	 * UINT64_MAX (never) is taken as 2^62 ns, so a pending op's deadline is not in the past
	 * (a caller sleeping until it would spin). */
	q = p; q.rto_max_ns = SHR_ENDPOINT_MAX_RTO_NS + 1;
	errno = 0;
	assert_null(shr_endpoint_create(&q, &io));
	assert_int_equal(errno, EINVAL);
	q.rto_max_ns = SHR_ENDPOINT_MAX_RTO_NS;
	ep = shr_endpoint_create(&q, &io);
	assert_non_null(ep);
	shr_endpoint_free(ep);
	q = p; q.fail_ns = UINT64_MAX; q.rto_init_ns = 20 * MS;
	c.now = 5 * S;
	ep = shr_endpoint_create(&q, &io);
	assert_non_null(ep);
	{
		int32_t buf[4] = { 1, 2, 3, 4 };
		struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = buf, .out = buf, .count = 4 };

		assert_true(shr_endpoint_submit(ep, &op) >= 0);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_true(c.n > 0);
		assert_int_equal(shr_endpoint_next_deadline(ep), 5 * S + 20 * MS);
	}
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * The slots to ask for: twice the chunks in flight, the spare half rounded up to 8, so a
 * multiple of 8 when the window is, within SHR_ENDPOINT_MAX_WINDOW.
 */
static void
test_slots(void **state)
{
	static const uint32_t want[][2] = {
		{ 0, 0 }, { 1, 9 }, { 7, 15 }, { 8, 16 }, { 16, 32 }, { 61, 125 }, { 64, 128 },
		{ 65, 137 }, { 128, 256 }, { 512, 1024 }, { 30000, 60000 }, { 40000, 65536 },
		{ SHR_ENDPOINT_MAX_WINDOW, SHR_ENDPOINT_MAX_WINDOW }, { 70000, 70000 },
	};
	uint32_t w;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(shr_endpoint_slots(want[i][0]), want[i][1]);
	for (w = 1; w <= 4096; w++) {
		uint32_t s = shr_endpoint_slots(w);

		assert_true(s >= 2 * w);
		assert_true(s - w < w + SHR_ENDPOINT_SPARE_ALIGN);
		assert_int_equal((s - w) % SHR_ENDPOINT_SPARE_ALIGN, 0);
	}
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
	/* A buffer whose end wraps the address space (a count that passes the size checks,
	 * a pointer near the top) is refused: its rounds would read past the top of memory. */
	o = op; o.in = (int32_t *)(UINTPTR_MAX - 63);
	assert_int_equal(shr_endpoint_submit(ep, &o), -EINVAL);
	o = op; o.out = (int32_t *)(UINTPTR_MAX - 63);
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
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_submit_einval),
		cmocka_unit_test(test_queue_full_and_handles),
		cmocka_unit_test(test_offsets_short_last),
		cmocka_unit_test(test_count_zero),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_world2_in_place),
	};

	return cmocka_run_group_tests_name("endpoint", tests, NULL, NULL);
}
