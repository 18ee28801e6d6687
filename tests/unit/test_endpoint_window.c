/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The endpoint's window and version bookkeeping (windows 1 to 4096), and its timers with
 * thousands of chunks outstanding. */

#include "endpoint_test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* ---- window / version bookkeeping ---- */

struct xchunk {
	uint32_t op;		/* index into the test's ops (its step: op / 2 * 3) */
	uint64_t offset;	/* in the op */
	uint64_t stream;	/* in the stream: the header's offset */
	uint32_t count;
	bool last;
};

/* The chunk whose stream offset is stream (x is in stream order). */
static uint64_t
chunk_of(const struct xchunk *x, uint64_t nx, uint64_t stream)
{
	uint64_t lo = 0, hi = nx;

	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (x[mid].stream <= stream)
			lo = mid;
		else
			hi = mid;
	}
	assert_true(lo < nx);
	assert_int_equal(x[lo].stream, stream);
	return lo;
}

/*
 * Chunks go out as their slots free: chunk k on slot k mod W once chunk k - W is answered,
 * whatever the stream order of the answers (a late slot holds up only itself).
 */
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
	uint8_t *delivered, *is_sent;
	uint64_t *outstanding, nout = 0, low = 0;
	uint64_t nx = 0, sent = 0, ndel = 0, per_op, k, stream = 0;
	unsigned int i, rounds = 0;

	assert_non_null(counts);
	/* Results come back in random order, none lost: no reordering may count as a loss. */
	p.reorder = UINT32_MAX;
	p.cc_target_ns = SHR_ENDPOINT_CC_OFF; /* the whole window at once (see test_endpoint_cc) */
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
	is_sent = calloc(nx, 1);
	outstanding = calloc(nx, sizeof(*outstanding));
	assert_true(pkt_of && delivered && is_sent && outstanding);

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
			k = chunk_of(x, nx, d->m.offset);
			assert_false(is_sent[k]);	/* once */
			is_sent[k] = 1;
			sent++;
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
		/*
		 * The window is used in full: each of the W chunks from the oldest one not sent
		 * (each the next of its slot) is blocked by its slot's last one, not answered.
		 */
		while (low < nx && is_sent[low])
			low++;
		for (k = low; k < nx && k < low + w; k++) {
			if (is_sent[k])
				continue;
			assert_true(k >= w);
			assert_false(delivered[k - w]);
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
	free(is_sent);
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

/*
 * One slot held up (its chunk 0 not answered: a loss, here or at a peer): the other slots go
 * on, lap after lap, while the chunks of the held slot are deferred, up to W of them; then
 * the stream waits. Once chunk 0 is answered, the held slot's deferred chunks go one per
 * answer, in order, each with the slot's next version.
 */
static void
test_slot_held(void **state)
{
	const uint32_t w = 4;
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(w, 1);
	struct shr_endpoint *ep;
	int32_t in[64], out[64];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 64 };
	size_t lap, j, held = 0, first;

	(void)state;
	p.cc_target_ns = SHR_ENDPOINT_CC_OFF;
	p.reorder = UINT32_MAX;	/* time stands still: no fast resend either */
	ep = ep_new(&p, &c);
	fill_i32(in, 64, 3);
	c.now = 1000;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w);
	/* Laps 1-4: slots 1-3 answered and reused; each lap's chunk of slot 0 (4, 8, 12, 16)
	 * deferred. */
	for (lap = 1; lap <= w; lap++) {
		first = c.n;
		for (j = first - (w - 1); j < first; j++)
			assert_int_equal(echo(ep, &c.pkts[j]), 0);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, first + w - 1);
		for (j = 0; j < w - 1; j++) {
			assert_int_equal(c.pkts[first + j].m.offset, lap * w + 1 + j);
			assert_int_equal(c.pkts[first + j].m.slot, 1 + j);
			assert_int_equal(c.pkts[first + j].m.ver, lap % 2);
		}
	}
	/* Lap 5: W chunks of slot 0 deferred already: chunk 20 is not, the stream waits. */
	first = c.n;
	for (j = first - (w - 1); j < first; j++)
		assert_int_equal(echo(ep, &c.pkts[j]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, first);
	assert_int_equal(shr_endpoint_next_deadline(ep), c.now + stats(ep).rto_ns);
	/* Chunk 0 answered: chunks 4, 8, 12, 16 go on slot 0, one per answer. */
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	for (held = 1; held <= w; held++) {
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_true(c.n > first);
		assert_int_equal(c.pkts[first].m.offset, held * w);
		assert_int_equal(c.pkts[first].m.slot, 0);
		assert_int_equal(c.pkts[first].m.ver, held % 2);
		assert_false(c.pkts[first].m.flags & SHR_FLAG_RETX);
		j = first;
		first = c.n;
		assert_int_equal(echo(ep, &c.pkts[j]), 0);
	}
	/* The rest in order. */
	for (lap = 0; !shr_endpoint_idle(ep); lap++) {
		assert_true(lap < 64);
		first = c.n;
		for (j = 0; j < first; j++)
			(void)echo(ep, &c.pkts[j]);
		assert_int_equal(shr_endpoint_poll(ep), 0);
	}
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(stats(ep).tx_retx, 0);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * Spare slots (shr_endpoint_params::inflight below the window): never more than inflight
 * chunks outstanding, chunk k still on slot k mod W with version (k / W) mod 2, and a slot
 * held up (chunk 0 unanswered for 5 laps) does not stop the stream: the other chunks keep
 * going out, inflight - 1 at a time, on the other slots.
 */
static void
test_spare_slots(void **state)
{
	const uint32_t w = 6, inflight = 4;
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(w, 1);
	struct shr_endpoint *ep;
	int32_t in[64], out[64];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 64 };
	uint8_t answered[64] = { 0 };
	size_t lap, j, first, sent;

	(void)state;
	p.inflight = inflight;
	p.cc_target_ns = SHR_ENDPOINT_CC_OFF;
	p.reorder = UINT32_MAX;	/* time stands still: no resend */
	ep = ep_new(&p, &c);
	assert_int_equal(stats(ep).cwnd, inflight);
	fill_i32(in, 64, 5);
	c.now = 1000;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, inflight);
	for (lap = 0, first = 0; !shr_endpoint_idle(ep); lap++) {
		size_t out_n = 0;

		assert_true(lap < 64);
		for (j = first; j < c.n; j++) {
			uint64_t k = c.pkts[j].m.offset;

			assert_false(c.pkts[j].m.flags & SHR_FLAG_RETX);
			assert_int_equal(c.pkts[j].m.slot, k % w);
			assert_int_equal(c.pkts[j].m.ver, (k / w) % 2);
		}
		for (j = 0; j < c.n; j++)
			out_n += !answered[c.pkts[j].m.offset];
		assert_true(out_n <= inflight);
		if (lap >= 1 && lap <= 5) {
			/* chunk 0 held: the other three go on, on the other slots */
			assert_int_equal(out_n, inflight);
			assert_int_equal(c.n - first, inflight - 1);
		}
		first = c.n;
		for (j = 0; j < first; j++) {
			uint64_t k = c.pkts[j].m.offset;

			if (answered[k] || (k == 0 && lap < 5))
				continue;
			assert_int_equal(echo(ep, &c.pkts[j]), 0);
			answered[k] = 1;
		}
		assert_int_equal(shr_endpoint_poll(ep), 0);
	}
	for (sent = 0, j = 0; j < 64; j++)
		sent += answered[j];
	assert_int_equal(sent, 64);
	assert_int_equal(c.n, 64);	/* each chunk once */
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(stats(ep).tx_retx, 0);
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * Two slots held up, freed out of stream order (chunk 1's result before chunk 0's): their
 * deferred chunks go in stream order, chunk 4 before chunk 5, so that no chunk goes before
 * an older one whose slot is free.
 */
static void
test_ready_order(void **state)
{
	const uint32_t w = 4;
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(w, 1);
	struct shr_endpoint *ep;
	int32_t in[16], out[16];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = 16 };
	size_t first, j;

	(void)state;
	p.cc_target_ns = SHR_ENDPOINT_CC_OFF;
	p.reorder = UINT32_MAX;	/* time stands still: no fast resend either */
	ep = ep_new(&p, &c);
	fill_i32(in, 16, 5);
	c.now = 1000;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w);
	/* Slots 2 and 3 answered: chunks 6, 7 go; chunks 4, 5 deferred on slots 0, 1. */
	assert_int_equal(echo(ep, &c.pkts[2]), 0);
	assert_int_equal(echo(ep, &c.pkts[3]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w + 2);
	assert_int_equal(c.pkts[w].m.offset, 6);
	assert_int_equal(c.pkts[w + 1].m.offset, 7);
	/* Slot 1 frees first, then slot 0: one poll sends chunk 4, then chunk 5. */
	first = c.n;
	assert_int_equal(echo(ep, &c.pkts[1]), 0);
	assert_int_equal(echo(ep, &c.pkts[0]), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_true(c.n >= first + 2);
	assert_int_equal(c.pkts[first].m.offset, 4);
	assert_int_equal(c.pkts[first].m.slot, 0);
	assert_int_equal(c.pkts[first + 1].m.offset, 5);
	assert_int_equal(c.pkts[first + 1].m.slot, 1);
	for (j = 0; !shr_endpoint_idle(ep); j++) {
		size_t k, n = c.n;

		assert_true(j < 64);
		for (k = 0; k < n; k++)
			(void)echo(ep, &c.pkts[k]);
		assert_int_equal(shr_endpoint_poll(ep), 0);
	}
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

/*
 * At rto_max (the RTO can back off no more), a window whose chunks all expire: each timeout
 * still resends only rto_burst of them, oldest first, but the timer comes back after
 * RTO * rto_burst / in_flight rather than a full RTO, so every chunk goes again within one
 * RTO of its expiry (a full RTO between timeouts took W / 2 RTOs to come to the last one: at
 * a third lost, too few tries for the box's job timeout, test_endpoint_coll_scale).
 */
static void
test_timers_paced_at_max(void **state)
{
	const uint32_t w = 8;
	struct chan c = { 0 };
	struct shr_endpoint_params p = params_default(w, 2);
	struct shr_endpoint *ep;
	uint64_t t0 = 1000, n = 2 * w;
	int32_t in[16], out[16];
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = in, .out = out, .count = n };
	struct shr_endpoint_stats st;
	uint32_t k;

	(void)state;
	p.cc_target_ns = SHR_ENDPOINT_CC_OFF;	/* the whole window at once */
	p.rto_min_ns = 50 * US;
	p.rto_init_ns = 1 * MS;
	p.rto_max_ns = 1 * MS;
	ep = ep_new(&p, &c);
	fill_i32(in, n, 5);
	c.now = t0;
	assert_int_equal(shr_endpoint_submit(ep, &op), 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, w);
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 1 * MS);
	/* Four timeouts a quarter RTO apart (2 of 8 each): every chunk resent once. */
	for (k = 0; k < w / 2; k++) {
		c.now = t0 + 1 * MS + k * (250 * US);
		assert_int_equal(shr_endpoint_next_deadline(ep), c.now);
		assert_int_equal(shr_endpoint_poll(ep), 0);
		assert_int_equal(c.n, w + 2 * (k + 1));
		check_resends(&c, w + 2 * k, 2, 2 * k);
	}
	st = stats(ep);
	assert_int_equal(st.timeouts, w / 2);
	assert_int_equal(st.tx_rto, w);
	assert_int_equal(st.backoff, 0);	/* at rto_max: no backoff */
	/* Then each again one RTO after its resend: chunks 0 and 1 at t0 + 2 ms. */
	assert_int_equal(shr_endpoint_next_deadline(ep), t0 + 2 * MS);
	c.now = t0 + 2 * MS;
	assert_int_equal(shr_endpoint_poll(ep), 0);
	assert_int_equal(c.n, 2 * w + 2);
	check_resends(&c, 2 * w, 2, 0);
	/* The answers: done. */
	for (k = 0; k < w; k++)
		assert_int_equal(echo(ep, &c.pkts[k]), 0);
	assert_true(shr_endpoint_idle(ep));
	assert_memory_equal(in, out, sizeof(in));
	shr_endpoint_free(ep);
	chan_fini(&c);
}

static const uint32_t win_1 = 1, win_2 = 2, win_7 = 7, win_128 = 128, win_4096 = 4096;
#define WINDOW_TEST(v) { "test_window_" #v, test_window, NULL, NULL, (void *)&(v) }

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
	p.cc_target_ns = SHR_ENDPOINT_CC_OFF;	/* the whole window at once */
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		WINDOW_TEST(win_1),
		WINDOW_TEST(win_2),
		WINDOW_TEST(win_7),
		WINDOW_TEST(win_128),
		WINDOW_TEST(win_4096),
		cmocka_unit_test(test_slot_held),
		cmocka_unit_test(test_spare_slots),
		cmocka_unit_test(test_ready_order),
		cmocka_unit_test(test_timers_many),
		cmocka_unit_test(test_timers_paced_at_max),
	};

	return cmocka_run_group_tests_name("endpoint_window", tests, NULL, NULL);
}
