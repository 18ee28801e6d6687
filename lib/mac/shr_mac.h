/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_MAC_H
#define SHR_MAC_H

/**
 * @file
 * An optional per-job message authentication code (issue 15 item 2): every message of a job
 * after admission carries an AES-128-GMAC tag (NIST SP 800-38D: GCM with no plaintext, the
 * whole message as additional authenticated data) under a key of the job's incarnation, so
 * that an attacker who sees every frame can neither forge one nor replay one.
 *
 * Key. key = HKDF-SHA256 (RFC 5869) with IKM = the job's secret (lib/auth), salt =
 * "shouter-mac-v1", info = job id (4 bytes) || incarnation token (8 bytes), big-endian;
 * 16 bytes. The token is random per incarnation (lib/agg), so a frame of one incarnation
 * never verifies in another, and a key is never used in two incarnations.
 *
 * Nonce. GMAC's 96-bit IV is sender id (4 bytes) || counter (8 bytes). A member's sender id is
 * its rank; the box's is SHR_MAC_SENDER_BOX | its context (a lane, or the control path:
 * each context is used by one thread and counts for itself). Counters only increase, and
 * never start twice at one place under one key: a member's starts at random below 2^62 (a
 * new process of its rank in a job still filling keeps the incarnation, so the key; the box
 * starts that rank's window anew when it binds the process), the box's contexts at 1 in each
 * run, under the tokens that run drew only (never a token a message names). So no IV
 * repeats under one key (GMAC's authentication key would leak). The receiver keeps a replay
 * window per sender
 * (SHR_MAC_WINDOW_BITS counters below the highest seen): a counter seen before or older than
 * the window is refused.
 *
 * Wire. A message with the MAC sets SHR_FLAG_MAC in its header and carries this trailer
 * after its payload (SHR_PROTO_MAC_LEN bytes). The CRC32C covers the header and the payload
 * as before, not the trailer (shr_proto_validate() checks it first, then the MAC is checked);
 * the tag covers the whole header (the flag and the CRC included), the payload and the
 * trailer's sender and counter (through the IV).
 *
 * @verbatim
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |        header (64 bytes, flags & SHR_FLAG_MAC) + payload      |  0
 * |                              ...                              |
 * +---------------------------------------------------------------+
 * |    sender id (big-endian; rank, or 0x80000000 | box context)  |  L
 * +---------------------------------------------------------------+
 * |            counter (64 bits, big-endian, from 1)              |  L+4
 * |                                                               |
 * +---------------------------------------------------------------+
 * |    tag: AES-128-GMAC(key, IV = sender || counter,             |  L+12
 * |         AAD = bytes 0 .. L-1), 16 bytes                       |
 * |                              ...                              |
 * +---------------------------------------------------------------+
 * @endverbatim
 *
 * Pure C over OpenSSL's libcrypto (EVP AES-128-GCM, HKDF, CRYPTO_memcmp); no DPDK. A struct
 * shr_mac is used by one thread at a time.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <shr_proto.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHR_MAC_KEY_LEN 16	/**< AES-128. */
#define SHR_MAC_TAG_LEN 16	/**< GMAC tag bytes. */
#define SHR_MAC_TRAILER_LEN 28	/**< sender (4) + counter (8) + tag (16). */
#define SHR_MAC_SENDER_BOX 0x80000000u /**< Sender ids of the box: this | context. */
#define SHR_MAC_WINDOW_BITS 1024 /**< Counters a replay window remembers. */

_Static_assert(SHR_MAC_TRAILER_LEN == SHR_PROTO_MAC_LEN, "trailer size");

/** A key schedule (one thread at a time). */
struct shr_mac;

/** A replay window: one per sender at a receiver. Zeroed: nothing seen. */
struct shr_mac_window {
	uint64_t top;		/**< Highest counter accepted (0: none). */
	uint64_t bits[SHR_MAC_WINDOW_BITS / 64]; /**< Bit c % BITS: counter c (top - BITS < c
						   *   <= top) was accepted. */
};

/**
 * HKDF-SHA256 (RFC 5869), extract and expand, by libcrypto (exported for the tests).
 *
 * @param ikm
 *   Input keying material.
 * @param ikm_len
 *   Its bytes (> 0).
 * @param salt
 *   Salt (may be NULL when salt_len is 0).
 * @param salt_len
 *   Its bytes.
 * @param info
 *   Context (may be NULL when info_len is 0).
 * @param info_len
 *   Its bytes.
 * @param out
 *   Out: out_len bytes.
 * @param out_len
 *   Bytes wanted (1 .. 255 * 32).
 * @return
 *   0, -EINVAL (NULL ikm or out, ikm_len 0, out_len 0 or above 8160: HKDF-SHA256's 255
 *   blocks), or -EIO (libcrypto failed).
 */
int shr_mac_hkdf(const void *ikm, size_t ikm_len, const void *salt, size_t salt_len,
		 const void *info, size_t info_len, uint8_t *out, size_t out_len);

/**
 * Derive the key of a job incarnation.
 *
 * @param secret
 *   The job's secret.
 * @param secret_len
 *   Its length (> 0).
 * @param job
 *   Job id.
 * @param token
 *   The incarnation's token.
 * @param key
 *   Out: SHR_MAC_KEY_LEN bytes.
 * @return
 *   0, -EINVAL (NULL argument or secret_len 0), or -EIO (libcrypto failed).
 */
int shr_mac_derive(const void *secret, size_t secret_len, uint32_t job, uint64_t token,
		   uint8_t key[SHR_MAC_KEY_LEN]);

/**
 * Create a key schedule.
 *
 * @param key
 *   SHR_MAC_KEY_LEN bytes.
 * @return
 *   The schedule, or NULL with errno EINVAL (key NULL), ENOMEM or EIO (libcrypto failed).
 */
struct shr_mac *shr_mac_create(const uint8_t key[SHR_MAC_KEY_LEN]);

/**
 * Change the key of a schedule.
 *
 * @param mac
 *   The schedule.
 * @param key
 *   SHR_MAC_KEY_LEN bytes.
 * @return
 *   0, -EINVAL (NULL argument), or -EIO.
 */
int shr_mac_rekey(struct shr_mac *mac, const uint8_t key[SHR_MAC_KEY_LEN]);

/**
 * Free a schedule (its key is wiped). NULL is allowed.
 *
 * @param mac
 *   The schedule.
 */
void shr_mac_free(struct shr_mac *mac);

/**
 * Sign a message: write the trailer (sender, counter, tag over msg[0 .. len)) at msg + len.
 * The caller has set SHR_FLAG_MAC in the header and computed its CRC (shr_proto_build()).
 *
 * @param mac
 *   The schedule.
 * @param msg
 *   The message (header + payload), followed by SHR_MAC_TRAILER_LEN bytes of room.
 * @param len
 *   Bytes of header + payload.
 * @param sender
 *   The sender id.
 * @param counter
 *   The sender's next counter (non-zero, never used before under this key).
 * @return
 *   0, -EINVAL (NULL argument or counter 0), or -EIO (libcrypto failed).
 */
int shr_mac_sign(struct shr_mac *mac, void *msg, size_t len, uint32_t sender, uint64_t counter);

/**
 * Verify a message's tag (in constant time). The replay check is apart:
 * shr_mac_window_check(), then shr_mac_window_update() once the tag is good.
 *
 * @param mac
 *   The schedule.
 * @param msg
 *   The whole message, trailer included.
 * @param len
 *   Its bytes (at least SHR_PROTO_HDR_LEN + SHR_MAC_TRAILER_LEN).
 * @param sender
 *   Out (may be NULL): the trailer's sender id (meaningful only when 0 is returned).
 * @param counter
 *   Out (may be NULL): the trailer's counter (idem).
 * @return
 *   0 (good tag), -EBADMSG (wrong tag, or counter 0), -EINVAL (NULL msg or mac, too short),
 *   or -EIO (libcrypto failed).
 */
int shr_mac_verify(struct shr_mac *mac, const void *msg, size_t len, uint32_t *sender,
		   uint64_t *counter);

/**
 * Whether a counter is new to a replay window.
 *
 * @param w
 *   The sender's window.
 * @param counter
 *   The verified message's counter.
 * @return
 *   0 (new), -EALREADY (seen), or -ESTALE (0, or older than the window).
 */
int shr_mac_window_check(const struct shr_mac_window *w, uint64_t counter);

/**
 * Mark a counter as seen (after shr_mac_window_check() said it is new and the tag is good).
 *
 * @param w
 *   The sender's window.
 * @param counter
 *   The counter.
 */
void shr_mac_window_update(struct shr_mac_window *w, uint64_t counter);

/**
 * shr_mac_window_check() and, when new, shr_mac_window_update().
 *
 * @return
 *   As shr_mac_window_check().
 */
int shr_mac_window_accept(struct shr_mac_window *w, uint64_t counter);

#ifdef __cplusplus
}
#endif

#endif /* SHR_MAC_H */
