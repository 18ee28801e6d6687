/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The proof that sums are right under loss: the simulation of sim_engine.h (endpoints and
 * one aggregator wired by a lossy, duplicating, reordering in-memory channel) over a matrix
 * of world sizes and networks, and deterministic regressions:
 *
 * - phantom rounds (issue 18 item 2, issue 19 item 4): a copy of a member's DATA held back
 *   until its slot's next round has completed, then delivered. The box must drop it as a
 *   stale copy: were it taken, it would open a round on a completed copy (with world 1 it
 *   completes at once and the slot's next real round is refused out of step; with more
 *   ranks the round is never completed and the real one is refused). For jobs made by JOIN
 *   and static jobs, world 1 and 3.
 * - restarts (issue 14): in each job, one member's process crashes partway through the
 *   allreduce after k = 0, 1 or 3 completed ones and starts again on the same address with
 *   a new nonce and new inputs; the others, aborted (ESTALE), start again too. The network
 *   drops, duplicates and reorders, copies are held back, and the old processes' DATA,
 *   JOIN, LEAVE and the old RESULTs and ABORT are delivered again to the new run on
 *   purpose: the new incarnation's results must be exact for the new inputs, no member may
 *   take a RESULT or ABORT of another incarnation, nothing may hang. For jobs made by JOIN,
 *   static jobs bound on JOIN and static jobs with fixed addresses.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim_engine.h"

static void
test_case(void **state)
{
	const struct sim_case *cs = *state;
	struct sim_result res;

	if (sim_run(cs, &res) != SIM_OK)
		fail_msg("%s", res.err);
	assert_int_equal(res.leave_unacked, 0);
	if (cs->phantom) {
		/* The held copy was delivered, and dropped as stale. */
		assert_int_equal(res.injected, 1);
		assert_true(res.stale >= 1);
	}
	if (cs->restart) {
		/*
		 * Each job: its member crashed after k allreduces, its restart ended the
		 * old incarnation (no timeout), old messages came in and were refused.
		 */
		assert_int_equal(res.crash_ops[0], cs->restart_after);
		assert_int_equal(res.crash_ops[1], cs->restart_after);
		assert_int_equal(res.incarnations, 2);
		assert_true(res.restarts >= 2);
		assert_true(res.replays > 0);
		assert_true(res.old_refused > 0);
		assert_true(res.foreign > 0);
	}
}

static void
restart_case(struct sim_case *c, uint8_t is_static, uint8_t k)
{
	uint64_t w = 4, ch = 16;

	memset(c, 0, sizeof(*c));
	c->n = 3;
	c->is_static = is_static;
	c->loss = 5;
	c->dup = 5;
	c->reorder = 1;
	c->late = 5;
	c->restart = 1;
	c->restart_after = k;
	c->restart_rank = 1;
	c->seed = 14000 + 10u * is_static + k;	/* each case its own network */
	c->window = (uint32_t)w;
	c->chunk = (uint32_t)ch;
	/* Five allreduces, each of several chunks (so a crash is partway through one). */
	c->lens[0] = 2 * w * ch + 3;
	c->lens[1] = 3 * ch + 1;
	c->lens[2] = w * ch;
	c->lens[3] = 2 * ch + 5;
	c->lens[4] = 2 * w * ch;
	c->nlens = 5;
	snprintf(c->name, sizeof(c->name), "restart_after%u%s", k,
		 is_static == 1 ? "_static" : is_static == 2 ? "_static_join" : "");
}

static void
phantom_case(struct sim_case *c, uint16_t n, uint8_t is_static)
{
	uint64_t w = 4, ch = 16;

	memset(c, 0, sizeof(*c));
	c->n = n;
	c->is_static = is_static;
	c->phantom = 1;
	c->window = (uint32_t)w;
	c->chunk = (uint32_t)ch;
	c->lens[0] = 3 * w * ch + 5;	/* slot 0 used four times */
	c->lens[1] = w * ch;
	c->nlens = 2;
	snprintf(c->name, sizeof(c->name), "phantom_n%u%s", n,
		 is_static == 1 ? "_static" : is_static == 2 ? "_static_join" : "");
}

/* ---- the matrix ---- */

/*
 * Per world size: window (slots) and chunk (varied, so that slot reuse and chunking differ),
 * and chunks in flight (0: the window; 8 of 12: spare slots).
 */
static const struct { uint16_t n; uint32_t window, chunk, inflight; } sizes[] = {
	{ 2, 8, 64, 0 }, { 3, 8, 64, 0 }, { 8, 4, 256, 0 }, { 33, 16, 64, 0 }, { 1024, 4, 32, 0 },
	{ 4, 12, 64, 8 },
};
static const struct { uint8_t loss, dup, reorder; } nets[] = {
	{ 0, 0, 0 }, { 0, 5, 1 }, { 1, 1, 1 }, { 10, 5, 1 }, { 30, 10, 1 },
};
#define NMATRIX (sizeof(sizes) / sizeof(sizes[0]) * sizeof(nets) / sizeof(nets[0]))
static const struct { uint16_t n; uint8_t is_static; } phantoms[] = {
	{ 1, 0 }, { 3, 0 }, { 1, 1 }, { 3, 1 }, { 3, 2 },
};
#define NPHANTOMS (sizeof(phantoms) / sizeof(phantoms[0]))
static const uint8_t restart_after[] = { 0, 1, 3 };
#define NRESTARTS (3 * sizeof(restart_after))
#define NCASES (NMATRIX + NPHANTOMS + NRESTARTS)

int
main(void)
{
	static struct sim_case cases[NCASES];
	struct CMUnitTest tests[NCASES];
	unsigned int a, b, k = 0;

	for (a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++) {
		for (b = 0; b < sizeof(nets) / sizeof(nets[0]); b++, k++) {
			struct sim_case *c = &cases[k];
			uint64_t w, ch;

			c->n = sizes[a].n;
			c->loss = nets[b].loss;
			c->dup = nets[b].dup;
			c->reorder = nets[b].reorder;
			c->window = sizes[a].window;
			c->inflight = sizes[a].inflight;
			c->chunk = sizes[a].chunk;
			w = c->window;
			ch = c->chunk;
			/* Ops back to back: empty, one element, one chunk, one chunk + 1, several
			 * windows (not a whole number of chunks), a chunk - 1, whole windows. */
			c->lens[0] = 0;
			c->lens[1] = 1;
			c->lens[2] = ch;
			c->lens[3] = ch + 1;
			c->lens[4] = 3 * w * ch + 7;
			c->lens[5] = ch - 1;
			c->lens[6] = 2 * w * ch;
			c->nlens = 7;
			snprintf(c->name, sizeof(c->name), "%sn%u_loss%u_dup%u%s",
				 c->inflight != 0 ? "spare_" : "", c->n, c->loss, c->dup,
				 c->reorder ? "_reorder" : "");
			memset(&tests[k], 0, sizeof(tests[k]));
			tests[k].name = c->name;
			tests[k].test_func = test_case;
			tests[k].initial_state = c;
		}
	}
	for (a = 0; a < NPHANTOMS; a++, k++) {
		phantom_case(&cases[k], phantoms[a].n, phantoms[a].is_static);
		memset(&tests[k], 0, sizeof(tests[k]));
		tests[k].name = cases[k].name;
		tests[k].test_func = test_case;
		tests[k].initial_state = &cases[k];
	}
	for (a = 0; a < 3; a++) {
		for (b = 0; b < sizeof(restart_after); b++, k++) {
			restart_case(&cases[k], (uint8_t)a, restart_after[b]);
			memset(&tests[k], 0, sizeof(tests[k]));
			tests[k].name = cases[k].name;
			tests[k].test_func = test_case;
			tests[k].initial_state = &cases[k];
		}
	}
	return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
