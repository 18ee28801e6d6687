/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_AGG_H
#define SHR_AGG_H

/**
 * @file
 * The aggregator's message logic, without any packet I/O: the job table, membership,
 * validation against the job, and the slot pool. The DPDK application (and the tests'
 * in-memory simulation) feed it shouter messages with an opaque source address and send
 * what it asks them to send.
 *
 * Addresses are opaque 64-bit keys chosen by the caller (the applications use
 * SHR_AGG_ADDR(ipv4, udp_port), both in host order). A rank is bound to the address its
 * JOIN came from (or the one in the static job table); DATA for that rank from any other
 * address is refused as SHR_PROTO_SPOOFED. DATA of a rank that has left an active job, from
 * the address it was bound to, is a late copy: dropped and counted as stale
 * (shr_agg_stats::stale), not as spoofed.
 *
 * Threading: shr_agg_input() for DATA touches only the slots of the message and the
 * caller's stats block, so several lcores may call it at once if they own disjoint slots
 * (the lanes: slot mod lanes) and the job table is not changing. Everything that changes the
 * job table (JOIN, LEAVE, shr_agg_job_add/del, shr_agg_tick) must run on one lcore, with
 * the data lcores quiescent or excluded by the caller.
 *
 * Membership and incarnations, as implemented:
 * - Every JOIN carries the member's nonce in its token field (random, non-zero; a JOIN
 *   without one is refused, BAD_TOKEN). Every job has a current incarnation with a random
 *   64-bit token (a static job may configure it: shr_agg_job_conf::token); every JOIN_ACK
 *   carries it and echoes the JOIN's nonce in its offset field, and every later message of
 *   the job carries it: DATA or LEAVE with another token is refused as BAD_TOKEN, and every
 *   RESULT, LEAVE_ACK and ABORT the box sends carries it.
 * - The first JOIN of an unknown job creates it with the JOIN's world, dtype, chunk (count)
 *   and window (slot field; 0: def_window; more than max_window: max_window). Later JOINs
 *   must carry the same four values (for a static job, the window requested is ignored). A
 *   job made by JOIN holds no pool slots until its last rank has joined; it is refused when
 *   the job table is full (ENOSPC, JOBS_FULL), when the JOIN's IPv4 address has made
 *   max_src_jobs jobs that are still in the table (EDQUOT, SRC_LIMIT), or when the pool has
 *   fewer free slots than its window (ENOSPC, POOL_FULL; checked again when the last rank
 *   joins: if the window cannot be reserved then, the job is aborted with ENOSPC).
 * - While the job fills, each JOIN is answered at once with JOIN_ACK aux EINPROGRESS (the
 *   feedback field: the ms the box still waits for the other ranks). When the last rank
 *   joins, one JOIN_ACK (rank SHR_PROTO_RANK_ALL, aux 0, slot = window, count = chunk,
 *   tensor = lanes) goes to all members. A repeated JOIN (same rank, nonce and address) gets
 *   the same answer again, to the sender.
 * - A JOIN with a new nonce for a bound rank is a restarted member. From the same IPv4
 *   address as the bound one, or once no member has sent anything for job_timeout_ns, it
 *   starts a new incarnation: the running one is aborted (ABORT, aux ESTALE, naming that
 *   rank, to the old members; counted in incarnations), its slots start from fresh state and
 *   a new token is drawn; the member's next JOIN (lib/comm resends it) joins the new one.
 *   While the job is still filling it simply replaces the old binding. From another address
 *   while the job is alive, it is refused (EADDRINUSE, SPOOFED) and the member may retry.
 *   A JOIN with a new nonce for a rank that has left a running job also starts a new
 *   incarnation; one with the nonce of the rank that left is a late copy (STALE_JOIN).
 * - Incarnations that end (aborted, or every member left) are remembered for 10 job
 *   timeouts, in a small table (min(max_jobs, 16) records; the oldest is forgotten first):
 *   a JOIN with the nonce of one of their members never creates, joins or restarts a job
 *   (STALE_JOIN), and DATA or a JOIN of a member of an aborted one is answered with the same
 *   ABORT again (to that member alone; the ABORT that answers a JOIN echoes its nonce),
 *   counted in reaborts, at most once per job_timeout/10 (1 ms at least) and 8 times per
 *   member. So a stale JOIN cannot recreate a job its members have left.
 * - LEAVE (with the token): the rank is unbound and gets a LEAVE_ACK (aux 0); a LEAVE for a
 *   rank not bound (resent) is acked again; a LEAVE for an unknown job gets a LEAVE_ACK with
 *   aux ENOENT echoing the LEAVE's token (and counts as UNKNOWN_JOB) so that a resent LEAVE
 *   after the job was freed terminates. The job keeps running while some members remain (a
 *   late member can still get its lost results resent); it is freed when the last member has
 *   left. A LEAVE from a rank of a job still filling unbinds it (a rank that gave up). A
 *   static job is never freed: once all have left, it starts a new incarnation with fresh
 *   slots and waits for JOINs again; members with configured addresses (fixed) stay bound,
 *   and the incarnation ends when every member that joined it has left.
 * - Jobs created by JOIN are ordered (see shr_agg_job_conf::ordered): step is compared
 *   modulo 2^32, then offset.
 * - RESULTs of completed rounds go to the addresses of all ranks (also one that has left).
 * - Members that disagree: in an ordered job, a DATA that is out of step with the open
 *   round of its slot copy (another collective, root, tensor, step, count or offset; stale
 *   copies were dropped before) means the members called different collectives. The next
 *   shr_agg_tick() aborts the job with EPROTO, naming that member and a member of the open
 *   round, with both rounds' identities (shr_proto.h, ABORT): a clear error at every
 *   member rather than a round that never completes (counted in mismatches).
 * - Trees (shr_agg_params::upstream): a box with an upstream box is, for each of its jobs,
 *   one member of the job of the same id there. Once its own members have all joined it
 *   JOINs upstream (resent every SHR_AGG_UP_JOIN_GAP_NS while the upstream job fills) and
 *   grants its members the upstream's window (at most its own) only when the upstream has
 *   admitted it; the upstream must grant the same chunk (else the job is aborted with
 *   EMSGSIZE), so a tree needs the same explicit chunk at every rank. A round its members
 *   complete goes upstream as one DATA (this box's partial result, same identity), and the
 *   slot stays held until the upstream RESULT comes back: then it replaces the partial sum
 *   in the pool and goes to the members, so a member's late copy gets the final result.
 *   Loss: a member's copy of a round waiting upstream sends the DATA upstream again (at
 *   most once per SHR_AGG_UP_RESEND_GAP_NS), so the members' timers recover both hops. A
 *   round waiting upstream longer than 1.5 job_timeout_ns aborts the job (ETIMEDOUT, flag
 *   SHR_FLAG_UPSTREAM naming the upstream box: longer than the upstream's own bound on a
 *   round, so that when a member elsewhere in the tree holds a round up, the upstream's
 *   ABORT naming that member's box comes first); an ABORT from upstream aborts it with the
 *   upstream's reason (same flag; an ABORT that itself came down the tree keeps naming the
 *   box that blamed and the member it blamed); a job this box aborts is left upstream with
 *   a LEAVE aux ECONNABORTED, which aborts it there at once (and so at every other box of
 *   the tree); a job that ends is left with a plain LEAVE. Either LEAVE is sent again
 *   every SHR_AGG_UP_JOIN_GAP_NS until the upstream answers it (LEAVE_ACK, or ABORT), 20
 *   times at most. A reproducible job is refused (JOB_DTYPE).
 *   Every collective: a member JOINs with the tree ranks it stands for (root = the first,
 *   tensor = how many; a worker: its own one; a box: its members', once they tile a range),
 *   and a tree's job takes root and destination (aux) as tree ranks: a relayed round's
 *   source is the member that stands for root; a round's payload goes to the member that
 *   stands for its destination (or, a relay to every rank, to all but the source's). Up the
 *   tree, a relayed round carries its payload only from the box whose members hold the
 *   source; down, the upstream's RESULT carries the payload exactly where this rule says so
 *   (checked: otherwise refused, BAD_LEN), else it is header-only and the slot's own result
 *   (the members' partial sum, or the source's payload) goes down. Members whose tree ranks
 *   do not tile a range (none given, or the same one twice) can run allreduce only: a DATA
 *   of another kind aborts the job (EOPNOTSUPP naming its rank).
 * - Lifecycle bounds (shr_agg_tick): a round open longer than job_timeout_ns aborts its
 *   job, naming the lowest rank missing from it (in a tree, not while a round of the job
 *   waits upstream: the members may be held back by it, and the upstream's bound, or this
 *   box's own 1.5 job timeouts on that round, names the box at fault); a job whose
 *   members have not all joined within SHR_AGG_JOIN_WAIT x job_timeout_ns of its first JOIN
 *   is aborted, naming the lowest missing rank (members are processes that start at
 *   different times: a DPDK rank's EAL alone can take seconds on a loaded host); an
 *   active job none of whose members has sent anything for idle_ns is aborted (rank
 *   SHR_PROTO_RANK_ALL, ETIMEDOUT; counted in idle_reclaims). A job made by JOIN is freed
 *   by an abort; a static job starts a new incarnation (ranks bound by JOIN are unbound).
 * - Hints: the RESULT of a round completed in slot s names in its rank field the one rank
 *   that the round open in slot s - lanes (modulo the window, which must be a multiple of
 *   lanes larger than them; the same lane's slot before s) still waits for, else it carries
 *   SHR_PROTO_RANK_ALL (counted in hints). A member sends chunk k of its stream in slot k mod
 *   window and a lane's DATA on one path in order, so that rank's copy (or its RESULT of the
 *   slot's round before) was lost: it resends at once, and the others, whose copies the box
 *   has, do not (lib/endpoint/shr_endpoint.h, "Hints").
 * - Nudges (shr_agg_tick): a round open for job_timeout_ns / 8 whose missing members have not
 *   acknowledged the slot's previous round (their bit is still set in the other copy, which
 *   holds its result) gets that result resent to each of them, unasked, at most once per
 *   job_timeout_ns / 8 (counted in nudges): a member whose RESULT was lost while its own
 *   timer is busy with a stalled window is not left to time out for a round it could not
 *   send. A tree's round still waiting upstream is not nudged (no result yet).
 */

#include <stddef.h>
#include <stdint.h>

#include <shr_auth.h>
#include <shr_proto.h>

#ifdef __cplusplus
extern "C" {
#endif

struct shr_agg;

/** A dynamic job waits this many job timeouts for all its members to join. */
#define SHR_AGG_JOIN_WAIT 4
/** Trees: a box resends its JOIN upstream this often while the upstream job fills. */
#define SHR_AGG_UP_JOIN_GAP_NS 50000000ull
/**
 * Admission challenges a second, at most, after a burst of max_world (at least 64): a
 * challenge (112 bytes) answers an unproven JOIN (64) at the address the JOIN names, so the
 * box must not reflect a flood of forged JOINs at full rate. A member refused one JOINs again.
 */
#define SHR_AGG_CHALLENGE_RATE 8192u
/** Trees: a round waiting upstream is sent up again at most this often. */
#define SHR_AGG_UP_RESEND_GAP_NS 100000ull

/** Make an address key from an IPv4 address and a UDP port (both host order). */
#define SHR_AGG_ADDR(ip, port) (((uint64_t)(uint32_t)(ip) << 16) | (uint16_t)(port))
/** IPv4 address (host order) of an address key. */
#define SHR_AGG_ADDR_IP(a) ((uint32_t)((a) >> 16))
/** UDP port (host order) of an address key. */
#define SHR_AGG_ADDR_PORT(a) ((uint16_t)((a) & 0xffff))

/** Dimensions and policy, fixed at creation. Zero means the default. */
struct shr_agg_params {
	uint32_t nslots;	/**< Slots in the pool. Default SHR_AGG_DEF_NSLOTS (4096). */
	uint32_t max_elems;	/**< Largest chunk, elements. Default 2048. */
	uint16_t max_world;	/**< Largest world size. Default 1024. */
	uint32_t max_jobs;	/**< Jobs at once. Default SHR_AGG_DEF_MAX_JOBS (64). */
	uint32_t max_window;	/**< Largest window granted to a job. Default
				 *   SHR_AGG_DEF_MAX_WINDOW (512), at most nslots. */
	uint16_t lanes;		/**< UDP ports / lcores the slots are spread over. Default 1. */
	uint64_t job_timeout_ns; /**< A round open this long aborts its job. Default 5 s. */
	uint32_t def_window;	/**< Window of a JOIN that asks for 0. Default 128 (at most
				 *   max_window). */
	uint32_t max_src_jobs;	/**< Jobs made by JOINs from one IPv4 address, at once.
				 *   Default 4. */
	uint64_t idle_ns;	/**< An active job with no message from any member for this
				 *   long is aborted and freed. Default 60 s. */
	/**
	 * Member subnets: a JOIN from any other IPv4 address is refused (EPERM,
	 * SHR_PROTO_NOT_ALLOWED). NULL or empty: any address. Copied by shr_agg_create().
	 */
	const struct shr_auth_acl *allow;
	/**
	 * The default secret: jobs made by JOIN, and static jobs without their own, admit only
	 * members that prove it (lib/auth). NULL or len 0: no secret. Copied.
	 */
	const struct shr_auth_secret *secret;
	uint64_t auth_ttl_ns;	/**< Lifetime of a challenge (good for one to two).
				 *   Default 10 s. */
	/**
	 * Slots with exact accumulators for reproducible jobs (JOIN flag SHR_FLAG_REPRO,
	 * shr_agg_job_conf::repro), in addition to the nslots others: a reproducible job's
	 * window is taken from these only. 0 (the default here): none, and every
	 * reproducible job is refused (POOL_FULL). Each costs 2 * max_elems * 41 bytes.
	 */
	uint32_t repro_slots;
	/**
	 * A tree of boxes: the address (SHR_AGG_ADDR(ipv4, udp_port)) of this box's upstream
	 * box; 0 (the default): none (a flat box, or a tree's root). Every job of this box is
	 * then rank up_rank of the job with the same id on the upstream box (world up_world):
	 * when its members have all joined, the box joins upstream (same window and chunk;
	 * the members' JOIN_ACK waits for the upstream's); each round its members complete
	 * goes upstream as one DATA, and the upstream RESULT goes down to the members (see
	 * "Trees" above). Needs lanes 1 and no static job with fixed addresses.
	 */
	uint64_t upstream;
	uint16_t up_rank;	/**< This box's rank in the upstream jobs (< up_world). */
	uint16_t up_world;	/**< Members of each upstream job (the upstream's children). */
	/**
	 * 1: jobs made by JOIN require the message authentication code (see "MAC"); needs a
	 * secret, and no upstream.
	 */
	uint8_t mac;
	/**
	 * The result group (SHR_FLAG_GROUP): an IPv4 address, a multicast group or the
	 * broadcast address of the box's segment, to which a job whose members can all
	 * receive there (their JOINs carry the flag) gets each RESULT that goes to every
	 * member once (shr_agg_tx::group) instead of once per member: the network copies it.
	 * Job entry i (of max_jobs) uses UDP port group_port + i. 0 (the default): none.
	 * Not for static jobs with fixed addresses.
	 */
	uint32_t group_ip;
	uint16_t group_port;	/**< First UDP port of the result groups (group_port +
				 *   max_jobs - 1 <= 65535). Default SHR_AGG_GROUP_PORT. */
};

/** Default of shr_agg_params::max_jobs. */
#define SHR_AGG_DEF_MAX_JOBS 64u

/** Default of shr_agg_params::nslots. */
#define SHR_AGG_DEF_NSLOTS 4096u

/** Default of shr_agg_params::max_window, when nslots is at least as many. */
#define SHR_AGG_DEF_MAX_WINDOW 512u

/**
 * The default of shr_agg_params::max_window for a pool of nslots slots.
 *
 * @param nslots
 *   shr_agg_params::nslots (0: SHR_AGG_DEF_NSLOTS).
 * @return
 *   The smaller of SHR_AGG_DEF_MAX_WINDOW and the slots.
 */
static inline uint32_t
shr_agg_def_max_window(uint32_t nslots)
{
	if (nslots == 0)
		nslots = SHR_AGG_DEF_NSLOTS;
	return nslots < SHR_AGG_DEF_MAX_WINDOW ? nslots : SHR_AGG_DEF_MAX_WINDOW;
}

/** Default first UDP port of the result groups (shr_agg_params::group_port). */
#define SHR_AGG_GROUP_PORT 48000

/** A statically configured job (config file). */
struct shr_agg_job_conf {
	uint32_t job;
	uint16_t world;
	uint8_t dtype;
	uint32_t window;
	uint32_t chunk_elems;
	const uint64_t *addrs;	/**< world addresses, rank order (NULL: bind on JOIN). */
	/**
	 * 1: the members send each slot's rounds in increasing (step, offset) order, as
	 * lib/endpoint does, so a DATA older than the slot's last completed round is a stale
	 * copy and is dropped (counted in shr_agg_stats::stale). Jobs created by JOIN are
	 * always ordered. 0 (default): any identity may open a round on a completed copy,
	 * which a replayed capture (pktgen: the same two rounds, looped) needs; a stale copy
	 * arriving just then opens a phantom round and the real one is refused as
	 * OUT_OF_STEP until the job times out, so use 1 for real endpoints.
	 */
	uint8_t ordered;
	/**
	 * The token of every incarnation (replayed captures, whose DATA carries a token
	 * fixed in advance); 0 (default): a random token per incarnation. A fixed token
	 * cannot tell a late message of one run from the next: leave it 0 for real endpoints.
	 */
	uint64_t token;
	/** The job's secret (NULL or len 0: the box's default secret, if any). Copied. */
	const struct shr_auth_secret *secret;
	/** 1: reproducible float sums (its window in the repro slots; its JOINs carry
	 *  SHR_FLAG_REPRO). */
	uint8_t repro;
	/** 1: the job requires the message authentication code (see "MAC"); needs a secret
	 *  (its own or the box's) and token 0. */
	uint8_t mac;
};

/** Counters; the caller owns one block per lcore and passes it in. */
struct shr_agg_stats {
	uint64_t rx;			/**< Messages seen. */
	uint64_t rejects[SHR_PROTO_REASON_MAX]; /**< Refused, by reason (index 0 unused). */
	uint64_t data;			/**< DATA accepted into the pool. */
	uint64_t completed;		/**< Rounds completed. */
	uint64_t resent;		/**< Results resent to one rank (its result was lost). */
	uint64_t nudges;		/**< Results resent unasked to a rank that owed a
					 *   round's acknowledgement while the others waited
					 *   for it in the slot's next round (shr_agg_tick()). */
	uint64_t hints;			/**< RESULTs that named the one rank the round open in
					 *   the lane's slot before theirs waits for (see
					 *   "Hints"). */
	uint64_t duplicates;		/**< DATA dropped as duplicate. */
	uint64_t bytes_summed;		/**< Payload bytes reduced (or taken in to relay). */
	uint64_t tx_msgs;		/**< Messages handed out to send. */
	uint64_t tx_dsts;		/**< Destinations of those (fan-out). */
	uint64_t joins;			/**< JOINs accepted. */
	uint64_t leaves;		/**< LEAVEs accepted. */
	uint64_t jobs_created;
	uint64_t jobs_freed;
	uint64_t aborts;		/**< Jobs torn down by timeout or error. */
	uint64_t stale;			/**< DATA dropped as a stale copy (ordered jobs), or
					 *   from a rank that has left (its own address). */
	uint64_t reaborts;		/**< ABORTs sent again to a member of an aborted
					 *   job (its DATA or JOIN came in after the abort). */
	uint64_t incarnations;		/**< Incarnations ended by a restarted member. */
	uint64_t idle_reclaims;		/**< Active jobs aborted for being idle. */
	uint64_t challenges;		/**< Admission challenges sent (JOIN_ACK ENOKEY). */
	uint64_t challenges_limited;	/**< Challenges not sent: over the box's rate of
					 *   them (SHR_AGG_CHALLENGE_RATE a second, after
					 *   a burst of max_world). */
	uint64_t mismatches;		/**< Jobs aborted (EPROTO) because members called
					 *   different collectives (shr_agg_tick()). */
	uint64_t kind_rounds[SHR_KIND_MAX]; /**< Rounds completed, per enum shr_proto_kind. */
	uint64_t up_data;		/**< Trees: rounds sent upstream (first copies). */
	uint64_t up_resent;		/**< Trees: DATA sent upstream again (a member resent). */
	uint64_t up_results;		/**< Trees: upstream RESULTs passed to the members. */
	uint64_t up_stale;		/**< Trees: upstream messages dropped (duplicate, late,
					 *   or for no pending round). */
	uint64_t up_joins;		/**< Trees: JOINs sent upstream. */
	uint64_t up_aborts;		/**< Trees: jobs ended by or for want of the upstream. */
};

/** No destination skipped (shr_agg_tx::skip, shr_agg_tx::ack_skip). */
#define SHR_AGG_NO_SKIP UINT32_MAX

/**
 * What to send after an input or a tick: one message (header + payload) to ndst addresses
 * but dst[skip], and, for a round of a collective whose payload is not for everyone, a
 * header-only RESULT (the acknowledgement, in ack) to ack_ndst addresses but
 * ack_dst[ack_skip]. The caller provides buf (cap bytes, at least shr_agg_tx_cap()); the
 * agg writes the whole message there, so a caller that points buf into an mbuf copies the
 * result once.
 */
struct shr_agg_tx {
	void *buf;		/**< In: where to write the message. */
	size_t cap;		/**< In: its size. */
	size_t len;		/**< Out: message bytes (0: nothing to send). */
	uint32_t ndst;		/**< Out: destinations. */
	const uint64_t *dst;	/**< Out: their addresses (valid until the next call). */
	uint32_t skip;		/**< Out: index in dst of the one that does not get the
				 *   message, or SHR_AGG_NO_SKIP. */
	uint32_t ack_len;	/**< Out: bytes in ack (0: no acknowledgement to send, or
				 *   SHR_PROTO_HDR_LEN). */
	uint32_t ack_ndst;	/**< Out: destinations of the acknowledgement. */
	const uint64_t *ack_dst; /**< Out: their addresses (valid until the next call). */
	uint32_t ack_skip;	/**< Out: index in ack_dst of the one that does not get it,
				 *   or SHR_AGG_NO_SKIP. */
	/**
	 * Out: 0, or the address (SHR_AGG_ADDR()) of the job's result group: the message
	 * (len bytes) may go there once instead of to each of dst (skip is then
	 * SHR_AGG_NO_SKIP and dst every member): every member receives at the group.
	 */
	uint64_t group;
	/** Out: the acknowledgement (ack_len bytes; with the MAC trailer, see "MAC"). */
	uint8_t ack[SHR_PROTO_HDR_LEN + SHR_PROTO_MAC_LEN];
	/** Out: where dst points for a message the data path sends to one address (this
	 *  block is the caller's, so data lcores do not share it). */
	uint64_t one_dst;
	/**
	 * Out: 1 when the message was taken (SHR_PROTO_OK) without showing that it comes
	 * from a member or from the upstream box: a JOIN answered with an admission
	 * challenge (or not answered, over their rate), a message from the upstream's address
	 * dropped (up_stale) or needing no check (LEAVE_ACK). Its source address proves
	 * nothing: the caller must not trust it (shouter-agg pins a neighbour's MAC only for
	 * a message taken with this 0).
	 */
	uint8_t unproven;
};

/** Status of a job, for telemetry. */
struct shr_agg_job_info {
	uint32_t job;
	uint16_t world;
	uint16_t joined;	/**< Ranks bound so far. */
	uint8_t dtype;
	uint8_t active;		/**< All ranks joined. */
	uint8_t is_static;	/**< From the config file. */
	uint32_t window;
	uint32_t chunk_elems;
	uint32_t slot_base;	/**< First pool slot (UINT32_MAX: none reserved yet). */
	uint8_t repro;		/**< Reproducible float sums (exact slots). */
	uint8_t up_state;	/**< Trees: 0 no upstream, 1 joining it, 2 joined. */
	uint32_t up_pending;	/**< Trees: rounds waiting for the upstream's result. */
	uint32_t incarnation;	/**< The current incarnation's number, unique in this box
				 *   (a new one: fresh rounds, even with a fixed token). */
};

/**
 * Create an aggregator.
 *
 * @param params
 *   Dimensions (NULL: all defaults).
 * @return
 *   The aggregator, or NULL with errno set: EINVAL (a dimension out of range, an
 *   allowlist of more than SHR_AUTH_ACL_MAX entries, a secret of the wrong length, an
 *   upstream with lanes > 1 or up_rank >= up_world, or mac without a secret or with an
 *   upstream),
 *   ENOMEM, or getrandom()'s errno (the key of the admission challenges).
 */
struct shr_agg *shr_agg_create(const struct shr_agg_params *params);

/**
 * Free an aggregator. NULL is allowed.
 *
 * @param agg
 *   The aggregator.
 */
void shr_agg_free(struct shr_agg *agg);

/**
 * Bytes a tx buffer needs: header + the largest payload (+ the MAC trailer once the box's
 * policy or a static job requires the MAC: call it after shr_agg_job_add()).
 *
 * @param agg
 *   The aggregator.
 * @return
 *   Bytes.
 */
size_t shr_agg_tx_cap(const struct shr_agg *agg);

/**
 * Add a static job (active at once when addrs is given; otherwise ranks bind on JOIN).
 *
 * @param agg
 *   The aggregator.
 * @param conf
 *   The job.
 * @return
 *   0, or -EINVAL (bad field, a secret of the wrong length, mac without a secret or with a
 *   fixed token, or, on a box with an upstream, configured addresses, a reproducible job or
 *   mac), -EEXIST (job id in use),
 *   -ENOSPC (no slots, or no repro slots for a repro job, or no job entry).
 *   A static job's slots are reserved at once.
 */
int shr_agg_job_add(struct shr_agg *agg, const struct shr_agg_job_conf *conf);

/**
 * Remove a job and free its slots.
 *
 * @param agg
 *   The aggregator.
 * @param job
 *   Job id.
 * @return
 *   0, or -ENOENT.
 */
int shr_agg_job_del(struct shr_agg *agg, uint32_t job);

/**
 * Handle one received message.
 *
 * @param agg
 *   The aggregator.
 * @param src
 *   Sender's address key.
 * @param msg
 *   Start of the shouter header; any alignment.
 * @param len
 *   Bytes (UDP payload length).
 * @param now_ns
 *   Monotonic time.
 * @param tx
 *   In: buf/cap. Out: what to send (len 0: nothing).
 * @param stats
 *   The caller's counters.
 * @return
 *   SHR_PROTO_OK (0) if accepted (also for a duplicate), else the enum shr_proto_reason it
 *   was refused for (also counted in stats->rejects).
 */
enum shr_proto_reason shr_agg_input(struct shr_agg *agg, uint64_t src, const void *msg,
				    size_t len, uint64_t now_ns, struct shr_agg_tx *tx,
				    struct shr_agg_stats *stats);

/**
 * Time-driven work, the lifecycle bounds above: abort jobs whose members disagree on a
 * round (EPROTO), with a round open longer than
 * job_timeout_ns (naming the lowest rank missing from that round), jobs still filling after
 * SHR_AGG_JOIN_WAIT job timeouts, and jobs idle for idle_ns, telling their members with
 * ABORT, and free them (static jobs start a new incarnation); and nudges (see above). Call
 * it repeatedly until tx->len is 0 (one message per call: an ABORT, or a nudge's RESULT).
 *
 * @param agg
 *   The aggregator.
 * @param now_ns
 *   Monotonic time.
 * @param tx
 *   As for shr_agg_input().
 * @param stats
 *   The caller's counters.
 * @return
 *   The number of jobs aborted by this call (0 or 1; 0 with tx->len != 0: a nudge).
 */
int shr_agg_tick(struct shr_agg *agg, uint64_t now_ns, struct shr_agg_tx *tx,
		 struct shr_agg_stats *stats);

/**
 * The box is going away: tell the members of every job that has any (active, or still
 * waiting for some JOINs) with an ABORT (rank SHR_PROTO_RANK_ALL, aux ESHUTDOWN), and tear
 * the job down as an abort does (a job made by JOIN is freed; a static job is reset). Call it
 * repeatedly until it returns 0 (one ABORT message per call, like shr_agg_tick()); the last
 * call (0) ends the pass, and a later call starts a new one. Counted in aborts (and
 * jobs_freed); such jobs are not remembered for shr_agg_input() to tell again.
 *
 * @param agg
 *   The aggregator.
 * @param tx
 *   As for shr_agg_input().
 * @param stats
 *   The caller's counters.
 * @return
 *   1 (a job's members are to be told: tx is the ABORT), or 0 (no job left to tell).
 */
int shr_agg_shutdown(struct shr_agg *agg, struct shr_agg_tx *tx, struct shr_agg_stats *stats);

/**
 * Iterate over jobs.
 *
 * @param agg
 *   The aggregator.
 * @param idx
 *   0, 1, ... until the function returns -ENOENT.
 * @param info
 *   Filled for an occupied entry.
 * @return
 *   1 (info filled), 0 (entry idx is empty), -ENOENT (idx past the table).
 */
int shr_agg_job_info(const struct shr_agg *agg, uint32_t idx, struct shr_agg_job_info *info);

/**
 * Pool slots in use (telemetry).
 *
 * @param agg
 *   The aggregator.
 * @return
 *   Slots reserved by jobs.
 */
uint32_t shr_agg_slots_used(const struct shr_agg *agg);

/**
 * Add counters: sum->x += add->x for every counter (summing per-lcore blocks on read).
 *
 * @param sum
 *   Accumulated.
 * @param add
 *   One block.
 */
void shr_agg_stats_add(struct shr_agg_stats *sum, const struct shr_agg_stats *add);

#ifdef __cplusplus
}
#endif

#endif /* SHR_AGG_H */
