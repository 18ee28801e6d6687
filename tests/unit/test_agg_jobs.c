/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The aggregator's jobs: membership, window and limits, isolation, the job table, static jobs,
 * chunk negotiation, lifecycle bounds. (Refusals and aborts that must leave nothing behind:
 * test_agg_jobs_refusals.c.) */

#include "agg_test.h"

/* ---- membership ---- */

static void
test_membership(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_info info;
	struct shr_proto_msg a, m;
	uint16_t r;

	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	/* Before the last rank joins: "still filling" (EINPROGRESS), again for a repeat. */
	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	/* a pending job holds no slots */
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.job, T_JOB);
	assert_int_equal(info.joined, 1);
	assert_int_equal(info.active, 0);
	assert_int_equal(info.is_static, 0);

	/* Conflicting JOINs: refused to the sender alone, with the reason. */
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD + 1, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_BAD_RANK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, EINVAL);
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->tx.dst[0], ADDR(1));
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_FLOAT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_JOB_DTYPE);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK * 2), SHR_PROTO_JOB_COUNT);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW + 1,
			      T_CHUNK), SHR_PROTO_BAD_SLOT);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	assert_int_equal(join(c, ADDR(1), T_JOB, T_WORLD, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_BAD_RANK);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	/* Rank 0 is bound to ADDR(0): another address cannot take it. */
	assert_int_equal(join(c, ADDR(5), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_SPOOFED);
	a = tx_msg(c);
	assert_int_equal(a.aux, EADDRINUSE);
	assert_int_equal(c->tx.dst[0], ADDR(5));
	assert_int_equal(c->st.joins, 1);

	/* The rest join: ack to all. */
	for (r = 1; r < T_WORLD; r++)
		assert_int_equal(join(c, ADDR(r), T_JOB, r, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
				      T_CHUNK), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, 0);
	assert_int_equal(c->tx.ndst, T_WORLD);
	assert_int_equal(c->st.joins, T_WORLD);
	assert_int_equal(c->st.jobs_created, 1);

	/* A repeated JOIN (its ack was lost): ack to that rank alone. */
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.slot, T_WINDOW);
	assert_int_equal(c->tx.ndst, 1);
	assert_int_equal(c->tx.dst[0], ADDR(1));
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.active, 1);
	assert_int_equal(info.joined, T_WORLD);

	/* Leaving: acked; a spoofed LEAVE is refused; the last one frees the job. */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.job = T_JOB;
	m.world = T_WORLD;
	m.rank = 0;
	assert_int_equal(feed(c, ADDR(1), &m, NULL, 0), SHR_PROTO_SPOOFED);
	assert_int_equal(c->tx.len, 0);
	for (r = 0; r < T_WORLD; r++) {
		m.rank = r;
		assert_int_equal(feed(c, ADDR(r), &m, NULL, 0), SHR_PROTO_OK);
		a = tx_msg(c);
		assert_int_equal(a.type, SHR_MSG_LEAVE_ACK);
		assert_int_equal(a.aux, 0);
		assert_int_equal(a.rank, r);
		assert_int_equal(c->tx.ndst, 1);
		assert_int_equal(c->tx.dst[0], ADDR(r));
		if (r == 0) {
			/* Resent LEAVE: acked again, nothing changes. */
			assert_int_equal(feed(c, ADDR(0), &m, NULL, 0), SHR_PROTO_OK);
			assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
			/*
			 * A departed rank's DATA is dropped as stale; its own late JOIN (the
			 * nonce it joined with) is a stale copy: no answer, nothing changes.
			 */
			m = data_msg(T_JOB, 0, T_WORLD, 0, 0, 1, 0, 4);
			assert_int_equal(data(c, ADDR(0), &m, 0), SHR_PROTO_OK);
			assert_int_equal(c->st.stale, 1);
			assert_int_equal(c->st.data, 0);
			assert_int_equal(join(c, ADDR(0), T_JOB, 0, T_WORLD, SHR_DTYPE_INT32,
					      T_WINDOW, T_CHUNK), SHR_PROTO_STALE_JOIN);
			assert_int_equal(c->tx.len, 0);
			assert_int_equal(c->st.joins, T_WORLD);
			assert_int_equal(c->st.incarnations, 0);
			memset(&m, 0, sizeof(m));
			m.type = SHR_MSG_LEAVE;
			m.job = T_JOB;
			m.world = T_WORLD;
		}
		if (r + 1 < T_WORLD)
			assert_int_equal(shr_agg_slots_used(c->agg), T_WINDOW);
	}
	assert_int_equal(c->st.leaves, T_WORLD);
	assert_int_equal(c->st.jobs_freed, 1);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 0);
	/* LEAVE again, for a job that is gone: told so. */
	m.rank = 2;
	assert_int_equal(feed(c, ADDR(2), &m, NULL, 0), SHR_PROTO_UNKNOWN_JOB);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_LEAVE_ACK);
	assert_int_equal(a.aux, ENOENT);
	m = data_msg(T_JOB, 1, T_WORLD, 0, 0, 1, 0, 4);
	assert_int_equal(data(c, ADDR(1), &m, 0), SHR_PROTO_UNKNOWN_JOB);

	/* A late JOIN of the run that left does not recreate the job. */
	assert_int_equal(join(c, ADDR(1), T_JOB, 1, T_WORLD, SHR_DTYPE_INT32, T_WINDOW,
			      T_CHUNK), SHR_PROTO_STALE_JOIN);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 0);
	/* The same id can be created again, fresh, by a new run (new processes). */
	t_run++;
	join_all(c, T_JOB, T_WORLD, SHR_DTYPE_INT32);
	assert_int_equal(shr_agg_slots_used(c->agg), T_WINDOW);
}

static void
test_window_and_limits(void **state)
{
	struct ctx *c = *state;
	struct shr_proto_msg a;
	uint32_t j;

	/* Window 0 or above max_window: max_window (8) granted. */
	assert_int_equal(join(c, ADDR(0), 1, 0, 1, SHR_DTYPE_INT32, 100, T_CHUNK),
			 SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.slot, 8);
	assert_int_equal(join(c, ADDR(0), 2, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).slot, 8);
	assert_int_equal(shr_agg_slots_used(c->agg), 16);
	/* The pool (16 slots) is full. */
	assert_int_equal(join(c, ADDR(0), 3, 0, 1, SHR_DTYPE_INT32, 1, T_CHUNK),
			 SHR_PROTO_POOL_FULL);
	assert_int_equal(tx_msg(c).aux, ENOSPC);
	/* Chunk larger than max_elems (the box's port): EMSGSIZE, naming what fits; world
	 * larger than max_world. */
	assert_int_equal(join(c, ADDR(0), 3, 0, 1, SHR_DTYPE_INT32, 1, 65), SHR_PROTO_PATH_MTU);
	assert_int_equal(tx_msg(c).aux, EMSGSIZE);
	assert_int_equal(tx_msg(c).count, 65);
	assert_int_equal(tx_msg(c).feedback, 64);
	assert_int_equal(join(c, ADDR(0), 3, 0, 9, SHR_DTYPE_INT32, 1, 8), SHR_PROTO_BAD_RANK);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	/* Job table (4 entries) full. */
	shr_agg_free(c->agg);
	c->agg = mk_agg(T_TIMEOUT);
	for (j = 0; j < 4; j++)
		assert_int_equal(join(c, ADDR(0), j, 0, 1, SHR_DTYPE_INT32, 1, 8),
				 SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(0), 4, 0, 1, SHR_DTYPE_INT32, 1, 8),
			 SHR_PROTO_JOBS_FULL);
	assert_int_equal(tx_msg(c).aux, ENOSPC);
	assert_int_equal(shr_agg_slots_used(c->agg), 4);
}

/* Two jobs, same slot indices: isolated sums; the job table keeps working as jobs go. */
static void
test_jobs_isolated(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_info info;
	uint8_t want[T_MAXBUF];
	struct shr_proto_msg m;
	uint32_t idx, seen = 0;
	uint16_t k;

	join_all(c, 100, T_WORLD, SHR_DTYPE_INT32);
	join_all(c, 200, 2, SHR_DTYPE_INT32);
	for (k = 0; k < 2; k++) {
		m = data_msg(100, k, T_WORLD, 0, 0, 1, 0, 3);
		assert_int_equal(data(c, ADDR(k), &m, 10), SHR_PROTO_OK);
		m = data_msg(200, k, 2, 0, 0, 1, 0, 3);
		assert_int_equal(data(c, ADDR(k), &m, 20), SHR_PROTO_OK);
	}
	assert_int_equal(c->tx.len, expected_result(c, want, 200, 2, 0, 0, 1, 5, 0, 3, 0, 20));
	assert_memory_equal(c->tx.buf, want, c->tx.len);
	m = data_msg(100, 2, T_WORLD, 0, 0, 1, 0, 3);
	assert_int_equal(data(c, ADDR(2), &m, 10), SHR_PROTO_OK);
	assert_int_equal(c->tx.len, expected_result(c, want, 100, T_WORLD, 0, 0, 1, 5, 0, 3, 0,
						    10));
	assert_memory_equal(c->tx.buf, want, c->tx.len);

	for (idx = 0; shr_agg_job_info(c->agg, idx, &info) >= 0; idx++)
		if (shr_agg_job_info(c->agg, idx, &info) == 1)
			seen |= info.job == 100 ? 1 : info.job == 200 ? 2 : 4;
	assert_int_equal(seen, 3);
	assert_int_equal(idx, 4);

	/* Deleting one job leaves the other reachable (hash deletion). */
	assert_int_equal(shr_agg_job_del(c->agg, 100), 0);
	assert_int_equal(shr_agg_job_del(c->agg, 100), -ENOENT);
	m = data_msg(200, 0, 2, 1, 0, 1, 0, 3);
	assert_int_equal(data(c, ADDR(0), &m, 20), SHR_PROTO_OK);
	m = data_msg(100, 0, T_WORLD, 1, 0, 1, 0, 3);
	assert_int_equal(data(c, ADDR(0), &m, 20), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(shr_agg_slots_used(c->agg), T_WINDOW);
}

/* Many ids that collide in a small hash, added and removed in mixed order. */
static void
test_job_hash_churn(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_conf conf = {
		.token = T_TOKEN,
		.world = 1, .dtype = SHR_DTYPE_INT32, .window = 1, .chunk_elems = 4,
	};
	uint64_t a0 = ADDR(0);
	uint32_t i, round;

	conf.addrs = &a0;
	for (round = 0; round < 50; round++) {
		uint32_t ids[4];

		for (i = 0; i < 4; i++) {
			ids[i] = round * 7919u + i * 16u;
			conf.job = ids[i];
			assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
		}
		for (i = 0; i < 4; i++) {
			struct shr_proto_msg m = data_msg(ids[i], 0, 1, 0, 0, 1, 0, 4);

			assert_int_equal(data(c, ADDR(0), &m, (int32_t)i), SHR_PROTO_OK);
			assert_int_equal(tx_msg(c).job, ids[i]);
		}
		assert_int_equal(shr_agg_job_del(c->agg, ids[(round + 1) % 4]), 0);
		for (i = 0; i < 4; i++) {
			struct shr_proto_msg m = data_msg(ids[i], 0, 1, 0, 1, 1, 0, 4);

			assert_int_equal(data(c, ADDR(0), &m, 0),
					 i == (round + 1) % 4 ? SHR_PROTO_UNKNOWN_JOB :
					 SHR_PROTO_OK);
		}
		for (i = 0; i < 4; i++)
			if (i != (round + 1) % 4)
				assert_int_equal(shr_agg_job_del(c->agg, ids[i]), 0);
		assert_int_equal(shr_agg_slots_used(c->agg), 0);
	}
}

/* ---- static jobs ---- */

static void
test_static_jobs(void **state)
{
	struct ctx *c = *state;
	uint64_t addrs[T_WORLD] = { ADDR(0), ADDR(1), ADDR(2) };
	struct shr_agg_job_conf conf = {
		.token = T_TOKEN,
		.job = 42, .world = T_WORLD, .dtype = SHR_DTYPE_INT32, .window = 2,
		.chunk_elems = T_CHUNK, .addrs = addrs,
	};
	struct shr_agg_job_info info;
	uint8_t want[T_MAXBUF];
	struct shr_proto_msg m, a;
	uint16_t k;

	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EEXIST);
	assert_int_equal(shr_agg_job_info(c->agg, 0, &info), 1);
	assert_int_equal(info.is_static, 1);
	assert_int_equal(info.active, 1);
	assert_int_equal(info.joined, T_WORLD);
	assert_int_equal(shr_agg_slots_used(c->agg), 2);

	/* Active at once: no JOIN needed. */
	for (k = 0; k < T_WORLD; k++) {
		m = data_msg(42, k, T_WORLD, 1, 0, 3, 0, T_CHUNK);
		assert_int_equal(data(c, ADDR(k), &m, 1), SHR_PROTO_OK);
	}
	assert_int_equal(c->tx.len, expected_result(c, want, 42, T_WORLD, 1, 0, 3, 5, 0, T_CHUNK,
						    0, 1));
	assert_memory_equal(c->tx.buf, want, c->tx.len);
	m = data_msg(42, 0, T_WORLD, 0, 0, 3, 0, T_CHUNK);
	assert_int_equal(data(c, ADDR(1), &m, 1), SHR_PROTO_SPOOFED);
	/* A JOIN from a configured member is acked; from elsewhere, refused. */
	assert_int_equal(join(c, ADDR(1), 42, 1, T_WORLD, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.slot, 2);
	assert_int_equal(join(c, ADDR(7), 42, 1, T_WORLD, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_SPOOFED);
	assert_int_equal(tx_msg(c).aux, EADDRINUSE);
	/* Configured members stay bound when they leave. */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_LEAVE;
	m.job = 42;
	m.rank = 2;
	m.world = T_WORLD;
	assert_int_equal(feed(c, ADDR(2), &m, NULL, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).type, SHR_MSG_LEAVE_ACK);
	m = data_msg(42, 2, T_WORLD, 0, 0, 3, 0, T_CHUNK);
	assert_int_equal(data(c, ADDR(2), &m, 1), SHR_PROTO_OK);

	/* Bad configurations. */
	conf.job = 43;
	conf.world = 0;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.world = 9;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.world = T_WORLD;
	conf.dtype = 0;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.dtype = SHR_DTYPE_MAX;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.dtype = SHR_DTYPE_INT32;
	conf.window = 9;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.window = 0;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.window = 8;
	conf.chunk_elems = 65;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -EINVAL);
	conf.chunk_elems = T_CHUNK;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	conf.job = 44;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), -ENOSPC);	/* 2 + 8 + 8 > 16 */

	/* A static job without addresses binds on JOIN, any window requested. */
	assert_int_equal(shr_agg_job_del(c->agg, 43), 0);
	conf.addrs = NULL;
	conf.world = 2;
	conf.window = 4;
	assert_int_equal(shr_agg_job_add(c->agg, &conf), 0);
	m = data_msg(44, 0, 2, 0, 0, 3, 0, 4);
	assert_int_equal(data(c, ADDR(0), &m, 1), SHR_PROTO_UNKNOWN_JOB);
	assert_int_equal(join(c, ADDR(0), 44, 0, 2, SHR_DTYPE_INT32, 99, T_CHUNK),
			 SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(join(c, ADDR(1), 44, 1, 2, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.slot, 4);
	assert_int_equal(c->tx.ndst, 2);
	assert_int_equal(data(c, ADDR(0), &m, 1), SHR_PROTO_OK);
	/* All leave: the job stays, inactive, with fresh slots. */
	memset(&a, 0, sizeof(a));
	a.type = SHR_MSG_LEAVE;
	a.job = 44;
	a.world = 2;
	for (k = 0; k < 2; k++) {
		a.rank = k;
		assert_int_equal(feed(c, ADDR(k), &a, NULL, 0), SHR_PROTO_OK);
	}
	assert_int_equal(shr_agg_slots_used(c->agg), 2 + 4);
	assert_int_equal(shr_agg_job_info(c->agg, 1, &info), 1);
	assert_int_equal(info.job, 44);
	assert_int_equal(info.active, 0);
	assert_int_equal(info.joined, 0);
	/* New members (other addresses) start over on version 0 of slot 0. */
	assert_int_equal(join(c, ADDR(4), 44, 0, 2, SHR_DTYPE_INT32, 4, T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(5), 44, 1, 2, SHR_DTYPE_INT32, 4, T_CHUNK), SHR_PROTO_OK);
	for (k = 0; k < 2; k++) {
		m = data_msg(44, k, 2, 0, 0, 3, 0, 4);
		assert_int_equal(data(c, ADDR(4 + k), &m, 1), SHR_PROTO_OK);
	}
	assert_int_equal(c->tx.len, expected_result(c, want, 44, 2, 0, 0, 3, 5, 0, 4, 0, 1));
	assert_memory_equal(c->tx.buf, want, c->tx.len);
	assert_int_equal(c->tx.ndst, 2);
	assert_int_equal(c->tx.dst[0], ADDR(4));

	assert_int_equal(shr_agg_job_del(c->agg, 42), 0);
	assert_int_equal(shr_agg_job_del(c->agg, 44), 0);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
}

/* JOIN with feedback = the largest chunk its path carries (issue 17). */
static enum shr_proto_reason
join_path(struct ctx *c, uint64_t src, uint32_t job, uint16_t rank, uint16_t world,
	  uint32_t chunk, uint32_t path)
{
	struct shr_proto_msg m = join_msg(job, rank, world, SHR_DTYPE_INT32, 2, chunk);

	m.feedback = path;
	return feed(c, src, &m, NULL, 0);
}

/*
 * Chunk negotiation: a job made with chunk 0 gets the largest chunk every member's path (and
 * the box's port) carries; a job with a fixed chunk, or a static job, refuses a member whose
 * path cannot carry it (EMSGSIZE, naming the chunk and what fits); a member that asks for
 * another fixed chunk is refused as before.
 */
static void
test_chunk_negotiation(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_job_conf sc = {
		.job = 60, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 2, .chunk_elems = 32,
		.ordered = 1,
	};
	struct shr_proto_msg a;

	/* auto, world 3: paths unknown (64: the box's max_elems), 40, 50 -> 40 */
	assert_int_equal(join_path(c, ADDR(0), 1, 0, 3, 0, 0), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(join_path(c, ADDR(1), 1, 1, 3, 0, 40), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(2), 1, 2, 3, 0, 50), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(c->tx.ndst, 3);
	assert_int_equal(a.count, 40);
	/*
	 * fixed chunk 48: an auto member whose path carries 30 cannot be in the job: the job, still
	 * filling, is aborted at once (EMSGSIZE) for its member and the rank refused (the ABORT
	 * echoes its JOIN's nonce), with the chunk and what fits
	 */
	assert_int_equal(join_path(c, ADDR(0), 2, 0, 2, 48, 0), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(1), 2, 1, 2, 0, 30), SHR_PROTO_PATH_MTU);
	a = tx_msg(c);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.aux, EMSGSIZE);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.count, 48);
	assert_int_equal(a.feedback, 30);
	assert_true(a.offset == nonce_of(2, 1, ADDR(1)));
	assert_int_equal(c->tx.ndst, 2);
	assert_true(c->tx.dst[0] == ADDR(0) && c->tx.dst[1] == ADDR(1));
	/* an auto member whose path carries a fixed chunk (48) joins that job */
	assert_int_equal(join_path(c, ADDR(0), 4, 0, 2, 48, 0), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(3), 4, 1, 2, 0, 60), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.count, 48);
	/* ... and one asking for another fixed chunk is refused as before */
	assert_int_equal(join_path(c, ADDR(0), 3, 0, 2, 0, 0), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(1), 3, 1, 2, 16, 0), SHR_PROTO_JOB_COUNT);
	assert_int_equal(tx_msg(c).aux, EINVAL);
	/* a static job's chunk (32) is fixed: a path of 31 is refused, an auto member joins */
	assert_int_equal(shr_agg_job_add(c->agg, &sc), 0);
	assert_int_equal(join_path(c, ADDR(4), 60, 0, 2, 32, 31), SHR_PROTO_PATH_MTU);
	assert_int_equal(tx_msg(c).feedback, 31);
	assert_int_equal(join_path(c, ADDR(4), 60, 0, 2, 0, 1000), SHR_PROTO_OK);
	assert_int_equal(join_path(c, ADDR(5), 60, 1, 2, 32, 0), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.count, 32);
	assert_int_equal(c->st.rejects[SHR_PROTO_PATH_MTU], 2);
	assert_int_equal(c->st.aborts, 1);
}

/* Window 0 is the default window, not the pool; one address holds at most max_src_jobs
 * jobs; a pending job holds no slots; a stale JOIN of a job that was left never recreates
 * it; an idle active job is reclaimed. */
static void
test_lifecycle_bounds(void **state)
{
	struct ctx *c = *state;
	struct shr_agg_params p = {
		.nslots = 64, .max_elems = 64, .max_world = 8, .max_jobs = 16, .max_window = 32,
		.def_window = 4, .max_src_jobs = 2, .job_timeout_ns = T_TIMEOUT,
		.idle_ns = 10 * T_TIMEOUT,
	};
	struct shr_proto_msg a;

	shr_agg_free(c->agg);
	c->agg = shr_agg_create(&p);
	assert_non_null(c->agg);
	/* window 0: the default (4) */
	assert_int_equal(join(c, ADDR(0), 1, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK), SHR_PROTO_OK);
	a = tx_msg(c);
	assert_int_equal(a.aux, 0);
	assert_int_equal(a.slot, 4);
	/* a pending job (world 2) from the same address: no slots */
	assert_int_equal(join(c, ADDR(0), 2, 0, 2, SHR_DTYPE_INT32, 0, T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, EINPROGRESS);
	assert_int_equal(shr_agg_slots_used(c->agg), 4);
	/* a third job from that IPv4 address (another port): refused, counted */
	assert_int_equal(join(c, ADDR(0) + 1, 3, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_SRC_LIMIT);
	assert_int_equal(tx_msg(c).aux, EDQUOT);
	/* another address gets in */
	assert_int_equal(join(c, ADDR(1), 3, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK), SHR_PROTO_OK);
	assert_int_equal(tx_msg(c).aux, 0);
	/* job 1 (world 1) is left; its late JOIN does not recreate it */
	memset(&a, 0, sizeof(a));
	a.type = SHR_MSG_LEAVE;
	a.job = 1;
	a.world = 1;
	assert_int_equal(feed(c, ADDR(0), &a, NULL, 0), SHR_PROTO_OK);
	assert_int_equal(join(c, ADDR(0), 1, 0, 1, SHR_DTYPE_INT32, 0, T_CHUNK),
			 SHR_PROTO_STALE_JOIN);
	assert_int_equal(c->tx.len, 0);
	assert_int_equal(c->st.rejects[SHR_PROTO_STALE_JOIN], 1);
	/*
	 * Past idle_ns: job 3 (active, idle) is aborted (rank ALL) and freed; the pending job
	 * 2 has waited more than 4 job timeouts for rank 1: aborted naming it. Nothing left.
	 */
	c->now += 10 * T_TIMEOUT + 2;
	while (shr_agg_tick(c->agg, c->now, &c->tx, &c->st) == 1) {
		a = tx_msg(c);
		assert_int_equal(a.type, SHR_MSG_ABORT);
		assert_int_equal(a.aux, ETIMEDOUT);
		assert_int_equal(a.rank, a.job == 3 ? SHR_PROTO_RANK_ALL : 1);
	}
	assert_int_equal(c->st.idle_reclaims, 1);
	assert_int_equal(c->st.aborts, 2);
	assert_int_equal(shr_agg_slots_used(c->agg), 0);
	{
		struct shr_agg_job_info info;
		uint32_t idx, n = 0;

		int rc;

		for (idx = 0; (rc = shr_agg_job_info(c->agg, idx, &info)) >= 0; idx++)
			n += rc == 1;
		assert_int_equal(n, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_membership, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window_and_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobs_isolated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_hash_churn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_jobs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk_negotiation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifecycle_bounds, setup, teardown),
	};

	return cmocka_run_group_tests_name("agg_jobs", tests, NULL, NULL);
}
