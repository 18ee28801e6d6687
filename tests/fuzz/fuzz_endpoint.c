/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Fuzz target for the host endpoint (lib/endpoint).
 *
 * One endpoint (job 7, rank 1 of 3, int32, window 4, chunk 16 elements), created for each
 * input with a fake clock and a send callback that checks every DATA, then a default
 * operation of 53 elements. The input is a sequence of records (enum fz_ep_kind; h is the
 * record's first byte, kind = h % FZ_EP_KINDS):
 * - RESULT:   b1 = which chunk (bits 0-6, among the outstanding ones, else any) and a wrong
 *             op (bit 7), b2 = mutations (bit 0 version, 1 tensor, 2 step, 3 offset, 4 count,
 *             5 job, 6 slot, 7 a corrupted byte), u16 payload seed: a RESULT for that
 *             chunk, valid CRC.
 * - RAW:      u16 length (mod 1024), then the bytes.
 * - POLL:     b1 = clock step (bits 6-7 the unit: 1 us, 100 us, 1 ms, 10 ms), then poll.
 * - SUBMIT:   b1 = elements (mod 161), b2 = op (bits 0-2, mod 5: 4 is invalid), in place
 *             (bit 3), u16 input seed.
 * - SENDMODE: b1: the next b1 >> 1 sends fail with -EIO (bit 0) or -EAGAIN.
 * - MSG:      any type of message with a valid CRC (fields in rec_msg()).
 * - ANSWER:   u16 seed: a correct RESULT for every outstanding chunk, then a poll.
 *
 * The send callback checks each DATA: it validates, belongs to a submitted operation (its
 * tensor and step, and an offset in that operation's part of the stream), its payload is
 * that operation's input, chunk k goes on slot k mod W, a new chunk k is sent
 * only after the result of chunk k - W is in and with the other version, chunks start in
 * stream order but for those held by their slot (an older chunk j not sent yet has no result
 * for chunk j - W: deferred), a retransmission keeps its identity, never more than W chunks
 * outstanding, and no chunk is sent again after its result. After every record: every
 * accepted RESULT was for an outstanding chunk with its exact identity, the output buffers
 * hold exactly the accepted results' payloads at their offsets and nothing else (buffers are
 * exactly sized heap blocks, so ASan sees any write outside), an operation reported done has
 * all its results, shr_endpoint_idle() agrees, and a poll past the deadline does something
 * (sends, or defers a chunk so that nothing is due any more).
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <shr_proto.h>
#include <shr_endpoint.h>

#include "fuzz_common.h"

#define EP_JOB 7
#define EP_RANK 1
#define EP_WORLD 3
#define EP_W 4
#define EP_CHUNK 16
#define MAX_FOPS 80		/* More than SHR_ENDPOINT_MAX_OPS: reaches -EBUSY and -ENOENT. */
#define OP_MAX_ELEMS 160
#define MAX_CHUNKS (MAX_FOPS * ((OP_MAX_ELEMS + EP_CHUNK - 1) / EP_CHUNK))
#define TENSOR_BASE 100
#define CANARY 0x5a
#define MSG_MAX (SHR_PROTO_HDR_LEN + 1024)

enum { UNSENT = 0, SENT, DONE };

/* FZ_TRACE=1 in the environment: print every message and what it did (triage). */
static int trace = -1;

struct chunk {
	uint8_t state;
	uint8_t ver;
	uint32_t step;
};

struct fop {
	int handle;
	uint32_t tensor;
	uint32_t step;		/* Its step: its index among the submits (never decreases). */
	uint64_t base;		/* Stream offset of its first element. */
	uint32_t count;
	uint8_t op;
	uint8_t inplace;
	uint8_t done;
	uint8_t *in;		/* Given to the endpoint (also the output when in place). */
	uint8_t *out;
	uint8_t *orig;		/* The input as submitted. */
	uint8_t *model;		/* What out must hold: results, else input or canary. */
	uint32_t first;		/* Its first chunk in the stream. */
	uint32_t nchunks;
	uint32_t ndone;		/* Chunks whose result was accepted. */
};

struct state {
	struct shr_endpoint *ep;
	uint64_t now;
	struct fop ops[MAX_FOPS];
	unsigned int nops;
	struct chunk ch[MAX_CHUNKS];
	uint32_t nchunks;
	uint64_t stream;	/* Stream offset of the next operation. */
	int failed;
	int err;		/* The endpoint's sticky failure, once seen. */
	int fail_err;
	unsigned int fail_left;
	uint32_t outstanding;	/* Chunks SENT. */
	uint32_t low;		/* No chunk below this one is UNSENT. */
	uint64_t sends;
	uint64_t accepted;
	uint8_t wire[SHR_PROTO_HDR_LEN + 8192];
	uint8_t msg[MSG_MAX];
};

static struct fop *
find_op(struct state *s, uint32_t tensor)
{
	unsigned int i;

	for (i = 0; i < s->nops; i++)
		if (s->ops[i].tensor == tensor)
			return &s->ops[i];
	return NULL;
}

static uint32_t
chunk_len(const struct fop *o, uint64_t offset)
{
	uint64_t left = o->count - offset;

	return left < EP_CHUNK ? (uint32_t)left : EP_CHUNK;
}

static uint64_t
fake_now(void *ctx)
{
	return ((struct state *)ctx)->now;
}

FZ_NO_COVERAGE static int
fake_send(void *ctx, const void *hdr, const void *payload, size_t plen)
{
	struct state *s = ctx;
	struct shr_proto_msg m;
	enum shr_proto_reason r;
	struct chunk *c;
	struct fop *o;
	uint32_t idx, outstanding, j;
	uint64_t rel;
	int ret = 0;

	s->sends++;
	FZ_CHECK(hdr != NULL, "send without header");
	FZ_CHECK(plen <= EP_CHUNK * 4, "DATA with %zu payload bytes", plen);
	memcpy(s->wire, hdr, SHR_PROTO_HDR_LEN);
	if (plen)
		memcpy(s->wire + SHR_PROTO_HDR_LEN, payload, plen);
	r = shr_proto_validate(s->wire, SHR_PROTO_HDR_LEN + plen, &m);
	FZ_CHECK(r == SHR_PROTO_OK, "endpoint sent an invalid message: %s",
		 shr_proto_reason_str(r));
	FZ_CHECK(m.type == SHR_MSG_DATA && m.job == EP_JOB && m.rank == EP_RANK &&
		 m.world == EP_WORLD && m.dtype == SHR_DTYPE_INT32,
		 "sent %s job %u rank %u world %u dtype %u", shr_proto_type_str(m.type), m.job,
		 m.rank, m.world, m.dtype);
	o = find_op(s, m.tensor);
	FZ_CHECK(o != NULL, "DATA for tensor %u, never submitted", m.tensor);
	FZ_CHECK(m.op == o->op, "DATA op %u, operation's %u", m.op, o->op);
	FZ_CHECK(m.step == o->step, "DATA step %u, operation's %u", m.step, o->step);
	FZ_CHECK(m.offset >= o->base && (m.offset - o->base) % EP_CHUNK == 0 &&
		 m.offset - o->base < o->count,
		 "DATA offset %llu in an operation of %u at %llu", (unsigned long long)m.offset,
		 o->count, (unsigned long long)o->base);
	rel = m.offset - o->base;
	FZ_CHECK(m.count == chunk_len(o, rel), "DATA of %u elements at %llu of %u",
		 m.count, (unsigned long long)rel, o->count);
	FZ_CHECK(memcmp(s->wire + SHR_PROTO_HDR_LEN, o->orig + rel * 4, plen) == 0,
		 "DATA payload at %llu is not the input", (unsigned long long)rel);
	idx = o->first + (uint32_t)(rel / EP_CHUNK);
	c = &s->ch[idx];
	FZ_CHECK(m.slot == idx % EP_W, "chunk %u (tensor %u step %u offset %llu) on slot %u",
		 idx, m.tensor, m.step, (unsigned long long)m.offset, m.slot);

	switch (c->state) {
	case UNSENT:
		/* An older chunk not sent yet is held by its slot: chunk j - W has no result. */
		while (s->low < idx && s->ch[s->low].state != UNSENT)
			s->low++;
		for (j = s->low; j < idx; j++)
			FZ_CHECK(s->ch[j].state != UNSENT ||
				 (j >= EP_W && s->ch[j - EP_W].state != DONE),
				 "chunk %u sent before chunk %u, whose slot was free", idx, j);
		if (idx >= EP_W) {
			FZ_CHECK(s->ch[idx - EP_W].state == DONE,
				 "chunk %u sent before the result of chunk %u", idx, idx - EP_W);
			FZ_CHECK(m.ver != s->ch[idx - EP_W].ver,
				 "slot %u reused by chunk %u without flipping its version",
				 m.slot, idx);
		}
		c->state = SENT;
		s->outstanding++;
		c->ver = m.ver;
		c->step = m.step;
		break;
	case SENT:
		FZ_CHECK(m.ver == c->ver && m.step == c->step,
			 "chunk %u resent as %u/step %u, first sent as %u/step %u", idx, m.ver,
			 m.step, c->ver, c->step);
		break;
	default:
		FZ_CHECK(0, "chunk %u sent again after its result was accepted", idx);
	}
	outstanding = s->outstanding;
	FZ_CHECK(outstanding <= EP_W, "%u chunks outstanding, window %u", outstanding, EP_W);

	if (s->fail_left > 0) {
		s->fail_left--;
		ret = s->fail_err;
	}
	if (trace)
		fprintf(stderr, "ep: t=%llu DATA chunk %u slot %u.%u tensor %u step %u offset %llu "
			"count %u -> %d\n", (unsigned long long)s->now, idx, m.slot, m.ver,
			m.tensor, m.step, (unsigned long long)m.offset, m.count, ret);
	return ret;
}

/* The endpoint has failed with err; its failure is sticky. */
static void
fail(struct state *s, int err)
{
	if (!s->failed) {
		s->failed = 1;
		s->err = err;
	}
	FZ_CHECK(err == s->err, "failure %d after failure %d", err, s->err);
}

/* An operation's output holds its accepted results and nothing else. */
FZ_NO_COVERAGE static void
check_output(const struct fop *o, unsigned int i)
{
	uint32_t e;

	if (memcmp(o->out, o->model, (size_t)o->count * 4) == 0)
		return;
	for (e = 0; e < o->count; e++)
		FZ_CHECK(memcmp(o->out + 4 * e, o->model + 4 * e, 4) == 0,
			 "op %u element %u is %#x, should be %#x (%s)", i, e,
			 fz_get_le32(o->out + 4 * e), fz_get_le32(o->model + 4 * e),
			 memcmp(o->model + 4 * e, o->orig + 4 * e, 4) == 0 ||
			 o->model[4 * e] == CANARY ? "no result accepted for it" : "its result");
}

/*
 * Outputs hold the accepted results and nothing else (checked for operations in progress
 * after every record, for all at the end); done operations have them all.
 */
FZ_NO_COVERAGE static void
check_ops(struct state *s, int after_poll)
{
	struct shr_endpoint_stats st;
	int t, idle, all_done = 1, all_in = 1;
	unsigned int i;
	struct fop *o;

	for (i = 0; i < s->nops; i++) {
		o = &s->ops[i];
		if (!o->done)
			check_output(o, i);
		all_in &= o->ndone == o->nchunks;
		t = shr_endpoint_test(s->ep, o->handle);
		if (s->nops - i > SHR_ENDPOINT_MAX_OPS) {
			/* Older than the last MAX_OPS: forgotten, and necessarily done (a
			 * submit waits with -EBUSY while MAX_OPS are pending). */
			FZ_CHECK(t == -ENOENT, "test(op %u of %u) = %d", i, s->nops, t);
			if (!s->failed)
				FZ_CHECK(o->ndone == o->nchunks, "op %u forgotten, pending", i);
			o->done = 1;
			continue;
		}
		if (t == 1) {
			FZ_CHECK(o->ndone == o->nchunks, "op %u done with %u of %u results", i,
				 o->ndone, o->nchunks);
			o->done = 1;
		} else if (t == 0) {
			FZ_CHECK(!o->done, "op %u was done, now in progress", i);
			FZ_CHECK(!s->failed, "op %u in progress on a failed endpoint", i);
			all_done = 0;
		} else {
			FZ_CHECK(t == -ETIMEDOUT || t == -ECONNABORTED, "test(op %u): %d", i, t);
			fail(s, t);
			all_done = 0;
		}
	}
	if (s->nops > 0) {
		t = shr_endpoint_test(s->ep, (int)(((unsigned int)s->ops[s->nops - 1].handle + 1) &
						   0x7fffffffu));
		FZ_CHECK(t == -ENOENT, "test(a handle not given yet) = %d", t);
	}
	FZ_CHECK(shr_endpoint_test(s->ep, -1) == -ENOENT, "test(-1)");
	idle = shr_endpoint_idle(s->ep);
	FZ_CHECK(idle == 0 || idle == 1, "idle %d", idle);
	if (!s->failed && !all_done)
		FZ_CHECK(!idle, "idle with an operation in progress");
	if (after_poll && !s->failed && all_in)
		FZ_CHECK(all_done && idle, "every result is in, but done %d idle %d", all_done,
			 idle);
	shr_endpoint_stats_get(s->ep, &st);
	FZ_CHECK(st.rx_results == s->accepted, "rx_results %llu, accepted %llu",
		 (unsigned long long)st.rx_results, (unsigned long long)s->accepted);
}

static void
feed(struct state *s, const uint8_t *bytes, size_t len)
{
	struct shr_proto_msg m;
	enum shr_proto_reason vr;
	struct chunk *c;
	struct fop *o;
	uint8_t *copy;
	uint32_t idx;
	uint64_t rel;
	int r;

	copy = malloc(len ? len : 1);
	FZ_CHECK(copy != NULL, "malloc");
	if (len)
		memcpy(copy, bytes, len);
	vr = shr_proto_validate(copy, len, &m);
	r = shr_endpoint_input(s->ep, copy, len);
	FZ_CHECK(r == 0 || r == -EINVAL || r == -EALREADY || r == -ECONNABORTED ||
		 r == -ETIMEDOUT, "endpoint_input: %d", r);
	if (trace)
		fprintf(stderr, "ep: t=%llu in %s job %u slot %u.%u tensor %u step %u offset %llu "
			"count %u -> %d\n", (unsigned long long)s->now,
			vr ? shr_proto_reason_str(vr) : shr_proto_type_str(m.type), m.job, m.slot,
			m.ver, m.tensor, m.step, (unsigned long long)m.offset, m.count, r);
	if (vr != SHR_PROTO_OK)
		FZ_CHECK(r == -EINVAL, "invalid message (%s) gave %d", shr_proto_reason_str(vr),
			 r);
	if (vr == SHR_PROTO_OK && m.type == SHR_MSG_ABORT && m.job == EP_JOB) {
		FZ_CHECK(r == -ECONNABORTED, "ABORT for the job gave %d", r);
		if (!s->failed)		/* Else the first failure stays. */
			fail(s, r);
	} else if (r == -ECONNABORTED || r == -ETIMEDOUT) {
		/* Once failed, the endpoint ignores messages and returns its failure. */
		FZ_CHECK(s->failed && r == s->err, "%s for job %u gave %d (failed: %d)",
			 shr_proto_type_str(m.type), m.job, r, s->err);
	} else if (r == -EALREADY) {
		FZ_CHECK(m.type == SHR_MSG_RESULT && m.job == EP_JOB, "%s for job %u: -EALREADY",
			 shr_proto_type_str(m.type), m.job);
	} else if (r == 0) {
		FZ_CHECK(m.type == SHR_MSG_RESULT && m.job == EP_JOB && m.dtype == SHR_DTYPE_INT32,
			 "accepted %s job %u dtype %u", shr_proto_type_str(m.type), m.job,
			 m.dtype);
		o = find_op(s, m.tensor);
		FZ_CHECK(o != NULL, "accepted a RESULT for tensor %u, never submitted", m.tensor);
		FZ_CHECK(m.offset >= o->base && (m.offset - o->base) % EP_CHUNK == 0 &&
			 m.offset - o->base < o->count,
			 "accepted a RESULT at offset %llu of %u at %llu",
			 (unsigned long long)m.offset, o->count, (unsigned long long)o->base);
		rel = m.offset - o->base;
		FZ_CHECK(m.count == chunk_len(o, rel), "accepted %u elements at %llu of %u",
			 m.count, (unsigned long long)rel, o->count);
		idx = o->first + (uint32_t)(rel / EP_CHUNK);
		c = &s->ch[idx];
		FZ_CHECK(c->state == SENT, "accepted a RESULT for chunk %u, %s", idx,
			 c->state == DONE ? "already done" : "never sent");
		FZ_CHECK(m.slot == idx % EP_W && m.ver == c->ver && m.step == c->step,
			 "accepted RESULT slot %u.%u step %u for chunk %u (slot %u.%u step %u)",
			 m.slot, m.ver, m.step, idx, idx % EP_W, c->ver, c->step);
		memcpy(o->model + rel * 4, copy + SHR_PROTO_HDR_LEN, (size_t)m.count * 4);
		o->ndone++;
		c->state = DONE;
		s->outstanding--;
		s->accepted++;
	}
	free(copy);
	check_ops(s, 0);
}

static void
do_poll(struct state *s, uint64_t delta)
{
	uint64_t deadline = shr_endpoint_next_deadline(s->ep), sends = s->sends;
	uint32_t outstanding = s->outstanding;
	int r;

	if (!s->failed && outstanding > 0)
		FZ_CHECK(deadline != UINT64_MAX, "%u chunks outstanding and no deadline",
			 outstanding);
	s->now += delta;
	r = shr_endpoint_poll(s->ep);
	FZ_CHECK(r == 0 || r == -ETIMEDOUT || r == -ECONNABORTED, "poll: %d", r);
	if (trace)
		fprintf(stderr, "ep: t=%llu poll -> %d\n", (unsigned long long)s->now, r);
	if (s->failed)
		FZ_CHECK(r == s->err, "poll returned %d on an endpoint failed with %d", r, s->err);
	if (r != 0)
		fail(s, r);
	else if (outstanding > 0 && deadline <= s->now)
		/* a send, or (deferring a chunk whose slot is busy) nothing due any more */
		FZ_CHECK(s->sends > sends || shr_endpoint_next_deadline(s->ep) > s->now,
			 "poll past the deadline sent nothing and left work due");
	check_ops(s, 1);
}

static void
submit(struct state *s, uint32_t count, uint8_t op, int inplace, uint16_t seed)
{
	struct shr_endpoint_op eo;
	struct fop *o;
	size_t bytes = (size_t)count * 4;
	unsigned int i, pending;
	int h;

	if (s->nops == MAX_FOPS)
		return;
	for (i = 0; i < s->nops && s->ops[i].done; i++)
		;
	pending = s->nops - i;	/* From the oldest operation not done. */
	o = &s->ops[s->nops];
	memset(o, 0, sizeof(*o));
	o->tensor = TENSOR_BASE + s->nops;
	o->step = s->nops;
	o->count = count;
	o->op = op;
	o->inplace = (uint8_t)inplace;
	o->in = malloc(bytes ? bytes : 1);
	o->orig = malloc(bytes ? bytes : 1);
	o->model = malloc(bytes ? bytes : 1);
	FZ_CHECK(o->in && o->orig && o->model, "malloc");
	fz_gen_i32(o->in, count, seed, o->tensor);
	memcpy(o->orig, o->in, bytes);
	if (inplace) {
		o->out = o->in;
		memcpy(o->model, o->in, bytes);
	} else {
		o->out = malloc(bytes ? bytes : 1);
		FZ_CHECK(o->out != NULL, "malloc");
		memset(o->out, CANARY, bytes);
		memset(o->model, CANARY, bytes);
	}
	eo = (struct shr_endpoint_op){
		.op = op, .in = o->in, .out = o->out, .count = count, .tensor = o->tensor,
		.step = o->step,
	};
	h = shr_endpoint_submit(s->ep, &eo);
	if (trace)
		fprintf(stderr, "ep: submit %u elements op %u%s -> %d\n", count, op,
			inplace ? " in place" : "", h);
	if (h < 0) {
		FZ_CHECK(h == -EINVAL || h == -EPIPE || h == -EBUSY, "submit: %d", h);
		FZ_CHECK(h != -EBUSY || pending >= SHR_ENDPOINT_MAX_OPS,
			 "submit: -EBUSY with %u pending", pending);
		FZ_CHECK(h != -EPIPE || s->failed, "submit: -EPIPE on a working endpoint");
		FZ_CHECK(h != -EINVAL || op >= SHR_OP_MAX_ || op == SHR_OP_PROD,
			 "submit refused op %u", op);
		if (!inplace)
			free(o->out);
		free(o->in);
		free(o->orig);
		free(o->model);
		return;
	}
	FZ_CHECK(op < SHR_OP_MAX_, "submit accepted op %u", op);
	FZ_CHECK(!s->failed, "submit accepted on a failed endpoint");
	FZ_CHECK(pending < SHR_ENDPOINT_MAX_OPS, "submit accepted with %u pending", pending);
	for (i = 0; i < s->nops; i++)
		FZ_CHECK(s->ops[i].handle != h, "handle %d given twice", h);
	o->handle = h;
	o->base = s->stream;
	s->stream += count;
	o->first = s->nchunks;
	o->nchunks = (count + EP_CHUNK - 1) / EP_CHUNK;
	s->nchunks += o->nchunks;
	s->nops++;
	check_ops(s, 0);
}

static size_t
build(struct state *s, const struct shr_proto_msg *m, uint16_t seed, size_t plen)
{
	if (plen > MSG_MAX - SHR_PROTO_HDR_LEN)
		plen = MSG_MAX - SHR_PROTO_HDR_LEN;
	fz_gen_i32(s->msg + SHR_PROTO_HDR_LEN, (uint32_t)(plen / 4), seed, m->slot);
	shr_proto_build(s->msg, m, s->msg + SHR_PROTO_HDR_LEN, plen);
	return SHR_PROTO_HDR_LEN + plen;
}

/* A RESULT with chunk idx's identity (idx may be past the stream: tensor of no operation). */
static void
result_msg(struct state *s, uint32_t idx, uint8_t mut, int wrong_op, uint16_t seed)
{
	struct shr_proto_msg m;
	struct fop *o = NULL;
	unsigned int i;
	size_t len;

	for (i = 0; i < s->nops; i++)
		if (idx >= s->ops[i].first && idx < s->ops[i].first + s->ops[i].nchunks)
			o = &s->ops[i];
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_RESULT;
	m.job = EP_JOB;
	m.rank = SHR_PROTO_RANK_ALL;
	m.world = EP_WORLD;
	m.dtype = SHR_DTYPE_INT32;
	m.slot = idx % EP_W;
	m.ver = idx < MAX_CHUNKS ? s->ch[idx].ver : 0;
	m.step = idx < MAX_CHUNKS ? s->ch[idx].step : 0;
	if (o != NULL) {
		m.op = o->op;
		m.tensor = o->tensor;
		m.offset = (uint64_t)(idx - o->first) * EP_CHUNK;
		m.count = chunk_len(o, m.offset);
		m.offset += o->base;
	} else {
		m.tensor = TENSOR_BASE + MAX_FOPS;
		m.count = EP_CHUNK;
	}
	if (mut & 1)
		m.ver ^= 1;
	if (mut & 2)
		m.tensor ^= 1;
	if (mut & 4)
		m.step++;
	if (mut & 8)
		m.offset += EP_CHUNK;
	if ((mut & 16) && m.count > 1)
		m.count--;
	if (mut & 32)
		m.job++;
	if (mut & 64)
		m.slot++;
	if (wrong_op)
		m.op = (uint8_t)((m.op + 1) % SHR_OP_MAX_);
	len = build(s, &m, seed, (size_t)m.count * 4);
	if (mut & 128)
		s->msg[(seed >> 3) % len] ^= (uint8_t)(1u << (seed & 7));
	feed(s, s->msg, len);
}

static void
rec_result(struct state *s, struct fz *f)
{
	uint8_t b1 = fz_u8(f), mut = fz_u8(f);
	uint16_t seed = fz_u16(f);
	uint32_t i, n = 0, pick = 0;
	int wrong_op = b1 >> 7;

	b1 &= 0x7f;
	for (i = 0; i < s->nchunks; i++)
		n += s->ch[i].state == SENT;
	if (n > 0) {
		n = b1 % n;
		for (i = 0; i < s->nchunks; i++)
			if (s->ch[i].state == SENT && n-- == 0) {
				pick = i;
				break;
			}
	} else {
		pick = b1 % (s->nchunks + 1);
	}
	result_msg(s, pick, mut, wrong_op, seed);
}

static void
rec_answer(struct state *s, struct fz *f)
{
	uint16_t seed = fz_u16(f);
	uint32_t i;

	for (i = 0; i < s->nchunks; i++)
		if (s->ch[i].state == SENT)
			result_msg(s, i, 0, 0, (uint16_t)(seed + i));
	do_poll(s, 1000);
}

static void
rec_msg(struct state *s, struct fz *f)
{
	struct shr_proto_msg m;
	uint8_t jsel, b;
	unsigned int esize;
	uint16_t seed;
	size_t len, plen = 0;

	memset(&m, 0, sizeof(m));
	m.type = fz_u8(f) % (SHR_MSG_TYPE_MAX + 1);
	jsel = fz_u8(f);
	m.job = (jsel & 0x80) ? fz_u32(f) : EP_JOB + (jsel & 1u);
	m.rank = fz_u16(f);
	m.world = fz_u8(f) % 5;
	m.dtype = fz_u8(f) % (SHR_DTYPE_MAX + 1);
	m.op = fz_u8(f) % (SHR_OP_MAX_ + 1);
	b = fz_u8(f);
	m.slot = b & 0x3f;
	m.ver = b >> 7;
	m.count = fz_u8(f) % 40;
	m.tensor = TENSOR_BASE + fz_u8(f) % (MAX_FOPS + 2);
	m.step = fz_u8(f) % 4;
	m.offset = (uint64_t)(fz_u8(f) % 12) * EP_CHUNK;
	m.aux = fz_u8(f);
	m.flags = fz_u8(f);
	seed = fz_u16(f);
	esize = shr_proto_dtype_size(m.dtype);
	if (m.type == SHR_MSG_DATA || m.type == SHR_MSG_RESULT)
		plen = (size_t)m.count * (esize ? esize : 4);
	len = build(s, &m, seed, plen);
	if (jsel & 0x40)
		s->msg[(seed >> 3) % len] ^= (uint8_t)(1u << (seed & 7));
	feed(s, s->msg, len);
}

static void
rec_raw(struct state *s, struct fz *f)
{
	size_t want = fz_u16(f) % 1024;
	const uint8_t *p;
	size_t n = fz_bytes(f, want, &p);

	feed(s, p, n);
}

static void
rec_poll(struct state *s, struct fz *f)
{
	static const uint64_t unit[4] = { 1000, 100000, 1000000, 10000000 };
	uint8_t b = fz_u8(f);

	do_poll(s, (uint64_t)(b & 63) * unit[b >> 6]);
}

static void
rec_submit(struct state *s, struct fz *f)
{
	uint8_t b1 = fz_u8(f), b2 = fz_u8(f);
	uint16_t seed = fz_u16(f);

	submit(s, b1 % (OP_MAX_ELEMS + 1), (uint8_t)((b2 & 7) % (SHR_OP_MAX_ + 1)),
	       (b2 >> 3) & 1, seed);
}

static void
rec_sendmode(struct state *s, struct fz *f)
{
	uint8_t b = fz_u8(f);

	s->fail_err = (b & 1) ? -EIO : -EAGAIN;
	s->fail_left = b >> 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shr_endpoint_params params = {
		.job = EP_JOB, .rank = EP_RANK, .world = EP_WORLD, .dtype = SHR_DTYPE_INT32,
		.window = EP_W, .chunk_elems = EP_CHUNK, .rto_init_ns = 1000000,
		.rto_min_ns = 50000, .rto_max_ns = 10000000, .fail_ns = 100000000,
	};
	struct shr_endpoint_io io = { .send = fake_send, .now_ns = fake_now };
	struct fz f = { data, size };
	struct state *s;
	unsigned int i;

	if (trace < 0)
		trace = getenv("FZ_TRACE") != NULL;
	s = calloc(1, sizeof(*s));
	FZ_CHECK(s != NULL, "calloc");
	s->now = 1000000000ull;
	io.ctx = s;
	s->ep = shr_endpoint_create(&params, &io);
	FZ_CHECK(s->ep != NULL, "shr_endpoint_create: %d", errno);
	submit(s, 53, SHR_OP_SUM, 0, 7);
	FZ_CHECK(s->nops == 1, "the default operation was refused");

	while (f.n > 0) {
		switch (fz_u8(&f) % FZ_EP_KINDS) {
		case FZ_EP_RESULT:
			rec_result(s, &f);
			break;
		case FZ_EP_RAW:
			rec_raw(s, &f);
			break;
		case FZ_EP_POLL:
			rec_poll(s, &f);
			break;
		case FZ_EP_SUBMIT:
			rec_submit(s, &f);
			break;
		case FZ_EP_SENDMODE:
			rec_sendmode(s, &f);
			break;
		case FZ_EP_MSG:
			rec_msg(s, &f);
			break;
		default:
			rec_answer(s, &f);
			break;
		}
	}
	for (i = 0; i < s->nops; i++)
		check_output(&s->ops[i], i);
	shr_endpoint_free(s->ep);
	for (i = 0; i < s->nops; i++) {
		if (!s->ops[i].inplace)
			free(s->ops[i].out);
		free(s->ops[i].in);
		free(s->ops[i].orig);
		free(s->ops[i].model);
	}
	free(s);
	return 0;
}
