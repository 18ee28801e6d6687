/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Fuzz target for the aggregator's message logic (lib/agg, with lib/pool under it).
 *
 * Each input is a sequence of records (struct fz_agg_kind) run against one aggregator with a
 * small pool, created for the input (so that a crash reproduces from its input alone). It
 * starts with a static job 7 (world 3, int32, window 8, chunk 64, ranks bound to addresses
 * 0..2) and a static job 8 (world 2, float32, window 4, chunk 32, ranks bind on JOIN), both
 * with the fixed token FZ_TOKEN, which the DATA records carry (a random token would have
 * every structured DATA refused as bad_token, and the oracle below would see none).
 *
 * Records (h is the record's first byte, kind = h % FZ_AGG_KINDS; then, byte by byte):
 * - DATA:  b1 = rank (bits 0-2), spoofed source (bit 3), op (bits 4-5, used when bit 6 is
 *          set, else SUM), RETX flag (bit 7); b2 = slot (bits 0-4), version (bit 5), tensor
 *          (bits 6-7); b3 = step (bits 0-1), offset / chunk (bits 2-4), count (bits 5-7: the
 *          chunk, chunk - 1, 1, chunk + 1, 0); u16 payload seed. A valid DATA (CRC right) for
 *          job 7, in the job's dtype and world.
 * - RAW:   b1 = source, u16 length (mod 1024), then the bytes as they are.
 * - MSG:   b1 = source; type, job selector, rank, world, dtype, op, slot/version, u16 count,
 *          tensor, step, offset, aux, flags, u16 seed: any type of message with a valid CRC
 *          (JOIN, LEAVE, ... and DATA for any job); job selector bit 6 corrupts one byte,
 *          bit 5 leaves the token 0 (else the static jobs' fixed token, FZ_TOKEN).
 * - TICK:  b1 = clock step (bit 7: b1 * 50 ms, else b1 * 100 us); then shr_agg_tick() until
 *          it has nothing more to send.
 * - CTRL:  b1 selects a shr_agg_job_add() or shr_agg_job_del() (see ctrl()).
 * - ROUND: b1 = slot/version, b2 = tensor/step/offset, u16 seed, b3 = first rank: a DATA
 *          from every rank of job 7, each from its own address.
 *
 * Checked after every call: tx->len <= cap, every message the aggregator asks to send
 * validates and goes to known addresses, the job table's slot ranges are disjoint and inside
 * the pool, shr_agg_slots_used() stays within the pool, the counters move as the return value
 * says. And an oracle: while job 7 runs (int32 or qint32), a shadow of its slots follows
 * every DATA by the verdict the aggregator gives it (shadow_data()); the verdict must be
 * possible, and every RESULT must carry the round's identity and exactly the reduction of
 * the contributions counted in that round (this catches a silently wrong sum); a tick sends
 * ABORTs, or a nudge: a RESULT to one member, counted, of a round the shadow has completed.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <shr_proto.h>
#include <shr_agg.h>

#include "fuzz_common.h"

#define NSLOTS 32
#define MAX_ELEMS 128
#define MAX_WORLD 8
#define MAX_JOBS 4
#define MAX_WINDOW 16
#define TIMEOUT_NS 1000000000ull

#define JOB_A 7			/* The shadowed job. */
#define JOB_B 8
#define FZ_TOKEN 0x5eed0f0f5eed0f0full	/* the static jobs' fixed token (DATA carry it) */
#define NADDR 6
#define MSG_MAX (SHR_PROTO_HDR_LEN + 2048)

/* FZ_TRACE=1 in the environment: print every message and what it did (triage). */
static int trace = -1;

#define SH_WORLD MAX_WORLD
#define SH_WINDOW MAX_WINDOW
#define SH_CHUNK MAX_ELEMS

static const uint64_t addrs[NADDR] = {
	SHR_AGG_ADDR(0xc6120001, 47001), SHR_AGG_ADDR(0xc6120002, 47001),
	SHR_AGG_ADDR(0xc6120003, 47001), SHR_AGG_ADDR(0xc6120004, 47001),
	SHR_AGG_ADDR(0xc6120005, 47001), SHR_AGG_ADDR(0xc6120001, 47002),
};

/* One copy (version) of one slot of job 7, as SwitchML's algorithm has it. */
struct sh_copy {
	uint8_t bits;		/* Ranks counted in the current round. */
	uint8_t count;		/* Contributions in the open round (0: fresh or complete). */
	uint8_t done;		/* Holds a completed round's result. */
	uint8_t op;
	uint32_t n;		/* Elements. */
	uint32_t tensor;
	uint32_t step;
	uint32_t aux;
	uint64_t offset;
	uint32_t acc[SH_CHUNK];
};

struct shadow {
	int present;		/* Job 7 exists. */
	int valid;		/* ... and the shadow follows it. */
	struct shr_agg_job_info info;
	struct sh_copy c[SH_WINDOW][2];
};

struct state {
	struct shr_agg *agg;
	struct shr_agg_stats st;
	uint64_t now;
	uint8_t *txbuf;
	size_t cap;
	uint8_t msg[MSG_MAX];
	struct shadow sh;
};

static int
known_addr(uint64_t a)
{
	unsigned int i;

	for (i = 0; i < NADDR; i++)
		if (addrs[i] == a)
			return 1;
	return 0;
}

static uint32_t
reduce(unsigned int op, uint32_t a, uint32_t b)
{
	switch (op) {
	case SHR_OP_SUM:
		return a + b;
	case SHR_OP_MIN:
		return (int32_t)a < (int32_t)b ? a : b;
	case SHR_OP_MAX:
		return (int32_t)a > (int32_t)b ? a : b;
	default:
		return a * b;
	}
}

/* The box's result group (JOINs whose fuzzed flags carry SHR_FLAG_GROUP get one). */
#define FZ_GROUP_IP 0xc61200ffu	/* 198.18.0.255 */
#define FZ_GROUP_PORT 48000u

/* Every message the aggregator hands out must be well formed and go to known addresses. */
FZ_NO_COVERAGE static void
check_tx(const struct state *s, const struct shr_agg_tx *tx, struct shr_proto_msg *out)
{
	enum shr_proto_reason r;
	uint32_t i;

	FZ_CHECK(tx->len <= s->cap, "tx len %zu > cap %zu", tx->len, s->cap);
	FZ_CHECK(tx->buf == s->txbuf && tx->cap == s->cap, "tx buf/cap changed");
	if (tx->len == 0)
		return;
	FZ_CHECK(tx->ndst <= MAX_WORLD, "tx to %u destinations", tx->ndst);
	FZ_CHECK(tx->ndst == 0 || tx->dst != NULL, "tx dst NULL");
	for (i = 0; i < tx->ndst; i++)
		FZ_CHECK(known_addr(tx->dst[i]), "tx to unknown address %#llx",
			 (unsigned long long)tx->dst[i]);
	r = shr_proto_validate(tx->buf, tx->len, out);
	FZ_CHECK(r == SHR_PROTO_OK, "agg sent an invalid message: %s", shr_proto_reason_str(r));
	FZ_CHECK(out->type == SHR_MSG_RESULT || out->type == SHR_MSG_JOIN_ACK ||
		 out->type == SHR_MSG_LEAVE_ACK || out->type == SHR_MSG_ABORT,
		 "agg sent a %s", shr_proto_type_str(out->type));
	/* a RESULT's rank: every member's, or a hint naming one of the job's ranks */
	if (out->type == SHR_MSG_RESULT)
		FZ_CHECK(out->rank == SHR_PROTO_RANK_ALL || out->rank < out->world,
			 "RESULT rank %u of world %u", out->rank, out->world);
	/* the result group: only a RESULT for every member of its job, at the box's group */
	if (tx->group != 0)
		FZ_CHECK(out->type == SHR_MSG_RESULT && tx->skip == SHR_AGG_NO_SKIP &&
			 tx->ndst == out->world && SHR_AGG_ADDR_IP(tx->group) == FZ_GROUP_IP &&
			 SHR_AGG_ADDR_PORT(tx->group) >= FZ_GROUP_PORT &&
			 SHR_AGG_ADDR_PORT(tx->group) < FZ_GROUP_PORT + MAX_JOBS,
			 "a %s to the group %#llx (skip %u, %u of %u)",
			 shr_proto_type_str(out->type), (unsigned long long)tx->group, tx->skip,
			 tx->ndst, out->world);
	if (out->type == SHR_MSG_JOIN_ACK && (out->flags & SHR_FLAG_GROUP))
		FZ_CHECK(out->aux == 0 && out->feedback == FZ_GROUP_IP &&
			 out->root >= FZ_GROUP_PORT && out->root < FZ_GROUP_PORT + MAX_JOBS,
			 "JOIN_ACK names group %#x:%u (status %u)", out->feedback, out->root,
			 out->aux);
}

static void
shadow_forget(struct state *s)
{
	memset(&s->sh, 0, sizeof(s->sh));
}

/* Job table invariants; refresh the shadow when job 7 appears, goes or changes. */
FZ_NO_COVERAGE static void
check_jobs(struct state *s)
{
	struct shr_agg_job_info info, a7;
	uint32_t base[MAX_JOBS], len[MAX_JOBS], idx, i, njobs = 0, nall = 0, sum = 0, used;
	int r, have7 = 0;

	memset(&a7, 0, sizeof(a7));

	for (idx = 0;; idx++) {
		FZ_CHECK(idx < 100000, "job table does not end");
		r = shr_agg_job_info(s->agg, idx, &info);
		if (r == -ENOENT)
			break;
		FZ_CHECK(r == 0 || r == 1, "job_info returned %d", r);
		if (r == 0)
			continue;
		FZ_CHECK(nall++ < MAX_JOBS, "more than %u jobs", MAX_JOBS);
		FZ_CHECK(info.world >= 1 && info.world <= MAX_WORLD, "job world %u", info.world);
		FZ_CHECK(info.joined <= info.world, "joined %u > world %u", info.joined,
			 info.world);
		FZ_CHECK(info.window >= 1 && info.window <= MAX_WINDOW, "window %u", info.window);
		FZ_CHECK(info.chunk_elems >= 1 && info.chunk_elems <= MAX_ELEMS, "chunk %u",
			 info.chunk_elems);
		if (info.slot_base == UINT32_MAX) {
			/* a job still filling holds no slots (shr_agg_job.c) */
			FZ_CHECK(!info.active, "active job %u holds no slots", info.job);
			goto no_slots;
		}
		FZ_CHECK(info.slot_base + info.window <= NSLOTS, "slots %u+%u outside the pool",
			 info.slot_base, info.window);
		for (i = 0; i < njobs; i++)
			FZ_CHECK(info.slot_base + info.window <= base[i] ||
				 base[i] + len[i] <= info.slot_base,
				 "slot ranges %u+%u and %u+%u overlap", info.slot_base,
				 info.window, base[i], len[i]);
		base[njobs] = info.slot_base;
		len[njobs] = info.window;
		njobs++;
		sum += info.window;
no_slots:
		if (info.job == JOB_A) {
			FZ_CHECK(!have7, "job %u listed twice", JOB_A);
			have7 = 1;
			a7 = info;
		}
	}
	used = shr_agg_slots_used(s->agg);
	FZ_CHECK(used <= NSLOTS, "slots used %u > pool %u", used, NSLOTS);
	FZ_CHECK(sum <= used, "jobs hold %u slots, slots_used says %u", sum, used);

	if (have7 && s->sh.present && a7.slot_base == s->sh.info.slot_base &&
	    a7.world == s->sh.info.world && a7.window == s->sh.info.window &&
	    a7.chunk_elems == s->sh.info.chunk_elems && a7.dtype == s->sh.info.dtype &&
	    a7.is_static == s->sh.info.is_static && a7.active == s->sh.info.active &&
	    a7.incarnation == s->sh.info.incarnation)
		return;
	/*
	 * Job 7 is new, gone, different, stopped or started running, or a new incarnation (a
	 * static job's slots are reset when its last member leaves, or a member restarts):
	 * start the shadow afresh.
	 */
	shadow_forget(s);
	if (!have7)
		return;
	s->sh.present = 1;
	s->sh.info = a7;
	s->sh.valid = a7.active && (a7.dtype == SHR_DTYPE_INT32 || a7.dtype == SHR_DTYPE_QINT32) &&
		a7.world <= SH_WORLD && a7.window <= SH_WINDOW && a7.chunk_elems <= SH_CHUNK;
}

static int
same_round(const struct sh_copy *c, const struct shr_proto_msg *m)
{
	return c->n == m->count && c->tensor == m->tensor && c->step == m->step &&
		c->offset == m->offset && c->op == m->op && c->aux == m->aux;
}

FZ_NO_COVERAGE static void
check_result(const struct state *s, const struct sh_copy *c, const struct shr_proto_msg *res,
	     const struct shr_proto_msg *m, const char *what)
{
	const uint8_t *pl = (const uint8_t *)s->txbuf + SHR_PROTO_HDR_LEN;
	uint32_t i;

	FZ_CHECK(res->type == SHR_MSG_RESULT, "%s: sent a %s", what,
		 shr_proto_type_str(res->type));
	FZ_CHECK(res->job == JOB_A && res->slot == m->slot && res->ver == m->ver,
		 "%s: RESULT for job %u slot %u.%u, DATA was %u.%u", what, res->job, res->slot,
		 res->ver, m->slot, m->ver);
	FZ_CHECK(res->dtype == s->sh.info.dtype, "%s: RESULT dtype %u", what, res->dtype);
	FZ_CHECK(res->count == c->n && res->tensor == c->tensor && res->step == c->step &&
		 res->offset == c->offset && res->op == c->op && res->aux == c->aux,
		 "%s: RESULT identity (n %u tensor %u step %u offset %llu op %u aux %u) differs "
		 "from the round's (n %u tensor %u step %u offset %llu op %u aux %u)", what,
		 res->count, res->tensor, res->step, (unsigned long long)res->offset, res->op,
		 res->aux, c->n, c->tensor, c->step, (unsigned long long)c->offset, c->op,
		 c->aux);
	for (i = 0; i < c->n; i++)
		FZ_CHECK(fz_get_le32(pl + 4 * i) == c->acc[i],
			 "%s: slot %u.%u element %u is %#x, the contributions reduce to %#x",
			 what, m->slot, m->ver, i, fz_get_le32(pl + 4 * i), c->acc[i]);
}

/*
 * The oracle: follow every DATA for job 7 by the verdict the aggregator gives it (counters),
 * and check that the verdict is possible and every RESULT is right:
 * - counted: reduced into the shadow's open round when it is one more rank of that round
 *   (same identity, rank not yet in), else it must have opened a new round (fresh copy,
 *   or the pool dropped a stale open round: shr_pool.h), so the shadow restarts the copy
 *   with it. A rank counted twice in one open round is an error.
 * - duplicate: the rank must be in the open round with the same identity.
 * - resent: the copy must hold a completed round of the same identity; the RESULT must be
 *   that round's.
 * - stale (ordered jobs), out of step, refused: nothing changes.
 * When a round reaches the world size the aggregator must complete it, to every member,
 * with the round's identity and exactly the reduction of the payloads the shadow counted.
 */
FZ_NO_COVERAGE static void
shadow_data(struct state *s, const struct shr_proto_msg *m, const uint8_t *payload,
	    enum shr_proto_reason r, const struct shr_agg_stats *before,
	    const struct shr_agg_tx *tx, const struct shr_proto_msg *res, uint64_t src)
{
	uint64_t d_data = s->st.data - before->data;
	uint64_t d_dup = s->st.duplicates - before->duplicates;
	uint64_t d_res = s->st.resent - before->resent;
	uint64_t d_stale = s->st.stale - before->stale;
	uint64_t d_done = s->st.completed - before->completed;
	struct sh_copy *c, *o;
	int same, in;
	uint8_t bit;
	uint32_t i;

	if (r != SHR_PROTO_OK) {
		/* a member of an ended incarnation is told its ABORT again (shr_agg.h) */
		int again = (r == SHR_PROTO_BAD_TOKEN || r == SHR_PROTO_UNKNOWN_JOB) &&
			    s->st.reaborts == before->reaborts + 1 && tx->len > 0 &&
			    res->type == SHR_MSG_ABORT && tx->ndst == 1 && tx->dst[0] == src;

		FZ_CHECK(d_data == 0 && d_dup == 0 && d_res == 0 && d_done == 0 && d_stale == 0 &&
			 (tx->len == 0 || again), "refused (%s) DATA moved the counters or sent "
			 "something", shr_proto_reason_str(r));
		if (r == SHR_PROTO_BAD_OP)	/* The only op a dtype lacks: qint32 PROD. */
			FZ_CHECK(m->dtype == SHR_DTYPE_QINT32 && m->op == SHR_OP_PROD,
				 "%s %s refused as bad_op", shr_proto_dtype_str(m->dtype),
				 shr_proto_op_str(m->op));
		return;
	}
	FZ_CHECK(m->slot < s->sh.info.window, "accepted DATA for slot %u of a %u window",
		 m->slot, s->sh.info.window);
	FZ_CHECK(m->rank < s->sh.info.world, "accepted DATA from rank %u of world %u",
		 m->rank, s->sh.info.world);
	FZ_CHECK(d_data + d_dup + d_res + d_stale == 1, "accepted DATA: data +%llu duplicates "
		 "+%llu resent +%llu stale +%llu", (unsigned long long)d_data,
		 (unsigned long long)d_dup, (unsigned long long)d_res,
		 (unsigned long long)d_stale);
	c = &s->sh.c[m->slot][m->ver];
	o = &s->sh.c[m->slot][!m->ver];
	bit = (uint8_t)(1u << m->rank);
	same = same_round(c, m);
	in = (c->bits & bit) != 0;

	if (d_stale) {
		FZ_CHECK(d_done == 0 && tx->len == 0, "stale DATA produced output");
		return;
	}
	if (d_dup) {
		FZ_CHECK(in && same && c->count > 0, "rank %u's DATA for slot %u.%u dropped as "
			 "duplicate, but the shadow has rank in %d, same round %d, count %u",
			 m->rank, m->slot, m->ver, in, same, c->count);
		FZ_CHECK(d_done == 0 && tx->len == 0, "duplicate produced output");
		return;
	}
	if (d_res) {
		FZ_CHECK(c->done && c->count == 0 && same, "result resent to rank %u for slot "
			 "%u.%u, but the shadow has done %u count %u same round %d", m->rank,
			 m->slot, m->ver, c->done, c->count, same);
		FZ_CHECK(d_done == 0 && tx->len > 0 && tx->ndst == 1 && tx->dst[0] == src,
			 "resend: completed +%llu, tx len %zu to %u", (unsigned long long)d_done,
			 tx->len, tx->ndst);
		check_result(s, c, res, m, "resend");
		return;
	}

	/* Counted. */
	FZ_CHECK(!(in && same && c->count > 0), "rank %u counted twice in the open round of "
		 "slot %u.%u", m->rank, m->slot, m->ver);
	if (c->count > 0 && same && !in) {
		for (i = 0; i < m->count; i++)
			c->acc[i] = reduce(c->op, c->acc[i], fz_get_le32(payload + 4 * i));
	} else {
		c->n = m->count;
		c->tensor = m->tensor;
		c->step = m->step;
		c->offset = m->offset;
		c->op = m->op;
		c->aux = m->aux;
		c->done = 0;
		c->bits = 0;
		c->count = 0;
		for (i = 0; i < m->count; i++)
			c->acc[i] = fz_get_le32(payload + 4 * i);
	}
	c->bits |= bit;
	o->bits &= (uint8_t)~bit;
	c->count++;
	if (c->count < s->sh.info.world) {
		FZ_CHECK(d_done == 0 && tx->len == 0, "round of slot %u.%u has %u of %u, but "
			 "completed +%llu tx len %zu", m->slot, m->ver, c->count,
			 s->sh.info.world, (unsigned long long)d_done, tx->len);
		return;
	}
	FZ_CHECK(d_done == 1 && tx->len > 0, "round of slot %u.%u has all %u, but completed "
		 "+%llu tx len %zu", m->slot, m->ver, c->count, (unsigned long long)d_done,
		 tx->len);
	FZ_CHECK(tx->ndst == s->sh.info.world, "RESULT to %u of %u members", tx->ndst,
		 s->sh.info.world);
	c->count = 0;
	c->done = 1;
	check_result(s, c, res, m, "complete");
}

/* Hand one message to the aggregator (from an exactly sized heap copy) and check. */
static void
feed(struct state *s, uint64_t src, const uint8_t *bytes, size_t len)
{
	struct shr_agg_stats before = s->st;
	struct shr_agg_tx tx = { .buf = s->txbuf, .cap = s->cap };
	struct shr_proto_msg m, res;
	enum shr_proto_reason vr, r;
	uint8_t *copy;

	copy = malloc(len ? len : 1);
	FZ_CHECK(copy != NULL, "malloc");
	if (len)
		memcpy(copy, bytes, len);
	vr = shr_proto_validate(copy, len, &m);
	s->now += 1000;
	r = shr_agg_input(s->agg, src, copy, len, s->now, &tx, &s->st);
	FZ_CHECK((unsigned int)r < SHR_PROTO_REASON_MAX, "agg_input returned %d", r);
	FZ_CHECK(s->st.rx == before.rx + 1, "rx counter");
	if (vr != SHR_PROTO_OK)
		FZ_CHECK(r == vr, "validate says %s, agg_input %s", shr_proto_reason_str(vr),
			 shr_proto_reason_str(r));
	if (r != SHR_PROTO_OK)
		FZ_CHECK(s->st.rejects[r] == before.rejects[r] + 1, "reject %s not counted",
			 shr_proto_reason_str(r));
	if (trace)
		fprintf(stderr, "agg: %s job %u rank %u slot %u.%u tensor %u step %u offset %llu "
			"count %u from %u -> %s (data +%llu dup +%llu resent +%llu done +%llu), "
			"tx %zu bytes to %u\n", vr ? shr_proto_reason_str(vr) :
			shr_proto_type_str(m.type), m.job, m.rank, m.slot, m.ver, m.tensor, m.step,
			(unsigned long long)m.offset, m.count, (unsigned int)(src >> 16) & 0xff,
			shr_proto_reason_str(r), (unsigned long long)(s->st.data - before.data),
			(unsigned long long)(s->st.duplicates - before.duplicates),
			(unsigned long long)(s->st.resent - before.resent),
			(unsigned long long)(s->st.completed - before.completed), tx.len, tx.ndst);
	check_tx(s, &tx, &res);
	if (tx.len > 0)
		FZ_CHECK(s->st.tx_msgs == before.tx_msgs + 1 &&
			 s->st.tx_dsts == before.tx_dsts + tx.ndst, "tx counters");
	if (vr == SHR_PROTO_OK && m.type == SHR_MSG_DATA && m.job == JOB_A && s->sh.valid)
		shadow_data(s, &m, copy + SHR_PROTO_HDR_LEN, r, &before, &tx, &res, src);
	free(copy);
	check_jobs(s);
}

static size_t
build(struct state *s, const struct shr_proto_msg *m, uint16_t seed, size_t plen)
{
	if (plen > MSG_MAX - SHR_PROTO_HDR_LEN)
		plen = MSG_MAX - SHR_PROTO_HDR_LEN;
	plen -= plen % 4;
	fz_gen_i32(s->msg + SHR_PROTO_HDR_LEN, (uint32_t)(plen / 4), seed,
		   (uint32_t)m->rank << 16 | m->slot);
	shr_proto_build(s->msg, m, s->msg + SHR_PROTO_HDR_LEN, plen);
	return SHR_PROTO_HDR_LEN + plen;
}

static uint8_t
job7_dtype(const struct state *s)
{
	return s->sh.present ? s->sh.info.dtype : SHR_DTYPE_INT32;
}

static uint16_t
job7_world(const struct state *s)
{
	return s->sh.present ? s->sh.info.world : 3;
}

static uint32_t
job7_chunk(const struct state *s)
{
	return s->sh.present ? s->sh.info.chunk_elems : 64;
}

/* A valid DATA for job 7 from fields; the source is the rank's own address unless spoofed. */
static void
data_msg(struct state *s, unsigned int rank, int spoof, unsigned int op, uint16_t flags,
	 uint8_t b2, uint8_t b3, uint16_t seed)
{
	static const int count_sel[8] = { 0, 0, 0, 0, -1, -2, 1, -3 };
	struct shr_proto_msg m;
	uint32_t chunk = job7_chunk(s);
	unsigned int esize;
	size_t len;

	memset(&m, 0, sizeof(m));
	m.type = SHR_MSG_DATA;
	m.job = JOB_A;
	m.token = FZ_TOKEN;
	m.rank = (uint16_t)rank;
	m.world = job7_world(s);
	m.dtype = job7_dtype(s);
	m.op = (uint8_t)op;
	m.flags = flags;
	m.slot = b2 & 0x1f;
	m.ver = (b2 >> 5) & 1;
	m.tensor = b2 >> 6;
	m.step = b3 & 3;
	m.offset = (uint64_t)((b3 >> 2) & 7) * chunk;
	switch (count_sel[b3 >> 5]) {
	case 0:
		m.count = chunk;
		break;
	case -1:
		m.count = chunk - 1;
		break;
	case -2:
		m.count = 1;
		break;
	case -3:
		m.count = 0;
		break;
	default:
		m.count = chunk + 1;
		break;
	}
	if (m.dtype == SHR_DTYPE_QINT32)
		m.aux = m.step;
	esize = shr_proto_dtype_size(m.dtype);
	len = build(s, &m, seed, (size_t)m.count * (esize ? esize : 4));
	feed(s, addrs[(rank + (spoof ? 1 : 0)) % NADDR], s->msg, len);
}

static void
rec_data(struct state *s, struct fz *f)
{
	uint8_t b1 = fz_u8(f), b2 = fz_u8(f), b3 = fz_u8(f);
	uint16_t seed = fz_u16(f);

	data_msg(s, b1 & 7, (b1 >> 3) & 1, (b1 & 0x40) ? (b1 >> 4) & 3 : SHR_OP_SUM,
		 (b1 & 0x80) ? SHR_FLAG_RETX : 0, b2, b3, seed);
}

static void
rec_round(struct state *s, struct fz *f)
{
	uint8_t b1 = fz_u8(f), b2 = fz_u8(f);
	uint16_t seed = fz_u16(f);
	uint8_t first = fz_u8(f);
	unsigned int world = job7_world(s), i, rank;

	/* b1: slot (bits 0-4), version (bit 5); b2: tensor (0-1), step (2-3), offset (4-6). */
	for (i = 0; i < world; i++) {
		rank = (first + i) % world;
		data_msg(s, rank, 0, SHR_OP_SUM, 0, (uint8_t)((b1 & 0x3f) | (b2 & 3) << 6),
			 (uint8_t)(((b2 >> 2) & 3) | ((b2 >> 4) & 7) << 2), (uint16_t)(seed + i));
	}
}

static void
rec_raw(struct state *s, struct fz *f)
{
	uint8_t sel = fz_u8(f);
	size_t want = fz_u16(f) % 1024;
	const uint8_t *p;
	size_t n = fz_bytes(f, want, &p);

	feed(s, addrs[sel % NADDR], p, n);
}

static void
rec_msg(struct state *s, struct fz *f)
{
	struct shr_proto_msg m;
	uint8_t sel, jsel, b;
	unsigned int esize;
	uint16_t seed;
	size_t len, plen = 0;

	memset(&m, 0, sizeof(m));
	sel = fz_u8(f);
	m.type = fz_u8(f) % (SHR_MSG_TYPE_MAX + 1);
	jsel = fz_u8(f);
	m.job = (jsel & 0x80) ? fz_u32(f) : JOB_A + (jsel & 3u);
	m.rank = fz_u8(f) % 10;
	m.world = fz_u8(f) % 10;
	m.dtype = fz_u8(f) % (SHR_DTYPE_MAX + 1);
	m.op = fz_u8(f) % (SHR_OP_MAX_ + 1);
	b = fz_u8(f);
	m.slot = b & 0x3f;
	m.ver = b >> 7;
	m.count = fz_u16(f) % 300;
	m.tensor = fz_u8(f) % 4;
	m.step = fz_u8(f) % 4;
	m.offset = (uint64_t)(fz_u8(f) % 8) * 64;
	m.aux = fz_u8(f);
	m.flags = fz_u8(f);
	seed = fz_u16(f);
	if (!(jsel & 0x20))
		m.token = FZ_TOKEN;	/* else 0: a JOIN's nonce, or a wrong token */
	esize = shr_proto_dtype_size(m.dtype);
	if (m.type == SHR_MSG_DATA || m.type == SHR_MSG_RESULT)
		plen = (size_t)m.count * (esize ? esize : 4);
	len = build(s, &m, seed, plen);
	if (jsel & 0x40)
		s->msg[(seed >> 4) % len] ^= (uint8_t)(1u << (seed & 7));
	feed(s, addrs[sel % NADDR], s->msg, len);
}

static void
rec_tick(struct state *s, struct fz *f)
{
	uint8_t b = fz_u8(f);
	struct shr_agg_tx tx;
	struct shr_proto_msg out;
	int i, r;

	s->now += (b & 0x80) ? (uint64_t)(b & 0x7f) * 50000000ull : (uint64_t)b * 100000ull;
	for (i = 0;; i++) {
		uint64_t nudges = s->st.nudges;

		/* an ABORT per job, and at most a nudge per member of each slot */
		FZ_CHECK(i <= MAX_JOBS + 1 + NSLOTS * MAX_WORLD, "shr_agg_tick keeps sending");
		tx = (struct shr_agg_tx){ .buf = s->txbuf, .cap = s->cap };
		r = shr_agg_tick(s->agg, s->now, &tx, &s->st);
		FZ_CHECK(r == 0 || r == 1, "tick returned %d", r);
		check_tx(s, &tx, &out);
		if (trace && tx.len > 0)
			fprintf(stderr, "agg: tick at %llu ns: %s job %u slot %u.%u to %u\n",
				(unsigned long long)s->now, shr_proto_type_str(out.type), out.job,
				out.slot, out.ver, tx.ndst);
		if (tx.len > 0 && out.type == SHR_MSG_RESULT) {
			/* a nudge (shr_agg_nudge.c): a completed round's result, to one member */
			FZ_CHECK(r == 0 && tx.ndst == 1 && s->st.nudges == nudges + 1,
				 "tick sent a RESULT: returned %d, to %u, nudges +%llu", r, tx.ndst,
				 (unsigned long long)(s->st.nudges - nudges));
			if (out.job == JOB_A && s->sh.valid) {
				const struct sh_copy *c;

				FZ_CHECK(out.slot < s->sh.info.window, "nudge for slot %u",
					 out.slot);
				c = &s->sh.c[out.slot][out.ver];
				FZ_CHECK(c->done && c->count == 0, "nudge for slot %u.%u, but the "
					 "shadow has done %u count %u", out.slot, out.ver, c->done,
					 c->count);
				check_result(s, c, &out, &out, "nudge");
			}
			continue;
		}
		FZ_CHECK(s->st.nudges == nudges, "nudges counted without a RESULT");
		if (tx.len > 0)
			FZ_CHECK(out.type == SHR_MSG_ABORT, "tick sent a %s",
				 shr_proto_type_str(out.type));
		if (tx.len > 0 && out.job == JOB_A)
			shadow_forget(s);	/* An abort resets the job's rounds. */
		check_jobs(s);
		if (tx.len == 0)
			break;
	}
}

static int
job_add(struct state *s, uint32_t job, uint16_t world, uint8_t dtype, uint32_t window,
	uint32_t chunk, const uint64_t *a)
{
	struct shr_agg_job_conf conf = {
		.job = job, .world = world, .dtype = dtype, .window = window,
		.chunk_elems = chunk, .addrs = a, .token = FZ_TOKEN,
	};
	struct shr_agg_job_info info;
	uint32_t idx;
	int r, r2, found = 0;

	r = shr_agg_job_add(s->agg, &conf);
	FZ_CHECK(r == 0 || r == -EEXIST || r == -ENOSPC || r == -EINVAL, "job_add: %d", r);
	if (r == 0) {
		for (idx = 0; (r2 = shr_agg_job_info(s->agg, idx, &info)) >= 0; idx++)
			if (r2 == 1 && info.job == job) {
				found = 1;
				FZ_CHECK(info.world == world && info.dtype == dtype &&
					 info.window == window && info.chunk_elems == chunk &&
					 info.is_static, "job %u added with other parameters", job);
				FZ_CHECK(info.active == (a != NULL), "static job %u active %u",
					 job, info.active);
			}
		FZ_CHECK(found, "added job %u not listed", job);
	}
	check_jobs(s);
	return r;
}

static void
rec_ctrl(struct state *s, struct fz *f)
{
	uint8_t b = fz_u8(f);
	int r;

	switch (b % 8) {
	case 0:
		job_add(s, JOB_A, 3, SHR_DTYPE_INT32, 8, 64, addrs);
		break;
	case 1:
		job_add(s, JOB_B, 2, SHR_DTYPE_FLOAT32, 4, 32, NULL);
		break;
	case 2:
	case 3:
		r = shr_agg_job_del(s->agg, (b % 8) == 2 ? JOB_A : JOB_B);
		FZ_CHECK(r == 0 || r == -ENOENT, "job_del: %d", r);
		check_jobs(s);
		if (r == 0 && (b % 8) == 2)
			FZ_CHECK(!s->sh.present, "deleted job %u still listed", JOB_A);
		break;
	case 4:			/* Job 7 whose ranks bind on JOIN. */
		job_add(s, JOB_A, 3, SHR_DTYPE_INT32, 8, 64, NULL);
		break;
	case 5:
		job_add(s, JOB_A + 2, 2, SHR_DTYPE_QINT32, MAX_WINDOW, MAX_ELEMS, addrs + 3);
		break;
	case 6:			/* Job 7 in qint32: the shadow follows it too. */
		job_add(s, JOB_A, 2, SHR_DTYPE_QINT32, 2 + (b >> 3) % 8, 1 + (b >> 3), addrs);
		break;
	default:		/* One bad field: world, dtype, window or chunk. */
		r = job_add(s, JOB_A + 3, (b >> 3) % 4 == 0 ? 0 : 2,
			    (b >> 3) % 4 == 1 ? SHR_DTYPE_MAX : SHR_DTYPE_INT32,
			    (b >> 3) % 4 == 2 ? 0 : 4, (b >> 3) % 4 == 3 ? 0 : 16, NULL);
		FZ_CHECK(r == -EINVAL, "job_add with a bad field (%u): %d", (b >> 3) % 4, r);
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct shr_agg_params params = {
		.nslots = NSLOTS, .max_elems = MAX_ELEMS, .max_world = MAX_WORLD,
		.max_jobs = MAX_JOBS, .max_window = MAX_WINDOW, .lanes = 2,
		.job_timeout_ns = TIMEOUT_NS, .group_ip = FZ_GROUP_IP, .group_port = FZ_GROUP_PORT,
	};
	struct fz f = { data, size };
	struct state *s;
	int r;

	if (trace < 0)
		trace = getenv("FZ_TRACE") != NULL;
	s = calloc(1, sizeof(*s));
	FZ_CHECK(s != NULL, "calloc");
	s->agg = shr_agg_create(&params);
	FZ_CHECK(s->agg != NULL, "shr_agg_create: %d", errno);
	s->cap = shr_agg_tx_cap(s->agg);
	FZ_CHECK(s->cap >= SHR_PROTO_HDR_LEN + MAX_ELEMS * 4, "tx cap %zu", s->cap);
	s->txbuf = malloc(s->cap);
	FZ_CHECK(s->txbuf != NULL, "malloc");
	s->now = 1000000000ull;
	r = job_add(s, JOB_A, 3, SHR_DTYPE_INT32, 8, 64, addrs);
	FZ_CHECK(r == 0, "static job %u: %d", JOB_A, r);
	r = job_add(s, JOB_B, 2, SHR_DTYPE_FLOAT32, 4, 32, NULL);
	FZ_CHECK(r == 0, "static job %u: %d", JOB_B, r);
	FZ_CHECK(s->sh.valid, "job %u not shadowed", JOB_A);

	while (f.n > 0) {
		switch (fz_u8(&f) % FZ_AGG_KINDS) {
		case FZ_AGG_DATA:
			rec_data(s, &f);
			break;
		case FZ_AGG_RAW:
			rec_raw(s, &f);
			break;
		case FZ_AGG_MSG:
			rec_msg(s, &f);
			break;
		case FZ_AGG_TICK:
			rec_tick(s, &f);
			break;
		case FZ_AGG_CTRL:
			rec_ctrl(s, &f);
			break;
		default:
			rec_round(s, &f);
			break;
		}
	}
	shr_agg_free(s->agg);
	free(s->txbuf);
	free(s);
	return 0;
}
