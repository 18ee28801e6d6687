/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The host endpoint's state machine.
 *
 * State:
 * - a ring of SHR_ENDPOINT_MAX_OPS operations, indexed by submission sequence number (seq);
 *   [head_seq, next_seq) are pending, send_seq/send_off is the next chunk to send;
 * - W slots; slot i carries chunks i, i + W, i + 2W... of the stream (a chunk's stream
 *   index is its idx). A busy slot has an outstanding chunk and sits on the timer list, a
 *   doubly-linked list through the slot array in (re)transmission order (a chunk a hint
 *   held moves to its end: its timer starts again), so arming, cancelling and finding the
 *   oldest transmission are O(1). A slot may also hold deferred
 *   chunks, the next of its chunks, planned when the stream reached them while the slot was
 *   busy (a FIFO per slot, its entries from a pool of W); once the slot frees it joins the
 *   ready list (another doubly-linked list through the slots), whose slots send their oldest
 *   deferred chunk before the stream's next ones;
 * - loss detection by transmission order: una is the oldest outstanding chunk, rx_high one
 *   past the newest transmission answered (tx_seq); the fast-resend rule looks at the
 *   oldest transmissions on the timer list behind rx_high - R and resends the ones that
 *   were a chunk's only transmission (ep_fast_next(): it passes only resent and held
 *   chunks); a hint that names this rank resends its chunk at once (ep_resend_named());
 * - one retransmission timer: the oldest transmission on the list expires RTO after it was
 *   sent, with RTO = base << backoff (global backoff); a timeout resends a few of the
 *   oldest and starts a recovery: chunks last sent before it (tx_seq < rec_seq) are
 *   suspects, resent oldest first as credits allow; the answers to timed-out chunks earn
 *   the credits.
 * The pointer rec_next is kept normalised at the end of input() and poll() (it rests on a
 * chunk due for a resend, or past the range), so next_deadline() can tell in O(1) whether
 * the recovery has a resend due.
 */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <shr_proto.h>

#include "shr_endpoint.h"
#include "shr_endpoint_plan.h"
#include "shr_endpoint_private.h"

static void
ep_fail(struct shr_endpoint *ep, int err, uint32_t reason, uint16_t rank)
{
	if (ep->err != 0)
		return;
	ep->err = err;
	ep->err_reason = reason;
	ep->err_rank = rank;
}

/* Sending. */

static int
ep_send_slot(struct shr_endpoint *ep, uint32_t i, bool retx)
{
	struct ep_slot *s = &ep->slots[i];
	struct ep_op *o = ep_op_of(ep, s->seq);
	struct shr_proto_msg m;
	const uint8_t *payload = NULL;
	size_t len = 0;
	int rc;

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = ep->p.dtype;
	m.op = ep_plan_wire_op(&o->op);
	m.ver = s->ver;
	m.rank = ep->p.rank;
	m.world = ep->p.world;
	m.job = ep->p.job;
	m.slot = i;
	m.count = s->count;
	m.tensor = o->op.tensor;
	m.step = o->op.step;
	m.offset = o->base + s->offset;	/* its place in the whole stream */
	m.aux = s->aux;
	m.kind = o->op.kind;
	m.root = s->root;
	m.token = ep->p.token;
	m.flags = 0;
	if (retx)
		m.flags |= SHR_FLAG_RETX;
	if (s->last)
		m.flags |= SHR_FLAG_LAST;
	if (s->in_off != EP_PLAN_NONE) {
		payload = (const uint8_t *)o->op.in + s->in_off * ep->esize;
		len = (size_t)s->count * ep->esize;
	} else {
		m.flags |= SHR_FLAG_NOPAYLOAD;	/* a relay round this rank is not the source of */
	}
	shr_proto_build(ep->hdr, &m, payload, len);
	rc = ep->io.send(ep->io.ctx, ep->hdr, payload, len);
	if (rc == -EAGAIN)
		return rc;
	if (rc < 0)
		ep->st.tx_errors++;	/* lost like a dropped packet: the timer recovers it */
	return 0;
}

/* Resend the outstanding chunk of slot i; it goes to the tail of the timer list. */
int
ep_resend(struct shr_endpoint *ep, uint32_t i, enum ep_tx how, uint64_t now)
{
	struct ep_slot *s = &ep->slots[i];
	bool was;

	if (ep_send_slot(ep, i, true) == -EAGAIN)
		return -EAGAIN;
	ep_hint_clear(ep, s);
	was = ep_excused(s);
	s->resent = true;
	ep_excused_note(ep, s, was);
	s->how = (uint8_t)how;

	s->tx_ns = now;
	s->timer_ns = now;
	s->tx_seq = ep->tx_seq++;
	if (s->ntx < UINT16_MAX)
		s->ntx++;
	ep_timer_remove(ep, i);
	ep_timer_append(ep, i);
	ep->st.tx_retx++;
	if (how == EP_TX_FAST)
		ep->st.tx_fast++;
	else
		ep->st.tx_rto++;
	return 0;
}

/*
 * Move send_seq past ops that have nothing left to send. An op retired at the head (done:
 * empty, or every chunk answered) has nothing to send either, and its ring entry may
 * already hold a newer op: the cursor never stays behind head_seq.
 */
static void
ep_skip_sent_ops(struct shr_endpoint *ep)
{
	if (ep->send_seq < ep->head_seq) {
		ep->send_seq = ep->head_seq;
		ep->send_off = ep_op_of(ep, ep->send_seq)->first;
	}
	while (ep->send_seq < ep->next_seq &&
	       ep->send_off >= ep_op_of(ep, ep->send_seq)->space) {
		ep->send_seq++;
		ep->send_off = ep_op_of(ep, ep->send_seq)->first;
	}
}

/* Plan the chunk at send_seq/send_off (there is one) as chunk next_chunk of the stream. */
static void
ep_plan_chunk(struct shr_endpoint *ep, struct ep_chunk *c)
{
	struct ep_op *o = ep_op_of(ep, ep->send_seq);
	struct ep_round r;
	uint64_t left;

	ep_plan_round(&o->op, ep->cworld, ep->crank, ep->send_off, &r);
	left = r.end - ep->send_off;
	c->seq = ep->send_seq;
	c->offset = ep->send_off;
	c->idx = ep->next_chunk;
	c->count = left < ep->p.chunk_elems ? (uint32_t)left : ep->p.chunk_elems;
	c->root = r.root;
	c->aux = r.aux;
	if (o->op.aux != NULL && ep->p.dtype == SHR_DTYPE_QINT32 &&
	    !shr_proto_kind_relay(o->op.kind))
		c->aux = o->op.aux[ep_plan_chunk_index(&o->op, ep->send_off, ep->p.chunk_elems)];
	c->in_off = r.in_off;
	c->out_off = r.out_off;
	c->last = ep_plan_norm(&o->op, ep->cworld, c->offset + c->count) >= o->space;
	ep->send_off = ep_plan_norm(&o->op, ep->cworld, ep->send_off + c->count);
	ep->next_chunk++;
}

/* Send chunk c on free slot i. Returns 0, or -EAGAIN if send pushed back. */
static int
ep_send_chunk(struct shr_endpoint *ep, uint32_t i, const struct ep_chunk *c, uint64_t now)
{
	struct ep_slot *s = &ep->slots[i];

	if (ep->in_flight == 0)
		ep_cc_restart(ep, now);	/* after an idle period */
	s->seq = c->seq;
	s->offset = c->offset;
	s->count = c->count;
	s->root = c->root;
	s->aux = c->aux;
	s->in_off = c->in_off;
	s->out_off = c->out_off;
	s->last = c->last;
	if (s->used)
		s->ver ^= 1;
	if (ep_send_slot(ep, i, false) == -EAGAIN) {
		if (s->used)
			s->ver ^= 1;	/* not sent: the slot keeps its version */
		return -EAGAIN;
	}
	s->used = true;
	s->busy = true;
	s->ooo = c->idx + 1 < ep->tx_idx_end;
	if (c->idx + 1 > ep->tx_idx_end)
		ep->tx_idx_end = c->idx + 1;
	s->resent = false;
	s->how = EP_TX_NEW;
	s->idx = c->idx;
	s->tx_ns = now;
	s->timer_ns = now;
	s->tx0_ns = now;
	s->ntx = 1;
	s->tx_seq = ep->tx_seq++;
	ep_timer_append(ep, i);
	if (ep->in_flight++ == 0)
		ep->progress_ns = now;
	ep->st.tx_data++;
	return 0;
}

/* The stream index of slot i's oldest deferred chunk. */
static inline uint64_t
ep_ready_idx(const struct shr_endpoint *ep, uint32_t i)
{
	return ep->dpool[ep->slots[i].dq_head].idx;
}

/*
 * Slot i (free, with a deferred chunk) joins the ready list, which is in stream order of the
 * chunks to send (results mostly come in that order: the walk from the tail is short), so
 * that no chunk goes before an older one whose slot is free.
 */
static void
ep_ready_push(struct shr_endpoint *ep, uint32_t i)
{
	struct ep_slot *s = &ep->slots[i];
	uint64_t k = ep_ready_idx(ep, i);
	uint32_t p = ep->ready_tail;

	while (p != EP_NIL && ep_ready_idx(ep, p) > k)
		p = ep->slots[p].ready_prev;
	s->ready_prev = p;
	s->ready_next = p != EP_NIL ? ep->slots[p].ready_next : ep->ready_head;
	if (s->ready_next != EP_NIL)
		ep->slots[s->ready_next].ready_prev = i;
	else
		ep->ready_tail = i;
	if (p != EP_NIL)
		ep->slots[p].ready_next = i;
	else
		ep->ready_head = i;
}

/* Slot i leaves the ready list. */
static void
ep_ready_remove(struct shr_endpoint *ep, uint32_t i)
{
	const struct ep_slot *s = &ep->slots[i];

	if (s->ready_prev != EP_NIL)
		ep->slots[s->ready_prev].ready_next = s->ready_next;
	else
		ep->ready_head = s->ready_next;
	if (s->ready_next != EP_NIL)
		ep->slots[s->ready_next].ready_prev = s->ready_prev;
	else
		ep->ready_tail = s->ready_prev;
}

/*
 * Send slot i's oldest deferred chunk (the slot is on the ready list), whatever the congestion
 * window says now (see ep_cwnd_full()). Were it held back by the window, a rank's window
 * could fill with rounds that wait for a peer whose window is full of rounds that wait for
 * this rank's deferred chunks. Returns 0, or -EAGAIN if send pushed back.
 */
static int
ep_ready_send(struct shr_endpoint *ep, uint32_t i, uint64_t now)
{
	struct ep_slot *s = &ep->slots[i];
	uint32_t e = s->dq_head;
	int rc = ep_send_chunk(ep, i, &ep->dpool[e], now);

	if (rc != 0)
		return rc;
	s->dq_head = ep->dpool[e].next;
	if (s->dq_head == EP_NIL)
		s->dq_tail = EP_NIL;
	ep->dpool[e].next = ep->dfree;
	ep->dfree = e;
	ep_ready_remove(ep, i);
	return 0;
}

/*
 * Plan the stream's next chunk as a deferred chunk of slot i (busy, or with deferred chunks
 * already). Returns false if the pool is empty: W chunks are deferred already.
 */
static bool
ep_defer(struct shr_endpoint *ep, uint32_t i)
{
	struct ep_slot *s = &ep->slots[i];
	uint32_t e = ep->dfree;

	if (e == EP_NIL)
		return false;
	ep->dfree = ep->dpool[e].next;
	ep_plan_chunk(ep, &ep->dpool[e]);
	ep->dpool[e].next = EP_NIL;
	if (s->dq_tail != EP_NIL)
		ep->dpool[s->dq_tail].next = e;
	else
		s->dq_head = e;
	s->dq_tail = e;
	return true;
}

/*
 * Send new chunks while the window allows: first the deferred chunks whose slots have freed
 * (in stream order), then the stream's next ones. A chunk whose slot still waits for the
 * result of chunk k - W is deferred (planned, queued on its slot) and the stream goes on:
 * each slot's rounds follow each other as results come in, so a round late at one slot (a
 * loss, here or at a peer) holds up that slot, not the window, for up to W deferred chunks.
 */
static void
ep_send_new(struct shr_endpoint *ep, uint64_t now)
{
	while (ep->ready_head != EP_NIL)
		if (ep_ready_send(ep, ep->ready_head, now) == -EAGAIN)
			return;
	for (;;) {
		struct ep_chunk c;
		struct ep_slot *s;
		uint64_t off, k;
		uint32_t i;

		ep_skip_sent_ops(ep);
		if (ep->send_seq >= ep->next_seq)
			return;
		i = (uint32_t)(ep->next_chunk % ep->p.window);
		s = &ep->slots[i];
		if (ep_cwnd_full(ep))
			return;
		if (s->busy || s->dq_head != EP_NIL) {
			if (!ep_defer(ep, i))
				return;
			continue;
		}
		off = ep->send_off;
		k = ep->next_chunk;
		ep_plan_chunk(ep, &c);
		if (ep_send_chunk(ep, i, &c, now) != 0) {
			ep->send_off = off;	/* pushed back: planned again next time */
			ep->next_chunk = k;
			return;
		}
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

/* n rounded up to a multiple of SHR_ENDPOINT_SPARE_ALIGN */
static uint64_t
ep_spare_align(uint64_t n)
{
	return (n + SHR_ENDPOINT_SPARE_ALIGN - 1) / SHR_ENDPOINT_SPARE_ALIGN *
	       SHR_ENDPOINT_SPARE_ALIGN;
}

uint32_t
shr_endpoint_slots(uint32_t inflight)
{
	uint64_t slots = inflight == 0 ? 0 : (uint64_t)inflight + ep_spare_align(inflight);

	if (slots > SHR_ENDPOINT_MAX_WINDOW)
		slots = inflight > SHR_ENDPOINT_MAX_WINDOW ? inflight : SHR_ENDPOINT_MAX_WINDOW;
	return (uint32_t)slots;
}

struct shr_endpoint *
shr_endpoint_create(const struct shr_endpoint_params *params, const struct shr_endpoint_io *io)
{
	struct shr_endpoint *ep;
	struct shr_endpoint_params p;
	unsigned int esize;
	uint64_t late;
	uint32_t i;

	if (params == NULL || io == NULL || io->send == NULL || io->now_ns == NULL)
		goto inval;
	p = *params;
	esize = shr_proto_dtype_size(p.dtype);
	if (esize == 0 || p.world == 0 || p.world > SHR_PROTO_MAX_WORLD || p.rank >= p.world)
		goto inval;
	if (p.tree_world > SHR_PROTO_MAX_WORLD ||
	    (p.tree_world != 0 && p.tree_rank >= p.tree_world))
		goto inval;
	if (p.window == 0 || p.window > SHR_ENDPOINT_MAX_WINDOW || p.inflight > p.window)
		goto inval;
	if (p.inflight == 0)
		p.inflight = p.window;
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
	if (p.fail_ns > SHR_ENDPOINT_MAX_FAIL_NS)
		p.fail_ns = SHR_ENDPOINT_MAX_FAIL_NS;
	if (p.rto_burst == 0)
		p.rto_burst = EP_DEF_RTO_BURST;
	if (p.reorder == 0)
		p.reorder = EP_DEF_REORDER;
	if (p.lanes == 0)
		p.lanes = 1;
	if (p.rto_min_ns > p.rto_max_ns || p.rto_max_ns > SHR_ENDPOINT_MAX_RTO_NS)
		goto inval;
	if (p.cc_target_ns == 0)
		p.cc_target_ns = EP_DEF_CC_TARGET_NS;
	if (p.cwnd_init == 0)
		p.cwnd_init = EP_DEF_CWND_INIT;
	if (p.cwnd_init > p.inflight)
		p.cwnd_init = p.inflight;

	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		goto nomem;
	ep->slots = calloc(p.window, sizeof(*ep->slots));
	if (ep->slots == NULL)
		goto free_ep;
	ep->dpool = calloc(p.window, sizeof(*ep->dpool));
	if (ep->dpool == NULL)
		goto free_slots;

	ep->p = p;
	ep->crank = p.tree_world != 0 ? p.tree_rank : p.rank;
	ep->cworld = p.tree_world != 0 ? p.tree_world : p.world;
	ep->io = *io;
	ep->esize = esize;
	ep->rto_ns = ep_clamp_rto(ep, p.rto_init_ns);
	ep_cc_init(ep);
	ep->min_cur = UINT64_MAX;
	ep->min_prev = UINT64_MAX;
	ep->reorder = p.reorder;
	ep->reo_steps = 1;
	ep->reorder_max = p.inflight / 2 > p.reorder ? p.inflight / 2 : p.reorder;
	late = p.inflight / SHR_ENDPOINT_LATE_DIV;
	late = ep_spare_align(late == 0 ? 1 : late);
	ep->late_max = (uint32_t)(late < p.window - p.inflight ? late : p.window - p.inflight);
	ep->t_head = EP_NIL;
	ep->t_tail = EP_NIL;
	ep->ready_head = EP_NIL;
	ep->ready_tail = EP_NIL;
	for (i = 0; i < p.window; i++) {
		ep->slots[i].prev = EP_NIL;
		ep->slots[i].next = EP_NIL;
		ep->slots[i].dq_head = EP_NIL;
		ep->slots[i].dq_tail = EP_NIL;
		ep->dpool[i].next = i + 1 < p.window ? i + 1 : EP_NIL;
	}
	ep->dfree = 0;
	return ep;

free_slots:
	free(ep->slots);
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
	free(ep->dpool);
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
	if (ep_plan_check(op, ep->p.dtype, ep->cworld, ep->crank) != 0)
		return -EINVAL;
	/*
	 * (step, stream offset) increases on every slot: the box orders rounds by it,
	 * comparing steps modulo 2^32, so they span less than 2^31.
	 */
	if (op->step < ep->last_step ||
	    (ep->next_seq > 0 && op->step - ep->first_step > INT32_MAX) ||
	    ep_plan_space(op, ep->cworld) > UINT64_MAX - ep->stream_pos)
		return -EINVAL;
	if (ep->err != 0)
		return -EPIPE;
	if (shr_endpoint_room(ep) == 0)
		return -EBUSY;

	if (ep->next_seq == 0)
		ep->first_step = op->step;
	seq = ep->next_seq++;
	o = ep_op_of(ep, seq);
	o->op = *op;
	o->base = ep->stream_pos;
	o->space = ep_plan_space(op, ep->cworld);
	ep->stream_pos += o->space;
	ep->last_step = op->step;
	o->first = ep_plan_norm(op, ep->cworld, 0);
	o->nchunks = ep_plan_nchunks(op, ep->cworld, ep->p.chunk_elems);
	o->done_chunks = 0;
	o->done = o->nchunks == 0;
	if (ep->send_seq == seq)
		ep->send_off = o->first;	/* the cursor waited past the last op */
	ep_plan_local(op, ep->cworld, ep->crank, ep->esize);
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

unsigned int
shr_endpoint_room(const struct shr_endpoint *ep)
{
	return SHR_ENDPOINT_MAX_OPS - (unsigned int)(ep->next_seq - ep->head_seq);
}

int
shr_endpoint_input(struct shr_endpoint *ep, const void *msg, size_t len)
{
	return shr_endpoint_input_at(ep, msg, len, 0);
}

int
shr_endpoint_input_at(struct shr_endpoint *ep, const void *msg, size_t len, uint64_t rx_ns)
{
	struct shr_proto_msg m;
	struct ep_slot *s;
	struct ep_op *o;
	uint64_t now, host, *high;
	bool was;

	if (shr_proto_validate(msg, len, &m) != SHR_PROTO_OK || m.job != ep->p.job ||
	    m.token != ep->p.token) {
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
	o = ep_op_of(ep, s->seq);
	/* The stream offset alone names the chunk; the rest of its identity must match too. */
	if (!s->busy || s->ver != m.ver || s->count != m.count ||
	    o->base + s->offset != m.offset || o->op.step != m.step || o->op.tensor != m.tensor) {
		ep->st.rx_dup++;
		/* a late copy's answer, of a chunk resent and answered */
		if (s->a_open && s->a_ver == m.ver && s->a_off == m.offset)
			ep_dup_answered(ep, s, ep->io.now_ns(ep->io.ctx));
		return -EALREADY;
	}
	if (ep_plan_wire_op(&o->op) != m.op || o->op.kind != m.kind || s->root != m.root ||
	    s->aux != m.aux) {
		ep->st.rx_bad++;
		return -EINVAL;
	}
	if (m.flags & SHR_FLAG_NOPAYLOAD) {
		/* The round is over, its payload for other ranks: refused if this one needs it. */
		if (s->out_off != EP_PLAN_NONE) {
			ep->st.rx_bad++;
			return -EINVAL;
		}
	} else if (s->out_off != EP_PLAN_NONE) {
		memcpy((uint8_t *)o->op.out + s->out_off * ep->esize,
		       (const uint8_t *)msg + SHR_PROTO_HDR_LEN, (size_t)m.count * ep->esize);
	}
	now = ep->io.now_ns(ep->io.ctx);
	host = 0;	/* how long it waited in this host (0: not known) */
	if (rx_ns != 0 && rx_ns <= now) {
		host = now - rx_ns;
		ep->host_ns = (7 * ep->host_ns + host) / 8;
	}
	ep_answered(ep, s, m.feedback, now, host);
	ep_answer_note(s, m.offset, m.feedback, now);
	ep_hint_clear(ep, s);
	if (m.rank != SHR_PROTO_RANK_ALL)
		ep_hint(ep, m.slot, m.rank, s->tx_seq, now);
	was = ep_excused(s);
	s->busy = false;
	ep_excused_note(ep, s, was);
	ep_timer_remove(ep, m.slot);
	ep->in_flight--;
	if (s->dq_head != EP_NIL)
		ep_ready_push(ep, m.slot);	/* its oldest deferred chunk may go now */
	ep->progress_ns = now;
	ep->st.rx_results++;
	/*
	 * (not from a resent chunk: which copy the answer is for is not known; a deferred
	 * chunk's moves ooo_high, which passes only older chunks of the stream: ep_fast_from())
	 */
	high = s->ooo ? &ep->ooo_high : &ep->rx_high;
	if (!s->resent && s->tx_seq >= *high) {
		*high = s->tx_seq + 1;
		if (s->ooo)
			ep->ooo_idx = s->idx;
		ep->rx_rtt = now >= s->tx_ns ? now - s->tx_ns : 0;
	}
	while (ep->una < ep->next_chunk) {
		const struct ep_slot *u = &ep->slots[ep->una % ep->p.window];

		if ((u->busy && u->idx == ep->una) || ep_deferred_is(ep, u, ep->una))
			break;
		ep->una++;
	}
	(void)ep_rec_due(ep);

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
	if (ep_resend_due(ep, now) == -EAGAIN)
		return 0;
	ep_send_new(ep, now);
	return 0;
}

uint64_t
shr_endpoint_stream_pos(const struct shr_endpoint *ep)
{
	return ep->stream_pos;
}

void
shr_endpoint_stats_get(const struct shr_endpoint *ep, struct shr_endpoint_stats *stats)
{
	*stats = ep->st;
	stats->srtt_ns = ep->srtt_ns;
	stats->rto_ns = ep->rto_ns;
	stats->backoff = ep->backoff;
	stats->reorder = ep->reorder;
	stats->min_rtt_ns = ep_min_rtt(ep);
	stats->cwnd = ep_cwnd(ep);
	stats->cc_slow_start = ep->ss;
	stats->cc_competitive = ep->comp;
	stats->qdelay_ns = ep->qdelay_ns;
	stats->box_wait_ns = ep->wait_ns;
	stats->host_delay_ns = ep->host_ns;
}

uint64_t
shr_endpoint_next_deadline(const struct shr_endpoint *ep)
{
	uint64_t d = UINT64_MAX, f;
	uint32_t fast;

	if (ep->err != 0)
		return UINT64_MAX;
	/* A deferred or new chunk the window allows (or one that send() pushed back): now. */
	if (ep->ready_head != EP_NIL)
		return 0;
	if (ep->send_seq < ep->next_seq) {
		uint64_t seq = ep->send_seq < ep->head_seq ? ep->head_seq : ep->send_seq;
		const struct ep_op *o = &ep->ops[seq % SHR_ENDPOINT_MAX_OPS];
		uint64_t off = ep->send_seq < ep->head_seq ? o->first : ep->send_off;
		const struct ep_slot *s = &ep->slots[ep->next_chunk % ep->p.window];

		while (off >= o->space && ++seq < ep->next_seq) {
			o = &ep->ops[seq % SHR_ENDPOINT_MAX_OPS];
			off = o->first;
		}
		/* (or a chunk to defer, when its slot is busy: the stream goes on after it) */
		if (seq < ep->next_seq && !ep_cwnd_full(ep) &&
		    ((!s->busy && s->dq_head == EP_NIL) || ep->dfree != EP_NIL))
			return 0;
	}
	/* A resend due now (rec_next is normalised), or one a hint asked for. */
	if ((ep->rec && ep->credits > 0 && ep->rec_next < ep->rec_end) || ep->named_n != 0)
		return 0;
	if (ep->t_head != EP_NIL)
		d = ep_deadline(ep, &ep->slots[ep->t_head]);
	fast = ep_fast_next(ep);
	if (fast != EP_NIL && (f = ep_fast_time(ep, &ep->slots[fast])) < d)
		d = f;
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
