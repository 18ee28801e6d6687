/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SIM_PRIV_H
#define SIM_PRIV_H

/*
 * Private to the simulation of sim_engine.h: its state, shared by sim_engine.c (the run, the
 * network, the event loop) and sim_members.c (the members, the jobs, the box's output).
 */

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <shr_agg.h>
#include <shr_endpoint.h>
#include <shr_proto.h>

#include "sim_engine.h"

#define SIM_US 1000ull
#define SIM_BASE_IP 0xc6120001u		/* 198.18.0.1 */
#define SIM_BASE_PORT 40000u
#define SIM_DELAY_US 20u		/* one-way base delay */
#define SIM_JITTER_US 40u		/* extra delay when reordering */
#define SIM_CTRL_RETRY_NS (300 * SIM_US)	/* JOIN / LEAVE resend */
#define SIM_FAKE_LIMIT_NS 120000000000ull	/* 120 s of fake time: a hang */
#define SIM_LATE_MIN_US 300u		/* a late copy: held back this much... */
#define SIM_LATE_MAX_US 5000u		/* ...to this much more */
#define SIM_LEAVE_WAIT_NS 500000000ull	/* LEAVE resent this long, as lib/comm */
#define SIM_PAUSE_FROM_NS 5000000ull	/* a pause starts in the first 5 ms */
#define SIM_MAX_OPS 16
#define SIM_JOBS 2
#define SIM_MAX_WORLD 1024
#define SIM_MAX_CHUNK 256
#define SIM_RESTART_US 2000u		/* a restart comes at most this late (default) */
#define SIM_STASH 256			/* chunks of a job whose old copies are kept... */
#define SIM_STASH_RANKS 8		/* ...and ranks whose old DATA is */

/* The run in progress (one at a time), and how a check fails it. */
extern struct sim *sim_cur;

void sim_fail(struct sim *s, enum sim_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

#define CHECK(c) do {								\
	if (!(c))								\
		sim_fail(sim_cur, SIM_WRONG, "%s: %s:%d: check failed: %s",	\
			 sim_cur->cs->name, __FILE__, __LINE__, #c);			\
} while (0)
#define FAIL(...) sim_fail(sim_cur, SIM_WRONG, __VA_ARGS__)

/* M_DEAD: its process has ended (crashed, or aborted); it restarts at restart_at */
enum { M_JOINING, M_RUNNING, M_LEAVING, M_DONE, M_DEAD };
enum { K_I32, K_F32_INT, K_F32_RAND };

struct sim_msg {
	uint64_t at;
	uint64_t seq;
	uint64_t src;
	int32_t to;		/* -1: the aggregator, else a member index */
	uint32_t gen;		/* to the aggregator: the sender's process (member::gen) */
	uint32_t len;
	uint8_t data[];
};

struct sim_op {
	uint8_t kind;
	uint64_t count;
	uint32_t tensor;
};

struct sim_job {
	uint32_t id;
	uint8_t dtype;
	unsigned int nops;
	struct sim_op ops[SIM_MAX_OPS];
	uint64_t chunks;	/* rounds the box must complete */
};

struct sim;

struct member {
	struct sim *sim;
	uint32_t idx;
	unsigned int job;	/* index in sim->jobs */
	uint16_t rank;
	uint64_t addr;
	int state;
	bool dirty;
	uint64_t next_ctrl;
	uint64_t nonce;		/* of its JOIN */
	uint64_t token;		/* the incarnation's, from the JOIN_ACK */
	struct shr_endpoint *ep;
	uint64_t leave_ns;	/* its first LEAVE */
	uint64_t pause_at;	/* fake time a pause starts (UINT64_MAX: none) */
	uint64_t pause_ns;	/* its length */
	uint64_t pause_until;	/* paused until then (0: not yet) */
	/* restarts */
	uint32_t gen;		/* its process: 0 the first, 1 after a restart */
	bool crashing;		/* crashes at the end of this poll (sends nothing more) */
	bool replayed;		/* the old process's JOIN, LEAVE, ABORT replayed */
	uint64_t sent_next;	/* one past the highest chunk (job-wide index) sent */
	uint64_t restart_at;	/* M_DEAD: when its new process starts */
	uint64_t old_nonce;	/* the previous process's nonce and token (0: none) */
	uint64_t old_token;
	int handles[SIM_MAX_OPS];
	void *in[SIM_MAX_OPS];
	void *out[SIM_MAX_OPS];
};

/* A message kept to be delivered again. */
struct sim_blob {
	uint32_t len;
	uint8_t data[];
};

/* A job's restart (sim_case::restart). */
struct sim_rs {
	bool crashed;		/* its member has crashed: the old incarnation is over */
	uint16_t rank;		/* the member that crashes */
	uint64_t at_chunk;	/* it crashes when about to send this chunk, k ops done */
	uint64_t base[SIM_MAX_OPS + 1]; /* first chunk (job-wide index) of each op */
	uint64_t ebase[SIM_MAX_OPS + 1]; /* first element (stream offset) of each op */
	uint64_t old_token;	/* the incarnation that crashed */
	unsigned int crash_ops;	/* ops it had completed */
	struct sim_blob *result[SIM_STASH];	/* first RESULT of each chunk */
	uint64_t result_done[SIM_STASH];	/* ranks it was replayed to */
	struct sim_blob *data[SIM_STASH][SIM_STASH_RANKS]; /* first DATA of an old process */
	uint8_t data_done[SIM_STASH];		/* ranks whose old DATA was replayed */
	uint8_t abort_msg[SHR_PROTO_HDR_LEN];	/* first ABORT of the job */
	bool have_abort;
};

struct sim {
	struct sim_rtx rtx;	/* the members' resends, summed at the end (sim_body) */
	const struct sim_case *cs;
	uint64_t now;
	uint64_t rng;
	uint64_t seq;
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	uint8_t *txbuf;
	struct sim_msg **heap;
	size_t nheap;
	size_t capheap;
	struct member *m;
	uint64_t *wake;		/* per member: when it has work (0 now, UINT64_MAX never) */
	uint32_t nm;
	uint32_t ndone;
	unsigned int ghosts;		/* ghost jobs (a stale JOIN's) aborted by the box */
	unsigned int leave_unacked;	/* members that gave up leaving */
	struct sim_job jobs[SIM_JOBS];
	uint64_t addrs[SIM_JOBS][SIM_MAX_WORLD];	/* static jobs' member addresses */
	/* phantom: a copy of one DATA held back until its slot's next round completed */
	uint8_t ph_msg[SHR_PROTO_HDR_LEN + 4 * SIM_MAX_CHUNK];
	uint32_t ph_len;
	uint32_t ph_step;
	uint64_t ph_src;
	uint32_t ph_gen;
	bool ph_held;
	bool ph_done;
	struct sim_rs rs[SIM_JOBS];
	/* how a run ends early */
	jmp_buf fail_jmp;
	struct sim_msg *inflight;	/* being delivered */
	struct sim_result *res;
	/* counters */
	uint64_t pkts_up, pkts_down, drops, dups, stale_rejects;
	uint64_t old_refused, foreign, replays, dead_drops;
	unsigned int restarts;
};

/* sim_engine.c */
uint64_t sim_mix64(uint64_t x);
uint64_t sim_rand(struct sim *s);
bool sim_chance(struct sim *s, unsigned int percent);
void sim_heap_push(struct sim *s, struct sim_msg *msg);
void sim_wire(struct sim *s, uint64_t src, int32_t to, uint32_t gen, const void *a,
	      size_t alen, const void *b, size_t blen);
void sim_push(struct sim *s, uint64_t at, uint64_t src, int32_t to, uint32_t gen,
	      const void *data, size_t len);

/* sim_members.c */
struct member *sim_member_of(struct sim *s, uint64_t addr);
void sim_member_rx(struct member *m, const uint8_t *buf, size_t len);
void sim_member_poll(struct member *m);
void sim_agg_out(struct sim *s);
void sim_jobs_init(struct sim *s);
void sim_members_init(struct sim *s);
void sim_check_results(struct sim *s);
void sim_static_jobs(struct sim *s);
void sim_member_inputs(struct member *m);
void sim_ctrl_build(const struct member *m, uint8_t type, uint64_t token, void *hdr);

/* sim_restart.c */
void sim_restart_init(struct sim *s);
bool sim_restart_send(struct member *m, const struct shr_proto_hdr *h, const void *payload,
		      size_t payload_len);
void sim_restart_check(struct member *m);
bool sim_restart_abort(struct member *m, const struct shr_proto_msg *abort);
bool sim_restart_failed(struct member *m);
void sim_restart_started(struct member *m);
void sim_restart_revive(struct member *m);
void sim_restart_out(struct sim *s);
bool sim_restart_old(const struct sim *s, const struct sim_msg *msg, const struct member *m);
void sim_restart_end(struct sim *s);
void sim_restart_free(struct sim *s);

#endif /* SIM_PRIV_H */
