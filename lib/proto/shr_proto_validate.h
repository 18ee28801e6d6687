/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PROTO_VALIDATE_H
#define SHR_PROTO_VALIDATE_H

/**
 * @file
 * shr_proto_validate()'s body, inline (internal to shouter, not installed): the box's
 * shr_agg_input() runs it for every frame it receives, where the call and the function's own
 * register saves cost about 20 instructions per DATA. shr_proto_validate() is this and
 * nothing else, so both give the same reasons in the same order.
 */

#include <stddef.h>
#include <stdint.h>

#include "shr_proto.h"
#include "shr_proto_bytes.h"

/** Byte offset of a header field (struct shr_proto_hdr). */
#define SHR_PROTO_OFF(field) offsetof(struct shr_proto_hdr, field)

/** shr_proto_dtype_size(), inline. */
static inline unsigned int
shr_proto_esize(unsigned int dtype)
{
	switch (dtype) {
	case SHR_DTYPE_INT32:
	case SHR_DTYPE_FLOAT32:
	case SHR_DTYPE_QINT32:
		return 4;
	case SHR_DTYPE_FLOAT16:
	case SHR_DTYPE_BFLOAT16:
		return 2;
	default:
		return 0;
	}
}

/**
 * The fields of a header that shr_proto_validate_in() accepted, into msg (what it does after
 * its checks). Every field is read from the header, none kept from the checks: values held
 * over the CRC calls would be saved to the stack and back, which costs more than the reads.
 */
static inline void
shr_proto_decode_in(const void *buf, struct shr_proto_msg *msg)
{
	const uint8_t *h = buf;
	uint32_t slot;

	slot = shr_proto_be32(h + SHR_PROTO_OFF(slot));
	msg->type = h[SHR_PROTO_OFF(type)];
	msg->dtype = h[SHR_PROTO_OFF(dtype)];
	msg->op = h[SHR_PROTO_OFF(op)];
	msg->ver = (slot & SHR_PROTO_SLOT_VER) ? 1 : 0;
	msg->rank = shr_proto_be16(h + SHR_PROTO_OFF(rank));
	msg->world = shr_proto_be16(h + SHR_PROTO_OFF(world));
	msg->flags = shr_proto_be16(h + SHR_PROTO_OFF(flags));
	msg->job = shr_proto_be32(h + SHR_PROTO_OFF(job));
	msg->slot = slot & SHR_PROTO_SLOT_MASK;
	msg->count = shr_proto_be32(h + SHR_PROTO_OFF(count));
	msg->tensor = shr_proto_be32(h + SHR_PROTO_OFF(tensor));
	msg->step = shr_proto_be32(h + SHR_PROTO_OFF(step));
	msg->offset = shr_proto_be64(h + SHR_PROTO_OFF(offset));
	msg->aux = shr_proto_be32(h + SHR_PROTO_OFF(aux));
	msg->kind = h[SHR_PROTO_OFF(kind)];
	msg->root = shr_proto_be16(h + SHR_PROTO_OFF(root));
	msg->token = shr_proto_be64(h + SHR_PROTO_OFF(token));
	msg->feedback = shr_proto_be32(h + SHR_PROTO_OFF(feedback));
}

/** shr_proto_validate(), inline. */
static inline enum shr_proto_reason
shr_proto_validate_in(const void *buf, size_t len, struct shr_proto_msg *msg)
{
	const uint8_t *h = buf;
	size_t payload_len;
	uint8_t type, dtype = 0, op = 0;
	uint32_t count, crc;

	if (len < SHR_PROTO_HDR_LEN)
		return SHR_PROTO_SHORT;
	if (shr_proto_be16(h + SHR_PROTO_OFF(magic)) != SHR_PROTO_MAGIC)
		return SHR_PROTO_BAD_MAGIC;
	if (h[SHR_PROTO_OFF(version)] != SHR_PROTO_VERSION)
		return SHR_PROTO_BAD_VERSION;
	type = h[SHR_PROTO_OFF(type)];
	if (type == 0 || type >= SHR_MSG_TYPE_MAX || h[SHR_PROTO_OFF(kind)] >= SHR_KIND_MAX ||
	    h[SHR_PROTO_OFF(kind) + 1] != 0)
		return SHR_PROTO_BAD_TYPE;

	dtype = h[SHR_PROTO_OFF(dtype)];
	op = h[SHR_PROTO_OFF(op)];
	count = shr_proto_be32(h + SHR_PROTO_OFF(count));
	payload_len = len - SHR_PROTO_HDR_LEN;
	if ((shr_proto_be16(h + SHR_PROTO_OFF(flags)) & SHR_FLAG_MAC) && type != SHR_MSG_JOIN) {
		/* the trailer (lib/mac) is neither payload nor under the CRC */
		if (payload_len < SHR_PROTO_MAC_LEN)
			return SHR_PROTO_BAD_LEN;
		payload_len -= SHR_PROTO_MAC_LEN;
	}
	switch (type) {
	case SHR_MSG_DATA:
	case SHR_MSG_RESULT:
		if (shr_proto_esize(dtype) == 0)
			return SHR_PROTO_BAD_DTYPE;
		if (op >= SHR_OP_MAX_)
			return SHR_PROTO_BAD_OP;
		if (shr_proto_be16(h + SHR_PROTO_OFF(flags)) & SHR_FLAG_NOPAYLOAD) {
			if (payload_len != 0 || h[SHR_PROTO_OFF(kind)] == SHR_KIND_ALLREDUCE)
				return SHR_PROTO_BAD_LEN;
			break;
		}
		/* 64-bit product: a 32-bit count times 2 or 4 cannot wrap it. */
		if ((uint64_t)count * shr_proto_esize(dtype) != (uint64_t)payload_len)
			return SHR_PROTO_BAD_LEN;
		break;
	case SHR_MSG_JOIN:
		if (shr_proto_esize(dtype) == 0)
			return SHR_PROTO_BAD_DTYPE;
		/* fall through */
	case SHR_MSG_JOIN_ACK:
		/* No payload, or the admission block. */
		if (payload_len != 0 && payload_len != SHR_PROTO_ADM_LEN)
			return SHR_PROTO_BAD_LEN;
		break;
	default:
		/* Control messages carry no payload; count is a plain field there. */
		if (payload_len != 0)
			return SHR_PROTO_BAD_LEN;
		break;
	}

	crc = shr_crc32c_hdr(h);
	if (payload_len > 0)
		crc = shr_crc32c(crc, h + SHR_PROTO_HDR_LEN, payload_len);
	if (crc != shr_proto_be32(h + SHR_PROTO_OFF(crc)))
		return SHR_PROTO_BAD_CRC;

	if (msg == NULL)
		return SHR_PROTO_OK;
	shr_proto_decode_in(h, msg);
	return SHR_PROTO_OK;
}

#endif /* SHR_PROTO_VALIDATE_H */
