/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_WORKER_H
#define SHR_WORKER_H

/*
 * shouter-worker's parts (private to app/worker): options (worker_opts.c), inputs, the
 * collectives and their checks (worker_coll.c), the run (main.c).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <shr_comm.h>
#include <shr_shard.h>
#include <shr_proto.h>

#define PROG "shouter-worker"
#define GO_WAIT_MS 120000	/* --go-file, --end-file: give up after this long */

enum exit_code {
	EXIT_OK = 0,
	EXIT_WRONG = 1,
	EXIT_USAGE = 2,
	EXIT_TIMEOUT = 3,
	EXIT_IO = 4,
};

struct opts {
	const char *driver;
	uint32_t agg_ip;	/* the first box */
	uint16_t agg_port;	/* --agg-port: every box's but those given with :PORT */
	uint16_t nboxes;	/* --agg A,B,...: the job sharded over these boxes */
	uint32_t agg_ips[SHR_SHARD_MAX_BOXES];
	uint16_t agg_ports[SHR_SHARD_MAX_BOXES];	/* 0: agg_port */
	uint8_t agg_mac[6];	/* --agg-mac (dpdk; all zero: ARP) */
	uint16_t vlan;		/* --vlan (dpdk; 0: untagged) */
	bool no_gso;		/* --no-gso (udp) */
	bool no_group;		/* --no-group */
	uint32_t local_ip;
	uint16_t local_port;
	uint32_t job;
	long rank;
	long world;
	long data_rank;		/* --tree-rank: whose inputs this rank fills (default rank) */
	long data_world;	/* --tree-world: how many ranks' inputs a sum holds (world) */
	bool tree;		/* --tree-rank given: the collective's ranks are the tree's */
	int dtype;
	int op;
	uint64_t size;
	uint64_t iters;
	uint64_t warmup;
	uint32_t window;
	uint32_t slots;		/* 0: shr_endpoint_slots(window) */
	uint32_t chunk;
	uint32_t timeout_ms;
	uint32_t cc_target_us;	/* 0: the default; SHR_COMM_CC_OFF: none */
	bool verify;
	bool have_agg, have_job;
	const char *ready_file;	/* created once joined */
	const char *go_file;	/* waited for before the first allreduce */
	const char *mid_file;	/* waited for before the second allreduce */
	const char *end_file;	/* created after the last allreduce; then wait to be killed */
	uint32_t seed;		/* other inputs for another run */
	bool repro;		/* --repro: a reproducible job (exact float sums at the box) */
	bool mac;		/* --mac: the job's messages carry the per-job MAC */
	bool random_inputs;	/* --inputs random: float32 of random exponents */
	int kind;		/* --coll: enum shr_proto_kind */
	uint16_t root;		/* --root */
	bool have_step, have_tensor;
	uint32_t step;		/* --step: the collective's step in the first iteration */
	uint32_t tensor;	/* --tensor: the collective's tensor id in every iteration */
	uint32_t granted_chunk;	/* the job's chunk (qint32: the block of an exponent) */
	double q_max_err;	/* qint32: the largest |out - exact sum| seen */
	double q_max_ratio;	/* ... and the largest error over its bound */
	const char *secret_file; /* the job's secret (--secret-file or SHOUTER_SECRET_FILE) */
};

/* What the RESULT line reports. */
struct result {
	bool ok;
	const char *error;	/* slug, when !ok */
	double goodput_gbps;
	double lat_p50_us;
	double lat_p99_us;
	uint64_t retx;
	uint32_t crc;
};

/* ---- inputs: every rank's, hashed, so that any rank can compute any expected result ---- */

/* A 32-bit finaliser (murmur3's): every input bit changes about half the output bits. */
static inline uint32_t
mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return x;
}

/* Odd magnitudes 1, 3, ..., up to (2^24 - 1) / world: how many there are. */
static inline uint32_t
f32_odd_count(uint32_t world)
{
	return ((0xffffffu / world) + 1) / 2;
}

/*
 * An odd integer in [-(2^24 - 1) / world, (2^24 - 1) / world], hashed from (rank, it, i);
 * negative one time in four, so that sums grow with the world (to about 2^22) while MIN and
 * MAX still compare signs.
 */
static inline float
val_f32(uint32_t nodd, uint32_t rank, uint64_t it, uint64_t i)
{
	uint32_t h = mix32(mix32(mix32((uint32_t)i ^ 0x5bd1e995u) + (uint32_t)(i >> 32) +
				 rank * 0x9e3779b9u) + (uint32_t)it * 0x27d4eb2fu);
	int32_t mag = (int32_t)(2 * ((h & 0x3fffffffu) % nodd) + 1);

	return (float)((h >> 30) == 3 ? -mag : mag);
}

static inline int32_t
val_i32(uint32_t rank, uint64_t it, uint64_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u + rank * 0x9e3779b9u + (uint32_t)it * 0x85ebca6bu;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (int32_t)x;
}

/* The iteration the input hashes see: another seed, other inputs in every iteration. */
static inline uint64_t
data_it(const struct opts *o, uint64_t it)
{
	return it + mix32(o->seed);	/* mix32(0) is 0 */
}

/* The first wrong element of a check: its index, what came back and what was expected. */
struct bad_elem {
	uint64_t index;
	char got[24];
	char want[24];
};

/* worker_opts.c */
void worker_usage(FILE *f);
int worker_parse_opts(int argc, char **argv, struct opts *o);

/* worker_coll.c */
int coll_sizes(const struct opts *o, uint64_t n, uint64_t *in_elems, uint64_t *out_elems);
void coll_fill(const struct opts *o, void *in, void *out, uint64_t n, uint64_t it);
int coll_run(struct shr_shard *comm, const struct opts *o, const void *in, void *out,
	     uint64_t n);
uint64_t coll_check(struct opts *o, const void *out, uint64_t n, uint64_t it,
		    uint64_t *checked, struct bad_elem *first);

#endif /* SHR_WORKER_H */
