/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The rounds of one collective: its round space, blocks and buffers (shr_endpoint_plan.h). */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <shr_proto.h>

#include "shr_endpoint_plan.h"

/* Blocks of the round space. */
static uint64_t
plan_blocks(uint8_t kind, uint16_t world)
{
	switch (kind) {
	case SHR_KIND_REDUCE_SCATTER:
	case SHR_KIND_ALLGATHER:
	case SHR_KIND_GATHER:
	case SHR_KIND_SCATTER:
		return world;
	case SHR_KIND_ALLTOALL:
		return (uint64_t)world * world;
	default:
		return 1;
	}
}

/* Blocks whose source is their destination (no round). */
static uint64_t
plan_skipped(uint8_t kind, uint16_t world)
{
	switch (kind) {
	case SHR_KIND_GATHER:
	case SHR_KIND_SCATTER:
		return 1;
	case SHR_KIND_ALLTOALL:
		return world;
	default:
		return 0;
	}
}

static bool
plan_block_skipped(const struct shr_endpoint_op *op, uint16_t world, uint64_t b)
{
	switch (op->kind) {
	case SHR_KIND_GATHER:
	case SHR_KIND_SCATTER:
		return b == op->root;
	case SHR_KIND_ALLTOALL:
		return b / world == b % world;
	default:
		return false;
	}
}

/* Elements of in and out that rank uses (0: the buffer is not used, may be NULL). */
static void
plan_sizes(const struct shr_endpoint_op *op, uint16_t world, uint16_t rank, uint64_t *in,
	   uint64_t *out)
{
	uint64_t c = op->count, nc = (uint64_t)world * op->count;
	bool root = rank == op->root;

	switch (op->kind) {
	case SHR_KIND_REDUCE:
		*in = c;
		*out = root ? c : 0;
		break;
	case SHR_KIND_REDUCE_SCATTER:
		*in = nc;
		*out = c;
		break;
	case SHR_KIND_BROADCAST:
		*in = root ? c : 0;
		*out = root ? 0 : c;
		break;
	case SHR_KIND_ALLGATHER:
		*in = c;
		*out = nc;
		break;
	case SHR_KIND_GATHER:
		*in = c;
		*out = root ? nc : 0;
		break;
	case SHR_KIND_SCATTER:
		*in = root ? nc : 0;
		*out = c;
		break;
	case SHR_KIND_ALLTOALL:
		*in = nc;
		*out = nc;
		break;
	default:
		*in = c;
		*out = c;
		break;
	}
}

/* A buffer of n elements at p: not NULL, no wrap. Its byte size in *bytes. */
static bool
plan_buf_ok(const void *p, uint64_t n, unsigned int esize, uintptr_t *bytes)
{
	*bytes = 0;
	if (n == 0)
		return true;
	if (p == NULL || n > SIZE_MAX / esize)
		return false;
	*bytes = (uintptr_t)(n * esize);
	return (uintptr_t)p + *bytes >= (uintptr_t)p;
}

int
ep_plan_check(const struct shr_endpoint_op *op, uint8_t dtype, uint16_t world, uint16_t rank)
{
	unsigned int esize = shr_proto_dtype_size(dtype);
	uint64_t nin, nout;
	uintptr_t in = (uintptr_t)op->in, out = (uintptr_t)op->out, bin, bout;

	if (op->kind >= SHR_KIND_MAX || op->root >= world || esize == 0)
		return -EINVAL;
	if (!shr_proto_kind_relay(op->kind)) {
		if (op->op >= SHR_OP_MAX_)
			return -EINVAL;
		/* A product of quantised values would scale with the block exponent. */
		if (dtype == SHR_DTYPE_QINT32 && op->op == SHR_OP_PROD)
			return -EINVAL;
	}
	if (op->count == 0)
		return 0;
	/* The round space (N x N blocks for alltoall) and every buffer fit. */
	if (op->count > UINT64_MAX / plan_blocks(op->kind, world) ||
	    op->count > SIZE_MAX / esize / world)
		return -EINVAL;
	plan_sizes(op, world, rank, &nin, &nout);
	if (!plan_buf_ok(op->in, nin, esize, &bin) || !plan_buf_ok(op->out, nout, esize, &bout))
		return -EINVAL;
	if (nin == 0 || nout == 0)
		return 0;
	/* In place (the same buffer) only where every result lands on its own input. */
	if (in == out && (op->kind == SHR_KIND_ALLREDUCE || op->kind == SHR_KIND_REDUCE))
		return 0;
	if (in < out + bout && out < in + bin)
		return -EINVAL;
	return 0;
}

uint64_t
ep_plan_space(const struct shr_endpoint_op *op, uint16_t world)
{
	return plan_blocks(op->kind, world) * op->count;
}

uint64_t
ep_plan_nchunks(const struct shr_endpoint_op *op, uint16_t world, uint32_t chunk)
{
	uint64_t per = (op->count + chunk - 1) / chunk;

	return (plan_blocks(op->kind, world) - plan_skipped(op->kind, world)) * per;
}

uint64_t
ep_plan_norm(const struct shr_endpoint_op *op, uint16_t world, uint64_t off)
{
	uint64_t space = ep_plan_space(op, world), b;

	while (off < space) {
		b = off / op->count;
		if (!plan_block_skipped(op, world, b))
			return off;
		off = (b + 1) * op->count;
	}
	return space;
}

void
ep_plan_round(const struct shr_endpoint_op *op, uint16_t world, uint16_t rank, uint64_t off,
	      struct ep_round *r)
{
	uint64_t c = op->count, b = off / c, w = off % c;
	uint16_t i, j;

	r->end = (b + 1) * c;
	r->in_off = EP_PLAN_NONE;
	r->out_off = EP_PLAN_NONE;
	r->aux = 0;
	r->root = 0;
	switch (op->kind) {
	case SHR_KIND_ALLREDUCE:
		r->in_off = off;
		r->out_off = off;
		break;
	case SHR_KIND_REDUCE:
		r->root = op->root;
		r->in_off = off;
		if (rank == op->root)
			r->out_off = off;
		break;
	case SHR_KIND_REDUCE_SCATTER:
		r->root = (uint16_t)b;
		r->in_off = off;
		if (rank == b)
			r->out_off = w;
		break;
	case SHR_KIND_BROADCAST:
		r->root = op->root;
		r->aux = SHR_PROTO_RANK_ALL;
		if (rank == op->root)
			r->in_off = off;
		else
			r->out_off = off;
		break;
	case SHR_KIND_ALLGATHER:
		r->root = (uint16_t)b;
		r->aux = SHR_PROTO_RANK_ALL;
		if (rank == b)
			r->in_off = w;
		else
			r->out_off = off;
		break;
	case SHR_KIND_GATHER:
		r->root = (uint16_t)b;
		r->aux = op->root;
		if (rank == b)
			r->in_off = w;
		if (rank == op->root)
			r->out_off = off;
		break;
	case SHR_KIND_SCATTER:
		r->root = op->root;
		r->aux = (uint32_t)b;
		if (rank == op->root)
			r->in_off = off;
		if (rank == b)
			r->out_off = w;
		break;
	default:	/* SHR_KIND_ALLTOALL */
		i = (uint16_t)(b / world);
		j = (uint16_t)(b % world);
		r->root = i;
		r->aux = j;
		if (rank == i)
			r->in_off = (uint64_t)j * c + w;
		if (rank == j)
			r->out_off = (uint64_t)i * c + w;
		break;
	}
}

void
ep_plan_local(const struct shr_endpoint_op *op, uint16_t world, uint16_t rank,
	      unsigned int esize)
{
	size_t bytes = (size_t)op->count * esize, mine = (size_t)rank * bytes;
	const uint8_t *in = op->in;
	uint8_t *out = op->out;

	(void)world;
	if (op->count == 0)
		return;
	switch (op->kind) {
	case SHR_KIND_ALLGATHER:
		memcpy(out + mine, in, bytes);
		break;
	case SHR_KIND_GATHER:
		if (rank == op->root)
			memcpy(out + mine, in, bytes);
		break;
	case SHR_KIND_SCATTER:
		if (rank == op->root)
			memcpy(out, in + mine, bytes);
		break;
	case SHR_KIND_ALLTOALL:
		memcpy(out + mine, in + mine, bytes);
		break;
	default:
		break;
	}
}
