/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The data lcores' neighbour tables: their size, and learning (the lookups: agg_neigh.h). */

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

/*
 * Learn ip -> mac; member: the frame was admitted (pins the entry). The caller has made
 * neigh_learn()'s checks (ip neither 0 nor broadcast, mac unicast); neigh_put() calls it.
 */
void
agg_neigh_put(struct agg_lcore *lc, uint32_t ip_be, const struct rte_ether_addr *mac,
	      uint32_t now, bool member)
{
	uint32_t h = neigh_hash(lc, ip_be), i;
	struct agg_neigh *n, *victim = NULL;

	for (i = 0; i < AGG_NEIGH_PROBE; i++) {
		n = &lc->neigh[(h + i) & lc->neigh_mask];
		if (n->ip == ip_be) {
			if (member) {
				/* renewed once half the pin has run: no store per packet */
				if (neigh_due(lc, n, now))
					n->until = now + lc->neigh_pin;
			} else if (neigh_left(lc, n, now) != 0) {
				return;	/* a member's: only its admitted traffic changes it */
			}
			/* written only when it changed: no store per packet */
			if (!rte_is_same_ether_addr(&n->mac, mac))
				rte_ether_addr_copy(mac, &n->mac);
			return;
		}
		if (n->ip == 0) {
			victim = n;	/* past here the address cannot be */
			break;
		}
		if (neigh_left(lc, n, now) == 0 &&
		    (victim == NULL || (int32_t)(n->until - victim->until) < 0))
			victim = n;	/* the oldest unpinned entry */
	}
	if (victim == NULL) {
		lc->st.neigh_full++;
		return;
	}
	rte_ether_addr_copy(mac, &victim->mac);
	victim->until = member ? now + lc->neigh_pin : now;
	victim->ip = ip_be;
}
