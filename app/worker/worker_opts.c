/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* shouter-worker: options and --help. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "worker.h"

void
worker_usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [EAL args --] [options]\n"
"One rank of a collective benchmark (allreduce by default) against a shouter aggregator\n"
"(shouter-agg).\n"
"EAL args are used only by --driver dpdk.\n"
"\n"
"  --driver udp|dpdk      kernel UDP socket (default) or DPDK ethdev (port 0)\n"
"  --agg A.B.C.D[:P][,...] aggregator address (required); several, comma-separated: the\n"
"                         job sharded over these boxes (each sums a share of every call;\n"
"                         every rank lists them in the same order; udp driver)\n"
"  --agg-port P           aggregator base UDP port (default %u)\n"
"  --agg-mac MAC          dpdk: the aggregator's MAC (default: resolved by ARP); either\n"
"                         way pinned for the run: no ARP frame of anyone else moves it\n"
"  --vlan ID              dpdk: the port is on IEEE 802.1Q VLAN ID (1..4094): frames are\n"
"                         sent tagged with it, only frames tagged with it are taken\n"
"                         (others counted in vlan_other= on the stats line); default 0:\n"
"                         untagged. udp: use a VLAN subinterface (ip link ... type vlan)\n"
"  --no-gso               udp: send datagram by datagram (default: a burst's DATA to the\n"
"                         box go to the kernel as UDP GSO messages, drv_gso= on the stats\n"
"                         line: datagrams/messages; off by itself if the kernel refuses)\n"
"  --no-group             do not offer the box a result group: every result comes\n"
"                         to this rank alone (default: offered; a box with one sends each\n"
"                         result for all ranks once, there, when every rank offers it)\n"
"  --local A.B.C.D        local address (required for dpdk; optional for udp)\n"
"  --local-port P         local UDP port (udp default: any; dpdk default: %u)\n"
"  --job ID               job id (required)\n"
"  --rank R               this rank, 0..world-1 (required)\n"
"  --world N              ranks in the job, 1..%u (required)\n"
"  --dtype int32|float32|qint32  element type (default float32); qint32: float32 in and\n"
"                         out, quantised to int32 per chunk (lib/comm), float32 of random\n"
"                         exponents (as --inputs random); a summed collective is checked\n"
"                         against the exact sum within the bound of shr_comm.h\n"
"                         (qint32 max_err= on stderr; exit 1 beyond the bound)\n"
"  --op sum|min|max       reduction (default sum)\n"
"  --coll NAME            the collective: allreduce (default), reduce, reduce_scatter,\n"
"                         broadcast, allgather, gather, scatter, alltoall\n"
"  --root R               root rank of reduce, broadcast, gather, scatter (default 0)\n"
"  --step N               the collective of iteration i (warmup included) is called at\n"
"                         step N + i (shr_comm_ident_set(); the barrier before it keeps\n"
"                         the previous call's step); default: automatic (step 0)\n"
"  --tensor T             the collective's tensor id in every iteration; default:\n"
"                         automatic (ids count the calls, barriers included). Ranks\n"
"                         that differ in --step, --tensor, --coll or --root make the\n"
"                         box abort the job: every rank exits 3, error=mismatch, its\n"
"                         stderr naming both sides\n"
"  --size BYTES           tensor size per rank block (the collective's count), K/M/G\n"
"                         suffixes (x1024) allowed (default 4M); allgather and gather\n"
"                         receive, reduce_scatter and scatter send, alltoall both, world\n"
"                         blocks\n"
"  --iters N              timed collectives (default 10)\n"
"  --warmup N             untimed collectives first (default 2)\n"
"  --window W             chunks in flight (default 128)\n"
"  --slots S              slots asked of the box, at least W (default: W and as many\n"
"                         more, rounded up to 8: spare slots keep a lost chunk's slot\n"
"                         from holding up the stream)\n"
"  --chunk auto|ELEMS     elements per packet; auto (default): the largest that reaches\n"
"                         the box whole from every rank (the job's ranks agree on it)\n"
"  --timeout-ms N         fail if no progress for N ms (default 10000)\n"
"  --cc-target-us N|off   congestion control: the queueing delay allowed on the path,\n"
"                         1..1000000 us (default: 1000); off: none, the whole window\n"
"                         from the start. Raise it where ranks share cores (their\n"
"                         hosts' scheduling shows in their round trips), at the cost of\n"
"                         fairness between jobs that share a bottleneck\n"
"  --no-verify            do not check the results\n"
"  --ready-file PATH      create PATH once joined (the job is active at the box)\n"
"  --go-file PATH         after joining, wait (up to %u s) for PATH to exist before the\n"
"                         first allreduce: a test holds several jobs active at once\n"
"  --mid-file PATH        before the second allreduce, wait (up to %u s, still polling)\n"
"                         for PATH to exist: a test acts while every rank is mid-run\n"
"  --end-file PATH        after the last allreduce, create PATH and wait until it is\n"
"                         removed (up to %u s) before leaving: a test kills the rank\n"
"                         at a known point, or acts while it is still a member\n"
"  --seed N               inputs hashed from (seed, rank, iteration, index) (default 0):\n"
"                         a restarted run with another seed has other data\n"
"  --repro                a reproducible job: the box sums float32 exactly and rounds\n"
"                         once, so results are the same bits whatever order the ranks'\n"
"                         data arrive in (every rank of the job must give it)\n"
"  --inputs hashed|random hashed (default): float32 odd integers whose sums are exact in\n"
"                         any order; random: float32 of random sign and exponent\n"
"                         (2^-40..2^40), whose float32 sums depend on the order: with\n"
"                         --repro a sum is checked against the exact sum rounded once,\n"
"                         bit for bit; without it, within float32 summation's bound\n"
"                         (world - 1) 2^-24 sum|x| of the exact sum\n"
"  --tree-rank G, --tree-world W\n"
"                         a tree of boxes: this rank is rank G of the W ranks of the\n"
"                         whole tree (its box's job has --world of them), given to its\n"
"                         box when it joins: the collective's ranks (--root, blocks, N)\n"
"                         are the tree's, its inputs are rank G's, the check is over W\n"
"  --secret-file PATH     the job's secret (a file not readable by others; default:\n"
"                         $SHOUTER_SECRET_FILE), for a box that admits only members\n"
"                         that prove it: the secret itself is never sent\n"
"  --mac                  the job uses the per-job message authentication code\n"
"                         (AES-GMAC keyed from the secret: needs --secret-file; the\n"
"                         box's job must have mac = 1, else the JOIN is refused)\n"
"  -h, --help             this text\n"
"\n"
"Last line of stdout:\n"
"RESULT rank=R world=N dtype=T size=BYTES iters=N ok=0|1 goodput_gbps=X lat_us_p50=Y\n"
"       lat_us_p99=Z retx=K crc=HEX coll=NAME [error=WHAT]\n"
"crc is the CRC32C of the outputs of every iteration (warmup included), in order: ranks\n"
"of one job that print the same crc received the same bytes in every collective (for\n"
"allreduce, broadcast and allgather, whose output is the same at every rank).\n"
"goodput_gbps counts --size bytes per collective.\n"
"A wrong result is reported on stderr per iteration: 'B of N elements wrong, first at\n"
"index K (got X, want Y)'.\n"
"Exit codes: 0 ok, 1 wrong result, 2 bad usage/config, 3 timeout or aborted job\n"
"(error=timeout, aborted, or mismatch: the ranks called different collectives; stderr\n"
"names both sides), 4 I/O error.\n",
		SHR_PROTO_UDP_PORT, SHR_PROTO_UDP_PORT, SHR_PROTO_MAX_WORLD, GO_WAIT_MS / 1000,
		GO_WAIT_MS / 1000, GO_WAIT_MS / 1000);
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
	/* decimal, or hex after 0x (tokens): never octal, where "010" would be eight */
	if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) && s[2] != '\0' && s[2] != '-')
		v = strtoull(s + 2, &end, 16);
	else
		v = strtoull(s, &end, 10);
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

/* XX:XX:XX:XX:XX:XX, a unicast MAC */
static int
parse_mac(const char *opt, const char *s, uint8_t mac[6])
{
	unsigned int b[6], i;
	char tail;

	if (strpbrk(s, "+- \t") != NULL ||	/* sscanf's %x would take a sign, or blanks */
	    sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6 || (b[0] & 1) != 0 || (b[0] | b[1] | b[2] | b[3] | b[4] | b[5]) == 0)
		return bad_opt(opt, s, "a unicast MAC address XX:XX:XX:XX:XX:XX");
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

#define W_STR_(x) #x
#define W_STR(x) W_STR_(x)

/* --agg A.B.C.D[:P][,A.B.C.D[:P]...]: the boxes (port 0: --agg-port). */
static int
parse_aggs(const char *s, struct opts *o)
{
	const char *allowed = "IPv4 addresses A.B.C.D[:PORT], comma-separated, at most "
			      W_STR(SHR_SHARD_MAX_BOXES);
	char buf[512], *save = NULL, *tok;
	unsigned long port;

	if (strlen(s) >= sizeof(buf))
		return bad_opt("--agg", s, allowed);
	strcpy(buf, s);
	o->nboxes = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':'), *end;
		struct in_addr a;

		if (o->nboxes == SHR_SHARD_MAX_BOXES)
			return bad_opt("--agg", s, allowed);
		port = 0;
		if (colon != NULL) {
			*colon = '\0';
			errno = 0;
			port = strtoul(colon + 1, &end, 10);
			if (errno != 0 || end == colon + 1 || *end != '\0' || port == 0 ||
			    port > 65535)
				return bad_opt("--agg", s, allowed);
		}
		if (inet_pton(AF_INET, tok, &a) != 1 || a.s_addr == 0)
			return bad_opt("--agg", s, allowed);
		o->agg_ips[o->nboxes] = ntohl(a.s_addr);
		o->agg_ports[o->nboxes] = (uint16_t)port;
		o->nboxes++;
	}
	if (o->nboxes == 0)
		return bad_opt("--agg", s, allowed);
	o->agg_ip = o->agg_ips[0];
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
	OPT_DRIVER = 256, OPT_AGG, OPT_AGG_PORT, OPT_AGG_MAC, OPT_LOCAL, OPT_LOCAL_PORT, OPT_JOB,
	OPT_RANK,
	OPT_WORLD, OPT_DTYPE, OPT_OP, OPT_SIZE, OPT_ITERS, OPT_WARMUP, OPT_WINDOW, OPT_SLOTS,
	OPT_CHUNK,
	OPT_TIMEOUT, OPT_NO_VERIFY, OPT_READY_FILE, OPT_GO_FILE, OPT_MID_FILE, OPT_END_FILE,
	OPT_SEED,
	OPT_REPRO, OPT_INPUTS, OPT_MAC,
	OPT_SECRET_FILE, OPT_COLL, OPT_ROOT, OPT_STEP, OPT_TENSOR, OPT_TREE_RANK, OPT_TREE_WORLD,
	OPT_VLAN, OPT_NO_GSO, OPT_NO_GROUP, OPT_CC_TARGET,
};

static const struct option long_opts[] = {
	{ "driver", required_argument, NULL, OPT_DRIVER },
	{ "agg", required_argument, NULL, OPT_AGG },
	{ "agg-port", required_argument, NULL, OPT_AGG_PORT },
	{ "agg-mac", required_argument, NULL, OPT_AGG_MAC },
	{ "vlan", required_argument, NULL, OPT_VLAN },
	{ "no-gso", no_argument, NULL, OPT_NO_GSO },
	{ "no-group", no_argument, NULL, OPT_NO_GROUP },
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
	{ "slots", required_argument, NULL, OPT_SLOTS },
	{ "chunk", required_argument, NULL, OPT_CHUNK },
	{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
	{ "cc-target-us", required_argument, NULL, OPT_CC_TARGET },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ "ready-file", required_argument, NULL, OPT_READY_FILE },
	{ "go-file", required_argument, NULL, OPT_GO_FILE },
	{ "mid-file", required_argument, NULL, OPT_MID_FILE },
	{ "end-file", required_argument, NULL, OPT_END_FILE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "repro", no_argument, NULL, OPT_REPRO },
	{ "mac", no_argument, NULL, OPT_MAC },
	{ "inputs", required_argument, NULL, OPT_INPUTS },
	{ "secret-file", required_argument, NULL, OPT_SECRET_FILE },
	{ "tree-rank", required_argument, NULL, OPT_TREE_RANK },
	{ "tree-world", required_argument, NULL, OPT_TREE_WORLD },
	{ "coll", required_argument, NULL, OPT_COLL },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "step", required_argument, NULL, OPT_STEP },
	{ "tensor", required_argument, NULL, OPT_TENSOR },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Returns 0, 1 (help wanted), or -EINVAL (message printed). */
int
worker_parse_opts(int argc, char **argv, struct opts *o)
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
			rc = parse_aggs(optarg, o);
			o->have_agg = true;
			break;
		case OPT_AGG_MAC:
			rc = parse_mac("--agg-mac", optarg, o->agg_mac);
			break;
		case OPT_VLAN:
			rc = parse_u64("--vlan", optarg, 0, 4094, "0..4094", &v);
			o->vlan = (uint16_t)v;
			break;
		case OPT_NO_GSO:
			o->no_gso = true;
			break;
		case OPT_NO_GROUP:
			o->no_group = true;
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
			if (rc == 0)	/* else the RESULT line would show v's last value */
				o->rank = (long)v;
			break;
		case OPT_WORLD:
			rc = parse_u64("--world", optarg, 1, SHR_PROTO_MAX_WORLD, "1..4096", &v);
			if (rc == 0)
				o->world = (long)v;
			break;
		case OPT_TREE_RANK:
			rc = parse_u64("--tree-rank", optarg, 0, SHR_PROTO_MAX_WORLD - 1,
				       "0..tree world-1", &v);
			o->data_rank = (long)v;
			break;
		case OPT_TREE_WORLD:
			rc = parse_u64("--tree-world", optarg, 1, SHR_PROTO_MAX_WORLD,
				       "1..4096", &v);
			o->data_world = (long)v;
			break;
		case OPT_DTYPE: {
			int d = shr_proto_dtype_parse(optarg);

			if (d != SHR_DTYPE_INT32 && d != SHR_DTYPE_FLOAT32 && d != SHR_DTYPE_QINT32)
				return bad_opt("--dtype", optarg, "int32, float32, qint32");
			o->dtype = d;	/* the RESULT line never names a refused type */
			break;
		}
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
		case OPT_SLOTS:
			rc = parse_u64("--slots", optarg, 1, SHR_PROTO_SLOT_MASK, "1..2^31-1",
				       &v);
			o->slots = (uint32_t)v;
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
		case OPT_CC_TARGET:
			if (strcmp(optarg, "off") == 0) {
				o->cc_target_us = SHR_COMM_CC_OFF;
				break;
			}
			rc = parse_u64("--cc-target-us", optarg, 1, SHR_COMM_CC_TARGET_MAX_US,
				       "off or 1..1000000", &v);
			o->cc_target_us = (uint32_t)v;
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
		case OPT_MID_FILE:
			o->mid_file = optarg;
			break;
		case OPT_END_FILE:
			o->end_file = optarg;
			break;
		case OPT_SEED:
			rc = parse_u64("--seed", optarg, 0, UINT32_MAX, "0..4294967295", &v);
			o->seed = (uint32_t)v;
			break;
		case OPT_MAC:
			o->mac = true;
			break;
		case OPT_REPRO:
			o->repro = true;
			break;
		case OPT_INPUTS:
			if (strcmp(optarg, "random") != 0 && strcmp(optarg, "hashed") != 0)
				return bad_opt("--inputs", optarg, "hashed, random");
			o->random_inputs = strcmp(optarg, "random") == 0;
			break;
		case OPT_SECRET_FILE:
			o->secret_file = optarg;
			break;
		case OPT_COLL:
			o->kind = shr_proto_kind_parse(optarg);
			if (o->kind < 0)
				return bad_opt("--coll", optarg, "allreduce, reduce, "
					       "reduce_scatter, broadcast, allgather, gather, "
					       "scatter, alltoall");
			break;
		case OPT_ROOT:
			rc = parse_u64("--root", optarg, 0, SHR_PROTO_MAX_WORLD - 1, "0..world-1",
				       &v);
			o->root = (uint16_t)v;
			break;
		case OPT_STEP:
			rc = parse_u64("--step", optarg, 0, UINT32_MAX, "0..4294967295", &v);
			o->step = (uint32_t)v;
			o->have_step = true;
			break;
		case OPT_TENSOR:
			rc = parse_u64("--tensor", optarg, 0, UINT32_MAX, "0..4294967295", &v);
			o->tensor = (uint32_t)v;
			o->have_tensor = true;
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
	if ((o->data_rank >= 0) != (o->data_world >= 0) ||
	    (o->data_rank >= 0 && (o->data_rank >= o->data_world ||
				   o->dtype == SHR_DTYPE_QINT32 || o->random_inputs))) {
		fprintf(stderr, PROG ": --tree-rank and --tree-world: both, with the rank below "
			"the world, for hashed int32 or float32 inputs\n");
		return -EINVAL;
	}
	o->tree = o->data_rank >= 0;
	if (o->data_rank < 0) {
		o->data_rank = o->rank;
		o->data_world = o->world;
	}
	if (o->root >= o->data_world) {
		fprintf(stderr, PROG ": --root: %u is not below the %s %ld (allowed: 0..%ld)\n",
			o->root, o->tree ? "--tree-world" : "--world", o->data_world,
			o->data_world - 1);
		return -EINVAL;
	}
	if (o->have_step && o->warmup + o->iters - 1 > UINT32_MAX - o->step) {
		fprintf(stderr, PROG ": --step: %u + --warmup + --iters passes 4294967295\n",
			o->step);
		return -EINVAL;
	}
	if (o->slots != 0 && o->slots < o->window) {
		fprintf(stderr, PROG ": --slots: %u is fewer than --window %u\n", o->slots,
			o->window);
		return -EINVAL;
	}
	if (o->no_gso && strcmp(o->driver, "udp") != 0) {
		fprintf(stderr, PROG ": --no-gso: only with --driver udp\n");
		return -EINVAL;
	}
	if (o->vlan != 0 && strcmp(o->driver, "dpdk") != 0) {
		fprintf(stderr, PROG ": --vlan: only with --driver dpdk (a kernel UDP rank is on "
			"a VLAN through its interface: ip link add link DEV name DEV.ID type vlan "
			"id ID)\n");
		return -EINVAL;
	}
	/* what shr_shard_create() would refuse with EINVAL alone, said here */
	if (o->nboxes > 1 && strcmp(o->driver, "udp") != 0) {
		fprintf(stderr, PROG ": --agg: a job sharded over %u boxes needs --driver udp (a "
			"DPDK port belongs to one communicator)\n", o->nboxes);
		return -EINVAL;
	}
	for (unsigned int i = 1; i < o->nboxes; i++) {
		for (unsigned int j = 0; j < i; j++) {
			uint16_t pi = o->agg_ports[i] ? o->agg_ports[i] : o->agg_port;
			uint16_t pj = o->agg_ports[j] ? o->agg_ports[j] : o->agg_port;

			if (o->agg_ips[i] == o->agg_ips[j] && pi == pj) {
				fprintf(stderr, PROG ": --agg: boxes %u and %u are the same box "
					"(one box would see two jobs of one id)\n", j + 1, i + 1);
				return -EINVAL;
			}
		}
	}
	if (o->local_port != 0 && (uint32_t)o->local_port + o->nboxes - 1 > 65535) {
		fprintf(stderr, PROG ": --local-port: %u: box j binds --local-port + j, above "
			"65535 with %u boxes\n", o->local_port, o->nboxes);
		return -EINVAL;
	}
	if (strcmp(o->driver, "dpdk") != 0 &&
	    (o->agg_mac[0] | o->agg_mac[1] | o->agg_mac[2] | o->agg_mac[3] | o->agg_mac[4] |
	     o->agg_mac[5]) != 0)	/* not refused: a script may give mixed ranks one list */
		fprintf(stderr, PROG ": note: --agg-mac is for --driver dpdk; the kernel "
			"resolves the box's MAC for this udp rank\n");
	if (strcmp(o->driver, "dpdk") == 0 && o->local_ip == 0) {
		fprintf(stderr, PROG ": --local: required with --driver dpdk (the address the "
			"DPDK port answers ARP for)\n");
		return -EINVAL;
	}
	if (o->random_inputs && o->dtype != SHR_DTYPE_FLOAT32) {
		fprintf(stderr, PROG ": --inputs random: float32 only (the other dtypes' inputs "
			"are hashed)\n");
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
