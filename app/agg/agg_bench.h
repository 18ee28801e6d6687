/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef AGG_BENCH_H
#define AGG_BENCH_H

/**
 * @file
 * The --bench-mpps harness's shared definitions: the benchmark job, its frames, its counters,
 * the kernels it compares the data path with (agg_bench_kernel.c), and the handoff's cost
 * (agg_bench_handoff.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "agg_private.h"

#define B_JOB 1
#define B_WORLD 4
#define B_TOKEN 0x62656e63682d746bull	/* the static job's token ("bench-tk") */
#define B_WINDOW 128
#define B_ROUNDS 2
#define B_NPKT (B_WORLD * B_WINDOW * B_ROUNDS)
/*
 * How long the feeder waits for the other data lcores to take what it handed them (a state it
 * waits for, not a time it counts on): only a guard against a hang, which then ends the bench
 * naming what it waited for. It was 2 s, and feeding on: on a loaded machine (other processes
 * on the 2 cores) the bench once failed with "304120 DATA accepted of 304128 fed", which a
 * lane's lcore kept from the CPU past that guard would give (the pass feeds on, or is counted,
 * before it took all).
 */
#define B_WAIT_S 30
/*
 * The box's timers judge members: a round open for an eighth of the job timeout has the
 * slot's previous result resent unasked to the members missing from it (a nudge), one open
 * for the whole job timeout (5 s by default) aborts the job, a job nobody sends to for
 * idle_ms (60 s) is reclaimed. The bench's members are its feeder, which loses nothing: a
 * round stays open that long only while a data lcore is kept from the CPU (a loaded machine),
 * and a nudge would add a RESULT to a checked pass, an abort refuse every DATA after it.
 * Unless configured (--job-timeout-ms, --idle-ms), the bench's job gets the longest the box
 * accepts: a nudge then needs a round open 450 s, 15 times the guard of the feeder's waits
 * (B_WAIT_S) and past the integration test's guard of the whole run (120 s): a round left
 * open that long is a hang, already reported as one.
 */
#define B_JOB_TIMEOUT_NS (3600ull * 1000000000ull)
#define B_IDLE_NS (86400ull * 1000000000ull)
#define B_MAX_MSG_LEN (SHR_PROTO_HDR_LEN + AGG_MAX_ELEMS * 4)	/* --bench-chunk's largest */
#define B_SRC_PORT 5000
#define B_TENSOR 7

struct bench {
	struct agg_ctx *ctx;
	uint16_t nl;		/* lanes = queues = data lcores (1 unless --lanes) */
	uint32_t elems;		/* int32 elements per chunk (--bench-chunk) */
	struct agg_lcore *lc;	/* lane 0: this (main) lcore, also the control lcore */
	struct rte_ring *rx_r[AGG_MAX_LCORES];
	struct rte_ring *tx_r[AGG_MAX_LCORES];
	struct rte_mempool *feed_pool;
	struct rte_mbuf *pkts[B_NPKT];
	uint16_t lane[B_NPKT];	/* queue of each frame: slot mod nl (steered) ... */
	uint16_t flow[B_NPKT];	/* ... or rank mod nl (a flow hash) */
	bool by_flow;		/* spread by flow (else by lane) */
	uint64_t addrs[B_WORLD];
	/* per queue, written by the lcore that drains its tx ring (the "wire") */
	struct {
		volatile uint64_t results;	/* result frames drained */
		volatile uint64_t bad;		/* wrong results seen while checking */
		volatile uint64_t busy_tsc;	/* the other lcores: TSC in polls that found work */
	} __rte_cache_aligned wire[AGG_MAX_LCORES];
	volatile bool workers;	/* the other data lcores drain their own queues */
	volatile bool check;
	double cpu_mpps;	/* last b_run()/b_kernel(): per second of this thread's CPU time */
	double handed;		/* last b_run(): DATA handed to another lcore, per DATA fed */
	clockid_t clk[AGG_MAX_LCORES];	/* each data lcore's thread CPU clock */
	volatile bool clk_set[AGG_MAX_LCORES];
	double cpu_share[AGG_MAX_LCORES]; /* last b_run(): each lcore's CPU time / wall time */
	double busy[AGG_MAX_LCORES];	/* last b_run(): the other lcores' busy time / wall time */
};

/** A DATA's shouter header + payload, bytes. */
static inline uint32_t
b_msg_len(const struct bench *b)
{
	return SHR_PROTO_HDR_LEN + b->elems * 4;
}

/** Result frames drained from every queue's wire. */
static inline uint64_t
b_results(const struct bench *b)
{
	uint64_t t = 0;
	uint32_t q;

	for (q = 0; q < b->nl; q++)
		t += __atomic_load_n(&b->wire[q].results, __ATOMIC_ACQUIRE);
	return t;
}

/** A data lcore counter (off: its offset in struct agg_lcore_stats), over the lanes. */
static inline uint64_t
b_sum(const struct bench *b, size_t off)
{
	uint64_t t = 0;
	uint32_t q;

	for (q = 0; q < b->nl; q++)
		t += *(const volatile uint64_t *)((const uint8_t *)&b->ctx->lc[q]->st + off);
	return t;
}

/** DATA the data lcores refused, for any reason. */
static inline uint64_t
b_rejects(const struct bench *b)
{
	uint64_t t = 0;
	uint32_t r;

	for (r = 1; r < SHR_PROTO_REASON_MAX; r++)
		t += b_sum(b, offsetof(struct agg_lcore_stats, agg.rejects[r]));
	return t;
}

/** DATA taken by the data lcores (accepted or refused). */
static inline uint64_t
b_taken(const struct bench *b)
{
	return b_sum(b, offsetof(struct agg_lcore_stats, agg.data)) + b_rejects(b);
}

/** agg_bench.c: drain the queues this lcore drains (its own, all once the others stopped). */
void agg_bench_drain(struct bench *b);
/**
 * agg_bench_handoff.c: the handoff's cost per handed DATA and the CPU time per steered DATA,
 * nanoseconds, with the other data lcores stopped. Returns 0, or -1 (said).
 */
int agg_bench_handoff_cost(struct bench *b, double seconds, double *cost_ns, double *steered_ns);

/** CPU time of the calling thread, seconds. */
double agg_bench_cpu_s(void);
/**
 * The roofline: CRC32C over header + payload and the int32 sum of b->pkts, per chunk, nothing
 * else, for `seconds` (less on a signal). Returns chunks per second (millions; b->cpu_mpps per
 * CPU second), or -1. Never inlined: scripts/bench_instr.sh counts it by name.
 */
double agg_bench_kernel(struct bench *b, double seconds);

/** The one-thread kernels' figures (agg_bench_kernels()). */
struct bench_kern {
	double roof, cpu_roof;		/**< the roofline: chunks/s (millions), per CPU second */
	double mac, cpu_mac;		/**< the roofline with the per-job MAC, the same */
	double f_stream, cpu_stream;	/**< float32 SUM into streaming slots, the same */
	double f_exact, cpu_exact;	/**< float32 SUM into exact (reproducible) slots */
	double crc_hw, crc_fold;	/**< CPU ns per CRC32C of each DATA in turn */
	double crc_hw_hot, crc_fold_hot; /**< the same over one DATA in L1 */
};

/**
 * agg_bench_kernel.c: the kernels the data path is compared with, on this thread, in turn:
 * the roofline, the roofline with the per-job MAC, the float32 SUM kernels (streaming and
 * exact), for `seconds` each, then the CRC32C versions for an eighth of it each. Each stops
 * early on SIGINT/SIGTERM (agg_quit: the caller looks at it).
 *
 * @param b        the benchmark (its frames b->pkts, b->elems)
 * @param seconds  each kernel's length
 * @param k        the figures, filled
 * @return 0; -EIO if one failed (said on stderr)
 */
int agg_bench_kernels(struct bench *b, double seconds, struct bench_kern *k);

#endif /* AGG_BENCH_H */
