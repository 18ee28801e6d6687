/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "shr_drv_udp.h"

#define UDP_DEF_MAX_PAYLOAD 9000
#define UDP_DEF_SOCK_BUF (8u << 20)

struct udp_dev {
	struct shr_drv base;		/* must be first */
	int fd;
	/* tx scratch */
	struct mmsghdr tx_msg[SHR_DRV_BURST_MAX];
	struct iovec tx_iov[SHR_DRV_BURST_MAX][2];
	struct sockaddr_in tx_addr[SHR_DRV_BURST_MAX];
	/* rx buffers, handed out until the next rx_burst */
	struct mmsghdr rx_msg[SHR_DRV_BURST_MAX];
	struct iovec rx_iov[SHR_DRV_BURST_MAX];
	struct sockaddr_in rx_addr[SHR_DRV_BURST_MAX];
	uint8_t *rx_buf;		/* SHR_DRV_BURST_MAX * max_payload */
};

static int
udp_tx_burst(struct shr_drv *dev, const struct shr_drv_pkt *pkts, unsigned int n)
{
	struct udp_dev *u = (struct udp_dev *)dev;
	unsigned int done = 0;

	while (done < n) {
		unsigned int batch = n - done, i;
		int rc;

		if (batch > SHR_DRV_BURST_MAX)
			batch = SHR_DRV_BURST_MAX;
		for (i = 0; i < batch; i++) {
			const struct shr_drv_pkt *p = &pkts[done + i];
			struct msghdr *mh = &u->tx_msg[i].msg_hdr;
			unsigned int niov = 0;

			u->tx_addr[i].sin_family = AF_INET;
			u->tx_addr[i].sin_port = htons(p->dst_port);
			u->tx_addr[i].sin_addr.s_addr = htonl(p->dst_ip);
			if (p->hdr_len > 0) {
				u->tx_iov[i][niov].iov_base = (void *)(uintptr_t)p->hdr;
				u->tx_iov[i][niov++].iov_len = p->hdr_len;
			}
			if (p->payload_len > 0) {
				u->tx_iov[i][niov].iov_base = (void *)(uintptr_t)p->payload;
				u->tx_iov[i][niov++].iov_len = p->payload_len;
			}
			memset(mh, 0, sizeof(*mh));
			mh->msg_name = &u->tx_addr[i];
			mh->msg_namelen = sizeof(u->tx_addr[i]);
			mh->msg_iov = u->tx_iov[i];
			mh->msg_iovlen = niov;
		}
		rc = sendmmsg(u->fd, u->tx_msg, batch, MSG_DONTWAIT);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
				break;
			/* The first datagram failed on its own (unreachable, too big...):
			 * drop it and go on with the rest. */
			u->base.stats.tx_drops++;
			done++;
			continue;
		}
		for (i = 0; i < (unsigned int)rc; i++)
			u->base.stats.tx_bytes += pkts[done + i].hdr_len +
						  pkts[done + i].payload_len;
		u->base.stats.tx_pkts += rc;
		done += rc;
		if (rc == 0)
			break;
	}
	return (int)done;
}

static int
udp_rx_burst(struct shr_drv *dev, struct shr_drv_rx *out, unsigned int n)
{
	struct udp_dev *u = (struct udp_dev *)dev;
	unsigned int i, k = 0;
	int rc;

	if (n > SHR_DRV_BURST_MAX)
		n = SHR_DRV_BURST_MAX;
	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		struct msghdr *mh = &u->rx_msg[i].msg_hdr;

		u->rx_iov[i].iov_base = u->rx_buf + (size_t)i * u->base.max_payload;
		u->rx_iov[i].iov_len = u->base.max_payload;
		memset(mh, 0, sizeof(*mh));
		mh->msg_name = &u->rx_addr[i];
		mh->msg_namelen = sizeof(u->rx_addr[i]);
		mh->msg_iov = &u->rx_iov[i];
		mh->msg_iovlen = 1;
	}
	do {
		rc = recvmmsg(u->fd, u->rx_msg, n, MSG_DONTWAIT, NULL);
	} while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		/* Asynchronous errors (ICMP) on an unconnected socket: not fatal. */
		if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH)
			return 0;
		return -EIO;
	}
	for (i = 0; i < (unsigned int)rc; i++) {
		const struct mmsghdr *m = &u->rx_msg[i];

		if ((m->msg_hdr.msg_flags & MSG_TRUNC) ||
		    m->msg_hdr.msg_namelen != sizeof(struct sockaddr_in) ||
		    u->rx_addr[i].sin_family != AF_INET) {
			u->base.stats.rx_drops++;
			continue;
		}
		out[k].src_ip = ntohl(u->rx_addr[i].sin_addr.s_addr);
		out[k].src_port = ntohs(u->rx_addr[i].sin_port);
		out[k].data = u->rx_iov[i].iov_base;
		out[k].len = m->msg_len;
		u->base.stats.rx_bytes += m->msg_len;
		k++;
	}
	u->base.stats.rx_pkts += k;
	return (int)k;
}

static int
udp_wait(struct shr_drv *dev, uint64_t timeout_us)
{
	struct udp_dev *u = (struct udp_dev *)dev;
	struct pollfd pfd = { .fd = u->fd, .events = POLLIN };
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_us / 1000000),
		.tv_nsec = (long)(timeout_us % 1000000) * 1000,
	};
	int rc;

	rc = ppoll(&pfd, 1, &ts, NULL);
	if (rc < 0)
		return errno == EINTR ? -EINTR : -EIO;
	return rc > 0 ? 1 : 0;
}

static void
udp_close(struct shr_drv *dev)
{
	struct udp_dev *u = (struct udp_dev *)dev;

	close(u->fd);
	free(u->rx_buf);
	free(u);
}

/* The route's MTU towards dst, less the IPv4 and UDP headers: a probe socket, connected. */
static int
udp_path_payload(struct shr_drv *dev, uint32_t dst_ip)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd, mtu = 0, pmtu = IP_PMTUDISC_DO, rc = 0;
	socklen_t len = sizeof(mtu);

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sin.sin_addr.s_addr = htonl(dev->local_ip);
	if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0 ||
	    (dev->local_ip != 0 && bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0))
		goto fail;
	sin.sin_addr.s_addr = htonl(dst_ip);
	sin.sin_port = htons(9);	/* any: connect() only picks the route */
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len) < 0)
		goto fail;
	close(fd);
	mtu -= 28;	/* IPv4 + UDP headers */
	if (mtu <= 0)
		return -EMSGSIZE;
	return mtu < dev->max_payload ? mtu : dev->max_payload;
fail:
	rc = -errno;
	close(fd);
	return rc;
}

static int
udp_fd(struct shr_drv *dev)
{
	return ((struct udp_dev *)dev)->fd;
}

static const struct shr_drv_ops udp_ops = {
	.name = "udp",
	.tx_burst = udp_tx_burst,
	.rx_burst = udp_rx_burst,
	.wait = udp_wait,
	.close = udp_close,
	.path_payload = udp_path_payload,
	.fd = udp_fd,
};

/* Raise a socket buffer: SO_*BUFFORCE (root may pass rmem_max), else the plain option. */
static void
udp_set_buf(int fd, int force_opt, int opt, uint32_t bytes)
{
	int v = (int)(bytes / 2);	/* the kernel doubles the value it is given */

	if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof(v)) == 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
}

struct shr_drv *
shr_drv_udp_create(const struct shr_drv_udp_conf *conf)
{
	struct shr_drv_udp_conf c = { 0 };
	struct sockaddr_in sin = { 0 };
	socklen_t slen = sizeof(sin);
	struct udp_dev *u;
	int err;

	if (conf != NULL)
		c = *conf;
	if (c.max_payload == 0)
		c.max_payload = UDP_DEF_MAX_PAYLOAD;
	if (c.sock_buf == 0)
		c.sock_buf = UDP_DEF_SOCK_BUF;

	u = calloc(1, sizeof(*u));
	if (u == NULL)
		goto fail;
	u->base.ops = &udp_ops;
	u->base.max_payload = c.max_payload;
	u->rx_buf = malloc((size_t)SHR_DRV_BURST_MAX * c.max_payload);
	if (u->rx_buf == NULL)
		goto fail_dev;
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0)
		goto fail_buf;
	udp_set_buf(u->fd, SO_RCVBUFFORCE, SO_RCVBUF, c.sock_buf);
	udp_set_buf(u->fd, SO_SNDBUFFORCE, SO_SNDBUF, c.sock_buf);
	/* Never fragment: a datagram too large for the path is an error (EMSGSIZE) here. */
	{
		int pmtu = IP_PMTUDISC_DO;

		if (setsockopt(u->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0)
			goto fail_sock;
	}

	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(c.local_ip);
	sin.sin_port = htons(c.local_port);
	if (bind(u->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		goto fail_sock;
	if (getsockname(u->fd, (struct sockaddr *)&sin, &slen) < 0)
		goto fail_sock;
	u->base.local_ip = ntohl(sin.sin_addr.s_addr);
	u->base.local_port = ntohs(sin.sin_port);
	return &u->base;

fail_sock:
	err = errno;
	close(u->fd);
	errno = err;
fail_buf:
	err = errno;
	free(u->rx_buf);
	errno = err;
fail_dev:
	err = errno;
	free(u);
	errno = err;
fail:
	return NULL;
}
