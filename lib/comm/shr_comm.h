/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_COMM_H
#define SHR_COMM_H

/**
 * @file
 * The worker-side C API: one rank of one job, talking to an aggregator through a packet
 * driver (kernel UDP socket or DPDK port). This is what an application, a benchmark
 * (shouter-worker) or a framework binding uses.
 *
 * shr_comm_create() opens the driver and joins the job (JOIN until the box answers
 * JOIN_ACK, which it does once every rank has joined); collectives then stream through the
 * endpoint state machine (lib/endpoint). Progress is made by the calling thread, inside
 * shr_comm_allreduce(), shr_comm_test(), shr_comm_wait(), shr_comm_barrier() and
 * shr_comm_progress(): there is no background thread. When it has nothing to do, a
 * blocking call sleeps in the driver's wait() until a datagram arrives or the next
 * retransmission is due.
 *
 * Every rank of a job must issue the same collectives in the same order with the same
 * element counts, roots, steps and tensor ids. Each call carries its identity in every
 * packet: the step and tensor id named by shr_comm_ident_set() (the seed API's
 * allreduce(tensor, step)), or the automatic one (step 0, tensor ids 0, 1, 2... one per
 * call). The box compares every round's identity across the ranks; when ranks called
 * different collectives (another kind, root, count, step or tensor), it aborts the job at
 * once, and every rank fails with -ECONNABORTED: shr_comm_strerror() names both sides (the
 * rank that disagreed and what it called, and what another rank called), and
 * shr_comm_abort_get() gives them as fields. No rank gets a result of such a round.
 *
 * Collectives (each blocking, and non-blocking with an i-prefix returning a request for
 * shr_comm_test() / shr_comm_wait()), N the world size, counts in elements of the job's
 * dtype: allreduce, reduce (to a root), reduce_scatter (in N x count, out count),
 * broadcast (in place, from a root), allgather (in count, out N x count), gather (to a
 * root), scatter (from a root) and alltoall (in and out N x count). The sums are the box's;
 * the relays (broadcast, allgather, gather, scatter, alltoall) carry the bytes unchanged
 * (float NaNs, -0 and subnormals included), whatever the dtype.
 *
 * Quantised floats (SwitchML's): in a job of dtype SHR_DTYPE_QINT32, allreduce, reduce and
 * reduce_scatter (blocking and not) take float32 in and give float32 out; the box sums int32.
 * For each round (chunk) of the call, every rank takes the largest exponent of its values
 * there (shr_comm_qexp()); one int32 MAX allreduce of those exponents (4 bytes per chunk,
 * one more round trip per call: the box has no other way to agree them) gives every rank the
 * same E; each rank sends round(x 2^s) as int32, s = shr_comm_qshift(world, E) (so that no
 * sum overflows), with s in the DATA's aux, which the box checks is the same at every rank;
 * the int32 result times 2^-s is rounded to float32. Each output element is within
 * shr_comm_qbound(world, E) + half an ulp of itself of the exact sum of the ranks' inputs:
 * values much smaller than the largest of their chunk keep only the bits above the chunk's
 * step 2^-s (SwitchML's limit). MIN and MAX are those of the quantised values (the same
 * bound, without the world factor). PROD is refused (-EINVAL). A NaN or infinity in any
 * rank's input fails the call at every rank with -ERANGE (no data round; the job goes on).
 * The non-blocking calls do the exponent exchange before they return, and write out in
 * the shr_comm_test() or shr_comm_wait() that finds them done (so each must be waited
 * for). The relays and the barrier carry the bytes as they are.
 *
 * Not thread-safe: one thread uses one communicator.
 */

#include <stddef.h>
#include <stdint.h>

#include <shr_auth.h>
#include <shr_drv.h>
#include <shr_endpoint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct shr_comm;

/** shr_comm_params::cc_target_us: no congestion control. */
#define SHR_COMM_CC_OFF UINT32_MAX
/** Largest shr_comm_params::cc_target_us (1 s). */
#define SHR_COMM_CC_TARGET_MAX_US 1000000u

/** How to reach the aggregator, and the job. Zero means the default where one is given. */
struct shr_comm_params {
	const char *driver;	/**< "udp" (default when NULL) or "dpdk". */
	uint32_t agg_ip;	/**< Aggregator's IPv4 address, host order (required). */
	uint16_t agg_port;	/**< Its base UDP port. Default SHR_PROTO_UDP_PORT. */
	uint32_t local_ip;	/**< Local address, host order (udp: 0 = any; dpdk:
				 *   required). */
	uint16_t local_port;	/**< Local UDP port (udp: 0 = kernel-chosen; dpdk: default
				 *   SHR_PROTO_UDP_PORT). */
	uint32_t job;		/**< Job id. */
	uint16_t rank;		/**< This rank, < world. */
	uint16_t world;		/**< Ranks in the job (>= 1). */
	uint16_t tree_rank;	/**< A member of a tree of boxes (shr_agg.h, "Trees"): its rank
				 *   in the whole tree (< tree_world), given to its box at JOIN.
				 *   The collectives then take tree ranks: root, blocks and N
				 *   are the tree's (rank and world stay the job's on this
				 *   member's box). Every rank of the tree gives one, a
				 *   different one, else rooted collectives and the
				 *   gathers are refused by the box (EOPNOTSUPP); allreduce
				 *   needs none. */
	uint16_t tree_world;	/**< Ranks in the whole tree; 0 (default): not given. */
	uint8_t dtype;		/**< The job's enum shr_proto_dtype. */
	uint8_t repro;		/**< 1: a reproducible job (JOIN flag SHR_FLAG_REPRO): its
				 *   float SUM results are the exact sum rounded once, the same
				 *   bits whatever order the ranks' data arrive in at the box.
				 *   Every rank sets the same (else EINVAL); a box with no room
				 *   for it refuses it (ENOSPC). Default 0. */
	uint32_t window;	/**< Chunks in flight at most. Default 128 (fewer if the box
				 *   grants fewer slots). */
	uint32_t slots;		/**< Slots asked for, at least window (else EINVAL). 0
				 *   (default): shr_endpoint_slots(window), window and spare
				 *   slots, as many again rounded up to 8 (256 for 128), so
				 *   that a lost chunk's slot does not hold up the stream
				 *   (shr_endpoint.h). The box may grant fewer. */
	uint32_t chunk_elems;	/**< Elements per chunk asked for. 0 (default): the largest
				 *   that reaches the box whole from every member (each
				 *   offers its path's largest; the box grants the smallest).
				 *   A fixed chunk that does not fit this host's path fails
				 *   shr_comm_create() with EMSGSIZE. */
	uint32_t timeout_ms;	/**< Fail a join, or a collective that makes no progress,
				 *   after this long. Default 10000. */
	uint32_t spin;		/**< Empty progress rounds shr_comm_wait() spins before it
				 *   sleeps, at most. Default 0: automatic, as many as last
				 *   the shortest wait that slept 5 us or more (what a sleep
				 *   costs; at least 16 rounds, at most 1024 and 32 us). The
				 *   rounds adapt between 1 and that full spin (lib/spin,
				 *   shr_spin.h): they halve while waits last more than
				 *   twice the full spin (ranks sharing cores), and double
				 *   back when the full spin would have caught what came. */
	uint32_t rto_min_us;	/**< Floor of the retransmission timeout, at most 100000
				 *   (the RTO's ceiling; else EINVAL). Default: the
				 *   endpoint's (50 us). A higher floor is not needed on a
				 *   loaded host: a timeout resends only a couple of chunks
				 *   and backs off (measured, 4 ranks on 2 cores: 2 ms and
				 *   50 us give the same goodput and resends). */
	uint32_t cc_target_us;	/**< Congestion control: the queueing delay allowed on the
				 *   path (shr_endpoint_params::cc_target_ns). 0: the
				 *   endpoint's default (1 ms); SHR_COMM_CC_OFF: no
				 *   congestion control. Above SHR_COMM_CC_TARGET_MAX_US
				 *   (and not SHR_COMM_CC_OFF), shr_comm_create() fails
				 *   with EINVAL. Ranks that share cores with each other
				 *   and with the box see their hosts' scheduling in their
				 *   round trips: at 3 ms, 64 MiB at N = 4 on 2 cores went
				 *   7-11% faster, but two jobs on one bottleneck shared it
				 *   less evenly (Jain 0.93-1.00 against 1.00; measured
				 *   with the standing delay over half a round trip, before
				 *   it spanned two). */
	int eal_argc;		/**< dpdk: EAL arguments (argv[0] first) for rte_eal_init(),
				 *   if the EAL is not up yet. */
	char **eal_argv;	/**< @see eal_argc */
	uint16_t port_id;	/**< dpdk: the DPDK port. Default 0. */
	uint8_t agg_mac[6];	/**< dpdk: the aggregator's MAC (all zero, the default:
				 *   resolved by ARP). Either way it is pinned for the
				 *   communicator's life: an ARP request or reply from
				 *   anyone else cannot redirect the job's traffic
				 *   (shr_drv_stats::ctl_ignored counts those). A unicast
				 *   MAC, else shr_comm_create() fails with EINVAL. */
	uint16_t vlan;		/**< dpdk: the IEEE 802.1Q VLAN id (1..4094) of the port's
				 *   network: every frame is sent tagged with it (ARP too)
				 *   and only frames tagged with it are taken; others are
				 *   dropped, counted in shr_drv_stats::vlan_other. 0 (the
				 *   default): untagged. Above 4094: shr_comm_create()
				 *   fails with EINVAL. udp: not used (the kernel's route
				 *   decides: e.g. through a VLAN subinterface). */
	uint8_t udp_no_gso;	/**< udp: non-zero sends datagram by datagram; 0 (the default)
				 *   hands the kernel the DATA of a burst to the box as UDP
				 *   GSO messages (shr_drv_udp_conf::no_gso). dpdk: not used. */
	/**
	 * The job's secret, for a box that requires one (lib/auth: the JOIN answers the
	 * box's challenge with a proof; the secret itself is never sent). NULL or len 0:
	 * none. Copied.
	 */
	const struct shr_auth_secret *secret;
	/**
	 * 1: the job uses the per-job message authentication code (lib/mac: its JOIN asks
	 * for it, everything sent after is signed, everything from the box verified; refused
	 * and counted in shr_comm_stats::mac_*). Needs secret (else ENOKEY). A box whose job
	 * policy differs refuses the JOIN (EKEYREJECTED).
	 */
	uint8_t mac;
	/**
	 * 1: do not offer to receive at a result group (JOIN flag SHR_FLAG_GROUP). 0 (the
	 * default): offer it when the driver can join one (shr_drv_group_join(): the udp and
	 * ethdev drivers); the box then sends each result for every member once, to the
	 * group, if it has one and every member offered it. A group this host cannot join
	 * fails shr_comm_create() (the driver's errno; why says which group; the rank leaves
	 * the job).
	 */
	uint8_t no_group;
	char *why;		/**< Where shr_comm_create() writes why it failed when errno
				 *   alone does not say (the MTU and the chunk that fits,
				 *   for EMSGSIZE; the box's reason and the rank it named,
				 *   for ECONNABORTED). NULL: nowhere. Not kept. */
	size_t why_len;		/**< @see why */
	struct shr_drv *dev;	/**< A device already open (any driver: the application's
				 *   own, or a test's) to use instead of opening driver;
				 *   the communicator owns it from the call on: it is
				 *   closed by shr_comm_destroy(), or by shr_comm_create()
				 *   if that fails. NULL (default): open driver. */
};

/** What the join settled. */
struct shr_comm_info {
	uint32_t window;	/**< Chunks in flight at most: shr_comm_params::window, or
				 *   the slots granted if fewer. */
	uint32_t slots;		/**< Slots granted. */
	uint32_t chunk_elems;	/**< Elements per chunk granted. */
	uint16_t lanes;		/**< Aggregator UDP ports: DATA for slot s goes to
				 *   agg_port + s % lanes. */
	uint32_t local_ip;	/**< Local address (0 when bound to any). */
	uint16_t local_port;	/**< Local UDP port. */
	const char *driver;	/**< "udp" or "ethdev". */
	uint32_t group_ip;	/**< The job's result group (0: none): results for every
				 *   member come to this address too... */
	uint16_t group_port;	/**< ... at this UDP port. */
};

/** Counters of a communicator (monotonic). */
struct shr_comm_stats {
	struct shr_endpoint_stats ep;	/**< The endpoint's (retransmissions, RTT...). */
	struct shr_drv_stats drv;	/**< The driver's (packets, bytes, drops). */
	uint64_t rx_foreign;		/**< Datagrams not from the aggregator's address, and
					 *   control messages not for this communicator (another
					 *   job, nonce or incarnation token). */
	uint64_t rx_ctl;		/**< Control messages (JOIN_ACK, LEAVE_ACK, ABORT). */
	uint64_t mac_bad;		/**< From the box, refused: wrong MAC
					 *   (shr_comm_params::mac). */
	uint64_t mac_replay;		/**< ... a counter seen before or too old (replayed). */
	uint64_t mac_missing;		/**< ... no MAC where the job requires one. */
	uint64_t tx_deferred;		/**< Sends the driver could not take at once. */
	uint64_t tx_ended;		/**< Queued sends dropped unsent because their
					 *   collective had ended (its results came in, or the
					 *   communicator failed) before the driver took them. */
	uint64_t sleeps;		/**< Idle periods of shr_comm_wait() that ended in
					 *   a sleep. */
	uint32_t spin;			/**< Empty rounds the next wait spins before it
					 *   sleeps: 1..shr_comm_params::spin, or, automatic,
					 *   1..the rounds that last the full spin (at most
					 *   SHR_SPIN_AUTO_MAX, shr_spin.h). */
};

/** What a rank called, as the box saw it in one round (see shr_comm_abort_get()). */
struct shr_comm_call {
	uint8_t kind;		/**< enum shr_proto_kind (shr_proto_kind_str()). */
	uint16_t root;		/**< The round's root: the collective's root for reduce,
				 *   broadcast and scatter; for reduce_scatter, allgather,
				 *   gather and alltoall, the rank whose block the round
				 *   carries (shr_proto.h, "Kinds"); 0 for allreduce. */
	uint32_t tensor;	/**< Tensor id. */
	uint32_t step;		/**< Step. */
	uint32_t count;		/**< Elements of the round (one chunk of the call). */
};

/** Why the box aborted the job. */
struct shr_comm_abort {
	uint32_t reason;	/**< The box's reason, a positive errno: EPROTO (ranks called
				 *   different collectives), ETIMEDOUT (a rank did not join or
				 *   send in time, or the job was idle), ESTALE (a rank joined
				 *   again from a new process), ESHUTDOWN (the box is
				 *   stopping), EMSGSIZE (a rank's path cannot carry the
				 *   job's chunk), ... */
	uint16_t rank;		/**< The rank the box named, or SHR_PROTO_RANK_ALL. */
	uint32_t rank_ip;	/**< That rank's IPv4 address, host order (0: not known). */
	/**
	 * 1: a box above this rank's box in a tree of boxes ended the job (or the box's
	 * upstream stopped answering); reason is that box's, up_ip/up_port say which box,
	 * up_rank / rank_ip the member of its job it blamed (a box or rank below it), or
	 * up_rank SHR_PROTO_RANK_ALL: that box itself went silent.
	 */
	uint8_t upstream;
	uint16_t up_rank;	/**< upstream: the rank of that box's job it named. */
	uint32_t up_ip;		/**< upstream: that box's IPv4, host order. */
	uint16_t up_port;	/**< upstream: its UDP port. */
	/* EPROTO only: */
	uint8_t detailed;	/**< 1: the fields below are the box's; 0: not known (this
				 *   rank got only the ABORT the box sends again to a member
				 *   that missed the first one, which names rank alone). */
	uint16_t other;		/**< A rank of the round that rank disagreed with. */
	struct shr_comm_call called;	   /**< What rank called. */
	struct shr_comm_call other_called; /**< What other called. */
};

/**
 * Open the driver and join the job.
 *
 * @param params
 *   Aggregator, job and tuning (copied).
 * @return
 *   The communicator, or NULL with errno set: EINVAL (bad parameter, refused before
 *   anything is sent and said in why: world above SHR_PROTO_MAX_WORLD, window or slots
 *   above SHR_ENDPOINT_MAX_WINDOW, a tree_rank without tree_world, ...; or unknown driver),
 *   ENOMEM, ETIMEDOUT (no JOIN_ACK within timeout_ms, or within the box's own wait for the
 *   other ranks, which the box states while the job fills: box unreachable or a rank
 *   missing), ECONNABORTED (the box aborted the job while joining, e.g. a rank that never
 *   joined), EPROTO (malformed JOIN_ACK), the positive errno the box refused the join with
 *   (JOIN_ACK aux: for example EINVAL for a world size or dtype that differs from the
 *   job's, EADDRINUSE for a rank still bound to another live address after timeout_ms of
 *   retries, ENOSPC for no job entry or no free slots, EDQUOT for a source address that
 *   holds its share of jobs, EPERM for a host outside the box's allowlist, EACCES for a
 *   wrong secret, EMSGSIZE for a job's chunk that does not fit this host's path), EMSGSIZE
 *   (a fixed chunk_elems larger than this host's path to the box carries: params why says
 *   the MTU and the largest chunk), ENOKEY (the job requires a secret and params has none),
 *   or the driver's
 *   creation errno (EADDRINUSE, EHOSTUNREACH,
 *   ENODEV, ...). A rank that gives up while the job fills sends LEAVE, so the box unbinds
 *   it. Each communicator draws a random 64-bit nonce for its JOIN: a process that
 *   restarts with the same job id and rank joins a new incarnation of the job (the box
 *   aborts the old one), and no message of the old one reaches it.
 */
struct shr_comm *shr_comm_create(const struct shr_comm_params *params);

/**
 * Leave the job (LEAVE, then LEAVE_ACK awaited briefly: 500 ms at most) and release
 * everything, whatever the outcome of the LEAVE. Collectives still in flight are dropped.
 * NULL is allowed.
 *
 * @param comm
 *   The communicator.
 * @return
 *   0 (the box acknowledged the LEAVE, or had aborted the job), or a negative errno: the
 *   box did not acknowledge it and may still hold this rank (until its idle timeout):
 *   -ETIMEDOUT (no LEAVE_ACK within 500 ms), -EIO (driver failure).
 */
int shr_comm_destroy(struct shr_comm *comm);

/** shr_comm_qexp() of values that are all zero: the round needs no scale. */
#define SHR_COMM_QEXP_ZERO (INT32_MIN + 1)
/** shr_comm_qexp() of values of which one is a NaN or an infinity. */
#define SHR_COMM_QEXP_NONFINITE INT32_MAX

/**
 * The block exponent of float32 values: the largest frexp() exponent among the nonzero
 * ones, so that each |v| < 2^e.
 *
 * @param v
 *   The values.
 * @param n
 *   How many.
 * @return
 *   e, or SHR_COMM_QEXP_ZERO (every value is zero, or n is 0), or SHR_COMM_QEXP_NONFINITE
 *   (a NaN or an infinity).
 */
int32_t shr_comm_qexp(const float *v, size_t n);

/**
 * The scale of a QINT32 round: its values are sent as round(x 2^s) int32 words, s = 31 - e
 * - bits(world) (bits(w): the bits of w, floor(log2 w) + 1), so that |round(x 2^s)| <=
 * 2^(31 - bits(world)) and the sum of world of them stays below 2^31.
 *
 * @param world
 *   Ranks of the job.
 * @param e
 *   The round's block exponent agreed by every rank (the largest of theirs).
 * @return
 *   s (may be negative; within +-SHR_COMM_QSHIFT_MAX), or 0 for SHR_COMM_QEXP_ZERO and
 *   SHR_COMM_QEXP_NONFINITE.
 */
int shr_comm_qshift(uint16_t world, int32_t e);

/** The largest shr_comm_qshift() in magnitude (an exponent far outside float32's range). */
#define SHR_COMM_QSHIFT_MAX 1100

/**
 * The error of a QINT32 sum from quantisation: each rank's rounding is at most 2^-(s + 1),
 * so the int32 sum times 2^-s is within world 2^-(s + 1) of the exact sum of the float32
 * inputs; rounding it to float32 adds at most half an ulp of the output.
 *
 * @param world
 *   Ranks of the job.
 * @param e
 *   The round's agreed block exponent.
 * @return
 *   world 2^-(s + 1), s = shr_comm_qshift(world, e); 0 for an all-zero round.
 */
double shr_comm_qbound(uint16_t world, int32_t e);

/**
 * Blocking allreduce: out[i] = op over all ranks of in[i].
 *
 * @param comm
 *   The communicator.
 * @param in
 *   count elements of the job's dtype (float32 for a QINT32 job).
 * @param out
 *   count elements; may be the same buffer as in.
 * @param count
 *   Elements.
 * @param op
 *   enum shr_proto_op.
 * @return
 *   0, or -EINVAL (bad op or op/dtype pair, in or out NULL with count > 0, in and out
 *   overlapping other than in place, count x element size overflowing), -EBUSY (too many
 *   collectives pending), -ETIMEDOUT (no progress for timeout_ms), -ECONNABORTED (the box
 *   aborted the job; see
 *   shr_comm_strerror()), -EIO (driver failure), -EPIPE (the communicator failed before);
 *   a QINT32 job (float32 buffers, see above): -ERANGE (a NaN or infinity in some rank's
 *   in: out is not written), -ENOMEM (no room for the int32 copy), -EBUSY also when fewer
 *   than two more collectives fit (its exponents' round and its data round go out both or
 *   neither).
 */
int shr_comm_allreduce(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		       uint8_t op);

/**
 * Start an allreduce; its buffers must stay valid until it is done.
 *
 * @return
 *   A request (>= 0) for shr_comm_test() / shr_comm_wait(), or a negative errno as for
 *   shr_comm_allreduce().
 * @see shr_comm_allreduce
 */
int shr_comm_iallreduce(struct shr_comm *comm, const void *in, void *out, uint64_t count,
			uint8_t op);

/**
 * Blocking reduce: out[i] = op over all ranks of in[i], at root only.
 *
 * @param comm
 *   The communicator.
 * @param in
 *   count elements of the job's dtype (float32 for a QINT32 job).
 * @param out
 *   root: count elements (may be in); other ranks: not used (may be NULL).
 * @param count
 *   Elements.
 * @param op
 *   enum shr_proto_op.
 * @param root
 *   The rank that gets the result (< world).
 * @return
 *   0, or -EINVAL (bad op or op/dtype pair, root >= world, NULL in, or NULL out at root,
 *   with count > 0, in and out overlapping but not the same), -EBUSY, -ETIMEDOUT,
 *   -ECONNABORTED, -EIO, -EPIPE (as for shr_comm_allreduce()).
 */
int shr_comm_reduce(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		    uint8_t op, uint16_t root);

/**
 * Start a reduce; its buffers must stay valid until it is done.
 *
 * @return
 *   A request (>= 0) for shr_comm_test() / shr_comm_wait(), or a negative errno as for
 *   shr_comm_reduce().
 * @see shr_comm_reduce
 */
int shr_comm_ireduce(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		     uint8_t op, uint16_t root);

/**
 * Blocking reduce-scatter: rank r gets block r of the reduction, out[i] = op over all ranks
 * of in[r * count + i]. Each block's sum goes to its owner only.
 *
 * @param comm
 *   The communicator.
 * @param in
 *   world x count elements.
 * @param out
 *   count elements; must not overlap in.
 * @param count
 *   Elements per rank (block).
 * @param op
 *   enum shr_proto_op.
 * @return
 *   0, or -EINVAL (bad op or op/dtype pair, a NULL buffer with count > 0, world x count
 *   overflows, in and out overlapping), -EBUSY, -ETIMEDOUT, -ECONNABORTED, -EIO, -EPIPE (as
 *   for shr_comm_allreduce()).
 */
int shr_comm_reduce_scatter(struct shr_comm *comm, const void *in, void *out, uint64_t count,
			    uint8_t op);

/**
 * Start a reduce-scatter; its buffers must stay valid until it is done.
 *
 * @return
 *   A request (>= 0), or a negative errno as for shr_comm_reduce_scatter().
 * @see shr_comm_reduce_scatter
 */
int shr_comm_ireduce_scatter(struct shr_comm *comm, const void *in, void *out, uint64_t count,
			     uint8_t op);

/**
 * Blocking broadcast, in place: buf at every rank gets root's buf. The root sends its
 * elements once; the other ranks send only headers; the box relays the bytes unchanged.
 *
 * @param comm
 *   The communicator.
 * @param buf
 *   count elements: the root's input, every other rank's output.
 * @param count
 *   Elements.
 * @param root
 *   The rank whose buf is sent (< world).
 * @return
 *   0, or -EINVAL (root >= world, buf NULL with count > 0), -EBUSY, -ETIMEDOUT,
 *   -ECONNABORTED, -EIO, -EPIPE (as for shr_comm_allreduce()).
 */
int shr_comm_broadcast(struct shr_comm *comm, void *buf, uint64_t count, uint16_t root);

/**
 * Start a broadcast; buf must stay valid until it is done.
 *
 * @return
 *   A request (>= 0), or a negative errno as for shr_comm_broadcast().
 * @see shr_comm_broadcast
 */
int shr_comm_ibroadcast(struct shr_comm *comm, void *buf, uint64_t count, uint16_t root);

/**
 * Blocking allgather: out[r * count + i] = rank r's in[i] at every rank.
 *
 * @param comm
 *   The communicator.
 * @param in
 *   count elements.
 * @param out
 *   world x count elements (block `rank` is copied from in locally); must not overlap in.
 * @param count
 *   Elements per rank.
 * @return
 *   0, or -EINVAL (a NULL buffer with count > 0, world x count overflows, in and out
 *   overlapping), -EBUSY, -ETIMEDOUT, -ECONNABORTED, -EIO, -EPIPE (as for
 *   shr_comm_allreduce()).
 */
int shr_comm_allgather(struct shr_comm *comm, const void *in, void *out, uint64_t count);

/**
 * Start an allgather; its buffers must stay valid until it is done.
 *
 * @return
 *   A request (>= 0), or a negative errno as for shr_comm_allgather().
 * @see shr_comm_allgather
 */
int shr_comm_iallgather(struct shr_comm *comm, const void *in, void *out, uint64_t count);

/**
 * Blocking gather: at root, out[r * count + i] = rank r's in[i].
 *
 * @param comm
 *   The communicator.
 * @param in
 *   count elements.
 * @param out
 *   root: world x count elements, not overlapping in; other ranks: not used (may be NULL).
 * @param count
 *   Elements per rank.
 * @param root
 *   The rank that gets every block (< world).
 * @return
 *   0, or -EINVAL (root >= world, NULL in, or NULL out at root, with count > 0, world x
 *   count overflows, in and out overlapping), -EBUSY, -ETIMEDOUT, -ECONNABORTED, -EIO,
 *   -EPIPE (as for shr_comm_allreduce()).
 */
int shr_comm_gather(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		    uint16_t root);

/**
 * Start a gather; its buffers must stay valid until it is done.
 *
 * @return
 *   A request (>= 0), or a negative errno as for shr_comm_gather().
 * @see shr_comm_gather
 */
int shr_comm_igather(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		     uint16_t root);

/**
 * Blocking scatter: rank r gets out[i] = root's in[r * count + i].
 *
 * @param comm
 *   The communicator.
 * @param in
 *   root: world x count elements; other ranks: not used (may be NULL).
 * @param out
 *   count elements, not overlapping in.
 * @param count
 *   Elements per rank.
 * @param root
 *   The rank that sends every block (< world).
 * @return
 *   0, or -EINVAL (root >= world, NULL out, or NULL in at root, with count > 0, world x
 *   count overflows, in and out overlapping), -EBUSY, -ETIMEDOUT, -ECONNABORTED, -EIO,
 *   -EPIPE (as for shr_comm_allreduce()).
 */
int shr_comm_scatter(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		     uint16_t root);

/**
 * Start a scatter; its buffers must stay valid until it is done.
 *
 * @return
 *   A request (>= 0), or a negative errno as for shr_comm_scatter().
 * @see shr_comm_scatter
 */
int shr_comm_iscatter(struct shr_comm *comm, const void *in, void *out, uint64_t count,
		      uint16_t root);

/**
 * Blocking all-to-all: rank j gets out[i * count + k] = rank i's in[j * count + k]. The box
 * relays each block (i, j), i != j, from rank i to rank j only; block (r, r) is copied
 * locally.
 *
 * @param comm
 *   The communicator.
 * @param in
 *   world x count elements: block j goes to rank j.
 * @param out
 *   world x count elements: block i comes from rank i; must not overlap in.
 * @param count
 *   Elements per block.
 * @return
 *   0, or -EINVAL (a NULL buffer with count > 0, world x world x count or world x count
 *   bytes overflow, in and out overlapping), -EBUSY, -ETIMEDOUT, -ECONNABORTED, -EIO,
 *   -EPIPE (as for shr_comm_allreduce()).
 */
int shr_comm_alltoall(struct shr_comm *comm, const void *in, void *out, uint64_t count);

/**
 * Start an all-to-all; its buffers must stay valid until it is done.
 *
 * @return
 *   A request (>= 0), or a negative errno as for shr_comm_alltoall().
 * @see shr_comm_alltoall
 */
int shr_comm_ialltoall(struct shr_comm *comm, const void *in, void *out, uint64_t count);

/**
 * Name the identity of the next collective call: the step (e.g. the training step) and the
 * tensor id that it carries in every packet and that the box compares across the ranks.
 * The step stays that of every later call until set again, may never decrease and stays
 * less than 2^31 above the first call's (the box orders each slot's rounds by step, compared
 * modulo 2^32, then by position in the stream); each later call's
 * tensor id is one more than the previous call's (barriers are calls). Without this: step 0,
 * and tensor ids 0, 1, 2... from the first call. Every rank must name the same identities
 * for the same calls: a rank that calls with another step or tensor id than the others makes
 * the box abort the job (EPROTO; see shr_comm_strerror()).
 *
 * @param comm
 *   The communicator.
 * @param step
 *   The step, not below the current one (shr_comm_ident_get()), less than 2^31 above the
 *   first call's.
 * @param tensor
 *   The tensor id of the next call (any value).
 * @return
 *   0, or -EINVAL (step below the current step, or 2^31 or more above the first call's;
 *   nothing changed).
 */
int shr_comm_ident_set(struct shr_comm *comm, uint32_t step, uint32_t tensor);

/**
 * The identity the next collective call will carry.
 *
 * @param comm
 *   The communicator.
 * @param step
 *   If not NULL: its step.
 * @param tensor
 *   If not NULL: its tensor id.
 */
void shr_comm_ident_get(const struct shr_comm *comm, uint32_t *step, uint32_t *tensor);

/**
 * Why the box aborted the job (after a call failed with -ECONNABORTED).
 *
 * @param comm
 *   The communicator.
 * @param info
 *   Filled when the box has aborted the job.
 * @return
 *   0, or -ENOENT (the box has not aborted the job).
 */
int shr_comm_abort_get(const struct shr_comm *comm, struct shr_comm_abort *info);

/**
 * Make progress once (without sleeping) and tell whether a request is done.
 *
 * @param comm
 *   The communicator.
 * @param req
 *   From shr_comm_iallreduce() or another i-collective.
 * @return
 *   1 (done: its output is complete), 0 (in progress), -ENOENT (no such request, or one
 *   older than the last SHR_ENDPOINT_MAX_OPS), -ETIMEDOUT, -ECONNABORTED, -EIO.
 */
int shr_comm_test(struct shr_comm *comm, int req);

/**
 * Wait until a request is done, making progress (and sleeping when idle).
 *
 * @param comm
 *   The communicator.
 * @param req
 *   From shr_comm_iallreduce() or another i-collective.
 * @return
 *   0, or a negative errno as for shr_comm_test().
 */
int shr_comm_wait(struct shr_comm *comm, int req);

/**
 * Barrier: returns once every rank has entered it (an allreduce of one element of the
 * job's dtype).
 *
 * @param comm
 *   The communicator.
 * @return
 *   0, or a negative errno as for shr_comm_allreduce().
 */
int shr_comm_barrier(struct shr_comm *comm);

/**
 * Make progress once, without sleeping (for callers that poll from their own loop).
 *
 * @param comm
 *   The communicator.
 * @return
 *   The number of datagrams received and sent (0: idle), or -ETIMEDOUT, -ECONNABORTED,
 *   -EIO.
 */
int shr_comm_progress(struct shr_comm *comm);

/**
 * The file descriptor to wait on, for a caller that waits on several communicators (or
 * other sources) at once: it polls readable (POLLIN) when a datagram may be ready. Between
 * two rounds of shr_comm_progress(), sleep in poll() on it at most shr_comm_idle_us().
 *
 * @param comm
 *   The communicator.
 * @return
 *   A file descriptor (still owned by the communicator), or -ENOTSUP (the driver has none:
 *   the dpdk driver polls its port; call shr_comm_progress() without sleeping).
 */
int shr_comm_fd(const struct shr_comm *comm);

/**
 * How long a caller that polls from its own loop may sleep before the communicator has
 * timed work (a retransmission, a timeout) or sends it could not make: between two rounds
 * of shr_comm_progress(), wait on shr_comm_fd() at most this long.
 *
 * @param comm
 *   The communicator.
 * @param max_us
 *   The most to return.
 * @return
 *   Microseconds, at most max_us; 0: call shr_comm_progress() again at once (also when the
 *   communicator has failed: the next call returns its error).
 */
uint64_t shr_comm_idle_us(struct shr_comm *comm, uint64_t max_us);

/**
 * What the join settled.
 *
 * @param comm
 *   The communicator.
 * @param info
 *   Filled.
 */
void shr_comm_info_get(const struct shr_comm *comm, struct shr_comm_info *info);

/**
 * Counters.
 *
 * @param comm
 *   The communicator.
 * @param stats
 *   Filled.
 */
void shr_comm_stats_get(const struct shr_comm *comm, struct shr_comm_stats *stats);

/**
 * Describe an error returned by this API, in one line. For -ECONNABORTED it names the job,
 * the rank the box blamed (for example the one that went silent) and the box's reason; when
 * ranks called different collectives (EPROTO), both sides, for example "job 7 aborted by
 * the aggregator 198.18.0.1: ranks called different collectives: rank 2 called
 * allgather(rank 0's block, tensor 4, step 9, round of 256 elements) where rank 0 called
 * broadcast(root 0, tensor 4, step 9, round of 256 elements)".
 *
 * @param comm
 *   The communicator that returned err, or NULL (after shr_comm_create() failed: pass
 *   -errno).
 * @param err
 *   A negative errno from this API.
 * @param buf
 *   Where to write the text.
 * @param len
 *   Size of buf.
 * @return
 *   buf.
 */
const char *shr_comm_strerror(const struct shr_comm *comm, int err, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SHR_COMM_H */
