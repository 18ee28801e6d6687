/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * shouter-worker: one rank of an allreduce benchmark against a shouter aggregator.
 *
 * Every rank fills its input from a hash of (rank, iteration, index), so every rank can
 * compute the exact expected result of each allreduce and check its output bit for bit; the
 * inputs have no period in the index that could alias with window x chunk (a previous
 * round's result in a slot is wrong in nearly every element). float32 inputs are odd integers of
 * magnitude up to (2^24 - 1) / world, a quarter of them negative: any partial sum of the
 * world's inputs, in any order, is an integer below 2^24 in magnitude, so it is exact in
 * float32 and the result is bit-identical whatever the summation order; yet more than 90%
 * of the sums need more than 17 significant bits at any world up to 4096 (they grow to
 * about 2^22), so a sum rounded through bfloat16 or float16, or truncated, is wrong and
 * caught. Odd inputs are never 0: a SUM that lacks one rank's input is wrong in every
 * element. MIN and MAX are exact too. int32 inputs span the whole range and sums wrap
 * (two's complement), as in the box.
 *
 * Each iteration: fill, barrier (so that no rank's fill or check delays another's timed
 * allreduce), timed allreduce, CRC32C of the output (continued from the previous
 * iteration's: the RESULT line's crc= covers every iteration, so ranks that print the same
 * crc= received the same bytes throughout), check. The first --warmup iterations are not
 * timed.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <shr_comm.h>
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
	uint32_t agg_ip;
	uint16_t agg_port;
	uint32_t local_ip;
	uint16_t local_port;
	uint32_t job;
	long rank;
	long world;
	int dtype;
	int op;
	uint64_t size;
	uint64_t iters;
	uint64_t warmup;
	uint32_t window;
	uint32_t chunk;
	uint32_t timeout_ms;
	bool verify;
	bool have_agg, have_job;
	const char *ready_file;	/* created once joined */
	const char *go_file;	/* waited for before the first allreduce */
	const char *end_file;	/* created after the last allreduce; then wait to be killed */
	uint32_t seed;		/* other inputs for another run */
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

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [EAL args --] [options]\n"
"One rank of an allreduce benchmark against a shouter aggregator (shouter-agg).\n"
"EAL args are used only by --driver dpdk.\n"
"\n"
"  --driver udp|dpdk      kernel UDP socket (default) or DPDK ethdev (port 0)\n"
"  --agg A.B.C.D          aggregator address (required)\n"
"  --agg-port P           aggregator base UDP port (default %u)\n"
"  --local A.B.C.D        local address (required for dpdk; optional for udp)\n"
"  --local-port P         local UDP port (udp default: any; dpdk default: %u)\n"
"  --job ID               job id (required)\n"
"  --rank R               this rank, 0..world-1 (required)\n"
"  --world N              ranks in the job, 1..%u (required)\n"
"  --dtype int32|float32  element type (default float32)\n"
"  --op sum|min|max       reduction (default sum)\n"
"  --size BYTES           tensor size, K/M/G suffixes (x1024) allowed (default 4M)\n"
"  --iters N              timed allreduces (default 10)\n"
"  --warmup N             untimed allreduces first (default 2)\n"
"  --window W             slots in flight (default 128)\n"
"  --chunk auto|ELEMS     elements per packet; auto (default): the largest that reaches\n"
"                         the box whole from every rank (the job's ranks agree on it)\n"
"  --timeout-ms N         fail if no progress for N ms (default 10000)\n"
"  --no-verify            do not check the results\n"
"  --ready-file PATH      create PATH once joined (the job is active at the box)\n"
"  --go-file PATH         after joining, wait (up to %u s) for PATH to exist before the\n"
"                         first allreduce: a test holds several jobs active at once\n"
"  --end-file PATH        after the last allreduce, create PATH and wait until it is\n"
"                         removed (up to %u s) before leaving: a test kills the rank\n"
"                         at a known point, or acts while it is still a member\n"
"  --seed N               inputs hashed from (seed, rank, iteration, index) (default 0):\n"
"                         a restarted run with another seed has other data\n"
"  --secret-file PATH     the job's secret (a file not readable by others; default:\n"
"                         $SHOUTER_SECRET_FILE), for a box that admits only members\n"
"                         that prove it: the secret itself is never sent\n"
"  -h, --help             this text\n"
"\n"
"Last line of stdout:\n"
"RESULT rank=R world=N dtype=T size=BYTES iters=N ok=0|1 goodput_gbps=X lat_us_p50=Y\n"
"       lat_us_p99=Z retx=K crc=HEX [error=WHAT]\n"
"crc is the CRC32C of the outputs of every iteration (warmup included), in order: ranks\n"
"of one job that print the same crc received the same bytes in every allreduce.\n"
"A wrong result is reported on stderr per iteration: 'B of N elements wrong, first at\n"
"index K (got X, want Y)'.\n"
"Exit codes: 0 ok, 1 wrong result, 2 bad usage/config, 3 timeout or aborted job,\n"
"4 I/O error.\n",
		SHR_PROTO_UDP_PORT, SHR_PROTO_UDP_PORT, SHR_PROTO_MAX_WORLD, GO_WAIT_MS / 1000,
		GO_WAIT_MS / 1000);
}

static void
print_result(const struct opts *o, const struct result *r)
{
	printf("RESULT rank=%ld world=%ld dtype=%s size=%" PRIu64 " iters=%" PRIu64
	       " ok=%d goodput_gbps=%.3f lat_us_p50=%.1f lat_us_p99=%.1f retx=%" PRIu64
	       " crc=%08x",
	       o->rank, o->world, o->dtype > 0 ? shr_proto_dtype_str((unsigned int)o->dtype) : "?",
	       o->size, o->iters, r->ok ? 1 : 0, r->goodput_gbps, r->lat_p50_us, r->lat_p99_us,
	       r->retx, r->crc);
	if (!r->ok)
		printf(" error=%s", r->error != NULL ? r->error : "unknown");
	printf("\n");
	fflush(stdout);
}

/* ---- option parsing ---- */

static int
bad_opt(const char *opt, const char *val, const char *allowed)
{
	fprintf(stderr, PROG ": %s: invalid value '%s' (allowed: %s)\n", opt, val, allowed);
	return -EINVAL;
}

static int
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, const char *allowed,
	  uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || *s == '\0' || *s == '-')
		return bad_opt(opt, s ? s : "", allowed);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return bad_opt(opt, s, allowed);
	*out = v;
	return 0;
}

static int
parse_ip(const char *opt, const char *s, uint32_t *out)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return bad_opt(opt, s, "an IPv4 address A.B.C.D");
	*out = ntohl(a.s_addr);
	return 0;
}

static int
parse_size(const char *opt, const char *s, uint64_t *out)
{
	const char *allowed = "a positive byte count, optionally with K, M or G (x1024)";
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	if (s == NULL || *s == '\0' || *s == '-')
		return bad_opt(opt, s ? s : "", allowed);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return bad_opt(opt, s, allowed);
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		mult = 1ull << 10;
		break;
	case 'm': case 'M':
		mult = 1ull << 20;
		break;
	case 'g': case 'G':
		mult = 1ull << 30;
		break;
	default:
		return bad_opt(opt, s, allowed);
	}
	if (*end != '\0') {
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (*end != '\0')
			return bad_opt(opt, s, allowed);
	}
	if (v == 0 || v > (UINT64_MAX >> 30) || v * mult > (1ull << 40))
		return bad_opt(opt, s, "1 byte .. 1T");
	*out = v * mult;
	return 0;
}

enum {
	OPT_DRIVER = 256, OPT_AGG, OPT_AGG_PORT, OPT_LOCAL, OPT_LOCAL_PORT, OPT_JOB, OPT_RANK,
	OPT_WORLD, OPT_DTYPE, OPT_OP, OPT_SIZE, OPT_ITERS, OPT_WARMUP, OPT_WINDOW, OPT_CHUNK,
	OPT_TIMEOUT, OPT_NO_VERIFY, OPT_READY_FILE, OPT_GO_FILE, OPT_END_FILE, OPT_SEED,
	OPT_SECRET_FILE,
};

static const struct option long_opts[] = {
	{ "driver", required_argument, NULL, OPT_DRIVER },
	{ "agg", required_argument, NULL, OPT_AGG },
	{ "agg-port", required_argument, NULL, OPT_AGG_PORT },
	{ "local", required_argument, NULL, OPT_LOCAL },
	{ "local-port", required_argument, NULL, OPT_LOCAL_PORT },
	{ "job", required_argument, NULL, OPT_JOB },
	{ "rank", required_argument, NULL, OPT_RANK },
	{ "world", required_argument, NULL, OPT_WORLD },
	{ "dtype", required_argument, NULL, OPT_DTYPE },
	{ "op", required_argument, NULL, OPT_OP },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "iters", required_argument, NULL, OPT_ITERS },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "chunk", required_argument, NULL, OPT_CHUNK },
	{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ "ready-file", required_argument, NULL, OPT_READY_FILE },
	{ "go-file", required_argument, NULL, OPT_GO_FILE },
	{ "end-file", required_argument, NULL, OPT_END_FILE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "secret-file", required_argument, NULL, OPT_SECRET_FILE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Returns 0, 1 (help printed), or -EINVAL (message printed). */
static int
parse_opts(int argc, char **argv, struct opts *o)
{
	uint64_t v;
	int c, rc = 0;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		const char *name = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

		switch (c) {
		case 'h':
			return 1;
		case OPT_DRIVER:
			if (strcmp(optarg, "udp") != 0 && strcmp(optarg, "dpdk") != 0)
				return bad_opt("--driver", optarg, "udp, dpdk");
			o->driver = optarg;
			break;
		case OPT_AGG:
			rc = parse_ip("--agg", optarg, &o->agg_ip);
			o->have_agg = true;
			break;
		case OPT_AGG_PORT:
			rc = parse_u64("--agg-port", optarg, 1, 65535, "1..65535", &v);
			o->agg_port = (uint16_t)v;
			break;
		case OPT_LOCAL:
			rc = parse_ip("--local", optarg, &o->local_ip);
			break;
		case OPT_LOCAL_PORT:
			rc = parse_u64("--local-port", optarg, 1, 65535, "1..65535", &v);
			o->local_port = (uint16_t)v;
			break;
		case OPT_JOB:
			rc = parse_u64("--job", optarg, 0, UINT32_MAX, "0..4294967295", &v);
			o->job = (uint32_t)v;
			o->have_job = true;
			break;
		case OPT_RANK:
			rc = parse_u64("--rank", optarg, 0, SHR_PROTO_MAX_WORLD - 1,
				       "0..world-1", &v);
			o->rank = (long)v;
			break;
		case OPT_WORLD:
			rc = parse_u64("--world", optarg, 1, SHR_PROTO_MAX_WORLD, "1..4096", &v);
			o->world = (long)v;
			break;
		case OPT_DTYPE:
			o->dtype = shr_proto_dtype_parse(optarg);
			if (o->dtype != SHR_DTYPE_INT32 && o->dtype != SHR_DTYPE_FLOAT32)
				return bad_opt("--dtype", optarg, "int32, float32");
			break;
		case OPT_OP:
			o->op = shr_proto_op_parse(optarg);
			if (o->op != SHR_OP_SUM && o->op != SHR_OP_MIN && o->op != SHR_OP_MAX)
				return bad_opt("--op", optarg, "sum, min, max");
			break;
		case OPT_SIZE:
			rc = parse_size("--size", optarg, &o->size);
			break;
		case OPT_ITERS:
			rc = parse_u64("--iters", optarg, 1, 100000000, "1..100000000",
				       &o->iters);
			break;
		case OPT_WARMUP:
			rc = parse_u64("--warmup", optarg, 0, 100000000, "0..100000000",
				       &o->warmup);
			break;
		case OPT_WINDOW:
			rc = parse_u64("--window", optarg, 1, SHR_PROTO_SLOT_MASK, "1..2^31-1",
				       &v);
			o->window = (uint32_t)v;
			break;
		case OPT_CHUNK:
			if (strcmp(optarg, "auto") == 0) {
				o->chunk = 0;
				break;
			}
			rc = parse_u64("--chunk", optarg, 1, 2048,
				       "auto or 1..2048 elements (8192 bytes of int32/float32)",
				       &v);
			o->chunk = (uint32_t)v;
			break;
		case OPT_TIMEOUT:
			rc = parse_u64("--timeout-ms", optarg, 1, 86400000, "1..86400000", &v);
			o->timeout_ms = (uint32_t)v;
			break;
		case OPT_NO_VERIFY:
			o->verify = false;
			break;
		case OPT_READY_FILE:
			o->ready_file = optarg;
			break;
		case OPT_GO_FILE:
			o->go_file = optarg;
			break;
		case OPT_END_FILE:
			o->end_file = optarg;
			break;
		case OPT_SEED:
			rc = parse_u64("--seed", optarg, 0, UINT32_MAX, "0..4294967295", &v);
			o->seed = (uint32_t)v;
			break;
		case OPT_SECRET_FILE:
			o->secret_file = optarg;
			break;
		case ':':
			fprintf(stderr, PROG ": %s: missing value\n", name);
			return -EINVAL;
		default:
			fprintf(stderr, PROG ": %s: unknown option (see --help)\n", name);
			return -EINVAL;
		}
		if (rc < 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s' (EAL arguments go before "
			"'--', options after it)\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->have_agg) {
		fprintf(stderr, PROG ": --agg: required (the aggregator's IPv4 address)\n");
		return -EINVAL;
	}
	if (!o->have_job || o->rank < 0 || o->world < 0) {
		fprintf(stderr, PROG ": --job, --rank and --world are required\n");
		return -EINVAL;
	}
	if (o->rank >= o->world) {
		fprintf(stderr, PROG ": --rank: %ld is not below --world %ld (allowed: 0..%ld)\n",
			o->rank, o->world, o->world - 1);
		return -EINVAL;
	}
	if (strcmp(o->driver, "dpdk") == 0 && o->local_ip == 0) {
		fprintf(stderr, PROG ": --local: required with --driver dpdk (the address the "
			"DPDK port answers ARP for)\n");
		return -EINVAL;
	}
	if (o->size % shr_proto_dtype_size((unsigned int)o->dtype) != 0) {
		fprintf(stderr, PROG ": --size: %" PRIu64 " is not a multiple of the %s element"
			" size (%u bytes)\n", o->size, shr_proto_dtype_str((unsigned int)o->dtype),
			shr_proto_dtype_size((unsigned int)o->dtype));
		return -EINVAL;
	}
	return 0;
}

/* ---- inputs and expected results ---- */

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

static void
fill(const struct opts *o, void *buf, uint64_t n, uint64_t it)
{
	uint64_t i;

	it = data_it(o, it);
	if (o->dtype == SHR_DTYPE_FLOAT32) {
		uint32_t nodd = f32_odd_count((uint32_t)o->world);
		float *f = buf;

		for (i = 0; i < n; i++)
			f[i] = val_f32(nodd, (uint32_t)o->rank, it, i);
	} else {
		int32_t *v = buf;

		for (i = 0; i < n; i++)
			v[i] = val_i32((uint32_t)o->rank, it, i);
	}
}

/* The first wrong element of a check: its index, what came back and what was expected. */
struct bad_elem {
	uint64_t index;
	char got[24];
	char want[24];
};

static void
bad_elem_set(const struct opts *o, struct bad_elem *b, uint64_t i, const void *got,
	     const void *want)
{
	b->index = i;
	if (o->dtype == SHR_DTYPE_FLOAT32) {
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
 * Check out against the reduction over all ranks, bit for bit; returns the number of wrong
 * elements and describes the first in *first.
 */
static uint64_t
check(const struct opts *o, const void *buf, uint64_t n, uint64_t it, struct bad_elem *first)
{
	uint32_t world = (uint32_t)o->world, nodd = f32_odd_count(world), r;
	uint64_t i, bad = 0;

	it = data_it(o, it);
	for (i = 0; i < n; i++) {
		uint32_t want;

		if (o->dtype == SHR_DTYPE_FLOAT32) {
			float e = val_f32(nodd, 0, it, i);

			for (r = 1; r < world; r++) {
				float x = val_f32(nodd, r, it, i);

				if (o->op == SHR_OP_SUM)
					e += x;
				else if (o->op == SHR_OP_MIN)
					e = x < e ? x : e;
				else
					e = x > e ? x : e;
			}
			memcpy(&want, &e, sizeof(want));
		} else {
			int32_t e = val_i32(0, it, i);

			for (r = 1; r < world; r++) {
				int32_t x = val_i32(r, it, i);

				if (o->op == SHR_OP_SUM)
					e = (int32_t)((uint32_t)e + (uint32_t)x);
				else if (o->op == SHR_OP_MIN)
					e = x < e ? x : e;
				else
					e = x > e ? x : e;
			}
			memcpy(&want, &e, sizeof(want));
		}
		/* both dtypes are 4 bytes: compare the bits */
		if (memcmp((const uint32_t *)buf + i, &want, sizeof(want)) != 0 && bad++ == 0)
			bad_elem_set(o, first, i, (const uint32_t *)buf + i, &want);
	}
	return bad;
}

/* ---- main ---- */

/* --ready-file / --go-file: say that this rank has joined, then wait for the go. */
static int
hold(const struct opts *o)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 5000000 };
	unsigned int waited_ms = 0;
	FILE *f;

	if (o->ready_file != NULL) {
		f = fopen(o->ready_file, "w");
		if (f == NULL || fclose(f) != 0) {
			fprintf(stderr, PROG ": --ready-file: cannot create %s\n", o->ready_file);
			return -EIO;
		}
	}
	if (o->go_file == NULL)
		return 0;
	while (access(o->go_file, F_OK) != 0) {
		if (waited_ms >= GO_WAIT_MS) {
			fprintf(stderr, PROG ": --go-file: %s did not appear within %u s\n",
				o->go_file, GO_WAIT_MS / 1000);
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
		waited_ms += 5;
	}
	return 0;
}

/*
 * --end-file: say that the allreduces are done, then wait, still a member (not polling), until
 * the file is removed (or the rank is killed).
 */
static void
hold_end(const struct opts *o)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 5000000 };
	unsigned int waited_ms;
	FILE *f;

	if (o->end_file == NULL)
		return;
	f = fopen(o->end_file, "w");
	if (f == NULL || fclose(f) != 0) {
		fprintf(stderr, PROG ": --end-file: cannot create %s\n", o->end_file);
		return;
	}
	for (waited_ms = 0; waited_ms < GO_WAIT_MS && access(o->end_file, F_OK) == 0;
	     waited_ms += 5)
		nanosleep(&ts, NULL);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values, in microseconds. */
static double
pct_us(const uint64_t *sorted, uint64_t n, unsigned int pct)
{
	uint64_t k = (n * pct + 99) / 100;

	if (n == 0)
		return 0;
	if (k == 0)
		k = 1;
	return (double)sorted[k - 1] / 1000.0;
}

/* Exit code and RESULT slug for an error of the comm API. */
static int
classify(int err, const char **slug)
{
	switch (-err) {
	case ETIMEDOUT:
		*slug = "timeout";
		return EXIT_TIMEOUT;
	case ECONNABORTED:
		*slug = "aborted";
		return EXIT_TIMEOUT;
	case EINVAL:
	case EADDRINUSE:
	case EADDRNOTAVAIL:
	case ENOSPC:
	case EBUSY:
		*slug = "config";
		return EXIT_USAGE;
	case ENOKEY:
	case EACCES:
	case EPERM:
		*slug = "denied";
		return EXIT_USAGE;
	case EMSGSIZE:
		*slug = "mtu";
		return EXIT_USAGE;
	case ENOMEM:
		*slug = "nomem";
		return EXIT_IO;
	default:
		*slug = "io";
		return EXIT_IO;
	}
}

int
main(int argc, char **argv)
{
	struct opts o = {
		.driver = "udp", .agg_port = SHR_PROTO_UDP_PORT, .rank = -1, .world = -1,
		.dtype = SHR_DTYPE_FLOAT32, .op = SHR_OP_SUM, .size = 4ull << 20, .iters = 10,
		.warmup = 2, .window = 128, .chunk = 0, .timeout_ms = 10000, .verify = true,
	};
	struct result res = { .ok = false };
	struct shr_comm_params cp = { 0 };
	struct shr_auth_secret secret;
	struct shr_comm_stats st;
	struct shr_comm_info info;
	struct shr_comm *comm = NULL;
	int eal_argc = 1, opt_argc = argc, i, rc, code = EXIT_OK;
	char **opt_argv = argv, errbuf[256], why[256] = "";
	uint64_t *lat = NULL, n, it, total_ns = 0, wrong_iters = 0;
	uint32_t crc = 0;	/* running CRC32C of every iteration's output */
	void *in = NULL, *out = NULL;

	/* EAL args before "--", options after; without "--" everything is an option. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			eal_argc = i;
			opt_argc = argc - i;
			opt_argv = argv + i;	/* opt_argv[0] is "--": stands in for argv[0] */
			break;
		}
	}
	rc = parse_opts(opt_argc, opt_argv, &o);
	if (rc == 1) {
		usage(stdout);
		return EXIT_OK;
	}
	if (rc < 0) {
		fprintf(stderr, "Try '" PROG " --help'.\n");
		res.error = "usage";
		print_result(&o, &res);
		return EXIT_USAGE;
	}

	n = o.size / shr_proto_dtype_size((unsigned int)o.dtype);
	in = malloc(o.size);
	out = malloc(o.size);
	lat = calloc(o.iters, sizeof(*lat));
	if (in == NULL || out == NULL || lat == NULL) {
		fprintf(stderr, PROG ": cannot allocate %" PRIu64 " bytes of tensors\n",
			2 * o.size);
		res.error = "nomem";
		code = EXIT_IO;
		goto done;
	}

	cp.driver = o.driver;
	cp.agg_ip = o.agg_ip;
	cp.agg_port = o.agg_port;
	cp.local_ip = o.local_ip;
	cp.local_port = o.local_port;
	cp.job = o.job;
	cp.rank = (uint16_t)o.rank;
	cp.world = (uint16_t)o.world;
	cp.dtype = (uint8_t)o.dtype;
	cp.window = o.window;
	cp.chunk_elems = o.chunk;
	cp.timeout_ms = o.timeout_ms;
	if (o.secret_file == NULL)
		o.secret_file = getenv("SHOUTER_SECRET_FILE");
	if (o.secret_file != NULL && *o.secret_file != '\0') {
		rc = shr_auth_secret_load(o.secret_file, &secret);
		if (rc < 0) {
			fprintf(stderr, PROG ": --secret-file %s: %s\n", o.secret_file,
				rc == -EINVAL ? "the secret must be 16..64 bytes (trailing newlines "
				"not counted)" : rc == -EACCES ? "readable by others (chmod 600 it)" :
				strerror(-rc));
			code = EXIT_USAGE;
			res.error = "config";
			goto done;
		}
		cp.secret = &secret;
	}
	cp.eal_argc = eal_argc;
	cp.eal_argv = argv;
	cp.why = why;
	cp.why_len = sizeof(why);
	comm = shr_comm_create(&cp);
	if (comm == NULL) {
		rc = -errno;
		code = classify(rc, &res.error);
		if (why[0] != '\0')
			fprintf(stderr, PROG ": rank %ld: cannot join job %u: %s\n", o.rank, o.job,
				why);
		else if (rc == -ETIMEDOUT)
			fprintf(stderr, PROG ": rank %ld: job %u: no JOIN_ACK from %s:%u in %u ms "
				"(aggregator down, or not all %ld ranks joined)\n", o.rank, o.job,
				inet_ntoa((struct in_addr){ htonl(o.agg_ip) }), o.agg_port,
				o.timeout_ms, o.world);
		else
			fprintf(stderr, PROG ": rank %ld: cannot join job %u: %s\n", o.rank,
				o.job, shr_comm_strerror(NULL, rc, errbuf, sizeof(errbuf)));
		goto done;
	}
	shr_comm_info_get(comm, &info);
	printf(PROG ": rank %ld/%ld joined job %u: driver %s, local port %u, window %u, "
	       "chunk %u, lanes %u\n", o.rank, o.world, o.job, info.driver, info.local_port,
	       info.window, info.chunk_elems, info.lanes);
	fflush(stdout);
	rc = hold(&o);
	if (rc < 0) {
		code = classify(rc, &res.error);
		goto done;
	}

	for (it = 0; it < o.warmup + o.iters; it++) {
		struct bad_elem first_bad;
		uint64_t t0, t1, bad;

		fill(&o, in, n, it);
		rc = shr_comm_barrier(comm);
		if (rc < 0)
			break;
		t0 = now_ns();
		rc = shr_comm_allreduce(comm, in, out, n, (uint8_t)o.op);
		t1 = now_ns();
		if (rc < 0)
			break;
		if (it >= o.warmup) {
			lat[it - o.warmup] = t1 - t0;
			total_ns += t1 - t0;
		}
		crc = shr_crc32c(crc, out, o.size);
		if (!o.verify)
			continue;
		bad = check(&o, out, n, it, &first_bad);
		if (bad > 0) {
			wrong_iters++;
			fprintf(stderr, PROG ": rank %ld: iteration %" PRIu64 ": %" PRIu64
				" of %" PRIu64 " elements wrong, first at index %" PRIu64
				" (got %s, want %s)\n", o.rank, it, bad, n, first_bad.index,
				first_bad.got, first_bad.want);
		}
	}
	if (rc >= 0)
		hold_end(&o);
	shr_comm_stats_get(comm, &st);
	res.retx = st.ep.tx_retx;
	fprintf(stderr, PROG ": rank %ld: tx_data=%" PRIu64 " retx=%" PRIu64 " (fast=%" PRIu64
		" timer=%" PRIu64 " spurious=%" PRIu64 ") timeouts=%" PRIu64 " results=%" PRIu64
		" dup=%" PRIu64 " bad=%" PRIu64 " srtt_us=%.1f min_rtt_us=%.1f rto_us=%.1f"
		" drv_tx=%" PRIu64 " drv_rx=%" PRIu64 " tx_drops=%" PRIu64 " deferred=%" PRIu64
		" foreign=%" PRIu64 "\n", o.rank, st.ep.tx_data, st.ep.tx_retx, st.ep.tx_fast, st.ep.tx_rto,
		st.ep.spurious, st.ep.timeouts, st.ep.rx_results, st.ep.rx_dup, st.ep.rx_bad,
		st.ep.srtt_ns / 1000.0, st.ep.min_rtt_ns / 1000.0, st.ep.rto_ns / 1000.0,
		st.drv.tx_pkts, st.drv.rx_pkts, st.drv.tx_drops, st.tx_deferred, st.rx_foreign);
	if (rc < 0) {
		code = classify(rc, &res.error);
		fprintf(stderr, PROG ": rank %ld: iteration %" PRIu64 ": %s\n", o.rank, it,
			shr_comm_strerror(comm, rc, errbuf, sizeof(errbuf)));
		goto done;
	}
	res.crc = crc;
	qsort(lat, o.iters, sizeof(*lat), cmp_u64);
	res.lat_p50_us = pct_us(lat, o.iters, 50);
	res.lat_p99_us = pct_us(lat, o.iters, 99);
	if (total_ns > 0)
		res.goodput_gbps = (double)o.size * 8.0 * (double)o.iters / (double)total_ns;
	if (wrong_iters > 0) {
		res.error = "wrong_result";
		code = EXIT_WRONG;
		goto done;
	}
	res.ok = true;
done:
	if (comm != NULL) {
		int lrc = shr_comm_destroy(comm);

		/* The results stand; the box frees the job at its idle bound instead. */
		if (lrc < 0)
			fprintf(stderr, PROG ": rank %ld: job %u: leaving: %s\n", o.rank, o.job,
				lrc == -ETIMEDOUT ? "no LEAVE_ACK from the aggregator (it frees "
				"the job when the job has been idle for its idle time)" :
				strerror(-lrc));
	}
	print_result(&o, &res);
	free(lat);
	free(out);
	free(in);
	return code;
}
