/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Quantised floats (QINT32 jobs) through the real C API: N communicators, one thread each,
 * on fake devices that hand every datagram to one real aggregator (lib/agg, under a mutex)
 * and queue the box's messages to their destinations. Each rank allreduces, reduces and
 * reduce-scatters float32 of mixed magnitudes (2^-30..2^30, random signs; a chunk of all
 * zeros; a chunk where one rank's values are 2^20 times the others'; values next to a
 * power of two), at N = 2, 3 and 8. Checked in the main thread: every output element within
 * the bound of shr_comm.h (world 2^-(s+1) + half an ulp of the output, s from the largest
 * exponent of the chunk over every rank, found here with frexp) of the exact sum (long
 * double), every rank's allreduce output the same bits, MAX within its bound, a NaN at one
 * rank failing the call with -ERANGE at every rank and the next call working, and an
 * iallreduce converted by shr_comm_wait() (also when 63 collectives were submitted after it
 * before its wait: the oldest call remembered); and, with 63 collectives pending at rank 0 (the
 * others hold theirs back), its quantised call refused with -EBUSY before its exponents'
 * round goes out. The largest error seen, as a fraction of the bound, is printed.
 */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <shr_agg.h>
#include <shr_comm.h>
#include <shr_drv.h>
#include <shr_proto.h>

#define Q_AGG_IP 0xc6120001u	/* 198.18.0.1 */
#define Q_RANK_IP 0xc6120100u	/* rank r: 198.18.1.r */
#define Q_PORT 40000u
#define Q_JOB 9u
#define Q_CHUNK 64u
#define Q_MAXN 8u
#define Q_COUNT 1000u		/* elements per block: 16 chunks, the last one short */
#define Q_MAXMSG (SHR_PROTO_HDR_LEN + Q_CHUNK * 4)
#define Q_RXQ 8192u
#define Q_BUSY_OPS 63u		/* collectives pending before rank 0's quantised call */

struct q_msg {
	uint32_t len;
	uint8_t data[Q_MAXMSG];
};

struct q_net;

struct q_dev {
	struct shr_drv drv;	/* first */
	struct q_net *net;
	uint16_t rank;
	struct q_msg *rxq[Q_RXQ];
	unsigned int rx_head, rx_n;
	struct q_msg *batch[SHR_DRV_BURST_MAX];
	unsigned int batch_n;
};

struct q_net {
	pthread_mutex_t mu;
	pthread_barrier_t busy_done;	/* rank 0 has made its -EBUSY call */
	struct shr_agg *agg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx;
	uint8_t txbuf[Q_MAXMSG];
	uint16_t world;
	struct q_dev dev[Q_MAXN];
};

/* What each rank puts in and gets out. */
struct q_rank {
	struct q_net *net;
	uint16_t rank;
	float in[Q_MAXN * Q_COUNT];	/* reduce_scatter: all of it; the others: block 0 */
	float nan_in[Q_COUNT];
	float ar[Q_COUNT];		/* allreduce SUM */
	float red[Q_COUNT];		/* reduce SUM to root world - 1 */
	float rs[Q_COUNT];		/* reduce_scatter SUM: block rank */
	float mx[Q_COUNT];		/* allreduce MAX */
	float iar[Q_COUNT];		/* iallreduce SUM, in place */
	float old[Q_COUNT];		/* iallreduce SUM, 63 collectives after it before its
					 * wait */
	int rc_ar, rc_red, rc_rs, rc_mx, rc_nan, rc_after, rc_iar;
	int rc_old, rc_old_bcast;
	int rc_no_out, rc_no_root, rc_overlap;	/* refused before anything is sent */
	int rc_rs_inplace;			/* reduce_scatter in == out: refused too */
	int rc_rs_overlap;			/* out = in's block 1: refused too */
	int rc_busy;				/* rank 0, 63 collectives pending: -EBUSY */
	int rc_bcast;				/* those 63 broadcasts, waited for */
	int32_t bc[Q_BUSY_OPS];			/* their values (one each, from rank 0) */
	int create_errno;
	char why[256];
};

static uint64_t
q_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Queue a copy of the box's message to the rank at address a (caller holds the lock). */
static void
q_deliver(struct q_net *n, uint64_t a, const void *buf, size_t len)
{
	uint32_t ip = SHR_AGG_ADDR_IP(a);
	struct q_dev *d;
	struct q_msg *m;

	if (ip < Q_RANK_IP || ip >= Q_RANK_IP + n->world)
		return;
	d = &n->dev[ip - Q_RANK_IP];
	if (d->rx_n == Q_RXQ || len > Q_MAXMSG)
		return;	/* lost: the endpoint recovers */
	m = malloc(sizeof(*m));
	if (m == NULL)
		return;
	m->len = (uint32_t)len;
	memcpy(m->data, buf, len);
	d->rxq[(d->rx_head + d->rx_n++) % Q_RXQ] = m;
}

static void
q_box_out(struct q_net *n)
{
	uint32_t i;

	for (i = 0; n->tx.len > 0 && i < n->tx.ndst; i++)
		if (i != n->tx.skip)
			q_deliver(n, n->tx.dst[i], n->tx.buf, n->tx.len);
	for (i = 0; n->tx.ack_len > 0 && i < n->tx.ack_ndst; i++)
		if (i != n->tx.ack_skip)
			q_deliver(n, n->tx.ack_dst[i], n->tx.ack, n->tx.ack_len);
}

static int
q_tx_burst(struct shr_drv *drv, const struct shr_drv_pkt *pkts, unsigned int k)
{
	struct q_dev *d = (struct q_dev *)drv;
	struct q_net *n = d->net;
	uint8_t buf[Q_MAXMSG];
	unsigned int i;

	pthread_mutex_lock(&n->mu);
	for (i = 0; i < k; i++) {
		size_t len = (size_t)pkts[i].hdr_len + pkts[i].payload_len;

		if (len > sizeof(buf))
			continue;
		memcpy(buf, pkts[i].hdr, pkts[i].hdr_len);
		if (pkts[i].payload_len > 0)
			memcpy(buf + pkts[i].hdr_len, pkts[i].payload, pkts[i].payload_len);
		(void)shr_agg_input(n->agg, SHR_AGG_ADDR(Q_RANK_IP + d->rank, Q_PORT), buf, len,
				    q_now(), &n->tx, &n->st);
		q_box_out(n);
		drv->stats.tx_pkts++;
	}
	pthread_mutex_unlock(&n->mu);
	return (int)k;
}

static int
q_rx_burst(struct shr_drv *drv, struct shr_drv_rx *out, unsigned int k)
{
	struct q_dev *d = (struct q_dev *)drv;
	unsigned int i;

	for (i = 0; i < d->batch_n; i++)
		free(d->batch[i]);
	d->batch_n = 0;
	pthread_mutex_lock(&d->net->mu);
	while (d->batch_n < k && d->rx_n > 0) {
		struct q_msg *m = d->rxq[d->rx_head];

		d->rx_head = (d->rx_head + 1) % Q_RXQ;
		d->rx_n--;
		d->batch[d->batch_n] = m;
		out[d->batch_n].src_ip = Q_AGG_IP;
		out[d->batch_n].src_port = Q_PORT;
		out[d->batch_n].rx_ns = 0;
		out[d->batch_n].len = m->len;
		out[d->batch_n].data = m->data;
		d->batch_n++;
	}
	pthread_mutex_unlock(&d->net->mu);
	return (int)d->batch_n;
}

/* Nothing queued: let the box do its timed work (its aborts), and the other threads run. */
static int
q_wait(struct shr_drv *drv, uint64_t timeout_us)
{
	struct q_dev *d = (struct q_dev *)drv;
	struct q_net *n = d->net;
	struct timespec ts = { 0, 20000 };
	int ready;

	(void)timeout_us;
	pthread_mutex_lock(&n->mu);
	ready = d->rx_n > 0;
	if (!ready) {
		while (shr_agg_tick(n->agg, q_now(), &n->tx, &n->st) > 0 || n->tx.len > 0) {
			q_box_out(n);
			n->tx.len = 0;
		}
	}
	pthread_mutex_unlock(&n->mu);
	if (!ready)
		nanosleep(&ts, NULL);
	return ready;
}

static void
q_close(struct shr_drv *drv)
{
	struct q_dev *d = (struct q_dev *)drv;
	unsigned int i;

	for (i = 0; i < d->batch_n; i++)
		free(d->batch[i]);
	d->batch_n = 0;
}

static const struct shr_drv_ops q_ops = {
	.name = "qfake",
	.tx_burst = q_tx_burst,
	.rx_burst = q_rx_burst,
	.wait = q_wait,
	.close = q_close,
};

static struct q_net *
q_net_new(uint16_t world)
{
	struct shr_agg_params ap = {
		.nslots = 64, .max_elems = Q_CHUNK, .max_world = Q_MAXN, .max_jobs = 4,
		.max_window = 16, .lanes = 1,
	};
	struct q_net *n = calloc(1, sizeof(*n));
	uint16_t r;

	assert_non_null(n);
	pthread_mutex_init(&n->mu, NULL);
	assert_int_equal(pthread_barrier_init(&n->busy_done, NULL, world), 0);
	n->world = world;
	n->agg = shr_agg_create(&ap);
	assert_non_null(n->agg);
	n->tx.buf = n->txbuf;
	n->tx.cap = sizeof(n->txbuf);
	for (r = 0; r < world; r++) {
		n->dev[r].drv.ops = &q_ops;
		n->dev[r].drv.local_ip = Q_RANK_IP + r;
		n->dev[r].drv.local_port = Q_PORT;
		n->dev[r].drv.max_payload = Q_MAXMSG;
		n->dev[r].net = n;
		n->dev[r].rank = r;
	}
	return n;
}

static void
q_net_free(struct q_net *n)
{
	uint16_t r;

	for (r = 0; r < n->world; r++)
		while (n->dev[r].rx_n > 0) {
			free(n->dev[r].rxq[n->dev[r].rx_head]);
			n->dev[r].rx_head = (n->dev[r].rx_head + 1) % Q_RXQ;
			n->dev[r].rx_n--;
		}
	shr_agg_free(n->agg);
	pthread_barrier_destroy(&n->busy_done);
	pthread_mutex_destroy(&n->mu);
	free(n);
}

static void *
q_rank_main(void *arg)
{
	struct q_rank *qr = arg;
	uint16_t world = qr->net->world;
	struct shr_comm_params p = {
		.agg_ip = Q_AGG_IP, .agg_port = Q_PORT, .job = Q_JOB, .rank = qr->rank,
		.world = world, .dtype = SHR_DTYPE_QINT32, .window = 4,
		.chunk_elems = Q_CHUNK, .timeout_ms = 10000, .dev = &qr->net->dev[qr->rank].drv,
		.why = qr->why, .why_len = sizeof(qr->why),
	};
	struct shr_comm *c = shr_comm_create(&p);
	int req, bq[Q_BUSY_OPS];
	uint32_t k;

	if (c == NULL) {
		qr->create_errno = errno;
		pthread_barrier_wait(&qr->net->busy_done);
		return NULL;
	}
	/*
	 * Rank 0 starts 63 broadcasts, which stay pending (the other ranks start theirs only
	 * once it is done): its quantised allreduce needs room for two rounds and gets -EBUSY
	 * before either goes out. One sent alone would pair the others' next call with it.
	 */
	for (k = 0; k < Q_BUSY_OPS; k++)
		qr->bc[k] = qr->rank == 0 ? (int32_t)(k * 7919u + 13u) : -1;
	if (qr->rank == 0) {
		for (k = 0; k < Q_BUSY_OPS; k++)
			bq[k] = shr_comm_ibroadcast(c, &qr->bc[k], 1, 0);
		qr->rc_busy = shr_comm_allreduce(c, qr->in, qr->ar, Q_COUNT, SHR_OP_SUM);
		pthread_barrier_wait(&qr->net->busy_done);
	} else {
		pthread_barrier_wait(&qr->net->busy_done);
		for (k = 0; k < Q_BUSY_OPS; k++)
			bq[k] = shr_comm_ibroadcast(c, &qr->bc[k], 1, 0);
	}
	for (k = 0; k < Q_BUSY_OPS; k++)
		if ((qr->rc_bcast = bq[k] < 0 ? bq[k] : shr_comm_wait(c, bq[k])) != 0)
			break;
	/* refused calls send nothing (an exponents' round sent first would leave the other
	 * ranks' next call paired with it: the exact checks below would fail) */
	qr->rc_no_out = shr_comm_allreduce(c, qr->in, NULL, Q_COUNT, SHR_OP_SUM);
	qr->rc_no_root = shr_comm_reduce(c, qr->in, qr->red, Q_COUNT, SHR_OP_SUM, world);
	qr->rc_overlap = shr_comm_allreduce(c, qr->in, qr->in + 1, Q_COUNT, SHR_OP_SUM);
	qr->rc_rs_inplace = shr_comm_reduce_scatter(c, qr->in, qr->in, Q_COUNT, SHR_OP_SUM);
	/* an out inside a later block of in (not only the first): the float path refuses it */
	qr->rc_rs_overlap = shr_comm_reduce_scatter(c, qr->in, qr->in + Q_COUNT, Q_COUNT,
						    SHR_OP_SUM);
	qr->rc_ar = shr_comm_allreduce(c, qr->in, qr->ar, Q_COUNT, SHR_OP_SUM);
	if (qr->rc_ar < 0)
		(void)shr_comm_strerror(c, qr->rc_ar, qr->why, sizeof(qr->why));
	/* the other ranks' out is not used: one that overlaps in is no reason to refuse */
	qr->rc_red = shr_comm_reduce(c, qr->in, qr->rank == world - 1 ? qr->red : qr->in + 1,
				     Q_COUNT, SHR_OP_SUM, (uint16_t)(world - 1));
	qr->rc_rs = shr_comm_reduce_scatter(c, qr->in, qr->rs, Q_COUNT, SHR_OP_SUM);
	qr->rc_mx = shr_comm_allreduce(c, qr->in, qr->mx, Q_COUNT, SHR_OP_MAX);
	qr->rc_nan = shr_comm_allreduce(c, qr->nan_in, qr->nan_in, Q_COUNT, SHR_OP_SUM);
	qr->rc_after = shr_comm_barrier(c);
	memcpy(qr->iar, qr->in, sizeof(qr->iar));
	req = shr_comm_iallreduce(c, qr->iar, qr->iar, Q_COUNT, SHR_OP_SUM);
	qr->rc_iar = req < 0 ? req : shr_comm_wait(c, req);
	/* an iallreduce followed by 63 collectives (every one pending) before it is waited for:
	 * the oldest call remembered, its floats still written */
	memset(qr->old, 0, sizeof(qr->old));
	req = shr_comm_iallreduce(c, qr->in, qr->old, Q_COUNT, SHR_OP_SUM);
	for (k = 0; k < Q_BUSY_OPS; k++)
		bq[k] = shr_comm_ibroadcast(c, &qr->bc[k], 1, 0);
	qr->rc_old = req < 0 ? req : shr_comm_wait(c, req);
	for (k = 0; k < Q_BUSY_OPS; k++)
		if ((qr->rc_old_bcast = bq[k] < 0 ? bq[k] : shr_comm_wait(c, bq[k])) != 0)
			break;
	(void)shr_comm_destroy(c);
	return NULL;
}

static uint64_t
q_rand(uint64_t *s)
{
	uint64_t x = (*s += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Rank r's inputs: random sign, exponent and mantissa; chunk-specific patterns. */
static void
q_fill(struct q_rank *qr, uint16_t world, uint64_t seed)
{
	uint64_t s = seed * 1000003u + qr->rank, i;

	for (i = 0; i < (uint64_t)world * Q_COUNT; i++) {
		uint64_t x = q_rand(&s), chunk = i % Q_COUNT / Q_CHUNK;
		float m = 1.0f + (float)(x & 0xffffff) / 16777216.0f;
		int e = (int)((x >> 24) % 61) - 30;
		float v = ldexpf(m, e) * ((x >> 40) & 1 ? -1.0f : 1.0f);

		if (chunk == 2)
			v = 0.0f;	/* a chunk of zeros at every rank */
		else if (chunk == 3)	/* one rank's values far above the others' */
			v = ldexpf(m, qr->rank == world - 1 ? 20 : 0);
		else if (chunk == 4)	/* the largest float32 below a power of two */
			v = nextafterf(ldexpf(1.0f, 10), 0.0f) * ((x >> 41) & 1 ? -1.0f : 1.0f);
		qr->in[i] = v;
	}
	memcpy(qr->nan_in, qr->in, sizeof(qr->nan_in));
	if (qr->rank == 1)
		qr->nan_in[Q_COUNT - 3] = NAN;
}

/* The agreed exponent of the chunk of element i of block b: the largest over every rank. */
static int
q_exp(struct q_rank *qr, uint16_t world, uint64_t b, uint64_t i)
{
	uint64_t start = b * Q_COUNT + i / Q_CHUNK * Q_CHUNK, end = start + Q_CHUNK, k;
	int e = INT32_MIN + 1;
	uint16_t r;

	if (end > (b + 1) * Q_COUNT)
		end = (b + 1) * Q_COUNT;
	for (r = 0; r < world; r++)
		for (k = start; k < end; k++) {
			int x;

			if (qr[r].in[k] == 0.0f)
				continue;
			(void)frexpf(qr[r].in[k], &x);
			if (x > e)
				e = x;
		}
	return e;
}

/*
 * out against the exact op of block b over every rank (sum: world 2^-(s+1); max: 2^-(s+1);
 * plus half an ulp of out). Returns the largest error over its bound.
 */
static double
q_check(struct q_rank *qr, uint16_t world, const float *out, uint64_t b, bool max,
	const char *what)
{
	double worst = 0.0;
	uint64_t i;

	for (i = 0; i < Q_COUNT; i++) {
		int e = q_exp(qr, world, b, i), bits = 0;
		long double want = max ? -INFINITY : 0.0L, err;
		double bound;
		uint16_t r;

		for (r = 0; r < world; r++) {
			float v = qr[r].in[b * Q_COUNT + i];

			if (max)
				want = v > want ? v : want;
			else
				want += v;
		}
		while (world >> bits)
			bits++;
		bound = e == INT32_MIN + 1 ? 0.0 :
			ldexp(max ? 1.0 : (double)world, e + bits - 32);
		bound += ldexp(fabs((double)out[i]), -24);
		if (e == INT32_MIN + 1)
			assert_true(out[i] == 0.0f);
		err = fabsl((long double)out[i] - want);
		if (err > bound)
			fail_msg("%s N=%u block %llu element %llu: %.9g, exact %.12Lg, error %.3Lg "
				 "> bound %.3g (chunk exponent %d)", what, world,
				 (unsigned long long)b, (unsigned long long)i, (double)out[i],
				 want, err, bound, e);
		if (bound > 0.0 && (double)err / bound > worst)
			worst = (double)err / bound;
	}
	return worst;
}

static void
q_run(uint16_t world, uint64_t seed)
{
	struct q_net *n = q_net_new(world);
	struct q_rank *qr = calloc(world, sizeof(*qr));
	pthread_t th[Q_MAXN];
	double worst = 0.0, w;
	uint16_t r;

	assert_non_null(qr);
	for (r = 0; r < world; r++) {
		qr[r].net = n;
		qr[r].rank = r;
		q_fill(&qr[r], world, seed);
	}
	for (r = 0; r < world; r++)
		assert_int_equal(pthread_create(&th[r], NULL, q_rank_main, &qr[r]), 0);
	for (r = 0; r < world; r++)
		assert_int_equal(pthread_join(th[r], NULL), 0);
	for (r = 0; r < world; r++) {
		if (qr[r].create_errno != 0)
			fail_msg("rank %u: shr_comm_create: %s (%s)", r,
				 strerror(qr[r].create_errno), qr[r].why);
		if (qr[r].rc_ar != 0)
			fail_msg("rank %u: allreduce: %s", r, qr[r].why);
		assert_int_equal(qr[r].rc_red, 0);
		assert_int_equal(qr[r].rc_rs, 0);
		assert_int_equal(qr[r].rc_mx, 0);
		assert_int_equal(qr[r].rc_nan, -ERANGE);	/* one rank's NaN: every rank */
		assert_int_equal(qr[r].rc_after, 0);
		assert_int_equal(qr[r].rc_no_out, -EINVAL);
		assert_int_equal(qr[r].rc_no_root, -EINVAL);
		assert_int_equal(qr[r].rc_overlap, -EINVAL);
		assert_int_equal(qr[r].rc_rs_inplace, -EINVAL);
		assert_int_equal(qr[r].rc_rs_overlap, -EINVAL);
		if (r == 0)
			assert_int_equal(qr[r].rc_busy, -EBUSY);
		assert_int_equal(qr[r].rc_bcast, 0);
		assert_memory_equal(qr[r].bc, qr[0].bc, sizeof(qr[0].bc));
		assert_int_equal(qr[r].rc_iar, 0);
		/* Every rank converts the same int32 result the same way. */
		assert_memory_equal(qr[r].ar, qr[0].ar, sizeof(qr[0].ar));
		assert_memory_equal(qr[r].mx, qr[0].mx, sizeof(qr[0].mx));
		assert_memory_equal(qr[r].iar, qr[0].ar, sizeof(qr[0].ar));
		assert_int_equal(qr[r].rc_old, 0);
		assert_int_equal(qr[r].rc_old_bcast, 0);
		assert_memory_equal(qr[r].old, qr[0].ar, sizeof(qr[0].ar));
		/* The NaN call wrote nothing. */
		assert_memory_equal(qr[r].nan_in, qr[r].in, (Q_COUNT - 3) * sizeof(float));
		w = q_check(qr, world, qr[r].rs, r, false, "reduce_scatter");
		worst = w > worst ? w : worst;
	}
	w = q_check(qr, world, qr[0].ar, 0, false, "allreduce");
	worst = w > worst ? w : worst;
	w = q_check(qr, world, qr[world - 1].red, 0, false, "reduce");
	worst = w > worst ? w : worst;
	w = q_check(qr, world, qr[0].mx, 0, true, "allreduce max");
	worst = w > worst ? w : worst;
	/* The zero chunk and the far-apart chunk came back as the bound says. */
	assert_true(qr[0].ar[2 * Q_CHUNK] == 0.0f);
	printf("N=%u: largest error %.3f of the bound\n", world, worst);
	free(qr);
	q_net_free(n);
}

static void
test_quant_n2(void **state)
{
	(void)state;
	q_run(2, 1);
}

static void
test_quant_n3(void **state)
{
	(void)state;
	q_run(3, 2);
}

static void
test_quant_n8(void **state)
{
	(void)state;
	q_run(8, 3);
}

/* The helpers: exponents, shifts that cannot overflow, the bound. */
static void
test_quant_helpers(void **state)
{
	float v[4] = { 0.0f, 3.0f, -0.25f, 0.0f }, z[2] = { 0.0f, -0.0f };
	float bad[2] = { 1.0f, INFINITY };
	uint16_t world;

	(void)state;
	assert_int_equal(shr_comm_qexp(v, 4), 2);	/* 3 = 0.75 x 2^2 */
	assert_int_equal(shr_comm_qexp(z, 2), SHR_COMM_QEXP_ZERO);
	assert_int_equal(shr_comm_qexp(bad, 2), SHR_COMM_QEXP_NONFINITE);
	bad[1] = NAN;
	assert_int_equal(shr_comm_qexp(bad, 2), SHR_COMM_QEXP_NONFINITE);
	assert_int_equal(shr_comm_qshift(3, SHR_COMM_QEXP_ZERO), 0);
	assert_int_equal(shr_comm_qshift(1, 0), 30);
	assert_int_equal(shr_comm_qshift(8, 2), 25);	/* bits(8) = 4 */
	/* world values just under 2^e, scaled and rounded: their sum stays below 2^31. */
	for (world = 1; world <= 1024; world++) {
		int s = shr_comm_qshift(world, 0);
		double q = nearbyint(ldexp(nextafter(1.0, 0.0), s));

		assert_true(q * world < 2147483648.0);
	}
	assert_true(shr_comm_qbound(8, 2) == ldexp(8.0, -26));
	/* an exponent from the wire far outside float32's: clamped, no integer overflow */
	assert_int_equal(shr_comm_qshift(1, INT32_MIN + 2), SHR_COMM_QSHIFT_MAX);
	assert_int_equal(shr_comm_qshift(1, INT32_MAX - 1), -SHR_COMM_QSHIFT_MAX);
	assert_true(isfinite(shr_comm_qbound(1, -(INT32_MAX - 30))));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quant_helpers),
		cmocka_unit_test(test_quant_n2),
		cmocka_unit_test(test_quant_n3),
		cmocka_unit_test(test_quant_n8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
