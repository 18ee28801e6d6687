/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The members of the simulation of sim_engine.h (lib/endpoint, JOIN/LEAVE, what they
 * receive), the jobs and their inputs, the box's output and the check of every result.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "sim_priv.h"

/* Element i of op's input at rank (of job), in its process gen (other data after a restart). */
static uint64_t
val_bits(unsigned int job, unsigned int op, uint16_t rank, uint32_t gen, uint64_t i)
{
	return sim_mix64(((uint64_t)job << 60) ^ ((uint64_t)op << 48) ^ ((uint64_t)rank << 32) ^
		     i ^ 0x5eed ^ (gen * 0x9e3779b97f4a7c15ull));
}

static int32_t
val_i32(unsigned int job, unsigned int op, uint16_t rank, uint32_t gen, uint64_t i)
{
	return (int32_t)(uint32_t)val_bits(job, op, rank, gen, i);
}

static float
val_f32(uint8_t kind, unsigned int job, unsigned int op, uint16_t rank, uint32_t gen,
	uint64_t i)
{
	uint64_t b = val_bits(job, op, rank, gen, i);

	if (kind == K_F32_INT)
		return (float)((int)(b % 17) - 8);
	return ((float)(b >> 40) / 16777216.0f - 0.5f) * 8.0f;
}

static int
ep_send(void *ctx, const void *hdr, const void *payload, size_t payload_len)
{
	struct member *m = ctx;
	struct sim *s = m->sim;
	const struct shr_proto_hdr *h = hdr;

	if (!sim_restart_send(m, h, payload, payload_len))
		return 0;	/* crashed, or held back */
	if (s->cs->phantom && !s->ph_held && m->job == 0 && m->rank == 0 &&
	    (ntohl(h->slot) & SHR_PROTO_SLOT_MASK) == 0) {
		/* This copy is held back (the original goes on as usual). */
		CHECK(SHR_PROTO_HDR_LEN + payload_len <= sizeof(s->ph_msg));
		memcpy(s->ph_msg, hdr, SHR_PROTO_HDR_LEN);
		memcpy(s->ph_msg + SHR_PROTO_HDR_LEN, payload, payload_len);
		s->ph_len = (uint32_t)(SHR_PROTO_HDR_LEN + payload_len);
		s->ph_step = ntohl(h->step);
		s->ph_src = m->addr;
		s->ph_gen = m->gen;
		s->ph_held = true;
	}
	sim_wire(m->sim, m->addr, -1, m->gen, hdr, SHR_PROTO_HDR_LEN, payload, payload_len);
	return 0;
}

static uint64_t
ep_now(void *ctx)
{
	return ((struct member *)ctx)->sim->now;
}

struct member *
sim_member_of(struct sim *s, uint64_t addr)
{
	uint32_t rank = SHR_AGG_ADDR_IP(addr) - SIM_BASE_IP;
	uint32_t job = SHR_AGG_ADDR_PORT(addr) - SIM_BASE_PORT;

	CHECK(rank < s->cs->n && job < SIM_JOBS);
	return &s->m[job * s->cs->n + rank];
}

/* ---- members ---- */

/* m's JOIN (token: a nonce) or LEAVE (token: an incarnation's), in hdr. */
void
sim_ctrl_build(const struct member *m, uint8_t type, uint64_t token, void *hdr)
{
	const struct sim *s = m->sim;
	const struct sim_job *j = &s->jobs[m->job];
	struct shr_proto_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.type = type;
	msg.job = j->id;
	msg.rank = m->rank;
	msg.world = s->cs->n;
	msg.dtype = j->dtype;
	if (type == SHR_MSG_JOIN) {
		msg.slot = s->cs->window;
		msg.count = s->cs->chunk;
	}
	msg.token = token;
	shr_proto_build(hdr, &msg, NULL, 0);
}

static void
member_ctrl(struct member *m, uint8_t type)
{
	struct sim *s = m->sim;
	uint8_t hdr[SHR_PROTO_HDR_LEN];

	sim_ctrl_build(m, type, type == SHR_MSG_JOIN ? m->nonce : m->token, hdr);
	sim_wire(s, m->addr, -1, m->gen, hdr, sizeof(hdr), NULL, 0);
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
	p.inflight = s->cs->inflight;
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
			.step = o,	/* op o: step o (sim_restart.c, the phantom) */
		};

		m->handles[o] = shr_endpoint_submit(m->ep, &op);
		CHECK(m->handles[o] >= 0);
	}
	m->state = M_RUNNING;
	m->dirty = true;
	s->wake[m->idx] = 0;
	sim_restart_started(m);
}

void
sim_member_rx(struct member *m, const uint8_t *buf, size_t len)
{
	struct sim *s = m->sim;
	struct shr_proto_msg msg;
	bool own;
	int ret;

	CHECK((shr_proto_validate(buf, len, &msg)) == (SHR_PROTO_OK));
	switch (msg.type) {
	case SHR_MSG_JOIN_ACK:
		/* only the answer to its own JOIN; EINPROGRESS: the job is still filling */
		if (m->state == M_JOINING && msg.offset == m->nonce && msg.aux != EINPROGRESS)
			member_start(m, &msg);
		break;
	case SHR_MSG_LEAVE_ACK:
		if (m->state == M_LEAVING && msg.token == m->token) {
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
		if (msg.token != m->token) {
			/* Another incarnation's (a late copy to a restarted process). */
			s->foreign++;
			if (ret != -EINVAL)
				FAIL("%s: rank %u job %u (process %u): a RESULT of another "
				     "incarnation taken (%d)", s->cs->name, m->rank, m->job,
				     m->gen, ret);
			break;
		}
		if (ret != 0 && ret != -EALREADY)
			FAIL("%s: rank %u job %u: endpoint input %d", m->sim->cs->name,
				 m->rank, m->job, ret);
		m->dirty = true;
		m->sim->wake[m->idx] = 0;
		sim_restart_check(m);
		break;
	case SHR_MSG_ABORT:
		/* Its own incarnation's, or the answer to its JOIN (as lib/comm takes them). */
		own = (m->token != 0 && msg.token == m->token) ||
		      (m->state == M_JOINING && msg.offset == m->nonce);
		if (!own) {
			s->foreign++;
			if (m->state == M_RUNNING &&
			    (ret = shr_endpoint_input(m->ep, buf, len)) != -EINVAL)
				FAIL("%s: rank %u job %u (process %u): an ABORT of another "
				     "incarnation taken (%d)", s->cs->name, m->rank, m->job,
				     m->gen, ret);
			break;
		}
		if (sim_restart_abort(m, &msg))
			break;	/* the old incarnation's: its process ends, a new one starts */
		/* Only a ghost job (a stale JOIN after the real job was freed) may abort. */
		if (m->state != M_DONE)
			FAIL("%s: ABORT to rank %u job %u process %u (missing rank %u, %u)",
				 m->sim->cs->name, m->rank, m->job, m->gen, msg.rank, msg.aux);
		break;
	default:
		FAIL("%s: unexpected type %u to a member", m->sim->cs->name, msg.type);
	}
}

void
sim_member_poll(struct member *m)
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
	case M_DEAD:
		/* Its new process, when due, JOINs at once. */
		sim_restart_revive(m);
		if (m->state != M_JOINING)
			break;
		/* fall through */
	case M_JOINING:
		if (s->now >= m->next_ctrl)
			member_ctrl(m, SHR_MSG_JOIN);
		break;
	case M_RUNNING:
		if (!m->dirty && shr_endpoint_next_deadline(m->ep) > s->now)
			break;
		m->dirty = false;
		ret = shr_endpoint_poll(m->ep);
		if (m->crashing) {
			sim_restart_check(m);
			break;
		}
		if (ret != 0 && sim_restart_failed(m))
			break;	/* of the old incarnation: its process ends */
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

void
sim_agg_out(struct sim *s)
{
	const struct shr_proto_hdr *h = s->tx.buf;
	uint32_t d;

	if (s->ph_held && !s->ph_done && s->tx.len > 0 && h->type == SHR_MSG_RESULT &&
	    ntohl(h->job) == s->jobs[0].id && (ntohl(h->slot) & SHR_PROTO_SLOT_MASK) == 0 &&
	    (int32_t)(ntohl(h->step) - s->ph_step) > 0) {
		/* The slot's next round has completed: the held copy arrives now. */
		sim_push(s, s->now + SIM_US, s->ph_src, -1, s->ph_gen, s->ph_msg, s->ph_len);
		s->ph_done = true;
	}
	sim_restart_out(s);

	for (d = 0; d < s->tx.ndst; d++) {
		struct member *m;

		if (d == s->tx.skip)
			continue;
		m = sim_member_of(s, s->tx.dst[d]);
		sim_wire(s, 0, (int32_t)m->idx, 0, s->tx.buf, s->tx.len, NULL, 0);
	}
	for (d = 0; s->tx.len > 0 && d < s->tx.ack_ndst; d++) {
		struct member *m;

		if (d == s->tx.ack_skip)
			continue;
		m = sim_member_of(s, s->tx.ack_dst[d]);
		sim_wire(s, 0, (int32_t)m->idx, 0, s->tx.ack, s->tx.ack_len, NULL, 0);
	}
}


/* ---- a case ---- */

void
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

void
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
			uint64_t n = j->ops[o].count;

			m->in[o] = malloc(n * 4 + 1);
			m->out[o] = malloc(n * 4 + 1);
			CHECK(m->in[o] != NULL);
			CHECK(m->out[o] != NULL);
		}
		sim_member_inputs(m);
	}
}

/* m's inputs (those of its process), and its outputs filled with a pattern. */
void
sim_member_inputs(struct member *m)
{
	const struct sim_job *j = &m->sim->jobs[m->job];
	unsigned int o;

	for (o = 0; o < j->nops; o++) {
		uint64_t n = j->ops[o].count, e;

		memset(m->out[o], 0xa5, n * 4 + 1);
		for (e = 0; e < n; e++) {
			if (j->ops[o].kind == K_I32)
				((int32_t *)m->in[o])[e] = val_i32(m->job, o, m->rank, m->gen, e);
			else
				((float *)m->in[o])[e] = val_f32(j->ops[o].kind, m->job, o,
								 m->rank, m->gen, e);
		}
	}
}

/* Every rank's output against the exact expectation. */
void
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
						want += (uint32_t)val_i32(jn, o, r, mm[r].gen,
									  e);
					CHECK((((uint32_t *)mm[0].out[o])[e]) == (want));
				} else if (op->kind == K_F32_INT) {
					int want = 0;
					float got = ((float *)mm[0].out[o])[e];

					for (r = 0; r < cs->n; r++)
						want += (int)val_f32(op->kind, jn, o, r,
								     mm[r].gen, e);
					if (got != (float)want)
						FAIL("%s: op %u elem %llu: %g != %d", cs->name,
							 o, (unsigned long long)e, got, want);
				} else {
					double want = 0;
					float got = ((float *)mm[0].out[o])[e];

					for (r = 0; r < cs->n; r++)
						want += val_f32(op->kind, jn, o, r, mm[r].gen, e);
					if (fabs(got - want) > 1e-4 * cs->n * 4)
						FAIL("%s: op %u elem %llu: %g vs %g", cs->name,
							 o, (unsigned long long)e, got, want);
				}
			}
		}
	}
}

/* The jobs of a static case, configured before anyone joins (ordered, as the box does). */
void
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

