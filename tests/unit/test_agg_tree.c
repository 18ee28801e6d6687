/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Trees of boxes (lib/agg, shr_agg_params::upstream), simulated: real aggregators (a root, and
 * mid-level and leaf boxes with an upstream) and real endpoints (lib/endpoint) as members,
 * wired by an in-memory network that drops, duplicates and reorders every message on every
 * link (members' and boxes') with a seeded PRNG, on a fake clock. Members JOIN their leaf in
 * band, run allreduces of several lengths (int32, then float32), then LEAVE. Checked: int32
 * exact at every rank, float32 bit-identical at every rank and exact for integer inputs,
 * every box's rounds, nothing refused but stale copies, every box's slots free at the end.
 * Failures: a leaf box that dies, a member that dies: every live member fails with the
 * error a user sees (the upstream's ABORT, or its own box silent) within a bound.
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
#include <shr_endpoint.h>
#include <shr_proto.h>

#define T_BOXES_MAX 8
#define T_MEMS_MAX 16
#define T_NET_MAX 65536
#define T_MSG_MAX (SHR_PROTO_HDR_LEN + 4 * 256)
#define T_JOB 77
#define T_CHUNK 64
#define T_WINDOW 16
#define T_PORT 47000
#define T_TMO_NS 2000000000ull	/* the boxes' job timeout (as test_sim) */

struct t_pkt {
	uint64_t at;
	uint64_t src, dst;
	uint16_t len;
	uint8_t b[T_MSG_MAX];
};

struct t_box {
	struct shr_agg *agg;
	uint64_t addr;
	int parent;		/* box index, -1: root */
	int dead;
	struct shr_agg_stats st;
};

struct t_net;

struct t_mem {
	struct t_net *net;
	uint64_t addr;
	int box;
	uint16_t rank;
	uint64_t nonce, token;
	uint32_t window, chunk;
	int joined, left, dead, failed;
	uint64_t fail_at;
	int err;
	struct shr_endpoint *ep;
	uint64_t next_ctl;
	struct shr_proto_msg abort;	/* the ABORT it took (type 0: none) */
};

struct t_net {
	uint64_t now;
	uint64_t rng;
	unsigned int loss, dup, jitter_us;
	struct t_pkt *q;	/* unordered pool of packets in flight */
	uint32_t nq;
	struct t_box box[T_BOXES_MAX];
	unsigned int nbox;
	struct t_mem mem[T_MEMS_MAX];
	unsigned int nmem;
	uint16_t world;
	uint64_t rejects;	/* refusals other than stale ones */
};

static uint32_t
t_rand(struct t_net *n)
{
	n->rng ^= n->rng << 13;
	n->rng ^= n->rng >> 7;
	n->rng ^= n->rng << 17;
	return (uint32_t)(n->rng >> 11);
}

static void
t_put(struct t_net *n, uint64_t src, uint64_t dst, const void *hdr, const void *pl, size_t plen)
{
	unsigned int copies = 1, i;

	if (t_rand(n) % 100 < n->loss)
		return;
	if (t_rand(n) % 100 < n->dup)
		copies = 2;
	for (i = 0; i < copies && n->nq < T_NET_MAX; i++) {
		struct t_pkt *p = &n->q[n->nq++];

		p->at = n->now + 5000 + (n->jitter_us ? t_rand(n) % (n->jitter_us * 1000) : 0);
		p->src = src;
		p->dst = dst;
		p->len = (uint16_t)(SHR_PROTO_HDR_LEN + plen);
		memcpy(p->b, hdr, SHR_PROTO_HDR_LEN);
		if (plen != 0)
			memcpy(p->b + SHR_PROTO_HDR_LEN, pl, plen);
	}
}

/* What a box asks to send. */
static void
t_box_tx(struct t_net *n, const struct t_box *bx, const struct shr_agg_tx *tx)
{
	uint32_t i;

	if (tx->len != 0)
		for (i = 0; i < tx->ndst; i++)
			if (i != tx->skip)
				t_put(n, bx->addr, tx->dst[i], tx->buf,
				      (const uint8_t *)tx->buf + SHR_PROTO_HDR_LEN,
				      tx->len - SHR_PROTO_HDR_LEN);
	if (tx->ack_len != 0)
		for (i = 0; i < tx->ack_ndst; i++)
			if (i != tx->ack_skip)
				t_put(n, bx->addr, tx->ack_dst[i], tx->ack, NULL, 0);
}

static int
t_ep_send(void *ctx, const void *hdr, const void *payload, size_t plen)
{
	struct t_mem *m = ctx;
	struct t_net *n = m->net;

	if (!m->dead)
		t_put(n, m->addr, n->box[m->box].addr, hdr, payload, plen);
	return 0;
}

static uint64_t
t_ep_now(void *ctx)
{
	const struct t_mem *m = ctx;

	return m->net->now;
}

/* A JOIN or LEAVE of member m to its box. */
static void
t_mem_ctl(struct t_net *n, struct t_mem *m, uint8_t type)
{
	struct shr_proto_msg h;
	uint8_t b[SHR_PROTO_HDR_LEN];

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.dtype = SHR_DTYPE_INT32;
	h.job = T_JOB;
	h.rank = m->rank;
	h.world = n->world;
	h.slot = T_WINDOW;
	h.count = T_CHUNK;
	h.token = type == SHR_MSG_JOIN ? m->nonce : m->token;
	shr_proto_build(b, &h, NULL, 0);
	t_put(n, m->addr, n->box[m->box].addr, b, NULL, 0);
}

static void
t_mem_rx(struct t_net *n, struct t_mem *m, const struct t_pkt *p)
{
	struct shr_endpoint_params ep;
	struct shr_endpoint_io io;
	struct shr_proto_msg h;
	int rc;

	if (shr_proto_validate(p->b, p->len, &h) != SHR_PROTO_OK)
		return;
	if (!m->joined) {
		if (h.type != SHR_MSG_JOIN_ACK || h.aux != 0 ||
		    (h.rank != SHR_PROTO_RANK_ALL && h.offset != m->nonce))
			return;
		m->token = h.token;
		m->window = h.slot;
		m->chunk = h.count;
		memset(&ep, 0, sizeof(ep));
		ep.job = T_JOB;
		ep.rank = m->rank;
		ep.world = n->world;
		ep.dtype = SHR_DTYPE_INT32;
		ep.token = m->token;
		ep.window = m->window;
		ep.chunk_elems = m->chunk;
		ep.fail_ns = 3 * T_TMO_NS;
		memset(&io, 0, sizeof(io));
		io.send = t_ep_send;
		io.now_ns = t_ep_now;
		io.ctx = m;
		m->ep = shr_endpoint_create(&ep, &io);
		assert_non_null(m->ep);
		m->joined = 1;
		return;
	}
	if (h.type == SHR_MSG_LEAVE_ACK) {
		m->left = 1;
		return;
	}
	if (m->ep == NULL || m->failed)
		return;
	rc = shr_endpoint_input(m->ep, p->b, p->len);
	if (rc == -ECONNABORTED) {
		m->abort = h;
		m->failed = 1;
		m->err = rc;
		m->fail_at = n->now;
	}
}

/* Deliver what is due; run every box's tick and every member's timers. */
static void
t_step(struct t_net *n)
{
	uint32_t i = 0;
	unsigned int k;

	n->now += 10000;
	while (i < n->nq) {
		struct t_pkt p;

		if (n->q[i].at > n->now) {
			i++;
			continue;
		}
		p = n->q[i];
		n->q[i] = n->q[--n->nq];
		for (k = 0; k < n->nbox; k++) {
			struct t_box *bx = &n->box[k];
			uint8_t buf[T_MSG_MAX];
			struct shr_agg_tx tx = { .buf = buf, .cap = sizeof(buf) };
			enum shr_proto_reason r;

			if (SHR_AGG_ADDR_IP(bx->addr) != SHR_AGG_ADDR_IP(p.dst) || bx->dead)
				continue;
			r = shr_agg_input(bx->agg, p.src, p.b, p.len, n->now, &tx, &bx->st);
			/* late copies after a job was freed are the only refusals */
			if (r != SHR_PROTO_OK && r != SHR_PROTO_UNKNOWN_JOB)
				n->rejects++;
			t_box_tx(n, bx, &tx);
		}
		for (k = 0; k < n->nmem; k++)
			if (n->mem[k].addr == p.dst && !n->mem[k].dead)
				t_mem_rx(n, &n->mem[k], &p);
	}
	for (k = 0; k < n->nbox; k++) {
		struct t_box *bx = &n->box[k];
		uint8_t buf[T_MSG_MAX];
		struct shr_agg_tx tx = { .buf = buf, .cap = sizeof(buf) };
		int guard;

		if (bx->dead)
			continue;
		for (guard = 0; guard < 64; guard++) {
			if (shr_agg_tick(bx->agg, n->now, &tx, &bx->st) == 0)
				break;
			t_box_tx(n, bx, &tx);
		}
	}
	for (k = 0; k < n->nmem; k++) {
		struct t_mem *m = &n->mem[k];
		int rc;

		if (m->dead || m->failed)
			continue;
		if (!m->joined || (m->ep == NULL && !m->left)) {
			if (n->now >= m->next_ctl) {
				t_mem_ctl(n, m, m->joined ? SHR_MSG_LEAVE : SHR_MSG_JOIN);
				m->next_ctl = n->now + 1000000;
			}
			continue;
		}
		if (m->ep == NULL)
			continue;
		rc = shr_endpoint_poll(m->ep);
		if (rc < 0) {
			m->failed = 1;
			m->err = rc;
			m->fail_at = n->now;
		}
	}
}

/*
 * A tree: parent[b] of box b (-1: the root), members per leaf; boxes 0.. in the order given,
 * leaves are the boxes nobody names as parent.
 */
static void
t_build(struct t_net *n, const int *parent, unsigned int nbox, unsigned int per_leaf,
	uint64_t seed, unsigned int loss, unsigned int dup)
{
	unsigned int b, c, k, children[T_BOXES_MAX] = { 0 }, idx[T_BOXES_MAX] = { 0 };

	memset(n, 0, sizeof(*n));
	n->q = calloc(T_NET_MAX, sizeof(*n->q));
	assert_non_null(n->q);
	n->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	n->loss = loss;
	n->dup = dup;
	n->jitter_us = 40;
	n->nbox = nbox;
	for (b = 0; b < nbox; b++)
		if (parent[b] >= 0)
			idx[b] = children[parent[b]]++;
	for (b = 0; b < nbox; b++) {
		n->box[b].addr = SHR_AGG_ADDR(0xc6120000u + 1 + b, T_PORT);
		n->box[b].parent = parent[b];
	}
	for (b = 0; b < nbox; b++) {
		struct shr_agg_params p;

		memset(&p, 0, sizeof(p));
		p.nslots = 256;
		p.max_elems = 256;
		p.max_world = 16;
		p.job_timeout_ns = T_TMO_NS;
		p.idle_ns = 2 * T_TMO_NS;
		if (parent[b] >= 0) {
			p.upstream = n->box[parent[b]].addr;
			p.up_rank = (uint16_t)idx[b];
		}
		for (c = 0; c < nbox; c++)
			if (parent[b] >= 0 && parent[c] == parent[b])
				p.up_world++;
		n->box[b].agg = shr_agg_create(&p);
		assert_non_null(n->box[b].agg);
		if (children[b] != 0)
			continue;
		for (k = 0; k < per_leaf; k++) {
			struct t_mem *m = &n->mem[n->nmem];

			m->net = n;
			m->rank = (uint16_t)k;
			m->box = (int)b;
			m->addr = SHR_AGG_ADDR(0xc6130000u + 16 * b + k, 40000 + k);
			m->nonce = 0x1000 + 16 * b + k;
			n->nmem++;
		}
	}
	n->world = (uint16_t)per_leaf;
}

static void
t_free(struct t_net *n)
{
	unsigned int k;

	for (k = 0; k < n->nmem; k++)
		shr_endpoint_free(n->mem[k].ep);
	for (k = 0; k < n->nbox; k++)
		shr_agg_free(n->box[k].agg);
	free(n->q);
}

/* Run until cond holds for every live member or the fake time limit passes; 0: it held. */
static int
t_run_until(struct t_net *n, int (*cond)(const struct t_mem *), uint64_t limit_ns)
{
	uint64_t end = n->now + limit_ns;
	unsigned int k;

	while (n->now < end) {
		for (k = 0; k < n->nmem; k++)
			if (!n->mem[k].dead && !cond(&n->mem[k]))
				break;
		if (k == n->nmem)
			return 0;
		t_step(n);
	}
	return -1;
}

static int
t_is_joined(const struct t_mem *m)
{
	return m->ep != NULL;
}

static int
t_is_idle(const struct t_mem *m)
{
	return m->failed || shr_endpoint_idle(m->ep);
}

static int
t_is_failed(const struct t_mem *m)
{
	return m->failed;
}

static int
t_is_left(const struct t_mem *m)
{
	return m->left;
}

/* Every member's rank inside the whole tree (its leaf's order, then its rank). */
static int32_t
t_input(unsigned int member, uint64_t i, unsigned int round)
{
	return (int32_t)(member * 1000003u + (uint32_t)i * 7u + round * 13u) - 50000;
}

/* int32 allreduces of several lengths at every member; exact. */
static void
t_allreduce_i32(struct t_net *n, unsigned int round, uint64_t count)
{
	int32_t *in[T_MEMS_MAX], *out[T_MEMS_MAX];
	unsigned int k, j;
	uint64_t i;

	for (k = 0; k < n->nmem; k++) {
		struct shr_endpoint_op op = { .op = SHR_OP_SUM, .count = count, .step = round };

		in[k] = malloc(count * 4 + 4);
		out[k] = calloc(count + 1, 4);
		for (i = 0; i < count; i++)
			in[k][i] = t_input(k, i, round);
		op.in = in[k];
		op.out = out[k];
		assert_true(shr_endpoint_submit(n->mem[k].ep, &op) >= 0);
	}
	assert_int_equal(t_run_until(n, t_is_idle, 20ull * T_TMO_NS), 0);
	for (k = 0; k < n->nmem; k++) {
		if (n->mem[k].failed) {
			uint32_t why = 0;
			uint16_t who = 0;

			shr_endpoint_error(n->mem[k].ep, &why, &who);
			print_message("member %u (box %d rank %u) failed %d at %llu ns: aux %u "
				      "rank %u; round %u\n", k, n->mem[k].box, n->mem[k].rank,
				      n->mem[k].err, (unsigned long long)n->mem[k].fail_at, why,
				      who, round);
			for (j = 0; j < n->nbox; j++)
				print_message("box %u: completed %llu up_data %llu up_resent %llu "
					      "up_results %llu up_stale %llu up_aborts %llu "
					      "aborts %llu\n", j,
					      (unsigned long long)n->box[j].st.completed,
					      (unsigned long long)n->box[j].st.up_data,
					      (unsigned long long)n->box[j].st.up_resent,
					      (unsigned long long)n->box[j].st.up_results,
					      (unsigned long long)n->box[j].st.up_stale,
					      (unsigned long long)n->box[j].st.up_aborts,
					      (unsigned long long)n->box[j].st.aborts);
			for (j = 0; j < n->nbox; j++)
				for (why = 1; why < SHR_PROTO_REASON_MAX; why++)
					if (n->box[j].st.rejects[why] != 0)
						print_message("box %u: %s %llu\n", j,
							      shr_proto_reason_str(why),
							      (unsigned long long)
							      n->box[j].st.rejects[why]);
			print_message("stale: %llu %llu %llu dup %llu %llu %llu resent %llu\n",
				      (unsigned long long)n->box[0].st.stale,
				      (unsigned long long)n->box[1].st.stale,
				      (unsigned long long)n->box[2].st.stale,
				      (unsigned long long)n->box[0].st.duplicates,
				      (unsigned long long)n->box[1].st.duplicates,
				      (unsigned long long)n->box[2].st.duplicates,
				      (unsigned long long)n->box[0].st.resent);
		}
		assert_false(n->mem[k].failed);
		for (i = 0; i < count; i++) {
			uint32_t want = 0;

			for (j = 0; j < n->nmem; j++)
				want += (uint32_t)t_input(j, i, round);
			assert_int_equal((uint32_t)out[k][i], want);
		}
		free(in[k]);
		free(out[k]);
	}
}

static void
t_join(struct t_net *n)
{
	unsigned int b;

	assert_int_equal(t_run_until(n, t_is_joined, 40ull * T_TMO_NS), 0);
	for (b = 0; b < n->nbox; b++) {
		struct shr_agg_job_info info;

		assert_int_equal(shr_agg_job_info(n->box[b].agg, 0, &info), 1);
		assert_int_equal(info.job, T_JOB);
		assert_int_equal(info.active, 1);
		assert_int_equal(info.up_state, n->box[b].parent >= 0 ? 2 : 0);
	}
}

/* The whole tree's members (world members at each leaf, same world: one job per leaf). */
static void
t_tree_case(const int *parent, unsigned int nbox, unsigned int per_leaf, unsigned int loss,
	    unsigned int dup, uint64_t seed)
{
	static const uint64_t lens[] = { 1, 63, 64, 65, 1000, 3000 };
	struct t_net *n = calloc(1, sizeof(*n));
	unsigned int r, b;

	assert_non_null(n);
	t_build(n, parent, nbox, per_leaf, seed, loss, dup);
	t_join(n);
	for (r = 0; r < sizeof(lens) / sizeof(lens[0]); r++)
		t_allreduce_i32(n, r, lens[r]);
	assert_int_equal(n->rejects, 0);
	for (b = 0; b < nbox; b++) {
		/* every box completed each round once: 1 + 1 + 1 + 2 + 16 + 47 chunks */
		assert_int_equal(n->box[b].st.completed, 68);
		if (parent[b] >= 0) {
			assert_int_equal(n->box[b].st.up_data, n->box[b].st.completed);
			assert_int_equal(n->box[b].st.up_results, n->box[b].st.completed);
		}
	}
	/* everyone leaves; every box ends up with no slot held (LEAVEs lost: idle reclaim) */
	for (r = 0; r < n->nmem; r++) {
		shr_endpoint_free(n->mem[r].ep);
		n->mem[r].ep = NULL;
	}
	assert_int_equal(t_run_until(n, t_is_left, 40ull * T_TMO_NS), 0);
	for (r = 0; r < 10 * (T_TMO_NS / 10000); r++) {
		for (b = 0; b < nbox; b++)
			if (shr_agg_slots_used(n->box[b].agg) != 0)
				break;
		if (b == nbox)
			break;
		t_step(n);
	}
	for (b = 0; b < nbox; b++)
		assert_int_equal(shr_agg_slots_used(n->box[b].agg), 0);
	t_free(n);
	free(n);
}

/* Two leaves of 2 members under one root. */
static const int two_level[] = { -1, 0, 0 };
/* A root, two mid boxes, two leaves under each: 4 leaves of 2 members. */
static const int three_level[] = { -1, 0, 0, 1, 1, 2, 2 };

/*
 * Out of step across levels: the members of leaf 1 call an allreduce of another size than
 * those of leaf 2. Each leaf completes its own rounds; the root sees the two disagree and
 * aborts (EPROTO), and every member hears it through its leaf (flag SHR_FLAG_UPSTREAM).
 */
static void
test_tree_out_of_step(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	static int32_t buf[T_MEMS_MAX][300];
	unsigned int k;

	(void)state;
	assert_non_null(n);
	t_build(n, two_level, 3, 2, 41, 0, 0);
	t_join(n);
	for (k = 0; k < n->nmem; k++) {
		struct shr_endpoint_op op = { .op = SHR_OP_SUM, .in = buf[k], .out = buf[k],
					      .count = n->mem[k].box == 1 ? 100 : 300 };

		assert_true(shr_endpoint_submit(n->mem[k].ep, &op) >= 0);
	}
	assert_int_equal(t_run_until(n, t_is_failed, 2 * T_TMO_NS), 0);
	assert_int_equal(n->box[0].st.mismatches, 1);
	for (k = 0; k < n->nmem; k++) {
		assert_int_equal(n->mem[k].err, -ECONNABORTED);
		assert_int_equal(n->mem[k].abort.aux, EPROTO);
		assert_true(n->mem[k].abort.flags & SHR_FLAG_UPSTREAM);
		assert_int_equal(n->mem[k].abort.offset, n->box[0].addr);
	}
	t_free(n);
	free(n);
}


/*
 * A failure during an allreduce (the box or member dies once the op is under way): every
 * live member fails; returns the fake time it took the last one.
 */
static uint64_t
t_fail_case(struct t_net *n, int dead_box, int dead_mem)
{
	struct shr_endpoint_op op = { .op = SHR_OP_SUM, .count = 20000, .step = 9 };
	static int32_t in[T_MEMS_MAX][20000], out[T_MEMS_MAX][20000];
	uint64_t start;
	unsigned int k;

	t_join(n);
	t_allreduce_i32(n, 0, 100);
	for (k = 0; k < n->nmem; k++) {
		op.in = in[k];
		op.out = out[k];
		assert_true(shr_endpoint_submit(n->mem[k].ep, &op) >= 0);
	}
	for (k = 0; k < 50; k++)
		t_step(n);	/* under way (0.5 ms; it takes tens of ms) */
	for (k = 0; k < n->nmem; k++)
		assert_false(shr_endpoint_idle(n->mem[k].ep));
	start = n->now;
	if (dead_box >= 0) {
		n->box[dead_box].dead = 1;
		for (k = 0; k < n->nmem; k++)
			if (n->mem[k].box == dead_box)
				n->mem[k].dead = 0;	/* its members live on, unanswered */
	}
	if (dead_mem >= 0)
		n->mem[dead_mem].dead = 1;
	assert_int_equal(t_run_until(n, t_is_failed, 10ull * T_TMO_NS), 0);
	return n->now - start;
}

/* A leaf box dies: the other leaf's members get the root's ABORT naming that leaf. */
static void
test_leaf_dies(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	uint64_t took;
	unsigned int k;

	(void)state;
	assert_non_null(n);
	t_build(n, (const int[]){ -1, 0, 0 }, 3, 2, 21, 5, 5);
	took = t_fail_case(n, 1, -1);
	for (k = 0; k < n->nmem; k++) {
		const struct t_mem *m = &n->mem[k];

		if (m->box == 1) {
			/* its own box is silent: the endpoint's own timeout */
			assert_int_equal(m->err, -ETIMEDOUT);
			continue;
		}
		assert_int_equal(m->err, -ECONNABORTED);
		assert_int_equal(m->abort.aux, ETIMEDOUT);
		assert_true(m->abort.flags & SHR_FLAG_UPSTREAM);
		assert_int_equal(m->abort.offset, n->box[0].addr);
		assert_int_equal(m->abort.slot, 0);	/* leaf 1 is rank 0 upstream */
		assert_int_equal(m->abort.feedback, SHR_AGG_ADDR_IP(n->box[1].addr));
		/* within the root's job timeout and a few round trips */
		assert_true(m->fail_at - (n->now - took) < T_TMO_NS + T_TMO_NS / 4);
	}
	/* the bound of the members of the dead box: their own fail_ns */
	assert_true(took <= 3 * T_TMO_NS + T_TMO_NS / 4);
	t_free(n);
	free(n);
}

/*
 * A member dies: its leaf aborts (naming it) and leaves upstream with ECONNABORTED, so the
 * root aborts at once and the other leaf's members are told, naming the leaf.
 */
static void
test_member_dies(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	uint64_t took;
	unsigned int k;

	(void)state;
	assert_non_null(n);
	t_build(n, (const int[]){ -1, 0, 0 }, 3, 2, 22, 5, 5);
	took = t_fail_case(n, -1, 0);	/* member 0: rank 0 of leaf 1 */
	for (k = 1; k < n->nmem; k++) {
		const struct t_mem *m = &n->mem[k];

		/*
		 * Leaf 1 times out its round (missing rank 0) and the root its own (missing
		 * leaf 1), each after a job timeout: either may come first, and both name the
		 * same culprit: rank 0 at leaf 1, or leaf 1 (rank 0 upstream) at the root.
		 */
		if (m->abort.flags & SHR_FLAG_UPSTREAM) {
			assert_int_equal(m->abort.offset, n->box[0].addr);
			assert_int_equal(m->abort.slot, 0);
			assert_int_equal(m->abort.feedback, SHR_AGG_ADDR_IP(n->box[1].addr));
			assert_true(m->abort.aux == ECONNABORTED || m->abort.aux == ETIMEDOUT);
		} else {
			assert_int_equal(m->box, 1);
			assert_int_equal(m->abort.aux, ETIMEDOUT);
			assert_int_equal(m->abort.rank, 0);
			assert_int_equal(m->abort.feedback, SHR_AGG_ADDR_IP(n->mem[0].addr));
		}
	}
	/* a job timeout, then a few round trips */
	assert_true(took < T_TMO_NS + T_TMO_NS / 8);
	t_free(n);
	free(n);
}

/* What a box with an upstream refuses, and the other kinds of collective. */
static void
test_tree_params(void **state)
{
	struct shr_agg_params p = { .upstream = SHR_AGG_ADDR(0xc6120003u, T_PORT), .up_rank = 0,
				    .up_world = 2, .lanes = 2 };
	struct shr_agg_job_conf jc = { .job = 5, .world = 2, .dtype = SHR_DTYPE_INT32,
				       .window = 4, .chunk_elems = 64 };
	uint64_t addrs[2] = { 1, 2 };
	struct shr_agg *agg;

	(void)state;
	assert_null(shr_agg_create(&p));	/* a tree box runs one lane */
	assert_int_equal(errno, EINVAL);
	p.lanes = 1;
	p.up_rank = 2;
	assert_null(shr_agg_create(&p));	/* rank outside the upstream world */
	assert_int_equal(errno, EINVAL);
	p.up_rank = 1;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	jc.addrs = addrs;
	assert_int_equal(shr_agg_job_add(agg, &jc), -EINVAL);	/* fixed members */
	jc.addrs = NULL;
	jc.repro = 1;
	assert_int_equal(shr_agg_job_add(agg, &jc), -EINVAL);	/* reproducible */
	jc.repro = 0;
	assert_int_equal(shr_agg_job_add(agg, &jc), 0);
	shr_agg_free(agg);
}

/* A broadcast in a tree: the job is aborted (EOPNOTSUPP naming the rank), not hung. */
static void
test_tree_other_kind(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	struct shr_endpoint_op op = { .count = 100, .kind = SHR_KIND_BROADCAST, .root = 0 };
	static int32_t buf[T_MEMS_MAX][100];
	unsigned int k;

	(void)state;
	assert_non_null(n);
	t_build(n, two_level, 3, 2, 31, 0, 0);
	t_join(n);
	for (k = 0; k < n->nmem; k++) {
		op.in = buf[k];
		op.out = buf[k];
		assert_true(shr_endpoint_submit(n->mem[k].ep, &op) >= 0);
	}
	assert_int_equal(t_run_until(n, t_is_failed, 2 * T_TMO_NS), 0);
	for (k = 0; k < n->nmem; k++) {
		assert_int_equal(n->mem[k].err, -ECONNABORTED);
		/* its own leaf names a rank; the other leaf hears it from the root */
		assert_true(n->mem[k].abort.aux == EOPNOTSUPP ||
			    (n->mem[k].abort.aux == ECONNABORTED &&
			     (n->mem[k].abort.flags & SHR_FLAG_UPSTREAM)));
	}
	t_free(n);
	free(n);
}


static void
test_two_level_clean(void **state)
{
	(void)state;
	t_tree_case(two_level, 3, 2, 0, 0, 1);
}

static void
test_two_level_loss(void **state)
{
	uint64_t seed;

	(void)state;
	for (seed = 1; seed <= 4; seed++) {
		t_tree_case(two_level, 3, 2, 10, 10, seed);
		t_tree_case(two_level, 3, 2, 30, 30, seed + 100);
	}
}

static void
test_three_level_loss(void **state)
{
	(void)state;
	t_tree_case(three_level, 7, 2, 0, 0, 7);
	t_tree_case(three_level, 7, 2, 20, 20, 8);
	t_tree_case(three_level, 7, 2, 30, 30, 9);
}

/*
 * A member's LEAVE with aux ECONNABORTED (a tree box whose own job was aborted) aborts the job
 * at once, naming it, at every member; a plain LEAVE does not.
 */
static void
test_leave_aborts(void **state)
{
	uint8_t b[SHR_PROTO_HDR_LEN], buf[T_MSG_MAX];
	struct shr_agg_tx tx = { .buf = buf, .cap = sizeof(buf) };
	struct shr_agg_stats st;
	struct shr_proto_msg m, r;
	struct shr_agg *agg;
	uint64_t token = 0, a[3];
	uint16_t k;

	(void)state;
	for (k = 0; k < 3; k++)
		a[k] = SHR_AGG_ADDR(0xc6130001u + k, 40000);
	memset(&st, 0, sizeof(st));
	agg = shr_agg_create(NULL);
	assert_non_null(agg);
	for (k = 0; k < 3; k++) {
		memset(&m, 0, sizeof(m));
		m.type = SHR_MSG_JOIN;
		m.dtype = SHR_DTYPE_INT32;
		m.job = 9;
		m.rank = k;
		m.world = 3;
		m.count = 64;
		m.token = 100 + k;
		shr_proto_build(b, &m, NULL, 0);
		assert_int_equal(shr_agg_input(agg, a[k], b, sizeof(b), 1, &tx, &st), 0);
	}
	assert_int_equal(shr_proto_validate(buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_JOIN_ACK);
	token = r.token;
	/* rank 2 leaves plainly: the job goes on */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 9;
	m.rank = 2;
	m.world = 3;
	m.token = token;
	shr_proto_build(b, &m, NULL, 0);
	assert_int_equal(shr_agg_input(agg, a[2], b, sizeof(b), 2, &tx, &st), 0);
	assert_int_equal(shr_proto_validate(buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_LEAVE_ACK);
	assert_int_equal(st.aborts, 0);
	/* rank 1 leaves with ECONNABORTED: ABORT naming it to the members still bound */
	m.rank = 1;
	m.aux = ECONNABORTED;
	shr_proto_build(b, &m, NULL, 0);
	assert_int_equal(shr_agg_input(agg, a[1], b, sizeof(b), 3, &tx, &st), 0);
	assert_int_equal(shr_proto_validate(buf, tx.len, &r), SHR_PROTO_OK);
	assert_int_equal(r.type, SHR_MSG_ABORT);
	assert_int_equal(r.aux, ECONNABORTED);
	assert_int_equal(r.rank, 1);
	assert_int_equal(r.feedback, 0xc6130002u);	/* its address */
	assert_int_equal(tx.ndst, 2);
	assert_int_equal(st.aborts, 1);
	assert_int_equal(shr_agg_slots_used(agg), 0);
	shr_agg_free(agg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_level_clean),
		cmocka_unit_test(test_two_level_loss),
		cmocka_unit_test(test_three_level_loss),
		cmocka_unit_test(test_leaf_dies),
		cmocka_unit_test(test_member_dies),
		cmocka_unit_test(test_tree_params),
		cmocka_unit_test(test_tree_other_kind),
		cmocka_unit_test(test_tree_out_of_step),
		cmocka_unit_test(test_leave_aborts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
