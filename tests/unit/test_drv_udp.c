/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The kernel UDP driver over loopback: two devices send to each other; what one
 * tx_bursts the other rx_bursts, with the header and payload pieces joined and the sender's
 * address and port. A burst's runs of datagrams of one size to one destination go out as UDP
 * GSO messages, which the kernel cuts back into those datagrams (test_gso_*). (A device in a
 * group: test_drv_udp_group.c.)
 *
 * path_payload() is read on a loopback of MTU 1500, in a network namespace of a child process's
 * own (a user namespace's when not root): the host's lo is not touched (test_path_payload,
 * skipped where no namespace can be made).
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
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "drv_udp_test.h"

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

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A datagram's rx_ns is when it reached the host, on CLOCK_MONOTONIC: after it was sent, no
 * later than when the socket had it (the wait said so), not when rx_burst() read it (10 ms
 * later). The kernel stamps on CLOCK_REALTIME, which NTP may slew against CLOCK_MONOTONIC
 * (by at most 0.05%, 5 us over these 10 ms): 1 ms of margin (SLEW_NS).
 */
#define SLEW_NS 1000000ull

static void
test_rx_timestamp(void **state)
{
	struct pair *p = *state;
	uint32_t v = 0x9abcdef0;
	struct shr_drv_pkt pkt = {
		.dst_ip = LOOPBACK, .dst_port = p->a->local_port,
		.payload = &v, .payload_len = sizeof(v),
	};
	struct timespec pause = { .tv_nsec = 10000000 };
	struct shr_drv_rx rx;
	uint64_t t0, t1, t2;

	t0 = mono_ns();
	assert_int_equal(shr_drv_tx_burst(p->b, &pkt, 1), 1);
	assert_int_equal(shr_drv_wait(p->a, WAIT_FOREVER), 1);
	t1 = mono_ns();
	nanosleep(&pause, NULL);
	t2 = mono_ns();
	assert_int_equal(rx_n(p->a, &rx, 1), 1);
	assert_memory_equal(rx.data, &v, sizeof(v));
	assert_true(rx.rx_ns + SLEW_NS >= t0);
	assert_true(rx.rx_ns <= t1 + SLEW_NS);
	assert_true(rx.rx_ns + 5 * SLEW_NS < t2);
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

/*
 * A run the kernel refuses for the datagrams' own fault (port 0: EINVAL, as for GSO it cannot
 * do): sent one at a time, each dropped, and GSO stays on; the next run goes as one GSO
 * message (it was off for good after any such run).
 */
static void
test_gso_bad_run_keeps_gso(void **state)
{
	struct pair *p = *state;
	enum { N = 5, HL = 64, PL = 500 };
	static uint8_t hdr[N][HL], payload[N][PL];
	static const unsigned int to_b[] = { 2, 3, 4 };
	struct shr_drv_pkt pkts[N];
	struct shr_drv_stats before = p->a->stats;
	unsigned int i;

	for (i = 0; i < N; i++)
		gso_pkt(&pkts[i], hdr[i], HL, payload[i], PL, i < 2 ? 0 : p->b->local_port, i);
	assert_int_equal(shr_drv_tx_burst(p->a, pkts, 2), 2);
	assert_int_equal(p->a->stats.tx_drops - before.tx_drops, 2);
	assert_int_equal(p->a->stats.tx_gso_off, before.tx_gso_off);
	assert_int_equal(shr_drv_tx_burst(p->a, pkts + 2, 3), 3);
	gso_expect(p->b, p->a, pkts, to_b, 3);
	assert_int_equal(p->a->stats.tx_pkts - before.tx_pkts, 3);
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

/* What a child in a network namespace of its own saw of the path (test_path_payload). */
struct path_seen {
	int skip;		/* no namespace could be made: errno */
	int err;		/* a setup step failed: errno, and which in step */
	const char *step;
	int payload;		/* path_payload() to 127.0.0.1 */
	uint32_t got;		/* the bytes b received of a path_payload-byte datagram */
	uint64_t drops_fit;	/* a's tx_drops after sending it */
	uint64_t drops_over;	/* and after one byte more */
};

/* Write text to a /proc file: 0 or -errno. */
static int
proc_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* A network namespace of this process's own: as root, or as a user in a user namespace. */
static int
own_netns(void)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	int rc;

	if (unshare(CLONE_NEWNET) == 0)
		return 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
		return -errno;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)uid);
	rc = proc_write("/proc/self/uid_map", map);
	if (rc == 0)
		rc = proc_write("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)gid);
	if (rc == 0)
		rc = proc_write("/proc/self/gid_map", map);
	return rc;
}

/* Loopback up with an MTU of mtu (in the namespace's own lo). */
static int
lo_up(int mtu)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (s < 0)
		return -errno;
	ifr.ifr_mtu = mtu;
	if (ioctl(s, SIOCSIFMTU, &ifr) < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		rc = -errno;
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
			rc = -errno;
	}
	close(s);
	return rc;
}

/* The child of test_path_payload: in its own namespace, lo's MTU 1500. */
static void
path_child(struct path_seen *ps)
{
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };
	static uint8_t buf[9000];
	struct shr_drv_pkt pkt = { .dst_ip = LOOPBACK, .payload = buf };
	struct shr_drv *a, *b;
	struct shr_drv_rx rx;
	int rc;

	rc = own_netns();
	if (rc != 0) {
		ps->skip = -rc;
		return;
	}
	rc = lo_up(1500);
	if (rc != 0) {
		ps->err = -rc;
		ps->step = "lo up, MTU 1500";
		return;
	}
	a = shr_drv_udp_create(&conf);
	b = shr_drv_udp_create(&conf);
	if (a == NULL || b == NULL) {
		ps->err = errno;
		ps->step = "create";
		return;
	}
	ps->payload = shr_drv_path_payload(a, LOOPBACK);
	if (ps->payload > 0 && (size_t)ps->payload < sizeof(buf)) {
		pkt.dst_port = b->local_port;
		pkt.payload_len = (uint32_t)ps->payload;
		memset(buf, 0x5a, sizeof(buf));
		if (shr_drv_tx_burst(a, &pkt, 1) == 1 && a->stats.tx_drops == 0 &&
		    rx_n(b, &rx, 1) == 1)
			ps->got = rx.len;
		ps->drops_fit = a->stats.tx_drops;
		pkt.payload_len++;
		(void)shr_drv_tx_burst(a, &pkt, 1);
		ps->drops_over = a->stats.tx_drops;
	}
	shr_drv_close(a);
	shr_drv_close(b);
}

/*
 * path_payload() is the largest UDP payload that reaches an address whole (the route's MTU
 * less the IPv4 and UDP headers: chunk auto sizes DATA by it): on a loopback of MTU 1500 (in
 * a network namespace of a child's own, so that the host's lo is untouched) it is 1472; a
 * datagram of that many bytes is sent and received whole, one of a byte more is refused (the
 * driver never fragments) and counted in tx_drops.
 */
static void
test_path_payload(void **state)
{
	struct path_seen *ps;
	int status;
	pid_t pid;

	(void)state;
	ps = mmap(NULL, sizeof(*ps), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(ps != MAP_FAILED);
	memset(ps, 0, sizeof(*ps));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		path_child(ps);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (ps->skip != 0) {
		print_message("no network namespace of the test's own (%s): skipped\n",
			      strerror(ps->skip));
		munmap(ps, sizeof(*ps));
		skip();
	}
	if (ps->err != 0)
		fail_msg("%s: %s", ps->step, strerror(ps->err));
	assert_int_equal(ps->payload, 1500 - 20 - 8);
	assert_int_equal(ps->got, 1472);
	assert_int_equal(ps->drops_fit, 0);
	assert_int_equal(ps->drops_over, 1);
	munmap(ps, sizeof(*ps));
}

/*
 * A datagram longer than the device's max_payload is dropped (counted in rx_drops), not handed
 * out cut to the buffer's size; the next one, within it, comes out whole.
 */
static void
test_rx_too_long_dropped(void **state)
{
	struct pair *p = *state;
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK, .max_payload = 64 };
	struct shr_drv *r = shr_drv_udp_create(&conf);
	uint8_t big[100], small[32];
	struct shr_drv_pkt pkts[2] = {
		{ .dst_ip = LOOPBACK, .payload = big, .payload_len = sizeof(big) },
		{ .dst_ip = LOOPBACK, .payload = small, .payload_len = sizeof(small) },
	};
	struct shr_drv_rx rx;

	assert_non_null(r);
	memset(big, 0xb1, sizeof(big));
	memset(small, 0x5e, sizeof(small));
	pkts[0].dst_port = r->local_port;
	pkts[1].dst_port = r->local_port;
	assert_int_equal(shr_drv_tx_burst(p->a, pkts, 2), 2);
	assert_int_equal(rx_n(r, &rx, 1), 1);
	assert_int_equal(rx.len, sizeof(small));
	assert_memory_equal(rx.data, small, sizeof(small));
	assert_int_equal(r->stats.rx_drops, 1);
	assert_int_equal(r->stats.rx_pkts, 1);
	assert_int_equal(r->stats.rx_bytes, sizeof(small));
	shr_drv_close(r);
}

/*
 * The socket buffers are the size asked for (sock_buf): SO_RCVBUF and SO_SNDBUF read back
 * sock_buf, the kernel having doubled the half it was given. 64 KiB, within rmem_max and
 * wmem_max (skipped where they are lower and SO_*BUFFORCE is not allowed).
 */
static void
test_sock_buf(void **state)
{
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK, .sock_buf = 65536 };
	struct shr_drv *d = shr_drv_udp_create(&conf);
	int fd, v, opts[2] = { SO_RCVBUF, SO_SNDBUF };
	unsigned int i;

	(void)state;
	assert_non_null(d);
	fd = shr_drv_fd(d);
	assert_true(fd >= 0);
	for (i = 0; i < 2; i++) {
		socklen_t len = sizeof(v);

		assert_int_equal(getsockopt(fd, SOL_SOCKET, opts[i], &v, &len), 0);
		if (v < 65536) {
			print_message("socket buffer %d, not 65536 (rmem_max/wmem_max lower): "
				      "skipped\n", v);
			shr_drv_close(d);
			skip();
		}
		assert_int_equal(v, 65536);
	}
	shr_drv_close(d);
}

/*
 * The path's payload is never more than the device's max_payload (its receive buffers): on
 * the host's loopback (MTU 65536) a device of max_payload 1000 gets 1000, one of the default
 * 9000, 9000 (skipped if the host's lo has an MTU too small to tell).
 */
static void
test_path_payload_capped(void **state)
{
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK, .max_payload = 1000 };
	struct shr_drv_udp_conf defc = { .local_ip = LOOPBACK };
	struct shr_drv *d, *e;
	FILE *f = fopen("/sys/class/net/lo/mtu", "r");
	int mtu = 0;

	(void)state;
	if (f == NULL || fscanf(f, "%d", &mtu) != 1 || mtu - 28 <= 9000) {
		if (f != NULL)
			fclose(f);
		print_message("lo MTU %d: not above 9028, skipped\n", mtu);
		skip();
	}
	fclose(f);
	d = shr_drv_udp_create(&conf);
	e = shr_drv_udp_create(&defc);
	assert_non_null(d);
	assert_non_null(e);
	assert_int_equal(shr_drv_path_payload(d, LOOPBACK), 1000);
	assert_int_equal(shr_drv_path_payload(e, LOOPBACK), 9000);
	shr_drv_close(d);
	shr_drv_close(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_binds),
		cmocka_unit_test(test_roundtrip_gather),
		cmocka_unit_test(test_empty_rx_and_wait_timeout),
		cmocka_unit_test(test_wait_wakes_on_data),
		cmocka_unit_test(test_rx_timestamp),
		cmocka_unit_test(test_large_burst),
		cmocka_unit_test(test_gso_runs),
		cmocka_unit_test(test_gso_limits),
		cmocka_unit_test(test_gso_error),
		cmocka_unit_test(test_gso_bad_run_keeps_gso),
		cmocka_unit_test(test_bind_conflict),
		cmocka_unit_test(test_path_payload),
		cmocka_unit_test(test_path_payload_capped),
		cmocka_unit_test(test_rx_too_long_dropped),
		cmocka_unit_test(test_sock_buf),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
