/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_POOL_H
#define SHR_POOL_H

/**
 * @file
 * The slot pool: SwitchML's streaming aggregation, on plain buffers.
 *
 * A pool is a fixed array of slots. Each slot has two copies (version 0 and 1); each copy has
 * a bitmap of the ranks that contributed to it, a contribution count, the identity of its
 * current round (tensor, step, offset, count, op, dtype, aux) and an accumulator of up to
 * max_elems elements. A contribution (rank r, slot i, version v):
 * - if r's bit in copy v is clear: sets it, clears r's bit in copy 1-v, and, if the copy is
 *   fresh (count 0), overwrites the accumulator and takes the contribution's identity as the
 *   round's; otherwise checks the identity (refusing a mismatch as out of step, without
 *   touching anything) and adds. When the count reaches the world size, the round is
 *   complete (SHR_POOL_COMPLETE) and the count goes back to 0: the copy now holds the result.
 * - if r's bit is already set: a retransmission. If the copy is complete (count 0) and the
 *   identity matches, the result is sent to r alone (SHR_POOL_RESEND); if the round is still
 *   open, it is a duplicate (SHR_POOL_DUPLICATE).
 *
 * The pool knows nothing of packets or mbufs; it never allocates after creation. It is not
 * thread-safe, but distinct slots share no cache line, so lcores that own disjoint sets of
 * slots may use one pool without locks. Range allocation (shr_pool_range_alloc/free) is for
 * the control path only.
 *
 * Accumulators hold int32 for SHR_DTYPE_INT32 and SHR_DTYPE_QINT32 and float32 for
 * SHR_DTYPE_FLOAT32, SHR_DTYPE_FLOAT16 and SHR_DTYPE_BFLOAT16 (float32 accumulation, converted
 * back to the wire type by shr_pool_result_write()). int32 arithmetic wraps (two's
 * complement), as a switch's does.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct shr_pool;

/** Pool dimensions, fixed at creation. */
struct shr_pool_params {
	uint32_t nslots;	/**< Number of slots (> 0). */
	uint32_t max_elems;	/**< Largest chunk, in elements (> 0). */
	uint16_t max_world;	/**< Largest world size: bitmap bits per copy (1..4096). */
};

/** One contribution (a validated DATA message, in host byte order). */
struct shr_pool_contrib {
	uint32_t slot;		/**< Absolute slot index in the pool. */
	uint8_t ver;		/**< Slot version, 0 or 1. */
	uint8_t dtype;		/**< enum shr_proto_dtype */
	uint8_t op;		/**< enum shr_proto_op */
	uint16_t rank;		/**< < world */
	uint16_t world;		/**< Contributions that complete the round (1..max_world). */
	uint32_t count;		/**< Elements (1..max_elems). */
	uint32_t tensor;
	uint32_t step;
	uint64_t offset;
	uint32_t aux;		/**< Block exponent for QINT32, else 0; part of the identity. */
	const void *payload;	/**< count elements, wire format (little-endian), any alignment. */
};

/** What a contribution did. */
enum shr_pool_verdict {
	SHR_POOL_PARTIAL = 0,	/**< Counted; the round is still open. */
	SHR_POOL_COMPLETE,	/**< Counted and complete: send the result to every member. */
	SHR_POOL_RESEND,	/**< Retransmission to a complete round: send the result to this rank. */
	SHR_POOL_DUPLICATE,	/**< Already counted, round still open: drop it. */
	SHR_POOL_OUT_OF_STEP,	/**< Refused: identity differs from the round's. Nothing changed. */
};

/** A completed round: its identity and its result (valid until the copy is reused). */
struct shr_pool_round {
	uint32_t slot;
	uint8_t ver;
	uint8_t dtype;
	uint8_t op;
	uint16_t world;
	uint32_t count;
	uint32_t tensor;
	uint32_t step;
	uint64_t offset;
	uint32_t aux;
	const void *acc;	/**< Accumulator (int32 or float32, host order), 64-byte aligned. */
};

/**
 * Create a pool.
 *
 * @param params
 *   Dimensions.
 * @return
 *   The pool, or NULL with errno set: EINVAL (a dimension out of range), ENOMEM.
 */
struct shr_pool *shr_pool_create(const struct shr_pool_params *params);

/**
 * Free a pool. NULL is allowed.
 *
 * @param pool
 *   The pool.
 */
void shr_pool_free(struct shr_pool *pool);

/**
 * Number of slots, as created.
 *
 * @param pool
 *   The pool.
 * @return
 *   nslots.
 */
uint32_t shr_pool_nslots(const struct shr_pool *pool);

/**
 * Reserve n consecutive free slots (first fit), for one job. The slots are reset (both
 * copies fresh, all bits clear).
 *
 * @param pool
 *   The pool.
 * @param n
 *   Slots wanted (> 0).
 * @return
 *   The index of the first slot (>= 0), or -EINVAL (n is 0 or larger than the pool),
 *   -ENOSPC (no run of n free slots).
 */
int shr_pool_range_alloc(struct shr_pool *pool, uint32_t n);

/**
 * Give back a range reserved by shr_pool_range_alloc().
 *
 * @param pool
 *   The pool.
 * @param base
 *   Its first slot.
 * @param n
 *   Its length.
 * @return
 *   0, or -EINVAL if [base, base + n) is not exactly a reserved range.
 */
int shr_pool_range_free(struct shr_pool *pool, uint32_t base, uint32_t n);

/**
 * Number of slots currently reserved.
 *
 * @param pool
 *   The pool.
 * @return
 *   Slots in use.
 */
uint32_t shr_pool_used(const struct shr_pool *pool);

/**
 * Apply one contribution.
 *
 * @param pool
 *   The pool.
 * @param c
 *   The contribution.
 * @param round
 *   Filled when the verdict is SHR_POOL_COMPLETE or SHR_POOL_RESEND (may be NULL otherwise,
 *   but must not be NULL when a result can be produced).
 * @return
 *   An enum shr_pool_verdict (>= 0), or -EINVAL: slot >= nslots, ver > 1, world 0 or
 *   > max_world, rank >= world, count 0 or > max_elems, unknown dtype or op, or an op the
 *   dtype does not support.
 */
int shr_pool_contribute(struct shr_pool *pool, const struct shr_pool_contrib *c,
			struct shr_pool_round *round);

/**
 * Write a round's result in wire format (little-endian elements of the round's dtype).
 *
 * @param round
 *   A round returned by shr_pool_contribute().
 * @param dst
 *   count * shr_proto_dtype_size(dtype) bytes; any alignment.
 * @return
 *   Bytes written.
 */
size_t shr_pool_result_write(const struct shr_pool_round *round, void *dst);

/**
 * Reset one slot (both copies fresh). For tests and for tearing a job down.
 *
 * @param pool
 *   The pool.
 * @param slot
 *   Absolute slot index.
 * @return
 *   0, or -EINVAL if slot >= nslots.
 */
int shr_pool_slot_reset(struct shr_pool *pool, uint32_t slot);

/**
 * The bare reduction kernels, exported for the benchmark (the roofline) and the tests.
 * dst[i] = dst[i] op src[i] for i < n; src is wire format, any alignment.
 */
void shr_pool_reduce_i32(int32_t *dst, const void *src, uint32_t n, unsigned int op);
void shr_pool_reduce_f32(float *dst, const void *src, uint32_t n, unsigned int op); /**< @see shr_pool_reduce_i32 */

#ifdef __cplusplus
}
#endif

#endif /* SHR_POOL_H */
