/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_SHARD_PRIVATE_H
#define SHR_SHARD_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shr_shard.h"

#define SHARD_MAX_SLEEP_US 10000	/* re-check every box's timers at least this often */
#define SHARD_DEF_SPIN 16

/* One box of a sharded rank. */
struct shard_box {
	struct shr_comm *comm;
	uint32_t ip;		/* host order */
	uint16_t port;
	int req;		/* the request in flight on it (-1: none) */
	void *stage;		/* its staging buffer (blocks packed), kept for the next call
				 * and until destroy: a failed call leaves requests on the
				 * other boxes that still point at it */
	size_t stage_len;
	uint64_t bar;		/* a barrier's element (any dtype's fits) */
};

struct shr_shard {
	uint16_t n;
	uint16_t rank;
	uint16_t world;
	uint8_t dtype;
	size_t esize;		/* bytes per element of the caller's buffers */
	uint32_t chunk;		/* the smallest chunk any box granted: the map's unit */
	uint32_t spin;
	uint32_t step;		/* identity of the next call */
	uint32_t tensor;
	uint32_t first_step;
	bool called;		/* a call was made (first_step is set) */
	int fail;		/* sticky failure (negative errno), at box fail_box */
	int fail_box;
	struct shard_box box[SHR_SHARD_MAX_BOXES];
};

/*
 * Name the identity of the call at every box that takes part (those with a request about
 * to start): 0 or a negative errno.
 */
int shard_ident_apply(struct shr_shard *s, uint16_t j);

/* The call's identity is spent: the next call's tensor id is one more. */
void shard_call_done(struct shr_shard *s);

/*
 * Wait until every box's request (box[j].req >= 0) is done, making progress on all of them
 * and sleeping in poll() when none has anything to do. 0, or the first box's negative errno
 * (the shard fails: s->fail, s->fail_box).
 */
int shard_run(struct shr_shard *s);

/* A box failed: the shard fails (sticky) and err is returned. */
int shard_failed(struct shr_shard *s, uint16_t j, int err);

/* The staging buffer of box j, at least len bytes (NULL: no memory). */
void *shard_stage(struct shr_shard *s, uint16_t j, size_t len);

#endif /* SHR_SHARD_PRIVATE_H */
