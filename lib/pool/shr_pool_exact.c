/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The exact accumulator of reproducible slots (see shr_pool.h, "Reproducible sums").
 *
 * A finite float32 is m * 2^(E) with an integer m < 2^24 and E in [-149, 104]: normal
 * numbers (exponent field e in 1..254) have m = 2^23 | fraction and E = e - 150, subnormals
 * (e = 0) m = fraction and E = -149. So every finite float32 is the integer m << (E + 149)
 * in units of 2^-149, and m << (E + 149) < 2^277. An element's accumulator is that integer
 * summed over the contributions, in 320-bit two's complement (5 limbs of 64 bits, limb 0
 * least significant): 277 bits of magnitude, a sign and 42 bits of headroom, so that up to
 * 2^42 terms add without overflow. Integer addition is associative and commutative, so the
 * accumulator does not depend on the order of the contributions. Infinities and NaNs are
 * flag bits beside it, and two more record whether anything came in and whether anything
 * other than -0 did (IEEE: a sum of zeros is -0 only when every term is -0).
 *
 * The result is rounded once, to the nearest value of the wire type (float32, float16 or
 * bfloat16; ties to even), when it is read.
 */

#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "shr_proto.h"
#include "shr_pool.h"
#include "shr_pool_private.h"
#include "shr_pool_conv.h"

#define XF_NAN 0x01u		/* a NaN came in */
#define XF_PINF 0x02u		/* +inf came in */
#define XF_NINF 0x04u		/* -inf came in */
#define XF_NOTNEGZ 0x08u	/* something other than -0 came in */
#define XF_TERM 0x10u		/* anything came in */

#define XL SHR_POOL_XLIMBS

/* *out = a + b + cin; returns the carry out (branch-free; adc on x86-64). */
SHR_ALWAYS_INLINE unsigned char
x_adc(unsigned char cin, uint64_t a, uint64_t b, uint64_t *out)
{
#if defined(__x86_64__)
	unsigned long long o;
	unsigned char c = _addcarry_u64(cin, a, b, &o);

	*out = o;
	return c;
#else
	uint64_t s = a + b, t = s + cin;

	*out = t;
	return (unsigned char)((s < a) | (t < s));
#endif
}

/*
 * Add the float32 with bits u to the accumulator l (XL limbs) and its flags. Branch-free
 * but for infinities and NaNs: the addend m << sh lies in limbs k = sh / 64 and k + 1 (k <=
 * 3), selected by masks; a negative one is added as its two's complement (~addend + 1).
 */
SHR_ALWAYS_INLINE void
x_add(uint64_t *restrict l, uint8_t *restrict fl, uint32_t u)
{
	uint32_t e = (u >> 23) & 0xffu;
	uint64_t m = (u & 0x7fffffu) | ((uint64_t)(e != 0) << 23);
	uint32_t sh = e - (e != 0);	/* E + 149 */
	uint64_t neg = (uint64_t)0 - (u >> 31);
	uint32_t b = sh & 63u, k = sh >> 6;
	uint64_t lo = m << b;
	/* the bits shifted out of lo (two shifts: b may be 0) */
	uint64_t hi = (m >> 1) >> (63u - b);
	unsigned char c = (unsigned char)(neg & 1u);
	uint32_t i;

	*fl |= u != 0x80000000u ? XF_TERM | XF_NOTNEGZ : XF_TERM;
	if (e == 0xffu) {
		*fl |= (u & 0x7fffffu) != 0 ? XF_NAN : neg != 0 ? XF_NINF : XF_PINF;
		return;
	}
	for (i = 0; i < XL; i++) {
		uint64_t a = (lo & ((uint64_t)0 - (uint64_t)(k == i))) |
			     (hi & ((uint64_t)0 - (uint64_t)(k + 1 == i)));

		c = x_adc(c, l[i], a ^ neg, &l[i]);
	}
}

/* 24 bits of the magnitude m from bit s on. */
static inline uint64_t
x_bits24(const uint64_t *m, uint32_t s)
{
	uint32_t w = s >> 6, b = s & 63u;
	uint64_t v = m[w] >> b;

	if (b > 40 && w + 1 < XL)
		v |= m[w + 1] << (64 - b);
	return v & 0xffffffu;
}

/* Any bit of the magnitude m below bit r. */
static inline int
x_any_below(const uint64_t *m, uint32_t r)
{
	uint32_t w = r >> 6, i;

	for (i = 0; i < w; i++)
		if (m[i] != 0)
			return 1;
	return (m[w] & (((uint64_t)1 << (r & 63u)) - 1)) != 0;
}

/*
 * A binary floating-point format to round to: p significand bits (the hidden one included),
 * d: how many bits of the accumulator's unit (2^-149) lie below its smallest subnormal,
 * e_all: its exponent field all ones (infinities, NaNs), bits: its width, qnan: the quiet
 * NaN it gives.
 */
struct x_fmt {
	uint32_t p, d, e_all, bits, qnan;
};

static const struct x_fmt x_f32 = { 24, 0, 0xffu, 32, 0x7fc00000u };
static const struct x_fmt x_f16 = { 11, 149 - 24, 0x1fu, 16, 0x7e00u };	/* 2^-24 */
static const struct x_fmt x_bf16 = { 8, 16, 0xffu, 16, 0x7fc0u };		/* 2^-133 */

/*
 * The accumulator l with flags fl, rounded once to the nearest value of format f (ties to
 * even; beyond its largest finite value, infinity): its bits. Straight from the exact sum,
 * so a float16 or bfloat16 result is not rounded to float32 first: that would round twice,
 * and a sum just above a midpoint of the narrow type, rounded to float32 onto the midpoint,
 * would then round to even, down.
 */
static uint32_t
x_round(const uint64_t *l, uint8_t fl, const struct x_fmt *f)
{
	uint64_t m[XL], q;
	uint32_t neg = (uint32_t)(l[XL - 1] >> 63), sign = neg << (f->bits - 1), p, s, i;
	uint32_t inf = f->e_all << (f->p - 1);
	unsigned __int128 c = neg;
	int top;

	if ((fl & XF_NAN) != 0 || (fl & (XF_PINF | XF_NINF)) == (XF_PINF | XF_NINF))
		return f->qnan;
	if (fl & XF_PINF)
		return inf;
	if (fl & XF_NINF)
		return 1u << (f->bits - 1) | inf;
	/* magnitude: l, or -l = ~l + 1 */
	for (i = 0; i < XL; i++) {
		c += (neg ? ~l[i] : l[i]);
		m[i] = (uint64_t)c;
		c >>= 64;
	}
	for (top = XL - 1; top >= 0 && m[top] == 0; top--)
		;
	if (top < 0)
		return (fl & (XF_TERM | XF_NOTNEGZ)) == XF_TERM ? 1u << (f->bits - 1) : 0u;
	p = 64u * (uint32_t)top + 63u - (uint32_t)__builtin_clzll(m[top]);
	/* the bits dropped: all but the top p of a normal number; below the smallest subnormal */
	s = p >= f->d + f->p - 1 ? p - (f->p - 1) : f->d;
	if (s == 0)
		return sign | (uint32_t)m[0];	/* float32 subnormal or smallest binade: exact */
	q = x_bits24(m, s);
	/* round half to even: the bit below the kept ones, and whether any below it is set */
	if ((m[(s - 1) >> 6] >> ((s - 1) & 63u)) & 1u)
		q += (x_any_below(m, s - 1) || (q & 1u)) ? 1u : 0u;
	/*
	 * The encoding is (s - d) << (p - 1) plus q: for a normal number q holds the hidden bit,
	 * which adds the 1 of the biased exponent s - d + 1; a subnormal (s = d) is q itself;
	 * a rounding carry out of q moves into the exponent by the same addition; at or past
	 * the all-ones exponent, infinity (s < 2^9: no overflow in 64 bits)
	 */
	q += (uint64_t)(s - f->d) << (f->p - 1);
	return sign | (q >= inf ? inf : (uint32_t)q);
}

void
shr_pool_xsum_clear(struct shr_pool_xsum *x)
{
	memset(x, 0, sizeof(*x));
}

void
shr_pool_xsum_add(struct shr_pool_xsum *x, uint32_t f32_bits)
{
	x_add(x->limb, &x->flags, f32_bits);
}

uint32_t
shr_pool_xsum_f32(const struct shr_pool_xsum *x)
{
	return x_round(x->limb, x->flags, &x_f32);
}

/* ---- the pool's kernels: n elements, limbs (XL each) and flags in separate arrays ---- */

SHR_ALWAYS_INLINE void
x_reduce(uint64_t *restrict l, uint8_t *restrict fl, const uint8_t *restrict s, uint32_t n,
	 unsigned int wire, int first)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (first) {
			memset(l + (size_t)XL * i, 0, XL * sizeof(*l));
			fl[i] = 0;
		}
		x_add(l + (size_t)XL * i, fl + i, f32_as_u32(ld_float(s, i, wire)));
	}
}

void
shr_pool_reduce_x32(uint64_t *limbs, uint8_t *flags, const void *src, uint32_t n)
{
	x_reduce(limbs, flags, src, n, SHR_DTYPE_FLOAT32, 0);
}

#define SHR_NOINLINE static __attribute__((noinline))

SHR_NOINLINE void
x_reduce_f16(uint64_t *limbs, uint8_t *flags, const void *src, uint32_t n, int first)
{
	x_reduce(limbs, flags, src, n, SHR_DTYPE_FLOAT16, first);
}

SHR_NOINLINE void
x_reduce_bf16(uint64_t *limbs, uint8_t *flags, const void *src, uint32_t n, int first)
{
	x_reduce(limbs, flags, src, n, SHR_DTYPE_BFLOAT16, first);
}

SHR_NOINLINE void
x_load_f32(uint64_t *limbs, uint8_t *flags, const void *src, uint32_t n)
{
	x_reduce(limbs, flags, src, n, SHR_DTYPE_FLOAT32, 1);
}

void
shr_pool_exact_reduce(uint64_t *limbs, uint8_t *flags, const void *src, uint32_t n,
		  unsigned int dtype, int first)
{
	switch (dtype) {
	case SHR_DTYPE_FLOAT32:
		if (first)
			x_load_f32(limbs, flags, src, n);
		else
			shr_pool_reduce_x32(limbs, flags, src, n);
		break;
	case SHR_DTYPE_FLOAT16:
		x_reduce_f16(limbs, flags, src, n, first);
		break;
	case SHR_DTYPE_BFLOAT16:
		x_reduce_bf16(limbs, flags, src, n, first);
		break;
	default:
		break;
	}
}

size_t
shr_pool_exact_write(void *dst, const uint64_t *limbs, const uint8_t *flags, uint32_t n,
		 unsigned int dtype)
{
	uint8_t *d = dst;
	uint32_t i;

	switch (dtype) {
	case SHR_DTYPE_FLOAT32:
		for (i = 0; i < n; i++)
			st_u32(d + 4 * (size_t)i,
			       x_round(limbs + (size_t)XL * i, flags[i], &x_f32));
		return 4 * (size_t)n;
	case SHR_DTYPE_FLOAT16:
		for (i = 0; i < n; i++)
			st_u16(d + 2 * (size_t)i,
			       (uint16_t)x_round(limbs + (size_t)XL * i, flags[i], &x_f16));
		return 2 * (size_t)n;
	case SHR_DTYPE_BFLOAT16:
		for (i = 0; i < n; i++)
			st_u16(d + 2 * (size_t)i,
			       (uint16_t)x_round(limbs + (size_t)XL * i, flags[i], &x_bf16));
		return 2 * (size_t)n;
	default:
		return 0;
	}
}
