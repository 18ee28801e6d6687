/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PCAP_FRAME_H
#define SHR_PCAP_FRAME_H

/*
 * Frames and pcap files for shouter-pcapgen and check_pcap (through pcap_common.h): Ethernet /
 * IPv4 / UDP header layout and checksums, and a minimal pcap reader/writer (classic libpcap
 * format, Ethernet).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#define PC_ETH_LEN 14
#define PC_IP_LEN 20
#define PC_UDP_LEN 8
#define PC_HDRS (PC_ETH_LEN + PC_IP_LEN + PC_UDP_LEN)
#define PC_MAX_FRAME 65536

static inline uint16_t
pc_cksum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;	/* host order; 0 over a header with a valid checksum */
}

/** Ethernet + IPv4 (+ UDP when proto is 17) headers; l4_len counts the L4 header too. */
static inline void
pc_fill_l2l3(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t sip,
	     uint32_t dip, uint8_t proto, uint32_t l4_len)
{
	uint16_t ck;
	uint32_t v;

	memcpy(p, dmac, 6);
	memcpy(p + 6, smac, 6);
	p[12] = 0x08;
	p[13] = 0x00;
	p += PC_ETH_LEN;
	memset(p, 0, PC_IP_LEN);
	p[0] = 0x45;
	p[2] = (uint8_t)((PC_IP_LEN + l4_len) >> 8);
	p[3] = (uint8_t)(PC_IP_LEN + l4_len);
	p[8] = 64;
	p[9] = proto;
	v = htonl(sip);
	memcpy(p + 12, &v, 4);
	v = htonl(dip);
	memcpy(p + 16, &v, 4);
	ck = pc_cksum(p, PC_IP_LEN);
	p[10] = (uint8_t)(ck >> 8);
	p[11] = (uint8_t)ck;
}

static inline void
pc_fill_udp(uint8_t *p, uint16_t sport, uint16_t dport, uint32_t msg_len)
{
	p[0] = (uint8_t)(sport >> 8);
	p[1] = (uint8_t)sport;
	p[2] = (uint8_t)(dport >> 8);
	p[3] = (uint8_t)dport;
	p[4] = (uint8_t)((PC_UDP_LEN + msg_len) >> 8);
	p[5] = (uint8_t)(PC_UDP_LEN + msg_len);
	p[6] = 0;
	p[7] = 0;
}

/* --- pcap files --- */

struct pc_file {
	FILE *f;
	bool swap;
	bool nsec;
};

static inline uint32_t
pc_sw32(const struct pc_file *pf, uint32_t v)
{
	return pf->swap ? __builtin_bswap32(v) : v;
}

static inline int
pc_open_write(struct pc_file *pf, const char *path)
{
	uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, PC_MAX_FRAME, 1 };

	pf->f = fopen(path, "wb");
	if (pf->f == NULL)
		return -errno;
	pf->swap = false;
	pf->nsec = false;
	if (fwrite(hdr, sizeof(hdr), 1, pf->f) != 1)
		return -EIO;
	return 0;
}

static inline int
pc_write(struct pc_file *pf, const void *frame, uint32_t len, uint32_t usec)
{
	uint32_t rec[4] = { usec / 1000000, usec % 1000000, len, len };

	if (fwrite(rec, sizeof(rec), 1, pf->f) != 1 || fwrite(frame, len, 1, pf->f) != 1)
		return -EIO;
	return 0;
}

static inline int
pc_open_read(struct pc_file *pf, const char *path)
{
	uint32_t hdr[6];

	pf->swap = false;
	pf->nsec = false;
	pf->f = fopen(path, "rb");
	if (pf->f == NULL)
		return -errno;
	if (fread(hdr, sizeof(hdr), 1, pf->f) != 1)
		return -EIO;
	switch (hdr[0]) {
	case 0xa1b2c3d4: pf->swap = false; pf->nsec = false; break;
	case 0xa1b23c4d: pf->swap = false; pf->nsec = true; break;
	case 0xd4c3b2a1: pf->swap = true; pf->nsec = false; break;
	case 0x4d3cb2a1: pf->swap = true; pf->nsec = true; break;
	default: return -EINVAL;
	}
	if (pc_sw32(pf, hdr[5]) != 1)	/* LINKTYPE_ETHERNET */
		return -EINVAL;
	return 0;
}

/** Next frame: its length (captured), 0 at the end, or -EIO. */
static inline int
pc_read(struct pc_file *pf, uint8_t *buf, uint32_t cap)
{
	uint32_t rec[4], len;

	if (fread(rec, sizeof(rec), 1, pf->f) != 1)
		return 0;
	len = pc_sw32(pf, rec[2]);
	if (len > cap || (len != 0 && fread(buf, len, 1, pf->f) != 1))
		return -EIO;
	return (int)len;
}

static inline void
pc_close(struct pc_file *pf)
{
	if (pf->f != NULL)
		fclose(pf->f);
	pf->f = NULL;
}

#endif /* SHR_PCAP_FRAME_H */
