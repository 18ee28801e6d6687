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
 *   doubly-linked list through the slot array in (re)transmission order, so arming,
 *   cancelling and finding the oldest transmission are O(1);
 * - loss detection by stream order: una is the oldest outstanding chunk, rx_high one past
 *   the newest chunk answered; fr_next walks up the stream behind rx_high - R and resends
 *   each outstanding chunk it passes that was never resent (each chunk is looked at once);
 * - one retransmission timer: the oldest transmission on the list expires RTO after it was
 *   sent, with RTO = base << backoff (global backoff); a timeout resends a few of the
 *   oldest and starts a recovery: chunks last sent before it (tx_seq < rec_seq) are
 *   suspects, resent oldest first as credits allow; the answers to timed-out chunks earn
 *   the credits.
 * The pointers fr_next and rec_next are kept normalised at the end of input() and poll()
 * (they rest on a chunk due for a resend, or past the range), so next_deadline() can tell
 * in O(1) whether a resend is due.
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
#define EP_DEF_RTO_BURST 2
#define EP_DEF_REORDER 3
#define EP_REC_CREDIT 2		/* resends earned by each answer to a timed-out chunk */
#define EP_MINRTT_WIN 512	/* RTT samples per half of the windowed minimum */
#define EP_MAX_BACKOFF 30
#define EP_RTO_MINRTT_MULT 8	/* RTO cap, in minimum round trips */
#define EP_REO_STEPS_MAX 8	/* reorder window up to 2 minimum round trips */

enum ep_tx {
	EP_TX_NEW,		/* first transmission */
	EP_TX_FAST,		/* resent: later chunks were answered */
	EP_TX_RTO,		/* resent: the timer expired */
	EP_TX_REC,		/* resent: recovery after a timeout */
};

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
	uint8_t how;		/* enum ep_tx of its last transmission */
	uint32_t count;		/* elements of the outstanding chunk */
	uint64_t offset;	/* its element offset in its op */
	uint64_t seq;		/* its op */
	uint64_t idx;		/* its stream index */
	uint64_t tx_ns;		/* its last transmission */
	uint64_t tx_seq;	/* that transmission's number */
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

	/* RTT estimation (Jacobson/Karels) and the timer */
	bool have_rtt;
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	uint64_t rto_ns;	/* base RTO */
	uint32_t backoff;	/* RTO in use: rto_ns << backoff, at most rto_max */
	uint64_t to_ns;		/* last timeout */
	uint64_t min_cur;	/* windowed minimum RTT: this half... */
	uint64_t min_prev;	/* ...and the previous one */
	uint32_t min_n;		/* samples in this half */

	/* loss detection by stream order */
	uint64_t tx_seq;	/* transmissions so far (the next one's number) */
	uint64_t una;		/* oldest chunk without its result */
	uint64_t rx_high;	/* newest chunk answered, plus one (0: none) */
	uint64_t rx_rtt;	/* how long its answer took after its last transmission */
	uint64_t fr_next;	/* next chunk the fast-resend rule looks at */
	uint32_t reorder;	/* R */
	uint32_t reorder_max;
	uint32_t reo_steps;	/* reorder window: quarters of the minimum round trip */

	/* recovery after a timeout */
	bool rec;
	uint64_t rec_seq;	/* suspects: last sent before this transmission... */
	uint64_t rec_end;	/* ...with a stream index below this */
	uint64_t rec_next;	/* next chunk recovery looks at */
	uint32_t credits;	/* resends recovery may do now */

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

/* The base RTO doubled n times, at most rto_max. */
static uint64_t
ep_rto_shift(const struct shr_endpoint *ep, uint32_t n)
{
	uint64_t r = ep->rto_ns;
	uint32_t b;

	for (b = 0; b < n && r < ep->p.rto_max_ns; b++)
		r *= 2;
	return r < ep->p.rto_max_ns ? r : ep->p.rto_max_ns;
}

/* The RTO in use: the base with the global backoff. */
static inline uint64_t
ep_rto_cur(const struct shr_endpoint *ep)
{
	return ep_rto_shift(ep, ep->backoff);
}

/*
 * When the timer fires, for the oldest transmission s: RTO in use after it, and no sooner
 * than RTO after the last timeout (the timer restarts when it fires, as TCP's does).
 */
static inline uint64_t
ep_deadline(const struct shr_endpoint *ep, const struct ep_slot *s)
{
	uint64_t rto = ep_rto_cur(ep), d = s->tx_ns + rto;

	if (ep->st.timeouts > 0 && ep->to_ns + rto > d)
		d = ep->to_ns + rto;
	return d;
}

static uint64_t
ep_min_rtt(const struct shr_endpoint *ep)
{
	uint64_t m = ep->min_cur < ep->min_prev ? ep->min_cur : ep->min_prev;

	return m == UINT64_MAX ? 0 : m;
}

static void
ep_rtt_sample(struct shr_endpoint *ep, uint64_t r)
{
	uint64_t var, rto, min;

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
	var = 4 * ep->rttvar_ns;
	if (var < ep->srtt_ns / 2)
		var = ep->srtt_ns / 2;	/* the variation term does not collapse */
	/*
	 * A chunk is also late when another rank lost its copy and resent it on its own
	 * timer: such samples would feed the RTO into itself. The path is no slower than
	 * its minimum round trip, and a timeout too early costs little (rto_burst resends,
	 * then backoff): cap the RTO at EP_RTO_MINRTT_MULT minimum round trips.
	 */
	min = ep_min_rtt(ep);
	if (r < min || min == 0)
		min = r;
	rto = ep->srtt_ns + var;
	if (rto > EP_RTO_MINRTT_MULT * min)
		rto = EP_RTO_MINRTT_MULT * min;
	ep->rto_ns = ep_clamp_rto(ep, rto);
	ep->backoff = 0;		/* a fresh sample restores the timer */
	if (r < ep->min_cur)
		ep->min_cur = r;
	if (++ep->min_n == EP_MINRTT_WIN) {
		ep->min_prev = ep->min_cur;
		ep->min_cur = UINT64_MAX;
		ep->min_n = 0;
	}
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
	m.token = ep->p.token;
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

/* Resend the outstanding chunk of slot i; it goes to the tail of the timer list. */
static int
ep_resend(struct shr_endpoint *ep, uint32_t i, enum ep_tx how, uint64_t now)
{
	struct ep_slot *s = &ep->slots[i];

	if (ep_send_slot(ep, i, true) == -EAGAIN)
		return -EAGAIN;
	s->resent = true;
	s->how = (uint8_t)how;

	s->tx_ns = now;
	s->tx_seq = ep->tx_seq++;
	ep_timer_remove(ep, i);
	ep_timer_append(ep, i);
	ep->st.tx_retx++;
	if (how == EP_TX_FAST)
		ep->st.tx_fast++;
	else
		ep->st.tx_rto++;
	return 0;
}

/* R in use: at most W - 1 (the span of the outstanding chunks); UINT32_MAX: never. */
static inline uint64_t
ep_reorder(const struct shr_endpoint *ep)
{
	if (ep->reorder == UINT32_MAX)
		return UINT32_MAX;
	return ep->reorder < ep->p.window ? ep->reorder : ep->p.window - 1;
}

/*
 * Move fr_next up to the next chunk the fast-resend rule is for: outstanding, never
 * resent, and the result of a chunk R or more further up the stream is in. True if there
 * is one (at fr_next).
 */
static bool
ep_fast_next(struct shr_endpoint *ep)
{
	uint64_t r = ep_reorder(ep);

	if (ep->fr_next < ep->una)
		ep->fr_next = ep->una;
	while (ep->fr_next + r < ep->rx_high) {
		const struct ep_slot *s = &ep->slots[ep->fr_next % ep->p.window];

		if (s->busy && s->idx == ep->fr_next && !s->resent)
			return true;
		ep->fr_next++;
	}
	return false;
}

/*
 * When the chunk at fr_next may be fast-resent: once it has waited as long as the newest
 * chunk answered took (rx_rtt; it was sent no sooner) plus the reorder window (reo_steps
 * quarters of the minimum round trip), so that a result merely overtaken on the way has
 * had time to arrive. (The latest round trip, not SRTT: on a loaded host SRTT carries the
 * stalls of the past, and the timer would fire first.)
 */
static inline uint64_t
ep_fast_time(const struct shr_endpoint *ep)
{
	const struct ep_slot *s = &ep->slots[ep->fr_next % ep->p.window];

	return s->tx_ns + ep->rx_rtt + ep->reo_steps * (ep_min_rtt(ep) / 4);
}

static inline bool
ep_fast_due(struct shr_endpoint *ep, uint64_t now)
{
	return ep_fast_next(ep) && now >= ep_fast_time(ep);
}

/*
 * Move rec_next up to the next suspect of the recovery (outstanding, last sent before the
 * timeout); end the recovery when there is none left. True if one may be resent now.
 */
static bool
ep_rec_due(struct shr_endpoint *ep)
{
	if (!ep->rec)
		return false;
	if (ep->rec_next < ep->una)
		ep->rec_next = ep->una;
	while (ep->rec_next < ep->rec_end) {
		const struct ep_slot *s = &ep->slots[ep->rec_next % ep->p.window];

		if (s->busy && s->idx == ep->rec_next && s->tx_seq < ep->rec_seq)
			return ep->credits > 0;
		ep->rec_next++;
	}
	ep->rec = false;
	ep->credits = 0;
	return false;
}

/*
 * The timer expired: resend up to rto_burst of the oldest transmissions that have expired,
 * back off, and start a recovery. Returns -EAGAIN if send pushed back.
 */
static int
ep_timeout(struct shr_endpoint *ep, uint64_t now)
{
	uint64_t rto = ep_rto_cur(ep), rec_seq = ep->tx_seq;
	uint32_t n = 0;
	int rc = 0;

	while (n < ep->p.rto_burst && ep->t_head != EP_NIL) {
		uint32_t i = ep->t_head;

		if (now < ep_deadline(ep, &ep->slots[i]))
			break;
		rc = ep_resend(ep, i, EP_TX_RTO, now);
		if (rc != 0)
			break;
		n++;
	}
	if (n == 0)
		return rc;
	ep->st.timeouts++;
	ep->to_ns = now;
	if (ep->backoff < EP_MAX_BACKOFF && rto < ep->p.rto_max_ns)
		ep->backoff++;
	ep->rec = true;
	ep->rec_seq = rec_seq;
	ep->rec_end = ep->next_chunk;
	ep->rec_next = ep->una;
	ep->credits = 0;
	return rc;
}

/* Resend what the fast rule and the recovery call for. Returns -EAGAIN if send pushed back. */
static int
ep_resend_due(struct shr_endpoint *ep, uint64_t now)
{
	while (ep_fast_due(ep, now)) {
		if (ep_resend(ep, (uint32_t)(ep->fr_next % ep->p.window), EP_TX_FAST,
			      now) == -EAGAIN)
			return -EAGAIN;
		ep->fr_next++;
	}
	while (ep_rec_due(ep)) {
		if (ep_resend(ep, (uint32_t)(ep->rec_next % ep->p.window), EP_TX_REC,
			      now) == -EAGAIN)
			return -EAGAIN;
		ep->rec_next++;
		ep->credits--;
	}
	if (ep->t_head != EP_NIL && now >= ep_deadline(ep, &ep->slots[ep->t_head]))
		return ep_timeout(ep, now);
	return 0;
}

/*
 * What the answer to the chunk of slot s says about the path. Any answer ends the backoff:
 * the box and the path work (backoff is for a box or a rank that does not answer at all;
 * where every round loses something, as with a thousand ranks, a backoff kept until a
 * fresh sample grows at the ranks that wait for the others and then delays the resends of
 * their own losses, which everyone waits for); the base RTO moves only with samples, from
 * chunks sent once (Karn). An answer no sooner than half the minimum round trip after a
 * resend answers that resend (it was needed): for a fast resend, R shrinks back by one;
 * in the recovery after a timeout, it earns credits. An answer sooner than that answers
 * an earlier copy: a fast resend was spurious (reordering), R grows. The answer to a chunk
 * sent (once) before the timeout ends the recovery: the chunks were late (a stalled rank or
 * host), not lost, and the others' answers are on their way.
 */
static void
ep_answered(struct shr_endpoint *ep, const struct ep_slot *s, uint64_t now)
{
	uint64_t dt = now >= s->tx_ns ? now - s->tx_ns : 0;
	uint64_t half_min = ep_min_rtt(ep) / 2;

	ep->backoff = 0;
	if (s->how == EP_TX_NEW) {
		ep_rtt_sample(ep, dt);
		if (ep->rec && s->tx_seq < ep->rec_seq) {
			/* A chunk sent before the timeout, answered: they were late, not lost. */
			ep->rec = false;
			ep->credits = 0;
		}
		return;
	}
	if (dt < half_min) {
		/* Too soon to answer the resend: the first copy was only late. */
		if (s->how == EP_TX_FAST) {
			ep->st.spurious++;
			if (ep->reorder < ep->reorder_max)
				ep->reorder++;
			if (ep->reo_steps < EP_REO_STEPS_MAX)
				ep->reo_steps++;
		}
		return;
	}
	if (s->how == EP_TX_FAST) {
		if (ep->reorder > ep->p.reorder)
			ep->reorder--;
		if (ep->reo_steps > 1)
			ep->reo_steps--;
	} else if (ep->rec) {
		/* A timed-out chunk really was lost: the ones sent before it probably too. */
		ep->credits += EP_REC_CREDIT;
		if (ep->credits > ep->p.window)
			ep->credits = ep->p.window;
	}
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
		ep->send_off = 0;
	}
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
		s->how = EP_TX_NEW;
		s->idx = ep->next_chunk;
		s->tx_ns = now;
		s->tx_seq = ep->tx_seq++;
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
	if (p.rto_burst == 0)
		p.rto_burst = EP_DEF_RTO_BURST;
	if (p.reorder == 0)
		p.reorder = EP_DEF_REORDER;
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
	ep->min_cur = UINT64_MAX;
	ep->min_prev = UINT64_MAX;
	ep->reorder = p.reorder;
	ep->reo_steps = 1;
	ep->reorder_max = p.window / 2 > p.reorder ? p.window / 2 : p.reorder;
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
	ep_answered(ep, s, now);
	s->busy = false;
	ep_timer_remove(ep, m.slot);
	ep->in_flight--;
	ep->progress_ns = now;
	ep->st.rx_results++;
	if (s->idx >= ep->rx_high) {
		ep->rx_high = s->idx + 1;
		ep->rx_rtt = now >= s->tx_ns ? now - s->tx_ns : 0;
	}
	while (ep->una < ep->next_chunk) {
		const struct ep_slot *u = &ep->slots[ep->una % ep->p.window];

		if (u->busy && u->idx == ep->una)
			break;
		ep->una++;
	}
	(void)ep_fast_next(ep);
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

void
shr_endpoint_stats_get(const struct shr_endpoint *ep, struct shr_endpoint_stats *stats)
{
	*stats = ep->st;
	stats->srtt_ns = ep->srtt_ns;
	stats->rto_ns = ep->rto_ns;
	stats->backoff = ep->backoff;
	stats->reorder = ep->reorder;
	stats->min_rtt_ns = ep_min_rtt(ep);
}

uint64_t
shr_endpoint_next_deadline(const struct shr_endpoint *ep)
{
	uint64_t d = UINT64_MAX;

	if (ep->err != 0)
		return UINT64_MAX;
	/* A new chunk the window allows (or one that send() pushed back): now. */
	if (ep->send_seq < ep->next_seq) {
		uint64_t seq = ep->send_seq < ep->head_seq ? ep->head_seq : ep->send_seq;
		uint64_t off = ep->send_seq < ep->head_seq ? 0 : ep->send_off;
		const struct ep_op *o = &ep->ops[seq % SHR_ENDPOINT_MAX_OPS];

		while (off >= o->op.count && ++seq < ep->next_seq) {
			o = &ep->ops[seq % SHR_ENDPOINT_MAX_OPS];
			off = 0;
		}
		if (seq < ep->next_seq && !ep->slots[ep->next_chunk % ep->p.window].busy)
			return 0;
	}
	/* A resend due now (fr_next and rec_next are normalised). */
	if (ep->rec && ep->credits > 0 && ep->rec_next < ep->rec_end)
		return 0;
	if (ep->t_head != EP_NIL)
		d = ep_deadline(ep, &ep->slots[ep->t_head]);
	if (ep->fr_next + ep_reorder(ep) < ep->rx_high && ep_fast_time(ep) < d)
		d = ep_fast_time(ep);
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
