/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_POOL_PRIVATE_H
#define SHR_POOL_PRIVATE_H

/**
 * @file
 * Private layout of the slot pool (not for users of lib/pool).
 *
 * Slot metadata lives in one array of slot_stride-byte records, slot_stride a multiple of
 * SHR_POOL_LINE, so two slots never share a cache line. A record is a struct shr_pool_slot
 * (the two copies' state) followed by the two bitmaps, nwords 64-bit words each (copy 0 first).
 * Accumulators live in a second array: copy v of slot i at accs + (2 * i + v) * acc_stride,
 * acc_stride a multiple of SHR_POOL_LINE. The last exact_slots slots (from xbase on) also have
 * exact accumulators (shr_pool_exact.c), in a third array: copy v of exact slot i at
 * xaccs + (2 * (i - xbase) + v) * xstride, max_elems elements of SHR_POOL_XLIMBS limbs
 * first, then max_elems flag bytes at xflags_off. The range allocator's state is separate
 * (control path) so that it never shares a line with the data path.
 */

#include <stddef.h>
#include <stdint.h>

#define SHR_POOL_LINE 64	/**< Cache line size assumed for alignment. */
/** Largest max_elems: 4 * max_elems rounded up to a line still fits in 32 bits. */
#define SHR_POOL_MAX_ELEMS ((UINT32_MAX - SHR_POOL_LINE) / 4)

/** One copy of a slot: its round's progress and identity. */
struct shr_pool_copy {
	uint32_t count;		/**< Contributions to the open round; 0: fresh or complete. */
	/* elems .. aux: the same fields, at the same distances (24 bytes, no padding), as
	 * count .. aux of struct shr_pool_contrib: shr_pool_contrib.c compares and copies them as
	 * one block (its _Static_asserts check the layout) */
	uint32_t elems;		/**< Element count of the round. */
	uint32_t tensor;
	uint32_t step;
	uint64_t offset;
	uint32_t aux;
	uint32_t nbits;		/**< Bits set in this copy's bitmap. */
	uint16_t world;
	uint8_t dtype;
	uint8_t op;
	uint8_t done;		/**< Identity and accumulator hold a completed round. */
	uint8_t replay;		/**< The open round repeats the identity of the copy's
				     previous completed round (it may be a stale copy). */
	uint8_t kind;		/**< enum shr_proto_kind of the round. */
	uint16_t root;
};

/** The fixed part of a slot record; the bitmaps follow it. */
struct shr_pool_slot {
	struct shr_pool_copy copy[2];
};

struct shr_pool {
	uint32_t nslots;
	uint32_t max_elems;
	uint16_t max_world;
	uint16_t nwords;	/**< 64-bit words per copy bitmap. */
	uint32_t used;		/**< Slots reserved by the range allocator. */
	size_t slot_stride;	/**< Bytes per slot record (multiple of SHR_POOL_LINE). */
	size_t acc_stride;	/**< Bytes per accumulator (multiple of SHR_POOL_LINE). */
	uint8_t *slots;		/**< nslots records. */
	uint8_t *accs;		/**< 2 * nslots accumulators. */
	uint32_t xbase;		/**< First slot with exact accumulators (nslots: none). */
	uint32_t xused;		/**< Slots of [xbase, nslots) reserved. */
	size_t xstride;		/**< Bytes per exact accumulator (multiple of SHR_POOL_LINE). */
	size_t xflags_off;	/**< Offset of the flags in an exact accumulator. */
	uint8_t *xaccs;		/**< 2 * (nslots - xbase) exact accumulators. */
	uint32_t *range_len;	/**< Control path: length of the range starting here, else 0. */
	uint8_t *in_use;	/**< Control path: slot reserved. */
};

/*
 * The exact kernels (shr_pool_exact.c). Reduce n wire elements of a float dtype (float32,
 * float16, bfloat16) into the exact accumulators limbs (SHR_POOL_XLIMBS per element) and
 * flags (one byte per element); first: start from zero (the round's first contribution).
 */
void shr_pool_exact_reduce(uint64_t *limbs, uint8_t *flags, const void *src, uint32_t n,
			   unsigned int dtype, int first);
/* Write n exact accumulators rounded to float32 and converted to dtype; bytes written. */
size_t shr_pool_exact_write(void *dst, const uint64_t *limbs, const uint8_t *flags, uint32_t n,
			    unsigned int dtype);

#endif /* SHR_POOL_PRIVATE_H */
