/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The host endpoint's state machine.
 *
 * State:
 * - a ring of SHR_ENDPOINT_MAX_OPS operations, indexed by submission sequence number (seq);
 *   [head_seq, next_seq) are pending, send_seq/send_off is the next chunk to send;
 * - W slots; slot i carries chunks i, i + W, i + 2W... of the stream. A busy slot has an
 *   outstanding chunk and sits on the timer list, a doubly-linked list through the slot
 *   array in (re)send order, so arming, cancelling and finding the next expiry are O(1).
 *
 * A slot's deadline is fixed when it is (re)sent, and a resend goes to the tail, so the
 * list is in send order but not strictly in deadline order: a chunk behind a backed-off
 * one waits for the head's deadline at most (as with TCP's single retransmit timer).
 */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <shr_proto.h>

#include "shr_endpoint.h"

#define EP_NIL UINT32_MAX
#define EP_MAX_CHUNK_BYTES 8192

#define EP_DEF_RTO_INIT_NS 1000000ull		/* 1 ms */
#define EP_DEF_RTO_MIN_NS 50000ull		/* 50 us */
#define EP_DEF_RTO_MAX_NS 100000000ull		/* 100 ms */
#define EP_DEF_FAIL_NS 10000000000ull		/* 10 s */

struct ep_op {
	struct shr_endpoint_op op;
	uint64_t nchunks;	/* chunks of the op */
	uint64_t done_chunks;	/* results written */
	bool done;
};

struct ep_slot {
	uint32_t prev;		/* timer list links (slot indexes) */
	uint32_t next;
	bool busy;		/* a chunk is outstanding */
	bool resent;		/* the outstanding chunk was resent (Karn: no RTT sample) */
	uint8_t ver;		/* version of the outstanding (or last) chunk */
	bool used;		/* the slot has carried a chunk before (its version flips) */
	uint32_t count;		/* elements of the outstanding chunk */
	uint64_t offset;	/* its element offset in its op */
	uint64_t seq;		/* its op */
	uint64_t sent_ns;	/* first transmission */
	uint64_t deadline_ns;	/* when it is resent */
	uint64_t rto_ns;	/* its current timeout (backs off on resend) */
};

struct shr_endpoint {
	struct shr_endpoint_params p;
	struct shr_endpoint_io io;
	unsigned int esize;	/* bytes per element */

	int err;		/* sticky failure (negative errno) or 0 */
	uint32_t err_reason;	/* ABORT's aux, or the positive errno */
	uint16_t err_rank;	/* ABORT's rank, or SHR_PROTO_RANK_ALL */

	/* operations */
	struct ep_op ops[SHR_ENDPOINT_MAX_OPS];
	uint64_t head_seq;	/* oldest op not done */
	uint64_t next_seq;	/* seq of the next submitted op */
	uint64_t send_seq;	/* op of the next chunk to send */
	uint64_t send_off;	/* its element offset */
	uint64_t next_chunk;	/* stream index k of the next chunk to send */

	/* RTT estimation (Jacobson/Karels) */
	bool have_rtt;
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	uint64_t rto_ns;

	/* failure detection */
	uint64_t progress_ns;	/* last accepted result, or start of the outstanding period */
	uint32_t in_flight;

	/* timer list */
	uint32_t t_head;
	uint32_t t_tail;

	struct shr_endpoint_stats st;
	struct ep_slot *slots;	/* window entries */
	uint8_t hdr[SHR_PROTO_HDR_LEN];	/* scratch header for sends */
};

static inline struct ep_op *
ep_op_of(struct shr_endpoint *ep, uint64_t seq)
{
	return &ep->ops[seq % SHR_ENDPOINT_MAX_OPS];
}

static bool
ep_op_supported(unsigned int dtype, unsigned int op)
{
	if (op >= SHR_OP_MAX_)
		return false;
	/* A product of quantised values would scale with the block exponent. */
	if (dtype == SHR_DTYPE_QINT32 && op == SHR_OP_PROD)
		return false;
	return true;
}

static void
ep_fail(struct shr_endpoint *ep, int err, uint32_t reason, uint16_t rank)
{
	if (ep->err != 0)
		return;
	ep->err = err;
	ep->err_reason = reason;
	ep->err_rank = rank;
}

/* Timer list. */

static void
ep_timer_append(struct shr_endpoint *ep, uint32_t i)
{
	struct ep_slot *s = &ep->slots[i];

	s->next = EP_NIL;
	s->prev = ep->t_tail;
	if (ep->t_tail != EP_NIL)
		ep->slots[ep->t_tail].next = i;
	else
		ep->t_head = i;
	ep->t_tail = i;
}

static void
ep_timer_remove(struct shr_endpoint *ep, uint32_t i)
{
	struct ep_slot *s = &ep->slots[i];

	if (s->prev != EP_NIL)
		ep->slots[s->prev].next = s->next;
	else
		ep->t_head = s->next;
	if (s->next != EP_NIL)
		ep->slots[s->next].prev = s->prev;
	else
		ep->t_tail = s->prev;
	s->prev = EP_NIL;
	s->next = EP_NIL;
}

static uint64_t
ep_clamp_rto(const struct shr_endpoint *ep, uint64_t rto)
{
	if (rto < ep->p.rto_min_ns)
		return ep->p.rto_min_ns;
	if (rto > ep->p.rto_max_ns)
		return ep->p.rto_max_ns;
	return rto;
}

static void
ep_rtt_sample(struct shr_endpoint *ep, uint64_t r)
{
	if (!ep->have_rtt) {
		ep->srtt_ns = r;
		ep->rttvar_ns = r / 2;
		ep->have_rtt = true;
	} else {
		uint64_t diff = ep->srtt_ns > r ? ep->srtt_ns - r : r - ep->srtt_ns;

		/* RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|; SRTT = 7/8 SRTT + 1/8 R */
		ep->rttvar_ns = (3 * ep->rttvar_ns + diff) / 4;
		ep->srtt_ns = (7 * ep->srtt_ns + r) / 8;
	}
	ep->rto_ns = ep_clamp_rto(ep, ep->srtt_ns + 4 * ep->rttvar_ns);
	ep->st.srtt_ns = ep->srtt_ns;
	ep->st.rto_ns = ep->rto_ns;
}

/* Sending. */

static int
ep_send_slot(struct shr_endpoint *ep, uint32_t i, bool retx)
{
	struct ep_slot *s = &ep->slots[i];
	struct ep_op *o = ep_op_of(ep, s->seq);
	struct shr_proto_msg m;
	const uint8_t *payload;
	size_t len;
	int rc;

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = ep->p.dtype;
	m.op = o->op.op;
	m.ver = s->ver;
	m.rank = ep->p.rank;
	m.world = ep->p.world;
	m.job = ep->p.job;
	m.slot = i;
	m.count = s->count;
	m.tensor = o->op.tensor;
	m.step = (uint32_t)s->seq;
	m.offset = s->offset;
	m.aux = 0;
	m.flags = 0;
	if (retx)
		m.flags |= SHR_FLAG_RETX;
	if (s->offset + s->count == o->op.count)
		m.flags |= SHR_FLAG_LAST;

	payload = (const uint8_t *)o->op.in + s->offset * ep->esize;
	len = (size_t)s->count * ep->esize;
	shr_proto_build(ep->hdr, &m, payload, len);
	rc = ep->io.send(ep->io.ctx, ep->hdr, payload, len);
	if (rc == -EAGAIN)
		return rc;
	if (rc < 0)
		ep->st.tx_errors++;	/* lost like a dropped packet: the timer recovers it */
	return 0;
}

/* Resend the chunks whose deadline has passed. Returns -EAGAIN if send pushed back. */
static int
ep_resend_expired(struct shr_endpoint *ep, uint64_t now)
{
	uint32_t budget = ep->in_flight;	/* each slot at most once per poll */

	while (ep->t_head != EP_NIL && budget-- > 0) {
		uint32_t i = ep->t_head;
		struct ep_slot *s = &ep->slots[i];
		uint64_t rto;

		if (s->deadline_ns > now)
			break;
		if (ep_send_slot(ep, i, true) == -EAGAIN)
			return -EAGAIN;
		rto = s->rto_ns * 2;
		if (rto > ep->p.rto_max_ns || rto < s->rto_ns)
			rto = ep->p.rto_max_ns;
		s->rto_ns = rto;
		s->resent = true;
		s->deadline_ns = now + rto;
		ep_timer_remove(ep, i);
		ep_timer_append(ep, i);
		ep->st.tx_retx++;
	}
	return 0;
}

/* Move send_seq past ops that have nothing left to send. */
static void
ep_skip_sent_ops(struct shr_endpoint *ep)
{
	while (ep->send_seq < ep->next_seq &&
	       ep->send_off >= ep_op_of(ep, ep->send_seq)->op.count) {
		ep->send_seq++;
		ep->send_off = 0;
	}
}

/* Send new chunks while the window allows. */
static void
ep_send_new(struct shr_endpoint *ep, uint64_t now)
{
	for (;;) {
		struct ep_op *o;
		struct ep_slot *s;
		uint64_t left;
		uint32_t i;

		ep_skip_sent_ops(ep);
		if (ep->send_seq >= ep->next_seq)
			return;
		i = (uint32_t)(ep->next_chunk % ep->p.window);
		s = &ep->slots[i];
		if (s->busy)
			return;	/* chunk k - W has no result yet */

		o = ep_op_of(ep, ep->send_seq);
		left = o->op.count - ep->send_off;
		s->seq = ep->send_seq;
		s->offset = ep->send_off;
		s->count = left < ep->p.chunk_elems ? (uint32_t)left : ep->p.chunk_elems;
		if (s->used)
			s->ver ^= 1;
		if (ep_send_slot(ep, i, false) == -EAGAIN) {
			if (s->used)
				s->ver ^= 1;	/* not sent: the slot keeps its version */
			return;
		}
		s->used = true;
		s->busy = true;
		s->resent = false;
		s->sent_ns = now;
		s->rto_ns = ep->rto_ns;
		s->deadline_ns = now + s->rto_ns;
		ep_timer_append(ep, i);
		if (ep->in_flight++ == 0)
			ep->progress_ns = now;
		ep->st.tx_data++;
		ep->send_off += s->count;
		ep->next_chunk++;
	}
}

/* Retire the ops at the head of the queue that are done. */
static void
ep_advance_head(struct shr_endpoint *ep)
{
	while (ep->head_seq < ep->next_seq && ep_op_of(ep, ep->head_seq)->done)
		ep->head_seq++;
}

/* Public API. */

struct shr_endpoint *
shr_endpoint_create(const struct shr_endpoint_params *params, const struct shr_endpoint_io *io)
{
	struct shr_endpoint *ep;
	struct shr_endpoint_params p;
	unsigned int esize;
	uint32_t i;

	if (params == NULL || io == NULL || io->send == NULL || io->now_ns == NULL)
		goto inval;
	p = *params;
	esize = shr_proto_dtype_size(p.dtype);
	if (esize == 0 || p.world == 0 || p.world > SHR_PROTO_MAX_WORLD || p.rank >= p.world)
		goto inval;
	if (p.window == 0 || p.window > SHR_ENDPOINT_MAX_WINDOW)
		goto inval;
	if (p.chunk_elems == 0 || p.chunk_elems > EP_MAX_CHUNK_BYTES / esize)
		goto inval;
	if (p.rto_min_ns == 0)
		p.rto_min_ns = EP_DEF_RTO_MIN_NS;
	if (p.rto_max_ns == 0)
		p.rto_max_ns = EP_DEF_RTO_MAX_NS;
	if (p.rto_init_ns == 0)
		p.rto_init_ns = EP_DEF_RTO_INIT_NS;
	if (p.fail_ns == 0)
		p.fail_ns = EP_DEF_FAIL_NS;
	if (p.rto_min_ns > p.rto_max_ns)
		goto inval;

	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		goto nomem;
	ep->slots = calloc(p.window, sizeof(*ep->slots));
	if (ep->slots == NULL)
		goto free_ep;

	ep->p = p;
	ep->io = *io;
	ep->esize = esize;
	ep->rto_ns = ep_clamp_rto(ep, p.rto_init_ns);
	ep->st.rto_ns = ep->rto_ns;
	ep->t_head = EP_NIL;
	ep->t_tail = EP_NIL;
	for (i = 0; i < p.window; i++) {
		ep->slots[i].prev = EP_NIL;
		ep->slots[i].next = EP_NIL;
	}
	return ep;

free_ep:
	free(ep);
nomem:
	errno = ENOMEM;
	return NULL;
inval:
	errno = EINVAL;
	return NULL;
}

void
shr_endpoint_free(struct shr_endpoint *ep)
{
	if (ep == NULL)
		return;
	free(ep->slots);
	free(ep);
}

int
shr_endpoint_submit(struct shr_endpoint *ep, const struct shr_endpoint_op *op)
{
	struct ep_op *o;
	uint64_t seq;

	if (ep == NULL || op == NULL)
		return -EINVAL;
	if (!ep_op_supported(ep->p.dtype, op->op))
		return -EINVAL;
	if (op->count > 0) {
		uintptr_t in = (uintptr_t)op->in, out = (uintptr_t)op->out;
		uintptr_t bytes;

		if (op->in == NULL || op->out == NULL || op->count > SIZE_MAX / ep->esize)
			return -EINVAL;
		bytes = (uintptr_t)(op->count * ep->esize);
		if (in + bytes < in || out + bytes < out)
			return -EINVAL;
		/* in place is fine; a partial overlap would send results as input */
		if (in != out && in < out + bytes && out < in + bytes)
			return -EINVAL;
	}
	if (ep->err != 0)
		return -EPIPE;
	if (ep->next_seq - ep->head_seq >= SHR_ENDPOINT_MAX_OPS)
		return -EBUSY;

	seq = ep->next_seq++;
	o = ep_op_of(ep, seq);
	o->op = *op;
	o->nchunks = (op->count + ep->p.chunk_elems - 1) / ep->p.chunk_elems;
	o->done_chunks = 0;
	o->done = op->count == 0;
	if (o->done)
		ep->st.ops_done++;
	ep_advance_head(ep);
	return (int)(seq & INT_MAX);
}

/* The full sequence number of a handle, or UINT64_MAX if it names no op. */
static uint64_t
ep_handle_seq(const struct shr_endpoint *ep, int handle)
{
	uint64_t last, seq;

	if (handle < 0 || ep->next_seq == 0)
		return UINT64_MAX;
	last = ep->next_seq - 1;
	seq = last - ((uint64_t)((last & INT_MAX) - (uint64_t)handle) & INT_MAX);
	if (seq > last)
		return UINT64_MAX;	/* wrapped below 0: never submitted */
	if (ep->next_seq - seq > SHR_ENDPOINT_MAX_OPS)
		return UINT64_MAX;
	return seq;
}

int
shr_endpoint_test(struct shr_endpoint *ep, int handle)
{
	uint64_t seq;

	if (ep == NULL)
		return -EINVAL;
	seq = ep_handle_seq(ep, handle);
	if (seq == UINT64_MAX)
		return -ENOENT;
	if (seq < ep->head_seq || ep_op_of(ep, seq)->done)
		return 1;
	if (ep->err != 0)
		return ep->err;
	return 0;
}

int
shr_endpoint_idle(const struct shr_endpoint *ep)
{
	return ep->head_seq == ep->next_seq;
}

int
shr_endpoint_input(struct shr_endpoint *ep, const void *msg, size_t len)
{
	struct shr_proto_msg m;
	struct ep_slot *s;
	struct ep_op *o;
	uint64_t now;

	if (shr_proto_validate(msg, len, &m) != SHR_PROTO_OK || m.job != ep->p.job) {
		ep->st.rx_bad++;
		return -EINVAL;
	}
	if (m.type == SHR_MSG_ABORT) {
		ep_fail(ep, -ECONNABORTED, m.aux, m.rank);
		return -ECONNABORTED;
	}
	if (ep->err != 0)
		return ep->err;
	if (m.type != SHR_MSG_RESULT || m.slot >= ep->p.window || m.dtype != ep->p.dtype) {
		ep->st.rx_bad++;
		return -EINVAL;
	}
	s = &ep->slots[m.slot];
	if (!s->busy || s->ver != m.ver || s->count != m.count || s->offset != m.offset ||
	    (uint32_t)s->seq != m.step) {
		ep->st.rx_dup++;
		return -EALREADY;
	}
	o = ep_op_of(ep, s->seq);
	if (o->op.tensor != m.tensor) {
		ep->st.rx_dup++;
		return -EALREADY;
	}
	if (o->op.op != m.op) {
		ep->st.rx_bad++;
		return -EINVAL;
	}

	memcpy((uint8_t *)o->op.out + s->offset * ep->esize,
	       (const uint8_t *)msg + SHR_PROTO_HDR_LEN, (size_t)m.count * ep->esize);
	now = ep->io.now_ns(ep->io.ctx);
	if (!s->resent && now >= s->sent_ns)
		ep_rtt_sample(ep, now - s->sent_ns);
	s->busy = false;
	ep_timer_remove(ep, m.slot);
	ep->in_flight--;
	ep->progress_ns = now;
	ep->st.rx_results++;

	if (++o->done_chunks == o->nchunks) {
		o->done = true;
		ep->st.ops_done++;
		ep_advance_head(ep);
	}
	return 0;
}

int
shr_endpoint_poll(struct shr_endpoint *ep)
{
	uint64_t now;

	if (ep->err != 0)
		return ep->err;
	now = ep->io.now_ns(ep->io.ctx);
	if (ep->in_flight > 0 && now - ep->progress_ns >= ep->p.fail_ns) {
		ep_fail(ep, -ETIMEDOUT, ETIMEDOUT, SHR_PROTO_RANK_ALL);
		return ep->err;
	}
	if (ep_resend_expired(ep, now) == -EAGAIN)
		return 0;
	ep_send_new(ep, now);
	return 0;
}

void
shr_endpoint_stats_get(const struct shr_endpoint *ep, struct shr_endpoint_stats *stats)
{
	*stats = ep->st;
}

uint64_t
shr_endpoint_next_deadline(const struct shr_endpoint *ep)
{
	uint64_t d = UINT64_MAX;

	if (ep->err != 0)
		return UINT64_MAX;
	/* A new chunk the window allows (or one that send() pushed back): now. */
	if (ep->send_seq < ep->next_seq) {
		const struct ep_op *o = &ep->ops[ep->send_seq % SHR_ENDPOINT_MAX_OPS];
		uint64_t seq = ep->send_seq;
		uint64_t off = ep->send_off;

		while (off >= o->op.count && ++seq < ep->next_seq) {
			o = &ep->ops[seq % SHR_ENDPOINT_MAX_OPS];
			off = 0;
		}
		if (seq < ep->next_seq && !ep->slots[ep->next_chunk % ep->p.window].busy)
			return 0;
	}
	if (ep->t_head != EP_NIL)
		d = ep->slots[ep->t_head].deadline_ns;
	if (ep->in_flight > 0 && ep->progress_ns + ep->p.fail_ns < d)
		d = ep->progress_ns + ep->p.fail_ns;
	return d;
}

int
shr_endpoint_error(const struct shr_endpoint *ep, uint32_t *reason, uint16_t *rank)
{
	if (ep->err != 0) {
		if (reason != NULL)
			*reason = ep->err_reason;
		if (rank != NULL)
			*rank = ep->err_rank;
	}
	return ep->err;
}
