/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Port and mempool setup.
 *
 * Lanes and queues: the box listens on lanes UDP ports (base .. base+lanes-1); the agg
 * library gives lane i the slots s with s mod lanes == i, and the box gives lane i to data
 * lcore i mod nq, one rx/tx queue per data lcore (agg_lanes_map()). When the device supports
 * rte_flow we steer UDP dst port base+i to rx queue (i mod nq), so that every frame arrives
 * on the queue of the lcore that owns its slots. RSS is not used for this: a hash of the
 * 5-tuple does not map a lane to a fixed queue.
 *
 * Without rte_flow (af_packet, pcap, ring, memif, null here) the port keeps its nq queues if
 * it has them (af_packet: qpairs=nq, whose sockets share a PACKET_FANOUT group that spreads
 * frames by a flow hash, and rolls a frame over to another socket when one's ring is full),
 * and the data lcores hand each DATA to its slot's lcore in software (agg_dp.c): whatever
 * queue a frame comes in on, a slot is only touched by one lcore. With one queue (or one data
 * lcore) one lcore handles every lane.
 */

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <shr_drv_ethdev.h>

#include "agg_private.h"

#define AGG_NB_RXD 1024
#define AGG_NB_TXD 1024
#define AGG_POOL_CACHE 256
#define AGG_HDR_POOL_N 16383
#define AGG_CTL_RING 1024

static uint32_t
pow2_minus1(uint64_t n)
{
	uint64_t p = 1;

	while (p < n + 1)
		p <<= 1;
	return (uint32_t)(p - 1);
}

int
agg_pools_create(struct agg_ctx *ctx, uint16_t nq, uint16_t nlcores)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	size_t frame = agg_hdr_len(ctx) + ctx->tx_cap;
	/* rx: a whole frame of the port's MTU, and what the PMD asks for (af_packet: its
	 * PACKET_MMAP frame size); tx: the largest result */
	size_t rx = shr_drv_ethdev_rx_room(ctx->port_id, (uint32_t)ctx->mtu + RTE_ETHER_HDR_LEN +
					   RTE_ETHER_CRC_LEN + RTE_VLAN_HLEN);
	size_t room = RTE_MAX(frame, rx);
	uint64_t n;
	int socket = rte_socket_id();

	room = RTE_PKTMBUF_HEADROOM + RTE_MAX(room, (size_t)2048);
	room = RTE_ALIGN_CEIL(room, RTE_CACHE_LINE_SIZE);
	if (room > UINT16_MAX)
		return -EINVAL;
	/* rx rings + tx rings (copy mode holds full frames there) + per-lcore bursts, caches,
	 * tx buffers and spare payload mbufs + the control ring + with several queues, the
	 * lcores' handoff rings (agg_lcore_init()): all of them full at once must still leave
	 * the rx rings their refills, or a flood would starve every lane, not just the slow one */
	n = (uint64_t)nq * (AGG_NB_RXD + AGG_NB_TXD) +
	    (uint64_t)nlcores * (4 * AGG_BURST + AGG_POOL_CACHE + 1) + AGG_CTL_RING;
	if (nq > 1)
		n += (uint64_t)nlcores * (AGG_HANDOFF_RING - 1);
	n = RTE_MAX(n, (uint64_t)8191);
	snprintf(name, sizeof(name), "agg_pkt_%u", ctx->port_id);
	ctx->pkt_pool = rte_pktmbuf_pool_create(name, pow2_minus1(n), AGG_POOL_CACHE, 0,
						(uint16_t)room, socket);
	if (ctx->pkt_pool == NULL) {
		AGG_LOG(ERR, "cannot create the packet pool (%u x %zu bytes): %s",
			pow2_minus1(n), room, rte_strerror(rte_errno));
		return -rte_errno;
	}
	snprintf(name, sizeof(name), "agg_hdr_%u", ctx->port_id);
	ctx->hdr_pool = rte_pktmbuf_pool_create(name, AGG_HDR_POOL_N, AGG_POOL_CACHE, 0,
						RTE_PKTMBUF_HEADROOM + 64, socket);
	if (ctx->hdr_pool == NULL) {
		AGG_LOG(ERR, "cannot create the header pool: %s", rte_strerror(rte_errno));
		return -rte_errno;
	}
	snprintf(name, sizeof(name), "agg_ctl_%u", ctx->port_id);
	ctx->ctl_ring = rte_ring_create(name, AGG_CTL_RING, socket, RING_F_SC_DEQ);
	if (ctx->ctl_ring == NULL) {
		AGG_LOG(ERR, "cannot create the control ring: %s", rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

int
agg_port_configure(struct agg_ctx *ctx, uint16_t port_id, uint16_t nq)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t mtu = 0;
	int rc;

	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc < 0)
		return rc;
	if (nq > info.max_rx_queues || nq > info.max_tx_queues)
		return -ENOTSUP;
	memset(&conf, 0, sizeof(conf));
	if (ctx->zerocopy) {
		if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
			conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		} else {
			AGG_LOG(WARNING, "port %u (%s) does not accept multi-segment tx: "
				"results to several members are copied per member",
				port_id, info.driver_name);
			ctx->zerocopy = false;
		}
	}
	rc = rte_eth_dev_configure(port_id, nq, nq, &conf);
	if (rc < 0) {
		AGG_LOG(ERR, "port %u: configure %u queues: %s", port_id, nq, strerror(-rc));
		return rc;
	}
	ctx->tx_offloads = conf.txmode.offloads;
	if (ctx->conf->bench_s == 0) {
		/* af_packet: the kernel interface's MTU, within the PMD's frame size */
		rc = shr_drv_ethdev_mtu_set(port_id, AGG_MTU, &mtu);
		if (rc < 0)
			AGG_LOG(WARNING, "port %u (%s): MTU %u, not %u (%s)", port_id,
				info.driver_name, mtu, AGG_MTU, strerror(-rc));
	} else if (rte_eth_dev_get_mtu(port_id, &mtu) != 0 || mtu == 0) {
		mtu = RTE_ETHER_MTU;
	}
	ctx->mtu = mtu;
	return 0;
}

int
agg_port_start(struct agg_ctx *ctx, uint16_t port_id, uint16_t nq)
{
	struct rte_eth_dev_info info;
	struct rte_eth_txconf txconf;
	uint16_t nb_rxd = AGG_NB_RXD, nb_txd = AGG_NB_TXD;
	int socket = rte_eth_dev_socket_id(port_id);
	size_t frame = AGG_HDR_LEN + ctx->tx_cap;
	uint16_t q;
	int rc;

	if (socket < 0)
		socket = (int)rte_socket_id();
	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc < 0)
		return rc;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rxd, &nb_txd);
	if (rc < 0)
		return rc;
	if (ctx->conf->bench_s == 0 && frame > (size_t)ctx->mtu + RTE_ETHER_HDR_LEN)
		AGG_LOG(WARNING, "port %u: MTU %u is smaller than the largest message (%zu bytes "
			"of IPv4 with --max-elems %u): such frames will not pass", port_id,
			ctx->mtu, frame - RTE_ETHER_HDR_LEN, ctx->conf->params.max_elems);
	for (q = 0; q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port_id, q, nb_rxd, socket, NULL, ctx->pkt_pool);
		if (rc < 0) {
			AGG_LOG(ERR, "port %u: rx queue %u: %s", port_id, q, strerror(-rc));
			return rc;
		}
		txconf = info.default_txconf;
		txconf.offloads = ctx->tx_offloads;
		rc = rte_eth_tx_queue_setup(port_id, q, nb_txd, socket, &txconf);
		if (rc < 0) {
			AGG_LOG(ERR, "port %u: tx queue %u: %s", port_id, q, strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_macaddr_get(port_id, &ctx->mac);
	if (rc < 0)
		return rc;
	rc = rte_eth_dev_start(port_id);
	if (rc < 0) {
		AGG_LOG(ERR, "port %u: start: %s", port_id, strerror(-rc));
		return rc;
	}
	ctx->port_id = port_id;
	ctx->nq = nq;
	return 0;
}

/* Steer lane i (UDP dst port base+i to our address) to queue i mod nq. */
static int
agg_flow_steer(struct agg_ctx *ctx, uint16_t nq, uint16_t lanes)
{
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_ipv4 ip_spec, ip_mask;
	struct rte_flow_item_udp udp_spec, udp_mask;
	struct rte_flow_action_queue queue;
	struct rte_flow_item pattern[4];
	struct rte_flow_action actions[2];
	struct rte_flow_error err;
	uint16_t l;

	memset(&ip_spec, 0, sizeof(ip_spec));
	memset(&ip_mask, 0, sizeof(ip_mask));
	memset(&udp_spec, 0, sizeof(udp_spec));
	memset(&udp_mask, 0, sizeof(udp_mask));
	ip_spec.hdr.dst_addr = ctx->ip_be;
	ip_mask.hdr.dst_addr = UINT32_MAX;
	udp_mask.hdr.dst_port = UINT16_MAX;
	memset(pattern, 0, sizeof(pattern));
	pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
	pattern[1].spec = &ip_spec;
	pattern[1].mask = &ip_mask;
	pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
	pattern[2].spec = &udp_spec;
	pattern[2].mask = &udp_mask;
	pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
	memset(actions, 0, sizeof(actions));
	actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
	actions[0].conf = &queue;
	actions[1].type = RTE_FLOW_ACTION_TYPE_END;

	for (l = 0; l < lanes; l++) {
		udp_spec.hdr.dst_port = htons(ctx->port_lo + l);
		queue.index = l % nq;
		memset(&err, 0, sizeof(err));
		if (rte_flow_validate(ctx->port_id, &attr, pattern, actions, &err) != 0 ||
		    rte_flow_create(ctx->port_id, &attr, pattern, actions, &err) == NULL) {
			AGG_LOG(INFO, "port %u: no rte_flow steering for lane %u (%s)",
				ctx->port_id, l, err.message ? err.message : "unsupported");
			rte_flow_flush(ctx->port_id, &err);
			return -ENOTSUP;
		}
	}
	return 0;
}

int
agg_port_init(struct agg_ctx *ctx, uint16_t port_id, uint16_t nq_wanted)
{
	struct rte_eth_dev_info info;
	int rc;

	ctx->steering = false;
	rc = agg_port_start(ctx, port_id, nq_wanted);
	if (rc < 0)
		return rc;
	if (nq_wanted > 1 && agg_flow_steer(ctx, nq_wanted, ctx->lanes) == 0) {
		ctx->steering = true;
		AGG_LOG(INFO, "port %u: %u lanes steered to %u queues (rte_flow)", port_id,
			ctx->lanes, nq_wanted);
	} else if (nq_wanted > 1) {
		AGG_LOG(INFO, "port %u: no rte_flow steering: %u queues, each DATA handed to its "
			"lane's lcore in software", port_id, nq_wanted);
	}
	agg_lanes_map(ctx);
	if (rte_eth_dev_info_get(port_id, &info) == 0 && info.max_rx_queues > nq_wanted &&
	    strcmp(info.driver_name, "net_af_packet") == 0)
		AGG_LOG(WARNING, "port %u: %u of its %u queue pairs are used: frames the kernel "
			"fans out to the others are never read (give qpairs=%u, or as many data "
			"lcores and lanes as qpairs)", port_id, nq_wanted, info.max_rx_queues,
			nq_wanted);
	return 0;
}

void
agg_pools_free(struct agg_ctx *ctx)
{
	unsigned int pkt, hdr;
	struct rte_mbuf *m;

	if (ctx->ctl_ring != NULL) {
		while (rte_ring_sc_dequeue(ctx->ctl_ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(ctx->ctl_ring);
		ctx->ctl_ring = NULL;
	}
	/* the port is closed and the lcores' rings, spares and tx buffers freed: every mbuf
	 * is back (the pools' caches count as available) unless one was leaked */
	pkt = ctx->pkt_pool != NULL ? rte_mempool_in_use_count(ctx->pkt_pool) : 0;
	hdr = ctx->hdr_pool != NULL ? rte_mempool_in_use_count(ctx->hdr_pool) : 0;
	if (pkt != 0 || hdr != 0)
		AGG_LOG(WARNING, "mbufs not returned at exit: %u packet, %u header (a leak)",
			pkt, hdr);
	rte_mempool_free(ctx->hdr_pool);
	rte_mempool_free(ctx->pkt_pool);
	ctx->hdr_pool = NULL;
	ctx->pkt_pool = NULL;
}

void
agg_port_fini(struct agg_ctx *ctx)
{
	struct rte_flow_error err;

	if (ctx->steering)
		rte_flow_flush(ctx->port_id, &err);
	rte_eth_dev_stop(ctx->port_id);
	rte_eth_dev_close(ctx->port_id);
}
