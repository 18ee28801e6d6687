/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The aggregator's message logic: job table, membership, per-job validation, and the slot
 * pool. See shr_agg.h for the contract.
 *
 * Layout choices:
 * - Jobs live in a fixed array of max_jobs entries; an open-addressed hash (linear probing,
 *   backward-shift deletion, at least twice as many buckets as entries) maps a job id to
 *   its entry. Each entry owns a fixed stripe of the address and binding arrays, so JOIN
 *   never allocates.
 * - Each pool slot has a tracking record in the agg (when its current round opened, and
 *   which ranks are in it), used only by shr_agg_tick() to find a stuck round and name the
 *   rank missing from it. Records are padded to whole cache lines, so lcores that own
 *   disjoint slots (the lanes) never write the same line.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <shr_pool.h>

#include "shr_agg.h"

#define AGG_LINE 64u
#define AGG_DEF_NSLOTS 4096u
#define AGG_DEF_MAX_ELEMS 2048u
#define AGG_DEF_MAX_WORLD 1024u
#define AGG_DEF_MAX_JOBS 64u
#define AGG_DEF_MAX_WINDOW 512u
#define AGG_DEF_TIMEOUT_NS 5000000000ull
#define AGG_MAX_JOBS_LIMIT (1u << 16)
#define AGG_MAX_ELEM_SIZE 4u
#define AGG_GONE_MAX 16u	/* aborted jobs remembered at once, at most */
#define AGG_GONE_TTL 10u	/* ...for this many job timeouts */
#define AGG_GONE_ANSWERS 8u	/* ABORTs sent again to one member, at most */
#define AGG_GONE_GAP_DIV 10u	/* one member is answered once per job timeout / this */
#define AGG_GONE_GAP_MIN 1000000ull /* ...but at most once per ms */

#define agg_likely(x) __builtin_expect(!!(x), 1)
#define agg_unlikely(x) __builtin_expect(!!(x), 0)

struct agg_job {
	uint32_t id;
	uint16_t world;
	uint16_t joined;	/* ranks bound */
	uint8_t dtype;
	uint8_t esize;		/* bytes per element on the wire */
	uint8_t used;		/* entry occupied */
	uint8_t active;		/* all ranks have joined (or fixed addresses) */
	uint8_t is_static;	/* from shr_agg_job_add() */
	uint8_t fixed;		/* static with configured addresses */
	uint8_t ordered;	/* rounds come in (step, offset) order: drop stale copies */
	uint32_t window;	/* slots granted */
	uint32_t req_window;	/* slot field of the JOIN that created it */
	uint32_t chunk;		/* elements per chunk */
	uint32_t base;		/* first pool slot */
	uint64_t created_ns;
	uint64_t *addrs;	/* world entries, rank order */
	uint8_t *bound;		/* world entries: rank bound to addrs[rank] */
	uint32_t *nonce;	/* world entries: aux of the JOIN that bound the rank */
};

/* A member of a recently aborted job. */
struct agg_gone_mem {
	uint64_t addr;
	uint64_t next_ns;	/* no ABORT again before this (rate limit) */
	uint32_t nonce;		/* aux of its JOIN */
	uint32_t answers;	/* ABORTs sent again */
	uint8_t bound;		/* was a member (told of the abort) */
};

/* A recently aborted job: enough to tell a member that lost the ABORT, again. */
struct agg_gone {
	uint32_t id;
	uint8_t used;
	uint8_t dtype;
	uint16_t world;
	uint16_t rank;		/* the rank blamed */
	uint32_t reason;
	uint32_t window;	/* granted */
	uint32_t req_window;	/* requested by the JOIN that created it */
	uint32_t chunk;
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
	uint32_t *nonce_store;	/* max_jobs * max_world */
	uint64_t *scratch;	/* control-path destinations, max_world */
	struct agg_gone *gone;	/* ngone_max records of aborted jobs */
	struct agg_gone_mem *gone_mem; /* ngone_max * max_world */
	uint32_t ngone_max;
	uint32_t ngone;		/* records in use */
	uint64_t gone_gap;	/* rate limit of the ABORTs sent again, per member */
	uint32_t shut_idx;	/* shr_agg_shutdown(): next job entry to look at */
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

static void
agg_track_reset(struct shr_agg *agg, uint32_t base, uint32_t n)
{
	uint32_t s;

	for (s = base; s < base + n; s++) {
		struct agg_track *t = agg_track(agg, s);

		t->open = 0;
		t->last_valid = 0;
	}
}

static void
agg_params_default(struct shr_agg_params *p)
{
	if (p->nslots == 0)
		p->nslots = AGG_DEF_NSLOTS;
	if (p->max_elems == 0)
		p->max_elems = AGG_DEF_MAX_ELEMS;
	if (p->max_world == 0)
		p->max_world = AGG_DEF_MAX_WORLD;
	if (p->max_jobs == 0)
		p->max_jobs = AGG_DEF_MAX_JOBS;
	if (p->max_window == 0)
		p->max_window = p->nslots < AGG_DEF_MAX_WINDOW ? p->nslots : AGG_DEF_MAX_WINDOW;
	if (p->lanes == 0)
		p->lanes = 1;
	if (p->job_timeout_ns == 0)
		p->job_timeout_ns = AGG_DEF_TIMEOUT_NS;
}

struct shr_agg *
shr_agg_create(const struct shr_agg_params *params)
{
	struct shr_pool_params pp;
	struct shr_agg *agg;
	uint32_t hsize;
	int err;

	agg = calloc(1, sizeof(*agg));
	if (agg == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (params != NULL)
		agg->p = *params;
	agg_params_default(&agg->p);
	if (agg->p.max_world > SHR_PROTO_MAX_WORLD || agg->p.max_window > agg->p.nslots ||
	    agg->p.max_jobs > AGG_MAX_JOBS_LIMIT ||
	    agg->p.max_elems > (UINT32_MAX - SHR_PROTO_HDR_LEN) / AGG_MAX_ELEM_SIZE) {
		err = EINVAL;
		goto fail_agg;
	}

	pp.nslots = agg->p.nslots;
	pp.max_elems = agg->p.max_elems;
	pp.max_world = agg->p.max_world;
	agg->pool = shr_pool_create(&pp);
	if (agg->pool == NULL) {
		err = errno;
		goto fail_agg;
	}

	agg->jobs = calloc(agg->p.max_jobs, sizeof(*agg->jobs));
	if (agg->jobs == NULL)
		goto fail_nomem_pool;

	for (hsize = 2; hsize < 2 * agg->p.max_jobs; hsize <<= 1)
		;
	agg->hash = calloc(hsize, sizeof(*agg->hash));
	if (agg->hash == NULL)
		goto fail_jobs;
	agg->hmask = hsize - 1;

	agg->track_rec = (sizeof(struct agg_track) +
			  (agg->p.max_world + 63u) / 64u * sizeof(uint64_t) +
			  AGG_LINE - 1) & ~(size_t)(AGG_LINE - 1);
	agg->track = aligned_alloc(AGG_LINE, agg->track_rec * agg->p.nslots);
	if (agg->track == NULL)
		goto fail_hash;
	memset(agg->track, 0, agg->track_rec * agg->p.nslots);

	agg->addr_store = calloc((size_t)agg->p.max_jobs * agg->p.max_world,
				 sizeof(*agg->addr_store));
	if (agg->addr_store == NULL)
		goto fail_track;
	agg->bound_store = calloc((size_t)agg->p.max_jobs * agg->p.max_world, 1);
	if (agg->bound_store == NULL)
		goto fail_addr;
	agg->nonce_store = calloc((size_t)agg->p.max_jobs * agg->p.max_world,
				  sizeof(*agg->nonce_store));
	if (agg->nonce_store == NULL)
		goto fail_bound;
	agg->scratch = calloc(agg->p.max_world, sizeof(*agg->scratch));
	if (agg->scratch == NULL)
		goto fail_nonce;
	agg->ngone_max = agg->p.max_jobs < AGG_GONE_MAX ? agg->p.max_jobs : AGG_GONE_MAX;
	agg->gone = calloc(agg->ngone_max, sizeof(*agg->gone));
	if (agg->gone == NULL)
		goto fail_scratch;
	agg->gone_mem = calloc((size_t)agg->ngone_max * agg->p.max_world,
			       sizeof(*agg->gone_mem));
	if (agg->gone_mem == NULL)
		goto fail_gone;
	agg->gone_gap = agg->p.job_timeout_ns / AGG_GONE_GAP_DIV;
	if (agg->gone_gap < AGG_GONE_GAP_MIN)
		agg->gone_gap = AGG_GONE_GAP_MIN;
	return agg;

fail_gone:
	free(agg->gone);
fail_scratch:
	free(agg->scratch);
fail_nonce:
	free(agg->nonce_store);
fail_bound:
	free(agg->bound_store);
fail_addr:
	free(agg->addr_store);
fail_track:
	free(agg->track);
fail_hash:
	free(agg->hash);
fail_jobs:
	free(agg->jobs);
fail_nomem_pool:
	shr_pool_free(agg->pool);
	err = ENOMEM;
fail_agg:
	free(agg);
	errno = err;
	return NULL;
}

void
shr_agg_free(struct shr_agg *agg)
{
	if (agg == NULL)
		return;
	free(agg->gone_mem);
	free(agg->gone);
	free(agg->scratch);
	free(agg->nonce_store);
	free(agg->bound_store);
	free(agg->addr_store);
	free(agg->track);
	free(agg->hash);
	free(agg->jobs);
	shr_pool_free(agg->pool);
	free(agg);
}

size_t
shr_agg_tx_cap(const struct shr_agg *agg)
{
	return SHR_PROTO_HDR_LEN + (size_t)agg->p.max_elems * AGG_MAX_ELEM_SIZE;
}

uint32_t
shr_agg_slots_used(const struct shr_agg *agg)
{
	return shr_pool_used(agg->pool);
}

/* Take a free entry, reserve its slots, and enter it in the hash. */
static int
agg_job_new(struct shr_agg *agg, uint32_t id, uint16_t world, uint8_t dtype, uint32_t window,
	    uint32_t chunk, uint64_t now_ns, struct agg_job **out)
{
	struct agg_job *j = NULL;
	uint32_t idx;
	int base;

	for (idx = 0; idx < agg->p.max_jobs; idx++) {
		if (!agg->jobs[idx].used) {
			j = &agg->jobs[idx];
			break;
		}
	}
	if (j == NULL)
		return -ENOSPC;
	base = shr_pool_range_alloc(agg->pool, window);
	if (base < 0)
		return base == -EINVAL ? -ENOSPC : base;

	memset(j, 0, sizeof(*j));
	j->id = id;
	j->world = world;
	j->dtype = dtype;
	j->esize = (uint8_t)shr_proto_dtype_size(dtype);
	j->window = window;
	j->chunk = chunk;
	j->base = (uint32_t)base;
	j->created_ns = now_ns;
	j->addrs = agg->addr_store + (size_t)idx * agg->p.max_world;
	j->bound = agg->bound_store + (size_t)idx * agg->p.max_world;
	j->nonce = agg->nonce_store + (size_t)idx * agg->p.max_world;
	memset(j->bound, 0, world);
	memset(j->nonce, 0, world * sizeof(*j->nonce));
	j->used = 1;
	agg_track_reset(agg, j->base, window);
	agg_hash_insert(agg, idx);
	agg->njobs++;
	*out = j;
	return 0;
}

static void
agg_job_release(struct shr_agg *agg, struct agg_job *j)
{
	agg_track_reset(agg, j->base, j->window);
	shr_pool_range_free(agg->pool, j->base, j->window);
	agg_hash_remove(agg, (uint32_t)(j - agg->jobs));
	memset(j->bound, 0, j->world);
	j->used = 0;
	j->active = 0;
	j->joined = 0;
	agg->njobs--;
}

/* Fresh rounds for every slot of a job that stays (a static job starting over). */
static void
agg_job_reset_slots(struct shr_agg *agg, struct agg_job *j)
{
	uint32_t s;

	for (s = j->base; s < j->base + j->window; s++)
		shr_pool_slot_reset(agg->pool, s);
	agg_track_reset(agg, j->base, j->window);
}

/* Write a payload-less control message into tx, for ndst destinations at dst. */
static void
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

static void
agg_ack_fill(struct shr_proto_msg *a, uint8_t type, uint32_t job, uint16_t rank, uint16_t world,
	     uint8_t dtype, uint32_t window, uint32_t chunk, uint32_t tensor, uint32_t aux)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->job = job;
	a->rank = rank;
	a->world = world;
	a->dtype = dtype;
	a->slot = window & SHR_PROTO_SLOT_MASK;
	a->count = chunk;
	a->tensor = tensor;
	a->aux = aux;
}

/* --- recently aborted jobs --- */

/* The live record of job id (not expired at now_ns), or NULL. */
static struct agg_gone *
agg_gone_find(const struct shr_agg *agg, uint32_t id, uint64_t now_ns)
{
	uint32_t i;

	for (i = 0; i < agg->ngone_max; i++) {
		struct agg_gone *g = &agg->gone[i];

		if (g->used && g->id == id && now_ns < g->expires)
			return g;
	}
	return NULL;
}

static void
agg_gone_drop(struct shr_agg *agg, struct agg_gone *g)
{
	g->used = 0;
	agg->ngone--;
}

/* Forget the record of job id, if any (a job of that id is live again). */
static void
agg_gone_forget(struct shr_agg *agg, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < agg->ngone_max && agg->ngone != 0; i++)
		if (agg->gone[i].used && agg->gone[i].id == id)
			agg_gone_drop(agg, &agg->gone[i]);
}

/* Forget the records that have expired. */
static void
agg_gone_expire(struct shr_agg *agg, uint64_t now_ns)
{
	uint32_t i;

	for (i = 0; i < agg->ngone_max && agg->ngone != 0; i++)
		if (agg->gone[i].used && now_ns >= agg->gone[i].expires)
			agg_gone_drop(agg, &agg->gone[i]);
}

/* Remember that job j was aborted (blaming rank, for err) at now_ns; evicts the oldest. */
static void
agg_gone_add(struct shr_agg *agg, const struct agg_job *j, uint16_t rank, uint32_t err,
	     uint64_t now_ns)
{
	uint64_t ttl = agg->p.job_timeout_ns;
	struct agg_gone *g = NULL;
	uint32_t i;
	uint16_t r;

	agg_gone_forget(agg, j->id);
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
	g->dtype = j->dtype;
	g->world = j->world;
	g->rank = rank;
	g->reason = err;
	g->window = j->window;
	g->req_window = j->req_window;
	g->chunk = j->chunk;
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

/* The member record of (rank, src) in g, or NULL if src was not that member. */
static inline struct agg_gone_mem *
agg_gone_member(const struct agg_gone *g, uint64_t src, uint16_t rank)
{
	if (rank >= g->world || !g->mem[rank].bound || g->mem[rank].addr != src)
		return NULL;
	return &g->mem[rank];
}

/*
 * Tell a member of an aborted job about the abort again, unless it was told less than
 * gone_gap ago or AGG_GONE_ANSWERS times already. DATA reaches this from several lcores at
 * once (lanes), so the rate limit is claimed atomically.
 */
static void
agg_gone_answer(struct shr_agg *agg, const struct agg_gone *g, struct agg_gone_mem *gm,
		uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	uint64_t next = __atomic_load_n(&gm->next_ns, __ATOMIC_RELAXED);
	struct shr_proto_msg a;

	if (now_ns < next ||
	    !__atomic_compare_exchange_n(&gm->next_ns, &next, now_ns + agg->gone_gap, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
	    __atomic_fetch_add(&gm->answers, 1, __ATOMIC_RELAXED) >= AGG_GONE_ANSWERS)
		return;
	agg_ack_fill(&a, SHR_MSG_ABORT, g->id, g->rank, g->world, g->dtype, g->window, g->chunk,
		     0, g->reason);
	agg_tx_ctrl(tx, &a, &gm->addr, 1, stats);
	stats->reaborts++;
}

int
shr_agg_job_add(struct shr_agg *agg, const struct shr_agg_job_conf *conf)
{
	struct agg_job *j;
	uint16_t r;
	int ret;

	if (agg == NULL || conf == NULL || conf->world == 0 || conf->world > agg->p.max_world ||
	    shr_proto_dtype_size(conf->dtype) == 0 || conf->window == 0 ||
	    conf->window > agg->p.max_window || conf->chunk_elems == 0 ||
	    conf->chunk_elems > agg->p.max_elems)
		return -EINVAL;
	if (agg_job_find(agg, conf->job) != NULL)
		return -EEXIST;
	ret = agg_job_new(agg, conf->job, conf->world, conf->dtype, conf->window,
			  conf->chunk_elems, 0, &j);
	if (ret < 0)
		return ret;
	j->is_static = 1;
	j->ordered = conf->ordered != 0;
	j->req_window = conf->window;
	agg_gone_forget(agg, conf->job);
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
	info->slot_base = j->base;
	return 1;
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
}

/* JOIN_ACK with an error, to the sender alone; the reason is what the caller counts. */
static enum shr_proto_reason
agg_join_nack(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m, uint32_t err,
	      enum shr_proto_reason reason, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg a;

	agg_ack_fill(&a, SHR_MSG_JOIN_ACK, m->job, m->rank, m->world, m->dtype, m->slot,
		     m->count, agg->p.lanes, err);
	agg->scratch[0] = src;
	agg_tx_ctrl(tx, &a, agg->scratch, 1, stats);
	return reason;
}

/*
 * A JOIN for a job that was aborted recently, from one of its members: the same rank, from
 * the same address, with the same parameters and the same nonce (aux) as the JOIN that bound
 * it. That member has most likely lost the ABORT and is still trying to join: tell it again
 * (rate-limited) and return true. Anything else is a new job of the same id: false.
 */
static bool
agg_join_gone(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
	      uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct agg_gone *g = agg_gone_find(agg, m->job, now_ns);
	struct agg_gone_mem *gm;

	if (g == NULL || m->world != g->world || m->dtype != g->dtype || m->count != g->chunk ||
	    m->slot != g->req_window)
		return false;
	gm = agg_gone_member(g, src, m->rank);
	if (gm == NULL || gm->nonce != m->aux)
		return false;
	agg_gone_answer(agg, g, gm, now_ns, tx, stats);
	return true;
}

static enum shr_proto_reason
agg_join(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m, uint64_t now_ns,
	 struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg a;
	struct agg_job *j;
	uint32_t want;
	int ret;

	if (m->world == 0 || m->world > agg->p.max_world || m->rank >= m->world)
		return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_RANK, tx, stats);
	if (m->count == 0 || m->count > agg->p.max_elems)
		return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_JOB_COUNT, tx, stats);
	/* m->dtype is known: shr_proto_validate() refuses a JOIN with any other. */

	j = agg_job_find(agg, m->job);
	if (agg->ngone != 0 &&
	    (j == NULL || (!j->active && !j->is_static && m->rank < j->world &&
			      !j->bound[m->rank])) &&
	    agg_join_gone(agg, src, m, now_ns, tx, stats))
		return SHR_PROTO_UNKNOWN_JOB;
	if (j == NULL) {
		want = m->slot == 0 || m->slot > agg->p.max_window ? agg->p.max_window : m->slot;
		ret = agg_job_new(agg, m->job, m->world, m->dtype, want, m->count, now_ns, &j);
		if (ret < 0)
			return agg_join_nack(agg, src, m, (uint32_t)-ret,
					     agg->njobs >= agg->p.max_jobs ?
					     SHR_PROTO_UNKNOWN_JOB : SHR_PROTO_BAD_SLOT,
					     tx, stats);
		j->req_window = m->slot;
		j->ordered = 1;
		stats->jobs_created++;
	} else {
		if (m->world != j->world)
			return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_RANK, tx, stats);
		if (m->dtype != j->dtype)
			return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_JOB_DTYPE, tx, stats);
		if (m->count != j->chunk)
			return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_JOB_COUNT, tx, stats);
		if (!j->is_static && m->slot != j->req_window)
			return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_SLOT, tx, stats);
	}

	if (j->bound[m->rank]) {
		if (j->addrs[m->rank] != src)
			return agg_join_nack(agg, src, m, EADDRINUSE, SHR_PROTO_SPOOFED, tx,
					     stats);
		/* A repeated JOIN: its ack was lost (active job), or it is early. */
		if (j->active) {
			agg_ack_fill(&a, SHR_MSG_JOIN_ACK, j->id, m->rank, j->world, j->dtype,
				     j->window, j->chunk, agg->p.lanes, 0);
			agg->scratch[0] = src;
			agg_tx_ctrl(tx, &a, agg->scratch, 1, stats);
		}
		return SHR_PROTO_OK;
	}

	/*
	 * A rank that has left a running job cannot come back: its JOIN is most likely a
	 * stale duplicate, and binding it again would keep the job from ever being freed.
	 */
	if (j->active)
		return agg_join_nack(agg, src, m, EINVAL, SHR_PROTO_BAD_RANK, tx, stats);
	j->addrs[m->rank] = src;
	j->bound[m->rank] = 1;
	j->nonce[m->rank] = m->aux;
	j->joined++;
	stats->joins++;
	if (j->joined == j->world) {
		j->active = 1;
		agg_gone_forget(agg, j->id);
		agg_ack_fill(&a, SHR_MSG_JOIN_ACK, j->id, SHR_PROTO_RANK_ALL, j->world, j->dtype,
			     j->window, j->chunk, agg->p.lanes, 0);
		agg_tx_ctrl(tx, &a, j->addrs, j->world, stats);
	}
	return SHR_PROTO_OK;
}

static enum shr_proto_reason
agg_leave(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
	  struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg a;
	struct agg_job *j;

	j = agg_job_find(agg, m->job);
	agg->scratch[0] = src;
	if (j == NULL) {
		/* Gone already (a resent LEAVE after the last one freed it): say so. */
		agg_ack_fill(&a, SHR_MSG_LEAVE_ACK, m->job, m->rank, m->world, m->dtype, 0, 0,
			     0, ENOENT);
		agg_tx_ctrl(tx, &a, agg->scratch, 1, stats);
		return SHR_PROTO_UNKNOWN_JOB;
	}
	if (m->rank >= j->world)
		return SHR_PROTO_BAD_RANK;
	if (j->bound[m->rank] && j->addrs[m->rank] != src)
		return SHR_PROTO_SPOOFED;

	agg_ack_fill(&a, SHR_MSG_LEAVE_ACK, j->id, m->rank, j->world, j->dtype, j->window,
		     j->chunk, agg->p.lanes, 0);
	agg_tx_ctrl(tx, &a, agg->scratch, 1, stats);
	if (j->fixed || !j->bound[m->rank]) {
		/* Fixed members never leave a configured job; a resent LEAVE changes nothing. */
		if (j->fixed)
			stats->leaves++;
		return SHR_PROTO_OK;
	}
	j->bound[m->rank] = 0;
	j->joined--;
	stats->leaves++;
	if (j->joined == 0) {
		if (j->is_static) {
			j->active = 0;
			agg_job_reset_slots(agg, j);
		} else {
			agg_job_release(agg, j);
			stats->jobs_freed++;
		}
	}
	return SHR_PROTO_OK;
}

/* The RESULT of a round, header + payload, into tx. */
static inline void
agg_tx_result(struct shr_agg_tx *tx, const struct agg_job *j, const struct shr_pool_round *rd,
	      uint16_t flags, const uint64_t *dst, uint32_t ndst, struct shr_agg_stats *stats)
{
	struct shr_proto_msg r;
	uint8_t *buf = tx->buf;
	size_t plen;

	if (agg_unlikely(buf == NULL ||
			 tx->cap < SHR_PROTO_HDR_LEN + (size_t)rd->count * j->esize))
		return;
	plen = shr_pool_result_write(rd, buf + SHR_PROTO_HDR_LEN);
	r.type = SHR_MSG_RESULT;
	r.dtype = rd->dtype;
	r.op = rd->op;
	r.ver = rd->ver;
	r.rank = SHR_PROTO_RANK_ALL;
	r.world = j->world;
	r.flags = flags & SHR_FLAG_LAST;
	r.job = j->id;
	r.slot = rd->slot - j->base;
	r.count = rd->count;
	r.tensor = rd->tensor;
	r.step = rd->step;
	r.offset = rd->offset;
	r.aux = rd->aux;
	shr_proto_build(buf, &r, buf + SHR_PROTO_HDR_LEN, plen);
	tx->len = SHR_PROTO_HDR_LEN + plen;
	tx->dst = dst;
	tx->ndst = ndst;
	stats->tx_msgs++;
	stats->tx_dsts += ndst;
}

/* DATA for a job that is not running: if it was aborted recently, tell its member again. */
static void
agg_data_gone(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m,
	      uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct agg_gone *g = agg_gone_find(agg, m->job, now_ns);
	struct agg_gone_mem *gm;

	if (g == NULL)
		return;
	gm = agg_gone_member(g, src, m->rank);
	if (gm != NULL)
		agg_gone_answer(agg, g, gm, now_ns, tx, stats);
}

static inline enum shr_proto_reason
agg_data(struct shr_agg *agg, uint64_t src, const struct shr_proto_msg *m, const void *payload,
	 uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_pool_contrib c;
	struct shr_pool_round rd;
	struct agg_track *t;
	struct agg_job *j;
	int v;

	j = agg_job_find(agg, m->job);
	if (agg_unlikely(j == NULL || !j->active)) {
		if (agg->ngone != 0)
			agg_data_gone(agg, src, m, now_ns, tx, stats);
		return SHR_PROTO_UNKNOWN_JOB;
	}
	if (agg_unlikely(m->rank >= j->world || m->world != j->world))
		return SHR_PROTO_BAD_RANK;
	if (agg_unlikely(j->addrs[m->rank] != src))
		return SHR_PROTO_SPOOFED;
	if (agg_unlikely(m->dtype != j->dtype))
		return SHR_PROTO_JOB_DTYPE;
	if (agg_unlikely(m->count == 0 || m->count > j->chunk))
		return SHR_PROTO_JOB_COUNT;
	if (agg_unlikely(m->slot >= j->window))
		return SHR_PROTO_BAD_SLOT;
	if (agg_unlikely(!j->bound[m->rank])) {
		/*
		 * An active job had every rank bound, so an unbound rank has left, and
		 * addrs[] still holds its address: its late DATA (delayed or duplicated on the
		 * way), valid in every field, is a stale copy.
		 */
		stats->stale++;
		return SHR_PROTO_OK;
	}

	c.slot = j->base + m->slot;
	t = agg_track(agg, c.slot);
	if (j->ordered && t->last_valid) {
		/*
		 * Older than the slot's last completed round: every member has had that
		 * result, so this is a stale copy (duplicated or delayed). The same round,
		 * from a rank already in the next one: stale too. Either could otherwise open
		 * a phantom round on a completed copy and shut the real one out.
		 */
		int32_t ds = (int32_t)(m->step - t->last_step);

		if (ds < 0 || (ds == 0 && (m->offset < t->last_off ||
					   (m->offset == t->last_off && t->open &&
					    (t->bits[m->rank >> 6] >> (m->rank & 63u) & 1u))))) {
			stats->stale++;
			return SHR_PROTO_OK;
		}
	}
	c.ver = m->ver;
	c.dtype = m->dtype;
	c.op = m->op;
	c.rank = m->rank;
	c.world = j->world;
	c.count = m->count;
	c.tensor = m->tensor;
	c.step = m->step;
	c.offset = m->offset;
	c.aux = m->aux;
	c.payload = payload;
	v = shr_pool_contribute(agg->pool, &c, &rd);
	switch (v) {
	case SHR_POOL_PARTIAL:
		/* A new round (the pool may also have dropped a stale one on this copy). */
		if (!t->open || t->ver != c.ver || t->open_step != c.step ||
		    t->open_off != c.offset) {
			t->open = 1;
			t->ver = c.ver;
			t->open_step = c.step;
			t->open_off = c.offset;
			t->since = now_ns;
			memset(t->bits, 0, ((j->world + 63u) >> 6) * sizeof(uint64_t));
		}
		t->bits[c.rank >> 6] |= 1ull << (c.rank & 63u);
		stats->data++;
		stats->bytes_summed += (uint64_t)c.count * j->esize;
		return SHR_PROTO_OK;
	case SHR_POOL_COMPLETE:
		t->open = 0;
		t->last_valid = 1;
		t->last_step = rd.step;
		t->last_off = rd.offset;
		stats->data++;
		stats->completed++;
		stats->bytes_summed += (uint64_t)c.count * j->esize;
		agg_tx_result(tx, j, &rd, m->flags, j->addrs, j->world, stats);
		return SHR_PROTO_OK;
	case SHR_POOL_RESEND:
		stats->resent++;
		agg_tx_result(tx, j, &rd, m->flags, &j->addrs[m->rank], 1, stats);
		return SHR_PROTO_OK;
	case SHR_POOL_DUPLICATE:
		stats->duplicates++;
		return SHR_PROTO_OK;
	case SHR_POOL_OUT_OF_STEP:
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
	struct shr_proto_msg m;
	enum shr_proto_reason r;

	tx->len = 0;
	tx->ndst = 0;
	tx->dst = NULL;
	stats->rx++;
	r = shr_proto_validate(msg, len, &m);
	if (agg_likely(r == SHR_PROTO_OK)) {
		switch (m.type) {
		case SHR_MSG_DATA:
			r = agg_data(agg, src, &m, (const uint8_t *)msg + SHR_PROTO_HDR_LEN,
				     now_ns, tx, stats);
			break;
		case SHR_MSG_JOIN:
			r = agg_join(agg, src, &m, now_ns, tx, stats);
			break;
		case SHR_MSG_LEAVE:
			r = agg_leave(agg, src, &m, tx, stats);
			break;
		default:
			/* RESULT, JOIN_ACK, LEAVE_ACK, ABORT only travel from the box. */
			r = SHR_PROTO_BAD_TYPE;
			break;
		}
	}
	if (agg_unlikely(r != SHR_PROTO_OK) && (unsigned int)r < SHR_PROTO_REASON_MAX)
		stats->rejects[r]++;
	return r;
}

/*
 * Tell the members of j that it is torn down, naming rank, and free or reset it. With
 * remember, its members are remembered for a while (agg_gone_add): one that lost this ABORT
 * is told again when its DATA or JOIN comes in.
 */
static void
agg_abort(struct shr_agg *agg, struct agg_job *j, uint16_t rank, uint32_t err, bool remember,
	  uint64_t now_ns, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	struct shr_proto_msg a;
	uint32_t n = 0;
	uint16_t r;

	for (r = 0; r < j->world; r++)
		if (j->bound[r])
			agg->scratch[n++] = j->addrs[r];
	agg_ack_fill(&a, SHR_MSG_ABORT, j->id, rank, j->world, j->dtype, j->window, j->chunk,
		     0, err);
	agg_tx_ctrl(tx, &a, agg->scratch, n, stats);
	stats->aborts++;
	/* a fixed job keeps running with the same members: nothing to tell them later */
	if (remember && n != 0 && !j->fixed)
		agg_gone_add(agg, j, rank, err, now_ns);
	if (j->is_static) {
		/* A configured job stays; its rounds start over (bindings too, unless fixed). */
		agg_job_reset_slots(agg, j);
		if (!j->fixed) {
			memset(j->bound, 0, j->world);
			j->joined = 0;
			j->active = 0;
		}
	} else {
		agg_job_release(agg, j);
		stats->jobs_freed++;
	}
}

int
shr_agg_tick(struct shr_agg *agg, uint64_t now_ns, struct shr_agg_tx *tx,
	     struct shr_agg_stats *stats)
{
	uint64_t tmo = agg->p.job_timeout_ns;
	uint32_t idx, s;
	uint16_t r;

	tx->len = 0;
	tx->ndst = 0;
	tx->dst = NULL;
	if (agg->ngone != 0)
		agg_gone_expire(agg, now_ns);
	for (idx = 0; idx < agg->p.max_jobs; idx++) {
		struct agg_job *j = &agg->jobs[idx];
		const struct agg_track *oldest = NULL;

		if (!j->used)
			continue;
		if (!j->active) {
			/* A dynamic job whose members do not all turn up. */
			if (j->is_static || j->joined == 0 || now_ns <= j->created_ns ||
			    now_ns - j->created_ns <= SHR_AGG_JOIN_WAIT * tmo)
				continue;
			for (r = 0; r < j->world && j->bound[r]; r++)
				;
			agg_abort(agg, j, r, ETIMEDOUT, true, now_ns, tx, stats);
			return 1;
		}
		for (s = j->base; s < j->base + j->window; s++) {
			const struct agg_track *t = agg_track(agg, s);

			if (t->open && (oldest == NULL || t->since < oldest->since))
				oldest = t;
		}
		if (oldest == NULL || now_ns <= oldest->since || now_ns - oldest->since <= tmo)
			continue;
		for (r = 0; r < j->world; r++)
			if (!(oldest->bits[r >> 6] & (1ull << (r & 63u))))
				break;
		agg_abort(agg, j, r, ETIMEDOUT, true, now_ns, tx, stats);
		return 1;
	}
	return 0;
}

int
shr_agg_shutdown(struct shr_agg *agg, struct shr_agg_tx *tx, struct shr_agg_stats *stats)
{
	uint32_t idx;
	uint16_t r;

	tx->len = 0;
	tx->ndst = 0;
	tx->dst = NULL;
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
