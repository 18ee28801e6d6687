/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * --bench-mpps with several lanes: what handing a DATA to the lcore that owns its slot costs
 * (handoff_ns_per_frame), measured on one thread against the same frames steered.
 */

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "agg_private.h"

#include "agg_bench.h"

/*
 * The handoff's cost, on this lcore alone (the other data lcores stopped): the frames fed a
 * burst at a time either to the lcore owning their slot (steered: agg_process_burst() on
 * each owner's context) or all to lane 0's, which hands the others to their owner's ring,
 * drained right after on this thread as that owner (agg_lcore_poll()), the two ways taking
 * turns 16 times. Sets *cost_ns, the extra nanoseconds of this thread's CPU time per handed
 * frame (noise can make it negative), and *steered_ns, the ns per frame steered. Returns 0,
 * or -1 (a DATA not taken or a result missing).
 */
int
agg_bench_handoff_cost(struct bench *b, double seconds, double *cost_ns, double *steered_ns)
{
	struct rte_mbuf *sub[AGG_MAX_LCORES][AGG_BURST];
	uint32_t ns[AGG_MAX_LCORES];
	const size_t fwd_off = offsetof(struct agg_lcore_stats, lane_fwd);
	double cpu[2] = { 0, 0 };
	uint64_t frames[2] = { 0, 0 }, handed = 0, fwd0, results0, taken0;
	uint32_t i, k, q, round, mode;
	double c0;

	results0 = b_results(b);
	taken0 = b_taken(b);
	for (round = 0; round < 16; round++) {
		for (mode = 0; mode < 2; mode++) {	/* 0 steered, 1 handed off */
			uint64_t end = rte_rdtsc() + (uint64_t)(seconds / 32 *
							(double)rte_get_tsc_hz());
			uint64_t n = 0;

			fwd0 = b_sum(b, fwd_off);
			c0 = agg_bench_cpu_s();
			do {
				for (i = 0; i < B_NPKT; i += AGG_BURST) {
					uint64_t now = agg_tsc_ns(b->ctx, rte_rdtsc());

					memset(ns, 0, sizeof(ns[0]) * b->nl);
					for (k = 0; k < AGG_BURST; k++) {
						struct rte_mbuf *m = b->pkts[i + k];

						rte_mbuf_refcnt_update(m, 1);
						q = mode == 0 ? b->lane[i + k] : 0;
						sub[q][ns[q]++] = m;
					}
					for (q = 0; q < b->nl; q++)
						if (ns[q] != 0)
							agg_process_burst(b->ctx->lc[q], sub[q],
									  (uint16_t)ns[q], now,
									  false);
					for (q = 1; q < b->nl; q++)
						agg_lcore_poll(b->ctx->lc[q]);
					for (q = 0; q < b->nl; q++)
						agg_lcore_flush(b->ctx->lc[q]);
					agg_bench_drain(b);
				}
				n += B_NPKT;
			} while (rte_rdtsc() < end && !agg_quit);
			cpu[mode] += agg_bench_cpu_s() - c0;
			frames[mode] += n;
			if (mode == 1)
				handed += b_sum(b, fwd_off) - fwd0;
		}
	}
	if (b_results(b) - results0 != frames[0] + frames[1] ||
	    b_taken(b) - taken0 != frames[0] + frames[1] || handed == 0) {
		fprintf(stderr, "shouter-agg: bench: handoff cost: %" PRIu64 " DATA fed, %" PRIu64
			" taken, %" PRIu64 " results, %" PRIu64 " handed\n", frames[0] + frames[1],
			b_taken(b) - taken0, b_results(b) - results0, handed);
		return -1;
	}
	*steered_ns = cpu[0] / (double)frames[0] * 1e9;
	*cost_ns = (cpu[1] / (double)frames[1] * 1e9 - *steered_ns) * (double)frames[1] /
		   (double)handed;
	return 0;
}
