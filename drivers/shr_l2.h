/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_L2_H
#define SHR_L2_H

/**
 * @file
 * The Ethernet header of a received frame, with or without one IEEE 802.1Q tag: which
 * EtherType it carries, where its payload starts, and whether it is on the VLAN this host
 * is configured for. Shared by the box's data path (app/agg) and the DPDK endpoint driver
 * (drivers/ethdev), so that both accept and refuse the same frames; plain C, no DPDK, so
 * that a unit test checks it without the EAL (tests/unit/test_l2.c).
 *
 * A host is on one VLAN or on none:
 * - vlan 0 (none): untagged frames, and priority-tagged ones (an 802.1Q tag of VID 0, which
 *   belongs to the untagged network) are accepted; a frame tagged with any other VID is
 *   another network's.
 * - vlan 1..4094: only frames tagged with that VID are accepted; untagged and
 *   priority-tagged frames are another network's (the native VLAN's).
 * The priority (PCP) and DEI bits of a tag are ignored. Stacked tags (an 802.1ad S-tag,
 * 0x88a8, or the older 0x9100, outside; or a second 802.1Q tag inside ours) are refused:
 * this host terminates one tag at most.
 *
 * A frame whose tag a device stripped into its metadata (a DPDK mbuf with
 * RTE_MBUF_F_RX_VLAN_STRIPPED) has it put back in the frame first (rte_vlan_insert()),
 * so that it is parsed, and answered in place, as it came on the wire.
 */

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHR_L2_ETH_LEN 14	/**< Ethernet header without a tag. */
#define SHR_L2_TAG_LEN 4	/**< One 802.1Q tag (TPID + TCI). */
#define SHR_L2_VID_MASK 0x0fffu	/**< The VLAN id bits of a TCI. */
#define SHR_L2_VLAN_MAX 4094u	/**< Largest VLAN id a host can be configured for. */
#define SHR_L2_UNTAGGED 0xffffu	/**< shr_l2::vid of a frame without a tag. */
#define SHR_L2_TPID_8021Q 0x8100u	/**< C-tag. */
#define SHR_L2_TPID_8021AD 0x88a8u	/**< S-tag (QinQ). */
#define SHR_L2_TPID_QINQ_OLD 0x9100u	/**< Pre-standard QinQ outer tag. */

/** What shr_l2_parse() found in a frame. */
enum shr_l2_verdict {
	SHR_L2_OK = 0,	/**< On our network: shr_l2::etype and shr_l2::len are set. */
	SHR_L2_SHORT,	/**< Shorter than its Ethernet header (and tag). */
	SHR_L2_OTHER,	/**< Another network's: another VID, untagged (or VID 0) while a
			 *   VLAN is configured, tagged while none is, or stacked tags. */
};

/** The Ethernet header of a frame. */
struct shr_l2 {
	uint16_t etype;	/**< EtherType of the payload (host order): after the tag if any. */
	uint16_t len;	/**< Bytes before the payload: 14, or 18 with a tag. */
	uint16_t vid;	/**< VLAN id of the tag, or SHR_L2_UNTAGGED. */
	uint16_t pcp;	/**< Priority bits of the tag (0 untagged); not compared. */
};

static inline uint16_t
shr_l2_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline int
shr_l2_is_tpid(uint16_t t)
{
	return t == SHR_L2_TPID_8021Q || t == SHR_L2_TPID_8021AD || t == SHR_L2_TPID_QINQ_OLD;
}

/**
 * Parse the Ethernet header of a received frame for a host on VLAN vlan.
 *
 * @param frame
 *   The frame's first byte (destination MAC).
 * @param len
 *   Bytes at frame.
 * @param vlan
 *   This host's VLAN id (1..SHR_L2_VLAN_MAX), or 0: none (untagged).
 * @param l2
 *   Out: the header (etype and len valid with SHR_L2_OK; vid and pcp as far as parsed).
 * @return
 *   SHR_L2_OK, SHR_L2_SHORT or SHR_L2_OTHER (enum shr_l2_verdict).
 */
static inline enum shr_l2_verdict
shr_l2_parse(const void *frame, uint32_t len, uint16_t vlan, struct shr_l2 *l2)
{
	const uint8_t *p = (const uint8_t *)frame;
	uint16_t t, tci;

	l2->len = SHR_L2_ETH_LEN;
	l2->vid = SHR_L2_UNTAGGED;
	l2->pcp = 0;
	if (len < SHR_L2_ETH_LEN) {
		l2->etype = 0;
		return SHR_L2_SHORT;
	}
	t = shr_l2_be16(p + 12);
	if (!shr_l2_is_tpid(t)) {
		l2->etype = t;
		return vlan == 0 ? SHR_L2_OK : SHR_L2_OTHER;
	}
	if (len < SHR_L2_ETH_LEN + SHR_L2_TAG_LEN)
		return SHR_L2_SHORT;
	tci = shr_l2_be16(p + 14);
	l2->vid = tci & SHR_L2_VID_MASK;
	l2->pcp = tci >> 13;
	l2->etype = shr_l2_be16(p + 16);
	l2->len = SHR_L2_ETH_LEN + SHR_L2_TAG_LEN;
	if (t != SHR_L2_TPID_8021Q || shr_l2_is_tpid(l2->etype))
		return SHR_L2_OTHER;	/* an S-tag outside, or a second tag inside */
	return l2->vid == vlan ? SHR_L2_OK : SHR_L2_OTHER;
}

/**
 * Whether a received frame's source MAC can be a host's: not a group address (the I/G bit,
 * bit 0 of its first byte, set: multicast or broadcast) and not all zeros. The box's data
 * path refuses a frame from any other one (rte_is_unicast_ether_addr() and
 * rte_is_zero_ether_addr() give the same verdict).
 *
 * One 8-byte load of bytes 4..11, taken as little-endian and shifted right by 16: the source
 * MAC (bytes 6..11) is then bits 0..47, its first byte the lowest 8, so bit 0 is the I/G bit
 * and the value is 0 exactly when the six bytes are.
 *
 * @param frame
 *   The frame's first byte (destination MAC); at least SHR_L2_ETH_LEN bytes (12 are read).
 * @return
 *   Non-zero if the source MAC is unicast and not zero.
 */
static inline int
shr_l2_src_ok(const void *frame)
{
	uint64_t w;

	memcpy(&w, (const uint8_t *)frame + 4, sizeof(w));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	w >>= 16;
	return (w & 1u) == 0 && w != 0;
}

/**
 * Write the EtherType of a frame being built, behind an 802.1Q tag of VID vlan (priority 0)
 * if vlan is not 0.
 *
 * @param p
 *   Byte 12 of the frame (right after the MACs): 2 bytes, or 6 with a tag.
 * @param vlan
 *   VLAN id (1..SHR_L2_VLAN_MAX), or 0: untagged.
 * @param etype
 *   EtherType of the payload (host order).
 * @return
 *   Where the payload starts in the frame: SHR_L2_ETH_LEN, or SHR_L2_ETH_LEN +
 *   SHR_L2_TAG_LEN with a tag.
 */
static inline uint32_t
shr_l2_type_write(void *p, uint16_t vlan, uint16_t etype)
{
	uint8_t *b = (uint8_t *)p;

	if (vlan != 0) {
		b[0] = SHR_L2_TPID_8021Q >> 8;
		b[1] = SHR_L2_TPID_8021Q & 0xff;
		b[2] = (uint8_t)(vlan >> 8);
		b[3] = (uint8_t)vlan;
		b += SHR_L2_TAG_LEN;
	}
	b[0] = (uint8_t)(etype >> 8);
	b[1] = (uint8_t)etype;
	return vlan != 0 ? SHR_L2_ETH_LEN + SHR_L2_TAG_LEN : SHR_L2_ETH_LEN;
}

/** Whether an IPv4 address (host order) is a multicast group (224.0.0.0/4). */
static inline int
shr_l2_ip_multicast(uint32_t ip)
{
	return (ip >> 28) == 0xe;
}

/**
 * The Ethernet destination of frames to a result group (host order): for a multicast group,
 * 01:00:5e and its low 23 bits (RFC 1112); for a broadcast address, ff:ff:ff:ff:ff:ff.
 *
 * @param ip
 *   The group's IPv4 address (host order).
 * @param mac
 *   Written: 6 bytes.
 */
static inline void
shr_l2_group_mac(uint32_t ip, uint8_t mac[6])
{
	int i;

	if (!shr_l2_ip_multicast(ip)) {
		for (i = 0; i < 6; i++)
			mac[i] = 0xff;
		return;
	}
	mac[0] = 0x01;
	mac[1] = 0x00;
	mac[2] = 0x5e;
	mac[3] = (uint8_t)((ip >> 16) & 0x7f);
	mac[4] = (uint8_t)(ip >> 8);
	mac[5] = (uint8_t)ip;
}

#ifdef __cplusplus
}
#endif

#endif /* SHR_L2_H */
