/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The aggregator's creation and free (shr_agg_create, shr_agg_free): the parameters'
 * defaults and bounds, the pool, the job table and its hash, the slots' tracking records
 * (see shr_agg.c), the per-member stores and the records of ended incarnations. The message
 * logic is in shr_agg.c. See shr_agg.h for the contract.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shr_pool.h>

#include "shr_agg_private.h"
#include "shr_agg_mac.h"

#define AGG_DEF_MAX_ELEMS 2048u
#define AGG_DEF_MAX_WORLD 1024u
#define AGG_DEF_WINDOW 128u
#define AGG_DEF_MAX_SRC_JOBS 4u
#define AGG_DEF_TIMEOUT_NS 5000000000ull
#define AGG_DEF_IDLE_NS 60000000000ull
#define AGG_DEF_AUTH_TTL_NS 10000000000ull
#define AGG_MAX_JOBS_LIMIT (1u << 16)
#define AGG_GONE_MAX 16u	/* ended incarnations remembered at once, at most */
#define AGG_GONE_GAP_DIV 10u	/* one member is answered once per job timeout / this */
#define AGG_GONE_GAP_MIN 1000000ull /* ...but at most once per ms */

static void
agg_params_default(struct shr_agg_params *p)
{
	if (p->nslots == 0)
		p->nslots = SHR_AGG_DEF_NSLOTS;
	if (p->max_elems == 0)
		p->max_elems = AGG_DEF_MAX_ELEMS;
	if (p->max_world == 0)
		p->max_world = AGG_DEF_MAX_WORLD;
	if (p->max_jobs == 0)
		p->max_jobs = SHR_AGG_DEF_MAX_JOBS;
	if (p->max_window == 0)
		p->max_window = shr_agg_def_max_window(p->nslots);
	if (p->lanes == 0)
		p->lanes = 1;
	if (p->job_timeout_ns == 0)
		p->job_timeout_ns = AGG_DEF_TIMEOUT_NS;
	if (p->def_window == 0)
		p->def_window = p->max_window < AGG_DEF_WINDOW ? p->max_window : AGG_DEF_WINDOW;
	if (p->max_src_jobs == 0)
		p->max_src_jobs = AGG_DEF_MAX_SRC_JOBS;
	if (p->idle_ns == 0)
		p->idle_ns = AGG_DEF_IDLE_NS;
	if (p->auth_ttl_ns == 0)
		p->auth_ttl_ns = AGG_DEF_AUTH_TTL_NS;
	if (p->group_ip != 0 && p->group_port == 0)
		p->group_port = SHR_AGG_GROUP_PORT;
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
	if (agg->p.allow != NULL)
		agg->allow = *agg->p.allow;
	if (agg->p.secret != NULL)
		agg->secret = *agg->p.secret;
	agg->p.allow = NULL;	/* the caller's copies need not outlive this call */
	agg->p.secret = NULL;
	if (agg->allow.n > SHR_AUTH_ACL_MAX || agg->secret.len > SHR_AUTH_SECRET_MAX ||
	    agg_up_check(&agg->p) != 0 ||
	    (agg->p.group_ip != 0 && (uint32_t)agg->p.group_port + agg->p.max_jobs - 1 > 65535) ||
	    (agg->secret.len != 0 && agg->secret.len < SHR_AUTH_SECRET_MIN)) {
		err = EINVAL;
		goto fail_agg;
	}
	err = -shr_auth_box_init(&agg->auth, agg->p.auth_ttl_ns);
	if (err == 0)
		err = -agg_mac_init(agg);
	if (err != 0)
		goto fail_agg;
	if (agg->p.max_world > SHR_PROTO_MAX_WORLD || agg->p.max_window > agg->p.nslots ||
	    agg->p.max_jobs > AGG_MAX_JOBS_LIMIT || agg->p.def_window > agg->p.max_window ||
	    agg->p.max_elems > (UINT32_MAX - SHR_PROTO_HDR_LEN) / AGG_MAX_ELEM_SIZE) {
		err = EINVAL;
		goto fail_agg;
	}

	if (agg->p.nslots > INT32_MAX || agg->p.repro_slots > INT32_MAX - agg->p.nslots) {
		err = EINVAL;
		goto fail_agg;
	}
	memset(&pp, 0, sizeof(pp));
	pp.nslots = agg->p.nslots + agg->p.repro_slots;
	pp.exact_slots = agg->p.repro_slots;
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
	agg->track = aligned_alloc(AGG_LINE, agg->track_rec * shr_pool_nslots(agg->pool));
	if (agg->track == NULL)
		goto fail_hash;
	memset(agg->track, 0, agg->track_rec * shr_pool_nslots(agg->pool));

	agg->addr_store = calloc((size_t)agg->p.max_jobs * agg->p.max_world,
				 sizeof(*agg->addr_store));
	if (agg->addr_store == NULL)
		goto fail_track;
	agg->bound_store = calloc((size_t)agg->p.max_jobs * agg->p.max_world, 1);
	if (agg->bound_store == NULL)
		goto fail_addr;
	agg->left_store = calloc((size_t)agg->p.max_jobs * agg->p.max_world, 1);
	if (agg->left_store == NULL)
		goto fail_bound;
	agg->nonce_store = calloc((size_t)agg->p.max_jobs * agg->p.max_world,
				  sizeof(*agg->nonce_store));
	if (agg->nonce_store == NULL)
		goto fail_left;
	agg->trank_store = calloc((size_t)agg->p.max_jobs * agg->p.max_world,
				  sizeof(*agg->trank_store));
	if (agg->trank_store == NULL)
		goto fail_nonce;
	/* every member, and the JOIN an ABORT also answers (agg_abort_ex()) */
	agg->scratch = calloc((size_t)agg->p.max_world + 1, sizeof(*agg->scratch));
	if (agg->scratch == NULL)
		goto fail_trank;
	agg->ngone_max = agg->p.max_jobs < AGG_GONE_MAX ? agg->p.max_jobs : AGG_GONE_MAX;
	agg->gone = calloc(agg->ngone_max, sizeof(*agg->gone));
	if (agg->gone == NULL)
		goto fail_scratch;
	agg->gone_mem = calloc((size_t)agg->ngone_max * agg->p.max_world,
			       sizeof(*agg->gone_mem));
	if (agg->gone_mem == NULL)
		goto fail_gone;
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		agg->rng = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
			   (uint64_t)(uintptr_t)agg;
	}
	agg->gone_gap = agg->p.job_timeout_ns / AGG_GONE_GAP_DIV;
	if (agg->gone_gap < AGG_GONE_GAP_MIN)
		agg->gone_gap = AGG_GONE_GAP_MIN;
	return agg;

fail_gone:
	free(agg->gone);
fail_scratch:
	free(agg->scratch);
fail_trank:
	free(agg->trank_store);
fail_nonce:
	free(agg->nonce_store);
fail_left:
	free(agg->left_store);
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
	agg_mac_free(agg);	/* NULL-safe: agg_mac_init() may not have run */
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
	free(agg->trank_store);
	free(agg->nonce_store);
	free(agg->left_store);
	free(agg->bound_store);
	free(agg->addr_store);
	free(agg->track);
	free(agg->hash);
	if (agg->jobs != NULL)
		for (uint32_t i = 0; i < agg->p.max_jobs; i++)
			shr_auth_wipe(&agg->jobs[i].secret, sizeof(agg->jobs[i].secret));
	free(agg->jobs);
	shr_pool_free(agg->pool);
	agg_mac_free(agg);
	shr_auth_wipe(&agg->secret, sizeof(agg->secret));
	shr_auth_wipe(&agg->auth, sizeof(agg->auth));
	free(agg);
}
