/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* rte_vect_get_max_simd_bitwidth(): experimental in DPDK 22.11, stable from 23.11 */
#define ALLOW_EXPERIMENTAL_API

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <rte_byteorder.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_udp.h>
#include <rte_vect.h>

#include "shr_drv_ethdev.h"
#include "shr_drv_ethdev_private.h"

RTE_LOG_REGISTER(shr_drv_ethdev_logtype, shouter.drv.ethdev, INFO);
#define DRV_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, shr_drv_ethdev_logtype, "shouter.drv.ethdev: " fmt "\n", \
		##__VA_ARGS__)

#define ETH_DEF_MAX_PAYLOAD 1472
#define ETH_DEF_ARP_TIMEOUT_MS 3000
#define ETH_DEF_NB_MBUFS 4095
#define ETH_DEF_NB_DESC 1024
#define ETH_DEF_IDLE_US 10
#define ETH_ARP_RETRY_NS 100000000ull	/* 100 ms */
#define ETH_IDLE_SPINS 64
#define ETH_IDLE_SLACK_NS 1000UL	/* timer slack of the thread that sleeps in wait() */
#define ETH_L3L4 (sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))
#define ETH_L2L3L4 (RTE_ETHER_HDR_LEN + ETH_L3L4)	/* untagged */

/*
 * net_af_packet (DPDK 22.11) copies frames through PACKET_MMAP rings of framesz-byte slots
 * (devarg, default 2048). A received frame starts AFP_RX_MACOFF bytes into its slot (the
 * TPACKET_V2 header, aligned, plus room for a 16-byte link header), a sent one
 * AFP_TX_HDR bytes in; its rx queue refuses a mempool whose data room is below
 * framesz - AFP_TX_HDR.
 */
#define AFP_DRIVER "net_af_packet"
#define AFP_DEF_FRAMESZ 2048u
#define AFP_RX_MACOFF 66u
#define AFP_TX_HDR 32u

/* --- port limits (MTU, rx data room) --- */

/* A positive devarg no larger than max, or def. */
static uint32_t
devarg_u32(const struct rte_kvargs *kv, const char *key, uint32_t def, uint32_t max)
{
	const char *v = rte_kvargs_get(kv, key);
	unsigned long n;

	if (v == NULL)
		return def;
	n = strtoul(v, NULL, 0);
	return n != 0 && n <= max ? (uint32_t)n : def;
}

/*
 * framesz of a net_af_packet port (its devarg, or the PMD's default); 0 for another PMD.
 * Also says, if blocksz is not a multiple of framesz, that the PMD will lose frames: it
 * places frame i at i * framesz in the mapping while the kernel starts every block afresh.
 */
static uint32_t
afp_framesz(const struct rte_eth_dev_info *info, bool warn)
{
	const struct rte_devargs *da;
	struct rte_kvargs *kv;
	uint32_t fs = AFP_DEF_FRAMESZ, bs;

	if (info->driver_name == NULL || strcmp(info->driver_name, AFP_DRIVER) != 0)
		return 0;
	da = info->device != NULL ? rte_dev_devargs(info->device) : NULL;
	if (da == NULL || da->args == NULL)
		return fs;
	kv = rte_kvargs_parse(da->args, NULL);
	if (kv == NULL)
		return fs;
	fs = devarg_u32(kv, "framesz", AFP_DEF_FRAMESZ, UINT16_MAX);
	bs = devarg_u32(kv, "blocksz", (uint32_t)getpagesize(), UINT32_MAX);
	if (warn && bs % fs != 0)
		DRV_LOG(WARNING, "%s: blocksz %u is not a multiple of framesz %u: DPDK 22.11's "
			"af_packet then misplaces every frame past the first of a block (use "
			"e.g. blocksz=258048,framesz=9216)", rte_dev_name(info->device), bs, fs);
	rte_kvargs_free(kv);
	return fs;
}

/* The MTU of a kernel interface (the one behind an af_packet or tap port). */
static int
kernel_mtu(uint32_t if_index, uint16_t *mtu)
{
	struct ifreq ifr;
	int s, rc = 0;

	memset(&ifr, 0, sizeof(ifr));
	if (if_index == 0 || if_indextoname(if_index, ifr.ifr_name) == NULL)
		return -ENODEV;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (ioctl(s, SIOCGIFMTU, &ifr) < 0)
		rc = -errno;
	else if (ifr.ifr_mtu <= 0)
		rc = -EINVAL;
	else
		*mtu = (uint16_t)RTE_MIN(ifr.ifr_mtu, UINT16_MAX);
	close(s);
	return rc;
}

/* The UDP payload an MTU carries. */
static uint32_t
eth_payload_of(uint16_t mtu)
{
	uint32_t l34 = sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr);

	return mtu > l34 ? mtu - l34 : 0;
}

/* The MTU a port carries now: the kernel interface's behind it (af_packet, tap), else
 * ethdev's, at most what an af_packet frame holds. */
static uint16_t
eth_mtu_now(uint16_t port_id, const struct rte_eth_dev_info *info)
{
	uint16_t cur = 0, kmtu = 0;
	uint32_t fs;

	if (kernel_mtu(info->if_index, &kmtu) == 0)
		cur = kmtu;
	else if (rte_eth_dev_get_mtu(port_id, &cur) != 0 || cur == 0)
		cur = RTE_ETHER_MTU;
	fs = afp_framesz(info, false);
	if (fs != 0 && fs > AFP_RX_MACOFF + RTE_ETHER_HDR_LEN + RTE_ETHER_MIN_MTU)
		cur = (uint16_t)RTE_MIN((uint32_t)cur, fs - AFP_RX_MACOFF - RTE_ETHER_HDR_LEN);
	return cur;
}

int
shr_drv_ethdev_mtu_set(uint16_t port_id, uint16_t want, uint16_t *mtu)
{
	struct rte_eth_dev_info info;
	uint16_t cur = 0, kmtu = 0;
	uint32_t fs = 0;
	int rc;

	if (rte_eth_dev_info_get(port_id, &info) != 0)
		memset(&info, 0, sizeof(info));
	/* what ethdev would refuse (with an error in the log) is not asked */
	if (info.max_rx_pktlen != 0 &&
	    (want > info.max_mtu ||
	     (uint32_t)want + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN > info.max_rx_pktlen))
		rc = -EINVAL;
	else
		rc = rte_eth_dev_set_mtu(port_id, want);
	if (rte_eth_dev_get_mtu(port_id, &cur) != 0 || cur == 0)
		cur = RTE_ETHER_MTU;
	if (rc != 0 && kernel_mtu(info.if_index, &kmtu) == 0)
		cur = kmtu;
	fs = afp_framesz(&info, false);
	if (fs != 0) {
		uint32_t cap = fs > AFP_RX_MACOFF + RTE_ETHER_HDR_LEN + RTE_ETHER_MIN_MTU ?
			       fs - AFP_RX_MACOFF - RTE_ETHER_HDR_LEN : RTE_ETHER_MIN_MTU;

		cur = (uint16_t)RTE_MIN((uint32_t)cur, cap);
	}
	*mtu = cur;
	if (cur >= want)
		return 0;
	return rc != 0 ? rc : -EMSGSIZE;
}

uint32_t
shr_drv_ethdev_rx_room(uint16_t port_id, uint32_t frame_len)
{
	struct rte_eth_dev_info info;
	uint32_t fs;

	if (rte_eth_dev_info_get(port_id, &info) != 0)
		return frame_len;
	fs = afp_framesz(&info, true);
	if (fs > AFP_TX_HDR && fs - AFP_TX_HDR > frame_len)
		return fs - AFP_TX_HDR;
	return frame_len;
}

/*
 * Classify one frame. Returns true and fills rx if it is a UDP datagram for us, or for the
 * result group joined (the caller keeps m until the next rx_burst); otherwise m has been
 * consumed.
 */
static bool
eth_input(struct eth_dev *d, struct rte_mbuf *m, struct shr_drv_rx *rx)
{
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *uh;
	unsigned int len, ihl, ip_len, udp_len;
	enum shr_l2_verdict l2v;
	struct shr_l2 l2;
	bool group;

	if (!rte_pktmbuf_is_contiguous(m))
		goto drop;
	/* a tag the device put in the metadata goes back in the frame (DPDK 22.11's
	 * af_packet does that itself unless asked to strip): one parse, and the answers made
	 * in place keep it */
	if ((m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) && rte_vlan_insert(&m) != 0)
		goto drop;
	len = rte_pktmbuf_data_len(m);
	if (len < sizeof(*eh))
		goto drop;
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (!rte_is_same_ether_addr(&eh->dst_addr, &d->mac) &&
	    !rte_is_broadcast_ether_addr(&eh->dst_addr) &&
	    !(d->group_ip_be != 0 && rte_is_same_ether_addr(&eh->dst_addr, &d->group_mac)))
		goto drop;
	l2v = shr_l2_parse(eh, len, d->vlan, &l2);
	if (l2v == SHR_L2_OTHER) {
		d->base.stats.vlan_other++;
		rte_pktmbuf_free(m);
		return false;
	}
	if (l2v != SHR_L2_OK)
		goto drop;
	if (l2.etype == RTE_ETHER_TYPE_ARP) {
		eth_arp_input(d, m, eh, l2.len);
		return false;
	}
	if (l2.etype != RTE_ETHER_TYPE_IPV4 || len < l2.len + sizeof(*ip))
		goto drop;
	ip = (struct rte_ipv4_hdr *)((uint8_t *)eh + l2.len);
	ihl = (ip->version_ihl & 0x0f) * 4u;
	ip_len = rte_be_to_cpu_16(ip->total_length);
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) || ip_len < ihl ||
	    l2.len + ip_len > len)
		goto drop;
	group = d->group_ip_be != 0 && ip->dst_addr == d->group_ip_be;
	if (ip->dst_addr != d->local_ip_be && !group)
		goto drop;
	if (d->rx_ip_cksum &&
	    (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) != RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN) {
		if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) != RTE_MBUF_F_RX_IP_CKSUM_GOOD)
			goto drop;
	} else if (rte_raw_cksum(ip, ihl) != 0xffff) {
		goto drop;
	}
	if (rte_be_to_cpu_16(ip->fragment_offset) &
	    (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
		goto drop;	/* fragments: shouter never fragments */
	if (ip->next_proto_id == IPPROTO_ICMP && !group) {
		eth_icmp_input(d, m, eh, l2.len, ip, ihl, ip_len);
		return false;
	}
	if (ip->next_proto_id != IPPROTO_UDP || ip_len < ihl + sizeof(*uh))
		goto drop;
	uh = (struct rte_udp_hdr *)((uint8_t *)ip + ihl);
	udp_len = rte_be_to_cpu_16(uh->dgram_len);
	if (udp_len < sizeof(*uh) || udp_len > ip_len - ihl ||
	    uh->dst_port != (group ? d->group_port_be : d->local_port_be))
		goto drop;
	rx->src_ip = rte_be_to_cpu_32(ip->src_addr);
	rx->src_port = rte_be_to_cpu_16(uh->src_port);
	rx->data = uh + 1;
	rx->len = udp_len - sizeof(*uh);
	rx->rx_ns = 0;	/* polled here: received as the burst is */
	return true;
drop:
	d->base.stats.rx_drops++;
	rte_pktmbuf_free(m);
	return false;
}

static int
eth_rx_burst(struct shr_drv *dev, struct shr_drv_rx *out, unsigned int n)
{
	struct eth_dev *d = (struct eth_dev *)dev;
	struct rte_mbuf *pkts[SHR_DRV_BURST_MAX], **src;
	unsigned int i, nb, k = 0;

	if (d->nheld > 0) {
		rte_pktmbuf_free_bulk(d->held, d->nheld);
		d->nheld = 0;
	}
	if (n > SHR_DRV_BURST_MAX)
		n = SHR_DRV_BURST_MAX;
	if (d->npending > 0) {
		nb = RTE_MIN(n, d->npending);
		src = &d->pending[d->pending_head];
		d->pending_head += nb;
		d->npending -= nb;
		if (d->npending == 0)
			d->pending_head = 0;
	} else {
		nb = rte_eth_rx_burst(d->port, 0, pkts, (uint16_t)n);
		src = pkts;
	}
	for (i = 0; i < nb; i++) {
		if (i + 1 < nb)
			rte_prefetch0(rte_pktmbuf_mtod(src[i + 1], void *));
		if (eth_input(d, src[i], &out[k])) {
			d->held[d->nheld++] = src[i];
			d->base.stats.rx_bytes += out[k].len;
			k++;
		}
	}
	d->base.stats.rx_pkts += k;
	return (int)k;
}

static int
eth_tx_burst(struct shr_drv *dev, const struct shr_drv_pkt *pkts, unsigned int n)
{
	struct eth_dev *d = (struct eth_dev *)dev;
	struct rte_mbuf *ms[SHR_DRV_BURST_MAX], *fresh[SHR_DRV_BURST_MAX];
	uint16_t idx[SHR_DRV_BURST_MAX];
	unsigned int i, nb = 0, scan, sent, nfresh = 0, used = 0;

	if (n > SHR_DRV_BURST_MAX)
		n = SHR_DRV_BURST_MAX;
	/* one mempool access per burst; one per packet only when the pool runs low */
	if (n > 0 && rte_pktmbuf_alloc_bulk(d->pool, fresh, n) == 0)
		nfresh = n;
	for (scan = 0; scan < n; scan++) {
		const struct shr_drv_pkt *p = &pkts[scan];
		unsigned int plen = (unsigned int)p->hdr_len + p->payload_len;
		const struct rte_ether_addr *dmac = eth_arp_lookup(d, p->dst_ip);
		struct rte_ether_hdr *eh;
		struct rte_ipv4_hdr *ip;
		struct rte_udp_hdr *uh;
		struct rte_mbuf *m;
		uint8_t *data;

		if (dmac == NULL || plen > d->base.max_payload) {
			if (dmac == NULL &&
			    eth_now_ns() - d->arp_last_req_ns >= ETH_ARP_RETRY_NS)
				eth_arp_request(d, p->dst_ip);
			d->base.stats.tx_drops++;
			continue;
		}
		m = used < nfresh ? fresh[used++] : rte_pktmbuf_alloc(d->pool);
		if (m == NULL)
			break;	/* try again later */
		data = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(ETH_L3L4 + d->l2_len + plen));
		if (data == NULL) {
			rte_pktmbuf_free(m);
			d->base.stats.tx_drops++;
			continue;
		}
		eh = (struct rte_ether_hdr *)data;
		ip = (struct rte_ipv4_hdr *)(data + eth_l2_write(d, eh, dmac, RTE_ETHER_TYPE_IPV4));
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->type_of_service = 0;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*uh) + plen));
		ip->packet_id = rte_cpu_to_be_16(d->ip_id++);
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_UDP;
		ip->hdr_checksum = 0;
		ip->src_addr = d->local_ip_be;
		ip->dst_addr = rte_cpu_to_be_32(p->dst_ip);
		uh = (struct rte_udp_hdr *)(ip + 1);
		uh->src_port = d->local_port_be;
		uh->dst_port = rte_cpu_to_be_16(p->dst_port);
		uh->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*uh) + plen));
		uh->dgram_cksum = 0;
		if (p->hdr_len > 0)
			rte_memcpy(uh + 1, p->hdr, p->hdr_len);
		if (p->payload_len > 0)
			rte_memcpy((uint8_t *)(uh + 1) + p->hdr_len, p->payload,
				   p->payload_len);
		if (d->tx_ip_cksum) {
			m->l2_len = d->l2_len;
			m->l3_len = sizeof(*ip);
			m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
		} else {
			ip->hdr_checksum = rte_ipv4_cksum(ip);
		}
		idx[nb] = (uint16_t)scan;
		ms[nb++] = m;
	}
	if (used < nfresh)
		rte_pktmbuf_free_bulk(&fresh[used], nfresh - used);
	sent = nb > 0 ? rte_eth_tx_burst(d->port, 0, ms, (uint16_t)nb) : 0;
	for (i = 0; i < sent; i++) {
		d->base.stats.tx_pkts++;
		d->base.stats.tx_bytes += pkts[idx[i]].hdr_len + pkts[idx[i]].payload_len;
	}
	if (sent < nb) {
		rte_pktmbuf_free_bulk(&ms[sent], nb - sent);
		return idx[sent];	/* consumed: everything before the first unsent */
	}
	return (int)scan;
}

static int
eth_wait(struct shr_drv *dev, uint64_t timeout_us)
{
	struct eth_dev *d = (struct eth_dev *)dev;
	uint64_t deadline = eth_now_ns() + timeout_us * 1000;
	unsigned int spins = 0;

	if (d->npending > 0)
		return 1;
	for (;;) {
		uint16_t nb = rte_eth_rx_burst(d->port, 0, d->pending, SHR_DRV_BURST_MAX);

		if (nb > 0) {
			d->npending = nb;
			d->pending_head = 0;
			return 1;
		}
		if (eth_now_ns() >= deadline)
			return 0;
		if (++spins >= ETH_IDLE_SPINS && d->idle_us > 0) {
			struct timespec ts = {
				.tv_sec = d->idle_us / 1000000u,
				.tv_nsec = (long)(d->idle_us % 1000000u) * 1000,
			};

			/* the kernel's default slack (50 us) would stretch each sleep that much */
			if (!d->slack_set) {
				(void)prctl(PR_SET_TIMERSLACK, ETH_IDLE_SLACK_NS, 0, 0, 0);
				d->slack_set = true;
			}
			d->base.stats.wait_sleeps++;
			if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
				return -EINTR;
		} else {
			rte_pause();
		}
	}
}

static void
eth_close(struct shr_drv *dev)
{
	struct eth_dev *d = (struct eth_dev *)dev;
	bool eal_owned = d->eal_owned;

	if (d->nheld > 0)
		rte_pktmbuf_free_bulk(d->held, d->nheld);
	if (d->npending > 0)
		rte_pktmbuf_free_bulk(&d->pending[d->pending_head], d->npending);
	rte_eth_dev_stop(d->port);
	rte_eth_dev_close(d->port);
	rte_mempool_free(d->pool);
	free(d);
	if (eal_owned)
		rte_eal_cleanup();
}

/*
 * Take the UDP datagrams to group_ip:port too: a multicast group's MAC is added to the port's
 * multicast list (or all multicast taken, on a device without a list); a broadcast address
 * needs nothing (broadcast frames are taken already).
 */
static int
eth_group_join(struct shr_drv *dev, uint32_t group_ip, uint16_t port)
{
	struct eth_dev *d = (struct eth_dev *)dev;
	struct rte_ether_addr mac;
	int rc;

	if (d->group_ip_be != 0)
		return -EALREADY;
	shr_l2_group_mac(group_ip, mac.addr_bytes);
	if (shr_l2_ip_multicast(group_ip)) {
		rc = rte_eth_dev_set_mc_addr_list(d->port, &mac, 1);
		if (rc == -ENOTSUP)
			rc = rte_eth_allmulticast_enable(d->port);
		if (rc < 0 && rte_eth_allmulticast_get(d->port) != 1 &&
		    rte_eth_promiscuous_get(d->port) != 1)
			return rc;
	}
	d->group_mac = mac;
	d->group_port_be = rte_cpu_to_be_16(port);
	d->group_ip_be = rte_cpu_to_be_32(group_ip);
	return 0;
}

static const struct shr_drv_ops eth_ops = {
	.name = "ethdev",
	.tx_burst = eth_tx_burst,
	.rx_burst = eth_rx_burst,
	.wait = eth_wait,
	.close = eth_close,
	.group_join = eth_group_join,
};

bool
shr_drv_ethdev_simd_forced(int argc, char *const argv[])
{
	static const char opt[] = "--force-max-simd-bitwidth";
	int i;

	for (i = 1; argv != NULL && i < argc && argv[i] != NULL && strcmp(argv[i], "--") != 0;
	     i++)
		if (strncmp(argv[i], opt, sizeof(opt) - 1) == 0 &&
		    (argv[i][sizeof(opt) - 1] == '\0' || argv[i][sizeof(opt) - 1] == '='))
			return true;
	return false;
}

unsigned int
shr_drv_ethdev_max_simd(void)
{
	return rte_vect_get_max_simd_bitwidth();
}

/* rte_eal_init() on a copy of argv (it permutes it). Returns 1 if it ran, 0 if the EAL was
 * already up, or a negative errno. */
static int
eth_eal_init(int argc, char **argv)
{
	char **copy;
	int rc;

	if (argc <= 0)
		return 0;
	copy = calloc((size_t)argc + 1, sizeof(*copy));
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, argv, (size_t)argc * sizeof(*copy));
	rc = rte_eal_init(argc, copy);
	free(copy);
	if (rc >= 0)
		return 1;
	if (rte_errno == EALREADY)
		return 0;
	return -(rte_errno ? rte_errno : EINVAL);
}

static int
eth_port_setup(struct eth_dev *d, const struct shr_drv_ethdev_conf *c)
{
	struct rte_eth_conf pconf = { 0 };
	struct rte_eth_dev_info info;
	struct rte_eth_rxconf rxq;
	uint16_t nb_rxd = c->nb_desc, nb_txd = c->nb_desc;
	int socket = rte_eth_dev_socket_id(d->port);
	int rc;

	if (socket < 0)
		socket = (int)rte_socket_id();
	rc = rte_eth_dev_info_get(d->port, &info);
	if (rc != 0)
		return rc;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
		pconf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
		d->tx_ip_cksum = true;
	}
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) {
		pconf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
		d->rx_ip_cksum = true;
	}
	rc = rte_eth_dev_configure(d->port, 1, 1, &pconf);
	if (rc != 0)
		return rc;
	if (c->keep_mtu) {
		uint16_t mtu = eth_mtu_now(d->port, &info);

		d->base.max_payload = (uint16_t)RTE_MIN((uint32_t)d->base.max_payload,
							eth_payload_of(mtu));
	} else if (d->base.max_payload > ETH_DEF_MAX_PAYLOAD) {
		uint16_t want = (uint16_t)(d->base.max_payload + sizeof(struct rte_ipv4_hdr) +
					   sizeof(struct rte_udp_hdr));
		uint16_t mtu;

		rc = shr_drv_ethdev_mtu_set(d->port, want, &mtu);
		if (rc != 0) {
			DRV_LOG(WARNING, "port %u: MTU %u, %u needed (%s): larger datagrams will "
				"not pass", d->port, mtu, want, rte_strerror(-rc));
			d->base.max_payload = (uint16_t)RTE_MIN((uint32_t)d->base.max_payload,
								eth_payload_of(mtu));
		}
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(d->port, &nb_rxd, &nb_txd);
	if (rc != 0)
		return rc;
	rxq = info.default_rxconf;
	rxq.offloads = pconf.rxmode.offloads;
	rc = rte_eth_rx_queue_setup(d->port, 0, nb_rxd, (unsigned int)socket, &rxq, d->pool);
	if (rc != 0)
		return rc;
	rc = rte_eth_tx_queue_setup(d->port, 0, nb_txd, (unsigned int)socket, NULL);
	if (rc != 0)
		return rc;
	rc = rte_eth_macaddr_get(d->port, &d->mac);
	if (rc != 0)
		return rc;
	return rte_eth_dev_start(d->port);
}

/* Send ARP requests for ip until it answers or the timeout passes. */
static int
eth_resolve(struct eth_dev *d, uint32_t ip, uint32_t timeout_ms)
{
	uint64_t deadline = eth_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct shr_drv_rx rx[SHR_DRV_BURST_MAX];

	while (eth_arp_lookup(d, ip) == NULL) {
		uint64_t now = eth_now_ns();

		if (now >= deadline)
			return -EHOSTUNREACH;
		if (now - d->arp_last_req_ns >= ETH_ARP_RETRY_NS)
			eth_arp_request(d, ip);
		/* Datagrams that arrive meanwhile are dropped: nobody waits for them yet. */
		(void)eth_rx_burst(&d->base, rx, SHR_DRV_BURST_MAX);
		(void)eth_wait(&d->base, 1000);
	}
	return 0;
}

struct shr_drv *
shr_drv_ethdev_create(const struct shr_drv_ethdev_conf *conf)
{
	struct shr_drv_ethdev_conf c;
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned int data_room;
	struct eth_dev *d;
	int rc, eal = 0;

	if (conf == NULL || conf->local_ip == 0 || conf->local_port == 0 ||
	    conf->vlan > SHR_L2_VLAN_MAX ||
	    (!rte_is_zero_ether_addr((const struct rte_ether_addr *)conf->peer_mac) &&
	     !rte_is_unicast_ether_addr((const struct rte_ether_addr *)conf->peer_mac))) {
		rc = -EINVAL;
		goto fail;
	}
	c = *conf;
	if (c.max_payload == 0)
		c.max_payload = ETH_DEF_MAX_PAYLOAD;
	if (c.arp_timeout_ms == 0)
		c.arp_timeout_ms = ETH_DEF_ARP_TIMEOUT_MS;
	if (c.nb_mbufs == 0)
		c.nb_mbufs = ETH_DEF_NB_MBUFS;
	if (c.nb_desc == 0)
		c.nb_desc = ETH_DEF_NB_DESC;
	if (c.idle_us == 0)
		c.idle_us = ETH_DEF_IDLE_US;

	eal = eth_eal_init(c.eal_argc, c.eal_argv);
	if (eal < 0) {
		rc = eal;
		goto fail;
	}
	if (!rte_eth_dev_is_valid_port(c.port_id)) {
		rc = -ENODEV;
		goto fail_eal;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		rc = -ENOMEM;
		goto fail_eal;
	}
	d->base.ops = &eth_ops;
	d->base.local_ip = c.local_ip;
	d->base.local_port = c.local_port;
	d->base.max_payload = c.max_payload;
	d->local_ip_be = rte_cpu_to_be_32(c.local_ip);
	d->local_port_be = rte_cpu_to_be_16(c.local_port);
	d->port = c.port_id;
	d->eal_owned = eal == 1;
	d->idle_us = c.idle_us;
	d->vlan = c.vlan;
	d->l2_len = (uint16_t)(c.vlan != 0 ? RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN :
						  RTE_ETHER_HDR_LEN);

	data_room = RTE_PKTMBUF_HEADROOM +
		    shr_drv_ethdev_rx_room(c.port_id, ETH_L2L3L4 + c.max_payload +
					   RTE_ETHER_CRC_LEN + RTE_VLAN_HLEN);
	if (data_room < RTE_MBUF_DEFAULT_BUF_SIZE)
		data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	if (data_room > UINT16_MAX) {
		rc = -EINVAL;
		goto fail_dev;
	}
	snprintf(name, sizeof(name), "shr_drv_eth%u", c.port_id);
	d->pool = rte_pktmbuf_pool_create(name, c.nb_mbufs, 256, 0, (uint16_t)data_room,
					  (int)rte_socket_id());
	if (d->pool == NULL) {
		rc = -(rte_errno ? rte_errno : ENOMEM);
		goto fail_dev;
	}
	rc = eth_port_setup(d, &c);
	if (rc != 0) {
		DRV_LOG(ERR, "port %u: setup failed: %s", c.port_id, rte_strerror(-rc));
		goto fail_port;
	}
	if (c.peer_ip != 0 && !rte_is_zero_ether_addr((const struct rte_ether_addr *)c.peer_mac)) {
		rc = eth_arp_pin(d, c.peer_ip, (const struct rte_ether_addr *)c.peer_mac);
		if (rc != 0)
			goto fail_started;
	} else if (c.peer_ip != 0) {
		rc = eth_resolve(d, c.peer_ip, c.arp_timeout_ms);
		if (rc != 0) {
			DRV_LOG(ERR, "port %u: no ARP reply from %u.%u.%u.%u in %u ms", c.port_id,
				c.peer_ip >> 24, (c.peer_ip >> 16) & 0xff,
				(c.peer_ip >> 8) & 0xff, c.peer_ip & 0xff, c.arp_timeout_ms);
			goto fail_started;
		}
	}
	return &d->base;

fail_started:
	if (d->nheld > 0)
		rte_pktmbuf_free_bulk(d->held, d->nheld);
	if (d->npending > 0)
		rte_pktmbuf_free_bulk(&d->pending[d->pending_head], d->npending);
	rte_eth_dev_stop(d->port);
fail_port:
	rte_eth_dev_close(d->port);
	rte_mempool_free(d->pool);
fail_dev:
	free(d);
fail_eal:
	if (eal == 1)
		rte_eal_cleanup();
fail:
	rte_errno = -rc;
	errno = -rc;
	return NULL;
}
