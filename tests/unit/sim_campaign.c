/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * A randomized campaign over the simulation of sim_engine.h (issue 18): each run draws its
 * world (1-8), its jobs (made by JOIN, static with the members' addresses, static bound on
 * JOIN), window, chunk, tensor lengths and network (loss, duplication, copies held back
 * 0.3-5 ms, members paused up to 1.5 s) from its seed. Not a test of the suites: run by
 * scripts/sim_campaign.sh.
 *
 *   sim_campaign [--runs N] [--first I] [--seed S] [--restart PCT] [--verbose]
 *
 * --restart PCT: that percentage of the runs (drawn from the seed) restart (issue 14,
 * sim_case::restart): in each job a member crashes after k completed allreduces (k drawn
 * below the number of tensors), partway through the next, and the job restarts with new
 * processes and new inputs; its new processes JOIN up to 0.1-5 ms after the old ones ended.
 * The other draws of a run are the same with or without --restart.
 *
 * Run i (first <= i < first + runs) uses seed S + i, so a failure is replayed with
 * --first i --runs 1. Prints one line per failure, then
 * "runs N ok N wrong N hangs N leave_unacked N" (runs, among the ok ones, in which a member
 * gave up its LEAVE for want of a LEAVE_ACK); exits 1 if a run was wrong or hung.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_engine.h"

static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A value in [0, n) from the case's draw stream. */
static uint64_t
draw(uint64_t *st, uint64_t n)
{
	*st = mix(*st);
	return *st % n;
}

static void
make_case(struct sim_case *c, uint64_t seed, unsigned int restart_pct)
{
	static const uint32_t windows[] = { 1, 2, 4, 8, 16 };
	static const uint32_t chunks[] = { 1, 7, 16, 64, 256 };
	static const uint8_t pcts[] = { 0, 1, 2, 5, 10 };
	uint64_t st = seed, w, ch;
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->seed = seed;
	c->quiet = 1;
	c->n = (uint16_t)(1 + draw(&st, 8));
	c->is_static = (uint8_t)draw(&st, 3);
	c->window = windows[draw(&st, 5)];
	c->chunk = chunks[draw(&st, 5)];
	c->loss = pcts[draw(&st, 5)];
	c->dup = pcts[draw(&st, 5)];
	c->reorder = 1;
	c->late = pcts[draw(&st, 5)];
	if (draw(&st, 3) == 0) {
		c->pause = (uint8_t)(10 + draw(&st, 41));	/* 10-50% of the members */
		c->pause_max_us = (uint32_t)(1000 + draw(&st, 1500000));
	}
	c->phantom = draw(&st, 4) == 0;
	c->job_timeout_ms = 5000;	/* the box's default */
	w = c->window;
	ch = c->chunk;
	c->nlens = (unsigned int)(1 + draw(&st, 6));
	for (i = 0; i < c->nlens; i++) {
		switch (draw(&st, 5)) {
		case 0:
			c->lens[i] = draw(&st, 3);		/* 0, 1, 2 */
			break;
		case 1:
			c->lens[i] = ch - 1 + draw(&st, 3);	/* around a chunk */
			break;
		case 2:
			c->lens[i] = w * ch;			/* a window */
			break;
		default:
			c->lens[i] = 1 + draw(&st, 4 * w * ch);	/* up to 4 windows */
			break;
		}
	}
	/* Restarts: their own draw stream, so that the rest of the case does not change. */
	st = seed ^ 0x7e57a77ull;
	if (draw(&st, 100) < restart_pct) {
		c->restart = 1;
		c->restart_after = (uint8_t)draw(&st, c->nlens);
		if (c->lens[c->restart_after] == 0)
			c->lens[c->restart_after] = 1;	/* crashes partway through it */
		c->restart_rank = (uint16_t)draw(&st, c->n);
		c->restart_us = (uint32_t)(100 + draw(&st, 4901));
	}
	/* Spare slots (fewer chunks in flight than slots): their own draw stream too. */
	st = seed ^ 0x5a4e51ull;
	if (draw(&st, 3) == 0)
		c->inflight = (uint32_t)(1 + draw(&st, c->window));
	snprintf(c->name, sizeof(c->name),
		 "seed=%llu n%u %s w%u/%u c%u loss%u dup%u late%u pause%u/%ums%s ops%u",
		 (unsigned long long)seed, c->n,
		 c->is_static == 1 ? "static" : c->is_static == 2 ? "static_join" : "dynamic",
		 c->inflight ? c->inflight : c->window, c->window, c->chunk, c->loss, c->dup,
		 c->late, c->pause,
		 c->pause_max_us / 1000, c->phantom ? " phantom" : "", c->nlens);
	if (c->restart)
		snprintf(c->name + strlen(c->name), sizeof(c->name) - strlen(c->name),
			 " restart%u/r%u", c->restart_after, c->restart_rank);
}

int
main(int argc, char **argv)
{
	uint64_t runs = 100, first = 0, seed = 1, i;
	uint64_t ok = 0, wrong = 0, hangs = 0, unacked = 0, restarted = 0;
	unsigned int restart_pct = 0;
	int a, verbose = 0;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--runs") == 0 && a + 1 < argc) {
			runs = strtoull(argv[++a], NULL, 0);
		} else if (strcmp(argv[a], "--first") == 0 && a + 1 < argc) {
			first = strtoull(argv[++a], NULL, 0);
		} else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc) {
			seed = strtoull(argv[++a], NULL, 0);
		} else if (strcmp(argv[a], "--restart") == 0 && a + 1 < argc) {
			restart_pct = (unsigned int)strtoul(argv[++a], NULL, 0);
		} else if (strcmp(argv[a], "--verbose") == 0) {
			verbose = 1;
		} else {
			fprintf(stderr, "usage: %s [--runs N] [--first I] [--seed S] "
				"[--restart PCT] [--verbose]\n", argv[0]);
			return 2;
		}
	}
	for (i = first; i < first + runs; i++) {
		struct sim_case c;
		struct sim_result res;

		make_case(&c, seed + i, restart_pct);
		restarted += c.restart;
		switch (sim_run(&c, &res)) {
		case SIM_OK:
			ok++;
			if (res.leave_unacked > 0) {
				unacked++;
				printf("NOACK run %llu %s: %u member(s) never got their "
				       "LEAVE_ACK\n", (unsigned long long)i, c.name,
				       res.leave_unacked);
			}
			if (verbose && !c.restart)
				printf("ok    run %llu %s (fake %.1f ms)\n", (unsigned long long)i,
				       c.name, (double)res.fake_ns / 1e6);
			else if (verbose)
				printf("ok    run %llu %s (fake %.1f ms; crashed after %u/%u, "
				       "incarnations %llu, restarts %u, replayed %llu, old refused "
				       "%llu, foreign %llu)\n", (unsigned long long)i, c.name,
				       (double)res.fake_ns / 1e6, res.crash_ops[0],
				       res.crash_ops[1],
				       (unsigned long long)res.incarnations, res.restarts,
				       (unsigned long long)res.replays,
				       (unsigned long long)res.old_refused,
				       (unsigned long long)res.foreign);
			break;
		case SIM_HANG:
			hangs++;
			printf("HANG  run %llu %s: %s\n", (unsigned long long)i, c.name, res.err);
			break;
		default:
			wrong++;
			printf("WRONG run %llu %s: %s\n", (unsigned long long)i, c.name, res.err);
			break;
		}
		fflush(stdout);
	}
	printf("runs %llu ok %llu wrong %llu hangs %llu leave_unacked %llu restarted %llu\n",
	       (unsigned long long)runs, (unsigned long long)ok, (unsigned long long)wrong,
	       (unsigned long long)hangs, (unsigned long long)unacked,
	       (unsigned long long)restarted);
	return wrong + hangs == 0 ? 0 : 1;
}
