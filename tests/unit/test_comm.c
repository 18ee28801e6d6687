/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * lib/comm through a fake driver (shr_comm_params::dev): the fake's tx_burst hands every
 * datagram to a real aggregator (lib/agg) in the same thread, plays the job's other ranks
 * (their JOINs, and one DATA per rank for every DATA of the communicator's, with a payload
 * of its own), and queues what the box sends to the communicator for its rx_burst. Test
 * knobs: a TX budget per call (short bursts), results lost or held back, LEAVE_ACKs lost,
 * and a script that holds every result until a chunk is sent a second time and then stalls
 * the device, which leaves that resend queued in the communicator when the results come in.
 *
 * Checked: sums of several outstanding collectives under short bursts, loss and reordering;
 * every collective of the C API (reduce, reduce_scatter, broadcast, allgather, gather,
 * scatter, alltoall; the fake ranks send a relay round's payload when they are its source, a
 * header only otherwise, and the box's header-only RESULTs reach the communicator);
 * a LEAVE_ACK that never comes is reported by shr_comm_destroy(); and no queued send of a
 * collective reaches the device after the collective was reported done (issue 18 item 5):
 * the buffer is overwritten (the device would see the new bytes) or freed (AddressSanitizer
 * reports the read, in the sanitizer build) right after shr_comm_wait().
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
#define F_MAXMSG (SHR_PROTO_HDR_LEN + F_CHUNK * 4)
#define F_RXQ 4096u
#define F_SEEN 4096u		/* DATA chunks remembered, to tell a resend */
#define F_SPIN_NS 5000000000ull	/* a state the test waits for: give up after 5 s */

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
	bool shuffle;		/* rx_burst hands out the queue in a random order */
	bool lose_leave_ack;
	enum f_script script;
	bool stalled;		/* the device takes nothing */
	uint32_t ended_below;	/* DATA of a tensor < this: fails (a collective done) */
	uint16_t odd_rank;	/* not 0: this fake rank's DATA has odd_step more in step */
	uint32_t odd_step;
	unsigned int lose_aborts; /* ABORTs to the communicator lost */

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
	uint64_t leaves;
	uint64_t token;		/* of the communicator's last DATA */
	uint32_t last_step;	/* its step and tensor */
	uint32_t last_tensor;
	uint8_t poison;		/* a DATA whose payload is all this byte fails: a reused buffer */
	bool closed;
};

static uint64_t
f_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t
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
static int32_t
peer_val(uint16_t r, int32_t x, uint64_t i)
{
	return (int32_t)((uint32_t)x * (r + 1u) + (uint32_t)(r * 1000u + i % 7u));
}

/* What rank r of a relay round sends (stream offset off): the fake ranks' inputs. */
static int32_t
relay_val(uint16_t r, uint64_t off)
{
	return (int32_t)(0x5bd1e995u * (r + 1u) ^ (uint32_t)(off * 2654435761u));
}

/*
 * The box's output, if it is for the communicator (the message to dst but dst[skip], or the
 * header-only RESULT to ack_dst but ack_dst[ack_skip]): queued (or held, or lost).
 */
static void
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
	if (h->type == SHR_MSG_RESULT && f->script == F_STALL_RESEND && !f->stalled) {
		assert_true(f->held_n < F_RXQ);
		f->held[f->held_n++] = m;
		return;
	}
	assert_true(f->rx_n < F_RXQ);
	f->rxq[f->rx_n++] = m;
}

static void
f_box_in(struct fake *f, uint64_t src, const void *msg, size_t len)
{
	enum shr_proto_reason r;

	r = shr_agg_input(f->agg, src, msg, len, f_now(), &f->tx, &f->st);
	/* The odd rank's DATA (or one after it), then resends to a job the box has aborted. */
	if (f->odd_rank != 0 && (r == SHR_PROTO_OUT_OF_STEP || r == SHR_PROTO_UNKNOWN_JOB))
		r = SHR_PROTO_OK;
	if (r != SHR_PROTO_OK)
		fail_msg("box refused a message from %s: %s", src == f->me ? "the comm" : "a peer",
			 shr_proto_reason_str(r));
	f_box_out(f);
}

/* The other ranks' JOINs, built from the communicator's. */
static void
f_peers_join(struct fake *f, const struct shr_proto_msg *join)
{
	uint8_t hdr[SHR_PROTO_HDR_LEN];
	uint16_t r;

	for (r = 1; r < f->world; r++) {
		struct shr_proto_msg m = *join;

		m.rank = r;
		m.token = 0x1000u + r;	/* the peer's nonce */
		shr_proto_build(hdr, &m, NULL, 0);
		f_box_in(f, SHR_AGG_ADDR(F_PEER_IP + r, F_PORT), hdr, sizeof(hdr));
	}
	f->peers_joined = true;
}

/* The other ranks' DATA for the communicator's chunk. */
static void
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
		if (shr_proto_kind_relay(m.kind) && m.root != r) {
			m.flags |= SHR_FLAG_NOPAYLOAD;	/* not the round's source */
			plen = 0;
		}
		for (i = 0; plen > 0 && i < m.count; i++)
			y[i] = shr_proto_kind_relay(m.kind) ? relay_val(r, data->offset + i) :
				peer_val(r, x[i], data->offset + i);
		shr_proto_build(buf, &m, y, plen);
		f_box_in(f, SHR_AGG_ADDR(F_PEER_IP + r, F_PORT), buf, SHR_PROTO_HDR_LEN + plen);
	}
}

/* A DATA chunk taken: first time, or a resend? */
static bool
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

static int
f_tx_burst(struct shr_drv *dev, const struct shr_drv_pkt *pkts, unsigned int n)
{
	struct fake *f = (struct fake *)dev;
	unsigned int k, take = n;

	if (f->stalled)
		return 0;
	if (f->budget >= 0 && take > (unsigned int)f->budget)
		take = (unsigned int)f->budget;
	for (k = 0; k < take; k++) {
		const struct shr_drv_pkt *p = &pkts[k];
		const struct shr_proto_hdr *h = p->hdr;
		uint8_t buf[F_MAXMSG];
		struct shr_proto_msg m;
		size_t len = (size_t)p->hdr_len + p->payload_len;
		uint32_t i;

		assert_true(len <= F_MAXMSG);
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
		if (m.type == SHR_MSG_DATA) {
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
				f_box_in(f, f->me, buf, len);
			} else {
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
			f_box_in(f, f->me, buf, len);
			if (m.type == SHR_MSG_JOIN && !f->peers_joined)
				f_peers_join(f, &m);
		}
		dev->stats.tx_pkts++;
		dev->stats.tx_bytes += len;
	}
	return (int)take;
}

static int
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
		out[f->batch_n].src_ip = F_AGG_IP;
		out[f->batch_n].src_port = F_PORT;
		out[f->batch_n].len = m->len;
		out[f->batch_n].data = m->data;
		f->batch_n++;
	}
	memmove(f->rxq, f->rxq + f->batch_n, (f->rx_n - f->batch_n) * sizeof(f->rxq[0]));
	f->rx_n -= f->batch_n;
	dev->stats.rx_pkts += f->batch_n;
	return (int)f->batch_n;
}

static int
f_wait(struct shr_drv *dev, uint64_t timeout_us)
{
	struct fake *f = (struct fake *)dev;

	(void)timeout_us;
	return f->rx_n > 0;	/* never sleeps: the caller spins on its timers */
}

static void
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

static struct fake *
fake_new(uint16_t world, uint64_t seed)
{
	struct shr_agg_params ap = {
		.nslots = 64, .max_elems = F_CHUNK, .max_world = 16, .max_jobs = 4,
		.max_window = 16, .lanes = 1,
	};
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
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

static void
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

static struct shr_comm *
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

static void
fill(int32_t *in, uint64_t n, unsigned int op)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		in[i] = (int32_t)((i * 2654435761u) ^ (op * 40503u)) % 100000 - 50000;
}

/* An allreduce of n elements whose first is at stream offset base. */
static void
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

/* ---- tests ---- */

static void
test_allreduce(void **state)
{
	struct fake *f = fake_new(3, 1);
	struct shr_comm *c = comm_new(f);
	int32_t in[1000], out[1000];

	(void)state;
	fill(in, 1000, 0);
	assert_int_equal(shr_comm_allreduce(c, in, out, 1000, SHR_OP_SUM), 0);
	check_sum(f, in, out, 1000, 0, 0);
	assert_int_equal(shr_comm_barrier(c), 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	assert_int_equal(f->leaves, 1);
	fake_free(f);
}

/*
 * Several collectives outstanding at once (more chunks than the window), the device taking
 * a random few datagrams per burst, results lost and delivered out of order: every one
 * completes with its own sum, waited for in any order.
 */
static void
run_outstanding(unsigned int loss, uint64_t seed)
{
	static const uint64_t lens[] = {
		0, 1, F_CHUNK - 1, F_CHUNK, F_CHUNK + 1, 3 * F_WINDOW * F_CHUNK + 5, 700, 2,
		F_WINDOW * F_CHUNK, 129,
	};
	enum { NOPS = sizeof(lens) / sizeof(lens[0]) };
	struct fake *f = fake_new(4, seed);
	struct shr_comm *c = comm_new(f);
	struct shr_comm_stats st;
	int32_t *in[NOPS], *out[NOPS];
	int req[NOPS];
	bool done[NOPS] = { false };
	unsigned int o, left = NOPS;
	uint64_t t0, base;

	f->loss = loss;
	f->shuffle = true;
	for (o = 0; o < NOPS; o++) {
		in[o] = malloc(lens[o] * 4 + 4);
		out[o] = malloc(lens[o] * 4 + 4);
		assert_non_null(in[o]);
		assert_non_null(out[o]);
		fill(in[o], lens[o], o);
		memset(out[o], 0xa5, lens[o] * 4 + 4);
		f->budget = (int)(f_rand(f) % 3);
		req[o] = shr_comm_iallreduce(c, in[o], out[o], lens[o], SHR_OP_SUM);
		assert_true(req[o] >= 0);
	}
	/* Odd requests by test() in a loop, from the last; then the rest by wait(). */
	t0 = f_now();
	while (left > NOPS / 2) {
		for (o = NOPS; o-- > 0;) {
			int rc;

			if (done[o] || o % 2 == 0)
				continue;
			f->budget = (int)(f_rand(f) % 4);
			rc = shr_comm_test(c, req[o]);
			assert_true(rc == 0 || rc == 1);
			if (rc == 1) {
				done[o] = true;
				left--;
			}
		}
		assert_true(f_now() - t0 < F_SPIN_NS);
	}
	f->budget = 2;
	for (o = NOPS; o-- > 0;) {
		if (done[o])
			continue;
		assert_int_equal(shr_comm_wait(c, req[o]), 0);
		done[o] = true;
	}
	for (o = 0, base = 0; o < NOPS; base += lens[o], o++) {
		check_sum(f, in[o], out[o], lens[o], o, base);
		assert_int_equal(((uint8_t *)out[o])[lens[o] * 4], 0xa5);
	}
	shr_comm_stats_get(c, &st);
	assert_true(st.tx_deferred > 0);	/* the bursts were short */
	if (loss != 0)
		assert_true(st.ep.tx_retx > 0);
	f->budget = -1;
	f->loss = 0;
	assert_int_equal(shr_comm_destroy(c), 0);
	for (o = 0; o < NOPS; o++) {
		free(in[o]);
		free(out[o]);
	}
	fake_free(f);
}

static void
test_outstanding(void **state)
{
	(void)state;
	run_outstanding(0, 2);
}

static void
test_outstanding_loss(void **state)
{
	(void)state;
	run_outstanding(20, 3);
}

/* The box never acknowledges the LEAVE: destroy says so. */
static void
test_leave_ack_lost(void **state)
{
	struct fake *f = fake_new(2, 4);
	struct shr_comm *c = comm_new(f);

	(void)state;
	assert_int_equal(shr_comm_barrier(c), 0);
	f->lose_leave_ack = true;
	assert_int_equal(shr_comm_destroy(c), -ETIMEDOUT);
	assert_true(f->leaves >= 2);	/* resent meanwhile */
	fake_free(f);
}

/*
 * Issue 18 item 5. Results are held until a chunk is resent; the device then takes nothing
 * more, so the resend is still queued when the results come in and shr_comm_wait() returns.
 * The application then reuses the buffer (overwrite: the bytes a later send would carry are
 * the new ones) or frees it (AddressSanitizer reports a read of it), and the device is free
 * again: nothing of the ended collective may go out.
 */
static void
run_queue_after_wait(bool do_free)
{
	struct fake *f = fake_new(2, 5);
	struct shr_comm *c = comm_new(f);
	struct shr_comm_stats st;
	int32_t *in = malloc(2 * F_CHUNK * 4), *out = malloc(2 * F_CHUNK * 4);
	int32_t in2[F_CHUNK], out2[F_CHUNK];
	int req;

	assert_non_null(in);
	assert_non_null(out);
	fill(in, 2 * F_CHUNK, 1);
	f->script = F_STALL_RESEND;
	req = shr_comm_iallreduce(c, in, out, 2 * F_CHUNK, SHR_OP_SUM);
	assert_true(req >= 0);
	assert_int_equal(shr_comm_wait(c, req), 0);
	assert_true(f->stalled);	/* the script ran: a resend was refused */
	check_sum(f, in, out, 2 * F_CHUNK, 1, 0);
	f->ended_below = 1;		/* the first collective (tensor 0) is done */
	if (do_free) {
		free(in);
		free(out);
	} else {
		f->poison = 0xee;
		memset(in, 0xee, 2 * F_CHUNK * 4);
	}
	/* The device takes again; progress and a new collective flush the queue. */
	f->stalled = false;
	f->script = F_PLAIN;
	assert_true(shr_comm_progress(c) >= 0);
	fill(in2, F_CHUNK, 2);
	assert_int_equal(shr_comm_allreduce(c, in2, out2, F_CHUNK, SHR_OP_SUM), 0);
	check_sum(f, in2, out2, F_CHUNK, 2, 2 * F_CHUNK);	/* after the first's */
	shr_comm_stats_get(c, &st);
	assert_true(st.tx_ended >= 1);
	assert_int_equal(shr_comm_destroy(c), 0);
	if (!do_free) {
		free(in);
		free(out);
	}
	fake_free(f);
}

static void
test_queue_after_wait_reuse(void **state)
{
	(void)state;
	run_queue_after_wait(false);
}

static void
test_queue_after_wait_free(void **state)
{
	(void)state;
	run_queue_after_wait(true);
}

/* The same through the blocking barrier, whose buffers are on its stack. */
static void
test_queue_after_barrier(void **state)
{
	struct fake *f = fake_new(3, 6);
	struct shr_comm *c = comm_new(f);

	(void)state;
	f->script = F_STALL_RESEND;
	assert_int_equal(shr_comm_barrier(c), 0);
	assert_true(f->stalled);
	f->ended_below = 1;
	f->stalled = false;
	f->script = F_PLAIN;
	assert_true(shr_comm_progress(c) >= 0);
	assert_int_equal(shr_comm_barrier(c), 0);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/*
 * rank 0's output element e of a collective of world w, count c, root rt, input in, whose
 * round space starts at stream offset base.
 */
static int32_t
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
static uint64_t
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
 * Every collective of the C API at rank 0 of 3 (the fake plays ranks 1 and 2 through the
 * real box: a relay round's source sends its payload, the others a header only), roots 0
 * and 2, blocking and non-blocking, with results lost (resent); rank 0's output exact, and
 * nothing written where rank 0 gets nothing (reduce and gather at root 2: out NULL).
 */
static void
test_collectives(void **state)
{
	static const uint8_t kinds[] = {
		SHR_KIND_REDUCE, SHR_KIND_REDUCE_SCATTER, SHR_KIND_BROADCAST, SHR_KIND_ALLGATHER,
		SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL,
	};
	const uint16_t w = 3;
	const uint64_t c = 100;
	struct fake *f = fake_new(w, 11);
	struct shr_comm *comm = comm_new(f);
	int32_t *in = malloc(w * c * 4), *out = malloc(w * c * 4);
	unsigned int i, rt, nb;
	uint64_t base = 0;	/* stream offset of the next collective */

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	f->loss = 10;
	for (nb = 0; nb < 2; nb++) {
		for (i = 0; i < sizeof(kinds); i++) {
			for (rt = 0; rt < w; rt += 2) {
				uint8_t kind = kinds[i];
				uint64_t nout = c, e;
				int rc = 0, req = -1;

				fill(in, w * c, i * 4 + rt);
				memset(out, 0x5a, w * c * 4);
				if (kind == SHR_KIND_ALLGATHER || kind == SHR_KIND_ALLTOALL ||
				    (kind == SHR_KIND_GATHER && rt == 0))
					nout = w * c;
				if ((kind == SHR_KIND_REDUCE || kind == SHR_KIND_GATHER) && rt != 0)
					nout = 0;
				if (kind == SHR_KIND_BROADCAST && rt == 0)
					nout = 0;	/* the root's buf is its input */
				switch (kind) {
				case SHR_KIND_REDUCE:
					req = nb ? shr_comm_ireduce(comm, in, nout ? out : NULL, c,
								    SHR_OP_SUM, (uint16_t)rt) :
					      shr_comm_reduce(comm, in, nout ? out : NULL, c,
							      SHR_OP_SUM, (uint16_t)rt);
					break;
				case SHR_KIND_REDUCE_SCATTER:
					req = nb ? shr_comm_ireduce_scatter(comm, in, out, c,
									    SHR_OP_SUM) :
					      shr_comm_reduce_scatter(comm, in, out, c, SHR_OP_SUM);
					break;
				case SHR_KIND_BROADCAST:
					if (rt == 0)
						memcpy(out, in, c * 4);
					req = nb ? shr_comm_ibroadcast(comm, out, c, (uint16_t)rt) :
					      shr_comm_broadcast(comm, out, c, (uint16_t)rt);
					break;
				case SHR_KIND_ALLGATHER:
					req = nb ? shr_comm_iallgather(comm, in, out, c) :
					      shr_comm_allgather(comm, in, out, c);
					break;
				case SHR_KIND_GATHER:
					req = nb ? shr_comm_igather(comm, in, nout ? out : NULL, c,
								    (uint16_t)rt) :
					      shr_comm_gather(comm, in, nout ? out : NULL, c,
							      (uint16_t)rt);
					break;
				case SHR_KIND_SCATTER:
					req = nb ? shr_comm_iscatter(comm, in, out, c, (uint16_t)rt) :
					      shr_comm_scatter(comm, in, out, c, (uint16_t)rt);
					break;
				default:
					req = nb ? shr_comm_ialltoall(comm, in, out, c) :
					      shr_comm_alltoall(comm, in, out, c);
					break;
				}
				assert_true(req >= 0);
				if (nb)
					rc = shr_comm_wait(comm, req);
				assert_int_equal(rc, 0);
				for (e = 0; e < nout; e++)
					if (out[e] != coll_want(kind, w, (uint16_t)rt, c, in, e,
								base))
						fail_msg("%s root %u: element %llu is %d, want %d",
							 shr_proto_kind_str(kind), rt,
							 (unsigned long long)e, out[e],
							 coll_want(kind, w, (uint16_t)rt, c, in, e,
								   base));
				base += coll_space(kind, w, c);
				if (kind == SHR_KIND_BROADCAST && rt == 0) {
					assert_memory_equal(out, in, c * 4);
					nout = c;
				}
				for (e = nout; e < w * c; e++)
					assert_int_equal((uint32_t)out[e], 0x5a5a5a5au);
			}
		}
	}
	/* arguments: root outside the world, NULL buffers, another collective after */
	assert_int_equal(shr_comm_broadcast(comm, out, c, w), -EINVAL);
	assert_int_equal(shr_comm_gather(comm, in, NULL, c, 0), -EINVAL);
	assert_int_equal(shr_comm_scatter(comm, NULL, out, c, 0), -EINVAL);
	assert_int_equal(shr_comm_alltoall(comm, in, in, c), -EINVAL);
	assert_int_equal(shr_comm_barrier(comm), 0);
	assert_int_equal(shr_comm_destroy(comm), 0);
	free(in);
	free(out);
	fake_free(f);
}

/* The box's ABORT EPROTO as lib/agg builds it (shr_proto.h, ABORT), to the communicator. */
static void
f_abort_eproto(struct fake *f, uint16_t rank, const struct shr_comm_call *mine,
	       uint16_t other, const struct shr_comm_call *theirs)
{
	struct shr_proto_msg a = {
		.type = SHR_MSG_ABORT, .dtype = SHR_DTYPE_INT32, .rank = rank, .world = f->world,
		.job = F_JOB, .aux = EPROTO, .token = f->token,
		.kind = mine->kind, .root = mine->root, .tensor = mine->tensor,
		.step = mine->step, .count = mine->count,
		.slot = other, .offset = (uint64_t)theirs->tensor << 32 | theirs->step,
		.feedback = theirs->count, .op = theirs->kind, .flags = theirs->root,
	};
	struct f_msg *m = malloc(sizeof(*m));

	assert_non_null(m);
	m->len = SHR_PROTO_HDR_LEN;
	shr_proto_build(m->data, &a, NULL, 0);
	assert_true(f->rx_n < F_RXQ);
	f->rxq[f->rx_n++] = m;
}

/*
 * Issue 8 item 3, the communicator's side. The identity of a call travels in its DATA
 * (shr_comm_ident_set(): the step stays, the tensor id counts calls; a step back is
 * -EINVAL). Fake rank 2 calls with another step: the real box aborts the job (EPROTO) and
 * shr_comm_strerror() names both sides, from the box's ABORT; a rank that lost that ABORT
 * gets only the box's repeat (rank and reason) and says so; an ABORT naming both sides read
 * with the repeat fills in the details.
 */
static void
test_mismatch(void **state)
{
	const char *want_step = "job 7 aborted by the aggregator 198.18.0.1: ranks called "
		"different collectives: rank 2 called allreduce(tensor 40, step 7, round of 10 "
		"elements) where rank 0 called allreduce(tensor 40, step 5, round of 10 elements)";
	const char *want_kind = "job 7 aborted by the aggregator 198.18.0.1: ranks called "
		"different collectives: rank 2 called allgather(rank 0's block, tensor 4, step 9, "
		"round of 256 elements) where rank 0 called broadcast(root 0, tensor 4, step 9, "
		"round of 256 elements)";
	const char *want_lost = "job 7 aborted by the aggregator 198.18.0.1: ranks called "
		"different collectives: rank 2 disagreed with the others (this rank missed the "
		"box's first ABORT, which named both)";
	const struct shr_comm_call ag = { SHR_KIND_ALLGATHER, 0, 4, 9, 256 };
	const struct shr_comm_call bc = { SHR_KIND_BROADCAST, 0, 4, 9, 256 };
	struct shr_comm_abort ab;
	int32_t in[10] = { 1 }, out[10];
	uint32_t step, tensor;
	struct shr_comm *c;
	struct fake *f;
	char buf[512];
	int lost;

	(void)state;
	for (lost = 0; lost < 2; lost++) {
		f = fake_new(3, 8);
		c = comm_new(f);
		/* automatic identity: step 0, tensor ids count the calls */
		shr_comm_ident_get(c, &step, &tensor);
		assert_int_equal(step, 0);
		assert_int_equal(tensor, 0);
		assert_int_equal(shr_comm_barrier(c), 0);
		assert_int_equal(f->last_step, 0);
		assert_int_equal(f->last_tensor, 0);
		assert_int_equal(shr_comm_abort_get(c, &ab), -ENOENT);
		/* a step, then a step back or too far: refused, nothing changed */
		assert_int_equal(shr_comm_ident_set(c, 5, 40), 0);
		assert_int_equal(shr_comm_ident_set(c, 4, 41), -EINVAL);
		/* 2^31 above the first call's (0): the box could not order it */
		assert_int_equal(shr_comm_ident_set(c, 1u << 31, 41), -EINVAL);
		shr_comm_ident_get(c, &step, &tensor);
		assert_int_equal(step, 5);
		assert_int_equal(tensor, 40);

		f->odd_rank = 2;
		f->odd_step = 2;
		f->lose_aborts = (unsigned int)lost;
		assert_int_equal(shr_comm_allreduce(c, in, out, 10, SHR_OP_SUM), -ECONNABORTED);
		assert_int_equal(f->last_step, 5);	/* its DATA carried its identity */
		assert_int_equal(f->last_tensor, 40);
		assert_int_equal(f->st.mismatches, 1);
		assert_int_equal(shr_comm_abort_get(c, &ab), 0);
		assert_int_equal(ab.reason, EPROTO);
		assert_int_equal(ab.rank, 2);
		assert_int_equal(ab.detailed, !lost);
		shr_comm_strerror(c, -ECONNABORTED, buf, sizeof(buf));
		if (lost) {
			assert_string_equal(buf, want_lost);
		} else {
			assert_int_equal(ab.other, 0);
			assert_int_equal(ab.called.step, 7);
			assert_int_equal(ab.other_called.step, 5);
			assert_int_equal(ab.called.tensor, 40);
			assert_int_equal(ab.other_called.count, 10);
			assert_string_equal(buf, want_step);
		}
		assert_int_equal(shr_comm_destroy(c), 0);
		fake_free(f);
	}

	/*
	 * The box's repeat (fields 0) and then its ABORT naming both sides, read in one burst:
	 * the details are taken (other kinds and roots: each side's own), and kept.
	 */
	f = fake_new(3, 9);
	c = comm_new(f);
	assert_int_equal(shr_comm_barrier(c), 0);
	f_abort_eproto(f, 2, &(struct shr_comm_call){ 0 }, 0, &(struct shr_comm_call){ 0 });
	f_abort_eproto(f, 2, &ag, 0, &bc);
	f_abort_eproto(f, 1, &bc, 0, &ag);
	assert_int_equal(shr_comm_progress(c), -ECONNABORTED);
	assert_int_equal(shr_comm_abort_get(c, &ab), 0);
	assert_int_equal(ab.detailed, 1);
	assert_int_equal(ab.rank, 2);
	assert_int_equal(ab.called.kind, SHR_KIND_ALLGATHER);
	assert_int_equal(ab.other_called.kind, SHR_KIND_BROADCAST);
	shr_comm_strerror(c, -ECONNABORTED, buf, sizeof(buf));
	assert_string_equal(buf, want_kind);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

/* A params->dev is closed by a create that fails. */
static void
test_dev_closed_on_failure(void **state)
{
	struct fake *f = fake_new(1, 7);
	struct shr_comm_params p = { .agg_ip = 0, .world = 1, .dtype = SHR_DTYPE_INT32,
				     .dev = &f->drv };

	(void)state;
	errno = 0;
	assert_null(shr_comm_create(&p));
	assert_int_equal(errno, EINVAL);
	assert_true(f->closed);
	fake_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allreduce),
		cmocka_unit_test(test_outstanding),
		cmocka_unit_test(test_outstanding_loss),
		cmocka_unit_test(test_leave_ack_lost),
		cmocka_unit_test(test_queue_after_wait_reuse),
		cmocka_unit_test(test_queue_after_wait_free),
		cmocka_unit_test(test_queue_after_barrier),
		cmocka_unit_test(test_dev_closed_on_failure),
		cmocka_unit_test(test_collectives),
		cmocka_unit_test(test_mismatch),
	};

	return cmocka_run_group_tests_name("comm", tests, NULL, NULL);
}
