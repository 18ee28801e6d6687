/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PROTO_H
#define SHR_PROTO_H

/**
 * @file
 * shouter wire protocol.
 *
 * A shouter message travels as the payload of a UDP datagram (Ethernet / IPv4 / UDP /
 * shouter header / payload). The header is fixed size (64 bytes); all its fields are in
 * network byte order. Payload elements are little-endian. This is version 2 of the header: it
 * adds the round kind and root (collectives), the incarnation token and a feedback word to
 * version 1, whose 48 bytes it keeps in place.
 *
 * @verbatim
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-------------------------------+---------------+---------------+
 * |         magic 0x5348 "SH"     |  version (2)  |     type      |  0
 * +---------------+---------------+---------------+---------------+
 * |     dtype     |      op       |             rank              |  4
 * +---------------+---------------+-------------------------------+
 * |                            job id                             |  8
 * +-+-------------------------------------------------------------+
 * |V|                  slot (index within the job)                |  12
 * +-+-------------------------------------------------------------+
 * |                  element count (in this payload)              |  16
 * +-------------------------------+-------------------------------+
 * |             flags             |          world size           |  20
 * +-------------------------------+-------------------------------+
 * |                           tensor id                           |  24
 * +---------------------------------------------------------------+
 * |                             step                              |  28
 * +---------------------------------------------------------------+
 * |     element offset (64 bits, in elements; JOIN_ACK and the     |  32
 * |     ABORT that answers a JOIN: its nonce; LEAVE: the JOIN's)  |  36
 * +---------------------------------------------------------------+
 * |             aux (per type: scale, status, chunk size)         |  40
 * +---------------+---------------+-------------------------------+
 * |  kind (0)     |  reserved (0) |          root (0)             |  44
 * +---------------+---------------+-------------------------------+
 * |        token: the job incarnation's 64-bit token (JOIN: the   |  48
 * |        member's nonce, random, non-zero)                      |  52
 * +---------------------------------------------------------------+
 * |          feedback (per type; 0 where not defined)             |  56
 * +---------------------------------------------------------------+
 * |        CRC32C over bytes 0..59 followed by the payload        |  60
 * +---------------------------------------------------------------+
 * |                 payload: count elements, little-endian        |  64
 * |                             ...                               |
 * @endverbatim
 *
 * Incarnations. Every JOIN carries a nonce that the member's process drew at random (64
 * bits, non-zero). The box answers with the token of the job's current incarnation (64 random
 * bits, non-zero) and echoes the JOIN's nonce in the offset field, so that the member takes
 * only the answer to its own JOIN. Every later message of the job, in either direction,
 * carries the token; each side drops (and counts) a message with another token, so no message
 * of one run of a job can reach another run, and a sender off the path has to guess 64 bits.
 * A JOIN with a new nonce for a rank already bound starts a new incarnation (a restarted
 * worker): the old one is aborted, its slots start from fresh state, and a new token is
 * drawn.
 *
 * Kinds. kind and root (bytes 44..47) name the round's collective (enum shr_proto_kind;
 * another value is refused as SHR_PROTO_BAD_TYPE) and a rank it needs. Byte 45 is reserved:
 * sent as 0, and a message with any other value is refused as SHR_PROTO_BAD_TYPE (so a
 * decoded message rebuilds to the same bytes). A round is either summed (every rank's DATA
 * carries count elements, reduced by op) or relayed (one rank, its source, sends the
 * elements; every other rank sends a header-only DATA, flag SHR_FLAG_NOPAYLOAD, with the
 * same identity, so that window, flow control and loss recovery stay those of allreduce).
 * The result goes with its payload to the round's destinations and as a header-only RESULT
 * (SHR_FLAG_NOPAYLOAD, same count) to every other rank, which needs it only to know that
 * the round is over. Per kind (n: the elements per rank block of the collective; an
 * endpoint splits each block into chunks, so no round straddles two blocks):
 *
 * @verbatim
 *  kind               round   root (bytes 46..47)   aux              result's payload to
 *  0 allreduce        summed  0                     QINT32 scale     every rank
 *  1 reduce           summed  destination           QINT32 scale     root
 *  2 reduce_scatter   summed  destination: owner    QINT32 scale     root
 *                             of the round's block
 *  3 broadcast        relay   source               SHR_PROTO_RANK_ALL every rank but root
 *  4 allgather        relay   source: owner of the SHR_PROTO_RANK_ALL every rank but root
 *                             round's block
 *  5 gather           relay   source: the block's   destination      aux
 *                             owner                 (the gather root)
 *  6 scatter          relay   source (scatter root) destination:     aux
 *                                                   block's owner
 *  7 alltoall         relay   source (rank i)       destination (j)  aux
 * @endverbatim
 *
 * The box checks that root (and, for relay rounds, aux) name ranks of the job, that a relay
 * round's source is not its destination (an endpoint copies such blocks locally and sends
 * no round for them), that a relay DATA carries a payload if and only if its rank is the
 * source, and that no summed DATA is header-only (else SHR_PROTO_BAD_KIND); kind, root and
 * aux are part of a round's identity, so ranks that disagree on the collective, its root or
 * the block a round belongs to are out of step. Gather, scatter and all-to-all address a
 * round's offset in the space of all blocks: (source block, destination block) in rank
 * order, n elements each.
 *
 * Feedback of a RESULT (congestion control: a rank tells a slow path from a slow peer). One
 * RESULT header serves every member, so the word describes the round, not the receiver: bits
 * 31..16 = the rank whose DATA completed the round (the last to arrive; SHR_PROTO_RANK_ALL:
 * not known, e.g. a result sent again), bits 15..0 = how long the round's slot waited between
 * its first DATA and that last one, in units of SHR_PROTO_FB_WAIT_UNIT_NS, saturating at
 * 0xffff. A rank that is not the last one waited at most that long at the box for its
 * peers; the last one waited nothing. The feedback word of DATA is reserved (0).
 *
 * Admission. A JOIN or JOIN_ACK carries either no payload or the SHR_PROTO_ADM_LEN bytes of
 * the admission block (lib/auth/shr_auth.h draws it): a box whose job requires a secret
 * answers a JOIN without the block with JOIN_ACK status ENOKEY and a challenge in the block;
 * the member's next JOIN carries the challenge and its proof of the secret.
 *
 * V is the slot version (SwitchML's two copies per slot). The CRC is CRC32C (Castagnoli,
 * reflected, init and final xor 0xffffffff), computed over header bytes 0..59 and then the
 * payload bytes, and stored big-endian.
 *
 * Per type, the fields mean:
 * - DATA (worker -> box): one chunk of rank's input. slot/V/tensor/step/offset/count name
 *   the round; aux carries the block scale for SHR_DTYPE_QINT32 (lib/comm sends round(x 2^s)
 *   and s in aux: every rank of the round must send the same, which the box checks as part
 *   of the round's identity, and the RESULT carries it back), else 0. lib/endpoint
 *   sends in tensor and step the caller's tensor id and step (e.g. the training step: the
 *   seed API's allreduce(tensor, step)), and in offset the place of the chunk's first
 *   element in the member's whole stream (its collectives' round spaces end to end, never
 *   reused); steps never decrease, so (step, offset) increases from one round of a slot to
 *   the next, the order in which an ordered job expects them.
 * - RESULT (box -> worker): the aggregate of a completed round; same identity fields as the
 *   DATA that completed it; one header + payload (one CRC) serves every member and only the
 *   Ethernet/IPv4/UDP headers differ per member. rank is SHR_PROTO_RANK_ALL, or a hint the
 *   same for every member: the one rank that the round open in slot - lanes (modulo the
 *   job's window; lanes from the JOIN_ACK) still waits for (lib/agg/shr_agg.h, "Hints"); a
 *   member may ignore it.
 * - JOIN (worker -> box): rank asks to join job with world size; slot = window (slots)
 *   requested (0: the box's default), count = elements per chunk (0: the largest that
 *   every member's path and the box's port carry, agreed when the job fills), feedback =
 *   the largest chunk (elements) this member's path carries without fragments (0: not
 *   known), dtype = the job's dtype, flags = SHR_FLAG_GROUP if the member can receive at a
 *   result group, SHR_FLAG_REPRO for a reproducible job (the
 *   box keeps such a job's slots in its exact region; a JOIN whose flag differs from the
 *   job's is refused like a dtype mismatch, SHR_PROTO_JOB_DTYPE, and one that finds no room
 *   there like a full pool), token = the member's nonce (random, non-zero, drawn once per
 *   communicator: the box
 *   answers a JOIN that repeats the nonce of a member of an incarnation that has ended with
 *   that end again, and never lets it start or join another), root and tensor = in a tree
 *   of boxes, the first of the tree ranks the member stands for and how many (0: a plain
 *   member, its rank alone; shr_agg.h, "Trees"). Payload: none, or the admission block
 *   (challenge and proof).
 * - JOIN_ACK (box -> worker): offset = the nonce of the JOIN it answers; aux = status: 0
 *   (token = the incarnation's token, slot = window granted, count = elements per chunk
 *   granted, flags = SHR_FLAG_REPRO echoed and SHR_FLAG_GROUP (feedback = the result group's
 *   IPv4 address, root = its UDP port; see the flag), tensor = lanes: the box listens on lanes
 *   consecutive UDP ports from its base port, and DATA for slot s goes to port base +
 *   (s mod lanes), so a NIC can steer each lane to its own queue and lcore), EINPROGRESS
 *   (the job is still filling: feedback = how many ms the box still waits for the other
 *   ranks before it gives up on the job), ENOKEY (the job requires a secret: the payload
 *   is the admission block with the challenge to answer),
 *   or another positive errno (refused: EPERM, the sender is outside the box's allowlist;
 *   EACCES, the proof is wrong; EMSGSIZE, the job's chunk, in count, does not fit the
 *   member's path or the box's port: feedback = the largest chunk that fits). Sent to all
 *   members when the last rank has joined, again to a member that repeats its JOIN, or at
 *   once to the sender (EINPROGRESS, or an error).
 * - LEAVE / LEAVE_ACK: a rank leaves the job; the job is freed when all have left. A LEAVE
 *   with aux ECONNABORTED (a box of a tree whose own members' job was aborted) ends the
 *   running incarnation at once: the box aborts it with ECONNABORTED naming that rank.
 *   LEAVE_ACK aux = 0, or ENOENT when the box does not know the job (already freed). A LEAVE
 *   of a rank still waiting for the job to fill unbinds it. A LEAVE's offset is the nonce of
 *   the leaving process's JOIN (0: not given): the box refuses one whose nonce is not the
 *   rank's bound process's (an earlier process of the rank) as of another token.
 * - ABORT (box -> worker): the incarnation was torn down; aux = reason (positive errno), rank
 *   = the rank that caused it (for example, the silent one, or the one that restarted with
 *   ESTALE), or SHR_PROTO_RANK_ALL (ESHUTDOWN: the aggregator is shutting down; ETIMEDOUT:
 *   the job was idle too long). The box sends it again to a member whose DATA or JOIN shows
 *   it missed it; in answer to a JOIN, offset echoes the JOIN's nonce. aux EPROTO: members
 *   called different collectives (kind, root, tensor, step or count of a round differ):
 *   rank = the member whose DATA disagreed with the open round, and kind, root, tensor, step
 *   and count = its round as it sent it; slot = a member of the open round (its lowest
 *   rank), offset = that round's tensor << 32 | step, feedback = its count, op = its kind,
 *   flags = its root (the box sends the same ABORT again to a member that missed it).
 *   Other reasons that name a rank: feedback = that rank's IPv4 address. Flag
 *   SHR_FLAG_UPSTREAM: the box's upstream box ended the job (see the flag).
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHR_PROTO_MAGIC 0x5348	/**< "SH" */
#define SHR_PROTO_VERSION 2	/**< Header version this code speaks. */
#define SHR_PROTO_HDR_LEN 64	/**< Bytes of the shouter header. */
#define SHR_PROTO_CRC_SPAN 60	/**< Header bytes covered by the CRC (before the CRC field). */
#define SHR_PROTO_UDP_PORT 47000 /**< Default UDP port of the aggregator. */
#define SHR_PROTO_SLOT_VER 0x80000000u /**< Version bit in the slot field. */
#define SHR_PROTO_SLOT_MASK 0x7fffffffu /**< Slot index bits in the slot field. */
#define SHR_PROTO_MAX_WORLD 4096 /**< Largest world size the protocol accepts. */
#define SHR_PROTO_RANK_ALL 0xffff /**< Rank field of a RESULT: for every member. */
#define SHR_PROTO_ADM_LEN 48	/**< Bytes of the admission block of a JOIN / JOIN_ACK. */
#define SHR_PROTO_MAC_LEN 28	/**< Bytes of the MAC trailer (SHR_FLAG_MAC). */
#define SHR_PROTO_FB_WAIT_UNIT_NS 4000u /**< Unit of a RESULT feedback's wait (4 us). */

/** A RESULT's feedback word: the rank that completed the round and the slot's wait (ns). */
static inline uint32_t
shr_proto_fb_make(uint16_t last_rank, uint64_t wait_ns)
{
	uint64_t u = wait_ns / SHR_PROTO_FB_WAIT_UNIT_NS;

	return (uint32_t)last_rank << 16 | (uint32_t)(u > 0xffff ? 0xffff : u);
}

/** The rank whose DATA completed a RESULT's round (SHR_PROTO_RANK_ALL: not known). */
static inline uint16_t
shr_proto_fb_last(uint32_t feedback)
{
	return (uint16_t)(feedback >> 16);
}

/** How long a RESULT's round waited at the box for its last DATA, in ns (saturated). */
static inline uint64_t
shr_proto_fb_wait_ns(uint32_t feedback)
{
	return (uint64_t)(feedback & 0xffff) * SHR_PROTO_FB_WAIT_UNIT_NS;
}

/** Message types. */
enum shr_proto_type {
	SHR_MSG_DATA = 1,
	SHR_MSG_RESULT = 2,
	SHR_MSG_JOIN = 3,
	SHR_MSG_JOIN_ACK = 4,
	SHR_MSG_LEAVE = 5,
	SHR_MSG_LEAVE_ACK = 6,
	SHR_MSG_ABORT = 7,
	SHR_MSG_TYPE_MAX = 8	/**< One past the last valid type. */
};

/** Element types on the wire. */
enum shr_proto_dtype {
	SHR_DTYPE_INT32 = 1,	/**< int32, exact (two's complement wrap). */
	SHR_DTYPE_FLOAT32 = 2,	/**< IEEE binary32, summed in float32 by the box. */
	SHR_DTYPE_FLOAT16 = 3,	/**< IEEE binary16 on the wire, float32 accumulation. */
	SHR_DTYPE_BFLOAT16 = 4,	/**< bfloat16 on the wire, float32 accumulation. */
	SHR_DTYPE_QINT32 = 5,	/**< float32 quantised to int32 with a block scale (aux). */
	SHR_DTYPE_MAX = 6	/**< One past the last valid dtype. */
};

/** Reduction operations. */
enum shr_proto_op {
	SHR_OP_SUM = 0,
	SHR_OP_MIN = 1,
	SHR_OP_MAX = 2,
	SHR_OP_PROD = 3,
	SHR_OP_MAX_ = 4		/**< One past the last valid op. */
};

/** Round kinds (the kind field; see the table in the file's documentation). */
enum shr_proto_kind {
	SHR_KIND_ALLREDUCE = 0,
	SHR_KIND_REDUCE = 1,
	SHR_KIND_REDUCE_SCATTER = 2,
	SHR_KIND_BROADCAST = 3,	/**< The first relay kind: kinds from here on are relayed. */
	SHR_KIND_ALLGATHER = 4,
	SHR_KIND_GATHER = 5,
	SHR_KIND_SCATTER = 6,
	SHR_KIND_ALLTOALL = 7,
	SHR_KIND_MAX = 8	/**< One past the last valid kind. */
};

/**
 * Whether a kind's rounds are relayed (one source, no sum) rather than summed.
 *
 * @param kind
 *   An enum shr_proto_kind value (< SHR_KIND_MAX).
 * @return
 *   1 or 0.
 */
static inline int
shr_proto_kind_relay(unsigned int kind)
{
	return kind >= SHR_KIND_BROADCAST;
}

/** Flags (bit values of the flags field). */
#define SHR_FLAG_RETX 0x0001	/**< DATA: this is a retransmission (for statistics only). */
#define SHR_FLAG_LAST 0x0002	/**< DATA/RESULT: last chunk of its tensor. */
/**
 * DATA/RESULT: header only. DATA: a rank that is not the source of a relay round takes part
 * in it; RESULT: the round is complete, and its payload is for other ranks. count is the
 * round's element count all the same; the message carries no payload bytes.
 */
#define SHR_FLAG_NOPAYLOAD 0x0004
/**
 * JOIN/JOIN_ACK: the job is reproducible: its float SUM results (float32, float16, bfloat16)
 * are the exact sum of the contributions rounded once, the same bits whatever order they
 * arrive in (lib/pool, "Reproducible sums"). Every JOIN of a job carries the same.
 */
#define SHR_FLAG_REPRO 0x0008
/**
 * ABORT: a box above this one in a tree of boxes ended the job, or the box's upstream
 * stopped answering: offset = the address (IPv4 << 16 | UDP port) of the box that blamed
 * (the upstream, or one further up whose ABORT came down the tree), slot = the rank of its
 * job it blamed (SHR_PROTO_RANK_ALL: none: the upstream box itself went silent), feedback =
 * that rank's IPv4 address (0: not known); aux is that box's reason.
 */
#define SHR_FLAG_UPSTREAM 0x0010
/**
 * Any type but JOIN: the message carries the job's message authentication code, a trailer
 * of SHR_PROTO_MAC_LEN bytes after its payload (lib/mac/shr_mac.h: sender id, counter,
 * AES-GMAC tag). The CRC covers the header and the payload, not the trailer; the length
 * checks of shr_proto_validate() apply to the message without it. JOIN: the member asks for
 * a job with the MAC (no trailer: the JOIN is covered by the admission proof); a JOIN whose
 * flag is not the job's policy is refused (JOIN_ACK EKEYREJECTED).
 */
#define SHR_FLAG_MAC 0x0020
/**
 * JOIN: the member can also receive RESULTs at a result group (its driver joins one). JOIN_ACK
 * (status 0): the job has a result group: each RESULT that goes to every member (the same
 * bytes for all: an allreduce's) goes out once, to feedback (the group's IPv4 address: a
 * multicast group, or the broadcast address of the box's segment) at UDP port root; the
 * member receives there as well as at its own address, where every other RESULT (a result
 * sent again, a relay round's) still comes. The box sets it only when every member's JOIN
 * carried it and it has a result group.
 */
#define SHR_FLAG_GROUP 0x0040

/**
 * Reasons a frame is refused. SHR_PROTO_OK is 0; the others are positive and distinct so
 * that an application can count each in an array indexed by the reason. The first group is
 * found by shr_proto_validate() (the aggregator also uses BAD_TYPE for a type that only it
 * sends, and BAD_OP for an op the dtype does not support); the second by the aggregator
 * against its job table and pool.
 */
enum shr_proto_reason {
	SHR_PROTO_OK = 0,
	SHR_PROTO_SHORT,	/**< Shorter than the header. */
	SHR_PROTO_BAD_MAGIC,	/**< Magic is not 0x5348. */
	SHR_PROTO_BAD_VERSION,	/**< Version this code does not speak. */
	SHR_PROTO_BAD_TYPE,	/**< Unknown message type. */
	SHR_PROTO_BAD_DTYPE,	/**< Unknown dtype (DATA, RESULT, JOIN). */
	SHR_PROTO_BAD_OP,	/**< Unknown op (DATA, RESULT). */
	SHR_PROTO_BAD_LEN,	/**< count * element size does not match the payload length. */
	SHR_PROTO_BAD_CRC,	/**< CRC32C mismatch. */
	/* Found by the aggregator, not by shr_proto_validate(). */
	SHR_PROTO_UNKNOWN_JOB,	/**< No such job (JOIN: job table full, or job aborted). */
	SHR_PROTO_BAD_RANK,	/**< Rank >= the job's world size, or world size mismatch. */
	SHR_PROTO_SPOOFED,	/**< Rank not bound to the sender's address. */
	SHR_PROTO_JOB_DTYPE,	/**< dtype differs from the job's. */
	SHR_PROTO_JOB_COUNT,	/**< count 0 or larger than the job's chunk size (JOIN: than
				     the box's largest chunk, or another chunk size). */
	SHR_PROTO_BAD_SLOT,	/**< Slot outside the job's window (JOIN: window mismatch, or
				     no free slots). */
	SHR_PROTO_OUT_OF_STEP,	/**< Tensor/step/offset/count/op differ from the slot round's. */
	SHR_PROTO_BAD_TOKEN,	/**< Token is not the job incarnation's (DATA, LEAVE), or a JOIN
				     without a nonce. */
	SHR_PROTO_JOBS_FULL,	/**< JOIN: the job table is full. */
	SHR_PROTO_POOL_FULL,	/**< JOIN: not enough free slots for the job's window. */
	SHR_PROTO_SRC_LIMIT,	/**< JOIN: the sender's address holds its share of jobs. */
	SHR_PROTO_STALE_JOIN,	/**< JOIN with the nonce of an incarnation that has ended. */
	SHR_PROTO_NOT_ALLOWED,	/**< JOIN from an address outside the box's allowlist. */
	SHR_PROTO_BAD_AUTH,	/**< JOIN whose proof is not that of the job's secret. */
	SHR_PROTO_STALE_AUTH,	/**< JOIN whose challenge this box did not make for this
				     sender and JOIN lately: replayed, forged or too late. */
	SHR_PROTO_PATH_MTU,	/**< JOIN: the job's chunk does not fit the member's path (its
				     feedback) or the box's port. */
	SHR_PROTO_BAD_KIND,	/**< DATA whose kind, root, destination (aux) or payload do not
				     fit together: a rank outside the job, a relay round whose
				     source is its destination, a payload from a rank that is
				     not the round's source (or none from the source), a
				     header-only DATA in a summed round. */
	SHR_PROTO_MAC_BAD,	/**< The job requires the MAC (lib/mac): wrong tag. */
	SHR_PROTO_MAC_REPLAY,	/**< Good tag, but a counter seen before or older than the
				     sender's replay window. */
	SHR_PROTO_MAC_MISSING,	/**< The job requires the MAC and the message has none. */
	SHR_PROTO_REASON_MAX	/**< Number of reasons (array size). */
};

/** The header, as on the wire (fields in network byte order). */
struct shr_proto_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t type;
	uint8_t dtype;
	uint8_t op;
	uint16_t rank;
	uint32_t job;
	uint32_t slot;		/**< SHR_PROTO_SLOT_VER | slot index. */
	uint32_t count;
	uint16_t flags;
	uint16_t world;
	uint32_t tensor;
	uint32_t step;
	uint64_t offset;
	uint32_t aux;
	uint8_t kind;
	uint8_t reserved;
	uint16_t root;
	uint64_t token;
	uint32_t feedback;
	uint32_t crc;
} __attribute__((packed));

_Static_assert(sizeof(struct shr_proto_hdr) == SHR_PROTO_HDR_LEN, "header size");

/** The header, decoded into host byte order. */
struct shr_proto_msg {
	uint8_t type;		/**< enum shr_proto_type */
	uint8_t dtype;		/**< enum shr_proto_dtype */
	uint8_t op;		/**< enum shr_proto_op */
	uint8_t ver;		/**< Slot version, 0 or 1. */
	uint16_t rank;
	uint16_t world;
	uint16_t flags;
	uint32_t job;
	uint32_t slot;		/**< Slot index within the job (without the version bit). */
	uint32_t count;		/**< Elements in the payload. */
	uint32_t tensor;
	uint32_t step;
	uint64_t offset;	/**< Element offset of the payload's first element. */
	uint32_t aux;
	uint8_t kind;		/**< enum shr_proto_kind */
	uint16_t root;		/**< Root rank of the round's collective (0 for allreduce). */
	uint64_t token;		/**< Incarnation token (JOIN: the member's nonce). */
	uint32_t feedback;	/**< Per type; see the file's documentation. */
};

/**
 * Size in bytes of one element of a dtype on the wire.
 *
 * @param dtype
 *   An enum shr_proto_dtype value.
 * @return
 *   2 or 4, or 0 if dtype is unknown.
 */
unsigned int shr_proto_dtype_size(unsigned int dtype);

/**
 * Write a header (with its CRC over the header and the given payload) into a buffer.
 *
 * The payload itself is not copied: the caller places it right after the header (or sends it
 * from elsewhere, as with an iovec); only its bytes enter the CRC.
 *
 * @param hdr
 *   Where to write SHR_PROTO_HDR_LEN bytes; any alignment.
 * @param msg
 *   Fields in host byte order.
 * @param payload
 *   Payload bytes (may be NULL when payload_len is 0).
 * @param payload_len
 *   Payload length in bytes.
 */
void shr_proto_build(void *hdr, const struct shr_proto_msg *msg, const void *payload,
		     size_t payload_len);

/**
 * Validate a shouter message (header + payload, from the start of the UDP payload) and
 * decode its header. Checks, in this order, and returns the first that fails:
 * -# len >= SHR_PROTO_HDR_LEN (SHR_PROTO_SHORT);
 * -# magic (SHR_PROTO_BAD_MAGIC), version (SHR_PROTO_BAD_VERSION), type and kind
 *    (SHR_PROTO_BAD_TYPE: an unknown type, a kind >= SHR_KIND_MAX, or a non-zero reserved
 *    byte 45);
 * -# dtype, for DATA, RESULT and JOIN only (SHR_PROTO_BAD_DTYPE);
 * -# op, for DATA and RESULT only (SHR_PROTO_BAD_OP);
 * -# length (SHR_PROTO_BAD_LEN): with flag SHR_FLAG_MAC (not a JOIN), len must hold the
 *    SHR_PROTO_MAC_LEN bytes of the trailer, and the checks below apply to len without them
 *    (the trailer is checked by lib/mac, after this); for DATA and RESULT,
 *    len - SHR_PROTO_HDR_LEN must equal count * shr_proto_dtype_size(dtype), computed in
 *    64 bits so that it cannot wrap, or 0 with flag SHR_FLAG_NOPAYLOAD (which an allreduce
 *    round never carries); the
 *    other types carry no payload, so len must be exactly SHR_PROTO_HDR_LEN (their count
 *    is a plain field), except that a JOIN or JOIN_ACK may carry exactly SHR_PROTO_ADM_LEN
 *    bytes (the admission block);
 * -# the CRC32C over header bytes 0..59 and the payload (SHR_PROTO_BAD_CRC).
 *
 * Fields the checks above do not name (rank, world, job, slot, flags, token, ...) are not
 * range-checked here: that is the aggregator's job. Nothing is decoded into msg unless the
 * message is valid.
 *
 * @param buf
 *   Start of the shouter header; any alignment.
 * @param len
 *   Bytes available from buf (UDP payload length).
 * @param msg
 *   Filled with the decoded header when the message is valid (slot without the version
 *   bit, which goes to msg->ver); left untouched otherwise. May be NULL to only validate.
 * @return
 *   SHR_PROTO_OK (0), or the enum shr_proto_reason of the first check that failed.
 */
enum shr_proto_reason shr_proto_validate(const void *buf, size_t len,
					 struct shr_proto_msg *msg);

/**
 * A short, constant, human-readable name of a reason, usable as a telemetry key: lower snake
 * case, distinct per reason ("ok", "short", "bad_magic", "bad_version", "bad_type",
 * "bad_dtype", "bad_op", "bad_len", "bad_crc", "unknown_job", "bad_rank", "spoofed",
 * "job_dtype", "job_count", "bad_slot", "out_of_step", "bad_token", "jobs_full", "pool_full",
 * "src_limit", "stale_join", "not_allowed", "bad_auth", "stale_auth", "path_mtu",
 * "bad_kind", "mac_bad", "mac_replay", "mac_missing").
 *
 * @param reason
 *   An enum shr_proto_reason value.
 * @return
 *   The name, or "unknown".
 */
const char *shr_proto_reason_str(unsigned int reason);

/**
 * Names of types, dtypes and ops, for logs and command lines: types "data", "result",
 * "join", "join_ack", "leave", "leave_ack", "abort"; dtypes "int32", "float32", "float16",
 * "bfloat16", "qint32"; ops "sum", "min", "max", "prod"; kinds "allreduce", "reduce",
 * "reduce_scatter", "broadcast", "allgather", "gather", "scatter", "alltoall".
 *
 * @return
 *   The name, or "unknown".
 */
const char *shr_proto_type_str(unsigned int type);
const char *shr_proto_dtype_str(unsigned int dtype);	/**< @see shr_proto_type_str */
const char *shr_proto_op_str(unsigned int op);		/**< @see shr_proto_type_str */
const char *shr_proto_kind_str(unsigned int kind);	/**< @see shr_proto_type_str */

/**
 * Parse a dtype, op or kind name (as printed by the _str functions), ignoring case. Also
 * accepted: dtypes "i32", "f32", "fp32", "float", "f16", "fp16", "half", "bf16"; ops "add",
 * "mul", "product"; kinds "reducescatter", "reduce-scatter", "bcast", "all_gather",
 * "all_to_all", "all-to-all". A NULL name is -EINVAL.
 *
 * @return
 *   The enum value, or -EINVAL if the name is unknown.
 */
int shr_proto_dtype_parse(const char *name);
int shr_proto_op_parse(const char *name);		/**< @see shr_proto_dtype_parse */
int shr_proto_kind_parse(const char *name);		/**< @see shr_proto_dtype_parse */

/**
 * CRC32C (Castagnoli), continuing from a previous value.
 *
 * Uses the SSE4.2 crc32 instruction when the CPU has it (checked once, at run time), with
 * three independent streams interleaved for buffers of 96 bytes and more when the CPU also
 * has PCLMULQDQ (to combine them), and folding by carry-less multiplication for buffers of
 * 256 bytes and more when it has AVX-512F and VPCLMULQDQ; a portable slice-by-8 version
 * otherwise; within the vector width shr_crc32c_max_simd() allows. All give the same result
 * (shr_crc32c_impl() says which one runs). Thread-safe; the first call builds the tables.
 *
 * @param crc
 *   0 to start, or the return value of a previous call to continue.
 * @param buf
 *   Data; any alignment.
 * @param len
 *   Bytes.
 * @return
 *   The CRC32C of all data so far (final xor applied).
 */
uint32_t shr_crc32c(uint32_t crc, const void *buf, size_t len);

/**
 * The CRC32C of a header's SHR_PROTO_CRC_SPAN bytes, from 0: shr_crc32c(0, hdr,
 * SHR_PROTO_CRC_SPAN), computed with the crc32 instruction directly where the build allows
 * SSE4.2 (the header path of shr_proto_validate() and shr_proto_build()).
 *
 * @param hdr
 *   SHR_PROTO_CRC_SPAN bytes; any alignment.
 * @return
 *   The CRC, as shr_crc32c(0, hdr, SHR_PROTO_CRC_SPAN) returns it (never fails).
 */
uint32_t shr_crc32c_hdr(const void *hdr);

/** The portable CRC32C, always (exported for tests and benchmarks). @see shr_crc32c */
uint32_t shr_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/**
 * The SSE4.2 CRC32C, three streams with PCLMULQDQ (exported for tests and benchmarks).
 * @return
 *   Same as shr_crc32c_sw(); falls back to it when the CPU lacks SSE4.2.
 */
uint32_t shr_crc32c_hw(uint32_t crc, const void *buf, size_t len);

/**
 * The folding CRC32C, AVX-512 with VPCLMULQDQ, for buffers of 256 bytes and more (shorter
 * ones: shr_crc32c_hw()); exported for tests and benchmarks.
 * @return
 *   Same as shr_crc32c_sw(); falls back to shr_crc32c_hw() when the CPU lacks AVX-512F or
 *   VPCLMULQDQ.
 */
uint32_t shr_crc32c_fold(uint32_t crc, const void *buf, size_t len);

/**
 * Which version shr_crc32c() uses on this CPU, within shr_crc32c_max_simd()'s limit.
 * @return
 *   "avx512-vpclmulqdq", "sse4.2x3", "sse4.2" or "sw" (a static string).
 */
const char *shr_crc32c_impl(void);

/**
 * Keep shr_crc32c() to the versions whose vectors are at most `bits` wide: below 512 it does
 * not fold with AVX-512, below 128 it does not combine three streams with PCLMULQDQ (the
 * crc32 instruction is scalar). A DPDK application passes rte_vect_get_max_simd_bitwidth()
 * when its operator set EAL's --force-max-simd-bitwidth, as DPDK's own vector paths follow
 * it. The versions give the same results, so it may be called at any time, from any thread;
 * a larger value allows them again.
 *
 * @param bits
 *   The widest vector allowed, in bits: 64 (none), 128, 256, 512, or more.
 * @return
 *   0, or -EINVAL if bits is below 64.
 */
int shr_crc32c_max_simd(unsigned int bits);

#ifdef __cplusplus
}
#endif

#endif /* SHR_PROTO_H */
