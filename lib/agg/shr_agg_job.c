/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The aggregator's job table: membership (JOIN) and incarnations; LEAVE is in
 * shr_agg_leave.c, the lifecycle bounds (shr_agg_tick, shr_agg_shutdown) in shr_agg_tick.c,
 * the records of incarnations that have ended in shr_agg_gone.c, admission in
 * shr_agg_admit.c. See shr_agg.h for the contract.
 *
 * Layout: jobs live in a fixed array of max_jobs entries; an open-addressed hash (linear
 * probing, backward-shift deletion, at least twice as many buckets as entries) maps a job id
 * to its entry. Each entry owns a fixed stripe of the address, binding and nonce arrays, so
 * JOIN never allocates. A job made by JOIN holds no pool slots until its last rank has
 * joined: a pending job costs one entry, whatever window it asks for.
 */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "shr_agg_private.h"
#include "shr_agg_mac.h"


static void
agg_hash_insert(struct shr_agg *agg, uint32_t idx)
{
	uint32_t i = agg_hash_home(agg, agg->jobs[idx].id);

	while (agg->hash[i] != 0)
		i = (i + 1) & agg->hmask;
	agg->hash[i] = idx + 1;
}

static void
agg_hash_remove(struct shr_agg *agg, uint32_t idx)
{
	uint32_t i = agg_hash_home(agg, agg->jobs[idx].id);
	uint32_t j;

	while (agg->hash[i] != idx + 1)
		i = (i + 1) & agg->hmask;
	/* Backward shift: pull later entries of the probe run into the hole. */
	j = i;
	for (;;) {
		uint32_t k;

		j = (j + 1) & agg->hmask;
		if (agg->hash[j] == 0)
			break;
		k = agg_hash_home(agg, agg->jobs[agg->hash[j] - 1].id);
		/* The entry at j may move to i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		agg->hash[i] = agg->hash[j];
		i = j;
	}
	agg->hash[i] = 0;
}

void
agg_track_reset(struct shr_agg *agg, uint32_t base, uint32_t n)
{
	uint32_t s;

	for (s = base; s < base + n; s++) {
		struct agg_track *t = agg_track(agg, s);

		t->open = 0;
		t->last_valid = 0;
		/* trees: a round of the last job waiting upstream is not the next job's (its
		 * age aborted every job given these slots), nor a nudge sweep under way */
		t->up_pend = 0;
		t->up_nrtx = 0;
		t->nudge_next = 0;
		t->nudge_ns = 0;
	}
}

/* A new incarnation of j: a new token, nobody has joined it yet, fresh rounds. */
static void
agg_job_incarnate(struct shr_agg *agg, struct agg_job *j, uint64_t now_ns)
{
	uint32_t s;

	agg_up_end(agg, j, 0);
	memset(&j->up, 0, sizeof(j->up));
	j->token = j->cfg_token != 0 ? j->cfg_token : agg_token_new(agg);
	j->incarnation = ++agg->inc_seq;
	memset(j->nonce, 0, j->world * sizeof(*j->nonce));
	memset(j->left, 0, j->world);
	j->created_ns = now_ns;
	j->last_ns = 0;
	j->group = 0;		/* until it is active again */
	j->tree = agg->p.upstream != 0;	/* until a JOIN brings tree ranks again */
	agg_mac_incarnate(agg, j);
	__atomic_store_n(&j->mm.state, 0, __ATOMIC_RELEASE);
	if (!j->has_slots)
		return;
	for (s = j->base; s < j->base + j->window; s++)
		shr_pool_slot_reset(agg->pool, s);
	agg_track_reset(agg, j->base, j->window);
}

/* Take a free entry (no slots yet) and enter it in the hash. */
static struct agg_job *
agg_job_new(struct shr_agg *agg, uint32_t id, uint16_t world, uint8_t dtype, uint32_t window,
	    uint32_t chunk, uint64_t now_ns)
{
	struct agg_job *j = NULL;
	uint32_t idx;

	for (idx = 0; idx < agg->p.max_jobs; idx++) {
		if (!agg->jobs[idx].used) {
			j = &agg->jobs[idx];
			break;
		}
	}
	if (j == NULL)
		return NULL;
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->world = world;
	j->dtype = dtype;
	j->esize = (uint8_t)shr_proto_dtype_size(dtype);
	j->window = window;
	j->chunk = chunk;
	j->addrs = agg->addr_store + (size_t)idx * agg->p.max_world;
	j->bound = agg->bound_store + (size_t)idx * agg->p.max_world;
	j->left = agg->left_store + (size_t)idx * agg->p.max_world;
	j->nonce = agg->nonce_store + (size_t)idx * agg->p.max_world;
	j->trank = agg->trank_store + (size_t)idx * agg->p.max_world;
	memset(j->bound, 0, world);
	memset(j->trank, 0, world * sizeof(*j->trank));
	j->tree = agg->p.upstream != 0;
	j->used = 1;
	agg_job_incarnate(agg, j, now_ns);
	agg_hash_insert(agg, idx);
	agg->njobs++;
	return j;
}

/* Reserve j's window in the pool: 0 or -ENOSPC. */
static int
agg_job_slots(struct shr_agg *agg, struct agg_job *j)
{
	int base = j->repro ? shr_pool_range_alloc_exact(agg->pool, j->window) :
			      shr_pool_range_alloc(agg->pool, j->window);

	if (base < 0)
		return -ENOSPC;
	j->base = (uint32_t)base;
	j->has_slots = 1;
	agg_track_reset(agg, j->base, j->window);
	return 0;
}

void
agg_job_release(struct shr_agg *agg, struct agg_job *j)
{
	agg_up_end(agg, j, 0);
	if (j->has_slots) {
		agg_track_reset(agg, j->base, j->window);
		shr_pool_range_free(agg->pool, j->base, j->window);
	}
	agg_hash_remove(agg, (uint32_t)(j - agg->jobs));
	memset(j->bound, 0, j->world);
	j->used = 0;
	j->active = 0;
	j->joined = 0;
	j->has_slots = 0;
	agg->njobs--;
}

/* Jobs made by JOINs from IPv4 address ip that are still in the table. */
static uint32_t
agg_src_jobs(const struct shr_agg *agg, uint32_t ip)
{
	uint32_t idx, n = 0;

	for (idx = 0; idx < agg->p.max_jobs; idx++) {
		const struct agg_job *j = &agg->jobs[idx];

		n += j->used && !j->is_static && j->creator_ip == ip;
	}
	return n;
}

/* --- ending an incarnation --- */

/*
 * Tell the bound members of j that its incarnation is torn down, naming rank, and free j
 * (made by JOIN) or start a new incarnation of it (static). With remember, the incarnation is
 * remembered for a while: a member that lost this ABORT is told again when its DATA or JOIN
 * comes in, and a late JOIN of one of its members cannot join another incarnation.
 */
static void
agg_abort_ex(struct shr_agg *agg, struct agg_job *j, uint16_t rank, uint32_t err, bool remember,
	     uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats,
	     const struct shr_proto_msg *join, uint64_t join_src, uint32_t feedback)
{
	struct shr_proto_msg a;
	uint32_t n = 0;
	uint16_t r;

	for (r = 0; r < j->world; r++)
		if (j->bound[r])
			agg->scratch[n++] = j->addrs[r];
	agg_ack_fill(&a, SHR_MSG_ABORT, j, j->id, rank, err);
	if (err == EPROTO && __atomic_load_n(&j->mm.state, __ATOMIC_ACQUIRE) == 2) {
		/* both sides of the disagreement (shr_proto.h, ABORT) */
		const struct agg_mismatch *mm = &j->mm;

		a.kind = mm->mine.kind;
		a.root = mm->mine.root;
		a.tensor = mm->mine.tensor;
		a.step = mm->mine.step;
		a.count = mm->mine.count;
		a.slot = mm->other;
		a.offset = (uint64_t)mm->theirs.tensor << 32 | mm->theirs.step;
		a.feedback = mm->theirs.count;
		a.op = mm->theirs.kind;
		a.flags = mm->theirs.root;
	}
	if (j->up.blamed)
		agg_up_abort_fill(agg, j, &a);	/* the upstream box ended it */
	else if (err != EPROTO && rank < j->world)
		a.feedback = SHR_AGG_ADDR_IP(j->addrs[rank]);
	if (join != NULL) {
		/* also the answer to a JOIN that caused it (echoing its nonce): once, if its
		 * rank is bound at that address (scratch has room for one more either way) */
		if (!(join->rank < j->world && j->bound[join->rank] &&
		      j->addrs[join->rank] == join_src))
			agg->scratch[n++] = join_src;
		a.offset = join->token;
		a.feedback = feedback;
	}
	agg_up_end(agg, j, ECONNABORTED);	/* a tree: the upstream job ends with it */
	agg_tx_ctrl(tx, &a, agg->scratch, n, stats);
	stats->aborts++;
	if (remember && n != 0)
		agg_gone_add(agg, j, &a, now_ns);
	if (!j->is_static) {
		agg_job_release(agg, j);
		stats->jobs_freed++;
		return;
	}
	if (!j->fixed) {
		memset(j->bound, 0, j->world);
		j->joined = 0;
		j->active = 0;
	}
	agg_job_incarnate(agg, j, now_ns);
}

void
agg_abort(struct shr_agg *agg, struct agg_job *j, uint16_t rank, uint32_t err, bool remember,
	  uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	agg_abort_ex(agg, j, rank, err, remember, now_ns, tx, stats, NULL, 0, 0);
}

/* Every member of j's incarnation has left: remember it, then free j or start over. */
void
agg_job_ended(struct shr_agg *agg, struct agg_job *j, uint64_t now_ns,
	      struct shr_agg_stats *stats)
{
	agg_gone_add(agg, j, NULL, now_ns);
	if (!j->is_static) {
		agg_job_release(agg, j);
		stats->jobs_freed++;
		return;
	}
	if (!j->fixed)
		j->active = 0;
	agg_job_incarnate(agg, j, now_ns);
}

/* --- JOIN --- */

/* The JOIN_ACK that answers JOIN m with status err (the JOIN's fields and nonce echoed). */
void
agg_join_ack_of(const struct shr_agg *agg, const struct shr_proto_msg *m, uint32_t err,
		struct shr_proto_msg *a)
{
	memset(a, 0, sizeof(*a));
	a->type = SHR_MSG_JOIN_ACK;
	a->job = m->job;
	a->rank = m->rank;
	a->world = m->world;
	a->dtype = m->dtype;
	a->slot = m->slot;
	a->count = m->count;
	a->tensor = agg->p.lanes;
	a->aux = err;
	a->offset = m->token;
	a->flags = m->flags & SHR_FLAG_REPRO;
}

/*
 * JOIN_ACK EMSGSIZE, to the sender alone: the job's chunk does not fit the sender's path (or
 * the box's port); count = that chunk, feedback = the largest that fits.
 */
static enum shr_proto_reason
agg_join_too_big(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
		 uint32_t chunk, uint32_t fit, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg a;

	agg_join_ack_of(agg, m, EMSGSIZE, &a);
	a.count = chunk;
	a.feedback = fit;
	agg->scratch[0] = src;
	agg_tx_ctrl(tx, &a, agg->scratch, 1, stats);
	return SHR_PROTO_PATH_MTU;
}

/* The largest chunk a JOIN's sender can take: the box's, less if the sender's path says so. */
static inline uint32_t
agg_join_fit(const struct shr_agg *agg, const struct shr_proto_msg *m)
{
	return m->feedback != 0 && m->feedback < agg->p.max_elems ? m->feedback :
	       agg->p.max_elems;
}

/* A member binds to j, still filling: a job whose chunk is negotiated takes its path's. */
static inline void
agg_join_narrow(const struct shr_agg *agg, struct agg_job *j, const struct shr_proto_msg *m)
{
	uint32_t fit = agg_join_fit(agg, m);

	if (j->req_chunk == 0 && !j->active && fit < j->chunk)
		j->chunk = fit;
}

/* JOIN_ACK with an error, to the sender alone; the reason is what the caller counts. */
enum shr_proto_reason
agg_join_nack(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m, uint32_t err,
	      enum shr_proto_reason reason, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg a;

	agg_join_ack_of(agg, m, err, &a);
	agg->scratch[0] = src;
	agg_tx_ctrl(tx, &a, agg->scratch, 1, stats);
	return reason;
}

/* What bound[r] holds for a rank bound by JOIN m. */
static inline uint8_t
agg_bound_of(const struct shr_proto_msg *m)
{
	return AGG_BOUND | ((m->flags & SHR_FLAG_GROUP) ? AGG_BOUND_GROUP : 0);
}

/*
 * The result group's address for j, now active (0: none): the box has one, j's members are
 * bound by JOIN (not fixed addresses) and every one of them offered it. Entry i of the job
 * table has port group_port + i, so no two live jobs share one.
 */
static uint64_t
agg_job_group(const struct shr_agg *agg, const struct agg_job *j)
{
	uint16_t r;

	if (agg->p.group_ip == 0 || j->fixed)
		return 0;
	for (r = 0; r < j->world; r++)
		if (!(j->bound[r] & AGG_BOUND_GROUP))
			return 0;
	return SHR_AGG_ADDR(agg->p.group_ip, agg->p.group_port + (uint32_t)(j - agg->jobs));
}

/* JOIN_ACK to the member at src that sent m: joined (active job), or still filling. */
static void
agg_join_reply(struct shr_agg *agg, const struct agg_job *j, uint64_t src,
	       const struct shr_proto_msg *m, uint64_t now_ns, struct shr_agg_tx *tx,
	       struct shr_agg_stats *stats)
{
	uint64_t wait = SHR_AGG_JOIN_WAIT * agg->p.job_timeout_ns, end = j->created_ns + wait;
	struct shr_proto_msg a;

	agg_ack_fill(&a, SHR_MSG_JOIN_ACK, j, j->id, m->rank, j->active ? 0 : EINPROGRESS);
	a.tensor = agg->p.lanes;
	a.offset = m->token;
	if (!j->active)
		a.feedback = (uint32_t)(end > now_ns ? (end - now_ns) / 1000000u : 0);
	agg->scratch[0] = src;
	agg_tx_ctrl(tx, &a, agg->scratch, 1, stats);
}

/*
 * The last rank has joined j: reserve its slots and tell every member. A box with an
 * upstream first joins there (shr_agg_tree.c calls this again once admitted).
 */
enum shr_proto_reason
agg_job_activate(struct shr_agg *agg, struct agg_job *j, uint64_t now_ns,
		 struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg a;

	agg_tree_span(j);
	if (agg->p.upstream != 0 && j->up.state != AGG_UP_ACTIVE)
		return agg_up_join(agg, j, now_ns, tx, stats);

	if (!j->has_slots && agg_job_slots(agg, j) < 0) {
		agg_abort(agg, j, SHR_PROTO_RANK_ALL, ENOSPC, true, now_ns, tx, stats);
		return SHR_PROTO_POOL_FULL;
	}
	j->active = 1;
	j->group = agg_job_group(agg, j);
	agg_ack_fill(&a, SHR_MSG_JOIN_ACK, j, j->id, SHR_PROTO_RANK_ALL, 0);
	a.tensor = agg->p.lanes;
	agg_tx_ctrl(tx, &a, j->addrs, j->world, stats);
	return SHR_PROTO_OK;
}

/* A JOIN for a job with configured addresses (always active). */
static enum shr_proto_reason
agg_join_fixed(struct shr_agg *agg, struct agg_job *j, uint64_t src,
	       const struct shr_proto_msg *m, uint64_t now_ns, struct shr_agg_tx *tx,
	       struct shr_agg_stats *stats)
{
	uint16_t r = m->rank;

	if (j->addrs[r] != src)
		return agg_join_nack(agg, src, m, EADDRINUSE, SHR_PROTO_SPOOFED, tx, stats);
	if (j->nonce[r] != 0 && j->nonce[r] != m->token) {
		/* A new process of a member: a new run of the job. */
		agg_abort(agg, j, r, ESTALE, true, now_ns, tx, stats);
		stats->incarnations++;
		return SHR_PROTO_OK;
	}
	if (j->nonce[r] == m->token && j->left[r])
		return SHR_PROTO_STALE_JOIN;	/* it has left this incarnation */
	if (j->nonce[r] == 0) {
		j->nonce[r] = m->token;
		stats->joins++;
	}
	agg_job_touch(j, now_ns);
	agg_join_reply(agg, j, src, m, now_ns, tx, stats);
	return SHR_PROTO_OK;
}

/*
 * A JOIN with a new nonce for rank r of j, from another host than the member's, while j is
 * alive (not silent for a job timeout): not that member restarting.
 */
static inline bool
agg_join_elsewhere(const struct shr_agg *agg, const struct agg_job *j, uint16_t r,
		   uint64_t src, uint64_t now_ns)
{
	uint64_t last = __atomic_load_n(&j->last_ns, __ATOMIC_RELAXED);

	return SHR_AGG_ADDR_IP(j->addrs[r]) != SHR_AGG_ADDR_IP(src) &&
	       (last == 0 ? j->created_ns : last) + agg->p.job_timeout_ns > now_ns;
}

enum shr_proto_reason
agg_join(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m, const uint8_t *adm,
	 size_t adm_len, uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	enum shr_proto_reason ar;
	struct agg_gone *g;
	struct agg_job *j;
	uint16_t r = m->rank;
	bool admitted;

	ar = agg_admit(agg, src, m, adm, adm_len, now_ns, tx, stats, &admitted);
	if (!admitted)
		return ar;
	if (m->world == 0 || m->world > agg->p.max_world || r >= m->world)
		return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_RANK, tx, stats);
	if (m->count > agg_join_fit(agg, m))
		return agg_join_too_big(agg, src, m, m->count, agg_join_fit(agg, m), tx, stats);
	/* m->dtype is known: shr_proto_validate() refuses a JOIN with any other. */
	if (m->token == 0)
		return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_TOKEN, tx, stats);
	if (agg->ngone != 0) {
		g = agg_gone_of_join(agg, m, now_ns);
		if (g != NULL) {
			/* A late JOIN of a member of an ended incarnation: never a new one. */
			agg_gone_answer(agg, g, &g->mem[r], src, m->token, now_ns, tx, stats);
			return SHR_PROTO_STALE_JOIN;
		}
	}

	/*
	 * What no job takes, refused before a job is made for it: a job made for a JOIN that
	 * is then refused has no member, so no timeout ever frees it (a zombie holding a table
	 * entry and the sender's max_src_jobs, and the id with the refused JOIN's world).
	 */
	if (m->tensor != 0 && (m->tensor > SHR_PROTO_MAX_WORLD ||
			       m->root + m->tensor > SHR_PROTO_MAX_WORLD))
		return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_RANK, tx, stats);
	if ((m->flags & SHR_FLAG_REPRO) != 0 && agg->p.upstream != 0)
		return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_JOB_DTYPE, tx, stats);

	j = agg_job_find(agg, m->job);
	if (j == NULL) {
		uint32_t want = m->slot == 0 ? agg->p.def_window :
				m->slot > agg->p.max_window ? agg->p.max_window : m->slot;

		if (agg->njobs >= agg->p.max_jobs)
			return agg_join_nack(agg, src, m, ENOSPC, SHR_PROTO_JOBS_FULL, tx, stats);
		if (agg_src_jobs(agg, SHR_AGG_ADDR_IP(src)) >= agg->p.max_src_jobs)
			return agg_join_nack(agg, src, m, EDQUOT, SHR_PROTO_SRC_LIMIT, tx, stats);
		if (want > shr_pool_free_slots(agg->pool, (m->flags & SHR_FLAG_REPRO) != 0))
			return agg_join_nack(agg, src, m, ENOSPC, SHR_PROTO_POOL_FULL, tx, stats);
		j = agg_job_new(agg, m->job, m->world, m->dtype, want,
				m->count != 0 ? m->count : agg_join_fit(agg, m), now_ns);
		if (j == NULL)
			return agg_join_nack(agg, src, m, ENOSPC, SHR_PROTO_JOBS_FULL, tx, stats);
		j->req_window = m->slot;
		j->req_chunk = m->count;
		j->repro = (m->flags & SHR_FLAG_REPRO) != 0;
		j->ordered = 1;
		j->creator_ip = SHR_AGG_ADDR_IP(src);
		stats->jobs_created++;
	} else {
		if (m->world != j->world)
			return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_RANK, tx, stats);
		if (m->dtype != j->dtype || ((m->flags & SHR_FLAG_REPRO) != 0) != j->repro)
			return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_JOB_DTYPE, tx, stats);
		if (m->count != 0 && m->count != j->req_chunk)
			return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_JOB_COUNT, tx, stats);
		if (j->chunk > agg_join_fit(agg, m) && (j->req_chunk != 0 || j->active)) {
			/*
			 * A job still filling cannot run with this rank: its members are
			 * told at once (ABORT EMSGSIZE, also to the rank refused), rather than
			 * after the box's wait for a rank that will never join.
			 */
			if (!j->active && !j->fixed && j->joined != 0) {
				agg_abort_ex(agg, j, r, EMSGSIZE, true, now_ns, tx, stats, m, src,
					     agg_join_fit(agg, m));
				return SHR_PROTO_PATH_MTU;
			}
			return agg_join_too_big(agg, src, m, j->chunk, agg_join_fit(agg, m), tx,
						stats);
		}
		if (!j->is_static && m->slot != j->req_window)
			return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_SLOT, tx, stats);
	}
	if (m->tensor != 0 && j->fixed)
		return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_RANK, tx, stats);
	if (j->fixed)
		return agg_join_fixed(agg, j, src, m, now_ns, tx, stats);

	if (j->bound[r] && j->nonce[r] == m->token) {
		/* A repeated JOIN: its answer was lost, or the job is still filling. */
		if (j->addrs[r] != src)
			return agg_join_nack(agg, src, m, EADDRINUSE, SHR_PROTO_SPOOFED, tx, stats);
		agg_job_touch(j, now_ns);
		agg_join_reply(agg, j, src, m, now_ns, tx, stats);
		return SHR_PROTO_OK;
	}
	if (j->bound[r]) {
		/*
		 * Another process for a bound rank: a restarted member. From the member's
		 * host (same IPv4 address), or once the job has been silent for a job
		 * timeout, it replaces the old one; from elsewhere, while the job is alive,
		 * it is refused (the member retries).
		 */
		if (agg_join_elsewhere(agg, j, r, src, now_ns))
			return agg_join_nack(agg, src, m, EADDRINUSE, SHR_PROTO_SPOOFED, tx, stats);
		if (j->active) {
			agg_abort(agg, j, r, ESTALE, true, now_ns, tx, stats);
			stats->incarnations++;
			return SHR_PROTO_OK;	/* its next JOIN joins the new incarnation */
		}
		j->addrs[r] = src;
		j->bound[r] = agg_bound_of(m);
		j->nonce[r] = m->token;
		agg_mac_rank_reset(agg, j, r);	/* a new process: its counter starts anew */
		(void)agg_tree_bind(j, r, m);	/* checked above */
		agg_join_narrow(agg, j, m);
		agg_job_touch(j, now_ns);
		agg_join_reply(agg, j, src, m, now_ns, tx, stats);
		return SHR_PROTO_OK;
	}
	if (j->active) {
		/*
		 * The rank has left this incarnation (the others may still be finishing): its
		 * own late JOIN, or a new run, which ends this one as for a bound rank (not
		 * from elsewhere while the job is alive: a forged JOIN must not end it).
		 */
		if (j->nonce[r] == m->token)
			return SHR_PROTO_STALE_JOIN;
		if (agg_join_elsewhere(agg, j, r, src, now_ns))
			return agg_join_nack(agg, src, m, EADDRINUSE, SHR_PROTO_SPOOFED, tx, stats);
		agg_abort(agg, j, r, ESTALE, true, now_ns, tx, stats);
		stats->incarnations++;
		return SHR_PROTO_OK;
	}
	/*
	 * The nonce of a process of this rank that LEFT this filling job (its LEAVE kept the
	 * nonce): a delayed copy of its JOIN, which must not bind a process that gave up (the
	 * job would start with it and time out naming it). A new process has a new nonce.
	 */
	if (j->nonce[r] != 0 && j->nonce[r] == m->token)
		return SHR_PROTO_STALE_JOIN;
	if (j->joined == 0)
		j->created_ns = now_ns;	/* a static job starts waiting for its members */
	j->addrs[r] = src;
	j->bound[r] = agg_bound_of(m);
	j->nonce[r] = m->token;
	agg_mac_rank_reset(agg, j, r);	/* a new process: its counter starts anew */
	(void)agg_tree_bind(j, r, m);	/* checked above */
	agg_join_narrow(agg, j, m);
	j->joined++;
	stats->joins++;
	agg_job_touch(j, now_ns);
	if (j->joined == j->world)
		return agg_job_activate(agg, j, now_ns, tx, stats);
	agg_join_reply(agg, j, src, m, now_ns, tx, stats);
	return SHR_PROTO_OK;
}

/* --- the static job table --- */

int
shr_agg_job_add(struct shr_agg *agg, const struct shr_agg_job_conf *conf)
{
	struct agg_job *j;
	uint16_t r;

	if (agg == NULL || conf == NULL || conf->world == 0 || conf->world > agg->p.max_world ||
	    shr_proto_dtype_size(conf->dtype) == 0 || conf->window == 0 ||
	    conf->window > agg->p.max_window || conf->chunk_elems == 0 ||
	    conf->chunk_elems > agg->p.max_elems ||
	    (conf->secret != NULL && conf->secret->len != 0 &&
	     (conf->secret->len < SHR_AUTH_SECRET_MIN ||
	      conf->secret->len > SHR_AUTH_SECRET_MAX)) ||
	    (agg->p.upstream != 0 && (conf->addrs != NULL || conf->repro)) ||
	    agg_mac_conf_check(agg, conf) != 0)
		return -EINVAL;
	if (agg_job_find(agg, conf->job) != NULL)
		return -EEXIST;
	if (agg->njobs >= agg->p.max_jobs)
		return -ENOSPC;
	j = agg_job_new(agg, conf->job, conf->world, conf->dtype, conf->window,
			conf->chunk_elems, 0);
	if (j == NULL)
		return -ENOSPC;
	j->repro = conf->repro != 0;
	if (agg_job_slots(agg, j) < 0) {
		agg_job_release(agg, j);
		return -ENOSPC;
	}
	j->is_static = 1;
	j->ordered = conf->ordered != 0;
	j->req_window = conf->window;
	j->req_chunk = conf->chunk_elems;
	j->cfg_token = conf->token;
	if (conf->secret != NULL)
		j->secret = *conf->secret;
	agg_mac_job_conf(agg, j, conf);
	agg_job_incarnate(agg, j, 0);
	if (conf->addrs != NULL) {
		for (r = 0; r < conf->world; r++) {
			j->addrs[r] = conf->addrs[r];
			j->bound[r] = 1;
		}
		j->joined = conf->world;
		j->fixed = 1;
		j->active = 1;
	}
	return 0;
}

int
shr_agg_job_del(struct shr_agg *agg, uint32_t job)
{
	struct agg_job *j = agg_job_find(agg, job);

	if (j == NULL)
		return -ENOENT;
	agg_job_release(agg, j);
	return 0;
}

int
shr_agg_job_info(const struct shr_agg *agg, uint32_t idx, struct shr_agg_job_info *info)
{
	const struct agg_job *j;

	if (idx >= agg->p.max_jobs)
		return -ENOENT;
	j = &agg->jobs[idx];
	if (!j->used)
		return 0;
	info->job = j->id;
	info->world = j->world;
	info->joined = j->joined;
	info->dtype = j->dtype;
	info->active = j->active;
	info->is_static = j->is_static;
	info->window = j->window;
	info->chunk_elems = j->chunk;
	info->slot_base = j->has_slots ? j->base : UINT32_MAX;
	info->repro = j->repro;
	info->up_state = j->up.state;
	info->up_pending = agg_up_pending(agg, j);
	info->incarnation = j->incarnation;
	return 1;
}
