/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_AGG_PRIVATE_H
#define SHR_AGG_PRIVATE_H

/*
 * Shared by shr_agg.c (the data path), shr_agg_create.c (creation, free), shr_agg_job.c (the
 * job table, JOIN, incarnations), shr_agg_leave.c (LEAVE), shr_agg_tick.c (the bounds in
 * time) and the other shr_agg_*.c. Not installed.
 */

#include <stdbool.h>
#include <stdint.h>

#include <shr_pool.h>

#include "shr_agg.h"

#define AGG_LINE 64u
#define AGG_UP_LEAVE_MAX 16u	/* trees: LEAVEs queued for upstream (more: dropped, the
				 * upstream reclaims the idle job) */
#define AGG_UP_LEAVE_TRIES 20u	/* trees: a LEAVE upstream is sent until answered, at most
				 * this many times, SHR_AGG_UP_JOIN_GAP_NS apart */
#define AGG_MAX_ELEM_SIZE 4u

#define agg_likely(x) __builtin_expect(!!(x), 1)
#define agg_unlikely(x) __builtin_expect(!!(x), 0)

/* A round's identity beyond its slot and offset, as a member sent it. */
struct agg_ident {
	uint32_t tensor;
	uint32_t step;
	uint32_t count;
	uint16_t root;
	uint8_t kind;
	uint8_t pad;
};

/*
 * Two members that disagree on a round (its collective, root, tensor, step or count), noted
 * by the data lcore that saw it and acted on by shr_agg_tick() on the control lcore, which
 * aborts the job with EPROTO naming both (see SHR_MSG_ABORT in shr_proto.h).
 */
struct agg_mismatch {
	uint32_t state;		/* 0: none; 1: being written; 2: ready (release/acquire) */
	uint16_t rank;		/* the member whose DATA disagreed with the open round */
	uint16_t other;		/* a member of that open round (its lowest rank) */
	struct agg_ident mine;	/* rank's round */
	struct agg_ident theirs; /* the open round */
};

/* Trees: a job's membership of the job of the same id on the upstream box. */
enum agg_up_state {
	AGG_UP_NONE,		/* no upstream (or it ended the job) */
	AGG_UP_JOINING,		/* every member joined: joining upstream */
	AGG_UP_ACTIVE,		/* admitted upstream */
};

struct agg_up {
	uint8_t state;		/* enum agg_up_state */
	uint8_t blamed;		/* the job ends because of the upstream (its ABORT, silence) */
	uint8_t rejoined;	/* JOINING: JOINed again at once for an activation it could
				 * not check (agg_up_join_ack()) */
	uint16_t lanes;		/* the upstream box's lanes (its JOIN_ACK) */
	uint16_t blame_rank;	/* blamed: the rank it named (RANK_ALL: none) */
	uint32_t blame_ip;	/* blamed: that rank's IPv4 (0: not known) */
	uint64_t blame_box;	/* blamed: the box that named it (this box's upstream, or one
				 * further up whose ABORT came down the tree) */
	uint32_t unsup;		/* rank + 1 of a member that sent a kind trees do not carry */
	uint64_t nonce;		/* of this box's JOIN upstream */
	uint64_t token;		/* the upstream incarnation's token */
	uint64_t join_ns;	/* first JOIN sent upstream */
	uint64_t next_join_ns;	/* JOINING: next JOIN due */
	uint64_t dst;		/* where the last upstream DATA went (tx->dst points here) */
	uint64_t srtt_ns;	/* smoothed round trip to the upstream (0: no sample yet) */
};

struct agg_job {
	uint32_t id;
	uint16_t world;
	uint16_t joined;	/* ranks bound (fixed jobs: ranks that joined this incarnation) */
	uint8_t dtype;
	uint8_t esize;		/* bytes per element on the wire */
	uint8_t used;		/* entry occupied */
	uint8_t active;		/* all ranks have joined (or fixed addresses) */
	uint8_t is_static;	/* from shr_agg_job_add() */
	uint8_t fixed;		/* static with configured addresses */
	uint8_t ordered;	/* rounds come in (step, offset) order: drop stale copies */
	uint32_t incarnation;	/* this incarnation's number (shr_agg_job_info) */
	uint8_t has_slots;	/* base/window reserved in the pool */
	uint8_t repro;		/* reproducible: its window is in the pool's exact slots */
	uint32_t window;	/* slots granted */
	uint32_t req_window;	/* slot field of the JOIN that created it */
	uint32_t req_chunk;	/* count of the JOIN that created it (0: the largest chunk
				 * every member's path carries); static: the chunk */
	uint32_t chunk;		/* elements per chunk */
	uint32_t base;		/* first pool slot */
	uint32_t creator_ip;	/* IPv4 of the JOIN that created it (dynamic jobs) */
	uint64_t token;		/* the current incarnation's token */
	uint64_t cfg_token;	/* static: every incarnation's token (0: drawn at random) */
	uint64_t created_ns;	/* the incarnation started (first JOIN) */
	uint64_t last_ns;	/* last message from a member (several lcores store it) */
	uint64_t *addrs;	/* world entries, rank order */
	uint8_t *bound;		/* world entries: rank bound to addrs[rank] (AGG_BOUND, and
				 * AGG_BOUND_GROUP if its JOIN carried SHR_FLAG_GROUP) */
	uint64_t group;		/* the result group's address while active (0: none) */
	uint8_t *left;		/* world entries, fixed jobs: rank left this incarnation */
	uint64_t *nonce;	/* world entries: nonce of the JOIN that bound the rank */
	struct shr_auth_secret secret; /* static: the job's own secret (len 0: the default) */
	struct agg_mismatch mm;	/* a disagreement to abort the job for */
	struct agg_up up;	/* trees: the upstream membership */
	uint32_t *trank;	/* world entries, trees: the tree ranks a rank stands for, first
				 * << 16 | how many (0: none given, the rank itself) */
	uint8_t tree;		/* trees: root and aux are tree ranks (a member stands for tree
				 * ranks, or the box has an upstream) */
	uint8_t tvalid;		/* trees: the members' tree ranks tile tlo .. tlo + tspan - 1 */
	uint16_t tlo;		/* trees: the first tree rank of this box's members */
	uint16_t tspan;		/* trees: how many (0: not a tiling) */
};

/* A member of an incarnation that has ended. */
struct agg_gone_mem {
	uint64_t addr;
	uint64_t nonce;		/* of its JOIN (0: never joined by JOIN) */
	uint64_t next_ns;	/* no ABORT again before this (rate limit) */
	uint32_t answers;	/* ABORTs sent again */
	uint8_t bound;		/* was a member (told of the abort) */
};

/* An incarnation that has ended: enough to tell a member that lost the ABORT, again, and
 * to recognise a late JOIN of one of its members. */
struct agg_gone {
	uint32_t id;
	uint8_t used;
	uint8_t aborted;	/* 1: aborted (members are told again); 0: all left */
	uint16_t world;
	uint64_t token;
	struct shr_proto_msg abort; /* aborted: the ABORT the members were sent */
	uint64_t expires;
	struct agg_gone_mem *mem; /* world entries, rank order */
};

/* Per-slot tracking record; bits[] has max_world bits; padded to a cache line multiple. */
struct agg_track {
	uint64_t since;		/* when the open round got its first contribution */
	uint8_t open;
	uint8_t ver;
	uint8_t last_valid;	/* last_step/last_off hold the last completed round */
	uint8_t pad;
	uint32_t last_step;
	uint64_t last_off;
	uint32_t open_step;	/* identity of the open round */
	uint32_t pad2;
	uint64_t open_off;
	struct agg_ident open_id; /* the rest of it (tells a mismatch) */
	uint64_t up_since;	/* trees: the completed round went upstream (up_pend) */
	uint64_t up_tx;		/* trees: its DATA was last sent upstream */
	uint32_t up_fb;		/* trees: its RESULT's feedback (local completion) */
	uint8_t up_pend;	/* trees: copy up_ver waits for the upstream's result */
	uint8_t up_ver;
	uint8_t up_nrtx;	/* trees: sent up again on the box's timer */
	uint8_t pad3;
	uint64_t nudge_ns;	/* the last sweep of shr_agg_nudge.c over this slot */
	uint32_t nudge_next;	/* 0, or the rank that sweep goes on from */
	uint32_t pad4;
	uint64_t bits[];	/* ranks in the open round */
};

struct shr_agg {
	struct shr_agg_params p;
	struct shr_pool *pool;
	struct agg_job *jobs;	/* max_jobs entries */
	uint32_t *hash;		/* job index + 1, 0 = empty */
	uint32_t hmask;
	uint32_t njobs;
	size_t track_rec;	/* bytes of one tracking record */
	uint8_t *track;		/* nslots records */
	uint64_t *addr_store;	/* max_jobs * max_world */
	uint8_t *bound_store;	/* max_jobs * max_world */
	uint8_t *left_store;	/* max_jobs * max_world */
	uint64_t *nonce_store;	/* max_jobs * max_world */
	uint32_t *trank_store;	/* max_jobs * max_world */
	uint64_t *scratch;	/* control-path destinations, max_world + 1 (control lcore) */
	struct agg_gone *gone;	/* ngone_max records of ended incarnations */
	struct agg_gone_mem *gone_mem; /* ngone_max * max_world */
	uint32_t ngone_max;
	uint32_t ngone;		/* records in use */
	uint64_t gone_gap;	/* rate limit of the ABORTs sent again, per member */
	uint32_t shut_idx;	/* shr_agg_shutdown(): next job entry to look at */
	uint64_t rng;		/* token generator state */
	uint64_t ch_tat;	/* challenges' rate: when the next is due (GCRA; control path) */
	struct shr_auth_box auth; /* the key of this box's challenges */
	struct shr_auth_acl allow; /* member subnets (empty: any) */
	struct shr_auth_secret secret; /* the default secret (len 0: none) */
	struct agg_mac *mac;	/* the message authentication code (shr_agg_mac.c) */
	uint32_t mac_any;	/* the box's policy or a static job requires the MAC: the data
				 * path calls into shr_agg_mac.c only then (or for a JOIN
				 * that asks for it) */
	uint32_t inc_seq;	/* incarnations begun, all jobs (agg_job_incarnate) */
	/* trees: LEAVEs owed upstream (jobs that ended), sent by shr_agg_tick() */
	struct agg_up_leave {
		uint32_t job;
		uint32_t aux;
		uint64_t token;
		uint64_t next_ns;	/* sent again from then on, unless answered */
		uint32_t tries;
	} up_leave[AGG_UP_LEAVE_MAX];
	uint32_t up_nleave;
};

static inline struct agg_track *
agg_track(const struct shr_agg *agg, uint32_t slot)
{
	return (struct agg_track *)(void *)(agg->track + (size_t)slot * agg->track_rec);
}

static inline uint32_t
agg_hash_home(const struct shr_agg *agg, uint32_t id)
{
	uint32_t h = id * 0x9e3779b1u;

	return (h ^ (h >> 15)) & agg->hmask;
}

static inline struct agg_job *
agg_job_find(const struct shr_agg *agg, uint32_t id)
{
	uint32_t i = agg_hash_home(agg, id);

	for (;;) {
		uint32_t e = agg->hash[i];
		struct agg_job *j;

		if (e == 0)
			return NULL;
		j = &agg->jobs[e - 1];
		if (j->id == id)
			return j;
		i = (i + 1) & agg->hmask;
	}
}

/* A member's message: the job is not idle (relaxed: several lanes store it at once). */
static inline void
agg_job_touch(struct agg_job *j, uint64_t now_ns)
{
	__atomic_store_n(&j->last_ns, now_ns, __ATOMIC_RELAXED);
}

/* A message about round rd of j: its identity (the caller sets type, rank, world, flags,
 * job, token and feedback). */
static inline void
agg_round_msg(struct shr_proto_msg *m, const struct agg_job *j, const struct shr_pool_round *rd)
{
	m->dtype = rd->dtype;
	m->op = rd->op;
	m->ver = rd->ver;
	m->slot = rd->slot - j->base;
	m->count = rd->count;
	m->tensor = rd->tensor;
	m->step = rd->step;
	m->offset = rd->offset;
	m->aux = rd->aux;
	m->kind = rd->kind;
	m->root = rd->root;
}

/* agg_job::bound[r]: the rank is bound; its JOIN offered a result group (SHR_FLAG_GROUP). */
#define AGG_BOUND 1u
#define AGG_BOUND_GROUP 2u

/* Nothing to send yet. */
static inline void
agg_tx_reset(struct shr_agg_tx *tx)
{
	tx->len = 0;
	tx->group = 0;
	tx->ndst = 0;
	tx->dst = NULL;
	tx->skip = SHR_AGG_NO_SKIP;
	tx->ack_len = 0;
	tx->ack_ndst = 0;
	tx->ack_dst = NULL;
	tx->ack_skip = SHR_AGG_NO_SKIP;
	tx->unproven = 0;
}

/* shr_agg.c */
void agg_tx_ctrl(struct shr_agg_tx *tx, const struct shr_proto_msg *m, const uint64_t *dst,
		 uint32_t ndst, struct shr_agg_stats *stats);
void agg_ack_fill(struct shr_proto_msg *a, uint8_t type, const struct agg_job *j, uint32_t job,
		  uint16_t rank, uint32_t aux);
uint64_t agg_token_new(struct shr_agg *agg);

/* shr_agg_admit.c */
enum shr_proto_reason agg_admit(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
				const uint8_t *adm, size_t adm_len, uint64_t now_ns,
				struct shr_agg_tx *tx, struct shr_agg_stats *stats,
				bool *admitted);

/* shr_agg_gone.c */
void agg_gone_expire(struct shr_agg *agg, uint64_t now_ns);
void agg_gone_add(struct shr_agg *agg, const struct agg_job *j,
		  const struct shr_proto_msg *abort, uint64_t now_ns);
void agg_gone_answer(struct shr_agg *agg, const struct agg_gone *g, struct agg_gone_mem *gm,
		     uint64_t dst, uint64_t nonce, uint64_t now_ns, struct shr_agg_tx *tx,
		     struct shr_agg_stats *stats);
struct agg_gone *agg_gone_of_join(const struct shr_agg *agg, const struct shr_proto_msg *m,
				  uint64_t now_ns);
bool agg_gone_left(const struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
		   uint64_t now_ns);
/* Whether token is that of an incarnation of job id that this box ran and remembers. */
bool agg_gone_token(const struct shr_agg *agg, uint32_t id, uint64_t token);
void agg_data_gone(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
		   uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats);

/* shr_agg.c */
void agg_tx_round(struct shr_agg_tx *tx, const struct agg_job *j,
		  const struct shr_pool_round *rd, uint16_t flags, uint32_t feedback,
		  struct shr_agg_stats *stats);

void agg_tx_again(struct shr_agg_tx *tx, const struct agg_job *j,
		  const struct shr_pool_round *rd, uint16_t rank, struct shr_agg_stats *stats);

/* shr_agg_nudge.c */
uint16_t agg_hint(const struct shr_agg *agg, const struct agg_job *j, uint32_t slot,
		  struct shr_agg_stats *stats);
bool agg_nudge(struct shr_agg *agg, struct agg_job *j, uint32_t slot, uint64_t now_ns,
	       struct shr_agg_tx *tx, struct shr_agg_stats *stats);

/* shr_agg_tree.c */
int agg_up_check(const struct shr_agg_params *p);
enum shr_proto_reason agg_up_join(struct shr_agg *agg, struct agg_job *j, uint64_t now_ns,
				  struct shr_agg_tx *tx, struct shr_agg_stats *stats);
void agg_up_end(struct shr_agg *agg, struct agg_job *j, uint32_t aux);
void agg_up_abort_fill(const struct shr_agg *agg, const struct agg_job *j,
		       struct shr_proto_msg *a);
void agg_up_round(struct shr_agg *agg, struct agg_job *j, struct agg_track *t,
		  const struct shr_pool_round *rd, uint16_t flags, uint32_t feedback,
		  uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats);
bool agg_up_resend(struct shr_agg *agg, struct agg_job *j, struct agg_track *t,
		   const struct shr_pool_round *rd, uint64_t now_ns, struct shr_agg_tx *tx,
		   struct shr_agg_stats *stats);
enum shr_proto_reason agg_up_input(struct shr_agg *agg, uint64_t src,
				   const struct shr_proto_msg *m, const uint8_t *payload,
				   size_t plen, uint64_t now_ns, struct shr_agg_tx *tx,
				   struct shr_agg_stats *stats);
int agg_up_tick(struct shr_agg *agg, uint64_t now_ns, struct shr_agg_tx *tx,
		struct shr_agg_stats *stats);
uint32_t agg_up_pending(const struct shr_agg *agg, const struct agg_job *j);
int agg_tree_bind(struct agg_job *j, uint16_t rank, const struct shr_proto_msg *m);
void agg_tree_span(struct agg_job *j);
uint32_t agg_tree_member(const struct agg_job *j, uint32_t g);

/* Trees: the first tree rank that member r of j stands for. */
static inline uint32_t
agg_tree_first(const struct agg_job *j, uint16_t r)
{
	return j->trank[r] != 0 ? j->trank[r] >> 16 : r;
}

/* Trees: how many tree ranks member r of j stands for. */
static inline uint32_t
agg_tree_count(const struct agg_job *j, uint16_t r)
{
	return j->trank[r] != 0 ? j->trank[r] & 0xffffu : 1;
}

/* Whether member r of j stands for rank g (a tree rank in a tree's job, else a rank of j). */
static inline int
agg_tree_has(const struct agg_job *j, uint16_t r, uint32_t g)
{
	if (!j->tree)
		return r == g;
	return g - agg_tree_first(j, r) < agg_tree_count(j, r);
}

/* shr_agg_job.c */
enum shr_proto_reason agg_job_activate(struct shr_agg *agg, struct agg_job *j, uint64_t now_ns,
				       struct shr_agg_tx *tx, struct shr_agg_stats *stats);
void agg_abort(struct shr_agg *agg, struct agg_job *j, uint16_t rank, uint32_t err,
	       bool remember, uint64_t now_ns, struct shr_agg_tx *tx,
	       struct shr_agg_stats *stats);
void agg_join_ack_of(const struct shr_agg *agg, const struct shr_proto_msg *m, uint32_t err,
		     struct shr_proto_msg *a);
enum shr_proto_reason agg_join_nack(struct shr_agg *agg, uint64_t src,
				    const struct shr_proto_msg *m, uint32_t err,
				    enum shr_proto_reason reason, struct shr_agg_tx *tx,
				    struct shr_agg_stats *stats);
void agg_track_reset(struct shr_agg *agg, uint32_t base, uint32_t n);
/* Free j's entry (and its slots); shr_agg_leave.c frees a job all of whose ranks gave up. */
void agg_job_release(struct shr_agg *agg, struct agg_job *j);
/* Every member of j's incarnation has left: remember it, then free j or start over. */
void agg_job_ended(struct shr_agg *agg, struct agg_job *j, uint64_t now_ns,
		   struct shr_agg_stats *stats);
enum shr_proto_reason agg_join(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
			       const uint8_t *adm, size_t adm_len, uint64_t now_ns,
			       struct shr_agg_tx *tx, struct shr_agg_stats *stats);

/* shr_agg_leave.c */
enum shr_proto_reason agg_leave(struct shr_agg *agg, uint64_t src,
				const struct shr_proto_msg *m, uint64_t now_ns,
				struct shr_agg_tx *tx, struct shr_agg_stats *stats);

#endif /* SHR_AGG_PRIVATE_H */
