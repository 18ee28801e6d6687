/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * lib/shard: a rank sharded over k boxes, each a real aggregator (lib/agg) behind the fake
 * driver of comm_test.h, which plays the job's other ranks at that box (shard_test.h's rig).
 * Checked: the map (contiguous runs of whole chunks, in order, covering every element,
 * balanced to a chunk); every collective exact at rank 0 with each box's share computed by its
 * own box, with up to 30% of rank 0's DATA and of the boxes' messages to it lost, 30% of those
 * duplicated and all reordered; every box carries its share and the call's identity. A rank of
 * a tree of boxes: every collective in the tree's ranks (its blocks and roots). With the udp
 * driver, boxes on loopback sockets served by a thread: a local port P binds box j's socket to
 * P + j. (A box that refuses, goes silent or aborts, bad parameters: test_shard_fail.c.)
 */

#include "shard_test.h"

#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

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
		return shr_shard_reduce(g->s, in, rt == g->me ? out : NULL, c, SHR_OP_SUM, rt);
	case SHR_KIND_REDUCE_SCATTER:
		return shr_shard_reduce_scatter(g->s, in, out, c, SHR_OP_SUM);
	case SHR_KIND_BROADCAST:
		memcpy(out, in, c * 4);
		return shr_shard_broadcast(g->s, out, c, rt);
	case SHR_KIND_ALLGATHER:
		return shr_shard_allgather(g->s, in, out, c);
	case SHR_KIND_GATHER:
		return shr_shard_gather(g->s, in, rt == g->me ? out : NULL, c, rt);
	case SHR_KIND_SCATTER:
		return shr_shard_scatter(g->s, rt == g->me ? in : NULL, out, c, rt);
	default:
		return shr_shard_alltoall(g->s, in, out, c);
	}
}

/* Elements rank me (of w) gets. */
static uint64_t
out_elems(uint8_t kind, uint16_t w, uint16_t me, uint16_t rt, uint64_t c)
{
	switch (kind) {
	case SHR_KIND_REDUCE:
		return rt == me ? c : 0;
	case SHR_KIND_GATHER:
		return rt == me ? w * c : 0;
	case SHR_KIND_ALLGATHER:
	case SHR_KIND_ALLTOALL:
		return w * c;
	default:
		return c;
	}
}

/*
 * What a tree's rank gets (tree rank g->me of g->n; its box's other members stand for the
 * others): as want_all, in the tree's blocks and root. Box j's round space for its share
 * (len elements of each block) starts at g->base[j]: block b of the share at b x len there
 * (alltoall: block (source b, destination me) at (b x n + me) x len).
 */
static void
want_tree(struct rig *g, uint8_t kind, uint16_t rt, uint64_t c, const int32_t *in,
	  int32_t *want, uint32_t chunk)
{
	const uint16_t me = g->me, n = g->n;
	uint16_t j, b, r;

	for (j = 0; j < g->k; j++) {
		uint64_t off, len, base = g->base[j], e;

		shr_shard_split(c, chunk, g->k, j, &off, &len);
		if (len == 0)
			continue;
		for (e = 0; e < len; e++) {
			uint64_t i = off + e, at;
			uint32_t sum;

			switch (kind) {
			case SHR_KIND_ALLREDUCE:
			case SHR_KIND_REDUCE:
			case SHR_KIND_REDUCE_SCATTER:	/* its own block's sum */
				b = kind == SHR_KIND_REDUCE_SCATTER ? me : 0;
				at = base + b * len + e;
				sum = (uint32_t)in[b * c + i];
				for (r = 1; r < g->world; r++)
					sum += (uint32_t)peer_val(r, in[b * c + i], at);
				want[i] = (int32_t)sum;
				break;
			case SHR_KIND_BROADCAST:
				want[i] = rt == me ? in[i] : relay_val(rt, base + e);
				break;
			case SHR_KIND_SCATTER:
				want[i] = rt == me ? in[me * c + i] :
					  relay_val(rt, base + me * len + e);
				break;
			case SHR_KIND_ALLGATHER:
			case SHR_KIND_GATHER:
				for (b = 0; b < n; b++)
					want[b * c + i] = b == me ? in[i] :
							  relay_val(b, base + b * len + e);
				break;
			default:	/* alltoall */
				for (b = 0; b < n; b++)
					want[b * c + i] = b == me ? in[me * c + i] :
						relay_val(b, base + (b * n + me) * len + e);
				break;
			}
		}
		g->base[j] += coll_space(kind == SHR_KIND_ALLREDUCE ? SHR_KIND_REDUCE : kind, n,
					 len);
	}
}

/* Every kind, at each of roots (of the collectives' world g->n), exact at this rank. */
static void
check_kinds(struct rig *g, const uint16_t *roots, size_t nroots)
{
	static const uint8_t kinds[] = {
		SHR_KIND_ALLREDUCE, SHR_KIND_REDUCE, SHR_KIND_REDUCE_SCATTER, SHR_KIND_BROADCAST,
		SHR_KIND_ALLGATHER, SHR_KIND_GATHER, SHR_KIND_SCATTER, SHR_KIND_ALLTOALL,
	};
	static const uint64_t counts[] = { 1000, 40, 130 };	/* 16, 1 and 3 chunks */
	const uint16_t w = g->n;
	size_t a, b, q;
	uint16_t j;

	for (b = 0; b < sizeof(counts) / sizeof(counts[0]); b++) {
		uint64_t c = counts[b];
		int32_t *in = malloc(w * c * 4), *out = malloc(w * c * 4);
		int32_t *want = malloc(w * c * 4);

		assert_true(in != NULL && out != NULL && want != NULL);
		for (a = 0; a < sizeof(kinds) / sizeof(kinds[0]); a++) {
			for (q = 0; q < nroots; q++) {
				uint16_t rt = roots[q];
				uint64_t n = out_elems(kinds[a], w, g->me, rt, c), e;

				fill(in, w * c, (unsigned int)(a * 10 + rt));
				memset(out, 0x5a, w * c * 4);
				if (g->n != g->world || g->me != 0)
					want_tree(g, kinds[a], rt, c, in, want, F_CHUNK);
				else
					want_all(g, kinds[a], rt, c, in, want, F_CHUNK);
				assert_int_equal(call(g, kinds[a], rt, in, out, c), 0);
				for (e = 0; e < n; e++)
					if (out[e] != want[e])
						fail_msg("k %u rank %u kind %u root %u count %llu "
							 "element %llu: %d, want %d", g->k, g->me,
							 kinds[a], rt, (unsigned long long)c,
							 (unsigned long long)e, out[e], want[e]);
				for (; e < w * c; e++)	/* nothing written past this rank's */
					assert_int_equal(out[e], 0x5a5a5a5a);
			}
		}
		free(in);
		free(out);
		free(want);
	}
	for (j = 0; j < g->k; j++)
		assert_true(g->f[j]->data_tx > 0);	/* every box summed its share */
	assert_int_equal(shr_shard_barrier(g->s), 0);
}

static void
run_collectives(uint16_t k, unsigned int loss)
{
	static const uint16_t roots[] = { 0, 2 };
	struct rig g;

	assert_int_equal(rig_open(&g, k, 3, loss, 10000), 0);
	check_kinds(&g, roots, 2);
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

/*
 * A rank of a tree of boxes (tree rank 2 of 5; its box's other members, boxes below, stand
 * for tree ranks 0-1 and 3-4): every collective sharded over 2 boxes is exact in the tree's
 * ranks, as one communicator's: 5 blocks (not the box's 3 members'), and it is the root of
 * a gather, scatter or broadcast whose root is tree rank 2 (not of one whose root is 0, its
 * rank at the box), with roots at either other member too, clean and lossy.
 */
static void
test_tree_rank(void **state)
{
	static const uint16_t roots[] = { 0, 2, 4 };
	struct rig g;

	(void)state;
	assert_int_equal(rig_open_tree(&g, 2, 3, 2, 5, 0, 10000), 0);
	check_kinds(&g, roots, 3);
	rig_close(&g);
	assert_int_equal(rig_open_tree(&g, 3, 3, 2, 5, 30, 10000), 0);
	check_kinds(&g, roots, 3);
	rig_close(&g);
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

/* ---- the udp driver: boxes on loopback sockets ---- */

#define U_LO 0x7f000001u	/* 127.0.0.1 */

/* Two boxes on UDP sockets of 127.0.0.1, each a real aggregator, served by a thread. */
struct ubox {
	int fd[2];
	uint16_t port[2];	/* their ports */
	struct shr_agg *agg[2];
	int stop[2];		/* a pipe: a byte written to stop[1] ends the thread */
	uint16_t join_port[2];	/* the source port of the last JOIN each box took */
	pthread_t th;
};

static void
ubox_send(int fd, const void *buf, size_t len, uint64_t a)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(SHR_AGG_ADDR_IP(a)),
		.sin_port = htons(SHR_AGG_ADDR_PORT(a)),
	};

	(void)sendto(fd, buf, len, 0, (struct sockaddr *)&sin, sizeof(sin));
}

/* Each datagram to box j into its aggregator; what it answers back out of its socket. */
static void *
ubox_run(void *arg)
{
	static uint8_t buf[2048], txbuf[2048];
	struct ubox *u = arg;
	struct shr_agg_stats st;
	struct shr_agg_tx tx = { .buf = txbuf, .cap = sizeof(txbuf) };
	uint32_t d;
	int j;

	memset(&st, 0, sizeof(st));
	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = u->fd[0], .events = POLLIN },
			{ .fd = u->fd[1], .events = POLLIN },
			{ .fd = u->stop[0], .events = POLLIN },
		};

		if (poll(pfd, 3, -1) < 0)
			continue;	/* EINTR */
		if (pfd[2].revents != 0)
			return NULL;
		for (j = 0; j < 2; j++) {
			struct sockaddr_in sin;
			socklen_t sl = sizeof(sin);
			struct shr_proto_msg m;
			ssize_t n;

			if (!(pfd[j].revents & POLLIN))
				continue;
			n = recvfrom(u->fd[j], buf, sizeof(buf), 0, (struct sockaddr *)&sin, &sl);
			if (n <= 0)
				continue;
			if (shr_proto_validate(buf, (size_t)n, &m) == SHR_PROTO_OK &&
			    m.type == SHR_MSG_JOIN)
				u->join_port[j] = ntohs(sin.sin_port);
			(void)shr_agg_input(u->agg[j], SHR_AGG_ADDR(ntohl(sin.sin_addr.s_addr),
								  ntohs(sin.sin_port)),
					    buf, (size_t)n, f_now(), &tx, &st);
			for (d = 0; tx.len > 0 && d < tx.ndst; d++)
				if (d != tx.skip)
					ubox_send(u->fd[j], tx.buf, tx.len, tx.dst[d]);
			for (d = 0; tx.ack_len > 0 && d < tx.ack_ndst; d++)
				if (d != tx.ack_skip)
					ubox_send(u->fd[j], tx.ack, tx.ack_len, tx.ack_dst[d]);
		}
	}
}

/* A UDP socket bound to 127.0.0.1:port (0: the kernel's choice); its port in *got. */
static int
lo_socket(uint16_t port, uint16_t *got)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET, .sin_addr.s_addr = htonl(U_LO), .sin_port = htons(port),
	};
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) < 0) {
		close(fd);
		return -1;
	}
	*got = ntohs(sin.sin_port);
	return fd;
}

static void
ubox_start(struct ubox *u)
{
	struct shr_agg_params ap = {
		.nslots = 16, .max_elems = F_CHUNK, .max_world = 2, .max_jobs = 2,
		.max_window = 16, .lanes = 1,
	};
	int j;

	memset(u, 0, sizeof(*u));
	for (j = 0; j < 2; j++) {
		u->fd[j] = lo_socket(0, &u->port[j]);
		assert_true(u->fd[j] >= 0);
		u->agg[j] = shr_agg_create(&ap);
		assert_non_null(u->agg[j]);
	}
	assert_int_equal(pipe(u->stop), 0);
	assert_int_equal(pthread_create(&u->th, NULL, ubox_run, u), 0);
}

static void
ubox_stop(struct ubox *u)
{
	int j;

	assert_int_equal(write(u->stop[1], "", 1), 1);
	assert_int_equal(pthread_join(u->th, NULL), 0);
	for (j = 0; j < 2; j++) {
		close(u->fd[j]);
		shr_agg_free(u->agg[j]);
		close(u->stop[j]);
	}
}

/* A local port P of 127.0.0.1 free with P + 1 (bound, then released). */
static uint16_t
free_port_pair(void)
{
	unsigned int tries;

	for (tries = 0; tries < 100; tries++) {
		uint16_t p, q;
		int a = lo_socket(0, &p), b = p < 65535 ? lo_socket((uint16_t)(p + 1), &q) : -1;

		assert_true(a >= 0);
		close(a);
		if (b >= 0) {
			close(b);
			return p;
		}
	}
	fail_msg("no two consecutive free UDP ports on 127.0.0.1");
	return 0;
}

/*
 * A sharded rank of the udp driver with a local port P (--local-port) binds one socket a
 * box, box j's to P + j: it starts (every box admits it), runs a collective over both boxes,
 * and leaves them; each box saw its JOIN come from its own port.
 */
static void
test_udp_local_ports(void **state)
{
	uint32_t ip[2] = { U_LO, U_LO };
	uint16_t port[2];
	char why[256] = "";
	struct shr_shard_params p = {
		.comm = {
			.job = F_JOB, .rank = 0, .world = 1, .dtype = SHR_DTYPE_INT32,
			.window = F_WINDOW, .chunk_elems = F_CHUNK, .timeout_ms = 10000,
			.local_ip = U_LO, .why = why, .why_len = sizeof(why),
		},
		.nboxes = 2, .agg_ip = ip, .agg_port = port,
	};
	int32_t in[1000], out[1000];
	struct shr_shard *s;
	struct ubox u;
	int j;

	(void)state;
	ubox_start(&u);
	port[0] = u.port[0];
	port[1] = u.port[1];
	p.comm.local_port = free_port_pair();
	s = shr_shard_create(&p);
	if (s == NULL)
		fail_msg("create: %s (%s)", strerror(errno), why);
	fill(in, 1000, 5);
	assert_int_equal(shr_shard_allreduce(s, in, out, 1000, SHR_OP_SUM), 0);
	assert_memory_equal(out, in, sizeof(in));	/* a world of 1: its own input */
	assert_int_equal(shr_shard_destroy(s), 0);
	ubox_stop(&u);
	for (j = 0; j < 2; j++)
		assert_int_equal(u.join_port[j], p.comm.local_port + j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_collectives_k2),
		cmocka_unit_test(test_collectives_k3_lossy),
		cmocka_unit_test(test_tree_rank),
		cmocka_unit_test(test_identity_and_shares),
		cmocka_unit_test(test_ident_as_comm),
		cmocka_unit_test(test_udp_local_ports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
