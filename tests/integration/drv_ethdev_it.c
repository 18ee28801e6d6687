/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The ranks' DPDK driver (drivers/ethdev) as the minimal IPv4 host it is, under EAL with
 * --no-huge --no-pci (no root): its port is a ring device (rte_eth_from_rings), so what the
 * test enqueues on the rx ring is what the port receives, and what the driver sends lands on
 * the tx ring, read back by the test. Everything happens in this thread, in order: a frame is
 * enqueued, rx_burst() reads it, and whatever the driver answered is on the tx ring when
 * rx_burst() returns. The ring device offers no checksum offload: the driver checks IPv4
 * header checksums itself.
 *
 * Checked: a UDP datagram whose IPv4 header was corrupted on the way (the checksum no longer
 * matches) is dropped, not handed out with the corrupted source; an ARP request is answered
 * for the driver's own address only (one for the box's or another rank's address is not: the
 * driver would draw their traffic to its port); datagrams not for the driver (another MAC,
 * address or port), with lengths past the frame, or of another VLAN whose tag the device
 * stripped, are dropped; a datagram sent goes out as the box expects it. An ARP request cut
 * short is dropped; a control reply that finds the TX queue full is dropped and freed; an
 * ICMP echo request is answered with a reply ping takes, an echo reply is not answered.
 */

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include <cmocka.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include <shr_drv_ethdev.h>

#define ME_IP 0xc6120002u	/* 198.18.0.2: the driver's */
#define PEER_IP 0xc6120001u	/* 198.18.0.1: the box, its MAC pinned */
#define OTHER_IP 0xc6120003u	/* 198.18.0.3: another rank */
#define ME_PORT 40000u
#define PEER_PORT 47000u
#define RING_SIZE 256u

static const struct rte_ether_addr peer_mac = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 },
};
static const struct rte_ether_addr other_mac = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x03 },
};

struct it {
	struct rte_ring *rx;		/* what the port receives */
	struct rte_ring *tx;		/* what the driver sent */
	struct rte_mempool *pool;	/* the test's frames */
	struct shr_drv *dev;
	struct rte_ether_addr mac;	/* the port's */
};

static struct it g_it;

static int
setup(void **state)
{
	struct it *t = &g_it;
	struct shr_drv_ethdev_conf conf = {
		.local_ip = ME_IP, .local_port = ME_PORT, .peer_ip = PEER_IP,
		.nb_mbufs = 511, .nb_desc = 128,
	};
	int port;

	t->rx = rte_ring_create("drv_it_rx", RING_SIZE, (int)rte_socket_id(),
				RING_F_SP_ENQ | RING_F_SC_DEQ);
	t->tx = rte_ring_create("drv_it_tx", RING_SIZE, (int)rte_socket_id(),
				RING_F_SP_ENQ | RING_F_SC_DEQ);
	t->pool = rte_pktmbuf_pool_create("drv_it_frames", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (t->rx == NULL || t->tx == NULL || t->pool == NULL)
		return -1;
	port = rte_eth_from_rings("net_ring_drv_it", &t->rx, 1, &t->tx, 1, rte_socket_id());
	if (port < 0)
		return -1;
	conf.port_id = (uint16_t)port;
	memcpy(conf.peer_mac, peer_mac.addr_bytes, sizeof(conf.peer_mac));
	t->dev = shr_drv_ethdev_create(&conf);
	if (t->dev == NULL) {
		fprintf(stderr, "shr_drv_ethdev_create: %s\n", strerror(errno));
		return -1;
	}
	if (rte_eth_macaddr_get((uint16_t)port, &t->mac) != 0)
		return -1;
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct it *t = *state;

	shr_drv_close(t->dev);
	rte_mempool_free(t->pool);
	rte_ring_free(t->rx);
	rte_ring_free(t->tx);
	return 0;
}

/* Frames the driver sent since the last call: freed, counted. */
static unsigned int
tx_drain(struct it *t, struct rte_mbuf **keep)
{
	struct rte_mbuf *m;
	unsigned int n = 0;

	while (rte_ring_dequeue(t->tx, (void **)&m) == 0) {
		if (keep != NULL && n == 0)
			*keep = m;
		else
			rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

/* Hand the port one frame and let the driver read it: the datagrams rx_burst() gave. */
static int
rx_one(struct it *t, struct rte_mbuf *m, struct shr_drv_rx *rx)
{
	struct shr_drv_rx out[SHR_DRV_BURST_MAX];
	int n;

	assert_int_equal(rte_ring_enqueue(t->rx, m), 0);
	n = shr_drv_rx_burst(t->dev, out, SHR_DRV_BURST_MAX);
	assert_true(n >= 0);
	if (n > 0 && rx != NULL)
		*rx = out[0];
	return n;
}

/* A UDP datagram src_ip:PEER_PORT -> the driver, from the box's MAC, its header's checksum
 * right. */
static struct rte_mbuf *
udp_frame(struct it *t, uint32_t src_ip, const void *payload, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(t->pool);
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *uh;

	assert_non_null(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eh) + sizeof(*ip) +
							   sizeof(*uh) + len);
	assert_non_null(eh);
	rte_ether_addr_copy(&t->mac, &eh->dst_addr);
	rte_ether_addr_copy(&peer_mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*uh) + len));
	ip->packet_id = rte_cpu_to_be_16(7);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(src_ip);
	ip->dst_addr = rte_cpu_to_be_32(ME_IP);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	uh = (struct rte_udp_hdr *)(ip + 1);
	uh->src_port = rte_cpu_to_be_16(PEER_PORT);
	uh->dst_port = rte_cpu_to_be_16(ME_PORT);
	uh->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*uh) + len));
	uh->dgram_cksum = 0;
	memcpy(uh + 1, payload, len);
	return m;
}

/* The IPv4 header of a frame of udp_frame(). */
static struct rte_ipv4_hdr *
ip_of(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
}

/* Its UDP header. */
static struct rte_udp_hdr *
udp_of(struct rte_mbuf *m)
{
	return (struct rte_udp_hdr *)(ip_of(m) + 1);
}

/* An ICMP message of type from the box to the driver, its payload len bytes of 0x5a..., in
 * a frame padded to Ethernet's 60 bytes; both checksums right. */
static struct rte_mbuf *
icmp_frame(struct it *t, uint8_t type, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(t->pool);
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_icmp_hdr *ic;
	uint16_t ip_len = (uint16_t)(sizeof(*ip) + sizeof(*ic) + len);
	uint16_t flen = (uint16_t)RTE_MAX(sizeof(*eh) + ip_len,
					   (size_t)(RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN));

	assert_non_null(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, flen);
	assert_non_null(eh);
	memset(eh, 0xee, flen);		/* the padding */
	rte_ether_addr_copy(&t->mac, &eh->dst_addr);
	rte_ether_addr_copy(&peer_mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(ip_len);
	ip->packet_id = rte_cpu_to_be_16(9);
	ip->time_to_live = 61;
	ip->next_proto_id = IPPROTO_ICMP;
	ip->src_addr = rte_cpu_to_be_32(PEER_IP);
	ip->dst_addr = rte_cpu_to_be_32(ME_IP);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	ic = (struct rte_icmp_hdr *)(ip + 1);
	ic->icmp_type = type;
	ic->icmp_code = 0;
	ic->icmp_ident = rte_cpu_to_be_16(0x1234);
	ic->icmp_seq_nb = rte_cpu_to_be_16(3);
	memset(ic + 1, 0x5a, len);
	ic->icmp_cksum = 0;
	ic->icmp_cksum = (uint16_t)~rte_raw_cksum(ic, sizeof(*ic) + len);
	return m;
}

/* Its IPv4 header's checksum made right again after a change. */
static void
ip_resum(struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = ip_of(m);

	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/* A broadcast ARP request from sip (its MAC sha) for tip. */
static struct rte_mbuf *
arp_request(struct it *t, uint32_t sip, const struct rte_ether_addr *sha, uint32_t tip)
{
	static const struct rte_ether_addr bcast = {
		.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(t->pool);
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *a;

	assert_non_null(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eh) + sizeof(*a));
	assert_non_null(eh);
	rte_ether_addr_copy(&bcast, &eh->dst_addr);
	rte_ether_addr_copy(sha, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a = (struct rte_arp_hdr *)(eh + 1);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = sizeof(uint32_t);
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(sha, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = rte_cpu_to_be_32(sip);
	memset(&a->arp_data.arp_tha, 0, sizeof(a->arp_data.arp_tha));
	a->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return m;
}

/*
 * The IPv4 header checksum is checked (no offload on this port: in software): a datagram
 * whose plain 20-byte header had a bit of its source address flipped on the way, its
 * checksum as sent, is dropped (counted in rx_drops), not handed out as from another host;
 * the same datagram intact, before and after, is taken with its payload and source.
 */
static void
test_ip_header_corrupted(void **state)
{
	struct it *t = *state;
	static const char msg[] = "a shouter message";
	struct rte_ipv4_hdr *ip;
	struct shr_drv_rx rx;
	struct rte_mbuf *m;
	uint64_t drops;

	assert_int_equal(rx_one(t, udp_frame(t, PEER_IP, msg, sizeof(msg)), &rx), 1);
	assert_int_equal(rx.src_ip, PEER_IP);
	assert_int_equal(rx.src_port, PEER_PORT);
	assert_int_equal(rx.len, sizeof(msg));
	assert_memory_equal(rx.data, msg, sizeof(msg));

	drops = t->dev->stats.rx_drops;
	m = udp_frame(t, PEER_IP, msg, sizeof(msg));
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
	ip->src_addr ^= rte_cpu_to_be_32(0x00000100u);	/* 198.18.1.1: a bit flipped */
	assert_int_equal(rx_one(t, m, NULL), 0);
	assert_int_equal(t->dev->stats.rx_drops, drops + 1);

	assert_int_equal(rx_one(t, udp_frame(t, PEER_IP, msg, sizeof(msg)), &rx), 1);
	assert_int_equal(rx.src_ip, PEER_IP);
	assert_int_equal(tx_drain(t, NULL), 0);
}

/*
 * ARP: a request for the driver's own address is answered (to the asker: its MAC and
 * address, with the port's MAC and the driver's address); a rank's request for the box's
 * address and the box's for another rank's, addresses the driver does not own, are not (an
 * answer would draw their traffic to this port): nothing is sent, each counted in rx_drops.
 */
static void
test_arp_own_address_only(void **state)
{
	struct it *t = *state;
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *a;
	struct rte_mbuf *m = NULL;
	uint64_t drops, ctl;

	assert_int_equal(tx_drain(t, NULL), 0);
	drops = t->dev->stats.rx_drops;
	ctl = t->dev->stats.ctl_pkts;
	assert_int_equal(rx_one(t, arp_request(t, OTHER_IP, &other_mac, PEER_IP), NULL), 0);
	assert_int_equal(tx_drain(t, NULL), 0);
	assert_int_equal(rx_one(t, arp_request(t, PEER_IP, &peer_mac, OTHER_IP), NULL), 0);
	assert_int_equal(tx_drain(t, NULL), 0);
	assert_int_equal(t->dev->stats.rx_drops, drops + 2);
	assert_int_equal(t->dev->stats.ctl_pkts, ctl);

	assert_int_equal(rx_one(t, arp_request(t, PEER_IP, &peer_mac, ME_IP), NULL), 0);
	assert_int_equal(tx_drain(t, &m), 1);
	assert_int_equal(t->dev->stats.ctl_pkts, ctl + 1);
	assert_true(rte_pktmbuf_data_len(m) >= sizeof(*eh) + sizeof(*a));
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	a = (struct rte_arp_hdr *)(eh + 1);
	assert_true(rte_is_same_ether_addr(&eh->dst_addr, &peer_mac));
	assert_true(rte_is_same_ether_addr(&eh->src_addr, &t->mac));
	assert_int_equal(rte_be_to_cpu_16(eh->ether_type), RTE_ETHER_TYPE_ARP);
	assert_int_equal(rte_be_to_cpu_16(a->arp_opcode), RTE_ARP_OP_REPLY);
	assert_true(rte_is_same_ether_addr(&a->arp_data.arp_sha, &t->mac));
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_sip), ME_IP);
	assert_true(rte_is_same_ether_addr(&a->arp_data.arp_tha, &peer_mac));
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_tip), PEER_IP);
	rte_pktmbuf_free(m);
}

/*
 * ICMP: an echo request to the driver (in a frame padded to 60 bytes) is answered with an
 * echo reply ping takes: type 0, the request's id, sequence and payload, an ICMP checksum
 * that verifies, the addresses swapped (from the driver's, to the asker's MAC), an IPv4
 * header checksum that verifies, and the frame cut to the datagram (no padding sent back).
 * An echo reply is not answered (two hosts would echo each other without end): dropped,
 * counted in rx_drops.
 */
static void
test_icmp_echo(void **state)
{
	struct it *t = *state;
	const uint16_t len = 11;	/* an odd length: the checksum's last byte alone */
	const unsigned int ip_len = sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_icmp_hdr) +
				    len;
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_icmp_hdr *ic;
	struct rte_mbuf *m = NULL;
	uint64_t drops, ctl;
	const uint8_t *pl;
	uint16_t i;

	assert_int_equal(tx_drain(t, NULL), 0);
	drops = t->dev->stats.rx_drops;
	ctl = t->dev->stats.ctl_pkts;
	assert_int_equal(rx_one(t, icmp_frame(t, RTE_IP_ICMP_ECHO_REQUEST, len), NULL), 0);
	assert_int_equal(tx_drain(t, &m), 1);
	assert_int_equal(t->dev->stats.ctl_pkts, ctl + 1);
	assert_int_equal(rte_pktmbuf_pkt_len(m), sizeof(*eh) + ip_len);
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	assert_true(rte_is_same_ether_addr(&eh->dst_addr, &peer_mac));
	assert_true(rte_is_same_ether_addr(&eh->src_addr, &t->mac));
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	assert_int_equal(rte_be_to_cpu_32(ip->src_addr), ME_IP);
	assert_int_equal(rte_be_to_cpu_32(ip->dst_addr), PEER_IP);
	assert_int_equal(rte_be_to_cpu_16(ip->total_length), ip_len);
	assert_int_equal(ip->next_proto_id, IPPROTO_ICMP);
	assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
	ic = (struct rte_icmp_hdr *)(ip + 1);
	assert_int_equal(ic->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(ic->icmp_code, 0);
	assert_int_equal(rte_be_to_cpu_16(ic->icmp_ident), 0x1234);
	assert_int_equal(rte_be_to_cpu_16(ic->icmp_seq_nb), 3);
	assert_int_equal(rte_raw_cksum(ic, sizeof(*ic) + len), 0xffff);
	pl = (const uint8_t *)(ic + 1);
	for (i = 0; i < len; i++)
		assert_int_equal(pl[i], 0x5a);
	rte_pktmbuf_free(m);

	assert_int_equal(rx_one(t, icmp_frame(t, RTE_IP_ICMP_ECHO_REPLY, len), NULL), 0);
	assert_int_equal(tx_drain(t, NULL), 0);
	assert_int_equal(t->dev->stats.rx_drops, drops + 1);
	assert_int_equal(t->dev->stats.ctl_pkts, ctl + 1);
}

/*
 * An ARP request cut short (its last 4 bytes, the target address, not in the frame, though
 * the mbuf still holds them: a request for the driver's own address) is dropped, counted in
 * rx_drops, not answered from bytes past the frame's end.
 */
static void
test_arp_short(void **state)
{
	struct it *t = *state;
	struct rte_mbuf *m;
	uint64_t drops, ctl;

	assert_int_equal(tx_drain(t, NULL), 0);
	drops = t->dev->stats.rx_drops;
	ctl = t->dev->stats.ctl_pkts;
	m = arp_request(t, PEER_IP, &peer_mac, ME_IP);
	assert_int_equal(rte_pktmbuf_trim(m, sizeof(uint32_t)), 0);
	assert_int_equal(rx_one(t, m, NULL), 0);
	assert_int_equal(tx_drain(t, NULL), 0);
	assert_int_equal(t->dev->stats.rx_drops, drops + 1);
	assert_int_equal(t->dev->stats.ctl_pkts, ctl);
}

/*
 * A control reply (here to an ARP request) that finds the TX queue full is dropped, counted
 * in tx_drops, and its mbuf (the request's, answered in place: the test's pool) goes back to
 * its pool; with room again, the same request is answered.
 */
static void
test_ctl_tx_full(void **state)
{
	struct it *t = *state;
	static uint8_t filler[RING_SIZE];
	void *fill[RING_SIZE];
	unsigned int i, room, avail, left;
	uint64_t drops, ctl;
	int n;

	assert_int_equal(tx_drain(t, NULL), 0);
	room = rte_ring_free_count(t->tx);
	assert_true(room > 0 && room <= RING_SIZE);
	for (i = 0; i < room; i++)
		fill[i] = &filler[i];	/* not mbufs: taken back below, never freed */
	assert_int_equal(rte_ring_enqueue_bulk(t->tx, fill, room, NULL), room);
	avail = rte_mempool_avail_count(t->pool);
	drops = t->dev->stats.tx_drops;
	ctl = t->dev->stats.ctl_pkts;
	n = rx_one(t, arp_request(t, PEER_IP, &peer_mac, ME_IP), NULL);
	left = rte_mempool_avail_count(t->pool);
	/* the fillers out first, so that a failure below leaves the ring as the others expect */
	assert_int_equal(rte_ring_dequeue_bulk(t->tx, fill, room, NULL), room);
	for (i = 0; i < room; i++)
		assert_ptr_equal(fill[i], &filler[i]);
	assert_int_equal(n, 0);
	assert_int_equal(t->dev->stats.tx_drops, drops + 1);
	assert_int_equal(t->dev->stats.ctl_pkts, ctl);
	assert_int_equal(left, avail);

	assert_int_equal(rx_one(t, arp_request(t, PEER_IP, &peer_mac, ME_IP), NULL), 0);
	assert_int_equal(tx_drain(t, NULL), 1);
	assert_int_equal(t->dev->stats.ctl_pkts, ctl + 1);
	assert_int_equal(rte_mempool_avail_count(t->pool), avail);
}

/*
 * Well-formed datagrams not for this rank are dropped (each counted in rx_drops), not handed
 * out: one in a frame to another host's MAC (flooded to this port by a switch that has not
 * learnt it, or on a promiscuous port), one to another IPv4 address, one to another UDP port
 * of the driver's address. The same datagram to the driver is taken.
 */
static void
test_not_for_us(void **state)
{
	struct it *t = *state;
	static const char msg[] = "for another host";
	struct rte_ether_hdr *eh;
	struct shr_drv_rx rx;
	struct rte_mbuf *m;
	uint64_t drops;

	assert_int_equal(tx_drain(t, NULL), 0);
	drops = t->dev->stats.rx_drops;
	m = udp_frame(t, PEER_IP, msg, sizeof(msg));
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	rte_ether_addr_copy(&other_mac, &eh->dst_addr);
	assert_int_equal(rx_one(t, m, NULL), 0);
	m = udp_frame(t, PEER_IP, msg, sizeof(msg));
	ip_of(m)->dst_addr = rte_cpu_to_be_32(OTHER_IP);
	ip_resum(m);
	assert_int_equal(rx_one(t, m, NULL), 0);
	m = udp_frame(t, PEER_IP, msg, sizeof(msg));
	udp_of(m)->dst_port = rte_cpu_to_be_16(ME_PORT + 1);
	assert_int_equal(rx_one(t, m, NULL), 0);
	assert_int_equal(t->dev->stats.rx_drops, drops + 3);
	assert_int_equal(tx_drain(t, NULL), 0);

	assert_int_equal(rx_one(t, udp_frame(t, PEER_IP, msg, sizeof(msg)), &rx), 1);
	assert_int_equal(rx.len, sizeof(msg));
	assert_memory_equal(rx.data, msg, sizeof(msg));
}

/*
 * Lengths: a datagram whose IPv4 total length (and UDP length) runs 16 bytes past the end of
 * the frame, or whose UDP length runs past its IPv4 datagram, is dropped (the payload handed
 * out would run past the bytes received); a short datagram in a frame padded to Ethernet's
 * 60 bytes is taken with its own length, not the padding's.
 */
static void
test_lengths(void **state)
{
	struct it *t = *state;
	static const char msg[] = "0123456789abcdef0123";
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *uh;
	struct shr_drv_rx rx;
	struct rte_mbuf *m;
	uint64_t drops;
	char *pad;

	drops = t->dev->stats.rx_drops;
	m = udp_frame(t, PEER_IP, msg, sizeof(msg));
	ip = ip_of(m);
	uh = udp_of(m);
	ip->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(ip->total_length) + 16);
	uh->dgram_len = rte_cpu_to_be_16(rte_be_to_cpu_16(uh->dgram_len) + 16);
	ip_resum(m);
	assert_int_equal(rx_one(t, m, NULL), 0);
	m = udp_frame(t, PEER_IP, msg, sizeof(msg));
	uh = udp_of(m);
	uh->dgram_len = rte_cpu_to_be_16(rte_be_to_cpu_16(uh->dgram_len) + 1);
	assert_int_equal(rx_one(t, m, NULL), 0);
	assert_int_equal(t->dev->stats.rx_drops, drops + 2);

	m = udp_frame(t, PEER_IP, "abcd", 4);	/* 46 bytes */
	pad = rte_pktmbuf_append(m, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN - 46);
	assert_non_null(pad);
	memset(pad, 0xee, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN - 46);
	assert_int_equal(rx_one(t, m, &rx), 1);
	assert_int_equal(rx.len, 4);
	assert_memory_equal(rx.data, "abcd", 4);
	assert_int_equal(t->dev->stats.rx_drops, drops + 2);
}

/*
 * A tag the device stripped into the mbuf (RTE_MBUF_F_RX_VLAN_STRIPPED, vlan_tci) counts as
 * if it were in the frame: on this driver (no VLAN configured) a datagram of VLAN 100 is
 * another network's (vlan_other), not taken as untagged; one priority-tagged (VID 0, the
 * untagged network's) is taken.
 */
static void
test_vlan_stripped(void **state)
{
	struct it *t = *state;
	static const char msg[] = "tagged";
	struct shr_drv_rx rx;
	struct rte_mbuf *m;
	uint64_t other;

	other = t->dev->stats.vlan_other;
	m = udp_frame(t, PEER_IP, msg, sizeof(msg));
	m->ol_flags |= RTE_MBUF_F_RX_VLAN_STRIPPED | RTE_MBUF_F_RX_VLAN;
	m->vlan_tci = 100;
	assert_int_equal(rx_one(t, m, NULL), 0);
	assert_int_equal(t->dev->stats.vlan_other, other + 1);

	m = udp_frame(t, PEER_IP, msg, sizeof(msg));
	m->ol_flags |= RTE_MBUF_F_RX_VLAN_STRIPPED | RTE_MBUF_F_RX_VLAN;
	m->vlan_tci = 5u << 13;
	assert_int_equal(rx_one(t, m, &rx), 1);
	assert_int_equal(rx.src_ip, PEER_IP);
	assert_memory_equal(rx.data, msg, sizeof(msg));
	assert_int_equal(t->dev->stats.vlan_other, other + 1);
	assert_int_equal(tx_drain(t, NULL), 0);
}

/*
 * What the driver sends: a datagram to the box (its MAC pinned) goes out as one frame from
 * the port's MAC to the box's, a plain IPv4 header (DF, TTL, UDP) whose checksum verifies
 * (the ring port has no offload: the driver sums it), the driver's address and port as the
 * source, and the UDP payload hdr then payload.
 */
static void
test_tx_datagram(void **state)
{
	struct it *t = *state;
	static const char head[] = "head:", body[] = "the body of a datagram";
	const struct shr_drv_pkt p = {
		.dst_ip = PEER_IP, .dst_port = PEER_PORT, .hdr_len = sizeof(head),
		.payload_len = sizeof(body), .hdr = head, .payload = body,
	};
	const unsigned int ulen = sizeof(struct rte_udp_hdr) + sizeof(head) + sizeof(body);
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *uh;
	struct rte_mbuf *m = NULL;
	uint8_t *pl;

	assert_int_equal(tx_drain(t, NULL), 0);
	assert_int_equal(shr_drv_tx_burst(t->dev, &p, 1), 1);
	assert_int_equal(tx_drain(t, &m), 1);
	assert_int_equal(rte_pktmbuf_data_len(m), sizeof(*eh) + sizeof(*ip) + ulen);
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	assert_true(rte_is_same_ether_addr(&eh->dst_addr, &peer_mac));
	assert_true(rte_is_same_ether_addr(&eh->src_addr, &t->mac));
	assert_int_equal(rte_be_to_cpu_16(eh->ether_type), RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	assert_int_equal(ip->version_ihl, RTE_IPV4_VHL_DEF);
	assert_int_equal(rte_be_to_cpu_16(ip->total_length), sizeof(*ip) + ulen);
	assert_int_equal(rte_be_to_cpu_16(ip->fragment_offset), RTE_IPV4_HDR_DF_FLAG);
	assert_true(ip->time_to_live > 0);
	assert_int_equal(ip->next_proto_id, IPPROTO_UDP);
	assert_int_equal(rte_be_to_cpu_32(ip->src_addr), ME_IP);
	assert_int_equal(rte_be_to_cpu_32(ip->dst_addr), PEER_IP);
	assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
	uh = (struct rte_udp_hdr *)(ip + 1);
	assert_int_equal(rte_be_to_cpu_16(uh->src_port), ME_PORT);
	assert_int_equal(rte_be_to_cpu_16(uh->dst_port), PEER_PORT);
	assert_int_equal(rte_be_to_cpu_16(uh->dgram_len), ulen);
	pl = (uint8_t *)(uh + 1);
	assert_memory_equal(pl, head, sizeof(head));
	assert_memory_equal(pl + sizeof(head), body, sizeof(body));
	rte_pktmbuf_free(m);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ip_header_corrupted),
		cmocka_unit_test(test_arp_own_address_only),
		cmocka_unit_test(test_arp_short),
		cmocka_unit_test(test_ctl_tx_full),
		cmocka_unit_test(test_icmp_echo),
		cmocka_unit_test(test_not_for_us),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_vlan_stripped),
		cmocka_unit_test(test_tx_datagram),
	};
	char prefix[64], rundir[PATH_MAX];
	char *eal[] = {
		argv[0], "--no-huge", "-m", "256", "--no-pci", "--no-shconf", "--no-telemetry",
		"-l", "0", "--file-prefix", prefix, "--log-level", "*:warning", NULL,
	};
	int rc;

	(void)argc;
	snprintf(prefix, sizeof(prefix), "drv_ethdev_it_%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rc = cmocka_run_group_tests_name("drv_ethdev", tests, setup, teardown);
	rte_eal_cleanup();
	(void)rmdir(rundir);	/* EAL's runtime directory, empty (--no-shconf --no-telemetry) */
	return rc;
}
