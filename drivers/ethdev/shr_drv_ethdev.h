/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_DRV_ETHDEV_H
#define SHR_DRV_ETHDEV_H

/**
 * @file
 * DPDK ethdev driver: one port, one RX and one TX queue, its own mempool. The driver is a
 * minimal IPv4 host on that port:
 * - it builds the Ethernet/IPv4/UDP headers itself (IPv4 header checksum offloaded when the
 *   port can, computed in software otherwise; UDP checksum 0, the shouter CRC32C covers
 *   the payload);
 * - TX copies header and payload into one mbuf per datagram (one copy, then no chain to
 *   manage; a chunk is at most a few KiB);
 * - it resolves peers' MAC addresses by ARP (a small cache; a datagram to an address not
 *   yet resolved is dropped and an ARP request sent, at most one per 100 ms);
 * - it answers ARP requests for its own address and ICMP echo requests, and drops every
 *   other frame that is not a well-formed, unfragmented IPv4/UDP datagram to its address
 *   and port;
 * - on a VLAN (conf vlan), every frame it sends (ARP included) carries that 802.1Q tag, and
 *   it takes only frames tagged with it; other networks' frames are dropped and counted
 *   in shr_drv_stats::vlan_other (drivers/shr_l2.h says which);
 * - RX hands out pointers to the UDP payload inside the mbufs, which it frees at the next
 *   rx_burst().
 * wait() polls the queue (it never blocks in the kernel), sleeping idle_us between polls
 * after 64 empty ones. The first time it sleeps it sets the calling thread's timer slack to
 * 1 us (prctl PR_SET_TIMERSLACK), so that a sleep lasts about idle_us rather than up to the
 * kernel's default 50 us more.
 */

#include <stdbool.h>
#include <stdint.h>

#include <shr_drv.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Configuration of an ethdev device. Zero means the default. */
struct shr_drv_ethdev_conf {
	int eal_argc;		/**< EAL arguments (argv[0] first): when > 0 and the EAL is
				 *   not initialised yet, rte_eal_init() is called with a
				 *   copy of them (and rte_eal_cleanup() at close). */
	char **eal_argv;	/**< @see eal_argc */
	uint16_t port_id;	/**< DPDK port. Default 0. */
	uint32_t local_ip;	/**< This host's IPv4 address (host order; required). */
	uint16_t local_port;	/**< Local UDP port (required, non-zero). */
	uint16_t max_payload;	/**< Largest UDP payload. Default 1472 (MTU 1500); above that
				 *   the port's MTU is raised. The device's max_payload is
				 *   what the port's MTU then carries (less, if it could not
				 *   be raised: a warning says so). */
	uint8_t keep_mtu;	/**< 1: leave the port's MTU as it is; the device's
				 *   max_payload is what it carries (at most max_payload). */
	uint32_t peer_ip;	/**< Resolve this address by ARP before returning (0: none). */
	uint8_t peer_mac[6];	/**< peer_ip's MAC, if known (all zero: resolve it by ARP):
				 *   pinned, never asked for nor changed. A MAC learned by
				 *   ARP is pinned too: only a reply to our own request
				 *   teaches one, and nothing moves it afterwards. */
	uint32_t arp_timeout_ms; /**< How long to try. Default 3000. */
	uint32_t nb_mbufs;	/**< Mempool size. Default 4095. */
	uint16_t nb_desc;	/**< RX and TX descriptors. Default 1024. */
	uint32_t idle_us;	/**< Sleep in wait() between polls once idle, in us.
				 *   Default (0) 10. */
	uint16_t vlan;		/**< IEEE 802.1Q VLAN id of the port's network (1..4094):
				 *   frames are sent tagged with it (priority 0) and only
				 *   frames tagged with it are taken. 0 (default): untagged
				 *   (priority-tagged frames, VID 0, are taken too). */
};

/**
 * Create an ethdev device: EAL (if asked), mempool, port configured and started, and the
 * peer resolved.
 *
 * @param conf
 *   Configuration.
 * @return
 *   The device (release it with shr_drv_close(): the port is stopped and closed), or NULL
 *   with errno (and rte_errno) set: EINVAL (bad configuration: no local address or port,
 *   a peer_mac that is not unicast, a vlan above 4094), ENODEV (no such port),
 *   ENOMEM, EHOSTUNREACH (no ARP reply from peer_ip in time), or the errno of the failed
 *   EAL or ethdev call.
 */
struct shr_drv *shr_drv_ethdev_create(const struct shr_drv_ethdev_conf *conf);

/**
 * Raise a port's MTU to at least want (between rte_eth_dev_configure() and
 * rte_eth_dev_start()), and report the MTU the port really carries.
 *
 * rte_eth_dev_set_mtu() is tried first. A port on a kernel interface that ethdev cannot
 * resize (DPDK 22.11's net_af_packet reports a 1518-byte frame limit, whatever its
 * PACKET_MMAP frames hold) then gets the interface's own MTU (set outside DPDK, e.g. by
 * `ip link set dev X mtu 9000`), capped by what its frames carry: for net_af_packet,
 * framesz (devarg; default 2048) less the TPACKET_V2 header in front of a received frame
 * and the Ethernet header.
 *
 * @param port_id
 *   A configured port.
 * @param want
 *   The MTU asked for (IPv4 packet bytes).
 * @param mtu
 *   Out: the MTU the port carries (set also on failure; never 0).
 * @return
 *   0 if *mtu >= want, else the negative errno of rte_eth_dev_set_mtu() (-EMSGSIZE if
 *   that call succeeded but frames are still limited below want).
 */
int shr_drv_ethdev_mtu_set(uint16_t port_id, uint16_t want, uint16_t *mtu);

/**
 * The data room (bytes after RTE_PKTMBUF_HEADROOM) that the mbufs of a port's rx mempool
 * need so that frames of up to frame_len bytes are received whole and the PMD accepts the
 * pool: frame_len, or more for a PMD that requires room for its largest frame
 * (net_af_packet: framesz - 32). Logs a warning for a net_af_packet port whose blocksz is
 * not a multiple of its framesz (DPDK 22.11's PMD then misplaces frames).
 *
 * @param port_id
 *   The port.
 * @param frame_len
 *   The largest Ethernet frame expected (without FCS).
 * @return
 *   Bytes (at least frame_len).
 */
uint32_t shr_drv_ethdev_rx_room(uint16_t port_id, uint32_t frame_len);

/**
 * Whether EAL arguments set EAL's --force-max-simd-bitwidth: the operator's limit on vector
 * widths, which DPDK's own vector paths follow (and shouter's CRC32C with them:
 * shr_crc32c_max_simd(), given shr_drv_ethdev_max_simd()).
 *
 * @param argc
 *   Number of arguments.
 * @param argv
 *   The EAL arguments, argv[0] first; the scan stops at "--" (the application's own).
 * @return
 *   true if one of them is --force-max-simd-bitwidth (either form: "=N" or a separate N).
 */
bool shr_drv_ethdev_simd_forced(int argc, char *const argv[]);

/**
 * The widest SIMD vector DPDK's paths may use (rte_vect_get_max_simd_bitwidth()), once the
 * EAL is up.
 *
 * @return
 *   Bits: 64 (no vectors), 128, 256, 512, or more.
 */
unsigned int shr_drv_ethdev_max_simd(void);

#ifdef __cplusplus
}
#endif

#endif /* SHR_DRV_ETHDEV_H */
