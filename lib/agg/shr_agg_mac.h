/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_AGG_MAC_H
#define SHR_AGG_MAC_H

/*
 * The box's side of the per-job message authentication code (lib/mac; shr_agg.h, "MAC"):
 * hooks that lib/agg calls, private to it. Contexts: each lane's DATA path (slot mod lanes)
 * has its own key schedules, replay windows and counter, the control path (JOIN, LEAVE,
 * tick, shutdown) one more (index lanes), so no two threads share one.
 */

#include <stdint.h>

#include "shr_agg_private.h"

/* shr_agg_create(): check the policy (mac needs a secret, no upstream) and allocate. */
int agg_mac_init(struct shr_agg *agg);
/* shr_agg_free() */
void agg_mac_free(struct shr_agg *agg);
/* shr_agg_job_add(): whether conf's MAC fields are bad (-EINVAL) */
int agg_mac_conf_check(const struct shr_agg *agg, const struct shr_agg_job_conf *conf);
/* shr_agg_job_add(): the static job j requires the MAC per conf */
void agg_mac_job_conf(struct shr_agg *agg, const struct agg_job *j,
		      const struct shr_agg_job_conf *conf);
/* A new incarnation of j (its token drawn): key it, fresh replay windows. */
void agg_mac_incarnate(struct shr_agg *agg, const struct agg_job *j);
/*
 * Rank r of j is bound anew (another process, a new nonce): its replay windows start again,
 * as its counter does (a member's counter starts at random: comm_mac_init()).
 */
void agg_mac_rank_reset(struct shr_agg *agg, const struct agg_job *j, uint16_t r);
/* Whether j requires the MAC. */
int agg_mac_required(const struct shr_agg *agg, const struct agg_job *j);
/*
 * A validated message m (msg, len bytes), before anything else looks at it: SHR_PROTO_OK, or
 * the reason to refuse it (a JOIN whose MAC flag differs from the job's policy is answered
 * with JOIN_ACK EKEYREJECTED in tx).
 */
enum shr_proto_reason agg_mac_in(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
				 const void *msg, size_t len, struct shr_agg_tx *tx,
				 struct shr_agg_stats *stats);
/* Bytes of trailer a tx buffer needs room for: SHR_PROTO_MAC_LEN once a job may use it. */
size_t agg_mac_room(const struct shr_agg *agg);
/* Sign what tx holds (a MAC job's messages) from context ctx (a lane, or lanes). */
void agg_mac_out(struct shr_agg *agg, struct shr_agg_tx *tx, uint32_t ctx);

/* The context of an input: its lane for DATA, the control path for the rest. */
static inline uint32_t
agg_mac_ctx(const struct shr_agg *agg, const struct shr_proto_msg *m)
{
	return m->type == SHR_MSG_DATA ? m->slot % agg->p.lanes : agg->p.lanes;
}

#endif /* SHR_AGG_MAC_H */
