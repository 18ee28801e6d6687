/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * shouter-udpping: the bare kernel-UDP floor of a path, to put the box's latency beside.
 *
 *   echo: answers requests on --bind with the same bytes. With --ranks N it answers only
 *         once it holds a request from each of N sources, then all N at once: a gather and
 *         a fan-out with nothing summed, the exchange an allreduce of N ranks makes through
 *         a box, done by the kernel's UDP alone.
 *   ping: sends --count requests of --size bytes, one at a time, each answered before the
 *         next, after --warmup untimed ones; prints udp_rtt_us_p50=, udp_rtt_us_p99=,
 *         udp_rtt_n= and udp_rtt_lost=. A request not answered within --timeout-ms is
 *         sent again (the same sequence number) and its round is not timed.
 *
 * A request is an 8-byte sequence number (little-endian) and zeros up to --size. The echo
 * keeps one pending request per source: one sent again replaces its earlier copy, so a lost
 * request or answer stalls one round, never the echo.
 *
 * Exit status: 0; 1 no answer (10 timeouts in a row); 2 usage; 4 socket error.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "shouter-udpping"
#define UP_MAX_RANKS 64
#define UP_MAX_SIZE 65507	/* the largest UDP payload over IPv4 */
#define UP_SEQ_LEN 8
#define UP_MAX_TIMEOUTS 10	/* in a row: the peer is gone */

struct up_conf {
	struct sockaddr_in addr;
	const char *ready_file;
	uint32_t ranks;
	uint32_t size;
	uint32_t count;
	uint32_t warmup;
	uint32_t timeout_ms;
};

/* one source's pending request at the echo */
struct up_pending {
	struct sockaddr_in src;
	uint32_t len;
	uint8_t buf[UP_MAX_SIZE];
};

static volatile sig_atomic_t up_quit;

static void
up_signal(int sig)
{
	(void)sig;
	up_quit = 1;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: " PROG " echo --bind A.B.C.D:PORT [--ranks N] [--ready-file PATH]\n"
		"       " PROG " ping --to A.B.C.D:PORT [--size B] [--count C] [--warmup W]\n"
		"                      [--timeout-ms T]\n"
		"The bare kernel-UDP floor of a path (no box, nothing summed).\n"
		"  echo         answer every request with the same bytes, until SIGINT or SIGTERM\n"
		"    --ranks N  answer only once a request from each of N sources is held, "
		"all N at\n"
		"               once (1..%u, default 1: a plain echo)\n"
		"    --bind A.B.C.D:0  any free port (the ready file says which)\n"
		"    --ready-file PATH  written once the socket is bound: its UDP port\n"
		"  ping         one request at a time, each answered before the next; prints\n"
		"               udp_rtt_us_p50=, udp_rtt_us_p99=, udp_rtt_n=, udp_rtt_lost=\n"
		"    --size B   request bytes, %u..%u (default 4096)\n"
		"    --count C  timed requests, 1..10000000 (default 1000)\n"
		"    --warmup W untimed requests first (default 20)\n"
		"    --timeout-ms T  send a request again after T ms unanswered (1..60000,\n"
		"               default 1000); its round is not timed; %u in a row: exit 1\n"
		"Exit status: 0; 1 no answer; 2 bad option; 4 socket error.\n",
		UP_MAX_RANKS, UP_SEQ_LEN, UP_MAX_SIZE, UP_MAX_TIMEOUTS);
}

static int
parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, PROG ": %s: an integer in %u..%u, not '%s'\n", opt, lo, hi, s);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static int
parse_addr(const char *opt, const char *s, uint32_t port_lo, struct sockaddr_in *a)
{
	char host[INET_ADDRSTRLEN];
	const char *colon = strrchr(s, ':');
	uint32_t port;
	size_t n;

	if (colon == NULL || (n = (size_t)(colon - s)) == 0 || n >= sizeof(host)) {
		fprintf(stderr, PROG ": %s: A.B.C.D:PORT, not '%s'\n", opt, s);
		return -EINVAL;
	}
	memcpy(host, s, n);
	host[n] = '\0';
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &a->sin_addr) != 1) {
		fprintf(stderr, PROG ": %s: A.B.C.D:PORT, not '%s'\n", opt, s);
		return -EINVAL;
	}
	if (parse_u32(opt, colon + 1, port_lo, 65535, &port) < 0)
		return -EINVAL;
	a->sin_port = htons((uint16_t)port);
	return 0;
}

static uint64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const char *
opt_name(const struct option *o, int val)
{
	for (; o->name != NULL; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

static int
same_src(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

static int
run_echo(const struct up_conf *c, int s)
{
	struct up_pending *p;
	struct sockaddr_in src;
	socklen_t sl;
	uint32_t held = 0, i;
	ssize_t n;

	if (bind(s, (const struct sockaddr *)&c->addr, sizeof(c->addr)) < 0) {
		fprintf(stderr, PROG ": bind: %s\n", strerror(errno));
		return 4;
	}
	p = calloc(c->ranks, sizeof(*p));
	if (p == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return 4;
	}
	if (c->ready_file != NULL) {
		FILE *f;
		int bad;

		sl = sizeof(src);
		f = fopen(c->ready_file, "w");
		bad = f == NULL || getsockname(s, (struct sockaddr *)&src, &sl) < 0 ||
		      fprintf(f, "%u\n", ntohs(src.sin_port)) < 0;
		if (f != NULL && fclose(f) != 0)
			bad = 1;
		if (bad) {
			fprintf(stderr, PROG ": %s: %s\n", c->ready_file, strerror(errno));
			free(p);
			return 4;
		}
	}
	while (!up_quit) {
		sl = sizeof(src);
		/* into the next free entry; moved if the source already holds one */
		n = recvfrom(s, p[held].buf, UP_MAX_SIZE, 0, (struct sockaddr *)&src, &sl);
		if (n < 0 && errno != EINTR && errno != ECONNREFUSED) {
			fprintf(stderr, PROG ": recvfrom: %s\n", strerror(errno));
			free(p);
			return 4;
		}
		/* EINTR: the signal (the loop tests the flag); ECONNREFUSED: a source that
		 * left before its answer */
		if (n < 0)
			continue;
		for (i = 0; i < held && !same_src(&p[i].src, &src); i++)
			;
		if (i < held)	/* sent again: it replaces its earlier copy */
			memcpy(p[i].buf, p[held].buf, (size_t)n);
		p[i].src = src;
		p[i].len = (uint32_t)n;
		if (i == held)
			held++;
		if (held < c->ranks)
			continue;
		for (i = 0; i < held; i++)
			sendto(s, p[i].buf, p[i].len, 0, (const struct sockaddr *)&p[i].src,
			       sizeof(p[i].src));
		held = 0;
	}
	free(p);
	return 0;
}

static int
run_ping(const struct up_conf *c, int s)
{
	struct timeval tv = {
		.tv_sec = c->timeout_ms / 1000,
		.tv_usec = (c->timeout_ms % 1000) * 1000,
	};
	uint32_t total = c->warmup + c->count, timed = 0, lost = 0, miss = 0, i;
	uint8_t *req, *rep;
	uint64_t *rtt, t0, seq;
	int rc = 4;
	ssize_t n;

	req = calloc(1, c->size);
	rep = malloc(UP_MAX_SIZE);
	rtt = malloc(sizeof(*rtt) * c->count);
	if (req == NULL || rep == NULL || rtt == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	if (connect(s, (const struct sockaddr *)&c->addr, sizeof(c->addr)) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(errno));
		goto out;
	}
	for (i = 0; i < total && !up_quit; i++) {
		int again = 0;

		seq = i;
		memcpy(req, &seq, UP_SEQ_LEN);	/* little-endian on the hosts this runs on */
		t0 = now_ns();
		for (;;) {
			if (send(s, req, c->size, 0) < 0 && errno != ECONNREFUSED) {
				fprintf(stderr, PROG ": send: %s\n", strerror(errno));
				goto out;
			}
			do
				n = recv(s, rep, UP_MAX_SIZE, 0);
			while (n >= 0 && (n != (ssize_t)c->size || memcmp(rep, req, UP_SEQ_LEN)));
			if (n >= 0)
				break;
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNREFUSED &&
			    errno != EINTR) {
				fprintf(stderr, PROG ": recv: %s\n", strerror(errno));
				goto out;
			}
			if (up_quit)
				break;
			again = 1;
			if (++miss == UP_MAX_TIMEOUTS) {
				fprintf(stderr, PROG ": no answer from the echo (%u tries in a "
					"row, %u ms each, or refused)\n", miss, c->timeout_ms);
				rc = 1;
				goto out;
			}
		}
		if (n < 0)
			break;
		miss = 0;
		lost += again;
		if (i >= c->warmup && !again)
			rtt[timed++] = now_ns() - t0;
	}
	if (timed == 0) {
		fprintf(stderr, PROG ": no round timed\n");
		rc = 1;
		goto out;
	}
	qsort(rtt, timed, sizeof(*rtt), cmp_u64);
	printf("udp_rtt_us_p50=%.1f\n", (double)rtt[timed / 2] / 1000.0);
	printf("udp_rtt_us_p99=%.1f\n", (double)rtt[(uint64_t)timed * 99 / 100] / 1000.0);
	printf("udp_rtt_n=%u udp_rtt_lost=%u\n", timed, lost);
	rc = 0;
out:
	free(rtt);
	free(rep);
	free(req);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"bind", required_argument, NULL, 'b'},
		{"to", required_argument, NULL, 't'},
		{"ranks", required_argument, NULL, 'r'},
		{"ready-file", required_argument, NULL, 'f'},
		{"size", required_argument, NULL, 's'},
		{"count", required_argument, NULL, 'c'},
		{"warmup", required_argument, NULL, 'w'},
		{"timeout-ms", required_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct up_conf c = {
		.ranks = 1, .size = 4096, .count = 1000, .warmup = 20, .timeout_ms = 1000,
	};
	struct sigaction sa = { .sa_handler = up_signal };
	const char *mode, *addr = NULL, *addr_opt;
	int echo, opt, s, rc;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 2 || (strcmp(argv[1], "echo") && strcmp(argv[1], "ping"))) {
		usage(stderr);
		return 2;
	}
	mode = argv[1];
	echo = !strcmp(mode, "echo");
	optind = 2;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		rc = 0;
		if (strchr(echo ? "tscwT" : "brf", opt) != NULL) {
			fprintf(stderr, PROG ": --%s is an option of %s\n", opt_name(longopts, opt),
				echo ? "ping" : "echo");
			return 2;
		}
		switch (opt) {
		case 'b':
		case 't':
			addr = optarg;
			break;
		case 'r':
			rc = parse_u32("--ranks", optarg, 1, UP_MAX_RANKS, &c.ranks);
			break;
		case 'f':
			c.ready_file = optarg;
			break;
		case 's':
			rc = parse_u32("--size", optarg, UP_SEQ_LEN, UP_MAX_SIZE, &c.size);
			break;
		case 'c':
			rc = parse_u32("--count", optarg, 1, 10000000, &c.count);
			break;
		case 'w':
			rc = parse_u32("--warmup", optarg, 0, 10000000, &c.warmup);
			break;
		case 'T':
			rc = parse_u32("--timeout-ms", optarg, 1, 60000, &c.timeout_ms);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (rc < 0)
			return 2;
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	addr_opt = echo ? "--bind" : "--to";
	if (addr == NULL) {
		fprintf(stderr, PROG ": %s needs %s A.B.C.D:PORT\n", mode, addr_opt);
		return 2;
	}
	if (parse_addr(addr_opt, addr, echo ? 0 : 1, &c.addr) < 0)
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0) {
		fprintf(stderr, PROG ": socket: %s\n", strerror(errno));
		return 4;
	}
	rc = echo ? run_echo(&c, s) : run_ping(&c, s);
	close(s);
	return rc;
}
