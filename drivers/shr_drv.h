/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_DRV_H
#define SHR_DRV_H

/**
 * @file
 * Packet I/O drivers: one small ops table that carries UDP payloads (shouter messages)
 * between this host and its peers.
 *
 * A driver owns one local IPv4 address and UDP port. It sends datagrams to any IPv4
 * address and port, built from two pieces (a header and a payload, gathered without an
 * intermediate copy where the driver can), and hands out received datagrams as pointers
 * into its own buffers, valid until the next rx_burst() on the same device.
 *
 * Every driver's device structure starts with struct shr_drv, so that the inline helpers
 * below work on any of them. Drivers are created by their own create function
 * (shr_drv_udp_create(), shr_drv_ethdev_create()) and released with shr_drv_close().
 *
 * Addresses and ports in this API are in host byte order.
 *
 * Not thread-safe: one thread uses one device.
 */

#include <errno.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One datagram to send: its UDP payload is hdr followed by payload. */
struct shr_drv_pkt {
	uint32_t dst_ip;	/**< Destination IPv4 address. */
	uint16_t dst_port;	/**< Destination UDP port. */
	uint16_t hdr_len;	/**< Bytes at hdr (may be 0). */
	uint32_t payload_len;	/**< Bytes at payload (may be 0). */
	const void *hdr;	/**< First part of the UDP payload. */
	const void *payload;	/**< Second part, sent right after hdr. */
};

/** One received datagram. data stays valid until the next rx_burst() on the device. */
struct shr_drv_rx {
	uint32_t src_ip;	/**< Sender's IPv4 address. */
	uint16_t src_port;	/**< Sender's UDP port. */
	uint32_t len;		/**< UDP payload bytes. */
	const void *data;	/**< UDP payload. */
	/**
	 * When the datagram reached this host (the kernel's receive timestamp), in ns of
	 * CLOCK_MONOTONIC; 0: not known, or a driver that polls the device itself (its
	 * datagrams are read as they are received).
	 */
	uint64_t rx_ns;
};

/** Counters kept by every driver (monotonic). */
struct shr_drv_stats {
	uint64_t tx_pkts;	/**< Datagrams handed to the device. */
	uint64_t tx_bytes;	/**< Their UDP payload bytes. */
	uint64_t tx_drops;	/**< Datagrams dropped: per-datagram error, no route, no MAC. */
	uint64_t rx_pkts;	/**< Datagrams handed out by rx_burst(). */
	uint64_t rx_bytes;	/**< Their UDP payload bytes. */
	uint64_t rx_drops;	/**< Frames dropped: truncated, malformed, not for us. */
	uint64_t ctl_pkts;	/**< Frames handled by the driver itself (ARP, ICMP echo). */
	uint64_t ctl_ignored;	/**< ARP frames ignored: replies to no request of ours, and
				 *   frames that would move a neighbour already learned (a
				 *   learned neighbour is pinned for the device's life). */
	uint64_t vlan_other;	/**< Frames of another network, dropped: tagged with another
				 *   VLAN id, untagged while the device is on a VLAN, tagged
				 *   while it is on none, stacked tags (shr_l2.h). */
	uint64_t tx_gso_msgs;	/**< UDP GSO messages sent (kernel UDP driver). */
	uint64_t tx_gso_pkts;	/**< Datagrams they carried (counted in tx_pkts too). */
	uint64_t tx_gso_off;	/**< 1 once the kernel refused a GSO message (then off). */
	uint64_t wait_sleeps;	/**< Timed sleeps of wait() between polls (DPDK driver, idle_us;
				 *   the kernel UDP driver sleeps in ppoll() instead). */
};

struct shr_drv;

/** The operations of a driver. */
struct shr_drv_ops {
	/** Driver name ("udp", "ethdev"). */
	const char *name;
	/**
	 * Send datagrams, in order.
	 *
	 * @param dev
	 *   The device.
	 * @param pkts
	 *   n datagrams. hdr and payload are only read during the call.
	 * @param n
	 *   Number of datagrams.
	 * @return
	 *   The number of datagrams consumed from the front of pkts (sent, or dropped on a
	 *   per-datagram error and counted in tx_drops); fewer than n (possibly 0) when the
	 *   device cannot take more now (the caller retries the rest later); or a negative
	 *   errno on a device failure: -EIO.
	 */
	int (*tx_burst)(struct shr_drv *dev, const struct shr_drv_pkt *pkts, unsigned int n);
	/**
	 * Receive datagrams without blocking. The data of the previous call is released.
	 *
	 * @param dev
	 *   The device.
	 * @param out
	 *   Filled with up to n datagrams.
	 * @param n
	 *   Capacity of out.
	 * @return
	 *   The number of datagrams received (0 if none), or a negative errno on a device
	 *   failure: -EIO.
	 */
	int (*rx_burst)(struct shr_drv *dev, struct shr_drv_rx *out, unsigned int n);
	/**
	 * Wait until a datagram may be ready to receive, or until timeout_us passed.
	 * May return early (spuriously); the caller re-checks with rx_burst().
	 *
	 * @param dev
	 *   The device.
	 * @param timeout_us
	 *   Longest wait in microseconds (0: do not wait).
	 * @return
	 *   1 if a datagram may be ready, 0 on timeout, or a negative errno: -EINTR (a signal
	 *   arrived), -EIO.
	 */
	int (*wait)(struct shr_drv *dev, uint64_t timeout_us);
	/**
	 * Release the device and everything it holds.
	 *
	 * @param dev
	 *   The device.
	 */
	void (*close)(struct shr_drv *dev);
	/**
	 * Optional: the largest UDP payload that reaches an address whole (no IP fragments),
	 * as far as this host knows (its route's or interface's MTU). NULL: max_payload.
	 *
	 * @param dev
	 *   The device.
	 * @param dst_ip
	 *   Destination IPv4 address.
	 * @return
	 *   Bytes (at most max_payload), or a negative errno (-ENETUNREACH, ...).
	 */
	int (*path_payload)(struct shr_drv *dev, uint32_t dst_ip);
	/**
	 * Optional: a file descriptor that polls readable (POLLIN) when a datagram may be
	 * ready, for a caller that waits on several devices at once. NULL: none.
	 * Once a group was joined (group_join()) the descriptor may be another one (the udp
	 * driver's: an epoll descriptor of its two sockets): fetch it again after that.
	 *
	 * @param dev
	 *   The device.
	 * @return
	 *   The descriptor (owned by the device).
	 */
	int (*fd)(struct shr_drv *dev);
	/**
	 * Optional: also receive the datagrams sent to group_ip:port (an IPv4 multicast group,
	 * joined on the interface of the device's local address, or a broadcast address),
	 * from the next rx_burst() on, for the device's life. Several devices, of this process
	 * or others, may join the same group_ip:port: each receives its own copy. NULL: the
	 * device cannot.
	 *
	 * @param dev
	 *   The device.
	 * @param group_ip
	 *   Multicast group or broadcast address (host order).
	 * @param port
	 *   UDP port (host order).
	 * @return
	 *   0, or a negative errno: -EALREADY (a group joined already), or what the kernel refused
	 *   (socket(), bind(): -EADDRINUSE, -EADDRNOTAVAIL; setsockopt(IP_ADD_MEMBERSHIP):
	 *   -ENODEV, -EADDRNOTAVAIL, -ENOBUFS, ...). On an error the device is as it was.
	 *   The arguments are checked by shr_drv_group_join().
	 */
	int (*group_join)(struct shr_drv *dev, uint32_t group_ip, uint16_t port);
};

/** Common head of every driver's device structure. */
struct shr_drv {
	const struct shr_drv_ops *ops;	/**< The driver's operations. */
	uint32_t local_ip;		/**< Local IPv4 address (0: any, kernel-chosen). */
	uint16_t local_port;		/**< Local UDP port actually bound. */
	uint16_t max_payload;		/**< Largest UDP payload the device sends or receives. */
	struct shr_drv_stats stats;	/**< Counters, updated by the driver. */
};

/** Largest burst any caller should ask for. */
#define SHR_DRV_BURST_MAX 64

/** @see shr_drv_ops::tx_burst */
static inline int
shr_drv_tx_burst(struct shr_drv *dev, const struct shr_drv_pkt *pkts, unsigned int n)
{
	return dev->ops->tx_burst(dev, pkts, n);
}

/** @see shr_drv_ops::rx_burst */
static inline int
shr_drv_rx_burst(struct shr_drv *dev, struct shr_drv_rx *out, unsigned int n)
{
	return dev->ops->rx_burst(dev, out, n);
}

/** @see shr_drv_ops::wait */
static inline int
shr_drv_wait(struct shr_drv *dev, uint64_t timeout_us)
{
	return dev->ops->wait(dev, timeout_us);
}

/** @see shr_drv_ops::path_payload */
static inline int
shr_drv_path_payload(struct shr_drv *dev, uint32_t dst_ip)
{
	if (dev->ops->path_payload == NULL)
		return dev->max_payload;
	return dev->ops->path_payload(dev, dst_ip);
}

/**
 * A device's file descriptor to poll. @see shr_drv_ops::fd
 *
 * @param dev
 *   The device.
 * @return
 *   The descriptor, or -ENOTSUP (the device has none).
 */
static inline int
shr_drv_fd(struct shr_drv *dev)
{
	if (dev->ops->fd == NULL)
		return -ENOTSUP;
	return dev->ops->fd(dev);
}

/**
 * Also receive the datagrams sent to a group. @see shr_drv_ops::group_join
 *
 * @param dev
 *   The device.
 * @param group_ip
 *   Multicast group or broadcast address (host order).
 * @param port
 *   UDP port (host order).
 * @return
 *   0, or a negative errno: -ENOTSUP (the device cannot), -EINVAL (group_ip or port 0, or
 *   group_ip the device's own address), or those of shr_drv_ops::group_join.
 */
static inline int
shr_drv_group_join(struct shr_drv *dev, uint32_t group_ip, uint16_t port)
{
	if (dev->ops->group_join == NULL)
		return -ENOTSUP;
	if (group_ip == 0 || port == 0 || group_ip == dev->local_ip)
		return -EINVAL;
	return dev->ops->group_join(dev, group_ip, port);
}

/**
 * Release a device (NULL is allowed). @see shr_drv_ops::close
 *
 * @param dev
 *   The device.
 */
static inline void
shr_drv_close(struct shr_drv *dev)
{
	if (dev != NULL)
		dev->ops->close(dev);
}

#ifdef __cplusplus
}
#endif

#endif /* SHR_DRV_H */
