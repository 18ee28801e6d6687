/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * CRC32C (Castagnoli, reflected polynomial 0x82f63b78, init and final xor 0xffffffff).
 *
 * Two implementations that give the same result:
 * - a portable slice-by-8 table version (tables built once, at first use);
 * - on x86-64, the SSE4.2 crc32 instruction. Its latency is a few cycles while the CPU can
 *   start one per cycle, so long buffers are cut into three equal blocks whose CRCs run as
 *   three independent streams; the three partial CRCs are then combined by shifting the
 *   first two over the bytes that follow them (a multiplication by x^(8n) mod P, done with
 *   one carry-less multiply each and a single crc32 reduction). The combine needs PCLMULQDQ;
 *   without it the hardware version runs one stream.
 * - on x86-64 with AVX-512 and VPCLMULQDQ, for buffers of FOLD_MIN_LEN bytes and more, folding
 *   by carry-less multiplication: sixteen 128-bit lanes (four 512-bit registers) each hold a
 *   value congruent, mod P, to the data folded into it so far; a fold multiplies a lane's two
 *   64-bit halves by x^(8D + 31) and x^(8D - 33) mod P (D the distance it moves forward, in
 *   bytes) and adds the data D bytes on. The lanes are folded into one, and the crc32
 *   instruction reduces its 16 bytes and runs the tail. 256 bytes per iteration where crc32
 *   does 8 bytes per cycle at best: 1 KiB in about half the time of the three streams, 8 KiB in
 *   about a third.
 *
 * Raw register values ("state") are used internally: state = ~crc.
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shr_proto.h"

#define CRC32C_POLY 0x82f63b78u	/* reflected x^32 + x^28 + x^27 + ... + 1 */

typedef uint32_t (*crc_state_fn)(uint32_t state, const uint8_t *p, size_t len);

static uint32_t sw_table[8][256];
static atomic_bool sw_ready;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static uint32_t crc_first(uint32_t crc, const void *buf, size_t len);
static _Atomic(uint32_t (*)(uint32_t, const void *, size_t)) crc_impl = crc_first;

/* ---------------------------------------------------------------------------------------- */
/* Portable slice-by-8. */

static void
sw_build_tables(void)
{
	for (unsigned int i = 0; i < 256; i++) {
		uint32_t v = i;

		for (int bit = 0; bit < 8; bit++)
			v = (v >> 1) ^ ((v & 1) ? CRC32C_POLY : 0);
		sw_table[0][i] = v;
	}
	/* sw_table[k][i]: the state after byte i followed by k zero bytes. */
	for (unsigned int k = 1; k < 8; k++)
		for (unsigned int i = 0; i < 256; i++) {
			uint32_t v = sw_table[k - 1][i];

			sw_table[k][i] = (v >> 8) ^ sw_table[0][v & 0xff];
		}
}

static inline uint32_t
load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t
sw_state(uint32_t state, const uint8_t *p, size_t len)
{
	/* Single bytes up to an 8-byte boundary: same result, cheaper loads after. */
	while (len > 0 && ((uintptr_t)p & 7) != 0) {
		state = (state >> 8) ^ sw_table[0][(state ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo = state ^ load_le32(p);
		uint32_t hi = load_le32(p + 4);

		state = sw_table[7][lo & 0xff] ^ sw_table[6][(lo >> 8) & 0xff] ^
			sw_table[5][(lo >> 16) & 0xff] ^ sw_table[4][lo >> 24] ^
			sw_table[3][hi & 0xff] ^ sw_table[2][(hi >> 8) & 0xff] ^
			sw_table[1][(hi >> 16) & 0xff] ^ sw_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len > 0) {
		state = (state >> 8) ^ sw_table[0][(state ^ *p++) & 0xff];
		len--;
	}
	return state;
}

/* ---------------------------------------------------------------------------------------- */
/* SSE4.2 (x86-64). */

#if defined(__x86_64__) && defined(__GNUC__)
#define SHR_CRC_X86 1
#include <immintrin.h>

/*
 * Three-stream blocks: each stream covers a multiple of 8 bytes, at most ILV_MAX_BLOCK
 * bytes. shift_k[i] is x^(8 * 8 * i - 33) mod P (reflected), the constant that shifts a
 * state over 8 * i bytes of zeros (see hw_shift2); i goes up to 2 * ILV_MAX_BLOCK / 8.
 */
#define ILV_MAX_BLOCK 4096
/*
 * Buffers shorter than this run one stream. Measured on an AMD EPYC (Zen): three streams
 * win from about 96 bytes up (1 KiB: 47 ns vs 120 ns for one stream), lose below.
 */
#define ILV_MIN_LEN 96
static uint32_t shift_k[2 * ILV_MAX_BLOCK / 8 + 1];
static bool hw_has_clmul;

/* Multiply a reflected residue by x, mod P. */
static inline uint32_t
mul_x(uint32_t v)
{
	return (v >> 1) ^ ((v & 1) ? CRC32C_POLY : 0);
}

static void
hw_build_shift(void)
{
	/* x^31 is bit 0 in the reflected form; each index step multiplies by x^64. */
	uint32_t v = 1;

	shift_k[0] = 0;	/* unused: a shift over 0 bytes is the identity */
	for (size_t i = 1; i < sizeof(shift_k) / sizeof(shift_k[0]); i++) {
		shift_k[i] = v;
		for (int b = 0; b < 64; b++)
			v = mul_x(v);
	}
}

__attribute__((target("sse4.2")))
static uint32_t
hw_state1(uint32_t state, const uint8_t *p, size_t len)
{
	uint64_t s = state;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		s = _mm_crc32_u64(s, w);
		p += 8;
		len -= 8;
	}
	state = (uint32_t)s;
	if (len >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		state = _mm_crc32_u32(state, w);
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		state = _mm_crc32_u16(state, w);
		p += 2;
		len -= 2;
	}
	if (len > 0)
		state = _mm_crc32_u8(state, *p);
	return state;
}

/*
 * a * x^(8 * 2 * blk) ^ b * x^(8 * blk) mod P, for states a and b. A carry-less product
 * c * k is the reflected polynomial (c * k * x) in 64 bits; crc32 of that word computes
 * (c * k * x) * x^32 mod P, so k = x^(8n - 33) shifts c over n bytes. Both products are
 * reduced by one crc32 since the reduction is linear.
 */
__attribute__((target("sse4.2,pclmul")))
static inline uint32_t
hw_shift2(uint32_t a, uint32_t b, size_t blk)
{
	__m128i ka = _mm_cvtsi32_si128((int)shift_k[2 * blk / 8]);
	__m128i kb = _mm_cvtsi32_si128((int)shift_k[blk / 8]);
	__m128i pa = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), ka, 0x00);
	__m128i pb = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)b), kb, 0x00);
	uint64_t v = (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(pa, pb));

	return (uint32_t)_mm_crc32_u64(0, v);
}

__attribute__((target("sse4.2,pclmul")))
static uint32_t
hw_state3(uint32_t state, const uint8_t *p, size_t len)
{
	while (len >= ILV_MIN_LEN) {
		size_t blk = len / 24 * 8;
		uint64_t a = state, b = 0, c = 0;
		const uint8_t *end;

		if (blk > ILV_MAX_BLOCK)
			blk = ILV_MAX_BLOCK;
		end = p + blk;
		while (p < end) {
			uint64_t wa, wb, wc;

			memcpy(&wa, p, 8);
			memcpy(&wb, p + blk, 8);
			memcpy(&wc, p + 2 * blk, 8);
			a = _mm_crc32_u64(a, wa);
			b = _mm_crc32_u64(b, wb);
			c = _mm_crc32_u64(c, wc);
			p += 8;
		}
		state = hw_shift2((uint32_t)a, (uint32_t)b, blk) ^ (uint32_t)c;
		p += 2 * blk;
		len -= 3 * blk;
	}
	return hw_state1(state, p, len);
}

/*
 * Folding (AVX-512, VPCLMULQDQ). fold_k[i] holds, for distance fold_d[i] bytes, the constants
 * that move a 128-bit lane forward by it: x^(8D + 31) mod P for its low 64 bits (the first 8
 * bytes) and x^(8D - 33) mod P for its high 64 bits, in the reflected form of shift_k.
 */
#define FOLD_MIN_LEN 256
enum { FOLD_256, FOLD_64, FOLD_48, FOLD_32, FOLD_16, FOLD_N };
static const uint32_t fold_d[FOLD_N] = { 256, 64, 48, 32, 16 };
static uint64_t fold_k[FOLD_N][2] __attribute__((aligned(16)));
static bool hw_has_fold;

/* x^e mod P, reflected (bit 31 is x^0). */
static uint32_t
xpow_mod(uint32_t e)
{
	uint32_t v = 0x80000000u;

	while (e-- > 0)
		v = mul_x(v);
	return v;
}

static void
hw_build_fold(void)
{
	for (int i = 0; i < FOLD_N; i++) {
		fold_k[i][0] = xpow_mod(8 * fold_d[i] + 31);
		fold_k[i][1] = xpow_mod(8 * fold_d[i] - 33);
	}
}

/* Lane v moved forward by fold_k[k]'s distance, plus the data d there (128 bits). */
__attribute__((target("sse4.2,pclmul")))
static inline __m128i
fold128(__m128i v, int k, __m128i d)
{
	__m128i kk = _mm_load_si128((const __m128i *)fold_k[k]);

	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(v, kk, 0x00),
					   _mm_clmulepi64_si128(v, kk, 0x11)), d);
}

/* The same for the four lanes of v, by the distance of constants kk (512 bits). */
__attribute__((target("avx512f,vpclmulqdq")))
static inline __m512i
fold512(__m512i v, __m512i kk, __m512i d)
{
	/* 0x96: a ^ b ^ c */
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(v, kk, 0x00),
					 _mm512_clmulepi64_epi128(v, kk, 0x11), d, 0x96);
}

__attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
static uint32_t
hw_state_fold(uint32_t state, const uint8_t *p, size_t len)
{
	__m512i a0, a1, a2, a3, kk;
	__m128i v;
	uint64_t s;

	if (len < FOLD_MIN_LEN)
		return hw_state3(state, p, len);
	/* The state enters as the first 4 bytes' xor (the CRC is linear). */
	a0 = _mm512_xor_si512(_mm512_loadu_si512(p),
			      _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)state)));
	a1 = _mm512_loadu_si512(p + 64);
	a2 = _mm512_loadu_si512(p + 128);
	a3 = _mm512_loadu_si512(p + 192);
	p += 256;
	len -= 256;
	kk = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)fold_k[FOLD_256]));
	while (len >= 256) {
		a0 = fold512(a0, kk, _mm512_loadu_si512(p));
		a1 = fold512(a1, kk, _mm512_loadu_si512(p + 64));
		a2 = fold512(a2, kk, _mm512_loadu_si512(p + 128));
		a3 = fold512(a3, kk, _mm512_loadu_si512(p + 192));
		p += 256;
		len -= 256;
	}
	kk = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)fold_k[FOLD_64]));
	a1 = fold512(a0, kk, a1);
	a2 = fold512(a1, kk, a2);
	a3 = fold512(a2, kk, a3);
	while (len >= 64) {
		a3 = fold512(a3, kk, _mm512_loadu_si512(p));
		p += 64;
		len -= 64;
	}
	/* The four lanes of a3 into its last one, then 16 bytes at a time. */
	v = _mm512_extracti32x4_epi32(a3, 3);
	v = fold128(_mm512_extracti32x4_epi32(a3, 0), FOLD_48, v);
	v = fold128(_mm512_extracti32x4_epi32(a3, 1), FOLD_32, v);
	v = fold128(_mm512_extracti32x4_epi32(a3, 2), FOLD_16, v);
	while (len >= 16) {
		v = fold128(v, FOLD_16, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	s = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));
	s = _mm_crc32_u64(s, (uint64_t)_mm_extract_epi64(v, 1));
	return hw_state1((uint32_t)s, p, len);
}
#endif /* x86-64 */

/* ---------------------------------------------------------------------------------------- */
/* Dispatch. */

static uint32_t
crc_sw_entry(uint32_t crc, const void *buf, size_t len)
{
	return ~sw_state(~crc, buf, len);
}

/*
 * Set once by crc_init(): the best version without folding (shr_crc32c_hw()). The one
 * shr_crc32c() runs, crc_impl, is the best within the vector width allowed (crc_pick()):
 * any, unless shr_crc32c_max_simd() lowered it.
 */
static uint32_t (*crc_hw_impl)(uint32_t, const void *, size_t) = crc_sw_entry;

#ifdef SHR_CRC_X86
static bool hw_has_sse42;

static uint32_t
crc_hw1_entry(uint32_t crc, const void *buf, size_t len)
{
	return ~hw_state1(~crc, buf, len);
}

static uint32_t
crc_hw3_entry(uint32_t crc, const void *buf, size_t len)
{
	return ~hw_state3(~crc, buf, len);
}

static uint32_t
crc_fold_entry(uint32_t crc, const void *buf, size_t len)
{
	return ~hw_state_fold(~crc, buf, len);
}
#endif

/*
 * shr_crc32c()'s version: the best this CPU has with vectors of at most `bits` (the crc32
 * instruction is scalar, the three streams' combine uses 128-bit PCLMULQDQ, folding 512-bit
 * VPCLMULQDQ). All give the same results, so it may change while others run shr_crc32c().
 */
static void
crc_pick(unsigned int bits)
{
	uint32_t (*fn)(uint32_t, const void *, size_t) = crc_sw_entry;

#ifdef SHR_CRC_X86
	if (hw_has_fold && bits >= 512)
		fn = crc_fold_entry;
	else if (hw_has_clmul && bits >= 128)
		fn = crc_hw3_entry;
	else if (hw_has_sse42)
		fn = crc_hw1_entry;
#else
	(void)bits;
#endif
	atomic_store_explicit(&crc_impl, fn, memory_order_release);
}

static void
crc_init(void)
{
	sw_build_tables();
	atomic_store_explicit(&sw_ready, true, memory_order_release);
#ifdef SHR_CRC_X86
	__builtin_cpu_init();
	hw_has_sse42 = __builtin_cpu_supports("sse4.2");
	if (hw_has_sse42) {
		hw_has_clmul = __builtin_cpu_supports("pclmul");
		if (hw_has_clmul)
			hw_build_shift();
		crc_hw_impl = hw_has_clmul ? crc_hw3_entry : crc_hw1_entry;
		hw_has_fold = hw_has_clmul && __builtin_cpu_supports("avx512f") &&
			      __builtin_cpu_supports("vpclmulqdq");
		if (hw_has_fold)
			hw_build_fold();
	}
#endif
	crc_pick(UINT_MAX);
}

static uint32_t
crc_first(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&init_once, crc_init);
	return atomic_load_explicit(&crc_impl, memory_order_acquire)(crc, buf, len);
}

uint32_t
shr_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return atomic_load_explicit(&crc_impl, memory_order_acquire)(crc, buf, len);
}

/*
 * The header's span alone, called twice per message (validate and build). Where the compiler
 * may use SSE4.2 anyway (-march with it: the default native build on x86-64) the 60 bytes are
 * seven 8-byte and one 4-byte crc32 in a row, without the dispatch and the length loops of
 * shr_crc32c() (about 60 instructions there, 20 here); the result is the same by definition.
 */
#if defined(SHR_CRC_X86) && defined(__SSE4_2__)
_Static_assert(SHR_PROTO_CRC_SPAN == 7 * 8 + 4, "header span: 7 words and one half-word");

uint32_t
shr_crc32c_hdr(const void *hdr)
{
	const uint8_t *p = hdr;
	uint64_t s = 0xffffffffu;
	uint32_t w4;

	for (unsigned int i = 0; i < 7; i++) {
		uint64_t w;

		memcpy(&w, p + 8 * i, 8);
		s = _mm_crc32_u64(s, w);
	}
	memcpy(&w4, p + 56, 4);
	return ~_mm_crc32_u32((uint32_t)s, w4);
}
#else
uint32_t
shr_crc32c_hdr(const void *hdr)
{
	return shr_crc32c(0, hdr, SHR_PROTO_CRC_SPAN);
}
#endif

uint32_t
shr_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	if (!atomic_load_explicit(&sw_ready, memory_order_acquire))
		pthread_once(&init_once, crc_init);
	return crc_sw_entry(crc, buf, len);
}

uint32_t
shr_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&init_once, crc_init);
	return crc_hw_impl(crc, buf, len);
}

uint32_t
shr_crc32c_fold(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&init_once, crc_init);
#ifdef SHR_CRC_X86
	if (hw_has_fold)
		return crc_fold_entry(crc, buf, len);
#endif
	return crc_hw_impl(crc, buf, len);
}

const char *
shr_crc32c_impl(void)
{
	uint32_t (*fn)(uint32_t, const void *, size_t);

	pthread_once(&init_once, crc_init);
	fn = atomic_load_explicit(&crc_impl, memory_order_acquire);
#ifdef SHR_CRC_X86
	if (fn == crc_fold_entry)
		return "avx512-vpclmulqdq";
	if (fn == crc_hw3_entry)
		return "sse4.2x3";
	if (fn == crc_hw1_entry)
		return "sse4.2";
#endif
	return "sw";
}

int
shr_crc32c_max_simd(unsigned int bits)
{
	if (bits < 64)
		return -EINVAL;
	pthread_once(&init_once, crc_init);
	crc_pick(bits);
	return 0;
}
