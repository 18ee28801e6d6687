/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Trees of boxes (shr_agg.h, "Trees"): a box with an upstream box is one member of each of
 * its jobs there. This file holds that membership: the JOIN upstream, each completed round's
 * DATA up and its RESULT down, the upstream's ABORT, the LEAVE when a job ends, and the
 * bounds on waiting for the upstream. The box runs one lane (shr_agg_create() checks), so
 * the data path's calls here and the control path's never run at once.
 */

#include <errno.h>
#include <string.h>

#include "shr_agg_private.h"

#define AGG_UP_JOIN_WAIT SHR_AGG_JOIN_WAIT	/* job timeouts to be admitted upstream */
#define AGG_UP_RTO_INIT_NS 1000000ull	/* before a round trip was measured */
#define AGG_UP_RTO_MIN_NS 100000ull
#define AGG_UP_RTO_DIV 16u		/* the RTO stays below job timeout / this */
#define AGG_UP_BACKOFF_MAX 4u
#define AGG_UP_WAIT_DIV 2u	/* a round waits upstream job timeout x (1 + 1 / this): longer
				 * than the upstream's own bound on a round, so that its ABORT,
				 * naming whoever held the round up, comes first (and, if lost,
				 * again in answer to this box's resends) */
#define AGG_UP_RTO_MAX_DIV 8u	/* with backoff, resent at least every job timeout / this */

int
agg_up_check(const struct shr_agg_params *p)
{
	if (p->upstream == 0)
		return 0;
	if (p->lanes > 1 || p->up_world == 0 || p->up_world > SHR_PROTO_MAX_WORLD ||
	    p->up_rank >= p->up_world)
		return -EINVAL;
	return 0;
}

/* Where a DATA of slot goes upstream: the upstream's lane of the slot. */
static inline uint64_t
agg_up_dst(const struct shr_agg *agg, const struct agg_job *j, uint32_t slot)
{
	uint16_t lanes = j->up.lanes != 0 ? j->up.lanes : 1;

	return agg->p.upstream + slot % lanes;
}

/* A control message upstream for job j (JOIN, LEAVE) into tx. */
static void
agg_up_ctl(struct shr_agg *agg, uint8_t type, uint32_t job, const struct agg_job *j,
	   uint64_t token, uint32_t aux, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.job = job;
	m.rank = agg->p.up_rank;
	m.world = agg->p.up_world;
	m.token = token;
	m.aux = aux;
	if (j != NULL) {
		m.dtype = j->dtype;
		m.slot = j->window & SHR_PROTO_SLOT_MASK;
		m.count = j->chunk;
		if (type == SHR_MSG_JOIN && j->tvalid) {
			/* the tree ranks this box stands for upstream */
			m.root = j->tlo;
			m.tensor = j->tspan;
		}
	}
	if (m.dtype == 0)
		m.dtype = SHR_DTYPE_INT32;	/* a LEAVE: any valid dtype */
	agg->scratch[0] = agg->p.upstream;
	agg_tx_ctrl(tx, &m, agg->scratch, 1, stats);
}

enum shr_proto_reason
agg_up_join(struct shr_agg *agg, struct agg_job *j, uint64_t now_ns, struct shr_agg_tx *tx,
	    struct shr_agg_stats *stats)
{
	if (j->up.state == AGG_UP_NONE) {
		memset(&j->up, 0, sizeof(j->up));
		j->up.state = AGG_UP_JOINING;
		j->up.nonce = agg_token_new(agg);
		j->up.join_ns = now_ns;
	}
	j->up.next_join_ns = now_ns + SHR_AGG_UP_JOIN_GAP_NS;
	agg_up_ctl(agg, SHR_MSG_JOIN, j->id, j, j->up.nonce, 0, tx, stats);
	stats->up_joins++;
	return SHR_PROTO_OK;
}

void
agg_up_end(struct shr_agg *agg, struct agg_job *j, uint32_t aux)
{
	struct agg_up_leave *l;

	if (agg->p.upstream == 0 || j->up.state == AGG_UP_NONE)
		return;
	/* the upstream is owed a LEAVE; it knows this box once it has a token */
	if (j->up.token != 0 && agg->up_nleave < AGG_UP_LEAVE_MAX) {
		l = &agg->up_leave[agg->up_nleave++];
		l->job = j->id;
		l->aux = aux;
		l->token = j->up.token;
		l->next_ns = 0;	/* at the next tick */
		l->tries = 0;
	}
	j->up.state = AGG_UP_NONE;
}

void
agg_up_abort_fill(const struct shr_agg *agg, const struct agg_job *j, struct shr_proto_msg *a)
{
	(void)agg;
	a->flags |= SHR_FLAG_UPSTREAM;
	a->offset = j->up.blame_box;
	a->slot = j->up.blame_rank;
	a->feedback = j->up.blame_ip;
}

/*
 * DATA upstream: this box's result of round rd (its members' partial sum; a relayed round's
 * payload when its source is one of them, else header-only).
 */
static void
agg_up_data(const struct shr_agg *agg, struct agg_job *j, const struct shr_pool_round *rd,
	    uint16_t flags, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	bool pay = !shr_proto_kind_relay(rd->kind) ||
		   agg_tree_member(j, rd->root) != SHR_PROTO_RANK_ALL;
	struct shr_proto_msg m;
	size_t plen = 0;

	if (tx->buf == NULL || tx->cap < SHR_PROTO_HDR_LEN + (size_t)rd->count * j->esize)
		return;
	if (pay)
		plen = shr_pool_result_write(rd, (uint8_t *)tx->buf + SHR_PROTO_HDR_LEN);
	memset(&m, 0, sizeof(m));
	agg_round_msg(&m, j, rd);
	m.type = SHR_MSG_DATA;
	m.rank = agg->p.up_rank;
	m.world = agg->p.up_world;
	m.flags = flags | (pay ? 0 : SHR_FLAG_NOPAYLOAD);
	m.job = j->id;
	m.token = j->up.token;
	shr_proto_build(tx->buf, &m, (uint8_t *)tx->buf + SHR_PROTO_HDR_LEN, plen);
	tx->len = SHR_PROTO_HDR_LEN + plen;
	j->up.dst = agg_up_dst(agg, j, m.slot);
	tx->dst = &j->up.dst;
	tx->ndst = 1;
	stats->tx_msgs++;
	stats->tx_dsts++;
}

void
agg_up_round(struct shr_agg *agg, struct agg_job *j, struct agg_track *t,
	     const struct shr_pool_round *rd, uint16_t flags, uint32_t feedback,
	     uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	t->up_pend = 1;
	t->up_nrtx = 0;
	t->up_ver = rd->ver;
	t->up_since = now_ns;
	t->up_tx = now_ns;
	t->up_fb = feedback;
	agg_up_data(agg, j, rd, flags & SHR_FLAG_LAST, tx, stats);
	stats->up_data++;
}

bool
agg_up_resend(struct shr_agg *agg, struct agg_job *j, struct agg_track *t,
	      const struct shr_pool_round *rd, uint64_t now_ns, struct shr_agg_tx *tx,
	      struct shr_agg_stats *stats)
{
	if (!t->up_pend || t->up_ver != rd->ver)
		return false;	/* the final result is in the pool: answer from there */
	/* the members' copies of one round come together: one DATA up for them all */
	if (now_ns - t->up_tx < SHR_AGG_UP_RESEND_GAP_NS)
		return true;
	t->up_tx = now_ns;
	agg_up_data(agg, j, rd, SHR_FLAG_RETX, tx, stats);
	stats->up_resent++;
	return true;
}

/*
 * The upstream answered a LEAVE this box owes it (LEAVE_ACK, or the ABORT that a LEAVE
 * ECONNABORTED caused, with its token): no need to send it again.
 */
static void
agg_up_left(struct shr_agg *agg, const struct shr_proto_msg *m)
{
	uint32_t i = 0;

	while (i < agg->up_nleave) {
		const struct agg_up_leave *l = &agg->up_leave[i];

		if (l->job == m->job && l->token == m->token)
			agg->up_leave[i] = agg->up_leave[--agg->up_nleave];
		else
			i++;
	}
}

/*
 * Whether the upstream sends this box round rd's payload: what its agg_round_one() decides
 * for the member that stands for tree ranks tlo .. tlo + tspan - 1 (the sum, or the relayed
 * payload, when one of them is the destination; a relay to every rank, unless one of them is
 * the source).
 */
static bool
agg_up_pays(const struct agg_job *j, const struct shr_pool_round *rd)
{
	uint32_t root = (uint32_t)rd->root - j->tlo, aux = rd->aux - j->tlo;

	switch (rd->kind) {
	case SHR_KIND_ALLREDUCE:
		return true;
	case SHR_KIND_REDUCE:
	case SHR_KIND_REDUCE_SCATTER:
		return root < j->tspan;
	default:
		if (rd->aux != SHR_PROTO_RANK_ALL)
			return aux < j->tspan;
		return root >= j->tspan;
	}
}

/*
 * The upstream RESULT of a round of j: the final result (or, header-only, the word that the
 * round is complete, when no member here wants its payload or the payload came from here),
 * to the members.
 */
static enum shr_proto_reason
agg_up_result(struct shr_agg *agg, struct agg_job *j, const struct shr_proto_msg *m,
	      const uint8_t *payload, size_t plen, uint64_t now_ns, struct shr_agg_tx *tx,
	      struct shr_agg_stats *stats)
{
	bool pay = !(m->flags & SHR_FLAG_NOPAYLOAD);
	struct shr_pool_round rd;
	struct agg_track *t;

	if (j->up.state != AGG_UP_ACTIVE || m->token != j->up.token)
		return SHR_PROTO_BAD_TOKEN;
	if (m->slot >= j->window)
		return SHR_PROTO_BAD_SLOT;
	if (plen != (pay ? (size_t)m->count * j->esize : 0))
		return SHR_PROTO_BAD_LEN;
	t = agg_track(agg, j->base + m->slot);
	if (!t->up_pend || t->up_ver != m->ver ||
	    shr_pool_round_get(agg->pool, j->base + m->slot, m->ver, &rd) != 0 ||
	    rd.step != m->step || rd.offset != m->offset || rd.count != m->count ||
	    rd.tensor != m->tensor || rd.kind != m->kind || rd.dtype != m->dtype ||
	    rd.root != m->root || rd.aux != m->aux) {
		stats->up_stale++;	/* a copy of a result already passed down, or late */
		return SHR_PROTO_OK;
	}
	if (pay != agg_up_pays(j, &rd))
		return SHR_PROTO_BAD_LEN;
	if (pay && shr_pool_result_load(agg->pool, &rd, payload) != 0)
		return SHR_PROTO_BAD_KIND;
	t->up_pend = 0;
	if (t->up_tx == t->up_since && now_ns > t->up_since) {
		/* sent once: a round trip (Karn: not after a resend) */
		uint64_t r = now_ns - t->up_since;

		j->up.srtt_ns = j->up.srtt_ns == 0 ? r : (7 * j->up.srtt_ns + r) / 8;
	}
	agg_tx_round(tx, j, &rd, m->flags, t->up_fb, stats);
	stats->up_results++;
	return SHR_PROTO_OK;
}

/* The upstream's answer to this box's JOIN for j. */
static enum shr_proto_reason
agg_up_join_ack(struct shr_agg *agg, struct agg_job *j, const struct shr_proto_msg *m,
		uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	if (j->up.state != AGG_UP_JOINING) {
		tx->unproven = 1;	/* a copy of an answer already taken: not checked */
		return SHR_PROTO_OK;
	}
	if (m->offset != j->up.nonce) {
		/*
		 * Not the answer to this box's JOIN (that echoes its nonce): only the upstream's
		 * activation to every member (rank RANK_ALL, offset 0) carrying the token it told
		 * this box while its job filled (EINPROGRESS, which echoed the nonce), as lib/comm
		 * takes it. Any other (forged from the upstream's address, or a delayed copy of
		 * an earlier incarnation's) would activate the job under a token the upstream
		 * refuses, or abort it.
		 */
		if (m->rank != SHR_PROTO_RANK_ALL || m->offset != 0 || m->aux != 0 ||
		    (j->up.token != 0 && m->token != j->up.token))
			return SHR_PROTO_BAD_TOKEN;
		if (j->up.token == 0) {
			/*
			 * No token told yet: this box's JOIN may be the one that filled the job.
			 * JOIN again at once (once per JOIN upstream): the answer echoes the nonce.
			 */
			stats->up_stale++;
			tx->unproven = 1;
			if (!j->up.rejoined) {
				j->up.rejoined = 1;
				(void)agg_up_join(agg, j, now_ns, tx, stats);
			}
			return SHR_PROTO_OK;
		}
	}
	if (m->aux == EINPROGRESS) {
		j->up.token = m->token;	/* so that a LEAVE can unbind this box */
		return SHR_PROTO_OK;
	}
	j->up.blame_rank = SHR_PROTO_RANK_ALL;
	j->up.blame_box = agg->p.upstream;
	if (m->aux != 0 || m->count != j->chunk || m->slot == 0) {
		/*
		 * Refused; or admitted (aux 0) with a chunk other than this box's members were
		 * promised: this box's abort then LEAVEs with ECONNABORTED (agg_abort_ex()), so
		 * the upstream ends the job at once rather than after its own timeout.
		 */
		j->up.blamed = 1;
		if (m->aux != 0)
			j->up.state = AGG_UP_NONE;
		else
			j->up.token = m->token;
		stats->up_aborts++;
		agg_abort(agg, j, SHR_PROTO_RANK_ALL, m->aux != 0 ? m->aux : EMSGSIZE, true,
			  now_ns, tx, stats);
		return SHR_PROTO_OK;
	}
	j->up.token = m->token;
	j->up.lanes = (uint16_t)(m->tensor != 0 && m->tensor <= UINT16_MAX ? m->tensor : 1);
	if (m->slot < j->window) {
		if (j->has_slots) {
			/* a static job's window is reserved: the upstream must grant it all (the
			 * abort LEAVEs with ECONNABORTED: the upstream ends the job at once) */
			j->up.blamed = 1;
			stats->up_aborts++;
			agg_abort(agg, j, SHR_PROTO_RANK_ALL, ENOSPC, true, now_ns, tx, stats);
			return SHR_PROTO_OK;
		}
		j->window = m->slot;	/* no slots are reserved yet: the members get this */
	}
	j->up.state = AGG_UP_ACTIVE;
	if (j->joined < j->world)
		return SHR_PROTO_OK;	/* a member left meanwhile: its JOIN completes the job */
	return agg_job_activate(agg, j, now_ns, tx, stats);
}

enum shr_proto_reason
agg_up_input(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
	     const uint8_t *payload, size_t plen, uint64_t now_ns, struct shr_agg_tx *tx,
	     struct shr_agg_stats *stats)
{
	struct agg_job *j;

	if (agg->p.upstream == 0 ||
	    SHR_AGG_ADDR_IP(src) != SHR_AGG_ADDR_IP(agg->p.upstream))
		return SHR_PROTO_BAD_TYPE;	/* only the box's own upstream sends these */
	if (m->type == SHR_MSG_LEAVE_ACK || m->type == SHR_MSG_ABORT)
		agg_up_left(agg, m);
	j = agg_job_find(agg, m->job);
	if (j == NULL || j->up.state == AGG_UP_NONE) {
		stats->up_stale++;
		tx->unproven = 1;	/* any job id, any token: nothing checked */
		return SHR_PROTO_OK;
	}
	switch (m->type) {
	case SHR_MSG_RESULT:
		return agg_up_result(agg, j, m, payload, plen, now_ns, tx, stats);
	case SHR_MSG_JOIN_ACK:
		return agg_up_join_ack(agg, j, m, now_ns, tx, stats);
	case SHR_MSG_ABORT:
		/* the incarnation's token once told (never 0: before EINPROGRESS this box holds
		 * none, and an ABORT with token 0 would match), or the answer to its JOIN */
		if ((j->up.token == 0 || m->token != j->up.token) && m->offset != j->up.nonce)
			return SHR_PROTO_BAD_TOKEN;
		j->up.blamed = 1;
		if (m->flags & SHR_FLAG_UPSTREAM) {
			/* it passes down what a box further up said: keep naming that */
			j->up.blame_box = m->offset;
			j->up.blame_rank = (uint16_t)m->slot;
			j->up.blame_ip = m->feedback;
		} else {
			j->up.blame_box = agg->p.upstream;
			j->up.blame_rank = m->rank;
			j->up.blame_ip = m->aux != EPROTO ? m->feedback : 0;
		}
		j->up.state = AGG_UP_NONE;	/* it has ended the job: no LEAVE owed */
		stats->up_aborts++;
		agg_abort(agg, j, SHR_PROTO_RANK_ALL, m->aux != 0 ? m->aux : ECONNABORTED, true,
			  now_ns, tx, stats);
		return SHR_PROTO_OK;
	default:
		tx->unproven = 1;	/* LEAVE_ACK: nothing to do, nothing checked */
		return SHR_PROTO_OK;
	}
}

uint32_t
agg_up_pending(const struct shr_agg *agg, const struct agg_job *j)
{
	uint32_t s, n = 0;

	if (!j->has_slots)
		return 0;
	for (s = j->base; s < j->base + j->window; s++)
		n += agg_track(agg, s)->up_pend;
	return n;
}

/* The oldest round of j waiting upstream, or NULL. */
static const struct agg_track *
agg_up_oldest(const struct shr_agg *agg, const struct agg_job *j)
{
	const struct agg_track *oldest = NULL;
	uint32_t s;

	if (!j->has_slots)
		return NULL;
	for (s = j->base; s < j->base + j->window; s++) {
		const struct agg_track *t = agg_track(agg, s);

		if (t->up_pend && (oldest == NULL || t->up_since < oldest->up_since))
			oldest = t;
	}
	return oldest;
}

/* How long a round waits upstream before this box sends it again, before backoff. */
static uint64_t
agg_up_rto(const struct shr_agg *agg, const struct agg_job *j)
{
	uint64_t rto = j->up.srtt_ns != 0 ? 2 * j->up.srtt_ns : AGG_UP_RTO_INIT_NS;
	uint64_t max = agg->p.job_timeout_ns / AGG_UP_RTO_DIV;

	if (rto < AGG_UP_RTO_MIN_NS)
		rto = AGG_UP_RTO_MIN_NS;
	return rto < max ? rto : max;
}

/*
 * A round of j that has waited upstream for its RTO since it last went up: send it again
 * (the members' own resends do too, but back off on their timers). 1 if one went.
 */
static int
agg_up_retx(struct shr_agg *agg, struct agg_job *j, uint64_t now_ns, struct shr_agg_tx *tx,
	    struct shr_agg_stats *stats)
{
	uint64_t rto = agg_up_rto(agg, j), most = agg->p.job_timeout_ns / AGG_UP_RTO_MAX_DIV;
	struct shr_pool_round rd;
	uint32_t s;

	for (s = j->base; s < j->base + j->window; s++) {
		struct agg_track *t = agg_track(agg, s);
		unsigned int b;

		if (!t->up_pend)
			continue;
		b = t->up_nrtx < AGG_UP_BACKOFF_MAX ? t->up_nrtx : AGG_UP_BACKOFF_MAX;
		if (now_ns - t->up_tx <= (rto << b < most ? rto << b : most) ||
		    shr_pool_round_get(agg->pool, s, t->up_ver, &rd) != 0)
			continue;
		t->up_tx = now_ns;
		t->up_nrtx++;
		agg_up_data(agg, j, &rd, SHR_FLAG_RETX, tx, stats);
		stats->up_resent++;
		return 1;
	}
	return 0;
}

/* The upstream is silent about j: end j for its members, naming the upstream box. */
static void
agg_up_silent(struct shr_agg *agg, struct agg_job *j, uint64_t now_ns, struct shr_agg_tx *tx,
	      struct shr_agg_stats *stats)
{
	j->up.blamed = 1;
	j->up.blame_rank = SHR_PROTO_RANK_ALL;
	j->up.blame_ip = 0;
	j->up.blame_box = agg->p.upstream;
	agg_up_end(agg, j, ECONNABORTED);
	stats->up_aborts++;
	agg_abort(agg, j, SHR_PROTO_RANK_ALL, ETIMEDOUT, true, now_ns, tx, stats);
}

int
agg_up_tick(struct shr_agg *agg, uint64_t now_ns, struct shr_agg_tx *tx,
	    struct shr_agg_stats *stats)
{
	uint64_t tmo = agg->p.job_timeout_ns;
	const struct agg_track *t;
	uint32_t idx;

	for (idx = 0; idx < agg->up_nleave; idx++) {
		struct agg_up_leave *l = &agg->up_leave[idx];

		if (now_ns < l->next_ns)
			continue;
		/* sent again until the upstream answers (agg_up_left()), AGG_UP_LEAVE_TRIES at
		 * most */
		agg_up_ctl(agg, SHR_MSG_LEAVE, l->job, NULL, l->token, l->aux, tx, stats);
		l->next_ns = now_ns + SHR_AGG_UP_JOIN_GAP_NS;
		if (++l->tries >= AGG_UP_LEAVE_TRIES)
			*l = agg->up_leave[--agg->up_nleave];
		return 1;
	}
	for (idx = 0; idx < agg->p.max_jobs; idx++) {
		struct agg_job *j = &agg->jobs[idx];

		if (!j->used || j->up.state == AGG_UP_NONE)
			continue;
		if (j->up.state == AGG_UP_JOINING) {
			if (now_ns - j->up.join_ns > AGG_UP_JOIN_WAIT * tmo) {
				agg_up_silent(agg, j, now_ns, tx, stats);
				return 1;
			}
			if (now_ns < j->up.next_join_ns)
				continue;
			agg_up_join(agg, j, now_ns, tx, stats);
			return 1;
		}
		t = agg_up_oldest(agg, j);
		if (t != NULL && now_ns > t->up_since &&
		    now_ns - t->up_since > tmo + tmo / AGG_UP_WAIT_DIV) {
			agg_up_silent(agg, j, now_ns, tx, stats);
			return 1;
		}
		if (t != NULL && agg_up_retx(agg, j, now_ns, tx, stats))
			return 1;
	}
	return 0;
}

int
agg_tree_bind(struct agg_job *j, uint16_t rank, const struct shr_proto_msg *m)
{
	if (m->tensor == 0) {
		j->trank[rank] = 0;	/* a plain member: its own rank */
		return 0;
	}
	if (m->tensor > SHR_PROTO_MAX_WORLD || m->root + m->tensor > SHR_PROTO_MAX_WORLD)
		return -EINVAL;
	j->trank[rank] = (uint32_t)m->root << 16 | m->tensor;
	j->tree = 1;
	return 0;
}

void
agg_tree_span(struct agg_job *j)
{
	uint64_t seen[SHR_PROTO_MAX_WORLD / 64];
	uint32_t lo = UINT32_MAX, hi = 0, n = 0, g;
	uint16_t r;

	j->tvalid = 0;
	j->tlo = 0;
	j->tspan = 0;
	if (!j->tree)
		return;
	memset(seen, 0, sizeof(seen));
	for (r = 0; r < j->world; r++) {
		uint32_t first = agg_tree_first(j, r), k = agg_tree_count(j, r);

		if (first + k > SHR_PROTO_MAX_WORLD)
			return;
		for (g = first; g < first + k; g++) {
			if (seen[g / 64] >> (g % 64) & 1)
				return;	/* two members stand for g */
			seen[g / 64] |= 1ull << (g % 64);
		}
		lo = first < lo ? first : lo;
		hi = first + k > hi ? first + k : hi;
		n += k;
	}
	if (n == 0 || hi - lo != n)
		return;	/* a gap */
	j->tvalid = 1;
	j->tlo = (uint16_t)lo;
	j->tspan = (uint16_t)n;
}

uint32_t
agg_tree_member(const struct agg_job *j, uint32_t g)
{
	uint16_t r;

	if (!j->tree)
		return g < j->world ? g : SHR_PROTO_RANK_ALL;
	for (r = 0; r < j->world; r++)
		if (agg_tree_has(j, r, g))
			return r;
	return SHR_PROTO_RANK_ALL;
}
