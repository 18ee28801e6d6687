/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * drivers/shr_ip4.h: the box's IPv4 header check (app/agg/agg_dp.c, rx_one()). Its fast path
 * (a 20-byte header) and its general one must give the verdict the data path gave before the
 * fast path: the reference below is that code, with RFC 1071's sum taken 16 bits at a time.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <shr_ip4.h>

#define HDR_MAX 60

/* The one's complement sum of n bytes as big-endian 16-bit words, folded (RFC 1071). */
static uint32_t
ref_sum(const uint8_t *p, uint32_t n)
{
	uint32_t s = 0, i;

	for (i = 0; i < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffffu) + (s >> 16);
	return s;
}

/* rx_one()'s checks as they were: version, ihl, total length, then the checksum. */
static uint32_t
ref_check(const uint8_t *p, uint32_t avail, int csum_good, uint32_t *tot)
{
	uint32_t ihl = (uint32_t)(p[0] & 0x0f) * 4;
	uint32_t t = (uint32_t)p[2] << 8 | p[3];

	if ((p[0] >> 4) != 4 || ihl < SHR_IP4_HDR_LEN)
		return 0;
	if (t < ihl || t > avail || (!csum_good && ref_sum(p, ihl) != 0xffff))
		return 0;
	*tot = t;
	return ihl;
}

/* Both verdicts, compared; returns the header length shr_ip4_check() gave. */
static uint32_t
check_both(const uint8_t *p, uint32_t avail, int csum_good)
{
	uint32_t tot = 0xdeadbeef, rtot = 0xdeadbeef;
	uint32_t got = shr_ip4_check(p, avail, csum_good, &tot);
	uint32_t want = ref_check(p, avail, csum_good, &rtot);

	assert_int_equal(got, want);
	if (got != 0)
		assert_int_equal(tot, rtot);
	return got;
}

/* Write the checksum of the first ihl bytes (ihl 20..60). */
static void
set_cksum(uint8_t *p, uint32_t ihl)
{
	uint32_t c;

	p[10] = 0;
	p[11] = 0;
	c = ~ref_sum(p, ihl) & 0xffffu;
	p[10] = (uint8_t)(c >> 8);
	p[11] = (uint8_t)c;
}

static void
set_tot(uint8_t *p, uint32_t tot)
{
	p[2] = (uint8_t)(tot >> 8);
	p[3] = (uint8_t)tot;
}

/* A valid header of ihl bytes (options of ihl - 20 bytes), total length tot. */
static void
hdr(uint8_t *p, uint32_t ihl, uint32_t tot)
{
	uint32_t i;

	memset(p, 0, HDR_MAX);
	p[0] = (uint8_t)(0x40 | ihl / 4);
	set_tot(p, tot);
	p[4] = 0x12;	/* id */
	p[5] = 0x34;
	p[6] = 0x40;	/* DF */
	p[8] = 64;	/* TTL */
	p[9] = 17;	/* UDP */
	p[12] = 198;	/* 198.18.0.1 -> 198.18.0.2 */
	p[13] = 18;
	p[15] = 1;
	p[16] = 198;
	p[17] = 18;
	p[19] = 2;
	for (i = SHR_IP4_HDR_LEN; i < ihl; i++)
		p[i] = (uint8_t)(0xa5 ^ i);
	set_cksum(p, ihl);
}

static void
test_valid(void **state)
{
	uint8_t p[HDR_MAX];
	uint32_t ihl;

	(void)state;
	hdr(p, 20, 1120);
	assert_int_equal(check_both(p, 1200, 0), 20);
	assert_int_equal(check_both(p, 1120, 0), 20);	/* exactly the frame */
	assert_int_equal(check_both(p, 1200, 1), 20);
	for (ihl = 24; ihl <= HDR_MAX; ihl += 4) {
		hdr(p, ihl, 100);
		assert_int_equal(check_both(p, 100, 0), ihl);
	}
	/* the highest sums: every byte the fold can carry from */
	memset(p, 0xff, HDR_MAX);
	p[0] = 0x4f;
	set_tot(p, 0xffff);
	set_cksum(p, 60);
	assert_int_equal(check_both(p, 0xffff, 0), 60);
	p[0] = 0x45;
	set_cksum(p, 20);
	assert_int_equal(check_both(p, 0xffff, 0), 20);
}

static void
test_bad_cksum(void **state)
{
	uint8_t p[HDR_MAX];
	uint32_t ihl, i, bit;

	(void)state;
	for (ihl = 20; ihl <= HDR_MAX; ihl += 4) {
		/* any one bit flipped in the header (but in the version and length fields,
		 * which fail on their own) */
		for (i = 4; i < ihl; i++) {
			for (bit = 0; bit < 8; bit++) {
				hdr(p, ihl, 200);
				p[i] ^= (uint8_t)(1u << bit);
				assert_int_equal(check_both(p, 200, 0), 0);
				/* the device checked it: not summed again */
				assert_int_equal(check_both(p, 200, 1), ihl);
			}
		}
	}
}

static void
test_version_ihl(void **state)
{
	uint8_t p[HDR_MAX];
	uint32_t v, ihl, tot;

	(void)state;
	for (v = 0; v < 256; v++) {
		ihl = (v & 0x0f) * 4;
		hdr(p, 20, 200);
		p[0] = (uint8_t)v;
		/* a right checksum for what the header length says, where it can be one */
		if (ihl >= SHR_IP4_HDR_LEN)
			set_cksum(p, ihl);
		else
			set_cksum(p, 20);
		check_both(p, 200, 0);
		check_both(p, 200, 1);
		if ((v >> 4) != 4 || ihl < SHR_IP4_HDR_LEN)
			assert_int_equal(shr_ip4_check(p, 200, 1, &tot), 0);
	}
	/* ihl < 5 with a checksum over 20 bytes that would be right */
	for (v = 0x40; v < 0x45; v++) {
		hdr(p, 20, 200);
		p[0] = (uint8_t)v;
		set_cksum(p, 20);
		assert_int_equal(check_both(p, 200, 0), 0);
	}
}

static void
test_total_length(void **state)
{
	static const uint32_t tots[] = { 0, 1, 19, 20, 23, 24, 59, 60, 61, 199, 200, 201, 0xffff };
	uint8_t p[HDR_MAX];
	uint32_t ihl, i;

	(void)state;
	for (ihl = 20; ihl <= HDR_MAX; ihl += 4) {
		for (i = 0; i < sizeof(tots) / sizeof(tots[0]); i++) {
			hdr(p, ihl, tots[i]);
			check_both(p, 200, 0);
			check_both(p, 200, 1);
			check_both(p, ihl, 0);	/* a frame that ends with the header */
			if (tots[i] < ihl || tots[i] > 200)
				assert_int_equal(check_both(p, 200, 1), 0);
			else
				assert_int_equal(check_both(p, 200, 0), ihl);
		}
	}
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

/* Random headers: mostly 0x45 or version 4, right or wrong checksums and lengths. */
static void
test_random(void **state)
{
	uint8_t p[HDR_MAX];
	uint32_t n, i, r, ihl, avail, ok = 0;

	(void)state;
	for (n = 0; n < 400000; n++) {
		for (i = 0; i < HDR_MAX; i++)
			p[i] = (uint8_t)rnd();
		r = rnd();
		if (r % 4 < 2)
			p[0] = SHR_IP4_VHL_DEF;
		else if (r % 4 == 2)
			p[0] = (uint8_t)(0x40 | (p[0] & 0x0f));
		ihl = (uint32_t)(p[0] & 0x0f) * 4;
		avail = SHR_IP4_HDR_LEN + rnd() % 100;
		if (avail > HDR_MAX && (r >> 8) % 2 == 0)
			avail = HDR_MAX;	/* the header is all the frame holds */
		if ((r >> 4) % 4 != 0)
			set_tot(p, ihl + rnd() % (avail + 4 - (ihl < avail ? ihl : avail)));
		if ((r >> 6) % 4 != 0 && ihl >= SHR_IP4_HDR_LEN)
			set_cksum(p, ihl);
		ok += check_both(p, avail, (r >> 10) % 8 == 0) != 0;
	}
	assert_true(ok > 10000);	/* both verdicts well represented */
	assert_true(ok < 390000);
}

/* The fold against the residue modulo 0xffff it computes (0 only for a zero sum). */
static void
test_fold(void **state)
{
	static const uint64_t edges[] = {
		0, 1, 0xfffe, 0xffff, 0x10000, 0x1fffe, 0x1ffff, 0xfffeffff, 0xffff0000,
		0xffffffff, 0x100000000ull, 0x100000001ull, 0x1fffffffeull, 0x1ffffffffull,
		5 * 0xffffffffull, 15 * 0xffffffffull, 15 * 0xffffffffull - 1,
	};
	uint64_t s;
	uint32_t i;

	(void)state;
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		s = edges[i];
		assert_int_equal(shr_ip4_fold(s), s == 0 ? 0 : (s - 1) % 0xffff + 1);
	}
	for (i = 0; i < 1000000; i++) {
		s = ((uint64_t)rnd() << 32 | rnd()) % (15 * 0xffffffffull + 1);
		assert_int_equal(shr_ip4_fold(s), s == 0 ? 0 : (s - 1) % 0xffff + 1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_bad_cksum),
		cmocka_unit_test(test_version_ihl),
		cmocka_unit_test(test_total_length),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_fold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
