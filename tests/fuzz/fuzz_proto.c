/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Fuzz target for the wire protocol. Every input is used three ways:
 * 1. as a raw message: shr_proto_validate() must give the reason of the first failing check
 *    (checked independently for length, magic, version, type, kind, a MAC trailer's length
 *    and the CRC, which a MAC trailer is outside of), must leave msg alone when it refuses,
 *    and when it accepts, shr_proto_build() on the decoded fields and the
 *    same payload must give back the identical 64 header bytes;
 * 2. as field values: a message built from them must validate (DATA/RESULT with a valid
 *    dtype, op and count) and decode to the same fields, a wrong count must be BAD_LEN and a
 *    flipped payload or header bit must be BAD_CRC;
 * 3. as CRC input: the hardware, software and dispatching CRC32C agree, also when continued
 *    from a split point.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <shr_proto.h>

#include "fuzz_common.h"

static uint16_t
get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int
type_has_dtype_op(unsigned int type)
{
	return type == SHR_MSG_DATA || type == SHR_MSG_RESULT;
}

static void
check_names(const struct shr_proto_msg *m)
{
	FZ_CHECK(shr_proto_type_str(m->type) != NULL, "type_str NULL");
	FZ_CHECK(shr_proto_dtype_str(m->dtype) != NULL, "dtype_str NULL");
	FZ_CHECK(shr_proto_op_str(m->op) != NULL, "op_str NULL");
	if (m->dtype > 0 && m->dtype < SHR_DTYPE_MAX)
		FZ_CHECK(shr_proto_dtype_parse(shr_proto_dtype_str(m->dtype)) == m->dtype,
			 "dtype %u name does not parse back", m->dtype);
	if (m->op < SHR_OP_MAX_)
		FZ_CHECK(shr_proto_op_parse(shr_proto_op_str(m->op)) == m->op,
			 "op %u name does not parse back", m->op);
}

static int
msg_equal(const struct shr_proto_msg *a, const struct shr_proto_msg *b)
{
	return a->type == b->type && a->dtype == b->dtype && a->op == b->op &&
		a->ver == b->ver && a->rank == b->rank && a->world == b->world &&
		a->flags == b->flags && a->job == b->job && a->slot == b->slot &&
		a->count == b->count && a->tensor == b->tensor && a->step == b->step &&
		a->offset == b->offset && a->aux == b->aux && a->kind == b->kind &&
		a->root == b->root && a->token == b->token && a->feedback == b->feedback;
}

/* 1. The input as a raw message. */
static void
fuzz_raw(const uint8_t *data, size_t size)
{
	struct shr_proto_msg m, untouched;
	enum shr_proto_reason r;
	uint8_t hdr[SHR_PROTO_HDR_LEN];
	size_t body;
	uint32_t crc;
	int mac;

	memset(&m, 0xa5, sizeof(m));
	untouched = m;
	r = shr_proto_validate(data, size, &m);
	FZ_CHECK((unsigned int)r < SHR_PROTO_UNKNOWN_JOB, "validate returned %d", r);
	FZ_CHECK(shr_proto_reason_str(r) != NULL, "reason_str NULL");

	/* The payload under the CRC: all after the header but a MAC trailer (flag SHR_FLAG_MAC,
	 * not a JOIN, where the flag only asks for the MAC). */
	body = size >= SHR_PROTO_HDR_LEN ? size - SHR_PROTO_HDR_LEN : 0;
	mac = size >= SHR_PROTO_HDR_LEN && (get_be16(data + 20) & SHR_FLAG_MAC) &&
	      data[3] != SHR_MSG_JOIN;	/* flags: bytes 20..21 */

	/* The checks whose order the header documents, done independently. */
	if (size < SHR_PROTO_HDR_LEN) {
		FZ_CHECK(r == SHR_PROTO_SHORT, "short frame (%zu) gave %d", size, r);
	} else if (((unsigned int)data[0] << 8 | data[1]) != SHR_PROTO_MAGIC) {
		FZ_CHECK(r == SHR_PROTO_BAD_MAGIC, "bad magic gave %d", r);
	} else if (data[2] != SHR_PROTO_VERSION) {
		FZ_CHECK(r == SHR_PROTO_BAD_VERSION, "bad version gave %d", r);
	} else if (data[3] == 0 || data[3] >= SHR_MSG_TYPE_MAX || data[44] >= SHR_KIND_MAX ||
		   data[45] != 0) {
		FZ_CHECK(r == SHR_PROTO_BAD_TYPE, "bad type %u / kind %u / byte 45 %u gave %d",
			 data[3], data[44], data[45], r);
	} else if (mac && body < SHR_PROTO_MAC_LEN) {
		FZ_CHECK(r == SHR_PROTO_BAD_LEN, "MAC flag, %zu bytes after the header: %d", body,
			 r);
	} else if (r == SHR_PROTO_OK || r == SHR_PROTO_BAD_CRC) {
		if (mac)
			body -= SHR_PROTO_MAC_LEN;
		crc = shr_crc32c_sw(0, data, SHR_PROTO_CRC_SPAN);
		crc = shr_crc32c_sw(crc, data + SHR_PROTO_HDR_LEN, body);
		FZ_CHECK((crc == get_be32(data + SHR_PROTO_CRC_SPAN)) == (r == SHR_PROTO_OK),
			 "validate said %d but the CRC %s", r,
			 r == SHR_PROTO_OK ? "is wrong" : "is right");
	}

	if (r != SHR_PROTO_OK) {
		FZ_CHECK(memcmp(&m, &untouched, sizeof(m)) == 0, "msg written on refusal %d", r);
		return;
	}

	FZ_CHECK(m.type == data[3], "decoded type %u != %u", m.type, data[3]);
	FZ_CHECK(m.ver <= 1, "decoded ver %u", m.ver);
	FZ_CHECK(m.slot <= SHR_PROTO_SLOT_MASK, "decoded slot %#x has the version bit", m.slot);
	if (type_has_dtype_op(m.type)) {
		FZ_CHECK(m.dtype > 0 && m.dtype < SHR_DTYPE_MAX, "accepted dtype %u", m.dtype);
		FZ_CHECK(m.op < SHR_OP_MAX_, "accepted op %u", m.op);
		if (m.flags & SHR_FLAG_NOPAYLOAD)
			FZ_CHECK(body == 0 && m.kind != SHR_KIND_ALLREDUCE,
				 "accepted a header-only %s of kind %u with %zu payload bytes",
				 shr_proto_type_str(m.type), m.kind, body);
		else
			FZ_CHECK((uint64_t)m.count * shr_proto_dtype_size(m.dtype) == body,
				 "accepted count %u with %zu payload bytes", m.count, body);
	} else {
		/* Control messages: no payload, or a JOIN / JOIN_ACK admission block. */
		FZ_CHECK(body == 0 ||
			 ((m.type == SHR_MSG_JOIN || m.type == SHR_MSG_JOIN_ACK) &&
			  body == SHR_PROTO_ADM_LEN),
			 "accepted a %s with %zu payload bytes", shr_proto_type_str(m.type), body);
	}
	check_names(&m);

	/* Round trip: the decoded fields and the same payload give the same header. */
	shr_proto_build(hdr, &m, data + SHR_PROTO_HDR_LEN, body);
	FZ_CHECK(memcmp(hdr, data, SHR_PROTO_HDR_LEN) == 0,
		 "round trip of a valid %s message changed the header", shr_proto_type_str(m.type));
}

/* 2. The input as field values of a message to build. */
static void
fuzz_build(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct shr_proto_msg in, out;
	enum shr_proto_reason r;
	const uint8_t *pl;
	unsigned int esize;
	size_t plen, flip;
	uint8_t *buf;
	uint8_t mode;

	memset(&in, 0, sizeof(in));
	mode = fz_u8(&f);
	in.type = fz_u8(&f) % (SHR_MSG_TYPE_MAX + 1);
	in.dtype = fz_u8(&f) % (SHR_DTYPE_MAX + 1);
	in.op = fz_u8(&f) % (SHR_OP_MAX_ + 1);
	in.ver = fz_u8(&f) & 1;
	in.rank = fz_u16(&f);
	in.world = fz_u16(&f);
	in.flags = fz_u16(&f);
	in.job = fz_u32(&f);
	in.slot = fz_u32(&f) & SHR_PROTO_SLOT_MASK;
	in.tensor = fz_u32(&f);
	in.step = fz_u32(&f);
	in.offset = fz_u64(&f);
	in.aux = fz_u32(&f);
	in.kind = fz_u8(&f) % (SHR_KIND_MAX + 1);
	in.root = fz_u16(&f);
	in.token = fz_u64(&f);
	in.feedback = fz_u32(&f);
	plen = fz_bytes(&f, f.n, &pl);
	esize = shr_proto_dtype_size(in.dtype);
	if (esize != 0) {
		plen -= plen % esize;
		in.count = (uint32_t)(plen / esize);
	} else {
		in.count = (uint32_t)plen;
	}
	if (mode & 1)			/* A count that does not match the payload. */
		in.count += 1u + (mode >> 1);
	/* Header-only (a relay round's non-source, or a RESULT's acknowledgement) when mode
	 * says so and the kind allows it; otherwise the flag off. */
	if (type_has_dtype_op(in.type))
		in.flags &= (uint16_t)~SHR_FLAG_NOPAYLOAD;
	if ((mode & 7) == 6 && type_has_dtype_op(in.type) && in.kind != SHR_KIND_ALLREDUCE &&
	    in.kind < SHR_KIND_MAX && in.count > 0) {
		in.flags |= SHR_FLAG_NOPAYLOAD;
		plen = 0;
	}

	/* Built without a MAC trailer: the flag that says one follows stays off (a JOIN's only
	 * asks for the MAC). The trailer itself is lib/mac's (unit test mac). */
	if (in.type != SHR_MSG_JOIN)
		in.flags &= (uint16_t)~SHR_FLAG_MAC;

	buf = malloc(SHR_PROTO_HDR_LEN + plen);
	FZ_CHECK(buf != NULL, "malloc");
	memcpy(buf + SHR_PROTO_HDR_LEN, pl, plen);
	shr_proto_build(buf, &in, buf + SHR_PROTO_HDR_LEN, plen);

	r = shr_proto_validate(buf, SHR_PROTO_HDR_LEN + plen, &out);
	if (r == SHR_PROTO_OK)
		FZ_CHECK(msg_equal(&in, &out), "a built %s message decodes to other fields",
			 shr_proto_type_str(in.type));
	if (in.type == 0 || in.type >= SHR_MSG_TYPE_MAX || in.kind >= SHR_KIND_MAX)
		FZ_CHECK(r == SHR_PROTO_BAD_TYPE, "type %u kind %u gave %d", in.type, in.kind, r);
	if (type_has_dtype_op(in.type) && esize != 0 && in.op < SHR_OP_MAX_ && in.count > 0 &&
	    in.kind < SHR_KIND_MAX) {
		if (mode & 1)
			FZ_CHECK(r == SHR_PROTO_BAD_LEN, "count %u for %zu bytes gave %d",
				 in.count, plen, r);
		else
			FZ_CHECK(r == SHR_PROTO_OK, "a valid %s message gave %s",
				 shr_proto_type_str(in.type), shr_proto_reason_str(r));
	}

	/* Any single flipped bit past the version byte is caught by the CRC (or the type,
	 * dtype and op checks, which come first). */
	if (r == SHR_PROTO_OK) {
		flip = (size_t)fz_u16(&f) | (size_t)mode << 16;
		flip = 24 + flip % ((SHR_PROTO_HDR_LEN + plen) * 8 - 24);
		buf[flip / 8] ^= (uint8_t)(1u << (flip % 8));
		r = shr_proto_validate(buf, SHR_PROTO_HDR_LEN + plen, &out);
		FZ_CHECK(r != SHR_PROTO_OK, "bit %zu flipped and still valid", flip);
		if (flip / 8 == 45 || (flip / 8 == 44 && buf[44] >= SHR_KIND_MAX))
			/* reserved, or a kind that does not exist: before the CRC */
			FZ_CHECK(r == SHR_PROTO_BAD_TYPE, "bit %zu flipped gave %s", flip,
				 shr_proto_reason_str(r));
		else if (flip >= 64)	/* Past type/dtype/op: only the CRC sees it (or the
					 * length, for count, the NOPAYLOAD flag, kind). */
			FZ_CHECK(r == SHR_PROTO_BAD_CRC || r == SHR_PROTO_BAD_LEN,
				 "bit %zu flipped gave %s", flip, shr_proto_reason_str(r));
	}
	free(buf);
}

/* 3. The input as CRC data. */
static void
fuzz_crc(const uint8_t *data, size_t size)
{
	uint32_t sw, hw, fold, any, split, cont;

	sw = shr_crc32c_sw(0, data, size);
	hw = shr_crc32c_hw(0, data, size);
	fold = shr_crc32c_fold(0, data, size);
	any = shr_crc32c(0, data, size);
	FZ_CHECK(sw == hw, "crc sw %08x hw %08x over %zu bytes", sw, hw, size);
	FZ_CHECK(sw == fold, "crc sw %08x fold %08x over %zu bytes", sw, fold, size);
	FZ_CHECK(sw == any, "crc sw %08x dispatch %08x over %zu bytes", sw, any, size);
	split = size ? data[0] % (uint32_t)(size + 1) : 0;
	cont = shr_crc32c(shr_crc32c_hw(0, data, split), data + split, size - split);
	FZ_CHECK(cont == sw, "crc continued at %u: %08x != %08x", split, cont, sw);
	cont = shr_crc32c_hw(shr_crc32c_sw(0, data, split), data + split, size - split);
	FZ_CHECK(cont == sw, "crc sw then hw at %u: %08x != %08x", split, cont, sw);
	cont = shr_crc32c_fold(shr_crc32c_hw(0, data, split), data + split, size - split);
	FZ_CHECK(cont == sw, "crc hw then fold at %u: %08x != %08x", split, cont, sw);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_raw(data, size);
	fuzz_build(data, size);
	fuzz_crc(data, size);
	return 0;
}
