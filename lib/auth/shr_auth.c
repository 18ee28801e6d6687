/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "shr_auth.h"

#define AUTH_MAC_LEN 32		/* HMAC-SHA256 */
#define AUTH_EPOCH_LEN 4
#define AUTH_TAG "shouter-join"	/* domain separation of the proof */

static uint8_t *
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static uint8_t *
put64(uint8_t *p, uint64_t v)
{
	return put32(put32(p, (uint32_t)(v >> 32)), (uint32_t)v);
}

/*
 * The JOIN's fields, big-endian: job 4, rank 2, world 2, nonce 8, dtype 1, chunk 4, window 4,
 * flags 2, feedback 4, root 2, tensor 4: every field the box acts on, so that no one on the
 * path can change one under a proof (a group the member cannot receive at, a chunk its path
 * does not take, other tree ranks).
 */
#define AUTH_JOIN_LEN 37

static uint8_t *
put_join(uint8_t *p, const struct shr_auth_join *j)
{
	p = put32(p, j->job);
	*p++ = (uint8_t)(j->rank >> 8);
	*p++ = (uint8_t)j->rank;
	*p++ = (uint8_t)(j->world >> 8);
	*p++ = (uint8_t)j->world;
	p = put64(p, j->nonce);
	*p++ = j->dtype;
	p = put32(p, j->chunk);
	p = put32(p, j->window);
	*p++ = (uint8_t)(j->flags >> 8);
	*p++ = (uint8_t)j->flags;
	p = put32(p, j->feedback);
	*p++ = (uint8_t)(j->root >> 8);
	*p++ = (uint8_t)j->root;
	return put32(p, j->tensor);
}

/*
 * HMAC-SHA256 of msg into out; false when libcrypto failed (it cannot allocate): out is then
 * random, never a value a sender can predict (a zero MAC would have matched a zero proof).
 */
static bool
hmac(const void *key, size_t key_len, const uint8_t *msg, size_t len, uint8_t *out)
{
	unsigned int out_len = AUTH_MAC_LEN;

	if (HMAC(EVP_sha256(), key, (int)key_len, msg, len, out, &out_len) != NULL &&
	    out_len == AUTH_MAC_LEN)
		return true;
	if (getrandom(out, AUTH_MAC_LEN, 0) != AUTH_MAC_LEN)
		memset(out, 0xa5, AUTH_MAC_LEN);
	return false;
}

void
shr_auth_wipe(void *p, size_t len)
{
	if (p != NULL && len != 0)
		OPENSSL_cleanse(p, len);
}

int
shr_auth_secret_set(struct shr_auth_secret *s, const void *key, size_t len)
{
	if (s == NULL || key == NULL || len < SHR_AUTH_SECRET_MIN || len > SHR_AUTH_SECRET_MAX)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	memcpy(s->key, key, len);
	s->len = (uint32_t)len;
	return 0;
}

int
shr_auth_secret_load(const char *path, struct shr_auth_secret *s)
{
	uint8_t buf[SHR_AUTH_SECRET_MAX + 64];
	size_t len = 0;
	struct stat st;
	ssize_t n;
	int fd, rc;

	if (path == NULL || s == NULL)
		return -EINVAL;
	/* non-blocking: a FIFO or a device must not hang the open; only a regular file is read */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out;
	}
	/* its owner's alone, as ssh wants of a key: no group or other bits */
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		rc = -EACCES;
		goto out;
	}
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	/* the buffer full: the file is longer than any secret and its blanks (not cut short) */
	if (len == sizeof(buf)) {
		rc = -EFBIG;
		goto out;
	}
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
			   buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	rc = shr_auth_secret_set(s, buf, len);
out:
	OPENSSL_cleanse(buf, sizeof(buf));
	close(fd);
	return rc;
}

int
shr_auth_box_init(struct shr_auth_box *b, uint64_t ttl_ns)
{
	size_t got = 0;
	ssize_t n;

	if (b == NULL || ttl_ns == 0)
		return -EINVAL;
	while (got < sizeof(b->key)) {
		n = getrandom(b->key + got, sizeof(b->key) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	b->ttl_ns = ttl_ns;
	return 0;
}

/*
 * The challenge of epoch e: e, then the first bytes of the MAC of e, src and the JOIN; false
 * when libcrypto failed (the bytes are then random).
 */
static bool
challenge_of(const struct shr_auth_box *b, uint32_t e, uint64_t src,
	     const struct shr_auth_join *j, uint8_t *ch)
{
	uint8_t msg[AUTH_EPOCH_LEN + 8 + AUTH_JOIN_LEN], mac[AUTH_MAC_LEN];
	bool ok;

	put_join(put64(put32(msg, e), src), j);
	ok = hmac(b->key, sizeof(b->key), msg, sizeof(msg), mac);
	put32(ch, e);
	memcpy(ch + AUTH_EPOCH_LEN, mac, SHR_AUTH_CHALLENGE_LEN - AUTH_EPOCH_LEN);
	return ok;
}

void
shr_auth_challenge(const struct shr_auth_box *b, uint64_t now_ns, uint64_t src,
		   const struct shr_auth_join *j, uint8_t *ch)
{
	(void)challenge_of(b, (uint32_t)(now_ns / b->ttl_ns), src, j, ch); /* random if failed */
}

bool
shr_auth_challenge_ok(const struct shr_auth_box *b, uint64_t now_ns, uint64_t src,
		      const struct shr_auth_join *j, const uint8_t *ch)
{
	uint32_t now = (uint32_t)(now_ns / b->ttl_ns);
	uint32_t e = (uint32_t)ch[0] << 24 | (uint32_t)ch[1] << 16 | (uint32_t)ch[2] << 8 | ch[3];
	uint8_t want[SHR_AUTH_CHALLENGE_LEN];

	if (e != now && e + 1 != now)
		return false;
	if (!challenge_of(b, e, src, j, want))
		return false;
	return CRYPTO_memcmp(want, ch, sizeof(want)) == 0;
}

void
shr_auth_proof(const struct shr_auth_secret *s, const uint8_t *ch,
	       const struct shr_auth_join *j, uint8_t *proof)
{
	uint8_t msg[sizeof(AUTH_TAG) - 1 + SHR_AUTH_CHALLENGE_LEN + AUTH_JOIN_LEN];
	uint8_t *p = msg;

	memcpy(p, AUTH_TAG, sizeof(AUTH_TAG) - 1);
	p += sizeof(AUTH_TAG) - 1;
	memcpy(p, ch, SHR_AUTH_CHALLENGE_LEN);
	put_join(p + SHR_AUTH_CHALLENGE_LEN, j);
	(void)hmac(s->key, s->len, msg, sizeof(msg), proof);	/* random if it failed */
}

bool
shr_auth_proof_ok(const struct shr_auth_secret *s, const uint8_t *ch,
		  const struct shr_auth_join *j, const uint8_t *proof)
{
	uint8_t want[SHR_AUTH_PROOF_LEN];
	bool ok;

	if (s->len == 0)
		return false;
	shr_auth_proof(s, ch, j, want);
	ok = CRYPTO_memcmp(want, proof, sizeof(want)) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}

/* One "a.b.c.d[/len]" of exactly n characters. */
static int
acl_parse_one(const char *s, size_t n, uint32_t *net, uint32_t *mask)
{
	char buf[32], *slash, *end;
	unsigned int a[4];
	unsigned long len = 32;
	int used = 0;

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	/* digits, dots and one slash only: sscanf's %u and strtoul take a sign ("-0.-0.-0.-0/0"
	 * would admit every address) */
	if (strspn(buf, "0123456789./") != n)
		return -EINVAL;
	slash = strchr(buf, '/');
	if (slash != NULL) {
		*slash = '\0';
		errno = 0;
		len = strtoul(slash + 1, &end, 10);
		if (errno != 0 || end == slash + 1 || *end != '\0' || len > 32)
			return -EINVAL;
	}
	if (sscanf(buf, "%3u.%3u.%3u.%3u%n", &a[0], &a[1], &a[2], &a[3], &used) != 4 ||
	    buf[used] != '\0' || a[0] > 255 || a[1] > 255 || a[2] > 255 || a[3] > 255)
		return -EINVAL;
	*mask = len == 0 ? 0 : ~0u << (32 - len);
	*net = (a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3]) & *mask;
	return 0;
}

int
shr_auth_acl_add(struct shr_auth_acl *acl, const char *list)
{
	struct shr_auth_acl tmp;
	const char *p;
	size_t n;
	int rc;

	if (acl == NULL || list == NULL)
		return -EINVAL;
	tmp = *acl;
	for (p = list; *p != '\0'; p += n) {
		p += strspn(p, ", \t");
		n = strcspn(p, ", \t");
		if (n == 0)
			break;
		if (tmp.n == SHR_AUTH_ACL_MAX)
			return -ENOSPC;
		rc = acl_parse_one(p, n, &tmp.e[tmp.n].net, &tmp.e[tmp.n].mask);
		if (rc < 0)
			return rc;
		tmp.n++;
	}
	/* a list with no entry (empty, blanks, commas) adds nothing: an allowlist left empty
	 * admits every address, the opposite of what was meant (--allow "$UNSET") */
	if (tmp.n == acl->n)
		return -EINVAL;
	*acl = tmp;
	return 0;
}

bool
shr_auth_acl_ok(const struct shr_auth_acl *acl, uint32_t ip)
{
	uint32_t i;

	if (acl == NULL || acl->n == 0)
		return true;
	for (i = 0; i < acl->n; i++)
		if ((ip & acl->e[i].mask) == acl->e[i].net)
			return true;
	return false;
}
