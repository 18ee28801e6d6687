/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "shr_mac.h"

#define MAC_SALT "shouter-mac-v1"
#define MAC_IV_LEN 12

struct shr_mac {
	EVP_CIPHER_CTX *ctx;	/* AES-128-GCM with the key set; the IV set per message */
};

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int
shr_mac_hkdf(const void *ikm, size_t ikm_len, const void *salt, size_t salt_len,
	     const void *info, size_t info_len, uint8_t *out, size_t out_len)
{
	static const uint8_t none;
	OSSL_PARAM params[5], *p = params;
	EVP_KDF_CTX *kctx;
	EVP_KDF *kdf;
	int rc = -EIO;

	/* HKDF-SHA256 gives at most 255 blocks of 32 bytes (RFC 5869) */
	if (ikm == NULL || ikm_len == 0 || out == NULL || out_len == 0 || out_len > 255 * 32)
		return -EINVAL;
	kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	if (kdf == NULL)
		return -EIO;
	kctx = EVP_KDF_CTX_new(kdf);
	EVP_KDF_free(kdf);
	if (kctx == NULL)
		return -EIO;
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)(uintptr_t)ikm,
						 ikm_len);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
						 (void *)(uintptr_t)(salt_len ? salt : &none),
						 salt_len);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
						 (void *)(uintptr_t)(info_len ? info : &none),
						 info_len);
	*p = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(kctx, out, out_len, params) == 1)
		rc = 0;
	EVP_KDF_CTX_free(kctx);
	return rc;
}

int
shr_mac_derive(const void *secret, size_t secret_len, uint32_t job, uint64_t token,
	       uint8_t key[SHR_MAC_KEY_LEN])
{
	uint8_t info[12];

	if (secret == NULL || secret_len == 0 || key == NULL)
		return -EINVAL;
	put32(info, job);
	put32(info + 4, (uint32_t)(token >> 32));
	put32(info + 8, (uint32_t)token);
	return shr_mac_hkdf(secret, secret_len, MAC_SALT, sizeof(MAC_SALT) - 1, info,
			    sizeof(info), key, SHR_MAC_KEY_LEN);
}

int
shr_mac_rekey(struct shr_mac *mac, const uint8_t key[SHR_MAC_KEY_LEN])
{
	if (mac == NULL || key == NULL)
		return -EINVAL;
	if (EVP_EncryptInit_ex(mac->ctx, EVP_aes_128_gcm(), NULL, key, NULL) != 1)
		return -EIO;
	return 0;
}

struct shr_mac *
shr_mac_create(const uint8_t key[SHR_MAC_KEY_LEN])
{
	struct shr_mac *mac;
	int rc;

	if (key == NULL) {
		errno = EINVAL;
		return NULL;
	}
	mac = calloc(1, sizeof(*mac));
	if (mac == NULL)
		return NULL;
	mac->ctx = EVP_CIPHER_CTX_new();
	if (mac->ctx == NULL) {
		rc = ENOMEM;
		goto fail;
	}
	if (shr_mac_rekey(mac, key) < 0) {
		rc = EIO;
		goto fail_ctx;
	}
	return mac;
fail_ctx:
	EVP_CIPHER_CTX_free(mac->ctx);
fail:
	free(mac);
	errno = rc;
	return NULL;
}

void
shr_mac_free(struct shr_mac *mac)
{
	if (mac == NULL)
		return;
	EVP_CIPHER_CTX_free(mac->ctx);	/* wipes the key schedule */
	free(mac);
}

/* The GMAC tag of msg[0 .. len) under IV = sender || counter. */
static int
mac_tag(struct shr_mac *mac, const uint8_t *msg, size_t len, const uint8_t iv[MAC_IV_LEN],
	uint8_t tag[SHR_MAC_TAG_LEN])
{
	int out;

	if (EVP_EncryptInit_ex(mac->ctx, NULL, NULL, NULL, iv) != 1)
		return -EIO;
	while (len > 0) {
		int n = len > (1u << 30) ? 1 << 30 : (int)len;

		if (EVP_EncryptUpdate(mac->ctx, NULL, &out, msg, n) != 1)
			return -EIO;
		msg += n;
		len -= (size_t)n;
	}
	if (EVP_EncryptFinal_ex(mac->ctx, tag, &out) != 1 ||
	    EVP_CIPHER_CTX_ctrl(mac->ctx, EVP_CTRL_GCM_GET_TAG, SHR_MAC_TAG_LEN, tag) != 1)
		return -EIO;
	return 0;
}

int
shr_mac_sign(struct shr_mac *mac, void *msg, size_t len, uint32_t sender, uint64_t counter)
{
	uint8_t *t;

	if (mac == NULL || msg == NULL || counter == 0)
		return -EINVAL;
	t = (uint8_t *)msg + len;
	put32(t, sender);
	put32(t + 4, (uint32_t)(counter >> 32));
	put32(t + 8, (uint32_t)counter);
	return mac_tag(mac, msg, len, t, t + MAC_IV_LEN);
}

int
shr_mac_verify(struct shr_mac *mac, const void *msg, size_t len, uint32_t *sender,
	       uint64_t *counter)
{
	const uint8_t *t;
	uint8_t tag[SHR_MAC_TAG_LEN];
	uint64_t ctr;
	int rc;

	if (mac == NULL || msg == NULL || len < SHR_PROTO_HDR_LEN + SHR_MAC_TRAILER_LEN)
		return -EINVAL;
	len -= SHR_MAC_TRAILER_LEN;
	t = (const uint8_t *)msg + len;
	ctr = (uint64_t)get32(t + 4) << 32 | get32(t + 8);
	rc = mac_tag(mac, msg, len, t, tag);
	if (rc < 0)
		return rc;
	if (CRYPTO_memcmp(tag, t + MAC_IV_LEN, SHR_MAC_TAG_LEN) != 0 || ctr == 0)
		return -EBADMSG;
	if (sender != NULL)
		*sender = get32(t);
	if (counter != NULL)
		*counter = ctr;
	return 0;
}

int
shr_mac_window_check(const struct shr_mac_window *w, uint64_t counter)
{
	uint64_t b;

	if (counter == 0)
		return -ESTALE;
	if (counter > w->top)
		return 0;
	if (w->top - counter >= SHR_MAC_WINDOW_BITS)
		return -ESTALE;
	b = counter % SHR_MAC_WINDOW_BITS;
	return (w->bits[b / 64] >> (b % 64)) & 1 ? -EALREADY : 0;
}

void
shr_mac_window_update(struct shr_mac_window *w, uint64_t counter)
{
	uint64_t c, b;

	if (counter > w->top) {
		/* clear the bits of the counters the window slides over (top, counter] */
		if (counter - w->top >= SHR_MAC_WINDOW_BITS) {
			memset(w->bits, 0, sizeof(w->bits));
		} else {
			for (c = w->top + 1; c < counter; c++) {
				b = c % SHR_MAC_WINDOW_BITS;
				w->bits[b / 64] &= ~(1ull << (b % 64));
			}
		}
		w->top = counter;
	}
	b = counter % SHR_MAC_WINDOW_BITS;
	w->bits[b / 64] |= 1ull << (b % 64);
}

int
shr_mac_window_accept(struct shr_mac_window *w, uint64_t counter)
{
	int rc = shr_mac_window_check(w, counter);

	if (rc == 0)
		shr_mac_window_update(w, counter);
	return rc;
}
