/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The slot pool: SwitchML's two-copy slot algorithm on plain buffers. See shr_pool.h for the
 * contract and shr_pool_private.h for the memory layout.
 *
 * The kernels below are written as simple counted loops over elements loaded with memcpy
 * (unaligned, little-endian) and with the op switch outside the loop, so that gcc -O3 with
 * -march turns each of them into vector code (check with -fopt-info-vec-optimized).
 */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "shr_proto.h"
#include "shr_pool.h"
#include "shr_pool_private.h"
#include "shr_pool_conv.h"
#include "shr_pool_slot.h"

/* ---- reduction kernels ---- */

/*
 * Float MIN and MAX: a NaN in either operand gives the quiet NaN 0x7fc00000, whatever NaNs
 * came in (ranks make NaNs of either sign and any payload: keeping one of them made the
 * result's bits depend on which arrived last); -0 is taken as smaller than +0. So the result
 * does not depend on the order of the contributions, to the bit. For equal operands, OR of
 * the bits (MIN) or AND (MAX) picks -0 or +0 respectively and is the identity otherwise.
 */
#define SHR_POOL_QNAN 0x7fc00000u

SHR_ALWAYS_INLINE float
fmin_det(float d, float x)
{
	float eq = u32_as_f32(f32_as_u32(d) | f32_as_u32(x));
	float r = x < d ? x : (x == d ? eq : d);

	return x != x || d != d ? u32_as_f32(SHR_POOL_QNAN) : r;
}

SHR_ALWAYS_INLINE float
fmax_det(float d, float x)
{
	float eq = u32_as_f32(f32_as_u32(d) & f32_as_u32(x));
	float r = x > d ? x : (x == d ? eq : d);

	return x != x || d != d ? u32_as_f32(SHR_POOL_QNAN) : r;
}

/*
 * The reduction kernels take an optional output o: when not NULL, each element is also
 * stored there in wire format as it is reduced (the last contribution of a round, fused with
 * its result's write: one pass over the elements instead of two). Every caller passes o
 * either as a NULL constant or as a parameter declared nonnull, so each loop is compiled
 * without the test inside it.
 */
SHR_ALWAYS_INLINE void
out_u32(uint8_t *restrict o, uint32_t i, uint32_t x)
{
	if (o != NULL)
		st_u32(o + 4 * (size_t)i, x);
}

SHR_ALWAYS_INLINE void
reduce_float(float *restrict d, const uint8_t *restrict s, uint32_t n, unsigned int op,
	     unsigned int wire, uint8_t *restrict o)
{
	uint32_t i;

	switch (op) {
	case SHR_OP_SUM:
		for (i = 0; i < n; i++) {
			d[i] += ld_float(s, i, wire);
			out_u32(o, i, f32_as_u32(d[i]));
		}
		break;
	case SHR_OP_MIN:
		for (i = 0; i < n; i++) {
			d[i] = fmin_det(d[i], ld_float(s, i, wire));
			out_u32(o, i, f32_as_u32(d[i]));
		}
		break;
	case SHR_OP_MAX:
		for (i = 0; i < n; i++) {
			d[i] = fmax_det(d[i], ld_float(s, i, wire));
			out_u32(o, i, f32_as_u32(d[i]));
		}
		break;
	case SHR_OP_PROD:
		for (i = 0; i < n; i++) {
			d[i] *= ld_float(s, i, wire);
			out_u32(o, i, f32_as_u32(d[i]));
		}
		break;
	default:
		break;
	}
}

SHR_ALWAYS_INLINE void
load_float(float *restrict d, const uint8_t *restrict s, uint32_t n, unsigned int wire)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		d[i] = ld_float(s, i, wire);
}

SHR_ALWAYS_INLINE void
reduce_int(int32_t *restrict d, const uint8_t *restrict s, uint32_t n, unsigned int op,
	   uint8_t *restrict o)
{
	uint32_t i;

	switch (op) {
	case SHR_OP_SUM:
		/* int32 SUM and load, the common kernels: the vector loop unrolled four times,
		 * one increment and branch per four vectors instead of per vector (the same
		 * element-wise arithmetic) */
#pragma GCC unroll 4
		for (i = 0; i < n; i++) {
			d[i] = (int32_t)((uint32_t)d[i] + ld_u32(s + 4 * (size_t)i));
			out_u32(o, i, (uint32_t)d[i]);
		}
		break;
	case SHR_OP_MIN:
		for (i = 0; i < n; i++) {
			int32_t x = (int32_t)ld_u32(s + 4 * (size_t)i);

			d[i] = x < d[i] ? x : d[i];
			out_u32(o, i, (uint32_t)d[i]);
		}
		break;
	case SHR_OP_MAX:
		for (i = 0; i < n; i++) {
			int32_t x = (int32_t)ld_u32(s + 4 * (size_t)i);

			d[i] = x > d[i] ? x : d[i];
			out_u32(o, i, (uint32_t)d[i]);
		}
		break;
	case SHR_OP_PROD:
		for (i = 0; i < n; i++) {
			d[i] = (int32_t)((uint32_t)d[i] * ld_u32(s + 4 * (size_t)i));
			out_u32(o, i, (uint32_t)d[i]);
		}
		break;
	default:
		break;
	}
}

SHR_ALWAYS_INLINE void
load_int(int32_t *restrict d, const uint8_t *restrict s, uint32_t n)
{
	uint32_t i;

#pragma GCC unroll 4
	for (i = 0; i < n; i++)
		d[i] = (int32_t)ld_u32(s + 4 * (size_t)i);
}

void
shr_pool_reduce_i32(int32_t *dst, const void *src, uint32_t n, unsigned int op)
{
	reduce_int(dst, src, n, op, NULL);
}

void
shr_pool_reduce_f32(float *dst, const void *src, uint32_t n, unsigned int op)
{
	reduce_float(dst, src, n, op, SHR_DTYPE_FLOAT32, NULL);
}

/*
 * One out-of-line function per (dtype, direction), so that each loop is compiled (and
 * vectorised) on its own rather than inside shr_pool_contribute().
 */
#define SHR_NOINLINE static __attribute__((noinline))

/* shr_pool_reduce_i32() and shr_pool_reduce_f32() for the kernel tables */
SHR_NOINLINE void
reduce_i32(void *restrict dst, const void *restrict src, uint32_t n, unsigned int op)
{
	reduce_int(dst, src, n, op, NULL);
}

SHR_NOINLINE void
reduce_f32(void *restrict dst, const void *restrict src, uint32_t n, unsigned int op)
{
	reduce_float(dst, src, n, op, SHR_DTYPE_FLOAT32, NULL);
}

SHR_NOINLINE void
reduce_f16(void *restrict dst, const void *restrict src, uint32_t n, unsigned int op)
{
	reduce_float(dst, src, n, op, SHR_DTYPE_FLOAT16, NULL);
}

SHR_NOINLINE void
reduce_bf16(void *restrict dst, const void *restrict src, uint32_t n, unsigned int op)
{
	reduce_float(dst, src, n, op, SHR_DTYPE_BFLOAT16, NULL);
}

/* out is never NULL (nonnull: the compiler drops out_u32()'s test from the loops) */
SHR_NOINLINE __attribute__((nonnull(3))) void
reduce_write_i32(void *restrict dst, const void *restrict src, uint8_t *restrict out,
		 uint32_t n, unsigned int op)
{
	reduce_int(dst, src, n, op, out);
}

SHR_NOINLINE __attribute__((nonnull(3))) void
reduce_write_f32(void *restrict dst, const void *restrict src, uint8_t *restrict out,
		 uint32_t n, unsigned int op)
{
	reduce_float(dst, src, n, op, SHR_DTYPE_FLOAT32, out);
}

SHR_NOINLINE void
load_i32(void *restrict dst, const void *restrict src, uint32_t n)
{
	load_int(dst, src, n);
}

SHR_NOINLINE void
load_f32(void *restrict dst, const void *restrict src, uint32_t n)
{
	load_float(dst, src, n, SHR_DTYPE_FLOAT32);
}

SHR_NOINLINE void
load_f16(void *restrict dst, const void *restrict src, uint32_t n)
{
	load_float(dst, src, n, SHR_DTYPE_FLOAT16);
}

SHR_NOINLINE void
load_bf16(void *restrict dst, const void *restrict src, uint32_t n)
{
	load_float(dst, src, n, SHR_DTYPE_BFLOAT16);
}

SHR_NOINLINE void
write_i32(uint8_t *restrict d, const int32_t *restrict a, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		st_u32(d + 4 * (size_t)i, (uint32_t)a[i]);
}

SHR_NOINLINE void
write_f32(uint8_t *restrict d, const float *restrict a, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		st_u32(d + 4 * (size_t)i, f32_as_u32(a[i]));
}

SHR_NOINLINE void
write_f16(uint8_t *restrict d, const float *restrict a, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		st_u16(d + 2 * (size_t)i, f32_to_f16(a[i]));
}

SHR_NOINLINE void
write_bf16(uint8_t *restrict d, const float *restrict a, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		st_u16(d + 2 * (size_t)i, f32_to_bf16(a[i]));
}

/* The kernels by dtype, for the contribute path (shr_pool_slot.h): NULL where there is none. */
const shr_pool_load_t shr_pool_load_kern[SHR_DTYPE_MAX] = {
	[SHR_DTYPE_INT32] = load_i32,
	[SHR_DTYPE_FLOAT32] = load_f32,
	[SHR_DTYPE_FLOAT16] = load_f16,
	[SHR_DTYPE_BFLOAT16] = load_bf16,
	[SHR_DTYPE_QINT32] = load_i32,
};

const shr_pool_reduce_t shr_pool_reduce_kern[SHR_DTYPE_MAX] = {
	[SHR_DTYPE_INT32] = reduce_i32,
	[SHR_DTYPE_FLOAT32] = reduce_f32,
	[SHR_DTYPE_FLOAT16] = reduce_f16,
	[SHR_DTYPE_BFLOAT16] = reduce_bf16,
	[SHR_DTYPE_QINT32] = reduce_i32,
};

/* float16 and bfloat16 have no fused kernel: reduced only, shr_pool_result_write() writes */
const shr_pool_reduce_write_t shr_pool_reduce_write_kern[SHR_DTYPE_MAX] = {
	[SHR_DTYPE_INT32] = reduce_write_i32,
	[SHR_DTYPE_FLOAT32] = reduce_write_f32,
	[SHR_DTYPE_QINT32] = reduce_write_i32,
};

size_t
shr_pool_result_write(const struct shr_pool_round *round, void *dst)
{
	if (round->exact)
		return shr_pool_exact_write(dst, round->acc, round->xflags, round->count,
					    round->dtype);
	if (round->kind < SHR_KIND_MAX && shr_proto_kind_relay(round->kind)) {
		size_t n = (size_t)round->count * shr_proto_dtype_size(round->dtype);

		memcpy(dst, round->acc, n);
		return n;
	}
	switch (round->dtype) {
	case SHR_DTYPE_INT32:
	case SHR_DTYPE_QINT32:
		write_i32(dst, round->acc, round->count);
		return 4 * (size_t)round->count;
	case SHR_DTYPE_FLOAT32:
		write_f32(dst, round->acc, round->count);
		return 4 * (size_t)round->count;
	case SHR_DTYPE_FLOAT16:
		write_f16(dst, round->acc, round->count);
		return 2 * (size_t)round->count;
	case SHR_DTYPE_BFLOAT16:
		write_bf16(dst, round->acc, round->count);
		return 2 * (size_t)round->count;
	default:
		return 0;
	}
}

/* ---- pool ---- */

static size_t
round_up_line(size_t x)
{
	return (x + SHR_POOL_LINE - 1) & ~(size_t)(SHR_POOL_LINE - 1);
}

static void
slot_clear(struct shr_pool *pool, uint32_t slot)
{
	memset(slot_get(pool, slot), 0, pool->slot_stride);
}

struct shr_pool *
shr_pool_create(const struct shr_pool_params *params)
{
	struct shr_pool *pool;
	size_t slot_stride, acc_stride, nacc, xflags_off, xstride, nxacc;
	uint32_t nwords, i;

	if (params == NULL || params->nslots == 0 || params->nslots > INT_MAX ||
	    params->max_elems == 0 || params->max_elems > SHR_POOL_MAX_ELEMS ||
	    params->max_world == 0 || params->max_world > SHR_PROTO_MAX_WORLD ||
	    params->exact_slots > params->nslots) {
		errno = EINVAL;
		return NULL;
	}
	nwords = (params->max_world + 63u) / 64u;
	slot_stride = round_up_line(sizeof(struct shr_pool_slot) + 2 * sizeof(uint64_t) * nwords);
	acc_stride = round_up_line(4 * (size_t)params->max_elems);
	nacc = 2 * (size_t)params->nslots;
	xflags_off = round_up_line(SHR_POOL_XLIMBS * sizeof(uint64_t) * (size_t)params->max_elems);
	xstride = xflags_off + round_up_line(params->max_elems);
	nxacc = 2 * (size_t)params->exact_slots;
	if (nacc > SIZE_MAX / acc_stride || params->nslots > SIZE_MAX / slot_stride ||
	    (nxacc != 0 && nxacc > SIZE_MAX / xstride)) {
		errno = ENOMEM;
		return NULL;
	}

	pool = calloc(1, sizeof(*pool));
	if (pool == NULL)
		goto fail;
	pool->nslots = params->nslots;
	pool->max_elems = params->max_elems;
	pool->max_world = params->max_world;
	pool->nwords = (uint16_t)nwords;
	pool->slot_stride = slot_stride;
	pool->acc_stride = acc_stride;
	pool->xbase = params->nslots - params->exact_slots;
	pool->xstride = xstride;
	pool->xflags_off = xflags_off;

	pool->slots = aligned_alloc(SHR_POOL_LINE, slot_stride * params->nslots);
	if (pool->slots == NULL)
		goto fail_pool;
	pool->accs = aligned_alloc(SHR_POOL_LINE, acc_stride * nacc);
	if (pool->accs == NULL)
		goto fail_slots;
	pool->range_len = calloc(params->nslots, sizeof(*pool->range_len));
	if (pool->range_len == NULL)
		goto fail_accs;
	pool->in_use = calloc(params->nslots, sizeof(*pool->in_use));
	if (pool->in_use == NULL)
		goto fail_range;
	if (nxacc != 0) {
		pool->xaccs = aligned_alloc(SHR_POOL_LINE, xstride * nxacc);
		if (pool->xaccs == NULL)
			goto fail_in_use;
		memset(pool->xaccs, 0, xstride * nxacc);
	}

	for (i = 0; i < pool->nslots; i++)
		slot_clear(pool, i);
	/* Touch the accumulators now, so that the data path takes no page faults. */
	memset(pool->accs, 0, acc_stride * nacc);
	return pool;

fail_in_use:
	free(pool->in_use);
fail_range:
	free(pool->range_len);
fail_accs:
	free(pool->accs);
fail_slots:
	free(pool->slots);
fail_pool:
	free(pool);
fail:
	errno = ENOMEM;
	return NULL;
}

void
shr_pool_free(struct shr_pool *pool)
{
	if (pool == NULL)
		return;
	free(pool->xaccs);
	free(pool->in_use);
	free(pool->range_len);
	free(pool->accs);
	free(pool->slots);
	free(pool);
}

uint32_t
shr_pool_nslots(const struct shr_pool *pool)
{
	return pool->nslots;
}

uint32_t
shr_pool_used(const struct shr_pool *pool)
{
	return pool->used;
}

uint32_t
shr_pool_free_slots(const struct shr_pool *pool, int exact)
{
	return exact ? pool->nslots - pool->xbase - pool->xused :
		       pool->xbase - (pool->used - pool->xused);
}

/* First fit of n free slots in [lo, hi). */
static int
range_alloc_in(struct shr_pool *pool, uint32_t n, uint32_t lo, uint32_t hi)
{
	uint32_t i, run = 0, j;

	if (n == 0 || n > pool->nslots)
		return -EINVAL;
	for (i = lo; i < hi; i++) {
		if (pool->in_use[i]) {
			run = 0;
			continue;
		}
		if (++run < n)
			continue;
		/* Slots [i + 1 - n, i] are free: first fit. */
		i = i + 1 - n;
		for (j = i; j < i + n; j++) {
			pool->in_use[j] = 1;
			slot_clear(pool, j);
		}
		pool->range_len[i] = n;
		pool->used += n;
		if (i >= pool->xbase)
			pool->xused += n;
		return (int)i;
	}
	return -ENOSPC;
}

int
shr_pool_range_alloc(struct shr_pool *pool, uint32_t n)
{
	return range_alloc_in(pool, n, 0, pool->xbase);
}

int
shr_pool_range_alloc_exact(struct shr_pool *pool, uint32_t n)
{
	return range_alloc_in(pool, n, pool->xbase, pool->nslots);
}

int
shr_pool_range_free(struct shr_pool *pool, uint32_t base, uint32_t n)
{
	uint32_t j;

	if (n == 0 || base >= pool->nslots || n > pool->nslots - base ||
	    pool->range_len[base] != n)
		return -EINVAL;
	for (j = base; j < base + n; j++)
		pool->in_use[j] = 0;
	pool->range_len[base] = 0;
	pool->used -= n;
	if (base >= pool->xbase)
		pool->xused -= n;
	return 0;
}

int
shr_pool_slot_reset(struct shr_pool *pool, uint32_t slot)
{
	if (slot >= pool->nslots)
		return -EINVAL;
	slot_clear(pool, slot);
	return 0;
}

int
shr_pool_round_get(const struct shr_pool *pool, uint32_t slot, unsigned int ver,
		   struct shr_pool_round *round)
{
	const struct shr_pool_copy *cp;

	if (slot >= pool->nslots || ver > 1)
		return -EINVAL;
	cp = &slot_get(pool, slot)->copy[ver];
	if (!cp->done || cp->count != 0)
		return -ENOENT;
	round_fill(pool, cp, slot, ver, round);
	return 0;
}

int
shr_pool_owed(const struct shr_pool *pool, uint32_t slot, unsigned int ver, uint16_t rank)
{
	struct shr_pool_slot *s;

	if (slot >= pool->nslots || ver > 1 || rank >= (uint32_t)pool->nwords * 64u)
		return -EINVAL;
	s = slot_get(pool, slot);
	if (!s->copy[ver].done || s->copy[ver].count != 0)
		return 0;
	return (int)(slot_bits(pool, s, ver)[rank / 64u] >> (rank % 64u) & 1u);
}

int
shr_pool_result_load(struct shr_pool *pool, const struct shr_pool_round *round, const void *src)
{
	struct shr_pool_round now;

	if (round->exact || round->kind >= SHR_KIND_MAX ||
	    shr_pool_round_get(pool, round->slot, round->ver, &now) != 0 || now.exact ||
	    now.step != round->step || now.offset != round->offset ||
	    now.count != round->count || now.dtype != round->dtype || now.kind != round->kind ||
	    now.tensor != round->tensor || now.op != round->op || now.aux != round->aux ||
	    now.root != round->root)
		return -EINVAL;	/* another round's identity: not this copy's result */
	if (shr_proto_kind_relay(now.kind)) {
		memcpy((void *)(uintptr_t)now.acc, src,
		       (size_t)now.count * shr_proto_dtype_size(now.dtype));
		return 0;
	}
	switch (now.dtype) {
	case SHR_DTYPE_INT32:
	case SHR_DTYPE_QINT32:
	case SHR_DTYPE_FLOAT32:
	case SHR_DTYPE_FLOAT16:
	case SHR_DTYPE_BFLOAT16:
		acc_load((void *)(uintptr_t)now.acc, src, now.count, now.dtype);
		return 0;
	default:
		return -EINVAL;
	}
}
