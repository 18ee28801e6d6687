/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PCAP_COMMON_H
#define SHR_PCAP_COMMON_H

/*
 * Shared by shouter-pcapgen (writes aggregation traffic) and check_pcap (checks what the aggregator
 * sent back): the options (the same for both, so that the checker describes the same
 * traffic), each round's identity, what --lossy adds and what the box must count. The rest is
 * in pcap_conf.h (the traffic's description, each round's roles), pcap_values.h (the values
 * every rank sends and the exact results) and pcap_frame.h (frame layout, pcap files).
 */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <shr_proto.h>

#include "pcap_conf.h"
#include "pcap_frame.h"
#include "pcap_values.h"

/* --- options (the same for both tools, so that the checker describes the same traffic) --- */

static inline int
pc_parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);	/* decimal: "010" is ten, not octal eight */
	if (errno != 0 || end == s || *end != '\0' || *s == '-' || v < lo || v > hi) {
		fprintf(stderr, "%s: expected an integer in %u..%u, got '%s'\n", opt, lo, hi, s);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static inline int
pc_parse_ip(const char *opt, const char *s, uint32_t *ip)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1) {
		fprintf(stderr, "%s: expected A.B.C.D, got '%s'\n", opt, s);
		return -EINVAL;
	}
	*ip = ntohl(a.s_addr);
	return 0;
}

static inline int
pc_parse_mac(const char *opt, const char *s, uint8_t mac[6])
{
	unsigned int b[6], i;
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6) {
		fprintf(stderr, "%s: expected a MAC xx:xx:xx:xx:xx:xx, got '%s'\n", opt, s);
		return -EINVAL;
	}
	for (i = 0; i < 6; i++) {
		if (b[i] > 255) {
			fprintf(stderr, "%s: bad MAC '%s'\n", opt, s);
			return -EINVAL;
		}
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

/*
 * --addrs "A.B.C.D[:PORT],...": every rank's address, in rank order (a port defaults to
 * c->src_port). Sets c->ranks to the count, or checks it against an explicit --ranks.
 */
static inline int
pc_parse_addrs(struct pc_conf *c, const char *list, bool ranks_set)
{
	char *buf = strdup(list), *tok, *save = NULL, *colon;
	uint32_t n = 0, cap = 1, i, v;
	int rc = 0;

	if (buf == NULL)
		return -ENOMEM;
	for (i = 0; list[i] != '\0'; i++)	/* an upper bound on the addresses */
		cap += list[i] == ',' || list[i] == ' ';
	c->addr_ip = calloc(cap, sizeof(*c->addr_ip));
	c->addr_port = calloc(cap, sizeof(*c->addr_port));
	if (c->addr_ip == NULL || c->addr_port == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (tok = strtok_r(buf, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
		colon = strchr(tok, ':');
		c->addr_port[n] = c->src_port;
		if (colon != NULL) {
			*colon = '\0';
			rc = pc_parse_u32("--addrs port", colon + 1, 1, 65535, &v);
			if (rc < 0)
				goto out;
			c->addr_port[n] = (uint16_t)v;
		}
		rc = pc_parse_ip("--addrs", tok, &c->addr_ip[n]);
		if (rc < 0)
			goto out;
		for (i = 0; i < n; i++) {
			if (c->addr_ip[i] == c->addr_ip[n] && c->addr_port[i] == c->addr_port[n]) {
				fprintf(stderr, "--addrs: ranks %u and %u have the same address "
					"%s:%u\n", i, n, tok, c->addr_port[n]);
				rc = -EINVAL;
				goto out;
			}
		}
		n++;
	}
	if (n == 0 || n > SHR_PROTO_MAX_WORLD) {
		fprintf(stderr, "--addrs: %u addresses, want 1..%u\n", n, SHR_PROTO_MAX_WORLD);
		rc = -EINVAL;
	} else if (ranks_set && n != c->ranks) {
		fprintf(stderr, "--addrs: %u addresses for --ranks %u\n", n, c->ranks);
		rc = -EINVAL;
	} else {
		c->ranks = n;
	}
out:
	free(buf);
	return rc;
}

/** Free what pc_parse() allocated. */
static inline void
pc_free(struct pc_conf *c)
{
	free(c->addr_ip);
	free(c->addr_port);
	c->addr_ip = NULL;
	c->addr_port = NULL;
}

#define PC_OPTS_HELP \
	"  --ranks N, --world N (4)  --job ID (1)  --rounds R (2; round k uses slot version\n" \
	"  k mod 2: even, so that a looped replay alternates them)  --window W (8)\n" \
	"  --chunk ELEMS (256)\n" \
	"  --dtype int32|float32|float16|bfloat16|qint32 (int32)  --op sum|min|max|prod (sum;\n" \
	"  prod: not qint32)  --special (a float dtype with min or max, or a relay kind: NaNs,\n" \
	"  signed zeros and infinities in some elements; the result as lib/pool defines it)\n" \
	"  --kind allreduce|reduce|reduce_scatter|broadcast|allgather|gather|scatter|alltoall\n" \
	"  (allreduce; relay kinds need ranks >= 2: the source's DATA carries the elements, the\n" \
	"  others' are header-only; each round's roles: pc_round_roles())  --root R (0; the\n" \
	"  root of reduce, broadcast, gather and scatter)\n" \
	"  --agg-ip A.B.C.D (198.18.0.1)  --agg-mac MAC (02:00:00:00:00:01)\n" \
	"  --port P (47000)  --lanes L (1; slot s goes to port P + s mod L)\n" \
	"  --src-ip A.B.C.D (198.18.0.11; rank r uses +r)  --src-port P (5000)\n" \
	"  --addrs A.B.C.D[:P],... (every rank's address in rank order, instead of --src-ip;\n" \
	"  the port defaults to --src-port; sets --ranks; no address twice)\n" \
	"  --token HEX (0x7368725f72706c79: the job's incarnation token, the INI's token =)\n" \
	"  --tensor ID (1)  --join (JOINs first; ranks bind on JOIN)\n" \
	"  --churn N (0; before the last rank's DATA of every round and slot, N DATA\n" \
	"  frames claiming a rank from random sources in 10.0.0.0/8: refused as spoofed)\n" \
	"  --lossy (ranks >= 2; an ordered job; every round and slot: one rank's DATA\n" \
	"  twice while the round is open, rank 0's copies of the two previous rounds after its\n" \
	"  DATA of this one, and one rank's DATA again after the round completed: it, and only\n" \
	"  it, gets the result again)  --leave (every rank LEAVEs at the end: one LEAVE_ACK " \
	"each)\n" \
	"  --arp (an ARP request for the aggregator)  --icmp (an ICMP echo request)\n" \
	"  --joins-only (the JOINs only: implies --join)  --bogus (first, 5 frames from sources\n" \
	"  no host has: echoes from the broadcast MAC, a multicast IP and the box's own IP, a\n" \
	"  JOIN from 0.0.0.0, an ARP request from 255.255.255.255: no answer, bad_src 5)\n" \
	"  --decoys (ranks >= 2; ARP frames the box must neither answer nor believe: first,\n" \
	"  rank 0's request for another address and its reply to the box; after rank 0's first\n" \
	"  DATA, a forger's reply giving rank 0's address another MAC: the RESULTs still go to\n" \
	"  rank 0's MAC)\n" \
	"  --forged-join (ranks >= 2, not --join; for a box with an admission secret: after\n" \
	"  rank 0's first DATA, a bare JOIN for the job (no proof) from rank 0's address and\n" \
	"  port but a forger's MAC 02:66:00:00:00:02: answered with a challenge (JOIN_ACK\n" \
	"  ENOKEY to rank 0's address, msg_challenges 1), not admitted, moving nothing: the\n" \
	"  challenge and every RESULT go to rank 0's MAC)\n" \
	"  --malformed (then 5 broken frames from rank 0: echo requests with a wrong IPv4\n" \
	"  header checksum and with a total length past the frame's end (bad_ip 2), a DATA with\n" \
	"  a UDP length below 8 (bad_udp 1) and one to the port past the last lane " \
	"(bad_port 1),\n" \
	"  an echo request to another address (not_ours 1): no answer)\n" \
	"  --mac-move (ranks >= 2, rounds >= 2, not --lossy, --leave nor --joins-only: rank 0's\n" \
	"  DATA from round 1 on come from another MAC, 02:00:00:00:02:00, as from a host moved\n" \
	"  to another NIC: its RESULTs of those rounds go there)\n"

/* check_pcap's own */
#define PC_CHECK_HELP \
	"  --refused ERRNO (every rank's JOIN refused: one JOIN_ACK of that status each,\n" \
	"  nothing else)  --shutdown (the aggregator was stopped: each rank's last frame is an\n" \
	"  ABORT for every member, aux ESHUTDOWN)\n"

/** Parse the shared options; 0, 1 (help), or -EINVAL. */
static inline int
pc_parse(struct pc_conf *c, int argc, char **argv, void (*usage)(void))
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "in", required_argument, NULL, 'i' },
		{ "config", required_argument, NULL, 'C' },
		{ "ini", required_argument, NULL, 'C' },
		{ "ranks", required_argument, NULL, 'n' },
		{ "world", required_argument, NULL, 'n' },
		{ "addrs", required_argument, NULL, 'D' },
		{ "token", required_argument, NULL, 'k' },
		{ "job", required_argument, NULL, 'j' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "window", required_argument, NULL, 'w' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "dtype", required_argument, NULL, 'd' },
		{ "op", required_argument, NULL, 'O' },
		{ "special", no_argument, NULL, 'Z' },
		{ "kind", required_argument, NULL, 'K' },
		{ "root", required_argument, NULL, 'T' },
		{ "joins-only", no_argument, NULL, 'Y' },
		{ "refused", required_argument, NULL, 'R' },
		{ "agg-ip", required_argument, NULL, 'A' },
		{ "agg-mac", required_argument, NULL, 'M' },
		{ "port", required_argument, NULL, 'p' },
		{ "lanes", required_argument, NULL, 'l' },
		{ "src-ip", required_argument, NULL, 'S' },
		{ "src-port", required_argument, NULL, 'P' },
		{ "tensor", required_argument, NULL, 't' },
		{ "churn", required_argument, NULL, 'N' },
		{ "join", no_argument, NULL, 'J' },
		{ "lossy", no_argument, NULL, 'L' },
		{ "leave", no_argument, NULL, 'E' },
		{ "arp", no_argument, NULL, 'a' },
		{ "icmp", no_argument, NULL, 'I' },
		{ "bogus", no_argument, NULL, 'B' },
		{ "decoys", no_argument, NULL, 'G' },
		{ "malformed", no_argument, NULL, 'm' },
		{ "forged-join", no_argument, NULL, 'F' },
		{ "mac-move", no_argument, NULL, 'V' },
		{ "shutdown", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *addrs = NULL;
	bool ranks_set = false;
	unsigned long long tok;
	char *end;
	uint32_t v;
	int o, d;

	pc_defaults(c);
	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int rc = 0;

		switch (o) {
		case 'o': c->out = optarg; break;
		case 'i': c->in = optarg; break;
		case 'C': c->config = optarg; break;
		case 'n':
			rc = pc_parse_u32("--ranks", optarg, 1, SHR_PROTO_MAX_WORLD, &c->ranks);
			ranks_set = true;
			break;
		case 'D': addrs = optarg; break;
		case 'k':
			errno = 0;
			tok = strtoull(optarg, &end, 16);
			if (errno != 0 || *end != '\0' || *optarg == '-' || *optarg == '\0' ||
			    tok == 0) {
				/* 0 is no token: the box refuses it in a job's config */
				fprintf(stderr, "--token: expected a non-zero 64-bit hex number, "
					"got '%s'\n", optarg);
				rc = -EINVAL;
			}
			c->token = tok;
			break;
		case 'j': rc = pc_parse_u32("--job", optarg, 0, UINT32_MAX, &c->job); break;
		case 'r': rc = pc_parse_u32("--rounds", optarg, 1, 1u << 20, &c->rounds); break;
		case 'w': rc = pc_parse_u32("--window", optarg, 1, 1u << 20, &c->window); break;
		case 'c': rc = pc_parse_u32("--chunk", optarg, 1, 2048, &c->chunk); break;
		case 'd':
			d = shr_proto_dtype_parse(optarg);
			if (d < 0) {
				fprintf(stderr, "--dtype: int32, float32, float16, bfloat16 or "
					"qint32, got '%s'\n", optarg);
				rc = -EINVAL;
			}
			c->dtype = (uint8_t)d;
			break;
		case 'O':
			d = shr_proto_op_parse(optarg);
			if (d < 0) {
				fprintf(stderr, "--op: sum, min, max or prod, got '%s'\n", optarg);
				rc = -EINVAL;
			}
			c->op = (uint8_t)d;
			break;
		case 'Z': c->special = true; break;
		case 'K':
			d = shr_proto_kind_parse(optarg);
			if (d < 0) {
				fprintf(stderr, "--kind: allreduce, reduce, reduce_scatter, "
					"broadcast, allgather, gather, scatter or alltoall, got "
					"'%s'\n", optarg);
				rc = -EINVAL;
			}
			c->kind = (uint8_t)d;
			break;
		case 'T':
			rc = pc_parse_u32("--root", optarg, 0, SHR_PROTO_MAX_WORLD - 1, &v);
			c->root = (uint16_t)v;
			break;
		case 'Y': c->joins_only = c->join = true; break;
		case 'R': rc = pc_parse_u32("--refused", optarg, 1, 65535, &c->refused); break;
		case 'A': rc = pc_parse_ip("--agg-ip", optarg, &c->agg_ip); break;
		case 'M': rc = pc_parse_mac("--agg-mac", optarg, c->agg_mac); break;
		case 'p':
			rc = pc_parse_u32("--port", optarg, 1, 65535, &v);
			c->port = (uint16_t)v;
			break;
		case 'l':
			rc = pc_parse_u32("--lanes", optarg, 1, 64, &v);
			c->lanes = (uint16_t)v;
			break;
		case 'S': rc = pc_parse_ip("--src-ip", optarg, &c->src_ip); break;
		case 'P':
			rc = pc_parse_u32("--src-port", optarg, 1, 65535, &v);
			c->src_port = (uint16_t)v;
			break;
		case 't': rc = pc_parse_u32("--tensor", optarg, 0, UINT32_MAX, &c->tensor); break;
		case 'N': rc = pc_parse_u32("--churn", optarg, 0, 1u << 20, &c->churn); break;
		case 'J': c->join = true; break;
		case 'L': c->lossy = true; break;
		case 'E': c->leave = true; break;
		case 'a': c->arp = true; break;
		case 'I': c->icmp = true; break;
		case 'B': c->bogus = true; break;
		case 'G': c->decoys = true; break;
		case 'm': c->malformed = true; break;
		case 'F': c->forged_join = true; break;
		case 'V': c->mac_move = true; break;
		case 'X': c->shutdown = true; break;
		case 'h': usage(); return 1;
		default:
			fprintf(stderr, "try --help\n");
			return -EINVAL;
		}
		if (rc < 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (addrs != NULL) {
		int rc = pc_parse_addrs(c, addrs, ranks_set);

		if (rc < 0)
			return rc;
	}
	if (c->special && (!pc_is_float(c) || (c->op != SHR_OP_MIN && c->op != SHR_OP_MAX &&
						!shr_proto_kind_relay(c->kind)))) {
		fprintf(stderr, "--special: needs a float dtype and --op min or max, or a relay "
			"kind\n");
		return -EINVAL;
	}
	if (c->root >= c->ranks) {
		fprintf(stderr, "--root: %u is no rank of %u\n", c->root, c->ranks);
		return -EINVAL;
	}
	if (shr_proto_kind_relay(c->kind) && c->ranks < 2) {
		fprintf(stderr, "--kind %s: needs --ranks 2 or more\n",
			shr_proto_kind_str(c->kind));
		return -EINVAL;
	}
	if (c->op == SHR_OP_PROD && c->dtype == SHR_DTYPE_QINT32) {
		fprintf(stderr, "--op prod: not with qint32 (the box refuses it)\n");
		return -EINVAL;
	}
	if (c->lossy && c->ranks < 2) {
		fprintf(stderr, "--lossy: needs --ranks 2 or more\n");
		return -EINVAL;
	}
	if (c->decoys && (c->ranks < 2 || c->joins_only)) {
		/* the forger's frame comes between rank 0's DATA and the round's RESULT */
		fprintf(stderr, "--decoys: needs --ranks 2 or more, and DATA (not --joins-only)\n");
		return -EINVAL;
	}
	if (c->forged_join && (c->ranks < 2 || c->join)) {
		/* the JOIN comes between rank 0's DATA and the round's RESULT; a box that
		 * challenges JOINs admits no replayed one (a replay cannot answer) */
		fprintf(stderr, "--forged-join: needs --ranks 2 or more, and a job with every "
			"rank's address (not --join)\n");
		return -EINVAL;
	}
	if (c->mac_move && (c->ranks < 2 || c->rounds < 2 || c->lossy || c->leave ||
			    c->joins_only)) {
		/* a round that moves no MAC first; no rank 0 frame of round 0 after round 1
		 * (lossy's late copies), nor from its old MAC (a LEAVE) */
		fprintf(stderr, "--mac-move: needs --ranks 2 or more, --rounds 2 or more, and not "
			"--lossy, --leave nor --joins-only\n");
		return -EINVAL;
	}
	if ((uint32_t)c->port + c->lanes - 1 > 65535) {
		fprintf(stderr, "--port/--lanes: past port 65535\n");
		return -EINVAL;
	}
	return 0;
}

/* Identity of round k, slot s (the same at every rank). */
static inline void
pc_round_msg(const struct pc_conf *c, uint32_t round, uint32_t slot, struct shr_proto_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = SHR_MSG_DATA;
	m->dtype = c->dtype;
	m->op = c->op;
	m->ver = (uint8_t)(round & 1);
	m->world = (uint16_t)c->ranks;
	m->job = c->job;
	m->slot = slot;
	m->count = c->chunk;
	m->tensor = c->tensor;
	m->step = round;
	m->offset = ((uint64_t)round * c->window + slot) * c->chunk;
	m->token = c->token;
	m->kind = c->kind;
	pc_round_roles(c, round, slot, &m->root, &m->aux);
}

/*
 * --lossy, per round k and slot s (shouter-pcapgen writes, in this order): every rank's DATA, where
 * rank pc_dup_rank()'s comes twice in a row (the round is still open: a duplicate, counted,
 * not summed, unanswered) and rank 0's is followed by its copies of rounds k - 1 and k - 2
 * (late copies of rounds every member has had: stale, counted, unanswered); then, after the
 * last rank's DATA completed the round, rank pc_resend_rank()'s DATA of round k again (its
 * RESULT was lost: the box sends that rank alone the round's sum again).
 */
static inline uint32_t
pc_dup_rank(const struct pc_conf *c, uint32_t round, uint32_t slot)
{
	return (round + slot) % (c->ranks - 1);	/* never the last rank: the round is open */
}

static inline uint32_t
pc_resend_rank(const struct pc_conf *c, uint32_t round, uint32_t slot)
{
	return (round + 2 * slot + 1) % c->ranks;
}

/** What the box must count for the traffic (the msg_* counters of /shouter/stats). */
struct pc_expect {
	uint64_t data;		/* DATA summed */
	uint64_t completed;	/* rounds completed (one RESULT to every rank each) */
	uint64_t resent;	/* RESULTs sent again to one rank */
	uint64_t duplicates;	/* DATA counted already in an open round */
	uint64_t stale;		/* late copies of completed rounds */
	uint64_t leaves;
	uint64_t challenges;	/* admission challenges sent (JOIN_ACK ENOKEY) */
};

static inline void
pc_expect(const struct pc_conf *c, struct pc_expect *e)
{
	uint64_t rounds = c->joins_only ? 0 : (uint64_t)c->rounds * c->window;

	memset(e, 0, sizeof(*e));
	e->data = rounds * c->ranks;
	e->completed = rounds;
	if (c->lossy) {
		e->resent = rounds;
		e->duplicates = rounds;
		e->stale = (uint64_t)c->window * ((c->rounds >= 1 ? c->rounds - 1 : 0) +
						  (c->rounds >= 2 ? c->rounds - 2 : 0));
	}
	e->leaves = c->leave ? c->ranks : 0;
	e->challenges = c->forged_join ? 1 : 0;
}

#endif /* SHR_PCAP_COMMON_H */
