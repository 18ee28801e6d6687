/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* The aggregator's jobs: membership, window and limits, isolation, the job table, static jobs,
 * chunk negotiation, lifecycle bounds. */

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

/* ---- refusals that must leave nothing behind (found by an audit, 2026-11-29) ---- */

/* m into b, fed to agg from src at now; *out: the message sent back (type 0: none). */
static enum shr_proto_reason
z_feed(struct shr_agg *agg, struct shr_agg_tx *tx, uint8_t *txbuf, size_t txcap, uint64_t src,
       const struct shr_proto_msg *m, uint64_t now, struct shr_agg_stats *st,
       struct shr_proto_msg *out)
{
	uint8_t b[SHR_PROTO_HDR_LEN + 64 * 4];
	size_t plen = m->type == SHR_MSG_DATA ? (size_t)m->count * 4 : 0;
	enum shr_proto_reason r;

	assert_true(plen <= 64 * 4);
	memset(b + SHR_PROTO_HDR_LEN, 0, plen);
	shr_proto_build(b, m, b + SHR_PROTO_HDR_LEN, plen);
	tx->buf = txbuf;
	tx->cap = txcap;
	r = shr_agg_input(agg, src, b, SHR_PROTO_HDR_LEN + plen, now, tx, st);
	memset(out, 0, sizeof(*out));
	if (tx->len != 0)
		assert_int_equal(shr_proto_validate(txbuf, tx->len, out), SHR_PROTO_OK);
	return r;
}

/*
 * A message of type from rank of job (world ranks, int32) with token (a JOIN's nonce): a JOIN
 * asks for window 4; a DATA is a SUM of 8 elements at step 1, slot 0.
 */
static struct shr_proto_msg
z_msg(uint8_t type, uint32_t job, uint16_t rank, uint16_t world, uint64_t token)
{
	struct shr_proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.job = job;
	m.rank = rank;
	m.world = world;
	m.dtype = SHR_DTYPE_INT32;
	m.token = token;
	if (type == SHR_MSG_JOIN)
		m.slot = 4;
	if (type == SHR_MSG_DATA) {
		m.op = SHR_OP_SUM;
		m.count = 8;
		m.step = 1;
	}
	return m;
}

static struct shr_proto_msg
z_join(uint32_t job, uint16_t rank, uint16_t world, uint64_t nonce, uint32_t count)
{
	struct shr_proto_msg m = z_msg(SHR_MSG_JOIN, job, rank, world, nonce);

	m.count = count;
	return m;
}

/* The boxes of these tests: small, a 1 ms job timeout unless the test says otherwise. */
static const struct shr_agg_params z_params = {
	.nslots = 64, .max_elems = 64, .max_world = 8, .max_jobs = 4, .max_window = 8,
	.job_timeout_ns = 1000000ull,
};

/*
 * A JOIN refused for its tree ranks (root + span past SHR_PROTO_MAX_WORLD) made the job
 * first and left it: no member, so no timeout freed it; four filled the table for good.
 */
static void
test_refused_join_no_zombie(void **state)
{
	struct shr_agg_params p = z_params;
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg = shr_agg_create(&p);
	uint32_t job;

	(void)state;
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	for (job = 1; job <= 5; job++) {
		m = z_join(job, 0, 2, 0x1234 + job, 8);
		m.tensor = 1;
		m.root = 5000;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1000, &st,
					&a), SHR_PROTO_BAD_RANK);
	}
	assert_int_equal(st.jobs_created, 0);
	/* a good JOIN of job 1 (another window) and of a new job get in */
	m = z_join(1, 0, 2, 0x777, 8);
	m.slot = 2;
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 2000, &st, &a),
			 SHR_PROTO_OK);
	assert_int_equal(a.aux, EINPROGRESS);
	m = z_join(99, 0, 2, 0x778, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 2000, &st, &a),
			 SHR_PROTO_OK);
	assert_int_equal(a.aux, EINPROGRESS);
	shr_agg_free(agg);
}

/*
 * A tree box's job, every rank joined (waiting for the upstream), a rank's new process whose
 * path fits less than the job's chunk: the ABORT goes to every member and to that JOIN,
 * world + 1 addresses (it wrote past the control path's list of max_world: ASan), and once
 * to a rank bound at the JOIN's own address.
 */
static void
test_abort_join_fits_list(void **state)
{
	struct shr_agg_params p = z_params;
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg;

	(void)state;
	p.max_world = 2;
	p.upstream = SHR_AGG_ADDR(0x0a000001u, 9000);
	p.up_world = 2;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	m = z_join(7, 0, 2, 0x1111, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1000, &st, &a), 0);
	m = z_join(7, 1, 2, 0x2222, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(1), &m, 1000, &st, &a), 0);
	assert_int_equal(a.type, SHR_MSG_JOIN);	/* up: the job waits for its upstream */
	/* rank 1 again from elsewhere (a new port: a restarted process), its path fits 4 */
	m = z_join(7, 1, 2, 0x3333, 0);
	m.feedback = 4;
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), SHR_AGG_ADDR(0xc6120002u, 40001),
				&m, 1010, &st, &a), SHR_PROTO_PATH_MTU);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.aux, EMSGSIZE);
	assert_int_equal(tx.ndst, 3);
	assert_true(tx.dst[2] == SHR_AGG_ADDR(0xc6120002u, 40001));
	shr_agg_free(agg);
}

/*
 * Two data lanes answering DATA of an aborted job at once (the ABORT again, to each sender):
 * each answer's destination is its own, not a list the other lane's call overwrites.
 */
static void
test_reabort_dst_per_call(void **state)
{
	struct shr_agg_params p = z_params;
	static uint8_t b0[1024], b1[1024], b2[1024];
	struct shr_agg_tx t0, t1, t2;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg;
	uint64_t tok, now = 1000;
	uint16_t r;

	(void)state;
	p.lanes = 2;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	for (r = 0; r < 2; r++) {
		m = z_join(9, r, 2, 0xa0 + r, 8);
		assert_int_equal(z_feed(agg, &t2, b2, sizeof(b2), ADDR(r), &m, now, &st, &a), 0);
	}
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	tok = a.token;
	m = z_msg(SHR_MSG_DATA, 9, 0, 2, tok);
	assert_int_equal(z_feed(agg, &t2, b2, sizeof(b2), ADDR(0), &m, now, &st, &a), 0);
	/* rank 1 never sends: the round times out, the job is aborted */
	t2.buf = b2;
	t2.cap = sizeof(b2);
	assert_true(shr_agg_tick(agg, now + 5000000, &t2, &st) > 0);
	now += 6000000;
	m.slot = 0;
	(void)z_feed(agg, &t0, b0, sizeof(b0), ADDR(0), &m, now, &st, &a);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(t0.ndst, 1);
	m.rank = 1;
	m.slot = 1;
	(void)z_feed(agg, &t1, b1, sizeof(b1), ADDR(1), &m, now, &st, &a);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(t1.ndst, 1);
	/* lane 0's answer still goes to rank 0 */
	assert_true(t0.dst[0] == ADDR(0));
	assert_true(t1.dst[0] == ADDR(1));
	shr_agg_free(agg);
}

/*
 * A static job's incarnation aborted (a rank silent) while rank 1 lost the ABORT: its LEAVE
 * with the ended incarnation's token is told the incarnation is gone (LEAVE_ACK ENOENT, as
 * for a freed job), not ignored (its destroy waited and said the box still held it).
 */
static void
test_leave_after_lost_abort(void **state)
{
	struct shr_agg_params p = z_params;
	struct shr_agg_job_conf jc = {
		.job = 5, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 4, .chunk_elems = 8,
		.ordered = 1,
	};
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg = shr_agg_create(&p);
	uint64_t tok, now = 1000;
	uint16_t r;

	(void)state;
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	assert_int_equal(shr_agg_job_add(agg, &jc), 0);
	for (r = 0; r < 2; r++) {
		m = z_join(5, r, 2, 0x1111 * (r + 1u), 8);
		m.slot = 0;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now, &st,
					&a), 0);
	}
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	tok = a.token;
	m = z_msg(SHR_MSG_DATA, 5, 0, 2, tok);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, now, &st, &a), 0);
	now += 5000000;
	tx.buf = txbuf;
	tx.cap = sizeof(txbuf);
	assert_true(shr_agg_tick(agg, now, &tx, &st) > 0);	/* the ABORT: rank 1 loses it */
	m = z_msg(SHR_MSG_LEAVE, 5, 1, 2, tok);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(1), &m, now + 1000, &st,
				&a), SHR_PROTO_OK);
	assert_int_equal(a.type, SHR_MSG_LEAVE_ACK);
	assert_int_equal(a.aux, ENOENT);
	assert_int_equal(a.rank, 1);
	/* not from the member's address: nothing */
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(3), &m, now + 2000, &st,
				&a), SHR_PROTO_BAD_TOKEN);
	assert_int_equal(tx.len, 0);
	shr_agg_free(agg);
}

/*
 * A static job whose first incarnation's members came with tree ranks (a box below) and whose
 * next one's are plain ranks: the next one checks roots against its world again (a DATA of a
 * reduce to root 5 in a world of 2 was taken).
 */
static void
test_incarnation_forgets_tree(void **state)
{
	struct shr_agg_params p = z_params;
	struct shr_agg_job_conf jc = {
		.job = 6, .world = 2, .dtype = SHR_DTYPE_INT32, .window = 4, .chunk_elems = 8,
		.ordered = 1,
	};
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg;
	uint64_t tok, now = 1000;
	uint16_t r;

	(void)state;
	p.job_timeout_ns = 1000000000ull;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	assert_int_equal(shr_agg_job_add(agg, &jc), 0);
	/* incarnation 1: each member stands for one tree rank (its own) */
	for (r = 0; r < 2; r++) {
		m = z_join(6, r, 2, 0x100 + r, 8);
		m.slot = 0;
		m.root = r;
		m.tensor = 1;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now, &st,
					&a), 0);
	}
	tok = a.token;
	for (r = 0; r < 2; r++) {
		m = z_msg(SHR_MSG_LEAVE, 6, r, 2, tok);
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now, &st,
					&a), 0);
	}
	/* incarnation 2: plain members */
	for (r = 0; r < 2; r++) {
		m = z_join(6, r, 2, 0x200 + r, 8);
		m.slot = 0;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now + 10, &st,
					&a), 0);
	}
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	assert_true(a.token != tok);
	m = z_msg(SHR_MSG_DATA, 6, 0, 2, a.token);
	m.kind = SHR_KIND_REDUCE;
	m.root = 5;
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, now + 20, &st, &a),
			 SHR_PROTO_BAD_KIND);
	shr_agg_free(agg);
}

/*
 * A rank that gave up while the job filled (its LEAVE) and whose JOIN comes in again late (a
 * copy delayed on the way): not bound again (the job would start with a process that is gone
 * and time out naming it); a new process of that rank (a new nonce) is.
 */
static void
test_left_rank_late_join(void **state)
{
	struct shr_agg_params p = z_params;
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg = shr_agg_create(&p);
	struct shr_agg_job_info ji;

	(void)state;
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	m = z_join(4, 1, 3, 0xb1, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(1), &m, 1000, &st, &a), 0);
	m = z_join(4, 0, 3, 0xa0, 8);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1000, &st, &a), 0);
	assert_int_equal(a.aux, EINPROGRESS);
	m = z_msg(SHR_MSG_LEAVE, 4, 0, 3, a.token);
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1100, &st, &a), 0);
	assert_int_equal(a.type, SHR_MSG_LEAVE_ACK);
	m = z_join(4, 0, 3, 0xa0, 8);	/* the delayed copy */
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1200, &st, &a),
			 SHR_PROTO_STALE_JOIN);
	assert_int_equal(shr_agg_job_info(agg, 0, &ji), 1);
	assert_int_equal(ji.joined, 1);
	m = z_join(4, 0, 3, 0xa1, 8);	/* a new process */
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(0), &m, 1300, &st, &a), 0);
	assert_int_equal(shr_agg_job_info(agg, 0, &ji), 1);
	assert_int_equal(ji.joined, 2);
	shr_agg_free(agg);
}

/*
 * A tree's job whose members' tree ranks overlap (each stands for tree rank 0) runs allreduce
 * only: rank 1's broadcast is refused, and the next tick aborts the job naming rank 1, the
 * member that asked for it (EOPNOTSUPP), to every member.
 */
static void
test_tree_unsup_names_rank(void **state)
{
	struct shr_agg_params p = z_params;
	struct shr_agg_job_conf jc = {
		.job = 7, .world = 3, .dtype = SHR_DTYPE_INT32, .window = 4, .chunk_elems = 8,
		.ordered = 1,
	};
	static uint8_t txbuf[1024];
	struct shr_agg_tx tx;
	struct shr_agg_stats st;
	struct shr_proto_msg m, a;
	struct shr_agg *agg;
	uint64_t now = 1000;
	uint16_t r;

	(void)state;
	agg = shr_agg_create(&p);
	assert_non_null(agg);
	memset(&st, 0, sizeof(st));
	assert_int_equal(shr_agg_job_add(agg, &jc), 0);
	for (r = 0; r < 3; r++) {
		m = z_join(7, r, 3, 0x300 + r, 8);
		m.slot = 0;
		m.root = 0;
		m.tensor = 1;
		assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(r), &m, now, &st,
					&a), 0);
	}
	assert_int_equal(a.type, SHR_MSG_JOIN_ACK);
	m = z_msg(SHR_MSG_DATA, 7, 1, 3, a.token);
	m.kind = SHR_KIND_BROADCAST;
	m.root = 0;
	m.aux = SHR_PROTO_RANK_ALL;
	assert_int_equal(z_feed(agg, &tx, txbuf, sizeof(txbuf), ADDR(1), &m, now, &st, &a),
			 SHR_PROTO_BAD_KIND);
	tx.buf = txbuf;
	tx.cap = sizeof(txbuf);
	assert_int_equal(shr_agg_tick(agg, now + 1, &tx, &st), 1);
	assert_int_equal(shr_proto_validate(txbuf, tx.len, &a), SHR_PROTO_OK);
	assert_int_equal(a.type, SHR_MSG_ABORT);
	assert_int_equal(a.job, 7);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.aux, EOPNOTSUPP);
	assert_int_equal(tx.ndst, 3);
	shr_agg_free(agg);
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
		cmocka_unit_test(test_refused_join_no_zombie),
		cmocka_unit_test(test_abort_join_fits_list),
		cmocka_unit_test(test_reabort_dst_per_call),
		cmocka_unit_test(test_leave_after_lost_abort),
		cmocka_unit_test(test_incarnation_forgets_tree),
		cmocka_unit_test(test_tree_unsup_names_rank),
		cmocka_unit_test(test_left_rank_late_join),
	};

	return cmocka_run_group_tests_name("agg_jobs", tests, NULL, NULL);
}
