/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The endpoint's congestion window: how many chunks may be outstanding (at most `inflight`,
 * within the window of slots the box granted).
 *
 * Delay-based, after Swift: the signal is the path's queueing delay, the round trip of a chunk sent
 * once, less the time it waited at the box for the other ranks (the RESULT's feedback), less the
 * time the answer then waited in this host before it was read (the driver's receive timestamp,
 * shr_endpoint_input_at(): Swift's endpoint delay, which a smaller window would not shorten; 4
 * kernel-UDP ranks and the box on 2 cores: 0.25-0.7 ms on average, of 1-3 ms round trips), less the
 * path's base round trip; the smallest such round trip of the last two round trips (the standing
 * one, as Copa's over half of one), so that the stalls of a loaded host, which delay a batch of
 * answers now and then, do not count as a queue. Below the target the window grows (slow start: by
 * one chunk per answer, so doubling per round trip, until the delay first passes the target or
 * something is lost; then by EP_CC_AI chunks per round trip); above it, it shrinks in proportion to
 * the overshoot, by at most EP_CC_MAX_MDF, at most once per round trip. This rank's losses halve it
 * (EP_CC_MAX_MDF), at most once per round trip of losses, when they look like a queue that
 * overflowed: at least EP_CC_LOSS_MIN of them, and EP_CC_LOSS_FRAC of the window, in one round
 * trip, on a path with a standing queue of at least half the target (else the loss is random, not
 * congestion). A loss of this rank is a fast resend answered by a round that this rank completed,
 * or by a result sent again (ep_answered()). Another rank's loss does not count: the round it
 * delays comes back late to every rank, and every rank would back off for every rank's losses. A
 * timeout does not either (see ep_timeout(): mostly a stalled peer or host).
 *
 * Why delay and not loss (AIMD): a loss-based window grows until a queue overflows, so it
 * keeps the bottleneck's buffer full: a tbf with 50 ms of buffer on a 500 Mbit/s link, a
 * 1 MiB window, gives tens of ms of round trip, and every rank waits for the slowest path.
 * And a loss seen here is often not this rank's: a round whose DATA another rank lost comes
 * back late to every rank, each of which fast-resends it, so every rank would back off for
 * every rank's losses. The queueing delay of this rank's own path (the box's wait taken out)
 * is seen on every answer, before any loss. The target is the larger of cc_target_ns and
 * the minimum round trip itself (a queue of one round trip keeps a link busy through a
 * halving), so a host whose round trip is all scheduling noise is not throttled by it.
 *
 * A delay target alone yields to a flow that fills the buffer (TCP beside a job got 0.13-0.18
 * of a shared link): competitive mode (ep_cc_comp()) follows losses while the queue is not
 * this window's.
 *
 * Pacing: the window starts at cwnd_init chunks and grows by slow start, and starts again
 * from there after an idle period longer than the RTO, so the granted window never goes out
 * in one burst at the start of a job or of an operation after a pause.
 */

#include <stdbool.h>
#include <stdint.h>

#include "shr_endpoint_private.h"

static double
ep_cc_floor(const struct shr_endpoint *ep)
{
	return ep->p.inflight < EP_CWND_MIN ? ep->p.inflight : EP_CWND_MIN;
}

static void
ep_cc_clamp(struct shr_endpoint *ep)
{
	if (ep->cwnd > ep->p.inflight)
		ep->cwnd = ep->p.inflight;
	if (ep->cwnd < ep_cc_floor(ep))
		ep->cwnd = ep_cc_floor(ep);
}

void
ep_cc_init(struct shr_endpoint *ep)
{
	if (ep->p.cc_target_ns == EP_CC_OFF) {
		ep->cwnd = ep->p.inflight;
		return;
	}
	ep->cwnd = ep->p.cwnd_init;
	ep->ssthresh = ep->p.inflight;
	ep->ss = true;
	ep->base_cur = UINT64_MAX;
	ep->base_prev = UINT64_MAX;
	ep->stand_min = UINT64_MAX;
	ep->standing = UINT64_MAX;
	ep_cc_clamp(ep);
}

/* At most one decrease per round trip (the decrease's effect shows a round trip later). */
static bool
ep_cc_may_decr(const struct shr_endpoint *ep, uint64_t now)
{
	return !ep->decr_any || now - ep->decr_ns >= ep->srtt_ns;
}

static void
ep_cc_decr(struct shr_endpoint *ep, double f, uint64_t now)
{
	ep->ss = false;
	ep->cwnd *= f;
	ep_cc_clamp(ep);
	ep->ssthresh = ep->cwnd;
	ep->decr_any = true;
	ep->decr_ns = now;
	ep->st.cc_decr++;
}

/* The target queueing delay: cc_target_ns, or the base round trip if larger. */
static uint64_t
ep_cc_target(const struct shr_endpoint *ep, uint64_t base)
{
	return base > ep->p.cc_target_ns ? base : ep->p.cc_target_ns;
}

/*
 * The path's base round trip: the minimum of its samples over the last 5 to 10 s (two
 * periods), not the RTO's windowed minimum over the last few hundred samples: a window that
 * keeps a queue standing never sees the empty path within a few hundred samples, and a
 * minimum that forgets it takes the standing queue for the base, and lets the queue grow by
 * the target again (a ratchet).
 */
static uint64_t
ep_cc_base(struct shr_endpoint *ep, uint64_t path, uint64_t now)
{
	if (now - ep->base_start >= EP_CC_BASE_NS) {
		ep->base_prev = ep->base_cur;
		ep->base_cur = UINT64_MAX;
		ep->base_start = now;
	}
	if (path < ep->base_cur)
		ep->base_cur = path;
	return ep->base_cur < ep->base_prev ? ep->base_cur : ep->base_prev;
}

/*
 * The standing round trip: the smallest sample of the last two round trips (Copa's is of
 * half of one), so a host that stalls now and then (one late batch of answers) is not taken
 * for a queue, while a standing queue raises every sample, the smallest too. Over half a
 * round trip, the stalls of ranks sharing 2 cores with the box (round trips of 0.5-5 ms)
 * filled whole windows: 64 MiB N = 4, eight pairs alternated, 2.12 -> 2.20 Gbit/s lossless
 * (faster in 8 of 8) and 1.86 -> 2.00 at 1% loss (7 of 8), with the same fairness_jain and
 * tcp_share.
 */
static uint64_t
ep_cc_standing(struct shr_endpoint *ep, uint64_t path, uint64_t now)
{
	if (path < ep->stand_min)
		ep->stand_min = path;
	if (ep->standing == UINT64_MAX ||
	    now - ep->stand_start >= EP_CC_STAND_RTTS * ep->srtt_ns) {
		ep->standing = ep->stand_min;
		ep->stand_min = UINT64_MAX;
		ep->stand_start = now;
	}
	return ep->standing;
}

/* The base round trip known so far (0: none). */
static uint64_t
ep_cc_base_get(const struct shr_endpoint *ep)
{
	uint64_t b = ep->base_cur < ep->base_prev ? ep->base_cur : ep->base_prev;

	return b == UINT64_MAX ? 0 : b;
}

/* Grow the window on an answer that found it full: slow start, or ai chunks per round trip. */
static void
ep_cc_grow(struct shr_endpoint *ep, double ai)
{
	if (ep->in_flight < ep_cwnd(ep))
		return;	/* not limited by the window: it says nothing about it */
	if (ep->ss) {
		ep->cwnd += 1.0;
		if (ep->cwnd >= ep->ssthresh)
			ep->ss = false;
	} else {
		ep->cwnd += ai / ep->cwnd;
	}
	ep_cc_clamp(ep);
}

/*
 * Competitive mode, after Copa's: a delay target cannot share a bottleneck with a flow that
 * keeps its buffer full (TCP's CUBIC or Reno fill it until it drops), so a window that
 * shrinks while the queue stays over the target (EP_CC_COMP_RTTS round trips, while the
 * window fell to 1/EP_CC_COMP_CUT of where it was, or to its floor) was not what built the
 * queue: it then grows and shrinks on losses like such a flow (EP_CC_COMP_AI chunks per
 * round trip, by EP_CC_COMP_MDF on a fast resend) and ignores the delay. It leaves when
 * the queue is under half the target (the competitor is gone), and every EP_CC_COMP_PROBE
 * round trips it tries the delay target again, keeping the window it had: if the queue
 * still does not drain, it comes back to that window, else it stays.
 *
 * The round trips are the longest smoothed one since the queue rose, not the current one:
 * a queue that drains shortens the round trip as it does, and two jobs' slow starts on one
 * 1 Gbit/s link (2 ranks each, 8 KiB chunks) leave tens of ms of queue, which outlasted 8
 * of the 2 ms round trips it fell to: a job took the other for a buffer-filler 0.14 s into
 * the run (fairness_jain under 0.95 in 4 of 36 runs; none of 32 with this clock, and 10%
 * more goodput for the two).
 * Returns true when the sample is the competitive mode's.
 */
static bool
ep_cc_comp(struct shr_endpoint *ep, uint64_t q, uint64_t target, uint64_t now)
{
	double floor = ep_cc_floor(ep), cut;

	if (ep->comp) {
		if (q < target / 2) {
			ep->comp = false;	/* the queue drained: the competitor left */
			ep->comp_cwnd = 0;
			ep->over_ns = 0;
			return false;
		}
		if (now - ep->comp_ns >= EP_CC_COMP_PROBE * ep->srtt_ns) {
			ep->comp = false;	/* try the delay target again */
			ep->comp_cwnd = ep->cwnd;
			ep->over_ns = now;
			ep->over_cwnd = ep->cwnd;
			ep->over_rtt = ep->srtt_ns;
			return false;
		}
		ep_cc_grow(ep, EP_CC_COMP_AI);
		return true;
	}
	if (q <= target) {
		ep->over_ns = 0;
		ep->comp_cwnd = 0;	/* a try that drained the queue: stay */
		return false;
	}
	if (ep->over_ns == 0) {
		ep->over_ns = now;
		ep->over_cwnd = ep->cwnd;
		ep->over_rtt = ep->srtt_ns;
		return false;
	}
	if (ep->srtt_ns > ep->over_rtt)
		ep->over_rtt = ep->srtt_ns;
	cut = ep->over_cwnd / EP_CC_COMP_CUT;
	if (cut < floor)
		cut = floor;
	if (now - ep->over_ns < EP_CC_COMP_RTTS * ep->over_rtt || ep->cwnd > cut)
		return false;
	ep->comp = true;
	ep->comp_ns = now;
	ep->ss = false;
	if (ep->comp_cwnd > ep->cwnd)
		ep->cwnd = ep->comp_cwnd;	/* back to the window the try left */
	ep->comp_cwnd = 0;
	ep_cc_clamp(ep);
	ep->st.cc_comp++;
	return true;
}

/*
 * The window's sample of an answer read dt after its chunk went out, of which it waited
 * host in this host (shr_endpoint_input_at()) and the round waited wait at the box: path,
 * ep_rtt_sample()'s, when host is 0; else the same taken at the answer's arrival: the
 * round trip to this host (dt - host) less the wait, floored at the window's base
 * (ep_less_wait()). Returns 0 when there is no sample: the round trip to the host is not
 * positive, or no base is known yet and the wait covers it.
 */
uint64_t
ep_cc_path(const struct shr_endpoint *ep, uint64_t path, uint64_t dt, uint64_t wait,
	   uint64_t host)
{
	if (host == 0)
		return path;
	if (dt <= host)
		return 0;
	return ep_less_wait(dt - host, wait, ep_cc_base_get(ep));
}

/* A path round trip sample (ep_rtt_sample()'s) of an answer at now. */
void
ep_cc_sample(struct shr_endpoint *ep, uint64_t path, uint64_t now)
{
	uint64_t min = ep_cc_base(ep, path, now), target, q;
	double f;

	path = ep_cc_standing(ep, path, now);
	/* the standing minimum may still hold a sample the base has forgotten (an idle gap
	 * of two base periods within one standing period): no queue then */
	q = path > min ? path - min : 0;
	ep->qdelay_ns = q;
	if (ep->p.cc_target_ns == EP_CC_OFF)
		return;
	target = ep_cc_target(ep, min);
	if (ep_cc_comp(ep, q, target, now))
		return;
	if (q <= target) {
		ep_cc_grow(ep, EP_CC_AI);
		return;
	}
	if (!ep_cc_may_decr(ep, now))
		return;
	/* Swift: by beta times the overshoot over the whole round trip, at most max_mdf. */
	f = 1.0 - EP_CC_BETA * (double)(q - target) / (double)path;
	if (f < 1.0 - EP_CC_MAX_MDF)
		f = 1.0 - EP_CC_MAX_MDF;
	ep_cc_decr(ep, f, now);
}

/*
 * This rank's loss (a fast resend answered, ep_answered()): halve, at most once per round
 * trip of losses (a delay-based decrease just before does not absorb it: a loss says the
 * queue overflowed), when the losses of the last round trip are a run (EP_CC_LOSS_MIN, and
 * EP_CC_LOSS_FRAC of the window: a queue that overflows drops several in a row; random
 * loss, one here and there) and the path's standing queue is at least half the target: a
 * loss on a path with no queue is not congestion (a lossy link). Halving on every loss cost
 * 42% of the goodput at 1% random loss (4 ranks, 64 MiB: 0.37-0.43 against 0.64-0.73 Gbit/s
 * without a window). Competitive mode follows every loss (as the flow it competes with).
 */
void
ep_cc_loss(struct shr_endpoint *ep, uint64_t now)
{
	if (ep->p.cc_target_ns == EP_CC_OFF)
		return;
	/* this round trip's losses */
	if (now - ep->lr_start >= ep->srtt_ns) {
		ep->lr_start = now;
		ep->lr_n = 0;
	}
	ep->lr_n++;
	if (ep->loss_any && now - ep->loss_ns < ep->srtt_ns)
		return;
	if (!ep->comp && (ep->lr_n < EP_CC_LOSS_MIN ||
			  ep->lr_n < EP_CC_LOSS_FRAC * ep->cwnd)) {
		ep->st.cc_loss_rare++;
		return;
	}
	if (ep->comp) {
		ep_cc_decr(ep, 1.0 - EP_CC_COMP_MDF, now);
	} else if (ep->qdelay_ns < ep_cc_target(ep, ep_cc_base_get(ep)) / 2) {
		ep->st.cc_loss_noq++;
		return;
	} else {
		ep_cc_decr(ep, 1.0 - EP_CC_MAX_MDF, now);
	}
	ep->loss_any = true;
	ep->loss_ns = now;
	ep->st.cc_decr_loss++;
}

/*
 * The first chunk after nothing was outstanding: after an idle period longer than the RTO,
 * the path's queues have drained and what the window knew is stale: slow start again from
 * cwnd_init, up to the window it had.
 */
void
ep_cc_restart(struct shr_endpoint *ep, uint64_t now)
{
	if (ep->p.cc_target_ns == EP_CC_OFF || !ep->have_rtt ||
	    now - ep->progress_ns <= ep_rto_cur(ep) || ep->cwnd <= ep->p.cwnd_init)
		return;
	ep->ssthresh = ep->cwnd;
	ep->cwnd = ep->p.cwnd_init;
	ep->ss = true;
	ep_cc_clamp(ep);
}
