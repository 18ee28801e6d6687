/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_ENDPOINT_H
#define SHR_ENDPOINT_H

/**
 * @file
 * The host endpoint's state machine: one rank of one job.
 *
 * Operations (collectives: struct shr_endpoint_op) are queued and streamed in order as one
 * sequence of chunks of at most chunk_elems elements. Each operation is a sequence of rounds
 * over its round space (see shr_proto.h, "Kinds"): one block of count elements for
 * allreduce, reduce and broadcast; N blocks of count for reduce_scatter (block b's
 * destination is rank b), allgather (block b's source is rank b, to every rank), gather
 * (block b from rank b to the root) and scatter (block b from the root to rank b); N x N
 * blocks for alltoall (block (i, j), at offset (i N + j) count, from rank i to rank j). Each
 * block is chunked on its own (no chunk straddles two blocks); a relayed block whose source is
 * its destination is no round: its owner copies it locally at submit, and every rank skips
 * its offsets. In a relayed round a rank other than the source sends a header-only DATA
 * (SHR_FLAG_NOPAYLOAD, count elements, no payload).
 *
 * Identity. Every DATA carries its operation's tensor id and step (the caller's: a training
 * step and a tensor, as in the seed API's allreduce(tensor, step)) in the header's tensor and
 * step fields, and in offset the position of its first element in the endpoint's whole
 * stream: the operations' round spaces laid end to end in submission order (64 bits, never
 * reused). Steps may not decrease from one operation to the next, so (step, offset)
 * increases on every slot, which is the order in which a box that drops stale copies (an
 * ordered job) expects each slot's rounds. The box checks every field of a round's identity
 * (tensor, step, offset, count, kind, root, ...) against the other ranks' and aborts the job
 * (ABORT, EPROTO, naming both sides: see shr_proto.h) when ranks disagree.
 * Chunk k of the stream goes on slot (k mod W) of the job's window; each slot's version
 * flips every time the slot is reused (also across operations), and chunk k + W is sent only
 * once the result of chunk k is in. When it is not in yet, chunk k + W is deferred (planned
 * and queued on the slot, sent the moment that result comes in) and the stream goes on with
 * the next chunks (up to W deferred in all): a round late at one slot (a loss, here or at a
 * peer) holds up that slot, not the window, so the other slots' rounds keep the path busy.
 * At most `inflight` chunks are outstanding; the slots beyond them (spare slots,
 * shr_endpoint_slots()) let a late slot catch up. A chunk known to be late (resent, or held:
 * a hint says the box has it and waits for another rank) does not count, up to an eighth of
 * inflight (SHR_ENDPOINT_LATE_DIV) and the spare slots, scaled down with the congestion
 * window (x cwnd / inflight): so a stream
 * limited by its window goes on past the late chunks instead of losing a place of the window
 * for a round trip or more to each loss of any rank.
 * A RESULT's payload is written into the operation's output
 * buffer only where this rank is a destination of the round; a header-only RESULT completes a
 * round whose payload is for other ranks; duplicates and stale results are ignored.
 *
 * Loss recovery. A result arrives only once every rank has sent the chunk, so a late result
 * is often a slow rank, not a loss; but the box completes rounds in the order their last
 * contribution arrives, so results come back in the order the chunks were sent unless
 * something was lost, here or at a peer (or the network reorders). Hence:
 * - Fast resend, by transmission order (not stream order: a deferred chunk goes out after
 *   newer ones): once the answer to a transmission R or more later has come in (R, the
 *   reorder threshold, starts at `reorder` and is capped at W - 1; answers to resent chunks
 *   do not count, their copy is not known; the answer to a deferred chunk counts only for
 *   chunks older in the stream: the rank whose DATA completes the rounds sends in stream
 *   order, so that answer comes before those of the newer chunks sent before it, late or
 *   not), an outstanding chunk sent once is resent without waiting for its timer, as soon
 *   as it has waited as long as the newest answered transmission took plus a reorder window
 *   (a quarter of the minimum round trip at first). If the answer to that resend comes back
 *   sooner than half the minimum round trip, it answered the first copy (the resend was
 *   spurious: reordering): R grows by one (up to max(reorder, inflight / 2)) and the reorder
 *   window by a quarter of the minimum round trip (up to two); a resend that proves needed
 *   shrinks both by one step. A resend answered by a round that another rank completed (the
 *   RESULT's feedback), sooner or later, was not needed either: the round waited for that
 *   rank's recovery of its own loss, not for reordering (counted in fast_peer; R, the
 *   reorder window and the congestion window stay).
 * - Hints: a RESULT for slot s whose rank field names a rank (not SHR_PROTO_RANK_ALL) says
 *   that the round open at the box in slot s - lanes waits for that rank alone (shr_agg.h,
 *   "Hints"). If the chunk outstanding in that slot was sent once, before the chunk the
 *   RESULT answers: named, this rank resends it at once (counted in hint_resent and
 *   tx_fast: its copy, or its result of the slot's round before, was lost); another rank
 *   named, the box has this rank's copy, so it is not fast-resent, and its timer starts
 *   again (the named rank's resend takes a round trip from now; counted in hint_held).
 * - Timeout: one retransmission timer for the endpoint, on the oldest transmission
 *   outstanding (outstanding chunks sit on one intrusive list in (re)send order, a held
 *   chunk moved to its end, so this is O(1)): it fires RTO after that transmission (or
 *   hold). A timeout resends at most `rto_burst` of the oldest outstanding chunks (not the
 *   whole window: a slow rank or a stalled host delays every chunk at once, and resending
 *   them all is a burst the box may drop), and doubles the RTO for every chunk (global
 *   exponential backoff, up to rto_max) until an answer comes in (the box and the path work
 *   again; the base RTO itself moves only with fresh samples). At rto_max the timer comes
 *   back after RTO * rto_burst / the chunks outstanding rather than a full RTO, so each
 *   expired chunk still goes again about once per RTO (else once per W / rto_burst RTOs:
 *   too few tries, at heavy loss, for the box's job timeout). The answer to a timed-out
 *   chunk that comes back no sooner than half the minimum round trip after the resend
 *   proves that the chunks sent before the timeout were lost: each such answer lets two
 *   more of them be resent, oldest first (like TCP's slow start after a timeout), until
 *   none of them is left, or until one of them is answered without a resend (then they were
 *   late, not lost).
 * - RTT: a sample is the time from a chunk's only transmission to its result (Karn's rule:
 *   none from a resent chunk, except that a resent chunk's answer later than SRTT after its
 *   last transmission is taken: the round trip was at least that, and that once the box has
 *   answered every copy of a resent chunk, none was lost and the first answer was the first
 *   copy's: its time from the first transmission is taken, when the answers came back about
 *   as far apart as the copies went; else a round trip that jumps above the RTO, or a first
 *   one above rto_init, is never learnt while a window of chunks is outstanding: each times
 *   out first, and every answer ends the backoff), less the time the round waited at the
 *   box for the other ranks (the RESULT's feedback word, shr_proto.h; nothing when this
 *   rank completed the round; never below the minimum round trip): the path's round trip,
 *   so a slow peer does not inflate it and a queue on the path does. SRTT and RTTVAR follow
 *   Jacobson/Karels on those; RTO = SRTT + max(4 RTTVAR, SRTT / 2) (RTTVAR may not
 *   collapse: a loaded host stalls now and then) + 3/2 of the mean wait at the box, within
 *   [rto_min, rto_max]: never below the round trip. A round late because another rank lost
 *   its copy raises only the mean wait (no variation term). Where nearly every round waits
 *   for some rank's timer (a third of the messages lost, 33 ranks) the mean wait follows
 *   the peers' RTOs and takes the RTO to rto_max; there the paced timeouts above still
 *   retry every chunk once per RTO. The minimum round trip is a windowed minimum of the
 *   path's samples.
 *
 * Congestion control (cc_target_ns; delay-based, after Swift: see shr_endpoint_cc.c for why).
 * At most cwnd chunks (<= W) are outstanding, but for a deferred chunk, which goes when its
 * slot frees (it was deferred while the window had room, and replaces the answered one).
 * cwnd starts at cwnd_init and grows by one per answer (slow start) while the path's queueing
 * delay (its standing round trip, the smallest of the last two round trips, over its base,
 * the minimum over 5-10 s; a round trip ends when the answer reached this host, when the
 * driver says so, shr_endpoint_input_at(): the time it then waited to be read is this
 * host's, not the path's) is within the target (max(cc_target_ns, base)), then by one chunk
 * per round trip; above the target it shrinks in proportion to the overshoot (by at most
 * half, at most once per round trip); this rank's losses halve it, found when a fast resend
 * is answered by a round that this rank's resend completed or by a result the box sent
 * again (at most once per round trip, and only for a run of them, 2 and 5% of the window in
 * a round trip, with a standing queue of at least half the target: else the loss is random,
 * not congestion; not another rank's loss, nor a timeout: a round that does not complete at
 * all is mostly a stalled peer or host). After an idle period longer
 * than the RTO it slow-starts again from cwnd_init, so the window never leaves in one
 * burst. Competitive mode (after Copa's): when the queue stays over the target for 8 round
 * trips (of the longest since it rose: a queue that drains shortens them) while the window
 * shrank to an eighth (or its floor), the queue is another flow's (a loss-based one such as
 * TCP keeps the buffer full), so the window follows losses only (4
 * chunks per round trip, -30% on a fast resend) until the queue is under half the target;
 * every 64 round trips it tries the delay target again and, if the queue still does not
 * drain, returns to the window it had.
 *
 * Time and I/O come in through struct shr_endpoint_io, so a test can drive the machine
 * with a fake clock and an in-memory channel. Not thread-safe: one thread drives one
 * endpoint.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct shr_endpoint;

/** How the endpoint sends and tells time. */
struct shr_endpoint_io {
	/**
	 * Send one message to the aggregator: hdr is SHR_PROTO_HDR_LEN bytes (CRC already
	 * set), followed on the wire by payload_len bytes from payload.
	 * @return 0, or -EAGAIN (nothing sent; the endpoint tries again on a later poll), or
	 *   another negative errno (counted as a send error; the timer recovers it).
	 */
	int (*send)(void *ctx, const void *hdr, const void *payload, size_t payload_len);
	/** Monotonic time in nanoseconds. */
	uint64_t (*now_ns)(void *ctx);
	void *ctx;		/**< Passed to both. */
};

/** shr_endpoint_params::cc_target_ns: no congestion control. */
#define SHR_ENDPOINT_CC_OFF UINT64_MAX

/** Largest window an endpoint accepts. */
#define SHR_ENDPOINT_MAX_WINDOW 65536

/** Spare slots (shr_endpoint_slots()) and the late chunks' room (see "Spare slots") are
 *  rounded up to a multiple of this (a window that is a multiple of the box's lanes, 1, 2, 4
 *  or 8, stays one: hints need it). */
#define SHR_ENDPOINT_SPARE_ALIGN 8
/** The late chunks (resent or held) go beyond the window by at most inflight / this (at
 *  least 1, rounded up to SHR_ENDPOINT_SPARE_ALIGN, at most the spare slots), scaled by the
 *  congestion window (cwnd / inflight). */
#define SHR_ENDPOINT_LATE_DIV 8

/**
 * The slots to ask the box for, for a job that keeps at most inflight chunks outstanding:
 * inflight, and as many spare slots (inflight rounded up to a multiple of 8): 256 for 128,
 * at most SHR_ENDPOINT_MAX_WINDOW.
 *
 * Spare slots. A rank sends chunk k of its stream in slot k mod window, and a slot carries one
 * round at a time. When a chunk is lost, its slot's next chunk waits for the recovery; with
 * every slot in use (inflight = window), each slot carries one round per round trip and that
 * slot never catches up: its lag stays to the end of the operation, and every loss adds to
 * it. With spare slots, each slot is busy only inflight / window of the time and works off
 * its lag. In the simulation (tests/sim_loss: 4 ranks, 16 chunks in flight, 1% loss on every
 * message), 16 slots lose 13% of the lossless rate and 24 slots 9%; at 2% loss, 23% and 16%.
 * The late chunks themselves (resent or held) leave their place in the window to a chunk on a
 * spare slot, up to SHR_ENDPOINT_LATE_DIV: 24 slots then lose 4% at 1% loss and 6% at 2%,
 * and 32 slots (a whole window of spare ones, the default) 2.3% and 4.4%.
 *
 * Why a whole window of them: the stream runs on past a late chunk k for as many chunks as
 * there are spare slots before chunk k + window finds its slot busy and is deferred. A
 * deferred chunk goes out after newer ones, and not at the same place among them at every
 * rank (each sends it when its own copy of the late result comes in), so the box completes
 * its round after rounds this rank sent after it: the fast resend by transmission order
 * then resends it though the box has its copy. With an eighth (144 slots for 128 in flight)
 * a chunk late by a round trip under load was enough: 4 kernel-UDP ranks, 64 MiB float32,
 * 1% loss, each rank deferred 1,250-2,990 chunks a run and resent 797-1,332 (86-552 of
 * them for a round that only waited for another rank); with 256 slots, 27-88 deferred and
 * 732-833 resent (37-60). The goodput of those CPU-bound ranks stayed within its spread.
 *
 * @param inflight
 *   Chunks outstanding at most (> 0).
 * @return
 *   The slots to ask for (at least inflight; 0 if inflight is 0).
 */
uint32_t shr_endpoint_slots(uint32_t inflight);

/** The endpoint's job and tuning. Zero in a tuning field means the default. */
struct shr_endpoint_params {
	uint32_t job;
	uint16_t rank;
	uint16_t world;
	uint8_t dtype;		/**< The job's enum shr_proto_dtype. */
	uint64_t token;		/**< The job incarnation's token (from the JOIN_ACK): carried in
				 *   every DATA; a RESULT or ABORT with another is dropped
				 *   (counted in rx_bad). */
	uint32_t window;	/**< W: slots of the job (1..SHR_ENDPOINT_MAX_WINDOW). */
	uint32_t inflight;	/**< Chunks outstanding at most (1..window; 0: window). Fewer
				 *   than window leaves spare slots, so that a lost chunk's
				 *   slot does not hold up its stream (see "Spare slots");
				 *   shr_endpoint_slots() says how many to ask the box for. */
	uint32_t chunk_elems;	/**< Elements per chunk (> 0, chunk bytes <= 8192). */
	uint64_t rto_init_ns;	/**< First timeout, before any RTT sample. Default 1 ms
				 *   (clamped into [rto_min_ns, rto_max_ns]). */
	uint64_t rto_min_ns;	/**< Default 50 us; must not exceed rto_max_ns. */
	uint64_t rto_max_ns;	/**< Default 100 ms; at most SHR_ENDPOINT_MAX_RTO_NS. */
	uint64_t fail_ns;	/**< No result at all for this long: fail with -ETIMEDOUT.
				 *   Default 10 s; above SHR_ENDPOINT_MAX_FAIL_NS (UINT64_MAX:
				 *   never, in effect) taken as that. */
	uint32_t rto_burst;	/**< Chunks resent per timeout. Default 2. */
	uint32_t reorder;	/**< Initial reorder threshold R (how far up the stream a
				 *   result must be for an outstanding chunk to be resent).
				 *   Default 3; UINT32_MAX: never (the timer only). */
	uint64_t cc_target_ns;	/**< Congestion control: the queueing delay allowed on the
				 *   path, over its minimum round trip (the target is the
				 *   larger of this and that minimum). Default 1 ms;
				 *   SHR_ENDPOINT_CC_OFF: no congestion control (the whole
				 *   window may be outstanding at once, from the start). */
	uint32_t cwnd_init;	/**< Congestion window at the start and after an idle period
				 *   longer than the RTO, in chunks (slow start grows it from
				 *   there). Default min(inflight, 16); at most inflight. */
	uint16_t tree_rank;	/**< A member of a tree of boxes (shr_agg.h, "Trees"): this
				 *   rank in the whole tree (< tree_world), and the rank of
				 *   the collectives (root, blocks, N); rank and world stay
				 *   those of the job on this member's box. */
	uint16_t tree_world;	/**< Ranks in the whole tree; 0: not a tree's member (the
				 *   collectives' ranks are rank and world). */
	uint16_t lanes;		/**< The box's lanes (its JOIN_ACK): a RESULT's hint is for
				 *   slot s - lanes (see "Hints"). Default 1. */
};

/**
 * One operation: a collective of this rank (all ranks submit the same ones, in the same
 * order, with the same count, kind and root). The buffers must stay valid until the
 * operation is done. Sizes in elements of the job's dtype, N the world size; a buffer this
 * rank does not use may be NULL:
 *
 * @verbatim
 *  kind            in                          out
 *  allreduce       count                       count (may be in)
 *  reduce          count                       count, at root
 *  reduce_scatter  N x count                   count: block `rank` of the reduction
 *  broadcast       count, at root              count, at the others (may be in)
 *  allgather       count                       N x count: block r from rank r
 *  gather          count                       N x count, at root
 *  scatter         N x count, at root          count: block `rank` of root's in
 *  alltoall        N x count: block j to j     N x count: block i from rank i
 * @endverbatim
 *
 * A rank's own block of a relayed collective is copied locally at submit time (no round).
 */
struct shr_endpoint_op {
	uint8_t op;		/**< enum shr_proto_op (summed kinds; ignored by relays). */
	const void *in;		/**< See the table. */
	void *out;		/**< See the table. */
	uint64_t count;		/**< Elements, or elements per block (0 is allowed: done at
				     once). */
	uint32_t tensor;	/**< Tensor id, carried in every packet (any value; every
				 *   rank must give the same). */
	uint32_t step;		/**< Step (e.g. the training step), carried in every
				 *   packet: not below the previous operation's, and less
				 *   than 2^31 above the first operation's (the box compares
				 *   steps modulo 2^32). */
	uint8_t kind;		/**< enum shr_proto_kind (0: allreduce). */
	uint16_t root;		/**< Root rank (reduce, broadcast, gather, scatter); < world. */
	const uint32_t *aux;	/**< Summed kinds of a QINT32 job: the aux (block scale s)
				 *   of each round, which every rank must give the same:
				 *   ceil(count / chunk_elems) per block, block after block
				 *   (round j of block b: aux[b ceil(count / chunk_elems) +
				 *   j]); read when the round is first sent, so it stays valid
				 *   until the operation is done. NULL: 0 for every round.
				 *   Ignored by relays and other dtypes. */
};

/** Counters of one endpoint (monotonic). */
struct shr_endpoint_stats {
	uint64_t tx_data;	/**< DATA messages sent, first transmissions. */
	uint64_t tx_retx;	/**< DATA messages resent (all causes). */
	uint64_t tx_errors;	/**< send() failures other than -EAGAIN. */
	uint64_t rx_results;	/**< RESULTs accepted and written. */
	uint64_t rx_dup;	/**< RESULTs ignored: duplicate or stale. */
	uint64_t rx_bad;	/**< Messages refused: invalid, other job or token, unexpected
				 *   type. */
	uint64_t ops_done;	/**< Operations completed. */
	uint64_t srtt_ns;	/**< Smoothed round trip. */
	uint64_t rto_ns;	/**< Current base timeout (SRTT + max(4 RTTVAR, SRTT / 2),
				 *   clamped), before backoff. */
	uint64_t tx_fast;	/**< Resends (in tx_retx) because later results came in. */
	uint64_t tx_rto;	/**< Resends (in tx_retx) on a timeout, or in the recovery
				 *   that follows one. */
	uint64_t timeouts;	/**< Retransmission timer expiries. */
	uint64_t spurious;	/**< Fast resends found spurious (reordering). */
	uint32_t backoff;	/**< Current backoff: the RTO in use is rto_ns << backoff
				 *   (at most rto_max). */
	uint32_t reorder;	/**< Current reorder threshold R. */
	uint64_t min_rtt_ns;	/**< Windowed minimum round trip (0: no sample yet). */
	uint32_t cwnd;		/**< Congestion window now, in chunks (window when the
				 *   congestion control is off). */
	uint32_t cc_slow_start;	/**< 1 while the window is in slow start. */
	uint64_t cc_decr;	/**< Congestion window decreases (queueing delay over the
				 *   target, or a fast resend; at most one per round trip). */
	uint64_t cc_decr_loss;	/**< Of cc_decr: on a fast resend. */
	uint64_t cc_loss_noq;	/**< Fast resends that did not shrink the window: the path
				 *   had no standing queue (under half the target), so the
				 *   loss was not congestion. */
	uint64_t qdelay_ns;	/**< Standing queueing delay: the smallest path round trip
				 *   of the last two round trips over the path's base. */
	uint64_t box_wait_ns;	/**< Smoothed time this rank's chunks waited at the box for
				 *   the other ranks (from the RESULTs' feedback), taken out of
				 *   the RTT samples. */
	uint64_t host_delay_ns;	/**< Smoothed time a result waited in this host before it
				 *   was read (shr_endpoint_input_at(); 0 while the driver
				 *   does not say when results arrive), taken out of the
				 *   congestion window's samples, not the RTO's. */
	uint32_t cc_competitive;	/**< 1 while the window is in competitive mode: a
					 *   queue that does not drain when it shrinks is not its
					 *   own (a loss-based flow such as TCP fills the buffer),
					 *   so it follows losses, not the delay. */
	uint64_t cc_comp;	/**< Entries into competitive mode. */
	uint64_t cc_loss_rare;	/**< Losses of this rank that did not shrink the window:
				 *   fewer than 2, or under 5% of the window, in a round trip
				 *   (random loss, not a queue that overflowed). */
	uint64_t fast_peer;	/**< Fast resends (in tx_fast) not needed: another rank
				 *   completed the round (the RESULT's feedback), which waited
				 *   for that rank's recovery, not for this one's. */
	uint64_t hint_held;	/**< Chunks whose fast resend was held: a RESULT's hint
				 *   named another rank as the one the box still waited for
				 *   in the chunk's round (the box had this rank's copy). */
	uint64_t hint_resent;	/**< Fast resends (in tx_fast) on a hint that named this
				 *   rank: the box lacked its copy (or its result was lost). */
	uint64_t rtx_unneeded;	/**< Resent chunks of which every copy was answered (none
				 *   was lost: the resends were not needed), each taken as a
				 *   round trip sample from its first transmission. */
};

/** The largest rto_max_ns (a minute): a timer's deadline and backoff stay far from 2^64. */
#define SHR_ENDPOINT_MAX_RTO_NS 60000000000ull
/** The largest fail_ns in effect (2^62 ns, 146 years): a deadline cannot wrap. */
#define SHR_ENDPOINT_MAX_FAIL_NS (1ull << 62)

/**
 * Create an endpoint.
 *
 * @param params
 *   Job and tuning.
 * @param io
 *   Send and clock (copied).
 * @return
 *   The endpoint, or NULL with errno set: EINVAL (bad parameter), ENOMEM.
 */
struct shr_endpoint *shr_endpoint_create(const struct shr_endpoint_params *params,
					 const struct shr_endpoint_io *io);

/**
 * Free an endpoint (operations in flight are dropped). NULL is allowed.
 *
 * @param ep
 *   The endpoint.
 */
void shr_endpoint_free(struct shr_endpoint *ep);

/**
 * Queue an operation. Its chunks start going out on the next shr_endpoint_poll().
 *
 * @param ep
 *   The endpoint.
 * @param op
 *   The operation (copied; the buffers are not).
 * @return
 *   A handle (>= 0) for shr_endpoint_test(), or -EINVAL (kind >= SHR_KIND_MAX, root >=
 *   world; for a summed kind (allreduce, reduce, reduce_scatter) an unknown op or an
 *   op/dtype pair the box does not reduce (PROD of QINT32); with count > 0, a NULL buffer
 *   that this rank uses (see the table of struct shr_endpoint_op), N x count (N x N x count
 *   for alltoall) or a buffer's bytes that do not fit 64 bits / size_t or wrap the address
 *   space, in and out overlapping (both used by this rank) other than being the same buffer
 *   for allreduce or reduce, a step below the previous operation's or 2^31 or more above
 *   the first operation's, a round space that would take the stream past 2^64 elements),
 *   -EBUSY (SHR_ENDPOINT_MAX_OPS operations pending), -EPIPE (the
 *   endpoint has failed). An operation with no round (count 0, or a gather, scatter or
 *   alltoall of a world of 1) is done at once.
 */
int shr_endpoint_submit(struct shr_endpoint *ep, const struct shr_endpoint_op *op);

/** Operations that may be queued at once. */
#define SHR_ENDPOINT_MAX_OPS 64

/**
 * Where the next operation starts in the stream: its round space will take the offsets
 * [pos, pos + space) of the DATA headers (space: count, N x count or N x N x count elements,
 * see struct shr_endpoint_op), so a caller can tell which operation a DATA it sends belongs
 * to from its offset (read before and after shr_endpoint_submit()).
 *
 * @param ep
 *   The endpoint.
 * @return
 *   The stream offset (0 before the first operation).
 */
uint64_t shr_endpoint_stream_pos(const struct shr_endpoint *ep);

/**
 * Feed one received message (shouter header + payload). Validates it (CRC included).
 *
 * @param ep
 *   The endpoint.
 * @param msg
 *   Start of the shouter header.
 * @param len
 *   Bytes.
 * @return
 *   0 if it was a result this endpoint used, or -EINVAL (invalid, not for this job or
 *   with another incarnation's token, a type other than RESULT/ABORT, a slot outside the
 *   window, a dtype, op, kind, root or aux other than the chunk's, or a header-only RESULT
 *   for a round whose payload this rank needs), -EALREADY (duplicate or stale result: no
 *   chunk outstanding on its slot with that version, tensor, step, stream offset and
 *   count), -ECONNABORTED (an ABORT for this job: the endpoint has failed), or, once the
 *   endpoint has failed, its failure (the message is ignored).
 */
int shr_endpoint_input(struct shr_endpoint *ep, const void *msg, size_t len);

/**
 * shr_endpoint_input() of a message that reached the host at rx_ns (the driver's receive
 * timestamp, shr_drv_rx::rx_ns; the clock of io.now_ns). The time it then waited in this
 * host (queued for a busy or descheduled rank) is taken out of the congestion window's
 * delay signal: it is this host's, not the path's (Swift's endpoint delay), and a window
 * cut for it would not shorten it. The RTO still counts it.
 *
 * @param ep
 *   The endpoint.
 * @param msg
 *   Start of the shouter header.
 * @param len
 *   Bytes.
 * @param rx_ns
 *   When the message reached the host; 0 (or a time after now): not known, as
 *   shr_endpoint_input().
 * @return
 *   As shr_endpoint_input().
 */
int shr_endpoint_input_at(struct shr_endpoint *ep, const void *msg, size_t len, uint64_t rx_ns);

/**
 * Do the time-driven work: send the chunks the window allows, resend the late ones.
 *
 * @param ep
 *   The endpoint.
 * @return
 *   0, or the endpoint's failure: -ETIMEDOUT (no result for fail_ns), -ECONNABORTED
 *   (the box aborted the job).
 */
int shr_endpoint_poll(struct shr_endpoint *ep);

/**
 * State of an operation.
 *
 * @param ep
 *   The endpoint.
 * @param handle
 *   From shr_endpoint_submit().
 * @return
 *   1 (done; its output is complete), 0 (in progress), -ENOENT (no such handle, or a
 *   handle older than the last SHR_ENDPOINT_MAX_OPS), or the endpoint's failure
 *   (-ETIMEDOUT, -ECONNABORTED).
 */
int shr_endpoint_test(struct shr_endpoint *ep, int handle);

/**
 * True when no operation is pending.
 *
 * @param ep
 *   The endpoint.
 * @return
 *   1 or 0.
 */
int shr_endpoint_idle(const struct shr_endpoint *ep);

/**
 * How many more operations shr_endpoint_submit() takes now: SHR_ENDPOINT_MAX_OPS less those
 * pending (an operation is retired in submission order, so one done behind a pending one
 * still counts). A caller that must submit several operations or none (lib/comm's quantised
 * collectives: an exponents' round, then the data round) checks this first.
 *
 * @param ep
 *   The endpoint.
 * @return
 *   0..SHR_ENDPOINT_MAX_OPS.
 */
unsigned int shr_endpoint_room(const struct shr_endpoint *ep);

/**
 * Counters.
 *
 * @param ep
 *   The endpoint.
 * @param stats
 *   Filled.
 */
void shr_endpoint_stats_get(const struct shr_endpoint *ep, struct shr_endpoint_stats *stats);

/**
 * Earliest time at which shr_endpoint_poll() has timed work to do (for a caller that
 * sleeps), or UINT64_MAX if none.
 *
 * @param ep
 *   The endpoint.
 * @return
 *   A time in the io clock's nanoseconds: the retransmission timer or the fail_ns
 *   deadline; 0 (in the past) when something can be sent at once: a new chunk, a resend
 *   that results of later chunks or the recovery after a timeout call for, or one that
 *   send() pushed back with -EAGAIN; UINT64_MAX when there is nothing to wait for (idle,
 *   or failed).
 */
uint64_t shr_endpoint_next_deadline(const struct shr_endpoint *ep);

/**
 * Why the endpoint failed.
 *
 * @param ep
 *   The endpoint.
 * @param reason
 *   If not NULL and the endpoint has failed: the ABORT's reason (a positive errno chosen
 *   by the box), or ETIMEDOUT.
 * @param rank
 *   If not NULL and the endpoint has failed: the rank the ABORT named (for example, the
 *   silent one), or SHR_PROTO_RANK_ALL for a local timeout.
 * @return
 *   0 (not failed), -ETIMEDOUT or -ECONNABORTED.
 */
int shr_endpoint_error(const struct shr_endpoint *ep, uint32_t *reason, uint16_t *rank);

#ifdef __cplusplus
}
#endif

#endif /* SHR_ENDPOINT_H */
