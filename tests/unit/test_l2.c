/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* drivers/shr_l2.h: the Ethernet/802.1Q parse of the box and the DPDK endpoint (issue 15). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <shr_l2.h>

#define ETYPE_IPV4 0x0800
#define ETYPE_ARP 0x0806

/* A frame: MACs, then tags (TPID, TCI pairs, outermost first), then etype and 28 bytes. */
static uint32_t
frame(uint8_t *b, const uint16_t *tags, unsigned int ntags, uint16_t etype)
{
	uint32_t off = 12;
	unsigned int i;

	memset(b, 0, 64);
	for (i = 0; i < 6; i++) {
		b[i] = (uint8_t)(0x02 + i);
		b[6 + i] = (uint8_t)(0x12 + i);
	}
	for (i = 0; i < 2 * ntags; i++, off += 2) {
		b[off] = (uint8_t)(tags[i] >> 8);
		b[off + 1] = (uint8_t)tags[i];
	}
	b[off] = (uint8_t)(etype >> 8);
	b[off + 1] = (uint8_t)etype;
	b[off + 2] = 0x45;	/* the payload's first byte */
	return off + 2 + 28;
}

static void
test_untagged(void **state)
{
	uint8_t b[64];
	struct shr_l2 l2;
	uint32_t n = frame(b, NULL, 0, ETYPE_IPV4);

	(void)state;
	assert_int_equal(shr_l2_parse(b, n, 0, &l2), SHR_L2_OK);
	assert_int_equal(l2.etype, ETYPE_IPV4);
	assert_int_equal(l2.len, 14);
	assert_int_equal(l2.vid, SHR_L2_UNTAGGED);
	assert_int_equal(b[l2.len], 0x45);
	/* a VLAN is configured: untagged frames are the native network's */
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OTHER);
	assert_int_equal(l2.vid, SHR_L2_UNTAGGED);
	n = frame(b, NULL, 0, ETYPE_ARP);
	assert_int_equal(shr_l2_parse(b, n, 0, &l2), SHR_L2_OK);
	assert_int_equal(l2.etype, ETYPE_ARP);
	assert_int_equal(shr_l2_parse(b, n, 4094, &l2), SHR_L2_OTHER);
}

static void
test_our_vlan(void **state)
{
	const uint16_t tag[] = { 0x8100, 100 };
	const uint16_t tag_max[] = { 0x8100, 4094 };
	uint8_t b[64];
	struct shr_l2 l2;
	uint32_t n = frame(b, tag, 1, ETYPE_IPV4);

	(void)state;
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OK);
	assert_int_equal(l2.etype, ETYPE_IPV4);
	assert_int_equal(l2.len, 18);
	assert_int_equal(l2.vid, 100);
	assert_int_equal(l2.pcp, 0);
	assert_int_equal(b[l2.len], 0x45);
	n = frame(b, tag, 1, ETYPE_ARP);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OK);
	assert_int_equal(l2.etype, ETYPE_ARP);
	n = frame(b, tag_max, 1, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, n, 4094, &l2), SHR_L2_OK);
	assert_int_equal(l2.vid, 4094);
	/* exactly the header and the tag: parsed (the payload's own checks come later) */
	assert_int_equal(shr_l2_parse(b, 18, 4094, &l2), SHR_L2_OK);
	assert_int_equal(l2.len, 18);
}

static void
test_other_vlan(void **state)
{
	const uint16_t tag200[] = { 0x8100, 200 };
	const uint16_t tag100[] = { 0x8100, 100 };
	uint8_t b[64];
	struct shr_l2 l2;
	uint32_t n = frame(b, tag200, 1, ETYPE_IPV4);

	(void)state;
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OTHER);
	assert_int_equal(l2.vid, 200);
	/* no VLAN configured: a tagged frame is another network's */
	n = frame(b, tag100, 1, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, n, 0, &l2), SHR_L2_OTHER);
	assert_int_equal(l2.vid, 100);
	assert_int_equal(shr_l2_parse(b, n, 101, &l2), SHR_L2_OTHER);
	assert_int_equal(shr_l2_parse(b, n, 100 + 4096, &l2), SHR_L2_OTHER);
}

static void
test_qinq(void **state)
{
	const uint16_t s_tag[] = { 0x88a8, 100 };
	const uint16_t s_c[] = { 0x88a8, 100, 0x8100, 100 };
	const uint16_t old_c[] = { 0x9100, 100, 0x8100, 100 };
	const uint16_t c_c[] = { 0x8100, 100, 0x8100, 100 };
	const uint16_t c_s[] = { 0x8100, 100, 0x88a8, 7 };
	uint8_t b[64];
	struct shr_l2 l2;
	uint32_t n;

	(void)state;
	/* an S-tag alone, even of our VID: refused, at either setting */
	n = frame(b, s_tag, 1, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OTHER);
	assert_int_equal(shr_l2_parse(b, n, 0, &l2), SHR_L2_OTHER);
	n = frame(b, s_c, 2, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OTHER);
	n = frame(b, old_c, 2, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OTHER);
	/* our tag with another inside (what DPDK's af_packet makes of an S-tag the kernel
	 * took off: it puts a C-tag back) */
	n = frame(b, c_c, 2, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OTHER);
	assert_int_equal(l2.vid, 100);
	n = frame(b, c_s, 2, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OTHER);
}

static void
test_truncated(void **state)
{
	const uint16_t tag[] = { 0x8100, 100 };
	uint8_t b[64];
	struct shr_l2 l2;
	uint32_t len;

	(void)state;
	frame(b, NULL, 0, ETYPE_IPV4);
	for (len = 0; len < 14; len++) {
		assert_int_equal(shr_l2_parse(b, len, 0, &l2), SHR_L2_SHORT);
		assert_int_equal(shr_l2_parse(b, len, 100, &l2), SHR_L2_SHORT);
	}
	assert_int_equal(shr_l2_parse(b, 14, 0, &l2), SHR_L2_OK);
	/* a tag cut short: 14..17 bytes */
	frame(b, tag, 1, ETYPE_IPV4);
	for (len = 14; len < 18; len++) {
		assert_int_equal(shr_l2_parse(b, len, 100, &l2), SHR_L2_SHORT);
		assert_int_equal(shr_l2_parse(b, len, 0, &l2), SHR_L2_SHORT);
	}
}

static void
test_priority_bits(void **state)
{
	/* PCP 5, DEI 1, VID 100; PCP 7, VID 100 */
	const uint16_t tag_a[] = { 0x8100, (5u << 13) | (1u << 12) | 100 };
	const uint16_t tag_b[] = { 0x8100, (7u << 13) | 100 };
	const uint16_t tag_c[] = { 0x8100, (7u << 13) | 200 };
	uint8_t b[64];
	struct shr_l2 l2;
	uint32_t n;

	(void)state;
	n = frame(b, tag_a, 1, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OK);
	assert_int_equal(l2.vid, 100);
	assert_int_equal(l2.pcp, 5);
	assert_int_equal(l2.len, 18);
	n = frame(b, tag_b, 1, ETYPE_ARP);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OK);
	assert_int_equal(l2.pcp, 7);
	assert_int_equal(l2.etype, ETYPE_ARP);
	n = frame(b, tag_c, 1, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OTHER);
	assert_int_equal(l2.vid, 200);
}

static void
test_priority_tagged(void **state)
{
	/* VID 0: 802.1p priority only, the untagged network's */
	const uint16_t tag0[] = { 0x8100, 0 };
	const uint16_t tag0p[] = { 0x8100, 6u << 13 };
	uint8_t b[64];
	struct shr_l2 l2;
	uint32_t n = frame(b, tag0, 1, ETYPE_IPV4);

	(void)state;
	assert_int_equal(shr_l2_parse(b, n, 0, &l2), SHR_L2_OK);
	assert_int_equal(l2.vid, 0);
	assert_int_equal(l2.len, 18);
	assert_int_equal(l2.etype, ETYPE_IPV4);
	assert_int_equal(b[l2.len], 0x45);
	assert_int_equal(shr_l2_parse(b, n, 100, &l2), SHR_L2_OTHER);
	n = frame(b, tag0p, 1, ETYPE_ARP);
	assert_int_equal(shr_l2_parse(b, n, 0, &l2), SHR_L2_OK);
	assert_int_equal(l2.pcp, 6);
	assert_int_equal(l2.etype, ETYPE_ARP);
	assert_int_equal(shr_l2_parse(b, n, 1, &l2), SHR_L2_OTHER);
}

static void
test_type_write(void **state)
{
	uint8_t b[64], want[64];
	struct shr_l2 l2;
	const uint16_t tag[] = { 0x8100, 100 };
	uint32_t n;

	(void)state;
	/* what is written parses back, on the same VLAN only */
	frame(want, tag, 1, ETYPE_IPV4);
	frame(b, NULL, 0, 0);
	assert_int_equal(shr_l2_type_write(b + 12, 100, ETYPE_IPV4), 18);
	assert_memory_equal(b, want, 18);
	assert_int_equal(shr_l2_parse(b, 18, 100, &l2), SHR_L2_OK);
	assert_int_equal(l2.etype, ETYPE_IPV4);
	assert_int_equal(shr_l2_parse(b, 18, 200, &l2), SHR_L2_OTHER);
	/* VLAN ids of 12 bits: the TCI's first byte holds the high 4 (b filled with other
	 * bytes first, so that a byte not written shows) */
	{
		const uint16_t vids[] = { 256, 300, 0x0abc, SHR_L2_VLAN_MAX };
		unsigned int i;

		for (i = 0; i < sizeof(vids) / sizeof(vids[0]); i++) {
			const uint16_t tag_v[] = { 0x8100, vids[i] };

			frame(want, tag_v, 1, ETYPE_IPV4);
			memset(b, 0xa5, sizeof(b));
			memcpy(b, want, 12);
			assert_int_equal(shr_l2_type_write(b + 12, vids[i], ETYPE_IPV4), 18);
			assert_memory_equal(b, want, 18);
			assert_int_equal(shr_l2_parse(b, 18, vids[i], &l2), SHR_L2_OK);
			assert_int_equal(l2.vid, vids[i]);
			assert_int_equal(shr_l2_parse(b, 18, vids[i] & 0xff, &l2), SHR_L2_OTHER);
		}
	}
	n = frame(want, NULL, 0, ETYPE_ARP);
	frame(b, NULL, 0, 0);
	assert_int_equal(shr_l2_type_write(b + 12, 0, ETYPE_ARP), 14);
	assert_memory_equal(b, want, 14);
	assert_int_equal(shr_l2_parse(b, n, 0, &l2), SHR_L2_OK);
	assert_int_equal(l2.etype, ETYPE_ARP);
	assert_int_equal(l2.len, 14);
}

/* The result group's Ethernet destination (issue 16): RFC 1112's mapping, or broadcast. */
static void
test_group_mac(void **state)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t g1[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
	static const uint8_t g2[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	uint8_t mac[6];

	(void)state;
	assert_false(shr_l2_ip_multicast(0xdfffffffu));	/* 223.255.255.255 */
	assert_true(shr_l2_ip_multicast(0xe0000000u));	/* 224.0.0.0 */
	assert_true(shr_l2_ip_multicast(0xefffffffu));	/* 239.255.255.255 */
	assert_false(shr_l2_ip_multicast(0xf0000000u));	/* 240.0.0.0 */
	assert_false(shr_l2_ip_multicast(0xffffffffu));
	shr_l2_group_mac(0xef010203u, mac);		/* 239.1.2.3 */
	assert_memory_equal(mac, g1, 6);
	shr_l2_group_mac(0xe0800001u, mac);		/* 224.128.0.1: the 24th bit dropped */
	assert_memory_equal(mac, g2, 6);
	shr_l2_group_mac(0xc61200ffu, mac);		/* 198.18.0.255: a broadcast */
	assert_memory_equal(mac, bcast, 6);
	shr_l2_group_mac(0xffffffffu, mac);
	assert_memory_equal(mac, bcast, 6);
}

/*
 * The source MAC check of the box's data path: refused exactly when the MAC is a group's
 * (I/G bit of its first byte) or all zeros, whatever the other bytes of the header hold.
 */
static void
test_src_ok(void **state)
{
	uint8_t b[64];
	uint32_t first, pos, v;
	int zero, i;

	(void)state;
	for (first = 0; first < 256; first++) {
		for (pos = 7; pos <= 12; pos++) {	/* 12: the other five bytes all zero */
			for (v = 0; v < 3; v++) {
				frame(b, NULL, 0, ETYPE_IPV4);
				/* the destination's last two bytes, read with the source */
				memset(b + 4, v == 2 ? 0xff : 0, 2);
				memset(b + 7, 0, 5);
				b[6] = (uint8_t)first;
				if (pos < 12)
					b[pos] = v == 0 ? 0x01 : 0x80;
				zero = 1;
				for (i = 6; i < 12; i++)
					zero &= b[i] == 0;
				assert_int_equal(shr_l2_src_ok(b) != 0, (first & 1) == 0 && !zero);
			}
		}
	}
	/* the destination's bytes are not the source's */
	frame(b, NULL, 0, ETYPE_IPV4);
	memset(b + 6, 0, 6);
	memset(b, 0xff, 6);
	assert_false(shr_l2_src_ok(b));
	b[11] = 2;
	assert_true(shr_l2_src_ok(b));
	b[6] = 0x01;	/* 01:00:00:00:00:02: a group's */
	assert_false(shr_l2_src_ok(b));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_untagged),
		cmocka_unit_test(test_our_vlan),
		cmocka_unit_test(test_other_vlan),
		cmocka_unit_test(test_qinq),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_priority_bits),
		cmocka_unit_test(test_priority_tagged),
		cmocka_unit_test(test_type_write),
		cmocka_unit_test(test_group_mac),
		cmocka_unit_test(test_src_ok),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
