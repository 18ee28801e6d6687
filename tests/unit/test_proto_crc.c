/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Unit tests of the wire protocol's CRC32C (lib/proto): against published vectors and a
 * bit-at-a-time reference (proto_test.h), the hardware and portable versions against each
 * other, the header span's CRC, and the version chosen for this CPU. (Header layout, build
 * and validate, the name tables: test_proto.c.)
 */

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shr_proto.h"
#include "proto_test.h"

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static const struct {
	const char *name;
	crc_fn fn;
} crc_impls[] = {
	{ "shr_crc32c", shr_crc32c },
	{ "shr_crc32c_sw", shr_crc32c_sw },
	{ "shr_crc32c_hw", shr_crc32c_hw },
	{ "shr_crc32c_fold", shr_crc32c_fold },
};
#define N_IMPLS (sizeof(crc_impls) / sizeof(crc_impls[0]))

/* ---- CRC32C ---- */

/*
 * Runs first (keep it first in main()): no CRC has been computed in this process yet, so
 * shr_crc32c_sw() must build its tables itself before it answers.
 */
static void
test_crc_sw_first_call(void **state)
{
	(void)state;
	assert_int_equal(shr_crc32c_sw(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(shr_crc32c_sw(0, "123456789", 9), ref_crc32c(0,
			 (const uint8_t *)"123456789", 9));
}

static void
test_crc_vectors(void **state)
{
	uint8_t buf[32];

	(void)state;
	for (size_t k = 0; k < N_IMPLS; k++) {
		crc_fn f = crc_impls[k].fn;

		print_message("checking %s\n", crc_impls[k].name);
		assert_int_equal(f(0, "123456789", 9), 0xe3069283u);
		assert_int_equal(f(0, NULL, 0), 0);
		assert_int_equal(f(0x12345678, NULL, 0), 0x12345678);
		/* RFC 3720, B.4 */
		memset(buf, 0, sizeof(buf));
		assert_int_equal(f(0, buf, 32), 0x8a9136aau);
		memset(buf, 0xff, sizeof(buf));
		assert_int_equal(f(0, buf, 32), 0x62a8ab43u);
		for (int i = 0; i < 32; i++)
			buf[i] = (uint8_t)i;
		assert_int_equal(f(0, buf, 32), 0x46dd794eu);
		for (int i = 0; i < 32; i++)
			buf[i] = (uint8_t)(31 - i);
		assert_int_equal(f(0, buf, 32), 0x113fdb5cu);
	}
	/* The bit-at-a-time reference agrees with the published vector too. */
	assert_int_equal(ref_crc32c(0, (const uint8_t *)"123456789", 9), 0xe3069283u);
}

static void
test_crc_hw_equals_sw(void **state)
{
	static const size_t offs[] = { 0, 1, 2, 3, 5, 7, 8, 13 };
	size_t max = 2048;
	uint8_t *buf = malloc(max + 16);

	(void)state;
	assert_non_null(buf);
	fill_random(buf, max + 16);
	for (size_t len = 0; len <= max; len++) {
		for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
			const uint8_t *p = buf + offs[o];
			uint32_t seed = (uint32_t)rnd();
			uint32_t sw = shr_crc32c_sw(seed, p, len);

			assert_int_equal(shr_crc32c_hw(seed, p, len), sw);
			assert_int_equal(shr_crc32c_fold(seed, p, len), sw);
			assert_int_equal(shr_crc32c(seed, p, len), sw);
		}
	}
	free(buf);
}

static void
test_crc_reference(void **state)
{
	/* Every length up to 300 bytes, then long buffers that need several 3-stream blocks. */
	static const size_t longs[] = { 1021, 1024, 4093, 12288, 12289, 24600, 40000, 65537 };
	size_t max = 65537;
	uint8_t *buf = malloc(max + 8);

	(void)state;
	assert_non_null(buf);
	fill_random(buf, max + 8);
	for (size_t len = 0; len <= 300; len++)
		for (size_t k = 0; k < N_IMPLS; k++)
			assert_int_equal(crc_impls[k].fn(0, buf + 3, len),
					 ref_crc32c(0, buf + 3, len));
	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
		uint32_t want = ref_crc32c(0xdeadbeef, buf + 1, longs[i]);

		for (size_t k = 0; k < N_IMPLS; k++)
			assert_int_equal(crc_impls[k].fn(0xdeadbeef, buf + 1, longs[i]), want);
	}
	free(buf);
}

/*
 * shr_crc32c_hdr(): the header span's CRC from 0, the same as the bit-at-a-time reference and
 * shr_crc32c() at every alignment, on random headers and on each single bit set (a word or the
 * last half-word missed or taken twice would differ).
 */
static void
test_crc_hdr(void **state)
{
	uint8_t buf[SHR_PROTO_CRC_SPAN + 16];

	(void)state;
	for (int n = 0; n < 2000; n++) {
		const uint8_t *p = buf + n % 16;

		fill_random(buf, sizeof(buf));
		assert_int_equal(shr_crc32c_hdr(p), ref_crc32c(0, p, SHR_PROTO_CRC_SPAN));
		assert_int_equal(shr_crc32c_hdr(p), shr_crc32c(0, p, SHR_PROTO_CRC_SPAN));
	}
	memset(buf, 0, sizeof(buf));
	for (unsigned int bit = 0; bit < 8 * SHR_PROTO_CRC_SPAN; bit++) {
		buf[bit / 8] = (uint8_t)(1u << (bit % 8));
		assert_int_equal(shr_crc32c_hdr(buf), ref_crc32c(0, buf, SHR_PROTO_CRC_SPAN));
		buf[bit / 8] = 0;
	}
	/* the bytes after the span are not read into it */
	buf[SHR_PROTO_CRC_SPAN] = 0xff;
	assert_int_equal(shr_crc32c_hdr(buf), ref_crc32c(0, buf, SHR_PROTO_CRC_SPAN));
}

static void
test_crc_continuation(void **state)
{
	static const size_t lens[] = { 1, 7, 44, 95, 96, 100, 1072, 5000 };
	uint8_t buf[5000];

	(void)state;
	fill_random(buf, sizeof(buf));
	for (size_t k = 0; k < N_IMPLS; k++) {
		crc_fn f = crc_impls[k].fn;

		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			size_t n = lens[i];
			uint32_t whole = f(0, buf, n);
			size_t step = n > 200 ? 37 : 1;

			for (size_t cut = 0; cut <= n; cut += step) {
				uint32_t a = f(0, buf, cut);

				assert_int_equal(f(a, buf + cut, n - cut), whole);
			}
			/* Three pieces. */
			assert_int_equal(f(f(f(0, buf, n / 3), buf + n / 3, n / 3),
					   buf + 2 * (n / 3), n - 2 * (n / 3)), whole);
		}
	}
}

/*
 * The CRC32C version shr_crc32c() should run on this CPU with vectors of at most `bits`
 * (from the CPU's flags, not from the library): folding needs 512, the three streams' combine
 * 128 (PCLMULQDQ), the crc32 instruction none.
 */
static const char *
crc_want(unsigned int bits)
{
	int sse42 = 0, clmul = 0, fold = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	sse42 = __builtin_cpu_supports("sse4.2");
	clmul = sse42 && __builtin_cpu_supports("pclmul");
	fold = clmul && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
#endif
	if (fold && bits >= 512)
		return "avx512-vpclmulqdq";
	if (clmul && bits >= 128)
		return "sse4.2x3";
	return sse42 ? "sse4.2" : "sw";
}

/*
 * shr_crc32c() runs the fastest version this CPU has, and says which: the tests above compare
 * every version with the reference, so none of them goes untested where it would run.
 */
static void
test_crc_impl(void **state)
{
	(void)state;
	print_message("shr_crc32c: %s\n", shr_crc32c_impl());
	assert_string_equal(shr_crc32c_impl(), crc_want(UINT_MAX));
}

/*
 * shr_crc32c_max_simd(): below 512 bits no folding, below 128 no three streams (the crc32
 * instruction alone), back to the best when raised; every step still the reference's CRC,
 * over lengths that take each version's paths.
 */
static void
test_crc_max_simd(void **state)
{
	static const unsigned int steps[] = { 256, 128, 64, 512, 65536 };
	const char *best = shr_crc32c_impl();
	uint8_t buf[3000];

	(void)state;
	fill_random(buf, sizeof(buf));
	assert_int_equal(shr_crc32c_max_simd(63), -EINVAL);
	assert_string_equal(shr_crc32c_impl(), best);	/* refused: nothing changed */
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		assert_int_equal(shr_crc32c_max_simd(steps[i]), 0);
		print_message("max %u bits: %s\n", steps[i], shr_crc32c_impl());
		assert_string_equal(shr_crc32c_impl(), crc_want(steps[i]));
		for (size_t len = 0; len <= sizeof(buf); len += 37)
			assert_int_equal(shr_crc32c(7, buf, len), shr_crc32c_sw(7, buf, len));
	}
	assert_string_equal(shr_crc32c_impl(), best);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_sw_first_call),	/* first: see there */
		cmocka_unit_test(test_crc_vectors),
		cmocka_unit_test(test_crc_hw_equals_sw),
		cmocka_unit_test(test_crc_reference),
		cmocka_unit_test(test_crc_continuation),
		cmocka_unit_test(test_crc_hdr),
		cmocka_unit_test(test_crc_impl),
		cmocka_unit_test(test_crc_max_simd),
	};

	return cmocka_run_group_tests_name("proto_crc", tests, NULL, NULL);
}
