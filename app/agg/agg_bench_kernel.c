/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * --bench-mpps: the kernels the data path is compared with (the roofline, and the float32
 * SUM of streaming and reproducible slots), on the benchmark's own chunks.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <shr_mac.h>
#include <shr_proto.h>
#include <shr_pool.h>

#include "agg_bench.h"

/* CPU time of the calling thread, seconds: unlike the TSC, it does not run while the
 * thread waits for a CPU (a shared machine). */
double
agg_bench_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The roofline: the work no aggregator can skip, per round of B_WORLD DATA frames: each
 * frame's CRC32C check (header + payload) and its int32 sum into the slot, then one CRC32C
 * over the round's result (header + sum) to send it; nothing else (no parsing, no mbufs, no
 * pool state, no fan-out). The header's CRC is shr_crc32c_hdr(), as on the data path.
 */
__rte_noinline double
agg_bench_kernel(struct bench *b, double seconds)
{
	int32_t *acc;
	uint64_t t0, end, n = 0;
	uint32_t i, crc = 0;
	volatile uint32_t sink;
	double dt, c0;

	acc = rte_zmalloc("bench_acc", B_WINDOW * b->elems * 4, 64);
	if (acc == NULL)
		return -1;
	c0 = agg_bench_cpu_s();
	t0 = rte_rdtsc();
	end = t0 + (uint64_t)(seconds * (double)rte_get_tsc_hz());
	do {
		for (i = 0; i < B_NPKT; i++) {
			const uint8_t *msg = rte_pktmbuf_mtod_offset(b->pkts[i], const uint8_t *,
								      AGG_HDR_LEN);
			uint32_t slot = (i / B_WORLD) % B_WINDOW;
			uint32_t c;

			c = shr_crc32c_hdr(msg);
			c = shr_crc32c(c, msg + SHR_PROTO_HDR_LEN, b->elems * 4);
			crc ^= c;
			shr_pool_reduce_i32(acc + slot * b->elems, msg + SHR_PROTO_HDR_LEN,
					    b->elems, SHR_OP_SUM);
			if (i % B_WORLD == B_WORLD - 1) {
				/* the round's result: one CRC over a header and the sum */
				c = shr_crc32c_hdr(msg);
				crc ^= shr_crc32c(c, acc + slot * b->elems, b->elems * 4);
			}
		}
		n += B_NPKT;
	} while (rte_rdtsc() < end && !agg_quit);
	dt = (double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz();
	b->cpu_mpps = (double)n / (agg_bench_cpu_s() - c0) / 1e6;
	sink = crc ^ (uint32_t)acc[0];
	(void)sink;
	rte_free(acc);
	return (double)n / dt / 1e6;
}

/*
 * One CRC32C version over the benchmark's DATA frames (header + payload, as the data path
 * checks them), for `seconds`: nanoseconds per frame of CPU time, or -1. hot: the first
 * frame every time (in L1: the CPU's own rate) rather than each in turn (spread over the
 * mbufs' pages, mostly out of L1 and L2, as the data path and the roofline read them).
 */
static double
agg_bench_crc(struct bench *b, double seconds, uint32_t (*fn)(uint32_t, const void *, size_t),
	      bool hot)
{
	uint64_t end, n = 0;
	uint32_t i, crc = 0;
	volatile uint32_t sink;
	double c0;

	c0 = agg_bench_cpu_s();
	end = rte_rdtsc() + (uint64_t)(seconds * (double)rte_get_tsc_hz());
	do {
		for (i = 0; i < B_NPKT; i++)
			crc ^= fn(0, rte_pktmbuf_mtod_offset(b->pkts[hot ? 0 : i], const uint8_t *,
							    AGG_HDR_LEN), b_msg_len(b));
		n += B_NPKT;
	} while (rte_rdtsc() < end && !agg_quit);
	sink = crc;
	(void)sink;
	return n > 0 ? (agg_bench_cpu_s() - c0) * 1e9 / (double)n : -1;
}

/*
 * The roofline with the per-job MAC (lib/mac), as the box pays it for a MAC job, on the same
 * chunks: per chunk the CRC32C, the AES-128-GMAC verify of header + payload (its copy signed
 * beforehand, trailer included), the sender's replay window and the int32 sum; per round
 * (B_WORLD chunks) one RESULT with its CRC32C and signed. Returns chunks per second
 * (millions), or -1.
 */
static double
agg_bench_kernel_mac(struct bench *b, double seconds)
{
	static const char secret[] = "bench-secret-of-the-mac-kernel!!";
	const size_t len = b_msg_len(b) + SHR_MAC_TRAILER_LEN;
	struct shr_mac_window win[B_WORLD];
	uint8_t key[SHR_MAC_KEY_LEN], *msgs, res[B_MAX_MSG_LEN + SHR_MAC_TRAILER_LEN];
	struct shr_mac *mac = NULL;
	uint64_t t0, end, n = 0, ctr = 0, rctr = 0;
	uint32_t i, crc = 0, bad = 0;
	volatile uint32_t sink;
	int32_t *acc;
	double dt, c0, ret = -1;

	acc = rte_zmalloc("bench_acc", B_WINDOW * b->elems * 4, 64);
	msgs = rte_malloc("bench_mac", (size_t)B_NPKT * len, 64);
	if (acc == NULL || msgs == NULL ||
	    shr_mac_derive(secret, sizeof(secret) - 1, B_JOB, B_TOKEN, key) < 0 ||
	    (mac = shr_mac_create(key)) == NULL)
		goto out;
	memset(win, 0, sizeof(win));
	memset(res, 0, sizeof(res));
	/* the members' work, before timing: each chunk's copy signed by its rank */
	for (i = 0; i < B_NPKT; i++) {
		uint8_t *m = msgs + (size_t)i * len;

		memcpy(m, rte_pktmbuf_mtod_offset(b->pkts[i], const uint8_t *, AGG_HDR_LEN),
		       b_msg_len(b));
		if (shr_mac_sign(mac, m, b_msg_len(b), i % B_WORLD, ++ctr) < 0)
			goto out;
	}
	c0 = agg_bench_cpu_s();
	t0 = rte_rdtsc();
	end = t0 + (uint64_t)(seconds * (double)rte_get_tsc_hz());
	do {
		for (i = 0; i < B_NPKT; i++) {
			const uint8_t *msg = msgs + (size_t)i * len;
			uint32_t slot = (i / B_WORLD) % B_WINDOW;
			uint64_t c_in;
			uint32_t c, snd;

			c = shr_crc32c_hdr(msg);
			c = shr_crc32c(c, msg + SHR_PROTO_HDR_LEN, b->elems * 4);
			crc ^= c;
			if (shr_mac_verify(mac, msg, len, &snd, &c_in) != 0)
				bad++;
			/* the same copies every pass: the window sees them as new (a real
			 * sender counts on), so only its bookkeeping is timed */
			shr_mac_window_update(&win[i % B_WORLD], c_in + n);
			shr_pool_reduce_i32(acc + slot * b->elems, msg + SHR_PROTO_HDR_LEN,
					    b->elems, SHR_OP_SUM);
			if (i % B_WORLD == B_WORLD - 1) {
				memcpy(res, msg, SHR_PROTO_HDR_LEN);
				memcpy(res + SHR_PROTO_HDR_LEN, acc + slot * b->elems,
				       b->elems * 4);
				c = shr_crc32c_hdr(res);
				crc ^= shr_crc32c(c, res + SHR_PROTO_HDR_LEN, b->elems * 4);
				shr_mac_sign(mac, res, b_msg_len(b), SHR_MAC_SENDER_BOX, ++rctr);
			}
		}
		n += B_NPKT;
	} while (rte_rdtsc() < end && !agg_quit);
	dt = (double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz();
	b->cpu_mpps = (double)n / (agg_bench_cpu_s() - c0) / 1e6;
	sink = crc ^ (uint32_t)acc[0] ^ res[b_msg_len(b) + 20];
	(void)sink;
	ret = bad == 0 ? (double)n / dt / 1e6 : -1;
out:
	shr_mac_free(mac);
	rte_free(msgs);
	rte_free(acc);
	return ret;
}

/*
 * The float32 SUM kernels side by side, streaming (shr_pool_reduce_f32) or exact (the
 * reproducible slots' shr_pool_reduce_x32), with what the pool does around them: per chunk
 * the CRC32C of header and payload and the reduction into its slot's accumulator; per round
 * (B_WORLD chunks into one slot) the accumulator cleared first and the result written in
 * wire format at the end (shr_pool_result_write). The chunks are float32 values of random
 * sign and exponent (2^-60..2^60), B_NPKT of them as in the frames above. Returns chunks
 * per second (millions), or -1.
 */
static double
agg_bench_kernel_f32(struct bench *b, double seconds, int exact)
{
	size_t xflags_off = (size_t)B_WINDOW * b->elems * SHR_POOL_XLIMBS * 8;
	size_t acc_len = exact ? xflags_off + (size_t)B_WINDOW * b->elems : B_WINDOW * b->elems * 4;
	uint8_t *acc, *chunks, out[AGG_MAX_ELEMS * 4];
	struct shr_pool_round rd;
	uint64_t t0, end, n = 0, x = 0x9e3779b97f4a7c15ull;
	uint32_t i, crc = 0;
	volatile uint32_t sink;
	double dt, c0;

	acc = rte_zmalloc("bench_facc", acc_len, 64);
	chunks = rte_malloc("bench_fchunks", (size_t)B_NPKT * b_msg_len(b), 64);
	if (acc == NULL || chunks == NULL) {
		rte_free(acc);
		rte_free(chunks);
		return -1;
	}
	for (i = 0; i < B_NPKT * b_msg_len(b) / 4; i++) {
		uint32_t u;

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		u = (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
		u = (u & 0x807fffffu) | ((67u + (u >> 8) % 121u) << 23);
		memcpy(chunks + 4 * (size_t)i, &u, 4);
	}
	memset(&rd, 0, sizeof(rd));
	rd.dtype = SHR_DTYPE_FLOAT32;
	rd.op = SHR_OP_SUM;
	rd.count = b->elems;
	rd.exact = (uint8_t)(exact != 0);
	c0 = agg_bench_cpu_s();
	t0 = rte_rdtsc();
	end = t0 + (uint64_t)(seconds * (double)rte_get_tsc_hz());
	do {
		for (i = 0; i < B_NPKT; i++) {
			const uint8_t *msg = chunks + (size_t)i * b_msg_len(b);
			uint32_t slot = (i / B_WORLD) % B_WINDOW, c;
			uint64_t *limbs = (uint64_t *)acc +
					  (size_t)slot * b->elems * SHR_POOL_XLIMBS;
			uint8_t *flags = acc + xflags_off + (size_t)slot * b->elems;
			float *facc = (float *)acc + (size_t)slot * b->elems;

			if (i % B_WORLD == 0) {
				if (exact) {
					memset(limbs, 0, b->elems * SHR_POOL_XLIMBS * 8);
					memset(flags, 0, b->elems);
				} else {
					memset(facc, 0, b->elems * 4);
				}
			}
			c = shr_crc32c_hdr(msg);
			c = shr_crc32c(c, msg + SHR_PROTO_HDR_LEN, b->elems * 4);
			crc ^= c;
			if (exact)
				shr_pool_reduce_x32(limbs, flags, msg + SHR_PROTO_HDR_LEN,
						    b->elems);
			else
				shr_pool_reduce_f32(facc, msg + SHR_PROTO_HDR_LEN, b->elems,
						    SHR_OP_SUM);
			if (i % B_WORLD == B_WORLD - 1) {
				rd.acc = exact ? (const void *)limbs : (const void *)facc;
				rd.xflags = exact ? flags : NULL;
				shr_pool_result_write(&rd, out);
				crc ^= out[0];
			}
		}
		n += B_NPKT;
	} while (rte_rdtsc() < end && !agg_quit);
	dt = (double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz();
	b->cpu_mpps = (double)n / (agg_bench_cpu_s() - c0) / 1e6;
	sink = crc;
	(void)sink;
	rte_free(chunks);
	rte_free(acc);
	return (double)n / dt / 1e6;
}

int
agg_bench_kernels(struct bench *b, double seconds, struct bench_kern *k)
{
	const char *failed = NULL;

	fprintf(stderr, "shouter-agg: bench: the one-thread kernels, %.1f s\n", seconds * 4.5);
	k->roof = agg_bench_kernel(b, seconds);
	k->cpu_roof = b->cpu_mpps;
	k->mac = agg_bench_kernel_mac(b, seconds);
	k->cpu_mac = b->cpu_mpps;
	k->f_stream = agg_bench_kernel_f32(b, seconds, 0);
	k->cpu_stream = b->cpu_mpps;
	k->f_exact = agg_bench_kernel_f32(b, seconds, 1);
	k->cpu_exact = b->cpu_mpps;
	k->crc_hw = agg_bench_crc(b, seconds / 8, shr_crc32c_hw, false);
	k->crc_fold = agg_bench_crc(b, seconds / 8, shr_crc32c_fold, false);
	k->crc_hw_hot = agg_bench_crc(b, seconds / 8, shr_crc32c_hw, true);
	k->crc_fold_hot = agg_bench_crc(b, seconds / 8, shr_crc32c_fold, true);
	if (k->roof <= 0)
		failed = "the roofline (no memory?)";
	else if (k->mac <= 0)
		failed = "the roofline with the MAC (no memory, or a signed copy that did not verify)";
	else if (k->f_stream <= 0 || k->f_exact <= 0)
		failed = "a float32 SUM kernel (no memory?)";
	if (failed != NULL) {
		fprintf(stderr, "shouter-agg: bench: %s failed\n", failed);
		return -EIO;
	}
	return 0;
}
