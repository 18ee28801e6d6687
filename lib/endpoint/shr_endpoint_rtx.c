/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The endpoint's loss recovery (the rules are in shr_endpoint.h): the timer list, RTT
 * estimation, the fast resend by transmission order, and the timeout with the recovery
 * after it.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <shr_proto.h>

#include "shr_endpoint_private.h"

void
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

void
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

uint64_t
ep_clamp_rto(const struct shr_endpoint *ep, uint64_t rto)
{
	if (rto < ep->p.rto_min_ns)
		return ep->p.rto_min_ns;
	if (rto > ep->p.rto_max_ns)
		return ep->p.rto_max_ns;
	return rto;
}

/*
 * A round trip sample r of a chunk sent once (Karn), of which the chunk waited at most wait
 * at the box for the other ranks (the RESULT's feedback; 0 when this rank completed the
 * round). The path's round trip is r - wait: a slow peer does not make this rank's path look
 * slow, a queue on the path does. wait may exceed what this rank's chunk waited (it is the
 * slot's wait from the round's first DATA), so the path is never taken below its windowed
 * minimum by it. Returns the path's sample.
 *
 * SRTT and RTTVAR follow the path's samples; RTO = SRTT + max(4 RTTVAR, SRTT / 2) + 3/2 of
 * the mean wait at the box. It no longer falls below the round trip (the cap at 8 minimum
 * round trips is gone). A round late because another rank lost its copy and resent it on
 * its own timer adds only to the wait term, a mean with a fixed margin and no variation
 * term: with a share p of the rounds waiting for a peer's timer, the mean wait W satisfies
 * W = (1 - p) w0 + p (P + 3/2 W), bounded for p < 2/3 (a variation term, 4 RTTVAR,
 * amplifies those samples about 8 p times: the RTO grew into itself from p > 1/8, which is
 * why it used to be capped). Past 2/3 (a third of the messages lost, 33 ranks) it reaches
 * rto_max, where ep_deadline() paces the timeouts so that every chunk is still retried.
 */
uint64_t
ep_rtt_sample(struct shr_endpoint *ep, uint64_t r, uint64_t wait)
{
	uint64_t var, rto, min = ep_min_rtt(ep), path = r;
	bool first = !ep->have_rtt;

	if (wait > 0 && ep_have_min(ep))
		path = ep_less_wait(r, wait, min);
	else if (wait > 0 && r > wait)
		path = r - wait;	/* no minimum yet */
	if (!ep->have_rtt) {
		ep->srtt_ns = path;
		ep->rttvar_ns = path / 2;
		ep->have_rtt = true;
	} else {
		uint64_t diff = ep->srtt_ns > path ? ep->srtt_ns - path : path - ep->srtt_ns;

		/* RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|; SRTT = 7/8 SRTT + 1/8 R */
		ep->rttvar_ns = (3 * ep->rttvar_ns + diff) / 4;
		ep->srtt_ns = (7 * ep->srtt_ns + path) / 8;
	}
	var = 4 * ep->rttvar_ns;
	if (var < ep->srtt_ns / 2)
		var = ep->srtt_ns / 2;	/* the variation term does not collapse */
	rto = ep->srtt_ns + var;
	/* The wait this rank's chunk had: r - path (the rest is the path's); its mean. */
	if (first)
		ep->wait_ns = r - path;
	else
		ep->wait_ns = (7 * ep->wait_ns + (r - path)) / 8;
	ep->rto_ns = ep_clamp_rto(ep, rto + ep->wait_ns + ep->wait_ns / 2);
	ep->backoff = 0;		/* a fresh sample restores the timer */
	if (path < ep->min_cur)
		ep->min_cur = path;
	if (++ep->min_n == EP_MINRTT_WIN) {
		ep->min_prev = ep->min_cur;
		ep->min_cur = UINT64_MAX;
		ep->min_n = 0;
	}
	return path;
}

/*
 * The slot whose chunk the fast-resend rule is for now, or EP_NIL: the oldest transmission
 * outstanding (the timer list is in transmission order, but for held chunks) that is its
 * chunk's only one, when a transmission R or more later has been answered (rx_high).
 * Transmission order, not stream order: a deferred chunk goes out after newer ones of the
 * stream, and a chunk waiting for its fast time must not hide an older transmission behind
 * it. But the answer to a deferred chunk (ooo_high, ooo_idx) passes only chunks older in
 * the stream: rounds complete in the order of the rank whose DATA comes last, and every
 * rank sends in stream order but its deferred chunks, so that answer comes before those of
 * the newer chunks sent before it (the last rank sent them after it), lost or not (taken
 * as passed, they were fast-resent for every deferred chunk answered: 4 ranks, 1% loss,
 * three fast resends in four were for rounds that waited for another rank's stream). The
 * chunks resent already are passed (the timer has them), and so are those a hint held (the
 * box has their copy: the timer only); the walk stops at the first candidate (those after
 * it were sent later: their fast time is no sooner). ep_fast_from() walks from slot i on
 * the list, ep_fast_next() from its head.
 */
static uint32_t
ep_fast_from(const struct shr_endpoint *ep, uint32_t i)
{
	uint64_t r = ep_reorder(ep);

	for (; i != EP_NIL; i = ep->slots[i].next) {
		const struct ep_slot *s = &ep->slots[i];
		bool passed = s->tx_seq + r < ep->rx_high;

		if (!passed && s->tx_seq + r >= ep->ooo_high)
			return EP_NIL;
		passed = passed || s->idx < ep->ooo_idx;
		if (passed && !s->resent && !s->held)
			return i;
	}
	return EP_NIL;
}

uint32_t
ep_fast_next(const struct shr_endpoint *ep)
{
	return ep_fast_from(ep, ep->t_head);
}

/*
 * Move rec_next up to the next suspect of the recovery (outstanding, last sent before the
 * timeout); end the recovery when there is none left. True if one may be resent now.
 */
bool
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
	/*
	 * Not a congestion event for the window: a round that does not complete at all is
	 * most often a peer (or this host) that stalled, every answer late at once; losses
	 * to a queue leave gaps (fast resends, which are). The backoff throttles a dead path.
	 */
	if (ep->backoff < EP_MAX_BACKOFF && rto < ep->p.rto_max_ns)
		ep->backoff++;
	ep->rec = true;
	ep->rec_seq = rec_seq;
	ep->rec_end = ep->next_chunk;
	ep->rec_next = ep->una;
	ep->credits = 0;
	return rc;
}

/*
 * A RESULT that answered the chunk of slot `slot`, sent as transmission tx_seq, named rank as
 * the one rank the box still waits for in the round open in slot - lanes (shr_agg.h,
 * "Hints"). The chunk outstanding there, if it went out before tx_seq and once only, had its
 * copy lost (this rank named: resend it at once, ep_resend_named()), or is at the box (held:
 * no fast resend, and its timer starts again now, at the tail of the list: the named rank's
 * resend takes a round trip from now; the timer stays, should the result be lost). Sent
 * after tx_seq, it may still be on its way: the hint says nothing about it.
 */
void
ep_hint(struct shr_endpoint *ep, uint32_t slot, uint16_t rank, uint64_t tx_seq, uint64_t now)
{
	uint32_t l = ep->p.lanes;
	struct ep_slot *p;

	if (ep->p.window <= l || ep->p.window % l != 0)
		return;
	p = &ep->slots[(slot + ep->p.window - l) % ep->p.window];
	if (!p->busy || p->resent || p->tx_seq >= tx_seq)
		return;
	if (rank == ep->p.rank) {
		if (!p->named) {
			p->named = true;
			ep->named_n++;
		}
	} else if (!p->held) {
		uint32_t i = (uint32_t)(p - ep->slots);

		p->held = true;
		ep_excused_note(ep, p, false);
		p->timer_ns = now;
		ep_timer_remove(ep, i);
		ep_timer_append(ep, i);
		ep->st.hint_held++;
	}
}

/* Slot s's chunk was answered, resent or replaced: what a hint said of it no longer holds. */
void
ep_hint_clear(struct shr_endpoint *ep, struct ep_slot *s)
{
	bool was = ep_excused(s);

	if (s->named) {
		s->named = false;
		ep->named_n--;
	}
	s->held = false;
	ep_excused_note(ep, s, was);
}

/* Resend the chunks that hints named this rank for. Returns -EAGAIN if send pushed back. */
static int
ep_resend_named(struct shr_endpoint *ep, uint64_t now)
{
	uint32_t i = ep->t_head, next;

	while (i != EP_NIL && ep->named_n != 0) {
		next = ep->slots[i].next;
		if (ep->slots[i].named) {
			if (ep_resend(ep, i, EP_TX_FAST, now) == -EAGAIN)
				return -EAGAIN;
			ep->st.hint_resent++;
		}
		i = next;
	}
	return 0;
}

/*
 * Resend what hints, the fast rule and the recovery call for. Returns -EAGAIN if send pushed
 * back.
 */
int
ep_resend_due(struct shr_endpoint *ep, uint64_t now)
{
	uint32_t i, next;

	if (ep->named_n != 0 && ep_resend_named(ep, now) == -EAGAIN)
		return -EAGAIN;
	i = ep_fast_next(ep);

	/* (a resend moves its slot to the tail: the walk goes on from the one after it) */
	while (i != EP_NIL && now >= ep_fast_time(ep, &ep->slots[i])) {
		next = ep->slots[i].next;
		if (ep_resend(ep, i, EP_TX_FAST, now) == -EAGAIN)
			return -EAGAIN;
		i = ep_fast_from(ep, next);
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
 * an earlier copy: a fast resend was spurious (reordering), R grows. A fast resend answered,
 * sooner or later, by a round that another rank completed (the feedback's last rank) was
 * not needed either: the round waited for that rank (its loss, recovered by it; a copy that
 * waited at the box is not reordering); neither R, the reorder window nor the congestion
 * window moves. One completed by this rank's resend, or answered by a result the
 * box sent again (SHR_PROTO_RANK_ALL), was this rank's loss: a congestion event
 * (ep_cc_loss(), at the answer rather than at the resend, so that a peer's loss does not
 * shrink every rank's window). The answer to a chunk
 * sent (once) before the timeout ends the recovery: the chunks were late (a stalled rank or
 * host), not lost, and the others' answers are on their way. host is how long the answer
 * waited in this host before it was read (0: not known): the RTT's, not the window's
 * (ep_cc_path()).
 */
void
ep_answered(struct shr_endpoint *ep, const struct ep_slot *s, uint32_t fb, uint64_t now,
	    uint64_t host)
{
	uint64_t dt = now >= s->tx_ns ? now - s->tx_ns : 0;
	uint64_t half_min = ep_min_rtt(ep) / 2;
	uint16_t last = shr_proto_fb_last(fb);
	uint64_t wait = last == ep->p.rank || last == SHR_PROTO_RANK_ALL ? 0 :
			shr_proto_fb_wait_ns(fb);
	/*
	 * No sample from an answer that took no longer than the round waited at the box while
	 * the path's minimum is not known yet: all of it may have been the wait (taken as the
	 * path, it would set the minimum, and with it every later sample's floor, that high).
	 */
	bool blind = wait > 0 && dt <= wait && !ep_have_min(ep);

	ep->backoff = 0;
	if (s->how == EP_TX_NEW) {
		if (!blind) {
			uint64_t path = ep_cc_path(ep, ep_rtt_sample(ep, dt, wait), dt, wait, host);

			if (path != 0)
				ep_cc_sample(ep, path, now);
		}
		if (ep->rec && s->tx_seq < ep->rec_seq) {
			/* A chunk sent before the timeout, answered: they were late, not lost. */
			ep->rec = false;
			ep->credits = 0;
		}
		return;
	}
	/*
	 * Karn: no sample from a resent chunk, but its answer came no sooner than dt after its
	 * last transmission (whichever copy it answers), so the round trip is at least that:
	 * when that is above SRTT, it is taken as a sample (else a round trip that jumps above
	 * the RTO would never be learnt: every chunk timed out, no sample, the backoff reset).
	 */
	if (!blind && ep->have_rtt && dt > ep->srtt_ns)
		(void)ep_rtt_sample(ep, dt, wait);
	if (dt < half_min) {
		/*
		 * Too soon to answer the resend: the first copy was only late. Late at the box
		 * when another rank completed the round (it waited for that rank's recovery,
		 * which ended just then): not reordering, so R and the window stay.
		 */
		if (s->how == EP_TX_FAST && last != ep->p.rank && last != SHR_PROTO_RANK_ALL) {
			ep->st.fast_peer++;
		} else if (s->how == EP_TX_FAST) {
			ep->st.spurious++;
			if (ep->reorder < ep->reorder_max)
				ep->reorder++;
			if (ep->reo_steps < EP_REO_STEPS_MAX)
				ep->reo_steps++;
		}
		return;
	}
	if (s->how == EP_TX_FAST) {
		if (last != ep->p.rank && last != SHR_PROTO_RANK_ALL) {
			/* another rank completed the round: it waited for that one, not lost */
			ep->st.fast_peer++;
			return;
		}
		/* this rank's copy or result was lost: a loss, a congestion event */
		ep_cc_loss(ep, now);
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

/* Slot s's chunk, stream offset off, was just answered: what ep_dup_answered() needs. */
void
ep_answer_note(struct ep_slot *s, uint64_t off, uint32_t fb, uint64_t now)
{
	s->a_open = s->ntx > 1;
	if (!s->a_open)
		return;
	s->a_ver = s->ver;
	s->a_ntx = s->ntx;
	s->a_nans = 1;
	s->a_fb = fb;
	s->a_off = off;
	s->a_tx0 = s->tx0_ns;
	s->a_txl = s->tx_ns;
	s->a_ns = now;
}

/*
 * Another answer to slot s's last resent chunk (a duplicate RESULT: the box answers each
 * copy that reaches it after the round). Once there have been as many answers as copies,
 * none was lost, so the first answer was the first copy's (the path keeps their order), and
 * the time from the first transmission to it is a round trip sample, which Karn's rule
 * could not take. Without it a round trip that jumps above the RTO with a window of chunks
 * outstanding is never learnt: each chunk times out before its answer, the answer comes
 * too soon after the resend to show the round trip, and every answer ends the backoff; a
 * job whose first round trip is above rto_init gets no sample at all (two jobs of 2 ranks
 * on one 1 Gbit/s bottleneck: the second to start resent every chunk, several times each,
 * and got a fifth of the link). No sample when the first answer was a result the box sent
 * again (a lost result, not a late one), or when the last answer came after the first by
 * less than half or more than 3/2 of the span of the transmissions: copies that kept their
 * order come back about as far apart as they were sent; sooner is the network's duplicate of
 * a copy, later a first copy held up on the way and overtaken by a resend (then the first
 * answer was the resend's). Were the first copy not the first answered after all, the sample
 * is too long, never too short: the first answer is to a copy sent no sooner.
 */
void
ep_dup_answered(struct shr_endpoint *ep, struct ep_slot *s, uint64_t now)
{
	uint16_t last = shr_proto_fb_last(s->a_fb);
	uint64_t r = s->a_ns - s->a_tx0, wait, span;

	if (++s->a_nans < s->a_ntx)
		return;
	s->a_open = false;
	span = s->a_txl - s->a_tx0;
	if (last == SHR_PROTO_RANK_ALL || now - s->a_ns < span / 2 ||
	    now - s->a_ns > span + span / 2)
		return;
	wait = last == ep->p.rank ? 0 : shr_proto_fb_wait_ns(s->a_fb);
	if (wait > 0 && r <= wait && !ep_have_min(ep))
		return;		/* blind: see ep_answered() */
	ep->st.rtx_unneeded++;
	ep_cc_sample(ep, ep_rtt_sample(ep, r, wait), now);
}
