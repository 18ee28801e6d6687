/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Counters on read: per-lcore blocks summed, the telemetry commands under /shouter/, the
 * --stats line and the final counters.
 */

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "agg_private.h"

static struct agg_ctx *tel_ctx;

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
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	struct agg_lcore_stats sum;

	agg_stats_sum(tel_ctx, &sum);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "lcores", tel_ctx->nlcores);
	rte_tel_data_add_dict_u64(d, "queues", tel_ctx->nq);
	rte_tel_data_add_dict_u64(d, "steering", tel_ctx->steering);
	rte_tel_data_add_dict_u64(d, "zerocopy", tel_ctx->zerocopy);
	rte_tel_data_add_dict_u64(d, "vlan", tel_ctx->conf->vlan);
	tel_add_port(d, tel_ctx->port_id);
	tel_add_stats(d, &sum);
	return 0;
}

static int
tel_lcores(const char *cmd __rte_unused, const char *params __rte_unused,
	   struct rte_tel_data *d)
{
	struct rte_tel_data *c;
	char key[32];
	uint32_t i;

	rte_tel_data_start_dict(d);
	for (i = 0; i < tel_ctx->nlcores; i++) {
		const struct agg_lcore *lc = tel_ctx->lc[i];

		c = rte_tel_data_alloc();
		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "queue", lc->queue);
		rte_tel_data_add_dict_u64(c, "control", lc->control);
		tel_add_stats(c, &lc->st);
		snprintf(key, sizeof(key), "%u", lc->lcore_id);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

static int
tel_jobs(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	struct shr_agg_job_info info;
	struct rte_tel_data *c;
	char key[32];
	uint32_t idx;
	int rc;

	rte_tel_data_start_dict(d);
	rte_spinlock_lock(&tel_ctx->ctl_lock);
	for (idx = 0;; idx++) {
		rc = shr_agg_job_info(tel_ctx->agg, idx, &info);
		if (rc < 0)
			break;
		if (rc == 0)
			continue;
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
	rte_spinlock_unlock(&tel_ctx->ctl_lock);
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
tel_pool(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	uint32_t used;

	rte_spinlock_lock(&tel_ctx->ctl_lock);
	used = shr_agg_slots_used(tel_ctx->agg);
	rte_spinlock_unlock(&tel_ctx->ctl_lock);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "slots_used", used);
	rte_tel_data_add_dict_u64(d, "slots_total", tel_ctx->conf->params.nslots);
	rte_tel_data_add_dict_u64(d, "repro_slots_total", tel_ctx->conf->params.repro_slots);
	tel_add_mempool(d, "pkt_mbufs", tel_ctx->pkt_pool);
	tel_add_mempool(d, "hdr_mbufs", tel_ctx->hdr_pool);
	return 0;
}

int
agg_telemetry_init(struct agg_ctx *ctx)
{
	int rc = 0;

	tel_ctx = ctx;
	rc |= rte_telemetry_register_cmd("/shouter/stats", tel_stats,
		"Counters summed over the lcores, with every reject reason. No parameters.");
	rc |= rte_telemetry_register_cmd("/shouter/lcores", tel_lcores,
		"Counters of each data lcore, keyed by lcore id. No parameters.");
	rc |= rte_telemetry_register_cmd("/shouter/jobs", tel_jobs,
		"Jobs, keyed by job id. No parameters.");
	rc |= rte_telemetry_register_cmd("/shouter/pool", tel_pool,
		"Pool slots used/total and mbuf pools in use/available. No parameters.");
	return rc == 0 ? 0 : -EINVAL;
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
