/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The simulation engine of test_sim and sim_campaign: see sim_engine.h. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <shr_agg.h>
#include <shr_endpoint.h>
#include <shr_proto.h>

#include "sim_engine.h"

#define SIM_US 1000ull
#define SIM_BASE_IP 0xc6120001u		/* 198.18.0.1 */
#define SIM_BASE_PORT 40000u
#define SIM_DELAY_US 20u		/* one-way base delay */
#define SIM_JITTER_US 40u		/* extra delay when reordering */
#define SIM_CTRL_RETRY_NS (300 * SIM_US)	/* JOIN / LEAVE resend */
#define SIM_FAKE_LIMIT_NS 120000000000ull	/* 120 s of fake time: a hang */
#define SIM_LATE_MIN_US 300u		/* a late copy: held back this much... */
#define SIM_LATE_MAX_US 5000u		/* ...to this much more */
#define SIM_LEAVE_WAIT_NS 500000000ull	/* LEAVE resent this long, as lib/comm */
#define SIM_PAUSE_FROM_NS 5000000ull	/* a pause starts in the first 5 ms */
#define SIM_MAX_OPS 16
#define SIM_JOBS 2
#define SIM_MAX_WORLD 1024
#define SIM_MAX_CHUNK 256

/* The run in progress (one at a time), and how a check fails it. */
static struct sim *cur;

static void sim_fail(struct sim *s, enum sim_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

#define CHECK(c) do {								\
	if (!(c))								\
		sim_fail(cur, SIM_WRONG, "%s: %s:%d: check failed: %s",		\
			 cur->cs->name, __FILE__, __LINE__, #c);		\
} while (0)
#define FAIL(...) sim_fail(cur, SIM_WRONG, __VA_ARGS__)

enum { M_JOINING, M_RUNNING, M_LEAVING, M_DONE };
enum { K_I32, K_F32_INT, K_F32_RAND };

struct sim_msg {
	uint64_t at;
	uint64_t seq;
	uint64_t src;
	int32_t to;		/* -1: the aggregator, else a member index */
	uint32_t len;
	uint8_t data[];
};

struct sim_op {
	uint8_t kind;
	uint64_t count;
	uint32_t tensor;
};

struct sim_job {
	uint32_t id;
	uint8_t dtype;
	unsigned int nops;
	struct sim_op ops[SIM_MAX_OPS];
	uint64_t chunks;	/* rounds the box must complete */
};

struct sim;

struct member {
	struct sim *sim;
	uint32_t idx;
	unsigned int job;	/* index in sim->jobs */
	uint16_t rank;
	uint64_t addr;
	int state;
	bool dirty;
	uint64_t next_ctrl;
	uint64_t nonce;		/* of its JOIN */
	uint64_t token;		/* the incarnation's, from the JOIN_ACK */
	struct shr_endpoint *ep;
	uint64_t leave_ns;	/* its first LEAVE */
	uint64_t pause_at;	/* fake time a pause starts (UINT64_MAX: none) */
	uint64_t pause_ns;	/* its length */
	uint64_t pause_until;	/* paused until then (0: not yet) */
	int handles[SIM_MAX_OPS];
	void *in[SIM_MAX_OPS];
	void *out[SIM_MAX_OPS];
};

struct sim {
	const struct sim_case *cs;
	uint64_t now;
	uint64_t rng;
	uint64_t seq;
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	uint8_t *txbuf;
	struct sim_msg **heap;
	size_t nheap;
	size_t capheap;
	struct member *m;
	uint64_t *wake;		/* per member: when it has work (0 now, UINT64_MAX never) */
	uint32_t nm;
	uint32_t ndone;
	unsigned int ghosts;
	unsigned int leave_unacked;	/* members that gave up leaving */	/* ghost jobs (a stale JOIN's) aborted by the box */
	struct sim_job jobs[SIM_JOBS];
	uint64_t addrs[SIM_JOBS][SIM_MAX_WORLD];	/* static jobs' member addresses */
	/* phantom: a copy of one DATA held back until its slot's next round completed */
	uint8_t ph_msg[SHR_PROTO_HDR_LEN + 4 * SIM_MAX_CHUNK];
	uint32_t ph_len;
	uint32_t ph_step;
	uint64_t ph_src;
	bool ph_held;
	bool ph_done;
	/* how a run ends early */
	jmp_buf fail_jmp;
	struct sim_msg *inflight;	/* being delivered */
	struct sim_result *res;
	/* counters */
	uint64_t pkts_up, pkts_down, drops, dups, stale_rejects;
};

static void
sim_fail(struct sim *s, enum sim_verdict v, const char *fmt, ...)
{
	va_list ap;

	if (s->res->verdict == SIM_OK) {
		s->res->verdict = v;
		va_start(ap, fmt);
		vsnprintf(s->res->err, sizeof(s->res->err), fmt, ap);
		va_end(ap);
	}
	longjmp(s->fail_jmp, 1);
}

/* ---- PRNG and input values ---- */

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static uint64_t
sim_rand(struct sim *s)
{
	s->rng += 0x9e3779b97f4a7c15ull;
	return mix64(s->rng);
}

static bool
sim_chance(struct sim *s, unsigned int percent)
{
	return percent != 0 && sim_rand(s) % 100 < percent;
}

static uint64_t
val_bits(unsigned int job, unsigned int op, uint16_t rank, uint64_t i)
{
	return mix64(((uint64_t)job << 60) ^ ((uint64_t)op << 48) ^ ((uint64_t)rank << 32) ^
		     i ^ 0x5eed);
}

static int32_t
val_i32(unsigned int job, unsigned int op, uint16_t rank, uint64_t i)
{
	return (int32_t)(uint32_t)val_bits(job, op, rank, i);
}

static float
val_f32(uint8_t kind, unsigned int job, unsigned int op, uint16_t rank, uint64_t i)
{
	uint64_t b = val_bits(job, op, rank, i);

	if (kind == K_F32_INT)
		return (float)((int)(b % 17) - 8);
	return ((float)(b >> 40) / 16777216.0f - 0.5f) * 8.0f;
}

/* ---- the channel ---- */

static bool
msg_before(const struct sim_msg *a, const struct sim_msg *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void
heap_push(struct sim *s, struct sim_msg *msg)
{
	size_t i;

	if (s->nheap == s->capheap) {
		s->capheap = s->capheap ? 2 * s->capheap : 1024;
		s->heap = realloc(s->heap, s->capheap * sizeof(*s->heap));
		CHECK(s->heap != NULL);
	}
	i = s->nheap++;
	while (i > 0 && msg_before(msg, s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = msg;
}

static struct sim_msg *
heap_pop(struct sim *s)
{
	struct sim_msg *top = s->heap[0], *last;
	size_t i = 0;

	last = s->heap[--s->nheap];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && msg_before(s->heap[c + 1], s->heap[c]))
			c++;
		if (!msg_before(s->heap[c], last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap > 0)
		s->heap[i] = last;
	return top;
}

static uint64_t
sim_delay(struct sim *s)
{
	uint64_t us = SIM_DELAY_US;

	if (s->cs->reorder)
		us += sim_rand(s) % (SIM_JITTER_US + 1);
	if (sim_chance(s, s->cs->late))
		us += SIM_LATE_MIN_US + sim_rand(s) % (SIM_LATE_MAX_US - SIM_LATE_MIN_US + 1);
	return us * SIM_US;
}

/* Put one message on the wire: lost, delivered once, or delivered twice. */
static void
sim_wire(struct sim *s, uint64_t src, int32_t to, const void *a, size_t alen, const void *b,
	 size_t blen)
{
	unsigned int copies = 1, k;

	if (to < 0)
		s->pkts_up++;
	else
		s->pkts_down++;
	if (sim_chance(s, s->cs->loss)) {
		s->drops++;
		return;
	}
	if (sim_chance(s, s->cs->dup)) {
		s->dups++;
		copies = 2;
	}
	for (k = 0; k < copies; k++) {
		struct sim_msg *msg = malloc(sizeof(*msg) + alen + blen);

		CHECK(msg != NULL);
		msg->at = s->now + sim_delay(s);
		msg->seq = s->seq++;
		msg->src = src;
		msg->to = to;
		msg->len = (uint32_t)(alen + blen);
		memcpy(msg->data, a, alen);
		if (blen)
			memcpy(msg->data + alen, b, blen);
		heap_push(s, msg);
	}
}

static int
ep_send(void *ctx, const void *hdr, const void *payload, size_t payload_len)
{
	struct member *m = ctx;
	struct sim *s = m->sim;
	const struct shr_proto_hdr *h = hdr;

	if (s->cs->phantom && !s->ph_held && m->job == 0 && m->rank == 0 &&
	    (ntohl(h->slot) & SHR_PROTO_SLOT_MASK) == 0) {
		/* This copy is held back (the original goes on as usual). */
		CHECK(SHR_PROTO_HDR_LEN + payload_len <= sizeof(s->ph_msg));
		memcpy(s->ph_msg, hdr, SHR_PROTO_HDR_LEN);
		memcpy(s->ph_msg + SHR_PROTO_HDR_LEN, payload, payload_len);
		s->ph_len = (uint32_t)(SHR_PROTO_HDR_LEN + payload_len);
		s->ph_step = ntohl(h->step);
		s->ph_src = m->addr;
		s->ph_held = true;
	}
	sim_wire(m->sim, m->addr, -1, hdr, SHR_PROTO_HDR_LEN, payload, payload_len);
	return 0;
}

static uint64_t
ep_now(void *ctx)
{
	return ((struct member *)ctx)->sim->now;
}

static struct member *
member_of(struct sim *s, uint64_t addr)
{
	uint32_t rank = SHR_AGG_ADDR_IP(addr) - SIM_BASE_IP;
	uint32_t job = SHR_AGG_ADDR_PORT(addr) - SIM_BASE_PORT;

	CHECK(rank < s->cs->n && job < SIM_JOBS);
	return &s->m[job * s->cs->n + rank];
}

/* ---- members ---- */

static void
member_ctrl(struct member *m, uint8_t type)
{
	struct sim *s = m->sim;
	const struct sim_job *j = &s->jobs[m->job];
	struct shr_proto_msg msg;
	uint8_t hdr[SHR_PROTO_HDR_LEN];

	memset(&msg, 0, sizeof(msg));
	msg.type = type;
	msg.job = j->id;
	msg.rank = m->rank;
	msg.world = s->cs->n;
	msg.dtype = j->dtype;
	if (type == SHR_MSG_JOIN) {
		msg.slot = s->cs->window;
		msg.count = s->cs->chunk;
		msg.token = m->nonce;
	} else {
		msg.token = m->token;
	}
	shr_proto_build(hdr, &msg, NULL, 0);
	sim_wire(s, m->addr, -1, hdr, sizeof(hdr), NULL, 0);
	m->next_ctrl = s->now + SIM_CTRL_RETRY_NS;
	s->wake[m->idx] = m->next_ctrl;
}

/* The JOIN_ACK is in: make the endpoint with the granted window and queue every op. */
static void
member_start(struct member *m, const struct shr_proto_msg *ack)
{
	struct sim *s = m->sim;
	const struct sim_job *j = &s->jobs[m->job];
	struct shr_endpoint_params p;
	struct shr_endpoint_io io = { .send = ep_send, .now_ns = ep_now, .ctx = m };
	unsigned int o;

	CHECK((ack->aux) == (0));
	CHECK(ack->token != 0);
	m->token = ack->token;
	CHECK((ack->slot) == (s->cs->window));
	CHECK((ack->count) == (s->cs->chunk));
	CHECK((ack->world) == (s->cs->n));
	memset(&p, 0, sizeof(p));
	p.job = j->id;
	p.rank = m->rank;
	p.world = s->cs->n;
	p.dtype = j->dtype;
	p.token = ack->token;
	p.window = ack->slot;
	p.chunk_elems = ack->count;
	m->ep = shr_endpoint_create(&p, &io);
	CHECK(m->ep != NULL);
	for (o = 0; o < j->nops; o++) {
		struct shr_endpoint_op op = {
			.op = SHR_OP_SUM,
			.in = m->in[o],
			.out = m->out[o],
			.count = j->ops[o].count,
			.tensor = j->ops[o].tensor,
		};

		m->handles[o] = shr_endpoint_submit(m->ep, &op);
		CHECK(m->handles[o] >= 0);
	}
	m->state = M_RUNNING;
	m->dirty = true;
	s->wake[m->idx] = 0;
}

static void
member_rx(struct member *m, const uint8_t *buf, size_t len)
{
	struct shr_proto_msg msg;
	int ret;

	CHECK((shr_proto_validate(buf, len, &msg)) == (SHR_PROTO_OK));
	switch (msg.type) {
	case SHR_MSG_JOIN_ACK:
		/* only the answer to its own JOIN; EINPROGRESS: the job is still filling */
		if (m->state == M_JOINING && msg.offset == m->nonce && msg.aux != EINPROGRESS)
			member_start(m, &msg);
		break;
	case SHR_MSG_LEAVE_ACK:
		if (m->state == M_LEAVING) {
			CHECK(msg.aux == 0 || msg.aux == ENOENT);
			m->state = M_DONE;
			m->sim->wake[m->idx] = UINT64_MAX;
			m->sim->ndone++;
		}
		break;
	case SHR_MSG_RESULT:
		if (m->state != M_RUNNING)
			break;
		ret = shr_endpoint_input(m->ep, buf, len);
		if (ret != 0 && ret != -EALREADY)
			FAIL("%s: rank %u job %u: endpoint input %d", m->sim->cs->name,
				 m->rank, m->job, ret);
		m->dirty = true;
		m->sim->wake[m->idx] = 0;
		break;
	case SHR_MSG_ABORT:
		/* Only a ghost job (a stale JOIN after the real job was freed) may abort. */
		if (m->state != M_DONE)
			FAIL("%s: ABORT to rank %u job %u (missing rank %u)",
				 m->sim->cs->name, m->rank, m->job, msg.rank);
		break;
	default:
		FAIL("%s: unexpected type %u to a member", m->sim->cs->name, msg.type);
	}
}

static void
member_poll(struct member *m)
{
	struct sim *s = m->sim;
	int ret;

	if (m->pause_until == 0 && s->now >= m->pause_at) {
		/* Stopped: it neither sends nor reads until then (its timers are late). */
		m->pause_until = s->now + m->pause_ns;
		if (m->state == M_LEAVING)
			m->leave_ns += m->pause_ns;	/* it resends LEAVE for 500 ms awake */
		s->wake[m->idx] = m->pause_until;
		return;
	}
	if (s->now < m->pause_until) {
		s->wake[m->idx] = m->pause_until;
		return;
	}

	switch (m->state) {
	case M_JOINING:
		if (s->now >= m->next_ctrl)
			member_ctrl(m, SHR_MSG_JOIN);
		break;
	case M_RUNNING:
		if (!m->dirty && shr_endpoint_next_deadline(m->ep) > s->now)
			break;
		m->dirty = false;
		ret = shr_endpoint_poll(m->ep);
		if (ret != 0)
			FAIL("%s: rank %u job %u: poll %d", s->cs->name, m->rank, m->job, ret);
		if (shr_endpoint_idle(m->ep)) {
			m->state = M_LEAVING;
			m->leave_ns = s->now;
			member_ctrl(m, SHR_MSG_LEAVE);
		} else {
			s->wake[m->idx] = shr_endpoint_next_deadline(m->ep);
		}
		break;
	case M_LEAVING:
		if (s->now - m->leave_ns >= SIM_LEAVE_WAIT_NS) {
			/* No LEAVE_ACK: it gives up, as shr_comm_destroy() does. */
			m->state = M_DONE;
			s->wake[m->idx] = UINT64_MAX;
			s->ndone++;
			s->leave_unacked++;
		} else if (s->now >= m->next_ctrl) {
			member_ctrl(m, SHR_MSG_LEAVE);
		}
		break;
	default:
		break;
	}
}

/* ---- the aggregator side ---- */

static void
sim_agg_out(struct sim *s)
{
	const struct shr_proto_hdr *h = s->tx.buf;
	uint32_t d;

	if (s->ph_held && !s->ph_done && s->tx.len > 0 && h->type == SHR_MSG_RESULT &&
	    ntohl(h->job) == s->jobs[0].id && (ntohl(h->slot) & SHR_PROTO_SLOT_MASK) == 0 &&
	    (int32_t)(ntohl(h->step) - s->ph_step) > 0) {
		/* The slot's next round has completed: the held copy arrives now. */
		struct sim_msg *msg = malloc(sizeof(*msg) + s->ph_len);

		CHECK(msg != NULL);
		msg->at = s->now + SIM_US;
		msg->seq = s->seq++;
		msg->src = s->ph_src;
		msg->to = -1;
		msg->len = s->ph_len;
		memcpy(msg->data, s->ph_msg, s->ph_len);
		heap_push(s, msg);
		s->ph_done = true;
	}

	for (d = 0; d < s->tx.ndst; d++) {
		struct member *m = member_of(s, s->tx.dst[d]);

		sim_wire(s, 0, (int32_t)m->idx, s->tx.buf, s->tx.len, NULL, 0);
	}
}

/* Deliver a message; false if it waits for a paused member (pushed back, not freed). */
static bool
sim_deliver(struct sim *s, struct sim_msg *msg)
{
	enum shr_proto_reason r;

	if (msg->to >= 0) {
		struct member *m = &s->m[msg->to];

		if (s->now < m->pause_until) {
			msg->at = m->pause_until;
			msg->seq = s->seq++;
			heap_push(s, msg);
			return false;
		}
		member_rx(m, msg->data, msg->len);
		return true;
	}
	r = shr_agg_input(s->agg, msg->src, msg->data, msg->len, s->now, &s->tx, &s->st);
	if (r != SHR_PROTO_OK) {
		/*
		 * Stale copies (duplicated or delayed) of a member that has left: the box
		 * remembers the JOIN nonces of an incarnation that has ended, and a static
		 * job has started its next incarnation by then (another token).
		 */
		const struct member *m = member_of(s, msg->src);
		bool stale = r == SHR_PROTO_UNKNOWN_JOB || r == SHR_PROTO_SPOOFED ||
			     r == SHR_PROTO_STALE_JOIN ||
			     (s->cs->is_static && r == SHR_PROTO_BAD_TOKEN);

		if (m->state < M_LEAVING || !stale)
			FAIL("%s: box refused %s from rank %u job %u (state %d)",
				 s->cs->name, shr_proto_reason_str(r), m->rank, m->job,
				 m->state);
		s->stale_rejects++;
	}
	sim_agg_out(s);
	return true;
}

/* ---- a case ---- */

static void
sim_jobs_init(struct sim *s)
{
	const struct sim_case *cs = s->cs;
	unsigned int j, i;
	uint32_t tensor = 1;

	for (j = 0; j < SIM_JOBS; j++) {
		struct sim_job *job = &s->jobs[j];

		job->id = 1000 + j;
		job->dtype = j == 0 ? SHR_DTYPE_INT32 : SHR_DTYPE_FLOAT32;
		job->nops = 0;
		job->chunks = 0;
		for (i = 0; i < cs->nlens; i++) {
			struct sim_op *op = &job->ops[job->nops++];

			op->kind = j == 0 ? K_I32 : K_F32_INT;
			op->count = cs->lens[i];
			op->tensor = tensor++;
		}
		if (j == 1) {
			/* Fractional inputs: bit-identical at all ranks, close to the sum. */
			struct sim_op *op = &job->ops[job->nops++];

			op->kind = K_F32_RAND;
			op->count = cs->lens[cs->nlens - 1];
			op->tensor = tensor++;
		}
		for (i = 0; i < job->nops; i++)
			job->chunks += (job->ops[i].count + cs->chunk - 1) / cs->chunk;
	}
}

static void
sim_members_init(struct sim *s)
{
	const struct sim_case *cs = s->cs;
	uint32_t i;
	unsigned int o;

	s->nm = SIM_JOBS * cs->n;
	s->m = calloc(s->nm, sizeof(*s->m));
	s->wake = calloc(s->nm, sizeof(*s->wake));
	CHECK(s->m != NULL);
	CHECK(s->wake != NULL);
	for (i = 0; i < s->nm; i++) {
		struct member *m = &s->m[i];
		const struct sim_job *j;

		m->sim = s;
		m->idx = i;
		m->job = i / cs->n;
		m->rank = (uint16_t)(i % cs->n);
		m->addr = SHR_AGG_ADDR(SIM_BASE_IP + m->rank, SIM_BASE_PORT + m->job);
		m->state = M_JOINING;
		m->nonce = (sim_rand(s) << 1) | 1;
		m->next_ctrl = sim_rand(s) % (50 * SIM_US);	/* members start apart */
		s->wake[i] = m->next_ctrl;
		m->pause_at = UINT64_MAX;
		if (sim_chance(s, cs->pause) && cs->pause_max_us > 0) {
			m->pause_at = 1 + sim_rand(s) % SIM_PAUSE_FROM_NS;
			m->pause_ns = (1 + sim_rand(s) % cs->pause_max_us) * SIM_US;
			if (m->pause_at < s->wake[i])
				s->wake[i] = m->pause_at;
		}
		j = &s->jobs[m->job];
		for (o = 0; o < j->nops; o++) {
			uint64_t n = j->ops[o].count, e;

			m->in[o] = malloc(n * 4 + 1);
			m->out[o] = malloc(n * 4 + 1);
			CHECK(m->in[o] != NULL);
			CHECK(m->out[o] != NULL);
			memset(m->out[o], 0xa5, n * 4 + 1);
			for (e = 0; e < n; e++) {
				if (j->ops[o].kind == K_I32) {
					((int32_t *)m->in[o])[e] = val_i32(m->job, o, m->rank, e);
				} else {
					((float *)m->in[o])[e] =
						val_f32(j->ops[o].kind, m->job, o, m->rank, e);
				}
			}
		}
	}
}

/* Every rank's output against the exact expectation. */
static void
sim_check_results(struct sim *s)
{
	const struct sim_case *cs = s->cs;
	unsigned int jn, o;
	uint16_t r;

	for (jn = 0; jn < SIM_JOBS; jn++) {
		const struct sim_job *j = &s->jobs[jn];
		struct member *mm = &s->m[jn * cs->n];

		for (o = 0; o < j->nops; o++) {
			const struct sim_op *op = &j->ops[o];
			uint64_t e;

			for (r = 0; r < cs->n; r++) {
				struct shr_endpoint *ep = mm[r].ep;

				CHECK((shr_endpoint_test(ep, mm[r].handles[o])) == (1));
				/* Nothing written past the end. */
				CHECK((((uint8_t *)mm[r].out[o])[op->count * 4]) == (0xa5));
				if (r > 0)
					CHECK(memcmp(mm[r].out[o], mm[0].out[o],
							    op->count * 4) == 0);
			}
			for (e = 0; e < op->count; e++) {
				if (op->kind == K_I32) {
					uint32_t want = 0;

					for (r = 0; r < cs->n; r++)
						want += (uint32_t)val_i32(jn, o, r, e);
					CHECK((((uint32_t *)mm[0].out[o])[e]) == (want));
				} else if (op->kind == K_F32_INT) {
					int want = 0;
					float got = ((float *)mm[0].out[o])[e];

					for (r = 0; r < cs->n; r++)
						want += (int)val_f32(op->kind, jn, o, r, e);
					if (got != (float)want)
						FAIL("%s: op %u elem %llu: %g != %d", cs->name,
							 o, (unsigned long long)e, got, want);
				} else {
					double want = 0;
					float got = ((float *)mm[0].out[o])[e];

					for (r = 0; r < cs->n; r++)
						want += val_f32(op->kind, jn, o, r, e);
					if (fabs(got - want) > 1e-4 * cs->n * 4)
						FAIL("%s: op %u elem %llu: %g vs %g", cs->name,
							 o, (unsigned long long)e, got, want);
				}
			}
		}
	}
}

/* The jobs of a static case, configured before anyone joins (ordered, as the box does). */
static void
sim_static_jobs(struct sim *s)
{
	const struct sim_case *cs = s->cs;
	unsigned int j;
	uint16_t r;

	for (j = 0; j < SIM_JOBS; j++) {
		struct shr_agg_job_conf conf = {
			.job = s->jobs[j].id,
			.world = cs->n,
			.dtype = s->jobs[j].dtype,
			.window = cs->window,
			.chunk_elems = cs->chunk,
			.ordered = 1,
		};

		for (r = 0; r < cs->n; r++)
			s->addrs[j][r] = SHR_AGG_ADDR(SIM_BASE_IP + r, SIM_BASE_PORT + j);
		if (cs->is_static == 1)
			conf.addrs = s->addrs[j];
		CHECK(shr_agg_job_add(s->agg, &conf) == 0);
	}
}

/* Pop and deliver what is due (everything, if all); then the box's timers. */
static void
sim_drain(struct sim *s, bool all)
{
	while (s->nheap > 0 && (all || s->heap[0]->at <= s->now)) {
		struct sim_msg *msg = heap_pop(s);

		if (all && msg->at > s->now)
			s->now = msg->at;
		s->inflight = msg;	/* freed by sim_free() if the run fails in there */
		if (sim_deliver(s, msg))
			free(msg);
		s->inflight = NULL;
	}
}

static void
sim_body(struct sim *s, const struct shr_agg_params *ap)
{
	const struct sim_case *cs = s->cs;
	uint64_t retx = 0, tx_data = 0, results = 0, ops = 0, want_ops = 0;
	uint64_t fast = 0, timeouts = 0, spurious = 0, rto_max = 0;
	unsigned int spins = 0, j;
	uint32_t i;

	sim_jobs_init(s);
	if (cs->is_static)
		sim_static_jobs(s);
	sim_members_init(s);

	for (;;) {
		uint64_t next = UINT64_MAX;

		for (i = 0; i < s->nm; i++)
			if (s->wake[i] <= s->now)
				member_poll(&s->m[i]);
		sim_drain(s, false);
		while (shr_agg_tick(s->agg, s->now, &s->tx, &s->st) != 0) {
			s->ghosts++;	/* member_rx() fails unless all its members are done */
			sim_agg_out(s);
		}
		if (s->ndone == s->nm)
			break;
		for (i = 0; i < s->nm; i++)
			if (s->wake[i] < next)
				next = s->wake[i];
		if (next == 0) {
			/* Results came in: let the endpoints send at once. */
			if (++spins > 1000)
				FAIL("%s: an endpoint asks for work that poll never does",
				     cs->name);
			continue;
		}
		spins = 0;
		if (s->nheap > 0 && s->heap[0]->at < next)
			next = s->heap[0]->at;
		if (next <= s->now)
			next = s->now + 1;
		/* 1 us grid: messages sent together arrive together. */
		s->now = (next + SIM_US - 1) / SIM_US * SIM_US;
		if (s->now > SIM_FAKE_LIMIT_NS) {
			unsigned int st[M_DONE + 1] = { 0 };

			for (i = 0; i < s->nm; i++)
				st[s->m[i].state]++;
			sim_fail(s, SIM_HANG, "%s: no progress after %llu ns of fake time "
				 "(members joining %u running %u leaving %u done %u)", cs->name,
				 (unsigned long long)s->now, st[M_JOINING], st[M_RUNNING],
				 st[M_LEAVING], st[M_DONE]);
		}
	}

	/* Deliver what is still on the wire, then let stale JOINs' ghost jobs time out. */
	sim_drain(s, true);
	for (i = 0; i < SIM_JOBS * 4; i++) {
		/* A member that gave up leaving is still bound: the box reclaims the job idle. */
		uint64_t later = s->leave_unacked ? ap->idle_ns + ap->job_timeout_ns :
				 3 * ap->job_timeout_ns;

		if (shr_agg_tick(s->agg, s->now + later, &s->tx, &s->st) == 0)
			break;
		s->ghosts++;
		sim_agg_out(s);
		sim_drain(s, true);
	}
	if (cs->is_static) {
		/* Reset for the next run (all have left): taken out, their slots come back. */
		for (j = 0; j < SIM_JOBS; j++)
			CHECK(shr_agg_job_del(s->agg, s->jobs[j].id) == 0);
	}
	if (shr_agg_slots_used(s->agg) != 0)
		FAIL("%s: %u slots still used at the end (%u member(s) gave up leaving)", cs->name,
		     shr_agg_slots_used(s->agg), s->leave_unacked);
	for (i = 0; i < ap->max_jobs; i++) {
		struct shr_agg_job_info info;

		CHECK(shr_agg_job_info(s->agg, i, &info) == 0);
	}

	sim_check_results(s);
	/* Every round completed exactly once at the box. */
	CHECK(s->st.completed == s->jobs[0].chunks + s->jobs[1].chunks);
	CHECK(s->st.rejects[SHR_PROTO_OUT_OF_STEP] == 0);
	CHECK(s->st.rejects[SHR_PROTO_BAD_CRC] == 0);
	if (!cs->is_static)
		CHECK(s->st.jobs_freed == SIM_JOBS + s->ghosts - s->st.idle_reclaims);
	CHECK(s->st.aborts == s->ghosts);
	for (i = 0; i < s->nm; i++) {
		struct shr_endpoint_stats es;

		shr_endpoint_stats_get(s->m[i].ep, &es);
		retx += es.tx_retx;
		fast += es.tx_fast;
		timeouts += es.timeouts;
		spurious += es.spurious;
		if (es.rto_ns << es.backoff > rto_max)
			rto_max = es.rto_ns << es.backoff;
		tx_data += es.tx_data;
		results += es.rx_results;
		ops += es.ops_done;
		want_ops += s->jobs[s->m[i].job].nops;
		CHECK(es.tx_data == s->jobs[s->m[i].job].chunks);
		CHECK(es.rx_results == s->jobs[s->m[i].job].chunks);
	}
	CHECK(ops == want_ops);
	if (cs->loss == 0 && cs->dup == 0 && cs->late == 0 && cs->pause == 0 && !cs->phantom &&
	    !cs->reorder)
		CHECK(retx == 0);

	if (!cs->quiet) {
#define ULL(x) ((unsigned long long)(x))
		printf("[ sim ] %-28s pkts up %7llu down %7llu drop %6llu dup %5llu | data %6llu "
		       "retx %7llu (fast %6llu spur %5llu) timeouts %6llu rto<=%6.0f us | resent "
		       "%5llu dupdrop %6llu stale %3llu late %3llu ghost %u | fake %7.1f ms\n",
		       cs->name, ULL(s->pkts_up), ULL(s->pkts_down), ULL(s->drops), ULL(s->dups),
		       ULL(tx_data), ULL(retx), ULL(fast), ULL(spurious), ULL(timeouts),
		       (double)rto_max / 1e3, ULL(s->st.resent), ULL(s->st.duplicates),
		       ULL(s->st.stale), ULL(s->stale_rejects), s->ghosts, (double)s->now / 1e6);
#undef ULL
		fflush(stdout);
	}
}

static void
sim_free(struct sim *s)
{
	uint32_t i;

	for (i = 0; i < s->nm; i++) {
		unsigned int o;

		shr_endpoint_free(s->m[i].ep);
		for (o = 0; o < s->jobs[s->m[i].job].nops; o++) {
			free(s->m[i].in[o]);
			free(s->m[i].out[o]);
		}
	}
	while (s->nheap > 0)
		free(heap_pop(s));
	free(s->inflight);
	free(s->m);
	free(s->wake);
	free(s->heap);
	free(s->txbuf);
	shr_agg_free(s->agg);
	free(s);
}

int
sim_run(const struct sim_case *cs, struct sim_result *res)
{
	struct shr_agg_params ap = {
		.nslots = 64,
		.max_elems = SIM_MAX_CHUNK,
		.max_world = SIM_MAX_WORLD,
		.max_jobs = 8,
		.max_window = 16,
		.lanes = 1,
		.job_timeout_ns = (cs->job_timeout_ms ? cs->job_timeout_ms : 2000) * 1000000ull,
		.idle_ns = 60000000000ull,	/* the box's default */
	};
	struct sim *s;

	memset(res, 0, sizeof(*res));
	if (cs->n == 0 || cs->n > SIM_MAX_WORLD || cs->chunk > SIM_MAX_CHUNK) {
		res->verdict = SIM_WRONG;
		snprintf(res->err, sizeof(res->err), "%s: bad case", cs->name);
		return res->verdict;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		res->verdict = SIM_WRONG;
		snprintf(res->err, sizeof(res->err), "%s: out of memory", cs->name);
		return res->verdict;
	}
	s->cs = cs;
	s->res = res;
	s->rng = cs->seed != 0 ? mix64(cs->seed) :
		 mix64(cs->n * 1000003ull + cs->loss * 101ull + cs->dup * 7ull + cs->reorder);
	s->now = 1;
	cur = s;
	if (setjmp(s->fail_jmp) == 0) {
		s->agg = shr_agg_create(&ap);
		CHECK(s->agg != NULL);
		s->txbuf = malloc(shr_agg_tx_cap(s->agg));
		CHECK(s->txbuf != NULL);
		s->tx.buf = s->txbuf;
		s->tx.cap = shr_agg_tx_cap(s->agg);
		sim_body(s, &ap);
	}
	res->fake_ns = s->now;
	res->stale = s->st.stale;
	res->injected = s->ph_done;
	res->leave_unacked = s->leave_unacked;
	cur = NULL;
	sim_free(s);
	return res->verdict;
}
