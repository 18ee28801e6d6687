/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_AUTH_H
#define SHR_AUTH_H

/**
 * @file
 * Job admission: a shared secret proven by challenge-response, and an allowlist of member
 * subnets.
 *
 * A job may require a secret (the box's INI, per static job or as the default for jobs made
 * by JOIN). The secret never travels: a member proves it knows it by answering the box's
 * challenge. The exchange, carried in the admission block after the JOIN / JOIN_ACK header
 * (lib/proto/shr_proto.h):
 *
 * -# the member sends JOIN without the block;
 * -# the box answers JOIN_ACK with status ENOKEY and a block holding a challenge;
 * -# the member sends JOIN again with the block: the challenge echoed and its proof,
 *    HMAC-SHA256(secret, "shouter-join" || challenge || job || rank || world || nonce ||
 *    dtype || chunk || window || flags || feedback || root || tensor) (integers big-endian,
 *    of the JOIN header's sizes: every field the box acts on);
 * -# the box checks the challenge (one it made for this sender, this JOIN and this nonce, at
 *    most two challenge lifetimes ago) and the proof, and only then handles the JOIN.
 *
 * The box keeps no state per challenge: a challenge is the time epoch it was made in and a
 * MAC, under a key drawn at random when the box starts, of that epoch, the sender's address
 * and port and the JOIN's fields. So a flood of JOINs costs the box one HMAC each and no
 * memory, a JOIN replayed from another address or after two lifetimes is refused, and a
 * replay from the member's own address within the lifetime is the member's own JOIN again.
 *
 * @verbatim
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                 challenge: epoch (big-endian)                 |  0
 * +---------------------------------------------------------------+
 * |      challenge: MAC of epoch, sender and JOIN (12 bytes)      |  4
 * |                              ...                              |
 * +---------------------------------------------------------------+
 * |    proof: HMAC-SHA256 under the job's secret (32 bytes; 0     |  16
 * |    in the JOIN_ACK that carries the challenge)                |
 * |                              ...                              |
 * +---------------------------------------------------------------+
 * @endverbatim
 *
 * Pure C over OpenSSL's libcrypto (HMAC-SHA256, constant-time compare); no DPDK.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHR_AUTH_SECRET_MIN 16	/**< Shortest secret, bytes. */
#define SHR_AUTH_SECRET_MAX 64	/**< Longest secret, bytes. */
#define SHR_AUTH_CHALLENGE_LEN 16 /**< Bytes of a challenge. */
#define SHR_AUTH_PROOF_LEN 32	/**< Bytes of a proof. */
#define SHR_AUTH_BLOCK_LEN (SHR_AUTH_CHALLENGE_LEN + SHR_AUTH_PROOF_LEN) /**< Admission block. */
#define SHR_AUTH_ACL_MAX 32	/**< Subnets in an allowlist. */

/** A job's shared secret. len 0: none. */
struct shr_auth_secret {
	uint32_t len;
	uint8_t key[SHR_AUTH_SECRET_MAX];
};

/** The fields of a JOIN that a challenge and a proof bind. */
struct shr_auth_join {
	uint32_t job;
	uint16_t rank;
	uint16_t world;
	uint64_t nonce;
	uint8_t dtype;
	uint32_t chunk;		/**< Elements per chunk (the JOIN's count). */
	uint32_t window;	/**< Slots asked for (the JOIN's slot). */
	uint16_t flags;		/**< The JOIN's flags (group, reproducible, MAC). */
	uint32_t feedback;	/**< The largest chunk of the member's path (the JOIN's). */
	uint16_t root;		/**< Trees: the first tree rank it stands for (the JOIN's). */
	uint32_t tensor;	/**< Trees: how many it stands for (the JOIN's). */
};

/** The box's side: the key of its challenges and their lifetime. */
struct shr_auth_box {
	uint8_t key[32];
	uint64_t ttl_ns;	/**< A challenge is good for one to two lifetimes. */
};

/** An allowlist of IPv4 subnets. Empty: every address is allowed. */
struct shr_auth_acl {
	uint32_t n;
	struct {
		uint32_t net;	/**< Host byte order, masked. */
		uint32_t mask;	/**< Host byte order. */
	} e[SHR_AUTH_ACL_MAX];
};

/**
 * Set a secret from bytes.
 *
 * @param s
 *   The secret to fill.
 * @param key
 *   The bytes.
 * @param len
 *   Their number.
 * @return
 *   0, or -EINVAL (NULL argument, or len outside SHR_AUTH_SECRET_MIN..SHR_AUTH_SECRET_MAX).
 */
int shr_auth_secret_set(struct shr_auth_secret *s, const void *key, size_t len);

/**
 * Load a secret from a file: its bytes, without trailing newlines and blanks (so a key
 * written by `head -c 32 /dev/urandom | base64 > F` or by an editor works). The file must
 * be a regular file of its owner's alone (no group or other permission bits, like ssh's
 * keys): the secret is what admits a member.
 *
 * @param path
 *   The file.
 * @param s
 *   The secret to fill.
 * @return
 *   0; -EINVAL (NULL argument, not a regular file (a FIFO, a device: never waited on), or
 *   the secret is shorter than SHR_AUTH_SECRET_MIN or longer than SHR_AUTH_SECRET_MAX
 *   bytes); -EFBIG (the file is longer than any secret and its blanks: never cut short);
 *   -EACCES (group or other permission bits: chmod 600); or the negative errno of open(),
 *   fstat() or read() (-ENOENT, ...).
 */
int shr_auth_secret_load(const char *path, struct shr_auth_secret *s);

/**
 * Clear secret bytes (a secret, a derived key) so that the compiler cannot drop the stores
 * as dead (OPENSSL_cleanse()).
 *
 * @param p
 *   The bytes (NULL: nothing).
 * @param len
 *   How many.
 */
void shr_auth_wipe(void *p, size_t len);

/**
 * Prepare the box's side: draw the key of its challenges at random.
 *
 * @param b
 *   The box side to fill.
 * @param ttl_ns
 *   Challenge lifetime (> 0).
 * @return
 *   0, -EINVAL (NULL or ttl_ns 0), or the negative errno of getrandom().
 */
int shr_auth_box_init(struct shr_auth_box *b, uint64_t ttl_ns);

/**
 * Make the challenge for a JOIN from a sender.
 *
 * @param b
 *   The box side.
 * @param now_ns
 *   Monotonic time.
 * @param src
 *   The sender's address key (address and port).
 * @param j
 *   The JOIN.
 * @param ch
 *   Out: SHR_AUTH_CHALLENGE_LEN bytes.
 */
void shr_auth_challenge(const struct shr_auth_box *b, uint64_t now_ns, uint64_t src,
			const struct shr_auth_join *j, uint8_t *ch);

/**
 * Check that a challenge is one shr_auth_challenge() made for this sender and JOIN in this
 * lifetime or the one before.
 *
 * @return
 *   true if it is.
 */
bool shr_auth_challenge_ok(const struct shr_auth_box *b, uint64_t now_ns, uint64_t src,
			   const struct shr_auth_join *j, const uint8_t *ch);

/**
 * Compute the proof of a secret for a challenge and a JOIN.
 *
 * @param s
 *   The secret (len > 0).
 * @param ch
 *   SHR_AUTH_CHALLENGE_LEN bytes.
 * @param j
 *   The JOIN.
 * @param proof
 *   Out: SHR_AUTH_PROOF_LEN bytes.
 */
void shr_auth_proof(const struct shr_auth_secret *s, const uint8_t *ch,
		    const struct shr_auth_join *j, uint8_t *proof);

/**
 * Check a proof, in constant time.
 *
 * @return
 *   true if proof is shr_auth_proof() of s, ch and j.
 */
bool shr_auth_proof_ok(const struct shr_auth_secret *s, const uint8_t *ch,
		       const struct shr_auth_join *j, const uint8_t *proof);

/**
 * Add subnets to an allowlist.
 *
 * @param acl
 *   The allowlist.
 * @param list
 *   Subnets "a.b.c.d/len" or addresses "a.b.c.d" (decimal digits, no sign), separated by
 *   commas and/or blanks; at least one.
 * @return
 *   0, -EINVAL (a malformed entry, or no entry at all; nothing added), or -ENOSPC (more
 *   than SHR_AUTH_ACL_MAX subnets; nothing added).
 */
int shr_auth_acl_add(struct shr_auth_acl *acl, const char *list);

/**
 * Whether an address is allowed.
 *
 * @param acl
 *   The allowlist (NULL or empty: all are).
 * @param ip
 *   IPv4 address, host byte order.
 * @return
 *   true if allowed.
 */
bool shr_auth_acl_ok(const struct shr_auth_acl *acl, uint32_t ip);

#ifdef __cplusplus
}
#endif

#endif /* SHR_AUTH_H */
