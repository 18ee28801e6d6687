/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Joining a job: the driver opened, the largest chunk the path to the box carries, the JOIN
 * exchange (resent with backoff while the job fills, as long as the box says it waits), the
 * answer to an admission challenge, and the LEAVE of a rank that gives up.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include <shr_drv_udp.h>
#include <shr_drv_ethdev.h>

#include "shr_comm_private.h"

/*
 * The job requires a secret: answer the box's challenge with the proof of ours and JOIN
 * again at once. Without a secret, or after COMM_MAX_CHALLENGES challenges in one join (a box
 * that refuses every answer), the join fails (ENOKEY, EACCES).
 */
void
comm_answer_challenge(struct shr_comm *c, const uint8_t *challenge)
{
	struct shr_auth_join aj = {
		.job = c->p.job,
		.rank = c->p.rank,
		.world = c->p.world,
		.nonce = c->nonce,
		.dtype = c->p.dtype,
		.chunk = c->p.chunk_elems,
		.window = c->p.slots & SHR_PROTO_SLOT_MASK,
	};

	comm_join_fields(c, &aj.flags, &aj.feedback, &aj.root, &aj.tensor);
	if (c->secret.len == 0) {
		c->join_err = ENOKEY;
		return;
	}
	if (++c->challenges > COMM_MAX_CHALLENGES) {
		c->join_err = EACCES;
		return;
	}
	memcpy(c->adm, challenge, SHR_AUTH_CHALLENGE_LEN);
	shr_auth_proof(&c->secret, c->adm, &aj, c->adm + SHR_AUTH_CHALLENGE_LEN);
	c->have_adm = true;
	(void)comm_send_ctl(c, SHR_MSG_JOIN);	/* a loss: the next resend carries it too */
}

/*
 * Resend JOIN until the box acks (or refuses, or aborts, or the timeout passes). While the
 * job fills, the box says how long it will still wait for the other ranks: the join waits
 * that long (and a margin) too, so that both give up together. A refusal with EADDRINUSE
 * (the rank is bound to another address: a previous run whose job the box has not yet seen
 * go silent) is retried until the deadline.
 */
int
comm_join(struct shr_comm *c)
{
	uint64_t now = comm_now_ns(c);
	uint64_t deadline = now + (uint64_t)c->p.timeout_ms * 1000000ull;
	uint64_t interval = COMM_JOIN_RESEND_MIN_NS, next = now;
	int rc;

	while (!c->joined) {
		uint64_t until;

		now = comm_now_ns(c);
		until = deadline;
		if (c->box_wait_ns != 0 && c->box_wait_ns + COMM_BOX_WAIT_MARGIN_NS > until)
			until = c->box_wait_ns + COMM_BOX_WAIT_MARGIN_NS;
		if (now >= until)
			return c->join_busy != 0 ? -(int)c->join_busy : -ETIMEDOUT;
		if (now >= next) {
			rc = comm_send_ctl(c, SHR_MSG_JOIN);
			if (rc < 0)
				return rc;
			next = now + interval;
			interval = interval * 2 > COMM_JOIN_RESEND_MAX_NS ?
				   COMM_JOIN_RESEND_MAX_NS : interval * 2;
		}
		rc = comm_round(c);
		if (rc < 0)
			return rc;
		if (c->join_err != 0)
			return -(int)c->join_err;
		if (c->aborted)
			return c->abort.reason == EMSGSIZE ? -EMSGSIZE : -ECONNABORTED;
		if (rc == 0 && !c->joined) {
			until = next < until ? next : until;
			now = comm_now_ns(c);
			if (until > now) {
				rc = shr_drv_wait(c->drv, (until - now) / 1000);
				if (rc < 0 && rc != -EINTR)
					return rc;
			}
		}
	}
	if (c->slots == 0 || c->chunk_elems == 0 || c->lanes == 0)
		return -EPROTO;
	return 0;
}

/*
 * A JOIN that gave up while the job was filling: LEAVE (once, not awaited), so that the box
 * does not keep this rank bound to a job it will never run.
 */
void
comm_join_abandon(struct shr_comm *c)
{
	if (c->token != 0 && !c->aborted && c->join_err == 0)
		(void)comm_send_ctl(c, SHR_MSG_LEAVE);
}

/*
 * A non-zero value that differs between processes (and between two comms of one process):
 * the box remembers the JOIN nonce of each member of an incarnation that has ended and
 * answers that member's JOIN with its end again, so a restarted worker must not look like the
 * old one. 64 random bits: an attacker off the path cannot guess them.
 */
uint64_t
comm_nonce(void)
{
	static uint64_t seq;
	struct timespec ts;
	uint64_t x = 0;

	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t)sizeof(x)) {
		/* No kernel randomness yet: time, pid and a counter, mixed (splitmix64). */
		clock_gettime(CLOCK_REALTIME, &ts);
		x = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
		    ((uint64_t)getpid() << 40) + ++seq * 0x9e3779b97f4a7c15ull;
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
		x ^= x >> 31;
	}
	return x != 0 ? x : 1;
}

struct shr_drv *
comm_drv_open(const struct shr_comm_params *p)
{
	struct shr_drv *drv;

	if (p->driver == NULL || strcmp(p->driver, "udp") == 0) {
		struct shr_drv_udp_conf uc = {
			.local_ip = p->local_ip,
			.local_port = p->local_port,
			.no_gso = p->udp_no_gso,
		};

		return shr_drv_udp_create(&uc);
	}
	if (strcmp(p->driver, "dpdk") == 0 || strcmp(p->driver, "ethdev") == 0) {
		unsigned int esize = shr_proto_dtype_size(p->dtype);
		struct shr_drv_ethdev_conf ec = {
			.eal_argc = p->eal_argc,
			.eal_argv = p->eal_argv,
			.port_id = p->port_id,
			.local_ip = p->local_ip,
			.local_port = p->local_port,
			.peer_ip = p->agg_ip,
			.arp_timeout_ms = p->timeout_ms,
			.vlan = p->vlan,
		};

		memcpy(ec.peer_mac, p->agg_mac, sizeof(ec.peer_mac));
		size_t need = SHR_PROTO_HDR_LEN + (size_t)p->chunk_elems * esize +
			      (p->mac ? SHR_PROTO_MAC_LEN : 0);

		if (p->chunk_elems == 0) {
			/* auto: what the port's MTU carries, as it is */
			ec.keep_mtu = 1;
			ec.max_payload = (uint16_t)(SHR_PROTO_HDR_LEN + COMM_MAX_CHUNK * esize +
						    (p->mac ? SHR_PROTO_MAC_LEN : 0));
		} else if (need > 1472) {
			ec.max_payload = (uint16_t)need;
		}
		drv = shr_drv_ethdev_create(&ec);
		/* the operator's vector width binds the CRC32C as it binds DPDK's paths */
		if (drv != NULL && shr_drv_ethdev_simd_forced(p->eal_argc, p->eal_argv))
			(void)shr_crc32c_max_simd(shr_drv_ethdev_max_simd());
		return drv;
	}
	errno = EINVAL;
	return NULL;
}

/* Say why, when errno alone does not (params why/why_len). */
static void
comm_why(const struct shr_comm *c, const char *fmt, ...)
{
	va_list ap;

	if (c->p.why == NULL || c->p.why_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(c->p.why, c->p.why_len, fmt, ap);
	va_end(ap);
}

/*
 * The largest chunk that reaches the box whole (no IP fragments) from here: the JOIN offers
 * it (chunk 0: the box grants the largest every member carries); a fixed chunk larger than
 * that fails now, with the MTU in the reason, instead of as a timeout later.
 */
int
comm_path(struct shr_comm *c)
{
	unsigned int esize = shr_proto_dtype_size(c->p.dtype);
	int rc = shr_drv_path_payload(c->drv, c->p.agg_ip);

	if (rc < 0) {
		comm_why(c, "no path to the aggregator: %s", strerror(-rc));
		return rc;
	}
	c->path_payload = (uint32_t)rc;
	c->path_chunk = c->path_payload > SHR_PROTO_HDR_LEN + (c->p.mac ? SHR_PROTO_MAC_LEN : 0) ?
			(c->path_payload - SHR_PROTO_HDR_LEN -
			 (c->p.mac ? SHR_PROTO_MAC_LEN : 0)) / esize : 0;
	if (c->path_chunk > COMM_MAX_CHUNK)
		c->path_chunk = COMM_MAX_CHUNK;
	if (c->path_chunk == 0 || c->p.chunk_elems > c->path_chunk) {
		comm_why(c, "a chunk of %u elements (%u bytes) does not fit the path to the "
			 "aggregator (MTU %u): at most %u elements of %s fit (or use chunk auto)",
			 c->p.chunk_elems, SHR_PROTO_HDR_LEN + c->p.chunk_elems * esize,
			 c->path_payload + 28, c->path_chunk, shr_proto_dtype_str(c->p.dtype));
		return -EMSGSIZE;
	}
	return 0;
}

void
comm_why_join(const struct shr_comm *c, int rc)
{
	if (rc == -EMSGSIZE && c->aborted && c->abort.rank != c->p.rank)
		comm_why(c, "job %u aborted by the aggregator: rank %u's path cannot carry the "
			 "job's chunk of %u elements (at most %u there)", c->p.job, c->abort.rank,
			 c->job_chunk, c->box_fit);
	else if (rc == -EMSGSIZE)
		comm_why(c, "job %u's chunk of %u elements does not fit %s (MTU %u here: at "
			 "most %u elements; the box takes at most %u)", c->p.job, c->job_chunk,
			 c->box_fit < c->path_chunk ? "the aggregator's port" : "this host's path",
			 c->path_payload + 28, c->path_chunk, c->box_fit);
	else if (rc == -ECONNABORTED && c->aborted && c->p.why != NULL) {
		/* The communicator is freed next: keep the box's reason, as the
		 * collectives give it through shr_comm_strerror(). */
		char buf[256];

		(void)shr_comm_strerror(c, rc, buf, sizeof(buf));
		comm_why(c, "%s", buf);
	}
}

/* Whether this communicator's JOIN offers a result group: not refused, and its driver can. */
bool
comm_group_offer(const struct shr_comm *c)
{
	return !c->p.no_group && c->drv->ops->group_join != NULL;
}

/*
 * The job has a result group (JOIN_ACK, SHR_FLAG_GROUP): join it before any DATA goes out,
 * so that every result the box sends there (it can complete no round before this member's
 * DATA) comes in. Returns 0 or a negative errno (why says which group).
 */
int
comm_group_join(struct shr_comm *c)
{
	uint32_t g = c->group_ip;
	int rc;

	if (g == 0)
		return 0;
	rc = shr_drv_group_join(c->drv, g, c->group_port);
	if (rc < 0)
		comm_why(c, "job %u: cannot receive the results at the box's result group "
			 "%u.%u.%u.%u:%u: %s (no_group: every result to this rank)", c->p.job,
			 g >> 24, (g >> 16) & 0xff, (g >> 8) & 0xff, g & 0xff, c->group_port,
			 strerror(-rc));
	return rc;
}
