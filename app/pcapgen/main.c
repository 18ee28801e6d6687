/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * shouter-pcapgen: write a pcap of valid aggregation traffic for one static job, and the
 * matching shouter-agg INI: every rank's DATA for `rounds` rounds (round k in slot version
 * k mod 2) of `window` slots, optionally preceded by the ranks' JOINs, an ARP request and an
 * ICMP echo request for the aggregator. Pktgen-DPDK replays it (`-s 0:file.pcap`,
 * scripts/pktgen/), and the integration tests through net_pcap: with an even number of
 * rounds a looped replay keeps aggregating correctly, round after round. --config also
 * writes the INI (the job with every rank's address, so that no JOIN is needed, and the
 * token the DATA carries). --churn N puts, before the last rank's DATA of every
 * round and slot, N DATA frames of that round from random sources (addresses in 10.0.0.0/8,
 * MACs and ports drawn too) that claim a rank: the aggregator refuses them as spoofed and
 * answers nothing, but sees each source, as it would see a scan or a flood from random
 * addresses while a round is open. --lossy adds what a lossy network does to a job's traffic
 * (duplicates, late copies, retransmits after a lost RESULT: pcap_common.h says which, where),
 * and makes the job of the INI ordered; --leave ends the traffic with every rank's LEAVE.
 * --dtype and --op choose the job's element type and every DATA's reduction (pc_val_bits()
 * says which values each sends: ones that show the precision and order of the box's sums),
 * and --special puts NaNs, signed zeros and infinities into float MIN and MAX (pc_special()).
 * --kind makes every round one of that collective (pc_round_roles() says which rank is each
 * round's root and destination): in a relay round the source's DATA carries the elements and
 * every other rank's DATA is header-only (SHR_FLAG_NOPAYLOAD, the same count); with --lossy,
 * the duplicates, late copies and retransmits are each rank's own DATA of that kind.
 * --decoys adds ARP frames the box must neither answer nor believe (a request for another
 * address, a reply, a forger's reply moving a member's address to another MAC).
 * --forged-join adds, for a box with an admission secret, a forger's bare JOIN as rank 0
 * from rank 0's address and port but another MAC (write_forged_join()).
 * --mac-move sends rank 0's DATA from round 1 on from another MAC (pc_rank_mac_at()).
 * --bogus and --malformed put first frames the box must drop, count and leave unanswered
 * (write_bogus(), write_malformed()).
 *
 * Exit status: 0, 2 on a usage error (the message names the option), 4 on an I/O error.
 */

#include <sys/stat.h>

#include "pcap_common.h"

#define PROG "shouter-pcapgen"

/* Pktgen-DPDK replays frames up to this long whole (without its -j, jumbo) */
#define PC_PKTGEN_MAX 1514

static void
usage(void)
{
	printf("usage: " PROG " --out FILE [--config INI] [options]\n"
	       "Write a pcap of valid DATA traffic of one static job (every rank, --rounds rounds\n"
	       "of --window slots, both slot versions) and, with --config, the INI that makes\n"
	       "shouter-agg serve it (shouter-agg -- --config INI). Replay it with Pktgen-DPDK\n"
	       "(scripts/pktgen/run.sh) or any pcap replayer (the README: \"Operating: throughput\n"
	       "tests with Pktgen-DPDK\"). Prints the frame count and the counters the box must\n"
	       "show for one pass.\n"
	       "  --out FILE (required)  --config FILE, --ini FILE (the box's INI)\n"
	       PC_OPTS_HELP
	       "Frames longer than %u bytes (chunk x element size + 106) need Pktgen's -j.\n"
	       "Exit status: 0; 2 bad option; 4 cannot write.\n", PC_PKTGEN_MAX);
}

static int
write_config(const struct pc_conf *c, int argc, char **argv)
{
	FILE *f = fopen(c->config, "w");
	struct in_addr a;
	char ip[INET_ADDRSTRLEN];
	uint32_t r;
	int i;

	if (f == NULL)
		return -errno;
	fprintf(f, "; written by " PROG ": the job of the matching pcap\n;");
	for (i = 0; i < argc; i++) {	/* the command line, on one comment line */
		const char *p;

		fputc(' ', f);
		for (p = argv[i]; *p != '\0'; p++)
			fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
	}
	a.s_addr = htonl(c->agg_ip);
	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	fprintf(f, "\n[agg]\nip = %s\n"
		"port = %u\nlanes = %u\n\n[job.%u]\nworld = %u\ndtype = %s\nwindow = %u\n"
		"chunk = %u\n; %s, with a token fixed in advance\nordered = %d\n"
		"token = 0x%016llx\n", ip, c->port, c->lanes, c->job, c->ranks,
		shr_proto_dtype_str(c->dtype), c->window, c->chunk,
		c->lossy ? "late copies (--lossy) are dropped only by an ordered job" :
		"a looped replay repeats its rounds", c->lossy ? 1 : 0,
		(unsigned long long)c->token);
	if (!c->join) {
		for (r = 0; r < c->ranks; r++) {
			a.s_addr = htonl(pc_rank_ip(c, r));
			inet_ntop(AF_INET, &a, ip, sizeof(ip));
			fprintf(f, "addr.%u = %s:%u\n", r, ip, pc_rank_port(c, r));
		}
	}
	return fclose(f) == 0 ? 0 : -EIO;
}

/* --churn: c->churn DATA frames of (round, slot) from random sources; *seq numbers them. */
static int
write_churn(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint32_t round,
	    uint32_t slot, uint32_t *seq, uint32_t *usec)
{
	uint32_t msg_len = SHR_PROTO_HDR_LEN + c->chunk * pc_esize(c), k, h;
	struct shr_proto_msg m;
	uint8_t mac[6];
	int rc = 0;

	memset(frame + PC_HDRS + SHR_PROTO_HDR_LEN, 0, c->chunk * pc_esize(c));
	for (k = 0; k < c->churn; k++, (*seq)++) {
		h = pc_mix32(*seq * 2u + 1u);
		mac[0] = 0x02;		/* locally administered unicast */
		mac[1] = 0xcc;
		memcpy(mac + 2, &h, 4);
		pc_round_msg(c, round, slot, &m);
		m.rank = (uint16_t)(*seq % c->ranks);
		pc_fill_l2l3(frame, c->agg_mac, mac, (10u << 24) | (pc_mix32(h) & 0xffffffu),
			     c->agg_ip, 17, PC_UDP_LEN + msg_len);
		pc_fill_udp(frame + PC_ETH_LEN + PC_IP_LEN, (uint16_t)(1024 + h % 60000),
			    (uint16_t)(c->port + slot % c->lanes), msg_len);
		shr_proto_build(frame + PC_HDRS, &m, frame + PC_HDRS + SHR_PROTO_HDR_LEN,
				c->chunk * pc_esize(c));
		rc |= pc_write(pf, frame, PC_HDRS + msg_len, (*usec)++);
	}
	return rc;
}

/*
 * Rank r's DATA of (round, slot) into frame: its elements, or, in a relay round of which r is
 * not the source, the header alone (SHR_FLAG_NOPAYLOAD, the same count). Returns its length.
 */
static uint32_t
build_data(const struct pc_conf *c, uint8_t *frame, uint32_t r, uint32_t round, uint32_t slot)
{
	uint32_t plen = c->chunk * pc_esize(c), msg_len, i;
	uint8_t *payload = frame + PC_HDRS + SHR_PROTO_HDR_LEN;
	struct shr_proto_msg m;
	uint8_t mac[6];

	pc_round_msg(c, round, slot, &m);
	m.rank = (uint16_t)r;
	if (pc_sends_payload(c, round, slot, r)) {
		for (i = 0; i < c->chunk; i++)
			pc_put_elem(c, payload, i, pc_val_bits(c, r, round, slot, i));
	} else {
		m.flags |= SHR_FLAG_NOPAYLOAD;
		plen = 0;
	}
	msg_len = SHR_PROTO_HDR_LEN + plen;
	pc_rank_mac_at(c, r, round, mac);
	pc_fill_l2l3(frame, c->agg_mac, mac, pc_rank_ip(c, r), c->agg_ip, 17,
		     PC_UDP_LEN + msg_len);
	pc_fill_udp(frame + PC_ETH_LEN + PC_IP_LEN, pc_rank_port(c, r),
		    (uint16_t)(c->port + slot % c->lanes), msg_len);
	shr_proto_build(frame + PC_HDRS, &m, payload, plen);
	return PC_HDRS + msg_len;
}

/* Rank r's DATA of (round, slot) (build_data()). */
static int
write_data(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint32_t r,
	   uint32_t round, uint32_t slot, uint32_t *usec)
{
	return pc_write(pf, frame, build_data(c, frame, r, round, slot), (*usec)++);
}

/*
 * Rank r's JOIN or LEAVE (as lib/comm sends them) from sip and smac (rank r's MAC if NULL),
 * to the first lane.
 */
static int
write_ctl_from(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint8_t type,
	       uint32_t r, uint64_t token, const uint8_t *smac, uint32_t sip, uint32_t *usec)
{
	struct shr_proto_msg m;
	uint8_t mac[6];

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.dtype = c->dtype;
	m.rank = (uint16_t)r;
	m.world = (uint16_t)c->ranks;
	m.job = c->job;
	m.slot = c->window;
	m.count = c->chunk;
	m.token = token;
	if (smac != NULL)
		memcpy(mac, smac, 6);
	else
		pc_rank_mac(c, r, mac);
	pc_fill_l2l3(frame, c->agg_mac, mac, sip, c->agg_ip, 17, PC_UDP_LEN + SHR_PROTO_HDR_LEN);
	pc_fill_udp(frame + PC_ETH_LEN + PC_IP_LEN, pc_rank_port(c, r), c->port,
		    SHR_PROTO_HDR_LEN);
	shr_proto_build(frame + PC_HDRS, &m, NULL, 0);
	return pc_write(pf, frame, PC_HDRS + SHR_PROTO_HDR_LEN, (*usec)++);
}

/* Rank r's JOIN or LEAVE from its own address. */
static int
write_ctl(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint8_t type,
	  uint32_t r, uint64_t token, uint32_t *usec)
{
	return write_ctl_from(c, pf, frame, type, r, token, NULL, pc_rank_ip(c, r), usec);
}

/*
 * An ARP frame from smac: a request (op 1, broadcast: who-has tip tell sip) or a reply to the
 * aggregator (op 2: sip is at smac).
 */
static int
write_arp(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint8_t op,
	  const uint8_t smac[6], uint32_t sip, uint32_t tip, uint32_t *usec)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t *a = frame + PC_ETH_LEN;
	uint32_t v;

	memset(frame, 0, 60);
	memcpy(frame, op == 1 ? bcast : c->agg_mac, 6);
	memcpy(frame + 6, smac, 6);
	frame[12] = 0x08;
	frame[13] = 0x06;
	a[1] = 1;		/* Ethernet */
	a[2] = 0x08;		/* IPv4 */
	a[4] = 6;
	a[5] = 4;
	a[7] = op;
	memcpy(a + 8, smac, 6);
	v = htonl(sip);
	memcpy(a + 14, &v, 4);
	if (op != 1)
		memcpy(a + 18, c->agg_mac, 6);
	v = htonl(tip);
	memcpy(a + 24, &v, 4);
	return pc_write(pf, frame, 60, (*usec)++);	/* padded to the minimum frame */
}

/* An ARP request for the aggregator's address from rank 0 (who-has agg_ip tell sip). */
static int
write_arp_from(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint32_t sip,
	       uint32_t *usec)
{
	uint8_t mac[6];

	pc_rank_mac(c, 0, mac);
	return write_arp(c, pf, frame, 1, mac, sip, c->agg_ip, usec);
}

/*
 * An ICMP echo request (id 0x1234, seq 1, 56 bytes of data) from smac and sip to dip, sent to
 * the aggregator's MAC, into frame. Returns its length.
 */
static uint32_t
build_icmp(const struct pc_conf *c, uint8_t *frame, const uint8_t smac[6], uint32_t sip,
	   uint32_t dip)
{
	uint8_t *icmp = frame + PC_ETH_LEN + PC_IP_LEN;
	uint32_t plen = 8 + 56, i;
	uint16_t ck;

	pc_fill_l2l3(frame, c->agg_mac, smac, sip, dip, 1, plen);
	memset(icmp, 0, plen);
	icmp[0] = 8;		/* echo request */
	icmp[4] = 0x12;		/* id 0x1234 */
	icmp[5] = 0x34;
	icmp[7] = 1;		/* seq 1 */
	for (i = 8; i < plen; i++)
		icmp[i] = (uint8_t)i;
	ck = pc_cksum(icmp, plen);
	icmp[2] = (uint8_t)(ck >> 8);
	icmp[3] = (uint8_t)ck;
	return PC_ETH_LEN + PC_IP_LEN + plen;
}

/* An ICMP echo request to the aggregator from smac and sip (build_icmp()). */
static int
write_icmp_from(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame,
		const uint8_t smac[6], uint32_t sip, uint32_t *usec)
{
	return pc_write(pf, frame, build_icmp(c, frame, smac, sip, c->agg_ip), (*usec)++);
}

/*
 * --bogus: PC_BOGUS_FRAMES frames from sources no host has, which the box must neither answer
 * nor learn (bad_src): echo requests from the broadcast MAC, from a multicast IPv4 address
 * and from the box's own address, rank 0's JOIN from 0.0.0.0, an ARP request from
 * 255.255.255.255.
 */
static int
write_bogus(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint32_t *usec)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t mac[6];
	int rc = 0;

	pc_rank_mac(c, 0, mac);
	rc |= write_icmp_from(c, pf, frame, bcast, pc_rank_ip(c, 0), usec);
	rc |= write_icmp_from(c, pf, frame, mac, 0xe0000001u, usec);	/* 224.0.0.1 */
	rc |= write_icmp_from(c, pf, frame, mac, c->agg_ip, usec);
	rc |= write_ctl_from(c, pf, frame, SHR_MSG_JOIN, 0, c->token ^ 1, NULL, 0, usec);
	rc |= write_arp_from(c, pf, frame, 0xffffffffu, usec);
	return rc;
}

/*
 * --decoys, first: rank 0's ARP request for another address (agg_ip + 1) and its ARP reply to
 * the box (rank 0 is at its MAC); neither is answered.
 */
static int
write_decoys(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint32_t *usec)
{
	uint8_t mac[6];
	int rc;

	pc_rank_mac(c, 0, mac);
	rc = write_arp(c, pf, frame, 1, mac, pc_rank_ip(c, 0), c->agg_ip + 1, usec);
	rc |= write_arp(c, pf, frame, 2, mac, pc_rank_ip(c, 0), c->agg_ip, usec);
	return rc;
}

/*
 * --decoys, after rank 0's first DATA (its address now a member's): a forger's ARP reply,
 * rank 0's address is at another MAC. Unanswered, and not believed: the round's RESULT goes
 * to rank 0's MAC.
 */
static int
write_forged_arp(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint32_t *usec)
{
	static const uint8_t forger[6] = { 0x02, 0x66, 0x00, 0x00, 0x00, 0x01 };

	return write_arp(c, pf, frame, 2, forger, pc_rank_ip(c, 0), c->agg_ip, usec);
}

/*
 * --forged-join, after rank 0's first DATA (its entry pinned to its MAC by that admitted
 * DATA): a bare JOIN of rank 0 for the job (no admission proof, nonce PC_FORGED_NONCE) from
 * rank 0's address and port but the forger's MAC, as anyone on the segment can send. A box
 * with an admission secret answers it with a challenge (JOIN_ACK ENOKEY, to rank 0's
 * address) and must not take its MAC for rank 0's: the round's RESULT, and every later one,
 * go to rank 0's MAC.
 */
static int
write_forged_join(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint32_t *usec)
{
	static const uint8_t forger[6] = PC_FORGER_MAC;

	return write_ctl_from(c, pf, frame, SHR_MSG_JOIN, 0, PC_FORGED_NONCE, forger,
			      pc_rank_ip(c, 0), usec);
}

/*
 * --malformed: PC_MALFORMED_FRAMES broken frames from rank 0, which the box must drop, count
 * and leave unanswered, each broken in one way only (the rest of it as the traffic's own: an
 * echo taken would be answered, the DATA summed): an echo request whose IPv4 header checksum
 * is off by one bit, and one whose IPv4 total length runs 4 bytes past the end of the frame
 * (its last 4 bytes cut: a truncated datagram) (bad_ip); its DATA of round 0, slot 0 with a
 * UDP length of 4, below the UDP header's own 8 bytes (bad_udp), and to the UDP port just
 * past the last lane (just below the first if the lanes end at 65535) (bad_port); an echo
 * request to the address after the box's (not_ours).
 */
static int
write_malformed(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint32_t *usec)
{
	uint8_t *ip = frame + PC_ETH_LEN, *udp = ip + PC_IP_LEN, mac[6];
	uint32_t sip = pc_rank_ip(c, 0), len;
	uint16_t port = (uint32_t)c->port + c->lanes <= 65535 ? (uint16_t)(c->port + c->lanes) :
				(uint16_t)(c->port - 1);
	int rc = 0;

	pc_rank_mac(c, 0, mac);
	len = build_icmp(c, frame, mac, sip, c->agg_ip);
	ip[11] ^= 0x01;		/* the header checksum's lowest bit */
	rc |= pc_write(pf, frame, len, (*usec)++);
	len = build_icmp(c, frame, mac, sip, c->agg_ip);
	rc |= pc_write(pf, frame, len - 4, (*usec)++);	/* 4 bytes short of its total length */
	len = build_data(c, frame, 0, 0, 0);
	udp[4] = 0;		/* UDP length 4 */
	udp[5] = 4;
	rc |= pc_write(pf, frame, len, (*usec)++);
	len = build_data(c, frame, 0, 0, 0);
	udp[2] = (uint8_t)(port >> 8);
	udp[3] = (uint8_t)port;
	rc |= pc_write(pf, frame, len, (*usec)++);
	len = build_icmp(c, frame, mac, sip, c->agg_ip + 1);	/* the box's MAC, not its IP */
	rc |= pc_write(pf, frame, len, (*usec)++);
	return rc;
}

/* Every frame of the traffic, in order; *n counts them. 0 or -EIO. */
static int
write_traffic(const struct pc_conf *c, struct pc_file *pf, uint8_t *frame, uint32_t *n)
{
	uint32_t round, slot, r, i, usec = 0, seq = 0;
	uint8_t mac0[6];
	int rc = 0;

	if (c->bogus) {
		rc |= write_bogus(c, pf, frame, &usec);
		*n += PC_BOGUS_FRAMES;
	}
	if (c->decoys) {
		rc |= write_decoys(c, pf, frame, &usec);
		*n += PC_DECOY_FRAMES - 1;
	}
	if (c->malformed) {
		rc |= write_malformed(c, pf, frame, &usec);
		*n += PC_MALFORMED_FRAMES;
	}
	if (c->arp) {
		rc |= write_arp_from(c, pf, frame, pc_rank_ip(c, 0), &usec);
		(*n)++;
	}
	if (c->icmp) {
		pc_rank_mac(c, 0, mac0);
		rc |= write_icmp_from(c, pf, frame, mac0, pc_rank_ip(c, 0), &usec);
		(*n)++;
	}
	for (r = 0; r < c->ranks && c->join; r++) {
		rc |= write_ctl(c, pf, frame, SHR_MSG_JOIN, r, c->token ^ (r + 1), &usec);
		(*n)++;	/* the token of a JOIN is the rank's nonce */
	}
	for (round = 0; round < c->rounds && !c->joins_only; round++) {
		for (slot = 0; slot < c->window; slot++) {
			for (r = 0; r < c->ranks; r++) {
				if (r == c->ranks - 1 && c->churn != 0) {
					rc |= write_churn(c, pf, frame, round, slot, &seq, &usec);
					*n += c->churn;
				}
				rc |= write_data(c, pf, frame, r, round, slot, &usec);
				(*n)++;
				if (c->decoys && r == 0 && round == 0 && slot == 0) {
					rc |= write_forged_arp(c, pf, frame, &usec);
					(*n)++;
				}
				if (c->forged_join && r == 0 && round == 0 && slot == 0) {
					rc |= write_forged_join(c, pf, frame, &usec);
					(*n)++;
				}
				if (!c->lossy)
					continue;
				if (r == pc_dup_rank(c, round, slot)) {
					rc |= write_data(c, pf, frame, r, round, slot, &usec);
					(*n)++;
				}
				for (i = 1; r == 0 && i <= 2 && i <= round; i++) {
					rc |= write_data(c, pf, frame, r, round - i, slot, &usec);
					(*n)++;
				}
			}
			if (c->lossy) {
				rc |= write_data(c, pf, frame, pc_resend_rank(c, round, slot),
						 round, slot, &usec);
				(*n)++;
			}
		}
	}
	for (r = 0; r < c->ranks && c->leave && !c->joins_only; r++) {
		rc |= write_ctl(c, pf, frame, SHR_MSG_LEAVE, r, c->token, &usec);
		(*n)++;
	}
	return rc != 0 ? -EIO : 0;
}

/* What the traffic must do at the box: frames, DATA, and the counters of /shouter/stats. */
static void
print_expect(const struct pc_conf *c, uint32_t n)
{
	struct pc_expect e;
	unsigned int k;

	pc_expect(c, &e);
	printf("frames=%u data=%u\n", n, c->joins_only ? 0 : c->rounds * c->window * c->ranks);
	/* what the box must count (agg_it.sh compares /shouter/stats) */
	printf("expect msg_data=%llu msg_completed=%llu msg_resent=%llu msg_duplicates=%llu "
	       "msg_stale=%llu msg_leaves=%llu msg_challenges=%llu", (unsigned long long)e.data,
	       (unsigned long long)e.completed, (unsigned long long)e.resent,
	       (unsigned long long)e.duplicates, (unsigned long long)e.stale,
	       (unsigned long long)e.leaves, (unsigned long long)e.challenges);
	/* rounds completed per kind: every round is of --kind */
	for (k = 0; k < SHR_KIND_MAX; k++)
		printf(" rounds_%s=%llu", shr_proto_kind_str(k),
		       (unsigned long long)(k == c->kind ? e.completed : 0));
	/* frames from sources no host has: the --bogus ones, no other */
	printf(" bad_src=%u", c->bogus ? PC_BOGUS_FRAMES : 0);
	/* broken frames, dropped before the protocol: the --malformed ones, no other */
	printf(" bad_ip=%u bad_udp=%u bad_port=%u not_ours=%u\n", c->malformed ? 2 : 0,
	       c->malformed ? 1 : 0, c->malformed ? 1 : 0, c->malformed ? 1 : 0);
}

/* a and b name one file: the same path, or the same inode of an existing file */
static bool
pc_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int
main(int argc, char **argv)
{
	struct pc_conf c;
	struct pc_file pf = { .f = NULL };
	uint8_t *frame = NULL;
	uint32_t n = 0, flen;
	uint64_t total;
	int rc, ret = 4;

	rc = pc_parse(&c, argc, argv, usage);
	if (rc != 0) {
		pc_free(&c);
		return rc > 0 ? 0 : 2;
	}
	if (c.in != NULL || c.refused != 0 || c.shutdown) {
		/* the checker's options (pcap_common.h): they describe what the box answered */
		fprintf(stderr, PROG ": --in, --refused and --shutdown are check_pcap's, not "
			"this tool's (try --help)\n");
		ret = 2;
		goto out;
	}
	if (c.out == NULL) {
		fprintf(stderr, PROG ": --out FILE is required (try --help)\n");
		ret = 2;
		goto out;
	}
	if (c.config != NULL && pc_same_file(c.out, c.config)) {
		fprintf(stderr, PROG ": --out and --config name the same file '%s'\n", c.out);
		ret = 2;
		goto out;
	}
	/* the DATA frames alone, so that the counts (and the pcap) stay within 32 bits */
	total = c.joins_only ? 0 : (uint64_t)c.rounds * c.window * (c.ranks + c.churn + 4);
	if (total > (1u << 30)) {
		fprintf(stderr, PROG ": %llu frames (--rounds x --window x --ranks): at most %u\n",
			(unsigned long long)total, 1u << 30);
		ret = 2;
		goto out;
	}
	if (c.rounds & 1)
		fprintf(stderr, PROG ": warning: odd --rounds: a looped replay repeats a "
			"version and will see duplicates\n");
	flen = PC_HDRS + SHR_PROTO_HDR_LEN + c.chunk * pc_esize(&c);
	if (flen > PC_PKTGEN_MAX)
		fprintf(stderr, PROG ": warning: DATA frames of %u bytes: Pktgen-DPDK cuts frames "
			"over %u bytes unless started with -j\n", flen, PC_PKTGEN_MAX);
	frame = calloc(1, PC_MAX_FRAME);
	if (frame == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	rc = pc_open_write(&pf, c.out);
	if (rc < 0) {
		fprintf(stderr, PROG ": cannot write '%s': %s\n", c.out, strerror(-rc));
		goto out;
	}
	rc = write_traffic(&c, &pf, frame, &n);
	if (fflush(pf.f) != 0)
		rc = -errno;
	pc_close(&pf);
	if (rc < 0) {
		fprintf(stderr, PROG ": write error on '%s': %s\n", c.out, strerror(-rc));
		goto out;
	}
	if (c.config != NULL) {
		rc = write_config(&c, argc, argv);
		if (rc < 0) {
			fprintf(stderr, PROG ": cannot write '%s': %s\n", c.config, strerror(-rc));
			goto out;
		}
	}
	print_expect(&c, n);
	printf("wrote %s: %u frames, DATA frames of %u bytes%s%s\n", c.out, n, flen,
	       c.config != NULL ? "; the box's INI: " : "", c.config != NULL ? c.config : "");
	ret = 0;
out:
	pc_close(&pf);
	free(frame);
	pc_free(&c);
	return ret;
}
