/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PCAP_VALUES_H
#define SHR_PCAP_VALUES_H

/*
 * The values every rank sends (a pure function of rank, round, slot and index, so that the
 * checker can compute the exact results) and the expected result of each element, as the box
 * defines it, computed independently of lib/pool (through pcap_common.h).
 */

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pcap_conf.h"

/* A 32-bit finaliser (murmur3's): every input bit changes about half the output bits. */
static inline uint32_t
pc_mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return x;
}

/* The hash every value is drawn from. */
static inline uint32_t
pc_hash(uint32_t rank, uint32_t round, uint32_t slot, uint32_t i)
{
	return pc_mix32(pc_mix32(pc_mix32(pc_mix32(i ^ 0x5bd1e995u) + rank * 0x9e3779b9u) +
				 round * 0x27d4eb2fu) + slot * 0x165667b1u);
}

static inline bool
pc_is_float(const struct pc_conf *c)
{
	return c->dtype == SHR_DTYPE_FLOAT32 || c->dtype == SHR_DTYPE_FLOAT16 ||
	       c->dtype == SHR_DTYPE_BFLOAT16;
}

static inline float
pc_f32(uint32_t b)
{
	float f;

	memcpy(&f, &b, 4);
	return f;
}

static inline uint32_t
pc_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	return b;
}

/*
 * The checker's own conversions (an oracle independent of lib/pool's): binary16 through the
 * compiler's _Float16 (round to nearest, ties to even); bfloat16 as the nearer of the two
 * bfloat16 values around f, measured in double, ties to the even one (f finite, far from
 * FLT_MAX, as every value here).
 */
static inline float
pc_f16_to_f32(uint16_t h)
{
	_Float16 x;

	memcpy(&x, &h, 2);
	return (float)x;
}

static inline uint16_t
pc_f32_to_f16(float f)
{
	_Float16 x = (_Float16)f;
	uint16_t h;

	memcpy(&h, &x, 2);
	return h;
}

static inline uint16_t
pc_f32_to_bf16(float f)
{
	uint32_t u = pc_bits(f), lo = u >> 16, hi = lo + 1;
	double dl, dh;

	if ((u & 0xffffu) == 0)
		return (uint16_t)lo;
	dl = fabs((double)f - (double)pc_f32(lo << 16));
	dh = fabs((double)pc_f32(hi << 16) - (double)f);
	return (uint16_t)(dl < dh || (dl == dh && (lo & 1) == 0) ? lo : hi);
}

/** Wire bits (low 16 for the 16-bit types) -> float; float -> wire bits (RNE). */
static inline float
pc_wire_to_f32(const struct pc_conf *c, uint32_t b)
{
	if (c->dtype == SHR_DTYPE_FLOAT16)
		return pc_f16_to_f32((uint16_t)b);
	if (c->dtype == SHR_DTYPE_BFLOAT16)
		return pc_f32(b << 16);
	return pc_f32(b);
}

static inline uint32_t
pc_f32_to_wire(const struct pc_conf *c, float f)
{
	if (c->dtype == SHR_DTYPE_FLOAT16)
		return pc_f32_to_f16(f);
	if (c->dtype == SHR_DTYPE_BFLOAT16)
		return pc_f32_to_bf16(f);
	return pc_bits(f);
}

/** A NaN of the wire type, drawn from g: either sign, quiet or signalling, some payload. */
static inline uint32_t
pc_nan_wire(const struct pc_conf *c, uint32_t g)
{
	uint32_t sign = g >> 31, quiet = (g >> 30) & 1, pay;

	switch (c->dtype) {
	case SHR_DTYPE_FLOAT16:
		pay = (g & 0x1ffu) | 1u;
		return sign << 15 | 0x7c00u | quiet << 9 | pay;
	case SHR_DTYPE_BFLOAT16:
		pay = (g & 0x3fu) | 1u;
		return sign << 15 | 0x7f80u | quiet << 6 | pay;
	default:
		pay = (g & 0x3fffffu) | 1u;
		return sign << 31 | 0x7f800000u | quiet << 22 | pay;
	}
}


static inline uint32_t
pc_log2_floor(uint32_t x)
{
	return x <= 1 ? 0 : 31u - (uint32_t)__builtin_clz(x);
}

/*
 * Float values (h: the element's hash). SUM, MIN, MAX: odd integers m times 2^k, a quarter
 * of them negative, each exact in the wire type, with every partial sum an integer below the
 * largest the wire type's sum may reach (2^24 for float32 and bfloat16, 65504 for binary16),
 * so that the float32 accumulation the box does is exact in any order: the result is that
 * exact sum rounded once to the wire type. Most sums need more significant bits than the wire
 * type has (bfloat16 8, binary16 11, float32 more than 17), so a box that rounds each partial
 * sum, or rounds otherwise than to nearest even, is caught. float32 keeps k = 0 and m up to
 * (2^24 - 1) / ranks. PROD: m in {1, 3, 5, 7} (m = 1 past the first 8 ranks, 4 in binary16,
 * so the float32 product is exact) times 2^e, e small (the product stays normal and finite
 * in the wire type), either sign.
 */
static inline float
pc_val_float(const struct pc_conf *c, uint32_t rank, uint32_t h)
{
	uint32_t n = c->ranks, lim, mmax, kmax, m, k;
	bool f16 = c->dtype == SHR_DTYPE_FLOAT16;
	float v;
	int e;

	if (c->op == SHR_OP_PROD) {
		m = rank < (f16 ? 4u : 8u) ? 2 * (h & 3) + 1 : 1;
		if (f16)
			e = rank < 4 ? (int)((h >> 4) & 3) - 2 : 0;
		else
			e = rank < 16 ? (int)((h >> 4) & 7) - 4 : 0;
		v = ldexpf((float)m, e);
		return (h >> 31) ? -v : v;
	}
	switch (c->dtype) {
	case SHR_DTYPE_FLOAT16:
		lim = 65504u / n;
		mmax = lim < 2047u ? lim : 2047u;
		break;
	case SHR_DTYPE_BFLOAT16:
		lim = 0xffffffu / n;
		mmax = lim < 255u ? lim : 255u;
		break;
	default:
		lim = 0xffffffu / n;
		mmax = lim;
		break;
	}
	kmax = pc_log2_floor(lim / mmax);
	m = 2 * ((h & 0x3fffffffu) % ((mmax + 1) / 2)) + 1;
	k = c->dtype == SHR_DTYPE_FLOAT32 ? 0 : pc_mix32(h) % (kmax + 1);
	v = (float)(m << k);
	return (h >> 30) == 3 ? -v : v;
}

/*
 * --special (a float dtype, MIN or MAX): the elements that carry NaNs, signed zeros and
 * infinities; g (drawn from round, slot and index, the same at every rank) picks what element
 * i carries and the ranks a and b involved (rank order is the order the box reduces in, so
 * rank 0 exercises the first contribution, the others the later ones):
 *   0: rank a sends a NaN; 1: ranks a and b send NaNs; 2: every rank a zero of either sign;
 *   3: rank a -0, rank b +0, the others values on the far side (positive for MIN, negative
 *      for MAX), so that the zeros decide; 4: rank a +inf, rank b -inf;
 *   otherwise ordinary values. Returns true when rank's element i is special (*wire set).
 */
static inline bool
pc_special(const struct pc_conf *c, uint32_t rank, uint32_t round, uint32_t slot, uint32_t i,
	   uint32_t *wire)
{
	uint32_t g = pc_mix32(pc_hash(0xffffu, round, slot, i) + 0x2545f491u);
	uint32_t a = (g >> 8) % c->ranks, b = (g >> 20) % c->ranks;
	float far;

	switch (g % 8) {
	case 0:
	case 1:
		if (rank != a && (g % 8 == 0 || rank != b))
			return false;
		*wire = pc_nan_wire(c, pc_mix32(g + rank));
		return true;
	case 2:
		*wire = pc_f32_to_wire(c, (pc_mix32(g + rank) & 1) ? -0.0f : 0.0f);
		return true;
	case 3:
		far = (float)(1 + ((pc_mix32(g + rank) >> 4) & 15));
		*wire = pc_f32_to_wire(c, rank == b ? 0.0f : rank == a ? -0.0f :
				       c->op == SHR_OP_MIN ? far : -far);
		return true;
	case 4:
		if (rank != a && rank != b)
			return false;
		*wire = pc_f32_to_wire(c, rank == a ? INFINITY : -INFINITY);
		return true;
	default:
		return false;
	}
}

/*
 * Rank's element i of (round, slot), as wire bits (the low 16 for the 16-bit types).
 * int32 SUM: any value (sums wrap). int32 and qint32 otherwise: hashed (qint32 SUM: within
 * +-2^23, as quantised values are); PROD: odd (a product of even numbers wraps to 0). Floats:
 * pc_val_float(), or pc_special() with --special. No period in the index or the slot aliases
 * with window x chunk, so another round's result is wrong in nearly every element.
 */
static inline uint32_t
pc_val_bits(const struct pc_conf *c, uint32_t rank, uint32_t round, uint32_t slot, uint32_t i)
{
	uint32_t h, w;

	if (pc_is_float(c)) {
		if (c->special && pc_special(c, rank, round, slot, i, &w))
			return w;
		return pc_f32_to_wire(c, pc_val_float(c, rank, pc_hash(rank, round, slot, i)));
	}
	if (c->dtype == SHR_DTYPE_INT32 && c->op == SHR_OP_SUM)
		return rank * 1000003u + round * 7919u + slot * 31u + i * 2654435761u;
	h = pc_hash(rank, round, slot, i);
	if (c->op == SHR_OP_PROD)
		return h | 1u;
	if (c->dtype == SHR_DTYPE_QINT32 && c->op == SHR_OP_SUM)
		return (uint32_t)((int32_t)h >> 8);
	return h;
}

/** One expected result element: its wire bits. */
struct pc_want {
	uint32_t bits;
};

/*
 * The expected result element, as the box defines it (lib/pool/shr_pool.c): int32 and qint32
 * wrap (two's complement); floats are accumulated in float32 and rounded once to the wire
 * type (to nearest, ties to even). MIN and MAX: a NaN in any contribution gives the quiet NaN
 * 0x7fc00000 in the wire type (float16 0x7e00, bfloat16 0x7fc0), whichever NaNs came in;
 * -0 is below +0, so MIN of zeros is -0 if any is -0 and MAX of zeros +0
 * if any is +0, whatever the order. A relay kind's result is the source's element, bit for
 * bit.
 */
static inline void
pc_result(const struct pc_conf *c, uint32_t round, uint32_t slot, uint32_t i, struct pc_want *w)
{
	uint32_t r, b, iacc = 0, aux;
	float acc = 0, x;
	bool nan = false;
	uint16_t root;

	if (shr_proto_kind_relay(c->kind)) {
		/* relayed: the source's bits exactly (a NaN's payload, -0) */
		pc_round_roles(c, round, slot, &root, &aux);
		w->bits = pc_val_bits(c, root, round, slot, i);
		return;
	}
	for (r = 0; r < c->ranks; r++) {
		b = pc_val_bits(c, r, round, slot, i);
		if (!pc_is_float(c)) {
			if (r == 0)
				iacc = b;
			else if (c->op == SHR_OP_SUM)
				iacc += b;
			else if (c->op == SHR_OP_PROD)
				iacc *= b;
			else if (c->op == SHR_OP_MIN)
				iacc = (int32_t)b < (int32_t)iacc ? b : iacc;
			else
				iacc = (int32_t)b > (int32_t)iacc ? b : iacc;
			continue;
		}
		x = pc_wire_to_f32(c, b);
		nan |= isnan(x);
		if (r == 0)
			acc = x;
		else if (c->op == SHR_OP_SUM)
			acc += x;
		else if (c->op == SHR_OP_PROD)
			acc *= x;
		else if (c->op == SHR_OP_MIN)
			acc = x < acc || (x == acc && signbit(x)) ? x : acc;
		else
			acc = x > acc || (x == acc && !signbit(x)) ? x : acc;
	}
	if (nan && (c->op == SHR_OP_MIN || c->op == SHR_OP_MAX))
		w->bits = c->dtype == SHR_DTYPE_FLOAT16 ? 0x7e00u :
			  c->dtype == SHR_DTYPE_BFLOAT16 ? 0x7fc0u : 0x7fc00000u;
	else
		w->bits = pc_is_float(c) ? pc_f32_to_wire(c, acc) : iacc;
}

static inline bool
pc_want_ok(const struct pc_want *w, uint32_t got)
{
	return got == w->bits;
}

static inline void
pc_put32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t
pc_get32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/** Wire bytes per element. */
static inline uint32_t
pc_esize(const struct pc_conf *c)
{
	return shr_proto_dtype_size(c->dtype);
}

/** Element i of a payload (little-endian, 2 or 4 bytes). */
static inline void
pc_put_elem(const struct pc_conf *c, uint8_t *p, uint32_t i, uint32_t v)
{
	if (pc_esize(c) == 2) {
		p[2 * (size_t)i] = (uint8_t)v;
		p[2 * (size_t)i + 1] = (uint8_t)(v >> 8);
	} else {
		pc_put32le(p + 4 * (size_t)i, v);
	}
}

static inline uint32_t
pc_get_elem(const struct pc_conf *c, const uint8_t *p, uint32_t i)
{
	if (pc_esize(c) == 2)
		return (uint32_t)p[2 * (size_t)i] | (uint32_t)p[2 * (size_t)i + 1] << 8;
	return pc_get32le(p + 4 * (size_t)i);
}

#endif /* SHR_PCAP_VALUES_H */
