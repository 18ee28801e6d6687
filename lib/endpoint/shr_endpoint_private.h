/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_ENDPOINT_PRIVATE_H
#define SHR_ENDPOINT_PRIVATE_H

/*
 * The endpoint's state (see shr_endpoint.c) and what its files share: shr_endpoint.c
 * (operations, sending, the API), shr_endpoint_rtx.c (timer list, RTT, fast resend,
 * recovery after a timeout) and shr_endpoint_cc.c (the congestion window).
 */

#include <stdbool.h>
#include <stdint.h>

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
#define EP_REO_STEPS_MAX 8	/* reorder window up to 2 minimum round trips */
#define EP_DEF_CC_TARGET_NS 1000000ull	/* queueing delay allowed: 1 ms */
#define EP_DEF_CWND_INIT 16	/* chunks */
#define EP_CWND_MIN 4		/* chunks: a fast resend needs R = 3 later answers */
#define EP_CC_BETA 0.8		/* decrease per unit of relative overshoot (Swift's beta) */
#define EP_CC_MAX_MDF 0.5	/* largest decrease at once */
#define EP_CC_AI 1.0		/* additive increase: chunks per round trip */
#define EP_CC_OFF SHR_ENDPOINT_CC_OFF
#define EP_CC_BASE_NS 5000000000ull	/* base round trip: minimum over 5 to 10 s */
#define EP_CC_STAND_RTTS 2	/* standing round trip: smallest sample of these many RTTs */
#define EP_CC_COMP_RTTS 8	/* competitor: queue over the target this many of the longest
				 * round trips since it rose... */
#define EP_CC_COMP_CUT 8.0	/* ...while the window fell to 1/this of where it was */
#define EP_CC_COMP_PROBE 64	/* competitive mode: try the delay target again after this
				 * many round trips */
#define EP_CC_COMP_AI 4.0	/* competitive mode: chunks per round trip (chosen, not
				 * derived: 4 x 8 KiB beside one TCP stream on 1 Gbit/s gave
				 * the job 0.54-0.63 of the link) */
#define EP_CC_COMP_MDF 0.3	/* competitive mode: decrease on a loss (CUBIC's) */
#define EP_CC_LOSS_MIN 2	/* a loss is congestion from this many in one round trip... */
#define EP_CC_LOSS_FRAC 0.05	/* ...and this share of the window */

enum ep_tx {
	EP_TX_NEW,		/* first transmission */
	EP_TX_FAST,		/* resent: later chunks were answered */
	EP_TX_RTO,		/* resent: the timer expired */
	EP_TX_REC,		/* resent: recovery after a timeout */
};

struct ep_op {
	struct shr_endpoint_op op;
	uint64_t base;		/* stream offset of its round space's first element */
	uint64_t space;		/* size of its round space (shr_endpoint_plan.h) */
	uint64_t first;		/* offset of its first round (0, or past a skipped block) */
	uint64_t nchunks;	/* chunks of the op */
	uint64_t done_chunks;	/* results written */
	bool done;
};

/* A chunk planned but not sent: its slot still waits for the result of chunk idx - W. */
struct ep_chunk {
	uint32_t next;		/* next deferred chunk of its slot, or of the free list */
	uint64_t seq;		/* its op */
	uint64_t offset;	/* its offset in its op's round space */
	uint64_t in_off;	/* its payload's offset in the op's in (EP_PLAN_NONE: none) */
	uint64_t out_off;	/* where its result goes in out (EP_PLAN_NONE: nowhere) */
	uint64_t idx;		/* its stream index */
	uint32_t count;		/* elements */
	uint32_t aux;
	uint16_t root;
	bool last;		/* the last chunk of its op */
};

struct ep_slot {
	uint32_t prev;		/* timer list links (slot indexes) */
	uint32_t next;
	uint32_t ready_prev;	/* ready list links: a free slot with a deferred chunk */
	uint32_t ready_next;
	bool busy;		/* a chunk is outstanding */
	uint32_t dq_head;	/* the slot's deferred chunks, oldest first (ep->dpool) */
	uint32_t dq_tail;
	bool resent;		/* the outstanding chunk was resent (Karn: no RTT sample) */
	bool held;		/* the box has its copy (a hint named another rank): no fast
				 * resend, the timer only */
	bool named;		/* a hint named this rank for it: resend at once */
	bool ooo;		/* sent after a chunk newer in the stream (deferred) */
	uint8_t ver;		/* version of the outstanding (or last) chunk */
	bool used;		/* the slot has carried a chunk before (its version flips) */
	uint8_t how;		/* enum ep_tx of its last transmission */
	bool last;		/* the last chunk of its op (SHR_FLAG_LAST) */
	uint16_t root;		/* its round's root and aux (shr_endpoint_plan.h) */
	uint32_t aux;
	uint32_t count;		/* elements of the outstanding chunk */
	uint64_t offset;	/* its offset in its op's round space */
	uint64_t in_off;	/* its payload's offset in the op's in (EP_PLAN_NONE: none) */
	uint64_t out_off;	/* where its result goes in out (EP_PLAN_NONE: nowhere) */
	uint64_t seq;		/* its op */
	uint64_t idx;		/* its stream index */
	uint64_t tx_ns;		/* its last transmission */
	uint64_t timer_ns;	/* its timer's start: tx_ns, or when a hint held it */
	uint64_t tx_seq;	/* that transmission's number */
	uint64_t tx0_ns;	/* its first transmission */
	uint16_t ntx;		/* its transmissions (saturating) */
	/*
	 * The last resent chunk answered on the slot, while copies of it are unanswered
	 * (ep_dup_answered()): its stream offset and version, first and last transmission,
	 * transmissions, answers so far, the first answer's time and feedback.
	 */
	bool a_open;
	uint8_t a_ver;
	uint16_t a_ntx;
	uint16_t a_nans;
	uint32_t a_fb;
	uint64_t a_off;
	uint64_t a_tx0;
	uint64_t a_txl;
	uint64_t a_ns;
};

struct shr_endpoint {
	struct shr_endpoint_params p;
	struct shr_endpoint_io io;
	unsigned int esize;	/* bytes per element */
	uint16_t crank;		/* the collectives' rank: tree_rank, or rank */
	uint16_t cworld;	/* the collectives' world: tree_world, or world */

	int err;		/* sticky failure (negative errno) or 0 */
	uint32_t err_reason;	/* ABORT's aux, or the positive errno */
	uint16_t err_rank;	/* ABORT's rank, or SHR_PROTO_RANK_ALL */

	/* operations */
	struct ep_op ops[SHR_ENDPOINT_MAX_OPS];
	uint64_t head_seq;	/* oldest op not done */
	uint64_t next_seq;	/* seq of the next submitted op */
	uint64_t send_seq;	/* op of the next chunk to send */
	uint64_t send_off;	/* its offset in the op's round space (normalised) */
	uint64_t next_chunk;	/* stream index k of the next chunk to plan */
	uint64_t tx_idx_end;	/* one past the newest stream index sent */
	struct ep_chunk *dpool;	/* W entries for deferred chunks */
	uint32_t dfree;		/* free list of dpool */
	uint32_t ready_head;	/* free slots with a deferred chunk, in stream order of the
				 * chunks they send next (ep_ready_push()) */
	uint32_t ready_tail;
	uint64_t stream_pos;	/* stream offset where the next submitted op starts */
	uint32_t last_step;	/* step of the last submitted op (0 before any) */
	uint32_t first_step;	/* step of the first submitted op */

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
	uint64_t wait_ns;	/* smoothed wait at the box for the other ranks (RTO term) */

	/* congestion window (shr_endpoint_cc.c) */
	double cwnd;		/* chunks, in [EP_CWND_MIN or window, window] */
	double ssthresh;	/* slow start while cwnd < ssthresh */
	bool ss;		/* in slow start */
	bool decr_any;		/* decr_ns is set */
	uint64_t decr_ns;	/* last decrease */
	uint64_t lr_start;	/* this round trip of losses started (ep_cc_loss()) */
	uint32_t lr_n;		/* this rank's losses in it */
	bool loss_any;		/* loss_ns is set */
	uint64_t loss_ns;	/* last decrease on a loss */
	uint64_t qdelay_ns;	/* latest queueing delay */
	uint64_t host_ns;	/* smoothed time a result waited in this host before it was read */
	uint64_t base_cur;	/* the path's base round trip: minimum over this period... */
	uint64_t base_prev;	/* ...and the previous one */
	uint64_t base_start;	/* start of this period */
	uint64_t stand_min;	/* smallest path sample of these two round trips... */
	uint64_t stand_start;	/* ...which started then */
	uint64_t standing;	/* the last two round trips': the standing round trip */
	bool comp;		/* competitive mode: the queue is not this window's */
	uint64_t comp_ns;	/* entered it, or last tried the delay target again */
	double comp_cwnd;	/* window to go back to if a try finds the competitor (0) */
	uint64_t over_ns;	/* queue over the target since (0: it is not) */
	double over_cwnd;	/* window then */
	uint64_t over_rtt;	/* longest smoothed round trip since */

	/* loss detection by transmission order */
	uint64_t tx_seq;	/* transmissions so far (the next one's number) */
	uint64_t una;		/* oldest chunk without its result */
	uint64_t rx_high;	/* newest transmission answered (its tx_seq), plus one (0: none) */
	uint64_t ooo_high;	/* the same, of a chunk sent after newer ones (deferred) */
	uint64_t ooo_idx;	/* that chunk's stream index */
	uint32_t named_n;	/* slots with named set */
	uint64_t rx_rtt;	/* how long its answer took */
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
	uint32_t excused;	/* outstanding chunks resent or held (ep_excused()) */
	uint32_t late_max;	/* ep_excused_room() at most, with the window fully open */

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

/* The base RTO doubled n times, at most rto_max. */
static inline uint64_t
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
 * than RTO after the last timeout (the timer restarts when it fires, as TCP's does); at
 * rto_max, no sooner than RTO * rto_burst / in_flight after it. A timeout resends only
 * rto_burst of the expired chunks, so with a full RTO between timeouts a chunk whose copies
 * keep being lost goes again only every in_flight / rto_burst RTOs (4 at W = 8, 32 at W =
 * 64). Below rto_max every timeout doubles the RTO anyway (a stalled path is throttled); at
 * rto_max the RTO can grow no more, and that pace gave fewer tries than the box's job
 * timeout allows: with a third of the messages lost and 33 ranks (RTO at rto_max through
 * the box's wait, every round waiting for some rank's timer) a chunk went again every
 * 150-250 ms, and 10 losses in a row (one chunk in 3^10 = 59k; that test sends 80k)
 * outlasted the 2 s. Paced, every expired chunk goes again about once per rto_max, still
 * rto_burst at a time; the chunks not expired wait for their own RTO.
 */
static inline uint64_t
ep_deadline(const struct shr_endpoint *ep, const struct ep_slot *s)
{
	uint64_t rto = ep_rto_cur(ep), d = s->timer_ns + rto, gap = rto;

	if (rto >= ep->p.rto_max_ns && ep->in_flight > ep->p.rto_burst)
		gap = rto * ep->p.rto_burst / ep->in_flight;
	if (ep->st.timeouts > 0 && ep->to_ns + gap > d)
		d = ep->to_ns + gap;
	return d;
}

/* Whether the path's minimum round trip is known (a sample of 0 ns is one). */
static inline bool
ep_have_min(const struct shr_endpoint *ep)
{
	return ep->min_cur != UINT64_MAX || ep->min_prev != UINT64_MAX;
}

static inline uint64_t
ep_min_rtt(const struct shr_endpoint *ep)
{
	uint64_t m = ep->min_cur < ep->min_prev ? ep->min_cur : ep->min_prev;

	return m == UINT64_MAX ? 0 : m;
}

/*
 * A round trip r less the time its round waited at the box (the slot's wait, from the
 * round's first DATA, which may exceed what this chunk waited), never taken below floor by
 * it: r - wait when that is above floor, else the smaller of r and floor (0 when floor is 0
 * and the wait covers r). ep_rtt_sample() floors at the minimum round trip, ep_cc_path() at
 * the window's base.
 */
static inline uint64_t
ep_less_wait(uint64_t r, uint64_t wait, uint64_t floor)
{
	return r > wait + floor ? r - wait : (r < floor ? r : floor);
}

/* R in use: at most W - 1 (the span of the outstanding chunks); UINT32_MAX: never. */
static inline uint64_t
ep_reorder(const struct shr_endpoint *ep)
{
	if (ep->reorder == UINT32_MAX)
		return UINT32_MAX;
	return ep->reorder < ep->p.window ? ep->reorder : ep->p.window - 1;
}

/* Whether the oldest chunk not sent on slot s (its first deferred one) is chunk k. */
static inline bool
ep_deferred_is(const struct shr_endpoint *ep, const struct ep_slot *s, uint64_t k)
{
	return s->dq_head != EP_NIL && ep->dpool[s->dq_head].idx == k;
}

/*
 * When the chunk of slot s may be fast-resent: once it has waited as long as the newest
 * transmission answered took (rx_rtt; it was sent no sooner) plus the reorder window
 * (reo_steps quarters of the minimum round trip), so that a result merely overtaken on the
 * way has had time to arrive. (The latest round trip, not SRTT: on a loaded host SRTT
 * carries the stalls of the past, and the timer would fire first.)
 */
static inline uint64_t
ep_fast_time(const struct shr_endpoint *ep, const struct ep_slot *s)
{
	return s->tx_ns + ep->rx_rtt + ep->reo_steps * (ep_min_rtt(ep) / 4);
}

/* shr_endpoint.c */
int ep_resend(struct shr_endpoint *ep, uint32_t i, enum ep_tx how, uint64_t now);

/* shr_endpoint_cc.c */
void ep_cc_init(struct shr_endpoint *ep);
uint64_t ep_cc_path(const struct shr_endpoint *ep, uint64_t path, uint64_t dt, uint64_t wait,
		    uint64_t host);
void ep_cc_sample(struct shr_endpoint *ep, uint64_t path, uint64_t now);
void ep_cc_loss(struct shr_endpoint *ep, uint64_t now);
void ep_cc_restart(struct shr_endpoint *ep, uint64_t now);

/* Chunks the congestion window lets be outstanding (window when it is off). */
static inline uint32_t
ep_cwnd(const struct shr_endpoint *ep)
{
	return (uint32_t)ep->cwnd;
}

/*
 * Whether slot s's chunk is excused from the window: outstanding, and resent (its first copy
 * was lost, here or on the way back) or held (the box has it and waits for another rank's
 * copy). Such a chunk holds its slot for a round trip or more beyond the others; counted in
 * the window, it would hold a place of the window as long, and a window-limited stream would
 * lose that much of its rate to every loss of any rank.
 */
static inline bool
ep_excused(const struct ep_slot *s)
{
	return s->busy && (s->resent || s->held);
}

/*
 * ep->excused follows what slot s's change did to ep_excused(s), `was` being what it said
 * before the change.
 */
static inline void
ep_excused_note(struct shr_endpoint *ep, const struct ep_slot *s, bool was)
{
	bool is = ep_excused(s);

	if (is && !was)
		ep->excused++;
	else if (was && !is)
		ep->excused--;
}

/*
 * Chunks outstanding beyond the window that the excused chunks may take: at most one each,
 * and at most late_max (an eighth of inflight, SHR_ENDPOINT_LATE_DIV, rounded up to 8, and
 * no more than the spare slots, window - inflight) scaled by how open the congestion window
 * is (cwnd / inflight; all of late_max with congestion control off or the window fully open).
 * So the stream goes on past a late slot on the spare slots, and where the congestion window
 * is small (a queue, losses it took for congestion) the excused chunks add at most an eighth
 * of it. The spare slots are a whole window (shr_endpoint_slots()) for the span of the
 * stream, so that a late chunk does not defer the chunks of its slot; late_max keeps what the
 * late chunks add to the chunks outstanding where it was with an eighth of spare slots.
 */
static inline uint32_t
ep_excused_room(const struct shr_endpoint *ep)
{
	uint64_t room;

	if (ep->excused == 0)
		return 0;	/* (the common case: no division per chunk sent) */
	room = (uint64_t)ep->late_max * ep_cwnd(ep) / ep->p.inflight;
	return ep->excused < room ? ep->excused : (uint32_t)room;
}

/*
 * Whether the congestion window has no room for another chunk, sent or deferred: the chunks
 * outstanding, less the excused ones that ep_excused_room() lets go beyond it, fill it (a
 * first chunk after nothing was outstanding always has room). A chunk deferred while there
 * was room goes when its slot frees, whatever the window says then: it takes the place of
 * the slot's last chunk, just answered (one in, one out).
 */
static inline bool
ep_cwnd_full(const struct shr_endpoint *ep)
{
	return ep->in_flight != 0 && ep->in_flight - ep_excused_room(ep) >= ep_cwnd(ep);
}

/* shr_endpoint_rtx.c */
void ep_timer_append(struct shr_endpoint *ep, uint32_t i);
void ep_timer_remove(struct shr_endpoint *ep, uint32_t i);
uint64_t ep_clamp_rto(const struct shr_endpoint *ep, uint64_t rto);
uint64_t ep_rtt_sample(struct shr_endpoint *ep, uint64_t r, uint64_t wait);
uint32_t ep_fast_next(const struct shr_endpoint *ep);
bool ep_rec_due(struct shr_endpoint *ep);
int ep_resend_due(struct shr_endpoint *ep, uint64_t now);
void ep_answered(struct shr_endpoint *ep, const struct ep_slot *s, uint32_t fb, uint64_t now,
		 uint64_t host);
void ep_answer_note(struct ep_slot *s, uint64_t off, uint32_t fb, uint64_t now);
void ep_dup_answered(struct shr_endpoint *ep, struct ep_slot *s, uint64_t now);
void ep_hint(struct shr_endpoint *ep, uint32_t slot, uint16_t rank, uint64_t tx_seq,
	     uint64_t now);
void ep_hint_clear(struct shr_endpoint *ep, struct ep_slot *s);

#endif /* SHR_ENDPOINT_PRIVATE_H */
