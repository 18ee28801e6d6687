/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The data lcore loop. Every data lcore polls its own rx queue (32 frames a burst), hands the
 * burst to agg_process_burst() and sends through its own tx queue via an rte_eth_tx_buffer,
 * drained every AGG_DRAIN_US (and whenever a poll comes back empty). Data lcore 0 is the
 * control lcore: it also handles the messages that change the job table (JOIN, LEAVE; the
 * other lcores forward those to it through a ring) and calls shr_agg_tick().
 *
 * With several queues, a job-table change must not race with DATA on the other lcores. The
 * control lcore makes pause_gen odd and waits until every other data lcore has parked (at the
 * top of its loop, between bursts) for that generation; it makes it even again when done.
 * The data lcores pay one read of a shared, read-mostly cache line per poll for this.
 *
 * Each data lcore also drains its handoff ring every poll: the DATA of its lanes that the
 * other lcores received (agg_dp.c). A parked lcore's ring fills meanwhile, and what does not
 * fit is dropped (lane_drop) and recovered as any loss is.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "agg_private.h"

void
agg_ctx_time(struct agg_ctx *ctx)
{
	uint64_t tick_us = ctx->conf->params.job_timeout_ns / 1000 / 10;

	/* a tenth of the job timeout, within [1 ms, AGG_TICK_US]: with several queues every
	 * tick parks the other data lcores for a moment */
	if (tick_us == 0 || tick_us > AGG_TICK_US)
		tick_us = AGG_TICK_US;
	tick_us = RTE_MAX(tick_us, (uint64_t)1000);
	ctx->tsc_hz = rte_get_tsc_hz();
	ctx->ns_per_tsc = 1e9 / (double)ctx->tsc_hz;
	ctx->drain_tsc = (ctx->tsc_hz + 999999) / 1000000 * AGG_DRAIN_US;
	ctx->tick_tsc = (ctx->tsc_hz + 999999) / 1000000 * tick_us;
}

void
agg_lcore_flush(struct agg_lcore *lc)
{
	lc->st.tx_pkts += rte_eth_tx_buffer_flush(lc->ctx->port_id, lc->queue, lc->txb);
}

void
agg_ctl_pause(struct agg_ctx *ctx)
{
	uint64_t g;
	uint32_t i;

	if (ctx->nq <= 1)
		return;
	g = ctx->pause_gen + 1;	/* odd */
	__atomic_store_n(&ctx->pause_gen, g, __ATOMIC_SEQ_CST);
	for (i = 1; i < ctx->nlcores; i++)
		while (__atomic_load_n(&ctx->lc[i]->parked_gen, __ATOMIC_ACQUIRE) != g &&
		       !agg_quit && !ctx->stop)
			rte_pause();
}

void
agg_ctl_resume(struct agg_ctx *ctx)
{
	if (ctx->nq <= 1)
		return;
	__atomic_store_n(&ctx->pause_gen, ctx->pause_gen + 1, __ATOMIC_RELEASE);
}

static void
agg_park(struct agg_lcore *lc, uint64_t g)
{
	agg_lcore_flush(lc);
	__atomic_store_n(&lc->parked_gen, g, __ATOMIC_RELEASE);
	while (__atomic_load_n(&lc->ctx->pause_gen, __ATOMIC_ACQUIRE) == g && !agg_quit &&
	       !lc->ctx->stop)
		rte_pause();
}

/* Control messages forwarded by the other lcores (counted as received there). */
static void
agg_ctl_drain(struct agg_lcore *lc, uint64_t now_ns)
{
	struct rte_mbuf *ms[AGG_BURST];
	unsigned int n;

	n = rte_ring_sc_dequeue_burst(lc->ctx->ctl_ring, (void **)ms, AGG_BURST, NULL);
	if (n != 0)
		agg_process_burst(lc, ms, (uint16_t)n, now_ns, true);
}

/* DATA of our lanes that the other lcores received. */
static uint16_t
agg_handoff_drain(struct agg_lcore *lc, uint64_t now_ns)
{
	struct rte_mbuf *ms[AGG_BURST];
	unsigned int n;

	n = rte_ring_sc_dequeue_burst(lc->handoff, (void **)ms, AGG_BURST, NULL);
	if (n != 0) {
		lc->st.lane_in += n;
		agg_process_burst(lc, ms, (uint16_t)n, now_ns, true);
	}
	return (uint16_t)n;
}

uint16_t
agg_lcore_poll(struct agg_lcore *lc)
{
	struct agg_ctx *ctx = lc->ctx;
	struct rte_mbuf *pkts[AGG_BURST];
	uint64_t tsc, g;
	uint16_t n;

	if (ctx->nq > 1 && !lc->control) {
		g = __atomic_load_n(&ctx->pause_gen, __ATOMIC_ACQUIRE);
		if (unlikely(g & 1))
			agg_park(lc, g);
	}
	n = rte_eth_rx_burst(ctx->port_id, lc->queue, pkts, AGG_BURST);
	tsc = rte_rdtsc();
	if (n != 0)
		agg_process_burst(lc, pkts, n, agg_tsc_ns(ctx, tsc), false);
	if (ctx->dispatch)
		n += agg_handoff_drain(lc, agg_tsc_ns(ctx, tsc));
	if (n == 0 || tsc - lc->last_drain > ctx->drain_tsc) {
		agg_lcore_flush(lc);
		lc->last_drain = tsc;
	}
	if (lc->control) {
		if (ctx->nq > 1)
			agg_ctl_drain(lc, agg_tsc_ns(ctx, tsc));
		if (tsc - lc->last_tick > ctx->tick_tsc) {
			agg_tick(lc, agg_tsc_ns(ctx, tsc));
			lc->last_tick = tsc;
		}
	}
	return n;
}

/*
 * An empty poll of an lcore that may sleep (--idle-us): it sleeps once it has polled
 * AGG_IDLE_POLLS times in a row and idle_after_tsc has passed since the first of them, then
 * at each empty poll until traffic comes. Spinning that long after traffic keeps a job that
 * sends every few tens of microseconds (a latency-bound loop) from waiting out a sleep at
 * every round; a box with nothing to do sleeps all the same.
 */
static void
agg_lcore_idle(struct agg_lcore *lc, uint64_t idle_after_tsc)
{
	const struct agg_conf *conf = lc->ctx->conf;

	if (lc->idle_polls == 0)
		lc->idle_since = rte_rdtsc();
	if (lc->idle_polls < AGG_IDLE_POLLS) {
		lc->idle_polls++;
		return;
	}
	if (rte_rdtsc() - lc->idle_since < idle_after_tsc)
		return;
	agg_lcore_flush(lc);
	rte_delay_us_sleep(conf->idle_us);
	lc->st.idle_sleeps++;
}

int
agg_lcore_main(void *arg)
{
	struct agg_lcore *lc = arg;
	struct agg_ctx *ctx = lc->ctx;
	const struct agg_conf *conf = ctx->conf;
	bool stats = conf->stats_s != 0 && lc->lcore_id == rte_get_main_lcore();
	uint64_t stats_tsc = conf->stats_s * ctx->tsc_hz;
	uint64_t idle_after_tsc = (uint64_t)conf->idle_after_us * ctx->tsc_hz / 1000000;
	uint64_t now;

	AGG_LOG(INFO, "lcore %u: rx/tx queue %u%s", lc->lcore_id, lc->queue,
		lc->control ? " (control)" : "");
	/*
	 * An idle lcore sleeps --idle-us at a time. The kernel's default timer slack (50 us)
	 * would stretch each sleep by up to that much, and a datagram that comes meanwhile
	 * waits for it (README, --idle-us).
	 */
	if (conf->idle_us != 0 && prctl(PR_SET_TIMERSLACK, AGG_IDLE_SLACK_NS, 0, 0, 0) != 0)
		AGG_LOG(WARNING, "lcore %u: timer slack not set (%s): an idle sleep may overrun",
			lc->lcore_id, strerror(errno));
	else if (conf->idle_us != 0)
		AGG_LOG(INFO, "lcore %u: idle sleeps of %u us, timer slack %d ns", lc->lcore_id,
			conf->idle_us, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	lc->last_drain = lc->last_tick = lc->last_stats = rte_rdtsc();
	while (!agg_quit && !ctx->stop) {
		if (agg_lcore_poll(lc) != 0)
			lc->idle_polls = 0;
		else if (conf->idle_us != 0)
			agg_lcore_idle(lc, idle_after_tsc);
		if (stats) {
			now = rte_rdtsc();
			if (now - lc->last_stats >= stats_tsc) {
				agg_stats_line(ctx, (double)(now - lc->last_stats) / ctx->tsc_hz);
				lc->last_stats = now;
			}
		}
	}
	agg_lcore_flush(lc);
	return 0;
}

void
agg_lanes_map(struct agg_ctx *ctx)
{
	uint16_t l;

	for (l = 0; l < AGG_MAX_LANES; l++)
		ctx->lane_lc[l] = (uint8_t)(l < ctx->lanes ? l % ctx->nq : 0);
	ctx->dispatch = ctx->nq > 1;
}

int
agg_lcore_init(struct agg_ctx *ctx, struct agg_lcore *lc)
{
	int socket = (int)rte_lcore_to_socket_id(lc->lcore_id);
	uint32_t entries = agg_neigh_entries(ctx->conf);
	uint64_t timeout = ctx->conf->params.job_timeout_ns != 0 ?
			   ctx->conf->params.job_timeout_ns : AGG_DEF_TIMEOUT_NS;
	uint64_t pin = (AGG_NEIGH_PIN_TIMEOUTS * timeout) >> AGG_NEIGH_TIME_SHIFT;

	lc->ctx = ctx;
	lc->neigh_mask = entries - 1;
	lc->neigh_shift = 32 - rte_log2_u32(entries);
	/* within half the clock's range, so that the wrapping comparisons hold */
	pin = RTE_MIN(pin, (uint64_t)1 << 30);
	lc->neigh_pin = (uint32_t)RTE_MAX(pin, (uint64_t)2);
	agg_hdr_tmpl_init(lc);
	lc->txb = rte_zmalloc_socket("agg_txb", RTE_ETH_TX_BUFFER_SIZE(AGG_BURST), 0, socket);
	lc->scratch = rte_malloc_socket("agg_scratch", ctx->tx_cap, RTE_CACHE_LINE_SIZE, socket);
	lc->fan_mac = rte_malloc_socket("agg_fan", SHR_PROTO_MAX_WORLD * sizeof(*lc->fan_mac),
					RTE_CACHE_LINE_SIZE, socket);
	lc->fan_dst = rte_malloc_socket("agg_fan", SHR_PROTO_MAX_WORLD * sizeof(*lc->fan_dst),
					RTE_CACHE_LINE_SIZE, socket);
	lc->neigh = rte_zmalloc_socket("agg_neigh", (size_t)entries * sizeof(*lc->neigh),
				       RTE_CACHE_LINE_SIZE, socket);
	if (ctx->nq > 1) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "agg_hand_%u_%u", ctx->port_id, lc->idx);
		lc->handoff = rte_ring_create(name, AGG_HANDOFF_RING, socket, RING_F_SC_DEQ);
	}
	if (lc->txb == NULL || lc->scratch == NULL || lc->fan_mac == NULL ||
	    lc->fan_dst == NULL || lc->neigh == NULL || (ctx->nq > 1 && lc->handoff == NULL)) {
		agg_lcore_fini(lc);
		return -ENOMEM;
	}
	rte_eth_tx_buffer_init(lc->txb, AGG_BURST);
	rte_eth_tx_buffer_set_err_callback(lc->txb, rte_eth_tx_buffer_count_callback,
					   &lc->st.tx_drop);
	return 0;
}

void
agg_lcore_fini(struct agg_lcore *lc)
{
	struct rte_mbuf *m;

	if (lc->spare != NULL)
		rte_pktmbuf_free(lc->spare);
	lc->spare = NULL;
	if (lc->handoff != NULL) {
		while (rte_ring_sc_dequeue(lc->handoff, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(lc->handoff);
		lc->handoff = NULL;
	}
	rte_free(lc->neigh);
	lc->neigh = NULL;
	rte_free(lc->fan_dst);
	rte_free(lc->fan_mac);
	rte_free(lc->scratch);
	rte_free(lc->txb);
	lc->fan_dst = NULL;
	lc->fan_mac = NULL;
	lc->scratch = NULL;
	lc->txb = NULL;
}
