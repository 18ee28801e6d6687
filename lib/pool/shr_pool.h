/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_POOL_H
#define SHR_POOL_H

/**
 * @file
 * The slot pool: SwitchML's streaming aggregation, on plain buffers.
 *
 * A pool is a fixed array of slots. Each slot has two copies (version 0 and 1); each copy has
 * a bitmap of the ranks that contributed to it, a contribution count, the identity of its
 * current round (tensor, step, offset, count, op, dtype, aux, world) and an accumulator of up
 * to max_elems elements. A copy is in one of three states:
 * - fresh: count 0 and no bit set (after creation, reset, range allocation, or once every
 *   member has moved on to the other copy, each clearing its bit here). A fresh copy that
 *   completed a round before still holds that round's identity and result.
 * - open: count > 0 (count = bits set = contributions so far);
 * - complete: count 0 with bits set: the accumulator holds the result of the round, which
 *   the members whose bits are still set may yet ask for again.
 *
 * The legitimate protocol (the endpoint sends round j + 2 on copy v only after it has the
 * result of round j + 1 on copy 1-v) guarantees: a member never sends a second identity to
 * a copy while the copy's round is open or owes it a result, and no round starts in copy v
 * while copy 1-v is open. What breaks these is a stale packet (a network duplicate or a
 * late retransmission); the rules below use them to tell stale from new.
 *
 * A contribution (rank r, slot i, version v) to copy v, "same" meaning that its identity
 * equals the copy's current (or last) round's:
 * - r's bit set, copy open: same: SHR_POOL_DUPLICATE (drop it); different: out of step,
 *   unless the open round is a replay round (below), which is then discarded and r starts
 *   a new one as its first contributor.
 * - r's bit set, copy complete: same: a retransmission whose result was lost:
 *   SHR_POOL_RESEND; different: out of step.
 * - r's bit clear, copy open: same: the payload is reduced into the accumulator, r's bit
 *   set and r's bit in copy 1-v cleared (re-using a slot acknowledges the other copy's
 *   round); different: out of step, unless the open round is a replay round (discarded; r
 *   starts a new round).
 * - r's bit clear, copy complete, or copy fresh while copy 1-v is open: no new round may
 *   start here, so this is a late copy of a contribution to the copy's last completed
 *   round: same: SHR_POOL_RESEND (the copy still holds that result); different, or no
 *   completed round since the last reset: out of step.
 * - r's bit clear, copy fresh (copy 1-v not open): r is the first contributor; the copy
 *   takes r's identity, r's payload overwrites the accumulator (converted to the
 *   accumulator type; no zeroing pass), r's bit is set and r's bit in copy 1-v cleared.
 *   If the identity is the same as the copy's last completed round's, the new round is a
 *   replay round: either a real repetition (a replayed capture looping over two rounds,
 *   or an application reusing tensor and step), whose members all send that identity, or
 *   a stale copy of the last round's DATA arriving after the copy freshened, which the
 *   members' real next round displaces as soon as its first contribution arrives.
 *
 * Out of step (SHR_POOL_OUT_OF_STEP), RESEND and DUPLICATE change nothing (no bit, no count,
 * no accumulator). When a contribution brings the count to the world size, the round is
 * complete (SHR_POOL_COMPLETE): the count goes back to 0 and the copy holds the result.
 * With world 1 every first contribution completes at once.
 *
 * Known limits (not detectable from a slot's state alone), both ending in out of step, loud
 * and never a wrong sum, until the caller resets the slot: a stale DATA two or more rounds
 * late (older than the copy's last completed round) that reaches a fresh copy opens a round
 * that the members' real round cannot displace; and a replay round that was a real
 * repetition is displaced if a stale DATA with another identity reaches it. Discarding a
 * stale replay round cannot give back the bit that the stale DATA cleared in copy 1-v; the
 * rule for a fresh copy while the other is open covers the retransmission of the member
 * concerned.
 *
 * Relayed rounds (broadcast, allgather, gather, scatter, all-to-all: shr_proto_kind_relay())
 * follow the same rules, but nothing is reduced: the contribution of the round's source
 * (rank == root) carries the payload, which the copy keeps as it came (wire bytes), and
 * every other rank's contribution is header-only (payload NULL) and only counts. The result
 * is the source's payload.
 *
 * The pool knows nothing of packets or mbufs; it never allocates after creation. It is not
 * thread-safe, but distinct slots share no cache line, so lcores that own disjoint sets of
 * slots may use one pool without locks. Range allocation (shr_pool_range_alloc/free) is for
 * the control path only.
 *
 * Accumulators hold int32 for SHR_DTYPE_INT32 and SHR_DTYPE_QINT32 and float32 for
 * SHR_DTYPE_FLOAT32, SHR_DTYPE_FLOAT16 and SHR_DTYPE_BFLOAT16 (float32 accumulation, converted
 * back to the wire type by shr_pool_result_write()). int32 arithmetic wraps (two's
 * complement), as a switch's does.
 *
 * Operations per dtype: INT32, FLOAT32, FLOAT16 and BFLOAT16 support SUM, MIN, MAX and PROD
 * (int32 SUM and PROD wrap); QINT32 supports SUM, MIN and MAX (not PROD: the product of
 * block-quantised values is not the quantised product).
 *
 * Float semantics: SUM and PROD are IEEE float32 (round to nearest even), applied in the
 * order the contributions arrive, so float sums can differ with the arrival order; every
 * member receives the same bytes of the one result. MIN and MAX: a NaN in any contribution
 * makes the result the quiet NaN 0x7fc00000 (whichever NaNs came in: their signs and
 * payloads are not kept; a round of one contribution keeps its NaN), and -0 is smaller
 * than +0 (MIN(-0, +0) = -0, MAX(-0, +0) = +0 in any order), so that MIN and MAX do not
 * depend on the order, to the bit.
 *
 * Reproducible sums. A pool may have exact slots (shr_pool_params::exact_slots: the last
 * slots of the pool, reserved with shr_pool_range_alloc_exact()). A SUM round of a float dtype
 * (FLOAT32, FLOAT16, BFLOAT16) in an exact slot is not summed in float32 but exactly: every
 * contribution's elements are converted to float32 (exactly) and added to a fixed-point
 * integer that holds any sum of float32 values exactly (struct shr_pool_xsum); the result is
 * that sum rounded once to the wire type (nearest, ties to even; overflow gives infinity):
 * float16 and bfloat16 results straight from the exact sum, not through float32 (which would
 * round twice). It is therefore the correctly rounded sum, the same bits whatever the order
 * of the contributions. Infinities and NaNs: any NaN, or +inf and -inf together, give the
 * quiet NaN (0x7fc00000; float16 0x7e00, bfloat16 0x7fc0: payloads are not kept); +inf alone
 * +inf, -inf alone -inf. A zero result is +0, unless every contribution was -0 (then -0), as
 * in IEEE.
 * Other ops (MIN, MAX: already order-independent; PROD: IEEE float32 in arrival order, so
 * it can depend on the order) and other dtypes are as in any slot. An exact accumulator takes
 * 41 bytes per element (10.25 times a float32 one).
 *
 * Half-precision conversions (portable integer code, no F16C needed): binary16 and bfloat16
 * convert to float32 exactly (subnormals included; NaNs keep their payload bits). float32 to
 * binary16 and to bfloat16 rounds to nearest, ties to even (binary16 subnormals use one
 * float addition, so they, like the float sums, assume the default rounding mode; DAZ/FTZ
 * do not change any conversion); overflow gives infinity (binary16: |x| >= 65520), a float32
 * subnormal or tiny value becomes a binary16 subnormal or zero, and a NaN becomes a quiet NaN
 * of the same sign (top payload bits kept).
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct shr_pool;

/** Pool dimensions, fixed at creation. */
struct shr_pool_params {
	uint32_t nslots;	/**< Number of slots (1..INT_MAX). */
	uint32_t max_elems;	/**< Largest chunk, in elements (1..(UINT32_MAX - 64) / 4). */
	uint16_t max_world;	/**< Largest world size: bitmap bits per copy (1..4096). */
	uint32_t exact_slots;	/**< How many of the nslots slots (the last ones) have exact
				     accumulators (0..nslots; default 0). */
};

/** One contribution (a validated DATA message, in host byte order). */
struct shr_pool_contrib {
	uint32_t slot;		/**< Absolute slot index in the pool. */
	uint8_t ver;		/**< Slot version, 0 or 1. */
	uint8_t dtype;		/**< enum shr_proto_dtype */
	uint8_t op;		/**< enum shr_proto_op */
	uint16_t rank;		/**< < world */
	uint16_t world;		/**< Contributions that complete the round (1..max_world). */
	uint32_t count;		/**< Elements (1..max_elems). */
	uint32_t tensor;
	uint32_t step;
	uint64_t offset;
	uint32_t aux;		/**< Block scale for QINT32 (summed kinds), destination
				     (relay kinds), else 0; part of the identity. */
	uint8_t kind;		/**< enum shr_proto_kind; part of the identity. */
	uint16_t root;		/**< The kind's root rank (< world, or a tree rank: see tree);
				     part of the identity. */
	uint8_t tree;		/**< 0: root and aux are ranks of this round (< world). Else a
				     tree of boxes' round (shr_agg.h, "Trees"): root and aux are
				     ranks of the whole tree (< SHR_PROTO_MAX_WORLD), and this
				     contribution is a relayed round's source exactly when tree
				     is SHR_POOL_TREE_SRC (SHR_POOL_TREE otherwise). */
	const void *payload;	/**< count elements, wire format (little-endian), any alignment.
				     NULL exactly when the round is relayed
				     (shr_proto_kind_relay()) and rank is not its source
				     (root, or tree): a header-only contribution. */
};

#define SHR_POOL_TREE 1		/**< shr_pool_contrib::tree: a tree's round, not the source. */
#define SHR_POOL_TREE_SRC 2	/**< shr_pool_contrib::tree: a tree's round, its source. */

/** What a contribution did. */
enum shr_pool_verdict {
	SHR_POOL_PARTIAL = 0,	/**< Counted; the round is still open. */
	SHR_POOL_COMPLETE,	/**< Counted and complete: send the result to every member. */
	SHR_POOL_RESEND,	/**< Retransmission to a complete round: send the result to this
				     rank alone. Nothing changed. */
	SHR_POOL_DUPLICATE,	/**< Already counted, round still open: drop it. Nothing changed. */
	SHR_POOL_OUT_OF_STEP,	/**< Refused: identity (tensor, step, offset, count, op, dtype, aux,
				     world) differs from the round's. Nothing changed. */
};

/** A completed round: its identity and its result (valid until the copy is reused). */
struct shr_pool_round {
	uint32_t slot;
	uint8_t ver;
	uint8_t dtype;
	uint8_t op;
	uint16_t world;
	uint32_t count;
	uint32_t tensor;
	uint32_t step;
	uint64_t offset;
	uint32_t aux;
	uint8_t kind;
	uint16_t root;
	uint8_t exact;		/**< 1: an exact sum (acc = limbs, xflags = flags), else 0. */
	const void *acc;	/**< Accumulator (int32 or float32, host order; a relayed
				     round: the source's payload as it came, wire format; an
				     exact round: SHR_POOL_XLIMBS uint64_t per element),
				     64-byte aligned. */
	const uint8_t *xflags;	/**< Exact round: one flag byte per element; else NULL. */
};

/** Limbs of an exact accumulator (320-bit two's complement). */
#define SHR_POOL_XLIMBS 5

/**
 * An exact sum of float32 values: the integer sum of the terms in units of 2^-149, in 320-bit
 * two's complement (limb 0 least significant; any 2^42 finite float32 terms add without
 * overflow), and flags for NaN, +inf, -inf and "not only -0". Order-independent by
 * construction; the accumulator of the pool's exact slots, exported for the tests and for
 * endpoints that check a reproducible result.
 */
struct shr_pool_xsum {
	uint64_t limb[SHR_POOL_XLIMBS];
	uint8_t flags;
};

/**
 * Create a pool. All memory (slot records, one cache line multiple each; accumulators, 64-byte
 * aligned) is allocated and touched here; nothing is allocated afterwards. All slots are
 * fresh and free.
 *
 * @param params
 *   Dimensions.
 * @return
 *   The pool, or NULL with errno set: EINVAL (a dimension out of range), ENOMEM.
 */
struct shr_pool *shr_pool_create(const struct shr_pool_params *params);

/**
 * Free a pool. NULL is allowed.
 *
 * @param pool
 *   The pool.
 */
void shr_pool_free(struct shr_pool *pool);

/**
 * Number of slots, as created.
 *
 * @param pool
 *   The pool.
 * @return
 *   nslots.
 */
uint32_t shr_pool_nslots(const struct shr_pool *pool);

/**
 * Reserve n consecutive free slots (first fit), for one job. The slots are reset (both
 * copies fresh, all bits clear).
 *
 * @param pool
 *   The pool.
 * @param n
 *   Slots wanted (> 0).
 * @return
 *   The index of the first slot (>= 0), or -EINVAL (n is 0 or larger than the pool),
 *   -ENOSPC (no run of n free slots).
 */
int shr_pool_range_alloc(struct shr_pool *pool, uint32_t n);

/**
 * Reserve n consecutive free exact slots (first fit in the pool's last exact_slots slots),
 * for a reproducible job. The slots are reset. shr_pool_range_alloc() never takes them.
 *
 * @param pool
 *   The pool.
 * @param n
 *   Slots wanted (> 0).
 * @return
 *   The index of the first slot (>= 0), or -EINVAL (n is 0 or larger than the pool),
 *   -ENOSPC (no run of n free exact slots).
 */
int shr_pool_range_alloc_exact(struct shr_pool *pool, uint32_t n);

/**
 * Free slots of one kind.
 *
 * @param pool
 *   The pool.
 * @param exact
 *   1: exact slots; 0: the others.
 * @return
 *   Slots of that kind not reserved (not necessarily consecutive).
 */
uint32_t shr_pool_free_slots(const struct shr_pool *pool, int exact);

/**
 * Give back a range reserved by shr_pool_range_alloc() or shr_pool_range_alloc_exact().
 *
 * @param pool
 *   The pool.
 * @param base
 *   Its first slot.
 * @param n
 *   Its length.
 * @return
 *   0, or -EINVAL if [base, base + n) is not exactly a reserved range.
 */
int shr_pool_range_free(struct shr_pool *pool, uint32_t base, uint32_t n);

/**
 * Number of slots currently reserved.
 *
 * @param pool
 *   The pool.
 * @return
 *   Slots in use.
 */
uint32_t shr_pool_used(const struct shr_pool *pool);

/**
 * Apply one contribution.
 *
 * @param pool
 *   The pool.
 * @param c
 *   The contribution.
 * @param round
 *   Filled when the verdict is SHR_POOL_COMPLETE or SHR_POOL_RESEND, untouched otherwise.
 *   May be NULL (the result is then not reported; the caller loses it).
 * @return
 *   An enum shr_pool_verdict (>= 0), or -EINVAL: slot >= nslots, ver > 1, world 0 or
 *   > max_world, rank >= world, count 0 or > max_elems, unknown dtype, op or kind, an op
 *   the dtype does not support, root >= world (>= SHR_PROTO_MAX_WORLD for a tree's round),
 *   tree > SHR_POOL_TREE_SRC, or a payload where the kind wants none (or none where it
 *   wants one). Nothing changes on -EINVAL. The slot need not
 *   be in a reserved range (the range allocator is bookkeeping for the control path).
 */
int shr_pool_contribute(struct shr_pool *pool, const struct shr_pool_contrib *c,
			struct shr_pool_round *round);

/**
 * shr_pool_contribute(), and when this contribution completes a summed round (not relayed,
 * not exact) of an int32, qint32 or float32 job, the round's result written to out in the
 * same pass over the elements as the reduction: the bytes shr_pool_result_write() would
 * write, without reading the accumulator again.
 *
 * @param pool
 *   The pool.
 * @param c
 *   The contribution.
 * @param round
 *   As for shr_pool_contribute().
 * @param out
 *   c->count * element size bytes, any alignment, not overlapping the accumulator or the
 *   payload; or NULL (then this is shr_pool_contribute()).
 * @param written
 *   Set to the bytes written to out: count * element size when they hold the result of a
 *   SHR_POOL_COMPLETE round, else 0 (nothing written; any other verdict, or a round of
 *   another kind or dtype: write it with shr_pool_result_write()). May be NULL only with
 *   out NULL.
 * @return
 *   As shr_pool_contribute().
 */
int shr_pool_contribute_out(struct shr_pool *pool, const struct shr_pool_contrib *c,
			    struct shr_pool_round *round, void *out, size_t *written);

/**
 * Write a round's result in wire format (little-endian elements of the round's dtype).
 *
 * @param round
 *   A round returned by shr_pool_contribute().
 * @param dst
 *   count * shr_proto_dtype_size(dtype) bytes; any alignment; must not overlap the
 *   accumulator.
 * @return
 *   Bytes written (count * element size), or 0 if the round's dtype is unknown.
 */
size_t shr_pool_result_write(const struct shr_pool_round *round, void *dst);

/**
 * The completed round held by copy ver of slot (what a SHR_POOL_RESEND would report).
 *
 * @param pool
 *   The pool.
 * @param slot
 *   Absolute slot index.
 * @param ver
 *   The copy, 0 or 1.
 * @param round
 *   Filled on success.
 * @return
 *   0; -EINVAL if slot >= nslots or ver > 1; -ENOENT if the copy holds no completed round.
 */
int shr_pool_round_get(const struct shr_pool *pool, uint32_t slot, unsigned int ver,
		       struct shr_pool_round *round);

/**
 * Whether rank still owes copy ver of slot its acknowledgement: the copy holds a completed
 * round and rank's bit is still set, i.e. rank has not contributed to the slot's other copy
 * since that round completed (it has not had the result, or not yet moved on).
 *
 * @param pool
 *   The pool.
 * @param slot
 *   Absolute slot index.
 * @param ver
 *   The copy, 0 or 1.
 * @param rank
 *   The member.
 * @return
 *   1 if so, 0 if not; -EINVAL if slot >= nslots, ver > 1 or rank is beyond the pool's
 *   max_world bitmap.
 */
int shr_pool_owed(const struct shr_pool *pool, uint32_t slot, unsigned int ver, uint16_t rank);

/**
 * Replace a completed round's result with another one in wire format (a tree of boxes: the
 * sum of the whole tree, or a relayed round's payload from a source elsewhere in the tree,
 * from the upstream box, replaces what this box's members gave, so that a member's late copy
 * is answered with the final result). The inverse of shr_pool_result_write(): writing the
 * round again gives back src's bytes.
 *
 * @param pool
 *   The pool.
 * @param round
 *   A completed round (shr_pool_contribute() or shr_pool_round_get()).
 * @param src
 *   round->count elements of round->dtype, wire format; any alignment.
 * @return
 *   0, or -EINVAL: an exact round, a copy that no longer holds a completed round of that
 *   identity, or an unknown dtype.
 */
int shr_pool_result_load(struct shr_pool *pool, const struct shr_pool_round *round,
			 const void *src);

/**
 * Reset one slot (both copies fresh). For tests and for tearing a job down.
 *
 * @param pool
 *   The pool.
 * @param slot
 *   Absolute slot index.
 * @return
 *   0, or -EINVAL if slot >= nslots.
 */
int shr_pool_slot_reset(struct shr_pool *pool, uint32_t slot);

/**
 * The bare reduction kernels, exported for the benchmark (the roofline) and the tests.
 * dst[i] = dst[i] op src[i] for i < n; src is wire format (little-endian int32 or float32),
 * any alignment, and must not overlap dst. op is an enum shr_proto_op; an unknown op leaves
 * dst unchanged. Semantics as in the file description (wrapping int32, NaN-propagating
 * float MIN/MAX with -0 < +0). Both are vectorised by the compiler (-O3 -march).
 */
void shr_pool_reduce_i32(int32_t *dst, const void *src, uint32_t n, unsigned int op);
/** @see shr_pool_reduce_i32 */
void shr_pool_reduce_f32(float *dst, const void *src, uint32_t n, unsigned int op);
/**
 * The exact SUM kernel (see "Reproducible sums"): adds n float32 wire elements (src, any
 * alignment) into n exact accumulators: limbs (SHR_POOL_XLIMBS per element) and flags (one
 * byte per element), all zero to start with.
 */
void shr_pool_reduce_x32(uint64_t *limbs, uint8_t *flags, const void *src, uint32_t n);

/**
 * Empty an exact sum (0, and no term yet).
 *
 * @param x
 *   The sum.
 */
void shr_pool_xsum_clear(struct shr_pool_xsum *x);

/**
 * Add one float32 term to an exact sum.
 *
 * @param x
 *   The sum.
 * @param f32_bits
 *   The term's bits (any value: NaN, infinities, -0 and subnormals included).
 */
void shr_pool_xsum_add(struct shr_pool_xsum *x, uint32_t f32_bits);

/**
 * An exact sum rounded to float32, as the pool's exact slots round it.
 *
 * @param x
 *   The sum.
 * @return
 *   The float32 bits: the sum rounded to nearest, ties to even (overflow: infinity); the
 *   quiet NaN 0x7fc00000 if a term was a NaN or the terms had both infinities; +0 for a zero
 *   sum unless every term was -0 (no term: +0).
 */
uint32_t shr_pool_xsum_f32(const struct shr_pool_xsum *x);

#ifdef __cplusplus
}
#endif

#endif /* SHR_POOL_H */
