/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * stub_agg: a stand-in aggregator on a kernel UDP socket (127.0.0.1 by default, no root) that
 * answers shouter-worker's JOIN at once and every DATA with a RESULT, right or wrong on
 * purpose, so that a test can check the checker: shouter-worker must exit 1 and name the
 * first wrong element (worker_check.sh). It speaks the wire format through
 * shr_proto_build() / shr_proto_validate() and struct shr_proto_msg, with the incarnation
 * handshake of lib/proto/shr_proto.h: a JOIN carries the member's nonce in token; the
 * JOIN_ACK carries the incarnation's token in token and echoes the nonce in offset; every
 * later message carries the token, and DATA or LEAVE with another token is dropped.
 *
 * It never sums: each DATA is answered by itself, which is the right result for a world of
 * one. --fault picks the wrong answer:
 *   none      the DATA's own elements (right when --world is 1)
 *   offby1    the same, with element --index (of every tensor that has it) plus one; with
 *             --tensors N, of the first N such tensors only (the rest are answered right)
 *   stale     the elements of the slot's previous round of the same tensor (the first round
 *             of each slot is right): what a box that resends an old copy would send
 *   one-rank  the DATA's own elements whatever the world: with --world 2 and only rank 0
 *             running, one rank's data instead of the sum
 * The JOIN_ACK grants the window and chunk asked for (window 128 if the JOIN asks for 0),
 * one lane, at once (no EINPROGRESS: it does not wait for the other ranks). The job is the
 * first JOIN's (job, world, dtype); dtypes of 4 bytes only. One incarnation: a JOIN with
 * another nonce rebinds its rank under the same token.
 *
 * Two more misbehaviours, for the worker's other exits: --join-status N answers every JOIN
 * with a JOIN_ACK of status N (a refusal: nobody joins), and --no-leave-ack counts every
 * LEAVE but never answers one (it then runs until SIGTERM/SIGINT or --idle-ms, since the
 * member keeps asking).
 *
 * On exit (every rank that joined has left, SIGTERM/SIGINT, or --idle-ms without a datagram)
 * it prints, for each tensor it corrupted (it compares what it sent with the DATA, so only
 * where the DATA is the right answer, as with --world 1), one line
 *   stub_agg: tensor T: B of N elements wrong, first at index K
 * and a summary line "stub_agg: joins=.. data=.. results=.. bad_token=.. leaves=..".
 * Exit 0, 1 when it stopped for --idle-ms, 2 on usage errors, 4 on socket errors.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <shr_proto.h>

#define PROG "stub_agg"
#define STUB_MAX_MSG 65536
#define STUB_DEF_WINDOW 128
#define STUB_MAX_WINDOW 4096
#define STUB_MAX_CHUNK 2048

enum stub_fault { FAULT_NONE, FAULT_OFFBY1, FAULT_STALE, FAULT_ONE_RANK };

/* A round as the endpoint names it. */
struct stub_ident {
	bool valid;
	uint8_t ver;
	uint32_t tensor;
	uint32_t step;
	uint64_t offset;
	uint32_t count;
};

/* Per slot: the current round (its DATA and the answer sent) and the previous round's DATA. */
struct stub_slot {
	struct stub_ident cur, prev;
	uint8_t *cur_data;
	uint8_t *prev_data;
	uint8_t *answer;
};

/*
 * Per tensor id (one per call of the worker, whose tensor ids count its calls): where it
 * starts in the member's stream (DATA offsets count elements across every call; its first
 * DATA is its first chunk) and what was corrupted, by index in the tensor.
 */
struct stub_tensor {
	bool seen;
	uint64_t base;		/* offset of its first element in the stream */
	uint64_t elems;		/* highest index + count seen */
	uint64_t bad;
	uint64_t first_bad;
};

struct stub_member {
	bool joined;
	bool left;
	uint64_t nonce;
	struct sockaddr_in addr;
};

struct stub {
	enum stub_fault fault;
	uint64_t index;		/* offby1: the element */
	uint64_t fault_left;	/* offby1: tensors still to corrupt (--tensors) */
	uint32_t idle_ms;
	uint32_t join_status;	/* non-zero: every JOIN refused with it */
	bool no_leave_ack;
	int fd;

	bool have_job;
	uint32_t job;
	uint16_t world;
	uint8_t dtype;
	uint32_t window;
	uint32_t chunk;
	uint64_t token;
	struct stub_member *members;
	struct stub_slot *slots;
	struct stub_tensor *tensors;
	uint32_t ntensors;

	uint64_t joins, data, results, bad_token, dropped, leaves, leave_msgs, refused;
	uint8_t rx[STUB_MAX_MSG];
	uint8_t tx[STUB_MAX_MSG];
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [--ip A.B.C.D] [--port P] [--fault none|offby1|stale|one-rank]\n"
"               [--index K] [--tensors N] [--idle-ms N] [--join-status ERRNO]\n"
"               [--no-leave-ack]\n"
"A stand-in aggregator that answers JOIN and every DATA at once, with a wrong result on\n"
"purpose (see the comment at the top of stub_agg.c). --port 0 (default) binds any free\n"
"port; the first line of stdout is 'stub_agg: listening on IP:PORT'.\n");
}

static int
send_to(struct stub *s, const struct sockaddr_in *to, size_t len)
{
	ssize_t n = sendto(s->fd, s->tx, len, 0, (const struct sockaddr *)to, sizeof(*to));

	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS &&
	    errno != ECONNREFUSED) {
		fprintf(stderr, PROG ": sendto: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

static uint64_t
draw_token(void)
{
	uint64_t t = 0;

	while (t == 0) {
		if (getrandom(&t, sizeof(t), 0) != (ssize_t)sizeof(t))
			t = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^
			    0x9e3779b97f4a7c15ull;
	}
	return t;
}

static int
job_setup(struct stub *s, const struct shr_proto_msg *m)
{
	uint32_t i, bytes;

	s->job = m->job;
	s->world = m->world;
	s->dtype = m->dtype;
	s->window = m->slot == 0 ? STUB_DEF_WINDOW : m->slot;
	s->chunk = m->count;
	if (s->window > STUB_MAX_WINDOW)
		s->window = STUB_MAX_WINDOW;
	if (s->chunk == 0 || s->chunk > STUB_MAX_CHUNK)
		s->chunk = STUB_MAX_CHUNK;
	bytes = s->chunk * 4;
	s->token = draw_token();
	s->members = calloc(s->world, sizeof(*s->members));
	s->slots = calloc(s->window, sizeof(*s->slots));
	if (s->members == NULL || s->slots == NULL)
		return -ENOMEM;
	for (i = 0; i < s->window; i++) {
		s->slots[i].cur_data = malloc(bytes);
		s->slots[i].prev_data = malloc(bytes);
		s->slots[i].answer = malloc(bytes);
		if (s->slots[i].cur_data == NULL || s->slots[i].prev_data == NULL ||
		    s->slots[i].answer == NULL)
			return -ENOMEM;
	}
	s->have_job = true;
	printf(PROG ": job %u: world %u, dtype %s, window %u, chunk %u, fault %s\n", s->job,
	       s->world, shr_proto_dtype_str(s->dtype), s->window, s->chunk,
	       s->fault == FAULT_NONE ? "none" : s->fault == FAULT_OFFBY1 ? "offby1" :
	       s->fault == FAULT_STALE ? "stale" : "one-rank");
	fflush(stdout);
	return 0;
}

static int
on_join(struct stub *s, const struct shr_proto_msg *m, const struct sockaddr_in *from)
{
	struct shr_proto_msg a;
	int rc;

	if (m->token == 0 || m->world == 0 || m->world > SHR_PROTO_MAX_WORLD ||
	    m->rank >= m->world || shr_proto_dtype_size(m->dtype) != 4) {
		s->dropped++;
		return 0;
	}
	if (!s->have_job) {
		rc = job_setup(s, m);
		if (rc < 0)
			return rc;
	}
	if (m->job != s->job || m->world != s->world || m->dtype != s->dtype) {
		s->dropped++;
		return 0;
	}
	memset(&a, 0, sizeof(a));
	if (s->join_status != 0) {
		s->refused++;
		a.type = SHR_MSG_JOIN_ACK;
		a.dtype = s->dtype;
		a.rank = m->rank;
		a.world = s->world;
		a.job = s->job;
		a.offset = m->token;
		a.aux = s->join_status;
		shr_proto_build(s->tx, &a, NULL, 0);
		return send_to(s, from, SHR_PROTO_HDR_LEN);
	}
	if (!s->members[m->rank].joined)
		s->joins++;
	s->members[m->rank].joined = true;
	s->members[m->rank].left = false;
	s->members[m->rank].nonce = m->token;
	s->members[m->rank].addr = *from;

	a.type = SHR_MSG_JOIN_ACK;
	a.dtype = s->dtype;
	a.rank = m->rank;
	a.world = s->world;
	a.job = s->job;
	a.slot = s->window;
	a.count = s->chunk;
	a.tensor = 1;			/* lanes */
	a.offset = m->token;		/* the JOIN's nonce, echoed */
	a.token = s->token;		/* the incarnation's token */
	a.aux = 0;
	shr_proto_build(s->tx, &a, NULL, 0);
	return send_to(s, from, SHR_PROTO_HDR_LEN);
}

static bool
ident_eq(const struct stub_ident *a, const struct shr_proto_msg *m)
{
	return a->valid && a->ver == m->ver && a->tensor == m->tensor && a->step == m->step &&
	       a->offset == m->offset && a->count == m->count;
}

static struct stub_tensor *
tensor_get(struct stub *s, uint32_t id)
{
	if (id >= s->ntensors) {
		uint32_t n = id + 64;
		struct stub_tensor *t = realloc(s->tensors, n * sizeof(*t));

		if (t == NULL)
			return NULL;
		memset(t + s->ntensors, 0, (n - s->ntensors) * sizeof(*t));
		s->tensors = t;
		s->ntensors = n;
	}
	return &s->tensors[id];
}

/* Work out the answer to a new round in slot sl (its DATA is in cur_data). */
static int
make_answer(struct stub *s, struct stub_slot *sl, const struct shr_proto_msg *m)
{
	size_t bytes = (size_t)m->count * 4;
	struct stub_tensor *t;
	uint32_t i, got, want;
	uint64_t off;		/* index in the tensor of the DATA's first element */

	t = tensor_get(s, m->tensor);
	if (t == NULL)
		return -ENOMEM;
	if (!t->seen) {
		t->seen = true;
		t->base = m->offset;
	}
	off = m->offset - t->base;
	memcpy(sl->answer, sl->cur_data, bytes);
	if (s->fault == FAULT_OFFBY1 && s->index >= off && s->index - off < m->count &&
	    s->fault_left > 0) {
		uint8_t *p = sl->answer + (s->index - off) * 4;

		s->fault_left--;
		if (s->dtype == SHR_DTYPE_FLOAT32) {
			float f;

			memcpy(&f, p, 4);
			f += 1.0f;
			memcpy(p, &f, 4);
		} else {
			memcpy(&got, p, 4);
			got += 1;
			memcpy(p, &got, 4);
		}
	} else if (s->fault == FAULT_STALE && sl->prev.valid && sl->prev.tensor == m->tensor &&
		   sl->prev.count == m->count) {
		memcpy(sl->answer, sl->prev_data, bytes);
	}
	if (off + m->count > t->elems)
		t->elems = off + m->count;
	for (i = 0; i < m->count; i++) {
		memcpy(&got, sl->answer + 4 * (size_t)i, 4);
		memcpy(&want, sl->cur_data + 4 * (size_t)i, 4);
		if (got == want)
			continue;
		if (t->bad++ == 0 || off + i < t->first_bad)
			t->first_bad = off + i;
	}
	return 0;
}

static int
on_data(struct stub *s, const struct shr_proto_msg *m, const uint8_t *payload)
{
	struct stub_slot *sl;
	struct shr_proto_msg r;
	size_t bytes = (size_t)m->count * 4;
	int rc;

	if (!s->have_job || m->job != s->job || m->rank >= s->world ||
	    !s->members[m->rank].joined || m->dtype != s->dtype || m->slot >= s->window ||
	    m->count == 0 || m->count > s->chunk) {
		s->dropped++;
		return 0;
	}
	if (m->token != s->token) {
		s->bad_token++;
		return 0;
	}
	s->data++;
	sl = &s->slots[m->slot];
	if (ident_eq(&sl->prev, m)) {
		s->dropped++;	/* a late copy of the slot's previous round: moved on */
		return 0;
	}
	if (!ident_eq(&sl->cur, m)) {
		/* a new round in this slot: the current one becomes the previous one */
		uint8_t *t = sl->prev_data;

		sl->prev = sl->cur;
		sl->prev_data = sl->cur_data;
		sl->cur_data = t;
		sl->cur.valid = true;
		sl->cur.ver = m->ver;
		sl->cur.tensor = m->tensor;
		sl->cur.step = m->step;
		sl->cur.offset = m->offset;
		sl->cur.count = m->count;
		memcpy(sl->cur_data, payload, bytes);
		rc = make_answer(s, sl, m);
		if (rc < 0)
			return rc;
	}
	/* else a retransmission of the current round: the same answer again */

	r = *m;
	r.type = SHR_MSG_RESULT;
	r.rank = SHR_PROTO_RANK_ALL;
	r.world = s->world;
	r.flags &= SHR_FLAG_LAST;
	r.aux = 0;
	r.feedback = 0;
	r.token = s->token;
	memcpy(s->tx + SHR_PROTO_HDR_LEN, sl->answer, bytes);
	shr_proto_build(s->tx, &r, s->tx + SHR_PROTO_HDR_LEN, bytes);
	s->results++;
	return send_to(s, &s->members[m->rank].addr, SHR_PROTO_HDR_LEN + bytes);
}

static int
on_leave(struct stub *s, const struct shr_proto_msg *m, const struct sockaddr_in *from)
{
	struct shr_proto_msg a;

	if (!s->have_job || m->job != s->job || m->rank >= s->world ||
	    !s->members[m->rank].joined) {
		s->dropped++;
		return 0;
	}
	if (m->token != s->token) {
		s->bad_token++;
		return 0;
	}
	s->leave_msgs++;
	if (!s->members[m->rank].left)
		s->leaves++;
	s->members[m->rank].left = true;
	if (s->no_leave_ack)
		return 0;
	memset(&a, 0, sizeof(a));
	a.type = SHR_MSG_LEAVE_ACK;
	a.dtype = s->dtype;
	a.rank = m->rank;
	a.world = s->world;
	a.job = s->job;
	a.token = s->token;
	shr_proto_build(s->tx, &a, NULL, 0);
	return send_to(s, from, SHR_PROTO_HDR_LEN);
}

/* Every rank that joined has left. */
static bool
all_left(const struct stub *s)
{
	uint32_t r, joined = 0;

	if (!s->have_job || s->no_leave_ack)
		return false;
	for (r = 0; r < s->world; r++) {
		if (s->members[r].joined && !s->members[r].left)
			return false;
		joined += s->members[r].joined;
	}
	return joined > 0;
}

static void
stub_free(struct stub *s)
{
	uint32_t i;

	for (i = 0; s->slots != NULL && i < s->window; i++) {
		free(s->slots[i].cur_data);
		free(s->slots[i].prev_data);
		free(s->slots[i].answer);
	}
	free(s->slots);
	free(s->members);
	free(s->tensors);
}

static void
report(const struct stub *s)
{
	uint32_t i;

	for (i = 0; i < s->ntensors; i++) {
		const struct stub_tensor *t = &s->tensors[i];

		if (t->bad > 0)
			printf(PROG ": tensor %u: %" PRIu64 " of %" PRIu64 " elements wrong, "
			       "first at index %" PRIu64 "\n", i, t->bad, t->elems, t->first_bad);
	}
	printf(PROG ": joins=%" PRIu64 " data=%" PRIu64 " results=%" PRIu64 " bad_token=%"
	       PRIu64 " dropped=%" PRIu64 " leaves=%" PRIu64 " leave_msgs=%" PRIu64
	       " refused=%" PRIu64 "\n", s->joins, s->data, s->results, s->bad_token,
	       s->dropped, s->leaves, s->leave_msgs, s->refused);
	fflush(stdout);
}

static int
parse_u64(const char *opt, const char *v, uint64_t max, uint64_t *out)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno != 0 || *v == '\0' || *v == '-' || *end != '\0' || x > max) {
		fprintf(stderr, PROG ": %s: expected an integer in 0..%" PRIu64 ", got '%s'\n",
			opt, max, v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ip", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "fault", required_argument, NULL, 'f' },
		{ "index", required_argument, NULL, 'i' },
		{ "tensors", required_argument, NULL, 'n' },
		{ "idle-ms", required_argument, NULL, 't' },
		{ "join-status", required_argument, NULL, 'j' },
		{ "no-leave-ack", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	struct sigaction sa = { .sa_handler = on_signal };
	static struct stub s;
	uint64_t v, idle = 0;
	int o, rc = 0, code = 0;
	char ip[INET_ADDRSTRLEN];

	s.idle_ms = 30000;
	s.fault_left = UINT64_MAX;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'a':
			if (inet_pton(AF_INET, optarg, &addr.sin_addr) != 1) {
				fprintf(stderr, PROG ": --ip: expected A.B.C.D, got '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'p':
			rc = parse_u64("--port", optarg, 65535, &v);
			addr.sin_port = htons((uint16_t)v);
			break;
		case 'f':
			if (strcmp(optarg, "none") == 0) {
				s.fault = FAULT_NONE;
			} else if (strcmp(optarg, "offby1") == 0) {
				s.fault = FAULT_OFFBY1;
			} else if (strcmp(optarg, "stale") == 0) {
				s.fault = FAULT_STALE;
			} else if (strcmp(optarg, "one-rank") == 0) {
				s.fault = FAULT_ONE_RANK;
			} else {
				fprintf(stderr, PROG ": --fault: none, offby1, stale or one-rank, "
					"got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'i':
			rc = parse_u64("--index", optarg, UINT64_MAX, &s.index);
			break;
		case 'n':
			rc = parse_u64("--tensors", optarg, UINT64_MAX, &s.fault_left);
			break;
		case 't':
			rc = parse_u64("--idle-ms", optarg, 86400000, &v);
			s.idle_ms = (uint32_t)v;
			break;
		case 'j':
			rc = parse_u64("--join-status", optarg, 65535, &v);
			s.join_status = (uint32_t)v;
			break;
		case 'L':
			s.no_leave_ack = true;
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
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	s.fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (s.fd < 0 || bind(s.fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    getsockname(s.fd, (struct sockaddr *)&addr, &alen) != 0) {
		fprintf(stderr, PROG ": cannot bind a UDP socket: %s\n", strerror(errno));
		return 4;
	}
	inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof(ip));
	printf(PROG ": listening on %s:%u\n", ip, ntohs(addr.sin_port));
	fflush(stdout);

	while (!stop && !all_left(&s)) {
		struct pollfd pfd = { .fd = s.fd, .events = POLLIN };
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		struct shr_proto_msg m;
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0) {
			idle += 100;
			if (idle >= s.idle_ms) {
				fprintf(stderr, PROG ": no datagram for %u ms: giving up\n",
					s.idle_ms);
				code = 1;
				break;
			}
			continue;
		}
		idle = 0;
		n = recvfrom(s.fd, s.rx, sizeof(s.rx), 0, (struct sockaddr *)&from, &flen);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, PROG ": recvfrom: %s\n", strerror(errno));
			code = 4;
			break;
		}
		if (shr_proto_validate(s.rx, (size_t)n, &m) != SHR_PROTO_OK) {
			s.dropped++;
			continue;
		}
		switch (m.type) {
		case SHR_MSG_JOIN:
			rc = on_join(&s, &m, &from);
			break;
		case SHR_MSG_DATA:
			rc = on_data(&s, &m, s.rx + SHR_PROTO_HDR_LEN);
			break;
		case SHR_MSG_LEAVE:
			rc = on_leave(&s, &m, &from);
			break;
		default:
			s.dropped++;
			rc = 0;
			break;
		}
		if (rc < 0) {
			fprintf(stderr, PROG ": %s\n", strerror(-rc));
			code = 4;
			break;
		}
	}
	report(&s);
	close(s.fd);
	stub_free(&s);
	return code;
}
