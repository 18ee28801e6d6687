/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * A data lcore's handoff ring filled by construction, not by timing. The box's own data path
 * (app/agg's agg_dp.c, agg_lcore.c, agg_neigh.c, agg_port.c and agg_telemetry.c objects, as
 * shouter-agg links them) on a ring device (rte_eth_from_rings) with two queues, two lanes
 * and two data lcores, under EAL with --no-huge --no-pci (no root):
 *
 * - data lcore 0 (the control lcore) is this thread: it receives every DATA on queue 0 and is
 *   polled here (agg_lcore_poll()), so what it has processed is known when the poll returns;
 * - data lcore 1 owns lane 1 (the odd slots) and runs the real data loop (agg_lcore_main())
 *   on the other EAL lcore; it is parked by the box's own pause (agg_ctl_pause(), what the
 *   control lcore does for every job-table change) while its ring fills.
 *
 * With lcore 1 parked, lcore 0 is given the first round of every odd slot of a static job
 * (4 ranks, int32): 4096 DATA, all of lane 1. The ring holds AGG_HANDOFF_RING - 1 of them (the
 * capacity of an rte_ring of that size, what agg_pools_create() provisions for); the rest must
 * be dropped, counted in lcore 0's lane_drop (also through telemetry: /shouter/stats,
 * /shouter/lcores,0) and their mbufs freed: the packet pool holds exactly the ring's frames
 * (also /shouter/pool's pkt_mbufs_in_use). Then lcore 1 is let go: it takes the ring's DATA,
 * and exactly the rounds whose 4 DATA were all among them complete, each RESULT exact. The
 * ranks then resend, as on their timers, their DATA of every round whose RESULT they did not
 * get (a burst the ring holds at a time: nothing more is dropped); the DATA the box took the
 * first time are duplicates and change no sum: every round completes exactly once, every
 * rank gets each RESULT once, exact. The next round of every slot completes as well, and the
 * pools are back to full once the lcores' spare mbufs are released.
 *
 * No assertion depends on timing: this thread waits for states (lcore 1 has taken what was
 * handed to it: lane_in; then agg_ctl_pause() returns once lcore 1 has ended its poll and
 * flushed its tx buffer, agg_park()), with a guard of WAIT_S seconds against a hang only. The
 * control lcore's ticks are off (tick_tsc at its largest), so no round times out however slow
 * the machine is.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include "agg_private.h"

/* what shouter-agg's main.c defines */
RTE_LOG_REGISTER(agg_logtype, shouter.agg, WARNING);
volatile bool agg_quit;

#define H_JOB 3
#define H_WORLD 4
#define H_LANES 2
#define H_WINDOW 2048		/* slots; the odd ones (1024) are lane 1's */
#define H_SLOTS1 (H_WINDOW / H_LANES)
#define H_ELEMS 16		/* int32 elements per chunk */
#define H_ROUND (H_SLOTS1 * H_WORLD)	/* lane 1's DATA of one round of every slot: 4096 */
#define H_TOKEN 0x68616e646f66662dull
#define H_SRC_PORT 5000
#define H_TENSOR 9
#define H_BATCH 1024		/* DATA fed at a time once lcore 1 runs: fewer than it holds */
#define H_MSG_LEN (SHR_PROTO_HDR_LEN + H_ELEMS * 4)
#define H_RX_RING 8192
#define H_TX_RING 16384
#define WAIT_S 30		/* only a guard against a hang: every wait is for a state */

struct hand {
	struct agg_conf conf;
	struct agg_ctx *ctx;
	struct agg_lcore *lc0;	/* the feeder: this thread (control lcore) */
	struct agg_lcore *lc1;	/* the owner of lane 1: the real loop on the other lcore */
	struct rte_ring *rx_r[H_LANES];
	struct rte_ring *tx_r[H_LANES];
	uint64_t addrs[H_WORLD];
	bool launched;
	/* the wire: RESULTs per (version, lane-1 slot, rank); frames that were not right */
	uint32_t got[2][H_SLOTS1][H_WORLD];
	uint64_t results;
	uint64_t bad;
	uint64_t wire_q0;	/* frames sent on queue 0 (lcore 0 owns no slot fed here) */
};

static struct hand g_hand;

static int32_t
h_val(uint32_t rank, uint32_t slot, uint32_t ver, uint32_t i)
{
	return (int32_t)(rank * 100003u + slot * 257u + ver * 65537u + i * 7u) - 5000000;
}

static uint32_t
h_ip(uint32_t rank)
{
	return RTE_IPV4(198, 18, 0, 31 + rank);
}

/* Rank's DATA of (slot, ver), a new mbuf of the box's packet pool (what its rx queues use). */
static struct rte_mbuf *
h_data(const struct hand *h, uint32_t rank, uint32_t slot, uint32_t ver)
{
	const struct agg_ctx *ctx = h->ctx;
	struct rte_mbuf *m = rte_pktmbuf_alloc(ctx->pkt_pool);
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	struct shr_proto_msg msg;
	uint8_t *p, *pay;
	uint32_t i;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, AGG_HDR_LEN + H_MSG_LEN);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	eth = (struct rte_ether_hdr *)p;
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	udp = (struct rte_udp_hdr *)(ip + 1);
	pay = (uint8_t *)(udp + 1) + SHR_PROTO_HDR_LEN;
	rte_ether_addr_copy(&ctx->mac, &eth->dst_addr);
	memset(&eth->src_addr, 0, sizeof(eth->src_addr));
	eth->src_addr.addr_bytes[0] = 0x02;
	eth->src_addr.addr_bytes[5] = (uint8_t)(0x30 + rank);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = htons(sizeof(*ip) + sizeof(*udp) + H_MSG_LEN);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = htonl(h_ip(rank));
	ip->dst_addr = ctx->ip_be;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = htons(H_SRC_PORT);
	udp->dst_port = htons(ctx->port_lo + slot % H_LANES);	/* its lane's port */
	udp->dgram_len = htons(sizeof(*udp) + H_MSG_LEN);
	udp->dgram_cksum = 0;
	for (i = 0; i < H_ELEMS; i++) {
		uint32_t v = rte_cpu_to_le_32((uint32_t)h_val(rank, slot, ver, i));

		memcpy(pay + 4 * i, &v, 4);
	}
	memset(&msg, 0, sizeof(msg));
	msg.type = SHR_MSG_DATA;
	msg.dtype = SHR_DTYPE_INT32;
	msg.op = SHR_OP_SUM;
	msg.ver = (uint8_t)ver;
	msg.rank = (uint16_t)rank;
	msg.world = H_WORLD;
	msg.job = H_JOB;
	msg.slot = slot;
	msg.count = H_ELEMS;
	msg.tensor = H_TENSOR;
	msg.step = ver;
	msg.offset = ((uint64_t)ver * H_WINDOW + slot) * H_ELEMS;
	msg.token = H_TOKEN;
	shr_proto_build(udp + 1, &msg, pay, H_ELEMS * 4);
	return m;
}

/* One frame the box sent: a RESULT to a member, of a lane-1 slot, its payload the exact sum. */
static bool
h_result(struct hand *h, const struct rte_mbuf *m)
{
	uint8_t buf[AGG_HDR_LEN + H_MSG_LEN];
	const struct rte_ipv4_hdr *ip;
	const struct rte_udp_hdr *udp;
	const uint8_t *p;
	struct shr_proto_msg msg;
	uint64_t dst;
	uint32_t i, r, rank = H_WORLD;

	if (m->pkt_len != sizeof(buf))
		return false;
	p = rte_pktmbuf_read(m, 0, sizeof(buf), buf);
	if (p == NULL)
		return false;
	ip = (const struct rte_ipv4_hdr *)(p + RTE_ETHER_HDR_LEN);
	udp = (const struct rte_udp_hdr *)(ip + 1);
	if (rte_raw_cksum(ip, sizeof(*ip)) != 0xffff || ip->src_addr != h->ctx->ip_be)
		return false;
	dst = SHR_AGG_ADDR(ntohl(ip->dst_addr), ntohs(udp->dst_port));
	for (r = 0; r < H_WORLD; r++)
		if (dst == h->addrs[r])
			rank = r;
	if (rank == H_WORLD || shr_proto_validate(udp + 1, H_MSG_LEN, &msg) != SHR_PROTO_OK ||
	    msg.type != SHR_MSG_RESULT || msg.count != H_ELEMS || msg.job != H_JOB ||
	    msg.slot >= H_WINDOW || msg.slot % H_LANES != 1 || msg.ver > 1)
		return false;
	for (i = 0; i < H_ELEMS; i++) {
		uint32_t want = 0, got;

		for (r = 0; r < H_WORLD; r++)
			want += (uint32_t)h_val(r, msg.slot, msg.ver, i);
		memcpy(&got, (const uint8_t *)(udp + 1) + SHR_PROTO_HDR_LEN + 4 * i, 4);
		if (rte_le_to_cpu_32(got) != want)
			return false;
	}
	h->got[msg.ver][msg.slot / H_LANES][rank]++;
	return true;
}

/* The wire: what the box sent on either queue, checked, counted and freed. */
static void
h_wire(struct hand *h)
{
	struct rte_mbuf *out[64];
	unsigned int n, i, q;

	for (q = 0; q < H_LANES; q++)
		while ((n = rte_ring_sc_dequeue_burst(h->tx_r[q], (void **)out, RTE_DIM(out),
						      NULL)) != 0) {
			for (i = 0; i < n; i++) {
				if (q == 0)
					h->wire_q0++;
				else if (h_result(h, out[i]))
					h->results++;
				else
					h->bad++;
			}
			rte_pktmbuf_free_bulk(out, n);
		}
}

static uint64_t
h_read(const volatile uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/*
 * Feed frames to queue 0 and let lcore 0 (this thread) take every one: when the rx ring is
 * empty and the poll has returned, each was processed (handed off or dropped). Returns 0, or
 * -1 (a frame not allocated).
 */
static int
h_feed(struct hand *h, struct rte_mbuf **ms, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ms[i] == NULL)
			return -1;
	if (rte_ring_sp_enqueue_bulk(h->rx_r[0], (void **)ms, n, NULL) != n)
		return -1;
	while (agg_lcore_poll(h->lc0) != 0 || rte_ring_count(h->rx_r[0]) != 0)
		;
	return 0;
}

/*
 * Wait until lcore 1 has taken every DATA handed to it (its lane_in is lcore 0's lane_fwd),
 * then park it: agg_ctl_pause() returns once it has ended that poll, processed what it took
 * and flushed its tx buffer (agg_park()). Its counters can then be read, and what it sent is
 * on the wire (drained here). Returns 0, or -1 (the guard ran out).
 */
static int
h_settle(struct hand *h)
{
	uint64_t end = rte_rdtsc() + WAIT_S * rte_get_tsc_hz();

	while (h_read(&h->lc1->st.lane_in) != h->lc0->st.lane_fwd) {
		h_wire(h);
		if (rte_rdtsc() > end) {
			print_error("lcore 1 took %" PRIu64 " of the %" PRIu64 " DATA handed to "
				    "it in %d s\n", h_read(&h->lc1->st.lane_in),
				    h->lc0->st.lane_fwd, WAIT_S);
			return -1;
		}
		rte_pause();
	}
	agg_ctl_pause(h->ctx);
	h_wire(h);
	return 0;
}

#define H_EQ(what, got, want) do { \
	uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want); \
	if (g_ != w_) \
		fail_msg("%s: %" PRIu64 ", want %" PRIu64, (what), g_, w_); \
} while (0)

/* Rounds of version ver whose every rank got its RESULT exactly once; *extra: more than once */
static uint32_t
h_rounds_done(const struct hand *h, uint32_t ver, uint32_t *extra)
{
	uint32_t k, r, done = 0;

	*extra = 0;
	for (k = 0; k < H_SLOTS1; k++) {
		uint32_t ones = 0;

		for (r = 0; r < H_WORLD; r++) {
			ones += h->got[ver][k][r] == 1;
			*extra += h->got[ver][k][r] > 1;
		}
		done += ones == H_WORLD;
	}
	return done;
}

/* One telemetry command on this process's socket: its reply in out, or -1. */
static int
h_tel(const char *cmd, char *out, size_t cap)
{
	struct sockaddr_un sun;
	ssize_t n = -1;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/dpdk_telemetry.v2",
		 rte_eal_get_runtime_dir());
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return -1;
	/* the server's greeting first, then the command's answer */
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 &&
	    read(fd, out, cap - 1) > 0 && write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd))
		n = read(fd, out, cap - 1);
	close(fd);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

/* "key":N in a telemetry reply (the keys asked for occur once), or UINT64_MAX. */
static uint64_t
h_tel_u64(const char *cmd, const char *key)
{
	char reply[16384], k[64];
	const char *p;

	if (h_tel(cmd, reply, sizeof(reply)) < 0)
		return UINT64_MAX;
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(reply, k);
	return p == NULL ? UINT64_MAX : strtoull(p + strlen(k), NULL, 10);
}

static struct rte_mbuf *ms_buf[H_ROUND];

/*
 * Lcore 1 parked, lcore 0 fed the first round of every lane-1 slot, slot by slot (rank 0..3
 * of each): the ring takes what it holds, the rest is dropped, counted and freed.
 */
static void
h_fill(struct hand *h, unsigned int cap, unsigned int in_use0)
{
	struct agg_lcore_stats *s0 = &h->lc0->st, *s1 = &h->lc1->st;
	struct rte_mempool *pkt = h->ctx->pkt_pool;
	uint32_t k, r, n = 0;

	agg_ctl_pause(h->ctx);	/* lcore 1 falls behind: parked, as for a job-table change */
	for (k = 0; k < H_SLOTS1; k++)
		for (r = 0; r < H_WORLD; r++)
			ms_buf[n++] = h_data(h, r, 2 * k + 1, 0);
	H_EQ("packet pool in use with the round built", rte_mempool_in_use_count(pkt),
	     in_use0 + H_ROUND);
	assert_int_equal(h_feed(h, ms_buf, n), 0);
	h_wire(h);
	H_EQ("lcore 0 rx_pkts", s0->rx_pkts, H_ROUND);
	H_EQ("lcore 0 lane_fwd (the ring's capacity)", s0->lane_fwd, cap);
	H_EQ("lcore 0 lane_drop (the rest)", s0->lane_drop, H_ROUND - cap);
	H_EQ("lcore 1's ring", rte_ring_count(h->lc1->handoff), cap);
	/* every mbuf dropped was freed: the pool holds the ring's frames and nothing more */
	H_EQ("packet pool in use with the ring full", rte_mempool_in_use_count(pkt),
	     in_use0 + cap);
	H_EQ("lcore 0 agg DATA (it owns none)", s0->agg.rx, 0);
	H_EQ("lcore 1 lane_in while parked", s1->lane_in, 0);
	H_EQ("lcore 1 agg messages while parked", s1->agg.rx, 0);
	H_EQ("lcore 1 lane_drop", s1->lane_drop, 0);
	H_EQ("frames sent while lcore 1 is parked", h->results + h->bad + h->wire_q0, 0);
	/* what an operator reads: the box's counters through telemetry */
	H_EQ("/shouter/stats lane_drop", h_tel_u64("/shouter/stats", "lane_drop"),
	     H_ROUND - cap);
	H_EQ("/shouter/stats lane_fwd", h_tel_u64("/shouter/stats", "lane_fwd"), cap);
	H_EQ("/shouter/lcores,0 lane_drop", h_tel_u64("/shouter/lcores,0", "lane_drop"),
	     H_ROUND - cap);
	H_EQ("/shouter/pool pkt_mbufs_in_use", h_tel_u64("/shouter/pool", "pkt_mbufs_in_use"),
	     in_use0 + cap);
}

/*
 * Frames to feed while lcore 1 runs: a burst its ring holds at a time, each taken before the
 * next; nothing may be dropped. Returns with lcore 1 parked (h_settle()).
 */
static void
h_feed_running(struct hand *h, struct rte_mbuf **ms, uint32_t n)
{
	uint32_t i, b;

	for (i = 0; i < n; i += b) {
		b = RTE_MIN(n - i, (uint32_t)H_BATCH);
		agg_ctl_resume(h->ctx);
		assert_int_equal(h_feed(h, ms + i, b), 0);
		assert_int_equal(h_settle(h), 0);
	}
}

static void
test_handoff_full(void **state)
{
	struct hand *h = *state;
	struct agg_lcore_stats *s0 = &h->lc0->st, *s1 = &h->lc1->st;
	struct rte_mempool *pkt = h->ctx->pkt_pool;
	unsigned int cap = rte_ring_get_capacity(h->lc1->handoff);
	unsigned int in_use0 = rte_mempool_in_use_count(pkt);
	uint32_t k, r, n, taken, full, extra, spares;
	uint64_t drop;

	/* the ring's size (what agg_pools_create() provisions for): an rte_ring of
	 * AGG_HANDOFF_RING entries holds one fewer */
	H_EQ("handoff ring capacity", cap, AGG_HANDOFF_RING - 1);
	assert_true(H_ROUND > cap + H_WORLD);
	h_fill(h, cap, in_use0);
	drop = s0->lane_drop;

	/* lcore 1 catches up: the rounds whose 4 DATA were all in the ring complete, exact */
	agg_ctl_resume(h->ctx);
	assert_int_equal(h_settle(h), 0);
	taken = cap;
	full = taken / H_WORLD;
	H_EQ("lcore 1 lane_in", s1->lane_in, cap);
	H_EQ("lcore 1 DATA accepted", s1->agg.data, taken);
	H_EQ("lcore 1 rounds completed", s1->agg.completed, full);
	H_EQ("wrong frames", h->bad, 0);
	H_EQ("RESULTs", h->results, (uint64_t)full * H_WORLD);
	H_EQ("rounds done (each rank one RESULT)", h_rounds_done(h, 0, &extra), full);
	H_EQ("RESULTs twice", extra, 0);
	spares = (h->lc0->spare != NULL) + (h->lc1->spare != NULL);
	H_EQ("packet pool in use after the drain (the lcores' spares)",
	     rte_mempool_in_use_count(pkt), in_use0 + spares);

	/* the ranks resend what they got no RESULT for, as on their timers */
	n = 0;
	for (k = 0; k < H_SLOTS1; k++)
		for (r = 0; r < H_WORLD; r++)
			if (h->got[0][k][r] == 0)
				ms_buf[n++] = h_data(h, r, 2 * k + 1, 0);
	H_EQ("DATA resent", n, (H_SLOTS1 - full) * H_WORLD);
	h_feed_running(h, ms_buf, n);
	H_EQ("lane_drop after the resends", s0->lane_drop, drop);
	H_EQ("lcore 1 duplicates (resent DATA it had taken)", s1->agg.duplicates,
	     taken - full * H_WORLD);
	H_EQ("lcore 1 DATA accepted", s1->agg.data, H_ROUND);
	H_EQ("lcore 1 rounds completed", s1->agg.completed, H_SLOTS1);
	H_EQ("wrong frames", h->bad, 0);
	H_EQ("rounds done (each rank one RESULT)", h_rounds_done(h, 0, &extra), H_SLOTS1);
	H_EQ("RESULTs twice", extra, 0);

	/* every slot's next round, as the ranks go on */
	n = 0;
	for (k = 0; k < H_SLOTS1; k++)
		for (r = 0; r < H_WORLD; r++)
			ms_buf[n++] = h_data(h, r, 2 * k + 1, 1);
	h_feed_running(h, ms_buf, n);
	H_EQ("lane_drop after the next round", s0->lane_drop, drop);
	H_EQ("lcore 1 rounds completed", s1->agg.completed, 2 * H_SLOTS1);
	H_EQ("wrong frames", h->bad, 0);
	H_EQ("next rounds done (each rank one RESULT)", h_rounds_done(h, 1, &extra), H_SLOTS1);
	H_EQ("RESULTs twice", extra, 0);
	H_EQ("RESULTs", h->results, 2ull * H_ROUND);
	H_EQ("frames on queue 0", h->wire_q0, 0);
	H_EQ("lcore 1 lane_in", s1->lane_in, s0->lane_fwd);
	H_EQ("lcore 1 rx_pkts (its own queue had nothing)", s1->rx_pkts, 0);
	H_EQ("lcore 1 lane_foreign", s1->lane_foreign, 0);
	H_EQ("results not sent for an unknown MAC", s1->no_neigh, 0);
	H_EQ("nombuf", s0->nombuf + s1->nombuf, 0);
	H_EQ("tx_drop", s0->tx_drop + s1->tx_drop, 0);
	spares = (h->lc0->spare != NULL) + (h->lc1->spare != NULL);
	H_EQ("packet pool in use at the end (the lcores' spares)",
	     rte_mempool_in_use_count(pkt), in_use0 + spares);
	H_EQ("header pool in use at the end", rte_mempool_in_use_count(h->ctx->hdr_pool), 0);
	agg_ctl_resume(h->ctx);
}

/* The box as shouter-agg sets it up (main.c, agg_bench.c), on a ring device. */
static int
setup(void **state)
{
	struct hand *h = &g_hand;
	struct agg_conf *conf = &h->conf;
	struct shr_agg_job_conf jc;
	struct agg_ctx *ctx;
	char name[RTE_RING_NAMESIZE];
	int socket = (int)rte_socket_id(), port;
	unsigned int q, worker;

	memset(h, 0, sizeof(*h));
	conf->ip = RTE_IPV4(198, 18, 0, 1);
	conf->port = SHR_PROTO_UDP_PORT;
	conf->lanes = H_LANES;
	conf->zerocopy = true;
	conf->params.lanes = H_LANES;
	conf->params.nslots = SHR_AGG_DEF_NSLOTS;
	conf->params.max_window = H_WINDOW;
	conf->params.max_elems = H_ELEMS;
	ctx = rte_zmalloc("agg_ctx", sizeof(*ctx), RTE_CACHE_LINE_SIZE);
	if (ctx == NULL)
		return -1;
	h->ctx = ctx;
	ctx->conf = conf;
	rte_spinlock_init(&ctx->ctl_lock);
	agg_ctx_time(ctx);
	ctx->tick_tsc = UINT64_MAX;	/* no ticks: no round times out, however slow */
	ctx->ip_be = htonl(conf->ip);
	ctx->port_lo = conf->port;
	ctx->port_hi = (uint16_t)(conf->port + H_LANES - 1);
	ctx->zerocopy = true;
	ctx->unicast_zc = true;
	ctx->lanes = H_LANES;
	ctx->agg = shr_agg_create(&conf->params);
	if (ctx->agg == NULL)
		return -1;
	for (q = 0; q < H_WORLD; q++)
		h->addrs[q] = SHR_AGG_ADDR(h_ip(q), H_SRC_PORT);
	memset(&jc, 0, sizeof(jc));
	jc.job = H_JOB;
	jc.world = H_WORLD;
	jc.dtype = SHR_DTYPE_INT32;
	jc.window = H_WINDOW;
	jc.chunk_elems = H_ELEMS;
	jc.addrs = h->addrs;
	jc.ordered = 1;		/* as real ranks: a slot's rounds in order */
	jc.token = H_TOKEN;	/* the DATA is built here */
	if (shr_agg_job_add(ctx->agg, &jc) < 0)
		return -1;
	ctx->tx_cap = shr_agg_tx_cap(ctx->agg);
	for (q = 0; q < H_LANES; q++) {
		snprintf(name, sizeof(name), "hand_rx%u", q);
		h->rx_r[q] = rte_ring_create(name, H_RX_RING, socket,
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "hand_tx%u", q);
		h->tx_r[q] = rte_ring_create(name, H_TX_RING, socket,
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (h->rx_r[q] == NULL || h->tx_r[q] == NULL)
			return -1;
	}
	port = rte_eth_from_rings("net_ring_hand", h->rx_r, H_LANES, h->tx_r, H_LANES, socket);
	if (port < 0)
		return -1;
	ctx->port_id = (uint16_t)port;
	if (agg_pools_create(ctx, H_LANES, H_LANES) < 0 ||
	    agg_port_configure(ctx, ctx->port_id, H_LANES) < 0 ||
	    agg_port_start(ctx, ctx->port_id, H_LANES) < 0 || !ctx->zerocopy)
		return -1;
	agg_lanes_map(ctx);	/* lane 1 (the odd slots) is data lcore 1's */
	worker = rte_get_next_lcore(rte_lcore_id(), 1, 0);
	if (worker >= RTE_MAX_LCORE)
		return -1;
	for (q = 0; q < H_LANES; q++) {
		struct agg_lcore *lc = rte_zmalloc("agg_lcore", sizeof(*lc), RTE_CACHE_LINE_SIZE);

		if (lc == NULL)
			return -1;
		lc->lcore_id = q == 0 ? rte_lcore_id() : worker;
		lc->idx = (uint16_t)q;
		lc->queue = (uint16_t)q;
		lc->control = q == 0;
		ctx->lc[ctx->nlcores++] = lc;
		if (agg_lcore_init(ctx, lc) < 0)
			return -1;
		lc->last_drain = lc->last_tick = rte_rdtsc();
	}
	h->lc0 = ctx->lc[0];
	h->lc1 = ctx->lc[1];
	if (agg_telemetry_init(ctx) < 0 ||
	    rte_eal_remote_launch(agg_lcore_main, h->lc1, worker) != 0)
		return -1;
	h->launched = true;
	*state = h;
	return 0;
}

static int
teardown(void **state)
{
	struct hand *h = &g_hand;
	struct agg_ctx *ctx = h->ctx;
	unsigned int q;
	int rc = 0;

	(void)state;
	if (ctx == NULL)
		return -1;
	if (h->launched) {
		ctx->stop = true;
		rte_eal_mp_wait_lcore();
	}
	h_wire(h);
	agg_telemetry_fini();
	for (q = 0; q < ctx->nlcores; q++) {
		agg_lcore_fini(ctx->lc[q]);
		rte_free(ctx->lc[q]);
	}
	/* every mbuf back: the lcores' spares were their last */
	if (!rte_mempool_full(ctx->pkt_pool) || !rte_mempool_full(ctx->hdr_pool)) {
		fprintf(stderr, "agg_handoff_it: %u packet and %u header mbufs not back in their "
			"pools\n", rte_mempool_in_use_count(ctx->pkt_pool),
			rte_mempool_in_use_count(ctx->hdr_pool));
		rc = -1;
	}
	rte_eth_dev_stop(ctx->port_id);
	rte_eth_dev_close(ctx->port_id);
	agg_pools_free(ctx);
	for (q = 0; q < H_LANES; q++) {
		rte_ring_free(h->tx_r[q]);
		rte_ring_free(h->rx_r[q]);
	}
	shr_agg_free(ctx->agg);
	rte_free(ctx);
	return rc;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handoff_full),
	};
	char prefix[64], rundir[PATH_MAX], sock[PATH_MAX + 32];
	char *eal[] = {
		argv[0], "--no-huge", "-m", "512", "--no-pci", "--no-shconf", "-l", "0-1",
		"--file-prefix", prefix, "--log-level", "*:warning", NULL,
	};
	int rc;

	(void)argc;
	snprintf(prefix, sizeof(prefix), "agg_handoff_it_%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rc = cmocka_run_group_tests_name("agg_handoff", tests, setup, teardown);
	rte_eal_cleanup();
	snprintf(sock, sizeof(sock), "%s/dpdk_telemetry.v2", rundir);
	(void)unlink(sock);
	(void)rmdir(rundir);
	return rc;
}
