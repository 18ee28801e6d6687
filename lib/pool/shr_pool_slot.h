/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_POOL_SLOT_H
#define SHR_POOL_SLOT_H

/*
 * Private to lib/pool: what the pool's control functions (shr_pool.c) and its contribute path
 * (shr_pool_contrib.c) share: the slot record's accessors, a round's description and the
 * kernels by dtype. Include after shr_proto.h, shr_pool.h and shr_pool_private.h.
 */

#include <stddef.h>
#include <stdint.h>

/* The kernels (shr_pool.c), one out-of-line function per (dtype, direction) */
typedef void (*shr_pool_load_t)(void *restrict acc, const void *restrict src, uint32_t n);
typedef void (*shr_pool_reduce_t)(void *restrict acc, const void *restrict src, uint32_t n,
				  unsigned int op);
typedef void (*shr_pool_reduce_write_t)(void *restrict acc, const void *restrict src,
					uint8_t *restrict out, uint32_t n, unsigned int op);
extern const shr_pool_load_t shr_pool_load_kern[SHR_DTYPE_MAX];
extern const shr_pool_reduce_t shr_pool_reduce_kern[SHR_DTYPE_MAX];
extern const shr_pool_reduce_write_t shr_pool_reduce_write_kern[SHR_DTYPE_MAX];

/* First contributor: convert the wire payload into the accumulator (dtype checked before). */
static inline void
acc_load(void *acc, const void *src, uint32_t n, unsigned int dtype)
{
	shr_pool_load_kern[dtype](acc, src, n);
}

/* Later contributors: reduce the wire payload into the accumulator. */
static inline void
acc_reduce(void *acc, const void *src, uint32_t n, unsigned int dtype, unsigned int op)
{
	shr_pool_reduce_kern[dtype](acc, src, n, op);
}

/*
 * The contribution that completes a plain round: reduced into the accumulator and written to
 * out in wire format in the same pass. Returns the bytes written, or 0 where the dtype has no
 * fused kernel (float16, bfloat16: reduced only; shr_pool_result_write() writes the result).
 */
static inline size_t
acc_reduce_write(void *acc, const void *src, uint8_t *out, uint32_t n, unsigned int dtype,
		 unsigned int op)
{
	if (shr_pool_reduce_write_kern[dtype] == NULL) {
		acc_reduce(acc, src, n, dtype, op);
		return 0;
	}
	shr_pool_reduce_write_kern[dtype](acc, src, out, n, op);
	return 4 * (size_t)n;
}

static inline struct shr_pool_slot *
slot_get(const struct shr_pool *pool, uint32_t slot)
{
	return (struct shr_pool_slot *)(pool->slots + (size_t)slot * pool->slot_stride);
}

static inline uint64_t *
slot_bits(const struct shr_pool *pool, struct shr_pool_slot *s, unsigned int ver)
{
	return (uint64_t *)(s + 1) + (size_t)ver * pool->nwords;
}

static inline void *
slot_acc(const struct shr_pool *pool, uint32_t slot, unsigned int ver)
{
	return pool->accs + (2 * (size_t)slot + ver) * pool->acc_stride;
}

/* The exact accumulator of copy ver of slot (>= xbase): its limbs; its flags at xflags_off. */
static inline uint8_t *
slot_xacc(const struct shr_pool *pool, uint32_t slot, unsigned int ver)
{
	return pool->xaccs + (2 * (size_t)(slot - pool->xbase) + ver) * pool->xstride;
}

/* A round summed exactly: a float SUM in an exact slot (shr_pool.h, "Reproducible sums"). */
static inline int
round_exact(const struct shr_pool *pool, uint32_t slot, unsigned int dtype, unsigned int op,
	    unsigned int kind)
{
	return slot >= pool->xbase && op == SHR_OP_SUM && !shr_proto_kind_relay(kind) &&
	       (dtype == SHR_DTYPE_FLOAT32 || dtype == SHR_DTYPE_FLOAT16 ||
		dtype == SHR_DTYPE_BFLOAT16);
}

static inline void
round_fill(const struct shr_pool *pool, const struct shr_pool_copy *cp, uint32_t slot,
	   unsigned int ver, struct shr_pool_round *round)
{
	round->slot = slot;
	round->ver = (uint8_t)ver;
	round->dtype = cp->dtype;
	round->op = cp->op;
	round->world = cp->world;
	round->count = cp->elems;
	round->tensor = cp->tensor;
	round->step = cp->step;
	round->offset = cp->offset;
	round->aux = cp->aux;
	round->kind = cp->kind;
	round->root = cp->root;
	round->exact = (uint8_t)round_exact(pool, slot, cp->dtype, cp->op, cp->kind);
	round->acc = round->exact ? (void *)slot_xacc(pool, slot, ver) : slot_acc(pool, slot, ver);
	round->xflags = round->exact ? (const uint8_t *)round->acc + pool->xflags_off : NULL;
}

#endif /* SHR_POOL_SLOT_H */
