/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * SwitchML's quantised floats: the summed collectives (allreduce, reduce, reduce_scatter)
 * of a QINT32 job take float32 and give float32; the box sums int32.
 *
 * 1. Each rank takes, for each round (chunk) of the collective, the largest frexp exponent
 *    of its values there (shr_comm_qexp()).
 * 2. One int32 MAX allreduce of those exponents (a round per chunk_elems of them: 4 bytes
 *    per chunk, one more round trip per call) gives every rank the same E_k.
 * 3. Each rank scales chunk k by 2^s_k, s_k = 31 - E_k - bits(world) (shr_comm_qshift()),
 *    and rounds to the nearest int32: |q| <= 2^(31 - bits(world)), so the sum of world of
 *    them (world < 2^bits(world)) stays below 2^31. The chunk's DATA carry s_k in aux: the
 *    box checks that every rank sent the same (a round's identity) and returns it.
 * 4. The int32 result is scaled back by 2^-s_k and rounded to float32.
 * Error: each rank's rounding is at most 2^-(s_k + 1), so |out - exact| <= world
 * 2^-(s_k + 1) + half an ulp of out (shr_comm_qbound()).
 *
 * A non-finite input (NaN, infinity) at any rank makes its exponent
 * SHR_COMM_QEXP_NONFINITE, which the MAX hands to every rank: every rank then fails the call
 * with -ERANGE, without a data round, and the job stays in step.
 *
 * Non-blocking calls do steps 1 to 3 before they return (the exchange is waited for) and
 * step 4 in the shr_comm_test() / shr_comm_wait() that finds the collective done.
 */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <shr_endpoint.h>
#include <shr_proto.h>

#include "shr_comm.h"

#include "shr_comm_private.h"

int32_t
shr_comm_qexp(const float *v, size_t n)
{
	int32_t e = SHR_COMM_QEXP_ZERO;
	size_t i;

	for (i = 0; i < n; i++) {
		int x;

		if (!isfinite(v[i]))
			return SHR_COMM_QEXP_NONFINITE;
		if (v[i] == 0.0f)
			continue;
		(void)frexpf(v[i], &x);
		if (x > e)
			e = x;
	}
	return e;
}

int
shr_comm_qshift(uint16_t world, int32_t e)
{
	int64_t s;
	int bits = 0;

	if (e == SHR_COMM_QEXP_ZERO || e == SHR_COMM_QEXP_NONFINITE)
		return 0;
	while (world >> bits)
		bits++;
	/* float32 exponents give -110..180; one from the wire may be anything: no int overflow,
	 * and a shift ldexp() still takes */
	s = 31 - (int64_t)e - bits;
	return s < -SHR_COMM_QSHIFT_MAX ? -SHR_COMM_QSHIFT_MAX :
	       s > SHR_COMM_QSHIFT_MAX ? SHR_COMM_QSHIFT_MAX : (int)s;
}

double
shr_comm_qbound(uint16_t world, int32_t e)
{
	if (e == SHR_COMM_QEXP_ZERO || e == SHR_COMM_QEXP_NONFINITE)
		return 0.0;
	return ldexp((double)world, -(shr_comm_qshift(world, e) + 1));
}

void
comm_q_free(struct comm_q *q)
{
	if (q == NULL)
		return;
	free(q->buf);
	free(q);
}

/* Scale the float32 result of q's data round back (step 4). */
static void
comm_q_out(const struct shr_comm *c, const struct comm_q *q)
{
	uint64_t i, k;

	if (q->out == NULL)
		return;
	for (k = 0; k * c->chunk_elems < q->nout; k++) {
		uint64_t end = (k + 1) * c->chunk_elems < q->nout ? (k + 1) * c->chunk_elems :
			q->nout;
		double scale = ldexp(1.0, -(int32_t)q->aux[q->out_chunk0 + k]);

		for (i = k * c->chunk_elems; i < end; i++)
			q->out[i] = (float)((double)q->res[i] * scale);
	}
}

void
comm_q_done(struct shr_comm *c, int req)
{
	uint64_t k;

	for (k = 1; k <= c->ncalls && k <= COMM_OPS; k++) {
		struct comm_op *o = &c->ops[(c->ncalls - k) % COMM_OPS];

		if (o->req == req && o->q != NULL) {
			comm_q_out(c, o->q);
			comm_q_free(o->q);
			o->q = NULL;
			return;
		}
	}
}

int
comm_qcoll(struct shr_comm *c, uint8_t kind, const void *in, void *out, uint64_t count,
	   uint8_t op, uint16_t root, bool block)
{
	uint64_t nblocks = kind == SHR_KIND_REDUCE_SCATTER ? comm_cworld(c) : 1;
	uint64_t per, nch, nin, i, k;
	uint32_t tensor = c->tensor_seq;
	const float *x = in;
	struct comm_q *q;
	int32_t *exps;
	int req, rc;

	if (c->fail != 0)
		return -EPIPE;
	if (count == 0 || (in == NULL && count > 0))
		return comm_icoll_q(c, kind, in, out, count, op, root, NULL, block);
	/* the buffer below: nblocks x count inputs, count results, 2 words a chunk */
	if (op >= SHR_OP_MAX_ || op == SHR_OP_PROD || count > SIZE_MAX / 4 / (3 * nblocks + 1) ||
	    (kind == SHR_KIND_REDUCE_SCATTER && out == NULL))
		return -EINVAL;
	/*
	 * What the float32 path refuses, refused here before the exponents' round goes out (a
	 * call refused after it would leave the other ranks in a round this rank never ends):
	 * a root that is no rank, no out where the result is written (it was dropped, and 0
	 * returned), in and out overlapping other than in place.
	 */
	if ((kind == SHR_KIND_REDUCE && root >= comm_cworld(c)) ||
	    (out == NULL && (kind == SHR_KIND_ALLREDUCE ||
			     (kind == SHR_KIND_REDUCE && comm_crank(c) == root))))
		return -EINVAL;
	/* overlap where out is used (a non-root rank's out of a reduce is not: the float path
	 * takes it, so refusing it here would leave the others in the exponents' round); in
	 * place only where the float path allows it (not reduce_scatter) */
	if (out != NULL && (kind != SHR_KIND_REDUCE || comm_crank(c) == root) &&
	    (out != in || kind == SHR_KIND_REDUCE_SCATTER) &&
	    (const char *)out < (const char *)in + nblocks * count * 4 &&
	    (const char *)in < (const char *)out + count * 4)
		return -EINVAL;
	/* room for both rounds: a data round refused (-EBUSY) after the exponents' went out
	 * would leave the other ranks in a round this rank never sends */
	if (shr_endpoint_room(c->ep) < 2)
		return -EBUSY;
	per = (count + c->chunk_elems - 1) / c->chunk_elems;
	nch = nblocks * per;
	nin = nblocks * count;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	/* One buffer: the int32 inputs, the results (reduce_scatter), aux, exponents. */
	q->buf = malloc((size_t)(nin + (kind == SHR_KIND_REDUCE_SCATTER ? count : 0) + 2 * nch) *
			sizeof(int32_t));
	if (q->buf == NULL) {
		free(q);
		return -ENOMEM;
	}
	q->in = q->buf;
	q->res = kind == SHR_KIND_REDUCE_SCATTER ? q->in + nin : q->in;
	q->aux = (uint32_t *)(q->in + nin + (kind == SHR_KIND_REDUCE_SCATTER ? count : 0));
	exps = (int32_t *)(q->aux + nch);
	if (kind == SHR_KIND_REDUCE_SCATTER || kind == SHR_KIND_ALLREDUCE ||
	    comm_crank(c) == root) {
		q->out = out;
		q->nout = count;
		q->out_chunk0 = kind == SHR_KIND_REDUCE_SCATTER ? (uint64_t)comm_crank(c) * per : 0;
	}

	/* 1, 2: every rank's exponents, then their maximum (the same tensor id and step). */
	for (k = 0; k < nch; k++) {
		uint64_t b = k / per, j = k % per;
		uint64_t n = count - j * c->chunk_elems < c->chunk_elems ?
			count - j * c->chunk_elems : c->chunk_elems;

		exps[k] = shr_comm_qexp(x + b * count + j * c->chunk_elems, (size_t)n);
	}
	rc = comm_icoll_q(c, SHR_KIND_ALLREDUCE, exps, exps, nch, SHR_OP_MAX, 0, NULL, true);
	c->tensor_seq = tensor;
	if (rc < 0)
		goto fail;
	for (k = 0; k < nch; k++)
		if (exps[k] == SHR_COMM_QEXP_NONFINITE) {
			c->tensor_seq++;	/* the call is over, at every rank */
			rc = -ERANGE;
			goto fail;
		}

	/* 3: quantise with the agreed shifts. */
	for (k = 0; k < nch; k++) {
		uint64_t b = k / per, j = k % per, start = b * count + j * c->chunk_elems;
		uint64_t end = start + c->chunk_elems < (b + 1) * count ?
			start + c->chunk_elems : (b + 1) * count;
		int s = shr_comm_qshift(comm_cworld(c), exps[k]);
		double scale = ldexp(1.0, s);

		q->aux[k] = (uint32_t)s;
		for (i = start; i < end; i++)
			q->in[i] = (int32_t)lrint((double)x[i] * scale);
	}
	req = comm_icoll_q(c, kind, q->in, kind == SHR_KIND_REDUCE && comm_crank(c) != root ?
			   NULL : q->res, count, op, root, q, block);
	return req;	/* q is comm_icoll_q()'s now */
fail:
	comm_q_free(q);
	return rc;
}
