/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * check_pcap: check what the aggregator sent for the traffic shouter-pcapgen wrote (same options):
 * - exactly one RESULT per round, slot and rank, to that rank's MAC, IPv4 address and UDP
 *   port, from the aggregator's address and one of its lanes, with valid IPv4 checksum and
 *   UDP length, valid shouter header and CRC (shr_proto_validate), the round's identity
 *   (kind, root and aux included) and, to the round's destinations (pc_gets_payload(): every
 *   rank for allreduce, the root for reduce and reduce_scatter, all but the source for
 *   broadcast and allgather, aux for gather, scatter and alltoall), the exact result as
 *   payload (pc_result(): the box's rounding, NaN and signed-zero rules for every dtype and
 *   op; a relay's source's bits exactly), a qint32 round's block exponent in aux; to every
 *   other rank a header-only RESULT (flag SHR_FLAG_NOPAYLOAD, the same count, no payload);
 *   with --lossy, a second one (the resend, with or without payload as the first) to the
 *   rank that sent its DATA again after the round completed (pc_resend_rank), and none for
 *   the duplicates and late copies;
 * - with --join: one JOIN_ACK (status 0, the window and chunk asked for) to every rank;
 *   with --refused ERRNO (and --joins-only): one JOIN_ACK of that status, answering its
 *   JOIN, to every rank, and nothing else;
 * - with --leave: one LEAVE_ACK (status 0, the job's token) to every rank, after its RESULTs;
 * - with --arp: one ARP reply to rank 0 for the aggregator's address, from the MAC every
 *   other frame comes from;
 * - with --icmp: one ICMP echo reply (checksums, id, seq and data of the request) to rank 0's
 *   MAC and address;
 * - with --decoys: nothing more (no ARP frame answered but --arp's request), and every
 *   RESULT to its rank's MAC (above) despite the forger's ARP reply;
 * - with --forged-join (the box has an admission secret): one admission challenge answering
 *   the forger's bare JOIN (check_challenge()), before any RESULT, to rank 0's address and
 *   rank 0's own MAC; and every RESULT to its rank's MAC (above) despite the forger's JOIN;
 * - with --mac-move: rank 0's RESULTs of round 1 on (and anything after them) to the MAC
 *   its DATA of those rounds came from (pc_rank_mac_at()), the earlier ones to its own;
 * - with --shutdown (the aggregator was stopped with SIGTERM): one ABORT to every rank (the
 *   job, rank SHR_PROTO_RANK_ALL: every member, aux ESHUTDOWN), after all its RESULTs;
 * - nothing else.
 * Exit 0 when all hold, 1 otherwise (each problem is printed), 2 on usage errors.
 */

#include "pcap_common.h"

#define MAX_ERRS 20

struct check {
	struct pc_conf c;
	uint8_t agg_mac[6];
	bool have_mac;
	uint8_t *seen;		/* [round][slot][rank]: RESULTs */
	uint32_t *join_acks;	/* per rank */
	uint32_t *leave_acks;	/* per rank */
	uint32_t *aborts;	/* per rank */
	uint32_t results, acks;	/* RESULTs; of which header-only */
	uint32_t arp_replies, icmp_replies, other, errors;
	uint32_t challenges;	/* JOIN_ACK ENOKEY (--forged-join) */
};

static void
usage(void)
{
	printf("usage: check_pcap --in FILE [options as given to shouter-pcapgen]\n" PC_OPTS_HELP
	       PC_CHECK_HELP);
}

/* RESULTs rank must get for (round, slot): one, and with --lossy the resend to one rank. */
static uint32_t
results_want(const struct pc_conf *c, uint32_t round, uint32_t slot, uint32_t rank)
{
	return 1 + (c->lossy && rank == pc_resend_rank(c, round, slot));
}

#define FAIL(k, ...) do { \
		if ((k)->errors++ < MAX_ERRS) { \
			fprintf(stderr, "check_pcap: frame %u: ", idx); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, "\n"); \
		} \
		return; \
	} while (0)

static uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
check_src_mac(struct check *k, const uint8_t *f, uint32_t idx)
{
	if (!k->have_mac) {
		memcpy(k->agg_mac, f + 6, 6);
		k->have_mac = true;
	} else if (memcmp(k->agg_mac, f + 6, 6) != 0) {
		FAIL(k, "source MAC differs from the aggregator's first frame");
	}
}

static void
check_arp(struct check *k, const uint8_t *f, uint32_t len, uint32_t idx)
{
	const uint8_t *a = f + PC_ETH_LEN;
	uint8_t mac0[6];

	pc_rank_mac(&k->c, 0, mac0);
	if (!k->c.arp)
		FAIL(k, "unexpected ARP frame");
	if (len < PC_ETH_LEN + 28 || get16(a) != 1 || get16(a + 2) != 0x0800 || a[4] != 6 ||
	    a[5] != 4 || get16(a + 6) != 2)
		FAIL(k, "not an Ethernet/IPv4 ARP reply");
	if (memcmp(a + 8, f + 6, 6) != 0 || get32(a + 14) != k->c.agg_ip)
		FAIL(k, "ARP reply: sender is not the aggregator's MAC/address");
	if (memcmp(a + 18, mac0, 6) != 0 || get32(a + 24) != pc_rank_ip(&k->c, 0) ||
	    memcmp(f, mac0, 6) != 0)
		FAIL(k, "ARP reply: not addressed to the requester");
	k->arp_replies++;
}

static void
check_icmp(struct check *k, const uint8_t *f, const uint8_t *ip, uint32_t l4len, uint32_t idx)
{
	const uint8_t *icmp = ip + PC_IP_LEN;
	uint8_t mac0[6];
	uint32_t i;

	if (!k->c.icmp)
		FAIL(k, "unexpected ICMP frame");
	if (l4len != 64 || icmp[0] != 0 || icmp[1] != 0 || pc_cksum(icmp, l4len) != 0)
		FAIL(k, "not a valid ICMP echo reply of 64 bytes");
	if (get16(icmp + 4) != 0x1234 || get16(icmp + 6) != 1)
		FAIL(k, "echo reply: wrong id/seq");
	for (i = 8; i < l4len; i++)
		if (icmp[i] != (uint8_t)i)
			FAIL(k, "echo reply: data differs from the request");
	pc_rank_mac(&k->c, 0, mac0);
	if (get32(ip + 16) != pc_rank_ip(&k->c, 0) || memcmp(f, mac0, 6) != 0)
		FAIL(k, "echo reply: not to the requester (its address and MAC)");
	k->icmp_replies++;
}

/*
 * --forged-join: the box's answer to the forger's bare JOIN (rank 0's address and port, the
 * forger's MAC, no proof, nonce PC_FORGED_NONCE), which came after rank 0's first DATA and
 * before the round's last. The box has an admission secret, so the JOIN is not admitted: it is
 * answered with a challenge, a JOIN_ACK ENOKEY echoing the JOIN (job, rank 0, world, dtype,
 * window, chunk, its nonce in offset; no token: nothing is keyed yet) with the 48-byte
 * admission block, from the lane the JOIN came to, to the address the JOIN names: rank 0's
 * IP and port (check_udp() found rank 0 by them). Its destination MAC is whatever the box
 * holds for rank 0's IP when it sends it, and the box learns the sender before sending:
 * rank 0's MAC (check_udp() checked) if the forged JOIN moved nothing, the forger's if the
 * box took a challenged JOIN for proof and pinned its MAC (as before 5f58f12): rank 0's
 * entry was pinned to its MAC by its first DATA (admitted), and only rank 0's admitted
 * traffic may change a pinned entry. The challenge comes before any RESULT (the box answers
 * in order, and the round's last DATA follows the JOIN).
 */
static void
check_challenge(struct check *k, const struct shr_proto_msg *m, uint32_t rank, uint16_t sport,
		uint32_t mlen, uint32_t idx)
{
	const struct pc_conf *c = &k->c;

	if (rank != 0 || m->job != c->job || m->rank != 0 || m->world != c->ranks ||
	    m->dtype != c->dtype || m->slot != c->window || m->count != c->chunk ||
	    m->offset != PC_FORGED_NONCE || m->token != 0)
		FAIL(k, "rank %u: a challenge (job %u rank %u world %u window %u chunk %u nonce "
		     "0x%llx token 0x%llx) that does not answer the forged JOIN", rank, m->job,
		     m->rank, m->world, m->slot, m->count, (unsigned long long)m->offset,
		     (unsigned long long)m->token);
	if (mlen != SHR_PROTO_HDR_LEN + SHR_PROTO_ADM_LEN)
		FAIL(k, "the challenge: %u bytes, want a header and the %u-byte admission block",
		     mlen, SHR_PROTO_ADM_LEN);
	if (sport != c->port)
		FAIL(k, "the challenge: from port %u, not the first lane's %u (the JOIN's)", sport,
		     c->port);
	if (k->results != 0)
		FAIL(k, "the challenge after %u RESULTs: the forged JOIN preceded every RESULT",
		     k->results);
	k->challenges++;
}

static void
check_udp(struct check *k, const uint8_t *f, const uint8_t *ip, uint32_t l4len, uint32_t idx)
{
	const struct pc_conf *c = &k->c;
	const uint8_t *udp = ip + PC_IP_LEN;
	const uint8_t *msg = udp + PC_UDP_LEN;
	struct shr_proto_msg m, want;
	enum shr_proto_reason why;
	uint32_t dip = get32(ip + 16), rank, i, mlen;
	int rc;
	uint16_t sport = get16(udp), dport = get16(udp + 2);
	uint8_t mac[6];
	uint8_t *seen;
	bool pay;

	if (l4len < PC_UDP_LEN || get16(udp + 4) != l4len)
		FAIL(k, "UDP length %u, IP says %u", l4len >= 8 ? get16(udp + 4) : 0, l4len);
	mlen = l4len - PC_UDP_LEN;
	rc = pc_rank_of(c, dip, dport);
	if (rc < 0)
		FAIL(k, "UDP to an address and port that are no rank's");
	rank = (uint32_t)rc;
	if (sport < c->port || sport >= c->port + c->lanes)
		FAIL(k, "source port %u is not a lane", sport);
	why = shr_proto_validate(msg, mlen, &m);
	if (why != SHR_PROTO_OK)
		FAIL(k, "rank %u: invalid shouter message: %s", rank, shr_proto_reason_str(why));
	/* a JOIN_ACK answers a JOIN (before round 0); a LEAVE_ACK or ABORT comes last */
	pc_rank_mac_at(c, rank, m.type == SHR_MSG_RESULT ? m.step :
			m.type == SHR_MSG_JOIN_ACK ? 0 : c->rounds, mac);
	if (memcmp(f, mac, 6) != 0)
		FAIL(k, "rank %u: destination MAC %02x:%02x:%02x:%02x:%02x:%02x is not the rank's "
		     "(%02x:%02x:%02x:%02x:%02x:%02x)", rank, f[0], f[1], f[2], f[3], f[4], f[5],
		     mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	if (m.type == SHR_MSG_JOIN_ACK && m.aux == ENOKEY && c->forged_join) {
		check_challenge(k, &m, rank, sport, mlen, idx);
		return;
	}
	if (m.type == SHR_MSG_JOIN_ACK && c->refused != 0) {
		if (m.aux != c->refused || m.job != c->job || m.rank != rank ||
		    m.offset != (c->token ^ (rank + 1)))
			FAIL(k, "rank %u: JOIN_ACK status %u for job %u rank %u, want status %u "
			     "answering its JOIN", rank, m.aux, m.job, m.rank, c->refused);
		k->join_acks[rank]++;
		return;
	}
	if (m.type == SHR_MSG_JOIN_ACK && c->join && m.aux == EINPROGRESS &&
	    m.job == c->job && m.token == c->token)
		return;		/* "still filling", to a rank that joined before the last */
	if (m.type == SHR_MSG_JOIN_ACK) {
		if (!c->join || m.aux != 0 || m.job != c->job || m.slot != c->window ||
		    m.count != c->chunk)
			FAIL(k, "rank %u: unexpected JOIN_ACK (status %u, window %u, chunk %u)",
			     rank, m.aux, m.slot, m.count);
		k->join_acks[rank]++;
		return;
	}
	if (m.type == SHR_MSG_LEAVE_ACK) {
		if (!c->leave || m.aux != 0 || m.job != c->job || m.rank != rank ||
		    m.world != c->ranks || m.token != c->token)
			FAIL(k, "rank %u: unexpected LEAVE_ACK (job %u, rank %u, status %u)", rank,
			     m.job, m.rank, m.aux);
		k->leave_acks[rank]++;
		return;
	}
	if (m.type == SHR_MSG_ABORT) {
		if (!c->shutdown || m.job != c->job || m.rank != SHR_PROTO_RANK_ALL ||
		    m.aux != ESHUTDOWN || m.world != c->ranks)
			FAIL(k, "rank %u: unexpected ABORT (job %u, rank %u, aux %u)", rank, m.job,
			     m.rank, m.aux);
		k->aborts[rank]++;
		return;
	}
	if (m.type != SHR_MSG_RESULT)
		FAIL(k, "rank %u: unexpected %s", rank, shr_proto_type_str(m.type));
	if (k->aborts[rank] != 0)
		FAIL(k, "rank %u: a RESULT after the ABORT", rank);
	if (k->leave_acks[rank] != 0)
		FAIL(k, "rank %u: a RESULT after the LEAVE_ACK", rank);
	if (m.step >= c->rounds || m.slot >= c->window)
		FAIL(k, "RESULT for step %u slot %u: no such round", m.step, m.slot);
	pc_round_msg(c, m.step, m.slot, &want);
	if (m.job != want.job || m.ver != want.ver || m.dtype != want.dtype ||
	    m.op != want.op || m.count != want.count || m.tensor != want.tensor ||
	    m.offset != want.offset || m.aux != want.aux ||
	    (m.rank != SHR_PROTO_RANK_ALL && m.rank >= c->ranks) ||
	    m.kind != want.kind || m.root != want.root || m.world != c->ranks ||
	    m.token != c->token)
		FAIL(k, "RESULT step %u slot %u: identity differs from the round's (kind %s root "
		     "%u aux %u, want %s %u %u)", m.step, m.slot, shr_proto_kind_str(m.kind),
		     m.root, m.aux, shr_proto_kind_str(want.kind), want.root, want.aux);
	pay = pc_gets_payload(c, m.step, m.slot, rank);
	/* shr_proto_validate() checked the length against count and the flag */
	if (m.flags != (pay ? 0 : SHR_FLAG_NOPAYLOAD))
		FAIL(k, "RESULT step %u slot %u to rank %u: flags 0x%x, want %s", m.step, m.slot,
		     rank, m.flags, pay ? "the payload (0)" : "header-only (NOPAYLOAD)");
	for (i = 0; pay && i < m.count; i++) {
		uint32_t got = pc_get_elem(c, msg + SHR_PROTO_HDR_LEN, i);
		struct pc_want exp;

		pc_result(c, m.step, m.slot, i, &exp);
		if (!pc_want_ok(&exp, got))
			FAIL(k, "RESULT step %u slot %u element %u: 0x%08x, want 0x%08x",
			     m.step, m.slot, i, got, exp.bits);
	}
	seen = &k->seen[((size_t)m.step * c->window + m.slot) * c->ranks + rank];
	if (*seen >= results_want(c, m.step, m.slot, rank))
		FAIL(k, "RESULT step %u slot %u sent %s to rank %u", m.step, m.slot,
		     *seen == 1 ? "twice" : "again", rank);
	(*seen)++;
	k->results++;
	k->acks += !pay;
}

static void
check_frame(struct check *k, const uint8_t *f, uint32_t len, uint32_t idx)
{
	const struct pc_conf *c = &k->c;
	const uint8_t *ip = f + PC_ETH_LEN;
	uint32_t tot;

	if (len < PC_ETH_LEN)
		FAIL(k, "runt frame");
	check_src_mac(k, f, idx);
	if (get16(f + 12) == 0x0806) {
		check_arp(k, f, len, idx);
		return;
	}
	if (get16(f + 12) != 0x0800 || len < PC_ETH_LEN + PC_IP_LEN || ip[0] != 0x45) {
		k->other++;
		FAIL(k, "neither ARP nor IPv4 without options");
	}
	tot = get16(ip + 2);
	if (tot < PC_IP_LEN || tot > len - PC_ETH_LEN || pc_cksum(ip, PC_IP_LEN) != 0)
		FAIL(k, "bad IPv4 total length or checksum");
	if (get32(ip + 12) != c->agg_ip)
		FAIL(k, "IPv4 source is not the aggregator");
	if (ip[9] == 1)
		check_icmp(k, f, ip, tot - PC_IP_LEN, idx);
	else if (ip[9] == 17)
		check_udp(k, f, ip, tot - PC_IP_LEN, idx);
	else
		FAIL(k, "IPv4 protocol %u", ip[9]);
}

int
main(int argc, char **argv)
{
	struct check k;
	struct pc_file pf;
	uint8_t *frame;
	uint32_t idx = 0, r, want, want_acks = 0, round, slot, nleave = 0;
	size_t nseen, i;
	int len, rc;

	memset(&k, 0, sizeof(k));
	rc = pc_parse(&k.c, argc, argv, usage);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (k.c.in == NULL) {
		fprintf(stderr, "check_pcap: --in FILE is required\n");
		return 2;
	}
	nseen = (size_t)k.c.rounds * k.c.window * k.c.ranks;
	k.seen = calloc(nseen, 1);
	k.join_acks = calloc(k.c.ranks, sizeof(*k.join_acks));
	k.leave_acks = calloc(k.c.ranks, sizeof(*k.leave_acks));
	k.aborts = calloc(k.c.ranks, sizeof(*k.aborts));
	frame = malloc(PC_MAX_FRAME);
	if (k.seen == NULL || k.join_acks == NULL || k.leave_acks == NULL || k.aborts == NULL ||
	    frame == NULL)
		return 4;
	rc = pc_open_read(&pf, k.c.in);
	if (rc < 0) {
		fprintf(stderr, "check_pcap: cannot read '%s' as an Ethernet pcap: %s\n", k.c.in,
			strerror(-rc));
		return 1;
	}
	while ((len = pc_read(&pf, frame, PC_MAX_FRAME)) > 0)
		check_frame(&k, frame, (uint32_t)len, idx++);
	pc_close(&pf);
	if (len < 0) {
		fprintf(stderr, "check_pcap: truncated pcap\n");
		k.errors++;
	}
	want = (uint32_t)nseen + (k.c.lossy ? k.c.rounds * k.c.window : 0);
	if (k.c.joins_only)
		want = 0;
	if (k.results != want) {
		fprintf(stderr, "check_pcap: %u RESULT frames, want %u (rounds %u x window %u x "
			"ranks %u%s)\n", k.results, want, k.c.rounds, k.c.window, k.c.ranks,
			k.c.lossy ? ", and one resend per round and slot" : "");
		k.errors++;
	}
	for (i = 0; i < nseen && k.errors < MAX_ERRS; i++) {
		round = (uint32_t)(i / ((size_t)k.c.window * k.c.ranks));
		slot = (uint32_t)(i / k.c.ranks % k.c.window);
		r = (uint32_t)(i % k.c.ranks);
		if (!k.c.joins_only && !pc_gets_payload(&k.c, round, slot, r))
			want_acks += results_want(&k.c, round, slot, r);
		if (k.seen[i] != (k.c.joins_only ? 0 : results_want(&k.c, round, slot, r))) {
			fprintf(stderr, "check_pcap: rank %u got %u RESULTs of step %u slot %u, "
				"want %u\n", r, k.seen[i], round, slot,
				results_want(&k.c, round, slot, r));
			k.errors++;
		}
	}
	for (r = 0; r < k.c.ranks; r++) {
		nleave += k.leave_acks[r];
		if (k.leave_acks[r] != (k.c.leave ? 1u : 0u)) {
			fprintf(stderr, "check_pcap: rank %u got %u LEAVE_ACKs, want %u\n", r,
				k.leave_acks[r], k.c.leave ? 1 : 0);
			k.errors++;
		}
	}
	for (r = 0; r < k.c.ranks && k.c.join; r++) {
		if (k.join_acks[r] != 1) {
			fprintf(stderr, "check_pcap: rank %u got %u JOIN_ACKs, want 1\n", r,
				k.join_acks[r]);
			k.errors++;
		}
	}
	for (r = 0; r < k.c.ranks && k.c.shutdown; r++) {
		if (k.aborts[r] != 1) {
			fprintf(stderr, "check_pcap: rank %u got %u ABORTs at shutdown, want 1\n",
				r, k.aborts[r]);
			k.errors++;
		}
	}
	if (k.acks != want_acks && k.errors < MAX_ERRS) {
		fprintf(stderr, "check_pcap: %u header-only RESULTs, want %u\n", k.acks,
			want_acks);
		k.errors++;
	}
	if (k.challenges != (k.c.forged_join ? 1u : 0u)) {
		/* none: the box has no secret (then it admits the JOIN: an unexpected JOIN_ACK
		 * status 0, above) or the JOIN went over the challenges' rate */
		fprintf(stderr, "check_pcap: %u admission challenges, want %u\n", k.challenges,
			k.c.forged_join ? 1 : 0);
		k.errors++;
	}
	if (k.arp_replies != (k.c.arp ? 1u : 0u) || k.icmp_replies != (k.c.icmp ? 1u : 0u)) {
		fprintf(stderr, "check_pcap: %u ARP replies, %u echo replies (want %u, %u)\n",
			k.arp_replies, k.icmp_replies, k.c.arp ? 1 : 0, k.c.icmp ? 1 : 0);
		k.errors++;
	}
	printf("check_pcap: frames=%u results=%u header_only=%u leave_acks=%u arp_replies=%u "
	       "echo_replies=%u errors=%u\n", idx, k.results, k.acks, nleave, k.arp_replies,
	       k.icmp_replies, k.errors);
	free(frame);
	free(k.aborts);
	free(k.leave_acks);
	free(k.join_acks);
	free(k.seen);
	return k.errors == 0 ? 0 : 1;
}
