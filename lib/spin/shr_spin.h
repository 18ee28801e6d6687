/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_SPIN_H
#define SHR_SPIN_H

/**
 * @file
 * How long a wait spins before it sleeps (shr_comm_wait(), shr_shard's waits).
 *
 * A wait runs progress rounds; after a number of empty ones in a row it sleeps until a
 * datagram or a timer. Spinning catches what comes within a few microseconds without the
 * cost of a sleep and a wake-up: it pays for a rank with a core of its own. It costs ranks
 * that share cores (several ranks on one host): the spinner takes the CPU that the others
 * need to send what it waits for.
 *
 * So the rounds a wait spins adapt between 1 and those of a full spin. Each idle period of a
 * wait (from the end of its first empty round until progress) is compared with the full spin
 * (its rounds at the cost of an empty round, the least measured):
 * - the full spin would have lasted until then: the spin doubles;
 * - the period was more than twice the full spin: the spin halves;
 * - in between (a sleep's own wake-up makes a short wait look longer), it stays.
 * One wait in SHR_SPIN_PROBE spins the full spin: the probe that shows when short waits are
 * back, which a spin of one round, sleeping at once, would never see.
 *
 * How many rounds a full spin has: a fixed number (shr_spin_init()'s max), or, by default,
 * as many as last the shortest idle period that ended in a sleep (at least SHR_SPIN_AUTO_MIN,
 * at most SHR_SPIN_AUTO_MAX rounds and SHR_SPIN_AUTO_NS). Only sleeps that lasted
 * SHR_SPIN_SLEPT_NS count: a sleep cut short, because what the wait waited for came as it
 * went to sleep (2-3 us here), was not a wake-up from an idle CPU, and taken for one it put
 * the full spin back below the waits it had caught. A sleep costs its wake-up, and on this
 * virtual machine a wake-up from ppoll() took about 16 us (one rank with a core of its own:
 * 8 us idle spinning, 24 us sleeping); a fixed number of rounds lasts as long as rounds cost,
 * and 16 rounds of 0.5 us (8 us) missed the 8 us waits, slept on every one, and doubled the
 * 4 KiB allreduce's latency (13 -> 28 us). Spinning as long as a sleep costs, then sleeping,
 * costs at most twice what the better of the two would have (the ski-rental rule); ranks that
 * share cores, whose waits last longer than twice that, still halve their spin to one round.
 *
 * Use, around each progress round of a wait:
 * @code
 *	shr_spin_begin(&sp);
 *	for (;;) {
 *		(done? return)
 *		n = progress();
 *		if (n > 0)
 *			shr_spin_moved(&sp);
 *		else if (shr_spin_empty(&sp))
 *			sleep_until_something_comes();
 *	}
 * @endcode
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Automatic full spin (shr_spin_init() with max 0): rounds at least (the fixed 16 of old). */
#define SHR_SPIN_AUTO_MIN 16
/** Automatic full spin: rounds at most. */
#define SHR_SPIN_AUTO_MAX 1024
/** Automatic full spin: the time it covers at most, nanoseconds. */
#define SHR_SPIN_AUTO_NS 32000
/** Automatic full spin: a sleep this long or longer (ns) shows what a sleep costs. */
#define SHR_SPIN_SLEPT_NS 5000
/** One wait in this many spins the full spin while the spin is below it. */
#define SHR_SPIN_PROBE 16

/** A clock in nanoseconds (monotonic); ctx is what shr_spin_init() was given. */
typedef uint64_t (*shr_spin_clock_t)(void *ctx);

/** The spin state of one waiter (no locking: one thread waits on it). */
struct shr_spin {
	uint32_t max;		/**< Rounds of a full spin at most (SHR_SPIN_AUTO_MAX when
				 *   automatic, else the configured spin). */
	uint32_t base;		/**< Rounds of a full spin at least (SHR_SPIN_AUTO_MIN when
				 *   automatic, else max). */
	uint32_t top;		/**< Rounds of a full spin: base..max. */
	uint32_t cur;		/**< Rounds the next wait spins: 1..top. */
	uint64_t round_ns;	/**< Cost of an empty round, the least measured (0: none). */
	uint64_t sleep_ns;	/**< The shortest idle period that ended in a sleep (0: none):
				 *   what a sleep costs at least. */
	uint64_t waits;		/**< Waits begun. */
	uint64_t sleeps;	/**< Idle periods that ended in a sleep. */
	shr_spin_clock_t clock;	/**< Time source. */
	void *clock_ctx;
	/* the current wait */
	uint32_t limit;		/**< Rounds this wait spins (cur, or top for a probe). */
	uint32_t idle;		/**< Empty rounds in a row. */
	uint32_t spun;		/**< Rounds spun before it slept (0: has not slept). */
	uint64_t t_idle;	/**< When the first empty round ended. */
	uint64_t t_sleep;	/**< When it went to sleep. */
};

/**
 * Initialise a spin state.
 *
 * @param s
 *   The state.
 * @param max
 *   Empty rounds a wait spins at most before it sleeps; 0: automatic (SHR_SPIN_AUTO_MIN
 *   rounds, more as the shortest sleep shows; see the file's comment). The first wait spins
 *   SHR_SPIN_AUTO_MIN, or max.
 * @param clock
 *   Monotonic nanoseconds (the communicator's clock; a test gives a fake one). Read once
 *   when a wait goes idle, once when it sleeps and once when it makes progress again,
 *   never while rounds make progress.
 * @param clock_ctx
 *   Passed to clock.
 */
void shr_spin_init(struct shr_spin *s, uint32_t max, shr_spin_clock_t clock, void *clock_ctx);

/**
 * A wait begins (no empty round yet).
 *
 * @param s
 *   The state.
 */
void shr_spin_begin(struct shr_spin *s);

/**
 * The round made progress. After empty rounds, the spin adapts to how long they lasted.
 *
 * @param s
 *   The state.
 */
void shr_spin_moved(struct shr_spin *s);

/**
 * The round was empty.
 *
 * @param s
 *   The state.
 * @return
 *   true when the waiter should sleep now (it has spun its rounds: shr_spin::cur, or the
 *   full spin for a probe; and at every empty round after that until progress), false to
 *   spin on.
 */
bool shr_spin_empty(struct shr_spin *s);

/**
 * Adapt the spin to one idle period (what shr_spin_moved() does).
 *
 * @param s
 *   The state.
 * @param rounds
 *   Rounds spun after the first empty one (until the sleep, if it slept; 0: nothing to
 *   measure).
 * @param spun_ns
 *   How long those rounds took.
 * @param idle_ns
 *   From the end of the first empty round until progress.
 * @param asleep_ns
 *   How long the sleep that ended the period lasted, until progress (0: it did not sleep).
 *   An automatic full spin learns what a sleep costs from periods whose sleep lasted
 *   SHR_SPIN_SLEPT_NS or more.
 */
void shr_spin_adapt(struct shr_spin *s, uint32_t rounds, uint64_t spun_ns, uint64_t idle_ns,
		    uint64_t asleep_ns);

#ifdef __cplusplus
}
#endif

#endif /* SHR_SPIN_H */
