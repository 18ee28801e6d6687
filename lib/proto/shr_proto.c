/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "shr_proto.h"
#include "shr_proto_bytes.h"
#include "shr_proto_validate.h"

/* The header fields' byte offsets (SHR_PROTO_OFF()) are the diagram's in shr_proto.h. */
_Static_assert(SHR_PROTO_OFF(magic) == 0, "magic");
_Static_assert(SHR_PROTO_OFF(version) == 2, "version");
_Static_assert(SHR_PROTO_OFF(type) == 3, "type");
_Static_assert(SHR_PROTO_OFF(dtype) == 4, "dtype");
_Static_assert(SHR_PROTO_OFF(op) == 5, "op");
_Static_assert(SHR_PROTO_OFF(rank) == 6, "rank");
_Static_assert(SHR_PROTO_OFF(job) == 8, "job");
_Static_assert(SHR_PROTO_OFF(slot) == 12, "slot");
_Static_assert(SHR_PROTO_OFF(count) == 16, "count");
_Static_assert(SHR_PROTO_OFF(flags) == 20, "flags");
_Static_assert(SHR_PROTO_OFF(world) == 22, "world");
_Static_assert(SHR_PROTO_OFF(tensor) == 24, "tensor");
_Static_assert(SHR_PROTO_OFF(step) == 28, "step");
_Static_assert(SHR_PROTO_OFF(offset) == 32, "offset");
_Static_assert(SHR_PROTO_OFF(aux) == 40, "aux");
_Static_assert(SHR_PROTO_OFF(kind) == 44, "kind");
_Static_assert(SHR_PROTO_OFF(root) == 46, "root");
_Static_assert(SHR_PROTO_OFF(token) == 48, "token");
_Static_assert(SHR_PROTO_OFF(feedback) == 56, "feedback");
_Static_assert(SHR_PROTO_OFF(crc) == 60, "crc");
_Static_assert(SHR_PROTO_OFF(crc) == SHR_PROTO_CRC_SPAN, "CRC span");

unsigned int
shr_proto_dtype_size(unsigned int dtype)
{
	return shr_proto_esize(dtype);
}

void
shr_proto_build(void *hdr, const struct shr_proto_msg *msg, const void *payload,
		size_t payload_len)
{
	uint8_t *h = hdr;
	uint32_t slot = msg->slot & SHR_PROTO_SLOT_MASK;
	uint32_t crc;

	if (msg->ver)
		slot |= SHR_PROTO_SLOT_VER;
	shr_proto_put_be16(h + SHR_PROTO_OFF(magic), SHR_PROTO_MAGIC);
	h[SHR_PROTO_OFF(version)] = SHR_PROTO_VERSION;
	h[SHR_PROTO_OFF(type)] = msg->type;
	h[SHR_PROTO_OFF(dtype)] = msg->dtype;
	h[SHR_PROTO_OFF(op)] = msg->op;
	shr_proto_put_be16(h + SHR_PROTO_OFF(rank), msg->rank);
	shr_proto_put_be32(h + SHR_PROTO_OFF(job), msg->job);
	shr_proto_put_be32(h + SHR_PROTO_OFF(slot), slot);
	shr_proto_put_be32(h + SHR_PROTO_OFF(count), msg->count);
	shr_proto_put_be16(h + SHR_PROTO_OFF(flags), msg->flags);
	shr_proto_put_be16(h + SHR_PROTO_OFF(world), msg->world);
	shr_proto_put_be32(h + SHR_PROTO_OFF(tensor), msg->tensor);
	shr_proto_put_be32(h + SHR_PROTO_OFF(step), msg->step);
	shr_proto_put_be64(h + SHR_PROTO_OFF(offset), msg->offset);
	shr_proto_put_be32(h + SHR_PROTO_OFF(aux), msg->aux);
	h[SHR_PROTO_OFF(kind)] = msg->kind;
	h[SHR_PROTO_OFF(kind) + 1] = 0;
	shr_proto_put_be16(h + SHR_PROTO_OFF(root), msg->root);
	shr_proto_put_be64(h + SHR_PROTO_OFF(token), msg->token);
	shr_proto_put_be32(h + SHR_PROTO_OFF(feedback), msg->feedback);

	crc = shr_crc32c_hdr(h);
	if (payload_len > 0)
		crc = shr_crc32c(crc, payload, payload_len);
	shr_proto_put_be32(h + SHR_PROTO_OFF(crc), crc);
}

enum shr_proto_reason
shr_proto_validate(const void *buf, size_t len, struct shr_proto_msg *msg)
{
	return shr_proto_validate_in(buf, len, msg);
}

/* ---------------------------------------------------------------------------------------- */
/* Names. */

static const char *const reason_names[SHR_PROTO_REASON_MAX] = {
	[SHR_PROTO_OK] = "ok",
	[SHR_PROTO_SHORT] = "short",
	[SHR_PROTO_BAD_MAGIC] = "bad_magic",
	[SHR_PROTO_BAD_VERSION] = "bad_version",
	[SHR_PROTO_BAD_TYPE] = "bad_type",
	[SHR_PROTO_BAD_DTYPE] = "bad_dtype",
	[SHR_PROTO_BAD_OP] = "bad_op",
	[SHR_PROTO_BAD_LEN] = "bad_len",
	[SHR_PROTO_BAD_CRC] = "bad_crc",
	[SHR_PROTO_UNKNOWN_JOB] = "unknown_job",
	[SHR_PROTO_BAD_RANK] = "bad_rank",
	[SHR_PROTO_SPOOFED] = "spoofed",
	[SHR_PROTO_JOB_DTYPE] = "job_dtype",
	[SHR_PROTO_JOB_COUNT] = "job_count",
	[SHR_PROTO_BAD_SLOT] = "bad_slot",
	[SHR_PROTO_OUT_OF_STEP] = "out_of_step",
	[SHR_PROTO_BAD_TOKEN] = "bad_token",
	[SHR_PROTO_JOBS_FULL] = "jobs_full",
	[SHR_PROTO_POOL_FULL] = "pool_full",
	[SHR_PROTO_SRC_LIMIT] = "src_limit",
	[SHR_PROTO_STALE_JOIN] = "stale_join",
	[SHR_PROTO_NOT_ALLOWED] = "not_allowed",
	[SHR_PROTO_BAD_AUTH] = "bad_auth",
	[SHR_PROTO_STALE_AUTH] = "stale_auth",
	[SHR_PROTO_PATH_MTU] = "path_mtu",
	[SHR_PROTO_BAD_KIND] = "bad_kind",
	[SHR_PROTO_MAC_BAD] = "mac_bad",
	[SHR_PROTO_MAC_REPLAY] = "mac_replay",
	[SHR_PROTO_MAC_MISSING] = "mac_missing",
};

static const char *const type_names[SHR_MSG_TYPE_MAX] = {
	[SHR_MSG_DATA] = "data",
	[SHR_MSG_RESULT] = "result",
	[SHR_MSG_JOIN] = "join",
	[SHR_MSG_JOIN_ACK] = "join_ack",
	[SHR_MSG_LEAVE] = "leave",
	[SHR_MSG_LEAVE_ACK] = "leave_ack",
	[SHR_MSG_ABORT] = "abort",
};

static const char *const dtype_names[SHR_DTYPE_MAX] = {
	[SHR_DTYPE_INT32] = "int32",
	[SHR_DTYPE_FLOAT32] = "float32",
	[SHR_DTYPE_FLOAT16] = "float16",
	[SHR_DTYPE_BFLOAT16] = "bfloat16",
	[SHR_DTYPE_QINT32] = "qint32",
};

static const char *const op_names[SHR_OP_MAX_] = {
	[SHR_OP_SUM] = "sum",
	[SHR_OP_MIN] = "min",
	[SHR_OP_MAX] = "max",
	[SHR_OP_PROD] = "prod",
};

/* Aliases accepted by the parsers besides the canonical names. */
struct name_alias {
	const char *name;
	int value;
};

static const char *const kind_names[SHR_KIND_MAX] = {
	[SHR_KIND_ALLREDUCE] = "allreduce",
	[SHR_KIND_REDUCE] = "reduce",
	[SHR_KIND_REDUCE_SCATTER] = "reduce_scatter",
	[SHR_KIND_BROADCAST] = "broadcast",
	[SHR_KIND_ALLGATHER] = "allgather",
	[SHR_KIND_GATHER] = "gather",
	[SHR_KIND_SCATTER] = "scatter",
	[SHR_KIND_ALLTOALL] = "alltoall",
};

static const struct name_alias kind_aliases[] = {
	{ "reducescatter", SHR_KIND_REDUCE_SCATTER },
	{ "reduce-scatter", SHR_KIND_REDUCE_SCATTER },
	{ "bcast", SHR_KIND_BROADCAST },
	{ "all_gather", SHR_KIND_ALLGATHER },
	{ "all_to_all", SHR_KIND_ALLTOALL },
	{ "all-to-all", SHR_KIND_ALLTOALL },
	{ NULL, 0 },
};

static const struct name_alias dtype_aliases[] = {
	{ "i32", SHR_DTYPE_INT32 },
	{ "f32", SHR_DTYPE_FLOAT32 },
	{ "fp32", SHR_DTYPE_FLOAT32 },
	{ "float", SHR_DTYPE_FLOAT32 },
	{ "f16", SHR_DTYPE_FLOAT16 },
	{ "fp16", SHR_DTYPE_FLOAT16 },
	{ "half", SHR_DTYPE_FLOAT16 },
	{ "bf16", SHR_DTYPE_BFLOAT16 },
	{ NULL, 0 },
};

static const struct name_alias op_aliases[] = {
	{ "add", SHR_OP_SUM },
	{ "product", SHR_OP_PROD },
	{ "mul", SHR_OP_PROD },
	{ NULL, 0 },
};

static const char *
name_of(const char *const *names, unsigned int n, unsigned int v)
{
	if (v < n && names[v] != NULL)
		return names[v];
	return "unknown";
}

static int
parse_name(const char *const *names, unsigned int n, const struct name_alias *aliases,
	   const char *name)
{
	if (name == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		if (names[i] != NULL && strcasecmp(names[i], name) == 0)
			return (int)i;
	for (const struct name_alias *a = aliases; a->name != NULL; a++)
		if (strcasecmp(a->name, name) == 0)
			return a->value;
	return -EINVAL;
}

const char *
shr_proto_reason_str(unsigned int reason)
{
	return name_of(reason_names, SHR_PROTO_REASON_MAX, reason);
}

const char *
shr_proto_type_str(unsigned int type)
{
	return name_of(type_names, SHR_MSG_TYPE_MAX, type);
}

const char *
shr_proto_dtype_str(unsigned int dtype)
{
	return name_of(dtype_names, SHR_DTYPE_MAX, dtype);
}

const char *
shr_proto_op_str(unsigned int op)
{
	return name_of(op_names, SHR_OP_MAX_, op);
}

int
shr_proto_dtype_parse(const char *name)
{
	return parse_name(dtype_names, SHR_DTYPE_MAX, dtype_aliases, name);
}

int
shr_proto_op_parse(const char *name)
{
	return parse_name(op_names, SHR_OP_MAX_, op_aliases, name);
}

const char *
shr_proto_kind_str(unsigned int kind)
{
	return name_of(kind_names, SHR_KIND_MAX, kind);
}

int
shr_proto_kind_parse(const char *name)
{
	return parse_name(kind_names, SHR_KIND_MAX, kind_aliases, name);
}
