/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The aggregator's message logic: per-job validation of DATA and the slot pool (creation and
 * free are in shr_agg_create.c, the job table, JOIN and incarnations in shr_agg_job.c, LEAVE
 * in shr_agg_leave.c). See shr_agg.h for the contract.
 *
 * Layout choices:
 * - Each pool slot has a tracking record in the agg (when its current round opened, and
 *   which ranks are in it), used only by shr_agg_tick() to find a stuck round and name the
 *   rank missing from it. Records are padded to whole cache lines, so lcores that own
 *   disjoint slots (the lanes) never write the same line.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include <shr_pool.h>
#include <shr_proto_validate.h>

#include "shr_agg_private.h"
#include "shr_agg_mac.h"

#define AGG_TOUCH_NS 1000000ull	/* a job's last_ns is refreshed at most once per ms */

/* splitmix64: spreads a seed; also the fallback generator of tokens. */
static uint64_t
agg_mix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t
agg_token_new(struct shr_agg *agg)
{
	uint64_t t = 0;

	/* The kernel's generator (JOIN is the control path); mixed state if it fails. */
	if (getrandom(&t, sizeof(t), GRND_NONBLOCK) != (ssize_t)sizeof(t))
		t = agg_mix(&agg->rng);
	return t != 0 ? t : 1;
}

size_t
shr_agg_tx_cap(const struct shr_agg *agg)
{
	return SHR_PROTO_HDR_LEN + (size_t)agg->p.max_elems * AGG_MAX_ELEM_SIZE +
	       agg_mac_room(agg);
}

uint32_t
shr_agg_slots_used(const struct shr_agg *agg)
{
	return shr_pool_used(agg->pool);
}

/* Write a payload-less control message into tx, for ndst destinations at dst. */
void
agg_tx_ctrl(struct shr_agg_tx *tx, const struct shr_proto_msg *m, const uint64_t *dst,
	    uint32_t ndst, struct shr_agg_stats *stats)
{
	if (tx->buf == NULL || tx->cap < SHR_PROTO_HDR_LEN || ndst == 0)
		return;
	shr_proto_build(tx->buf, m, NULL, 0);
	tx->len = SHR_PROTO_HDR_LEN;
	tx->dst = dst;
	tx->ndst = ndst;
	stats->tx_msgs++;
	stats->tx_dsts += ndst;
}

/* A control message about job j (its parameters and token) for rank, with aux. */
void
agg_ack_fill(struct shr_proto_msg *a, uint8_t type, const struct agg_job *j, uint32_t job,
	     uint16_t rank, uint32_t aux)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->job = job;
	a->rank = rank;
	a->world = j->world;
	a->dtype = j->dtype;
	a->slot = j->window & SHR_PROTO_SLOT_MASK;
	a->count = j->chunk;
	a->aux = aux;
	a->token = j->token;
	if (type == SHR_MSG_JOIN_ACK && j->repro)
		a->flags = SHR_FLAG_REPRO;
	if (type == SHR_MSG_JOIN_ACK && aux == 0 && j->group != 0) {
		a->flags |= SHR_FLAG_GROUP;
		a->feedback = SHR_AGG_ADDR_IP(j->group);
		a->root = SHR_AGG_ADDR_PORT(j->group);
	}
}

void
shr_agg_stats_add(struct shr_agg_stats *sum, const struct shr_agg_stats *add)
{
	unsigned int i;

	sum->rx += add->rx;
	for (i = 0; i < SHR_PROTO_REASON_MAX; i++)
		sum->rejects[i] += add->rejects[i];
	sum->data += add->data;
	sum->completed += add->completed;
	sum->resent += add->resent;
	sum->nudges += add->nudges;
	sum->hints += add->hints;
	sum->duplicates += add->duplicates;
	sum->bytes_summed += add->bytes_summed;
	sum->tx_msgs += add->tx_msgs;
	sum->tx_dsts += add->tx_dsts;
	sum->joins += add->joins;
	sum->leaves += add->leaves;
	sum->jobs_created += add->jobs_created;
	sum->jobs_freed += add->jobs_freed;
	sum->aborts += add->aborts;
	sum->stale += add->stale;
	sum->reaborts += add->reaborts;
	sum->incarnations += add->incarnations;
	sum->idle_reclaims += add->idle_reclaims;
	sum->challenges += add->challenges;
	sum->challenges_limited += add->challenges_limited;
	sum->mismatches += add->mismatches;
	for (unsigned int k = 0; k < SHR_KIND_MAX; k++)
		sum->kind_rounds[k] += add->kind_rounds[k];
	sum->up_data += add->up_data;
	sum->up_resent += add->up_resent;
	sum->up_results += add->up_results;
	sum->up_stale += add->up_stale;
	sum->up_joins += add->up_joins;
	sum->up_aborts += add->up_aborts;
}

/*
 * The RESULT of a round (its header in r; payload when pay) into buf; returns its length.
 * written: the payload's bytes already in buf (shr_pool_contribute_out()), or 0.
 */
static inline size_t
agg_result_build(uint8_t *buf, const struct agg_job *j, const struct shr_pool_round *rd,
		 uint16_t flags, int pay, uint32_t feedback, uint16_t hint, size_t written)
{
	struct shr_proto_msg r;
	size_t plen = 0;

	if (pay)
		plen = written != 0 ? written : shr_pool_result_write(rd, buf + SHR_PROTO_HDR_LEN);
	agg_round_msg(&r, j, rd);
	r.type = SHR_MSG_RESULT;
	r.rank = hint;
	r.world = j->world;
	r.flags = (flags & SHR_FLAG_LAST) | (pay ? 0 : SHR_FLAG_NOPAYLOAD);
	r.job = j->id;
	r.token = j->token;
	r.feedback = feedback;
	shr_proto_build(buf, &r, buf + SHR_PROTO_HDR_LEN, plen);
	return SHR_PROTO_HDR_LEN + plen;
}

/*
 * Which rank alone is treated apart when a round completes: its destination (it alone gets
 * the payload) for a round of a kind with one, or the source of a relay to every rank (it
 * alone does not). SHR_AGG_NO_SKIP: every rank gets the payload (allreduce, or a tree's relay
 * whose source is elsewhere in the tree). SHR_PROTO_RANK_ALL with one_gets_payload: a tree's
 * round whose destination is elsewhere in the tree: no member here gets the payload.
 */
static inline uint32_t
agg_round_one(const struct agg_job *j, const struct shr_pool_round *rd, int *one_gets_payload)
{
	uint32_t g;

	*one_gets_payload = 1;
	switch (rd->kind) {
	case SHR_KIND_ALLREDUCE:
		return SHR_AGG_NO_SKIP;
	case SHR_KIND_REDUCE:
	case SHR_KIND_REDUCE_SCATTER:
		g = rd->root;
		break;
	default:
		if (rd->aux != SHR_PROTO_RANK_ALL) {
			g = rd->aux;
			break;
		}
		*one_gets_payload = 0;
		g = rd->root;
		break;
	}
	if (agg_likely(!j->tree))
		return g;
	g = agg_tree_member(j, g);
	return g == SHR_PROTO_RANK_ALL && !*one_gets_payload ? SHR_AGG_NO_SKIP : g;
}

/* Whether rank gets the round's payload. */
static inline int
agg_round_pays(const struct agg_job *j, const struct shr_pool_round *rd, uint16_t rank)
{
	int one_pays;
	uint32_t one = agg_round_one(j, rd, &one_pays);

	return one == SHR_AGG_NO_SKIP || (rank == one) == one_pays;
}

/*
 * The RESULT of a completed round into tx: payload to its destinations, the rest acked;
 * feedback: shr_proto_fb_make() of the rank that completed it and the slot's wait; hint: its
 * rank field (agg_hint(), or SHR_PROTO_RANK_ALL).
 */
static inline void
agg_tx_result(struct shr_agg_tx *tx, const struct agg_job *j, const struct shr_pool_round *rd,
	      uint16_t flags, uint32_t feedback, uint16_t hint, size_t written,
	      struct shr_agg_stats *stats)
{
	uint32_t one;
	int one_pays;

	if (agg_unlikely(tx->buf == NULL ||
			 tx->cap < SHR_PROTO_HDR_LEN + (size_t)rd->count * j->esize))
		return;
	one = agg_round_one(j, rd, &one_pays);
	tx->len = agg_result_build(tx->buf, j, rd, flags, one != SHR_PROTO_RANK_ALL, feedback,
				   hint, written);
	stats->tx_msgs++;
	if (one == SHR_AGG_NO_SKIP || one == SHR_PROTO_RANK_ALL) {
		tx->dst = j->addrs;
		tx->ndst = j->world;
		tx->group = j->group;
		stats->tx_dsts += j->world;
		return;
	}
	agg_result_build(tx->ack, j, rd, flags, 0, feedback, hint, 0);
	tx->ack_len = SHR_PROTO_HDR_LEN;
	stats->tx_msgs++;
	stats->tx_dsts += j->world;
	if (one_pays) {
		tx->dst = &j->addrs[one];
		tx->ndst = 1;
		tx->ack_dst = j->addrs;
		tx->ack_ndst = j->world;
		tx->ack_skip = one;
	} else {
		tx->dst = j->addrs;
		tx->ndst = j->world;
		tx->skip = one;
		tx->ack_dst = &j->addrs[one];
		tx->ack_ndst = 1;
	}
}

void
agg_tx_round(struct shr_agg_tx *tx, const struct agg_job *j, const struct shr_pool_round *rd,
	     uint16_t flags, uint32_t feedback, struct shr_agg_stats *stats)
{
	agg_tx_result(tx, j, rd, flags, feedback, SHR_PROTO_RANK_ALL, 0, stats);
}

/* A completed round's RESULT again, to one rank whose copy was lost. */
static inline void
agg_tx_resend(struct shr_agg_tx *tx, const struct agg_job *j, const struct shr_pool_round *rd,
	      uint16_t flags, uint16_t rank, struct shr_agg_stats *stats)
{
	int pay = agg_round_pays(j, rd, rank);

	if (agg_unlikely(tx->buf == NULL ||
			 tx->cap < SHR_PROTO_HDR_LEN + (pay ? (size_t)rd->count * j->esize : 0)))
		return;
	tx->len = agg_result_build(tx->buf, j, rd, flags, pay,
				   shr_proto_fb_make(SHR_PROTO_RANK_ALL, 0), SHR_PROTO_RANK_ALL, 0);
	tx->dst = &j->addrs[rank];
	tx->ndst = 1;
	stats->tx_msgs++;
	stats->tx_dsts++;
}

void
agg_tx_again(struct shr_agg_tx *tx, const struct agg_job *j, const struct shr_pool_round *rd,
	     uint16_t rank, struct shr_agg_stats *stats)
{
	agg_tx_resend(tx, j, rd, 0, rank, stats);
}

/*
 * Whether a DATA's kind, root, destination and payload fit together (see shr_proto.h,
 * "Kinds"). In a tree's job (shr_agg.h, "Trees") root and destination are tree ranks: the
 * source is the member that stands for root. c: the DATA's rank, kind, root and aux (its
 * contribution, being filled); flags: its header's.
 */
static inline int
agg_kind_ok(const struct agg_job *j, const struct shr_pool_contrib *c, uint16_t flags)
{
	int header_only = (flags & SHR_FLAG_NOPAYLOAD) != 0;
	uint32_t lim;

	/* root 0 and a payload, as one test (the common case: every DATA of allreduce) */
	if (agg_likely(c->kind == SHR_KIND_ALLREDUCE))
		return (c->root | (flags & SHR_FLAG_NOPAYLOAD)) == 0;
	lim = j->tree ? SHR_PROTO_MAX_WORLD : j->world;
	if (c->root >= lim)
		return 0;
	if (!shr_proto_kind_relay(c->kind))
		return !header_only;
	if (c->aux == SHR_PROTO_RANK_ALL) {
		if (c->kind != SHR_KIND_BROADCAST && c->kind != SHR_KIND_ALLGATHER)
			return 0;
	} else if (c->aux >= lim || c->aux == c->root ||
		   c->kind == SHR_KIND_BROADCAST || c->kind == SHR_KIND_ALLGATHER) {
		return 0;
	}
	return header_only == !agg_tree_has(j, c->rank, c->root);
}

static inline void
agg_ident_of(struct agg_ident *id, const struct shr_pool_contrib *c)
{
	id->tensor = c->tensor;
	id->step = c->step;
	id->count = c->count;
	id->root = c->root;
	id->kind = c->kind;
	id->pad = 0;
}

/*
 * A member's DATA is out of step with the open round of its copy, in an ordered job (where
 * stale copies were dropped before): the members disagree on the collective. Note it for
 * shr_agg_tick() (the first one only; several data lcores may race for it).
 */
static void
agg_mismatch_note(struct agg_job *j, const struct agg_track *t, const struct shr_pool_contrib *c)
{
	struct agg_mismatch *mm = &j->mm;
	uint32_t none = 0;
	uint16_t r;

	if (__atomic_load_n(&mm->state, __ATOMIC_RELAXED) != 0 ||
	    !__atomic_compare_exchange_n(&mm->state, &none, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	for (r = 0; r < j->world; r++)
		if (t->bits[r >> 6] & (1ull << (r & 63u)))
			break;
	mm->rank = c->rank;
	mm->other = r;
	agg_ident_of(&mm->mine, c);
	mm->theirs = t->open_id;
	__atomic_store_n(&mm->state, 2, __ATOMIC_RELEASE);
}

/* agg_data_gone() for the DATA at h, decoded whole (a rare path, see agg_data()) */
static void
agg_gone_of(struct shr_agg *agg, uint64_t src, const uint8_t *h, uint64_t now_ns,
	    struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg m;

	shr_proto_decode_in(h, &m);
	agg_data_gone(agg, src, &m, now_ns, tx, stats);
}

/*
 * A DATA that shr_proto_validate_in() accepted, at h. Its fields go from the header straight
 * into its contribution c, each read where it is first checked: decoded into a struct
 * shr_proto_msg first, every field would be stored twice (about 50 instructions per DATA).
 */
static inline enum shr_proto_reason
agg_data(struct shr_agg *agg, uint64_t src, const uint8_t *h, uint64_t now_ns,
	 struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_pool_contrib c;
	struct shr_pool_round rd;
	struct agg_track *t;
	struct agg_job *j;
	size_t written;
	void *out = NULL;
	uint32_t fb, slot;
	uint16_t flags;
	int v;

	j = agg_job_find(agg, shr_proto_be32(h + SHR_PROTO_OFF(job)));
	if (agg_unlikely(j == NULL || !j->active)) {
		if (agg->ngone != 0)
			agg_gone_of(agg, src, h, now_ns, tx, stats);
		return SHR_PROTO_UNKNOWN_JOB;
	}
	c.rank = shr_proto_be16(h + SHR_PROTO_OFF(rank));
	if (agg_unlikely(c.rank >= j->world ||
			 shr_proto_be16(h + SHR_PROTO_OFF(world)) != j->world))
		return SHR_PROTO_BAD_RANK;
	if (agg_unlikely(j->addrs[c.rank] != src))
		return SHR_PROTO_SPOOFED;
	if (agg_unlikely(shr_proto_be64(h + SHR_PROTO_OFF(token)) != j->token)) {
		/* A member of an ended incarnation that lost its ABORT is told again. */
		if (agg->ngone != 0)
			agg_gone_of(agg, src, h, now_ns, tx, stats);
		return SHR_PROTO_BAD_TOKEN;
	}
	c.dtype = h[SHR_PROTO_OFF(dtype)];
	if (agg_unlikely(c.dtype != j->dtype))
		return SHR_PROTO_JOB_DTYPE;
	/* count 0 or above the chunk: 0 wraps to UINT32_MAX, so one unsigned compare */
	c.count = shr_proto_be32(h + SHR_PROTO_OFF(count));
	if (agg_unlikely(c.count - 1u >= j->chunk))
		return SHR_PROTO_JOB_COUNT;
	slot = shr_proto_be32(h + SHR_PROTO_OFF(slot));
	if (agg_unlikely((slot & SHR_PROTO_SLOT_MASK) >= j->window))
		return SHR_PROTO_BAD_SLOT;
	flags = shr_proto_be16(h + SHR_PROTO_OFF(flags));
	c.kind = h[SHR_PROTO_OFF(kind)];
	c.root = shr_proto_be16(h + SHR_PROTO_OFF(root));
	c.aux = shr_proto_be32(h + SHR_PROTO_OFF(aux));
	if (agg_unlikely(!agg_kind_ok(j, &c, flags)))
		return SHR_PROTO_BAD_KIND;
	if (agg_unlikely(j->tree) && c.kind != SHR_KIND_ALLREDUCE && !j->tvalid) {
		/*
		 * The members' tree ranks do not tile a range: only allreduce can run.
		 * shr_agg_tick() aborts the job, naming rank.
		 */
		uint32_t none = 0;

		__atomic_compare_exchange_n(&j->up.unsup, &none, (uint32_t)c.rank + 1, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		return SHR_PROTO_BAD_KIND;
	}
	if (agg_unlikely(!j->bound[c.rank])) {
		/*
		 * An active job had every rank bound, so an unbound rank has left, and
		 * addrs[] still holds its address: its late DATA (delayed or duplicated on the
		 * way), valid in every field, is a stale copy.
		 */
		stats->stale++;
		return SHR_PROTO_OK;
	}

	if (agg_unlikely(now_ns - __atomic_load_n(&j->last_ns, __ATOMIC_RELAXED) > AGG_TOUCH_NS))
		agg_job_touch(j, now_ns);
	c.ver = (slot & SHR_PROTO_SLOT_VER) ? 1 : 0;
	slot &= SHR_PROTO_SLOT_MASK;
	c.slot = j->base + slot;
	t = agg_track(agg, c.slot);
	c.step = shr_proto_be32(h + SHR_PROTO_OFF(step));
	c.offset = shr_proto_be64(h + SHR_PROTO_OFF(offset));
	if (j->ordered && t->last_valid) {
		/*
		 * Older than the slot's last completed round: every member has had that
		 * result, so this is a stale copy (duplicated or delayed). The same round,
		 * from a rank already in the next one: stale too. Either could otherwise open
		 * a phantom round on a completed copy and shut the real one out.
		 */
		int32_t ds = (int32_t)(c.step - t->last_step);

		if (ds < 0 || (ds == 0 && (c.offset < t->last_off ||
					   (c.offset == t->last_off && t->open &&
					    (t->bits[c.rank >> 6] >> (c.rank & 63u) & 1u))))) {
			stats->stale++;
			return SHR_PROTO_OK;
		}
	}
	c.op = h[SHR_PROTO_OFF(op)];
	c.world = j->world;
	c.tensor = shr_proto_be32(h + SHR_PROTO_OFF(tensor));
	c.tree = agg_likely(!j->tree) ? 0 : agg_tree_has(j, c.rank, c.root) ?
		 SHR_POOL_TREE_SRC : SHR_POOL_TREE;
	c.payload = (flags & SHR_FLAG_NOPAYLOAD) ? NULL : h + SHR_PROTO_HDR_LEN;
	/* where the RESULT's payload goes: the pool writes it in the pass of the round's last
	 * DATA (a tree's box sends its rounds up instead: agg_up_round()) */
	if (agg_likely(agg->p.upstream == 0) && tx->buf != NULL &&
	    tx->cap >= SHR_PROTO_HDR_LEN + (size_t)c.count * j->esize)
		out = (uint8_t *)tx->buf + SHR_PROTO_HDR_LEN;
	v = shr_pool_contribute_out(agg->pool, &c, &rd, out, &written);
	switch (v) {
	case SHR_POOL_PARTIAL:
		/* A new round (the pool may also have dropped a stale one on this copy). */
		if (!t->open || t->ver != c.ver || t->open_step != c.step ||
		    t->open_off != c.offset) {
			t->open = 1;
			t->ver = c.ver;
			t->open_step = c.step;
			t->open_off = c.offset;
			agg_ident_of(&t->open_id, &c);
			t->since = now_ns;
			memset(t->bits, 0, ((j->world + 63u) >> 6) * sizeof(uint64_t));
		}
		t->bits[c.rank >> 6] |= 1ull << (c.rank & 63u);
		stats->data++;
		if (c.payload != NULL)
			stats->bytes_summed += (uint64_t)c.count * j->esize;
		return SHR_PROTO_OK;
	case SHR_POOL_COMPLETE:
		/* The slot waited from its round's first DATA (none: this one was alone). */
		fb = shr_proto_fb_make(c.rank, t->open && t->ver == c.ver &&
					       t->open_step == c.step && t->open_off == c.offset ?
					       now_ns - t->since : 0);
		t->open = 0;
		t->last_valid = 1;
		t->last_step = rd.step;
		t->last_off = rd.offset;
		stats->data++;
		stats->completed++;
		stats->kind_rounds[rd.kind]++;
		if (c.payload != NULL)
			stats->bytes_summed += (uint64_t)c.count * j->esize;
		if (agg_unlikely(agg->p.upstream != 0))
			agg_up_round(agg, j, t, &rd, flags, fb, now_ns, tx, stats);
		else
			agg_tx_result(tx, j, &rd, flags, fb, agg_hint(agg, j, slot, stats),
				      written, stats);
		return SHR_PROTO_OK;
	case SHR_POOL_RESEND:
		/* a round still waiting for the upstream's result goes up again instead */
		if (agg_unlikely(agg->p.upstream != 0) &&
		    agg_up_resend(agg, j, t, &rd, now_ns, tx, stats))
			return SHR_PROTO_OK;
		stats->resent++;
		agg_tx_resend(tx, j, &rd, flags, c.rank, stats);
		return SHR_PROTO_OK;
	case SHR_POOL_DUPLICATE:
		stats->duplicates++;
		return SHR_PROTO_OK;
	case SHR_POOL_OUT_OF_STEP:
		if (j->ordered && t->open && t->ver == c.ver)
			agg_mismatch_note(j, t, &c);
		return SHR_PROTO_OUT_OF_STEP;
	default:
		/* -EINVAL: an op the dtype does not support (the rest was checked above). */
		return SHR_PROTO_BAD_OP;
	}
}

enum shr_proto_reason
shr_agg_input(struct shr_agg *agg, uint64_t src, const void *msg, size_t len, uint64_t now_ns,
	      struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	const uint8_t *h = msg;
	struct shr_proto_msg m;
	enum shr_proto_reason r;

	agg_tx_reset(tx);
	stats->rx++;
	r = shr_proto_validate_in(msg, len, NULL);
	/* a DATA is decoded by agg_data(); m only where the MAC's hooks or another type need it */
	if (agg_likely(r == SHR_PROTO_OK) &&
	    (agg_unlikely(agg->mac_any) || h[SHR_PROTO_OFF(type)] != SHR_MSG_DATA)) {
		shr_proto_decode_in(msg, &m);
		/* the MAC's hooks only where a job may use it (or a JOIN asks for it) */
		if (agg->mac_any || (m.type == SHR_MSG_JOIN && (m.flags & SHR_FLAG_MAC)))
			r = agg_mac_in(agg, src, &m, msg, len, tx, stats);
	}
	if (agg_likely(r == SHR_PROTO_OK)) {
		switch (h[SHR_PROTO_OFF(type)]) {
		case SHR_MSG_DATA:
			r = agg_data(agg, src, h, now_ns, tx, stats);
			break;
		case SHR_MSG_JOIN:
			r = agg_join(agg, src, &m, h + SHR_PROTO_HDR_LEN, len - SHR_PROTO_HDR_LEN,
				     now_ns, tx, stats);
			break;
		case SHR_MSG_LEAVE:
			r = agg_leave(agg, src, &m, now_ns, tx, stats);
			break;
		default:
			/* RESULT, JOIN_ACK, LEAVE_ACK, ABORT: only from this box's upstream box */
			r = agg_up_input(agg, src, &m, h + SHR_PROTO_HDR_LEN,
					 len - SHR_PROTO_HDR_LEN, now_ns, tx, stats);
			break;
		}
	}
	if (agg_unlikely(agg->mac_any) && (tx->len != 0 || tx->ack_len != 0)) {
		/* something to send: the header was valid, but a DATA's m may not be decoded */
		shr_proto_decode_in(msg, &m);
		agg_mac_out(agg, tx, tx->ndst != 0 && m.type == SHR_MSG_DATA ?
				     agg_mac_ctx(agg, &m) : agg->p.lanes);
	}
	if (agg_unlikely(r != SHR_PROTO_OK) && (unsigned int)r < SHR_PROTO_REASON_MAX)
		stats->rejects[r]++;
	return r;
}
