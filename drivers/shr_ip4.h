/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_IP4_H
#define SHR_IP4_H

/**
 * @file
 * The IPv4 header checks of a received frame, as the box's data path (app/agg) makes them on
 * every frame: version 4, a header of 20..60 bytes, a total length that covers the header and
 * fits in the frame, and the header checksum. Plain C, no DPDK, so that a unit test compares
 * the fast path (a 20-byte header, the only kind a shouter host sends) with the general one
 * (tests/unit/test_ip4.c).
 */

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHR_IP4_HDR_LEN 20	/**< IPv4 header without options. */
#define SHR_IP4_VHL_DEF 0x45	/**< version_ihl of a header without options. */

static inline uint32_t
shr_ip4_load32(const uint8_t *p)
{
	uint32_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/*
 * A one's complement sum of at most 15 32-bit words (a 60-byte header: below 2^36), folded to
 * 16 bits in one pass: the high word adds at most 15 to the low one, so the second 32-bit sum
 * cannot carry again (when the first one carried, its low word is at most 14); then two 16-bit
 * folds (the first leaves at most 0x1fffe, the second at most 0xffff). Each step keeps the
 * value modulo 0xffff and keeps it non-zero, so the result is 0xffff exactly when the words
 * sum to a non-zero multiple of 0xffff: RFC 1071's valid header, in any byte order.
 */
static inline uint32_t
shr_ip4_fold(uint64_t s)
{
	uint32_t t;

	s = (s & 0xffffffffu) + (s >> 32);
	t = (uint32_t)s + (uint32_t)(s >> 32);
	t = (t & 0xffffu) + (t >> 16);
	t = (t & 0xffffu) + (t >> 16);
	return t;
}

/** The five 32-bit words of a 20-byte header added up, not folded. */
static inline uint64_t
shr_ip4_add20(const uint8_t *p)
{
	return (uint64_t)shr_ip4_load32(p) + shr_ip4_load32(p + 4) + shr_ip4_load32(p + 8) +
	       shr_ip4_load32(p + 12) + shr_ip4_load32(p + 16);
}

/** The folded one's complement sum of a 20-byte header: five loads, no loop. */
static inline uint32_t
shr_ip4_sum20(const uint8_t *p)
{
	return shr_ip4_fold(shr_ip4_add20(p));
}

/** The folded one's complement sum of a header of n bytes (a multiple of 4, at most 60). */
static inline uint32_t
shr_ip4_sum(const uint8_t *p, uint32_t n)
{
	uint64_t s = 0;
	uint32_t i;

	for (i = 0; i < n; i += 4)
		s += shr_ip4_load32(p + i);
	return shr_ip4_fold(s);
}

/**
 * Check the IPv4 header of a received frame.
 *
 * @param hdr
 *   The header's first byte (version_ihl).
 * @param avail
 *   Bytes of the frame from hdr on: at least SHR_IP4_HDR_LEN (the caller checks it first).
 * @param csum_good
 *   Non-zero: the device checked the header checksum (and found it good); it is not summed.
 * @param tot
 *   Out: the total length (host order), set when the header is valid.
 * @return
 *   The header length in bytes (20..60) if the header is valid: version 4, a header length
 *   of at least 20 bytes, a total length from the header length to avail, and the checksum
 *   right (or csum_good). 0 otherwise. The checksum is summed only over a header the total
 *   length (so the frame) covers.
 */
static inline uint32_t
shr_ip4_check(const void *hdr, uint32_t avail, int csum_good, uint32_t *tot)
{
	const uint8_t *p = (const uint8_t *)hdr;
	uint32_t t = (uint32_t)p[2] << 8 | p[3];
	uint32_t ihl;

	/* The common header first: 0x45 is version 4 and 20 bytes, so only the lengths and
	 * the five-word checksum are left to check (the general path's verdict, in fewer
	 * instructions). */
	if (__builtin_expect(p[0] == SHR_IP4_VHL_DEF, 1)) {
		/* shr_ip4_sum20(p) == 0xffff: the words' sum is a non-zero multiple of 0xffff
		 * (shr_ip4_fold()); it is not 0 (byte 0 is 0x45), so one remainder, a multiply,
		 * tells it instead of four folds */
		if (t < SHR_IP4_HDR_LEN || t > avail ||
		    (!csum_good && shr_ip4_add20(p) % 0xffff != 0))
			return 0;
		*tot = t;
		return SHR_IP4_HDR_LEN;
	}
	ihl = (uint32_t)(p[0] & 0x0f) * 4;
	if ((p[0] >> 4) != 4 || ihl < SHR_IP4_HDR_LEN || t < ihl || t > avail ||
	    (!csum_good && shr_ip4_sum(p, ihl) != 0xffff))
		return 0;
	*tot = t;
	return ihl;
}

#ifdef __cplusplus
}
#endif

#endif /* SHR_IP4_H */
