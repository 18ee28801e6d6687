/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The ethdev driver's control frames: the ARP cache (learnt only from replies to our own
 * requests, and pinned once learnt: issue 15), ARP requests and replies, ICMP echo replies,
 * in the device's VLAN if it has one (a request is sent tagged, answers are made in place).
 * Each frame sent is counted in ctl_pkts (or tx_drops when the TX queue is full).
 */

#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "shr_drv_ethdev_private.h"

int
eth_arp_pin(struct eth_dev *d, uint32_t ip, const struct rte_ether_addr *mac)
{
	unsigned int i;

	for (i = 0; i < ETH_ARP_CACHE; i++) {
		if (d->arp[i].ip == 0) {
			d->arp[i].ip = ip;
			rte_ether_addr_copy(mac, &d->arp[i].mac);
			return 0;
		}
	}
	return -ENOSPC;
}

/* Transmit one control frame (ARP, ICMP); frees it if the queue is full. */
static void
eth_tx_ctl(struct eth_dev *d, struct rte_mbuf *m)
{
	if (rte_eth_tx_burst(d->port, 0, &m, 1) == 1) {
		d->base.stats.ctl_pkts++;
		return;
	}
	rte_pktmbuf_free(m);
	d->base.stats.tx_drops++;
}

static void
arp_fill(struct rte_arp_hdr *a, uint16_t opcode)
{
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = sizeof(uint32_t);
	a->arp_opcode = rte_cpu_to_be_16(opcode);
}

void
eth_arp_request(struct eth_dev *d, uint32_t ip)
{
	static const struct rte_ether_addr bcast = {
		.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *a;
	struct rte_mbuf *m;

	d->arp_last_req_ns = eth_now_ns();
	d->arp_req_ip = ip;
	m = rte_pktmbuf_alloc(d->pool);
	if (m == NULL)
		return;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, d->l2_len + sizeof(*a));
	if (eh == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	a = (struct rte_arp_hdr *)((uint8_t *)eh +
				   eth_l2_write(d, eh, &bcast, RTE_ETHER_TYPE_ARP));
	arp_fill(a, RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(&d->mac, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = d->local_ip_be;
	memset(&a->arp_data.arp_tha, 0, sizeof(a->arp_data.arp_tha));
	a->arp_data.arp_tip = rte_cpu_to_be_32(ip);
	eth_tx_ctl(d, m);
}

void
eth_arp_input(struct eth_dev *d, struct rte_mbuf *m, struct rte_ether_hdr *eh, uint32_t l2)
{
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)((uint8_t *)eh + l2);
	const struct rte_ether_addr *known;
	uint32_t sip, tip;
	uint16_t op;

	if (rte_pktmbuf_data_len(m) < l2 + sizeof(*a) ||
	    a->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    a->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    a->arp_hlen != RTE_ETHER_ADDR_LEN || a->arp_plen != sizeof(uint32_t))
		goto drop;
	sip = rte_be_to_cpu_32(a->arp_data.arp_sip);
	tip = rte_be_to_cpu_32(a->arp_data.arp_tip);
	op = rte_be_to_cpu_16(a->arp_opcode);
	if (tip != d->base.local_ip)
		goto drop;
	known = eth_arp_lookup(d, sip);
	if (op != RTE_ARP_OP_REQUEST) {
		/*
		 * Only a reply to our own request teaches a MAC, once: a learned neighbour
		 * is pinned (an unsolicited or late reply cannot redirect our traffic).
		 */
		if (known == NULL && sip == d->arp_req_ip && sip != 0 &&
		    eth_now_ns() - d->arp_last_req_ns <= ETH_ARP_SOLICIT_NS &&
		    rte_is_unicast_ether_addr(&a->arp_data.arp_sha) &&
		    !rte_is_zero_ether_addr(&a->arp_data.arp_sha) &&
		    eth_arp_pin(d, sip, &a->arp_data.arp_sha) == 0)
			d->base.stats.ctl_pkts++;
		else if (known == NULL || !rte_is_same_ether_addr(known, &a->arp_data.arp_sha))
			d->base.stats.ctl_ignored++;
		else
			d->base.stats.ctl_pkts++;	/* the same answer again */
		rte_pktmbuf_free(m);
		return;
	}
	/* A request teaches nothing: it is answered (to its sender's MAC) and that is all. */
	if (known != NULL && !rte_is_same_ether_addr(known, &a->arp_data.arp_sha))
		d->base.stats.ctl_ignored++;
	/* Turn the request into the reply, in place. */
	arp_fill(a, RTE_ARP_OP_REPLY);
	rte_ether_addr_copy(&a->arp_data.arp_sha, &a->arp_data.arp_tha);
	a->arp_data.arp_tip = a->arp_data.arp_sip;
	rte_ether_addr_copy(&d->mac, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = d->local_ip_be;
	rte_ether_addr_copy(&eh->src_addr, &eh->dst_addr);
	rte_ether_addr_copy(&d->mac, &eh->src_addr);
	m->ol_flags = 0;
	eth_tx_ctl(d, m);
	return;
drop:
	d->base.stats.rx_drops++;
	rte_pktmbuf_free(m);
}

void
eth_icmp_input(struct eth_dev *d, struct rte_mbuf *m, struct rte_ether_hdr *eh, uint32_t l2,
	       struct rte_ipv4_hdr *ip, unsigned int ihl, unsigned int ip_len)
{
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)((uint8_t *)ip + ihl);
	unsigned int icmp_len = ip_len - ihl;
	uint16_t ck;

	if (icmp_len < sizeof(*ic) || ic->icmp_type != RTE_IP_ICMP_ECHO_REQUEST ||
	    ic->icmp_code != 0) {
		d->base.stats.rx_drops++;
		rte_pktmbuf_free(m);
		return;
	}
	ic->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	ic->icmp_cksum = 0;
	ck = ~rte_raw_cksum(ic, icmp_len);
	ic->icmp_cksum = ck;
	ip->dst_addr = ip->src_addr;
	ip->src_addr = d->local_ip_be;
	ip->time_to_live = 64;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	rte_ether_addr_copy(&eh->src_addr, &eh->dst_addr);
	rte_ether_addr_copy(&d->mac, &eh->src_addr);
	/* Drop any trailer (Ethernet padding) past the IP datagram. */
	rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - (l2 + ip_len));
	m->ol_flags = 0;
	eth_tx_ctl(d, m);
}
