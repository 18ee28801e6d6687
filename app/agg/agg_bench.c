/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * --bench-mpps SECONDS: the real data path on one lcore, fed from memory.
 *
 * An in-process ring device (rte_eth_from_rings) stands in for port 0, with one rx/tx ring
 * pair per lane (--lanes N, default 1), and the harness plays the NIC. With several lanes it
 * spreads the frames over the queues in two ways, each timed: by flow (queue rank mod N: what
 * af_packet's PACKET_FANOUT hash does, so that about (N-1)/N of the DATA land on an lcore
 * that does not own their slot and is handed to the one that does, agg_dp.c), and by lane
 * (queue slot mod N: what rte_flow steering does, nothing handed off).
 * A static job (4 ranks, int32, 256-element = 1 KiB chunks, window 128, fixed member
 * addresses) is fed pre-built,
 * valid DATA frames covering two rounds (both slot versions) of every slot, over and over:
 * the frames are enqueued on the device's rx rings; lane 0 is polled on this lcore through
 * agg_lcore_poll() (rte_eth_rx_burst(), agg_process_burst(), ticks), the other lanes by their
 * own lcores running the same data loop, and the results that come out of each queue's tx
 * ring are freed by the lcore that sent them (the harness's "wire": a NIC's sent frames are
 * freed by the lcore that sent them). With several lanes this exercises the
 * multi-queue path (slot ownership by lane, the control lcore's pauses). The
 * frames are reused: their reference count is raised before each pass, so the data path's
 * free does not return them to their pool.
 *
 * Before timing, one pass is checked: every RESULT is validated (shr_proto_validate) and its
 * payload compared with the exact sum. After timing, every frame fed must have been accepted
 * with no reject.
 *
 * Printed: agg_mpps_per_lcore / agg_gbps_per_lcore (DATA frames consumed per second, and
 * their payload in Gbit/s) in the configured fan-out mode, kernel_mpps (the roofline: per
 * round of 4 DATA the 4 CRC32C checks, the int32 sums and the result's CRC32C, over the same
 * chunks: agg_bench_kernel()), agg_vs_roofline, and both fan-out modes
 * (zc_mpps, copy_mpps, zc_vs_copy), then the float32 SUM kernels of reproducible and
 * streaming slots side by side (f32_stream_gbps, f32_exact_gbps, repro_vs_stream = exact
 * over streaming: agg_bench_kernel_f32()), and the roofline with the per-job MAC
 * (kernel_mac_mpps; mac_vs_crc = it over kernel_mpps: agg_bench_kernel_mac()), and the CRC32C
 * versions, the crc32 instruction's three streams and AVX-512 folding, over the DATA frames in
 * turn and over one DATA in L1 (crc_ns_hw, crc_ns_fold, crc_ns_hw_hot, crc_ns_fold_hot;
 * crc_fold_vs_hw, crc_fold_vs_hw_hot: agg_bench_crc()). With one
 * lane, a "cpu:" line gives the same rates per second of this thread's CPU time rather than
 * of wall-clock time: on a machine shared with other busy processes they vary much less from
 * run to run. SIGINT or SIGTERM stops any phase: the bench says so and exits 1, no figures.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include <shr_pool.h>

#include "agg_private.h"

#include "agg_bench.h"

static inline int32_t
b_val(uint32_t rank, uint32_t slot, uint32_t ver, uint32_t i)
{
	return (int32_t)(rank * 100003u + slot * 257u + ver * 65537u + i) - 5000000;
}

static uint32_t
b_ip(uint32_t rank)
{
	return RTE_IPV4(198, 18, 0, 11 + rank);
}

/* One DATA frame: rank's chunk for (slot, ver). */
static void
b_build(const struct bench *b, uint8_t *p, uint32_t rank, uint32_t slot, uint32_t ver)
{
	const struct agg_ctx *ctx = b->ctx;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint8_t *msg = (uint8_t *)(udp + 1);
	struct shr_proto_msg m;
	uint32_t i;

	rte_ether_addr_copy(&ctx->mac, &eth->dst_addr);
	memset(&eth->src_addr, 0, sizeof(eth->src_addr));
	eth->src_addr.addr_bytes[0] = 0x02;
	eth->src_addr.addr_bytes[5] = (uint8_t)(0x10 + rank);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = htons(sizeof(*ip) + sizeof(*udp) + b_msg_len(b));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = htonl(b_ip(rank));
	ip->dst_addr = ctx->ip_be;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = htons(B_SRC_PORT);
	udp->dst_port = htons(ctx->port_lo + slot % b->nl);
	udp->dgram_len = htons(sizeof(*udp) + b_msg_len(b));
	udp->dgram_cksum = 0;
	for (i = 0; i < b->elems; i++) {
		uint32_t v = rte_cpu_to_le_32((uint32_t)b_val(rank, slot, ver, i));

		memcpy(msg + SHR_PROTO_HDR_LEN + 4 * i, &v, 4);
	}
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = SHR_DTYPE_INT32;
	m.op = SHR_OP_SUM;
	m.ver = (uint8_t)ver;
	m.rank = (uint16_t)rank;
	m.world = B_WORLD;
	m.job = B_JOB;
	m.slot = slot;
	m.count = b->elems;
	m.tensor = B_TENSOR;
	m.step = ver;
	m.offset = ((uint64_t)ver * B_WINDOW + slot) * b->elems;
	m.token = B_TOKEN;
	shr_proto_build(msg, &m, msg + SHR_PROTO_HDR_LEN, b->elems * 4);
}

/* Check one result frame (any segmentation). */
static bool
b_check(const struct bench *b, const struct rte_mbuf *m)
{
	uint8_t buf[AGG_HDR_LEN + B_MAX_MSG_LEN];
	uint32_t len = AGG_HDR_LEN + b_msg_len(b);
	const uint8_t *p;
	const struct rte_ipv4_hdr *ip;
	const struct rte_udp_hdr *udp;
	struct shr_proto_msg msg;
	uint64_t dst;
	uint32_t i, r;
	bool member = false;

	if (m->pkt_len != len)
		return false;
	p = rte_pktmbuf_read(m, 0, len, buf);
	if (p == NULL)
		return false;
	ip = (const struct rte_ipv4_hdr *)(p + RTE_ETHER_HDR_LEN);
	udp = (const struct rte_udp_hdr *)(ip + 1);
	if (rte_raw_cksum(ip, sizeof(*ip)) != 0xffff || ip->src_addr != b->ctx->ip_be)
		return false;
	dst = SHR_AGG_ADDR(ntohl(ip->dst_addr), ntohs(udp->dst_port));
	for (r = 0; r < B_WORLD; r++)
		member |= dst == b->addrs[r];
	if (!member || shr_proto_validate(udp + 1, b_msg_len(b), &msg) != SHR_PROTO_OK ||
	    msg.type != SHR_MSG_RESULT || msg.count != b->elems || msg.job != B_JOB ||
	    msg.slot >= B_WINDOW || msg.ver > 1)
		return false;
	for (i = 0; i < b->elems; i++) {
		uint32_t want = 0, got;

		for (r = 0; r < B_WORLD; r++)
			want += (uint32_t)b_val(r, msg.slot, msg.ver, i);
		memcpy(&got, (const uint8_t *)(udp + 1) + SHR_PROTO_HDR_LEN + 4 * i, 4);
		if (rte_le_to_cpu_32(got) != want)
			return false;
	}
	return true;
}

/* Queue q's tx ring is the wire: its results are checked (while checking), counted, freed. */
static void
b_drain_q(struct bench *b, uint32_t q)
{
	struct rte_mbuf *out[64];
	unsigned int n, i;
	uint64_t bad = 0;

	while ((n = rte_ring_sc_dequeue_burst(b->tx_r[q], (void **)out, RTE_DIM(out),
					      NULL)) != 0) {
		if (b->check)
			for (i = 0; i < n; i++)
				bad += !b_check(b, out[i]);
		rte_pktmbuf_free_bulk(out, n);
		if (bad != 0)
			__atomic_store_n(&b->wire[q].bad, b->wire[q].bad + bad, __ATOMIC_RELEASE);
		bad = 0;
		__atomic_store_n(&b->wire[q].results, b->wire[q].results + n, __ATOMIC_RELEASE);
	}
}

/* The queues this lcore drains: its own, and all while the other data lcores are stopped. */
static void
b_drain(struct bench *b)
{
	uint32_t q;

	for (q = 0; q < b->nl; q++)
		if (q == 0 || !b->workers)
			b_drain_q(b, q);
}

/* b_drain() for agg_bench_handoff.c */
void
agg_bench_drain(struct bench *b)
{
	b_drain(b);
}

static uint64_t
b_bad(const struct bench *b)
{
	uint64_t t = 0;
	uint32_t q;

	for (q = 0; q < b->nl; q++)
		t += __atomic_load_n(&b->wire[q].bad, __ATOMIC_ACQUIRE);
	return t;
}

static struct bench *b_running;	/* for b_worker() */

/* CPU seconds of data lcore q's thread so far (0: unknown). */
static double
b_lcore_cpu_s(const struct bench *b, uint32_t q)
{
	struct timespec ts;

	if (q == 0)
		return agg_bench_cpu_s();
	if (!b->clk_set[q] || clock_gettime(b->clk[q], &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The other data lcores: the data loop (agg_lcore_poll(), as agg_lcore_main() runs it), and
 * their own queue's wire drained (a NIC's sent frames are freed by the lcore that sent them).
 */
static int
b_worker(void *arg)
{
	struct agg_lcore *lc = arg;
	struct bench *b = b_running;

	lc->last_drain = lc->last_tick = rte_rdtsc();
	if (pthread_getcpuclockid(pthread_self(), &b->clk[lc->idx]) == 0)
		b->clk_set[lc->idx] = true;
	while (!b->ctx->stop && !agg_quit) {
		uint64_t t0 = rte_rdtsc();

		if (agg_lcore_poll(lc) != 0)
			__atomic_store_n(&b->wire[lc->idx].busy_tsc, b->wire[lc->idx].busy_tsc +
					 rte_rdtsc() - t0, __ATOMIC_RELAXED);
		b_drain_q(b, lc->queue);
	}
	agg_lcore_flush(lc);
	return 0;
}

/*
 * Called at each turn of a wait of the feeder for a state of the data lcores, *start 0 at the
 * first (then set: the wait's start, rte_rdtsc()): whether to give the wait up. Only once
 * B_WAIT_S, a guard against a hang, has run out, or on a signal; then it says what it waited
 * for (fmt: the state, and how far it got) and returns true.
 */
static bool __rte_format_printf(2, 3)
b_give_up(uint64_t *start, const char *fmt, ...)
{
	uint64_t now = rte_rdtsc(), dt;
	va_list ap;

	if (*start == 0)
		*start = now;
	dt = now - *start;
	if (!agg_quit && dt < B_WAIT_S * rte_get_tsc_hz())
		return false;
	fprintf(stderr, "shouter-agg: bench: %s after %.1f s waiting for ", agg_quit ?
		"interrupted" : "gave up (a hang?)", (double)dt / (double)rte_get_tsc_hz());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return true;
}

/* Poll (lane 0) until the data lcores have taken want DATA: 0, or -1 (said: b_give_up()). */
static int
b_wait_taken(struct bench *b, uint64_t want)
{
	uint64_t start = 0;

	while (b_taken(b) < want) {
		if (b_give_up(&start, "the data lcores to take the DATA fed: %" PRIu64 " of %"
			      PRIu64 " taken", b_taken(b), want))
			return -1;
		agg_lcore_poll(b->lc);
		b_drain(b);
	}
	return 0;
}

/*
 * Feed every frame once through the real data path: lane 0 is polled here, the other lanes
 * by their own lcores (b_worker(): the data loop). Spread by flow, a slot's frames reach
 * its lcore by two paths (its own queue, another lcore's handoff), so a rank's DATA of the
 * slot's next round could overtake another rank's DATA of the round before, which a real
 * member never sends before that round's result: the second half of the frames (the slots'
 * other version) is fed once the first has been taken, and the pass ends when all are.
 */
static int
b_pass(struct bench *b)
{
	struct rte_mbuf *stage[AGG_MAX_LCORES][AGG_BURST];
	uint32_t ns[AGG_MAX_LCORES];
	uint32_t i, k, q, sent;
	uint64_t taken0 = b->by_flow ? b_taken(b) : 0, start;

	for (i = 0; i < B_NPKT; i += AGG_BURST) {
		if (b->by_flow && i == B_NPKT / B_ROUNDS && b_wait_taken(b, taken0 + i) < 0)
			return -1;
		/* the handoff rings have no back-pressure (a full one drops, as a NIC would):
		 * feed no faster than the lcores take the handed frames */
		for (q = 0; q < b->nl && b->nl > 1; q++) {
			start = 0;
			while (rte_ring_count(b->ctx->lc[q]->handoff) > AGG_HANDOFF_RING / 4) {
				if (b_give_up(&start, "lcore %u to take its handoff ring's DATA: %u "
					      "left, want %u", q,
					      rte_ring_count(b->ctx->lc[q]->handoff),
					      AGG_HANDOFF_RING / 4))
					return -1;
				agg_lcore_poll(b->lc);
				b_drain(b);
			}
		}
		memset(ns, 0, sizeof(ns[0]) * b->nl);
		for (k = 0; k < AGG_BURST; k++) {
			struct rte_mbuf *m = b->pkts[i + k];

			/* one reference for the data path's free; ours stays */
			if (b->nl == 1)
				rte_mbuf_refcnt_set(m, 2);
			else
				rte_mbuf_refcnt_update(m, 1);	/* may still be queued */
			q = b->by_flow ? b->flow[i + k] : b->lane[i + k];
			stage[q][ns[q]++] = m;
		}
		for (q = 0; q < b->nl; q++) {
			sent = 0;
			start = 0;
			while (sent < ns[q]) {
				sent += rte_ring_sp_enqueue_burst(b->rx_r[q],
					(void **)&stage[q][sent], ns[q] - sent, NULL);
				if (sent == ns[q])
					break;
				if (b_give_up(&start, "room in queue %u's rx ring: %u of %u "
					      "frames queued", q, sent, ns[q]))
					return -1;	/* (the frames' references: all reset at the end) */
				agg_lcore_poll(b->lc);
				b_drain(b);
			}
		}
		while (!rte_ring_empty(b->rx_r[0]))
			agg_lcore_poll(b->lc);
		b_drain(b);
	}
	if (b->by_flow)
		return b_wait_taken(b, taken0 + B_NPKT);
	return 0;
}

/*
 * Wait until the data lcores have taken want_data DATA (accepted or refused: the caller tells
 * which) and want_results result frames are drained: 0, or -1 (said: b_give_up()).
 */
static int
b_settle(struct bench *b, uint64_t want_data, uint64_t want_results)
{
	uint64_t start = 0;

	for (;;) {
		agg_lcore_poll(b->lc);
		agg_lcore_flush(b->lc);
		b_drain(b);
		if (b_taken(b) >= want_data && b_results(b) >= want_results)
			break;
		if (b_give_up(&start, "every DATA fed taken and its results sent: %" PRIu64
			      " of %" PRIu64 " DATA, %" PRIu64 " of %" PRIu64 " results",
			      b_taken(b), want_data, b_results(b), want_results))
			return -1;
	}
	b_drain(b);
	return 0;
}

/* One pass in one fan-out mode, every result read back (b_check()); 0, or -1 on error. */
static int
b_verify(struct bench *b, bool zc, bool by_flow)
{
	uint64_t taken0, results0, bad0;
	uint32_t q;

	b->by_flow = by_flow;
	b->ctx->zerocopy = zc;
	b->ctx->unicast_zc = zc;
	b->check = true;
	bad0 = b_bad(b);
	results0 = b_results(b);
	taken0 = b_taken(b);
	if (b_pass(b) < 0 || b_settle(b, taken0 + B_NPKT, results0 + B_NPKT) < 0) {
		b->check = false;
		return -1;
	}
	b->check = false;
	if (b_bad(b) != bad0 || b_results(b) - results0 != B_NPKT) {
		fprintf(stderr, "shouter-agg: bench (%s): %" PRIu64 " wrong results, %" PRIu64
			" result frames for %u DATA (want %u)\n", zc ? "zero-copy" : "copy",
			b_bad(b) - bad0, b_results(b) - results0, B_NPKT, B_NPKT);
		for (q = 0; q < b->nl; q++) {
			const struct agg_lcore_stats *st = &b->ctx->lc[q]->st;

			fprintf(stderr, "  lcore %u: rx %" PRIu64 " data %" PRIu64 " completed %"
				PRIu64 " fwd %" PRIu64 " in %" PRIu64 " drop %" PRIu64 " no_neigh %"
				PRIu64 " tx %" PRIu64 " txdrop %" PRIu64 "\n", q, st->rx_pkts,
				st->agg.data, st->agg.completed, st->lane_fwd, st->lane_in,
				st->lane_drop, st->no_neigh, st->tx_pkts, st->tx_drop);
		}
		return -1;
	}
	return 0;
}

/*
 * The timed part of b_run(): passes for `seconds`; Mpps, or < 0 on error. Never inlined:
 * scripts/bench_instr.sh counts it by name (callgrind --toggle-collect), without b_verify()'s
 * pass, whose b_check() runs the data path's validation and CRC on every result.
 */
static __rte_noinline double
b_timed(struct bench *b, bool zc, double seconds)
{
	const size_t data_off = offsetof(struct agg_lcore_stats, agg.data);
	const size_t drop_off = offsetof(struct agg_lcore_stats, lane_drop);
	const size_t fwd_off = offsetof(struct agg_lcore_stats, lane_fwd);
	uint64_t data0, rej0, results0, t0, t1, end, passes = 0, data, drop0, fwd0;
	double lc0[AGG_MAX_LCORES];
	uint64_t busy0[AGG_MAX_LCORES];
	uint32_t q;
	double dt, c0;

	data0 = b_sum(b, data_off);
	rej0 = b_rejects(b);
	drop0 = b_sum(b, drop_off);
	fwd0 = b_sum(b, fwd_off);
	results0 = b_results(b);
	for (q = 0; q < b->nl; q++) {
		lc0[q] = b_lcore_cpu_s(b, q);
		busy0[q] = b->wire[q].busy_tsc;
	}
	c0 = agg_bench_cpu_s();
	t0 = rte_rdtsc();
	end = t0 + (uint64_t)(seconds * (double)rte_get_tsc_hz());
	do {
		if (b_pass(b) < 0)
			return -1;
		passes++;
	} while (rte_rdtsc() < end && !agg_quit);
	/* every DATA pass yields one result frame per DATA frame (world 4, 4 destinations) */
	if (b_settle(b, data0 + rej0 + passes * B_NPKT, results0 + passes * B_NPKT) < 0)
		return -1;
	t1 = rte_rdtsc();
	b->cpu_mpps = (double)(passes * B_NPKT) / (agg_bench_cpu_s() - c0) / 1e6;
	dt = (double)(t1 - t0) / (double)rte_get_tsc_hz();
	for (q = 0; q < b->nl; q++) {
		b->cpu_share[q] = (b_lcore_cpu_s(b, q) - lc0[q]) / dt;
		b->busy[q] = (double)(b->wire[q].busy_tsc - busy0[q]) / (double)(t1 - t0);
	}
	data = b_sum(b, data_off) - data0;
	b->handed = (double)(b_sum(b, fwd_off) - fwd0) / (double)(passes * B_NPKT);
	if (data != passes * B_NPKT || b_rejects(b) != rej0 || b_sum(b, drop_off) != drop0) {
		fprintf(stderr, "shouter-agg: bench (%s): %" PRIu64 " DATA accepted of %" PRIu64
			" fed, %" PRIu64 " rejected, %" PRIu64 " not handed off (ring full)\n",
			zc ? "zero-copy" : "copy", data, passes * B_NPKT, b_rejects(b) - rej0,
			b_sum(b, drop_off) - drop0);
		return -1;
	}
	return (double)(passes * B_NPKT) / dt / 1e6;
}

/* Run the data path for `seconds` in one fan-out mode; returns Mpps, or < 0 on error. */
static double
b_run(struct bench *b, bool zc, bool by_flow, double seconds)
{
	if (b_verify(b, zc, by_flow) < 0)
		return -1;
	return b_timed(b, zc, seconds);
}

/*
 * One figure, key=v on a line of its own: 3 decimals, more below 0.1 (3 significant digits),
 * so that a positive figure never reads 0 however slow a loaded machine made one phase against
 * another (the integration test requires them positive).
 */
static void
b_fig(const char *key, double v)
{
	double t = v * 1000;
	int prec = 3;

	for (; v > 0 && t < 100 && prec < 24; prec++)
		t *= 10;
	printf("%s=%.*f\n", key, prec, v);
}

/* The data lcores other than this one run the real loop; stop and wait for them. */
static void
b_stop_workers(struct bench *b)
{
	b->ctx->stop = true;
	rte_eal_mp_wait_lcore();
	b->workers = false;	/* this lcore drains every queue from now on */
}

int
agg_bench_run(struct agg_conf *conf)
{
	struct bench b;
	struct agg_ctx *ctx;
	struct shr_agg_job_conf jc;
	unsigned int workers[AGG_MAX_LCORES], nworkers = 0, lcore;
	int socket = (int)rte_socket_id();
	double mpps_zc = -1, mpps_copy = -1, mpps, cpu_zc, cpu_copy;
	struct bench_kern k;
	double handed = 0, mpps_steered = 0, handed_steered = 0, handoff_ns = 0, steered_ns = 0;
	double share[AGG_MAX_LCORES], busy[AGG_MAX_LCORES];
	uint32_t r, s, v, i, q;
	bool launched = false;
	char name[RTE_RING_NAMESIZE];
	int port, rc, ret = 1;

	memset(&b, 0, sizeof(b));
	b.nl = conf->lanes != 0 ? conf->lanes : 1;
	b.elems = conf->bench_elems != 0 ? conf->bench_elems : AGG_BENCH_DEF_ELEMS;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (nworkers < AGG_MAX_LCORES)
			workers[nworkers++] = lcore;
	}
	if (b.nl > nworkers + 1 || b.nl > B_WINDOW) {
		fprintf(stderr, "shouter-agg: --bench-mpps with --lanes %u needs %u lcores (EAL -l "
			"or --lcores), %u given\n", b.nl, b.nl, nworkers + 1);
		return 2;
	}
	if (conf->ip == 0)
		conf->ip = RTE_IPV4(198, 18, 0, 1);
	conf->params.lanes = b.nl;
	/* no timer of the box's may take a data lcore kept from the CPU for a member's fault */
	if (conf->params.job_timeout_ns == 0)
		conf->params.job_timeout_ns = B_JOB_TIMEOUT_NS;
	if (conf->params.idle_ns == 0)
		conf->params.idle_ns = B_IDLE_NS;
	ctx = rte_zmalloc("agg_ctx", sizeof(*ctx), RTE_CACHE_LINE_SIZE);
	if (ctx == NULL)
		return 1;
	b.ctx = ctx;
	ctx->conf = conf;
	rte_spinlock_init(&ctx->ctl_lock);
	agg_ctx_time(ctx);
	ctx->ip_be = htonl(conf->ip);
	ctx->port_lo = conf->port;
	ctx->port_hi = (uint16_t)(conf->port + b.nl - 1);
	ctx->lanes = b.nl;

	ctx->agg = shr_agg_create(&conf->params);
	if (ctx->agg == NULL) {
		fprintf(stderr, "shouter-agg: bench: shr_agg_create: %s\n", strerror(errno));
		goto out;
	}
	for (r = 0; r < B_WORLD; r++)
		b.addrs[r] = SHR_AGG_ADDR(b_ip(r), B_SRC_PORT);
	memset(&jc, 0, sizeof(jc));
	jc.job = B_JOB;
	jc.world = B_WORLD;
	jc.dtype = SHR_DTYPE_INT32;
	jc.window = B_WINDOW;
	jc.chunk_elems = b.elems;
	jc.token = B_TOKEN;	/* the DATA is built in advance */
	jc.addrs = b.addrs;
	rc = shr_agg_job_add(ctx->agg, &jc);
	if (rc < 0) {
		fprintf(stderr, "shouter-agg: bench: job: %s\n", strerror(-rc));
		goto out;
	}
	ctx->tx_cap = shr_agg_tx_cap(ctx->agg);

	/* the "NIC": one rx and one tx ring per lane; the harness steers frames by lane */
	for (q = 0; q < b.nl; q++) {
		snprintf(name, sizeof(name), "bench_rx%u", q);
		/* with several lanes, what one lcore can hand to another stays within a handoff
		 * ring: nothing is dropped for the harness's want of back-pressure */
		b.rx_r[q] = rte_ring_create(name, b.nl > 1 ? AGG_HANDOFF_RING / 2 : 4096, socket,
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "bench_tx%u", q);
		b.tx_r[q] = rte_ring_create(name, 16384, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (b.rx_r[q] == NULL || b.tx_r[q] == NULL)
			goto out;
	}
	port = rte_eth_from_rings("net_ring_shrbench", b.rx_r, b.nl, b.tx_r, b.nl, socket);
	if (port < 0) {
		fprintf(stderr, "shouter-agg: bench: ring device: %s\n", rte_strerror(rte_errno));
		goto out;
	}
	ctx->port_id = (uint16_t)port;
	if (agg_pools_create(ctx, b.nl, b.nl) < 0)
		goto out_port;
	ctx->zerocopy = true;
	if (agg_port_configure(ctx, ctx->port_id, b.nl) < 0 ||
	    agg_port_start(ctx, ctx->port_id, b.nl) < 0)
		goto out_port;
	agg_lanes_map(ctx);	/* no steering: the harness spreads the frames */
	if (!ctx->zerocopy)
		goto out_port;	/* net_ring advertises multi-segment tx: both modes are valid */
	for (q = 0; q < b.nl; q++) {
		struct agg_lcore *lc = rte_zmalloc("agg_lcore", sizeof(*lc), RTE_CACHE_LINE_SIZE);

		if (lc == NULL)
			goto out_lcore;
		lc->lcore_id = q == 0 ? rte_lcore_id() : workers[q - 1];
		lc->idx = (uint16_t)q;
		lc->queue = (uint16_t)q;
		lc->control = q == 0;
		ctx->lc[ctx->nlcores++] = lc;
		if (agg_lcore_init(ctx, lc) < 0)
			goto out_lcore;
		lc->last_drain = lc->last_tick = rte_rdtsc();
	}
	b.lc = ctx->lc[0];

	b.feed_pool = rte_pktmbuf_pool_create("bench_feed", B_NPKT, 0, 0,
					      RTE_PKTMBUF_HEADROOM +
					      RTE_MAX(2048u, AGG_HDR_LEN + b_msg_len(&b)), socket);
	if (b.feed_pool == NULL || rte_pktmbuf_alloc_bulk(b.feed_pool, b.pkts, B_NPKT) != 0)
		goto out_lcore;
	i = 0;
	for (v = 0; v < B_ROUNDS; v++) {
		for (s = 0; s < B_WINDOW; s++) {
			for (r = 0; r < B_WORLD; r++, i++) {
				uint16_t len = (uint16_t)(AGG_HDR_LEN + b_msg_len(&b));
				uint8_t *p = (uint8_t *)rte_pktmbuf_append(b.pkts[i], len);

				b_build(&b, p, r, s, v);
				b.lane[i] = (uint16_t)(s % b.nl);
				b.flow[i] = (uint16_t)(r % b.nl);
			}
		}
	}
	b_running = &b;
	b.workers = b.nl > 1;
	for (q = 1; q < b.nl; q++)
		rte_eal_remote_launch(b_worker, ctx->lc[q], ctx->lc[q]->lcore_id);
	launched = true;

	/* several lanes: spread by flow (the software handoff, as on af_packet), then by lane */
	mpps_zc = b_run(&b, true, b.nl > 1, conf->bench_s);
	if (mpps_zc < 0)
		goto out_lcore;
	cpu_zc = b.cpu_mpps;
	handed = b.handed;
	memcpy(share, b.cpu_share, sizeof(share));
	memcpy(busy, b.busy, sizeof(busy));
	mpps_copy = b_run(&b, false, b.nl > 1, conf->bench_s);
	if (mpps_copy < 0)
		goto out_lcore;
	cpu_copy = b.cpu_mpps;
	if (!conf->zerocopy)
		handed = b.handed;
	if (b.nl > 1) {
		mpps_steered = b_run(&b, conf->zerocopy, false, conf->bench_s);
		if (mpps_steered < 0)
			goto out_lcore;
		handed_steered = b.handed;
	}
	b_stop_workers(&b);
	launched = false;
	if (b.nl > 1) {
		if (agg_bench_handoff_cost(&b, conf->bench_s, &handoff_ns, &steered_ns) < 0)
			goto out_lcore;
	}
	rc = agg_bench_kernels(&b, conf->bench_s, &k);
	if (agg_quit) {
		/* whichever phase the signal cut short, its figures are not the bench's */
		fprintf(stderr, "shouter-agg: bench: interrupted (a signal): no figures\n");
		goto out_lcore;
	}
	if (rc < 0)
		goto out_lcore;
	mpps = conf->zerocopy ? mpps_zc : mpps_copy;
	printf("bench: job world=%u int32 chunk=%u elems (%u B) window=%u, %u frames/pass, "
	       "lanes=%u, mode=%s\n", B_WORLD, b.elems, b.elems * 4, B_WINDOW, B_NPKT, b.nl,
	       conf->zerocopy ? "zero-copy" : "copy");
	/* the whole box: DATA frames/s over its nl data lcores (lane 0's also feeds them) */
	b_fig("agg_mpps_total", mpps);
	if (b.nl > 1)
		printf("lanes=%u: queues spread by flow, %.3f of the DATA handed to its lane's "
		       "lcore; spread by lane (steered): agg_mpps_steered=%.3f (%.3f handed)\n",
		       b.nl, handed, mpps_steered, handed_steered);
	if (b.nl > 1) {
		/* a busy-polling lcore is on a CPU all the time unless the machine is shared */
		printf("cpu_share:");
		for (q = 0; q < b.nl; q++)
			printf(" lcore%u=%.2f", q, share[q]);
		printf(" (each data lcore's CPU time over wall time, by-flow zero-copy run);"
		       " busy (polls that found work, of the wall time):");
		for (q = 1; q < b.nl; q++)
			printf(" lcore%u=%.2f", q, busy[q]);
		printf("\n");
	}
	if (b.nl > 1)
		printf("handoff_ns_per_frame=%.1f (CPU time one lcore adds per DATA handed to "
		       "another, both on this thread; %.1f ns per DATA steered)\n", handoff_ns,
		       steered_ns);
	b_fig("agg_mpps_per_lcore", mpps / b.nl);
	b_fig("agg_gbps_per_lcore", mpps / b.nl * 1e6 * b.elems * 4 * 8 / 1e9);
	b_fig("kernel_mpps", k.roof);
	b_fig("agg_vs_roofline", mpps / b.nl / k.roof);
	/* the per-job MAC's cost: the roofline with GMAC verify (and a signed RESULT a round) */
	printf("kernel_mac_mpps=%.3f (CRC32C + AES-128-GMAC verify + replay window + SUM, one "
	       "RESULT signed per %u chunks)\n", k.mac, B_WORLD);
	b_fig("mac_vs_crc", k.mac / k.roof);
	printf("zc_mpps=%.3f copy_mpps=%.3f\n", mpps_zc, mpps_copy);
	b_fig("zc_vs_copy", mpps_zc / mpps_copy);
	/* reproducible float sums: the exact kernel's goodput over the streaming one's */
	printf("f32_stream_gbps=%.3f f32_exact_gbps=%.3f (kernels: CRC32C + SUM, %u-element "
	       "chunks)\n", k.f_stream * 1e6 * b.elems * 4 * 8 / 1e9,
	       k.f_exact * 1e6 * b.elems * 4 * 8 / 1e9, b.elems);
	b_fig("repro_vs_stream", k.f_exact / k.f_stream);
	/* the CRC32C versions on one DATA (where the CPU cannot fold, shr_crc32c_fold() runs
	 * shr_crc32c_hw(): the ratios read about 1) */
	printf("crc_ns_hw=%.1f crc_ns_fold=%.1f crc_ns_hw_hot=%.1f crc_ns_fold_hot=%.1f (CPU ns "
	       "per CRC32C of a DATA's %u bytes: each DATA in turn, and one DATA in L1; "
	       "shr_crc32c() runs %s)\n", k.crc_hw, k.crc_fold, k.crc_hw_hot, k.crc_fold_hot,
	       b_msg_len(&b), shr_crc32c_impl());
	b_fig("crc_fold_vs_hw", k.crc_hw > 0 && k.crc_fold > 0 ? k.crc_hw / k.crc_fold : 0);
	b_fig("crc_fold_vs_hw_hot", k.crc_hw_hot > 0 && k.crc_fold_hot > 0 ?
	      k.crc_hw_hot / k.crc_fold_hot : 0);
	if (b.nl == 1) {
		/* the same, per second of CPU time: steadier on a shared machine */
		double cpu = conf->zerocopy ? cpu_zc : cpu_copy;

		printf("cpu: agg_mpps_per_lcore=%.3f kernel_mpps=%.3f agg_vs_roofline=%.3f "
		       "zc_mpps=%.3f copy_mpps=%.3f repro_vs_stream=%.3f mac_vs_crc=%.3f\n", cpu,
		       k.cpu_roof, cpu / k.cpu_roof, cpu_zc, cpu_copy, k.cpu_exact / k.cpu_stream,
		       k.cpu_mac / k.cpu_roof);
	}
	fflush(stdout);
	ret = 0;
out_lcore:
	if (launched)
		b_stop_workers(&b);
	for (q = 0; q < b.nl; q++) {
		struct rte_mbuf *m;

		while (rte_ring_sc_dequeue(b.rx_r[q], (void **)&m) == 0)
			rte_pktmbuf_free(m);
	}
	b_drain(&b);
	/* the lcores' handoff rings first: they hold the data path's references of the frames
	 * still handed (an interrupted pass), which would be freed once more below */
	for (q = 0; q < ctx->nlcores; q++) {
		agg_lcore_fini(ctx->lc[q]);
		rte_free(ctx->lc[q]);
	}
	if (b.feed_pool != NULL) {
		for (i = 0; i < B_NPKT; i++)
			if (b.pkts[i] != NULL) {
				rte_mbuf_refcnt_set(b.pkts[i], 1);
				rte_pktmbuf_free(b.pkts[i]);
			}
	}
out_port:
	rte_eth_dev_stop(ctx->port_id);
	rte_eth_dev_close(ctx->port_id);
out:
	rte_mempool_free(b.feed_pool);
	agg_pools_free(ctx);
	for (q = 0; q < b.nl; q++) {
		rte_ring_free(b.tx_r[q]);
		rte_ring_free(b.rx_r[q]);
	}
	shr_agg_free(ctx->agg);
	rte_free(ctx);
	return ret;
}
