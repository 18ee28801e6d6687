/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The aggregator's bounds in time, from the control lcore (shr_agg_tick): a job whose members
 * do not all join, members that disagree on a round or whose tree ranks allow only
 * allreduce, a job nobody sends to for idle_ns, a round open longer than the job timeout
 * (not while a round of a tree's job waits upstream), and the results resent unasked to a
 * member of a stalled round (shr_agg_nudge.c); and the ABORTs of a box shutting down
 * (shr_agg_shutdown). See shr_agg.h for the contract.
 */

#include <errno.h>
#include <stdbool.h>

#include "shr_agg_private.h"
#include "shr_agg_mac.h"

static int
agg_tick(struct shr_agg *agg, uint64_t now_ns, struct shr_agg_tx *tx,
	 struct shr_agg_stats *stats)
{
	uint64_t tmo = agg->p.job_timeout_ns, wait = SHR_AGG_JOIN_WAIT * tmo;
	uint32_t idx, s;
	uint16_t r;

	agg_tx_reset(tx);
	if (agg->ngone != 0)
		agg_gone_expire(agg, now_ns);
	if (agg->p.upstream != 0 && agg_up_tick(agg, now_ns, tx, stats) != 0)
		return 1;
	for (idx = 0; idx < agg->p.max_jobs; idx++) {
		struct agg_job *j = &agg->jobs[idx];
		const struct agg_track *oldest = NULL;
		uint64_t last;

		if (!j->used)
			continue;
		if (!j->active) {
			/* A job whose members do not all turn up (or that joins upstream). */
			if (j->joined == 0 || j->up.state == AGG_UP_JOINING ||
			    now_ns <= j->created_ns ||
			    now_ns - j->created_ns <= wait)
				continue;
			for (r = 0; r < j->world && j->bound[r]; r++)
				;
			agg_abort(agg, j, r, ETIMEDOUT, true, now_ns, tx, stats);
			return 1;
		}
		if (__atomic_load_n(&j->mm.state, __ATOMIC_ACQUIRE) == 2) {
			/* Members disagree on a round (noted by a data lcore). */
			agg_abort(agg, j, j->mm.rank, EPROTO, true, now_ns, tx, stats);
			stats->mismatches++;
			return 1;
		}
		r = (uint16_t)__atomic_load_n(&j->up.unsup, __ATOMIC_RELAXED);
		if (r != 0) {
			/* A tree's job whose ranks allow only allreduce (a data lcore noted). */
			agg_abort(agg, j, (uint16_t)(r - 1), EOPNOTSUPP, true, now_ns, tx, stats);
			return 1;
		}
		last = __atomic_load_n(&j->last_ns, __ATOMIC_RELAXED);
		if (last != 0 && now_ns > last && now_ns - last > agg->p.idle_ns) {
			/* Nobody has sent anything for idle_ns: the members are gone. */
			agg_abort(agg, j, SHR_PROTO_RANK_ALL, ETIMEDOUT, true, now_ns, tx, stats);
			stats->idle_reclaims++;
			return 1;
		}
		for (s = j->base; s < j->base + j->window; s++) {
			const struct agg_track *t = agg_track(agg, s);

			if (t->open && (oldest == NULL || t->since < oldest->since))
				oldest = t;
		}
		if (oldest == NULL)
			continue;
		/*
		 * Trees: not while a round of the job waits upstream. The members may be held
		 * back by it (their windows full of rounds the upstream has not answered), and
		 * the fault is then elsewhere in the tree: the upstream's ABORT names it, or
		 * agg_up_tick() ends the job after 1.5 job timeouts naming the upstream. A
		 * member that really is gone lets no round of ours complete, so what waits
		 * upstream drains within a round trip and the bound then names it.
		 */
		if (now_ns > oldest->since && now_ns - oldest->since > tmo &&
		    (j->up.state != AGG_UP_ACTIVE || agg_up_pending(agg, j) == 0)) {
			for (r = 0; r < j->world; r++)
				if (!(oldest->bits[r >> 6] & (1ull << (r & 63u))))
					break;
			agg_abort(agg, j, r, ETIMEDOUT, true, now_ns, tx, stats);
			return 1;
		}
		for (s = j->base; s < j->base + j->window; s++)
			if (agg_nudge(agg, j, s, now_ns, tx, stats))
				return 0;	/* a RESULT in tx; the caller calls again */
	}
	return 0;
}

int
shr_agg_tick(struct shr_agg *agg, uint64_t now_ns, struct shr_agg_tx *tx,
	     struct shr_agg_stats *stats)
{
	int n = agg_tick(agg, now_ns, tx, stats);

	agg_mac_out(agg, tx, agg->p.lanes);
	return n;
}

static int
agg_shutdown(struct shr_agg *agg, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	uint32_t idx;
	uint16_t r;

	agg_tx_reset(tx);
	for (idx = agg->shut_idx; idx < agg->p.max_jobs; idx++) {
		struct agg_job *j = &agg->jobs[idx];

		if (!j->used)
			continue;
		for (r = 0; r < j->world && !j->bound[r]; r++)
			;
		if (r == j->world)
			continue;	/* nobody to tell */
		/* a fixed job stays in the table: go on from the next entry next time */
		agg->shut_idx = idx + 1;
		agg_abort(agg, j, SHR_PROTO_RANK_ALL, ESHUTDOWN, false, 0, tx, stats);
		return 1;
	}
	agg->shut_idx = 0;	/* done: a later call starts a new pass */
	return 0;
}

int
shr_agg_shutdown(struct shr_agg *agg, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	int n = agg_shutdown(agg, tx, stats);

	agg_mac_out(agg, tx, agg->p.lanes);
	return n;
}
