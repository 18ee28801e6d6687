/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Restarts in the simulation of sim_engine.h (sim_case::restart, issue 14): a member's
 * process crashes partway through an allreduce and starts again on the same address with a
 * new nonce and new inputs; the processes of the old incarnation that the box aborts start
 * again the same way; copies of the old processes' messages are kept and delivered to the
 * new run at the moments they could do harm.
 */

#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "sim_priv.h"

static struct sim_blob *
blob_new(const void *a, size_t alen, const void *b, size_t blen)
{
	struct sim_blob *bl = malloc(sizeof(*bl) + alen + blen);

	CHECK(bl != NULL);
	bl->len = (uint32_t)(alen + blen);
	memcpy(bl->data, a, alen);
	if (blen)
		memcpy(bl->data + alen, b, blen);
	return bl;
}

static uint64_t
hdr_token(const void *msg)
{
	return be64toh(((const struct shr_proto_hdr *)msg)->token);
}

/* Job-wide index of the chunk a DATA or RESULT header is about (UINT64_MAX: none). */
static uint64_t
hdr_chunk(const struct sim *s, unsigned int jn, const struct shr_proto_hdr *h)
{
	uint32_t op = ntohl(h->step);	/* the members' op o has step o */
	uint64_t off = be64toh(h->offset);

	if (op >= s->jobs[jn].nops || off < s->rs[jn].ebase[op])
		return UINT64_MAX;
	return s->rs[jn].base[op] + (off - s->rs[jn].ebase[op]) / s->cs->chunk;
}

static unsigned int
ops_done(const struct member *m)
{
	struct shr_endpoint_stats es;

	shr_endpoint_stats_get(m->ep, &es);
	return (unsigned int)es.ops_done;
}

/* Whether m is the process that is to crash. */
static bool
crasher(const struct member *m)
{
	const struct sim_rs *rs = &m->sim->rs[m->job];

	return m->sim->cs->restart && m->gen == 0 && !rs->crashed && m->rank == rs->rank;
}

void
sim_restart_init(struct sim *s)
{
	const struct sim_case *cs = s->cs;
	unsigned int jn, o;

	CHECK(cs->n <= 64);	/* result_done is a mask of ranks */
	CHECK(cs->restart_after < SIM_MAX_OPS);
	for (jn = 0; jn < SIM_JOBS; jn++) {
		const struct sim_job *j = &s->jobs[jn];
		struct sim_rs *rs = &s->rs[jn];
		uint64_t in_op;

		rs->base[0] = 0;
		rs->ebase[0] = 0;
		for (o = 0; o < j->nops; o++) {
			rs->base[o + 1] = rs->base[o] +
					  (j->ops[o].count + cs->chunk - 1) / cs->chunk;
			rs->ebase[o + 1] = rs->ebase[o] + j->ops[o].count;
		}
		rs->rank = (uint16_t)((cs->restart_rank + jn) % cs->n);
		/* Partway through op k: after 0 to all but one of its chunks were sent. */
		CHECK(cs->restart_after < j->nops);
		in_op = rs->base[cs->restart_after + 1] - rs->base[cs->restart_after];
		CHECK(in_op > 0);
		rs->at_chunk = rs->base[cs->restart_after] + sim_rand(s) % in_op;
	}
}

/* m's process ends (crashed or aborted); a new one starts restart_us later at most. */
static void
member_exit(struct member *m)
{
	struct sim *s = m->sim;
	uint64_t us = s->cs->restart_us ? s->cs->restart_us : SIM_RESTART_US;

	shr_endpoint_free(m->ep);
	m->ep = NULL;
	m->old_nonce = m->nonce;
	m->old_token = m->token;
	m->token = 0;
	m->crashing = false;
	m->state = M_DEAD;
	m->restart_at = s->now + (sim_rand(s) % (us + 1)) * SIM_US;
	s->wake[m->idx] = m->restart_at;
}

/*
 * m's endpoint sends a DATA: keep the first copy of an old process's chunk; before the new
 * process's chunk, the old copy of the same chunk (to the box) and the old RESULT of it (to
 * the new process: it arrives while the chunk is outstanding). Returns false if the DATA is
 * not sent: the process has crashed (nothing more is sent), or holds back the job's last
 * chunk until its crash.
 */
bool
sim_restart_send(struct member *m, const struct shr_proto_hdr *h, const void *payload,
		 size_t payload_len)
{
	struct sim *s = m->sim;
	struct sim_rs *rs = &s->rs[m->job];
	uint64_t g = hdr_chunk(s, m->job, h);

	if (!s->cs->restart)
		return true;
	if (m->crashing)
		return false;
	if (crasher(m) && g != UINT64_MAX && g + 1 == rs->base[s->jobs[m->job].nops] &&
	    ops_done(m) < s->cs->restart_after) {
		/*
		 * The job's last chunk never leaves the old process (the job cannot end without
		 * the restart), and it is not yet op k's turn to crash (a chunk of an earlier op
		 * is still being recovered while the other slots ran ahead): held back, as if
		 * lost, until op k is done (sim_restart_check() crashes it then).
		 */
		return false;
	}
	if (crasher(m) && g != UINT64_MAX &&
	    ((g >= rs->at_chunk && ops_done(m) >= s->cs->restart_after) ||
	     g + 1 == rs->base[s->jobs[m->job].nops])) {
		/* Dies before it sends this chunk (never the job's last: the job cannot end). */
		m->crashing = true;
		return false;
	}
	if (g == UINT64_MAX)
		return true;
	if (g + 1 > m->sent_next)
		m->sent_next = g + 1;
	if (g >= SIM_STASH || m->rank >= 64)
		return true;
	if (m->gen == 0) {
		if (m->rank < SIM_STASH_RANKS && rs->data[g][m->rank] == NULL)
			rs->data[g][m->rank] = blob_new(h, SHR_PROTO_HDR_LEN, payload, payload_len);
		return true;
	}
	if (m->rank < SIM_STASH_RANKS && rs->data[g][m->rank] != NULL &&
	    !(rs->data_done[g] & (1u << m->rank))) {
		const struct sim_blob *bl = rs->data[g][m->rank];

		rs->data_done[g] |= (uint8_t)(1u << m->rank);
		sim_push(s, s->now + SIM_US, m->addr, -1, m->gen - 1, bl->data, bl->len);
		s->replays++;
	}
	if (rs->result[g] != NULL && hdr_token(rs->result[g]->data) != m->token &&
	    !(rs->result_done[g] & (1ull << m->rank))) {
		const struct sim_blob *bl = rs->result[g];

		rs->result_done[g] |= 1ull << m->rank;
		sim_push(s, s->now + SIM_US, 0, (int32_t)m->idx, 0, bl->data, bl->len);
		s->replays++;
	}
	return true;
}

/* After a RESULT or a poll: the crashing process dies now if it is due. */
void
sim_restart_check(struct member *m)
{
	struct sim *s = m->sim;
	struct sim_rs *rs = &s->rs[m->job];

	if (!crasher(m) || m->state != M_RUNNING)
		return;
	if (!m->crashing && !(m->sent_next > rs->at_chunk &&
			      ops_done(m) >= s->cs->restart_after))
		return;
	rs->crash_ops = ops_done(m);
	rs->old_token = m->token;
	rs->crashed = true;
	s->restarts++;
	member_exit(m);
}

/*
 * An ABORT for m's own incarnation: if that is the old one (its member crashed), the process
 * exits and restarts (true); otherwise the caller judges it.
 */
bool
sim_restart_abort(struct member *m, const struct shr_proto_msg *abort)
{
	const struct sim_rs *rs = &m->sim->rs[m->job];

	if (!m->sim->cs->restart || !rs->crashed || m->gen != 0 || abort->token != rs->old_token)
		return false;
	m->sim->restarts++;
	member_exit(m);
	return true;
}

/* m's endpoint failed (no results): a process of the old incarnation restarts (true). */
bool
sim_restart_failed(struct member *m)
{
	const struct sim_rs *rs = &m->sim->rs[m->job];

	if (!m->sim->cs->restart || !rs->crashed || m->gen != 0 || m->token != rs->old_token)
		return false;
	m->sim->restarts++;
	member_exit(m);
	return true;
}

/* A new process of m runs: the old process's JOIN and LEAVE, and the old ABORT, come in. */
void
sim_restart_started(struct member *m)
{
	struct sim *s = m->sim;
	const struct sim_rs *rs = &s->rs[m->job];
	uint8_t hdr[SHR_PROTO_HDR_LEN];

	if (!s->cs->restart || m->gen == 0 || m->replayed)
		return;
	m->replayed = true;
	if (m->old_nonce != 0) {
		sim_ctrl_build(m, SHR_MSG_JOIN, m->old_nonce, hdr);
		sim_push(s, s->now + SIM_US, m->addr, -1, m->gen - 1, hdr, sizeof(hdr));
		s->replays++;
	}
	if (m->old_token != 0) {
		sim_ctrl_build(m, SHR_MSG_LEAVE, m->old_token, hdr);
		sim_push(s, s->now + 2 * SIM_US, m->addr, -1, m->gen - 1, hdr, sizeof(hdr));
		s->replays++;
	}
	if (rs->have_abort && hdr_token(rs->abort_msg) != m->token) {
		sim_push(s, s->now + 3 * SIM_US, 0, (int32_t)m->idx, 0, rs->abort_msg,
			 sizeof(rs->abort_msg));
		s->replays++;
	}
}

/* M_DEAD: a new process, once due: new nonce, new inputs, JOIN at once. */
void
sim_restart_revive(struct member *m)
{
	struct sim *s = m->sim;

	if (s->now < m->restart_at) {
		s->wake[m->idx] = m->restart_at;
		return;
	}
	m->gen++;
	m->nonce = (sim_rand(s) << 1) | 1;
	m->sent_next = 0;
	m->replayed = false;
	sim_member_inputs(m);
	m->state = M_JOINING;
	m->next_ctrl = s->now;
	s->wake[m->idx] = s->now;
}

/* The box sends s->tx: keep the first RESULT of each chunk and the job's first ABORT. */
void
sim_restart_out(struct sim *s)
{
	const struct shr_proto_hdr *h = s->tx.buf;
	uint32_t jn;
	uint64_t g;

	if (!s->cs->restart || s->tx.len < SHR_PROTO_HDR_LEN || s->tx.ndst == 0)
		return;
	jn = ntohl(h->job) - s->jobs[0].id;
	if (jn >= SIM_JOBS)
		return;
	if (h->type == SHR_MSG_ABORT && !s->rs[jn].have_abort) {
		memcpy(s->rs[jn].abort_msg, s->tx.buf, SHR_PROTO_HDR_LEN);
		s->rs[jn].have_abort = true;
	} else if (h->type == SHR_MSG_RESULT) {
		g = hdr_chunk(s, jn, h);
		if (g < SIM_STASH && s->rs[jn].result[g] == NULL)
			s->rs[jn].result[g] = blob_new(s->tx.buf, s->tx.len, NULL, 0);
	}
}

/*
 * Whether a message to the box comes from a process that has ended, or from the old
 * incarnation (its token, or a JOIN of a process that predates the crash): the box may
 * refuse those.
 */
bool
sim_restart_old(const struct sim *s, const struct sim_msg *msg, const struct member *m)
{
	const struct sim_rs *rs = &s->rs[m->job];
	const struct shr_proto_hdr *h = (const void *)msg->data;

	if (!s->cs->restart)
		return false;
	if (msg->gen < m->gen)
		return true;
	if (!rs->crashed || msg->gen != 0 || msg->len < SHR_PROTO_HDR_LEN)
		return false;
	return h->type == SHR_MSG_JOIN || hdr_token(h) == rs->old_token;
}

/* At the end: each job restarted, and its members all hold the new incarnation's token. */
void
sim_restart_end(struct sim *s)
{
	const struct sim_case *cs = s->cs;
	unsigned int jn;
	uint16_t r;

	if (!cs->restart) {
		CHECK(s->st.incarnations == 0);
		return;
	}
	CHECK(s->st.incarnations <= SIM_JOBS);
	for (jn = 0; jn < SIM_JOBS; jn++) {
		const struct member *mm = &s->m[jn * cs->n];

		CHECK(s->rs[jn].crashed);
		CHECK(mm[s->rs[jn].rank].gen == 1);
		for (r = 0; r < cs->n; r++) {
			CHECK(mm[r].token == mm[0].token);
			CHECK(mm[r].token != s->rs[jn].old_token);
			/*
			 * Every process of the old incarnation was replaced. Only a static job
			 * with fixed addresses may keep a first process: one that had not
			 * joined before the crash (the job is active without it).
			 */
			CHECK(mm[r].gen == 1 || cs->is_static == 1);
		}
		s->res->crash_ops[jn] = s->rs[jn].crash_ops;
	}
}

void
sim_restart_free(struct sim *s)
{
	unsigned int jn, g, r;

	for (jn = 0; jn < SIM_JOBS; jn++) {
		for (g = 0; g < SIM_STASH; g++) {
			free(s->rs[jn].result[g]);
			for (r = 0; r < SIM_STASH_RANKS; r++)
				free(s->rs[jn].data[g][r]);
		}
	}
}
