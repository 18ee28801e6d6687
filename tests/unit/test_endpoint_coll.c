/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
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

static uint64_t
t_rand(struct net *n)
{
	uint64_t x = (n->rng += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void
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
static struct msg *
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

static int
t_send(void *ctx, const void *hdr, const void *payload, size_t len)
{
	struct rank_io *io = ctx;

	q_push(io->net, T_BOX, io->rank, hdr, SHR_PROTO_HDR_LEN, payload, len);
	return 0;
}

static uint64_t
t_now(void *ctx)
{
	return ((struct rank_io *)ctx)->net->now;
}

static int
rank_of(const struct net *n, uint64_t addr)
{
	uint32_t r = SHR_AGG_ADDR_IP(addr) - SHR_AGG_ADDR_IP(ADDR(0));

	if (r >= n->world || n->addrs[r] != addr)
		fail_msg("the box sent to an address of no rank");
	return (int)r;
}

/* What the box said to send: the message and the acknowledgement, each but its skip. */
static void
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

static struct net *
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

static void
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

static void
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
static int
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
static int
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
static uint32_t
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

static void
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
static uint32_t
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
static void
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

static void
coll_check(const struct net *n, const struct coll *cl)
{
	for (int r = 0; r < n->world; r++) {
		for (uint64_t e = 0; e < cl->nout[r]; e++) {
			uint32_t want = expect(cl->kind, n->world, r, cl->root, cl->count, e, cl->k);

			if (cl->out[r][e] != want)
				fail_msg("%s N=%u root %u count %llu: rank %d element %llu is %#x, "
					 "want %#x", shr_proto_kind_str(cl->kind), n->world,
					 cl->root, (unsigned long long)cl->count, r,
					 (unsigned long long)e, cl->out[r][e], want);
		}
	}
}

static void
coll_free(const struct net *n, struct coll *cl)
{
	for (int r = 0; r < n->world; r++) {
		free(cl->in[r]);
		free(cl->out[r]);
	}
}

/* Rounds (of T_CHUNK) one rank takes part in for a collective. */
static uint64_t
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
static void
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

/* ---- tests ---- */

static void
test_kinds_n2(void **state)
{
	(void)state;
	run_kinds(2, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 0, 0, 0, 1);
	run_kinds(2, SHR_DTYPE_INT32, all_kinds, NKINDS, 1, 0, 0, 0, 2);
}

static void
test_kinds_n3(void **state)
{
	(void)state;
	run_kinds(3, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 0, 0, 0, 3);
	run_kinds(3, SHR_DTYPE_INT32, all_kinds, NKINDS, 16, 0, 0, 0, 4);
}

static void
test_kinds_n1(void **state)
{
	(void)state;
	run_kinds(1, SHR_DTYPE_INT32, all_kinds, NKINDS, 20, 0, 0, 0, 5);
}

static void
test_kinds_lossy(void **state)
{
	(void)state;
	/* 1 in 7 messages lost, 1 in 11 duplicated, 1 in 13 reordered */
	run_kinds(2, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 7, 11, 13, 6);
	run_kinds(3, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 7, 11, 13, 7);
	run_kinds(4, SHR_DTYPE_INT32, all_kinds, NKINDS, 50, 7, 11, 13, 8);
}

static void
test_relays_float(void **state)
{
	(void)state;
	run_kinds(2, SHR_DTYPE_FLOAT32, all_kinds, NKINDS, 37, 0, 0, 0, 9);
	run_kinds(3, SHR_DTYPE_FLOAT32, all_kinds, NKINDS, 37, 7, 11, 13, 10);
}

static void
test_large_world(void **state)
{
	static const uint8_t kinds[] = { SHR_KIND_ALLGATHER, SHR_KIND_ALLTOALL };

	(void)state;
	run_kinds(33, SHR_DTYPE_INT32, kinds, 2, 5, 0, 0, 0, 11);
	run_kinds(33, SHR_DTYPE_FLOAT32, kinds, 2, 3, 7, 11, 13, 12);
	run_kinds(33, SHR_DTYPE_INT32, all_kinds, NKINDS, 20, 7, 11, 13, 13);
}

/*
 * A third of the messages lost in each direction (more than the 30% the issue asks for),
 * with duplicates and reordering: every kind at N = 2, 3 and 33 still gives exact outputs.
 */
static void
test_heavy_loss(void **state)
{
	(void)state;
	run_kinds(2, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 3, 11, 13, 31);
	run_kinds(3, SHR_DTYPE_FLOAT32, all_kinds, NKINDS, 37, 3, 11, 13, 32);
	run_kinds(33, SHR_DTYPE_INT32, all_kinds, NKINDS, 5, 3, 11, 13, 33);
}

/*
 * A world of 1024 with a third of the messages lost each way: the kinds whose rounds are
 * one block (allreduce, reduce, broadcast), 3 elements: every rank's output exact.
 */
static void
test_world_1024_heavy_loss(void **state)
{
	static const uint8_t kinds[] = { SHR_KIND_ALLREDUCE, SHR_KIND_REDUCE, SHR_KIND_BROADCAST };

	(void)state;
	run_kinds(1024, SHR_DTYPE_INT32, kinds, 3, 3, 3, 11, 13, 34);
}

/*
 * A world of 1024, 2% lost and duplicated: broadcast and allgather (1024 rounds of 1024
 * members). (Every kind but alltoall, 1 in 7 lost, passes too, but takes minutes: 68 million
 * messages.)
 */
static void
test_world_1024(void **state)
{
	static const uint8_t kinds[] = { SHR_KIND_BROADCAST, SHR_KIND_ALLGATHER };

	(void)state;
	run_kinds(1024, SHR_DTYPE_INT32, kinds, 2, 1, 50, 50, 13, 14);
}

/*
 * A rank that calls another collective, or another root, than the others: never a result.
 * The box refuses its DATA (out_of_step: kind and root are part of a round's identity) and
 * aborts the job at its next tick, well before its job timeout (EPROTO, naming the odd rank);
 * every endpoint fails with -ECONNABORTED, and no output was written.
 */
static void
mismatch(uint8_t kind, uint16_t root, uint8_t odd_kind, uint16_t odd_root)
{
	struct net *n = net_new(3, SHR_DTYPE_INT32, 21);
	struct coll cl = { .kind = kind, .root = root, .count = 40, .k = 1 };
	uint32_t reason;
	uint16_t blamed;
	int r;

	uint64_t t0 = n->now;

	coll_submit(n, &cl, 2, odd_kind, odd_root);
	assert_int_equal(net_run(n, cl.h), -ECONNABORTED);
	assert_true(n->now - t0 < 2000000000ull);	/* the box's job timeout (net_new) */
	assert_true(n->refused[SHR_PROTO_OUT_OF_STEP] > 0);
	assert_true(n->aborts > 0);
	assert_int_equal(n->st.completed, 0);
	/* every rank fails, told by the box */
	for (r = 0; r < 3; r++) {
		int rc = net_run(n, (int[]){ cl.h[r], cl.h[r], cl.h[r] });

		assert_int_equal(rc, -ECONNABORTED);
		assert_int_equal(shr_endpoint_error(n->ep[r], &reason, &blamed), -ECONNABORTED);
		assert_int_equal(reason, EPROTO);
		/* the odd rank's DATA opened no round (rank 0's came first): it disagreed */
		assert_int_equal(blamed, 2);
	}
	/* no result: every output still holds its canary, but the block copied at submit */
	for (r = 0; r < 3; r++) {
		struct shr_endpoint_stats st;
		uint8_t k = r == 2 ? odd_kind : kind;
		uint16_t rt = r == 2 ? odd_root : root;
		uint64_t lo = 0, hi = 0;

		shr_endpoint_stats_get(n->ep[r], &st);
		assert_int_equal(st.rx_results, 0);
		if (k == SHR_KIND_ALLGATHER || k == SHR_KIND_ALLTOALL ||
		    (k == SHR_KIND_GATHER && r == rt)) {
			lo = (uint64_t)r * cl.count;
			hi = lo + cl.count;
		} else if (k == SHR_KIND_SCATTER && r == rt) {
			hi = cl.count;
		}
		for (uint64_t e = 0; e < cl.nout[r]; e++)
			if (e < lo || e >= hi)
				assert_int_equal(cl.out[r][e], 0xa5a5a5a5u);
	}
	coll_free(n, &cl);
	net_free(n);
}

static void
test_mismatch(void **state)
{
	(void)state;
	mismatch(SHR_KIND_BROADCAST, 0, SHR_KIND_BROADCAST, 1);	/* another root */
	mismatch(SHR_KIND_BROADCAST, 0, SHR_KIND_ALLGATHER, 0);	/* another kind */
	mismatch(SHR_KIND_REDUCE, 1, SHR_KIND_ALLREDUCE, 0);
	mismatch(SHR_KIND_ALLTOALL, 0, SHR_KIND_SCATTER, 0);
	mismatch(SHR_KIND_GATHER, 0, SHR_KIND_GATHER, 2);
}

/* What submit refuses, and what it accepts without a round. */
static void
test_submit_args(void **state)
{
	struct net *n = net_new(3, SHR_DTYPE_QINT32, 31);
	struct shr_endpoint *ep = n->ep[1];	/* rank 1 of 3 */
	uint32_t a[64], b[64];
	struct shr_endpoint_op op = { .in = a, .out = b, .count = 8 };

	(void)state;
	op.kind = SHR_KIND_MAX;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_BROADCAST;
	op.root = 3;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	/* op is checked for summed kinds only */
	op.root = 0;
	op.op = SHR_OP_PROD;	/* not for qint32 */
	op.kind = SHR_KIND_REDUCE;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_REDUCE_SCATTER;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.op = SHR_OP_MAX_;
	op.kind = SHR_KIND_ALLTOALL;
	assert_true(shr_endpoint_submit(ep, &op) >= 0);
	op.op = SHR_OP_SUM;
	/* buffers this rank needs */
	op.kind = SHR_KIND_SCATTER;
	op.in = NULL;		/* not the root: in not used */
	assert_true(shr_endpoint_submit(ep, &op) >= 0);
	op.root = 1;		/* the root: in needed */
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_REDUCE;
	op.in = a;
	op.out = NULL;		/* the root of a reduce needs out */
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.root = 0;
	assert_true(shr_endpoint_submit(ep, &op) >= 0);
	/* overlap: allgather's out (3 x 8) over its in */
	op.kind = SHR_KIND_ALLGATHER;
	op.in = a + 4;
	op.out = a;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.in = a;		/* the same buffer is no better */
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_ALLREDUCE;	/* ...but fine in place for allreduce */
	assert_true(shr_endpoint_submit(ep, &op) >= 0);
	/* N x count overflows */
	op.kind = SHR_KIND_ALLGATHER;
	op.out = b;
	op.count = UINT64_MAX / 2;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	op.kind = SHR_KIND_ALLTOALL;
	op.count = UINT64_MAX / 8;
	assert_int_equal(shr_endpoint_submit(ep, &op), -EINVAL);
	net_free(n);
}

/* A world of 1: gather, scatter, alltoall have no round (done at submit, copied locally). */
static void
test_no_round(void **state)
{
	struct net *n = net_new(1, SHR_DTYPE_INT32, 41);
	uint32_t in[5] = { 1, 2, 3, 4, 5 }, out[5] = { 0 };
	struct shr_endpoint_op op = { .in = in, .out = out, .count = 5 };
	static const uint8_t kinds[] = { SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL };

	(void)state;
	for (unsigned int i = 0; i < 3; i++) {
		int h;

		op.kind = kinds[i];
		memset(out, 0, sizeof(out));
		h = shr_endpoint_submit(n->ep[0], &op);
		assert_true(h >= 0);
		assert_int_equal(shr_endpoint_test(n->ep[0], h), 1);
		assert_memory_equal(in, out, sizeof(in));
	}
	assert_int_equal(shr_endpoint_poll(n->ep[0]), 0);
	assert_int_equal(n->sent, 0);
	assert_true(shr_endpoint_idle(n->ep[0]));
	net_free(n);
}

/*
 * The endpoint's view of RESULTs: a header-only RESULT where this rank needs the payload is
 * refused (the round stays open; the box's resend brings it), one with another kind, root
 * or aux is refused, a payload for a rank that is no destination is not written.
 */
static void
test_result_checks(void **state)
{
	struct net *n = net_new(2, SHR_DTYPE_INT32, 51);
	struct shr_endpoint *ep = n->ep[1];
	uint32_t in[4] = { 9, 9, 9, 9 }, out[4];
	struct shr_endpoint_op op = {
		.in = in, .out = out, .count = 4, .kind = SHR_KIND_BROADCAST, .root = 0,
		.tensor = 77,
	};
	struct shr_endpoint_stats st;
	struct shr_proto_msg m;
	uint8_t buf[T_MAXMSG];
	struct msg *d;
	int h;

	(void)state;
	memset(out, CANARY, sizeof(out));
	h = shr_endpoint_submit(ep, &op);
	assert_true(h >= 0);
	assert_int_equal(shr_endpoint_poll(ep), 0);
	d = q_pop(n);	/* rank 1's header-only DATA */
	assert_non_null(d);
	assert_int_equal(shr_proto_validate(d->data, d->len, &m), SHR_PROTO_OK);
	assert_int_equal(d->len, SHR_PROTO_HDR_LEN);
	assert_true(m.flags & SHR_FLAG_NOPAYLOAD);
	assert_int_equal(m.kind, SHR_KIND_BROADCAST);
	assert_int_equal(m.root, 0);
	assert_int_equal(m.aux, SHR_PROTO_RANK_ALL);
	assert_int_equal(m.count, 4);
	free(d);
	/* the RESULT, as the box would make it */
	m.type = SHR_MSG_RESULT;
	m.rank = SHR_PROTO_RANK_ALL;
	m.flags = SHR_FLAG_NOPAYLOAD;
	shr_proto_build(buf, &m, NULL, 0);
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN), -EINVAL);
	memcpy(buf + SHR_PROTO_HDR_LEN, in, sizeof(in));	/* the payload of those below */
	m.flags = 0;
	m.root = 1;
	shr_proto_build(buf, &m, in, sizeof(in));
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + 16), -EINVAL);
	m.root = 0;
	m.aux = 1;
	shr_proto_build(buf, &m, in, sizeof(in));
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + 16), -EINVAL);
	m.aux = SHR_PROTO_RANK_ALL;
	m.kind = SHR_KIND_ALLGATHER;
	shr_proto_build(buf, &m, in, sizeof(in));
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + 16), -EINVAL);
	shr_endpoint_stats_get(ep, &st);
	assert_int_equal(st.rx_bad, 4);
	assert_int_equal(shr_endpoint_test(ep, h), 0);
	for (unsigned int i = 0; i < 4; i++)
		assert_int_equal(out[i], 0xa5a5a5a5u);
	m.kind = SHR_KIND_BROADCAST;
	shr_proto_build(buf, &m, in, sizeof(in));
	assert_int_equal(shr_endpoint_input(ep, buf, SHR_PROTO_HDR_LEN + 16), 0);
	assert_int_equal(shr_endpoint_test(ep, h), 1);
	assert_memory_equal(out, in, sizeof(in));
	net_free(n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_n1),
		cmocka_unit_test(test_kinds_n2),
		cmocka_unit_test(test_kinds_n3),
		cmocka_unit_test(test_kinds_lossy),
		cmocka_unit_test(test_relays_float),
		cmocka_unit_test(test_large_world),
		cmocka_unit_test(test_heavy_loss),
		cmocka_unit_test(test_world_1024_heavy_loss),
		cmocka_unit_test(test_world_1024),
		cmocka_unit_test(test_mismatch),
		cmocka_unit_test(test_submit_args),
		cmocka_unit_test(test_no_round),
		cmocka_unit_test(test_result_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
