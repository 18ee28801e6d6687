/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The worker-side communicator: driver + endpoint (creating and destroying it:
 * shr_comm_create.c; joining the job: shr_comm_join.c).
 *
 * Sends from the endpoint are queued (the header copied, the payload referenced: it points
 * into the collective's input buffer) and flushed to the driver in bursts at the end of each
 * progress round, or when the queue fills. A burst the driver cannot take stays queued for
 * the next round, but never past the end of its collective: the application may reuse or
 * free the buffer as soon as test/wait say the collective is done (or failed), so every
 * progress round first drops the queued sends of collectives that have ended (their results
 * came in meanwhile: a resend is moot), and a failure drops every queued send.
 */

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <shr_proto.h>

#include "shr_comm.h"

#include "shr_comm_private.h"

uint64_t
comm_now_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Move queue entry from to position to (to <= from), its header with it. */
static void
comm_txq_move(struct shr_comm *c, unsigned int to, unsigned int from)
{
	if (to == from)
		return;
	c->txq[to] = c->txq[from];
	memcpy(c->txq_hdr[to], c->txq_hdr[from], SHR_PROTO_HDR_LEN);
	if (c->txq[to].hdr != c->txq_hdr[from]) {
		comm_mac_move(c, to, from);	/* a signed copy */
		return;
	}
	c->txq[to].hdr = c->txq_hdr[to];
}

/* Push the queue to the driver; keep what it did not take. Returns datagrams sent or -EIO. */
static int
comm_flush(struct shr_comm *c)
{
	unsigned int i, left;
	int rc;

	if (c->txq_n == 0)
		return 0;
	rc = shr_drv_tx_burst(c->drv, c->txq, c->txq_n);
	if (rc < 0)
		return rc;
	if ((unsigned int)rc == c->txq_n) {
		c->txq_n = 0;
		return rc;
	}
	/* Keep the rest, moved to the front. */
	left = c->txq_n - (unsigned int)rc;
	for (i = 0; i < left; i++)
		comm_txq_move(c, i, (unsigned int)rc + i);
	c->txq_n = left;
	c->tx_deferred++;
	return rc;
}

/*
 * True if a queued send's collective is still pending (its payload buffer still lent): the
 * collective whose stream offsets hold the DATA's (the newest first; a pending one is among
 * the last COMM_OPS calls).
 */
static bool
comm_txq_live(struct shr_comm *c, unsigned int i)
{
	const struct shr_proto_hdr *h = (const void *)c->txq_hdr[i];
	uint64_t off = be64toh(h->offset), k;

	if (c->ep == NULL)
		return false;
	for (k = 1; k <= c->ncalls && k <= COMM_OPS; k++) {
		const struct comm_op *o = &c->ops[(c->ncalls - k) % COMM_OPS];

		if (off >= o->end)
			return false;	/* past this call, so past every older one */
		if (off >= o->first)
			return o->req >= 0 && shr_endpoint_test(c->ep, o->req) == 0;
	}
	return false;
}

/*
 * Drop the queued DATA (its payload points into a collective's input) of every collective
 * that has ended (all: of every collective), so that none is read once test/wait have
 * handed the buffer back. Control messages (their payload is the communicator's) stay.
 */
static void
comm_txq_drop_ended(struct shr_comm *c, bool all)
{
	unsigned int i, k = 0;

	for (i = 0; i < c->txq_n; i++) {
		const struct shr_proto_hdr *h = (const void *)c->txq_hdr[i];

		if (h->type == SHR_MSG_DATA && (all || !comm_txq_live(c, i))) {
			c->tx_ended++;
			continue;
		}
		comm_txq_move(c, k++, i);
	}
	c->txq_n = k;
}

/* Queue one message to the box; port is the lane of its slot (or the base port). */
static int
comm_queue(struct shr_comm *c, const void *hdr, const void *payload, size_t len, uint16_t port)
{
	struct shr_drv_pkt *p;

	if (c->txq_n == COMM_TXQ) {
		int rc = comm_flush(c);

		if (rc < 0)
			return rc;
		if (c->txq_n == COMM_TXQ)
			return -EAGAIN;
	}
	memcpy(c->txq_hdr[c->txq_n], hdr, SHR_PROTO_HDR_LEN);
	p = &c->txq[c->txq_n++];
	p->dst_ip = c->p.agg_ip;
	p->dst_port = port;
	p->hdr = c->txq_hdr[c->txq_n - 1];
	p->hdr_len = SHR_PROTO_HDR_LEN;
	p->payload = payload;
	p->payload_len = (uint32_t)len;
	if (c->mac_buf != NULL)
		comm_mac_wrap(c, c->txq_n - 1);
	return 0;
}

/* The endpoint's send(): DATA for slot s goes to lane s % lanes. */
int
comm_ep_send(void *ctx, const void *hdr, const void *payload, size_t payload_len)
{
	struct shr_comm *c = ctx;
	const struct shr_proto_hdr *h = hdr;
	uint32_t slot = ntohl(h->slot) & SHR_PROTO_SLOT_MASK;

	return comm_queue(c, hdr, payload, payload_len,
			  (uint16_t)(c->p.agg_port + slot % c->lanes));
}

/*
 * The JOIN's fields beyond the job's: its flags (reproducible, MAC, a result group offered),
 * the largest chunk of the path (feedback), and in a tree the rank this member stands for
 * (root, one: tensor). The admission proof covers them (comm_answer_challenge()).
 */
void
comm_join_fields(const struct shr_comm *c, uint16_t *flags, uint32_t *feedback, uint16_t *root,
		 uint32_t *tensor)
{
	*flags = (c->p.repro ? SHR_FLAG_REPRO : 0) | (c->p.mac ? SHR_FLAG_MAC : 0) |
		 (comm_group_offer(c) ? SHR_FLAG_GROUP : 0);
	*feedback = c->path_chunk;
	*root = c->p.tree_world != 0 ? c->p.tree_rank : 0;
	*tensor = c->p.tree_world != 0 ? 1 : 0;
}

/* Send a payload-less control message (JOIN, LEAVE) to the base port at once. */
int
comm_send_ctl(struct shr_comm *c, uint8_t type)
{
	struct shr_proto_msg m = {
		.type = type,
		.dtype = c->p.dtype,
		.rank = c->p.rank,
		.world = c->p.world,
		.job = c->p.job,
		.slot = c->p.slots & SHR_PROTO_SLOT_MASK,
		.count = c->p.chunk_elems,
		.token = type == SHR_MSG_JOIN ? c->nonce : c->token,
		.offset = type == SHR_MSG_LEAVE ? c->nonce : 0,	/* which process leaves */
	};
	uint8_t hdr[SHR_PROTO_HDR_LEN];
	bool adm = type == SHR_MSG_JOIN && c->have_adm;
	int rc;

	if (type == SHR_MSG_JOIN)
		comm_join_fields(c, &m.flags, &m.feedback, &m.root, &m.tensor);

	shr_proto_build(hdr, &m, adm ? c->adm : NULL, adm ? sizeof(c->adm) : 0);
	rc = comm_queue(c, hdr, adm ? c->adm : NULL, adm ? sizeof(c->adm) : 0, c->p.agg_port);
	if (rc < 0)
		return rc;
	rc = comm_flush(c);
	return rc < 0 ? rc : 0;
}

/*
 * A control message from the box (validated). A JOIN_ACK counts only if it answers this
 * communicator's JOIN (it echoes the nonce) or is the activation with the token this
 * communicator was told while the job filled; a LEAVE_ACK or an ABORT only with the token of
 * the incarnation joined, or (ABORT) as the answer to this communicator's JOIN. Returns true
 * if the message was for this communicator.
 */
static bool
comm_ctl_input(struct shr_comm *c, const struct shr_proto_msg *m, const uint8_t *payload,
	       size_t payload_len)
{
	bool ours;

	if (m->job != c->p.job)
		return false;
	switch (m->type) {
	case SHR_MSG_JOIN_ACK:
		/*
		 * The answer to this communicator's JOIN (it echoes the nonce), or the one the
		 * box sends every member when the job fills (offset 0), which only a member
		 * told the incarnation's token while the job filled can take.
		 */
		if (m->offset != c->nonce &&
		    !(m->offset == 0 && m->aux == 0 && c->token != 0 && m->token == c->token))
			return false;
		c->rx_ctl++;
		if (c->joined)
			break;	/* a repeat */
		if (m->aux == EINPROGRESS) {
			uint32_t ms = m->feedback < COMM_BOX_WAIT_MAX_MS ? m->feedback :
				      COMM_BOX_WAIT_MAX_MS;

			/* the proof was taken: the challenges of a long fill (a new one every
			 * lifetime or two) are not a box refusing every answer */
			c->challenges = 0;
			c->token = m->token;	/* so that a rank that gives up can LEAVE */
			c->box_wait_ns = comm_now_ns(c) + (uint64_t)ms * 1000000ull;
			break;
		}
		if (m->aux == EADDRINUSE) {
			c->join_busy = m->aux;
			break;
		}
		if (m->aux == ENOKEY && payload_len == SHR_PROTO_ADM_LEN) {
			comm_answer_challenge(c, payload);
			break;
		}
		if (m->aux == EMSGSIZE) {
			c->job_chunk = m->count;
			c->box_fit = m->feedback;
		}
		if (m->aux != 0) {
			c->join_err = m->aux;
			break;
		}
		c->token = m->token;
		c->slots = m->slot;
		c->chunk_elems = m->count;
		/* 0 (more than a port range holds) fails the join: slot % lanes picks a port */
		c->lanes = m->tensor == 0 ? 1 : m->tensor <= UINT16_MAX ? (uint16_t)m->tensor : 0;
		if ((m->flags & SHR_FLAG_GROUP) && comm_group_offer(c)) {
			c->group_ip = m->feedback;
			c->group_port = m->root;
		}
		c->joined = true;
		break;
	case SHR_MSG_LEAVE_ACK:
		if (c->token == 0 || m->token != c->token)
			return false;
		c->rx_ctl++;
		if (m->rank == c->p.rank)
			c->left = true;
		break;
	case SHR_MSG_ABORT:
		ours = (c->token != 0 && m->token == c->token) ||
		       (!c->joined && m->offset == c->nonce);
		if (!ours)
			return false;
		c->rx_ctl++;
		comm_abort_note(c, m);
		break;
	default:
		return false;
	}
	return true;
}

/* Receive one burst and dispatch it. Returns datagrams received or a negative errno. */
static int
comm_rx_burst(struct shr_comm *c)
{
	struct shr_proto_msg m;
	int n, i;

	n = shr_drv_rx_burst(c->drv, c->rx, SHR_DRV_BURST_MAX);
	for (i = 0; i < n; i++) {
		const struct shr_drv_rx *r = &c->rx[i];
		uint8_t type;

		if (r->src_ip != c->p.agg_ip) {
			c->rx_foreign++;
			continue;
		}
		if (c->p.mac && !comm_mac_rx(c, r->data, r->len))
			continue;	/* forged, altered or replayed: counted */
		if (r->len < SHR_PROTO_HDR_LEN)
			type = 0;
		else
			type = ((const struct shr_proto_hdr *)r->data)->type;
		if (type == SHR_MSG_RESULT && c->ep != NULL) {
			(void)shr_endpoint_input_at(c->ep, r->data, r->len, r->rx_ns);
			continue;
		}
		if (shr_proto_validate(r->data, r->len, &m) != SHR_PROTO_OK)
			continue;
		if (!comm_ctl_input(c, &m, (const uint8_t *)r->data + SHR_PROTO_HDR_LEN,
				    r->len - SHR_PROTO_HDR_LEN)) {
			c->rx_foreign++;
			continue;
		}
		if (m.type == SHR_MSG_ABORT && c->ep != NULL)
			(void)shr_endpoint_input(c->ep, r->data, r->len);
	}
	return n;
}

/*
 * One progress round: drain what has arrived (all of it, up to COMM_RX_BURSTS bursts, so
 * that results already received are not mistaken for losses after a stall), poll the
 * endpoint, flush. Returns datagrams moved, or a negative errno.
 */
int
comm_round(struct shr_comm *c)
{
	int n = 0, b, i, rc, moved;
	uint64_t tx0;

	for (b = 0; b < COMM_RX_BURSTS; b++) {
		rc = comm_rx_burst(c);
		if (rc < 0)
			return rc;
		n += rc;
		if (rc < SHR_DRV_BURST_MAX)
			break;
	}
	/* What is still queued is from earlier rounds: results just in may have ended it. */
	if (c->txq_n > 0)
		comm_txq_drop_ended(c, false);
	moved = n;
	if (c->ep != NULL) {
		tx0 = c->drv->stats.tx_pkts;
		rc = shr_endpoint_poll(c->ep);
		i = comm_flush(c);
		if (i < 0)
			return i;
		moved += (int)(c->drv->stats.tx_pkts - tx0);
		if (rc < 0)
			return rc;
	} else {
		i = comm_flush(c);
		if (i < 0)
			return i;
		moved += i;
	}
	return moved;
}

/* How long nothing is due: until the endpoint's next timed work, at most max_us. */
static uint64_t
comm_idle_us(struct shr_comm *c, uint64_t max_us)
{
	uint64_t us = max_us;

	if (c->txq_n > 0)
		return 0;	/* the device was full: just retry */
	if (c->ep != NULL) {
		uint64_t dl = shr_endpoint_next_deadline(c->ep);
		uint64_t now = comm_now_ns(c);

		if (dl != UINT64_MAX) {
			uint64_t left = dl > now ? (dl - now) / 1000 : 0;

			if (left < us)
				us = left;
		}
	}
	return us;
}

/* Sleep until a datagram arrives or the endpoint has timed work (at most max_us). */
int
comm_sleep(struct shr_comm *c, uint64_t max_us)
{
	uint64_t us = comm_idle_us(c, max_us);
	int rc;

	if (us == 0)
		return 0;
	rc = shr_drv_wait(c->drv, us);
	if (rc == -EINTR)
		return 0;
	return rc < 0 ? rc : 0;
}

int
comm_failed(struct shr_comm *c, int err)
{
	if (err == -EPIPE && c->aborted)
		err = -ECONNABORTED;
	if (c->fail == 0 && (err == -ETIMEDOUT || err == -ECONNABORTED || err == -EIO)) {
		c->fail = err;
		comm_txq_drop_ended(c, true);	/* every collective has failed */
	}
	return err;
}

int
shr_comm_progress(struct shr_comm *comm)
{
	int rc;

	if (comm->fail != 0)
		return comm->fail;
	rc = comm_round(comm);
	return rc < 0 ? comm_failed(comm, rc) : rc;
}

int
shr_comm_test(struct shr_comm *comm, int req)
{
	int rc;

	rc = shr_endpoint_test(comm->ep, req);
	if (rc == 0) {
		rc = shr_comm_progress(comm);
		if (rc < 0)
			return rc;
		rc = shr_endpoint_test(comm->ep, req);
	}
	if (rc < 0)
		return comm_failed(comm, rc);
	if (rc == 1)
		comm_q_done(comm, req);	/* a quantised collective's floats */
	return rc;
}

/* Spin, then sleep until something comes (lib/spin: the spin adapts to how long waits are). */
int
shr_comm_wait(struct shr_comm *comm, int req)
{
	shr_spin_begin(&comm->spin);
	for (;;) {
		int rc = shr_endpoint_test(comm->ep, req);

		if (rc < 0)
			return comm_failed(comm, rc);
		if (rc == 1) {
			comm_q_done(comm, req);	/* a quantised collective's floats */
			return 0;
		}
		rc = shr_comm_progress(comm);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			shr_spin_moved(&comm->spin);
			continue;
		}
		if (!shr_spin_empty(&comm->spin))
			continue;
		rc = comm_sleep(comm, COMM_MAX_SLEEP_US);
		if (rc < 0)
			return comm_failed(comm, rc);
	}
}

int
shr_comm_fd(const struct shr_comm *comm)
{
	return shr_drv_fd(comm->drv);
}

uint64_t
shr_comm_idle_us(struct shr_comm *comm, uint64_t max_us)
{
	if (comm->fail != 0)
		return 0;
	return comm_idle_us(comm, max_us);
}

void
shr_comm_info_get(const struct shr_comm *comm, struct shr_comm_info *info)
{
	memset(info, 0, sizeof(*info));
	info->window = comm_inflight(comm);
	info->slots = comm->slots;
	info->chunk_elems = comm->chunk_elems;
	info->lanes = comm->lanes;
	info->local_ip = comm->drv->local_ip;
	info->local_port = comm->drv->local_port;
	info->driver = comm->drv->ops->name;
	info->group_ip = comm->group_ip;
	info->group_port = comm->group_port;
}

void
shr_comm_stats_get(const struct shr_comm *comm, struct shr_comm_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	if (comm->ep != NULL)
		shr_endpoint_stats_get(comm->ep, &stats->ep);
	stats->drv = comm->drv->stats;
	stats->rx_foreign = comm->rx_foreign;
	stats->mac_bad = comm->mac_bad;
	stats->mac_replay = comm->mac_replay;
	stats->mac_missing = comm->mac_missing;
	stats->rx_ctl = comm->rx_ctl;
	stats->tx_deferred = comm->tx_deferred;
	stats->tx_ended = comm->tx_ended;
	stats->sleeps = comm->spin.sleeps;
	stats->spin = comm->spin.cur;
}

const char *
shr_comm_strerror(const struct shr_comm *comm, int err, char *buf, size_t len)
{
	char agg[INET_ADDRSTRLEN] = "?", ip[INET_ADDRSTRLEN];

	if (comm != NULL) {
		struct in_addr a = { .s_addr = htonl(comm->p.agg_ip) };

		inet_ntop(AF_INET, &a, agg, sizeof(agg));
	}
	if (comm != NULL && err == -ECONNABORTED && comm->aborted) {
		const struct shr_comm_abort *a = &comm->abort;

		if (a->upstream)
			(void)comm_abort_up_str(comm, agg, buf, len);
		else if (a->reason == EPROTO)
			(void)comm_abort_str(comm, agg, buf, len);
		else if (a->rank == SHR_PROTO_RANK_ALL && a->reason == ESHUTDOWN)
			snprintf(buf, len, "job %u aborted by the aggregator %s: the aggregator "
				 "is shutting down", comm->p.job, agg);
		else if (a->reason == ESTALE)
			snprintf(buf, len, "job %u aborted by the aggregator %s: rank %u joined "
				 "again from a new process (a new run of the job)", comm->p.job,
				 agg, a->rank);
		else if (a->rank == SHR_PROTO_RANK_ALL && a->reason == ETIMEDOUT)
			snprintf(buf, len, "job %u aborted by the aggregator %s: no member sent "
				 "anything for the box's idle time", comm->p.job, agg);
		else if (a->rank == SHR_PROTO_RANK_ALL)
			snprintf(buf, len, "job %u aborted by the aggregator %s: %s", comm->p.job,
				 agg, strerror((int)a->reason));
		else if (a->reason == ECONNABORTED)
			snprintf(buf, len,
				 "job %u aborted by the aggregator %s: its member %u (%s, a box of "
				 "the tree below it) aborted its part of the job", comm->p.job, agg,
				 a->rank, comm_ip_str(a->rank_ip, ip, sizeof(ip)));
		else
			snprintf(buf, len,
				 "job %u aborted by the aggregator %s: rank %u did not join or "
				 "send in time (%s%s%s)", comm->p.job, agg, a->rank,
				 strerror((int)a->reason), a->rank_ip != 0 ? "; it is at " : "",
				 a->rank_ip != 0 ? comm_ip_str(a->rank_ip, ip, sizeof(ip)) : "");
	} else if (comm != NULL && err == -ETIMEDOUT) {
		snprintf(buf, len,
			 "job %u rank %u: no result from the aggregator %s:%u for %u ms "
			 "(aggregator down or unreachable, or a rank missing)",
			 comm->p.job, comm->p.rank, agg, comm->p.agg_port, comm->p.timeout_ms);
	} else if (comm != NULL) {
		snprintf(buf, len, "job %u rank %u: %s", comm->p.job, comm->p.rank,
			 strerror(-err));
	} else if (err == -ENOKEY) {
		snprintf(buf, len, "the aggregator requires the job's secret (it sent a "
			 "challenge): give the secret file");
	} else if (err == -EACCES) {
		snprintf(buf, len, "the aggregator refused the proof of the job's secret (wrong "
			 "secret)");
	} else if (err == -EKEYREJECTED) {
		snprintf(buf, len, "the aggregator's job and this rank disagree on the message "
			 "authentication code (the box's mac setting against the worker's --mac)");
	} else if (err == -EPERM) {
		snprintf(buf, len, "the aggregator does not admit this host's address (not in "
			 "its allowlist)");
	} else {
		snprintf(buf, len, "%s", strerror(-err));
	}
	return buf;
}
