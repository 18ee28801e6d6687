/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Every collective of the C API through the fake driver of comm_test.h (reduce,
 * reduce_scatter, broadcast, allgather, gather, scatter, alltoall; the fake ranks send a relay
 * round's payload when they are its source, a header only otherwise, and the box's
 * header-only RESULTs reach the communicator); and a call whose identity differs from another
 * rank's: the box's ABORT EPROTO, named by shr_comm_strerror().
 */

#include "comm_test.h"

/*
 * Every collective of the C API at rank 0 of 3 (the fake plays ranks 1 and 2 through the
 * real box: a relay round's source sends its payload, the others a header only), roots 0
 * and 2, blocking and non-blocking, with results lost (resent); rank 0's output exact, and
 * nothing written where rank 0 gets nothing (reduce and gather at root 2: out NULL).
 */
static void
test_collectives(void **state)
{
	static const uint8_t kinds[] = {
		SHR_KIND_REDUCE, SHR_KIND_REDUCE_SCATTER, SHR_KIND_BROADCAST, SHR_KIND_ALLGATHER,
		SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL,
	};
	const uint16_t w = 3;
	const uint64_t c = 100;
	struct fake *f = fake_new(w, 11);
	struct shr_comm *comm = comm_new(f);
	int32_t *in = malloc(w * c * 4), *out = malloc(w * c * 4);
	unsigned int i, rt, nb;
	uint64_t base = 0;	/* stream offset of the next collective */

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	f->loss = 10;
	for (nb = 0; nb < 2; nb++) {
		for (i = 0; i < sizeof(kinds); i++) {
			for (rt = 0; rt < w; rt += 2) {
				uint8_t kind = kinds[i];
				uint64_t nout = c, e;
				int rc = 0, req = -1;

				fill(in, w * c, i * 4 + rt);
				memset(out, 0x5a, w * c * 4);
				if (kind == SHR_KIND_ALLGATHER || kind == SHR_KIND_ALLTOALL ||
				    (kind == SHR_KIND_GATHER && rt == 0))
					nout = w * c;
				if ((kind == SHR_KIND_REDUCE || kind == SHR_KIND_GATHER) && rt != 0)
					nout = 0;
				if (kind == SHR_KIND_BROADCAST && rt == 0)
					nout = 0;	/* the root's buf is its input */
				switch (kind) {
				case SHR_KIND_REDUCE:
					req = nb ? shr_comm_ireduce(comm, in, nout ? out : NULL, c,
								    SHR_OP_SUM, (uint16_t)rt) :
					      shr_comm_reduce(comm, in, nout ? out : NULL, c,
							      SHR_OP_SUM, (uint16_t)rt);
					break;
				case SHR_KIND_REDUCE_SCATTER:
					req = nb ? shr_comm_ireduce_scatter(comm, in, out, c,
									    SHR_OP_SUM) :
					      shr_comm_reduce_scatter(comm, in, out, c, SHR_OP_SUM);
					break;
				case SHR_KIND_BROADCAST:
					if (rt == 0)
						memcpy(out, in, c * 4);
					req = nb ? shr_comm_ibroadcast(comm, out, c, (uint16_t)rt) :
					      shr_comm_broadcast(comm, out, c, (uint16_t)rt);
					break;
				case SHR_KIND_ALLGATHER:
					req = nb ? shr_comm_iallgather(comm, in, out, c) :
					      shr_comm_allgather(comm, in, out, c);
					break;
				case SHR_KIND_GATHER:
					req = nb ? shr_comm_igather(comm, in, nout ? out : NULL, c,
								    (uint16_t)rt) :
					      shr_comm_gather(comm, in, nout ? out : NULL, c,
							      (uint16_t)rt);
					break;
				case SHR_KIND_SCATTER:
					req = nb ? shr_comm_iscatter(comm, in, out, c,
								     (uint16_t)rt) :
					      shr_comm_scatter(comm, in, out, c, (uint16_t)rt);
					break;
				default:
					req = nb ? shr_comm_ialltoall(comm, in, out, c) :
					      shr_comm_alltoall(comm, in, out, c);
					break;
				}
				assert_true(req >= 0);
				if (nb)
					rc = shr_comm_wait(comm, req);
				assert_int_equal(rc, 0);
				for (e = 0; e < nout; e++)
					if (out[e] != coll_want(kind, w, (uint16_t)rt, c, in, e,
								base))
						fail_msg("%s root %u: element %llu is %d, want %d",
							 shr_proto_kind_str(kind), rt,
							 (unsigned long long)e, out[e],
							 coll_want(kind, w, (uint16_t)rt, c, in, e,
								   base));
				base += coll_space(kind, w, c);
				if (kind == SHR_KIND_BROADCAST && rt == 0) {
					assert_memory_equal(out, in, c * 4);
					nout = c;
				}
				for (e = nout; e < w * c; e++)
					assert_int_equal((uint32_t)out[e], 0x5a5a5a5au);
			}
		}
	}
	/* arguments: root outside the world, NULL buffers, another collective after */
	assert_int_equal(shr_comm_broadcast(comm, out, c, w), -EINVAL);
	assert_int_equal(shr_comm_gather(comm, in, NULL, c, 0), -EINVAL);
	assert_int_equal(shr_comm_scatter(comm, NULL, out, c, 0), -EINVAL);
	assert_int_equal(shr_comm_alltoall(comm, in, in, c), -EINVAL);
	assert_int_equal(shr_comm_barrier(comm), 0);
	assert_int_equal(shr_comm_destroy(comm), 0);
	free(in);
	free(out);
	fake_free(f);
}

/* The box's ABORT EPROTO as lib/agg builds it (shr_proto.h, ABORT), to the communicator. */
static void
f_abort_eproto(struct fake *f, uint16_t rank, const struct shr_comm_call *mine,
	       uint16_t other, const struct shr_comm_call *theirs)
{
	struct shr_proto_msg a = {
		.type = SHR_MSG_ABORT, .dtype = SHR_DTYPE_INT32, .rank = rank, .world = f->world,
		.job = F_JOB, .aux = EPROTO, .token = f->token,
		.kind = mine->kind, .root = mine->root, .tensor = mine->tensor,
		.step = mine->step, .count = mine->count,
		.slot = other, .offset = (uint64_t)theirs->tensor << 32 | theirs->step,
		.feedback = theirs->count, .op = theirs->kind, .flags = theirs->root,
	};
	struct f_msg *m = malloc(sizeof(*m));

	assert_non_null(m);
	m->len = SHR_PROTO_HDR_LEN;
	shr_proto_build(m->data, &a, NULL, 0);
	assert_true(f->rx_n < F_RXQ);
	f->rxq[f->rx_n++] = m;
}

/*
 * Issue 8 item 3, the communicator's side. The identity of a call travels in its DATA
 * (shr_comm_ident_set(): the step stays, the tensor id counts calls; a step back is
 * -EINVAL). Fake rank 2 calls with another step: the real box aborts the job (EPROTO) and
 * shr_comm_strerror() names both sides, from the box's ABORT; a rank that lost that ABORT
 * gets the box's repeat, the same ABORT, and names both sides too. An ABORT without the
 * details (rank and reason only) says so; one naming both sides read with it fills them in.
 */
static void
test_mismatch(void **state)
{
	const char *want_step = "job 7 aborted by the aggregator 198.18.0.1: ranks called "
		"different collectives: rank 2 called allreduce(tensor 40, step 7, round of 10 "
		"elements) where rank 0 called allreduce(tensor 40, step 5, round of 10 elements)";
	const char *want_kind = "job 7 aborted by the aggregator 198.18.0.1: ranks called "
		"different collectives: rank 2 called allgather(rank 0's block, tensor 4, step 9, "
		"round of 256 elements) where rank 0 called broadcast(root 0, tensor 4, step 9, "
		"round of 256 elements)";
	const char *want_lost = "job 7 aborted by the aggregator 198.18.0.1: ranks called "
		"different collectives: rank 2 disagreed with the others (this rank missed the "
		"box's first ABORT, which named both)";
	const struct shr_comm_call ag = { SHR_KIND_ALLGATHER, 0, 4, 9, 256 };
	const struct shr_comm_call bc = { SHR_KIND_BROADCAST, 0, 4, 9, 256 };
	struct shr_comm_abort ab;
	int32_t in[10] = { 1 }, out[10];
	uint32_t step, tensor;
	struct shr_comm *c;
	struct fake *f;
	char buf[512];
	int lost;

	(void)state;
	for (lost = 0; lost < 2; lost++) {
		f = fake_new(3, 8);
		c = comm_new(f);
		/* automatic identity: step 0, tensor ids count the calls */
		shr_comm_ident_get(c, &step, &tensor);
		assert_int_equal(step, 0);
		assert_int_equal(tensor, 0);
		assert_int_equal(shr_comm_barrier(c), 0);
		assert_int_equal(f->last_step, 0);
		assert_int_equal(f->last_tensor, 0);
		assert_int_equal(shr_comm_abort_get(c, &ab), -ENOENT);
		/* a step, then a step back or too far: refused, nothing changed */
		assert_int_equal(shr_comm_ident_set(c, 5, 40), 0);
		assert_int_equal(shr_comm_ident_set(c, 4, 41), -EINVAL);
		/* 2^31 above the first call's (0): the box could not order it */
		assert_int_equal(shr_comm_ident_set(c, 1u << 31, 41), -EINVAL);
		shr_comm_ident_get(c, &step, &tensor);
		assert_int_equal(step, 5);
		assert_int_equal(tensor, 40);

		f->odd_rank = 2;
		f->odd_step = 2;
		f->lose_aborts = (unsigned int)lost;
		assert_int_equal(shr_comm_allreduce(c, in, out, 10, SHR_OP_SUM), -ECONNABORTED);
		assert_int_equal(f->last_step, 5);	/* its DATA carried its identity */
		assert_int_equal(f->last_tensor, 40);
		assert_int_equal(f->st.mismatches, 1);
		assert_int_equal(shr_comm_abort_get(c, &ab), 0);
		assert_int_equal(ab.reason, EPROTO);
		assert_int_equal(ab.rank, 2);
		assert_int_equal(ab.detailed, 1);
		shr_comm_strerror(c, -ECONNABORTED, buf, sizeof(buf));
		assert_int_equal(ab.other, 0);
		assert_int_equal(ab.called.step, 7);
		assert_int_equal(ab.other_called.step, 5);
		assert_int_equal(ab.called.tensor, 40);
		assert_int_equal(ab.other_called.count, 10);
		assert_string_equal(buf, want_step);
		assert_int_equal(shr_comm_destroy(c), 0);
		fake_free(f);
	}

	/* an ABORT EPROTO without the details: this rank says it missed them */
	f = fake_new(3, 9);
	c = comm_new(f);
	assert_int_equal(shr_comm_barrier(c), 0);
	f_abort_eproto(f, 2, &(struct shr_comm_call){ 0 }, 0, &(struct shr_comm_call){ 0 });
	assert_int_equal(shr_comm_progress(c), -ECONNABORTED);
	assert_int_equal(shr_comm_abort_get(c, &ab), 0);
	assert_int_equal(ab.detailed, 0);
	shr_comm_strerror(c, -ECONNABORTED, buf, sizeof(buf));
	assert_string_equal(buf, want_lost);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);

	/*
	 * The box's repeat (fields 0) and then its ABORT naming both sides, read in one burst:
	 * the details are taken (other kinds and roots: each side's own), and kept.
	 */
	f = fake_new(3, 9);
	c = comm_new(f);
	assert_int_equal(shr_comm_barrier(c), 0);
	f_abort_eproto(f, 2, &(struct shr_comm_call){ 0 }, 0, &(struct shr_comm_call){ 0 });
	f_abort_eproto(f, 2, &ag, 0, &bc);
	f_abort_eproto(f, 1, &bc, 0, &ag);
	assert_int_equal(shr_comm_progress(c), -ECONNABORTED);
	assert_int_equal(shr_comm_abort_get(c, &ab), 0);
	assert_int_equal(ab.detailed, 1);
	assert_int_equal(ab.rank, 2);
	assert_int_equal(ab.called.kind, SHR_KIND_ALLGATHER);
	assert_int_equal(ab.other_called.kind, SHR_KIND_BROADCAST);
	shr_comm_strerror(c, -ECONNABORTED, buf, sizeof(buf));
	assert_string_equal(buf, want_kind);
	assert_int_equal(shr_comm_destroy(c), 0);
	fake_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collectives),
		cmocka_unit_test(test_mismatch),
	};

	return cmocka_run_group_tests_name("comm_coll", tests, NULL, NULL);
}
