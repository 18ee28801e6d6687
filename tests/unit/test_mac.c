/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* lib/mac: published vectors (NIST GMAC, RFC 5869 HKDF), tamper, replay window, incarnations. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <shr_mac.h>
#include <shr_proto.h>

static void
unhex(const char *s, uint8_t *out, size_t n)
{
	size_t i;
	unsigned int v;

	assert_int_equal(strlen(s), 2 * n);
	for (i = 0; i < n; i++) {
		assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * NIST CAVS gcmEncryptExtIV128.rsp, [Keylen = 128] [IVlen = 96] [PTlen = 0] [AADlen = 128],
 * Count = 0 (GMAC: no plaintext, 16 bytes of AAD).
 * shr_mac_sign() takes the IV as sender (its first 4 bytes) || counter (the other 8).
 */
static void
check_gmac(const char *key_hex, const char *iv_hex, const char *aad_hex, size_t aad_len,
	   const char *tag_hex)
{
	uint8_t key[16], iv[12], tag[16], buf[64 + SHR_MAC_TRAILER_LEN];
	struct shr_mac *mac;

	unhex(key_hex, key, 16);
	unhex(iv_hex, iv, 12);
	unhex(tag_hex, tag, 16);
	if (aad_len)
		unhex(aad_hex, buf, aad_len);
	mac = shr_mac_create(key);
	assert_non_null(mac);
	assert_int_equal(shr_mac_sign(mac, buf, aad_len,
				      (uint32_t)iv[0] << 24 | iv[1] << 16 | iv[2] << 8 | iv[3],
				      get64(iv + 4)), 0);
	assert_memory_equal(buf + aad_len, iv, 12);
	assert_memory_equal(buf + aad_len + 12, tag, 16);
	shr_mac_free(mac);
}

static void
test_gmac_vectors(void **state)
{
	(void)state;
	check_gmac("77be63708971c4e240d1cb79e8d77feb", "e0e00f19fed7ba0136a797f3",
		   "7a43ec1d9c0a5a78a0b16533a6213cab", 16, "209fcc8d3675ed938e9c7166709dd946");
}

/* RFC 5869 A.1 (basic case) and A.3 (no salt, no info), first 16 bytes checked whole. */
static void
test_hkdf_vectors(void **state)
{
	uint8_t ikm[22], salt[13], info[10], okm[42], want[42];
	size_t i;

	(void)state;
	memset(ikm, 0x0b, sizeof(ikm));
	for (i = 0; i < sizeof(salt); i++)
		salt[i] = (uint8_t)i;
	for (i = 0; i < sizeof(info); i++)
		info[i] = (uint8_t)(0xf0 + i);
	assert_int_equal(shr_mac_hkdf(ikm, 22, salt, 13, info, 10, okm, 42), 0);
	unhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
	      "34007208d5b887185865", want, 42);
	assert_memory_equal(okm, want, 42);
	assert_int_equal(shr_mac_hkdf(ikm, 22, NULL, 0, NULL, 0, okm, 42), 0);
	unhex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
	      "9d201395faa4b61a96c8", want, 42);
	assert_memory_equal(okm, want, 42);
	assert_int_equal(shr_mac_hkdf(NULL, 22, NULL, 0, NULL, 0, okm, 42), -EINVAL);
	/* out_len: 1 .. 255 blocks of 32 bytes; more is an argument error, not libcrypto's */
	assert_int_equal(shr_mac_hkdf(ikm, 22, NULL, 0, NULL, 0, okm, 0), -EINVAL);
	{
		static uint8_t big[255 * 32 + 1];

		assert_int_equal(shr_mac_hkdf(ikm, 22, NULL, 0, NULL, 0, big, sizeof(big)),
				 -EINVAL);
		assert_int_equal(shr_mac_hkdf(ikm, 22, NULL, 0, NULL, 0, big, sizeof(big) - 1),
				 0);
	}
}

static const char secret[] = "0123456789abcdef0123456789abcdef";

/* A job incarnation's key is HKDF(secret, "shouter-mac-v1", job || token) and differs per
 * secret, job and token. */
static void
test_derive(void **state)
{
	uint8_t k[SHR_MAC_KEY_LEN], k2[SHR_MAC_KEY_LEN], okm[SHR_MAC_KEY_LEN];
	const uint8_t info[12] = { 0, 0, 0, 7, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };

	(void)state;
	assert_int_equal(shr_mac_derive(secret, 32, 7, 0x1122334455667788ull, k), 0);
	assert_int_equal(shr_mac_hkdf(secret, 32, "shouter-mac-v1", 14, info, 12, okm, 16), 0);
	assert_memory_equal(k, okm, 16);
	assert_int_equal(shr_mac_derive(secret, 32, 7, 0x1122334455667788ull, k2), 0);
	assert_memory_equal(k, k2, 16);
	assert_int_equal(shr_mac_derive(secret, 32, 8, 0x1122334455667788ull, k2), 0);
	assert_memory_not_equal(k, k2, 16);
	assert_int_equal(shr_mac_derive(secret, 32, 7, 0x1122334455667789ull, k2), 0);
	assert_memory_not_equal(k, k2, 16);
	assert_int_equal(shr_mac_derive(secret, 31, 7, 0x1122334455667788ull, k2), 0);
	assert_memory_not_equal(k, k2, 16);
	assert_int_equal(shr_mac_derive(NULL, 32, 7, 1, k2), -EINVAL);
	assert_int_equal(shr_mac_derive(secret, 0, 7, 1, k2), -EINVAL);
}

#define N_ELEMS 37
#define MSG_LEN (SHR_PROTO_HDR_LEN + 4 * N_ELEMS)

/* A DATA of job 7 with the MAC flag, built and signed under key k. */
static void
build_signed(struct shr_mac *mac, uint8_t *buf, uint32_t sender, uint64_t ctr)
{
	struct shr_proto_msg m = {
		.type = SHR_MSG_DATA, .dtype = SHR_DTYPE_INT32, .op = SHR_OP_SUM, .rank = 2,
		.world = 4, .flags = SHR_FLAG_MAC, .job = 7, .slot = 3, .count = N_ELEMS,
		.tensor = 1, .step = 9, .offset = 1000, .token = 0x1122334455667788ull,
	};
	int i;

	for (i = 0; i < N_ELEMS; i++) {
		uint32_t v = (uint32_t)(i * 2654435761u);

		memcpy(buf + SHR_PROTO_HDR_LEN + 4 * i, &v, 4);
	}
	shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, 4 * N_ELEMS);
	assert_int_equal(shr_mac_sign(mac, buf, MSG_LEN, sender, ctr), 0);
}

/* The trailer is outside the CRC and the length checks; every altered byte (header, payload,
 * trailer) fails the tag, and a frame without the trailer's room is BAD_LEN. */
static void
test_tamper(void **state)
{
	uint8_t k[SHR_MAC_KEY_LEN], buf[MSG_LEN + SHR_MAC_TRAILER_LEN];
	struct shr_proto_msg m;
	struct shr_mac *mac;
	uint64_t ctr;
	uint32_t snd;
	size_t i;
	int bit;

	(void)state;
	assert_int_equal(shr_mac_derive(secret, 32, 7, 0x1122334455667788ull, k), 0);
	mac = shr_mac_create(k);
	assert_non_null(mac);
	build_signed(mac, buf, 2, 5);
	assert_int_equal(shr_proto_validate(buf, sizeof(buf), &m), SHR_PROTO_OK);
	assert_int_equal(m.count, N_ELEMS);
	assert_true(m.flags & SHR_FLAG_MAC);
	assert_int_equal(shr_proto_validate(buf, MSG_LEN, NULL), SHR_PROTO_BAD_LEN);
	assert_int_equal(shr_proto_validate(buf, SHR_PROTO_MAC_LEN - 1 + SHR_PROTO_HDR_LEN, NULL),
			 SHR_PROTO_BAD_LEN);
	assert_int_equal(shr_mac_verify(mac, buf, sizeof(buf), &snd, &ctr), 0);
	assert_int_equal(snd, 2);
	assert_int_equal(ctr, 5);
	for (i = 0; i < sizeof(buf); i++) {
		for (bit = 0; bit < 8; bit++) {
			buf[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(shr_mac_verify(mac, buf, sizeof(buf), NULL, NULL),
					 -EBADMSG);
			buf[i] ^= (uint8_t)(1u << bit);
		}
	}
	/* the trailer changes nothing of the CRC: altering it keeps a valid frame */
	buf[MSG_LEN + 20] ^= 1;
	assert_int_equal(shr_proto_validate(buf, sizeof(buf), NULL), SHR_PROTO_OK);
	buf[MSG_LEN + 20] ^= 1;
	assert_int_equal(shr_mac_verify(mac, buf, sizeof(buf) - 1, NULL, NULL), -EBADMSG);
	assert_int_equal(shr_mac_verify(mac, buf, SHR_PROTO_HDR_LEN + SHR_MAC_TRAILER_LEN - 1,
					NULL, NULL), -EINVAL);
	assert_int_equal(shr_mac_sign(mac, buf, MSG_LEN, 2, 0), -EINVAL);
	shr_mac_free(mac);
}

/* A frame of one incarnation (token) or job never verifies under another's key. */
static void
test_wrong_incarnation(void **state)
{
	uint8_t k1[SHR_MAC_KEY_LEN], k2[SHR_MAC_KEY_LEN], k3[SHR_MAC_KEY_LEN];
	uint8_t buf[MSG_LEN + SHR_MAC_TRAILER_LEN];
	struct shr_mac *a, *b;

	(void)state;
	assert_int_equal(shr_mac_derive(secret, 32, 7, 0x1122334455667788ull, k1), 0);
	assert_int_equal(shr_mac_derive(secret, 32, 7, 0x1122334455667789ull, k2), 0);
	assert_int_equal(shr_mac_derive(secret, 32, 6, 0x1122334455667788ull, k3), 0);
	a = shr_mac_create(k1);
	b = shr_mac_create(k2);
	assert_non_null(a);
	assert_non_null(b);
	build_signed(a, buf, 2, 1);
	assert_int_equal(shr_mac_verify(a, buf, sizeof(buf), NULL, NULL), 0);
	assert_int_equal(shr_mac_verify(b, buf, sizeof(buf), NULL, NULL), -EBADMSG);
	assert_int_equal(shr_mac_rekey(b, k3), 0);
	assert_int_equal(shr_mac_verify(b, buf, sizeof(buf), NULL, NULL), -EBADMSG);
	assert_int_equal(shr_mac_rekey(b, k1), 0);
	assert_int_equal(shr_mac_verify(b, buf, sizeof(buf), NULL, NULL), 0);
	shr_mac_free(a);
	shr_mac_free(b);
}

static void
test_replay_window(void **state)
{
	struct shr_mac_window w;
	uint64_t c;

	(void)state;
	memset(&w, 0, sizeof(w));
	assert_int_equal(shr_mac_window_accept(&w, 0), -ESTALE);
	assert_int_equal(shr_mac_window_accept(&w, 1), 0);
	assert_int_equal(shr_mac_window_accept(&w, 1), -EALREADY);
	assert_int_equal(shr_mac_window_accept(&w, 5), 0);
	assert_int_equal(shr_mac_window_accept(&w, 3), 0);	/* reordered: fine once */
	assert_int_equal(shr_mac_window_accept(&w, 3), -EALREADY);
	assert_int_equal(shr_mac_window_accept(&w, 2), 0);
	assert_int_equal(shr_mac_window_accept(&w, 4), 0);
	assert_int_equal(shr_mac_window_accept(&w, 5), -EALREADY);
	/* check alone does not mark */
	assert_int_equal(shr_mac_window_check(&w, 6), 0);
	assert_int_equal(shr_mac_window_check(&w, 6), 0);
	/* slide by less than the window: the old bits of the slid-over counters are cleared */
	assert_int_equal(shr_mac_window_accept(&w, 5 + SHR_MAC_WINDOW_BITS - 1), 0);
	assert_int_equal(shr_mac_window_accept(&w, 5), -EALREADY);	/* top - 5 = BITS - 1 */
	assert_int_equal(shr_mac_window_accept(&w, 4), -ESTALE);	/* out of the window */
	assert_int_equal(shr_mac_window_accept(&w, 6), 0);
	assert_int_equal(shr_mac_window_accept(&w, 1 + SHR_MAC_WINDOW_BITS), 0);
	/* every counter of a long run, in order, once; every one again is refused */
	memset(&w, 0, sizeof(w));
	for (c = 1; c <= 3 * SHR_MAC_WINDOW_BITS; c++)
		assert_int_equal(shr_mac_window_accept(&w, c), 0);
	for (c = 2 * SHR_MAC_WINDOW_BITS + 1; c <= 3 * SHR_MAC_WINDOW_BITS; c++)
		assert_int_equal(shr_mac_window_accept(&w, c), -EALREADY);
	for (c = 1; c <= 2 * SHR_MAC_WINDOW_BITS; c++)
		assert_int_equal(shr_mac_window_accept(&w, c), -ESTALE);
	/* a jump by more than one within the window: the counters jumped over are new, even
	 * where their slot still held the bit of a counter one window older (c - BITS, accepted
	 * in the run above): one reordered behind a later one is taken, once */
	memset(&w, 0, sizeof(w));
	for (c = 1; c <= SHR_MAC_WINDOW_BITS; c++)
		assert_int_equal(shr_mac_window_accept(&w, c), 0);
	assert_int_equal(shr_mac_window_accept(&w, SHR_MAC_WINDOW_BITS + 3), 0);
	assert_int_equal(shr_mac_window_accept(&w, SHR_MAC_WINDOW_BITS + 1), 0);
	assert_int_equal(shr_mac_window_accept(&w, SHR_MAC_WINDOW_BITS + 2), 0);
	assert_int_equal(shr_mac_window_accept(&w, SHR_MAC_WINDOW_BITS + 1), -EALREADY);
	assert_int_equal(shr_mac_window_accept(&w, SHR_MAC_WINDOW_BITS + 2), -EALREADY);
	assert_int_equal(shr_mac_window_accept(&w, 4), -EALREADY);	/* top - 4 = BITS - 1 */
	assert_int_equal(shr_mac_window_accept(&w, 3), -ESTALE);
	/* a jump further than the window forgets everything below */
	assert_int_equal(shr_mac_window_accept(&w, 10 * SHR_MAC_WINDOW_BITS), 0);
	assert_int_equal(shr_mac_window_accept(&w, 10 * SHR_MAC_WINDOW_BITS - 1), 0);
	assert_int_equal(shr_mac_window_accept(&w, 10 * SHR_MAC_WINDOW_BITS - 1), -EALREADY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gmac_vectors),
		cmocka_unit_test(test_hkdf_vectors),
		cmocka_unit_test(test_derive),
		cmocka_unit_test(test_tamper),
		cmocka_unit_test(test_wrong_incarnation),
		cmocka_unit_test(test_replay_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
