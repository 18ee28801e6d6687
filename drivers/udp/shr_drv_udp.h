/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_DRV_UDP_H
#define SHR_DRV_UDP_H

/**
 * @file
 * Kernel UDP socket driver: one non-blocking IPv4 UDP socket, sendmmsg() with a two-part
 * iovec per datagram (header and payload are not copied in user space), recvmmsg() in
 * batches, poll() to sleep. For hosts without a DPDK port and for framework bindings.
 *
 * UDP GSO (UDP_SEGMENT, Linux 4.18): a burst's runs of datagrams to one destination, each of
 * one header size and one payload size (a rank's DATA to its box), go to the kernel as one
 * message per run, which the stack carries as one packet down to the device (or its driver)
 * and cuts back into those datagrams there, so the per-datagram cost of the stack is paid
 * once per run. The receiver sees the same datagrams. Off with shr_drv_udp_conf::no_gso.
 *
 * Result group (shr_drv_group_join()): a second socket, bound to the group's address and
 * port (SO_REUSEADDR), a member of the group on the local address's interface when it is a
 * multicast one; rx_burst() reads both (in turn, first one then the other), wait() polls
 * both, and fd() is then an epoll descriptor of the two.
 */

#include <stdint.h>

#include <shr_drv.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Configuration of a UDP device. Zero means the default. */
struct shr_drv_udp_conf {
	uint32_t local_ip;	/**< Address to bind (host order; 0: any). */
	uint16_t local_port;	/**< Port to bind (0: kernel-chosen). */
	uint16_t max_payload;	/**< Largest datagram received, bytes. Default 9000. */
	uint32_t sock_buf;	/**< SO_RCVBUF/SO_SNDBUF wanted, bytes. Default 8 MiB; the
				 *   kernel may grant less (see net.core.rmem_max). */
	uint8_t no_gso;		/**< Non-zero: one send per datagram. Zero (default): a
				 *   run of datagrams of one burst to one destination, all of
				 *   one size, goes to the kernel as one UDP GSO message
				 *   (UDP_SEGMENT), which cuts it back into those datagrams
				 *   after the stack, up to 64 of them or 65,507 bytes. If the
				 *   kernel refuses such a message (tx_gso_off), the device
				 *   sends datagram by datagram from then on. */
};

/**
 * Create a UDP device.
 *
 * @param conf
 *   Configuration (NULL: all defaults).
 * @return
 *   The device (release it with shr_drv_close()), or NULL with errno set: ENOMEM, or the
 *   errno of socket() or bind() (EADDRINUSE, EADDRNOTAVAIL, EACCES, ...).
 */
struct shr_drv *shr_drv_udp_create(const struct shr_drv_udp_conf *conf);

#ifdef __cplusplus
}
#endif

#endif /* SHR_DRV_UDP_H */
