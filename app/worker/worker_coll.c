/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* shouter-worker: the collectives (--coll), their inputs and their exact checks. */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <shr_pool.h>

#include "worker.h"

static void
bad_elem_set(const struct opts *o, struct bad_elem *b, uint64_t i, const void *got,
	     const void *want)
{
	b->index = i;
	if (o->dtype == SHR_DTYPE_FLOAT32 || o->dtype == SHR_DTYPE_QINT32) {
		float g, w;

		memcpy(&g, got, sizeof(g));
		memcpy(&w, want, sizeof(w));
		snprintf(b->got, sizeof(b->got), "%.9g", (double)g);
		snprintf(b->want, sizeof(b->want), "%.9g", (double)w);
	} else {
		int32_t g, w;

		memcpy(&g, got, sizeof(g));
		memcpy(&w, want, sizeof(w));
		snprintf(b->got, sizeof(b->got), "%" PRId32, g);
		snprintf(b->want, sizeof(b->want), "%" PRId32, w);
	}
}

/*
 * --inputs random: a float32 of random sign, mantissa and exponent (2^-40 to 2^41, so that
 * no sum of up to 4096 overflows), hashed from (rank, it, i) as val_f32() is: sums are not
 * exact in float32, so the order in which they are added shows in the result.
 */
static inline uint32_t
val_f32_random(uint32_t rank, uint64_t it, uint64_t i)
{
	uint32_t h = mix32(mix32(mix32((uint32_t)i ^ 0x2f6b1d53u) + (uint32_t)(i >> 32) +
				 rank * 0x9e3779b9u) + (uint32_t)it * 0x27d4eb2fu);
	uint32_t e = 87u + mix32(h) % 81u;

	return (h & 0x807fffffu) | e << 23;
}

/* Rank r's input element idx in iteration it (already through data_it()), as its bits. */
static inline uint32_t
in_bits(const struct opts *o, uint32_t nodd, uint32_t r, uint64_t it, uint64_t idx)
{
	uint32_t b;

	if ((o->dtype == SHR_DTYPE_FLOAT32 && o->random_inputs) || o->dtype == SHR_DTYPE_QINT32)
		return val_f32_random(r, it, idx);
	if (o->dtype == SHR_DTYPE_FLOAT32) {
		float f = val_f32(nodd, r, it, idx);

		memcpy(&b, &f, sizeof(b));
	} else {
		int32_t v = val_i32(r, it, idx);

		memcpy(&b, &v, sizeof(b));
	}
	return b;
}

/* The reduction over all ranks of input element idx, as its bits. */
static uint32_t
reduced_bits(const struct opts *o, uint32_t nodd, uint64_t it, uint64_t idx)
{
	uint32_t world = (uint32_t)o->data_world, r, want;

	if (o->dtype == SHR_DTYPE_FLOAT32 && o->random_inputs) {
		/*
		 * The exact sum rounded once (lib/pool's exact accumulator, as a reproducible
		 * job's box computes it): what --repro must give, in any arrival order.
		 */
		struct shr_pool_xsum x;
		float e;

		if (o->op == SHR_OP_SUM) {
			shr_pool_xsum_clear(&x);
			for (r = 0; r < world; r++)
				shr_pool_xsum_add(&x, in_bits(o, nodd, r, it, idx));
			return shr_pool_xsum_f32(&x);
		}
		want = in_bits(o, nodd, 0, it, idx);
		for (r = 1; r < world; r++) {
			uint32_t b = in_bits(o, nodd, r, it, idx);
			float cur, xf;

			memcpy(&cur, &want, sizeof(cur));
			memcpy(&xf, &b, sizeof(xf));
			e = o->op == SHR_OP_MIN ? (xf < cur ? xf : cur) : (xf > cur ? xf : cur);
			memcpy(&want, &e, sizeof(want));
		}
		return want;
	}
	if (o->dtype == SHR_DTYPE_FLOAT32) {
		float e = val_f32(nodd, 0, it, idx);

		for (r = 1; r < world; r++) {
			float x = val_f32(nodd, r, it, idx);

			if (o->op == SHR_OP_SUM)
				e += x;
			else if (o->op == SHR_OP_MIN)
				e = x < e ? x : e;
			else
				e = x > e ? x : e;
		}
		memcpy(&want, &e, sizeof(want));
	} else {
		int32_t e = val_i32(0, it, idx);

		for (r = 1; r < world; r++) {
			int32_t x = val_i32(r, it, idx);

			if (o->op == SHR_OP_SUM)
				e = (int32_t)((uint32_t)e + (uint32_t)x);
			else if (o->op == SHR_OP_MIN)
				e = x < e ? x : e;
			else
				e = x > e ? x : e;
		}
		memcpy(&want, &e, sizeof(want));
	}
	return want;
}

int
coll_sizes(const struct opts *o, uint64_t n, uint64_t *in_elems, uint64_t *out_elems)
{
	uint64_t all = n * (uint64_t)o->data_world;

	if (n > (1ull << 40) / (uint64_t)o->data_world)
		return -EINVAL;
	switch (o->kind) {
	case SHR_KIND_REDUCE_SCATTER:
	case SHR_KIND_SCATTER:
		*in_elems = all;
		*out_elems = n;
		break;
	case SHR_KIND_ALLGATHER:
	case SHR_KIND_GATHER:
		*in_elems = n;
		*out_elems = all;
		break;
	case SHR_KIND_ALLTOALL:
		*in_elems = all;
		*out_elems = all;
		break;
	default:		/* allreduce, reduce, broadcast */
		*in_elems = n;
		*out_elems = n;
		break;
	}
	return 0;
}

void
coll_fill(const struct opts *o, void *in, void *out, uint64_t n, uint64_t it)
{
	uint32_t nodd = f32_odd_count((uint32_t)o->data_world), *v = in;
	uint64_t in_elems, out_elems, i;

	if (coll_sizes(o, n, &in_elems, &out_elems) < 0)
		return;
	it = data_it(o, it);
	for (i = 0; i < in_elems; i++)
		v[i] = in_bits(o, nodd, (uint32_t)o->data_rank, it, i);
	/* broadcast is in place: the root's buffer holds what it sends */
	if (o->kind == SHR_KIND_BROADCAST && o->data_rank == o->root)
		memcpy(out, in, n * sizeof(*v));
}

int
coll_run(struct shr_shard *comm, const struct opts *o, const void *in, void *out, uint64_t n)
{
	uint8_t op = (uint8_t)o->op;

	switch (o->kind) {
	case SHR_KIND_REDUCE:
		return shr_shard_reduce(comm, in, out, n, op, o->root);
	case SHR_KIND_REDUCE_SCATTER:
		return shr_shard_reduce_scatter(comm, in, out, n, op);
	case SHR_KIND_BROADCAST:
		return shr_shard_broadcast(comm, out, n, o->root);
	case SHR_KIND_ALLGATHER:
		return shr_shard_allgather(comm, in, out, n);
	case SHR_KIND_GATHER:
		return shr_shard_gather(comm, in, out, n, o->root);
	case SHR_KIND_SCATTER:
		return shr_shard_scatter(comm, in, out, n, o->root);
	case SHR_KIND_ALLTOALL:
		return shr_shard_alltoall(comm, in, out, n);
	default:
		return shr_shard_allreduce(comm, in, out, n, op);
	}
}

static float
in_f32(const struct opts *o, uint32_t r, uint64_t it, uint64_t idx)
{
	uint32_t b = in_bits(o, 0, r, it, idx);
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

/*
 * A summed collective of a qint32 job: each output element against the exact op of every
 * rank's inputs (long double), within the bound of shr_comm.h (world 2^-(s+1), 2^-(s+1)
 * for MIN and MAX, plus half an ulp of the output; s from the largest exponent of the
 * element's chunk over every rank). Records the largest error and error/bound in o.
 */
static uint64_t
coll_check_q(struct opts *o, const float *got, uint64_t n, uint64_t it, uint64_t base,
	     struct bad_elem *first)
{
	uint32_t world = (uint32_t)o->data_world, r, chunk = o->granted_chunk;
	uint64_t c, j, bad = 0;

	for (c = 0; c < n; c += chunk) {
		uint64_t end = c + chunk < n ? c + chunk : n;
		int32_t e = SHR_COMM_QEXP_ZERO;
		double qb;

		for (r = 0; r < world; r++)
			for (j = c; j < end; j++) {
				float f = in_f32(o, r, it, base + j);
				int32_t x = shr_comm_qexp(&f, 1);

				e = x != SHR_COMM_QEXP_ZERO && (e == SHR_COMM_QEXP_ZERO || x > e) ?
					x : e;
			}
		qb = shr_comm_qbound((uint16_t)world, e);
		if (o->op != SHR_OP_SUM)
			qb /= world;
		for (j = c; j < end; j++) {
			long double want = in_f32(o, 0, it, base + j), err;
			double bound = qb + ldexp(fabs((double)got[j]), -24);
			float w;

			for (r = 1; r < world; r++) {
				long double x = in_f32(o, r, it, base + j);

				if (o->op == SHR_OP_SUM)
					want += x;
				else if (o->op == SHR_OP_MIN)
					want = x < want ? x : want;
				else
					want = x > want ? x : want;
			}
			err = fabsl((long double)got[j] - want);
			if ((double)err > o->q_max_err)
				o->q_max_err = (double)err;
			if (bound > 0 && (double)err / bound > o->q_max_ratio)
				o->q_max_ratio = (double)err / bound;
			/* a NaN or infinity is never right (the inputs are finite, and a sum
			 * that could overflow fails the call with -ERANGE): err and bound
			 * would be NaN or infinite and compare false */
			if ((!isfinite(got[j]) || !(err <= bound)) && bad++ == 0) {
				w = (float)want;
				bad_elem_set(o, first, j, got + j, &w);
			}
		}
	}
	return bad;
}

/*
 * A streaming job's float32 SUM of --inputs random (no exact result to expect: the box adds
 * in arrival order): element idx within the bound of recursive summation, |got - sum| <=
 * g(world - 1) sum |x| with g(k) = k u / (1 - k u), u = 2^-24 (the box's float32 adds, in any
 * order), the exact sum taken in long double (its own error, 2^-64 of sum |x| a term, is
 * covered by the slack); never a NaN or infinity (no sum of these inputs overflows).
 */
static bool
stream_sum_ok(const struct opts *o, uint64_t it, uint64_t idx, uint32_t got)
{
	uint32_t world = (uint32_t)o->data_world, r;
	long double sum = 0, abs = 0, k = world - 1, u = 0x1p-24L, g;
	float gf;

	for (r = 0; r < world; r++) {
		float x = in_f32(o, r, it, idx);

		sum += x;
		abs += fabsl((long double)x);
	}
	memcpy(&gf, &got, sizeof(gf));
	if (!isfinite(gf))
		return false;
	g = k * u / (1 - k * u);
	return fabsl((long double)gf - sum) <= g * abs * (1 + 0x1p-20L);
}

/*
 * Check this rank's output of the collective against what every rank's inputs make it,
 * bit for bit (a streaming float32 SUM of --inputs random: within its bound); returns the
 * number of wrong elements (the first in *first) and sets *checked to the elements checked
 * (0: this rank receives nothing, e.g. reduce at a rank other than the root).
 */
uint64_t
coll_check(struct opts *o, const void *out, uint64_t n, uint64_t it, uint64_t *checked,
	   struct bad_elem *first)
{
	uint32_t nodd = f32_odd_count((uint32_t)o->data_world), rank = (uint32_t)o->data_rank;
	uint32_t want;
	uint64_t in_elems, out_elems, j, bad = 0;
	const uint32_t *got = out;

	*checked = 0;
	if (coll_sizes(o, n, &in_elems, &out_elems) < 0 || n == 0)
		return 0;
	if ((o->kind == SHR_KIND_REDUCE || o->kind == SHR_KIND_GATHER) && rank != o->root)
		return 0;
	it = data_it(o, it);
	*checked = out_elems;
	if (o->dtype == SHR_DTYPE_QINT32 && !shr_proto_kind_relay((uint8_t)o->kind))
		return coll_check_q(o, out, n, it,
				    o->kind == SHR_KIND_REDUCE_SCATTER ? rank * n : 0, first);
	if (o->dtype == SHR_DTYPE_FLOAT32 && o->random_inputs && !o->repro &&
	    o->op == SHR_OP_SUM && !shr_proto_kind_relay((uint8_t)o->kind)) {
		for (j = 0; j < out_elems; j++) {
			uint64_t idx = o->kind == SHR_KIND_REDUCE_SCATTER ? rank * n + j : j;

			if (!stream_sum_ok(o, it, idx, got[j]) && bad++ == 0) {
				want = reduced_bits(o, nodd, it, idx);
				bad_elem_set(o, first, j, got + j, &want);
			}
		}
		return bad;
	}
	for (j = 0; j < out_elems; j++) {
		switch (o->kind) {
		case SHR_KIND_REDUCE_SCATTER:
			want = reduced_bits(o, nodd, it, rank * n + j);
			break;
		case SHR_KIND_BROADCAST:
			want = in_bits(o, nodd, o->root, it, j);
			break;
		case SHR_KIND_ALLGATHER:
		case SHR_KIND_GATHER:
			want = in_bits(o, nodd, (uint32_t)(j / n), it, j % n);
			break;
		case SHR_KIND_SCATTER:
			want = in_bits(o, nodd, o->root, it, rank * n + j);
			break;
		case SHR_KIND_ALLTOALL:
			want = in_bits(o, nodd, (uint32_t)(j / n), it, rank * n + j % n);
			break;
		default:	/* allreduce, reduce (at the root) */
			want = reduced_bits(o, nodd, it, j);
			break;
		}
		/* both dtypes are 4 bytes: compare the bits */
		if (memcmp(got + j, &want, sizeof(want)) != 0 && bad++ == 0)
			bad_elem_set(o, first, j, got + j, &want);
	}
	*checked = out_elems;
	return bad;
}
