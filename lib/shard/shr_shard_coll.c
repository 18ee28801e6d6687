/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The collectives of a sharded rank: each call is cut by shr_shard_split() into one share per
 * box, every share is started (the i-collective of its box's communicator), then shard_run()
 * drives them all to the end. Kinds whose buffers hold one block per rank pack each box's
 * part of every block into that box's staging buffer, and unpack its output from it.
 */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <shr_proto.h>

#include "shr_shard_private.h"

enum shard_kind {
	SHARD_ALLREDUCE,
	SHARD_REDUCE,
	SHARD_REDUCE_SCATTER,
	SHARD_BROADCAST,
	SHARD_ALLGATHER,
	SHARD_GATHER,
	SHARD_SCATTER,
	SHARD_ALLTOALL,
	SHARD_BARRIER,
};

struct shard_call {
	enum shard_kind kind;
	const void *in;
	void *out;
	uint64_t count;		/* elements (per block) */
	uint8_t op;
	uint16_t root;
};

static const void *
at_c(const void *p, uint64_t off, size_t es)
{
	return p == NULL ? NULL : (const char *)p + off * es;
}

static void *
at(void *p, uint64_t off, size_t es)
{
	return p == NULL ? NULL : (char *)p + off * es;
}

/* Copy part [off, off + len) of each of world blocks of count elements to dst, packed. */
static void
shard_pack(void *dst, const void *src, uint16_t world, uint64_t count, uint64_t off,
	   uint64_t len, size_t es)
{
	uint16_t r;

	for (r = 0; r < world; r++)
		memcpy((char *)dst + (size_t)(r * len) * es,
		       (const char *)src + (size_t)(r * count + off) * es, (size_t)len * es);
}

/* The reverse: packed parts back into their blocks. */
static void
shard_unpack(void *dst, const void *src, uint16_t world, uint64_t count, uint64_t off,
	     uint64_t len, size_t es)
{
	uint16_t r;

	for (r = 0; r < world; r++)
		memcpy((char *)dst + (size_t)(r * count + off) * es,
		       (const char *)src + (size_t)(r * len) * es, (size_t)len * es);
}

/* The kinds whose buffers hold one block per rank: each box's part goes through its stage. */
static bool
shard_staged(enum shard_kind k)
{
	return k == SHARD_REDUCE_SCATTER || k == SHARD_ALLGATHER || k == SHARD_GATHER ||
	       k == SHARD_SCATTER || k == SHARD_ALLTOALL;
}

/* Bytes of a buffer of the kind's (in or out) at this rank; 0: not used here. */
static uint64_t
shard_bytes(const struct shr_shard *s, const struct shard_call *c, bool in)
{
	uint64_t one = c->count * s->esize, all = one * s->world;
	bool root = s->rank == c->root;

	switch (c->kind) {
	case SHARD_REDUCE_SCATTER:
		return in ? all : one;
	case SHARD_ALLGATHER:
		return in ? one : all;
	case SHARD_GATHER:
		return in ? one : (root ? all : 0);
	case SHARD_SCATTER:
		return in ? (root ? all : 0) : one;
	case SHARD_ALLTOALL:
		return all;
	default:
		return 0;	/* one block: shard_check() counts it */
	}
}

/*
 * What the boxes would refuse of a call, before packing touches a buffer, and what no box can
 * see of a one-block call (its overlap across the shares).
 */
static int
shard_check(const struct shr_shard *s, const struct shard_call *c)
{
	bool one = !shard_staged(c->kind);
	uint64_t inb, outb;
	uintptr_t i, o;

	if (c->root >= s->world)
		return -EINVAL;
	if (c->count == 0)
		return 0;
	/* (world x) count bytes overflow (one block: the split adds a chunk to count) */
	if (c->count > UINT64_MAX / s->esize / (one ? 1u : s->world) / 2)
		return -EINVAL;
	inb = one ? c->count * s->esize : shard_bytes(s, c, true);
	outb = one ? inb : shard_bytes(s, c, false);
	if (!one && ((inb > 0 && c->in == NULL) || (outb > 0 && c->out == NULL)))
		return -EINVAL;	/* one block: each box's communicator says */
	/*
	 * In and out overlap (one block: other than in place). A one-block call is split over
	 * the boxes, each of which checks its share alone: out = in + a share would pass every
	 * box while one box's result overwrote another's input.
	 */
	i = (uintptr_t)c->in;
	o = (uintptr_t)c->out;
	if (c->in != NULL && c->out != NULL && inb > 0 && outb > 0 && !(one && i == o) &&
	    i < o + outb && o < i + inb)
		return -EINVAL;
	return 0;
}

/* Start box j's share [off, off + len) of the call: its request, or a negative errno. */
static int
shard_start(struct shr_shard *s, const struct shard_call *c, uint16_t j, uint64_t off,
	    uint64_t len)
{
	struct shr_comm *comm = s->box[j].comm;
	size_t es = s->esize, part = (size_t)(s->world * len) * es;
	bool root = s->rank == c->root;
	char *st = NULL;

	if (shard_staged(c->kind)) {
		st = shard_stage(s, j, c->kind == SHARD_ALLTOALL ? 2 * part : part);
		if (st == NULL)
			return -ENOMEM;
	}
	switch (c->kind) {
	case SHARD_ALLREDUCE:
		return shr_comm_iallreduce(comm, at_c(c->in, off, es), at(c->out, off, es), len,
					   c->op);
	case SHARD_REDUCE:
		return shr_comm_ireduce(comm, at_c(c->in, off, es), at(c->out, off, es), len,
					c->op, c->root);
	case SHARD_REDUCE_SCATTER:
		shard_pack(st, c->in, s->world, c->count, off, len, es);
		return shr_comm_ireduce_scatter(comm, st, at(c->out, off, es), len, c->op);
	case SHARD_BROADCAST:
		return shr_comm_ibroadcast(comm, at(c->out, off, es), len, c->root);
	case SHARD_ALLGATHER:
		return shr_comm_iallgather(comm, at_c(c->in, off, es), st, len);
	case SHARD_GATHER:
		return shr_comm_igather(comm, at_c(c->in, off, es), root ? st : NULL, len,
					c->root);
	case SHARD_SCATTER:
		if (root)
			shard_pack(st, c->in, s->world, c->count, off, len, es);
		return shr_comm_iscatter(comm, root ? st : NULL, at(c->out, off, es), len,
					 c->root);
	case SHARD_ALLTOALL:
		shard_pack(st, c->in, s->world, c->count, off, len, es);
		return shr_comm_ialltoall(comm, st, st + part, len);
	case SHARD_BARRIER:
		/* one element of the job's dtype, as shr_comm_barrier() */
		s->box[j].bar = 0;
		return shr_comm_iallreduce(comm, &s->box[j].bar, &s->box[j].bar, 1,
					   SHR_OP_SUM);
	}
	return -EINVAL;
}

/* Box j's share is done: unpack what came into its staging buffer. */
static void
shard_finish(struct shr_shard *s, const struct shard_call *c, uint16_t j, uint64_t off,
	     uint64_t len)
{
	size_t es = s->esize, part = (size_t)(s->world * len) * es;
	const char *st = s->box[j].stage;

	if (c->kind == SHARD_ALLGATHER || (c->kind == SHARD_GATHER && s->rank == c->root))
		shard_unpack(c->out, st, s->world, c->count, off, len, es);
	else if (c->kind == SHARD_ALLTOALL)
		shard_unpack(c->out, st + part, s->world, c->count, off, len, es);
}

static int
shard_call(struct shr_shard *s, const struct shard_call *c)
{
	uint64_t off[SHR_SHARD_MAX_BOXES], len[SHR_SHARD_MAX_BOXES];
	bool on[SHR_SHARD_MAX_BOXES] = { false };
	uint16_t j, started = 0;
	int rc, late = 0;

	if (s->fail != 0)
		return -EPIPE;
	rc = shard_check(s, c);
	if (rc < 0)
		return rc;
	shard_call_begin(s);
	for (j = 0; j < s->n; j++) {
		if (c->kind == SHARD_BARRIER) {
			off[j] = 0;
			len[j] = 1;
		} else {
			shr_shard_split(c->count, s->chunk, s->n, j, &off[j], &len[j]);
		}
		if (len[j] == 0)
			continue;
		rc = shard_ident_apply(s, j);
		if (rc == 0)
			rc = shard_start(s, c, j, off[j], len[j]);
		if (rc < 0) {
			/*
			 * Refused before anything was sent (bad op, dtype...) at the first box:
			 * the same at every rank and box, the job goes on. A QINT32 call with a
			 * NaN or an infinity in one box's share fails there at every rank (the
			 * exponents' round is the same everywhere): the boxes before it finish
			 * their share, the later ones get none.
			 */
			if ((rc == -EINVAL && started == 0) || rc == -ERANGE) {
				late = rc;
				break;
			}
			return shard_failed(s, j, rc);
		}
		s->box[j].req = rc;
		on[j] = true;
		started++;
	}
	rc = shard_run(s);
	if (rc < 0)
		return rc;
	for (j = 0; j < s->n; j++)
		if (on[j])
			shard_finish(s, c, j, off[j], len[j]);
	if (started > 0 || late == -ERANGE)
		shard_call_done(s);
	return late;
}

int
shr_shard_allreduce(struct shr_shard *shard, const void *in, void *out, uint64_t count,
		    uint8_t op)
{
	struct shard_call c = { .kind = SHARD_ALLREDUCE, .in = in, .out = out, .count = count,
				.op = op };

	return shard_call(shard, &c);
}

int
shr_shard_reduce(struct shr_shard *shard, const void *in, void *out, uint64_t count,
		 uint8_t op, uint16_t root)
{
	struct shard_call c = { .kind = SHARD_REDUCE, .in = in, .out = out, .count = count,
				.op = op, .root = root };

	return shard_call(shard, &c);
}

int
shr_shard_reduce_scatter(struct shr_shard *shard, const void *in, void *out, uint64_t count,
			 uint8_t op)
{
	struct shard_call c = { .kind = SHARD_REDUCE_SCATTER, .in = in, .out = out,
				.count = count, .op = op };

	return shard_call(shard, &c);
}

int
shr_shard_broadcast(struct shr_shard *shard, void *buf, uint64_t count, uint16_t root)
{
	struct shard_call c = { .kind = SHARD_BROADCAST, .out = buf, .count = count,
				.root = root };

	return shard_call(shard, &c);
}

int
shr_shard_allgather(struct shr_shard *shard, const void *in, void *out, uint64_t count)
{
	struct shard_call c = { .kind = SHARD_ALLGATHER, .in = in, .out = out, .count = count };

	return shard_call(shard, &c);
}

int
shr_shard_gather(struct shr_shard *shard, const void *in, void *out, uint64_t count,
		 uint16_t root)
{
	struct shard_call c = { .kind = SHARD_GATHER, .in = in, .out = out, .count = count,
				.root = root };

	return shard_call(shard, &c);
}

int
shr_shard_scatter(struct shr_shard *shard, const void *in, void *out, uint64_t count,
		  uint16_t root)
{
	struct shard_call c = { .kind = SHARD_SCATTER, .in = in, .out = out, .count = count,
				.root = root };

	return shard_call(shard, &c);
}

int
shr_shard_alltoall(struct shr_shard *shard, const void *in, void *out, uint64_t count)
{
	struct shard_call c = { .kind = SHARD_ALLTOALL, .in = in, .out = out, .count = count };

	return shard_call(shard, &c);
}

int
shr_shard_barrier(struct shr_shard *shard)
{
	struct shard_call c = { .kind = SHARD_BARRIER };

	return shard_call(shard, &c);
}
