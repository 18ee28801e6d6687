/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * What lib/shard's unit tests (test_shard*.c) share: the rig, rank 0 of a job sharded over k
 * boxes, each a real aggregator (lib/agg) behind the fake driver of comm_test.h, which plays
 * the job's other ranks at that box.
 */

#ifndef SHR_SHARD_TEST_H
#define SHR_SHARD_TEST_H

#include "comm_test.h"

#include <shr_shard.h>

#define T_BOXES_MAX 3

struct rig {
	uint16_t k;
	uint16_t world;
	uint16_t me;		/* the collectives' rank: the tree rank, or 0 (rank 0) */
	uint16_t n;		/* the collectives' world: the tree's, or world */
	struct fake *f[T_BOXES_MAX];
	struct shr_shard *s;
	uint64_t base[T_BOXES_MAX];	/* each box's stream offset */
	char why[256];
};

/*
 * Rank 0 of a job of world ranks at each of k boxes. A tree's rank (tworld not 0): its tree
 * rank is trank of tworld, and the box's other members (the fake ranks) stand for the tree
 * ranks below it and above it, one range each (so world is 1 + how many of them there are).
 */
static inline int
rig_open_tree(struct rig *g, uint16_t k, uint16_t world, uint16_t trank, uint16_t tworld,
	      unsigned int loss, uint32_t timeout_ms)
{
	struct shr_drv *dev[T_BOXES_MAX];
	uint32_t ip[T_BOXES_MAX];
	struct shr_shard_params p = {
		.comm = {
			.job = F_JOB, .rank = 0, .world = world, .dtype = SHR_DTYPE_INT32,
			.window = F_WINDOW, .chunk_elems = F_CHUNK, .timeout_ms = timeout_ms,
			.agg_port = F_PORT, .why = g->why, .why_len = sizeof(g->why),
			.tree_rank = trank, .tree_world = tworld,
		},
		.nboxes = k, .agg_ip = ip, .dev = dev,
	};
	uint16_t j;

	memset(g, 0, sizeof(*g));
	p.comm.why = g->why;
	g->k = k;
	g->world = world;
	g->me = trank;
	g->n = tworld != 0 ? tworld : world;
	if (tworld != 0)
		assert_int_equal(world, 1 + (trank > 0) + (trank + 1 < tworld));
	for (j = 0; j < k; j++) {
		g->f[j] = fake_new(world, 100u + j);
		if (tworld != 0 && trank > 0) {
			g->f[j]->tree_first[1] = 0;
			g->f[j]->tree_count[1] = trank;
		}
		if (tworld != 0 && trank + 1 < tworld) {
			g->f[j]->tree_first[world - 1] = trank + 1;
			g->f[j]->tree_count[world - 1] = tworld - trank - 1;
		}
		g->f[j]->loss = loss;
		g->f[j]->dup = loss;
		g->f[j]->tx_loss = loss;
		g->f[j]->shuffle = loss != 0;
		dev[j] = &g->f[j]->drv;
		ip[j] = F_AGG_IP;
	}
	g->s = shr_shard_create(&p);
	return g->s == NULL ? -errno : 0;
}

static inline int
rig_open(struct rig *g, uint16_t k, uint16_t world, unsigned int loss, uint32_t timeout_ms)
{
	return rig_open_tree(g, k, world, 0, 0, loss, timeout_ms);
}

static inline void
rig_close(struct rig *g)
{
	uint16_t j;

	if (g->s != NULL)
		assert_int_equal(shr_shard_destroy(g->s), 0);
	for (j = 0; j < g->k; j++) {
		assert_int_equal(g->f[j]->leaves, g->s != NULL ? 1 : g->f[j]->leaves);
		fake_free(g->f[j]);
	}
}

#endif /* SHR_SHARD_TEST_H */
