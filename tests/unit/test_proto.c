/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Unit tests of the wire protocol (lib/proto): header layout, build -> validate round trips,
 * one test per validation reason, and the name tables. (CRC32C: test_proto_crc.c.)
 */

#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shr_proto.h"
#include "proto_test.h"

/* ---- helpers ---- */

static uint32_t
be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put32_at(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A plausible message of the given type, with distinct values in every field. */
static struct shr_proto_msg
sample_msg(unsigned int type, unsigned int dtype, uint32_t count)
{
	struct shr_proto_msg m = {
		.type = (uint8_t)type,
		.dtype = (uint8_t)dtype,
		.op = SHR_OP_MAX,
		.ver = 1,
		.rank = 0x0203,
		.world = 0x0405,
		.flags = SHR_FLAG_LAST | SHR_FLAG_RETX,
		.job = 0x11223344,
		.slot = 0x55667788 & SHR_PROTO_SLOT_MASK,
		.count = count,
		.tensor = 0x99aabbcc,
		.step = 0xddeeff01,
		.offset = 0x0123456789abcdefull,
		.aux = 0xfedcba98,
		.kind = SHR_KIND_ALLREDUCE,
		.root = 0x0607,
		.token = 0x1122334455667788ull,
		.feedback = 0x8899aabb,
	};
	return m;
}

static int
has_payload(unsigned int type)
{
	return type == SHR_MSG_DATA || type == SHR_MSG_RESULT;
}

/* Build a DATA frame of count int32 elements (random payload) in buf; returns its length. */
static size_t
build_data(uint8_t *buf, uint32_t count)
{
	struct shr_proto_msg m = sample_msg(SHR_MSG_DATA, SHR_DTYPE_INT32, count);
	size_t plen = (size_t)count * 4;

	fill_random(buf + SHR_PROTO_HDR_LEN, plen);
	shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, plen);
	return SHR_PROTO_HDR_LEN + plen;
}

static void
assert_msg_equal(const struct shr_proto_msg *a, const struct shr_proto_msg *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->dtype, b->dtype);
	assert_int_equal(a->op, b->op);
	assert_int_equal(a->ver, b->ver);
	assert_int_equal(a->rank, b->rank);
	assert_int_equal(a->world, b->world);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->job, b->job);
	assert_int_equal(a->slot, b->slot);
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->tensor, b->tensor);
	assert_int_equal(a->step, b->step);
	assert_true(a->offset == b->offset);
	assert_int_equal(a->aux, b->aux);
}

/*
 * Validate and check the reason; on failure also check that msg was left untouched.
 */
static void
expect_reason(const void *buf, size_t len, enum shr_proto_reason want)
{
	struct shr_proto_msg m, sentinel;

	memset(&m, 0xa5, sizeof(m));
	memcpy(&sentinel, &m, sizeof(m));
	assert_string_equal(shr_proto_reason_str(shr_proto_validate(buf, len, &m)),
			    shr_proto_reason_str(want));
	if (want != SHR_PROTO_OK)
		assert_memory_equal(&m, &sentinel, sizeof(m));
	/* msg is optional. */
	assert_int_equal(shr_proto_validate(buf, len, NULL), want);
}

/* ---- build / validate ---- */

static void
test_header_layout(void **state)
{
	uint8_t raw[SHR_PROTO_HDR_LEN + 8 + 1];
	uint8_t *h = raw + 1;	/* odd address on purpose */
	uint8_t payload[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct shr_proto_msg m = sample_msg(SHR_MSG_RESULT, SHR_DTYPE_FLOAT16, 4);
	uint32_t crc;

	(void)state;
	m.op = SHR_OP_PROD;
	m.rank = SHR_PROTO_RANK_ALL;
	shr_proto_build(h, &m, payload, sizeof(payload));
	memcpy(h + SHR_PROTO_HDR_LEN, payload, sizeof(payload));

	assert_int_equal(h[0], 0x53);
	assert_int_equal(h[1], 0x48);
	assert_int_equal(h[2], SHR_PROTO_VERSION);
	assert_int_equal(h[3], SHR_MSG_RESULT);
	assert_int_equal(h[4], SHR_DTYPE_FLOAT16);
	assert_int_equal(h[5], SHR_OP_PROD);
	assert_int_equal(h[6], 0xff);
	assert_int_equal(h[7], 0xff);
	assert_int_equal(be32_at(h + 8), 0x11223344);
	assert_int_equal(be32_at(h + 12), SHR_PROTO_SLOT_VER | 0x55667788);
	assert_int_equal(be32_at(h + 16), 4);
	assert_int_equal(h[20], 0x00);
	assert_int_equal(h[21], SHR_FLAG_LAST | SHR_FLAG_RETX);
	assert_int_equal(h[22], 0x04);
	assert_int_equal(h[23], 0x05);
	assert_int_equal(be32_at(h + 24), 0x99aabbcc);
	assert_int_equal(be32_at(h + 28), 0xddeeff01);
	assert_int_equal(be32_at(h + 32), 0x01234567);
	assert_int_equal(be32_at(h + 36), 0x89abcdef);
	assert_int_equal(be32_at(h + 40), 0xfedcba98);
	assert_int_equal(h[44], SHR_KIND_ALLREDUCE);
	assert_int_equal(h[45], 0);
	assert_int_equal(h[46], 0x06);
	assert_int_equal(h[47], 0x07);
	assert_int_equal(be32_at(h + 48), 0x11223344);
	assert_int_equal(be32_at(h + 52), 0x55667788);
	assert_int_equal(be32_at(h + 56), 0x8899aabb);
	assert_int_equal(SHR_PROTO_CRC_SPAN, 60);
	assert_int_equal(SHR_PROTO_HDR_LEN, 64);
	crc = ref_crc32c(ref_crc32c(0, h, SHR_PROTO_CRC_SPAN), payload, sizeof(payload));
	assert_int_equal(be32_at(h + 60), crc);

	/* The packed struct view agrees with the byte offsets. */
	struct shr_proto_hdr hv;

	memcpy(&hv, h, sizeof(hv));
	assert_int_equal(hv.type, SHR_MSG_RESULT);
	assert_int_equal(hv.op, SHR_OP_PROD);

	/* Version bit clear, slot bits beyond the mask dropped. */
	m.ver = 0;
	m.slot = 0xffffffff;
	shr_proto_build(h, &m, payload, sizeof(payload));
	assert_int_equal(be32_at(h + 12), SHR_PROTO_SLOT_MASK);
}

static void
test_roundtrip_all_types(void **state)
{
	uint8_t raw[SHR_PROTO_HDR_LEN + 4 * 300 + 8];

	(void)state;
	for (unsigned int type = 1; type < SHR_MSG_TYPE_MAX; type++) {
		for (unsigned int dtype = 1; dtype < SHR_DTYPE_MAX; dtype++) {
			for (unsigned int op = 0; op < SHR_OP_MAX_; op++) {
				uint32_t count = has_payload(type) ? 1 + (uint32_t)(rnd() % 300)
								   : 256;
				size_t plen = has_payload(type) ?
					(size_t)count * shr_proto_dtype_size(dtype) : 0;
				size_t misalign = rnd() % 8;
				uint8_t *buf = raw + misalign;
				struct shr_proto_msg in = sample_msg(type, dtype, count), out;

				in.op = (uint8_t)op;
				in.ver = (uint8_t)(rnd() & 1);
				in.offset = rnd();
				in.job = (uint32_t)rnd();
				fill_random(buf + SHR_PROTO_HDR_LEN, plen);
				shr_proto_build(buf, &in, buf + SHR_PROTO_HDR_LEN, plen);
				memset(&out, 0, sizeof(out));
				assert_int_equal(shr_proto_validate(buf, SHR_PROTO_HDR_LEN + plen,
								    &out), SHR_PROTO_OK);
				assert_msg_equal(&out, &in);
			}
		}
	}
}

static void
test_payload_separate(void **state)
{
	/* The CRC covers the payload even when it lives elsewhere (iovec-style send). */
	uint8_t payload[64], frame[SHR_PROTO_HDR_LEN + 64];
	struct shr_proto_msg m = sample_msg(SHR_MSG_DATA, SHR_DTYPE_FLOAT32, 16);

	(void)state;
	fill_random(payload, sizeof(payload));
	shr_proto_build(frame, &m, payload, sizeof(payload));
	memcpy(frame + SHR_PROTO_HDR_LEN, payload, sizeof(payload));
	expect_reason(frame, sizeof(frame), SHR_PROTO_OK);
	frame[SHR_PROTO_HDR_LEN] ^= 0x01;
	expect_reason(frame, sizeof(frame), SHR_PROTO_BAD_CRC);
}

static void
test_reason_short(void **state)
{
	uint8_t buf[SHR_PROTO_HDR_LEN + 16];
	size_t len = build_data(buf, 4);

	(void)state;
	expect_reason(buf, len, SHR_PROTO_OK);
	for (size_t l = 0; l < SHR_PROTO_HDR_LEN; l++)
		expect_reason(buf, l, SHR_PROTO_SHORT);
	/* A control message is exactly the header: 63 bytes is short, 64 is fine. */
	struct shr_proto_msg m = sample_msg(SHR_MSG_LEAVE, 0, 0);

	shr_proto_build(buf, &m, NULL, 0);
	expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_OK);
	for (size_t l = 0; l < SHR_PROTO_HDR_LEN; l++)
		expect_reason(buf, l, SHR_PROTO_SHORT);
}

static void
test_reason_bad_magic(void **state)
{
	uint8_t buf[SHR_PROTO_HDR_LEN + 16];
	size_t len = build_data(buf, 4);

	(void)state;
	for (int byte = 0; byte < 2; byte++)
		for (int bit = 0; bit < 8; bit++) {
			buf[byte] ^= (uint8_t)(1u << bit);
			expect_reason(buf, len, SHR_PROTO_BAD_MAGIC);
			buf[byte] ^= (uint8_t)(1u << bit);
		}
	/* Byte-swapped magic (host order written by mistake). */
	buf[0] = 0x48;
	buf[1] = 0x53;
	expect_reason(buf, len, SHR_PROTO_BAD_MAGIC);
}

static void
test_reason_bad_version(void **state)
{
	static const uint8_t bad[] = { 0, 1, 3, 0x82, 0xff };
	uint8_t buf[SHR_PROTO_HDR_LEN + 16];
	size_t len = build_data(buf, 4);

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		buf[2] = bad[i];
		expect_reason(buf, len, SHR_PROTO_BAD_VERSION);
	}
	buf[2] = SHR_PROTO_VERSION;
	expect_reason(buf, len, SHR_PROTO_OK);
}

static void
test_reason_bad_type(void **state)
{
	static const uint8_t bad[] = { 0, SHR_MSG_TYPE_MAX, 9, 0x81, 0xff };
	uint8_t buf[SHR_PROTO_HDR_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		/* A correct CRC over the bad type: the type check alone must refuse it. */
		struct shr_proto_msg m = sample_msg(bad[i], SHR_DTYPE_INT32, 0);

		shr_proto_build(buf, &m, NULL, 0);
		expect_reason(buf, sizeof(buf), SHR_PROTO_BAD_TYPE);
	}
	/* A kind this version does not know, with a correct CRC: refused as a bad type. */
	for (unsigned int kind = SHR_KIND_MAX; kind < 256; kind += 51) {
		struct shr_proto_msg m = sample_msg(SHR_MSG_LEAVE, SHR_DTYPE_INT32, 0);

		m.kind = (uint8_t)kind;
		shr_proto_build(buf, &m, NULL, 0);
		expect_reason(buf, sizeof(buf), SHR_PROTO_BAD_TYPE);
		m.kind = SHR_KIND_ALLREDUCE;
		shr_proto_build(buf, &m, NULL, 0);
		expect_reason(buf, sizeof(buf), SHR_PROTO_OK);
	}
	/* A non-zero reserved byte 45, CRC recomputed: refused before the CRC. */
	{
		struct shr_proto_msg m = sample_msg(SHR_MSG_LEAVE, SHR_DTYPE_INT32, 0);
		uint32_t crc;

		shr_proto_build(buf, &m, NULL, 0);
		buf[45] = 1;
		crc = ref_crc32c(0, buf, SHR_PROTO_CRC_SPAN);
		put32_at(buf + SHR_PROTO_CRC_SPAN, crc);
		expect_reason(buf, sizeof(buf), SHR_PROTO_BAD_TYPE);
	}
}

static void
test_reason_bad_dtype(void **state)
{
	static const uint8_t bad[] = { 0, SHR_DTYPE_MAX, 7, 0xff };
	uint8_t buf[SHR_PROTO_HDR_LEN + 64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		for (unsigned int type = 1; type < SHR_MSG_TYPE_MAX; type++) {
			/* count 0: no payload, so only the dtype can be wrong. */
			struct shr_proto_msg m = sample_msg(type, bad[i], 0);

			m.op = SHR_OP_SUM;
			shr_proto_build(buf, &m, NULL, 0);
			if (has_payload(type) || type == SHR_MSG_JOIN)
				expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_BAD_DTYPE);
			else
				/* The other types do not look at dtype. */
				expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_OK);
		}
	}
	/* The dtype check comes before the op check. */
	struct shr_proto_msg m = sample_msg(SHR_MSG_DATA, 0, 0);

	m.op = 0xee;
	shr_proto_build(buf, &m, NULL, 0);
	expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_BAD_DTYPE);
}

static void
test_reason_bad_op(void **state)
{
	static const uint8_t bad[] = { SHR_OP_MAX_, 5, 0x80, 0xff };
	uint8_t buf[SHR_PROTO_HDR_LEN + 64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		for (unsigned int type = 1; type < SHR_MSG_TYPE_MAX; type++) {
			struct shr_proto_msg m = sample_msg(type, SHR_DTYPE_FLOAT32, 0);

			m.op = bad[i];
			shr_proto_build(buf, &m, NULL, 0);
			if (has_payload(type))
				expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_BAD_OP);
			else
				expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_OK);
		}
	}
	/* The op check comes before the length check. */
	struct shr_proto_msg m = sample_msg(SHR_MSG_RESULT, SHR_DTYPE_INT32, 3);

	m.op = 0x10;
	shr_proto_build(buf, &m, NULL, 0);
	expect_reason(buf, SHR_PROTO_HDR_LEN + 5, SHR_PROTO_BAD_OP);
}

static void
test_reason_bad_len(void **state)
{
	uint8_t buf[SHR_PROTO_HDR_LEN + 4 * 64 + 8];

	(void)state;
	fill_random(buf, sizeof(buf));
	for (unsigned int type = SHR_MSG_DATA; type <= SHR_MSG_RESULT; type++) {
		for (unsigned int dtype = 1; dtype < SHR_DTYPE_MAX; dtype++) {
			uint32_t count = 64;
			size_t good = (size_t)count * shr_proto_dtype_size(dtype);
			struct shr_proto_msg m = sample_msg(type, dtype, count);

			m.op = SHR_OP_SUM;
			/* Correct CRC over whatever payload length is sent: only len is wrong. */
			for (int d = -1; d <= 1; d++) {
				size_t plen = good + (size_t)d;

				shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, plen);
				expect_reason(buf, SHR_PROTO_HDR_LEN + plen,
					      d == 0 ? SHR_PROTO_OK : SHR_PROTO_BAD_LEN);
			}
			/* Payload present but count 0, and count > 0 with no payload. */
			m.count = 0;
			shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, 4);
			expect_reason(buf, SHR_PROTO_HDR_LEN + 4, SHR_PROTO_BAD_LEN);
			m.count = 1;
			shr_proto_build(buf, &m, NULL, 0);
			expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_BAD_LEN);
		}
	}
	/*
	 * Control messages carry no payload, whatever their count field says; JOIN and
	 * JOIN_ACK may carry the admission block, and only it.
	 */
	for (unsigned int type = SHR_MSG_JOIN; type < SHR_MSG_TYPE_MAX; type++) {
		struct shr_proto_msg m = sample_msg(type, SHR_DTYPE_INT32, 1);
		int adm = type == SHR_MSG_JOIN || type == SHR_MSG_JOIN_ACK;

		shr_proto_build(buf, &m, NULL, 0);
		expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_OK);
		for (size_t extra = 1; extra <= SHR_PROTO_ADM_LEN + 8; extra++) {
			shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, extra);
			expect_reason(buf, SHR_PROTO_HDR_LEN + extra,
				      adm && extra == SHR_PROTO_ADM_LEN ? SHR_PROTO_OK :
				      SHR_PROTO_BAD_LEN);
		}
	}
}

/*
 * A header-only DATA or RESULT (SHR_FLAG_NOPAYLOAD: a relay round's non-source DATA, the
 * RESULT of a round whose payload is for other ranks) carries no payload bytes, whatever its
 * count: with any payload it is refused, even a CRC-correct one of count elements; and no
 * allreduce round is header-only.
 */
static void
test_reason_nopayload(void **state)
{
	static const uint8_t kinds[] = { SHR_KIND_REDUCE, SHR_KIND_BROADCAST, SHR_KIND_GATHER,
					 SHR_KIND_ALLTOALL };
	uint8_t buf[SHR_PROTO_HDR_LEN + 4 * 64];

	(void)state;
	fill_random(buf, sizeof(buf));
	for (unsigned int type = SHR_MSG_DATA; type <= SHR_MSG_RESULT; type++) {
		for (unsigned int dtype = 1; dtype < SHR_DTYPE_MAX; dtype++) {
			for (size_t k = 0; k < sizeof(kinds); k++) {
				struct shr_proto_msg m = sample_msg(type, dtype, 64), out;
				size_t full = 64 * (size_t)shr_proto_dtype_size(dtype);
				const size_t plens[] = { 1, 2, 4, full - 1, full };

				m.op = SHR_OP_SUM;
				m.kind = kinds[k];
				m.flags |= SHR_FLAG_NOPAYLOAD;
				shr_proto_build(buf, &m, NULL, 0);
				expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_OK);
				assert_int_equal(shr_proto_validate(buf, SHR_PROTO_HDR_LEN, &out),
						 SHR_PROTO_OK);
				assert_int_equal(out.count, 64);
				assert_int_equal(out.kind, kinds[k]);
				assert_true(out.flags & SHR_FLAG_NOPAYLOAD);
				for (size_t i = 0; i < sizeof(plens) / sizeof(plens[0]); i++) {
					shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, plens[i]);
					expect_reason(buf, SHR_PROTO_HDR_LEN + plens[i],
						      SHR_PROTO_BAD_LEN);
				}
				/* the same without the flag: the payload of count elements */
				m.flags &= (uint16_t)~SHR_FLAG_NOPAYLOAD;
				shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, full);
				expect_reason(buf, SHR_PROTO_HDR_LEN + full, SHR_PROTO_OK);
				shr_proto_build(buf, &m, NULL, 0);
				expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_BAD_LEN);
			}
			/* allreduce: never header-only, with or without bytes */
			struct shr_proto_msg m = sample_msg(type, dtype, 64);

			m.op = SHR_OP_SUM;
			m.flags |= SHR_FLAG_NOPAYLOAD;
			shr_proto_build(buf, &m, NULL, 0);
			expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_BAD_LEN);
			shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, 4);
			expect_reason(buf, SHR_PROTO_HDR_LEN + 4, SHR_PROTO_BAD_LEN);
		}
	}
}

/*
 * SHR_FLAG_MAC: the SHR_PROTO_MAC_LEN bytes after the payload are the trailer, neither
 * payload nor under the CRC; a message too short to hold it is refused. A JOIN with the flag
 * (asking for a job with the MAC) carries no trailer.
 */
static void
test_reason_mac_trailer(void **state)
{
	uint8_t buf[SHR_PROTO_HDR_LEN + 4 * 16 + SHR_PROTO_ADM_LEN + SHR_PROTO_MAC_LEN];
	const size_t plen = 4 * 16;
	struct shr_proto_msg m = sample_msg(SHR_MSG_DATA, SHR_DTYPE_FLOAT32, 16);

	(void)state;
	fill_random(buf, sizeof(buf));
	m.op = SHR_OP_SUM;
	m.flags |= SHR_FLAG_MAC;
	shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, plen);
	expect_reason(buf, SHR_PROTO_HDR_LEN + plen + SHR_PROTO_MAC_LEN, SHR_PROTO_OK);
	/* the trailer is not under the CRC */
	buf[SHR_PROTO_HDR_LEN + plen] ^= 0x01;
	buf[SHR_PROTO_HDR_LEN + plen + SHR_PROTO_MAC_LEN - 1] ^= 0x80;
	expect_reason(buf, SHR_PROTO_HDR_LEN + plen + SHR_PROTO_MAC_LEN, SHR_PROTO_OK);
	/* the payload is */
	buf[SHR_PROTO_HDR_LEN + plen - 1] ^= 0x01;
	expect_reason(buf, SHR_PROTO_HDR_LEN + plen + SHR_PROTO_MAC_LEN, SHR_PROTO_BAD_CRC);
	buf[SHR_PROTO_HDR_LEN + plen - 1] ^= 0x01;
	/* a trailer a byte short or long: the payload's length is wrong */
	expect_reason(buf, SHR_PROTO_HDR_LEN + plen + SHR_PROTO_MAC_LEN - 1, SHR_PROTO_BAD_LEN);
	expect_reason(buf, SHR_PROTO_HDR_LEN + plen + SHR_PROTO_MAC_LEN + 1, SHR_PROTO_BAD_LEN);
	expect_reason(buf, SHR_PROTO_HDR_LEN + plen, SHR_PROTO_BAD_LEN);

	/* header-only messages: exactly the trailer after the header */
	for (unsigned int type = SHR_MSG_DATA; type < SHR_MSG_TYPE_MAX; type++) {
		struct shr_proto_msg c = sample_msg(type, SHR_DTYPE_INT32, 8);

		if (type == SHR_MSG_JOIN)
			continue;
		c.op = SHR_OP_SUM;
		c.flags |= SHR_FLAG_MAC;
		if (has_payload(type)) {
			c.kind = SHR_KIND_BROADCAST;
			c.flags |= SHR_FLAG_NOPAYLOAD;
		}
		shr_proto_build(buf, &c, NULL, 0);
		expect_reason(buf, SHR_PROTO_HDR_LEN + SHR_PROTO_MAC_LEN, SHR_PROTO_OK);
		for (size_t l = SHR_PROTO_HDR_LEN; l < SHR_PROTO_HDR_LEN + SHR_PROTO_MAC_LEN; l++)
			expect_reason(buf, l, SHR_PROTO_BAD_LEN);
		expect_reason(buf, SHR_PROTO_HDR_LEN + SHR_PROTO_MAC_LEN + 1, SHR_PROTO_BAD_LEN);
	}

	/* a JOIN with the flag: no trailer; its admission block is its payload, as without */
	struct shr_proto_msg j = sample_msg(SHR_MSG_JOIN, SHR_DTYPE_FLOAT32, 0);

	j.flags = SHR_FLAG_MAC;
	shr_proto_build(buf, &j, NULL, 0);
	expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_OK);
	expect_reason(buf, SHR_PROTO_HDR_LEN + SHR_PROTO_MAC_LEN, SHR_PROTO_BAD_LEN);
	shr_proto_build(buf, &j, buf + SHR_PROTO_HDR_LEN, SHR_PROTO_ADM_LEN);
	expect_reason(buf, SHR_PROTO_HDR_LEN + SHR_PROTO_ADM_LEN, SHR_PROTO_OK);
	expect_reason(buf, SHR_PROTO_HDR_LEN + SHR_PROTO_ADM_LEN + SHR_PROTO_MAC_LEN,
		      SHR_PROTO_BAD_LEN);
}

static void
test_reason_count_overflow(void **state)
{
	/*
	 * count * size wraps in 32 bits to a small number; the payload length equals that
	 * wrapped product, so a 32-bit multiplication would wrongly accept it.
	 */
	static const struct {
		uint8_t dtype;
		uint32_t count;
		size_t plen;
	} cases[] = {
		{ SHR_DTYPE_INT32, 0x40000001u, 4 },
		{ SHR_DTYPE_FLOAT32, 0x40000000u, 0 },
		{ SHR_DTYPE_QINT32, 0x40000010u, 64 },
		{ SHR_DTYPE_FLOAT16, 0x80000002u, 4 },
		{ SHR_DTYPE_BFLOAT16, 0x80000000u, 0 },
		{ SHR_DTYPE_FLOAT16, 0x80000020u, 64 },
	};
	uint8_t buf[SHR_PROTO_HDR_LEN + 256];

	(void)state;
	fill_random(buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct shr_proto_msg m = sample_msg(SHR_MSG_DATA, cases[i].dtype, cases[i].count);

		m.op = SHR_OP_SUM;
		shr_proto_build(buf, &m, buf + SHR_PROTO_HDR_LEN, cases[i].plen);
		expect_reason(buf, SHR_PROTO_HDR_LEN + cases[i].plen, SHR_PROTO_BAD_LEN);
	}
}

static void
test_reason_bad_crc(void **state)
{
	uint8_t buf[SHR_PROTO_HDR_LEN + 4 * 40];
	size_t len = build_data(buf, 40);

	(void)state;
	expect_reason(buf, len, SHR_PROTO_OK);
	for (size_t byte = 0; byte < len; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			buf[byte] ^= (uint8_t)(1u << bit);
			/*
			 * Bytes 0..5 (magic, version, type, dtype, op), 16..19 (count), the
			 * NOPAYLOAD flag (byte 21, bit 2), the MAC flag (byte 21, bit 5: its
			 * trailer must then fit) and 44..45 (kind, reserved) are
			 * checked before the CRC and may be refused for that first; every
			 * other bit must be caught by the CRC.
			 */
			if (byte < 6 || (byte >= 16 && byte < 20) || (byte == 21 && bit == 2) ||
			    (byte == 21 && bit == 5) || byte == 44 || byte == 45)
				assert_int_not_equal(shr_proto_validate(buf, len, NULL),
						     SHR_PROTO_OK);
			else
				expect_reason(buf, len, SHR_PROTO_BAD_CRC);
			buf[byte] ^= (uint8_t)(1u << bit);
		}
	}
	expect_reason(buf, len, SHR_PROTO_OK);

	/* A stored CRC off by one, and a CRC written little-endian by mistake. */
	uint32_t crc = be32_at(buf + SHR_PROTO_CRC_SPAN);

	put32_at(buf + SHR_PROTO_CRC_SPAN, crc + 1);
	expect_reason(buf, len, SHR_PROTO_BAD_CRC);
	put32_at(buf + SHR_PROTO_CRC_SPAN, __builtin_bswap32(crc));
	expect_reason(buf, len, SHR_PROTO_BAD_CRC);
	put32_at(buf + SHR_PROTO_CRC_SPAN, crc);
	expect_reason(buf, len, SHR_PROTO_OK);

	/* Same for a control message (header only). */
	struct shr_proto_msg m = sample_msg(SHR_MSG_JOIN_ACK, 0, 0);

	shr_proto_build(buf, &m, NULL, 0);
	for (size_t byte = 6; byte < SHR_PROTO_HDR_LEN; byte++) {
		buf[byte] ^= 0x10;
		/* bytes 44..45 (kind, reserved) are checked before the CRC */
		expect_reason(buf, SHR_PROTO_HDR_LEN, byte == 44 || byte == 45 ?
			      SHR_PROTO_BAD_TYPE : SHR_PROTO_BAD_CRC);
		buf[byte] ^= 0x10;
	}
	expect_reason(buf, SHR_PROTO_HDR_LEN, SHR_PROTO_OK);
}

/* ---- names ---- */

static int
is_snake(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

static void
check_distinct_names(const char *(*fn)(unsigned int), unsigned int lo, unsigned int hi)
{
	for (unsigned int i = lo; i < hi; i++) {
		const char *a = fn(i);

		assert_non_null(a);
		assert_true(is_snake(a));
		assert_string_not_equal(a, "unknown");
		for (unsigned int j = lo; j < i; j++)
			assert_string_not_equal(a, fn(j));
	}
	assert_string_equal(fn(hi), "unknown");
	assert_string_equal(fn(hi + 1), "unknown");
	assert_string_equal(fn(0xffffffffu), "unknown");
}

static void
test_reason_names(void **state)
{
	(void)state;
	check_distinct_names(shr_proto_reason_str, 0, SHR_PROTO_REASON_MAX);
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_SHORT), "short");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_BAD_MAGIC), "bad_magic");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_BAD_VERSION), "bad_version");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_BAD_CRC), "bad_crc");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_BAD_LEN), "bad_len");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_UNKNOWN_JOB), "unknown_job");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_SPOOFED), "spoofed");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_OUT_OF_STEP), "out_of_step");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_BAD_TOKEN), "bad_token");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_JOBS_FULL), "jobs_full");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_POOL_FULL), "pool_full");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_SRC_LIMIT), "src_limit");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_STALE_JOIN), "stale_join");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_NOT_ALLOWED), "not_allowed");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_BAD_AUTH), "bad_auth");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_STALE_AUTH), "stale_auth");
	assert_string_equal(shr_proto_reason_str(SHR_PROTO_PATH_MTU), "path_mtu");
}

static void
test_type_names(void **state)
{
	(void)state;
	check_distinct_names(shr_proto_type_str, 1, SHR_MSG_TYPE_MAX);
	assert_string_equal(shr_proto_type_str(0), "unknown");
	assert_string_equal(shr_proto_type_str(SHR_MSG_DATA), "data");
	assert_string_equal(shr_proto_type_str(SHR_MSG_JOIN_ACK), "join_ack");
	assert_string_equal(shr_proto_type_str(SHR_MSG_ABORT), "abort");
}

static void
test_dtype_names(void **state)
{
	(void)state;
	check_distinct_names(shr_proto_dtype_str, 1, SHR_DTYPE_MAX);
	assert_string_equal(shr_proto_dtype_str(0), "unknown");
	for (unsigned int d = 1; d < SHR_DTYPE_MAX; d++)
		assert_int_equal(shr_proto_dtype_parse(shr_proto_dtype_str(d)), (int)d);
	assert_string_equal(shr_proto_dtype_str(SHR_DTYPE_INT32), "int32");
	assert_string_equal(shr_proto_dtype_str(SHR_DTYPE_BFLOAT16), "bfloat16");
	assert_int_equal(shr_proto_dtype_parse("FLOAT32"), SHR_DTYPE_FLOAT32);
	assert_int_equal(shr_proto_dtype_parse("fp16"), SHR_DTYPE_FLOAT16);
	assert_int_equal(shr_proto_dtype_parse("bf16"), SHR_DTYPE_BFLOAT16);
	assert_int_equal(shr_proto_dtype_parse("unknown"), -EINVAL);
	assert_int_equal(shr_proto_dtype_parse(""), -EINVAL);
	assert_int_equal(shr_proto_dtype_parse("int3"), -EINVAL);
	assert_int_equal(shr_proto_dtype_parse("int32 "), -EINVAL);
	assert_int_equal(shr_proto_dtype_parse(NULL), -EINVAL);

	assert_int_equal(shr_proto_dtype_size(SHR_DTYPE_INT32), 4);
	assert_int_equal(shr_proto_dtype_size(SHR_DTYPE_FLOAT32), 4);
	assert_int_equal(shr_proto_dtype_size(SHR_DTYPE_QINT32), 4);
	assert_int_equal(shr_proto_dtype_size(SHR_DTYPE_FLOAT16), 2);
	assert_int_equal(shr_proto_dtype_size(SHR_DTYPE_BFLOAT16), 2);
	assert_int_equal(shr_proto_dtype_size(0), 0);
	assert_int_equal(shr_proto_dtype_size(SHR_DTYPE_MAX), 0);
	assert_int_equal(shr_proto_dtype_size(0xffffffffu), 0);
}

static void
test_op_names(void **state)
{
	(void)state;
	check_distinct_names(shr_proto_op_str, 0, SHR_OP_MAX_);
	for (unsigned int o = 0; o < SHR_OP_MAX_; o++)
		assert_int_equal(shr_proto_op_parse(shr_proto_op_str(o)), (int)o);
	assert_string_equal(shr_proto_op_str(SHR_OP_SUM), "sum");
	assert_string_equal(shr_proto_op_str(SHR_OP_PROD), "prod");
	assert_int_equal(shr_proto_op_parse("MAX"), SHR_OP_MAX);
	assert_int_equal(shr_proto_op_parse("unknown"), -EINVAL);
	assert_int_equal(shr_proto_op_parse(""), -EINVAL);
	assert_int_equal(shr_proto_op_parse("su"), -EINVAL);
	assert_int_equal(shr_proto_op_parse(NULL), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_layout),
		cmocka_unit_test(test_roundtrip_all_types),
		cmocka_unit_test(test_payload_separate),
		cmocka_unit_test(test_reason_short),
		cmocka_unit_test(test_reason_bad_magic),
		cmocka_unit_test(test_reason_bad_version),
		cmocka_unit_test(test_reason_bad_type),
		cmocka_unit_test(test_reason_bad_dtype),
		cmocka_unit_test(test_reason_bad_op),
		cmocka_unit_test(test_reason_bad_len),
		cmocka_unit_test(test_reason_nopayload),
		cmocka_unit_test(test_reason_mac_trailer),
		cmocka_unit_test(test_reason_count_overflow),
		cmocka_unit_test(test_reason_bad_crc),
		cmocka_unit_test(test_reason_names),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_dtype_names),
		cmocka_unit_test(test_op_names),
	};

	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
