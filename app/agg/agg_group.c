/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The result group in shouter-agg's configuration (lib/agg, shr_agg_params::group_ip): the
 * key result_group ([agg] or --result-group A.B.C.D[:PORT]). A job whose members all offer
 * it (their JOINs carry SHR_FLAG_GROUP) gets each RESULT that goes to every member once, to
 * that address, and the network copies it: one frame per result leaves the box's port
 * instead of one per member. The address is an IPv4 multicast group (224.0.0.0/4; the
 * switches must forward it to the members: IGMP snooping needs a querier, or flooding) or a
 * broadcast address of the box's segment (255.255.255.255, or the directed broadcast of a
 * prefix of 8 to 30 bits that holds --ip: every host of the segment takes the frame in, and
 * drops it at UDP unless one of its sockets is a member's). Job entry i uses UDP port PORT +
 * i (default SHR_AGG_GROUP_PORT), so two live jobs never share one.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agg_private.h"

int
agg_group_key(struct agg_conf *conf, const char *what, const char *key, const char *val)
{
	struct shr_agg_params *p = &conf->params;
	uint64_t a;

	if (strcmp(key, "result_group") != 0 && strcmp(key, "result-group") != 0)
		return -ENOENT;
	if (agg_conf_addr(what, val, SHR_AGG_GROUP_PORT, &a) < 0)
		return -EINVAL;
	p->group_ip = SHR_AGG_ADDR_IP(a);
	p->group_port = SHR_AGG_ADDR_PORT(a);
	return 0;
}

/* Whether g is the directed broadcast of a prefix of 8 to 30 bits that holds ip. */
static bool
group_is_bcast_of(uint32_t g, uint32_t ip)
{
	unsigned int len;

	for (len = 8; len <= 30; len++) {
		uint32_t host = UINT32_MAX >> len;

		if ((ip & ~host) == (g & ~host) && (g & host) == host && ip != g)
			return true;
	}
	return false;
}

uint32_t
agg_group_last_port(const struct shr_agg_params *p)
{
	return p->group_port + (p->max_jobs != 0 ? p->max_jobs : SHR_AGG_DEF_MAX_JOBS) - 1u;
}

int
agg_group_check(const struct agg_conf *conf)
{
	const struct shr_agg_params *p = &conf->params;
	uint32_t g = p->group_ip, last = agg_group_last_port(p);

	if (g == 0)
		return 0;
	if (!shr_l2_ip_multicast(g) && g != UINT32_MAX && !group_is_bcast_of(g, conf->ip)) {
		fprintf(stderr, "shouter-agg: result_group %u.%u.%u.%u: neither a multicast group "
			"(224.0.0.0/4) nor a broadcast address of the segment of --ip (its "
			"prefix's highest address, or 255.255.255.255)\n", g >> 24,
			(g >> 16) & 0xff, (g >> 8) & 0xff, g & 0xff);
		return -EINVAL;
	}
	if (last > 65535) {
		fprintf(stderr, "shouter-agg: result_group: ports %u..%u (one per job of "
			"max_jobs %u) exceed 65535\n", p->group_port, last,
			last - p->group_port + 1);
		return -EINVAL;
	}
	return 0;
}

