/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* lib/auth: secrets, challenges, proofs and allowlists. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <shr_auth.h>

#define TTL 1000000000ull	/* 1 s */
#define SRC 0xc612000a9c40ull	/* some address key */

static const char key32[] = "0123456789abcdef0123456789abcdef";

static struct shr_auth_join
sample_join(void)
{
	struct shr_auth_join j = {
		.job = 7, .rank = 1, .world = 3, .nonce = 0x1122334455667788ull, .dtype = 2,
		.chunk = 256, .window = 128, .flags = 0x0005, .feedback = 1024, .root = 9,
		.tensor = 2,
	};

	return j;
}

static void
test_secret_bounds(void **state)
{
	struct shr_auth_secret s;

	(void)state;
	assert_int_equal(shr_auth_secret_set(&s, key32, SHR_AUTH_SECRET_MIN - 1), -EINVAL);
	assert_int_equal(shr_auth_secret_set(&s, key32, SHR_AUTH_SECRET_MIN), 0);
	assert_int_equal(s.len, SHR_AUTH_SECRET_MIN);
	assert_int_equal(shr_auth_secret_set(NULL, key32, 16), -EINVAL);
	assert_int_equal(shr_auth_secret_set(&s, NULL, 16), -EINVAL);
	{
		char big[SHR_AUTH_SECRET_MAX + 1];

		memset(big, 'k', sizeof(big));
		assert_int_equal(shr_auth_secret_set(&s, big, SHR_AUTH_SECRET_MAX), 0);
		assert_int_equal(shr_auth_secret_set(&s, big, sizeof(big)), -EINVAL);
	}
}

/* Write a file with mode and content; returns its path (static buffer). */
static const char *
mk_file(const char *content, size_t len, mode_t mode)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/shr_auth_test.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static void
test_secret_load(void **state)
{
	struct shr_auth_secret s, want;
	const char *p;

	(void)state;
	/* Trailing newline and blanks are not part of the secret. */
	p = mk_file("0123456789abcdef0123456789abcdef \n\n", 35, 0600);
	assert_int_equal(shr_auth_secret_load(p, &s), 0);
	assert_int_equal(shr_auth_secret_set(&want, key32, 32), 0);
	assert_int_equal(s.len, 32);
	assert_memory_equal(s.key, want.key, 32);
	/* Readable by others, or by its group only: refused, like ssh's keys. */
	assert_int_equal(chmod(p, 0644), 0);
	assert_int_equal(shr_auth_secret_load(p, &s), -EACCES);
	assert_int_equal(chmod(p, 0640), 0);
	assert_int_equal(shr_auth_secret_load(p, &s), -EACCES);
	/* Readable (or writable) by others but not by its group: refused all the same. */
	assert_int_equal(chmod(p, 0604), 0);
	assert_int_equal(shr_auth_secret_load(p, &s), -EACCES);
	assert_int_equal(chmod(p, 0602), 0);
	assert_int_equal(shr_auth_secret_load(p, &s), -EACCES);
	unlink(p);
	/* Longer than any secret and its blanks: refused, not cut to its first bytes. */
	{
		char big[300];

		memset(big, 'x', sizeof(big));
		memcpy(big, "0123456789abcdef0123456789abcdef", 32);
		memset(big + 32, ' ', 100);
		p = mk_file(big, sizeof(big), 0600);
		assert_int_equal(shr_auth_secret_load(p, &s), -EFBIG);
		unlink(p);
	}
	/* A FIFO (or a device): refused at once, never read (it would wait for a writer). */
	{
		char fifo[] = "/tmp/shr-auth-fifo-XXXXXX";
		int fd = mkstemp(fifo);

		assert_true(fd >= 0);
		close(fd);
		unlink(fifo);
		assert_int_equal(mkfifo(fifo, 0600), 0);
		assert_int_equal(shr_auth_secret_load(fifo, &s), -EINVAL);
		unlink(fifo);
	}
	/* Line ends of any system: a CRLF file (or a lone CR) gives the same secret as LF. */
	p = mk_file("0123456789abcdef0123456789abcdef\r\n", 34, 0600);
	memset(&s, 0, sizeof(s));
	assert_int_equal(shr_auth_secret_load(p, &s), 0);
	assert_int_equal(s.len, 32);
	assert_memory_equal(s.key, want.key, 32);
	unlink(p);
	p = mk_file("0123456789abcdef0123456789abcdef\t\r", 34, 0600);
	memset(&s, 0, sizeof(s));
	assert_int_equal(shr_auth_secret_load(p, &s), 0);
	assert_int_equal(s.len, 32);
	unlink(p);
	/* Too short once the newline is gone. */
	p = mk_file("short-secret\n", 13, 0600);
	assert_int_equal(shr_auth_secret_load(p, &s), -EINVAL);
	unlink(p);
	assert_int_equal(shr_auth_secret_load("/nonexistent/shouter.secret", &s), -ENOENT);
	assert_int_equal(shr_auth_secret_load(NULL, &s), -EINVAL);
}

/*
 * The proof's bytes are the wire contract with every member implementation: this value was
 * computed with Python's hmac module, HMAC-SHA256(secret, "shouter-join" || challenge ||
 * job, rank, world, nonce, dtype, chunk, window, flags, feedback, root, tensor big-endian:
 * struct.pack(">IHHQBIIHIHI", ...)).
 */
static void
test_proof_known_answer(void **state)
{
	static const uint8_t want[SHR_AUTH_PROOF_LEN] = {
		0x0e, 0xf5, 0xef, 0x9a, 0x8f, 0x29, 0x71, 0x68, 0xbb, 0x56, 0x4a, 0x03, 0x3e,
		0xa2, 0xbd, 0x3b, 0x2e, 0x8a, 0x9c, 0xa0, 0x1c, 0x46, 0xf4, 0xef, 0xf2, 0x5a,
		0x93, 0xad, 0x20, 0x89, 0x53, 0x82,
	};
	struct shr_auth_join j = sample_join();
	struct shr_auth_secret s;
	uint8_t ch[SHR_AUTH_CHALLENGE_LEN], proof[SHR_AUTH_PROOF_LEN];

	(void)state;
	for (unsigned int i = 0; i < sizeof(ch); i++)
		ch[i] = (uint8_t)i;
	assert_int_equal(shr_auth_secret_set(&s, key32, 32), 0);
	shr_auth_proof(&s, ch, &j, proof);
	assert_memory_equal(proof, want, sizeof(want));
	assert_true(shr_auth_proof_ok(&s, ch, &j, proof));
}

static void
test_proof_binds_everything(void **state)
{
	struct shr_auth_join j = sample_join(), k;
	struct shr_auth_secret s, other;
	uint8_t ch[SHR_AUTH_CHALLENGE_LEN] = { 1, 2, 3 }, proof[SHR_AUTH_PROOF_LEN];

	(void)state;
	assert_int_equal(shr_auth_secret_set(&s, key32, 32), 0);
	assert_int_equal(shr_auth_secret_set(&other, key32, 31), 0);
	shr_auth_proof(&s, ch, &j, proof);
	assert_true(shr_auth_proof_ok(&s, ch, &j, proof));
	assert_false(shr_auth_proof_ok(&other, ch, &j, proof));
	/* Every field of the JOIN and every byte of the challenge enter the proof. */
	k = j; k.job++;
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.rank++;
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.world++;
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.nonce ^= 1ull << 63;
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.dtype++;
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.chunk++;
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.window++;
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.flags ^= 0x0002;	/* a result group claimed for a member that offered none */
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.feedback = 1;	/* a chunk the member's path does not take */
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.root++;
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	k = j; k.tensor++;
	assert_false(shr_auth_proof_ok(&s, ch, &k, proof));
	for (unsigned int i = 0; i < sizeof(ch); i++) {
		ch[i] ^= 0x80;
		assert_false(shr_auth_proof_ok(&s, ch, &j, proof));
		ch[i] ^= 0x80;
	}
	proof[31] ^= 1;
	assert_false(shr_auth_proof_ok(&s, ch, &j, proof));
	/* No secret proves nothing. */
	memset(&other, 0, sizeof(other));
	assert_false(shr_auth_proof_ok(&other, ch, &j, proof));
	/* Not even a proof made with the empty key, which anyone can compute. */
	shr_auth_proof(&other, ch, &j, proof);
	assert_false(shr_auth_proof_ok(&other, ch, &j, proof));
}

static void
test_challenge_lifetime(void **state)
{
	struct shr_auth_join j = sample_join(), k;
	struct shr_auth_box b, b2;
	uint8_t ch[SHR_AUTH_CHALLENGE_LEN], ch2[SHR_AUTH_CHALLENGE_LEN];
	uint64_t t0 = 50 * TTL + TTL / 2;

	(void)state;
	assert_int_equal(shr_auth_box_init(&b, 0), -EINVAL);
	assert_int_equal(shr_auth_box_init(&b, TTL), 0);
	assert_int_equal(shr_auth_box_init(&b2, TTL), 0);
	assert_memory_not_equal(b.key, b2.key, sizeof(b.key));	/* drawn at random */
	shr_auth_challenge(&b, t0, SRC, &j, ch);
	assert_true(shr_auth_challenge_ok(&b, t0, SRC, &j, ch));
	/* Good in its lifetime and the next one, not later, and not before it was made. */
	assert_true(shr_auth_challenge_ok(&b, t0 + TTL, SRC, &j, ch));
	assert_false(shr_auth_challenge_ok(&b, t0 + 2 * TTL, SRC, &j, ch));
	assert_false(shr_auth_challenge_ok(&b, t0 - TTL, SRC, &j, ch));
	/* Another box, sender, or JOIN: not this challenge. */
	assert_false(shr_auth_challenge_ok(&b2, t0, SRC, &j, ch));
	assert_false(shr_auth_challenge_ok(&b, t0, SRC + 1, &j, ch));
	k = j; k.nonce++;
	assert_false(shr_auth_challenge_ok(&b, t0, SRC, &k, ch));
	k = j; k.rank++;
	assert_false(shr_auth_challenge_ok(&b, t0, SRC, &k, ch));
	/* A forged one: the epoch moved or a MAC bit flipped. */
	memcpy(ch2, ch, sizeof(ch));
	ch2[3] ^= 1;
	assert_false(shr_auth_challenge_ok(&b, t0, SRC, &j, ch2));
	memcpy(ch2, ch, sizeof(ch));
	ch2[15] ^= 1;
	assert_false(shr_auth_challenge_ok(&b, t0, SRC, &j, ch2));
	/* Each lifetime gives another challenge. */
	shr_auth_challenge(&b, t0 + TTL, SRC, &j, ch2);
	assert_memory_not_equal(ch, ch2, sizeof(ch));
}

static void
test_acl(void **state)
{
	struct shr_auth_acl acl;
	char list[1024];
	size_t n = 0;

	(void)state;
	memset(&acl, 0, sizeof(acl));
	assert_true(shr_auth_acl_ok(&acl, 0x01020304u));	/* empty: any address */
	assert_true(shr_auth_acl_ok(NULL, 0x01020304u));
	assert_int_equal(shr_auth_acl_add(&acl, "198.18.0.0/15, 10.0.0.1"), 0);
	assert_int_equal(acl.n, 2);
	assert_true(shr_auth_acl_ok(&acl, 0xc6120001u));	/* 198.18.0.1 */
	assert_true(shr_auth_acl_ok(&acl, 0xc613ffffu));	/* 198.19.255.255 */
	assert_false(shr_auth_acl_ok(&acl, 0xc6140000u));	/* 198.20.0.0 */
	assert_false(shr_auth_acl_ok(&acl, 0xc611ffffu));	/* 198.17.255.255 */
	assert_true(shr_auth_acl_ok(&acl, 0x0a000001u));	/* 10.0.0.1 */
	assert_false(shr_auth_acl_ok(&acl, 0x0a000002u));
	/* Malformed entries add nothing. */
	static const char *const bad[] = {
		"1.2.3.4/33", "1.2.3", "a.b.c.d", "1.2.3.4/", "256.1.1.1", "1.2.3.4/-1",
		"1.2.3.4x", "1.2.3.4/8/8", "10.0.0.0/8,1.2.3",
		/* an octet past 255 in any place (10.0.0.300 was 10.0.1.44, a host nobody
		 * named) */
		"1.256.1.1", "1.1.256.1", "10.0.0.300", "10.0.0.256/32",
		/* signs (sscanf and strtoul take them: -0.-0.-0.-0/0 was every address) */
		"-0.-0.-0.-0/0", "+10.0.0.1", "1.2.3.4/+8", "1.2.-3.4",
		/* no entry at all: an allowlist left empty admits every address */
		"", " ", ", ,",
	};
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(shr_auth_acl_add(&acl, bad[i]), -EINVAL);
		assert_int_equal(acl.n, 2);
	}
	assert_false(shr_auth_acl_ok(&acl, 0x0a00012cu));	/* 10.0.1.44 */
	/* The host bits of a subnet are ignored; /0 is everything. */
	assert_int_equal(shr_auth_acl_add(&acl, "172.16.9.9/12"), 0);
	assert_true(shr_auth_acl_ok(&acl, 0xac1f0000u));	/* 172.31.0.0 */
	memset(&acl, 0, sizeof(acl));
	assert_int_equal(shr_auth_acl_add(&acl, "0.0.0.0/0"), 0);
	assert_true(shr_auth_acl_ok(&acl, 0xffffffffu));
	/* At most SHR_AUTH_ACL_MAX entries; one too many adds none. */
	memset(&acl, 0, sizeof(acl));
	for (unsigned int i = 0; i < SHR_AUTH_ACL_MAX; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "10.%u.0.0/16,", i);
	assert_int_equal(shr_auth_acl_add(&acl, list), 0);
	assert_int_equal(acl.n, SHR_AUTH_ACL_MAX);
	assert_int_equal(shr_auth_acl_add(&acl, "11.0.0.0/8"), -ENOSPC);
	assert_int_equal(acl.n, SHR_AUTH_ACL_MAX);
	assert_int_equal(shr_auth_acl_add(NULL, "11.0.0.0/8"), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secret_bounds),
		cmocka_unit_test(test_secret_load),
		cmocka_unit_test(test_proof_known_answer),
		cmocka_unit_test(test_proof_binds_everything),
		cmocka_unit_test(test_challenge_lifetime),
		cmocka_unit_test(test_acl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
