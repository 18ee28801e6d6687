/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_POOL_CONV_H
#define SHR_POOL_CONV_H

/**
 * @file
 * Private to lib/pool: element access (little-endian wire elements, any alignment) and the
 * half-precision conversions, shared by the streaming kernels (shr_pool.c) and the exact
 * accumulator (shr_pool_exact.c). Everything is always inlined, so that the loops that use
 * it vectorise.
 */

#include <stdint.h>
#include <string.h>

#include "shr_proto.h"

#define SHR_ALWAYS_INLINE static inline __attribute__((always_inline))

/* a if cond else b, as masks (gcc does not always if-convert nested ternaries). */
SHR_ALWAYS_INLINE uint32_t
sel_u32(int cond, uint32_t a, uint32_t b)
{
	uint32_t m = (uint32_t)0 - (uint32_t)(cond != 0);

	return (a & m) | (b & ~m);
}

/* ---- element access (little-endian on the wire, any alignment) ---- */

SHR_ALWAYS_INLINE uint32_t
ld_u32(const uint8_t *p)
{
	uint32_t x;

	memcpy(&x, p, sizeof(x));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap32(x);
#endif
	return x;
}

SHR_ALWAYS_INLINE uint16_t
ld_u16(const uint8_t *p)
{
	uint16_t x;

	memcpy(&x, p, sizeof(x));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap16(x);
#endif
	return x;
}

SHR_ALWAYS_INLINE void
st_u32(uint8_t *p, uint32_t x)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap32(x);
#endif
	memcpy(p, &x, sizeof(x));
}

SHR_ALWAYS_INLINE void
st_u16(uint8_t *p, uint16_t x)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap16(x);
#endif
	memcpy(p, &x, sizeof(x));
}

SHR_ALWAYS_INLINE float
u32_as_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

SHR_ALWAYS_INLINE uint32_t
f32_as_u32(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/* ---- half-precision conversions (portable, branch-free so that they vectorise) ---- */

/*
 * binary16 -> binary32, exact. Normal numbers re-bias the exponent (127 - 15 = 112);
 * subnormals (em < 0x400) are em * 2^-24, computed from an exact int -> float conversion (no
 * subnormal float arithmetic, so DAZ/FTZ modes do not change the result); infinities and NaNs
 * keep their payload (a quiet NaN stays quiet, a signalling one stays signalling).
 */
SHR_ALWAYS_INLINE float
f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t em = h & 0x7fffu;
	uint32_t nrm = (em << 13) + (112u << 23);
	uint32_t sub = f32_as_u32((float)(int32_t)em * 0x1p-24f);
	uint32_t special = (em << 13) | 0x7f800000u;
	uint32_t bits;

	bits = sel_u32(em < 0x400u, sub, nrm);
	bits = sel_u32(em >= 0x7c00u, special, bits);
	return u32_as_f32(bits | sign);
}

/*
 * binary32 -> binary16, round to nearest, ties to even. Overflow (|x| >= 65520) gives infinity;
 * a NaN gives a quiet NaN with the top 10 bits of the payload. The normal range is integer
 * arithmetic. The subnormal range (|x| < 2^-14) adds 0.5f: the sum lies in [0.5, 1), where
 * the float32 ulp is 2^-24, the binary16 subnormal quantum, so the addition itself rounds
 * (to nearest even in the default rounding mode, which the sums assume as well) and the low
 * bits of the sum are the binary16 subnormal (0x400 when it rounds up to the smallest normal,
 * which is also the right encoding). Inputs there are either normal float32 numbers or
 * subnormals that become 0 anyway, so DAZ/FTZ do not change the result.
 */
SHR_ALWAYS_INLINE uint16_t
f32_to_f16(float f)
{
	uint32_t u = f32_as_u32(f);
	uint32_t sign = (u >> 16) & 0x8000u;
	uint32_t a = u & 0x7fffffffu;
	/* Normal range: drop 13 mantissa bits with RNE; a carry moves into the exponent. */
	uint32_t nrm = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
	uint32_t sub = f32_as_u32(u32_as_f32(a) + 0.5f) - 0x3f000000u;
	uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
	uint32_t h;

	h = sel_u32(a >= 0x38800000u, nrm, sub);
	h = sel_u32(a >= 0x477ff000u, 0x7c00u, h);
	h = sel_u32(a > 0x7f800000u, nan, h);
	return (uint16_t)(h | sign);
}

/* bfloat16 -> binary32: exact, a shift. */
SHR_ALWAYS_INLINE float
bf16_to_f32(uint16_t h)
{
	return u32_as_f32((uint32_t)h << 16);
}

/* binary32 -> bfloat16, round to nearest, ties to even; NaN -> quiet NaN, same sign. */
SHR_ALWAYS_INLINE uint16_t
f32_to_bf16(float f)
{
	uint32_t u = f32_as_u32(f);
	uint32_t rnd = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	uint32_t nan = (u >> 16) | 0x40u;

	return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rnd);
}

/* Load element i of a float-accumulated wire dtype (a compile-time constant after inlining). */
SHR_ALWAYS_INLINE float
ld_float(const uint8_t *s, uint32_t i, unsigned int wire)
{
	switch (wire) {
	case SHR_DTYPE_FLOAT16:
		return f16_to_f32(ld_u16(s + 2 * (size_t)i));
	case SHR_DTYPE_BFLOAT16:
		return bf16_to_f32(ld_u16(s + 2 * (size_t)i));
	default:
		return u32_as_f32(ld_u32(s + 4 * (size_t)i));
	}
}

#endif /* SHR_POOL_CONV_H */
