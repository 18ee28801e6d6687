/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Every collective across a tree of boxes (shr_agg.h, "Trees"), simulated (agg_tree_sim.h):
 * members JOIN their leaf with their rank in the whole tree, and run reduce, reduce_scatter,
 * broadcast, allgather, gather, scatter and alltoall in tree ranks (root and blocks of the
 * whole tree, N = every member), with roots in every leaf, on a two-level and a three-level
 * tree, clean and with up to 30% loss, duplication and reordering on every link. Checked: every
 * member's output exact (int32) against a reference computed here, nothing refused but stale
 * copies, each box's rounds sent up once each. Also: members that give no tree rank (or
 * the same one twice) get allreduce only; anything else is aborted, EOPNOTSUPP.
 */

#include "agg_tree_sim.h"

static const int two_level[] = { -1, 0, 0 };
static const int three_level[] = { -1, 0, 0, 1, 1, 2, 2 };

/* Elements of a member's input and output buffers for kind, N members, count per block. */
static uint64_t
t_in_len(uint8_t kind, uint64_t n, uint64_t count)
{
	return kind == SHR_KIND_REDUCE_SCATTER || kind == SHR_KIND_SCATTER ||
	       kind == SHR_KIND_ALLTOALL ? n * count : count;
}

static uint64_t
t_out_len(uint8_t kind, uint64_t n, uint64_t count)
{
	return kind == SHR_KIND_ALLGATHER || kind == SHR_KIND_GATHER ||
	       kind == SHR_KIND_ALLTOALL ? n * count : count;
}

/*
 * What member k (tree rank k) must hold at out[i] after kind with root over inputs in[]; 0:
 * the member gets no output (its buffer is not checked).
 */
static int
t_want(uint8_t kind, uint16_t root, unsigned int n, uint64_t count, int32_t *const *in,
       unsigned int k, uint64_t i, uint32_t *want)
{
	uint64_t blk = i / count, x = i % count;
	uint32_t sum = 0;
	unsigned int j;

	switch (kind) {
	case SHR_KIND_REDUCE:
		if (k != root)
			return 0;
		for (j = 0; j < n; j++)
			sum += (uint32_t)in[j][i];
		*want = sum;
		return 1;
	case SHR_KIND_REDUCE_SCATTER:
		for (j = 0; j < n; j++)
			sum += (uint32_t)in[j][k * count + i];
		*want = sum;
		return 1;
	case SHR_KIND_BROADCAST:
		if (k == root)
			return 0;
		*want = (uint32_t)in[root][i];
		return 1;
	case SHR_KIND_ALLGATHER:
		*want = (uint32_t)in[blk][x];
		return 1;
	case SHR_KIND_GATHER:
		if (k != root)
			return 0;
		*want = (uint32_t)in[blk][x];
		return 1;
	case SHR_KIND_SCATTER:
		*want = (uint32_t)in[root][k * count + i];
		return 1;
	default:	/* alltoall: block i from rank i */
		*want = (uint32_t)in[blk][k * count + x];
		return 1;
	}
}

/* One collective at every member, in tree ranks; every output checked. */
static void
t_coll(struct t_net *n, uint8_t kind, uint16_t root, unsigned int round, uint64_t count)
{
	int32_t *in[T_MEMS_MAX], *out[T_MEMS_MAX];
	uint64_t nin = t_in_len(kind, n->nmem, count), nout = t_out_len(kind, n->nmem, count);
	unsigned int k;
	uint64_t i;

	for (k = 0; k < n->nmem; k++) {
		struct shr_endpoint_op op = { .op = SHR_OP_SUM, .count = count, .step = round,
					      .kind = kind, .root = root, .tensor = kind };

		in[k] = malloc(nin * 4);
		out[k] = calloc(nout, 4);
		assert_non_null(in[k]);
		assert_non_null(out[k]);
		for (i = 0; i < nin; i++)
			in[k][i] = t_input(k, i, round);
		op.in = in[k];
		op.out = out[k];
		assert_true(shr_endpoint_submit(n->mem[k].ep, &op) >= 0);
	}
	assert_int_equal(t_run_until(n, t_is_idle, 20ull * T_TMO_NS), 0);
	for (k = 0; k < n->nmem; k++) {
		if (n->mem[k].failed)
			print_message("kind %u root %u count %llu: member %u failed %d (aux %u "
				      "rank %u)\n", kind, root, (unsigned long long)count, k,
				      n->mem[k].err, n->mem[k].abort.aux, n->mem[k].abort.rank);
		assert_false(n->mem[k].failed);
		for (i = 0; i < nout; i++) {
			uint32_t want;

			if (!t_want(kind, root, n->nmem, count, in, k, i, &want))
				break;
			if ((uint32_t)out[k][i] != want)
				print_message("kind %u root %u count %llu: member %u out[%llu] = "
					      "%d, want %d\n", kind, root,
					      (unsigned long long)count, k, (unsigned long long)i,
					      out[k][i], (int32_t)want);
			assert_int_equal((uint32_t)out[k][i], want);
		}
	}
	for (k = 0; k < n->nmem; k++) {
		free(in[k]);
		free(out[k]);
	}
}

/* Every kind, roots in different leaves, a few lengths (1 element to several chunks). */
static void
t_coll_case(const int *parent, unsigned int nbox, unsigned int loss, uint64_t seed)
{
	static const uint8_t kinds[] = { SHR_KIND_REDUCE, SHR_KIND_REDUCE_SCATTER,
					 SHR_KIND_BROADCAST, SHR_KIND_ALLGATHER,
					 SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL };
	static const uint64_t lens[] = { 1, 100 };
	struct t_net *n = calloc(1, sizeof(*n));
	unsigned int kk, l, b, round = 0;

	assert_non_null(n);
	t_build(n, parent, nbox, 2, seed, loss, loss);
	n->tree_world = (uint16_t)n->nmem;
	t_join(n);
	for (kk = 0; kk < sizeof(kinds); kk++)
		for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			/* the root walks through the leaves: rank 1, then the last rank, ... */
			uint16_t root = (uint16_t)((1 + round * (n->nmem - 1)) % n->nmem);

			t_coll(n, kinds[kk], root, round, lens[l]);
			round++;
		}
	/* an allreduce still sums the whole tree */
	t_allreduce_i32(n, round, 130);
	assert_int_equal(n->rejects, 0);
	for (b = 0; b < nbox; b++)
		if (parent[b] >= 0) {
			assert_int_equal(n->box[b].st.up_data, n->box[b].st.completed);
			assert_int_equal(n->box[b].st.up_results, n->box[b].st.completed);
		}
	t_free(n);
	free(n);
}

static void
test_coll_two_level(void **state)
{
	(void)state;
	t_coll_case(two_level, 3, 0, 1);
}

static void
test_coll_two_level_loss(void **state)
{
	uint64_t seed;

	(void)state;
	for (seed = 1; seed <= 2; seed++) {
		t_coll_case(two_level, 3, 10, seed);
		t_coll_case(two_level, 3, 30, seed + 100);
	}
}

static void
test_coll_three_level(void **state)
{
	(void)state;
	t_coll_case(three_level, 7, 0, 7);
	t_coll_case(three_level, 7, 20, 8);
	t_coll_case(three_level, 7, 30, 9);
}

/*
 * Members that give the same tree rank (here: none given, so each leaf's ranks are 0 and 1):
 * the root sees its members' tree ranks overlap. Allreduce still runs; a broadcast is
 * aborted (EOPNOTSUPP), not hung and not wrong.
 */
static void
test_coll_ranks_overlap(void **state)
{
	struct t_net *n = calloc(1, sizeof(*n));
	struct shr_endpoint_op op = { .count = 100, .kind = SHR_KIND_BROADCAST, .root = 0 };
	static int32_t buf[T_MEMS_MAX][100];
	unsigned int k;

	(void)state;
	assert_non_null(n);
	t_build(n, two_level, 3, 2, 51, 0, 0);
	t_join(n);
	t_allreduce_i32(n, 0, 100);
	for (k = 0; k < n->nmem; k++) {
		op.in = buf[k];
		op.out = buf[k];
		op.step = 1;
		assert_true(shr_endpoint_submit(n->mem[k].ep, &op) >= 0);
	}
	assert_int_equal(t_run_until(n, t_is_failed, 2 * T_TMO_NS), 0);
	for (k = 0; k < n->nmem; k++) {
		assert_int_equal(n->mem[k].err, -ECONNABORTED);
		assert_int_equal(n->mem[k].abort.aux, EOPNOTSUPP);
		/* the root refused it: every member hears it through its leaf */
		assert_true(n->mem[k].abort.flags & SHR_FLAG_UPSTREAM);
	}
	t_free(n);
	free(n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coll_two_level),
		cmocka_unit_test(test_coll_two_level_loss),
		cmocka_unit_test(test_coll_three_level),
		cmocka_unit_test(test_coll_ranks_overlap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
