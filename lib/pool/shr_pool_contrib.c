/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The slot pool's contribute path: shr_pool_contribute_out(), called once per DATA frame, and
 * what only it uses. The kernels, the pool's creation and its control functions are in
 * shr_pool.c; see shr_pool.h for the contract.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shr_proto.h"
#include "shr_pool.h"
#include "shr_pool_private.h"
#include "shr_pool_slot.h"

/* Which ops each dtype supports: bit op set in ops_ok[dtype]. */
#define OPS_ALL ((1u << SHR_OP_SUM) | (1u << SHR_OP_MIN) | (1u << SHR_OP_MAX) | \
		 (1u << SHR_OP_PROD))
static const uint8_t ops_ok[SHR_DTYPE_MAX] = {
	[SHR_DTYPE_INT32] = OPS_ALL,
	[SHR_DTYPE_FLOAT32] = OPS_ALL,
	[SHR_DTYPE_FLOAT16] = OPS_ALL,
	[SHR_DTYPE_BFLOAT16] = OPS_ALL,
	/* The product of block-quantised values is not the quantised product. */
	[SHR_DTYPE_QINT32] = OPS_ALL & ~(1u << SHR_OP_PROD),
};

/*
 * A round's identity block: count, tensor, step, offset and aux of a contribution, and the
 * same fields (elems for count) of a copy, at the same distances and without padding, so
 * that byte equality of the blocks is equality of the five fields.
 */
#define IDENT_LEN (offsetof(struct shr_pool_contrib, aux) + sizeof(uint32_t) - \
		   offsetof(struct shr_pool_contrib, count))
#define IDENT_SAME_OFF(f) \
	_Static_assert(offsetof(struct shr_pool_contrib, f) - \
		       offsetof(struct shr_pool_contrib, count) == \
		       offsetof(struct shr_pool_copy, f) - offsetof(struct shr_pool_copy, elems), \
		       "identity block: " #f)
IDENT_SAME_OFF(tensor);
IDENT_SAME_OFF(step);
IDENT_SAME_OFF(offset);
IDENT_SAME_OFF(aux);
_Static_assert(IDENT_LEN == 4 * sizeof(uint32_t) + sizeof(uint64_t) &&
	       offsetof(struct shr_pool_copy, aux) + sizeof(uint32_t) -
	       offsetof(struct shr_pool_copy, elems) == IDENT_LEN,
	       "identity block: padding");

/* The copy's round is c's: the identity block (one compare), then the other five fields. */
static inline int
same_round(const struct shr_pool_copy *cp, const struct shr_pool_contrib *c)
{
	return memcmp(&cp->elems, &c->count, IDENT_LEN) == 0 && cp->op == c->op &&
	       cp->dtype == c->dtype && cp->world == c->world && cp->kind == c->kind &&
	       cp->root == c->root;
}

/*
 * The accumulator c is summed or loaded into, in copy v, and whether it is exact. The slot
 * test first, hinted: exact slots are the pool's last ones, and most rounds are in others.
 */
static inline void *
contrib_acc(const struct shr_pool *pool, const struct shr_pool_contrib *c, unsigned int v,
	    int *exact)
{
	*exact = __builtin_expect(c->slot >= pool->xbase, 0) &&
		 round_exact(pool, c->slot, c->dtype, c->op, c->kind);
	return *exact ? (void *)slot_xacc(pool, c->slot, v) : slot_acc(pool, c->slot, v);
}

/* The round's payload into the copy: the first sum contribution, or a relay's source. */
static inline void
copy_load(const struct shr_pool *pool, void *acc, const struct shr_pool_contrib *c)
{
	if (round_exact(pool, c->slot, c->dtype, c->op, c->kind)) {
		shr_pool_exact_reduce(acc, (uint8_t *)acc + pool->xflags_off, c->payload, c->count,
				      c->dtype, 1);
		return;
	}
	if (shr_proto_kind_relay(c->kind)) {
		if (c->payload != NULL)
			memcpy(acc, c->payload,
			       (size_t)c->count * shr_proto_dtype_size(c->dtype));
		return;
	}
	acc_load(acc, c->payload, c->count, c->dtype);
}

/*
 * Forget an open round that turned out to be stale (see shr_pool.h, "replay rounds"). A loop,
 * not memset(): no call in shr_pool_contribute_out() before the kernel's (see there).
 */
static inline void
copy_discard(const struct shr_pool *pool, struct shr_pool_copy *cp, uint64_t *bits)
{
	unsigned int i;

	for (i = 0; i < pool->nwords; i++)
		bits[i] = 0;
	cp->nbits = 0;
	cp->count = 0;
	cp->done = 0;
	cp->replay = 0;
}

int
shr_pool_contribute(struct shr_pool *pool, const struct shr_pool_contrib *c,
		    struct shr_pool_round *round)
{
	return shr_pool_contribute_out(pool, c, round, NULL, NULL);
}

/*
 * The payload of an exact round (a float SUM in an exact slot) or a relayed one into its
 * accumulator. first: c opens the round.
 */
static __attribute__((noinline)) void
contrib_sum_other(const struct shr_pool *pool, const struct shr_pool_contrib *c, unsigned int v,
		  int first)
{
	int exact;
	void *acc = contrib_acc(pool, c, v, &exact);

	if (first || !exact)
		copy_load(pool, acc, c);
	else
		shr_pool_exact_reduce(acc, (uint8_t *)acc + pool->xflags_off, c->payload,
				      c->count, c->dtype, 0);
}

/*
 * The copy's state is settled first and the payload summed last (the verdict does not depend
 * on the sum), and nothing is called before the kernel (the rounds that are not plain, exact
 * or relayed, are summed out of line, in contrib_sum_other()): nearly nothing is live across
 * a call, so the compiler keeps the state in registers instead of spilling it to the stack.
 */
int
shr_pool_contribute_out(struct shr_pool *pool, const struct shr_pool_contrib *c,
			struct shr_pool_round *round, void *out, size_t *written)
{
	struct shr_pool_slot *s;
	struct shr_pool_copy *cp, *other;
	uint64_t *bits, *obits, mask;
	unsigned int v, w;
	int same, first, verdict;
	void *acc;

	if (written != NULL)
		*written = 0;
	if (c->slot >= pool->nslots || c->ver > 1 || c->world == 0 ||
	    c->world > pool->max_world || c->rank >= c->world || c->count == 0 ||
	    c->count > pool->max_elems || c->dtype == 0 || c->dtype >= SHR_DTYPE_MAX ||
	    c->op >= SHR_OP_MAX_ || !(ops_ok[c->dtype] & (1u << c->op)) ||
	    c->kind >= SHR_KIND_MAX || c->tree > SHR_POOL_TREE_SRC ||
	    c->root >= (c->tree ? SHR_PROTO_MAX_WORLD : c->world) ||
	    (c->payload == NULL) != (shr_proto_kind_relay(c->kind) &&
				     (c->tree ? c->tree != SHR_POOL_TREE_SRC : c->rank != c->root)))
		return -EINVAL;

	v = c->ver;
	s = slot_get(pool, c->slot);
	cp = &s->copy[v];
	other = &s->copy[v ^ 1];
	bits = slot_bits(pool, s, v);
	obits = slot_bits(pool, s, v ^ 1);
	w = c->rank / 64u;
	mask = (uint64_t)1 << (c->rank % 64u);
	same = same_round(cp, c);
	first = 0;

	if (bits[w] & mask) {
		/* Already counted in this copy. */
		if (same) {
			if (cp->count != 0)
				return SHR_POOL_DUPLICATE;
			goto resend;
		}
		if (cp->count == 0 || !cp->replay)
			return SHR_POOL_OUT_OF_STEP;
		/* A member moved on from an open replay round: it was stale. */
		copy_discard(pool, cp, bits);
	} else if (cp->count == 0) {
		if (cp->nbits != 0 || other->count != 0) {
			/*
			 * Either the copy holds a complete result that some members have not
			 * yet acknowledged (their bits are still set), or the other copy has
			 * an open round: in both cases no new round can legitimately start
			 * here, so this is a late copy of a contribution to this copy's
			 * completed round. Answer it, change nothing; anything else is out
			 * of step.
			 */
			if (!same || !cp->done)
				return SHR_POOL_OUT_OF_STEP;
			goto resend;
		}
	} else if (same) {
		goto counted;
	} else if (cp->replay) {
		/* A different round while a replay round is open: the replay was stale. */
		copy_discard(pool, cp, bits);
	} else {
		return SHR_POOL_OUT_OF_STEP;
	}

	/* Fresh copy: the first contributor overwrites and names the round. */
	first = 1;
	cp->replay = cp->done && same;
	cp->done = 0;
	memcpy(&cp->elems, &c->count, IDENT_LEN);	/* elems, tensor, step, offset, aux */
	cp->world = c->world;
	cp->dtype = c->dtype;
	cp->op = c->op;
	cp->kind = c->kind;
	cp->root = c->root;

counted:
	bits[w] |= mask;
	cp->nbits++;
	if (obits[w] & mask) {
		obits[w] &= ~mask;
		other->nbits--;
	}
	verdict = SHR_POOL_PARTIAL;
	if (++cp->count >= cp->world) {
		cp->count = 0;
		cp->done = 1;
		cp->replay = 0;
		if (round != NULL)
			round_fill(pool, cp, c->slot, v, round);
		verdict = SHR_POOL_COMPLETE;
	}

	/* the accumulator only where a contribution is summed or loaded: the verdicts that
	 * change nothing never need it */
	if ((__builtin_expect(c->slot >= pool->xbase, 0) &&
	     round_exact(pool, c->slot, c->dtype, c->op, c->kind)) ||
	    shr_proto_kind_relay(c->kind)) {
		contrib_sum_other(pool, c, v, first);
		return verdict;
	}
	acc = slot_acc(pool, c->slot, v);
	if (first)
		acc_load(acc, c->payload, c->count, c->dtype);
	else if (out != NULL && written != NULL && verdict == SHR_POOL_COMPLETE)
		*written = acc_reduce_write(acc, c->payload, out, c->count, c->dtype, c->op);
	else
		acc_reduce(acc, c->payload, c->count, c->dtype, c->op);
	return verdict;

resend:
	if (round != NULL)
		round_fill(pool, cp, c->slot, v, round);
	return SHR_POOL_RESEND;
}
