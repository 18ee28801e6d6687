/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Adaptive spin-then-sleep of a wait (shr_spin.h). Measured with 4 kernel-UDP ranks and a
 * box on 2 cores, 4 KiB allreduce p50: spinning 16 rounds 102 us, 1 round 84 us; with one
 * rank (cores to spare), 16 rounds 14 us, 1 round 23 us. Neither fixed spin suits both.
 * Nor does a fixed number of rounds: once rounds cost 0.5 us, 16 of them no longer covered
 * the one rank's 8 us waits and it slept at every one (28 us); the automatic full spin, as
 * long as the shortest sleep, catches them (12.9-14.4 us). It is at most 32 us, twice the
 * wake-up measured here: a job's first waits are long, and they set it first.
 *
 * A wait that ended while it spun is judged by its time too, not by having ended there: a
 * spinner preempted by the ranks it waits for "catches" the result only because time passed
 * while it was off the CPU.
 */

#include "shr_spin.h"

void
shr_spin_init(struct shr_spin *s, uint32_t max, shr_spin_clock_t clock, void *clock_ctx)
{
	uint32_t base = max != 0 ? max : SHR_SPIN_AUTO_MIN;

	*s = (struct shr_spin){ .max = max != 0 ? max : SHR_SPIN_AUTO_MAX, .base = base,
				.top = base, .cur = base, .clock = clock, .clock_ctx = clock_ctx };
}

void
shr_spin_begin(struct shr_spin *s)
{
	s->waits++;
	s->limit = s->cur < s->top && s->waits % SHR_SPIN_PROBE == 0 ? s->top : s->cur;
	s->idle = 0;
	s->spun = 0;
}

/* The rounds of a full spin: with max above base (automatic), those that last as long as the
 * shortest sleep, within base..max and SHR_SPIN_AUTO_NS. */
static void
spin_top(struct shr_spin *s)
{
	uint64_t ns, r;

	if (s->max <= s->base || s->round_ns == 0 || s->sleep_ns == 0)
		return;
	ns = s->sleep_ns < SHR_SPIN_AUTO_NS ? s->sleep_ns : SHR_SPIN_AUTO_NS;
	r = (ns + s->round_ns - 1) / s->round_ns;
	s->top = (uint32_t)(r < s->base ? s->base : r > s->max ? s->max : r);
	if (s->cur > s->top)
		s->cur = s->top;
}

void
shr_spin_adapt(struct shr_spin *s, uint32_t rounds, uint64_t spun_ns, uint64_t idle_ns,
	       uint64_t asleep_ns)
{
	uint64_t full_ns;

	if (rounds != 0) {
		uint64_t round_ns = spun_ns / rounds;

		/* the least: a round that was preempted took longer than a round costs */
		if (s->round_ns == 0 || round_ns < s->round_ns)
			s->round_ns = round_ns;
	}
	/* a sleep shorter than SHR_SPIN_SLEPT_NS was not a wake-up from an idle CPU (what it
	 * waited for came as it went to sleep): it says nothing about what a sleep costs */
	if (asleep_ns >= SHR_SPIN_SLEPT_NS && (s->sleep_ns == 0 || idle_ns < s->sleep_ns))
		s->sleep_ns = idle_ns;
	spin_top(s);
	full_ns = (uint64_t)s->top * s->round_ns;
	if (idle_ns <= full_ns)
		s->cur = s->cur <= s->top / 2 ? s->cur * 2 : s->top;
	else if (idle_ns > 2 * full_ns && s->cur > 1)
		s->cur /= 2;
}

void
shr_spin_moved(struct shr_spin *s)
{
	uint64_t now;

	if (s->idle != 0) {
		now = s->clock(s->clock_ctx);
		if (s->spun != 0)	/* the rounds after the first, until the sleep */
			shr_spin_adapt(s, s->spun - 1, s->t_sleep - s->t_idle, now - s->t_idle,
				       now - s->t_sleep);
		else			/* the rounds after the first, and this one */
			shr_spin_adapt(s, s->idle, now - s->t_idle, now - s->t_idle, 0);
	}
	s->idle = 0;
	s->spun = 0;
}

bool
shr_spin_empty(struct shr_spin *s)
{
	if (s->idle < UINT32_MAX)
		s->idle++;
	if (s->idle == 1)	/* read the clock only once the wait goes idle */
		s->t_idle = s->clock(s->clock_ctx);
	if (s->idle < s->limit)
		return false;
	if (s->spun == 0) {
		s->spun = s->idle;
		s->t_sleep = s->clock(s->clock_ctx);
		s->sleeps++;
	}
	return true;
}
