/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "shr_drv_udp.h"

#define UDP_DEF_MAX_PAYLOAD 9000
#define UDP_DEF_SOCK_BUF (8u << 20)
/* A UDP GSO send: at most this many datagrams (the kernel's UDP_MAX_SEGMENTS, never less than
 * a burst), and this many bytes of UDP payload in all (what one IPv4 datagram could carry). */
#define UDP_GSO_MAX_SEGS 64
#define UDP_GSO_MAX_BYTES 65507u
_Static_assert(SHR_DRV_BURST_MAX <= UDP_GSO_MAX_SEGS, "a burst's run must fit one GSO send");

struct udp_dev {
	struct shr_drv base;		/* must be first */
	int fd;
	int gfd;			/* group socket (group_join()), -1: none */
	int epfd;			/* epoll of fd and gfd, -1 while no group */
	uint32_t sock_buf;		/* the conf's (or default) socket buffer bytes */
	bool rx_gfirst;			/* next rx_burst() reads gfd first */
	/* tx scratch */
	struct mmsghdr tx_msg[SHR_DRV_BURST_MAX];
	struct iovec tx_iov[SHR_DRV_BURST_MAX][2];
	struct sockaddr_in tx_addr[SHR_DRV_BURST_MAX];
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} tx_cmsg[SHR_DRV_BURST_MAX];
	unsigned int tx_npkts[SHR_DRV_BURST_MAX];	/* datagrams of each message */
	bool gso;			/* UDP_SEGMENT in use (off after the kernel refused it) */
	/* rx buffers, handed out until the next rx_burst */
	struct mmsghdr rx_msg[SHR_DRV_BURST_MAX];
	struct iovec rx_iov[SHR_DRV_BURST_MAX];
	struct sockaddr_in rx_addr[SHR_DRV_BURST_MAX];
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} rx_cmsg[SHR_DRV_BURST_MAX];
	uint8_t *rx_buf;		/* SHR_DRV_BURST_MAX * max_payload */
};

/*
 * How many of pkts[0..n) (n at most a burst) go out as one UDP GSO message with pkts[0]: a run of
 * datagrams to one destination, each with a header and a payload of the same sizes as the
 * first's, so that the kernel cuts the message back into them (UDP_SEGMENT: every segment but
 * the last the same size; a shorter last one is left to go on its own).
 */
static unsigned int
udp_gso_run(const struct shr_drv_pkt *pkts, unsigned int n)
{
	const struct shr_drv_pkt *p = &pkts[0];
	size_t seg = (size_t)p->hdr_len + p->payload_len;
	unsigned int k;

	if (p->hdr_len == 0 || p->payload_len == 0)
		return 1;
	if (n > UDP_GSO_MAX_BYTES / seg)
		n = (unsigned int)(UDP_GSO_MAX_BYTES / seg);
	for (k = 1; k < n; k++) {
		const struct shr_drv_pkt *q = &pkts[k];

		if (q->dst_ip != p->dst_ip || q->dst_port != p->dst_port ||
		    q->hdr_len != p->hdr_len || q->payload_len != p->payload_len)
			break;
	}
	return k;
}

/*
 * Fill the messages of up to SHR_DRV_BURST_MAX datagrams of pkts[0..n): one per datagram, or
 * with GSO one per run of datagrams that the kernel can segment (udp_gso_run()). Each
 * datagram has its two iovecs at tx_iov[i] (contiguous over a run). Returns the number of
 * messages (tx_npkts[]: the datagrams of each).
 */
static unsigned int
udp_tx_fill(struct udp_dev *u, const struct shr_drv_pkt *pkts, unsigned int n)
{
	unsigned int i = 0, nmsg = 0;

	if (n > SHR_DRV_BURST_MAX)
		n = SHR_DRV_BURST_MAX;
	while (i < n) {
		unsigned int k = u->gso ? udp_gso_run(&pkts[i], n - i) : 1, j;
		struct msghdr *mh = &u->tx_msg[nmsg].msg_hdr;
		unsigned int niov = 0;

		for (j = i; j < i + k; j++) {
			const struct shr_drv_pkt *p = &pkts[j];
			unsigned int v = 0;

			if (p->hdr_len > 0) {
				u->tx_iov[j][v].iov_base = (void *)(uintptr_t)p->hdr;
				u->tx_iov[j][v++].iov_len = p->hdr_len;
			}
			if (p->payload_len > 0) {
				u->tx_iov[j][v].iov_base = (void *)(uintptr_t)p->payload;
				u->tx_iov[j][v++].iov_len = p->payload_len;
			}
			niov += v;
		}
		u->tx_addr[nmsg].sin_family = AF_INET;
		u->tx_addr[nmsg].sin_port = htons(pkts[i].dst_port);
		u->tx_addr[nmsg].sin_addr.s_addr = htonl(pkts[i].dst_ip);
		memset(mh, 0, sizeof(*mh));
		mh->msg_name = &u->tx_addr[nmsg];
		mh->msg_namelen = sizeof(u->tx_addr[nmsg]);
		mh->msg_iov = u->tx_iov[i];
		mh->msg_iovlen = niov;
		if (k > 1) {
			struct cmsghdr *cm;
			uint16_t seg = (uint16_t)(pkts[i].hdr_len + pkts[i].payload_len);

			mh->msg_control = u->tx_cmsg[nmsg].buf;
			mh->msg_controllen = sizeof(u->tx_cmsg[nmsg].buf);
			cm = CMSG_FIRSTHDR(mh);
			cm->cmsg_level = SOL_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(seg));
			memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
		}
		u->tx_npkts[nmsg++] = k;
		i += k;
	}
	return nmsg;
}

/*
 * The first message's k datagrams (a GSO message the kernel refused), sent one at a time:
 * each error is then the datagram's own (dropped, counted). *went: one was sent. Returns the
 * datagrams done (sent or dropped): fewer than k when the socket is full (EAGAIN, ENOBUFS).
 */
static unsigned int
udp_tx_singly(struct udp_dev *u, const struct shr_drv_pkt *pkts, unsigned int k, bool *went)
{
	struct msghdr mh = {
		.msg_name = &u->tx_addr[0], .msg_namelen = sizeof(u->tx_addr[0]),
	};
	unsigned int j;

	*went = false;
	for (j = 0; j < k; j++) {
		ssize_t rc;

		mh.msg_iov = u->tx_iov[j];
		mh.msg_iovlen = (pkts[j].hdr_len > 0) + (pkts[j].payload_len > 0);
		do
			rc = sendmsg(u->fd, &mh, MSG_DONTWAIT);
		while (rc < 0 && errno == EINTR);
		if (rc >= 0) {
			*went = true;
			u->base.stats.tx_pkts++;
			u->base.stats.tx_bytes += pkts[j].hdr_len + pkts[j].payload_len;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
			return j;
		} else {
			u->base.stats.tx_drops++;
		}
	}
	return k;
}

static int
udp_tx_burst(struct shr_drv *dev, const struct shr_drv_pkt *pkts, unsigned int n)
{
	struct udp_dev *u = (struct udp_dev *)dev;
	unsigned int done = 0;

	while (done < n) {
		unsigned int nmsg, m;
		int rc;

		nmsg = udp_tx_fill(u, &pkts[done], n - done);
		rc = sendmmsg(u->fd, u->tx_msg, nmsg, MSG_DONTWAIT);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
				break;
			if (u->tx_npkts[0] > 1 &&
			    (errno == EINVAL || errno == EIO || errno == EMSGSIZE ||
			     errno == ENOPROTOOPT || errno == EOPNOTSUPP)) {
				/*
				 * The kernel refused the GSO message: no UDP_SEGMENT here, no
				 * checksum offload where it needs one, a path it cannot segment
				 * for; or a fault of the datagrams themselves (port 0, larger
				 * than the path). Its datagrams go one at a time: if one goes,
				 * GSO was the fault, and it is off from now on (each error is
				 * then a datagram's own); if none does, GSO stays on.
				 */
				unsigned int k = u->tx_npkts[0], did;
				bool went;

				did = udp_tx_singly(u, &pkts[done], k, &went);
				if (went) {
					u->gso = false;
					u->base.stats.tx_gso_off++;
				}
				done += did;
				if (did < k)
					break;
				continue;
			}
			/* The first message failed on its own (unreachable, filtered...):
			 * drop its datagrams and go on with the rest. */
			u->base.stats.tx_drops += u->tx_npkts[0];
			done += u->tx_npkts[0];
			continue;
		}
		for (m = 0; m < (unsigned int)rc; m++) {
			/* a message's datagrams are all of one size */
			u->base.stats.tx_bytes += (uint64_t)u->tx_npkts[m] *
						  (pkts[done].hdr_len + pkts[done].payload_len);
			if (u->tx_npkts[m] > 1) {
				u->base.stats.tx_gso_msgs++;
				u->base.stats.tx_gso_pkts += u->tx_npkts[m];
			}
			u->base.stats.tx_pkts += u->tx_npkts[m];
			done += u->tx_npkts[m];
		}
		if (rc == 0)
			break;
	}
	return (int)done;
}

/*
 * Receive timestamps. The kernel stamps a datagram as it reaches the host (SO_TIMESTAMPNS,
 * CLOCK_REALTIME); udp_rx_ns() turns the stamp into CLOCK_MONOTONIC, the endpoint's clock,
 * by the offset of the two clocks read once per burst (udp_clock). A stamp that comes out
 * later than now, or more than UDP_RX_NS_MAX before it (the realtime clock was stepped), is
 * not used (0).
 */
#define UDP_RX_NS_MAX 10000000000ull	/* 10 s */

struct udp_clock {
	bool ok;		/* read */
	uint64_t mono;		/* CLOCK_MONOTONIC now, ns */
	int64_t off;		/* CLOCK_MONOTONIC - CLOCK_REALTIME, ns */
};

static uint64_t
udp_ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

/* Ask fd for receive timestamps; best effort: a socket without them gives rx_ns 0. */
static void
udp_ask_stamps(int fd)
{
	int one = 1;

	(void)setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
}

static uint64_t
udp_rx_ns(const struct msghdr *mh, struct udp_clock *clk)
{
	const struct cmsghdr *cm;
	struct timespec t;
	uint64_t at;

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL;
	     cm = CMSG_NXTHDR((struct msghdr *)mh, (struct cmsghdr *)cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_TIMESTAMPNS ||
		    cm->cmsg_len < CMSG_LEN(sizeof(t)))
			continue;
		memcpy(&t, CMSG_DATA(cm), sizeof(t));
		if (!clk->ok) {
			struct timespec mono, real;

			clock_gettime(CLOCK_MONOTONIC, &mono);
			clock_gettime(CLOCK_REALTIME, &real);
			clk->mono = udp_ts_ns(&mono);
			clk->off = (int64_t)(clk->mono - udp_ts_ns(&real));
			clk->ok = true;
		}
		at = udp_ts_ns(&t) + (uint64_t)clk->off;
		if (at > clk->mono || clk->mono - at > UDP_RX_NS_MAX)
			return 0;
		return at;
	}
	return 0;
}

/* recvmmsg() up to n datagrams: their number, 0 if none, or -EIO. */
static int
udp_recv(int fd, struct mmsghdr *msg, unsigned int n)
{
	int rc;

	do {
		rc = recvmmsg(fd, msg, n, MSG_DONTWAIT, NULL);
	} while (rc < 0 && errno == EINTR);
	if (rc >= 0)
		return rc;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return 0;
	/* Asynchronous errors (ICMP) on an unconnected socket: not fatal. */
	if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH)
		return 0;
	return -EIO;
}

static int
udp_rx_burst(struct shr_drv *dev, struct shr_drv_rx *out, unsigned int n)
{
	struct udp_dev *u = (struct udp_dev *)dev;
	struct udp_clock clk = { .ok = false };
	unsigned int i, got, k = 0;
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
		mh->msg_control = u->rx_cmsg[i].buf;
		mh->msg_controllen = sizeof(u->rx_cmsg[i].buf);
	}
	if (u->gfd < 0) {
		rc = udp_recv(u->fd, u->rx_msg, n);
		if (rc < 0)
			return rc;
		got = (unsigned int)rc;
	} else {
		/* Both sockets into the slots in turn (the second one's after the first one's),
		 * the group socket first every other call: neither starves the other. */
		int first = u->rx_gfirst ? u->gfd : u->fd;
		int second = u->rx_gfirst ? u->fd : u->gfd;

		u->rx_gfirst = !u->rx_gfirst;
		rc = udp_recv(first, u->rx_msg, n);
		if (rc < 0)
			return rc;
		got = (unsigned int)rc;
		if (got < n) {
			/* a failure after datagrams: hand them out; it comes back first
			 * next call (the order turns) */
			rc = udp_recv(second, &u->rx_msg[got], n - got);
			if (rc < 0 && got == 0)
				return rc;
			if (rc > 0)
				got += (unsigned int)rc;
		}
	}
	for (i = 0; i < got; i++) {
		const struct mmsghdr *m = &u->rx_msg[i];

		if ((m->msg_hdr.msg_flags & MSG_TRUNC) ||
		    m->msg_hdr.msg_namelen != sizeof(struct sockaddr_in) ||
		    u->rx_addr[i].sin_family != AF_INET) {
			u->base.stats.rx_drops++;
			continue;
		}
		out[k].rx_ns = udp_rx_ns(&m->msg_hdr, &clk);
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
	struct pollfd pfd[2] = {
		{ .fd = u->fd, .events = POLLIN },
		{ .fd = u->gfd, .events = POLLIN },
	};
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_us / 1000000),
		.tv_nsec = (long)(timeout_us % 1000000) * 1000,
	};
	int rc;

	rc = ppoll(pfd, u->gfd >= 0 ? 2 : 1, &ts, NULL);
	if (rc < 0)
		return errno == EINTR ? -EINTR : -EIO;
	return rc > 0 ? 1 : 0;
}

static void
udp_close(struct shr_drv *dev)
{
	struct udp_dev *u = (struct udp_dev *)dev;

	if (u->gfd >= 0) {
		close(u->epfd);
		close(u->gfd);	/* leaves the group */
	}
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
	struct udp_dev *u = (struct udp_dev *)dev;

	return u->gfd >= 0 ? u->epfd : u->fd;
}

/* Raise a socket buffer: SO_*BUFFORCE (root may pass rmem_max), else the plain option. */
static void
udp_set_buf(int fd, int force_opt, int opt, uint32_t bytes)
{
	int v = (int)(bytes / 2);	/* the kernel doubles the value it is given */

	if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof(v)) == 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
}

/*
 * A second socket bound to group_ip:port (SO_REUSEADDR: every member on this host gets its
 * copy), a member of the group on the local address's interface if it is a multicast one,
 * and an epoll descriptor of both sockets for udp_fd().
 */
static int
udp_group_join(struct shr_drv *dev, uint32_t group_ip, uint16_t port)
{
	struct udp_dev *u = (struct udp_dev *)dev;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct epoll_event ev = { .events = EPOLLIN };
	int one = 1, gfd, epfd, rc;

	if (u->gfd >= 0)
		return -EALREADY;
	gfd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (gfd < 0)
		return -errno;
	if (setsockopt(gfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(gfd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0)
		goto fail_sock;
	udp_set_buf(gfd, SO_RCVBUFFORCE, SO_RCVBUF, u->sock_buf);
	udp_ask_stamps(gfd);
	sin.sin_addr.s_addr = htonl(group_ip);
	sin.sin_port = htons(port);
	if (bind(gfd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		goto fail_sock;
	if (IN_MULTICAST(group_ip)) {
		struct ip_mreq mreq = {
			.imr_multiaddr.s_addr = htonl(group_ip),
			.imr_interface.s_addr = htonl(dev->local_ip),	/* 0: INADDR_ANY */
		};

		if (setsockopt(gfd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) < 0)
			goto fail_sock;
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		goto fail_sock;
	ev.data.fd = u->fd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, u->fd, &ev) < 0)
		goto fail_ep;
	ev.data.fd = gfd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, gfd, &ev) < 0)
		goto fail_ep;
	u->gfd = gfd;
	u->epfd = epfd;
	u->rx_gfirst = false;
	return 0;

fail_ep:
	rc = -errno;
	close(epfd);
	errno = -rc;
fail_sock:
	rc = -errno;
	close(gfd);
	return rc;
}

static const struct shr_drv_ops udp_ops = {
	.name = "udp",
	.tx_burst = udp_tx_burst,
	.rx_burst = udp_rx_burst,
	.wait = udp_wait,
	.close = udp_close,
	.path_payload = udp_path_payload,
	.fd = udp_fd,
	.group_join = udp_group_join,
};

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
	u->gfd = -1;
	u->epfd = -1;
	u->sock_buf = c.sock_buf;
	u->gso = !c.no_gso;
	u->rx_buf = malloc((size_t)SHR_DRV_BURST_MAX * c.max_payload);
	if (u->rx_buf == NULL)
		goto fail_dev;
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0)
		goto fail_buf;
	udp_set_buf(u->fd, SO_RCVBUFFORCE, SO_RCVBUF, c.sock_buf);
	udp_set_buf(u->fd, SO_SNDBUFFORCE, SO_SNDBUF, c.sock_buf);
	udp_ask_stamps(u->fd);
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
