/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The collectives of the communicator: each is one endpoint operation of its kind
 * (lib/endpoint cuts it into rounds), started by comm_icoll() and, for the blocking calls,
 * waited for with shr_comm_wait().
 */

#include <errno.h>
#include <stdint.h>

#include <shr_endpoint.h>
#include <shr_proto.h>

#include "shr_comm.h"

#include "shr_comm_private.h"

/* Submit one collective; returns its request or a negative errno. */
static int
comm_icoll(struct shr_comm *comm, uint8_t kind, const void *in, void *out, uint64_t count,
	   uint8_t op, uint16_t root)
{
	struct shr_endpoint_op o = {
		.op = op, .in = in, .out = out, .count = count, .tensor = comm->tensor_seq,
		.kind = kind, .root = root,
	};
	int rc;

	if (comm->fail != 0)
		return -EPIPE;
	/* shr_endpoint_submit() checks kind, root, op, buffers and count (-EINVAL). */
	rc = shr_endpoint_submit(comm->ep, &o);
	if (rc < 0)
		return comm_failed(comm, rc);
	comm->ops[comm->tensor_seq % COMM_OPS].tensor = comm->tensor_seq;
	comm->ops[comm->tensor_seq % COMM_OPS].req = rc;
	comm->tensor_seq++;
	/* Get the first window out at once. */
	(void)shr_comm_progress(comm);
	return rc;
}

/* A blocking collective: start it, wait for it. */
static int
comm_coll(struct shr_comm *comm, uint8_t kind, const void *in, void *out, uint64_t count,
	  uint8_t op, uint16_t root)
{
	int req = comm_icoll(comm, kind, in, out, count, op, root);

	if (req < 0)
		return req;
	return shr_comm_wait(comm, req);
}

int
shr_comm_iallreduce(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		    uint8_t op)
{
	return comm_icoll(comm, SHR_KIND_ALLREDUCE, in, out, count, op, 0);
}

int
shr_comm_allreduce(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		   uint8_t op)
{
	return comm_coll(comm, SHR_KIND_ALLREDUCE, in, out, count, op, 0);
}

int
shr_comm_barrier(struct shr_comm *comm)
{
	uint64_t in = 0, out = 0;	/* one element of any dtype fits */

	return shr_comm_allreduce(comm, &in, &out, 1, SHR_OP_SUM);
}

int
shr_comm_ireduce(struct shr_comm *comm, const void *in, void *out, uint64_t count, uint8_t op,
		 uint16_t root)
{
	return comm_icoll(comm, SHR_KIND_REDUCE, in, out, count, op, root);
}

int
shr_comm_reduce(struct shr_comm *comm, const void *in, void *out, uint64_t count, uint8_t op,
		uint16_t root)
{
	return comm_coll(comm, SHR_KIND_REDUCE, in, out, count, op, root);
}

int
shr_comm_ireduce_scatter(struct shr_comm *comm, const void *in, void *out, uint64_t count,
			 uint8_t op)
{
	return comm_icoll(comm, SHR_KIND_REDUCE_SCATTER, in, out, count, op, 0);
}

int
shr_comm_reduce_scatter(struct shr_comm *comm, const void *in, void *out, uint64_t count,
			uint8_t op)
{
	return comm_coll(comm, SHR_KIND_REDUCE_SCATTER, in, out, count, op, 0);
}

int
shr_comm_ibroadcast(struct shr_comm *comm, void *buf, uint64_t count, uint16_t root)
{
	return comm_icoll(comm, SHR_KIND_BROADCAST, buf, buf, count, SHR_OP_SUM, root);
}

int
shr_comm_broadcast(struct shr_comm *comm, void *buf, uint64_t count, uint16_t root)
{
	return comm_coll(comm, SHR_KIND_BROADCAST, buf, buf, count, SHR_OP_SUM, root);
}

int
shr_comm_iallgather(struct shr_comm *comm, const void *in, void *out, uint64_t count)
{
	return comm_icoll(comm, SHR_KIND_ALLGATHER, in, out, count, SHR_OP_SUM, 0);
}

int
shr_comm_allgather(struct shr_comm *comm, const void *in, void *out, uint64_t count)
{
	return comm_coll(comm, SHR_KIND_ALLGATHER, in, out, count, SHR_OP_SUM, 0);
}

int
shr_comm_igather(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		 uint16_t root)
{
	return comm_icoll(comm, SHR_KIND_GATHER, in, out, count, SHR_OP_SUM, root);
}

int
shr_comm_gather(struct shr_comm *comm, const void *in, void *out, uint64_t count, uint16_t root)
{
	return comm_coll(comm, SHR_KIND_GATHER, in, out, count, SHR_OP_SUM, root);
}

int
shr_comm_iscatter(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		  uint16_t root)
{
	return comm_icoll(comm, SHR_KIND_SCATTER, in, out, count, SHR_OP_SUM, root);
}

int
shr_comm_scatter(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		 uint16_t root)
{
	return comm_coll(comm, SHR_KIND_SCATTER, in, out, count, SHR_OP_SUM, root);
}

int
shr_comm_ialltoall(struct shr_comm *comm, const void *in, void *out, uint64_t count)
{
	return comm_icoll(comm, SHR_KIND_ALLTOALL, in, out, count, SHR_OP_SUM, 0);
}

int
shr_comm_alltoall(struct shr_comm *comm, const void *in, void *out, uint64_t count)
{
	return comm_coll(comm, SHR_KIND_ALLTOALL, in, out, count, SHR_OP_SUM, 0);
}
