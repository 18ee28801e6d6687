/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_COMM_PRIVATE_H
#define SHR_COMM_PRIVATE_H

/*
 * The communicator's state and what its files share (shr_comm.c, shr_comm_create.c,
 * shr_comm_join.c, shr_comm_coll.c and the other shr_comm_*.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <shr_auth.h>
#include <shr_drv.h>
#include <shr_endpoint.h>
#include <shr_proto.h>
#include <shr_spin.h>

#include "shr_comm.h"

#define COMM_DEF_WINDOW 128
#define COMM_MAX_CHUNK 2048	/* auto: the most any box takes (a 9000-byte MTU's worth) */
#define COMM_DEF_TIMEOUT_MS 10000
#define COMM_RTO_INIT_NS 1000000ull
#define COMM_RTO_MAX_US 100000u	/* the endpoint's rto_max (its default, 100 ms) */
#define COMM_TXQ SHR_DRV_BURST_MAX
#define COMM_MAC_SENDERS 65	/* box sender ids (64 lanes + the control context) with a replay
				 * window */
#define COMM_JOIN_RESEND_MIN_NS 20000000ull	/* 20 ms, doubling... */
#define COMM_JOIN_RESEND_MAX_NS 500000000ull	/* ...up to 500 ms */
#define COMM_LEAVE_WAIT_NS 500000000ull		/* 500 ms */
#define COMM_BOX_WAIT_MARGIN_NS 1000000000ull	/* past the box's own wait for a job to fill */
#define COMM_BOX_WAIT_MAX_MS 600000u		/* a box's stated wait is believed up to this */
#define COMM_LEAVE_RESEND_NS 50000000ull	/* 50 ms */
#define COMM_MAX_SLEEP_US 10000			/* re-check timeouts at least this often */
#define COMM_RX_BURSTS 64			/* bursts drained per progress round */
#define COMM_MAX_CHALLENGES 8			/* answered per join, at most */
#define COMM_OPS SHR_ENDPOINT_MAX_OPS		/* collectives remembered (pending at most) */

/*
 * A collective's request and the stream offsets its DATA carry (shr_endpoint_stream_pos()),
 * by call (ncalls % COMM_OPS): the queued sends find their collective by offset.
 */
struct comm_op {
	uint64_t first;
	uint64_t end;
	int req;	/* -1: none */
	struct comm_q *q;	/* a quantised collective's state, until it is found done */
};

/* A quantised collective (shr_comm_quant.c): its int32 buffers and where its floats go. */
struct comm_q {
	int32_t *buf;		/* one allocation: in, res, aux */
	int32_t *in;		/* the quantised inputs (the endpoint's in) */
	int32_t *res;		/* the int32 results (the endpoint's out; in, but for
				   reduce_scatter) */
	uint32_t *aux;		/* per round: the shift s_k, the DATA's aux */
	float *out;		/* the caller's output (NULL: this rank gets none) */
	uint64_t nout;		/* its elements */
	uint64_t out_chunk0;	/* the round of out[0] (reduce_scatter: rank x rounds per
				   block) */
};

struct shr_comm {
	struct shr_comm_params p;
	struct shr_drv *drv;
	struct shr_endpoint *ep;
	uint32_t slots;		/* slots granted (JOIN_ACK) */
	uint32_t chunk_elems;
	uint16_t lanes;
	uint32_t group_ip;	/* the job's result group (JOIN_ACK, SHR_FLAG_GROUP; 0: none) */
	uint16_t group_port;	/* ... its UDP port */
	uint32_t tensor_seq;	/* tensor id of the next collective */
	uint32_t step;		/* step of the next collective (never decreases) */
	uint32_t first_step;	/* step of the first collective */
	uint64_t ncalls;	/* collectives submitted */
	uint64_t nonce;		/* JOIN token: tells this process from an earlier one */
	uint64_t token;		/* the job incarnation's token (from a JOIN_ACK) */
	uint64_t box_wait_ns;	/* the box waits for the job to fill until then (0: not said) */
	uint32_t path_payload;	/* largest UDP payload that reaches the box whole */
	uint32_t path_chunk;	/* largest chunk that fits it (JOIN feedback) */
	uint32_t job_chunk;	/* JOIN_ACK EMSGSIZE: the job's chunk, which does not fit */
	uint32_t box_fit;	/* ... and the largest the box says fits */
	struct shr_auth_secret secret; /* the job's secret (len 0: none) */
	uint8_t adm[SHR_PROTO_ADM_LEN]; /* the box's challenge and our proof */
	bool have_adm;		/* JOINs carry adm */
	uint32_t challenges;	/* challenges answered during this join */

	/* the box's verdict on the job, from control messages */
	bool joined;
	bool left;
	bool aborted;
	uint32_t join_err;	/* JOIN_ACK aux: a refusal */
	uint32_t join_busy;	/* JOIN_ACK aux EADDRINUSE: the rank is held; retried */
	struct shr_comm_abort abort;	/* the box's ABORT (valid when aborted) */
	int fail;		/* sticky failure (negative errno) */

	/* tx queue */
	unsigned int txq_n;
	struct shr_drv_pkt txq[COMM_TXQ];
	uint8_t txq_hdr[COMM_TXQ][SHR_PROTO_HDR_LEN];
	struct comm_op ops[COMM_OPS];

	/* the per-job MAC (shr_comm_mac.c; NULL/0: off or not keyed yet) */
	struct shr_mac *mac;	/* the key of mac_token's incarnation */
	uint64_t mac_token;
	uint64_t mac_ctr;	/* this rank's counter (sender id: the rank) */
	uint8_t *mac_buf;	/* COMM_TXQ signed copies, by queue position */
	struct shr_mac_window *mac_win; /* COMM_MAC_SENDERS: the box's senders */
	uint64_t mac_bad;
	uint64_t mac_replay;
	uint64_t mac_missing;

	uint64_t rx_foreign;
	uint64_t rx_ctl;
	uint64_t tx_deferred;
	uint64_t tx_ended;

	struct shr_spin spin;	/* shr_comm_wait()'s spin before it sleeps */

	struct shr_drv_rx rx[SHR_DRV_BURST_MAX];
};

/* shr_comm.c */
uint64_t comm_now_ns(void *ctx);
int comm_send_ctl(struct shr_comm *c, uint8_t type);
/* The JOIN's flags, feedback, root and tensor (what the admission proof covers too). */
void comm_join_fields(const struct shr_comm *c, uint16_t *flags, uint32_t *feedback, uint16_t *root,
		      uint32_t *tensor);
int comm_round(struct shr_comm *c);
int comm_sleep(struct shr_comm *c, uint64_t max_us);
int comm_failed(struct shr_comm *c, int err);
/* The endpoint's send() (shr_comm_create.c hands it to the endpoint). */
int comm_ep_send(void *ctx, const void *hdr, const void *payload, size_t payload_len);

/* shr_comm_coll.c */
void comm_abort_note(struct shr_comm *c, const struct shr_proto_msg *m);
int comm_abort_str(const struct shr_comm *c, const char *agg, char *buf, size_t len);
int comm_abort_up_str(const struct shr_comm *c, const char *agg, char *buf, size_t len);
const char *comm_ip_str(uint32_t ip, char *buf, size_t len);

int comm_icoll_q(struct shr_comm *comm, uint8_t kind, const void *in, void *out,
		 uint64_t count, uint8_t op, uint16_t root, struct comm_q *q, bool block);

/* shr_comm_quant.c */
int comm_qcoll(struct shr_comm *c, uint8_t kind, const void *in, void *out, uint64_t count,
	       uint8_t op, uint16_t root, bool block);
void comm_q_done(struct shr_comm *c, int req);
void comm_q_free(struct comm_q *q);

/* shr_comm_join.c */
struct shr_drv *comm_drv_open(const struct shr_comm_params *p);
uint64_t comm_nonce(void);
int comm_path(struct shr_comm *c);
int comm_join(struct shr_comm *c);
void comm_join_abandon(struct shr_comm *c);
bool comm_group_offer(const struct shr_comm *c);
int comm_group_join(struct shr_comm *c);
void comm_answer_challenge(struct shr_comm *c, const uint8_t *challenge);
void comm_why_join(const struct shr_comm *c, int rc);

/* The collectives' rank and world: the tree's (shr_comm_params::tree_world), or the job's. */
static inline uint16_t
comm_crank(const struct shr_comm *c)
{
	return c->p.tree_world != 0 ? c->p.tree_rank : c->p.rank;
}

static inline uint16_t
comm_cworld(const struct shr_comm *c)
{
	return c->p.tree_world != 0 ? c->p.tree_world : c->p.world;
}

/* Chunks in flight at most: the window asked for, within the slots granted. */
static inline uint32_t
comm_inflight(const struct shr_comm *c)
{
	return c->p.window < c->slots ? c->p.window : c->slots;
}

/* shr_comm_mac.c */
struct shr_mac;
struct shr_mac_window;
int comm_mac_init(struct shr_comm *c);
void comm_mac_fini(struct shr_comm *c);
void comm_mac_wrap(struct shr_comm *c, unsigned int i);
void comm_mac_move(struct shr_comm *c, unsigned int to, unsigned int from);
bool comm_mac_rx(struct shr_comm *c, const void *data, size_t len);

#endif /* SHR_COMM_PRIVATE_H */
