/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * lib/shard: a rank sharded over k boxes, each a real aggregator (lib/agg) behind the fake
 * driver of comm_test.h, which plays the job's other ranks at that box. Checked: the map
 * (contiguous runs of whole chunks, in order, covering every element, balanced to a chunk);
 * every collective exact at rank 0 with each box's share computed by its own box, with up
 * to 30% of rank 0's DATA and of the boxes' messages to it lost, 30% of those duplicated and
 * all reordered; every box carries
 * its share and the call's identity; a box that refuses the join or goes silent mid-call
 * fails the sharded communicator with an error naming that box, and every box is left; a
 * box's abort while another is silent names both.
 */

#include "comm_test.h"

#include <shr_shard.h>

#define T_BOXES_MAX 3

struct rig {
	uint16_t k;
	uint16_t world;
	struct fake *f[T_BOXES_MAX];
	struct shr_shard *s;
	uint64_t base[T_BOXES_MAX];	/* each box's stream offset */
	char why[256];
};

static int
rig_open(struct rig *g, uint16_t k, uint16_t world, unsigned int loss, uint32_t timeout_ms)
{
	struct shr_drv *dev[T_BOXES_MAX];
	uint32_t ip[T_BOXES_MAX];
	struct shr_shard_params p = {
		.comm = {
			.job = F_JOB, .rank = 0, .world = world, .dtype = SHR_DTYPE_INT32,
			.window = F_WINDOW, .chunk_elems = F_CHUNK, .timeout_ms = timeout_ms,
			.agg_port = F_PORT, .why = g->why, .why_len = sizeof(g->why),
		},
		.nboxes = k, .agg_ip = ip, .dev = dev,
	};
	uint16_t j;

	memset(g, 0, sizeof(*g));
	p.comm.why = g->why;
	g->k = k;
	g->world = world;
	for (j = 0; j < k; j++) {
		g->f[j] = fake_new(world, 100u + j);
		g->f[j]->loss = loss;
		g->f[j]->dup = loss;
		g->f[j]->tx_loss = loss;
		g->f[j]->shuffle = loss != 0;
		dev[j] = &g->f[j]->drv;
		ip[j] = F_AGG_IP;
	}
	g->s = shr_shard_create(&p);
	return g->s == NULL ? -errno : 0;
}

static void
rig_close(struct rig *g)
{
	uint16_t j;

	if (g->s != NULL)
		assert_int_equal(shr_shard_destroy(g->s), 0);
	for (j = 0; j < g->k; j++) {
		assert_int_equal(g->f[j]->leaves, g->s != NULL ? 1 : g->f[j]->leaves);
		fake_free(g->f[j]);
	}
}

/* ---- the map ---- */

static void
test_split(void **state)
{
	static const uint64_t counts[] = { 0, 1, 63, 64, 65, 640, 1000, 4097, 100003 };
	static const uint32_t chunks[] = { 1, 7, 64, 2048 };
	uint16_t k, j;
	size_t a, b;

	(void)state;
	for (a = 0; a < sizeof(counts) / sizeof(counts[0]); a++)
		for (b = 0; b < sizeof(chunks) / sizeof(chunks[0]); b++)
			for (k = 1; k <= 16; k++) {
				uint64_t c = counts[a], ch = chunks[b], next = 0, nch;
				uint64_t lo = UINT64_MAX, hi = 0;

				nch = (c + ch - 1) / ch;
				for (j = 0; j < k; j++) {
					uint64_t off, len, m;

					shr_shard_split(c, (uint32_t)ch, k, j, &off, &len);
					assert_int_equal(off, next);	/* in order, no gap */
					if (off + len < c)
						assert_int_equal(len % ch, 0); /* whole chunks */
					m = (len + ch - 1) / ch;
					lo = m < lo ? m : lo;
					hi = m > hi ? m : hi;
					next = off + len;
				}
				assert_int_equal(next, c);		/* every element */
				assert_true(hi - lo <= 1);		/* balanced */
				assert_true(hi == (nch + k - 1) / k);
			}
}

/* ---- collectives ---- */

/*
 * What rank 0 gets of a collective (kind, root rt, count c per block) at every box: each
 * box's output for the share of each block it was given (packed), put back in its blocks.
 */
static void
want_all(struct rig *g, uint8_t kind, uint16_t rt, uint64_t c, const int32_t *in,
	 int32_t *want, uint32_t chunk)
{
	const uint8_t k2 = kind == SHR_KIND_ALLREDUCE ? SHR_KIND_REDUCE : kind;
	const bool per_rank_in = kind == SHR_KIND_REDUCE_SCATTER || kind == SHR_KIND_SCATTER ||
				 kind == SHR_KIND_ALLTOALL;
	const bool per_rank_out = kind == SHR_KIND_ALLGATHER || kind == SHR_KIND_GATHER ||
				  kind == SHR_KIND_ALLTOALL;
	uint16_t w = g->world, j, r;
	uint64_t e;

	for (j = 0; j < g->k; j++) {
		uint64_t off, len, n;
		int32_t *pin;

		shr_shard_split(c, chunk, g->k, j, &off, &len);
		if (len == 0)
			continue;
		pin = calloc(w * len, 4);
		assert_non_null(pin);
		/* the box's input at rank 0: its share of each block, packed */
		for (r = 0; r < (per_rank_in ? w : 1); r++)
			for (e = 0; e < len; e++)
				pin[r * len + e] = in[r * c + off + e];
		n = per_rank_out ? w * len : len;
		for (e = 0; e < n; e++) {
			int32_t v = coll_want(k2, w, rt, len, pin, e, g->base[j]);

			if (kind == SHR_KIND_BROADCAST && rt == 0)
				v = pin[e];	/* the root's buf is its input */
			if (per_rank_out)
				want[(e / len) * c + off + e % len] = v;
			else
				want[off + e] = v;
		}
		g->base[j] += coll_space(k2, w, len);
		free(pin);
	}
}

static int
call(struct rig *g, uint8_t kind, uint16_t rt, const int32_t *in, int32_t *out, uint64_t c)
{
	switch (kind) {
	case SHR_KIND_ALLREDUCE:
		return shr_shard_allreduce(g->s, in, out, c, SHR_OP_SUM);
	case SHR_KIND_REDUCE:
		return shr_shard_reduce(g->s, in, rt == 0 ? out : NULL, c, SHR_OP_SUM, rt);
	case SHR_KIND_REDUCE_SCATTER:
		return shr_shard_reduce_scatter(g->s, in, out, c, SHR_OP_SUM);
	case SHR_KIND_BROADCAST:
		memcpy(out, in, c * 4);
		return shr_shard_broadcast(g->s, out, c, rt);
	case SHR_KIND_ALLGATHER:
		return shr_shard_allgather(g->s, in, out, c);
	case SHR_KIND_GATHER:
		return shr_shard_gather(g->s, in, rt == 0 ? out : NULL, c, rt);
	case SHR_KIND_SCATTER:
		return shr_shard_scatter(g->s, rt == 0 ? in : NULL, out, c, rt);
	default:
		return shr_shard_alltoall(g->s, in, out, c);
	}
}

/* Elements rank 0 gets. */
static uint64_t
out_elems(uint8_t kind, uint16_t w, uint16_t rt, uint64_t c)
{
	switch (kind) {
	case SHR_KIND_REDUCE:
		return rt == 0 ? c : 0;
	case SHR_KIND_GATHER:
		return rt == 0 ? w * c : 0;
	case SHR_KIND_ALLGATHER:
	case SHR_KIND_ALLTOALL:
		return w * c;
	default:
		return c;
	}
}

static void
run_collectives(uint16_t k, unsigned int loss)
{
	static const uint8_t kinds[] = {
		SHR_KIND_ALLREDUCE, SHR_KIND_REDUCE, SHR_KIND_REDUCE_SCATTER, SHR_KIND_BROADCAST,
		SHR_KIND_ALLGATHER, SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL,
	};
	static const uint64_t counts[] = { 1000, 40, 130 };	/* 16, 1 and 3 chunks */
	const uint16_t w = 3;
	struct rig g;
	size_t a, b;
	uint16_t j;

	assert_int_equal(rig_open(&g, k, w, loss, 10000), 0);
	for (b = 0; b < sizeof(counts) / sizeof(counts[0]); b++) {
		uint64_t c = counts[b];
		int32_t *in = malloc(w * c * 4), *out = malloc(w * c * 4);
		int32_t *want = malloc(w * c * 4);

		assert_true(in != NULL && out != NULL && want != NULL);
		for (a = 0; a < sizeof(kinds) / sizeof(kinds[0]); a++) {
			uint16_t rt;

			for (rt = 0; rt < w; rt += 2) {
				uint64_t n = out_elems(kinds[a], w, rt, c), e;

				fill(in, w * c, (unsigned int)(a * 10 + rt));
				memset(out, 0x5a, w * c * 4);
				want_all(&g, kinds[a], rt, c, in, want, F_CHUNK);
				assert_int_equal(call(&g, kinds[a], rt, in, out, c), 0);
				for (e = 0; e < n; e++)
					if (out[e] != want[e])
						fail_msg("k %u kind %u root %u count %llu element "
							 "%llu: %d, want %d", k, kinds[a], rt,
							 (unsigned long long)c,
							 (unsigned long long)e, out[e], want[e]);
				for (; e < w * c; e++)	/* nothing written past rank 0's */
					assert_int_equal(out[e], 0x5a5a5a5a);
			}
		}
		free(in);
		free(out);
		free(want);
	}
	for (j = 0; j < k; j++)
		assert_true(g.f[j]->data_tx > 0);	/* every box summed its share */
	assert_int_equal(shr_shard_barrier(g.s), 0);
	rig_close(&g);
}

static void
test_collectives_k2(void **state)
{
	(void)state;
	run_collectives(2, 0);
}

static void
test_collectives_k3_lossy(void **state)
{
	(void)state;
	run_collectives(3, 30);
}

/* Every box's share of a call carries the call's identity; the boxes split the chunks. */
static void
test_identity_and_shares(void **state)
{
	int32_t in[1000], out[1000];
	struct rig g;
	uint16_t j;

	(void)state;
	assert_int_equal(rig_open(&g, 2, 2, 10, 10000), 0);
	assert_int_equal(shr_shard_ident_set(g.s, 41, 7), 0);
	fill(in, 1000, 1);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), 0);
	for (j = 0; j < 2; j++) {
		assert_int_equal(g.f[j]->last_step, 41);
		assert_int_equal(g.f[j]->last_tensor, 7);
		/* 16 chunks: 8 each, the first time (resends counted apart) */
		assert_int_equal(g.f[j]->data_tx - g.f[j]->resends, 8);
	}
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), 0);
	for (j = 0; j < 2; j++)
		assert_int_equal(g.f[j]->last_tensor, 8);
	assert_int_equal(shr_shard_ident_set(g.s, 40, 0), -EINVAL);	/* steps go on */
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, 99), -EINVAL); /* bad op */
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), 0);
	assert_int_equal(g.f[0]->last_tensor, 9);	/* a refused call is no call */
	assert_int_equal(shr_shard_gather(g.s, in, out, 10, 2), -EINVAL);	/* root */
	assert_int_equal(shr_shard_alltoall(g.s, in, in + 5, 10), -EINVAL);	/* overlap */
	/*
	 * One block split over the boxes (500 elements, chunks of 64: box 0 has 256): out
	 * box 0's share past in passes each box's own check (box 0's out is box 1's in), so
	 * the sharded call checks the whole call: refused,
	 * in place allowed; a count whose bytes overflow refused, not a call of nothing.
	 */
	assert_int_equal(shr_shard_allreduce(g.s, in, in + 256, 500, SHR_OP_SUM), -EINVAL);
	assert_int_equal(shr_shard_reduce(g.s, in + 256, in, 500, SHR_OP_SUM, 0), -EINVAL);
	assert_int_equal(shr_shard_allreduce(g.s, in, NULL, UINT64_MAX, SHR_OP_SUM), -EINVAL);
	assert_int_equal(shr_shard_broadcast(g.s, in, UINT64_MAX, 0), -EINVAL);
	assert_int_equal(g.f[0]->last_tensor, 9);	/* none of them sent anything */
	fill(in, 1000, 1);
	assert_int_equal(shr_shard_allreduce(g.s, in, in, 1000, SHR_OP_SUM), 0);  /* in place */
	rig_close(&g);
}

/*
 * Steps compare as numbers, as each box's communicator compares them: a first step of 2^31
 * or more is a step like another (it was refused), and a step below the current one is
 * refused here, not by every box at the call.
 */
static void
test_ident_as_comm(void **state)
{
	int32_t in[100], out[100];
	struct rig g;

	(void)state;
	assert_int_equal(rig_open(&g, 2, 2, 0, 10000), 0);
	assert_int_equal(shr_shard_ident_set(g.s, 0x90000000u, 1), 0);
	fill(in, 100, 1);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 100, SHR_OP_SUM), 0);
	assert_int_equal(g.f[0]->last_step, 0x90000000u);
	assert_int_equal(shr_shard_ident_set(g.s, 5, 0), -EINVAL);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 100, SHR_OP_SUM), 0);
	rig_close(&g);
}

/* The second box aborts the job while it fills: no communicator, the first box is left. */
static void
test_join_refused(void **state)
{
	struct shr_drv *dev[2];
	uint32_t ip[2] = { F_AGG_IP, F_AGG_IP };
	char why[256] = "";
	struct shr_shard_params p = {
		.comm = {
			.job = F_JOB, .world = 2, .dtype = SHR_DTYPE_INT32, .window = F_WINDOW,
			.chunk_elems = F_CHUNK, .timeout_ms = 2000, .agg_port = F_PORT,
			.why = why, .why_len = sizeof(why),
		},
		.nboxes = 2, .agg_ip = ip, .dev = dev,
	};
	struct fake *f0 = fake_new(2, 1), *f1 = fake_new(2, 2);

	(void)state;
	f1->join_abort = ETIMEDOUT;
	f1->join_abort_rank = 1;
	dev[0] = &f0->drv;
	dev[1] = &f1->drv;
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, ECONNABORTED);
	if (strncmp(why, "box 2 of 2 (198.18.0.1:40000): ", 31) != 0 ||
	    strstr(why, "rank 1") == NULL)
		fail_msg("why: '%s'", why);
	assert_int_equal(f0->leaves, 1);	/* the first box was left */
	fake_free(f0);	/* both devices closed (fake_free checks) */
	fake_free(f1);
}

/* Bad parameters: refused before any device is used, and the devices are closed. */
static void
test_bad_params(void **state)
{
	struct shr_drv *dev[1];
	uint32_t ip[2] = { F_AGG_IP, F_AGG_IP };
	struct shr_shard_params p = {
		.comm = { .job = F_JOB, .world = 2, .dtype = SHR_DTYPE_INT32, .agg_port = 1 },
		.nboxes = 2, .agg_ip = ip,
	};
	struct fake *f = fake_new(2, 1);

	(void)state;
	assert_null(shr_shard_create(&p));	/* the same box twice */
	assert_int_equal(errno, EINVAL);
	ip[1] = F_AGG_IP + 1;
	p.comm.driver = "dpdk";			/* one port for two boxes */
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, EINVAL);
	p.nboxes = SHR_SHARD_MAX_BOXES + 1;
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, EINVAL);
	p.nboxes = 0;
	dev[0] = &f->drv;
	p.dev = dev;
	assert_null(shr_shard_create(&p));
	assert_int_equal(errno, EINVAL);
	assert_null(shr_shard_create(NULL));
	assert_int_equal(errno, EINVAL);
	f->closed = true;	/* nboxes 0: no device was given */
	fake_free(f);
}

/*
 * The second box goes silent mid-call (its device takes nothing): the call fails with
 * ETIMEDOUT naming box 2, the next call fails at once (EPIPE), and both boxes are left.
 */
static void
test_box_silent(void **state)
{
	int32_t in[1000], out[1000];
	char buf[512];
	struct rig g;

	(void)state;
	assert_int_equal(rig_open(&g, 2, 2, 0, 300), 0);
	fill(in, 1000, 2);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), 0);
	g.f[1]->stalled = true;
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), -ETIMEDOUT);
	shr_shard_strerror(g.s, -ETIMEDOUT, buf, sizeof(buf));
	if (strncmp(buf, "box 2 of 2 (198.18.0.1:40000): ", 31) != 0 ||
	    strstr(buf, "no result from the aggregator") == NULL)
		fail_msg("strerror: '%s'", buf);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), -EPIPE);
	shr_shard_strerror(g.s, -EPIPE, buf, sizeof(buf));
	assert_non_null(strstr(buf, "box 2 of 2"));
	g.f[1]->stalled = false;
	assert_int_equal(shr_shard_destroy(g.s), 0);
	assert_int_equal(g.f[0]->leaves, 1);
	assert_true(g.f[1]->leaves >= 1);
	fake_free(g.f[0]);
	fake_free(g.f[1]);
}

/*
 * Box 1 aborts the job (ranks disagreeing) while box 2, silent, owes the call its share: the
 * error names box 1's abort and box 2's silence.
 */
static void
test_abort_names_silent_box(void **state)
{
	int32_t in[1000], out[1000];
	char buf[512];
	struct rig g;

	(void)state;
	assert_int_equal(rig_open(&g, 2, 2, 0, 10000), 0);
	fill(in, 1000, 3);
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), 0);
	g.f[0]->odd_rank = 1;	/* box 1's fake rank 1 calls with another step */
	g.f[0]->odd_step = 1;
	g.f[1]->stalled = true;
	assert_int_equal(shr_shard_allreduce(g.s, in, out, 1000, SHR_OP_SUM), -ECONNABORTED);
	shr_shard_strerror(g.s, -ECONNABORTED, buf, sizeof(buf));
	if (strncmp(buf, "box 1 of 2 (198.18.0.1:40000): ", 31) != 0 ||
	    strstr(buf, "; and box 2 of 2 (198.18.0.1:40000): no result for ") == NULL)
		fail_msg("strerror: '%s'", buf);
	g.f[1]->stalled = false;
	(void)shr_shard_destroy(g.s);
	fake_free(g.f[0]);
	fake_free(g.f[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_collectives_k2),
		cmocka_unit_test(test_collectives_k3_lossy),
		cmocka_unit_test(test_identity_and_shares),
		cmocka_unit_test(test_ident_as_comm),
		cmocka_unit_test(test_join_refused),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_box_silent),
		cmocka_unit_test(test_abort_names_silent_box),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
