/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PCAP_COMMON_H
#define SHR_PCAP_COMMON_H

/*
 * Shared by gen_pcap (writes aggregation traffic) and check_pcap (checks what the aggregator
 * sent back): the traffic description (options), the values every rank sends (a pure
 * function of rank, round, slot and index, so the checker can compute the exact sums), frame
 * layout helpers and a minimal pcap reader/writer (classic libpcap format, Ethernet).
 */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <shr_proto.h>

#define PC_ETH_LEN 14
#define PC_IP_LEN 20
#define PC_UDP_LEN 8
#define PC_HDRS (PC_ETH_LEN + PC_IP_LEN + PC_UDP_LEN)
#define PC_MAX_FRAME 65536

/** The traffic: one static job, every rank, `rounds` rounds of `window` slots. */
struct pc_conf {
	const char *out;	/* gen: pcap to write */
	const char *in;		/* check: pcap to read */
	const char *config;	/* gen: also write a matching shouter-agg INI here */
	uint32_t ranks;
	uint32_t job;
	uint32_t rounds;
	uint32_t window;
	uint32_t chunk;		/* elements per DATA */
	uint8_t dtype;		/* any wire dtype */
	uint8_t op;		/* SHR_OP_* of every DATA */
	uint8_t kind;		/* SHR_KIND_* of every round (pc_round_roles()) */
	uint16_t root;		/* the root of reduce, broadcast, gather and scatter */
	uint32_t agg_ip;	/* host order */
	uint8_t agg_mac[6];
	uint16_t port;		/* base UDP port of the aggregator */
	uint16_t lanes;
	uint32_t src_ip;	/* rank r sends from src_ip + r */
	uint16_t src_port;
	uint32_t tensor;
	uint32_t churn;		/* gen: frames from random sources before each round's last DATA */
	bool join;		/* JOINs first (ranks bind on JOIN) */
	bool lossy;		/* duplicates, late copies and retransmits after completion */
	bool leave;		/* every rank LEAVEs at the end */
	bool special;		/* float MIN/MAX or a relay kind: NaNs, signed zeros and
				 * infinities */
	bool joins_only;	/* the JOINs, nothing after them */
	uint32_t refused;	/* check: every JOIN refused with this status */
	bool arp;		/* an ARP request for agg_ip */
	bool icmp;		/* an ICMP echo request to agg_ip */
	bool shutdown;		/* check: the aggregator was stopped (an ABORT ends each rank's
				 * frames) */
};

static inline void
pc_defaults(struct pc_conf *c)
{
	static const uint8_t mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

	memset(c, 0, sizeof(*c));
	c->ranks = 4;
	c->job = 1;
	c->rounds = 2;
	c->window = 8;
	c->chunk = 256;
	c->dtype = SHR_DTYPE_INT32;
	c->agg_ip = (198u << 24) | (18u << 16) | 1;	/* 198.18.0.1 */
	memcpy(c->agg_mac, mac, 6);
	c->port = SHR_PROTO_UDP_PORT;
	c->lanes = 1;
	c->src_ip = (198u << 24) | (18u << 16) | 11;	/* 198.18.0.11 */
	c->src_port = 5000;
	c->tensor = 1;
}

/*
 * --kind: the roles in round (round, slot), as lib/proto/shr_proto.h's "Kinds" table has
 * them: *root (the header's root: a summed round's destination, a relay's source) and *aux
 * (a relay's destination or SHR_PROTO_RANK_ALL; a summed round's qint32 block exponent).
 * With g the round's index (round x window + slot), every rank takes each part in turn:
 *   allreduce: root 0; reduce: root --root; reduce_scatter: root g mod ranks (the block's
 *   owner); broadcast: source --root, to all; allgather: source g mod ranks, to all;
 *   gather: source the ranks other than --root in turn, destination --root; scatter: source
 *   --root, destination the others in turn; alltoall: source g mod ranks, destination each
 *   other rank in turn (every pair in ranks x (ranks - 1) rounds).
 * A relay's destination is never its source (the box refuses that: an endpoint copies such a
 * block locally). Relay kinds need ranks >= 2 (pc_parse checks).
 */
static inline uint32_t
pc_other(const struct pc_conf *c, uint32_t base, uint64_t g)
{
	return (uint32_t)((base + 1 + g % (c->ranks - 1)) % c->ranks);
}

static inline void
pc_round_roles(const struct pc_conf *c, uint32_t round, uint32_t slot, uint16_t *root,
	       uint32_t *aux)
{
	uint64_t g = (uint64_t)round * c->window + slot;
	/* qint32: a block exponent per round, which the RESULT must carry back */
	uint32_t qexp = c->dtype == SHR_DTYPE_QINT32 ? (round * 7u + slot) % 31u : 0;

	*root = 0;
	*aux = SHR_PROTO_RANK_ALL;
	switch (c->kind) {
	case SHR_KIND_REDUCE:
		*root = c->root;
		*aux = qexp;
		break;
	case SHR_KIND_REDUCE_SCATTER:
		*root = (uint16_t)(g % c->ranks);
		*aux = qexp;
		break;
	case SHR_KIND_BROADCAST:
		*root = c->root;
		break;
	case SHR_KIND_ALLGATHER:
		*root = (uint16_t)(g % c->ranks);
		break;
	case SHR_KIND_GATHER:
		*root = (uint16_t)pc_other(c, c->root, g);
		*aux = c->root;
		break;
	case SHR_KIND_SCATTER:
		*root = c->root;
		*aux = pc_other(c, c->root, g);
		break;
	case SHR_KIND_ALLTOALL:
		*root = (uint16_t)(g % c->ranks);
		*aux = pc_other(c, *root, g / c->ranks);
		break;
	default:	/* allreduce */
		*aux = qexp;
		break;
	}
}

/** Whether rank's DATA of the round carries the elements (else header-only). */
static inline bool
pc_sends_payload(const struct pc_conf *c, uint32_t round, uint32_t slot, uint32_t rank)
{
	uint16_t root;
	uint32_t aux;

	if (!shr_proto_kind_relay(c->kind))
		return true;
	pc_round_roles(c, round, slot, &root, &aux);
	return rank == root;
}

/** Whether rank's RESULT of the round carries the result (else header-only). */
static inline bool
pc_gets_payload(const struct pc_conf *c, uint32_t round, uint32_t slot, uint32_t rank)
{
	uint16_t root;
	uint32_t aux;

	pc_round_roles(c, round, slot, &root, &aux);
	switch (c->kind) {
	case SHR_KIND_ALLREDUCE:
		return true;
	case SHR_KIND_REDUCE:
	case SHR_KIND_REDUCE_SCATTER:
		return rank == root;
	case SHR_KIND_BROADCAST:
	case SHR_KIND_ALLGATHER:
		return rank != root;
	default:
		return rank == aux;
	}
}

/** Rank r's MAC: 02:00:00:00:01:rr. */
static inline void
pc_rank_mac(uint32_t r, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0;
	mac[2] = 0;
	mac[3] = (uint8_t)(r >> 8);
	mac[4] = 0x01;
	mac[5] = (uint8_t)r;
}

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

static inline bool
pc_wire_is_nan(const struct pc_conf *c, uint32_t b)
{
	switch (c->dtype) {
	case SHR_DTYPE_FLOAT16:
		return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
	case SHR_DTYPE_BFLOAT16:
		return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
	default:
		return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0;
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

/** One expected result element: its wire bits, or any NaN of the wire type. */
struct pc_want {
	uint32_t bits;
	bool nan;
};

/*
 * The expected result element, as the box defines it (lib/pool/shr_pool.c): int32 and qint32
 * wrap (two's complement); floats are accumulated in float32 and rounded once to the wire
 * type (to nearest, ties to even). MIN and MAX: a NaN in any contribution gives a NaN (which
 * NaN is unspecified); -0 is below +0, so MIN of zeros is -0 if any is -0 and MAX of zeros +0
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
		w->nan = false;
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
	w->nan = nan && (c->op == SHR_OP_MIN || c->op == SHR_OP_MAX);
	w->bits = pc_is_float(c) ? pc_f32_to_wire(c, acc) : iacc;
}

static inline bool
pc_want_ok(const struct pc_conf *c, const struct pc_want *w, uint32_t got)
{
	return w->nan ? pc_wire_is_nan(c, got) : got == w->bits;
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

static inline uint16_t
pc_cksum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;	/* host order; 0 over a header with a valid checksum */
}

/** Ethernet + IPv4 (+ UDP when proto is 17) headers; l4_len counts the L4 header too. */
static inline void
pc_fill_l2l3(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t sip,
	     uint32_t dip, uint8_t proto, uint32_t l4_len)
{
	uint16_t ck;
	uint32_t v;

	memcpy(p, dmac, 6);
	memcpy(p + 6, smac, 6);
	p[12] = 0x08;
	p[13] = 0x00;
	p += PC_ETH_LEN;
	memset(p, 0, PC_IP_LEN);
	p[0] = 0x45;
	p[2] = (uint8_t)((PC_IP_LEN + l4_len) >> 8);
	p[3] = (uint8_t)(PC_IP_LEN + l4_len);
	p[8] = 64;
	p[9] = proto;
	v = htonl(sip);
	memcpy(p + 12, &v, 4);
	v = htonl(dip);
	memcpy(p + 16, &v, 4);
	ck = pc_cksum(p, PC_IP_LEN);
	p[10] = (uint8_t)(ck >> 8);
	p[11] = (uint8_t)ck;
}

static inline void
pc_fill_udp(uint8_t *p, uint16_t sport, uint16_t dport, uint32_t msg_len)
{
	p[0] = (uint8_t)(sport >> 8);
	p[1] = (uint8_t)sport;
	p[2] = (uint8_t)(dport >> 8);
	p[3] = (uint8_t)dport;
	p[4] = (uint8_t)((PC_UDP_LEN + msg_len) >> 8);
	p[5] = (uint8_t)(PC_UDP_LEN + msg_len);
	p[6] = 0;
	p[7] = 0;
}

/* --- pcap files --- */

struct pc_file {
	FILE *f;
	bool swap;
	bool nsec;
};

static inline uint32_t
pc_sw32(const struct pc_file *pf, uint32_t v)
{
	return pf->swap ? __builtin_bswap32(v) : v;
}

static inline int
pc_open_write(struct pc_file *pf, const char *path)
{
	uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, PC_MAX_FRAME, 1 };

	pf->f = fopen(path, "wb");
	if (pf->f == NULL)
		return -errno;
	pf->swap = false;
	pf->nsec = false;
	if (fwrite(hdr, sizeof(hdr), 1, pf->f) != 1)
		return -EIO;
	return 0;
}

static inline int
pc_write(struct pc_file *pf, const void *frame, uint32_t len, uint32_t usec)
{
	uint32_t rec[4] = { usec / 1000000, usec % 1000000, len, len };

	if (fwrite(rec, sizeof(rec), 1, pf->f) != 1 || fwrite(frame, len, 1, pf->f) != 1)
		return -EIO;
	return 0;
}

static inline int
pc_open_read(struct pc_file *pf, const char *path)
{
	uint32_t hdr[6];

	pf->swap = false;
	pf->nsec = false;
	pf->f = fopen(path, "rb");
	if (pf->f == NULL)
		return -errno;
	if (fread(hdr, sizeof(hdr), 1, pf->f) != 1)
		return -EIO;
	switch (hdr[0]) {
	case 0xa1b2c3d4: pf->swap = false; pf->nsec = false; break;
	case 0xa1b23c4d: pf->swap = false; pf->nsec = true; break;
	case 0xd4c3b2a1: pf->swap = true; pf->nsec = false; break;
	case 0x4d3cb2a1: pf->swap = true; pf->nsec = true; break;
	default: return -EINVAL;
	}
	if (pc_sw32(pf, hdr[5]) != 1)	/* LINKTYPE_ETHERNET */
		return -EINVAL;
	return 0;
}

/** Next frame: its length (captured), 0 at the end, or -EIO. */
static inline int
pc_read(struct pc_file *pf, uint8_t *buf, uint32_t cap)
{
	uint32_t rec[4], len;

	if (fread(rec, sizeof(rec), 1, pf->f) != 1)
		return 0;
	len = pc_sw32(pf, rec[2]);
	if (len > cap || (len != 0 && fread(buf, len, 1, pf->f) != 1))
		return -EIO;
	return (int)len;
}

static inline void
pc_close(struct pc_file *pf)
{
	if (pf->f != NULL)
		fclose(pf->f);
	pf->f = NULL;
}

/* --- options (the same for both tools, so that the checker describes the same traffic) --- */

static inline int
pc_parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno != 0 || *end != '\0' || *s == '-' || v < lo || v > hi) {
		fprintf(stderr, "%s: expected an integer in %u..%u, got '%s'\n", opt, lo, hi, s);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static inline int
pc_parse_ip(const char *opt, const char *s, uint32_t *ip)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1) {
		fprintf(stderr, "%s: expected A.B.C.D, got '%s'\n", opt, s);
		return -EINVAL;
	}
	*ip = ntohl(a.s_addr);
	return 0;
}

static inline int
pc_parse_mac(const char *opt, const char *s, uint8_t mac[6])
{
	unsigned int b[6], i;
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6) {
		fprintf(stderr, "%s: expected a MAC xx:xx:xx:xx:xx:xx, got '%s'\n", opt, s);
		return -EINVAL;
	}
	for (i = 0; i < 6; i++) {
		if (b[i] > 255) {
			fprintf(stderr, "%s: bad MAC '%s'\n", opt, s);
			return -EINVAL;
		}
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

#define PC_OPTS_HELP \
	"  --ranks N (4)  --job ID (1)  --rounds R (2; even, so that a looped replay\n" \
	"  alternates versions)  --window W (8)  --chunk ELEMS (256)\n" \
	"  --dtype int32|float32|float16|bfloat16|qint32 (int32)  --op sum|min|max|prod (sum;\n" \
	"  prod: not qint32)  --special (a float dtype with min or max, or a relay kind: NaNs,\n" \
	"  signed zeros and infinities in some elements; the result as lib/pool defines it)\n" \
	"  --kind allreduce|reduce|reduce_scatter|broadcast|allgather|gather|scatter|alltoall\n" \
	"  (allreduce; relay kinds need ranks >= 2: the source's DATA carries the elements, the\n" \
	"  others' are header-only; each round's roles: pc_round_roles())  --root R (0; the\n" \
	"  root of reduce, broadcast, gather and scatter)\n" \
	"  --agg-ip A.B.C.D (198.18.0.1)  --agg-mac MAC (02:00:00:00:00:01)\n" \
	"  --port P (47000)  --lanes L (1; slot s goes to port P + s mod L)\n" \
	"  --src-ip A.B.C.D (198.18.0.11; rank r uses +r)  --src-port P (5000)\n" \
	"  --tensor ID (1)  --join (JOINs first; ranks bind on JOIN)\n" \
	"  --churn N (0; gen_pcap: before the last rank's DATA of every round and slot, N DATA\n" \
	"  frames claiming a rank from random sources in 10.0.0.0/8: refused as spoofed)\n" \
	"  --lossy (ranks >= 2; an ordered job; every round and slot: one rank's DATA\n" \
	"  twice while the round is open, rank 0's copies of the two previous rounds after its\n" \
	"  DATA of this one, and one rank's DATA again after the round completed: it, and only\n" \
	"  it, gets the result again)  --leave (every rank LEAVEs at the end: one LEAVE_ACK each)\n" \
	"  --arp (an ARP request for the aggregator)  --icmp (an ICMP echo request)\n" \
	"  --joins-only (the JOINs only: implies --join)  --refused ERRNO (check_pcap: every\n" \
	"  rank's JOIN refused: one JOIN_ACK of that status each, nothing else)\n" \
	"  --shutdown (check_pcap: the aggregator was stopped: each rank's last frame is an\n" \
	"  ABORT for every member, aux ESHUTDOWN)\n"

/** Parse the shared options; 0, 1 (help), or -EINVAL. */
static inline int
pc_parse(struct pc_conf *c, int argc, char **argv, void (*usage)(void))
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "in", required_argument, NULL, 'i' },
		{ "config", required_argument, NULL, 'C' },
		{ "ranks", required_argument, NULL, 'n' },
		{ "job", required_argument, NULL, 'j' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "window", required_argument, NULL, 'w' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "dtype", required_argument, NULL, 'd' },
		{ "op", required_argument, NULL, 'O' },
		{ "special", no_argument, NULL, 'Z' },
		{ "kind", required_argument, NULL, 'K' },
		{ "root", required_argument, NULL, 'T' },
		{ "joins-only", no_argument, NULL, 'Y' },
		{ "refused", required_argument, NULL, 'R' },
		{ "agg-ip", required_argument, NULL, 'A' },
		{ "agg-mac", required_argument, NULL, 'M' },
		{ "port", required_argument, NULL, 'p' },
		{ "lanes", required_argument, NULL, 'l' },
		{ "src-ip", required_argument, NULL, 'S' },
		{ "src-port", required_argument, NULL, 'P' },
		{ "tensor", required_argument, NULL, 't' },
		{ "churn", required_argument, NULL, 'N' },
		{ "join", no_argument, NULL, 'J' },
		{ "lossy", no_argument, NULL, 'L' },
		{ "leave", no_argument, NULL, 'E' },
		{ "arp", no_argument, NULL, 'a' },
		{ "icmp", no_argument, NULL, 'I' },
		{ "shutdown", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t v;
	int o, d;

	pc_defaults(c);
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int rc = 0;

		switch (o) {
		case 'o': c->out = optarg; break;
		case 'i': c->in = optarg; break;
		case 'C': c->config = optarg; break;
		case 'n':
			rc = pc_parse_u32("--ranks", optarg, 1, SHR_PROTO_MAX_WORLD, &c->ranks);
			break;
		case 'j': rc = pc_parse_u32("--job", optarg, 0, UINT32_MAX, &c->job); break;
		case 'r': rc = pc_parse_u32("--rounds", optarg, 1, 1u << 20, &c->rounds); break;
		case 'w': rc = pc_parse_u32("--window", optarg, 1, 1u << 20, &c->window); break;
		case 'c': rc = pc_parse_u32("--chunk", optarg, 1, 2048, &c->chunk); break;
		case 'd':
			d = shr_proto_dtype_parse(optarg);
			if (d < 0) {
				fprintf(stderr, "--dtype: int32, float32, float16, bfloat16 or "
					"qint32, got '%s'\n", optarg);
				rc = -EINVAL;
			}
			c->dtype = (uint8_t)d;
			break;
		case 'O':
			d = shr_proto_op_parse(optarg);
			if (d < 0) {
				fprintf(stderr, "--op: sum, min, max or prod, got '%s'\n", optarg);
				rc = -EINVAL;
			}
			c->op = (uint8_t)d;
			break;
		case 'Z': c->special = true; break;
		case 'K':
			d = shr_proto_kind_parse(optarg);
			if (d < 0) {
				fprintf(stderr, "--kind: allreduce, reduce, reduce_scatter, "
					"broadcast, allgather, gather, scatter or alltoall, got "
					"'%s'\n", optarg);
				rc = -EINVAL;
			}
			c->kind = (uint8_t)d;
			break;
		case 'T':
			rc = pc_parse_u32("--root", optarg, 0, SHR_PROTO_MAX_WORLD - 1, &v);
			c->root = (uint16_t)v;
			break;
		case 'Y': c->joins_only = c->join = true; break;
		case 'R': rc = pc_parse_u32("--refused", optarg, 1, 65535, &c->refused); break;
		case 'A': rc = pc_parse_ip("--agg-ip", optarg, &c->agg_ip); break;
		case 'M': rc = pc_parse_mac("--agg-mac", optarg, c->agg_mac); break;
		case 'p':
			rc = pc_parse_u32("--port", optarg, 1, 65535, &v);
			c->port = (uint16_t)v;
			break;
		case 'l':
			rc = pc_parse_u32("--lanes", optarg, 1, 64, &v);
			c->lanes = (uint16_t)v;
			break;
		case 'S': rc = pc_parse_ip("--src-ip", optarg, &c->src_ip); break;
		case 'P':
			rc = pc_parse_u32("--src-port", optarg, 1, 65535, &v);
			c->src_port = (uint16_t)v;
			break;
		case 't': rc = pc_parse_u32("--tensor", optarg, 0, UINT32_MAX, &c->tensor); break;
		case 'N': rc = pc_parse_u32("--churn", optarg, 0, 1u << 20, &c->churn); break;
		case 'J': c->join = true; break;
		case 'L': c->lossy = true; break;
		case 'E': c->leave = true; break;
		case 'a': c->arp = true; break;
		case 'I': c->icmp = true; break;
		case 'X': c->shutdown = true; break;
		case 'h': usage(); return 1;
		default: usage(); return -EINVAL;
		}
		if (rc < 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (c->special && (!pc_is_float(c) || (c->op != SHR_OP_MIN && c->op != SHR_OP_MAX &&
						!shr_proto_kind_relay(c->kind)))) {
		fprintf(stderr, "--special: needs a float dtype and --op min or max, or a relay "
			"kind\n");
		return -EINVAL;
	}
	if (c->root >= c->ranks) {
		fprintf(stderr, "--root: %u is no rank of %u\n", c->root, c->ranks);
		return -EINVAL;
	}
	if (shr_proto_kind_relay(c->kind) && c->ranks < 2) {
		fprintf(stderr, "--kind %s: needs --ranks 2 or more\n",
			shr_proto_kind_str(c->kind));
		return -EINVAL;
	}
	if (c->op == SHR_OP_PROD && c->dtype == SHR_DTYPE_QINT32) {
		fprintf(stderr, "--op prod: not with qint32 (the box refuses it)\n");
		return -EINVAL;
	}
	if (c->lossy && c->ranks < 2) {
		fprintf(stderr, "--lossy: needs --ranks 2 or more\n");
		return -EINVAL;
	}
	if ((uint32_t)c->port + c->lanes - 1 > 65535) {
		fprintf(stderr, "--port/--lanes: past port 65535\n");
		return -EINVAL;
	}
	return 0;
}

/*
 * The incarnation token of the replayed job: the INI gen_pcap writes configures it
 * ([job.N] token =), since a replay cannot learn it from a JOIN_ACK.
 */
#define PC_TOKEN 0x7368725f72706c79ull	/* "shr_rply" */

/* Identity of round k, slot s (the same at every rank). */
static inline void
pc_round_msg(const struct pc_conf *c, uint32_t round, uint32_t slot, struct shr_proto_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = SHR_MSG_DATA;
	m->dtype = c->dtype;
	m->op = c->op;
	m->ver = (uint8_t)(round & 1);
	m->world = (uint16_t)c->ranks;
	m->job = c->job;
	m->slot = slot;
	m->count = c->chunk;
	m->tensor = c->tensor;
	m->step = round;
	m->offset = ((uint64_t)round * c->window + slot) * c->chunk;
	m->token = PC_TOKEN;
	m->kind = c->kind;
	pc_round_roles(c, round, slot, &m->root, &m->aux);
}

/*
 * --lossy, per round k and slot s (gen_pcap writes, in this order): every rank's DATA, where
 * rank pc_dup_rank()'s comes twice in a row (the round is still open: a duplicate, counted,
 * not summed, unanswered) and rank 0's is followed by its copies of rounds k - 1 and k - 2
 * (late copies of rounds every member has had: stale, counted, unanswered); then, after the
 * last rank's DATA completed the round, rank pc_resend_rank()'s DATA of round k again (its
 * RESULT was lost: the box sends that rank alone the round's sum again).
 */
static inline uint32_t
pc_dup_rank(const struct pc_conf *c, uint32_t round, uint32_t slot)
{
	return (round + slot) % (c->ranks - 1);	/* never the last rank: the round is open */
}

static inline uint32_t
pc_resend_rank(const struct pc_conf *c, uint32_t round, uint32_t slot)
{
	return (round + 2 * slot + 1) % c->ranks;
}

/** What the box must count for the traffic (the msg_* counters of /shouter/stats). */
struct pc_expect {
	uint64_t data;		/* DATA summed */
	uint64_t completed;	/* rounds completed (one RESULT to every rank each) */
	uint64_t resent;	/* RESULTs sent again to one rank */
	uint64_t duplicates;	/* DATA counted already in an open round */
	uint64_t stale;		/* late copies of completed rounds */
	uint64_t leaves;
};

static inline void
pc_expect(const struct pc_conf *c, struct pc_expect *e)
{
	uint64_t rounds = c->joins_only ? 0 : (uint64_t)c->rounds * c->window;

	memset(e, 0, sizeof(*e));
	e->data = rounds * c->ranks;
	e->completed = rounds;
	if (c->lossy) {
		e->resent = rounds;
		e->duplicates = rounds;
		e->stale = (uint64_t)c->window * ((c->rounds >= 1 ? c->rounds - 1 : 0) +
						  (c->rounds >= 2 ? c->rounds - 2 : 0));
	}
	e->leaves = c->leave ? c->ranks : 0;
}

#endif /* SHR_PCAP_COMMON_H */
