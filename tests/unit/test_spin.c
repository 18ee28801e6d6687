/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * lib/spin: the rounds a wait spins before it sleeps adapt to how long its waits are idle.
 * A fake clock: each empty round costs ROUND_NS (so a full spin of 16 rounds is 32 us; the
 * automatic spin's tests make rounds cost AUTO_ROUND_NS, 0.5 us, as here), and the test says
 * when what the wait waits for arrives and what a wake-up costs. An idle period is timed
 * from the end of a wait's first empty round (the clock is read only once a wait goes
 * idle): a wait that makes progress at T after it began was idle for T minus one round.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <shr_spin.h>

#define ROUND_NS 2000ull
#define AUTO_ROUND_NS 500ull	/* the automatic spin's tests: a round as cheap as here */

static uint64_t fake_now;
static uint64_t round_cost = ROUND_NS;	/* what wait_for()'s empty rounds cost */

static uint64_t
fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

/*
 * One wait: empty rounds (round_cost each, extra_ns more for the round numbered slow_round,
 * a preempted one) until what it waits for has arrived (arrival_ns after its start: the
 * round after that makes progress) or the spin says sleep; a sleeper wakes wake_ns after
 * the arrival. Returns the empty rounds spun; *slept says whether it slept.
 */
static uint32_t
wait_for(struct shr_spin *s, uint64_t arrival_ns, uint64_t wake_ns, uint32_t slow_round,
	 uint64_t extra_ns, bool *slept)
{
	uint64_t t0 = fake_now;
	uint32_t rounds = 0;

	*slept = false;
	shr_spin_begin(s);
	for (;;) {
		fake_now += round_cost + (rounds + 1 == slow_round ? extra_ns : 0);
		if (fake_now - t0 > arrival_ns) {
			shr_spin_moved(s);	/* this round found it */
			return rounds;
		}
		rounds++;
		if (shr_spin_empty(s))
			break;
		assert_true(rounds < 1000);
	}
	*slept = true;
	/* asleep: an empty round now says sleep at once, without spinning again */
	assert_true(shr_spin_empty(s));
	if (fake_now < t0 + arrival_ns)
		fake_now = t0 + arrival_ns;
	fake_now += wake_ns;
	shr_spin_moved(s);
	return rounds;
}

/* A wait that sleeps and makes progress at_ns after it began (the wake-up included). */
static uint32_t
long_wait(struct shr_spin *s, uint64_t at_ns)
{
	bool slept;
	uint32_t rounds = wait_for(s, at_ns, 0, 0, 0, &slept);

	assert_true(slept);
	return rounds;
}

static void
test_init(void **state)
{
	struct shr_spin s;

	(void)state;
	shr_spin_init(&s, 0, fake_clock, NULL);	/* automatic */
	assert_int_equal(s.max, SHR_SPIN_AUTO_MAX);
	assert_int_equal(s.base, SHR_SPIN_AUTO_MIN);
	assert_int_equal(s.top, SHR_SPIN_AUTO_MIN);
	assert_int_equal(s.cur, SHR_SPIN_AUTO_MIN);
	assert_int_equal(s.sleep_ns, 0);
	shr_spin_init(&s, 5, fake_clock, NULL);
	assert_int_equal(s.max, 5);
	assert_int_equal(s.base, 5);
	assert_int_equal(s.top, 5);
	assert_int_equal(s.cur, 5);
	assert_int_equal(s.sleeps, 0);
	assert_int_equal(s.waits, 0);
}

/* Waits whose results come while they spin never sleep, and keep the full spin. */
static void
test_progress_while_spinning(void **state)
{
	struct shr_spin s;
	bool slept;
	int w;

	(void)state;
	shr_spin_init(&s, 16, fake_clock, NULL);
	for (w = 0; w < 50; w++) {
		assert_int_equal(wait_for(&s, 20000, 0, 0, 0, &slept), 10);
		assert_false(slept);
	}
	assert_int_equal(s.cur, 16);
	assert_int_equal(s.sleeps, 0);
	assert_int_equal(s.round_ns, ROUND_NS);	/* 20 us: 9 empty rounds and the one that moved */
}

/*
 * Waits longer than twice the full spin (ranks that share cores): the spin halves at each,
 * down to one round, and stays there.
 */
static void
test_long_waits_halve(void **state)
{
	static const uint32_t want[] = { 16, 8, 4, 2, 1, 1, 1 };
	struct shr_spin s;
	unsigned int i;

	(void)state;
	shr_spin_init(&s, 16, fake_clock, NULL);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(long_wait(&s, 100000), want[i]);
	assert_int_equal(s.cur, 1);
	assert_int_equal(s.sleeps, 7);
	assert_int_equal(s.round_ns, ROUND_NS);
}

/*
 * Waits within the full spin (idle for 32 us: 34 us after they began) double it, learning
 * from the sleeps they still take; waits between one and two full spins leave it; longer
 * ones halve it.
 */
static void
test_bands(void **state)
{
	static const uint32_t want[] = { 1, 2, 4, 8, 16 };
	struct shr_spin s;
	unsigned int i;

	(void)state;
	shr_spin_init(&s, 16, fake_clock, NULL);
	while (s.cur > 1)
		long_wait(&s, 100000);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(long_wait(&s, 34000), want[i]);
	assert_int_equal(s.cur, 16);
	assert_int_equal(long_wait(&s, 66000), 16);
	assert_int_equal(s.cur, 16);
	assert_int_equal(long_wait(&s, 66001), 16);
	assert_int_equal(s.cur, 8);
}

/*
 * From one round, with results that come 25 us into a wait and a wake-up of 15 us: a
 * sleeping wait is idle 38 us, between the bands, and would stay at one round for ever.
 * One wait in SHR_SPIN_PROBE spins the full 16 rounds, catches the result at 26 us (idle
 * 24 us) and doubles the spin; after four probes it is back at 16, where the waits catch
 * every result.
 */
static void
test_probe_recovers(void **state)
{
	struct shr_spin s;
	uint32_t cur = 1, rounds;
	bool slept;
	int w;

	(void)state;
	shr_spin_init(&s, 16, fake_clock, NULL);
	while (s.cur > 1)
		long_wait(&s, 100000);
	for (w = 0; w < 4 * SHR_SPIN_PROBE + 8; w++) {
		bool probe = s.cur < 16 && (s.waits + 1) % SHR_SPIN_PROBE == 0;

		rounds = wait_for(&s, 25000, 15000, 0, 0, &slept);
		if (probe || cur == 16) {
			assert_false(slept);
			assert_int_equal(rounds, 12);
			cur = cur * 2 < 16 ? cur * 2 : 16;
		} else {
			assert_true(slept);
			assert_int_equal(rounds, cur);
		}
		assert_int_equal(s.cur, cur);
	}
	assert_int_equal(s.cur, 16);
}

/*
 * A spinner that was preempted (one round took 100 us more) "catches" its result while it
 * spins, 122 us into the wait: judged by its time, it halves the spin; and that round's
 * cost does not raise what a round is taken to cost.
 */
static void
test_preempted_spinner(void **state)
{
	struct shr_spin s;
	bool slept;

	(void)state;
	shr_spin_init(&s, 16, fake_clock, NULL);
	assert_int_equal(wait_for(&s, 10000, 0, 0, 0, &slept), 5);
	assert_int_equal(s.round_ns, ROUND_NS);
	assert_int_equal(wait_for(&s, 120000, 0, 3, 100000, &slept), 10);
	assert_false(slept);
	assert_int_equal(s.cur, 8);
	assert_int_equal(s.round_ns, ROUND_NS);
}

/* shr_spin_adapt(): the least round cost measured; both band edges; a max not a power of 2. */
static void
test_adapt(void **state)
{
	struct shr_spin s;

	(void)state;
	shr_spin_init(&s, 8, fake_clock, NULL);
	s.cur = 2;
	/* 4 us a round: full spin 32 us, not shorter */
	shr_spin_adapt(&s, 2, 8000, 32000, 0);
	assert_int_equal(s.round_ns, 4000);
	assert_int_equal(s.cur, 4);
	/* 8 us a round: 4 us stands; 32 < 32.001 <= 64 */
	shr_spin_adapt(&s, 4, 32000, 32001, 0);
	assert_int_equal(s.round_ns, 4000);
	assert_int_equal(s.cur, 4);
	/* 3 us: full 24 us, 48 us is not more than twice */
	shr_spin_adapt(&s, 1, 3000, 48000, 0);
	assert_int_equal(s.round_ns, 3000);
	assert_int_equal(s.cur, 4);
	/* nothing measured: 3 us stands; more than twice */
	shr_spin_adapt(&s, 0, 0, 48001, 0);
	assert_int_equal(s.round_ns, 3000);
	assert_int_equal(s.cur, 2);
	s.cur = 7;				/* a max that is not a power of two: capped */
	shr_spin_adapt(&s, 0, 0, 1, 0);
	assert_int_equal(s.cur, 8);
}

/*
 * With rounds of 0.5 us (as here), results 10 us into each wait and a wake-up of 15 us: a
 * fixed full spin of 16 rounds (8 us) misses every result by 2 us and sleeps at every wait,
 * idle 24.5 us, more than twice the full spin, so it falls to one round and stays there (the
 * probes' 8 us miss too). The automatic spin learns from its first sleep that a sleep costs
 * 24.5 us, makes the full spin the 49 rounds that last as long, and no wait sleeps again.
 */
static void
test_auto_learns_sleep(void **state)
{
	struct shr_spin s;
	bool slept;
	int w;

	(void)state;
	round_cost = AUTO_ROUND_NS;
	shr_spin_init(&s, 16, fake_clock, NULL);
	for (w = 0; w < 3 * SHR_SPIN_PROBE; w++) {
		wait_for(&s, 10000, 15000, 0, 0, &slept);
		assert_true(slept);
	}
	assert_int_equal(s.top, 16);
	assert_int_equal(s.cur, 1);

	shr_spin_init(&s, 0, fake_clock, NULL);
	assert_int_equal(wait_for(&s, 10000, 15000, 0, 0, &slept), 16);
	assert_true(slept);
	assert_int_equal(s.sleep_ns, 24500);
	assert_int_equal(s.top, 49);
	assert_int_equal(s.cur, 32);		/* 24.5 us: within the full spin */
	for (w = 0; w < 3 * SHR_SPIN_PROBE; w++) {
		assert_int_equal(wait_for(&s, 10000, 15000, 0, 0, &slept), 20);
		assert_false(slept);
	}
	assert_int_equal(s.sleeps, 1);
	assert_int_equal(s.top, 49);
	assert_int_equal(s.cur, 49);
	round_cost = ROUND_NS;
}

/*
 * A sleep cut short says nothing about what a sleep costs. After the first sleep (24.5 us:
 * 49 rounds), a wait whose result comes 0.2 us after it went to sleep, with a wake-up of 1 us
 * (the CPU had not gone idle yet): idle 16.7 us, asleep 1.2 us. The full spin stays 49 rounds;
 * taken for a sleep's cost, it would fall to 34. A sleep of SHR_SPIN_SLEPT_NS counts.
 */
static void
test_auto_short_sleep(void **state)
{
	struct shr_spin s;
	bool slept;

	(void)state;
	round_cost = AUTO_ROUND_NS;
	shr_spin_init(&s, 0, fake_clock, NULL);
	assert_int_equal(wait_for(&s, 10000, 15000, 0, 0, &slept), 16);
	assert_int_equal(s.top, 49);
	assert_int_equal(s.cur, 32);
	assert_int_equal(wait_for(&s, 16200, 1000, 0, 0, &slept), 32);
	assert_true(slept);
	assert_int_equal(s.sleep_ns, 24500);
	assert_int_equal(s.top, 49);
	assert_int_equal(s.cur, 49);		/* 16.7 us: within the full spin */
	shr_spin_adapt(&s, 0, 0, 20000, SHR_SPIN_SLEPT_NS - 1);
	assert_int_equal(s.sleep_ns, 24500);
	shr_spin_adapt(&s, 0, 0, 20000, SHR_SPIN_SLEPT_NS);
	assert_int_equal(s.sleep_ns, 20000);
	assert_int_equal(s.top, 40);
	assert_int_equal(s.cur, 40);		/* capped at the full spin */
	round_cost = ROUND_NS;
}

/*
 * The automatic full spin's bounds: waits of 1 ms (ranks that share cores, a slow peer) make
 * it SHR_SPIN_AUTO_NS long (64 rounds), not 1 ms, and still halve the spin down to one round;
 * a shorter sleep shortens it (24.5 us: 49 rounds), but never below SHR_SPIN_AUTO_MIN rounds
 * (a wait of 7.5 us that slept 7 us).
 */
static void
test_auto_bounds(void **state)
{
	static const uint32_t want[] = { 16, 8, 4, 2, 1, 1 };
	struct shr_spin s;
	unsigned int i;
	bool slept;

	(void)state;
	round_cost = AUTO_ROUND_NS;
	shr_spin_init(&s, 0, fake_clock, NULL);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(long_wait(&s, 1000000), want[i]);
		assert_int_equal(s.top, SHR_SPIN_AUTO_NS / AUTO_ROUND_NS);
	}
	assert_int_equal(s.cur, 1);
	assert_int_equal(wait_for(&s, 10000, 15000, 0, 0, &slept), 1);
	assert_true(slept);
	assert_int_equal(s.sleep_ns, 24500);
	assert_int_equal(s.top, 49);
	assert_int_equal(s.cur, 2);		/* 24.5 us: within the new full spin */
	assert_int_equal(wait_for(&s, 3000, 5000, 0, 0, &slept), 2);
	assert_true(slept);
	assert_int_equal(s.sleep_ns, 7500);
	assert_int_equal(s.top, SHR_SPIN_AUTO_MIN);
	assert_int_equal(s.cur, 4);		/* 7.5 us: within the full spin (8 us) */
	round_cost = ROUND_NS;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_progress_while_spinning),
		cmocka_unit_test(test_long_waits_halve),
		cmocka_unit_test(test_bands),
		cmocka_unit_test(test_probe_recovers),
		cmocka_unit_test(test_preempted_spinner),
		cmocka_unit_test(test_adapt),
		cmocka_unit_test(test_auto_learns_sleep),
		cmocka_unit_test(test_auto_short_sleep),
		cmocka_unit_test(test_auto_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
