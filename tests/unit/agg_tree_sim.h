/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The simulated tree of boxes that test_agg_tree*.c share (agg_tree_sim.c): real aggregators
 * (a root, and mid-level and leaf boxes with an upstream) and real endpoints (lib/endpoint)
 * as members, wired by an in-memory network that drops, duplicates and reorders every message
 * on every link (members' and boxes') with a seeded PRNG, on a fake clock. Members JOIN their
 * leaf in band (with their tree rank when t_net::tree_world is set), then run what the test
 * submits.
 */

#ifndef SHR_AGG_TREE_SIM_H
#define SHR_AGG_TREE_SIM_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <shr_agg.h>
#include <shr_endpoint.h>
#include <shr_proto.h>

#define T_BOXES_MAX 8
#define T_MEMS_MAX 16
#define T_NET_MAX 65536
#define T_MSG_MAX (SHR_PROTO_HDR_LEN + 4 * 256)
#define T_JOB 77
#define T_CHUNK 64
#define T_WINDOW 16
#define T_PORT 47000
#define T_TMO_NS 2000000000ull	/* the boxes' job timeout (as test_sim) */

struct t_pkt {
	uint64_t at;
	uint64_t src, dst;
	uint16_t len;
	uint8_t b[T_MSG_MAX];
};

struct t_box {
	struct shr_agg *agg;
	uint64_t addr;
	int parent;		/* box index, -1: root */
	int dead;
	struct shr_agg_stats st;
};

struct t_net;

struct t_mem {
	struct t_net *net;
	uint64_t addr;
	int box;
	uint16_t rank;
	uint16_t grank;		/* its rank in the whole tree (leaf order, then rank) */
	uint64_t nonce, token;
	uint32_t window, chunk;
	int joined, left, dead, failed;
	uint64_t fail_at;
	int err;
	struct shr_endpoint *ep;
	uint64_t next_ctl;
	struct shr_proto_msg abort;	/* the ABORT it took (type 0: none) */
};

struct t_net {
	uint64_t now;
	uint64_t rng;
	unsigned int loss, dup, jitter_us;
	struct t_pkt *q;	/* unordered pool of packets in flight */
	uint32_t nq;
	struct t_box box[T_BOXES_MAX];
	unsigned int nbox;
	struct t_mem mem[T_MEMS_MAX];
	unsigned int nmem;
	uint16_t world;
	uint16_t tree_world;	/* members JOIN with their tree rank (0: plain members) */
	uint64_t drop_to;	/* the next message of type drop_type to this address is lost */
	uint8_t drop_type;	/* (0: none) */
	uint64_t rejects;	/* refusals other than stale ones */
};

uint32_t t_rand(struct t_net *n);
void t_put(struct t_net *n, uint64_t src, uint64_t dst, const void *hdr, const void *pl,
	   size_t plen);
void t_box_tx(struct t_net *n, const struct t_box *bx, const struct shr_agg_tx *tx);
int t_ep_send(void *ctx, const void *hdr, const void *payload, size_t plen);
uint64_t t_ep_now(void *ctx);
void t_mem_ctl(struct t_net *n, struct t_mem *m, uint8_t type);
void t_mem_rx(struct t_net *n, struct t_mem *m, const struct t_pkt *p);
void t_step(struct t_net *n);
void t_build(struct t_net *n, const int *parent, unsigned int nbox, unsigned int per_leaf,
	uint64_t seed, unsigned int loss, unsigned int dup);
void t_free(struct t_net *n);
int t_run_until(struct t_net *n, int (*cond)(const struct t_mem *), uint64_t limit_ns);
int t_is_joined(const struct t_mem *m);
int t_is_idle(const struct t_mem *m);
int t_is_failed(const struct t_mem *m);
int t_is_left(const struct t_mem *m);
int32_t t_input(unsigned int member, uint64_t i, unsigned int round);
void t_allreduce_i32(struct t_net *n, unsigned int round, uint64_t count);
void t_join(struct t_net *n);

#endif /* SHR_AGG_TREE_SIM_H */
