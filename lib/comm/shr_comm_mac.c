/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The member's side of the per-job message authentication code (lib/mac; shr_comm_params::mac):
 * every message this communicator queues after its JOIN (DATA from the endpoint, LEAVE) is
 * copied whole into a buffer of its queue position, flagged SHR_FLAG_MAC and signed (sender
 * id: the rank; one counter for all of them); every message from the box that the key can
 * check (the admitting JOIN_ACK, then RESULT, LEAVE_ACK, ABORT of the incarnation) is
 * verified, with a replay window per box sender, before anything else reads it. The key is
 * derived again whenever the box announces a token (JOIN_ACK EINPROGRESS or 0); a JOIN_ACK
 * that admits is taken only if it verifies under the key of the token it carries.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <shr_mac.h>
#include <shr_proto_bytes.h>

#include "shr_comm_private.h"

#define MAC_BUF (SHR_PROTO_HDR_LEN + COMM_MAX_CHUNK * 4 + SHR_MAC_TRAILER_LEN)

int
comm_mac_init(struct shr_comm *c)
{
	if (!c->p.mac)
		return 0;
	if (c->secret.len == 0) {
		/* said here: shr_comm_strerror()'s ENOKEY text is the box's challenge, and no
		 * box was asked */
		if (c->p.why != NULL && c->p.why_len != 0)
			snprintf(c->p.why, c->p.why_len, "mac = 1 needs the job's secret "
				 "(shr_comm_params.secret): nothing was sent");
		return -ENOKEY;
	}
	c->mac_buf = malloc((size_t)COMM_TXQ * MAC_BUF);
	c->mac_win = calloc(COMM_MAC_SENDERS, sizeof(*c->mac_win));
	if (c->mac_buf == NULL || c->mac_win == NULL) {
		comm_mac_fini(c);
		return -ENOMEM;
	}
	/*
	 * The counter (the GMAC nonce with the rank) starts at random below 2^62: another
	 * process of this rank in the same incarnation (the job still filling keeps its token,
	 * so its key) must not sign with the counters this one used, or the key leaks. The box
	 * starts the rank's replay window anew when it binds the new process.
	 */
	if (getrandom(&c->mac_ctr, sizeof(c->mac_ctr), 0) != sizeof(c->mac_ctr)) {
		comm_mac_fini(c);
		return -EIO;
	}
	c->mac_ctr &= (1ull << 62) - 1;
	return 0;
}

void
comm_mac_fini(struct shr_comm *c)
{
	shr_mac_free(c->mac);
	c->mac = NULL;
	free(c->mac_buf);
	c->mac_buf = NULL;
	free(c->mac_win);
	c->mac_win = NULL;
}

/* A schedule for the key of token (NULL: failed). */
static struct shr_mac *
mac_of(const struct shr_comm *c, uint64_t token)
{
	uint8_t key[SHR_MAC_KEY_LEN];
	struct shr_mac *m;

	if (shr_mac_derive(c->secret.key, c->secret.len, c->p.job, token, key) < 0)
		return NULL;
	m = shr_mac_create(key);
	shr_auth_wipe(key, sizeof(key));
	return m;
}

/* The box announced the incarnation's token: key it (new windows for the box's senders). */
static void
mac_adopt(struct shr_comm *c, uint64_t token, struct shr_mac *m)
{
	if (c->mac != NULL && c->mac_token == token) {
		shr_mac_free(m);
		return;
	}
	if (m == NULL)
		m = mac_of(c, token);
	shr_mac_free(c->mac);
	c->mac = m;
	c->mac_token = token;
	memset(c->mac_win, 0, COMM_MAC_SENDERS * sizeof(*c->mac_win));
}

void
comm_mac_wrap(struct shr_comm *c, unsigned int i)
{
	struct shr_drv_pkt *p = &c->txq[i];
	uint8_t *b = c->mac_buf + (size_t)i * MAC_BUF;
	uint16_t flags;
	uint32_t crc;
	size_t len = p->payload_len;

	if (c->mac_buf == NULL || ((const uint8_t *)p->hdr)[3] == SHR_MSG_JOIN ||
	    c->mac == NULL || len + SHR_PROTO_HDR_LEN + SHR_MAC_TRAILER_LEN > MAC_BUF)
		return;	/* unsigned: the box refuses it (mac_missing) */
	memcpy(b, p->hdr, SHR_PROTO_HDR_LEN);
	if (len != 0)
		memcpy(b + SHR_PROTO_HDR_LEN, p->payload, len);
	flags = (uint16_t)(b[20] << 8 | b[21]) | SHR_FLAG_MAC;
	b[20] = (uint8_t)(flags >> 8);
	b[21] = (uint8_t)flags;
	crc = shr_crc32c(shr_crc32c(0, b, SHR_PROTO_CRC_SPAN), b + SHR_PROTO_HDR_LEN, len);
	b[60] = (uint8_t)(crc >> 24);
	b[61] = (uint8_t)(crc >> 16);
	b[62] = (uint8_t)(crc >> 8);
	b[63] = (uint8_t)crc;
	if (shr_mac_sign(c->mac, b, SHR_PROTO_HDR_LEN + len, c->p.rank, ++c->mac_ctr) < 0)
		return;
	p->hdr = b;
	p->payload = b + SHR_PROTO_HDR_LEN;
	p->payload_len = (uint32_t)(len + SHR_MAC_TRAILER_LEN);
}

void
comm_mac_move(struct shr_comm *c, unsigned int to, unsigned int from)
{
	uint8_t *src = c->mac_buf + (size_t)from * MAC_BUF, *dst;

	if (c->mac_buf == NULL || c->txq[to].hdr != src)
		return;	/* not a signed copy (comm_txq_move() copied the entry already) */
	dst = c->mac_buf + (size_t)to * MAC_BUF;
	memcpy(dst, src, SHR_PROTO_HDR_LEN + c->txq[to].payload_len);
	c->txq[to].hdr = dst;
	c->txq[to].payload = dst + SHR_PROTO_HDR_LEN;
}

bool
comm_mac_rx(struct shr_comm *c, const void *data, size_t len)
{
	const uint8_t *h = data;
	struct shr_proto_msg m;
	struct shr_mac *tmp = NULL, *key;
	uint64_t ctr;
	uint32_t snd;
	int rc;

	if (!c->p.mac || shr_proto_validate(data, len, &m) != SHR_PROTO_OK || m.job != c->p.job)
		return true;	/* the usual checks drop it */
	(void)h;
	/*
	 * Keys change only while joining: a JOIN_ACK once joined is a repeat (of its own token:
	 * verified below under the key in use, never adopted; another token's: the joined comm
	 * drops it). An unsigned EINPROGRESS or an old incarnation's signed JOIN_ACK replayed
	 * would switch keys, and a message of the real token would then pass unchecked, or the
	 * windows start again.
	 */
	if (m.type == SHR_MSG_JOIN_ACK && c->joined && m.token != c->token)
		return true;
	if (m.type == SHR_MSG_JOIN_ACK && !c->joined) {
		if (m.aux == EINPROGRESS && m.offset == c->nonce) {
			mac_adopt(c, m.token, NULL);	/* so that a rank that gives up can LEAVE */
			return true;
		}
		if (m.aux != 0)
			return true;	/* before admission: nothing is keyed yet */
		if (!(m.flags & SHR_FLAG_MAC)) {
			c->mac_missing++;
			return false;
		}
		key = c->mac != NULL && c->mac_token == m.token ? c->mac :
			(tmp = mac_of(c, m.token));
		if (key == NULL || shr_mac_verify(key, data, len, &snd, &ctr) != 0 ||
		    (snd & SHR_MAC_SENDER_BOX) == 0) {
			shr_mac_free(tmp);
			c->mac_bad++;
			return false;
		}
		mac_adopt(c, m.token, tmp);
		goto window;
	}
	if (c->joined && m.token == c->token && (c->mac == NULL || c->mac_token != c->token)) {
		c->mac_bad++;	/* the incarnation's own token, not under its key: never taken */
		return false;
	}
	if (c->mac == NULL || m.token != c->mac_token)
		return true;	/* not keyed, or another incarnation's: the token checks drop it */
	if (!(m.flags & SHR_FLAG_MAC)) {
		c->mac_missing++;
		return false;
	}
	rc = shr_mac_verify(c->mac, data, len, &snd, &ctr);
	if (rc != 0 || (snd & SHR_MAC_SENDER_BOX) == 0) {
		c->mac_bad++;
		return false;
	}
window:
	snd &= ~SHR_MAC_SENDER_BOX;
	if (snd >= COMM_MAC_SENDERS) {
		c->mac_bad++;
		return false;
	}
	if (shr_mac_window_accept(&c->mac_win[snd], ctr) != 0) {
		c->mac_replay++;
		return false;
	}
	return true;
}
