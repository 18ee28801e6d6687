/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Writes the seed corpora of the fuzz targets: gen_corpus DIR writes the files of
 * DIR/proto, DIR/agg and DIR/endpoint (the committed tests/fuzz/corpus was made with it).
 * proto seeds are messages of every type; agg and endpoint seeds are record sequences in
 * the formats documented at the top of fuzz_agg.c and fuzz_endpoint.c.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <shr_proto.h>

#include "fuzz_common.h"

struct seed {
	uint8_t b[4096];
	size_t n;
};

static const char *outdir;

static void
put(struct seed *s, uint8_t v)
{
	if (s->n < sizeof(s->b))
		s->b[s->n++] = v;
}

static void
put16(struct seed *s, uint16_t v)
{
	put(s, (uint8_t)v);
	put(s, (uint8_t)(v >> 8));
}

static void
putn(struct seed *s, const uint8_t *p, size_t n)
{
	while (n--)
		put(s, *p++);
}

static void
save(const char *target, const char *name, const struct seed *s)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(s->b, 1, s->n, f) != s->n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* A whole message (header + generated payload) into s; returns its length. */
static size_t
message(struct seed *s, const struct shr_proto_msg *m, size_t payload_len)
{
	uint8_t buf[SHR_PROTO_HDR_LEN + 1024];

	memset(buf, 0, sizeof(buf));
	fz_gen_i32(buf + SHR_PROTO_HDR_LEN, (uint32_t)(payload_len / 4), 1234, m->slot);
	shr_proto_build(buf, m, buf + SHR_PROTO_HDR_LEN, payload_len);
	putn(s, buf, SHR_PROTO_HDR_LEN + payload_len);
	return SHR_PROTO_HDR_LEN + payload_len;
}

static void
gen_proto(void)
{
	struct shr_proto_msg m;
	struct seed s;

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 7;
	m.rank = 1;
	m.world = 3;
	m.slot = 5;
	m.ver = 1;
	m.count = 4;
	m.tensor = 3;
	m.step = 9;
	m.offset = 320;
	s.n = 0;
	message(&s, &m, 16);
	save("proto", "data_int32", &s);

	s.n = 0;
	m.dtype = SHR_DTYPE_FLOAT16;
	m.count = 6;
	m.op = SHR_OP_MAX;
	m.flags = SHR_FLAG_LAST | SHR_FLAG_RETX;
	message(&s, &m, 12);
	save("proto", "data_fp16", &s);

	s.n = 0;
	m.dtype = SHR_DTYPE_QINT32;
	m.op = SHR_OP_SUM;
	m.count = 2;
	m.aux = 17;
	m.flags = 0;
	message(&s, &m, 8);
	save("proto", "data_qint32", &s);

	s.n = 0;
	m.type = SHR_MSG_RESULT;
	m.dtype = SHR_DTYPE_FLOAT32;
	m.rank = SHR_PROTO_RANK_ALL;
	m.count = 4;
	m.aux = 0;
	message(&s, &m, 16);
	save("proto", "result_f32", &s);

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_JOIN;
	m.dtype = SHR_DTYPE_BFLOAT16;
	m.job = 9;
	m.rank = 2;
	m.world = 4;
	m.slot = 64;
	m.count = 512;
	s.n = 0;
	message(&s, &m, 0);
	save("proto", "join", &s);

	s.n = 0;
	m.type = SHR_MSG_JOIN_ACK;
	m.tensor = 2;
	message(&s, &m, 0);
	save("proto", "join_ack", &s);

	s.n = 0;
	m.type = SHR_MSG_JOIN_ACK;
	m.aux = ENOSPC;
	message(&s, &m, 0);
	save("proto", "join_nak", &s);

	memset(&m, 0, sizeof(m));
	m.job = 9;
	m.rank = 1;
	m.world = 4;
	s.n = 0;
	m.type = SHR_MSG_LEAVE;
	message(&s, &m, 0);
	save("proto", "leave", &s);

	s.n = 0;
	m.type = SHR_MSG_LEAVE_ACK;
	message(&s, &m, 0);
	save("proto", "leave_ack", &s);

	s.n = 0;
	m.type = SHR_MSG_ABORT;
	m.aux = ETIMEDOUT;
	message(&s, &m, 0);
	save("proto", "abort", &s);

	s.n = 0;
	put16(&s, 0x4853);	/* "SH" but short */
	put(&s, 1);
	put(&s, 1);
	save("proto", "short", &s);
}

/* fuzz_agg records. */

static void
agg_round(struct seed *s, uint8_t slot_ver, uint8_t ident, uint16_t seed, uint8_t first)
{
	put(s, FZ_AGG_ROUND);
	put(s, slot_ver);
	put(s, ident);
	put16(s, seed);
	put(s, first);
}

static void
agg_data(struct seed *s, uint8_t b1, uint8_t b2, uint8_t b3, uint16_t seed)
{
	put(s, FZ_AGG_DATA);
	put(s, b1);
	put(s, b2);
	put(s, b3);
	put16(s, seed);
}

/* MSG record; job_sel 0..3 is job 7 + job_sel. */
static void
agg_msg(struct seed *s, uint8_t src, uint8_t type, uint8_t job_sel, uint8_t rank,
	uint8_t world, uint8_t dtype, uint8_t slot_ver, uint16_t count, uint8_t tensor,
	uint8_t step, uint8_t off)
{
	put(s, FZ_AGG_MSG);
	put(s, src);
	put(s, type);
	put(s, job_sel);
	put(s, rank);
	put(s, world);
	put(s, dtype);
	put(s, SHR_OP_SUM);
	put(s, slot_ver);
	put16(s, count);
	put(s, tensor);
	put(s, step);
	put(s, off);
	put(s, 0);		/* aux */
	put(s, 0);		/* flags */
	put16(s, 99);
}

static void
agg_tick(struct seed *s, uint8_t b)
{
	put(s, FZ_AGG_TICK);
	put(s, b);
}

static void
agg_ctrl(struct seed *s, uint8_t b)
{
	put(s, FZ_AGG_CTRL);
	put(s, b);
}

static void
gen_agg(void)
{
	struct shr_proto_msg m;
	struct seed s;
	uint8_t slot, raw[SHR_PROTO_HDR_LEN + 256];
	struct seed tmp;

	s.n = 0;
	agg_round(&s, 0, 0, 10, 0);
	save("agg", "one_round", &s);

	/* Two rounds (both versions) on every slot, looped twice: the pktgen replay. */
	s.n = 0;
	for (slot = 0; slot < 16; slot++)
		agg_round(&s, (uint8_t)((slot & 7) | (slot >= 8 ? 0x20 : 0)), slot & 3,
			  (uint16_t)(100 + slot), slot % 3);
	for (slot = 0; slot < 16; slot++)
		agg_round(&s, (uint8_t)((slot & 7) | (slot >= 8 ? 0x20 : 0)), slot & 3,
			  (uint16_t)(100 + slot), slot % 3);
	save("agg", "replay_two_versions", &s);

	/* Rank by rank: a duplicate before completion, a resend after, a spoofed rank. */
	s.n = 0;
	agg_data(&s, 0, 0x03, 0x04, 50);
	agg_data(&s, 0, 0x03, 0x04, 50);
	agg_data(&s, 0x09, 0x03, 0x04, 50);
	agg_data(&s, 1, 0x03, 0x04, 51);
	agg_data(&s, 2, 0x03, 0x04, 52);
	agg_data(&s, 2, 0x03, 0x04, 52);
	agg_data(&s, 0x81, 0x03, 0x04, 51);
	save("agg", "dup_resend_spoof", &s);

	/* Out of step: rank 1 on another tensor, rank 2 with a shorter count. */
	s.n = 0;
	agg_data(&s, 0, 0x02, 0x00, 3);
	agg_data(&s, 1, 0x42, 0x00, 4);
	agg_data(&s, 2, 0x02, 0x80, 5);
	agg_data(&s, 1, 0x02, 0x00, 4);
	agg_data(&s, 2, 0x02, 0x00, 5);
	save("agg", "out_of_step", &s);

	/* In-band job 9: two JOINs, then a round of DATA. */
	s.n = 0;
	agg_msg(&s, 3, SHR_MSG_JOIN, 2, 0, 2, SHR_DTYPE_INT32, 4, 32, 0, 0, 0);
	agg_msg(&s, 4, SHR_MSG_JOIN, 2, 1, 2, SHR_DTYPE_INT32, 4, 32, 0, 0, 0);
	agg_msg(&s, 4, SHR_MSG_JOIN, 2, 1, 2, SHR_DTYPE_INT32, 4, 32, 0, 0, 0);
	agg_msg(&s, 3, SHR_MSG_DATA, 2, 0, 2, SHR_DTYPE_INT32, 1, 32, 0, 0, 0);
	agg_msg(&s, 4, SHR_MSG_DATA, 2, 1, 2, SHR_DTYPE_INT32, 1, 32, 0, 0, 0);
	agg_msg(&s, 3, SHR_MSG_LEAVE, 2, 0, 2, 0, 0, 0, 0, 0, 0);
	agg_msg(&s, 4, SHR_MSG_LEAVE, 2, 1, 2, 0, 0, 0, 0, 0, 0);
	save("agg", "join_data_leave", &s);

	/* Static job 8 binds on JOIN; float32 DATA. */
	s.n = 0;
	agg_msg(&s, 3, SHR_MSG_JOIN, 1, 0, 2, SHR_DTYPE_FLOAT32, 4, 32, 0, 0, 0);
	agg_msg(&s, 5, SHR_MSG_JOIN, 1, 1, 2, SHR_DTYPE_FLOAT32, 4, 32, 0, 0, 0);
	agg_msg(&s, 3, SHR_MSG_DATA, 1, 0, 2, SHR_DTYPE_FLOAT32, 0x82, 32, 1, 0, 0);
	agg_msg(&s, 5, SHR_MSG_DATA, 1, 1, 2, SHR_DTYPE_FLOAT32, 0x82, 32, 1, 0, 0);
	save("agg", "static_bind_on_join", &s);

	/* A round left open past the timeout: the job is aborted, then added back. */
	s.n = 0;
	agg_data(&s, 0, 0x01, 0x00, 7);
	agg_data(&s, 1, 0x01, 0x00, 8);
	agg_tick(&s, 10);
	agg_tick(&s, 0x80 | 30);
	agg_ctrl(&s, 0);
	agg_round(&s, 1, 0, 9, 2);
	save("agg", "timeout_abort", &s);

	/* Job 7 deleted, re-added unbound, its ranks JOIN, a round, all LEAVE. */
	s.n = 0;
	agg_ctrl(&s, 2);
	agg_ctrl(&s, 4);
	agg_msg(&s, 0, SHR_MSG_JOIN, 0, 0, 3, SHR_DTYPE_INT32, 8, 64, 0, 0, 0);
	agg_msg(&s, 1, SHR_MSG_JOIN, 0, 1, 3, SHR_DTYPE_INT32, 8, 64, 0, 0, 0);
	agg_msg(&s, 2, SHR_MSG_JOIN, 0, 2, 3, SHR_DTYPE_INT32, 8, 64, 0, 0, 0);
	agg_round(&s, 3, 5, 11, 1);
	agg_msg(&s, 0, SHR_MSG_LEAVE, 0, 0, 3, 0, 0, 0, 0, 0, 0);
	agg_msg(&s, 1, SHR_MSG_LEAVE, 0, 1, 3, 0, 0, 0, 0, 0, 0);
	agg_msg(&s, 2, SHR_MSG_LEAVE, 0, 2, 3, 0, 0, 0, 0, 0, 0);
	agg_ctrl(&s, 5);
	agg_ctrl(&s, 6);
	agg_ctrl(&s, 7);
	save("agg", "rejoin_ctrl", &s);

	/* A raw DATA message (rank 0, slot 2) followed by the two others. */
	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.dtype = SHR_DTYPE_INT32;
	m.job = 7;
	m.world = 3;
	m.slot = 2;
	m.count = 64;
	tmp.n = 0;
	message(&tmp, &m, 256);
	memcpy(raw, tmp.b, tmp.n);
	s.n = 0;
	put(&s, FZ_AGG_RAW);
	put(&s, 0);
	put16(&s, (uint16_t)tmp.n);
	putn(&s, raw, tmp.n);
	agg_data(&s, 1, 0x02, 0x00, 20);
	agg_data(&s, 2, 0x02, 0x00, 21);
	save("agg", "raw_data", &s);
}

/* fuzz_endpoint records. */

static void
ep_poll(struct seed *s, uint8_t b)
{
	put(s, FZ_EP_POLL);
	put(s, b);
}

static void
ep_answer(struct seed *s, uint16_t seed)
{
	put(s, FZ_EP_ANSWER);
	put16(s, seed);
}

static void
ep_result(struct seed *s, uint8_t which, uint8_t mut, uint16_t seed)
{
	put(s, FZ_EP_RESULT);
	put(s, which);
	put(s, mut);
	put16(s, seed);
}

static void
ep_submit(struct seed *s, uint8_t count, uint8_t b2, uint16_t seed)
{
	put(s, FZ_EP_SUBMIT);
	put(s, count);
	put(s, b2);
	put16(s, seed);
}

static void
gen_endpoint(void)
{
	struct seed s;
	int i;

	s.n = 0;
	ep_poll(&s, 0);
	ep_answer(&s, 1);
	save("endpoint", "answer", &s);

	/* Two more operations (one in place, one MAX): 14 chunks through a window of 4. */
	s.n = 0;
	ep_submit(&s, 160, SHR_OP_SUM, 5);
	ep_submit(&s, 40, SHR_OP_MAX | 8, 6);
	ep_poll(&s, 0);
	for (i = 0; i < 5; i++)
		ep_answer(&s, (uint16_t)(i * 16));
	save("endpoint", "stream", &s);

	/* Every single mutation of a RESULT, then the right one. */
	s.n = 0;
	ep_poll(&s, 0);
	for (i = 0; i < 8; i++)
		ep_result(&s, 0, (uint8_t)(1u << i), 3);
	ep_result(&s, 0, 0, 3);
	ep_result(&s, 0, 0, 3);
	ep_answer(&s, 2);
	save("endpoint", "mutations", &s);

	/* Send failures, late results, resends. */
	s.n = 0;
	put(&s, FZ_EP_SENDMODE);
	put(&s, 3 << 1);
	ep_poll(&s, 0);
	ep_poll(&s, 10);
	ep_poll(&s, 0x40 | 20);
	put(&s, FZ_EP_SENDMODE);
	put(&s, (2 << 1) | 1);
	ep_poll(&s, 0x80 | 5);
	ep_poll(&s, 0x80 | 30);
	ep_answer(&s, 4);
	save("endpoint", "send_faults", &s);

	/* No results at all: the endpoint times out. */
	s.n = 0;
	for (i = 0; i < 16; i++)
		ep_poll(&s, 0xc0 | 10);
	ep_submit(&s, 10, SHR_OP_SUM, 1);
	save("endpoint", "timeout", &s);

	/* An ABORT for the job. */
	s.n = 0;
	ep_poll(&s, 0);
	ep_result(&s, 1, 0, 8);
	put(&s, FZ_EP_MSG);
	put(&s, SHR_MSG_ABORT);
	put(&s, 0);			/* job 7 */
	put16(&s, 0);			/* rank */
	put(&s, 3);
	put(&s, 0);
	put(&s, 0);
	put(&s, 0);
	put(&s, 0);
	put(&s, 0);
	put(&s, 0);
	put(&s, 0);
	put(&s, ETIMEDOUT);
	put(&s, 0);
	put16(&s, 0);
	ep_poll(&s, 1);
	ep_submit(&s, 10, SHR_OP_SUM, 1);
	save("endpoint", "abort", &s);

	/* More operations than the endpoint keeps (-EBUSY, then old handles forgotten). */
	s.n = 0;
	for (i = 0; i < 70; i++)
		ep_submit(&s, 3, SHR_OP_SUM, (uint16_t)i);
	ep_poll(&s, 0);
	for (i = 0; i < 20; i++) {
		ep_answer(&s, (uint16_t)i);
		if (i % 5 == 0)
			ep_submit(&s, 20, SHR_OP_MIN, (uint16_t)i);
	}
	save("endpoint", "many_ops", &s);

	/* An empty operation and one refused op. */
	s.n = 0;
	ep_submit(&s, 0, SHR_OP_SUM, 0);
	ep_submit(&s, 20, 4, 0);
	ep_poll(&s, 0);
	ep_answer(&s, 9);
	ep_answer(&s, 10);
	save("endpoint", "empty_and_bad_op", &s);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
		perror(outdir);
		return 1;
	}
	gen_proto();
	gen_agg();
	gen_endpoint();
	return 0;
}
