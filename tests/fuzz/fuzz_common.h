/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_FUZZ_COMMON_H
#define SHR_FUZZ_COMMON_H

/**
 * @file
 * Shared helpers of the fuzz targets: the libFuzzer entry point's prototype, a check macro
 * that aborts even when NDEBUG is set (the targets are also built, as corpus replayers, in
 * release builds), a reader that takes fields from the fuzz bytes (zeros past the end), and
 * the record kinds of the structured targets (shared with the seed generator).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** libFuzzer's entry point, defined by each target. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** Abort with a message when cond is false; never compiled out. */
#define FZ_CHECK(cond, ...) do {						\
	if (!(cond)) {								\
		fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__);					\
		fputc('\n', stderr);						\
		abort();							\
	}									\
} while (0)

/**
 * On the targets' checking code: no coverage feedback from it (its loops and compares would
 * only slow libFuzzer down and tell it nothing about the libraries).
 */
#if defined(__clang__) && __clang_major__ >= 13
#define FZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define FZ_NO_COVERAGE
#endif

/** Fields read from the fuzz input, in order. */
struct fz {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t
fz_u8(struct fz *f)
{
	if (f->n == 0)
		return 0;
	f->n--;
	return *f->p++;
}

static inline uint16_t
fz_u16(struct fz *f)
{
	uint16_t v = fz_u8(f);

	return (uint16_t)(v | (uint16_t)fz_u8(f) << 8);
}

static inline uint32_t
fz_u32(struct fz *f)
{
	uint32_t v = fz_u16(f);

	return v | (uint32_t)fz_u16(f) << 16;
}

static inline uint64_t
fz_u64(struct fz *f)
{
	uint64_t v = fz_u32(f);

	return v | (uint64_t)fz_u32(f) << 32;
}

/** Take up to want bytes; returns how many were taken (and where they start in *out). */
static inline size_t
fz_bytes(struct fz *f, size_t want, const uint8_t **out)
{
	size_t n = want < f->n ? want : f->n;

	*out = f->p;
	f->p += n;
	f->n -= n;
	return n;
}

/** Store a 32-bit value little-endian (the payload's element order). */
static inline void
fz_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t
fz_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

/**
 * Deterministic int32 payload from a 16-bit seed (seed 0: all INT32_MAX, seed 1: all
 * INT32_MIN, to reach the wrap-around), written little-endian.
 */
static inline void
fz_gen_i32(uint8_t *dst, uint32_t n, uint16_t seed, uint32_t salt)
{
	uint32_t x = (uint32_t)seed * 0x9e3779b1u + salt * 0x85ebca6bu;
	uint32_t i;

	for (i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
		if (seed == 0)
			fz_put_le32(dst + 4 * i, 0x7fffffffu);
		else if (seed == 1)
			fz_put_le32(dst + 4 * i, 0x80000000u);
		else
			fz_put_le32(dst + 4 * i, x);
	}
}

/*
 * Record kinds of fuzz_agg: each record starts with a byte h, kind = h % FZ_AGG_KINDS.
 * The layout of each kind's fields is documented in fuzz_agg.c.
 */
enum fz_agg_kind {
	FZ_AGG_DATA = 0,	/**< Structured DATA for the shadowed job. */
	FZ_AGG_RAW = 1,		/**< Raw bytes from one source address. */
	FZ_AGG_MSG = 2,		/**< Structured message of any type (valid CRC). */
	FZ_AGG_TICK = 3,	/**< Advance the clock and run shr_agg_tick(). */
	FZ_AGG_CTRL = 4,	/**< shr_agg_job_add / shr_agg_job_del. */
	FZ_AGG_ROUND = 5,	/**< One round: DATA from every rank of the shadowed job. */
	FZ_AGG_KINDS = 6
};

/* Record kinds of fuzz_endpoint; kind = h % FZ_EP_KINDS, fields in fuzz_endpoint.c. */
enum fz_ep_kind {
	FZ_EP_RESULT = 0,	/**< Structured RESULT for a chunk, with optional mutations. */
	FZ_EP_RAW = 1,		/**< Raw bytes. */
	FZ_EP_POLL = 2,		/**< Advance the clock and poll. */
	FZ_EP_SUBMIT = 3,	/**< Submit an operation. */
	FZ_EP_SENDMODE = 4,	/**< Make the next sends fail (-EAGAIN or -EIO). */
	FZ_EP_MSG = 5,		/**< Structured message of any type (valid CRC). */
	FZ_EP_ANSWER = 6,	/**< Correct RESULTs for every outstanding chunk, then poll. */
	FZ_EP_KINDS = 7
};

#endif /* SHR_FUZZ_COMMON_H */
