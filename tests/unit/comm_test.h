/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * What the unit tests of lib/comm (test_comm*.c) share: a fake driver (shr_comm_params::dev)
 * whose tx_burst hands every datagram to a real aggregator (lib/agg) in the same thread, plays
 * the job's other ranks (their JOINs, and one DATA per rank for every DATA of the
 * communicator's, with a payload of its own), and queues what the box sends to the
 * communicator for its rx_burst. A datagram longer than the device's max_payload (the path)
 * fails the test. Test knobs: a TX budget per call (short bursts), results lost or held back,
 * LEAVE_ACKs lost, the other ranks joining late, datagrams handed out as another host's, and a
 * script that holds every result until a chunk is sent a second time and then stalls the
 * device, which leaves that resend queued in the communicator when the results come in; in a
 * tree's job, the tree ranks each fake rank stands for; a JOIN_ACK EINPROGRESS of another
 * token before the box's admission, a hook that may change or lose each JOIN_ACK (or restart
 * the box: f_box_replace()), the comm's JOINs answered with a restarted box's challenge
 * taken. And a box and a communicator that require the per-job MAC (mac_params(),
 * mac_comm_new()), and an allreduce's sum checked against the fake ranks' (check_sum()).
 */

#ifndef SHR_COMM_TEST_H
#define SHR_COMM_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include <shr_agg.h>
#include <shr_comm.h>
#include <shr_drv.h>
#include <shr_proto.h>

#define F_AGG_IP 0xc6120001u	/* 198.18.0.1 */
#define F_MY_IP 0xc6120002u	/* 198.18.0.2 */
#define F_PEER_IP 0xc6120100u	/* the fake ranks: 198.18.1.r */
#define F_PORT 40000u
#define F_JOB 7u
#define F_CHUNK 64u
#define F_WINDOW 4u
#define F_MAXMSG (SHR_PROTO_HDR_LEN + F_CHUNK * 4 + SHR_PROTO_MAC_LEN)
#define F_RXQ 4096u
#define F_SEEN 4096u		/* DATA chunks remembered, to tell a resend */
#define F_SPIN_NS 5000000000ull	/* a state the test waits for: give up after 5 s */
#define F_PEERS_MAX 16		/* fake ranks (fake_new()'s box: max_world 16) */

enum f_script { F_PLAIN, F_STALL_RESEND };

struct f_msg {
	uint32_t len;
	uint8_t data[F_MAXMSG];
};

struct fake {
	struct shr_drv drv;	/* first: the communicator sees a struct shr_drv */
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	uint8_t txbuf[F_MAXMSG];
	uint64_t me;		/* the communicator's address key */
	uint16_t world;
	bool peers_joined;
	uint64_t rng;

	/* knobs */
	int budget;		/* datagrams taken per tx_burst; < 0: all */
	unsigned int loss;	/* percent of box messages to the communicator lost */
	unsigned int dup;	/* percent of them delivered twice */
	unsigned int tx_loss;	/* percent of the communicator's DATA lost on the way */
	bool shuffle;		/* rx_burst hands out the queue in a random order */
	bool lose_leave_ack;
	enum f_script script;
	bool stalled;		/* the device takes nothing */
	uint32_t ended_below;	/* DATA of a tensor < this: fails (a collective done) */
	uint16_t odd_rank;	/* not 0: this fake rank's DATA has odd_step more in step */
	uint32_t odd_step;
	unsigned int lose_aborts; /* ABORTs to the communicator lost */
	uint32_t join_abort;	/* not 0: the comm's JOIN is answered with an ABORT, this
				 * reason, naming join_abort_rank (the box gave up the job
				 * while it filled) */
	uint16_t join_abort_rank;
	uint32_t ack_lanes;	/* not 0: the JOIN_ACK's lanes (its tensor field) say this */
	uint64_t inprog_token;	/* not 0: the box's first JOIN_ACK that admits the comm comes
				 * after a JOIN_ACK EINPROGRESS of this token echoing its JOIN's
				 * nonce (a box that restarted since, or an incarnation that
				 * changed, told it while the job filled) */
	unsigned int stale_auth_ok; /* JOINs of the comm the box may refuse as stale_auth (it
				 * answers a new challenge): the box restarted since its last */
	bool (*ack_edit)(struct fake *f, struct f_msg *m); /* not NULL: called with every
				 * JOIN_ACK of the box to the comm before it is queued (it may
				 * change it); false: it is lost */
	int group_rc;		/* what the device's group_join() returns (f_group_ops) */
	uint32_t group_ip;	/* the group it was asked to join (0: none) */
	uint16_t group_port;
	uint32_t rx_src;	/* not 0: rx_burst hands out the queue as sent from this address
				 * (another host's), not the box's */
	uint64_t peers_late_ns;	/* not 0: the other ranks JOIN only with a JOIN of the comm's
				 * other than its first, taken this long after its first
				 * (they start apart) */
	/*
	 * A tree's job (the communicator gives a tree rank): fake rank r stands for tree ranks
	 * tree_first[r] .. tree_first[r] + tree_count[r] - 1, as a box below would (its JOIN
	 * says so); the source of a relayed round is the one that stands for its root. All
	 * 0: a plain job, rank r stands for itself.
	 */
	uint16_t tree_first[F_PEERS_MAX];
	uint16_t tree_count[F_PEERS_MAX];

	/* box -> communicator */
	struct f_msg *rxq[F_RXQ];
	unsigned int rx_n;
	struct f_msg *held[F_RXQ];
	unsigned int held_n;
	struct f_msg *batch[SHR_DRV_BURST_MAX];
	unsigned int batch_n;

	/* what the device saw */
	uint64_t seen[F_SEEN];	/* (tensor, step, offset) of the DATA taken */
	unsigned int seen_n;
	uint64_t data_tx;	/* DATA taken */
	uint64_t resends;	/* DATA taken for a chunk taken before */
	/*
	 * fifo_check: a burst the device took in part must be offered again from the first
	 * datagram it did not take (the sender's queue keeps what was not sent, in order):
	 * fifo_broken counts the bursts that began with anything else.
	 */
	bool fifo_check;
	bool fifo_set;
	uint8_t fifo_next[SHR_PROTO_HDR_LEN];
	uint64_t fifo_broken;
	uint64_t leaves;
	uint64_t token;		/* of the communicator's last DATA */
	uint32_t last_step;	/* its step and tensor */
	uint32_t last_tensor;
	uint8_t poison;		/* a DATA whose payload is all this byte fails: a reused buffer */
	uint64_t join_nonce;	/* the communicator's JOIN's nonce */
	uint64_t first_mac_ctr;	/* the counter of its first signed DATA (0: none yet) */
	uint64_t joins;		/* its JOINs taken */
	uint64_t first_join_ns;	/* when the device took the first one */
	struct f_msg last_data;	/* its last DATA, whole as the device took it */
	struct f_msg last_result; /* the box's last RESULT to it, whole */
	bool closed;
};

static inline uint64_t
f_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
f_rand(struct fake *f)
{
	uint64_t x = (f->rng += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * What fake rank r adds to element i (its DATA's offset: its place in the communicator's
 * stream) when the communicator's element is x.
 */
static inline int32_t
peer_val(uint16_t r, int32_t x, uint64_t i)
{
	return (int32_t)((uint32_t)x * (r + 1u) + (uint32_t)(r * 1000u + i % 7u));
}

/* What rank r of a relay round sends (stream offset off): the fake ranks' inputs. */
static inline int32_t
relay_val(uint16_t r, uint64_t off)
{
	return (int32_t)(0x5bd1e995u * (r + 1u) ^ (uint32_t)(off * 2654435761u));
}

/* Whether fake rank r stands for rank g of the collectives (a tree rank in a tree's job). */
static inline bool
f_peer_has(const struct fake *f, uint16_t r, uint32_t g)
{
	if (f->tree_count[r] == 0)
		return g == r;
	return g - f->tree_first[r] < f->tree_count[r];
}

/*
 * Queue for the communicator the JOIN_ACK EINPROGRESS of token that a box would have sent it
 * while the job of JOIN_ACK ack filled (it echoes the comm's JOIN's nonce).
 */
static inline void
f_inprog(struct fake *f, const void *ack, size_t len, uint64_t token)
{
	struct f_msg *q = malloc(sizeof(*q));
	struct shr_proto_msg a;

	assert_non_null(q);
	assert_int_equal(shr_proto_validate(ack, len, &a), SHR_PROTO_OK);
	a.aux = EINPROGRESS;
	a.offset = f->join_nonce;
	a.token = token;
	a.feedback = 1000;	/* ms the box still waits for the others */
	a.flags &= (uint16_t)~SHR_FLAG_MAC;	/* nothing is keyed yet */
	shr_proto_build(q->data, &a, NULL, 0);
	q->len = SHR_PROTO_HDR_LEN;
	assert_true(f->rx_n < F_RXQ);
	f->rxq[f->rx_n++] = q;
}

/*
 * The box's output, if it is for the communicator (the message to dst but dst[skip], or the
 * header-only RESULT to ack_dst but ack_dst[ack_skip]): queued (or held, or lost).
 */
static inline void
f_box_out(struct fake *f)
{
	const struct shr_proto_hdr *h = f->tx.buf;
	const void *buf = f->tx.buf;
	size_t len = f->tx.len;
	struct f_msg *m;
	bool mine = false;
	uint32_t d;

	for (d = 0; d < f->tx.ndst; d++)
		mine |= f->tx.dst[d] == f->me && d != f->tx.skip;
	for (d = 0; !mine && f->tx.ack_len > 0 && d < f->tx.ack_ndst; d++) {
		if (f->tx.ack_dst[d] == f->me && d != f->tx.ack_skip) {
			mine = true;
			buf = f->tx.ack;
			len = f->tx.ack_len;
		}
	}
	if (f->tx.len == 0 || !mine)
		return;
	if (f->ack_lanes != 0 && h->type == SHR_MSG_JOIN_ACK) {
		struct shr_proto_msg a;

		assert_int_equal(shr_proto_validate(buf, len, &a), SHR_PROTO_OK);
		a.tensor = f->ack_lanes;
		shr_proto_build((void *)buf, &a, (const uint8_t *)buf + SHR_PROTO_HDR_LEN,
				len - SHR_PROTO_HDR_LEN);
	}
	if (h->type == SHR_MSG_JOIN_ACK && h->aux == 0 && f->inprog_token != 0) {
		f_inprog(f, buf, len, f->inprog_token);
		f->inprog_token = 0;
	}
	if (h->type == SHR_MSG_LEAVE_ACK && f->lose_leave_ack)
		return;
	if (h->type == SHR_MSG_ABORT && f->lose_aborts > 0) {
		f->lose_aborts--;
		return;
	}
	if (h->type == SHR_MSG_RESULT && f->loss != 0 && f_rand(f) % 100 < f->loss)
		return;
	assert_true(len <= F_MAXMSG);
	m = malloc(sizeof(*m));
	assert_non_null(m);
	m->len = (uint32_t)len;
	memcpy(m->data, buf, len);
	if (h->type == SHR_MSG_RESULT)
		memcpy(&f->last_result, m, sizeof(*m));
	if (h->type == SHR_MSG_JOIN_ACK && f->ack_edit != NULL && !f->ack_edit(f, m)) {
		free(m);
		return;
	}
	if (h->type == SHR_MSG_RESULT && f->script == F_STALL_RESEND && !f->stalled) {
		assert_true(f->held_n < F_RXQ);
		f->held[f->held_n++] = m;
		return;
	}
	assert_true(f->rx_n < F_RXQ);
	f->rxq[f->rx_n++] = m;
	if (f->dup != 0 && f_rand(f) % 100 < f->dup && f->rx_n < F_RXQ) {
		struct f_msg *twin = malloc(sizeof(*twin));

		assert_non_null(twin);
		memcpy(twin, m, sizeof(*twin));
		f->rxq[f->rx_n++] = twin;
	}
}

static inline void
f_box_in(struct fake *f, uint64_t src, const void *msg, size_t len)
{
	enum shr_proto_reason r;

	r = shr_agg_input(f->agg, src, msg, len, f_now(), &f->tx, &f->st);
	/* The odd rank's DATA (or one after it), then resends to a job the box has aborted. */
	if (f->odd_rank != 0 && (r == SHR_PROTO_OUT_OF_STEP || r == SHR_PROTO_UNKNOWN_JOB))
		r = SHR_PROTO_OK;
	if (r == SHR_PROTO_STALE_AUTH && src == f->me && f->stale_auth_ok > 0) {
		f->stale_auth_ok--;
		r = SHR_PROTO_OK;
	}
	if (r != SHR_PROTO_OK)
		fail_msg("box refused a message from %s: %s", src == f->me ? "the comm" : "a peer",
			 shr_proto_reason_str(r));
	f_box_out(f);
}

/* The ABORT a box sends in answer to a JOIN of a job it gave up (it echoes the nonce). */
static inline void
f_join_abort(struct fake *f, const struct shr_proto_msg *join)
{
	uint8_t hdr[SHR_PROTO_HDR_LEN];
	const struct shr_proto_msg m = {
		.type = SHR_MSG_ABORT, .dtype = join->dtype, .rank = f->join_abort_rank,
		.world = join->world, .job = join->job, .offset = join->token,
		.aux = f->join_abort,
	};

	struct f_msg *q = malloc(sizeof(*q));

	assert_non_null(q);
	shr_proto_build(hdr, &m, NULL, 0);
	q->len = sizeof(hdr);
	memcpy(q->data, hdr, sizeof(hdr));
	assert_true(f->rx_n < F_RXQ);
	f->rxq[f->rx_n++] = q;
}

/* The other ranks' JOINs, built from the communicator's. */
static inline void
f_peers_join(struct fake *f, const struct shr_proto_msg *join)
{
	uint8_t hdr[SHR_PROTO_HDR_LEN];
	uint16_t r;

	for (r = 1; r < f->world; r++) {
		struct shr_proto_msg m = *join;

		m.rank = r;
		m.token = 0x1000u + r;	/* the peer's nonce */
		if (f->tree_count[r] != 0) {
			m.root = f->tree_first[r];
			m.tensor = f->tree_count[r];
		}
		shr_proto_build(hdr, &m, NULL, 0);
		f_box_in(f, SHR_AGG_ADDR(F_PEER_IP + r, F_PORT), hdr, sizeof(hdr));
	}
	f->peers_joined = true;
}

/* The other ranks' DATA for the communicator's chunk. */
static inline void
f_peers_data(struct fake *f, const struct shr_proto_msg *data, const int32_t *x)
{
	uint8_t buf[F_MAXMSG];
	int32_t *y = (int32_t *)(buf + SHR_PROTO_HDR_LEN);
	uint16_t r;
	uint32_t i;

	for (r = 1; r < f->world; r++) {
		struct shr_proto_msg m = *data;
		size_t plen = (size_t)m.count * 4;

		m.rank = r;
		if (r == f->odd_rank)
			m.step += f->odd_step;
		m.flags &= (uint16_t)~SHR_FLAG_NOPAYLOAD;
		if (shr_proto_kind_relay(m.kind) && !f_peer_has(f, r, m.root)) {
			m.flags |= SHR_FLAG_NOPAYLOAD;	/* not the round's source */
			plen = 0;
		}
		/* a relay: the source's payload (rank, or tree rank, m.root) */
		for (i = 0; plen > 0 && i < m.count; i++)
			y[i] = shr_proto_kind_relay(m.kind) ?
				relay_val((uint16_t)m.root, data->offset + i) :
				peer_val(r, x[i], data->offset + i);
		shr_proto_build(buf, &m, y, plen);
		f_box_in(f, SHR_AGG_ADDR(F_PEER_IP + r, F_PORT), buf, SHR_PROTO_HDR_LEN + plen);
	}
}

/* A DATA chunk taken: first time, or a resend? */
static inline bool
f_seen_before(struct fake *f, const struct shr_proto_msg *m)
{
	uint64_t key = ((uint64_t)m->tensor << 40) ^ ((uint64_t)m->step << 20) ^ m->offset;
	unsigned int i;

	for (i = 0; i < f->seen_n; i++)
		if (f->seen[i] == key)
			return true;
	assert_true(f->seen_n < F_SEEN);
	f->seen[f->seen_n++] = key;
	return false;
}

static inline int
f_tx_burst(struct shr_drv *dev, const struct shr_drv_pkt *pkts, unsigned int n)
{
	struct fake *f = (struct fake *)dev;
	unsigned int k, take = n;

	if (f->stalled)
		return 0;
	if (f->budget >= 0 && take > (unsigned int)f->budget)
		take = (unsigned int)f->budget;
	if (f->fifo_check && n > 0) {
		if (f->fifo_set && (pkts[0].hdr_len < SHR_PROTO_HDR_LEN ||
				    memcmp(pkts[0].hdr, f->fifo_next, SHR_PROTO_HDR_LEN) != 0))
			f->fifo_broken++;
		f->fifo_set = take < n && pkts[take].hdr_len >= SHR_PROTO_HDR_LEN;
		if (f->fifo_set)
			memcpy(f->fifo_next, pkts[take].hdr, SHR_PROTO_HDR_LEN);
	}
	for (k = 0; k < take; k++) {
		const struct shr_drv_pkt *p = &pkts[k];
		const struct shr_proto_hdr *h = p->hdr;
		uint8_t buf[F_MAXMSG];
		struct shr_proto_msg m;
		size_t len = (size_t)p->hdr_len + p->payload_len;
		uint32_t i;

		assert_true(len <= F_MAXMSG);
		if (len > dev->max_payload)
			fail_msg("a datagram of %zu bytes does not fit the path (%u bytes)", len,
				 dev->max_payload);
		assert_int_equal(p->dst_ip, F_AGG_IP);
		/* The whole datagram is read here, as a real device would. */
		memcpy(buf, p->hdr, p->hdr_len);
		if (p->payload_len > 0)
			memcpy(buf + p->hdr_len, p->payload, p->payload_len);
		for (i = 0; i < p->payload_len; i++)
			if (buf[p->hdr_len + i] != f->poison)
				break;
		if (f->poison != 0 && p->payload_len > 0 && i == p->payload_len)
			fail_msg("a DATA carries the bytes of a buffer the application reused "
				 "after its collective was done");
		if (h->type == SHR_MSG_DATA && ntohl(h->tensor) < f->ended_below)
			fail_msg("a DATA of tensor %u, whose collective was done, was sent",
				 ntohl(h->tensor));
		assert_int_equal(shr_proto_validate(buf, len, &m), SHR_PROTO_OK);
		if (m.type == SHR_MSG_DATA && (m.flags & SHR_FLAG_MAC) && f->first_mac_ctr == 0) {
			const uint8_t *t = buf + len - SHR_PROTO_MAC_LEN + 4;	/* the counter */

			for (i = 0; i < 8; i++)
				f->first_mac_ctr = f->first_mac_ctr << 8 | t[i];
		}
		if (m.type == SHR_MSG_JOIN) {
			f->join_nonce = m.token;
			if (f->joins++ == 0)
				f->first_join_ns = f_now();
		}
		if (m.type == SHR_MSG_DATA) {
			f->last_data.len = (uint32_t)len;
			memcpy(f->last_data.data, buf, len);
			f->data_tx++;
			f->token = m.token;
			f->last_step = m.step;
			f->last_tensor = m.tensor;
			if (f_seen_before(f, &m)) {
				f->resends++;
				if (f->script == F_STALL_RESEND && !f->stalled) {
					/* Results in, the resend stays queued. */
					f->stalled = true;
					memcpy(&f->rxq[f->rx_n], f->held,
					       f->held_n * sizeof(f->held[0]));
					f->rx_n += f->held_n;
					f->held_n = 0;
					return (int)k;
				}
				if (f->tx_loss == 0 || f_rand(f) % 100 >= f->tx_loss)
					f_box_in(f, f->me, buf, len);
			} else {
				if (f->tx_loss == 0 || f_rand(f) % 100 >= f->tx_loss)
					f_box_in(f, f->me, buf, len);
				f_peers_data(f, &m, (const int32_t *)(buf + SHR_PROTO_HDR_LEN));
				/* The box's lifecycle work: its abort of a job whose ranks
				 * disagree. */
				while (f->odd_rank != 0 &&
				       (shr_agg_tick(f->agg, f_now(), &f->tx, &f->st) > 0 ||
					f->tx.len > 0))
					f_box_out(f);
			}
		} else {
			if (m.type == SHR_MSG_LEAVE)
				f->leaves++;
			if (m.type == SHR_MSG_JOIN && f->join_abort != 0) {
				f_join_abort(f, &m);
				continue;
			}
			f_box_in(f, f->me, buf, len);
			if (m.type == SHR_MSG_JOIN && !f->peers_joined &&
			    (f->peers_late_ns == 0 ||
			     (f->joins > 1 && f_now() - f->first_join_ns >= f->peers_late_ns)))
				f_peers_join(f, &m);
		}
		dev->stats.tx_pkts++;
		dev->stats.tx_bytes += len;
	}
	return (int)take;
}

static inline int
f_rx_burst(struct shr_drv *dev, struct shr_drv_rx *out, unsigned int n)
{
	struct fake *f = (struct fake *)dev;
	unsigned int i;

	for (i = 0; i < f->batch_n; i++)
		free(f->batch[i]);
	f->batch_n = 0;
	if (f->shuffle && f->rx_n > 1) {
		for (i = f->rx_n - 1; i > 0; i--) {
			unsigned int j = (unsigned int)(f_rand(f) % (i + 1));
			struct f_msg *t = f->rxq[i];

			f->rxq[i] = f->rxq[j];
			f->rxq[j] = t;
		}
	}
	while (f->batch_n < n && f->batch_n < f->rx_n) {
		struct f_msg *m = f->rxq[f->batch_n];

		f->batch[f->batch_n] = m;
		out[f->batch_n].src_ip = f->rx_src != 0 ? f->rx_src : F_AGG_IP;
		out[f->batch_n].src_port = F_PORT;
		out[f->batch_n].rx_ns = 0;
		out[f->batch_n].len = m->len;
		out[f->batch_n].data = m->data;
		f->batch_n++;
	}
	memmove(f->rxq, f->rxq + f->batch_n, (f->rx_n - f->batch_n) * sizeof(f->rxq[0]));
	f->rx_n -= f->batch_n;
	dev->stats.rx_pkts += f->batch_n;
	return (int)f->batch_n;
}

static inline int
f_wait(struct shr_drv *dev, uint64_t timeout_us)
{
	struct fake *f = (struct fake *)dev;

	(void)timeout_us;
	return f->rx_n > 0;	/* never sleeps: the caller spins on its timers */
}

static inline void
f_close(struct shr_drv *dev)
{
	struct fake *f = (struct fake *)dev;

	f->closed = true;	/* freed by the test, which still reads it */
}

static const struct shr_drv_ops f_ops = {
	.name = "fake",
	.tx_burst = f_tx_burst,
	.rx_burst = f_rx_burst,
	.wait = f_wait,
	.close = f_close,
};

/* A device that can join a result group: it records the group, and says group_rc. */
static inline int
f_group_join(struct shr_drv *dev, uint32_t group_ip, uint16_t port)
{
	struct fake *f = (struct fake *)dev;

	if (f->group_rc == 0) {
		f->group_ip = group_ip;
		f->group_port = port;
	}
	return f->group_rc;
}

static const struct shr_drv_ops f_group_ops = {
	.name = "fake",
	.tx_burst = f_tx_burst,
	.rx_burst = f_rx_burst,
	.wait = f_wait,
	.close = f_close,
	.group_join = f_group_join,
};

static inline struct fake *
fake_new(uint16_t world, uint64_t seed)
{
	struct shr_agg_params ap = {
		.nslots = 64, .max_elems = F_CHUNK, .max_world = 16, .max_jobs = 4,
		.max_window = 16, .lanes = 1,
	};
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_true(world <= F_PEERS_MAX);
	f->drv.ops = &f_ops;
	f->drv.local_ip = F_MY_IP;
	f->drv.local_port = F_PORT;
	f->drv.max_payload = F_MAXMSG;
	f->me = SHR_AGG_ADDR(F_MY_IP, F_PORT);
	f->world = world;
	f->budget = -1;
	f->rng = seed;
	f->agg = shr_agg_create(&ap);
	assert_non_null(f->agg);
	f->tx.buf = f->txbuf;
	f->tx.cap = sizeof(f->txbuf);
	assert_true(shr_agg_tx_cap(f->agg) <= sizeof(f->txbuf));
	return f;
}

static inline void
fake_free(struct fake *f)
{
	unsigned int i;

	assert_true(f->closed);
	for (i = 0; i < f->rx_n; i++)
		free(f->rxq[i]);
	for (i = 0; i < f->held_n; i++)
		free(f->held[i]);
	for (i = 0; i < f->batch_n; i++)
		free(f->batch[i]);
	shr_agg_free(f->agg);
	free(f);
}

static inline struct shr_comm *
comm_new(struct fake *f)
{
	struct shr_comm_params p = {
		.agg_ip = F_AGG_IP,
		.agg_port = F_PORT,
		.job = F_JOB,
		.rank = 0,
		.world = f->world,
		.dtype = SHR_DTYPE_INT32,
		.window = F_WINDOW,
		.chunk_elems = F_CHUNK,
		.timeout_ms = 10000,
		.dev = &f->drv,
	};
	struct shr_comm *c = shr_comm_create(&p);
	struct shr_comm_info info;

	assert_non_null(c);
	shr_comm_info_get(c, &info);
	assert_int_equal(info.window, F_WINDOW);
	assert_int_equal(info.chunk_elems, F_CHUNK);
	assert_string_equal(info.driver, "fake");
	return c;
}

static inline void
fill(int32_t *in, uint64_t n, unsigned int op)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		in[i] = (int32_t)((i * 2654435761u) ^ (op * 40503u)) % 100000 - 50000;
}

/* An allreduce of n elements whose first is at stream offset base. */
static inline void
check_sum(const struct fake *f, const int32_t *in, const int32_t *out, uint64_t n,
	  unsigned int op, uint64_t base)
{
	uint64_t i;
	uint16_t r;

	for (i = 0; i < n; i++) {
		uint32_t want = (uint32_t)in[i];

		for (r = 1; r < f->world; r++)
			want += (uint32_t)peer_val(r, in[i], base + i);
		if ((uint32_t)out[i] != want)
			fail_msg("op %u element %llu: %d, want %d", op, (unsigned long long)i,
				 out[i], (int32_t)want);
	}
}

/*
 * rank 0's output element e of a collective of world w, count c, root rt, input in, whose
 * round space starts at stream offset base.
 */
static inline int32_t
coll_want(uint8_t kind, uint16_t w, uint16_t rt, uint64_t c, const int32_t *in, uint64_t e,
	  uint64_t base)
{
	uint64_t b = e / c, k = e % c;
	uint32_t sum;
	uint16_t r;

	switch (kind) {
	case SHR_KIND_REDUCE:
	case SHR_KIND_REDUCE_SCATTER:	/* block 0: the same offsets as a reduce */
		sum = (uint32_t)in[e];
		for (r = 1; r < w; r++)
			sum += (uint32_t)peer_val(r, in[e], base + e);
		return (int32_t)sum;
	case SHR_KIND_BROADCAST:
		return relay_val(rt, base + e);
	case SHR_KIND_ALLGATHER:
	case SHR_KIND_GATHER:
		return b == 0 ? in[k] : relay_val((uint16_t)b, base + e);
	case SHR_KIND_SCATTER:
		return rt == 0 ? in[e] : relay_val(rt, base + e);
	default:	/* alltoall: block (b, 0) of the space */
		return b == 0 ? in[k] : relay_val((uint16_t)b, base + b * w * c + k);
	}
}

/* Elements of a collective's round space (world w, count c): where the next one starts. */
static inline uint64_t
coll_space(uint8_t kind, uint16_t w, uint64_t c)
{
	switch (kind) {
	case SHR_KIND_REDUCE_SCATTER:
	case SHR_KIND_ALLGATHER:
	case SHR_KIND_GATHER:
	case SHR_KIND_SCATTER:
		return w * c;
	case SHR_KIND_ALLTOALL:
		return (uint64_t)w * w * c;
	default:
		return c;
	}
}

/*
 * The parameters of a box that requires the per-job MAC (as fake_new()'s box otherwise) and of
 * a communicator of f's world that uses it (chunk elements per chunk, 0: auto), both with the
 * secret s (set here). The test may change them before f_box_replace() and shr_comm_create().
 */
static inline void
mac_params(struct fake *f, struct shr_auth_secret *s, uint32_t chunk, struct shr_agg_params *ap,
	   struct shr_comm_params *p)
{
	static const char key[] = "a-secret-of-32-bytes-0123456789a";
	const struct shr_agg_params a = {
		.nslots = 64, .max_elems = F_CHUNK, .max_world = 16, .max_jobs = 4,
		.max_window = 16, .lanes = 1, .mac = 1, .auth_ttl_ns = 10000000000ull,
		.secret = s,
	};
	const struct shr_comm_params c = {
		.agg_ip = F_AGG_IP, .agg_port = F_PORT, .job = F_JOB, .world = f->world,
		.dtype = SHR_DTYPE_INT32, .window = F_WINDOW, .chunk_elems = chunk,
		.timeout_ms = 10000, .mac = 1, .secret = s, .dev = &f->drv,
	};

	assert_int_equal(shr_auth_secret_set(s, key, 32), 0);
	*ap = a;
	*p = c;
}

/* f's box replaced by a new one of parameters ap. */
static inline void
f_box_replace(struct fake *f, const struct shr_agg_params *ap)
{
	shr_agg_free(f->agg);
	f->agg = shr_agg_create(ap);
	assert_non_null(f->agg);
}

/*
 * A communicator of f's world with the per-job MAC (mac = 1, the secret in s) on f, whose box
 * (f's own replaced) requires it; chunk elements per chunk (0: auto). NULL if create failed
 * (errno set, f's device closed).
 */
static inline struct shr_comm *
mac_comm_new(struct fake *f, struct shr_auth_secret *s, uint32_t chunk, char *why,
	     size_t why_len)
{
	struct shr_agg_params ap;
	struct shr_comm_params p;

	mac_params(f, s, chunk, &ap, &p);
	p.why = why;
	p.why_len = why_len;
	f_box_replace(f, &ap);
	errno = 0;
	return shr_comm_create(&p);
}

#endif /* SHR_COMM_TEST_H */
