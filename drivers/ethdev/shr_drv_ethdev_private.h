/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_DRV_ETHDEV_PRIVATE_H
#define SHR_DRV_ETHDEV_PRIVATE_H

/*
 * The ethdev driver's state, shared by its data path and device setup (shr_drv_ethdev.c) and
 * its control frames: the ARP cache, ARP requests and replies, ICMP echo
 * (shr_drv_ethdev_ctl.c).
 */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "shr_drv_ethdev.h"
#include "shr_l2.h"

#define ETH_ARP_CACHE 16
#define ETH_ARP_SOLICIT_NS 2000000000ull	/* a reply to our request comes within 2 s */

struct arp_entry {
	uint32_t ip;			/* host order; 0: empty */
	struct rte_ether_addr mac;
};

struct eth_dev {
	struct shr_drv base;		/* must be first */
	uint16_t port;
	bool eal_owned;			/* we called rte_eal_init() */
	bool tx_ip_cksum;		/* IPv4 checksum offloaded on TX */
	bool rx_ip_cksum;		/* IPv4 checksum checked by the port on RX */
	uint32_t idle_us;
	bool slack_set;			/* wait() set its thread's timer slack */
	uint16_t ip_id;
	uint16_t vlan;			/* 802.1Q VLAN id, 0: untagged */
	uint16_t l2_len;		/* Ethernet header sent: 14, 18 with a tag */
	uint32_t local_ip_be;		/* base.local_ip, network order (set once) */
	uint16_t local_port_be;		/* base.local_port, network order (set once) */
	uint32_t group_ip_be;		/* the result group (group_join()), 0: none */
	uint16_t group_port_be;		/* its UDP port */
	struct rte_ether_addr group_mac; /* its MAC: 01:00:5e + 23 bits, or broadcast */
	struct rte_ether_addr mac;
	struct rte_mempool *pool;
	uint64_t arp_last_req_ns;
	uint32_t arp_req_ip;		/* the address of our last request (host order) */
	struct arp_entry arp[ETH_ARP_CACHE];
	/* mbufs whose payload the caller holds until the next rx_burst */
	struct rte_mbuf *held[SHR_DRV_BURST_MAX];
	unsigned int nheld;
	/* received by wait(), not yet handed out */
	struct rte_mbuf *pending[SHR_DRV_BURST_MAX];
	unsigned int npending, pending_head;
};

static inline uint64_t
eth_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The MAC of ip (host order) in the ARP cache, or NULL. */
static inline const struct rte_ether_addr *
eth_arp_lookup(const struct eth_dev *d, uint32_t ip)
{
	unsigned int i;

	for (i = 0; i < ETH_ARP_CACHE; i++)
		if (d->arp[i].ip == ip)
			return &d->arp[i].mac;
	return NULL;
}

/*
 * Write the Ethernet header (tagged with d->vlan, if any) of a frame to dst at eh; returns
 * its length (d->l2_len): where the payload starts.
 */
static inline uint32_t
eth_l2_write(const struct eth_dev *d, struct rte_ether_hdr *eh,
	     const struct rte_ether_addr *dst, uint16_t etype)
{
	rte_ether_addr_copy(dst, &eh->dst_addr);
	rte_ether_addr_copy(&d->mac, &eh->src_addr);
	return shr_l2_type_write(&eh->ether_type, d->vlan, etype);
}

/* Pin ip (host order) at mac: 0, or -ENOSPC (the cache is full). Never moves an entry. */
int eth_arp_pin(struct eth_dev *d, uint32_t ip, const struct rte_ether_addr *mac);

/*
 * Send an ARP request for ip (host order) from the port (dropped if no mbuf); records the
 * time in d->arp_last_req_ns and ip in d->arp_req_ip.
 */
void eth_arp_request(struct eth_dev *d, uint32_t ip);

/*
 * Handle an ARP frame (eh: its Ethernet header in m, l2 bytes with its tag) to the local
 * address: a reply to our own last request (within ETH_ARP_SOLICIT_NS) teaches the sender's
 * MAC, unless that address is learned already (neighbours are pinned); every other reply,
 * and a request from an address learned with another MAC, is counted in ctl_ignored; a
 * request is answered in place (so in the VLAN it came in). A malformed frame or one for
 * another address is counted as an rx drop. Consumes m.
 */
void eth_arp_input(struct eth_dev *d, struct rte_mbuf *m, struct rte_ether_hdr *eh,
		   uint32_t l2);

/*
 * Answer an ICMP echo request (ip: its IPv4 header of ihl bytes in m, l2 bytes after eh,
 * ip_len the datagram's length, checked by the caller) in place; anything else is counted as
 * an rx drop. Consumes m.
 */
void eth_icmp_input(struct eth_dev *d, struct rte_mbuf *m, struct rte_ether_hdr *eh,
		    uint32_t l2, struct rte_ipv4_hdr *ip, unsigned int ihl, unsigned int ip_len);

#endif /* SHR_DRV_ETHDEV_PRIVATE_H */
