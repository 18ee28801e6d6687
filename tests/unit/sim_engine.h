/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

/*
 * The simulation of test_sim and sim_campaign: N endpoints (lib/endpoint, fake clock) and one
 * aggregator (lib/agg), wired by an in-memory channel that drops, duplicates, delays (hence
 * reorders) and holds back messages in both directions, with a seeded PRNG; members may be
 * paused (a stopped process: it neither sends nor reads, its messages wait for it).
 *
 * Each case runs two jobs at once on one aggregator: an int32 job and a float32 job, N
 * members each, both made by JOIN or both static (shr_agg_job_add(), with the members'
 * addresses or binding on JOIN; ordered). Members JOIN in-band (resent until acked), run a
 * series of allreduces back to back (the lengths of the case, then a float32 one with
 * fractional inputs), then LEAVE (resent until acked). Checked: int32 results exact at every
 * rank; float32 results bit-identical at every rank and equal to the sum for small-integer
 * inputs; every round completed exactly once at the box; no refusal other than the stale
 * ones a lossy, duplicating network produces after a member left; no ABORT to a member
 * still running; all slots free at the end. A member resends LEAVE for 500 ms (as lib/comm)
 * and then gives up: counted in sim_result::leave_unacked, which the caller judges.
 *
 * Restarts (sim_case::restart, issue 14): in each job, one member's process crashes after
 * restart_after completed allreduces, partway through the next one, and starts again on the
 * same address with a new nonce and new inputs; the members of the old incarnation that the
 * box aborts (or whose old incarnation times out) restart the same way, as a launcher would.
 * The old processes' messages still on the wire are dropped, duplicated and delayed like any
 * other, and copies of them are also delivered to the new run on purpose: each old DATA
 * (the first copy of each chunk) just before the new process sends the same chunk, each old
 * RESULT to the new process just after it sends the chunk that RESULT answers (so that it
 * arrives while that chunk is outstanding), and the old process's JOIN and LEAVE and the
 * old incarnation's ABORT when the new process starts running. Checked besides: the box may
 * refuse anything of an old process or incarnation, never a message of the new one; a
 * member takes an ABORT only from its own incarnation, and a member of the new incarnation
 * never gets one; a RESULT with another incarnation's token is refused by lib/endpoint
 * (-EINVAL) wherever it arrives; at the end every member of a job holds the same token,
 * not the old one, and every result is exact for the inputs of the processes that ran it.
 */

#include <stdint.h>

/** One run. */
struct sim_case {
	char name[128];
	uint16_t n;		/* members per job (world) */
	uint8_t loss;		/* percent, each direction, each copy */
	uint8_t dup;		/* percent */
	uint8_t reorder;	/* 0/1: jittered delay (0-40 us) */
	uint8_t late;		/* percent of copies held back 0.3-5 ms more */
	uint8_t pause;		/* percent of members paused once */
	uint32_t pause_max_us;	/* longest pause */
	uint8_t is_static;	/* 1: static jobs with the members' addresses; 2: static jobs
				 *   bound on JOIN; 0: jobs made by JOIN */
	uint8_t phantom;	/* rank 0's first DATA on slot 0 of job 0 comes again once
				 *   the slot's next round has completed (a copy held back) */
	uint32_t window;	/* slots the JOINs ask for */
	uint32_t inflight;	/* the endpoints' chunks outstanding at most; 0: window */
	uint32_t chunk;
	uint32_t job_timeout_ms; /* the box's; 0: 2000 */
	uint64_t lens[8];
	unsigned int nlens;
	uint8_t restart;	/* 1: in each job a member crashes and restarts (above) */
	uint8_t restart_after;	/* allreduces the crashing member completes first */
	uint16_t restart_rank;	/* which (job 0: this rank mod n; job 1: the next one) */
	uint32_t restart_us;	/* a new process JOINs 0 to this many us after the old one
				 *   ended (crash, or ABORT); 0: 2000 */
	uint64_t seed;		/* 0: derived from the network parameters */
	uint8_t quiet;		/* no summary line */
};

enum sim_verdict {
	SIM_OK = 0,
	SIM_WRONG,	/* a wrong result, a refusal, an abort, an inconsistency */
	SIM_HANG,	/* no progress for 120 s of fake time */
};

/** Loss recovery, summed over the members (their struct shr_endpoint_stats fields). */
struct sim_rtx {
	uint64_t tx_data, tx_retx, tx_fast, fast_peer, tx_rto, spurious, hint_held, hint_resent;
};

/** What a run found. */
struct sim_result {
	enum sim_verdict verdict;
	char err[256];		/* the first failure */
	uint64_t fake_ns;	/* fake time at the end */
	uint64_t stale;		/* the box's stale-copy drops */
	uint64_t injected;	/* phantom copies delivered */
	unsigned int leave_unacked; /* members whose LEAVE was never acknowledged (they
				     *   gave up after 500 ms, as lib/comm does) */
	/* restarts */
	uint64_t incarnations;	/* the box's: incarnations ended by a restarted member */
	unsigned int crash_ops[2]; /* per job: allreduces its crashing member had completed */
	unsigned int restarts;	/* processes started again (crashed, or aborted) */
	uint64_t replays;	/* old messages delivered to the new run on purpose */
	uint64_t old_refused;	/* messages of old processes or incarnations the box refused */
	uint64_t foreign;	/* RESULTs and ABORTs with another token, dropped at members */
	struct sim_rtx rtx;	/* the members' loss recovery (not complete if the run failed) */
};

/**
 * Run one case. Returns 0 (SIM_OK) or the verdict, with res->err saying why.
 */
int sim_run(const struct sim_case *cs, struct sim_result *res);

#endif /* SIM_ENGINE_H */
