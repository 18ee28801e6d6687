/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_SHARD_PRIVATE_H
#define SHR_SHARD_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <shr_spin.h>

#include "shr_shard.h"

#define SHARD_MAX_SLEEP_US 10000	/* re-check every box's timers at least this often */
#define SHARD_SILENT_MS 100		/* a box owing results for this long is named */

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
	uint64_t call_results;	/* its endpoint's rx_results when the call began */
	uint64_t results;	/* ... as last seen */
	uint64_t result_ns;	/* when they last grew (the call's start at the earliest) */
	uint32_t silent_ms;	/* at the failure: it owed the call results and had sent
				 * none in the call, or none for SHARD_SILENT_MS: for this
				 * long (0: not so) */
};

struct shr_shard {
	uint16_t n;
	uint16_t rank;
	uint16_t world;
	uint8_t dtype;
	size_t esize;		/* bytes per element of the caller's buffers */
	uint32_t chunk;		/* the smallest chunk any box granted: the map's unit */
	struct shr_spin spin;	/* the spin of waits on several boxes (lib/spin) */
	uint32_t step;		/* identity of the next call */
	uint32_t tensor;
	uint32_t first_step;
	bool called;		/* a call was made (first_step is set) */
	int fail;		/* sticky failure (negative errno), at box fail_box */
	int fail_box;
	uint64_t call_ns;	/* when the call began */
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

/* The call's start: its time and each box's results so far (to tell a silent box). */
void shard_call_begin(struct shr_shard *s);

/* Box j made progress: note whether it brought results (and when). */
void shard_box_moved(struct shr_shard *s, uint16_t j);

/*
 * A box failed: the shard fails (sticky) and err is returned. Every other box still owing
 * this call results that has sent none in the call, or none for SHARD_SILENT_MS or more, is
 * noted (silent_ms): the
 * failure may be only a consequence (a box that aborts the job because a rank stopped
 * sending to it, stuck on a box that died), and shr_shard_strerror() names those boxes too.
 */
int shard_failed(struct shr_shard *s, uint16_t j, int err);

/* The staging buffer of box j, at least len bytes (NULL: no memory). */
void *shard_stage(struct shr_shard *s, uint16_t j, size_t len);

#endif /* SHR_SHARD_PRIVATE_H */
