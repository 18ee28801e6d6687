/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * shouter-worker's checker of the collectives (app/worker/worker_coll.c), without a box: every
 * rank's inputs filled by coll_fill() (as each rank of a run fills them), every rank's output
 * made here from them by the collective's definition (as a right box would give it), and
 * coll_check() at every rank must take it whole, and name the first wrong element when one is
 * off by one. A rank that receives nothing (reduce, gather: not the root) checks nothing. The
 * broadcast root's buffer is in place: what it sends is its own input.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "worker.h"

#define W_WORLD 3
#define W_N 5
#define W_IT 4

static const int kinds[] = {
	SHR_KIND_ALLREDUCE, SHR_KIND_REDUCE, SHR_KIND_REDUCE_SCATTER, SHR_KIND_BROADCAST,
	SHR_KIND_ALLGATHER, SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL,
};

/* a op b, of the dtype's, as the box computes them (int32 SUM wraps) */
static uint32_t
reduce2(int dtype, int op, uint32_t a, uint32_t b)
{
	if (dtype == SHR_DTYPE_FLOAT32) {
		float x, y, r;

		memcpy(&x, &a, sizeof(x));
		memcpy(&y, &b, sizeof(y));
		r = op == SHR_OP_SUM ? x + y : op == SHR_OP_MIN ? (y < x ? y : x) :
		    (y > x ? y : x);
		memcpy(&a, &r, sizeof(a));
		return a;
	} else {
		int32_t x = (int32_t)a, y = (int32_t)b;

		if (op == SHR_OP_SUM)
			return a + b;
		return (uint32_t)(op == SHR_OP_MIN ? (y < x ? y : x) : (y > x ? y : x));
	}
}

/* Rank r's output of the collective, from every rank's buffers as filled (sent: in). */
static void
expected(const struct opts *o, uint32_t (*in)[W_WORLD * W_N], uint32_t (*out)[W_WORLD * W_N],
	 uint16_t r, uint32_t *want)
{
	uint16_t q;
	uint64_t j;

	for (j = 0; j < W_N; j++) {
		switch (o->kind) {
		case SHR_KIND_ALLREDUCE:
		case SHR_KIND_REDUCE:
		case SHR_KIND_REDUCE_SCATTER: {
			uint64_t idx = o->kind == SHR_KIND_REDUCE_SCATTER ? r * W_N + j : j;

			want[j] = in[0][idx];
			for (q = 1; q < W_WORLD; q++)
				want[j] = reduce2(o->dtype, o->op, want[j], in[q][idx]);
			break;
		}
		case SHR_KIND_BROADCAST:
			want[j] = out[o->root][j];	/* the root's buffer: what it sends */
			break;
		case SHR_KIND_ALLGATHER:
		case SHR_KIND_GATHER:
			for (q = 0; q < W_WORLD; q++)
				want[q * W_N + j] = in[q][j];
			break;
		case SHR_KIND_SCATTER:
			want[j] = in[o->root][r * W_N + j];
			break;
		default:	/* alltoall: block q from rank q's block r */
			for (q = 0; q < W_WORLD; q++)
				want[q * W_N + j] = in[q][r * W_N + j];
			break;
		}
	}
}

static void
check_kind(int kind, int dtype, int op, uint16_t root)
{
	static uint32_t in[W_WORLD][W_WORLD * W_N], out[W_WORLD][W_WORLD * W_N];
	uint32_t want[W_WORLD * W_N];
	struct opts o = {
		.kind = kind, .dtype = dtype, .op = op, .root = root, .data_world = W_WORLD,
		.seed = 11, .granted_chunk = 64,
	};
	uint64_t in_elems, out_elems, checked, bad, k;
	struct bad_elem first;
	uint16_t r;

	memset(out, 0xa5, sizeof(out));	/* what a buffer held before */
	for (r = 0; r < W_WORLD; r++) {
		o.data_rank = r;
		assert_int_equal(coll_sizes(&o, W_N, &in_elems, &out_elems), 0);
		assert_true(in_elems <= W_WORLD * W_N && out_elems <= W_WORLD * W_N);
		coll_fill(&o, in[r], out[r], W_N, W_IT);
		/* broadcast is in place: the root sends its buffer, its input */
		if (kind == SHR_KIND_BROADCAST && r == root)
			assert_memory_equal(out[r], in[r], W_N * sizeof(uint32_t));
	}
	for (r = 0; r < W_WORLD; r++) {
		bool gets = !((kind == SHR_KIND_REDUCE || kind == SHR_KIND_GATHER) && r != root);

		o.data_rank = r;
		(void)coll_sizes(&o, W_N, &in_elems, &out_elems);
		if (!gets) {
			/* nothing comes to this rank: its buffer, as it was, is not checked */
			bad = coll_check(&o, out[r], W_N, W_IT, &checked, &first);
			if (bad != 0 || checked != 0)
				fail_msg("%s at rank %u (root %u): %llu wrong of %llu checked",
					 shr_proto_kind_str((uint8_t)kind), r, root,
					 (unsigned long long)bad, (unsigned long long)checked);
			continue;
		}
		memset(want, 0, sizeof(want));
		expected(&o, in, out, r, want);
		bad = coll_check(&o, want, W_N, W_IT, &checked, &first);
		if (bad != 0 || checked != out_elems)
			fail_msg("%s dtype %d op %d at rank %u (root %u): %llu wrong (first %llu: "
				 "got %s, want %s), %llu checked",
				 shr_proto_kind_str((uint8_t)kind),
				 dtype, op, r, root, (unsigned long long)bad,
				 (unsigned long long)first.index, first.got, first.want,
				 (unsigned long long)checked);
		/* one element off by one: found, and named */
		for (k = 0; k < out_elems; k += 3) {
			want[k]++;
			bad = coll_check(&o, want, W_N, W_IT, &checked, &first);
			assert_int_equal(bad, 1);
			assert_int_equal(first.index, k);
			want[k]--;
		}
	}
}

static void
test_every_kind(void **state)
{
	static const int dtypes[] = { SHR_DTYPE_INT32, SHR_DTYPE_FLOAT32 };
	static const int ops[] = { SHR_OP_SUM, SHR_OP_MIN, SHR_OP_MAX };
	size_t k, d, p;
	uint16_t root;

	(void)state;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (d = 0; d < 2; d++)
			for (p = 0; p < 3; p++)
				for (root = 0; root < W_WORLD; root++)
					check_kind(kinds[k], dtypes[d], ops[p], root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
	};

	return cmocka_run_group_tests_name("worker_coll", tests, NULL, NULL);
}
