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
 *
 * The fan-out keeps pointers to entries (struct agg_lcore's fan_hint[], fan_resolve()), valid
 * because an entry is never emptied or moved and the table is allocated once: a flush or a
 * resize of the table must clear fan_hint[] too.
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
 * Whether a member's entry is due for renewal (neigh_put()): less than half the pin left, or
 * not pinned. neigh_left() < neigh_pin / 2 in one unsigned compare: left in [half, pin] is
 * not due (half >= 1: neigh_pin >= 2).
 */
static inline bool
neigh_due(const struct agg_lcore *lc, const struct agg_neigh *n, uint32_t now)
{
	uint32_t half = lc->neigh_pin / 2;

	return n->until - now - half > lc->neigh_pin - half;
}

void agg_neigh_put(struct agg_lcore *lc, uint32_t ip_be, const struct rte_ether_addr *mac,
		   uint32_t now, bool member);

/*
 * Learn ip -> mac; member: the frame was admitted (pins the entry). The caller has made
 * neigh_learn()'s checks (ip neither 0 nor broadcast, mac unicast). Every DATA of a member
 * comes here: when its entry is in its home slot (neigh_hash() < entries: no mask), not due
 * and has its MAC, agg_neigh_put() would change nothing, so that is checked inline.
 */
static __rte_always_inline void
neigh_put(struct agg_lcore *lc, uint32_t ip_be, const struct rte_ether_addr *mac,
	  uint32_t now, bool member)
{
	const struct agg_neigh *n = &lc->neigh[neigh_hash(lc, ip_be)];

	if (member && n->ip == ip_be && !neigh_due(lc, n, now) &&
	    rte_is_same_ether_addr(&n->mac, mac))
		return;
	agg_neigh_put(lc, ip_be, mac, now, member);
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

#endif /* AGG_NEIGH_H */
