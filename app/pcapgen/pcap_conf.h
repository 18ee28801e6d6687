/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PCAP_CONF_H
#define SHR_PCAP_CONF_H

/*
 * The traffic shouter-pcapgen writes and check_pcap checks (through pcap_common.h): its
 * description (struct pc_conf, filled from the options), each round's roles for --kind, and
 * each rank's addresses.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <shr_proto.h>

/*
 * The default incarnation token of the replayed job: the INI shouter-pcapgen writes
 * configures it ([job.N] token =), since a replay cannot learn it from a JOIN_ACK.
 */
#define PC_TOKEN 0x7368725f72706c79ull	/* "shr_rply" */
#define PC_BOGUS_FRAMES 5u	/* --bogus */
#define PC_DECOY_FRAMES 3u	/* --decoys */
#define PC_MALFORMED_FRAMES 5u	/* --malformed */
/*
 * --forged-join: the nonce of the forger's JOIN (its token field), which the box's challenge
 * echoes (offset), and the forger's MAC (not the --decoys forger's 02:66:00:00:00:01)
 */
#define PC_FORGED_NONCE 0x666f72676564ull	/* "forged" */
#define PC_FORGER_MAC { 0x02, 0x66, 0x00, 0x00, 0x00, 0x02 }
/* --mac-move: rank 0's MAC from round 1 on (its host on another NIC) */
#define PC_MOVED_MAC { 0x02, 0x00, 0x00, 0x00, 0x02, 0x00 }

/** The traffic: one static job, every rank, `rounds` rounds of `window` slots. */
struct pc_conf {
	const char *out;	/* gen: pcap to write */
	const char *in;		/* check: pcap to read */
	const char *config;	/* gen: also write a matching shouter-agg INI here */
	uint32_t ranks;
	uint32_t job;
	uint32_t rounds;
	uint32_t window;
	uint32_t chunk;		/* elements per DATA */
	uint8_t dtype;		/* any wire dtype */
	uint8_t op;		/* SHR_OP_* of every DATA */
	uint8_t kind;		/* SHR_KIND_* of every round (pc_round_roles()) */
	uint16_t root;		/* the root of reduce, broadcast, gather and scatter */
	uint32_t agg_ip;	/* host order */
	uint8_t agg_mac[6];
	uint16_t port;		/* base UDP port of the aggregator */
	uint16_t lanes;
	uint32_t src_ip;	/* rank r sends from src_ip + r (without --addrs) */
	uint16_t src_port;
	uint32_t *addr_ip;	/* --addrs: rank r's IPv4 (host order), or NULL */
	uint16_t *addr_port;	/* --addrs: rank r's UDP port */
	uint64_t token;		/* the job's incarnation token (the INI's token =) */
	uint32_t tensor;
	uint32_t churn;		/* gen: frames from random sources before each round's last DATA */
	bool join;		/* JOINs first (ranks bind on JOIN) */
	bool lossy;		/* duplicates, late copies and retransmits after completion */
	bool leave;		/* every rank LEAVEs at the end */
	bool special;		/* float MIN/MAX or a relay kind: NaNs, signed zeros and
				 * infinities */
	bool joins_only;	/* the JOINs, nothing after them */
	uint32_t refused;	/* check: every JOIN refused with this status */
	bool arp;		/* an ARP request for agg_ip */
	bool icmp;		/* an ICMP echo request to agg_ip */
	bool bogus;		/* frames from sources no host has (PC_BOGUS_FRAMES): unanswered */
	bool decoys;		/* ARP frames the box must neither answer nor believe
				 * (PC_DECOY_FRAMES) */
	bool malformed;		/* broken frames (PC_MALFORMED_FRAMES): dropped, unanswered */
	bool forged_join;	/* a forger's bare JOIN as rank 0 after its first DATA: the box
				 * (with an admission secret) challenges it, pins nothing */
	bool mac_move;		/* rank 0's DATA from round 1 on come from PC_MOVED_MAC: its
				 * RESULTs follow (pc_rank_mac_at()) */
	bool shutdown;		/* check: the aggregator was stopped (an ABORT ends each rank's
				 * frames) */
};

static inline void
pc_defaults(struct pc_conf *c)
{
	static const uint8_t mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

	memset(c, 0, sizeof(*c));
	c->ranks = 4;
	c->job = 1;
	c->rounds = 2;
	c->window = 8;
	c->chunk = 256;
	c->dtype = SHR_DTYPE_INT32;
	c->agg_ip = (198u << 24) | (18u << 16) | 1;	/* 198.18.0.1 */
	memcpy(c->agg_mac, mac, 6);
	c->port = SHR_PROTO_UDP_PORT;
	c->lanes = 1;
	c->src_ip = (198u << 24) | (18u << 16) | 11;	/* 198.18.0.11 */
	c->src_port = 5000;
	c->tensor = 1;
	c->token = PC_TOKEN;
}

/** Rank r's IPv4 address (host order). */
static inline uint32_t
pc_rank_ip(const struct pc_conf *c, uint32_t r)
{
	return c->addr_ip != NULL ? c->addr_ip[r] : c->src_ip + r;
}

/** Rank r's UDP port. */
static inline uint16_t
pc_rank_port(const struct pc_conf *c, uint32_t r)
{
	return c->addr_port != NULL ? c->addr_port[r] : c->src_port;
}

/** The rank at (ip, port), or -1. */
static inline int
pc_rank_of(const struct pc_conf *c, uint32_t ip, uint16_t port)
{
	uint32_t r;

	if (c->addr_ip == NULL)
		return ip - c->src_ip < c->ranks && port == c->src_port ?
			(int)(ip - c->src_ip) : -1;
	for (r = 0; r < c->ranks; r++)
		if (c->addr_ip[r] == ip && c->addr_port[r] == port)
			return (int)r;
	return -1;
}

/*
 * --kind: the roles in round (round, slot), as lib/proto/shr_proto.h's "Kinds" table has
 * them: *root (the header's root: a summed round's destination, a relay's source) and *aux
 * (a relay's destination or SHR_PROTO_RANK_ALL; a summed round's qint32 block exponent).
 * With g the round's index (round x window + slot), every rank takes each part in turn:
 *   allreduce: root 0; reduce: root --root; reduce_scatter: root g mod ranks (the block's
 *   owner); broadcast: source --root, to all; allgather: source g mod ranks, to all;
 *   gather: source the ranks other than --root in turn, destination --root; scatter: source
 *   --root, destination the others in turn; alltoall: source g mod ranks, destination each
 *   other rank in turn (every pair in ranks x (ranks - 1) rounds).
 * A relay's destination is never its source (the box refuses that: an endpoint copies such a
 * block locally). Relay kinds need ranks >= 2 (pc_parse checks).
 */
static inline uint32_t
pc_other(const struct pc_conf *c, uint32_t base, uint64_t g)
{
	return (uint32_t)((base + 1 + g % (c->ranks - 1)) % c->ranks);
}

static inline void
pc_round_roles(const struct pc_conf *c, uint32_t round, uint32_t slot, uint16_t *root,
	       uint32_t *aux)
{
	uint64_t g = (uint64_t)round * c->window + slot;
	/* qint32: a block exponent per round, which the RESULT must carry back */
	uint32_t qexp = c->dtype == SHR_DTYPE_QINT32 ? (round * 7u + slot) % 31u : 0;

	*root = 0;
	*aux = SHR_PROTO_RANK_ALL;
	switch (c->kind) {
	case SHR_KIND_REDUCE:
		*root = c->root;
		*aux = qexp;
		break;
	case SHR_KIND_REDUCE_SCATTER:
		*root = (uint16_t)(g % c->ranks);
		*aux = qexp;
		break;
	case SHR_KIND_BROADCAST:
		*root = c->root;
		break;
	case SHR_KIND_ALLGATHER:
		*root = (uint16_t)(g % c->ranks);
		break;
	case SHR_KIND_GATHER:
		*root = (uint16_t)pc_other(c, c->root, g);
		*aux = c->root;
		break;
	case SHR_KIND_SCATTER:
		*root = c->root;
		*aux = pc_other(c, c->root, g);
		break;
	case SHR_KIND_ALLTOALL:
		*root = (uint16_t)(g % c->ranks);
		*aux = pc_other(c, *root, g / c->ranks);
		break;
	default:	/* allreduce */
		*aux = qexp;
		break;
	}
}

/** Whether rank's DATA of the round carries the elements (else header-only). */
static inline bool
pc_sends_payload(const struct pc_conf *c, uint32_t round, uint32_t slot, uint32_t rank)
{
	uint16_t root;
	uint32_t aux;

	if (!shr_proto_kind_relay(c->kind))
		return true;
	pc_round_roles(c, round, slot, &root, &aux);
	return rank == root;
}

/** Whether rank's RESULT of the round carries the result (else header-only). */
static inline bool
pc_gets_payload(const struct pc_conf *c, uint32_t round, uint32_t slot, uint32_t rank)
{
	uint16_t root;
	uint32_t aux;

	pc_round_roles(c, round, slot, &root, &aux);
	switch (c->kind) {
	case SHR_KIND_ALLREDUCE:
		return true;
	case SHR_KIND_REDUCE:
	case SHR_KIND_REDUCE_SCATTER:
		return rank == root;
	case SHR_KIND_BROADCAST:
	case SHR_KIND_ALLGATHER:
		return rank != root;
	default:
		return rank == aux;
	}
}

/*
 * Rank r's MAC: 02:00:00:h:01:h for the host's index h, the first rank with r's IPv4 address
 * (h = r without --addrs): ranks that share an address share a host, so a MAC.
 */
static inline void
pc_rank_mac(const struct pc_conf *c, uint32_t r, uint8_t mac[6])
{
	uint32_t h = r;

	if (c->addr_ip != NULL)
		for (h = 0; c->addr_ip[h] != c->addr_ip[r]; h++)
			;
	mac[0] = 0x02;
	mac[1] = 0;
	mac[2] = 0;
	mac[3] = (uint8_t)(h >> 8);
	mac[4] = 0x01;
	mac[5] = (uint8_t)h;
}

/*
 * Rank r's MAC in round (pc_rank_mac()), but rank 0's from round 1 on with --mac-move: its
 * DATA come from there, and the box, which follows a member's MAC by its admitted traffic,
 * sends it every RESULT of those rounds there (and whatever comes after them).
 */
static inline void
pc_rank_mac_at(const struct pc_conf *c, uint32_t r, uint32_t round, uint8_t mac[6])
{
	static const uint8_t moved[6] = PC_MOVED_MAC;

	if (c->mac_move && r == 0 && round >= 1)
		memcpy(mac, moved, 6);
	else
		pc_rank_mac(c, r, mac);
}

#endif /* SHR_PCAP_CONF_H */
