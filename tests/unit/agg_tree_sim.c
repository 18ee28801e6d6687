/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The simulated tree of boxes of test_agg_tree*.c: see agg_tree_sim.h. */

#include "agg_tree_sim.h"

uint32_t
t_rand(struct t_net *n)
{
	n->rng ^= n->rng << 13;
	n->rng ^= n->rng >> 7;
	n->rng ^= n->rng << 17;
	return (uint32_t)(n->rng >> 11);
}

void
t_put(struct t_net *n, uint64_t src, uint64_t dst, const void *hdr, const void *pl, size_t plen)
{
	unsigned int copies = 1, i;

	if (t_rand(n) % 100 < n->loss)
		return;
	if (n->drop_type != 0 && dst == n->drop_to && ((const uint8_t *)hdr)[3] == n->drop_type) {
		n->drop_type = 0;
		return;
	}
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
void
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

int
t_ep_send(void *ctx, const void *hdr, const void *payload, size_t plen)
{
	struct t_mem *m = ctx;
	struct t_net *n = m->net;

	if (!m->dead)
		t_put(n, m->addr, n->box[m->box].addr, hdr, payload, plen);
	return 0;
}

uint64_t
t_ep_now(void *ctx)
{
	const struct t_mem *m = ctx;

	return m->net->now;
}

/* A JOIN or LEAVE of member m to its box. */
void
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
	if (type == SHR_MSG_JOIN && n->tree_world != 0) {
		h.root = m->grank;
		h.tensor = 1;
	}
	shr_proto_build(b, &h, NULL, 0);
	t_put(n, m->addr, n->box[m->box].addr, b, NULL, 0);
}

void
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
		ep.tree_rank = n->tree_world != 0 ? m->grank : 0;
		ep.tree_world = n->tree_world;
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
void
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
			if (shr_agg_tick(bx->agg, n->now, &tx, &bx->st) == 0 && tx.len == 0)
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
void
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
			m->grank = (uint16_t)n->nmem;
			m->box = (int)b;
			m->addr = SHR_AGG_ADDR(0xc6130000u + 16 * b + k, 40000 + k);
			m->nonce = 0x1000 + 16 * b + k;
			n->nmem++;
		}
	}
	n->world = (uint16_t)per_leaf;
}

void
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
int
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

int
t_is_joined(const struct t_mem *m)
{
	return m->ep != NULL;
}

int
t_is_idle(const struct t_mem *m)
{
	return m->failed || shr_endpoint_idle(m->ep);
}

int
t_is_failed(const struct t_mem *m)
{
	return m->failed;
}

int
t_is_left(const struct t_mem *m)
{
	return m->left;
}

/* Every member's rank inside the whole tree (its leaf's order, then its rank). */
int32_t
t_input(unsigned int member, uint64_t i, unsigned int round)
{
	return (int32_t)(member * 1000003u + (uint32_t)i * 7u + round * 13u) - 50000;
}

/* int32 allreduces of several lengths at every member; exact. */
void
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

void
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
