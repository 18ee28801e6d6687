/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The per-job message authentication code at the box (shr_agg.h, "MAC"; lib/mac). Inputs:
 * DATA and LEAVE of a MAC job's current incarnation are verified (tag, then the replay
 * window of (rank, context)) before anything else touches them (after the checks of the
 * source and the job's state, which read only the header); a JOIN whose MAC flag is not
 * the job's policy is refused (JOIN_ACK EKEYREJECTED). Outputs: every RESULT, LEAVE_ACK,
 * ABORT and JOIN_ACK (status 0) of a MAC job is signed: with the current incarnation's
 * schedule of the context, or, for a message of an incarnation that has ended (an ABORT
 * told again, a late LEAVE_ACK), with its key derived again from the job's secret and the
 * message's token. Counters are per context and never reset, so no IV repeats under a key.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <shr_mac.h>
#include <shr_proto_bytes.h>

#include "shr_agg_mac.h"

struct agg_mac_job {
	uint32_t id;
	uint8_t req;		/* static job: requires the MAC */
	uint8_t keyed;		/* ctx holds the key of (id, token) */
	uint16_t world;		/* windows allocated for */
	uint64_t token;
	struct shr_mac **ctx;	/* nctx schedules */
	struct shr_mac_window *win; /* world * nctx: rank r, context c at r * nctx + c */
};

struct agg_mac_ctr {
	uint64_t next;
	uint8_t pad[AGG_LINE - sizeof(uint64_t)];
};

struct agg_mac {
	uint32_t nctx;
	struct agg_mac_ctr *ctr;	/* nctx, a cache line each */
	struct agg_mac_job *jobs;	/* max_jobs */
};

int
agg_mac_init(struct shr_agg *agg)
{
	struct agg_mac *mc;

	if (agg->p.mac && (agg->secret.len == 0 || agg->p.upstream != 0))
		return -EINVAL;
	mc = calloc(1, sizeof(*mc));
	if (mc == NULL)
		return -ENOMEM;
	mc->nctx = (uint32_t)agg->p.lanes + 1;
	mc->ctr = aligned_alloc(AGG_LINE, mc->nctx * sizeof(*mc->ctr));
	mc->jobs = calloc(agg->p.max_jobs, sizeof(*mc->jobs));
	if (mc->ctr == NULL || mc->jobs == NULL) {
		free(mc->ctr);
		free(mc->jobs);
		free(mc);
		return -ENOMEM;
	}
	memset(mc->ctr, 0, mc->nctx * sizeof(*mc->ctr));
	agg->mac = mc;
	agg->mac_any = agg->p.mac != 0;
	return 0;
}

static void
mac_job_clear(struct agg_mac *mc, struct agg_mac_job *mj)
{
	uint32_t c;

	if (mj->ctx != NULL)
		for (c = 0; c < mc->nctx; c++)
			shr_mac_free(mj->ctx[c]);
	free(mj->ctx);
	free(mj->win);
	mj->ctx = NULL;
	mj->win = NULL;
	mj->world = 0;
	mj->keyed = 0;
}

void
agg_mac_free(struct shr_agg *agg)
{
	struct agg_mac *mc = agg->mac;
	uint32_t i;

	if (mc == NULL)
		return;
	for (i = 0; i < agg->p.max_jobs; i++)
		mac_job_clear(mc, &mc->jobs[i]);
	free(mc->jobs);
	free(mc->ctr);
	free(mc);
	agg->mac = NULL;
}

static inline const struct shr_auth_secret *
mac_secret(const struct shr_agg *agg, const struct agg_job *j)
{
	return j != NULL && j->secret.len != 0 ? &j->secret : &agg->secret;
}

int
agg_mac_conf_check(const struct shr_agg *agg, const struct shr_agg_job_conf *conf)
{
	int has_secret = agg->secret.len != 0 || (conf->secret != NULL && conf->secret->len != 0);

	/* a fixed token would reuse one key (and its counters) in every incarnation */
	if (conf->mac && (!has_secret || conf->token != 0 || agg->p.upstream != 0))
		return -EINVAL;
	return 0;
}

void
agg_mac_job_conf(struct shr_agg *agg, const struct agg_job *j, const struct shr_agg_job_conf *conf)
{
	agg->mac->jobs[j - agg->jobs].req = conf->mac != 0;
	if (conf->mac)
		agg->mac_any = 1;
}

size_t
agg_mac_room(const struct shr_agg *agg)
{
	return agg->mac_any ? SHR_PROTO_MAC_LEN : 0;
}

int
agg_mac_required(const struct shr_agg *agg, const struct agg_job *j)
{
	return j->is_static ? agg->mac->jobs[j - agg->jobs].req : agg->p.mac;
}

void
agg_mac_incarnate(struct shr_agg *agg, const struct agg_job *j)
{
	struct agg_mac *mc = agg->mac;
	struct agg_mac_job *mj = &mc->jobs[j - agg->jobs];
	const struct shr_auth_secret *s = mac_secret(agg, j);
	uint8_t key[SHR_MAC_KEY_LEN];
	uint32_t c;

	mj->keyed = 0;
	if (!agg_mac_required(agg, j) || s->len == 0)
		return;
	if (mj->ctx == NULL) {
		mj->ctx = calloc(mc->nctx, sizeof(*mj->ctx));
		if (mj->ctx == NULL)
			return;		/* unkeyed: its messages are refused (fail closed) */
	}
	if (mj->world < j->world) {
		free(mj->win);
		mj->win = NULL;
		mj->world = 0;
		mj->win = malloc((size_t)j->world * mc->nctx * sizeof(*mj->win));
		if (mj->win == NULL)
			return;
		mj->world = j->world;
	}
	memset(mj->win, 0, (size_t)j->world * mc->nctx * sizeof(*mj->win));
	if (shr_mac_derive(s->key, s->len, j->id, j->token, key) < 0)
		return;
	for (c = 0; c < mc->nctx; c++) {
		if (mj->ctx[c] == NULL)
			mj->ctx[c] = shr_mac_create(key);
		else if (shr_mac_rekey(mj->ctx[c], key) < 0)
			goto out;
		if (mj->ctx[c] == NULL)
			goto out;
	}
	mj->id = j->id;
	mj->token = j->token;
	mj->keyed = 1;
out:
	shr_auth_wipe(key, sizeof(key));
}

enum shr_proto_reason
agg_mac_in(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m, const void *msg,
	   size_t len, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct agg_mac *mc = agg->mac;
	const struct agg_job *j;
	struct shr_mac_window *w;
	struct agg_mac_job *mj;
	uint32_t c, snd;
	uint64_t ctr;
	int req, rc;

	if (agg_likely(!agg->mac_any) && !(m->type == SHR_MSG_JOIN && (m->flags & SHR_FLAG_MAC)))
		return SHR_PROTO_OK;
	j = agg_job_find(agg, m->job);
	if (m->type == SHR_MSG_JOIN) {
		/* the members and the box agree on the MAC, or the member hears why not */
		req = j != NULL ? agg_mac_required(agg, j) : agg->p.mac;
		if (((m->flags & SHR_FLAG_MAC) != 0) == (req != 0))
			return SHR_PROTO_OK;
		return agg_join_nack(agg, src, m, EKEYREJECTED,
				     req ? SHR_PROTO_MAC_MISSING : SHR_PROTO_JOB_DTYPE, tx, stats);
	}
	if (m->type != SHR_MSG_DATA && m->type != SHR_MSG_LEAVE)
		return SHR_PROTO_OK;
	/* another incarnation's message is refused (or answered) by the token check alone */
	if (j == NULL || !agg_mac_required(agg, j) || m->token != j->token)
		return SHR_PROTO_OK;
	if (!(m->flags & SHR_FLAG_MAC))
		return SHR_PROTO_MAC_MISSING;
	mj = &mc->jobs[j - agg->jobs];
	if (agg_unlikely(!mj->keyed || mj->token != j->token))
		return SHR_PROTO_MAC_BAD;
	if (m->rank >= j->world)
		return SHR_PROTO_BAD_RANK;
	/*
	 * A LEAVE of another process of the rank than the one bound (offset: its JOIN's nonce):
	 * refused as agg_leave() refuses it (bad_token), before the tag, so that an old
	 * process's LEAVE replayed takes no counter from the window the bound one's needs.
	 */
	if (m->type == SHR_MSG_LEAVE && m->offset != 0 && m->offset != j->nonce[m->rank])
		return SHR_PROTO_BAD_TOKEN;
	/*
	 * What agg_data() and agg_leave() refuse first, from the header and the job alone (no
	 * state read but the job's, none written), before the GMAC (about 650 ns of EVP GCM):
	 * a frame that is not from its rank's bound address, or a DATA for a job not active or
	 * of another world, costs no AES and takes no counter from a replay window; it is
	 * counted as it would be after the MAC (spoofed, unknown_job, bad_rank): mac_bad
	 * counts wrong tags on frames from the rank's own address to a job that runs.
	 */
	if (m->type == SHR_MSG_DATA) {
		if (!j->active)
			return SHR_PROTO_UNKNOWN_JOB;	/* its token is current: no gone record */
		if (m->world != j->world)
			return SHR_PROTO_BAD_RANK;
		if (j->addrs[m->rank] != src)
			return SHR_PROTO_SPOOFED;
	} else if (j->bound[m->rank] && j->addrs[m->rank] != src) {
		return SHR_PROTO_SPOOFED;
	}
	c = agg_mac_ctx(agg, m);
	rc = shr_mac_verify(mj->ctx[c], msg, len, &snd, &ctr);
	if (rc < 0 || snd != m->rank)
		return SHR_PROTO_MAC_BAD;
	w = &mj->win[(size_t)m->rank * mc->nctx + c];
	if (shr_mac_window_check(w, ctr) != 0)
		return SHR_PROTO_MAC_REPLAY;
	shr_mac_window_update(w, ctr);
	return SHR_PROTO_OK;
}

void
agg_mac_rank_reset(struct shr_agg *agg, const struct agg_job *j, uint16_t r)
{
	struct agg_mac *mc = agg->mac;
	struct agg_mac_job *mj;

	if (!agg->mac_any || mc == NULL)
		return;
	mj = &mc->jobs[j - agg->jobs];
	if (mj->win != NULL && r < mj->world)
		memset(&mj->win[(size_t)r * mc->nctx], 0, mc->nctx * sizeof(*mj->win));
}

/* Sign one message (*len bytes at buf, room for cap): 0, or -errno (then not sent). */
static int
mac_sign_one(struct shr_agg *agg, uint8_t *buf, size_t *len, size_t cap, uint32_t c)
{
	struct agg_mac *mc = agg->mac;
	const struct shr_auth_secret *s;
	uint8_t type = buf[3], key[SHR_MAC_KEY_LEN];
	uint32_t id = shr_proto_be32(buf + 8), crc;
	uint64_t token = shr_proto_be64(buf + 48);
	const struct agg_job *j;
	struct agg_mac_job *mj = NULL;
	struct shr_mac *tmp = NULL, *mac;
	uint16_t flags = shr_proto_be16(buf + 20);
	int rc;

	if (agg_likely(!agg->mac_any))
		return 0;
	j = agg_job_find(agg, id);
	if (type == SHR_MSG_JOIN || type == SHR_MSG_DATA ||
	    (type == SHR_MSG_JOIN_ACK && shr_proto_be32(buf + 40) != 0))
		return 0;	/* before admission, or a tree's upstream traffic */
	if (j != NULL) {
		if (!agg_mac_required(agg, j))
			return 0;
		mj = &mc->jobs[j - agg->jobs];
	} else if (!agg->p.mac) {
		return 0;
	}
	if (*len + SHR_MAC_TRAILER_LEN > cap)
		return -ENOSPC;
	if (!(flags & SHR_FLAG_MAC)) {
		buf[20] = (uint8_t)((flags | SHR_FLAG_MAC) >> 8);
		buf[21] = (uint8_t)(flags | SHR_FLAG_MAC);
		crc = shr_crc32c(0, buf, SHR_PROTO_CRC_SPAN);
		if (*len > SHR_PROTO_HDR_LEN)
			crc = shr_crc32c(crc, buf + SHR_PROTO_HDR_LEN, *len - SHR_PROTO_HDR_LEN);
		shr_proto_put_be32(buf + SHR_PROTO_CRC_SPAN, crc);
	}
	if (mj != NULL && mj->keyed && mj->token == token) {
		mac = mj->ctx[c];
	} else {
		/*
		 * An incarnation that has ended: its key again (rare: control answers), only for
		 * a token this box drew (a gone record's). Under any other token (named by a
		 * LEAVE from anyone, or one of another box or an earlier run sharing the secret)
		 * this box's counters would repeat that key's nonces: GMAC's key would leak.
		 */
		if (!agg_gone_token(agg, id, token))
			return -EPERM;
		s = mac_secret(agg, j);
		if (s->len == 0 || shr_mac_derive(s->key, s->len, id, token, key) < 0)
			return -EIO;
		tmp = shr_mac_create(key);
		shr_auth_wipe(key, sizeof(key));
		if (tmp == NULL)
			return -ENOMEM;
		mac = tmp;
	}
	rc = shr_mac_sign(mac, buf, *len, SHR_MAC_SENDER_BOX | c, ++mc->ctr[c].next);
	shr_mac_free(tmp);
	if (rc < 0)
		return rc;
	*len += SHR_MAC_TRAILER_LEN;
	return 0;
}

void
agg_mac_out(struct shr_agg *agg, struct shr_agg_tx *tx, uint32_t c)
{
	size_t len;

	if (tx->len != 0 && mac_sign_one(agg, tx->buf, &tx->len, tx->cap, c) < 0)
		tx->len = 0;	/* unsigned: a member would refuse it anyway */
	if (tx->ack_len != 0) {
		len = tx->ack_len;
		if (mac_sign_one(agg, tx->ack, &len, sizeof(tx->ack), c) < 0)
			len = 0;
		tx->ack_len = (uint32_t)len;
	}
}
