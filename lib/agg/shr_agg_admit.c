/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Admission of a JOIN, before the job table sees it: the sender's address must be in the
 * box's allowlist, and a job that requires a secret admits only a JOIN that answers this
 * box's recent challenge to this sender with the proof of that secret (lib/auth). Nothing is
 * stored per challenge, so a flood of JOINs costs an HMAC each and no memory.
 */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "shr_agg_private.h"

_Static_assert(SHR_AUTH_BLOCK_LEN == SHR_PROTO_ADM_LEN, "admission block size");

#define AGG_CHALLENGE_BURST_MIN 64u

static void
agg_auth_join(const struct shr_proto_msg *m, struct shr_auth_join *aj)
{
	memset(aj, 0, sizeof(*aj));
	aj->job = m->job;
	aj->rank = m->rank;
	aj->world = m->world;
	aj->nonce = m->token;
	aj->dtype = m->dtype;
	aj->chunk = m->count;
	aj->window = m->slot;
	aj->flags = m->flags;
	aj->feedback = m->feedback;
	aj->root = m->root;
	aj->tensor = m->tensor;
}

/*
 * Whether a challenge may go now: SHR_AGG_CHALLENGE_RATE a second after a burst of max_world
 * (at least AGG_CHALLENGE_BURST_MIN), a virtual schedule (GCRA): one time, no table. JOINs
 * reach this from the control path only.
 */
static bool
agg_challenge_take(struct shr_agg *agg, uint64_t now_ns)
{
	const uint64_t gap = 1000000000ull / SHR_AGG_CHALLENGE_RATE;
	uint64_t burst = agg->p.max_world > AGG_CHALLENGE_BURST_MIN ? agg->p.max_world :
								      AGG_CHALLENGE_BURST_MIN;
	uint64_t tat = agg->ch_tat > now_ns ? agg->ch_tat : now_ns;

	if (tat - now_ns >= burst * gap)
		return false;
	agg->ch_tat = tat + gap;
	return true;
}

/* JOIN_ACK ENOKEY with a fresh challenge for this sender and JOIN, to the sender alone. */
static void
agg_challenge(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
	      const struct shr_auth_join *aj, uint64_t now_ns, struct shr_agg_tx *tx,
	      struct shr_agg_stats *stats)
{
	uint8_t block[SHR_PROTO_ADM_LEN];
	struct shr_proto_msg a;

	if (tx->buf == NULL || tx->cap < SHR_PROTO_HDR_LEN + SHR_PROTO_ADM_LEN)
		return;
	if (!agg_challenge_take(agg, now_ns)) {
		stats->challenges_limited++;	/* the member JOINs again */
		return;
	}
	memset(block, 0, sizeof(block));
	shr_auth_challenge(&agg->auth, now_ns, src, aj, block);
	agg_join_ack_of(agg, m, ENOKEY, &a);
	memcpy((uint8_t *)tx->buf + SHR_PROTO_HDR_LEN, block, sizeof(block));
	shr_proto_build(tx->buf, &a, block, sizeof(block));
	agg->scratch[0] = src;
	tx->len = SHR_PROTO_HDR_LEN + SHR_PROTO_ADM_LEN;
	tx->dst = agg->scratch;
	tx->ndst = 1;
	stats->tx_msgs++;
	stats->tx_dsts++;
	stats->challenges++;
}

enum shr_proto_reason
agg_admit(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m, const uint8_t *adm,
	  size_t adm_len, uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats,
	  bool *admitted)
{
	const struct shr_auth_secret *secret = &agg->secret;
	const struct agg_job *j;
	struct shr_auth_join aj;

	*admitted = false;
	if (!shr_auth_acl_ok(&agg->allow, SHR_AGG_ADDR_IP(src)))
		return agg_join_nack(agg, src, m, EPERM, SHR_PROTO_NOT_ALLOWED, tx, stats);
	j = agg_job_find(agg, m->job);
	if (j != NULL && j->secret.len != 0)
		secret = &j->secret;
	if (secret->len == 0) {
		*admitted = true;
		return SHR_PROTO_OK;
	}
	agg_auth_join(m, &aj);
	if (adm_len != SHR_PROTO_ADM_LEN) {
		agg_challenge(agg, src, m, &aj, now_ns, tx, stats);
		tx->unproven = 1;	/* anyone can ask for a challenge, from any address */
		return SHR_PROTO_OK;
	}
	if (!shr_auth_challenge_ok(&agg->auth, now_ns, src, &aj, adm)) {
		/* Replayed, forged or too late: a member that is late answers the new one. */
		agg_challenge(agg, src, m, &aj, now_ns, tx, stats);
		return SHR_PROTO_STALE_AUTH;
	}
	if (!shr_auth_proof_ok(secret, adm, &aj, adm + SHR_AUTH_CHALLENGE_LEN))
		return agg_join_nack(agg, src, m, EACCES, SHR_PROTO_BAD_AUTH, tx, stats);
	*admitted = true;
	return SHR_PROTO_OK;
}
