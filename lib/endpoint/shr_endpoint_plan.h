/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_ENDPOINT_PLAN_H
#define SHR_ENDPOINT_PLAN_H

/*
 * The rounds of one collective (private to lib/endpoint).
 *
 * An operation is a sequence of rounds over its round space: nblocks blocks of count
 * elements each, in block order (see shr_proto.h, "Kinds"):
 * - allreduce, reduce, broadcast: one block, [0, count);
 * - reduce_scatter: N blocks, block b's destination (root) is rank b;
 * - allgather: N blocks, block b's source (root) is rank b, to every rank (aux
 *   SHR_PROTO_RANK_ALL);
 * - gather: N blocks, block b from rank b (root) to the gather root (aux);
 * - scatter: N blocks, block b from the scatter root (root) to rank b (aux);
 * - alltoall: N x N blocks, block (i, j) at (i N + j) count from rank i (root) to rank j
 *   (aux).
 * A relay block whose source is its destination is never a round (every rank skips it; its
 * owner copies it locally at submit). The endpoint cuts each block into chunks of at most
 * chunk_elems elements, so no chunk straddles two blocks.
 */

#include <stdint.h>

#include <shr_proto.h>

#include "shr_endpoint.h"

#define EP_PLAN_NONE UINT64_MAX	/* no buffer offset: header-only, or not a destination */

/* One round (chunk) of an operation, seen from one rank. */
struct ep_round {
	uint64_t end;		/* one past the last offset of the round's block */
	uint64_t in_off;	/* element offset in op->in of this rank's payload, or
				   EP_PLAN_NONE (this rank sends a header-only DATA) */
	uint64_t out_off;	/* element offset in op->out of the result, or EP_PLAN_NONE
				   (not a destination: no payload expected) */
	uint32_t aux;		/* relay rounds: destination or SHR_PROTO_RANK_ALL; else 0 */
	uint16_t root;		/* the round's root (source or destination) */
};

/*
 * Check an operation for a rank of a world (kind, root, op for summed kinds, the buffers this
 * rank needs, sizes that overflow, overlapping buffers). 0 or -EINVAL.
 */
int ep_plan_check(const struct shr_endpoint_op *op, uint8_t dtype, uint16_t world,
		  uint16_t rank);

/* Size of the round space: blocks x count (checked by ep_plan_check()). */
uint64_t ep_plan_space(const struct shr_endpoint_op *op, uint16_t world);

/* Chunks (rounds) of the operation. */
uint64_t ep_plan_nchunks(const struct shr_endpoint_op *op, uint16_t world, uint32_t chunk);

/* off, or the start of the next block that is a round if off's block is skipped. */
uint64_t ep_plan_norm(const struct shr_endpoint_op *op, uint16_t world, uint64_t off);

/* The round at off (a normalised offset < space) as rank sees it. */
void ep_plan_round(const struct shr_endpoint_op *op, uint16_t world, uint16_t rank,
		   uint64_t off, struct ep_round *r);

/* The round (chunk) number of offset off in its op: block after block, each chunked on its own. */
static inline uint64_t
ep_plan_chunk_index(const struct shr_endpoint_op *op, uint64_t off, uint32_t chunk)
{
	uint64_t per = (op->count + chunk - 1) / chunk;

	return off / op->count * per + off % op->count / chunk;
}

/* The op on the wire: the op of a summed kind, SHR_OP_SUM for a relay. */
static inline uint8_t
ep_plan_wire_op(const struct shr_endpoint_op *op)
{
	return shr_proto_kind_relay(op->kind) ? (uint8_t)SHR_OP_SUM : op->op;
}

/* Copy this rank's own block of a relay locally (esize: bytes per element). */
void ep_plan_local(const struct shr_endpoint_op *op, uint16_t world, uint16_t rank,
		   unsigned int esize);

#endif /* SHR_ENDPOINT_PLAN_H */
