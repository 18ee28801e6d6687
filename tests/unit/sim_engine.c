/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The simulation engine of test_sim and sim_campaign (see sim_engine.h): a run, the network
 * (a channel that drops, duplicates and delays) and the event loop. The members, the jobs and
 * the box's output are in sim_members.c.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_priv.h"

struct sim *sim_cur;

void
sim_fail(struct sim *s, enum sim_verdict v, const char *fmt, ...)
{
	va_list ap;

	if (s->res->verdict == SIM_OK) {
		s->res->verdict = v;
		va_start(ap, fmt);
		vsnprintf(s->res->err, sizeof(s->res->err), fmt, ap);
		va_end(ap);
	}
	longjmp(s->fail_jmp, 1);
}

/* ---- PRNG and input values ---- */

uint64_t
sim_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint64_t
sim_rand(struct sim *s)
{
	s->rng += 0x9e3779b97f4a7c15ull;
	return sim_mix64(s->rng);
}

bool
sim_chance(struct sim *s, unsigned int percent)
{
	return percent != 0 && sim_rand(s) % 100 < percent;
}

/* ---- the channel ---- */

static bool
msg_before(const struct sim_msg *a, const struct sim_msg *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

void
sim_heap_push(struct sim *s, struct sim_msg *msg)
{
	size_t i;

	if (s->nheap == s->capheap) {
		s->capheap = s->capheap ? 2 * s->capheap : 1024;
		s->heap = realloc(s->heap, s->capheap * sizeof(*s->heap));
		CHECK(s->heap != NULL);
	}
	i = s->nheap++;
	while (i > 0 && msg_before(msg, s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = msg;
}

static struct sim_msg *
heap_pop(struct sim *s)
{
	struct sim_msg *top = s->heap[0], *last;
	size_t i = 0;

	last = s->heap[--s->nheap];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && msg_before(s->heap[c + 1], s->heap[c]))
			c++;
		if (!msg_before(s->heap[c], last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap > 0)
		s->heap[i] = last;
	return top;
}

static uint64_t
sim_delay(struct sim *s)
{
	uint64_t us = SIM_DELAY_US;

	if (s->cs->reorder)
		us += sim_rand(s) % (SIM_JITTER_US + 1);
	if (sim_chance(s, s->cs->late))
		us += SIM_LATE_MIN_US + sim_rand(s) % (SIM_LATE_MAX_US - SIM_LATE_MIN_US + 1);
	return us * SIM_US;
}

/* Put one message on the wire: lost, delivered once, or delivered twice. */
void
sim_wire(struct sim *s, uint64_t src, int32_t to, uint32_t gen, const void *a, size_t alen,
	 const void *b, size_t blen)
{
	unsigned int copies = 1, k;

	if (to < 0)
		s->pkts_up++;
	else
		s->pkts_down++;
	if (sim_chance(s, s->cs->loss)) {
		s->drops++;
		return;
	}
	if (sim_chance(s, s->cs->dup)) {
		s->dups++;
		copies = 2;
	}
	for (k = 0; k < copies; k++) {
		struct sim_msg *msg = malloc(sizeof(*msg) + alen + blen);

		CHECK(msg != NULL);
		msg->at = s->now + sim_delay(s);
		msg->seq = s->seq++;
		msg->src = src;
		msg->to = to;
		msg->gen = gen;
		msg->len = (uint32_t)(alen + blen);
		memcpy(msg->data, a, alen);
		if (blen)
			memcpy(msg->data + alen, b, blen);
		sim_heap_push(s, msg);
	}
}

/* Deliver one message at a given time, off the lossy wire (a copy the case holds back). */
void
sim_push(struct sim *s, uint64_t at, uint64_t src, int32_t to, uint32_t gen, const void *data,
	 size_t len)
{
	struct sim_msg *msg = malloc(sizeof(*msg) + len);

	CHECK(msg != NULL);
	msg->at = at;
	msg->seq = s->seq++;
	msg->src = src;
	msg->to = to;
	msg->gen = gen;
	msg->len = (uint32_t)len;
	memcpy(msg->data, data, len);
	sim_heap_push(s, msg);
}

static bool
sim_deliver(struct sim *s, struct sim_msg *msg)
{
	enum shr_proto_reason r;

	if (msg->to >= 0) {
		struct member *m = &s->m[msg->to];

		if (m->state == M_DEAD) {
			s->dead_drops++;	/* no process: the port is closed */
			return true;
		}
		if (s->now < m->pause_until) {
			msg->at = m->pause_until;
			msg->seq = s->seq++;
			sim_heap_push(s, msg);
			return false;
		}
		sim_member_rx(m, msg->data, msg->len);
		return true;
	}
	r = shr_agg_input(s->agg, msg->src, msg->data, msg->len, s->now, &s->tx, &s->st);
	if (r != SHR_PROTO_OK) {
		/*
		 * Stale copies (duplicated or delayed) of a member that has left: the box
		 * remembers the JOIN nonces of an incarnation that has ended, and a static
		 * job has started its next incarnation by then (another token).
		 */
		const struct member *m = sim_member_of(s, msg->src);
		bool stale = r == SHR_PROTO_UNKNOWN_JOB || r == SHR_PROTO_SPOOFED ||
			     r == SHR_PROTO_STALE_JOIN ||
			     (s->cs->is_static && r == SHR_PROTO_BAD_TOKEN);

		if (sim_restart_old(s, msg, m))
			s->old_refused++;	/* of a process or incarnation that has ended */
		else if (m->state < M_LEAVING || !stale)
			FAIL("%s: box refused %s from rank %u job %u (state %d)",
				 s->cs->name, shr_proto_reason_str(r), m->rank, m->job,
				 m->state);
		else
			s->stale_rejects++;
	}
	sim_agg_out(s);
	return true;
}

/* Pop and deliver what is due (everything, if all); then the box's timers. */
static void
sim_drain(struct sim *s, bool all)
{
	while (s->nheap > 0 && (all || s->heap[0]->at <= s->now)) {
		struct sim_msg *msg = heap_pop(s);

		if (all && msg->at > s->now)
			s->now = msg->at;
		s->inflight = msg;	/* freed by sim_free() if the run fails in there */
		if (sim_deliver(s, msg))
			free(msg);
		s->inflight = NULL;
	}
}

static void
sim_body(struct sim *s, const struct shr_agg_params *ap)
{
	const struct sim_case *cs = s->cs;
	struct sim_rtx *rx = &s->rtx;
	uint64_t results = 0, ops = 0, want_ops = 0, timeouts = 0, rto_max = 0;
	unsigned int spins = 0, j;
	uint32_t i;

	sim_jobs_init(s);
	if (cs->is_static)
		sim_static_jobs(s);
	sim_members_init(s);
	if (cs->restart)
		sim_restart_init(s);

	for (;;) {
		uint64_t next = UINT64_MAX;

		for (i = 0; i < s->nm; i++)
			if (s->wake[i] <= s->now)
				sim_member_poll(&s->m[i]);
		sim_drain(s, false);
		for (;;) {
			/* an abort, or a nudge (a RESULT resent: tx set, 0 returned) */
			int aborted = shr_agg_tick(s->agg, s->now, &s->tx, &s->st);

			if (aborted == 0 && s->tx.len == 0)
				break;
			if (aborted != 0)
				s->ghosts++; /* sim_member_rx() fails unless its members are done */
			sim_agg_out(s);
		}
		if (s->ndone == s->nm)
			break;
		for (i = 0; i < s->nm; i++)
			if (s->wake[i] < next)
				next = s->wake[i];
		if (next == 0) {
			/* Results came in: let the endpoints send at once. */
			if (++spins > 1000)
				FAIL("%s: an endpoint asks for work that poll never does",
				     cs->name);
			continue;
		}
		spins = 0;
		if (s->nheap > 0 && s->heap[0]->at < next)
			next = s->heap[0]->at;
		if (next <= s->now)
			next = s->now + 1;
		/* 1 us grid: messages sent together arrive together. */
		s->now = (next + SIM_US - 1) / SIM_US * SIM_US;
		if (s->now > SIM_FAKE_LIMIT_NS) {
			unsigned int st[M_DEAD + 1] = { 0 };

			for (i = 0; i < s->nm; i++)
				st[s->m[i].state]++;
			sim_fail(s, SIM_HANG, "%s: no progress after %llu ns of fake time "
				 "(members joining %u running %u leaving %u done %u dead %u)",
				 cs->name, (unsigned long long)s->now, st[M_JOINING],
				 st[M_RUNNING], st[M_LEAVING], st[M_DONE], st[M_DEAD]);
		}
	}

	/* Deliver what is still on the wire, then let stale JOINs' ghost jobs time out. */
	sim_drain(s, true);
	for (i = 0; i < SIM_JOBS * 4; i++) {
		/* A member that gave up leaving is still bound: the box reclaims the job idle. */
		uint64_t later = s->leave_unacked ? ap->idle_ns + ap->job_timeout_ns :
				 3 * ap->job_timeout_ns;

		if (shr_agg_tick(s->agg, s->now + later, &s->tx, &s->st) == 0)
			break;
		s->ghosts++;
		sim_agg_out(s);
		sim_drain(s, true);
	}
	if (cs->is_static) {
		/* Reset for the next run (all have left): taken out, their slots come back. */
		for (j = 0; j < SIM_JOBS; j++)
			CHECK(shr_agg_job_del(s->agg, s->jobs[j].id) == 0);
	}
	if (shr_agg_slots_used(s->agg) != 0)
		FAIL("%s: %u slots still used at the end (%u member(s) gave up leaving)", cs->name,
		     shr_agg_slots_used(s->agg), s->leave_unacked);
	for (i = 0; i < ap->max_jobs; i++) {
		struct shr_agg_job_info info;

		CHECK(shr_agg_job_info(s->agg, i, &info) == 0);
	}

	sim_check_results(s);
	sim_restart_end(s);
	/* Every round completed exactly once at the box (and some before a restart). */
	if (cs->restart)
		CHECK(s->st.completed >= s->jobs[0].chunks + s->jobs[1].chunks);
	else
		CHECK(s->st.completed == s->jobs[0].chunks + s->jobs[1].chunks);
	CHECK(s->st.rejects[SHR_PROTO_OUT_OF_STEP] == 0);
	CHECK(s->st.rejects[SHR_PROTO_BAD_CRC] == 0);
	if (!cs->is_static)
		CHECK(s->st.jobs_freed == SIM_JOBS + s->ghosts + s->st.incarnations -
					  s->st.idle_reclaims);
	CHECK(s->st.aborts == s->ghosts + s->st.incarnations);
	for (i = 0; i < s->nm; i++) {
		struct shr_endpoint_stats es;

		shr_endpoint_stats_get(s->m[i].ep, &es);
		rx->tx_data += es.tx_data;
		rx->tx_retx += es.tx_retx;
		rx->tx_fast += es.tx_fast;
		rx->fast_peer += es.fast_peer;
		rx->tx_rto += es.tx_rto;
		rx->spurious += es.spurious;
		rx->hint_held += es.hint_held;
		rx->hint_resent += es.hint_resent;
		timeouts += es.timeouts;
		if (es.rto_ns << es.backoff > rto_max)
			rto_max = es.rto_ns << es.backoff;
		results += es.rx_results;
		ops += es.ops_done;
		want_ops += s->jobs[s->m[i].job].nops;
		CHECK(es.tx_data == s->jobs[s->m[i].job].chunks);
		CHECK(es.rx_results == s->jobs[s->m[i].job].chunks);
	}
	CHECK(ops == want_ops);
	if (cs->loss == 0 && cs->dup == 0 && cs->late == 0 && cs->pause == 0 && !cs->phantom &&
	    !cs->reorder)
		CHECK(rx->tx_retx == 0);

	if (!cs->quiet) {
#define ULL(x) ((unsigned long long)(x))
		printf("[ sim ] %-28s pkts up %7llu down %7llu drop %6llu dup %5llu | data %6llu "
		       "retx %7llu (fast %6llu spur %5llu) timeouts %6llu rto<=%6.0f us | resent "
		       "%5llu dupdrop %6llu stale %3llu late %3llu ghost %u | fake %7.1f ms\n",
		       cs->name, ULL(s->pkts_up), ULL(s->pkts_down), ULL(s->drops), ULL(s->dups),
		       ULL(rx->tx_data), ULL(rx->tx_retx), ULL(rx->tx_fast), ULL(rx->spurious),
		       ULL(timeouts),
		       (double)rto_max / 1e3, ULL(s->st.resent), ULL(s->st.duplicates),
		       ULL(s->st.stale), ULL(s->stale_rejects), s->ghosts, (double)s->now / 1e6);
		if (cs->restart)
			printf("[ sim ] %-28s restart: crashed after %u/%u ops, incarnations %llu "
			       "restarts %u | old refused %llu, replayed %llu, foreign at members "
			       "%llu, to dead %llu\n", cs->name, s->rs[0].crash_ops,
			       s->rs[1].crash_ops, ULL(s->st.incarnations), s->restarts,
			       ULL(s->old_refused), ULL(s->replays), ULL(s->foreign),
			       ULL(s->dead_drops));
#undef ULL
		fflush(stdout);
	}
}

static void
sim_free(struct sim *s)
{
	uint32_t i;

	for (i = 0; i < s->nm; i++) {
		unsigned int o;

		shr_endpoint_free(s->m[i].ep);
		for (o = 0; o < s->jobs[s->m[i].job].nops; o++) {
			free(s->m[i].in[o]);
			free(s->m[i].out[o]);
		}
	}
	while (s->nheap > 0)
		free(heap_pop(s));
	free(s->inflight);
	free(s->m);
	free(s->wake);
	free(s->heap);
	free(s->txbuf);
	sim_restart_free(s);
	shr_agg_free(s->agg);
	free(s);
}

int
sim_run(const struct sim_case *cs, struct sim_result *res)
{
	struct shr_agg_params ap = {
		.nslots = 64,
		.max_elems = SIM_MAX_CHUNK,
		.max_world = SIM_MAX_WORLD,
		.max_jobs = 8,
		.max_window = 64,
		.lanes = 1,
		.job_timeout_ns = (cs->job_timeout_ms ? cs->job_timeout_ms : 2000) * 1000000ull,
		.idle_ns = 60000000000ull,	/* the box's default */
	};
	struct sim *s;

	memset(res, 0, sizeof(*res));
	if (cs->n == 0 || cs->n > SIM_MAX_WORLD || cs->chunk > SIM_MAX_CHUNK) {
		res->verdict = SIM_WRONG;
		snprintf(res->err, sizeof(res->err), "%s: bad case", cs->name);
		return res->verdict;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		res->verdict = SIM_WRONG;
		snprintf(res->err, sizeof(res->err), "%s: out of memory", cs->name);
		return res->verdict;
	}
	s->cs = cs;
	s->res = res;
	s->rng = cs->seed != 0 ? sim_mix64(cs->seed) :
		 sim_mix64(cs->n * 1000003ull + cs->loss * 101ull + cs->dup * 7ull + cs->reorder);
	s->now = 1;
	sim_cur = s;
	if (setjmp(s->fail_jmp) == 0) {
		s->agg = shr_agg_create(&ap);
		CHECK(s->agg != NULL);
		s->txbuf = malloc(shr_agg_tx_cap(s->agg));
		CHECK(s->txbuf != NULL);
		s->tx.buf = s->txbuf;
		s->tx.cap = shr_agg_tx_cap(s->agg);
		sim_body(s, &ap);
	}
	res->fake_ns = s->now;
	res->stale = s->st.stale;
	res->injected = s->ph_done;
	res->leave_unacked = s->leave_unacked;
	res->incarnations = s->st.incarnations;
	res->restarts = s->restarts;
	res->replays = s->replays;
	res->old_refused = s->old_refused;
	res->foreign = s->foreign;
	res->rtx = s->rtx;
	sim_cur = NULL;
	sim_free(s);
	return res->verdict;
}
