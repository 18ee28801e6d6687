/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The data path: one received burst at a time (agg_process_burst), on the lcore that owns the
 * queue. Per frame: Ethernet (on the port's VLAN, --vlan, or untagged: shr_l2_parse(); other
 * networks' frames are counted in vlan_other) -> ARP (answer requests for our address), IPv4
 * (header length, checksum, no fragments, to us) -> ICMP echo (reply in place) or UDP to one
 * of our lanes (length checked) -> shr_agg_input(). Everything else is counted and freed.
 * Nothing is logged per packet. Every frame sent carries the port's VLAN tag, if any.
 *
 * Results: the agg writes the message (shouter header + payload) once. Zero-copy mode writes
 * it straight into a payload mbuf, which is then chained behind one small header mbuf
 * (Ethernet/IPv4/UDP) per destination, its reference count raised by ndst - 1; a single
 * destination gets its headers prepended into the payload mbuf's headroom instead. Copy mode
 * (--no-zerocopy) copies the message into one full frame per destination. A device without
 * multi-segment tx gets the fan-out copied (from the payload mbuf) and the single-destination
 * messages still sent from the payload mbuf (one segment).
 *
 * Lanes and lcores: a DATA's slot s belongs to lane s mod lanes, and each lane to one data
 * lcore (agg_lanes_map()). With several data lcores, each one reads the slot of every DATA
 * it receives, whatever queue it came in on, and hands a DATA of another lcore's lane to that
 * lcore's handoff ring (a burst at a time); the owner processes it as if it had received it.
 * So a slot is touched by one lcore only, on any device (rte_flow steering makes the handoff
 * rare, a flow hash such as af_packet's PACKET_FANOUT makes it about (nq-1)/nq of the DATA).
 */

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include <shr_ip4.h>

#include "agg_neigh.h"
#include "agg_private.h"

#define AGG_PREFETCH 4
#define AGG_UP_ARP_GAP_NS 100000000ull	/* trees: ARP for the upstream box, at most 10/s */
#define AGG_UP_ARP_REFRESH_NS 1000000000ull /* ...and 1/s while an unpinned entry is known */

/*
 * Whether an IPv4 source address can be a host's: not 0.0.0.0/8, 127/8, multicast (224/4),
 * reserved or broadcast (240/4), nor the box's own (a reply to it, or a neighbour entry for
 * it, is never right).
 */
static inline bool
src_ip_ok(const struct agg_ctx *ctx, uint32_t ip_be)
{
	uint32_t a = rte_be_to_cpu_32(ip_be);

	return (a >> 24) != 0 && (a >> 24) != 127 && (a >> 28) < 14 && ip_be != ctx->ip_be;
}

/* --- transmit --- */

static inline void
tx_one(struct agg_lcore *lc, struct rte_mbuf *m)
{
	lc->st.tx_pkts += rte_eth_tx_buffer(lc->ctx->port_id, lc->queue, lc->txb, m);
}

void
agg_hdr_tmpl_init(struct agg_lcore *lc)
{
	const struct agg_ctx *ctx = lc->ctx;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)lc->hdr_tmpl;
	struct rte_ipv4_hdr *ip;

	memset(lc->hdr_tmpl, 0, sizeof(lc->hdr_tmpl));
	rte_ether_addr_copy(&ctx->mac, &eth->src_addr);
	ip = (struct rte_ipv4_hdr *)(lc->hdr_tmpl + shr_l2_type_write(&eth->ether_type,
								       ctx->conf->vlan,
								       RTE_ETHER_TYPE_IPV4));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = ctx->ip_be;
	/* the UDP checksum stays 0: legal for UDP over IPv4; the shouter CRC covers the message */
	lc->hdr_ip_sum = shr_ip4_sum20((const uint8_t *)ip);
	lc->hdr_len = (uint16_t)agg_hdr_len(ctx);
}

/*
 * Ethernet + IPv4 + UDP for one message of msg_len bytes to its destinations: lc's template
 * with what is the same for all of them (lengths, source port) filled in once per message
 * (fan_hdr_init()), then copied per destination with its MAC, address, port and IPv4 checksum
 * (fan_hdr_put()). The checksum adds the total length and destination to the template's sum
 * (one's complement addition is associative: the same bits as summing the whole header).
 */
struct fan_hdr {
	uint8_t h[AGG_HDR_LEN + RTE_VLAN_HLEN];
	uint16_t len;		/**< lc->hdr_len */
	uint32_t sum;		/**< The template's IPv4 sum plus the total length. */
};

static inline void
fan_hdr_init(const struct agg_lcore *lc, struct fan_hdr *fh, uint16_t sport_be,
	     uint16_t msg_len)
{
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint16_t tot = htons(sizeof(*ip) + sizeof(*udp) + msg_len);

	memcpy(fh->h, lc->hdr_tmpl, sizeof(fh->h));
	fh->len = lc->hdr_len;
	ip = (struct rte_ipv4_hdr *)(fh->h + fh->len - sizeof(*udp) - sizeof(*ip));
	udp = (struct rte_udp_hdr *)(ip + 1);
	ip->total_length = tot;
	udp->src_port = sport_be;
	udp->dgram_len = htons(sizeof(*udp) + msg_len);
	fh->sum = lc->hdr_ip_sum + tot;
}

static inline void
fan_hdr_put(const struct fan_hdr *fh, void *p, const struct rte_ether_addr *dmac, uint64_t dst)
{
	struct rte_ether_hdr *eth = p;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint32_t dip = htonl(SHR_AGG_ADDR_IP(dst));

	/* two constant sizes, so that each copy is a few moves */
	if (fh->len == AGG_HDR_LEN)
		memcpy(p, fh->h, AGG_HDR_LEN);
	else
		memcpy(p, fh->h, AGG_HDR_LEN + RTE_VLAN_HLEN);
	rte_ether_addr_copy(dmac, &eth->dst_addr);
	ip = (struct rte_ipv4_hdr *)((uint8_t *)p + fh->len - sizeof(*udp) - sizeof(*ip));
	udp = (struct rte_udp_hdr *)(ip + 1);
	ip->dst_addr = dip;
	ip->hdr_checksum = (uint16_t)~shr_ip4_fold((uint64_t)fh->sum + dip);
	udp->dst_port = htons(SHR_AGG_ADDR_PORT(dst));
}

/* Where the agg writes the next message: the spare payload mbuf, or the scratch buffer. */
static inline void
tx_prepare(struct agg_lcore *lc, struct shr_agg_tx *tx)
{
	struct agg_ctx *ctx = lc->ctx;

	tx->len = 0;
	tx->ndst = 0;
	tx->dst = NULL;
	if (ctx->unicast_zc || ctx->zerocopy) {
		if (lc->spare == NULL) {
			lc->spare = rte_pktmbuf_alloc(ctx->pkt_pool);
			if (lc->spare == NULL) {
				lc->st.nombuf++;
			} else {
				/* read once per spare, not per frame (agg_private.h) */
				lc->spare_buf = rte_pktmbuf_mtod(lc->spare, void *);
				lc->spare_cap = rte_pktmbuf_tailroom(lc->spare);
			}
		}
		if (lc->spare != NULL) {
			tx->buf = lc->spare_buf;
			tx->cap = lc->spare_cap;
			return;
		}
	}
	tx->buf = lc->scratch;
	tx->cap = ctx->tx_cap;
}

/* The entry of ip (in network order) for destination i, hinted; NULL: none (counted). */
static __rte_noinline const struct agg_neigh *
fan_find(struct agg_lcore *lc, uint32_t ip, uint32_t i)
{
	const struct agg_neigh *nb = neigh_find(lc, ip);

	if (nb == NULL) {
		lc->st.no_neigh++;
		return NULL;
	}
	lc->fan_hint[i % AGG_FAN_HINTS] = nb;
	return nb;
}

/*
 * Resolve the MACs of dst[0..ndst) but dst[skip] into lc->fan_*; returns how many are known.
 * A job sends every result to the same members: the entry found for destination i is kept in
 * lc->fan_hint[] and used while it holds that address, which makes it the entry
 * neigh_find() would find: an address has at most one entry, and entries never move
 * (agg_neigh_put() updates an address's entry where it is, or writes a new address over the empty
 * entry its probe reached or the oldest unpinned one). An entry that now holds another
 * address, or none, is looked up again.
 */
static uint32_t
fan_resolve(struct agg_lcore *lc, const uint64_t *dst, uint32_t ndst, uint32_t skip)
{
	/* the arrays in locals: the stores through them cannot change lc's fields */
	const struct rte_ether_addr **fan_mac = lc->fan_mac;
	const struct agg_neigh **hints = lc->fan_hint;
	uint64_t *fan_dst = lc->fan_dst;
	uint32_t i, n = 0, ip;
	const struct agg_neigh *nb;

	ndst = RTE_MIN(ndst, (uint32_t)SHR_PROTO_MAX_WORLD);
	for (i = 0; i < ndst; i++) {
		if (i == skip)
			continue;
		ip = htonl(SHR_AGG_ADDR_IP(dst[i]));
		nb = hints[i % AGG_FAN_HINTS];
		if (unlikely(nb == NULL || nb->ip != ip || ip == 0)) {
			nb = fan_find(lc, ip, i);
			if (nb == NULL)
				continue;
		}
		fan_mac[n] = &nb->mac;
		fan_dst[n] = dst[i];
		n++;
	}
	return n;
}

static void
send_zc(struct agg_lcore *lc, const struct shr_agg_tx *tx, uint16_t sport_be, uint32_t n)
{
	struct agg_ctx *ctx = lc->ctx;
	struct rte_mbuf *pay = lc->spare;
	struct rte_mbuf *hs[AGG_BURST];
	uint16_t len = (uint16_t)tx->len;
	uint16_t hlen = (uint16_t)agg_hdr_len(ctx);
	struct fan_hdr fh;
	uint32_t i, k, j;

	lc->spare = NULL;
	pay->data_len = len;
	pay->pkt_len = len;
	if (n == 0) {
		rte_pktmbuf_free(pay);
		return;
	}
	lc->st.results_zc++;
	fan_hdr_init(lc, &fh, sport_be, len);
	if (n == 1) {
		void *p = rte_pktmbuf_prepend(pay, hlen);

		fan_hdr_put(&fh, p, lc->fan_mac[0], lc->fan_dst[0]);
		tx_one(lc, pay);
		return;
	}
	rte_mbuf_refcnt_update(pay, (int16_t)(n - 1));
	for (i = 0; i < n; i += k) {
		k = RTE_MIN(n - i, (uint32_t)AGG_BURST);
		if (rte_pktmbuf_alloc_bulk(ctx->hdr_pool, hs, k) != 0) {
			lc->st.nombuf += n - i;
			for (j = i; j < n; j++)
				rte_pktmbuf_free(pay);	/* drop the unused references */
			return;
		}
		for (j = 0; j < k; j++) {
			struct rte_mbuf *h = hs[j];

			fan_hdr_put(&fh, rte_pktmbuf_mtod(h, void *), lc->fan_mac[i + j],
				    lc->fan_dst[i + j]);
			h->data_len = hlen;
			h->pkt_len = hlen + len;
			h->next = pay;
			h->nb_segs = 2;
			tx_one(lc, h);
		}
	}
}

/* The message buf (len bytes) copied into one mbuf per destination of lc->fan_*. */
static void
send_copy(struct agg_lcore *lc, const void *buf, uint16_t len, uint16_t sport_be, uint32_t n)
{
	struct agg_ctx *ctx = lc->ctx;
	struct rte_mbuf *ms[AGG_BURST];
	uint16_t hlen = (uint16_t)agg_hdr_len(ctx);
	struct fan_hdr fh;
	uint32_t i, k, j;

	if (n == 0)
		return;
	lc->st.results_copy++;
	fan_hdr_init(lc, &fh, sport_be, len);
	for (i = 0; i < n; i += k) {
		k = RTE_MIN(n - i, (uint32_t)AGG_BURST);
		if (rte_pktmbuf_alloc_bulk(ctx->pkt_pool, ms, k) != 0) {
			lc->st.nombuf += n - i;
			return;
		}
		for (j = 0; j < k; j++) {
			struct rte_mbuf *m = ms[j];
			uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

			fan_hdr_put(&fh, p, lc->fan_mac[i + j], lc->fan_dst[i + j]);
			rte_memcpy(p + hlen, buf, len);
			m->data_len = hlen + len;
			m->pkt_len = hlen + len;
			tx_one(lc, m);
		}
	}
}

/*
 * Send what the agg asked for (tx prepared by tx_prepare()): from the payload mbuf it was
 * written in, unless it is in the scratch buffer or goes to several destinations on a device
 * without multi-segment tx (then copied per destination; the payload mbuf stays the spare).
 * Then the header-only acknowledgement of a collective's round, if any, copied per
 * destination (64 bytes: a reference to a shared segment would cost as much).
 */
static inline void
agg_send(struct agg_lcore *lc, const struct shr_agg_tx *tx, uint16_t sport_be)
{
	uint32_t n;

	if (tx->len == 0)
		return;
	if (tx->group != 0) {
		/* once, to the job's result group: the network copies it to every member */
		lc->fan_mac[0] = &lc->ctx->group_mac;
		lc->fan_dst[0] = tx->group;
		n = 1;
		lc->st.results_group++;
	} else {
		n = fan_resolve(lc, tx->dst, tx->ndst, tx->skip);
	}
	if (tx->buf != lc->scratch && (n <= 1 || lc->ctx->zerocopy))
		send_zc(lc, tx, sport_be, n);
	else
		send_copy(lc, tx->buf, (uint16_t)tx->len, sport_be, n);
	if (tx->ack_len == 0)
		return;
	n = fan_resolve(lc, tx->ack_dst, tx->ack_ndst, tx->ack_skip);
	send_copy(lc, tx->ack, (uint16_t)tx->ack_len, sport_be, n);
}

/* --- control messages (JOIN, LEAVE, ...): the control lcore only --- */

/* The message's verdict; the caller sends tx (prepared by tx_prepare()). */
static enum shr_proto_reason
agg_ctl_input(struct agg_lcore *lc, uint64_t src, const void *msg, size_t len, uint64_t now_ns,
	      struct shr_agg_tx *tx)
{
	struct agg_ctx *ctx = lc->ctx;
	enum shr_proto_reason why;

	agg_ctl_pause(ctx);
	rte_spinlock_lock(&ctx->ctl_lock);
	why = shr_agg_input(ctx->agg, src, msg, len, now_ns, tx, &lc->st.agg);
	rte_spinlock_unlock(&ctx->ctl_lock);
	agg_ctl_resume(ctx);
	return why;
}

/*
 * Trees: until the upstream box's entry is pinned (by its JOIN_ACK: an admitted message), an
 * ARP request for its address (at most one per AGG_UP_ARP_GAP_NS). Its reply is learned
 * (rx_arp()). An entry that any other frame from that address made (an ICMP echo, a refused
 * message: a forged MAC) does not stop the requests: the reply replaces it.
 */
static void
arp_upstream(struct agg_lcore *lc, uint64_t now_ns)
{
	struct agg_ctx *ctx = lc->ctx;
	const struct agg_neigh *n;
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;
	struct rte_mbuf *m;
	uint32_t ip_be, l2;

	if (ctx->conf->params.upstream == 0 || now_ns < lc->up_arp_ns)
		return;
	ip_be = htonl(SHR_AGG_ADDR_IP(ctx->conf->params.upstream));
	n = neigh_find(lc, ip_be);
	if (n != NULL && neigh_left(lc, n, neigh_now(now_ns)) != 0)
		return;	/* pinned by the upstream's admitted traffic */
	/* an entry known but not pinned (the upstream idle, or a frame of its address taught
	 * one): asked again every second only */
	lc->up_arp_ns = now_ns + (n != NULL ? AGG_UP_ARP_REFRESH_NS : AGG_UP_ARP_GAP_NS);
	m = rte_pktmbuf_alloc(ctx->pkt_pool);
	if (m == NULL) {
		lc->st.nombuf++;
		return;
	}
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	memset(eth, 0, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);	/* the padding too */
	memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	rte_ether_addr_copy(&ctx->mac, &eth->src_addr);
	l2 = (uint32_t)shr_l2_type_write(&eth->ether_type, ctx->conf->vlan, RTE_ETHER_TYPE_ARP);
	arp = (struct rte_arp_hdr *)((uint8_t *)eth + l2);
	arp->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(&ctx->mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = ctx->ip_be;
	arp->arp_data.arp_tip = ip_be;
	m->data_len = (uint16_t)RTE_MAX(l2 + sizeof(*arp),
					(uint32_t)(RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN));
	m->pkt_len = m->data_len;
	lc->st.arp_request++;
	tx_one(lc, m);
}

void
agg_tick(struct agg_lcore *lc, uint64_t now_ns)
{
	struct agg_ctx *ctx = lc->ctx;
	struct shr_agg_tx tx;
	int i;

	arp_upstream(lc, now_ns);

	for (i = 0; i < 16; i++) {
		tx_prepare(lc, &tx);
		agg_ctl_pause(ctx);
		rte_spinlock_lock(&ctx->ctl_lock);
		shr_agg_tick(ctx->agg, now_ns, &tx, &lc->st.agg);
		rte_spinlock_unlock(&ctx->ctl_lock);
		agg_ctl_resume(ctx);
		if (tx.len == 0)
			break;
		agg_send(lc, &tx, htons(ctx->port_lo));
	}
}

/*
 * The box is stopping (the data lcores have returned): tell the members of every job, from
 * the control lcore's queue, before the port stops. Returns the jobs told.
 */
unsigned int
agg_shutdown(struct agg_ctx *ctx)
{
	struct agg_lcore *lc = ctx->lc[0];
	struct shr_agg_tx tx;
	uint32_t now = neigh_now(agg_tsc_ns(ctx, rte_rdtsc()));
	unsigned int n = 0, i, k;
	int rc;

	/* each data lcore learned the MACs of the members that sent to its lanes (pinned
	 * entries stay pinned: other lcores' unpinned entries do not replace them) */
	for (i = 1; i < ctx->nlcores; i++) {
		const struct agg_lcore *o = ctx->lc[i];

		for (k = 0; k <= o->neigh_mask; k++)
			if (o->neigh[k].ip != 0)
				neigh_learn(lc, o->neigh[k].ip, &o->neigh[k].mac, now,
					    neigh_left(o, &o->neigh[k], now) != 0);
	}
	for (;;) {
		tx_prepare(lc, &tx);
		rte_spinlock_lock(&ctx->ctl_lock);
		rc = shr_agg_shutdown(ctx->agg, &tx, &lc->st.agg);
		rte_spinlock_unlock(&ctx->ctl_lock);
		if (rc == 0)
			break;
		agg_send(lc, &tx, htons(ctx->port_lo));
		n++;
	}
	agg_lcore_flush(lc);
	return n;
}

/* --- receive --- */

/* ARP (l2 bytes into the frame): answer requests for our address (in place, in the VLAN it
 * came in: its tag is kept). true if m was reused. */
static bool
rx_arp(struct agg_lcore *lc, struct rte_mbuf *m, struct rte_ether_hdr *eth, uint32_t l2,
       uint64_t now_ns)
{
	struct agg_ctx *ctx = lc->ctx;
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)((uint8_t *)eth + l2);
	uint32_t sip;

	lc->st.arp++;
	if (rte_pktmbuf_data_len(m) < l2 + sizeof(*arp) ||
	    arp->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4 ||
	    arp->arp_data.arp_tip != ctx->ip_be)
		return false;
	sip = arp->arp_data.arp_sip;
	/* a probe (sender 0.0.0.0) is answered, not learned; another source no host has is
	 * neither */
	if (sip != 0 && !src_ip_ok(ctx, sip)) {
		lc->st.bad_src++;
		return false;
	}
	neigh_learn(lc, sip, &arp->arp_data.arp_sha, neigh_now(now_ns), false);
	if (arp->arp_opcode != RTE_BE16(RTE_ARP_OP_REQUEST))
		return false;
	arp->arp_opcode = RTE_BE16(RTE_ARP_OP_REPLY);
	rte_ether_addr_copy(&arp->arp_data.arp_sha, &arp->arp_data.arp_tha);
	arp->arp_data.arp_tip = sip;
	rte_ether_addr_copy(&ctx->mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = ctx->ip_be;
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&ctx->mac, &eth->src_addr);
	m->ol_flags = 0;
	lc->st.arp_reply++;
	tx_one(lc, m);
	return true;
}

/* ICMP echo request -> reply (in place; ip is l2 bytes into the frame). true if m was reused. */
static bool
rx_icmp(struct agg_lcore *lc, struct rte_mbuf *m, struct rte_ether_hdr *eth, uint32_t l2,
	struct rte_ipv4_hdr *ip, uint32_t ihl, uint32_t l4len)
{
	struct agg_ctx *ctx = lc->ctx;
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)((uint8_t *)ip + ihl);
	uint16_t ck;

	lc->st.icmp++;
	if (l4len < sizeof(*icmp) || icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST ||
	    icmp->icmp_code != 0 || rte_raw_cksum(icmp, l4len) != 0xffff)
		return false;
	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	icmp->icmp_cksum = 0;
	ck = (uint16_t)~rte_raw_cksum(icmp, l4len);
	icmp->icmp_cksum = ck;
	ip->dst_addr = ip->src_addr;
	ip->src_addr = ctx->ip_be;
	ip->time_to_live = 64;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&ctx->mac, &eth->src_addr);
	/* drop Ethernet padding beyond the IP datagram */
	m->data_len = (uint16_t)(l2 + ihl + l4len);
	m->pkt_len = m->data_len;
	m->ol_flags = 0;
	lc->st.icmp_reply++;
	tx_one(lc, m);
	return true;
}


/*
 * An IPv4 fragment: a member sends chunks larger than its path carries (a sender that
 * fragments). Counted in frag; said in the log at most once a second per lcore, with the
 * source, because a job fed by fragments never completes a round.
 */
static void
rx_frag_log(struct agg_lcore *lc, const struct rte_ipv4_hdr *ip, uint64_t now_ns)
{
	uint32_t src = rte_be_to_cpu_32(ip->src_addr);

	if (now_ns < lc->frag_log_ns)
		return;
	lc->frag_log_ns = now_ns + 1000000000ull;
	AGG_LOG(WARNING, "lcore %u: IPv4 fragments from %u.%u.%u.%u (%" PRIu64 " so far): the "
		"box drops them; the sender's chunks exceed its path's MTU: lower its chunk "
		"(or use chunk auto)", lc->lcore_id, src >> 24, (src >> 16) & 0xff,
		(src >> 8) & 0xff, src & 0xff, lc->st.frag);
}
/* What rx_one() did with a frame. */
enum rx_verdict {
	RX_FREE,	/* to be freed */
	RX_KEPT,	/* consumed (sent or queued) */
	RX_HANDOFF,	/* a DATA of another lcore's lane: hand it to *owner */
};

/* The data lcore owning the lane of a DATA's slot (bytes 12..15 of the header, V bit off). */
static inline uint16_t
lane_owner(const struct agg_ctx *ctx, const uint8_t *msg)
{
	uint32_t slot;

	memcpy(&slot, msg + 12, sizeof(slot));
	slot = rte_be_to_cpu_32(slot) & 0x7fffffffu;
	return ctx->lane_lc[ctx->lanes == 1 ? 0 : slot % ctx->lanes];
}

/* One frame; handed: from another lcore's handoff (counted there, not handed on again). */
static inline enum rx_verdict
rx_one(struct agg_lcore *lc, struct rte_mbuf *m, uint64_t now_ns, bool handed,
       uint16_t *owner)
{
	struct agg_ctx *ctx = lc->ctx;
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint32_t len = rte_pktmbuf_data_len(m);
	uint32_t ihl, tot, l4len, ulen;
	uint16_t dport;
	const uint8_t *msg;
	struct shr_agg_tx tx;
	enum shr_proto_reason why;
	enum shr_l2_verdict l2v;
	struct shr_l2 l2;
	uint64_t src;

	if (!handed) {
		lc->st.rx_pkts++;
		lc->st.rx_bytes += m->pkt_len;
		/* a tag the device put in the metadata goes back in the frame: parsed as it came,
		 * and kept in an answer made in place (DPDK 22.11's af_packet does that itself
		 * unless asked to strip) */
		if (unlikely(m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED)) {
			if (m->nb_segs != 1 || rte_vlan_insert(&m) != 0) {
				lc->st.bad_l2++;
				return RX_FREE;
			}
			len = rte_pktmbuf_data_len(m);
		}
	}
	if (unlikely(m->nb_segs != 1)) {
		lc->st.bad_l2++;
		return RX_FREE;
	}
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	l2v = shr_l2_parse(eth, len, ctx->conf->vlan, &l2);
	if (unlikely(l2v != SHR_L2_OK)) {
		if (l2v == SHR_L2_OTHER)
			lc->st.vlan_other++;
		else
			lc->st.bad_l2++;
		return RX_FREE;
	}
	/* a frame from a group MAC (or zero) is no host's: never answered, never learned */
	if (unlikely(!shr_l2_src_ok(eth))) {
		lc->st.bad_src++;
		return RX_FREE;
	}
	if (unlikely(l2.etype != RTE_ETHER_TYPE_IPV4)) {
		if (l2.etype == RTE_ETHER_TYPE_ARP)
			return rx_arp(lc, m, eth, l2.len, now_ns) ? RX_KEPT : RX_FREE;
		lc->st.non_ip++;
		return RX_FREE;
	}
	ip = (struct rte_ipv4_hdr *)((uint8_t *)eth + l2.len);
	/* the length first: shr_ip4_check() reads the header's first 4 bytes, and sums its
	 * bytes only once the total length (checked against the frame) covers them */
	if (unlikely(len < l2.len + sizeof(*ip))) {
		lc->st.bad_ip++;
		return RX_FREE;
	}
	ihl = shr_ip4_check(ip, len - l2.len,
			    (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
			    RTE_MBUF_F_RX_IP_CKSUM_GOOD, &tot);
	if (unlikely(ihl == 0)) {
		lc->st.bad_ip++;
		return RX_FREE;
	}
	if (unlikely(ip->dst_addr != ctx->ip_be)) {
		lc->st.not_ours++;
		return RX_FREE;
	}
	if (unlikely(!src_ip_ok(ctx, ip->src_addr))) {
		lc->st.bad_src++;
		return RX_FREE;
	}
	if (unlikely(ip->fragment_offset &
		     RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))) {
		lc->st.frag++;
		rx_frag_log(lc, ip, now_ns);
		return RX_FREE;
	}
	l4len = tot - ihl;
	if (unlikely(ip->next_proto_id != IPPROTO_UDP)) {
		neigh_learn(lc, ip->src_addr, &eth->src_addr, neigh_now(now_ns), false);
		if (ip->next_proto_id == IPPROTO_ICMP)
			return rx_icmp(lc, m, eth, l2.len, ip, ihl, l4len) ? RX_KEPT : RX_FREE;
		lc->st.non_udp++;
		return RX_FREE;
	}
	udp = (struct rte_udp_hdr *)((uint8_t *)ip + ihl);
	ulen = l4len >= sizeof(*udp) ? ntohs(udp->dgram_len) : 0;
	if (unlikely(ulen < sizeof(*udp) || ulen > l4len)) {
		lc->st.bad_udp++;
		return RX_FREE;
	}
	dport = ntohs(udp->dst_port);
	if (unlikely(dport < ctx->port_lo || dport > ctx->port_hi)) {
		lc->st.bad_port++;
		return RX_FREE;
	}
	msg = (const uint8_t *)(udp + 1);
	ulen -= sizeof(*udp);
	src = SHR_AGG_ADDR(ntohl(ip->src_addr), ntohs(udp->src_port));
	/* byte 3 is the type: anything but DATA may change the job table */
	if (unlikely(ulen >= 4 && msg[3] != SHR_MSG_DATA)) {
		if (!lc->control) {
			/* learned (pinned if admitted) by the control lcore */
			if (rte_ring_mp_enqueue(ctx->ctl_ring, m) != 0) {
				lc->st.ctl_drop++;
				return RX_FREE;
			}
			lc->st.ctl_fwd++;
			return RX_KEPT;
		}
		tx_prepare(lc, &tx);
		why = agg_ctl_input(lc, src, msg, ulen, now_ns, &tx);
	} else {
		if (ctx->dispatch) {
			if (!handed && likely(ulen >= 16)) {
				*owner = lane_owner(ctx, msg);
				if (*owner != lc->idx)
					return RX_HANDOFF;	/* learned by its owner */
			}
			/* the slot is ours: so is its lane's port, unless the sender put it on
			 * another lane's port (or the handoff is wrong; the tests check) */
			if (unlikely(ctx->lane_lc[dport - ctx->port_lo] != lc->idx))
				lc->st.lane_foreign++;
		}
		tx_prepare(lc, &tx);
		why = shr_agg_input(ctx->agg, src, msg, ulen, now_ns, &tx, &lc->st.agg);
	}
	/* before the fan-out: the sender may be one of its destinations. Pinned (its MAC
	 * moved) only by a message that showed it comes from a member or the upstream: not by
	 * a bare JOIN answered with a challenge, which anyone can send from a member's address.
	 * neigh_learn()'s checks without making them again: shr_l2_src_ok() refused a group
	 * (or zero) source MAC, src_ip_ok() a source in 0/8 (so 0) or 240/4 (so broadcast). */
	neigh_put(lc, ip->src_addr, &eth->src_addr, neigh_now(now_ns),
		  why == SHR_PROTO_OK && !tx.unproven);
	agg_send(lc, &tx, udp->dst_port);
	return RX_FREE;
}

/* Hand the frames of hand[0..n) to their owners (own[]), a ring burst per owner. */
static void
handoff(struct agg_lcore *lc, struct rte_mbuf **hand, uint16_t *own, uint16_t n)
{
	struct rte_mbuf *batch[AGG_BURST];
	uint16_t o, i, k, left;
	unsigned int sent;

	while (n != 0) {
		o = own[0];
		for (i = 0, k = 0, left = 0; i < n; i++) {
			if (own[i] == o) {
				batch[k++] = hand[i];
			} else {
				hand[left] = hand[i];
				own[left++] = own[i];
			}
		}
		sent = rte_ring_mp_enqueue_burst(lc->ctx->lc[o]->handoff, (void **)batch, k, NULL);
		lc->st.lane_fwd += sent;
		if (sent < k) {
			lc->st.lane_drop += k - sent;
			rte_pktmbuf_free_bulk(batch + sent, k - sent);
		}
		n = left;
	}
}

void
agg_process_burst(struct agg_lcore *lc, struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
		  bool handed)
{
	struct rte_mbuf *done[AGG_BURST], *hand[AGG_BURST];
	uint16_t own[AGG_BURST];
	uint16_t i, nd = 0, nh = 0, o = 0;

	for (i = 0; i < n && i < AGG_PREFETCH; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; i < n; i++) {
		if (i + AGG_PREFETCH < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + AGG_PREFETCH], void *));
		switch (rx_one(lc, pkts[i], now_ns, handed, &o)) {
		case RX_FREE:
			done[nd++] = pkts[i];
			if (nd == AGG_BURST) {
				rte_pktmbuf_free_bulk(done, nd);
				nd = 0;
			}
			break;
		case RX_HANDOFF:
			hand[nh] = pkts[i];
			own[nh++] = o;
			if (nh == AGG_BURST) {
				handoff(lc, hand, own, nh);
				nh = 0;
			}
			break;
		case RX_KEPT:
			break;
		}
	}
	if (nd != 0)
		rte_pktmbuf_free_bulk(done, nd);
	if (nh != 0)
		handoff(lc, hand, own, nh);
}
