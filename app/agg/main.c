/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * shouter-agg: the aggregation appliance. EAL arguments, then `--`, then the options of
 * agg_config.c. Port 0 is the wire; the worker lcores are the data lcores, and the main lcore
 * too (as data lcore 0) when there is no worker or --lanes asks for more lcores than there
 * are workers (-l 0,1 --lanes 2: two data lcores on two cores); data lcore 0 is also the
 * control lcore. See agg_port.c for how lanes map to queues (steering or software handoff),
 * agg_dp.c for the data path.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_pdump.h>
#include <rte_ring.h>

#include <shr_drv_ethdev.h>

#include "agg_private.h"

RTE_LOG_REGISTER(agg_logtype, shouter.agg, INFO);

volatile bool agg_quit;

static void
agg_on_signal(int sig __rte_unused)
{
	agg_quit = true;
}

static int
agg_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = agg_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
		return -errno;
	return 0;
}

static const char *
job_add_err(int rc)
{
	switch (rc) {
	case -EINVAL:
		return "a field is out of range (world <= max-world, window <= the pool's "
		       "max window, chunk <= max-elems, dtype known)";
	case -EEXIST:
		return "job id already in use";
	case -ENOSPC:
		return "no room: not enough free pool slots for its window (raise --nslots, or "
		       "--repro-slots for a repro job) or too many jobs (raise --max-jobs)";
	default:
		return strerror(-rc);
	}
}

/* Create the agg and its static jobs. 0, or -EINVAL (message printed: exit 2). */
static int
agg_create(struct agg_ctx *ctx, struct agg_conf *conf)
{
	uint32_t i;
	int rc;

	ctx->agg = shr_agg_create(&conf->params);
	if (ctx->agg == NULL) {
		fprintf(stderr, "shouter-agg: pool dimensions refused (%s): nslots=%u max-elems=%u "
			"max-world=%u max-jobs=%u lanes=%u (0: the default)\n", strerror(errno),
			conf->params.nslots,
			conf->params.max_elems, conf->params.max_world, conf->params.max_jobs,
			conf->params.lanes);
		return -EINVAL;
	}
	for (i = 0; i < conf->njobs; i++) {
		struct agg_job *j = &conf->jobs[i];

		j->conf.addrs = j->addrs;
		rc = shr_agg_job_add(ctx->agg, &j->conf);
		if (rc < 0) {
			fprintf(stderr, "shouter-agg: %s (world %u, %s, window %u, chunk %u): %s\n",
				j->origin, j->conf.world, shr_proto_dtype_str(j->conf.dtype),
				j->conf.window, j->conf.chunk_elems, job_add_err(rc));
			return -EINVAL;
		}
		AGG_LOG(INFO, "static job %u: world %u %s window %u chunk %u%s%s", j->conf.job,
			j->conf.world, shr_proto_dtype_str(j->conf.dtype), j->conf.window,
			j->conf.chunk_elems, j->addrs ? " (fixed addresses)" : " (bind on JOIN)",
			j->conf.ordered ? "" : ", unordered (stale copies not dropped)");
	}
	ctx->tx_cap = shr_agg_tx_cap(ctx->agg);
	return 0;
}

/* Bytes of MAC trailer a chunk's frame must leave room for (lib/mac). */
static uint32_t
agg_conf_mac_room(const struct agg_conf *conf)
{
	uint32_t i;

	for (i = 0; i < conf->njobs; i++)
		if (conf->jobs[i].conf.mac)
			return SHR_PROTO_MAC_LEN;
	return conf->params.mac ? SHR_PROTO_MAC_LEN : 0;
}

/* Who may JOIN: the allowlist in effect (the command line's, else the config file's). */
static void
log_admission(const struct agg_conf *conf)
{
	char buf[SHR_AUTH_ACL_MAX * 20 + 16];
	size_t off = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < conf->allow.n && off < sizeof(buf); i++) {
		uint32_t n = conf->allow.e[i].net;

		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%u.%u.%u.%u/%d",
					i == 0 ? "" : ", ", n >> 24, (n >> 16) & 0xff,
					(n >> 8) & 0xff, n & 0xff,
					__builtin_popcount(conf->allow.e[i].mask));
	}
	AGG_LOG(INFO, "admission: JOINs from %s%s%s", conf->allow.n == 0 ? "any address" : buf,
		conf->secret.len != 0 ? ", secret required" : "",
		conf->params.mac ? ", per-job MAC required" : "");
}

static int
agg_run(struct agg_conf *conf)
{
	struct agg_ctx *ctx;
	struct rte_eth_dev_info info;
	unsigned int workers[AGG_MAX_LCORES];
	unsigned int nworkers = 0, lcore, i, n;
	uint16_t lanes, ndata, nq_wanted;
	bool main_is_data, port_up = false;
	int rc, ret = 1;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (nworkers < AGG_MAX_LCORES)
			workers[nworkers++] = lcore;
	}
	lanes = conf->lanes != 0 ? conf->lanes : (uint16_t)RTE_MAX(nworkers, 1u);
	if ((uint32_t)conf->port + lanes - 1 > 65535) {
		fprintf(stderr, "shouter-agg: --port/--lanes: ports %u..%u exceed 65535\n",
			conf->port, conf->port + lanes - 1);
		return 2;
	}
	if (!rte_eth_dev_is_valid_port(0)) {
		fprintf(stderr, "shouter-agg: no port 0: give a device in the EAL arguments, e.g. "
			"--vdev net_af_packet0,iface=veth0 or --vdev net_pcap0,rx_pcap=IN,"
			"tx_pcap=OUT\n");
		return 1;	/* or a NIC not bound yet: a restart may find it */
	}
	conf->params.lanes = lanes;
	if (conf->params.nslots == 0)
		conf->params.nslots = SHR_AGG_DEF_NSLOTS;	/* explicit for telemetry */

	ctx = rte_zmalloc("agg_ctx", sizeof(*ctx), RTE_CACHE_LINE_SIZE);
	if (ctx == NULL)
		return 1;
	ctx->conf = conf;
	rte_spinlock_init(&ctx->ctl_lock);
	agg_ctx_time(ctx);
	ctx->ip_be = htonl(conf->ip);
	ctx->port_lo = conf->port;
	ctx->port_hi = (uint16_t)(conf->port + lanes - 1);
	ctx->zerocopy = conf->zerocopy;
	ctx->unicast_zc = conf->zerocopy;	/* agg_port_configure() may clear zerocopy only */
	ctx->lanes = lanes;
	shr_l2_group_mac(conf->params.group_ip, ctx->group_mac.addr_bytes);
	/* the main lcore is data lcore 0 when the workers are fewer than the lanes */
	main_is_data = nworkers < lanes && nworkers < AGG_MAX_LCORES;
	ndata = (uint16_t)(nworkers + main_is_data);
	nq_wanted = RTE_MIN(lanes, ndata);
	if (rte_eth_dev_info_get(0, &info) == 0) {
		uint16_t dev_nq = RTE_MIN(info.max_rx_queues, info.max_tx_queues);

		dev_nq = RTE_MAX(dev_nq, (uint16_t)1);
		if (dev_nq < nq_wanted) {
			AGG_LOG(WARNING, "port 0 (%s) has %u rx / %u tx queues: %u data lcore(s), "
				"not %u%s", info.driver_name, info.max_rx_queues,
				info.max_tx_queues, dev_nq, nq_wanted,
				strcmp(info.driver_name, "net_af_packet") == 0 ?
				" (give it qpairs=N)" : "");
			nq_wanted = dev_nq;
		}
	}
	ctx->port_id = 0;
	rc = agg_port_configure(ctx, 0, nq_wanted);
	if (rc < 0) {
		AGG_LOG(ERR, "port 0: cannot configure: %s", strerror(-rc));
		goto out_port;
	}
	if (conf->params.max_elems == 0) {
		/* the largest chunk of 4-byte elements that fits the port's MTU */
		uint32_t room = ctx->mtu > 76 + SHR_PROTO_MAC_LEN ?
				(ctx->mtu - 20 - 8 - SHR_PROTO_HDR_LEN -
				 agg_conf_mac_room(conf)) / 4 :
				1;

		conf->params.max_elems = RTE_MIN(room, (uint32_t)AGG_MAX_ELEMS);
		AGG_LOG(INFO, "port 0: MTU %u: chunks up to %u elements (--max-elems)", ctx->mtu,
			conf->params.max_elems);
	}
	if (agg_create(ctx, conf) < 0) {
		ret = 2;
		goto out_port;
	}
	rc = agg_pools_create(ctx, nq_wanted, ndata);
	if (rc < 0)
		goto out_port;
	rc = agg_port_init(ctx, 0, nq_wanted);
	if (rc < 0) {
		AGG_LOG(ERR, "port 0: cannot start: %s", strerror(-rc));
		goto out_port;
	}
	port_up = true;
	for (i = 0; i < ctx->nq; i++) {
		struct agg_lcore *lc = rte_zmalloc("agg_lcore", sizeof(*lc), RTE_CACHE_LINE_SIZE);

		if (lc == NULL)
			goto out_lcores;
		lc->lcore_id = !main_is_data ? workers[i] :
			       i == 0 ? rte_get_main_lcore() : workers[i - 1];
		lc->idx = (uint16_t)i;
		lc->queue = (uint16_t)i;
		lc->control = i == 0;
		ctx->lc[ctx->nlcores++] = lc;
		if (agg_lcore_init(ctx, lc) < 0)
			goto out_lcores;
	}
	if (ndata > ctx->nq)
		AGG_LOG(WARNING, "%u data lcores but %u queue(s): lcores beyond the first %u "
			"stay idle", ndata, ctx->nq, ctx->nq);
	AGG_LOG(INFO, "port 0: %s, %u lanes (UDP %u..%u), %u queue(s) = data lcore(s), %s "
		"fan-out, CRC32C %s", ctx->steering ? "rte_flow steering" :
		ctx->dispatch ? "lanes handed to their lcores in software" : "one lcore",
		lanes, ctx->port_lo, ctx->port_hi, ctx->nq, ctx->zerocopy ? "zero-copy" : "copy",
		shr_crc32c_impl());
	for (i = 0; i < ctx->nlcores; i++)
		AGG_LOG(INFO, "data lcore %u (lcore %u, queue %u%s): lanes l with l mod %u == %u",
			i, ctx->lc[i]->lcore_id, ctx->lc[i]->queue, i == 0 ? ", control" : "",
			ctx->nq, i);
	if (conf->params.upstream != 0) {
		uint32_t u = SHR_AGG_ADDR_IP(conf->params.upstream);

		AGG_LOG(INFO, "upstream %u.%u.%u.%u:%u: this box is rank %u of %u under it",
			u >> 24, (u >> 16) & 0xff, (u >> 8) & 0xff, u & 0xff,
			SHR_AGG_ADDR_PORT(conf->params.upstream), conf->params.up_rank,
			conf->params.up_world);
	}
	if (conf->params.group_ip != 0) {
		uint32_t g = conf->params.group_ip;

		AGG_LOG(INFO, "result group %u.%u.%u.%u, UDP ports %u..%u (one per job)",
			g >> 24, (g >> 16) & 0xff, (g >> 8) & 0xff, g & 0xff,
			conf->params.group_port, agg_group_last_port(&conf->params));
	}
	log_admission(conf);
	AGG_LOG(INFO, "neighbour table: %u entries per lcore, members pinned for %u ms",
		ctx->lc[0]->neigh_mask + 1,
		(uint32_t)(((uint64_t)ctx->lc[0]->neigh_pin << AGG_NEIGH_TIME_SHIFT) / 1000000));
	if (agg_telemetry_init(ctx) < 0)
		AGG_LOG(WARNING, "telemetry commands not registered");

	for (i = 0; i < ctx->nlcores; i++)
		if (ctx->lc[i]->lcore_id != rte_get_main_lcore())
			rte_eal_remote_launch(agg_lcore_main, ctx->lc[i], ctx->lc[i]->lcore_id);
	printf("shouter-agg: ready\n");
	fflush(stdout);
	if (main_is_data) {
		agg_lcore_main(ctx->lc[0]);
	} else {
		uint64_t last = rte_rdtsc(), now;

		while (!agg_quit) {
			usleep(20000);
			now = rte_rdtsc();
			if (conf->stats_s != 0 && now - last >= conf->stats_s * ctx->tsc_hz) {
				agg_stats_line(ctx, (double)(now - last) / ctx->tsc_hz);
				last = now;
			}
		}
	}
	rte_eal_mp_wait_lcore();
	n = agg_shutdown(ctx);
	if (n != 0) {
		AGG_LOG(INFO, "told the members of %u job(s) that the aggregator is shutting down",
			n);
		rte_delay_us_sleep(10000);	/* let the device send them before it stops */
	}
	agg_stats_final(ctx);
	ret = 0;
out_lcores:
	agg_telemetry_fini();	/* its thread answers until exit: not from freed memory */
	for (i = 0; i < ctx->nlcores; i++) {
		agg_lcore_fini(ctx->lc[i]);
		rte_free(ctx->lc[i]);
	}
out_port:
	if (port_up)
		agg_port_fini(ctx);
	else
		rte_eth_dev_close(0);
	agg_pools_free(ctx);
	shr_agg_free(ctx->agg);
	rte_free(ctx);
	return ret;
}

/* -h or --help among the application's options (after `--`): no EAL needed to print them. */
static bool
agg_help_asked(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		;
	for (i++; i < argc; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	return false;
}

int
main(int argc, char **argv)
{
	struct agg_conf conf;
	bool pdump, simd_forced;
	int ret, rc;

	if (agg_help_asked(argc, argv)) {
		agg_usage("shouter-agg");
		return 0;
	}
	/* EAL's own --help prints ours after its options */
	rte_set_application_usage_hook(agg_usage);
	/* the operator's vector width (EAL's --force-max-simd-bitwidth) binds the CRC32C too;
	 * without it the box folds where the CPU can (DPDK's default of 256 bits on x86 guards
	 * against the clock drops of CPUs that have no VPCLMULQDQ to fold with) */
	simd_forced = shr_drv_ethdev_simd_forced(argc, argv);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		int err = rte_errno;

		if (err == EINVAL) {
			fprintf(stderr, "shouter-agg: EAL arguments refused: %s (see --help after "
				"--)\n", rte_strerror(err));
			return 2;
		}
		/* the host, not the options: hugepages or a device may be there later */
		fprintf(stderr, "shouter-agg: EAL initialisation failed: %s\n"
			"shouter-agg: no hugepages? mount hugetlbfs, or run with --no-huge "
			"-m 512\n", rte_strerror(err));
		return 1;
	}
	if (simd_forced)
		(void)shr_crc32c_max_simd(shr_drv_ethdev_max_simd());
	argc -= ret;
	argv += ret;
	rc = agg_config_parse(&conf, argc, argv);
	if (rc != 0) {
		agg_config_free(&conf);
		rte_eal_cleanup();
		return rc > 0 ? 0 : 2;
	}
	if (agg_signals() < 0) {
		agg_config_free(&conf);
		rte_eal_cleanup();
		return 1;
	}
	/*
	 * Packet capture: dpdk-dumpcap (a secondary process) asks this primary to copy the
	 * port's packets to it; nothing is done per packet until a capture starts. It needs the
	 * multi-process channel and memory a secondary can map (hugepages, not --no-huge).
	 */
	pdump = rte_pdump_init() == 0;
	if (!pdump)
		AGG_LOG(INFO, "packet capture (dpdk-dumpcap) unavailable: %s",
			rte_strerror(rte_errno));
	if (conf.bench_s > 0)
		ret = agg_bench_run(&conf);
	else
		ret = agg_run(&conf);
	if (pdump)
		rte_pdump_uninit();
	agg_config_free(&conf);
	rte_eal_cleanup();
	return ret;
}
