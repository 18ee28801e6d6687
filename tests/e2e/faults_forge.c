/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * faults_forge: a third host on the segment that forges shouter frames. It writes whole IPv4
 * datagrams through a raw socket (IPPROTO_RAW: the source address and port are whatever it
 * says), each carrying a shouter message with a valid CRC (shr_proto_build()).
 *
 *   faults_forge send --src IP:PORT --dst IP:PORT --type data|leave|result|abort
 *                     --job J --rank R --world W --dtype int32|float32 [--count C]
 *                     [--slot S] [--n N] [--gap-us U]
 *       N frames of one kind (default 1), each with another random token (never the
 *       incarnation's: a sender off the path does not know it), slot S + i mod 4 (DATA,
 *       RESULT), payload of C elements. Prints "sent N".
 *
 *   faults_forge flood --dst IP:PORT --src one:IP|many --n N [--gap-us U] [--seed S]
 *                      --real JOB:WORLD:CHUNK:WINDOW [--started-file P] [--stop-file P]
 *       JOINs of mixed shapes (list below), from IP (random source ports) or from random
 *       addresses of 198.18.0.0/15 outside 198.18.0.0/24 (the members' and the box's
 *       subnet). Creates the started file after the first 64 frames; sends at least N and
 *       goes on until the stop file exists (if one is named). Prints "sent N" and the count
 *       of each shape.
 *
 * Exit 0, 2 on bad usage, 4 on socket errors.
 */

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <shr_proto.h>

#define MAX_ELEMS 2048
#define FRAME_MAX (sizeof(struct iphdr) + sizeof(struct udphdr) + SHR_PROTO_HDR_LEN + \
		   4 * MAX_ELEMS)

struct opts {
	const char *mode;
	uint32_t src_ip, dst_ip;	/* network order */
	uint16_t src_port, dst_port;	/* host order */
	bool many;
	uint8_t type;
	uint32_t job;
	uint16_t rank, world;
	uint8_t dtype;
	uint32_t count;
	uint32_t slot;
	uint64_t n;
	uint32_t gap_us;
	uint64_t seed;
	uint32_t real_job, real_chunk, real_window;
	uint16_t real_world;
	const char *started_file, *stop_file;
};

static struct opts o = {
	.dtype = SHR_DTYPE_INT32, .count = 1, .n = 1, .gap_us = 300, .seed = 1,
};
static int raw_fd = -1;
static uint64_t rng_state;

/* splitmix64: the flood's shapes and the forged tokens */
static uint64_t
rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
pace(void)
{
	struct timespec ts = { 0, (long)o.gap_us * 1000 };

	if (o.gap_us != 0)
		nanosleep(&ts, NULL);
}

/* One IPv4/UDP datagram from sip:sport to dip:dport around the shouter message m. */
static void
send_msg(uint32_t sip, uint16_t sport, uint32_t dip, uint16_t dport,
	 const struct shr_proto_msg *m, const void *payload, size_t plen)
{
	static uint8_t frame[FRAME_MAX];
	struct iphdr *ip = (struct iphdr *)frame;
	struct udphdr *uh = (struct udphdr *)(ip + 1);
	uint8_t *sh = (uint8_t *)(uh + 1);
	size_t len = sizeof(*ip) + sizeof(*uh) + SHR_PROTO_HDR_LEN + plen;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = dip };

	memset(frame, 0, sizeof(*ip) + sizeof(*uh));
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = sip;
	ip->daddr = dip;
	ip->tot_len = htons((uint16_t)len);	/* the kernel fills id and checksum */
	uh->source = htons(sport);
	uh->dest = htons(dport);
	uh->len = htons((uint16_t)(len - sizeof(*ip)));
	uh->check = 0;				/* none (IPv4) */
	if (plen != 0)
		memcpy(sh + SHR_PROTO_HDR_LEN, payload, plen);
	shr_proto_build(sh, m, sh + SHR_PROTO_HDR_LEN, plen);
	if (sendto(raw_fd, frame, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len) {
		perror("faults_forge: sendto");
		exit(4);
	}
	pace();
}

static uint64_t
token_forged(void)
{
	uint64_t t;

	do
		t = rnd();
	while (t == 0);
	return t;
}

/* --- send: forged frames of one kind --- */

static int
do_send(void)
{
	static int32_t pl[MAX_ELEMS];
	struct shr_proto_msg m;
	uint64_t i;
	uint32_t k;

	for (k = 0; k < MAX_ELEMS; k++)
		pl[k] = 1000003 + (int32_t)k;	/* far from any worker's input */
	for (i = 0; i < o.n; i++) {
		bool pay = o.type == SHR_MSG_DATA || o.type == SHR_MSG_RESULT;

		m = (struct shr_proto_msg){
			.type = o.type, .dtype = o.dtype, .op = SHR_OP_SUM, .rank = o.rank,
			.world = o.world, .job = o.job, .slot = o.slot + (uint32_t)(i % 4),
			.count = pay ? o.count : 0, .tensor = 1, .token = token_forged(),
		};
		if (o.type == SHR_MSG_RESULT)
			m.rank = SHR_PROTO_RANK_ALL;
		if (o.type == SHR_MSG_ABORT) {
			m.rank = 0;
			m.aux = ECONNRESET;
		}
		send_msg(o.src_ip, o.src_port, o.dst_ip, o.dst_port, &m, pl,
			 pay ? (size_t)o.count * 4 : 0);
	}
	printf("sent %llu\n", (unsigned long long)o.n);
	return 0;
}

/* --- flood: JOINs of every shape --- */

enum shape {
	SH_NEW_JOB,	/* a new job id, world 2..9, window 0..512: pending (or refused) */
	SH_WORLD1,	/* a new job id of world 1: active at once, holds its window */
	SH_HUGE_WORLD,	/* world above the box's largest (1025..4096, 4097..65535) */
	SH_HUGE_WINDOW,	/* window 2^31-1 (clamped to the box's largest) */
	SH_BAD_CHUNK,	/* chunk 0, or far above the box's largest */
	SH_NO_NONCE,	/* token 0 */
	SH_SAME_NONCE,	/* the same job, rank and nonce again and again */
	SH_REAL_SHAPE,	/* the real job's id, with another world, chunk or dtype */
	SH_REAL_RANK,	/* the real job's rank 0, another nonce, from another address */
	SH_BAD_DTYPE,	/* dtype 9 */
	SH_COUNT
};

static const char *const shape_names[SH_COUNT] = {
	"new_job", "world1", "huge_world", "huge_window", "bad_chunk", "no_nonce",
	"same_nonce", "real_shape", "real_rank", "bad_dtype",
};

static uint32_t
flood_src(void)
{
	uint32_t h;

	if (!o.many)
		return o.src_ip;
	/* 198.18.0.0/15 (198.18.0.0 .. 198.19.255.255), not 198.18.0.0/24 */
	do
		h = (uint32_t)rnd() & 0x1ffffu;
	while (h < 256 || (h & 0xff) == 0 || (h & 0xff) == 255);
	return htonl((198u << 24 | 18u << 16) + h);
}

static uint32_t
new_job_id(void)
{
	uint32_t j;

	do
		j = 0x100000u + ((uint32_t)rnd() & 0x7fffffffu);
	while (j == o.real_job);
	return j;
}

static void
flood_one(enum shape s)
{
	struct shr_proto_msg m = {
		.type = SHR_MSG_JOIN, .dtype = SHR_DTYPE_INT32, .rank = 0, .world = 2,
		.job = new_job_id(), .slot = 0, .count = 256, .token = token_forged(),
	};
	uint64_t r = rnd();

	switch (s) {
	case SH_NEW_JOB:
		m.world = (uint16_t)(2 + r % 8);
		m.rank = (uint16_t)((r >> 8) % m.world);
		m.slot = (uint32_t)((r >> 16) % 513);
		m.count = (uint32_t)(1 + (r >> 32) % 256);
		break;
	case SH_WORLD1:
		m.world = 1;
		m.slot = (r & 1) ? 512 : 0;
		break;
	case SH_HUGE_WORLD:
		m.world = (uint16_t)((r & 1) ? 1025 + (r >> 8) % 3072 : 4097 + (r >> 8) % 61438);
		m.rank = (uint16_t)((r >> 32) % m.world);
		break;
	case SH_HUGE_WINDOW:
		m.slot = SHR_PROTO_SLOT_MASK;
		break;
	case SH_BAD_CHUNK:
		m.count = (r & 1) ? 0 : 100000 + (uint32_t)(r >> 40);
		break;
	case SH_NO_NONCE:
		m.token = 0;
		break;
	case SH_SAME_NONCE:
		m.job = o.real_job + 7777;
		m.token = 0x5a3e5a3e5a3e5a3eull;
		break;
	case SH_REAL_SHAPE:
		m.job = o.real_job;
		m.world = o.real_world;
		m.count = o.real_chunk;
		if (r % 3 == 0)
			m.world = (uint16_t)(o.real_world + 1);
		else if (r % 3 == 1)
			m.count = o.real_chunk == 1 ? 2 : o.real_chunk - 1;
		else
			m.dtype = SHR_DTYPE_FLOAT16;
		break;
	case SH_REAL_RANK:
		m.job = o.real_job;
		m.world = o.real_world;
		m.count = o.real_chunk;
		m.slot = o.real_window;
		break;
	case SH_BAD_DTYPE:
		m.dtype = 9;
		break;
	default:
		break;
	}
	send_msg(flood_src(), (uint16_t)(1024 + (r >> 48) % 60000), o.dst_ip, o.dst_port, &m,
		 NULL, 0);
}

static int
do_flood(void)
{
	uint64_t sent = 0, per[SH_COUNT] = { 0 };
	unsigned int s;
	FILE *f;

	for (;;) {
		if (sent >= o.n && (o.stop_file == NULL || access(o.stop_file, F_OK) == 0))
			break;
		s = (unsigned int)(sent % SH_COUNT);
		flood_one((enum shape)s);
		per[s]++;
		sent++;
		if (sent == 64 && o.started_file != NULL) {
			f = fopen(o.started_file, "w");
			if (f == NULL || fclose(f) != 0) {
				perror("faults_forge: started file");
				return 4;
			}
		}
	}
	printf("sent %llu", (unsigned long long)sent);
	for (s = 0; s < SH_COUNT; s++)
		printf(" %s=%llu", shape_names[s], (unsigned long long)per[s]);
	printf("\n");
	return 0;
}

/* --- options --- */

static void
usage(void)
{
	fprintf(stderr,
		"usage: faults_forge send --src IP:PORT --dst IP:PORT "
		"--type data|leave|result|abort\n"
		"                         --job J --rank R --world W [--dtype D] [--count C]\n"
		"                         [--slot S] [--n N] [--gap-us U] [--seed S]\n"
		"       faults_forge flood --dst IP:PORT --src one:IP|many --n N\n"
		"                          --real JOB:WORLD:CHUNK:WINDOW [--gap-us U] [--seed S]\n"
		"                          [--started-file P] [--stop-file P]\n");
}

static int
parse_addr(const char *s, uint32_t *ip, uint16_t *port)
{
	char buf[64], *colon;
	struct in_addr a;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (colon != NULL) {
		*colon = '\0';
		*port = (uint16_t)strtoul(colon + 1, NULL, 0);
	}
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	*ip = a.s_addr;
	return 0;
}

static int
parse_type(const char *s)
{
	static const struct { const char *n; uint8_t t; } types[] = {
		{ "data", SHR_MSG_DATA }, { "leave", SHR_MSG_LEAVE },
		{ "result", SHR_MSG_RESULT }, { "abort", SHR_MSG_ABORT },
	};
	unsigned int i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(s, types[i].n) == 0)
			return types[i].t;
	return -1;
}

static int
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "src", 1, 0, 's' }, { "dst", 1, 0, 'd' }, { "type", 1, 0, 't' },
		{ "job", 1, 0, 'j' }, { "rank", 1, 0, 'r' }, { "world", 1, 0, 'w' },
		{ "dtype", 1, 0, 'D' }, { "count", 1, 0, 'c' }, { "slot", 1, 0, 'S' },
		{ "n", 1, 0, 'n' }, { "gap-us", 1, 0, 'g' }, { "seed", 1, 0, 'e' },
		{ "real", 1, 0, 'R' }, { "started-file", 1, 0, 'a' }, { "stop-file", 1, 0, 'z' },
		{ 0, 0, 0, 0 }
	};
	unsigned int rj, rw, rc, rwin;
	int c, v;

	if (argc < 2)
		return -1;
	o.mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			if (strcmp(optarg, "many") == 0)
				o.many = true;
			else if (parse_addr(strncmp(optarg, "one:", 4) == 0 ? optarg + 4 : optarg,
					    &o.src_ip, &o.src_port) != 0)
				return -1;
			break;
		case 'd':
			if (parse_addr(optarg, &o.dst_ip, &o.dst_port) != 0)
				return -1;
			break;
		case 't':
			v = parse_type(optarg);
			if (v < 0)
				return -1;
			o.type = (uint8_t)v;
			break;
		case 'j': o.job = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r': o.rank = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 'w': o.world = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 'D':
			v = shr_proto_dtype_parse(optarg);
			if (v < 0)
				return -1;
			o.dtype = (uint8_t)v;
			break;
		case 'c': o.count = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'S': o.slot = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': o.n = strtoull(optarg, NULL, 0); break;
		case 'g': o.gap_us = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'e': o.seed = strtoull(optarg, NULL, 0); break;
		case 'R':
			if (sscanf(optarg, "%u:%u:%u:%u", &rj, &rw, &rc, &rwin) != 4 || rw == 0 ||
			    rw > SHR_PROTO_MAX_WORLD || rc == 0)
				return -1;
			o.real_job = rj;
			o.real_world = (uint16_t)rw;
			o.real_chunk = rc;
			o.real_window = rwin;
			break;
		case 'a': o.started_file = optarg; break;
		case 'z': o.stop_file = optarg; break;
		default:
			return -1;
		}
	}
	if (o.dst_ip == 0 || o.dst_port == 0 || optind != argc)
		return -1;
	if (strcmp(o.mode, "send") == 0)
		return o.src_ip != 0 && o.src_port != 0 && o.type != 0 && o.world != 0 &&
		       o.count <= MAX_ELEMS ? 0 : -1;
	if (strcmp(o.mode, "flood") == 0)
		return (o.many || o.src_ip != 0) && o.real_job != 0 ? 0 : -1;
	return -1;
}

int
main(int argc, char **argv)
{
	int rc;

	if (parse(argc, argv) != 0) {
		usage();
		return 2;
	}
	rng_state = o.seed ^ ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
	raw_fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (raw_fd < 0) {
		perror("faults_forge: raw socket (root?)");
		return 4;
	}
	rc = strcmp(o.mode, "send") == 0 ? do_send() : do_flood();
	close(raw_fd);
	return rc;
}
