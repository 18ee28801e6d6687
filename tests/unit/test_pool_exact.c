/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Unit tests of the pool's exact accumulator (reproducible float sums, shr_pool.h) against
 * references computed by other means: the float32 addition of the hardware (a sum of two
 * floats is IEEE-rounded exactly once, so it must agree bit for bit), and for more terms the
 * big integer of pool_exact_test.h. (The pool's exact slots: test_pool_exact_slots.c.)
 */

#include "pool_exact_test.h"

/* Sum terms with shr_pool_xsum, in the given order. */
static uint32_t
xsum_of(const uint32_t *t, uint32_t n)
{
	struct shr_pool_xsum x;
	uint32_t i;

	shr_pool_xsum_clear(&x);
	for (i = 0; i < n; i++)
		shr_pool_xsum_add(&x, t[i]);
	return shr_pool_xsum_f32(&x);
}

static uint32_t
ref_of(const uint32_t *t, uint32_t n)
{
	struct ref r;
	uint32_t i;

	ref_clear(&r);
	for (i = 0; i < n; i++)
		ref_add(&r, t[i]);
	return ref_round(&r);
}

static void
shuffle32(uint32_t *v, uint32_t n)
{
	uint32_t i, j, t;

	for (i = n; i > 1; i--) {
		j = (uint32_t)(rnd() % i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* Two terms: exactly the hardware's IEEE float32 addition (default rounding, no FTZ). */
static void
test_pairs_vs_hardware(void **state)
{
	uint32_t i, t[2], got, want, nonzero = 0;

	(void)state;
	for (i = 0; i < 400000; i++) {
		switch (i % 4) {
		case 0:	/* any exponents: mostly one term dwarfs the other */
			t[0] = rnd_finite();
			t[1] = rnd_finite();
			break;
		case 1:	/* close exponents: carries, cancellation, ties */
			t[0] = rnd_near(30);
			t[1] = rnd_near(30);
			break;
		case 2:	/* subnormals and the smallest normals */
			t[0] = (uint32_t)(rnd() & 0x80ffffffu);
			t[1] = (uint32_t)(rnd() & 0x80ffffffu);
			break;
		default:	/* near the top: overflow to infinity */
			t[0] = (uint32_t)(rnd() & 0x807fffffu) |
			       (250u + (uint32_t)(rnd() % 5)) << 23;
			t[1] = (uint32_t)(rnd() & 0x807fffffu) |
			       (250u + (uint32_t)(rnd() % 5)) << 23;
			break;
		}
		want = fbits(bitsf(t[0]) + bitsf(t[1]));
		got = xsum_of(t, 2);
		if (got != want)
			fail_msg("%08x + %08x: got %08x want %08x", t[0], t[1], got, want);
		nonzero += (want & 0x7fffffffu) != 0;
		assert_int_equal(ref_of(t, 2), want);	/* the reference agrees too */
	}
	assert_true(nonzero > 390000);
}

/* Special values, zeros, ties and overflow, by hand. */
static void
test_specials(void **state)
{
	static const struct {
		uint32_t t[4];
		uint32_t n;
		uint32_t want;
	} c[] = {
		{ { 0 }, 0, 0x00000000u },				/* no term: +0 */
		{ { 0x80000000u }, 1, 0x80000000u },			/* -0 */
		{ { 0x80000000u, 0x80000000u, 0x80000000u }, 3, 0x80000000u },
		{ { 0x80000000u, 0x00000000u }, 2, 0x00000000u },	/* -0 + +0 */
		{ { 0x3f800000u, 0xbf800000u }, 2, 0x00000000u },	/* 1 + -1 = +0 */
		{ { 0xbf800000u, 0x3f800000u, 0x80000000u }, 3, 0x00000000u },
		{ { 0x7f800000u, 0x3f800000u }, 2, 0x7f800000u },	/* inf + 1 */
		{ { 0xff800000u, 0x7f7fffffu }, 2, 0xff800000u },	/* -inf + max */
		{ { 0x7f800000u, 0xff800000u }, 2, 0x7fc00000u },	/* inf - inf */
		{ { 0x7fc00001u, 0x3f800000u }, 2, 0x7fc00000u },	/* NaN (payload dropped) */
		{ { 0xff800001u, 0x7f800000u }, 2, 0x7fc00000u },	/* sNaN + inf */
		/* signalling NaNs (quiet bit clear) are NaNs too, not infinities */
		{ { 0x7f800001u, 0x3f800000u }, 2, 0x7fc00000u },
		{ { 0x3f800000u, 0xffbfffffu }, 2, 0x7fc00000u },
		{ { 0x7fa00000u }, 1, 0x7fc00000u },
		{ { 0xff800001u, 0xff800000u }, 2, 0x7fc00000u },	/* -sNaN + -inf */
		{ { 0x7f7fffffu, 0x7f7fffffu }, 2, 0x7f800000u },	/* max + max: inf */
		{ { 0xff7fffffu, 0xff7fffffu }, 2, 0xff800000u },
		/* max + half an ulp: a tie, max is odd: inf */
		{ { 0x7f7fffffu, 0x73000000u }, 2, 0x7f800000u },
		{ { 0x7f7fffffu, 0x72ffffffu }, 2, 0x7f7fffffu },	/* just below the tie */
		/* overflow, then back in range: the exact sum never overflows on the way */
		{ { 0x7f7fffffu, 0x7f7fffffu, 0xff7fffffu }, 3, 0x7f7fffffu },
		{ { 0x3f800000u, 0x33800000u }, 2, 0x3f800000u },	/* 1 + 2^-24: tie to even */
		{ { 0x3f800001u, 0x33800000u }, 2, 0x3f800002u },	/* odd: up */
		{ { 0x3f800000u, 0x33800000u, 0x1f800000u }, 3, 0x3f800001u }, /* + 2^-64: above */
		{ { 0x3f800000u, 0x33800000u, 0x9f800000u }, 3, 0x3f800000u }, /* - 2^-64: below */
		{ { 0x00000001u, 0x00000001u }, 2, 0x00000002u },	/* subnormals add exactly */
		{ { 0x007fffffu, 0x00000001u }, 2, 0x00800000u },	/* into the normals */
		{ { 0x00800000u, 0x80000001u }, 2, 0x007fffffu },	/* and back */
		{ { 0x3f800000u, 0x00000001u, 0xbf800000u }, 3, 0x00000001u }, /* 1 + tiny - 1 */
	};
	uint32_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint32_t got = xsum_of(c[i].t, c[i].n), ref = ref_of(c[i].t, c[i].n);

		if (got != c[i].want || ref != c[i].want)
			fail_msg("case %u: got %08x ref %08x want %08x", i, got, ref, c[i].want);
	}
}

/* Many terms of every kind against the big-integer reference, in shuffled orders. */
static void
test_many_vs_reference(void **state)
{
	uint32_t t[300], n, i, k, trial, want, got, order_differs = 0;

	(void)state;
	for (trial = 0; trial < 3000; trial++) {
		n = 1 + (uint32_t)(rnd() % 300);
		for (i = 0; i < n; i++) {
			switch ((trial + i) % 5) {
			case 0:
				t[i] = rnd_finite();
				break;
			case 1:
			case 2:
				t[i] = rnd_near(trial % 60);
				break;
			case 3:
				t[i] = (uint32_t)(rnd() & 0x80ffffffu);	/* tiny */
				break;
			default:	/* cancel an earlier term */
				t[i] = i != 0 ? t[rnd() % i] ^ 0x80000000u : rnd_finite();
				break;
			}
		}
		want = ref_of(t, n);
		for (k = 0; k < 5; k++) {
			float seq = 0;

			got = xsum_of(t, n);
			if (got != want)
				fail_msg("trial %u (n %u, order %u): got %08x want %08x", trial, n,
					 k, got, want);
			for (i = 0; i < n; i++)
				seq += bitsf(t[i]);
			order_differs += fbits(seq) != want;
			shuffle32(t, n);
		}
	}
	/* the inputs are such that summing in float32 does depend on the order */
	assert_true(order_differs > 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_vs_hardware),
		cmocka_unit_test(test_specials),
		cmocka_unit_test(test_many_vs_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
