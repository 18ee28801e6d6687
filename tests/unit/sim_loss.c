/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * sim_loss: what loss costs the protocol itself, in the simulation's fake time (a benchmark,
 * not a test; scripts/bench.sh runs it). The simulation of test_sim (sim_engine.h): lib/agg
 * and lib/endpoint, an in-memory wire with a fixed delay, no CPU to share, so that the figure
 * is the protocol's (loss detection, recovery, how much of the window a late round holds up)
 * and not a loaded host's scheduling, which decides e2e_loss1_vs_lossless on two cores.
 *
 * Two jobs of `--ranks` members (4) on one box, `--window` (16) chunks in flight in
 * `--slots` slots (shr_endpoint_slots() of the window, as lib/comm asks for: 32), chunk
 * `--chunk` (256) elements, four allreduces of 1 Mi elements back to back, with 0, 1 and 2%
 * of the messages dropped in each direction; each case over `--seeds` (3) seeds, the fake time
 * averaged. Every run is also checked as test_sim checks it (exact results, nothing refused,
 * nothing left over): a run that is not exits 1.
 *
 * Prints key=value lines: sim_lossless_ms, sim_loss1_ms, sim_loss2_ms (fake ms) and
 * sim_loss1_vs_lossless, sim_loss2_vs_lossless (lossless time over lossy time: 1 = loss
 * costs nothing). With --counters, each run's resends, summed over its members, go to stderr:
 * fast (of which fast_peer: the round waited for another rank's loss; spurious; hinted: a
 * RESULT's hint named this rank), timer, and the chunks a hint held.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shr_endpoint.h>

#include "sim_engine.h"

/* Slots of one job at most: the simulated box's 64 (sim_engine.c), for the two jobs. */
#define SIM_LOSS_MAX_SLOTS 32

static const char usage[] =
	"usage: sim_loss [--ranks N] [--window W] [--slots S] [--chunk C] [--seeds S] "
	"[--counters]\n"
	"  the simulation's fake time for four 1 Mi-element allreduces at 0, 1, 2% loss\n"
	"  --ranks N   members per job, 1..8 (default 4)\n"
	"  --window W  chunks in flight, 1..32 (default 16)\n"
	"  --slots S   slots, W..32 (default: what lib/comm asks for, 32 for 16, at most 32:\n"
	"              the simulated box has 64 slots for the two jobs, as a box grants fewer)\n"
	"  --chunk C   elements per chunk, 1..1024 (default 256)\n"
	"  --seeds S   runs per loss rate, 1..100 (default 3)\n"
	"  --counters  also print each run's loss recovery counters (to stderr)\n";

static int
arg_u32(const char *s, unsigned long lo, unsigned long hi, uint32_t *v)
{
	char *end;
	unsigned long x;

	x = strtoul(s, &end, 10);
	if (*s == '\0' || *end != '\0' || x < lo || x > hi)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ranks", required_argument, NULL, 'n' },
		{ "window", required_argument, NULL, 'w' },
		{ "slots", required_argument, NULL, 'S' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "seeds", required_argument, NULL, 's' },
		{ "counters", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t ranks = 4, window = 16, slots = 0, chunk = 256, seeds = 3, seed;
	double ms[3] = { 0 };
	int counters = 0;
	unsigned int loss, i;
	int o;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *name = "ranks";
		int bad = 0;

		switch (o) {
		case 'n':
			bad = arg_u32(optarg, 1, 8, &ranks);
			break;
		case 'w':
			name = "window";
			bad = arg_u32(optarg, 1, SIM_LOSS_MAX_SLOTS, &window);
			break;
		case 'S':
			name = "slots";
			bad = arg_u32(optarg, 1, SIM_LOSS_MAX_SLOTS, &slots);
			break;
		case 'c':
			name = "chunk";
			bad = arg_u32(optarg, 1, 1024, &chunk);
			break;
		case 's':
			name = "seeds";
			bad = arg_u32(optarg, 1, 100, &seeds);
			break;
		case 'k':
			counters = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
		if (bad) {
			fprintf(stderr, "sim_loss: bad value for --%s: '%s'\n%s", name, optarg,
				usage);
			return 2;
		}
	}
	if (slots == 0) {
		slots = shr_endpoint_slots(window);
		if (slots > SIM_LOSS_MAX_SLOTS)
			slots = SIM_LOSS_MAX_SLOTS;	/* granted fewer, as a box would */
	}
	if (slots < window) {
		fprintf(stderr, "sim_loss: --slots %u is fewer than --window %u\n%s", slots, window,
			usage);
		return 2;
	}
	if (optind != argc) {
		fprintf(stderr, "sim_loss: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	for (loss = 0; loss <= 2; loss++) {
		for (seed = 1; seed <= seeds; seed++) {
			struct sim_case c;
			struct sim_result r;

			memset(&c, 0, sizeof(c));
			c.n = (uint16_t)ranks;
			c.loss = (uint8_t)loss;
			c.window = slots;
			c.inflight = window;
			c.chunk = chunk;
			c.nlens = 4;
			for (i = 0; i < c.nlens; i++)
				c.lens[i] = 1u << 20;
			c.seed = 7919ull * seed + loss;
			c.quiet = 1;
			snprintf(c.name, sizeof(c.name), "sim_loss n%u w%u s%u c%u loss%u seed%u",
				 ranks, window, slots, chunk, loss, seed);
			if (sim_run(&c, &r) != SIM_OK) {
				fprintf(stderr, "sim_loss: %s\n", r.err);
				return 1;
			}
			ms[loss] += (double)r.fake_ns / 1e6 / seeds;
			if (counters)
				fprintf(stderr, "%s: %.3f ms, tx_data %llu, resent %llu: fast %llu "
					"(peer %llu, spurious %llu, hinted %llu), timer %llu; "
					"held %llu\n", c.name,
					(double)r.fake_ns / 1e6, (unsigned long long)r.rtx.tx_data,
					(unsigned long long)r.rtx.tx_retx,
					(unsigned long long)r.rtx.tx_fast,
					(unsigned long long)r.rtx.fast_peer,
					(unsigned long long)r.rtx.spurious,
					(unsigned long long)r.rtx.hint_resent,
					(unsigned long long)r.rtx.tx_rto,
					(unsigned long long)r.rtx.hint_held);
		}
	}
	printf("sim_lossless_ms=%.3f\n", ms[0]);
	printf("sim_loss1_ms=%.3f\n", ms[1]);
	printf("sim_loss2_ms=%.3f\n", ms[2]);
	printf("sim_loss1_vs_lossless=%.3f\n", ms[0] / ms[1]);
	printf("sim_loss2_vs_lossless=%.3f\n", ms[0] / ms[2]);
	return 0;
}
