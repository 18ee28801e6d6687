/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The box's help with its members' loss recovery: hints (the RESULT of a round names the one
 * rank that the round open in the lane's previous slot still waits for, agg_hint()) and
 * nudges (a completed round's result sent again, unasked, to a member that seems to have lost
 * it, shr_agg_tick()).
 *
 * Hints. When a rank's DATA is lost, the rounds after it complete and the lost one does not:
 * every rank sees later answers and not that one and, not knowing whose copy the box lacks,
 * each fast-resends it (4 ranks, 1% loss on every link: 59-77% of the fast resends were for
 * a round that waited for another rank's loss). A member sends chunk k of its stream in slot
 * k mod window, a slot's rounds in stream order, and a lane's DATA on one UDP port (one path,
 * in order). So when the round of slot s completes while the round open in slot s - lanes
 * (the lane's slot before it, this lcore's) lacks one rank, that rank's copy was lost (its
 * DATA for slot s came later on the same path), or its RESULT for the round before was lost
 * and the others moved on: the RESULT of slot s names it in its rank field. The named rank
 * resends at once; the others hold their fast resends of that chunk (the box has their
 * copies). A member acts on a hint only if it sent slot s - lanes's chunk before slot s's
 * (shr_endpoint.h, "Hints").
 *
 * Nudges. A slot's two copies tell the box who has had which result: a member that contributes
 * to a copy clears its bit in the other one. So when a round has been open in copy v for a while,
 * a member missing from it whose bit is still set in the other copy's completed round has not
 * moved on from that round: most likely its RESULT was lost. Its own timer would resend the
 * DATA and fetch the result again, but a member's timer can be slow to come to that chunk:
 * when its window is stalled elsewhere (a tree whose upstream waits for a dead box), it
 * resends its oldest chunks first, a few per timeout, backed off. Meanwhile the others wait
 * in the slot's next round, and at job_timeout_ns the box would blame that member for a
 * round it was never able to send. So, once such a round has been open for
 * job_timeout_ns / AGG_NUDGE_DIV, the box resends the completed round's result to each member
 * that owes it, once per that period (counted in nudges). A member that really is gone still
 * times the round out and is named; one that had the result gets a duplicate and drops it.
 * A tree's round still waiting for the upstream's result has no result to give yet.
 *
 * agg_hint() runs on the lcore of the completed round's lane, on its own slots; agg_nudge()
 * with the data lcores parked (shr_agg_tick), so the slot's state is stable.
 */

#include <stdbool.h>

#include "shr_agg_private.h"

#define AGG_NUDGE_DIV 8u	/* nudge after job_timeout_ns / 8, and at most that often */

/*
 * The rank field of the RESULT of the round that just completed in slot (of the active job
 * j, the index within the job): the one rank the round open in slot - lanes (modulo the
 * window: the same lane's slot before it) still waits for, or SHR_PROTO_RANK_ALL (none open
 * there, several missing, or a window that is not a multiple of lanes larger than them).
 */
uint16_t
agg_hint(const struct shr_agg *agg, const struct agg_job *j, uint32_t slot,
	 struct shr_agg_stats *stats)
{
	uint32_t w, words = (j->world + 63u) >> 6, miss = SHR_PROTO_RANK_ALL, l = agg->p.lanes;
	const struct agg_track *t;

	if (j->window <= l || j->window % l != 0)
		return SHR_PROTO_RANK_ALL;
	t = agg_track(agg, j->base + (slot + j->window - l) % j->window);
	if (!t->open)
		return SHR_PROTO_RANK_ALL;
	for (w = 0; w < words; w++) {
		uint64_t want = w + 1 < words || (j->world & 63u) == 0 ? ~0ull :
				(1ull << (j->world & 63u)) - 1;
		uint64_t lack = ~t->bits[w] & want;

		if (lack == 0)
			continue;
		if ((lack & (lack - 1)) != 0 || miss != SHR_PROTO_RANK_ALL)
			return SHR_PROTO_RANK_ALL;
		miss = w * 64u + (uint32_t)__builtin_ctzll(lack);
	}
	if (miss != SHR_PROTO_RANK_ALL)
		stats->hints++;
	return (uint16_t)miss;
}

/*
 * Whether slot (a slot of the active job j) calls for a nudge now: if so, the RESULT to one
 * member is in tx and this returns true. One member per call; a sweep over the members goes
 * on from where it stopped at the next call (the caller calls again while tx is not empty).
 */
bool
agg_nudge(struct shr_agg *agg, struct agg_job *j, uint32_t slot, uint64_t now_ns,
	  struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct agg_track *t = agg_track(agg, slot);
	uint64_t every = agg->p.job_timeout_ns / AGG_NUDGE_DIV;
	uint64_t from = t->since > t->nudge_ns ? t->since : t->nudge_ns;
	unsigned int v = t->ver ^ 1u;
	struct shr_pool_round rd = { .slot = 0 };
	uint32_t r;

	if (!t->open)
		return false;
	if (t->nudge_next == 0 && (now_ns <= from || now_ns - from <= every))
		return false;
	/* no result to give (yet): a round waiting upstream, or none completed in copy v */
	r = (t->up_pend && t->up_ver == v) || shr_pool_round_get(agg->pool, slot, v, &rd) != 0 ?
	    j->world : t->nudge_next;
	for (; r < j->world; r++) {
		if ((t->bits[r >> 6] >> (r & 63u) & 1u) || !j->bound[r] ||
		    shr_pool_owed(agg->pool, slot, v, (uint16_t)r) != 1)
			continue;
		agg_tx_again(tx, j, &rd, (uint16_t)r, stats);
		if (tx->len == 0)
			break;
		stats->nudges++;
		t->nudge_ns = now_ns;
		t->nudge_next = r + 1;
		return true;
	}
	t->nudge_ns = now_ns;
	t->nudge_next = 0;
	return false;
}
