/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef AGG_NEIGH_H
#define AGG_NEIGH_H

/*
 * The data lcores' neighbour tables (IPv4 -> MAC), private to app/agg: the lookups and
 * updates the data path makes per frame, inline (agg_dp.c); the table's size in agg_neigh.c.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

#include "agg_private.h"

/*
 * Per lcore, open addressing: an address lives within AGG_NEIGH_PROBE entries of its home
 * entry (Fibonacci hashing of the host-order address, so that consecutive addresses, as a
 * job's members often have, spread evenly). Entries are replaced, never emptied, so a lookup
 * stops at the first empty entry. The table has AGG_NEIGH_PER_MEMBER entries per member of
 * the largest job (agg_neigh_entries()): a job of max_world members fills a quarter of it.
 *
 * Members are never evicted by other traffic. A message shr_agg_input() admits comes from a
 * member's bound address: it pins the sender's entry for AGG_NEIGH_PIN_TIMEOUTS job timeouts.
 * Every member of a round still open on this lcore sent its DATA less than a job timeout (and
 * a tick) ago, or the job would have been aborted, so every destination of a RESULT is pinned
 * when the fan-out looks it up. Other valid frames to us (ARP, ICMP, refused messages: a scan,
 * a flood from random addresses) are learned unpinned, into an empty entry or over the oldest
 * unpinned one; they never replace a pinned entry nor change its MAC (a member's MAC follows
 * its admitted traffic). A source that finds every entry of its probe window pinned is not
 * learned (counted in neigh_full).
 */

static inline uint32_t
neigh_now(uint64_t now_ns)
{
	return (uint32_t)(now_ns >> AGG_NEIGH_TIME_SHIFT);
}

/*
 * Time left on an entry's pin: 1..neigh_pin, or 0 (not pinned). Only a pin's own range counts,
 * so an entry left alone while the clock wraps (2^32 units, 52 days) looks pinned for at most
 * one pin, once per wrap.
 */
static inline uint32_t
neigh_left(const struct agg_lcore *lc, const struct agg_neigh *n, uint32_t now)
{
	uint32_t left = n->until - now;

	return left <= lc->neigh_pin ? left : 0;
}

static inline uint32_t
neigh_hash(const struct agg_lcore *lc, uint32_t ip_be)
{
	return (rte_be_to_cpu_32(ip_be) * 2654435761u) >> lc->neigh_shift;
}

/*
 * Learn ip -> mac; member: the frame was admitted (pins the entry). The caller has made
 * neigh_learn()'s checks (ip neither 0 nor broadcast, mac unicast).
 */
static __rte_always_inline void
neigh_put(struct agg_lcore *lc, uint32_t ip_be, const struct rte_ether_addr *mac,
	  uint32_t now, bool member)
{
	uint32_t h = neigh_hash(lc, ip_be), i;
	struct agg_neigh *n, *victim = NULL;

	for (i = 0; i < AGG_NEIGH_PROBE; i++) {
		n = &lc->neigh[(h + i) & lc->neigh_mask];
		if (n->ip == ip_be) {
			if (member) {
				/* renewed once half the pin has run: no store per packet */
				if (neigh_left(lc, n, now) < lc->neigh_pin / 2)
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

/* Learn ip -> mac, unless ip is 0 or broadcast or mac a group's (no host's); member: the
 * frame was admitted (pins the entry). */
static inline void
neigh_learn(struct agg_lcore *lc, uint32_t ip_be, const struct rte_ether_addr *mac,
	    uint32_t now, bool member)
{
	if (ip_be == 0 || ip_be == UINT32_MAX || !rte_is_unicast_ether_addr(mac))
		return;
	neigh_put(lc, ip_be, mac, now, member);
}

/* The entry of ip, or NULL. */
static inline const struct agg_neigh *
neigh_find(const struct agg_lcore *lc, uint32_t ip_be)
{
	uint32_t h = neigh_hash(lc, ip_be), i;
	const struct agg_neigh *n;

	if (ip_be == 0)
		return NULL;	/* 0 marks an empty entry: it would match one */
	for (i = 0; i < AGG_NEIGH_PROBE; i++) {
		n = &lc->neigh[(h + i) & lc->neigh_mask];
		if (n->ip == ip_be)
			return n;
		if (n->ip == 0)
			return NULL;
	}
	return NULL;
}

static inline const struct rte_ether_addr *
neigh_lookup(const struct agg_lcore *lc, uint32_t ip_be)
{
	const struct agg_neigh *n = neigh_find(lc, ip_be);

	return n != NULL ? &n->mac : NULL;
}

#endif /* AGG_NEIGH_H */
