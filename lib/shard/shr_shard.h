/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_SHARD_H
#define SHR_SHARD_H

/**
 * @file
 * One rank of a job sharded over k aggregators (the seed API's iplist): each box sums a
 * share of every collective, so that k boxes give about k times one box's capacity.
 *
 * A sharded communicator is k communicators (lib/comm) of the same job id, rank, world and
 * dtype, one per box, each a job of its own on its box. shr_shard_create() joins the boxes
 * one after the other, in the order given, so every rank must list them in the same order
 * (it does not deadlock: a box answers once all ranks joined it). Membership covers all k:
 * the sharded communicator exists only once every box has admitted the rank; a failure at
 * any box (refused, unreachable, aborted) fails the call, names the box
 * (shr_shard_strerror()), and every later call fails too (-EPIPE). The other boxes see the
 * rank LEAVE when it destroys the communicator, and abort the job at the other ranks.
 *
 * The map (shr_shard_split()): each collective's elements (per block, for the collectives
 * whose buffers hold one block per rank) are cut into chunks of the job's chunk (the
 * smallest any box granted), and box j gets the j-th of k runs of consecutive chunks. By
 * block rather than chunk by chunk (round robin): a box's share is one contiguous range of
 * the caller's buffer, so allreduce, reduce and broadcast run in place with no copy, and
 * the k shares stream at once, so the boxes work in parallel as they would round robin;
 * a round-robin map would need a strided collective that the endpoint does not have, or a
 * copy of every call. reduce_scatter, allgather, gather, scatter and alltoall hold one
 * block per rank: each box's share of every block is packed into (or unpacked from) a
 * staging buffer of world x share elements, one copy of the data per call. A collective
 * smaller than k chunks leaves the first boxes out of it (every rank maps the same way).
 *
 * Progress: the calling thread drives every box's communicator (shr_comm_progress()) and
 * sleeps in poll() on all their sockets when none has anything to do (shr_comm_fd(),
 * shr_comm_idle_us()). Sharding needs the udp driver (a DPDK port belongs to one
 * communicator), or a device per box (shr_shard_params::dev).
 *
 * Not thread-safe: one thread uses one sharded communicator.
 */

#include <stddef.h>
#include <stdint.h>

#include <shr_comm.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Boxes a job may be sharded over, at most. */
#define SHR_SHARD_MAX_BOXES 16

struct shr_shard;

/** A sharded rank: the job, and its boxes. */
struct shr_shard_params {
	/**
	 * Everything of every box's communicator but its box: agg_ip, agg_port and dev are
	 * taken from the arrays below; a local_port P (udp) binds box j's socket to P + j.
	 * Copied.
	 */
	struct shr_comm_params comm;
	uint16_t nboxes;		/**< Boxes, 1 .. SHR_SHARD_MAX_BOXES. */
	const uint32_t *agg_ip;		/**< nboxes addresses, host order, all different
					 *   (with their ports) unless dev is given. */
	const uint16_t *agg_port;	/**< nboxes base UDP ports; NULL: comm.agg_port
					 *   for every box. */
	struct shr_drv **dev;		/**< NULL: open comm.driver for each box; else
					 *   nboxes devices, owned from the call on (as
					 *   shr_comm_params::dev). */
};

/**
 * Join the job at every box, in order.
 *
 * @param params
 *   The job and its boxes.
 * @return
 *   The sharded communicator, or NULL with errno set: EINVAL (nboxes 0 or above
 *   SHR_SHARD_MAX_BOXES, NULL agg_ip, a box listed twice, the dpdk driver without a
 *   device per box, local_port + nboxes - 1 above 65535, or a bad communicator
 *   parameter), ENOMEM, or shr_comm_create()'s
 *   errno at the first box that failed; params why then starts with that box ("box 2 of
 *   3 (198.18.0.3:47000): ...", with several boxes).
 */
struct shr_shard *shr_shard_create(const struct shr_shard_params *params);

/**
 * Leave the job at every box and release everything. NULL is allowed.
 *
 * @param shard
 *   The sharded communicator.
 * @return
 *   0, or the first negative errno of shr_comm_destroy() among the boxes (each is left
 *   and released whatever the others did).
 */
int shr_shard_destroy(struct shr_shard *shard);

/**
 * Where the job's elements go: box j's share of a collective of count elements (per
 * block), in whole chunks of chunk elements, consecutive.
 *
 * @param count
 *   Elements.
 * @param chunk
 *   Elements per chunk (> 0).
 * @param nboxes
 *   Boxes (> 0).
 * @param j
 *   The box, < nboxes.
 * @param off
 *   Its first element.
 * @param len
 *   Its elements (0: this box has no part of it).
 */
void shr_shard_split(uint64_t count, uint32_t chunk, uint16_t nboxes, uint16_t j,
		     uint64_t *off, uint64_t *len);

/**
 * Allreduce over every box (shr_comm_allreduce()): each box sums its share.
 *
 * @return
 *   0, or a negative errno of shr_comm_allreduce() from the first box that failed
 *   (shr_shard_strerror() names it), or -EPIPE (a box failed in an earlier call), -ENOMEM.
 *   Unlike one communicator's, a QINT32 job's -ERANGE (a NaN or infinity in box j's share
 *   at some rank) is not all or nothing: the boxes before j have summed their shares and
 *   written them to out (in place: in no longer holds the inputs there), the later ones
 *   nothing.
 */
int shr_shard_allreduce(struct shr_shard *shard, const void *in, void *out, uint64_t count,
			uint8_t op);

/** Reduce to root (shr_comm_reduce()). @return as shr_shard_allreduce(). */
int shr_shard_reduce(struct shr_shard *shard, const void *in, void *out, uint64_t count,
		     uint8_t op, uint16_t root);

/** Reduce-scatter (shr_comm_reduce_scatter()). @return as shr_shard_allreduce(). */
int shr_shard_reduce_scatter(struct shr_shard *shard, const void *in, void *out,
			     uint64_t count, uint8_t op);

/** Broadcast from root, in place (shr_comm_broadcast()). @return as shr_shard_allreduce(). */
int shr_shard_broadcast(struct shr_shard *shard, void *buf, uint64_t count, uint16_t root);

/** Allgather (shr_comm_allgather()). @return as shr_shard_allreduce(). */
int shr_shard_allgather(struct shr_shard *shard, const void *in, void *out, uint64_t count);

/** Gather to root (shr_comm_gather()). @return as shr_shard_allreduce(). */
int shr_shard_gather(struct shr_shard *shard, const void *in, void *out, uint64_t count,
		     uint16_t root);

/** Scatter from root (shr_comm_scatter()). @return as shr_shard_allreduce(). */
int shr_shard_scatter(struct shr_shard *shard, const void *in, void *out, uint64_t count,
		      uint16_t root);

/** All-to-all (shr_comm_alltoall()). @return as shr_shard_allreduce(). */
int shr_shard_alltoall(struct shr_shard *shard, const void *in, void *out, uint64_t count);

/**
 * Barrier at every box: returns once every rank has entered it at every box.
 *
 * @return
 *   As shr_shard_allreduce().
 */
int shr_shard_barrier(struct shr_shard *shard);

/**
 * Name the identity (step, tensor id) of the next call, as shr_comm_ident_set(); every box's
 * share of a call carries the call's identity.
 *
 * @return
 *   0, or -EINVAL (step below the current one or 2^31 or more above the first call's).
 */
int shr_shard_ident_set(struct shr_shard *shard, uint32_t step, uint32_t tensor);

/**
 * The identity the next call will carry (shr_comm_ident_get()).
 *
 * @param shard
 *   The sharded communicator.
 * @param step
 *   If not NULL: its step.
 * @param tensor
 *   If not NULL: its tensor id.
 */
void shr_shard_ident_get(const struct shr_shard *shard, uint32_t *step, uint32_t *tensor);

/**
 * Why a box aborted the job, after a call failed with -ECONNABORTED (shr_comm_abort_get()
 * of the box that failed).
 *
 * @param shard
 *   The sharded communicator.
 * @param info
 *   Filled when a box has aborted the job.
 * @param box
 *   If not NULL: that box's index.
 * @return
 *   0, or -ENOENT (no box has aborted the job).
 */
int shr_shard_abort_get(const struct shr_shard *shard, struct shr_comm_abort *info,
			uint16_t *box);

/**
 * The box of a sharded communicator.
 *
 * @param shard
 *   The sharded communicator.
 * @param j
 *   The box, < nboxes.
 * @return
 *   Its communicator (for shr_comm_info_get(), shr_comm_stats_get()...), or NULL (j out of
 *   range). Collectives must go through the sharded communicator.
 */
struct shr_comm *shr_shard_comm(const struct shr_shard *shard, uint16_t j);

/**
 * Boxes of a sharded communicator.
 *
 * @param shard
 *   The sharded communicator.
 * @return
 *   nboxes.
 */
uint16_t shr_shard_nboxes(const struct shr_shard *shard);

/**
 * How the waits of a sharded communicator spin before they sleep (lib/spin): with one box,
 * its communicator's waits (shr_comm_stats::spin, ::sleeps); with several, the sharded
 * communicator's own.
 *
 * @param shard
 *   The sharded communicator.
 * @param spin
 *   Set to the empty rounds the next wait spins before it sleeps.
 * @param sleeps
 *   Set to the idle periods of its waits that ended in a sleep.
 */
void shr_shard_spin_get(const struct shr_shard *shard, uint32_t *spin, uint64_t *sleeps);

/**
 * Describe an error of this API in one line, naming the box that failed, e.g. "box 2 of 2
 * (198.18.0.3:47000): job 7 rank 0: no result from the aggregator 198.18.0.3:47000 for
 * 10000 ms (...)"; with one box, shr_comm_strerror()'s text alone. Any other box that owed
 * the failed call results and had sent none in the call, or none for 100 ms or more, is named
 * after it ("; and box 1 of 2 (...): no result for 2100 ms"): when a box dies, a rank stuck
 * on it stops sending to the others, which may abort the job first, naming that rank; this
 * says which box went silent.
 *
 * @param shard
 *   The sharded communicator, or NULL (after shr_shard_create() failed: its params why
 *   has the box).
 * @param err
 *   A negative errno from this API.
 * @param buf
 *   Where to write.
 * @param len
 *   Size of buf.
 * @return
 *   buf.
 */
const char *shr_shard_strerror(const struct shr_shard *shard, int err, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SHR_SHARD_H */
