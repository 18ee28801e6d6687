/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * faults_badpkt: send a running shouter-agg one frame of every malformed kind, over kernel
 * UDP sockets, and say how many of each reason it sent.
 *
 * Two jobs are involved:
 * - job1, the victim: a real job of shouter-worker ranks that keeps running. Frames that are
 *   refused before the job's bindings are looked at (truncated, bad magic/version/type/
 *   dtype/op/length/CRC, unknown job, rank out of range, a rank spoofed from our address, a
 *   spoofed JOIN or LEAVE) go to it from a stranger socket.
 * - job2, our own: two sockets of this program join it as ranks 0 and 1, so that frames can
 *   come from a bound address. The refusals that need one (wrong dtype for the job, count
 *   above the job's chunk, slot outside the window, out of step with the open round) are
 *   sent there, in a known state: rank 0 opens a round, rank 1 sends the refused variants,
 *   then its real contribution; both must get the exact sum back. Then rank 1 answers the
 *   next round out of step (another tensor): the box aborts the job (EPROTO, naming rank 1)
 *   and both ranks must get that ABORT (play2()).
 *
 * Also one datagram to a UDP port outside the aggregator's lanes (counted as bad_port, not
 * as a reason). The replies the aggregator owes the stranger are checked: JOIN_ACK with
 * EADDRINUSE for a spoofed JOIN, JOIN_ACK EINVAL for a world mismatch, LEAVE_ACK ENOENT for
 * an unknown job.
 *
 * Last line on stdout: "expect reject_short=N ... bad_port=1" (telemetry key=count).
 * Exit 0 if job2 behaved (exact sums, acks), 1 if not, 2 on bad usage, 4 on socket errors.
 */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <shr_proto.h>

#define J2_WORLD 2
#define J2_WINDOW 4
#define J2_CHUNK 64
#define MAX_MSG (SHR_PROTO_HDR_LEN + 4 * 4096)

struct opts {
	uint32_t agg_ip;	/* network order */
	uint16_t port;
	uint32_t local_ip;	/* network order */
	uint32_t job1;
	uint16_t world1;
	uint8_t dtype1;
	uint32_t chunk1;
	uint32_t window1;	/* the window job1's ranks asked for (a JOIN must repeat it) */
	uint32_t job2;
	uint32_t gap_us;
};

static struct opts o = {
	.port = SHR_PROTO_UDP_PORT, .chunk1 = 256, .window1 = 128, .gap_us = 300,
};
static uint16_t lanes = 1;
static uint64_t tok2;	/* job 2's incarnation token, from its JOIN_ACK */
static uint64_t sent[SHR_PROTO_REASON_MAX];
static uint64_t sent_bad_port;
static int failures;

#define FAIL(...) do { fprintf(stderr, "faults_badpkt: FAIL: " __VA_ARGS__); \
		       fputc('\n', stderr); failures++; } while (0)

static int
sock_new(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = o.local_ip };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("faults_badpkt: socket/bind");
		exit(4);
	}
	return fd;
}

static void
send_raw(int fd, uint16_t port, const void *buf, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = o.agg_ip,
				 .sin_port = htons(port) };
	struct timespec ts = { 0, (long)o.gap_us * 1000 };

	if (sendto(fd, buf, len, 0, (struct sockaddr *)&a, sizeof(a)) != (ssize_t)len) {
		perror("faults_badpkt: sendto");
		exit(4);
	}
	/* paced: a burst must not overflow the aggregator's receive ring (that is not a test) */
	nanosleep(&ts, NULL);
}

/* Send a frame that must be refused for reason r. */
static void
send_bad(int fd, enum shr_proto_reason r, const void *buf, size_t len, uint32_t slot)
{
	send_raw(fd, (uint16_t)(o.port + slot % lanes), buf, len);
	sent[r]++;
}

/* A message with a valid CRC; payload of count elements of esize bytes (values from seed). */
static size_t
build(uint8_t *buf, const struct shr_proto_msg *m, size_t plen, int32_t seed)
{
	struct shr_proto_msg x = *m;
	size_t i;

	for (i = 0; i + 4 <= plen; i += 4) {
		int32_t v = seed + (int32_t)(i / 4) * 3;

		memcpy(buf + SHR_PROTO_HDR_LEN + i, &v, 4);	/* little-endian host */
	}
	/* a JOIN carries the rank's nonce; job 2's DATA and LEAVE its token */
	if (x.token == 0 && x.type == SHR_MSG_JOIN)
		x.token = 0x6261647062747374ull ^ (x.rank + 1u) ^ ((uint64_t)x.job << 20);
	else if (x.token == 0 && x.job == o.job2)
		x.token = tok2;
	shr_proto_build(buf, &x, buf + SHR_PROTO_HDR_LEN, plen);
	return SHR_PROTO_HDR_LEN + plen;
}

/* Recompute the CRC of a message patched after shr_proto_build(). */
static void
recrc(uint8_t *buf, size_t len)
{
	uint32_t crc = shr_crc32c(0, buf, SHR_PROTO_CRC_SPAN);

	if (len > SHR_PROTO_HDR_LEN)
		crc = shr_crc32c(crc, buf + SHR_PROTO_HDR_LEN, len - SHR_PROTO_HDR_LEN);
	crc = htonl(crc);
	memcpy(buf + SHR_PROTO_CRC_SPAN, &crc, 4);
}

static struct shr_proto_msg
data1(void)
{
	struct shr_proto_msg m = {
		.type = SHR_MSG_DATA, .dtype = o.dtype1, .op = SHR_OP_SUM, .rank = 0,
		.world = o.world1, .job = o.job1, .slot = 0, .count = 1, .tensor = 1,
	};
	return m;
}

/* Receive one message on fd within ms; 0 and *m filled, or -1. */
static int
recv_msg(int fd, int ms, struct shr_proto_msg *m, uint8_t *buf)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return -1;
	n = recv(fd, buf, MAX_MSG, 0);
	if (n < 0 || shr_proto_validate(buf, (size_t)n, m) != SHR_PROTO_OK)
		return -1;
	return 0;
}

/* Wait for a message of type on fd (others are skipped); 0 or -1. */
static int
await(int fd, uint8_t type, int ms, struct shr_proto_msg *m, uint8_t *buf)
{
	int i;

	for (i = 0; i < ms / 50; i++)
		if (recv_msg(fd, 50, m, buf) == 0 && m->type == type)
			return 0;
	return -1;
}

/* Frames refused before any binding is looked at, and those aimed at job1's bindings. */
static void
stranger_to_job1(int x)
{
	static const size_t cuts[] = { 0, 2, 3, 4, 5, 6, 8, 12, 16, 20, 22, 24, 28, 32, 40, 44,
				       47 };
	uint8_t buf[MAX_MSG];
	struct shr_proto_msg m;
	size_t len, i;
	uint32_t t;
	static const uint8_t bad_types[] = { 0, SHR_MSG_TYPE_MAX, 255 };
	static const uint8_t box_types[] = { SHR_MSG_RESULT, SHR_MSG_JOIN_ACK,
					     SHR_MSG_LEAVE_ACK, SHR_MSG_ABORT };

	/* truncated at every header field boundary, and one byte short of the header */
	m = data1();
	len = build(buf, &m, 4, 5);
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		send_bad(x, SHR_PROTO_SHORT, buf, cuts[i], 0);

	/* magic, version (with a valid CRC: only the field is wrong) */
	len = build(buf, &m, 4, 5);
	buf[0] = 0x48;
	buf[1] = 0x53;
	recrc(buf, len);
	send_bad(x, SHR_PROTO_BAD_MAGIC, buf, len, 0);
	len = build(buf, &m, 4, 5);
	buf[2] = 0;
	recrc(buf, len);
	send_bad(x, SHR_PROTO_BAD_VERSION, buf, len, 0);
	buf[2] = SHR_PROTO_VERSION + 1;
	recrc(buf, len);
	send_bad(x, SHR_PROTO_BAD_VERSION, buf, len, 0);

	/* unknown types (CRC made valid so that only the type is wrong), box-only types */
	for (t = 0; t < sizeof(bad_types); t++) {
		m = data1();
		len = build(buf, &m, 4, 5);
		buf[3] = bad_types[t];
		recrc(buf, len);
		send_bad(x, SHR_PROTO_BAD_TYPE, buf, len, 0);
	}
	for (t = 0; t < sizeof(box_types); t++) {
		m = data1();
		m.type = box_types[t];
		m.count = box_types[t] == SHR_MSG_RESULT ? 1 : 0;
		len = build(buf, &m, box_types[t] == SHR_MSG_RESULT ? 4 : 0, 5);
		send_bad(x, SHR_PROTO_BAD_TYPE, buf, len, 0);
	}

	/* dtype: DATA dtype 0 and SHR_DTYPE_MAX, JOIN dtype 9 */
	m = data1();
	m.dtype = 0;
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_BAD_DTYPE, buf, len, 0);
	m.dtype = SHR_DTYPE_MAX;
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_BAD_DTYPE, buf, len, 0);
	m = (struct shr_proto_msg){ .type = SHR_MSG_JOIN, .dtype = 9, .rank = 0,
				    .world = o.world1, .job = o.job1, .slot = o.window1,
				    .count = o.chunk1 };
	len = build(buf, &m, 0, 0);
	send_bad(x, SHR_PROTO_BAD_DTYPE, buf, len, 0);

	/* op */
	m = data1();
	m.op = SHR_OP_MAX_;
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_BAD_OP, buf, len, 0);
	m.op = 255;
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_BAD_OP, buf, len, 0);

	/* length: count larger than the frame (one element missing, and 2^32-1), smaller
	 * than the frame, a LEAVE with a payload */
	m = data1();
	m.count = o.chunk1;
	len = build(buf, &m, (size_t)(o.chunk1 - 1) * 4, 5);
	send_bad(x, SHR_PROTO_BAD_LEN, buf, len, 0);
	m.count = UINT32_MAX;
	len = build(buf, &m, 16, 5);
	send_bad(x, SHR_PROTO_BAD_LEN, buf, len, 0);
	m.count = 1;
	len = build(buf, &m, 8, 5);
	send_bad(x, SHR_PROTO_BAD_LEN, buf, len, 0);
	m = (struct shr_proto_msg){ .type = SHR_MSG_LEAVE, .rank = 0, .world = o.world1,
				    .job = o.job1 };
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_BAD_LEN, buf, len, 0);

	/* CRC: the CRC field, a payload bit, a header field changed after the CRC */
	m = data1();
	len = build(buf, &m, 4, 5);
	buf[SHR_PROTO_CRC_SPAN] ^= 0x01;	/* the stored CRC */
	send_bad(x, SHR_PROTO_BAD_CRC, buf, len, 0);
	len = build(buf, &m, 4, 5);
	buf[SHR_PROTO_HDR_LEN] ^= 0x80;
	send_bad(x, SHR_PROTO_BAD_CRC, buf, len, 0);
	len = build(buf, &m, 4, 5);
	buf[11] ^= 0x02;	/* job id */
	send_bad(x, SHR_PROTO_BAD_CRC, buf, len, 0);

	/* unknown job: DATA, and a LEAVE (answered with LEAVE_ACK ENOENT) */
	m = data1();
	m.job = 0x5eedf00du;
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_UNKNOWN_JOB, buf, len, 0);
	m = (struct shr_proto_msg){ .type = SHR_MSG_LEAVE, .rank = 0, .world = 2,
				    .job = 0x5eedf00du };
	len = build(buf, &m, 0, 0);
	send_bad(x, SHR_PROTO_UNKNOWN_JOB, buf, len, 0);
	if (await(x, SHR_MSG_LEAVE_ACK, 2000, &m, buf) != 0)
		FAIL("no LEAVE_ACK for a LEAVE of an unknown job");
	else if (m.aux != ENOENT || m.job != 0x5eedf00du)
		FAIL("LEAVE_ACK of an unknown job: job %u aux %u (want ENOENT)", m.job, m.aux);

	/* rank out of range: rank == world, rank 0xfffe, world mismatch, LEAVE rank == world,
	 * JOIN with another world (answered JOIN_ACK EINVAL) */
	m = data1();
	m.rank = o.world1;
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_BAD_RANK, buf, len, 0);
	m.rank = 0xfffe;
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_BAD_RANK, buf, len, 0);
	m.rank = 0;
	m.world = (uint16_t)(o.world1 + 1);
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_BAD_RANK, buf, len, 0);
	m = (struct shr_proto_msg){ .type = SHR_MSG_LEAVE, .rank = o.world1,
				    .world = o.world1, .job = o.job1 };
	len = build(buf, &m, 0, 0);
	send_bad(x, SHR_PROTO_BAD_RANK, buf, len, 0);
	m = (struct shr_proto_msg){ .type = SHR_MSG_JOIN, .dtype = o.dtype1, .rank = 0,
				    .world = (uint16_t)(o.world1 + 1), .job = o.job1,
				    .slot = o.window1, .count = o.chunk1 };
	len = build(buf, &m, 0, 0);
	send_bad(x, SHR_PROTO_BAD_RANK, buf, len, 0);
	if (await(x, SHR_MSG_JOIN_ACK, 2000, &m, buf) != 0)
		FAIL("no JOIN_ACK for a JOIN with the wrong world");
	else if (m.aux != EINVAL)
		FAIL("JOIN_ACK for a JOIN with the wrong world: aux %u (want EINVAL)", m.aux);

	/* job1's ranks spoofed from our address: DATA of the first and last rank, a JOIN of
	 * rank 0 (answered EADDRINUSE), a LEAVE of the last rank (must not unbind it) */
	m = data1();
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_SPOOFED, buf, len, 0);
	m.rank = (uint16_t)(o.world1 - 1);
	len = build(buf, &m, 4, 5);
	send_bad(x, SHR_PROTO_SPOOFED, buf, len, 0);
	m = (struct shr_proto_msg){ .type = SHR_MSG_JOIN, .dtype = o.dtype1, .rank = 0,
				    .world = o.world1, .job = o.job1, .slot = o.window1,
				    .count = o.chunk1 };
	len = build(buf, &m, 0, 0);
	send_bad(x, SHR_PROTO_SPOOFED, buf, len, 0);
	if (await(x, SHR_MSG_JOIN_ACK, 2000, &m, buf) != 0)
		FAIL("no JOIN_ACK for a spoofed JOIN");
	else if (m.aux != EADDRINUSE)
		FAIL("JOIN_ACK for a spoofed JOIN: aux %u (want EADDRINUSE)", m.aux);
	m = (struct shr_proto_msg){ .type = SHR_MSG_LEAVE, .rank = (uint16_t)(o.world1 - 1),
				    .world = o.world1, .job = o.job1 };
	len = build(buf, &m, 0, 0);
	send_bad(x, SHR_PROTO_SPOOFED, buf, len, 0);

	/* not a lane port at all */
	m = data1();
	len = build(buf, &m, 4, 5);
	send_raw(x, (uint16_t)(o.port + lanes), buf, len);
	sent_bad_port++;
}

static struct shr_proto_msg
data2(uint16_t rank, uint32_t slot, uint32_t count)
{
	struct shr_proto_msg m = {
		.type = SHR_MSG_DATA, .dtype = SHR_DTYPE_INT32, .op = SHR_OP_SUM, .rank = rank,
		.world = J2_WORLD, .job = o.job2, .slot = slot, .ver = 0, .count = count,
		.tensor = 77, .step = 0, .offset = 0,
	};
	return m;
}

/* Check a RESULT of job2's round against the exact sum of seeds s0 and s1. */
static void
check_result(const char *who, int fd, int32_t s0, int32_t s1)
{
	uint8_t buf[MAX_MSG];
	struct shr_proto_msg m;
	uint32_t i, bad = 0;

	if (await(fd, SHR_MSG_RESULT, 2000, &m, buf) != 0) {
		FAIL("%s: no RESULT for job %u", who, o.job2);
		return;
	}
	if (m.job != o.job2 || m.slot != 0 || m.ver != 0 || m.count != J2_CHUNK ||
	    m.tensor != 77 || m.step != 0 || m.offset != 0 || m.dtype != SHR_DTYPE_INT32) {
		FAIL("%s: RESULT identity job %u slot %u ver %u count %u tensor %u", who, m.job,
		     m.slot, m.ver, m.count, m.tensor);
		return;
	}
	for (i = 0; i < J2_CHUNK; i++) {
		int32_t v, want = s0 + s1 + (int32_t)i * 6;

		memcpy(&v, buf + SHR_PROTO_HDR_LEN + 4 * i, 4);
		if (v != want)
			bad++;
	}
	if (bad)
		FAIL("%s: %u of %u result elements wrong", who, bad, J2_CHUNK);
	else
		printf("job %u: %s got the exact sum\n", o.job2, who);
}

/* Our own job: rank 0 on a, rank 1 on b join it. 0 or -1. */
static int
join2(int a, int b)
{
	uint8_t buf[MAX_MSG];
	struct shr_proto_msg m, j;
	size_t len;
	int i, ok_a = 0, ok_b = 0;

	/* join both ranks (JOINs are resent until the JOIN_ACK; repeats are not rejects) */
	for (i = 0; i < 40 && !(ok_a && ok_b); i++) {
		j = (struct shr_proto_msg){ .type = SHR_MSG_JOIN, .dtype = SHR_DTYPE_INT32,
					    .world = J2_WORLD, .job = o.job2,
					    .slot = J2_WINDOW, .count = J2_CHUNK };
		if (!ok_a) {
			j.rank = 0;
			len = build(buf, &j, 0, 0);
			send_raw(a, o.port, buf, len);
		}
		if (!ok_b) {
			j.rank = 1;
			len = build(buf, &j, 0, 0);
			send_raw(b, o.port, buf, len);
		}
		if (!ok_a && await(a, SHR_MSG_JOIN_ACK, 100, &m, buf) == 0 &&
		    m.aux != EINPROGRESS) {
			if (m.aux != 0) {
				FAIL("job %u: JOIN refused (aux %u)", o.job2, m.aux);
				return -1;
			}
			ok_a = 1;
			tok2 = m.token;
			lanes = (uint16_t)(m.tensor ? m.tensor : 1);
		}
		if (!ok_b && await(b, SHR_MSG_JOIN_ACK, 100, &m, buf) == 0)
			ok_b = m.aux == 0;
	}
	if (!(ok_a && ok_b)) {
		FAIL("job %u: no JOIN_ACK", o.job2);
		return -1;
	}
	if (m.slot < J2_WINDOW || m.count != J2_CHUNK)
		FAIL("job %u: granted window %u chunk %u", o.job2, m.slot, m.count);
	return 0;
}

/*
 * Our own job: a round with the refusals that need a bound source sent while it is open (none
 * reaches the pool), the exact sum; then a second round that rank 1 answers out of step. Job2
 * is ordered (made by JOIN), so that DATA is a member calling another collective: the box
 * counts it (OUT_OF_STEP) and aborts the job with EPROTO at its next tick, naming rank 1. One
 * such DATA only, and after the first round is done: from the first one on, the job's end is
 * a matter of the box's tick, so anything sent after it would be counted as out of step or
 * as an unknown job depending on timing. Both ranks wait for the ABORT (a state, not a time).
 */
static void
play2(int a, int b, int x)
{
	uint8_t buf[MAX_MSG];
	struct shr_proto_msg m;
	size_t len;
	int i;

	/* rank 0 opens the round on slot 0 copy 0 */
	m = data2(0, 0, J2_CHUNK);
	len = build(buf, &m, J2_CHUNK * 4, 1000);
	send_raw(a, o.port, buf, len);

	/* rank 1, bound: wrong dtype for the job, count above the chunk (and 0), slot outside
	 * the window (the first one out, and the largest) */
	m = data2(1, 0, J2_CHUNK);
	m.dtype = SHR_DTYPE_FLOAT32;
	len = build(buf, &m, J2_CHUNK * 4, -7);
	send_bad(b, SHR_PROTO_JOB_DTYPE, buf, len, 0);
	m = data2(1, 0, J2_CHUNK + 1);
	len = build(buf, &m, (J2_CHUNK + 1) * 4, -7);
	send_bad(b, SHR_PROTO_JOB_COUNT, buf, len, 0);
	m = data2(1, 0, 0);
	len = build(buf, &m, 0, 0);
	send_bad(b, SHR_PROTO_JOB_COUNT, buf, len, 0);
	m = data2(1, J2_WINDOW, J2_CHUNK);
	len = build(buf, &m, J2_CHUNK * 4, -7);
	send_bad(b, SHR_PROTO_BAD_SLOT, buf, len, J2_WINDOW);
	m = data2(1, SHR_PROTO_SLOT_MASK, J2_CHUNK);
	len = build(buf, &m, J2_CHUNK * 4, -7);
	send_bad(b, SHR_PROTO_BAD_SLOT, buf, len, SHR_PROTO_SLOT_MASK);

	/* a stranger: rank 0's DATA, and rank 1's LEAVE (must not unbind it) */
	m = data2(0, 0, J2_CHUNK);
	len = build(buf, &m, J2_CHUNK * 4, 1000);
	send_bad(x, SHR_PROTO_SPOOFED, buf, len, 0);
	m = (struct shr_proto_msg){ .type = SHR_MSG_LEAVE, .rank = 1, .world = J2_WORLD,
				    .job = o.job2 };
	len = build(buf, &m, 0, 0);
	send_bad(x, SHR_PROTO_SPOOFED, buf, len, 0);

	/* none of that may have completed or spoiled the round: rank 1's real DATA does */
	if (recv_msg(a, 100, &m, buf) == 0 && m.type == SHR_MSG_RESULT)
		FAIL("job %u: a RESULT before rank 1 contributed", o.job2);
	m = data2(1, 0, J2_CHUNK);
	len = build(buf, &m, J2_CHUNK * 4, -7);
	send_raw(b, o.port, buf, len);
	check_result("rank 0", a, 1000, -7);
	check_result("rank 1", b, 1000, -7);

	/* the next round on slot 0 (copy 1): rank 0 opens it, rank 1 names another tensor */
	m = data2(0, 0, J2_CHUNK);
	m.ver = 1;
	m.offset = J2_CHUNK;
	len = build(buf, &m, J2_CHUNK * 4, 1000);
	send_raw(a, o.port, buf, len);
	m.rank = 1;
	m.tensor = 78;
	len = build(buf, &m, J2_CHUNK * 4, -7);
	send_bad(b, SHR_PROTO_OUT_OF_STEP, buf, len, 0);
	for (i = 0; i < 2; i++) {
		if (await(i == 0 ? a : b, SHR_MSG_ABORT, 5000, &m, buf) != 0)
			FAIL("job %u rank %d: no ABORT after rank 1's out-of-step DATA", o.job2, i);
		else if (m.aux != EPROTO || m.rank != 1 || m.tensor != 78)
			FAIL("job %u rank %d: ABORT aux %u rank %u tensor %u (want EPROTO, rank 1, "
			     "tensor 78)", o.job2, i, m.aux, m.rank, m.tensor);
	}
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: faults_badpkt --agg IP [--port P] --local IP --job1 ID --world1 N\n"
		"                     --dtype1 int32|float32 [--chunk1 N] [--window1 N] --job2 ID\n"
		"                     [--gap-us U]\n");
}

static int
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "agg", 1, 0, 'a' }, { "port", 1, 0, 'p' }, { "local", 1, 0, 'l' },
		{ "job1", 1, 0, '1' }, { "world1", 1, 0, 'w' }, { "dtype1", 1, 0, 'd' },
		{ "chunk1", 1, 0, 'c' }, { "window1", 1, 0, 'W' }, { "job2", 1, 0, '2' },
		{ "gap-us", 1, 0, 'g' },
		{ 0, 0, 0, 0 }
	};
	struct in_addr ia;
	int c, d;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
		case 'l':
			if (inet_pton(AF_INET, optarg, &ia) != 1)
				return -1;
			*(c == 'a' ? &o.agg_ip : &o.local_ip) = ia.s_addr;
			break;
		case 'p': o.port = (uint16_t)atoi(optarg); break;
		case '1': o.job1 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'w': o.world1 = (uint16_t)atoi(optarg); break;
		case 'c': o.chunk1 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'W': o.window1 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case '2': o.job2 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'g': o.gap_us = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'd':
			d = shr_proto_dtype_parse(optarg);
			if (d < 0)
				return -1;
			o.dtype1 = (uint8_t)d;
			break;
		default:
			return -1;
		}
	}
	if (o.agg_ip == 0 || o.local_ip == 0 || o.world1 < 1 || o.dtype1 == 0 ||
	    o.chunk1 < 2 || o.chunk1 > 4096 || o.job2 == 0 || o.job2 == o.job1)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	int a, b, x;
	unsigned int r;

	if (parse(argc, argv) != 0) {
		usage();
		return 2;
	}
	x = sock_new();
	a = sock_new();
	b = sock_new();
	/* job 2's JOIN_ACK gives the lanes; job 1's garbage first, while it surely runs */
	if (join2(a, b) == 0) {
		stranger_to_job1(x);
		play2(a, b, x);
	}
	printf("expect");
	for (r = 1; r < SHR_PROTO_REASON_MAX; r++)
		printf(" reject_%s=%lu", shr_proto_reason_str(r), (unsigned long)sent[r]);
	printf(" bad_port=%lu\n", (unsigned long)sent_bad_port);
	close(b);
	close(a);
	close(x);
	return failures ? 1 : 0;
}
