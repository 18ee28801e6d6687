/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * A device that joined a group (group_join()) receives, besides its own unicast datagrams, those
 * sent to the group: a multicast group joined on 127.0.0.1 (loopback has no MULTICAST flag, but
 * the kernel takes the membership and loops the group's datagrams back to its members), or the
 * loopback network's broadcast address. The test sends to the group from a plain socket of its
 * own that only loops back (IP_MULTICAST_IF 127.0.0.1, TTL 0): nothing leaves the host. The
 * group port is the port of a device of the test, bound on 127.0.0.1: no other process (another
 * run of this test) can hold it, so none takes part in the test's groups.
 *
 * No timing: every wait is for a state that comes by construction (datagrams sent before it
 * over loopback), with no bound of its own (WAIT_FOREVER); a driver that never gets there
 * hangs the test, and meson's test timeout fails it. (Unicast, GSO, the path's payload:
 * test_drv_udp.c.)
 */

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "drv_udp_test.h"

#define GROUP 0xefff4d01u	/* 239.255.77.1, administratively scoped multicast */
#define LO_BCAST 0x7fffffffu	/* 127.255.255.255, the broadcast of 127.0.0.0/8 on lo */

/*
 * A plain socket on 127.0.0.1 that sends to groups over loopback only (IP_MULTICAST_IF
 * 127.0.0.1, IP_MULTICAST_LOOP, TTL 0: the host's members get a copy, no wire does), and to
 * broadcast addresses (SO_BROADCAST). Its port in *port.
 */
static int
group_sender(uint16_t *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(LOOPBACK) };
	struct in_addr ifa = { .s_addr = htonl(LOOPBACK) };
	socklen_t len = sizeof(sin);
	unsigned char loop = 1, ttl = 0;
	int one = 1;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ifa, sizeof(ifa)), 0);
	assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop)), 0);
	assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl)), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)), 0);
	return fd;
}

static void
group_send(int fd, uint32_t ip, uint16_t port, const void *data, size_t len)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(ip),
	};

	assert_int_equal(sendto(fd, data, len, 0, (struct sockaddr *)&sin, sizeof(sin)),
			 (ssize_t)len);
}

/*
 * A device in a multicast group gets the group's datagram and its own unicast one in the same
 * receive loop, each with its sender; so does one that joined the loopback broadcast address.
 */
static void
test_group_rx_and_unicast(void **state)
{
	struct pair *p = *state;
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };
	static const uint32_t groups[] = { GROUP, LO_BCAST };
	uint8_t gdata[300], udata[40];
	unsigned int t;

	memset(gdata, 0x5a, sizeof(gdata));
	memset(udata, 0xc3, sizeof(udata));
	for (t = 0; t < 2; t++) {
		struct shr_drv *g = shr_drv_udp_create(&conf);
		struct shr_drv_pkt pkt = {
			.dst_ip = LOOPBACK, .payload = udata, .payload_len = sizeof(udata),
		};
		struct shr_drv_rx rx[2];
		uint16_t sport;
		int s = group_sender(&sport);
		unsigned int i, ng = 0, nu = 0;

		assert_non_null(g);
		pkt.dst_port = g->local_port;
		assert_int_equal(shr_drv_group_join(g, groups[t], g->local_port), 0);
		group_send(s, groups[t], g->local_port, gdata, sizeof(gdata));
		assert_int_equal(shr_drv_tx_burst(p->a, &pkt, 1), 1);
		/* each burst checked before the next (its data is the driver's until then) */
		while (ng + nu < 2) {
			int n = shr_drv_rx_burst(g, rx, 2);

			assert_true(n >= 0 && ng + nu + (unsigned int)n <= 2);
			for (i = 0; i < (unsigned int)n; i++) {
				assert_int_equal(rx[i].src_ip, LOOPBACK);
				/* both sockets hand out receive timestamps */
				assert_int_not_equal(rx[i].rx_ns, 0);
				if (rx[i].src_port == sport) {
					assert_int_equal(rx[i].len, sizeof(gdata));
					assert_memory_equal(rx[i].data, gdata, sizeof(gdata));
					ng++;
				} else {
					assert_int_equal(rx[i].src_port, p->a->local_port);
					assert_int_equal(rx[i].len, sizeof(udata));
					assert_memory_equal(rx[i].data, udata, sizeof(udata));
					nu++;
				}
			}
			if (ng + nu < 2)
				assert_true(shr_drv_wait(g, WAIT_FOREVER) >= 0);
		}
		assert_int_equal(ng, 1);
		assert_int_equal(nu, 1);
		assert_int_equal(g->stats.rx_pkts, 2);
		assert_int_equal(g->stats.rx_bytes, sizeof(gdata) + sizeof(udata));
		assert_int_equal(g->stats.rx_drops, 0);
		close(s);
		shr_drv_close(g);
	}
}

/* Datagram id of test_group_mix: id in every byte, 16 + 7 * id of them. */
static size_t
mix_fill(uint8_t *buf, unsigned int id)
{
	size_t len = 16 + 7 * (size_t)id;

	memset(buf, (int)id, len);
	return len;
}

/*
 * 50 datagrams to the group (ids 0..49) and 50 to the device (ids 50..99), of as many sizes,
 * received in bursts that take from both sockets: each one once, whole (the two sockets'
 * datagrams are in slots of their own), in order from each sender.
 */
static void
test_group_mix(void **state)
{
	struct pair *p = *state;
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };
	enum { N = 50 };
	static uint8_t buf[2 * N][16 + 7 * 2 * N];
	struct shr_drv_pkt pkts[N];
	struct shr_drv_rx rx[SHR_DRV_BURST_MAX];
	struct shr_drv *g = shr_drv_udp_create(&conf);
	unsigned int i, got = 0, next_g = 0, next_u = N;
	uint16_t sport;
	int s = group_sender(&sport);

	assert_non_null(g);
	assert_int_equal(shr_drv_group_join(g, GROUP, g->local_port), 0);
	for (i = 0; i < N; i++) {
		size_t len = mix_fill(buf[i], i);

		group_send(s, GROUP, g->local_port, buf[i], len);
		pkts[i] = (struct shr_drv_pkt){
			.dst_ip = LOOPBACK, .dst_port = g->local_port, .payload = buf[N + i],
			.payload_len = (uint32_t)mix_fill(buf[N + i], N + i),
		};
	}
	assert_int_equal(shr_drv_tx_burst(p->a, pkts, N), N);
	while (got < 2 * N) {
		int rc = shr_drv_rx_burst(g, rx, SHR_DRV_BURST_MAX);
		int k;

		assert_true(rc >= 0);
		/* checked after the whole burst: a slot written twice shows here */
		for (k = 0; k < rc; k++) {
			const uint8_t *d = rx[k].data;
			unsigned int id = d[0];
			uint8_t want[16 + 7 * 2 * N];

			if (id < N) {
				assert_int_equal(rx[k].src_port, sport);
				assert_int_equal(id, next_g++);
			} else {
				assert_int_equal(rx[k].src_port, p->a->local_port);
				assert_int_equal(id, next_u++);
			}
			assert_int_equal(rx[k].len, mix_fill(want, id));
			assert_memory_equal(d, want, rx[k].len);
		}
		got += rc;
		if (got < 2 * N)
			assert_true(shr_drv_wait(g, WAIT_FOREVER) >= 0);
	}
	assert_int_equal(next_g, N);
	assert_int_equal(next_u, 2 * N);
	assert_int_equal(g->stats.rx_pkts, 2 * N);
	close(s);
	shr_drv_close(g);
}

/* Two devices in one group at one port: a datagram sent once reaches both. */
static void
test_group_two_members(void **state)
{
	struct pair *p = *state;
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };
	struct shr_drv *m[2] = { shr_drv_udp_create(&conf), shr_drv_udp_create(&conf) };
	uint16_t port = p->a->local_port, sport;
	uint64_t v = 0x1122334455667788ull;
	int s = group_sender(&sport);
	unsigned int i;

	for (i = 0; i < 2; i++) {
		assert_non_null(m[i]);
		assert_int_equal(shr_drv_group_join(m[i], GROUP, port), 0);
	}
	group_send(s, GROUP, port, &v, sizeof(v));
	for (i = 0; i < 2; i++) {
		struct shr_drv_rx rx;

		assert_int_equal(rx_n(m[i], &rx, 1), 1);
		assert_int_equal(rx.src_ip, LOOPBACK);
		assert_int_equal(rx.src_port, sport);
		assert_int_equal(rx.len, sizeof(v));
		assert_memory_equal(rx.data, &v, sizeof(v));
		shr_drv_close(m[i]);
	}
	close(s);
}

static const struct shr_drv_ops no_group_ops = { .name = "nogroup" };

/*
 * Bad arguments, a port the kernel refuses (held without SO_REUSEADDR): the device stays
 * without a group (same descriptor) and can join one after; a second join is refused; a
 * driver without the operation does not support it.
 */
static void
test_group_errors(void **state)
{
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };
	struct shr_drv *g = shr_drv_udp_create(&conf);
	struct shr_drv plain = { .ops = &no_group_ops };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(GROUP) };
	int fd0, occupant;

	(void)state;
	assert_non_null(g);
	fd0 = shr_drv_fd(g);
	assert_true(fd0 >= 0);
	assert_int_equal(shr_drv_group_join(g, 0, g->local_port), -EINVAL);
	assert_int_equal(shr_drv_group_join(g, GROUP, 0), -EINVAL);
	assert_int_equal(shr_drv_group_join(g, LOOPBACK, 40000), -EINVAL);

	occupant = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(occupant >= 0);
	sin.sin_port = htons(g->local_port);
	assert_int_equal(bind(occupant, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(shr_drv_group_join(g, GROUP, g->local_port), -EADDRINUSE);
	assert_int_equal(shr_drv_fd(g), fd0);
	close(occupant);

	assert_int_equal(shr_drv_group_join(g, GROUP, g->local_port), 0);
	assert_int_not_equal(shr_drv_fd(g), fd0);
	assert_int_equal(shr_drv_group_join(g, GROUP, g->local_port), -EALREADY);
	assert_int_equal(shr_drv_group_join(g, GROUP + 1, g->local_port), -EALREADY);
	shr_drv_close(g);

	assert_int_equal(shr_drv_group_join(&plain, GROUP, 40000), -ENOTSUP);
}

/* Readable now (poll() with no wait)? */
static int
fd_ready(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int rc = poll(&pfd, 1, timeout_ms);

	assert_true(rc >= 0);
	return rc > 0 && (pfd.revents & POLLIN);
}

/*
 * With only the group socket holding a datagram, wait() returns 1 and the device's descriptor
 * polls readable; drained, neither; a unicast datagram makes the descriptor readable too.
 */
static void
test_group_wait_and_fd(void **state)
{
	struct pair *p = *state;
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };
	struct shr_drv *g = shr_drv_udp_create(&conf);
	uint32_t v = 0xfeedbeef;
	struct shr_drv_pkt pkt = { .dst_ip = LOOPBACK, .payload = &v, .payload_len = sizeof(v) };
	struct shr_drv_rx rx;
	uint16_t sport;
	int s = group_sender(&sport), fd;

	assert_non_null(g);
	assert_int_equal(shr_drv_group_join(g, GROUP, g->local_port), 0);
	fd = shr_drv_fd(g);
	assert_true(fd >= 0);
	assert_int_equal(shr_drv_wait(g, 0), 0);
	assert_false(fd_ready(fd, 0));

	group_send(s, GROUP, g->local_port, &v, sizeof(v));
	assert_int_equal(shr_drv_wait(g, WAIT_FOREVER), 1);
	assert_true(fd_ready(fd, -1));
	assert_int_equal(rx_n(g, &rx, 1), 1);
	assert_int_equal(rx.src_port, sport);
	assert_int_equal(shr_drv_wait(g, 0), 0);
	assert_false(fd_ready(fd, 0));

	pkt.dst_port = g->local_port;
	assert_int_equal(shr_drv_tx_burst(p->a, &pkt, 1), 1);
	assert_true(fd_ready(fd, -1));
	assert_int_equal(rx_n(g, &rx, 1), 1);
	assert_int_equal(rx.src_port, p->a->local_port);
	assert_false(fd_ready(fd, 0));
	close(s);
	shr_drv_close(g);
}

/*
 * The two sockets of a device in a group take turns being read first: with a burst's worth of
 * unicast datagrams waiting and one group datagram (the box's results, sent once), the group
 * datagram comes out in the second burst at the latest, not once the unicast ones are drained.
 * Every datagram is in before the first rx_burst() as a rule: the group one was waited for
 * before the unicast ones were sent, and those were sent before a datagram to another device
 * that was waited for (loopback delivers a sender's datagrams in order, unless the kernel defers
 * them to another CPU's softirq: a burst that finds nothing waits, and does not count). The
 * group datagram is in from the start, so the bound holds whatever the order of arrival.
 */
static void
test_group_turns(void **state)
{
	struct pair *p = *state;
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };
	enum { N = 12, B = 4 };
	struct shr_drv *g = shr_drv_udp_create(&conf);
	uint32_t vals[N], gval = 0xc0ffee, marker = 7;
	struct shr_drv_pkt pkts[N], mk = {
		.dst_ip = LOOPBACK, .payload = &marker, .payload_len = sizeof(marker),
	};
	struct shr_drv_rx rx[B];
	unsigned int i, call = 0, got = 0, group_call = 0;
	uint16_t sport;
	int s = group_sender(&sport);

	assert_non_null(g);
	assert_int_equal(shr_drv_group_join(g, GROUP, g->local_port), 0);
	group_send(s, GROUP, g->local_port, &gval, sizeof(gval));
	assert_int_equal(shr_drv_wait(g, WAIT_FOREVER), 1);
	for (i = 0; i < N; i++) {
		vals[i] = i;
		pkts[i] = (struct shr_drv_pkt){
			.dst_ip = LOOPBACK, .dst_port = g->local_port,
			.payload = &vals[i], .payload_len = sizeof(vals[i]),
		};
	}
	assert_int_equal(shr_drv_tx_burst(p->a, pkts, N), N);
	mk.dst_port = p->b->local_port;
	assert_int_equal(shr_drv_tx_burst(p->a, &mk, 1), 1);
	assert_int_equal(rx_n(p->b, rx, 1), 1);
	while (got < N + 1) {
		int n = shr_drv_rx_burst(g, rx, B);
		int k;

		assert_true(n >= 0);
		if (n == 0) {
			/* not in yet after all (the kernel's softirqs deferred): wait for it */
			assert_int_equal(shr_drv_wait(g, WAIT_FOREVER), 1);
			continue;
		}
		call++;
		for (k = 0; k < n; k++)
			if (rx[k].src_port == sport)
				group_call = call;
		got += (unsigned int)n;
	}
	assert_int_equal(got, N + 1);
	assert_true(group_call != 0 && group_call <= 2);
	close(s);
	shr_drv_close(g);
}

/* Open descriptors of this process (/proc/self/fd, less the directory's own). */
static unsigned int
fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* A device that joined a group gives back every descriptor it had when closed. */
static void
test_close_frees_fds(void **state)
{
	struct shr_drv_udp_conf conf = { .local_ip = LOOPBACK };
	unsigned int before = fds_open();
	struct shr_drv *g = shr_drv_udp_create(&conf);

	(void)state;
	assert_non_null(g);
	assert_int_equal(shr_drv_group_join(g, GROUP, g->local_port), 0);
	assert_true(fds_open() > before);
	shr_drv_close(g);
	assert_int_equal(fds_open(), before);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_rx_and_unicast),
		cmocka_unit_test(test_group_mix),
		cmocka_unit_test(test_group_two_members),
		cmocka_unit_test(test_group_errors),
		cmocka_unit_test(test_group_wait_and_fd),
		cmocka_unit_test(test_group_turns),
		cmocka_unit_test(test_close_frees_fds),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
