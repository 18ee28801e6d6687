/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The collectives of the communicator: each is one endpoint operation of its kind
 * (lib/endpoint cuts it into rounds), started by comm_icoll() and, for the blocking calls,
 * waited for with shr_comm_wait(); their identity (step, tensor id); and what the box says
 * when the ranks called different ones (ABORT EPROTO).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <shr_endpoint.h>
#include <shr_proto.h>

#include "shr_comm.h"

#include "shr_comm_private.h"

/*
 * Submit one collective; returns its request or a negative errno (block: wait for it, and
 * return 0 or a negative errno). q: a quantised collective's state (shr_comm_quant.c),
 * whose aux the rounds carry, converted when the collective is found done; taken (freed
 * here if the collective cannot be submitted).
 */
int
comm_icoll_q(struct shr_comm *comm, uint8_t kind, const void *in, void *out, uint64_t count,
	     uint8_t op, uint16_t root, struct comm_q *q, bool block)
{
	struct shr_endpoint_op o = {
		.op = op, .in = in, .out = out, .count = count, .tensor = comm->tensor_seq,
		.step = comm->step, .kind = kind, .root = root,
		.aux = q != NULL ? q->aux : NULL,
	};
	struct comm_op *co;
	uint64_t first;
	int rc;

	if (comm->fail != 0) {
		comm_q_free(q);
		return -EPIPE;
	}
	/* shr_endpoint_submit() checks kind, root, op, buffers and count (-EINVAL). */
	first = shr_endpoint_stream_pos(comm->ep);
	rc = shr_endpoint_submit(comm->ep, &o);
	if (rc < 0) {
		comm_q_free(q);
		return comm_failed(comm, rc);
	}
	if (comm->ncalls == 0)
		comm->first_step = comm->step;
	co = &comm->ops[comm->ncalls++ % COMM_OPS];
	co->first = first;
	co->end = shr_endpoint_stream_pos(comm->ep);
	co->req = rc;
	comm_q_free(co->q);	/* a call of COMM_OPS calls ago, done: never waited for */
	co->q = q;
	comm->tensor_seq++;
	if (block)
		return shr_comm_wait(comm, rc);
	/* Get the first window out at once. */
	(void)shr_comm_progress(comm);
	return rc;
}

/* Submit one collective; returns its request or a negative errno. */
static int
comm_icoll(struct shr_comm *comm, uint8_t kind, const void *in, void *out, uint64_t count,
	   uint8_t op, uint16_t root)
{
	if (comm->p.dtype == SHR_DTYPE_QINT32 && !shr_proto_kind_relay(kind))
		return comm_qcoll(comm, kind, in, out, count, op, root, false);
	return comm_icoll_q(comm, kind, in, out, count, op, root, NULL, false);
}

/* A blocking collective: start it, wait for it. */
static int
comm_coll(struct shr_comm *comm, uint8_t kind, const void *in, void *out, uint64_t count,
	  uint8_t op, uint16_t root)
{
	if (comm->p.dtype == SHR_DTYPE_QINT32 && !shr_proto_kind_relay(kind))
		return comm_qcoll(comm, kind, in, out, count, op, root, true);
	return comm_icoll_q(comm, kind, in, out, count, op, root, NULL, true);
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

	/* The words as they are, also in a QINT32 job (no exponents to agree on). */
	return comm_icoll_q(comm, SHR_KIND_ALLREDUCE, &in, &out, 1, SHR_OP_SUM, 0, NULL, true);
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

/* Identity. */

int
shr_comm_ident_set(struct shr_comm *comm, uint32_t step, uint32_t tensor)
{
	if (step < comm->step || (comm->ncalls > 0 && step - comm->first_step > INT32_MAX))
		return -EINVAL;
	comm->step = step;
	comm->tensor_seq = tensor;
	return 0;
}

void
shr_comm_ident_get(const struct shr_comm *comm, uint32_t *step, uint32_t *tensor)
{
	if (step != NULL)
		*step = comm->step;
	if (tensor != NULL)
		*tensor = comm->tensor_seq;
}

/* The box's ABORT. */

/* Keep the box's ABORT: the first, or the first that names both sides of a disagreement. */
void
comm_abort_note(struct shr_comm *c, const struct shr_proto_msg *m)
{
	struct shr_comm_abort *a = &c->abort;

	if (c->aborted && !(a->reason == EPROTO && !a->detailed && m->aux == EPROTO))
		return;
	if (!c->aborted) {
		c->aborted = true;
		a->reason = m->aux;
		a->rank = m->rank;
		if (m->flags & SHR_FLAG_UPSTREAM) {
			/* a tree of boxes: the upstream box ended it (shr_proto.h) */
			a->upstream = 1;
			a->up_rank = (uint16_t)m->slot;
			a->rank_ip = m->feedback;
			a->up_ip = (uint32_t)(m->offset >> 16);
			a->up_port = (uint16_t)m->offset;
			return;
		}
		if (m->aux == EMSGSIZE) {
			c->job_chunk = m->count;
			c->box_fit = m->feedback;
		} else if (m->aux != EPROTO && m->rank != SHR_PROTO_RANK_ALL) {
			a->rank_ip = m->feedback;
		}
	}
	if (a->upstream)
		return;
	/* Both sides (shr_proto.h, ABORT): a round has at least one element. */
	if (m->aux != EPROTO || m->count == 0 || m->feedback == 0)
		return;
	a->rank = m->rank;
	a->detailed = 1;
	a->other = (uint16_t)m->slot;
	a->called.kind = m->kind;
	a->called.root = m->root;
	a->called.tensor = m->tensor;
	a->called.step = m->step;
	a->called.count = m->count;
	a->other_called.kind = m->op;
	a->other_called.root = m->flags;
	a->other_called.tensor = (uint32_t)(m->offset >> 32);
	a->other_called.step = (uint32_t)m->offset;
	a->other_called.count = m->feedback;
}

int
shr_comm_abort_get(const struct shr_comm *comm, struct shr_comm_abort *info)
{
	if (!comm->aborted)
		return -ENOENT;
	*info = comm->abort;
	return 0;
}

/* "allgather(rank 0's block, tensor 4, step 9, round of 256 elements)" */
static void
comm_call_str(const struct shr_comm_call *k, char *buf, size_t len)
{
	char root[32] = "";

	switch (k->kind) {
	case SHR_KIND_ALLREDUCE:
		break;
	case SHR_KIND_REDUCE:
	case SHR_KIND_BROADCAST:
	case SHR_KIND_SCATTER:
		snprintf(root, sizeof(root), "root %u, ", k->root);
		break;
	default:	/* a round of one rank's block */
		snprintf(root, sizeof(root), "rank %u's block, ", k->root);
		break;
	}
	snprintf(buf, len, "%s(%stensor %u, step %u, round of %u elements)",
		 shr_proto_kind_str(k->kind), root, k->tensor, k->step, k->count);
}

/* An IPv4 address (host order) as text, or "address not known" for 0. */
const char *
comm_ip_str(uint32_t ip, char *buf, size_t len)
{
	struct in_addr a = { .s_addr = htonl(ip) };

	if (ip == 0 || inet_ntop(AF_INET, &a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "address not known");
	return buf;
}

/* The line of shr_comm_strerror() for an ABORT from the box's upstream box (a tree). */
int
comm_abort_up_str(const struct shr_comm *c, const char *agg, char *buf, size_t len)
{
	const struct shr_comm_abort *a = &c->abort;
	char up[INET_ADDRSTRLEN], ip[INET_ADDRSTRLEN];
	const char *what;

	comm_ip_str(a->up_ip, up, sizeof(up));
	if (a->up_rank == SHR_PROTO_RANK_ALL)
		return snprintf(buf, len, "job %u aborted by the aggregator %s: its upstream box "
				"%s:%u %s", c->p.job, agg, up, a->up_port,
				a->reason == ETIMEDOUT ? "gave no result in time (down or "
				"unreachable)" : strerror((int)a->reason));
	switch (a->reason) {
	case ETIMEDOUT:
		what = "did not join or send in time";
		break;
	case ECONNABORTED:
		what = "aborted its part of the job (a member below it failed)";
		break;
	case EPROTO:
		what = "called a different collective";
		break;
	default:
		what = strerror((int)a->reason);
		break;
	}
	return snprintf(buf, len, "job %u aborted by the aggregator %s on behalf of the box %s:%u "
			"above it in the tree: that box's member %u (%s: a box, or a rank, below "
			"it) %s", c->p.job, agg, up, a->up_port, a->up_rank,
			comm_ip_str(a->rank_ip, ip, sizeof(ip)), what);
}

/* The line of shr_comm_strerror() for an ABORT EPROTO. */
int
comm_abort_str(const struct shr_comm *c, const char *agg, char *buf, size_t len)
{
	const struct shr_comm_abort *a = &c->abort;
	char mine[128], theirs[128];

	if (!a->detailed)
		return snprintf(buf, len, "job %u aborted by the aggregator %s: ranks called "
				"different collectives: rank %u disagreed with the others "
				"(this rank missed the box's first ABORT, which named both)",
				c->p.job, agg, a->rank);
	comm_call_str(&a->called, mine, sizeof(mine));
	comm_call_str(&a->other_called, theirs, sizeof(theirs));
	return snprintf(buf, len, "job %u aborted by the aggregator %s: ranks called different "
			"collectives: rank %u called %s where rank %u called %s%s", c->p.job, agg,
			a->rank, mine, a->other, theirs, strcmp(mine, theirs) == 0 ?
			" (at another place in the stream: an earlier call differed in size)" :
			"");
}
