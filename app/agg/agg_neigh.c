/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The data lcores' neighbour tables: their size (the rest is inline, agg_neigh.h). */

#include <rte_common.h>

#include "agg_neigh.h"

uint32_t
agg_neigh_entries(const struct agg_conf *conf)
{
	uint64_t members = conf->params.max_world != 0 ? conf->params.max_world :
							 AGG_DEF_MAX_WORLD;
	uint64_t fixed = 0, n = AGG_NEIGH_MIN;
	uint32_t i;

	for (i = 0; i < conf->njobs; i++)
		fixed += conf->jobs[i].conf.world;
	members = RTE_MAX(members, fixed);
	while (n < members * AGG_NEIGH_PER_MEMBER && n < AGG_NEIGH_MAX)
		n <<= 1;
	return (uint32_t)n;
}
