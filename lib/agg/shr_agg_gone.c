/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The records of incarnations that have ended (aborted, or left by all): enough to tell a
 * member that lost the ABORT again, to answer a member whose LEAVE_ACK was lost, and to
 * recognise a late JOIN of one of their members, which never starts or joins another
 * incarnation. A fixed number of records (ngone_max), each kept for AGG_GONE_TTL job
 * timeouts; the oldest is reused when all are taken.
 */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "shr_agg_private.h"

#define AGG_GONE_TTL 10u	/* ended incarnations are remembered this many job timeouts */
#define AGG_GONE_ANSWERS 8u	/* ABORTs sent again to one member, at most */

static void
agg_gone_drop(struct shr_agg *agg, struct agg_gone *g)
{
	g->used = 0;
	agg->ngone--;
}

void
agg_gone_expire(struct shr_agg *agg, uint64_t now_ns)
{
	uint32_t i;

	for (i = 0; i < agg->ngone_max && agg->ngone != 0; i++)
		if (agg->gone[i].used && now_ns >= agg->gone[i].expires)
			agg_gone_drop(agg, &agg->gone[i]);
}

/* Remember the incarnation of j that ends now (aborted blaming rank for err, or left). */
void
agg_gone_add(struct shr_agg *agg, const struct agg_job *j, const struct shr_proto_msg *abort,
	     uint64_t now_ns)
{
	uint64_t ttl = agg->p.job_timeout_ns;
	struct agg_gone *g = NULL;
	uint32_t i;
	uint16_t r;

	agg_gone_expire(agg, now_ns);
	for (i = 0; i < agg->ngone_max; i++) {
		struct agg_gone *e = &agg->gone[i];

		if (!e->used) {
			g = e;
			break;
		}
		if (g == NULL || e->expires < g->expires)
			g = e;
	}
	if (g->used)
		agg_gone_drop(agg, g);
	ttl = ttl > UINT64_MAX / AGG_GONE_TTL ? UINT64_MAX : ttl * AGG_GONE_TTL;
	g->id = j->id;
	g->aborted = abort != NULL;
	if (abort != NULL)
		g->abort = *abort;
	g->world = j->world;
	g->token = j->token;
	g->expires = now_ns > UINT64_MAX - ttl ? UINT64_MAX : now_ns + ttl;
	g->mem = agg->gone_mem + (size_t)(g - agg->gone) * agg->p.max_world;
	for (r = 0; r < j->world; r++) {
		struct agg_gone_mem *gm = &g->mem[r];

		gm->bound = j->bound[r];
		gm->addr = j->addrs[r];
		gm->nonce = j->nonce[r];
		gm->next_ns = now_ns;
		gm->answers = 0;
	}
	g->used = 1;
	agg->ngone++;
}

/*
 * Tell a member of an aborted incarnation about the abort again (to dst; echoing the nonce
 * of its JOIN, if that is what came in), unless it was told less than gone_gap ago or
 * AGG_GONE_ANSWERS times already. DATA reaches this from several lcores at once (lanes), so
 * the rate limit is claimed atomically.
 */
void
agg_gone_answer(struct shr_agg *agg, const struct agg_gone *g, struct agg_gone_mem *gm,
		uint64_t dst, uint64_t nonce, uint64_t now_ns, struct shr_agg_tx *tx,
		struct shr_agg_stats *stats)
{
	uint64_t next = __atomic_load_n(&gm->next_ns, __ATOMIC_RELAXED);
	struct shr_proto_msg a;

	if (!g->aborted || now_ns < next ||
	    !__atomic_compare_exchange_n(&gm->next_ns, &next, now_ns + agg->gone_gap, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
	    __atomic_fetch_add(&gm->answers, 1, __ATOMIC_RELAXED) >= AGG_GONE_ANSWERS)
		return;
	a = g->abort;	/* the same ABORT again: reason, blame, and a tree's upstream blame */
	if (nonce != 0)
		a.offset = nonce;	/* the answer to a JOIN echoes its nonce */
	/* not agg->scratch: a DATA's answer, on any data lcore at once (scratch is the control
	 * path's) */
	tx->one_dst = dst;
	agg_tx_ctrl(tx, &a, &tx->one_dst, 1, stats);
	stats->reaborts++;
}

/* A JOIN with the nonce of a member of an incarnation that has ended: its record, or NULL. */
struct agg_gone *
agg_gone_of_join(const struct shr_agg *agg, const struct shr_proto_msg *m, uint64_t now_ns)
{
	uint32_t i;

	for (i = 0; i < agg->ngone_max; i++) {
		struct agg_gone *g = &agg->gone[i];

		if (g->used && g->id == m->job && now_ns < g->expires && m->rank < g->world &&
		    g->mem[m->rank].nonce == m->token)
			return g;
	}
	return NULL;
}

void
agg_data_gone(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
	      uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	uint32_t i;

	for (i = 0; i < agg->ngone_max; i++) {
		struct agg_gone *g = &agg->gone[i];
		struct agg_gone_mem *gm;

		if (!g->used || g->id != m->job || g->token != m->token || now_ns >= g->expires ||
		    m->rank >= g->world)
			continue;
		gm = &g->mem[m->rank];
		if (gm->bound && gm->addr == src)
			agg_gone_answer(agg, g, gm, src, 0, now_ns, tx, stats);
		return;
	}
}

bool
agg_gone_token(const struct shr_agg *agg, uint32_t id, uint64_t token)
{
	uint32_t i;

	for (i = 0; i < agg->ngone_max; i++)
		if (agg->gone[i].used && agg->gone[i].id == id && agg->gone[i].token == token)
			return true;
	return false;
}

/*
 * Whether m is the LEAVE of a member (from its address) of an incarnation that has ended: all
 * had left, or it was aborted (the member lost the ABORT, or leaves before it reads it).
 */
bool
agg_gone_left(const struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
	      uint64_t now_ns)
{
	uint32_t i;

	for (i = 0; i < agg->ngone_max; i++) {
		const struct agg_gone *g = &agg->gone[i];

		if (g->used && g->id == m->job && g->token == m->token &&
		    now_ns < g->expires && m->rank < g->world && g->mem[m->rank].addr == src)
			return true;
	}
	return false;
}
