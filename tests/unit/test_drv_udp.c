/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The kernel UDP driver over loopback: two devices send to each other; what one
 * tx_bursts the other rx_bursts, with the header and payload pieces joined and the sender's
 * address and port. A burst's runs of datagrams of one size to one destination go out as UDP
 * GSO messages, which the kernel cuts back into those datagrams (test_gso_*).
 *
 * No timing: every wait is for a state that comes by construction (datagrams sent before it
 * over loopback), with no bound of its own (WAIT_FOREVER); a driver that never gets there
 * hangs the test, and meson's test timeout fails it. The one timed-out wait is on a device
 * nothing was ever sent to.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <shr_drv_udp.h>

#define LOOPBACK 0x7f000001u
#define WAIT_FOREVER UINT64_MAX	/* shr_drv_wait() until a datagram is ready */

struct pair {
	struct shr_drv *a;
	struct shr_drv *b;
};

static int
setup(void **state)
{
	static struct pair p;
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };

	p.a = shr_drv_udp_create(&conf);
	p.b = shr_drv_udp_create(&conf);
	if (p.a == NULL || p.b == NULL)
		return -1;
	*state = &p;
	return 0;
}

static int
teardown(void **state)
{
	struct pair *p = *state;

	shr_drv_close(p->a);
	shr_drv_close(p->b);
	return 0;
}

/* Receive exactly n datagrams, sent before: wait until they are all in. */
static int
rx_n(struct shr_drv *dev, struct shr_drv_rx *out, unsigned int n)
{
	unsigned int got = 0;

	while (got < n) {
		int rc = shr_drv_rx_burst(dev, out + got, n - got);

		if (rc < 0)
			return rc;
		got += rc;
		if (got < n && (rc = shr_drv_wait(dev, WAIT_FOREVER)) < 0)
			return rc;
	}
	return (int)got;
}

static void
test_create_binds(void **state)
{
	struct pair *p = *state;

	assert_string_equal(p->a->ops->name, "udp");
	assert_int_equal(p->a->local_ip, LOOPBACK);
	assert_int_not_equal(p->a->local_port, 0);
	assert_int_not_equal(p->a->local_port, p->b->local_port);
}

static void
test_roundtrip_gather(void **state)
{
	struct pair *p = *state;
	uint8_t hdr[4][48], payload[4][1000];
	struct shr_drv_pkt pkts[4];
	struct shr_drv_rx rx[4];
	unsigned int i;

	/* Four datagrams in one tx_burst, received in one batch. */
	for (i = 0; i < 4; i++) {
		memset(hdr[i], 0xa0 + i, sizeof(hdr[i]));
		memset(payload[i], i, sizeof(payload[i]));
		payload[i][0] = (uint8_t)(100 + i);
		pkts[i] = (struct shr_drv_pkt){
			.dst_ip = LOOPBACK, .dst_port = p->b->local_port,
			.hdr = hdr[i], .hdr_len = sizeof(hdr[i]),
			.payload = payload[i], .payload_len = 100 * (i + 1),
		};
	}
	pkts[3].hdr_len = 0;	/* payload only */
	assert_int_equal(shr_drv_tx_burst(p->a, pkts, 4), 4);
	assert_int_equal(rx_n(p->b, rx, 4), 4);
	for (i = 0; i < 4; i++) {
		size_t hl = pkts[i].hdr_len;

		assert_int_equal(rx[i].src_ip, LOOPBACK);
		assert_int_equal(rx[i].src_port, p->a->local_port);
		assert_int_equal(rx[i].len, hl + pkts[i].payload_len);
		assert_memory_equal(rx[i].data, hdr[i], hl);
		assert_memory_equal((const uint8_t *)rx[i].data + hl, payload[i],
				    pkts[i].payload_len);
	}
	assert_true(p->a->stats.tx_pkts >= 4);
	assert_true(p->b->stats.rx_pkts >= 4);
}

static void
test_empty_rx_and_wait_timeout(void **state)
{
	struct pair *p = *state;
	struct shr_drv_rx rx[2];

	/* nothing was ever sent to a: empty, and the wait can only time out */
	assert_int_equal(shr_drv_rx_burst(p->a, rx, 2), 0);
	assert_int_equal(shr_drv_wait(p->a, 0), 0);
	assert_int_equal(shr_drv_wait(p->a, 1000), 0);
}

static void
test_wait_wakes_on_data(void **state)
{
	struct pair *p = *state;
	uint32_t v = 0x12345678;
	struct shr_drv_pkt pkt = {
		.dst_ip = LOOPBACK, .dst_port = p->a->local_port,
		.payload = &v, .payload_len = sizeof(v),
	};
	struct shr_drv_rx rx;

	/* the datagram is on its way: the wait returns when it is in, never on a timeout */
	assert_int_equal(shr_drv_tx_burst(p->b, &pkt, 1), 1);
	assert_int_equal(shr_drv_wait(p->a, WAIT_FOREVER), 1);
	assert_int_equal(rx_n(p->a, &rx, 1), 1);
	assert_int_equal(rx.len, sizeof(v));
	assert_memory_equal(rx.data, &v, sizeof(v));
	assert_int_equal(rx.src_port, p->b->local_port);
}

static void
test_large_burst(void **state)
{
	struct pair *p = *state;
	enum { N = SHR_DRV_BURST_MAX + 10 };
	static uint32_t vals[N];
	struct shr_drv_pkt pkts[N];
	struct shr_drv_rx rx[SHR_DRV_BURST_MAX];
	unsigned int i, got = 0, seen = 0;
	int sent;

	for (i = 0; i < N; i++) {
		vals[i] = i;
		pkts[i] = (struct shr_drv_pkt){
			.dst_ip = LOOPBACK, .dst_port = p->b->local_port,
			.payload = &vals[i], .payload_len = sizeof(vals[i]),
		};
	}
	sent = shr_drv_tx_burst(p->a, pkts, N);
	assert_int_equal(sent, N);
	/* Loopback keeps order; every value comes back once (wait until all are in). */
	while (got < N) {
		int rc = shr_drv_rx_burst(p->b, rx, SHR_DRV_BURST_MAX);
		int k;

		assert_true(rc >= 0);
		for (k = 0; k < rc; k++) {
			uint32_t x;

			assert_int_equal(rx[k].len, sizeof(x));
			memcpy(&x, rx[k].data, sizeof(x));
			assert_int_equal(x, seen);
			seen++;
		}
		got += rc;
		if (got < N)
			assert_true(shr_drv_wait(p->b, WAIT_FOREVER) >= 0);
	}
	assert_int_equal(got, N);
}

/* Fill pkts[i] (header and payload of their own bytes, i in the first payload byte). */
static void
gso_pkt(struct shr_drv_pkt *pkt, uint8_t *hdr, uint16_t hdr_len, uint8_t *payload,
	uint16_t payload_len, uint16_t dst_port, unsigned int i)
{
	memset(hdr, 0x40 + (i & 0x3f), hdr_len);
	memset(payload, 0x80 + (i & 0x7f), payload_len);
	if (payload_len > 0)
		payload[0] = (uint8_t)i;
	*pkt = (struct shr_drv_pkt){
		.dst_ip = LOOPBACK, .dst_port = dst_port,
		.hdr = hdr, .hdr_len = hdr_len, .payload = payload, .payload_len = payload_len,
	};
}

/* Receive the datagrams of pkts[] sent to dev (by index, in order) and check each one. */
static void
gso_expect(struct shr_drv *dev, const struct shr_drv *from, const struct shr_drv_pkt *pkts,
	   const unsigned int *idx, unsigned int n)
{
	struct shr_drv_rx rx[SHR_DRV_BURST_MAX];
	unsigned int k;

	assert_true(n <= SHR_DRV_BURST_MAX);
	assert_int_equal(rx_n(dev, rx, n), n);
	for (k = 0; k < n; k++) {
		const struct shr_drv_pkt *q = &pkts[idx[k]];

		assert_int_equal(rx[k].src_port, from->local_port);
		assert_int_equal(rx[k].len, (size_t)q->hdr_len + q->payload_len);
		assert_memory_equal(rx[k].data, q->hdr, q->hdr_len);
		assert_memory_equal((const uint8_t *)rx[k].data + q->hdr_len, q->payload,
				    q->payload_len);
	}
}

/*
 * One burst: 5 datagrams to b (a run), 3 of the same size to c (another destination: another
 * run), a shorter one to b (on its own), 2 header-only ones to b (never in a run), 4 to b.
 * Every datagram comes out whole, in order, at its destination; with GSO the runs were 3
 * messages of 12 datagrams.
 */
static void
test_gso_runs(void **state)
{
	struct pair *p = *state;
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };
	enum { N = 15, HL = 64, PL = 1000 };
	static uint8_t hdr[N][HL], payload[N][PL];
	static const unsigned int to_b[] = { 0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 14 };
	static const unsigned int to_c[] = { 5, 6, 7 };
	struct shr_drv_pkt pkts[N];
	struct shr_drv_stats before = p->a->stats;
	struct shr_drv *c = shr_drv_udp_create(&conf);
	unsigned int i;

	assert_non_null(c);
	for (i = 0; i < N; i++) {
		uint16_t port = i >= 5 && i < 8 ? c->local_port : p->b->local_port;

		gso_pkt(&pkts[i], hdr[i], HL, payload[i], i == 8 ? PL - 1 : i == 9 || i == 10 ?
			0 : PL, port, i);
	}
	assert_int_equal(shr_drv_tx_burst(p->a, pkts, N), N);
	gso_expect(p->b, p->a, pkts, to_b, 12);
	gso_expect(c, p->a, pkts, to_c, 3);
	assert_int_equal(p->a->stats.tx_pkts - before.tx_pkts, N);
	assert_int_equal(p->a->stats.tx_drops, before.tx_drops);
	if (p->a->stats.tx_gso_off == 0) {
		assert_int_equal(p->a->stats.tx_gso_msgs - before.tx_gso_msgs, 3);
		assert_int_equal(p->a->stats.tx_gso_pkts - before.tx_gso_pkts, 12);
	} else {
		/* this kernel refused UDP_SEGMENT: the burst went datagram by datagram */
		assert_int_equal(p->a->stats.tx_gso_msgs, before.tx_gso_msgs);
	}
	shr_drv_close(c);
}

/*
 * Runs longer than one message holds: 20 datagrams of 8 KiB, 7 to a message (65,507 bytes
 * at most), then 70 small ones, which tx_burst() takes SHR_DRV_BURST_MAX at a time (44 in the
 * first 64, 26 after): in order and whole. With GSO off (no_gso), the same burst goes
 * datagram by datagram.
 */
static void
test_gso_limits(void **state)
{
	struct pair *p = *state;
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK, .no_gso = 1 };
	enum { NB = 20, NS = 70, HL = 64, PLB = 8192, PLS = 16 };
	static uint8_t hdr[NB + NS][HL], big[NB][PLB], small[NS][PLS];
	static unsigned int idx_big[NB], idx_small[NS];
	struct shr_drv_pkt pkts[NB + NS];
	struct shr_drv *plain = shr_drv_udp_create(&conf);
	struct shr_drv_stats before = p->a->stats;
	unsigned int i, pass;

	assert_non_null(plain);
	for (i = 0; i < NB; i++) {
		gso_pkt(&pkts[i], hdr[i], HL, big[i], PLB, p->b->local_port, i);
		idx_big[i] = i;
	}
	for (i = 0; i < NS; i++) {
		gso_pkt(&pkts[NB + i], hdr[NB + i], HL, small[i], PLS, p->b->local_port, NB + i);
		idx_small[i] = NB + i;
	}
	for (pass = 0; pass < 2; pass++) {
		struct shr_drv *tx = pass == 0 ? p->a : plain;

		assert_int_equal(shr_drv_tx_burst(tx, pkts, NB + NS), NB + NS);
		gso_expect(p->b, tx, pkts, idx_big, NB);
		gso_expect(p->b, tx, pkts, idx_small, 44);
		gso_expect(p->b, tx, pkts, idx_small + 44, NS - 44);
	}
	if (before.tx_gso_off == 0) {
		/* the kernel took GSO messages in test_gso_runs: it takes these too */
		assert_int_equal(p->a->stats.tx_gso_off, 0);
		/* 7 + 7 + 6 big ones, 44 + 26 small ones */
		assert_int_equal(p->a->stats.tx_gso_msgs - before.tx_gso_msgs, 5);
		assert_int_equal(p->a->stats.tx_gso_pkts - before.tx_gso_pkts, NB + NS);
	}
	assert_int_equal(plain->stats.tx_gso_msgs, 0);
	assert_int_equal(plain->stats.tx_pkts, NB + NS);
	shr_drv_close(plain);
}

/*
 * A message that fails on its own (a run to the broadcast address, on a socket without
 * SO_BROADCAST: EACCES) drops its datagrams (tx_drops) and the burst goes on; GSO stays on:
 * only a kernel that refuses GSO itself turns it off.
 */
static void
test_gso_error(void **state)
{
	struct pair *p = *state;
	enum { N = 5, HL = 64, PL = 500 };
	static uint8_t hdr[N][HL], payload[N][PL];
	static const unsigned int to_b[] = { 3, 4 };
	struct shr_drv_pkt pkts[N];
	struct shr_drv_stats before = p->a->stats;
	unsigned int i;

	for (i = 0; i < N; i++)
		gso_pkt(&pkts[i], hdr[i], HL, payload[i], PL, p->b->local_port, i);
	for (i = 0; i < 3; i++)
		pkts[i].dst_ip = 0xffffffffu;
	assert_int_equal(shr_drv_tx_burst(p->a, pkts, N), N);
	gso_expect(p->b, p->a, pkts, to_b, 2);
	assert_int_equal(p->a->stats.tx_drops - before.tx_drops, 3);
	assert_int_equal(p->a->stats.tx_pkts - before.tx_pkts, 2);
	assert_int_equal(p->a->stats.tx_gso_off, before.tx_gso_off);
	if (before.tx_gso_off == 0)
		assert_int_equal(p->a->stats.tx_gso_msgs - before.tx_gso_msgs, 1);
}

static void
test_bind_conflict(void **state)
{
	struct pair *p = *state;
	struct shr_drv_udp_conf conf = {
		.local_ip = LOOPBACK, .local_port = p->a->local_port,
	};

	errno = 0;
	assert_null(shr_drv_udp_create(&conf));
	assert_int_equal(errno, EADDRINUSE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_binds),
		cmocka_unit_test(test_roundtrip_gather),
		cmocka_unit_test(test_empty_rx_and_wait_timeout),
		cmocka_unit_test(test_wait_wakes_on_data),
		cmocka_unit_test(test_large_burst),
		cmocka_unit_test(test_gso_runs),
		cmocka_unit_test(test_gso_limits),
		cmocka_unit_test(test_gso_error),
		cmocka_unit_test(test_bind_conflict),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
