/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The aggregator's LEAVE: a member unbinds (or, in a fixed job, is marked as left), a job
 * made by JOIN is freed or a static job's incarnation ends when its last member has left,
 * the LEAVE of an incarnation that has ended is answered ENOENT. The job table, JOIN and
 * incarnations are in shr_agg_job.c. See shr_agg.h for the contract.
 */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "shr_agg_private.h"

/* LEAVE_ACK ENOENT (the incarnation is gone), with the LEAVE's token, to scratch[0]. */
static void
agg_leave_gone(struct shr_agg *agg, const struct shr_proto_msg *m, struct shr_agg_tx *tx,
	       struct shr_agg_stats *stats)
{
	struct shr_proto_msg a;

	memset(&a, 0, sizeof(a));
	a.type = SHR_MSG_LEAVE_ACK;
	a.job = m->job;
	a.rank = m->rank;
	a.world = m->world;
	a.dtype = m->dtype;
	a.aux = ENOENT;
	a.token = m->token;
	agg_tx_ctrl(tx, &a, agg->scratch, 1, stats);
}

enum shr_proto_reason
agg_leave(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m, uint64_t now_ns,
	  struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg a;
	struct agg_job *j;
	uint16_t r = m->rank;

	j = agg_job_find(agg, m->job);
	agg->scratch[0] = src;
	if (j == NULL) {
		/* Gone already (a resent LEAVE after the last one freed it): say so. */
		agg_leave_gone(agg, m, tx, stats);
		return SHR_PROTO_UNKNOWN_JOB;
	}
	if (r >= j->world)
		return SHR_PROTO_BAD_RANK;
	if (j->bound[r] && j->addrs[r] != src)
		return SHR_PROTO_SPOOFED;
	if (m->token != j->token) {
		/*
		 * A static job goes on to its next incarnation when all have left or it was
		 * aborted: a member whose LEAVE_ACK (or ABORT) was lost LEAVEs with the ended
		 * one's token, and is told it is gone (ENOENT), as for a job freed.
		 */
		if (!agg_gone_left(agg, src, m, now_ns))
			return SHR_PROTO_BAD_TOKEN;
		agg_leave_gone(agg, m, tx, stats);
		return SHR_PROTO_OK;
	}
	if (m->offset != 0 && m->offset != j->nonce[r]) {
		/*
		 * The LEAVE of another process of this rank than the one the job holds (offset:
		 * the nonce of its JOIN; 0, not said): one that gave up while the job filled,
		 * its copy delayed, or replayed (in the same incarnation its MAC still verifies:
		 * the rank's replay window started again for the new process). It must not
		 * unbind the new one; that process had its answer when it left. Refused as a
		 * message of another incarnation is: the nonce is the process's own token.
		 */
		return SHR_PROTO_BAD_TOKEN;
	}

	if (m->aux == ECONNABORTED && j->active && (j->fixed ? j->nonce[r] != 0 && !j->left[r] :
						      j->bound[r])) {
		/* a box of a tree whose own job was aborted: end this one at once */
		agg_abort(agg, j, r, ECONNABORTED, true, now_ns, tx, stats);
		return SHR_PROTO_OK;
	}
	agg_ack_fill(&a, SHR_MSG_LEAVE_ACK, j, j->id, r, 0);
	a.tensor = agg->p.lanes;
	agg_tx_ctrl(tx, &a, agg->scratch, 1, stats);
	agg_job_touch(j, now_ns);
	if (j->fixed) {
		/* Fixed members stay bound; the incarnation ends when all who joined left. */
		uint16_t k;

		if (j->nonce[r] == 0 || j->left[r])
			return SHR_PROTO_OK;
		j->left[r] = 1;
		stats->leaves++;
		for (k = 0; k < j->world; k++)
			if (j->nonce[k] != 0 && !j->left[k])
				return SHR_PROTO_OK;
		agg_job_ended(agg, j, now_ns, stats);
		return SHR_PROTO_OK;
	}
	if (!j->bound[r])
		return SHR_PROTO_OK;	/* a resent LEAVE changes nothing */
	j->bound[r] = 0;
	j->joined--;
	stats->leaves++;
	if (j->joined != 0)
		return SHR_PROTO_OK;
	if (j->active) {
		agg_job_ended(agg, j, now_ns, stats);
	} else if (!j->is_static) {
		/* Every rank of a job still filling gave up. */
		agg_job_release(agg, j);
		stats->jobs_freed++;
	}
	return SHR_PROTO_OK;
}
