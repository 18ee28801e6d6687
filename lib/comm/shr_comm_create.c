/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The communicator's creation and end: the parameters checked before anything is sent, the
 * driver, the path and the JOIN (shr_comm_join.c), the endpoint (its send() is
 * comm_ep_send(), shr_comm.c); shr_comm_destroy() LEAVEs, waiting for the box's LEAVE_ACK
 * a while.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shr_auth.h>
#include <shr_proto.h>

#include "shr_comm.h"

#include "shr_comm_private.h"

/*
 * What shr_comm_create() refuses before anything is sent (else the endpoint refused some
 * only after the JOIN, once the other ranks had joined: ETIMEDOUT or a bare EINVAL), said in
 * params->why. Returns true when refused.
 */
static bool
comm_params_bad(const struct shr_comm_params *p)
{
	char w[160] = "";

	if (p->agg_ip == 0)
		snprintf(w, sizeof(w), "agg_ip: no aggregator address");
	else if (p->world == 0 || p->world > SHR_PROTO_MAX_WORLD || p->rank >= p->world)
		snprintf(w, sizeof(w), "rank %u, world %u: need rank < world <= %u", p->rank,
			 p->world, SHR_PROTO_MAX_WORLD);
	else if (shr_proto_dtype_size(p->dtype) == 0)
		snprintf(w, sizeof(w), "dtype %u: not a dtype", p->dtype);
	else if (p->tree_world > SHR_PROTO_MAX_WORLD ||
		 (p->tree_world != 0 && p->tree_rank >= p->tree_world) ||
		 (p->tree_world == 0 && p->tree_rank != 0))
		snprintf(w, sizeof(w), "tree_rank %u, tree_world %u: need tree_rank < tree_world "
			 "<= %u, or both 0", p->tree_rank, p->tree_world, SHR_PROTO_MAX_WORLD);
	else if (p->cc_target_us > SHR_COMM_CC_TARGET_MAX_US && p->cc_target_us != SHR_COMM_CC_OFF)
		snprintf(w, sizeof(w), "cc_target_us %u: at most %u (or SHR_COMM_CC_OFF)",
			 p->cc_target_us, SHR_COMM_CC_TARGET_MAX_US);
	else if (p->window > SHR_ENDPOINT_MAX_WINDOW || p->slots > SHR_ENDPOINT_MAX_WINDOW)
		snprintf(w, sizeof(w), "window %u, slots %u: at most %u each", p->window, p->slots,
			 SHR_ENDPOINT_MAX_WINDOW);
	else if (p->rto_min_us > COMM_RTO_MAX_US)
		snprintf(w, sizeof(w), "rto_min_us %u: above the RTO's ceiling, %u us",
			 p->rto_min_us, COMM_RTO_MAX_US);
	else if (p->vlan > 4094)
		snprintf(w, sizeof(w), "vlan %u: 1..4094, or 0 (untagged)", p->vlan);
	if (w[0] == '\0')
		return false;
	if (p->why != NULL && p->why_len != 0)
		snprintf(p->why, p->why_len, "%s", w);
	return true;
}

struct shr_comm *
shr_comm_create(const struct shr_comm_params *params)
{
	struct shr_endpoint_params ep = { 0 };
	struct shr_endpoint_io io;
	struct shr_comm *c;
	int rc;

	if (params == NULL || comm_params_bad(params)) {
		if (params != NULL)
			shr_drv_close(params->dev);
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		shr_drv_close(params->dev);
		return NULL;
	}
	c->p = *params;
	if (c->p.agg_port == 0)
		c->p.agg_port = SHR_PROTO_UDP_PORT;
	if (c->p.window == 0)
		c->p.window = COMM_DEF_WINDOW;
	if (c->p.slots == 0)
		c->p.slots = shr_endpoint_slots(c->p.window);
	if (c->p.slots < c->p.window) {
		rc = -EINVAL;
		goto fail;
	}
	if (c->p.timeout_ms == 0)
		c->p.timeout_ms = COMM_DEF_TIMEOUT_MS;
	shr_spin_init(&c->spin, c->p.spin, comm_now_ns, c);	/* 0: automatic */
	if (c->p.secret != NULL && c->p.secret->len != 0) {
		if (c->p.secret->len < SHR_AUTH_SECRET_MIN ||
		    c->p.secret->len > SHR_AUTH_SECRET_MAX) {
			rc = -EINVAL;
			goto fail;
		}
		c->secret = *c->p.secret;
	}
	c->p.secret = NULL;	/* not kept: the caller's copy */
	rc = comm_mac_init(c);
	if (rc < 0)
		goto fail;
	if (c->p.dev == NULL && c->p.driver != NULL && strcmp(c->p.driver, "dpdk") == 0) {
		if (c->p.local_ip == 0) {
			rc = -EINVAL;
			goto fail;
		}
		if (c->p.local_port == 0)
			c->p.local_port = SHR_PROTO_UDP_PORT;
	}
	c->lanes = 1;
	c->nonce = comm_nonce();
	for (rc = 0; rc < COMM_OPS; rc++)
		c->ops[rc].req = -1;

	c->drv = c->p.dev != NULL ? c->p.dev : comm_drv_open(&c->p);
	c->p.dev = NULL;
	c->p.driver = NULL;	/* not kept: the caller's string */
	if (c->drv == NULL) {
		rc = -errno;
		goto fail;
	}
	rc = comm_path(c);
	if (rc < 0)
		goto fail_drv;
	rc = comm_join(c);
	if (rc < 0) {
		comm_join_abandon(c);
		comm_why_join(c, rc);
		goto fail_drv;
	}
	rc = comm_group_join(c);
	if (rc < 0)
		goto fail_joined;

	ep.job = c->p.job;
	ep.rank = c->p.rank;
	ep.world = c->p.world;
	ep.tree_rank = c->p.tree_rank;
	ep.tree_world = c->p.tree_world;
	ep.dtype = c->p.dtype;
	ep.token = c->token;
	ep.window = c->slots;
	ep.inflight = comm_inflight(c);
	ep.lanes = c->lanes;
	ep.chunk_elems = c->chunk_elems;
	ep.fail_ns = (uint64_t)c->p.timeout_ms * 1000000ull;
	ep.rto_min_ns = (uint64_t)c->p.rto_min_us * 1000ull;
	ep.rto_init_ns = ep.rto_min_ns > COMM_RTO_INIT_NS ? ep.rto_min_ns : COMM_RTO_INIT_NS;
	ep.cc_target_ns = c->p.cc_target_us == SHR_COMM_CC_OFF ? SHR_ENDPOINT_CC_OFF :
			  (uint64_t)c->p.cc_target_us * 1000ull;
	io.send = comm_ep_send;
	io.now_ns = comm_now_ns;
	io.ctx = c;
	c->ep = shr_endpoint_create(&ep, &io);
	if (c->ep == NULL) {
		rc = -errno;
		goto fail_joined;
	}
	c->p.why = NULL;	/* the caller's buffer */
	return c;

fail_joined:
	(void)comm_send_ctl(c, SHR_MSG_LEAVE);
fail_drv:
	shr_drv_close(c->drv);
	comm_mac_fini(c);
	shr_auth_wipe(&c->secret, sizeof(c->secret));
	free(c);
	errno = -rc;
	return NULL;
fail:
	shr_drv_close(c->p.dev);
	comm_mac_fini(c);
	shr_auth_wipe(&c->secret, sizeof(c->secret));
	free(c);
	errno = -rc;
	return NULL;
}

int
shr_comm_destroy(struct shr_comm *comm)
{
	uint64_t now, deadline, next = 0;
	unsigned int i;
	int rc = 0;

	if (comm == NULL)
		return 0;
	/* In-flight sends reference buffers the caller may free next: drop them. */
	comm->txq_n = 0;
	shr_endpoint_free(comm->ep);
	comm->ep = NULL;
	for (i = 0; i < COMM_OPS; i++)
		comm_q_free(comm->ops[i].q);
	now = comm_now_ns(comm);
	deadline = now + COMM_LEAVE_WAIT_NS;
	while (!comm->left && !comm->aborted) {
		if (now >= deadline) {
			rc = -ETIMEDOUT;	/* the box still holds this rank */
			break;
		}
		if (now >= next) {
			rc = comm_send_ctl(comm, SHR_MSG_LEAVE);
			if (rc < 0)
				break;
			next = now + COMM_LEAVE_RESEND_NS;
		}
		rc = comm_round(comm);
		if (rc < 0)
			break;
		if (rc == 0)
			(void)shr_drv_wait(comm->drv, 1000);
		rc = 0;
		now = comm_now_ns(comm);
	}
	shr_drv_close(comm->drv);
	comm_mac_fini(comm);
	shr_auth_wipe(&comm->secret, sizeof(comm->secret));
	free(comm);
	return rc;
}
