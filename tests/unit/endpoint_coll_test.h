/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * What the collective tests of the endpoint (test_endpoint_coll*.c) share:
 *
 * Every collective kind through endpoints of all ranks (lib/endpoint) and the real box
 * (lib/agg, a static job), in one thread with a fake clock: each endpoint's DATA goes to
 * shr_agg_input(), and what the box sends (tx: payload to dst but dst[skip], the header-only
 * RESULT to ack_dst but ack_dst[ack_skip]) to the endpoints. The channel can drop,
 * duplicate and reorder messages (a seeded generator, so every run is the same); loss is
 * recovered by the endpoints' retransmissions. Every rank's output is checked exactly
 * (int32 sums; relays bit for bit, with float32 inputs that are any 32-bit pattern: NaNs
 * with payloads, -0, subnormals), and what a rank must not write (reduce at a rank other
 * than the root, the root of a broadcast) is given as NULL. Ranks that disagree on the
 * collective or its root never get a result: the box refuses the odd rank's DATA
 * (out_of_step), the round stays open, the box aborts the job at its next tick (EPROTO),
 * and every endpoint fails with -ECONNABORTED naming the odd rank (its DATA came after rank
 * 0's opened the round), outputs untouched.
 */

#ifndef SHR_ENDPOINT_COLL_TEST_H
#define SHR_ENDPOINT_COLL_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <shr_agg.h>
#include <shr_endpoint.h>
#include <shr_proto.h>

#define N_MAX 1024
#define T_JOB 33
#define T_TOKEN 0x5eed5eed0badf00dull
#define T_CHUNK 16
#define T_WINDOW 8
#define T_MAXMSG (SHR_PROTO_HDR_LEN + T_CHUNK * 4)
#define T_BOX (-1)		/* message destination: the box */
#define T_STEPS 20000000	/* deliveries + polls before a run is declared stuck */
#define ADDR(r) SHR_AGG_ADDR(0xc6120100u + (r), 41000u)	/* 198.18.1.r */
#define CANARY 0xa5

struct msg {
	int dst;		/* rank, or T_BOX */
	int src;		/* rank (to the box) */
	uint32_t len;
	uint8_t data[T_MAXMSG];
};

struct net;

struct rank_io {
	struct net *net;
	int rank;
};

struct net {
	uint16_t world;
	uint8_t dtype;
	uint64_t now;
	uint64_t rng;
	unsigned int drop;	/* 1 in drop messages is lost (0: none) */
	unsigned int dup;	/* 1 in dup is delivered twice */
	unsigned int reorder;	/* 1 in reorder is delivered after up to 8 later ones */
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	uint8_t txbuf[T_MAXMSG];
	uint64_t addrs[N_MAX];
	struct shr_endpoint *ep[N_MAX];
	struct rank_io io[N_MAX];
	struct msg **q;		/* FIFO */
	size_t qh, qn, qcap;
	uint64_t sent, dropped, dups;
	uint64_t refused[SHR_PROTO_REASON_MAX];
	uint64_t aborts;
};

static inline uint64_t
t_rand(struct net *n)
{
	uint64_t x = (n->rng += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline void
q_push(struct net *n, int dst, int src, const void *a, size_t alen, const void *b, size_t blen)
{
	struct msg *m;

	assert_true(alen + blen <= T_MAXMSG);
	n->sent++;
	if (n->drop != 0 && t_rand(n) % n->drop == 0) {
		n->dropped++;
		return;
	}
	if (n->qh + n->qn == n->qcap) {
		if (n->qh > 0) {
			memmove(n->q, n->q + n->qh, n->qn * sizeof(*n->q));
			n->qh = 0;
		} else {
			n->qcap = n->qcap ? 2 * n->qcap : 1024;
			n->q = realloc(n->q, n->qcap * sizeof(*n->q));
			assert_non_null(n->q);
		}
	}
	m = malloc(sizeof(*m));
	assert_non_null(m);
	m->dst = dst;
	m->src = src;
	m->len = (uint32_t)(alen + blen);
	memcpy(m->data, a, alen);
	if (blen > 0)
		memcpy(m->data + alen, b, blen);
	n->q[n->qh + n->qn++] = m;
	if (n->dup != 0 && t_rand(n) % n->dup == 0) {
		n->dups++;
		q_push(n, dst, src, m->data, m->len, NULL, 0);
	}
}

/* Next message to deliver (the oldest, or now and then one a little behind it). */
static inline struct msg *
q_pop(struct net *n)
{
	struct msg *m;

	if (n->qn == 0)
		return NULL;
	if (n->reorder != 0 && n->qn > 1 && t_rand(n) % n->reorder == 0) {
		size_t k = 1 + t_rand(n) % (n->qn - 1 < 8 ? n->qn - 1 : 8);

		m = n->q[n->qh + k];
		n->q[n->qh + k] = n->q[n->qh];
	} else {
		m = n->q[n->qh];
	}
	n->qh++;
	n->qn--;
	return m;
}

static inline int
t_send(void *ctx, const void *hdr, const void *payload, size_t len)
{
	struct rank_io *io = ctx;

	q_push(io->net, T_BOX, io->rank, hdr, SHR_PROTO_HDR_LEN, payload, len);
	return 0;
}

static inline uint64_t
t_now(void *ctx)
{
	return ((struct rank_io *)ctx)->net->now;
}

static inline int
rank_of(const struct net *n, uint64_t addr)
{
	uint32_t r = SHR_AGG_ADDR_IP(addr) - SHR_AGG_ADDR_IP(ADDR(0));

	if (r >= n->world || n->addrs[r] != addr)
		fail_msg("the box sent to an address of no rank");
	return (int)r;
}

/* What the box said to send: the message and the acknowledgement, each but its skip. */
static inline void
box_out(struct net *n)
{
	const struct shr_proto_hdr *h = n->tx.buf;
	uint32_t d;

	if (n->tx.len > 0 && h->type == SHR_MSG_ABORT)
		n->aborts++;
	for (d = 0; n->tx.len > 0 && d < n->tx.ndst; d++)
		if (d != n->tx.skip)
			q_push(n, rank_of(n, n->tx.dst[d]), T_BOX, n->tx.buf, n->tx.len, NULL, 0);
	for (d = 0; n->tx.ack_len > 0 && d < n->tx.ack_ndst; d++)
		if (d != n->tx.ack_skip)
			q_push(n, rank_of(n, n->tx.ack_dst[d]), T_BOX, n->tx.ack, n->tx.ack_len,
			       NULL, 0);
}

static inline struct net *
net_new(uint16_t world, uint8_t dtype, uint64_t seed)
{
	struct shr_agg_params ap = {
		.nslots = 64, .max_elems = T_CHUNK, .max_world = N_MAX, .max_jobs = 2,
		.max_window = T_WINDOW, .lanes = 1, .job_timeout_ns = 2000000000ull,
	};
	struct shr_agg_job_conf jc = {
		.job = T_JOB, .world = world, .dtype = dtype, .window = T_WINDOW,
		.chunk_elems = T_CHUNK, .ordered = 1, .token = T_TOKEN,
	};
	struct net *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	assert_true(world <= N_MAX);
	n->world = world;
	n->dtype = dtype;
	n->rng = seed;
	n->now = 1000000000ull;
	for (int r = 0; r < world; r++)
		n->addrs[r] = ADDR(r);
	jc.addrs = n->addrs;
	n->agg = shr_agg_create(&ap);
	assert_non_null(n->agg);
	assert_int_equal(shr_agg_job_add(n->agg, &jc), 0);
	n->tx.buf = n->txbuf;
	n->tx.cap = sizeof(n->txbuf);
	for (int r = 0; r < world; r++) {
		struct shr_endpoint_params p = {
			.job = T_JOB, .rank = (uint16_t)r, .world = world, .dtype = dtype,
			.token = T_TOKEN, .window = T_WINDOW, .chunk_elems = T_CHUNK,
		};
		struct shr_endpoint_io io = { .send = t_send, .now_ns = t_now };

		n->io[r].net = n;
		n->io[r].rank = r;
		io.ctx = &n->io[r];
		n->ep[r] = shr_endpoint_create(&p, &io);
		assert_non_null(n->ep[r]);
	}
	return n;
}

static inline void
net_free(struct net *n)
{
	while (n->qn > 0)
		free(q_pop(n));
	free(n->q);
	for (int r = 0; r < n->world; r++)
		shr_endpoint_free(n->ep[r]);
	shr_agg_free(n->agg);
	free(n);
}

static inline void
deliver(struct net *n, struct msg *m)
{
	if (m->dst == T_BOX) {
		enum shr_proto_reason r = shr_agg_input(n->agg, n->addrs[m->src], m->data, m->len,
							n->now, &n->tx, &n->st);

		n->refused[r]++;
		box_out(n);
	} else {
		(void)shr_endpoint_input(n->ep[m->dst], m->data, m->len);
	}
	free(m);
}

/* Whether every rank's handle is done (1) or has failed (its error); 0: some pending. */
static inline int
all_done(struct net *n, const int *h)
{
	int r, rc, done = 1;

	for (r = 0; r < n->world; r++) {
		rc = shr_endpoint_test(n->ep[r], h[r]);
		if (rc < 0)
			return rc;
		done &= rc == 1;
	}
	return done;
}

/*
 * Run until every rank's handle h[r] is done or some rank has failed; returns 1 or the first
 * failure. Messages are delivered as they come; when none is left, every endpoint polls, and
 * when that sends nothing, the clock jumps to the earliest deadline (the box ticks).
 */
static inline int
net_run(struct net *n, const int *h)
{
	uint64_t steps;
	int rc;

	for (steps = 0; steps < T_STEPS; steps++) {
		struct msg *m = q_pop(n);
		uint64_t dl = UINT64_MAX, sent = n->sent;

		if (m != NULL) {
			deliver(n, m);
			continue;
		}
		rc = all_done(n, h);
		if (rc != 0)
			return rc;
		for (int r = 0; r < n->world; r++)
			(void)shr_endpoint_poll(n->ep[r]);
		if (n->sent != sent)
			continue;
		for (int r = 0; r < n->world; r++) {
			uint64_t d = shr_endpoint_next_deadline(n->ep[r]);

			if (d < dl)
				dl = d;
		}
		if (dl == UINT64_MAX || dl <= n->now)
			dl = n->now + 1000000ull;	/* nothing timed: let the box's time pass */
		n->now = dl;
		while (shr_agg_tick(n->agg, n->now, &n->tx, &n->st) > 0 || n->tx.len > 0) {
			box_out(n);
			if (n->tx.len == 0)
				break;
		}
	}
	fail_msg("the run is stuck");
	return -1;
}

/* ---- inputs and the expected outputs ---- */

/* Element idx of rank r's input of op number k: any 32 bits (floats: every pattern). */
static inline uint32_t
in_val(int r, uint64_t idx, unsigned int k)
{
	uint64_t x = ((uint64_t)r << 40) ^ (idx * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)k << 20);

	x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	switch (idx % 11) {
	case 3:
		return 0x80000000u;		/* -0 */
	case 5:
		return 0x7fc00000u | (uint32_t)(x & 0x3fffff);	/* NaN with a payload */
	case 7:
		return (uint32_t)(x & 0x7fffff);	/* subnormal */
	default:
		return (uint32_t)x;
	}
}

static inline void
in_sizes(uint8_t kind, uint16_t n, int r, uint16_t root, uint64_t c, uint64_t *in,
	 uint64_t *out)
{
	bool isroot = r == root;

	switch (kind) {
	case SHR_KIND_REDUCE:
		*in = c;
		*out = isroot ? c : 0;
		break;
	case SHR_KIND_REDUCE_SCATTER:
		*in = n * c;
		*out = c;
		break;
	case SHR_KIND_BROADCAST:
		*in = isroot ? c : 0;
		*out = isroot ? 0 : c;
		break;
	case SHR_KIND_ALLGATHER:
		*in = c;
		*out = n * c;
		break;
	case SHR_KIND_GATHER:
		*in = c;
		*out = isroot ? n * c : 0;
		break;
	case SHR_KIND_SCATTER:
		*in = isroot ? n * c : 0;
		*out = c;
		break;
	case SHR_KIND_ALLTOALL:
		*in = n * c;
		*out = n * c;
		break;
	default:
		*in = c;
		*out = c;
	}
}

/* The expected element e of rank r's output. */
static inline uint32_t
expect(uint8_t kind, uint16_t n, int r, uint16_t root, uint64_t c, uint64_t e, unsigned int k)
{
	uint32_t sum = 0;
	uint64_t b = e / c, w = e % c;
	int s;

	switch (kind) {
	case SHR_KIND_ALLREDUCE:
	case SHR_KIND_REDUCE:
		for (s = 0; s < n; s++)
			sum += in_val(s, e, k);
		return sum;
	case SHR_KIND_REDUCE_SCATTER:
		for (s = 0; s < n; s++)
			sum += in_val(s, (uint64_t)r * c + e, k);
		return sum;
	case SHR_KIND_BROADCAST:
		return in_val(root, e, k);
	case SHR_KIND_ALLGATHER:
	case SHR_KIND_GATHER:
		return in_val((int)b, w, k);
	case SHR_KIND_SCATTER:
		return in_val(root, (uint64_t)r * c + e, k);
	default:	/* alltoall: block b of rank r's out is block r of rank b's in */
		return in_val((int)b, (uint64_t)r * c + w, k);
	}
}

/* One collective at every rank: buffers, handles. */
struct coll {
	uint8_t kind;
	uint16_t root;
	uint64_t count;
	unsigned int k;		/* input seed */
	uint32_t *in[N_MAX];
	uint32_t *out[N_MAX];
	uint64_t nout[N_MAX];
	int h[N_MAX];
};

/* Submit a collective at every rank (rank odd gets odd_kind/odd_root if odd >= 0). */
static inline void
coll_submit(struct net *n, struct coll *cl, int odd, uint8_t odd_kind, uint16_t odd_root)
{
	for (int r = 0; r < n->world; r++) {
		uint8_t kind = r == odd ? odd_kind : cl->kind;
		uint16_t root = r == odd ? odd_root : cl->root;
		struct shr_endpoint_op op = {
			.op = SHR_OP_SUM, .count = cl->count, .tensor = 1000 + cl->k,
			.kind = kind, .root = root,
		};
		uint64_t nin, nout;

		in_sizes(kind, n->world, r, root, cl->count, &nin, &nout);
		cl->in[r] = nin ? malloc(nin * 4) : NULL;
		cl->out[r] = nout ? malloc(nout * 4) : NULL;
		cl->nout[r] = nout;
		for (uint64_t i = 0; i < nin; i++)
			cl->in[r][i] = in_val(r, i, cl->k);
		if (nout)
			memset(cl->out[r], CANARY, nout * 4);
		op.in = cl->in[r];
		op.out = cl->out[r];
		cl->h[r] = shr_endpoint_submit(n->ep[r], &op);
		assert_true(cl->h[r] >= 0);
	}
}

static inline void
coll_check(const struct net *n, const struct coll *cl)
{
	for (int r = 0; r < n->world; r++) {
		for (uint64_t e = 0; e < cl->nout[r]; e++) {
			uint32_t want = expect(cl->kind, n->world, r, cl->root, cl->count, e,
					       cl->k);

			if (cl->out[r][e] != want)
				fail_msg("%s N=%u root %u count %llu: rank %d element %llu is %#x, "
					 "want %#x", shr_proto_kind_str(cl->kind), n->world,
					 cl->root, (unsigned long long)cl->count, r,
					 (unsigned long long)e, cl->out[r][e], want);
		}
	}
}

static inline void
coll_free(const struct net *n, struct coll *cl)
{
	for (int r = 0; r < n->world; r++) {
		free(cl->in[r]);
		free(cl->out[r]);
	}
}

/* Rounds (of T_CHUNK) one rank takes part in for a collective. */
static inline uint64_t
rounds_of(uint8_t kind, uint16_t n, uint64_t count)
{
	uint64_t per = (count + T_CHUNK - 1) / T_CHUNK;

	switch (kind) {
	case SHR_KIND_REDUCE_SCATTER:
	case SHR_KIND_ALLGATHER:
		return n * per;
	case SHR_KIND_GATHER:
	case SHR_KIND_SCATTER:
		return (n - 1u) * per;
	case SHR_KIND_ALLTOALL:
		return (uint64_t)n * (n - 1u) * per;
	default:
		return per;
	}
}

/*
 * Every kind (and roots 0 and world - 1) at world n, queued all at once (the ops follow each
 * other in one stream), through a channel with the given loss; every output exact.
 */
static inline void
run_kinds(uint16_t world, uint8_t dtype, const uint8_t *kinds, unsigned int nk,
	  uint64_t count, unsigned int drop, unsigned int dup, unsigned int reorder,
	  uint64_t seed)
{
	struct net *n = net_new(world, dtype, seed);
	struct coll *cl = calloc(2 * nk, sizeof(*cl));
	uint64_t want_rounds[SHR_KIND_MAX] = { 0 };
	unsigned int i, nc = 0;

	assert_non_null(cl);
	n->drop = drop;
	n->dup = dup;
	n->reorder = reorder;
	for (i = 0; i < nk; i++) {
		for (unsigned int rt = 0; rt < 2; rt++) {
			struct coll *c = &cl[nc];

			if (rt == 1 && world == 1)
				continue;
			c->kind = kinds[i];
			c->root = rt == 0 ? 0 : (uint16_t)(world - 1);
			/* summed kinds are int32 only here: float sums are not bit-exact */
			if (dtype != SHR_DTYPE_INT32 && !shr_proto_kind_relay(c->kind))
				continue;
			c->count = count + nc % 3;
			c->k = nc;
			coll_submit(n, c, -1, 0, 0);
			want_rounds[c->kind] += rounds_of(c->kind, world, c->count);
			nc++;
		}
	}
	for (i = 0; i < nc; i++)
		assert_int_equal(net_run(n, cl[i].h), 1);
	for (i = 0; i < nc; i++) {
		coll_check(n, &cl[i]);
		coll_free(n, &cl[i]);
	}
	print_message("N=%u %s: %u collectives, %llu messages, %llu lost, %llu duplicated\n",
		      world, shr_proto_dtype_str(dtype), nc, (unsigned long long)n->sent,
		      (unsigned long long)n->dropped, (unsigned long long)n->dups);
	for (i = 0; i < SHR_KIND_MAX; i++)
		if (n->st.kind_rounds[i] != want_rounds[i])
			fail_msg("N=%u: the box completed %llu %s rounds, want %llu", world,
				 (unsigned long long)n->st.kind_rounds[i], shr_proto_kind_str(i),
				 (unsigned long long)want_rounds[i]);
	assert_int_equal(n->refused[SHR_PROTO_OUT_OF_STEP], 0);
	assert_int_equal(n->refused[SHR_PROTO_BAD_KIND], 0);
	assert_int_equal(n->aborts, 0);
	if (drop != 0)
		assert_true(n->dropped > 0);
	free(cl);
	net_free(n);
}

static const uint8_t all_kinds[] = {
	SHR_KIND_ALLREDUCE, SHR_KIND_REDUCE, SHR_KIND_REDUCE_SCATTER, SHR_KIND_BROADCAST,
	SHR_KIND_ALLGATHER, SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL,
};
#define NKINDS (sizeof(all_kinds) / sizeof(all_kinds[0]))

#endif /* SHR_ENDPOINT_COLL_TEST_H */
