/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Counters on read: per-lcore blocks summed, the telemetry commands under /shouter/, the
 * --stats line and the final counters.
 */

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include "agg_private.h"

/*
 * The box the handlers read, NULL once it is being freed: DPDK's telemetry thread answers
 * until the process exits, so each handler holds tel_lock while it reads (tel_hold()), and
 * agg_telemetry_fini() takes it to clear tel_ctx before the box is freed.
 */
static struct agg_ctx *tel_ctx;
static rte_spinlock_t tel_lock = RTE_SPINLOCK_INITIALIZER;

/*
 * Entries per reply: DPDK 22.11 writes a reply into 16 KiB and leaves out, without a word,
 * what does not fit. An lcore's counters take about 2.5 KB, a job about 250 bytes; a reply
 * that would hold more says how many it left out ("truncated"), and a parameter asks for one.
 */
#define TEL_MAX_LCORES 5
#define TEL_MAX_JOBS 48

static struct agg_ctx *
tel_hold(void)
{
	rte_spinlock_lock(&tel_lock);
	if (tel_ctx == NULL)
		rte_spinlock_unlock(&tel_lock);
	return tel_ctx;
}

static void
tel_release(void)
{
	rte_spinlock_unlock(&tel_lock);
}

/* The command's parameter: none (1 returned, *v untouched), a number 0..max (0), or -EINVAL. */
static int
tel_param(const char *params, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (params == NULL || *params == '\0')
		return 1;
	if (*params < '0' || *params > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(params, &end, 10);
	if (errno != 0 || *end != '\0' || x > max)
		return -EINVAL;
	*v = x;
	return 0;
}

struct agg_counter {
	const char *name;
	size_t off;
};

static const struct agg_counter lcore_counters[] = {
#define AGG_X_NAME(n) { #n, offsetof(struct agg_lcore_stats, n) },
	AGG_LCORE_COUNTERS(AGG_X_NAME)
#undef AGG_X_NAME
};

#define AGG_C(n) { #n, offsetof(struct agg_lcore_stats, agg.n) }
static const struct agg_counter agg_counters[] = {
	AGG_C(rx), AGG_C(data), AGG_C(completed), AGG_C(resent), AGG_C(nudges), AGG_C(hints),
	AGG_C(duplicates), AGG_C(bytes_summed), AGG_C(tx_msgs), AGG_C(tx_dsts), AGG_C(joins),
	AGG_C(leaves), AGG_C(jobs_created), AGG_C(jobs_freed), AGG_C(aborts), AGG_C(reaborts),
	AGG_C(stale), AGG_C(incarnations), AGG_C(idle_reclaims), AGG_C(challenges),
	AGG_C(challenges_limited),
	AGG_C(mismatches), AGG_C(up_data), AGG_C(up_resent), AGG_C(up_results), AGG_C(up_stale),
	AGG_C(up_joins), AGG_C(up_aborts),
};
#undef AGG_C

static inline uint64_t
ctr(const struct agg_lcore_stats *s, size_t off)
{
	return *(const uint64_t *)((const uint8_t *)s + off);
}

static uint64_t
rejects_total(const struct agg_lcore_stats *s)
{
	uint64_t t = 0;
	unsigned int r;

	for (r = 1; r < SHR_PROTO_REASON_MAX; r++)
		t += s->agg.rejects[r];
	return t;
}

void
agg_stats_sum(const struct agg_ctx *ctx, struct agg_lcore_stats *sum)
{
	uint32_t i;
	size_t k;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < ctx->nlcores; i++) {
		const struct agg_lcore_stats *s = &ctx->lc[i]->st;

		for (k = 0; k < RTE_DIM(lcore_counters); k++)
			*(uint64_t *)((uint8_t *)sum + lcore_counters[k].off) +=
				ctr(s, lcore_counters[k].off);
		shr_agg_stats_add(&sum->agg, &s->agg);
	}
}

static void
tel_add_stats(struct rte_tel_data *d, const struct agg_lcore_stats *s)
{
	char key[64];
	size_t k;
	unsigned int r;

	for (k = 0; k < RTE_DIM(lcore_counters); k++)
		rte_tel_data_add_dict_u64(d, lcore_counters[k].name, ctr(s, lcore_counters[k].off));
	for (k = 0; k < RTE_DIM(agg_counters); k++) {
		snprintf(key, sizeof(key), "msg_%s", agg_counters[k].name);
		rte_tel_data_add_dict_u64(d, key, ctr(s, agg_counters[k].off));
	}
	rte_tel_data_add_dict_u64(d, "rejects", rejects_total(s));
	for (r = 1; r < SHR_PROTO_REASON_MAX; r++) {
		snprintf(key, sizeof(key), "reject_%s", shr_proto_reason_str(r));
		rte_tel_data_add_dict_u64(d, key, s->agg.rejects[r]);
	}
	for (r = 0; r < SHR_KIND_MAX; r++) {
		snprintf(key, sizeof(key), "rounds_%s", shr_proto_kind_str(r));
		rte_tel_data_add_dict_u64(d, key, s->agg.kind_rounds[r]);
	}
}

/* The device's own counters (frames the PMD or the kernel dropped before we saw them). */
static void
tel_add_port(struct rte_tel_data *d, uint16_t port_id)
{
	struct rte_eth_stats es;

	if (rte_eth_stats_get(port_id, &es) != 0)
		return;
	rte_tel_data_add_dict_u64(d, "port_ipackets", es.ipackets);
	rte_tel_data_add_dict_u64(d, "port_opackets", es.opackets);
	rte_tel_data_add_dict_u64(d, "port_imissed", es.imissed);
	rte_tel_data_add_dict_u64(d, "port_ierrors", es.ierrors);
	rte_tel_data_add_dict_u64(d, "port_oerrors", es.oerrors);
	rte_tel_data_add_dict_u64(d, "port_rx_nombuf", es.rx_nombuf);
}

static int
tel_stats(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct agg_lcore_stats sum;
	struct agg_ctx *ctx;

	if (params != NULL && *params != '\0')
		return -EINVAL;
	ctx = tel_hold();
	if (ctx == NULL)
		return -ENODEV;
	agg_stats_sum(ctx, &sum);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "lcores", ctx->nlcores);
	rte_tel_data_add_dict_u64(d, "queues", ctx->nq);
	rte_tel_data_add_dict_u64(d, "steering", ctx->steering);
	rte_tel_data_add_dict_u64(d, "zerocopy", ctx->zerocopy);
	rte_tel_data_add_dict_u64(d, "vlan", ctx->conf->vlan);
	tel_add_port(d, ctx->port_id);
	tel_add_stats(d, &sum);
	tel_release();
	return 0;
}

/* Each data lcore's counters (at most TEL_MAX_LCORES), or lcore N's (parameter N). */
static int
tel_lcores(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	uint64_t want = UINT64_MAX;
	struct rte_tel_data *c;
	struct agg_ctx *ctx;
	uint32_t i, n = 0;
	char key[32];
	int rc = 0;

	if (tel_param(params, RTE_MAX_LCORE - 1, &want) < 0)
		return -EINVAL;
	ctx = tel_hold();
	if (ctx == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (i = 0; i < ctx->nlcores; i++) {
		const struct agg_lcore *lc = ctx->lc[i];

		if (want != UINT64_MAX && lc->lcore_id != want)
			continue;
		if (n++ >= TEL_MAX_LCORES)
			continue;	/* counted below */
		c = rte_tel_data_alloc();
		if (c == NULL) {
			rc = -ENOMEM;
			break;
		}
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "queue", lc->queue);
		rte_tel_data_add_dict_u64(c, "control", lc->control);
		tel_add_stats(c, &lc->st);
		snprintf(key, sizeof(key), "%u", lc->lcore_id);
		if (rte_tel_data_add_dict_container(d, key, c, 0) != 0)
			rte_tel_data_free(c);
	}
	tel_release();
	if (rc == 0 && want != UINT64_MAX && n == 0)
		rc = -ENOENT;	/* not a data lcore */
	if (rc == 0 && n > TEL_MAX_LCORES)
		rte_tel_data_add_dict_u64(d, "truncated", n - TEL_MAX_LCORES);
	return rc;
}

/* The jobs (at most TEL_MAX_JOBS), or job N's (parameter N). */
static int
tel_jobs(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct shr_agg_job_info info;
	uint64_t want = UINT64_MAX;
	struct rte_tel_data *c;
	struct agg_ctx *ctx;
	uint32_t idx, n = 0;
	char key[32];
	int rc;

	if (tel_param(params, UINT32_MAX, &want) < 0)
		return -EINVAL;
	ctx = tel_hold();
	if (ctx == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	rte_spinlock_lock(&ctx->ctl_lock);
	for (idx = 0;; idx++) {
		rc = shr_agg_job_info(ctx->agg, idx, &info);
		if (rc < 0)
			break;
		if (rc == 0 || (want != UINT64_MAX && info.job != want))
			continue;
		if (n++ >= TEL_MAX_JOBS)
			continue;	/* counted below */
		c = rte_tel_data_alloc();
		if (c == NULL)
			break;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "world", info.world);
		rte_tel_data_add_dict_u64(c, "joined", info.joined);
		rte_tel_data_add_dict_string(c, "dtype", shr_proto_dtype_str(info.dtype));
		rte_tel_data_add_dict_u64(c, "active", info.active);
		rte_tel_data_add_dict_u64(c, "static", info.is_static);
		rte_tel_data_add_dict_u64(c, "window", info.window);
		rte_tel_data_add_dict_u64(c, "chunk_elems", info.chunk_elems);
		rte_tel_data_add_dict_u64(c, "slot_base", info.slot_base);
		rte_tel_data_add_dict_u64(c, "repro", info.repro);
		rte_tel_data_add_dict_u64(c, "up_state", info.up_state);
		rte_tel_data_add_dict_u64(c, "up_pending", info.up_pending);
		rte_tel_data_add_dict_u64(c, "incarnation", info.incarnation);
		snprintf(key, sizeof(key), "%u", info.job);
		if (rte_tel_data_add_dict_container(d, key, c, 0) != 0) {
			rte_tel_data_free(c);
			break;
		}
	}
	rte_spinlock_unlock(&ctx->ctl_lock);
	tel_release();
	if (want != UINT64_MAX && n == 0)
		return -ENOENT;	/* no such job */
	if (n > TEL_MAX_JOBS)
		rte_tel_data_add_dict_u64(d, "truncated", n - TEL_MAX_JOBS);
	return 0;
}

static void
tel_add_mempool(struct rte_tel_data *d, const char *name, const struct rte_mempool *mp)
{
	char key[64];

	if (mp == NULL)
		return;
	snprintf(key, sizeof(key), "%s_in_use", name);
	rte_tel_data_add_dict_u64(d, key, rte_mempool_in_use_count(mp));
	snprintf(key, sizeof(key), "%s_avail", name);
	rte_tel_data_add_dict_u64(d, key, rte_mempool_avail_count(mp));
	snprintf(key, sizeof(key), "%s_elt_size", name);
	rte_tel_data_add_dict_u64(d, key, mp->elt_size);
}

static int
tel_pool(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct agg_ctx *ctx;
	uint32_t used;

	if (params != NULL && *params != '\0')
		return -EINVAL;
	ctx = tel_hold();
	if (ctx == NULL)
		return -ENODEV;
	rte_spinlock_lock(&ctx->ctl_lock);
	used = shr_agg_slots_used(ctx->agg);
	rte_spinlock_unlock(&ctx->ctl_lock);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "slots_used", used);
	rte_tel_data_add_dict_u64(d, "slots_total", ctx->conf->params.nslots);
	rte_tel_data_add_dict_u64(d, "repro_slots_total", ctx->conf->params.repro_slots);
	tel_add_mempool(d, "pkt_mbufs", ctx->pkt_pool);
	tel_add_mempool(d, "hdr_mbufs", ctx->hdr_pool);
	tel_release();
	return 0;
}

int
agg_telemetry_init(struct agg_ctx *ctx)
{
	int rc = 0;

	rte_spinlock_lock(&tel_lock);
	tel_ctx = ctx;
	rte_spinlock_unlock(&tel_lock);
	/* help texts: under RTE_TEL_MAX_STRING_LEN (128), or the command is not registered */
	rc |= rte_telemetry_register_cmd("/shouter/stats", tel_stats,
		"Counters summed over the lcores, with every reject reason. No parameters.");
	rc |= rte_telemetry_register_cmd("/shouter/lcores", tel_lcores,
		"Each data lcore's counters, by lcore id (at most " RTE_STR(TEL_MAX_LCORES)
		"; truncated: how many left out). Parameter: an lcore id.");
	rc |= rte_telemetry_register_cmd("/shouter/jobs", tel_jobs,
		"Jobs, by job id (at most " RTE_STR(TEL_MAX_JOBS) "; truncated: how many left "
		"out). Parameter: a job id.");
	rc |= rte_telemetry_register_cmd("/shouter/pool", tel_pool,
		"Pool slots used/total and mbuf pools in use/available. No parameters.");
	return rc == 0 ? 0 : -EINVAL;
}

void
agg_telemetry_fini(void)
{
	rte_spinlock_lock(&tel_lock);	/* waits for a handler that holds the box */
	tel_ctx = NULL;
	rte_spinlock_unlock(&tel_lock);
}

void
agg_stats_line(struct agg_ctx *ctx, double dt_s)
{
	static struct agg_lcore_stats prev;
	struct agg_lcore_stats s;

	agg_stats_sum(ctx, &s);
	if (dt_s <= 0)
		dt_s = 1;
	printf("stats: rx=%" PRIu64 " tx=%" PRIu64 " data=%" PRIu64 " completed=%" PRIu64
	       " resent=%" PRIu64 " dup=%" PRIu64 " rejects=%" PRIu64 " drop_tx=%" PRIu64
	       " nombuf=%" PRIu64 " rx_mpps=%.3f tx_mpps=%.3f sum_gbps=%.3f\n",
	       s.rx_pkts, s.tx_pkts, s.agg.data, s.agg.completed, s.agg.resent,
	       s.agg.duplicates, rejects_total(&s), s.tx_drop, s.nombuf,
	       (double)(s.rx_pkts - prev.rx_pkts) / dt_s / 1e6,
	       (double)(s.tx_pkts - prev.tx_pkts) / dt_s / 1e6,
	       (double)(s.agg.bytes_summed - prev.agg.bytes_summed) * 8 / dt_s / 1e9);
	fflush(stdout);
	prev = s;
}

void
agg_stats_final(const struct agg_ctx *ctx)
{
	struct agg_lcore_stats s;
	struct rte_eth_stats es;
	size_t k;
	unsigned int r;

	agg_stats_sum(ctx, &s);
	if (rte_eth_stats_get(ctx->port_id, &es) == 0)
		printf("final: port_ipackets=%" PRIu64 " port_opackets=%" PRIu64 " port_imissed=%"
		       PRIu64 " port_ierrors=%" PRIu64 " port_oerrors=%" PRIu64
		       " port_rx_nombuf=%" PRIu64 "\n", es.ipackets, es.opackets, es.imissed,
		       es.ierrors, es.oerrors, es.rx_nombuf);
	printf("final:");
	for (k = 0; k < RTE_DIM(lcore_counters); k++)
		printf(" %s=%" PRIu64, lcore_counters[k].name, ctr(&s, lcore_counters[k].off));
	printf("\nfinal:");
	for (k = 0; k < RTE_DIM(agg_counters); k++)
		printf(" msg_%s=%" PRIu64, agg_counters[k].name, ctr(&s, agg_counters[k].off));
	printf(" rejects=%" PRIu64 "\nfinal:", rejects_total(&s));
	for (r = 1; r < SHR_PROTO_REASON_MAX; r++)
		printf(" reject_%s=%" PRIu64, shr_proto_reason_str(r), s.agg.rejects[r]);
	printf("\n");
	fflush(stdout);
}
