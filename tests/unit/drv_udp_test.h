/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * What the kernel UDP driver's unit tests (test_drv_udp*.c) share: two devices on 127.0.0.1
 * (the group fixture of every case: setup(), teardown()), and a receive of datagrams sent
 * before that waits until they are all in (rx_n()).
 */

#ifndef SHR_DRV_UDP_TEST_H
#define SHR_DRV_UDP_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <shr_drv_udp.h>

#define LOOPBACK 0x7f000001u
#define WAIT_FOREVER UINT64_MAX	/* shr_drv_wait() until a datagram is ready */

struct pair {
	struct shr_drv *a;
	struct shr_drv *b;
};

static inline int
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

static inline int
teardown(void **state)
{
	struct pair *p = *state;

	shr_drv_close(p->a);
	shr_drv_close(p->b);
	return 0;
}

/* Receive exactly n datagrams, sent before: wait until they are all in. */
static inline int
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

#endif /* SHR_DRV_UDP_TEST_H */
