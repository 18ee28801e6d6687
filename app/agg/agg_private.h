/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef AGG_PRIVATE_H
#define AGG_PRIVATE_H

/**
 * @file
 * shouter-agg internals: configuration, the per-lcore context and the data path entry
 * points (shared by the lcore loop and the --bench-mpps harness).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_spinlock.h>

#include <shr_agg.h>
#include <shr_l2.h>

extern int agg_logtype;
#define AGG_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, agg_logtype, "shouter-agg: " fmt "\n", ##__VA_ARGS__)

#define AGG_BURST 32		/**< rx/tx burst size. */
#define AGG_MAX_LCORES 64	/**< Data lcores at most. */
#define AGG_MAX_LANES 64	/**< UDP lanes at most. */
#define AGG_NEIGH_PER_MEMBER 4	/**< Neighbour entries per member of the largest job. */
#define AGG_NEIGH_MIN 256	/**< Neighbour table entries per lcore, at least. */
#define AGG_NEIGH_MAX (1u << 20) /**< ... and at most. */
#define AGG_NEIGH_PROBE 16	/**< Linear probe length. */
#define AGG_NEIGH_TIME_SHIFT 20	/**< Neighbour times: nanoseconds >> 20 (~1.05 ms units). */
#define AGG_NEIGH_PIN_TIMEOUTS 2 /**< A member's entry stays pinned this many job timeouts. */
#define AGG_DEF_MAX_WORLD 1024	/**< shr_agg's max_world when the configuration has none. */
#define AGG_DEF_TIMEOUT_NS 5000000000ull /**< shr_agg's default job timeout. */
#define AGG_HDR_LEN (RTE_ETHER_HDR_LEN + 20 + 8) /**< Ethernet + IPv4 + UDP, untagged. */
#define AGG_DRAIN_US 100	/**< tx buffer drain period. */
#define AGG_TICK_US 100000	/**< Longest shr_agg_tick period (control lcore). */
#define AGG_IDLE_POLLS 64	/**< Empty polls in a row before an idle sleep. */
#define AGG_IDLE_SLACK_NS 1000UL /**< Timer slack of a data lcore that sleeps (--idle-us). */
#define AGG_DEF_IDLE_AFTER_US 100 /**< --idle-after-us default. */
#define AGG_DEF_JOB_WINDOW 256	/**< --job default window (slots): what lib/comm asks for by
				 *   default, 128 chunks in flight and their spare slots
				 *   (shr_endpoint_slots()). */
#define AGG_DEF_REPRO_SLOTS 256	/**< --repro-slots default: one default window (128 chunks in
				 *   flight) and its spare slots (shr_endpoint_slots()). */
#define AGG_BENCH_DEF_ELEMS 256	/**< --bench-chunk's default (1 KiB int32 chunks). */
#define AGG_DEF_CHUNK 256	/**< --job default chunk (elements). */
#define AGG_MTU 9000		/**< MTU asked of the port. */
#define AGG_MAX_ELEMS 2048	/**< Largest chunk: one jumbo frame of 4-byte elements. */
#define AGG_HANDOFF_RING 2048	/**< DATA handed to a data lcore by the others (per lcore). */

/** One static job from the command line or the config file. */
struct agg_job {
	struct shr_agg_job_conf conf;
	uint64_t *addrs;	/**< conf.world entries, or NULL (bind on JOIN). */
	char origin[64];	/**< "--job" or "[job.N]", for messages. */
	struct shr_auth_secret secret; /**< secret_file = (len 0: the default secret). */
};

/** Application configuration (after the config file and the command line). */
struct agg_conf {
	uint32_t ip;		/**< Host order; 0 = not set. */
	uint16_t port;		/**< Base UDP port. */
	uint16_t lanes;		/**< 0 = number of worker lcores. */
	struct shr_agg_params params;
	struct shr_auth_acl allow;	/**< allow = / --allow (params.allow points here). */
	struct shr_auth_secret secret;	/**< secret_file = / --secret-file (params.secret). */
	uint32_t idle_us;	/**< Idle sleep (--idle-us); 0: busy poll. */
	uint32_t idle_after_us;	/**< Sleep only after this long without traffic. */
	uint32_t stats_s;
	uint16_t vlan;		/**< The port's 802.1Q VLAN id (vlan =, --vlan); 0: untagged. */
	bool zerocopy;
	double bench_s;		/**< > 0: --bench-mpps mode. */
	uint32_t bench_elems;	/**< --bench-chunk: int32 elements (0: AGG_BENCH_DEF_ELEMS). */
	const char *box;	/**< --box NAME: this box's [box.NAME] of a topology file. */
	bool tree_rank_set;	/**< up_rank given (not the topology file's place). */
	bool tree_world_set;	/**< up_world given. */
	uint32_t njobs;
	struct agg_job *jobs;
};

/**
 * Counters of one lcore (name, meaning): written by that lcore only, summed on read.
 * An X-macro so that the struct, the sums and the telemetry names stay in step.
 */
#define AGG_LCORE_COUNTERS(X) \
	X(rx_pkts)	/* frames received */ \
	X(rx_bytes) \
	X(tx_pkts)	/* frames handed to the device */ \
	X(tx_drop)	/* frames the device refused (freed) */ \
	X(arp)		/* ARP frames seen */ \
	X(arp_reply)	/* ARP replies sent */ \
	X(arp_request)	/* ARP requests sent (trees: for the upstream box's MAC) */ \
	X(icmp)		/* ICMP to us seen */ \
	X(icmp_reply)	/* echo replies sent */ \
	X(non_ip)	/* neither ARP nor IPv4 */ \
	X(vlan_other)	/* another network's (shr_l2_parse()): other VID, untagged, QinQ */ \
	X(non_udp)	/* IPv4 to us, neither UDP nor ICMP */ \
	X(not_ours)	/* IPv4 to another address */ \
	X(bad_src)	/* from a group or zero MAC, or an IPv4 source no host has (0/8,
			 * 127/8, 224/4, 240/4, the box's own): never answered nor learned */ \
	X(bad_l2)	/* runt or multi-segment frame */ \
	X(bad_ip)	/* bad IPv4 version, header length, total length or checksum */ \
	X(frag)		/* IPv4 fragments */ \
	X(bad_udp)	/* bad UDP length */ \
	X(bad_port)	/* UDP to a port that is not one of our lanes */ \
	X(nombuf)	/* mbuf allocation failures */ \
	X(no_neigh)	/* result destinations without a known MAC (not sent) */ \
	X(neigh_full)	/* sources not learned: every entry they may use holds a member */ \
	X(ctl_fwd)	/* control messages handed to the control lcore */ \
	X(ctl_drop)	/* control messages not handed: its ring was full (freed) */ \
	X(lane_fwd)	/* DATA handed to the lcore that owns its slot's lane */ \
	X(lane_in)	/* DATA taken from the other lcores (lane_fwd of theirs) */ \
	X(lane_drop)	/* DATA not handed: that lcore's ring was full (freed) */ \
	X(lane_foreign)	/* DATA taken in here for a port of a lane another lcore owns */ \
	X(results_zc)	/* messages fanned out by header chaining */ \
	X(results_copy)	/* messages fanned out by copying */ \
	X(results_group) /* messages sent once, to their job's result group */ \
	X(idle_sleeps)

struct agg_lcore_stats {
#define AGG_X_FIELD(n) uint64_t n;
	AGG_LCORE_COUNTERS(AGG_X_FIELD)
#undef AGG_X_FIELD
	struct shr_agg_stats agg;
};

/**
 * One neighbour: IPv4 -> MAC, learned from valid received frames (agg_dp.c). An entry is
 * pinned while `until` is ahead of the lcore's clock by at most the pin's length: it belongs
 * to a member (its traffic was admitted by shr_agg_input()), and frames from other sources
 * neither replace it nor change its MAC. Otherwise `until` is when the entry was learned or
 * its pin ran out, and the oldest such entry is the one replaced when a new source finds no
 * free entry.
 */
struct agg_neigh {
	uint32_t ip;		/**< Network order; 0 = empty. */
	uint32_t until;		/**< Time (ns >> AGG_NEIGH_TIME_SHIFT, wrapping). */
	struct rte_ether_addr mac;
	uint16_t pad;
};

struct agg_ctx;

#define AGG_FAN_HINTS 64	/**< Neighbour entries a data lcore's fan-out remembers. */

/** One data lcore: its queue, tx buffer, neighbours, spare mbuf and counters. */
struct agg_lcore {
	struct agg_ctx *ctx;
	unsigned int lcore_id;
	uint16_t idx;		/**< Index among the data lcores (0 = control lcore). */
	uint16_t queue;		/**< rx and tx queue of the port. */
	bool control;
	struct rte_ring *handoff;	/**< DATA of our lanes from the other lcores (MP/SC). */
	struct rte_eth_dev_tx_buffer *txb;
	struct rte_mbuf *spare;	/**< Payload mbuf the next result is written into. */
	/**
	 * Where the spare's data starts and its tailroom, set when it is allocated
	 * (tx_prepare()); valid while spare is not NULL: nothing moves a spare's data
	 * (send_zc() takes it, spare = NULL, before it sets its lengths or prepends).
	 */
	void *spare_buf;
	uint16_t spare_cap;
	uint8_t *scratch;	/**< Copy mode: the message is written here once. */
	/**
	 * The header of every datagram the fan-out sends (hdr_len bytes, agg_hdr_len()):
	 * Ethernet from the port's MAC (tagged with its VLAN, if any), IPv4 from the box's
	 * address (DF, TTL 64, UDP) and UDP, with the destination, lengths and checksums 0
	 * (agg_hdr_tmpl_init()); hdr_ip_sum: its IPv4 header's one's complement sum.
	 */
	uint8_t hdr_tmpl[AGG_HDR_LEN + RTE_VLAN_HLEN];
	uint16_t hdr_len;
	uint32_t hdr_ip_sum;
	const struct rte_ether_addr **fan_mac;	/**< Fan-out: resolved MACs. */
	uint64_t *fan_dst;			/**< Fan-out: their addresses. */
	uint64_t last_drain;
	uint64_t last_tick;
	uint64_t last_stats;
	uint32_t idle_polls;	/**< Empty polls since the last traffic (saturates). */
	uint64_t idle_since;	/**< TSC of the first of them. */
	struct agg_neigh *neigh;	/**< neigh_mask + 1 entries (agg_neigh_entries()). */
	uint32_t neigh_mask;
	uint32_t neigh_shift;	/**< 32 - log2(entries): the hash's top bits. */
	uint32_t neigh_pin;	/**< How long admitted traffic pins an entry (time units). */
	uint64_t frag_log_ns;	/**< No fragment log line before this (rate limit). */
	uint64_t up_arp_ns;	/**< Trees: no ARP request for the upstream before this. */
	/**
	 * Fan-out: the neighbour entry last found for a result's destination i, at
	 * i % AGG_FAN_HINTS (NULL: none); used while it holds that destination's address
	 * (fan_resolve()).
	 */
	const struct agg_neigh *fan_hint[AGG_FAN_HINTS];
	struct agg_lcore_stats st __rte_cache_aligned;
	/** Generation of the pause this lcore has parked for (see agg_ctl_pause()). */
	volatile uint64_t parked_gen __rte_cache_aligned;
} __rte_cache_aligned;

/** The application. */
struct agg_ctx {
	const struct agg_conf *conf;
	struct shr_agg *agg;
	size_t tx_cap;		/**< shr_agg_tx_cap(). */
	uint16_t port_id;
	uint16_t nq;		/**< Queues = data lcores actually used. */
	bool steering;		/**< rte_flow steers each lane to its queue. */
	/**
	 * nq > 1: every data lcore checks the slot of each DATA it receives and hands a DATA
	 * of a lane it does not own to the lcore that does (its handoff ring), so that a slot is
	 * only ever touched by its lane's lcore whatever queue the device put the frame on.
	 * With rte_flow steering nothing is handed off (but a frame sent to the wrong port);
	 * without (af_packet's qpairs spread frames by a flow hash), about (nq-1)/nq are.
	 */
	bool dispatch;
	uint16_t lanes;		/**< port_hi - port_lo + 1. */
	uint8_t lane_lc[AGG_MAX_LANES];	/**< Data lcore (index in lc[]) owning each lane. */
	bool zerocopy;		/**< Fan out by header chaining (multi-segment tx). */
	/**
	 * Messages are written into an mbuf, and one for a single destination (a resend, a
	 * control answer) is sent from it, its headers prepended (one segment, so any device
	 * takes it): on unless --no-zerocopy, also where the fan-out copies for want of
	 * multi-segment tx.
	 */
	bool unicast_zc;
	uint64_t tx_offloads;	/**< As configured. */
	uint16_t mtu;		/**< The port's MTU after configuration. */
	struct rte_ether_addr mac;
	struct rte_ether_addr group_mac; /**< Destination MAC of the result group's frames. */
	uint32_t ip_be;		/**< Our address, network order. */
	uint16_t port_lo;	/**< First lane port, host order. */
	uint16_t port_hi;	/**< Last lane port, host order. */
	struct rte_mempool *pkt_pool;	/**< rx frames and result payloads. */
	struct rte_mempool *hdr_pool;	/**< Small: Ethernet/IPv4/UDP header mbufs. */
	struct rte_ring *ctl_ring;	/**< Control messages from the other lcores. */
	uint64_t tsc_hz;
	double ns_per_tsc;
	uint64_t drain_tsc;
	uint64_t tick_tsc;
	uint32_t nlcores;
	struct agg_lcore *lc[AGG_MAX_LCORES];
	rte_spinlock_t ctl_lock;	/**< Job table: control lcore vs telemetry. */
	volatile bool stop;	/**< Like agg_quit, for this context only (benchmark). */
	volatile uint64_t pause_gen __rte_cache_aligned; /**< Odd: data lcores must park. */
};

/** Set by the signal handler; the lcores stop when they see it. */
extern volatile bool agg_quit;

/* agg_config.c */
/**
 * Parse the application's arguments (after EAL's) and the --config file.
 * @return 0, 1 (--help printed), or -EINVAL (message printed).
 */
int agg_config_parse(struct agg_conf *conf, int argc, char **argv);

/*
 * agg_ini.c: the --config file's text, before rte_cfgfile reads it: a regular file whose lines
 * are blank, comments, [NAME] or KEY = VALUE, no section or key twice.
 * @return 0, or -EINVAL (message printed, naming the line).
 */
int agg_ini_check(const char *path);

/* agg_tree.c: trees of boxes (shr_agg_params::upstream) and the topology file */
struct rte_cfgfile;
typedef int (*agg_key_fn)(struct agg_conf *conf, const char *what, const char *key,
			  const char *val);
int agg_conf_u64(const char *what, const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* A.B.C.D[:PORT] (def_port 0: the port is required) into an address key, or -EINVAL (said) */
int agg_conf_addr(const char *what, const char *s, uint16_t def_port, uint64_t *addr);
/* A secret file (shr_auth_secret_load()), or -EINVAL (said) */
int agg_conf_secret(const char *what, const char *path, struct shr_auth_secret *secret);
int agg_tree_key(struct agg_conf *conf, const char *what, const char *key, const char *val);
int agg_tree_load(struct agg_conf *conf, struct rte_cfgfile *cfg, const char *path, char **secs,
		  int nsec, agg_key_fn key);
int agg_tree_check(struct agg_conf *conf);

/* agg_group.c: the result group (shr_agg_params::group_ip) */
int agg_group_key(struct agg_conf *conf, const char *what, const char *key, const char *val);
int agg_group_check(const struct agg_conf *conf);
/* The last of the group's UDP ports: one per job entry from group_port (max_jobs' default) */
uint32_t agg_group_last_port(const struct shr_agg_params *p);
void agg_config_free(struct agg_conf *conf);
void agg_usage(const char *prg);

/* agg_config_job.c: static jobs, into conf->jobs (a job given again is replaced whole) */
/* --job ID:WORLD:DTYPE[:WINDOW[:CHUNK]]: 0, -EINVAL (said) or -ENOMEM */
int agg_config_job_opt(struct agg_conf *conf, const char *arg);
/* The config file's section [job.N] (sec): 0, -EINVAL (said) or -ENOMEM */
int agg_config_job_section(struct agg_conf *conf, struct rte_cfgfile *cfg, const char *path,
			   const char *sec);

/* agg_dp.c */
/**
 * Process one received burst (every mbuf is consumed). With ctx->dispatch, DATA of a lane
 * another lcore owns is handed to it; handed: the burst came from the other lcores (its frames
 * were counted as received there, and are not handed on again).
 */
void agg_process_burst(struct agg_lcore *lc, struct rte_mbuf **pkts, uint16_t n,
		       uint64_t now_ns, bool handed);
/** Time-driven work of the agg (job timeouts), on the control lcore. */
void agg_tick(struct agg_lcore *lc, uint64_t now_ns);
/**
 * Tell the members of every job that the box stops (shr_agg_shutdown()), through the control
 * lcore's queue; call it once the data lcores have returned, before the port stops.
 * @return the jobs told.
 */
unsigned int agg_shutdown(struct agg_ctx *ctx);
/**
 * Neighbour entries per lcore: AGG_NEIGH_PER_MEMBER per member of the largest job (max_world,
 * or the static jobs' members together if more), a power of 2 in [AGG_NEIGH_MIN,
 * AGG_NEIGH_MAX].
 */
uint32_t agg_neigh_entries(const struct agg_conf *conf);
/** Build lc->hdr_tmpl, hdr_len and hdr_ip_sum (the port's MAC must be known). */
void agg_hdr_tmpl_init(struct agg_lcore *lc);
/** Bytes of Ethernet (with the port's 802.1Q tag, if any), IPv4 and UDP headers sent. */
static inline uint32_t
agg_hdr_len(const struct agg_ctx *ctx)
{
	return AGG_HDR_LEN + (ctx->conf->vlan != 0 ? RTE_VLAN_HLEN : 0);
}
/** Nanoseconds from a TSC value. */
static inline uint64_t
agg_tsc_ns(const struct agg_ctx *ctx, uint64_t tsc)
{
	return (uint64_t)((double)tsc * ctx->ns_per_tsc);
}

/* agg_lcore.c */
/** TSC rates and periods (drain, tick) of a context; needs ctx->conf. */
void agg_ctx_time(struct agg_ctx *ctx);
/**
 * Lanes to data lcores: lane l is owned by data lcore l mod nq (the queue rte_flow steers it
 * to); ctx->dispatch is set when nq > 1. Needs ctx->lanes and ctx->nq.
 */
void agg_lanes_map(struct agg_ctx *ctx);
/** Fill a per-lcore context (ctx->conf set; lc->idx, lcore_id set); 0 or -ENOMEM. */
int agg_lcore_init(struct agg_ctx *ctx, struct agg_lcore *lc);
void agg_lcore_fini(struct agg_lcore *lc);
/** One iteration of the data loop; returns the frames received. */
uint16_t agg_lcore_poll(struct agg_lcore *lc);
/** The data loop (rte_eal_remote_launch). */
int agg_lcore_main(void *arg);
/** Park the other data lcores (nq > 1) before a job-table change; agg_ctl_resume() after. */
void agg_ctl_pause(struct agg_ctx *ctx);
void agg_ctl_resume(struct agg_ctx *ctx);
/** Flush the lcore's tx buffer. */
void agg_lcore_flush(struct agg_lcore *lc);

/* agg_port.c */
/** Create the mempools (sized for nq queues). 0 or negative errno. */
int agg_pools_create(struct agg_ctx *ctx, uint16_t nq, uint16_t nlcores);
/**
 * Free what agg_pools_create() made (any of it may be NULL), once the data lcores have
 * returned: the frames still on the control ring (data lcores may queue some after the
 * control lcore left its loop), the ring, then the pools.
 */
void agg_pools_free(struct agg_ctx *ctx);
/** Configure a port with nq queues (tx offloads, MTU: sets ctx->mtu, may clear zerocopy). */
int agg_port_configure(struct agg_ctx *ctx, uint16_t port_id, uint16_t nq);
/** Set up nq queues on a configured port and start it (no steering). */
int agg_port_start(struct agg_ctx *ctx, uint16_t port_id, uint16_t nq);
/**
 * Start a port configured with nq_wanted queues; with more than one, steer the lanes with
 * rte_flow, or fall back to one queue. Sets ctx->nq and ctx->steering.
 */
int agg_port_init(struct agg_ctx *ctx, uint16_t port_id, uint16_t nq_wanted);
void agg_port_fini(struct agg_ctx *ctx);

/* agg_telemetry.c */
int agg_telemetry_init(struct agg_ctx *ctx);
/* The telemetry handlers stop reading the box (they answer ENODEV): before it is freed. */
void agg_telemetry_fini(void);
void agg_stats_sum(const struct agg_ctx *ctx, struct agg_lcore_stats *sum);
void agg_stats_line(struct agg_ctx *ctx, double dt_s);
void agg_stats_final(const struct agg_ctx *ctx);

/* agg_bench.c */
int agg_bench_run(struct agg_conf *conf);

#endif /* AGG_PRIVATE_H */
